// probe-mcp-stdio driven by the official TypeScript SDK client: the
// lifecycle, tool listing, logging level and a clean exit at EOF. The
// research tools themselves are tested with their own data elsewhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { binary, connect, expectError } from './lib.mjs';

const BIN = binary('PROBE_MCP_STDIO');
const ARGS = JSON.parse(process.env.PROBE_MCP_STDIO_ARGS || '[]');

test('initialize, ping, tools/list, setLevel, unknown tool, exit 0 at EOF', async () => {
  const s = await connect(BIN, ARGS);
  const c = s.client;
  try {
    const info = c.getServerVersion();
    assert.ok(info.name, 'serverInfo.name is set');
    assert.ok(c.getServerCapabilities().tools, 'tools capability declared');
    assert.deepEqual(await c.ping(), {});
    const { tools } = await c.listTools();
    assert.ok(Array.isArray(tools));
    for (const t of tools) {
      assert.ok(t.name && t.description, `tool ${t.name} has a description`);
      assert.equal(t.inputSchema.type, 'object');
    }
    if (c.getServerCapabilities().logging) assert.deepEqual(await c.setLoggingLevel('error'), {});
    const e = await expectError(() => c.callTool({ name: 'no_such_tool_xyz', arguments: {} }));
    assert.match(e.message, /no_such_tool_xyz/);
  } finally {
    const code = await s.close();
    assert.equal(code, 0, `exit status ${code}; stderr:\n${s.stderr}`);
  }
});
