#!/bin/sh
# Registers probe-mcp with Claude Code (user scope: every project).
# Everything after "--" is the server's command line.
claude mcp add --scope user probe -- \
  /opt/probe-mcp/build/frontends/stdio/probe-mcp-stdio \
  --store "$HOME/.local/share/probe/store.db"

# Or a probe-mcp-http service on this machine (see probe-mcp-http(8); it has
# no authentication yet, so it listens on loopback):
# claude mcp add --scope user --transport http probe http://127.0.0.1:8080/mcp
