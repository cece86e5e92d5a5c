/* SPDX-License-Identifier: MIT */
/* SQLite backend: how float points are stored (metrics.c has the rest of
 * the metric series code, shared with PostgreSQL). Points are kept in
 * compressed blocks (sq_codec.c) of up to PMCP__SQ_BLOCK points, each row
 * carrying the block's count, min, max, sum, first, last and step range,
 * so reads by step range decode only the blocks they touch and summaries
 * read whole blocks without decoding them. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "store/sq.h"

static int write_block(pmcp_store *s, pmcp__sql *c, int64_t tenant, int64_t series,
                       int64_t seq, int fresh, const pmcp_point *pts, size_t n)
{
  /* A block replacing the tail block of its seq takes its row. */
  (void)tenant;
  (void)fresh;
  pmcp__sq *q = (pmcp__sq *)c;
  const void *data;
  size_t data_len;
  int rc = pmcp__sq_encode(q, pts, n, &data, &data_len);
  if (rc)
    return pmcp_store_set_error(s, rc, "cannot compress metric points");
  int64_t smin = pts[0].step, smax = pts[0].step, tmin = 0, tmax = 0;
  int64_t at_min = 0, at_max = 0;
  double vmin = 0, vmax = 0, sum = 0;
  int64_t nonfinite = 0;
  int have = 0;
  for (size_t i = 0; i < n; i++) {
    const pmcp_point *pt = &pts[i];
    if (pt->step < smin)
      smin = pt->step;
    if (pt->step > smax)
      smax = pt->step;
    if (pt->time_ms) {
      if (!tmin || pt->time_ms < tmin)
        tmin = pt->time_ms;
      if (!tmax || pt->time_ms > tmax)
        tmax = pt->time_ms;
    }
    if (!isfinite(pt->value)) {
      nonfinite++;
      continue;
    }
    sum += pt->value;
    if (!have || pt->value < vmin) {
      vmin = pt->value;
      at_min = pt->step;
    }
    if (!have || pt->value > vmax) {
      vmax = pt->value;
      at_max = pt->step;
    }
    have = 1;
  }
  static const char sql[] =
      "INSERT OR REPLACE INTO metric_blocks(series_id, seq, n, nonfinite, step_min, step_max,"
      " time_min, time_max, vmin, vmax, vsum, first, last, step_first, step_last,"
      " step_at_min, step_at_max, codec, data)"
      " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,1,?18)";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(s, q, sql, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, series);
  sqlite3_bind_int64(st, 2, seq);
  sqlite3_bind_int64(st, 3, (int64_t)n);
  sqlite3_bind_int64(st, 4, nonfinite);
  sqlite3_bind_int64(st, 5, smin);
  sqlite3_bind_int64(st, 6, smax);
  if (tmin) {
    sqlite3_bind_int64(st, 7, tmin);
    sqlite3_bind_int64(st, 8, tmax);
  }
  if (have) {
    sqlite3_bind_double(st, 9, vmin);
    sqlite3_bind_double(st, 10, vmax);
    sqlite3_bind_int64(st, 16, at_min);
    sqlite3_bind_int64(st, 17, at_max);
  }
  sqlite3_bind_double(st, 11, sum);
  if (isfinite(pts[0].value))
    sqlite3_bind_double(st, 12, pts[0].value);
  if (isfinite(pts[n - 1].value))
    sqlite3_bind_double(st, 13, pts[n - 1].value);
  sqlite3_bind_int64(st, 14, pts[0].step);
  sqlite3_bind_int64(st, 15, pts[n - 1].step);
  /* the encoder's buffer outlives the step */
  sqlite3_bind_blob(st, 18, data, (int)data_len, SQLITE_STATIC);
  int src = sqlite3_step(st);
  sqlite3_clear_bindings(st);
  sqlite3_reset(st);
  if (src != SQLITE_DONE)
    return pmcp__sq_err(s, q, src, "store metric block");
  return 0;
}

/* The tail block's bytes come with the tail query's row (column 3). */
static int tail_load(pmcp_store *s, pmcp__sql *c, pmcp__stmt *st, int64_t series, int64_t seq,
                     int64_t n, pmcp__sql_pending *p)
{
  (void)n;
  size_t len = 0;
  const void *data = pmcp__st_blob(st, 3, &len);
  int rc = pmcp__sq_decode((pmcp__sq *)c, data, len, &p->pts, &p->n);
  if (rc)
    return pmcp_store_set_error(s, rc, "metric block %lld of series %lld is corrupt",
                                (long long)seq, (long long)series);
  p->cap = p->n;
  return 0;
}

static const pmcp__metric_ops sq_metric_ops = {write_block, tail_load};

int pmcp__sq_log(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                 const pmcp_point *points, size_t n)
{
  return pmcp__sql_log(s, PMCP__METRICS(SQ(ctx), &sq_metric_ops), t, series, points, n);
}

int pmcp__sq_flush(pmcp_store *s, pmcp__sq *q)
{
  return pmcp__sql_metrics_flush(s, PMCP__METRICS(q, &sq_metric_ops));
}

void pmcp__sq_drop_pending(pmcp__sq *q)
{
  pmcp__sql_drop_pending(PMCP__METRICS(q, &sq_metric_ops));
}
