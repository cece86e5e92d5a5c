/* SPDX-License-Identifier: MIT */
/* Drives one pmcp_server from the test thread: a sink that keeps the last
 * response, JSON-RPC requests with fresh ids, and tools/call shorthands
 * that check the result contracts of DESIGN.md (one text item holding one
 * JSON object, structuredContent equal to it, the text within the token
 * budget and the byte ceiling). Shared by the test-research-*.c and
 * test-tracking-*.c suites; the state is per process (Check forks each
 * test). */
#ifndef TOOL_CALL_UTIL_H
#define TOOL_CALL_UTIL_H

#include <cjson/cJSON.h>

#include "probemcp/probemcp.h"

/* A new server whose sink records responses; fails the test on error. */
pmcp_server *tc_server_new(void);
/* initialize + notifications/initialized (protocol 2025-06-18). */
void tc_initialize(void);
/* A new, initialized server with the research toolset on the store at
 * @p path opened read-only (kept until tc_server_free). */
void tc_serve_research(const char *path);
/* Frees the server, the store of tc_serve_research and the last response. */
void tc_server_free(void);
pmcp_server *tc_server(void);

/* Sends one request and returns the parsed response (caller deletes). */
cJSON *tc_rpc(const char *method, const char *params);
/* The raw text of the last response (NULL before the first). */
const char *tc_last(void);

/* tools/call @p tool with @p args (a JSON object text); returns the JSON
 * object of the one text item (caller deletes) and sets @p is_error. The
 * budget checked is the args' token_budget, or 2000. */
cJSON *tc_call(const char *tool, const char *args, int *is_error);
/* tc_call that must succeed. */
cJSON *tc_ok(const char *tool, const char *args);
/* tc_call that must be refused with a message containing @p needle. */
void tc_refused(const char *tool, const char *args, const char *needle);

/* Sends the @p n tools/call requests @p calls (each {tool, args JSON})
 * at once, so the server's workers run them concurrently, then waits for
 * all; returns the parsed responses in arrival order (caller deletes). */
cJSON *tc_burst(const char *const (*calls)[2], size_t n);

/* Members of a result object that must be there with that type (the test
 * fails naming the member otherwise). */
double tc_num(const cJSON *o, const char *k);
const char *tc_str(const cJSON *o, const char *k);
const cJSON *tc_arr(const cJSON *o, const char *k);

#endif
