/* SPDX-License-Identifier: MIT */
/* Internal: the metric series code both backends share, written once over
 * sql.h (metrics.c: series, logging, pending points, sets; metrics_read.c:
 * the reads' common parts). A backend keeps only how float points are
 * stored (SQLite: compressed blocks, sq_codec.c; PostgreSQL: chunk arrays,
 * pg_block.c) and how a summary's buckets are made from them. */
#ifndef PMCP_STORE_METRICS_H
#define PMCP_STORE_METRICS_H

#include <stdint.h>

#include "store/sql.h"

/* Points per metric block, and a point's position id: block seq *
 * PMCP__METRIC_POS + its index in the block + 1 (the same on both
 * backends, so positions mean the same). */
#define PMCP__METRIC_BLOCK 16384
#define PMCP__METRIC_POS 65536

/* Points of one series waiting to be written as blocks. */
typedef struct pmcp__sql_pending {
  int64_t series;
  int64_t tenant;
  pmcp_point *pts;
  size_t n, cap;
  /* The partial tail block the points began from (rewritten in place), or
   * -1 when the first block written gets a new seq. */
  int64_t tail_seq;
  int64_t next_seq;      /* the seq the next new block gets */
} pmcp__sql_pending;

/* How a backend stores float points. */
typedef struct pmcp__metric_ops {
  /* Stores @p n (1..PMCP__METRIC_BLOCK) points as block @p seq of
   * @p series with its summary: a new block (@p fresh) or the one of that
   * seq replaced. */
  int (*block_write)(pmcp_store *s, pmcp__sql *c, int64_t tenant, int64_t series, int64_t seq,
                     int fresh, const pmcp_point *pts, size_t n);
  /* Loads the points of the partial tail block @p seq (@p n points) of
   * @p series into p->pts (malloc'd; p->n, p->cap). @p st is on the row
   * of the tail query (columns seq, n, next_seq and, on SQLite, data).
   * The message names the block when it is corrupt. */
  int (*tail_load)(pmcp_store *s, pmcp__sql *c, pmcp__stmt *st, int64_t series, int64_t seq,
                   int64_t n, pmcp__sql_pending *p);
} pmcp__metric_ops;

/* A backend's metric state, seen by reference (its fields stay the
 * backend's own). */
typedef struct pmcp__metrics {
  pmcp__sql *c;
  const pmcp__metric_ops *ops;
  const int *in_txn;     /* an explicit transaction is open */
  pmcp__sql_pending **pending;
  size_t *n_pending, *cap_pending;
} pmcp__metrics;

/* A backend's state @p q (with members c, in_txn, pending, n_pending,
 * cap_pending) and its ops as a pmcp__metrics. */
#define PMCP__METRICS(q, mops)                                                              \
  (&(pmcp__metrics){&(q)->c, (mops), &(q)->in_txn, &(q)->pending, &(q)->n_pending,           \
                    &(q)->cap_pending})

/* metrics.c */
/* The summary of pts[0..n) (n >= 1) in logging order: what a bucket
 * takes from points it takes whole (the first minimum / maximum wins;
 * first / last as logged; min / max NaN when no value is finite; times of
 * 0 mean none; the sum of the finite values rounded once, +/-Inf only
 * when it is out of a double's range), and in *untimed how many points
 * have no time. A stored summary whose sum is not finite while it holds
 * finite values is no use to a sum over more points: readers decode its
 * points instead. */
void pmcp__metric_summarize(const pmcp_point *pts, size_t n, pmcp_bucket *out,
                            uint64_t *untimed);
int pmcp__sql_series(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                     const pmcp_series_spec *spec, int64_t *out);
/* Checks that @p series belongs to tenant @p t (and has @p kind unless
 * NULL): PMCP_ENOTFOUND / PMCP_EINVAL with a message. */
int pmcp__sql_series_check(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, int64_t series,
                           const char *kind);
int pmcp__sql_log(pmcp_store *s, const pmcp__metrics *m, pmcp_tenant t, int64_t series,
                  const pmcp_point *points, size_t n);
int pmcp__sql_log_histogram(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                            int64_t step, int64_t time_ms, const double *edges,
                            const double *counts, size_t n_bins);
int pmcp__sql_log_scatter(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                          int64_t step, int64_t time_ms, const double *x, const double *y,
                          size_t n);
/* Writes every pending series out (blocks and series summary), then
 * drops the buffers. */
int pmcp__sql_metrics_flush(pmcp_store *s, const pmcp__metrics *m);
void pmcp__sql_drop_pending(const pmcp__metrics *m);

/* metrics_read.c */
/* Before reading float points of @p series: the connection is ready, the
 * caller's pending points are written, the series is the tenant's and
 * holds floats. */
int pmcp__sql_metric_read(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, int64_t series);
/* The start of pmcp_store_points(): no points yet, @p after_id checked,
 * then pmcp__sql_metric_read(). */
int pmcp__sql_points_begin(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, int64_t series,
                           int64_t after_id, size_t *n_out, int64_t *next_id);

/* What a summary covers: the steps (or times) lo..hi. */
typedef struct pmcp__summary_range {
  int64_t lo, hi;
  int empty;             /* no points in range: no buckets */
} pmcp__summary_range;

/* Checks a summary's arguments and the series (pmcp__sql_metric_read),
 * then narrows [from, to] to the series' points: r->empty when none. The
 * messages name the time axis when @p by_time. */
int pmcp__sql_summary_range(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, int64_t series,
                            int64_t from, int64_t to, size_t n_buckets, int by_time,
                            pmcp__summary_range *r);
int pmcp__sql_series_list(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                          pmcp_buf *out);
int pmcp__sql_series_sets(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                          int64_t step_from, int64_t step_to, const char *after,
                          size_t limit, pmcp_buf *out);

#endif
