/* SPDX-License-Identifier: MIT */
/* SQLite backend: reading float points (metrics_read.c has what both
 * backends share). Raw points by step range with positions (decoding only
 * the blocks a range touches), exact summaries into buckets from the
 * per-block summaries and, in the blocks a bucket edge cuts, the
 * per-segment ones (sq_codec.c), decoding only the segments an edge cuts,
 * and the block scan the research tools' grouped metrics use
 * (pmcp__store_scan), which works by segment the same way. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sq.h"
#include "util/fsum.h"

/* ---- reads ---- */

int pmcp__sq_points(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                    int64_t step_from, int64_t step_to, int64_t after_id, pmcp_point *out,
                    size_t cap, size_t *n_out, int64_t *next_id)
{
  pmcp__sq *q = SQ(ctx);
  int rc = pmcp__sql_points_begin(s, &q->c, t, series, after_id, n_out, next_id);
  if (rc || cap == 0)
    return rc;
  int64_t first_seq = after_id / PMCP__SQ_POS;
  static const char sql[] =
      "SELECT seq, data FROM metric_blocks WHERE series_id=?1 AND seq>=?2"
      " AND step_max>=?3 AND step_min<=?4 ORDER BY seq";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(s, q, sql, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, series);
  sqlite3_bind_int64(st, 2, first_seq);
  sqlite3_bind_int64(st, 3, step_from);
  sqlite3_bind_int64(st, 4, step_to);
  size_t n = 0;
  int src;
  int full = 0;
  int64_t last_id = 0;
  while (!full && (src = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t seq = sqlite3_column_int64(st, 0);
    pmcp_point *pts;
    size_t np;
    rc = pmcp__sq_dec_block(&q->dec, sqlite3_column_blob(st, 1),
                            (size_t)sqlite3_column_bytes(st, 1), 0, &pts, &np);
    if (rc) {
      sqlite3_reset(st);
      return pmcp_store_set_error(s, rc, "metric block %lld of series %lld is corrupt",
                                  (long long)seq, (long long)series);
    }
    for (size_t i = 0; i < np; i++) {
      int64_t id = seq * PMCP__SQ_POS + (int64_t)i + 1;
      if (id <= after_id || pts[i].step < step_from || pts[i].step > step_to)
        continue;
      if (n == cap) {
        full = 1;
        break;
      }
      out[n++] = pts[i];
      last_id = id;
    }
  }
  sqlite3_reset(st);
  *n_out = n;
  *next_id = full ? last_id : 0;
  return 0;
}

typedef struct bucket_acc {
  pmcp_bucket b;
  pmcp__fsum sum;        /* b.sum, without overflow on the way */
  int used, have_val;
} bucket_acc;

/* A summary that can be added to others whole: its sum is finite (or it
 * has no finite value). */
static int sum_usable(const pmcp_bucket *x)
{
  return isfinite(x->sum) || x->count == x->nonfinite;
}

static inline void acc_point(bucket_acc *a, const pmcp_point *p)
{
  pmcp_bucket *b = &a->b;
  if (!a->used) {
    a->used = 1;
    b->step_min = b->step_max = p->step;
    b->time_min = b->time_max = p->time_ms;
    b->first = p->value;
    b->step_first = p->step;
  }
  if (p->step < b->step_min)
    b->step_min = p->step;
  if (p->step > b->step_max)
    b->step_max = p->step;
  if (p->time_ms) {
    if (!b->time_min || p->time_ms < b->time_min)
      b->time_min = p->time_ms;
    if (p->time_ms > b->time_max)
      b->time_max = p->time_ms;
  }
  b->count++;
  b->last = p->value;
  b->step_last = p->step;
  if (!isfinite(p->value)) {
    b->nonfinite++;
    return;
  }
  pmcp__fsum_add(&a->sum, p->value);
  if (!a->have_val || p->value < b->min) {
    b->min = p->value;
    b->step_at_min = p->step;
  }
  if (!a->have_val || p->value > b->max) {
    b->max = p->value;
    b->step_at_max = p->step;
  }
  a->have_val = 1;
}

/* A block's summary row, columns @p c.. : step_min, step_max, time_min,
 * time_max (0 when none), vmin, vmax, vsum, first, last, step_first,
 * step_last, n, nonfinite, step_at_min, step_at_max. min/max are NaN when
 * the block holds no finite value. */
#define SUMMARY_COLS                                                                 \
  "step_min, step_max, coalesce(time_min, 0), coalesce(time_max, 0), vmin, vmax, vsum," \
  " first, last, step_first, step_last, n, nonfinite, step_at_min, step_at_max"

static double col_or_nan(sqlite3_stmt *st, int c)
{
  return sqlite3_column_type(st, c) == SQLITE_NULL ? NAN : sqlite3_column_double(st, c);
}

static void row_summary(sqlite3_stmt *st, int c, pmcp_bucket *b)
{
  b->step_min = sqlite3_column_int64(st, c);
  b->step_max = sqlite3_column_int64(st, c + 1);
  b->time_min = sqlite3_column_int64(st, c + 2);
  b->time_max = sqlite3_column_int64(st, c + 3);
  b->min = col_or_nan(st, c + 4);
  b->max = col_or_nan(st, c + 5);
  b->sum = sqlite3_column_double(st, c + 6);
  b->first = col_or_nan(st, c + 7);
  b->last = col_or_nan(st, c + 8);
  b->step_first = sqlite3_column_int64(st, c + 9);
  b->step_last = sqlite3_column_int64(st, c + 10);
  b->count = (uint64_t)sqlite3_column_int64(st, c + 11);
  b->nonfinite = (uint64_t)sqlite3_column_int64(st, c + 12);
  b->step_at_min = sqlite3_column_int64(st, c + 13);
  b->step_at_max = sqlite3_column_int64(st, c + 14);
}

/* Merges a whole block's summary (blocks come in logging order). */
static void acc_block(bucket_acc *a, const pmcp_bucket *x)
{
  pmcp_bucket *b = &a->b;
  int has_val = isfinite(x->min);
  if (!a->used) {
    a->used = 1;
    b->step_min = x->step_min;
    b->step_max = x->step_max;
    b->time_min = x->time_min;
    b->time_max = x->time_max;
    b->first = x->first;
    b->step_first = x->step_first;
  }
  if (x->step_min < b->step_min)
    b->step_min = x->step_min;
  if (x->step_max > b->step_max)
    b->step_max = x->step_max;
  if (x->time_min && (!b->time_min || x->time_min < b->time_min))
    b->time_min = x->time_min;
  if (x->time_max > b->time_max)
    b->time_max = x->time_max;
  b->count += x->count;
  b->nonfinite += x->nonfinite;
  if (isfinite(x->sum))
    pmcp__fsum_add(&a->sum, x->sum);
  b->last = x->last;
  b->step_last = x->step_last;
  if (has_val) {
    if (!a->have_val || x->min < b->min) {
      b->min = x->min;
      b->step_at_min = x->step_at_min;
    }
    if (!a->have_val || x->max > b->max) {
      b->max = x->max;
      b->step_at_max = x->step_at_max;
    }
    a->have_val = 1;
  }
}

/* Points into the buckets of width @p width from @p lo (keys outside
 * [lo, hi] and, on the time axis, points without a time left out). */
static void acc_points(bucket_acc *acc, const pmcp_point *pts, size_t np, int64_t lo,
                       int64_t hi, uint64_t width, int by_time)
{
  /* Points come mostly in key order: divide only when a point leaves the
   * current bucket. */
  uint64_t cur_lo = 1, cur_hi = 0;
  size_t bi = 0;
  for (size_t i = 0; i < np; i++) {
    int64_t key = by_time ? pts[i].time_ms : pts[i].step;
    if (key < lo || key > hi || (by_time && pts[i].time_ms == 0))
      continue;
    uint64_t off = (uint64_t)key - (uint64_t)lo;
    if (off < cur_lo || off > cur_hi) {
      bi = (size_t)(off / width);
      cur_lo = (uint64_t)bi * width;
      cur_hi = cur_lo + (width - 1);
    }
    acc_point(&acc[bi], &pts[i]);
  }
}

/* The bytes [at, at + len) of block row @p id's data, through one blob
 * handle kept for the call: a segment is read without the rest of the
 * block (its overflow pages). */
typedef struct blob_rd {
  sqlite3_blob *h;
  unsigned char *buf;
  size_t cap;
} blob_rd;

static int blob_at(pmcp_store *s, pmcp__sq *q, blob_rd *b, int64_t id, int reopen, size_t at,
                   size_t len, const unsigned char **out)
{
  int src = SQLITE_OK;
  if (!b->h)
    src = sqlite3_blob_open(q->db, "main", "metric_blocks", "data", id, 0, &b->h);
  else if (reopen)
    src = sqlite3_blob_reopen(b->h, id);
  if (src != SQLITE_OK)
    return pmcp__sq_err(s, q, src, "read metric block");
  if (b->cap < len) {
    unsigned char *nb = realloc(b->buf, len);
    if (!nb)
      return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
    b->buf = nb;
    b->cap = len;
  }
  if (len && (src = sqlite3_blob_read(b->h, b->buf, (int)len, (int)at)) != SQLITE_OK)
    return pmcp__sq_err(s, q, src, "read metric block");
  *out = b->buf;
  return 0;
}

/* The bucket of keys [kmin, kmax] when they all lie inside [lo, hi] and
 * in one bucket, else -1. */
static ptrdiff_t one_bucket(int64_t kmin, int64_t kmax, int64_t lo, int64_t hi, uint64_t width)
{
  if (kmin < lo || kmax > hi)
    return -1;
  uint64_t b0 = ((uint64_t)kmin - (uint64_t)lo) / width;
  uint64_t b1 = ((uint64_t)kmax - (uint64_t)lo) / width;
  return b0 == b1 ? (ptrdiff_t)b0 : -1;
}

/* A decoder's error @p rc on block row @p id, with its message. */
static int dec_error(pmcp_store *s, int rc, int64_t id)
{
  if (rc == PMCP_ENOMEM)
    return pmcp_store_set_error(s, rc, "out of memory");
  return pmcp_store_set_error(s, PMCP_ECORRUPT, "metric block row %lld is corrupt",
                              (long long)id);
}

/* How many of a block's @p len bytes hold its segment headers at most. */
static size_t hdr_len(size_t len)
{
  size_t most = PMCP__SQ_SEG_HDR(PMCP__SQ_MAX_SEGS);
  return most < len ? most : len;
}

/* A cut block's parts: its segment headers (segs[0..*nseg), room for
 * PMCP__SQ_MAX_SEGS) or, for a block of an older version (*nseg 0), all
 * its points decoded (*pts, *np: the decoder's buffer). */
static int block_open(pmcp_store *s, pmcp__sq *q, blob_rd *b, int64_t id, size_t len,
                      unsigned dflags, pmcp__sq_seg *segs, size_t *nseg, pmcp_point **pts,
                      size_t *np)
{
  const unsigned char *h;
  size_t hl = hdr_len(len);
  *nseg = 0;
  int rc = blob_at(s, q, b, id, 1, 0, hl, &h);
  if (rc)
    return rc;
  int v3 = pmcp__sq_seg_headers(h, hl, len, segs, nseg);
  if (v3 < 0)
    return dec_error(s, v3, id);
  if (v3 == 1)
    return 0;
  if ((rc = blob_at(s, q, b, id, 0, 0, len, &h)))
    return rc;
  if ((rc = pmcp__sq_dec_block(&q->dec, h, len, dflags, pts, np)))
    return dec_error(s, rc, id);
  return 0;
}

/* The points of segment @p g of block row @p id (the decoder's buffer). */
static int seg_points(pmcp_store *s, pmcp__sq *q, blob_rd *b, int64_t id,
                      const pmcp__sq_seg *g, unsigned dflags, pmcp_point **pts, size_t *np)
{
  const unsigned char *h;
  int rc = blob_at(s, q, b, id, 0, g->at, g->len, &h);
  if (rc)
    return rc;
  if ((rc = pmcp__sq_dec_seg(&q->dec, h, g->len, g, dflags, pts, np)))
    return dec_error(s, rc, id);
  return 0;
}

/* A block that is not one bucket's whole: its segments, each taken from
 * its header when it lies in one bucket (and, on the time axis, every
 * point has a time), else decoded. A block of an older version is
 * decoded whole. */
static int block_parts(pmcp_store *s, pmcp__sq *q, blob_rd *b, int64_t id, size_t len,
                       bucket_acc *acc, int64_t lo, int64_t hi, uint64_t width, int by_time)
{
  pmcp__sq_seg segs[PMCP__SQ_MAX_SEGS];
  size_t nseg;
  pmcp_point *pts;
  size_t np;
  int rc = block_open(s, q, b, id, len, 0, segs, &nseg, &pts, &np);
  if (rc)
    return rc;
  if (nseg == 0) {
    acc_points(acc, pts, np, lo, hi, width, by_time);
    return 0;
  }
  for (size_t k = 0; k < nseg; k++) {
    const pmcp__sq_seg *g = &segs[k];
    int64_t kmin = by_time ? g->sum.time_min : g->sum.step_min;
    int64_t kmax = by_time ? g->sum.time_max : g->sum.step_max;
    if ((by_time && kmin == 0) || kmax < lo || kmin > hi)
      continue;
    ptrdiff_t bi = one_bucket(kmin, kmax, lo, hi, width);
    if (bi >= 0 && (!by_time || g->untimed == 0) && sum_usable(&g->sum)) {
      acc_block(&acc[bi], &g->sum);
      continue;
    }
    if ((rc = seg_points(s, q, b, id, g, 0, &pts, &np)))
      return rc;
    acc_points(acc, pts, np, lo, hi, width, by_time);
  }
  return 0;
}

/* Buckets over the step axis, or (by_time) over wall-clock time, where
 * points without a time are left out. Every bucket is exact: a block
 * inside one bucket is taken from its row, the others segment by
 * segment (block_parts), so only the segments a bucket edge or the
 * range's end cuts are decoded. */
static int summary_axis(pmcp_store *s, pmcp__sq *q, pmcp_tenant t, int64_t series,
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
  uint64_t width = ((uint64_t)hi - (uint64_t)lo) / n_buckets + 1;
  bucket_acc *acc = calloc(n_buckets, sizeof *acc);
  if (!acc)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  /* length(data) reads the blob's size, not its pages. */
  static const char sql_blocks[] =
      "SELECT id, first IS NULL OR last IS NULL, " SUMMARY_COLS ", length(data)"
      " FROM metric_blocks WHERE series_id=?1 AND step_max>=?2 AND step_min<=?3 ORDER BY seq";
  static const char sql_tblocks[] =
      "SELECT id, first IS NULL OR last IS NULL, " SUMMARY_COLS ", length(data)"
      " FROM metric_blocks WHERE series_id=?1 AND time_max>=?2 AND time_min<=?3 ORDER BY seq";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(s, q, by_time ? sql_tblocks : sql_blocks, &st))) {
    free(acc);
    return rc;
  }
  sqlite3_bind_int64(st, 1, series);
  sqlite3_bind_int64(st, 2, lo);
  sqlite3_bind_int64(st, 3, hi);
  blob_rd b = {NULL, NULL, 0};
  int src = SQLITE_DONE;
  while (rc == 0 && (src = sqlite3_step(st)) == SQLITE_ROW) {
    /* Whole from the row when its first and last value are finite (the
     * row keeps no other) and, on the time axis, every point has a time
     * (the row counts the others too, which the time axis leaves out: the
     * segment headers say how many). */
    int64_t id = sqlite3_column_int64(st, 0);
    size_t len = (size_t)sqlite3_column_int64(st, 17);
    if (!sqlite3_column_int(st, 1)) {
      pmcp_bucket sum;
      row_summary(st, 2, &sum);
      ptrdiff_t bi = by_time ? one_bucket(sum.time_min, sum.time_max, lo, hi, width)
                             : one_bucket(sum.step_min, sum.step_max, lo, hi, width);
      if (bi >= 0 && by_time && sum.time_min) {
        const unsigned char *h;
        uint64_t untimed = 1;
        if ((rc = blob_at(s, q, &b, id, 1, 0, hdr_len(len), &h)))
          break;
        if (pmcp__sq_block_untimed(h, hdr_len(len), &untimed) != 1 || untimed)
          bi = -1;
      }
      if (bi >= 0 && sum_usable(&sum)) {
        acc_block(&acc[bi], &sum);
        continue;
      }
    }
    rc = block_parts(s, q, &b, id, len, acc, lo, hi, width, by_time);
  }
  if (rc == 0 && src != SQLITE_DONE)
    rc = pmcp__sq_err(s, q, src, "series summary");
  sqlite3_reset(st);
  if (b.h)
    sqlite3_blob_close(b.h);
  free(b.buf);
  size_t n = 0;
  for (size_t i = 0; i < n_buckets && rc == 0; i++)
    if (acc[i].used) {
      if (!acc[i].have_val)
        acc[i].b.min = acc[i].b.max = NAN;
      acc[i].b.sum = pmcp__fsum_value(&acc[i].sum);
      out[n++] = acc[i].b;
    }
  free(acc);
  *n_out = n;
  return rc;
}

int pmcp__sq_summary(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                     int64_t step_from, int64_t step_to, size_t n_buckets, pmcp_bucket *out,
                     size_t *n_out)
{
  return summary_axis(s, SQ(ctx), t, series, step_from, step_to, n_buckets, out, n_out, 0);
}

int pmcp__sq_summary_time(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                          int64_t time_from, int64_t time_to, size_t n_buckets,
                          pmcp_bucket *out, size_t *n_out)
{
  return summary_axis(s, SQ(ctx), t, series, time_from, time_to, n_buckets, out, n_out, 1);
}

/* Hands @p cb the points of pts[0..np) with steps in [from, to] (the
 * buffer is the decoder's own: filtered in place). */
static int scan_points(const pmcp__scan_cb *cb, pmcp_point *pts, size_t np, int64_t from,
                       int64_t to, int inside)
{
  if (!inside) {
    size_t k = 0;
    for (size_t i = 0; i < np; i++)
      if (pts[i].step >= from && pts[i].step <= to)
        pts[k++] = pts[i];
    np = k;
  }
  return np ? cb->points(cb->ud, pts, np) : 0;
}

/* A block whose summary was not taken: segment by segment, each offered
 * to cb->block when it lies inside the range, decoded otherwise or when
 * declined. A block of an older version is decoded whole. */
static int scan_parts(pmcp_store *s, pmcp__sq *q, blob_rd *b, int64_t id, size_t len,
                      int64_t from, int64_t to, unsigned dflags, const pmcp__scan_cb *cb)
{
  pmcp__sq_seg segs[PMCP__SQ_MAX_SEGS];
  size_t nseg;
  pmcp_point *pts;
  size_t np;
  int rc = block_open(s, q, b, id, len, dflags, segs, &nseg, &pts, &np);
  if (rc)
    return rc;
  if (nseg == 0)
    return scan_points(cb, pts, np, from, to, 0);
  for (size_t k = 0; k < nseg; k++) {
    const pmcp__sq_seg *g = &segs[k];
    if (g->sum.step_max < from || g->sum.step_min > to)
      continue;
    int inside = g->sum.step_min >= from && g->sum.step_max <= to;
    if (inside && cb->block) {
      int want = cb->block(cb->ud, &g->sum);
      if (want < 0)
        return want;
      if (!want)
        continue;
    }
    if ((rc = seg_points(s, q, b, id, g, dflags, &pts, &np)))
      return rc;
    if ((rc = scan_points(cb, pts, np, from, to, inside)))
      return rc;
  }
  return 0;
}

int pmcp__sq_scan(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series, int64_t step_from,
                  int64_t step_to, unsigned flags, const pmcp__scan_cb *cb)
{
  pmcp__sq *q = SQ(ctx);
  int rc = pmcp__sql_metric_read(s, &q->c, t, series);
  if (rc)
    return rc;
  static const char sql[] =
      "SELECT id, " SUMMARY_COLS ", length(data) FROM metric_blocks WHERE series_id=?1"
      " AND step_max>=?2 AND step_min<=?3 ORDER BY seq";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(s, q, sql, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, series);
  sqlite3_bind_int64(st, 2, step_from);
  sqlite3_bind_int64(st, 3, step_to);
  unsigned dflags = flags & PMCP__SCAN_NO_TIME ? PMCP__SQ_DEC_NO_TIME : 0;
  blob_rd b = {NULL, NULL, 0};
  int src = SQLITE_DONE;
  while (rc == 0 && (src = sqlite3_step(st)) == SQLITE_ROW) {
    pmcp_bucket sum;
    row_summary(st, 1, &sum);
    /* The row keeps first / last only when finite (NaN otherwise, which
     * a callback that needs them declines). */
    if (sum.step_min >= step_from && sum.step_max <= step_to && cb->block) {
      int want = cb->block(cb->ud, &sum);
      if (want < 0) {
        rc = want;
        break;
      }
      if (!want)
        continue;
    }
    rc = scan_parts(s, q, &b, sqlite3_column_int64(st, 0), (size_t)sqlite3_column_int64(st, 16),
                    step_from, step_to, dflags, cb);
  }
  if (rc == 0 && src != SQLITE_DONE)
    rc = pmcp__sq_err(s, q, src, "metric blocks");
  sqlite3_reset(st);
  if (b.h)
    sqlite3_blob_close(b.h);
  free(b.buf);
  return rc;
}
