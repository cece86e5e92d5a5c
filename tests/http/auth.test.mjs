// SPDX-License-Identifier: MIT
// Authentication and authorization of the MCP endpoint (issue 7), against
// the test-only write server (http-writeserver: whoami + a write tool) and
// probe-mcp-http itself: 401s with resource_metadata, cookies stripped,
// tool lists tailored per principal and write tools refused, keys across
// tenants, revoked keys, disabled people and changed roles at the next
// call, sessions bound to their principal, the audit of write tools, and a
// battery of tampered and truncated credentials; workspace scoping through
// the scope hook (a connection switches, a key may not) and a full worker
// queue answered with a retryable busy error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { raw, serverArgs, startServer, storeIn } from './lib.mjs';

const WS = process.env.HTTP_WRITESERVER;
const PROBE = process.env.PROBE_CLI;
const HTTP = process.env.PROBE_MCP_HTTP;

const INIT = JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});
const BASE = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function probe(store, args, input) {
  return execFileSync(PROBE, ['--store', store, ...args], { encoding: 'utf8', input }).trim();
}

// A session for a bearer token: initialize + initialized; returns a
// function that sends one JSON-RPC request and resolves {status, msg}.
async function session(port, token, extra = {}) {
  const auth = token ? { authorization: `Bearer ${token}` } : {};
  const r = await raw(port, { headers: { ...BASE, ...auth, ...extra }, body: INIT });
  if (r.status !== 200) return { status: r.status, headers: r.headers, body: r.body };
  const sid = r.headers['mcp-session-id'];
  const h = { ...BASE, ...auth, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
  await raw(port, { headers: h, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  let id = 10;
  const call = async (method, params = {}, tok = token) => {
    const hh = { ...h, authorization: `Bearer ${tok}` };
    const res = await raw(port, { headers: hh, body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }) });
    let msg = null;
    try { msg = JSON.parse(res.body); } catch { /* 4xx text */ }
    return { status: res.status, msg, headers: res.headers, body: res.body };
  };
  return { status: 200, sid, call };
}

const toolNames = async (s) => (await s.call('tools/list')).msg.result.tools.map((t) => t.name).sort();

function startWriteServer(store, conns = [], extra = [], env = {}) {
  return new Promise((resolve, reject) => {
    const args = ['--store', serverArgs([store])[0], ...conns.flatMap((c) => ['--connection', c]), ...extra];
    const child = spawn(WS, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`writeserver did not start: ${err}`)), 15000);
    child.stderr.on('data', (d) => { err += d; });
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/[^\s]+)/);
      if (m) {
        clearTimeout(timer);
        const url = new URL(m[1]);
        resolve({
          port: Number(url.port),
          conns: [...out.matchAll(/connection (\S+)/g)].map((x) => x[1]),
          stop: async () => {
            child.kill('SIGTERM');
            await new Promise((r) => child.on('exit', r));
            assert.equal(child.exitCode, 0, err);
          },
        });
      }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`exited ${code}: ${err}`)); });
  });
}

function fixture() {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmcp-auth-'));
  const store = storeIn(dir);
  probe(store, ['init']);
  probe(store, ['project', 'create', 'P1']);
  probe(store, ['run', 'create', 'r1', '--project', 'p1', '--id', 'r1']);
  probe(store, ['run', 'create', 'r2', '--project', 'p1', '--id', 'r2']);
  probe(store, ['--tenant', 'lab-b', 'init']);
  return { dir, store };
}

test('no credential, cookies, tampered keys: 401 with resource_metadata', async () => {
  const { dir, store } = fixture();
  const srv = await startWriteServer(store);
  try {
    const key = probe(store, ['key', 'create', '--scope', 'write']);
    const none = await raw(srv.port, { headers: BASE, body: INIT });
    assert.equal(none.status, 401);
    assert.match(none.headers['www-authenticate'],
      new RegExp(`^Bearer resource_metadata="http://127\\.0\\.0\\.1:${srv.port}/\\.well-known/oauth-protected-resource/mcp"`));
    // A browser's session cookie alone: stripped, so a 401.
    const cookie = await raw(srv.port, { headers: { ...BASE, cookie: `session=${key}; pbm_session=x` }, body: INIT });
    assert.equal(cookie.status, 401);
    // The key next to a cookie still works (the cookie is ignored).
    const both = await session(srv.port, key, { cookie: 'pbm_session=x' });
    assert.equal(both.status, 200);
    // Tampered, truncated, extended, other schemes, padding: all one 401.
    const flip = (s, i) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const bad = [flip(key, 5), flip(key, key.length - 1), key.slice(0, -1), key.slice(0, 3),
      `${key}A`, `${key}=`, key.replace('pk_', 'PK_'), `pk_${'A'.repeat(43)}`, '', 'pbm_at_x'];
    const bodies = new Set();
    for (const b of bad) {
      const r = await raw(srv.port, { headers: { ...BASE, authorization: `Bearer ${b}` }, body: INIT });
      assert.equal(r.status, 401, b);
      assert.match(r.headers['www-authenticate'], /resource_metadata=/);
      if (b.startsWith('pk_')) bodies.add(r.body);
    }
    assert.equal(bodies.size, 1, [...bodies].join('\n'));
    const basic = await raw(srv.port, { headers: { ...BASE, authorization: `Basic ${key}` }, body: INIT });
    assert.equal(basic.status, 401);
    const two = await raw(srv.port, { headers: { ...BASE, authorization: [`Bearer ${key}`, `Bearer ${key}`] }, body: INIT });
    assert.equal(two.status, 401);
    // The audit never holds the secret.
    assert.ok(!probe(store, ['audit', '--json']).includes(key));
  } finally {
    await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('keys: read scope sees no write tool and is refused; write scope is audited', async () => {
  const { dir, store } = fixture();
  const srv = await startWriteServer(store);
  try {
    const rkey = probe(store, ['key', 'create', '--scope', 'read']);
    const wkey = probe(store, ['key', 'create', '--scope', 'write', '--name', 'agent']);
    const r = await session(srv.port, rkey);
    assert.deepEqual(await toolNames(r), ['whoami']);
    const refused = await r.call('tools/call', { name: 'delete_run', arguments: { run: 'run:r1' } });
    assert.ok(refused.msg.error || refused.msg.result?.isError, refused.body);
    assert.doesNotMatch(refused.body, /deleted/);
    const me = JSON.parse((await r.call('tools/call', { name: 'whoami', arguments: {} })).msg.result.content[0].text);
    assert.equal(me.kind, 'key');
    assert.equal(me.tenant, 'default');
    assert.equal(me.workspace, 'default');
    assert.equal(me.role, 'viewer');
    const w = await session(srv.port, wkey);
    assert.deepEqual(await toolNames(w), ['delete_run', 'whoami']);
    const tool = (await w.call('tools/list')).msg.result.tools.find((t) => t.name === 'delete_run');
    assert.equal(tool.annotations.destructiveHint, true);
    const ok = await w.call('tools/call', { name: 'delete_run', arguments: { run: 'run:r1' } });
    assert.equal(ok.msg.result.content[0].text, 'deleted', ok.body);
    const meW = JSON.parse((await w.call('tools/call', { name: 'whoami', arguments: {} })).msg.result.content[0].text);
    assert.equal(meW.role, 'editor');
    assert.equal(meW.write, true);
    const audit = JSON.parse(probe(store, ['audit', '--json', '--action', 'run.delete']));
    assert.equal(audit.length, 1);
    assert.equal(audit[0].via, 'mcp');
    assert.equal(audit[0].tenant, 'default');
    assert.equal(audit[0].actor, `key:${meW.id}`);
    assert.equal(audit[0].details.tool, 'delete_run');
    // A session opened with one key does not accept another's requests.
    const hijack = await w.call('tools/list', {}, rkey);
    assert.equal(hijack.status, 404);
    // Revocation takes effect at the next request of the same session.
    const id = JSON.parse(probe(store, ['key', 'list', '--json'])).find((k) => k.name === 'agent').id;
    probe(store, ['key', 'revoke', id]);
    const after = await w.call('tools/list');
    assert.equal(after.status, 401);
    assert.match(after.headers['www-authenticate'], /invalid_token/);
    const creates = JSON.parse(probe(store, ['audit', '--json', '--action', 'api_key.']));
    assert.deepEqual(creates.map((e) => e.action), ['api_key.create', 'api_key.create', 'api_key.revoke']);
    assert.ok(creates.every((e) => e.via === 'cli'));
  } finally {
    await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a key of another tenant is refused like an unknown key', async () => {
  const { dir, store } = fixture();
  const srv = await startWriteServer(store);
  try {
    const bkey = probe(store, ['--tenant', 'lab-b', 'key', 'create', '--scope', 'write']);
    const unknown = `pk_${'Q'.repeat(43)}`;
    const a = await raw(srv.port, { headers: { ...BASE, authorization: `Bearer ${bkey}` }, body: INIT });
    const b = await raw(srv.port, { headers: { ...BASE, authorization: `Bearer ${unknown}` }, body: INIT });
    assert.equal(a.status, 401);
    assert.equal(a.body, b.body);
    assert.equal(a.headers['www-authenticate'], b.headers['www-authenticate']);
    // The other tenant's key cannot even be revoked from this tenant.
    const bid = JSON.parse(probe(store, ['--tenant', 'lab-b', 'key', 'list', '--json']))[0].id;
    assert.throws(() => probe(store, ['key', 'revoke', bid]), /no active key/);
  } finally {
    await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a person: role changes and disabling take effect at the next call', async () => {
  const { dir, store } = fixture();
  probe(store, ['user', 'create', 'ada'], 'pw-ada-123\n');
  probe(store, ['user', 'set-role', 'ada', '--workspace', 'default', '--role', 'editor']);
  probe(store, ['user', 'create', 'vic'], 'pw-vic-123\n');
  probe(store, ['user', 'set-role', 'vic', '--workspace', 'default', '--role', 'viewer']);
  const srv = await startWriteServer(store, ['ada:default:write', 'ada:default:read', 'vic:default:write']);
  try {
    const [adaW, adaR, vicW] = srv.conns.map((c) => `tst_${c}`);
    const s = await session(srv.port, adaW);
    assert.deepEqual(await toolNames(s), ['delete_run', 'whoami']);
    // A read-only connection sees no write tool and is refused, whatever the role.
    const r = await session(srv.port, adaR);
    assert.deepEqual(await toolNames(r), ['whoami']);
    const refused = await r.call('tools/call', { name: 'delete_run', arguments: { run: 'run:r2' } });
    assert.doesNotMatch(refused.body, /"deleted"/);
    // A viewer stays read-only with a write connection.
    const v = await session(srv.port, vicW);
    assert.deepEqual(await toolNames(v), ['whoami']);
    // Demoted: the same session loses the tool at its next call.
    probe(store, ['user', 'set-role', 'ada', '--workspace', 'default', '--role', 'viewer']);
    assert.deepEqual(await toolNames(s), ['whoami']);
    const demoted = await s.call('tools/call', { name: 'delete_run', arguments: { run: 'run:r2' } });
    assert.doesNotMatch(demoted.body, /"deleted"/);
    probe(store, ['user', 'set-role', 'ada', '--workspace', 'default', '--role', 'admin']);
    const me = JSON.parse((await s.call('tools/call', { name: 'whoami', arguments: {} })).msg.result.content[0].text);
    assert.equal(me.role, 'admin');
    assert.equal(me.actor, 'user:ada');
    const ok = await s.call('tools/call', { name: 'delete_run', arguments: { run: 'run:r2' } });
    assert.equal(ok.msg.result.content[0].text, 'deleted');
    const audit = JSON.parse(probe(store, ['audit', '--json', '--action', 'run.delete']));
    assert.equal(audit.at(-1).actor, 'user:ada');
    // Disabled: the next request is a 401; enabled again: back.
    probe(store, ['user', 'disable', 'ada']);
    assert.equal((await s.call('tools/list')).status, 401);
    probe(store, ['user', 'enable', 'ada']);
    assert.equal((await s.call('tools/list')).status, 200);
    // Removed from the workspace: 401.
    probe(store, ['user', 'set-role', 'ada', '--workspace', 'default', '--role', 'none']);
    assert.equal((await s.call('tools/list')).status, 401);
  } finally {
    await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('probe-mcp-http: on by default, research tools behind a key', async () => {
  const { dir, store } = fixture();
  const srv = await startServer(HTTP, ['--store', store]);
  try {
    const none = await raw(srv.port, { headers: BASE, body: INIT });
    assert.equal(none.status, 401);
    assert.match(none.headers['www-authenticate'], /oauth-protected-resource\/mcp"/);
    const key = probe(store, ['key', 'create']);
    const s = await session(srv.port, key);
    const names = await toolNames(s);
    assert.ok(names.includes('browse') && names.includes('search'), names.join(','));
    const b = await s.call('tools/call', { name: 'browse', arguments: { mode: 'runs', token_budget: 512 } });
    assert.match(b.msg.result.content[0].text, /run:r1/);
    const bkey = probe(store, ['--tenant', 'lab-b', 'key', 'create']);
    assert.equal((await raw(srv.port, { headers: { ...BASE, authorization: `Bearer ${bkey}` }, body: INIT })).status, 401);
    // No Host (HTTP/1.0), so no base URL: the challenge names no relative
    // metadata URL.
    const head = await new Promise((resolve, reject) => {
      const sock = net.connect(srv.port, '127.0.0.1', () => {
        sock.end(`POST /mcp HTTP/1.0\r\ncontent-type: application/json\r\naccept: application/json\r\ncontent-length: ${Buffer.byteLength(INIT)}\r\n\r\n${INIT}`);
      });
      let data = '';
      sock.on('data', (d) => { data += d; });
      sock.on('end', () => resolve(data));
      sock.on('error', reject);
    });
    assert.match(head, /^HTTP\/1\.1 401/);
    const wa = head.match(/^www-authenticate: (.*)\r$/im)[1];
    assert.doesNotMatch(wa, /resource_metadata="\//);
    assert.match(wa, /^Bearer/);
    // Behind a trusted proxy: a forwarded host the server allows makes an
    // absolute URL; one it does not allow makes none (never a relative one).
    const px = await startServer(HTTP, ['--store', store, '--trusted-proxy', '127.0.0.1', '--allow-host', 'mcp.example.com']);
    try {
      const fw = async (h) => (await raw(px.port, { headers: { ...BASE, ...h }, body: INIT })).headers['www-authenticate'];
      assert.equal(await fw({ 'x-forwarded-proto': 'https', 'x-forwarded-host': 'mcp.example.com' }),
        'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"');
      assert.equal(await fw({ 'x-forwarded-host': 'evil.example' }), 'Bearer');
      assert.equal(await fw({ forwarded: 'host=evil.example;proto=https' }), 'Bearer');
      assert.match(await fw({}), new RegExp(`^Bearer resource_metadata="http://127\\.0\\.0\\.1:${px.port}/`));
    } finally {
      await px.stop();
    }
  } finally {
    await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

// A store with workspaces alpha and beta, a project and a run in each
// (run:ra, run:rb), and ada: editor of alpha, viewer of beta.
function twoWorkspaces({ otherTenant = false } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmcp-auth-'));
  const store = storeIn(dir);
  probe(store, ['init']);
  probe(store, ['workspace', 'create', 'alpha', '--id', 'alpha']);
  probe(store, ['workspace', 'create', 'beta', '--id', 'beta']);
  probe(store, ['project', 'create', 'pa', '--id', 'pa', '--workspace', 'alpha']);
  probe(store, ['project', 'create', 'pb', '--id', 'pb', '--workspace', 'beta']);
  probe(store, ['run', 'create', 'alpharun', '--id', 'ra', '--project', 'pa']);
  probe(store, ['run', 'create', 'betarun', '--id', 'rb', '--project', 'pb']);
  if (otherTenant) {
    probe(store, ['--tenant', 'lab-b', 'init']);
    probe(store, ['--tenant', 'lab-b', 'workspace', 'create', 'gamma', '--id', 'gamma']);
  }
  probe(store, ['user', 'create', 'ada'], 'pw-ada-123\n');
  probe(store, ['user', 'set-role', 'ada', '--workspace', 'alpha', '--role', 'editor']);
  probe(store, ['user', 'set-role', 'ada', '--workspace', 'beta', '--role', 'viewer']);
  return { dir, store };
}

// Workspace scoping through the real scope hook (mcp_auth_scope): the
// research and tracking tools of the write server (--research) act in the
// connection's workspace; `workspace` switches to another the person
// belongs to, re-checked on every call; a non-member, missing or other
// workspace gets one refusal; a key never switches.
test('workspaces: a connection switches with `workspace`, a key may not', async () => {
  const { dir, store } = twoWorkspaces({ otherTenant: true });
  const key = probe(store, ['key', 'create', '--workspace', 'alpha']);
  const srv = await startWriteServer(store, ['ada:alpha:read'], ['--research']);
  try {
    const s = await session(srv.port, `tst_${srv.conns[0]}`);
    const tool = async (sess, name, args) => {
      const r = await sess.call('tools/call', { name, arguments: args });
      assert.equal(r.status, 200, r.body);
      return { err: !!r.msg.result.isError, text: r.msg.result.content[0].text };
    };
    let r = await tool(s, 'browse', { mode: 'runs' });
    assert.match(r.text, /run:ra/);
    assert.doesNotMatch(r.text, /run:rb/);
    r = await tool(s, 'browse', { mode: 'runs', workspace: 'beta' });
    assert.ok(!r.err, r.text);
    assert.match(r.text, /run:rb/);
    assert.doesNotMatch(r.text, /run:ra/);
    r = await tool(s, 'entity', { refs: ['run:rb'] });
    assert.ok(r.err);
    assert.match(r.text, /no run 'rb'/);
    r = await tool(s, 'list_runs', { project: 'pb', workspace: 'beta' });
    assert.ok(!r.err, r.text);
    const ws = JSON.parse((await tool(s, 'list_workspaces', {})).text).workspaces;
    assert.deepEqual(ws.map((w) => [w.workspace, w.role, w.current]).sort(),
      [['alpha', 'editor', true], ['beta', 'viewer', false]]);
    // Not a member, missing, another tenant's: the same refusal.
    const texts = new Set();
    for (const w of ['default', 'nowhere', 'gamma']) {
      r = await tool(s, 'browse', { mode: 'runs', workspace: w });
      assert.ok(r.err, w);
      texts.add(JSON.parse(r.text).message);
    }
    assert.deepEqual([...texts], ['no such workspace, or no access to it']);
    // A changed role shows at the next call; a removed membership refuses it.
    probe(store, ['user', 'set-role', 'ada', '--workspace', 'beta', '--role', 'editor']);
    const ws2 = JSON.parse((await tool(s, 'list_workspaces', {})).text).workspaces;
    assert.equal(ws2.find((w) => w.workspace === 'beta').role, 'editor');
    probe(store, ['user', 'set-role', 'ada', '--workspace', 'beta', '--role', 'none']);
    r = await tool(s, 'browse', { mode: 'runs', workspace: 'beta' });
    assert.ok(r.err);
    assert.doesNotMatch(r.text, /run:rb/);
    // The connection's own workspace still works.
    r = await tool(s, 'browse', { mode: 'runs' });
    assert.match(r.text, /run:ra/);
    // Writes act in the principal's workspace: a write key of alpha
    // cannot delete beta's run (not found), but deletes its own.
    const wkey = probe(store, ['key', 'create', '--workspace', 'alpha', '--scope', 'write']);
    const w = await session(srv.port, wkey);
    r = await tool(w, 'delete_run', { run: 'run:rb' });
    assert.ok(r.err);
    assert.match(r.text, /no run run:rb/);
    r = await tool(w, 'delete_run', { run: 'run:ra' });
    assert.equal(r.text, 'deleted');
    // A key stays in its workspace.
    const k = await session(srv.port, key);
    r = await tool(k, 'browse', { mode: 'runs', workspace: 'beta' });
    assert.ok(r.err);
    assert.match(r.text, /own workspace/);
    r = await tool(k, 'browse', { mode: 'runs', include_deleted: true });
    assert.match(r.text, /run:ra/);
    assert.doesNotMatch(r.text, /run:rb/);
  } finally {
    await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

// The write gate reads the role in the workspace the call acts in, not the
// connection's own: editor in alpha and viewer in beta may not write in
// beta through an alpha connection; made editor there, it may, audited in
// beta; a key never acts elsewhere.
test('write tools: the role checked is the one in the workspace the call acts in', async () => {
  const { dir, store } = twoWorkspaces();
  const srv = await startWriteServer(store, ['ada:alpha:write']);
  try {
    const s = await session(srv.port, `tst_${srv.conns[0]}`);
    const tool = async (sess, args) => {
      const r = await sess.call('tools/call', { name: 'delete_run', arguments: args });
      assert.equal(r.status, 200, r.body);
      return { err: !!r.msg.result.isError, text: r.msg.result.content[0].text };
    };
    let r = await tool(s, { run: 'run:rb', workspace: 'beta' });
    assert.ok(r.err, r.text);
    assert.match(r.text, /may not use write tools in workspace 'beta'/);
    assert.equal(JSON.parse(probe(store, ['audit', '--json', '--action', 'run.delete'])).length, 0);
    // Not a member at all: the scope's one refusal.
    r = await tool(s, { run: 'run:rb', workspace: 'nowhere' });
    assert.ok(r.err);
    assert.match(r.text, /no such workspace, or no access to it/);
    probe(store, ['user', 'set-role', 'ada', '--workspace', 'beta', '--role', 'editor']);
    r = await tool(s, { run: 'run:rb', workspace: 'beta' });
    assert.equal(r.text, 'deleted');
    // A write that fails is audited as failed, with its arguments.
    r = await tool(s, { run: 'run:nope', workspace: 'beta' });
    assert.ok(r.err);
    const audit = JSON.parse(probe(store, ['audit', '--json', '--action', 'run.delete']));
    assert.equal(audit.length, 2);
    const done = audit.find((a) => a.details.status === 'done');
    const failed = audit.find((a) => a.details.status === 'failed');
    assert.equal(done.workspace, 'beta');
    assert.deepEqual(done.details.arguments, { run: 'run:rb', workspace: 'beta' });
    assert.deepEqual(failed.details.arguments, { run: 'run:nope', workspace: 'beta' });
    // A write key of alpha never acts in beta.
    const wkey = probe(store, ['key', 'create', '--workspace', 'alpha', '--scope', 'write']);
    const k = await session(srv.port, wkey);
    r = await tool(k, { run: 'run:rb', workspace: 'beta' });
    assert.ok(r.err);
    assert.match(r.text, /own workspace/);
  } finally {
    await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

// What a --hold server reports (the held tool, asked over session @s):
// state() reads it; until(pred) waits, bounded, for a state.
function holdProbe(s) {
  const state = async () => JSON.parse((await s.call('tools/call', { name: 'held', arguments: {} }))
    .msg.result.content[0].text);
  const until = async (pred) => {
    for (let i = 0; i < 3000; i++) {
      if (pred(await state())) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.fail(`the server never reached the state: ${JSON.stringify(await state())}`);
  };
  return { state, until };
}

// Capacity over HTTP: one engine worker and room for one waiting call
// (PROBE_MCP_QUEUE_MAX=1). The test moves by what the server reports (held:
// how many holds run, how many calls wait), never by how long anything
// takes: one hold runs, one waits, the next is refused at once as a
// retryable "Server busy"; released, both accepted calls complete.
test('capacity: a full worker queue answers a retryable busy error', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmcp-auth-'));
  const store = storeIn(dir);
  probe(store, ['init']);
  const key = probe(store, ['key', 'create']);
  const srv = await startWriteServer(store, [], ['--hold', '--workers', '1'],
    { PROBE_MCP_QUEUE_MAX: '1' });
  try {
    const s = await session(srv.port, key);
    const { state, until } = holdProbe(s);
    const first = s.call('tools/call', { name: 'hold', arguments: {} });
    await until((x) => x.running === 1);
    const second = s.call('tools/call', { name: 'hold', arguments: {} });
    await until((x) => x.waiting === 1);
    const third = await s.call('tools/call', { name: 'hold', arguments: {} });
    assert.ok(third.msg && third.msg.error, third.body);
    assert.match(third.msg.error.message, /Server busy/);
    assert.equal(third.msg.error.data.retryable, true);
    assert.equal((await state()).running, 1);
    await s.call('tools/call', { name: 'release', arguments: {} });
    for (const p of [first, second]) {
      const r = await p;
      assert.equal(r.msg.result.content[0].text, 'released', r.body);
    }
    // Room again: a new call is accepted.
    const again = await s.call('tools/call', { name: 'hold', arguments: {} });
    assert.equal(again.msg.result.content[0].text, 'released', again.body);
  } finally {
    await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

// The engine's workers are shared fairly among principals: with 4 workers
// one key runs at most 2 holds at once (PROBE_MCP_WORKERS_PER_CALLER's
// default, half the pool); its further holds wait in the queue, not
// refused, and another key's hold, queued behind them, starts at once.
// Moved by what the server reports (held), never by timing.
test('fair workers: one key\'s flood leaves workers for another key', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmcp-auth-'));
  const store = storeIn(dir);
  probe(store, ['init']);
  const a = probe(store, ['key', 'create']);
  const b = probe(store, ['key', 'create']);
  const srv = await startWriteServer(store, [], ['--hold', '--workers', '4']);
  try {
    const sb = await session(srv.port, b);
    const { state, until } = holdProbe(sb);
    const sa = [];
    for (let i = 0; i < 3; i++) sa.push(await session(srv.port, a));
    const flood = [];
    for (let i = 0; i < 6; i++) flood.push(sa[i % 3].call('tools/call', { name: 'hold', arguments: {} }));
    await until((x) => x.running === 2 && x.waiting === 4);
    const pb = sb.call('tools/call', { name: 'hold', arguments: {} });
    await until((x) => x.running === 3);
    assert.deepEqual(await state(), { running: 3, waiting: 4 });
    await sb.call('tools/call', { name: 'release', arguments: {} });
    for (const p of [...flood, pb]) {
      const r = await p;
      assert.equal(r.msg.result.content[0].text, 'released', r.body);
    }
  } finally {
    await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

// In-flight requests are bounded per principal over all its sessions:
// one key's held calls cannot take every slot; another key is served.
test('in-flight limit per principal: one key cannot take every slot', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmcp-auth-'));
  const store = storeIn(dir);
  probe(store, ['init']);
  const a = probe(store, ['key', 'create']);
  const b = probe(store, ['key', 'create']);
  const srv = await startWriteServer(store, [], ['--hold', '--workers', '4', '--max-inflight-principal', '2']);
  try {
    const sb = await session(srv.port, b);
    const held = async () => JSON.parse((await sb.call('tools/call', { name: 'held', arguments: {} }))
      .msg.result.content[0].text).running;
    const a1 = await session(srv.port, a);
    const a2 = await session(srv.port, a);
    const a3 = await session(srv.port, a);
    const p1 = a1.call('tools/call', { name: 'hold', arguments: {} });
    const p2 = a2.call('tools/call', { name: 'hold', arguments: {} });
    for (let i = 0; i < 3000 && (await held()) < 2; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await held(), 2);
    const r3 = await a3.call('tools/call', { name: 'hold', arguments: {} });
    assert.equal(r3.status, 429, r3.body);
    assert.match(r3.headers['retry-after'], /^\d+$/);
    assert.match(JSON.parse(r3.body).error.message, /for this principal/);
    // The other key is served meanwhile, even a third hold.
    const pb = sb.call('tools/call', { name: 'hold', arguments: {} });
    for (let i = 0; i < 3000 && (await held()) < 3; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await held(), 3);
    await sb.call('tools/call', { name: 'release', arguments: {} });
    for (const p of [p1, p2, pb]) assert.equal((await p).msg.result.content[0].text, 'released');
    // Slots come back: the first key is served again.
    const again = await a3.call('tools/call', { name: 'held', arguments: {} });
    assert.equal(again.status, 200);
  } finally {
    await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
