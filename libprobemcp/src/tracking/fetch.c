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
  free(s->missing);
  s->cat = NULL;
  s->labels = NULL;
  s->missing = NULL;
  s->n_missing = 0;
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
  size_t n_keys = pmcp_arg_count(call, "series");
  if (n_keys && !(s->missing = calloc(n_keys, sizeof *s->missing)))
    return PMCP_ENOMEM;
  for (size_t k = 0; k < n_keys; k++) {
    const char *key = NULL;
    pmcp_arg_string_at(call, "series", k, &key);
    int found = 0;
    for (size_t r = 0; key && !found && r < s->n_runs; r++)
      for (size_t i = 0; !found && i < s->cat[r].n; i++)
        found = strcmp(s->cat[r].s[i].key, key) == 0;
    if (key && !found)
      s->missing[s->n_missing++] = key;
  }
  if (n_keys && s->n_missing == n_keys) {
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
  if (!s->n_missing)
    return p->rc;
  pmcp_json *j = pmcp__trk_field(p);
  if (j) {
    pmcp_json_array_begin(j);
    for (size_t i = 0; i < s->n_missing; i++)
      pmcp_json_string(j, s->missing[i]);
    pmcp_json_array_end(j);
  }
  return pmcp__trk_field_end(p, "missing_series");
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

/* The entries of a fetch call: the wanted float series with points (and,
 * with @p hist, the histogram ones), in catalog order, with each one's
 * run. */
typedef struct entries {
  const pmcp__mx_series **e;
  size_t *run;
  size_t n;
} entries;

static void entries_free(entries *en)
{
  free(en->e);
  free(en->run);
}

/* Fills @p en; histograms left out when @p hist is 0 are counted in
 * *skipped (may be NULL) with the last one's key in @p key. */
static int entries_of(pmcp_call *call, const sel *s, int hist, entries *en, size_t *skipped,
                      char *key, size_t keylen)
{
  size_t cap = 0;
  memset(en, 0, sizeof *en);
  for (size_t r = 0; r < s->n_runs; r++)
    cap += s->cat[r].n;
  en->e = calloc(cap ? cap : 1, sizeof *en->e);
  en->run = calloc(cap ? cap : 1, sizeof *en->run);
  if (!en->e || !en->run)
    return PMCP_ENOMEM;
  for (size_t r = 0; r < s->n_runs; r++)
    for (size_t i = 0; i < s->cat[r].n; i++) {
      const pmcp__mx_series *e = &s->cat[r].s[i];
      if (e->count == 0)
        continue;
      if (skipped && pmcp__trk_sel_wanted(call, s, e, "histogram") && !hist) {
        (*skipped)++;
        snprintf(key, keylen, "%s", e->key);
        continue;
      }
      if (pmcp__trk_sel_wanted(call, s, e, "float") ||
          (hist && pmcp__trk_sel_wanted(call, s, e, "histogram"))) {
        en->e[en->n] = e;
        en->run[en->n++] = r;
      }
    }
  return 0;
}

/* ---- fetch_float_series_buckets ------------------------------------------ */

/* One call's shared axis, entries and chart. */
typedef struct bcall {
  pmcp_call *call;
  pmcp__tracking *tk;
  entries en;
  pmcp__trk_axis ax;
  int64_t from, to, *start; /* start: each run's first logged time */
  int by_step, relative;
  const char *xname;
  pmcp__trk_bucket *bk;
  struct pmcp__chart *ch; /* NULL: no chart */
} bcall;

/* Reads entry @p i into c->bk: 0, or 1 after sending the error. */
static int bucket_read(bcall *c, size_t i, uint64_t *no_time)
{
  const pmcp__mx_series *e = c->en.e[i];
  int64_t off = c->relative ? c->start[c->en.run[i]] : 0;
  *no_time = 0;
  int rc = 0;
  if (c->by_step || e->time_min > 0)
    /* a time range bounds the axis, not the steps read */
    rc = pmcp__trk_bucket_scan(c->tk, e->id, &c->ax, off, c->by_step ? c->from : INT64_MIN,
                               c->by_step ? c->to : INT64_MAX, c->bk, no_time);
  else {
    memset(c->bk, 0, (c->ax.n ? c->ax.n : 1) * sizeof *c->bk);
    *no_time = (uint64_t)e->count; /* logged without a time */
  }
  if (rc)
    pmcp__rs_fail(c->call, PMCP_TERR_STORE, "the series %s of run %s cannot be read", e->key,
                  e->run + 4);
  return rc ? 1 : 0;
}

/* Entry @p i as the page's item (and the chart's line). */
static int bucket_item(bcall *c, size_t i, pmcp_json *j)
{
  const pmcp__mx_series *e = c->en.e[i];
  uint64_t no_time;
  if (bucket_read(c, i, &no_time))
    return 1;
  pmcp__trk_entry_head_w(j, e);
  pmcp__trk_buckets_w(j, c->xname, c->bk, &c->ax);
  if (no_time) /* those points have no place on this axis */
    pmcp__trk_knum(j, "points_without_time", (double)no_time);
  pmcp_json_object_end(j);
#ifdef PMCP_HAVE_CAIRO
  if (c->ch) {
    int64_t off = c->relative ? c->start[c->en.run[i]] : 0;
    pmcp__trk_chart_src cs = pmcp__trk_chart_src_of(e, c->ax.lo, c->ax.hi);
    cs.off_ms = off;
    cs.t_lo = c->ax.lo + off;
    cs.t_hi = c->ax.hi + off;
    pmcp__chart_line *ln = pmcp__trk_chart_buckets(c->call, c->tk->rs, c->ch, e, c->bk, &c->ax);
    int rc = ln ? pmcp__trk_chart_gaps(c->tk->rs, &cs, c->ax.axis, ln) : PMCP_ENOMEM;
    if (rc)
      return rc;
  }
#endif
  return pmcp_json_error(j);
}

/* On a time axis: whether an entry has points logged without a time (the
 * answer says so before its entries), read until one has. 0, or 1 after
 * sending the error. */
static int any_timeless(bcall *c, int *timeless)
{
  *timeless = 0;
  for (size_t i = 0; !c->by_step && i < c->en.n && !*timeless; i++)
    *timeless = c->en.e[i]->time_min <= 0;
  for (size_t i = 0; !c->by_step && i < c->en.n && !*timeless; i++) {
    uint64_t no_time;
    if (bucket_read(c, i, &no_time))
      return 1;
    *timeless = no_time > 0;
  }
  return 0;
}

/* Sends the page of @p c's entries. */
static int bucket_page(bcall *c, const sel *s, const char *axis)
{
  size_t offset, limit;
  pmcp__trk_window_args(c->call, &offset, &limit);
  int timeless = 0;
  if (any_timeless(c, &timeless))
    return 0;
  pmcp__trk_page p;
  pmcp__trk_page_begin(&p, c->call, offset, c->en.n, NULL, c->ch);
  pmcp__trk_sel_fields(&p, s);
  pmcp__trk_field_str(&p, "axis", axis);
  pmcp__trk_edges_fields(&p, &c->ax);
  if (timeless)
    pmcp__trk_field_str(&p, "note",
                        "some entries have points logged without a time "
                        "(points_without_time): they are left out of this time axis; the "
                        "step axis holds them");
  pmcp__trk_list(&p, "entries");
  pmcp_json *j;
  for (size_t i = offset; i < c->en.n && i - offset < limit && (j = pmcp__trk_item(&p)); i++) {
    int rc = bucket_item(c, i, j);
    if (rc) {
      pmcp__trk_page_abort(&p);
      return rc > 0 ? 0 : rc;
    }
    pmcp__trk_item_end(&p);
  }
  return pmcp__trk_page_send(&p);
}

/* The time range of a time axis (time_from / time_to, in its own unit)
 * into [*from, *to]. Returns 1 after sending an error. */
static int time_range(pmcp_call *call, int by_step, int relative, int64_t *from, int64_t *to)
{
  int has_tf = pmcp_arg_has(call, "time_from"), has_tt = pmcp_arg_has(call, "time_to");
  if ((has_tf || has_tt) && by_step) {
    pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                  "time_from and time_to narrow the "
                  "wall_clock and relative_time axes: on the step axis use step_from "
                  "and step_to");
    return 1;
  }
  static const char *const ends[] = {"time_from", "time_to"};
  int64_t *at[] = {from, to};
  for (int k = 0; k < 2; k++)
    if (pmcp_arg_has(call, ends[k]) && time_arg(call, ends[k], relative, at[k]))
      return 1;
  if ((has_tf || has_tt) && *from > *to) {
    pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "time_from is after time_to");
    return 1;
  }
  return 0;
}

/* The shared axis' range: one range, so one set of edges, for every
 * entry, fixed before any series is read; relative time counts from each
 * run's first logged point (c->start, filled here). Explicit ends are
 * kept as given. */
static void shared_range(bcall *c, const sel *s, int64_t *lo, int64_t *hi)
{
  *lo = INT64_MAX;
  *hi = INT64_MIN;
  for (size_t r = 0; r < s->n_runs; r++) {
    c->start[r] = INT64_MAX;
    for (size_t i = 0; i < s->cat[r].n; i++)
      if (s->cat[r].s[i].count > 0 && s->cat[r].s[i].time_min > 0 &&
          s->cat[r].s[i].time_min < c->start[r])
        c->start[r] = s->cat[r].s[i].time_min;
  }
  for (size_t k = 0; k < c->en.n; k++) {
    const pmcp__mx_series *e = c->en.e[k];
    int64_t st = c->start[c->en.run[k]];
    if (!c->by_step && e->time_min <= 0)
      continue;
    int64_t a = c->by_step ? e->step_min : c->relative ? e->time_min - st : e->time_min;
    int64_t b = c->by_step ? e->step_max : c->relative ? e->time_max - st : e->time_max;
    a = a > c->from ? a : c->from;
    b = b < c->to ? b : c->to;
    if (a > b)
      continue;
    *lo = a < *lo ? a : *lo;
    *hi = b > *hi ? b : *hi;
  }
  if (pmcp_arg_has(c->call, c->by_step ? "step_from" : "time_from"))
    *lo = c->from;
  if (pmcp_arg_has(c->call, c->by_step ? "step_to" : "time_to"))
    *hi = c->to;
}

static int fetch_float_series_buckets(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  sel s;
  int rc = 0;
  if (begin(call, tk, &s, &rc))
    return rc;
  bcall c;
  memset(&c, 0, sizeof c);
  c.call = call;
  c.tk = tk;
  const char *axis = "step";
  pmcp_arg_string(call, "axis", &axis, NULL);
  size_t axis_i = AXIS_STEP;
  pmcp_arg_enum(call, "axis", &axis_i);
  c.by_step = axis_i == AXIS_STEP;
  c.relative = axis_i == AXIS_RELATIVE;
  int ax_kind = c.by_step    ? PMCP__TRK_AX_STEP
                : c.relative ? PMCP__TRK_AX_RELATIVE
                             : PMCP__TRK_AX_WALL;
  c.xname = c.by_step ? "step" : c.relative ? "relative_time_s" : "wall_time";
  int64_t nbk = 50, lo, hi;
  pmcp_arg_int(call, "buckets", &nbk);
  int ranged;
  if (pmcp__trk_step_range(call, &c.from, &c.to, &ranged))
    goto done;
  if (ranged && !c.by_step) {
    rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                       "step_from and step_to narrow the "
                       "step axis only: with axis %s use time_from and time_to",
                       axis);
    goto done;
  }
  if (time_range(call, c.by_step, c.relative, &c.from, &c.to))
    goto done;
  c.start = calloc(s.n_runs ? s.n_runs : 1, sizeof *c.start);
  if (!c.start || (rc = entries_of(call, &s, 0, &c.en, NULL, NULL, 0)))
    goto oom;
  shared_range(&c, &s, &lo, &hi);
  pmcp__trk_axis_make(&c.ax, ax_kind, lo, hi, (size_t)nbk);
  if (!(c.bk = calloc(c.ax.n ? c.ax.n : 1, sizeof *c.bk)))
    goto oom;
#ifdef PMCP_HAVE_CAIRO
  pmcp__chart ch = {0};
  int log_y = 0;
  if (pmcp__chart_wanted(call, &log_y)) {
    pmcp__trk_chart_begin(call, ax_kind, "bucket means (band: min..max)", &ch);
    c.ch = &ch;
  }
#endif
  rc = bucket_page(&c, &s, axis);
#ifdef PMCP_HAVE_CAIRO
  pmcp__chart_free(&ch);
#endif
  goto done;
oom:
  rc = PMCP_ENOMEM;
done:
  free(c.bk);
  free(c.start);
  entries_free(&c.en);
  pmcp__trk_sel_free(&s);
  return rc;
}

/* ---- fetch_float_series -------------------------------------------------- */

/* Most exact points one series entry returns. */
#define MAX_POINTS 1000

/* The exact finite points of @p e with steps in [lo, hi], the last @p cap
 * of them (a ring over the whole read) into @p step / @p value (*n, in
 * step order). Non-finite values are left out: *finite and *nonfinite
 * count what was read of each. */
static int exact_points(pmcp__tracking *tk, const pmcp__mx_series *e, int64_t lo, int64_t hi,
                        size_t cap, int64_t *step, double *value, size_t *n, size_t *finite,
                        size_t *nonfinite)
{
  *n = *finite = *nonfinite = 0;
  enum { CHUNK = 4096 };
  pmcp_point *buf = malloc(CHUNK * sizeof *buf);
  pmcp_point *ring = malloc((cap ? cap : 1) * sizeof *ring);
  if (!buf || !ring) {
    free(buf);
    free(ring);
    return PMCP_ENOMEM;
  }
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
      if (!isfinite(buf[i].value))
        (*nonfinite)++;
      else if (cap)
        ring[kept++ % cap] = buf[i];
    }
    if (!next || got == 0)
      break;
    after = next;
  }
  size_t m = kept < cap ? kept : cap;
  for (size_t i = 0; !rc && i < m; i++) {
    const pmcp_point *p = &ring[(kept - m + i) % cap];
    step[i] = p->step;
    value[i] = p->value;
  }
  *n = rc ? 0 : m;
  *finite = kept;
  free(buf);
  free(ring);
  return rc;
}

/* One call of fetch_float_series. */
typedef struct pcall {
  pmcp_call *call;
  pmcp__tracking *tk;
  entries en;
  int ranged;
  int64_t lo, hi;
  size_t max_points;
  const char *stat_name;
  pmcp__mx_hist_stat stat;
  pmcp__trk_bucket *bk; /* max_points */
  int64_t *step;        /* max_points */
  double *value;
  struct pmcp__chart *ch; /* NULL: no chart */
} pcall;

/* An entry as read. */
typedef struct pentry {
  int kind; /* what it holds */
  size_t n, finite, nonfinite;
  uint64_t in_range, nf;
  pmcp__trk_axis ax;
  pmcp__trk_hstat h;
} pentry;
enum { P_NONE, P_POINTS, P_BUCKETS, P_HIST };

/* The float series @p e's part [*a, *b] of the call's step range (*a > *b:
 * none) and how many finite and non-finite points it holds (counted
 * exactly, from block summaries and the straddling points): that decides
 * exact or bucketed. */
static int range_count(pcall *c, const pmcp__mx_series *e, pentry *pe, int64_t *a, int64_t *b)
{
  *a = c->lo > e->step_min ? c->lo : e->step_min;
  *b = c->hi < e->step_max ? c->hi : e->step_max;
  if (*a > *b)
    return 0;
  pmcp__trk_axis one;
  pmcp__trk_axis_make(&one, PMCP__TRK_AX_STEP, *a, *b, 1);
  int rc = pmcp__trk_bucket_scan(c->tk, e->id, &one, 0, *a, *b, c->bk, NULL);
  if (rc)
    return rc;
  pe->in_range = c->bk[0].b.count - c->bk[0].b.nonfinite;
  pe->nf = c->bk[0].b.nonfinite;
  return 0;
}

/* Reads entry @p e: a histogram's statistic, the last max_points points,
 * a step range's points or, past max_points, its buckets. */
static int points_read(pcall *c, const pmcp__mx_series *e, pentry *pe)
{
  memset(pe, 0, sizeof *pe);
  if (!strcmp(e->kind, "histogram")) {
    pe->kind = P_HIST;
    return pmcp__trk_hstat_read(c->tk, e, c->ranged, c->lo, c->hi, c->max_points, &c->stat, &pe->h);
  }
  if (!c->ranged) {
    pe->kind = P_POINTS;
    return exact_points(c->tk, e, INT64_MIN, INT64_MAX, c->max_points, c->step, c->value, &pe->n,
                        &pe->finite, &pe->nonfinite);
  }
  int64_t a, b;
  int rc = range_count(c, e, pe, &a, &b);
  if (rc || a > b)
    return rc; /* nothing in range: the entry's head alone */
  if (pe->in_range <= (uint64_t)c->max_points) {
    pe->kind = P_POINTS;
    return exact_points(c->tk, e, a, b, c->max_points, c->step, c->value, &pe->n, &pe->finite,
                        &pe->nonfinite);
  }
  /* Too wide to return in full: buckets instead, and it says so. */
  pe->kind = P_BUCKETS;
  pmcp__trk_axis_make(&pe->ax, PMCP__TRK_AX_STEP, a, b, c->max_points);
  return pmcp__trk_bucket_scan(c->tk, e->id, &pe->ax, 0, a, b, c->bk, NULL);
}

static int is_bucketed(const pentry *pe)
{
  return pe->kind == P_BUCKETS || (pe->kind == P_HIST && pe->h.bucketed);
}

static void points_write(pcall *c, const pentry *pe, pmcp_json *j)
{
  if (pe->kind == P_HIST) {
    pmcp__trk_hstat_write(j, &pe->h, c->stat_name);
  } else if (pe->kind == P_POINTS) {
    pmcp__trk_kints(j, "step", c->step, pe->n);
    pmcp__trk_knums(j, "value", c->value, pe->n);
    /* finite points before the ones returned (non-finite ones are never
     * returned, and counted apart): the whole series' beyond max_points,
     * or a range's that grew past it between counting and reading */
    if (pe->finite > pe->n)
      pmcp__trk_knum(j, "points_before", (double)(pe->finite - pe->n));
    if (pe->nonfinite)
      pmcp__trk_knum(j, "nonfinite_points", (double)pe->nonfinite);
  } else if (pe->kind == P_BUCKETS) {
    pmcp__trk_kbool(j, "bucketed", 1);
    pmcp__trk_knum(j, "points_in_range", (double)pe->in_range);
    if (pe->nf)
      pmcp__trk_knum(j, "nonfinite_points", (double)pe->nf);
    pmcp__trk_knum(j, "bucket_width_steps", (double)pe->ax.width);
    pmcp__trk_buckets_w(j, "step", c->bk, &pe->ax);
  }
}

#ifdef PMCP_HAVE_CAIRO
/* The chart's line of an entry: its points, or its buckets' means with
 * the min..max band. */
static int points_line(pcall *c, const pmcp__mx_series *e, const pentry *pe)
{
  pmcp__chart_line *ln;
  const pmcp__trk_hstat *h = &pe->h;
  if (pe->kind == P_BUCKETS) {
    ln = pmcp__trk_chart_buckets(c->call, c->tk->rs, c->ch, e, c->bk, &pe->ax);
  } else {
    int hist = pe->kind == P_HIST;
    size_t n = hist ? h->n : pe->n;
    ln = pmcp__trk_chart_line(c->call, c->tk->rs, c->ch, e, n, hist && h->bucketed);
    for (size_t k = 0; ln && k < n; k++) {
      ln->x[k] = (double)(hist ? h->step[k] : c->step[k]);
      ln->y[k] = hist ? h->value[k] : c->value[k];
      if (ln->lo) {
        ln->lo[k] = h->min[k];
        ln->hi[k] = h->max[k];
      }
    }
  }
  if (!ln)
    return PMCP_ENOMEM;
  pmcp__trk_chart_src cs =
      pmcp__trk_chart_src_of(e, c->ranged ? c->lo : INT64_MIN, c->ranged ? c->hi : INT64_MAX);
  return pmcp__trk_chart_gaps(c->tk->rs, &cs, PMCP__TRK_AX_STEP, ln);
}
#endif

/* Entry @p i as the page's item (and the chart's line). */
static int points_item(pcall *c, size_t i, pmcp_json *j)
{
  const pmcp__mx_series *e = c->en.e[i];
  pentry pe;
  int rc = points_read(c, e, &pe);
  if (!rc) {
    pmcp__trk_entry_head_w(j, e);
    points_write(c, &pe, j);
    pmcp_json_object_end(j);
    rc = pmcp_json_error(j);
  }
#ifdef PMCP_HAVE_CAIRO
  if (!rc && c->ch)
    rc = points_line(c, e, &pe);
#endif
  pmcp__trk_hstat_free(&pe.h);
  return rc;
}

/* Whether an entry is bucketed (the answer says so before its entries):
 * only a step range buckets, read until one is. */
static int any_bucketed(pcall *c, int *bucketed)
{
  *bucketed = 0;
  for (size_t i = 0; c->ranged && i < c->en.n && !*bucketed; i++) {
    const pmcp__mx_series *e = c->en.e[i];
    pentry pe;
    int rc;
    if (strcmp(e->kind, "histogram") != 0) {
      /* a float series only needs its count, not its points */
      int64_t a, b;
      memset(&pe, 0, sizeof pe);
      rc = range_count(c, e, &pe, &a, &b);
      *bucketed = !rc && a <= b && pe.in_range > (uint64_t)c->max_points;
    } else {
      rc = points_read(c, e, &pe);
      *bucketed = is_bucketed(&pe);
      pmcp__trk_hstat_free(&pe.h);
    }
    if (rc)
      return rc;
  }
  return 0;
}

static int points_fail(pmcp_call *call, int rc)
{
  return rc == PMCP_ENOMEM ? PMCP_ENOMEM
                           : pmcp__rs_fail(call, PMCP_TERR_STORE, "the points cannot be read");
}

/* Sends the page of @p c's entries. */
static int points_page(pcall *c, const sel *s, size_t hist_skipped)
{
  int bucketed = 0, rc = any_bucketed(c, &bucketed);
  if (rc)
    return points_fail(c->call, rc);
  size_t offset, limit;
  pmcp__trk_window_args(c->call, &offset, &limit);
#ifdef PMCP_HAVE_CAIRO
  if (c->ch)
    pmcp__trk_chart_begin(c->call, PMCP__TRK_AX_STEP,
                          bucketed ? "points (bucketed: means, band min..max)" : "points", c->ch);
#endif
  /* Whole series only: a series never ends early, the ones that do not
   * fit come on the next pages. */
  pmcp__trk_page p;
  pmcp__trk_page_begin(&p, c->call, offset, c->en.n,
                       c->ch ? NULL
                             : "only the first count series fit token_budget, each whole: "
                               "the rest start at offset=next_offset; or lower max_points "
                               "or raise token_budget for more series per call",
                       c->ch);
  pmcp__trk_sel_fields(&p, s);
  if (bucketed)
    pmcp__trk_field_str(&p, "note",
                        "the step range holds more points than max_points: "
                        "entries marked bucketed give per-bucket mean/min/max/count instead "
                        "of points; narrow step_from/step_to for exact points");
  if (hist_skipped)
    pmcp__trk_field_str(&p, "skipped", "histogram series are left out without histogram_statistic");
  pmcp__trk_list(&p, "entries");
  pmcp_json *j;
  for (size_t i = offset; i < c->en.n && i - offset < limit && (j = pmcp__trk_item(&p)); i++) {
    if ((rc = points_item(c, i, j))) {
      pmcp__trk_page_abort(&p);
      return points_fail(c->call, rc);
    }
    pmcp__trk_item_end(&p);
  }
  return pmcp__trk_page_send(&p);
}

static int fetch_float_series(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  sel s;
  int rc = 0;
  if (begin(call, tk, &s, &rc))
    return rc;
  pcall c;
  memset(&c, 0, sizeof c);
  c.call = call;
  c.tk = tk;
  int64_t max_points = 200;
  pmcp_arg_int(call, "max_points", &max_points);
  c.max_points = (size_t)max_points;
  if (pmcp__trk_step_range(call, &c.lo, &c.hi, &c.ranged))
    goto done;
  /* Histogram series read as one statistic per step (hist.c). */
  pmcp_arg_string(call, "histogram_statistic", &c.stat_name, NULL);
  if (c.stat_name && pmcp__mx_hist_stat_parse(c.stat_name, &c.stat)) {
    rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                       "histogram_statistic '%.40s' is not mean, std, min, max, median or "
                       "pNN (a percentile, 0 to 100)",
                       c.stat_name);
    goto done;
  }
  size_t hist_skipped = 0;
  char hist_key[256] = "";
  c.bk = calloc(c.max_points, sizeof *c.bk);
  c.step = calloc(c.max_points, sizeof *c.step);
  c.value = calloc(c.max_points, sizeof *c.value);
  if (!c.bk || !c.step || !c.value ||
      (rc = entries_of(call, &s, c.stat_name != NULL, &c.en, &hist_skipped, hist_key,
                       sizeof hist_key))) {
    rc = PMCP_ENOMEM;
    goto done;
  }
  if (hist_skipped && c.en.n == 0) {
    rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                       "%s is a histogram series: pass histogram_statistic (mean, std, min, "
                       "max, median or pNN) to read it as one value per step, or read whole "
                       "histograms with fetch_histogram_series",
                       hist_key);
    goto done;
  }
#ifdef PMCP_HAVE_CAIRO
  pmcp__chart ch = {0};
  int log_y = 0;
  if (pmcp__chart_wanted(call, &log_y))
    c.ch = &ch;
#endif
  rc = points_page(&c, &s, hist_skipped);
#ifdef PMCP_HAVE_CAIRO
  pmcp__chart_free(&ch);
#endif
done:
  free(c.bk);
  free(c.step);
  free(c.value);
  entries_free(&c.en);
  pmcp__trk_sel_free(&s);
  return rc;
}

/* The label keys of a selection's series, each with its values: the
 * distinct labels (items of the catalog's label objects), first seen
 * first, and the first of each key. */
typedef struct label_rows {
  sel *s;
  const char *run;
  const cJSON **pair, **k;
  size_t n_pair, n_k;
} label_rows;

static int label_fields(pmcp__trk_page *p, void *ud)
{
  label_rows *lr = ud;
  pmcp__trk_sel_fields(p, lr->s);
  return pmcp__trk_field_str(p, "run", lr->run);
}

static int label_row(pmcp_json *j, size_t i, void *ud)
{
  const label_rows *lr = ud;
  const cJSON *k = lr->k[i];
  pmcp_json_object_begin(j);
  pmcp__trk_kstr(j, "label", k->string);
  pmcp_json_key(j, "values");
  pmcp_json_array_begin(j);
  for (size_t n = 0; n < lr->n_pair; n++)
    if (!strcmp(lr->pair[n]->string, k->string))
      pmcp_json_string(j, lr->pair[n]->valuestring);
  pmcp_json_array_end(j);
  return pmcp_json_object_end(j);
}

/* Notes label @p l: a new value of its key, and a new key. */
static void label_note(label_rows *lr, const cJSON *l)
{
  int key_seen = 0;
  for (size_t n = 0; n < lr->n_pair; n++) {
    if (strcmp(lr->pair[n]->string, l->string) != 0)
      continue;
    if (!strcmp(lr->pair[n]->valuestring, l->valuestring))
      return;
    key_seen = 1;
  }
  lr->pair[lr->n_pair++] = l;
  if (!key_seen)
    lr->k[lr->n_k++] = l;
}

static int list_series_label_values(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  sel s;
  int rc = 0;
  if (begin(call, tk, &s, &rc))
    return rc;
  size_t cap = 0;
  for (size_t r = 0; r < s.n_runs; r++)
    for (size_t i = 0; i < s.cat[r].n; i++)
      cap += (size_t)cJSON_GetArraySize(s.cat[r].s[i].labels);
  const char *run = NULL;
  pmcp_arg_string_at(call, "runs", 0, &run);
  label_rows lr = {&s, strncmp(run, "run:", 4) ? run : run + 4, NULL, NULL, 0, 0};
  lr.pair = calloc(cap ? cap : 1, sizeof *lr.pair);
  lr.k = calloc(cap ? cap : 1, sizeof *lr.k);
  for (size_t r = 0; lr.pair && lr.k && r < s.n_runs; r++)
    for (size_t i = 0; i < s.cat[r].n; i++) {
      const pmcp__mx_series *e = &s.cat[r].s[i];
      if (!pmcp__trk_sel_wanted(call, &s, e, NULL))
        continue;
      const cJSON *l;
      cJSON_ArrayForEach(l, e->labels) if (cJSON_IsString(l)) label_note(&lr, l);
    }
  rc = lr.pair && lr.k ? pmcp__trk_send_rows(call, lr.n_k, "labels", label_fields, label_row, &lr)
                       : PMCP_ENOMEM;
  free(lr.pair);
  free(lr.k);
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
