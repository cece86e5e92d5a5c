/**
 * @file probemcp.h
 * Umbrella header of libprobemcp: include this one.
 */
#ifndef PROBEMCP_H
#define PROBEMCP_H

#include "common.h"
#include "probemcp/version.h" /* generated into the build tree */
#include "error.h"
#include "server.h"
#include "tool.h"
#include "tasks.h"
#include "store.h"
#include "research.h"
#include "tracking.h"
#include "tokens.h"
#include "json.h"
#include "cursor.h"
#include "budget.h"

#endif
