#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An MCP server in Python on libprobemcp: one budgeted tool, served on
stdin/stdout (see python/probemcp) to clients of either protocol era: a
2025-11-25 client initializes a session, a 2026-07-28 client sends each
request with its _meta (server/discover first), and the engine tells them
apart."""
import probemcp

srv = probemcp.Server("numbers")


@srv.tool("count", "Counts from 0 to n-1, paged under the token budget.",
          args=[probemcp.Arg("n", "integer", required=True, min=1, max=100000)],
          budgeted=True, read_only=True)
def count(call):
    page = call.page()
    start = int(page.position or b"0")
    page.list("numbers")
    i, n = start, call.args["n"]
    while i < n and page.add({"i": i}, resume=str(i + 1).encode()):
        i += 1
    page.finish(more=i < n)


srv.serve_stdio()
