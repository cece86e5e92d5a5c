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
  const char *code = "invalid_sql";
  switch (rc) {
  case PMCP_EDENIED:
    code = "denied";
    break;
  case PMCP_EIO:
    code = "unavailable";
    break;
  case PMCP_ETIMEOUT:
  case PMCP_ETOOBIG:
  case PMCP_ENOMEM:
    code = "sql_error";
    break;
  default:
    break;
  }
  return pmcp__rs_fail(call, code, "%s", err);
}

#define TOO_BIG "a value is larger than the limit (1 MiB): select less"

/* The rows sent so far, as a page's position: how many and their digest.
 * A cursor is bound to them (not to the store): the statement runs again
 * and continues while its first rows are those already sent, whatever
 * else the lab logged meanwhile. */
typedef struct pg_pos {
  uint64_t next;
  uint64_t digest;
} pg_pos;

static uint64_t row_digest(uint64_t h, const PGresult *r, int nc)
{
  for (int c = 0; c < nc; c++) {
    int null = PQgetisnull(r, 0, c);
    h = pmcp__rs_scope_mix(h, null ? -1 : PQgetlength(r, 0, c));
    const char *p = null ? "" : PQgetvalue(r, 0, c);
    for (int i = 0, n = null ? 0 : PQgetlength(r, 0, c); i < n; i++)
      h = pmcp__rs_scope_mix(h, (unsigned char)p[i]);
  }
  return h;
}

/* Rows are read one at a time and the statement stops when the page is
 * full, so memory holds one row and a page, whatever the result's size. */
int pmcp__sqlpg_run(pmcp_call *call, pmcp__research *rs, pmcp__pgq *q, pmcp_tenant t,
                    const char *sql, size_t len)
{
  char err[400] = "";
  void *res = NULL;
  int rc = pmcp__pgq_start(q, t, sql, len, 5000, &res, err, sizeof err);
  if (rc)
    return sql_fail(call, rc, err);
  PGresult *r = res;
  pmcp_page *pg = pmcp__rs_page_scoped(call, rs, PMCP_PAGE_LOSSLESS, 1);
  if (!pg) {
    PQclear(r);
    pmcp__pgq_end(q);
    return 0;
  }
  pg_pos at = {0, 0};
  const void *pd = NULL;
  size_t pl = 0;
  if (pmcp_page_position(pg, &pd, &pl) == 0 && pd && pl == sizeof at)
    memcpy(&at, pd, sizeof at);
  uint64_t pos = at.next, digest = 0, seen = 0;
  int changed = 0;
  int nc = PQnfields(r);
  pmcp_json *cj = NULL;
  if (pmcp_json_new(&cj, 0) == 0) {
    pmcp_json_array_begin(cj);
    for (int c = 0; c < nc; c++)
      pmcp_json_string(cj, PQfname(r, c));
    pmcp_json_array_end(cj);
    size_t cl = 0;
    const char *ct = pmcp_json_text(cj, &cl);
    if (ct)
      pmcp_page_field_json(pg, "columns", ct, cl);
    pmcp_json_free(cj);
  }
  pmcp_page_list(pg, "rows");
  int more = 0, failed = 0;
  for (uint64_t i = 0; PQntuples(r) == 1; i++) {
    if (too_big(r)) {
      failed = PMCP_ETOOBIG;
      snprintf(err, sizeof err, TOO_BIG);
      break;
    }
    seen = i + 1;
    if (i < pos) {
      digest = row_digest(digest, r, nc); /* sent on an earlier page */
    } else if (i == pos && pos && digest != at.digest) {
      changed = 1;
      break;
    } else {
      digest = row_digest(digest, r, nc);
      pmcp_json *j = pmcp_page_item(pg);
      if (!j)
        break;
      pmcp_json_array_begin(j);
      for (int c = 0; c < nc; c++)
        cell(j, r, 0, c);
      pmcp_json_array_end(j);
      pg_pos next = {i + 1, digest};
      int arc = pmcp_page_commit(pg, &next, sizeof next);
      if (arc == PMCP_EBUDGET) {
        more = 1;
        break;
      }
      if (arc)
        break;
    }
    PQclear(r);
    r = NULL;
    void *nx = NULL;
    int nrc = pmcp__pgq_next(q, &nx, err, sizeof err);
    if (nrc < 0)
      failed = nrc;
    if (nrc != 1)
      break;
    r = nx;
  }
  PQclear(r);
  pmcp__pgq_end(q);
  if (!failed && !changed && !more && pos && seen <= pos && (seen < pos || digest != at.digest))
    changed = 1; /* rows sent earlier are gone or changed */
  if (failed) {
    pmcp_page_free(pg);
    return sql_fail(call, failed, err);
  }
  if (changed) {
    pmcp_page_free(pg);
    return pmcp__rs_restart(call, "stale",
                            "The rows on the pages before changed. Call query_sql again "
                            "without `cursor` to start over.");
  }
  return pmcp__rs_send(call, pg, more);
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
    return pmcp__rs_fail(call, "unavailable", "%s", err);
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
