/* SPDX-License-Identifier: MIT */
/* SQLite backend: the statement caches (fixed statements by the literal's
 * address, run-time texts by content) and the shared statement interface
 * of sql.h over them. A statement used through the interface gets a small
 * wrapper once, kept with its cache entry: binds, steps and column reads
 * then cost one indirect call on top of SQLite's own. */
#include <stdlib.h>
#include <string.h>

#include "store/sq.h"

struct pmcp__sq_st {
  pmcp__stmt base;
  sqlite3_stmt *st;
  pmcp__sq *q;
  int rc; /* the last step's result */
};

#define W(p) ((pmcp__sq_st *)(p))

static const pmcp__stmt_ops sq_stmt_ops;

static pmcp__sq_st *wrap(pmcp__sq_st **slot, pmcp__sq *q, sqlite3_stmt *st)
{
  if (!*slot) {
    *slot = calloc(1, sizeof **slot);
    if (!*slot)
      return NULL;
    (*slot)->base.ops = &sq_stmt_ops;
    (*slot)->q = q;
  }
  (*slot)->st = st;
  (*slot)->rc = SQLITE_OK;
  return *slot;
}

/* The cache entry of literal @p sql (prepared on first use), reset. */
static int entry(pmcp_store *s, pmcp__sq *q, const char *sql, size_t *idx)
{
  for (size_t i = 0; i < q->n_stmts; i++)
    if (q->stmts[i].sql == sql) {
      sqlite3_reset(q->stmts[i].stmt);
      sqlite3_clear_bindings(q->stmts[i].stmt);
      *idx = i;
      return 0;
    }
  if (q->n_stmts == q->cap_stmts) {
    size_t cap = q->cap_stmts ? q->cap_stmts * 2 : 64;
    pmcp__sq_stmt_entry *e = realloc(q->stmts, cap * sizeof *e);
    if (!e)
      return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
    q->stmts = e;
    q->cap_stmts = cap;
  }
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v3(q->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
  if (rc != SQLITE_OK)
    return pmcp__sq_err(s, q, rc, "store query");
  q->stmts[q->n_stmts].sql = sql;
  q->stmts[q->n_stmts].stmt = st;
  q->stmts[q->n_stmts].w = NULL;
  *idx = q->n_stmts++;
  return 0;
}

int pmcp__sq_prep(pmcp_store *s, pmcp__sq *q, const char *sql, sqlite3_stmt **out)
{
  size_t i;
  int rc = entry(s, q, sql, &i);
  if (rc == 0)
    *out = q->stmts[i].stmt;
  return rc;
}

/* The dynamic cache's slot of @p sql (prepared on first use), reset. */
static int dyn_entry(pmcp_store *s, pmcp__sq *q, const char *sql, size_t *idx)
{
  q->dyn_clock++;
  for (size_t i = 0; i < q->n_dyn; i++)
    if (strcmp(q->dyn[i].sql, sql) == 0) {
      sqlite3_reset(q->dyn[i].stmt);
      sqlite3_clear_bindings(q->dyn[i].stmt);
      q->dyn[i].used = q->dyn_clock;
      *idx = i;
      return 0;
    }
  char *copy = strdup(sql);
  if (!copy)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v3(q->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
  if (rc != SQLITE_OK) {
    free(copy);
    return pmcp__sq_err(s, q, rc, "store query");
  }
  size_t slot = q->n_dyn;
  if (slot == PMCP__SQ_DYN_MAX) {
    slot = 0;
    for (size_t i = 1; i < q->n_dyn; i++)
      if (q->dyn[i].used < q->dyn[slot].used)
        slot = i;
    sqlite3_finalize(q->dyn[slot].stmt);
    free(q->dyn[slot].sql);
  } else {
    q->n_dyn++;
    q->dyn[slot].w = NULL;
  }
  q->dyn[slot].sql = copy;
  q->dyn[slot].stmt = st;
  q->dyn[slot].used = q->dyn_clock;
  *idx = slot;
  return 0;
}

int pmcp__sq_prep_text(pmcp_store *s, pmcp__sq *q, const char *sql, sqlite3_stmt **out)
{
  *out = NULL;
  size_t i;
  int rc = dyn_entry(s, q, sql, &i);
  if (rc == 0)
    *out = q->dyn[i].stmt;
  return rc;
}

void pmcp__sq_stmts_free(pmcp__sq *q)
{
  for (size_t i = 0; i < q->n_stmts; i++) {
    sqlite3_finalize(q->stmts[i].stmt);
    free(q->stmts[i].w);
  }
  free(q->stmts);
  q->stmts = NULL;
  q->n_stmts = q->cap_stmts = 0;
  for (size_t i = 0; i < q->n_dyn; i++) {
    sqlite3_finalize(q->dyn[i].stmt);
    free(q->dyn[i].sql);
    free(q->dyn[i].w);
  }
  q->n_dyn = 0;
}

/* ---- sql.h over SQLite ---- */

static int g_prep(pmcp_store *s, pmcp__sql *c, const char *sql, pmcp__stmt **out)
{
  pmcp__sq *q = (pmcp__sq *)c;
  size_t i;
  int rc = entry(s, q, sql, &i);
  if (rc)
    return rc;
  pmcp__sq_st *w = wrap(&q->stmts[i].w, q, q->stmts[i].stmt);
  if (!w)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  *out = &w->base;
  return 0;
}

static int g_prep_text(pmcp_store *s, pmcp__sql *c, const char *sql, pmcp__stmt **out)
{
  pmcp__sq *q = (pmcp__sq *)c;
  *out = NULL;
  size_t i;
  int rc = dyn_entry(s, q, sql, &i);
  if (rc)
    return rc;
  pmcp__sq_st *w = wrap(&q->dyn[i].w, q, q->dyn[i].stmt);
  if (!w)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  *out = &w->base;
  return 0;
}

/* The dynamic cache keeps the statement: releasing it only ends its read. */
static void g_release(pmcp__stmt *st)
{
  sqlite3_reset(W(st)->st);
}

static int g_exec(pmcp_store *s, pmcp__sql *c, const char *sql)
{
  return pmcp__sq_exec(s, (pmcp__sq *)c, sql);
}

static int g_flush(pmcp_store *s, pmcp__sql *c)
{
  pmcp__sq *q = (pmcp__sq *)c;
  return q->in_txn && q->n_pending ? pmcp__sq_flush(s, q) : 0;
}

/* SQLite starts and ends a read transaction around every statement run
 * on its own (the WAL snapshot taken, the schema checked, the lock
 * released): a record of a dozen statements paid that a dozen times. A
 * deferred BEGIN takes no lock until the first read. */
static const char sql_rbegin[] = "BEGIN";
static const char sql_rend[] = "COMMIT";

static int g_rbegin(pmcp_store *s, pmcp__sql *c, int *opened)
{
  pmcp__sq *q = (pmcp__sq *)c;
  *opened = 0;
  if (!sqlite3_get_autocommit(q->db))
    return 0; /* inside the caller's transaction */
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, sql_rbegin, &st);
  if (rc)
    return rc;
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE)
    return pmcp__sq_err(s, q, rc, "read");
  *opened = 1;
  return 0;
}

static void g_rend(pmcp_store *s, pmcp__sql *c, int opened)
{
  pmcp__sq *q = (pmcp__sq *)c;
  if (!opened || sqlite3_get_autocommit(q->db))
    return;
  /* a read's failure is the caller's to report: this only ends it */
  sqlite3_stmt *st;
  int rc = SQLITE_ERROR;
  char keep[sizeof s->errmsg];
  memcpy(keep, s->errmsg, sizeof keep);
  if (pmcp__sq_prep(s, q, sql_rend, &st) == 0) {
    rc = sqlite3_step(st);
    sqlite3_reset(st);
  }
  if (rc != SQLITE_DONE && !sqlite3_get_autocommit(q->db))
    sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
  memcpy(s->errmsg, keep, sizeof keep);
}

static int g_wbegin(pmcp_store *s, pmcp__sql *c, pmcp_tenant t)
{
  (void)t;
  return pmcp__sq_wbegin(s, (pmcp__sq *)c);
}

static int g_wend(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, int rc)
{
  return pmcp__sq_wend(s, (pmcp__sq *)c, t, rc);
}

static int g_index(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *ref,
                   const char *kind, const char *title, const char *body)
{
  return pmcp__sq_index(s, (pmcp__sq *)c, t, ref, kind, title, body);
}

static int g_index_doc(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *doc,
                       const char *kind, int64_t rowid)
{
  pmcp__sq *q = (pmcp__sq *)c;
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, doc, &st);
  if (rc)
    return rc;
  sqlite3_bind_text(st, 1, kind, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 2, rowid);
  rc = sqlite3_step(st);
  if (rc != SQLITE_ROW) {
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : pmcp__sq_err(s, q, rc, "search index");
  }
  char *v[3];
  for (int i = 0; i < 3; i++) {
    const char *x = (const char *)sqlite3_column_text(st, i);
    v[i] = strdup(x ? x : "");
  }
  sqlite3_reset(st);
  rc = v[0] && v[1] && v[2] ? pmcp__sq_index(s, q, t, v[0], kind, v[1], v[2])
                            : pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  for (int i = 0; i < 3; i++)
    free(v[i]);
  return rc;
}

const pmcp__sql_ops pmcp__sq_sql_ops = {
  .pg = 0,
  .prep = g_prep,
  .prep_text = g_prep_text,
  .release = g_release,
  .exec = g_exec,
  .ready = NULL,
  .flush = g_flush,
  .rbegin = g_rbegin,
  .rend = g_rend,
  .wbegin = g_wbegin,
  .wend = g_wend,
  .index = g_index,
  .index_doc = g_index_doc,
};

static void s_bind_int64(pmcp__stmt *st, int i, int64_t v)
{
  sqlite3_bind_int64(W(st)->st, i, v);
}

static void s_bind_double(pmcp__stmt *st, int i, double v)
{
  sqlite3_bind_double(W(st)->st, i, v);
}

static void s_bind_text(pmcp__stmt *st, int i, const char *v)
{
  sqlite3_bind_text(W(st)->st, i, v, -1, SQLITE_TRANSIENT);
}

static void s_bind_blob(pmcp__stmt *st, int i, const void *p, size_t n)
{
  sqlite3_bind_blob64(W(st)->st, i, p, n, SQLITE_TRANSIENT);
}

static void s_bind_null(pmcp__stmt *st, int i)
{
  sqlite3_bind_null(W(st)->st, i);
}

static int s_step(pmcp__stmt *st)
{
  return W(st)->rc = sqlite3_step(W(st)->st);
}

static void s_reset(pmcp__stmt *st)
{
  sqlite3_reset(W(st)->st);
}

static int s_is_null(pmcp__stmt *st, int col)
{
  return sqlite3_column_type(W(st)->st, col) == SQLITE_NULL;
}

static int64_t s_int64(pmcp__stmt *st, int col)
{
  return sqlite3_column_int64(W(st)->st, col);
}

static double s_double(pmcp__stmt *st, int col)
{
  return sqlite3_column_double(W(st)->st, col);
}

static const char *s_text(pmcp__stmt *st, int col, size_t *len)
{
  const char *v = (const char *)sqlite3_column_text(W(st)->st, col);
  if (len)
    *len = v ? (size_t)sqlite3_column_bytes(W(st)->st, col) : 0;
  return v;
}

static const void *s_blob(pmcp__stmt *st, int col, size_t *len)
{
  const void *v = sqlite3_column_blob(W(st)->st, col);
  *len = (size_t)sqlite3_column_bytes(W(st)->st, col);
  /* SQLite gives NULL for an empty blob too. */
  if (!v && sqlite3_column_type(W(st)->st, col) != SQLITE_NULL)
    v = "";
  return v;
}

static int s_json(pmcp_buf *b, pmcp__stmt *st, int col)
{
  return pmcp__sq_text_col(b, W(st)->st, col);
}

static int64_t s_changes(pmcp__stmt *st)
{
  return sqlite3_changes(W(st)->q->db);
}

static int s_err(pmcp_store *s, pmcp__stmt *st, const char *what)
{
  return pmcp__sq_err(s, W(st)->q, W(st)->rc, what);
}

static const pmcp__stmt_ops sq_stmt_ops = {
  .bind_int64 = s_bind_int64,
  .bind_double = s_bind_double,
  .bind_text = s_bind_text,
  .bind_blob = s_bind_blob,
  .bind_null = s_bind_null,
  .step = s_step,
  .reset = s_reset,
  .is_null = s_is_null,
  .int64 = s_int64,
  .dbl = s_double,
  .text = s_text,
  .blob = s_blob,
  .json = s_json,
  .changes = s_changes,
  .err = s_err,
};
