/* SPDX-License-Identifier: MIT */
/*
 * A complete MCP server over stdio: one tool, served by the library's stdio
 * transport until end of input.
 *
 * It needs only the engine (no store, no toolsets), so it links
 * libprobemcp-engine, which needs neither SQLite nor libpq:
 *
 * Build:  cc stdio_host.c $(pkg-config --cflags --libs libprobemcp-engine)
 *         (or libprobemcp, the superset)
 * Run:    ./stdio_host    (an MCP client talks to it on stdin/stdout)
 */
#include <probemcp/engine.h>

#include <signal.h>
#include <unistd.h>

static int hello(pmcp_call *call, void *ud) {
  (void)ud;
  return pmcp_result_text(call, "hello from C", 12);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  pmcp_stdio *io;
  pmcp_server *srv;
  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  pmcp_tool_def tool = PMCP_TOOL_DEF_INIT;
  if (pmcp_stdio_new(&io, STDIN_FILENO, STDOUT_FILENO, NULL))
    return 1;
  so.name = "stdio-host";
  so.sink = pmcp_stdio_sink;
  so.sink_ud = io;
  tool.name = "hello";
  tool.description = "Says hello";
  tool.handler = hello;
  if (pmcp_server_new(&srv, &so) || pmcp_server_add_tool(srv, &tool))
    return 1;
  int rc = pmcp_stdio_serve(io, srv);
  pmcp_server_free(srv);
  pmcp_stdio_free(io);
  return rc ? 1 : 0;
}
