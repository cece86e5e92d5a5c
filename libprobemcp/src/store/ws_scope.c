/* SPDX-License-Identifier: MIT */
/* Workspace scoping shared by the built-in backends: see ws_scope.h.
 * Predicates are portable SQL naming :t, :w and :u; the longer ones (refs
 * stored as text) are put together at run time from arms that each stay
 * within C's portable string length. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/store_int.h"
#include "store/ws_scope.h"

/* A nullable project id column. */
#define WS_PROJ(col)                                                           \
  "(" col " IN (SELECT id FROM projects WHERE workspace_id=:w) OR (" col       \
  " IS NULL AND :u=1))"
/* An experiment id column (experiments always have a project). */
#define WS_EXP(col)                                                            \
  "(" col " IN (SELECT id FROM experiments WHERE project_id IN"                \
  " (SELECT id FROM projects WHERE workspace_id=:w)))"
/* A run id column. */
#define WS_RUN(col) "(" col " IN (SELECT id FROM runs WHERE " WS_PROJ("project_id") "))"
/* An owner (kind, id) of notes and artifacts; owner-less rows are
 * lab-wide. */
#define WS_OWNER(k, id)                                                        \
  "(CASE " k " WHEN 'run' THEN " WS_RUN(id) " WHEN 'experiment' THEN "         \
  WS_EXP(id) " WHEN 'project' THEN (" id " IN (SELECT id FROM projects"        \
  " WHERE workspace_id=:w)) ELSE 1=1 END)"

/* The arms of a ref's CASE; '@' stands for the ref column. Unknown kinds
 * are visible only in the default workspace. */
static const char *const ref_arms[] = {
  "WHEN @ LIKE 'run:%' THEN EXISTS (SELECT 1 FROM runs WHERE tenant_id=:t AND"
  " slug=substr(@, 5) AND " WS_PROJ("project_id") ")",
  "WHEN @ LIKE 'experiment:%' THEN EXISTS (SELECT 1 FROM experiments WHERE tenant_id=:t"
  " AND slug=substr(@, 12) AND project_id IN (SELECT id FROM projects WHERE workspace_id=:w))",
  "WHEN @ LIKE 'project:%' THEN EXISTS (SELECT 1 FROM projects WHERE tenant_id=:t AND"
  " slug=substr(@, 9) AND workspace_id=:w)",
  "WHEN @ LIKE 'workspace:%' THEN EXISTS (SELECT 1 FROM workspaces WHERE tenant_id=:t AND"
  " slug=substr(@, 11) AND id=:w)",
  "WHEN @ LIKE 'note:%' THEN EXISTS (SELECT 1 FROM notes WHERE tenant_id=:t AND"
  " slug=substr(@, 6) AND " WS_OWNER("owner_kind", "owner_id") ")",
  "WHEN @ LIKE 'sub-note:%' THEN EXISTS (SELECT 1 FROM notes WHERE tenant_id=:t AND"
  " slug=substr(@, 10) AND " WS_OWNER("owner_kind", "owner_id") ")",
  "WHEN @ LIKE 'artifact:%' THEN EXISTS (SELECT 1 FROM artifacts WHERE tenant_id=:t AND"
  " (slug=substr(@, 10) OR (name=substr(@, 10) AND owner_kind IS NULL)) AND "
  WS_OWNER("owner_kind", "owner_id") ")",
  "WHEN @ LIKE 'dataset:%' THEN EXISTS (SELECT 1 FROM datasets WHERE tenant_id=:t AND"
  " (@='dataset:' || slug OR @ LIKE 'dataset:' || slug || '@%') AND " WS_PROJ("project_id") ")",
  "WHEN @ LIKE 'checkpoint:%' THEN EXISTS (SELECT 1 FROM runs WHERE tenant_id=:t AND"
  " @ LIKE 'checkpoint:' || slug || '@%' AND " WS_PROJ("project_id") ")",
  "WHEN @ LIKE 'trial:%' THEN EXISTS (SELECT 1 FROM trials WHERE tenant_id=:t AND"
  " slug=substr(@, 7) AND " WS_RUN("run_id") ")",
  "WHEN @ LIKE 'group:%' THEN EXISTS (SELECT 1 FROM groups WHERE tenant_id=:t AND"
  " slug=substr(@, 7) AND ((experiment_id IS NULL AND :u=1) OR " WS_EXP("experiment_id") "))",
  "WHEN @ LIKE 'file:%' THEN EXISTS (SELECT 1 FROM files WHERE tenant_id=:t AND"
  " slug=substr(@, 6) AND (workspace_id=0 OR workspace_id=:w))",
  "WHEN @ LIKE 'source:%' OR @ LIKE 'paper:%' OR @='team-note' THEN 1=1",
};

/* Appends @p text with every '@' replaced by @p col ('@' inside quotes
 * stays: the LIKE patterns use it literally). */
static void put_col(pmcp_buf *b, const char *text, const char *col)
{
  int quoted = 0;
  for (const char *p = text; *p; p++) {
    if (*p == '\'')
      quoted = !quoted;
    if (*p == '@' && !quoted)
      pmcp__buf_puts(b, col);
    else
      pmcp__buf_putc(b, *p);
  }
}

/* A ref of any kind but sessions in column @p col. */
static void ref_basic(pmcp_buf *b, const char *col)
{
  pmcp__buf_puts(b, "(CASE ");
  for (size_t i = 0; i < sizeof ref_arms / sizeof ref_arms[0]; i++) {
    put_col(b, ref_arms[i], col);
    pmcp__buf_putc(b, ' ');
  }
  pmcp__buf_puts(b, "ELSE :u=1 END)");
}

/* A session (id column @p idcol): when every ref it is linked to is
 * visible. */
static void session(pmcp_buf *b, const char *idcol)
{
  pmcp__buf_printf(b, "(NOT EXISTS (SELECT 1 FROM session_links wsl WHERE wsl.session_id=%s"
                      " AND NOT ", idcol);
  ref_basic(b, "wsl.ref");
  pmcp__buf_puts(b, "))");
}

/* Any ref, sessions included. */
static void ref_any(pmcp_buf *b, const char *col)
{
  pmcp__buf_puts(b, "(CASE WHEN ");
  pmcp__buf_printf(b, "%s LIKE 'session:%%' THEN EXISTS (SELECT 1 FROM sessions ws WHERE"
                      " ws.tenant_id=:t AND ws.slug=substr(%s, 9) AND ", col, col);
  session(b, "ws.id");
  pmcp__buf_puts(b, ") ELSE ");
  ref_basic(b, col);
  pmcp__buf_puts(b, " END)");
}

enum { FIXED, REF, REF2, SESSION };

typedef struct rule {
  const char *name;
  int how;             /* FIXED: pred; REF: ref_any(a); REF2: both of a, b; SESSION: session(a) */
  const char *pred, *a, *b;
} rule;

/* Single-table statements of pmcp__ws_check (bare columns). */
static const rule table_rules[] = {
  {"workspaces", FIXED, "id=:w", NULL, NULL},
  {"projects", FIXED, "workspace_id=:w", NULL, NULL},
  {"experiments", FIXED, "project_id IN (SELECT id FROM projects WHERE workspace_id=:w)", NULL, NULL},
  {"runs", FIXED, WS_PROJ("project_id"), NULL, NULL},
  /* query_sql's views of the deleted rows of those two */
  {"deleted_experiments", FIXED, "project_id IN (SELECT id FROM projects WHERE workspace_id=:w)",
   NULL, NULL},
  {"deleted_runs", FIXED, WS_PROJ("project_id"), NULL, NULL},
  {"notes", FIXED, WS_OWNER("owner_kind", "owner_id"), NULL, NULL},
  {"artifacts", FIXED, WS_OWNER("owner_kind", "owner_id"), NULL, NULL},
  {"datasets", FIXED, WS_PROJ("project_id"), NULL, NULL},
  {"checkpoints", FIXED, WS_RUN("run_id"), NULL, NULL},
  {"trials", FIXED, WS_RUN("run_id"), NULL, NULL},
  {"series", FIXED, WS_RUN("run_id"), NULL, NULL},
  {"groups", FIXED, "((experiment_id IS NULL AND :u=1) OR " WS_EXP("experiment_id") ")", NULL, NULL},
  {"sources", FIXED, "1=1", NULL, NULL},
  {"sessions", SESSION, NULL, "sessions.id", NULL},
  {"files", FIXED, "(workspace_id=0 OR workspace_id=:w)", NULL, NULL},
};

/* pmcp_store_list()'s kinds, with the aliases of their FROM clauses (the
 * same in sq_list.c and pg_list.c). Kinds that need a parent are scoped
 * by the parent's lookup and have no rule. */
static const rule list_rules[] = {
  {"workspace", FIXED, "w.id=:w", NULL, NULL},
  {"project", FIXED, "p.workspace_id=:w", NULL, NULL},
  {"experiment", FIXED, "e.project_id IN (SELECT id FROM projects WHERE workspace_id=:w)", NULL, NULL},
  {"run", FIXED, WS_PROJ("r.project_id"), NULL, NULL},
  {"note", FIXED, WS_OWNER("n.owner_kind", "n.owner_id"), NULL, NULL},
  {"artifact", FIXED, WS_OWNER("a.owner_kind", "a.owner_id"), NULL, NULL},
  {"dataset", FIXED, WS_PROJ("d.project_id"), NULL, NULL},
  {"checkpoint", FIXED, WS_PROJ("r.project_id"), NULL, NULL},
  {"lineage", REF2, NULL, "l.from_ref", "l.to_ref"},
  {"group", FIXED, "((g.experiment_id IS NULL AND :u=1) OR " WS_EXP("g.experiment_id") ")", NULL, NULL},
  {"trial", FIXED, WS_RUN("t.run_id"), NULL, NULL},
  {"session", SESSION, NULL, "s.id", NULL},
  {"file", FIXED, "(f.workspace_id=0 OR f.workspace_id=:w)", NULL, NULL},
  {"embedding", REF, NULL, "e.ref", NULL},
  {"search-doc", REF, NULL, "d.ref", NULL},
};

static int put_rule(pmcp_buf *out, const rule *r)
{
  switch (r->how) {
  case FIXED: pmcp__buf_puts(out, r->pred); break;
  case REF: ref_any(out, r->a); break;
  case REF2:
    pmcp__buf_putc(out, '(');
    ref_any(out, r->a);
    pmcp__buf_puts(out, " AND ");
    ref_any(out, r->b);
    pmcp__buf_putc(out, ')');
    break;
  default: session(out, r->a); break;
  }
  return out->ptr ? 1 : PMCP_ENOMEM;
}

static const rule *find_rule(const rule *rules, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(rules[i].name, name) == 0)
      return &rules[i];
  return NULL;
}

int pmcp__ws_table_where(pmcp_buf *out, const char *table)
{
  const rule *r = find_rule(table_rules, sizeof table_rules / sizeof table_rules[0], table);
  return r ? put_rule(out, r) : 0;
}

int pmcp__ws_ref_where(pmcp_buf *out, const char *col)
{
  ref_any(out, col);
  return out->ptr ? 0 : PMCP_ENOMEM;
}

int pmcp__ws_search_where(pmcp_buf *out)
{
  ref_any(out, "d.ref");
  return out->ptr ? 0 : PMCP_ENOMEM;
}

int pmcp__ws_list_where(pmcp_buf *where, pmcp_tenant t, const char *kind)
{
  if (t.workspace == 0)
    return 0;
  const rule *r = find_rule(list_rules, sizeof list_rules / sizeof list_rules[0], kind);
  if (!r)
    return 0;
  pmcp_buf pred = PMCP_BUF_INIT;
  int rc = put_rule(&pred, r);
  char *p = rc == 1 ? pmcp__ws_inline(pred.ptr, t) : NULL;
  pmcp_buf_dispose(&pred);
  if (!p)
    return PMCP_ENOMEM;
  rc = pmcp__buf_printf(where, " AND %s", p);
  free(p);
  return rc;
}

char *pmcp__ws_subst(const char *pred, const char *t, const char *w, const char *u)
{
  const char *v[3] = {t, w, u};
  pmcp_buf b = PMCP_BUF_INIT;
  for (const char *p = pred; *p; p++) {
    const char *nm = p[0] == ':' && p[1] ? strchr("twu", p[1]) : NULL;
    char next = nm ? p[2] : 0;
    int word = (next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') ||
               (next >= '0' && next <= '9') || next == '_';
    if (nm && !word) {
      pmcp__buf_puts(&b, v[nm - "twu"]);
      p++;
    } else {
      pmcp__buf_putc(&b, *p);
    }
  }
  if (!b.ptr)
    return NULL;
  char *out = strdup(b.ptr);
  pmcp_buf_dispose(&b);
  return out;
}

char *pmcp__ws_inline(const char *pred, pmcp_tenant t)
{
  char v[3][24];
  snprintf(v[0], sizeof v[0], "%lld", (long long)t.id);
  snprintf(v[1], sizeof v[1], "%lld", (long long)t.workspace);
  snprintf(v[2], sizeof v[2], "%d", t.unfiled ? 1 : 0);
  return pmcp__ws_subst(pred, v[0], v[1], v[2]);
}

/* query_sql's views (pmcp__ws_view_where). A table that hangs off
 * another is scoped by its parent's view, already scoped; these
 * conditions name views, the rest name the store's tables. */
static const struct {
  const char *view, *pred;
} by_parent[] = {
  {"attributes", "(owner_kind='run' AND owner_id IN (SELECT id FROM runs)) OR"
                 " (owner_kind='experiment' AND owner_id IN (SELECT id FROM experiments)) OR"
                 " (owner_kind='project' AND owner_id IN (SELECT id FROM projects))"},
  {"tags", "(owner_kind='run' AND owner_id IN (SELECT id FROM runs)) OR"
           " (owner_kind='experiment' AND owner_id IN (SELECT id FROM experiments)) OR"
           " (owner_kind='project' AND owner_id IN (SELECT id FROM projects))"},
  {"run_events", "run_id IN (SELECT id FROM runs)"},
  {"metric_points", "series_id IN (SELECT id FROM series)"},
  {"metric_blocks", "s.run_id IN (SELECT id FROM runs)"},
  {"note_versions", "note_id IN (SELECT id FROM notes)"},
  {"artifact_versions", "artifact_id IN (SELECT id FROM artifacts)"},
  {"dataset_versions", "dataset_id IN (SELECT id FROM datasets)"},
  {"group_runs", "group_id IN (SELECT id FROM groups) AND run_id IN (SELECT id FROM runs)"},
  {"project_papers", "project_id IN (SELECT id FROM projects)"},
};

/* @p raw into @p out with " FROM name" turned into " FROM <prefix>name"
 * for each of @p names. */
static void prefix_from(pmcp_buf *out, const char *raw, const char *prefix,
                        const char *const *names)
{
  for (const char *p = raw; *p; p++) {
    int done = 0;
    if (!strncmp(p, " FROM ", 6))
      for (int k = 0; names[k] && !done; k++) {
        size_t n = strlen(names[k]);
        if (!strncmp(p + 6, names[k], n) && (p[6 + n] == ' ' || p[6 + n] == ')')) {
          pmcp__buf_printf(out, " FROM %s%s", prefix, names[k]);
          p += 5 + n;
          done = 1;
        }
      }
    if (!done)
      pmcp__buf_putc(out, *p);
  }
}

int pmcp__ws_view_where(pmcp_buf *out, const char *view, const char *tables,
                        const char *views)
{
  static const char *const parents[] = {"runs", "experiments", "projects", "notes",
                                        "artifacts", "datasets", "groups", "series", NULL};
  for (size_t i = 0; i < sizeof by_parent / sizeof by_parent[0]; i++)
    if (!strcmp(by_parent[i].view, view)) {
      prefix_from(out, by_parent[i].pred, views, parents);
      return out->ptr ? 1 : PMCP_ENOMEM;
    }
  pmcp_buf raw = PMCP_BUF_INIT;
  int has;
  if (!strcmp(view, "lineage"))
    has = pmcp__ws_ref_where(&raw, "from_ref") == 0 && pmcp__buf_puts(&raw, " AND ") == 0 &&
                  pmcp__ws_ref_where(&raw, "to_ref") == 0
              ? 1 : PMCP_ENOMEM;
  else
    has = pmcp__ws_table_where(&raw, view);
  static const char *const store_tables[] = {"workspaces", "projects", "experiments", "runs",
                                             "notes", "artifacts", "datasets", "trials",
                                             "groups", "files", "sessions", "session_links",
                                             NULL};
  if (has == 1)
    prefix_from(out, raw.ptr, tables, store_tables);
  pmcp_buf_dispose(&raw);
  return has == 1 && !out->ptr ? PMCP_ENOMEM : has;
}

int pmcp__ws_check(pmcp_store *s, pmcp_tenant t, const char *table, int64_t rowid)
{
  if (t.workspace == 0)
    return 0;
  pmcp_buf pred = PMCP_BUF_INIT;
  int has = pmcp__ws_table_where(&pred, table);
  if (has <= 0) {
    pmcp_buf_dispose(&pred);
    return has == 0 ? 0 : pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  }
  /* The scope's numbers are written into the text (they are ours, not the
   * caller's): db.h binds text only, and SQLite would compare '1' = 1 as
   * false. */
  char *p = pmcp__ws_inline(pred.ptr, t);
  pmcp_buf_dispose(&pred);
  pmcp_buf sql = PMCP_BUF_INIT;
  if (p)
    pmcp__buf_printf(&sql, "SELECT 1 FROM %s WHERE id=%lld AND %s", table, (long long)rowid, p);
  free(p);
  if (!sql.ptr)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  pmcp__db_res *r = NULL;
  int rc = pmcp__db_tenant(s, t.id);
  if (rc == 0)
    rc = pmcp__db_query(s, sql.ptr, 0, NULL, &r);
  pmcp_buf_dispose(&sql);
  if (rc)
    return rc;
  rc = pmcp__db_nrows(r) ? 0 : PMCP_ENOTFOUND;
  pmcp__db_res_free(r);
  return rc;
}

static const char open_mark[] = "/*ws ";

/* @p sql into @p out with each scope mark turned into " AND <condition>",
 * :t, :w and :u written as @p tv, @p wv and @p uv. 0, PMCP_ENOMEM or
 * PMCP_EINTERNAL (a malformed mark). */
static int expand_marks(pmcp_buf *out, const char *sql, const char *tv, const char *wv,
                        const char *uv)
{
  pmcp_buf pred = PMCP_BUF_INIT;
  int rc = 0;
  const char *at = sql, *hit;
  while (rc == 0 && (hit = strstr(at, open_mark)) != NULL) {
    const char *body = hit + sizeof open_mark - 1, *end = strstr(body, "*/");
    char what[8], a[64], b[64];
    int n = 0;
    if (end && end - body < 120) {
      char spec[128];
      memcpy(spec, body, (size_t)(end - body));
      spec[end - body] = '\0';
      n = sscanf(spec, "%7s %63s %63s", what, a, b);
    }
    pmcp__buf_reset(&pred);
    if (n == 2 && !strcmp(what, "ref")) {
      ref_any(&pred, a);
    } else if (n == 3 && !strcmp(what, "row")) {
      /* correlated: only the linked rows are tested, not the table */
      pmcp__buf_printf(&pred, "EXISTS (SELECT 1 FROM %s WHERE %s.id=%s AND ", a, a, b);
      if (pmcp__ws_table_where(&pred, a) != 1)
        rc = PMCP_EINTERNAL;
      pmcp__buf_putc(&pred, ')');
    } else {
      rc = PMCP_EINTERNAL;
    }
    char *p = rc == 0 && pred.ptr ? pmcp__ws_subst(pred.ptr, tv, wv, uv) : NULL;
    if (rc == 0 && !p)
      rc = PMCP_ENOMEM;
    if (rc == 0) {
      pmcp__buf_append(out, at, (size_t)(hit - at));
      pmcp__buf_puts(out, " AND ");
      pmcp__buf_puts(out, p);
      at = end + 2;
    }
    free(p);
  }
  pmcp_buf_dispose(&pred);
  if (rc == 0)
    pmcp__buf_puts(out, at);
  if (rc == 0 && !out->ptr)
    rc = PMCP_ENOMEM;
  return rc;
}

int pmcp__ws_marks(pmcp_buf *out, const char *sql, pmcp_tenant t)
{
  if (t.workspace == 0 || !strstr(sql, open_mark))
    return 0;
  char v[3][24];
  snprintf(v[0], sizeof v[0], "%lld", (long long)t.id);
  snprintf(v[1], sizeof v[1], "%lld", (long long)t.workspace);
  snprintf(v[2], sizeof v[2], "%d", t.unfiled ? 1 : 0);
  int rc = expand_marks(out, sql, v[0], v[1], v[2]);
  return rc ? rc : 1;
}

/* pmcp__ws_marks_param's texts, made once per process. */
static struct {
  const char *sql;
  char *text;
} param_texts[64];
static size_t n_param_texts;
static pthread_mutex_t param_mu = PTHREAD_MUTEX_INITIALIZER;

/* The highest ?N @p sql names outside quotes. */
static int last_param(const char *sql)
{
  int last = 0;
  char quote = 0;
  for (const char *p = sql; *p; p++) {
    if (quote) {
      if (*p == quote)
        quote = 0;
    } else if (*p == '\'') {
      quote = *p;
    } else if (*p == '?' && p[1] >= '1' && p[1] <= '9') {
      int n = (int)strtol(p + 1, NULL, 10);
      if (n > last)
        last = n;
    }
  }
  return last;
}

const char *pmcp__ws_marks_param(const char *sql, int *first_out)
{
  *first_out = 0;
  if (!strstr(sql, open_mark))
    return sql;
  const char *out = NULL;
  /* right after the statement's own: a gap would be a parameter of no
   * type (PostgreSQL refuses those) */
  int first = last_param(sql) + 1;
  pthread_mutex_lock(&param_mu);
  for (size_t i = 0; i < n_param_texts && !out; i++)
    if (param_texts[i].sql == sql)
      out = param_texts[i].text;
  if (!out && n_param_texts < sizeof param_texts / sizeof param_texts[0]) {
    char v[3][16];
    for (int k = 0; k < 3; k++)
      snprintf(v[k], sizeof v[k], "?%d", first + k);
    pmcp_buf b = PMCP_BUF_INIT;
    if (expand_marks(&b, sql, v[0], v[1], v[2]) == 0 && (out = strdup(b.ptr)) != NULL) {
      param_texts[n_param_texts].sql = sql;
      param_texts[n_param_texts].text = (char *)out;
      n_param_texts++;
    }
    pmcp_buf_dispose(&b);
  }
  pthread_mutex_unlock(&param_mu);
  if (out)
    *first_out = first;
  return out;
}

char *pmcp__ws_splice(const char *sql, const char *anchor, const char *pred, pmcp_tenant t)
{
  char *p = pmcp__ws_inline(pred, t);
  if (!p)
    return NULL;
  pmcp_buf b = PMCP_BUF_INIT;
  size_t al = strlen(anchor);
  const char *at = sql, *hit;
  while ((hit = strstr(at, anchor)) != NULL) {
    pmcp__buf_append(&b, at, (size_t)(hit - at) + al);
    pmcp__buf_puts(&b, " AND ");
    pmcp__buf_puts(&b, p);
    at = hit + al;
  }
  pmcp__buf_puts(&b, at);
  free(p);
  char *out = b.ptr ? strdup(b.ptr) : NULL;
  pmcp_buf_dispose(&b);
  return out;
}
