/* SPDX-License-Identifier: MIT */
/*
 * A complete MCP server over Streamable HTTP: one tool, served by the
 * library's HTTP transport at http://127.0.0.1:PORT/mcp until SIGINT or
 * SIGTERM. It prints "listening on URL" once it accepts connections.
 *
 * Build:  cc http_host.c $(pkg-config --cflags --libs libprobemcp-http)
 * Run:    ./http_host [PORT]       (default: a free port)
 */
#include <probemcp/probemcp.h>
#include <probemcp/http.h>

#include <stdlib.h>

static int hello(pmcp_call *call, void *ud) {
  (void)ud;
  return pmcp_result_text(call, "hello from C", 12);
}

static int setup(pmcp_server *srv, void *ud) {
  (void)ud;
  pmcp_tool_def tool = PMCP_TOOL_DEF_INIT;
  tool.name = "hello";
  tool.description = "Says hello";
  tool.handler = hello;
  return pmcp_server_add_tool(srv, &tool);
}

int main(int argc, char **argv) {
  pmcp_http_options ho = PMCP_HTTP_OPTIONS_INIT;
  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  ho.port = argc > 1 ? atoi(argv[1]) : 0;
  so.name = "http-host";
  return pmcp_http_run(&ho, &so, setup, NULL);
}
