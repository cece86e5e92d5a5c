// SPDX-License-Identifier: MIT
// Real clients of both protocol eras against probe-mcp-stdio and
// probe-mcp-http: the TypeScript SDK v1 client (@modelcontextprotocol/sdk
// 1.32, initialize and a 2025-11-25 session) and the v2 client
// (@modelcontextprotocol/client 2.x, which speaks 2026-07-28 first:
// server/discover, then self-contained requests carrying their _meta).
// Over HTTP both authenticate with a pk_ API key and with an OAuth access
// token (the v2 client through its own OAuth flow). Every client calls a
// research tool paged with cursors (browse runs, next_cursor) and a
// tracking tool paged with offsets (list_runs, next_offset) on one store
// the probe CLI filled (the demo lab and an imported MLflow file store);
// the tracking answer is checked against the MLflow files, the research
// pages against one whole answer, and both eras must give the same data.
// The era really used is read off the wire: what the client sent (an
// initialize or none; the _meta and headers of every request) and what
// the server answered (resultType, serverInfo in _meta, a session or none).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1Stdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1Http } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError as V1Unauthorized } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Http, UnauthorizedError as V2Unauthorized }
  from '@modelcontextprotocol/client';
import { StdioClientTransport as V2Stdio } from '@modelcontextprotocol/client/stdio';
import { binary } from './lib.mjs';
import { MLRUNS, mlflowRuns } from './mlflow.mjs';
import { Agent, consent, startServer } from './oauth/lib.mjs';

const STDIO = binary('PROBE_MCP_STDIO');
const HTTP = binary('PROBE_MCP_HTTP');
const CLI = binary('PROBE_CLI');
const PV = 'io.modelcontextprotocol/protocolVersion';
const MODERN = '2026-07-28';

// One store: a user for OAuth, the demo lab (research) and the MLflow
// runs (tracking).
const dir = mkdtempSync(join(tmpdir(), 'probe-eras-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const store = join(dir, 'store.db');
const probe = (args, input) => execFileSync(CLI, ['--store', store, '--quiet', ...args],
  { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'inherit'] });
probe(['init']);
probe(['demo']);
probe(['import', 'mlflow', MLRUNS]);
probe(['user', 'create', 'ada'], 'ada-password-1\n');
probe(['user', 'set-role', 'ada', '--workspace', 'default', '--role', 'viewer']);
const KEY = probe(['key', 'create']).trim();
assert.match(KEY, /^pk_/);

// ---- the wire, as each client used it ----------------------------------

// Records what a transport sends and receives (JSON-RPC messages). Called
// before connect for sends; receives are hooked once the client set its
// handler.
function tap(transport) {
  const wire = { sent: [], received: [] };
  const send = transport.send.bind(transport);
  transport.send = (m, o) => { wire.sent.push(m); return send(m, o); };
  wire.hookReceive = () => {
    const on = transport.onmessage;
    transport.onmessage = (m, extra) => { wire.received.push(m); return on(m, extra); };
  };
  return wire;
}

// A fetch that records each HTTP exchange's request and response headers.
function tapFetch() {
  const log = [];
  const f = async (url, init = {}) => {
    const res = await fetch(url, init);
    log.push({ method: init.method ?? 'GET', headers: new Headers(init.headers),
      body: typeof init.body === 'string' ? init.body : undefined, status: res.status,
      sessionId: res.headers.get('mcp-session-id') });
    return res;
  };
  return { fetch: f, log };
}

const requests = (wire) => wire.sent.filter((m) => m.method && m.id !== undefined);
const results = (wire) => wire.received.filter((m) => m.result);

function assertLegacyWire(wire, http) {
  const reqs = requests(wire);
  assert.equal(reqs[0].method, 'initialize', 'the v1 client opens a session');
  assert.ok(reqs.every((m) => !m.params?._meta?.[PV]), 'no modern _meta');
  for (const r of results(wire).slice(1)) assert.equal(r.result.resultType, undefined, 'no resultType in 2025-11-25');
  if (http) {
    const posts = http.log.filter((x) => x.method === 'POST');
    assert.match(posts[0].sessionId ?? '', /^[0-9a-f]{32}$/, 'initialize answered with a session');
    assert.ok(posts.slice(1).every((x) => x.headers.get('mcp-session-id') === posts[0].sessionId));
  }
}

function assertModernWire(client, wire, http) {
  assert.equal(client.getProtocolEra(), 'modern');
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  const reqs = requests(wire);
  assert.ok(reqs.length > 0);
  assert.ok(!reqs.some((m) => m.method === 'initialize'), 'no initialize in the modern era');
  for (const m of reqs) {
    assert.equal(m.params?._meta?.[PV], MODERN, `${m.method} carries its protocol version`);
    assert.ok(m.params._meta['io.modelcontextprotocol/clientCapabilities'], `${m.method} carries its capabilities`);
  }
  const res = results(wire);
  assert.ok(res.length >= reqs.length - 1, 'answers were seen');
  for (const r of res) {
    assert.equal(r.result.resultType, 'complete', 'the server answered in the modern era');
    assert.ok(r.result._meta?.['io.modelcontextprotocol/serverInfo']?.name, 'serverInfo in every result');
  }
  if (http) {
    const posts = http.log.filter((x) => x.method === 'POST' && x.status === 200);
    assert.ok(posts.some((x) => /server\/discover/.test(x.body ?? '')), 'the v2 client probed with server/discover');
    for (const x of posts) {
      assert.equal(x.sessionId, null, 'no session in the modern era');
      assert.equal(x.headers.get('mcp-protocol-version'), MODERN);
      assert.ok(x.headers.get('mcp-method'), 'Mcp-Method header');
    }
  }
}

// ---- what every client does --------------------------------------------

async function tool(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  assert.notEqual(r.isError, true, `${name} ${JSON.stringify(args)}: ${JSON.stringify(r)}`);
  return JSON.parse(r.content[0].text);
}

const SEED_FILTER = [
  { attr: 'params/optimizer', op: 'eq', value: 'adamw' },
  { any_of: [
    { attr: 'params/lr', op: 'lt', value: 0.001 },
    { series: 'val/loss', function: 'last', op: 'lt', value: 0.5 },
  ] },
];

// Research: browse's runs paged two at a time by next_cursor, against one
// whole answer; tracking: list_runs paged one row at a time by
// next_offset, against the MLflow files. Returns what was read, for the
// comparison across eras.
async function exercise(client) {
  const names = (await client.listTools()).tools.map((t) => t.name);
  for (const n of ['browse', 'search', 'list_runs']) assert.ok(names.includes(n), `${n} in ${names}`);
  // browse's runs in big pages and in pages of two: the same runs, in order
  const walk = async (args) => {
    const refs = [];
    let cursor;
    let pages = 0;
    let total;
    do {
      const p = await tool(client, 'browse', { mode: 'runs', ...args, ...(cursor ? { cursor } : {}) });
      assert.ok(p.runs.length <= args.limit);
      total ??= p.total;
      assert.equal(p.total, total, 'every page counts the same total');
      refs.push(...p.runs.map((r) => r.ref));
      cursor = p.next_cursor;
      pages++;
    } while (cursor && pages < 100);
    assert.equal(refs.length, total, 'the pages reach every run');
    assert.equal(new Set(refs).size, refs.length, 'no run twice');
    return { refs, pages };
  };
  const whole = await walk({ limit: 200, token_budget: 8000 });
  const paged = await walk({ limit: 2 });
  assert.ok(paged.pages >= whole.refs.length / 2 && paged.pages > whole.pages, `${paged.pages} pages of two`);
  assert.deepEqual(paged.refs, whole.refs, 'pages of two are the big pages, in order');

  const truth = mlflowRuns();
  const want = truth.filter((r) => r.optimizer === 'adamw' && (r.lr < 0.001 || r.lastLoss < 0.5))
    .map((r) => r.id).sort();
  assert.ok(want.length > 1);
  const seen = [];
  let offset = 0;
  let rows = 0;
  for (; offset !== undefined && rows < 50; rows++) {
    const p = await tool(client, 'list_runs', { project: 'mlflow-adamw', filter: SEED_FILTER, limit: 1, offset });
    assert.equal(p.total_count, want.length);
    seen.push(...p.rows.map((r) => r['sys/name']));
    offset = p.next_offset;
  }
  assert.ok(rows > 1, 'several offset pages');
  assert.deepEqual(seen.slice().sort(), want, 'list_runs pages = the MLflow files');
  return { research: paged.refs, tracking: seen };
}

// What the first client of a group read; every other must read the same
// (stdio serves every workspace, an HTTP credential its own: two groups).
const answers = new Map();
function sameAnswers(label, got) {
  const group = label.split(' ')[0];
  if (!answers.has(group)) answers.set(group, { label, got });
  const first = answers.get(group);
  assert.deepEqual(got, first.got, `${label} reads what ${first.label} read`);
}

// ---- stdio --------------------------------------------------------------

const STDIO_ARGS = ['--store', store, '--toolset', 'all'];

test('stdio: v1 SDK client, 2025-11-25 session', async () => {
  const transport = new V1Stdio({ command: STDIO, args: STDIO_ARGS, env: { ...process.env }, stderr: 'inherit' });
  const wire = tap(transport);
  const client = new V1Client({ name: 'eras-v1', version: '1.0.0' });
  await client.connect(transport);
  wire.hookReceive();
  try {
    assert.match(client.getServerVersion().name, /^probe-mcp/);
    sameAnswers('stdio v1', await exercise(client));
    assertLegacyWire(wire);
  } finally {
    await client.close();
  }
});

// The v2 client's default is still the legacy handshake (versionNegotiation
// mode 'legacy' in 2.4); 'auto' probes with server/discover first and takes
// 2026-07-28 when offered, a pin insists on it.
const V2_MODERN = [{ mode: 'auto' }, { mode: { pin: MODERN } }];

test('stdio: v2 client, 2026-07-28 (negotiated, then pinned)', async () => {
  for (const versionNegotiation of V2_MODERN) {
    const transport = new V2Stdio({ command: STDIO, args: STDIO_ARGS, env: { ...process.env }, stderr: 'inherit' });
    const wire = tap(transport);
    const client = new V2Client({ name: 'eras-v2', version: '2.0.0' }, { versionNegotiation });
    await client.connect(transport);
    wire.hookReceive();
    try {
      assert.ok(client.getDiscoverResult().supportedVersions.includes(MODERN));
      sameAnswers('stdio v2', await exercise(client));
      assertModernWire(client, wire);
    } finally {
      await client.close();
    }
  }
});

// ---- HTTP: one probe-mcp-http serves both eras at once -------------------

let srv;
before(async () => { srv = await startServer(HTTP, ['--store', store, '--toolset', 'all']); });
after(async () => { await srv?.stop(); });

const bearer = (token) => ({ requestInit: { headers: { Authorization: `Bearer ${token}` } } });

async function v1Http(opts, label) {
  const http = tapFetch();
  const transport = new V1Http(srv.url, { ...opts, fetch: http.fetch });
  const wire = tap(transport);
  const client = new V1Client({ name: 'eras-v1', version: '1.0.0' });
  await client.connect(transport);
  wire.hookReceive();
  try {
    sameAnswers(label, await exercise(client));
    assertLegacyWire(wire, http);
  } finally {
    await client.close();
  }
}

async function v2Http(opts, label, versionNegotiation = V2_MODERN[0]) {
  const http = tapFetch();
  const transport = new V2Http(srv.url, { ...opts, fetch: http.fetch });
  const wire = tap(transport);
  const client = new V2Client({ name: 'eras-v2', version: '2.0.0' }, { versionNegotiation });
  await client.connect(transport);
  wire.hookReceive();
  try {
    sameAnswers(label, await exercise(client));
    assertModernWire(client, wire, http);
  } finally {
    await client.close();
  }
}

test('HTTP with a pk_ API key: v1 client (legacy) and v2 client (modern) on one server', async () => {
  await v1Http(bearer(KEY), 'http key v1');
  await v2Http(bearer(KEY), 'http key v2');
  await v2Http(bearer(KEY), 'http key v2 pinned', V2_MODERN[1]);
  // the same server at the same time: both clients interleaved
  await Promise.all([v1Http(bearer(KEY), 'http key v1 again'), v2Http(bearer(KEY), 'http key v2 again')]);
});

test('HTTP without credentials: refused in both eras', async () => {
  await assert.rejects(new V1Client({ name: 'x', version: '1' }).connect(new V1Http(srv.url)));
  await assert.rejects(new V2Client({ name: 'x', version: '2' }, { versionNegotiation: V2_MODERN[0] })
    .connect(new V2Http(srv.url)));
});

// An in-memory OAuth client provider (both SDKs take the same shape); the
// "browser" is a cookie-keeping HTTP agent that signs ada in and consents.
class Provider {
  constructor(name) { this.name = name; }
  get redirectUrl() { return 'http://127.0.0.1:9/eras-callback'; }
  get clientMetadata() {
    return { client_name: this.name, redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      token_endpoint_auth_method: 'none' };
  }
  state() { return 'eras-state'; }
  clientInformation() { return this.info; }
  saveClientInformation(i) { this.info = i; }
  tokens() { return this.tok; }
  saveTokens(t) { this.tok = t; }
  redirectToAuthorization(u) { this.authUrl = u; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
  // (v2: the authorization server the flow began with, checked on the callback)
  saveDiscoveryState(s) { this.discovery = s; }
  discoveryState() { return this.discovery; }
}

// The SDK's own flow: connect fails with 401, the person consents, the
// code is exchanged (PKCE); returns the provider holding the tokens.
async function signIn(Client, Http, Unauthorized, name) {
  const provider = new Provider(name);
  const t = new Http(srv.url, { authProvider: provider });
  await assert.rejects(new Client({ name, version: '1' }, { versionNegotiation: V2_MODERN[0] }).connect(t), Unauthorized);
  assert.ok(provider.authUrl, 'the client asked for the authorization page');
  const loc = new URL(await consent(new Agent(srv.port), provider.authUrl.href, { access: 'read' }));
  // v1 takes the code; v2 the callback's parameters, whose iss it checks
  // against the issuer (RFC 9207, which the server advertises)
  assert.equal(loc.searchParams.get('iss'), `http://127.0.0.1:${srv.port}/oauth`);
  await t.finishAuth(Client === V2Client ? loc.searchParams : loc.searchParams.get('code'));
  assert.match(provider.tok.access_token, /^pbm_at_/);
  return provider;
}

test('HTTP with OAuth: each client signs in by its own flow, then pages in its era', async () => {
  const p1 = await signIn(V1Client, V1Http, V1Unauthorized, 'eras v1 oauth');
  await v1Http({ authProvider: p1 }, 'http oauth v1');
  const p2 = await signIn(V2Client, V2Http, V2Unauthorized, 'eras v2 oauth');
  await v2Http({ authProvider: p2 }, 'http oauth v2');
  // one access token serves both eras
  await v2Http(bearer(p1.tok.access_token), 'http oauth v1 token, v2 client');
  await v1Http(bearer(p2.tok.access_token), 'http oauth v2 token, v1 client');
});
