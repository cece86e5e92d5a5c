/* SPDX-License-Identifier: MIT */
/* Exact buckets on an axis shared by every entry of one call: the edges
 * are fixed from the call's range before any series is read, and each
 * series is scanned into them (pmcp__store_scan): a storage block lying
 * inside one step bucket counts through its summary (count, non-finite
 * count, sum, min, max), every other block in range is decoded point by
 * point. So counts are exact for any series size, and the statistics of a
 * bucket describe exactly the finite points it counts. */
#include "tracking/tracking.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "research/page.h"
#include "store/store_int.h" /* pmcp__store_scan */

void pmcp__trk_axis_make(pmcp__trk_axis *ax, int axis, int64_t lo, int64_t hi,
                         size_t max_buckets)
{
  memset(ax, 0, sizeof *ax);
  ax->axis = axis;
  ax->lo = lo;
  ax->hi = hi;
  if (lo > hi || max_buckets == 0)
    return;
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
  if (span == 0)
    span = UINT64_MAX; /* the whole int64 range: one short of it is near enough */
  uint64_t w = span / max_buckets + (span % max_buckets != 0);
  if (w > (uint64_t)INT64_MAX)
    w = (uint64_t)INT64_MAX;
  ax->width = (int64_t)(w ? w : 1);
  ax->n = (size_t)(span / (uint64_t)ax->width + (span % (uint64_t)ax->width != 0));
}

int64_t pmcp__trk_axis_edge(const pmcp__trk_axis *ax, size_t i)
{
  /* the last edge closes the range: one past its last step or ms */
  if (i >= ax->n)
    return ax->hi == INT64_MAX ? INT64_MAX : ax->hi + 1;
  return (int64_t)((uint64_t)ax->lo + (uint64_t)i * (uint64_t)ax->width);
}

typedef struct scan {
  const pmcp__trk_axis *ax;
  int64_t off;
  pmcp__trk_bucket *bk;
  uint64_t no_time;
} scan;

static void bucket_add(pmcp__trk_bucket *t, const pmcp_point *p)
{
  pmcp_bucket *b = &t->b;
  if (!b->count) {
    b->step_min = b->step_max = p->step;
    b->time_min = b->time_max = p->time_ms;
    b->min = INFINITY;
    b->max = -INFINITY;
  } else {
    b->step_min = p->step < b->step_min ? p->step : b->step_min;
    b->step_max = p->step > b->step_max ? p->step : b->step_max;
    b->time_min = p->time_ms < b->time_min ? p->time_ms : b->time_min;
    b->time_max = p->time_ms > b->time_max ? p->time_ms : b->time_max;
  }
  b->count++;
  if (!isfinite(p->value)) {
    b->nonfinite++;
    return;
  }
  pmcp__fsum_add(&t->sum, p->value);
  b->min = p->value < b->min ? p->value : b->min;
  b->max = p->value > b->max ? p->value : b->max;
}

/* The bucket of axis position @p x, or -1 outside the range. */
static long long bucket_of(const pmcp__trk_axis *ax, int64_t x)
{
  if (x < ax->lo || x > ax->hi)
    return -1;
  return (long long)(((uint64_t)x - (uint64_t)ax->lo) / (uint64_t)ax->width);
}

static int on_block(void *ud, const pmcp_bucket *sum)
{
  scan *s = ud;
  if (s->ax->axis != PMCP__TRK_AX_STEP)
    return 1; /* times are not ordered by step: decode */
  long long b0 = bucket_of(s->ax, sum->step_min), b1 = bucket_of(s->ax, sum->step_max);
  /* a sum out of a double's range is no use to the bucket's: decode */
  if (b0 < 0 || b0 != b1 || (sum->count > sum->nonfinite && !isfinite(sum->sum)))
    return 1;
  pmcp_bucket *b = &s->bk[b0].b;
  uint64_t fin = sum->count - sum->nonfinite, had = b->count - b->nonfinite;
  if (!b->count) {
    b->step_min = sum->step_min;
    b->step_max = sum->step_max;
    b->time_min = sum->time_min;
    b->time_max = sum->time_max;
    b->min = INFINITY;
    b->max = -INFINITY;
  } else {
    b->step_min = sum->step_min < b->step_min ? sum->step_min : b->step_min;
    b->step_max = sum->step_max > b->step_max ? sum->step_max : b->step_max;
  }
  b->count += sum->count;
  b->nonfinite += sum->nonfinite;
  if (fin) {
    pmcp__fsum_add(&s->bk[b0].sum, sum->sum);
    b->min = had && b->min < sum->min ? b->min : sum->min;
    b->max = had && b->max > sum->max ? b->max : sum->max;
  }
  return 0;
}

static int on_points(void *ud, const pmcp_point *p, size_t n)
{
  scan *s = ud;
  for (size_t i = 0; i < n; i++) {
    int64_t x = p[i].step;
    if (s->ax->axis != PMCP__TRK_AX_STEP) {
      if (p[i].time_ms <= 0) {
        s->no_time++;
        continue;
      }
      x = p[i].time_ms - s->off;
    }
    long long b = bucket_of(s->ax, x);
    if (b >= 0)
      bucket_add(&s->bk[b], &p[i]);
  }
  return 0;
}

int pmcp__trk_bucket_scan(pmcp__tracking *tk, int64_t series, const pmcp__trk_axis *ax,
                          int64_t off, int64_t step_from, int64_t step_to,
                          pmcp__trk_bucket *bk, uint64_t *no_time)
{
  memset(bk, 0, ax->n * sizeof *bk);
  if (no_time)
    *no_time = 0;
  if (!ax->n)
    return 0;
  scan s = {ax, off, bk, 0};
  pmcp__scan_cb cb = {on_block, on_points, &s};
  if (ax->axis == PMCP__TRK_AX_STEP) {
    step_from = step_from > ax->lo ? step_from : ax->lo;
    step_to = step_to < ax->hi ? step_to : ax->hi;
  }
  if (step_from > step_to)
    return 0;
  pthread_mutex_lock(tk->rs->lock);
  int rc = pmcp__store_scan(tk->rs->store, tk->rs->tenant, series, step_from, step_to,
                            ax->axis == PMCP__TRK_AX_STEP ? PMCP__SCAN_NO_TIME : 0, &cb);
  pthread_mutex_unlock(tk->rs->lock);
  if (no_time)
    *no_time = s.no_time;
  return rc;
}

static int edge_w(pmcp_json *j, const pmcp__trk_axis *ax, int64_t e)
{
  if (ax->axis == PMCP__TRK_AX_STEP)
    return pmcp__rs_number(j, (double)e);
  if (ax->axis == PMCP__TRK_AX_RELATIVE)
    return pmcp__rs_number(j, (double)e / 1000.0);
  char iso[48];
  pmcp__iso_ms(e, iso, sizeof iso);
  return pmcp_json_string(j, iso);
}

int pmcp__trk_edges_fields(pmcp__trk_page *p, const pmcp__trk_axis *ax)
{
  if (!ax->n)
    return p->rc;
  pmcp_json *j = pmcp__trk_field(p);
  if (j) {
    pmcp_json_array_begin(j);
    for (size_t i = 0; i <= ax->n; i++)
      edge_w(j, ax, pmcp__trk_axis_edge(ax, i));
    pmcp_json_array_end(j);
  }
  pmcp__trk_field_end(p, "bucket_edges");
  int step = ax->axis == PMCP__TRK_AX_STEP;
  return pmcp__trk_field_num(p, step ? "bucket_width_steps" : "bucket_width_s",
                             step ? (double)ax->width : (double)ax->width / 1000.0);
}

/* One of the parallel arrays: @p what 0 the first edges, 1 mean, 2 min,
 * 3 max, 4 count, 5 nonfinite; buckets without points are left out. */
static void bucket_array(pmcp_json *j, const char *key, int what, const pmcp__trk_bucket *tb,
                         const pmcp__trk_axis *ax)
{
  pmcp_json_key(j, key);
  pmcp_json_array_begin(j);
  for (size_t b = 0; b < ax->n; b++) {
    const pmcp_bucket *bk = &tb[b].b;
    uint64_t finite = bk->count - bk->nonfinite;
    if (!bk->count)
      continue;
    if (what == 0)
      edge_w(j, ax, pmcp__trk_axis_edge(ax, b));
    else if (what == 4 || what == 5)
      pmcp__rs_number(j, (double)(what == 4 ? finite : bk->nonfinite));
    else if (!finite) /* non-finite points only: no statistics */
      pmcp_json_null(j);
    else
      pmcp__rs_number(j, what == 1   ? pmcp__fsum_mean(&tb[b].sum, (double)finite, bk->min, bk->max)
                         : what == 2 ? bk->min
                                     : bk->max);
  }
  pmcp_json_array_end(j);
}

int pmcp__trk_buckets_w(pmcp_json *j, const char *x_name, const pmcp__trk_bucket *tb,
                        const pmcp__trk_axis *ax)
{
  uint64_t nonfinite = 0;
  for (size_t b = 0; b < ax->n; b++)
    nonfinite += tb[b].b.nonfinite;
  static const char *const keys[] = {NULL, "mean", "min", "max", "count", "nonfinite"};
  for (int what = 0; what < (nonfinite ? 6 : 5); what++)
    bucket_array(j, what ? keys[what] : x_name, what, tb, ax);
  return pmcp_json_error(j);
}
