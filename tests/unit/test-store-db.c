/* SPDX-License-Identifier: MIT */
/* db.h on SQLite: parameter binding by $N, text results and NULLs, change
 * counts for single-use updates, clear errors (never the SQL text), the
 * read-only refusal, the v6 service tables and the append-only audit log. */
#include "store-test-util.h"

#include "store/db.h"

static const char *const ins_user =
  "INSERT INTO users(id, name, display_name, password, created, updated)"
  " VALUES($1, $2, $3, NULL, $4, $4)";

START_TEST(roundtrip)
{
  pmcp_store *s = st_open_new(NULL);
  const char *p1[] = {"u1", "ada", "Ada L.", "1700000000000"};
  int64_t ch = -1;
  ST_OK(s, pmcp__db_exec(s, ins_user, 4, p1, &ch));
  ck_assert_int_eq(ch, 1);
  const char *p2[] = {"u2", "bob", NULL, "1700000000001"};
  ST_OK(s, pmcp__db_exec(s, ins_user, 4, p2, NULL));
  pmcp__db_res *r = NULL;
  const char *q[] = {"1700000000000"};
  ST_OK(s, pmcp__db_query(s, "SELECT id, name, display_name, created, disabled FROM users"
                             " WHERE created >= $1 ORDER BY name", 1, q, &r));
  ck_assert_uint_eq(pmcp__db_nrows(r), 2);
  ck_assert_uint_eq(pmcp__db_ncols(r), 5);
  ck_assert_str_eq(pmcp__db_get(r, 0, 1), "ada");
  ck_assert_str_eq(pmcp__db_get(r, 0, 2), "Ada L.");
  ck_assert_str_eq(pmcp__db_get(r, 0, 3), "1700000000000");
  ck_assert_str_eq(pmcp__db_get(r, 0, 4), "0");
  ck_assert_ptr_null(pmcp__db_get(r, 1, 2));       /* SQL NULL */
  ck_assert_ptr_null(pmcp__db_get(r, 2, 0));       /* out of range */
  ck_assert_ptr_null(pmcp__db_get(r, 0, 5));
  pmcp__db_res_free(r);
  /* A text parameter compares numerically with a BIGINT column. */
  const char *q2[] = {"1700000000001"};
  ST_OK(s, pmcp__db_query(s, "SELECT name FROM users WHERE created < $1", 1, q2, &r));
  ck_assert_uint_eq(pmcp__db_nrows(r), 1);
  ck_assert_str_eq(pmcp__db_get(r, 0, 0), "ada");
  pmcp__db_res_free(r);
  /* The same parameter used twice, and parameters out of order. */
  ST_OK(s, pmcp__db_query(s, "SELECT $2 || $1 || $2", 2, (const char *[]){"b", "a"}, &r));
  ck_assert_str_eq(pmcp__db_get(r, 0, 0), "aba");
  pmcp__db_res_free(r);
  /* No rows: an empty result with its columns. */
  ST_OK(s, pmcp__db_query(s, "SELECT id, name FROM users WHERE name = $1", 1,
                          (const char *[]){"nobody"}, &r));
  ck_assert_uint_eq(pmcp__db_nrows(r), 0);
  ck_assert_uint_eq(pmcp__db_ncols(r), 2);
  pmcp__db_res_free(r);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* Single use: a conditional update succeeds once, atomically. */
START_TEST(single_use)
{
  pmcp_store *s = st_open_new(NULL);
  const char *k[] = {"k1", "pk_abc", "h1", "1", "default", "read", "5"};
  ST_OK(s, pmcp__db_exec(s, "INSERT INTO api_keys(id, prefix, hash, tenant_id, workspace,"
                            " scope, created) VALUES($1, $2, $3, $4, $5, $6, $7)", 7, k, NULL));
  int64_t ch = -1;
  const char *rv[] = {"9", "k1"};
  static const char revoke[] = "UPDATE api_keys SET revoked = $1 WHERE id = $2 AND revoked IS NULL";
  ST_OK(s, pmcp__db_exec(s, revoke, 2, rv, &ch));
  ck_assert_int_eq(ch, 1);
  ST_OK(s, pmcp__db_exec(s, revoke, 2, rv, &ch));
  ck_assert_int_eq(ch, 0);
  /* Inside an explicit transaction, rolled back. */
  ST_OK(s, pmcp_store_begin(s));
  const char *k2[] = {"k2", "pk_def", "h2", "1", "default", "write", "6"};
  ST_OK(s, pmcp__db_exec(s, "INSERT INTO api_keys(id, prefix, hash, tenant_id, workspace,"
                            " scope, created) VALUES($1, $2, $3, $4, $5, $6, $7)", 7, k2, NULL));
  ST_OK(s, pmcp_store_rollback(s));
  pmcp__db_res *r = NULL;
  ST_OK(s, pmcp__db_query(s, "SELECT count(*) FROM api_keys", 0, NULL, &r));
  ck_assert_str_eq(pmcp__db_get(r, 0, 0), "1");
  pmcp__db_res_free(r);
  /* ON CONFLICT DO NOTHING: no error, no change. */
  ST_OK(s, pmcp__db_exec(s, "INSERT INTO api_keys(id, prefix, hash, tenant_id, workspace,"
                            " scope, created) VALUES($1, $2, $3, $4, $5, $6, $7)"
                            " ON CONFLICT DO NOTHING", 7, k, &ch));
  ck_assert_int_eq(ch, 0);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(errors)
{
  pmcp_store *s = st_open_new(NULL);
  const char *p1[] = {"u1", "ada", NULL, "1"};
  ST_OK(s, pmcp__db_exec(s, ins_user, 4, p1, NULL));
  /* A unique clash: PMCP_EEXIST, the SQL text not in the message. */
  const char *p2[] = {"u2", "ada", NULL, "2"};
  ST_RC(s, pmcp__db_exec(s, ins_user, 4, p2, NULL), PMCP_EEXIST);
  ck_assert_ptr_null(strstr(pmcp_store_errmsg(s), "INSERT"));
  /* A placeholder beyond the parameters given, or of another form. */
  ST_RC(s, pmcp__db_exec(s, ins_user, 3, p2, NULL), PMCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "placeholder"));
  pmcp__db_res *r = NULL;
  ST_RC(s, pmcp__db_query(s, "SELECT ?1", 1, p1, &r), PMCP_EINVAL);
  ck_assert_ptr_null(r);
  ST_RC(s, pmcp__db_query(s, "SELECT :a", 1, p1, &r), PMCP_EINVAL);
  /* Bad SQL, two statements, an empty one, bad arguments. */
  ST_RC(s, pmcp__db_query(s, "SELEKT 1", 0, NULL, &r), PMCP_ESTORE);
  ck_assert_ptr_null(strstr(pmcp_store_errmsg(s), "SELEKT 1"));
  ST_RC(s, pmcp__db_exec(s, "SELECT 1; DELETE FROM users", 0, NULL, NULL), PMCP_EINVAL);
  ST_RC(s, pmcp__db_exec(s, "  ", 0, NULL, NULL), PMCP_EINVAL);
  ST_RC(s, pmcp__db_exec(s, NULL, 0, NULL, NULL), PMCP_EINVAL);
  ST_RC(s, pmcp__db_exec(s, "SELECT 1", 2, NULL, NULL), PMCP_EINVAL);
  ck_assert_int_eq(pmcp__db_exec(NULL, "SELECT 1", 0, NULL, NULL), PMCP_EMISUSE);
  r = NULL;
  ST_OK(s, pmcp__db_query(s, "SELECT count(*) FROM users", 0, NULL, &r));
  ck_assert_str_eq(pmcp__db_get(r, 0, 0), "1");
  pmcp__db_res_free(r);
  pmcp__db_res_free(NULL);
  pmcp_store_free(s);
  /* Read-only: reads work, writes are PMCP_EREADONLY. */
  ST_OK(s, pmcp_store_open(&s, st_path, PMCP_STORE_READONLY));
  ST_OK(s, pmcp__db_query(s, "SELECT name FROM users", 0, NULL, &r));
  ck_assert_uint_eq(pmcp__db_nrows(r), 1);
  pmcp__db_res_free(r);
  const char *p3[] = {"u3", "cy", NULL, "3"};
  ST_RC(s, pmcp__db_exec(s, ins_user, 4, p3, NULL), PMCP_EREADONLY);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(audit_append_only)
{
  pmcp_store *s = st_open_new(NULL);
  const char *a[] = {"a1", "10", "1", "default", "cli:root", "api_key.create", "cli", "{}"};
  ST_OK(s, pmcp__db_exec(s, "INSERT INTO audit_log(id, time, tenant_id, workspace, actor,"
                            " action, via, details) VALUES($1, $2, $3, $4, $5, $6, $7, $8)",
                         8, a, NULL));
  ck_assert_int_ne(pmcp__db_exec(s, "UPDATE audit_log SET actor = 'x'", 0, NULL, NULL), 0);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "append-only"));
  ck_assert_int_ne(pmcp__db_exec(s, "DELETE FROM audit_log", 0, NULL, NULL), 0);
  pmcp__db_res *r = NULL;
  ST_OK(s, pmcp__db_query(s, "SELECT actor FROM audit_log", 0, NULL, &r));
  ck_assert_uint_eq(pmcp__db_nrows(r), 1);
  ck_assert_str_eq(pmcp__db_get(r, 0, 0), "cli:root");
  pmcp__db_res_free(r);
  /* Every service table exists with the columns the DDL names. */
  static const char *const tables[] = {
    "SELECT id, name, display_name, password, disabled, created, updated FROM users",
    "SELECT user_id, tenant_id, workspace, role, created FROM memberships",
    "SELECT id, name, prefix, hash, tenant_id, workspace, scope, created_by, created,"
    " last_used, revoked FROM api_keys",
    "SELECT id, user_id, client_id, tenant_id, workspace, access, created, last_used,"
    " revoked FROM mcp_connections",
    NULL};
  for (int i = 0; tables[i]; i++) {
    ST_OK(s, pmcp__db_query(s, tables[i], 0, NULL, &r));
    pmcp__db_res_free(r);
  }
  ck_assert_ptr_nonnull(pmcp__service_ddl(6));
  ck_assert_ptr_null(pmcp__service_ddl(5));
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

int main(void)
{
  Suite *su = suite_create("store-db");
  TCase *tc = tcase_create("db");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, roundtrip);
  tcase_add_test(tc, single_use);
  tcase_add_test(tc, errors);
  tcase_add_test(tc, audit_append_only);
  suite_add_tcase(su, tc);
  return st_run_suite(su);
}
