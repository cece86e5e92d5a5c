/* SPDX-License-Identifier: MIT */
/* See tool-call-util.h. */
#include "tool-call-util.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probemcp/tokens.h"

static pmcp_server *tc_srv;
static pmcp_store *tc_store;
static char *tc_last_resp;
static int tc_next_id = 10;
/* The sink runs on the server's workers: during tc_burst responses are
 * collected in tc_collect under tc_mu. */
static pthread_mutex_t tc_mu = PTHREAD_MUTEX_INITIALIZER;
static cJSON *tc_collect;

static void tc_sink(const pmcp_out *m, void *ud)
{
  (void)ud;
  if (m->kind != PMCP_OUT_RESPONSE)
    return;
  pthread_mutex_lock(&tc_mu);
  if (tc_collect) {
    cJSON *r = cJSON_ParseWithLength(m->data, m->len);
    cJSON_AddItemToArray(tc_collect, r ? r : cJSON_CreateString("(not JSON)"));
  } else {
    free(tc_last_resp);
    tc_last_resp = strndup(m->data, m->len);
  }
  pthread_mutex_unlock(&tc_mu);
}

pmcp_server *tc_server_new(void)
{
  pmcp_server_options o = PMCP_SERVER_OPTIONS_INIT;
  o.name = "test";
  o.sink = tc_sink;
  ck_assert_int_eq(pmcp_server_new(&tc_srv, &o), 0);
  return tc_srv;
}

pmcp_server *tc_server(void) { return tc_srv; }

void tc_initialize(void)
{
  cJSON_Delete(tc_rpc("initialize", "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                                    "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}"));
  const char *n = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  ck_assert_int_eq(pmcp_server_handle(tc_srv, "", n, strlen(n)), 0);
  pmcp_server_drain(tc_srv);
}

void tc_serve_research(const char *path)
{
  tc_server_new();
  ck_assert_int_eq(pmcp_store_open(&tc_store, path, PMCP_STORE_READONLY), 0);
  ck_assert_int_eq(pmcp_research_register(tc_srv, tc_store, NULL), 0);
  tc_initialize();
}

void tc_server_free(void)
{
  pmcp_server_free(tc_srv);
  tc_srv = NULL;
  pmcp_store_free(tc_store);
  tc_store = NULL;
  free(tc_last_resp);
  tc_last_resp = NULL;
}

const char *tc_last(void) { return tc_last_resp; }

cJSON *tc_rpc(const char *method, const char *params)
{
  size_t msg_sz = strlen(method) + strlen(params) + 100;
  char *msg = malloc(msg_sz);
  ck_assert_ptr_nonnull(msg);
  snprintf(msg, msg_sz, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":%s}",
           tc_next_id++, method, params);
  free(tc_last_resp);
  tc_last_resp = NULL;
  ck_assert_int_eq(pmcp_server_handle(tc_srv, "", msg, strlen(msg)), 0);
  pmcp_server_drain(tc_srv);
  free(msg);
  ck_assert_msg(tc_last_resp != NULL, "no response to %s", method);
  cJSON *r = cJSON_Parse(tc_last_resp);
  ck_assert_msg(r != NULL, "response is not JSON: %s", tc_last_resp);
  return r;
}

cJSON *tc_call(const char *tool, const char *args, int *is_error)
{
  size_t p_sz = strlen(tool) + strlen(args) + 64;
  char *p = malloc(p_sz);
  ck_assert_ptr_nonnull(p);
  snprintf(p, p_sz, "{\"name\":\"%s\",\"arguments\":%s}", tool, args);
  cJSON *r = tc_rpc("tools/call", p);
  free(p);
  cJSON *res = cJSON_GetObjectItem(r, "result");
  ck_assert_msg(res != NULL, "no result: %s", tc_last_resp);
  cJSON *content = cJSON_GetObjectItem(res, "content");
  ck_assert_msg(cJSON_GetArraySize(content) == 1, "not one content item: %s", tc_last_resp);
  cJSON *t0 = cJSON_GetObjectItem(cJSON_GetArrayItem(content, 0), "text");
  ck_assert_msg(cJSON_IsString(t0), "no text item: %s", tc_last_resp);
  const char *text = t0->valuestring;
  cJSON *obj = cJSON_Parse(text);
  ck_assert_msg(cJSON_IsObject(obj), "not one JSON object: %s", text);
  cJSON *sc = cJSON_GetObjectItem(res, "structuredContent");
  /* the engine's own argument errors carry no structuredContent */
  ck_assert_msg(!sc || cJSON_Compare(obj, sc, 1), "structuredContent differs: %s",
                tc_last_resp);
  ck_assert_msg(sc || cJSON_IsTrue(cJSON_GetObjectItem(res, "isError")),
                "a result without structuredContent: %s", tc_last_resp);
  int budget = 2000;
  cJSON *a = cJSON_Parse(args);
  cJSON *tb = cJSON_GetObjectItem(a, "token_budget");
  if (cJSON_IsNumber(tb) && tb->valueint >= 512 && tb->valueint <= 8000)
    budget = tb->valueint;
  cJSON_Delete(a);
  size_t tok = 0;
  ck_assert_int_eq(pmcp_tokens_count(text, strlen(text), &tok), 0);
  ck_assert_msg(tok <= (size_t)budget, "%zu tokens > %d", tok, budget);
  ck_assert_uint_le(strlen(text), (size_t)budget * 8);
  *is_error = cJSON_IsTrue(cJSON_GetObjectItem(res, "isError"));
  cJSON_Delete(r);
  return obj;
}

cJSON *tc_ok(const char *tool, const char *args)
{
  int e = 0;
  cJSON *o = tc_call(tool, args, &e);
  if (e) {
    char *t = cJSON_PrintUnformatted(o);
    ck_abort_msg("%s %s failed: %s", tool, args, t);
  }
  return o;
}

void tc_refused(const char *tool, const char *args, const char *needle)
{
  int e = 0;
  cJSON *o = tc_call(tool, args, &e);
  char *t = cJSON_PrintUnformatted(o);
  ck_assert_msg(e, "%s %s was not refused: %s", tool, args, t);
  ck_assert_msg(strstr(t, needle) != NULL, "%s %s: %s lacks '%s'", tool, args, t, needle);
  cJSON_free(t);
  cJSON_Delete(o);
}

double tc_num(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  ck_assert_msg(cJSON_IsNumber(v), "no number %s", k);
  return v->valuedouble;
}

const char *tc_str(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  ck_assert_msg(cJSON_IsString(v), "no string %s", k);
  return v->valuestring;
}

const cJSON *tc_arr(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  ck_assert_msg(cJSON_IsArray(v), "no array %s", k);
  return v;
}

cJSON *tc_burst(const char *const (*calls)[2], size_t n)
{
  pthread_mutex_lock(&tc_mu);
  tc_collect = cJSON_CreateArray();
  pthread_mutex_unlock(&tc_mu);
  ck_assert_ptr_nonnull(tc_collect);
  for (size_t i = 0; i < n; i++) {
    size_t sz = strlen(calls[i][0]) + strlen(calls[i][1]) + 128;
    char *msg = malloc(sz);
    ck_assert_ptr_nonnull(msg);
    snprintf(msg, sz, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"%s\",\"arguments\":%s}}", tc_next_id++, calls[i][0],
             calls[i][1]);
    ck_assert_int_eq(pmcp_server_handle(tc_srv, "", msg, strlen(msg)), 0);
    free(msg);
  }
  pmcp_server_drain(tc_srv);
  pthread_mutex_lock(&tc_mu);
  cJSON *all = tc_collect;
  tc_collect = NULL;
  pthread_mutex_unlock(&tc_mu);
  return all;
}
