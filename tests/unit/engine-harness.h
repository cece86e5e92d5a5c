/* SPDX-License-Identifier: MIT */
/* Test harness for the engine suites: a server whose sink records every
 * outgoing message, and helpers to send and read back JSON. */
#ifndef ENGINE_HARNESS_H
#define ENGINE_HARNESS_H

#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>

#include "probemcp/probemcp.h"

typedef struct h_msg {
  char *session;
  char *related; /* NULL when none */
  pmcp_out_kind kind;
  int final;
  int http_status; /* pmcp_out.http_status */
  char *data;
  struct h_msg *next;
} h_msg;

typedef struct harness {
  pmcp_server *srv;
  pthread_mutex_t mu;
  pthread_cond_t cond;
  h_msg *head, *tail;
  size_t count;
  size_t ends, closes; /* PMCP_OUT_END / PMCP_OUT_CLOSE_STREAM seen */
  /* optional: called from the sink after recording (e.g. answer server
   * requests); must not call pmcp_server_handle on the sink thread */
  void (*on_msg)(struct harness *h, const h_msg *m);
} harness;

/* Creates a server; @p tweak may adjust the options first. */
harness *h_new(void (*tweak)(pmcp_server_options *o));
void h_free(harness *h);
/* A server with the research and tracking toolsets over @p store, each
 * call scoped by the host hooks @p scope and @p scope_list (as a frontend
 * with workspaces sets them), initialized at 2025-06-18 (session ""). */
harness *h_new_scoped(pmcp_store *store, pmcp_scope_fn scope, pmcp_scope_list_fn scope_list);
/* pmcp_server_handle on a string; fails the test on a non-zero return. */
void h_send(harness *h, const char *session, const char *json);
/* The next message (waits up to 5 s); the test fails on timeout. Caller
 * frees with h_msg_free. */
h_msg *h_next(harness *h);
/* Waits up to @p ms for a message; NULL if none came. */
h_msg *h_next_wait(harness *h, int ms);
void h_msg_free(h_msg *m);
/* Sends and returns the parsed next message (caller cJSON_Delete). */
cJSON *h_call(harness *h, const char *session, const char *json);
/* initialize + notifications/initialized for @p session at @p version. */
void h_init(harness *h, const char *session, const char *version);
/* Number of messages currently queued. */
size_t h_pending(harness *h);
/* Shorthands on a parsed response. */
int h_error_code(const cJSON *resp);   /* 0 when no error */
const char *h_error_message(const cJSON *resp);
cJSON *h_result(const cJSON *resp);
/* The text of content[0] of a tools/call result response. */
const char *h_text0(const cJSON *resp);
int h_is_error(const cJSON *resp);

#endif
