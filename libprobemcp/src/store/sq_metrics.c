/* SQLite backend: metric series. Float points are kept in compressed
 * blocks (sq_codec.c) of up to PMCP__SQ_BLOCK points, each row carrying the
 * block's count, min, max, sum, first, last and step range, so reads by
 * step range decode only the blocks they touch and summaries read whole
 * blocks without decoding them. Points wait in a per-series pending buffer
 * until a block fills or the write scope ends; a partial tail block is
 * reloaded and rewritten in place so series stay in full blocks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sq.h"

/* ---- series ---- */

static const char *kind_name(pmcp_metric_kind k)
{
  switch (k) {
  case PMCP_METRIC_FLOAT: return "float";
  case PMCP_METRIC_HISTOGRAM: return "histogram";
  case PMCP_METRIC_SCATTER: return "scatter";
  default: return NULL;
  }
}

static const char *scale_name(pmcp_metric_scale k)
{
  switch (k) {
  case PMCP_SCALE_STEP: return "step";
  case PMCP_SCALE_ENV_STEP: return "env_step";
  case PMCP_SCALE_EPISODE: return "episode";
  default: return NULL;
  }
}

static int label_cmp(const void *a, const void *b)
{
  const pmcp_label *x = a, *y = b;
  return strcmp(x->key, y->key);
}

/* Canonical labels: a JSON object with keys sorted. */
static int labels_json(pmcp_store *s, const pmcp_series_spec *spec, pmcp_buf *out)
{
  pmcp__buf_reset(out);
  if (spec->n_labels && !spec->labels)
    return pmcp_store_set_error(s, PMCP_EINVAL, "labels missing");
  if (spec->n_labels > 32)
    return pmcp_store_set_error(s, PMCP_EINVAL, "too many labels (at most 32)");
  pmcp_label sorted[32];
  for (size_t i = 0; i < spec->n_labels; i++) {
    sorted[i] = spec->labels[i];
    if (!sorted[i].key || !*sorted[i].key || strlen(sorted[i].key) > 64 || !sorted[i].value)
      return pmcp_store_set_error(s, PMCP_EINVAL,
          "a label needs a key (1-64 characters) and a value");
  }
  qsort(sorted, spec->n_labels, sizeof sorted[0], label_cmp);
  pmcp__buf_putc(out, '{');
  for (size_t i = 0; i < spec->n_labels; i++) {
    if (i && strcmp(sorted[i].key, sorted[i - 1].key) == 0)
      return pmcp_store_set_error(s, PMCP_EINVAL, "label '%s' given twice", sorted[i].key);
    if (i)
      pmcp__buf_putc(out, ',');
    pmcp__buf_json_string(out, sorted[i].key, strlen(sorted[i].key));
    pmcp__buf_putc(out, ':');
    pmcp__buf_json_string(out, sorted[i].value, strlen(sorted[i].value));
  }
  return pmcp__buf_putc(out, '}');
}

int pmcp__sq_series(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                    const pmcp_series_spec *spec, int64_t *out)
{
  pmcp__sq *q = SQ(ctx);
  const char *kind = kind_name(spec->kind ? spec->kind : PMCP_METRIC_FLOAT);
  const char *scale = scale_name(spec->scale ? spec->scale : PMCP_SCALE_STEP);
  if (!spec->key || !*spec->key || strlen(spec->key) > 256)
    return pmcp_store_set_error(s, PMCP_EINVAL, "a series needs a key of 1-256 characters");
  if (!kind)
    return pmcp_store_set_error(s, PMCP_EINVAL, "unknown metric kind %d", (int)spec->kind);
  if (!scale)
    return pmcp_store_set_error(s, PMCP_EINVAL, "unknown metric scale %d", (int)spec->scale);
  pmcp_buf labels = PMCP_BUF_INIT;
  int rc = labels_json(s, spec, &labels);
  if (rc) {
    pmcp_buf_dispose(&labels);
    return rc;
  }
  if ((rc = pmcp__sq_wbegin(s, q))) {
    pmcp_buf_dispose(&labels);
    return rc;
  }
  char k[32];
  int64_t run_id = 0;
  rc = pmcp__sq_resolve(s, q, t, run, "run", k, &run_id);
  if (rc == 0) {
    static const char sql_find[] =
        "SELECT id FROM series WHERE run_id=?1 AND key=?2 AND labels=?3 AND kind=?4 AND scale=?5";
    static const char sql_ins[] =
        "INSERT INTO series(tenant_id, run_id, key, labels, kind, scale) VALUES(?6,?1,?2,?3,?4,?5)";
    sqlite3_stmt *st;
    if ((rc = pmcp__sq_prep(s, q, sql_find, &st)) == 0) {
      for (int pass = 0; pass < 2 && rc == 0; pass++) {
        sqlite3_bind_int64(st, 1, run_id);
        sqlite3_bind_text(st, 2, spec->key, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 3, labels.ptr, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 4, kind, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, scale, -1, SQLITE_STATIC);
        if (pass == 1)
          sqlite3_bind_int64(st, 6, t.id);
        int src = sqlite3_step(st);
        if (pass == 0 && src == SQLITE_ROW) {
          *out = sqlite3_column_int64(st, 0);
          sqlite3_reset(st);
          break;
        }
        sqlite3_reset(st);
        if (pass == 0 && src != SQLITE_DONE)
          rc = pmcp__sq_err(s, q, src, "series");
        else if (pass == 1) {
          if (src != SQLITE_DONE)
            rc = pmcp__sq_err(s, q, src, "create series");
          else
            *out = sqlite3_last_insert_rowid(q->db);
        }
        if (pass == 0 && rc == 0)
          rc = pmcp__sq_prep(s, q, sql_ins, &st);
      }
    }
  }
  pmcp_buf_dispose(&labels);
  return pmcp__sq_wend(s, q, t, rc);
}

/* Checks that @p series belongs to tenant @p t and has kind @p kind. */
static int series_check(pmcp_store *s, pmcp__sq *q, pmcp_tenant t, int64_t series,
                        const char *kind)
{
  static const char sql[] = "SELECT kind FROM series WHERE id=?1 AND tenant_id=?2";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, sql, &st);
  if (rc)
    return rc;
  sqlite3_bind_int64(st, 1, series);
  sqlite3_bind_int64(st, 2, t.id);
  int src = sqlite3_step(st);
  if (src != SQLITE_ROW) {
    sqlite3_reset(st);
    return src == SQLITE_DONE
        ? pmcp_store_set_error(s, PMCP_ENOTFOUND, "no series %lld", (long long)series)
        : pmcp__sq_err(s, q, src, "series");
  }
  char have[16];
  snprintf(have, sizeof have, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_reset(st);
  if (kind && strcmp(have, kind) != 0)
    return pmcp_store_set_error(s, PMCP_EINVAL, "series %lld holds %s values, not %s",
                                (long long)series, have, kind);
  return 0;
}

/* ---- blocks ---- */

static int write_block(pmcp_store *s, pmcp__sq *q, pmcp__sq_pending *p,
                       const pmcp_point *pts, size_t n)
{
  int64_t seq = p->tail_seq >= 0 ? p->tail_seq : p->next_seq++;
  p->tail_seq = -1;
  pmcp_buf data = PMCP_BUF_INIT;
  int rc = pmcp__sq_encode(q, pts, n, &data);
  if (rc) {
    pmcp_buf_dispose(&data);
    return pmcp_store_set_error(s, rc, "cannot compress metric points");
  }
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
  if ((rc = pmcp__sq_prep(s, q, sql, &st))) {
    pmcp_buf_dispose(&data);
    return rc;
  }
  sqlite3_bind_int64(st, 1, p->series);
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
  sqlite3_bind_blob(st, 18, data.ptr, (int)data.len, SQLITE_TRANSIENT);
  int src = sqlite3_step(st);
  sqlite3_reset(st);
  pmcp_buf_dispose(&data);
  if (src != SQLITE_DONE)
    return pmcp__sq_err(s, q, src, "store metric block");
  return 0;
}

static int update_series_stats(pmcp_store *s, pmcp__sq *q, int64_t series)
{
  static const char sql[] =
      "UPDATE series SET (count, nonfinite, step_min, step_max, time_min, time_max, vmin, vmax,"
      " vsum, first, last, next_seq) = (SELECT sum(n), sum(nonfinite), min(step_min),"
      " max(step_max), min(time_min), max(time_max), min(vmin), max(vmax), total(vsum),"
      " (SELECT first FROM metric_blocks WHERE series_id=?1 ORDER BY seq LIMIT 1),"
      " (SELECT last FROM metric_blocks WHERE series_id=?1 ORDER BY seq DESC LIMIT 1),"
      " coalesce(max(seq) + 1, 0) FROM metric_blocks WHERE series_id=?1) WHERE id=?1";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, sql, &st);
  if (rc)
    return rc;
  sqlite3_bind_int64(st, 1, series);
  int src = sqlite3_step(st);
  sqlite3_reset(st);
  return src == SQLITE_DONE ? 0 : pmcp__sq_err(s, q, src, "series summary");
}

static void pending_free(pmcp__sq_pending *p)
{
  free(p->pts);
  p->pts = NULL;
  p->n = p->cap = 0;
}

void pmcp__sq_drop_pending(pmcp__sq *q)
{
  for (size_t i = 0; i < q->n_pending; i++)
    pending_free(&q->pending[i]);
  q->n_pending = 0;
}

int pmcp__sq_flush(pmcp_store *s, pmcp__sq *q)
{
  int rc = 0;
  for (size_t i = 0; i < q->n_pending && rc == 0; i++) {
    pmcp__sq_pending *p = &q->pending[i];
    if (p->n)
      rc = write_block(s, q, p, p->pts, p->n);
    if (rc == 0)
      rc = update_series_stats(s, q, p->series);
  }
  pmcp__sq_drop_pending(q);
  return rc;
}

static int pending_get(pmcp_store *s, pmcp__sq *q, int64_t series, pmcp__sq_pending **out)
{
  for (size_t i = 0; i < q->n_pending; i++)
    if (q->pending[i].series == series) {
      *out = &q->pending[i];
      return 0;
    }
  if (q->n_pending == q->cap_pending) {
    size_t cap = q->cap_pending ? q->cap_pending * 2 : 8;
    pmcp__sq_pending *np = realloc(q->pending, cap * sizeof *np);
    if (!np)
      return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
    q->pending = np;
    q->cap_pending = cap;
  }
  pmcp__sq_pending *p = &q->pending[q->n_pending];
  memset(p, 0, sizeof *p);
  p->series = series;
  p->tail_seq = -1;
  static const char sql[] =
      "SELECT b.seq, b.n, b.data, s.next_seq FROM series s LEFT JOIN metric_blocks b"
      " ON b.series_id=s.id AND b.seq=s.next_seq-1 WHERE s.id=?1";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, sql, &st);
  if (rc)
    return rc;
  sqlite3_bind_int64(st, 1, series);
  int src = sqlite3_step(st);
  if (src != SQLITE_ROW) {
    sqlite3_reset(st);
    return pmcp__sq_err(s, q, src, "series");
  }
  p->next_seq = sqlite3_column_int64(st, 3);
  if (sqlite3_column_type(st, 0) != SQLITE_NULL &&
      sqlite3_column_int64(st, 1) < PMCP__SQ_BLOCK) {
    pmcp_point *pts;
    size_t n;
    rc = pmcp__sq_decode(q, sqlite3_column_blob(st, 2), (size_t)sqlite3_column_bytes(st, 2),
                         &pts, &n);
    if (rc) {
      sqlite3_reset(st);
      return pmcp_store_set_error(s, rc, "metric block %lld of series %lld is corrupt",
                                  (long long)sqlite3_column_int64(st, 0), (long long)series);
    }
    p->tail_seq = sqlite3_column_int64(st, 0);
    p->pts = pts;
    p->n = n;
    p->cap = n;
  }
  sqlite3_reset(st);
  q->n_pending++;
  *out = p;
  return 0;
}

static int log_in(pmcp_store *s, pmcp__sq *q, pmcp_tenant t, int64_t series,
                  const pmcp_point *points, size_t n)
{
  int rc = series_check(s, q, t, series, "float");
  if (rc || n == 0)
    return rc;
  pmcp__sq_pending *p = NULL;
  if ((rc = pending_get(s, q, series, &p)))
    return rc;
  size_t i = 0;
  while (i < n && rc == 0) {
    size_t take = PMCP__SQ_BLOCK - p->n;
    if (take > n - i)
      take = n - i;
    if (p->n == 0 && take == PMCP__SQ_BLOCK) {
      rc = write_block(s, q, p, points + i, take);
    } else {
      if (p->cap < p->n + take) {
        pmcp_point *np = realloc(p->pts, PMCP__SQ_BLOCK * sizeof *np);
        if (!np)
          return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
        p->pts = np;
        p->cap = PMCP__SQ_BLOCK;
      }
      memcpy(p->pts + p->n, points + i, take * sizeof *points);
      p->n += take;
      if (p->n == PMCP__SQ_BLOCK) {
        rc = write_block(s, q, p, p->pts, p->n);
        p->n = 0;
      }
    }
    i += take;
  }
  return rc;
}

int pmcp__sq_log(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                 const pmcp_point *points, size_t n)
{
  pmcp__sq *q = SQ(ctx);
  int rc = pmcp__sq_wbegin(s, q);
  if (rc)
    return rc;
  return pmcp__sq_wend(s, q, t, log_in(s, q, t, series, points, n));
}

/* ---- histograms and scatter sets ---- */

static int set_in(pmcp_store *s, pmcp__sq *q, pmcp_tenant t, int64_t series, const char *kind,
                  int64_t step, int64_t time_ms, const double *a, size_t na, const double *b,
                  size_t nb)
{
  int rc = series_check(s, q, t, series, kind);
  if (rc)
    return rc;
  static const char sql[] =
      "INSERT INTO metric_sets(tenant_id, series_id, step, time, n, a, b) VALUES(?1,?2,?3,?4,?5,?6,?7)";
  static const char sql_stats[] =
      "UPDATE series SET count=count+1, step_min=min(coalesce(step_min, ?2), ?2),"
      " step_max=max(coalesce(step_max, ?2), ?2),"
      " time_min=CASE WHEN ?3 IS NULL THEN time_min ELSE min(coalesce(time_min, ?3), ?3) END,"
      " time_max=CASE WHEN ?3 IS NULL THEN time_max ELSE max(coalesce(time_max, ?3), ?3) END"
      " WHERE id=?1";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(s, q, sql, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, t.id);
  sqlite3_bind_int64(st, 2, series);
  sqlite3_bind_int64(st, 3, step);
  if (time_ms)
    sqlite3_bind_int64(st, 4, time_ms);
  sqlite3_bind_int64(st, 5, (int64_t)nb);
  sqlite3_bind_blob(st, 6, a, (int)(na * sizeof *a), SQLITE_TRANSIENT);
  sqlite3_bind_blob(st, 7, b, (int)(nb * sizeof *b), SQLITE_TRANSIENT);
  int src = sqlite3_step(st);
  sqlite3_reset(st);
  if (src != SQLITE_DONE)
    return pmcp__sq_err(s, q, src, "store set");
  if ((rc = pmcp__sq_prep(s, q, sql_stats, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, series);
  sqlite3_bind_int64(st, 2, step);
  if (time_ms)
    sqlite3_bind_int64(st, 3, time_ms);
  src = sqlite3_step(st);
  sqlite3_reset(st);
  return src == SQLITE_DONE ? 0 : pmcp__sq_err(s, q, src, "series summary");
}

int pmcp__sq_log_histogram(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                           int64_t step, int64_t time_ms, const double *edges,
                           const double *counts, size_t n_bins)
{
  pmcp__sq *q = SQ(ctx);
  if (n_bins == 0 || n_bins > 100000 || !edges || !counts)
    return pmcp_store_set_error(s, PMCP_EINVAL, "a histogram needs 1-100000 bins with edges and counts");
  for (size_t i = 0; i <= n_bins; i++)
    if (!isfinite(edges[i]) || (i && !(edges[i] > edges[i - 1])))
      return pmcp_store_set_error(s, PMCP_EINVAL,
          "histogram edges must be finite and strictly ascending (edge %zu)", i);
  for (size_t i = 0; i < n_bins; i++)
    if (!isfinite(counts[i]) || counts[i] < 0)
      return pmcp_store_set_error(s, PMCP_EINVAL,
          "histogram counts must be finite and not negative (bin %zu)", i);
  int rc = pmcp__sq_wbegin(s, q);
  if (rc)
    return rc;
  return pmcp__sq_wend(s, q, t, set_in(s, q, t, series, "histogram", step, time_ms, edges,
                                       n_bins + 1, counts, n_bins));
}

int pmcp__sq_log_scatter(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                         int64_t step, int64_t time_ms, const double *x, const double *y,
                         size_t n)
{
  pmcp__sq *q = SQ(ctx);
  if (n == 0 || n > 1000000 || !x || !y)
    return pmcp_store_set_error(s, PMCP_EINVAL, "a scatter set needs 1-1000000 (x, y) pairs");
  int rc = pmcp__sq_wbegin(s, q);
  if (rc)
    return rc;
  return pmcp__sq_wend(s, q, t, set_in(s, q, t, series, "scatter", step, time_ms, x, n, y, n));
}

/* ---- reads ---- */

static int flush_for_read(pmcp_store *s, pmcp__sq *q)
{
  /* Points pending inside the caller's own transaction are visible to it. */
  if (q->n_pending && q->in_txn)
    return pmcp__sq_flush(s, q);
  return 0;
}

int pmcp__sq_points(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                    int64_t step_from, int64_t step_to, int64_t after_id, pmcp_point *out,
                    size_t cap, size_t *n_out, int64_t *next_id)
{
  pmcp__sq *q = SQ(ctx);
  *n_out = 0;
  *next_id = 0;
  if (after_id < 0)
    return pmcp_store_set_error(s, PMCP_EINVAL, "after_id must not be negative");
  int rc = flush_for_read(s, q);
  if (!rc)
    rc = series_check(s, q, t, series, "float");
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
    rc = pmcp__sq_decode(q, sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1),
                         &pts, &np);
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
    free(pts);
  }
  sqlite3_reset(st);
  *n_out = n;
  *next_id = full ? last_id : 0;
  return 0;
}

typedef struct bucket_acc {
  pmcp_bucket b;
  int used, have_val;
} bucket_acc;

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
  b->sum += p->value;
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

/* Merges a whole block's summary row (columns from 2 on, see sql_blocks). */
static void acc_block(bucket_acc *a, sqlite3_stmt *st)
{
  pmcp_bucket *b = &a->b;
  int64_t smin = sqlite3_column_int64(st, 2), smax = sqlite3_column_int64(st, 3);
  int64_t tmin = sqlite3_column_int64(st, 4), tmax = sqlite3_column_int64(st, 5);
  int has_val = sqlite3_column_type(st, 6) != SQLITE_NULL;
  double first = sqlite3_column_type(st, 9) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 9);
  double last = sqlite3_column_type(st, 10) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 10);
  if (!a->used) {
    a->used = 1;
    b->step_min = smin;
    b->step_max = smax;
    b->time_min = tmin;
    b->time_max = tmax;
    b->first = first;
    b->step_first = sqlite3_column_int64(st, 11);
  }
  if (smin < b->step_min)
    b->step_min = smin;
  if (smax > b->step_max)
    b->step_max = smax;
  if (tmin && (!b->time_min || tmin < b->time_min))
    b->time_min = tmin;
  if (tmax > b->time_max)
    b->time_max = tmax;
  b->count += (uint64_t)sqlite3_column_int64(st, 13);
  b->nonfinite += (uint64_t)sqlite3_column_int64(st, 14);
  b->sum += sqlite3_column_double(st, 8);
  b->last = last;
  b->step_last = sqlite3_column_int64(st, 12);
  if (has_val) {
    double mn = sqlite3_column_double(st, 6), mx = sqlite3_column_double(st, 7);
    if (!a->have_val || mn < b->min) {
      b->min = mn;
      b->step_at_min = sqlite3_column_int64(st, 15);
    }
    if (!a->have_val || mx > b->max) {
      b->max = mx;
      b->step_at_max = sqlite3_column_int64(st, 16);
    }
    a->have_val = 1;
  }
}

int pmcp__sq_summary(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                     int64_t step_from, int64_t step_to, size_t n_buckets, pmcp_bucket *out,
                     size_t *n_out)
{
  pmcp__sq *q = SQ(ctx);
  *n_out = 0;
  if (n_buckets == 0 || n_buckets > 100000)
    return pmcp_store_set_error(s, PMCP_EINVAL, "n_buckets must be 1-100000");
  if (step_from > step_to)
    return pmcp_store_set_error(s, PMCP_EINVAL, "step_from is after step_to");
  int rc = flush_for_read(s, q);
  if (!rc)
    rc = series_check(s, q, t, series, "float");
  if (rc)
    return rc;
  static const char sql_range[] = "SELECT step_min, step_max, count FROM series WHERE id=?1";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(s, q, sql_range, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, series);
  if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_int64(st, 2) == 0) {
    sqlite3_reset(st);
    return 0;
  }
  int64_t lo = sqlite3_column_int64(st, 0), hi = sqlite3_column_int64(st, 1);
  sqlite3_reset(st);
  if (step_from > lo)
    lo = step_from;
  if (step_to < hi)
    hi = step_to;
  if (lo > hi)
    return 0;
  uint64_t width = ((uint64_t)hi - (uint64_t)lo) / n_buckets + 1;
  bucket_acc *acc = calloc(n_buckets, sizeof *acc);
  if (!acc)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  static const char sql_blocks[] =
      "SELECT seq, NULL, step_min, step_max, coalesce(time_min, 0), coalesce(time_max, 0),"
      " vmin, vmax, vsum, first, last, step_first, step_last, n, nonfinite, step_at_min,"
      " step_at_max FROM metric_blocks WHERE series_id=?1 AND step_max>=?2 AND step_min<=?3"
      " ORDER BY seq";
  static const char sql_data[] = "SELECT data FROM metric_blocks WHERE series_id=?1 AND seq=?2";
  static const char sql_count[] =
      "SELECT count(*) FROM metric_blocks WHERE series_id=?1 AND step_max>=?2 AND step_min<=?3";
  /* Many blocks per bucket: a block inside the range goes whole to the
   * bucket of its middle step, so no inner block is decoded and bucket
   * edges fall on block edges. Few blocks: buckets are exact, and blocks
   * that straddle an edge are decoded. Blocks that straddle the range's
   * ends are always decoded, so the range itself is exact. */
  int coarse = 0;
  if ((rc = pmcp__sq_prep(s, q, sql_count, &st))) {
    free(acc);
    return rc;
  }
  sqlite3_bind_int64(st, 1, series);
  sqlite3_bind_int64(st, 2, lo);
  sqlite3_bind_int64(st, 3, hi);
  if (sqlite3_step(st) == SQLITE_ROW)
    coarse = (uint64_t)sqlite3_column_int64(st, 0) >= 2 * (uint64_t)n_buckets;
  sqlite3_reset(st);
  if ((rc = pmcp__sq_prep(s, q, sql_blocks, &st))) {
    free(acc);
    return rc;
  }
  sqlite3_bind_int64(st, 1, series);
  sqlite3_bind_int64(st, 2, lo);
  sqlite3_bind_int64(st, 3, hi);
  int src;
  while ((src = sqlite3_step(st)) == SQLITE_ROW && rc == 0) {
    int64_t smin = sqlite3_column_int64(st, 2), smax = sqlite3_column_int64(st, 3);
    if (smin >= lo && smax <= hi) {
      size_t b0 = (size_t)(((uint64_t)smin - (uint64_t)lo) / width);
      size_t b1 = (size_t)(((uint64_t)smax - (uint64_t)lo) / width);
      if (coarse) {
        uint64_t mid = ((uint64_t)smin - (uint64_t)lo) / 2 + ((uint64_t)smax - (uint64_t)lo) / 2;
        acc_block(&acc[mid / width], st);
        continue;
      }
      if (b0 == b1) {
        acc_block(&acc[b0], st);
        continue;
      }
    }
    /* The block straddles a bucket edge or the range: read its points. */
    sqlite3_stmt *sd;
    if ((rc = pmcp__sq_prep(s, q, sql_data, &sd)))
      break;
    sqlite3_bind_int64(sd, 1, series);
    sqlite3_bind_int64(sd, 2, sqlite3_column_int64(st, 0));
    if (sqlite3_step(sd) == SQLITE_ROW) {
      pmcp_point *pts;
      size_t np;
      rc = pmcp__sq_decode(q, sqlite3_column_blob(sd, 0), (size_t)sqlite3_column_bytes(sd, 0),
                           &pts, &np);
      if (rc == 0) {
        /* Points come mostly in step order: divide only when a point
         * leaves the current bucket. */
        uint64_t cur_lo = 1, cur_hi = 0;
        size_t bi = 0;
        for (size_t i = 0; i < np; i++) {
          if (pts[i].step < lo || pts[i].step > hi)
            continue;
          uint64_t off = (uint64_t)pts[i].step - (uint64_t)lo;
          if (off < cur_lo || off > cur_hi) {
            bi = (size_t)(off / width);
            cur_lo = (uint64_t)bi * width;
            cur_hi = cur_lo + (width - 1);
          }
          acc_point(&acc[bi], &pts[i]);
        }
        free(pts);
      } else {
        pmcp_store_set_error(s, rc, "a metric block of series %lld is corrupt", (long long)series);
      }
    }
    sqlite3_reset(sd);
  }
  sqlite3_reset(st);
  size_t n = 0;
  for (size_t i = 0; i < n_buckets && rc == 0; i++)
    if (acc[i].used) {
      if (!acc[i].have_val)
        acc[i].b.min = acc[i].b.max = NAN;
      out[n++] = acc[i].b;
    }
  free(acc);
  *n_out = n;
  return rc;
}

int pmcp__sq_series_list(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                         pmcp_buf *out)
{
  pmcp__sq *q = SQ(ctx);
  char k[32];
  int64_t run_id;
  int rc = flush_for_read(s, q);
  if (!rc)
    rc = pmcp__sq_resolve(s, q, t, run, "run", k, &run_id);
  if (rc)
    return rc;
  static const char sql[] =
      "SELECT json_object('items', coalesce(json_group_array(json(o)), json('[]')))"
      " FROM (SELECT json_object('series', id, 'key', key, 'labels', json(labels), 'kind', kind,"
      " 'scale', scale, 'count', count, 'nonfinite', nonfinite, 'step_min', step_min,"
      " 'step_max', step_max, 'time_min', time_min, 'time_max', time_max, 'first', first,"
      " 'last', last, 'min', vmin, 'max', vmax, 'mean', CASE WHEN kind='float' AND count>nonfinite"
      " THEN vsum / (count - nonfinite) END) AS o FROM series"
      " WHERE run_id=?1 AND tenant_id=?2 ORDER BY key, labels, kind, scale)";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(s, q, sql, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, run_id);
  sqlite3_bind_int64(st, 2, t.id);
  int src = sqlite3_step(st);
  pmcp__buf_reset(out);
  if (src == SQLITE_ROW)
    rc = pmcp__sq_text_col(out, st, 0);
  else
    rc = pmcp__sq_err(s, q, src, "series list");
  sqlite3_reset(st);
  return rc;
}

static void put_doubles(pmcp_buf *b, const void *blob, int bytes)
{
  size_t n = (size_t)bytes / sizeof(double);
  pmcp__buf_putc(b, '[');
  for (size_t i = 0; i < n; i++) {
    double v;
    memcpy(&v, (const char *)blob + i * sizeof v, sizeof v);
    if (i)
      pmcp__buf_putc(b, ',');
    if (isfinite(v))
      pmcp__buf_printf(b, "%.17g", v);
    else
      pmcp__buf_puts(b, "null");
  }
  pmcp__buf_putc(b, ']');
}

int pmcp__sq_series_sets(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                         int64_t step_from, int64_t step_to, const char *after,
                         size_t limit, pmcp_buf *out)
{
  pmcp__sq *q = SQ(ctx);
  int rc = series_check(s, q, t, series, NULL);
  if (rc)
    return rc;
  static const char sql_kind[] = "SELECT kind FROM series WHERE id=?1";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(s, q, sql_kind, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, series);
  sqlite3_step(st);
  int hist = strcmp((const char *)sqlite3_column_text(st, 0), "histogram") == 0;
  int scat = strcmp((const char *)sqlite3_column_text(st, 0), "scatter") == 0;
  sqlite3_reset(st);
  if (!hist && !scat)
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "series %lld holds float points: read them with pmcp_store_points()", (long long)series);
  int64_t after_id = 0;
  if (after && *after) {
    char *end;
    after_id = strtoll(after, &end, 10);
    if (*end || after_id < 0)
      return pmcp_store_set_error(s, PMCP_EINVAL, "invalid position '%.32s'", after);
  }
  if (limit == 0)
    limit = 50;
  if (limit > 1000)
    limit = 1000;
  static const char sql[] =
      "SELECT id, step, time, a, b FROM metric_sets WHERE series_id=?1 AND tenant_id=?2"
      " AND step>=?3 AND step<=?4 AND id>?5 ORDER BY id LIMIT ?6";
  if ((rc = pmcp__sq_prep(s, q, sql, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, series);
  sqlite3_bind_int64(st, 2, t.id);
  sqlite3_bind_int64(st, 3, step_from);
  sqlite3_bind_int64(st, 4, step_to);
  sqlite3_bind_int64(st, 5, after_id);
  sqlite3_bind_int64(st, 6, (int64_t)limit + 1);
  pmcp__buf_reset(out);
  pmcp__buf_puts(out, "{\"items\":[");
  size_t n = 0;
  int64_t last = 0;
  int more = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    if (n == limit) {
      more = 1;
      break;
    }
    if (n++)
      pmcp__buf_putc(out, ',');
    last = sqlite3_column_int64(st, 0);
    pmcp__buf_printf(out, "{\"id\":%lld,\"step\":%lld,\"time\":", (long long)last,
                     (long long)sqlite3_column_int64(st, 1));
    if (sqlite3_column_type(st, 2) == SQLITE_NULL)
      pmcp__buf_puts(out, "null");
    else
      pmcp__buf_printf(out, "%lld", (long long)sqlite3_column_int64(st, 2));
    pmcp__buf_puts(out, hist ? ",\"edges\":" : ",\"x\":");
    put_doubles(out, sqlite3_column_blob(st, 3), sqlite3_column_bytes(st, 3));
    pmcp__buf_puts(out, hist ? ",\"counts\":" : ",\"y\":");
    put_doubles(out, sqlite3_column_blob(st, 4), sqlite3_column_bytes(st, 4));
    pmcp__buf_putc(out, '}');
  }
  sqlite3_reset(st);
  /* Sets come back in logging order; the id is the position. */
  if (more)
    pmcp__buf_printf(out, "],\"next\":\"%lld\"}", (long long)last);
  else
    pmcp__buf_puts(out, "],\"next\":null}");
  return out->ptr ? 0 : PMCP_ENOMEM;
}
