// SPDX-License-Identifier: MIT
// The HTTP transport against the TypeScript SDK's StreamableHTTPClientTransport
// and against raw requests for every status code the specification names.
// HTTP_TESTSERVER is the path of build/tests/http/http-testserver.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startServer, raw, sse, initSession, JSON_HEADERS } from './lib.mjs';

const BIN = process.env.HTTP_TESTSERVER;
if (!BIN) throw new Error('HTTP_TESTSERVER is not set');

let srv;
before(async () => { srv = await startServer(BIN); });
after(async () => { await srv.stop(); });

async function connect(url, opts = {}) {
  const client = new Client({ name: 'sdk-test', version: '1.0.0' },
    { capabilities: { sampling: {} } });
  const transport = new StreamableHTTPClientTransport(url, opts);
  await client.connect(transport);
  return { client, transport };
}

test('initialize, tools/list and a JSON tools/call through the SDK client', async () => {
  const { client, transport } = await connect(srv.url);
  assert.match(transport.sessionId, /^[0-9a-f]{32}$/);
  const tools = await client.listTools();
  assert.deepEqual(tools.tools.map((t) => t.name).sort(), ['echo', 'reconnect', 'sample', 'slow', 'stall']);
  const r = await client.callTool({ name: 'echo', arguments: { text: 'héllo wörld' } });
  assert.equal(r.content[0].text, 'héllo wörld');
  await client.close();
});

test('progress and log notifications of a call arrive on its SSE stream', async () => {
  const { client } = await connect(srv.url);
  await client.setLoggingLevel('debug');
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logs.push(n.params); });
  const progress = [];
  const r = await client.callTool({ name: 'slow', arguments: { ms: 200, steps: 4 } }, undefined,
    { onprogress: (p) => progress.push(p) });
  assert.equal(r.content[0].text, 'slept 200 ms');
  assert.deepEqual(progress.map((p) => p.progress), [1, 2, 3, 4]);
  assert.equal(progress[3].total, 4);
  assert.equal(logs.length, 4);
  assert.equal(logs[0].data, 'step done');
  await client.close();
});

test('a sampling request during a call goes out on the call stream; the answer comes back in a later POST', async () => {
  const { client } = await connect(srv.url);
  let asked;
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    asked = req.params.messages[0].content.text;
    return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'sampled answer' } };
  });
  const r = await client.callTool({ name: 'sample', arguments: { prompt: 'say something' } });
  assert.equal(asked, 'say something');
  assert.match(r.content[0].text, /sampled answer/);
  await client.close();
});

test('a call that closes its stream is resumed by the SDK with Last-Event-ID', async () => {
  const { client } = await connect(srv.url);
  const r = await client.callTool({ name: 'reconnect', arguments: {} });
  assert.equal(r.content[0].text, 'answered after the stream was closed');
  await client.close();
});

test('concurrent calls on one session each get their own answer', async () => {
  const { client } = await connect(srv.url);
  const results = await Promise.all(Array.from({ length: 25 }, (_, i) =>
    client.callTool({ name: i % 5 ? 'echo' : 'slow', arguments: i % 5 ? { text: `n${i}` } : { ms: 50, steps: 1 } })));
  results.forEach((r, i) => assert.equal(r.content[0].text, i % 5 ? `n${i}` : 'slept 50 ms'));
  await client.close();
});

test('a handler that sleeps without being declared blocking does not stall the loop', async () => {
  const sid = await initSession(srv.port);
  const H = { ...JSON_HEADERS, 'mcp-session-id': sid };
  const t0 = Date.now();
  const stalled = raw(srv.port, { headers: H,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'stall', arguments: { ms: 1500 } } }) });
  await new Promise((r) => setTimeout(r, 100));
  const ping = await raw(srv.port, { headers: H, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) });
  const other = await initSession(srv.port);
  const pingedAt = Date.now() - t0;
  assert.equal(ping.status, 200);
  assert.ok(other);
  assert.ok(pingedAt < 1000, `ping and initialize waited ${pingedAt} ms behind the stalled handler`);
  const r = await stalled;
  assert.match(r.body, /stalled/);
});

test('DELETE ends the session; later requests get 404', async () => {
  const { client, transport } = await connect(srv.url);
  const sid = transport.sessionId;
  await transport.terminateSession();
  const r = await raw(srv.port, { headers: { ...JSON_HEADERS, 'mcp-session-id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' }) });
  assert.equal(r.status, 404);
  await client.close();
});

test('status codes of the specification', async () => {
  const sid = await initSession(srv.port);
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });
  const H = { ...JSON_HEADERS, 'mcp-session-id': sid };
  const cases = [
    ['ping', { headers: H, body: ping }, 200],
    ['no session on a non-initialize request', { headers: JSON_HEADERS, body: ping }, 400],
    ['unknown session', { headers: { ...H, 'mcp-session-id': 'nope' }, body: ping }, 404],
    ['unsupported MCP-Protocol-Version', { headers: { ...H, 'mcp-protocol-version': '2020-01-01' }, body: ping }, 400],
    ['the negotiated MCP-Protocol-Version', { headers: { ...H, 'mcp-protocol-version': '2025-11-25' }, body: ping }, 200],
    // A version from 2025-06-18 on must be the session's; an older one
    // (no such header then) claims nothing, like no header: the official
    // conformance suite 0.1.16 sends 2025-03-26 in 2025-11-25 sessions.
    ['another MCP-Protocol-Version than the session negotiated', { headers: { ...H, 'mcp-protocol-version': '2025-06-18' }, body: ping }, 400],
    ['the modern MCP-Protocol-Version in a session', { headers: { ...H, 'mcp-protocol-version': '2026-07-28' }, body: ping }, 400],
    ['MCP-Protocol-Version 2025-03-26 (before the header)', { headers: { ...H, 'mcp-protocol-version': '2025-03-26' }, body: ping }, 200],
    ['MCP-Protocol-Version 2024-11-05 (before the header)', { headers: { ...H, 'mcp-protocol-version': '2024-11-05' }, body: ping }, 200],
    ['no MCP-Protocol-Version', { headers: H, body: ping }, 200],
    ['wrong Accept', { headers: { ...H, accept: 'text/html' }, body: ping }, 406],
    ['wrong Content-Type', { headers: { ...H, 'content-type': 'text/plain' }, body: ping }, 415],
    ['body over the limit', { headers: H, body: ' '.repeat(5 << 20) }, 413],
    ['foreign Host', { headers: { ...H, host: 'evil.example.com' }, body: ping }, 403],
    ['foreign Host with our port', { headers: { ...H, host: `evil.example.com:${srv.port}` }, body: ping }, 403],
    ['loopback Host with our port', { headers: { ...H, host: `localhost:${srv.port}` }, body: ping }, 200],
    ['loopback Host of another port', { headers: { ...H, host: `localhost:${srv.port + 1}` }, body: ping }, 403],
    ['loopback Host without a port (80)', { headers: { ...H, host: '127.0.0.1' }, body: ping }, 403],
    ['Host with a port out of range', { headers: { ...H, host: '127.0.0.1:70000' }, body: ping }, 400],
    ['foreign Origin with a good Host', { headers: { ...H, origin: 'http://evil.example.com' }, body: ping }, 403],
    ['loopback Origin', { headers: { ...H, origin: `http://localhost:${srv.port}` }, body: ping }, 200],
    ['loopback Origin of another port', { headers: { ...H, origin: `http://localhost:${srv.port + 1}` }, body: ping }, 403],
    ['loopback Origin without a port (80)', { headers: { ...H, origin: 'http://localhost' }, body: ping }, 403],
    ['https loopback Origin (443)', { headers: { ...H, origin: 'https://127.0.0.1' }, body: ping }, 403],
    ['other path', { path: '/other', headers: H, body: ping }, 404],
    ['PUT', { method: 'PUT', headers: H, body: ping }, 405],
    ['invalid JSON', { headers: H, body: '{"jsonrpc":' }, 400],
    ['not JSON-RPC', { headers: H, body: '[1,2]' }, 400],
    ['notification only', { headers: H, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' }) }, 202],
    ['GET without SSE in Accept', { method: 'GET', headers: { accept: 'application/json', 'mcp-session-id': sid } }, 406],
    ['GET with a malformed Last-Event-ID', { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'last-event-id': 'x' } }, 400],
    ['GET with an unknown Last-Event-ID', { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'last-event-id': '999_5' } }, 410],
    ['DELETE without a session', { method: 'DELETE', headers: {} }, 400],
  ];
  for (const [name, req, want] of cases) {
    const r = await raw(srv.port, req);
    assert.equal(r.status, want, `${name}: got ${r.status} ${r.body}`);
    assert.equal(r.headers['x-content-type-options'], 'nosniff', name);
    if (want >= 400) assert.equal(JSON.parse(r.body).error.message.length > 0, true, name);
  }
  const mis = await raw(srv.port, { headers: { ...H, 'mcp-protocol-version': '2025-06-18' }, body: ping });
  assert.match(JSON.parse(mis.body).error.message, /2025-06-18 is not the version this session negotiated \(2025-11-25\)/);
  // JSON-only Accept gets application/json; SSE-only gets an SSE stream.
  const j = await raw(srv.port, { headers: { ...H, accept: 'application/json' }, body: ping });
  assert.equal(j.headers['content-type'], 'application/json');
  const s = await sse(srv.port, { method: 'POST', headers: { ...H, accept: 'text/event-stream' }, body: ping });
  assert.equal(s.status, 200);
  assert.equal(s.headers['content-type'], 'text/event-stream');
  assert.equal(s.events[0].data, '', 'priming event first');
  assert.ok(s.events[0].id && s.events[0].retry > 0);
  assert.deepEqual(JSON.parse(s.events[1].data), { jsonrpc: '2.0', id: 2, result: {} });
});

// Whatever the session negotiated, a header of 2025-06-18 or later must
// name it, on POST, GET and DELETE alike; the refusal ends nothing.
test('a session refuses an MCP-Protocol-Version it did not negotiate', async () => {
  const all = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
  for (const negotiated of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) {
    const r = await raw(srv.port, { headers: JSON_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: negotiated, capabilities: {}, clientInfo: { name: 't', version: '1' } } }) });
    assert.equal(JSON.parse(r.body).result.protocolVersion, negotiated);
    const sid = r.headers['mcp-session-id'];
    const H = { ...JSON_HEADERS, 'mcp-session-id': sid };
    await raw(srv.port, { headers: H, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    for (const v of all) {
      const fits = v === negotiated || v < '2025-06-18';
      const p = await raw(srv.port, { headers: { ...H, 'mcp-protocol-version': v }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) });
      assert.equal(p.status, fits ? 200 : 400, `${negotiated} session, POST with ${v}: ${p.body}`);
      if (!fits) assert.match(JSON.parse(p.body).error.message, new RegExp(`negotiated \\(${negotiated}\\)`));
      if (!fits) {
        const g = await raw(srv.port, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': v } });
        assert.equal(g.status, 400, `${negotiated} session, GET with ${v}`);
        const d = await raw(srv.port, { method: 'DELETE', headers: { 'mcp-session-id': sid, 'mcp-protocol-version': v } });
        assert.equal(d.status, 400, `${negotiated} session, DELETE with ${v}`);
      }
    }
    const end = await raw(srv.port, { method: 'DELETE', headers: { 'mcp-session-id': sid, 'mcp-protocol-version': negotiated } });
    assert.equal(end.status, 204, `${negotiated} session: DELETE with its own version`);
  }
});

test('one GET stream per session: 409 for a second, accepted again once it is gone', async () => {
  const sid = await initSession(srv.port);
  const H = { accept: 'text/event-stream', 'mcp-session-id': sid };
  const first = sse(srv.port, { headers: H, timeoutMs: 1000 });
  await new Promise((r) => setTimeout(r, 200));
  const second = await raw(srv.port, { method: 'GET', headers: H });
  assert.equal(second.status, 409);
  const f = await first;
  assert.equal(f.status, 200);
  assert.equal(f.events[0].data, '');
  // After the first stream went away a new GET is accepted again.
  await new Promise((r) => setTimeout(r, 100));
  const third = await sse(srv.port, { headers: H, until: (ev) => ev.length >= 1 });
  assert.equal(third.status, 200);
});

test('a JSON-only client gets the messages of its call on the GET stream', async () => {
  const sid = await initSession(srv.port);
  await raw(srv.port, { headers: { ...JSON_HEADERS, 'mcp-session-id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'logging/setLevel', params: { level: 'debug' } }) });
  const get = sse(srv.port, { headers: { accept: 'text/event-stream', 'mcp-session-id': sid },
    until: (ev) => ev.filter((e) => e.data).length >= 2 });
  await new Promise((r) => setTimeout(r, 200));
  const r = await raw(srv.port, { headers: { ...JSON_HEADERS, accept: 'application/json', 'mcp-session-id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'slow', arguments: { ms: 40, steps: 2 } } }) });
  assert.equal(r.status, 200);
  assert.equal(JSON.parse(r.body).result.content[0].text, 'slept 40 ms');
  const g = await get;
  const logs = g.events.filter((e) => e.data).map((e) => JSON.parse(e.data));
  assert.equal(logs[0].method, 'notifications/message');
});

test('Last-Event-ID replays what a cut stream missed', async () => {
  const sid = await initSession(srv.port);
  const H = { ...JSON_HEADERS, accept: 'text/event-stream', 'mcp-session-id': sid };
  // Cut the stream right after the priming event; the call goes on.
  const cut = await sse(srv.port, { method: 'POST', headers: H, until: (ev) => ev.length >= 1,
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: { ms: 300, steps: 3 }, _meta: { progressToken: 'p' } } }) });
  const last = cut.events[0].id;
  await new Promise((r) => setTimeout(r, 500));
  const res = await sse(srv.port, { headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'last-event-id': last } });
  const msgs = res.events.filter((e) => e.data).map((e) => JSON.parse(e.data));
  assert.deepEqual(msgs.filter((m) => m.method === 'notifications/progress').map((m) => m.params.progress), [1, 2, 3]);
  assert.equal(msgs.at(-1).id, 7);
  assert.equal(msgs.at(-1).result.content[0].text, 'slept 300 ms');
});

test('stateless mode: no session id, every POST self-contained, GET 405', async () => {
  const st = await startServer(BIN, ['--stateless']);
  try {
    const { client, transport } = await connect(st.url);
    assert.equal(transport.sessionId, undefined);
    const r = await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    assert.equal(r.content[0].text, 'x');
    await client.close();
    const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'y' } } });
    const p = await raw(st.port, { headers: JSON_HEADERS, body: call });
    assert.equal(p.status, 200);
    assert.equal(p.headers['mcp-session-id'], undefined);
    assert.equal(JSON.parse(p.body).result.content[0].text, 'y');
    const g = await raw(st.port, { method: 'GET', headers: { accept: 'text/event-stream' } });
    assert.equal(g.status, 405);
  } finally {
    await st.stop();
  }
});

test('idle sessions expire and the number of sessions is bounded', async () => {
  const st = await startServer(BIN, ['--session-idle-ms', '1000', '--max-sessions', '2']);
  try {
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });
    const a = await initSession(st.port);
    const b = await initSession(st.port);
    const c = await initSession(st.port); // evicts a, the least recently used
    const status = async (sid) => (await raw(st.port, { headers: { ...JSON_HEADERS, 'mcp-session-id': sid }, body: ping })).status;
    assert.equal(await status(a), 404);
    assert.equal(await status(b), 200);
    assert.equal(await status(c), 200);
    await new Promise((r) => setTimeout(r, 2600));
    assert.equal(await status(b), 404);
  } finally {
    await st.stop();
  }
});

test('SIGTERM finishes the call in flight, then the server exits', async () => {
  const st = await startServer(BIN);
  const sid = await initSession(st.port);
  const call = raw(st.port, { headers: { ...JSON_HEADERS, 'mcp-session-id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'slow', arguments: { ms: 800, steps: 2 } } }) });
  await new Promise((r) => setTimeout(r, 200));
  st.child.kill('SIGTERM');
  const r = await call;
  assert.equal(r.status, 200);
  assert.match(r.body, /slept 800 ms/);
  const { code } = await st.exited;
  assert.equal(code, 0);
  await assert.rejects(raw(st.port, { headers: JSON_HEADERS, body: '{}' }));
});

// The transport routes by the engine's own reading of the body
// (pmcp_message_read): every request of a batch is answered under its id
// exactly as sent (digits past 2^53, a string with escapes), items keep
// their bytes (a \u0000 inside one is refused by the engine naming it,
// never cut), and an id the engine cannot answer under is refused on the
// POST instead of leaving it waiting.
test('stateless 2025-03-26 batch: exact ids, items as sent, unanswerable ids refused', async () => {
  const st = await startServer(BIN, ['--stateless']);
  const h = { ...JSON_HEADERS, 'mcp-protocol-version': '2025-03-26' };
  try {
    const body = ' [ {"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"} ,\n' +
      '{"jsonrpc":"2.0","method":"notifications/x"},' +
      '{"jsonrpc":"2.0","id":"a\\u00e9\\/b","method":"tools/call","params":{"name":"echo","arguments":{"text":"t\\u0000"}}},' +
      '{"jsonrpc":"2.0","id":-7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}} ]';
    const r = await raw(st.port, { headers: h, body });
    assert.equal(r.status, 200, r.body);
    const text = r.body.startsWith('[') ? r.body : r.body.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('');
    assert.match(text, /"id":12345678901234567890[,}]/, 'the digits as sent');
    const got = JSON.parse(text);
    const byId = new Map(got.map((m) => [typeof m.id === 'string' ? m.id : String(m.id), m]));
    assert.equal(got.length, 3, text);
    assert.ok(byId.get('aé/b').error, 'the NUL argument is refused');
    assert.match(byId.get('aé/b').error.message, /text/);
    assert.equal(byId.get('-7').result.content[0].text, 'x');
    for (const bad of ['{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
      '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1e400,"method":"ping"}]']) {
      const b = await raw(st.port, { headers: h, body: bad });
      assert.equal(b.status, 400, b.body);
      assert.equal(JSON.parse(b.body).error.code, -32600);
    }
  } finally {
    await st.stop();
  }
});

test('stateless: batches are refused from 2025-06-18 on, as in a session', async () => {
  const st = await startServer(BIN, ['--stateless']);
  try {
    const batch = JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'ping' }]);
    // No header: 2025-03-26, which a server assumes of a request that
    // says nothing, and which had batches.
    for (const [v, want] of [['2026-07-28', 400], ['2025-11-25', 400], ['2025-06-18', 400], ['2025-03-26', 200], [undefined, 200]]) {
      const headers = v ? { ...JSON_HEADERS, 'mcp-protocol-version': v } : JSON_HEADERS;
      const r = await raw(st.port, { headers, body: batch });
      assert.equal(r.status, want, `${v}: ${r.body}`);
      if (want === 400) assert.match(JSON.parse(r.body).error.message, /batches are not allowed/);
    }
    // Refused ones hold nothing: a single request still works.
    const one = await raw(st.port, { headers: { ...JSON_HEADERS, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }) });
    assert.equal(one.status, 200);
  } finally {
    await st.stop();
  }
});
