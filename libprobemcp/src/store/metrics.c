/* SPDX-License-Identifier: MIT */
/* Metric series, written once for both backends over sql.h (metrics.h):
 * series, the pending buffers of float points, histogram and scatter
 * sets. Points wait in a per-series pending buffer until a block fills or
 * the write scope ends; a partial tail block is reloaded and rewritten in
 * place so series stay in full blocks. How a block is stored is the
 * backend's (pmcp__metric_ops). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/metrics.h"
#include "store/ws_scope.h"
#include "util/fsum.h"

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

void pmcp__metric_summarize(const pmcp_point *pts, size_t n, pmcp_bucket *o,
                            uint64_t *untimed)
{
  memset(o, 0, sizeof *o);
  o->step_min = o->step_max = o->step_first = pts[0].step;
  o->step_last = pts[n - 1].step;
  o->first = pts[0].value;
  o->last = pts[n - 1].value;
  o->count = n;
  o->min = o->max = NAN;
  uint64_t nt = 0;
  int have = 0;
  pmcp__fsum sum = {0, 0};
  for (size_t i = 0; i < n; i++) {
    const pmcp_point *pt = &pts[i];
    if (pt->step < o->step_min)
      o->step_min = pt->step;
    if (pt->step > o->step_max)
      o->step_max = pt->step;
    if (pt->time_ms) {
      if (!o->time_min || pt->time_ms < o->time_min)
        o->time_min = pt->time_ms;
      if (!o->time_max || pt->time_ms > o->time_max)
        o->time_max = pt->time_ms;
    } else {
      nt++;
    }
    double v = pt->value;
    if (!isfinite(v)) {
      o->nonfinite++;
      continue;
    }
    pmcp__fsum_add(&sum, v);
    if (!have || v < o->min) {
      o->min = v;
      o->step_at_min = pt->step;
    }
    if (!have || v > o->max) {
      o->max = v;
      o->step_at_max = pt->step;
    }
    have = 1;
  }
  o->sum = pmcp__fsum_value(&sum);
  if (untimed)
    *untimed = nt;
}

int pmcp__sql_series(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                     const pmcp_series_spec *spec, int64_t *out)
{
  pmcp__sql *c = PMCP__SQL(ctx);
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
  if ((rc = pmcp__sql_wbegin(s, c, t))) {
    pmcp_buf_dispose(&labels);
    return rc;
  }
  char k[32];
  int64_t run_id = 0;
  rc = pmcp__sql_resolve(s, c, t, run, "run", k, &run_id);
  if (rc == 0) {
    static const char sql_find[] =
        "SELECT id FROM series WHERE run_id=?1 AND key=?2 AND labels=?3 AND kind=?4 AND scale=?5";
    static const char sql_ins[] =
        "INSERT INTO series(tenant_id, run_id, key, labels, kind, scale) VALUES(?6,?1,?2,?3,?4,?5)"
        " RETURNING id";
    pmcp__stmt *st;
    if ((rc = pmcp__sql_prep(s, c, sql_find, &st)) == 0) {
      for (int pass = 0; pass < 2 && rc == 0; pass++) {
        pmcp__st_bind_int64(st, 1, run_id);
        pmcp__st_bind_text(st, 2, spec->key);
        pmcp__st_bind_text(st, 3, labels.ptr);
        pmcp__st_bind_text(st, 4, kind);
        pmcp__st_bind_text(st, 5, scale);
        if (pass == 1)
          pmcp__st_bind_int64(st, 6, t.id);
        int src = pmcp__st_step(st);
        if (src == PMCP__ROW) {
          *out = pmcp__st_int64(st, 0);
          pmcp__st_reset(st);
          break;
        }
        if (src != PMCP__DONE)
          rc = pmcp__st_err(s, st, pass ? "create series" : "series");
        pmcp__st_reset(st);
        if (rc == 0 && pass == 0)
          rc = pmcp__sql_prep(s, c, sql_ins, &st);
      }
    }
  }
  pmcp_buf_dispose(&labels);
  return pmcp__sql_wend(s, c, t, rc);
}

int pmcp__sql_series_check(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, int64_t series,
                           const char *kind)
{
  static const char sql[] = "SELECT kind FROM series WHERE id=?1 AND tenant_id=?2";
  pmcp__stmt *st;
  int rc = pmcp__sql_prep(s, c, sql, &st);
  if (rc)
    return rc;
  pmcp__st_bind_int64(st, 1, series);
  pmcp__st_bind_int64(st, 2, t.id);
  int src = pmcp__st_step(st);
  if (src != PMCP__ROW) {
    int out = src == PMCP__DONE
        ? pmcp_store_set_error(s, PMCP_ENOTFOUND, "no series %lld", (long long)series)
        : pmcp__st_err(s, st, "series");
    pmcp__st_reset(st);
    return out;
  }
  char have[16];
  snprintf(have, sizeof have, "%s", pmcp__st_text(st, 0));
  pmcp__st_reset(st);
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

/* ---- pending points ---- */

static int write_block(pmcp_store *s, const pmcp__metrics *m, pmcp__sql_pending *p,
                       const pmcp_point *pts, size_t n)
{
  int fresh = p->tail_seq < 0;
  int64_t seq = fresh ? p->next_seq++ : p->tail_seq;
  p->tail_seq = -1;
  return m->ops->block_write(s, m->c, p->tenant, p->series, seq, fresh, pts, n);
}

/* The series' sum adds its blocks' in two parts, the huge ones scaled, so
 * finite sums that do not fit on the way raise no overflow (PostgreSQL)
 * and make no NaN (SQLite stores it as NULL): it is +/-Inf only when the
 * total is out of range or blocks' sums already were (SQLite then keeps
 * +Inf for a sum not known, PostgreSQL NaN). */
static int update_series_stats(pmcp_store *s, pmcp__sql *c, int64_t series)
{
  static const char sql_sq[] =
      "UPDATE series SET (count, nonfinite, step_min, step_max, time_min, time_max, vmin, vmax,"
      " vsum, first, last, next_seq) = (SELECT sum(n), sum(nonfinite), min(step_min),"
      " max(step_max), min(time_min), max(time_max), min(vmin), max(vmax),"
      " coalesce(total(CASE WHEN abs(vsum) < 1e270 THEN vsum END)"
      "  + 1.157920892373162e77 * total(CASE WHEN abs(vsum) >= 1e270"
      "   THEN vsum * 8.636168555094445e-78 END), 9e999),"
      " (SELECT first FROM metric_blocks WHERE series_id=?1 ORDER BY seq LIMIT 1),"
      " (SELECT last FROM metric_blocks WHERE series_id=?1 ORDER BY seq DESC LIMIT 1),"
      " coalesce(max(seq) + 1, 0) FROM metric_blocks WHERE series_id=?1) WHERE id=?1";
  static const char sql_pg[] =
      "UPDATE series SET (count, nonfinite, step_min, step_max, time_min, time_max, vmin, vmax,"
      " vsum, first, last, next_seq) = (SELECT coalesce(sum(n), 0), coalesce(sum(nonfinite), 0),"
      " min(step_min), max(step_max), min(time_min), max(time_max), min(vmin), max(vmax),"
      " (SELECT CASE WHEN coalesce(b, 0) = 0 THEN coalesce(a, 0) WHEN b = 'NaN' THEN b"
      "  WHEN abs(b) < 1.552518092300709e231::float8"
      "   AND abs(coalesce(a, 0) / 2 + b * 5.78960446186581e76::float8)"
      "    <= 8.988465674311579e307::float8"
      "  THEN (coalesce(a, 0) / 2 + b * 5.78960446186581e76::float8) * 2"
      "  WHEN b > 0 THEN 'Infinity' ELSE '-Infinity' END"
      "  FROM (SELECT sum(vsum) FILTER (WHERE abs(vsum) < 1e270::float8) AS a,"
      "   sum(vsum * 8.636168555094445e-78::float8)"
      "    FILTER (WHERE NOT abs(vsum) < 1e270::float8) AS b"
      "   FROM metric_blocks WHERE series_id=?1) x),"
      " (SELECT first FROM metric_blocks WHERE series_id=?1 ORDER BY seq LIMIT 1),"
      " (SELECT last FROM metric_blocks WHERE series_id=?1 ORDER BY seq DESC LIMIT 1),"
      " coalesce(max(seq) + 1, 0) FROM metric_blocks WHERE series_id=?1) WHERE id=?1";
  pmcp__stmt *st;
  int rc = pmcp__sql_prep(s, c, PMCP__SQL_PICK(c, sql_sq, sql_pg), &st);
  if (rc)
    return rc;
  pmcp__st_bind_int64(st, 1, series);
  return pmcp__st_run1(s, st, "series summary");
}

static void pending_free(pmcp__sql_pending *p)
{
  free(p->pts);
  p->pts = NULL;
  p->n = p->cap = 0;
}

void pmcp__sql_drop_pending(const pmcp__metrics *m)
{
  for (size_t i = 0; i < *m->n_pending; i++)
    pending_free(&(*m->pending)[i]);
  *m->n_pending = 0;
}

int pmcp__sql_metrics_flush(pmcp_store *s, const pmcp__metrics *m)
{
  int rc = 0;
  for (size_t i = 0; i < *m->n_pending && rc == 0; i++) {
    pmcp__sql_pending *p = &(*m->pending)[i];
    if (p->n)
      rc = write_block(s, m, p, p->pts, p->n);
    if (rc == 0)
      rc = update_series_stats(s, m->c, p->series);
  }
  pmcp__sql_drop_pending(m);
  return rc;
}

static int pending_get(pmcp_store *s, const pmcp__metrics *m, pmcp_tenant t, int64_t series,
                       pmcp__sql_pending **out)
{
  for (size_t i = 0; i < *m->n_pending; i++)
    if ((*m->pending)[i].series == series) {
      *out = &(*m->pending)[i];
      return 0;
    }
  if (*m->n_pending == *m->cap_pending) {
    size_t cap = *m->cap_pending ? *m->cap_pending * 2 : 8;
    pmcp__sql_pending *np = realloc(*m->pending, cap * sizeof *np);
    if (!np)
      return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
    *m->pending = np;
    *m->cap_pending = cap;
  }
  pmcp__sql_pending *p = &(*m->pending)[*m->n_pending];
  memset(p, 0, sizeof *p);
  p->series = series;
  p->tenant = t.id;
  p->tail_seq = -1;
  /* SQLite reads the tail block's bytes with it (the backend decodes them). */
  static const char sql_sq[] =
      "SELECT b.seq, b.n, s.next_seq, b.data FROM series s LEFT JOIN metric_blocks b"
      " ON b.series_id=s.id AND b.seq=s.next_seq-1 WHERE s.id=?1";
  static const char sql_pg[] =
      "SELECT b.seq, b.n, s.next_seq FROM series s LEFT JOIN metric_blocks b"
      " ON b.series_id=s.id AND b.seq=s.next_seq-1 WHERE s.id=?1";
  pmcp__stmt *st;
  int rc = pmcp__sql_prep(s, m->c, PMCP__SQL_PICK(m->c, sql_sq, sql_pg), &st);
  if (rc)
    return rc;
  pmcp__st_bind_int64(st, 1, series);
  int src = pmcp__st_step(st);
  if (src != PMCP__ROW) {
    rc = src == PMCP__DONE
        ? pmcp_store_set_error(s, PMCP_ENOTFOUND, "no series %lld", (long long)series)
        : pmcp__st_err(s, st, "series");
    pmcp__st_reset(st);
    return rc;
  }
  p->next_seq = pmcp__st_int64(st, 2);
  if (!pmcp__st_null(st, 0) && pmcp__st_int64(st, 1) < PMCP__METRIC_BLOCK) {
    int64_t tail = pmcp__st_int64(st, 0);
    rc = m->ops->tail_load(s, m->c, st, series, tail, pmcp__st_int64(st, 1), p);
    if (rc) {
      pmcp__st_reset(st);
      free(p->pts);
      p->pts = NULL;
      return rc;
    }
    p->tail_seq = tail;
  }
  pmcp__st_reset(st);
  (*m->n_pending)++;
  *out = p;
  return 0;
}

static int log_in(pmcp_store *s, const pmcp__metrics *m, pmcp_tenant t, int64_t series,
                  const pmcp_point *points, size_t n)
{
  /* A series with points pending in this transaction was checked when
   * they came (series are never deleted): one round trip less a call. */
  int known = 0;
  for (size_t i = 0; i < *m->n_pending && *m->in_txn; i++)
    if ((*m->pending)[i].series == series && (*m->pending)[i].tenant == t.id)
      known = 1;
  int rc = known ? 0 : pmcp__sql_series_check(s, m->c, t, series, "float");
  if (rc || n == 0)
    return rc;
  pmcp__sql_pending *p = NULL;
  if ((rc = pending_get(s, m, t, series, &p)))
    return rc;
  size_t i = 0;
  while (i < n && rc == 0) {
    size_t take = PMCP__METRIC_BLOCK - p->n;
    if (take > n - i)
      take = n - i;
    if (p->n == 0 && take == PMCP__METRIC_BLOCK) {
      rc = write_block(s, m, p, points + i, take);
    } else {
      if (p->cap < p->n + take) {
        pmcp_point *np = realloc(p->pts, PMCP__METRIC_BLOCK * sizeof *np);
        if (!np)
          return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
        p->pts = np;
        p->cap = PMCP__METRIC_BLOCK;
      }
      memcpy(p->pts + p->n, points + i, take * sizeof *points);
      p->n += take;
      if (p->n == PMCP__METRIC_BLOCK) {
        rc = write_block(s, m, p, p->pts, p->n);
        p->n = 0;
      }
    }
    i += take;
  }
  return rc;
}

int pmcp__sql_log(pmcp_store *s, const pmcp__metrics *m, pmcp_tenant t, int64_t series,
                  const pmcp_point *points, size_t n)
{
  pmcp__sql *c = m->c;
  /* Inside the caller's transaction a failed call is undone by rolling
   * back to its savepoint, which restores its rows but not the points it
   * took into or out of the pending buffer: keep what is needed to put
   * the buffer back (the buffered points themselves only when the call
   * may write them out and reuse their place). */
  size_t n_pending0 = *m->n_pending, at = SIZE_MAX;
  pmcp__sql_pending saved;
  pmcp_point *copy = NULL;
  if (*m->in_txn) {
    for (size_t i = 0; i < *m->n_pending; i++)
      if ((*m->pending)[i].series == series)
        at = i;
    if (at != SIZE_MAX) {
      const pmcp__sql_pending *p0 = &(*m->pending)[at];
      saved = *p0;
      if (p0->n && p0->n + n >= PMCP__METRIC_BLOCK) {
        copy = malloc(p0->n * sizeof *copy);
        if (!copy)
          return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
        memcpy(copy, p0->pts, p0->n * sizeof *copy);
      }
    }
  }
  int rc = pmcp__sql_wbegin(s, c, t);
  if (rc == 0)
    rc = pmcp__sql_wend(s, c, t, log_in(s, m, t, series, points, n));
  if (rc && *m->in_txn) {
    for (size_t i = n_pending0; i < *m->n_pending; i++)
      pending_free(&(*m->pending)[i]);
    if (*m->n_pending > n_pending0)
      *m->n_pending = n_pending0;
    if (at != SIZE_MAX) {
      pmcp__sql_pending *p0 = &(*m->pending)[at];
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

static int set_in(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, int64_t series, const char *kind,
                  int64_t step, int64_t time_ms, const double *a, size_t na, const double *b,
                  size_t nb)
{
  int rc = pmcp__sql_series_check(s, c, t, series, kind);
  if (rc)
    return rc;
  static const char sql[] =
      "INSERT INTO metric_sets(tenant_id, series_id, step, time, n, a, b) VALUES(?1,?2,?3,?4,?5,?6,?7)";
  static const char sql_stats_sq[] =
      "UPDATE series SET count=count+1, step_min=min(coalesce(step_min, ?2), ?2),"
      " step_max=max(coalesce(step_max, ?2), ?2),"
      " time_min=CASE WHEN ?3 IS NULL THEN time_min ELSE min(coalesce(time_min, ?3), ?3) END,"
      " time_max=CASE WHEN ?3 IS NULL THEN time_max ELSE max(coalesce(time_max, ?3), ?3) END"
      " WHERE id=?1";
  static const char sql_stats_pg[] =
      "UPDATE series SET count=count+1, step_min=least(coalesce(step_min, ?2), ?2),"
      " step_max=greatest(coalesce(step_max, ?2), ?2),"
      " time_min=CASE WHEN ?3::bigint IS NULL THEN time_min"
      "   ELSE least(coalesce(time_min, ?3::bigint), ?3::bigint) END,"
      " time_max=CASE WHEN ?3::bigint IS NULL THEN time_max"
      "   ELSE greatest(coalesce(time_max, ?3::bigint), ?3::bigint) END WHERE id=?1";
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(s, c, sql, &st)))
    return rc;
  pmcp__st_bind_int64(st, 1, t.id);
  pmcp__st_bind_int64(st, 2, series);
  pmcp__st_bind_int64(st, 3, step);
  if (time_ms)
    pmcp__st_bind_int64(st, 4, time_ms);
  pmcp__st_bind_int64(st, 5, (int64_t)nb);
  pmcp__st_bind_blob(st, 6, a, na * sizeof *a);
  pmcp__st_bind_blob(st, 7, b, nb * sizeof *b);
  if ((rc = pmcp__st_run1(s, st, "store set")))
    return rc;
  if ((rc = pmcp__sql_prep(s, c, PMCP__SQL_PICK(c, sql_stats_sq, sql_stats_pg), &st)))
    return rc;
  pmcp__st_bind_int64(st, 1, series);
  pmcp__st_bind_int64(st, 2, step);
  if (time_ms)
    pmcp__st_bind_int64(st, 3, time_ms);
  return pmcp__st_run1(s, st, "series summary");
}

int pmcp__sql_log_histogram(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                            int64_t step, int64_t time_ms, const double *edges,
                            const double *counts, size_t n_bins)
{
  pmcp__sql *c = PMCP__SQL(ctx);
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
  int rc = pmcp__sql_wbegin(s, c, t);
  if (rc)
    return rc;
  return pmcp__sql_wend(s, c, t, set_in(s, c, t, series, "histogram", step, time_ms, edges,
                                        n_bins + 1, counts, n_bins));
}

int pmcp__sql_log_scatter(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                          int64_t step, int64_t time_ms, const double *x, const double *y,
                          size_t n)
{
  pmcp__sql *c = PMCP__SQL(ctx);
  if (n == 0 || n > 1000000 || !x || !y)
    return pmcp_store_set_error(s, PMCP_EINVAL, "a scatter set needs 1-1000000 (x, y) pairs");
  int rc = pmcp__sql_wbegin(s, c, t);
  if (rc)
    return rc;
  return pmcp__sql_wend(s, c, t, set_in(s, c, t, series, "scatter", step, time_ms, x, n, y, n));
}

