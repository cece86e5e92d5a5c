// SPDX-License-Identifier: MIT
// stdio-to-HTTP bridge: holds `probe-mcp-everything --stdio` to the same
// conformance suite as the HTTP transport. Each HTTP session (served by the
// TypeScript SDK's StreamableHTTPServerTransport, with an event store for
// resumability and DNS-rebinding protection) gets its own child process;
// JSON-RPC lines go to its stdin and come back from its stdout unchanged.
//
//   node stdio-bridge.mjs /path/to/probe-mcp-everything
//
// Prints "listening on http://127.0.0.1:PORT/mcp" and serves until SIGTERM.
// stdio carries no "related request" tag, so a notification or request the
// server emits while a call runs is attached to that call when it names its
// progressToken or when exactly one call is in flight; otherwise it goes to
// the session's GET stream, as the specification allows.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import readline from 'node:readline';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';

const bin = process.argv[2];
if (!bin) {
  console.error('usage: node stdio-bridge.mjs PROBE_MCP_EVERYTHING');
  process.exit(2);
}

const sessions = new Map(); // session id -> { transport, child }
let port = 0;

function startSession() {
  const child = spawn(bin, ['--stdio'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const inflight = new Map(); // request id -> progressToken
  const state = { protocol: undefined };
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    eventStore: new InMemoryEventStore(),
    retryInterval: 1000,
    enableDnsRebindingProtection: true,
    allowedHosts: [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`],
    allowedOrigins: [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`],
    onsessioninitialized: (id) => { sessions.set(id, { transport, child, state }); },
  });
  transport.onmessage = (msg) => {
    if (msg.method && msg.id !== undefined && msg.method !== 'initialize') {
      inflight.set(msg.id, msg.params?._meta?.progressToken);
    }
    child.stdin.write(`${JSON.stringify(msg)}\n`);
  };
  transport.onclose = () => {
    if (transport.sessionId) sessions.delete(transport.sessionId);
    child.stdin.end();
  };
  const lines = readline.createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    if (!line.trim()) return;
    const msg = JSON.parse(line);
    if (msg.id !== undefined && !msg.method) {
      if (msg.result?.protocolVersion) state.protocol = msg.result.protocolVersion;
      inflight.delete(msg.id);
      transport.send(msg).catch(() => {});
      return;
    }
    let related;
    const token = msg.params?.progressToken;
    if (token !== undefined) {
      for (const [id, t] of inflight) if (t === token) related = id;
    }
    if (related === undefined && inflight.size === 1) related = [...inflight.keys()][0];
    transport.send(msg, related === undefined ? {} : { relatedRequestId: related }).catch(() => {});
  });
  child.on('exit', () => { transport.close().catch(() => {}); });
  return transport;
}

function readBody(req) {
  return new Promise((resolve) => {
    let data = '';
    req.on('data', (d) => { data += d; });
    req.on('end', () => resolve(data));
  });
}

const server = http.createServer(async (req, res) => {
  if (new URL(req.url, 'http://x').pathname !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  // DNS rebinding: refuse foreign Host / Origin before a child is started.
  const ok = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  const origin = req.headers.origin;
  if (!ok.includes(req.headers.host) || (origin !== undefined && !ok.map((h) => `http://${h}`).includes(origin))) {
    res.writeHead(403, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Host or Origin not allowed' }, id: null }));
    return;
  }
  let body;
  if (req.method === 'POST') {
    const text = await readBody(req);
    try { body = JSON.parse(text); } catch {
      res.writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
      return;
    }
  }
  const sid = req.headers['mcp-session-id'];
  let transport = sid ? sessions.get(sid)?.transport : undefined;
  if (!transport) {
    if (!sid && req.method === 'POST' && body?.method === 'initialize') {
      transport = startSession();
    } else {
      res.writeHead(sid ? 404 : 400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: sid ? 'Session not found' : 'Mcp-Session-Id header is required' }, id: null }));
      return;
    }
  }
  // The SDK decides on SSE priming events from the request's
  // MCP-Protocol-Version header; the HTTP transport under test decides from
  // the version the session negotiated. Present the negotiated one, so both
  // frontends are held to the same behaviour.
  const negotiated = sid ? sessions.get(sid)?.state.protocol : undefined;
  if (negotiated && req.headers['mcp-protocol-version']) {
    req.headers['mcp-protocol-version'] = negotiated;
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      if (req.rawHeaders[i].toLowerCase() === 'mcp-protocol-version') req.rawHeaders[i + 1] = negotiated;
    }
  }
  await transport.handleRequest(req, res, body);
});

server.listen(0, '127.0.0.1', () => {
  port = server.address().port;
  console.log(`listening on http://127.0.0.1:${port}/mcp`);
});

process.on('SIGTERM', () => {
  for (const { child } of sessions.values()) child.stdin.end();
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
