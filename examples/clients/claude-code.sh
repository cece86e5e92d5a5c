#!/bin/sh
# SPDX-License-Identifier: MIT
# Registers probe-mcp with Claude Code (user scope: every project).
# Everything after "--" is the server's command line.
claude mcp add --scope user probe -- \
  /opt/probe-mcp/build/frontends/stdio/probe-mcp-stdio \
  --store "$HOME/.local/share/probe/store.db"

# Or a probe-mcp-http service (see probe-mcp-http(8)). It requires
# authentication: a workspace API key made with `probe key create` in a
# header, or leave the header out and Claude Code signs in with OAuth.
# claude mcp add --scope user --transport http probe http://127.0.0.1:8080/mcp \
#   --header "Authorization: Bearer $PROBE_MCP_KEY"
