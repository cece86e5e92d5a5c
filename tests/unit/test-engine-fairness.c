/* SPDX-License-Identifier: MIT */
/* The worker pool is fair among callers: a caller (the session's user
 * data, one object per HTTP principal) runs at most
 * PROBE_MCP_WORKERS_PER_CALLER of the workers at once; its further calls
 * wait in the queue, not refused, while another caller's call starts at
 * once. Calls without a caller (stdio) still take the whole pool. Checked
 * by which calls have started while the others are held, never by time. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/workers.h"
#include "engine-harness.h"

/* Callers: A floods, B comes later; NONE is a session without user data. */
enum { A, B, NONE, N_WHO };
static int ident_a, ident_b;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int open_gate;
static int started[N_WHO], running[N_WHO], max_running[N_WHO], finished[N_WHO];

static int who_of(pmcp_call *call)
{
  void *ud = pmcp_call_session_ud(call);
  return ud == &ident_a ? A : ud == &ident_b ? B : NONE;
}

/* Blocks until the test opens the gate. */
static int hold(pmcp_call *call, void *ud)
{
  (void)ud;
  int w = who_of(call);
  pthread_mutex_lock(&mu);
  started[w]++;
  if (++running[w] > max_running[w])
    max_running[w] = running[w];
  pthread_cond_broadcast(&cv);
  while (!open_gate)
    pthread_cond_wait(&cv, &mu);
  running[w]--;
  finished[w]++;
  pthread_mutex_unlock(&mu);
  return pmcp_result_text(call, "held", 4);
}

static void reset(void)
{
  pthread_mutex_lock(&mu);
  open_gate = 0;
  memset(started, 0, sizeof started);
  memset(running, 0, sizeof running);
  memset(max_running, 0, sizeof max_running);
  memset(finished, 0, sizeof finished);
  pthread_mutex_unlock(&mu);
}

static void open_the_gate(void)
{
  pthread_mutex_lock(&mu);
  open_gate = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

/* Waits (up to 10 s, a bound against a hang, not a measurement) until
 * @p who has started @p n calls; returns how many it has. */
static int wait_started(int who, int n)
{
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += 10;
  pthread_mutex_lock(&mu);
  while (started[who] < n && pthread_cond_timedwait(&cv, &mu, &dl) == 0)
    ;
  int got = started[who];
  pthread_mutex_unlock(&mu);
  return got;
}

static int get(int *arr, int who)
{
  pthread_mutex_lock(&mu);
  int v = arr[who];
  pthread_mutex_unlock(&mu);
  return v;
}

static void four_workers(pmcp_server_options *o)
{
  o->workers = 4;
}

static harness *server(void)
{
  harness *h = h_new(four_workers);
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = "hold";
  d.handler = hold;
  d.flags = PMCP_TOOL_BLOCKING;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &d), 0);
  ck_assert_int_eq(pmcp_server_session_open(h->srv, "a", 0, &ident_a), 0);
  ck_assert_int_eq(pmcp_server_session_open(h->srv, "b", 0, &ident_b), 0);
  h_init(h, "a", "2025-11-25");
  h_init(h, "b", "2025-11-25");
  h_init(h, NULL, "2025-11-25");
  return h;
}

static void call_hold(harness *h, const char *session, int id)
{
  char buf[160];
  snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"hold\"}}", id);
  h_send(h, session, buf);
}

static void flood(harness *h, const char *session, int n)
{
  for (int i = 0; i < n; i++)
    call_hold(h, session, 100 + i);
}

/* Reads @p n answers, each a result (none refused as busy). */
static void expect_answers(harness *h, int n)
{
  for (int i = 0; i < n; i++) {
    h_msg *m = h_next(h);
    ck_assert_msg(strstr(m->data, "\"held\"") != NULL, "not a result: %s", m->data);
    h_msg_free(m);
  }
}

START_TEST(cap_parsing)
{
  ck_assert_uint_eq(pmcp__workers_key_cap(4, NULL), 2);
  ck_assert_uint_eq(pmcp__workers_key_cap(5, NULL), 2);
  ck_assert_uint_eq(pmcp__workers_key_cap(1, NULL), 1); /* at least one */
  ck_assert_uint_eq(pmcp__workers_key_cap(2, NULL), 1);
  ck_assert_uint_eq(pmcp__workers_key_cap(8, "3"), 3);
  ck_assert_uint_eq(pmcp__workers_key_cap(8, "99"), 8); /* never past the pool */
  ck_assert_uint_eq(pmcp__workers_key_cap(8, "0"), 4);
  ck_assert_uint_eq(pmcp__workers_key_cap(8, "-1"), 4);
  ck_assert_uint_eq(pmcp__workers_key_cap(8, "2x"), 4);
  ck_assert_uint_eq(pmcp__workers_key_cap(8, ""), 4);
}
END_TEST

START_TEST(flood_leaves_workers_for_others)
{
  unsetenv("PROBE_MCP_WORKERS_PER_CALLER");
  reset();
  harness *h = server();
  flood(h, "a", 6);
  ck_assert_int_eq(wait_started(A, 2), 2);
  /* A's other four wait in the queue, not refused and not started */
  ck_assert_uint_eq(pmcp__workers_waiting(h->srv), 4);
  ck_assert_int_eq(h_pending(h), 0);
  /* B's call, queued behind A's four, starts while A's are all held */
  call_hold(h, "b", 200);
  ck_assert_int_eq(wait_started(B, 1), 1);
  ck_assert_int_eq(get(started, A), 2);
  ck_assert_uint_eq(pmcp__workers_waiting(h->srv), 4);
  /* a caller without identity still finds the last worker */
  call_hold(h, NULL, 300);
  ck_assert_int_eq(wait_started(NONE, 1), 1);
  ck_assert_int_eq(get(started, A), 2);
  open_the_gate();
  expect_answers(h, 8);
  ck_assert_int_eq(get(finished, A), 6);
  ck_assert_int_eq(get(max_running, A), 2);
  h_free(h);
}
END_TEST

START_TEST(cap_is_configurable)
{
  setenv("PROBE_MCP_WORKERS_PER_CALLER", "3", 1);
  reset();
  harness *h = server();
  flood(h, "a", 6);
  ck_assert_int_eq(wait_started(A, 3), 3);
  ck_assert_uint_eq(pmcp__workers_waiting(h->srv), 3);
  call_hold(h, "b", 200);
  ck_assert_int_eq(wait_started(B, 1), 1);
  ck_assert_int_eq(get(started, A), 3);
  open_the_gate();
  expect_answers(h, 7);
  ck_assert_int_eq(get(max_running, A), 3);
  h_free(h);
  unsetenv("PROBE_MCP_WORKERS_PER_CALLER");
}
END_TEST

/* The public call sets the cap, over the environment's; 0 is the default
 * half again, and a bad server is refused. */
START_TEST(cap_by_api)
{
  setenv("PROBE_MCP_WORKERS_PER_CALLER", "3", 1);
  reset();
  harness *h = server();
  ck_assert_int_eq(pmcp_server_set_caller_workers(NULL, 1), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_server_set_caller_workers(h->srv, 2000000), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_server_set_caller_workers(h->srv, 1), 0);
  flood(h, "a", 5);
  ck_assert_int_eq(wait_started(A, 1), 1);
  ck_assert_uint_eq(pmcp__workers_waiting(h->srv), 4);
  /* B still gets a worker at once */
  call_hold(h, "b", 200);
  ck_assert_int_eq(wait_started(B, 1), 1);
  ck_assert_int_eq(get(started, A), 1);
  /* raised while A's calls wait: one more of them starts, no more */
  ck_assert_int_eq(pmcp_server_set_caller_workers(h->srv, 2), 0);
  ck_assert_int_eq(wait_started(A, 2), 2);
  ck_assert_uint_eq(pmcp__workers_waiting(h->srv), 3);
  open_the_gate();
  expect_answers(h, 6);
  ck_assert_int_eq(get(max_running, A), 2);
  h_free(h);
  /* past the pool: the pool; 0: half of it */
  reset();
  h = server();
  ck_assert_int_eq(pmcp_server_set_caller_workers(h->srv, 99), 0);
  ck_assert_int_eq(pmcp_server_set_caller_workers(h->srv, 0), 0);
  flood(h, "a", 4);
  ck_assert_int_eq(wait_started(A, 2), 2);
  ck_assert_uint_eq(pmcp__workers_waiting(h->srv), 2);
  open_the_gate();
  expect_answers(h, 4);
  ck_assert_int_eq(get(max_running, A), 2);
  h_free(h);
  unsetenv("PROBE_MCP_WORKERS_PER_CALLER");
}
END_TEST

/* One caller without identity (stdio) takes the whole pool, as before. */
START_TEST(no_caller_takes_the_pool)
{
  unsetenv("PROBE_MCP_WORKERS_PER_CALLER");
  reset();
  harness *h = server();
  flood(h, NULL, 6);
  ck_assert_int_eq(wait_started(NONE, 4), 4);
  ck_assert_uint_eq(pmcp__workers_waiting(h->srv), 2);
  open_the_gate();
  expect_answers(h, 6);
  ck_assert_int_eq(get(max_running, NONE), 4);
  h_free(h);
}
END_TEST

/* Freeing the server with calls over their caller's cap still queued
 * returns: the workers stay until the queues are dry (the queued calls,
 * cancelled by then or not, each end), never leaving a call behind that
 * the server would wait for forever. */
START_TEST(stop_runs_queue_dry)
{
  unsetenv("PROBE_MCP_WORKERS_PER_CALLER");
  reset();
  harness *h = server();
  flood(h, "a", 6);
  ck_assert_int_eq(wait_started(A, 2), 2);
  ck_assert_uint_eq(pmcp__workers_waiting(h->srv), 4);
  open_the_gate();
  h_free(h);
  ck_assert_int_ge(get(finished, A), 2);
  ck_assert_int_eq(get(max_running, A), 2);
}
END_TEST

int main(void)
{
  Suite *su = suite_create("engine-fairness");
  TCase *tc = tcase_create("fairness");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, cap_parsing);
  tcase_add_test(tc, flood_leaves_workers_for_others);
  tcase_add_test(tc, cap_by_api);
  tcase_add_test(tc, cap_is_configurable);
  tcase_add_test(tc, no_caller_takes_the_pool);
  tcase_add_test(tc, stop_runs_queue_dry);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? 1 : 0;
}
