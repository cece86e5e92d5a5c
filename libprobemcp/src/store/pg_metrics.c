/* PostgreSQL backend: metric series. Float points are kept in blocks of up
 * to PMCP__PG_BLOCK points (pg_block.c), each row carrying the block's
 * count, min, max, sum, first, last and step range and the same for each
 * chunk of its points, so reads by step range decode only the blocks they
 * touch and summaries read whole blocks and chunks without decoding them. Points wait in a per-series pending buffer
 * until a block fills or the write scope ends; a partial tail block is
 * reloaded and rewritten in place so series stay in full blocks. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg.h"
#include "store/ws_scope.h"

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

int pmcp__pg_series(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                    const pmcp_series_spec *spec, int64_t *out)
{
  pmcp__pg *q = PG(ctx);
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
  if ((rc = pmcp__pg_wbegin(s, q, t))) {
    pmcp_buf_dispose(&labels);
    return rc;
  }
  char k[32];
  int64_t run_id = 0;
  rc = pmcp__pg_resolve(s, q, t, run, "run", k, &run_id);
  if (rc == 0) {
    static const char sql_find[] =
        "SELECT id FROM series WHERE run_id=$1 AND key=$2 AND labels=$3 AND kind=$4 AND scale=$5";
    static const char sql_ins[] =
        "INSERT INTO series(tenant_id, run_id, key, labels, kind, scale) VALUES($6,$1,$2,$3,$4,$5)"
        " RETURNING id";
    pmcp__pg_stmt *st;
    if ((rc = pmcp__pg_prep(s, q, sql_find, &st)) == 0) {
      for (int pass = 0; pass < 2 && rc == 0; pass++) {
        pmcp__pg_bind_int64(st, 1, run_id);
        pmcp__pg_bind_text(st, 2, spec->key);
        pmcp__pg_bind_text(st, 3, labels.ptr);
        pmcp__pg_bind_text(st, 4, kind);
        pmcp__pg_bind_text(st, 5, scale);
        if (pass == 1)
          pmcp__pg_bind_int64(st, 6, t.id);
        int src = pmcp__pg_step(st);
        if (src == PG_ROW) {
          *out = pmcp__pg_int64(st, 0);
          pmcp__pg_reset(st);
          break;
        }
        pmcp__pg_reset(st);
        if (src != PG_DONE)
          rc = pmcp__pg_err(s, q, pass ? "create series" : "series");
        if (pass == 0 && rc == 0)
          rc = pmcp__pg_prep(s, q, sql_ins, &st);
      }
    }
  }
  pmcp_buf_dispose(&labels);
  return pmcp__pg_wend(s, q, t, rc);
}

/* Checks that @p series belongs to tenant @p t and has kind @p kind. */
int pmcp__pg_series_check(pmcp_store *s, pmcp__pg *q, pmcp_tenant t, int64_t series,
                          const char *kind)
{
  static const char sql[] = "SELECT kind FROM series WHERE id=$1 AND tenant_id=$2";
  pmcp__pg_stmt *st;
  int rc = pmcp__pg_prep(s, q, sql, &st);
  if (rc)
    return rc;
  pmcp__pg_bind_int64(st, 1, series);
  pmcp__pg_bind_int64(st, 2, t.id);
  int src = pmcp__pg_step(st);
  if (src != PG_ROW) {
    pmcp__pg_reset(st);
    return src == PG_DONE
        ? pmcp_store_set_error(s, PMCP_ENOTFOUND, "no series %lld", (long long)series)
        : pmcp__pg_err(s, q, "series");
  }
  char have[16];
  snprintf(have, sizeof have, "%s", (const char *)pmcp__pg_text(st, 0));
  pmcp__pg_reset(st);
  /* A series of a run outside the call's workspace is a missing one. */
  if ((rc = pmcp__ws_check(s, t, "series", series)) != 0)
    return rc == PMCP_ENOTFOUND
        ? pmcp_store_set_error(s, PMCP_ENOTFOUND, "no series %lld", (long long)series)
        : rc;
  if (kind && strcmp(have, kind) != 0)
    return pmcp_store_set_error(s, PMCP_EINVAL, "series %lld holds %s values, not %s",
                                (long long)series, have, kind);
  return 0;
}

/* ---- blocks ---- */

static int write_block(pmcp_store *s, pmcp__pg *q, pmcp__pg_pending *p,
                       const pmcp_point *pts, size_t n)
{
  int fresh = p->tail_seq < 0;
  int64_t seq = fresh ? p->next_seq++ : p->tail_seq;
  p->tail_seq = -1;
  return pmcp__pg_block_write(s, q, p->tenant, p->series, seq, fresh, pts, n);
}

static int update_series_stats(pmcp_store *s, pmcp__pg *q, int64_t series)
{
  static const char sql[] =
      "UPDATE series SET (count, nonfinite, step_min, step_max, time_min, time_max, vmin, vmax,"
      " vsum, first, last, next_seq) = (SELECT coalesce(sum(n), 0), coalesce(sum(nonfinite), 0),"
      " min(step_min), max(step_max), min(time_min), max(time_max), min(vmin), max(vmax),"
      " coalesce(sum(vsum), 0),"
      " (SELECT first FROM metric_blocks WHERE series_id=$1 ORDER BY seq LIMIT 1),"
      " (SELECT last FROM metric_blocks WHERE series_id=$1 ORDER BY seq DESC LIMIT 1),"
      " coalesce(max(seq) + 1, 0) FROM metric_blocks WHERE series_id=$1) WHERE id=$1";
  pmcp__pg_stmt *st;
  int rc = pmcp__pg_prep(s, q, sql, &st);
  if (rc)
    return rc;
  pmcp__pg_bind_int64(st, 1, series);
  int src = pmcp__pg_step(st);
  pmcp__pg_reset(st);
  return src == PG_DONE ? 0 : pmcp__pg_err(s, q, "series summary");
}

static void pending_free(pmcp__pg_pending *p)
{
  free(p->pts);
  p->pts = NULL;
  p->n = p->cap = 0;
}

void pmcp__pg_drop_pending(pmcp__pg *q)
{
  for (size_t i = 0; i < q->n_pending; i++)
    pending_free(&q->pending[i]);
  q->n_pending = 0;
}

int pmcp__pg_flush(pmcp_store *s, pmcp__pg *q)
{
  int rc = 0;
  for (size_t i = 0; i < q->n_pending && rc == 0; i++) {
    pmcp__pg_pending *p = &q->pending[i];
    if (p->n)
      rc = write_block(s, q, p, p->pts, p->n);
    if (rc == 0)
      rc = update_series_stats(s, q, p->series);
  }
  pmcp__pg_drop_pending(q);
  return rc;
}

static int pending_get(pmcp_store *s, pmcp__pg *q, pmcp_tenant t, int64_t series,
                       pmcp__pg_pending **out)
{
  for (size_t i = 0; i < q->n_pending; i++)
    if (q->pending[i].series == series) {
      *out = &q->pending[i];
      return 0;
    }
  if (q->n_pending == q->cap_pending) {
    size_t cap = q->cap_pending ? q->cap_pending * 2 : 8;
    pmcp__pg_pending *np = realloc(q->pending, cap * sizeof *np);
    if (!np)
      return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
    q->pending = np;
    q->cap_pending = cap;
  }
  pmcp__pg_pending *p = &q->pending[q->n_pending];
  memset(p, 0, sizeof *p);
  p->series = series;
  p->tenant = t.id;
  p->tail_seq = -1;
  static const char sql[] =
      "SELECT b.seq, b.n, s.next_seq FROM series s LEFT JOIN metric_blocks b"
      " ON b.series_id=s.id AND b.seq=s.next_seq-1 WHERE s.id=$1";
  pmcp__pg_stmt *st;
  int rc = pmcp__pg_prep(s, q, sql, &st);
  if (rc)
    return rc;
  pmcp__pg_bind_int64(st, 1, series);
  int src = pmcp__pg_step(st);
  if (src != PG_ROW) {
    pmcp__pg_reset(st);
    return src == PG_ERR ? pmcp__pg_err(s, q, "series")
                         : pmcp_store_set_error(s, PMCP_ENOTFOUND, "no series %lld",
                                                (long long)series);
  }
  p->next_seq = pmcp__pg_int64(st, 2);
  int partial = !pmcp__pg_isnull(st, 0) && pmcp__pg_int64(st, 1) < PMCP__PG_BLOCK;
  int64_t tail = pmcp__pg_int64(st, 0);
  int64_t tail_n = pmcp__pg_int64(st, 1);
  pmcp__pg_reset(st);
  if (partial) {
    /* The partial tail block is reloaded and rewritten whole. */
    static const char sql_pts[] =
        "SELECT u.s, u.t, u.v FROM metric_chunks c,"
        " unnest(c.steps, c.times, c.vals) WITH ORDINALITY AS u(s, t, v, o)"
        " WHERE c.series_id=$1 AND c.seq=$2 ORDER BY c.k, u.o";
    if ((rc = pmcp__pg_prep(s, q, sql_pts, &st)))
      return rc;
    pmcp__pg_bind_int64(st, 1, series);
    pmcp__pg_bind_int64(st, 2, tail);
    p->pts = malloc(PMCP__PG_BLOCK * sizeof *p->pts);
    if (!p->pts)
      return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
    p->cap = PMCP__PG_BLOCK;
    while ((src = pmcp__pg_step(st)) == PG_ROW && p->n < PMCP__PG_BLOCK) {
      pmcp_point *pt = &p->pts[p->n++];
      pt->step = pmcp__pg_int64(st, 0);
      pt->time_ms = pmcp__pg_int64(st, 1);
      pt->value = pmcp__pg_double(st, 2);
    }
    pmcp__pg_reset(st);
    if (src == PG_ERR) {
      free(p->pts);
      p->pts = NULL;
      return pmcp__pg_err(s, q, "metric block");
    }
    if ((int64_t)p->n != tail_n) {
      free(p->pts);
      p->pts = NULL;
      return pmcp_store_set_error(s, PMCP_ECORRUPT, "metric block %lld of series %lld is corrupt",
                                  (long long)tail, (long long)series);
    }
    p->tail_seq = tail;
  }
  q->n_pending++;
  *out = p;
  return 0;
}

static int log_in(pmcp_store *s, pmcp__pg *q, pmcp_tenant t, int64_t series,
                  const pmcp_point *points, size_t n)
{
  /* A series with points pending in this transaction was checked when
   * they came (series are never deleted): one round trip less a call. */
  int known = 0;
  for (size_t i = 0; i < q->n_pending && q->in_txn; i++)
    if (q->pending[i].series == series && q->pending[i].tenant == t.id)
      known = 1;
  int rc = known ? 0 : pmcp__pg_series_check(s, q, t, series, "float");
  if (rc || n == 0)
    return rc;
  pmcp__pg_pending *p = NULL;
  if ((rc = pending_get(s, q, t, series, &p)))
    return rc;
  size_t i = 0;
  while (i < n && rc == 0) {
    size_t take = PMCP__PG_BLOCK - p->n;
    if (take > n - i)
      take = n - i;
    if (p->n == 0 && take == PMCP__PG_BLOCK) {
      rc = write_block(s, q, p, points + i, take);
    } else {
      if (p->cap < p->n + take) {
        pmcp_point *np = realloc(p->pts, PMCP__PG_BLOCK * sizeof *np);
        if (!np)
          return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
        p->pts = np;
        p->cap = PMCP__PG_BLOCK;
      }
      memcpy(p->pts + p->n, points + i, take * sizeof *points);
      p->n += take;
      if (p->n == PMCP__PG_BLOCK) {
        rc = write_block(s, q, p, p->pts, p->n);
        p->n = 0;
      }
    }
    i += take;
  }
  return rc;
}

int pmcp__pg_log(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                 const pmcp_point *points, size_t n)
{
  pmcp__pg *q = PG(ctx);
  /* Inside the caller's transaction a failed call is undone by rolling
   * back to its savepoint, which restores its rows but not the points it
   * took into or out of the pending buffer: keep what is needed to put
   * the buffer back (the buffered points themselves only when the call
   * may write them out and reuse their place). */
  size_t n_pending0 = q->n_pending, at = SIZE_MAX;
  pmcp__pg_pending saved;
  pmcp_point *copy = NULL;
  if (q->in_txn) {
    for (size_t i = 0; i < q->n_pending; i++)
      if (q->pending[i].series == series)
        at = i;
    if (at != SIZE_MAX) {
      const pmcp__pg_pending *p0 = &q->pending[at];
      saved = *p0;
      if (p0->n && p0->n + n >= PMCP__PG_BLOCK) {
        copy = malloc(p0->n * sizeof *copy);
        if (!copy)
          return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
        memcpy(copy, p0->pts, p0->n * sizeof *copy);
      }
    }
  }
  int rc = pmcp__pg_wbegin(s, q, t);
  if (rc == 0)
    rc = pmcp__pg_wend(s, q, t, log_in(s, q, t, series, points, n));
  if (rc && q->in_txn) {
    for (size_t i = n_pending0; i < q->n_pending; i++)
      pending_free(&q->pending[i]);
    if (q->n_pending > n_pending0)
      q->n_pending = n_pending0;
    if (at != SIZE_MAX) {
      pmcp__pg_pending *p0 = &q->pending[at];
      if (copy)
        memcpy(p0->pts, copy, saved.n * sizeof *copy);
      p0->n = saved.n;
      p0->tail_seq = saved.tail_seq;
      p0->next_seq = saved.next_seq;
    }
  }
  free(copy);
  return rc;
}

/* ---- histograms and scatter sets ---- */

static int set_in(pmcp_store *s, pmcp__pg *q, pmcp_tenant t, int64_t series, const char *kind,
                  int64_t step, int64_t time_ms, const double *a, size_t na, const double *b,
                  size_t nb)
{
  int rc = pmcp__pg_series_check(s, q, t, series, kind);
  if (rc)
    return rc;
  static const char sql[] =
      "INSERT INTO metric_sets(tenant_id, series_id, step, time, n, a, b) VALUES($1,$2,$3,$4,$5,$6,$7)";
  static const char sql_stats[] =
      "UPDATE series SET count=count+1, step_min=least(coalesce(step_min, $2), $2),"
      " step_max=greatest(coalesce(step_max, $2), $2),"
      " time_min=CASE WHEN $3::bigint IS NULL THEN time_min"
      "   ELSE least(coalesce(time_min, $3::bigint), $3::bigint) END,"
      " time_max=CASE WHEN $3::bigint IS NULL THEN time_max"
      "   ELSE greatest(coalesce(time_max, $3::bigint), $3::bigint) END WHERE id=$1";
  pmcp__pg_stmt *st;
  if ((rc = pmcp__pg_prep(s, q, sql, &st)))
    return rc;
  pmcp__pg_bind_int64(st, 1, t.id);
  pmcp__pg_bind_int64(st, 2, series);
  pmcp__pg_bind_int64(st, 3, step);
  if (time_ms)
    pmcp__pg_bind_int64(st, 4, time_ms);
  pmcp__pg_bind_int64(st, 5, (int64_t)nb);
  pmcp__pg_bind_blob(st, 6, a, (int)(na * sizeof *a));
  pmcp__pg_bind_blob(st, 7, b, (int)(nb * sizeof *b));
  int src = pmcp__pg_step(st);
  pmcp__pg_reset(st);
  if (src != PG_DONE)
    return pmcp__pg_err(s, q, "store set");
  if ((rc = pmcp__pg_prep(s, q, sql_stats, &st)))
    return rc;
  pmcp__pg_bind_int64(st, 1, series);
  pmcp__pg_bind_int64(st, 2, step);
  if (time_ms)
    pmcp__pg_bind_int64(st, 3, time_ms);
  src = pmcp__pg_step(st);
  pmcp__pg_reset(st);
  return src == PG_DONE ? 0 : pmcp__pg_err(s, q, "series summary");
}

int pmcp__pg_log_histogram(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                           int64_t step, int64_t time_ms, const double *edges,
                           const double *counts, size_t n_bins)
{
  pmcp__pg *q = PG(ctx);
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
  int rc = pmcp__pg_wbegin(s, q, t);
  if (rc)
    return rc;
  return pmcp__pg_wend(s, q, t, set_in(s, q, t, series, "histogram", step, time_ms, edges,
                                       n_bins + 1, counts, n_bins));
}

int pmcp__pg_log_scatter(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                         int64_t step, int64_t time_ms, const double *x, const double *y,
                         size_t n)
{
  pmcp__pg *q = PG(ctx);
  if (n == 0 || n > 1000000 || !x || !y)
    return pmcp_store_set_error(s, PMCP_EINVAL, "a scatter set needs 1-1000000 (x, y) pairs");
  int rc = pmcp__pg_wbegin(s, q, t);
  if (rc)
    return rc;
  return pmcp__pg_wend(s, q, t, set_in(s, q, t, series, "scatter", step, time_ms, x, n, y, n));
}

