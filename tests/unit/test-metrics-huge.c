/* SPDX-License-Identifier: MIT */
/* Float series whose values are finite but whose sums do not fit a double
 * (values near +/-DBL_MAX, blocks of huge values that cancel, pairs that
 * overflow on the way), and subnormals, against brute force over the raw
 * points in long double (x86-64: a 15-bit exponent, so these sums fit):
 * the store's summaries (step and time buckets), the series list's mean,
 * and the metrics tool's summaries, grouped and series modes. Counts,
 * extremes, first and last must be exact; a sum is the true one rounded
 * (+/-Inf only when the true one is out of a double's range, never NaN);
 * a mean is the true one. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "probemcp/probemcp.h"
#include "probemcp/research.h"
#include "probemcp/tracking.h"
#include "store-test-util.h"
#include "test-random.h"
#include "tool-call-util.h"

#define BLOCK 16384

typedef struct gen {
  const char *key;
  pmcp_point *p;
  size_t n;
} gen;

enum { G_HUGE, G_NEG, G_BLOCKS, G_PAIRS, G_TWO, G_SUB, G_MAXED, G_N };
static gen G[G_N];

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
  return (double)(tr_next(&rng) >> 11) / 9007199254740992.0;
}

static void make(int g, const char *key, size_t n)
{
  G[g].key = key;
  G[g].n = n;
  G[g].p = malloc(n * sizeof *G[g].p);
  for (size_t i = 0; i < n; i++) {
    pmcp_point *p = &G[g].p[i];
    double v;
    switch (g) {
    case G_HUGE: /* every sum of two overflows; a few NaN */
      v = i % 1001 == 5 ? NAN : 1e308 * (0.9 + 0.1 * urand());
      break;
    case G_NEG:
      v = -1e308 * (0.5 + 0.5 * urand());
      break;
    case G_BLOCKS: /* whole blocks of +1.5e308 and of -1.5e308, small values between */
      v = i % 7 == 3 ? urand() : (i / BLOCK) % 2 ? -1.5e308 : 1.5e308;
      break;
    case G_PAIRS: /* +M +M -M -M ...: the running sum overflows, the total is small */
      v = i % 11 == 0 ? 1 + urand() : (i / 2) % 2 ? -DBL_MAX : DBL_MAX;
      break;
    case G_TWO:
      v = 1e308;
      break;
    case G_SUB: /* subnormals: exact sums */
      v = DBL_TRUE_MIN * (double)(i % 1000) * (i % 3 ? 1 : -1);
      break;
    default: /* DBL_MAX and the next one down */
      v = i % 2 ? DBL_MAX : nextafter(DBL_MAX, 0);
    }
    p->step = (int64_t)i;
    p->time_ms = 1700000000000 + (int64_t)i * 3;
    p->value = v;
  }
}

static void fill(void)
{
  make(G_HUGE, "huge", 3 * BLOCK + 500);
  make(G_NEG, "neg", 2 * BLOCK + 7);
  make(G_BLOCKS, "blocks", 4 * BLOCK);
  make(G_PAIRS, "pairs", 2 * BLOCK + 1001);
  make(G_TWO, "two", 2);
  make(G_SUB, "sub", 20000);
  make(G_MAXED, "maxed", BLOCK + 3);
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  pmcp_entity_spec pj = PMCP_ENTITY_SPEC_INIT;
  pj.name = pj.id = "p";
  ST_OK(s, pmcp_store_create(s, t, "project", &pj, NULL));
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "h";
  r.project = "p";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  for (int g = 0; g < G_N; g++) {
    pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, G[g].key, NULL, 0, PMCP_METRIC_FLOAT,
                           PMCP_SCALE_STEP};
    int64_t id;
    ST_OK(s, pmcp_store_series(s, t, "h", &sp, &id));
    /* in pieces, so partial tail blocks are reloaded and rewritten */
    for (size_t at = 0; at < G[g].n; at += 5000) {
      size_t k = G[g].n - at < 5000 ? G[g].n - at : 5000;
      ST_OK(s, pmcp_store_log(s, t, id, G[g].p + at, k));
    }
  }
  /* first and last values that are not finite, beside finite ones near
   * DBL_MAX: the list's clamping of those must leave these alone */
  pmcp_series_spec se = {PMCP_SERIES_SPEC_VERSION, "ends", NULL, 0, PMCP_METRIC_FLOAT,
                         PMCP_SCALE_STEP};
  int64_t eid;
  ST_OK(s, pmcp_store_series(s, t, "h", &se, &eid));
  pmcp_point ends[4] = {{0}};
  double ev[4] = {INFINITY, DBL_MAX, -DBL_MAX, NAN};
  for (int i = 0; i < 4; i++) {
    ends[i].step = i;
    ends[i].value = ev[i];
  }
  ST_OK(s, pmcp_store_log(s, t, eid, ends, 4));
  pmcp_store_free(s);
}

/* The truth over the points of @p g with steps in [lo, hi]. */
typedef struct truth {
  uint64_t count, nonfinite;
  long double sum, abs;
  double min, max, first, last;
} truth;

static truth brute(int g, int64_t lo, int64_t hi)
{
  truth w = {0, 0, 0, 0, NAN, NAN, NAN, NAN};
  for (size_t i = 0; i < G[g].n; i++) {
    const pmcp_point *p = &G[g].p[i];
    if (p->step < lo || p->step > hi)
      continue;
    if (!w.count)
      w.first = p->value;
    w.last = p->value;
    w.count++;
    double v = p->value;
    if (!isfinite(v)) {
      w.nonfinite++;
      continue;
    }
    w.sum += v;
    w.abs += fabsl((long double)v);
    if (!(v >= w.min))
      w.min = v;
    if (!(v <= w.max))
      w.max = v;
  }
  return w;
}

static double sum_tol(const truth *w)
{
  return (double)(w->abs * 1e-12L) + DBL_TRUE_MIN;
}

/* @p got is the true sum rounded, or +/-Inf only when it does not fit. */
static void check_sum(const char *what, double got, const truth *w)
{
  ck_assert_msg(!isnan(got), "%s: sum is NaN (true %Lg)", what, w->sum);
  if (fabsl(w->sum) > (long double)DBL_MAX + sum_tol(w)) {
    ck_assert_msg(isinf(got) && (got > 0) == (w->sum > 0), "%s: sum %g, true %Lg", what, got,
                  w->sum);
    return;
  }
  /* within rounding of the largest double it may round either way */
  if (fabsl(w->sum) + sum_tol(w) > (long double)DBL_MAX && isinf(got) &&
      (got > 0) == (w->sum > 0))
    return;
  ck_assert_msg(isfinite(got) && fabsl((long double)got - w->sum) <= sum_tol(w),
                "%s: sum %g, true %Lg", what, got, w->sum);
}

static void check_mean(const char *what, double got, const truth *w, double rel)
{
  uint64_t nf = w->count - w->nonfinite;
  long double m = w->sum / (long double)nf;
  /* a mean among subnormals is known to the nearest one */
  double tol = sum_tol(w) / (double)nf + rel * fabs((double)m) + DBL_TRUE_MIN;
  ck_assert_msg(isfinite(got) && fabsl((long double)got - m) <= tol, "%s: mean %.17g, true %.17Lg",
                what, got, m);
}

static pmcp_store *ro_open(pmcp_tenant *t)
{
  pmcp_store *s = NULL;
  int rc = pmcp_store_open(&s, st_path, 0);
  ck_assert_msg(rc == 0, "open: %d %s", rc, pmcp_store_errmsg(s));
  ST_OK(s, pmcp_store_tenant(s, NULL, 0, t));
  return s;
}

static int64_t series_id(pmcp_store *s, pmcp_tenant t, int g)
{
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, G[g].key, NULL, 0, PMCP_METRIC_FLOAT,
                         PMCP_SCALE_STEP};
  int64_t id;
  ST_OK(s, pmcp_store_series(s, t, "h", &sp, &id));
  return id;
}

static void check_bucket(int g, const pmcp_bucket *b, int by_time)
{
  char what[96];
  snprintf(what, sizeof what, "%s %s bucket %lld..%lld", G[g].key, by_time ? "time" : "step",
           (long long)b->step_min, (long long)b->step_max);
  /* steps are unique and times grow with them: a bucket is a step range */
  truth w = brute(g, b->step_min, b->step_max);
  ck_assert_msg(b->count == w.count && b->nonfinite == w.nonfinite, "%s: count %llu/%llu", what,
                (unsigned long long)b->count, (unsigned long long)w.count);
  if (w.count > w.nonfinite) {
    ck_assert_msg(b->min == w.min && b->max == w.max, "%s: min %g max %g, true %g %g", what,
                  b->min, b->max, w.min, w.max);
  }
  ck_assert(b->first == w.first || (isnan(b->first) && isnan(w.first)));
  ck_assert(b->last == w.last || (isnan(b->last) && isnan(w.last)));
  check_sum(what, b->sum, &w);
}

START_TEST(store_summaries_exact)
{
  int g = _i;
  pmcp_tenant t;
  pmcp_store *s = ro_open(&t);
  int64_t id = series_id(s, t, g);
  static const size_t NB[] = {1, 2, 3, 7, 64};
  pmcp_bucket out[64];
  for (size_t k = 0; k < sizeof NB / sizeof *NB; k++) {
    size_t n = 0;
    ST_OK(s, pmcp_store_summary(s, t, id, INT64_MIN, INT64_MAX, NB[k], out, &n));
    ck_assert_uint_ge(n, 1);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
      check_bucket(g, &out[i], 0);
      total += out[i].count;
    }
    ck_assert_uint_eq(total, G[g].n);
    /* a cut range: blocks split at both ends */
    int64_t lo = (int64_t)G[g].n / 5, hi = (int64_t)G[g].n - (int64_t)G[g].n / 7;
    ST_OK(s, pmcp_store_summary(s, t, id, lo, hi, NB[k], out, &n));
    for (size_t i = 0; i < n; i++)
      check_bucket(g, &out[i], 0);
    ST_OK(s, pmcp_store_summary_time(s, t, id, INT64_MIN, INT64_MAX, NB[k], out, &n));
    for (size_t i = 0; i < n; i++)
      check_bucket(g, &out[i], 1);
  }
  pmcp_store_free(s);
}
END_TEST

START_TEST(series_list_mean)
{
  pmcp_tenant t;
  pmcp_store *s = ro_open(&t);
  pmcp_buf out = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_series_list(s, t, "h", &out));
  cJSON *o = st_json(&out);
  const cJSON *it;
  int seen = 0;
  cJSON_ArrayForEach(it, cJSON_GetObjectItem(o, "items"))
  {
    const char *key = cJSON_GetObjectItem(it, "key")->valuestring;
    for (int g = 0; g < G_N; g++) {
      if (strcmp(key, G[g].key))
        continue;
      seen++;
      truth w = brute(g, INT64_MIN, INT64_MAX);
      const cJSON *m = cJSON_GetObjectItem(it, "mean");
      /* The list adds its blocks' stored sums: with one out of range the
       * mean is not known there (null, never a wrong number); the metrics
       * tool then takes it from the points. */
      int lost = 0;
      for (int64_t b = 0; b * BLOCK < (int64_t)G[g].n; b++) {
        truth wb = brute(g, b * BLOCK, b * BLOCK + BLOCK - 1);
        lost |= fabsl(wb.sum) > (long double)DBL_MAX;
      }
      if (lost && (!m || cJSON_IsNull(m)))
        continue;
      ck_assert_msg(cJSON_IsNumber(m), "%s: series list mean missing (%s)", key,
                    m ? cJSON_PrintUnformatted(m) : "absent");
      check_mean(key, m->valuedouble, &w, 1e-14);
      double mn = cJSON_GetObjectItem(it, "min")->valuedouble,
             mx = cJSON_GetObjectItem(it, "max")->valuedouble;
      /* the list keeps 15 significant digits, never rounding past DBL_MAX */
      ck_assert_msg(isfinite(mn) && isfinite(mx) && fabs(mn - w.min) <= 1e-14 * fabs(w.min) &&
                        fabs(mx - w.max) <= 1e-14 * fabs(w.max),
                    "%s: min %.17g max %.17g, true %.17g %.17g", key, mn, mx, w.min, w.max);
    }
  }
  ck_assert_int_eq(seen, G_N);
  /* +Inf first and NaN last are not finite numbers in the list */
  cJSON_ArrayForEach(it, cJSON_GetObjectItem(o, "items"))
  {
    if (strcmp(cJSON_GetObjectItem(it, "key")->valuestring, "ends"))
      continue;
    seen++;
    const cJSON *f = cJSON_GetObjectItem(it, "first"), *l = cJSON_GetObjectItem(it, "last");
    char *txt = cJSON_PrintUnformatted(it);
    ck_assert_msg(!(cJSON_IsNumber(f) && isfinite(f->valuedouble)) &&
                      !(cJSON_IsNumber(l) && isfinite(l->valuedouble)),
                  "a first of +Inf and a last of NaN came out as finite numbers: %s", txt);
    cJSON_free(txt);
  }
  ck_assert_int_eq(seen, G_N + 1);
  cJSON_Delete(o);
  pmcp_buf_dispose(&out);
  pmcp_store_free(s);
}
END_TEST

/* The tool writes 6 significant digits. */
#define REL 1e-5

START_TEST(tool_summaries_avg)
{
  cJSON *o = tc_ok("metrics", "{\"mode\":\"summaries\",\"run_ids\":[\"h\"]}");
  const cJSON *it;
  int seen = 0;
  cJSON_ArrayForEach(it, tc_arr(o, "series"))
  {
    const char *key = tc_str(it, "key");
    for (int g = 0; g < G_N; g++) {
      if (strcmp(key, G[g].key))
        continue;
      seen++;
      truth w = brute(g, INT64_MIN, INT64_MAX);
      ck_assert_msg(cJSON_GetObjectItem(it, "avg"), "%s: no avg", key);
      check_mean(key, tc_num(it, "avg"), &w, REL);
      ck_assert_uint_eq((uint64_t)tc_num(it, "count"), w.count);
    }
  }
  ck_assert_int_eq(seen, G_N);
  cJSON_Delete(o);
}
END_TEST

START_TEST(tool_grouped_buckets)
{
  int g = _i;
  static const int64_t W[] = {1000, BLOCK, 3 * BLOCK, 1 << 20};
  for (size_t k = 0; k < sizeof W / sizeof *W; k++) {
    char args[400];
    snprintf(args, sizeof args,
             "{\"mode\":\"grouped\",\"run_id\":\"h\",\"key\":\"%s\",\"step_bucket\":%lld,"
             "\"agg\":[\"mean\",\"min\",\"max\",\"count\",\"sum\"],\"token_budget\":8000}",
             G[g].key, (long long)W[k]);
    cJSON *o = tc_ok("metrics", args);
    const cJSON *gr = cJSON_GetArrayItem(tc_arr(o, "groups"), 0);
    const cJSON *st = tc_arr(gr, "step"), *mean = tc_arr(gr, "mean"), *cnt = tc_arr(gr, "count"),
                *sum = tc_arr(gr, "sum"), *mn = tc_arr(gr, "min"), *mx = tc_arr(gr, "max");
    int nb = cJSON_GetArraySize(st);
    ck_assert_int_ge(nb, 1);
    uint64_t total = 0;
    for (int b = 0; b < nb; b++) {
      int64_t lo = (int64_t)cJSON_GetArrayItem(st, b)->valuedouble;
      truth w = brute(g, lo, lo + W[k] - 1);
      char what[96];
      snprintf(what, sizeof what, "%s grouped %lld @%lld", G[g].key, (long long)W[k],
               (long long)lo);
      ck_assert_uint_eq((uint64_t)cJSON_GetArrayItem(cnt, b)->valuedouble, w.count - w.nonfinite);
      total += w.count;
      const cJSON *m = cJSON_GetArrayItem(mean, b);
      ck_assert_msg(cJSON_IsNumber(m), "%s: mean %s", what, cJSON_PrintUnformatted(m));
      check_mean(what, m->valuedouble, &w, REL);
      ck_assert(fabs(cJSON_GetArrayItem(mn, b)->valuedouble - w.min) <= REL * fabs(w.min));
      ck_assert(fabs(cJSON_GetArrayItem(mx, b)->valuedouble - w.max) <= REL * fabs(w.max));
      const cJSON *sv = cJSON_GetArrayItem(sum, b);
      if (fabsl(w.sum) > (long double)DBL_MAX + sum_tol(&w)) {
        /* not a double: said so, not a number */
        ck_assert_msg(!cJSON_IsNumber(sv), "%s: sum %g, true %Lg", what, sv->valuedouble,
                      w.sum);
      } else if (fabsl(w.sum) + sum_tol(&w) > (long double)DBL_MAX && !cJSON_IsNumber(sv)) {
        /* within rounding of the largest double */
      } else {
        ck_assert_msg(cJSON_IsNumber(sv) &&
                          fabsl((long double)sv->valuedouble - w.sum) <=
                              sum_tol(&w) + REL * fabsl(w.sum),
                      "%s: sum %s, true %Lg", what, cJSON_PrintUnformatted(sv), w.sum);
      }
    }
    ck_assert_uint_eq(total, G[g].n);
    cJSON_Delete(o);
  }
}
END_TEST

START_TEST(tool_series_extremes)
{
  int g = _i;
  char args[300];
  snprintf(args, sizeof args,
           "{\"mode\":\"series\",\"run_ids\":[\"h\"],\"keys\":[\"%s\"],\"max_points\":50}",
           G[g].key);
  cJSON *o = tc_ok("metrics", args);
  const cJSON *row = cJSON_GetArrayItem(tc_arr(o, "series"), 0);
  truth w = brute(g, INT64_MIN, INT64_MAX);
  ck_assert_uint_eq((uint64_t)tc_num(row, "points"), w.count);
  const cJSON *va = tc_arr(row, "value");
  int hmin = 0, hmax = 0;
  for (int i = 0; i < cJSON_GetArraySize(va); i++) {
    double v = cJSON_GetArrayItem(va, i)->valuedouble;
    ck_assert_msg(isfinite(v), "%s: value %d not finite", G[g].key, i);
    hmin |= fabs(v - w.min) <= REL * fabs(w.min);
    hmax |= fabs(v - w.max) <= REL * fabs(w.max);
  }
  ck_assert_msg(hmin && hmax, "%s: extremes kept", G[g].key);
  cJSON_Delete(o);
}
END_TEST

/* The tracking toolset's buckets and summaries. */
START_TEST(tracking_buckets)
{
  int g = _i;
  char args[300];
  snprintf(args, sizeof args,
           "{\"runs\":[\"h\"],\"series\":[\"%s\"],\"buckets\":7,\"project\":\"p\"}",
           G[g].key);
  cJSON *o = tc_ok("fetch_float_series_buckets", args);
  const cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "entries"), 0);
  const cJSON *st = tc_arr(e, "step"), *mean = tc_arr(e, "mean"), *cnt = tc_arr(e, "count");
  const cJSON *edges = tc_arr(o, "bucket_edges");
  int nb = cJSON_GetArraySize(st);
  ck_assert_int_ge(nb, 1);
  for (int b = 0; b < nb; b++) {
    int64_t lo = (int64_t)cJSON_GetArrayItem(st, b)->valuedouble, hi = INT64_MAX;
    for (int k = 0; k + 1 < cJSON_GetArraySize(edges); k++)
      if ((int64_t)cJSON_GetArrayItem(edges, k)->valuedouble == lo)
        hi = (int64_t)cJSON_GetArrayItem(edges, k + 1)->valuedouble - 1;
    truth w = brute(g, lo, hi);
    char what[96];
    snprintf(what, sizeof what, "%s tracking bucket %lld..%lld", G[g].key, (long long)lo,
             (long long)hi);
    ck_assert_uint_eq((uint64_t)cJSON_GetArrayItem(cnt, b)->valuedouble, w.count - w.nonfinite);
    const cJSON *m = cJSON_GetArrayItem(mean, b);
    ck_assert_msg(cJSON_IsNumber(m) && isfinite(m->valuedouble), "%s: mean %s", what,
                  cJSON_PrintUnformatted(m));
    check_mean(what, m->valuedouble, &w, REL);
  }
  cJSON_Delete(o);
  snprintf(args, sizeof args, "{\"runs\":[\"h\"],\"series\":[\"%s\"],\"project\":\"p\"}",
           G[g].key);
  o = tc_ok("fetch_series_summaries", args);
  const char *txt = cJSON_PrintUnformatted(o);
  truth w = brute(g, INT64_MIN, INT64_MAX);
  const cJSON *avg = NULL, *it;
  cJSON_ArrayForEach(it, cJSON_GetObjectItem(o, "summaries"))
  {
    avg = cJSON_GetObjectItem(it, "avg");
    ck_assert_uint_eq((uint64_t)tc_num(it, "count"), w.count);
  }
  ck_assert_msg(cJSON_IsNumber(avg), "%s: no avg in %s", G[g].key, txt);
  check_mean(G[g].key, avg->valuedouble, &w, REL);
  cJSON_free((void *)txt);
  cJSON_Delete(o);
}
END_TEST

static pmcp_store *RO;

static void setup(void)
{
  fill();
  tc_server_new();
  ck_assert_int_eq(pmcp_store_open(&RO, st_path, PMCP_STORE_READONLY), 0);
  pmcp_tracking_options o = PMCP_TRACKING_OPTIONS_INIT;
  ck_assert_int_eq(pmcp_tracking_register(tc_server(), RO, &o), 0);
  ck_assert_int_eq(pmcp_research_register(tc_server(), RO, NULL), 0);
  tc_initialize();
}

static void teardown(void)
{
  tc_server_free();
  pmcp_store_free(RO);
  RO = NULL;
  st_cleanup();
}

int main(void)
{
  int skip = st_backend_check(); /* PMCP_TEST_STORE=pg without a cluster */
  if (skip)
    return skip;
  Suite *su = suite_create("metrics-huge");
  TCase *tc = tcase_create("huge");
  tcase_set_timeout(tc, 300);
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, store_summaries_exact, 0, G_N);
  tcase_add_test(tc, series_list_mean);
  tcase_add_test(tc, tool_summaries_avg);
  tcase_add_loop_test(tc, tool_grouped_buckets, 0, G_N);
  tcase_add_loop_test(tc, tool_series_extremes, 0, G_N);
  tcase_add_loop_test(tc, tracking_buckets, 0, G_N);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? 1 : 0;
}
