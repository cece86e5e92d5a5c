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
  size_t offset, limit;
  pmcp__trk_window_args(call, &offset, &limit);
  pmcp__trk_page p;
  pmcp__trk_page_begin(&p, call, offset, total, NULL, NULL);
  pmcp__trk_list(&p, "workspaces");
  size_t pos = 0, seen = 0; /* seen: every item read, as the count above */
  int full = 0;
  for (size_t k = 0; !full && k < nw; k++) {
    pmcp__window *w = &ws[k];
    for (size_t i = 0; !full && i < pmcp__window_count(w) && seen < max; i++, seen++) {
      const char *wid;
      size_t n;
      workspace_id(w, i, &tmp, &wid, &n);
      snprintf(id, sizeof id, "%.*s", (int)(n < sizeof id ? n : sizeof id - 1), wid);
      const cJSON *role = allowed ? cJSON_GetObjectItemCaseSensitive(allowed, id) : NULL;
      if (allowed && !cJSON_IsString(role))
        continue;
      if (pos++ < offset || pos > offset + limit)
        continue;
      pmcp_json *j = pmcp__trk_item(&p);
      if (!j) {
        full = 1; /* the budget filled the page, or a step failed */
        break;
      }
      /* the id again: the name's decoding may have reused tmp */
      char idc[300];
      snprintf(idc, sizeof idc, "%s", id);
      workspace_item(j, w, i, idc, strlen(idc), role ? role->valuestring : tk->role, tk, &tmp);
      pmcp__trk_item_end(&p);
    }
  }
  if (!full && dflt && pos++ >= offset && pos <= offset + limit) {
    pmcp_json *j = pmcp__trk_item(&p);
    if (j) {
      workspace_item(j, NULL, 0, "default", 7, dflt->valuestring, tk, &tmp);
      pmcp__trk_item_end(&p);
    }
  }
  for (size_t k = 0; k < nw; k++)
    pmcp__window_free(&ws[k]);
  free(ws);
  cJSON_Delete(allowed);
  pmcp_buf_dispose(&tmp);
  return pmcp__trk_page_send(&p);
}

/* Rows read from a store listing (its items in order). */
typedef struct list_rows {
  const cJSON **item;
  const char *field_key, *field; /* a field before the list, or NULL */
} list_rows;

static int rows_of(list_rows *r, const cJSON *items, size_t *n)
{
  *n = (size_t)cJSON_GetArraySize(items);
  r->item = calloc(*n ? *n : 1, sizeof *r->item);
  if (!r->item)
    return PMCP_ENOMEM;
  size_t i = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, items) r->item[i++] = it;
  return 0;
}

static int one_field(pmcp__trk_page *p, void *ud)
{
  list_rows *r = ud;
  return r->field ? pmcp__trk_field_str(p, r->field_key, r->field) : 0;
}

static int project_row(pmcp_json *j, size_t i, void *ud)
{
  const cJSON *it = ((list_rows *)ud)->item[i];
  pmcp_json_object_begin(j);
  pmcp__trk_kstr(j, "project", after_colon(pmcp__js(it, "ref")));
  pmcp__trk_kstr(j, "name", pmcp__js(it, "name"));
  pmcp__trk_kstr(j, "workspace", after_colon(pmcp__js(it, "workspace")));
  pmcp__trk_knum(j, "run_count", pmcp__jn(it, "runs", 0));
  pmcp__trk_knum(j, "experiment_count", pmcp__jn(it, "experiments", 0));
  return pmcp_json_object_end(j);
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
  list_rows r = {NULL, "workspace", w ? wref + 10 : NULL};
  size_t n;
  int rc = rows_of(&r, ps, &n);
  if (!rc)
    rc = pmcp__trk_send_rows(call, n, "projects", one_field, project_row, &r);
  free(r.item);
  cJSON_Delete(ps);
  return rc;
}

static int experiment_row(pmcp_json *j, size_t i, void *ud)
{
  const cJSON *it = ((list_rows *)ud)->item[i];
  pmcp_json_object_begin(j);
  pmcp__trk_kstr(j, "experiment", after_colon(pmcp__js(it, "ref")));
  pmcp__trk_kstr(j, "name", pmcp__js(it, "name"));
  pmcp__trk_knum(j, "run_count", pmcp__jn(it, "runs", 0));
  return pmcp_json_object_end(j);
}

static int list_experiments(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  cJSON *proj = NULL, *es = NULL;
  if (pmcp__trk_project(call, tk, &proj))
    return 0;
  int bad = pmcp__trk_list_all(call, tk, "experiment", pmcp__js(proj, "ref"), 100000, &es);
  int rc = 0;
  if (!bad) {
    list_rows r = {NULL, "project", after_colon(pmcp__js(proj, "ref"))};
    size_t n;
    rc = rows_of(&r, es, &n);
    if (!rc)
      rc = pmcp__trk_send_rows(call, n, "experiments", one_field, experiment_row, &r);
    free(r.item);
  }
  cJSON_Delete(es);
  cJSON_Delete(proj);
  return rc;
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

/* Growing the array *p of *cap elements of @p size to hold @p n; 0 or
 * PMCP_ENOMEM. */
static int grow(void **p, size_t *cap, size_t n, size_t size)
{
  if (n <= *cap)
    return 0;
  size_t c = *cap ? *cap * 2 : 16;
  while (c < n)
    c *= 2;
  void *q = realloc(*p, c * size);
  if (!q)
    return PMCP_ENOMEM;
  *p = q;
  *cap = c;
  return 0;
}

/* An attribute path as the runs hold it: its first type, the runs with
 * it, and the runs of each type it holds. */
typedef struct def_type {
  char *type;
  size_t runs;
} def_type;
typedef struct def_ent {
  char *path;
  size_t runs;
  def_type *t;
  size_t nt, tcap;
} def_ent;
typedef struct defs_acc {
  def_ent *e;
  size_t n, cap;
} defs_acc;

static int add_defs(pmcp__trk_run *r, void *ud)
{
  defs_acc *a = ud;
  const cJSON *it;
  cJSON_ArrayForEach(it, r->attrs)
  {
    const char *type = type_of(it->string, it, r->types);
    def_ent *d = NULL;
    for (size_t i = 0; i < a->n && !d; i++)
      if (!strcmp(a->e[i].path, it->string))
        d = &a->e[i];
    if (!d) {
      if (grow((void **)&a->e, &a->cap, a->n + 1, sizeof *a->e))
        return PMCP_ENOMEM;
      d = &a->e[a->n];
      memset(d, 0, sizeof *d);
      if (!(d->path = strdup(it->string)))
        return PMCP_ENOMEM;
      a->n++;
    }
    d->runs++;
    /* a path holding values of several types says so, with the runs of each */
    def_type *t = NULL;
    for (size_t i = 0; i < d->nt && !t; i++)
      if (!strcmp(d->t[i].type, type))
        t = &d->t[i];
    if (!t) {
      if (grow((void **)&d->t, &d->tcap, d->nt + 1, sizeof *d->t))
        return PMCP_ENOMEM;
      t = &d->t[d->nt];
      t->runs = 0;
      if (!(t->type = strdup(type)))
        return PMCP_ENOMEM;
      d->nt++;
    }
    t->runs++;
  }
  return 0;
}

static void defs_free(defs_acc *a)
{
  for (size_t i = 0; i < a->n; i++) {
    for (size_t k = 0; k < a->e[i].nt; k++)
      free(a->e[i].t[k].type);
    free(a->e[i].t);
    free(a->e[i].path);
  }
  free(a->e);
}

static int by_path(const void *x, const void *y)
{
  return strcmp(((const def_ent *)x)->path, ((const def_ent *)y)->path);
}

static int def_row(pmcp_json *j, size_t i, void *ud)
{
  const def_ent *d = &((defs_acc *)ud)->e[i];
  pmcp_json_object_begin(j);
  pmcp__trk_kstr(j, "path", d->path);
  pmcp__trk_kstr(j, "type", d->nt > 1 ? "mixed" : d->t[0].type);
  pmcp__trk_knum(j, "run_count", (double)d->runs);
  if (d->nt > 1) {
    pmcp_json_key(j, "types");
    pmcp_json_object_begin(j);
    for (size_t k = 0; k < d->nt; k++)
      pmcp__trk_knum(j, d->t[k].type, (double)d->t[k].runs);
    pmcp_json_object_end(j);
  }
  return pmcp_json_object_end(j);
}

/* {"project"} before a project's list. */
static int project_field(pmcp__trk_page *p, const char *ref)
{
  return pmcp__trk_field_str(p, "project", after_colon(ref));
}

typedef struct proj_rows {
  const char *ref;
  void *acc;
} proj_rows;

static int proj_field(pmcp__trk_page *p, void *ud)
{
  return project_field(p, ((proj_rows *)ud)->ref);
}

static int def_row_of(pmcp_json *j, size_t i, void *ud)
{
  return def_row(j, i, ((proj_rows *)ud)->acc);
}

static int list_attribute_definitions(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  defs_acc a = {NULL, 0, 0};
  cJSON *proj = NULL;
  int rc = 0;
  if (!each_run(call, tk, &proj, add_defs, &a)) {
    qsort(a.e, a.n, sizeof *a.e, by_path);
    proj_rows pr = {pmcp__js(proj, "ref"), &a};
    rc = pmcp__trk_send_rows(call, a.n, "attributes", proj_field, def_row_of, &pr);
  }
  defs_free(&a);
  cJSON_Delete(proj);
  return rc;
}

/* A metric: one (key, scale, kind) over the runs, its label keys in the
 * order first seen, and its series. */
typedef struct met_ent {
  char *id; /* key \x1f scale \x1f kind: the order of the list */
  char *name, *kind;
  const char *scale;
  char **keys;
  size_t nk, kcap, series;
} met_ent;
typedef struct met_acc {
  met_ent *e;
  size_t n, cap;
} met_acc;

static int add_metrics(pmcp__trk_run *r, void *ud)
{
  met_acc *a = ud;
  if (!pmcp__trk_find_series(r, "", "STEP", NULL) && r->series_err)
    return 1;
  const cJSON *s;
  cJSON_ArrayForEach(s, r->series)
  {
    const char *scale = pmcp__trk_scale_name(pmcp__js(s, "scale"));
    char id[600];
    snprintf(id, sizeof id, "%s\x1f%s\x1f%s", pmcp__js(s, "key"), scale, pmcp__js(s, "kind"));
    met_ent *m = NULL;
    for (size_t i = 0; i < a->n && !m; i++)
      if (!strcmp(a->e[i].id, id))
        m = &a->e[i];
    if (!m) {
      if (grow((void **)&a->e, &a->cap, a->n + 1, sizeof *a->e))
        return PMCP_ENOMEM;
      m = &a->e[a->n];
      memset(m, 0, sizeof *m);
      m->scale = scale;
      m->id = strdup(id);
      m->name = strdup(pmcp__js(s, "key"));
      m->kind = strdup(pmcp__js(s, "kind"));
      a->n++;
      if (!m->id || !m->name || !m->kind)
        return PMCP_ENOMEM;
    }
    const cJSON *l;
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(s, "labels"))
    {
      int have = 0;
      for (size_t k = 0; k < m->nk && !have; k++)
        have = strcmp(m->keys[k], l->string) == 0;
      if (have)
        continue;
      if (grow((void **)&m->keys, &m->kcap, m->nk + 1, sizeof *m->keys) ||
          !(m->keys[m->nk] = strdup(l->string)))
        return PMCP_ENOMEM;
      m->nk++;
    }
    m->series++;
  }
  return 0;
}

static void met_free(met_acc *a)
{
  for (size_t i = 0; i < a->n; i++) {
    for (size_t k = 0; k < a->e[i].nk; k++)
      free(a->e[i].keys[k]);
    free(a->e[i].keys);
    free(a->e[i].id);
    free(a->e[i].name);
    free(a->e[i].kind);
  }
  free(a->e);
}

static int by_id(const void *x, const void *y)
{
  return strcmp(((const met_ent *)x)->id, ((const met_ent *)y)->id);
}

static int met_row(pmcp_json *j, size_t i, void *ud)
{
  const met_ent *m = &((met_acc *)((proj_rows *)ud)->acc)->e[i];
  pmcp_json_object_begin(j);
  pmcp__trk_kstr(j, "name", m->name);
  pmcp__trk_kstr(j, "scale", m->scale);
  pmcp__trk_kstr(j, "kind", m->kind);
  pmcp_json_key(j, "label_keys");
  pmcp_json_array_begin(j);
  for (size_t k = 0; k < m->nk; k++)
    pmcp_json_string(j, m->keys[k]);
  pmcp_json_array_end(j);
  pmcp__trk_knum(j, "series_count", (double)m->series);
  return pmcp_json_object_end(j);
}

static int list_metrics(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  met_acc a = {NULL, 0, 0};
  cJSON *proj = NULL;
  int rc = 0;
  if (!each_run(call, tk, &proj, add_metrics, &a)) {
    qsort(a.e, a.n, sizeof *a.e, by_id);
    proj_rows pr = {pmcp__js(proj, "ref"), &a};
    rc = pmcp__trk_send_rows(call, a.n, "metrics", proj_field, met_row, &pr);
  }
  met_free(&a);
  cJSON_Delete(proj);
  return rc;
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
