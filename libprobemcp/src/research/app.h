/* SPDX-License-Identifier: MIT */
/* The MCP App of the metric tools (io.modelcontextprotocol/ui): the page
 * ui://probe/curves, built into the library, that a host with Apps renders
 * beside the result of a curve tool (research `metrics`, tracking
 * `fetch_float_series` and `fetch_float_series_buckets`). Hosts without
 * Apps see the tools and results unchanged. */
#ifndef PMCP_RESEARCH_APP_H
#define PMCP_RESEARCH_APP_H

#include "probemcp/tool.h"

#define PMCP__APP_CURVES_URI "ui://probe/curves"

/* Registers the page (once per server: every toolset that has curve tools
 * calls it) and points the registered tool @p tool at it with
 * _meta.ui.resourceUri. 0 or an error code. */
int pmcp__app_curves_attach(pmcp_server *server, const char *tool);

#endif
