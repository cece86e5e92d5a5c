// SPDX-License-Identifier: MIT
// Access levels of OAuth connections on the test-only write server
// (tests/http/http-writeserver.c --oauth: the real OAuth server, the real
// token resolver, a write tool): a read-only connection neither sees nor
// may call the write tool; a read & write connection of an editor may; a
// viewer's read & write connection stays read-only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { connect, makeStore, startServer } from './lib.mjs';

const WRITESERVER = process.env.HTTP_WRITESERVER;
let env, srv, port;

before(async () => {
  env = makeStore();
  srv = await startServer(WRITESERVER, ['--store', env.store, '--oauth']);
  port = srv.port;
});

after(async () => {
  await srv?.stop();
  rmSync(env.dir, { recursive: true, force: true });
});

async function client(token) {
  const c = new Client({ name: 'oauth-write-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  }));
  return c;
}

test('a read-only connection cannot see or call a write tool', async () => {
  const { tokens } = await connect(port, { access: 'read' });
  const c = await client(tokens.access_token);
  const names = (await c.listTools()).tools.map((t) => t.name);
  assert.ok(names.includes('whoami'), names.join(','));
  assert.ok(!names.includes('delete_run'), names.join(','));
  const who = JSON.parse((await c.callTool({ name: 'whoami', arguments: {} })).content[0].text);
  assert.equal(who.kind, 'connection');
  assert.equal(who.write, false);
  assert.equal(who.actor, 'user:ada');
  let refused = false;
  try {
    const r = await c.callTool({ name: 'delete_run', arguments: { run: 'run:1' } });
    refused = r.isError === true;
  } catch {
    refused = true;
  }
  assert.ok(refused, 'delete_run was not refused');
  await c.close();
});

test('read & write: an editor may call the write tool, a viewer may not', async () => {
  const ada = await connect(port, { access: 'write' });
  let c = await client(ada.tokens.access_token);
  let names = (await c.listTools()).tools.map((t) => t.name);
  assert.ok(names.includes('delete_run'), names.join(','));
  const r = await c.callTool({ name: 'delete_run', arguments: { run: 'run:999' } });
  assert.match(r.content[0].text, /no run run:999/); // reached the tool itself
  await c.close();
  const bob = await connect(port, { user: 'bob', password: 'bob-password-1', access: 'write' });
  c = await client(bob.tokens.access_token);
  names = (await c.listTools()).tools.map((t) => t.name);
  assert.ok(!names.includes('delete_run'), names.join(','));
  await c.close();
});
