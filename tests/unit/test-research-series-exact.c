/* SPDX-License-Identifier: MIT */
/* `metrics` mode `series` over generated series against brute force on
 * the raw points the test logged: regular, gappy (NaN, +/-Inf), duplicate
 * steps, irregular steps, logged out of step order (a restart), flat,
 * two-valued, tiny, all non-finite, and one of a million points (summarized
 * from block summaries). Every row must keep exactly min(max_points, finite
 * points in range) real points in step order, with the first and last
 * finite steps and the global extremes, and count the points it read. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "probemcp/probemcp.h"
#include "probemcp/research.h"
#include "store-test-util.h"
#include "test-random.h"
#include "tool-call-util.h"

typedef struct gen {
  const char *key;
  const char *rank; /* label rank, or NULL */
  pmcp_point *p;
  size_t n;
  pmcp_point *sorted; /* by (step, value): the "is a real point" lookup */
} gen;

/* After the first nine: long series the rows are made from summaries of
 * (non-finite points at both ends, logged backwards in part, flat, one
 * block and a point, nearly all non-finite, two label sets of one key). */
enum { G_DENSE, G_GAPS, G_DUPS, G_IRREG, G_RESTART, G_FLAT, G_BINARY, G_TINY, G_NAN,
       G_ENDS, G_BACK, G_LFLAT, G_EDGE, G_SPARSE, G_LAB0, G_LAB1, G_N };
static gen G[G_N];

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
  return (double)(tr_next(&rng) >> 11) / 9007199254740992.0;
}

static int pt_order(const void *a, const void *b)
{
  const pmcp_point *x = a, *y = b;
  if (x->step != y->step)
    return x->step < y->step ? -1 : 1;
  return x->value < y->value ? -1 : x->value > y->value;
}

/* 1 when (s, v) is a finite point of @p x (v as the JSON writer rounds). */
static int real_point(const gen *x, int64_t s, double v);

static void make(int g, const char *key, size_t n)
{
  G[g].key = key;
  G[g].n = n;
  G[g].p = malloc(n * sizeof *G[g].p);
  int64_t step = 0;
  for (size_t i = 0; i < n; i++) {
    pmcp_point *p = &G[g].p[i];
    double v = sin((double)i / 997.0) + 0.1 * urand();
    switch (g) {
    case G_DENSE:
      p->step = (int64_t)i;
      if (i == 654321)
        v = 40;
      break;
    case G_GAPS:
      /* four runs far apart, non-finite every 97th */
      p->step = (int64_t)i + (int64_t)(i / 100000) * 50000000;
      if (i % 97 == 3)
        v = i % 3 ? NAN : (i % 2 ? INFINITY : -INFINITY);
      break;
    case G_DUPS:
      p->step = (int64_t)(i / 3);
      break;
    case G_IRREG:
      step += 1 + (int64_t)(urand() * 1000);
      p->step = step;
      break;
    case G_RESTART:
      p->step = i < 20000 ? (int64_t)i : (int64_t)i - 10000;
      break;
    case G_FLAT:
      p->step = (int64_t)i * 2;
      v = 1.5;
      break;
    case G_BINARY:
      p->step = (int64_t)i;
      v = (i / 7) % 2 ? 1 : -1;
      break;
    case G_TINY:
      p->step = (int64_t)i * 10;
      break;
    case G_NAN:
      p->step = (int64_t)i;
      v = i % 2 ? NAN : INFINITY;
      break;
    case G_ENDS:
      /* steps from -123456 by 7; 5,000 non-finite points first and 3,000
       * last (so no summary's first or last value is finite there), a
       * duplicate step under the first finite one */
      p->step = -123456 + (int64_t)i * 7;
      if (i < 5000)
        v = i % 2 ? NAN : -INFINITY;
      else if (i >= n - 3000)
        v = i % 3 ? INFINITY : NAN;
      if (i == 5001)
        p->step = G[g].p[5000].step;
      break;
    case G_BACK:
      /* the upper part logged first, then the lower part backwards: the
       * lowest step is the last point logged */
      p->step = i < n / 2 ? (int64_t)(n / 2 + i) : (int64_t)(n - 1 - i);
      break;
    case G_LFLAT:
      p->step = 1000 + (int64_t)i;
      v = -2.25;
      break;
    case G_EDGE:
      p->step = 7 + 3 * (int64_t)i;
      break;
    case G_SPARSE:
      p->step = (int64_t)i;
      if (i % 1500 != 700)
        v = NAN;
      break;
    default: /* G_LAB0, G_LAB1 */
      p->step = 50 + (int64_t)i;
      if (g == G_LAB1)
        v = -v;
    }
    p->time_ms = 1700000000000 + (int64_t)i;
    p->value = v;
  }
  G[g].sorted = malloc(n * sizeof *G[g].sorted);
  memcpy(G[g].sorted, G[g].p, n * sizeof *G[g].p);
  qsort(G[g].sorted, n, sizeof *G[g].sorted, pt_order);
}

static void fill(void)
{
  make(G_DENSE, "dense", 1000000);
  make(G_GAPS, "gaps", 400000);
  make(G_DUPS, "dups", 60000);
  make(G_IRREG, "irregular", 30000);
  make(G_RESTART, "restart", 40000);
  make(G_FLAT, "flat", 20000);
  make(G_BINARY, "binary", 9000);
  make(G_TINY, "tiny", 6);
  make(G_NAN, "allnan", 50);
  make(G_ENDS, "ends", 300000);
  make(G_BACK, "backwards", 280000);
  make(G_LFLAT, "longflat", 300000);
  make(G_EDGE, "edge", 16384 * 17 + 1);
  make(G_SPARSE, "sparse", 450000);
  make(G_LAB0, "lab", 270000);
  make(G_LAB1, "lab", 5000);
  G[G_LAB0].rank = "0";
  G[G_LAB1].rank = "1";
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "g";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  ST_OK(s, pmcp_store_begin(s));
  for (int g = 0; g < G_N; g++) {
    pmcp_label l = {"rank", G[g].rank};
    pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, G[g].key, G[g].rank ? &l : NULL,
                           G[g].rank ? 1 : 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
    int64_t id;
    ST_OK(s, pmcp_store_series(s, t, "g", &sp, &id));
    ST_OK(s, pmcp_store_log(s, t, id, G[g].p, G[g].n));
  }
  ST_OK(s, pmcp_store_commit(s));
  pmcp_store_free(s);
}

/* The JSON writer rounds: a value matches within this. */
static int near(double a, double b)
{
  return fabs(a - b) <= 1e-5 * fabs(b) + 1e-9;
}

static int real_point(const gen *x, int64_t s, double v)
{
  size_t a = 0, b = x->n; /* the first point of step >= s */
  while (a < b) {
    size_t mid = a + (b - a) / 2;
    if (x->sorted[mid].step < s)
      a = mid + 1;
    else
      b = mid;
  }
  for (; a < x->n && x->sorted[a].step == s; a++)
    if (isfinite(x->sorted[a].value) && near(v, x->sorted[a].value))
      return 1;
  return 0;
}

static void check(int g, int64_t from, int64_t to, int max_points)
{
  const gen *x = &G[g];
  char args[640], where[128] = "";
  if (x->rank)
    snprintf(where, sizeof where,
             ",\"where\":[{\"attr\":\"rank\",\"op\":\"eq\",\"value\":\"%s\"}]", x->rank);
  snprintf(args, sizeof args,
           "{\"mode\":\"series\",\"run_ids\":[\"g\"],\"keys\":[\"%s\"],\"max_points\":%d,"
           "\"step_from\":%lld,\"step_to\":%lld,\"token_budget\":8000%s}",
           x->key, max_points, (long long)from, (long long)to, where);
  /* brute force over the raw points */
  uint64_t total = 0, nonfinite = 0, finite = 0;
  int64_t first = INT64_MAX, last = INT64_MIN;
  double vmin = INFINITY, vmax = -INFINITY;
  for (size_t i = 0; i < x->n; i++) {
    const pmcp_point *p = &x->p[i];
    if (p->step < from || p->step > to)
      continue;
    total++;
    if (!isfinite(p->value)) {
      nonfinite++;
      continue;
    }
    finite++;
    first = p->step < first ? p->step : first;
    last = p->step > last ? p->step : last;
    vmin = p->value < vmin ? p->value : vmin;
    vmax = p->value > vmax ? p->value : vmax;
  }
  cJSON *o = tc_ok("metrics", args);
  const cJSON *rows = tc_arr(o, "series");
  ck_assert_int_eq(cJSON_GetArraySize(rows), 1);
  const cJSON *row = cJSON_GetArrayItem(rows, 0);
  ck_assert_msg((uint64_t)tc_num(row, "points") == total, "%s: points %g, want %llu", x->key,
                tc_num(row, "points"), (unsigned long long)total);
  const cJSON *nf = cJSON_GetObjectItem(row, "non_finite");
  ck_assert_int_eq(nf ? (uint64_t)nf->valuedouble : 0, nonfinite);
  const cJSON *st = tc_arr(row, "step"), *va = tc_arr(row, "value");
  int m = cJSON_GetArraySize(st);
  uint64_t want = finite < (uint64_t)max_points ? finite : (uint64_t)max_points;
  ck_assert_msg((uint64_t)m == want, "%s %lld..%lld max_points %d: kept %d, want %llu", x->key,
                (long long)from, (long long)to, max_points, m, (unsigned long long)want);
  ck_assert_int_eq(cJSON_GetArraySize(va), m);
  ck_assert_int_eq((int)tc_num(row, "kept"), m);
  ck_assert_msg(!!cJSON_GetObjectItem(row, "kept_fewer") == (want < (uint64_t)max_points),
                "%s: kept_fewer iff fewer", x->key);
  int has_min = 0, has_max = 0;
  int64_t prev = INT64_MIN;
  for (int i = 0; i < m; i++) {
    int64_t s = (int64_t)cJSON_GetArrayItem(st, i)->valuedouble;
    double v = cJSON_GetArrayItem(va, i)->valuedouble;
    ck_assert_msg(s >= prev, "%s: steps out of order at %d", x->key, i);
    prev = s;
    ck_assert_msg(real_point(x, s, v), "%s: (%lld, %g) is not a point of the series", x->key, (long long)s, v);
    has_min |= near(v, vmin);
    has_max |= near(v, vmax);
  }
  if (m) {
    ck_assert_int_eq((int64_t)cJSON_GetArrayItem(st, 0)->valuedouble, first);
    ck_assert_int_eq((int64_t)cJSON_GetArrayItem(st, m - 1)->valuedouble, last);
    ck_assert_msg(has_min && has_max, "%s: global extremes %g %g kept", x->key, vmin, vmax);
  }
  cJSON_Delete(o);
}

static void setup(void)
{
  fill();
  tc_serve_research(st_path);
}

static void teardown(void)
{
  tc_server_free();
  st_cleanup();
  for (int g = 0; g < G_N; g++) {
    free(G[g].p);
    free(G[g].sorted);
  }
}

static const int MP[] = {4, 5, 7, 100, 101, 600, 800};

START_TEST(series_keeps_exactly_max_points)
{
  int g = _i;
  int64_t lo = G[g].p[0].step, hi = lo;
  for (size_t i = 0; i < G[g].n; i++) {
    lo = G[g].p[i].step < lo ? G[g].p[i].step : lo;
    hi = G[g].p[i].step > hi ? G[g].p[i].step : hi;
  }
  for (size_t k = 0; k < sizeof MP / sizeof *MP; k++) {
    check(g, -1000000000000000, 1000000000000000, MP[k]);
    check(g, lo + (hi - lo) / 3, lo + (hi - lo) / 3 * 2, MP[k]); /* a middle third */
  }
  check(g, lo, lo + 3, 4); /* a few steps */
  /* ends inside blocks and segments, at odd places */
  check(g, lo + (hi - lo) / 7, hi - (hi - lo) / 11, 100);
  check(g, lo + 1, hi - 1, 37);
}
END_TEST

int main(void)
{
  int skip = st_backend_check(); /* PMCP_TEST_STORE=pg without a cluster */
  if (skip)
    return skip;
  Suite *su = suite_create("research-series-exact");
  TCase *tc = tcase_create("series");
  tcase_set_timeout(tc, 600);
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, series_keeps_exactly_max_points, 0, G_N);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? 1 : 0;
}
