/* SPDX-License-Identifier: MIT */
/* PostgreSQL backend: reading float points (metrics_read.c has what both
 * backends share). Raw points by step range with positions (unnesting only
 * the chunks a page needs), and summaries whose buckets are made in SQL
 * from block and chunk summaries. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg.h"
#include "util/fsum.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define CHUNK_S STR(PMCP__PG_CHUNK)

/* ---- reads ---- */

int pmcp__pg_points(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                    int64_t step_from, int64_t step_to, int64_t after_id, pmcp_point *out,
                    size_t cap, size_t *n_out, int64_t *next_id)
{
  pmcp__pg *q = PG(ctx);
  int rc = pmcp__sql_points_begin(s, &q->c, t, series, after_id, n_out, next_id);
  if (rc || cap == 0)
    return rc;
  if (cap > 10000000)
    cap = 10000000;
  /* A point's position is seq * PMCP__PG_POS + its index in the block + 1,
   * as in the SQLite backend, so positions mean the same on both. Blocks
   * are read a batch at a time (enough for the points wanted), so paging
   * through a long series never unnests what lies beyond the page. */
  static const char sql_blocks[] =
      "SELECT seq FROM metric_blocks WHERE series_id=$1 AND seq>=$2 AND step_max>=$3"
      " AND step_min<=$4 ORDER BY seq LIMIT $5";
  static const char sql[] =
      "SELECT c.seq * 65536 + c.k * " CHUNK_S " + u.o, u.s, u.t, u.v FROM metric_chunks c,"
      " unnest(c.steps, c.times, c.vals) WITH ORDINALITY AS u(s, t, v, o)"
      " WHERE c.series_id=$1 AND c.seq>=$2 AND c.seq<=$7 AND c.step_max>=$3 AND c.step_min<=$4"
      " AND u.s>=$3 AND u.s<=$4 AND c.seq * 65536 + c.k * " CHUNK_S " + u.o > $5"
      " ORDER BY c.seq, c.k, u.o LIMIT $6";
  size_t n = 0;
  int src;
  int full = 0;
  int64_t last_id = 0;
  int64_t from_seq = after_id / PMCP__PG_POS;
  while (!full && rc == 0) {
    int64_t want_blocks = (int64_t)((cap - n) / PMCP__PG_BLOCK) + 2;
    pmcp__pg_stmt *st;
    if ((rc = pmcp__pg_prep(s, q, sql_blocks, &st)))
      return rc;
    pmcp__pg_bind_int64(st, 1, series);
    pmcp__pg_bind_int64(st, 2, from_seq);
    pmcp__pg_bind_int64(st, 3, step_from);
    pmcp__pg_bind_int64(st, 4, step_to);
    pmcp__pg_bind_int64(st, 5, want_blocks);
    int64_t first = -1, last = -1, nb = 0;
    while ((src = pmcp__pg_step(st)) == PG_ROW) {
      last = pmcp__pg_int64(st, 0);
      if (first < 0)
        first = last;
      nb++;
    }
    pmcp__pg_reset(st);
    if (src == PG_ERR)
      return pmcp__pg_err(s, q, "metric points");
    if (nb == 0)
      break;
    if ((rc = pmcp__pg_prep(s, q, sql, &st)))
      return rc;
    pmcp__pg_bind_int64(st, 1, series);
    pmcp__pg_bind_int64(st, 2, first);
    pmcp__pg_bind_int64(st, 3, step_from);
    pmcp__pg_bind_int64(st, 4, step_to);
    pmcp__pg_bind_int64(st, 5, after_id);
    pmcp__pg_bind_int64(st, 6, (int64_t)(cap - n) + 1);
    pmcp__pg_bind_int64(st, 7, last);
    while ((src = pmcp__pg_step(st)) == PG_ROW) {
      if (n == cap) {
        full = 1;
        break;
      }
      last_id = pmcp__pg_int64(st, 0);
      out[n].step = pmcp__pg_int64(st, 1);
      out[n].time_ms = pmcp__pg_int64(st, 2);
      out[n].value = pmcp__pg_double(st, 3);
      n++;
    }
    if (src == PG_ERR)
      rc = pmcp__pg_err(s, q, "metric points");
    pmcp__pg_reset(st);
    if (nb < want_blocks)
      break; /* no blocks beyond this batch */
    from_seq = last + 1;
  }
  if (rc)
    return rc;
  *n_out = n;
  *next_id = full ? last_id : 0;
  return 0;
}

/* Buckets computed in SQL, exact, with the SQLite backend's results (the
 * LATERAL ... OFFSET 0 subqueries keep the planner from scanning every
 * chunk of the series when only a few blocks need theirs). Three kinds
 * of items, merged by one GROUP BY:
 *  - blocks inside one bucket give their summary columns (when their
 *    first and last values are finite: the block row keeps no other);
 *    their chunks are not read;
 *  - the other blocks are split into their chunks (metric_chunks rows of
 *    PMCP__PG_CHUNK points each): a chunk inside one bucket gives its
 *    summary columns;
 *  - only the points of chunks straddling a bucket edge or the range's
 *    ends are read and bucketed one by one (each chunk's arrays are
 *    detoasted once, by the "|| '{}'" in a subquery that is not flattened,
 *    then indexed: unnest() costs twice as much).
 * A block or chunk whose sum did not fit a double (+/-Inf) is split like
 * one on an edge, and the items' sums are added in two parts, the huge
 * ones scaled by 2^-256 (exactly), so no finite sum overflows on the way.
 * first / last / step of the extremes follow logging order (block seq,
 * then position in the block), taken with min/max over [position, value]
 * arrays rather than ordered aggregates (no sort). Only the buckets travel
 * to the service. The axis is the step or the wall-clock time (points
 * without a time are left out: a block's summary counts them, so a block
 * with a chunk holding any is split into its chunks, and such a chunk is
 * read point by point). */
#define SUMMARY_SQL(LO, HI, KEYMIN, KEYMAX, WHOLE_EXTRA, CMIN, CMAX, CEXTRA, PKEY, PEXTRA)    \
  "WITH blk AS (SELECT seq, n, nonfinite, step_min, step_max, coalesce(time_min, 0) AS tmin,"   \
  " coalesce(time_max, 0) AS tmax, vmin, vmax, vsum, first, last, step_first, step_last,"       \
  " step_at_min, step_at_max, time_min, time_max,"                                             \
  " coalesce((" KEYMIN ">=$2 AND " KEYMAX "<=$3" WHOLE_EXTRA " AND first IS NOT NULL"        \
  " AND last IS NOT NULL AND vsum NOT IN ('Infinity', '-Infinity') AND (" KEYMIN "-$2)/$4 = (" KEYMAX "-$2)/$4), false) AS whole"         \
  " FROM metric_blocks WHERE series_id=$1 AND " HI ">=$2 AND " LO "<=$3),"                      \
  " ch AS (SELECT c.*,"                                                                        \
  "  (" CMIN ">=$2 AND " CMAX "<=$3 AND c.vsum NOT IN ('Infinity', '-Infinity') AND (" CMIN "-$2)/$4 = (" CMAX "-$2)/$4" CEXTRA ") AS whole" \
  "  FROM blk b, LATERAL (SELECT c.seq, c.k, c.n, c.nonfinite, c.step_min, c.step_max,"       \
  "   c.time_min, c.time_max, c.untimed, c.vmin, c.vmax, c.vsum, c.first, c.last,"              \
  "   c.step_first, c.step_last, c.step_at_min, c.step_at_max FROM metric_chunks c"            \
  "   WHERE c.series_id=$1 AND c.seq=b.seq AND " CMAX ">=$2 AND " CMIN "<=$3 OFFSET 0) c"       \
  "  WHERE NOT b.whole),"                                                                      \
  " items AS ("                                                                                \
  " SELECT (" KEYMIN "-$2)/$4 AS bk, seq, 0::bigint AS o, n AS cnt, nonfinite AS nf,"           \
  "  step_min AS smin, step_max AS smax, tmin, tmax, vmin, vmax, vsum, first, last,"            \
  "  step_first AS sfirst, step_last AS slast, step_at_min AS atmin, step_at_max AS atmax"      \
  "  FROM blk WHERE whole"                                                                     \
  " UNION ALL"                                                                                 \
  " SELECT (" CMIN "-$2)/$4, c.seq, c.k * " CHUNK_S " + 1, c.n, c.nonfinite, c.step_min,"       \
  "  c.step_max, c.time_min, c.time_max, c.vmin, c.vmax, c.vsum, c.first, c.last,"             \
  "  c.step_first, c.step_last, c.step_at_min, c.step_at_max FROM ch c WHERE c.whole"          \
  " UNION ALL"                                                                                 \
  " SELECT (" PKEY "-$2)/$4, c.seq, c.k * " CHUNK_S " + u.o, 1,"                                \
  "  CASE WHEN f.fin THEN 0 ELSE 1 END, u.s, u.s,"                                             \
  "  u.t, u.t, CASE WHEN f.fin THEN u.v END, CASE WHEN f.fin THEN u.v END,"                     \
  "  CASE WHEN f.fin THEN u.v ELSE 0 END, u.v, u.v, u.s, u.s, u.s, u.s"                         \
  "  FROM ch c, LATERAL (SELECT m.steps || '{}'::bigint[] AS s, m.times || '{}'::bigint[] AS t,"  \
  "   m.vals || '{}'::float8[] AS v FROM metric_chunks m"                                         \
  "   WHERE m.series_id=$1 AND m.seq=c.seq AND m.k=c.k OFFSET 0) a,"                             \
  "  generate_series(1, c.n) AS o, LATERAL (SELECT a.s[o] AS s, a.t[o] AS t, a.v[o] AS v, o) u,"  \
  "  LATERAL (SELECT u.v NOT IN ('NaN', 'Infinity', '-Infinity') AS fin) f"                     \
  "  WHERE NOT c.whole AND " PKEY ">=$2 AND " PKEY "<=$3" PEXTRA ")"                            \
  " SELECT bk, sum(cnt), sum(nf), min(smin), max(smax), coalesce(min(nullif(tmin, 0)), 0),"     \
  " max(tmax), min(vmin), max(vmax),"                                                          \
  " coalesce(sum(vsum) FILTER (WHERE abs(vsum) < 1e270::float8), 0),"                            \
  " coalesce(sum(vsum * 8.636168555094445e-78::float8)"                                          \
  "  FILTER (WHERE NOT abs(vsum) < 1e270::float8), 0),"                                          \
  " (min(ARRAY[(seq * 65536 + o)::float8, first]))[2],"                                        \
  " (max(ARRAY[(seq * 65536 + o)::float8, last]))[2],"                                          \
  " (min(ARRAY[seq * 65536 + o, sfirst]))[2], (max(ARRAY[seq * 65536 + o, slast]))[2],"          \
  " (min(ARRAY[vmin, (seq * 65536 + o)::float8, atmin]) FILTER (WHERE vmin IS NOT NULL))[3],"   \
  " (max(ARRAY[vmax, -(seq * 65536 + o)::float8, atmax]) FILTER (WHERE vmax IS NOT NULL))[3]"   \
  " FROM items GROUP BY bk ORDER BY bk LIMIT $5"

static const char sql_step[] =
    SUMMARY_SQL("step_min", "step_max", "step_min", "step_max", "", "c.step_min", "c.step_max",
                "", "u.s", "");
static const char sql_time[] =
    SUMMARY_SQL("time_min", "time_max", "time_min", "time_max",
                " AND time_min<>0 AND NOT EXISTS (SELECT 1 FROM metric_chunks x"
                " WHERE x.series_id=$1 AND x.seq=metric_blocks.seq AND x.untimed<>0)",
                "c.time_min", "c.time_max", " AND c.untimed=0", "u.t", " AND u.t<>0");

static int summary_axis(pmcp_store *s, pmcp__pg *q, pmcp_tenant t, int64_t series,
                        int64_t step_from, int64_t step_to, size_t n_buckets, pmcp_bucket *out,
                        size_t *n_out, int by_time)
{
  *n_out = 0;
  pmcp__summary_range r;
  int rc = pmcp__sql_summary_range(s, &q->c, t, series, step_from, step_to, n_buckets, by_time,
                                   &r);
  if (rc || r.empty)
    return rc;
  int64_t lo = r.lo, hi = r.hi;
  uint64_t uw = ((uint64_t)hi - (uint64_t)lo) / n_buckets + 1;
  if (uw > (uint64_t)INT64_MAX)
    return pmcp_store_set_error(s, PMCP_EINVAL, "the %s range is too wide to bucket",
                                by_time ? "time" : "step");
  int64_t width = (int64_t)uw;
  pmcp__pg_stmt *st;
  if ((rc = pmcp__pg_prep(s, q, by_time ? sql_time : sql_step, &st)))
    return rc;
  pmcp__pg_bind_int64(st, 1, series);
  pmcp__pg_bind_int64(st, 2, lo);
  pmcp__pg_bind_int64(st, 3, hi);
  pmcp__pg_bind_int64(st, 4, width);
  pmcp__pg_bind_int64(st, 5, (int64_t)n_buckets);
  size_t n = 0;
  int src;
  while ((src = pmcp__pg_step(st)) == PG_ROW && n < n_buckets) {
    pmcp_bucket *b = &out[n++];
    memset(b, 0, sizeof *b);
    b->count = (uint64_t)pmcp__pg_int64(st, 1);
    b->nonfinite = (uint64_t)pmcp__pg_int64(st, 2);
    b->step_min = pmcp__pg_int64(st, 3);
    b->step_max = pmcp__pg_int64(st, 4);
    b->time_min = pmcp__pg_int64(st, 5);
    b->time_max = pmcp__pg_int64(st, 6);
    b->min = pmcp__pg_double(st, 7);
    b->max = pmcp__pg_double(st, 8);
    /* the sum in two parts (SUMMARY_SQL): only here may it round to +/-Inf */
    pmcp__fsum sum = {pmcp__pg_double(st, 9), pmcp__pg_double(st, 10)};
    b->sum = pmcp__fsum_value(&sum);
    b->first = pmcp__pg_double(st, 11);
    b->last = pmcp__pg_double(st, 12);
    b->step_first = pmcp__pg_int64(st, 13);
    b->step_last = pmcp__pg_int64(st, 14);
    b->step_at_min = pmcp__pg_int64(st, 15);
    b->step_at_max = pmcp__pg_int64(st, 16);
    if (pmcp__pg_isnull(st, 7))
      b->min = b->max = NAN;
  }
  if (src == PG_ERR)
    rc = pmcp__pg_err(s, q, "series summary");
  pmcp__pg_reset(st);
  *n_out = rc ? 0 : n;
  return rc;
}

int pmcp__pg_summary(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                     int64_t step_from, int64_t step_to, size_t n_buckets, pmcp_bucket *out,
                     size_t *n_out)
{
  return summary_axis(s, PG(ctx), t, series, step_from, step_to, n_buckets, out, n_out, 0);
}

int pmcp__pg_summary_time(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                          int64_t time_from, int64_t time_to, size_t n_buckets,
                          pmcp_bucket *out, size_t *n_out)
{
  return summary_axis(s, PG(ctx), t, series, time_from, time_to, n_buckets, out, n_out, 1);
}

/* pg_conn.c's op table names these. */
int pmcp__pg_series_list(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                         pmcp_buf *out)
{
  return pmcp__sql_series_list(s, ctx, t, run, out);
}

int pmcp__pg_series_sets(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                         int64_t step_from, int64_t step_to, const char *after,
                         size_t limit, pmcp_buf *out)
{
  return pmcp__sql_series_sets(s, ctx, t, series, step_from, step_to, after, limit, out);
}
