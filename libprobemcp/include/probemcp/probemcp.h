/* SPDX-License-Identifier: MIT */
/**
 * @file probemcp.h
 * Umbrella header of libprobemcp (the engine, the store and the toolsets):
 * include this one. A host that needs only the engine includes
 * probemcp/engine.h and links libprobemcp-engine instead.
 */
#ifndef PROBEMCP_H
#define PROBEMCP_H

#include "common.h"
#include "probemcp/version.h" /* generated into the build tree */
#include "error.h"
#include "server.h"
#include "tool.h"
#include "skills.h"
#include "tasks.h"
#include "store.h"
#include "research.h"
#include "tracking.h"
#include "service.h"
#include "oauth.h"
#include "toolsets.h"
#include "tokens.h"
#include "json.h"
#include "cursor.h"
#include "budget.h"

#endif
