/* SPDX-License-Identifier: MIT */
/* The `metrics` tool driven through the engine over a real SQLite store the
 * test fills: every mode and refusal, lossless points with continuation,
 * series downsampling checked against an independent computation on the
 * raw points (endpoints and global extremes always kept), grouped buckets
 * recomputed by hand, histograms, scatter sets, RL reductions. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "probemcp/probemcp.h"
#include "probemcp/research.h"
#include "probemcp/tokens.h"
#include "store-test-util.h"
#include "tool-call-util.h"


static cJSON *ok(const char *args) { return tc_ok("metrics", args); }

static void refused(const char *args, const char *needle)
{
  tc_refused("metrics", args, needle);
}

/* ---- data ---------------------------------------------------------------- */

#define N_LONG 200000
#define N_SHORT 3000

static double curve(int kind, int64_t i)
{
  switch (kind) {
  case 0: /* decaying loss with noise and a spike */
    return 2.0 * exp(-(double)i / 40000.0) + 0.05 * sin((double)i * 0.37) +
           (i == 123457 ? 9.5 : 0) + (i == 77777 ? -3.25 : 0);
  case 1:
    return cos((double)i / 100.0) * (1 + (double)i / 1000.0);
  default:
    return (double)((i * 7919) % 1009) / 1009.0;
  }
}

static void log_series(pmcp_store *s, pmcp_tenant t, const char *run, const char *key,
                       const pmcp_label *labels, size_t nl, pmcp_metric_scale scale,
                       int kind, int64_t n, int64_t step0, int nan_every)
{
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, key, labels, nl, PMCP_METRIC_FLOAT, scale};
  int64_t id;
  ST_OK(s, pmcp_store_series(s, t, run, &sp, &id));
  pmcp_point *p = malloc((size_t)n * sizeof *p);
  for (int64_t i = 0; i < n; i++) {
    p[i].step = step0 + i;
    p[i].time_ms = 1700000000000 + i * 10;
    p[i].value = curve(kind, i);
    if (nan_every && i % nan_every == 5)
      p[i].value = (i / nan_every) % 2 ? INFINITY : NAN;
  }
  ST_OK(s, pmcp_store_log(s, t, id, p, (size_t)n));
  free(p);
}

static void fill(void)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "r1";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  r.id = "r2";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  r.id = "rl";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  r.id = "r3";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  ST_OK(s, pmcp_store_begin(s));
  /* long, with non-finite values: whole blocks inside wide buckets */
  log_series(s, t, "r3", "spiky", NULL, 0, PMCP_SCALE_STEP, 1, 90000, 0, 997);
  log_series(s, t, "r1", "loss", NULL, 0, PMCP_SCALE_STEP, 0, N_LONG, 0, 0);
  log_series(s, t, "r1", "short", NULL, 0, PMCP_SCALE_STEP, 1, N_SHORT, 10, 0);
  log_series(s, t, "r1", "gappy", NULL, 0, PMCP_SCALE_STEP, 2, 500, 0, 17);
  log_series(s, t, "r2", "loss", NULL, 0, PMCP_SCALE_STEP, 1, 5000, 0, 0);
  char rk[4][4];
  for (int k = 0; k < 4; k++) {
    snprintf(rk[k], sizeof rk[k], "%d", k);
    pmcp_label l[2] = {{"rank", rk[k]}, {"node", k < 2 ? "a" : "b"}};
    log_series(s, t, "r2", "grad", l, 2, PMCP_SCALE_STEP, k % 3, 1000, k * 10, 0);
  }
  for (int e = 0; e < 5; e++) {
    char ev[4];
    snprintf(ev, sizeof ev, "%d", e);
    pmcp_label l[2] = {{"env", ev}, {"task", e < 3 ? "walk" : "run"}};
    log_series(s, t, "rl", "reward", l, 2, PMCP_SCALE_EPISODE, e % 3, 200, 0, 0);
  }
  /* histograms and scatter sets */
  pmcp_series_spec hs = {PMCP_SERIES_SPEC_VERSION, "weights", NULL, 0, PMCP_METRIC_HISTOGRAM, PMCP_SCALE_STEP};
  int64_t hid, sid;
  ST_OK(s, pmcp_store_series(s, t, "r1", &hs, &hid));
  for (int st = 0; st < 5; st++) {
    double edges[5] = {0, 1, 2, 3, 4};
    double counts[4] = {1, (double)st, 2, 1};
    ST_OK(s, pmcp_store_log_histogram(s, t, hid, st * 100, 0, edges, counts, 4));
  }
  pmcp_series_spec ss = {PMCP_SERIES_SPEC_VERSION, "embed", NULL, 0, PMCP_METRIC_SCATTER, PMCP_SCALE_STEP};
  ST_OK(s, pmcp_store_series(s, t, "r1", &ss, &sid));
  double x[3] = {1, 2, 3}, y[3] = {0.5, -1, 0.25};
  ST_OK(s, pmcp_store_log_scatter(s, t, sid, 7, 0, x, y, 3));
  ST_OK(s, pmcp_store_commit(s));
  pmcp_store_free(s);
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
}

static cJSON *arr(const cJSON *o, const char *k)
{
  cJSON *a = cJSON_GetObjectItem(o, k);
  ck_assert_msg(cJSON_IsArray(a), "no array %s", k);
  return a;
}

/* ---- tests ----------------------------------------------------------------- */

START_TEST(mode_required_and_per_mode_args)
{
  refused("{\"run_id\":\"r1\"}", "mode");
  refused("{\"mode\":\"nope\",\"run_id\":\"r1\"}", "mode");
  refused("{\"mode\":\"points\",\"run_id\":\"r1\",\"by\":[\"rank\"]}", "'by'");
  refused("{\"mode\":\"points\",\"run_id\":\"r1\",\"by\":[\"rank\"]}", "points");
  refused("{\"mode\":\"coordinates\",\"run_id\":\"r1\",\"key\":\"loss\"}", "'key'");
  refused("{\"mode\":\"series\",\"run_ids\":[\"r1\"]}", "keys");
  refused("{\"mode\":\"grouped\",\"run_id\":\"r1\"}", "key");
  refused("{\"mode\":\"series\",\"run_ids\":[\"r1\"],\"keys\":[\"loss\"],\"after_id\":\"x\"}",
          "after_id");
  refused("{\"mode\":\"grouped\",\"run_id\":\"r1\",\"key\":\"loss\",\"max_points\":5}",
          "max_points");
  /* refs: run:ID and the bare ID; other kinds and unknown runs named */
  cJSON_Delete(ok("{\"mode\":\"coordinates\",\"run_id\":\"run:r1\"}"));
  refused("{\"mode\":\"coordinates\",\"run_id\":\"experiment:r1\"}", "run");
  refused("{\"mode\":\"coordinates\",\"run_id\":\"run:ghost\"}", "ghost");
  refused("{\"mode\":\"coordinates\",\"run_id\":\"runs:r1\"}", "runs");
}
END_TEST

START_TEST(cursor_as_step_or_after_id_refused)
{
  cJSON *o = ok("{\"mode\":\"points\",\"run_id\":\"r1\",\"key\":\"loss\",\"token_budget\":512}");
  const char *cur = cJSON_GetObjectItem(o, "next_cursor")->valuestring;
  char a[1024];
  snprintf(a, sizeof a,
           "{\"mode\":\"points\",\"run_id\":\"r1\",\"key\":\"loss\",\"after_id\":\"%s\"}", cur);
  refused(a, "not an MCP cursor");
  snprintf(a, sizeof a,
           "{\"mode\":\"points\",\"run_id\":\"r1\",\"key\":\"loss\",\"step_from\":\"%s\"}", cur);
  refused(a, "step_from");
  snprintf(a, sizeof a,
           "{\"mode\":\"series\",\"run_ids\":[\"r1\"],\"keys\":[\"loss\"],\"step_to\":\"%s\"}", cur);
  refused(a, "step_to");
  refused("{\"mode\":\"points\",\"run_id\":\"r1\",\"after_id\":\"12\"}", "not a point id");
  /* a cursor of another call is a restart error */
  snprintf(a, sizeof a, "{\"mode\":\"points\",\"run_id\":\"r2\",\"key\":\"loss\",\"cursor\":\"%s\"}",
           cur);
  refused(a, "restart");
  cJSON_Delete(o);
}
END_TEST

START_TEST(coordinates_catalog)
{
  cJSON *o = ok("{\"mode\":\"coordinates\",\"run_id\":\"r2\"}");
  ck_assert_int_eq(cJSON_GetObjectItem(o, "series_total")->valueint, 5);
  cJSON *lv = cJSON_GetObjectItem(o, "label_values");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(lv, "rank")), 4);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(lv, "node")), 2);
  ck_assert_int_eq(cJSON_GetObjectItem(o, "points_total")->valueint, 9000);
  cJSON_Delete(o);
  /* paged at a small budget: every series once across the pages */
  o = ok("{\"mode\":\"coordinates\",\"run_id\":\"rl\"}");
  cJSON *sc = arr(o, "scales");
  ck_assert_str_eq(cJSON_GetArrayItem(sc, 0)->valuestring, "episode");
  cJSON_Delete(o);
}
END_TEST

/* Walks every page of points of r1/gappy and compares with what was logged:
 * exact values (shortest round-trip), NaN/Infinity as strings, counted. */
START_TEST(points_lossless_all_pages)
{
  char args[2048];
  char *cur = NULL;
  int64_t seen = 0;
  size_t nonfinite = 0, pages = 0;
  do {
    if (cur)
      snprintf(args, sizeof args,
               "{\"mode\":\"points\",\"run_id\":\"r1\",\"key\":\"gappy\",\"limit\":120,"
               "\"token_budget\":700,\"cursor\":\"%s\"}", cur);
    else
      snprintf(args, sizeof args, "{\"mode\":\"points\",\"run_id\":\"r1\",\"key\":\"gappy\","
                                  "\"limit\":120,\"token_budget\":700}");
    free(cur);
    cur = NULL;
    cJSON *o = ok(args);
    pages++;
    cJSON *nf = cJSON_GetObjectItem(o, "non_finite");
    if (nf)
      nonfinite += (size_t)nf->valueint;
    cJSON *it;
    cJSON_ArrayForEach(it, arr(o, "series"))
    {
      cJSON *st = arr(it, "step"), *va = arr(it, "value");
      ck_assert_int_eq(cJSON_GetArraySize(st), cJSON_GetArraySize(va));
      for (int i = 0; i < cJSON_GetArraySize(st); i++) {
        int64_t step = (int64_t)cJSON_GetArrayItem(st, i)->valuedouble;
        ck_assert_int_eq(step, seen);
        double want = curve(2, step);
        if (step % 17 == 5)
          want = (step / 17) % 2 ? INFINITY : NAN;
        cJSON *v = cJSON_GetArrayItem(va, i);
        if (isnan(want))
          ck_assert_str_eq(v->valuestring, "NaN");
        else if (isinf(want))
          ck_assert_str_eq(v->valuestring, "Infinity");
        else
          ck_assert_msg(v->valuedouble == want, "step %lld: %.17g != %.17g", (long long)step,
                        v->valuedouble, want);
        seen++;
      }
    }
    cJSON *nc = cJSON_GetObjectItem(o, "next_cursor");
    if (nc)
      cur = strdup(nc->valuestring);
    cJSON_Delete(o);
  } while (cur && pages < 200);
  ck_assert_int_eq(seen, 500);
  ck_assert_uint_eq(nonfinite, 30);
  ck_assert_uint_gt(pages, 3);
}
END_TEST

START_TEST(points_after_id_continues)
{
  cJSON *o = ok("{\"mode\":\"points\",\"run_id\":\"r1\",\"key\":\"short\",\"limit\":10}");
  cJSON *it = cJSON_GetArrayItem(arr(o, "series"), 0);
  ck_assert_int_eq(cJSON_GetArraySize(arr(it, "step")), 10);
  char a[512];
  snprintf(a, sizeof a,
           "{\"mode\":\"points\",\"run_id\":\"r1\",\"key\":\"short\",\"limit\":5,\"after_id\":\"%s\"}",
           cJSON_GetObjectItem(it, "last_id")->valuestring);
  cJSON_Delete(o);
  o = ok(a);
  it = cJSON_GetArrayItem(arr(o, "series"), 0);
  ck_assert_int_eq((int)cJSON_GetArrayItem(arr(it, "step"), 0)->valuedouble, 20);
  ck_assert_int_eq(cJSON_GetArraySize(arr(it, "step")), 5);
  cJSON_Delete(o);
  /* step range */
  o = ok("{\"mode\":\"points\",\"run_id\":\"r1\",\"key\":\"short\",\"step_from\":100,"
         "\"step_to\":104}");
  it = cJSON_GetArrayItem(arr(o, "series"), 0);
  ck_assert_int_eq(cJSON_GetArraySize(arr(it, "step")), 5);
  ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "truncated")));
  cJSON_Delete(o);
  refused("{\"mode\":\"points\",\"run_id\":\"r1\",\"key\":\"nope\"}", "nope");
  refused("{\"mode\":\"points\",\"run_id\":\"r1\",\"step_from\":5,\"step_to\":1}", "step_from");
}
END_TEST

/* Independent check of one downsampled row against the raw curve. */
static void check_row(const cJSON *row, int kind, int64_t n, int64_t step0, int max_points)
{
  cJSON *st = arr(row, "step"), *va = arr(row, "value");
  int m = cJSON_GetArraySize(st);
  ck_assert_int_eq(m, cJSON_GetArraySize(va));
  ck_assert_int_eq(m, n < max_points ? n : max_points); /* exactly max_points */
  double gmin = INFINITY, gmax = -INFINITY;
  int64_t smin = 0, smax = 0;
  for (int64_t i = 0; i < n; i++) {
    double v = curve(kind, i);
    if (v < gmin)
      gmin = v, smin = step0 + i;
    if (v > gmax)
      gmax = v, smax = step0 + i;
  }
  int has_min = 0, has_max = 0;
  int64_t prev = INT64_MIN;
  for (int i = 0; i < m; i++) {
    int64_t s = (int64_t)cJSON_GetArrayItem(st, i)->valuedouble;
    double v = cJSON_GetArrayItem(va, i)->valuedouble;
    ck_assert_int_ge(s, prev);
    prev = s;
    double want = curve(kind, s - step0);
    /* every kept point is a real point (six significant figures) */
    ck_assert_msg(fabs(v - want) <= 1e-5 * fabs(want) + 1e-12, "step %lld: %g vs %g",
                  (long long)s, v, want);
    has_min |= s == smin;
    has_max |= s == smax;
  }
  ck_assert_int_eq((int64_t)cJSON_GetArrayItem(st, 0)->valuedouble, step0);
  ck_assert_int_eq((int64_t)cJSON_GetArrayItem(st, m - 1)->valuedouble, step0 + n - 1);
  ck_assert_msg(has_min, "global min at %lld missing", (long long)smin);
  ck_assert_msg(has_max, "global max at %lld missing", (long long)smax);
}

START_TEST(series_downsampling_keeps_ends_and_extremes)
{
  cJSON *o = ok("{\"mode\":\"series\",\"run_ids\":[\"run:r1\",\"r2\"],\"keys\":[\"loss\",\"short\"],"
                "\"token_budget\":8000}");
  cJSON *rows = arr(o, "series");
  ck_assert_int_eq(cJSON_GetArraySize(rows), 3); /* r2 has no short */
  check_row(cJSON_GetArrayItem(rows, 0), 0, N_LONG, 0, 100);
  check_row(cJSON_GetArrayItem(rows, 1), 1, N_SHORT, 10, 100);
  check_row(cJSON_GetArrayItem(rows, 2), 1, 5000, 0, 100);
  ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "points")->valueint, N_LONG);
  cJSON *nf = arr(o, "not_found");
  ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(nf, 0), "key")->valuestring, "short");
  cJSON_Delete(o);
  for (int mp = 4; mp <= 40; mp += 9) {
    char a[256];
    snprintf(a, sizeof a, "{\"mode\":\"series\",\"run_ids\":[\"r1\"],\"keys\":[\"loss\",\"short\"],"
                          "\"max_points\":%d}", mp);
    o = ok(a);
    check_row(cJSON_GetArrayItem(arr(o, "series"), 0), 0, N_LONG, 0, mp);
    check_row(cJSON_GetArrayItem(arr(o, "series"), 1), 1, N_SHORT, 10, mp);
    cJSON_Delete(o);
  }
}
END_TEST

START_TEST(series_smoothing_nonfinite_and_refusals)
{
  cJSON *o = ok("{\"mode\":\"series\",\"run_ids\":[\"r1\"],\"keys\":[\"gappy\"],"
                "\"max_points\":1000,\"smoothing\":0.6,\"token_budget\":8000}");
  cJSON *row = cJSON_GetArrayItem(arr(o, "series"), 0);
  ck_assert_int_eq(cJSON_GetObjectItem(row, "non_finite")->valueint, 30);
  ck_assert_int_eq(cJSON_GetArraySize(arr(row, "value")), 470); /* left out, not nulls */
  cJSON *va = arr(row, "value"), *sm = arr(row, "smoothed");
  /* TensorBoard's debiased EMA, recomputed */
  double last = 0, wp = 1;
  for (int i = 0; i < cJSON_GetArraySize(va); i++) {
    last = last * 0.6 + 0.4 * cJSON_GetArrayItem(va, i)->valuedouble;
    wp *= 0.6;
    double want = last / (1 - wp);
    ck_assert(fabs(cJSON_GetArrayItem(sm, i)->valuedouble - want) <= 1e-5 * fabs(want) + 1e-9);
  }
  cJSON_Delete(o);
  refused("{\"mode\":\"series\",\"run_ids\":[\"r1\"],\"keys\":[\"loss\"],\"smoothing\":1}",
          "smoothing");
  refused("{\"mode\":\"series\",\"run_ids\":[\"r1\"],\"keys\":[\"loss\"],\"max_points\":3}",
          "max_points");
  refused("{\"mode\":\"series\",\"run_ids\":[\"r1\",\"r1\"],\"keys\":[\"loss\"]}", "twice");
  /* a row is never split: too big for the budget names min_token_budget */
  refused("{\"mode\":\"series\",\"run_ids\":[\"r1\"],\"keys\":[\"loss\"],\"max_points\":2000,"
          "\"token_budget\":512}", "min_token_budget");
  /* RL series need scale */
  refused("{\"mode\":\"series\",\"run_ids\":[\"rl\"],\"keys\":[\"reward\"]}", "scale is required");
  o = ok("{\"mode\":\"series\",\"run_ids\":[\"rl\"],\"keys\":[\"reward\"],\"scale\":\"episode\","
         "\"where\":[{\"attr\":\"task\",\"op\":\"eq\",\"value\":\"run\"}]}");
  ck_assert_int_eq(cJSON_GetArraySize(arr(o, "series")), 2);
  cJSON_Delete(o);
}
END_TEST

/* The raw points of a series logged by log_series() that fall in
 * [from, to]: how many, how many non-finite, and the extremes. */
typedef struct raw_range {
  int64_t finite, nonfinite, first, last, smin, smax;
  double vmin, vmax;
} raw_range;

static raw_range raw_in(int kind, int64_t n, int64_t step0, int nan_every, int64_t from,
                        int64_t to)
{
  raw_range r = {0, 0, -1, -1, -1, -1, INFINITY, -INFINITY};
  for (int64_t i = 0; i < n; i++) {
    int64_t s = step0 + i;
    if (s < from || s > to)
      continue;
    if (nan_every && i % nan_every == 5) {
      r.nonfinite++;
      continue;
    }
    double v = curve(kind, i);
    r.finite++;
    if (r.first < 0)
      r.first = s;
    r.last = s;
    if (v < r.vmin)
      r.vmin = v, r.smin = s;
    if (v > r.vmax)
      r.vmax = v, r.smax = s;
  }
  return r;
}

/* One row of a series call with a step range, against the raw points. */
static void check_range_row(const cJSON *row, int kind, int64_t n, int64_t step0, int nan_every,
                            int64_t from, int64_t to, int max_points)
{
  raw_range w = raw_in(kind, n, step0, nan_every, from, to);
  cJSON *st = arr(row, "step"), *va = arr(row, "value");
  int m = cJSON_GetArraySize(st);
  ck_assert_int_eq(m, cJSON_GetArraySize(va));
  ck_assert_int_eq(cJSON_GetObjectItem(row, "kept")->valueint, m);
  ck_assert_int_eq((int64_t)cJSON_GetObjectItem(row, "points")->valuedouble, w.finite + w.nonfinite);
  cJSON *nf = cJSON_GetObjectItem(row, "non_finite");
  ck_assert_int_eq(nf ? (int64_t)nf->valuedouble : 0, w.nonfinite);
  if (w.finite <= max_points)
    ck_assert_int_eq(m, w.finite); /* the whole range, every point */
  else
    ck_assert_int_eq(m, max_points); /* exactly max_points */
  int has_min = 0, has_max = 0;
  int64_t prev = INT64_MIN;
  for (int i = 0; i < m; i++) {
    int64_t s = (int64_t)cJSON_GetArrayItem(st, i)->valuedouble;
    double v = cJSON_GetArrayItem(va, i)->valuedouble, want = curve(kind, s - step0);
    ck_assert_msg(s >= from && s <= to, "step %lld outside %lld..%lld", (long long)s,
                  (long long)from, (long long)to);
    ck_assert_int_gt(s, prev);
    prev = s;
    ck_assert_msg(fabs(v - want) <= 1e-5 * fabs(want) + 1e-12, "step %lld: %g vs %g",
                  (long long)s, v, want);
    has_min |= s == w.smin;
    has_max |= s == w.smax;
  }
  if (w.finite) {
    ck_assert_int_eq((int64_t)cJSON_GetArrayItem(st, 0)->valuedouble, w.first);
    ck_assert_int_eq((int64_t)cJSON_GetArrayItem(st, m - 1)->valuedouble, w.last);
    ck_assert_msg(has_min && has_max, "the range's extremes are kept");
  }
}

START_TEST(series_step_range)
{
  /* Full resolution inside a range: every point of it, exactly. */
  cJSON *o = ok("{\"mode\":\"series\",\"run_ids\":[\"r1\"],\"keys\":[\"short\"],\"step_from\":500,"
                "\"step_to\":1499,\"max_points\":2000,\"token_budget\":8000}");
  check_range_row(cJSON_GetArrayItem(arr(o, "series"), 0), 1, N_SHORT, 10, 0, 500, 1499, 2000);
  ck_assert_int_eq(cJSON_GetArraySize(arr(cJSON_GetArrayItem(arr(o, "series"), 0), "step")), 1000);
  cJSON_Delete(o);
  /* A wide range of a long series, downsampled: ends and extremes of the range. */
  o = ok("{\"mode\":\"series\",\"run_ids\":[\"r1\"],\"keys\":[\"loss\"],\"step_from\":50000,"
         "\"step_to\":149999}");
  check_range_row(cJSON_GetArrayItem(arr(o, "series"), 0), 0, N_LONG, 0, 0, 50000, 149999, 100);
  cJSON_Delete(o);
  /* Non-finite points in the range are counted, left out. */
  o = ok("{\"mode\":\"series\",\"run_ids\":[\"r1\"],\"keys\":[\"gappy\"],\"step_from\":100,"
         "\"step_to\":300,\"max_points\":2000,\"token_budget\":8000}");
  check_range_row(cJSON_GetArrayItem(arr(o, "series"), 0), 2, 500, 0, 17, 100, 300, 2000);
  cJSON_Delete(o);
  /* Series of different lengths: each clipped to what it holds. */
  o = ok("{\"mode\":\"series\",\"run_ids\":[\"r1\",\"r2\"],\"keys\":[\"short\",\"loss\"],"
         "\"step_from\":2900,\"step_to\":3100,\"max_points\":2000,\"token_budget\":8000}");
  cJSON *rows = arr(o, "series");
  ck_assert_int_eq(cJSON_GetArraySize(rows), 3);
  check_range_row(cJSON_GetArrayItem(rows, 0), 1, N_SHORT, 10, 0, 2900, 3100, 2000);
  check_range_row(cJSON_GetArrayItem(rows, 1), 0, N_LONG, 0, 0, 2900, 3100, 2000);
  check_range_row(cJSON_GetArrayItem(rows, 2), 1, 5000, 0, 0, 2900, 3100, 2000);
  ck_assert_int_eq(cJSON_GetArraySize(arr(cJSON_GetArrayItem(rows, 0), "step")), 110);
  cJSON_Delete(o);
  /* Open-ended ranges, and one past the series' end. */
  o = ok("{\"mode\":\"series\",\"run_ids\":[\"r2\"],\"keys\":[\"loss\"],\"step_from\":4990}");
  check_range_row(cJSON_GetArrayItem(arr(o, "series"), 0), 1, 5000, 0, 0, 4990, INT64_MAX, 100);
  cJSON_Delete(o);
  o = ok("{\"mode\":\"series\",\"run_ids\":[\"r2\"],\"keys\":[\"loss\"],\"step_to\":20}");
  check_range_row(cJSON_GetArrayItem(arr(o, "series"), 0), 1, 5000, 0, 0, INT64_MIN, 20, 100);
  cJSON_Delete(o);
  o = ok("{\"mode\":\"series\",\"run_ids\":[\"r2\"],\"keys\":[\"loss\"],\"step_from\":9000000}");
  check_range_row(cJSON_GetArrayItem(arr(o, "series"), 0), 1, 5000, 0, 0, 9000000, INT64_MAX, 100);
  cJSON_Delete(o);
  refused("{\"mode\":\"series\",\"run_ids\":[\"r2\"],\"keys\":[\"loss\"],\"step_from\":9,"
          "\"step_to\":8}", "step_from");
  refused("{\"mode\":\"series\",\"run_ids\":[\"r2\"],\"keys\":[\"loss\"],\"step_from\":1.5}",
          "step_from");
}
END_TEST

START_TEST(series_pages_rows_whole)
{
  /* 4 rank rows at a small budget: pages, every row once, none split */
  char args[2048];
  char *cur = NULL;
  int rows = 0, pages = 0;
  do {
    snprintf(args, sizeof args,
             "{\"mode\":\"series\",\"run_ids\":[\"r2\"],\"keys\":[\"grad\"],\"max_points\":40,"
             "\"token_budget\":600%s%s%s}", cur ? ",\"cursor\":\"" : "", cur ? cur : "",
             cur ? "\"" : "");
    free(cur);
    cur = NULL;
    cJSON *o = ok(args);
    pages++;
    cJSON *r;
    cJSON_ArrayForEach(r, arr(o, "series"))
    {
      ck_assert_int_eq(cJSON_GetObjectItem(r, "kept")->valueint,
                       cJSON_GetArraySize(arr(r, "step")));
      rows++;
    }
    cJSON *nc = cJSON_GetObjectItem(o, "next_cursor");
    if (nc)
      cur = strdup(nc->valuestring);
    cJSON_Delete(o);
  } while (cur && pages < 20);
  ck_assert_int_eq(rows, 4);
  ck_assert_int_gt(pages, 1);
}
END_TEST

START_TEST(grouped_buckets_exact)
{
  cJSON *o = ok("{\"mode\":\"grouped\",\"run_id\":\"r2\",\"key\":\"grad\",\"by\":[\"node\"],"
                "\"step_bucket\":250,\"agg\":[\"mean\",\"min\",\"max\",\"count\",\"first\",\"last\"]}");
  cJSON *groups = arr(o, "groups");
  ck_assert_int_eq(cJSON_GetArraySize(groups), 2);
  ck_assert_int_eq(cJSON_GetObjectItem(o, "bucket")->valueint, 250);
  /* node a = ranks 0 (kind 0, steps 0..999) and 1 (kind 1, steps 10..1009) */
  cJSON *g = cJSON_GetArrayItem(groups, 0);
  ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(g, "labels"), "node")->valuestring, "a");
  cJSON *st = arr(g, "step");
  for (int b = 0; b < cJSON_GetArraySize(st); b++) {
    int64_t lo = (int64_t)cJSON_GetArrayItem(st, b)->valuedouble, hi = lo + 249;
    double sum = 0, mn = INFINITY, mx = -INFINITY;
    int cnt = 0;
    for (int r = 0; r < 2; r++)
      for (int64_t i = 0; i < 1000; i++) {
        int64_t s = r * 10 + i;
        if (s < lo || s > hi)
          continue;
        double v = curve(r, i);
        sum += v, cnt++;
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
      }
    ck_assert_int_eq(cJSON_GetArrayItem(arr(g, "count"), b)->valueint, cnt);
    double m = cJSON_GetArrayItem(arr(g, "mean"), b)->valuedouble;
    ck_assert(fabs(m - sum / cnt) <= 1e-5 * fabs(sum / cnt) + 1e-9);
    ck_assert(fabs(cJSON_GetArrayItem(arr(g, "min"), b)->valuedouble - mn) <= 1e-5 * fabs(mn));
    ck_assert(fabs(cJSON_GetArrayItem(arr(g, "max"), b)->valuedouble - mx) <= 1e-5 * fabs(mx));
  }
  ck_assert_int_eq(cJSON_GetArraySize(st), 5); /* 0..1009 in 250s */
  cJSON_Delete(o);
  /* where narrows; default agg mean/min/max/count; width from max_rows */
  o = ok("{\"mode\":\"grouped\",\"run_id\":\"r2\",\"key\":\"grad\",\"max_rows\":10,"
         "\"where\":[{\"any_of\":[{\"attr\":\"rank\",\"op\":\"in\",\"value\":[\"0\",\"3\"]},"
         "{\"attr\":\"rank\",\"op\":\"gt\",\"value\":5}]}]}");
  g = cJSON_GetArrayItem(arr(o, "groups"), 0);
  ck_assert_int_eq(cJSON_GetObjectItem(g, "series")->valueint, 2);
  ck_assert_int_le(cJSON_GetArraySize(arr(g, "mean")), 10);
  ck_assert_ptr_null(cJSON_GetObjectItem(g, "first"));
  cJSON_Delete(o);
  refused("{\"mode\":\"grouped\",\"run_id\":\"r1\",\"key\":\"loss\",\"step_bucket\":10}",
          "max_rows");
  refused("{\"mode\":\"grouped\",\"run_id\":\"r1\",\"key\":\"loss\",\"where\":[{\"attr\":\"x\","
          "\"op\":\"like\",\"value\":1}]}", "unknown op");
  refused("{\"mode\":\"grouped\",\"run_id\":\"r1\",\"key\":\"loss\",\"kind\":\"histogram\"}",
          "kind");
  refused("{\"mode\":\"grouped\",\"run_id\":\"r1\",\"key\":\"zzz\"}", "zzz");
}
END_TEST

/* Buckets wider than a storage block are answered partly from the blocks'
 * summaries: the answer must equal the one computed from every point. */
static void grouped_vs_points(const char *run, const char *key, int kind, int64_t n,
                              int nan_every, int64_t width, int64_t from, int64_t to)
{
  char args[400];
  snprintf(args, sizeof args, "{\"mode\":\"grouped\",\"run_id\":\"%s\",\"key\":\"%s\","
           "\"step_bucket\":%lld,\"step_from\":%lld,\"step_to\":%lld,\"max_rows\":1000,"
           "\"agg\":[\"mean\",\"min\",\"max\",\"count\",\"sum\",\"first\",\"last\"],"
           "\"token_budget\":8000}", run, key, (long long)width, (long long)from, (long long)to);
  cJSON *o = ok(args);
  cJSON *g = cJSON_GetArrayItem(arr(o, "groups"), 0);
  cJSON *st = arr(g, "step");
  int64_t nb = (to - from * 0) / width + 2, nonfinite = 0;
  double *sum = calloc((size_t)nb, sizeof *sum), *mn = calloc((size_t)nb, sizeof *mn);
  double *mx = calloc((size_t)nb, sizeof *mx), *first = calloc((size_t)nb, sizeof *first);
  double *last = calloc((size_t)nb, sizeof *last);
  int64_t *cnt = calloc((size_t)nb, sizeof *cnt);
  int64_t origin = from - from % width;
  for (int64_t i = from; i <= to && i < n; i++) {
    double v = curve(kind, i);
    if (nan_every && i % nan_every == 5) {
      nonfinite++;
      continue;
    }
    int64_t b = (i - origin) / width;
    if (!cnt[b])
      mn[b] = mx[b] = first[b] = v;
    mn[b] = v < mn[b] ? v : mn[b];
    mx[b] = v > mx[b] ? v : mx[b];
    last[b] = v;
    sum[b] += v;
    cnt[b]++;
  }
  int k = 0;
  for (int64_t b = 0; b < nb; b++) {
    if (!cnt[b])
      continue;
    ck_assert_int_eq((int64_t)cJSON_GetArrayItem(st, k)->valuedouble, origin + b * width);
    ck_assert_int_eq(cJSON_GetArrayItem(arr(g, "count"), k)->valueint, cnt[b]);
    const char *names[] = {"mean", "min", "max", "sum", "first", "last"};
    double want[] = {sum[b] / (double)cnt[b], mn[b], mx[b], sum[b], first[b], last[b]};
    for (int x = 0; x < 6; x++) {
      double got = cJSON_GetArrayItem(arr(g, names[x]), k)->valuedouble;
      ck_assert_msg(fabs(got - want[x]) <= 1e-5 * fabs(want[x]) + 1e-9,
                    "%s bucket %lld %s: %.9g vs %.9g", key, (long long)b, names[x], got, want[x]);
    }
    k++;
  }
  ck_assert_int_eq(cJSON_GetArraySize(st), k);
  cJSON *nf = cJSON_GetObjectItem(g, "non_finite");
  ck_assert_int_eq(nf ? (int64_t)nf->valuedouble : 0, nonfinite);
  free(sum), free(mn), free(mx), free(first), free(last), free(cnt);
  cJSON_Delete(o);
}

/* `where` is the shared filter language over labels. */
static int where_count(const char *where)
{
  char args[600];
  snprintf(args, sizeof args, "{\"mode\":\"summaries\",\"run_ids\":[\"r2\"],\"keys\":[\"grad\"],"
           "\"where\":%s}", where);
  cJSON *o = ok(args);
  int n = cJSON_GetArraySize(arr(o, "series"));
  cJSON_Delete(o);
  return n;
}

START_TEST(where_shared_filter_on_labels)
{
  /* ranks 0..3 (labels are text; compared with numbers they read as numbers) */
  ck_assert_int_eq(where_count("[{\"attr\":\"rank\",\"op\":\"lt\",\"value\":2}]"), 2);
  ck_assert_int_eq(where_count("[{\"attr\":\"rank\",\"op\":\"gte\",\"value\":1.5}]"), 2);
  ck_assert_int_eq(where_count("[{\"attr\":\"rank\",\"op\":\"eq\",\"value\":3}]"), 1);
  ck_assert_int_eq(where_count("[{\"attr\":\"rank\",\"op\":\"eq\",\"value\":\"3\"}]"), 1);
  ck_assert_int_eq(where_count("[{\"attr\":\"rank\",\"op\":\"not_in\",\"value\":[0,\"1\"]}]"), 2);
  ck_assert_int_eq(where_count("[{\"attr\":\"node\",\"op\":\"matches\",\"value\":\"^b$\"}]"), 2);
  ck_assert_int_eq(where_count("[{\"attr\":\"node\",\"op\":\"contains_any\",\"value\":[\"a\"]},"
                               "{\"attr\":\"rank\",\"op\":\"ne\",\"value\":0}]"), 1);
  ck_assert_int_eq(where_count("[{\"any_of\":[{\"attr\":\"rank\",\"op\":\"eq\",\"value\":0},"
                               "{\"attr\":\"node\",\"op\":\"eq\",\"value\":\"b\"}]}]"), 3);
  ck_assert_int_eq(where_count("[{\"attr\":\"zone\",\"op\":\"exists\",\"value\":false}]"), 4);
  ck_assert_int_eq(where_count("[{\"attr\":\"zone\",\"op\":\"eq\",\"value\":\"x\"}]"), 0);
  refused("{\"mode\":\"summaries\",\"run_ids\":[\"r2\"],\"where\":[{\"series\":\"loss\","
          "\"function\":\"last\",\"op\":\"lt\",\"value\":1}]}", "series condition");
  refused("{\"mode\":\"summaries\",\"run_ids\":[\"r2\"],\"where\":[{\"attr\":\"rank\","
          "\"op\":\"lt\",\"value\":2},{\"attr\":\"rank\",\"op\":\"matches\",\"value\":\"1\"}]}",
          "both");
  refused("{\"mode\":\"points\",\"run_id\":\"r2\",\"where\":[{\"attr\":\"node\","
          "\"op\":\"matches\",\"value\":\"(\"}]}", "where");
  refused("{\"mode\":\"series\",\"run_ids\":[\"r2\"],\"keys\":[\"grad\"],\"where\":[{\"any_of\":"
          "[{\"any_of\":[]}]}]}", "where");
}
END_TEST

START_TEST(grouped_block_summaries_exact)
{
  /* 16384 points a block: buckets of 50000 hold whole blocks, and the
   * range's ends cut blocks */
  grouped_vs_points("r1", "loss", 0, N_LONG, 0, 50000, 1000, 190000);
  grouped_vs_points("r1", "loss", 0, N_LONG, 0, 40000, 0, N_LONG - 1);
  grouped_vs_points("r3", "spiky", 1, 90000, 997, 33000, 0, 89999);
  grouped_vs_points("r3", "spiky", 1, 90000, 997, 7, 16380, 16400);
}
END_TEST

/* Every cross-environment reduction, per group of an attribute (task),
 * recomputed from the environments' own bucket means. */
START_TEST(grouped_rl_every_reduction)
{
  static const char *const how[] = {"avg", "min", "max", "sum", "std", "median"};
  for (int h = 0; h < 6; h++) {
    char args[300];
    snprintf(args, sizeof args, "{\"mode\":\"grouped\",\"run_id\":\"run:rl\",\"key\":"
             "\"reward\",\"scale\":\"episode\",\"by\":[\"task\"],\"across\":\"%s\","
             "\"step_bucket\":40}", how[h]);
    cJSON *o = ok(args);
    cJSON *groups = arr(o, "groups");
    ck_assert_int_eq(cJSON_GetArraySize(groups), 2);
    for (int gi = 0; gi < 2; gi++) {
      cJSON *g = cJSON_GetArrayItem(groups, gi);
      const char *task = cJSON_GetObjectItem(cJSON_GetObjectItem(g, "labels"), "task")->valuestring;
      int e0 = !strcmp(task, "walk") ? 0 : 3, e1 = !strcmp(task, "walk") ? 3 : 5;
      ck_assert_int_eq(cJSON_GetArraySize(arr(g, how[h])), 5);
      for (int b = 0; b < 5; b++) {
        double m[5];
        int k = 0;
        for (int e = e0; e < e1; e++) {
          double sum = 0;
          for (int i = b * 40; i < b * 40 + 40; i++)
            sum += curve(e % 3, i);
          m[k++] = sum / 40;
        }
        double want = 0, mean = 0;
        for (int x = 0; x < k; x++)
          mean += m[x] / k;
        switch (h) {
        case 0: want = mean; break;
        case 1: want = fmin(m[0], fmin(m[1], k > 2 ? m[2] : m[1])); break;
        case 2: want = fmax(m[0], fmax(m[1], k > 2 ? m[2] : m[1])); break;
        case 3: want = mean * k; break;
        case 4:
          for (int x = 0; x < k; x++)
            want += (m[x] - mean) * (m[x] - mean) / k;
          want = sqrt(want);
          break;
        default:
          want = k == 3 ? fmax(fmin(m[0], m[1]), fmin(fmax(m[0], m[1]), m[2]))
                        : (m[0] + m[1]) / 2;
        }
        double got = cJSON_GetArrayItem(arr(g, how[h]), b)->valuedouble;
        ck_assert_msg(fabs(got - want) <= 1e-5 * fabs(want) + 1e-9, "%s %s bucket %d: %g vs %g",
                      how[h], task, b, got, want);
        ck_assert_int_eq(cJSON_GetArrayItem(arr(g, "n_series"), b)->valueint, k);
      }
    }
    cJSON_Delete(o);
  }
}
END_TEST

START_TEST(grouped_rl_across_and_time_axes)
{
  refused("{\"mode\":\"grouped\",\"run_id\":\"rl\",\"key\":\"reward\"}", "scale is required");
  cJSON *o = ok("{\"mode\":\"grouped\",\"run_id\":\"rl\",\"key\":\"reward\",\"scale\":\"episode\","
                "\"by\":[\"task\"],\"across\":\"median\",\"step_bucket\":50}");
  cJSON *groups = arr(o, "groups");
  ck_assert_int_eq(cJSON_GetArraySize(groups), 2);
  cJSON *g = cJSON_GetArrayItem(groups, 0); /* walk: envs 0,1,2 = kinds 0,1,2 */
  ck_assert_int_eq(cJSON_GetObjectItem(g, "series")->valueint, 3);
  for (int b = 0; b < 4; b++) {
    double m[3];
    for (int k = 0; k < 3; k++) {
      double s = 0;
      for (int i = b * 50; i < b * 50 + 50; i++)
        s += curve(k, i);
      m[k] = s / 50;
    }
    /* median of three */
    double med = fmax(fmin(m[0], m[1]), fmin(fmax(m[0], m[1]), m[2]));
    double got = cJSON_GetArrayItem(arr(g, "median"), b)->valuedouble;
    ck_assert_msg(fabs(got - med) <= 1e-5 * fabs(med) + 1e-9, "bucket %d: %g vs %g", b, got, med);
    ck_assert_int_eq(cJSON_GetArrayItem(arr(g, "n_series"), b)->valueint, 3);
  }
  cJSON_Delete(o);
  refused("{\"mode\":\"grouped\",\"run_id\":\"rl\",\"key\":\"reward\",\"scale\":\"episode\","
          "\"across\":\"std\",\"agg\":[\"mean\"]}", "across");
  /* wall clock: 10 ms per point from a fixed start */
  o = ok("{\"mode\":\"grouped\",\"run_id\":\"r1\",\"key\":\"short\",\"axis\":\"relative_time\","
         "\"step_bucket\":10000}");
  g = cJSON_GetArrayItem(arr(o, "groups"), 0);
  ck_assert_int_eq(cJSON_GetArraySize(arr(g, "relative_ms")), 3);
  ck_assert_int_eq(cJSON_GetArrayItem(arr(g, "count"), 0)->valueint, 1000);
  cJSON_Delete(o);
  o = ok("{\"mode\":\"grouped\",\"run_id\":\"r1\",\"key\":\"short\",\"axis\":\"wall_clock\","
         "\"max_rows\":3}");
  g = cJSON_GetArrayItem(arr(o, "groups"), 0);
  ck_assert_int_eq((int64_t)cJSON_GetArrayItem(arr(g, "time_ms"), 0)->valuedouble,
                   1700000000000);
  cJSON_Delete(o);
}
END_TEST

START_TEST(histograms_scatter_summaries)
{
  cJSON *o = ok("{\"mode\":\"points\",\"run_id\":\"r1\",\"key\":\"weights\",\"kind\":\"histogram\"}");
  cJSON *items = arr(o, "series");
  ck_assert_int_eq(cJSON_GetArraySize(items), 5);
  cJSON *h = cJSON_GetArrayItem(items, 2);
  ck_assert_int_eq(cJSON_GetObjectItem(h, "step")->valueint, 200);
  ck_assert_int_eq(cJSON_GetArraySize(arr(h, "edges")), 5);
  ck_assert(cJSON_GetArrayItem(arr(h, "counts"), 1)->valuedouble == 2);
  cJSON_Delete(o);
  o = ok("{\"mode\":\"points\",\"run_id\":\"r1\",\"key\":\"weights\",\"kind\":\"histogram\","
         "\"density\":true,\"limit\":1}");
  h = cJSON_GetArrayItem(arr(o, "series"), 0);
  ck_assert(fabs(cJSON_GetArrayItem(arr(h, "densities"), 0)->valuedouble - 0.25) < 1e-12);
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(o, "next_cursor"));
  cJSON_Delete(o);
  o = ok("{\"mode\":\"points\",\"run_id\":\"r1\",\"key\":\"weights\",\"kind\":\"histogram\","
         "\"stat\":\"median\"}");
  h = cJSON_GetArrayItem(arr(o, "series"), 0);
  ck_assert_int_eq(cJSON_GetArraySize(arr(h, "value")), 5);
  /* step 0: counts 1,0,2,1 over [0,4): total 4, half = 2 -> inside bin [2,3) at 0.5 */
  ck_assert(fabs(cJSON_GetArrayItem(arr(h, "value"), 0)->valuedouble - 2.5) < 1e-12);
  cJSON_Delete(o);
  refused("{\"mode\":\"points\",\"run_id\":\"r1\",\"key\":\"loss\",\"stat\":\"mean\"}",
          "histogram");
  refused("{\"mode\":\"points\",\"run_id\":\"r1\",\"key\":\"weights\",\"kind\":\"histogram\","
          "\"stat\":\"p200\"}", "stat");
  o = ok("{\"mode\":\"points\",\"run_id\":\"r1\",\"kind\":\"scatter\"}");
  h = cJSON_GetArrayItem(arr(o, "series"), 0);
  ck_assert_int_eq(cJSON_GetObjectItem(h, "step")->valueint, 7);
  ck_assert(cJSON_GetArrayItem(arr(h, "y"), 1)->valuedouble == -1);
  cJSON_Delete(o);
  o = ok("{\"mode\":\"summaries\",\"run_ids\":[\"r1\",\"r2\"],\"keys\":[\"loss\"]}");
  items = arr(o, "series");
  ck_assert_int_eq(cJSON_GetArraySize(items), 2);
  cJSON *s1 = cJSON_GetArrayItem(items, 0);
  ck_assert_int_eq(cJSON_GetObjectItem(s1, "count")->valueint, N_LONG);
  ck_assert(fabs(cJSON_GetObjectItem(s1, "max")->valuedouble - curve(0, 123457)) < 1e-4);
  ck_assert(fabs(cJSON_GetObjectItem(s1, "last")->valuedouble - curve(0, N_LONG - 1)) < 1e-5);
  cJSON_Delete(o);
  o = ok("{\"mode\":\"summaries\",\"run_ids\":[\"r2\"],\"where\":[{\"attr\":\"rank\","
         "\"op\":\"exists\"}]}");
  ck_assert_int_eq(cJSON_GetArraySize(arr(o, "series")), 4);
  cJSON_Delete(o);
}
END_TEST

int main(void)
{
  int skip = st_backend_check(); /* PMCP_TEST_STORE=pg without a cluster */
  if (skip)
    return skip;
  Suite *su = suite_create("research-metrics");
  TCase *tc = tcase_create("metrics");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, mode_required_and_per_mode_args);
  tcase_add_test(tc, cursor_as_step_or_after_id_refused);
  tcase_add_test(tc, coordinates_catalog);
  tcase_add_test(tc, points_lossless_all_pages);
  tcase_add_test(tc, points_after_id_continues);
  tcase_add_test(tc, series_downsampling_keeps_ends_and_extremes);
  tcase_add_test(tc, series_smoothing_nonfinite_and_refusals);
  tcase_add_test(tc, series_pages_rows_whole);
  tcase_add_test(tc, series_step_range);
  tcase_add_test(tc, grouped_buckets_exact);
  tcase_add_test(tc, grouped_block_summaries_exact);
  tcase_add_test(tc, where_shared_filter_on_labels);
  tcase_add_test(tc, grouped_rl_across_and_time_axes);
  tcase_add_test(tc, grouped_rl_every_reduction);
  tcase_add_test(tc, histograms_scatter_summaries);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? 1 : 0;
}
