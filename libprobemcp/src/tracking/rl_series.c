/* SPDX-License-Identifier: MIT */
/* The RL series tools of the tracking toolset:
 * fetch_rl_env_series_buckets (bucketed series of chosen environments on
 * a shared axis, from the store's block summaries as
 * fetch_float_series_buckets reads them) and aggregate_rl_env_series (one
 * series reduced across environments with the research `metrics` tool's
 * reductions, optionally per group of an environment attribute). RL series
 * always need their scale: `scale` is required and names EPISODE or
 * ENVIRONMENT_STEP. */
#include "tracking/rl.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/page.h"
#include "research/views/views.h"

/* Points read per store call. */
#define CHUNK 16384

/* The common arguments: labels, the step range, the number of buckets.
 * Returns 1 after sending an error (*labels freed then). */
static int range_args(pmcp_call *call, cJSON **labels, int64_t *lo, int64_t *hi,
                      int64_t *buckets)
{
  *labels = NULL;
  *buckets = 50;
  pmcp_arg_int(call, "buckets", buckets);
  if (pmcp__trk_step_range(call, lo, hi, NULL))
    return 1;
  const char *lj = NULL;
  if (pmcp_arg_json(call, "labels", &lj) == 0 && lj) {
    *labels = cJSON_Parse(lj);
    const cJSON *l;
    cJSON_ArrayForEach(l, *labels) if (!cJSON_IsString(l))
    {
      pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "label \"%s\" must have a string value",
                    l->string);
      cJSON_Delete(*labels);
      *labels = NULL;
      return 1;
    }
  }
  return 0;
}

static int labels_include(const cJSON *have, const cJSON *want)
{
  const cJSON *l;
  cJSON_ArrayForEach(l, want)
  {
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(have, l->string);
    if (!cJSON_IsString(h) || strcmp(h->valuestring, l->valuestring))
      return 0;
  }
  return 1;
}

/* A key that no environment logs on @p scale is named: with the scale it
 * is logged on, or as missing. Returns 1 after sending the error. */
static int key_missing(pmcp_call *call, const pmcp__rl_run *r, const char *key,
                       const char *scale)
{
  const char *other = NULL;
  for (size_t i = 0; i < r->cat.n; i++) {
    const pmcp__mx_series *s = &r->cat.s[i];
    if (strcmp(s->key, key))
      continue;
    if (!strcmp(s->scale, scale))
      return 0;
    other = s->scale;
  }
  if (other)
    pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                  "%s is logged on the %s scale in run '%s', not on %s: pass scale=%s", key,
                  pmcp__trk_scale_name(other), r->id, pmcp__trk_scale_name(scale),
                  pmcp__trk_scale_name(other));
  else
    pmcp__rs_fail(call, PMCP_TERR_NOT_FOUND, "run '%s' has no series '%s' (list_rl_metrics names "
                  "its RL metrics)", r->id, key);
  return 1;
}

/* True when @p s is environment @p env's series @p key on @p scale (a
 * float series) whose labels include @p labels. */
static int env_series(const pmcp__mx_series *s, const char *env, const char *key, const char *scale,
                      const cJSON *labels)
{
  const cJSON *l = cJSON_GetObjectItemCaseSensitive(s->labels, PMCP__RL_LABEL);
  return !strcmp(s->key, key) && !strcmp(s->scale, scale) && !strcmp(s->kind, "float") &&
         cJSON_IsString(l) && !strcmp(l->valuestring, env) &&
         (!labels || labels_include(s->labels, labels));
}

/* Opens an entry: {"environment", "series", "labels"? (besides env)}. */
static int entry_head(pmcp_json *j, const pmcp__rl_env *e, const pmcp__mx_series *s)
{
  pmcp_json_object_begin(j);
  pmcp__trk_kstr(j, "environment", e->id);
  pmcp__trk_kstr(j, "series", s->key);
  if (cJSON_GetArraySize(s->labels) > 1) {
    pmcp_json_key(j, "labels");
    pmcp_json_object_begin(j);
    const cJSON *l;
    cJSON_ArrayForEach(l, s->labels) if (strcmp(l->string, PMCP__RL_LABEL))
        pmcp__trk_kvalue(j, l->string, l);
    pmcp_json_object_end(j);
  }
  return pmcp_json_error(j);
}

static const char *axis_name(const char *scale)
{
  return !strcmp(scale, "episode") ? "episode" : "step";
}

/* ---- fetch_rl_env_series_buckets ------------------------------------------- */

/* fetch_rl_env_series_buckets' entries: the chosen environments' series
 * with points, in order (environment, asked key, catalog). */
typedef struct entries {
  pmcp_call *call;
  pmcp__tracking *tk;
  const pmcp__rl_run *r;
  const unsigned char *keep;
  const char *scale;
  const cJSON *labels;
  /* the range and the entries counted (first pass) */
  int64_t from, to, lo, hi;
  size_t total;
  /* the page (second pass): entry i of it, the first one not read */
  pmcp__trk_axis ax;
  pmcp__trk_bucket *bk;
  pmcp__trk_page p;
  size_t i, offset, limit;
  const pmcp__rl_env *bad_env;
  const pmcp__mx_series *bad;
} entries;

/* Visits each entry with @p fn until it returns nonzero (returned). */
static int each_entry(entries *w,
                      int (*fn)(entries *w, const pmcp__rl_env *e, const pmcp__mx_series *s))
{
  size_t nk = pmcp_arg_count(w->call, "series");
  for (size_t i = 0; i < w->r->n_envs; i++) {
    if (!w->keep[i])
      continue;
    const pmcp__rl_env *e = &w->r->envs[i];
    for (size_t k = 0; k < nk; k++) {
      const char *key = NULL;
      pmcp_arg_string_at(w->call, "series", k, &key);
      for (size_t c = 0; c < w->r->cat.n; c++) {
        const pmcp__mx_series *s = &w->r->cat.s[c];
        int rc = env_series(s, e->id, key, w->scale, w->labels) && s->count ? fn(w, e, s) : 0;
        if (rc)
          return rc;
      }
    }
  }
  return 0;
}

/* First pass: the steps of the entries within [from, to], and their count. */
static int count_entry(entries *w, const pmcp__rl_env *e, const pmcp__mx_series *s)
{
  (void)e;
  int64_t a = s->step_min > w->from ? s->step_min : w->from;
  int64_t b = s->step_max < w->to ? s->step_max : w->to;
  w->lo = a <= b && a < w->lo ? a : w->lo;
  w->hi = a <= b && b > w->hi ? b : w->hi;
  w->total++;
  return 0;
}

/* Stops each_entry: the page is full. */
#define FULL 1
/* Stops each_entry: a series cannot be read (w->bad). */
#define UNREADABLE 2

/* Second pass: the entries of the page, read as they are written. */
static int page_entry(entries *w, const pmcp__rl_env *e, const pmcp__mx_series *s)
{
  size_t i = w->i++;
  if (i < w->offset)
    return 0;
  pmcp_json *j = i - w->offset < w->limit ? pmcp__trk_item(&w->p) : NULL;
  if (!j)
    return FULL;
  if (pmcp__trk_bucket_scan(w->tk, s->id, &w->ax, 0, w->lo, w->hi, w->bk, NULL)) {
    w->bad_env = e;
    w->bad = s;
    return UNREADABLE;
  }
  entry_head(j, e, s);
  pmcp__trk_buckets_w(j, axis_name(w->scale), w->bk, &w->ax);
  pmcp_json_object_end(j);
  return pmcp__trk_item_end(&w->p);
}

/* Sends the page of entries over the shared axis w->ax. */
static int send_entries(entries *w)
{
  pmcp__trk_page *p = &w->p;
  pmcp__trk_window_args(w->call, &w->offset, &w->limit);
  pmcp__trk_page_begin(p, w->call, w->offset, w->total, NULL, NULL);
  pmcp__trk_field_str(p, "run", w->r->id);
  pmcp__trk_field_str(p, "scale", pmcp__trk_scale_name(w->scale));
  pmcp__trk_field_str(p, "axis", axis_name(w->scale));
  if (w->ax.n) {
    pmcp__trk_field_num(p, "bucket_width", (double)w->ax.width);
    pmcp__trk_edges_fields(p, &w->ax);
  }
  pmcp__trk_list(p, "entries");
  int rc = w->total && !p->rc ? each_entry(w, page_entry) : 0;
  if (rc == UNREADABLE) {
    pmcp__trk_page_abort(p);
    return pmcp__rs_fail(w->call, PMCP_TERR_STORE, "the series %s of environment %s cannot be read",
                         w->bad->key, w->bad_env->id);
  }
  if (rc < 0) {
    pmcp__trk_page_abort(p);
    return rc;
  }
  return pmcp__trk_page_send(p);
}

int pmcp__rl_fetch_buckets(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  const char *scale = pmcp__rl_scale_arg(call);
  cJSON *labels = NULL;
  int64_t from, to, nbk;
  if (range_args(call, &labels, &from, &to, &nbk))
    return 0;
  pmcp__rl_run r;
  unsigned char *keep = NULL;
  entries w;
  memset(&w, 0, sizeof w);
  int rc = pmcp__rl_load(call, tk, INT64_MAX, &r);
  if (rc)
    goto out;
  keep = calloc(r.n_envs ? r.n_envs : 1, 1);
  w.bk = calloc((size_t)nbk, sizeof *w.bk);
  if (!keep || !w.bk) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  if ((rc = pmcp__rl_select(call, &r, keep)))
    goto out;
  size_t nk = pmcp_arg_count(call, "series");
  for (size_t k = 0; k < nk; k++) {
    const char *key = NULL;
    pmcp_arg_string_at(call, "series", k, &key);
    if ((rc = key_missing(call, &r, key, scale)))
      goto out;
  }
  /* The shared axis: one range (so one bucket width) for every entry;
   * explicit ends as given, open ones from the data. */
  w.call = call;
  w.tk = tk;
  w.r = &r;
  w.keep = keep;
  w.scale = scale;
  w.labels = labels;
  w.from = from;
  w.to = to;
  w.lo = INT64_MAX;
  w.hi = INT64_MIN;
  each_entry(&w, count_entry);
  w.lo = pmcp_arg_has(call, "step_from") ? from : w.lo;
  w.hi = pmcp_arg_has(call, "step_to") ? to : w.hi;
  pmcp__trk_axis_make(&w.ax, PMCP__TRK_AX_STEP, w.lo, w.hi, (size_t)nbk);
  if (!w.ax.n)
    w.total = 0;
  rc = send_entries(&w);
out:
  if (rc > 0)
    rc = 0;
  cJSON_Delete(labels);
  free(keep);
  free(w.bk);
  pmcp__rl_dispose(&r);
  return rc;
}

/* ---- aggregate_rl_env_series --------------------------------------------------- */

typedef struct member {
  const pmcp__rl_env *env;
  const pmcp__mx_series *s;
  pmcp__fsum *sum;       /* without overflow on the way */
  uint32_t *n;
  size_t group;
} member;

/* Bins the finite points of @p m in [lo, lo + nb * width) by step. */
static int bin_points(pmcp_call *call, pmcp__tracking *tk, member *m, int64_t lo, int64_t hi,
                      int64_t width, pmcp_point *pts)
{
  int64_t after = 0;
  for (;;) {
    size_t got = 0;
    int64_t next = 0;
    pthread_mutex_lock(tk->rs->lock);
    int rc = pmcp_store_points(tk->rs->store, tk->rs->tenant, m->s->id, lo, hi, after, pts,
                               CHUNK, &got, &next);
    pthread_mutex_unlock(tk->rs->lock);
    if (rc)
      return rc;
    for (size_t i = 0; i < got; i++) {
      if (!isfinite(pts[i].value) || pts[i].step < lo || pts[i].step > hi)
        continue;
      size_t b = (size_t)((uint64_t)(pts[i].step - lo) / (uint64_t)width);
      pmcp__fsum_add(&m->sum[b], pts[i].value);
      m->n[b]++;
    }
    if (!next || !got)
      return 0;
    after = next;
    if (pmcp_call_cancelled(call))
      return PMCP_ECANCELLED;
  }
}

/* One aggregate_rl_env_series call: its members (one series per chosen
 * environment), their groups, the shared buckets. */
typedef struct agg {
  pmcp_call *call;
  const pmcp__rl_run *r;
  const char *key, *scale, *fn, *group_by;
  const cJSON *labels;
  int how;
  member *mem;
  size_t nm;
  char **gkeys;        /* a group's value as JSON text: its identity */
  const cJSON **gvals; /* its value as shown (NULL: none) */
  size_t ng;
  int64_t lo, hi, width;
  size_t nb;
  double *vals; /* room for a reduction over every member */
  /* a group's buckets with values: bucket, reduction, environments */
  size_t *bx, *bn;
  double *by;
} agg;

/* Picks each chosen environment's series with points, noting its group:
 * the JSON of the attribute's latest value (null when the environment has
 * none), groups in the order they first appear. Returns 0, 1 after
 * sending an error, or a negative code. */
static int pick_members(agg *a, const unsigned char *keep)
{
  a->lo = INT64_MAX;
  a->hi = INT64_MIN;
  for (size_t i = 0; i < a->r->n_envs; i++) {
    if (!keep[i])
      continue;
    const pmcp__rl_env *e = &a->r->envs[i];
    const pmcp__mx_series *found = NULL;
    for (size_t c = 0; c < a->r->cat.n; c++) {
      const pmcp__mx_series *s = &a->r->cat.s[c];
      if (!env_series(s, e->id, a->key, a->scale, a->labels))
        continue;
      if (found) {
        int rc = pmcp__rs_fail(a->call, PMCP_TERR_INVALID_ARGUMENT,
                               "environment %s has several %s series (other labels): pick one "
                               "with labels",
                               e->id, a->key);
        return rc ? rc : 1;
      }
      found = s;
    }
    if (!found || found->count == 0)
      continue;
    member *m = &a->mem[a->nm];
    m->env = e;
    m->s = found;
    a->lo = found->step_min < a->lo ? found->step_min : a->lo;
    a->hi = found->step_max > a->hi ? found->step_max : a->hi;
    const char *gk = "null";
    char *printed = NULL;
    const cJSON *v = a->group_by ? cJSON_GetObjectItemCaseSensitive(e->attrs, a->group_by) : NULL;
    if (v && (printed = cJSON_PrintUnformatted(v)))
      gk = printed;
    size_t g = 0;
    while (g < a->ng && strcmp(a->gkeys[g], gk))
      g++;
    if (g == a->ng) {
      a->gkeys[g] = strdup(gk);
      a->gvals[g] = v;
      if (!a->gkeys[g]) {
        cJSON_free(printed);
        return PMCP_ENOMEM;
      }
      a->ng++;
    }
    cJSON_free(printed);
    m->group = g;
    a->nm++;
  }
  return 0;
}

/* A group: its value, environments, and per bucket the reduction of its
 * members' bucket means. */
static int group_row(pmcp_json *j, size_t g, void *ud)
{
  agg *a = ud;
  size_t n = 0;
  for (size_t b = 0; b < a->nb; b++) {
    size_t k = 0;
    for (size_t m = 0; m < a->nm; m++)
      if (a->mem[m].group == g && a->mem[m].n[b])
        a->vals[k++] =
            pmcp__fsum_mean(&a->mem[m].sum[b], (double)a->mem[m].n[b], -DBL_MAX, DBL_MAX);
    if (!k)
      continue; /* no environment logged in this bucket: left out */
    a->bx[n] = b;
    a->by[n] = pmcp__mx_reduce(a->vals, k, a->how);
    a->bn[n++] = k;
  }
  pmcp_json_object_begin(j);
  if (a->group_by) {
    pmcp_json_key(j, "group");
    pmcp_json_object_begin(j);
    pmcp_json_key(j, a->group_by);
    if (a->gvals[g])
      pmcp__vw_value(j, a->gvals[g], 0);
    else
      pmcp_json_null(j);
    pmcp_json_object_end(j);
  }
  pmcp_json_key(j, "environments");
  pmcp_json_array_begin(j);
  for (size_t m = 0; m < a->nm; m++)
    if (a->mem[m].group == g)
      pmcp_json_string(j, a->mem[m].env->id);
  pmcp_json_array_end(j);
  /* parallel arrays: the buckets' first steps, the reductions, the counts */
  for (int arr = 0; arr < 3; arr++) {
    pmcp_json_key(j, arr == 0 ? axis_name(a->scale) : arr == 1 ? a->fn : "n_environments");
    pmcp_json_array_begin(j);
    for (size_t i = 0; i < n; i++)
      pmcp__rs_number(j, arr == 0   ? (double)(a->lo + (int64_t)a->bx[i] * a->width)
                         : arr == 1 ? a->by[i]
                                    : (double)a->bn[i]);
    pmcp_json_array_end(j);
  }
  return pmcp_json_object_end(j);
}

static int agg_fields(pmcp__trk_page *p, void *ud)
{
  const agg *a = ud;
  pmcp__trk_field_str(p, "run", a->r->id);
  pmcp__trk_field_str(p, "series", a->key);
  pmcp__trk_field_str(p, "scale", pmcp__trk_scale_name(a->scale));
  pmcp__trk_field_str(p, "function", a->fn);
  pmcp__trk_field_str(p, "axis", axis_name(a->scale));
  if (a->nb)
    pmcp__trk_field_num(p, "bucket_width", (double)a->width);
  pmcp__trk_field_num(p, "environment_count", (double)a->nm);
  if (a->group_by)
    pmcp__trk_field_str(p, "group_by", a->group_by);
  return p->rc;
}

/* Reads each member's points into the shared buckets. Returns 0, 1 after
 * sending an error, or a negative code. */
static int bin_members(agg *a, pmcp__tracking *tk)
{
  pmcp_point *pts = malloc(CHUNK * sizeof *pts);
  int rc = pts ? 0 : PMCP_ENOMEM;
  for (size_t m = 0; !rc && m < a->nm && a->nb; m++) {
    member *mm = &a->mem[m];
    mm->sum = calloc(a->nb, sizeof *mm->sum);
    mm->n = calloc(a->nb, sizeof *mm->n);
    if (!mm->sum || !mm->n) {
      rc = PMCP_ENOMEM;
      break;
    }
    rc = bin_points(a->call, tk, mm, a->lo, a->hi, a->width, pts);
    if (rc && rc != PMCP_ECANCELLED && rc != PMCP_ENOMEM) {
      rc = pmcp__rs_fail(a->call, PMCP_TERR_STORE,
                         "the points of %s in environment %s cannot be read", a->key, mm->env->id);
      rc = rc ? rc : 1;
    }
  }
  free(pts);
  return rc;
}

int pmcp__rl_aggregate(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  agg a;
  memset(&a, 0, sizeof a);
  a.call = call;
  a.scale = pmcp__rl_scale_arg(call);
  a.fn = "avg";
  pmcp_arg_string(call, "series", &a.key, NULL);
  pmcp_arg_string(call, "function", &a.fn, NULL);
  if (pmcp_arg_has(call, "group_by"))
    pmcp_arg_string(call, "group_by", &a.group_by, NULL);
  a.how = pmcp__mx_reduce_kind(a.fn);
  cJSON *labels = NULL;
  int64_t from, to, nbk;
  if (range_args(call, &labels, &from, &to, &nbk))
    return 0;
  a.labels = labels;
  pmcp__rl_run r;
  a.r = &r;
  unsigned char *keep = NULL;
  int rc = pmcp__rl_load(call, tk, INT64_MAX, &r);
  if (rc)
    goto out;
  size_t ne = r.n_envs ? r.n_envs : 1;
  keep = calloc(ne, 1);
  a.mem = calloc(ne, sizeof *a.mem);
  a.gkeys = calloc(ne, sizeof *a.gkeys);
  a.gvals = calloc(ne, sizeof *a.gvals);
  a.vals = calloc(ne, sizeof *a.vals);
  if (!keep || !a.mem || !a.gkeys || !a.gvals || !a.vals) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  if ((rc = pmcp__rl_select(call, &r, keep)) || (rc = key_missing(call, &r, a.key, a.scale)) ||
      (rc = pick_members(&a, keep)))
    goto out;
  a.lo = from > a.lo ? from : a.lo;
  a.hi = to < a.hi ? to : a.hi;
  a.width = 1;
  if (a.nm && a.lo <= a.hi) {
    uint64_t span = (uint64_t)a.hi - (uint64_t)a.lo + 1;
    a.width = (int64_t)((span + (uint64_t)nbk - 1) / (uint64_t)nbk);
    if (a.width < 1)
      a.width = 1;
    a.nb = (size_t)(((uint64_t)a.hi - (uint64_t)a.lo) / (uint64_t)a.width + 1);
  }
  if ((rc = bin_members(&a, tk)))
    goto out;
  a.bx = calloc(a.nb + 1, sizeof *a.bx);
  a.bn = calloc(a.nb + 1, sizeof *a.bn);
  a.by = calloc(a.nb + 1, sizeof *a.by);
  rc = a.bx && a.bn && a.by ? pmcp__trk_send_rows(call, a.ng, "groups", agg_fields, group_row, &a)
                            : PMCP_ENOMEM;
out:
  if (rc > 0)
    rc = 0;
  cJSON_Delete(labels);
  for (size_t m = 0; a.mem && m < a.nm; m++) {
    free(a.mem[m].sum);
    free(a.mem[m].n);
  }
  for (size_t g = 0; a.gkeys && g < a.ng; g++)
    free(a.gkeys[g]);
  free(a.gkeys);
  free(a.gvals);
  free(a.mem);
  free(keep);
  free(a.vals);
  free(a.bx);
  free(a.bn);
  free(a.by);
  pmcp__rl_dispose(&r);
  return rc;
}
