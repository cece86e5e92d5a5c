// SPDX-License-Identifier: MIT
// probe-mcp-http's OAuth 2.1 server over plain HTTP: metadata documents,
// registration rules, the code flow, and every refusal the issue lists
// (code replay, reused refresh token, wrong PKCE verifier, foreign redirect
// URI, tokens on other routes, cookie-only /mcp, tampered and truncated
// tokens, CSRF and Origin on the consent form, bearer credentials on the
// consent pages).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import {
  HTTP, Agent, authorizeUrl, connect, consent, form, json, makeStore, mcpInit, pkce, raw,
  register, startServer, hidden,
} from './lib.mjs';

let env, srv, port;

before(async () => {
  env = makeStore();
  srv = await startServer(HTTP, ['--store', env.store]);
  port = srv.port;
});

after(async () => {
  await srv?.stop();
  rmSync(env.dir, { recursive: true, force: true });
});

test('metadata: protected resource (RFC 9728) and authorization server (RFC 8414)', async () => {
  const base = `http://127.0.0.1:${port}`;
  for (const p of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
    const r = await json(port, 'GET', p);
    assert.equal(r.status, 200, p);
    assert.equal(r.json.resource, `${base}/mcp`);
    assert.deepEqual(r.json.authorization_servers, [`${base}/oauth`]);
    assert.equal(r.headers['access-control-allow-origin'], '*');
  }
  for (const p of ['/.well-known/oauth-authorization-server/oauth', '/oauth/.well-known/oauth-authorization-server',
    '/.well-known/openid-configuration/oauth', '/oauth/.well-known/openid-configuration']) {
    const r = await json(port, 'GET', p);
    assert.equal(r.status, 200, p);
    const m = r.json;
    assert.equal(m.issuer, `${base}/oauth`);
    assert.deepEqual(m.code_challenge_methods_supported, ['S256']);
    assert.equal(m.registration_endpoint, `${base}/oauth/register`);
    assert.equal(m.token_endpoint, `${base}/oauth/token`);
    assert.equal(m.authorization_endpoint, `${base}/oauth/authorize`);
    assert.equal(m.revocation_endpoint, `${base}/oauth/revoke`);
    assert.deepEqual(m.token_endpoint_auth_methods_supported, ['none']);
    assert.deepEqual(m.grant_types_supported, ['authorization_code', 'refresh_token']);
  }
  // Forwarded headers from a client that is not a trusted proxy are ignored.
  let r = await json(port, 'GET', '/.well-known/oauth-protected-resource', undefined,
    { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'localhost:8443' });
  assert.equal(r.json.resource, `${base}/mcp`);
  // From a trusted proxy: a forwarded host the server allows is used; one
  // it does not is refused.
  const px = await startServer(HTTP, ['--store', env.store, '--trusted-proxy', '127.0.0.1']);
  try {
    r = await json(px.port, 'GET', '/.well-known/oauth-protected-resource', undefined,
      { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'localhost:8443' });
    assert.equal(r.json.resource, 'https://localhost:8443/mcp');
    r = await json(px.port, 'GET', '/.well-known/oauth-protected-resource', undefined,
      { 'x-forwarded-host': 'evil.example' });
    assert.equal(r.status, 400);
  } finally {
    await px.stop();
  }
  // CORS preflight; wrong method; unknown endpoint.
  r = await raw(port, { method: 'OPTIONS', path: '/oauth/token', headers: { origin: 'https://app.example' } });
  assert.equal(r.status, 204);
  assert.match(r.headers['access-control-allow-methods'], /POST/);
  r = await json(port, 'GET', '/oauth/token');
  assert.equal(r.status, 405);
  r = await json(port, 'GET', '/oauth/nope');
  assert.equal(r.status, 404);
  // The 401 of /mcp points at the metadata.
  r = await mcpInit(port, {});
  assert.equal(r.status, 401);
  assert.match(r.headers['www-authenticate'], /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/);
});

test('PUBLIC_BASE_URL sets the issuer; a bad one is refused at start', async () => {
  const s2 = await startServer(HTTP, ['--store', env.store], { PUBLIC_BASE_URL: 'https://mcp.example.org/', APP_BASE_URL: 'https://app.example.org' });
  try {
    const r = await json(s2.port, 'GET', '/.well-known/oauth-authorization-server/oauth');
    assert.equal(r.json.issuer, 'https://mcp.example.org/oauth');
    const p = await json(s2.port, 'GET', '/.well-known/oauth-protected-resource/mcp');
    assert.equal(p.json.resource, 'https://mcp.example.org/mcp');
    // The consent pages live on APP_BASE_URL.
    const client = await register(s2.port);
    const { challenge } = pkce();
    const a = await raw(s2.port, { method: 'GET', path: authorizeUrl(s2.port, client, challenge, { resource: 'https://mcp.example.org/mcp' }) });
    assert.equal(a.status, 302);
    assert.match(a.headers.location, /^https:\/\/app\.example\.org\/oauth\/consent\?req=/);
  } finally {
    await s2.stop();
  }
  await assert.rejects(startServer(HTTP, ['--store', env.store], { APP_BASE_URL: 'https://app.example/?q' }), /APP_BASE_URL must not have a query/);
  await assert.rejects(startServer(HTTP, ['--store', env.store], { PUBLIC_BASE_URL: 'ftp://x' }), /PUBLIC_BASE_URL|must start with http:\/\/ or https:\/\//);
});

test('registration: public clients only, redirect URI rules', async () => {
  const ok = ['https://app.example.com/cb', 'http://localhost:3000/cb', 'http://127.0.0.1:5555/cb',
    'http://[::1]:8080/cb', 'cursor://anysphere.cursor-retrieval/oauth/callback'];
  for (const u of ok) {
    const r = await json(port, 'POST', '/oauth/register', { redirect_uris: [u] });
    assert.equal(r.status, 201, `${u}: ${r.body}`);
    assert.match(r.json.client_id, /^pbm_client_/);
    assert.equal(r.json.token_endpoint_auth_method, 'none');
  }
  const bad = ['http://example.com/cb', 'javascript:alert(1)', 'https://a.example/cb#x', 'file:///etc/passwd',
    'http://localhost.evil.example/cb', 'https://user@a.example/cb'];
  for (const u of bad) {
    const r = await json(port, 'POST', '/oauth/register', { redirect_uris: [u] });
    assert.equal(r.status, 400, u);
    assert.equal(r.json.error, 'invalid_redirect_uri', u);
  }
  let r = await json(port, 'POST', '/oauth/register', { redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'client_secret_basic' });
  assert.equal(r.status, 400);
  assert.equal(r.json.error, 'invalid_client_metadata');
  assert.match(r.json.error_description, /public clients/);
  r = await json(port, 'POST', '/oauth/register', { redirect_uris: [] });
  assert.equal(r.status, 400);
  // A NUL in any string is refused, never cut.
  for (const body of [{ client_name: 'Trusted\u0000 evil', redirect_uris: ['https://a.example/cb'] },
    { redirect_uris: ['https://a.example/cb\u0000.evil'] }]) {
    r = await json(port, 'POST', '/oauth/register', body);
    assert.equal(r.status, 400);
    assert.match(r.json.error_description, /NUL character/);
  }
  r = await raw(port, { method: 'POST', path: '/oauth/register', headers: { 'content-type': 'application/json' }, body: '{not json' });
  assert.equal(r.status, 400);
});

test('authorize: a client never used to sign in gets an error page, never an automatic redirect', async () => {
  // Open registration: anyone can register https://evil.example and have
  // this server redirect there with text of their choosing (RFC 9700 4.11).
  const r0 = await json(port, 'POST', '/oauth/register', { client_name: 'x', redirect_uris: ['https://evil.example/cb'] });
  const evil = r0.json.client_id;
  for (const extra of [{ response_type: 'x' }, { response_type: 'code' },
    { response_type: 'code', code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }]) {
    const q = new URLSearchParams({ client_id: evil, redirect_uri: 'https://evil.example/cb', state: 'Your account is locked, call 555', ...extra });
    const r = await raw(port, { method: 'GET', path: `/oauth/authorize?${q}` });
    assert.equal(r.status, 400, JSON.stringify(extra));
    assert.equal(r.headers.location, undefined);
    assert.match(r.body, /never been used to sign in here/);
    assert.doesNotMatch(r.body, /call 555/);
  }
});

test('authorize: PKCE S256 is mandatory; unknown client and foreign redirect URIs never redirect', async () => {
  // A client somebody signed in with: its errors go back to it.
  const { client } = await connect(port);
  const { challenge } = pkce();
  const q = (extra) => `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: client, redirect_uri: 'http://127.0.0.1:9/cb', state: 's1', ...extra })}`;
  let r = await raw(port, { method: 'GET', path: q({}) });
  assert.equal(r.status, 302);
  assert.match(r.headers.location, /^http:\/\/127\.0\.0\.1:9\/cb\?error=invalid_request&.*state=s1/);
  r = await raw(port, { method: 'GET', path: q({ code_challenge: challenge, code_challenge_method: 'plain' }) });
  assert.match(r.headers.location, /error=invalid_request&error_description=code_challenge_method%20must%20be%20S256/);
  r = await raw(port, { method: 'GET', path: q({ code_challenge: challenge, code_challenge_method: 'S256', resource: 'https://other.example/mcp' }) });
  assert.match(r.headers.location, /error=invalid_target/);
  r = await raw(port, { method: 'GET', path: q({ code_challenge: challenge, code_challenge_method: 'S256', redirect_uri: 'https://evil.example/cb' }) });
  assert.equal(r.status, 400);
  assert.equal(r.headers.location, undefined);
  assert.match(r.body, /redirect_uri is not one this application registered/);
  r = await raw(port, { method: 'GET', path: q({ client_id: 'pbm_client_nope', code_challenge: challenge, code_challenge_method: 'S256' }) });
  assert.equal(r.status, 400);
  assert.equal(r.headers.location, undefined);
  r = await raw(port, { method: 'GET', path: `${q({ code_challenge: challenge, code_challenge_method: 'S256' })}&state=again` });
  assert.equal(r.status, 400); // a repeated parameter
});

test('code flow, token use on /mcp only, refresh rotation, RFC 7009 revocation', async () => {
  const c = await connect(port, { access: 'read' });
  const t = c.tokens;
  assert.match(t.access_token, /^pbm_at_[A-Za-z0-9_-]{43}$/);
  assert.match(t.refresh_token, /^pbm_rt_[A-Za-z0-9_-]{43}$/);
  assert.equal(t.token_type, 'Bearer');
  assert.equal(t.expires_in, 3600);
  assert.equal(t.scope, 'mcp:read');
  let r = await mcpInit(port, { authorization: `Bearer ${t.access_token}` });
  assert.equal(r.status, 200, r.body);
  // The access token is valid on /mcp only.
  for (const p of ['/oauth/connections', '/oauth/consent?req=x', authorizeUrl(port, c.client, pkce().challenge)]) {
    r = await raw(port, { method: 'GET', path: p, headers: { authorization: `Bearer ${t.access_token}` } });
    assert.equal(r.status, 403, p);
    assert.doesNotMatch(r.body, /Your connections/);
  }
  r = await form(port, '/oauth/connections', { connection: 'x' }, { authorization: `Bearer ${t.access_token}`, origin: `http://127.0.0.1:${port}` });
  assert.equal(r.status, 403);
  r = await raw(port, { method: 'POST', path: '/other', headers: { authorization: `Bearer ${t.access_token}` }, body: '{}' });
  assert.equal(r.status, 404);
  // Refresh rotates: the new pair works, the old refresh token is spent.
  r = await form(port, '/oauth/token', { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: c.client });
  assert.equal(r.status, 200, r.body);
  const t2 = r.json;
  assert.notEqual(t2.refresh_token, t.refresh_token);
  assert.equal((await mcpInit(port, { authorization: `Bearer ${t2.access_token}` })).status, 200);
  // RFC 7009 2.1: a public client authenticates by its client_id; without
  // it, or with another client's, nothing is revoked and it is told so.
  const other = await register(port);
  for (const f of [{}, { client_id: other }, { client_id: 'pbm_client_unknown' }]) {
    r = await form(port, '/oauth/revoke', { token: t2.refresh_token, ...f });
    assert.equal(r.status, 400, JSON.stringify(f));
    assert.equal(r.json.error, 'invalid_client', JSON.stringify(f));
    assert.equal((await mcpInit(port, { authorization: `Bearer ${t2.access_token}` })).status, 200);
  }
  // RFC 7009: revoking the refresh token ends the connection.
  r = await form(port, '/oauth/revoke', { token: t2.refresh_token, client_id: c.client });
  assert.equal(r.status, 200);
  assert.equal((await mcpInit(port, { authorization: `Bearer ${t2.access_token}` })).status, 401);
  // Revoking garbage is not an error (RFC 7009 2.2).
  r = await form(port, '/oauth/revoke', { token: 'pbm_rt_nothing', client_id: c.client });
  assert.equal(r.status, 200);
});

test('refusal: a replayed code revokes the connection it created', async () => {
  const c = await connect(port);
  assert.equal((await mcpInit(port, { authorization: `Bearer ${c.tokens.access_token}` })).status, 200);
  const r = await form(port, '/oauth/token', {
    grant_type: 'authorization_code', code: c.code, redirect_uri: 'http://127.0.0.1:9/cb',
    client_id: c.client, code_verifier: c.verifier,
  });
  assert.equal(r.status, 400);
  assert.equal(r.json.error, 'invalid_grant');
  assert.equal((await mcpInit(port, { authorization: `Bearer ${c.tokens.access_token}` })).status, 401);
  const rr = await form(port, '/oauth/token', { grant_type: 'refresh_token', refresh_token: c.tokens.refresh_token, client_id: c.client });
  assert.equal(rr.json.error, 'invalid_grant');
});

test('refusal: a reused refresh token revokes the connection', async () => {
  const c = await connect(port);
  let r = await form(port, '/oauth/token', { grant_type: 'refresh_token', refresh_token: c.tokens.refresh_token, client_id: c.client });
  const fresh = r.json;
  assert.equal((await mcpInit(port, { authorization: `Bearer ${fresh.access_token}` })).status, 200);
  r = await form(port, '/oauth/token', { grant_type: 'refresh_token', refresh_token: c.tokens.refresh_token, client_id: c.client });
  assert.equal(r.status, 400);
  assert.match(r.json.error_description, /already used/);
  assert.equal((await mcpInit(port, { authorization: `Bearer ${fresh.access_token}` })).status, 401);
  r = await form(port, '/oauth/token', { grant_type: 'refresh_token', refresh_token: fresh.refresh_token, client_id: c.client });
  assert.equal(r.json.error, 'invalid_grant');
});

test('refusal: wrong PKCE verifier, foreign redirect URI, other client', async () => {
  const agent = new Agent(port);
  const client = await register(port);
  for (const [field, value, want] of [
    ['code_verifier', pkce().verifier, /code_verifier does not match/],
    ['redirect_uri', 'https://evil.example/cb', /redirect_uri does not match/],
    ['client_id', 'other', /unknown client_id/],
  ]) {
    const { verifier, challenge } = pkce();
    const loc = await consent(agent, authorizeUrl(port, client, challenge));
    const code = new URL(loc).searchParams.get('code');
    const fields = { grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1:9/cb', client_id: client, code_verifier: verifier };
    fields[field] = value;
    const r = await form(port, '/oauth/token', fields);
    assert.ok(r.status === 400 || r.status === 401, r.body);
    assert.match(r.json.error_description, want);
  }
});

test('refusal: tampered, truncated and foreign tokens', async () => {
  const c = await connect(port);
  const at = c.tokens.access_token;
  const flip = (s, i) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  for (const bad of [flip(at, 12), at.slice(0, -1), `${at}A`, at.replace('pbm_at_', 'pbm_rt_'),
    c.tokens.refresh_token, 'pbm_at_', `${at.slice(0, -1)}B`]) {
    const r = await mcpInit(port, { authorization: `Bearer ${bad}` });
    assert.equal(r.status, 401, bad);
  }
  assert.equal((await mcpInit(port, { authorization: `Bearer ${at}` })).status, 200);
  for (const bad of [flip(c.tokens.refresh_token, 20), c.tokens.refresh_token.slice(0, 30), at]) {
    const r = await form(port, '/oauth/token', { grant_type: 'refresh_token', refresh_token: bad, client_id: c.client });
    assert.equal(r.json.error, 'invalid_grant', bad);
  }
  const r = await form(port, '/oauth/token', { grant_type: 'authorization_code', code: 'pbm_ac_short', client_id: c.client, code_verifier: c.verifier, redirect_uri: 'http://127.0.0.1:9/cb' });
  assert.equal(r.json.error, 'invalid_grant');
  const g = await form(port, '/oauth/token', { grant_type: 'password', client_id: c.client });
  assert.equal(g.json.error, 'unsupported_grant_type');
});

test('refusal: a cookie-only /mcp request; the consent form needs its CSRF token and own Origin', async () => {
  const agent = new Agent(port);
  const client = await register(port);
  const { challenge } = pkce();
  // Sign in, and keep the consent page open.
  let r = await agent.get(authorizeUrl(port, client, challenge));
  const consentPath = new URL(r.headers.location).pathname + new URL(r.headers.location).search;
  r = await agent.get(consentPath);
  const login = await agent.post('/oauth/login', { username: 'ada', password: 'ada-password-1', req: hidden(r.body, 'req'), csrf: hidden(r.body, 'csrf') });
  assert.equal(login.status, 303);
  assert.match(login.headers['set-cookie'].join('\n'), /pbm_session=pbm_ss_[^;]+; Path=\/oauth; Max-Age=\d+; HttpOnly; SameSite=Lax/);
  r = await agent.get(consentPath);
  assert.match(r.body, /Ada &lt;Lovelace&gt;|ada/); // escaped
  assert.doesNotMatch(r.body, /<Lovelace>/);
  const req = hidden(r.body, 'req'), csrf = hidden(r.body, 'csrf');
  const ws = r.body.match(/<option value="([^"]*)"/)[1];
  // The session cookie does not open /mcp.
  r = await mcpInit(port, { cookie: agent.cookieHeader() });
  assert.equal(r.status, 401);
  // No CSRF token, a wrong one, a foreign Origin, no Origin: all refused.
  const fields = { req, decision: 'approve', workspace: ws, access: 'write' };
  r = await agent.post('/oauth/consent', fields);
  assert.equal(r.status, 403);
  r = await agent.post('/oauth/consent', { ...fields, csrf: '0'.repeat(64) });
  assert.equal(r.status, 403);
  r = await agent.post('/oauth/consent', { ...fields, csrf }, { origin: 'https://evil.example' });
  assert.equal(r.status, 403);
  r = await raw(port, { method: 'POST', path: '/oauth/consent', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: agent.cookieHeader() }, body: new URLSearchParams({ ...fields, csrf }).toString() });
  assert.equal(r.status, 403);
  // A workspace the person does not belong to.
  r = await agent.post('/oauth/consent', { ...fields, csrf, workspace: ws.replace(/:.*/, ':elsewhere') });
  assert.equal(r.status, 400);
  // The real thing still works.
  r = await agent.post('/oauth/consent', { ...fields, csrf });
  assert.equal(r.status, 303);
  assert.match(r.headers.location, /^http:\/\/127\.0\.0\.1:9\/cb\?code=pbm_ac_.*&state=st&iss=/);
  // Wrong password: no session.
  const other = new Agent(port);
  r = await other.get('/oauth/login');
  r = await other.post('/oauth/login', { username: 'ada', password: 'nope', csrf: hidden(r.body, 'csrf') });
  assert.equal(r.status, 401);
  assert.match(r.body, /Wrong user name or password/);
});

test('deny sends access_denied; a person without a workspace cannot approve', async () => {
  const client = await register(port);
  const { challenge } = pkce();
  const loc = await consent(new Agent(port), authorizeUrl(port, client, challenge, { state: 'xyz' }), { decision: 'deny' });
  const u = new URL(loc);
  assert.equal(u.searchParams.get('error'), 'access_denied');
  assert.equal(u.searchParams.get('state'), 'xyz');
  assert.equal(u.searchParams.get('iss'), `http://127.0.0.1:${port}/oauth`);
  await assert.rejects(consent(new Agent(port), authorizeUrl(port, client, pkce().challenge), { user: 'carol', password: 'carol-password-1' }), /decision: 400/);
});

// Unauthenticated steps are bounded per client address: registrations and
// stored authorization requests per minute, failed sign-ins per user name
// and per address (a lockout that refuses even the right password),
// each refusal audited. A fresh server: its limits are its own.
test('limits: registration and authorization per address; sign-in lockout, audited', async () => {
  const s2 = await startServer(HTTP, ['--store', env.store]);
  try {
    const p2 = s2.port;
    let r;
    let n = 0;
    for (; n < 200; n++) {
      r = await json(p2, 'POST', '/oauth/register', { client_name: `c${n}`, redirect_uris: ['http://127.0.0.1:9/cb'] });
      if (r.status !== 201) break;
    }
    assert.equal(n, 60, 'sixty registrations a minute from one address');
    assert.equal(r.status, 429);
    assert.match(r.json.error_description, /at most 60 a minute/);
    assert.match(r.headers['retry-after'], /^\d+$/);
    // Authorization requests: counted when stored; refused past the limit.
    const client = await register(port); // on the other server: registered in the shared store
    const { challenge } = pkce();
    for (n = 0; n < 300; n++) {
      r = await raw(p2, { method: 'GET', path: authorizeUrl(p2, client, challenge) });
      if (r.status !== 302) break;
    }
    assert.equal(n, 120);
    assert.equal(r.status, 429);
    // Sign-in: five wrong passwords for ada lock her out, right password too.
    const agent = new Agent(p2);
    const page = async () => {
      const x = await agent.get('/oauth/login');
      return { csrf: hidden(x.body, 'csrf') };
    };
    for (let i = 0; i < 5; i++) {
      const { csrf } = await page();
      r = await agent.post('/oauth/login', { username: 'ada', password: `wrong-${i}`, req: '', csrf });
      assert.equal(r.status, 401, r.body);
    }
    let { csrf } = await page();
    r = await agent.post('/oauth/login', { username: 'ada', password: 'ada-password-1', req: '', csrf });
    assert.equal(r.status, 429);
    assert.match(r.body, /Too many failed sign-ins/);
    // Another user from the same address is not locked (yet).
    ({ csrf } = await page());
    r = await agent.post('/oauth/login', { username: 'bob', password: 'bob-password-1', req: '', csrf });
    assert.equal(r.status, 303);
    const audit = JSON.parse(env.probe(['audit', '--json']).toString());
    // (Earlier tests of the shared store may have failed some too.)
    assert.ok(audit.filter((a) => a.action === 'auth.login_failed' && a.actor === 'user:ada').length >= 5);
    assert.ok(audit.some((a) => a.action === 'auth.login_locked' && a.details.address === '127.0.0.1'));
  } finally {
    await s2.stop();
  }
});

// A consent-page sign-in ends when the person's password changes or they
// are disabled (enabling them again does not bring it back); a refresh
// refused while disabled leaves the token usable once enabled, not a
// "replay" that revokes the connection.
test('sessions end on a password change or when disabled; a refresh while disabled is no replay', async () => {
  const c = await connect(port, { user: 'bob', password: 'bob-password-1' });
  const signedIn = async (agent) => /Your connections/.test((await agent.get('/oauth/connections')).body);
  assert.ok(await signedIn(c.agent));
  env.probe(['user', 'passwd', 'bob'], 'bob-password-1\n');
  assert.ok(!(await signedIn(c.agent)), 'password change ends the sign-in');
  const again = await connect(port, { user: 'bob', password: 'bob-password-1' });
  assert.ok(await signedIn(again.agent));
  env.probe(['user', 'disable', 'bob']);
  const t = await form(port, '/oauth/token', { grant_type: 'refresh_token', refresh_token: again.tokens.refresh_token, client_id: again.client });
  assert.equal(t.status, 400);
  assert.match(t.json.error_description, /disabled/);
  env.probe(['user', 'enable', 'bob']);
  assert.ok(!(await signedIn(again.agent)), 'disabling ends the sign-in for good');
  const t2 = await form(port, '/oauth/token', { grant_type: 'refresh_token', refresh_token: again.tokens.refresh_token, client_id: again.client });
  assert.equal(t2.status, 200, t2.body);
  assert.equal((await mcpInit(port, { authorization: `Bearer ${t2.json.access_token}` })).status, 200);
});

// The audit log names the client (its id is no secret) and `probe audit
// --json` stays valid JSON whatever the client calls itself; a name that
// is not UTF-8 is refused at registration.
test('audit: client_id shown, JSON valid whatever the client name', async () => {
  const weird = 'Ev"il\\ \n\t\u0001\u001f\u007f</script> \u2028 \u{1F600} {"x":1} \\u0000';
  let r = await json(port, 'POST', '/oauth/register', { client_name: weird, redirect_uris: ['http://127.0.0.1:9/cb'] });
  assert.equal(r.status, 201, r.body);
  const client = r.json.client_id;
  const loc = await consent(new Agent(port), authorizeUrl(port, client, pkce().challenge));
  assert.match(loc, /code=/);
  const audit = JSON.parse(env.probe(['audit', '--json', '--action', 'mcp_connection.authorize']).toString());
  const mine = audit.find((a) => a.details.client_id === client);
  assert.ok(mine, 'the client_id is readable in the log');
  assert.equal(mine.details.client_name, weird);
  const bad = Buffer.concat([Buffer.from('{"client_name":"x'), Buffer.from([0xff, 0xfe]),
    Buffer.from('","redirect_uris":["http://127.0.0.1:9/cb"]}')]);
  r = await raw(port, { method: 'POST', path: '/oauth/register', headers: { 'content-type': 'application/json' }, body: bad });
  assert.equal(r.status, 400);
  assert.match(r.body, /not valid UTF-8/);
});
