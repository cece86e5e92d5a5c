/* SPDX-License-Identifier: MIT */
/* `metrics` mode `grouped`: one key of one run reduced over label axes
 * (`by`) and buckets on a shared axis (step, wall clock, or time since the
 * run's first point), each bucket with mean / min / max / count (and sum,
 * first, last on request). RL series (scale env_step / episode) need
 * `scale`; `across` reduces the series of a group (environments, ranks)
 * with avg / min / max / sum / std / median of their bucket means instead
 * of pooling their points. Buckets are exact: a storage block that lies
 * inside one step bucket counts through its summary (count, sum, min,
 * max, first, last), every other block in range is decoded point by
 * point, and blocks outside the range are never read. */
#include "research/metrics.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h" /* pmcp__store_scan */
#include "util/fsum.h"

/* Points a time-axis or across call may bin (they keep per-series
 * buckets); the step axis with pooling has no limit. */
#define MAX_BUCKET_CELLS (4u << 20)

typedef struct cell {
  uint64_t count, nonfinite;
  double min, max, first, last;
  int64_t step_first, step_last;
  pmcp__fsum sum;        /* finite values near DBL_MAX add without overflow */
} cell;

static double cell_mean(const cell *c)
{
  return pmcp__fsum_mean(&c->sum, (double)c->count, c->min, c->max);
}

static void cell_add(cell *c, int64_t step, double v)
{
  if (!isfinite(v)) {
    c->nonfinite++;
    return;
  }
  if (!c->count) {
    c->min = c->max = c->first = c->last = v;
    c->step_first = c->step_last = step;
  } else {
    if (v < c->min)
      c->min = v;
    if (v > c->max)
      c->max = v;
    if (step < c->step_first) {
      c->step_first = step;
      c->first = v;
    }
    if (step >= c->step_last) {
      c->step_last = step;
      c->last = v;
    }
  }
  c->count++;
  pmcp__fsum_add(&c->sum, v);
}

static void cell_merge(cell *a, const cell *b)
{
  a->nonfinite += b->nonfinite;
  if (!b->count)
    return;
  if (!a->count) {
    uint64_t nf = a->nonfinite;
    *a = *b;
    a->nonfinite = nf;
    return;
  }
  if (b->min < a->min)
    a->min = b->min;
  if (b->max > a->max)
    a->max = b->max;
  if (b->step_first < a->step_first) {
    a->step_first = b->step_first;
    a->first = b->first;
  }
  if (b->step_last >= a->step_last) {
    a->step_last = b->step_last;
    a->last = b->last;
  }
  a->count += b->count;
  pmcp__fsum_merge(&a->sum, &b->sum);
}

enum { AX_STEP, AX_WALL, AX_REL };

/* One series' scan into its row of cells. */
typedef struct gscan {
  cell *row;
  int axis;
  int64_t origin, hi, t0, width;
  uint64_t no_time;
  pmcp_call *call;
  unsigned batches;
} gscan;

/* A whole block inside one step bucket is taken from its summary when the
 * summary says exactly what its points would: first and last are the
 * points at its lowest and highest step, and finite. */
static int g_block(void *ud, const pmcp_bucket *b)
{
  gscan *g = ud;
  if (g->axis != AX_STEP || b->step_min < g->origin || b->step_max > g->hi)
    return 1;
  uint64_t w = (uint64_t)g->width;
  uint64_t b0 = ((uint64_t)b->step_min - (uint64_t)g->origin) / w;
  uint64_t b1 = ((uint64_t)b->step_max - (uint64_t)g->origin) / w;
  if (b0 != b1)
    return 1;
  if (b->count == b->nonfinite) {
    g->row[b0].nonfinite += b->nonfinite;
    return 0;
  }
  /* a sum that did not fit a double is no use to the bucket's: decode */
  if (b->step_first != b->step_min || b->step_last != b->step_max || !isfinite(b->first) ||
      !isfinite(b->last) || !isfinite(b->sum))
    return 1;
  cell x = {b->count - b->nonfinite, b->nonfinite, b->min, b->max, b->first, b->last,
            b->step_first, b->step_last, {0, 0}};
  pmcp__fsum_add(&x.sum, b->sum);
  cell_merge(&g->row[b0], &x);
  return 0;
}

/* The step axis: runs of consecutive points in one bucket are reduced in
 * registers, then merged into the bucket's cell. */
static void g_points_step(gscan *g, const pmcp_point *p, size_t n)
{
  uint64_t w = (uint64_t)g->width;
  size_t i = 0;
  while (i < n) {
    int64_t x = p[i].step;
    if (x < g->origin || x > g->hi) {
      i++;
      continue;
    }
    uint64_t bi = ((uint64_t)x - (uint64_t)g->origin) / w;
    int64_t lo = g->origin + (int64_t)(bi * w);
    int64_t hi = (uint64_t)g->hi - (uint64_t)lo < w ? g->hi : lo + (int64_t)(w - 1);
    cell r = {0, 0, INFINITY, -INFINITY, NAN, NAN, INT64_MAX, INT64_MIN, {0, 0}};
    for (; i < n && p[i].step >= lo && p[i].step <= hi; i++) {
      double v = p[i].value;
      int64_t st = p[i].step;
      if (!isfinite(v)) {
        r.nonfinite++;
        continue;
      }
      r.count++;
      pmcp__fsum_add(&r.sum, v);
      r.min = v < r.min ? v : r.min;
      r.max = v > r.max ? v : r.max;
      if (st < r.step_first) {
        r.step_first = st;
        r.first = v;
      }
      if (st >= r.step_last) {
        r.step_last = st;
        r.last = v;
      }
    }
    cell_merge(&g->row[bi], &r);
  }
}

static int g_points(void *ud, const pmcp_point *p, size_t n)
{
  gscan *g = ud;
  if ((++g->batches & 15) == 0 && pmcp_call_cancelled(g->call))
    return PMCP_ECANCELLED;
  if (g->axis == AX_STEP) {
    g_points_step(g, p, n);
    return 0;
  }
  /* Time axes: points come mostly in time order; divide only when one
   * leaves the current bucket. */
  uint64_t w = (uint64_t)g->width, cur_lo = 1, cur_hi = 0;
  cell *c = g->row;
  for (size_t i = 0; i < n; i++) {
    if (!p[i].time_ms) {
      g->no_time++;
      continue;
    }
    int64_t x = p[i].time_ms - (g->axis == AX_REL ? g->t0 : 0);
    if (x < g->origin || x > g->hi)
      continue;
    uint64_t off = (uint64_t)x - (uint64_t)g->origin;
    if (off < cur_lo || off > cur_hi) {
      uint64_t bi = off / w;
      c = g->row + bi;
      cur_lo = bi * w;
      cur_hi = cur_lo + (w - 1);
    }
    cell_add(c, p[i].step, p[i].value);
  }
  return 0;
}

enum { AC_NONE, AC_AVG, AC_MIN, AC_MAX, AC_SUM, AC_STD, AC_MEDIAN };

/* A step_bucket whose buckets, on edges at its multiples, cover lo..hi in
 * at most @p rows (0 when none does: a range across 0 in one bucket). */
static int64_t fitting_width(int64_t lo, int64_t hi, size_t rows)
{
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
  uint64_t w = (span + rows - 1) / rows;
  for (int i = 0; w >= 1 && w < ((uint64_t)1 << 62) && i < 64; i++) {
    int64_t wi = (int64_t)w;
    int64_t origin = lo >= 0 ? lo - lo % wi : lo - ((lo % wi) + wi) % wi;
    if (((uint64_t)hi - (uint64_t)origin) / w + 1 <= rows)
      return wi;
    /* with rows - 1 buckets' width the edges add at most one */
    w = rows > 1 && i == 0 ? (span + rows - 2) / (rows - 1) : w * 2;
  }
  return 0;
}

static int dcmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double pmcp__mx_reduce(double *v, size_t n, int how)
{
  double r = 0;
  switch (how) {
  case AC_MIN:
    r = v[0];
    for (size_t i = 1; i < n; i++)
      r = v[i] < r ? v[i] : r;
    return r;
  case AC_MAX:
    r = v[0];
    for (size_t i = 1; i < n; i++)
      r = v[i] > r ? v[i] : r;
    return r;
  case AC_SUM:
  case AC_AVG:
  case AC_STD: {
    /* means near DBL_MAX: summed without overflow, deviations scaled by
     * the largest so their squares do not overflow either */
    pmcp__fsum f = {0, 0};
    double lo = v[0], hi = v[0];
    for (size_t i = 0; i < n; i++) {
      pmcp__fsum_add(&f, v[i]);
      lo = v[i] < lo ? v[i] : lo;
      hi = v[i] > hi ? v[i] : hi;
    }
    if (how == AC_SUM)
      return pmcp__fsum_value(&f);
    double m = pmcp__fsum_mean(&f, (double)n, lo, hi), s = 0;
    if (how == AC_AVG)
      return m;
    if (fmax(fabs(lo), fabs(hi)) < 0x1p500) {
      for (size_t i = 0; i < n; i++)
        s += (v[i] - m) * (v[i] - m);
      return sqrt(s / (double)n);
    }
    double d = fmax(m / 2 - lo / 2, hi / 2 - m / 2);
    if (!(d > 0))
      return 0;
    for (size_t i = 0; i < n; i++) {
      double x = (v[i] / 2 - m / 2) / d;
      s += x * x;
    }
    return sqrt(s / (double)n) * 2 * d;
  }
  default:
    qsort(v, n, sizeof *v, dcmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
}

static const char *const across_names[] = {"", "avg", "min", "max", "sum", "std", "median"};

int pmcp__mx_reduce_kind(const char *name)
{
  for (int i = AC_AVG; name && i <= AC_MEDIAN; i++)
    if (!strcmp(name, across_names[i]))
      return i;
  return 0;
}

typedef struct group {
  char *key;            /* JSON of the by-label values */
  const cJSON *labels;  /* of its first series */
  size_t n_series;
} group;

/* A grouped call's arguments (g_parse). */
typedef struct grq {
  const char *run, *key, *axis_s, *scale, *across_s;
  int axis, across, width_given, rows_given, budget;
  int64_t from, to, width; /* width: step_bucket, 0 when not given */
  size_t max_rows, fit_rows;
  int want[7]; /* mean min max count sum first last */
} grq;

static const char *const agg_names[] = {"mean", "min", "max", "count", "sum", "first", "last"};

/* What g_fetch read: the series, their groups and the bucket cells. */
typedef struct gres {
  pmcp__mx_where *where;
  pmcp__mx_catalog c;
  int have_cat;
  size_t *mem, nm;       /* the catalog's series that are members */
  group *g;
  size_t *gof, ng, nby;  /* group of each member; groups; `by` labels */
  cell *cells;           /* rows (members when across, else groups) x nb */
  int64_t lo, hi, t0, origin, width;
  size_t nb;
  uint64_t no_time;
} gres;

static void gres_free(gres *r)
{
  for (size_t i = 0; r->g && i < r->ng; i++)
    free(r->g[i].key);
  free(r->g);
  free(r->gof);
  free(r->mem);
  free(r->cells);
  pmcp__mx_where_free(r->where);
  if (r->have_cat)
    pmcp__mx_catalog_free(&r->c);
}

/* Reads the arguments into @p q. 0; 1 when an error result was sent. */
static int g_parse(pmcp_call *call, grq *q)
{
  q->run = q->key = q->scale = q->across_s = NULL;
  q->axis_s = "step";
  pmcp_arg_string(call, "run_id", &q->run, NULL);
  pmcp_arg_string(call, "key", &q->key, NULL);
  if (pmcp_arg_has(call, "axis"))
    pmcp_arg_string(call, "axis", &q->axis_s, NULL);
  if (pmcp_arg_has(call, "scale"))
    pmcp_arg_string(call, "scale", &q->scale, NULL);
  if (pmcp_arg_has(call, "across"))
    pmcp_arg_string(call, "across", &q->across_s, NULL);
  q->axis = !strcmp(q->axis_s, "wall_clock")      ? AX_WALL
            : !strcmp(q->axis_s, "relative_time") ? AX_REL
                                                  : AX_STEP;
  q->across = AC_NONE;
  for (int i = 1; q->across_s && i <= AC_MEDIAN; i++)
    if (!strcmp(q->across_s, across_names[i]))
      q->across = i;
  int64_t v;
  q->from = INT64_MIN;
  q->to = INT64_MAX;
  q->width = 0;
  if (pmcp_arg_int(call, "step_from", &v) == 0)
    q->from = v;
  if (pmcp_arg_int(call, "step_to", &v) == 0)
    q->to = v;
  if (q->from > q->to)
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "step_from is after step_to"), 1;
  if (pmcp_arg_int(call, "step_bucket", &v) == 0)
    q->width = v;
  q->width_given = q->width > 0;
  q->max_rows = 0;
  q->rows_given = pmcp_arg_has(call, "max_rows") && pmcp_arg_int(call, "max_rows", &v) == 0;
  if (q->rows_given)
    q->max_rows = (size_t)v;
  /* aggregations */
  memset(q->want, 0, sizeof q->want);
  size_t na = pmcp_arg_count(call, "agg");
  if (!na)
    q->want[0] = q->want[1] = q->want[2] = q->want[3] = 1;
  for (size_t i = 0; i < na; i++) {
    const char *a = NULL;
    pmcp_arg_string_at(call, "agg", i, &a);
    for (int k = 0; k < 7; k++)
      if (!strcmp(a, agg_names[k]))
        q->want[k] = 1;
  }
  if (q->across && na)
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                         "agg and across do not combine: across reduces each series' bucket "
                         "mean across the group's series"), 1;
  /* The buckets one group can show in the call's budget: each array entry
   * costs at most about 6 tokens (a six-figure number and its comma), a
   * bucket one entry per array (the axis, each aggregation, or across's
   * value and n_series). The default fits the budget; a given max_rows
   * that does not is told this value. */
  size_t arrays = 1;
  for (int k = 0; k < 7; k++)
    arrays += (size_t)q->want[k];
  if (q->across)
    arrays = 3;
  q->budget = pmcp__rs_budget(call);
  q->fit_rows = q->budget > 600 ? (size_t)(q->budget - 500) / (arrays * 6) : 2;
  if (q->fit_rows < 2)
    q->fit_rows = 2;
  if (q->fit_rows > 100)
    q->fit_rows = 100;
  if (!q->rows_given)
    q->max_rows = q->fit_rows;
  assert(q->max_rows >= 1 && q->fit_rows >= 2);
  return 0;
}

/* Writes the object of the `by` labels' values in @p labels (null for a
 * label the series lacks): a group's identity and its "labels". */
static void by_labels(pmcp_json *j, pmcp_call *call, size_t nby, const cJSON *labels)
{
  pmcp_json_object_begin(j);
  for (size_t b = 0; b < nby; b++) {
    const char *lk = NULL;
    pmcp_arg_string_at(call, "by", b, &lk);
    const cJSON *lv = cJSON_GetObjectItemCaseSensitive(labels, lk);
    pmcp_json_key(j, lk);
    if (cJSON_IsString(lv))
      pmcp_json_string(j, lv->valuestring);
    else if (cJSON_IsNumber(lv))
      pmcp_json_number_lossless(j, lv->valuedouble); /* as pmcp__mx_labels */
    else
      pmcp_json_null(j);
  }
  pmcp_json_object_end(j);
}

/* The identity of the group of @p labels (malloc'd JSON text), or NULL. */
static char *group_key(pmcp_call *call, size_t nby, const cJSON *labels)
{
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, 0))
    return NULL;
  by_labels(j, call, nby, labels);
  size_t n = 0;
  const char *t = pmcp_json_text(j, &n);
  char *k = t ? malloc(n + 1) : NULL;
  if (k)
    memcpy(k, t, n + 1);
  pmcp_json_free(j);
  return k;
}

/* Picks the members and groups, sizes the buckets and bins every member's
 * points. 0; 1 when a result was sent (an error naming the problem); <0 a
 * failure to return. */
static int g_fetch(pmcp_call *call, pmcp__research *rs, const grq *q, gres *r)
{
  int wrc = pmcp__mx_where_from_call(call, &r->where);
  if (wrc)
    return wrc > 0 ? 1 : wrc;
  int rc = pmcp__mx_catalog_read(call, rs, q->run, &r->c);
  if (rc)
    return rc > 0 ? 1 : rc;
  r->have_cat = 1;
  /* members: the series of the q->key that pass r->where / q->scale */
  r->mem = malloc((r->c.n ? r->c.n : 1) * sizeof *r->mem);
  r->g = calloc(r->c.n ? r->c.n : 1, sizeof *r->g);
  r->gof = malloc((r->c.n ? r->c.n : 1) * sizeof *r->gof);
  if (!r->mem || !r->g || !r->gof)
    return PMCP_ENOMEM;
  pmcp__mx_pick pick = {q->key, "float", r->where, q->scale, 0};
  pmcp__mx_misses why;
  r->nm = pmcp__mx_select(&r->c, &pick, r->mem, &why);
  if (!r->nm) {
    rc = pmcp__mx_select_fail(call, &r->c, q->run, &pick, &why);
    return rc ? rc : 1;
  }
  /* groups by the values of `by` */
  r->nby = pmcp_arg_count(call, "by");
  for (size_t m = 0; m < r->nm; m++) {
    const pmcp__mx_series *s = &r->c.s[r->mem[m]];
    char *k = group_key(call, r->nby, s->labels);
    if (!k)
      return PMCP_ENOMEM;
    size_t gi = 0;
    while (gi < r->ng && strcmp(r->g[gi].key, k))
      gi++;
    if (gi == r->ng) {
      r->g[r->ng].key = k;
      r->g[r->ng].labels = s->labels;
      r->ng++;
    } else {
      free(k);
    }
    r->g[gi].n_series++;
    r->gof[m] = gi;
  }
  /* the q->axis range */
  r->lo = INT64_MAX;
  r->hi = INT64_MIN;
  r->t0 = INT64_MAX;
  for (size_t m = 0; m < r->nm; m++) {
    const pmcp__mx_series *s = &r->c.s[r->mem[m]];
    if (s->time_min > 0 && s->time_min < r->t0)
      r->t0 = s->time_min;
    if (!s->count)
      continue;
    if (q->axis == AX_STEP) {
      int64_t a = s->step_min > q->from ? s->step_min : q->from;
      int64_t b = s->step_max < q->to ? s->step_max : q->to;
      if (a <= b) {
        r->lo = a < r->lo ? a : r->lo;
        r->hi = b > r->hi ? b : r->hi;
      }
    } else if (s->time_min > 0) {
      r->lo = s->time_min < r->lo ? s->time_min : r->lo;
      r->hi = s->time_max > r->hi ? s->time_max : r->hi;
    }
  }
  if (q->axis == AX_REL && r->lo <= r->hi) {
    r->lo -= r->t0;
    r->hi -= r->t0;
  }
  r->nb = 0;
  r->origin = r->lo;
  r->width = q->width;
  if (r->lo <= r->hi) {
    uint64_t span = (uint64_t)r->hi - (uint64_t)r->lo + 1;
    if (r->width <= 0) {
      r->width = (int64_t)((span + q->max_rows - 1) / q->max_rows);
      if (r->width < 1)
        r->width = 1;
    } else {
      /* a given r->width gets round edges: multiples of the r->width */
      r->origin = r->lo >= 0 ? r->lo - r->lo % r->width : r->lo - ((r->lo % r->width) + r->width) % r->width;
    }
    r->nb = (size_t)(((uint64_t)r->hi - (uint64_t)r->origin) / (uint64_t)r->width + 1);
    if (r->nb > q->max_rows) {
      /* what would do, at this budget: a wider bucket for these q->max_rows,
       * or more rows up q->to what the budget holds */
      char would[160];
      if (q->max_rows > q->fit_rows)
        snprintf(would, sizeof would, "step_bucket %lld with max_rows %zu fits the budget",
                 (long long)fitting_width(r->lo, r->hi, q->fit_rows), q->fit_rows);
      else
        snprintf(would, sizeof would, "step_bucket %lld makes at most %zu%s",
                 (long long)fitting_width(r->lo, r->hi, q->max_rows), q->max_rows,
                 q->max_rows < q->fit_rows ? ", raise max_rows (the budget holds more)" : "");
      pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                    "step_bucket %lld over %s %lld..%lld makes %zu buckets, more than "
                    "max_rows %zu: %s, or narrow the range",
                    (long long)r->width, q->axis == AX_STEP ? "steps" : "milliseconds",
                    (long long)r->lo, (long long)r->hi, r->nb, q->max_rows, would);
      return 1;
    }
  }
  /* per series r->cells when reducing q->across series, else per group */
  size_t rows = q->across ? r->nm : r->ng;
  if (r->nb && rows * r->nb > MAX_BUCKET_CELLS) {
    pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "too many series x buckets (%zu x %zu): lower "
                  "max_rows or narrow where", rows, r->nb);
    return 1;
  }
  r->cells = calloc(rows * (r->nb ? r->nb : 1), sizeof *r->cells);
  if (!r->cells)
    return PMCP_ENOMEM;
  gscan gs = {NULL, q->axis, r->origin, r->hi, r->t0, r->width, 0, call, 0};
  pmcp__scan_cb cb = {g_block, g_points, &gs};
  for (size_t m = 0; m < r->nm && r->nb; m++) {
    const pmcp__mx_series *s = &r->c.s[r->mem[m]];
    gs.row = r->cells + (q->across ? m : r->gof[m]) * r->nb;
    pthread_mutex_lock(rs->lock);
    rc = pmcp__store_scan(rs->store, rs->tenant, s->id, q->from, q->to,
                          q->axis == AX_STEP ? PMCP__SCAN_NO_TIME : 0, &cb);
    pthread_mutex_unlock(rs->lock);
    if (rc)
      break;
  }
  r->no_time = gs.no_time;
  if (rc == PMCP_ECANCELLED)
    return rc;
  if (rc) {
    pmcp__rs_fail(call, PMCP_TERR_STORE, "the points of %s in %s cannot be read", q->key, q->run);
    return 1;
  }
  assert(r->nb == 0 || (r->width >= 1 && r->nb <= q->max_rows));
  return 0;
}

/* The page: one item per group with its buckets' aggregations (or the
 * reduction across its series). */
static int g_render(pmcp_call *call, pmcp__research *rs, const grq *q, const gres *r)
{
  /* bound to the group's series and their point counts, not to the store:
   * points logged to other series leave the cursor valid */
  uint64_t scope = 0;
  for (size_t m = 0; m < r->nm; m++)
    scope = pmcp__rs_scope_mix(pmcp__rs_scope_mix(scope, r->c.s[r->mem[m]].id), r->c.s[r->mem[m]].count);
  pmcp_page *pg = pmcp__rs_page_scoped(call, rs, 0, scope ? scope : 1);
  if (!pg)
    return 0;
  size_t pos = pmcp__mx_pos(pg);
  pmcp_page_field_string(pg, "mode", "grouped");
  pmcp_page_field_string(pg, "run", r->c.s[0].run);
  pmcp_page_field_string(pg, "key", q->key);
  pmcp_page_field_string(pg, "axis", q->axis_s);
  if (q->scale)
    pmcp_page_field_string(pg, "scale", q->scale);
  pmcp_page_field_int(pg, "bucket", r->width);
  if (q->across)
    pmcp_page_field_string(pg, "across", q->across_s);
  if (r->no_time)
    pmcp_page_field_int(pg, "points_without_time", (int64_t)r->no_time);
  pmcp_page_list(pg, "groups");
  double *vals = malloc((r->nm ? r->nm : 1) * sizeof *vals);
  int rc = 0;
  int more = 0;
  const char *xname = q->axis == AX_STEP ? "step" : q->axis == AX_WALL ? "time_ms" : "relative_ms";
  for (size_t gi = pos; gi < r->ng && vals; gi++) {
    pmcp_json *j = pmcp_page_item(pg);
    if (!j)
      break;
    pmcp_json_object_begin(j);
    if (r->nby) {
      pmcp_json_key(j, "labels");
      by_labels(j, call, r->nby, r->g[gi].labels);
    }
    pmcp_json_key(j, "series");
    pmcp_json_uint(j, r->g[gi].n_series);
    /* merge the group's r->cells (pooled) or reduce its series' means */
    cell *gc = calloc(r->nb ? r->nb : 1, sizeof *gc);
    double *red = calloc(r->nb ? r->nb : 1, sizeof *red);
    size_t *nser = calloc(r->nb ? r->nb : 1, sizeof *nser);
    if (!gc || !red || !nser) {
      free(gc);
      free(red);
      free(nser);
      rc = PMCP_ENOMEM;
      break;
    }
    uint64_t nonfinite = 0;
    for (size_t b = 0; b < r->nb; b++) {
      size_t k = 0;
      if (q->across) {
        for (size_t m = 0; m < r->nm; m++)
          if (r->gof[m] == gi) {
            const cell *x = &r->cells[m * r->nb + b];
            cell_merge(&gc[b], x);
            if (x->count)
              vals[k++] = cell_mean(x);
          }
        nser[b] = k;
        if (k)
          red[b] = pmcp__mx_reduce(vals, k, q->across);
      } else {
        gc[b] = r->cells[gi * r->nb + b];
      }
      nonfinite += gc[b].nonfinite;
    }
    if (nonfinite) {
      pmcp_json_key(j, "non_finite");
      pmcp_json_uint(j, nonfinite);
    }
    pmcp_json_key(j, xname);
    pmcp_json_array_begin(j);
    for (size_t b = 0; b < r->nb; b++)
      if (gc[b].count)
        pmcp_json_int(j, r->origin + (int64_t)b * r->width);
    pmcp_json_array_end(j);
    if (q->across) {
      pmcp_json_key(j, q->across_s);
      pmcp_json_array_begin(j);
      for (size_t b = 0; b < r->nb; b++)
        if (gc[b].count)
          pmcp_json_number(j, red[b]);
      pmcp_json_array_end(j);
      pmcp_json_key(j, "n_series");
      pmcp_json_array_begin(j);
      for (size_t b = 0; b < r->nb; b++)
        if (gc[b].count)
          pmcp_json_uint(j, nser[b]);
      pmcp_json_array_end(j);
    } else {
      for (int k = 0; k < 7; k++) {
        if (!q->want[k])
          continue;
        pmcp_json_key(j, agg_names[k]);
        pmcp_json_array_begin(j);
        for (size_t b = 0; b < r->nb; b++) {
          const cell *x = &gc[b];
          if (!x->count)
            continue;
          switch (k) {
          case 0: pmcp_json_number(j, cell_mean(x)); break;
          case 1: pmcp_json_number(j, x->min); break;
          case 2: pmcp_json_number(j, x->max); break;
          case 3: pmcp_json_uint(j, x->count); break;
          /* +/-Inf (written as a string) when the sum is out of range */
          case 4: pmcp_json_number(j, pmcp__fsum_value(&x->sum)); break;
          case 5: pmcp_json_number(j, x->first); break;
          default: pmcp_json_number(j, x->last); break;
          }
        }
        pmcp_json_array_end(j);
      }
    }
    free(gc);
    free(red);
    free(nser);
    pmcp_json_object_end(j);
    uint64_t next = gi + 1;
    int arc = pmcp_page_commit(pg, &next, sizeof next);
    if (arc == PMCP_EBUDGET && gi == pos && q->rows_given && q->max_rows > q->fit_rows) {
      pmcp_page_free(pg);
      pg = NULL;
      /* with a given step_bucket the buckets are its own: the value that
       * fits names the bucket too */
      int64_t fw = q->width_given ? fitting_width(r->lo, r->hi, q->fit_rows) : 0;
      char with[64] = "";
      if (fw > 0)
        snprintf(with, sizeof with, " with step_bucket %lld", (long long)fw);
      pmcp__rs_fail(call, PMCP_TERR_TOKEN_BUDGET_TOO_SMALL,
                    "max_rows %zu: one group of %zu buckets does not fit the token budget "
                    "(%d); max_rows %zu fits it (the default)%s, or raise the budget",
                    q->max_rows, r->nb, q->budget, q->fit_rows, with);
      free(vals);
      return 0;
    }
    if (arc == PMCP_EBUDGET) {
      more = 1;
      break;
    }
    if (arc)
      break;
  }
  free(vals);
  if (rc == 0)
    return pmcp__rs_send(call, pg, more);
  pmcp_page_free(pg);
  return rc;
}

int pmcp__mx_grouped(pmcp_call *call, pmcp__research *rs)
{
  grq q;
  if (g_parse(call, &q))
    return 0;
  gres r;
  memset(&r, 0, sizeof r);
  int rc = g_fetch(call, rs, &q, &r);
  if (rc == 0)
    rc = g_render(call, rs, &q, &r);
  else if (rc > 0)
    rc = 0;
  gres_free(&r);
  return rc;
}
