/* SPDX-License-Identifier: MIT */
/* What only the PostgreSQL backend has: tenant isolation enforced by
 * row-level security for the service role (checked connected as that role,
 * with raw SQL that "forgets" its tenant filter), migrations racing from
 * several processes, schema refusals, and a lost connection (the server
 * terminates it, or restarts) giving clear errors and a reconnect. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "../unit/store-test-util.h"

/* store/pg.h: the schema version this library writes. */
int pmcp__pg_schema_target(void);

static PGconn *pg_connect(const char *base, const char *schema)
{
  char url[1200];
  st_pg_url(url, sizeof url, base, schema);
  PGconn *c = PQconnectdb(url);
  ck_assert_msg(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
  PQclear(PQexec(c, "SET client_min_messages = warning"));
  return c;
}

/* The first column of the first row of @p sql, or NULL with *ok 0 on an
 * error (its message in err). */
static char *pg_value(PGconn *c, const char *sql, int *ok, char *err, size_t errlen)
{
  PGresult *r = PQexec(c, sql);
  ExecStatusType es = PQresultStatus(r);
  char *out = NULL;
  *ok = es == PGRES_TUPLES_OK || es == PGRES_COMMAND_OK;
  if (!*ok && err)
    snprintf(err, errlen, "%s", PQresultErrorMessage(r));
  if (es == PGRES_TUPLES_OK && PQntuples(r) > 0)
    out = strdup(PQgetvalue(r, 0, 0));
  PQclear(r);
  return out;
}

static void expect_value(PGconn *c, const char *sql, const char *want)
{
  int ok;
  char err[300] = "";
  char *v = pg_value(c, sql, &ok, err, sizeof err);
  ck_assert_msg(ok, "%s: %s", sql, err);
  ck_assert_msg(v && strcmp(v, want) == 0, "%s -> %s, wanted %s", sql, v ? v : "(none)", want);
  free(v);
}

static void expect_refused(PGconn *c, const char *sql, const char *why)
{
  int ok;
  char err[300] = "";
  free(pg_value(c, sql, &ok, err, sizeof err));
  ck_assert_msg(!ok, "%s was allowed", sql);
  ck_assert_msg(strstr(err, why) != NULL, "%s: %s (wanted '%s')", sql, err, why);
}

static void fill_tenant(pmcp_store *s, const char *name, const char *run)
{
  pmcp_tenant t;
  ST_OK(s, pmcp_store_tenant(s, name, PMCP_STORE_CREATE, &t));
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = run;
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  ST_OK(s, pmcp_store_tag(s, t, run, "secret-of-" , 1));
  pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
  n.on = run;
  n.body = name;
  ST_OK(s, pmcp_store_note(s, t, &n, NULL, NULL));
}

START_TEST(rls_isolation_as_service_role)
{
  pmcp_store *s = st_open_new(NULL);
  fill_tenant(s, "alpha", "run-a");
  fill_tenant(s, "beta", "run-b");
  pmcp_tenant ta, tb;
  ST_OK(s, pmcp_store_tenant(s, "alpha", 0, &ta));
  ST_OK(s, pmcp_store_tenant(s, "beta", 0, &tb));
  pmcp_store_free(s);

  const char *svc = getenv("PROBE_TEST_PG_SERVICE_URL");
  ck_assert_ptr_nonnull(svc);
  PGconn *c = pg_connect(svc, st_schema);
  expect_value(c, "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname=current_user",
               "f");
  /* No tenant set: no rows at all, whatever the query says. */
  expect_value(c, "SELECT count(*) FROM runs", "0");
  expect_value(c, "SELECT count(*) FROM notes", "0");
  char sql[200];
  snprintf(sql, sizeof sql, "SELECT set_config('probe.tenant', '%lld', false)",
           (long long)ta.id);
  free(pg_value(c, sql, &(int){0}, NULL, 0));
  /* Tenant alpha: its rows only, even asking for everything. */
  expect_value(c, "SELECT string_agg(slug, ',') FROM runs", "run-a");
  expect_value(c, "SELECT count(*) FROM search_docs WHERE ref LIKE 'run:run-b%'", "0");
  expect_value(c, "SELECT count(*) FROM notes", "1");
  snprintf(sql, sizeof sql, "SELECT count(*) FROM runs WHERE tenant_id=%lld", (long long)tb.id);
  expect_value(c, sql, "0");
  /* Writing into another tenant, or changing a row's tenant, is refused. */
  snprintf(sql, sizeof sql,
           "INSERT INTO runs(tenant_id, slug, name, status, created) VALUES(%lld, 'x', 'x',"
           " 'running', 1)", (long long)tb.id);
  expect_refused(c, sql, "row-level security");
  snprintf(sql, sizeof sql, "UPDATE runs SET tenant_id=%lld", (long long)tb.id);
  expect_refused(c, sql, "row-level security");
  /* Deleting beta's rows deletes nothing (they are invisible). */
  expect_value(c, "WITH d AS (DELETE FROM tags WHERE owner_kind='nothing' RETURNING 1)"
                  " SELECT count(*) FROM d", "0");
  /* The policy cannot be switched off by the service role. */
  expect_refused(c, "ALTER TABLE runs DISABLE ROW LEVEL SECURITY", "must be owner");
  expect_refused(c, "DROP POLICY tenant_rows ON runs", "must be owner");
  free(pg_value(c, "SET row_security = off", &(int){0}, NULL, 0));
  expect_refused(c, "SELECT count(*) FROM runs", "row-level security");
  PQfinish(c);

  /* The store opened as the service role works, scoped the same way. */
  char url[1200];
  st_pg_url(url, sizeof url, svc, st_schema);
  ST_OK(s, pmcp_store_open(&s, url, 0));
  ck_assert_str_eq(pmcp_store_backend(s), "postgres");
  cJSON *j = st_list(s, tb, "run", NULL, NULL);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
  ck_assert_str_eq(st_str(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "items"), 0), "ref"),
                   "run:run-b");
  cJSON_Delete(j);
  pmcp_buf b = PMCP_BUF_INIT;
  ST_RC(s, pmcp_store_get(s, tb, "run:run-a", &b), PMCP_ENOTFOUND);
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "run-b2";
  ST_OK(s, pmcp_store_run_create(s, tb, &r, NULL));
  pmcp_buf_dispose(&b);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(migrations_race)
{
  st_fresh_path();
  /* Four processes create the same store at once: one migrates, the
   * others wait on the advisory lock and find it done. */
  pid_t kids[4];
  for (int i = 0; i < 4; i++) {
    kids[i] = fork();
    ck_assert_int_ge(kids[i], 0);
    if (kids[i] == 0) {
      pmcp_store *s = NULL;
      int rc = pmcp_store_open(&s, st_path, PMCP_STORE_CREATE);
      pmcp_tenant t;
      if (rc == 0)
        rc = pmcp_store_tenant(s, NULL, 0, &t);
      if (rc)
        fprintf(stderr, "racer %d: %s\n", i, pmcp_store_errmsg(s));
      pmcp_store_free(s);
      _exit(rc ? 1 : 0);
    }
  }
  for (int i = 0; i < 4; i++) {
    int status = 0;
    ck_assert_int_eq(waitpid(kids[i], &status, 0), kids[i]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "racer %d failed", i);
  }
  PGconn *c = pg_connect(getenv("PROBE_TEST_PG_URL"), st_schema);
  expect_value(c, "SELECT count(*) FROM secrets WHERE name='cursor_key'", "1");
  expect_value(c, "SELECT count(*) FROM tenants", "1");
  PQfinish(c);
  st_cleanup();
}
END_TEST

START_TEST(schema_refusals)
{
  pmcp_store *s = NULL;
  st_fresh_path();
  /* An empty schema without CREATE: not found, nothing created. */
  ck_assert_int_eq(pmcp_store_open(&s, st_path, 0), PMCP_ENOTFOUND);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "probe init"));
  pmcp_store_free(s);
  ck_assert_int_eq(pmcp_store_open(&s, st_path, PMCP_STORE_READONLY), PMCP_ENOTFOUND);
  pmcp_store_free(s);
  /* Another program's tables: refused, even with CREATE. */
  PGconn *c = pg_connect(getenv("PROBE_TEST_PG_URL"), st_schema);
  free(pg_value(c, "CREATE TABLE t(x int)", &(int){0}, NULL, 0));
  ck_assert_int_eq(pmcp_store_open(&s, st_path, PMCP_STORE_CREATE), PMCP_ESTORE);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "not a probe store"));
  pmcp_store_free(s);
  free(pg_value(c, "DROP TABLE t", &(int){0}, NULL, 0));
  ST_OK(s, pmcp_store_open(&s, st_path, PMCP_STORE_CREATE));
  pmcp_store_free(s);
  /* A newer schema: refused with a clear message. */
  free(pg_value(c, "UPDATE meta SET value='99' WHERE key='schema_version'", &(int){0}, NULL, 0));
  ck_assert_int_eq(pmcp_store_open(&s, st_path, 0), PMCP_ESTORE);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "newer"));
  pmcp_store_free(s);
  free(pg_value(c, "UPDATE meta SET value='1' WHERE key='schema_version'", &(int){0}, NULL, 0));
  /* An older schema: read-only refuses to migrate it, read-write does,
   * and the service role (not the owner) may not. */
  ck_assert_int_eq(pmcp_store_open(&s, st_path, PMCP_STORE_READONLY), PMCP_ESTORE);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "older"));
  pmcp_store_free(s);
  char url[1200];
  st_pg_url(url, sizeof url, getenv("PROBE_TEST_PG_SERVICE_URL"), st_schema);
  ck_assert_int_eq(pmcp_store_open(&s, url, 0), PMCP_ESTORE);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "owner"));
  pmcp_store_free(s);
  ST_OK(s, pmcp_store_open(&s, st_path, 0));
  pmcp_store_free(s);
  ST_OK(s, pmcp_store_open(&s, st_path, PMCP_STORE_READONLY));
  pmcp_tenant t;
  ST_OK(s, pmcp_store_tenant(s, NULL, 0, &t));
  ST_RC(s, pmcp_store_tag(s, t, "run:x", "y", 1), PMCP_EREADONLY);
  pmcp_store_free(s);
  PQfinish(c);
  st_cleanup();
}
END_TEST

/* Kills the store's server process from another connection. */
static void terminate_others(const char *schema)
{
  PGconn *c = pg_connect(getenv("PROBE_TEST_PG_URL"), schema);
  char sql[300];
  snprintf(sql, sizeof sql,
           "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <>"
           " pg_backend_pid() AND usename=current_user AND application_name='pmcp-test-%s'",
           schema);
  int ok;
  char *v = pg_value(c, sql, &ok, NULL, 0);
  ck_assert_msg(ok && v && strcmp(v, "1") == 0, "terminated %s", v ? v : "?");
  free(v);
  PQfinish(c);
}

START_TEST(lost_connection)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  pmcp_store_free(s);
  char url[1300];
  snprintf(url, sizeof url, "%s&application_name=pmcp-test-%s", st_path, st_schema);
  ST_OK(s, pmcp_store_open(&s, url, 0));
  /* Outside a transaction: the next call reconnects by itself. */
  terminate_others(st_schema);
  cJSON *o = st_get(s, t, "run:r1");
  ck_assert_str_eq(st_str(o, "name"), "first");
  cJSON_Delete(o);
  /* Inside one: a clear error, the transaction is gone, nothing stored,
   * and the store works again after the rollback. */
  ST_OK(s, pmcp_store_begin(s));
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "lost";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  terminate_others(st_schema);
  r.id = "lost2";
  int rc = pmcp_store_run_create(s, t, &r, NULL);
  ck_assert_int_ne(rc, 0);
  ck_assert_msg(strstr(pmcp_store_errmsg(s), "connection") != NULL, "%s", pmcp_store_errmsg(s));
  ck_assert_int_ne(pmcp_store_commit(s), 0);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "nothing of it was stored"));
  pmcp_buf b = PMCP_BUF_INIT;
  ST_RC(s, pmcp_store_get(s, t, "run:lost", &b), PMCP_ENOTFOUND);
  r.id = "after";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  pmcp_buf_dispose(&b);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

static pmcp_point *ramp(size_t n, int64_t step0)
{
  pmcp_point *p = malloc(n * sizeof *p);
  ck_assert_ptr_nonnull(p);
  for (size_t i = 0; i < n; i++) {
    p[i].step = step0 + (int64_t)i;
    p[i].time_ms = 1700000000000LL + (int64_t)i;
    p[i].value = (double)((i * 7919) % 1000) / 8;
  }
  return p;
}

/* The series holds exactly @p want (points and a whole-range summary). */
static void expect_points(pmcp_store *s, pmcp_tenant t, int64_t id, const pmcp_point *want,
                          size_t n)
{
  pmcp_point *back = calloc(n + 1, sizeof *back);
  size_t got;
  int64_t next;
  ST_OK(s, pmcp_store_points(s, t, id, INT64_MIN, INT64_MAX, 0, back, n + 1, &got, &next));
  ck_assert_uint_eq(got, n);
  ck_assert(memcmp(back, want, n * sizeof *want) == 0);
  pmcp_bucket b[3];
  size_t nb;
  ST_OK(s, pmcp_store_summary(s, t, id, INT64_MIN, INT64_MAX, 3, b, &nb));
  uint64_t count = 0;
  for (size_t i = 0; i < nb; i++)
    count += b[i].count;
  ck_assert_uint_eq(count, n);
  free(back);
}

/* A write of many blocks that fails part-way (a block the database
 * refuses, or the connection dropped inside a transaction) stores none of
 * its points: the series keeps exactly what it had, its partial tail
 * block included, and takes new points afterwards. */
START_TEST(points_write_fails_midway)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  pmcp_store_free(s);
  char url[1300];
  snprintf(url, sizeof url, "%s&application_name=pmcp-test-%s", st_path, st_schema);
  ST_OK(s, pmcp_store_open(&s, url, 0));
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, "loss", NULL, 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
  int64_t id;
  ST_OK(s, pmcp_store_series(s, t, "r1", &sp, &id));
  size_t n0 = 20000, n1 = 50000;
  pmcp_point *p = ramp(n0 + n1 + 1000, 0);
  ST_OK(s, pmcp_store_log(s, t, id, p, n0)); /* a full block and a partial one */
  /* The database refuses the third block this call writes. */
  PGconn *c = pg_connect(getenv("PROBE_TEST_PG_URL"), st_schema);
  int ok;
  char err[300] = "";
  free(pg_value(c, "ALTER TABLE metric_chunks ADD CONSTRAINT midway CHECK (step_max < 55000)",
                &ok, err, sizeof err));
  ck_assert_msg(ok, "%s", err);
  ck_assert_int_ne(pmcp_store_log(s, t, id, p + n0, n1), 0);
  /* the constraint's name is the schema's business, not the caller's */
  ck_assert_msg(strstr(pmcp_store_errmsg(s), "SQLSTATE 23514") != NULL &&
                    strstr(pmcp_store_errmsg(s), "midway") == NULL,
                "%s", pmcp_store_errmsg(s));
  expect_points(s, t, id, p, n0);
  /* The same inside the caller's transaction: the call fails, the
   * transaction still commits what came before it. */
  ST_OK(s, pmcp_store_begin(s));
  ST_OK(s, pmcp_store_log(s, t, id, p + n0, 100));
  ck_assert_int_ne(pmcp_store_log(s, t, id, p + n0 + 100, n1), 0);
  ST_OK(s, pmcp_store_commit(s));
  expect_points(s, t, id, p, n0 + 100);
  free(pg_value(c, "ALTER TABLE metric_chunks DROP CONSTRAINT midway", &ok, err, sizeof err));
  ck_assert_msg(ok, "%s", err);
  PQfinish(c);
  /* The connection drops after two blocks of a transaction were written:
   * nothing of the transaction is kept. */
  ST_OK(s, pmcp_store_begin(s));
  ST_OK(s, pmcp_store_log(s, t, id, p + n0 + 100, 40000));
  terminate_others(st_schema);
  ck_assert_int_ne(pmcp_store_log(s, t, id, p + n0 + 40100, 1000), 0);
  ck_assert_int_ne(pmcp_store_commit(s), 0);
  expect_points(s, t, id, p, n0 + 100);
  /* And the series goes on from its tail block. */
  ST_OK(s, pmcp_store_log(s, t, id, p + n0 + 100, n1 + 900));
  expect_points(s, t, id, p, n0 + n1 + 1000);
  free(p);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* The whole server restarts (a private cluster, so the other tests' one
 * is left alone): calls fail clearly while it is down and work again once
 * it is back, on the same handle. */
START_TEST(server_restart)
{
  const char *pgctl = getenv("PMCP_PGCTL");
  ck_assert_ptr_nonnull(pgctl);
  char dir[] = "/tmp/pmcp-pgr-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char cmd[600], url[400];
  snprintf(cmd, sizeof cmd, "bash '%s' start '%s' >/dev/null", pgctl, dir);
  ck_assert_int_eq(system(cmd), 0);
  snprintf(url, sizeof url, "postgresql:///probe?host=%s&user=probe_owner", dir);
  pmcp_store *s = NULL;
  ST_OK(s, pmcp_store_open(&s, url, PMCP_STORE_CREATE));
  pmcp_tenant t;
  ST_OK(s, pmcp_store_tenant(s, NULL, 0, &t));
  st_mkproject(s, t);
  snprintf(cmd, sizeof cmd, "bash '%s' restart '%s' >/dev/null", pgctl, dir);
  ck_assert_int_eq(system(cmd), 0);
  cJSON *o = st_get(s, t, "run:r1");
  ck_assert_str_eq(st_str(o, "name"), "first");
  cJSON_Delete(o);
  /* Down: a clear error, no crash; up again: the same handle works. */
  snprintf(cmd, sizeof cmd, "bash '%s' halt '%s' >/dev/null", pgctl, dir);
  ck_assert_int_eq(system(cmd), 0);
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp_store_get(s, t, "run:r1", &b);
  ck_assert_int_eq(rc, PMCP_EIO);
  ck_assert_msg(strstr(pmcp_store_errmsg(s), "PostgreSQL") != NULL, "%s", pmcp_store_errmsg(s));
  snprintf(cmd, sizeof cmd, "bash '%s' start '%s' >/dev/null", pgctl, dir);
  ck_assert_int_eq(system(cmd), 0);
  ST_OK(s, pmcp_store_get(s, t, "run:r1", &b));
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "r2";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  pmcp_buf_dispose(&b);
  pmcp_store_free(s);
  snprintf(cmd, sizeof cmd, "bash '%s' stop '%s' >/dev/null", pgctl, dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The live counts of schema v7 (projects.n_runs, n_experiments,
 * experiments.n_runs): kept by triggers through paths the store API never
 * takes (a hard delete, a run moved to another experiment), right after
 * runs created from several processes at once, and filled from the rows
 * when an older store is migrated, tenant by tenant. */
static const char counts_sql[] =
    "SELECT string_agg(format('%s:%s/%s', p.slug, p.n_runs, p.n_experiments), ' ' ORDER BY"
    " p.slug) || ' ' || (SELECT string_agg(format('%s:%s', e.slug, e.n_runs), ' ' ORDER BY"
    " e.slug) FROM experiments e) FROM projects p";
static const char counts_true[] =
    "SELECT string_agg(format('%s:%s/%s', p.slug, (SELECT count(*) FROM runs WHERE"
    " project_id=p.id AND deleted=0), (SELECT count(*) FROM experiments WHERE project_id=p.id"
    " AND deleted=0)), ' ' ORDER BY p.slug) || ' ' || (SELECT string_agg(format('%s:%s',"
    " e.slug, (SELECT count(*) FROM runs WHERE experiment_id=e.id AND deleted=0)), ' '"
    " ORDER BY e.slug) FROM experiments e) FROM projects p";

static void use_tenant(PGconn *c, int64_t id)
{
  char sql[100];
  snprintf(sql, sizeof sql, "SELECT set_config('probe.tenant', '%lld', false)", (long long)id);
  free(pg_value(c, sql, &(int){0}, NULL, 0));
}

/* The counts as stored must be the counts of the rows, and @p want. */
static void expect_counts(PGconn *c, const char *want)
{
  int ok;
  char *truth = pg_value(c, counts_true, &ok, NULL, 0);
  ck_assert_msg(ok && truth, "counting");
  ck_assert_msg(strcmp(truth, want) == 0, "counted %s, wanted %s", truth, want);
  expect_value(c, counts_sql, want);
  free(truth);
}

START_TEST(live_counts)
{
  pmcp_tenant ta, tb;
  pmcp_store *s = st_open_new(NULL);
  ST_OK(s, pmcp_store_tenant(s, "alpha", PMCP_STORE_CREATE, &ta));
  ST_OK(s, pmcp_store_tenant(s, "beta", PMCP_STORE_CREATE, &tb));
  st_mkproject(s, ta); /* vision > baseline > r1 */
  st_mkproject(s, tb);
  pmcp_entity_spec e = PMCP_ENTITY_SPEC_INIT;
  e.name = "other";
  e.id = "other";
  e.parent = "project:vision";
  ST_OK(s, pmcp_store_create(s, ta, "experiment", &e, NULL));
  pmcp_store_free(s);

  /* Runs created from four processes at once, in both tenants. */
  pid_t kids[4];
  for (int i = 0; i < 4; i++) {
    kids[i] = fork();
    ck_assert_int_ge(kids[i], 0);
    if (kids[i] == 0) {
      pmcp_store *k = NULL;
      int rc = pmcp_store_open(&k, st_path, 0);
      for (int j = 0; rc == 0 && j < 10; j++) {
        char id[32];
        snprintf(id, sizeof id, "k%d-%d", i, j);
        pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
        r.id = id;
        r.experiment = j % 2 ? "experiment:baseline" : "experiment:other";
        rc = pmcp_store_run_create(k, i % 2 ? tb : ta, &r, NULL);
        if (rc == PMCP_ENOTFOUND && (i % 2)) { /* beta has no "other" */
          r.experiment = "experiment:baseline";
          rc = pmcp_store_run_create(k, tb, &r, NULL);
        }
      }
      if (rc)
        fprintf(stderr, "writer %d: %s\n", i, pmcp_store_errmsg(k));
      pmcp_store_free(k);
      _exit(rc ? 1 : 0);
    }
  }
  for (int i = 0; i < 4; i++) {
    int status = 0;
    ck_assert_int_eq(waitpid(kids[i], &status, 0), kids[i]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed", i);
  }
  PGconn *c = pg_connect(getenv("PROBE_TEST_PG_URL"), st_schema);
  use_tenant(c, ta.id);
  expect_counts(c, "vision:21/2 baseline:11 other:10");
  use_tenant(c, tb.id);
  expect_counts(c, "vision:21/1 baseline:21");

  /* What the API never does: a hard delete, a run moved, an experiment
   * moved to another project, a deleted run moved. */
  use_tenant(c, ta.id);
  expect_value(c, "WITH d AS (DELETE FROM runs WHERE slug IN ('k0-0', 'k0-1') RETURNING 1)"
                  " SELECT count(*) FROM d", "2");
  expect_counts(c, "vision:19/2 baseline:10 other:9");
  expect_value(c, "WITH u AS (UPDATE runs SET experiment_id=(SELECT id FROM experiments WHERE"
                  " slug='other') WHERE slug='k2-1' RETURNING 1) SELECT count(*) FROM u", "1");
  expect_counts(c, "vision:19/2 baseline:9 other:10");
  expect_value(c, "WITH u AS (UPDATE runs SET deleted=1 WHERE slug='k2-3' RETURNING 1)"
                  " SELECT count(*) FROM u", "1");
  expect_value(c, "WITH u AS (UPDATE runs SET experiment_id=NULL, project_id=NULL WHERE"
                  " slug IN ('k2-3', 'k2-5') RETURNING 1) SELECT count(*) FROM u", "2");
  expect_counts(c, "vision:17/2 baseline:7 other:10");
  expect_value(c, "WITH u AS (UPDATE runs SET status='finished' WHERE slug LIKE 'k%'"
                  " RETURNING 1) SELECT count(*) FROM u", "18");
  expect_counts(c, "vision:17/2 baseline:7 other:10");
  /* Version 6 -> 7 again on a filled store: the counts, spoilt on purpose,
   * are recomputed for both tenants (as the owner, under row-level
   * security, tenant by tenant). */
  use_tenant(c, ta.id);
  expect_value(c, "WITH u AS (UPDATE projects SET n_runs=99, n_experiments=99 RETURNING 1)"
                  " SELECT count(*) FROM u", "1");
  use_tenant(c, tb.id);
  expect_value(c, "WITH u AS (UPDATE experiments SET n_runs=-5 RETURNING 1)"
                  " SELECT count(*) FROM u", "1");
  expect_value(c, "WITH u AS (UPDATE meta SET value='6' WHERE key='schema_version' RETURNING 1)"
                  " SELECT count(*) FROM u", "1");
  ST_OK(s, pmcp_store_open(&s, st_path, 0));
  pmcp_store_free(s);
  /* on to the newest version (later migrations leave the counts alone) */
  char newest[16];
  snprintf(newest, sizeof newest, "%d", pmcp__pg_schema_target());
  expect_value(c, "SELECT value FROM meta WHERE key='schema_version'", newest);
  use_tenant(c, ta.id);
  expect_counts(c, "vision:17/2 baseline:7 other:10");
  use_tenant(c, tb.id);
  expect_counts(c, "vision:21/1 baseline:21");
  /* The triggers and the search vectors were made once, not twice. */
  expect_value(c, "SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid=t.tgrelid"
                  " JOIN pg_namespace n ON n.oid=c.relnamespace WHERE n.nspname=current_schema()"
                  " AND t.tgname LIKE '%_live_%'", "6");
  expect_value(c, "SELECT string_agg(c.relname, ' ' ORDER BY c.relname) FROM pg_attrdef d"
                  " JOIN pg_attribute a ON a.attrelid=d.adrelid AND a.attnum=d.adnum"
                  " JOIN pg_class c ON c.oid=d.adrelid WHERE a.attname='tsv' AND"
                  " pg_get_expr(d.adbin, d.adrelid) LIKE '%probe_words%'"
                  " AND c.relnamespace=current_schema()::regnamespace", "papers search_docs");
  PQfinish(c);
  st_cleanup();
}
END_TEST

int main(void)
{
  setenv("PMCP_TEST_STORE", "pg", 1);
  Suite *su = suite_create("pg-store");
  TCase *tc = tcase_create("pg");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, rls_isolation_as_service_role);
  tcase_add_test(tc, migrations_race);
  tcase_add_test(tc, schema_refusals);
  tcase_add_test(tc, lost_connection);
  tcase_add_test(tc, points_write_fails_midway);
  tcase_add_test(tc, server_restart);
  tcase_add_test(tc, live_counts);
  suite_add_tcase(su, tc);
  return st_run_suite(su);
}
