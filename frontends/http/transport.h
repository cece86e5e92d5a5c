/* SPDX-License-Identifier: MIT */
/* The Streamable HTTP transport is the library's (probemcp/http.h, built as
 * libprobemcp-http); this name stays for the service's own headers. */
#ifndef PMCP_HTTP_TRANSPORT_H
#define PMCP_HTTP_TRANSPORT_H

#include <probemcp/probemcp.h>
#include <probemcp/http.h>

#endif
