// SPDX-License-Identifier: MIT
// Metric charts over the real HTTP service: the PNG of `render: "png"`
// arrives as base64 in the JSON reply (the service's 256 KiB cut of long
// text items must not touch it): decoded, every chunk's CRC checked and
// the image data inflated to exactly the size its header gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { startServer, raw, initSession, JSON_HEADERS } from './lib.mjs';

const HTTP = process.env.PMCP_HTTP_BIN ?? process.env.PROBE_MCP_HTTP;
const PROBE = process.env.PMCP_PROBE_BIN ?? process.env.PROBE_CLI;

// The JSON-RPC message of a reply sent as JSON or as one SSE event.
function message(r) {
  if (String(r.headers['content-type']).startsWith('text/event-stream')) {
    const data = r.body.split('\n').filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart()).join('');
    return JSON.parse(data);
  }
  return JSON.parse(r.body);
}

function checkPng(buf) {
  assert.deepEqual([...buf.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  let at = 8;
  let w = 0;
  let h = 0;
  let bpp = 0;
  const idat = [];
  let end = false;
  while (at < buf.length) {
    const len = buf.readUInt32BE(at);
    const type = buf.subarray(at + 4, at + 8).toString('latin1');
    const body = buf.subarray(at + 8, at + 8 + len);
    const crc = buf.readUInt32BE(at + 8 + len);
    assert.equal(zlib.crc32(buf.subarray(at + 4, at + 8 + len)) >>> 0, crc, `CRC of ${type}`);
    if (type === 'IHDR') {
      w = body.readUInt32BE(0);
      h = body.readUInt32BE(4);
      assert.equal(body[8], 8, 'bit depth');
      bpp = body[9] === 2 ? 3 : body[9] === 6 ? 4 : 0;
      assert.ok(bpp, `colour type ${body[9]}`);
    }
    if (type === 'IDAT') idat.push(body);
    at += 12 + len;
    if (type === 'IEND') { end = true; break; }
  }
  assert.ok(end && at === buf.length, 'ends with IEND, nothing after');
  const pixels = zlib.inflateSync(Buffer.concat(idat));
  assert.equal(pixels.length, h * (1 + w * bpp));
  return { w, h };
}

test('a chart arrives whole over HTTP, priced within the budget', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmcp-http-chart-'));
  try {
    const store = path.join(dir, 'store.db');
    execFileSync(PROBE, ['--store', store, 'demo'], { stdio: 'ignore' });
    const srv = await startServer(HTTP, ['--store', store, '--insecure-no-auth']);
    try {
      const sid = await initSession(srv.port);
      const list = message(await raw(srv.port, {
        headers: { ...JSON_HEADERS, 'mcp-session-id': sid },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
      }));
      const metrics = list.result.tools.find((t) => t.name === 'metrics');
      assert.ok(JSON.stringify(metrics.inputSchema).includes('"render"'), 'render is offered');
      const args = {
        mode: 'series', run_ids: ['baseline-seed0', 'baseline-seed1', 'baseline-seed2'],
        keys: ['train/loss'], max_points: 40, smoothing: 0.6, render: 'png', token_budget: 8000,
      };
      const r = await raw(srv.port, {
        headers: { ...JSON_HEADERS, 'mcp-session-id': sid },
        body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call',
          params: { name: 'metrics', arguments: args } }),
      });
      assert.equal(r.status, 200);
      const res = message(r).result;
      assert.ok(!res.isError, res.content[0].text);
      assert.equal(res.content.length, 2);
      assert.equal(res.content[0].type, 'text');
      const img = res.content[1];
      assert.equal(img.type, 'image');
      assert.equal(img.mimeType, 'image/png');
      assert.match(img.data, /^[A-Za-z0-9+/]+={0,2}$/);
      const png = Buffer.from(img.data, 'base64');
      assert.equal(png.toString('base64'), img.data, 'canonical base64');
      const { w, h } = checkPng(png);
      assert.ok([1200, 960, 800, 640, 480].includes(w), `width ${w}`);
      // the text's tokens are within budget minus the image's cost; the
      // text alone is far smaller than the image, so count loosely: o200k
      // has at least one token per 8 bytes here (the byte ceiling)
      const cost = Math.ceil((w * h) / 750);
      assert.ok(res.content[0].text.length <= (8000 - cost) * 8);
      const body = JSON.parse(res.content[0].text);
      assert.ok(body.series.length >= 3, `${body.series.length} rows`);
    } finally {
      await srv.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
