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
import { startServer } from './lib.mjs';

const HTTP = process.env.PROBE_MCP_HTTP;
const PROBE = process.env.PROBE_CLI;

test('serves the research tools of a demo store', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmcp-http-'));
  try {
    const store = path.join(dir, 'store.db');
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
    const store = path.join(dir, 'store.db');
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
    const r = spawnSync(HTTP, ['--listen', '0.0.0.0:0', '--store', store, '--insecure-no-auth'],
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
