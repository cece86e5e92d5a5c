/**
 * @file probemcp.h
 * Umbrella header of libprobemcp: include this one.
 */
#ifndef PROBEMCP_H
#define PROBEMCP_H

#include "common.h"
#include "version.h"
#include "error.h"
#include "server.h"
#include "tool.h"
#include "json.h"
#include "cursor.h"

#endif
