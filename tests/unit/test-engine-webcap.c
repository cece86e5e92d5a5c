/* SPDX-License-Identifier: MIT */
/* The open-web share of the worker pool (PMCP_TOOL_OPEN_WEB): a burst of
 * slow web calls runs on at most PROBE_MCP_WEB_CAPACITY of the workers and
 * never delays other blocking tools, which answer while the burst is still
 * queued. */
#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/workers.h"
#include "engine-harness.h"

static atomic_int running, max_running, done_web;

static int web_slow(pmcp_call *call, void *ud)
{
  (void)ud;
  int now = atomic_fetch_add(&running, 1) + 1;
  int m = atomic_load(&max_running);
  while (now > m && !atomic_compare_exchange_weak(&max_running, &m, now))
    ;
  usleep(300000);
  atomic_fetch_sub(&running, 1);
  atomic_fetch_add(&done_web, 1);
  return pmcp_result_text(call, "web", 3);
}

static int other(pmcp_call *call, void *ud)
{
  (void)ud;
  return pmcp_result_text(call, "other", 5);
}

static void four_workers(pmcp_server_options *o)
{
  o->workers = 4;
}

static void add(pmcp_server *srv, const char *name, pmcp_tool_fn fn, unsigned flags)
{
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = name;
  d.handler = fn;
  d.flags = flags;
  ck_assert_int_eq(pmcp_server_add_tool(srv, &d), 0);
}

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000 + (double)ts.tv_nsec / 1e6;
}

static void call_tool(harness *h, int id, const char *tool)
{
  char buf[256];
  snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"%s\"}}", id, tool);
  h_send(h, NULL, buf);
}

START_TEST(share_parsing)
{
  ck_assert_uint_eq(pmcp__workers_web_cap(4, NULL), 1);
  ck_assert_uint_eq(pmcp__workers_web_cap(8, NULL), 2);
  ck_assert_uint_eq(pmcp__workers_web_cap(8, "0.5"), 4);
  ck_assert_uint_eq(pmcp__workers_web_cap(8, "3"), 3);
  ck_assert_uint_eq(pmcp__workers_web_cap(8, "1"), 1);
  ck_assert_uint_eq(pmcp__workers_web_cap(8, "1.0"), 7); /* never the whole pool */
  ck_assert_uint_eq(pmcp__workers_web_cap(8, "99"), 7);
  ck_assert_uint_eq(pmcp__workers_web_cap(2, "0.1"), 1); /* at least one */
  ck_assert_uint_eq(pmcp__workers_web_cap(1, NULL), 1);
  ck_assert_uint_eq(pmcp__workers_web_cap(8, "junk"), 2);
  ck_assert_uint_eq(pmcp__workers_web_cap(8, "-3"), 2);
}
END_TEST

START_TEST(burst_does_not_delay_others)
{
  setenv("PROBE_MCP_WEB_CAPACITY", "0.25", 1);
  harness *h = h_new(four_workers);
  add(h->srv, "web_slow", web_slow, PMCP_TOOL_OPEN_WEB);
  add(h->srv, "other", other, PMCP_TOOL_BLOCKING);
  h_init(h, NULL, "2025-11-25");
  atomic_store(&running, 0);
  atomic_store(&max_running, 0);
  atomic_store(&done_web, 0);
  for (int i = 0; i < 6; i++)
    call_tool(h, 100 + i, "web_slow");
  usleep(20000); /* the burst is queued and one web call is running */
  double t0 = now_ms();
  for (int i = 0; i < 3; i++)
    call_tool(h, 200 + i, "other");
  int others = 0;
  double last_other = 0;
  while (others < 3) {
    h_msg *m = h_next(h);
    if (strstr(m->data, "\"other\"")) {
      others++;
      last_other = now_ms() - t0;
    }
    h_msg_free(m);
  }
  /* the others answered while the burst still runs, far sooner than the
   * 300 ms of a single web call */
  ck_assert_msg(last_other < 200, "other tools waited %.0f ms behind web calls", last_other);
  ck_assert_int_le(atomic_load(&done_web), 1);
  /* the burst finishes, one at a time (a quarter of 4 workers) */
  int webs = 0;
  while (webs < 6) {
    h_msg *m = h_next(h);
    if (strstr(m->data, "\"web\""))
      webs++;
    h_msg_free(m);
  }
  ck_assert_int_eq(atomic_load(&max_running), 1);
  h_free(h);
}
END_TEST

START_TEST(larger_share_runs_in_parallel)
{
  setenv("PROBE_MCP_WEB_CAPACITY", "2", 1);
  harness *h = h_new(four_workers);
  add(h->srv, "web_slow", web_slow, PMCP_TOOL_OPEN_WEB);
  h_init(h, NULL, "2025-11-25");
  atomic_store(&max_running, 0);
  for (int i = 0; i < 6; i++)
    call_tool(h, 100 + i, "web_slow");
  for (int i = 0; i < 6; i++)
    h_msg_free(h_next(h));
  ck_assert_int_eq(atomic_load(&max_running), 2);
  h_free(h);
}
END_TEST

int main(void)
{
  Suite *su = suite_create("engine-webcap");
  TCase *tc = tcase_create("webcap");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, share_parsing);
  tcase_add_test(tc, burst_does_not_delay_others);
  tcase_add_test(tc, larger_share_runs_in_parallel);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? 1 : 0;
}
