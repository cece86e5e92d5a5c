// SPDX-License-Identifier: MIT
// Connection handling of the HTTP transport over raw sockets (loopback
// only, bounded): pipelined requests all answered in order, malformed
// framing refused, and connections that send nothing neither hold slots
// for long nor keep new clients out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer, initSession } from './lib.mjs';

const BIN = process.env.HTTP_TESTSERVER;

// The Host names the port: the loopback names are ours with it only.
function callReq(port, sid, id, text, extra = '', tool = 'echo') {
  const body = JSON.stringify({
    jsonrpc: '2.0', id, method: 'tools/call',
    params: { name: tool, arguments: tool === 'echo' ? { text } : { ms: 500 } },
  });
  return `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
    `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${sid}\r\n` +
    `MCP-Protocol-Version: 2025-11-25\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

// Parses the HTTP/1.1 responses (Content-Length framing) a socket
// receives until it closes or `want` responses arrived or `ms` passed.
function collect(sock, { want = Infinity, ms = 20000 } = {}) {
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    const out = [];
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      sock.removeAllListeners('data');
      resolve({ responses: out, closed });
    };
    const timer = setTimeout(finish, ms);
    const parse = () => {
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        const status = Number(head.split(' ')[1]);
        const m = head.match(/\r\ncontent-length:\s*(\d+)/i);
        if (!m) throw new Error(`response without Content-Length: ${head}`);
        const len = Number(m[1]);
        if (buf.length < end + 4 + len) return;
        out.push({ status, head, body: buf.subarray(end + 4, end + 4 + len).toString() });
        buf = buf.subarray(end + 4 + len);
        if (out.length >= want) { finish(); return; }
      }
    };
    sock.on('data', (d) => { buf = Buffer.concat([buf, d]); parse(); });
    sock.on('close', () => { closed = true; finish(); });
    sock.on('error', () => {});
  });
}

function connect(port, localAddress) {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1', localAddress }, () => resolve(s));
    s.on('error', reject);
  });
}

function ids(responses) {
  return responses.map((r) => JSON.parse(r.body).id);
}

test('400 pipelined tools/call on one connection: every one answered, in order', async () => {
  const srv = await startServer(BIN);
  try {
    const sid = await initSession(srv.port);
    const sock = await connect(srv.port);
    const n = 400;
    // The first call takes 500 ms on a handler thread, so that the rest
    // (140 KB) is all received while the connection is busy.
    let all = callReq(srv.port, sid, 1, '', '', 'stall');
    for (let i = 2; i <= n; i++) all += callReq(srv.port, sid, i, `call ${i} ${'p'.repeat(300)}`);
    assert.ok(all.length > 200 * 1024, 'more than the bytes kept while busy');
    const got = collect(sock, { want: n, ms: 20000 });
    sock.write(all);
    const { responses } = await got;
    assert.equal(responses.length, n);
    assert.ok(responses.every((r) => r.status === 200));
    assert.deepEqual(ids(responses), Array.from({ length: n }, (_, i) => i + 1));
    for (let i = 1; i < n; i++) assert.match(responses[i].body, new RegExp(`call ${i + 1}\\b`));
    sock.destroy();
  } finally {
    await srv.stop();
  }
});

test('a pipelined request with a 200 KB body behind another is answered', async () => {
  const srv = await startServer(BIN);
  try {
    const sid = await initSession(srv.port);
    const sock = await connect(srv.port);
    const got = collect(sock, { want: 3, ms: 20000 });
    sock.write(callReq(srv.port, sid, 1, '', '', 'stall') + callReq(srv.port, sid, 2, 'x'.repeat(200 * 1024)) +
      callReq(srv.port, sid, 3, 'third'));
    const { responses } = await got;
    assert.deepEqual(responses.map((r) => r.status), [200, 200, 200]);
    assert.deepEqual(ids(responses), [1, 2, 3]);
    sock.destroy();
  } finally {
    await srv.stop();
  }
});

test('a client that half-closes after pipelining still gets every answer', async () => {
  const srv = await startServer(BIN);
  try {
    const sid = await initSession(srv.port);
    const sock = await connect(srv.port);
    let all = callReq(srv.port, sid, 1, '', '', 'stall');
    for (let i = 2; i <= 50; i++) all += callReq(srv.port, sid, i, `call ${i}`);
    const got = collect(sock, { ms: 20000 });
    sock.end(all);
    const { responses, closed } = await got;
    assert.ok(closed, 'the server closes once the last answer is sent');
    assert.deepEqual(ids(responses), Array.from({ length: 50 }, (_, i) => i + 1));
  } finally {
    await srv.stop();
  }
});

async function rawOnce(port, text) {
  const sock = await connect(port);
  const got = collect(sock, { want: 1, ms: 10000 });
  sock.write(text);
  const { responses } = await got;
  sock.destroy();
  return responses[0];
}

test('malformed chunk framing and obsolete header folding are refused with 400', async () => {
  const srv = await startServer(BIN);
  try {
    const sid = await initSession(srv.port);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' });
    const head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${sid}\r\n` +
      'MCP-Protocol-Version: 2025-11-25\r\n';
    const hex = Buffer.byteLength(body).toString(16);
    // Well-formed chunked body: accepted.
    let r = await rawOnce(srv.port, `${head}Transfer-Encoding: chunked\r\n\r\n${hex}\r\n${body}\r\n0\r\n\r\n`);
    assert.equal(r.status, 200);
    assert.equal(JSON.parse(r.body).id, 7);
    // Two bytes other than CRLF after the chunk data ("funky chunks").
    for (const bad of ['XY', '\n\n', '\r\r', 'AB']) {
      r = await rawOnce(srv.port, `${head}Transfer-Encoding: chunked\r\n\r\n${hex}\r\n${body}${bad}0\r\n\r\n`);
      assert.equal(r?.status, 400, `chunk data followed by ${JSON.stringify(bad)}`);
    }
    // Obsolete line folding, with a space and with a tab.
    for (const fold of [' ', '\t']) {
      r = await rawOnce(srv.port, `${head}X-Note: one\r\n${fold}two\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      assert.equal(r?.status, 400, `folded with ${JSON.stringify(fold)}`);
      assert.match(r.body, /folding/);
    }
    // Folded onto an empty first line.
    r = await rawOnce(srv.port, `${head}X-Note:\r\n two\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    assert.equal(r?.status, 400, 'folded onto an empty value');
    // A value that arrives in several pieces is not folding.
    const sock = await connect(srv.port);
    const got = collect(sock, { want: 1, ms: 10000 });
    const whole = `${head}X-Note: one two three\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const cut = whole.indexOf('two');
    sock.write(whole.slice(0, cut - 1));
    await new Promise((res) => setTimeout(res, 50));
    sock.write(whole.slice(cut - 1, cut + 1));
    await new Promise((res) => setTimeout(res, 50));
    sock.write(whole.slice(cut + 1));
    const { responses } = await got;
    assert.equal(responses[0]?.status, 200);
    sock.destroy();
  } finally {
    await srv.stop();
  }
});

test('connections that send nothing: timed out by the header timeout, bounded per client, room kept for new clients', async () => {
  const srv = await startServer(BIN, ['--max-connections', '16', '--max-connections-per-client', '8',
    '--header-timeout-ms', '1500', '--idle-timeout-ms', '60000']);
  const socks = [];
  try {
    const watch = (s) => {
      const w = { s, data: '', closedAt: 0 };
      s.on('data', (d) => { w.data += d; });
      s.on('close', () => { w.closedAt = Date.now(); });
      s.on('error', () => {});
      socks.push(w);
      return w;
    };
    const t0 = Date.now();
    // 12 silent connections from one address: 8 kept, 4 refused at once.
    const a = [];
    for (let i = 0; i < 12; i++) a.push(watch(await connect(srv.port, '127.0.0.1')));
    await new Promise((res) => setTimeout(res, 300));
    const refused = a.filter((w) => w.data.startsWith('HTTP/1.1 503'));
    assert.equal(refused.length, 4, 'over the per-client bound: 503');
    assert.ok(refused.every((w) => w.closedAt));
    // 8 more from a second address fill the 16 slots.
    for (let i = 0; i < 8; i++) watch(await connect(srv.port, '127.0.0.2'));
    await new Promise((res) => setTimeout(res, 100));
    // A new client is still served: an idle connection makes room.
    const sid = await new Promise((resolve, reject) => {
      const s = net.connect({ port: srv.port, host: '127.0.0.1', localAddress: '127.0.0.3' }, () => {
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
        s.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nContent-Type: application/json\r\n` +
          `Accept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      });
      collect(s, { want: 1, ms: 5000 }).then(({ responses }) => { s.destroy(); resolve(responses[0]); }, reject);
    });
    assert.equal(sid?.status, 200, 'a new client gets a slot');
    // the evicted socket's close may reach this process after the reply
    // did: wait for it (bounded) rather than race it
    const isEvicted = (w) => w.closedAt && !w.data.startsWith('HTTP/1.1 503');
    for (let t = 0; t < 100 && !socks.some(isEvicted); t++)
      await new Promise((res) => setTimeout(res, 20));
    const evicted = socks.filter(isEvicted);
    assert.ok(evicted.length >= 1, 'an idle connection was closed to make room');
    // The silent ones are closed by the header timeout, not the 60 s idle one.
    await new Promise((res) => setTimeout(res, 2500));
    const open = socks.filter((w) => !w.closedAt);
    assert.equal(open.length, 0, `${open.length} silent connections still open after 2.8 s`);
    assert.ok(Math.max(...socks.map((w) => w.closedAt)) - t0 < 6000);
  } finally {
    for (const w of socks) w.s.destroy();
    await srv.stop();
  }
});
