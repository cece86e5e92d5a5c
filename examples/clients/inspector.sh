#!/bin/sh
# SPDX-License-Identifier: MIT
# Opens the MCP Inspector (a web UI) on probe-mcp-stdio. Needs Node and npx.
npx @modelcontextprotocol/inspector \
  /opt/probe-mcp/build/frontends/stdio/probe-mcp-stdio \
  --store "$HOME/.local/share/probe/store.db"

# The conformance fixtures instead:
# npx @modelcontextprotocol/inspector \
#   /opt/probe-mcp/build/examples/everything/probe-mcp-everything --stdio
