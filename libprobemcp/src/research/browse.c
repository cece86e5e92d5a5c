/* SPDX-License-Identifier: MIT */
/* `browse`: "what exists here?" Lists the lab's structure and catalogs,
 * one mode per question. Every list pages through the store's
 * positions; a cursor's state is {"l": list, "p": parent ref, "a": store
 * position, "s": items of that store page already shown}, so a page cut by
 * the budget in the middle of a store page resumes at the exact item. */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/call.h"
#include "core/page_int.h" /* pmcp__page_resume_empty */
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

/* ---- pages ------------------------------------------------------------
 * Pages are written with pmcp_json from the store's text (lists.c): the
 * fields first (kept as JSON text, so that an envelope over the budget can
 * be refused as the whole object it is), then as many items as fit. */

#define MAX_FIELDS 10
typedef struct fields {
  size_t n;
  char key[MAX_FIELDS][64];
  pmcp_buf val[MAX_FIELDS];
  int err;
} fields;

static void fields_free(fields *f)
{
  for (size_t i = 0; i < f->n; i++)
    pmcp_buf_dispose(&f->val[i]);
  f->n = 0;
}

/* A field whose value is JSON text [v, v + len). */
static void f_raw(fields *f, const char *key, const char *v, size_t len)
{
  if (f->err || f->n == MAX_FIELDS || !v) {
    f->err = PMCP_ENOMEM;
    return;
  }
  snprintf(f->key[f->n], sizeof f->key[0], "%s", key);
  pmcp_buf b = PMCP_BUF_INIT;
  if (pmcp__buf_append(&b, v, len)) {
    f->err = PMCP_ENOMEM;
    return;
  }
  f->val[f->n++] = b;
}

/* A field written by @p j (a complete value); @p j is reset. */
static void f_json(fields *f, const char *key, pmcp_json *j)
{
  size_t len = 0;
  const char *t = pmcp_json_text(j, &len);
  f_raw(f, key, t, len);
  pmcp_json_reset(j);
}

static void f_str(fields *f, const char *key, const char *v, pmcp_json *j)
{
  pmcp_json_string(j, v);
  f_json(f, key, j);
}

static void f_total(fields *f, const char *list, const pmcp__window *w, pmcp_json *j)
{
  if (w->total < 0)
    return;
  char key[64];
  snprintf(key, sizeof key, "%s_total", list);
  pmcp__rs_number(j, w->total);
  f_json(f, key, j);
  if (w->total_estimated) {
    snprintf(key, sizeof key, "%s_total_estimated", list);
    f_raw(f, key, "true", 4);
  }
}

/* The answer when the fields alone are over the budget: the whole
 * envelope as one object, refused naming min_token_budget. */
static int refuse_envelope(pmcp_call *call, pmcp__research *rs, const fields *f,
                           const char *list)
{
  pmcp_buf b = PMCP_BUF_INIT;
  pmcp__buf_putc(&b, '{');
  for (size_t i = 0; i < f->n; i++) {
    pmcp__buf_printf(&b, "\"%s\":", f->key[i]);
    pmcp__buf_append(&b, f->val[i].ptr, f->val[i].len);
    pmcp__buf_putc(&b, ',');
  }
  pmcp__buf_printf(&b, "\"%s\":[],\"count\":0}", list);
  int rc = b.ptr ? pmcp__rs_send_object(call, rs, b.ptr, b.len) : PMCP_ENOMEM;
  pmcp_buf_dispose(&b);
  return rc;
}

typedef struct tree_ctx tree_ctx;
static int tree_item(tree_ctx *t, pmcp_json *out, const pmcp__window *w, size_t i,
                     const pmcp__list_req *q, pmcp__ref_kind child, int depth, char *err,
                     size_t errlen);

/* Sends the page of window @p w of list @p q after fields @p f (freed):
 * its items as fit, each resuming after itself; with @p t, items of the
 * tree with their children nested (@p child, @p depth). */
static int send_list(pmcp_call *call, pmcp__research *rs, fields *f, const pmcp__list_req *q,
                     pmcp__window *w, tree_ctx *t, pmcp__ref_kind child, int depth)
{
  char err[512] = "";
  int rc = f->err;
  pmcp_page *pg = rc ? NULL : pmcp__rs_page_plain(call, rs);
  if (!rc && !pg) {
    fields_free(f);
    return 0; /* the error result is sent */
  }
  for (size_t i = 0; !rc && i < f->n; i++)
    rc = pmcp_page_field_json(pg, f->key[i], f->val[i].ptr, f->val[i].len);
  if (rc == PMCP_EBUDGET) {
    pmcp_page_free(pg);
    rc = refuse_envelope(call, rs, f, q->list);
    fields_free(f);
    return rc;
  }
  fields_free(f);
  pmcp_json *sj = NULL, *tj = NULL;
  if (!rc && (pmcp_json_new(&sj, 0) || (t && pmcp_json_new(&tj, 0))))
    rc = PMCP_ENOMEM;
  if (!rc)
    rc = pmcp_page_list(pg, q->list);
  size_t n = pmcp__window_count(w);
  for (size_t i = 0; !rc && i < n; i++) {
    int has = pmcp__window_state(sj, w, i + 1);
    size_t sl = 0;
    const char *s = has > 0 ? pmcp_json_text(sj, &sl) : NULL;
    if (has < 0) {
      rc = PMCP_ENOMEM;
    } else if (t) {
      rc = tree_item(t, tj, w, i, q, child, depth, err, sizeof err);
      size_t tl = 0;
      const char *txt = rc ? NULL : pmcp_json_text(tj, &tl);
      if (rc) {
        pmcp_page_free(pg);
        pmcp_json_free(sj);
        pmcp_json_free(tj);
        return list_fail(call, rc, err);
      }
      rc = txt ? pmcp_page_add(pg, txt, tl, s, sl) : PMCP_ENOMEM;
    } else {
      pmcp_json *j = pmcp_page_item(pg);
      if (!j) {
        rc = pmcp_page_status(pg) ? pmcp_page_status(pg) : PMCP_ENOMEM;
        break;
      }
      pmcp_json_object_begin(j);
      pmcp__window_members(j, w, i, q, NULL);
      pmcp_json_object_end(j);
      rc = pmcp_page_commit(pg, s, sl);
    }
  }
  int more = 0;
  if (rc == PMCP_EBUDGET) {
    more = 1; /* the page is full (or refused): it says so itself */
    rc = 0;
  } else if (!rc) {
    int has = pmcp__window_state(sj, w, n);
    more = has > 0;
    if (has < 0) {
      rc = PMCP_ENOMEM;
    } else if (has > 0 && n == 0) {
      /* nothing shown, but items were read: the page still continues */
      size_t sl = 0;
      const char *s = pmcp_json_text(sj, &sl);
      rc = s ? pmcp__page_resume_empty(pg, s, sl) : PMCP_ENOMEM;
    }
  }
  pmcp_json_free(sj);
  pmcp_json_free(tj);
  if (rc) {
    pmcp_page_free(pg);
    return rc;
  }
  return pmcp__rs_send(call, pg, more);
}

/* One flat list as the whole page, after fields @p f (freed). */
static int flat(pmcp_call *call, pmcp__research *rs, const pmcp__list_req *q,
                const cJSON *st, fields *f, pmcp_json *scratch)
{
  const char *after;
  size_t skip;
  pmcp__state_pos(st, &after, &skip);
  pmcp__list_req qa = *q;
  qa.anchor = pmcp__state_anchor(st);
  pmcp__window w;
  char err[512];
  int rc = pmcp__fetch_text(rs, &qa, after, skip, &w, err, sizeof err);
  if (rc) {
    fields_free(f);
    return list_fail(call, rc, err);
  }
  if (w.total >= 0) {
    pmcp__rs_number(scratch, w.total);
    f_json(f, "total", scratch);
  }
  if (w.total >= 0 && w.total_estimated)
    f_raw(f, "total_estimated", "true", 4);
  rc = send_list(call, rs, f, q, &w, NULL, PMCP__REF_NONE, 0);
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

struct tree_ctx {
  pmcp_call *call;
  pmcp__research *rs;
  size_t limit;
  int include_deleted;
  size_t nested_limit; /* items per nested list (shrinks to fit) */
  pmcp_json *state;    /* scratch for a nested list's position */
  uint64_t version;    /* the store's, for nested cursors (0: not read yet) */
  int have_version;
};

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

/* A cursor continuing list window @p w after @p shown items, for a
 * nested <list>_cursor (another call of browse); NULL at its end or on
 * failure. Freed with free(). */
static char *nested_cursor(tree_ctx *t, const pmcp__window *w, size_t shown)
{
  if (pmcp__window_state(t->state, w, shown) <= 0) {
    pmcp_json_reset(t->state);
    return NULL;
  }
  if (!t->have_version) {
    if (pmcp__rs_version(t->rs, &t->version)) {
      pmcp_json_reset(t->state);
      return NULL;
    }
    t->have_version = 1;
  }
  const char *args = NULL;
  if (pmcp__call_cursor_args(t->call, &args))
    args = "{}";
  size_t sl = 0;
  const char *st = pmcp_json_text(t->state, &sl);
  pmcp_buf out = PMCP_BUF_INIT;
  int rc = !st || pmcp__rs_cursor_encode(t->rs, pmcp_call_name(t->call), args, t->version,
                                         st, &out);
  pmcp_json_reset(t->state); /* the scratch is the caller's again */
  if (rc) {
    pmcp_buf_dispose(&out);
    return NULL;
  }
  return out.ptr;
}

/* Writes into the object open in @p j the children of the item @p ref
 * (levels left: @p depth) as a nested list with its own total and
 * <list>_cursor. */
static int nest(tree_ctx *t, pmcp_json *j, const char *ref, pmcp__ref_kind kind, int depth,
                char *err, size_t errlen)
{
  if (depth <= 0 || kind == PMCP__REF_RUN || !*ref)
    return 0;
  char parent[PMCP__REF_MAX + 1];
  snprintf(parent, sizeof parent, "%s", ref);
  pmcp__list_req q;
  children_req(kind, &q, parent, t);
  q.limit = t->nested_limit ? t->nested_limit : t->limit;
  pmcp__window w;
  int rc = pmcp__fetch_text(t->rs, &q, NULL, 0, &w, err, errlen);
  if (rc)
    return rc;
  pmcp__ref_kind child = kind == PMCP__REF_PROJECT ? PMCP__REF_EXPERIMENT
                                                   : PMCP__REF_RUN;
  char key[64];
  if (w.total >= 0) {
    snprintf(key, sizeof key, "%s_total", q.list);
    pmcp_json_key(j, key);
    pmcp__rs_number(j, w.total);
    if (w.total_estimated) {
      snprintf(key, sizeof key, "%s_total_estimated", q.list);
      pmcp_json_key(j, key);
      pmcp_json_bool(j, 1);
    }
  }
  /* the tree already says where a child is filed */
  static const char *const filed[] = {"project", "experiment", NULL};
  pmcp_json_key(j, q.list);
  pmcp_json_array_begin(j);
  size_t shown = pmcp__window_count(&w);
  for (size_t i = 0; i < shown && !rc; i++) {
    char cref[300];
    pmcp_json_object_begin(j);
    pmcp__window_members(j, &w, i, &q, filed);
    rc = nest(t, j, pmcp__window_ref(&w, i, cref, sizeof cref), child, depth - 1, err, errlen);
    pmcp_json_object_end(j);
  }
  pmcp_json_array_end(j);
  if (!rc) {
    char *cur = nested_cursor(t, &w, shown);
    if (cur) {
      snprintf(key, sizeof key, "%s_cursor", q.list);
      pmcp_json_key(j, key);
      pmcp_json_string(j, cur);
      free(cur);
    }
  }
  pmcp__window_free(&w);
  return rc ? rc : pmcp_json_error(j);
}

/* Writes item @p i of the tree's window into @p out (reset) with its
 * children nested; an item that would not fit a page on its own gets
 * fewer nested items (then one level less), each cut list keeping its
 * <list>_cursor, so the page always shows something. */
static int tree_item(tree_ctx *t, pmcp_json *out, const pmcp__window *w, size_t i,
                     const pmcp__list_req *q, pmcp__ref_kind child, int depth, char *err,
                     size_t errlen)
{
  char ref[300];
  pmcp__window_ref(w, i, ref, sizeof ref);
  size_t lim = t->limit;
  int d = depth, shrunk = 0;
  for (;;) {
    t->nested_limit = lim;
    pmcp_json_reset(out);
    pmcp_json_object_begin(out);
    pmcp__window_members(out, w, i, q, NULL);
    int rc = nest(t, out, ref, child, d, err, errlen);
    if (rc)
      return rc;
    if (pmcp_json_object_end(out))
      return pmcp_json_error(out);
    size_t len = 0;
    const char *txt = pmcp_json_text(out, &len);
    if (d <= 0 || pmcp__rs_fits_text(t->call, txt, len, 250))
      break;
    shrunk = 1;
    if (lim > 1)
      lim /= 2;
    else
      d--;
  }
  if (!shrunk)
    return 0;
  /* the item again, with the note that its lists were cut */
  size_t len = 0;
  const char *txt = pmcp_json_text(out, &len);
  pmcp_buf b = PMCP_BUF_INIT;
  static const char nested[] = ",\"nested\":\"cut to fit token_budget: follow the "
                               "<list>_cursor values or open this ref\"}";
  int rc = pmcp__buf_append(&b, txt, len - 1);
  if (!rc)
    rc = pmcp__buf_append(&b, nested, sizeof nested - 1);
  pmcp_json_reset(out);
  if (!rc)
    rc = pmcp_json_raw(out, b.ptr, b.len);
  pmcp_buf_dispose(&b);
  return rc;
}

static int tree(pmcp_call *call, pmcp__research *rs, const cJSON *st)
{
  tree_ctx t = {call, rs, limit_of(call), 0, 0, NULL, 0, 0};
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
  pmcp_json *sj = NULL;
  if (pmcp_json_new(&sj, 0))
    return PMCP_ENOMEM;
  fields f = {0};
  f_str(&f, "mode", "tree", sj);
  if (*ref)
    f_str(&f, "ref", ref, sj);

  pmcp__list_req q;
  char err[512];
  int rc;
  if (strcmp(cl, "unfiled") == 0) {
    memset(&q, 0, sizeof q);
    q.list = "unfiled";
    q.kind = "run";
    q.filter = "{\"unfiled\":true}";
    q.keys = k_run;
    q.limit = t.limit;
    q.include_deleted = t.include_deleted;
    rc = flat(call, rs, &q, st, &f, sj);
    pmcp_json_free(sj);
    return rc;
  }
  pmcp__ref_kind top = *ref ? r.kind : PMCP__REF_NONE;
  const char *parent = *ref ? ref : NULL;
  int nested_depth = (int)depth - 1;
  if (*cp) {
    /* A nested <list>_cursor: continue that parent's children only. */
    pmcp__ref pr;
    if (pmcp__ref_parse(&pr, cp, err, sizeof err)) {
      fields_free(&f);
      pmcp_json_free(sj);
      return pmcp__rs_restart(call, "malformed",
                              "invalid cursor state; call browse again "
                              "without `cursor` to start over.");
    }
    top = pr.kind;
    parent = cp;
    f_str(&f, "parent", cp, sj);
    nested_depth = 0;
  }
  children_req(top, &q, parent, &t);
  const char *after;
  size_t skip;
  pmcp__state_pos(st, &after, &skip);
  q.anchor = pmcp__state_anchor(st);
  pmcp__window w;
  rc = pmcp__fetch_text(rs, &q, after, skip, &w, err, sizeof err);
  if (rc) {
    fields_free(&f);
    pmcp_json_free(sj);
    return list_fail(call, rc, err);
  }
  pmcp__ref_kind child = top == PMCP__REF_NONE      ? PMCP__REF_PROJECT
                         : top == PMCP__REF_PROJECT ? PMCP__REF_EXPERIMENT
                                                    : PMCP__REF_RUN;
  t.state = sj;
  f_total(&f, q.list, &w, sj);
  /* At the lab root's first page, also the runs not filed in a project. */
  if (top == PMCP__REF_NONE && !st) {
    pmcp__list_req uq = {"unfiled", "run", NULL, NULL, "{\"unfiled\":true}",
                   t.include_deleted, k_run, t.limit, 120, NULL};
    pmcp__window uw;
    rc = pmcp__fetch_text(rs, &uq, NULL, 0, &uw, err, sizeof err);
    if (rc) {
      pmcp__window_free(&w);
      fields_free(&f);
      pmcp_json_free(sj);
      return list_fail(call, rc, err);
    }
    f_total(&f, "unfiled", &uw, sj);
    size_t shown = pmcp__window_count(&uw);
    pmcp_json_array_begin(sj);
    for (size_t i = 0; i < shown; i++) {
      pmcp_json_object_begin(sj);
      pmcp__window_members(sj, &uw, i, &uq, NULL);
      pmcp_json_object_end(sj);
    }
    pmcp_json_array_end(sj);
    f_json(&f, "unfiled", sj);
    char *cur = nested_cursor(&t, &uw, shown);
    if (cur) {
      f_str(&f, "unfiled_cursor", cur, sj);
      free(cur);
    }
    pmcp__window_free(&uw);
  }
  rc = send_list(call, rs, &f, &q, &w, &t, child, nested_depth);
  pmcp__window_free(&w);
  pmcp_json_free(sj);
  return rc;
}

/* ---- the handler ------------------------------------------------------ */

/* A member of the list filter (a JSON object written in @p f). */
static void add_filter(pmcp_json *f, int *n, const char *key, const char *sval, int bset,
                       int bval)
{
  if (!sval && !bset)
    return;
  if (!(*n)++)
    pmcp_json_object_begin(f);
  pmcp_json_key(f, key);
  if (sval)
    pmcp_json_string(f, sval);
  else
    pmcp_json_bool(f, bval);
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
  pmcp_json *filter = NULL;
  if (pmcp_json_new(&filter, 0)) {
    cJSON_Delete(st);
    return PMCP_ENOMEM;
  }
  int nf = 0;
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
      add_filter(filter, &nf, "project", p1, 0, 0);
    int active = opt_bool(call, "active", &set);
    if (set && active)
      add_filter(filter, &nf, "status", "running", 0, 0);
    else if (set)
      add_filter(filter, &nf, "active", NULL, 1, 0);
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
      add_filter(filter, &nf, "shared", NULL, 1, 1);
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
    add_filter(filter, &nf, "registered", NULL, set, reg);
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
    add_filter(filter, &nf, "best", NULL, set, best);
    int stored = opt_bool(call, "stored", &set);
    add_filter(filter, &nf, "stored", NULL, set, stored);
    break;
  }
  case M_SOURCES: {
    q.list = "sources";
    q.kind = "source";
    q.keys = k_source;
    q.query = opt_str(call, "query");
    add_filter(filter, &nf, "provider", opt_str(call, "provider"), 0, 0);
    add_filter(filter, &nf, "kind", opt_str(call, "kind"), 0, 0);
    break;
  }
  case M_TREE:
  case M_COUNT:
    assert(0 && "tree is answered above; the engine refuses other modes");
    rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "unknown mode %s", mode);
    goto out;
  }
  {
    const char *ftxt = NULL;
    if (nf && pmcp_json_object_end(filter) == 0)
      ftxt = pmcp_json_text(filter, NULL);
    if (nf && !ftxt) {
      rc = PMCP_ENOMEM;
      goto out;
    }
    q.filter = ftxt;
    /* A cursor continues only the list it was made for. */
    if (st && strcmp(pmcp__js(st, "l"), q.list) != 0) {
      rc = pmcp__rs_restart(call, "changed_arguments",
                            "this cursor belongs to another list; call browse "
                            "again without `cursor` to start over.");
      goto out;
    }
    pmcp_json *sj = NULL;
    if (pmcp_json_new(&sj, 0)) {
      rc = PMCP_ENOMEM;
      goto out;
    }
    fields f = {0};
    f_str(&f, "mode", mode, sj);
    rc = flat(call, rs, &q, st, &f, sj);
    pmcp_json_free(sj);
  }
  goto out;
refused:
  rc = 0;
out:
  pmcp_json_free(filter);
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
