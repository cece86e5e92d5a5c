// SPDX-License-Identifier: MIT
// probe-mcp-stdio driven by the official TypeScript SDK client: the
// lifecycle, the tool listing, the logging level and a clean exit at EOF.
// Where the CLI has `probe demo`, the server reads a demo store made for
// the test; the research tools' own behaviour is tested with their data
// elsewhere.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { binary, connect, expectError } from './lib.mjs';

const BIN = binary('PROBE_MCP_STDIO');
const CLI = process.env.PROBE_CLI;

function demoStore() {
  if (!CLI) return null;
  const help = execFileSync(CLI, ['--help'], { encoding: 'utf8' });
  if (!/^\s+demo\s/m.test(help)) return null;
  const dir = mkdtempSync(join(tmpdir(), 'probe-sdk-stdio-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const store = join(dir, 'store.db');
  execFileSync(CLI, ['--store', store, 'demo'], { stdio: ['ignore', 'ignore', 'inherit'] });
  return store;
}

const store = demoStore();
const ARGS = store ? ['--store', store] : [];

test(`initialize, ping, tools, setLevel, exit 0 at EOF (${store ? 'demo store' : 'no store'})`, async () => {
  const s = await connect(BIN, ARGS);
  const c = s.client;
  try {
    const info = c.getServerVersion();
    assert.ok(info.name && info.version, 'serverInfo has name and version');
    assert.deepEqual(await c.ping(), {});
    const caps = c.getServerCapabilities();
    if (caps.tools) {
      const { tools } = await c.listTools();
      if (store) assert.ok(tools.length > 0, 'a store is served with its tools');
      for (const t of tools) {
        assert.ok(t.name && t.description, `tool ${t.name} has a description`);
        assert.equal(t.inputSchema.type, 'object');
      }
      const e = await expectError(() => c.callTool({ name: 'no_such_tool_xyz', arguments: {} }));
      assert.match(e.message, /no_such_tool_xyz/);
    } else {
      // Nothing to serve: tools/list is unknown (-32601) or empty.
      let listed;
      try {
        listed = (await c.listTools()).tools;
      } catch (e) {
        assert.ok(e instanceof McpError && e.code === -32601, `tools/list: ${e}`);
        listed = [];
      }
      assert.deepEqual(listed, [], 'no tools capability, no tools');
    }
    if (caps.logging) assert.deepEqual(await c.setLoggingLevel('error'), {});
  } finally {
    const code = await s.close();
    assert.equal(code, 0, `exit status ${code}; stderr:\n${s.stderr}`);
  }
});
