#!/bin/sh
# Registers probe-mcp with Claude Code (user scope: every project).
# Everything after "--" is the server's command line.
claude mcp add --scope user probe -- \
  /opt/probe-mcp/build/frontends/stdio/probe-mcp-stdio \
  --store "$HOME/.local/share/probe/store.db"

# Or a shared probe-mcp-http service, with an API key it issued (see probe-mcp-http(8)):
# claude mcp add --scope user --transport http probe https://probe.example.org/mcp \
#   --header "Authorization: Bearer pk_..."
