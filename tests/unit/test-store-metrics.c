/* SPDX-License-Identifier: MIT */
/* Metric series: lossless points through the block codec, step ranges and
 * positions, summaries checked against a brute-force reduction, tail-block
 * merging across many small writes, histograms, scatter sets, labels. */
#include <math.h>
#include <sqlite3.h>
#include <string.h>
#include <zstd.h>

#include "store-test-util.h"
#include "store/store_int.h" /* pmcp__store_scan */

static int64_t mkseries(pmcp_store *s, pmcp_tenant t, const char *key, pmcp_metric_kind kind)
{
  pmcp_label labels[] = {{"rank", "0"}, {"env", "cartpole"}};
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, key, labels, 2, kind, PMCP_SCALE_STEP};
  int64_t id = 0;
  ST_OK(s, pmcp_store_series(s, t, "run:r1", &sp, &id));
  return id;
}

static pmcp_point *curve(size_t n, uint64_t seed)
{
  pmcp_point *p = malloc(n * sizeof *p);
  ck_assert_ptr_nonnull(p);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    double noise = (double)(seed >> 11) / 9007199254740992.0 - 0.5;
    p[i].step = (int64_t)i * 10;
    p[i].time_ms = 1700000000000LL + (int64_t)i * 37 + (int64_t)(noise * 5);
    p[i].value = (float)(2.5 * exp(-(double)i / 4000.0) + 0.2 + 0.05 * noise);
  }
  return p;
}

START_TEST(lossless_points)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  int64_t id = mkseries(s, t, "train/loss", PMCP_METRIC_FLOAT);
  /* The same spec in another label order is the same series. */
  pmcp_label rev[] = {{"env", "cartpole"}, {"rank", "0"}};
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, "train/loss", rev, 2, 0, 0};
  int64_t id2;
  ST_OK(s, pmcp_store_series(s, t, "r1", &sp, &id2));
  ck_assert_int_eq(id, id2);
  size_t n = 20000;
  pmcp_point *p = curve(n, 1);
  p[5].value = NAN;
  p[6].value = INFINITY;
  p[7].value = -INFINITY;
  p[8].value = -0.0;
  p[9].value = 1e308;
  p[10].step = INT64_MIN;
  p[11].step = INT64_MAX;
  p[12].time_ms = 0;
  ST_OK(s, pmcp_store_log(s, t, id, p, 5000));
  ST_OK(s, pmcp_store_log(s, t, id, p + 5000, n - 5000));
  pmcp_point *back = calloc(n + 10, sizeof *back);
  size_t got;
  int64_t next;
  ST_OK(s, pmcp_store_points(s, t, id, INT64_MIN, INT64_MAX, 0, back, n + 10, &got, &next));
  ck_assert_uint_eq(got, n);
  ck_assert_int_eq(next, 0);
  ck_assert(memcmp(back, p, n * sizeof *p) == 0);
  /* Paging with positions returns every point once, in order. */
  size_t total = 0;
  int64_t after = 0;
  do {
    ST_OK(s, pmcp_store_points(s, t, id, INT64_MIN, INT64_MAX, after, back, 777, &got, &next));
    ck_assert(memcmp(back, p + total, got * sizeof *p) == 0);
    total += got;
    after = next;
  } while (next);
  ck_assert_uint_eq(total, n);
  /* A step range decodes only what it needs and filters exactly. */
  ST_OK(s, pmcp_store_points(s, t, id, 100000, 100990, 0, back, n, &got, &next));
  ck_assert_uint_eq(got, 100);
  ck_assert_int_eq(back[0].step, 100000);
  ck_assert_int_eq(back[99].step, 100990);
  ST_RC(s, pmcp_store_points(s, t, id, 0, 10, -1, back, n, &got, &next), PMCP_EINVAL);
  ST_RC(s, pmcp_store_points(s, t, 999999, 0, 10, 0, back, n, &got, &next), PMCP_ENOTFOUND);
  free(back);
  free(p);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* Runs of equal steps and time deltas of every length around the
 * decoder's eight-at-a-time path (zero delta-of-delta bytes), read back
 * whole, by page and through the scan without times. */
typedef struct scan_back {
  pmcp_point *p;
  size_t n;
} scan_back;

static int sb_points(void *ud, const pmcp_point *p, size_t n)
{
  scan_back *b = ud;
  memcpy(b->p + b->n, p, n * sizeof *p);
  b->n += n;
  return 0;
}

START_TEST(lossless_delta_runs)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  int64_t id = mkseries(s, t, "runs", PMCP_METRIC_FLOAT);
  size_t n = 40000, i = 0;
  pmcp_point *p = calloc(n, sizeof *p);
  int64_t step = -70, time = 1700000000000, ds = 1, dt = 50;
  for (size_t run = 1; i < n; run = run % 23 + 1) {
    ds = ds % 7 + 1;
    dt = run % 5 ? dt + 1 : 50;
    for (size_t k = 0; k < run && i < n; k++, i++) {
      step += ds;
      time += run % 3 ? dt : dt * 300; /* also varints of several bytes */
      p[i] = (pmcp_point){step, time, sin((double)i)};
    }
  }
  ST_OK(s, pmcp_store_log(s, t, id, p, n));
  pmcp_point *back = calloc(n, sizeof *back);
  size_t got;
  int64_t next;
  ST_OK(s, pmcp_store_points(s, t, id, INT64_MIN, INT64_MAX, 0, back, n, &got, &next));
  ck_assert_uint_eq(got, n);
  ck_assert(memcmp(back, p, n * sizeof *p) == 0);
  scan_back sb = {back, 0};
  memset(back, 0, n * sizeof *back);
  pmcp__scan_cb cb = {NULL, sb_points, &sb};
  ck_assert_int_eq(pmcp__store_scan(s, t, id, INT64_MIN, INT64_MAX, PMCP__SCAN_NO_TIME, &cb), 0);
  ck_assert_uint_eq(sb.n, n);
  for (i = 0; i < n; i++) {
    ck_assert_int_eq(back[i].step, p[i].step);
    ck_assert(memcmp(&back[i].value, &p[i].value, sizeof p[i].value) == 0);
  }
  free(back);
  free(p);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(summary_matches_bruteforce)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  int64_t id = mkseries(s, t, "val/acc", PMCP_METRIC_FLOAT);
  size_t n = 50000;
  pmcp_point *p = curve(n, 7);
  p[123].value = NAN;
  ST_OK(s, pmcp_store_log(s, t, id, p, n));
  int64_t ranges[][2] = {{INT64_MIN, INT64_MAX}, {12345, 333333}, {0, 0}, {499990, 499990}};
  size_t nbs[] = {100, 7, 1, 3};
  for (size_t r = 0; r < 4; r++) {
    pmcp_bucket b[100];
    size_t nb;
    ST_OK(s, pmcp_store_summary(s, t, id, ranges[r][0], ranges[r][1], nbs[r], b, &nb));
    ck_assert_uint_ge(nb, 1);
    ck_assert_uint_le(nb, nbs[r]);
    uint64_t count = 0, nonfinite = 0;
    double sum = 0;
    for (size_t i = 0; i < nb; i++) {
      count += b[i].count;
      nonfinite += b[i].nonfinite;
      sum += b[i].sum;
      /* Each bucket's min/max/first/last agree with the raw points. */
      double mn = INFINITY, mx = -INFINITY, first = NAN, last = NAN;
      uint64_t c = 0;
      for (size_t k = 0; k < n; k++) {
        if (p[k].step < b[i].step_min || p[k].step > b[i].step_max)
          continue;
        if (!c)
          first = p[k].value;
        last = p[k].value;
        c++;
        if (isfinite(p[k].value)) {
          mn = fmin(mn, p[k].value);
          mx = fmax(mx, p[k].value);
        }
      }
      ck_assert_uint_eq(c, b[i].count);
      ck_assert_double_eq(mn, b[i].min);
      ck_assert_double_eq(mx, b[i].max);
      if (isfinite(first))
        ck_assert_double_eq(first, b[i].first);
      ck_assert_double_eq(last, b[i].last);
      if (i)
        ck_assert_int_gt(b[i].step_min, b[i - 1].step_max);
    }
    uint64_t want = 0, want_nf = 0;
    double want_sum = 0;
    for (size_t k = 0; k < n; k++)
      if (p[k].step >= ranges[r][0] && p[k].step <= ranges[r][1]) {
        want++;
        if (isfinite(p[k].value))
          want_sum += p[k].value;
        else
          want_nf++;
      }
    ck_assert_uint_eq(count, want);
    ck_assert_uint_eq(nonfinite, want_nf);
    ck_assert_double_eq_tol(sum, want_sum, 1e-6 * fabs(want_sum) + 1e-9);
  }
  /* The wall-clock axis: every point lands in exactly one bucket, and each
   * bucket agrees with the points of its time range. */
  for (int coarse = 0; coarse < 2; coarse++) {
    pmcp_bucket tb[100];
    size_t ntb, nbk = coarse ? 1 : 13;
    ST_OK(s, pmcp_store_summary_time(s, t, id, INT64_MIN, INT64_MAX, nbk, tb, &ntb));
    uint64_t all = 0;
    for (size_t i = 0; i < ntb; i++) {
      double mn = INFINITY, mx = -INFINITY;
      uint64_t c = 0;
      for (size_t k = 0; k < n; k++)
        if (p[k].time_ms >= tb[i].time_min && p[k].time_ms <= tb[i].time_max) {
          c++;
          if (isfinite(p[k].value)) {
            mn = fmin(mn, p[k].value);
            mx = fmax(mx, p[k].value);
          }
        }
      ck_assert_uint_eq(c, tb[i].count);
      ck_assert_double_eq(mn, tb[i].min);
      ck_assert_double_eq(mx, tb[i].max);
      all += tb[i].count;
    }
    ck_assert_uint_eq(all, n);
  }
  pmcp_bucket b[4];
  size_t nb;
  ST_RC(s, pmcp_store_summary_time(s, t, id, 10, 0, 4, b, &nb), PMCP_EINVAL);
  ST_RC(s, pmcp_store_summary(s, t, id, 0, 10, 0, b, &nb), PMCP_EINVAL);
  ST_RC(s, pmcp_store_summary(s, t, id, 10, 0, 4, b, &nb), PMCP_EINVAL);
  ST_OK(s, pmcp_store_summary(s, t, id, -100, -1, 4, b, &nb));
  ck_assert_uint_eq(nb, 0);
  /* The series catalog summarizes the whole series. */
  pmcp_buf out = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_series_list(s, t, "run:r1", &out));
  cJSON *j = st_json(&out);
  cJSON *it = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "items"), 0);
  ck_assert_int_eq(cJSON_GetObjectItem(it, "count")->valueint, (int)n);
  ck_assert_int_eq(cJSON_GetObjectItem(it, "nonfinite")->valueint, 1);
  double want_mean = 0;
  for (size_t k = 0; k < n; k++)
    if (isfinite(p[k].value))
      want_mean += p[k].value;
  want_mean /= (double)(n - 1);
  ck_assert_double_eq_tol(cJSON_GetObjectItem(it, "mean")->valuedouble, want_mean, 1e-9);
  ck_assert_str_eq(st_str(cJSON_GetObjectItem(it, "labels"), "rank"), "0");
  ck_assert_str_eq(st_str(it, "scale"), "step");
  cJSON_Delete(j);
  pmcp_buf_dispose(&out);
  free(p);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* Brute force: the buckets of @p p over [from, to] on the step (or time)
 * axis, point by point with the backends' rules (equal-width buckets from
 * the first key in range; the first min / max wins; times of 0 are
 * none); empty buckets left out. Returns how many. */
static size_t brute_buckets(const pmcp_point *p, size_t n, int by_time, int64_t from,
                            int64_t to, size_t nb, pmcp_bucket *out)
{
  int64_t kmin = INT64_MAX, kmax = INT64_MIN;
  for (size_t i = 0; i < n; i++) {
    int64_t k = by_time ? p[i].time_ms : p[i].step;
    if (by_time && !k)
      continue;
    kmin = k < kmin ? k : kmin;
    kmax = k > kmax ? k : kmax;
  }
  int64_t lo = from > kmin ? from : kmin, hi = to < kmax ? to : kmax;
  if (lo > hi)
    return 0;
  uint64_t width = ((uint64_t)hi - (uint64_t)lo) / nb + 1;
  pmcp_bucket *acc = calloc(nb, sizeof *acc);
  int *have = calloc(nb, sizeof *have);
  ck_assert(acc && have);
  for (size_t i = 0; i < n; i++) {
    int64_t k = by_time ? p[i].time_ms : p[i].step;
    if ((by_time && !k) || k < lo || k > hi)
      continue;
    pmcp_bucket *b = &acc[((uint64_t)k - (uint64_t)lo) / width];
    int *hv = &have[b - acc];
    if (!b->count) {
      b->step_min = b->step_max = b->step_first = p[i].step;
      b->first = p[i].value;
    }
    b->step_min = p[i].step < b->step_min ? p[i].step : b->step_min;
    b->step_max = p[i].step > b->step_max ? p[i].step : b->step_max;
    if (p[i].time_ms && (!b->time_min || p[i].time_ms < b->time_min))
      b->time_min = p[i].time_ms;
    if (p[i].time_ms > b->time_max)
      b->time_max = p[i].time_ms;
    b->count++;
    b->last = p[i].value;
    b->step_last = p[i].step;
    double v = p[i].value;
    if (!isfinite(v)) {
      b->nonfinite++;
      continue;
    }
    b->sum += v;
    if (!*hv || v < b->min) {
      b->min = v;
      b->step_at_min = p[i].step;
    }
    if (!*hv || v > b->max) {
      b->max = v;
      b->step_at_max = p[i].step;
    }
    *hv = 1;
  }
  size_t m = 0;
  for (size_t i = 0; i < nb; i++)
    if (acc[i].count) {
      if (!have[i])
        acc[i].min = acc[i].max = NAN;
      out[m++] = acc[i];
    }
  free(acc);
  free(have);
  return m;
}

static void same_double(double got, double want, const char *what, size_t i)
{
  if (isnan(want)) {
    ck_assert_msg(isnan(got), "bucket %zu: %s is %g, not NaN", i, what, got);
    return;
  }
  ck_assert_msg(got == want, "bucket %zu: %s is %.17g, want %.17g", i, what, got, want);
}

/* The summary of @p p logged as series @p id over [from, to] into @p nb
 * buckets (@p got, @p want: room for nb) must equal the brute-force
 * reduction, field by field (@p r names the case in messages). */
static void check_buckets(pmcp_store *s, pmcp_tenant t, int64_t id, const pmcp_point *p,
                          size_t n, int by_time, int64_t from, int64_t to, size_t nb,
                          pmcp_bucket *got, pmcp_bucket *want, size_t r)
{
  size_t ng = 0;
  if (by_time)
    ST_OK(s, pmcp_store_summary_time(s, t, id, from, to, nb, got, &ng));
  else
    ST_OK(s, pmcp_store_summary(s, t, id, from, to, nb, got, &ng));
  size_t nw = brute_buckets(p, n, by_time, from, to, nb, want);
  ck_assert_msg(ng == nw, "axis %d range %zu, %zu buckets: %zu buckets, want %zu", by_time, r,
                nb, ng, nw);
  for (size_t i = 0; i < ng; i++) {
    const pmcp_bucket *g = &got[i], *w = &want[i];
    ck_assert_msg(g->count == w->count && g->nonfinite == w->nonfinite,
                  "axis %d range %zu, %zu buckets, bucket %zu: count %llu/%llu,"
                  " want %llu/%llu", by_time, r, nb, i, (unsigned long long)g->count,
                  (unsigned long long)g->nonfinite, (unsigned long long)w->count,
                  (unsigned long long)w->nonfinite);
    ck_assert_int_eq(g->step_min, w->step_min);
    ck_assert_int_eq(g->step_max, w->step_max);
    ck_assert_int_eq(g->time_min, w->time_min);
    ck_assert_int_eq(g->time_max, w->time_max);
    ck_assert_int_eq(g->step_first, w->step_first);
    ck_assert_int_eq(g->step_last, w->step_last);
    same_double(g->min, w->min, "min", i);
    same_double(g->max, w->max, "max", i);
    same_double(g->first, w->first, "first", i);
    same_double(g->last, w->last, "last", i);
    ck_assert_int_eq(g->step_at_min, w->step_at_min);
    ck_assert_int_eq(g->step_at_max, w->step_at_max);
    /* Sums may be added in another order. */
    ck_assert_double_eq_tol(g->sum, w->sum, 1e-9 * fabs(w->sum) + 1e-9);
  }
}

/* More buckets than blocks: bucket edges fall inside blocks and inside
 * their chunks, so each backend takes some blocks / chunks from their
 * summaries and reads the points of the others. Every field of every
 * bucket must equal the brute-force reduction of the points. */
START_TEST(summary_exact_inside_blocks)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  int64_t id = mkseries(s, t, "exact", PMCP_METRIC_FLOAT);
  size_t n = 3 * 16384 + 5000;
  pmcp_point *p = curve(n, 11);
  for (size_t i = 0; i < n; i++) {
    /* Two-decimal values make ties: the first minimum must win. */
    p[i].value = round(p[i].value * 100) / 100;
    p[i].step = (int64_t)i * 3;
  }
  /* Steps out of order inside a chunk, non-finite values (one chunk
   * holds nothing else), a chunk without times and scattered points
   * without one. */
  for (size_t i = 20000; i < 20100; i += 2) {
    int64_t x = p[i].step;
    p[i].step = p[i + 1].step;
    p[i + 1].step = x;
  }
  for (size_t i = 1000; i < 1256; i++)
    p[i].value = i % 2 ? NAN : INFINITY;
  p[5000].value = -INFINITY;
  p[30001].value = NAN;
  for (size_t i = 40000; i < 40128; i++)
    p[i].time_ms = 0;
  for (size_t i = 7; i < n; i += 997)
    p[i].time_ms = 0;
  ST_OK(s, pmcp_store_log(s, t, id, p, 30000));
  ST_OK(s, pmcp_store_log(s, t, id, p + 30000, n - 30000));
  size_t nbs[] = {3, 7, 20, 97, 1000, 4000};
  int64_t ranges[][2] = {{INT64_MIN, INT64_MAX}, {1234, 100003}, {49151, 49152 * 3}};
  size_t cap = 4000;
  pmcp_bucket *got = malloc(cap * sizeof *got), *want = malloc(cap * sizeof *want);
  ck_assert(got && want);
  for (int by_time = 0; by_time < 2; by_time++)
    for (size_t r = 0; r < 3; r++)
      for (size_t k = 0; k < sizeof nbs / sizeof nbs[0]; k++) {
        int64_t from = ranges[r][0], to = ranges[r][1];
        if (by_time && r) {
          from = p[from / 3 > 0 ? from / 3 : 0].time_ms + 1;
          to = p[to / 3 < (int64_t)n ? to / 3 : (int64_t)n - 1].time_ms;
        }
        check_buckets(s, t, id, p, n, by_time, from, to, nbs[k], got, want, r);
      }
  free(got);
  free(want);
  free(p);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* Points without a time are left out of time-axis summaries, also when a
 * whole block (a whole PostgreSQL chunk) lies inside one time bucket:
 * stretches without times inside blocks and chunks that are otherwise
 * taken whole, a block with none, 1 to 1000 buckets (coarse and exact). */
START_TEST(summary_time_skips_untimed)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  int64_t id = mkseries(s, t, "untimed", PMCP_METRIC_FLOAT);
  size_t n = 40000;
  pmcp_point *p = curve(n, 5);
  for (size_t i = 100; i < 300; i++)
    p[i].time_ms = 0;
  for (size_t i = 20000; i < 20050; i++)
    p[i].time_ms = 0;
  for (size_t i = 33000; i < n; i += 1013)
    p[i].time_ms = 0;
  ST_OK(s, pmcp_store_log(s, t, id, p, n));
  size_t nbs[] = {1, 2, 3, 5, 8, 20, 97, 1000};
  int64_t ranges[][2] = {{INT64_MIN, INT64_MAX}, {p[50].time_ms, p[39000].time_ms},
                         {p[16384].time_ms, p[32767].time_ms}};
  size_t cap = 1000;
  pmcp_bucket *got = malloc(cap * sizeof *got), *want = malloc(cap * sizeof *want);
  ck_assert(got && want);
  for (size_t r = 0; r < 3; r++)
    for (size_t k = 0; k < sizeof nbs / sizeof nbs[0]; k++)
      check_buckets(s, t, id, p, n, 1, ranges[r][0], ranges[r][1], nbs[k], got, want, r);
  /* The one-bucket summary counts exactly the points with a time. */
  size_t ng = 0;
  ST_OK(s, pmcp_store_summary_time(s, t, id, INT64_MIN, INT64_MAX, 1, got, &ng));
  ck_assert_uint_eq(ng, 1);
  ck_assert_uint_eq(got[0].count, n - 200 - 50 - 7);
  free(got);
  free(want);
  free(p);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* Makes the database refuse (@p on) or accept again the metric blocks
 * holding a step of 55000 or more: a trigger on SQLite, a CHECK on the
 * chunk rows on PostgreSQL. */
static void refuse_midway(int on)
{
#ifdef PMCP_HAVE_POSTGRES
  if (st_is_pg()) {
    char sql[300];
    snprintf(sql, sizeof sql,
             on ? "ALTER TABLE %s.metric_chunks ADD CONSTRAINT midway CHECK (step_max < 55000)"
                : "ALTER TABLE %s.metric_chunks DROP CONSTRAINT midway", st_schema);
    st_pg_exec(sql);
    return;
  }
#endif
  sqlite3 *db = NULL;
  ck_assert_int_eq(sqlite3_open(st_path, &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 10000);
  const char *sql = on ? "CREATE TRIGGER midway BEFORE INSERT ON metric_blocks"
                         " WHEN NEW.step_max >= 55000 BEGIN SELECT RAISE(ABORT, 'midway'); END"
                       : "DROP TRIGGER midway";
  char *err = NULL;
  ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK, "%s", err ? err : "");
  sqlite3_close(db);
}

/* A log call that fails part-way (the database refuses its third block)
 * stores none of its points, alone or inside the caller's transaction,
 * and the points buffered before it in that transaction are kept. */
START_TEST(failed_log_keeps_buffer)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  int64_t id = mkseries(s, t, "midway", PMCP_METRIC_FLOAT);
  size_t n0 = 20000, n1 = 50000, n = n0 + n1 + 1000;
  pmcp_point *p = curve(n, 5);
  for (size_t i = 0; i < n; i++)
    p[i].step = (int64_t)i;
  ST_OK(s, pmcp_store_log(s, t, id, p, n0));
  refuse_midway(1);
  pmcp_point *back = calloc(n + 1, sizeof *back);
  size_t got;
  int64_t next;
  ck_assert_int_ne(pmcp_store_log(s, t, id, p + n0, n1), 0);
  ST_OK(s, pmcp_store_points(s, t, id, INT64_MIN, INT64_MAX, 0, back, n + 1, &got, &next));
  ck_assert_uint_eq(got, n0);
  ST_OK(s, pmcp_store_begin(s));
  ST_OK(s, pmcp_store_log(s, t, id, p + n0, 100));
  ck_assert_int_ne(pmcp_store_log(s, t, id, p + n0 + 100, n1), 0);
  ST_OK(s, pmcp_store_log(s, t, id, p + n0 + 100, 50));
  ST_OK(s, pmcp_store_commit(s));
  ST_OK(s, pmcp_store_points(s, t, id, INT64_MIN, INT64_MAX, 0, back, n + 1, &got, &next));
  ck_assert_uint_eq(got, n0 + 150);
  ck_assert(memcmp(back, p, got * sizeof *p) == 0);
  refuse_midway(0);
  ST_OK(s, pmcp_store_log(s, t, id, p + n0 + 150, n - n0 - 150));
  ST_OK(s, pmcp_store_points(s, t, id, INT64_MIN, INT64_MAX, 0, back, n + 1, &got, &next));
  ck_assert_uint_eq(got, n);
  ck_assert(memcmp(back, p, n * sizeof *p) == 0);
  free(back);
  free(p);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(small_writes_merge)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  int64_t id = mkseries(s, t, "lr", PMCP_METRIC_FLOAT);
  size_t n = 9000;
  pmcp_point *p = curve(n, 3);
  /* One point per call (as `probe log` may write) and in a transaction. */
  for (size_t i = 0; i < 300; i++)
    ST_OK(s, pmcp_store_log(s, t, id, p + i, 1));
  ST_OK(s, pmcp_store_begin(s));
  for (size_t i = 300; i < n; i += 50)
    ST_OK(s, pmcp_store_log(s, t, id, p + i, 50));
  /* Visible to reads inside the transaction. */
  pmcp_point *back = calloc(n, sizeof *back);
  size_t got;
  int64_t next;
  ST_OK(s, pmcp_store_points(s, t, id, INT64_MIN, INT64_MAX, 0, back, n, &got, &next));
  ck_assert_uint_eq(got, n);
  ST_OK(s, pmcp_store_commit(s));
  ST_OK(s, pmcp_store_points(s, t, id, INT64_MIN, INT64_MAX, 0, back, n, &got, &next));
  ck_assert_uint_eq(got, n);
  ck_assert(memcmp(back, p, n * sizeof *p) == 0);
  /* Blocks stay full: 9000 points fit in three blocks. */
  pmcp_store_free(s);
  ST_OK(s, pmcp_store_open(&s, st_path, PMCP_STORE_READONLY));
  ST_OK(s, pmcp_store_points(s, t, id, INT64_MIN, INT64_MAX, 0, back, n, &got, &next));
  ck_assert_uint_eq(got, n);
  pmcp_store_free(s);
  free(back);
  free(p);
  st_cleanup();
}
END_TEST

START_TEST(histograms_and_scatter)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  int64_t h = mkseries(s, t, "grad/hist", PMCP_METRIC_HISTOGRAM);
  int64_t sc = mkseries(s, t, "emb/scatter", PMCP_METRIC_SCATTER);
  int64_t fl = mkseries(s, t, "loss", PMCP_METRIC_FLOAT);
  double edges[] = {-1, -0.5, 0, 0.5, 1};
  double counts[] = {1, 5, 7, 2};
  for (int step = 0; step < 5; step++)
    ST_OK(s, pmcp_store_log_histogram(s, t, h, step * 100, 1700000000000LL + step, edges,
                                      counts, 4));
  double x[] = {0.1, 0.2, 0.3}, y[] = {1.5, 2.5, -3.5};
  ST_OK(s, pmcp_store_log_scatter(s, t, sc, 7, 0, x, y, 3));
  double bad_edges[] = {0, 0, 1};
  ST_RC(s, pmcp_store_log_histogram(s, t, h, 1, 0, bad_edges, counts, 2), PMCP_EINVAL);
  double neg[] = {-1, 2};
  ST_RC(s, pmcp_store_log_histogram(s, t, h, 1, 0, edges, neg, 2), PMCP_EINVAL);
  ST_RC(s, pmcp_store_log_histogram(s, t, fl, 1, 0, edges, counts, 4), PMCP_EINVAL);
  pmcp_point pt = {1, 0, 1.0};
  ST_RC(s, pmcp_store_log(s, t, h, &pt, 1), PMCP_EINVAL);
  ST_RC(s, pmcp_store_log_scatter(s, t, sc, 7, 0, x, y, 0), PMCP_EINVAL);
  pmcp_buf out = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_series_sets(s, t, h, 100, 300, NULL, 2, &out));
  cJSON *j = st_json(&out);
  cJSON *items = cJSON_GetObjectItem(j, "items");
  ck_assert_int_eq(cJSON_GetArraySize(items), 2);
  ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 0), "step")->valueint, 100);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 0), "edges")), 5);
  ck_assert_double_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 0),
                                                             "counts"), 2)->valuedouble, 7);
  const char *next = st_str(j, "next");
  ck_assert_ptr_nonnull(next);
  char nb[32];
  snprintf(nb, sizeof nb, "%s", next);
  cJSON_Delete(j);
  ST_OK(s, pmcp_store_series_sets(s, t, h, 100, 300, nb, 2, &out));
  j = st_json(&out);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
  ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "next")));
  cJSON_Delete(j);
  ST_OK(s, pmcp_store_series_sets(s, t, sc, INT64_MIN, INT64_MAX, NULL, 0, &out));
  j = st_json(&out);
  cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "items"), 0);
  ck_assert_double_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(first, "y"), 2)->valuedouble, -3.5);
  cJSON_Delete(j);
  ST_RC(s, pmcp_store_series_sets(s, t, fl, 0, 1, NULL, 0, &out), PMCP_EINVAL);
  ST_RC(s, pmcp_store_series_sets(s, t, h, 0, 1, "abc", 0, &out), PMCP_EINVAL);
  /* Series specs: bad key, kinds, scales, duplicate labels. */
  pmcp_label dup[] = {{"rank", "0"}, {"rank", "1"}};
  pmcp_series_spec bad = {PMCP_SERIES_SPEC_VERSION, "x", dup, 2, 0, 0};
  int64_t id;
  ST_RC(s, pmcp_store_series(s, t, "r1", &bad, &id), PMCP_EINVAL);
  pmcp_series_spec bad2 = {PMCP_SERIES_SPEC_VERSION, "", NULL, 0, 0, 0};
  ST_RC(s, pmcp_store_series(s, t, "r1", &bad2, &id), PMCP_EINVAL);
  pmcp_series_spec bad3 = {PMCP_SERIES_SPEC_VERSION, "x", NULL, 0, (pmcp_metric_kind)9, 0};
  ST_RC(s, pmcp_store_series(s, t, "r1", &bad3, &id), PMCP_EINVAL);
  /* a version this library does not know (0, or a later release's) */
  pmcp_series_spec v0 = {0, "x", NULL, 0, 0, 0};
  ST_RC(s, pmcp_store_series(s, t, "r1", &v0, &id), PMCP_EINVAL);
  pmcp_series_spec vnext = {PMCP_SERIES_SPEC_VERSION + 1, "x", NULL, 0, 0, 0};
  ST_RC(s, pmcp_store_series(s, t, "r1", &vnext, &id), PMCP_EINVAL);
  pmcp_paper pv = PMCP_PAPER_INIT;
  pv.id = "0704.0001";
  pv.title = "T";
  pv.version = PMCP_PAPER_VERSION + 1;
  ST_RC(s, pmcp_store_paper(s, t, &pv), PMCP_EINVAL);
  pmcp_series_spec init = PMCP_SERIES_SPEC_INIT;
  init.key = "from/init";
  ST_OK(s, pmcp_store_series(s, t, "r1", &init, &id));
  pmcp_series_spec rl = {PMCP_SERIES_SPEC_VERSION, "episode/return", NULL, 0, 0, PMCP_SCALE_EPISODE};
  ST_OK(s, pmcp_store_series(s, t, "r1", &rl, &id));
  pmcp_series_spec nrun = {PMCP_SERIES_SPEC_VERSION, "x", NULL, 0, 0, 0};
  ST_RC(s, pmcp_store_series(s, t, "run:none", &nrun, &id), PMCP_ENOTFOUND);
  cJSON *lst = st_list(s, t, "series", "run:r1", "{\"scale\":\"episode\"}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(lst, "items")), 1);
  cJSON_Delete(lst);
  pmcp_buf_dispose(&out);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* Series shaped to catch a summary that takes a block or a segment whole
 * when it must not, or reads one wrongly: lengths around the segment
 * (1,024) and block (16,384) sizes, duplicate steps, gaps, steps out of
 * order, NaN and infinities where a block or a segment begins or ends
 * (its first / last) and runs of them, buckets whose edges fall exactly
 * on block and segment edges (steps 0..n-1: 4 buckets of 4 blocks, 64 of
 * one segment) and anywhere else, a range whose ends are block edges,
 * both axes. Every field of every bucket must be the brute-force
 * reduction of the raw points. */
START_TEST(summary_exact_edges)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  static const size_t lens[] = {1, 1023, 1025, 16384, 16385, 4 * 16384, 3 * 16384 + 77};
  size_t cap = 1000;
  pmcp_bucket *got = malloc(cap * sizeof *got), *want = malloc(cap * sizeof *want);
  ck_assert(got && want);
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    size_t n = lens[li];
    char key[32];
    snprintf(key, sizeof key, "edges/%zu", n);
    int64_t id = mkseries(s, t, key, PMCP_METRIC_FLOAT);
    pmcp_point *p = curve(n, 7 + li);
    for (size_t i = 0; i < n; i++) {
      p[i].step = (int64_t)i;
      p[i].value = round(p[i].value * 50) / 50; /* ties */
    }
    if (n > 5000) {
      for (size_t i = 3000; i < 3010; i++)
        p[i].step = 2999; /* the same step ten times */
      for (size_t i = 4000; i < n; i++)
        p[i].step += 100000; /* a gap */
      for (size_t i = 4100; i < 4140; i += 2) { /* out of order */
        int64_t x = p[i].step;
        p[i].step = p[i + 1].step;
        p[i + 1].step = x;
      }
    }
    /* Non-finite first / last values of blocks and segments. */
    static const size_t at[] = {0, 1022, 1023, 1024, 2047, 16383, 16384, 16385, 32767, 49151};
    static const double bad[] = {NAN, INFINITY, -INFINITY};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++)
      if (at[k] < n)
        p[at[k]].value = bad[k % 3];
    p[n - 1].value = INFINITY;
    for (size_t i = 5000; i < 7048 && i < n; i++) /* whole segments of NaN */
      p[i].value = NAN;
    for (size_t i = 9000; i < 9100 && i < n; i++)
      p[i].time_ms = 0;
    /* In several calls, so the tail block is rewritten. */
    size_t half = n / 3;
    if (half)
      ST_OK(s, pmcp_store_log(s, t, id, p, half));
    ST_OK(s, pmcp_store_log(s, t, id, p + half, n - half));
    static const size_t nbs[] = {1, 2, 3, 4, 7, 64, 100, 1000};
    int64_t ranges[][2] = {{INT64_MIN, INT64_MAX}, {16384 + 100000, 32767 + 100000},
                           {1024, 16383}, {5, (int64_t)n + 99990}};
    for (int by_time = 0; by_time < 2; by_time++)
      for (size_t r = 0; r < 4; r++)
        for (size_t k = 0; k < sizeof nbs / sizeof nbs[0]; k++) {
          int64_t from = ranges[r][0], to = ranges[r][1];
          if (by_time && r) {
            from = 1700000000000LL + (from % 100000) * 37;
            to = 1700000000000LL + (to % 100000) * 37;
          }
          check_buckets(s, t, id, p, n, by_time, from, to, nbs[k], got, want, r);
        }
    free(p);
  }
  free(got);
  free(want);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* A metric block as codec version 2 wrote it (the whole block one zstd
 * frame; shift 0, 8 planes), to make a store of schema 13. */
static void put_v(pmcp_buf *b, uint64_t v)
{
  while (v >= 0x80) {
    ck_assert_int_eq(pmcp_buf_putc(b, (char)(v | 0x80)), 0);
    v >>= 7;
  }
  ck_assert_int_eq(pmcp_buf_putc(b, (char)v), 0);
}

static uint64_t zzag(int64_t v)
{
  return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static void encode_v2(const pmcp_point *p, size_t n, pmcp_buf *out)
{
  pmcp_buf raw = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp_buf_putc(&raw, 2), 0);
  put_v(&raw, n);
  for (int which = 0; which < 2; which++) {
    uint64_t prev = 0, prev_d = 0;
    for (size_t i = 0; i < n; i++) {
      uint64_t v = (uint64_t)(which ? p[i].time_ms : p[i].step), d = v - prev;
      put_v(&raw, zzag((int64_t)(d - prev_d)));
      prev = v;
      prev_d = d;
    }
  }
  ck_assert_int_eq(pmcp_buf_putc(&raw, 0), 0);
  ck_assert_int_eq(pmcp_buf_putc(&raw, 8), 0);
  size_t at = raw.len;
  ck_assert_int_eq(pmcp_buf_reserve(&raw, n * 8), 0);
  uint64_t prev = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t bits;
    memcpy(&bits, &p[i].value, 8);
    uint64_t z = zzag((int64_t)(bits - prev));
    prev = bits;
    for (unsigned b = 0; b < 8; b++)
      raw.ptr[at + (size_t)b * n + i] = (char)(z >> (8 * (7 - b)));
  }
  raw.len = at + n * 8;
  size_t bound = ZSTD_compressBound(raw.len);
  out->len = 0;
  ck_assert_int_eq(pmcp_buf_reserve(out, bound), 0);
  size_t z = ZSTD_compress(out->ptr, bound, raw.ptr, raw.len, 1);
  ck_assert(!ZSTD_isError(z));
  out->len = z;
  pmcp_buf_dispose(&raw);
}

/* A store of schema 13, whose blocks are of codec version 2, opened for
 * writing: every block is rewritten as version 3, and the points and
 * every summary are those logged. */
START_TEST(migration_reencodes_blocks)
{
  ST_SQLITE_ONLY(); /* the SQLite codec; PostgreSQL keeps arrays */
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  int64_t id = mkseries(s, t, "old", PMCP_METRIC_FLOAT);
  size_t n = 2 * 16384 + 3000;
  pmcp_point *p = curve(n, 3);
  p[0].value = NAN;
  p[16384].value = -INFINITY;
  p[20000].time_ms = 0;
  ST_OK(s, pmcp_store_log(s, t, id, p, n));
  pmcp_store_free(s);
  sqlite3 *db;
  ck_assert_int_eq(sqlite3_open(st_path, &db), SQLITE_OK);
  sqlite3_stmt *st;
  ck_assert_int_eq(sqlite3_prepare_v2(db, "UPDATE metric_blocks SET codec=1, data=?2"
                                          " WHERE series_id=?3 AND seq=?1", -1, &st, NULL),
                   SQLITE_OK);
  pmcp_buf b = PMCP_BUF_INIT;
  for (size_t seq = 0; seq * 16384 < n; seq++) {
    size_t m = n - seq * 16384 < 16384 ? n - seq * 16384 : 16384;
    encode_v2(p + seq * 16384, m, &b);
    sqlite3_bind_int64(st, 1, (int64_t)seq);
    sqlite3_bind_blob(st, 2, b.ptr, (int)b.len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, id);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
    ck_assert_int_eq(sqlite3_changes(db), 1);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  pmcp_buf_dispose(&b);
  ck_assert_int_eq(sqlite3_exec(db, "UPDATE meta SET value='13' WHERE key='schema_version'",
                                NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
  ST_OK(s, pmcp_store_open(&s, st_path, 0));
  ck_assert_int_eq(sqlite3_open(st_path, &db), SQLITE_OK);
  ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT count(*), sum(codec=3 AND"
                                          " hex(substr(data, 1, 1))='03') FROM metric_blocks",
                                      -1, &st, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  ck_assert_int_eq(sqlite3_column_int(st, 0), 3);
  ck_assert_int_eq(sqlite3_column_int(st, 1), 3);
  sqlite3_finalize(st);
  sqlite3_close(db);
  pmcp_point *back = calloc(n + 1, sizeof *back);
  size_t nb;
  int64_t next;
  ST_OK(s, pmcp_store_points(s, t, id, INT64_MIN, INT64_MAX, 0, back, n + 1, &nb, &next));
  ck_assert_uint_eq(nb, n);
  for (size_t i = 0; i < n; i++) {
    ck_assert_int_eq(back[i].step, p[i].step);
    ck_assert_int_eq(back[i].time_ms, p[i].time_ms);
    ck_assert(memcmp(&back[i].value, &p[i].value, 8) == 0);
  }
  free(back);
  pmcp_bucket *got = malloc(100 * sizeof *got), *want = malloc(100 * sizeof *want);
  static const size_t nbs[] = {1, 3, 100};
  for (int by_time = 0; by_time < 2; by_time++)
    for (size_t k = 0; k < 3; k++)
      check_buckets(s, t, id, p, n, by_time, INT64_MIN, INT64_MAX, nbs[k], got, want, 0);
  free(got);
  free(want);
  free(p);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

int main(void)
{
  Suite *su = suite_create("store-metrics");
  TCase *tc = tcase_create("metrics");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, lossless_points);
  tcase_add_test(tc, lossless_delta_runs);
  tcase_add_test(tc, summary_matches_bruteforce);
  tcase_add_test(tc, summary_exact_inside_blocks);
  tcase_add_test(tc, summary_time_skips_untimed);
  tcase_add_test(tc, summary_exact_edges);
  tcase_add_test(tc, migration_reencodes_blocks);
  tcase_add_test(tc, failed_log_keeps_buffer);
  tcase_add_test(tc, small_writes_merge);
  tcase_add_test(tc, histograms_and_scatter);
  suite_add_tcase(su, tc);
  return st_run_suite(su);
}
