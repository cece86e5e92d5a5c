/* SPDX-License-Identifier: MIT */
/* SQLite backend: how float points are stored (metrics.c has the rest of
 * the metric series code, shared with PostgreSQL). Points are kept in
 * compressed blocks (sq_codec.c) of up to PMCP__SQ_BLOCK points, each row
 * carrying the block's count, min, max, sum, first, last and step range
 * (and the block itself its segments' summaries), so reads by step range
 * decode only the blocks they touch and summaries read whole blocks and
 * segments without decoding them. */
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
  pmcp_buf data = PMCP_BUF_INIT;
  int rc = pmcp__sq_encode(q, pts, n, &data);
  if (rc) {
    pmcp_buf_dispose(&data);
    return pmcp_store_set_error(s, rc, "cannot compress metric points");
  }
  pmcp_bucket b;
  pmcp__metric_summarize(pts, n, &b, NULL);
  int have = !isnan(b.min);
  static const char sql[] =
      "INSERT OR REPLACE INTO metric_blocks(series_id, seq, n, nonfinite, step_min, step_max,"
      " time_min, time_max, vmin, vmax, vsum, first, last, step_first, step_last,"
      " step_at_min, step_at_max, codec, data)"
      " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,3,?18)";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(s, q, sql, &st))) {
    pmcp_buf_dispose(&data);
    return rc;
  }
  sqlite3_bind_int64(st, 1, series);
  sqlite3_bind_int64(st, 2, seq);
  sqlite3_bind_int64(st, 3, (int64_t)n);
  sqlite3_bind_int64(st, 4, (int64_t)b.nonfinite);
  sqlite3_bind_int64(st, 5, b.step_min);
  sqlite3_bind_int64(st, 6, b.step_max);
  if (b.time_min) {
    sqlite3_bind_int64(st, 7, b.time_min);
    sqlite3_bind_int64(st, 8, b.time_max);
  }
  if (have) {
    sqlite3_bind_double(st, 9, b.min);
    sqlite3_bind_double(st, 10, b.max);
    sqlite3_bind_int64(st, 16, b.step_at_min);
    sqlite3_bind_int64(st, 17, b.step_at_max);
  }
  sqlite3_bind_double(st, 11, b.sum);
  /* first / last only when finite (the series' own first / last come
   * from these columns); a summary reads them as logged from the
   * block's segment headers. */
  if (isfinite(b.first))
    sqlite3_bind_double(st, 12, b.first);
  if (isfinite(b.last))
    sqlite3_bind_double(st, 13, b.last);
  sqlite3_bind_int64(st, 14, b.step_first);
  sqlite3_bind_int64(st, 15, b.step_last);
  sqlite3_bind_blob(st, 18, data.ptr, (int)data.len, SQLITE_TRANSIENT);
  int src = sqlite3_step(st);
  sqlite3_reset(st);
  pmcp_buf_dispose(&data);
  if (src != SQLITE_DONE)
    return pmcp__sq_err(s, q, src, "store metric block");
  return 0;
}

int pmcp__sq_reencode_blocks(pmcp_store *s, pmcp__sq *q)
{
  /* codec is 3 for version 3 blocks, 1 for every older one. */
  static const char sql_old[] = "SELECT id, data FROM metric_blocks WHERE codec<>3";
  static const char sql_set[] = "UPDATE metric_blocks SET codec=3, data=?2 WHERE id=?1";
  sqlite3_stmt *st = NULL, *up = NULL;
  int src = sqlite3_prepare_v2(q->db, sql_old, -1, &st, NULL);
  if (src == SQLITE_OK)
    src = sqlite3_prepare_v2(q->db, sql_set, -1, &up, NULL);
  if (src != SQLITE_OK) {
    sqlite3_finalize(st);
    return pmcp__sq_err(s, q, src, "migrate metric blocks");
  }
  pmcp_buf data = PMCP_BUF_INIT;
  int rc = 0;
  /* Updating rows the SELECT has passed is safe in SQLite (a rowid
   * table's cursor keeps its place); a row is never rewritten twice. */
  while (rc == 0 && (src = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(st, 0);
    pmcp_point *pts;
    size_t n;
    rc = pmcp__sq_dec_block(&q->dec, sqlite3_column_blob(st, 1),
                            (size_t)sqlite3_column_bytes(st, 1), 0, &pts, &n);
    if (rc) {
      rc = pmcp_store_set_error(s, rc, "metric block row %lld is corrupt", (long long)id);
      break;
    }
    if ((rc = pmcp__sq_encode(q, pts, n, &data))) {
      rc = pmcp_store_set_error(s, rc, "cannot compress metric points");
      break;
    }
    sqlite3_bind_int64(up, 1, id);
    sqlite3_bind_blob(up, 2, data.ptr, (int)data.len, SQLITE_STATIC);
    int urc = sqlite3_step(up);
    sqlite3_reset(up);
    if (urc != SQLITE_DONE)
      rc = pmcp__sq_err(s, q, urc, "migrate metric blocks");
  }
  if (rc == 0 && src != SQLITE_DONE)
    rc = pmcp__sq_err(s, q, src, "migrate metric blocks");
  sqlite3_finalize(st);
  sqlite3_finalize(up);
  pmcp_buf_dispose(&data);
  return rc;
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
