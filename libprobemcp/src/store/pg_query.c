/* SPDX-License-Identifier: MIT */
/* query_sql's guarded connection on PostgreSQL (pg_query.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "store/pg.h"
#include "store/pg_query.h"
#include "store/ws_scope.h"
#include "util/sql_lex.h"

struct pmcp__pgq {
  PGconn *conn;
  int64_t tenant;
  unsigned char *key; /* the store's query_key */
  size_t klen;
  int done; /* the streamed statement's results have all been read */
  /* how it logged in, to log in again as another free role when its own
   * was taken by another replica while the server was away */
  char *conninfo;
  char options[300];
  char group[24]; /* "" : the shared role */
};

static void quiet(void *arg, const char *message)
{
  (void)arg;
  (void)message;
}

/* The scope a token proves, as the message it is made of: "tenant/workspace/
 * unfiled" in decimal (workspace 0: the whole tenant). The view function
 * formats the numbers it parsed the same way, so a token names exactly one
 * scope. */
static void scope_text(pmcp_tenant t, char out[72])
{
  snprintf(out, 72, "%lld/%lld/%d", (long long)t.id, (long long)t.workspace,
           t.workspace && t.unfiled ? 1 : 0);
}

int pmcp__pgq_open(pmcp__pgq **out, pmcp_store *store, int64_t tenant, char *err,
                   size_t errlen)
{
  *out = NULL;
  if (!store || store->magic != PMCP__STORE_MAGIC || strcmp(pmcp_store_backend(store), "postgres"))
    return PMCP_EUNSUPPORTED;
  pmcp__pg *g = PG(store->ctx);
  int rc = pmcp__pg_ready(store, g, tenant);
  if (rc) {
    snprintf(err, errlen, "the store's database cannot be reached");
    return rc;
  }
  /* The schema's name, the query key and whether the store has login
   * roles of its own for query_sql (pg_readers.c), read by the store's own
   * role. */
  static const char sql[] =
      "SELECT current_schema(), k.value, EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname ="
      " 'probe_q_' || left(encode(sha256(k.value || convert_to('probe-reader-role', 'UTF8')),"
      " 'hex'), 12)) FROM (SELECT (SELECT value FROM secrets WHERE name='query_key') AS value) k";
  pmcp__pg_stmt *st;
  if ((rc = pmcp__pg_prep(store, g, sql, &st)))
    return rc;
  if (pmcp__pg_step(st) != PG_ROW || pmcp__pg_isnull(st, 1)) {
    pmcp__pg_reset(st);
    snprintf(err, errlen, "this store has no query_sql views (recreate it with 'probe init')");
    return PMCP_EUNSUPPORTED;
  }
  char options[300];
  snprintf(options, sizeof options, "-csearch_path=%s_sql -cdefault_transaction_read_only=on",
           pmcp__pg_text(st, 0));
  size_t klen = 0;
  const unsigned char *key = pmcp__pg_blob(st, 1, &klen);
  /* An operator's PROBE_PG_QUERY_USER is the role they chose: it wins. */
  const char *user = getenv("PROBE_PG_QUERY_USER");
  int own = pmcp__pg_int64(st, 2) != 0 && !(user && *user);
  pmcp__pgq *q = calloc(1, sizeof *q);
  if (!q || !key) {
    pmcp__pg_reset(st);
    free(q);
    return PMCP_ENOMEM;
  }
  q->tenant = tenant;
  q->key = malloc(klen ? klen : 1);
  if (!q->key) {
    pmcp__pg_reset(st);
    free(q);
    return PMCP_ENOMEM;
  }
  memcpy(q->key, key, klen);
  q->klen = klen;
  pmcp__pg_reset(st);
  if (own)
    pmcp__pgq_group(q->key, q->klen, q->group);
  snprintf(q->options, sizeof q->options, "%s", options);
  q->conninfo = strdup(g->conninfo);
  q->conn = q->conninfo ? pmcp__pgq_login(g->conninfo, options, own ? q->group : NULL, q->key,
                                          q->klen, err, errlen)
                        : NULL;
  if (!q->conn) {
    if (!q->conninfo)
      snprintf(err, errlen, "out of memory");
    pmcp__pgq_free(q);
    return strncmp(err, "busy", 4) ? PMCP_EUNSUPPORTED : PMCP_EIO;
  }
  PQsetNoticeProcessor(q->conn, quiet, NULL);
  *out = q;
  return 0;
}

void pmcp__pgq_free(pmcp__pgq *q)
{
  if (!q)
    return;
  if (q->conn)
    PQfinish(q->conn);
  if (q->key)
    OPENSSL_cleanse(q->key, q->klen);
  free(q->key);
  free(q->conninfo);
  free(q);
}

#define LOST_MSG \
  "the connection to PostgreSQL was lost (the server may have restarted)"

/* Opens the statement's READ ONLY transaction with scope @p t proven:
 * every probe.* setting and the timeout are local to it. A connection
 * found dead (the server restarted since the last statement) is opened
 * again once before giving up. */
static int begin(pmcp__pgq *q, pmcp_tenant t, int64_t timeout_ms, char *err, size_t errlen)
{
  char tmo[32], tenant[24], ws[24], scope[72], token[65];
  snprintf(tmo, sizeof tmo, "%lld", (long long)(timeout_ms > 0 ? timeout_ms : 5000));
  snprintf(tenant, sizeof tenant, "%lld", (long long)t.id);
  snprintf(ws, sizeof ws, "%lld", (long long)t.workspace);
  scope_text(t, scope);
  /* hex(sha256(key || scope || key)), as probe_query_scope() checks */
  pmcp__pgq_derive(q->key, q->klen, scope, 1, token);
  const char *pv[6] = {tenant, ws, t.workspace && t.unfiled ? "1" : "0", token, tmo, NULL};
  int ok = 0;
  for (int attempt = 0; attempt < 2 && !ok; attempt++) {
    if (PQstatus(q->conn) != CONNECTION_OK)
      PQreset(q->conn);
    if (PQstatus(q->conn) != CONNECTION_OK && q->group[0]) {
      /* its role may be another replica's now (CONNECTION LIMIT 1) */
      char why[200];
      PGconn *c = pmcp__pgq_login(q->conninfo, q->options, q->group, q->key, q->klen, why,
                                  sizeof why);
      if (c) {
        PQfinish(q->conn);
        q->conn = c;
        PQsetNoticeProcessor(q->conn, quiet, NULL);
      }
    }
    if (PQstatus(q->conn) != CONNECTION_OK)
      break;
    PGresult *r = PQexec(q->conn, "BEGIN READ ONLY");
    ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (ok) {
      r = PQexecParams(q->conn,
          "SELECT set_config('probe.tenant', $1, true), set_config('probe.qtenant', $1, true),"
          " set_config('probe.qworkspace', $2, true), set_config('probe.qunfiled', $3, true),"
          " set_config('probe.qtoken', $4, true), set_config('statement_timeout', $5, true)",
          5, NULL, pv, NULL, NULL, 0);
      ok = PQresultStatus(r) == PGRES_TUPLES_OK;
      PQclear(r);
    }
    if (!ok && PQstatus(q->conn) == CONNECTION_OK)
      break; /* the server answered: not a lost connection */
  }
  if (!ok) {
    if (PQstatus(q->conn) != CONNECTION_OK) {
      snprintf(err, errlen, "%s and could not be opened again: try again shortly", LOST_MSG);
    } else {
      snprintf(err, errlen, "the query connection failed: %s", PQerrorMessage(q->conn));
      PQclear(PQexec(q->conn, "ROLLBACK"));
    }
    return PMCP_EIO;
  }
  return 0;
}

/* Ends the statement's transaction and everything of the session it may
 * have made that a ROLLBACK keeps (session advisory locks, prepared
 * statements, settings, LISTEN): the next statement, of any scope, finds
 * the connection as it was opened. */
static void reset_session(pmcp__pgq *q)
{
  if (PQstatus(q->conn) != CONNECTION_OK)
    return;
  PQclear(PQexec(q->conn, "ROLLBACK"));
  /* a stop request (pmcp__pgq_end) that came late may have hit the
   * ROLLBACK itself */
  if (PQtransactionStatus(q->conn) != PQTRANS_IDLE)
    PQclear(PQexec(q->conn, "ROLLBACK"));
  PQclear(PQexec(q->conn, "DISCARD ALL"));
}

static int refusal(const PGresult *r, PGconn *c, char *err, size_t errlen)
{
  if (PQstatus(c) != CONNECTION_OK) {
    snprintf(err, errlen, "%s while the statement ran: try again", LOST_MSG);
    return PMCP_EIO;
  }
  const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
  const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
  if (!msg)
    msg = PQerrorMessage(c);
  if (!state)
    state = "";
  if (!strcmp(state, "25006") || !strcmp(state, "0A000") || !strcmp(state, "25001")) {
    snprintf(err, errlen, "not allowed: query_sql is read-only (%s)", msg);
    return PMCP_EDENIED;
  }
  if (!strcmp(state, "42501")) {
    snprintf(err, errlen, "not allowed or not readable: only the tables query_sql lists may "
             "be read, and nothing written (%s)", msg);
    return PMCP_EDENIED;
  }
  if (!strcmp(state, "42P01")) {
    snprintf(err, errlen, "not readable: no such table (%s); call query_sql without sql for "
             "the tables", msg);
    return PMCP_EDENIED;
  }
  if (!strncmp(msg, "cannot insert into view", 23) || !strncmp(msg, "cannot update view", 18) ||
      !strncmp(msg, "cannot delete from view", 23)) {
    snprintf(err, errlen, "not allowed: the table may not be modified (%s)", msg);
    return PMCP_EDENIED;
  }
  if (!strcmp(state, "42809")) {
    snprintf(err, errlen, "not allowed: %s", msg);
    return PMCP_EDENIED;
  }
  if (!strcmp(state, "57014")) {
    snprintf(err, errlen, "the statement was stopped at its time limit");
    return PMCP_ETIMEOUT;
  }
  if (!strcmp(state, "54000") || !strcmp(state, "53200")) {
    snprintf(err, errlen, "a value is larger than the limit (%s)", msg);
    return PMCP_EINVAL;
  }
  if (strstr(msg, "multiple commands")) {
    snprintf(err, errlen, "exactly one statement per call");
    return PMCP_EINVAL;
  }
  snprintf(err, errlen, "SQL error: %s", msg);
  return PMCP_EINVAL;
}

/* What the statement's first result says: 0 for rows (a row of single-row
 * mode, or a result of none), else the refusal. */
static int first_result(pmcp__pgq *q, const PGresult *r, char *err, size_t errlen)
{
  ExecStatusType es = PQresultStatus(r);
  if (es == PGRES_SINGLE_TUPLE || es == PGRES_TUPLES_OK)
    return 0;
  if (es == PGRES_EMPTY_QUERY) {
    snprintf(err, errlen, "no statement: give one SELECT");
    return PMCP_EINVAL;
  }
  if (es == PGRES_COMMAND_OK) {
    snprintf(err, errlen, "not allowed: only a SELECT (or WITH ... SELECT) may run");
    return PMCP_EDENIED;
  }
  return refusal(r, q->conn, err, errlen);
}

/* Reads what is left of the statement's results. */
static void drain(pmcp__pgq *q)
{
  PGresult *r;
  while ((r = PQgetResult(q->conn)) != NULL)
    PQclear(r);
}

/* The statement's text (NUL-terminated, free it) in *text, its
 * transaction begun. */
static int open_statement(pmcp__pgq *q, pmcp_tenant t, const char *sql, size_t len,
                          int64_t timeout_ms, char **text, char *err, size_t errlen)
{
  *text = NULL;
  /* Refused before it reaches the server: a utility statement (ANALYZE,
   * VACUUM, SET, ...) may do work there before it can be refused, and
   * whatever it says on the way is no clear answer. */
  const char *word = NULL;
  size_t wn = pmcp__sql_command(sql, len, &word);
  if (wn) {
    snprintf(err, errlen, "not allowed: query_sql is read-only and runs one query (a SELECT, "
             "or WITH ... SELECT), not %.*s; the tables may not be modified", (int)wn, word);
    return PMCP_EDENIED;
  }
  *text = strndup(sql, len);
  if (!*text)
    return PMCP_ENOMEM;
  int rc = begin(q, t, timeout_ms, err, errlen);
  if (rc) {
    free(*text);
    *text = NULL;
  }
  return rc;
}

int pmcp__pgq_run(pmcp__pgq *q, pmcp_tenant t, const char *sql, size_t len, int64_t timeout_ms,
                  void **out, char *err, size_t errlen)
{
  *out = NULL;
  char *text = NULL;
  int rc = open_statement(q, t, sql, len, timeout_ms, &text, err, errlen);
  if (rc)
    return rc;
  PGresult *r = PQexecParams(q->conn, text, 0, NULL, NULL, NULL, NULL, 0);
  free(text);
  rc = first_result(q, r, err, errlen);
  if (rc)
    PQclear(r);
  else
    *out = r;
  /* Nothing the statement set or did survives it. */
  reset_session(q);
  return rc;
}

int pmcp__pgq_start(pmcp__pgq *q, pmcp_tenant t, const char *sql, size_t len,
                    int64_t timeout_ms, void **first, char *err, size_t errlen)
{
  *first = NULL;
  char *text = NULL;
  int rc = open_statement(q, t, sql, len, timeout_ms, &text, err, errlen);
  if (rc)
    return rc;
  q->done = 0;
  int sent = PQsendQueryParams(q->conn, text, 0, NULL, NULL, NULL, NULL, 0);
  free(text);
  if (!sent) {
    rc = refusal(NULL, q->conn, err, errlen);
    drain(q);
    reset_session(q);
    return rc;
  }
  /* Rows one at a time: memory holds one row, whatever the result's size. */
  PQsetSingleRowMode(q->conn);
  PGresult *r = PQgetResult(q->conn);
  rc = first_result(q, r, err, errlen);
  if (rc) {
    PQclear(r);
    drain(q);
    reset_session(q);
    return rc;
  }
  q->done = PQresultStatus(r) == PGRES_TUPLES_OK;
  *first = r;
  return 0;
}

int pmcp__pgq_next(pmcp__pgq *q, void **row, char *err, size_t errlen)
{
  *row = NULL;
  if (q->done)
    return 0;
  PGresult *r = PQgetResult(q->conn);
  ExecStatusType es = PQresultStatus(r);
  if (es == PGRES_SINGLE_TUPLE) {
    *row = r;
    return 1;
  }
  q->done = 1;
  int rc = 0;
  if (!r)
    rc = refusal(NULL, q->conn, err, errlen);
  else if (es != PGRES_TUPLES_OK)
    rc = refusal(r, q->conn, err, errlen);
  PQclear(r);
  return rc;
}

void pmcp__pgq_end(pmcp__pgq *q)
{
  if (!q->done && PQstatus(q->conn) == CONNECTION_OK) {
    /* Stopped early (the page is full): the server stops the statement
     * instead of sending rows nobody reads. */
    PGcancel *c = PQgetCancel(q->conn);
    char why[256];
    if (c) {
      PQcancel(c, why, sizeof why);
      PQfreeCancel(c);
    }
  }
  q->done = 1;
  drain(q);
  reset_session(q);
}

int pmcp__pgq_tables(pmcp__pgq *q, void **out, char *err, size_t errlen)
{
  static const char sql[] =
      "SELECT c.table_name, c.column_name, upper(c.data_type) FROM information_schema.columns c"
      " JOIN information_schema.tables t ON t.table_schema=c.table_schema"
      " AND t.table_name=c.table_name WHERE c.table_schema=current_schema()"
      " ORDER BY c.table_name, c.ordinal_position";
  pmcp_tenant whole = {0};
  whole.id = q->tenant;
  return pmcp__pgq_run(q, whole, sql, strlen(sql), 5000, out, err, errlen);
}

/* ---- the views (made by the migration, pmcp__pgq_views) ------------------ */

/* The readable tables with their columns, as on SQLite (research/
 * sql_guard.c): internals left out (tenant ids, point arrays, secrets,
 * file contents). `from` NULL: the table of the view's name, its tenant in
 * tenant_id; else the FROM clause ({S} the store's schema) with the
 * tenant in b.tenant_id. */
#define DEAD_RUNS "(SELECT id FROM {S}.runs WHERE deleted<>0)"
#define DEAD_OWNER                                                            \
  "((owner_kind='run' AND owner_id IN " DEAD_RUNS ") OR (owner_kind='experiment'" \
  " AND owner_id IN (SELECT id FROM {S}.experiments WHERE deleted<>0)))"
static const struct {
  const char *name, *cols, *from;
  const char *live; /* the condition leaving deleted rows out, or NULL */
} pg_views[] = {
  {"workspaces", "id, slug, name, description, created", NULL, NULL},
  {"projects", "id, workspace_id, slug, name, description, readme, created", NULL, NULL},
  {"experiments", "id, project_id, slug, name, description, config, deleted, created", NULL,
   "deleted=0"},
  {"deleted_experiments", "id, project_id, slug, name, description, config, deleted, created",
   "{S}.experiments b", "deleted<>0"},
  {"runs", "id, project_id, experiment_id, slug, name, description, status, created, started,"
           " ended, deleted, command, environment, git_commit, git_branch, git_remote,"
           " git_dirty", NULL, "deleted=0"},
  {"deleted_runs", "id, project_id, experiment_id, slug, name, description, status, created,"
                   " started, ended, deleted, command, environment, git_commit, git_branch,"
                   " git_remote, git_dirty", "{S}.runs b", "deleted<>0"},
  {"attributes", "owner_kind, owner_id, path, type, v_text, v_int, v_real", NULL, NULL},
  {"tags", "owner_kind, owner_id, tag", NULL, NULL},
  {"run_events", "id, run_id, time, kind, message", NULL, "run_id NOT IN " DEAD_RUNS},
  {"series", "id, run_id, key, labels, kind, scale, count, nonfinite, step_min, step_max,"
             " time_min, time_max, first, last, vmin, vmax, vsum", NULL, "run_id NOT IN " DEAD_RUNS},
  /* every point as a row; NaN reads as NULL, a point logged without a
   * time has a NULL time */
  {"metric_points", "b.series_id, u.s AS step, nullif(u.t, 0) AS time,"
                    " CASE WHEN u.v = 'NaN' THEN NULL ELSE u.v END AS value",
   "{S}.metric_chunks b, unnest(b.steps, b.times, b.vals) AS u(s, t, v)", NULL},
  /* joined with its series (as on SQLite), which the scope names `s` */
  {"metric_blocks", "b.series_id, b.seq, b.n, b.nonfinite, b.step_min, b.step_max,"
                    " b.time_min, b.time_max, b.vmin, b.vmax, b.vsum, b.first, b.last",
   "{S}.metric_blocks b JOIN {S}.series s ON s.id = b.series_id", NULL},
  {"notes", "id, slug, owner_kind, owner_id, kind, title, status, created, updated, version",
   NULL, "NOT " DEAD_OWNER},
  {"note_versions", "note_id, version, title, body, summary, status, author, via, created",
   NULL, NULL},
  {"artifacts", "id, slug, name, owner_kind, owner_id, shared, description, created, latest",
   NULL, "NOT " DEAD_OWNER},
  {"artifact_versions", "artifact_id, version, path, media_type, description, uri, sha256,"
                        " size, created", NULL, NULL},
  {"datasets", "id, slug, name, project_id, registered, description, uri, created", NULL, NULL},
  {"dataset_versions", "dataset_id, version, uri, sha256, size, rows, description, created",
   NULL, NULL},
  {"checkpoints", "id, slug, run_id, step, best, stored, uri, size, metric, value, created",
   NULL, "run_id NOT IN " DEAD_RUNS},
  {"sources", "id, slug, provider, kind, uri, version, description, created", NULL, NULL},
  {"lineage", "from_ref, to_ref, relation, steps, created", NULL, NULL},
  {"groups", "id, slug, name, experiment_id, description, created", NULL, NULL},
  {"group_runs", "group_id, run_id", NULL, "run_id NOT IN " DEAD_RUNS},
  {"trials", "id, slug, run_id, name, params, status, score, created", NULL, "run_id NOT IN " DEAD_RUNS},
  {"sessions", "id, slug, title, agent, started, ended, created", NULL, NULL},
  {"papers", "arxiv_id, title, abstract, authors, categories, published, updated, doi,"
             " journal_ref", NULL, NULL},
  {"project_papers", "project_id, arxiv_id, note", NULL, NULL},
};

/* The scope the statement proved: one row (tenant, workspace, unfiled:
 * workspace 0 is the whole tenant, -1 a default workspace with no row yet,
 * see pmcp_store_scope()),
 * all NULL unless probe.qtoken is the token of exactly the scope named by
 * probe.qtenant, probe.qworkspace and probe.qunfiled. The reader may set
 * those settings as it likes (set_config() in its SELECT), but cannot make
 * the token of a scope it was not given: that needs query_key, which only
 * this function (the owner's, SECURITY DEFINER) reads. */
static const char scope_fn[] =
  "CREATE FUNCTION {S}.probe_query_scope(OUT tenant BIGINT, OUT workspace BIGINT,"
  "  OUT unfiled INT) LANGUAGE sql STABLE SECURITY DEFINER"
  "  SET search_path = pg_catalog, pg_temp AS $f$"
  "  SELECT x.t, x.w, x.u FROM (SELECT"
  "   nullif(current_setting('probe.qtenant', true), '')::bigint AS t,"
  "   nullif(current_setting('probe.qworkspace', true), '')::bigint AS w,"
  "   nullif(current_setting('probe.qunfiled', true), '')::int AS u) x, {S}.secrets k"
  "  WHERE k.name = 'query_key' AND x.t IS NOT NULL AND x.w IS NOT NULL AND x.u IN (0, 1)"
  "  AND (x.w <> 0 OR x.u = 0)"
  "  AND current_setting('probe.qtoken', true) = encode(sha256(k.value ||"
  "   convert_to(x.t::text || '/' || x.w::text || '/' || x.u::text, 'UTF8') || k.value), 'hex')"
  "  $f$;"
  "REVOKE ALL ON FUNCTION {S}.probe_query_scope() FROM PUBLIC;";

static const char reader_hardening[] =
  "DO $h$ DECLARE f regprocedure; BEGIN"
  " IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN RETURN; END IF;"
  " FOR f IN SELECT p.oid::regprocedure FROM pg_proc p WHERE p.pronamespace ="
  "  'pg_catalog'::regnamespace AND p.proname IN ('pg_terminate_backend', 'pg_cancel_backend')"
  " LOOP"
  "  EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);"
  "  EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO pg_signal_backend', f);"
  " END LOOP;"
  " FOR f IN SELECT p.oid::regprocedure FROM pg_proc p WHERE p.pronamespace ="
  "  'pg_catalog'::regnamespace AND (p.proname = 'pg_stat_get_activity'"
  "  OR p.proname LIKE 'pg\\_stat\\_get\\_backend\\_%')"
  " LOOP"
  "  EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);"
  "  EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO pg_read_all_stats', f);"
  " END LOOP;"
  " REVOKE SELECT ON pg_catalog.pg_stat_activity FROM PUBLIC;"
  " GRANT SELECT ON pg_catalog.pg_stat_activity TO pg_read_all_stats;"
  " END $h$;";

/* Appends @p text with each {S} replaced by @p sch. */
static void put_schema(pmcp_buf *b, const char *text, const char *sch)
{
  const char *at;
  while ((at = strstr(text, "{S}")) != NULL) {
    pmcp__buf_append(b, text, (size_t)(at - text));
    pmcp__buf_puts(b, sch);
    text = at + 3;
  }
  pmcp__buf_puts(b, text);
}

/* Each proven number as an expression the planner runs once per statement
 * (an InitPlan), not once per row. */
#define SCOPE_OF(s, col) "(SELECT " col " FROM " s ".probe_query_scope())"

int pmcp__pgq_views(pmcp_store *s, pmcp__pg *g)
{
  static const char names[] =
      "SELECT quote_ident(current_schema()), quote_ident(current_schema() || '_sql')";
  pmcp__pg_stmt *st;
  int rc = pmcp__pg_prep(s, g, names, &st);
  if (rc)
    return rc;
  if (pmcp__pg_step(st) != PG_ROW)
    return pmcp__pg_err(s, g, "query views");
  char sch[160], q[160];
  snprintf(sch, sizeof sch, "%s", pmcp__pg_text(st, 0));
  snprintf(q, sizeof q, "%s", pmcp__pg_text(st, 1));
  pmcp__pg_reset(st);
  char tables[170], views[170], vt[240], vw[240], vu[240];
  snprintf(tables, sizeof tables, "%s.", sch);
  snprintf(views, sizeof views, "%s.", q);
  snprintf(vt, sizeof vt, SCOPE_OF("%s", "tenant"), sch);
  snprintf(vw, sizeof vw, SCOPE_OF("%s", "workspace"), sch);
  snprintf(vu, sizeof vu, SCOPE_OF("%s", "unfiled"), sch);
  pmcp_buf ddl = PMCP_BUF_INIT;
  /* The views of earlier versions go, with the per-tenant check they
   * used (a token of the tenant alone must prove nothing any more). */
  pmcp__buf_printf(&ddl, "DROP SCHEMA IF EXISTS %s CASCADE;"
                         "DROP FUNCTION IF EXISTS %s.probe_query_tenant();"
                         "DROP FUNCTION IF EXISTS %s.probe_query_scope();"
                         "CREATE SCHEMA %s;", q, sch, sch, q);
  put_schema(&ddl, scope_fn, sch);
  for (size_t i = 0; i < sizeof pg_views / sizeof pg_views[0] && rc == 0; i++) {
    pmcp__buf_printf(&ddl, "CREATE VIEW %s.%s WITH (security_barrier) AS SELECT %s FROM ", q,
                     pg_views[i].name, pg_views[i].cols);
    if (pg_views[i].from)
      put_schema(&ddl, pg_views[i].from, sch);
    else
      pmcp__buf_printf(&ddl, "%s.%s", sch, pg_views[i].name);
    pmcp__buf_printf(&ddl, " WHERE %s = %s", pg_views[i].from ? "b.tenant_id" : "tenant_id", vt);
    if (pg_views[i].live) {
      pmcp__buf_puts(&ddl, " AND ");
      put_schema(&ddl, pg_views[i].live, sch);
    }
    /* One workspace: its rows by the rules SQLite's views follow
     * (ws_scope.h); workspace 0 is the whole tenant. */
    pmcp_buf pred = PMCP_BUF_INIT;
    int has = pmcp__ws_view_where(&pred, pg_views[i].name, tables, views);
    char *p = has == 1 ? pmcp__ws_subst(pred.ptr, vt, vw, vu) : NULL;
    if (has < 0 || (has == 1 && !p))
      rc = pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
    else if (p)
      pmcp__buf_printf(&ddl, " AND (%s = 0 OR (%s))", vw, p);
    pmcp__buf_puts(&ddl, ";");
    free(p);
    pmcp_buf_dispose(&pred);
  }
  /* The reader role, when it exists, reads these views and nothing else. */
  pmcp__buf_printf(&ddl,
      "DO $g$ BEGIN IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname='probe_reader') THEN"
      " GRANT USAGE ON SCHEMA %s TO probe_reader;"
      " GRANT SELECT ON ALL TABLES IN SCHEMA %s TO probe_reader;"
      " GRANT EXECUTE ON FUNCTION %s.probe_query_scope() TO probe_reader;"
      " END IF; END $g$;", q, q, sch);
  /* Readers share one role, and PostgreSQL lets a role signal and watch
   * its own sessions: one reader could stop or read another's statement.
   * Signalling and other sessions' activity go to the roles made for
   * them (pg_signal_backend, pg_read_all_stats), in this database. Only a
   * superuser may change pg_catalog's grants: a store migrated by another
   * role is left as it is (README.md gives the statements to run). */
  pmcp__buf_puts(&ddl, reader_hardening);
  if (rc == 0 && !ddl.ptr)
    rc = pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  if (rc == 0)
    rc = pmcp__pg_exec(s, g, ddl.ptr);
  pmcp_buf_dispose(&ddl);
  return rc;
}
