// SPDX-License-Identifier: MIT
// Shared helpers: start a server binary under the official TypeScript SDK
// client over stdio, and check how it exits.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

export function binary(envName) {
  const bin = process.env[envName];
  assert.ok(bin, `${envName} must name the server binary (set by meson test)`);
  return bin;
}

// Connects a client to `command args`. `capabilities` are the client's;
// `setup(client)` runs before initialize (request handlers for sampling and
// elicitation must be set by then). Returns { client, close, stderr } where
// close() ends stdin and resolves with the server's exit code.
export async function connect(command, args, { capabilities = {}, setup } = {}) {
  const transport = new StdioClientTransport({
    command,
    args,
    // The whole environment, so ASAN_OPTIONS/UBSAN_OPTIONS reach the server.
    env: { ...process.env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (d) => { stderr += d; });
  const client = new Client({ name: 'probe-mcp-integration', version: '1.0.0' },
    { capabilities });
  if (setup) setup(client);
  await client.connect(transport);
  // The child process (private in the SDK's types, a plain field in JS).
  const proc = transport._process;
  const exited = new Promise((resolve) => {
    if (proc.exitCode !== null) resolve(proc.exitCode);
    else proc.once('exit', (code, signal) => resolve(signal ? signal : code));
  });
  return {
    client,
    get stderr() { return stderr; },
    async close() {
      await client.close();
      return exited;
    },
  };
}

// Runs `fn` and returns the error it must produce: either a JSON-RPC error
// (McpError) or an isError tool result. Returns { code, message } (code is
// null for isError results).
export async function expectError(fn) {
  let res;
  try {
    res = await fn();
  } catch (e) {
    assert.ok(e instanceof McpError, `expected an McpError, got ${e}`);
    return { code: e.code, message: e.message };
  }
  assert.equal(res.isError, true, `expected an error, got ${JSON.stringify(res)}`);
  return { code: null, message: res.content.map((c) => c.text ?? '').join('\n') };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
