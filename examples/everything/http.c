/* SPDX-License-Identifier: MIT */
/* The --http mode of probe-mcp-everything: the conformance fixtures served
 * by pmcp_http_run() of the library's HTTP transport (probemcp/http.h). */
#include <stdio.h>

#include "fixtures.h"
#include "http.h"
#include <probemcp/http.h>

static void log_stderr(pmcp_log_level level, const char *msg, void *ud)
{
  fprintf(stderr, "probe-mcp-everything: %s\n", msg);
}

static void transport_log(const char *line, void *ud)
{
  fprintf(stderr, "probe-mcp-everything: %s\n", line);
}

static int setup(pmcp_server *server, void *ud)
{
  return everything_register(server);
}

int everything_http_main(const char *listen, pmcp_log_level level)
{
  char host[128], err[200];
  int port;
  if (pmcp_http_parse_listen(listen, host, sizeof host, &port, err, sizeof err)) {
    fprintf(stderr, "probe-mcp-everything: --http: %s\n", err);
    return 2;
  }
  pmcp_http_options o = PMCP_HTTP_OPTIONS_INIT;
  o.host = host;
  o.port = port;
  o.log = transport_log;
  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  so.name = EVERYTHING_SERVER_NAME;
  so.title = "probe-mcp everything (conformance fixtures)";
  so.instructions = "Test fixtures for the MCP conformance suite.";
  so.log = log_stderr;
  so.log_level = level;
  return pmcp_http_run(&o, &so, setup, NULL);
}
