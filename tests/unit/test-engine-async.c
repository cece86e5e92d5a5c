/* SPDX-License-Identifier: MIT */
/* Logging levels, progress, cancellation, server-to-client requests,
 * workers, drain/free with calls in flight, and many threads at once. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine-harness.h"

static atomic_int started;

static int logger(pmcp_call *call, void *ud)
{
  (void)ud;
  ck_assert_int_eq(pmcp_call_log(call, PMCP_LOG_DEBUG, "t", "\"debug line\""), 0);
  ck_assert_int_eq(pmcp_call_log(call, PMCP_LOG_INFO, NULL, "{\"n\": 1}"), 0);
  ck_assert_int_eq(pmcp_call_log(call, PMCP_LOG_ERROR, "t", "\"error line\""), 0);
  ck_assert_int_eq(pmcp_call_log(call, PMCP_LOG_ERROR, "t", "not json"), PMCP_EINVAL);
  return pmcp_result_text(call, "done", 4);
}

static int progress(pmcp_call *call, void *ud)
{
  (void)ud;
  ck_assert_int_eq(pmcp_call_progress(call, 1, 3, "one"), 0);
  ck_assert_int_eq(pmcp_call_progress(call, 2.5, -1, NULL), 0);
  return pmcp_result_text(call, "done", 4);
}

/* Blocks until cancelled (5 s at most). */
static int waiter(pmcp_call *call, void *ud)
{
  (void)ud;
  atomic_store(&started, 1);
  for (int i = 0; i < 500 && !pmcp_call_cancelled(call); i++)
    usleep(10000);
  if (pmcp_call_cancelled(call))
    return PMCP_ECANCELLED;
  return pmcp_result_text(call, "not cancelled", 13);
}

static int asker(pmcp_call *call, void *ud)
{
  (void)ud;
  int64_t timeout = 0;
  pmcp_arg_int(call, "timeout", &timeout);
  ck_assert(pmcp_call_client_has(call, "sampling"));
  ck_assert(!pmcp_call_client_has(call, "roots"));
  pmcp_buf out = PMCP_BUF_INIT;
  atomic_store(&started, 1);
  int rc = pmcp_call_request(call, "sampling/createMessage",
                             "{\"messages\": [], \"maxTokens\": 5}", (int)timeout, &out);
  char t[512];
  snprintf(t, sizeof t, "rc=%s %s", pmcp_errname(rc), out.ptr ? out.ptr : "");
  pmcp_buf_dispose(&out);
  if (rc == PMCP_ECANCELLED)
    return rc;
  return pmcp_result_text(call, t, strlen(t));
}

static int inline_asker(pmcp_call *call, void *ud)
{
  (void)ud;
  pmcp_buf out = PMCP_BUF_INIT;
  int rc = pmcp_call_request(call, "roots/list", NULL, 0, &out);
  return pmcp_result_text(call, pmcp_errname(rc), strlen(pmcp_errname(rc)));
}

static int quick(pmcp_call *call, void *ud)
{
  (void)ud;
  int64_t n = 0;
  pmcp_arg_int(call, "n", &n);
  char t[32];
  snprintf(t, sizeof t, "%lld", (long long)n);
  return pmcp_result_text(call, t, strlen(t));
}

static const pmcp_arg_spec timeout_arg[] = {
  {"timeout", PMCP_T_INTEGER, 0, NULL, 0, 0, 0, 0, NULL, NULL},
};
static const pmcp_arg_spec n_arg[] = {
  {"n", PMCP_T_INTEGER, 1, NULL, 0, 0, 0, 0, NULL, NULL},
};

static void add(pmcp_server *srv, const char *name, pmcp_tool_fn fn, unsigned flags,
                const pmcp_arg_spec *args, size_t n)
{
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = name;
  d.handler = fn;
  d.flags = flags;
  d.args = args;
  d.n_args = n;
  ck_assert_int_eq(pmcp_server_add_tool(srv, &d), 0);
}

static harness *setup(void)
{
  harness *h = h_new(NULL);
  add(h->srv, "logger", logger, 0, NULL, 0);
  add(h->srv, "progress", progress, 0, NULL, 0);
  add(h->srv, "waiter", waiter, PMCP_TOOL_BLOCKING, NULL, 0);
  add(h->srv, "asker", asker, PMCP_TOOL_BLOCKING, timeout_arg, 1);
  add(h->srv, "inline_asker", inline_asker, 0, NULL, 0);
  add(h->srv, "quick", quick, 0, n_arg, 1);
  add(h->srv, "slow_quick", quick, PMCP_TOOL_BLOCKING, n_arg, 1);
  h_init(h, NULL, "2025-11-25");
  atomic_store(&started, 0);
  return h;
}

static void call_tool(harness *h, const char *id, const char *tool, const char *extra)
{
  char buf[512];
  snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"%s\"%s}}", id, tool, extra ? extra : "");
  h_send(h, NULL, buf);
}

static void wait_started(void)
{
  for (int i = 0; i < 500 && !atomic_load(&started); i++)
    usleep(10000);
  ck_assert(atomic_load(&started));
}

START_TEST(logging_levels)
{
  harness *h = setup();
  call_tool(h, "1", "logger", NULL);
  const char *levels[] = {"debug", "info", "error"};
  for (int i = 0; i < 3; i++) {
    h_msg *m = h_next(h);
    cJSON *v = cJSON_Parse(m->data);
    ck_assert_str_eq(cJSON_GetObjectItem(v, "method")->valuestring, "notifications/message");
    cJSON *p = cJSON_GetObjectItem(v, "params");
    ck_assert_str_eq(cJSON_GetObjectItem(p, "level")->valuestring, levels[i]);
    ck_assert_str_eq(m->related, "1");
    ck_assert_int_eq(m->final, 0);
    cJSON_Delete(v);
    h_msg_free(m);
  }
  h_msg *m = h_next(h);
  ck_assert_int_eq(m->kind, PMCP_OUT_RESPONSE);
  ck_assert_int_eq(m->final, 1);
  h_msg_free(m);

  cJSON *r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\","
                             "\"params\":{\"level\":\"warning\"}}");
  ck_assert_ptr_nonnull(h_result(r));
  cJSON_Delete(r);
  call_tool(h, "3", "logger", NULL);
  m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "\"error line\""));
  h_msg_free(m);
  m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "\"result\""));
  h_msg_free(m);

  ck_assert_int_eq(pmcp_server_log(h->srv, PMCP_LOG_INFO, "srv", "\"quiet\""), 0);
  ck_assert_uint_eq(h_pending(h), 0);
  ck_assert_int_eq(pmcp_server_log(h->srv, PMCP_LOG_CRITICAL, "srv", "\"loud\""), 0);
  m = h_next(h);
  ck_assert_ptr_null(m->related);
  ck_assert_str_eq(m->data, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
                            "\"params\":{\"level\":\"critical\",\"logger\":\"srv\","
                            "\"data\":\"loud\"}}");
  h_msg_free(m);
  ck_assert_int_eq(pmcp_server_log(h->srv, PMCP_LOG_CRITICAL, NULL, "{"), PMCP_EINVAL);

  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"logging/setLevel\","
                      "\"params\":{\"level\":\"loud\"}}");
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

START_TEST(progress_tokens)
{
  harness *h = setup();
  call_tool(h, "1", "progress", ",\"_meta\":{\"progressToken\":98765432109876543210}");
  h_msg *m = h_next(h);
  ck_assert_str_eq(m->data, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
                            "\"params\":{\"progressToken\":98765432109876543210,"
                            "\"progress\":1,\"total\":3,\"message\":\"one\"}}");
  ck_assert_str_eq(m->related, "1");
  h_msg_free(m);
  m = h_next(h);
  ck_assert_str_eq(m->data, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
                            "\"params\":{\"progressToken\":98765432109876543210,"
                            "\"progress\":2.5}}");
  h_msg_free(m);
  h_msg_free(h_next(h));
  call_tool(h, "2", "progress", ",\"_meta\":{\"progressToken\":\"tok\"}");
  m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "\"progressToken\":\"tok\""));
  h_msg_free(m);
  h_msg_free(h_next(h));
  h_msg_free(h_next(h));
  /* no token: no progress */
  call_tool(h, "3", "progress", NULL);
  m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "\"result\""));
  h_msg_free(m);
  h_free(h);
}
END_TEST

START_TEST(cancellation)
{
  harness *h = setup();
  call_tool(h, "\"w1\"", "waiter", NULL);
  wait_started();
  /* the reading thread is free: ping answers while the call runs */
  cJSON *r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}");
  ck_assert_int_eq(cJSON_GetObjectItem(r, "id")->valueint, 9);
  cJSON_Delete(r);
  /* the same id while in flight is refused */
  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":\"w1\",\"method\":\"ping\"}");
  ck_assert_int_eq(h_error_code(r), -32600);
  cJSON_Delete(r);
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                  "\"params\":{\"requestId\":\"w1\",\"reason\":\"user\"}}");
  ck_assert_int_eq(pmcp_server_drain(h->srv), 0);
  ck_assert_uint_eq(h_pending(h), 0); /* a cancelled request gets no answer */
  ck_assert_uint_eq(h->ends, 1);      /* but the transport learns it ended */
  /* cancelling what is unknown or finished does nothing */
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                  "\"params\":{\"requestId\":12345}}");
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}");
  ck_assert_uint_eq(h_pending(h), 0);
  h_free(h);
}
END_TEST

START_TEST(server_request_roundtrip)
{
  harness *h = setup();
  call_tool(h, "7", "asker", NULL);
  h_msg *m = h_next(h);
  ck_assert_int_eq(m->kind, PMCP_OUT_REQUEST);
  ck_assert_str_eq(m->related, "7");
  cJSON *req = cJSON_Parse(m->data);
  ck_assert_str_eq(cJSON_GetObjectItem(req, "method")->valuestring, "sampling/createMessage");
  ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(req, "params"), "maxTokens")->valueint, 5);
  int id = cJSON_GetObjectItem(req, "id")->valueint;
  cJSON_Delete(req);
  h_msg_free(m);
  /* a response with an unknown id is ignored; then the real one */
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":999999,\"result\":{}}");
  char resp[256];
  snprintf(resp, sizeof resp, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"role\":"
           "\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"hi\"}}}", id);
  h_send(h, NULL, resp);
  m = h_next(h);
  cJSON *r = cJSON_Parse(m->data);
  ck_assert_str_eq(h_text0(r), "rc=PMCP_OK {\"role\":\"assistant\",\"content\":"
                               "{\"type\":\"text\",\"text\":\"hi\"}}");
  cJSON_Delete(r);
  h_msg_free(m);

  /* an error answer */
  call_tool(h, "8", "asker", NULL);
  m = h_next(h);
  req = cJSON_Parse(m->data);
  id = cJSON_GetObjectItem(req, "id")->valueint;
  cJSON_Delete(req);
  h_msg_free(m);
  snprintf(resp, sizeof resp, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"error\":{\"code\":-1,"
           "\"message\":\"declined\"}}", id);
  h_send(h, NULL, resp);
  m = h_next(h);
  ck_assert_msg(strstr(m->data, "PMCP_EREMOTE") && strstr(m->data, "declined"), "%s",
                m->data);
  h_msg_free(m);

  /* a timeout */
  call_tool(h, "9", "asker", ",\"arguments\":{\"timeout\":50}");
  m = h_next(h);
  ck_assert_int_eq(m->kind, PMCP_OUT_REQUEST);
  h_msg_free(m);
  m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "rc=PMCP_ETIMEOUT"));
  h_msg_free(m);

  /* cancelled while waiting: no answer */
  atomic_store(&started, 0);
  call_tool(h, "10", "asker", NULL);
  m = h_next(h);
  h_msg_free(m);
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                  "\"params\":{\"requestId\":10}}");
  pmcp_server_drain(h->srv);
  ck_assert_uint_eq(h_pending(h), 0);

  /* the client's input ends: the waiting request fails with EIO, the call
   * answers, and later requests fail at once */
  call_tool(h, "12", "asker", NULL);
  m = h_next(h);
  ck_assert_int_eq(m->kind, PMCP_OUT_REQUEST);
  h_msg_free(m);
  ck_assert_int_eq(pmcp_server_session_end_input(h->srv, NULL), 0);
  m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "rc=PMCP_EIO"));
  h_msg_free(m);
  call_tool(h, "13", "asker", NULL);
  m = h_next(h); /* not even sent */
  ck_assert_int_eq(m->kind, PMCP_OUT_RESPONSE);
  ck_assert_ptr_nonnull(strstr(m->data, "rc=PMCP_EIO"));
  h_msg_free(m);
  ck_assert_int_eq(pmcp_server_session_end_input(h->srv, "nope"), PMCP_ENOTFOUND);

  /* only blocking handlers may ask */
  call_tool(h, "11", "inline_asker", NULL);
  m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "PMCP_EMISUSE"));
  h_msg_free(m);
  h_free(h);
}
END_TEST

START_TEST(free_with_calls_waiting)
{
  harness *h = setup();
  call_tool(h, "1", "asker", NULL); /* waits for an answer forever */
  call_tool(h, "2", "waiter", NULL);
  call_tool(h, "3", "slow_quick", ",\"arguments\":{\"n\":3}");
  h_msg_free(h_next(h)); /* the sampling request */
  wait_started();
  h_free(h); /* cancels both and joins the workers */
}
END_TEST

typedef struct worker_arg {
  harness *h;
  int thread;
  int n;
} worker_arg;

static void *hammer(void *p)
{
  worker_arg *a = p;
  char sess[16];
  snprintf(sess, sizeof sess, "s%d", a->thread % 2);
  for (int i = 0; i < a->n; i++) {
    char buf[256];
    int id = a->thread * 100000 + i;
    const char *tool = i % 3 == 0 ? "slow_quick" : "quick";
    if (i % 5 == 4)
      snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}", id);
    else
      snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
               "\"params\":{\"name\":\"%s\",\"arguments\":{\"n\":%d}}}", id, tool, id);
    if (pmcp_server_handle(a->h->srv, sess, buf, strlen(buf)) != 0)
      return (void *)1;
  }
  return NULL;
}

START_TEST(many_threads)
{
  harness *h = setup();
  h_init(h, "s0", "2025-11-25");
  h_init(h, "s1", "2025-11-25");
  enum { THREADS = 8, PER = 300 };
  pthread_t th[THREADS];
  worker_arg args[THREADS];
  for (int i = 0; i < THREADS; i++) {
    args[i] = (worker_arg){h, i, PER};
    pthread_create(&th[i], NULL, hammer, &args[i]);
  }
  for (int i = 0; i < THREADS; i++) {
    void *ret;
    pthread_join(th[i], &ret);
    ck_assert_ptr_null(ret);
  }
  pmcp_server_drain(h->srv);
  ck_assert_uint_eq(h_pending(h), THREADS * PER);
  static unsigned char seen[THREADS][PER];
  memset(seen, 0, sizeof seen);
  while (h_pending(h)) {
    h_msg *m = h_next(h);
    cJSON *v = cJSON_Parse(m->data);
    int id = cJSON_GetObjectItem(v, "id")->valueint;
    int t = id / 100000, i = id % 100000;
    ck_assert_int_lt(t, THREADS);
    ck_assert_int_eq(h_error_code(v), 0);
    char sess[16];
    snprintf(sess, sizeof sess, "s%d", t % 2);
    ck_assert_str_eq(m->session, sess);
    if (i % 5 != 4) {
      char want[32];
      snprintf(want, sizeof want, "%d", id);
      ck_assert_str_eq(h_text0(v), want);
    }
    ck_assert_int_eq(seen[t][i], 0);
    seen[t][i] = 1;
    cJSON_Delete(v);
    h_msg_free(m);
  }
  h_free(h);
}
END_TEST

typedef struct churn_arg {
  harness *h;
  atomic_int *stop;
  int id;
} churn_arg;

/* Sends calls (inline and blocking) to sessions c0..c3 until told to stop. */
static void *churn_calls(void *p)
{
  churn_arg *a = p;
  for (int i = 0; !atomic_load(a->stop); i++) {
    char sess[8], buf[256];
    snprintf(sess, sizeof sess, "c%d", i % 4);
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"%s\",\"arguments\":{\"n\":1}}}", a->id * 1000000 + i,
             i % 2 ? "slow_quick" : "quick");
    pmcp_server_handle(a->h->srv, sess, buf, strlen(buf));
  }
  return NULL;
}

/* Closes and reopens the sessions, and notifies everyone, meanwhile. */
static void *churn_sessions(void *p)
{
  churn_arg *a = p;
  for (int i = 0; !atomic_load(a->stop); i++) {
    char sess[8];
    snprintf(sess, sizeof sess, "c%d", i % 4);
    pmcp_server_session_close(a->h->srv, sess);
    pmcp_server_session_open(a->h->srv, sess, PMCP_SESSION_STATELESS, NULL);
    pmcp_server_log(a->h->srv, PMCP_LOG_ERROR, "churn", "\"x\"");
    pmcp_server_notify_list_changed(a->h->srv, PMCP_LIST_TOOLS);
  }
  return NULL;
}

START_TEST(session_churn)
{
  harness *h = setup();
  atomic_int stop;
  atomic_init(&stop, 0);
  pthread_t th[4];
  churn_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (churn_arg){h, &stop, i};
    pthread_create(&th[i], NULL, i == 3 ? churn_sessions : churn_calls, &args[i]);
  }
  usleep(300000);
  atomic_store(&stop, 1);
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], NULL);
  pmcp_server_drain(h->srv);
  /* every message that left is well-formed JSON */
  while (h_pending(h)) {
    h_msg *m = h_next(h);
    cJSON *v = cJSON_Parse(m->data);
    ck_assert_ptr_nonnull(v);
    cJSON_Delete(v);
    h_msg_free(m);
  }
  h_free(h);
}
END_TEST

/* A sink that logs from inside a sink call (same thread, same session). */
static void reenter(harness *h, const h_msg *m)
{
  if (m->kind == PMCP_OUT_RESPONSE && strstr(m->data, "\"id\":\"re\""))
    ck_assert_int_eq(pmcp_server_log(h->srv, PMCP_LOG_ERROR, "sink", "\"nested\""), 0);
}

START_TEST(sink_reentry)
{
  harness *h = setup();
  h->on_msg = reenter;
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":\"re\",\"method\":\"ping\"}");
  h_msg *m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "\"result\""));
  h_msg_free(m);
  m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "nested"));
  h_msg_free(m);
  h->on_msg = NULL;
  h_free(h);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("engine-async");
  TCase *tc = tcase_create("async");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, logging_levels);
  tcase_add_test(tc, progress_tokens);
  tcase_add_test(tc, cancellation);
  tcase_add_test(tc, server_request_roundtrip);
  tcase_add_test(tc, free_with_calls_waiting);
  tcase_add_test(tc, many_threads);
  tcase_add_test(tc, sink_reentry);
  tcase_add_test(tc, session_churn);
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
