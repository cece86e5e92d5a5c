/* SPDX-License-Identifier: MIT */
/* `query_sql`: "what exactly do the tables say?" One read-only SELECT over
 * the lab's research tables in `sql`, enforced by SQLite (sql_guard.h);
 * called without `sql` it lists the tables and columns this caller may
 * read, with their types (also the resource probe://sql/schema). Rows are
 * exact (integers as integers, reals in shortest round-trip form, blobs as
 * x'..' hex) and paged under the token budget with a cursor that re-runs
 * the statement and skips the rows already sent. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probemcp/budget.h"
#include "research/long_calls.h"
#include "research/metrics.h"
#include "research/sql_guard.h"
#include "research/sql_rows.h"
#ifdef PMCP_HAVE_POSTGRES
#include "research/sql_pg.h"
#endif

#define N_SCOPED 8
#define N_POOL 16

typedef struct qsql {
  pmcp__research *rs;
  pthread_mutex_t mu; /* one statement at a time on the connection */
  pmcp__sqlg *g;
  /* SQLite: connections scoped to one workspace each (scoped_guard). */
  struct {
    pmcp_tenant t;
    pmcp__sqlg *g;
    uint64_t used;
  } scoped[N_SCOPED];
  uint64_t clock;
#ifdef PMCP_HAVE_POSTGRES
  pmcp__pgq *pgq;       /* the PostgreSQL store's guarded connection */
  /* More of them, one per statement running: statements of different
   * callers run side by side, not one behind the other (under mu). */
  struct {
    pmcp__pgq *c;
    int busy;
  } pool[N_POOL];
#endif
  int open_rc;
  char open_err[200];
  int refs;
  pmcp__long_calls running; /* statements per principal and in all */
  pmcp__fifo turn;          /* statements take mu in the order they came */
} qsql;

static void qsql_release(void *ud)
{
  qsql *q = ud;
  if (!q || --q->refs > 0)
    return;
  pmcp__sqlg_free(q->g);
  for (size_t i = 0; i < N_SCOPED; i++)
    pmcp__sqlg_free(q->scoped[i].g);
#ifdef PMCP_HAVE_POSTGRES
  pmcp__pgq_free(q->pgq);
  for (size_t i = 0; i < N_POOL; i++)
    pmcp__pgq_free(q->pool[i].c);
#endif
  pthread_mutex_destroy(&q->mu);
  pmcp__long_dispose(&q->running);
  pmcp__fifo_dispose(&q->turn);
  pmcp__research_release(q->rs);
  free(q);
}

/* Opens the guarded connection on first use (the store file exists by
 * then; a host may register before filling it). Opening reads through the
 * store's own connection, which the other tools use from other workers:
 * it holds the store lock like every store call (on PostgreSQL, two
 * threads on one PGconn mixed up statements and hung). */
static pmcp__sqlg *guard(qsql *q)
{
  int pg = 0;
  pthread_mutex_lock(q->rs->lock);
#ifdef PMCP_HAVE_POSTGRES
  if (!q->pgq && !q->open_rc && !strcmp(pmcp_store_backend(q->rs->store), "postgres"))
    q->open_rc = pmcp__pgq_open(&q->pgq, q->rs->store, q->rs->tenant.id, q->open_err,
                                sizeof q->open_err);
  pg = q->pgq != NULL;
#endif
  if (!q->g && !q->open_rc && !pg)
    q->open_rc = pmcp__sqlg_open(&q->g, q->rs->store, q->rs->tenant, NULL, q->open_err,
                                 sizeof q->open_err);
  pthread_mutex_unlock(q->rs->lock);
  return q->g;
}

/* Writes the columns of readable table @p i: {"name":..,"columns":{col:type}}. */
static int table_item(pmcp__sqlg *g, size_t i, pmcp_json *j)
{
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT * FROM %s", pmcp__sqlg_table(i));
  sqlite3_stmt *st = NULL;
  char err[200];
  int rc = pmcp__sqlg_prepare(g, sql, strlen(sql), NULL, &st, err, sizeof err);
  if (rc)
    return rc;
  pmcp_json_object_begin(j);
  pmcp_json_key(j, "name");
  pmcp_json_string(j, pmcp__sqlg_table(i));
  pmcp_json_key(j, "columns");
  pmcp_json_object_begin(j);
  for (int c = 0; c < sqlite3_column_count(st); c++) {
    const char *t = sqlite3_column_decltype(st, c);
    pmcp_json_key(j, sqlite3_column_name(st, c));
    pmcp_json_string(j, t && *t ? t : "ANY");
  }
  pmcp_json_object_end(j);
  pmcp_json_object_end(j);
  sqlite3_finalize(st);
  return 0;
}

static int list_tables(pmcp_call *call, qsql *q, pmcp__sqlg *g)
{
  pmcp_page *pg = pmcp__rs_page(call, q->rs, 0);
  if (!pg)
    return 0;
  size_t pos = pmcp__mx_pos(pg);
  pmcp_page_field_string(pg, "usage", "query_sql {\"sql\": \"SELECT ...\"}: one read-only "
                                      "statement over these tables (SQLite dialect)");
  pmcp_page_field_string(pg, "deleted", PMCP__SQL_DELETED_NOTE);
  pmcp_page_list(pg, "tables");
  int more = 0;
  for (size_t i = pos; pmcp__sqlg_table(i); i++) {
    pmcp_json *j = pmcp_page_item(pg);
    if (!j || table_item(g, i, j))
      break;
    uint64_t next = i + 1;
    int arc = pmcp_page_commit(pg, &next, sizeof next);
    if (arc == PMCP_EBUDGET) {
      more = 1;
      break;
    }
    if (arc)
      break;
  }
  return pmcp__rs_send(call, pg, more);
}

static void hex_blob(pmcp_json *j, const unsigned char *p, int n)
{
  static const char hx[] = "0123456789abcdef";
  char *s = malloc((size_t)n * 2 + 4);
  if (!s) {
    pmcp_json_null(j);
    return;
  }
  size_t k = 0;
  s[k++] = 'x';
  s[k++] = '\'';
  for (int i = 0; i < n; i++) {
    s[k++] = hx[p[i] >> 4];
    s[k++] = hx[p[i] & 15];
  }
  s[k++] = '\'';
  pmcp_json_string_n(j, s, k);
  free(s);
}

/* A statement's rows for the shared pager (sql_rows.h). */
typedef struct sq_rows {
  pmcp_call *call;
  pmcp__sqlg *g;
  sqlite3_stmt *st;
  int armed;
  char err[300];
} sq_rows;

static const char *sq_name(void *src, int c)
{
  return sqlite3_column_name(((sq_rows *)src)->st, c);
}

static int sq_next(void *src)
{
  sq_rows *r = src;
  if (!r->armed) {
    pmcp__sqlg_arm(r->g, r->call);
    r->armed = 1;
  }
  int rc = pmcp__sqlg_step(r->g, r->st, r->err, sizeof r->err);
  if (rc == SQLITE_ROW)
    return 1;
  if (rc == SQLITE_DONE)
    return 0;
  return strcmp(r->err, "cancelled") ? PMCP_EIO : PMCP_ECANCELLED;
}

static uint64_t sq_digest(void *src, uint64_t h)
{
  sqlite3_stmt *st = ((sq_rows *)src)->st;
  int nc = sqlite3_column_count(st);
  for (int c = 0; c < nc; c++) {
    int t = sqlite3_column_type(st, c);
    h = pmcp__rs_scope_mix(h, t);
    if (t == SQLITE_INTEGER) {
      h = pmcp__rs_scope_mix(h, sqlite3_column_int64(st, c));
    } else if (t == SQLITE_FLOAT) {
      double d = sqlite3_column_double(st, c);
      int64_t bits;
      memcpy(&bits, &d, sizeof bits);
      h = pmcp__rs_scope_mix(h, bits);
    } else if (t != SQLITE_NULL) {
      const unsigned char *p = t == SQLITE_BLOB ? sqlite3_column_blob(st, c)
                                                : sqlite3_column_text(st, c);
      int n = sqlite3_column_bytes(st, c);
      h = pmcp__rs_scope_mix(h, n);
      for (int i = 0; p && i < n; i++)
        h = pmcp__rs_scope_mix(h, p[i]);
    }
  }
  return h;
}

static void sq_cells(void *src, pmcp_json *j)
{
  sqlite3_stmt *st = ((sq_rows *)src)->st;
  int nc = sqlite3_column_count(st);
  for (int c = 0; c < nc; c++) {
    switch (sqlite3_column_type(st, c)) {
    case SQLITE_INTEGER:
      pmcp_json_int(j, sqlite3_column_int64(st, c));
      break;
    case SQLITE_FLOAT:
      pmcp_json_number_lossless(j, sqlite3_column_double(st, c));
      break;
    case SQLITE_TEXT:
      pmcp_json_string_n(j, (const char *)sqlite3_column_text(st, c),
                         (size_t)sqlite3_column_bytes(st, c));
      break;
    case SQLITE_BLOB:
      hex_blob(j, sqlite3_column_blob(st, c), sqlite3_column_bytes(st, c));
      break;
    default:
      pmcp_json_null(j);
    }
  }
}

static void sq_end(void *src)
{
  sq_rows *r = src;
  sqlite3_finalize(r->st);
  r->st = NULL;
}

static int sq_fail(void *src, pmcp_call *call, int rc)
{
  if (rc == PMCP_ECANCELLED)
    return PMCP_ECANCELLED;
  return pmcp__rs_fail(call, PMCP_TERR_SQL, "%s", ((sq_rows *)src)->err);
}

static int run_sql(pmcp_call *call, qsql *q, pmcp__sqlg *g, const char *sql, size_t len)
{
  sq_rows r = {call, g, NULL, 0, ""};
  int rc = pmcp__sqlg_prepare(g, sql, len, call, &r.st, r.err, sizeof r.err);
  if (rc)
    return pmcp__rs_fail(call, rc == PMCP_EDENIED ? PMCP_TERR_DENIED : PMCP_TERR_INVALID_SQL,
                         "%s", r.err);
  pmcp__sql_rows rows = {&r, sqlite3_column_count(r.st), sq_name, sq_next, sq_digest,
                         sq_cells, sq_end, sq_fail};
  return pmcp__sql_rows_send(call, q->rs, &rows);
}

/* SQLite: the guarded connection whose views keep workspace @p t's rows,
 * opened on first use and kept (a few workspaces; the least recently
 * used is closed first). Under q->mu. */
static pmcp__sqlg *scoped_guard(qsql *q, pmcp_tenant t, char *err, size_t errlen)
{
  q->clock++;
  size_t victim = 0;
  for (size_t i = 0; i < N_SCOPED; i++) {
    if (q->scoped[i].g && q->scoped[i].t.workspace == t.workspace &&
        q->scoped[i].t.unfiled == t.unfiled) {
      q->scoped[i].used = q->clock;
      return q->scoped[i].g;
    }
    if (!q->scoped[i].g || (q->scoped[victim].g && q->scoped[i].used < q->scoped[victim].used))
      victim = i;
  }
  pmcp__sqlg *g = NULL;
  pthread_mutex_lock(q->rs->lock); /* opening reads through the store (guard()) */
  int rc = pmcp__sqlg_open(&g, q->rs->store, t, NULL, err, errlen);
  pthread_mutex_unlock(q->rs->lock);
  if (rc != 0)
    return NULL;
  pmcp__sqlg_free(q->scoped[victim].g);
  q->scoped[victim].g = g;
  q->scoped[victim].t = t;
  q->scoped[victim].used = q->clock;
  return g;
}

static int query_sql_in(pmcp_call *call, qsql *q, pmcp_tenant t);

/* q->mu for a statement, in turn. */
static void qlock(qsql *q)
{
  pmcp__fifo_lock(&q->turn);
  pthread_mutex_lock(&q->mu);
}

static void qunlock(qsql *q)
{
  pthread_mutex_unlock(&q->mu);
  pmcp__fifo_unlock(&q->turn);
}

#ifdef PMCP_HAVE_POSTGRES
/* A connection of the pool for one statement, opened on first use; NULL
 * with a message when none can be had. Under q->mu. */
static pmcp__pgq *pg_take(qsql *q, char *err, size_t errlen)
{
  size_t empty = N_POOL;
  for (size_t i = 0; i < N_POOL; i++) {
    if (q->pool[i].c && !q->pool[i].busy) {
      q->pool[i].busy = 1;
      return q->pool[i].c;
    }
    if (!q->pool[i].c && empty == N_POOL)
      empty = i;
  }
  if (empty == N_POOL) {
    snprintf(err, errlen, "busy: every query connection is in use; retry in a few seconds");
    return NULL;
  }
  pthread_mutex_lock(q->rs->lock); /* opening reads through the store (guard()) */
  int rc = pmcp__pgq_open(&q->pool[empty].c, q->rs->store, q->rs->tenant.id, err, errlen);
  pthread_mutex_unlock(q->rs->lock);
  if (rc)
    return NULL;
  q->pool[empty].busy = 1;
  return q->pool[empty].c;
}

static void pg_give(qsql *q, pmcp__pgq *c)
{
  pthread_mutex_lock(&q->mu);
  for (size_t i = 0; i < N_POOL; i++)
    if (q->pool[i].c == c)
      q->pool[i].busy = 0;
  pthread_mutex_unlock(&q->mu);
}
#endif

static int query_sql(pmcp_call *call, void *ud)
{
  qsql *q = ud;
  /* A statement may scan large tables for seconds: for a client that takes
   * tasks it runs as one (the table list stays synchronous). */
  if (pmcp_arg_has(call, "sql") && pmcp_call_task(call))
    return 0;
  /* The workspace the call acts in (the host's scope hook). */
  pmcp_tenant t;
  pmcp_call_scope sc = PMCP__CALL_SCOPE_INIT;
  int rc = pmcp__rs_scope(call, q->rs, &t, &sc);
  if (rc) {
    pmcp__call_scope_dispose(&sc);
    return rc > 0 ? 0 : rc;
  }
  /* A bounded number at once, per principal (the host's, else the
   * session) and in all: each may hold a worker and a query connection
   * for seconds. */
  const char *who = pmcp_call_scope_principal(&sc);
  if (!who[0] && pmcp_call_session(call))
    who = pmcp_call_session(call);
  char busy[200];
  if (pmcp__long_enter(&q->running, pmcp_call_server(call), who, busy, sizeof busy))
    rc = pmcp__rs_fail(call, PMCP_TERR_BUSY, "%s", busy);
  else {
    rc = query_sql_in(call, q, t);
    pmcp__long_leave(&q->running, who);
  }
  pmcp__call_scope_dispose(&sc);
  return rc;
}

static int query_sql_in(pmcp_call *call, qsql *q, pmcp_tenant t)
{
  qlock(q);
  pmcp__sqlg *g = guard(q);
  int rc;
#ifdef PMCP_HAVE_POSTGRES
  if (q->pgq) {
    /* connections for every workspace: each statement proves its own
     * scope, and the views keep that scope's rows (store/pg_query.h) */
    if (!pmcp_arg_has(call, "sql")) {
      rc = pmcp__sqlpg_list(call, q->rs, q->pgq);
    } else {
      const char *sql = NULL;
      size_t len = 0;
      pmcp_arg_string(call, "sql", &sql, &len);
      char err[200] = "";
      pmcp__pgq *c = pg_take(q, err, sizeof err);
      qunlock(q);
      if (!c)
        return pmcp__rs_fail(call, strncmp(err, "busy", 4) ? PMCP_TERR_STORE : PMCP_TERR_BUSY,
                             "%s", err);
      rc = pmcp__sqlpg_run(call, q->rs, c, t, sql, len);
      pg_give(q, c);
      return rc;
    }
    qunlock(q);
    return rc;
  }
#endif
  char err[200] = "";
  if (g && t.workspace)
    g = scoped_guard(q, t, err, sizeof err);
  if (!g) {
    const char *why = err[0] ? err : q->open_err;
    int busy = !strncmp(why, "busy", 4);
    rc = pmcp__rs_fail(call, busy ? PMCP_TERR_BUSY : PMCP_TERR_STORE, "%s", why);
    /* every reader role in use is for now: the next call tries again */
    if (busy && !err[0])
      q->open_rc = 0, q->open_err[0] = '\0';
  } else if (!pmcp_arg_has(call, "sql")) {
    rc = list_tables(call, q, g);
  } else {
    const char *sql = NULL;
    size_t len = 0;
    pmcp_arg_string(call, "sql", &sql, &len);
    rc = run_sql(call, q, g, sql, len);
  }
  qunlock(q);
  return rc;
}

/* probe://sql/schema: the same table listing, whole, as JSON. */
static int read_schema(pmcp_call *call, void *ud)
{
  qsql *q = ud;
  pthread_mutex_lock(&q->mu);
  pmcp__sqlg *g = guard(q);
  pmcp_json *j = NULL;
#ifdef PMCP_HAVE_POSTGRES
  int pg = q->pgq != NULL;
#else
  int pg = 0;
#endif
  int rc = g || pg ? pmcp_json_new(&j, 0) : PMCP_ENOTFOUND;
#ifdef PMCP_HAVE_POSTGRES
  if (!rc && pg)
    rc = pmcp__sqlpg_schema(q->pgq, j);
#endif
  if (!rc && !pg) {
    pmcp_json_object_begin(j);
    pmcp_json_key(j, "tables");
    pmcp_json_array_begin(j);
    for (size_t i = 0; pmcp__sqlg_table(i) && !rc; i++)
      rc = table_item(g, i, j);
    pmcp_json_array_end(j);
    pmcp_json_object_end(j);
  }
  pthread_mutex_unlock(&q->mu);
  const char *t = j ? pmcp_json_text(j, NULL) : NULL;
  if (!rc && t)
    rc = pmcp_result_resource_text(call, pmcp_call_uri(call), "application/json", t);
  else if (!rc)
    rc = PMCP_ENOMEM;
  pmcp_json_free(j);
  return rc;
}

static const pmcp_arg_spec args[] = {
  {"sql", PMCP_T_STRING, 0, "one read-only SELECT; absent: list the tables", 1, 1, 1, 20000, NULL, NULL},
};

static const char desc[] =
  "What exactly do the tables say? One read-only SELECT over the lab's "
  "research tables; no arguments lists them. Rows are exact. metric_points(series_id, step, "
  "time, value; NaN is NULL): filter by series_id and step. 5 s CPU; values over 1 MiB are "
  "errors.";

int pmcp__research_add_query_sql(pmcp_server *server, pmcp__research *rs)
{
  qsql *q = calloc(1, sizeof *q);
  if (!q)
    return PMCP_ENOMEM;
  pthread_mutex_init(&q->mu, NULL);
  pmcp__long_init(&q->running);
  pmcp__fifo_init(&q->turn);
  q->rs = pmcp__research_retain(rs);
  q->refs = 2;
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = "query_sql";
  d.title = "Read-only SQL";
  d.description = desc;
  d.args = args;
  d.n_args = 1;
  d.read_only = PMCP_HINT_TRUE;
  /* destructive and idempotent hints mean something only for tools that
   * write (MCP): read-only says it all */
  d.open_world = PMCP_HINT_FALSE;
  d.flags = PMCP_TOOL_BUDGETED | PMCP_TOOL_BLOCKING | PMCP_TOOL_TASK_ON_DEMAND;
  d.handler = query_sql;
  d.ud = q;
  d.ud_free = qsql_release;
  int rc = pmcp_server_add_tool(server, &d);
  if (rc) {
    qsql_release(q); /* the resource's reference is never handed out */
    return rc;
  }
  pmcp_resource_def r = PMCP_RESOURCE_DEF_INIT;
  r.uri = "probe://sql/schema";
  r.name = "sql-schema";
  r.title = "query_sql tables";
  r.description = "The tables and columns query_sql may read, with their types";
  r.mime_type = "application/json";
  r.flags = PMCP_TOOL_BLOCKING;
  r.read = read_schema;
  r.ud = q;
  r.ud_free = qsql_release;
  return pmcp_server_add_resource(server, &r);
}
