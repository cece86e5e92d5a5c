/* SPDX-License-Identifier: MIT */
/* Upgrading a PostgreSQL store made before metric points moved to
 * metric_chunks (schema version 9): tests/data/pg-upgrade/store.sql is a
 * store made by the code of that time (tests/pg/upgrade/make-fixture.sh)
 * and expected.txt what that code read from it. After the upgrade, made by
 * several processes at once:
 *  - every read (points in pages, summaries on both axes) is what the old
 *    code returned;
 *  - the chunks and blocks are, bit for bit, those today's code writes for
 *    the same points, and appending to a converted series works;
 *  - the schema is the schema of a store created today (columns, keys,
 *    indexes, row-level security, grants, partitions, views);
 *  - running the conversion again changes nothing;
 * and a store error never shows PostgreSQL's names of relations. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "../unit/store-test-util.h"
#include "upgrade_reads.h"

int pmcp__pg_schema_target(void); /* store/pg.h: the version a store migrates to */

static char *slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot read %s", path);
  char *p = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n + 65536 + 1 > cap) {
      cap = cap ? cap * 2 : 1 << 20;
      p = realloc(p, cap);
      ck_assert_ptr_nonnull(p);
    }
    size_t got = fread(p + n, 1, 65536, f);
    n += got;
    if (got == 0)
      break;
  }
  fclose(f);
  p[n] = '\0';
  if (len)
    *len = n;
  return p;
}

static char *data_path(char *out, size_t n, const char *name)
{
  const char *dir = getenv("PMCP_UPGRADE_DATA");
  ck_assert_msg(dir && *dir, "PMCP_UPGRADE_DATA is not set");
  snprintf(out, n, "%s/%s", dir, name);
  return out;
}

static PGconn *owner_conn(void)
{
  PGconn *c = PQconnectdb(getenv("PROBE_TEST_PG_URL"));
  ck_assert_msg(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
  PQclear(PQexec(c, "SET client_min_messages = warning"));
  return c;
}

static void exec_ok(PGconn *c, const char *sql)
{
  PGresult *r = PQexec(c, sql);
  ExecStatusType es = PQresultStatus(r);
  ck_assert_msg(es == PGRES_COMMAND_OK || es == PGRES_TUPLES_OK || es == PGRES_EMPTY_QUERY,
                "%.200s: %s", sql,
                PQresultErrorMessage(r));
  PQclear(r);
}

/* The first value of @p sql (malloc'd; NULL for no row or NULL). */
static char *value(PGconn *c, const char *sql)
{
  PGresult *r = PQexec(c, sql);
  ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%.300s: %s", sql,
                PQresultErrorMessage(r));
  char *v = PQntuples(r) && !PQgetisnull(r, 0, 0) ? strdup(PQgetvalue(r, 0, 0)) : NULL;
  PQclear(r);
  return v;
}

static void expect(PGconn *c, const char *sql, const char *want)
{
  char *v = value(c, sql);
  ck_assert_msg(v && strcmp(v, want) == 0, "%s -> %s, wanted %s", sql, v ? v : "(null)", want);
  free(v);
}

/* Every occurrence of @p from in @p s replaced by @p to (malloc'd). */
static char *replace_all(const char *s, const char *from, const char *to)
{
  size_t nf = strlen(from), nt = strlen(to), count = 0;
  for (const char *p = s; (p = strstr(p, from)); p += nf)
    count++;
  char *out = malloc(strlen(s) + count * (nt > nf ? nt - nf : 0) + 1);
  ck_assert_ptr_nonnull(out);
  char *o = out;
  for (const char *p = s;;) {
    const char *q = strstr(p, from);
    if (!q) {
      strcpy(o, p);
      break;
    }
    memcpy(o, p, (size_t)(q - p));
    o += q - p;
    memcpy(o, to, nt);
    o += nt;
    p = q + nf;
  }
  return out;
}

/* Runs a plain pg_dump script: SQL, and COPY ... FROM stdin; blocks whose
 * rows follow up to a line "\\." (COPY keeps every float's bits; INSERTs
 * would read an unquoted -0 as the integer 0). */
static void run_dump(PGconn *c, char *text)
{
  char *p = text;
  while (*p) {
    char *copy = strstr(p, "\nCOPY ");
    char *sql_end = copy ? copy + 1 : p + strlen(p);
    char keep = *sql_end;
    *sql_end = '\0';
    exec_ok(c, p);
    *sql_end = keep;
    if (!copy)
      break;
    char *stmt = copy + 1, *eol = strchr(stmt, '\n');
    ck_assert_ptr_nonnull(eol);
    *eol = '\0';
    PGresult *r = PQexec(c, stmt);
    ck_assert_msg(PQresultStatus(r) == PGRES_COPY_IN, "%s: %s", stmt, PQresultErrorMessage(r));
    PQclear(r);
    char *rows = eol + 1, *end = strstr(rows, "\n\\.\n");
    ck_assert_msg(rows[0] == '\\' || end, "no end of the rows of %s", stmt);
    if (strncmp(rows, "\\.\n", 3) == 0) {
      end = rows - 1; /* no rows */
    }
    size_t n = (size_t)(end - rows) + 1;
    ck_assert_int_eq(PQputCopyData(c, rows, (int)n), 1);
    ck_assert_int_eq(PQputCopyEnd(c, NULL), 1);
    while ((r = PQgetResult(c))) {
      ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s: %s", stmt,
                    PQresultErrorMessage(r));
      PQclear(r);
    }
    p = end + 4;
  }
}

/* A new schema (st_schema, st_path) holding the old store of the fixture. */
static void load_fixture(void)
{
  st_fresh_path();
  char sql[200], path[1024];
  snprintf(sql, sizeof sql, "DROP SCHEMA %s", st_schema);
  st_pg_exec(sql);
  char *dump = slurp(data_path(path, sizeof path, "store.sql"), NULL);
  char *mine = replace_all(dump, "pmcp_upgrade_src", st_schema);
  free(dump);
  PGconn *c = owner_conn();
  run_dump(c, mine);
  free(mine);
  /* the old layout indeed: points in the blocks, no chunks, version 6 */
  snprintf(sql, sizeof sql, "SET search_path = %s", st_schema);
  exec_ok(c, sql);
  expect(c, "SELECT value FROM meta WHERE key='schema_version'", "6");
  expect(c, "SELECT to_regclass('metric_chunks') IS NULL", "t");
  expect(c, "SELECT count(*) FROM pg_attribute WHERE attrelid='metric_blocks'::regclass"
            " AND attname IN ('steps', 'times', 'vals') AND NOT attisdropped", "3");
  PQfinish(c);
}

/* Opens the store from @p n processes at once; each must succeed. */
static void open_racing(int n)
{
  pid_t kids[8];
  for (int i = 0; i < n; i++) {
    kids[i] = fork();
    ck_assert_int_ge(kids[i], 0);
    if (kids[i] == 0) {
      pmcp_store *s = NULL;
      int rc = pmcp_store_open(&s, st_path, 0);
      pmcp_tenant t;
      if (rc == 0)
        rc = pmcp_store_tenant(s, "alpha", 0, &t);
      if (rc)
        fprintf(stderr, "opener %d: %s\n", i, pmcp_store_errmsg(s));
      pmcp_store_free(s);
      _exit(rc ? 1 : 0);
    }
  }
  for (int i = 0; i < n; i++) {
    int status = 0;
    ck_assert_int_eq(waitpid(kids[i], &status, 0), kids[i]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "opener %d failed", i);
  }
}

/* upg_reads() of the store at st_path, as text (malloc'd). */
static char *reads_now(void)
{
  pmcp_store *s = NULL;
  ST_OK(s, pmcp_store_open(&s, st_path, 0));
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  ck_assert_ptr_nonnull(f);
  int rc = upg_reads(f, s);
  fclose(f);
  ck_assert_msg(rc == 0, "reads: %d %s", rc, pmcp_store_errmsg(s));
  pmcp_store_free(s);
  return text;
}

/* Fails at the first line where @p got and @p want differ. */
static void same_text(const char *got, const char *want, const char *what)
{
  int line = 1;
  const char *g = got, *w = want, *g0 = got, *w0 = want;
  for (; *g && *w && *g == *w; g++, w++)
    if (*g == '\n') {
      line++;
      g0 = g + 1;
      w0 = w + 1;
    }
  if (!*g && !*w)
    return;
  ck_abort_msg("%s differs at line %d:\n got:  %.*s\n want: %.*s", what, line,
               (int)strcspn(g0, "\n"), g0, (int)strcspn(w0, "\n"), w0);
}

START_TEST(reads_as_before)
{
  load_fixture();
  open_racing(4);
  PGconn *c = owner_conn();
  char sql[200];
  snprintf(sql, sizeof sql, "SET search_path = %s", st_schema);
  exec_ok(c, sql);
  snprintf(sql, sizeof sql, "%d", pmcp__pg_schema_target());
  expect(c, "SELECT value FROM meta WHERE key='schema_version'", sql);
  expect(c, "SELECT count(*) FROM pg_attribute WHERE attrelid='metric_blocks'::regclass"
            " AND attname IN ('steps', 'times', 'vals') AND NOT attisdropped", "0");
  expect(c, "SELECT to_regproc('probe_fsum_v9') IS NULL", "t");
  PQfinish(c);
  char path[1024];
  char *want = slurp(data_path(path, sizeof path, "expected.txt"), NULL);
  char *got = reads_now();
  same_text(got, want, "reads after the upgrade");
  free(got);
  free(want);
  st_cleanup();
}
END_TEST

/* Every chunk and block of a store as text, in a stable order, with the
 * points' identity (tenant, run, series) instead of row ids. Row-level
 * security applies to the owner: tenant by tenant. */
static char *layout(PGconn *c, const char *schema)
{
  char sql[3000];
  snprintf(sql, sizeof sql, "SET search_path = %s", schema);
  exec_ok(c, sql);
  char *all = strdup("");
  static const char *const tenants[] = {"alpha", "beta"};
  for (int i = 0; i < 2; i++) {
    snprintf(sql, sizeof sql,
             "SELECT set_config('probe.tenant', (SELECT id FROM tenants WHERE name='%s')::text,"
             " false)", tenants[i]);
    free(value(c, sql));
    char *part = value(c,
        "SELECT string_agg(format('%s %s %s %s %s: %s', r.slug, s.key, s.labels, x.seq, x.k,"
        " x.row), E'\\n' ORDER BY r.slug, s.key, s.labels, x.seq, x.k) FROM ("
        " SELECT series_id, seq, -1 AS k, concat_ws(' ', n, nonfinite, step_min, step_max,"
        "  time_min, time_max, vmin, vmax, vsum, first, last, step_first, step_last,"
        "  step_at_min, step_at_max) AS row FROM metric_blocks"
        " UNION ALL SELECT series_id, seq, k, concat_ws(' ', n, untimed, nonfinite, step_min,"
        "  step_max, time_min, time_max, coalesce(vmin::text, '-'), coalesce(vmax::text, '-'),"
        "  vsum, first, last, step_first, step_last, step_at_min, step_at_max, steps, times,"
        "  vals) FROM metric_chunks) x"
        " JOIN series s ON s.id=x.series_id JOIN runs r ON r.id=s.run_id");
    size_t n = strlen(all) + (part ? strlen(part) : 0) + 20;
    char *cat = malloc(n);
    snprintf(cat, n, "%s%s:\n%s\n", all, tenants[i], part ? part : "");
    free(all);
    free(part);
    all = cat;
  }
  return all;
}

/* Point @p i of those the test appends to every series. */
static pmcp_point extra_point(size_t i)
{
  pmcp_point p = {100000 + (int64_t)i, i % 2 ? 0 : 1800000000000 + (int64_t)i,
                  (double)i / 4 - 7};
  return p;
}

static void append(const char *url)
{
  pmcp_store *s = NULL;
  ST_OK(s, pmcp_store_open(&s, url, 0));
  for (size_t k = 0; k < UPG_N_SERIES; k++) {
    pmcp_tenant t;
    int64_t id;
    ST_OK(s, upg_series_id(s, &upg_all[k], 0, &t, &id));
    pmcp_point p[300];
    for (size_t i = 0; i < 300; i++)
      p[i] = extra_point(i);
    ST_OK(s, pmcp_store_log(s, t, id, p, 1 + k * 37 % 300));
  }
  pmcp_store_free(s);
}

START_TEST(chunks_as_written_today)
{
  /* the same points written by today's code into a new store */
  st_fresh_path();
  char fresh_schema[64], fresh_path[1200];
  snprintf(fresh_schema, sizeof fresh_schema, "%s", st_schema);
  snprintf(fresh_path, sizeof fresh_path, "%s", st_path);
  pmcp_store *s = NULL;
  ST_OK(s, pmcp_store_open(&s, st_path, PMCP_STORE_CREATE));
  ST_OK(s, upg_fill(s));
  pmcp_store_free(s);
  st_schema[0] = '\0'; /* not dropped by the next st_fresh_path() */

  load_fixture();
  open_racing(2);
  PGconn *c = owner_conn();
  char *a = layout(c, st_schema), *b = layout(c, fresh_schema);
  ck_assert_msg(strlen(a) > 100000, "too few chunks: %zu bytes", strlen(a));
  same_text(a, b, "chunks and blocks (upgraded, then written today)");
  free(a);
  free(b);
  /* appending to converted series: the partial tail blocks are reloaded
   * from their chunks and rewritten */
  append(st_path);
  append(fresh_path);
  a = layout(c, st_schema);
  b = layout(c, fresh_schema);
  same_text(a, b, "chunks and blocks after appending");
  free(a);
  free(b);
  /* the conversion again (a store whose version was set back): no change */
  char sql[200];
  snprintf(sql, sizeof sql, "SET search_path = %s", st_schema);
  exec_ok(c, sql);
  /* the version before metric_chunks (8; later versions came after it) */
  exec_ok(c, "UPDATE meta SET value='8' WHERE key='schema_version'");
  snprintf(sql, sizeof sql, "SET search_path = %s", st_schema);
  a = layout(c, st_schema);
  open_racing(2);
  b = layout(c, st_schema);
  same_text(b, a, "chunks and blocks after converting twice");
  free(a);
  free(b);
  exec_ok(c, sql);
  snprintf(sql, sizeof sql, "%d", pmcp__pg_schema_target());
  expect(c, "SELECT value FROM meta WHERE key='schema_version'", sql);
  PQfinish(c);
  snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS %s, %s_sql CASCADE", fresh_schema,
           fresh_schema);
  st_pg_exec(sql);
  st_cleanup();
}
END_TEST

/* A description of schema @p s and its query views: every relation with
 * its columns, constraints, indexes, partition bounds, options, row-level
 * security, policies, triggers and grants; the functions; the views'
 * definitions. The schema's name is replaced by "S". */
static char *schema_text(PGconn *c, const char *s)
{
  static const char sql[] =
      "WITH ns AS (SELECT oid, nspname FROM pg_namespace WHERE nspname IN ($1::text, $1::text || '_sql')),"
      " rel AS (SELECT c.oid, n.nspname || '.' || c.relname AS name, c.relkind,"
      "  c.relrowsecurity, c.relforcerowsecurity, c.reloptions, c.relacl,"
      "  pg_get_expr(c.relpartbound, c.oid) AS bound"
      "  FROM pg_class c JOIN ns n ON n.oid=c.relnamespace WHERE c.relkind IN ('r','p','v','S'))"
      " SELECT replace(string_agg(line, E'\\n' ORDER BY line), $1, 'S') FROM ("
      " SELECT format('rel %s %s rls=%s/%s opt=%s acl=%s bound=%s', name, relkind,"
      "  relrowsecurity, relforcerowsecurity, reloptions, relacl, bound) AS line FROM rel"
      " UNION ALL SELECT format('col %s %s %s %s notnull=%s default=%s identity=%s gen=%s',"
      "  r.name, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,"
      "  pg_get_expr(d.adbin, d.adrelid), a.attidentity, a.attgenerated)"
      "  FROM rel r JOIN pg_attribute a ON a.attrelid=r.oid AND a.attnum > 0"
      "  AND NOT a.attisdropped LEFT JOIN pg_attrdef d ON d.adrelid=r.oid AND d.adnum=a.attnum"
      " UNION ALL SELECT format('con %s %s %s', r.name, k.conname, pg_get_constraintdef(k.oid))"
      "  FROM rel r JOIN pg_constraint k ON k.conrelid=r.oid"
      " UNION ALL SELECT format('idx %s', pg_get_indexdef(i.indexrelid))"
      "  FROM rel r JOIN pg_index i ON i.indrelid=r.oid"
      " UNION ALL SELECT format('pol %s %s %s %s', r.name, p.polname,"
      "  pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid))"
      "  FROM rel r JOIN pg_policy p ON p.polrelid=r.oid"
      " UNION ALL SELECT format('trg %s', pg_get_triggerdef(t.oid))"
      "  FROM rel r JOIN pg_trigger t ON t.tgrelid=r.oid WHERE NOT t.tgisinternal"
      " UNION ALL SELECT format('view %s %s', r.name, pg_get_viewdef(r.oid))"
      "  FROM rel r WHERE r.relkind='v'"
      " UNION ALL SELECT format('fn %s %s acl=%s', p.proname, pg_get_functiondef(p.oid),"
      "  p.proacl) FROM pg_proc p JOIN ns n ON n.oid=p.pronamespace"
      " UNION ALL SELECT format('nsp %s acl=%s', nspname, (SELECT nspacl FROM pg_namespace x"
      "  WHERE x.oid=ns.oid)) FROM ns"
      " UNION ALL SELECT format('defacl %s %s', defaclobjtype, defaclacl) FROM pg_default_acl"
      "  WHERE defaclnamespace IN (SELECT oid FROM ns)) x";
  const char *params[1] = {s};
  PGresult *r = PQexecParams(c, sql, 1, NULL, params, NULL, NULL, 0);
  ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s", PQresultErrorMessage(r));
  char *out = strdup(PQgetvalue(r, 0, 0));
  PQclear(r);
  return out;
}

START_TEST(schema_as_created_today)
{
  pmcp_store *s = st_open_new(NULL);
  pmcp_store_free(s);
  char fresh_schema[64];
  snprintf(fresh_schema, sizeof fresh_schema, "%s", st_schema);
  st_schema[0] = '\0';
  load_fixture();
  open_racing(1);
  PGconn *c = owner_conn();
  char *a = schema_text(c, st_schema), *b = schema_text(c, fresh_schema);
  ck_assert_msg(strstr(a, "metric_chunks_p7") && strstr(a, "toast_tuple_target=128"),
                "no chunk partitions: %.300s", a);
  same_text(a, b, "the upgraded schema (against a new store's)");
  free(a);
  free(b);
  PQfinish(c);
  char sql[200];
  snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS %s, %s_sql CASCADE", fresh_schema,
           fresh_schema);
  st_pg_exec(sql);
  st_cleanup();
}
END_TEST

/* A store whose tables are not what this program expects (here: the
 * chunks dropped behind its back) fails with a message naming neither
 * the table nor PostgreSQL's wording. */
START_TEST(errors_name_no_relations)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "r";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  pmcp_series_spec spec = {PMCP_SERIES_SPEC_VERSION, "loss", NULL, 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
  int64_t id;
  ST_OK(s, pmcp_store_series(s, t, "r", &spec, &id));
  pmcp_point p[3] = {{1, 0, 1.0}, {2, 0, 2.0}, {3, 0, 3.0}};
  ST_OK(s, pmcp_store_log(s, t, id, p, 3));
  pmcp_store_free(s);
  char sql[200];
  snprintf(sql, sizeof sql, "DROP TABLE %s.metric_chunks CASCADE", st_schema);
  st_pg_exec(sql);
  ST_OK(s, pmcp_store_open(&s, st_path, 0));
  pmcp_bucket b[4];
  size_t n = 0;
  int64_t next = 0;
  pmcp_point out[4];
  int rc = pmcp_store_summary(s, t, id, INT64_MIN, INT64_MAX, 4, b, &n);
  for (int i = 0; i < 3; i++) {
    const char *m = pmcp_store_errmsg(s);
    ck_assert_int_eq(rc, PMCP_ESTORE);
    ck_assert_msg(!strstr(m, "metric_chunks") && !strstr(m, "relation") &&
                      !strstr(m, "does not exist"),
                  "call %d: %s", i, m);
    ck_assert_msg(strstr(m, "schema") != NULL, "call %d: %s", i, m);
    if (i == 0)
      rc = pmcp_store_points(s, t, id, INT64_MIN, INT64_MAX, 0, out, 4, &n, &next);
    else
      rc = pmcp_store_log(s, t, id, p, 3);
  }
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

int main(void)
{
  setenv("PMCP_TEST_STORE", "pg", 1);
  Suite *su = suite_create("pg-upgrade");
  TCase *tc = tcase_create("upgrade");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, reads_as_before);
  tcase_add_test(tc, chunks_as_written_today);
  tcase_add_test(tc, schema_as_created_today);
  tcase_add_test(tc, errors_name_no_relations);
  suite_add_tcase(su, tc);
  return st_run_suite(su);
}
