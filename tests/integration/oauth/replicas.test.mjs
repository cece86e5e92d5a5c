// SPDX-License-Identifier: MIT
// Issue 9: two probe-mcp-http replicas on one PostgreSQL database serve
// one OAuth flow between them, each step on whichever replica: register on
// A, authorize on B, sign in on A, consent on B, code exchange on A, /mcp
// on B, refresh on A; then a reused refresh token presented to B revokes
// the connection for A too; the audit log read back through the CLI holds
// what the replicas recorded. Needs the private cluster of tests/pg
// (PROBE_TEST_PG_URL / PROBE_TEST_PG_SERVICE_URL; run.sh skips without).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, HTTP, PROBE, authorizeUrl, form, hidden, mcpInit, pkce, register, startServer } from './lib.mjs';

const OWNER = process.env.PROBE_TEST_PG_URL;
const SERVICE = process.env.PROBE_TEST_PG_SERVICE_URL;
const schema = `oauth_${randomBytes(4).toString('hex')}`;
const withSchema = (u) => `${u}${u.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`;
const psql = (sql) => execFileSync('psql', [OWNER, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', `SET client_min_messages=warning; ${sql}`]);
let A, B;

before(async () => {
  psql(`CREATE SCHEMA ${schema}`);
  const store = withSchema(OWNER);
  const probe = (args, input) => execFileSync(PROBE, ['--store', store, ...args], { input, stdio: ['pipe', 'pipe', 'pipe'] });
  probe(['init']);
  probe(['user', 'create', 'ada'], 'ada-password-1\n');
  probe(['user', 'set-role', 'ada', '--workspace', 'default', '--role', 'editor']);
  A = await startServer(HTTP, ['--store', withSchema(SERVICE)]);
  // B is reached under A's Host (one name in front of both): allowed by
  // configuration, as behind a load balancer.
  B = await startServer(HTTP, ['--store', withSchema(SERVICE), '--allow-host', `127.0.0.1:${A.port}`]);
});

after(async () => {
  await A?.stop();
  await B?.stop();
  psql(`DROP SCHEMA ${schema} CASCADE`);
});

test('one OAuth flow across two replicas; reuse detected across them', async () => {
  // Both replicas advertise the same issuer when told their public URL;
  // here each derives it from Host, so the flow uses A's URLs throughout
  // (a load balancer would forward one Host) and only the serving process
  // alternates: requests to B carry A's Host.
  const hostA = `127.0.0.1:${A.port}`;
  const viaB = { host: hostA };
  const client = await register(A.port);
  const { verifier, challenge } = pkce();
  const a = new Agent(A.port), b = new Agent(B.port);
  b.origin = a.origin;
  b.cookies = a.cookies;               // one browser, two replicas
  let r = await b.get(authorizeUrl(A.port, client, challenge), viaB);
  assert.equal(r.status, 302, r.body);
  const consentPath = new URL(r.headers.location).pathname + new URL(r.headers.location).search;
  r = await a.get(consentPath);
  const login = await a.post('/oauth/login', { username: 'ada', password: 'ada-password-1', req: hidden(r.body, 'req'), csrf: hidden(r.body, 'csrf') });
  assert.equal(login.status, 303, login.body);
  r = await b.get(consentPath, viaB);
  assert.match(r.body, /Connect an application/);
  const ws = r.body.match(/<option value="([^"]*)"/)[1];
  r = await b.post('/oauth/consent', { req: hidden(r.body, 'req'), csrf: hidden(r.body, 'csrf'), decision: 'approve', workspace: ws, access: 'read' }, viaB);
  assert.equal(r.status, 303, r.body);
  const code = new URL(r.headers.location).searchParams.get('code');
  const t = await form(A.port, '/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1:9/cb', client_id: client, code_verifier: verifier });
  assert.equal(t.status, 200, t.body);
  assert.equal((await mcpInit(B.port, { authorization: `Bearer ${t.json.access_token}` })).status, 200);
  const t2 = await form(A.port, '/oauth/token', { grant_type: 'refresh_token', refresh_token: t.json.refresh_token, client_id: client });
  assert.equal(t2.status, 200, t2.body);
  assert.equal((await mcpInit(B.port, { authorization: `Bearer ${t2.json.access_token}` })).status, 200);
  // The rotated token comes back on B: the connection dies on A as well.
  const reuse = await form(B.port, '/oauth/token', { grant_type: 'refresh_token', refresh_token: t.json.refresh_token, client_id: client });
  assert.equal(reuse.json.error, 'invalid_grant');
  assert.equal((await mcpInit(A.port, { authorization: `Bearer ${t2.json.access_token}` })).status, 401);
  // The code, replayed on B, is refused too.
  const replay = await form(B.port, '/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1:9/cb', client_id: client, code_verifier: verifier });
  assert.equal(replay.json.error, 'invalid_grant');
  // The audit log is the database's: what replica B recorded (the consent
  // and the revocation on reuse) is read back through the CLI, once each.
  const audit = JSON.parse(execFileSync(PROBE, ['--store', withSchema(OWNER), 'audit', '--json']).toString());
  const of = (action) => audit.filter((e) => e.action === action);
  assert.equal(of('mcp_connection.authorize').length, 1, JSON.stringify(audit));
  const revoked = of('mcp_connection.revoke');
  assert.equal(revoked.length, 1, JSON.stringify(audit));
  assert.match(JSON.stringify(revoked[0]), /reuse/);
});
