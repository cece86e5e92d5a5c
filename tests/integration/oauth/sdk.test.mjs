// SPDX-License-Identifier: MIT
// The TypeScript SDK client completes the whole OAuth flow against
// probe-mcp-http with its own auth provider (discovery from the 401,
// metadata, dynamic registration, PKCE, code exchange, refresh), the
// person's consent being given over HTTP like a browser would, and then
// calls a tool.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Agent, HTTP, consent, form, makeStore, startServer } from './lib.mjs';

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

// An in-memory OAuthClientProvider; "redirecting" records the URL, which
// the test then opens with a cookie-keeping HTTP agent.
class Provider {
  constructor() {
    this.info = undefined;
    this.tok = undefined;
    this.verifier = undefined;
    this.authUrl = undefined;
    this.registrations = 0;
  }
  get redirectUrl() { return 'http://127.0.0.1:9/sdk-callback'; }
  get clientMetadata() {
    return {
      client_name: 'sdk test client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() { return 'sdk-state'; }
  clientInformation() { return this.info; }
  saveClientInformation(i) { this.info = i; this.registrations++; }
  tokens() { return this.tok; }
  saveTokens(t) { this.tok = t; }
  redirectToAuthorization(u) { this.authUrl = u; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
}

test('the SDK client signs in through OAuth and calls a tool', async () => {
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  const provider = new Provider();
  const first = new Client({ name: 'oauth-sdk-test', version: '1.0.0' });
  const t1 = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await assert.rejects(first.connect(t1), UnauthorizedError);
  // The SDK registered itself and asked for a browser at our authorize URL.
  assert.equal(provider.registrations, 1);
  assert.match(provider.info.client_id, /^pbm_client_/);
  const au = provider.authUrl;
  assert.equal(`${au.origin}${au.pathname}`, `http://127.0.0.1:${port}/oauth/authorize`);
  assert.equal(au.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(au.searchParams.get('resource'), url.href);
  // The person consents (read-only).
  const loc = new URL(await consent(new Agent(port), au.href, { access: 'read' }));
  assert.equal(loc.searchParams.get('state'), 'sdk-state');
  await t1.finishAuth(loc.searchParams.get('code'));
  assert.match(provider.tok.access_token, /^pbm_at_/);
  assert.equal(provider.tok.scope, 'mcp:read');
  // Connected: list and call a tool.
  const client = new Client({ name: 'oauth-sdk-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  const tools = (await client.listTools()).tools.map((x) => x.name);
  assert.ok(tools.includes('browse'), tools.join(','));
  const r = await client.callTool({ name: 'browse', arguments: { mode: 'runs', token_budget: 512 } });
  assert.notEqual(r.isError, true, JSON.stringify(r));
  const body = JSON.parse(r.content[0].text);
  assert.equal(typeof body.total, 'number');
  await client.close();
  // An expired or revoked access token: the SDK refreshes by itself (the
  // refresh token rotates) and carries on.
  const old = provider.tok;
  const rv = await form(port, '/oauth/revoke', { token: old.access_token, client_id: provider.info.client_id });
  assert.equal(rv.status, 200);
  const again = new Client({ name: 'oauth-sdk-test', version: '1.0.0' });
  await again.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  assert.notEqual(provider.tok.refresh_token, old.refresh_token);
  const r2 = await again.callTool({ name: 'browse', arguments: { mode: 'runs', token_budget: 512 } });
  assert.notEqual(r2.isError, true);
  await again.close();
  // The rotated-away refresh token is now poison: presenting it revokes.
  const reuse = await form(port, '/oauth/token', { grant_type: 'refresh_token', refresh_token: old.refresh_token, client_id: provider.info.client_id });
  assert.equal(reuse.json.error, 'invalid_grant');
  const dead = new Client({ name: 'oauth-sdk-test', version: '1.0.0' });
  const p2 = new Provider();
  p2.info = provider.info;
  p2.tok = { ...provider.tok, refresh_token: undefined };
  await assert.rejects(dead.connect(new StreamableHTTPClientTransport(url, { authProvider: p2 })), UnauthorizedError);
});
