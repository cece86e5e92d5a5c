/* SPDX-License-Identifier: MIT */
/* SQLite side of db.h: $1..$N are SQLite named parameters ("$1" is an
 * identifier to SQLite), bound by name as text; every column is read back
 * as text (integers as decimal). Statements come from the connection's
 * cache of run-time texts (sq_stmt.c, keyed by content): the service
 * tables are read on every authenticated request, and parsing a join
 * costs more than running it. The SQL may still be built by the caller. */
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/sq.h"

/* Binds $k to params[k - 1]; refuses a placeholder beyond n or of another
 * form (?, :name, @name), so a typo cannot silently bind NULL. */
static int bind_all(pmcp_store *s, sqlite3_stmt *st, int n, const char *const *params)
{
  int count = sqlite3_bind_parameter_count(st);
  for (int i = 1; i <= count; i++) {
    const char *name = sqlite3_bind_parameter_name(st, i);
    char *end = NULL;
    long k = name && name[0] == '$' ? strtol(name + 1, &end, 10) : 0;
    if (!name || name[0] != '$' || !end || *end || k < 1 || k > n)
      return pmcp_store_set_error(s, PMCP_EINVAL,
          "service query: placeholder %d has no parameter (%d given)", i, n);
    const char *v = params[k - 1];
    int src = v ? sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
    if (src != SQLITE_OK)
      return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  }
  return 0;
}

/* The cached statement of @p sql, bound. One statement per call: the
 * cached statement's own text must be the whole of @p sql (but for
 * trailing blanks and semicolons). */
static int prepare(pmcp_store *s, pmcp__sq *q, const char *sql, int n,
                   const char *const *params, sqlite3_stmt **out)
{
  *out = NULL;
  sqlite3_stmt *st = NULL;
  int rc = pmcp__sq_prep_text(s, q, sql, &st);
  if (rc)
    return rc;
  if (!st)
    return pmcp_store_set_error(s, PMCP_EINVAL, "service query: empty statement");
  const char *first = sqlite3_sql(st);
  const char *tail = sql + (first ? strlen(first) : 0);
  while (*tail == ' ' || *tail == '\n' || *tail == '\t' || *tail == ';')
    tail++;
  if (*tail)
    return pmcp_store_set_error(s, PMCP_EINVAL, "service query: one statement per call");
  *out = st;
  return bind_all(s, st, n, params);
}

static int sq_db_exec(pmcp_store *s, void *ctx, const char *sql, int n,
                      const char *const *params, int64_t *changes)
{
  pmcp__sq *q = SQ(ctx);
  sqlite3_stmt *st = NULL;
  int rc = prepare(s, q, sql, n, params, &st);
  if (rc == 0) {
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW)
      ;
    if (src != SQLITE_DONE)
      rc = pmcp__sq_err(s, q, src, "service update");
    else if (changes)
      *changes = sqlite3_changes64(q->db);
  }
  if (st) {
    sqlite3_reset(st); /* cached: reset, never finalized */
    sqlite3_clear_bindings(st);
  }
  return rc;
}

static int sq_db_query(pmcp_store *s, void *ctx, const char *sql, int n,
                       const char *const *params, pmcp__db_res **out)
{
  pmcp__sq *q = SQ(ctx);
  sqlite3_stmt *st = NULL;
  int rc = prepare(s, q, sql, n, params, &st);
  if (rc == 0)
    rc = pmcp__db_res_new(out, (size_t)sqlite3_column_count(st));
  if (rc == PMCP_ENOMEM)
    rc = pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  int src = SQLITE_DONE;
  int ncols = st ? sqlite3_column_count(st) : 0;
  while (rc == 0 && (src = sqlite3_step(st)) == SQLITE_ROW) {
    for (int c = 0; c < ncols && rc == 0; c++) {
      const char *v = sqlite3_column_type(st, c) == SQLITE_NULL
                          ? NULL : (const char *)sqlite3_column_text(st, c);
      size_t len = v ? (size_t)sqlite3_column_bytes(st, c) : 0;
      if (pmcp__db_res_add(*out, v, len))
        rc = pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
    }
  }
  if (rc == 0 && src != SQLITE_DONE)
    rc = pmcp__sq_err(s, q, src, "service query");
  if (st) {
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
  }
  return rc;
}

/* PRAGMA data_version changes when another connection commits (in any
 * process); the connection's own writes are in sqlite3_total_changes64. */
static int sq_db_mark(pmcp_store *s, void *ctx, uint64_t mark[2])
{
  pmcp__sq *q = SQ(ctx);
  sqlite3_stmt *st = NULL;
  int rc = pmcp__sq_prep_text(s, q, "PRAGMA data_version", &st);
  if (rc)
    return rc;
  int src = sqlite3_step(st);
  if (src == SQLITE_ROW) {
    mark[0] = (uint64_t)sqlite3_column_int64(st, 0);
    mark[1] = (uint64_t)sqlite3_total_changes64(q->db);
  } else {
    rc = pmcp__sq_err(s, q, src, "change mark");
  }
  sqlite3_reset(st);
  return rc;
}

const pmcp__db_ops pmcp__sq_db_ops = {sq_db_exec, sq_db_query, NULL, sq_db_mark};
