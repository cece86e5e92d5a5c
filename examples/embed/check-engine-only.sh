#!/bin/sh
# SPDX-License-Identifier: MIT
# An engine-only host (stdio_host, built against libprobemcp-engine) must
# not need SQLite, libpq or libprobemcp (the store and toolsets), and must
# serve MCP: initialize and a tools/call in 2025-11-25, server/discover in
# 2026-07-28.
set -eu
host=$1
needed=$(readelf -d "$host" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')
fails=0
case " $needed" in
  *libprobemcp-engine.so*) echo "ok   links libprobemcp-engine ($needed)" ;;
  *) echo "FAIL does not link libprobemcp-engine: $needed"; fails=1 ;;
esac
for lib in libsqlite3 libpq "libprobemcp.so"; do
  case " $needed" in
    *" $lib"*) echo "FAIL needs $lib: $needed"; fails=1 ;;
    *) echo "ok   does not need $lib" ;;
  esac
done
# and nothing it loads pulls them in
if ldd "$host" | grep -E 'libsqlite3|libpq\.|libprobemcp\.so' ; then
  echo "FAIL a library the host loads needs the store's libraries"; fails=1
else
  echo "ok   nothing loaded needs SQLite, libpq or libprobemcp"
fi
out=$(printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{}}}' \
  '{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
  | "$host")
case $out in
  *'"id":1,"result":{'*'"id":2,"result":{'*'hello from C'*'"id":3,"result":{'*'supportedVersions'*)
    echo "ok   serves initialize, tools/call and server/discover" ;;
  *) printf '%s\n' "$out"; echo "FAIL serves initialize, tools/call and server/discover"; fails=1 ;;
esac
exit $fails
