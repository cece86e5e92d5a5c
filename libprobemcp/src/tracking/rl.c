/* SPDX-License-Identifier: MIT */
/* The RL tools of the tracking toolset (the environment model is in
 * rl_env.c, the series tools in rl_series.c): get_rl_info,
 * list_rl_environments, list_rl_metrics, list_rl_attribute_definitions
 * and get_rl_environment_attributes, and the registration of every RL
 * tool. */
#include "tracking/rl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/page.h"

#define MAX_COLUMNS 30

/* ---- get_rl_info ------------------------------------------------------------ */

static int get_rl_info(pmcp_call *call, void *ud)
{
  pmcp__rl_run r;
  int rc = pmcp__rl_load(call, ud, INT64_MAX, &r);
  if (rc) {
    pmcp__rl_dispose(&r);
    return rc < 0 ? rc : 0;
  }
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "run", r.id);
  cJSON_AddNumberToObject(o, "count", 1); /* one run's overview, as every answer counts */
  cJSON_AddNumberToObject(o, "environment_count", (double)r.n_envs);
  if (r.latest_episode >= 0)
    cJSON_AddNumberToObject(o, "latest_episode", (double)r.latest_episode);
  if (r.latest_step >= 0)
    cJSON_AddNumberToObject(o, "latest_rl_step", (double)r.latest_step);
  cJSON_AddNumberToObject(o, "rl_series_count", (double)r.n_rl_series);
  cJSON_AddStringToObject(o, "environment_label", PMCP__RL_LABEL);
  if (!r.n_rl_series && !r.n_envs)
    cJSON_AddStringToObject(o, "note", "this run logs no RL series (scale ENVIRONMENT_STEP "
                                       "or EPISODE) and no environment attributes");
  pmcp__rl_dispose(&r);
  return pmcp__rs_reply(call, o);
}

/* ---- list_rl_environments ----------------------------------------------------- */

typedef struct hit {
  pmcp__rl_env *env;
  pmcp__sort_key key;
} hit;

static int hit_cmp(const pmcp__sort *s, const hit *a, const hit *b)
{
  int c = s ? pmcp__sort_cmp(s, &a->key, &b->key) : 0;
  return c ? c : pmcp__rl_id_cmp(a->env->id, b->env->id);
}

/* Stable merge sort with a context (no global state). */
static void sort_hits(const pmcp__sort *s, hit *h, hit *tmp, size_t n)
{
  if (n < 2)
    return;
  size_t m = n / 2, i = 0, j = m, k = 0;
  sort_hits(s, h, tmp, m);
  sort_hits(s, h + m, tmp, n - m);
  while (i < m && j < n)
    tmp[k++] = hit_cmp(s, &h[j], &h[i]) < 0 ? h[j++] : h[i++];
  while (i < m)
    tmp[k++] = h[i++];
  while (j < n)
    tmp[k++] = h[j++];
  memcpy(h, tmp, n * sizeof *h);
}

static int list_rl_environments(pmcp_call *call, void *ud)
{
  char err[300];
  const char *sj = NULL, *cj = NULL;
  pmcp_arg_json(call, "sort", &sj);
  pmcp_arg_json(call, "summary_columns", &cj);
  cJSON *sjson = sj ? cJSON_Parse(sj) : NULL, *cjson = cj ? cJSON_Parse(cj) : NULL;
  pmcp__sort sort, cols[MAX_COLUMNS];
  memset(&sort, 0, sizeof sort);
  memset(cols, 0, sizeof cols);
  size_t n_cols = cjson ? (size_t)cJSON_GetArraySize(cjson) : 0;
  hit *hits = NULL, *tmp = NULL;
  unsigned char *keep = NULL;
  pmcp__rl_run r;
  memset(&r, 0, sizeof r);
  int rc = 0;
  if (pmcp__rl_check_scales(call, "sort", sjson) ||
      pmcp__rl_check_scales(call, "summary_columns", cjson))
    goto out;
  if (sjson && pmcp__sort_parse(sjson, &sort, err, sizeof err)) {
    rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "%s", err);
    goto out;
  }
  for (size_t i = 0; i < n_cols; i++) {
    const cJSON *c = cJSON_GetArrayItem(cjson, (int)i);
    if (!cJSON_IsObject(c) || !cJSON_GetObjectItemCaseSensitive(c, "series") ||
        cJSON_GetObjectItemCaseSensitive(c, "direction") ||
        pmcp__sort_parse(c, &cols[i], err, sizeof err)) {
      rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                         "summary_columns[%zu] must be {\"series\": KEY, \"function\": "
                         "last|first|min|max|avg|count, \"scale\": EPISODE|ENVIRONMENT_STEP, "
                         "\"labels\"?}", i);
      goto out;
    }
  }
  rc = pmcp__rl_load(call, ud, INT64_MAX, &r);
  if (rc) {
    rc = rc < 0 ? rc : 0;
    goto out;
  }
  keep = calloc(r.n_envs ? r.n_envs : 1, 1);
  hits = calloc(r.n_envs ? r.n_envs : 1, sizeof *hits);
  tmp = calloc(r.n_envs ? r.n_envs : 1, sizeof *tmp);
  if (!keep || !hits || !tmp) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  rc = pmcp__rl_select(call, &r, keep);
  if (rc) {
    rc = rc < 0 ? rc : 0;
    goto out;
  }
  size_t n = 0;
  for (size_t i = 0; i < r.n_envs; i++) {
    if (!keep[i])
      continue;
    hits[n].env = &r.envs[i];
    if (sjson) {
      pmcp__filter_row row = pmcp__rl_row(&r.envs[i]);
      pmcp__sort_key_of(&sort, &row, &hits[n].key);
    }
    n++;
  }
  sort_hits(sjson ? &sort : NULL, hits, tmp, n);
  int64_t limit = 20, offset = 0;
  pmcp_arg_int(call, "limit", &limit);
  pmcp_arg_int(call, "offset", &offset);
  size_t n_attr = pmcp_arg_count(call, "columns");
  cJSON *rows = cJSON_CreateArray();
  for (size_t i = (size_t)offset; i < n && i < (size_t)(offset + limit); i++) {
    pmcp__rl_env *e = hits[i].env;
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "environment", e->id);
    static const char *const dflt[] = {"sys/last_episode", "sys/last_step"};
    for (size_t c = 0; c < (n_attr ? n_attr : 2); c++) {
      const char *path = dflt[c < 2 ? c : 0];
      if (n_attr)
        pmcp_arg_string_at(call, "columns", c, &path);
      const cJSON *v = path ? cJSON_GetObjectItemCaseSensitive(e->attrs, path) : NULL;
      if (v && !cJSON_GetObjectItemCaseSensitive(row, path))
        cJSON_AddItemToObject(row, path, cJSON_Duplicate(v, 1));
    }
    /* The sort's value is shown, so the order can be checked. */
    if (sort.attr && !cJSON_GetObjectItemCaseSensitive(row, sort.attr)) {
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(e->attrs, sort.attr);
      if (v)
        cJSON_AddItemToObject(row, sort.attr, cJSON_Duplicate(v, 1));
    }
    pmcp__filter_row fr = pmcp__rl_row(e);
    for (size_t c = 0; c < n_cols; c++) {
      pmcp__sort_key k;
      char name[300];
      snprintf(name, sizeof name, "%s(%s)", cols[c].function, cols[c].series);
      if (pmcp__sort_key_of(&cols[c], &fr, &k) == 0 && k.kind == 1 &&
          !cJSON_GetObjectItemCaseSensitive(row, name))
        cJSON_AddNumberToObject(row, name, k.num);
    }
    if (sort.series && hits[i].key.kind == 1) {
      char name[300];
      snprintf(name, sizeof name, "%s(%s)", sort.function, sort.series);
      if (!cJSON_GetObjectItemCaseSensitive(row, name))
        cJSON_AddNumberToObject(row, name, hits[i].key.num);
    }
    cJSON_AddItemToArray(rows, row);
  }
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "run", r.id);
  rc = pmcp__trk_emit(call, root, "rows", rows, (size_t)offset, n);
out:
  free(keep);
  free(hits);
  free(tmp);
  pmcp__rl_dispose(&r);
  pmcp__sort_dispose(&sort);
  for (size_t i = 0; i < n_cols && i < MAX_COLUMNS; i++)
    pmcp__sort_dispose(&cols[i]);
  cJSON_Delete(sjson);
  cJSON_Delete(cjson);
  return rc;
}

/* ---- list_rl_metrics / list_rl_attribute_definitions --------------------------- */

static void bump(cJSON *o, const char *k, double by)
{
  cJSON *n = cJSON_GetObjectItemCaseSensitive(o, k);
  cJSON_SetNumberValue(n, n->valuedouble + by);
}

static int has_str(const cJSON *arr, const char *s)
{
  const cJSON *x;
  cJSON_ArrayForEach(x, arr) if (!strcmp(x->valuestring, s)) return 1;
  return 0;
}

/* Adds @p r's RL metrics to @p seen (id -> item). */
static void add_metrics(const pmcp__rl_run *r, cJSON *seen)
{
  cJSON *in_run = cJSON_CreateObject(); /* the ids this run counted */
  for (size_t i = 0; i < r->cat.n; i++) {
    const pmcp__mx_series *s = &r->cat.s[i];
    if (!pmcp__rl_is_rl_scale(s->scale))
      continue;
    const char *scale = pmcp__trk_scale_name(s->scale);
    char id[600];
    snprintf(id, sizeof id, "%s\x1f%s\x1f%s", s->key, scale, s->kind);
    cJSON *m = cJSON_GetObjectItemCaseSensitive(seen, id);
    if (!m) {
      m = cJSON_CreateObject();
      cJSON_AddStringToObject(m, "name", s->key);
      cJSON_AddStringToObject(m, "scale", scale);
      cJSON_AddStringToObject(m, "kind", s->kind);
      cJSON_AddItemToObject(m, "label_keys", cJSON_CreateArray());
      cJSON_AddNumberToObject(m, "run_count", 0);
      cJSON_AddNumberToObject(m, "environment_count", 0);
      cJSON_AddNumberToObject(m, "point_count", 0);
      cJSON_AddItemToObject(seen, id, m);
    }
    if (!cJSON_GetObjectItemCaseSensitive(in_run, id)) {
      cJSON_AddTrueToObject(in_run, id);
      bump(m, "run_count", 1);
    }
    cJSON *keys = cJSON_GetObjectItemCaseSensitive(m, "label_keys");
    const cJSON *l;
    cJSON_ArrayForEach(l, s->labels) if (strcmp(l->string, PMCP__RL_LABEL) &&
                                         !has_str(keys, l->string))
        cJSON_AddItemToArray(keys, cJSON_CreateString(l->string));
    /* distinct environments: one env may log a metric under other labels */
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(s->labels, PMCP__RL_LABEL);
    char eid[800];
    if (cJSON_IsString(env)) {
      snprintf(eid, sizeof eid, "%s\x1e%s", id, env->valuestring);
      if (!cJSON_GetObjectItemCaseSensitive(in_run, eid)) {
        cJSON_AddTrueToObject(in_run, eid);
        bump(m, "environment_count", 1);
      }
    }
    bump(m, "point_count", (double)s->count);
  }
  cJSON_Delete(in_run);
}

/* Adds @p r's environment attribute paths to @p seen (path -> item). */
static void add_defs(const pmcp__rl_run *r, cJSON *seen)
{
  cJSON *in_run = cJSON_CreateObject();
  for (size_t i = 0; i < r->n_envs; i++) {
    const pmcp__rl_env *e = &r->envs[i];
    const cJSON *a;
    cJSON_ArrayForEach(a, e->attrs)
    {
      cJSON *d = cJSON_GetObjectItemCaseSensitive(seen, a->string);
      if (!d) {
        d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "path", a->string);
        cJSON_AddStringToObject(d, "type", pmcp__js(e->types, a->string));
        cJSON_AddNumberToObject(d, "run_count", 0);
        cJSON_AddNumberToObject(d, "environment_count", 0);
        cJSON_AddNumberToObject(d, "version_count", 0);
        cJSON_AddItemToObject(seen, a->string, d);
      }
      if (!cJSON_GetObjectItemCaseSensitive(in_run, a->string)) {
        cJSON_AddTrueToObject(in_run, a->string);
        bump(d, "run_count", 1);
      }
      bump(d, "environment_count", 1);
    }
    const cJSON *v;
    cJSON_ArrayForEach(v, e->versions)
    {
      cJSON *d = cJSON_GetObjectItemCaseSensitive(seen, pmcp__js(v, "path"));
      if (d)
        bump(d, "version_count", 1);
    }
  }
  cJSON_Delete(in_run);
}

/* Most runs a project-wide RL listing reads. */
#define MAX_PROJECT_RUNS 10000

/* Feeds the call's `run`, or without one every run of its project, to
 * @p add, then sends the sorted items under @p name. */
static int rl_listing(pmcp_call *call, pmcp__tracking *tk, const char *name,
                      void (*add)(const pmcp__rl_run *r, cJSON *seen))
{
  cJSON *seen = cJSON_CreateObject(), *root = cJSON_CreateObject();
  pmcp__rl_run r;
  int rc = 0;
  if (pmcp_arg_has(call, "run")) {
    rc = pmcp__rl_load(call, tk, INT64_MAX, &r);
    if (!rc) {
      cJSON_AddStringToObject(root, "run", r.id);
      add(&r, seen);
    }
    pmcp__rl_dispose(&r);
  } else {
    cJSON *proj = NULL, *runs = NULL;
    rc = pmcp__trk_project(call, tk, &proj);
    if (!rc)
      rc = pmcp__trk_list_all(call, tk, "run", pmcp__js(proj, "ref"), MAX_PROJECT_RUNS, &runs);
    if (!rc) {
      cJSON_AddStringToObject(root, "project", pmcp__js(proj, "ref") + 8);
      const cJSON *it;
      size_t n = 0;
      cJSON_ArrayForEach(it, runs)
      {
        if (pmcp_call_cancelled(call)) {
          rc = PMCP_ECANCELLED;
          break;
        }
        rc = pmcp__rl_load_run(call, tk, pmcp__js(it, "ref"), 0, INT64_MAX, &r);
        if (!rc)
          add(&r, seen);
        pmcp__rl_dispose(&r);
        if (rc)
          break;
        n++;
      }
      cJSON_AddNumberToObject(root, "runs_read", (double)n);
    }
    cJSON_Delete(proj);
    cJSON_Delete(runs);
  }
  if (rc) {
    cJSON_Delete(seen);
    cJSON_Delete(root);
    return rc < 0 ? rc : 0;
  }
  cJSON *all = pmcp__trk_sorted_values(seen);
  cJSON_Delete(seen);
  if (!all) {
    cJSON_Delete(root);
    return PMCP_ENOMEM;
  }
  return pmcp__trk_window(call, root, name, all);
}

static int list_rl_metrics(pmcp_call *call, void *ud)
{
  return rl_listing(call, ud, "metrics", add_metrics);
}

static int list_rl_attribute_definitions(pmcp_call *call, void *ud)
{
  return rl_listing(call, ud, "attributes", add_defs);
}

/* ---- get_rl_environment_attributes ------------------------------------------- */

static int path_wanted(pmcp_call *call, const char *path)
{
  size_t n = pmcp_arg_count(call, "paths");
  for (size_t i = 0; i < n; i++) {
    const char *p = NULL;
    pmcp_arg_string_at(call, "paths", i, &p);
    size_t k = p ? strlen(p) : 0;
    if (k && !strncmp(path, p, k) && (path[k] == '\0' || path[k] == '/' || p[k - 1] == '/'))
      return 1;
  }
  return n == 0;
}

static int get_rl_environment_attributes(pmcp_call *call, void *ud)
{
  int64_t as_of = INT64_MAX;
  int history = 0;
  if (pmcp_arg_has(call, "episode"))
    pmcp_arg_int(call, "episode", &as_of);
  pmcp_arg_bool(call, "history", &history);
  pmcp__rl_run r;
  int rc = pmcp__rl_load(call, ud, as_of, &r);
  if (rc) {
    pmcp__rl_dispose(&r);
    return rc < 0 ? rc : 0;
  }
  const char *id = NULL;
  pmcp_arg_string(call, "environment", &id, NULL);
  pmcp__rl_env *e = pmcp__rl_find(&r, id);
  if (!e) {
    rc = pmcp__rl_env_missing(call, &r, id ? id : "");
    pmcp__rl_dispose(&r);
    return rc;
  }
  cJSON *all = cJSON_CreateArray();
  if (history) {
    /* Every version up to the episode asked, by path then episode. */
    const cJSON *v;
    cJSON_ArrayForEach(v, e->versions)
    {
      if (pmcp__jn(v, "episode", 0) > (double)as_of || !path_wanted(call, pmcp__js(v, "path")))
        continue;
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "path", pmcp__js(v, "path"));
      cJSON_AddNumberToObject(o, "episode", pmcp__jn(v, "episode", 0));
      cJSON_AddItemToObject(o, "value",
                            cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(v, "value"), 1));
      cJSON_AddItemToArray(all, o);
    }
  } else {
    cJSON *byp = cJSON_CreateObject();
    const cJSON *a;
    cJSON_ArrayForEach(a, e->attrs)
    {
      if (!path_wanted(call, a->string))
        continue;
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "path", a->string);
      cJSON_AddItemToObject(o, "value", cJSON_Duplicate(a, 1));
      const cJSON *since = cJSON_GetObjectItemCaseSensitive(e->since, a->string);
      if (since)
        cJSON_AddNumberToObject(o, "since_episode", since->valuedouble);
      cJSON_AddItemToObject(byp, a->string, o);
    }
    cJSON_Delete(all);
    all = pmcp__trk_sorted_values(byp);
    cJSON_Delete(byp);
    if (!all) {
      pmcp__rl_dispose(&r);
      return PMCP_ENOMEM;
    }
  }
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "run", r.id);
  cJSON_AddStringToObject(root, "environment", e->id);
  if (as_of != INT64_MAX)
    cJSON_AddNumberToObject(root, "as_of_episode", (double)as_of);
  pmcp__rl_dispose(&r);
  return pmcp__trk_window(call, root, history ? "versions" : "attributes", all);
}

/* ---- registration --------------------------------------------------------------- */

static const char *const functions[] = {"avg", "min", "max", "sum", "std", "median", NULL};

#define RUN_ARG {"run", PMCP_T_STRING, 1, "Id, name or ref.", 1, 1, 1, 200, NULL, NULL}
#define FILTER_ARG                                                                        \
  {"filter", PMCP_T_ARRAY, 0,                                                            \
   "As list_runs'; series need scale.", 0, 1, 0, 64, NULL, NULL}
#define ENVS_ARG                                                                           \
  {"environments", PMCP_T_STRING_ARRAY, 0, NULL, 0, 1, 0, 200, NULL, NULL}
#define SERIES_RANGE_ARGS                                                                  \
  {"scale", PMCP_T_STRING, 1, NULL, \
   0, 0, 0, 0, PMCP__TRK_RL_SCALES, NULL},                                                           \
  {"labels", PMCP_T_OBJECT, 0, NULL, 0, 0,\
   0, 0, NULL, NULL},                                                                      \
  {"buckets", PMCP_T_INTEGER, 0, NULL, 1, 1, 2, 1000, NULL, "50"},                        \
  {"step_from", PMCP_T_INTEGER, 0, NULL, 0, 0, 0, 0, NULL, NULL},     \
  {"step_to", PMCP_T_INTEGER, 0, NULL, 0, 0, 0, 0, NULL, NULL}

static const pmcp_arg_spec info_args[] = {RUN_ARG, PMCP__TRK_ARG_WORKSPACE,
                                          PMCP__TRK_ARG_PROJECT};
static const pmcp_arg_spec envs_args[] = {
  RUN_ARG, PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT, FILTER_ARG, ENVS_ARG,
  {"sort", PMCP_T_OBJECT, 0, "As list_runs'; default: by environment.", 0, 0, 0, 0, NULL, NULL},
  {"columns", PMCP_T_STRING_ARRAY, 0, "Paths to show.", 0, 1, 0, MAX_COLUMNS, NULL, NULL},
  {"summary_columns", PMCP_T_ARRAY, 0, "As list_runs'; scale needed.", 0, 1, 0, MAX_COLUMNS,
   NULL, NULL},
  PMCP__TRK_ARG_LIMIT("20"), PMCP__TRK_ARG_OFFSET};
static const pmcp_arg_spec run_list_args[] = {
  {"run", PMCP_T_STRING, 0, "Default: all runs.", 1,
   1, 1, 200, NULL, NULL},
  PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT, PMCP__TRK_ARG_LIMIT("50"),
  PMCP__TRK_ARG_OFFSET};
static const pmcp_arg_spec env_attrs_args[] = {
  RUN_ARG,
  {"environment", PMCP_T_STRING, 1, "Its env label value.", 1, 1, 1, 128, NULL, NULL},
  {"episode", PMCP_T_INTEGER, 0, "Default: the latest.", 1, 0, 0, 0,
   NULL, NULL},
  {"history", PMCP_T_BOOLEAN, 0, "Every version instead.", 0, 0, 0,
   0, NULL, "false"},
  {"paths", PMCP_T_STRING_ARRAY, 0, "Only paths under these.", 0, 1, 0, 50, NULL,
   NULL},
  PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT,
  {"limit", PMCP_T_INTEGER, 0, NULL, 1, 1, 1, 1000, NULL, "200"},
  PMCP__TRK_ARG_OFFSET};
static const pmcp_arg_spec buckets_args[] = {
  RUN_ARG,
  {"series", PMCP_T_STRING_ARRAY, 1, NULL, 1, 1, 1, 20, NULL, NULL},
  SERIES_RANGE_ARGS, ENVS_ARG, FILTER_ARG, PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT,
  PMCP__TRK_ARG_LIMIT("50"), PMCP__TRK_ARG_OFFSET};
static const pmcp_arg_spec aggregate_args[] = {
  RUN_ARG,
  {"series", PMCP_T_STRING, 1, NULL, 1, 1, 1, 200, NULL, NULL},
  SERIES_RANGE_ARGS,
  {"function", PMCP_T_STRING, 0, "Reduces the environments' bucket means.", 0, 0, 0, 0,
   functions, "\"avg\""},
  {"group_by", PMCP_T_STRING, 0, "Attribute path: a group per value.", 1, 1, 1, 256, NULL, NULL},
  ENVS_ARG, FILTER_ARG, PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT,
  PMCP__TRK_ARG_LIMIT("20"), PMCP__TRK_ARG_OFFSET};

#define N(a) (sizeof a / sizeof a[0])

int pmcp__trk_add_rl(pmcp_server *server, pmcp__tracking *tk)
{
  int rc = pmcp__trk_add_tool(server, tk, "get_rl_info", NULL,
               "A run's RL overview: environments, last episode and step.",
               info_args, N(info_args), get_rl_info);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "list_rl_environments", NULL,
             "A run's environments as a table, like list_runs.",
             envs_args, N(envs_args), list_rl_environments);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "list_rl_metrics", NULL,
             "Metrics of environments: scale, kind, label keys, counts.",
             run_list_args, N(run_list_args), list_rl_metrics);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "list_rl_attribute_definitions", NULL,
             "Attribute paths and types of environments.",
             run_list_args, N(run_list_args), list_rl_attribute_definitions);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "get_rl_environment_attributes", NULL,
             "An environment's attributes as of an episode, or every version.",
             env_attrs_args, N(env_attrs_args), get_rl_environment_attributes);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "fetch_rl_env_series_buckets", NULL,
             "As fetch_float_series_buckets, per environment.",
             buckets_args, N(buckets_args), pmcp__rl_fetch_buckets);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "aggregate_rl_env_series", NULL,
             "One series reduced across environments per bucket (in group_by groups).",
             aggregate_args, N(aggregate_args), pmcp__rl_aggregate);
  return rc;
}
