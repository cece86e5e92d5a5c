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

/* Points read per store call. */
#define CHUNK 16384

/* The common arguments: labels, the step range. Returns 1 after sending
 * an error. */
static int range_args(pmcp_call *call, cJSON **labels, int64_t *lo, int64_t *hi)
{
  *labels = NULL;
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

/* {"environment", "series", "labels"? (besides env)} */
static cJSON *entry_head(const pmcp__rl_env *e, const pmcp__mx_series *s)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "environment", e->id);
  cJSON_AddStringToObject(o, "series", s->key);
  if (cJSON_GetArraySize(s->labels) > 1) {
    cJSON *l = cJSON_Duplicate(s->labels, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(l, PMCP__RL_LABEL);
    cJSON_AddItemToObject(o, "labels", l);
  }
  return o;
}

static const char *axis_name(const char *scale)
{
  return !strcmp(scale, "episode") ? "episode" : "step";
}

/* ---- fetch_rl_env_series_buckets ------------------------------------------- */

int pmcp__rl_fetch_buckets(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  const char *scale = pmcp__rl_scale_arg(call);
  cJSON *labels = NULL;
  int64_t from, to, nbk = 50;
  pmcp_arg_int(call, "buckets", &nbk);
  if (range_args(call, &labels, &from, &to)) {
    cJSON_Delete(labels);
    return 0;
  }
  pmcp__rl_run r;
  unsigned char *keep = NULL;
  pmcp__trk_bucket *bk = NULL;
  cJSON *all = NULL;
  int rc = pmcp__rl_load(call, tk, INT64_MAX, &r);
  if (rc)
    goto out;
  keep = calloc(r.n_envs ? r.n_envs : 1, 1);
  bk = calloc((size_t)nbk, sizeof *bk);
  if (!keep || !bk) {
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
  /* The shared axis: one range (so one bucket width) for every entry. */
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  pmcp__trk_axis ax = {0};
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      /* explicit ends as given; open ones from the data */
      lo = pmcp_arg_has(call, "step_from") ? from : lo;
      hi = pmcp_arg_has(call, "step_to") ? to : hi;
      pmcp__trk_axis_make(&ax, PMCP__TRK_AX_STEP, lo, hi, (size_t)nbk);
      all = cJSON_CreateArray();
    }
    for (size_t i = 0; i < r.n_envs; i++) {
      if (!keep[i])
        continue;
      const pmcp__rl_env *e = &r.envs[i];
      for (size_t k = 0; k < nk; k++) {
        const char *key = NULL;
        pmcp_arg_string_at(call, "series", k, &key);
        for (size_t c = 0; c < r.cat.n; c++) {
          const pmcp__mx_series *s = &r.cat.s[c];
          const cJSON *env = cJSON_GetObjectItemCaseSensitive(s->labels, PMCP__RL_LABEL);
          if (strcmp(s->key, key) || strcmp(s->scale, scale) || strcmp(s->kind, "float") ||
              !cJSON_IsString(env) || strcmp(env->valuestring, e->id) || s->count == 0 ||
              (labels && !labels_include(s->labels, labels)))
            continue;
          if (pass == 0) {
            int64_t a = s->step_min > from ? s->step_min : from;
            int64_t b = s->step_max < to ? s->step_max : to;
            lo = a <= b && a < lo ? a : lo;
            hi = a <= b && b > hi ? b : hi;
            continue;
          }
          if (!ax.n)
            continue;
          int src = pmcp__trk_bucket_scan(tk, s->id, &ax, 0, lo, hi, bk, NULL);
          if (src) {
            rc = pmcp__rs_fail(call, PMCP_TERR_STORE, "the series %s of environment %s cannot "
                               "be read", s->key, e->id);
            goto out;
          }
          cJSON *o = entry_head(e, s);
          pmcp__trk_add_buckets(o, axis_name(scale), bk, &ax);
          cJSON_AddItemToArray(all, o);
        }
      }
    }
  }
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "run", r.id);
  cJSON_AddStringToObject(root, "scale", pmcp__trk_scale_name(scale));
  cJSON_AddStringToObject(root, "axis", axis_name(scale));
  if (ax.n) {
    cJSON_AddNumberToObject(root, "bucket_width", (double)ax.width);
    pmcp__trk_add_edges(root, &ax);
  }
  rc = pmcp__trk_window(call, root, "entries", all);
  all = NULL;
out:
  if (rc > 0)
    rc = 0;
  cJSON_Delete(all);
  cJSON_Delete(labels);
  free(keep);
  free(bk);
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

int pmcp__rl_aggregate(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  const char *scale = pmcp__rl_scale_arg(call);
  const char *key = NULL, *fn = "avg", *group_by = NULL;
  pmcp_arg_string(call, "series", &key, NULL);
  pmcp_arg_string(call, "function", &fn, NULL);
  if (pmcp_arg_has(call, "group_by"))
    pmcp_arg_string(call, "group_by", &group_by, NULL);
  int how = pmcp__mx_reduce_kind(fn);
  cJSON *labels = NULL;
  int64_t from, to, nbk = 50;
  pmcp_arg_int(call, "buckets", &nbk);
  if (range_args(call, &labels, &from, &to)) {
    cJSON_Delete(labels);
    return 0;
  }
  pmcp__rl_run r;
  unsigned char *keep = NULL;
  member *mem = NULL;
  size_t nm = 0, ng = 0, nb = 0;
  char **gkeys = NULL;
  double *vals = NULL;
  pmcp_point *pts = NULL;
  cJSON *groups = NULL;
  int rc = pmcp__rl_load(call, tk, INT64_MAX, &r);
  if (rc)
    goto out;
  keep = calloc(r.n_envs ? r.n_envs : 1, 1);
  mem = calloc(r.n_envs ? r.n_envs : 1, sizeof *mem);
  gkeys = calloc(r.n_envs ? r.n_envs : 1, sizeof *gkeys);
  vals = calloc(r.n_envs ? r.n_envs : 1, sizeof *vals);
  if (!keep || !mem || !gkeys || !vals) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  if ((rc = pmcp__rl_select(call, &r, keep)) || (rc = key_missing(call, &r, key, scale)))
    goto out;
  /* One series per environment: the members. */
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t i = 0; i < r.n_envs; i++) {
    if (!keep[i])
      continue;
    const pmcp__mx_series *found = NULL;
    for (size_t c = 0; c < r.cat.n; c++) {
      const pmcp__mx_series *s = &r.cat.s[c];
      const cJSON *env = cJSON_GetObjectItemCaseSensitive(s->labels, PMCP__RL_LABEL);
      if (strcmp(s->key, key) || strcmp(s->scale, scale) || strcmp(s->kind, "float") ||
          !cJSON_IsString(env) || strcmp(env->valuestring, r.envs[i].id) ||
          (labels && !labels_include(s->labels, labels)))
        continue;
      if (found) {
        rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                           "environment %s has several %s series (other labels): pick one "
                           "with labels", r.envs[i].id, key);
        goto out;
      }
      found = s;
    }
    if (!found || found->count == 0)
      continue;
    mem[nm].env = &r.envs[i];
    mem[nm].s = found;
    lo = found->step_min < lo ? found->step_min : lo;
    hi = found->step_max > hi ? found->step_max : hi;
    /* Its group: the JSON of the attribute's latest value (null when the
     * environment has none), groups in the order they first appear. */
    const char *gk = "null";
    char *printed = NULL;
    if (group_by) {
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(r.envs[i].attrs, group_by);
      if (v && (printed = cJSON_PrintUnformatted(v)))
        gk = printed;
    }
    size_t g = 0;
    while (g < ng && strcmp(gkeys[g], gk))
      g++;
    if (g == ng) {
      gkeys[ng] = strdup(gk);
      if (!gkeys[ng]) {
        cJSON_free(printed);
        rc = PMCP_ENOMEM;
        goto out;
      }
      ng++;
    }
    cJSON_free(printed);
    mem[nm++].group = g;
  }
  lo = from > lo ? from : lo;
  hi = to < hi ? to : hi;
  int64_t width = 1;
  if (nm && lo <= hi) {
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
    width = (int64_t)((span + (uint64_t)nbk - 1) / (uint64_t)nbk);
    if (width < 1)
      width = 1;
    nb = (size_t)(((uint64_t)hi - (uint64_t)lo) / (uint64_t)width + 1);
  }
  pts = malloc(CHUNK * sizeof *pts);
  if (!pts) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  for (size_t m = 0; m < nm && nb; m++) {
    mem[m].sum = calloc(nb, sizeof *mem[m].sum);
    mem[m].n = calloc(nb, sizeof *mem[m].n);
    if (!mem[m].sum || !mem[m].n) {
      rc = PMCP_ENOMEM;
      goto out;
    }
    rc = bin_points(call, tk, &mem[m], lo, hi, width, pts);
    if (rc == PMCP_ECANCELLED || rc == PMCP_ENOMEM)
      goto out;
    if (rc) {
      rc = pmcp__rs_fail(call, PMCP_TERR_STORE, "the points of %s in environment %s cannot be "
                         "read", key, mem[m].env->id);
      goto out;
    }
  }
  /* Per group and bucket: the reduction of the members' bucket means. */
  groups = cJSON_CreateArray();
  const char *xname = axis_name(scale);
  for (size_t g = 0; g < ng; g++) {
    cJSON *o = cJSON_CreateObject();
    if (group_by) {
      cJSON *gv = cJSON_AddObjectToObject(o, "group");
      cJSON_AddItemToObject(gv, group_by, cJSON_Parse(gkeys[g]));
    }
    cJSON *ids = cJSON_AddArrayToObject(o, "environments");
    for (size_t m = 0; m < nm; m++)
      if (mem[m].group == g)
        cJSON_AddItemToArray(ids, cJSON_CreateString(mem[m].env->id));
    cJSON *x = cJSON_AddArrayToObject(o, xname);
    cJSON *y = cJSON_AddArrayToObject(o, fn);
    cJSON *cnt = cJSON_AddArrayToObject(o, "n_environments");
    for (size_t b = 0; b < nb; b++) {
      size_t k = 0;
      for (size_t m = 0; m < nm; m++)
        if (mem[m].group == g && mem[m].n[b])
          vals[k++] = pmcp__fsum_mean(&mem[m].sum[b], (double)mem[m].n[b], -DBL_MAX, DBL_MAX);
      if (!k)
        continue; /* no environment logged in this bucket: left out */
      cJSON_AddItemToArray(x, cJSON_CreateNumber((double)(lo + (int64_t)b * width)));
      cJSON_AddItemToArray(y, cJSON_CreateNumber(pmcp__mx_reduce(vals, k, how)));
      cJSON_AddItemToArray(cnt, cJSON_CreateNumber((double)k));
    }
    cJSON_AddItemToArray(groups, o);
  }
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "run", r.id);
  cJSON_AddStringToObject(root, "series", key);
  cJSON_AddStringToObject(root, "scale", pmcp__trk_scale_name(scale));
  cJSON_AddStringToObject(root, "function", fn);
  cJSON_AddStringToObject(root, "axis", xname);
  if (nb)
    cJSON_AddNumberToObject(root, "bucket_width", (double)width);
  cJSON_AddNumberToObject(root, "environment_count", (double)nm);
  if (group_by)
    cJSON_AddStringToObject(root, "group_by", group_by);
  rc = pmcp__trk_window(call, root, "groups", groups);
  groups = NULL;
out:
  if (rc > 0)
    rc = 0;
  cJSON_Delete(groups);
  cJSON_Delete(labels);
  for (size_t m = 0; mem && m < nm; m++) {
    free(mem[m].sum);
    free(mem[m].n);
  }
  for (size_t g = 0; gkeys && g < ng; g++)
    free(gkeys[g]);
  free(gkeys);
  free(mem);
  free(keep);
  free(vals);
  free(pts);
  pmcp__rl_dispose(&r);
  return rc;
}
