/* SPDX-License-Identifier: MIT */
/* query_sql on PostgreSQL (sql_pg.h): rows keep their types (integers as
 * integers, floats and numerics in shortest round-trip form, booleans,
 * bytea as x'..' hex, the rest as text), a value over 1 MiB is an error,
 * rows stream (one in memory at a time) and the statement stops at the
 * budget, and a cursor re-runs the statement and skips the rows already
 * sent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pq_dl.h"

#include "probemcp/budget.h"
#include "research/metrics.h"
#include "research/sql_pg.h"
#include "research/sql_rows.h"
#include "util/cnum.h"

#define MAX_VALUE (1 << 20)

enum { OID_BOOL = 16, OID_BYTEA = 17, OID_INT8 = 20, OID_INT2 = 21, OID_INT4 = 23,
       OID_OID = 26, OID_FLOAT4 = 700, OID_FLOAT8 = 701, OID_NUMERIC = 1700 };

static void cell(pmcp_json *j, const PGresult *r, int row, int c)
{
  if (PQgetisnull(r, row, c)) {
    pmcp_json_null(j);
    return;
  }
  const char *v = PQgetvalue(r, row, c);
  size_t n = (size_t)PQgetlength(r, row, c);
  switch (PQftype(r, c)) {
  case OID_INT2:
  case OID_INT4:
  case OID_INT8:
  case OID_OID:
    pmcp_json_int(j, strtoll(v, NULL, 10));
    return;
  case OID_FLOAT4:
  case OID_FLOAT8:
  case OID_NUMERIC:
    if (!strcmp(v, "NaN") || strstr(v, "Infinity"))
      pmcp_json_string(j, v);
    else
      pmcp_json_number_lossless(j, pmcp__c_strtod(v, NULL));
    return;
  case OID_BOOL:
    pmcp_json_bool(j, v[0] == 't');
    return;
  case OID_BYTEA:
    if (n >= 2 && v[0] == '\\' && v[1] == 'x') {
      char *s = malloc(n + 2);
      if (!s) {
        pmcp_json_null(j);
        return;
      }
      size_t k = 0;
      s[k++] = 'x';
      s[k++] = '\'';
      memcpy(s + k, v + 2, n - 2);
      k += n - 2;
      s[k++] = '\'';
      pmcp_json_string_n(j, s, k);
      free(s);
      return;
    }
    break;
  default:
    break;
  }
  pmcp_json_string_n(j, v, n);
}

/* A value over the limit in row @p r. */
static int too_big(const PGresult *r)
{
  for (int c = 0; c < PQnfields(r); c++)
    if (PQgetlength(r, 0, c) > MAX_VALUE)
      return 1;
  return 0;
}

/* The tool's error code for a statement that failed with @p rc: a lost
 * connection is the store's trouble, not the SQL's. */
static int sql_fail(pmcp_call *call, int rc, const char *err)
{
  pmcp_tool_error code = PMCP_TERR_INVALID_SQL;
  switch (rc) {
  case PMCP_EDENIED:
    code = PMCP_TERR_DENIED;
    break;
  case PMCP_EIO:
    code = PMCP_TERR_STORE;
    break;
  case PMCP_ETIMEOUT:
  case PMCP_ETOOBIG:
  case PMCP_ENOMEM:
    code = PMCP_TERR_SQL;
    break;
  default:
    break;
  }
  return pmcp__rs_fail(call, code, "%s", err);
}

#define TOO_BIG "a value is larger than the limit (1 MiB): select less"

/* A statement's rows for the shared pager (sql_rows.h), one PGresult of
 * one row at a time. */
typedef struct pg_rows {
  pmcp__pgq *q;
  PGresult *r;
  int started;
  char err[400];
} pg_rows;

static const char *pg_name(void *src, int c)
{
  return PQfname(((pg_rows *)src)->r, c);
}

static int pg_next(void *src)
{
  pg_rows *s = src;
  if (s->started) {
    PQclear(s->r);
    s->r = NULL;
    void *nx = NULL;
    int nrc = pmcp__pgq_next(s->q, &nx, s->err, sizeof s->err);
    if (nrc < 0)
      return nrc;
    if (nrc != 1)
      return 0;
    s->r = nx;
  }
  s->started = 1;
  if (PQntuples(s->r) != 1)
    return 0;
  if (too_big(s->r)) {
    snprintf(s->err, sizeof s->err, TOO_BIG);
    return PMCP_ETOOBIG;
  }
  return 1;
}

static uint64_t pg_digest(void *src, uint64_t h)
{
  const PGresult *r = ((pg_rows *)src)->r;
  for (int c = 0; c < PQnfields(r); c++) {
    int null = PQgetisnull(r, 0, c);
    h = pmcp__rs_scope_mix(h, null ? -1 : PQgetlength(r, 0, c));
    const char *p = null ? "" : PQgetvalue(r, 0, c);
    for (int i = 0, n = null ? 0 : PQgetlength(r, 0, c); i < n; i++)
      h = pmcp__rs_scope_mix(h, (unsigned char)p[i]);
  }
  return h;
}

static void pg_cells(void *src, pmcp_json *j)
{
  const PGresult *r = ((pg_rows *)src)->r;
  for (int c = 0; c < PQnfields(r); c++)
    cell(j, r, 0, c);
}

static void pg_end(void *src)
{
  pg_rows *s = src;
  PQclear(s->r);
  s->r = NULL;
  pmcp__pgq_end(s->q);
}

static int pg_fail(void *src, pmcp_call *call, int rc)
{
  return sql_fail(call, rc, ((pg_rows *)src)->err);
}

/* Rows are read one at a time and the statement stops when the page is
 * full, so memory holds one row and a page, whatever the result's size. */
int pmcp__sqlpg_run(pmcp_call *call, pmcp__research *rs, pmcp__pgq *q, pmcp_tenant t,
                    const char *sql, size_t len)
{
  pg_rows s = {q, NULL, 0, ""};
  void *res = NULL;
  int rc = pmcp__pgq_start(q, t, sql, len, 5000, &res, s.err, sizeof s.err);
  if (rc)
    return sql_fail(call, rc, s.err);
  s.r = res;
  pmcp__sql_rows rows = {&s, PQnfields(s.r), pg_name, pg_next, pg_digest, pg_cells,
                         pg_end, pg_fail};
  return pmcp__sql_rows_send(call, rs, &rows);
}

/* Writes table number @p t of the listing result (rows: table, column,
 * type) starting at row *row; advances *row past it. */
static void table_item(const PGresult *r, int *row, pmcp_json *j)
{
  const char *name = PQgetvalue(r, *row, 0);
  pmcp_json_object_begin(j);
  pmcp_json_key(j, "name");
  pmcp_json_string(j, name);
  pmcp_json_key(j, "columns");
  pmcp_json_object_begin(j);
  while (*row < PQntuples(r) && !strcmp(PQgetvalue(r, *row, 0), name)) {
    pmcp_json_key(j, PQgetvalue(r, *row, 1));
    pmcp_json_string(j, PQgetvalue(r, *row, 2));
    (*row)++;
  }
  pmcp_json_object_end(j);
  pmcp_json_object_end(j);
}

int pmcp__sqlpg_list(pmcp_call *call, pmcp__research *rs, pmcp__pgq *q)
{
  char err[400] = "";
  void *res = NULL;
  int rc = pmcp__pgq_tables(q, &res, err, sizeof err);
  if (rc)
    return pmcp__rs_fail(call, PMCP_TERR_STORE, "%s", err);
  PGresult *r = res;
  /* bound to the listing itself (tables, columns, types) */
  uint64_t scope = 0;
  for (int i = 0; i < PQntuples(r); i++)
    for (int c = 0; c < 3 && c < PQnfields(r); c++) {
      for (const char *p = PQgetvalue(r, i, c); *p; p++)
        scope = pmcp__rs_scope_mix(scope, (unsigned char)*p);
      scope = pmcp__rs_scope_mix(scope, -1);
    }
  pmcp_page *pg = pmcp__rs_page_scoped(call, rs, 0, scope ? scope : 1);
  if (!pg) {
    PQclear(r);
    return 0;
  }
  size_t pos = pmcp__mx_pos(pg);
  pmcp_page_field_string(pg, "usage", "query_sql {\"sql\": \"SELECT ...\"}: one read-only "
                                      "statement over these tables (PostgreSQL dialect)");
  pmcp_page_field_string(pg, "deleted", PMCP__SQL_DELETED_NOTE);
  pmcp_page_list(pg, "tables");
  int more = 0, row = 0;
  for (size_t t = 0; row < PQntuples(r); t++) {
    if (t < pos) {
      const char *name = PQgetvalue(r, row, 0);
      while (row < PQntuples(r) && !strcmp(PQgetvalue(r, row, 0), name))
        row++;
      continue;
    }
    pmcp_json *j = pmcp_page_item(pg);
    if (!j)
      break;
    table_item(r, &row, j);
    uint64_t next = t + 1;
    int arc = pmcp_page_commit(pg, &next, sizeof next);
    if (arc == PMCP_EBUDGET) {
      more = 1;
      break;
    }
    if (arc)
      break;
  }
  PQclear(r);
  return pmcp__rs_send(call, pg, more);
}

int pmcp__sqlpg_schema(pmcp__pgq *q, pmcp_json *j)
{
  char err[400];
  void *res = NULL;
  int rc = pmcp__pgq_tables(q, &res, err, sizeof err);
  if (rc)
    return rc;
  PGresult *r = res;
  pmcp_json_object_begin(j);
  pmcp_json_key(j, "tables");
  pmcp_json_array_begin(j);
  int row = 0;
  while (row < PQntuples(r))
    table_item(r, &row, j);
  pmcp_json_array_end(j);
  pmcp_json_object_end(j);
  PQclear(r);
  return 0;
}
