/* SPDX-License-Identifier: MIT */
/* Reading metric series, the parts both backends share (metrics.h): the
 * checks before a read, a summary's range and bucketing mode, the run's
 * series catalog and histogram / scatter sets. How points are read and
 * bucketed is the backend's (SQLite decodes blocks; PostgreSQL buckets in
 * SQL). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/metrics.h"

int pmcp__sql_metric_read(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, int64_t series)
{
  /* Points pending inside the caller's own transaction are visible to it. */
  int rc = pmcp__sql_ready(s, c, t);
  if (!rc)
    rc = pmcp__sql_flush(s, c);
  if (!rc)
    rc = pmcp__sql_series_check(s, c, t, series, "float");
  return rc;
}

int pmcp__sql_points_begin(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, int64_t series,
                           int64_t after_id, size_t *n_out, int64_t *next_id)
{
  *n_out = 0;
  *next_id = 0;
  if (after_id < 0)
    return pmcp_store_set_error(s, PMCP_EINVAL, "after_id must not be negative");
  return pmcp__sql_metric_read(s, c, t, series);
}

int pmcp__sql_summary_range(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, int64_t series,
                            int64_t from, int64_t to, size_t n_buckets, int by_time,
                            pmcp__summary_range *r)
{
  r->empty = 1;
  if (n_buckets == 0 || n_buckets > 100000)
    return pmcp_store_set_error(s, PMCP_EINVAL, "n_buckets must be 1-100000");
  if (from > to)
    return pmcp_store_set_error(s, PMCP_EINVAL, "%s",
                                by_time ? "time_from is after time_to"
                                        : "step_from is after step_to");
  int rc = pmcp__sql_metric_read(s, c, t, series);
  if (rc)
    return rc;
  static const char sql_range[] = "SELECT step_min, step_max, count FROM series WHERE id=?1";
  static const char sql_trange[] =
      "SELECT time_min, time_max, CASE WHEN time_min IS NULL THEN 0 ELSE count END FROM series"
      " WHERE id=?1";
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(s, c, by_time ? sql_trange : sql_range, &st)))
    return rc;
  pmcp__st_bind_int64(st, 1, series);
  int src = pmcp__st_step(st);
  if (src != PMCP__ROW || pmcp__st_int64(st, 2) == 0) {
    rc = src == PMCP__ROW || src == PMCP__DONE ? 0 : pmcp__st_err(s, st, "series summary");
    pmcp__st_reset(st);
    return rc;
  }
  int64_t lo = pmcp__st_int64(st, 0), hi = pmcp__st_int64(st, 1);
  pmcp__st_reset(st);
  if (from > lo)
    lo = from;
  if (to < hi)
    hi = to;
  if (lo > hi)
    return 0;
  r->lo = lo;
  r->hi = hi;
  r->empty = 0;
  return 0;
}

int pmcp__sql_series_list(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                          pmcp_buf *out)
{
  pmcp__sql *c = PMCP__SQL(ctx);
  char k[32];
  int64_t run_id;
  int rc = pmcp__sql_ready(s, c, t);
  if (!rc)
    rc = pmcp__sql_flush(s, c);
  if (!rc)
    rc = pmcp__sql_resolve(s, c, t, run, "run", k, &run_id);
  if (rc)
    return rc;
  /* 15 significant digits round a value within 5e-15 of DBL_MAX up past
   * it (1.79769313486232e+308 reads back as Inf): such values go out
   * rounded towards zero instead (finite ones only: a first or last value
   * of +/-Inf, or NaN, which PostgreSQL sorts above every number, goes
   * out as it is). A mean is missing when the series' sum
   * is not a finite double (its blocks' sums out of range). */
#define FIT15(x)                                                                            \
  "CASE WHEN " x " > 1.79769313486231e308 AND " x " <= 1.7976931348623157e308"                \
  " THEN 1.79769313486231e308 WHEN " x " < -1.79769313486231e308 AND " x                      \
  " >= -1.7976931348623157e308 THEN -1.79769313486231e308 ELSE " x " END"
  static const char sql_sq[] =
      "SELECT json_object('items', coalesce(json_group_array(json(o)), json('[]')))"
      " FROM (SELECT json_object('series', id, 'key', key, 'labels', json(labels), 'kind', kind,"
      " 'scale', scale, 'count', count, 'nonfinite', nonfinite, 'step_min', step_min,"
      " 'step_max', step_max, 'time_min', time_min, 'time_max', time_max, 'first', " FIT15("first")
      ", 'last', " FIT15("last") ", 'min', " FIT15("vmin") ", 'max', " FIT15("vmax") ", 'mean',"
      " CASE WHEN kind='float' AND count>nonfinite AND abs(vsum) <= 1.7976931348623157e308"
      " THEN " FIT15("vsum / (count - nonfinite)") " END) AS o FROM series"
      " WHERE run_id=?1 AND tenant_id=?2 ORDER BY key, labels, kind, scale)";
  /* Floats go out through numeric, which keeps 15 significant digits, as
   * SQLite's JSON does: 0.0001 * 3 reads back as 0.0003 on both backends. */
  static const char sql_pg[] =
      "SELECT json_build_object('items', coalesce(json_agg(o ORDER BY key, labels, kind, scale),"
      " '[]'::json)) FROM (SELECT json_build_object('series', id, 'key', key, 'labels',"
      " labels::json, 'kind', kind,"
      " 'scale', scale, 'count', count, 'nonfinite', nonfinite, 'step_min', step_min,"
      " 'step_max', step_max, 'time_min', time_min, 'time_max', time_max, 'first', ("
      FIT15("first") ")::numeric, 'last', (" FIT15("last") ")::numeric, 'min', (" FIT15("vmin")
      ")::numeric, 'max', (" FIT15("vmax") ")::numeric, 'mean', CASE WHEN kind='float' AND"
      " count>nonfinite AND abs(vsum) <= 1.7976931348623157e308::float8 THEN ("
      FIT15("vsum / (count - nonfinite)") ")::numeric END) AS o, key, labels, kind, scale"
      " FROM series"
      " WHERE run_id=?1 AND tenant_id=?2) x";
#undef FIT15
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(s, c, PMCP__SQL_PICK(c, sql_sq, sql_pg), &st)))
    return rc;
  pmcp__st_bind_int64(st, 1, run_id);
  pmcp__st_bind_int64(st, 2, t.id);
  int src = pmcp__st_step(st);
  pmcp__buf_reset(out);
  if (src == PMCP__ROW)
    rc = pmcp__st_json_col(out, st, 0);
  else
    rc = pmcp__st_err(s, st, "series list");
  pmcp__st_reset(st);
  return rc;
}

static void put_doubles(pmcp_buf *b, const void *blob, size_t bytes)
{
  size_t n = blob ? bytes / sizeof(double) : 0;
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

int pmcp__sql_series_sets(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                          int64_t step_from, int64_t step_to, const char *after,
                          size_t limit, pmcp_buf *out)
{
  pmcp__sql *c = PMCP__SQL(ctx);
  int rc = pmcp__sql_ready(s, c, t);
  if (!rc)
    rc = pmcp__sql_series_check(s, c, t, series, NULL);
  if (rc)
    return rc;
  static const char sql_kind[] = "SELECT kind FROM series WHERE id=?1";
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(s, c, sql_kind, &st)))
    return rc;
  pmcp__st_bind_int64(st, 1, series);
  pmcp__st_step(st);
  int hist = strcmp(pmcp__st_text(st, 0), "histogram") == 0;
  int scat = strcmp(pmcp__st_text(st, 0), "scatter") == 0;
  pmcp__st_reset(st);
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
  if ((rc = pmcp__sql_prep(s, c, sql, &st)))
    return rc;
  pmcp__st_bind_int64(st, 1, series);
  pmcp__st_bind_int64(st, 2, t.id);
  pmcp__st_bind_int64(st, 3, step_from);
  pmcp__st_bind_int64(st, 4, step_to);
  pmcp__st_bind_int64(st, 5, after_id);
  pmcp__st_bind_int64(st, 6, (int64_t)limit + 1);
  pmcp__buf_reset(out);
  pmcp__buf_puts(out, "{\"items\":[");
  size_t n = 0;
  int64_t last = 0;
  int more = 0;
  while (pmcp__st_step(st) == PMCP__ROW) {
    if (n == limit) {
      more = 1;
      break;
    }
    if (n++)
      pmcp__buf_putc(out, ',');
    last = pmcp__st_int64(st, 0);
    pmcp__buf_printf(out, "{\"id\":%lld,\"step\":%lld,\"time\":", (long long)last,
                     (long long)pmcp__st_int64(st, 1));
    if (pmcp__st_null(st, 2))
      pmcp__buf_puts(out, "null");
    else
      pmcp__buf_printf(out, "%lld", (long long)pmcp__st_int64(st, 2));
    size_t na = 0, nb = 0;
    const void *ba = pmcp__st_blob(st, 3, &na);
    pmcp__buf_puts(out, hist ? ",\"edges\":" : ",\"x\":");
    put_doubles(out, ba, na);
    const void *bb = pmcp__st_blob(st, 4, &nb);
    pmcp__buf_puts(out, hist ? ",\"counts\":" : ",\"y\":");
    put_doubles(out, bb, nb);
    pmcp__buf_putc(out, '}');
  }
  pmcp__st_reset(st);
  /* Sets come back in logging order; the id is the position. */
  if (more)
    pmcp__buf_printf(out, "],\"next\":\"%lld\"}", (long long)last);
  else
    pmcp__buf_puts(out, "],\"next\":null}");
  return out->ptr ? 0 : PMCP_ENOMEM;
}
