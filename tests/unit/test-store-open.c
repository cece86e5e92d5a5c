/* SPDX-License-Identifier: MIT */
/* Store opening: location resolution, creation, read-only opens (never
 * write, never migrate), migrations, refusals, secrets, tenants, custom
 * backends. */
#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#include "store-test-util.h"
#include "store/sq.h"

static void file_bytes(const char *path, pmcp_buf *out)
{
  FILE *f = fopen(path, "rb");
  out->len = 0;
  if (!f)
    return;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
    char *p = realloc(out->ptr, out->len + n + 1);
    ck_assert_ptr_nonnull(p);
    out->ptr = p;
    memcpy(out->ptr + out->len, buf, n);
    out->len += n;
  }
  fclose(f);
}

static void sql(const char *path, const char *text)
{
  sqlite3 *db;
  ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
  char *err = NULL;
  int rc = sqlite3_exec(db, text, NULL, NULL, &err);
  ck_assert_msg(rc == SQLITE_OK, "%s: %s", text, err ? err : "");
  sqlite3_close(db);
}

START_TEST(resolve_order)
{
  pmcp_buf b = PMCP_BUF_INIT;
  setenv("PROBE_STORE", "/env/store.db", 1);
  setenv("XDG_DATA_HOME", "/xdg", 1);
  setenv("HOME", "/home/u", 1);
  ck_assert_int_eq(pmcp_store_resolve(&b, "/explicit.db"), 0);
  ck_assert_str_eq(b.ptr, "/explicit.db");
  ck_assert_int_eq(pmcp_store_resolve(&b, NULL), 0);
  ck_assert_str_eq(b.ptr, "/env/store.db");
  unsetenv("PROBE_STORE");
  ck_assert_int_eq(pmcp_store_resolve(&b, ""), 0);
  ck_assert_str_eq(b.ptr, "/xdg/probe/store.db");
  unsetenv("XDG_DATA_HOME");
  ck_assert_int_eq(pmcp_store_resolve(&b, NULL), 0);
  ck_assert_str_eq(b.ptr, "/home/u/.local/share/probe/store.db");
  unsetenv("HOME");
  ck_assert_int_eq(pmcp_store_resolve(&b, NULL), PMCP_EINVAL);
  pmcp_buf_dispose(&b);
}
END_TEST

START_TEST(create_reopen)
{
  st_fresh_path();
  pmcp_store *s = NULL;
  /* Missing without CREATE: not found, and nothing is created. */
  ck_assert_int_eq(pmcp_store_open(&s, st_path, 0), PMCP_ENOTFOUND);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "probe init"));
  pmcp_store_free(s);
  struct stat sb;
  ck_assert_int_ne(stat(st_path, &sb), 0);
  ck_assert_int_eq(pmcp_store_open(&s, st_path, PMCP_STORE_READONLY | PMCP_STORE_CREATE),
                   PMCP_EINVAL);
  pmcp_store_free(s);
  /* Created in a folder that does not exist yet. */
  char deep[400];
  snprintf(deep, sizeof deep, "%s/a/b/store.db", st_dir);
  ST_OK(s, pmcp_store_open(&s, deep, PMCP_STORE_CREATE));
  ck_assert_str_eq(pmcp_store_backend(s), "sqlite");
  pmcp_tenant t;
  ST_OK(s, pmcp_store_tenant(s, "default", 0, &t));
  pmcp_entity_spec p = PMCP_ENTITY_SPEC_INIT;
  p.name = "Kept";
  ST_OK(s, pmcp_store_create(s, t, "project", &p, NULL));
  pmcp_store_free(s);
  ST_OK(s, pmcp_store_open(&s, deep, 0));
  cJSON *o = st_get(s, t, "project:kept");
  ck_assert_str_eq(st_str(o, "name"), "Kept");
  cJSON_Delete(o);
  /* WAL mode. */
  sqlite3 *db;
  ck_assert_int_eq(sqlite3_open(deep, &db), SQLITE_OK);
  sqlite3_stmt *st;
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(readonly_never_writes)
{
  ST_SQLITE_ONLY(); /* file bytes; pg: tests/pg/test-pg-store.c */
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  pmcp_store_free(s);
  /* Checkpoint the WAL so the main file holds everything. */
  sql(st_path, "PRAGMA wal_checkpoint(TRUNCATE)");
  pmcp_buf before = PMCP_BUF_INIT, after = PMCP_BUF_INIT;
  file_bytes(st_path, &before);
  ck_assert_uint_gt(before.len, 0);
  chmod(st_path, 0444);
  ST_OK(s, pmcp_store_open(&s, st_path, PMCP_STORE_READONLY));
  ck_assert_int_eq(pmcp_store_readonly(s), 1);
  cJSON *o = st_get(s, t, "run:r1");
  ck_assert_str_eq(st_str(o, "name"), "first");
  cJSON_Delete(o);
  ST_RC(s, pmcp_store_tag(s, t, "run:r1", "x", 1), PMCP_EREADONLY);
  ST_RC(s, pmcp_store_begin(s), PMCP_EREADONLY);
  pmcp_tenant t2;
  ST_RC(s, pmcp_store_tenant(s, "other", PMCP_STORE_CREATE, &t2), PMCP_EREADONLY);
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  ST_RC(s, pmcp_store_run_create(s, t, &r, NULL), PMCP_EREADONLY);
  pmcp_buf key = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_secret(s, "cursor_key", &key));
  ck_assert_uint_eq(key.len, 32);
  pmcp_buf_dispose(&key);
  pmcp_store_free(s);
  file_bytes(st_path, &after);
  ck_assert_uint_eq(before.len, after.len);
  ck_assert(memcmp(before.ptr, after.ptr, before.len) == 0);
  pmcp_buf_dispose(&before);
  pmcp_buf_dispose(&after);
  chmod(st_path, 0644);
  st_cleanup();
}
END_TEST

/* Makes a store look like schema version 1 (before the search index). */
static void downgrade_to_v1(const char *path)
{
  sql(path, "DROP TRIGGER papers_ai; DROP TRIGGER papers_ad; DROP TRIGGER papers_au;"
            "DROP TABLE papers_fts; DROP TABLE search_fts; DROP TABLE search_docs;"
            "UPDATE meta SET value='1' WHERE key='schema_version'");
}

START_TEST(migration_forward)
{
  ST_SQLITE_ONLY(); /* downgrades with SQLite DDL; pg: test-pg-store.c */
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  pmcp_store_free(s);
  downgrade_to_v1(st_path);
  /* Read-only: refused, clearly, and nothing is migrated. */
  ck_assert_int_eq(pmcp_store_open(&s, st_path, PMCP_STORE_READONLY), PMCP_ESTORE);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "older"));
  pmcp_store_free(s);
  sqlite3 *db;
  sqlite3_open(st_path, &db);
  sqlite3_stmt *st;
  sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='schema_version'", -1, &st, NULL);
  sqlite3_step(st);
  ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "1");
  sqlite3_finalize(st);
  sqlite3_close(db);
  /* Read-write: migrated to the current version, data kept, search works. */
  ST_OK(s, pmcp_store_open(&s, st_path, 0));
  cJSON *o = st_get(s, t, "run:r1");
  ck_assert_str_eq(st_str(o, "name"), "first");
  cJSON_Delete(o);
  pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
  n.on = "run:r1";
  n.body = "zebra crossing";
  ST_OK(s, pmcp_store_note(s, t, &n, NULL, NULL));
  pmcp_buf b = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_search(s, t, "zebra", NULL, NULL, 10, &b));
  ck_assert_ptr_nonnull(strstr(b.ptr, "zebra"));
  pmcp_buf_dispose(&b);
  pmcp_store_free(s);
  ST_OK(s, pmcp_store_open(&s, st_path, PMCP_STORE_READONLY));
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(refusals)
{
  ST_SQLITE_ONLY(); /* files and folders; pg: test-pg-store.c */
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  pmcp_store_free(s);
  sql(st_path, "UPDATE meta SET value='99' WHERE key='schema_version'");
  ck_assert_int_eq(pmcp_store_open(&s, st_path, 0), PMCP_ESTORE);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "newer"));
  pmcp_store_free(s);
  ck_assert_int_eq(pmcp_store_open(&s, st_path, PMCP_STORE_READONLY), PMCP_ESTORE);
  pmcp_store_free(s);
  /* Not a store: a text file, another program's database, a folder. */
  char p2[400];
  snprintf(p2, sizeof p2, "%s/text.db", st_dir);
  FILE *f = fopen(p2, "w");
  fputs("this is not a database at all, just some text that is long enough\n", f);
  fclose(f);
  ck_assert_int_eq(pmcp_store_open(&s, p2, 0), PMCP_ESTORE);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "not a probe store"));
  pmcp_store_free(s);
  ck_assert_int_eq(pmcp_store_open(&s, p2, PMCP_STORE_READONLY), PMCP_ESTORE);
  pmcp_store_free(s);
  snprintf(p2, sizeof p2, "%s/other.db", st_dir);
  sql(p2, "CREATE TABLE t(x)");
  ck_assert_int_eq(pmcp_store_open(&s, p2, PMCP_STORE_CREATE), PMCP_ESTORE);
  pmcp_store_free(s);
  ck_assert_int_eq(pmcp_store_open(&s, st_dir, 0), PMCP_ESTORE);
  pmcp_store_free(s);
#ifdef PMCP_HAVE_POSTGRES
  /* Nothing listens on port 1: a clear connection error, at once. */
  ck_assert_int_eq(pmcp_store_open(&s, "postgresql://u@127.0.0.1:1/db?connect_timeout=5", 0),
                   PMCP_EIO);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "cannot connect to PostgreSQL"));
#else
  ck_assert_int_eq(pmcp_store_open(&s, "postgresql://u@h/db", 0), PMCP_EUNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "PostgreSQL"));
#endif
  pmcp_store_free(s);
  ck_assert_int_eq(pmcp_store_open(&s, "http://example.com/x", 0), PMCP_EUNSUPPORTED);
  pmcp_store_free(s);
  ck_assert_int_eq(pmcp_store_open(&s, st_path, 0x100), PMCP_EINVAL);
  pmcp_store_free(s);
  /* Misuse of handles. */
  ck_assert_int_eq(pmcp_store_get(NULL, t, "run:x", NULL), PMCP_EINVAL);
  pmcp_buf b = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp_store_get(NULL, t, "run:x", &b), PMCP_EMISUSE);
  pmcp_store_free(NULL);
  ck_assert_str_eq(pmcp_store_errmsg(NULL), "not a store handle");
  st_cleanup();
}
END_TEST

START_TEST(secrets_and_tenants)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  ck_assert_int_gt(t.id, 0);
  pmcp_buf k1 = PMCP_BUF_INIT, k2 = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_secret(s, "cursor_key", &k1));
  ck_assert_uint_eq(k1.len, 32);
  ST_RC(s, pmcp_store_secret(s, "nope", &k2), PMCP_ENOTFOUND);
  pmcp_tenant t2, t3;
  ST_RC(s, pmcp_store_tenant(s, "lab2", 0, &t2), PMCP_ENOTFOUND);
  ck_assert_int_eq(t2.id, 0);
  ST_OK(s, pmcp_store_tenant(s, "lab2", PMCP_STORE_CREATE, &t2));
  ST_OK(s, pmcp_store_tenant(s, "lab2", 0, &t3));
  ck_assert_int_eq(t2.id, t3.id);
  ck_assert_int_ne(t2.id, t.id);
  ST_RC(s, pmcp_store_tenant(s, "bad name!", PMCP_STORE_CREATE, &t3), PMCP_EINVAL);
  ST_RC(s, pmcp_store_tenant(s, "", PMCP_STORE_CREATE, &t3), PMCP_EINVAL);
  pmcp_tenant zero = {0};
  pmcp_buf b = PMCP_BUF_INIT;
  ST_RC(s, pmcp_store_get(s, zero, "run:x", &b), PMCP_EINVAL);
  uint64_t v;
  ST_RC(s, pmcp_store_version(s, zero, &v), PMCP_EINVAL);
  pmcp_tenant bogus = {999999, 0, 0};
  ST_RC(s, pmcp_store_version(s, bogus, &v), PMCP_EINVAL);
  pmcp_store_free(s);
  /* Another store has another key; the same store keeps its key. */
  char first[sizeof st_path];
  snprintf(first, sizeof first, "%s", st_path);
  ST_OK(s, pmcp_store_open(&s, first, PMCP_STORE_READONLY));
  ST_OK(s, pmcp_store_secret(s, "cursor_key", &k2));
  ck_assert(memcmp(k1.ptr, k2.ptr, 32) == 0);
  pmcp_store_free(s);
  char dir1[256];
  snprintf(dir1, sizeof dir1, "%s", st_dir);
  s = st_open_new(NULL);
  ST_OK(s, pmcp_store_secret(s, "cursor_key", &k2));
  ck_assert(memcmp(k1.ptr, k2.ptr, 32) != 0);
  pmcp_store_free(s);
  st_cleanup();
  snprintf(st_dir, sizeof st_dir, "%s", dir1);
  st_cleanup();
  pmcp_buf_dispose(&k1);
  pmcp_buf_dispose(&k2);
  pmcp_buf_dispose(&b);
}
END_TEST

/* A host-supplied backend: only `get` and `tenant`. */
static int my_tenant(pmcp_store *s, void *ctx, const char *name, unsigned flags, pmcp_tenant *out)
{
  out->id = 7;
  return 0;
}

static int my_get(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref, pmcp_buf *out)
{
  if (t.id != 7)
    return pmcp_store_set_error(s, PMCP_ENOTFOUND, "wrong tenant");
  (*(int *)ctx)++;
  pmcp_buf_dispose(out);
  out->ptr = strdup("{\"kind\":\"run\"}");
  out->len = out->cap = strlen(out->ptr);
  return 0;
}

START_TEST(custom_backend)
{
  int calls = 0;
  pmcp_store_ops ops;
  memset(&ops, 0, sizeof ops);
  ops.version = PMCP_STORE_OPS_VERSION;
  ops.name = "mine";
  ops.tenant = my_tenant;
  ops.get = my_get;
  pmcp_store *s = NULL;
  ck_assert_int_eq(pmcp_store_new_custom(&s, &ops, &calls, 0), 0);
  ck_assert_str_eq(pmcp_store_backend(s), "mine");
  pmcp_tenant t;
  ST_OK(s, pmcp_store_tenant(s, NULL, 0, &t));
  pmcp_buf b = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_get(s, t, "run:a", &b));
  ck_assert_str_eq(b.ptr, "{\"kind\":\"run\"}");
  ck_assert_int_eq(calls, 1);
  pmcp_list_opts lo = PMCP_LIST_OPTS_INIT;
  lo.kind = "run";
  ST_RC(s, pmcp_store_list(s, t, &lo, &b), PMCP_EUNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "mine"));
  pmcp_store_free(s);
  ck_assert_int_eq(pmcp_store_new_custom(&s, &ops, &calls, PMCP_STORE_READONLY), 0);
  ops.tag = NULL;
  ST_RC(s, pmcp_store_tenant(s, NULL, PMCP_STORE_CREATE, &t), PMCP_EREADONLY);
  pmcp_store_free(s);
  ops.version = 99;
  ck_assert_int_eq(pmcp_store_new_custom(&s, &ops, NULL, 0), PMCP_EINVAL);
  ck_assert_ptr_null(s);
  pmcp_buf_dispose(&b);
}
END_TEST

/* query_sql's way in: a separate read-only SQLite connection. */
START_TEST(ro_connection)
{
  ST_SQLITE_ONLY(); /* a SQLite connection by definition */
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  sqlite3 *db = NULL;
  ck_assert_int_eq(pmcp__store_sqlite_ro_connection(s, &db), 0);
  sqlite3_stmt *st;
  ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT count(*) FROM runs", -1, &st, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  ck_assert_int_eq(sqlite3_column_int(st, 0), 1);
  sqlite3_finalize(st);
  ck_assert_int_eq(sqlite3_exec(db, "DELETE FROM runs", NULL, NULL, NULL), SQLITE_READONLY);
  sqlite3_close(db);
  pmcp_store_ops ops;
  memset(&ops, 0, sizeof ops);
  ops.version = PMCP_STORE_OPS_VERSION;
  pmcp_store *c = NULL;
  ck_assert_int_eq(pmcp_store_new_custom(&c, &ops, NULL, 0), 0);
  ck_assert_int_eq(pmcp__store_sqlite_ro_connection(c, &db), PMCP_EUNSUPPORTED);
  ck_assert_ptr_null(db);
  pmcp_store_free(c);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *commit_later(void *ud)
{
  pmcp_store *s = ud;
  struct timespec ts = {3, 0};
  nanosleep(&ts, NULL);
  pmcp_store_commit(s);
  return NULL;
}

/* A writer waits for another as long as it takes (no fixed cap), saying on
 * stderr who holds the store and since when; PROBE_STORE_WAIT (probe
 * --wait) bounds the wait, and the refusal names the holder too. */
START_TEST(writers_wait)
{
  ST_SQLITE_ONLY(); /* SQLite's single writer; pg writers queue on row locks */
  pmcp_tenant t;
  pmcp_store *a = st_open_new(&t);
  ST_OK(a, pmcp_store_begin(a));
  st_mkproject(a, t);
  char holder[1400];
  snprintf(holder, sizeof holder, "%s-writer", st_path);
  pmcp_buf hb = PMCP_BUF_INIT;
  file_bytes(holder, &hb);
  char pid[32];
  snprintf(pid, sizeof pid, "%ld\t", (long)getpid());
  ck_assert_msg(hb.len > 0 && strncmp(hb.ptr, pid, strlen(pid)) == 0, "holder file: %.*s",
                (int)hb.len, hb.ptr ? hb.ptr : "");
  pmcp_buf_dispose(&hb);

  /* A limit: refused after it, naming the holder. */
  setenv("PROBE_STORE_WAIT", "1", 1);
  pmcp_store *b = NULL;
  double t0 = now_s();
  int rc = pmcp_store_open(&b, st_path, 0);
  double took = now_s() - t0;
  ck_assert_int_eq(rc, PMCP_ETIMEOUT);
  snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
  ck_assert_msg(strstr(pmcp_store_errmsg(b), pid) &&
                strstr(pmcp_store_errmsg(b), "has been writing since") &&
                strstr(pmcp_store_errmsg(b), "waiting 1 s"), "%s", pmcp_store_errmsg(b));
  ck_assert_msg(took > 0.9 && took < 10, "gave up after %.2f s", took);
  pmcp_store_free(b);

  /* No limit: waits until the holder commits (3 s), with progress. */
  unsetenv("PROBE_STORE_WAIT");
  char errpath[1400];
  snprintf(errpath, sizeof errpath, "%s/stderr.txt", st_dir);
  fflush(stderr);
  int saved = dup(2);
  FILE *ef = fopen(errpath, "w");
  ck_assert_ptr_nonnull(ef);
  dup2(fileno(ef), 2);
  pthread_t th;
  pthread_create(&th, NULL, commit_later, a);
  t0 = now_s();
  rc = pmcp_store_open(&b, st_path, 0);
  took = now_s() - t0;
  pthread_join(th, NULL);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  fclose(ef);
  ck_assert_msg(rc == 0, "%s", pmcp_store_errmsg(b));
  ck_assert_msg(took > 2.5, "opened after %.2f s while the other held the store", took);
  pmcp_buf eb = PMCP_BUF_INIT;
  file_bytes(errpath, &eb);
  ck_assert_msg(eb.len && strstr(eb.ptr, "waiting for the store") && strstr(eb.ptr, pid) &&
                strstr(eb.ptr, "since"), "stderr: %.*s", (int)eb.len, eb.ptr ? eb.ptr : "");
  pmcp_buf_dispose(&eb);
  /* The holder file went with the commit; the write went in. */
  struct stat sb;
  ck_assert_int_ne(stat(holder, &sb), 0);
  cJSON *o = st_get(b, t, "run:r1");
  ck_assert_str_eq(st_str(o, "name"), "first");
  cJSON_Delete(o);
  pmcp_store_free(b);
  pmcp_store_free(a);
  st_cleanup();
}
END_TEST

/* Damaged files are said to be damaged, in SQLite's words; files that are
 * no SQLite database at all are "not a probe store". */
START_TEST(damaged_files)
{
  ST_SQLITE_ONLY(); /* file bytes */
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  pmcp_store_free(s);
  sql(st_path, "PRAGMA wal_checkpoint(TRUNCATE)");
  /* Truncated after its first page. */
  ck_assert_int_eq(truncate(st_path, 4096), 0);
  unsigned modes[] = {PMCP_STORE_READONLY, 0};
  for (int i = 0; i < 2; i++) {
    int rc = pmcp_store_open(&s, st_path, modes[i]);
    ck_assert_msg(rc == PMCP_ECORRUPT, "rc %d: %s", rc, pmcp_store_errmsg(s));
    ck_assert_msg(strstr(pmcp_store_errmsg(s), "is damaged (integrity check: ") &&
                  !strstr(pmcp_store_errmsg(s), "not a probe store"), "%s",
                  pmcp_store_errmsg(s));
    pmcp_store_free(s);
  }
  /* Not SQLite at all. */
  FILE *f = fopen(st_path, "w");
  for (int i = 0; i < 2000; i++)
    fputs("garbage ", f);
  fclose(f);
  ck_assert_int_eq(pmcp_store_open(&s, st_path, PMCP_STORE_READONLY), PMCP_ESTORE);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "not a probe store"));
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* What the unprivileged child of readonly_folder checks: exit 0, or the
 * number of the first check that failed (said on stderr). */
static int readonly_folder_child(const char *path, const char *walpath, pmcp_tenant t)
{
  pmcp_store *s = NULL;
  int rc = pmcp_store_open(&s, path, PMCP_STORE_READONLY);
  if (rc) {
    fprintf(stderr, "read-only open: %s\n", pmcp_store_errmsg(s));
    return 1;
  }
  pmcp_buf b = PMCP_BUF_INIT;
  if (pmcp_store_get(s, t, "run:r1", &b) != 0 || !strstr(b.ptr, "first")) {
    fprintf(stderr, "get: %s\n", pmcp_store_errmsg(s));
    return 2;
  }
  pmcp_buf_dispose(&b);
  sqlite3 *db = NULL;
  if (pmcp__store_sqlite_ro_connection(s, &db) != 0 ||
      sqlite3_exec(db, "SELECT count(*) FROM runs", NULL, NULL, NULL) != SQLITE_OK) {
    fprintf(stderr, "query connection: %s\n", db ? sqlite3_errmsg(db) : pmcp_store_errmsg(s));
    return 3;
  }
  sqlite3_close(db);
  pmcp_store_free(s);
  rc = pmcp_store_open(&s, path, 0);
  if (rc != PMCP_EREADONLY || !strstr(pmcp_store_errmsg(s), "folder is read-only")) {
    fprintf(stderr, "writable open: %d %s\n", rc, pmcp_store_errmsg(s));
    return 4;
  }
  pmcp_store_free(s);
  rc = pmcp_store_open(&s, walpath, PMCP_STORE_READONLY);
  if (rc == 0 || !strstr(pmcp_store_errmsg(s), "-wal") ||
      !strstr(pmcp_store_errmsg(s), "read-only")) {
    fprintf(stderr, "store with a log: %d %s\n", rc, pmcp_store_errmsg(s));
    return 5;
  }
  pmcp_store_free(s);
  return 0;
}

/* A store in a folder its reader cannot write is served read-only (the
 * file alone, immutable), unless a write-ahead log holds changes the file
 * lacks, which is said exactly; a writer is told the folder is read-only. */
START_TEST(readonly_folder)
{
  ST_SQLITE_ONLY(); /* files and folders */
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  pmcp_store_free(s);
  /* A second store whose log keeps changes: no checkpoint on close. */
  char walpath[1300];
  snprintf(walpath, sizeof walpath, "%s/logged.db", st_dir);
  s = NULL;
  ST_OK(s, pmcp_store_open(&s, walpath, PMCP_STORE_CREATE));
  pmcp_store_free(s);
  sqlite3 *db;
  ck_assert_int_eq(sqlite3_open(walpath, &db), SQLITE_OK);
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
  ck_assert_int_eq(sqlite3_exec(db, "PRAGMA journal_mode=WAL; UPDATE tenants SET "
                                "data_version=data_version+1", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
  char shm[1400];
  snprintf(shm, sizeof shm, "%s-shm", walpath);
  unlink(shm);
  struct stat sb;
  snprintf(shm, sizeof shm, "%s-wal", walpath);
  ck_assert_msg(stat(shm, &sb) == 0 && sb.st_size > 0, "the log keeps changes");
  chmod(st_dir, 0555);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    /* Root writes anywhere: check as nobody. */
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
      _exit(99);
    _exit(readonly_folder_child(st_path, walpath, t));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  chmod(st_dir, 0700);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "read-only folder check %d failed (see stderr)", WEXITSTATUS(status));
  st_cleanup();
}
END_TEST

int main(void)
{
  Suite *su = suite_create("store-open");
  TCase *tc = tcase_create("open");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, resolve_order);
  tcase_add_test(tc, create_reopen);
  tcase_add_test(tc, readonly_never_writes);
  tcase_add_test(tc, migration_forward);
  tcase_add_test(tc, refusals);
  tcase_add_test(tc, secrets_and_tenants);
  tcase_add_test(tc, custom_backend);
  tcase_add_test(tc, ro_connection);
  tcase_add_test(tc, writers_wait);
  tcase_add_test(tc, damaged_files);
  tcase_add_test(tc, readonly_folder);
  suite_add_tcase(su, tc);
  return st_run_suite(su);
}
