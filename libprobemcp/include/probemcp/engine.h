/* SPDX-License-Identifier: MIT */
/**
 * @file engine.h
 * The engine alone: include this one to build an MCP server with your own
 * tools and link libprobemcp-engine (pkg-config libprobemcp-engine), which
 * needs neither SQLite nor libpq. The store and the research and tracking
 * toolsets are in libprobemcp (probemcp/probemcp.h), a superset: a host
 * links one of the two, never both.
 */
#ifndef PROBEMCP_ENGINE_H
#define PROBEMCP_ENGINE_H

#include "common.h"
#include "probemcp/version.h" /* generated into the build tree */
#include "error.h"
#include "server.h"
#include "tool.h"
#include "tokens.h"
#include "json.h"
#include "cursor.h"
#include "budget.h"
#include "stdio.h"

#endif
