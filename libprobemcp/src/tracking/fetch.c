/* SPDX-License-Identifier: MIT */
/* Metric fetch tools of the tracking toolset: fetch_series_summaries and
 * fetch_float_series_buckets. Series are found through the research
 * metrics tool's catalog reader (pmcp__mx_catalog_read) and bucketed by
 * the store's block summaries (pmcp_store_summary / _summary_time), so
 * the numbers agree with the research `metrics` tool. Entries are one per
 * run and series, with parallel arrays; buckets without a finite value are
 * left out. */
#include "tracking/tracking.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/app.h"
#include "research/metrics.h"
#include "research/page.h"
#ifdef PMCP_HAVE_CAIRO
#include "tracking/fetch_chart.h"
#endif

#define MAX_RUNS 50
#define MAX_KEYS 20
/* the order of axes[] (the axis argument's values) */
enum { AXIS_STEP, AXIS_WALL_CLOCK, AXIS_RELATIVE };

typedef pmcp__trk_sel sel;

void pmcp__trk_sel_free(sel *s)
{
  for (size_t i = 0; s->cat && i < s->n_runs; i++)
    pmcp__mx_catalog_free(&s->cat[i]);
  free(s->cat);
  cJSON_Delete(s->labels);
  cJSON_Delete(s->missing);
  s->cat = NULL;
  s->labels = s->missing = NULL;
}

cJSON *pmcp__trk_sel_done(sel *s)
{
  cJSON *root = cJSON_CreateObject();
  if (root && s->missing) {
    cJSON_AddItemToObject(root, "missing_series", s->missing);
    s->missing = NULL;
  }
  pmcp__trk_sel_free(s);
  return root;
}

int pmcp__trk_sel_read(pmcp_call *call, pmcp__tracking *tk, sel *s)
{
  memset(s, 0, sizeof *s);
  /* every tool reading a selection declares `scale` with default STEP */
  s->scale = pmcp__trk_scale_arg(call, 0);
  assert(s->scale);
  if (!s->scale)
    s->scale = "step";
  const char *lj = NULL;
  if (pmcp_arg_json(call, "labels", &lj) == 0 && lj) {
    s->labels = cJSON_Parse(lj);
    const cJSON *l;
    cJSON_ArrayForEach(l, s->labels) if (!cJSON_IsString(l))
    {
      pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "label \"%s\" must have a string value",
                    l->string);
      return 1;
    }
  }
  cJSON *proj = NULL;
  if ((pmcp_arg_has(call, "project") || pmcp_arg_has(call, "workspace")) &&
      pmcp__trk_project(call, tk, &proj))
    return 1;
  size_t n_runs = pmcp_arg_count(call, "runs");
  s->cat = calloc(n_runs ? n_runs : 1, sizeof *s->cat);
  if (!s->cat) {
    cJSON_Delete(proj);
    return PMCP_ENOMEM;
  }
  /* Every run is read and, with a project, checked to belong to it;
   * s->n_runs counts the catalogs read so far (freed on an error). */
  for (size_t i = 0; i < n_runs; i++) {
    const char *run = NULL;
    pmcp_arg_string_at(call, "runs", i, &run);
    char rref[320];
    if (pmcp__trk_run_ref(call, tk, run, rref, sizeof rref)) {
      cJSON_Delete(proj);
      return 1;
    }
    int rc = pmcp__mx_catalog_read(call, tk->rs, rref, &s->cat[i]);
    if (rc) {
      cJSON_Delete(proj);
      return rc;
    }
    s->n_runs = i + 1;
    if (proj) {
      char err[300];
      const char *ref = rref;
      cJSON *rec = NULL;
      if (pmcp__rs_get(tk->rs, ref, &rec, err, sizeof err) == 0 &&
          strcmp(pmcp__js(rec, "project"), pmcp__js(proj, "ref")) != 0) {
        pmcp__rs_fail(call, PMCP_TERR_NOT_FOUND, "run '%s' not found in project '%s'", ref + 4,
                      pmcp__js(proj, "ref") + 8);
        cJSON_Delete(rec);
        cJSON_Delete(proj);
        return 1;
      }
      cJSON_Delete(rec);
    }
  }
  cJSON_Delete(proj);
  /* A key none of the runs has is named, not answered with nothing: a
   * refusal when no asked key is anywhere, else a note. */
  size_t n_keys = pmcp_arg_count(call, "series"), n_missing = 0;
  for (size_t k = 0; k < n_keys; k++) {
    const char *key = NULL;
    pmcp_arg_string_at(call, "series", k, &key);
    int found = 0;
    for (size_t r = 0; key && !found && r < s->n_runs; r++)
      for (size_t i = 0; !found && i < s->cat[r].n; i++)
        found = strcmp(s->cat[r].s[i].key, key) == 0;
    if (key && !found) {
      if (!s->missing && !(s->missing = cJSON_CreateArray()))
        return PMCP_ENOMEM;
      cJSON_AddItemToArray(s->missing, cJSON_CreateString(key));
      n_missing++;
    }
  }
  if (n_keys && n_missing == n_keys) {
    const char *key = NULL;
    pmcp_arg_string_at(call, "series", 0, &key);
    pmcp__rs_fail(call, PMCP_TERR_NOT_FOUND,
                  "no series '%.200s'%s in the run%s asked for: list_metrics names a "
                  "project's metrics, list_series a run's series", key,
                  n_keys > 1 ? " (nor any other asked)" : "", s->n_runs == 1 ? "" : "s");
    return 1;
  }
  /* RL series always need their scale: a key logged only on an RL scale
   * is named rather than silently matching nothing on STEP. */
  size_t nk = pmcp_arg_has(call, "scale") ? 0 : pmcp_arg_count(call, "series");
  for (size_t k = 0; k < nk; k++) {
    const char *key = NULL, *rl = NULL;
    pmcp_arg_string_at(call, "series", k, &key);
    int on_scale = 0;
    for (size_t r = 0; key && r < s->n_runs; r++)
      for (size_t i = 0; i < s->cat[r].n; i++) {
        const pmcp__mx_series *e = &s->cat[r].s[i];
        if (strcmp(e->key, key) != 0)
          continue;
        if (strcmp(e->scale, s->scale) == 0)
          on_scale = 1;
        else if (strcmp(e->scale, "step") != 0)
          rl = e->scale;
      }
    if (rl && !on_scale) {
      pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                    "%s is an RL series logged on the %s scale: RL series always need their "
                    "scale (ENVIRONMENT_STEP for per-step values, EPISODE for per-episode "
                    "ones)", key, pmcp__trk_scale_name(rl));
      return 1;
    }
  }
  return 0;
}

int pmcp__trk_sel_wanted(pmcp_call *call, const sel *s, const pmcp__mx_series *e,
                         const char *kind)
{
  if (strcmp(e->scale, s->scale) != 0 || (kind && strcmp(e->kind, kind) != 0))
    return 0;
  if (s->labels && !pmcp__trk_labels_match(e->labels, s->labels))
    return 0;
  size_t n = pmcp_arg_count(call, "series");
  if (n == 0)
    return 1; /* listings without `series`: every metric */
  for (size_t k = 0; k < n; k++) {
    const char *key = NULL;
    pmcp_arg_string_at(call, "series", k, &key);
    if (key && strcmp(key, e->key) == 0)
      return 1;
  }
  return 0;
}

cJSON *pmcp__trk_entry_head(const pmcp__mx_series *e)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "run", e->run + 4);
  cJSON_AddStringToObject(o, "series", e->key);
  if (cJSON_GetArraySize(e->labels) > 0)
    cJSON_AddItemToObject(o, "labels", cJSON_Duplicate(e->labels, 1));
  return o;
}

int pmcp__trk_entry_head_w(pmcp_json *j, const pmcp__mx_series *e)
{
  pmcp_json_object_begin(j);
  pmcp__trk_kstr(j, "run", e->run + 4);
  pmcp__trk_kstr(j, "series", e->key);
  if (cJSON_GetArraySize(e->labels) > 0)
    pmcp__trk_kvalue(j, "labels", e->labels);
  return pmcp_json_error(j);
}

int pmcp__trk_sel_fields(pmcp__trk_page *p, const sel *s)
{
  return s->missing ? pmcp__trk_field_value(p, "missing_series", s->missing) : p->rc;
}

/* Starts a fetch handler: refuses a cursor, reads the selection (a
 * refusal is sent). Returns 1 when the handler is done and must return
 * *ret, else 0 with @p s to free. */
static int begin(pmcp_call *call, pmcp__tracking *tk, sel *s, int *ret)
{
  *ret = 0;
  memset(s, 0, sizeof *s);
  int rc = pmcp__trk_sel_read(call, tk, s);
  if (!rc)
    return 0;
  pmcp__trk_sel_free(s);
  *ret = rc > 0 ? 0 : rc;
  return 1;
}

/* The wanted series of a selection, in catalog order. */
typedef struct wanted {
  sel *s;
  const pmcp__mx_series **e;
  int (*fn)(pmcp_json *j, const pmcp__mx_series *e);
} wanted;

static int wanted_fields(pmcp__trk_page *p, void *ud)
{
  return pmcp__trk_sel_fields(p, ((wanted *)ud)->s);
}

static int wanted_row(pmcp_json *j, size_t i, void *ud)
{
  wanted *w = ud;
  pmcp__trk_entry_head_w(j, w->e[i]);
  w->fn(j, w->e[i]);
  return pmcp_json_object_end(j);
}

/* A listing of one item per wanted series of the selection (@p fn writes
 * its members after the entry's head), sent as the page @p name. */
static int per_series(pmcp_call *call, void *ud, const char *name,
                      int (*fn)(pmcp_json *j, const pmcp__mx_series *e))
{
  pmcp__tracking *tk = ud;
  sel s;
  int rc = 0;
  if (begin(call, tk, &s, &rc))
    return rc;
  size_t n = 0, cap = 0;
  for (size_t r = 0; r < s.n_runs; r++)
    cap += s.cat[r].n;
  wanted w = {&s, calloc(cap ? cap : 1, sizeof *w.e), fn};
  if (!w.e) {
    pmcp__trk_sel_free(&s);
    return PMCP_ENOMEM;
  }
  for (size_t r = 0; r < s.n_runs; r++)
    for (size_t i = 0; i < s.cat[r].n; i++) {
      const pmcp__mx_series *e = &s.cat[r].s[i];
      if (pmcp__trk_sel_wanted(call, &s, e, NULL))
        w.e[n++] = e;
    }
  rc = pmcp__trk_send_rows(call, n, name, wanted_fields, wanted_row, &w);
  free(w.e);
  pmcp__trk_sel_free(&s);
  return rc;
}

static int summary_of(pmcp_json *j, const pmcp__mx_series *e)
{
  pmcp__trk_kstr(j, "kind", e->kind);
  pmcp__trk_knum(j, "count", (double)e->count);
  if (e->has_stats && e->count > e->nonfinite && !strcmp(e->kind, "float")) {
    pmcp__trk_knum(j, "first", e->first);
    pmcp__trk_knum(j, "last", e->last);
    pmcp__trk_knum(j, "min", e->min);
    pmcp__trk_knum(j, "max", e->max);
    pmcp__trk_knum(j, "avg", e->mean);
  }
  if (e->count > 0) {
    pmcp__trk_knum(j, "step_min", (double)e->step_min);
    pmcp__trk_knum(j, "step_max", (double)e->step_max);
  }
  if (e->nonfinite)
    pmcp__trk_knum(j, "nonfinite", (double)e->nonfinite);
  return pmcp_json_error(j);
}

static int fetch_series_summaries(pmcp_call *call, void *ud)
{
  return per_series(call, ud, "summaries", summary_of);
}

static int series_of(pmcp_json *j, const pmcp__mx_series *e)
{
  pmcp__trk_kstr(j, "kind", e->kind);
  pmcp__trk_kstr(j, "scale", pmcp__trk_scale_name(e->scale));
  pmcp__trk_knum(j, "count", (double)e->count);
  return pmcp_json_error(j);
}

static int list_series(pmcp_call *call, void *ud)
{
  return per_series(call, ud, "series", series_of);
}

/* One end of a time axis' range in the axis' milliseconds: on wall_clock
 * an ISO 8601 date-time or epoch milliseconds, on relative_time seconds
 * since the run's first point. Returns 1 after sending an error. */
static int time_arg(pmcp_call *call, const char *name, int relative, int64_t *out)
{
  const char *js = NULL;
  pmcp_arg_json(call, name, &js);
  cJSON *v = js ? cJSON_Parse(js) : NULL;
  int bad = 1;
  if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
    double x = relative ? v->valuedouble * 1000.0 : v->valuedouble;
    if (x > -9.2e18 && x < 9.2e18) {
      *out = (int64_t)llround(x);
      bad = 0;
    }
  } else if (cJSON_IsString(v) && !relative) {
    bad = pmcp__iso_parse_ms(v->valuestring, out, NULL) != 0;
  }
  cJSON_Delete(v);
  if (bad)
    pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, relative
                  ? "%s on axis relative_time is a number of seconds since the run's first point"
                  : "%s on axis wall_clock is an ISO 8601 date-time (2024-05-01T12:00:00Z) or "
                    "epoch milliseconds", name);
  return bad;
}

static int fetch_float_series_buckets(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  sel s;
  int rc = 0;
  if (begin(call, tk, &s, &rc))
    return rc;
  const char *axis = "step";
  pmcp_arg_string(call, "axis", &axis, NULL);
  size_t axis_i = AXIS_STEP;
  pmcp_arg_enum(call, "axis", &axis_i);
  int by_step = axis_i == AXIS_STEP, relative = axis_i == AXIS_RELATIVE;
  int ax_kind = by_step ? PMCP__TRK_AX_STEP : relative ? PMCP__TRK_AX_RELATIVE : PMCP__TRK_AX_WALL;
  int64_t nbk = 50, from, to;
  pmcp_arg_int(call, "buckets", &nbk);
  int ranged;
  if (pmcp__trk_step_range(call, &from, &to, &ranged)) {
    pmcp__trk_sel_free(&s);
    return 0;
  }
  if (ranged && !by_step) {
    pmcp__trk_sel_free(&s);
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "step_from and step_to narrow the step "
                         "axis only: with axis %s use time_from and time_to", axis);
  }
  /* time_from / time_to: the range of a time axis, in its own unit */
  int has_tf = pmcp_arg_has(call, "time_from"), has_tt = pmcp_arg_has(call, "time_to");
  if ((has_tf || has_tt) && by_step) {
    pmcp__trk_sel_free(&s);
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "time_from and time_to narrow the "
                         "wall_clock and relative_time axes: on the step axis use step_from "
                         "and step_to");
  }
  if (has_tf || has_tt) {
    static const char *const ends[] = {"time_from", "time_to"};
    int64_t *at[] = {&from, &to};
    for (int k = 0; k < 2; k++) {
      if (!pmcp_arg_has(call, ends[k]))
        continue;
      if (time_arg(call, ends[k], relative, at[k])) {
        pmcp__trk_sel_free(&s);
        return 0;
      }
    }
    if (from > to) {
      pmcp__trk_sel_free(&s);
      return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "time_from is after time_to");
    }
  }
  /* The shared axis: one range, so one set of edges, for every entry,
   * fixed before any series is read; relative time counts from each
   * run's first logged point. Explicit ends are kept as given. */
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  int64_t *start = calloc(s.n_runs ? s.n_runs : 1, sizeof *start);
  if (!start) {
    pmcp__trk_sel_free(&s);
    return PMCP_ENOMEM;
  }
  for (size_t r = 0; r < s.n_runs; r++) {
    start[r] = INT64_MAX;
    for (size_t i = 0; i < s.cat[r].n; i++)
      if (s.cat[r].s[i].count > 0 && s.cat[r].s[i].time_min > 0 &&
          s.cat[r].s[i].time_min < start[r])
        start[r] = s.cat[r].s[i].time_min;
    for (size_t i = 0; i < s.cat[r].n; i++) {
      const pmcp__mx_series *e = &s.cat[r].s[i];
      if (!pmcp__trk_sel_wanted(call, &s, e, "float") || e->count == 0)
        continue;
      if (!by_step && e->time_min <= 0)
        continue;
      int64_t a = by_step ? e->step_min : relative ? e->time_min - start[r] : e->time_min;
      int64_t b = by_step ? e->step_max : relative ? e->time_max - start[r] : e->time_max;
      a = a > from ? a : from;
      b = b < to ? b : to;
      if (a > b)
        continue;
      lo = a < lo ? a : lo;
      hi = b > hi ? b : hi;
    }
  }
  if (pmcp_arg_has(call, by_step ? "step_from" : "time_from"))
    lo = from;
  if (pmcp_arg_has(call, by_step ? "step_to" : "time_to"))
    hi = to;
  pmcp__trk_axis ax;
  pmcp__trk_axis_make(&ax, ax_kind, lo, hi, (size_t)nbk);
  cJSON *all = cJSON_CreateArray();
  pmcp__trk_bucket *bk = calloc(ax.n ? ax.n : 1, sizeof *bk);
  if (!bk) {
    free(start);
    pmcp__trk_sel_free(&s);
    cJSON_Delete(all);
    return PMCP_ENOMEM;
  }
  size_t timeless = 0;
  const char *xname = by_step ? "step" : relative ? "relative_time_s" : "wall_time";
#ifdef PMCP_HAVE_CAIRO
  int log_y = 0, chart = pmcp__chart_wanted(call, &log_y);
  pmcp__trk_chart_src *csrc = NULL;
  size_t n_csrc = 0, cap_csrc = 0;
#endif
  for (size_t r = 0; r < s.n_runs; r++)
    for (size_t i = 0; i < s.cat[r].n; i++) {
      const pmcp__mx_series *e = &s.cat[r].s[i];
      if (!pmcp__trk_sel_wanted(call, &s, e, "float") || e->count == 0)
        continue;
      uint64_t no_time = 0;
      int64_t off = relative ? start[r] : 0;
#ifdef PMCP_HAVE_CAIRO
      if (chart && !pmcp__trk_chart_note(&csrc, &n_csrc, &cap_csrc, e, lo, hi)) {
        pmcp__trk_chart_src *cs = &csrc[n_csrc - 1];
        cs->off_ms = off;
        cs->t_lo = lo + off;
        cs->t_hi = hi + off;
      }
#endif
      /* a time range bounds the axis, not the steps read */
      int src = by_step || e->time_min > 0
                  ? pmcp__trk_bucket_scan(tk, e->id, &ax, off, by_step ? from : INT64_MIN,
                                          by_step ? to : INT64_MAX, bk, &no_time)
                  : (memset(bk, 0, (ax.n ? ax.n : 1) * sizeof *bk), 0);
      if (src) {
        free(bk);
        free(start);
#ifdef PMCP_HAVE_CAIRO
        free(csrc);
#endif
        pmcp__trk_sel_free(&s);
        cJSON_Delete(all);
        return pmcp__rs_fail(call, PMCP_TERR_STORE, "the series %s of run %s cannot be read",
                             e->key, e->run + 4);
      }
      if (!by_step && e->time_min <= 0)
        no_time = (uint64_t)e->count;
      cJSON *o = pmcp__trk_entry_head(e);
      pmcp__trk_add_buckets(o, xname, bk, &ax);
      if (no_time) {
        /* logged without a time: those points have no place on this axis */
        cJSON_AddNumberToObject(o, "points_without_time", (double)no_time);
        timeless++;
      }
      cJSON_AddItemToArray(all, o);
    }
  free(bk);
  free(start);
#ifdef PMCP_HAVE_CAIRO
  pmcp__chart ch = {0};
  if (chart) {
    rc = pmcp__trk_chart_build(call, tk->rs, all, csrc, n_csrc, ax_kind,
                               "bucket means (band: min..max)", &ch);
  }
  free(csrc);
#endif
  cJSON *root = pmcp__trk_sel_done(&s);
  cJSON_AddStringToObject(root, "axis", axis);
  pmcp__trk_add_edges(root, &ax);
  if (timeless)
    cJSON_AddStringToObject(root, "note", "some entries have points logged without a time "
                            "(points_without_time): they are left out of this time axis; the "
                            "step axis holds them");
#ifdef PMCP_HAVE_CAIRO
  if (chart) {
    if (!rc)
      rc = pmcp__trk_window_chart(call, root, "entries", all, &ch);
    else {
      cJSON_Delete(root);
      cJSON_Delete(all);
    }
    pmcp__chart_free(&ch);
    return rc;
  }
#endif
  return pmcp__trk_window(call, root, "entries", all);
}

/* Most exact points one series entry returns. */
#define MAX_POINTS 1000

/* Appends the exact points of @p e with steps in [lo, hi] to @p o; with
 * @p last_n > 0 only the last @p last_n (a ring over the whole read).
 * Non-finite values are left out: *finite and *nonfinite count what was
 * read of each. */
static int exact_points(pmcp__tracking *tk, const pmcp__mx_series *e, int64_t lo, int64_t hi,
                        size_t last_n, cJSON *o, size_t *finite, size_t *nonfinite)
{
  *finite = *nonfinite = 0;
  enum { CHUNK = 4096 };
  pmcp_point *buf = malloc(CHUNK * sizeof *buf);
  pmcp_point *ring = malloc((last_n ? last_n : 1) * sizeof *ring);
  if (!buf || !ring) {
    free(buf);
    free(ring);
    return PMCP_ENOMEM;
  }
  cJSON *st = cJSON_AddArrayToObject(o, "step");
  cJSON *va = cJSON_AddArrayToObject(o, "value");
  size_t kept = 0;
  int64_t after = 0;
  int rc = 0;
  for (;;) {
    size_t got = 0;
    int64_t next = 0;
    pthread_mutex_lock(tk->rs->lock);
    rc = pmcp_store_points(tk->rs->store, tk->rs->tenant, e->id, lo, hi, after, buf, CHUNK,
                           &got, &next);
    pthread_mutex_unlock(tk->rs->lock);
    if (rc)
      break;
    for (size_t i = 0; i < got; i++) {
      if (!isfinite(buf[i].value)) {
        (*nonfinite)++;
        continue;
      }
      if (last_n) {
        ring[kept % last_n] = buf[i];
        kept++;
      } else {
        cJSON_AddItemToArray(st, cJSON_CreateNumber((double)buf[i].step));
        cJSON_AddItemToArray(va, cJSON_CreateNumber(buf[i].value));
      }
    }
    if (!next || got == 0)
      break;
    after = next;
  }
  if (!rc && last_n) {
    size_t n = kept < last_n ? kept : last_n;
    for (size_t i = 0; i < n; i++) {
      const pmcp_point *p = &ring[(kept - n + i) % last_n];
      cJSON_AddItemToArray(st, cJSON_CreateNumber((double)p->step));
      cJSON_AddItemToArray(va, cJSON_CreateNumber(p->value));
    }
  }
  *finite = last_n ? kept : (size_t)cJSON_GetArraySize(st);
  free(buf);
  free(ring);
  return rc;
}

static int fetch_float_series(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  sel s;
  int rc = 0;
  if (begin(call, tk, &s, &rc))
    return rc;
  int64_t max_points = 200, lo, hi;
  pmcp_arg_int(call, "max_points", &max_points);
  int ranged;
  if (pmcp__trk_step_range(call, &lo, &hi, &ranged)) {
    pmcp__trk_sel_free(&s);
    return 0;
  }
  /* Histogram series read as one statistic per step (hist.c). */
  const char *stat_name = NULL;
  pmcp__mx_hist_stat stat;
  pmcp_arg_string(call, "histogram_statistic", &stat_name, NULL);
  if (stat_name && pmcp__mx_hist_stat_parse(stat_name, &stat)) {
    pmcp__trk_sel_free(&s);
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                         "histogram_statistic '%.40s' is not mean, std, min, max, median or "
                         "pNN (a percentile, 0 to 100)", stat_name);
  }
  size_t hist_skipped = 0;
  char hist_key[256] = ""; /* the catalog is freed before the error is sent */
  cJSON *all = cJSON_CreateArray();
  int any_bucketed = 0;
#ifdef PMCP_HAVE_CAIRO
  int log_y = 0, chart = pmcp__chart_wanted(call, &log_y);
  pmcp__trk_chart_src *csrc = NULL;
  size_t n_csrc = 0, cap_csrc = 0;
#define NOTE_SRC(a, b)                                                                   \
  if (chart && pmcp__trk_chart_note(&csrc, &n_csrc, &cap_csrc, e, (a), (b)))             \
    rc = PMCP_ENOMEM;
#else
#define NOTE_SRC(a, b)
#endif
  pmcp__trk_bucket *bk = calloc((size_t)max_points, sizeof *bk);
  for (size_t r = 0; r < s.n_runs && bk && !rc; r++)
    for (size_t i = 0; i < s.cat[r].n && !rc; i++) {
      const pmcp__mx_series *e = &s.cat[r].s[i];
      if (pmcp__trk_sel_wanted(call, &s, e, "histogram") && e->count > 0) {
        if (!stat_name) {
          hist_skipped++;
          snprintf(hist_key, sizeof hist_key, "%s", e->key);
          continue;
        }
        cJSON *o = pmcp__trk_entry_head(e);
        cJSON_AddItemToArray(all, o);
        NOTE_SRC(ranged ? lo : INT64_MIN, ranged ? hi : INT64_MAX)
        if (!rc)
          rc = pmcp__trk_hist_stat_entry(tk, e, ranged, lo, hi, (size_t)max_points, &stat,
                                       stat_name, o, &any_bucketed);
        continue;
      }
      if (!pmcp__trk_sel_wanted(call, &s, e, "float") || e->count == 0)
        continue;
      cJSON *o = pmcp__trk_entry_head(e);
      cJSON_AddItemToArray(all, o);
      size_t fin = 0, nonfin = 0;
      NOTE_SRC(ranged ? lo : INT64_MIN, ranged ? hi : INT64_MAX)
      if (rc)
        break;
      if (!ranged) {
        rc = exact_points(tk, e, INT64_MIN, INT64_MAX, (size_t)max_points, o, &fin, &nonfin);
        /* finite points before the ones returned (non-finite ones are
         * never returned, and counted apart) */
        if (!rc && fin > (size_t)max_points)
          cJSON_AddNumberToObject(o, "points_before", (double)(fin - (size_t)max_points));
        if (!rc && nonfin)
          cJSON_AddNumberToObject(o, "nonfinite_points", (double)nonfin);
        continue;
      }
      /* How many finite points the range holds decides exact or bucketed
       * (counted exactly, from block summaries and the straddling points). */
      int64_t a = lo > e->step_min ? lo : e->step_min, b = hi < e->step_max ? hi : e->step_max;
      if (a > b)
        continue;
      pmcp__trk_axis one;
      pmcp__trk_axis_make(&one, PMCP__TRK_AX_STEP, a, b, 1);
      if ((rc = pmcp__trk_bucket_scan(tk, e->id, &one, 0, a, b, bk, NULL)))
        break;
      uint64_t in_range = bk[0].b.count - bk[0].b.nonfinite, nf = bk[0].b.nonfinite;
      if (in_range <= (uint64_t)max_points) {
        rc = exact_points(tk, e, a, b, 0, o, &fin, &nonfin);
        if (!rc && nonfin)
          cJSON_AddNumberToObject(o, "nonfinite_points", (double)nonfin);
        continue;
      }
      /* Too wide to return in full: buckets instead, and it says so. */
      any_bucketed = 1;
      pmcp__trk_axis ax;
      pmcp__trk_axis_make(&ax, PMCP__TRK_AX_STEP, a, b, (size_t)max_points);
      if ((rc = pmcp__trk_bucket_scan(tk, e->id, &ax, 0, a, b, bk, NULL)))
        break;
      cJSON_AddBoolToObject(o, "bucketed", 1);
      cJSON_AddNumberToObject(o, "points_in_range", (double)in_range);
      if (nf)
        cJSON_AddNumberToObject(o, "nonfinite_points", (double)nf);
      cJSON_AddNumberToObject(o, "bucket_width_steps", (double)ax.width);
      pmcp__trk_add_buckets(o, "step", bk, &ax);
    }
  free(bk);
#ifdef PMCP_HAVE_CAIRO
  pmcp__chart ch = {0};
  if (chart && !rc)
    rc = pmcp__trk_chart_build(call, tk->rs, all, csrc, n_csrc, PMCP__TRK_AX_STEP,
                               any_bucketed ? "points (bucketed: means, band min..max)"
                                            : "points", &ch);
  free(csrc);
#endif
#undef NOTE_SRC
  cJSON *root = pmcp__trk_sel_done(&s);
  if (rc || !root) {
    cJSON_Delete(root);
#ifdef PMCP_HAVE_CAIRO
    pmcp__chart_free(&ch);
#endif
    cJSON_Delete(all);
    return rc == PMCP_ENOMEM || !rc ? PMCP_ENOMEM
                                    : pmcp__rs_fail(call, PMCP_TERR_STORE,
                                                    "the points cannot be read");
  }
  if (hist_skipped && cJSON_GetArraySize(all) == 0) {
    cJSON_Delete(all);
    cJSON_Delete(root);
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                         "%s is a histogram series: pass histogram_statistic (mean, std, min, "
                         "max, median or pNN) to read it as one value per step, or read whole "
                         "histograms with fetch_histogram_series", hist_key);
  }
  if (any_bucketed)
    cJSON_AddStringToObject(root, "note",
                            "the step range holds more points than max_points: entries marked "
                            "bucketed give per-bucket mean/min/max/count instead of points; "
                            "narrow step_from/step_to for exact points");
  if (hist_skipped)
    cJSON_AddStringToObject(root, "skipped",
                            "histogram series are left out without histogram_statistic");
#ifdef PMCP_HAVE_CAIRO
  if (chart) {
    rc = pmcp__trk_window_chart(call, root, "entries", all, &ch);
    pmcp__chart_free(&ch);
    return rc;
  }
#endif
  /* Whole series only: a series never ends early, the ones that do not
   * fit come on the next pages. */
  return pmcp__trk_window_hint(call, root, "entries", all,
                               "only the first count series fit token_budget, each whole: "
                               "the rest start at offset=next_offset; or lower max_points "
                               "or raise token_budget for more series per call");
}

/* The label keys of a selection's series, each with its values. */
typedef struct label_rows {
  sel *s;
  cJSON *keys; /* key -> [values], in the order first seen */
  const char *run;
  const cJSON **k;
} label_rows;

static int label_fields(pmcp__trk_page *p, void *ud)
{
  label_rows *lr = ud;
  pmcp__trk_sel_fields(p, lr->s);
  return pmcp__trk_field_str(p, "run", lr->run);
}

static int label_row(pmcp_json *j, size_t i, void *ud)
{
  const cJSON *k = ((label_rows *)ud)->k[i];
  pmcp_json_object_begin(j);
  pmcp__trk_kstr(j, "label", k->string);
  pmcp__trk_kvalue(j, "values", k);
  return pmcp_json_object_end(j);
}

static int list_series_label_values(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  sel s;
  int rc = 0;
  if (begin(call, tk, &s, &rc))
    return rc;
  cJSON *keys = cJSON_CreateObject(); /* key -> [values] */
  for (size_t r = 0; r < s.n_runs; r++)
    for (size_t i = 0; i < s.cat[r].n; i++) {
      const pmcp__mx_series *e = &s.cat[r].s[i];
      if (!pmcp__trk_sel_wanted(call, &s, e, NULL))
        continue;
      const cJSON *l;
      cJSON_ArrayForEach(l, e->labels)
      {
        if (!cJSON_IsString(l))
          continue;
        cJSON *vals = cJSON_GetObjectItemCaseSensitive(keys, l->string);
        if (!vals)
          vals = cJSON_AddArrayToObject(keys, l->string);
        int have = 0;
        const cJSON *v;
        cJSON_ArrayForEach(v, vals) if (!strcmp(v->valuestring, l->valuestring)) have = 1;
        if (!have)
          cJSON_AddItemToArray(vals, cJSON_CreateString(l->valuestring));
      }
    }
  const char *run = NULL;
  pmcp_arg_string_at(call, "runs", 0, &run);
  label_rows lr = {&s, keys, strncmp(run, "run:", 4) ? run : run + 4, NULL};
  size_t n = (size_t)cJSON_GetArraySize(keys), i = 0;
  lr.k = calloc(n ? n : 1, sizeof *lr.k);
  const cJSON *k;
  cJSON_ArrayForEach(k, keys) if (lr.k) lr.k[i++] = k;
  rc = lr.k ? pmcp__trk_send_rows(call, n, "labels", label_fields, label_row, &lr) : PMCP_ENOMEM;
  free(lr.k);
  cJSON_Delete(keys);
  pmcp__trk_sel_free(&s);
  return rc;
}

static const char *const axes[] = {"step", "wall_clock", "relative_time", NULL};

#define COMMON_ARGS                                                                        \
  {"runs", PMCP_T_STRING_ARRAY, 1, "Ids, names or refs.", 1, 1, 1, MAX_RUNS, NULL,    \
   NULL},                                                                                  \
  {"series", PMCP_T_STRING_ARRAY, 1, NULL, 1, 1, 1,                          \
   MAX_KEYS, NULL, NULL},                                                                  \
  {"scale", PMCP_T_STRING, 0, NULL, 0, 0, 0, 0, pmcp__trk_scales,                          \
   "\"STEP\""},                                                                            \
  {"labels", PMCP_T_OBJECT, 0, NULL, 0, 0, 0,          \
   0, NULL, NULL},                                                                         \
  PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT,                                          \
  PMCP__TRK_ARG_LIMIT("100"), PMCP__TRK_ARG_OFFSET

static const pmcp_arg_spec summaries_args[] = {COMMON_ARGS};
static const pmcp_arg_spec points_args[] = {
  COMMON_ARGS,
  {"step_from", PMCP_T_INTEGER, 0, NULL,
   0, 0, 0, 0, NULL, NULL},
  {"step_to", PMCP_T_INTEGER, 0, NULL, 0, 0, 0, 0, NULL, NULL},
  {"max_points", PMCP_T_INTEGER, 0, NULL, 1, 1, 1, MAX_POINTS, NULL, "200"},
  {"histogram_statistic", PMCP_T_STRING, 0, "Read histograms as: mean, "
   "std, min, max, median, pNN.", 1, 1, 1, 16, NULL,
   NULL},
#ifdef PMCP_HAVE_CAIRO
  PMCP__CHART_ARG_RENDER,
#endif
};
static const pmcp_arg_spec list_series_args[] = {
  {"runs", PMCP_T_STRING_ARRAY, 1, "Ids, names or refs.", 1, 1, 1, MAX_RUNS, NULL,
   NULL},
  {"series", PMCP_T_STRING_ARRAY, 0, NULL, 0, 1, 0,
   MAX_KEYS, NULL, NULL},
  {"scale", PMCP_T_STRING, 0, NULL, 0, 0, 0, 0, pmcp__trk_scales,
   "\"STEP\""},
  {"labels", PMCP_T_OBJECT, 0, NULL, 0, 0, 0,
   0, NULL, NULL},
  PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT,
  PMCP__TRK_ARG_LIMIT("100"), PMCP__TRK_ARG_OFFSET};
/* One run (the seed's shape), read through the same selection. */
static const pmcp_arg_spec label_values_args[] = {
  {"runs", PMCP_T_STRING_ARRAY, 1, "One run, as [ID].", 1, 1, 1, 1,
   NULL, NULL},
  {"series", PMCP_T_STRING_ARRAY, 0, NULL, 0, 1, 0,
   MAX_KEYS, NULL, NULL},
  {"scale", PMCP_T_STRING, 0, NULL, 0, 0, 0, 0, pmcp__trk_scales,
   "\"STEP\""},
  PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT,
  PMCP__TRK_ARG_LIMIT("100"), PMCP__TRK_ARG_OFFSET};
static const pmcp_arg_spec buckets_args[] = {
  COMMON_ARGS,
  {"axis", PMCP_T_STRING, 0, NULL, 0, 0, 0, 0, axes, "\"step\""},
  {"buckets", PMCP_T_INTEGER, 0, NULL, 1, 1, 2, 1000, NULL, "50"},
  {"step_from", PMCP_T_INTEGER, 0, NULL, 0, 0, 0, 0, NULL, NULL},
  {"step_to", PMCP_T_INTEGER, 0, NULL, 0, 0, 0, 0, NULL, NULL},
  {"time_from", PMCP_T_ANY, 0, "ISO 8601 or epoch ms; on relative_time seconds.", 0, 0, 0, 0,
   NULL, NULL},
  {"time_to", PMCP_T_ANY, 0, NULL, 0, 0, 0, 0, NULL, NULL},
#ifdef PMCP_HAVE_CAIRO
  PMCP__CHART_ARG_RENDER,
#endif
};

int pmcp__trk_add_fetch(pmcp_server *server, pmcp__tracking *tk)
{
  int rc = pmcp__trk_add_tool(server, tk, "fetch_series_summaries", NULL,
               "first, last, min, max, avg, count per run and series.",
               summaries_args, sizeof summaries_args / sizeof summaries_args[0],
               fetch_series_summaries);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "fetch_float_series_buckets", NULL,
             "Series in buckets of one shared axis: mean, min, max, count.",
             buckets_args, sizeof buckets_args / sizeof buckets_args[0],
             fetch_float_series_buckets);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "fetch_float_series", NULL,
             "Exact finite points per run and series: the last max_points, or a step range "
             "(bucketed past max_points).",
             points_args, sizeof points_args / sizeof points_args[0], fetch_float_series);
  /* hosts with MCP Apps draw the curves of both (research/app.h) */
  if (!rc)
    rc = pmcp__app_curves_attach(server, "fetch_float_series");
  if (!rc)
    rc = pmcp__app_curves_attach(server, "fetch_float_series_buckets");
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "list_series", NULL,
             "Series of runs (metric and labels): kind, scale, points.",
             list_series_args, sizeof list_series_args / sizeof list_series_args[0],
             list_series);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "list_series_label_values", NULL,
             "Label keys and values of one run's series.",
             label_values_args, sizeof label_values_args / sizeof label_values_args[0],
             list_series_label_values);
  return rc;
}
