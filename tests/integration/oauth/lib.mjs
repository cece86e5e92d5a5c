// SPDX-License-Identifier: MIT
// Helpers for the OAuth tests: a store with users, a probe-mcp-http on a
// free port, PKCE pairs, a tiny cookie-keeping HTTP client (what a browser
// does, for the steps not driven by Chromium), and the consent steps done
// over plain HTTP.
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { raw, serverArgs, storeIn } from '../../http/lib.mjs';

export { raw };

// Starts probe-mcp-http on a free loopback port with extra environment;
// resolves {port, url, stop} once it prints its URL.
export function startServer(bin, args = [], env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['--listen', '127.0.0.1:0', ...serverArgs(args)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PUBLIC_BASE_URL: '', APP_BASE_URL: '', ...env },
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${bin} did not start: ${err}`)), 20000);
    child.stderr.on('data', (d) => { err += d; });
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/[^\s]+)/);
      if (!m) return;
      clearTimeout(timer);
      const url = new URL(m[1]);
      resolve({
        child, url, port: Number(url.port), stderr: () => err,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGTERM');
            await new Promise((r) => child.on('exit', r));
          }
          if (child.exitCode !== 0) throw new Error(`${bin} exited with ${child.exitCode ?? child.signalCode}: ${err}`);
        },
      });
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${bin} exited with ${code}: ${err}`));
    });
  });
}

export const HTTP = process.env.PROBE_MCP_HTTP;
export const PROBE = process.env.PROBE_CLI;

export function b64url(buf) {
  return Buffer.from(buf).toString('base64').replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
}

export function pkce() {
  const verifier = b64url(randomBytes(32));
  const challenge = b64url(createHash('sha256').update(verifier).digest());
  return { verifier, challenge };
}

// A store with ada (editor of default), bob (viewer of default) and carol
// (no workspace). Passwords go through stdin, as `probe user` wants.
export function makeStore() {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmcp-oauth-'));
  const store = storeIn(dir);
  const probe = (args, input) =>
    execFileSync(PROBE, ['--store', store, ...args], { input, stdio: ['pipe', 'pipe', 'pipe'] });
  probe(['init']);
  probe(['user', 'create', 'ada', '--display-name', 'Ada <Lovelace>'], 'ada-password-1\n');
  probe(['user', 'create', 'bob'], 'bob-password-1\n');
  probe(['user', 'create', 'carol'], 'carol-password-1\n');
  probe(['user', 'set-role', 'ada', '--workspace', 'default', '--role', 'editor']);
  probe(['user', 'set-role', 'bob', '--workspace', 'default', '--role', 'viewer']);
  return { dir, store, probe };
}

export async function json(port, method, p, body, headers = {}) {
  const r = await raw(port, {
    method,
    path: p,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let parsed = null;
  try { parsed = JSON.parse(r.body); } catch { /* not JSON */ }
  return { ...r, json: parsed };
}

export async function form(port, p, fields, headers = {}) {
  const body = new URLSearchParams(fields).toString();
  const r = await raw(port, {
    method: 'POST',
    path: p,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
  let parsed = null;
  try { parsed = JSON.parse(r.body); } catch { /* not JSON */ }
  return { ...r, json: parsed };
}

export async function register(port, redirect = 'http://127.0.0.1:9/cb', extra = {}) {
  const r = await json(port, 'POST', '/oauth/register', { client_name: 'test client', redirect_uris: [redirect], ...extra });
  if (r.status !== 201) throw new Error(`registration failed: ${r.status} ${r.body}`);
  return r.json.client_id;
}

// A browser's cookie jar over raw HTTP, for flows not run in Chromium.
export class Agent {
  constructor(port) {
    this.port = port;
    this.origin = `http://127.0.0.1:${port}`;
    this.cookies = new Map();
  }
  cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  keep(res) {
    let sc = res.headers['set-cookie'] ?? [];
    for (const c of sc) {
      const [kv] = c.split(';');
      const i = kv.indexOf('=');
      const k = kv.slice(0, i), v = kv.slice(i + 1);
      if (/Max-Age=0/i.test(c)) this.cookies.delete(k);
      else this.cookies.set(k, v);
    }
    return res;
  }
  async get(p, headers = {}) {
    return this.keep(await raw(this.port, { method: 'GET', path: p, headers: { cookie: this.cookieHeader(), ...headers } }));
  }
  async post(p, fields, headers = {}) {
    return this.keep(await form(this.port, p, fields, { cookie: this.cookieHeader(), origin: this.origin, ...headers }));
  }
}

export function hidden(html, name) {
  const m = html.match(new RegExp(`name="${name}" value="([^"]*)"`));
  return m ? m[1] : null;
}

// Signs @p user in and answers the consent page for the authorization URL
// @p authUrl (a full URL or a path); returns the final redirect Location.
export async function consent(agent, authUrl, { user = 'ada', password = 'ada-password-1', decision = 'approve', access = 'read' } = {}) {
  const u = new URL(authUrl, agent.origin);
  let r = await agent.get(u.pathname + u.search);
  if (r.status !== 302) throw new Error(`authorize: ${r.status} ${r.body}`);
  const consentPath = new URL(r.headers.location).pathname + new URL(r.headers.location).search;
  r = await agent.get(consentPath);
  if (!/name="password"/.test(r.body) && !/name="decision"/.test(r.body)) throw new Error(`consent page: ${r.status} ${r.body}`);
  if (/name="password"/.test(r.body)) {
    const login = await agent.post('/oauth/login', {
      username: user, password, req: hidden(r.body, 'req'), csrf: hidden(r.body, 'csrf'),
    });
    if (login.status !== 303) throw new Error(`login: ${login.status} ${login.body}`);
    r = await agent.get(new URL(login.headers.location).pathname + new URL(login.headers.location).search);
  }
  const ws = r.body.match(/<option value="([^"]*)"/);
  const fields = { req: hidden(r.body, 'req'), csrf: hidden(r.body, 'csrf'), decision };
  if (decision === 'approve') Object.assign(fields, { workspace: ws ? ws[1].replace(/&#39;/g, "'") : '', access });
  const d = await agent.post('/oauth/consent', fields);
  if (d.status !== 303) throw new Error(`decision: ${d.status} ${d.body}`);
  return d.headers.location;
}

export function authorizeUrl(port, clientId, challenge, { redirect = 'http://127.0.0.1:9/cb', state = 'st', resource } = {}) {
  const q = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: redirect,
    code_challenge: challenge, code_challenge_method: 'S256', state,
    resource: resource ?? `http://127.0.0.1:${port}/mcp`,
  });
  return `/oauth/authorize?${q}`;
}

// Registration, consent and code exchange over HTTP: a fresh connection.
export async function connect(port, opts = {}) {
  const agent = opts.agent ?? new Agent(port);
  const client = await register(port);
  const { verifier, challenge } = pkce();
  const loc = await consent(agent, authorizeUrl(port, client, challenge), opts);
  const code = new URL(loc).searchParams.get('code');
  if (!code) throw new Error(`no code: ${loc}`);
  const t = await form(port, '/oauth/token', {
    grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1:9/cb',
    client_id: client, code_verifier: verifier, resource: `http://127.0.0.1:${port}/mcp`,
  });
  if (t.status !== 200) throw new Error(`token: ${t.status} ${t.body}`);
  return { agent, client, verifier, code, tokens: t.json };
}

// One JSON-RPC call on /mcp with @p headers (stateless enough: initialize).
export async function mcpInit(port, headers) {
  return raw(port, {
    method: 'POST',
    path: '/mcp',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
  });
}
