// SPDX-License-Identifier: MIT
// Client ID metadata documents: a client_id that is an https URL of a JSON
// document naming the client and its redirect URIs. A local https server
// (a self-signed certificate made here with openssl) serves the documents;
// probe-mcp-http trusts it through the test-only PROBE_TEST_CIMD_CA_FILE
// and may fetch from loopback only with PROBE_TEST_CIMD_ALLOW_LOOPBACK=1.
// Checked: the whole flow (consent page naming the client and its host,
// code, tokens, /mcp, revocation by the URL client_id), the cache, and
// every refusal (http URL, redirect, oversize, timeout, mismatched
// client_id, refused redirect URI, loopback and private addresses).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  Agent, HTTP, consent, form, json, makeStore, mcpInit, pkce, startServer,
} from './lib.mjs';

const CB = 'http://127.0.0.1:9/cb';
let env, srv, strict, tls, base;
const hits = new Map();
const docs = new Map();    // path -> (url) => {status, headers, body, delay}

function doc(p, body, headers = {}) {
  docs.set(p, (url) => ({ status: 200, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body(url)) }));
}

before(async () => {
  env = makeStore();
  const key = path.join(env.dir, 'key.pem'), cert = path.join(env.dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert,
    '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  tls = https.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    hits.set(req.url, (hits.get(req.url) ?? 0) + 1);
    const h = docs.get(req.url);
    if (!h) { res.writeHead(404); res.end(); return; }
    const r = h(`${base}${req.url}`);
    const send = () => { res.writeHead(r.status, r.headers); res.end(r.body); };
    if (r.delay) setTimeout(send, r.delay).unref(); else send();
  });
  await new Promise((r) => tls.listen(0, '127.0.0.1', r));
  base = `https://127.0.0.1:${tls.address().port}`;
  doc('/good.json', (url) => ({ client_id: url, client_name: 'Metadata <App>', redirect_uris: [CB] }),
    { 'cache-control': 'public, max-age=300' });
  doc('/sdk.json', (url) => ({ client_id: url, client_name: 'SDK by URL', redirect_uris: ['http://127.0.0.1:9/sdk-callback'],
    grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }),
  { 'cache-control': 'max-age=60' });
  doc('/nocache.json', (url) => ({ client_id: url, client_name: 'Uncached', redirect_uris: [CB] }),
    { 'cache-control': 'no-store' });
  doc('/mismatch.json', () => ({ client_id: `${base}/other.json`, redirect_uris: [CB] }));
  doc('/badredirect.json', (url) => ({ client_id: url, redirect_uris: ['smb://evil.example/share'] }));
  doc('/secret.json', (url) => ({ client_id: url, redirect_uris: [CB], client_secret: 'x', token_endpoint_auth_method: 'client_secret_basic' }));
  docs.set('/big.json', (url) => ({ status: 200, headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: url, redirect_uris: [CB], pad: 'x'.repeat(100 * 1024) }) }));
  docs.set('/redirect.json', () => ({ status: 302, headers: { location: '/good.json' }, body: '' }));
  docs.set('/slow.json', (url) => ({ status: 200, delay: 8000, headers: {}, body: JSON.stringify({ client_id: url, redirect_uris: [CB] }) }));
  const testEnv = { PROBE_TEST_CIMD_CA_FILE: cert };
  srv = await startServer(HTTP, ['--store', env.store], { ...testEnv, PROBE_TEST_CIMD_ALLOW_LOOPBACK: '1' });
  // The default: loopback is refused, whatever the CA.
  strict = await startServer(HTTP, ['--store', env.store], testEnv);
});

after(async () => {
  await srv?.stop();
  await strict?.stop();
  await new Promise((r) => (tls ? tls.close(r) : r()));
  tls?.closeAllConnections?.();
  rmSync(env.dir, { recursive: true, force: true });
});

function authorize(port, clientId, challenge) {
  const q = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: CB, code_challenge: challenge,
    code_challenge_method: 'S256', state: 'st', resource: `http://127.0.0.1:${port}/mcp`,
  });
  return `/oauth/authorize?${q}`;
}

test('metadata advertises client ID metadata documents next to registration', async () => {
  const r = await json(srv.port, 'GET', '/.well-known/oauth-authorization-server/oauth');
  assert.equal(r.status, 200);
  assert.equal(r.json.client_id_metadata_document_supported, true);
  assert.ok(r.json.registration_endpoint);
});

test('a metadata-document client signs in end to end; its document is cached', async () => {
  const client = `${base}/good.json`;
  const agent = new Agent(srv.port);
  const { verifier, challenge } = pkce();
  // The consent page names the client (escaped) and the host it lives on.
  let r = await agent.get(authorize(srv.port, client, challenge));
  assert.equal(r.status, 302, r.body);
  const consentPath = new URL(r.headers.location).pathname + new URL(r.headers.location).search;
  const before = hits.get('/good.json');
  const loc = await consent(agent, authorize(srv.port, client, challenge));
  assert.equal(hits.get('/good.json'), before, 'served from the cache (max-age=300)');
  r = await agent.get(consentPath);
  assert.match(r.body, /Metadata &lt;App&gt;/);
  assert.match(r.body, new RegExp(`id="client-host">127\\.0\\.0\\.1:${tls.address().port}<`));
  assert.doesNotMatch(r.body, /Metadata <App>/);
  const code = new URL(loc).searchParams.get('code');
  assert.ok(code, loc);
  const t = await form(srv.port, '/oauth/token', {
    grant_type: 'authorization_code', code, redirect_uri: CB, client_id: client,
    code_verifier: verifier, resource: `http://127.0.0.1:${srv.port}/mcp`,
  });
  assert.equal(t.status, 200, t.body);
  r = await mcpInit(srv.port, { authorization: `Bearer ${t.json.access_token}` });
  assert.equal(r.status, 200, r.body);
  // The connections page names it too.
  r = await agent.get('/oauth/connections');
  assert.match(r.body, /Metadata &lt;App&gt;/);
  // RFC 7009 by its URL client_id; another client_id is refused.
  r = await form(srv.port, '/oauth/revoke', { token: t.json.refresh_token, client_id: `${base}/nocache.json` });
  assert.equal(r.status, 400);
  assert.equal(r.json.error, 'invalid_client');
  r = await form(srv.port, '/oauth/revoke', { token: t.json.refresh_token, client_id: client });
  assert.equal(r.status, 200, r.body);
  r = await mcpInit(srv.port, { authorization: `Bearer ${t.json.access_token}` });
  assert.equal(r.status, 401);
});

test('no-store documents are fetched again', async () => {
  const { challenge } = pkce();
  for (let i = 0; i < 2; i++) {
    const r = await raw302(srv.port, authorize(srv.port, `${base}/nocache.json`, challenge));
    assert.equal(r.status, 302, r.body);
  }
  assert.equal(hits.get('/nocache.json'), 2);
});

async function raw302(port, p) {
  return new Agent(port).get(p);
}

async function refused(port, client, pattern, status = 400) {
  const { challenge } = pkce();
  const r = await new Agent(port).get(authorize(port, client, challenge));
  assert.equal(r.status, status, `${client}: ${r.status} ${r.body}`);
  assert.equal(r.headers.location, undefined, 'never redirected');
  assert.match(r.body, pattern, client);
}

test('refusals: http, redirect, oversize, mismatched client_id, bad redirect URI, secrets', async () => {
  await refused(srv.port, `http://127.0.0.1:${tls.address().port}/good.json`, /must use https/);
  await refused(srv.port, `${base}/redirect.json`, /redirect \(HTTP 302\), which is not followed/);
  await refused(srv.port, `${base}/big.json`, /larger than 64 KiB/);
  await refused(srv.port, `${base}/mismatch.json`, /names another client_id than its own URL/);
  await refused(srv.port, `${base}/badredirect.json`, /refused redirect URI: redirect_uri must use https/);
  await refused(srv.port, `${base}/secret.json`, /must not hold a client_secret/);
  await refused(srv.port, `${base}/missing.json`, /answered HTTP 404/);
  await refused(srv.port, `${base}/`, /must have a path/);
  await refused(srv.port, `${base}/a/../good.json`, /\. or \.\. path segments/);
  await refused(srv.port, `https://user@127.0.0.1:${tls.address().port}/good.json`, /user/);
});

test('refusals: loopback by default, private and link-local always', async () => {
  await refused(strict.port, `${base}/good.json`, /loopback, private or link-local address/);
  await refused(strict.port, 'https://[::1]/client.json', /loopback, private or link-local address/);
  await refused(strict.port, 'https://[::ffff:127.0.0.1]/client.json', /loopback, private or link-local address/);
  // (The loopback switch opens 127.0.0.0/8 and ::1 only.)
  for (const host of ['10.1.2.3', '192.168.0.1', '169.254.169.254', '100.64.0.1', '[fd00::1]', '[fe80::1]', '[::ffff:10.0.0.1]']) {
    await refused(srv.port, `https://${host}/client.json`, /loopback, private or link-local address/);
  }
  // localhost resolves to loopback: refused by the default server too.
  await refused(strict.port, `https://localhost:${tls.address().port}/good.json`, /loopback, private or link-local address/);
});

test('refusal: a document that does not arrive within 5 s', async () => {
  const t0 = Date.now();
  await refused(srv.port, `${base}/slow.json`, /did not arrive within 5 s/);
  assert.ok(Date.now() - t0 < 7500, 'the limit is the server\'s, not the document\'s');
});

// The TypeScript SDK's own flow with a URL client_id: it sees
// client_id_metadata_document_supported and uses its clientMetadataUrl
// instead of registering.
test('the SDK client signs in with a client ID metadata document', async () => {
  const url = new URL(`http://127.0.0.1:${srv.port}/mcp`);
  const provider = {
    info: undefined, tok: undefined, verifier: undefined, authUrl: undefined, registrations: 0,
    clientMetadataUrl: `${base}/sdk.json`,
    get redirectUrl() { return 'http://127.0.0.1:9/sdk-callback'; },
    get clientMetadata() {
      return { client_name: 'SDK by URL', redirect_uris: [this.redirectUrl], token_endpoint_auth_method: 'none' };
    },
    state() { return 'sdk-state'; },
    clientInformation() { return this.info; },
    saveClientInformation(i) { this.info = i; this.registrations++; },
    tokens() { return this.tok; },
    saveTokens(t) { this.tok = t; },
    redirectToAuthorization(u) { this.authUrl = u; },
    saveCodeVerifier(v) { this.verifier = v; },
    codeVerifier() { return this.verifier; },
  };
  const first = new Client({ name: 'cimd-sdk-test', version: '1.0.0' });
  await assert.rejects(first.connect(new StreamableHTTPClientTransport(url, { authProvider: provider })), UnauthorizedError);
  assert.equal(provider.authUrl.searchParams.get('client_id'), `${base}/sdk.json`);
  const t1 = new StreamableHTTPClientTransport(url, { authProvider: provider });
  const loc = new URL(await consent(new Agent(srv.port), provider.authUrl.href, { access: 'read' }));
  assert.equal(loc.searchParams.get('state'), 'sdk-state');
  await t1.finishAuth(loc.searchParams.get('code'));
  assert.match(provider.tok.access_token, /^pbm_at_/);
  const client = new Client({ name: 'cimd-sdk-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  const tools = (await client.listTools()).tools.map((x) => x.name);
  assert.ok(tools.includes('browse'), tools.join(','));
  await client.close();
});
