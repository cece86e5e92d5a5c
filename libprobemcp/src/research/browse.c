/* SPDX-License-Identifier: MIT */
/* `browse`: "what exists here?" Lists the lab's structure and catalogs,
 * one mode per question. Every list pages through the store's
 * positions; a cursor's state is {"l": list, "p": parent ref, "a": store
 * position, "s": items of that store page already shown}, so a page cut by
 * the budget in the middle of a store page resumes at the exact item. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/call.h"
#include "research/lists.h"
#include "research/page.h"
#include "research/refs.h"
#include "research/research.h"

/* ---- argument specs ------------------------------------------------- */

#define LIMIT(maxv)                                                        \
  {"limit", PMCP_T_INTEGER, 0, "items per list", 1, 1, 1, maxv, NULL, "10"}
#define DELETED                                                            \
  {"include_deleted", PMCP_T_BOOLEAN, 0, "also deleted ones (marked)", 0, 0, \
   0, 0, NULL, "false"}
#define QUERY(what)                                                        \
  {"query", PMCP_T_STRING, 0, what, 1, 1, 1, 200, NULL, NULL}
#define STR(n, d) {n, PMCP_T_STRING, 0, d, 1, 0, 1, 0, NULL, NULL}
#define BOOL(n, d) {n, PMCP_T_BOOLEAN, 0, d, 0, 0, 0, 0, NULL, NULL}

static const pmcp_arg_spec tree_args[] = {
  STR("ref", "project or experiment ref; absent: the root"),
  {"depth", PMCP_T_INTEGER, 0, "levels below ref", 1, 1, 1, 3, NULL,
   "2"},
  LIMIT(200),
  DELETED,
};
static const pmcp_arg_spec runs_args[] = {
  STR("project", "project:ID or ID"),
  STR("experiment", "experiment:ID or ID"),
  BOOL("active", "only running runs"),
  LIMIT(200),
  DELETED,
};
static const pmcp_arg_spec ws_args[] = {LIMIT(200)};
static const pmcp_arg_spec notes_args[] = {
  QUERY("literal text to match"),
  STR("on", "a project, experiment or run ref"),
  LIMIT(200),
  DELETED,
};
/* files also reads the common `workspace` (research/scope.c): that
 * workspace's folder; absent: the Shared folder. */
static const pmcp_arg_spec files_args[] = {
  QUERY("literal text to match"),
  LIMIT(200),
};
static const pmcp_arg_spec datasets_args[] = {
  BOOL("registered", "false: dataset files runs logged unregistered"),
  STR("project", "project:ID or ID"),
  QUERY("literal text to match"),
  LIMIT(200),
};
static const pmcp_arg_spec ckpt_args[] = {
  STR("project", "project:ID or ID"),
  STR("experiment", "experiment:ID or ID"),
  STR("run", "run:ID or ID"),
  BOOL("best", "only each run's best"),
  BOOL("stored", "false: recorded only, no files"),
  LIMIT(200),
  DELETED,
};
static const pmcp_arg_spec src_args[] = {
  STR("provider", "hf, s3, gcs, url, ..."),
  STR("kind", "model, dataset, bucket, ..."),
  QUERY("literal text to match"),
  LIMIT(200),
};

#define N(a) (sizeof a / sizeof a[0])
/* The modes in the order of modes[]: the handler switches on the index
 * pmcp_call_mode_index() gives. */
enum browse_mode {
  M_TREE,
  M_RUNS,
  M_WORKSPACES,
  M_NOTES,
  M_FILES,
  M_DATASETS,
  M_CHECKPOINTS,
  M_SOURCES,
  M_COUNT
};
static const pmcp_mode_spec modes[] = {
  {"tree", "projects > experiments > runs", tree_args, N(tree_args)},
  {"runs", "newest first",
   runs_args, N(runs_args)},
  {"workspaces", NULL, ws_args, N(ws_args)},
  {"notes", NULL, notes_args,
   N(notes_args)},
  {"files", "the Shared or a workspace's folder", files_args,
   N(files_args)},
  {"datasets", NULL, datasets_args,
   N(datasets_args)},
  {"checkpoints", NULL, ckpt_args,
   N(ckpt_args)},
  {"sources", "external, with their runs", src_args,
   N(src_args)},
};
_Static_assert(N(modes) == M_COUNT, "enum browse_mode follows modes[]");

/* ---- what each list shows of a record -------------------------------- */

static const char *const k_project[] = {"ref", "name", "description",
                                        "workspace", "runs", "experiments",
                                        "created", "deleted", NULL};
static const char *const k_experiment[] = {"ref", "name", "description",
                                           "runs", "created", "deleted",
                                           NULL};
static const char *const k_run[] = {"ref", "name", "status", "experiment",
                                    "project", "created", "ended",
                                    "deleted", NULL};
static const char *const k_ws[] = {"ref", "name", "description", "created",
                                   NULL};
static const char *const k_note[] = {"ref", "on", "note_kind", "title",
                                     "excerpt", "chars", "author", "via",
                                     "updated", "deleted", NULL};
static const char *const k_file[] = {"ref", "path", "workspace", "size",
                                     "media_type", "sha256", "uri",
                                     "created", NULL};
static const char *const k_dataset[] = {"ref", "name", "project",
                                        "registered", "versions", "latest",
                                        "uri", "description", "created",
                                        NULL};
static const char *const k_ckpt[] = {"ref", "run", "step", "best", "stored",
                                     "metric", "value", "uri", "size",
                                     "created", "deleted", NULL};
static const char *const k_source[] = {"ref", "provider", "kind", "uri",
                                       "version", "runs", "description",
                                       NULL};

static int list_fail(pmcp_call *call, int rc, const char *err)
{
  if (rc == PMCP_ECURSOR)
    return pmcp__rs_restart(call, "stale", "%s. Call browse again without `cursor` to start over.",
                            err);
  return pmcp__rs_fail(call, rc == PMCP_ENOTFOUND ? PMCP_TERR_NOT_FOUND
                             : rc == PMCP_EINVAL   ? PMCP_TERR_INVALID_ARGUMENT
                                                   : PMCP_TERR_STORE,
                       "%s", err);
}

/* One flat list as the whole page. */
static int flat(pmcp_call *call, pmcp__research *rs, const pmcp__list_req *q,
                const cJSON *st, cJSON *root)
{
  const char *after;
  size_t skip;
  pmcp__state_pos(st, &after, &skip);
  pmcp__list_req qa = *q;
  qa.anchor = pmcp__state_anchor(st);
  pmcp__window w;
  char err[512];
  int rc = pmcp__fetch(rs, &qa, after, skip, &w, err, sizeof err);
  if (rc) {
    cJSON_Delete(root);
    return list_fail(call, rc, err);
  }
  if (w.total >= 0)
    cJSON_AddNumberToObject(root, "total", w.total);
  if (w.total >= 0 && w.total_estimated)
    cJSON_AddBoolToObject(root, "total_estimated", 1);
  cJSON *items = w.items;
  w.items = NULL;
  rc = pmcp__rs_emit(call, rs, root, q->list, items, pmcp__window_next, &w);
  pmcp__window_free(&w);
  return rc;
}

/* ---- argument helpers ------------------------------------------------- */

static const char *opt_str(pmcp_call *call, const char *name)
{
  const char *v = NULL;
  if (!pmcp_arg_has(call, name) || pmcp_arg_string(call, name, &v, NULL))
    return NULL;
  return v;
}

static int opt_bool(pmcp_call *call, const char *name, int *set)
{
  int v = 0;
  *set = pmcp_arg_has(call, name) && pmcp_arg_bool(call, name, &v) == 0;
  return *set ? v : 0;
}

static size_t limit_of(pmcp_call *call)
{
  int64_t v = 10;
  if (pmcp_arg_int(call, "limit", &v) || v < 1)
    v = 10;
  return (size_t)v;
}

/* Normalizes an argument naming an entity of @p kind: accepts "kind:ID"
 * and the bare "ID"; any other kind is refused. */
static int norm_ref(pmcp_call *call, const char *arg, pmcp__ref_kind kind,
                    char *out, size_t size)
{
  const char *v = opt_str(call, arg);
  out[0] = '\0';
  if (!v)
    return 0;
  pmcp__ref r;
  char err[256];
  int rc;
  if (!strchr(v, ':')) {
    char tmp[PMCP__REF_MAX + 40];
    snprintf(tmp, sizeof tmp, "%s:%s", pmcp__ref_kind_name(kind), v);
    rc = pmcp__ref_parse(&r, tmp, err, sizeof err);
  } else {
    rc = pmcp__ref_parse(&r, v, err, sizeof err);
  }
  if (rc) {
    pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "%s: %s", arg, err);
    return 1;
  }
  if (r.kind != kind) {
    pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                  "%s: expected a %s ref (%s:ID or the bare ID), got a %s "
                  "ref",
                  arg, pmcp__ref_kind_name(kind), pmcp__ref_kind_name(kind),
                  pmcp__ref_kind_name(r.kind));
    return 1;
  }
  pmcp__ref_format(&r, out, size);
  return 0;
}

/* ---- tree ------------------------------------------------------------- */

typedef struct tree_ctx {
  pmcp_call *call;
  pmcp__research *rs;
  size_t limit;
  int include_deleted;
  size_t nested_limit; /* items per nested list (shrinks to fit) */
} tree_ctx;

static const pmcp__list_req *children_req(pmcp__ref_kind parent_kind,
                                    pmcp__list_req *q, const char *parent,
                                    const tree_ctx *t)
{
  memset(q, 0, sizeof *q);
  q->parent = parent;
  q->limit = t->limit;
  q->include_deleted = t->include_deleted;
  q->excerpt = 120;
  if (parent_kind == PMCP__REF_NONE) {
    q->list = "projects";
    q->kind = "project";
    q->keys = k_project;
  } else if (parent_kind == PMCP__REF_PROJECT) {
    q->list = "experiments";
    q->kind = "experiment";
    q->keys = k_experiment;
  } else {
    q->list = "runs";
    q->kind = "run";
    q->keys = k_run;
  }
  return q;
}

/* Attaches the children of @p item (levels left: @p depth) as a nested
 * list with its own total and <list>_cursor. */
static int nest(tree_ctx *t, cJSON *item, pmcp__ref_kind kind, int depth,
                char *err, size_t errlen)
{
  if (depth <= 0 || kind == PMCP__REF_RUN)
    return 0;
  const char *ref = pmcp__js(item, "ref");
  if (!*ref)
    return 0;
  char parent[PMCP__REF_MAX + 1];
  snprintf(parent, sizeof parent, "%s", ref);
  pmcp__list_req q;
  children_req(kind, &q, parent, t);
  q.limit = t->nested_limit ? t->nested_limit : t->limit;
  pmcp__window w;
  int rc = pmcp__fetch(t->rs, &q, NULL, 0, &w, err, errlen);
  if (rc)
    return rc;
  pmcp__ref_kind child = kind == PMCP__REF_PROJECT ? PMCP__REF_EXPERIMENT
                                                   : PMCP__REF_RUN;
  const cJSON *c;
  cJSON_ArrayForEach(c, w.items)
  {
    /* the tree already says where a child is filed */
    cJSON_DeleteItemFromObject((cJSON *)c, "project");
    cJSON_DeleteItemFromObject((cJSON *)c, "experiment");
    rc = nest(t, (cJSON *)c, child, depth - 1, err, errlen);
    if (rc) {
      pmcp__window_free(&w);
      return rc;
    }
  }
  size_t shown = (size_t)cJSON_GetArraySize(w.items);
  char key[64];
  if (w.total >= 0) {
    snprintf(key, sizeof key, "%s_total", q.list);
    cJSON_AddNumberToObject(item, key, w.total);
    snprintf(key, sizeof key, "%s_total_estimated", q.list);
    if (w.total_estimated)
      cJSON_AddBoolToObject(item, key, 1);
  }
  cJSON_AddItemToObject(item, q.list, w.items);
  w.items = NULL;
  cJSON *st = pmcp__window_next(shown, &w);
  if (st) {
    const char *args = NULL;
    if (pmcp__call_cursor_args(t->call, &args))
      args = "{}";
    char *cur = pmcp__rs_cursor_mint(t->call, t->rs, pmcp_call_name(t->call),
                                     args, st);
    cJSON_Delete(st);
    if (cur) {
      snprintf(key, sizeof key, "%s_cursor", q.list);
      cJSON_AddStringToObject(item, key, cur);
      free(cur);
    }
  }
  pmcp__window_free(&w);
  return 0;
}

static int tree(pmcp_call *call, pmcp__research *rs, const cJSON *st)
{
  tree_ctx t = {call, rs, limit_of(call), 0, 0};
  int set;
  t.include_deleted = opt_bool(call, "include_deleted", &set);
  int64_t depth = 2;
  if (pmcp_arg_int(call, "depth", &depth) || depth < 1)
    depth = 2;
  char ref[PMCP__REF_MAX + 1] = "";
  pmcp__ref r = {0};
  const char *rv = opt_str(call, "ref");
  if (rv) {
    char err[256];
    if (pmcp__ref_parse(&r, rv, err, sizeof err))
      return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "ref: %s", err);
    if (r.kind != PMCP__REF_PROJECT && r.kind != PMCP__REF_EXPERIMENT)
      return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                           "ref: tree opens a project: or experiment: ref; "
                           "read a %s with entity",
                           pmcp__ref_kind_name(r.kind));
    pmcp__ref_format(&r, ref, sizeof ref);
  }
  /* Which list does the cursor continue? The top one, "unfiled", or a
   * nested list under state.p. */
  const char *cl = st ? pmcp__js(st, "l") : "";
  const char *cp = st ? pmcp__js(st, "p") : "";
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "mode", "tree");
  if (*ref)
    cJSON_AddStringToObject(root, "ref", ref);

  pmcp__list_req q;
  char err[512];
  if (strcmp(cl, "unfiled") == 0) {
    memset(&q, 0, sizeof q);
    q.list = "unfiled";
    q.kind = "run";
    q.filter = "{\"unfiled\":true}";
    q.keys = k_run;
    q.limit = t.limit;
    q.include_deleted = t.include_deleted;
    return flat(call, rs, &q, st, root);
  }
  pmcp__ref_kind top = *ref ? r.kind : PMCP__REF_NONE;
  const char *parent = *ref ? ref : NULL;
  int nested_depth = (int)depth - 1;
  if (*cp) {
    /* A nested <list>_cursor: continue that parent's children only. */
    pmcp__ref pr;
    if (pmcp__ref_parse(&pr, cp, err, sizeof err))
      return cJSON_Delete(root), pmcp__rs_restart(call, "malformed",
                                                 "invalid cursor state; call browse again "
                                                 "without `cursor` to start over.");
    top = pr.kind;
    parent = cp;
    cJSON_AddStringToObject(root, "parent", cp);
    nested_depth = 0;
  }
  children_req(top, &q, parent, &t);
  const char *after;
  size_t skip;
  pmcp__state_pos(st, &after, &skip);
  q.anchor = pmcp__state_anchor(st);
  pmcp__window w;
  int rc = pmcp__fetch(rs, &q, after, skip, &w, err, sizeof err);
  if (rc) {
    cJSON_Delete(root);
    return list_fail(call, rc, err);
  }
  pmcp__ref_kind child = top == PMCP__REF_NONE      ? PMCP__REF_PROJECT
                         : top == PMCP__REF_PROJECT ? PMCP__REF_EXPERIMENT
                                                    : PMCP__REF_RUN;
  /* Nest each item's children; an item that would not fit a page on its
   * own gets fewer nested items (then one level less), each cut list
   * keeping its <list>_cursor, so the page always shows something. */
  cJSON *c = w.items->child;
  while (c) {
    cJSON *next = c->next;
    cJSON *orig = cJSON_Duplicate(c, 1);
    size_t lim = t.limit;
    int d = nested_depth, shrunk = 0;
    for (;;) {
      t.nested_limit = lim;
      rc = nest(&t, c, child, d, err, sizeof err);
      if (rc) {
        cJSON_Delete(orig);
        pmcp__window_free(&w);
        cJSON_Delete(root);
        return list_fail(call, rc, err);
      }
      if (d <= 0 || pmcp__rs_fits(call, c, 250))
        break;
      cJSON *fresh = cJSON_Duplicate(orig, 1);
      cJSON_ReplaceItemViaPointer(w.items, c, fresh);
      c = fresh;
      shrunk = 1;
      if (lim > 1)
        lim /= 2;
      else
        d--;
    }
    if (shrunk)
      cJSON_AddStringToObject(c, "nested",
                              "cut to fit token_budget: follow the "
                              "<list>_cursor values or open this ref");
    cJSON_Delete(orig);
    c = next;
  }
  if (w.total >= 0) {
    char key[64];
    snprintf(key, sizeof key, "%s_total", q.list);
    cJSON_AddNumberToObject(root, key, w.total);
    snprintf(key, sizeof key, "%s_total_estimated", q.list);
    if (w.total_estimated)
      cJSON_AddBoolToObject(root, key, 1);
  }
  /* At the lab root's first page, also the runs not filed in a project. */
  if (top == PMCP__REF_NONE && !st) {
    pmcp__list_req uq = {"unfiled", "run", NULL, NULL, "{\"unfiled\":true}",
                   t.include_deleted, k_run, t.limit, 120, NULL};
    pmcp__window uw;
    rc = pmcp__fetch(rs, &uq, NULL, 0, &uw, err, sizeof err);
    if (rc) {
      pmcp__window_free(&w);
      cJSON_Delete(root);
      return list_fail(call, rc, err);
    }
    size_t shown = (size_t)cJSON_GetArraySize(uw.items);
    if (uw.total >= 0)
      cJSON_AddNumberToObject(root, "unfiled_total", uw.total);
    if (uw.total >= 0 && uw.total_estimated)
      cJSON_AddBoolToObject(root, "unfiled_total_estimated", 1);
    cJSON_AddItemToObject(root, "unfiled", uw.items);
    uw.items = NULL;
    cJSON *ust = pmcp__window_next(shown, &uw);
    if (ust) {
      const char *args = NULL;
      if (pmcp__call_cursor_args(call, &args))
        args = "{}";
      char *cur = pmcp__rs_cursor_mint(call, rs, pmcp_call_name(call), args,
                                       ust);
      cJSON_Delete(ust);
      if (cur) {
        cJSON_AddStringToObject(root, "unfiled_cursor", cur);
        free(cur);
      }
    }
    pmcp__window_free(&uw);
  }
  cJSON *items = w.items;
  w.items = NULL;
  rc = pmcp__rs_emit(call, rs, root, q.list, items, pmcp__window_next, &w);
  pmcp__window_free(&w);
  return rc;
}

/* ---- the handler ------------------------------------------------------ */

static int add_filter(cJSON *f, const char *key, const char *sval, int bset,
                      int bval)
{
  if (sval)
    return cJSON_AddStringToObject(f, key, sval) ? 0 : PMCP_ENOMEM;
  if (bset)
    return cJSON_AddBoolToObject(f, key, bval) ? 0 : PMCP_ENOMEM;
  return 0;
}

static int browse(pmcp_call *call, void *ud)
{
  pmcp__research *rs = ud;
  size_t m = M_TREE; /* the default mode */
  pmcp_call_mode_index(call, &m);
  assert(m < M_COUNT);
  const char *mode = modes[m].name;
  cJSON *st = NULL;
  if (pmcp__rs_cursor_in(call, rs, &st))
    return 0;
  int rc;
  if (m == M_TREE) {
    rc = tree(call, rs, st);
    cJSON_Delete(st);
    return rc;
  }
  pmcp__list_req q;
  memset(&q, 0, sizeof q);
  q.limit = limit_of(call);
  q.excerpt = 160;
  int set = 0;
  q.include_deleted = opt_bool(call, "include_deleted", &set);
  cJSON *filter = cJSON_CreateObject();
  char p1[PMCP__REF_MAX + 1], p2[PMCP__REF_MAX + 1], p3[PMCP__REF_MAX + 1];
  rc = 0;
  switch ((enum browse_mode)m) {
  case M_RUNS: {
    q.list = "runs";
    q.kind = "run";
    q.keys = k_run;
    if (norm_ref(call, "project", PMCP__REF_PROJECT, p1, sizeof p1) ||
        norm_ref(call, "experiment", PMCP__REF_EXPERIMENT, p2, sizeof p2))
      goto refused;
    q.parent = *p2 ? p2 : *p1 ? p1 : NULL;
    if (*p1 && *p2)
      add_filter(filter, "project", p1, 0, 0);
    int active = opt_bool(call, "active", &set);
    if (set && active)
      add_filter(filter, "status", "running", 0, 0);
    else if (set)
      add_filter(filter, "active", NULL, 1, 0);
    break;
  }
  case M_WORKSPACES: {
    q.list = "workspaces";
    q.kind = "workspace";
    q.keys = k_ws;
    break;
  }
  case M_NOTES: {
    q.list = "notes";
    q.kind = "note";
    q.keys = k_note;
    q.query = opt_str(call, "query");
    const char *on = opt_str(call, "on");
    if (on) {
      pmcp__ref r;
      char err[256];
      if (pmcp__ref_parse(&r, on, err, sizeof err)) {
        rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "on: %s", err);
        goto out;
      }
      if (r.kind != PMCP__REF_PROJECT && r.kind != PMCP__REF_EXPERIMENT &&
          r.kind != PMCP__REF_RUN) {
        rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                           "on: notes are on project:, experiment: or run: "
                           "refs, not %s",
                           pmcp__ref_kind_name(r.kind));
        goto out;
      }
      pmcp__ref_format(&r, p1, sizeof p1);
      q.parent = p1;
    }
    break;
  }
  case M_FILES: {
    q.list = "files";
    q.kind = "file";
    q.keys = k_file;
    q.query = opt_str(call, "query");
    const char *ws = opt_str(call, "workspace");
    if (ws) {
      if (!pmcp__ref_id_ok(ws, strlen(ws)) &&
          strncmp(ws, "workspace:", 10) != 0) {
        rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                           "workspace: an id of letters, digits, '.', '_' "
                           "and '-'");
        goto out;
      }
      snprintf(p1, sizeof p1, "%s%s",
               strncmp(ws, "workspace:", 10) == 0 ? "" : "workspace:", ws);
      q.parent = p1;
    } else {
      add_filter(filter, "shared", NULL, 1, 1);
    }
    break;
  }
  case M_DATASETS: {
    q.list = "datasets";
    q.kind = "dataset";
    q.keys = k_dataset;
    q.query = opt_str(call, "query");
    if (norm_ref(call, "project", PMCP__REF_PROJECT, p1, sizeof p1))
      goto refused;
    q.parent = *p1 ? p1 : NULL;
    int reg = opt_bool(call, "registered", &set);
    add_filter(filter, "registered", NULL, set, reg);
    break;
  }
  case M_CHECKPOINTS: {
    q.list = "checkpoints";
    q.kind = "checkpoint";
    q.keys = k_ckpt;
    if (norm_ref(call, "project", PMCP__REF_PROJECT, p1, sizeof p1) ||
        norm_ref(call, "experiment", PMCP__REF_EXPERIMENT, p2, sizeof p2) ||
        norm_ref(call, "run", PMCP__REF_RUN, p3, sizeof p3))
      goto refused;
    q.parent = *p3 ? p3 : *p2 ? p2 : *p1 ? p1 : NULL;
    int best = opt_bool(call, "best", &set);
    add_filter(filter, "best", NULL, set, best);
    int stored = opt_bool(call, "stored", &set);
    add_filter(filter, "stored", NULL, set, stored);
    break;
  }
  case M_SOURCES: {
    q.list = "sources";
    q.kind = "source";
    q.keys = k_source;
    q.query = opt_str(call, "query");
    add_filter(filter, "provider", opt_str(call, "provider"), 0, 0);
    add_filter(filter, "kind", opt_str(call, "kind"), 0, 0);
    break;
  }
  case M_TREE:
  case M_COUNT:
    assert(0 && "tree is answered above; the engine refuses other modes");
    rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "unknown mode %s", mode);
    goto out;
  }
  {
    char *ftxt = NULL;
    if (filter->child)
      ftxt = cJSON_PrintUnformatted(filter);
    q.filter = ftxt;
    /* A cursor continues only the list it was made for. */
    if (st && strcmp(pmcp__js(st, "l"), q.list) != 0) {
      cJSON_free(ftxt);
      rc = pmcp__rs_restart(call, "changed_arguments",
                            "this cursor belongs to another list; call browse "
                            "again without `cursor` to start over.");
      goto out;
    }
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "mode", mode);
    rc = flat(call, rs, &q, st, root);
    cJSON_free(ftxt);
  }
  goto out;
refused:
  rc = 0;
out:
  cJSON_Delete(filter);
  cJSON_Delete(st);
  return rc;
}

static const char desc[] =
  "What exists here? Lists the lab as refs (kind:id) for entity. A nested "
  "<list>_cursor continues that list (as cursor, same arguments).";

int pmcp__research_add_browse(pmcp_server *server, pmcp__research *rs)
{
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = "browse";
  d.title = "Browse the lab";
  d.description = desc;
  d.modes = modes;
  d.n_modes = N(modes);
  d.default_mode = "tree";
  d.read_only = PMCP_HINT_TRUE;
  /* destructive and idempotent hints mean something only for tools that
   * write (MCP): read-only says it all */
  d.open_world = PMCP_HINT_FALSE;
  d.flags = PMCP_TOOL_BUDGETED | PMCP_TOOL_BLOCKING; /* store I/O: off the reader thread */
  d.handler = browse;
  d.ud = pmcp__research_retain(rs);
  d.ud_free = pmcp__research_release;
  return pmcp__rs_add_tool(server, &d, 1);
}
