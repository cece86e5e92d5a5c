/* SPDX-License-Identifier: MIT */
/* query_sql's bounds (research/long_calls.h): statements per principal and
 * in all, checked against a model over random admissions and ends, the
 * environment's bounds, more principals than slots, and the ticket lock's
 * order. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probemcp/error.h"
#include "research/long_calls.h"

static void clear_env(void)
{
  unsetenv("PROBE_MCP_SQL_MAX");
  unsetenv("PROBE_MCP_SQL_PER_CALLER");
}

/* Random enters and leaves of 5 principals against counts kept here. */
static void model_run(size_t total, size_t per, unsigned seed)
{
  pmcp__long_calls l;
  pmcp__long_init(&l);
  static const char *who[] = {"key:a", "key:b", "user:c", "", "key:a2"};
  size_t n[5] = {0}, all = 0;
  srand(seed);
  for (int step = 0; step < 20000; step++) {
    int w = rand() % 5;
    if (rand() % 2 && n[w]) {
      pmcp__long_leave(&l, who[w]);
      n[w]--;
      all--;
      continue;
    }
    char msg[200] = "";
    int rc = pmcp__long_enter(&l, NULL, who[w], msg, sizeof msg);
    int want = (n[w] < per || !*who[w]) && all < total; /* "": no principal known */
    ck_assert_int_eq(rc == 0, want);
    if (rc == 0) {
      n[w]++;
      all++;
    } else {
      ck_assert_int_eq(rc, PMCP_ETIMEOUT);
      ck_assert(strncmp(msg, "busy: ", 6) == 0);
      ck_assert(strstr(msg, "retry") != NULL);
      ck_assert(strstr(msg, n[w] >= per && *who[w] ? "of this caller" : "the server runs") !=
                NULL);
    }
  }
  ck_assert_uint_eq(l.running, all);
  pmcp__long_dispose(&l);
}

START_TEST(defaults_match_the_model)
{
  clear_env();
  /* no server: a pool of 4 workers, 2 statements in all, 1 per caller */
  model_run(2, 1, 1);
}
END_TEST

START_TEST(environment_bounds)
{
  clear_env();
  setenv("PROBE_MCP_SQL_MAX", "7", 1);
  model_run(7, 3, 2); /* per caller: half of the total */
  setenv("PROBE_MCP_SQL_PER_CALLER", "5", 1);
  model_run(7, 5, 3);
  setenv("PROBE_MCP_SQL_MAX", "0", 1); /* invalid: the default */
  setenv("PROBE_MCP_SQL_PER_CALLER", "-1", 1);
  model_run(2, 1, 4);
  setenv("PROBE_MCP_SQL_MAX", "3x", 1);
  setenv("PROBE_MCP_SQL_PER_CALLER", "1", 1);
  model_run(2, 1, 5);
  clear_env();
}
END_TEST

START_TEST(more_principals_than_slots)
{
  clear_env();
  setenv("PROBE_MCP_SQL_MAX", "1000", 1);
  setenv("PROBE_MCP_SQL_PER_CALLER", "1", 1);
  pmcp__long_calls l;
  pmcp__long_init(&l);
  char who[40], msg[200];
  for (int i = 0; i < PMCP__LONG_SLOTS; i++) {
    snprintf(who, sizeof who, "key:%d", i);
    ck_assert_int_eq(pmcp__long_enter(&l, NULL, who, msg, sizeof msg), 0);
  }
  ck_assert_int_eq(pmcp__long_enter(&l, NULL, "key:late", msg, sizeof msg), PMCP_ETIMEOUT);
  pmcp__long_leave(&l, "key:7");
  ck_assert_int_eq(pmcp__long_enter(&l, NULL, "key:late", msg, sizeof msg), 0);
  ck_assert_int_eq(pmcp__long_enter(&l, NULL, "key:late", msg, sizeof msg), PMCP_ETIMEOUT);
  /* a name longer than a slot holds is still one principal */
  char longer[200];
  memset(longer, 'k', sizeof longer - 1);
  longer[sizeof longer - 1] = '\0';
  pmcp__long_leave(&l, "key:8");
  ck_assert_int_eq(pmcp__long_enter(&l, NULL, longer, msg, sizeof msg), 0);
  ck_assert_int_eq(pmcp__long_enter(&l, NULL, longer, msg, sizeof msg), PMCP_ETIMEOUT);
  pmcp__long_leave(&l, longer);
  ck_assert_int_eq(pmcp__long_enter(&l, NULL, longer, msg, sizeof msg), 0);
  ck_assert_uint_eq(l.running, PMCP__LONG_SLOTS);
  pmcp__long_dispose(&l);
  clear_env();
}
END_TEST

#define N_WAITERS 6
static pmcp__fifo fifo;
static int order[N_WAITERS], n_order;

static void *waiter(void *arg)
{
  pmcp__fifo_lock(&fifo);
  order[n_order++] = (int)(size_t)arg;
  usleep(1000); /* a later ticket must not slip in meanwhile */
  pmcp__fifo_unlock(&fifo);
  return NULL;
}

static unsigned long tickets(void)
{
  pthread_mutex_lock(&fifo.mu);
  unsigned long n = fifo.next;
  pthread_mutex_unlock(&fifo.mu);
  return n;
}

START_TEST(fifo_in_the_order_asked)
{
  pmcp__fifo_init(&fifo);
  n_order = 0;
  pmcp__fifo_lock(&fifo);
  pthread_t th[N_WAITERS];
  for (int i = 0; i < N_WAITERS; i++) {
    ck_assert_int_eq(pthread_create(&th[i], NULL, waiter, (void *)(size_t)i), 0);
    while (tickets() != (unsigned long)i + 2)
      usleep(200); /* thread i holds its ticket before i + 1 starts */
  }
  pmcp__fifo_unlock(&fifo);
  for (int i = 0; i < N_WAITERS; i++)
    pthread_join(th[i], NULL);
  ck_assert_int_eq(n_order, N_WAITERS);
  for (int i = 0; i < N_WAITERS; i++)
    ck_assert_int_eq(order[i], i);
  pmcp__fifo_dispose(&fifo);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("long-calls");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, defaults_match_the_model);
  tcase_add_test(tc, environment_bounds);
  tcase_add_test(tc, more_principals_than_slots);
  tcase_add_test(tc, fifo_in_the_order_asked);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
