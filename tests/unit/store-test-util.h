/* SPDX-License-Identifier: MIT */
/* Helpers shared by the test-store-*.c suites: a fresh store per test,
 * and assertion shorthands that print the store's message on failure.
 *
 * One source, two backends: meson registers each suite twice, the second
 * time with PMCP_TEST_STORE=pg, where "a fresh store" is a new schema in
 * the test cluster's database (PROBE_TEST_PG_URL, see tests/pg/pgctl.sh)
 * and st_path is a postgresql:// URL whose search_path names it. Without a
 * cluster the pg runs skip (77), unless PMCP_TEST_STRICT is set. */
#ifndef STORE_TEST_UTIL_H
#define STORE_TEST_UTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "probemcp/probemcp.h"

#ifdef PMCP_HAVE_POSTGRES
#include <libpq-fe.h>
#endif

static char st_dir[256];
static char st_path[1200];
static char st_schema[64];

/* Non-zero when this run's store is PostgreSQL (PMCP_TEST_STORE=pg). */
static inline int st_is_pg(void)
{
  const char *v = getenv("PMCP_TEST_STORE");
  return v && strcmp(v, "pg") == 0;
}

/* For main(): whether the pg run can go ahead; 77 (skip) or 1 (fail under
 * PMCP_TEST_STRICT) when it cannot, 0 when it can or the run is SQLite. */
static inline int st_backend_check(void)
{
  if (!st_is_pg())
    return 0;
  const char *strict = getenv("PMCP_TEST_STRICT");
  int must = strict && *strict && strcmp(strict, "0") != 0;
#ifdef PMCP_HAVE_POSTGRES
  const char *url = getenv("PROBE_TEST_PG_URL");
  if (url && *url)
    return 0;
  if (must)
    fprintf(stderr, "PMCP_TEST_STORE=pg under PMCP_TEST_STRICT needs PROBE_TEST_PG_URL\n");
#else
  if (must)
    fprintf(stderr, "PMCP_TEST_STORE=pg but this build has no PostgreSQL backend\n");
#endif
  return must ? 1 : 77;
}

/* Marks a test that is about one backend's storage (files, folders, WAL):
 * it passes without checking anything on the other backend. */
#define ST_SQLITE_ONLY()                                                      \
  do {                                                                        \
    if (st_is_pg())                                                           \
      return;                                                                 \
  } while (0)

#ifdef PMCP_HAVE_POSTGRES
/* Runs one statement on the test cluster as the owner. */
static inline void st_pg_exec(const char *sql)
{
  PGconn *c = PQconnectdb(getenv("PROBE_TEST_PG_URL"));
  ck_assert_msg(PQstatus(c) == CONNECTION_OK, "test cluster: %s", PQerrorMessage(c));
  PQclear(PQexec(c, "SET client_min_messages = warning"));
  PGresult *r = PQexec(c, sql);
  ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s: %s", sql, PQerrorMessage(c));
  PQclear(r);
  PQfinish(c);
}

/* @p base plus a search_path option naming @p schema. */
static inline void st_pg_url(char *out, size_t n, const char *base, const char *schema)
{
  snprintf(out, n, "%s%soptions=-csearch_path%%3D%s", base, strchr(base, '?') ? "&" : "?",
           schema);
}
#endif

/* A new empty folder and a store location (not yet created): a file in
 * the folder, or (pg) the URL of a new empty schema. */
static inline void st_fresh_path(void)
{
  const char *tmp = getenv("TMPDIR");
  snprintf(st_dir, sizeof st_dir, "%s/pmcp-store-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(st_dir));
  snprintf(st_path, sizeof st_path, "%s/store.db", st_dir);
#ifdef PMCP_HAVE_POSTGRES
  if (st_is_pg()) {
    static unsigned counter;
    snprintf(st_schema, sizeof st_schema, "t_%ld_%u_%s", (long)getpid(), ++counter,
             st_dir + strlen(st_dir) - 6);
    for (char *p = st_schema; *p; p++)
      if (*p >= 'A' && *p <= 'Z')
        *p = (char)(*p - 'A' + 'a');
      else if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
        *p = '_';
    char sql[200];
    snprintf(sql, sizeof sql, "CREATE SCHEMA %s", st_schema);
    st_pg_exec(sql);
    st_pg_url(st_path, sizeof st_path, getenv("PROBE_TEST_PG_URL"), st_schema);
  }
#endif
}

static inline void st_cleanup(void)
{
  char cmd[400];
#ifdef PMCP_HAVE_POSTGRES
  if (st_schema[0] && st_is_pg()) {
    char sql[200];
    snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS %s, %s_sql CASCADE", st_schema, st_schema);
    st_pg_exec(sql);
  }
  st_schema[0] = '\0';
#endif
  if (st_dir[0]) {
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", st_dir);
    if (system(cmd) != 0)
      fprintf(stderr, "cleanup of %s failed\n", st_dir);
  }
  st_dir[0] = '\0';
}

#define ST_OK(s, call)                                                        \
  do {                                                                        \
    int rc_ = (call);                                                         \
    ck_assert_msg(rc_ == 0, "%s -> %d (%s)", #call, rc_, pmcp_store_errmsg(s)); \
  } while (0)

#define ST_RC(s, call, want)                                                  \
  do {                                                                        \
    int rc_ = (call);                                                         \
    ck_assert_msg(rc_ == (want), "%s -> %d, wanted %d (%s)", #call, rc_, (want), \
                  pmcp_store_errmsg(s));                                      \
  } while (0)

static inline pmcp_store *st_open_new(pmcp_tenant *t)
{
  st_fresh_path();
  pmcp_store *s = NULL;
  int rc = pmcp_store_open(&s, st_path, PMCP_STORE_CREATE);
  ck_assert_msg(rc == 0, "open: %d %s", rc, pmcp_store_errmsg(s));
  if (t)
    ST_OK(s, pmcp_store_tenant(s, NULL, 0, t));
  return s;
}

/* Parses a JSON result; the caller deletes it. */
static inline cJSON *st_json(const pmcp_buf *b)
{
  cJSON *o = cJSON_Parse(b->ptr);
  ck_assert_msg(o != NULL, "not JSON: %s", b->ptr ? b->ptr : "(null)");
  return o;
}

/* pmcp_store_create() of @p kind @p id (its name too) under @p parent. */
static inline void st_create(pmcp_store *s, pmcp_tenant t, const char *kind, const char *id,
                             const char *parent)
{
  pmcp_entity_spec e = PMCP_ENTITY_SPEC_INIT;
  e.id = id;
  e.name = id;
  e.parent = parent;
  ST_OK(s, pmcp_store_create(s, t, kind, &e, NULL));
}

/* pmcp_store_put() of one @p kind record. */
static inline void st_put(pmcp_store *s, pmcp_tenant t, const char *kind, const char *json)
{
  ST_OK(s, pmcp_store_put(s, t, kind, json, strlen(json), NULL));
}

static inline cJSON *st_get(pmcp_store *s, pmcp_tenant t, const char *ref)
{
  pmcp_buf b = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_get(s, t, ref, &b));
  cJSON *o = st_json(&b);
  pmcp_buf_dispose(&b);
  return o;
}

static inline cJSON *st_list(pmcp_store *s, pmcp_tenant t, const char *kind, const char *parent,
                      const char *filter)
{
  pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
  o.kind = kind;
  o.parent = parent;
  o.filter = filter;
  o.limit = 1000;
  pmcp_buf b = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_list(s, t, &o, &b));
  cJSON *j = st_json(&b);
  pmcp_buf_dispose(&b);
  return j;
}

static inline int st_list_count(pmcp_store *s, pmcp_tenant t, const char *kind, const char *parent,
                         const char *filter)
{
  cJSON *j = st_list(s, t, kind, parent, filter);
  int n = cJSON_GetArraySize(cJSON_GetObjectItem(j, "items"));
  cJSON_Delete(j);
  return n;
}

static inline uint64_t st_version(pmcp_store *s, pmcp_tenant t)
{
  uint64_t v = 0;
  ST_OK(s, pmcp_store_version(s, t, &v));
  return v;
}

static inline const char *st_str(cJSON *o, const char *name)
{
  cJSON *it = cJSON_GetObjectItem(o, name);
  return cJSON_IsString(it) ? it->valuestring : NULL;
}

static inline void st_mkproject(pmcp_store *s, pmcp_tenant t)
{
  pmcp_entity_spec p = PMCP_ENTITY_SPEC_INIT;
  p.name = "Vision";
  p.id = "vision";
  ST_OK(s, pmcp_store_create(s, t, "project", &p, NULL));
  pmcp_entity_spec e = PMCP_ENTITY_SPEC_INIT;
  e.name = "baseline";
  e.id = "baseline";
  e.parent = "project:vision";
  ST_OK(s, pmcp_store_create(s, t, "experiment", &e, NULL));
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "r1";
  r.name = "first";
  r.experiment = "experiment:baseline";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
}

static inline int st_run_suite(Suite *suite)
{
  int skip = st_backend_check();
  if (skip)
    return skip;
  SRunner *sr = srunner_create(suite);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
