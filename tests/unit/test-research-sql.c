/* SPDX-License-Identifier: MIT */
/* query_sql's guard battery: a store with two tenants; the tool registered
 * for one of them must answer SELECTs over its own rows exactly and refuse,
 * with a clear message, every attempt to write, attach, change a pragma,
 * load an extension, read another table, or reach the other tenant. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "probemcp/probemcp.h"
#include "probemcp/research.h"
#include "probemcp/tokens.h"
#include "store-test-util.h"
#include "tool-call-util.h"

static int64_t LOSS_ID, ACC_ID, SECRET_ID;
#define N_ACC 40000

static cJSON *call_args(const char *args, int *is_error)
{
  return tc_call("query_sql", args, is_error);
}

static cJSON *sql(const char *q, int *is_error)
{
  cJSON *a = cJSON_CreateObject();
  cJSON_AddStringToObject(a, "sql", q);
  char *t = cJSON_PrintUnformatted(a);
  cJSON_Delete(a);
  cJSON *o = call_args(t, is_error);
  free(t);
  return o;
}

static cJSON *ok(const char *q)
{
  int e = 0;
  cJSON *o = sql(q, &e);
  char *t = cJSON_PrintUnformatted(o);
  ck_assert_msg(!e, "%s failed: %s", q, t);
  cJSON_free(t);
  return o;
}

static void refused(const char *q, const char *needle)
{
  int e = 0;
  cJSON *o = sql(q, &e);
  char *t = cJSON_PrintUnformatted(o);
  ck_assert_msg(e, "%s was not refused: %s", q, t);
  ck_assert_msg(strstr(t, needle) != NULL, "%s: %s lacks '%s'", q, t, needle);
  /* never the other tenant's data, never a path */
  ck_assert_msg(!strstr(t, "secret-run") && !strstr(t, st_dir), "%s leaks: %s", q, t);
  cJSON_free(t);
  cJSON_Delete(o);
}

static void fill(void)
{
  pmcp_tenant t, t2;
  pmcp_store *s = st_open_new(&t);
  ST_OK(s, pmcp_store_tenant(s, "other", PMCP_STORE_CREATE, &t2));
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  for (int i = 0; i < 30; i++) {
    char id[16];
    snprintf(id, sizeof id, "run%02d", i);
    r.id = id;
    r.status = i % 3 ? "finished" : "failed";
    ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  }
  r.id = "secret-run";
  r.status = "running";
  ST_OK(s, pmcp_store_run_create(s, t2, &r, NULL));
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, "loss", NULL, 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
  int64_t sid;
  ST_OK(s, pmcp_store_series(s, t, "run01", &sp, &sid));
  LOSS_ID = sid;
  pmcp_point p[3] = {{0, 0, 0.1}, {1, 0, 1.0 / 3.0}, {2, 0, 12345.678901234}};
  ST_OK(s, pmcp_store_log(s, t, sid, p, 3));
  ST_OK(s, pmcp_store_series(s, t2, "secret-run", &sp, &sid));
  SECRET_ID = sid;
  ST_OK(s, pmcp_store_log(s, t2, sid, p, 3));
  /* several blocks, with NaNs (every 1000th point) */
  pmcp_series_spec acc = {PMCP_SERIES_SPEC_VERSION, "acc", NULL, 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
  ST_OK(s, pmcp_store_series(s, t, "run02", &acc, &ACC_ID));
  pmcp_point *pa = malloc(N_ACC * sizeof *pa);
  for (int i = 0; i < N_ACC; i++)
    pa[i] = (pmcp_point){100 + i, 1700000000000 + i, i % 1000 == 5 ? NAN : i * 0.25};
  ST_OK(s, pmcp_store_log(s, t, ACC_ID, pa, N_ACC));
  free(pa);
  pmcp_store_free(s);
}

static void setup(void)
{
  fill();
  tc_serve_research(st_path);
}

static void teardown(void)
{
  tc_server_free();
  st_cleanup();
}

START_TEST(lists_tables_with_types)
{
  int e = 0;
  cJSON *o = call_args("{}", &e);
  ck_assert(!e);
  cJSON *tables = cJSON_GetObjectItem(o, "tables");
  ck_assert_int_ge(cJSON_GetArraySize(tables), 3);
  cJSON *t;
  int runs = 0;
  cJSON_ArrayForEach(t, tables)
  {
    const char *n = cJSON_GetObjectItem(t, "name")->valuestring;
    ck_assert(strcmp(n, "secrets") && strcmp(n, "meta") && strcmp(n, "tenants"));
    if (!strcmp(n, "runs")) {
      runs = 1;
      cJSON *cols = cJSON_GetObjectItem(t, "columns");
      ck_assert_str_eq(cJSON_GetObjectItem(cols, "id")->valuestring,
                       st_is_pg() ? "BIGINT" : "INTEGER");
      ck_assert_str_eq(cJSON_GetObjectItem(cols, "status")->valuestring, "TEXT");
      ck_assert_ptr_null(cJSON_GetObjectItem(cols, "tenant_id"));
    }
  }
  ck_assert(runs || cJSON_GetObjectItem(o, "next_cursor"));
  cJSON_Delete(o);
  /* the resource carries the same listing */
  cJSON *r = tc_rpc("resources/read", "{\"uri\":\"probe://sql/schema\"}");
  const char *txt = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(
      cJSON_GetObjectItem(r, "result"), "contents"), 0), "text")->valuestring;
  ck_assert_ptr_nonnull(strstr(txt, "\"runs\""));
  cJSON_Delete(r);
}
END_TEST

START_TEST(selects_exact_rows_of_own_tenant)
{
  cJSON *o = ok("SELECT count(*) AS n FROM runs");
  ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "rows"), 0), 0)
                       ->valueint, 30);
  ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "columns"), 0)->valuestring, "n");
  cJSON_Delete(o);
  o = ok("SELECT count(*) FROM runs WHERE slug LIKE 'secret%' OR status='running'");
  ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "rows"), 0), 0)
                       ->valueint, 0);
  cJSON_Delete(o);
  /* exact reals, the tenant's series only */
  o = ok("SELECT s.last, s.vsum, s.count FROM series s JOIN runs r ON r.id = s.run_id"
         " WHERE s.key = 'loss'");
  cJSON *rows = cJSON_GetObjectItem(o, "rows");
  ck_assert_int_eq(cJSON_GetArraySize(rows), 1);
  cJSON *row = cJSON_GetArrayItem(rows, 0);
  ck_assert(cJSON_GetArrayItem(row, 0)->valuedouble == 12345.678901234);
  ck_assert(cJSON_GetArrayItem(row, 1)->valuedouble == 0.1 + 1.0 / 3.0 + 12345.678901234);
  cJSON_Delete(o);
  o = ok("SELECT count(*), sum(n) FROM metric_blocks b JOIN series s ON s.id = b.series_id"
         " WHERE s.key = 'loss'");
  ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "rows"), 0), 1)
                       ->valueint, 3);
  cJSON_Delete(o);
  /* (a blob literal in each dialect) */
  o = ok(st_is_pg() ? "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 10) "
                      "SELECT sum(x), '\\x00ff'::bytea, NULL, 'é' FROM c  -- a trailing comment"
                    : "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 10) "
                      "SELECT sum(x), x'00ff', NULL, 'é' FROM c  -- a trailing comment");
  row = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "rows"), 0);
  ck_assert_int_eq(cJSON_GetArrayItem(row, 0)->valueint, 55);
  ck_assert_str_eq(cJSON_GetArrayItem(row, 1)->valuestring, "x'00ff'");
  ck_assert(cJSON_IsNull(cJSON_GetArrayItem(row, 2)));
  cJSON_Delete(o);
}
END_TEST

START_TEST(pages_rows_with_cursor)
{
  char args[1024];
  char *cur = NULL;
  int seen = 0, pages = 0;
  do {
    snprintf(args, sizeof args,
             "{\"sql\":\"SELECT slug, status, created, created * 7, name, 'some padding text' FROM runs ORDER BY slug\","
             "\"token_budget\":600%s%s%s}", cur ? ",\"cursor\":\"" : "", cur ? cur : "",
             cur ? "\"" : "");
    free(cur);
    cur = NULL;
    int e = 0;
    cJSON *o = call_args(args, &e);
    ck_assert(!e);
    pages++;
    cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(o, "rows"))
    {
      char want[16];
      snprintf(want, sizeof want, "run%02d", seen++);
      ck_assert_str_eq(cJSON_GetArrayItem(r, 0)->valuestring, want);
    }
    cJSON *nc = cJSON_GetObjectItem(o, "next_cursor");
    if (nc)
      cur = strdup(nc->valuestring);
    cJSON_Delete(o);
  } while (cur && pages < 30);
  ck_assert_int_eq(seen, 30);
  ck_assert_int_gt(pages, 1);
}
END_TEST

START_TEST(refuses_writes_and_escapes)
{
  static const struct {
    const char *sql, *needle;
  } bad[] = {
    {"DELETE FROM runs", "not allowed"},
    {"DELETE FROM main.runs", "not readable"},
    {"UPDATE runs SET name='x'", "not allowed"},
    {"INSERT INTO main.runs(slug) VALUES('x')", "not readable"},
    {"INSERT INTO runs SELECT * FROM runs", "not allowed"},
    {"REPLACE INTO main.tags VALUES(1,'run',1,'x')", "not readable"},
    {"CREATE TABLE t(x)", "not allowed"},
    {"CREATE TEMP TABLE t(x)", "not allowed"},
    {"CREATE TEMP VIEW v AS SELECT * FROM main.runs", "not allowed"},
    {"DROP VIEW runs", "not allowed"},
    {"DROP TABLE main.runs", "not readable"},
    {"ALTER TABLE main.runs ADD COLUMN x", "not readable"},
    {"CREATE INDEX i ON runs(slug)", "may not be indexed"},
    {"CREATE INDEX main.i ON runs(slug)", "not readable"},
    {"CREATE TRIGGER t AFTER INSERT ON runs BEGIN SELECT 1; END", "trigger"},
    {"CREATE TRIGGER main.t AFTER INSERT ON main.tags BEGIN SELECT 1; END", "not readable"},
    {"CREATE VIRTUAL TABLE v USING fts5(x)", "not allowed"},
    {"ATTACH DATABASE ':memory:' AS m", "not allowed"},
    {"ATTACH DATABASE '/tmp/evil.db' AS m", "not allowed"},
    {"DETACH DATABASE main", "not allowed"},
    {"PRAGMA writable_schema=ON", "not allowed"},
    {"PRAGMA query_only=OFF", "not allowed"},
    {"PRAGMA table_info(runs)", "not allowed"},
    {"PRAGMA main.journal_mode=DELETE", "not allowed"},
    {"SELECT * FROM pragma_table_info('runs')", "not allowed"},
    {"BEGIN", "not allowed"},
    {"SAVEPOINT a", "not allowed"},
    {"VACUUM", "read-only"},
    {"ANALYZE", "not allowed"},
    {"REINDEX", "not allowed"},
    {"SELECT load_extension('/tmp/x.so')", "load_extension"},
    {"SELECT fts3_tokenizer('simple')", "not allowed"},
    {"SELECT * FROM secrets", "not readable"},
    {"SELECT * FROM main.secrets", "not readable"},
    {"SELECT * FROM meta", "not readable"},
    {"SELECT * FROM tenants", "not readable"},
    {"SELECT * FROM main.runs", "not readable"},
    {"SELECT name FROM runs UNION SELECT name FROM main.runs", "not readable"},
    {"SELECT (SELECT group_concat(slug) FROM main.runs)", "not readable"},
    {"SELECT * FROM runs WHERE id IN (SELECT id FROM main.runs WHERE tenant_id=2)",
     "not readable"},
    {"WITH x AS (SELECT * FROM main.runs) SELECT * FROM x", "not readable"},
    /* a CTE that borrows a readable table's name reaches nothing more */
    {"WITH runs AS (SELECT * FROM main.secrets) SELECT * FROM runs", "not readable"},
    {"WITH \"runs\" AS (SELECT * FROM main.secrets) SELECT * FROM \"runs\"", "not readable"},
    {"WITH runs AS (SELECT * FROM secrets) SELECT * FROM runs", "not readable"},
    {"WITH runs AS (SELECT * FROM main.runs) SELECT slug FROM runs", "not readable"},
    {"WITH tags AS (SELECT * FROM tenants) SELECT * FROM tags", "not readable"},
    {"WITH notes AS (SELECT * FROM sqlite_master) SELECT * FROM notes", "not readable"},
    {"WITH a AS (SELECT 1), runs AS (SELECT value FROM main.secrets) SELECT * FROM runs",
     "not readable"},
    {"SELECT * FROM (SELECT * FROM main.secrets) AS runs", "not readable"},
    {"SELECT * FROM temp.secrets", "not readable"},
    {"SELECT * FROM pragma_database_list", "not allowed"},
    {"SELECT * FROM sqlite_master", "not readable"},
    {"SELECT sql FROM sqlite_schema", "not readable"},
    {"SELECT * FROM sqlite_temp_master", "not readable"},
    {"SELECT * FROM temp.sqlite_master", "not readable"},
    {"SELECT * FROM search_fts", "not readable"},
    {"SELECT * FROM metric_sets", "not readable"},
    {"SELECT data FROM main.metric_blocks", "not readable"},
    {"SELECT 1; DELETE FROM runs", "exactly one statement"},
    {"SELECT 1; SELECT 2", "exactly one statement"},
    {"SELECT length(randomblob(100000000))", "larger than the limit"},
    {"SELECT zeroblob(50000000)", "larger than the limit"},
    {"SELECT hex(zeroblob(600000))", "larger than the limit"},
    {"SELECT replace(hex(zeroblob(400000)), '00', 'xyz')", "larger than the limit"},
    {"SELEKT 1", "SQL error"},
    {"", "no statement"},
    {"-- only a comment", "no statement"},
  };
  for (size_t i = 0; !st_is_pg() && i < sizeof bad / sizeof bad[0]; i++) {
    if (!*bad[i].sql) {
      int e = 0;
      cJSON *o = call_args("{\"sql\":\"\"}", &e);
      ck_assert(e);
      cJSON_Delete(o);
      continue;
    }
    refused(bad[i].sql, bad[i].needle);
  }
  /* The same battery in PostgreSQL's terms: the connection is READ ONLY
   * and logged in as a role that may read the tenant's views only. */
  static const struct {
    const char *sql, *needle;
  } pg_bad[] = {
    {"DELETE FROM runs", "not allowed"},
    {"UPDATE runs SET name='x'", "not allowed"},
    {"INSERT INTO runs SELECT * FROM runs", "not allowed"},
    {"CREATE TABLE t(x int)", "not allowed"},
    {"CREATE TEMP TABLE t(x int)", "not allowed"},
    {"CREATE VIEW v AS SELECT 1", "not allowed"},
    {"DROP VIEW runs", "not allowed"},
    {"ALTER VIEW runs RENAME TO r2", "not allowed"},
    {"CREATE INDEX i ON runs(slug)", "not allowed"},
    {"CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'", "not allowed"},
    {"SET ROLE probe_owner", "not allowed"},
    {"SELECT set_config('role', 'probe_service', false)", "not allowed"},
    {"SELECT pg_read_file('/etc/passwd')", "not allowed"},
    {"SELECT lo_import('/etc/passwd')", "not allowed"},
    {"COPY (SELECT 1) TO '/tmp/pmcp-evil'", "not allowed"},
    {"BEGIN", "not allowed"},
    {"SAVEPOINT a", "not allowed"},
    {"VACUUM", "not allowed"},
    /* refused before the server sees them: a catalog-wide ANALYZE races
     * with other sessions' DDL and then says something else */
    {"ANALYZE", "not ANALYZE"},
    {"analyze runs", "not analyze"},
    {"/* a /* nested */ comment */ ANALYZE", "not ANALYZE"},
    {"-- a comment\n  ((VACUUM))", "not VACUUM"},
    {";SHOW data_directory", "not SHOW"},
    {"RESET ALL", "not RESET"},
    {"LISTEN probe", "not LISTEN"},
    {"DISCARD ALL", "not DISCARD"},
    {"SELECT * FROM secrets", "not readable"},
    {"SELECT * FROM meta", "not readable"},
    {"SELECT * FROM tenants", "not readable"},
    {"SELECT * FROM search_docs", "not readable"},
    {"SELECT * FROM metric_sets", "not readable"},
    {"SELECT 1; DELETE FROM runs", "exactly one statement"},
    {"SELECT 1; SELECT 2", "exactly one statement"},
    {"SELECT repeat('x', 2000000)", "larger than the limit"},
    {"SELEKT 1", "SQL error"},
    {"-- only a comment", "no statement"},
  };
  for (size_t i = 0; st_is_pg() && i < sizeof pg_bad / sizeof pg_bad[0]; i++)
    refused(pg_bad[i].sql, pg_bad[i].needle);
  if (st_is_pg()) {
    /* the tables themselves, by their schema's name */
    char q[200];
    snprintf(q, sizeof q, "SELECT * FROM %s.runs", st_schema);
    refused(q, "not readable");
    snprintf(q, sizeof q, "SELECT value FROM %s.secrets", st_schema);
    refused(q, "not readable");
    /* naming another tenant (without its token) shows nothing of it */
    cJSON *o = ok("SELECT slug FROM runs WHERE set_config('probe.qtenant', '2', true) <> ''"
                  " AND set_config('probe.tenant', '2', true) <> ''");
    char *t = cJSON_PrintUnformatted(o);
    ck_assert_msg(!strstr(t, "secret-run"), "leak: %s", t);
    cJSON_free(t);
    cJSON_Delete(o);
  }
  /* the store is untouched and the views still answer */
  cJSON *o = ok("SELECT count(*) FROM runs");
  ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "rows"), 0), 0)
                       ->valueint, 30);
  cJSON_Delete(o);
}
END_TEST

static cJSON *row0(cJSON *o)
{
  return cJSON_GetArrayItem(cJSON_GetObjectItem(o, "rows"), 0);
}

static double cell(cJSON *o, int c)
{
  return cJSON_GetArrayItem(row0(o), c)->valuedouble;
}

START_TEST(metric_points_are_rows)
{
  /* every point of the tenant, none of the other's; NaN is NULL */
  cJSON *o = ok("SELECT count(*), count(value), sum(value), min(step), max(step), "
                "count(DISTINCT series_id) FROM metric_points");
  ck_assert_int_eq((int64_t)cell(o, 0), N_ACC + 3);
  ck_assert_int_eq((int64_t)cell(o, 1), N_ACC + 3 - N_ACC / 1000);
  double want = 0.1 + 1.0 / 3.0 + 12345.678901234;
  for (int i = 0; i < N_ACC; i++)
    if (i % 1000 != 5)
      want += i * 0.25;
  ck_assert(fabs(cell(o, 2) - want) <= 1e-9 * want);
  ck_assert_int_eq((int64_t)cell(o, 3), 0);
  ck_assert_int_eq((int64_t)cell(o, 4), 100 + N_ACC - 1);
  ck_assert_int_eq((int64_t)cell(o, 5), 2);
  cJSON_Delete(o);
  /* exact values and times, joined with the catalog */
  o = ok("SELECT p.step, p.value, p.time FROM metric_points p JOIN series s "
         "ON s.id = p.series_id WHERE s.key = 'loss' ORDER BY p.step");
  cJSON *rows = cJSON_GetObjectItem(o, "rows");
  ck_assert_int_eq(cJSON_GetArraySize(rows), 3);
  ck_assert(cJSON_GetArrayItem(cJSON_GetArrayItem(rows, 1), 1)->valuedouble == 1.0 / 3.0);
  ck_assert(cJSON_GetArrayItem(cJSON_GetArrayItem(rows, 2), 1)->valuedouble == 12345.678901234);
  ck_assert(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetArrayItem(rows, 2), 2)));
  cJSON_Delete(o);
  /* pushed-down series and step bounds (several blocks, cut mid-block),
   * with the rows checked again */
  char q[400];
  snprintf(q, sizeof q, "SELECT count(*), min(step), max(step), min(time) FROM metric_points "
           "WHERE series_id = %lld AND step >= 20000.5 AND step < 36000",
           (long long)ACC_ID);
  o = ok(q);
  ck_assert_int_eq((int64_t)cell(o, 0), 36000 - 20001);
  ck_assert_int_eq((int64_t)cell(o, 1), 20001);
  ck_assert_int_eq((int64_t)cell(o, 2), 35999);
  ck_assert_int_eq((int64_t)cell(o, 3), 1700000000000 + 20001 - 100);
  cJSON_Delete(o);
  snprintf(q, sizeof q, "SELECT count(*) FROM metric_points WHERE series_id IN (%lld, '%lld')",
           (long long)SECRET_ID, (long long)SECRET_ID);
  o = ok(q);
  ck_assert_int_eq((int64_t)cell(o, 0), 0);
  cJSON_Delete(o);
  /* (PostgreSQL refuses 'x' as a bigint instead of comparing it) */
  o = ok(st_is_pg() ? "SELECT count(*) FROM metric_points WHERE step = 7.5"
                    : "SELECT count(*) FROM metric_points WHERE series_id = 'x' OR step = 7.5");
  ck_assert_int_eq((int64_t)cell(o, 0), 0);
  cJSON_Delete(o);
  /* read-only, and no way around the table */
  refused("INSERT INTO metric_points VALUES(1, 1, 1, 1)", "not allowed");
  refused("DELETE FROM metric_points", "may not be modified");
  refused("UPDATE metric_points SET value = 0", "may not be modified");
  refused("DROP TABLE metric_points", "not allowed");
  if (!st_is_pg())
    refused("CREATE VIRTUAL TABLE temp.x USING pmcp_metric_points", "not allowed");
  refused("SELECT * FROM pmcp_metric_points", "not readable");
  refused("SELECT * FROM main.metric_points", "not readable");
  /* the statement caps hold inside it */
  refused("SELECT count(*) FROM metric_points a, metric_points b", "time limit");
  cJSON_Delete(ok("SELECT count(*) FROM metric_points"));
}
END_TEST

/* json_each/json_tree read their arguments only, and join the tables */
START_TEST(json_functions_and_joins)
{
  if (st_is_pg()) /* PostgreSQL's JSON functions are its own */
    return;
  cJSON *o = ok("SELECT sum(value), count(*) FROM json_each('[1, 2, 3.5]')");
  cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "rows"), 0);
  ck_assert(cJSON_GetArrayItem(row, 0)->valuedouble == 6.5);
  ck_assert_int_eq(cJSON_GetArrayItem(row, 1)->valueint, 3);
  cJSON_Delete(o);
  o = ok("SELECT count(*) FROM json_tree('{\"a\":{\"b\":[1,2]}}') WHERE atom IS NOT NULL");
  ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "rows"), 0), 0)
                       ->valueint, 2);
  cJSON_Delete(o);
  /* a JSON value built from a table, walked by json_each */
  o = ok("SELECT count(*) FROM json_each((SELECT json_group_array(slug) FROM runs))");
  ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "rows"), 0), 0)
                       ->valueint, 30);
  cJSON_Delete(o);
  /* comparisons pushed into the tables give the same answers as a scan:
   * equality, ranges, IN, text against an integer column */
  static const char *const same[][2] = {
    {"SELECT count(*) FROM runs a JOIN runs b ON a.id = b.id",
     "SELECT count(*) FROM runs a JOIN runs b ON +a.id = +b.id"},
    {"SELECT count(*), sum(id), min(slug), max(slug) FROM runs WHERE id >= 5 AND id < 12",
     "SELECT count(*), sum(id), min(slug), max(slug) FROM runs WHERE +id >= 5 AND +id < 12"},
    {"SELECT count(*), sum(id), min(slug), max(slug) FROM runs WHERE id IN (2, 4, '6')",
     "SELECT count(*), sum(id), min(slug), max(slug) FROM runs WHERE +id IN (2, 4, 6)"},
    {"SELECT count(*) FROM runs WHERE status = 'failed'",
     "SELECT count(*) FROM runs WHERE +status = 'failed'"},
    {"SELECT count(*) FROM runs WHERE status = 'FAILED' COLLATE NOCASE",
     "SELECT count(*) FROM runs WHERE +status = 'failed'"},
    {"SELECT count(*) FROM series s JOIN runs r ON r.id = s.run_id AND r.slug = 'run02'",
     "SELECT 1"},
  };
  for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
    cJSON *a = ok(same[i][0]), *b = ok(same[i][1]);
    char *ta = cJSON_PrintUnformatted(cJSON_GetObjectItem(a, "rows"));
    char *tb = cJSON_PrintUnformatted(cJSON_GetObjectItem(b, "rows"));
    ck_assert_msg(!strcmp(ta, tb), "%s: %s != %s", same[i][0], ta, tb);
    cJSON_free(ta);
    cJSON_free(tb);
    cJSON_Delete(a);
    cJSON_Delete(b);
  }
}
END_TEST

START_TEST(time_cap_stops_a_runaway)
{
  refused("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c",
          "time limit");
  /* the connection is usable after */
  cJSON_Delete(ok("SELECT 1"));
}
END_TEST

int main(void)
{
  int skip = st_backend_check(); /* PMCP_TEST_STORE=pg without a cluster */
  if (skip)
    return skip;
  Suite *su = suite_create("research-sql");
  TCase *tc = tcase_create("sql");
  tcase_set_timeout(tc, 60);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, lists_tables_with_types);
  tcase_add_test(tc, selects_exact_rows_of_own_tenant);
  tcase_add_test(tc, pages_rows_with_cursor);
  tcase_add_test(tc, refuses_writes_and_escapes);
  tcase_add_test(tc, metric_points_are_rows);
  tcase_add_test(tc, time_cap_stops_a_runaway);
  tcase_add_test(tc, json_functions_and_joins);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? 1 : 0;
}
