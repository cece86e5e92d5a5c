// SPDX-License-Identifier: MIT
// The consent pages end to end in headless Chromium (Debian's
// /usr/bin/chromium driven by playwright-core): sign in, pick a workspace
// and an access level, approve; the connections page lists and
// disconnects; deny; a page of another origin cannot approve. Screenshots
// of every page go to $OAUTH_SCREENSHOTS (the build folder).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { HTTP, authorizeUrl, form, makeStore, mcpInit, pkce, register, startServer } from './lib.mjs';

const SHOTS = process.env.OAUTH_SCREENSHOTS || path.join(process.cwd(), 'oauth-screenshots');
let env, srv, port, base, browser, cb, cbPort, hits;

// The client's redirect target, and a page of another origin for the
// cross-site attempt.
function callbackServer() {
  hits = [];
  return new Promise((resolve) => {
    const s = http.createServer((req, res) => {
      hits.push(req.url);
      if (req.url.startsWith('/evil')) {
        const q = new URL(req.url, 'http://x').searchParams;
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<form id="f" method="post" action="${base}/oauth/consent">
          <input name="req" value="${q.get('req')}"><input name="decision" value="approve">
          <input name="workspace" value="${q.get('ws')}"><input name="access" value="write">
          <input name="csrf" value="${q.get('csrf')}"></form><script>document.getElementById('f').submit()</script>`);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<h1>back in the application</h1>');
    });
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

async function shot(page, name) {
  const file = path.join(SHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  assert.ok(statSync(file).size > 1000, `${file} is a real image`);
}

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  env = makeStore();
  srv = await startServer(HTTP, ['--store', env.store]);
  port = srv.port;
  base = `http://127.0.0.1:${port}`;
  cb = await callbackServer();
  cbPort = cb.address().port;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
});

after(async () => {
  await browser?.close();
  cb?.close();
  await srv?.stop();
  rmSync(env.dir, { recursive: true, force: true });
});

test('sign in, approve read & write, use the token, disconnect on the connections page', async () => {
  const redirect = `http://127.0.0.1:${cbPort}/cb`;
  const client = await register(port, redirect);
  const { verifier, challenge } = pkce();
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(base + authorizeUrl(port, client, challenge, { redirect, state: 'browser-state' }));
  assert.match(page.url(), /\/oauth\/consent\?req=/);
  assert.equal(await page.locator('h1').textContent(), 'Sign in to probe-mcp');
  assert.equal(await page.locator('script').count(), 0);
  await shot(page, '1-sign-in');
  // A wrong password first.
  await page.fill('#username', 'ada');
  await page.fill('#password', 'wrong');
  await page.click('button[type=submit]');
  assert.match(await page.locator('.error').textContent(), /Wrong user name or password/);
  await shot(page, '2-wrong-password');
  await page.fill('#username', 'ada');
  await page.fill('#password', 'ada-password-1');
  await page.click('button[type=submit]');
  await page.waitForURL(/\/oauth\/consent\?req=/);
  assert.equal(await page.locator('h1').textContent(), 'Connect an application');
  assert.equal(await page.locator('#client-name').textContent(), 'test client');
  assert.match(await page.locator('main').textContent(), /Ada <Lovelace>/); // escaped, shown as text
  const cookies = await ctx.cookies();
  const session = cookies.find((c) => c.name === 'pbm_session');
  assert.ok(session && session.httpOnly && session.sameSite === 'Lax' && !session.secure, JSON.stringify(cookies));
  assert.equal(session.path, '/oauth');
  await page.check('input[name=access][value=write]');
  await shot(page, '3-consent');
  await page.click('button[value=approve]');
  await page.waitForURL(new RegExp(`^http://127\\.0\\.0\\.1:${cbPort}/cb\\?`));
  await shot(page, '4-back-in-the-application');
  const u = new URL(page.url());
  assert.equal(u.searchParams.get('state'), 'browser-state');
  assert.equal(u.searchParams.get('iss'), `${base}/oauth`);
  const t = await form(port, '/oauth/token', {
    grant_type: 'authorization_code', code: u.searchParams.get('code'), redirect_uri: redirect,
    client_id: client, code_verifier: verifier, resource: `${base}/mcp`,
  });
  assert.equal(t.status, 200, t.body);
  assert.equal(t.json.scope, 'mcp:read mcp:write');
  assert.equal((await mcpInit(port, { authorization: `Bearer ${t.json.access_token}` })).status, 200);
  // The connections page lists it; Disconnect ends it.
  await page.goto(`${base}/oauth/connections`);
  const rows = page.locator('#connections tr[data-connection]');
  assert.equal(await rows.count(), 1);
  assert.match(await rows.first().textContent(), /test client.*default \/ default.*read & write/);
  await shot(page, '5-connections');
  await rows.first().locator('button').click();
  await page.waitForSelector('#no-connections');
  await shot(page, '6-disconnected');
  assert.equal((await mcpInit(port, { authorization: `Bearer ${t.json.access_token}` })).status, 401);
  const r = await form(port, '/oauth/token', { grant_type: 'refresh_token', refresh_token: t.json.refresh_token, client_id: client });
  assert.equal(r.json.error, 'invalid_grant');
  // Audit: authorize and revoke, with the person as the actor.
  const audit = env.probe(['audit', '--json']).toString();
  assert.match(audit, /mcp_connection\.authorize/);
  assert.match(audit, /mcp_connection\.revoke/);
  assert.match(audit, /user:ada/);
  assert.doesNotMatch(audit, /pbm_(at|rt|ac)_[A-Za-z0-9_-]{43}/);
  await ctx.close();
});

test('deny sends the browser back with access_denied; another origin cannot approve', async () => {
  const redirect = `http://127.0.0.1:${cbPort}/cb`;
  const client = await register(port, redirect);
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(base + authorizeUrl(port, client, pkce().challenge, { redirect, state: 'd1' }));
  await page.fill('#username', 'bob');
  await page.fill('#password', 'bob-password-1');
  await page.click('button[type=submit]');
  await page.waitForURL(/\/oauth\/consent\?req=/);
  await page.click('button[value=deny]');
  await page.waitForURL(new RegExp(`^http://127\\.0\\.0\\.1:${cbPort}/cb\\?`));
  const u = new URL(page.url());
  assert.equal(u.searchParams.get('error'), 'access_denied');
  assert.equal(u.searchParams.get('state'), 'd1');
  // A page on another origin posts the decision form with the session's
  // cookie (same site, so Lax sends it) and even a stolen CSRF token:
  // the Origin check refuses it.
  await page.goto(base + authorizeUrl(port, client, pkce().challenge, { redirect, state: 'd2' }));
  await page.waitForURL(/\/oauth\/consent\?req=/);
  const req = await page.locator('input[name=req]').getAttribute('value');
  const csrf = await page.locator('input[name=csrf]').getAttribute('value');
  const ws = await page.locator('select[name=workspace] option').first().getAttribute('value');
  const resp = page.waitForResponse((r) => r.url() === `${base}/oauth/consent` && r.request().method() === 'POST');
  await page.goto(`http://127.0.0.1:${cbPort}/evil?${new URLSearchParams({ req, csrf, ws })}`);
  assert.equal((await resp).status(), 403);
  await page.waitForLoadState();
  assert.match(await page.locator('main').textContent(), /can only be sent from the probe-mcp sign-in pages/);
  await shot(page, '7-cross-origin-refused');
  assert.ok(!hits.some((h) => h.includes('code=') && h.includes('state=d2')));
  await ctx.close();
});
