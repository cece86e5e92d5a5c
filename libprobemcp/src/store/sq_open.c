/* SPDX-License-Identifier: MIT */
/* SQLite backend: opening (WAL, busy timeout, migrations), the write scope
 * of each call, tenants, secrets, versions, transactions, and the small
 * helpers (ids, refs, lookups, the keyword index) every other file uses. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "probemcp/json.h"
#include "store/db.h"
#include "store/sq.h"
#include "store/sq_search_rank.h"

int pmcp__sq_err(pmcp_store *s, pmcp__sq *q, int src, const char *what)
{
  int code;
  switch (src & 0xff) {
  case SQLITE_BUSY:
  case SQLITE_LOCKED: code = PMCP_ETIMEOUT; break;
  case SQLITE_READONLY: code = PMCP_EREADONLY; break;
  case SQLITE_NOMEM: code = PMCP_ENOMEM; break;
  case SQLITE_CONSTRAINT: code = PMCP_EEXIST; break;
  case SQLITE_CORRUPT:
  case SQLITE_NOTADB: code = PMCP_ECORRUPT; break;
  case SQLITE_IOERR:
  case SQLITE_CANTOPEN:
  case SQLITE_FULL: code = PMCP_EIO; break;
  default: code = PMCP_ESTORE; break;
  }
  const char *m = q && q->db ? sqlite3_errmsg(q->db) : sqlite3_errstr(src);
  if (code == PMCP_ETIMEOUT) {
    char who[280];
    if (!q || pmcp__sq_holder_describe(q, who, sizeof who) != 0)
      snprintf(who, sizeof who, "another writer holds it");
    if (q && q->wait_ms >= 0)
      return pmcp_store_set_error(s, code,
          "%s: the store is busy: %s; gave up after waiting %lld s", what, who,
          (long long)(q->wait_ms / 1000));
    return pmcp_store_set_error(s, code, "%s: the store is busy (%s)", what, who);
  }
  if (code == PMCP_ECORRUPT)
    return pmcp_store_set_error(s, code, "%s: the store is damaged (%s); "
                                "'PRAGMA integrity_check' in sqlite3 lists what is wrong",
                                what, m);
  /* SQLite reports ENOSPC as SQLITE_FULL only on some paths (the WAL
   * index and journal headers give SQLITE_IOERR): the errno decides */
  int full = (src & 0xff) == SQLITE_FULL ||
             ((src & 0xff) == SQLITE_IOERR && q && q->db && sqlite3_system_errno(q->db) == ENOSPC);
  if (full) {
    const char *file = q && q->db ? sqlite3_db_filename(q->db, "main") : NULL;
    return pmcp_store_set_error(s, code, "%s: the disk holding %s is full", what,
                                file && *file ? file : "the store");
  }
  return pmcp_store_set_error(s, code, "%s: %s", what, m);
}

int pmcp__sq_exec(pmcp_store *s, pmcp__sq *q, const char *sql)
{
  int rc = sqlite3_exec(q->db, sql, NULL, NULL, NULL);
  if (rc != SQLITE_OK)
    return pmcp__sq_err(s, q, rc, "store");
  return 0;
}

int64_t pmcp__now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int pmcp__id_ok(const char *id)
{
  size_t n = 0;
  if (!id)
    return 0;
  for (const char *p = id; *p; p++, n++) {
    char c = *p;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '_' || c == '-'))
      return 0;
  }
  return n >= 1 && n <= 128;
}

int pmcp__slugify(pmcp_buf *out, const char *name)
{
  pmcp__buf_reset(out);
  int dash = 0;
  for (const unsigned char *p = (const unsigned char *)name; p && *p && out->len < 60; p++) {
    unsigned char c = *p;
    if (c >= 'A' && c <= 'Z')
      c = (unsigned char)(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_') {
      if (dash && out->len)
        pmcp__buf_putc(out, '-');
      dash = 0;
      if (pmcp__buf_putc(out, (char)c))
        return PMCP_ENOMEM;
    } else {
      dash = 1;
    }
  }
  if (out->len == 0)
    return pmcp__buf_puts(out, "x");
  return out->ptr ? 0 : PMCP_ENOMEM;
}

int pmcp__ref_split(pmcp_store *s, const char *ref, const char *want, char kind[32],
                    const char **id)
{
  const char *colon = strchr(ref, ':');
  if (!colon) {
    if (!want)
      return pmcp_store_set_error(s, PMCP_EINVAL, "'%.64s' is not a ref (kind:id)", ref);
    snprintf(kind, 32, "%s", want);
    *id = ref;
  } else {
    size_t kl = (size_t)(colon - ref);
    if (kl == 0 || kl >= 32)
      return pmcp_store_set_error(s, PMCP_EINVAL, "'%.64s' is not a ref (kind:id)", ref);
    memcpy(kind, ref, kl);
    kind[kl] = '\0';
    *id = colon + 1;
  }
  if (!**id)
    return pmcp_store_set_error(s, PMCP_EINVAL, "ref '%.64s' has an empty id", ref);
  return 0;
}

static const struct {
  const char *kind, *table;
} kind_tables[] = {
  {"workspace", "workspaces"}, {"project", "projects"}, {"experiment", "experiments"},
  {"run", "runs"}, {"note", "notes"}, {"sub-note", "notes"}, {"artifact", "artifacts"},
  {"dataset", "datasets"}, {"checkpoint", "checkpoints"}, {"source", "sources"},
  {"group", "groups"}, {"trial", "trials"}, {"session", "sessions"}, {"file", "files"},
};

const char *pmcp__kind_table(const char *kind)
{
  for (size_t i = 0; i < sizeof kind_tables / sizeof kind_tables[0]; i++)
    if (strcmp(kind, kind_tables[i].kind) == 0)
      return kind_tables[i].table;
  return NULL;
}

int pmcp__sq_unindex(pmcp_store *s, pmcp__sq *q, pmcp_tenant t, const char *ref)
{
  static const char sql_find[] = "SELECT id FROM search_docs WHERE tenant_id=?1 AND ref=?2";
  static const char sql_del_fts[] = "DELETE FROM search_fts WHERE rowid=?1";
  static const char sql_del[] = "DELETE FROM search_docs WHERE id=?1";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, sql_find, &st);
  if (rc)
    return rc;
  sqlite3_bind_int64(st, 1, t.id);
  sqlite3_bind_text(st, 2, ref, -1, SQLITE_TRANSIENT);
  if (sqlite3_step(st) != SQLITE_ROW) {
    sqlite3_reset(st);
    return 0;
  }
  int64_t id = sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  const char *sqls[2] = {sql_del_fts, sql_del};
  for (int i = 0; i < 2; i++) {
    if ((rc = pmcp__sq_prep(s, q, sqls[i], &st)))
      return rc;
    sqlite3_bind_int64(st, 1, id);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
      return pmcp__sq_err(s, q, rc, "search index");
  }
  return 0;
}

int pmcp__sq_index(pmcp_store *s, pmcp__sq *q, pmcp_tenant t, const char *ref,
                   const char *kind, const char *title, const char *body)
{
  static const char sql_doc[] =
      "INSERT INTO search_docs(tenant_id, ref, kind) VALUES(?1, ?2, ?3)";
  static const char sql_fts[] = "INSERT INTO search_fts(rowid, title, body) VALUES(?1, ?2, ?3)";
  int rc = pmcp__sq_unindex(s, q, t, ref);
  if (rc)
    return rc;
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(s, q, sql_doc, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, t.id);
  sqlite3_bind_text(st, 2, ref, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 3, kind, -1, SQLITE_STATIC);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE)
    return pmcp__sq_err(s, q, rc, "search index");
  int64_t id = sqlite3_last_insert_rowid(q->db);
  if ((rc = pmcp__sq_prep(s, q, sql_fts, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_text(st, 2, title ? title : "", -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 3, body ? body : "", -1, SQLITE_TRANSIENT);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE)
    return pmcp__sq_err(s, q, rc, "search index");
  return 0;
}

int pmcp__sq_text_col(pmcp_buf *b, sqlite3_stmt *st, int col)
{
  const unsigned char *v = sqlite3_column_text(st, col);
  int n = sqlite3_column_bytes(st, col);
  return pmcp__buf_append(b, v ? (const char *)v : "", v ? (size_t)n : 0);
}

/* ---- write scope ---- */

/* An explicit transaction is a batch of writes (probe log, imports): its
 * pages stay in a cache large enough that SQLite does not spill them to the
 * WAL and read them back before the commit writes them; outside one the
 * connection keeps SQLite's default, so readers stay small. */
#define TXN_CACHE "PRAGMA cache_size=-65536" /* KiB */
#define IDLE_CACHE "PRAGMA cache_size=-2000"

static void txn_cache(pmcp__sq *q, int big)
{
  sqlite3_exec(q->db, big ? TXN_CACHE : IDLE_CACHE, NULL, NULL, NULL);
}

/* SQLite ends a transaction on its own after some errors (a full disk, an
 * I/O error): the caller's transaction is then gone, and saying so beats
 * letting later calls commit one by one. */
static int txn_lost(pmcp_store *s, pmcp__sq *q)
{
  q->in_txn = 0;
  pmcp__sq_drop_pending(q);
  pmcp__sq_holder_drop(q);
  txn_cache(q, 0);
  return pmcp_store_set_error(s, PMCP_ESTORE,
      "the transaction was rolled back by the database after an error; nothing of it was "
      "stored");
}

int pmcp__sq_wbegin(pmcp_store *s, pmcp__sq *q)
{
  if (q->in_txn && sqlite3_get_autocommit(q->db))
    return txn_lost(s, q);
  if (q->in_txn)
    return pmcp__sq_exec(s, q, "SAVEPOINT pmcp_call");
  return pmcp__sq_exec(s, q, "BEGIN IMMEDIATE");
}

static int bump(pmcp_store *s, pmcp__sq *q, pmcp_tenant t)
{
  static const char sql[] = "UPDATE tenants SET data_version=data_version+1 WHERE id=?1";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, sql, &st);
  if (rc)
    return rc;
  sqlite3_bind_int64(st, 1, t.id);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE)
    return pmcp__sq_err(s, q, rc, "store version");
  if (sqlite3_changes(q->db) != 1)
    return pmcp_store_set_error(s, PMCP_EINVAL, "no such tenant");
  return 0;
}

int pmcp__sq_wend(pmcp_store *s, pmcp__sq *q, pmcp_tenant t, int rc)
{
  if (rc == 0)
    rc = bump(s, q, t);
  if (q->in_txn) {
    if (sqlite3_get_autocommit(q->db)) {
      int lost = txn_lost(s, q);
      return rc ? rc : lost;
    }
    if (rc == 0)
      return pmcp__sq_exec(s, q, "RELEASE pmcp_call");
    sqlite3_exec(q->db, "ROLLBACK TO pmcp_call; RELEASE pmcp_call", NULL, NULL, NULL);
    return rc;
  }
  if (rc == 0)
    rc = pmcp__sq_flush(s, q);
  if (rc == 0) {
    int src = sqlite3_exec(q->db, "COMMIT", NULL, NULL, NULL);
    if (src == SQLITE_OK)
      return 0;
    rc = pmcp__sq_err(s, q, src, "commit");
  }
  pmcp__sq_drop_pending(q);
  if (!sqlite3_get_autocommit(q->db))
    sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
  return rc;
}

/* ---- tenants, secrets, versions, transactions ---- */

static int tenant_ok(const char *name)
{
  return pmcp__id_ok(name) && strlen(name) <= 64;
}

static int tenant_insert(pmcp_store *s, pmcp__sq *q, const char *name, int64_t *out)
{
  static const char sql[] =
      "INSERT INTO tenants(name, data_version, created) VALUES(?1, 1, ?2)";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, sql, &st);
  if (rc)
    return rc;
  sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 2, pmcp__now_ms());
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE)
    return pmcp__sq_err(s, q, rc, "create tenant");
  *out = sqlite3_last_insert_rowid(q->db);
  return 0;
}

int pmcp__sq_tenant(pmcp_store *s, void *ctx, const char *name, unsigned flags,
                    pmcp_tenant *out)
{
  pmcp__sq *q = SQ(ctx);
  if (!tenant_ok(name))
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "invalid tenant name '%.64s': use 1-64 characters of A-Z a-z 0-9 . _ -", name);
  static const char sql[] = "SELECT id FROM tenants WHERE name=?1";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, sql, &st);
  if (rc)
    return rc;
  sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    out->id = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return 0;
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE)
    return pmcp__sq_err(s, q, rc, "tenant lookup");
  if (!(flags & PMCP_STORE_CREATE))
    return pmcp_store_set_error(s, PMCP_ENOTFOUND, "no tenant '%s' in this store", name);
  if ((rc = pmcp__sq_wbegin(s, q)))
    return rc;
  int64_t id = 0;
  rc = tenant_insert(s, q, name, &id);
  pmcp_tenant t = {id, 0, 0};
  rc = pmcp__sq_wend(s, q, t, rc);
  if (rc == 0)
    out->id = id;
  return rc;
}

int pmcp__sq_secret(pmcp_store *s, void *ctx, const char *name, pmcp_buf *out)
{
  pmcp__sq *q = SQ(ctx);
  static const char sql[] = "SELECT value FROM secrets WHERE name=?1";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, sql, &st);
  if (rc)
    return rc;
  sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
  rc = sqlite3_step(st);
  if (rc != SQLITE_ROW) {
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? pmcp_store_set_error(s, PMCP_ENOTFOUND, "no secret '%.64s'", name)
                             : pmcp__sq_err(s, q, rc, "secret");
  }
  pmcp__buf_reset(out);
  rc = pmcp__buf_append(out, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0));
  sqlite3_reset(st);
  return rc;
}

int pmcp__sq_version(pmcp_store *s, void *ctx, pmcp_tenant t, uint64_t *out)
{
  pmcp__sq *q = SQ(ctx);
  static const char sql[] = "SELECT data_version FROM tenants WHERE id=?1";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, sql, &st);
  if (rc)
    return rc;
  sqlite3_bind_int64(st, 1, t.id);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    *out = (uint64_t)sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  if (rc == SQLITE_ROW)
    return 0;
  return rc == SQLITE_DONE ? pmcp_store_set_error(s, PMCP_EINVAL, "no such tenant")
                           : pmcp__sq_err(s, q, rc, "version");
}

int pmcp__sq_begin(pmcp_store *s, void *ctx)
{
  pmcp__sq *q = SQ(ctx);
  if (q->in_txn)
    return pmcp_store_set_error(s, PMCP_EMISUSE, "a transaction is already open");
  int rc = pmcp__sq_exec(s, q, "BEGIN IMMEDIATE");
  if (rc == 0) {
    q->in_txn = 1;
    pmcp__sq_holder_take(q); /* so that other writers can say who waits on whom */
    txn_cache(q, 1);
  }
  return rc;
}

int pmcp__sq_commit(pmcp_store *s, void *ctx)
{
  pmcp__sq *q = SQ(ctx);
  if (!q->in_txn)
    return pmcp_store_set_error(s, PMCP_EMISUSE, "no transaction is open");
  if (sqlite3_get_autocommit(q->db))
    return txn_lost(s, q);
  q->in_txn = 0;
  int rc = pmcp__sq_flush(s, q);
  if (rc == 0)
    rc = pmcp__sq_exec(s, q, "COMMIT");
  pmcp__sq_holder_drop(q);
  if (rc) {
    pmcp__sq_drop_pending(q);
    if (!sqlite3_get_autocommit(q->db))
      sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
  }
  txn_cache(q, 0);
  return rc;
}

int pmcp__sq_rollback(pmcp_store *s, void *ctx)
{
  pmcp__sq *q = SQ(ctx);
  if (!q->in_txn)
    return pmcp_store_set_error(s, PMCP_EMISUSE, "no transaction is open");
  q->in_txn = 0;
  pmcp__sq_drop_pending(q);
  pmcp__sq_holder_drop(q);
  txn_cache(q, 0);
  if (!sqlite3_get_autocommit(q->db))
    return pmcp__sq_exec(s, q, "ROLLBACK");
  return 0;
}

/* ---- open / close ---- */

static void sq_close(pmcp_store *s, void *ctx)
{
  pmcp__sq *q = SQ(ctx);
  if (!q)
    return;
  if (q->in_txn) {
    pmcp__sq_drop_pending(q);
    sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
  }
  pmcp__sq_stmts_free(q);
  pmcp__sq_drop_pending(q);
  free(q->pending);
  pmcp__sq_codec_free(q);
  pmcp__sq_holder_drop(q);
  free(q->holder_path);
  sqlite3_close(q->db);
  free(q);
  (void)s;
}


/* Opening runs statements for which SQLite answers SQLITE_BUSY at once,
 * without calling the busy handler: several processes switching a new store
 * to WAL together (each holds a shared lock and wants the exclusive one, and
 * SQLite refuses one of them rather than deadlock), or a connection opening
 * while another recovers or removes the WAL. Concurrent writers must be
 * safe, so retry after a short, varying pause for as long as a writer would
 * wait for another. */
/* pmcp_num(x): a REAL as the JSON text of exactly that double (the
 * shortest form that reads back as it; +-Infinity as PostgreSQL's JSON has
 * them, strings). SQLite's own JSON writes 15 significant digits, so a
 * record's numbers go through this (json(pmcp_num(col))); anything else
 * passes unchanged. */
static void sql_num(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
  (void)argc;
  if (sqlite3_value_type(argv[0]) != SQLITE_FLOAT) {
    sqlite3_result_value(ctx, argv[0]);
    return;
  }
  char buf[PMCP_JSON_NUMBER_MAX];
  size_t n = pmcp_json_format_number(sqlite3_value_double(argv[0]), PMCP_JSON_LOSSLESS, buf,
                                     sizeof buf);
  sqlite3_result_text(ctx, buf, (int)n, SQLITE_TRANSIENT);
}

/* What every connection of the store has: the result codes its callers
 * read, the SQL functions its statements use. */
static void connection_setup(pmcp__sq *q)
{
  sqlite3_extended_result_codes(q->db, 0);
  sqlite3_create_function(q->db, "pmcp_num", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                          sql_num, NULL, NULL);
  /* without it search ranks every match with bm25() */
  q->rank_fn = pmcp__sq_search_rank_setup(q->db) == SQLITE_OK;
}

static void busy_pause(pmcp__sq *q, unsigned attempt)
{
  unsigned ms = 2 + (unsigned)(((uintptr_t)q >> 4) + attempt * 7919u) % 23u *
                        (attempt < 8 ? attempt : 8);
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int64_t open_deadline(const pmcp__sq *q)
{
  return q->wait_ms < 0 ? INT64_MAX : pmcp__now_ms() + q->wait_ms;
}

static int exec_open(pmcp_store *s, pmcp__sq *q, const char *sql)
{
  int64_t deadline = open_deadline(q);
  for (unsigned i = 1;; i++) {
    int src = sqlite3_exec(q->db, sql, NULL, NULL, NULL);
    if (src == SQLITE_OK)
      return 0;
    if ((src & 0xff) != SQLITE_BUSY || pmcp__now_ms() >= deadline)
      return pmcp__sq_err(s, q, src, "store");
    if (!sqlite3_get_autocommit(q->db))
      sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
    busy_pause(q, i);
  }
}

/* The same for the read-only open's first read (a writer removing the WAL as
 * its last connection closes answers SQLITE_BUSY without the handler). */
static int schema_version_open(pmcp__sq *q, int *version)
{
  int64_t deadline = open_deadline(q);
  for (unsigned i = 1;; i++) {
    int rc = pmcp__sq_schema_version(q, version);
    if (rc != PMCP_EIO || (sqlite3_errcode(q->db) & 0xff) != SQLITE_BUSY ||
        pmcp__now_ms() >= deadline)
      return rc;
    busy_pause(q, i);
  }
}

static int mkdirs(const char *path)
{
  char *d = strdup(path);
  if (!d)
    return -1;
  char *slash = strrchr(d, '/');
  if (!slash || slash == d) {
    free(d);
    return 0;
  }
  *slash = '\0';
  for (char *p = d + 1; *p; p++) {
    if (*p == '/') {
      *p = '\0';
      if (mkdir(d, 0777) != 0 && errno != EEXIST) {
        free(d);
        return -1;
      }
      *p = '/';
    }
  }
  int rc = (mkdir(d, 0777) != 0 && errno != EEXIST) ? -1 : 0;
  free(d);
  return rc;
}

/* A fresh store's first contents: the default tenant, the server secret. */
static int initialize(pmcp_store *s, pmcp__sq *q)
{
  unsigned char key[32];
  if (RAND_bytes(key, sizeof key) != 1)
    return pmcp_store_set_error(s, PMCP_EINTERNAL, "no randomness for the server secret");
  static const char sql[] = "INSERT INTO secrets(name, value) VALUES('cursor_key', ?1)";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, sql, &st);
  if (rc)
    return rc;
  sqlite3_bind_blob(st, 1, key, sizeof key, SQLITE_TRANSIENT);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE)
    return pmcp__sq_err(s, q, rc, "create store");
  int64_t id;
  return tenant_insert(s, q, "default", &id);
}

static const pmcp_store_ops sq_ops = {
  .version = PMCP_STORE_OPS_VERSION,
  .name = "sqlite",
  .close = sq_close,
  .tenant = pmcp__sq_tenant,
  .secret = pmcp__sq_secret,
  .version_of = pmcp__sq_version,
  .begin = pmcp__sq_begin,
  .commit = pmcp__sq_commit,
  .rollback = pmcp__sq_rollback,
  .create = pmcp__sql_create,
  .run_create = pmcp__sql_run_create,
  .run_status = pmcp__sql_run_status,
  .run_event = pmcp__sql_run_event,
  .set_deleted = pmcp__sql_set_deleted,
  .set_attr = pmcp__sql_set_attr,
  .unset_attr = pmcp__sql_unset_attr,
  .tag = pmcp__sql_tag,
  .series = pmcp__sql_series,
  .log = pmcp__sq_log,
  .log_histogram = pmcp__sql_log_histogram,
  .log_scatter = pmcp__sql_log_scatter,
  .note = pmcp__sql_note,
  .artifact_add = pmcp__sql_artifact_add,
  .artifact_label = pmcp__sql_artifact_label,
  .artifact_promote = pmcp__sql_artifact_promote,
  .artifact_content = pmcp__sql_artifact_content,
  .paper = pmcp__sql_paper,
  .put = pmcp__sql_put,
  .get = pmcp__sql_get,
  .list = pmcp__sq_list,
  .search = pmcp__sq_search,
  .series_list = pmcp__sql_series_list,
  .points = pmcp__sq_points,
  .summary = pmcp__sq_summary,
  .series_sets = pmcp__sql_series_sets,
  .summary_time = pmcp__sq_summary_time,
};

/* The folder of @p path (for the WAL's side files) is writable by us. */
static int folder_writable(const char *path)
{
  const char *slash = strrchr(path, '/');
  if (!slash)
    return access(".", W_OK) == 0;
  if (slash == path)
    return access("/", W_OK) == 0;
  char *d = strndup(path, (size_t)(slash - path));
  int ok = d && access(d, W_OK) == 0;
  free(d);
  return ok;
}

/* Size of @p path with @p suffix appended, or -1 when it does not exist. */
static long long side_size(const char *path, const char *suffix)
{
  size_t n = strlen(path), k = strlen(suffix);
  char *f = malloc(n + k + 1);
  if (!f)
    return -1;
  memcpy(f, path, n);
  memcpy(f + n, suffix, k + 1);
  struct stat sb;
  long long size = stat(f, &sb) == 0 ? (long long)sb.st_size : -1;
  free(f);
  return size;
}

/* "file:" URI of @p path with immutable=1: SQLite then takes no locks and
 * needs no -shm, which a read-only folder cannot hold. */
static char *immutable_uri(const char *path)
{
  size_t n = strlen(path);
  char *u = malloc(3 * n + 32);
  if (!u)
    return NULL;
  char *o = u + sprintf(u, "file:");
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
    if (*p == '%' || *p == '?' || *p == '#' || *p < 0x21 || *p >= 0x7f)
      o += sprintf(o, "%%%02X", *p);
    else
      *o++ = (char)*p;
  }
  strcpy(o, "?immutable=1");
  return u;
}

/* Why a file that SQLite reads as corrupt is so: PRAGMA integrity_check's
 * first findings, or NULL when the file is no SQLite database at all. */
static int damaged(pmcp_store *s, pmcp__sq *q, const char *path)
{
  char head[16] = {0};
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(head, 1, sizeof head, f) : 0;
  if (f)
    fclose(f);
  if (got < sizeof head || memcmp(head, "SQLite format 3", 16) != 0)
    return pmcp_store_set_error(s, PMCP_ESTORE,
        "%s is not a probe store (not an SQLite database)", path);
  pmcp_buf why = PMCP_BUF_INIT;
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(q->db, "PRAGMA integrity_check(5)", -1, &st, NULL) == SQLITE_OK) {
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
      const char *line = (const char *)sqlite3_column_text(st, 0);
      if (why.len)
        pmcp__buf_puts(&why, "; ");
      pmcp__buf_puts(&why, line ? line : "");
    }
    if (src != SQLITE_DONE && !why.len)
      pmcp__buf_puts(&why, sqlite3_errmsg(q->db));
  } else {
    pmcp__buf_puts(&why, sqlite3_errmsg(q->db));
  }
  sqlite3_finalize(st);
  int rc = pmcp_store_set_error(s, PMCP_ECORRUPT,
      "%s is damaged (integrity check: %s); restore it from a backup", path,
      why.ptr ? why.ptr : "unknown");
  pmcp_buf_dispose(&why);
  return rc;
}

/* The schema checks a read-only open ends with. */
static int ro_check(pmcp_store *s, pmcp__sq *q, const char *path, int rc, int version)
{
  if (rc == PMCP_ECORRUPT)
    return damaged(s, q, path);
  if (rc == PMCP_ESTORE || (rc == 0 && version == 0))
    return pmcp_store_set_error(s, PMCP_ESTORE, "%s is not a probe store", path);
  if (rc)
    return pmcp_store_set_error(s, rc, "cannot read %s: %s", path, sqlite3_errmsg(q->db));
  if (version > PMCP__SQ_SCHEMA_VERSION)
    return pmcp_store_set_error(s, PMCP_ESTORE,
        "the store's schema (version %d) is newer than this program's (%d): upgrade probe-mcp",
        version, PMCP__SQ_SCHEMA_VERSION);
  if (version < PMCP__SQ_SCHEMA_VERSION)
    return pmcp_store_set_error(s, PMCP_ESTORE,
        "the store's schema (version %d) is older than this program's (%d); a read-only "
        "open never migrates: run 'probe --store PATH init' once to upgrade it",
        version, PMCP__SQ_SCHEMA_VERSION);
  return 0;
}

/* A read-only open that failed in a folder we cannot write: a store in WAL
 * mode needs its -shm file there. When no write-ahead log holds changes
 * (no writer can run in such a folder, since it could not create one),
 * the file alone is the whole store: read it immutable. */
static int ro_reopen_immutable(pmcp_store *s, pmcp__sq *q, const char *path, int *version,
                               int *said)
{
  long long wal = side_size(path, "-wal");
  *said = 1;
  if (wal > 0)
    return pmcp_store_set_error(s, PMCP_EIO,
        "cannot read %s: its folder is read-only and its write-ahead log (%s-wal, %lld "
        "bytes) holds changes not yet in the file, which SQLite can only read with a %s-shm "
        "file beside it; open the store once where its folder is writable (any probe "
        "command merges the log), or copy the folder somewhere writable",
        path, path, wal, path);
  char *uri = immutable_uri(path);
  if (!uri)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  sqlite3_close(q->db);
  q->db = NULL;
  int src = sqlite3_open_v2(uri, &q->db,
                            SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
  free(uri);
  if (src != SQLITE_OK)
    return pmcp__sq_err(s, q, src, "open store");
  q->immutable = 1;
  connection_setup(q);
  sqlite3_busy_handler(q->db, pmcp__sq_on_busy, q);
  *said = 0;
  return schema_version_open(q, version);
}

int pmcp__store_sqlite_open(pmcp_store *s, const char *path, unsigned flags)
{
  int ro = (flags & PMCP_STORE_READONLY) != 0;
  struct stat sb;
  int exists = stat(path, &sb) == 0;
  if (!exists && !(flags & PMCP_STORE_CREATE))
    return pmcp_store_set_error(s, PMCP_ENOTFOUND,
        "no store at %s (create one with 'probe init')", path);
  if (exists && S_ISDIR(sb.st_mode))
    return pmcp_store_set_error(s, PMCP_ESTORE, "%s is a folder, not a store file", path);
  if (!exists && mkdirs(path) != 0)
    return pmcp_store_set_error(s, PMCP_EIO, "cannot create the folder of %s: %s", path,
                                strerror(errno));
  if (!ro && !folder_writable(path))
    return pmcp_store_set_error(s, PMCP_EREADONLY,
        "cannot write to %s: its folder is read-only, and SQLite keeps the store's "
        "write-ahead log (%s-wal, %s-shm) beside it; make the folder writable, or open "
        "the store read-only", path, path, path);
  pmcp__sq *q = calloc(1, sizeof *q);
  if (!q)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  q->c.ops = &pmcp__sq_sql_ops;
  q->readonly = ro;
  int oflags = ro ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  int src = sqlite3_open_v2(path, &q->db, oflags | SQLITE_OPEN_NOMUTEX, NULL);
  s->ops = sq_ops;
  s->scan = pmcp__sq_scan;
  s->papers = pmcp__sq_papers;
  s->get_tree = pmcp__sql_get_tree;
  s->papers_bulk = pmcp__sq_papers_bulk;
  s->ctx = q;
  s->db = &pmcp__sq_db_ops;
  if (src != SQLITE_OK)
    return pmcp__sq_err(s, q, src, "open store");
  /* Writers wait for each other, as long as it takes unless
   * $PROBE_STORE_WAIT says otherwise: a long wait beats a failed import. */
  pmcp__sq_wait_init(q, path);
  connection_setup(q);
  int rc = 0;
  int version = 0;
  if (ro) {
    rc = schema_version_open(q, &version);
    if (rc && rc != PMCP_ECORRUPT && !folder_writable(path) &&
        side_size(path, "-shm") < 0) {
      int said;
      rc = ro_reopen_immutable(s, q, path, &version, &said);
      if (said)
        return rc;
    }
    return ro_check(s, q, path, rc, version);
  }
  if ((rc = exec_open(s, q, "PRAGMA journal_mode=WAL")) ||
      (rc = exec_open(s, q, "PRAGMA synchronous=NORMAL")))
    return rc == PMCP_ECORRUPT ? damaged(s, q, path) : rc;
  if ((rc = exec_open(s, q, "BEGIN IMMEDIATE")))
    return rc == PMCP_ECORRUPT ? damaged(s, q, path) : rc;
  rc = pmcp__sq_schema_version(q, &version);
  if (rc == PMCP_ECORRUPT)
    rc = damaged(s, q, path);
  else if (rc == PMCP_ESTORE)
    rc = pmcp_store_set_error(s, PMCP_ESTORE, "%s is not a probe store", path);
  else if (rc)
    rc = pmcp__sq_err(s, q, SQLITE_ERROR, "open store");
  else if (version > PMCP__SQ_SCHEMA_VERSION)
    rc = pmcp_store_set_error(s, PMCP_ESTORE,
        "the store's schema (version %d) is newer than this program's (%d): upgrade probe-mcp",
        version, PMCP__SQ_SCHEMA_VERSION);
  else if (version < PMCP__SQ_SCHEMA_VERSION) {
    rc = pmcp__sq_migrate(s, q, version, PMCP__SQ_SCHEMA_VERSION);
    if (rc == 0 && version == 0)
      rc = initialize(s, q);
  }
  if (rc == 0)
    rc = pmcp__sq_exec(s, q, "COMMIT");
  if (rc && !sqlite3_get_autocommit(q->db))
    sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
  return rc;
}

int64_t pmcp__store_writer_wait(pmcp_store *s, int64_t ms)
{
  if (!s || s->magic != PMCP__STORE_MAGIC || s->ops.close != sq_close || !s->ctx)
    return -1;
  pmcp__sq *q = SQ(s->ctx);
  int64_t was = q->wait_ms;
  q->wait_ms = ms;
  return was;
}

int pmcp__store_sqlite_ro_connection(pmcp_store *s, sqlite3 **out)
{
  *out = NULL;
  if (!s || s->magic != PMCP__STORE_MAGIC || s->ops.close != sq_close)
    return PMCP_EUNSUPPORTED;
  pmcp__sq *q = SQ(s->ctx);
  const char *file = sqlite3_db_filename(q->db, "main");
  if (!file || !*file)
    return pmcp_store_set_error(s, PMCP_ESTORE, "the store has no file");
  char *uri = q->immutable ? immutable_uri(file) : NULL;
  if (q->immutable && !uri)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  int src = sqlite3_open_v2(uri ? uri : file, out,
                            SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX |
                            (uri ? SQLITE_OPEN_URI : 0), NULL);
  free(uri);
  if (src != SQLITE_OK) {
    sqlite3_close(*out);
    *out = NULL;
    return pmcp__sq_err(s, q, src, "open read-only connection");
  }
  sqlite3_busy_timeout(*out, 5000);
  return 0;
}
