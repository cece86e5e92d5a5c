/* SPDX-License-Identifier: MIT */
/* query_sql's `metric_points`: every point of the tenant's float series as
 * an SQL row (series_id, step, time, value), decoded from the compressed
 * blocks while the statement runs. A read-only virtual table on the
 * guarded connection of query_sql (research/sql_guard.c):
 *  - tenant-scoped: its block query joins series on the tenant fixed when
 *    the table was made, so no constraint can reach another tenant's rows;
 *  - read-only: no xUpdate, so SQLite refuses every write;
 *  - under the same caps as the statement: its inner block query runs on
 *    the same connection, so the progress handler counts its steps and
 *    stops it on time, step cap or cancellation;
 *  - `series_id = ?` and step bounds are pushed down, so only the blocks
 *    they touch are read and decoded.
 * Non-finite values come out as SQL NULL (NaN) or +-Inf: aggregates such as
 * avg() skip NULLs, so count(value) counts the finite points. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sq.h"

typedef struct pv_aux {
  int64_t tenant;
  int *internal; /* set while the table runs its own block query */
} pv_aux;

typedef struct pv_tab {
  sqlite3_vtab base;
  sqlite3 *db;
  pv_aux *aux;
} pv_tab;

typedef struct pv_cur {
  sqlite3_vtab_cursor base;
  sqlite3_stmt *blocks;
  pmcp__sq_dec dec;
  pmcp_point *pts;
  size_t n, i;
  int64_t series, lo, hi, rowid;
  int eof;
} pv_cur;

enum { COL_SERIES, COL_STEP, COL_TIME, COL_VALUE };
enum { IDX_SERIES = 1, IDX_LO = 2, IDX_HI = 4 };

static int pv_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **err)
{
  (void)argc;
  (void)argv;
  (void)err;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(series_id INTEGER, step INTEGER,"
                                    " time INTEGER, value REAL)");
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  pv_tab *t = sqlite3_malloc(sizeof *t);
  if (!t)
    return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  t->db = db;
  t->aux = aux;
  *out = &t->base;
  return SQLITE_OK;
}

/* A distinct xCreate keeps the module from also being an eponymous table
 * in main (only temp's table, made once per connection, exists). */
static int pv_create(sqlite3 *db, void *aux, int argc, const char *const *argv,
                     sqlite3_vtab **out, char **err)
{
  return pv_connect(db, aux, argc, argv, out, err);
}

static int pv_disconnect(sqlite3_vtab *v)
{
  sqlite3_free(v);
  return SQLITE_OK;
}

static int pv_best_index(sqlite3_vtab *v, sqlite3_index_info *ix)
{
  (void)v;
  int series = -1, lo = -1, hi = -1;
  for (int i = 0; i < ix->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &ix->aConstraint[i];
    if (!c->usable)
      continue;
    if (c->iColumn == COL_SERIES && c->op == SQLITE_INDEX_CONSTRAINT_EQ)
      series = i;
    else if (c->iColumn == COL_STEP && (c->op == SQLITE_INDEX_CONSTRAINT_GE ||
                                        c->op == SQLITE_INDEX_CONSTRAINT_GT ||
                                        c->op == SQLITE_INDEX_CONSTRAINT_EQ) && lo < 0)
      lo = i;
    else if (c->iColumn == COL_STEP && (c->op == SQLITE_INDEX_CONSTRAINT_LE ||
                                        c->op == SQLITE_INDEX_CONSTRAINT_LT) && hi < 0)
      hi = i;
  }
  /* SQLite re-checks every constraint on the rows (omit stays 0), so the
   * bounds only narrow which blocks are read. */
  /* A scan of every point costs the most there is: with a join on
   * series_id, SQLite should loop over the (few) series and look each
   * one's points up, not the other way round. */
  int arg = 1, num = 0;
  double cost = 1e12;
  if (series >= 0) {
    ix->aConstraintUsage[series].argvIndex = arg++;
    num |= IDX_SERIES;
    cost = 1e3;
  }
  if (lo >= 0) {
    ix->aConstraintUsage[lo].argvIndex = arg++;
    num |= IDX_LO;
    cost /= 2;
  }
  if (hi >= 0) {
    ix->aConstraintUsage[hi].argvIndex = arg++;
    num |= IDX_HI;
    cost /= 2;
  }
  ix->idxNum = num;
  ix->estimatedCost = cost;
  ix->estimatedRows = (sqlite3_int64)cost;
  return SQLITE_OK;
}

static int pv_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
  (void)v;
  pv_cur *c = sqlite3_malloc(sizeof *c);
  if (!c)
    return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  c->eof = 1;
  *out = &c->base;
  return SQLITE_OK;
}

static int pv_close(sqlite3_vtab_cursor *cur)
{
  pv_cur *c = (pv_cur *)cur;
  sqlite3_finalize(c->blocks);
  pmcp__sq_dec_free(&c->dec);
  sqlite3_free(c);
  return SQLITE_OK;
}

static pv_tab *tab_of(pv_cur *c)
{
  return (pv_tab *)c->base.pVtab;
}

/* Steps the block query with the table's own reads allowed. */
static int blocks_step(pv_cur *c)
{
  pv_tab *t = tab_of(c);
  *t->aux->internal = 1;
  int src = sqlite3_step(c->blocks);
  *t->aux->internal = 0;
  return src;
}

static int set_error(pv_cur *c, const char *msg)
{
  pv_tab *t = tab_of(c);
  sqlite3_free(t->base.zErrMsg);
  t->base.zErrMsg = sqlite3_mprintf("%s", msg);
  return SQLITE_ERROR;
}

/* Moves to the next point in range, decoding blocks as needed. */
static int advance(pv_cur *c)
{
  for (;;) {
    while (c->i < c->n) {
      const pmcp_point *p = &c->pts[c->i];
      if (p->step >= c->lo && p->step <= c->hi)
        return SQLITE_OK;
      c->i++;
    }
    int src = blocks_step(c);
    if (src == SQLITE_DONE) {
      c->eof = 1;
      return SQLITE_OK;
    }
    if (src != SQLITE_ROW)
      return src; /* interrupted by the progress handler, or an error */
    c->series = sqlite3_column_int64(c->blocks, 0);
    int rc = pmcp__sq_dec_block(&c->dec, sqlite3_column_blob(c->blocks, 1),
                                (size_t)sqlite3_column_bytes(c->blocks, 1), 0, &c->pts, &c->n);
    if (rc) {
      c->n = 0;
      return set_error(c, rc == PMCP_ENOMEM ? "out of memory" : "a metric block is corrupt");
    }
    c->i = 0;
  }
}

static int pv_filter(sqlite3_vtab_cursor *cur, int num, const char *str, int argc,
                     sqlite3_value **argv)
{
  (void)str;
  (void)argc;
  pv_cur *c = (pv_cur *)cur;
  pv_tab *t = tab_of(c);
  static const char sql_all[] =
      "SELECT b.series_id, b.data FROM main.series s JOIN main.metric_blocks b"
      " ON b.series_id=s.id WHERE s.tenant_id=?1 AND s.kind='float' AND b.step_max>=?3"
      " AND b.step_min<=?4 ORDER BY b.series_id, b.seq";
  static const char sql_one[] =
      "SELECT b.series_id, b.data FROM main.series s JOIN main.metric_blocks b"
      " ON b.series_id=s.id WHERE s.tenant_id=?1 AND s.kind='float' AND s.id=?2"
      " AND b.step_max>=?3 AND b.step_min<=?4 ORDER BY b.seq";
  sqlite3_finalize(c->blocks);
  c->blocks = NULL;
  c->n = c->i = 0;
  c->eof = 0;
  c->lo = INT64_MIN;
  c->hi = INT64_MAX;
  int a = 0;
  int64_t series = 0;
  if (num & IDX_SERIES) {
    sqlite3_value *v = argv[a++];
    if (sqlite3_value_numeric_type(v) != SQLITE_INTEGER) {
      c->eof = 1; /* no integer id equals it */
      return SQLITE_OK;
    }
    series = sqlite3_value_int64(v);
  }
  /* bounds: integers as they are; reals rounded outwards (the rows are
   * filtered again by SQLite, so a wider range is always right) */
  if (num & IDX_LO) {
    sqlite3_value *v = argv[a++];
    int ty = sqlite3_value_numeric_type(v);
    if (ty == SQLITE_INTEGER)
      c->lo = sqlite3_value_int64(v);
    else if (ty == SQLITE_FLOAT && sqlite3_value_double(v) > -9.2e18)
      c->lo = sqlite3_value_double(v) >= 9.2e18 ? INT64_MAX
                                                : (int64_t)sqlite3_value_double(v) - 1;
  }
  if (num & IDX_HI) {
    sqlite3_value *v = argv[a++];
    int ty = sqlite3_value_numeric_type(v);
    if (ty == SQLITE_INTEGER)
      c->hi = sqlite3_value_int64(v);
    else if (ty == SQLITE_FLOAT && sqlite3_value_double(v) < 9.2e18)
      c->hi = sqlite3_value_double(v) <= -9.2e18 ? INT64_MIN
                                                 : (int64_t)sqlite3_value_double(v) + 1;
  }
  *t->aux->internal = 1;
  int rc = sqlite3_prepare_v2(t->db, num & IDX_SERIES ? sql_one : sql_all, -1, &c->blocks,
                              NULL);
  *t->aux->internal = 0;
  if (rc != SQLITE_OK)
    return set_error(c, "the metric blocks cannot be read");
  sqlite3_bind_int64(c->blocks, 1, t->aux->tenant);
  if (num & IDX_SERIES)
    sqlite3_bind_int64(c->blocks, 2, series);
  sqlite3_bind_int64(c->blocks, 3, c->lo);
  sqlite3_bind_int64(c->blocks, 4, c->hi);
  return advance(c);
}

static int pv_next(sqlite3_vtab_cursor *cur)
{
  pv_cur *c = (pv_cur *)cur;
  c->i++;
  c->rowid++;
  return advance(c);
}

static int pv_eof(sqlite3_vtab_cursor *cur)
{
  return ((pv_cur *)cur)->eof;
}

static int pv_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
  pv_cur *c = (pv_cur *)cur;
  const pmcp_point *p = &c->pts[c->i];
  switch (col) {
  case COL_SERIES:
    sqlite3_result_int64(ctx, c->series);
    break;
  case COL_STEP:
    sqlite3_result_int64(ctx, p->step);
    break;
  case COL_TIME:
    if (p->time_ms)
      sqlite3_result_int64(ctx, p->time_ms);
    else
      sqlite3_result_null(ctx);
    break;
  default:
    sqlite3_result_double(ctx, p->value); /* NaN becomes NULL */
    break;
  }
  return SQLITE_OK;
}

static int pv_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
  *out = ((pv_cur *)cur)->rowid;
  return SQLITE_OK;
}

static const sqlite3_module pv_module = {
  .iVersion = 0,
  .xCreate = pv_create,
  .xConnect = pv_connect,
  .xBestIndex = pv_best_index,
  .xDisconnect = pv_disconnect,
  .xDestroy = pv_disconnect,
  .xOpen = pv_open,
  .xClose = pv_close,
  .xFilter = pv_filter,
  .xNext = pv_next,
  .xEof = pv_eof,
  .xColumn = pv_column,
  .xRowid = pv_rowid,
};

int pmcp__sq_points_vtab(sqlite3 *db, int64_t tenant, int *internal, const char *name)
{
  pv_aux *aux = malloc(sizeof *aux);
  if (!aux)
    return PMCP_ENOMEM;
  aux->tenant = tenant;
  aux->internal = internal;
  if (sqlite3_create_module_v2(db, "pmcp_metric_points", &pv_module, aux, free) != SQLITE_OK)
    return PMCP_ESTORE; /* SQLite called free(aux) */
  char sql[160];
  snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE temp.%s USING pmcp_metric_points", name);
  return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : PMCP_ESTORE;
}
