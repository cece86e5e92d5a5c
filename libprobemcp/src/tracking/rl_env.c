/* SPDX-License-Identifier: MIT */
/* A run's RL environments as the RL tools read them (see rl.h): loading
 * the run's series catalog and environment attributes, environments as
 * filter rows, and selecting them by id and filter. */
#include "tracking/rl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/page.h"

/* Most attribute versions one run's environments are read with. */
#define MAX_VERSIONS 200000

/* ---- loading ---------------------------------------------------------------- */

int pmcp__rl_is_rl_scale(const char *s)
{
  return !strcmp(s, "env_step") || !strcmp(s, "episode");
}

int pmcp__rl_id_cmp(const char *a, const char *b)
{
  char *ea, *eb;
  long long x = strtoll(a, &ea, 10), y = strtoll(b, &eb, 10);
  int na = *a && !*ea, nb = *b && !*eb;
  if (na && nb && x != y)
    return x < y ? -1 : 1;
  if (na != nb)
    return na ? -1 : 1;
  return strcmp(a, b);
}

static int env_cmp(const void *a, const void *b)
{
  return pmcp__rl_id_cmp(((const pmcp__rl_env *)a)->id, ((const pmcp__rl_env *)b)->id);
}

pmcp__rl_env *pmcp__rl_find(pmcp__rl_run *r, const char *id)
{
  for (size_t i = 0; id && i < r->n_envs; i++)
    if (!strcmp(r->envs[i].id, id))
      return &r->envs[i];
  return NULL;
}

static pmcp__rl_env *env_get(pmcp__rl_run *r, const char *id)
{
  pmcp__rl_env *e = pmcp__rl_find(r, id);
  if (e)
    return e;
  if (r->n_envs == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 16;
    pmcp__rl_env *n = realloc(r->envs, cap * sizeof *n);
    if (!n)
      return NULL;
    r->envs = n;
    r->cap = cap;
  }
  e = &r->envs[r->n_envs];
  memset(e, 0, sizeof *e);
  e->id = strdup(id);
  e->attrs = cJSON_CreateObject();
  e->types = cJSON_CreateObject();
  e->since = cJSON_CreateObject();
  e->versions = cJSON_CreateArray();
  if (!e->id || !e->attrs || !e->types || !e->since || !e->versions) {
    free(e->id);
    cJSON_Delete(e->attrs);
    cJSON_Delete(e->types);
    cJSON_Delete(e->since);
    cJSON_Delete(e->versions);
    return NULL;
  }
  r->n_envs++;
  return e;
}

static void set_num(cJSON *o, const char *k, double v)
{
  cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
  if (x)
    cJSON_SetNumberValue(x, v);
  else
    cJSON_AddNumberToObject(o, k, v);
}

void pmcp__rl_dispose(pmcp__rl_run *r)
{
  for (size_t i = 0; i < r->n_envs; i++) {
    free(r->envs[i].id);
    cJSON_Delete(r->envs[i].attrs);
    cJSON_Delete(r->envs[i].types);
    cJSON_Delete(r->envs[i].since);
    cJSON_Delete(r->envs[i].versions);
  }
  free(r->envs);
  pmcp__mx_catalog_free(&r->cat);
  memset(r, 0, sizeof *r);
}

/* Reads the run's env-attribute records into its environments. */
static int load_versions(pmcp_call *call, pmcp__rl_run *r, int64_t as_of)
{
  char pref[200], err[300];
  snprintf(pref, sizeof pref, "run:%s", r->id);
  char *after = NULL;
  size_t seen = 0;
  for (;;) {
    pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
    o.kind = "env-attribute";
    o.parent = pref;
    o.after = after;
    o.limit = 1000;
    cJSON *page = NULL;
    int rc = pmcp__rs_list(r->tk->rs, &o, &page, err, sizeof err);
    free(after);
    after = NULL;
    if (rc) {
      pmcp__rs_fail(call, PMCP_TERR_STORE, "the environment attributes of run '%s' cannot be "
                    "read", r->id);
      return 1;
    }
    cJSON *items = cJSON_GetObjectItemCaseSensitive(page, "items");
    cJSON *it;
    while (items && (it = items->child) && seen++ < MAX_VERSIONS) {
      cJSON_DetachItemViaPointer(items, it);
      pmcp__rl_env *e = env_get(r, pmcp__js(it, "env"));
      if (!e) {
        cJSON_Delete(it);
        cJSON_Delete(page);
        return PMCP_ENOMEM;
      }
      cJSON_DeleteItemFromObjectCaseSensitive(it, "env");
      const char *path = pmcp__js(it, "path");
      double ep = pmcp__jn(it, "episode", 0);
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "value");
      /* Items come ordered by env, path, episode: a later version of a
       * path at or before as_of replaces the earlier one. */
      if (ep <= (double)as_of && v) {
        cJSON_DeleteItemFromObjectCaseSensitive(e->attrs, path);
        cJSON_AddItemToObject(e->attrs, path, cJSON_Duplicate(v, 1));
        cJSON_DeleteItemFromObjectCaseSensitive(e->types, path);
        cJSON_AddStringToObject(e->types, path, pmcp__js(it, "type"));
        set_num(e->since, path, ep);
      }
      cJSON_AddItemToArray(e->versions, it);
    }
    if (*pmcp__js(page, "next") && seen < MAX_VERSIONS)
      after = strdup(pmcp__js(page, "next"));
    cJSON_Delete(page);
    if (!after)
      return 0;
  }
}

int pmcp__rl_load_run(pmcp_call *call, pmcp__tracking *tk, const char *run, int check_project,
                      int64_t as_of, pmcp__rl_run *r)
{
  memset(r, 0, sizeof *r);
  r->tk = tk;
  r->latest_episode = r->latest_step = -1;
  char rref[sizeof r->id]; /* run ids are at most 128 characters */
  if (pmcp__trk_run_ref(call, tk, run, rref, sizeof rref))
    return 1;
  int rc = pmcp__mx_catalog_read(call, tk->rs, rref, &r->cat);
  if (rc)
    return rc;
  memcpy(r->id, rref + 4, strlen(rref + 4) + 1);
  if (check_project && (pmcp_arg_has(call, "project") || pmcp_arg_has(call, "workspace"))) {
    char ref[200], err[300];
    snprintf(ref, sizeof ref, "run:%s", r->id);
    cJSON *rec = NULL, *proj = NULL;
    if (pmcp__trk_project(call, tk, &proj))
      return 1;
    int same = pmcp__rs_get(tk->rs, ref, &rec, err, sizeof err) == 0 &&
               !strcmp(pmcp__js(rec, "project"), pmcp__js(proj, "ref"));
    if (!same)
      pmcp__rs_fail(call, PMCP_TERR_NOT_FOUND, "run '%s' not found in project '%s'", r->id,
                    pmcp__js(proj, "ref") + 8);
    cJSON_Delete(rec);
    cJSON_Delete(proj);
    if (!same)
      return 1;
  }
  for (size_t i = 0; i < r->cat.n; i++) {
    const pmcp__mx_series *s = &r->cat.s[i];
    if (!pmcp__rl_is_rl_scale(s->scale))
      continue;
    r->n_rl_series++;
    int ep = !strcmp(s->scale, "episode");
    if (s->count > 0) {
      int64_t *latest = ep ? &r->latest_episode : &r->latest_step;
      if (s->step_max > *latest)
        *latest = s->step_max;
    }
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(s->labels, PMCP__RL_LABEL);
    if (!cJSON_IsString(l))
      continue;
    pmcp__rl_env *e = env_get(r, l->valuestring);
    if (!e)
      return PMCP_ENOMEM;
    e->n_series++;
    if (s->count > 0) {
      const char *k = ep ? "sys/last_episode" : "sys/last_step";
      const cJSON *have = cJSON_GetObjectItemCaseSensitive(e->attrs, k);
      if (!have || have->valuedouble < (double)s->step_max)
        set_num(e->attrs, k, (double)s->step_max);
    }
  }
  rc = load_versions(call, r, as_of);
  if (rc)
    return rc;
  for (size_t i = 0; i < r->n_envs; i++) {
    pmcp__rl_env *e = &r->envs[i];
    cJSON_AddStringToObject(e->attrs, "sys/id", e->id);
    cJSON_AddStringToObject(e->types, "sys/id", "string");
    if (cJSON_GetObjectItemCaseSensitive(e->attrs, "sys/last_episode"))
      cJSON_AddStringToObject(e->types, "sys/last_episode", "int");
    if (cJSON_GetObjectItemCaseSensitive(e->attrs, "sys/last_step"))
      cJSON_AddStringToObject(e->types, "sys/last_step", "int");
  }
  if (r->n_envs > 1)
    qsort(r->envs, r->n_envs, sizeof *r->envs, env_cmp);
  for (size_t i = 0; i < r->n_envs; i++)
    r->envs[i].run = r;
  return 0;
}

int pmcp__rl_load(pmcp_call *call, pmcp__tracking *tk, int64_t as_of, pmcp__rl_run *r)
{
  const char *run = NULL;
  pmcp_arg_string(call, "run", &run, NULL);
  return pmcp__rl_load_run(call, tk, run ? run : "", 1, as_of, r);
}

int pmcp__rl_env_missing(pmcp_call *call, const pmcp__rl_run *r, const char *id)
{
  return pmcp__rs_fail(call, PMCP_TERR_NOT_FOUND,
                       "environment '%.100s' not found in run '%s' (list_rl_environments "
                       "names them)", id, r->id);
}

/* ---- rows ------------------------------------------------------------------- */

static int labels_include(const cJSON *have, const cJSON *want)
{
  const cJSON *l;
  cJSON_ArrayForEach(l, want)
  {
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(have, l->string);
    if (!cJSON_IsString(h) || !cJSON_IsString(l) || strcmp(h->valuestring, l->valuestring))
      return 0;
  }
  return 1;
}

const pmcp__mx_series *pmcp__rl_series(const pmcp__rl_env *env, const char *key,
                                       const char *scale, const cJSON *labels)
{
  const pmcp__mx_catalog *c = &env->run->cat;
  for (size_t i = 0; i < c->n; i++) {
    const pmcp__mx_series *s = &c->s[i];
    if (strcmp(s->key, key) || strcmp(s->scale, scale))
      continue;
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(s->labels, PMCP__RL_LABEL);
    if (!cJSON_IsString(l) || strcmp(l->valuestring, env->id))
      continue;
    if (labels && !labels_include(s->labels, labels))
      continue;
    return s;
  }
  return NULL;
}

static const cJSON *row_attr(void *ud, const char *path)
{
  pmcp__rl_env *e = ud;
  return cJSON_GetObjectItemCaseSensitive(e->attrs, path);
}

static int row_series(void *ud, const char *key, const char *fn, const char *scale,
                      const cJSON *labels, double *out)
{
  pmcp__rl_env *e = ud;
  const char *sc = pmcp__trk_scale(scale);
  const pmcp__mx_series *s = sc ? pmcp__rl_series(e, key, sc, labels) : NULL;
  if (!s)
    return 1;
  if (!fn)
    return 0;
  double v;
  if (!strcmp(fn, "count"))
    v = (double)s->count;
  else if (!s->has_stats || s->count <= s->nonfinite || strcmp(s->kind, "float"))
    return 1;
  else
    v = !strcmp(fn, "last") ? s->last : !strcmp(fn, "first") ? s->first
      : !strcmp(fn, "min") ? s->min : !strcmp(fn, "max") ? s->max : s->mean;
  *out = v;
  return 0;
}

pmcp__filter_row pmcp__rl_row(pmcp__rl_env *env)
{
  pmcp__filter_row row = {row_attr, row_series, env, NULL};
  return row;
}

int pmcp__rl_check_scales(pmcp_call *call, const char *what, const cJSON *j)
{
  if (!j)
    return 0;
  const cJSON *it;
  int i = 0;
  if (cJSON_IsArray(j)) {
    cJSON_ArrayForEach(it, j)
    {
      const cJSON *any = cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, "any_of")
                                            : NULL;
      char sub[64];
      snprintf(sub, sizeof sub, "%s[%d]%s", what, i++, any ? ".any_of" : "");
      if (pmcp__rl_check_scales(call, sub, any ? any : it))
        return 1;
    }
    return 0;
  }
  if (!cJSON_IsObject(j) || !cJSON_GetObjectItemCaseSensitive(j, "series"))
    return 0;
  const cJSON *sc = cJSON_GetObjectItemCaseSensitive(j, "scale");
  if (!sc) {
    pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                  "%s: RL series always need their scale: add \"scale\": \"EPISODE\" "
                  "(per-episode values) or \"ENVIRONMENT_STEP\" (per-step values)", what);
    return 1;
  }
  if (!cJSON_IsString(sc) || !pmcp__trk_scale(sc->valuestring)) {
    pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                  "%s: unknown scale (STEP, ENVIRONMENT_STEP or EPISODE)", what);
    return 1;
  }
  return 0;
}

const char *pmcp__rl_scale_arg(pmcp_call *call)
{
  return pmcp__trk_scale_arg(call, PMCP__TRK_RL_FIRST);
}

int pmcp__rl_select(pmcp_call *call, pmcp__rl_run *r, unsigned char *keep)
{
  size_t n_ids = pmcp_arg_count(call, "environments");
  for (size_t i = 0; i < r->n_envs; i++)
    keep[i] = n_ids == 0;
  for (size_t k = 0; k < n_ids; k++) {
    const char *id = NULL;
    pmcp_arg_string_at(call, "environments", k, &id);
    pmcp__rl_env *e = pmcp__rl_find(r, id);
    if (!e)
      return pmcp__rl_env_missing(call, r, id ? id : ""), 1;
    keep[e - r->envs] = 1;
  }
  const char *fj = NULL;
  if (pmcp_arg_json(call, "filter", &fj) || !fj)
    return 0;
  cJSON *fjson = cJSON_Parse(fj);
  if (pmcp__rl_check_scales(call, "filter", fjson)) {
    cJSON_Delete(fjson);
    return 1;
  }
  char err[300];
  pmcp__filter *f = NULL;
  int rc = pmcp__filter_parse(fjson, &f, err, sizeof err);
  cJSON_Delete(fjson);
  if (rc == PMCP_ENOMEM)
    return rc;
  if (rc)
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "%s", err), 1;
  for (size_t i = 0; i < r->n_envs; i++) {
    if (!keep[i])
      continue;
    pmcp__filter_row row = pmcp__rl_row(&r->envs[i]);
    keep[i] = pmcp__filter_match(f, &row) > 0;
  }
  pmcp__filter_free(f);
  return 0;
}

