/* Metric fetch tools of the tracking toolset: fetch_series_summaries and
 * fetch_float_series_buckets. Series are found through the research
 * metrics tool's catalog reader (pmcp__mx_catalog_read) and bucketed by
 * the store's block summaries (pmcp_store_summary / _summary_time), so
 * the numbers agree with the research `metrics` tool. Entries are one per
 * run and series, with parallel arrays; buckets without a finite value are
 * left out. */
#include "tracking/tracking.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/metrics.h"
#include "research/page.h"

#define MAX_RUNS 50
#define MAX_KEYS 20

typedef struct sel {
  pmcp__mx_catalog *cat; /* one per run */
  size_t n_runs;
  const char *scale;     /* store name */
  cJSON *labels;         /* wanted labels or NULL */
} sel;

static void sel_free(sel *s)
{
  for (size_t i = 0; s->cat && i < s->n_runs; i++)
    pmcp__mx_catalog_free(&s->cat[i]);
  free(s->cat);
  cJSON_Delete(s->labels);
}

/* Reads the arguments shared by the fetch tools and every run's catalog.
 * Returns 0, or 1 after sending an error (a missing run or project is
 * named), or a negative code. */
static int sel_read(pmcp_call *call, pmcp__tracking *tk, sel *s)
{
  memset(s, 0, sizeof *s);
  const char *scale = "STEP";
  pmcp_arg_string(call, "scale", &scale, NULL);
  s->scale = pmcp__trk_scale(scale);
  const char *lj = NULL;
  if (pmcp_arg_json(call, "labels", &lj) == 0 && lj) {
    s->labels = cJSON_Parse(lj);
    const cJSON *l;
    cJSON_ArrayForEach(l, s->labels) if (!cJSON_IsString(l))
    {
      pmcp__rs_fail(call, "invalid_argument", "label \"%s\" must have a string value",
                    l->string);
      return 1;
    }
  }
  cJSON *proj = NULL;
  if ((pmcp_arg_has(call, "project") || pmcp_arg_has(call, "workspace")) &&
      pmcp__trk_project(call, tk, &proj))
    return 1;
  s->n_runs = pmcp_arg_count(call, "runs");
  s->cat = calloc(s->n_runs ? s->n_runs : 1, sizeof *s->cat);
  if (!s->cat) {
    cJSON_Delete(proj);
    return PMCP_ENOMEM;
  }
  for (size_t i = 0; i < s->n_runs; i++) {
    const char *run = NULL;
    pmcp_arg_string_at(call, "runs", i, &run);
    int rc = pmcp__mx_catalog_read(call, tk->rs, run, &s->cat[i]);
    if (rc) {
      s->n_runs = i;
      cJSON_Delete(proj);
      return rc;
    }
    if (proj) {
      char ref[300], err[300];
      snprintf(ref, sizeof ref, "%s", s->cat[i].n ? s->cat[i].s[0].run : "");
      if (!*ref)
        snprintf(ref, sizeof ref, "run:%s", strncmp(run, "run:", 4) ? run : run + 4);
      cJSON *rec = NULL;
      s->n_runs = i + 1;
      if (pmcp__rs_get(tk->rs, ref, &rec, err, sizeof err) == 0 &&
          strcmp(pmcp__js(rec, "project"), pmcp__js(proj, "ref")) != 0) {
        pmcp__rs_fail(call, "not_found", "run '%s' not found in project '%s'", ref + 4,
                      pmcp__js(proj, "ref") + 8);
        cJSON_Delete(rec);
        cJSON_Delete(proj);
        return 1;
      }
      cJSON_Delete(rec);
    }
  }
  s->n_runs = pmcp_arg_count(call, "runs");
  cJSON_Delete(proj);
  return 0;
}

static int labels_match(const cJSON *have, const cJSON *want)
{
  const cJSON *l;
  cJSON_ArrayForEach(l, want)
  {
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(have, l->string);
    if (!cJSON_IsString(h) || strcmp(h->valuestring, l->valuestring) != 0)
      return 0;
  }
  return 1;
}

/* True when catalog entry @p e is one of the asked series. */
static int wanted(pmcp_call *call, const sel *s, const pmcp__mx_series *e, int float_only)
{
  if (strcmp(e->scale, s->scale) != 0 || (float_only && strcmp(e->kind, "float") != 0))
    return 0;
  if (s->labels && !labels_match(e->labels, s->labels))
    return 0;
  size_t n = pmcp_arg_count(call, "series");
  for (size_t k = 0; k < n; k++) {
    const char *key = NULL;
    pmcp_arg_string_at(call, "series", k, &key);
    if (key && strcmp(key, e->key) == 0)
      return 1;
  }
  return 0;
}

static cJSON *entry_head(const pmcp__mx_series *e)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "run", e->run + 4);
  cJSON_AddStringToObject(o, "series", e->key);
  if (cJSON_GetArraySize(e->labels) > 0)
    cJSON_AddItemToObject(o, "labels", cJSON_Duplicate(e->labels, 1));
  return o;
}

/* Sends the page of @p all (consumed) [offset, offset+limit). */
static int window(pmcp_call *call, cJSON *root, const char *name, cJSON *all)
{
  int64_t limit = 100, offset = 0;
  pmcp_arg_int(call, "limit", &limit);
  pmcp_arg_int(call, "offset", &offset);
  size_t total = (size_t)cJSON_GetArraySize(all), i = 0;
  cJSON *page = cJSON_CreateArray();
  while (all->child) {
    cJSON *x = cJSON_DetachItemViaPointer(all, all->child);
    if (i >= (size_t)offset && i < (size_t)(offset + limit))
      cJSON_AddItemToArray(page, x);
    else
      cJSON_Delete(x);
    i++;
  }
  cJSON_Delete(all);
  return pmcp__trk_emit(call, root, name, page, (size_t)offset, total);
}

static int fetch_series_summaries(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  if (pmcp__trk_no_cursor(call))
    return 0;
  sel s;
  int rc = sel_read(call, tk, &s);
  if (rc) {
    sel_free(&s);
    return rc > 0 ? 0 : rc;
  }
  cJSON *all = cJSON_CreateArray();
  for (size_t r = 0; r < s.n_runs; r++)
    for (size_t i = 0; i < s.cat[r].n; i++) {
      const pmcp__mx_series *e = &s.cat[r].s[i];
      if (!wanted(call, &s, e, 0))
        continue;
      cJSON *o = entry_head(e);
      cJSON_AddStringToObject(o, "kind", e->kind);
      cJSON_AddNumberToObject(o, "count", (double)e->count);
      if (e->has_stats && e->count > e->nonfinite && !strcmp(e->kind, "float")) {
        cJSON_AddNumberToObject(o, "first", e->first);
        cJSON_AddNumberToObject(o, "last", e->last);
        cJSON_AddNumberToObject(o, "min", e->min);
        cJSON_AddNumberToObject(o, "max", e->max);
        cJSON_AddNumberToObject(o, "avg", e->mean);
      }
      if (e->count > 0) {
        cJSON_AddNumberToObject(o, "step_min", (double)e->step_min);
        cJSON_AddNumberToObject(o, "step_max", (double)e->step_max);
      }
      if (e->nonfinite)
        cJSON_AddNumberToObject(o, "nonfinite", (double)e->nonfinite);
      cJSON_AddItemToArray(all, o);
    }
  sel_free(&s);
  return window(call, cJSON_CreateObject(), "summaries", all);
}

static int fetch_float_series_buckets(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  if (pmcp__trk_no_cursor(call))
    return 0;
  sel s;
  int rc = sel_read(call, tk, &s);
  if (rc) {
    sel_free(&s);
    return rc > 0 ? 0 : rc;
  }
  const char *axis = "step";
  pmcp_arg_string(call, "axis", &axis, NULL);
  int by_step = !strcmp(axis, "step"), relative = !strcmp(axis, "relative_time");
  int64_t nbk = 50;
  pmcp_arg_int(call, "buckets", &nbk);
  /* The shared axis: one range (and so one bucket width) for every entry;
   * relative time counts from each run's first logged point. */
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  int64_t *start = calloc(s.n_runs ? s.n_runs : 1, sizeof *start);
  if (!start) {
    sel_free(&s);
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
      if (!wanted(call, &s, e, 1) || e->count == 0)
        continue;
      if (!by_step && e->time_min <= 0)
        continue;
      int64_t a = by_step ? e->step_min : relative ? e->time_min - start[r] : e->time_min;
      int64_t b = by_step ? e->step_max : relative ? e->time_max - start[r] : e->time_max;
      if (a < lo)
        lo = a;
      if (b > hi)
        hi = b;
    }
  }
  if (by_step) {
    int64_t f, t;
    if (pmcp_arg_int(call, "step_from", &f) == 0 && pmcp_arg_has(call, "step_from"))
      lo = f;
    if (pmcp_arg_int(call, "step_to", &t) == 0 && pmcp_arg_has(call, "step_to"))
      hi = t;
  }
  cJSON *all = cJSON_CreateArray();
  pmcp_bucket *bk = calloc((size_t)nbk, sizeof *bk);
  if (!bk) {
    free(start);
    sel_free(&s);
    cJSON_Delete(all);
    return PMCP_ENOMEM;
  }
  for (size_t r = 0; r < s.n_runs && lo <= hi && lo != INT64_MAX; r++)
    for (size_t i = 0; i < s.cat[r].n; i++) {
      const pmcp__mx_series *e = &s.cat[r].s[i];
      if (!wanted(call, &s, e, 1) || e->count == 0)
        continue;
      size_t nb = 0;
      int64_t off = relative ? start[r] : 0;
      pthread_mutex_lock(&tk->rs->lock);
      int src = by_step ? pmcp_store_summary(tk->rs->store, tk->rs->tenant, e->id, lo, hi,
                                             (size_t)nbk, bk, &nb)
                        : pmcp_store_summary_time(tk->rs->store, tk->rs->tenant, e->id,
                                                  lo + off, hi + off, (size_t)nbk, bk, &nb);
      pthread_mutex_unlock(&tk->rs->lock);
      if (src) {
        free(bk);
        free(start);
        sel_free(&s);
        cJSON_Delete(all);
        return pmcp__rs_fail(call, "store_error", "the series %s of run %s cannot be read",
                             e->key, e->run + 4);
      }
      cJSON *o = entry_head(e);
      cJSON *x = cJSON_AddArrayToObject(o, by_step ? "step" : relative ? "relative_time_s"
                                                                      : "wall_time");
      cJSON *mean = cJSON_AddArrayToObject(o, "mean");
      cJSON *mn = cJSON_AddArrayToObject(o, "min");
      cJSON *mx = cJSON_AddArrayToObject(o, "max");
      cJSON *cnt = cJSON_AddArrayToObject(o, "count");
      for (size_t b = 0; b < nb; b++) {
        uint64_t finite = bk[b].count - bk[b].nonfinite;
        if (!finite)
          continue; /* missing points are left out */
        if (by_step) {
          cJSON_AddItemToArray(x, cJSON_CreateNumber((double)bk[b].step_min));
        } else if (relative) {
          cJSON_AddItemToArray(x, cJSON_CreateNumber((double)(bk[b].time_min - off) / 1000.0));
        } else {
          char iso[48];
          pmcp__rs_iso(bk[b].time_min, iso, sizeof iso);
          cJSON_AddItemToArray(x, cJSON_CreateString(iso));
        }
        cJSON_AddItemToArray(mean, cJSON_CreateNumber(bk[b].sum / (double)finite));
        cJSON_AddItemToArray(mn, cJSON_CreateNumber(bk[b].min));
        cJSON_AddItemToArray(mx, cJSON_CreateNumber(bk[b].max));
        cJSON_AddItemToArray(cnt, cJSON_CreateNumber((double)bk[b].count));
      }
      cJSON_AddItemToArray(all, o);
    }
  free(bk);
  free(start);
  sel_free(&s);
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "axis", axis);
  if (lo <= hi && lo != INT64_MAX) {
    double width = ((double)hi - (double)lo + 1) / (double)nbk;
    if (!by_step)
      width /= 1000.0; /* seconds */
    cJSON_AddNumberToObject(root, by_step ? "bucket_width_steps" : "bucket_width_s", width);
  }
  return window(call, root, "entries", all);
}

static const char *const scales[] = {"STEP", "ENVIRONMENT_STEP", "EPISODE", NULL};
static const char *const axes[] = {"step", "wall_clock", "relative_time", NULL};

#define COMMON_ARGS                                                                        \
  {"runs", PMCP_T_STRING_ARRAY, 1, "Run ids or refs (run:ID).", 1, 1, 1, MAX_RUNS, NULL,  \
   NULL},                                                                                  \
  {"series", PMCP_T_STRING_ARRAY, 1, "Metric names, e.g. [\"val/loss\"].", 1, 1, 1,      \
   MAX_KEYS, NULL, NULL},                                                                  \
  {"scale", PMCP_T_STRING, 0, "STEP, ENVIRONMENT_STEP or EPISODE.", 0, 0, 0, 0, scales,   \
   "\"STEP\""},                                                                            \
  {"labels", PMCP_T_OBJECT, 0, "Only series whose labels include these values.", 0, 0, 0, \
   0, NULL, NULL},                                                                         \
  PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT,                                          \
  PMCP__TRK_ARG_LIMIT("100"), PMCP__TRK_ARG_OFFSET

static const pmcp_arg_spec summaries_args[] = {COMMON_ARGS};
static const pmcp_arg_spec buckets_args[] = {
  COMMON_ARGS,
  {"axis", PMCP_T_STRING, 0, "step, wall_clock or relative_time (seconds since the run's "
   "first point).", 0, 0, 0, 0, axes, "\"step\""},
  {"buckets", PMCP_T_INTEGER, 0, "Buckets across the shared axis.", 1, 1, 2, 1000, NULL, "50"},
  {"step_from", PMCP_T_INTEGER, 0, "First step (axis step).", 0, 0, 0, 0, NULL, NULL},
  {"step_to", PMCP_T_INTEGER, 0, "Last step (axis step).", 0, 0, 0, 0, NULL, NULL},
};

static int add(pmcp_server *server, pmcp__tracking *tk, const char *name, const char *desc,
               const pmcp_arg_spec *args, size_t n, pmcp_tool_fn fn)
{
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = name;
  d.description = desc;
  d.args = args;
  d.n_args = n;
  d.read_only = PMCP_HINT_TRUE;
  d.destructive = PMCP_HINT_FALSE;
  d.idempotent = PMCP_HINT_TRUE;
  d.open_world = PMCP_HINT_FALSE;
  d.flags = PMCP_TOOL_BUDGETED | PMCP_TOOL_BLOCKING;
  d.handler = fn;
  d.ud = pmcp__trk_retain(tk);
  d.ud_free = pmcp__trk_release;
  return pmcp_server_add_tool(server, &d);
}

int pmcp__trk_add_fetch(pmcp_server *server, pmcp__tracking *tk)
{
  int rc = add(server, tk, "fetch_series_summaries",
               "Summary values (first, last, min, max, avg, count) per run and series, e.g. "
               "the final loss of every worker.",
               summaries_args, sizeof summaries_args / sizeof summaries_args[0],
               fetch_series_summaries);
  if (!rc)
    rc = add(server, tk, "fetch_float_series_buckets",
             "Series compressed into buckets on a shared axis (step, wall clock or time "
             "since start), each with mean, min, max and count: one entry per run and "
             "series with parallel arrays. The right tool for trends and whole-run curves.",
             buckets_args, sizeof buckets_args / sizeof buckets_args[0],
             fetch_float_series_buckets);
  return rc;
}
