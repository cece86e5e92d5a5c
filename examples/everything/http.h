/* SPDX-License-Identifier: MIT */
/* probe-mcp-everything --http HOST:PORT: the fixtures over the Streamable
 * HTTP transport of frontends/http (the same code as probe-mcp-http). */
#ifndef EVERYTHING_HTTP_H
#define EVERYTHING_HTTP_H

#include <probemcp/probemcp.h>

/* Serves the fixtures at http://HOST:PORT/mcp until SIGTERM or SIGINT,
 * printing "listening on URL" on stdout once bound (port 0 picks one).
 * No authentication: this is the conformance server. Returns an exit
 * status. */
int everything_http_main(const char *listen, pmcp_log_level level);

#endif
