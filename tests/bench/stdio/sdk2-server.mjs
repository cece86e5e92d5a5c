// SPDX-License-Identifier: MIT
// The reference of the SDK's v2 line (@modelcontextprotocol/server 2.x, its
// current recommended configuration: zod 4): the same `echo` tool as
// probe-mcp-everything, served over stdio.
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const server = new McpServer({ name: 'sdk2-echo', version: '1.0.0' });
server.registerTool('echo', {
  description: 'Returns its text argument unchanged',
  inputSchema: z.object({ text: z.string().describe('The text to return') }),
}, async ({ text }) => ({ content: [{ type: 'text', text }] }));
await server.connect(new StdioServerTransport());
