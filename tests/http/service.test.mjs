// SPDX-License-Identifier: MIT
// probe-mcp-http itself: serves the research toolset of a store read-only
// over the transport (SDK client), refuses a store it cannot open, and
// answers --help.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { raw, serverArgs, startServer, storeIn } from './lib.mjs';

const HTTP = process.env.PROBE_MCP_HTTP;
const PROBE = process.env.PROBE_CLI;

test('serves the research tools of a demo store', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmcp-http-'));
  try {
    const store = storeIn(dir);
    execFileSync(PROBE, ['--store', store, 'demo'], { stdio: 'ignore' });
    const key = execFileSync(PROBE, ['--store', store, 'key', 'create'], { encoding: 'utf8' }).trim();
    const srv = await startServer(HTTP, ['--store', store]);
    try {
      const client = new Client({ name: 'service-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(srv.url, {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }));
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('browse') && names.includes('search'), names.join(','));
      const r = await client.callTool({ name: 'browse', arguments: { mode: 'runs', token_budget: 512 } });
      const body = JSON.parse(r.content[0].text);
      assert.ok(body.total > 0);
      assert.match(body.runs[0].ref, /^run:/);
      await client.close();
    } finally {
      await srv.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--insecure-no-auth serves without keys on loopback only', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmcp-http-'));
  try {
    const store = storeIn(dir);
    execFileSync(PROBE, ['--store', store, 'demo'], { stdio: 'ignore' });
    const srv = await startServer(HTTP, ['--store', store, '--insecure-no-auth']);
    try {
      const client = new Client({ name: 'service-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(srv.url));
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('browse'), names.join(','));
      await client.close();
    } finally {
      await srv.stop();
    }
    const r = spawnSync(HTTP, ['--listen', '0.0.0.0:0', ...serverArgs(['--store', store]), '--insecure-no-auth'],
      { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /only listens on loopback/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a store that cannot be opened is an error, not an empty server', () => {
  const r = spawnSync(HTTP, ['--listen', '127.0.0.1:0', '--store', '/nonexistent/dir/store.db'], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /cannot open the store/);
  const t = spawnSync(HTTP, ['--toolset', 'bogus'], { encoding: 'utf8' });
  assert.equal(t.status, 2);
  const h = spawnSync(HTTP, ['--help'], { encoding: 'utf8' });
  assert.equal(h.status, 0);
  assert.match(h.stdout, /--listen HOST:PORT/);
});

test('an API key reads only its own workspace (query_sql too), and may not switch', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmcp-http-'));
  try {
    const store = storeIn(dir);
    const cli = (...a) => execFileSync(PROBE, ['--store', store, ...a], { encoding: 'utf8' }).trim();
    cli('init');
    cli('workspace', 'create', 'alpha', '--id', 'alpha');
    cli('workspace', 'create', 'beta', '--id', 'beta');
    cli('project', 'create', 'pa', '--id', 'pa', '--workspace', 'alpha');
    cli('project', 'create', 'pb', '--id', 'pb', '--workspace', 'beta');
    cli('run', 'create', 'alpharun', '--id', 'ra', '--project', 'pa');
    cli('run', 'create', 'betarun', '--id', 'rb', '--project', 'pb');
    const keyA = cli('key', 'create', '--workspace', 'alpha');
    const keyB = cli('key', 'create', '--workspace', 'beta');
    const srv = await startServer(HTTP, ['--store', store, '--toolset', 'all']);
    try {
      const open = async (key) => {
        const client = new Client({ name: 'scope-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(srv.url, {
          requestInit: { headers: { Authorization: `Bearer ${key}` } },
        }));
        return client;
      };
      const text = async (c, name, args) => {
        const r = await c.callTool({ name, arguments: args });
        return { err: !!r.isError, text: r.content[0].text };
      };
      const a = await open(keyA);
      const b = await open(keyB);
      let r = await text(a, 'browse', { mode: 'runs' });
      assert.match(r.text, /run:ra/);
      assert.doesNotMatch(r.text, /run:rb|betarun/);
      r = await text(b, 'browse', { mode: 'runs' });
      assert.match(r.text, /run:rb/);
      assert.doesNotMatch(r.text, /run:ra|alpharun/);
      r = await text(a, 'entity', { refs: ['run:rb'] });
      assert.ok(r.err);
      assert.match(r.text, /no run 'rb'/);
      r = await text(a, 'search', { query: 'betarun' });
      assert.doesNotMatch(r.text, /run:rb/);
      r = await text(a, 'list_runs', { project: 'pb' });
      assert.ok(r.err);
      assert.doesNotMatch(r.text, /betarun/);
      r = await text(a, 'list_workspaces', {});
      assert.match(r.text, /"alpha"/);
      assert.doesNotMatch(r.text, /beta/);
      // a key never switches workspace
      r = await text(a, 'browse', { mode: 'runs', workspace: 'beta' });
      assert.ok(r.err);
      assert.match(r.text, /own workspace/);
      // query_sql's tables keep the key's workspace only
      r = await text(a, 'query_sql', { sql: 'SELECT name FROM runs' });
      assert.ok(!r.err, r.text);
      assert.match(r.text, /alpharun/);
      assert.doesNotMatch(r.text, /betarun/);
      await a.close();
      await b.close();
    } finally {
      await srv.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// DNS rebinding and base URLs made from Host: the loopback names are ours
// with the listening port only; a port mapping is allowed by configuration
// (--allow-host NAME:PORT, NAME for any port, the public base URL's host
// and port). An allowed Host gets the 401 challenge naming it, another 403.
test('Host: the listening port only, a mapped one by --allow-host or the public base URL', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmcp-http-'));
  const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const check = async (srv, cases) => {
    for (const [host, want, base] of cases) {
      const r = await raw(srv.port, { headers: { ...H, host }, body: INIT });
      assert.equal(r.status, want, `Host ${host}: ${r.status} ${r.body}`);
      if (base) {
        assert.equal(r.headers['www-authenticate'],
          `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`, host);
      }
    }
  };
  try {
    const store = storeIn(dir);
    execFileSync(PROBE, ['--store', store, 'init'], { stdio: 'ignore' });
    let srv = await startServer(HTTP, ['--store', store, '--allow-host', 'localhost:8000',
      '--allow-host', 'MCP.example.com', '--allow-host', '[::1]:8001']);
    const p = srv.port;
    try {
      await check(srv, [
        [`127.0.0.1:${p}`, 401, `http://127.0.0.1:${p}`],
        [`localhost:${p}`, 401, `http://localhost:${p}`],
        [`[::1]:${p}`, 401, `http://[::1]:${p}`],
        [`127.0.0.1:${p + 1}`, 403],
        ['127.0.0.1', 403],              // no port: 80
        ['localhost', 403],
        ['localhost:8000', 401, 'http://localhost:8000'],
        ['127.0.0.1:8000', 403],         // only localhost was mapped
        ['[::1]:8001', 401, 'http://[::1]:8001'],
        ['[::1]:8000', 403],
        ['mcp.example.com:1234', 401, 'http://mcp.example.com:1234'],
        ['mcp.example.com', 401, 'http://mcp.example.com'],
        [`evil.example:${p}`, 403],
        [`localhost:${p}0000`, 400],     // no such port
        ['localhost:', 400],
      ]);
    } finally {
      await srv.stop();
    }
    srv = await startServer(HTTP, ['--store', store, '--public-base-url', 'https://mcp.example.com']);
    try {
      // The challenge names the configured base, whatever Host says.
      await check(srv, [
        ['mcp.example.com', 401, 'https://mcp.example.com'],
        ['mcp.example.com:443', 401, 'https://mcp.example.com'],
        ['mcp.example.com:8443', 403],
        [`localhost:${srv.port}`, 401, 'https://mcp.example.com'],
        ['localhost:8000', 403],
      ]);
    } finally {
      await srv.stop();
    }
    srv = await startServer(HTTP, ['--store', store, '--public-base-url', 'http://localhost:8000/']);
    try {
      await check(srv, [['localhost:8000', 401, 'http://localhost:8000'], ['localhost:8001', 403]]);
    } finally {
      await srv.stop();
    }
    for (const bad of ['bad host', 'localhost:0', 'localhost:65536', 'a:b', '[::1']) {
      const r = spawnSync(HTTP, ['--listen', '127.0.0.1:0', '--store', store, '--allow-host', bad], { encoding: 'utf8' });
      assert.notEqual(r.status, 0, bad);
      assert.match(r.stderr, /allowed host .*expected NAME or NAME:PORT/, bad);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
