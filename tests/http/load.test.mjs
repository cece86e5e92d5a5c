// SPDX-License-Identifier: MIT
// Bounded loopback load test: 200 keep-alive connections make
// HTTP_LOAD_REQUESTS tools/call requests (default 100,000; meson passes
// 20,000 under AddressSanitizer, where every call costs ~5x more) while 3
// slowloris connections dribble headers. Zero errors, every slowloris
// connection cut off by the header timeout, the server's peak RSS bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startServer } from './lib.mjs';

const BIN = process.env.HTTP_TESTSERVER;
const LOAD = process.env.HTTP_LOAD;
const REQUESTS = Number(process.env.HTTP_LOAD_REQUESTS ?? 100000);
const RSS_LIMIT_KB = Number(process.env.HTTP_LOAD_RSS_KB ?? 65536);

function status(pid) {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(s.match(new RegExp(`${k}:\\s+(\\d+)`))[1]);
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

test(`200 connections, ${REQUESTS} requests, zero errors; slowloris cut off`, async () => {
  const srv = await startServer(BIN, ['--header-timeout-ms', '2000']);
  try {
    const before = status(srv.child.pid);
    const out = await new Promise((resolve, reject) => {
      execFile(LOAD, ['--port', String(srv.port), '--conns', '200', '--requests', String(REQUESTS),
        '--slowloris', '3', '--deadline-s', '240'], (err, stdout, stderr) => {
        if (err) reject(new Error(`http-load failed: ${stdout} ${stderr}`));
        else resolve(stdout);
      });
    });
    console.log(out.trim());
    const kv = Object.fromEntries(out.trim().split(' ').map((p) => p.split('=')));
    assert.equal(Number(kv.errors), 0);
    assert.equal(Number(kv.calls), REQUESTS);
    assert.equal(Number(kv.slowloris_cut), 3);
    assert.ok(Number(kv.slowloris_cut_after_s) < 5, 'slowloris cut off by the 2 s header timeout');
    const after = status(srv.child.pid);
    console.log(`server RSS before ${before.rss} kB, peak ${after.hwm} kB, after ${after.rss} kB`);
    assert.ok(after.hwm < RSS_LIMIT_KB, `peak RSS ${after.hwm} kB over ${RSS_LIMIT_KB} kB`);
  } finally {
    await srv.stop();
  }
});
