/* query_sql's guarded connection on PostgreSQL (pg_query.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "store/pg.h"
#include "store/pg_query.h"

struct pmcp__pgq {
  PGconn *conn;
  char tenant[24];
  char token[65];
};

static void quiet(void *arg, const char *message)
{
  (void)arg;
  (void)message;
}

/* hex(sha256(key || tenant || key)), as probe_query_tenant() checks. */
static void token_of(const unsigned char *key, size_t klen, const char *tenant, char out[65])
{
  unsigned char md[32];
  unsigned int mdlen = 0;
  EVP_MD_CTX *c = EVP_MD_CTX_new();
  EVP_DigestInit_ex(c, EVP_sha256(), NULL);
  EVP_DigestUpdate(c, key, klen);
  EVP_DigestUpdate(c, tenant, strlen(tenant));
  EVP_DigestUpdate(c, key, klen);
  EVP_DigestFinal_ex(c, md, &mdlen);
  EVP_MD_CTX_free(c);
  for (int i = 0; i < 32; i++)
    snprintf(out + 2 * i, 3, "%02x", md[i]);
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
  /* The schema's name and the query key, read by the store's own role. */
  static const char sql[] =
      "SELECT current_schema(), (SELECT value FROM secrets WHERE name='query_key')";
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
  pmcp__pgq *q = calloc(1, sizeof *q);
  if (!q || !key) {
    pmcp__pg_reset(st);
    free(q);
    return PMCP_ENOMEM;
  }
  snprintf(q->tenant, sizeof q->tenant, "%lld", (long long)tenant);
  token_of(key, klen, q->tenant, q->token);
  pmcp__pg_reset(st);
  const char *user = getenv("PROBE_PG_QUERY_USER");
  const char *kw[] = {"dbname", "user", "options", "application_name", NULL};
  const char *vals[] = {g->conninfo, user && *user ? user : "probe_reader", options,
                        "probe-mcp query_sql", NULL};
  q->conn = PQconnectdbParams(kw, vals, 1);
  if (!q->conn || PQstatus(q->conn) != CONNECTION_OK) {
    snprintf(err, errlen, "query_sql cannot log in as its read-only role '%s' (create it: "
             "CREATE ROLE %s LOGIN, then run 'probe init')", vals[1], vals[1]);
    pmcp__pgq_free(q);
    return PMCP_EUNSUPPORTED;
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
  free(q);
}

static int begin(pmcp__pgq *q, int64_t timeout_ms, char *err, size_t errlen)
{
  if (PQstatus(q->conn) != CONNECTION_OK)
    PQreset(q->conn);
  char tmo[32];
  snprintf(tmo, sizeof tmo, "%lld", (long long)(timeout_ms > 0 ? timeout_ms : 5000));
  const char *pv[4] = {q->tenant, q->token, tmo, NULL};
  PGresult *r = PQexec(q->conn, "BEGIN READ ONLY");
  int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  if (ok) {
    r = PQexecParams(q->conn,
        "SELECT set_config('probe.tenant', $1, true), set_config('probe.qtenant', $1, true),"
        " set_config('probe.qtoken', $2, true), set_config('statement_timeout', $3, true)",
        3, NULL, pv, NULL, NULL, 0);
    ok = PQresultStatus(r) == PGRES_TUPLES_OK;
    PQclear(r);
  }
  if (!ok) {
    snprintf(err, errlen, "the query connection failed: %s", PQerrorMessage(q->conn));
    PQclear(PQexec(q->conn, "ROLLBACK"));
    return PMCP_EIO;
  }
  return 0;
}

static int refusal(const PGresult *r, PGconn *c, char *err, size_t errlen)
{
  const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
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

int pmcp__pgq_run(pmcp__pgq *q, const char *sql, size_t len, int64_t timeout_ms, void **out,
                  char *err, size_t errlen)
{
  *out = NULL;
  char *text = strndup(sql, len);
  if (!text)
    return PMCP_ENOMEM;
  int rc = begin(q, timeout_ms, err, errlen);
  if (rc) {
    free(text);
    return rc;
  }
  PGresult *r = PQexecParams(q->conn, text, 0, NULL, NULL, NULL, NULL, 0);
  free(text);
  ExecStatusType es = PQresultStatus(r);
  if (es == PGRES_TUPLES_OK) {
    *out = r;
  } else if (es == PGRES_EMPTY_QUERY) {
    snprintf(err, errlen, "no statement: give one SELECT");
    rc = PMCP_EINVAL;
  } else if (es == PGRES_COMMAND_OK) {
    snprintf(err, errlen, "not allowed: only a SELECT (or WITH ... SELECT) may run");
    rc = PMCP_EDENIED;
  } else {
    rc = refusal(r, q->conn, err, errlen);
  }
  if (rc)
    PQclear(r);
  /* Nothing the statement set or did survives it. */
  PQclear(PQexec(q->conn, "ROLLBACK"));
  return rc;
}

int pmcp__pgq_tables(pmcp__pgq *q, void **out, char *err, size_t errlen)
{
  static const char sql[] =
      "SELECT c.table_name, c.column_name, upper(c.data_type) FROM information_schema.columns c"
      " JOIN information_schema.tables t ON t.table_schema=c.table_schema"
      " AND t.table_name=c.table_name WHERE c.table_schema=current_schema()"
      " ORDER BY c.table_name, c.ordinal_position";
  return pmcp__pgq_run(q, sql, strlen(sql), 5000, out, err, errlen);
}
