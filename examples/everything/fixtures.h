/* SPDX-License-Identifier: MIT */
/*
 * The "everything" fixtures: every tool, resource, template, prompt and
 * completion the official MCP conformance suite
 * (@modelcontextprotocol/conformance) expects of a server, plus a few tools
 * the integration tests and the benchmark drive (echo, sleep, a watched
 * resource that can be updated). Transport-independent: the stdio and HTTP
 * frontends both call everything_register() on a fresh server.
 */
#ifndef EVERYTHING_FIXTURES_H
#define EVERYTHING_FIXTURES_H

#include <probemcp/probemcp.h>

/* Server name reported in serverInfo. */
#define EVERYTHING_SERVER_NAME "probe-mcp-everything"

/* Registers every fixture on @p server.
 * The fixtures keep their state (the watched resource's content) in user
 * data owned by the server, so several servers may coexist in a process.
 * @return 0, or the first negative PMCP_E* code (detail in
 *         pmcp_server_errmsg()). */
int everything_register(pmcp_server *server);

/* The fixtures that ask the client for input (fixtures_input.c); called by
 * everything_register(). */
int everything_register_input(pmcp_server *server);

/* Asks the client for input @p key with pmcp_call_input(); on success *out
 * is the parsed answer (caller cJSON_Delete). */
struct cJSON;
int everything_ask(pmcp_call *call, const char *key, const char *method,
                   const char *params, struct cJSON **out);
/* content.<field> of an elicitation answer, or "unknown". */
const char *everything_form_text(const struct cJSON *answer, const char *field);

/* The Tasks extension's fixtures (fixtures_tasks.c); called by
 * everything_register(). */
int everything_register_tasks(pmcp_server *server);

/* The Skills extension's fixture (fixtures_skills.c); called by
 * everything_register(). */
int everything_register_skills(pmcp_server *server);

#endif
