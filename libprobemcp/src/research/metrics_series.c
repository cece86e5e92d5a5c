/* SPDX-License-Identifier: MIT */
/* `metrics` modes `series` (several runs x keys, one row per series,
 * downsampled with endpoints and extremes kept) and `summaries` (last,
 * min, max, avg, ... per series, from the catalog). */
#include "research/metrics.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PMCP_HAVE_CAIRO
#include "research/chart.h"
#endif

/* Series with at most this many points in range are read whole instead of
 * summarized (cheap, and exact). */
#define RAW_MAX 4096
/* Points per storage block of the SQLite store (PMCP__SQ_BLOCK); only a
 * hint for choosing bucket counts, never relied on for correctness. */
#define STORE_BLOCK 16384
/* Points a series may have and still be downsampled from all its points. */
#define DECODE_MAX 262144

void pmcp__mx_smooth(double *v, size_t n, double w)
{
  /* TensorBoard: last = last * w + (1 - w) * x, divided by the debias
   * factor 1 - w^(i+1) so the first values are not pulled towards 0. */
  double last = 0, wpow = 1;
  for (size_t i = 0; i < n; i++) {
    last = last * w + (1 - w) * v[i];
    wpow *= w;
    double debias = 1 - wpow;
    v[i] = debias > 0 ? last / debias : v[i];
  }
}

/* Twice the area of the triangle (a, b, c) in (step, value): how much
 * dropping b changes the line through its neighbours. */
static double tri_area(const int64_t *step, const double *v, size_t a, size_t b, size_t c)
{
  double x1 = (double)step[b] - (double)step[a], y1 = v[b] - v[a];
  double x2 = (double)step[c] - (double)step[a], y2 = v[c] - v[a];
  return fabs(x1 * y2 - x2 * y1);
}

size_t pmcp__mx_downsample_points(const int64_t *step, const double *value, size_t n,
                                  size_t m, size_t *idx)
{
  assert(m >= 4);
  if (n <= m) {
    for (size_t i = 0; i < n; i++)
      idx[i] = i;
    return n;
  }
  /* n > m >= 4: the n - 2 inner points (at least m - 1) split by rank into
   * g groups of at least two points each; every group keeps its minimum
   * (first of equals) and its maximum (last of equals): two distinct
   * points, in step order. */
  size_t inner = n - 2, g = (m - 1) / 2, k = 0;
  assert(inner >= 2 * g);
  size_t gmin = 0, gmax = 0;
  for (size_t i = 1; i < n; i++) {
    if (value[i] < value[gmin])
      gmin = i;
    if (value[i] >= value[gmax]) /* the last maximum, as the groups keep */
      gmax = i;
  }
  idx[k++] = 0;
  for (size_t j = 0; j < g; j++) {
    size_t a = 1 + (size_t)((uint64_t)j * inner / g);
    size_t b = 1 + (size_t)((uint64_t)(j + 1) * inner / g);
    assert(b - a >= 2);
    size_t lo = a, hi = a;
    for (size_t i = a; i < b; i++) {
      if (value[i] < value[lo])
        lo = i;
      if (value[i] >= value[hi])
        hi = i;
    }
    if (lo == hi) /* one value throughout: its first and last point */
      hi = b - 1;
    idx[k++] = lo < hi ? lo : hi;
    idx[k++] = lo < hi ? hi : lo;
  }
  idx[k++] = n - 1;
  if (k > m) {
    /* m odd: one point too many. Drop the inner point whose removal bends
     * the line least, never the global minimum or maximum
     * kept. */
    assert(k == m + 1);
    size_t drop = 0;
    double best = INFINITY;
    for (size_t i = 1; i + 1 < k; i++) {
      if (idx[i] == gmin || idx[i] == gmax)
        continue;
      double a = tri_area(step, value, idx[i - 1], idx[i], idx[i + 1]);
      if (a < best || drop == 0) {
        best = a;
        drop = i;
      }
    }
    assert(drop != 0);
    memmove(idx + drop, idx + drop + 1, (k - drop - 1) * sizeof *idx);
    k--;
  }
  assert(k == m);
  return k;
}

/* ---- series rows ---------------------------------------------------------- */

/* sm: the EMA at this point, over every raw point before it */
typedef pmcp__mx_pt pt;

/* TensorBoard's EMA over the points in step order: a non-finite value is
 * skipped (it neither moves the average nor counts for the debias). */
static void ema_points(pt *p, size_t n, double w)
{
  double last = 0, wpow = 1;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(p[i].v) || w <= 0) {
      p[i].sm = p[i].v;
      continue;
    }
    last = last * w + (1 - w) * p[i].v;
    wpow *= w;
    double debias = 1 - wpow;
    p[i].sm = debias > 0 ? last / debias : p[i].v;
  }
}

typedef struct row_req {
  int64_t from, to;
  size_t max_points;
  double smoothing;
} row_req;

/* Why a row keeps fewer than max_points points (NULL: it keeps them all). */
static const char *const FEWER_ALL = "every finite point in the range";
static const char *const FEWER_FLAT =
    "the range is too long to read whole and its block summaries hold fewer distinct points";

/* Exactly q->max_points of the @p n candidates @p c (sorted, distinct),
 * or all of them when there are no more: written to @p out. */
static size_t keep_points(const pt *c, size_t n, size_t m, pt *out)
{
  if (n <= m) {
    memmove(out, c, n * sizeof *c);
    return n;
  }
  int64_t *st = malloc(n * sizeof *st);
  double *va = malloc(n * sizeof *va);
  size_t *idx = malloc((m + 1) * sizeof *idx);
  size_t k = 0;
  if (st && va && idx) {
    for (size_t i = 0; i < n; i++) {
      st[i] = c[i].step;
      va[i] = c[i].v;
    }
    k = pmcp__mx_downsample_points(st, va, n, m, idx);
    for (size_t i = 0; i < k; i++) /* idx ascending: out may be c */
      out[i] = c[idx[i]];
  }
  free(st);
  free(va);
  free(idx);
  return k;
}

/* Reads the range's points whole (finite ones kept, sorted, smoothed over
 * all of them) and keeps q->max_points of them; *total and *nonfinite
 * count what was read. *cut (when not NULL) is set when the range holds
 * more than @p cap points (nothing is returned then). */
static int row_raw(pmcp__research *rs, const pmcp__mx_series *s, const row_req *q, int64_t lo,
                   int64_t hi, size_t cap, pt **out, size_t *n_out, uint64_t *total,
                   uint64_t *nonfinite, int *cut)
{
  pmcp_point *raw = malloc((cap ? cap : 1) * sizeof *raw);
  pt *p = malloc((cap ? cap : 1) * sizeof *p);
  size_t got = 0, m = 0;
  int64_t next = 0;
  int rc = raw && p ? 0 : PMCP_ENOMEM;
  if (!rc) {
    pthread_mutex_lock(rs->lock);
    rc = pmcp_store_points(rs->store, rs->tenant, s->id, lo, hi, 0, raw, cap, &got, &next);
    pthread_mutex_unlock(rs->lock);
  }
  if (!rc && next && cut) {
    free(raw);
    free(p);
    *cut = 1;
    return 0;
  }
  if (!rc) {
    /* logging order is not always step order (restarts): sort */
    for (size_t i = 0; i < got; i++)
      p[i] = (pt){raw[i].step, raw[i].value, 0};
    qsort(p, got, sizeof *p, pmcp__mx_pt_cmp);
    ema_points(p, got, q->smoothing);
    for (size_t i = 0; i < got; i++)
      if (isfinite(p[i].v))
        p[m++] = p[i];
    *total = got;
    *nonfinite = got - m;
    size_t k = keep_points(p, m, q->max_points, p);
    if (m && !k)
      rc = PMCP_ENOMEM;
    m = k;
  }
  free(raw);
  if (rc) {
    free(p);
    return rc;
  }
  *out = p;
  *n_out = m;
  return 0;
}

/* Whether a range of @p total points (@p finite of them finite) is read
 * whole: few points, or smoothing (over the raw points, as TensorBoard's),
 * exact. Few finite points among very many NaN/Inf ones are found from
 * summaries instead: reading the range whole would hold every point of it
 * at once. */
static int read_whole(const row_req *q, uint64_t total, uint64_t finite)
{
  return total <= RAW_MAX || (finite <= q->max_points && total <= DECODE_MAX) ||
         (q->smoothing > 0 && total <= DECODE_MAX);
}

/* Whether the candidates just read settle the row: 1 when the range is
 * to be read whole (*whole set) or, finished, they are enough, all the
 * finite points there are, or the @p last pass; 0 when a finer pass is
 * to follow; a negative error. */
static int cands_settle(pmcp__research *rs, const pmcp__mx_series *s, const row_req *q,
                        pmcp__mx_cands *c, int last, int *whole)
{
  uint64_t finite = c->total - c->nonfinite;
  if (read_whole(q, c->total, finite)) {
    *whole = 1;
    return 1;
  }
  int rc = pmcp__mx_cands_finish(rs, s->id, c);
  if (rc)
    return rc;
  return c->n >= q->max_points || c->n >= finite || last;
}

/* Candidates from the store's scan: summaries of blocks (or, for more
 * points, of segments) inside the range give four real points each
 * without being decoded; only the parts the range's ends cut, and the
 * points at the first and last finite steps, are decoded. The unit shrinks
 * (16,384 -> 1,024 -> 64 -> 4 -> 1 points) until there are max_points
 * distinct candidates or every finite point is one. Returns 0 with
 * *whole set when the range is to be read whole instead. */
static int scan_points(pmcp__research *rs, const pmcp__mx_series *s, const row_req *q,
                       int64_t lo, int64_t hi, pmcp__mx_cands *c, int *whole)
{
  *whole = 0;
  size_t m = q->max_points;
  /* points in range, if they are spread evenly over the steps: only the
   * first unit depends on it */
  double est = (double)s->count;
  if (lo > s->step_min || hi < s->step_max)
    est *= ((double)hi - (double)lo + 1) / ((double)s->step_max - (double)s->step_min + 1);
  uint64_t unit = STORE_BLOCK;
  while (unit > 1 && est / (double)unit * 2 < (double)m)
    unit = unit >= 16 ? unit / 16 : 1;
  for (;;) {
    int rc = pmcp__mx_cands_scan(rs, s->id, lo, hi, unit, c);
    if (!rc)
      rc = cands_settle(rs, s, q, c, unit == 1, whole);
    if (rc)
      return rc < 0 ? rc : 0;
    unit = unit >= 16 ? unit / 16 : 1;
  }
}

/* Candidates from the store's buckets (a store without a scan of its
 * own): 2m buckets, refined while they offer too few points. Returns 0
 * with *whole set when the range is to be read whole instead. */
static int bucket_points(pmcp__research *rs, const pmcp__mx_series *s, const row_req *q,
                         int64_t lo, int64_t hi, pmcp__mx_cands *c, int *whole)
{
  *whole = 0;
  size_t m = q->max_points, nbk = 2 * m;
  int rc = 0;
  for (int pass = 0;; pass++) {
    pmcp_bucket *bk = calloc(nbk, sizeof *bk);
    size_t nb = 0;
    if (!bk)
      return PMCP_ENOMEM;
    pthread_mutex_lock(rs->lock);
    rc = pmcp_store_summary(rs->store, rs->tenant, s->id, lo, hi, nbk, bk, &nb);
    pthread_mutex_unlock(rs->lock);
    pmcp__mx_cands_reset(c);
    for (size_t b = 0; b < nb && !rc; b++)
      rc = pmcp__mx_cands_bucket(c, &bk[b]);
    free(bk);
    if (!rc)
      rc = cands_settle(rs, s, q, c, nbk >= 100000, whole);
    if (rc)
      return rc < 0 ? rc : 0;
    if (c->total <= DECODE_MAX && pass > 0) {
      /* summaries too flat to offer m distinct points: read it whole */
      *whole = 1;
      return 0;
    }
    nbk = nbk * 4 > 100000 ? 100000 : nbk * 4;
  }
}

/* Builds the downsampled points of one series: exactly q->max_points
 * when the range holds that many finite points (*why NULL), else as many
 * as there are and *why says why. */
static int row_points(pmcp__research *rs, const pmcp__mx_series *s, const row_req *q,
                      pt **out, size_t *n_out, uint64_t *nonfinite, uint64_t *total,
                      const char **why)
{
  *out = NULL;
  *n_out = 0;
  *nonfinite = 0;
  *total = 0;
  *why = NULL;
  int64_t lo = q->from > s->step_min ? q->from : s->step_min;
  int64_t hi = q->to < s->step_max ? q->to : s->step_max;
  if (s->count == 0 || lo > hi)
    return 0;
  size_t m = q->max_points;
  int rc;
  if (s->count <= RAW_MAX) {
    /* a short series: its range read whole at once (unless more points
     * were logged since its catalog was read) */
    int cut = 0;
    rc = row_raw(rs, s, q, lo, hi, (size_t)s->count, out, n_out, total, nonfinite, &cut);
    if (rc || !cut) {
      if (!rc && *n_out < m)
        *why = FEWER_ALL;
      return rc;
    }
  }
  pmcp__mx_cands c = {0};
  int whole = 0;
  rc = pmcp__mx_cands_scannable(rs) ? scan_points(rs, s, q, lo, hi, &c, &whole)
                                    : bucket_points(rs, s, q, lo, hi, &c, &whole);
  if (!rc && whole) {
    free(c.p);
    rc = row_raw(rs, s, q, lo, hi, (size_t)c.total, out, n_out, total, nonfinite, NULL);
    if (!rc && *n_out < m) /* the raw path keeps min(finite, m) */
      *why = FEWER_ALL;
    return rc;
  }
  if (rc) {
    free(c.p);
    return rc;
  }
  *total = c.total;
  *nonfinite = c.nonfinite;
  uint64_t finite = c.total - c.nonfinite;
  size_t k = keep_points(c.p, c.n, m, c.p);
  if (c.n && !k) {
    free(c.p);
    return PMCP_ENOMEM;
  }
  if (k < m)
    *why = (uint64_t)k >= finite ? FEWER_ALL : FEWER_FLAT;
  *out = c.p;
  *n_out = k;
  return 0;
}

static void write_row(pmcp_json *j, const pmcp__mx_series *s, const pt *p, size_t m,
                      uint64_t nonfinite, uint64_t total, double smoothing, const char *why)
{
  pmcp__mx_head(j, s, 1);
  pmcp_json_key(j, "points");
  pmcp_json_uint(j, total);
  pmcp_json_key(j, "kept");
  pmcp_json_uint(j, m);
  if (why) {
    pmcp_json_key(j, "kept_fewer");
    pmcp_json_string(j, why);
  }
  if (nonfinite) {
    pmcp_json_key(j, "non_finite");
    pmcp_json_uint(j, nonfinite);
  }
  pmcp_json_key(j, "step");
  pmcp_json_array_begin(j);
  for (size_t i = 0; i < m; i++)
    pmcp_json_int(j, p[i].step);
  pmcp_json_array_end(j);
  pmcp_json_key(j, "value");
  pmcp_json_array_begin(j);
  for (size_t i = 0; i < m; i++)
    pmcp_json_number(j, p[i].v);
  pmcp_json_array_end(j);
  if (smoothing > 0 && m) {
    /* over the raw points; a series too long to read whole (its points
     * are block extremes) is smoothed over the points kept, and says so */
    int raw = 1;
    for (size_t i = 0; i < m && raw; i++)
      raw = !isnan(p[i].sm);
    double *sv = malloc(m * sizeof *sv);
    if (sv) {
      for (size_t i = 0; i < m; i++)
        sv[i] = raw ? p[i].sm : p[i].v;
      if (!raw) {
        pmcp__mx_smooth(sv, m, smoothing);
        pmcp_json_key(j, "smoothed_over");
        pmcp_json_string(j, "the points kept (the series is too long to read whole)");
      }
      pmcp_json_key(j, "smoothed");
      pmcp_json_array_begin(j);
      for (size_t i = 0; i < m; i++)
        pmcp_json_number(j, sv[i]);
      pmcp_json_array_end(j);
      free(sv);
    }
  }
  pmcp_json_object_end(j);
}

#ifdef PMCP_HAVE_CAIRO
/* The chart line of one row: its kept points (and smoothed values), broken
 * where the store holds only non-finite values. */
static int chart_row(pmcp__research *rs, pmcp__chart *ch, const pmcp__mx_series *s,
                     const pt *p, size_t m, const row_req *q, int many_keys)
{
  char label[200];
  pmcp__chart_label(rs, s->run, many_keys ? s->key : NULL, s->labels, label, sizeof label);
  pmcp__chart_line *ln = pmcp__chart_add(ch, label, m, q->smoothing > 0, 0);
  if (!ln)
    return PMCP_ENOMEM;
  for (size_t i = 0; i < m; i++) {
    ln->x[i] = (double)p[i].step;
    ln->y[i] = p[i].v;
    if (ln->smooth)
      ln->smooth[i] = p[i].v;
  }
  if (ln->smooth)
    pmcp__mx_smooth(ln->smooth, m, q->smoothing);
  int64_t lo = q->from > s->step_min ? q->from : s->step_min;
  int64_t hi = q->to < s->step_max ? q->to : s->step_max;
  return s->nonfinite ? pmcp__chart_breaks(rs, s->id, 0, lo, hi, 0, ln) : 0;
}

static void chart_head(pmcp_call *call, pmcp__chart *ch, const row_req *q, int log_y)
{
  char keys[160];
  size_t nk = pmcp__chart_keys(call, "keys", keys, sizeof keys);
  if (q->smoothing > 0)
    snprintf(ch->title, sizeof ch->title, "%s (smoothed %g, raw faint)", keys, q->smoothing);
  else
    snprintf(ch->title, sizeof ch->title, "%s", keys);
  const char *scale = "step";
  if (pmcp_arg_has(call, "scale"))
    pmcp_arg_string(call, "scale", &scale, NULL);
  snprintf(ch->x_label, sizeof ch->x_label, "%s", scale);
  snprintf(ch->y_label, sizeof ch->y_label, "%.100s", nk == 1 ? keys : "value");
  ch->log_y = log_y;
}
#endif

/* The rows of a call: every (run, key, matching series) in argument
 * order. Catalogs are read once per run. */
typedef struct rowset {
  pmcp__mx_catalog *cat;
  size_t n_runs;
  struct {
    size_t run;
    size_t s;
  } *rows;
  size_t n;
  pmcp_json *missing; /* the open array [{run, key}] of keys a run lacks */
  size_t n_missing;
} rowset;

static void rowset_free(rowset *r)
{
  for (size_t i = 0; i < r->n_runs; i++)
    pmcp__mx_catalog_free(&r->cat[i]);
  free(r->cat);
  free(r->rows);
  pmcp_json_free(r->missing);
}

/* The page's "not_found": the keys a run lacks, on the first page. */
static void put_missing(pmcp_page *pg, size_t pos, rowset *r)
{
  if (pos || !r->n_missing)
    return;
  pmcp_json_array_end(r->missing);
  size_t n = 0;
  const char *t = pmcp_json_text(r->missing, &n);
  if (t)
    pmcp_page_field_json(pg, "not_found", t, n);
}

/* Reads the catalogs and lists the rows; 1 when an error result was sent. */
static int rows_collect(pmcp_call *call, pmcp__research *rs, int need_keys,
                        const char *kind, rowset *r)
{
  memset(r, 0, sizeof *r);
  size_t nr = pmcp_arg_count(call, "run_ids"), nk = pmcp_arg_count(call, "keys");
  const char *scale = NULL;
  if (pmcp_arg_has(call, "scale"))
    pmcp_arg_string(call, "scale", &scale, NULL);
  pmcp__mx_where *where = NULL;
  int wrc = pmcp__mx_where_from_call(call, &where);
  if (wrc)
    return wrc;
  r->cat = calloc(nr ? nr : 1, sizeof *r->cat);
  size_t *idx = NULL;
  if (!r->cat || pmcp_json_new(&r->missing, 0) || pmcp_json_array_begin(r->missing)) {
    pmcp__mx_where_free(where);
    return PMCP_ENOMEM;
  }
  size_t cap = 0;
  int rc = 0;
  for (size_t i = 0; i < nr && !rc; i++) {
    const char *run = NULL;
    pmcp_arg_string_at(call, "run_ids", i, &run);
    for (size_t x = 0; x < i; x++) {
      const char *prev = NULL;
      pmcp_arg_string_at(call, "run_ids", x, &prev);
      if (!strcmp(prev, run)) {
        pmcp__mx_where_free(where);
        free(idx);
        return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                             "run_ids names '%.64s' twice", run), 1;
      }
    }
    rc = pmcp__mx_catalog_read(call, rs, run, &r->cat[i]);
    if (rc)
      break;
    r->n_runs++;
    pmcp__mx_catalog *c = &r->cat[i];
    size_t kmax = need_keys || nk ? nk : 1;
    for (size_t kx = 0; kx < kmax; kx++) {
      const char *key = NULL;
      if (nk)
        pmcp_arg_string_at(call, "keys", kx, &key);
      size_t *ni = realloc(idx, (c->n ? c->n : 1) * sizeof *idx);
      if (!ni) {
        rc = PMCP_ENOMEM;
        break;
      }
      idx = ni;
      pmcp__mx_pick pick = {key, kind, where, scale, 0};
      pmcp__mx_misses why;
      size_t found = pmcp__mx_select(c, &pick, idx, &why);
      if (r->n + found > cap) {
        cap = (r->n + found) * 2;
        void *nw = realloc(r->rows, cap * sizeof *r->rows);
        if (!nw) {
          rc = PMCP_ENOMEM;
          break;
        }
        r->rows = nw;
      }
      for (size_t f = 0; f < found; f++) {
        r->rows[r->n].run = i;
        r->rows[r->n].s = idx[f];
        r->n++;
      }
      if (why.rl && !found) {
        pmcp__mx_where_free(where);
        free(idx);
        return pmcp__mx_select_fail(call, c, run, &pick, &why), 1;
      }
      if (!found && key) {
        char rr[300];
        if (!c->n) /* no catalog to name the run: as it was asked for */
          snprintf(rr, sizeof rr, "%s%s", strchr(run, ':') ? "" : "run:", run);
        pmcp_json_object_begin(r->missing);
        pmcp_json_key(r->missing, "run");
        pmcp_json_string(r->missing, c->n ? c->s[0].run : rr);
        pmcp_json_key(r->missing, "key");
        pmcp_json_string(r->missing, key);
        pmcp_json_object_end(r->missing);
        r->n_missing++;
      }
    }
  }
  pmcp__mx_where_free(where);
  free(idx);
  return rc;
}

/* Curves and summaries are made of every point of their series: their
 * cursors are bound to those series and how many points each holds, so a
 * point logged to another run leaves them valid and one logged to these
 * refuses them. */
static uint64_t rows_scope(const rowset *r)
{
  uint64_t scope = 0;
  for (size_t i = 0; i < r->n; i++) {
    const pmcp__mx_series *s = &r->cat[r->rows[i].run].s[r->rows[i].s];
    scope = pmcp__rs_scope_mix(pmcp__rs_scope_mix(scope, s->id), s->count);
  }
  return scope ? scope : 1;
}

int pmcp__mx_series_mode(pmcp_call *call, pmcp__research *rs)
{
  row_req q = {INT64_MIN, INT64_MAX, 100, 0};
  int64_t v;
  if (pmcp_arg_int(call, "step_from", &v) == 0)
    q.from = v;
  if (pmcp_arg_int(call, "step_to", &v) == 0)
    q.to = v;
  if (q.from > q.to)
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "step_from is after step_to");
  if (pmcp_arg_int(call, "max_points", &v) == 0)
    q.max_points = (size_t)v;
  double sm = 0;
  if (pmcp_arg_number(call, "smoothing", &sm) == 0) {
    if (!(sm >= 0 && sm < 1))
      return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                           "smoothing is an EMA weight in [0, 1), e.g. 0.6");
    q.smoothing = sm;
  }
  rowset r;
  int rc = rows_collect(call, rs, 1, "float", &r);
  if (rc) {
    rowset_free(&r);
    return rc > 0 ? 0 : rc;
  }
  pmcp_page *pg = pmcp__rs_page_scoped(call, rs, 0, rows_scope(&r));
  if (!pg) {
    rowset_free(&r);
    return 0;
  }
  size_t pos = pmcp__mx_pos(pg);
  pmcp_page_field_string(pg, "mode", "series");
  put_missing(pg, pos, &r);
#ifdef PMCP_HAVE_CAIRO
  int log_y = 0, chart = pmcp__chart_wanted(call, &log_y);
  pmcp__chart ch = {0};
  if (chart) {
    chart_head(call, &ch, &q, log_y);
    pmcp_page_image_reserve(pg, pmcp__chart_min_cost()); /* text leaves room */
  }
#endif
  pmcp_page_list(pg, "series");
  int more = 0;
  for (size_t i = pos; i < r.n; i++) {
    const pmcp__mx_series *s = &r.cat[r.rows[i].run].s[r.rows[i].s];
    pt *p = NULL;
    size_t m = 0;
    uint64_t nf = 0, total = 0;
    const char *why = NULL;
    rc = row_points(rs, s, &q, &p, &m, &nf, &total, &why);
    if (rc) {
      free(p);
      pmcp_page_fail(pg, pmcp__rs_error_member(PMCP_TERR_STORE),
                     "the points of %s %s cannot be read", s->run, s->key);
      rc = 0;
      break;
    }
    pmcp_json *j = pmcp_page_item(pg);
    if (!j) {
      free(p);
      break;
    }
    write_row(j, s, p, m, nf, total, q.smoothing, why);
    uint64_t next = i + 1;
    int arc = pmcp_page_commit(pg, &next, sizeof next);
#ifdef PMCP_HAVE_CAIRO
    if (!arc && chart && chart_row(rs, &ch, s, p, m, &q, pmcp_arg_count(call, "keys") > 1))
      pmcp_page_fail(pg, pmcp__rs_error_member(PMCP_TERR_INTERNAL),
                     "the chart of %s %s cannot be drawn", s->run, s->key);
#endif
    free(p);
    if (arc == PMCP_EBUDGET) {
      more = 1;
      break;
    }
    if (arc)
      break;
  }
#ifdef PMCP_HAVE_CAIRO
  if (chart) {
    rc = pmcp__chart_attach(pg, &ch, more);
    pmcp__chart_free(&ch);
    if (rc) {
      rowset_free(&r);
      pmcp_page_free(pg);
      return rc;
    }
  }
#endif
  rowset_free(&r);
  return pmcp__rs_send(call, pg, more);
}

/* ---- summaries ------------------------------------------------------------ */

static void num_or_skip(pmcp_json *j, const char *k, double v)
{
  if (isfinite(v)) {
    pmcp_json_key(j, k);
    pmcp_json_number(j, v);
  }
}

int pmcp__mx_summaries(pmcp_call *call, pmcp__research *rs)
{
  rowset r;
  int rc = rows_collect(call, rs, 0, NULL, &r);
  if (rc) {
    rowset_free(&r);
    return rc > 0 ? 0 : rc;
  }
  pmcp_page *pg = pmcp__rs_page_scoped(call, rs, 0, rows_scope(&r));
  if (!pg) {
    rowset_free(&r);
    return 0;
  }
  size_t pos = pmcp__mx_pos(pg);
  pmcp_page_field_string(pg, "mode", "summaries");
  put_missing(pg, pos, &r);
  pmcp_page_list(pg, "series");
  int more = 0;
  for (size_t i = pos; i < r.n; i++) {
    const pmcp__mx_series *s = &r.cat[r.rows[i].run].s[r.rows[i].s];
    pmcp_json *j = pmcp_page_item(pg);
    if (!j)
      break;
    pmcp__mx_head(j, s, 1);
    pmcp_json_key(j, "count");
    pmcp_json_int(j, s->count);
    if (s->nonfinite) {
      pmcp_json_key(j, "non_finite");
      pmcp_json_int(j, s->nonfinite);
    }
    if (s->count) {
      pmcp_json_key(j, "first_step");
      pmcp_json_int(j, s->step_min);
      pmcp_json_key(j, "last_step");
      pmcp_json_int(j, s->step_max);
    }
    if (!strcmp(s->kind, "float")) {
      num_or_skip(j, "first", s->first);
      num_or_skip(j, "last", s->last);
      num_or_skip(j, "min", s->min);
      num_or_skip(j, "max", s->max);
      num_or_skip(j, "avg", s->mean);
    }
    pmcp_json_object_end(j);
    uint64_t next = i + 1;
    int arc = pmcp_page_commit(pg, &next, sizeof next);
    if (arc == PMCP_EBUDGET) {
      more = 1;
      break;
    }
    if (arc)
      break;
  }
  rowset_free(&r);
  return pmcp__rs_send(call, pg, more);
}
