/* SPDX-License-Identifier: MIT */
/* The candidate points of a long `series` row: real points of the range
 * from which the row's max_points are chosen (metrics_series.c). Read by
 * the store's scan: a block or segment of at most `unit` points inside
 * the range gives its first, minimum, maximum and last point from its
 * summary without being decoded; larger ones are split into their parts,
 * and decoded points give the same four per run of `unit` points. The
 * row's first and last finite points (by step, then value) are then made
 * exact by reading only the points at the range's ends. */
#include "research/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h" /* pmcp__store_scan */

static int cand_push(pmcp__mx_cands *c, int64_t step, double v)
{
  if (!isfinite(v))
    return 0;
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 256;
    pmcp__mx_pt *np = realloc(c->p, cap * sizeof *np);
    if (!np)
      return PMCP_ENOMEM;
    c->p = np;
    c->cap = cap;
  }
  c->p[c->n++] = (pmcp__mx_pt){step, v, NAN};
  return 0;
}

/* A summary with finite values: its unit's steps widen the span that the
 * end points are looked for in. */
static void cand_unit(pmcp__mx_cands *c, int64_t step_min, int64_t step_max)
{
  if (step_min < c->unit_lo)
    c->unit_lo = step_min;
  if (step_max > c->unit_hi)
    c->unit_hi = step_max;
}

int pmcp__mx_cands_bucket(pmcp__mx_cands *c, const pmcp_bucket *b)
{
  c->total += b->count;
  c->nonfinite += b->nonfinite;
  if (b->count == b->nonfinite)
    return 0;
  cand_unit(c, b->step_min, b->step_max);
  int rc = cand_push(c, b->step_first, b->first);
  if (!rc)
    rc = cand_push(c, b->step_at_min, b->min);
  if (!rc)
    rc = cand_push(c, b->step_at_max, b->max);
  if (!rc)
    rc = cand_push(c, b->step_last, b->last);
  return rc;
}

typedef struct cscan {
  pmcp__mx_cands *c;
  uint64_t unit;
} cscan;

static int cs_block(void *ud, const pmcp_bucket *b)
{
  cscan *x = ud;
  if (b->count > x->unit)
    return 1;
  return pmcp__mx_cands_bucket(x->c, b);
}

/* Decoded points, in runs of x->unit: each run's lowest and highest
 * (step, value) and its first minimum and last maximum, so a decoded
 * run never needs the end search. */
static int cs_points(void *ud, const pmcp_point *p, size_t n)
{
  cscan *x = ud;
  pmcp__mx_cands *c = x->c;
  c->total += n;
  for (size_t i = 0; i < n;) {
    size_t e = n - i > x->unit ? i + (size_t)x->unit : n;
    size_t lo = SIZE_MAX, hi = SIZE_MAX, mn = SIZE_MAX, mx = SIZE_MAX;
    for (; i < e; i++) {
      double v = p[i].value;
      int64_t st = p[i].step;
      if (!isfinite(v)) {
        c->nonfinite++;
        continue;
      }
      if (lo == SIZE_MAX) {
        lo = hi = mn = mx = i;
        continue;
      }
      if (st < p[lo].step || (st == p[lo].step && v < p[lo].value))
        lo = i;
      if (st > p[hi].step || (st == p[hi].step && v > p[hi].value))
        hi = i;
      if (v < p[mn].value)
        mn = i;
      if (v >= p[mx].value)
        mx = i;
    }
    if (lo == SIZE_MAX)
      continue;
    size_t pick[4] = {lo, mn, mx, hi};
    for (int k = 0; k < 4; k++) {
      int seen = 0;
      for (int j = 0; j < k; j++)
        seen |= pick[j] == pick[k];
      int rc = seen ? 0 : cand_push(c, p[pick[k]].step, p[pick[k]].value);
      if (rc)
        return rc;
    }
  }
  return 0;
}

int pmcp__mx_pt_cmp(const void *a, const void *b)
{
  const pmcp__mx_pt *x = a, *y = b;
  if (x->step != y->step)
    return x->step < y->step ? -1 : 1;
  return x->v < y->v ? -1 : x->v > y->v ? 1 : 0;
}

/* The end search: the lowest (or highest) finite point by (step, value);
 * summaries of non-finite points only are skipped, the others decoded. */
typedef struct efind {
  int high, found;
  int64_t step;
  double v;
} efind;

static int ef_block(void *ud, const pmcp_bucket *b)
{
  (void)ud;
  return b->count != b->nonfinite;
}

static int ef_points(void *ud, const pmcp_point *p, size_t n)
{
  efind *f = ud;
  for (size_t i = 0; i < n; i++) {
    double v = p[i].value;
    int64_t st = p[i].step;
    if (!isfinite(v))
      continue;
    int better = !f->found ||
                 (f->high ? st > f->step || (st == f->step && v > f->v)
                          : st < f->step || (st == f->step && v < f->v));
    if (better) {
      f->found = 1;
      f->step = st;
      f->v = v;
    }
  }
  return 0;
}

static int end_find(pmcp__research *rs, int64_t series, int64_t from, int64_t to, int high,
                    efind *f)
{
  memset(f, 0, sizeof *f);
  f->high = high;
  pmcp__scan_cb cb = {ef_block, ef_points, f};
  pthread_mutex_lock(rs->lock);
  int rc = pmcp__store_scan(rs->store, rs->tenant, series, from, to, PMCP__SCAN_NO_TIME, &cb);
  pthread_mutex_unlock(rs->lock);
  return rc;
}

int pmcp__mx_cands_finish(pmcp__research *rs, int64_t series, pmcp__mx_cands *c)
{
  if (!c->n)
    return 0;
  qsort(c->p, c->n, sizeof *c->p, pmcp__mx_pt_cmp);
  size_t w = 0;
  for (size_t i = 0; i < c->n; i++)
    if (!w || c->p[i].step != c->p[w - 1].step || c->p[i].v != c->p[w - 1].v)
      c->p[w++] = c->p[i];
  c->n = w;
  /* A summary taken whole names its unit's lowest step but not the value
   * there (first is in logging order, and may be non-finite): the first
   * finite point lies in [unit_lo, the lowest candidate's step]. Only
   * those steps are read (usually one segment); the same at the top. */
  efind f;
  int rc = 0;
  if (c->unit_lo <= c->p[0].step) {
    if ((rc = end_find(rs, series, c->unit_lo, c->p[0].step, 0, &f)))
      return rc;
    if (f.found && (f.step != c->p[0].step || f.v != c->p[0].v)) {
      if ((rc = cand_push(c, f.step, f.v)))
        return rc;
      memmove(c->p + 1, c->p, (c->n - 1) * sizeof *c->p);
      c->p[0] = (pmcp__mx_pt){f.step, f.v, NAN};
    }
  }
  if (c->unit_hi >= c->p[c->n - 1].step) {
    if ((rc = end_find(rs, series, c->p[c->n - 1].step, c->unit_hi, 1, &f)))
      return rc;
    if (f.found && (f.step != c->p[c->n - 1].step || f.v != c->p[c->n - 1].v))
      rc = cand_push(c, f.step, f.v);
  }
  return rc;
}

int pmcp__mx_cands_scan(pmcp__research *rs, int64_t series, int64_t lo, int64_t hi,
                        uint64_t unit, pmcp__mx_cands *c)
{
  pmcp__mx_cands_reset(c);
  cscan x = {c, unit ? unit : 1};
  pmcp__scan_cb cb = {cs_block, cs_points, &x};
  pthread_mutex_lock(rs->lock);
  int rc = pmcp__store_scan(rs->store, rs->tenant, series, lo, hi, PMCP__SCAN_NO_TIME, &cb);
  pthread_mutex_unlock(rs->lock);
  return rc;
}

void pmcp__mx_cands_reset(pmcp__mx_cands *c)
{
  c->n = 0;
  c->total = c->nonfinite = 0;
  c->unit_lo = INT64_MAX;
  c->unit_hi = INT64_MIN;
}

int pmcp__mx_cands_scannable(const pmcp__research *rs)
{
  return rs->store->scan != NULL;
}
