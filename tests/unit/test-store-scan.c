/* SPDX-License-Identifier: MIT */
/* pmcp__store_scan(): the SQLite backend's own scan (block summaries where
 * the caller takes them, only the blocks a step range touches) and the
 * generic one a backend without a scan gets (pages of ops.points) see the
 * same points: totals over a range that cuts blocks, with non-finite
 * values and a restart that logs steps out of order, agree exactly; so do
 * ranges inside one block, where the SQLite scan offers the block's
 * segments. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store-test-util.h"
#include "store/store_int.h"

typedef struct tot {
  uint64_t count, nonfinite, blocks, batches;
  double sum, min, max;
  int64_t step_min, step_max;
  int take_summaries, stop_after;
} tot;

static void tot_init(tot *t, int take, int stop_after)
{
  memset(t, 0, sizeof *t);
  t->min = INFINITY;
  t->max = -INFINITY;
  t->step_min = INT64_MAX;
  t->step_max = INT64_MIN;
  t->take_summaries = take;
  t->stop_after = stop_after;
}

static int on_block(void *ud, const pmcp_bucket *b)
{
  tot *t = ud;
  if (!t->take_summaries)
    return 1;
  t->blocks++;
  t->count += b->count;
  t->nonfinite += b->nonfinite;
  t->sum += b->sum;
  if (isfinite(b->min)) {
    t->min = fmin(t->min, b->min);
    t->max = fmax(t->max, b->max);
  }
  t->step_min = b->step_min < t->step_min ? b->step_min : t->step_min;
  t->step_max = b->step_max > t->step_max ? b->step_max : t->step_max;
  return 0;
}

static int on_points(void *ud, const pmcp_point *p, size_t n)
{
  tot *t = ud;
  if (t->stop_after && ++t->batches >= (uint64_t)t->stop_after)
    return PMCP_ECANCELLED;
  for (size_t i = 0; i < n; i++) {
    t->count++;
    t->step_min = p[i].step < t->step_min ? p[i].step : t->step_min;
    t->step_max = p[i].step > t->step_max ? p[i].step : t->step_max;
    if (!isfinite(p[i].value)) {
      t->nonfinite++;
      continue;
    }
    t->sum += p[i].value;
    t->min = fmin(t->min, p[i].value);
    t->max = fmax(t->max, p[i].value);
  }
  return 0;
}

/* A custom backend that reads points through the real store. */
static int fwd_points(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series, int64_t from,
                      int64_t to, int64_t after, pmcp_point *out, size_t cap, size_t *n,
                      int64_t *next)
{
  (void)s;
  return pmcp_store_points(ctx, t, series, from, to, after, out, cap, n, next);
}

START_TEST(own_scan_and_generic_scan_agree)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "r";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, "x", NULL, 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
  int64_t id;
  ST_OK(s, pmcp_store_series(s, t, "r", &sp, &id));
  enum { N = 70000 };
  pmcp_point *p = malloc(N * sizeof *p);
  for (int i = 0; i < N; i++) {
    /* a restart at 50000 logs steps 30000.. again */
    int64_t step = i < 50000 ? i : 30000 + (i - 50000);
    double v = sin(i * 0.001) * 100 + i * 1e-3;
    p[i] = (pmcp_point){step, 1700000000000 + i, i % 777 == 3 ? NAN : v};
  }
  ST_OK(s, pmcp_store_log(s, t, id, p, N));
  /* what the points say over [1000, 45000] */
  tot want;
  tot_init(&want, 0, 0);
  on_points(&want, p, 0);
  for (int i = 0; i < N; i++)
    if (p[i].step >= 1000 && p[i].step <= 45000)
      on_points(&want, &p[i], 1);
  /* Ranges inside one block: the segments (1,024 points) they hold
   * whole come as summaries, the points of the others are exact. */
  static const int64_t narrow[][3] = {{18432, 20479, 2}, {18000, 20000, 1}, {20100, 20300, 0},
                                      {16384, 16384 + 1023, 1}, {49000, 49200, 0}};
  for (size_t k = 0; k < sizeof narrow / sizeof narrow[0]; k++) {
    tot w, g;
    tot_init(&w, 0, 0);
    tot_init(&g, 1, 0);
    for (int i = 0; i < N; i++)
      if (p[i].step >= narrow[k][0] && p[i].step <= narrow[k][1])
        on_points(&w, &p[i], 1);
    pmcp__scan_cb cb = {on_block, on_points, &g};
    ST_OK(s, pmcp__store_scan(s, t, id, narrow[k][0], narrow[k][1], 0, &cb));
    ck_assert_uint_eq(g.count, w.count);
    ck_assert_uint_eq(g.nonfinite, w.nonfinite);
    ck_assert(fabs(g.sum - w.sum) <= 1e-9 * fabs(w.sum));
    ck_assert(g.min == w.min && g.max == w.max);
    ck_assert_int_eq(g.step_min, w.step_min);
    ck_assert_int_eq(g.step_max, w.step_max);
    if (!st_is_pg())
      ck_assert_uint_eq(g.blocks, (uint64_t)narrow[k][2]);
  }
  free(p);
  pmcp_store_ops ops = {0};
  ops.version = PMCP_STORE_OPS_VERSION;
  ops.name = "forward";
  ops.points = fwd_points;
  pmcp_store *f = NULL;
  ck_assert_int_eq(pmcp_store_new_custom(&f, &ops, s, PMCP_STORE_READONLY), 0);
  tot own, sums, gen;
  tot_init(&own, 0, 0);
  tot_init(&sums, 1, 0);
  tot_init(&gen, 1, 0);
  pmcp__scan_cb cb_own = {on_block, on_points, &own};
  pmcp__scan_cb cb_sums = {on_block, on_points, &sums};
  pmcp__scan_cb cb_gen = {on_block, on_points, &gen};
  ST_OK(s, pmcp__store_scan(s, t, id, 1000, 45000, 0, &cb_own));
  ST_OK(s, pmcp__store_scan(s, t, id, 1000, 45000, PMCP__SCAN_NO_TIME, &cb_sums));
  ck_assert_int_eq(pmcp__store_scan(f, t, id, 1000, 45000, 0, &cb_gen), 0);
  ck_assert_uint_gt(sums.blocks, 0); /* whole blocks came as summaries */
  ck_assert_uint_eq(gen.blocks, 0);  /* the generic scan has none */
  const tot *got[3] = {&own, &sums, &gen};
  for (int k = 0; k < 3; k++) {
    ck_assert_uint_eq(got[k]->count, want.count);
    ck_assert_uint_eq(got[k]->nonfinite, want.nonfinite);
    ck_assert(fabs(got[k]->sum - want.sum) <= 1e-9 * fabs(want.sum));
    ck_assert(got[k]->min == want.min && got[k]->max == want.max);
    ck_assert_int_eq(got[k]->step_min, 1000);
    ck_assert_int_eq(got[k]->step_max, 45000);
  }
  /* a callback's error stops the scan and comes back */
  tot stop;
  tot_init(&stop, 0, 2);
  pmcp__scan_cb cb_stop = {NULL, on_points, &stop};
  ck_assert_int_eq(pmcp__store_scan(s, t, id, INT64_MIN, INT64_MAX, 0, &cb_stop),
                   PMCP_ECANCELLED);
  /* another tenant's series is not found */
  pmcp_tenant t2;
  ST_OK(s, pmcp_store_tenant(s, "other", PMCP_STORE_CREATE, &t2));
  ck_assert_int_eq(pmcp__store_scan(s, t2, id, 0, 10, 0, &cb_own), PMCP_ENOTFOUND);
  pmcp_store_free(f);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

int main(void)
{
  Suite *su = suite_create("store-scan");
  TCase *tc = tcase_create("scan");
  tcase_add_test(tc, own_scan_and_generic_scan_agree);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? 1 : 0;
}
