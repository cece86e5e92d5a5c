/* SPDX-License-Identifier: MIT */
/*
 * probe-mcp-everything: the conformance fixtures (fixtures.c) served over
 * stdio (newline-delimited JSON-RPC) or, where the HTTP transport is built,
 * over Streamable HTTP.
 *
 *   probe-mcp-everything --stdio
 *   probe-mcp-everything --http HOST:PORT
 *
 * Nothing but protocol reaches stdout; diagnostics go to stderr.
 */
#include "fixtures.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <probemcp/stdio.h> /* the loop probe-mcp-stdio runs */

#ifdef EVERYTHING_HAVE_HTTP
#include "http.h"
#endif

static const char USAGE[] =
    "usage: probe-mcp-everything --stdio | --http HOST:PORT\n"
    "  --stdio           serve newline-delimited JSON-RPC on stdin/stdout\n"
    "  --http HOST:PORT  serve Streamable HTTP at /mcp\n"
    "  --log-level L     least level of diagnostics on stderr (debug, info,\n"
    "                    notice, warning, error, ...; default warning)\n";

static const char *const LEVELS[] = {"debug", "info", "notice", "warning",
                                     "error", "critical", "alert", "emergency"};

static void stderr_log(pmcp_log_level level, const char *msg, void *ud) {
  (void)ud;
  fprintf(stderr, "probe-mcp-everything: %s: %s\n",
          (unsigned)level < 8 ? LEVELS[level] : "?", msg);
}

static int parse_level(const char *s, pmcp_log_level *out) {
  for (int i = 0; i < 8; i++) {
    if (strcmp(s, LEVELS[i]) == 0) {
      *out = (pmcp_log_level)i;
      return 0;
    }
  }
  return -1;
}

int main(int argc, char **argv) {
  int stdio_mode = 0;
  const char *http_listen = NULL;
  pmcp_log_level level = PMCP_LOG_WARNING;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--stdio") == 0) {
      stdio_mode = 1;
    } else if (strcmp(argv[i], "--http") == 0 && i + 1 < argc) {
      http_listen = argv[++i];
    } else if (strcmp(argv[i], "--log-level") == 0 && i + 1 < argc) {
      if (parse_level(argv[++i], &level) != 0) {
        fprintf(stderr, "probe-mcp-everything: unknown log level '%s'\n", argv[i]);
        return 2;
      }
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(USAGE, stdout);
      return 0;
    } else {
      fprintf(stderr, "probe-mcp-everything: unknown or incomplete option '%s'\n%s",
              argv[i], USAGE);
      return 2;
    }
  }
  if (stdio_mode == !!http_listen) {
    fprintf(stderr, "probe-mcp-everything: give exactly one of --stdio and --http\n%s",
            USAGE);
    return 2;
  }
  if (http_listen) {
#ifdef EVERYTHING_HAVE_HTTP
    return everything_http_main(http_listen, level);
#else
    fprintf(stderr, "probe-mcp-everything: this build has no HTTP transport "
                    "(configure with libuv and llhttp available)\n");
    return 2;
#endif
  }

  signal(SIGPIPE, SIG_IGN);
  pmcp_stdio *io = NULL;
  pmcp_stdio_options io_opts = PMCP_STDIO_OPTIONS_INIT;
  io_opts.log = stderr_log;
  int rc = pmcp_stdio_new(&io, STDIN_FILENO, STDOUT_FILENO, &io_opts);
  if (rc) {
    fprintf(stderr, "probe-mcp-everything: cannot start the stdio transport: %s\n",
            pmcp_strerror(rc));
    return 1;
  }
  pmcp_server_options opts = PMCP_SERVER_OPTIONS_INIT;
  opts.name = EVERYTHING_SERVER_NAME;
  opts.title = "probe-mcp everything (conformance fixtures)";
  opts.instructions = "Test fixtures for the MCP conformance suite.";
  opts.log = stderr_log;
  opts.log_level = level;
  opts.sink = pmcp_stdio_sink;
  opts.sink_ud = io;
  pmcp_server *server = NULL;
  rc = pmcp_server_new(&server, &opts);
  if (rc) {
    fprintf(stderr, "probe-mcp-everything: cannot create the server: %s\n",
            pmcp_strerror(rc));
    pmcp_stdio_free(io);
    return 1;
  }
  rc = everything_register(server);
  if (rc) {
    fprintf(stderr, "probe-mcp-everything: registering the fixtures: %s: %s\n",
            pmcp_strerror(rc), pmcp_server_errmsg(server));
    rc = 1;
  } else {
    /* To end of input; running calls answer before it returns. */
    rc = pmcp_stdio_serve(io, server) ? 1 : 0;
  }
  pmcp_server_free(server);
  pmcp_stdio_free(io);
  return rc;
}
