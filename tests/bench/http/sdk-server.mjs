// SPDX-License-Identifier: MIT
// The comparison server of the HTTP benchmark: the TypeScript SDK's McpServer
// with the same `echo` tool as build/tests/http/http-testserver, over its
// StreamableHTTPServerTransport on node:http, one transport per session
// (stateful, like ours) and JSON replies (enableJsonResponse).
//
//   node sdk-server.mjs     prints "listening on http://127.0.0.1:PORT/mcp"
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

const sessions = new Map();

function newServer() {
  const server = new McpServer({ name: 'sdk-bench', version: '1.0.0' });
  server.registerTool('echo', {
    description: 'Returns its text argument',
    inputSchema: { text: z.string().describe('text to return') },
    annotations: { readOnlyHint: true },
  }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
}

const httpServer = http.createServer(async (req, res) => {
  let body;
  if (req.method === 'POST') {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch {
      res.writeHead(400).end();
      return;
    }
  }
  const sid = req.headers['mcp-session-id'];
  let transport = sid && sessions.get(sid);
  if (!transport) {
    if (sid || body?.method !== 'initialize') {
      res.writeHead(sid ? 404 : 400).end();
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => sessions.set(id, transport),
    });
    transport.onclose = () => sessions.delete(transport.sessionId);
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, body);
});
httpServer.keepAliveTimeout = 60000;
httpServer.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${httpServer.address().port}/mcp`);
});
process.on('SIGTERM', () => process.exit(0));
