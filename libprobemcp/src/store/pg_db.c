/* SPDX-License-Identifier: MIT */
/* PostgreSQL side of db.h: the service tables' SQL already uses $1..$N,
 * so it runs as written, every parameter text (or NULL) and every column
 * read back as text. The first texts a connection sees (the service's
 * fixed statements, run on every authenticated request) are prepared on
 * the server once and kept; any beyond those run unprepared. Statements run on the store's own connection (inside
 * the caller's transaction when one is open); a connection lost outside
 * a transaction is re-established and the statement run once more. */
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/pg.h"

/* One statement with $N placeholders only: '?', ':name' and '@name'
 * (other engines' forms) are refused, like a second statement after ';'
 * and an empty one, as the SQLite side does. */
static int check_sql(pmcp_store *s, const char *sql)
{
  char quote = 0;
  int seen = 0, ended = 0;
  for (const char *p = sql; *p; p++) {
    char c = *p;
    if (quote) {
      if (c == quote)
        quote = 0;
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r')
      continue;
    if (ended && c != ';')
      return pmcp_store_set_error(s, PMCP_EINVAL, "service query: one statement per call");
    if (c == ';') {
      ended = 1;
      continue;
    }
    seen = 1;
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?' || c == '@' ||
               (c == ':' && p[1] != ':' && (p == sql || p[-1] != ':'))) {
      return pmcp_store_set_error(s, PMCP_EINVAL,
          "service query: placeholder '%c' is not $N", c);
    }
  }
  if (!seen)
    return pmcp_store_set_error(s, PMCP_EINVAL, "service query: empty statement");
  return 0;
}

/* Done with @p st: a kept statement is reset (its result freed), another
 * finalized. */
static void release(pmcp__pg_stmt *st)
{
  if (st && st->cached)
    pmcp__pg_reset(st);
  else
    pmcp__pg_finalize(st);
}

static int prepare(pmcp_store *s, pmcp__pg *g, const char *sql, int n,
                   const char *const *params, pmcp__pg_stmt **out)
{
  *out = NULL;
  int rc0 = check_sql(s, sql);
  if (rc0)
    return rc0;
  if (n > PMCP__PG_MAXP)
    return pmcp_store_set_error(s, PMCP_EINVAL, "service query: too many parameters (%d)", n);
  int rc = pmcp__pg_ready(s, g, 0);
  if (rc)
    return rc;
  const char *kept = NULL;
  for (size_t i = 0; i < g->n_db_sql && !kept; i++)
    if (strcmp(g->db_sql[i], sql) == 0)
      kept = g->db_sql[i];
  if (!kept && g->n_db_sql < sizeof g->db_sql / sizeof g->db_sql[0] &&
      (g->db_sql[g->n_db_sql] = strdup(sql)) != NULL)
    kept = g->db_sql[g->n_db_sql++];
  rc = kept ? pmcp__pg_prep(s, g, kept, out) : pmcp__pg_prep_dyn(s, g, sql, out);
  if (rc)
    return rc;
  /* A placeholder beyond n is refused, so a typo cannot bind NULL. */
  if ((*out)->sqlparams > n) {
    int k = (*out)->sqlparams;
    release(*out);
    *out = NULL;
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "service query: placeholder $%d has no parameter (%d given)", k, n);
  }
  for (int i = 0; i < n; i++)
    pmcp__pg_bind_opt(*out, i + 1, params[i]);
  return 0;
}

static int pg_db_exec(pmcp_store *s, void *ctx, const char *sql, int n,
                      const char *const *params, int64_t *changes)
{
  pmcp__pg *g = PG(ctx);
  pmcp__pg_stmt *st = NULL;
  int rc = prepare(s, g, sql, n, params, &st);
  if (rc == 0) {
    if (pmcp__pg_step(st) == PG_ERR)
      rc = pmcp__pg_err(s, g, "service update");
    else if (changes)
      *changes = pmcp__pg_changes(st);
  }
  release(st);
  return rc;
}

static int pg_db_query(pmcp_store *s, void *ctx, const char *sql, int n,
                       const char *const *params, pmcp__db_res **out)
{
  pmcp__pg *g = PG(ctx);
  pmcp__pg_stmt *st = NULL;
  int rc = prepare(s, g, sql, n, params, &st);
  int src = PG_DONE;
  if (rc == 0 && (src = pmcp__pg_step(st)) == PG_ERR)
    rc = pmcp__pg_err(s, g, "service query");
  if (rc == 0 && pmcp__db_res_new(out, st->res ? (size_t)PQnfields(st->res) : 0))
    rc = pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  size_t ncols = rc == 0 && st->res ? (size_t)PQnfields(st->res) : 0;
  while (rc == 0 && src == PG_ROW) {
    for (size_t c = 0; c < ncols && rc == 0; c++) {
      const char *v = pmcp__pg_text(st, (int)c);
      size_t len = v ? (size_t)PQgetlength(st->res, st->row, (int)c) : 0;
      if (pmcp__db_res_add(*out, v, len))
        rc = pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
    }
    src = pmcp__pg_step(st);
  }
  release(st);
  return rc;
}

static int pg_db_tenant(pmcp_store *s, void *ctx, int64_t tenant)
{
  return pmcp__pg_ready(s, PG(ctx), tenant);
}

const pmcp__db_ops pmcp__pg_db_ops = {pg_db_exec, pg_db_query, pg_db_tenant, NULL};
