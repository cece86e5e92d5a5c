/* SPDX-License-Identifier: MIT */
/* Discovery tools of the tracking toolset: list_workspaces, list_projects,
 * list_experiments, list_attribute_definitions and list_metrics. Each
 * reads its whole listing from the store, then pages it by offset. */
#include "tracking/tracking.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/lists.h"
#include "research/page.h"
#include "util/cnum.h"

static const char *after_colon(const char *ref)
{
  const char *c = strchr(ref, ':');
  return c ? c + 1 : ref;
}

/* With a host's scope hook: {workspace id: role} of the workspaces the
 * caller may act in (*out NULL without a hook); 1 after sending an error. */
static int allowed_workspaces(pmcp_call *call, pmcp__tracking *tk, cJSON **out)
{
  *out = NULL;
  if (!tk->scope)
    return 0;
  if (!tk->scope_list) {
    *out = cJSON_CreateObject();
    if (*out && tk->scope->workspace)
      cJSON_AddStringToObject(*out, tk->scope->workspace, pmcp_call_scope_role(tk->scope));
  } else {
    pmcp_buf b = PMCP_BUF_INIT;
    int rc = tk->scope_list(call, &b, tk->rs->scope_ud);
    *out = rc == 0 && b.ptr ? cJSON_ParseWithLength(b.ptr, b.len) : NULL;
    pmcp_buf_dispose(&b);
    if (*out && !cJSON_IsObject(*out)) {
      cJSON_Delete(*out);
      *out = NULL;
    }
  }
  if (!*out) {
    pmcp__rs_fail(call, PMCP_TERR_STORE, "the workspaces of this connection could not be read");
    return 1;
  }
  return 0;
}

/* One workspace of the answer: its store item @p i of @p w (or, @p w
 * NULL, the default workspace that has no row yet). */
static void workspace_item(pmcp_json *j, const pmcp__window *w, size_t i, const char *id,
                           size_t id_len, const char *role, const pmcp__tracking *tk,
                           pmcp_buf *tmp)
{
  pmcp_json_object_begin(j);
  pmcp_json_key(j, "workspace");
  pmcp_json_string_n(j, id, id_len);
  pmcp_json_key(j, "name");
  const char *v = NULL, *s = "";
  size_t vl = 0, n = 0;
  if (w && pmcp__window_member(w, i, "name", &v, &vl) && !pmcp__json_str_of(v, vl, tmp, &s, &n))
    s = "", n = 0;
  pmcp_json_string_n(j, w ? s : "default", w ? n : 7);
  pmcp_json_key(j, "project_count");
  if (w && pmcp__window_member(w, i, "projects", &v, &vl) && vl &&
      (*v == '-' || (*v >= '0' && *v <= '9')))
    pmcp__rs_number(j, pmcp__c_strtod(v, NULL));
  else
    pmcp_json_int(j, 0);
  pmcp_json_key(j, "role");
  pmcp_json_string(j, role);
  if (tk->scope) {
    pmcp_json_key(j, "current");
    const char *cur = pmcp_call_scope_workspace(tk->scope);
    pmcp_json_bool(j, cur && strlen(cur) == id_len && memcmp(cur, id, id_len) == 0);
  }
  pmcp_json_object_end(j);
}

/* The id of store item @p i (its ref after the colon) in *id, *n. */
static int workspace_id(const pmcp__window *w, size_t i, pmcp_buf *tmp, const char **id,
                        size_t *n)
{
  const char *v;
  size_t vl;
  *id = "";
  *n = 0;
  if (!pmcp__window_member(w, i, "ref", &v, &vl) || !pmcp__json_str_of(v, vl, tmp, id, n))
    return 0;
  const char *c = memchr(*id, ':', *n);
  if (c) {
    *n -= (size_t)(c + 1 - *id);
    *id = c + 1;
  }
  return 1;
}

static int list_workspaces(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  cJSON *allowed = NULL;
  if (allowed_workspaces(call, tk, &allowed))
    return 0;
  /* The lab's workspaces are read unscoped (this call's scope is one
   * workspace), then only those the caller may use are shown. The store's
   * pages stay text: each shown item is written from it. */
  pmcp__research lab = *tk->rs;
  lab.tenant.workspace = 0;
  lab.tenant.unfiled = 0;
  static const char *const keys[] = {"ref", NULL};
  pmcp__list_req q = {"workspaces", "workspace", NULL, NULL, NULL, 0, keys, 1000, 0, NULL};
  pmcp__window *ws = NULL;
  size_t nw = 0, total = 0, raw = 0, max = 100000;
  char err[300] = "out of memory";
  char id[300];
  pmcp_buf tmp = PMCP_BUF_INIT;
  int rc = 0;
  for (const char *after = NULL;;) {
    pmcp__window *nws = realloc(ws, (nw + 1) * sizeof *ws);
    if (!nws) {
      rc = PMCP_ENOMEM;
      break;
    }
    ws = nws;
    rc = pmcp__fetch_text(&lab, &q, after, 0, &ws[nw], err, sizeof err);
    if (rc)
      break;
    pmcp__window *w = &ws[nw++];
    /* only what the caller may see is counted */
    for (size_t i = 0; i < pmcp__window_count(w) && raw < max; i++, raw++) {
      const char *wid;
      size_t n;
      workspace_id(w, i, &tmp, &wid, &n);
      snprintf(id, sizeof id, "%.*s", (int)(n < sizeof id ? n : sizeof id - 1), wid);
      const cJSON *role = allowed ? cJSON_GetObjectItemCaseSensitive(allowed, id) : NULL;
      if (!allowed || cJSON_IsString(role))
        total++;
    }
    after = raw < max ? w->next : NULL;
    if (!after)
      break;
  }
  if (rc) {
    for (size_t k = 0; k < nw; k++)
      pmcp__window_free(&ws[k]);
    free(ws);
    cJSON_Delete(allowed);
    pmcp_buf_dispose(&tmp);
    return pmcp__rs_fail(call, rc == PMCP_ENOTFOUND ? PMCP_TERR_NOT_FOUND : PMCP_TERR_STORE,
                         "%s", err);
  }
  /* The default workspace has no row until a project is filed in it. */
  const cJSON *dflt = NULL;
  if (allowed) {
    const cJSON *it;
    cJSON_ArrayForEach(it, allowed)
    {
      if (!cJSON_IsString(it) || strcmp(it->string, "default") != 0)
        continue;
      int listed = 0;
      for (size_t k = 0; k < nw && !listed; k++)
        for (size_t i = 0; i < pmcp__window_count(&ws[k]) && !listed; i++) {
          const char *wid;
          size_t n;
          listed = workspace_id(&ws[k], i, &tmp, &wid, &n) && n == 7 &&
                   !memcmp(wid, "default", 7);
        }
      if (!listed && !dflt) {
        dflt = it;
        total++;
      }
    }
  }
  pmcp_page *pg = NULL;
  size_t offset = 0, limit = 0;
  rc = pmcp__trk_page_open(call, &pg, "workspaces", &offset, &limit, total);
  size_t pos = 0, seen = 0;
  for (size_t k = 0; !rc && k < nw; k++) {
    pmcp__window *w = &ws[k];
    for (size_t i = 0; !rc && i < pmcp__window_count(w) && seen < max; i++) {
      const char *wid;
      size_t n;
      workspace_id(w, i, &tmp, &wid, &n);
      snprintf(id, sizeof id, "%.*s", (int)(n < sizeof id ? n : sizeof id - 1), wid);
      const cJSON *role = allowed ? cJSON_GetObjectItemCaseSensitive(allowed, id) : NULL;
      if (allowed && !cJSON_IsString(role))
        continue;
      seen++;
      if (pos++ < offset || pos > offset + limit)
        continue;
      pmcp_json *j = pmcp_page_item(pg);
      if (!j) {
        rc = pmcp_page_status(pg) ? pmcp_page_status(pg) : PMCP_ENOMEM;
        break;
      }
      /* the id again: the name's decoding may have reused tmp */
      char idc[300];
      snprintf(idc, sizeof idc, "%s", id);
      workspace_item(j, w, i, idc, strlen(idc), role ? role->valuestring : tk->role, tk, &tmp);
      rc = pmcp_page_commit(pg, NULL, 0);
    }
  }
  if (!rc && dflt && pos++ >= offset && pos <= offset + limit) {
    pmcp_json *j = pmcp_page_item(pg);
    if (!j)
      rc = pmcp_page_status(pg) ? pmcp_page_status(pg) : PMCP_ENOMEM;
    else {
      workspace_item(j, NULL, 0, "default", 7, dflt->valuestring, tk, &tmp);
      rc = pmcp_page_commit(pg, NULL, 0);
    }
  }
  for (size_t k = 0; k < nw; k++)
    pmcp__window_free(&ws[k]);
  free(ws);
  cJSON_Delete(allowed);
  pmcp_buf_dispose(&tmp);
  return pmcp__trk_page_close(call, pg, rc);
}

static int list_projects(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  const char *w = NULL;
  pmcp_arg_string(call, "workspace", &w, NULL);
  if (!w || !*w)
    w = tk->workspace;
  char wref[300];
  if (w)
    snprintf(wref, sizeof wref, "%s%s", strncmp(w, "workspace:", 10) ? "workspace:" : "", w);
  cJSON *ps = NULL;
  if (w) {
    /* A missing workspace is named, not an empty list. */
    cJSON *rec = NULL;
    char err[300];
    int rc = pmcp__rs_get(tk->rs, wref, &rec, err, sizeof err);
    cJSON_Delete(rec);
    if (rc)
      return pmcp__rs_fail(call, rc == PMCP_ENOTFOUND ? PMCP_TERR_NOT_FOUND : PMCP_TERR_STORE,
                           rc == PMCP_ENOTFOUND ? "workspace '%s' not found" : "%s",
                           rc == PMCP_ENOTFOUND ? wref + 10 : err);
  }
  if (pmcp__trk_list_all(call, tk, "project", w ? wref : NULL, 100000, &ps))
    return 0;
  cJSON *all = cJSON_CreateArray();
  const cJSON *it;
  cJSON_ArrayForEach(it, ps)
  {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "project", after_colon(pmcp__js(it, "ref")));
    cJSON_AddStringToObject(o, "name", pmcp__js(it, "name"));
    cJSON_AddStringToObject(o, "workspace", after_colon(pmcp__js(it, "workspace")));
    cJSON_AddNumberToObject(o, "run_count", pmcp__jn(it, "runs", 0));
    cJSON_AddNumberToObject(o, "experiment_count", pmcp__jn(it, "experiments", 0));
    cJSON_AddItemToArray(all, o);
  }
  cJSON_Delete(ps);
  cJSON *root = cJSON_CreateObject();
  if (w)
    cJSON_AddStringToObject(root, "workspace", wref + 10);
  return pmcp__trk_window(call, root, "projects", all);
}

static int list_experiments(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  cJSON *proj = NULL, *es = NULL;
  if (pmcp__trk_project(call, tk, &proj))
    return 0;
  int bad = pmcp__trk_list_all(call, tk, "experiment", pmcp__js(proj, "ref"), 100000, &es);
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "project", after_colon(pmcp__js(proj, "ref")));
  cJSON_Delete(proj);
  if (bad) {
    cJSON_Delete(root);
    return 0;
  }
  cJSON *all = cJSON_CreateArray();
  const cJSON *it;
  cJSON_ArrayForEach(it, es)
  {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "experiment", after_colon(pmcp__js(it, "ref")));
    cJSON_AddStringToObject(o, "name", pmcp__js(it, "name"));
    cJSON_AddNumberToObject(o, "run_count", pmcp__jn(it, "runs", 0));
    cJSON_AddItemToArray(all, o);
  }
  cJSON_Delete(es);
  return pmcp__trk_window(call, root, "experiments", all);
}

/* The type the seed's clients know for a value read from a run row. */
static const char *type_of(const char *path, const cJSON *v, const cJSON *types)
{
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(types, path);
  if (cJSON_IsString(t))
    return t->valuestring;
  if (strstr(path, "_time"))
    return "datetime";
  if (cJSON_IsArray(v))
    return "string_set";
  if (cJSON_IsBool(v))
    return "bool";
  if (cJSON_IsNumber(v))
    return "float";
  return "string";
}

/* Runs of the call's project, loaded as filter rows, fed to @p each. */
static int each_run(pmcp_call *call, pmcp__tracking *tk, cJSON **proj,
                    int (*each)(pmcp__trk_run *r, void *ud), void *ud)
{
  cJSON *runs = NULL;
  if (pmcp__trk_project(call, tk, proj))
    return 1;
  if (pmcp__trk_list_all(call, tk, "run", pmcp__js(*proj, "ref"), 200000, &runs))
    return 1;
  const cJSON *item;
  char err[300];
  cJSON_ArrayForEach(item, runs)
  {
    pmcp__trk_run r;
    if (pmcp__trk_run_load(tk, item, &r, err, sizeof err) || each(&r, ud)) {
      pmcp__trk_run_dispose(&r);
      cJSON_Delete(runs);
      pmcp__rs_fail(call, PMCP_TERR_STORE, "cannot read the runs of the project");
      return 1;
    }
    pmcp__trk_run_dispose(&r);
  }
  cJSON_Delete(runs);
  return 0;
}

typedef struct defs_acc {
  cJSON *seen;  /* path -> {"path","type","run_count"} */
} defs_acc;

static int add_defs(pmcp__trk_run *r, void *ud)
{
  defs_acc *a = ud;
  const cJSON *it;
  cJSON_ArrayForEach(it, r->attrs)
  {
    cJSON *d = cJSON_GetObjectItemCaseSensitive(a->seen, it->string);
    const char *type = type_of(it->string, it, r->types);
    if (!d) {
      d = cJSON_CreateObject();
      cJSON_AddStringToObject(d, "path", it->string);
      cJSON_AddStringToObject(d, "type", type);
      cJSON_AddNumberToObject(d, "run_count", 0);
      cJSON_AddObjectToObject(d, "types");
      cJSON_AddItemToObject(a->seen, it->string, d);
    }
    cJSON *n = cJSON_GetObjectItemCaseSensitive(d, "run_count");
    cJSON_SetNumberValue(n, n->valuedouble + 1);
    /* a path holding values of several types says so, with the runs of each */
    cJSON *types = cJSON_GetObjectItemCaseSensitive(d, "types");
    cJSON *tn = cJSON_GetObjectItemCaseSensitive(types, type);
    if (tn)
      cJSON_SetNumberValue(tn, tn->valuedouble + 1);
    else
      cJSON_AddNumberToObject(types, type, 1);
  }
  return 0;
}

static int list_attribute_definitions(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  defs_acc a = {cJSON_CreateObject()};
  cJSON *proj = NULL;
  if (each_run(call, tk, &proj, add_defs, &a)) {
    cJSON_Delete(a.seen);
    cJSON_Delete(proj);
    return 0;
  }
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "project", after_colon(pmcp__js(proj, "ref")));
  cJSON_Delete(proj);
  cJSON *all = pmcp__trk_sorted_values(a.seen);
  cJSON_Delete(a.seen);
  if (!all) {
    cJSON_Delete(root);
    return PMCP_ENOMEM;
  }
  cJSON *d;
  cJSON_ArrayForEach(d, all)
  {
    if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "types")) > 1)
      cJSON_SetValuestring(cJSON_GetObjectItemCaseSensitive(d, "type"), "mixed");
    else
      cJSON_DeleteItemFromObjectCaseSensitive(d, "types");
  }
  return pmcp__trk_window(call, root, "attributes", all);
}

static int add_metrics(pmcp__trk_run *r, void *ud)
{
  cJSON *seen = ud;
  if (!pmcp__trk_find_series(r, "", "STEP", NULL) && r->series_err)
    return 1;
  const cJSON *s;
  cJSON_ArrayForEach(s, r->series)
  {
    const char *scale = pmcp__trk_scale_name(pmcp__js(s, "scale"));
    char id[600];
    snprintf(id, sizeof id, "%s\x1f%s\x1f%s", pmcp__js(s, "key"), scale, pmcp__js(s, "kind"));
    cJSON *m = cJSON_GetObjectItemCaseSensitive(seen, id);
    if (!m) {
      m = cJSON_CreateObject();
      cJSON_AddStringToObject(m, "name", pmcp__js(s, "key"));
      cJSON_AddStringToObject(m, "scale", scale);
      cJSON_AddStringToObject(m, "kind", pmcp__js(s, "kind"));
      cJSON_AddItemToObject(m, "label_keys", cJSON_CreateArray());
      cJSON_AddNumberToObject(m, "series_count", 0);
      cJSON_AddItemToObject(seen, id, m);
    }
    cJSON *keys = cJSON_GetObjectItemCaseSensitive(m, "label_keys");
    const cJSON *l;
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(s, "labels"))
    {
      int have = 0;
      const cJSON *k;
      cJSON_ArrayForEach(k, keys) if (strcmp(k->valuestring, l->string) == 0) have = 1;
      if (!have)
        cJSON_AddItemToArray(keys, cJSON_CreateString(l->string));
    }
    cJSON *n = cJSON_GetObjectItemCaseSensitive(m, "series_count");
    cJSON_SetNumberValue(n, n->valuedouble + 1);
  }
  return 0;
}

static int list_metrics(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  cJSON *seen = cJSON_CreateObject(), *proj = NULL;
  if (each_run(call, tk, &proj, add_metrics, seen)) {
    cJSON_Delete(seen);
    cJSON_Delete(proj);
    return 0;
  }
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "project", after_colon(pmcp__js(proj, "ref")));
  cJSON_Delete(proj);
  cJSON *all = pmcp__trk_sorted_values(seen);
  cJSON_Delete(seen);
  if (!all) {
    cJSON_Delete(root);
    return PMCP_ENOMEM;
  }
  return pmcp__trk_window(call, root, "metrics", all);
}

static const pmcp_arg_spec ws_args[] = {PMCP__TRK_ARG_LIMIT("50"), PMCP__TRK_ARG_OFFSET};
static const pmcp_arg_spec projects_args[] = {PMCP__TRK_ARG_WORKSPACE,
                                              PMCP__TRK_ARG_LIMIT("50"), PMCP__TRK_ARG_OFFSET};
static const pmcp_arg_spec project_args[] = {PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT,
                                             PMCP__TRK_ARG_LIMIT("50"), PMCP__TRK_ARG_OFFSET};

#define N(a) (sizeof a / sizeof a[0])

int pmcp__trk_add_discovery(pmcp_server *server, pmcp__tracking *tk)
{
  int rc = pmcp__trk_add_tool(server, tk, "list_workspaces", NULL,
               "Workspaces you may use, with your role.",
               ws_args, N(ws_args), list_workspaces);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "list_projects", NULL,
             "Projects with run and experiment counts.",
             projects_args, N(projects_args), list_projects);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "list_experiments", NULL,
             "Experiments of a project with run counts.", project_args,
             N(project_args), list_experiments);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "list_attribute_definitions", NULL,
             "Attribute paths and types of a project's runs.",
             project_args, N(project_args), list_attribute_definitions);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "list_metrics", NULL,
             "Metrics of a project: scale, kind, label keys.",
             project_args, N(project_args), list_metrics);
  return rc;
}
