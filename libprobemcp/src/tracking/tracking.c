/* SPDX-License-Identifier: MIT */
/* pmcp_tracking_register() and the helpers every tracking tool shares:
 * project resolution, whole listings, offset pages cut to the budget, and
 * runs as rows of the filter language. */
#include "tracking/tracking.h"

#include "store/runtable.h"

#ifdef PMCP_HAVE_CAIRO
#include "research/chart.h"
#endif

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/registry.h"
#include "research/page.h"

void *pmcp__trk_retain(pmcp__tracking *tk)
{
  tk->refs++;
  return tk;
}

void pmcp__trk_release(void *ud)
{
  pmcp__tracking *tk = ud;
  if (!tk || --tk->refs > 0)
    return;
  pmcp__research_release(tk->rs);
  free(tk->workspace);
  free(tk->project);
  free(tk->role);
  free(tk);
}

static char *dup_opt(const char *s, int *oom)
{
  if (!s || !*s)
    return NULL;
  char *d = strdup(s);
  if (!d)
    *oom = 1;
  return d;
}

int pmcp_tracking_register(pmcp_server *server, pmcp_store *store,
                           const pmcp_tracking_options *opts)
{
  pmcp_tracking_options def = PMCP_TRACKING_OPTIONS_INIT;
  if (!opts)
    opts = &def;
  /* version 1 callers know no scope fields */
  if (!server || !store || opts->version < 1 || opts->version > PMCP_TRACKING_OPTIONS_VERSION)
    return PMCP_EINVAL;
  pmcp__tracking *tk = calloc(1, sizeof *tk);
  if (!tk)
    return PMCP_ENOMEM;
  tk->refs = 1;
  int rc = pmcp__research_new(store, opts->tenant, &tk->rs);
  if (rc) {
    free(tk);
    return rc;
  }
  if (opts->version >= 2) {
    tk->rs->scope = opts->scope;
    tk->rs->scope_ud = opts->scope_ud;
    tk->rs->scope_0_1 = opts->version < 3;
    tk->scope_list = opts->scope ? opts->scope_list : NULL;
  }
  int oom = 0;
  tk->workspace = dup_opt(opts->workspace, &oom);
  tk->project = dup_opt(opts->project, &oom);
  tk->role = strdup(opts->role && *opts->role ? opts->role : "viewer");
  if (oom || !tk->role) {
    pmcp__trk_release(tk);
    return PMCP_ENOMEM;
  }
  rc = pmcp__trk_add_discovery(server, tk);
  if (!rc)
    rc = pmcp__trk_add_runs(server, tk);
  if (!rc)
    rc = pmcp__trk_add_fetch(server, tk);
  if (!rc)
    rc = pmcp__trk_add_docs(server, tk);
  if (!rc)
    rc = pmcp__trk_add_hist(server, tk);
  if (!rc)
    rc = pmcp__trk_add_rl(server, tk);
  /* Beside the research toolset, its skill learns the tracking tools too;
   * alone, the tracking toolset serves no skill (the skill teaches the
   * research tools). */
  if (!rc) {
    rc = pmcp_server_add_skill_files(server, PMCP__RESEARCH_SKILL, pmcp__tracking_skill,
                                     pmcp__tracking_skill_n);
    if (rc == PMCP_ENOTFOUND)
      rc = 0;
  }
  pmcp__trk_release(tk);
  return rc;
}

typedef struct trk_tool {
  pmcp_tool_fn fn;
  pmcp__tracking *tk;
  int offset_cap; /* takes PMCP__TRK_ARG_OFFSET: its bound is checked here */
} trk_tool;

static void trk_tool_free(void *ud)
{
  trk_tool *w = ud;
  if (!w)
    return;
  pmcp__trk_release(w->tk);
  free(w);
}

/* Each call runs on a view of the toolset scoped to the workspace it acts
 * in (research/scope.c): with a host's scope hook, that workspace is also
 * the default of the tools' `workspace` argument and its role the one
 * list_workspaces reports. */
static int trk_tool_call(pmcp_call *call, void *ud)
{
  trk_tool *w = ud;
  static const char *const named[] = {"workspace", "project"};
  for (size_t i = 0; i < 2; i++) {
    const char *s = NULL;
    size_t n = 0;
    if (!pmcp_arg_has(call, named[i]) || pmcp_arg_string(call, named[i], &s, &n) != 0)
      continue;
    size_t chars = 0; /* characters, as the engine counts lengths */
    for (size_t k = 0; k < n; k++)
      chars += ((unsigned char)s[k] & 0xC0) != 0x80;
    if (chars > PMCP__TRK_NAME_MAX)
      return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "%s is longer than %d characters",
                           named[i], PMCP__TRK_NAME_MAX);
  }
  int64_t offset = 0;
  if (w->offset_cap && pmcp_arg_int(call, "offset", &offset) == 0 &&
      offset > PMCP__TRK_OFFSET_MAX)
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "offset is larger than %d",
                         PMCP__TRK_OFFSET_MAX);
  /* Without a host's hook the tools' `workspace` keeps its own meaning
   * (narrowing a listing) and the whole tenant is read, as before. */
  if (!w->tk->rs->scope)
    return w->fn(call, w->tk);
  pmcp__tracking view = *w->tk;
  pmcp__research rview = *w->tk->rs;
  pmcp_call_scope sc = PMCP__CALL_SCOPE_INIT;
  int r = pmcp__rs_scope(call, w->tk->rs, &rview.tenant, &sc);
  if (r) {
    pmcp__call_scope_dispose(&sc);
    return r > 0 ? 0 : r;
  }
  view.rs = &rview;
  view.scope = &sc;
  if (sc.workspace)
    view.workspace = sc.workspace;
  if (sc.role)
    view.role = sc.role;
  r = w->fn(call, &view);
  pmcp__call_scope_dispose(&sc);
  return r;
}

int pmcp__trk_add_tool(pmcp_server *server, pmcp__tracking *tk, const char *name,
                       const char *title, const char *desc, const pmcp_arg_spec *args,
                       size_t n_args, pmcp_tool_fn fn)
{
  trk_tool *w = calloc(1, sizeof *w);
  if (!w)
    return PMCP_ENOMEM;
  w->fn = fn;
  w->tk = pmcp__trk_retain(tk);
  for (size_t i = 0; i < n_args; i++)
    if (!strcmp(args[i].name, "offset") && !args[i].has_max)
      w->offset_cap = 1;
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = name;
  d.title = title;
  d.description = desc;
  d.args = args;
  d.n_args = n_args;
  /* destructive and idempotent mean nothing for a read-only tool */
  d.read_only = PMCP_HINT_TRUE;
  d.open_world = PMCP_HINT_FALSE;
  d.flags = PMCP_TOOL_BUDGETED | PMCP_TOOL_BLOCKING | PMCP_TOOL_OFFSET_PAGED;
  d.handler = trk_tool_call;
  d.ud = w;
  d.ud_free = trk_tool_free;
  int rc = pmcp_server_add_tool(server, &d);
  /* lists an agent writes by hand (conditions, columns, paths, a run's
   * environments) never come near their limits; runs and series may */
  static const char *const open_lists[] = {"filter", "columns", "summary_columns", "paths",
                                           "environments", NULL};
  return rc ? rc : pmcp__schema_compact(server, name, open_lists);
}

/* The filter language's structure (filter/filter.c), stated once in
 * list_runs' schema (the RL tools' filters name it: each repetition costs
 * every session its tokens). An any_of group's members are the two
 * condition forms, which the description says rather than repeat. */
#define TRK_LABELS "{\"type\":\"object\"}"
#define TRK_FUNCTIONS "{\"enum\":[\"last\",\"first\",\"min\",\"max\",\"avg\",\"count\"]}"
static const char filter_schema[] =
  "{\"type\":\"array\",\"items\":{\"anyOf\":["
  "{\"type\":\"object\",\"properties\":{\"attr\":{\"type\":\"string\"},"
  "\"op\":{\"enum\":[\"eq\",\"ne\",\"gt\",\"gte\",\"lt\",\"lte\",\"matches\",\"contains\","
  "\"contains_any\",\"contains_all\",\"in\",\"not_in\",\"exists\"]},\"value\":{}},"
  "\"required\":[\"attr\",\"op\"]},"
  "{\"type\":\"object\",\"properties\":{\"series\":{\"type\":\"string\"},"
  "\"function\":" TRK_FUNCTIONS ",\"op\":{\"enum\":[\"eq\",\"ne\",\"gt\",\"gte\",\"lt\","
  "\"lte\",\"exists\"]},\"value\":{\"type\":\"number\"},\"scale\":{\"type\":\"string\"},"
  "\"labels\":" TRK_LABELS "},\"required\":[\"series\",\"op\"]},"
  "{\"type\":\"object\",\"properties\":{\"any_of\":{\"type\":\"array\","
  "\"items\":{\"type\":\"object\"}}},\"required\":[\"any_of\"]}]}}";
static const char sort_schema[] =
  "{\"type\":\"object\",\"properties\":{\"attr\":{\"type\":\"string\"},"
  "\"series\":{\"type\":\"string\"},\"function\":" TRK_FUNCTIONS ","
  "\"direction\":{\"enum\":[\"asc\",\"desc\"]}}}";

int pmcp__trk_filter_schemas(pmcp_server *server, const char *tool)
{
  int rc = pmcp__schema_set_arg(server, tool, "filter", filter_schema);
  if (!rc)
    rc = pmcp__schema_set_arg(server, tool, "sort", sort_schema);
  return rc;
}

/* "project:X" or "X" -> "project:X" in @p buf. */
static const char *as_ref(const char *kind, const char *s, char *buf, size_t size)
{
  size_t k = strlen(kind);
  if (strncmp(s, kind, k) == 0 && s[k] == ':')
    snprintf(buf, size, "%s", s);
  else
    snprintf(buf, size, "%s:%s", kind, s);
  return buf;
}

int pmcp__trk_list_all(pmcp_call *call, pmcp__tracking *tk, const char *kind,
                       const char *parent, size_t max, cJSON **out)
{
  *out = cJSON_CreateArray();
  if (!*out)
    return PMCP_ENOMEM;
  char *after = NULL;
  char err[300];
  for (;;) {
    pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
    o.kind = kind;
    o.parent = parent;
    o.after = after;
    o.limit = 1000;
    cJSON *page = NULL;
    int rc = pmcp__rs_list(tk->rs, &o, &page, err, sizeof err);
    free(after);
    after = NULL;
    if (rc) {
      cJSON_Delete(*out);
      *out = NULL;
      if (rc == PMCP_ENOTFOUND)
        pmcp__rs_fail(call, PMCP_TERR_NOT_FOUND, "%s", err);
      else
        pmcp__rs_fail(call, PMCP_TERR_STORE, "%s", err);
      return 1;
    }
    cJSON *items = cJSON_GetObjectItemCaseSensitive(page, "items");
    cJSON *it;
    while (items && (it = items->child) && (size_t)cJSON_GetArraySize(*out) < max)
      cJSON_AddItemToArray(*out, cJSON_DetachItemViaPointer(items, it));
    const char *next = pmcp__js(page, "next");
    if (*next && (size_t)cJSON_GetArraySize(*out) < max)
      after = strdup(next);
    cJSON_Delete(page);
    if (!after)
      return 0;
  }
}

int pmcp__trk_project(pmcp_call *call, pmcp__tracking *tk, cJSON **out)
{
  *out = NULL;
  const char *p = NULL, *w = NULL;
  pmcp_arg_string(call, "project", &p, NULL);
  pmcp_arg_string(call, "workspace", &w, NULL);
  if (!p || !*p)
    p = tk->project;
  if (!w || !*w)
    w = tk->workspace;
  char ref[300], wref[300], err[300];
  if (!p) {
    cJSON *all = NULL;
    if (pmcp__trk_list_all(call, tk, "project", w ? as_ref("workspace", w, wref, sizeof wref)
                                                 : NULL, 2, &all))
      return 1;
    int n = cJSON_GetArraySize(all);
    if (n == 1)
      p = pmcp__js(cJSON_GetArrayItem(all, 0), "ref");
    if (n != 1 || !*p) {
      cJSON_Delete(all);
      pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                    n ? "pass project: this connection has no default project "
                        "(list_projects names them)"
                      : "there are no projects to read%s",
                    n ? "" : (w ? " in this workspace" : ""));
      return 1;
    }
    as_ref("project", p, ref, sizeof ref);
    cJSON_Delete(all);
  } else {
    as_ref("project", p, ref, sizeof ref);
  }
  cJSON *rec = NULL;
  /* only the ref and the workspace are read: one lookup when the store
   * has it (a missing project takes the record's path and its message) */
  char ws[200];
  pthread_mutex_lock(tk->rs->lock);
  int rc = pmcp__store_project_ws(tk->rs->store, tk->rs->tenant, ref + 8, ws, sizeof ws);
  pthread_mutex_unlock(tk->rs->lock);
  if (!rc) {
    rec = cJSON_CreateObject();
    char wsref[220];
    snprintf(wsref, sizeof wsref, "workspace:%s", ws);
    if (!rec || !cJSON_AddStringToObject(rec, "ref", ref) ||
        !cJSON_AddStringToObject(rec, "workspace", wsref)) {
      cJSON_Delete(rec);
      rec = NULL;
      rc = PMCP_ENOMEM;
    }
  }
  if (rc)
    rc = pmcp__rs_get(tk->rs, ref, &rec, err, sizeof err);
  if (rc) {
    pmcp__rs_fail(call, rc == PMCP_ENOTFOUND ? PMCP_TERR_NOT_FOUND : PMCP_TERR_STORE,
                  rc == PMCP_ENOTFOUND ? "project '%s' not found" : "%s",
                  rc == PMCP_ENOTFOUND ? ref + 8 : err);
    return 1;
  }
  if (w) {
    const char *ws = pmcp__js(rec, "workspace");
    if (strcmp(ws, as_ref("workspace", w, wref, sizeof wref)) != 0) {
      pmcp__rs_fail(call, PMCP_TERR_NOT_FOUND, "project '%s' not found in workspace '%s'", ref + 8,
                    wref + 10);
      cJSON_Delete(rec);
      return 1;
    }
  }
  *out = rec;
  return 0;
}

/* ---- runs as filter rows ---------------------------------------------- */

const char *const pmcp__trk_scales[] = {"STEP", "ENVIRONMENT_STEP", "EPISODE", NULL};
/* The store's name of each, at the same index. */
static const char *const store_scales[] = {"step", "env_step", "episode"};
#define N_SCALES (sizeof store_scales / sizeof store_scales[0])
_Static_assert(sizeof pmcp__trk_scales / sizeof pmcp__trk_scales[0] == N_SCALES + 1,
               "a store name for every scale");

const char *pmcp__trk_scale_arg(pmcp_call *call, size_t first)
{
  size_t i;
  if (pmcp_arg_enum(call, "scale", &i) != 0)
    return NULL;
  assert(first + i < N_SCALES);
  return store_scales[first + i];
}

const char *pmcp__trk_scale(const char *s)
{
  if (!s)
    return "step";
  for (size_t i = 0; i < N_SCALES; i++)
    if (!strcmp(s, pmcp__trk_scales[i]) || !strcmp(s, store_scales[i]))
      return store_scales[i];
  return NULL;
}

const char *pmcp__trk_scale_name(const char *s)
{
  for (size_t i = 1; s && i < N_SCALES; i++)
    if (!strcmp(s, store_scales[i]))
      return pmcp__trk_scales[i];
  return "STEP";
}

static void put(cJSON *attrs, const char *path, cJSON *v)
{
  if (v)
    cJSON_AddItemToObject(attrs, path, v);
}

int pmcp__trk_run_load(pmcp__tracking *tk, const cJSON *item, pmcp__trk_run *r, char *err,
                       size_t errlen)
{
  memset(r, 0, sizeof *r);
  r->tk = tk;
  const char *ref = pmcp__js(item, "ref");
  snprintf(r->id, sizeof r->id, "%s", strncmp(ref, "run:", 4) == 0 ? ref + 4 : ref);
  r->attrs = cJSON_CreateObject();
  r->types = cJSON_CreateObject();
  if (!r->attrs || !r->types)
    return PMCP_ENOMEM;
  put(r->attrs, "sys/id", cJSON_CreateString(r->id));
  if (*pmcp__js(item, "name"))
    put(r->attrs, "sys/name", cJSON_CreateString(pmcp__js(item, "name")));
  if (*pmcp__js(item, "status"))
    put(r->attrs, "sys/state", cJSON_CreateString(pmcp__js(item, "status")));
  if (*pmcp__js(item, "experiment"))
    put(r->attrs, "sys/experiment", cJSON_CreateString(pmcp__js(item, "experiment") + 11));
  static const struct { const char *key, *path; } times[] = {
    {"created", "sys/creation_time"}, {"started", "sys/start_time"}, {"ended", "sys/end_time"}};
  for (size_t i = 0; i < 3; i++) {
    double ms = pmcp__jn(item, times[i].key, 0);
    if (ms > 0) {
      char iso[48];
      pmcp__iso_ms((int64_t)ms, iso, sizeof iso);
      put(r->attrs, times[i].path, cJSON_CreateString(iso));
      cJSON_AddStringToObject(r->types, times[i].path, "datetime");
    }
  }
  /* what get_run_attributes shows is filterable and sortable too */
  double started = pmcp__jn(item, "started", 0), ended = pmcp__jn(item, "ended", 0);
  if (started > 0 && ended >= started) {
    put(r->attrs, "sys/duration_ms", cJSON_CreateNumber(ended - started));
    cJSON_AddStringToObject(r->types, "sys/duration_ms", "int");
  }
  const char *proj = pmcp__js(item, "project");
  if (!strncmp(proj, "project:", 8) && proj[8])
    put(r->attrs, "sys/project", cJSON_CreateString(proj + 8));
  const cJSON *tags = cJSON_GetObjectItemCaseSensitive(item, "tags");
  put(r->attrs, "sys/tags", cJSON_IsArray(tags) ? cJSON_Duplicate(tags, 1) : cJSON_CreateArray());
  return pmcp__trk_run_attrs(tk, r, err, errlen);
}

int pmcp__trk_run_attrs(pmcp__tracking *tk, pmcp__trk_run *r, char *err, size_t errlen)
{
  /* The run's own attributes, read as a listing (lighter than the record). */
  char pref[200];
  snprintf(pref, sizeof pref, "run:%s", r->id);
  char *after = NULL;
  for (;;) {
    pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
    o.kind = "attribute";
    o.parent = pref;
    o.after = after;
    o.limit = 1000;
    cJSON *page = NULL;
    int rc = pmcp__rs_list(tk->rs, &o, &page, err, errlen);
    free(after);
    after = NULL;
    if (rc)
      return rc;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(page, "items"))
    {
      const char *path = pmcp__js(it, "path");
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "value");
      if (*path && v && !cJSON_GetObjectItemCaseSensitive(r->attrs, path)) {
        cJSON_AddItemToObject(r->attrs, path, pmcp__trk_attr_value(pmcp__js(it, "type"), v));
        if (*pmcp__js(it, "type"))
          cJSON_AddStringToObject(r->types, path, pmcp__js(it, "type"));
      }
    }
    if (*pmcp__js(page, "next"))
      after = strdup(pmcp__js(page, "next"));
    cJSON_Delete(page);
    if (!after)
      break;
  }
  return 0;
}

void pmcp__trk_run_dispose(pmcp__trk_run *r)
{
  cJSON_Delete(r->attrs);
  cJSON_Delete(r->types);
  cJSON_Delete(r->series);
  memset(r, 0, sizeof *r);
}

static const cJSON *row_attr(void *ud, const char *path)
{
  pmcp__trk_run *r = ud;
  return cJSON_GetObjectItemCaseSensitive(r->attrs, path);
}

int pmcp__trk_labels_match(const cJSON *have, const cJSON *want)
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

const cJSON *pmcp__trk_find_series(pmcp__trk_run *r, const char *key, const char *scale,
                                   const cJSON *labels)
{
  if (!r->series && !r->series_err) {
    char pref[200], err[300];
    snprintf(pref, sizeof pref, "run:%s", r->id);
    cJSON *page = NULL;
    pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
    o.kind = "series";
    o.parent = pref;
    o.limit = 1000;
    if (pmcp__rs_list(r->tk->rs, &o, &page, err, sizeof err) != 0) {
      r->series_err = 1;
      return NULL;
    }
    r->series = cJSON_DetachItemFromObjectCaseSensitive(page, "items");
    cJSON_Delete(page);
  }
  const char *sc = pmcp__trk_scale(scale);
  const cJSON *it, *best = NULL;
  cJSON_ArrayForEach(it, r->series)
  {
    if (strcmp(pmcp__js(it, "key"), key) != 0 || strcmp(pmcp__js(it, "scale"), sc ? sc : "") != 0)
      continue;
    const cJSON *have = cJSON_GetObjectItemCaseSensitive(it, "labels");
    if (labels) {
      if (pmcp__trk_labels_match(have, labels))
        return it;
    } else if (cJSON_GetArraySize(have) == 0) {
      return it; /* without labels, the unlabelled series is meant */
    } else if (!best) {
      best = it;
    }
  }
  return best;
}

static int row_series(void *ud, const char *key, const char *fn, const char *scale,
                      const cJSON *labels, double *out)
{
  pmcp__trk_run *r = ud;
  const cJSON *s = pmcp__trk_find_series(r, key, scale, labels);
  if (r->series_err)
    return PMCP_ESTORE;
  if (!s)
    return 1;
  if (!fn)
    return 0;
  const char *field = strcmp(fn, "avg") == 0 ? "mean" : fn;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, field);
  if (!cJSON_IsNumber(v))
    return 1;
  *out = v->valuedouble;
  return 0;
}

static int row_is_time(void *ud, const char *path)
{
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(((pmcp__trk_run *)ud)->types, path);
  return cJSON_IsString(t) && !strcmp(t->valuestring, "datetime");
}

pmcp__filter_row pmcp__trk_row(pmcp__trk_run *r)
{
  pmcp__filter_row row = {row_attr, row_series, r, row_is_time};
  return row;
}

cJSON *pmcp__trk_attr_value(const char *type, const cJSON *v)
{
  if (type && !strcmp(type, "datetime") && cJSON_IsNumber(v)) {
    char iso[48];
    pmcp__iso_ms((int64_t)v->valuedouble, iso, sizeof iso);
    return cJSON_CreateString(iso);
  }
  return cJSON_Duplicate(v, 1);
}

int pmcp__trk_step_range(pmcp_call *call, int64_t *lo, int64_t *hi, int *ranged)
{
  *lo = INT64_MIN;
  *hi = INT64_MAX;
  int has_from = pmcp_arg_has(call, "step_from"), has_to = pmcp_arg_has(call, "step_to");
  if (has_from)
    pmcp_arg_int(call, "step_from", lo);
  if (has_to)
    pmcp_arg_int(call, "step_to", hi);
  if (ranged)
    *ranged = has_from || has_to;
  if (*lo > *hi) {
    pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "step_from is after step_to");
    return 1;
  }
  return 0;
}

/* The run a caller names, by what an agent has: its id or ref, then an
 * importer's id for an MLflow run uuid, then its name. */
int pmcp__trk_run_ref(pmcp_call *call, pmcp__tracking *tk, const char *arg, char *out,
                      size_t outlen)
{
  const char *id = arg && !strncmp(arg, "run:", 4) ? arg + 4 : arg ? arg : "";
  char ref[320], err[300];
  static const char *const prefixes[] = {"", "mlflow-"};
  for (size_t i = 0; *id && i < 2; i++) {
    snprintf(ref, sizeof ref, "run:%s%s", prefixes[i], id);
    cJSON *rec = NULL;
    int rc = pmcp__rs_get(tk->rs, ref, &rec, err, sizeof err);
    cJSON_Delete(rec);
    if (rc == 0) {
      snprintf(out, outlen, "%s", ref);
      return 0;
    }
    if (rc != PMCP_ENOTFOUND)
      return pmcp__rs_fail(call, PMCP_TERR_STORE, "%s", err), 1;
  }
  /* by name: every live run whose name is exactly @p id */
  cJSON *page = NULL;
  pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
  o.kind = "run";
  o.query = id;
  o.limit = 100;
  if (*id && pmcp__rs_list(tk->rs, &o, &page, err, sizeof err) != 0)
    return pmcp__rs_fail(call, PMCP_TERR_STORE, "%s", err), 1;
  const cJSON *it;
  char names[200] = "", pref[300] = "";
  const char *proj = NULL;
  if (pmcp_arg_string(call, "project", &proj, NULL) == 0 && proj && *proj)
    as_ref("project", proj, pref, sizeof pref); /* a name is looked up in the project */
  size_t hits = 0;
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(page, "items"))
  {
    if (strcmp(pmcp__js(it, "name"), id) != 0 ||
        (*pref && strcmp(pmcp__js(it, "project"), pref) != 0))
      continue;
    const char *r = pmcp__js(it, "ref");
    if (!hits++)
      snprintf(out, outlen, "%s", r);
    size_t n = strlen(names);
    if (n + strlen(r) + 3 < sizeof names)
      snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "", r + 4);
  }
  cJSON_Delete(page);
  if (hits == 1)
    return 0;
  if (hits > 1)
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                         "run name '%.100s' is shared by %zu runs (%s): pass one id, or "
                         "narrow with list_runs", id, hits, names), 1;
  return pmcp__rs_fail(call, PMCP_TERR_NOT_FOUND,
                       "run '%.100s' not found (as an id, a ref, a run name or an MLflow run "
                       "id): list_runs finds runs by name and attributes", id), 1;
}

/* A stable merge sort with a context (no global state); @p tmp holds n
 * elements. */
void pmcp__trk_msort(void *base, size_t n, size_t size, void *tmp,
                     int (*cmp)(const void *a, const void *b, const void *ctx),
                     const void *ctx)
{
  if (n < 2)
    return;
  char *b = base, *t = tmp;
  size_t h = n / 2;
  pmcp__trk_msort(b, h, size, tmp, cmp, ctx);
  pmcp__trk_msort(b + h * size, n - h, size, tmp, cmp, ctx);
  size_t i = 0, j = h, k = 0;
  while (i < h && j < n) {
    /* the right one first only when strictly smaller: ties keep order */
    int right = cmp(b + j * size, b + i * size, ctx) < 0;
    memcpy(t + k++ * size, b + (right ? j++ : i++) * size, size);
  }
  memcpy(t + k * size, b + i * size, (h - i) * size);
  k += h - i;
  memcpy(t + k * size, b + j * size, (n - j) * size);
  memcpy(b, t, n * size);
}
