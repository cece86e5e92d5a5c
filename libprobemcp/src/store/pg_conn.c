/* SPDX-License-Identifier: MIT */
/* PostgreSQL backend: opening (connect, migrate under an advisory lock),
 * the tenant of each call (row-level security's session setting), the
 * write scope of each call (a transaction of its own or a savepoint in the
 * caller's, serialized per tenant like SQLite's writers), tenants,
 * secrets, versions, transactions, and the lookups every other file uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "store/db.h"
#include "store/pg.h"

extern const pmcp__db_ops pmcp__pg_db_ops;

int pmcp__pg_reconnect_if_lost(pmcp__pg *g);

int pmcp__pg_ready(pmcp_store *s, pmcp__pg *g, int64_t tenant)
{
  if (tenant > 0)
    g->want_tenant = tenant;
  if (PQstatus(g->conn) != CONNECTION_OK) {
    if (g->in_txn) {
      g->txn_lost = 1;
      return pmcp_store_set_error(s, PMCP_EIO,
          "the connection to PostgreSQL was lost inside the transaction; nothing of it was "
          "stored (roll back and start again)");
    }
    if (pmcp__pg_reconnect_if_lost(g) != 0)
      return pmcp_store_set_error(s, PMCP_EIO, "cannot reach PostgreSQL (the server is down"
                                  " or unreachable): try again");
  }
  if (tenant > 0 && g->cur_tenant != tenant) {
    static const char sql[] = "SELECT set_config('probe.tenant', $1, false)";
    pmcp__pg_stmt *st;
    int rc = pmcp__pg_prep(s, g, sql, &st);
    if (rc)
      return rc;
    char v[32];
    snprintf(v, sizeof v, "%lld", (long long)tenant);
    pmcp__pg_bind_text(st, 1, v);
    if ((rc = pmcp__pg_done(s, st, "set tenant")))
      return rc;
    g->cur_tenant = tenant;
  }
  return 0;
}

/* The keyword index: one row per ref; its tsvector is a generated column
 * (title weighted A, body B), so replacing the row reindexes it. */
#define INDEX_UPSERT                                                                   \
  " ON CONFLICT (tenant_id, ref) DO UPDATE SET kind=excluded.kind, title=excluded.title," \
  " body=excluded.body"
int pmcp__pg_index(pmcp_store *s, pmcp__pg *g, pmcp_tenant t, const char *ref,
                   const char *kind, const char *title, const char *body)
{
  static const char sql[] =
      "INSERT INTO search_docs(tenant_id, ref, kind, title, body) VALUES($1,$2,$3,$4,$5)"
      INDEX_UPSERT;
  pmcp__pg_stmt *st;
  int rc = pmcp__pg_prep(s, g, sql, &st);
  if (rc)
    return rc;
  pmcp__pg_bind_int64(st, 1, t.id);
  pmcp__pg_bind_text(st, 2, ref);
  pmcp__pg_bind_text(st, 3, kind);
  pmcp__pg_bind_text(st, 4, title ? title : "");
  pmcp__pg_bind_text(st, 5, body ? body : "");
  return pmcp__pg_defer(s, st, "search index");
}

/* The index document read by @p doc (sql.h: index_doc) goes in by one
 * INSERT ... SELECT, sent without waiting: the row, its attributes and
 * tags never travel. The statement is made once per document query. */
int pmcp__pg_index_doc(pmcp_store *s, pmcp__pg *g, pmcp_tenant t, const char *doc,
                       const char *kind, int64_t rowid)
{
  const char *sql = NULL;
  for (size_t i = 0; i < g->n_docs && !sql; i++)
    if (g->docs[i].doc == doc)
      sql = g->docs[i].sql;
  if (!sql) {
    if (g->n_docs == sizeof g->docs / sizeof g->docs[0])
      return pmcp_store_set_error(s, PMCP_EINTERNAL, "too many index document queries");
    pmcp_buf b = PMCP_BUF_INIT;
    int prc = pmcp__buf_printf(&b, "INSERT INTO search_docs(tenant_id, ref, kind, title, body)"
                               " SELECT ?3, d.r, ?1, d.t, d.b FROM (%s) AS d(r, t, b)"
                               INDEX_UPSERT, doc);
    if (prc || !b.ptr) {
      pmcp_buf_dispose(&b);
      return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
    }
    g->docs[g->n_docs].doc = doc;
    g->docs[g->n_docs].sql = b.ptr;
    sql = b.ptr;
    g->n_docs++;
  }
  pmcp__pg_stmt *st;
  int rc = pmcp__pg_prep(s, g, sql, &st);
  if (rc)
    return rc;
  pmcp__pg_bind_text(st, 1, kind);
  pmcp__pg_bind_int64(st, 2, rowid);
  pmcp__pg_bind_int64(st, 3, t.id);
  return pmcp__pg_defer(s, st, "search index");
}

/* ---- write scope ---- */

#define TXN_LOST \
  "the transaction was lost with the connection to PostgreSQL; nothing of it was stored"
static int txn_lost(pmcp_store *s, pmcp__pg *g)
{
  pmcp__pg_drop_pending(g);
  return pmcp_store_set_error(s, PMCP_ESTORE, TXN_LOST);
}

/* Writers of one tenant take turns, as SQLite's do: ids picked from a
 * lookup stay free until the insert, and versions bump in order. The turn
 * is the tenant's row of writer_locks, locked until the transaction ends
 * (inserted the first time): a lock only roles with privileges on the
 * store's tables can take, so query_sql's reader cannot hold writers up. */
static int writer_lock(pmcp_store *s, pmcp__pg *g, pmcp_tenant t)
{
  if (g->locked_tenant == t.id)
    return 0;
  static const char sql[] = "INSERT INTO writer_locks(tenant_id) VALUES($1) ON CONFLICT"
                            " (tenant_id) DO UPDATE SET tenant_id = excluded.tenant_id";
  pmcp__pg_stmt *st;
  int rc = pmcp__pg_prep(s, g, sql, &st);
  if (rc)
    return rc;
  pmcp__pg_bind_int64(st, 1, t.id);
  if ((rc = pmcp__pg_defer(s, st, "writer lock")))
    return rc;
  g->locked_tenant = t.id;
  return 0;
}

/* A call's write scope: a transaction of its own, or a savepoint in the
 * caller's. In pipeline mode BEGIN and the writer lock are only sent: they
 * travel with the call's first statement that needs an answer, and the
 * call's last statements with the COMMIT (or RELEASE), so a call costs one
 * round trip plus one per answer it waits for. */
int pmcp__pg_wbegin(pmcp_store *s, pmcp__pg *g, pmcp_tenant t)
{
  if (g->in_txn && g->txn_lost)
    return txn_lost(s, g);
  int rc = pmcp__pg_ready(s, g, t.id);
  if (rc)
    return rc;
  pmcp__pg_pipe_enter(g);
  if (g->in_txn)
    rc = pmcp__pg_defer_exec(s, g, "SAVEPOINT pmcp_call", "store");
  else
    rc = pmcp__pg_defer_exec(s, g, "BEGIN", "store");
  if (rc) {
    pmcp__pg_pipe_end(g);
    return rc;
  }
  g->in_scope = 1;
  if ((rc = writer_lock(s, g, t))) {
    g->in_scope = 0;
    pmcp__pg_pipe_end(g);
    if (g->in_txn) {
      PQclear(PQexec(g->conn, "ROLLBACK TO SAVEPOINT pmcp_call"));
      PQclear(PQexec(g->conn, "RELEASE SAVEPOINT pmcp_call"));
    } else {
      PQclear(PQexec(g->conn, "ROLLBACK"));
      g->locked_tenant = 0;
    }
    g->cur_tenant = 0;
  }
  return rc;
}

static int bump(pmcp_store *s, pmcp__pg *g, pmcp_tenant t)
{
  static const char sql[] = "UPDATE tenants SET data_version=data_version+1 WHERE id=$1";
  pmcp__pg_stmt *st;
  int rc = pmcp__pg_prep(s, g, sql, &st);
  if (rc)
    return rc;
  pmcp__pg_bind_int64(st, 1, t.id);
  /* Tenants are never deleted: once its row was found, a tenant's bump
   * need not be waited for. */
  if (g->known_tenant == t.id)
    return pmcp__pg_defer(s, st, "store version");
  if ((rc = pmcp__pg_done(s, st, "store version")))
    return rc;
  if (pmcp__pg_changes(st) != 1)
    return pmcp_store_set_error(s, PMCP_EINVAL, "no such tenant");
  g->known_tenant = t.id;
  return 0;
}

/* Ends the pipeline of a scope whose work failed: the failure already
 * set is kept, whatever the rest of the pipeline says. */
static void pipe_abandon(pmcp__pg *g)
{
  char err[sizeof g->lasterr], what[sizeof g->errwhat], state[sizeof g->sqlstate];
  memcpy(err, g->lasterr, sizeof err);
  memcpy(what, g->errwhat, sizeof what);
  memcpy(state, g->sqlstate, sizeof state);
  pmcp__pg_pipe_end(g);
  memcpy(g->lasterr, err, sizeof err);
  memcpy(g->errwhat, what, sizeof what);
  memcpy(g->sqlstate, state, sizeof state);
}

int pmcp__pg_wend(pmcp_store *s, pmcp__pg *g, pmcp_tenant t, int rc)
{
  /* Inside the caller's transaction the tenant's version is raised once
   * (again after someone read it): raising it on every call made each
   * UPDATE walk the row's ever longer chain of versions, so 5000 calls in
   * one transaction cost quadratic time. */
  int bumped = 0;
  if (rc == 0 && !(g->in_txn && g->bumped_tenant == t.id)) {
    rc = bump(s, g, t);
    bumped = rc == 0;
  }
  if (g->in_txn) {
    g->in_scope = 0;
    if (rc == 0 && !g->txn_lost) {
      rc = pmcp__pg_defer_exec(s, g, "RELEASE SAVEPOINT pmcp_call", "store");
      /* Every statement the call sent is answered here: one failing
       * undoes the call (below). */
      if (rc == 0 && pmcp__pg_pipe_end(g))
        rc = pmcp__pg_err(s, g, "store");
      if (rc == 0) {
        if (bumped)
          g->bumped_tenant = t.id;
        return 0;
      }
    } else {
      pipe_abandon(g);
    }
    if (g->txn_lost) {
      /* The points buffered in the transaction go at its commit or
       * rollback (the caller, pmcp__pg_log, still puts its call's back). */
      int l = rc ? rc : pmcp_store_set_error(s, PMCP_ESTORE, TXN_LOST);
      return l;
    }
    /* Keep the call's message: the rollback's own errors do not matter,
     * but a transaction that cannot be taken back to the call's start
     * (the connection went, which libpq may notice only now) is lost.
     * The writer lock may have gone with the savepoint. */
    PGresult *r = PQexec(g->conn, "ROLLBACK TO SAVEPOINT pmcp_call");
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
      g->txn_lost = 1;
    PQclear(r);
    if (!g->txn_lost)
      PQclear(PQexec(g->conn, "RELEASE SAVEPOINT pmcp_call"));
    g->cur_tenant = 0;
    g->locked_tenant = 0;
    return rc;
  }
  /* Still in the scope: a connection lost under the last writes is not
   * re-established to run them alone (outside the transaction). */
  if (rc == 0)
    rc = pmcp__pg_flush(s, g);
  if (rc == 0)
    rc = pmcp__pg_defer_exec(s, g, "COMMIT", "store");
  if (rc == 0 && pmcp__pg_pipe_end(g))
    rc = pmcp__pg_err(s, g, "store");
  else if (rc)
    pipe_abandon(g);
  g->in_scope = 0;
  g->locked_tenant = 0;
  if (rc) {
    pmcp__pg_drop_pending(g);
    if (PQstatus(g->conn) == CONNECTION_OK &&
        PQtransactionStatus(g->conn) != PQTRANS_IDLE)
      PQclear(PQexec(g->conn, "ROLLBACK"));
    g->cur_tenant = 0;
  }
  return rc;
}

/* ---- tenants, secrets, versions, transactions ---- */

int pmcp__pg_tenant(pmcp_store *s, void *ctx, const char *name, unsigned flags,
                    pmcp_tenant *out)
{
  pmcp__pg *g = PG(ctx);
  if (!pmcp__id_ok(name) || strlen(name) > 64)
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "invalid tenant name '%.64s': use 1-64 characters of A-Z a-z 0-9 . _ -", name);
  int rc = pmcp__pg_ready(s, g, 0);
  if (rc)
    return rc;
  static const char sql[] = "SELECT id FROM tenants WHERE name=$1";
  static const char sql_ins[] =
      "INSERT INTO tenants(name, data_version, created) VALUES($1, 1, $2)"
      " ON CONFLICT (name) DO NOTHING";
  for (int pass = 0; pass < 2; pass++) {
    pmcp__pg_stmt *st;
    if ((rc = pmcp__pg_prep(s, g, sql, &st)))
      return rc;
    pmcp__pg_bind_text(st, 1, name);
    int src = pmcp__pg_step(st);
    if (src == PG_ROW) {
      out->id = pmcp__pg_int64(st, 0);
      pmcp__pg_reset(st);
      return 0;
    }
    if (src == PG_ERR)
      return pmcp__pg_err(s, g, "tenant lookup");
    pmcp__pg_reset(st);
    if (pass == 1 || !(flags & PMCP_STORE_CREATE))
      break;
    if ((rc = pmcp__pg_prep(s, g, sql_ins, &st)))
      return rc;
    pmcp__pg_bind_text(st, 1, name);
    pmcp__pg_bind_int64(st, 2, pmcp__now_ms());
    if ((rc = pmcp__pg_done(s, st, "create tenant")))
      return rc;
  }
  if (!(flags & PMCP_STORE_CREATE))
    return pmcp_store_set_error(s, PMCP_ENOTFOUND, "no tenant '%s' in this store", name);
  return pmcp_store_set_error(s, PMCP_ESTORE, "tenant '%s' could not be created", name);
}

int pmcp__pg_secret(pmcp_store *s, void *ctx, const char *name, pmcp_buf *out)
{
  pmcp__pg *g = PG(ctx);
  int rc = pmcp__pg_ready(s, g, 0);
  if (rc)
    return rc;
  static const char sql[] = "SELECT value FROM secrets WHERE name=$1";
  pmcp__pg_stmt *st;
  if ((rc = pmcp__pg_prep(s, g, sql, &st)))
    return rc;
  pmcp__pg_bind_text(st, 1, name);
  int src = pmcp__pg_step(st);
  if (src != PG_ROW)
    return src == PG_DONE ? pmcp_store_set_error(s, PMCP_ENOTFOUND, "no secret '%.64s'", name)
                          : pmcp__pg_err(s, g, "secret");
  size_t n = 0;
  const void *b = pmcp__pg_blob(st, 0, &n);
  pmcp__buf_reset(out);
  rc = b ? pmcp__buf_append(out, b, n) : pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  pmcp__pg_reset(st);
  return rc;
}

int pmcp__pg_version(pmcp_store *s, void *ctx, pmcp_tenant t, uint64_t *out)
{
  pmcp__pg *g = PG(ctx);
  int rc = pmcp__pg_ready(s, g, t.id);
  if (rc)
    return rc;
  g->bumped_tenant = 0; /* the next write inside a transaction shows again */
  static const char sql[] = "SELECT data_version FROM tenants WHERE id=$1";
  pmcp__pg_stmt *st;
  if ((rc = pmcp__pg_prep(s, g, sql, &st)))
    return rc;
  pmcp__pg_bind_int64(st, 1, t.id);
  int src = pmcp__pg_step(st);
  if (src == PG_ROW)
    *out = (uint64_t)pmcp__pg_int64(st, 0);
  pmcp__pg_reset(st);
  if (src == PG_ROW)
    return 0;
  return src == PG_DONE ? pmcp_store_set_error(s, PMCP_EINVAL, "no such tenant")
                        : pmcp__pg_err(s, g, "version");
}

int pmcp__pg_begin(pmcp_store *s, void *ctx)
{
  pmcp__pg *g = PG(ctx);
  if (g->in_txn)
    return pmcp_store_set_error(s, PMCP_EMISUSE, "a transaction is already open");
  int rc = pmcp__pg_ready(s, g, 0);
  if (rc == 0)
    rc = pmcp__pg_exec(s, g, "BEGIN");
  if (rc == 0) {
    g->in_txn = 1;
    g->txn_lost = 0;
    g->locked_tenant = 0;
    g->bumped_tenant = 0;
  }
  return rc;
}

int pmcp__pg_commit(pmcp_store *s, void *ctx)
{
  pmcp__pg *g = PG(ctx);
  if (!g->in_txn)
    return pmcp_store_set_error(s, PMCP_EMISUSE, "no transaction is open");
  g->in_txn = 0;
  g->locked_tenant = 0;
  g->bumped_tenant = 0;
  if (g->txn_lost) {
    g->txn_lost = 0;
    return txn_lost(s, g);
  }
  /* The transaction's last blocks travel with its COMMIT; a connection
   * lost under them is not re-established to write them alone. */
  pmcp__pg_pipe_enter(g);
  g->in_scope = 1;
  int rc = pmcp__pg_flush(s, g);
  if (rc == 0)
    rc = pmcp__pg_defer_exec(s, g, "COMMIT", "store");
  if (rc == 0 && pmcp__pg_pipe_end(g))
    rc = pmcp__pg_err(s, g, "store");
  else if (rc)
    pipe_abandon(g);
  g->in_scope = 0;
  if (rc) {
    pmcp__pg_drop_pending(g);
    if (PQstatus(g->conn) == CONNECTION_OK &&
        PQtransactionStatus(g->conn) != PQTRANS_IDLE)
      PQclear(PQexec(g->conn, "ROLLBACK"));
    g->cur_tenant = 0;
  }
  return rc;
}

int pmcp__pg_rollback(pmcp_store *s, void *ctx)
{
  pmcp__pg *g = PG(ctx);
  if (!g->in_txn)
    return pmcp_store_set_error(s, PMCP_EMISUSE, "no transaction is open");
  g->in_txn = 0;
  g->locked_tenant = 0;
  g->bumped_tenant = 0;
  g->cur_tenant = 0;
  pmcp__pg_drop_pending(g);
  if (g->txn_lost) {
    g->txn_lost = 0;
    return 0;
  }
  if (PQstatus(g->conn) == CONNECTION_OK)
    return pmcp__pg_exec(s, g, "ROLLBACK");
  return 0;
}

/* ---- open / close ---- */

static void pg_close(pmcp_store *s, void *ctx)
{
  pmcp__pg *g = PG(ctx);
  if (!g)
    return;
  if (g->in_txn && g->conn && PQstatus(g->conn) == CONNECTION_OK)
    PQclear(PQexec(g->conn, "ROLLBACK"));
  for (size_t i = 0; i < g->n_stmts; i++)
    pmcp__pg_finalize(g->stmts[i].st);
  free(g->stmts);
  free(g->sent);
  for (size_t i = 0; i < g->n_docs; i++)
    free(g->docs[i].sql);
  for (size_t i = 0; i < g->n_db_sql; i++)
    free(g->db_sql[i]);
  pmcp__pg_drop_pending(g);
  free(g->pending);
  if (g->conn) /* NULL when libpq could not be loaded */
    PQfinish(g->conn);
  free(g->conninfo);
  free(g);
  (void)s;
}

/* The library never writes to stderr: server notices are dropped. */
static void quiet(void *arg, const char *message)
{
  (void)arg;
  (void)message;
}

int pmcp__pg_initialize(pmcp_store *s, pmcp__pg *g)
{
  unsigned char key[32];
  if (RAND_bytes(key, sizeof key) != 1)
    return pmcp_store_set_error(s, PMCP_EINTERNAL, "no randomness for the server secret");
  /* cursor_key signs cursors; query_key makes query_sql's tenant tokens. */
  static const char sql[] =
      "INSERT INTO secrets(name, value) VALUES('cursor_key', $1), ('query_key', $2)"
      " ON CONFLICT (name) DO NOTHING";
  static const char sql_t[] =
      "INSERT INTO tenants(name, data_version, created) VALUES('default', 1, $1)"
      " ON CONFLICT (name) DO NOTHING";
  pmcp__pg_stmt *st;
  int rc = pmcp__pg_prep(s, g, sql, &st);
  if (rc)
    return rc;
  pmcp__pg_bind_blob(st, 1, key, sizeof key);
  if (RAND_bytes(key, sizeof key) != 1)
    return pmcp_store_set_error(s, PMCP_EINTERNAL, "no randomness for the server secret");
  pmcp__pg_bind_blob(st, 2, key, sizeof key);
  if ((rc = pmcp__pg_done(s, st, "create store")))
    return rc;
  if ((rc = pmcp__pg_prep(s, g, sql_t, &st)))
    return rc;
  pmcp__pg_bind_int64(st, 1, pmcp__now_ms());
  return pmcp__pg_done(s, st, "create store");
}

static const pmcp_store_ops pg_ops = {
  .version = PMCP_STORE_OPS_VERSION,
  .name = "postgres",
  .close = pg_close,
  .tenant = pmcp__pg_tenant,
  .secret = pmcp__pg_secret,
  .version_of = pmcp__pg_version,
  .begin = pmcp__pg_begin,
  .commit = pmcp__pg_commit,
  .rollback = pmcp__pg_rollback,
  .create = pmcp__sql_create,
  .run_create = pmcp__sql_run_create,
  .run_status = pmcp__sql_run_status,
  .run_event = pmcp__sql_run_event,
  .set_deleted = pmcp__sql_set_deleted,
  .set_attr = pmcp__sql_set_attr,
  .unset_attr = pmcp__sql_unset_attr,
  .tag = pmcp__sql_tag,
  .series = pmcp__pg_series,
  .log = pmcp__pg_log,
  .log_histogram = pmcp__pg_log_histogram,
  .log_scatter = pmcp__pg_log_scatter,
  .note = pmcp__sql_note,
  .artifact_add = pmcp__sql_artifact_add,
  .artifact_label = pmcp__sql_artifact_label,
  .artifact_promote = pmcp__sql_artifact_promote,
  .artifact_content = pmcp__sql_artifact_content,
  .paper = pmcp__sql_paper,
  .put = pmcp__sql_put,
  .get = pmcp__sql_get,
  .list = pmcp__pg_list,
  .search = pmcp__pg_search,
  .series_list = pmcp__pg_series_list,
  .points = pmcp__pg_points,
  .summary = pmcp__pg_summary,
  .series_sets = pmcp__pg_series_sets,
  .summary_time = pmcp__pg_summary_time,
};

int pmcp__store_pg_open(pmcp_store *s, const char *url, unsigned flags)
{
  pmcp__pg *g = calloc(1, sizeof *g);
  if (!g)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  g->c.ops = &pmcp__pg_sql_ops;
  s->ops = pg_ops;
  s->papers = pmcp__pg_papers;
  s->get_tree = pmcp__sql_get_tree;
  s->ctx = g;
  s->db = &pmcp__pg_db_ops;
  g->readonly = (flags & PMCP_STORE_READONLY) != 0;
  /* Pipeline mode can be turned off (a connection pooler that does not
   * pass it through; the tests of the fallback). */
  const char *pipe = getenv("PROBE_PG_PIPELINE");
  g->nopipe = pipe && (strcmp(pipe, "off") == 0 || strcmp(pipe, "0") == 0);
  g->conninfo = strdup(url);
  const char *why = NULL;
  if (pmcp__pq_load(&why))
    return pmcp_store_set_error(s, PMCP_EUNSUPPORTED, "%s", why);
  /* A server that accepts the connection and never answers (hung, or a
   * half-open balancer) must not block an open or a reconnect (PQreset
   * keeps these options) forever: 10 s unless the URL or
   * PGCONNECT_TIMEOUT says otherwise (the URL's values override these). */
  const char *tmo = getenv("PGCONNECT_TIMEOUT");
  const char *kw[] = {"connect_timeout", "dbname", NULL};
  const char *vals[] = {tmo && *tmo ? tmo : "10", url, NULL};
  g->conn = PQconnectdbParams(kw, vals, 1);
  if (!g->conninfo || !g->conn)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  PQsetNoticeProcessor(g->conn, quiet, NULL);
  if (PQstatus(g->conn) != CONNECTION_OK) {
    char msg[300];
    snprintf(msg, sizeof msg, "%s", PQerrorMessage(g->conn));
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
      msg[--n] = '\0';
    /* libpq may quote the URL back (a malformed one): never its password. */
    pmcp_buf safe = PMCP_BUF_INIT;
    int mrc = pmcp__mask_passwords(&safe, msg, url);
    int rc = mrc ? pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory")
                 : pmcp_store_set_error(s, PMCP_EIO, "cannot connect to PostgreSQL: %s", safe.ptr);
    pmcp_buf_dispose(&safe);
    return rc;
  }
  /* No JIT: the backend's statements are short, and the cost estimates of
   * a summary over a long series made PostgreSQL spend seconds compiling
   * one that runs in milliseconds. Doubles leave as their shortest exact
   * text (a record is the stored record), whatever the server's default. */
  int rc = pmcp__pg_exec(s, g, "SET client_min_messages = warning; SET jit = off;"
                               " SET extra_float_digits = 3");
  if (rc == 0 && g->readonly)
    rc = pmcp__pg_exec(s, g, "SET default_transaction_read_only = on");
  if (rc)
    return rc;
  return pmcp__pg_migrate(s, g, flags);
}
