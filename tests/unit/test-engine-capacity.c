/* SPDX-License-Identifier: MIT */
/* Capacity (issue 7): the worker pool never queues without bound. With
 * PROBE_MCP_QUEUE_MAX waiting calls, the next blocking call is refused at
 * once with a retryable "Server busy" error, and every accepted call still
 * completes; text results over 256 KiB are cut with a note to narrow the
 * call, at a character boundary. */
#include <check.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/workers.h"
#include "engine-harness.h"

static atomic_int started, gate;

static int held(pmcp_call *call, void *ud)
{
  (void)ud;
  atomic_fetch_add(&started, 1);
  /* Bounded wait for the test to open the gate (60 s at most). */
  for (int i = 0; i < 6000 && !atomic_load(&gate); i++)
    usleep(10000);
  return pmcp_result_text(call, "held", 4);
}

static int big(pmcp_call *call, void *ud)
{
  (void)ud;
  size_t n = 300 * 1024;
  char *t = malloc(n);
  /* "é" (2 bytes) repeated: a cut in the middle of one must not happen. */
  for (size_t i = 0; i + 1 < n; i += 2) {
    t[i] = (char)0xC3;
    t[i + 1] = (char)0xA9;
  }
  int rc = pmcp_result_text(call, t, n);
  free(t);
  return rc;
}

static int small(pmcp_call *call, void *ud)
{
  (void)ud;
  size_t n = 256 * 1024;
  char *t = malloc(n);
  memset(t, 'x', n);
  int rc = pmcp_result_text(call, t, n);
  free(t);
  return rc;
}

static void one_worker(pmcp_server_options *o)
{
  o->workers = 1;
}

static void add(pmcp_server *srv, const char *name, pmcp_tool_fn fn, unsigned flags)
{
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = name;
  d.handler = fn;
  d.flags = flags;
  ck_assert_int_eq(pmcp_server_add_tool(srv, &d), 0);
}

static void call_tool(harness *h, int id, const char *tool)
{
  char buf[256];
  snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"%s\"}}", id, tool);
  h_send(h, NULL, buf);
}

START_TEST(queue_max_parsing)
{
  ck_assert_uint_eq(pmcp__workers_queue_max(4, NULL), SIZE_MAX);
  ck_assert_uint_eq(pmcp__workers_queue_max(4, "10"), 10);
  ck_assert_uint_eq(pmcp__workers_queue_max(4, "0"), SIZE_MAX);
  ck_assert_uint_eq(pmcp__workers_queue_max(4, "-1"), SIZE_MAX);
  ck_assert_uint_eq(pmcp__workers_queue_max(4, "x"), SIZE_MAX);
}
END_TEST

/* The bound a service sets (probe-mcp-http: 64 per worker). */
static void run_full_queue(int by_env)
{
  if (by_env)
    setenv("PROBE_MCP_QUEUE_MAX", "2", 1);
  harness *h = h_new(one_worker);
  if (!by_env)
    pmcp_server_set_queue_max(h->srv, 2);
  add(h->srv, "held", held, PMCP_TOOL_BLOCKING);
  h_init(h, NULL, "2025-11-25");
  atomic_store(&started, 0);
  atomic_store(&gate, 0);
  call_tool(h, 1, "held");
  for (int i = 0; i < 6000 && atomic_load(&started) == 0; i++)
    usleep(10000);
  ck_assert_int_eq(atomic_load(&started), 1);
  call_tool(h, 2, "held");   /* waits */
  call_tool(h, 3, "held");   /* waits: the queue is full now */
  call_tool(h, 4, "held");   /* refused at once */
  h_msg *m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "\"id\":4"));
  ck_assert_ptr_nonnull(strstr(m->data, "Server busy"));
  ck_assert_ptr_nonnull(strstr(m->data, "retry"));
  ck_assert_ptr_nonnull(strstr(m->data, "\"retryable\":true"));
  h_msg_free(m);
  atomic_store(&gate, 1);
  int held_n = 0;
  for (int i = 0; i < 3; i++) {
    m = h_next(h);
    held_n += strstr(m->data, "\"held\"") != NULL;
    h_msg_free(m);
  }
  ck_assert_int_eq(held_n, 3);
  /* Room again: a new call is accepted. */
  call_tool(h, 5, "held");
  m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "\"held\""));
  h_msg_free(m);
  h_free(h);
  unsetenv("PROBE_MCP_QUEUE_MAX");
}

START_TEST(full_queue_is_refused_and_retryable)
{
  run_full_queue(1);
  run_full_queue(0);
}
END_TEST

START_TEST(big_text_is_cut)
{
  harness *h = h_new(NULL);
  pmcp_server_set_text_max(h->srv, 256 * 1024);
  add(h->srv, "big", big, 0);
  add(h->srv, "small", small, 0);
  h_init(h, NULL, "2025-11-25");
  call_tool(h, 1, "big");
  h_msg *m = h_next(h);
  cJSON *o = cJSON_Parse(m->data);
  const char *text = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(
      cJSON_GetObjectItem(o, "result"), "content"), 0), "text")->valuestring;
  ck_assert_uint_le(strlen(text), 256 * 1024);
  ck_assert_ptr_nonnull(strstr(text, "[cut: this text was 307200 bytes"));
  ck_assert_ptr_nonnull(strstr(text, "narrow the call"));
  /* Whole characters only before the note. */
  const char *note = strstr(text, "\n\n[cut:");
  ck_assert_int_eq((int)((note - text) % 2), 0);
  cJSON_Delete(o);
  h_msg_free(m);
  /* Exactly 256 KiB is not cut. */
  call_tool(h, 2, "small");
  m = h_next(h);
  ck_assert_ptr_null(strstr(m->data, "[cut:"));
  h_msg_free(m);
  h_free(h);
  /* The library's default: no cut (an embedder's choice). */
  h = h_new(NULL);
  add(h->srv, "big", big, 0);
  h_init(h, NULL, "2025-11-25");
  call_tool(h, 1, "big");
  m = h_next(h);
  ck_assert_ptr_null(strstr(m->data, "[cut:"));
  h_msg_free(m);
  h_free(h);
}
END_TEST

int main(void)
{
  Suite *su = suite_create("engine-capacity");
  TCase *tc = tcase_create("capacity");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, queue_max_parsing);
  tcase_add_test(tc, full_queue_is_refused_and_retryable);
  tcase_add_test(tc, big_text_is_cut);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
