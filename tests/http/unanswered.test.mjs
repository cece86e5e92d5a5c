// SPDX-License-Identifier: MIT
// Every HTTP request is answered and nothing is held forever: bodies the
// engine cannot read (invalid UTF-8, a NUL byte, a byte-order mark,
// trailing bytes) get their parse error on the request that carried them,
// so they hold no connection, in-flight slot or session; a bounded soak
// of them mixed with normal traffic leaves the others served and the
// server's memory and descriptors flat; shutdown is prompt. And a decoded
// \u0000 is refused, naming the argument, never cut.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { startServer, JSON_HEADERS, initSession } from './lib.mjs';

const BIN = process.env.HTTP_TESTSERVER;
if (!BIN) throw new Error('HTTP_TESTSERVER is not set');

// A raw POST with a Buffer body and a deadline: an unanswered request is a
// failure here, not a hang.
function post(port, body, headers = {}, ms = 3000) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/mcp',
      headers: { ...JSON_HEADERS, ...headers }, agent: false }, (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => { clearTimeout(t); resolve({ status: res.statusCode, headers: res.headers, body: data }); });
    });
    const t = setTimeout(() => { req.destroy(); reject(new Error(`no answer within ${ms} ms`)); }, ms);
    req.on('error', (e) => { clearTimeout(t); reject(e); });
    req.end(body);
  });
}

const init = (id = 1) => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
const call = (id, text) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call',
  params: { name: 'echo', arguments: { text } } });

// Bodies cJSON reads but the engine refuses: each was once left unanswered.
function badBodies(json) {
  const b = Buffer.from(json);
  return {
    'invalid UTF-8': Buffer.from(json.replace('"t"', '"t\u0001"')).map((x) => (x === 1 ? 0xff : x)),
    'a NUL byte after the value': Buffer.concat([b, Buffer.from([0])]),
    'a NUL byte inside a string': Buffer.from(json.replace('"t"', '"t\u0000"')),
    'a byte-order mark': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b]),
    'trailing bytes': Buffer.concat([b, Buffer.from(' x')]),
    'a raw control character in a string': Buffer.from(json.replace('"t"', '"t\u0007"')),
  };
}

function fds(pid) { return fs.readdirSync(`/proc/${pid}/fd`).length; }
function rssKb(pid) {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
  return Number(m[1]);
}

test('a body the engine cannot read is answered 400 -32700 on its own request', async () => {
  const srv = await startServer(BIN, ['--max-sessions', '4']);
  try {
    for (const [what, body] of Object.entries(badBodies(init()))) {
      const r = await post(srv.port, body);
      assert.equal(r.status, 400, what);
      const j = JSON.parse(r.body);
      assert.equal(j.error.code, -32700, what);
      assert.equal(r.headers['mcp-session-id'], undefined, `${what}: no session`);
    }
    // Twenty refused initializes hold no session: a new one still opens
    // even with room for only four.
    for (let i = 0; i < 20; i++) await post(srv.port, badBodies(init())['a byte-order mark']);
    const sid = await initSession(srv.port);
    assert.match(sid, /^[0-9a-f]{32}$/);
    // The same bodies inside a session are answered too.
    for (const [what, body] of Object.entries(badBodies(call(7, 't')))) {
      const r = await post(srv.port, body, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });
      assert.equal(r.status, 400, what);
      assert.equal(JSON.parse(r.body).error.code, -32700, what);
    }
    const ok = await post(srv.port, call(8, 'still here'), { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });
    assert.equal(ok.status, 200);
    assert.match(ok.body, /still here/);
  } finally {
    const t0 = Date.now();
    await srv.stop();
    assert.ok(Date.now() - t0 < 5000, 'shutdown is prompt');
  }
});

test('\\u0000 in a string is refused, naming the argument, never cut', async () => {
  const srv = await startServer(BIN);
  try {
    const sid = await initSession(srv.port);
    const h = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    const r = await post(srv.port, call(3, 'vision\u0000'), h);
    assert.equal(r.status, 200);
    const j = JSON.parse(r.body);
    assert.equal(j.id, 3);
    assert.equal(j.error.code, -32602);
    assert.match(j.error.message, /argument 'text' contains a NUL character/);
    assert.doesNotMatch(r.body, /"vision"/);
    // A member name holding it.
    const k = await post(srv.port, JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call',
      params: { name: 'echo', arguments: { 'text\u0000': 'x' } } }), h);
    assert.equal(JSON.parse(k.body).error.code, -32602);
    assert.match(JSON.parse(k.body).error.message, /member name in 'params.arguments'/);
    // The method itself: never dispatched as the method before the NUL.
    const m = await post(srv.port, JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list\u0000' }), h);
    assert.equal(JSON.parse(m.body).error.code, -32600);
    assert.match(JSON.parse(m.body).error.message, /'method' contains a NUL character/);
    // The tool's name.
    const n = await post(srv.port, JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/call',
      params: { name: 'echo\u0000', arguments: { text: 'x' } } }), h);
    assert.equal(JSON.parse(n.body).error.code, -32602);
    assert.match(JSON.parse(n.body).error.message, /'params.name' contains a NUL character/);
    // Kept whole where it is only data of a JSON value: an escaped
    // backslash before u0000 is no NUL.
    const e = await post(srv.port, call(9, 'a\\u0000b'), h);
    assert.match(JSON.parse(e.body).result.content[0].text, /^a\\u0000b$/);
  } finally {
    await srv.stop();
  }
});

test('soak: unreadable bodies mixed with normal traffic; others served, memory and descriptors flat', async () => {
  for (const stateless of [true, false]) {
    const srv = await startServer(BIN, stateless ? ['--stateless', '--max-sessions', '20'] : ['--max-sessions', '20']);
    try {
      const pid = srv.child.pid;
      const sid = stateless ? null : await initSession(srv.port);
      const h = stateless ? { 'mcp-protocol-version': '2025-11-25' }
                          : { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
      const bad = Object.values(badBodies(stateless ? call(1, 't') : init()));
      const round = async (n) => {
        const jobs = [];
        for (let i = 0; i < n; i++) {
          jobs.push(post(srv.port, bad[i % bad.length]).then((r) => assert.equal(r.status, 400)));
          if (i % 4 === 0) {
            jobs.push(post(srv.port, call(1000 + i, `ok ${i}`), h).then((r) => {
              assert.equal(r.status, 200);
              assert.match(r.body, new RegExp(`ok ${i}`));
            }));
          }
          if (jobs.length >= 40) await Promise.all(jobs.splice(0));
        }
        await Promise.all(jobs);
      };
      await round(300); // warm up allocator and caches
      const fd0 = fds(pid), rss0 = rssKb(pid);
      await round(1500);
      await new Promise((r) => setTimeout(r, 200));
      assert.ok(fds(pid) <= fd0 + 4, `descriptors grew from ${fd0} to ${fds(pid)}`);
      // Sanitized builds keep freed memory in quarantine: a looser bound
      // there (LeakSanitizer checks leaks at exit instead).
      const slack = Number(process.env.HTTP_SOAK_RSS_KB ?? 8192);
      assert.ok(rssKb(pid) < rss0 + slack, `RSS grew from ${rss0} to ${rssKb(pid)} kB`);
      // A new session still opens (nothing was held).
      if (!stateless) assert.match(await initSession(srv.port), /^[0-9a-f]{32}$/);
    } finally {
      const t0 = Date.now();
      await srv.stop();
      assert.ok(Date.now() - t0 < 5000, 'shutdown is prompt');
    }
  }
});

// Calls sample (which asks the client for a completion) and disconnects
// at its first event: nobody ever answers, so the call never ends.
function vanishDuringSample(port, h) {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/mcp',
      headers: { ...JSON_HEADERS, ...h }, agent: false }, (res) => {
      res.once('data', () => { req.destroy(); resolve(); });
    });
    req.on('error', () => resolve());
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'sample', arguments: { prompt: 'x' } } }));
  });
}

test('a session whose client went away with a request in flight still expires', async () => {
  const srv = await startServer(BIN, ['--session-idle-ms', '400']);
  try {
    const sid = await initSession(srv.port);
    const h = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    await vanishDuringSample(srv.port, h);
    // Idle 400 ms, swept every second: gone after 2.5 s untouched.
    await new Promise((r) => setTimeout(r, 2500));
    const r = await post(srv.port, JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'ping' }), h);
    assert.equal(r.status, 404, 'the session expired');
  } finally {
    const t0 = Date.now();
    await srv.stop();
    assert.ok(Date.now() - t0 < 5000, 'shutdown is prompt');
  }
});

test('shutdown does not wait for requests whose client went away', async () => {
  const srv = await startServer(BIN);
  const sid = await initSession(srv.port);
  const h = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
  await vanishDuringSample(srv.port, h);
  await new Promise((r) => setTimeout(r, 100));
  const t0 = Date.now();
  await srv.stop();
  assert.ok(Date.now() - t0 < 3000, `shutdown took ${Date.now() - t0} ms`);
});
