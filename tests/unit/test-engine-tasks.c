/* SPDX-License-Identifier: MIT */
/* The Tasks extension (io.modelcontextprotocol/tasks): task creation only
 * for a declaring 2026-07-28 request, tasks/get outcomes (completed with the
 * tool's result, failed with the protocol error), input inside a task
 * (tasks/update, partial answers), sealed ids (forged, another caller's),
 * -32021 gating, discover advertising, pmcp_call_task escalation, and
 * notifications/tasks through subscriptions/listen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine-harness.h"

#define META_CAPS(caps)                                                              \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","           \
  "\"io.modelcontextprotocol/clientCapabilities\":" caps "}"
#define EXT "{\"elicitation\":{},\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}"
#define META META_CAPS(EXT)
#define META_NOEXT META_CAPS("{\"elicitation\":{}}")

static cJSON *rpc(harness *h, const char *session, const char *json)
{
  h_send(h, session, json);
  for (;;) {
    h_msg *m = h_next(h);
    if (m->kind == PMCP_OUT_RESPONSE) {
      cJSON *r = cJSON_Parse(m->data);
      ck_assert_ptr_nonnull(r);
      h_msg_free(m);
      return r;
    }
    h_msg_free(m);
  }
}

static const char *str(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Whether @p needle occurs in the JSON text of @p r. */
static int has(const cJSON *r, const char *needle)
{
  char *t = cJSON_PrintUnformatted(r);
  int found = t && strstr(t, needle) != NULL;
  free(t);
  return found;
}

static int echo(pmcp_call *call, void *ud)
{
  (void)ud;
  const char *w = NULL;
  if (pmcp_arg_string(call, "w", &w, NULL) || !w)
    w = "-";
  return pmcp_result_text(call, w, strlen(w));
}

static int broken(pmcp_call *call, void *ud)
{
  (void)call;
  (void)ud;
  return PMCP_EINTERNAL;
}

static int two_inputs(pmcp_call *call, void *ud)
{
  (void)ud;
  pmcp_buf a = {0}, b = {0};
  int ra = pmcp_call_input(call, "a", "elicitation/create", "{}", 1000, &a);
  int rb = pmcp_call_input(call, "b", "elicitation/create", "{}", 1000, &b);
  int rc = ra ? ra : rb;
  if (!rc) {
    char line[300];
    snprintf(line, sizeof line, "%s|%s", a.ptr, b.ptr);
    rc = pmcp_result_text(call, line, strlen(line));
  }
  pmcp_buf_dispose(&a);
  pmcp_buf_dispose(&b);
  return rc;
}

static int escalates(pmcp_call *call, void *ud)
{
  (void)ud;
  pmcp_buf a = {0};
  int rc = pmcp_call_input(call, "n", "elicitation/create", "{}", 1000, &a);
  if (rc)
    return rc;
  if (pmcp_call_task(call)) {
    pmcp_buf_dispose(&a);
    return 0;
  }
  rc = pmcp_result_text(call, a.ptr, a.len);
  pmcp_buf_dispose(&a);
  return rc;
}

/* Becomes a task only for w == "long" (PMCP_TOOL_TASK_ON_DEMAND). */
static int on_demand(pmcp_call *call, void *ud)
{
  const char *w = NULL;
  if (pmcp_arg_string(call, "w", &w, NULL) == 0 && w && !strcmp(w, "long") &&
      pmcp_call_task(call))
    return 0;
  return echo(call, ud);
}

static harness *server(int with_tasks)
{
  harness *h = h_new(NULL);
  static const pmcp_arg_spec w[] = {{.name = "w", .type = PMCP_T_STRING, .description = "w"}};
  static const struct {
    const char *name;
    pmcp_tool_fn fn;
    unsigned flags;
  } tools[] = {{"plain", echo, 0},
               {"job", echo, PMCP_TOOL_TASK},
               {"only", echo, PMCP_TOOL_TASK | PMCP_TOOL_TASK_REQUIRED},
               {"broken", broken, PMCP_TOOL_TASK},
               {"inputs", two_inputs, PMCP_TOOL_TASK},
               {"later", escalates, PMCP_TOOL_TASK_REQUIRED},
               {"ondemand", on_demand, PMCP_TOOL_TASK_ON_DEMAND}};
  for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
    if (!with_tasks && tools[i].flags)
      continue;
    pmcp_tool_def t = PMCP_TOOL_DEF_INIT;
    t.name = tools[i].name;
    t.description = "t";
    t.handler = tools[i].fn;
    t.flags = tools[i].flags;
    t.args = w;
    t.n_args = 1;
    ck_assert_int_eq(pmcp_server_add_tool(h->srv, &t), 0);
  }
  return h;
}

/* Calls @p tool and returns the new task's id (malloc'd). */
static char *start(harness *h, const char *tool, const char *args)
{
  char msg[1024];
  snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"%s\",\"arguments\":%s," META "}}", tool, args);
  cJSON *r = rpc(h, NULL, msg);
  cJSON *res = h_result(r);
  ck_assert_str_eq(str(res, "resultType"), "task");
  ck_assert_str_eq(str(res, "status"), "working");
  ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(res, "ttlMs"));
  ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(res, "pollIntervalMs"));
  ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(res, "result"));
  char *id = strdup(str(res, "taskId"));
  cJSON_Delete(r);
  return id;
}

static cJSON *task_req(harness *h, const char *session, const char *method, const char *id,
                       const char *extra, const char *meta)
{
  char msg[2048];
  snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"%s\",\"params\":"
           "{\"taskId\":\"%s\"%s,%s}}", method, id, extra ? extra : "", meta);
  return rpc(h, session, msg);
}

START_TEST(create_and_get)
{
  harness *h = server(1);
  /* Without the extension: synchronous, and task-only tools refused. */
  cJSON *r = rpc(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                          "{\"name\":\"job\",\"arguments\":{\"w\":\"sync\"}," META_NOEXT "}}");
  ck_assert_str_eq(h_text0(r), "sync");
  ck_assert_str_eq(str(h_result(r), "resultType"), "complete");
  cJSON_Delete(r);
  r = rpc(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                   "{\"name\":\"only\",\"arguments\":{}," META_NOEXT "}}");
  ck_assert_int_eq(h_error_code(r), -32021);
  ck_assert(has(r, "io.modelcontextprotocol/tasks"));
  cJSON_Delete(r);
  /* A plain tool never becomes a task. */
  r = rpc(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                   "{\"name\":\"plain\",\"arguments\":{\"w\":\"p\"}," META "}}");
  ck_assert_str_eq(h_text0(r), "p");
  cJSON_Delete(r);

  char *id = start(h, "job", "{\"w\":\"in a task\"}");
  r = task_req(h, NULL, "tasks/get", id, NULL, META);
  cJSON *res = h_result(r);
  ck_assert_str_eq(str(res, "taskId"), id);
  ck_assert_str_eq(str(res, "status"), "completed");
  ck_assert_str_eq(str(res, "resultType"), "complete");
  cJSON *c0 = cJSON_GetArrayItem(
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "result"),
                                       "content"), 0);
  ck_assert_str_eq(str(c0, "text"), "in a task");
  cJSON_Delete(r);
  /* Without the extension, the tasks methods are refused. */
  r = task_req(h, NULL, "tasks/get", id, NULL, META_NOEXT);
  ck_assert_int_eq(h_error_code(r), -32021);
  cJSON_Delete(r);
  /* A forged id (one character changed) and another caller's task. */
  char *forged = strdup(id);
  size_t k = strlen(forged) / 2;
  forged[k] = forged[k] == 'A' ? 'B' : 'A';
  r = task_req(h, NULL, "tasks/get", forged, NULL, META);
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);
  static int other;
  ck_assert_int_eq(pmcp_server_session_open(h->srv, "other", PMCP_SESSION_STATELESS, &other), 0);
  r = task_req(h, "other", "tasks/get", id, NULL, META);
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);
  /* Cancelling a finished task is acknowledged and changes nothing. */
  r = task_req(h, NULL, "tasks/cancel", id, NULL, META);
  ck_assert_int_eq(h_error_code(r), 0);
  ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(h_result(r), "status"));
  cJSON_Delete(r);
  r = task_req(h, NULL, "tasks/get", id, NULL, META);
  ck_assert_str_eq(str(h_result(r), "status"), "completed");
  cJSON_Delete(r);
  free(forged);
  free(id);

  /* A protocol error fails the task, with the error inlined. */
  id = start(h, "broken", "{}");
  r = task_req(h, NULL, "tasks/get", id, NULL, META);
  res = h_result(r);
  ck_assert_str_eq(str(res, "status"), "failed");
  ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(res, "result"));
  ck_assert(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(res, "error"), "code")));
  cJSON_Delete(r);
  free(id);
  h_free(h);
}
END_TEST

START_TEST(input_in_a_task)
{
  harness *h = server(1);
  char *id = start(h, "inputs", "{}");
  cJSON *r = task_req(h, NULL, "tasks/get", id, NULL, META);
  cJSON *res = h_result(r);
  ck_assert_str_eq(str(res, "status"), "input_required");
  cJSON *asked = cJSON_GetObjectItemCaseSensitive(res, "inputRequests");
  ck_assert_int_eq(cJSON_GetArraySize(asked), 2);
  ck_assert_str_eq(str(cJSON_GetObjectItemCaseSensitive(asked, "a"), "method"),
                   "elicitation/create");
  ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(res, "requestState"));
  cJSON_Delete(r);
  /* One answer (and one for nothing asked): still waiting on the other. */
  r = task_req(h, NULL, "tasks/update", id,
               ",\"inputResponses\":{\"a\":{\"action\":\"accept\",\"content\":{\"x\":1}},"
               "\"zz\":{\"action\":\"accept\"}}", META);
  ck_assert_int_eq(h_error_code(r), 0);
  ck_assert_str_eq(str(h_result(r), "resultType"), "complete");
  cJSON_Delete(r);
  r = task_req(h, NULL, "tasks/get", id, NULL, META);
  res = h_result(r);
  ck_assert_str_eq(str(res, "status"), "input_required");
  asked = cJSON_GetObjectItemCaseSensitive(res, "inputRequests");
  ck_assert_int_eq(cJSON_GetArraySize(asked), 1);
  ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(asked, "b"));
  cJSON_Delete(r);
  r = task_req(h, NULL, "tasks/update", id,
               ",\"inputResponses\":{\"b\":{\"action\":\"accept\",\"content\":{\"y\":2}}}", META);
  cJSON_Delete(r);
  r = task_req(h, NULL, "tasks/get", id, NULL, META);
  res = h_result(r);
  ck_assert_str_eq(str(res, "status"), "completed");
  cJSON *c0 = cJSON_GetArrayItem(
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "result"),
                                       "content"), 0);
  ck_assert_str_eq(str(c0, "text"),
                   "{\"action\":\"accept\",\"content\":{\"x\":1}}|"
                   "{\"action\":\"accept\",\"content\":{\"y\":2}}");
  cJSON_Delete(r);
  free(id);

  /* Escalation: input asked synchronously, then a task. */
  r = rpc(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                   "{\"name\":\"later\",\"arguments\":{}," META "}}");
  ck_assert_str_eq(str(h_result(r), "resultType"), "input_required");
  cJSON_Delete(r);
  r = rpc(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                   "{\"name\":\"later\",\"arguments\":{},\"inputResponses\":{\"n\":"
                   "{\"action\":\"accept\",\"content\":{\"name\":\"Alice\"}}}," META "}}");
  res = h_result(r);
  ck_assert_str_eq(str(res, "resultType"), "task");
  id = strdup(str(res, "taskId"));
  cJSON_Delete(r);
  r = task_req(h, NULL, "tasks/get", id, NULL, META);
  ck_assert_str_eq(str(h_result(r), "status"), "completed");
  ck_assert(has(r, "Alice"));
  cJSON_Delete(r);
  free(id);
  h_free(h);
}
END_TEST

/* A tool that decides: the long call is a task for a declaring client, a
 * short one is not, and a client without the extension always gets the
 * synchronous result, the same as the task's. */
START_TEST(on_demand_tasks)
{
  harness *h = server(1);
  cJSON *r = rpc(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                          "{\"name\":\"ondemand\",\"arguments\":{\"w\":\"short\"}," META "}}");
  ck_assert_str_eq(str(h_result(r), "resultType"), "complete");
  ck_assert_str_eq(h_text0(r), "short");
  cJSON_Delete(r);
  r = rpc(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                   "{\"name\":\"ondemand\",\"arguments\":{\"w\":\"long\"}," META_NOEXT "}}");
  ck_assert_str_eq(str(h_result(r), "resultType"), "complete");
  char *sync = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(h_result(r), "content"));
  cJSON_Delete(r);
  char *id = start(h, "ondemand", "{\"w\":\"long\"}");
  r = task_req(h, NULL, "tasks/get", id, NULL, META);
  ck_assert_str_eq(str(h_result(r), "status"), "completed");
  char *in_task = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(h_result(r), "result"), "content"));
  ck_assert_str_eq(in_task, sync);
  cJSON_Delete(r);
  free(sync);
  free(in_task);
  free(id);
  h_free(h);
}
END_TEST

START_TEST(discover_and_methods)
{
  harness *h = server(1);
  cJSON *r = rpc(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\","
                          "\"params\":{" META "}}");
  cJSON *caps = cJSON_GetObjectItemCaseSensitive(h_result(r), "capabilities");
  ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(caps, "extensions"), "io.modelcontextprotocol/tasks"));
  ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(caps, "tasks"));
  cJSON_Delete(r);
  r = rpc(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/list\",\"params\":{" META "}}");
  ck_assert_int_eq(h_error_code(r), -32601);
  cJSON_Delete(r);
  r = task_req(h, NULL, "tasks/get", "nope", NULL, META);
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);
  h_free(h);
  /* No task tool: no extension declared, the tasks methods not served. */
  h = server(0);
  r = rpc(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\","
                   "\"params\":{" META "}}");
  caps = cJSON_GetObjectItemCaseSensitive(h_result(r), "capabilities");
  ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(caps, "extensions"));
  cJSON_Delete(r);
  r = task_req(h, NULL, "tasks/get", "nope", NULL, META);
  ck_assert_int_eq(h_error_code(r), -32601);
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

START_TEST(status_notifications)
{
  harness *h = server(1);
  char *id = start(h, "inputs", "{}");
  char msg[2048];
  snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":\"L\",\"method\":"
           "\"subscriptions/listen\",\"params\":{\"notifications\":{\"taskIds\":[\"%s\"]},"
           META "}}", id);
  h_send(h, NULL, msg);
  h_msg *m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "notifications/subscriptions/acknowledged"));
  ck_assert_ptr_nonnull(strstr(m->data, id));
  h_msg_free(m);
  cJSON *r = task_req(h, NULL, "tasks/cancel", id, NULL, META);
  cJSON_Delete(r);
  /* The listener hears of it after the cancel's answer. */
  int seen = 0;
  while (!seen && (m = h_next_wait(h, 2000)) != NULL) {
    seen = strstr(m->data, "notifications/tasks") && strstr(m->data, "\"cancelled\"") &&
           strstr(m->data, "\"io.modelcontextprotocol/subscriptionId\":\"L\"");
    h_msg_free(m);
  }
  ck_assert(seen);
  free(id);
  h_free(h);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("engine-tasks");
  TCase *tc = tcase_create("tasks");
  tcase_add_test(tc, create_and_get);
  tcase_add_test(tc, input_in_a_task);
  tcase_add_test(tc, discover_and_methods);
  tcase_add_test(tc, on_demand_tasks);
  tcase_add_test(tc, status_notifications);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
