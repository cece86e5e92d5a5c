// SPDX-License-Identifier: MIT
// Helpers for the HTTP transport tests: start a server binary on port 0,
// read the URL it prints, stop it; raw HTTP requests with any headers.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';

// The store of a test. SQLite: a file in @p dir. With PMCP_TEST_STORE=pg
// (the *-pg twins): a fresh schema of the PostgreSQL test cluster, named
// by the owner's URL (PROBE_TEST_PG_URL, what the probe CLI uses); a
// server given it by serverArgs() gets the service role's URL of the same
// schema (PROBE_TEST_PG_SERVICE_URL), as a deployment runs. The schemas
// are dropped when the test process exits.
export const onPg = process.env.PMCP_TEST_STORE === 'pg';
const serviceOf = new Map();
const schemas = [];
const withSchema = (u, schema) => `${u}${u.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`;
const psql = (sql) => execFileSync('psql', [process.env.PROBE_TEST_PG_URL, '-X', '-q', '-v', 'ON_ERROR_STOP=1',
  '-c', `SET client_min_messages=warning; ${sql}`], { stdio: ['ignore', 'ignore', 'pipe'] });
export function storeIn(dir) {
  if (!onPg) return path.join(dir, 'store.db');
  if (!process.env.PROBE_TEST_PG_URL) throw new Error('PMCP_TEST_STORE=pg needs PROBE_TEST_PG_URL');
  const schema = `t_${randomBytes(6).toString('hex')}`;
  psql(`CREATE SCHEMA ${schema}`);
  schemas.push(schema);
  const owner = withSchema(process.env.PROBE_TEST_PG_URL, schema);
  serviceOf.set(owner, withSchema(process.env.PROBE_TEST_PG_SERVICE_URL || process.env.PROBE_TEST_PG_URL, schema));
  return owner;
}
process.on('exit', () => {
  for (const s of schemas) {
    try { psql(`DROP SCHEMA IF EXISTS ${s}, ${s}_sql CASCADE`); } catch { /* the cluster may be gone */ }
  }
});
// A server's arguments with every store of storeIn() as the service sees it.
export const serverArgs = (args) => args.map((a) => serviceOf.get(a) ?? a);

export function startServer(bin, args = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['--listen', '127.0.0.1:0', ...serverArgs(args)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${bin} did not start: ${err}`)), 10000);
    child.stderr.on('data', (d) => { err += d; });
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/[^\s]+)/);
      if (m) {
        clearTimeout(timer);
        const url = new URL(m[1]);
        resolve({
          child,
          url,
          port: Number(url.port),
          stderr: () => err,
          exited: new Promise((r) => child.on('exit', (code, sig) => r({ code, sig }))),
          // SIGTERM; the server must shut down cleanly (exit 0, which
          // also means no leak report under LeakSanitizer).
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) {
              child.kill('SIGTERM');
              await new Promise((r) => child.on('exit', r));
            }
            if (child.exitCode !== 0) {
              throw new Error(`${bin} exited with ${child.exitCode ?? child.signalCode}: ${err}`);
            }
          },
        });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${bin} exited with ${code}: ${err}`));
    });
  });
}

// One raw HTTP request; resolves {status, headers, body}.
export function raw(port, { method = 'POST', path = '/mcp', headers = {}, body, agent } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: agent ?? false }, (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export const JSON_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

export async function initSession(port, extra = {}) {
  const r = await raw(port, {
    headers: { ...JSON_HEADERS, ...extra },
    body: JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });
  if (r.status !== 200) throw new Error(`initialize: ${r.status} ${r.body}`);
  const sid = r.headers['mcp-session-id'];
  await raw(port, {
    headers: { ...JSON_HEADERS, 'mcp-session-id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  return sid;
}

// Opens a streaming request and collects SSE events until `until(events)`
// is true or the response ends; resolves {status, headers, events}.
export function sse(port, { method = 'GET', headers = {}, body, until = () => false, timeoutMs = 5000 }) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: '/mcp', headers, agent: false }, (res) => {
      const events = [];
      let buf = '';
      const finish = () => { clearTimeout(t); resolve({ status: res.statusCode, headers: res.headers, events }); };
      const t = setTimeout(() => { req.destroy(); finish(); }, timeoutMs);
      res.on('data', (d) => {
        buf += d;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const ev = { id: undefined, data: '' };
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) ev.id = line.slice(4);
            else if (line.startsWith('data:')) ev.data += line.slice(5).trimStart();
            else if (line.startsWith('retry: ')) ev.retry = Number(line.slice(7));
          }
          if (block.startsWith(':')) continue;
          events.push(ev);
          if (until(events)) { req.destroy(); finish(); return; }
        }
      });
      res.on('end', finish);
      res.on('error', () => finish());
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}
