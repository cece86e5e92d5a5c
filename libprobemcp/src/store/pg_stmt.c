/* SPDX-License-Identifier: MIT */
/* PostgreSQL backend: the statement layer. A statement is SQL text with
 * $1..$N parameters bound by position; the first step runs it with
 * PQexecParams and later steps walk its rows. Values travel as text
 * (results too), except bytea parameters, which go binary. A connection
 * lost outside any transaction is re-established and the statement run
 * once more, so a restarted server costs a reader nothing; inside a
 * transaction the loss is reported (what was written is gone). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg.h"
#include "util/cnum.h"

#define INT8OID 20
#define FLOAT8OID 701
#define BYTEAOID 17

void pmcp__pg_clear_blobs(pmcp__pg_stmt *st)
{
  for (int i = 0; i < 4; i++) {
    if (st->blob[i])
      PQfreemem(st->blob[i]);
    st->blob[i] = NULL;
    st->blob_col[i] = -1;
  }
}

static void clear_binds(pmcp__pg_stmt *st)
{
  for (int i = 0; i < PMCP__PG_MAXP; i++) {
    free(st->vals[i]);
    st->vals[i] = NULL;
    st->lens[i] = 0;
    st->fmts[i] = 0;
    st->types[i] = 0;
  }
  st->nparams = 0;
}

void pmcp__pg_reset(pmcp__pg_stmt *st)
{
  if (!st)
    return;
  pmcp__pg_clear_blobs(st);
  PQclear(st->res);
  st->res = NULL;
  st->row = -1;
  st->ran = 0;
}

void pmcp__pg_finalize(pmcp__pg_stmt *st)
{
  if (!st)
    return;
  pmcp__pg_reset(st);
  clear_binds(st);
  if (st->owns_sql)
    free((char *)st->sql);
  free(st);
}

static const pmcp__stmt_ops pg_stmt_ops;

/* The SQL with SQLite's ?N placeholders (the shared code's, sql.h) made
 * $N: a copy, or NULL when there are none (or no memory: *oom set). */
static char *dollars(const char *sql, int *oom)
{
  char quote = 0;
  char *copy = NULL;
  for (const char *p = sql; *p; p++) {
    if (quote) {
      if (*p == quote)
        quote = 0;
    } else if (*p == '\'' || *p == '"') {
      quote = *p;
    } else if (*p == '?' && p[1] >= '1' && p[1] <= '9') {
      if (!copy && !(copy = strdup(sql))) {
        *oom = 1;
        return NULL;
      }
      copy[p - sql] = '$';
    }
  }
  return copy;
}

static pmcp__pg_stmt *stmt_new(pmcp__pg *g, const char *sql)
{
  pmcp__pg_stmt *st = calloc(1, sizeof *st);
  if (!st)
    return NULL;
  int oom = 0;
  char *rewritten = dollars(sql, &oom);
  if (oom) {
    free(st);
    return NULL;
  }
  st->base.ops = &pg_stmt_ops;
  st->g = g;
  st->sql = rewritten ? rewritten : sql;
  st->owns_sql = rewritten != NULL;
  st->row = -1;
  sql = st->sql;
  /* Parameters the SQL names: unbound ones are sent as NULL. */
  char quote = 0;
  for (const char *p = sql; *p; p++) {
    if (quote) {
      if (*p == quote)
        quote = 0;
    } else if (*p == '\'' || *p == '"') {
      quote = *p;
    } else if (*p == '$' && p[1] >= '1' && p[1] <= '9') {
      int n = (int)strtol(p + 1, NULL, 10);
      if (n > st->sqlparams && n <= PMCP__PG_MAXP)
        st->sqlparams = n;
    }
  }
  for (int i = 0; i < 4; i++)
    st->blob_col[i] = -1;
  return st;
}

int pmcp__pg_prep(pmcp_store *s, pmcp__pg *g, const char *sql, pmcp__pg_stmt **out)
{
  for (size_t i = 0; i < g->n_stmts; i++)
    if (g->stmts[i].sql == sql) {
      pmcp__pg_reset(g->stmts[i].st);
      clear_binds(g->stmts[i].st);
      *out = g->stmts[i].st;
      return 0;
    }
  if (g->n_stmts == g->cap_stmts) {
    size_t cap = g->cap_stmts ? g->cap_stmts * 2 : 64;
    pmcp__pg_stmt_entry *e = realloc(g->stmts, cap * sizeof *e);
    if (!e)
      return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
    g->stmts = e;
    g->cap_stmts = cap;
  }
  pmcp__pg_stmt *st = stmt_new(g, sql);
  if (!st)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  /* The fixed statements of the backend are parsed and planned once per
   * connection (PQprepare), then only executed. */
  st->cached = 1;
  snprintf(st->name, sizeof st->name, "pmcp%u", ++g->next_stmt);
  g->stmts[g->n_stmts].sql = sql;
  g->stmts[g->n_stmts].st = st;
  g->n_stmts++;
  *out = st;
  return 0;
}

int pmcp__pg_prep_dyn(pmcp_store *s, pmcp__pg *g, const char *sql, pmcp__pg_stmt **out)
{
  pmcp__pg_stmt *st = stmt_new(g, sql);
  if (st && !st->owns_sql) {
    st->sql = strdup(sql);
    st->owns_sql = 1;
    if (!st->sql) {
      free(st);
      st = NULL;
    }
  }
  if (!st)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  *out = st;
  return 0;
}

static void bind_raw(pmcp__pg_stmt *st, int i, char *v, int len, int fmt, unsigned type)
{
  if (i < 1 || i > PMCP__PG_MAXP) {
    free(v);
    return;
  }
  free(st->vals[i - 1]);
  st->vals[i - 1] = v;
  st->lens[i - 1] = len;
  st->fmts[i - 1] = fmt;
  st->types[i - 1] = type;
  if (i > st->nparams)
    st->nparams = i;
}

void pmcp__pg_bind_int64(pmcp__pg_stmt *st, int i, int64_t v)
{
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)v);
  bind_raw(st, i, strdup(buf), 0, 0, INT8OID);
}

void pmcp__pg_bind_double(pmcp__pg_stmt *st, int i, double v)
{
  char buf[40];
  if (isnan(v))
    snprintf(buf, sizeof buf, "NaN");
  else if (isinf(v))
    snprintf(buf, sizeof buf, "%sInfinity", v < 0 ? "-" : "");
  else
    pmcp__c_snprintf(buf, sizeof buf, "%.17g", v);
  bind_raw(st, i, strdup(buf), 0, 0, FLOAT8OID);
}

void pmcp__pg_bind_finite(pmcp__pg_stmt *st, int i, double v)
{
  if (isfinite(v))
    pmcp__pg_bind_double(st, i, v);
  else
    bind_raw(st, i, NULL, 0, 0, FLOAT8OID);
}

void pmcp__pg_bind_text(pmcp__pg_stmt *st, int i, const char *v)
{
  bind_raw(st, i, strdup(v ? v : ""), 0, 0, 0);
}

void pmcp__pg_bind_opt(pmcp__pg_stmt *st, int i, const char *v)
{
  bind_raw(st, i, v ? strdup(v) : NULL, 0, 0, 0);
}

void pmcp__pg_bind_null(pmcp__pg_stmt *st, int i)
{
  bind_raw(st, i, NULL, 0, 0, 0);
}

void pmcp__pg_bind_blob(pmcp__pg_stmt *st, int i, const void *p, size_t n)
{
  char *c = malloc(n ? n : 1);
  if (c && n)
    memcpy(c, p, n);
  bind_raw(st, i, c, (int)n, 1, BYTEAOID);
}

void pmcp__pg_bind_binary(pmcp__pg_stmt *st, int i, void *p, size_t n, unsigned oid)
{
  bind_raw(st, i, p, (int)n, 1, oid);
}

/* Records the failure of @p res (or of the connection) on the handle;
 * @p what names a deferred statement (NULL: the one the caller runs). */
void pmcp__pg_note_error(pmcp__pg *g, const PGresult *res, const char *what)
{
  const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
  const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
  if (!msg)
    msg = PQerrorMessage(g->conn);
  snprintf(g->sqlstate, sizeof g->sqlstate, "%s", state ? state : "");
  snprintf(g->lasterr, sizeof g->lasterr, "%s", msg && *msg ? msg : "unknown error");
  snprintf(g->errwhat, sizeof g->errwhat, "%s", what ? what : "");
  size_t n = strlen(g->lasterr);
  while (n && (g->lasterr[n - 1] == '\n' || g->lasterr[n - 1] == ' '))
    g->lasterr[--n] = '\0';
}

int pmcp__pg_lost(pmcp__pg *g)
{
  return PQstatus(g->conn) != CONNECTION_OK;
}

/* Re-establishes a lost connection and the session's tenant setting. */
static int reconnect(pmcp__pg *g)
{
  PQreset(g->conn);
  g->gen++; /* prepared statements died with the old connection */
  /* So did the results still due in pipeline mode. */
  g->n_sent = 0;
  g->pipe = 0;
#ifdef LIBPQ_HAS_PIPELINING
  if (pmcp__pq_pipeline() && PQpipelineStatus(g->conn) != PQ_PIPELINE_OFF)
    PQexitPipelineMode(g->conn);
#endif
  g->cur_tenant = 0;
  g->locked_tenant = 0;
  g->bumped_tenant = 0;
  if (pmcp__pg_lost(g))
    return -1;
  PQclear(PQexec(g->conn, "SET client_min_messages = warning; SET jit = off"));
  if (g->readonly)
    PQclear(PQexec(g->conn, "SET default_transaction_read_only = on"));
  if (g->want_tenant > 0) {
    char v[32];
    snprintf(v, sizeof v, "%lld", (long long)g->want_tenant);
    const char *pv[1] = {v};
    PGresult *r = PQexecParams(g->conn, "SELECT set_config('probe.tenant', $1, false)", 1,
                               NULL, pv, NULL, NULL, 0);
    if (PQresultStatus(r) == PGRES_TUPLES_OK)
      g->cur_tenant = g->want_tenant;
    PQclear(r);
  }
  return 0;
}

static PGresult *run(pmcp__pg_stmt *st)
{
  pmcp__pg *g = st->g;
  int n = st->nparams > st->sqlparams ? st->nparams : st->sqlparams;
  if (st->cached && (st->prepared_gen != g->gen + 1 || st->prepared_n != n)) {
    /* (Re)prepare: first use, a new connection, or more parameters. The
     * parameter types of this first call stand for later ones (each call
     * site binds the same types). */
    if (st->prepared_gen) {
      char sql[48];
      snprintf(sql, sizeof sql, "DEALLOCATE %s", st->name);
      if (st->prepared_gen == g->gen + 1)
        PQclear(PQexec(g->conn, sql));
    }
    st->prepared_gen = 0;
    PGresult *p = PQprepare(g->conn, st->name, st->sql, n, st->types);
    if (PQresultStatus(p) != PGRES_COMMAND_OK)
      return p;
    PQclear(p);
    st->prepared_gen = g->gen + 1;
    st->prepared_n = n;
  }
  if (st->cached)
    return PQexecPrepared(g->conn, st->name, n, (const char *const *)st->vals, st->lens,
                          st->fmts, 0);
  return PQexecParams(g->conn, st->sql, n, st->types, (const char *const *)st->vals, st->lens,
                      st->fmts, 0);
}


int pmcp__pg_step(pmcp__pg_stmt *st)
{
  pmcp__pg *g = st->g;
  pmcp__pg_clear_blobs(st);
  if (!st->ran && g->pipe) {
    st->ran = 1;
    PGresult *r = pmcp__pg_pipe_run(st);
    if (!r)
      return PG_ERR; /* noted by pmcp__pg_pipe_run */
    st->res = r;
    const char *ct = PQcmdTuples(r);
    st->changes = ct && *ct ? strtoll(ct, NULL, 10) : 0;
    st->row = -1;
    if (PQresultStatus(r) == PGRES_COMMAND_OK)
      return PG_DONE;
  }
  if (!st->ran) {
    st->ran = 1;
    PGresult *r = run(st);
    ExecStatusType es = PQresultStatus(r);
    if ((es != PGRES_TUPLES_OK && es != PGRES_COMMAND_OK) && pmcp__pg_lost(g) && !g->in_txn &&
        !g->in_scope) {
      /* Nothing was open: safe to reconnect and run it again. */
      PQclear(r);
      r = NULL;
      if (reconnect(g) == 0) {
        r = run(st);
        es = PQresultStatus(r);
      }
    }
    if (!r || (es != PGRES_TUPLES_OK && es != PGRES_COMMAND_OK)) {
      pmcp__pg_note_error(g, r, NULL);
      if (pmcp__pg_lost(g)) {
        snprintf(g->sqlstate, sizeof g->sqlstate, "08006");
        if (g->in_txn)
          g->txn_lost = 1;
      }
      PQclear(r);
      return PG_ERR;
    }
    st->res = r;
    const char *ct = PQcmdTuples(r);
    st->changes = ct && *ct ? strtoll(ct, NULL, 10) : 0;
    st->row = -1;
    if (es == PGRES_COMMAND_OK)
      return PG_DONE;
  }
  if (!st->res)
    return PG_DONE;
  st->row++;
  return st->row < PQntuples(st->res) ? PG_ROW : PG_DONE;
}

int pmcp__pg_isnull(pmcp__pg_stmt *st, int col)
{
  return !st->res || st->row < 0 || st->row >= PQntuples(st->res) ||
         col >= PQnfields(st->res) || PQgetisnull(st->res, st->row, col);
}

const char *pmcp__pg_text(pmcp__pg_stmt *st, int col)
{
  if (pmcp__pg_isnull(st, col))
    return NULL;
  return PQgetvalue(st->res, st->row, col);
}

int64_t pmcp__pg_int64(pmcp__pg_stmt *st, int col)
{
  const char *v = pmcp__pg_text(st, col);
  if (!v)
    return 0;
  if (v[0] == 't' && v[1] == '\0')
    return 1;
  if (v[0] == 'f' && v[1] == '\0')
    return 0;
  return strtoll(v, NULL, 10);
}

double pmcp__pg_double(pmcp__pg_stmt *st, int col)
{
  const char *v = pmcp__pg_text(st, col);
  if (!v)
    return NAN;
  if (strcmp(v, "NaN") == 0)
    return NAN;
  if (strcmp(v, "Infinity") == 0)
    return INFINITY;
  if (strcmp(v, "-Infinity") == 0)
    return -INFINITY;
  return pmcp__c_strtod(v, NULL);
}

int pmcp__pg_bytes(pmcp__pg_stmt *st, int col)
{
  const char *v = pmcp__pg_text(st, col);
  return v ? PQgetlength(st->res, st->row, col) : 0;
}

const void *pmcp__pg_blob(pmcp__pg_stmt *st, int col, size_t *len)
{
  *len = 0;
  const char *v = pmcp__pg_text(st, col);
  if (!v)
    return NULL;
  int slot = -1;
  for (int i = 0; i < 4; i++) {
    if (st->blob_col[i] == col) {
      *len = st->blob_len[i];
      return st->blob[i];
    }
    if (slot < 0 && st->blob_col[i] < 0)
      slot = i;
  }
  if (slot < 0)
    return NULL;
  size_t n = 0;
  unsigned char *b = PQunescapeBytea((const unsigned char *)v, &n);
  if (!b)
    return NULL;
  st->blob[slot] = b;
  st->blob_len[slot] = n;
  st->blob_col[slot] = col;
  *len = n;
  return b;
}

int64_t pmcp__pg_changes(pmcp__pg_stmt *st)
{
  return st->changes;
}

int pmcp__pg_text_col(pmcp_buf *b, pmcp__pg_stmt *st, int col)
{
  const char *v = pmcp__pg_text(st, col);
  return pmcp__buf_append(b, v ? v : "", v ? (size_t)PQgetlength(st->res, st->row, col) : 0);
}

/* What the caller may read of the last error. PostgreSQL's own message
 * is passed on only for the classes whose messages speak of the values or
 * the statement (data exceptions, resources, timeouts, read-only
 * transactions, this store's own RAISEs); connection failures (class 08)
 * name the server's socket path or host, and the others name
 * tables, columns, constraints or functions of the schema, internals that
 * a store message never shows (store.h): the MCP tools hand these
 * messages to their clients. Those get a sentence and the SQLSTATE (which
 * names nothing), enough for an operator to look up. */
static const char *safe_detail(const pmcp__pg *g, char *buf, size_t n)
{
  const char *st = g->sqlstate;
  if (strncmp(st, "08", 2) == 0)
    snprintf(buf, n, "the connection to PostgreSQL failed (SQLSTATE %s)", st);
  else if (!*st || strncmp(st, "22", 2) == 0 ||
      strncmp(st, "25", 2) == 0 || strncmp(st, "40", 2) == 0 || strncmp(st, "53", 2) == 0 ||
      strncmp(st, "57", 2) == 0 || strcmp(st, "P0001") == 0)
    return g->lasterr;
  else if (strcmp(st, "23505") == 0)
    snprintf(buf, n, "it already exists");
  else if (strncmp(st, "23", 2) == 0)
    snprintf(buf, n, "the store's schema refused the row (SQLSTATE %s)", st);
  else if (strcmp(st, "42501") == 0)
    snprintf(buf, n, "permission denied: the database role lacks a right this needs "
             "(SQLSTATE %s)", st);
  else if (strncmp(st, "42", 2) == 0 || strncmp(st, "3F", 2) == 0)
    snprintf(buf, n, "the store's schema does not match this program (SQLSTATE %s): it was "
             "changed by hand, or needs migrating ('probe --store URL init')", st);
  else if (strcmp(st, "55P03") == 0)
    snprintf(buf, n, "a row it needs is locked (SQLSTATE %s)", st);
  else
    snprintf(buf, n, "PostgreSQL failed (SQLSTATE %s)", st);
  return buf;
}

int pmcp__pg_err(pmcp_store *s, pmcp__pg *g, const char *what)
{
  const char *st = g->sqlstate;
  /* A deferred statement's failure is named by it, not by the statement
   * whose step read it. */
  if (g->errwhat[0])
    what = g->errwhat;
  char buf[200];
  const char *detail = safe_detail(g, buf, sizeof buf);
  int code = PMCP_ESTORE;
  if (strcmp(st, "23505") == 0)
    code = PMCP_EEXIST;
  else if (strcmp(st, "57014") == 0 || strcmp(st, "55P03") == 0 || strcmp(st, "40P01") == 0 ||
           strcmp(st, "40001") == 0)
    code = PMCP_ETIMEOUT;
  else if (strcmp(st, "25006") == 0)
    code = PMCP_EREADONLY;
  else if (strcmp(st, "53200") == 0)
    code = PMCP_ENOMEM;
  else if (strncmp(st, "08", 2) == 0 || strncmp(st, "57P", 3) == 0 || strncmp(st, "53", 2) == 0 ||
           !*st)
    code = PMCP_EIO;
  /* libpq's words for a lost or refused connection name the server's
   * host, port or socket path, which MCP clients must not see (the
   * operator reads them at open time). */
  if (code == PMCP_EIO && pmcp__pg_lost(g))
    return pmcp_store_set_error(s, code,
        "%s: the connection to PostgreSQL was lost; nothing of this call was stored, "
        "and the next call reconnects", what);
  if (code == PMCP_ETIMEOUT)
    return pmcp_store_set_error(s, code, "%s: the store is busy or the statement took too "
                                "long (%s)", what, detail);
  return pmcp_store_set_error(s, code, "%s: %s", what, detail);
}

int pmcp__pg_done(pmcp_store *s, pmcp__pg_stmt *st, const char *what)
{
  int rc = pmcp__pg_step(st);
  int out = rc == PG_ERR ? pmcp__pg_err(s, st->g, what) : 0;
  /* Keep the result (changes, RETURNING rows) until the next prep. */
  return out;
}

int pmcp__pg_exec(pmcp_store *s, pmcp__pg *g, const char *sql)
{
  /* PQexec is refused in pipeline mode (and may hold several statements,
   * which the extended protocol does not take). */
  if (pmcp__pg_pipe_end(g))
    return pmcp__pg_err(s, g, "store");
  PGresult *r = PQexec(g->conn, sql);
  ExecStatusType es = PQresultStatus(r);
  if (es == PGRES_COMMAND_OK || es == PGRES_TUPLES_OK) {
    PQclear(r);
    return 0;
  }
  pmcp__pg_note_error(g, r, NULL);
  PQclear(r);
  if (pmcp__pg_lost(g)) {
    snprintf(g->sqlstate, sizeof g->sqlstate, "08006");
    if (g->in_txn)
      g->txn_lost = 1;
  }
  return pmcp__pg_err(s, g, "store");
}

int pmcp__pg_reconnect_if_lost(pmcp__pg *g);
int pmcp__pg_reconnect_if_lost(pmcp__pg *g)
{
  if (!pmcp__pg_lost(g))
    return 0;
  return reconnect(g);
}

int pmcp__pg_json_col(pmcp_buf *b, pmcp__pg_stmt *st, int col)
{
  const char *v = pmcp__pg_text(st, col);
  if (!v)
    return pmcp__buf_puts(b, "null");
  /* PostgreSQL's json text has blanks around ':' and after ','; drop the
   * blanks outside strings so records read as compactly as SQLite's. */
  size_t n = (size_t)PQgetlength(st->res, st->row, col);
  int in_str = 0;
  size_t start = 0;
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    char c = v[i];
    if (in_str) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_str = 0;
    } else if (c == '"') {
      in_str = 1;
    } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      rc = pmcp__buf_append(b, v + start, i - start);
      start = i + 1;
    }
  }
  if (rc == 0 && start < n)
    rc = pmcp__buf_append(b, v + start, n - start);
  return rc ? rc : (b->ptr ? 0 : PMCP_ENOMEM);
}

/* ---- sql.h over this layer ---- */

#define P(p) ((pmcp__pg_stmt *)(p))

static int g_prep(pmcp_store *s, pmcp__sql *c, const char *sql, pmcp__stmt **out)
{
  pmcp__pg_stmt *st;
  int rc = pmcp__pg_prep(s, (pmcp__pg *)c, sql, &st);
  if (rc == 0)
    *out = &st->base;
  return rc;
}

static int g_prep_text(pmcp_store *s, pmcp__sql *c, const char *sql, pmcp__stmt **out)
{
  pmcp__pg_stmt *st = NULL;
  int rc = pmcp__pg_prep_dyn(s, (pmcp__pg *)c, sql, &st);
  *out = rc == 0 ? &st->base : NULL;
  return rc;
}

static void g_release(pmcp__stmt *st)
{
  pmcp__pg_finalize(P(st));
}

static int g_exec(pmcp_store *s, pmcp__sql *c, const char *sql)
{
  return pmcp__pg_exec(s, (pmcp__pg *)c, sql);
}

static int g_ready(pmcp_store *s, pmcp__sql *c, pmcp_tenant t)
{
  return pmcp__pg_ready(s, (pmcp__pg *)c, t.id);
}

static int g_flush(pmcp_store *s, pmcp__sql *c)
{
  pmcp__pg *g = (pmcp__pg *)c;
  return g->in_txn && g->n_pending ? pmcp__pg_flush(s, g) : 0;
}

static int g_wbegin(pmcp_store *s, pmcp__sql *c, pmcp_tenant t)
{
  return pmcp__pg_wbegin(s, (pmcp__pg *)c, t);
}

static int g_wend(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, int rc)
{
  return pmcp__pg_wend(s, (pmcp__pg *)c, t, rc);
}

static int g_index(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *ref,
                   const char *kind, const char *title, const char *body)
{
  return pmcp__pg_index(s, (pmcp__pg *)c, t, ref, kind, title, body);
}

static int g_index_doc(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *doc,
                       const char *kind, int64_t rowid)
{
  return pmcp__pg_index_doc(s, (pmcp__pg *)c, t, doc, kind, rowid);
}

const pmcp__sql_ops pmcp__pg_sql_ops = {
  .pg = 1,
  .prep = g_prep,
  .prep_text = g_prep_text,
  .release = g_release,
  .exec = g_exec,
  .ready = g_ready,
  .flush = g_flush,
  .wbegin = g_wbegin,
  .wend = g_wend,
  .index = g_index,
  .index_doc = g_index_doc,
};

static void s_bind_int64(pmcp__stmt *st, int i, int64_t v)
{
  pmcp__pg_bind_int64(P(st), i, v);
}

static void s_bind_double(pmcp__stmt *st, int i, double v)
{
  pmcp__pg_bind_double(P(st), i, v);
}

static void s_bind_text(pmcp__stmt *st, int i, const char *v)
{
  pmcp__pg_bind_opt(P(st), i, v);
}

static void s_bind_blob(pmcp__stmt *st, int i, const void *p, size_t n)
{
  pmcp__pg_bind_blob(P(st), i, p, n);
}

static void s_bind_null(pmcp__stmt *st, int i)
{
  pmcp__pg_bind_null(P(st), i);
}

static int s_step(pmcp__stmt *st)
{
  return pmcp__pg_step(P(st));
}

static void s_reset(pmcp__stmt *st)
{
  pmcp__pg_reset(P(st));
}

static int s_is_null(pmcp__stmt *st, int col)
{
  return pmcp__pg_isnull(P(st), col);
}

static int64_t s_int64(pmcp__stmt *st, int col)
{
  return pmcp__pg_int64(P(st), col);
}

static double s_double(pmcp__stmt *st, int col)
{
  return pmcp__pg_double(P(st), col);
}

static const char *s_text(pmcp__stmt *st, int col, size_t *len)
{
  const char *v = pmcp__pg_text(P(st), col);
  if (len)
    *len = v ? (size_t)PQgetlength(P(st)->res, P(st)->row, col) : 0;
  return v;
}

static const void *s_blob(pmcp__stmt *st, int col, size_t *len)
{
  return pmcp__pg_blob(P(st), col, len);
}

static int s_json(pmcp_buf *b, pmcp__stmt *st, int col)
{
  return pmcp__pg_json_col(b, P(st), col);
}

static int64_t s_changes(pmcp__stmt *st)
{
  return pmcp__pg_changes(P(st));
}

static int s_err(pmcp_store *s, pmcp__stmt *st, const char *what)
{
  return pmcp__pg_err(s, P(st)->g, what);
}

static int s_defer(pmcp_store *s, pmcp__stmt *st, const char *what)
{
  return pmcp__pg_defer(s, P(st), what);
}

static const pmcp__stmt_ops pg_stmt_ops = {
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
  .defer = s_defer,
};
