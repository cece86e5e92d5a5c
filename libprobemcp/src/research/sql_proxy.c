/* SPDX-License-Identifier: MIT */
/* query_sql's proxy tables (see sql_proxy.h). Comparisons of a column with
 * a value (=, <, <=, >, >=) are pushed down to the private connection, so
 * its indexes serve joins and lookups; SQLite still checks every pushed
 * comparison itself (nothing is marked omitted), so a pushed condition can
 * narrow the work but never change an answer. Only columns that are plain
 * table columns with the default collation are pushed, where the private
 * connection compares exactly as the agent's does. */
#include "research/sql_proxy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


typedef struct px_aux {
  sqlite3 *inner;
  const char *const *names;
} px_aux;

typedef struct px_tab {
  sqlite3_vtab base;
  px_aux *aux;
  char *view;      /* quoted view name on the private connection */
  int ncol;
  char **cols;     /* quoted column names */
  unsigned char *pushable;
} px_tab;

typedef struct px_cur {
  sqlite3_vtab_cursor base;
  sqlite3_stmt *st;
  char *plan;      /* the idxStr @p st was prepared for */
  sqlite3_int64 rowid;
  int eof;
} px_cur;

/* "name" with embedded quotes doubled, as an SQL identifier. */
static char *quote_ident(const char *s)
{
  return sqlite3_mprintf("\"%w\"", s);
}

static void tab_free(px_tab *t)
{
  if (!t)
    return;
  for (int i = 0; t->cols && i < t->ncol; i++)
    sqlite3_free(t->cols[i]);
  sqlite3_free(t->cols);
  sqlite3_free(t->pushable);
  sqlite3_free(t->view);
  sqlite3_free(t);
}

static int allowed(const px_aux *aux, const char *name)
{
  for (size_t i = 0; aux->names[i]; i++)
    if (!strcmp(aux->names[i], name))
      return 1;
  return 0;
}

static int px_connect(sqlite3 *db, void *ud, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **err)
{
  px_aux *aux = ud;
  if (argc != 3 || !allowed(aux, argv[2])) {
    *err = sqlite3_mprintf("no such table");
    return SQLITE_ERROR;
  }
  px_tab *t = sqlite3_malloc(sizeof *t);
  if (!t)
    return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  t->aux = aux;
  t->view = quote_ident(argv[2]);
  char *probe = t->view ? sqlite3_mprintf("SELECT * FROM temp.%s", t->view) : NULL;
  sqlite3_stmt *st = NULL;
  int rc = probe ? sqlite3_prepare_v2(aux->inner, probe, -1, &st, NULL) : SQLITE_NOMEM;
  sqlite3_free(probe);
  sqlite3_str *decl = sqlite3_str_new(db);
  if (rc == SQLITE_OK) {
    t->ncol = sqlite3_column_count(st);
    t->cols = sqlite3_malloc64(sizeof *t->cols * (size_t)(t->ncol + 1));
    t->pushable = sqlite3_malloc64((size_t)t->ncol + 1);
    if (!t->cols || !t->pushable)
      rc = SQLITE_NOMEM;
    else
      memset(t->cols, 0, sizeof *t->cols * (size_t)(t->ncol + 1));
    sqlite3_str_appendall(decl, "CREATE TABLE x(");
    for (int c = 0; rc == SQLITE_OK && c < t->ncol; c++) {
      const char *type = sqlite3_column_decltype(st, c);
      t->cols[c] = quote_ident(sqlite3_column_name(st, c));
      if (!t->cols[c]) {
        rc = SQLITE_NOMEM;
        break;
      }
      /* a plain column (it has a declared type) compares the same way on
       * both connections; an expression might not */
      t->pushable[c] = type != NULL;
      sqlite3_str_appendf(decl, "%s%s %s", c ? ", " : "", t->cols[c], type ? type : "");
    }
    sqlite3_str_appendall(decl, ")");
  } else {
    *err = sqlite3_mprintf("%s", sqlite3_errmsg(aux->inner));
  }
  sqlite3_finalize(st);
  char *text = sqlite3_str_finish(decl);
  if (rc == SQLITE_OK && !text)
    rc = SQLITE_NOMEM;
  if (rc == SQLITE_OK)
    rc = sqlite3_declare_vtab(db, text);
  sqlite3_free(text);
  if (rc != SQLITE_OK) {
    tab_free(t);
    return rc;
  }
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  *out = &t->base;
  return SQLITE_OK;
}

/* A distinct xCreate: the module is not an eponymous table of main. */
static int px_create(sqlite3 *db, void *ud, int argc, const char *const *argv,
                     sqlite3_vtab **out, char **err)
{
  return px_connect(db, ud, argc, argv, out, err);
}

static int px_disconnect(sqlite3_vtab *v)
{
  tab_free((px_tab *)v);
  return SQLITE_OK;
}

static char op_code(unsigned char op)
{
  switch (op) {
  case SQLITE_INDEX_CONSTRAINT_EQ: return '=';
  case SQLITE_INDEX_CONSTRAINT_GT: return '>';
  case SQLITE_INDEX_CONSTRAINT_GE: return 'g';
  case SQLITE_INDEX_CONSTRAINT_LT: return '<';
  case SQLITE_INDEX_CONSTRAINT_LE: return 'l';
  default: return 0;
  }
}

/* The plan (idxStr) is the pushed comparisons in argument order, each
 * "<column>:<op>;". */
static int px_best_index(sqlite3_vtab *v, sqlite3_index_info *ix)
{
  px_tab *t = (px_tab *)v;
  sqlite3_str *plan = sqlite3_str_new(NULL);
  int argn = 0, eq = 0, range = 0;
  for (int i = 0; i < ix->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &ix->aConstraint[i];
    char op = op_code(c->op);
    if (!c->usable || !op || c->iColumn < 0 || c->iColumn >= t->ncol ||
        !t->pushable[c->iColumn])
      continue;
    const char *coll = sqlite3_vtab_collation(ix, i);
    if (coll && sqlite3_stricmp(coll, "BINARY"))
      continue;
    /* an IN (also one SQLite made of ORs) may compare with its values'
     * collation, which sqlite3_vtab_collation does not report */
    if (sqlite3_vtab_in(ix, i, -1))
      continue;
    ix->aConstraintUsage[i].argvIndex = ++argn;
    ix->aConstraintUsage[i].omit = 0;
    sqlite3_str_appendf(plan, "%d:%c;", c->iColumn, op);
    if (op == '=')
      eq++;
    else
      range++;
  }
  double rows = 1e6;
  for (int i = 0; i < eq; i++)
    rows /= 100;
  for (int i = 0; i < range; i++)
    rows /= 4;
  if (rows < 1)
    rows = 1;
  ix->estimatedRows = (sqlite3_int64)rows;
  ix->estimatedCost = rows + 10;
  char *text = sqlite3_str_finish(plan);
  if (argn && !text)
    return SQLITE_NOMEM;
  if (argn) {
    ix->idxStr = text;
    ix->needToFreeIdxStr = 1;
  } else {
    sqlite3_free(text);
  }
  return SQLITE_OK;
}

static int px_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
  (void)v;
  px_cur *c = sqlite3_malloc(sizeof *c);
  if (!c)
    return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  c->eof = 1;
  *out = &c->base;
  return SQLITE_OK;
}

static int px_close(sqlite3_vtab_cursor *cur)
{
  px_cur *c = (px_cur *)cur;
  sqlite3_finalize(c->st);
  sqlite3_free(c->plan);
  sqlite3_free(c);
  return SQLITE_OK;
}

static int fail(px_cur *c, int rc)
{
  px_tab *t = (px_tab *)c->base.pVtab;
  sqlite3_free(t->base.zErrMsg);
  t->base.zErrMsg = sqlite3_mprintf("%s", sqlite3_errmsg(t->aux->inner));
  c->eof = 1;
  return rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_ERROR : rc;
}

static int px_next(sqlite3_vtab_cursor *cur)
{
  px_cur *c = (px_cur *)cur;
  int rc = sqlite3_step(c->st);
  if (rc == SQLITE_ROW) {
    c->rowid++;
    return SQLITE_OK;
  }
  c->eof = 1;
  return rc == SQLITE_DONE ? SQLITE_OK : fail(c, rc);
}

/* The statement of @p plan, prepared on the private connection. */
static int prepare(px_cur *c, const char *plan)
{
  px_tab *t = (px_tab *)c->base.pVtab;
  sqlite3_str *sql = sqlite3_str_new(t->aux->inner);
  sqlite3_str_appendf(sql, "SELECT * FROM temp.%s", t->view);
  int n = 0;
  for (const char *p = plan; p && *p; n++) {
    char *end = NULL;
    long col = strtol(p, &end, 10);
    if (!end || end[0] != ':' || !end[1] || end[2] != ';' || col < 0 || col >= t->ncol) {
      sqlite3_free(sqlite3_str_finish(sql));
      return SQLITE_INTERNAL;
    }
    const char *op = "=";
    switch (end[1]) {
    case '>': op = ">"; break;
    case 'g': op = ">="; break;
    case '<': op = "<"; break;
    case 'l': op = "<="; break;
    default: break;
    }
    sqlite3_str_appendf(sql, "%s%s %s ?%d", n ? " AND " : " WHERE ", t->cols[col], op, n + 1);
    p = end + 3;
  }
  char *text = sqlite3_str_finish(sql);
  if (!text)
    return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(t->aux->inner, text, -1, &c->st, NULL);
  sqlite3_free(text);
  return rc;
}

static int px_filter(sqlite3_vtab_cursor *cur, int num, const char *plan, int argc,
                     sqlite3_value **argv)
{
  (void)num;
  px_cur *c = (px_cur *)cur;
  c->rowid = 0;
  c->eof = 1;
  /* a nested loop calls this once per outer row with the same plan */
  if (c->st && ((!plan && !c->plan) || (plan && c->plan && !strcmp(plan, c->plan)))) {
    sqlite3_reset(c->st);
    sqlite3_clear_bindings(c->st);
  } else {
    sqlite3_finalize(c->st);
    c->st = NULL;
    sqlite3_free(c->plan);
    c->plan = plan ? sqlite3_mprintf("%s", plan) : NULL;
    if (plan && !c->plan)
      return SQLITE_NOMEM;
    int rc = prepare(c, plan);
    if (rc != SQLITE_OK)
      return fail(c, rc);
  }
  for (int i = 0; i < argc; i++)
    if (sqlite3_bind_value(c->st, i + 1, argv[i]) != SQLITE_OK)
      return fail(c, SQLITE_ERROR);
  c->eof = 0;
  return px_next(cur);
}

static int px_eof(sqlite3_vtab_cursor *cur)
{
  return ((px_cur *)cur)->eof;
}

static int px_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
  px_cur *c = (px_cur *)cur;
  sqlite3_result_value(ctx, sqlite3_column_value(c->st, i));
  return SQLITE_OK;
}

static int px_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
  *out = ((px_cur *)cur)->rowid;
  return SQLITE_OK;
}

static const sqlite3_module px_module = {
  .iVersion = 0,
  .xCreate = px_create,
  .xConnect = px_connect,
  .xBestIndex = px_best_index,
  .xDisconnect = px_disconnect,
  .xDestroy = px_disconnect,
  .xOpen = px_open,
  .xClose = px_close,
  .xFilter = px_filter,
  .xNext = px_next,
  .xEof = px_eof,
  .xColumn = px_column,
  .xRowid = px_rowid,
};

int pmcp__sqlproxy_attach(sqlite3 *outer, sqlite3 *inner, const char *const *names)
{
  px_aux *aux = malloc(sizeof *aux);
  if (!aux)
    return SQLITE_NOMEM;
  aux->inner = inner;
  aux->names = names;
  int rc = sqlite3_create_module_v2(outer, "pmcp_proxy", &px_module, aux, free);
  if (rc != SQLITE_OK)
    return rc; /* SQLite called free(aux) */
  for (size_t i = 0; names[i] && rc == SQLITE_OK; i++) {
    char *sql = sqlite3_mprintf("CREATE VIRTUAL TABLE temp.\"%w\" USING pmcp_proxy", names[i]);
    rc = sql ? sqlite3_exec(outer, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
  }
  return rc;
}
