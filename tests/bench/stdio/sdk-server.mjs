// SPDX-License-Identifier: MIT
// The reference: an MCP server built with the official TypeScript SDK that
// has the same `echo` tool as probe-mcp-everything, served over stdio.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'sdk-echo', version: '1.0.0' });
server.registerTool('echo', {
  description: 'Returns its text argument unchanged',
  inputSchema: { text: z.string().describe('The text to return') },
}, async ({ text }) => ({ content: [{ type: 'text', text }] }));
await server.connect(new StdioServerTransport());
