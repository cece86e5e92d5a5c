/* SPDX-License-Identifier: MIT */
/* PostgreSQL backend: how float points are stored (metrics.c has the rest
 * of the metric series code, shared with SQLite). Points are kept in
 * blocks of up to PMCP__PG_BLOCK points (pg_block.c), each row carrying
 * the block's count, min, max, sum, first, last and step range and the
 * same for each chunk of its points, so reads by step range decode only
 * the blocks they touch and summaries read whole blocks and chunks without
 * decoding them. */
#include <stdint.h>
#include <stdlib.h>

#include "store/pg.h"

static int block_write(pmcp_store *s, pmcp__sql *c, int64_t tenant, int64_t series,
                       int64_t seq, int fresh, const pmcp_point *pts, size_t n)
{
  return pmcp__pg_block_write(s, (pmcp__pg *)c, tenant, series, seq, fresh, pts, n);
}

/* The partial tail block is reloaded from its chunks' arrays. */
static int tail_load(pmcp_store *s, pmcp__sql *c, pmcp__stmt *row, int64_t series,
                     int64_t seq, int64_t n, pmcp__sql_pending *p)
{
  (void)row;
  pmcp__pg *q = (pmcp__pg *)c;
  static const char sql_pts[] =
      "SELECT u.s, u.t, u.v FROM metric_chunks c,"
      " unnest(c.steps, c.times, c.vals) WITH ORDINALITY AS u(s, t, v, o)"
      " WHERE c.series_id=$1 AND c.seq=$2 ORDER BY c.k, u.o";
  pmcp__pg_stmt *st;
  int rc = pmcp__pg_prep(s, q, sql_pts, &st);
  if (rc)
    return rc;
  pmcp__pg_bind_int64(st, 1, series);
  pmcp__pg_bind_int64(st, 2, seq);
  p->pts = malloc(PMCP__PG_BLOCK * sizeof *p->pts);
  if (!p->pts)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  p->cap = PMCP__PG_BLOCK;
  int src;
  while ((src = pmcp__pg_step(st)) == PG_ROW && p->n < PMCP__PG_BLOCK) {
    pmcp_point *pt = &p->pts[p->n++];
    pt->step = pmcp__pg_int64(st, 0);
    pt->time_ms = pmcp__pg_int64(st, 1);
    pt->value = pmcp__pg_double(st, 2);
  }
  pmcp__pg_reset(st);
  if (src == PG_ERR)
    return pmcp__pg_err(s, q, "metric block");
  if ((int64_t)p->n != n)
    return pmcp_store_set_error(s, PMCP_ECORRUPT, "metric block %lld of series %lld is corrupt",
                                (long long)seq, (long long)series);
  return 0;
}

static const pmcp__metric_ops pg_metric_ops = {block_write, tail_load};

/* pg_conn.c's op table names these. */
int pmcp__pg_series(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                    const pmcp_series_spec *spec, int64_t *out)
{
  return pmcp__sql_series(s, ctx, t, run, spec, out);
}

int pmcp__pg_log(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                 const pmcp_point *points, size_t n)
{
  return pmcp__sql_log(s, PMCP__METRICS(PG(ctx), &pg_metric_ops), t, series, points, n);
}

int pmcp__pg_log_histogram(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                           int64_t step, int64_t time_ms, const double *edges,
                           const double *counts, size_t n_bins)
{
  return pmcp__sql_log_histogram(s, ctx, t, series, step, time_ms, edges, counts, n_bins);
}

int pmcp__pg_log_scatter(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                         int64_t step, int64_t time_ms, const double *x, const double *y,
                         size_t n)
{
  return pmcp__sql_log_scatter(s, ctx, t, series, step, time_ms, x, y, n);
}

int pmcp__pg_flush(pmcp_store *s, pmcp__pg *g)
{
  return pmcp__sql_metrics_flush(s, PMCP__METRICS(g, &pg_metric_ops));
}

void pmcp__pg_drop_pending(pmcp__pg *g)
{
  pmcp__sql_drop_pending(PMCP__METRICS(g, &pg_metric_ops));
}
