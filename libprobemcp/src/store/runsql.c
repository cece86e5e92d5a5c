/* SPDX-License-Identifier: MIT */
/* runsql.h's helpers: the few places where the run table and the exact
 * page need a backend's own state (which backend a store is, its
 * parameter limit, its transaction, PostgreSQL's table statistics), and
 * the lookups both share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/runsql.h"
#include "store/sq.h"
#ifdef PMCP_HAVE_POSTGRES
#include "store/pg.h"
#endif
#include "store/ws_scope.h"
#include "util/cnum.h"

pmcp__sql *pmcp__rt_sql(pmcp_store *s)
{
  if (!s || s->magic != PMCP__STORE_MAGIC || !s->ops.name)
    return NULL;
  if (!strcmp(s->ops.name, "sqlite"))
    return PMCP__SQL(s->ctx);
#ifdef PMCP_HAVE_POSTGRES
  if (!strcmp(s->ops.name, "postgres"))
    return PMCP__SQL(s->ctx);
#endif
  return NULL;
}

int pmcp__rt_maxp(const pmcp__sql *c)
{
#ifdef PMCP_HAVE_POSTGRES
  if (c->ops->pg)
    return PMCP__PG_MAXP;
#endif
  (void)c;
  return 400;
}

#ifdef PMCP_HAVE_POSTGRES
/* PostgreSQL plans these reads from table statistics, which a bulk import
 * leaves stale or absent (a never-analyzed table reads as nearly empty:
 * nested loops over 100,000 runs). autovacuum catches up within its
 * naptime (a minute) when it runs at all; until then a list_runs call
 * refreshes them itself, cheaply: one look at the counters, and ANALYZE of
 * the tables whose rows changed since their last analyze by more than
 * 1,000 plus half their live rows (the planner's picture off by half or
 * more). A table this role does not own cannot be analyzed by it (the
 * service role: its owner's migrations and autovacuum keep it), so only
 * owned tables are named. The counters reach the statistics views a
 * moment after a writer commits: at worst one call plans on old figures. */
static int fresh_stats(pmcp_store *s, pmcp__sql *c)
{
  static const char sql[] =
      "SELECT string_agg(quote_ident(t.relname), ', ') FROM pg_stat_user_tables t"
      " JOIN pg_class k ON k.oid=t.relid WHERE t.schemaname=current_schema() AND"
      " t.relname IN ('runs', 'attributes', 'series', 'tags') AND"
      " t.n_mod_since_analyze > 1000 + t.n_live_tup / 2 AND pg_has_role(k.relowner, 'MEMBER')";
  pmcp__stmt *st;
  int rc = pmcp__sql_prep(s, c, sql, &st);
  if (rc)
    return rc;
  int src = pmcp__st_step(st);
  char cmd[96] = "";
  if (src == PMCP__ROW && pmcp__st_text(st, 0))
    snprintf(cmd, sizeof cmd, "ANALYZE %s", pmcp__st_text(st, 0));
  else if (src != PMCP__ROW && src != PMCP__DONE)
    rc = pmcp__st_err(s, st, "read table statistics");
  pmcp__st_reset(st);
  return rc || !cmd[0] ? rc : pmcp__sql_exec(s, c, cmd);
}
#endif

int pmcp__rt_read_begin(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, int *own)
{
  *own = 0;
  int rc = pmcp__sql_ready(s, c, t);
  if (rc)
    return rc;
  int open;
#ifdef PMCP_HAVE_POSTGRES
  if (c->ops->pg) {
    pmcp__pg *g = (pmcp__pg *)c;
    open = g->in_txn || g->in_scope;
  } else
#endif
  {
    pmcp__sq *q = (pmcp__sq *)c;
    open = q->in_txn || !sqlite3_get_autocommit(q->db);
  }
  if (open)
    return pmcp__sql_flush(s, c); /* points the caller's transaction holds back count */
#ifdef PMCP_HAVE_POSTGRES
  if (c->ops->pg && (rc = fresh_stats(s, c)))
    return rc;
#endif
  /* one snapshot for every statement of the read */
  rc = pmcp__sql_exec(s, c, PMCP__SQL_PICK(c, "BEGIN", "BEGIN ISOLATION LEVEL REPEATABLE READ"));
  *own = rc == 0;
  return rc;
}

int pmcp__rt_read_end(pmcp_store *s, pmcp__sql *c, int own, int rc)
{
  if (!own)
    return rc;
  /* a read: nothing to keep, and a failed COMMIT loses nothing */
  int rc2 = pmcp__sql_exec(s, c, "COMMIT");
  if (rc2)
    pmcp__sql_exec(s, c, "ROLLBACK");
  return rc ? rc : rc2;
}

double pmcp__rt_listed(double d)
{
  char b[40];
  pmcp__c_snprintf(b, sizeof b, "%.15g", d);
  return pmcp__c_strtod(b, NULL);
}

int pmcp__rt_project_id(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *slug,
                        int64_t *out)
{
  *out = 0;
  pmcp__stmt *st = NULL;
  static const char sql[] = "SELECT id FROM projects WHERE tenant_id=?1 AND slug=?2";
  int rc = pmcp__sql_prep(s, c, sql, &st);
  if (rc)
    return rc;
  pmcp__st_bind_int64(st, 1, t.id);
  pmcp__st_bind_text(st, 2, slug);
  int src = pmcp__st_step(st);
  if (src == PMCP__ROW)
    *out = pmcp__st_int64(st, 0);
  else if (src != PMCP__DONE)
    rc = pmcp__st_err(s, st, "read the run table");
  pmcp__st_reset(st);
  if (rc)
    return rc;
  /* A project outside the call's workspace is a missing one. */
  int rc2 = *out ? pmcp__ws_check(s, t, "projects", *out) : PMCP_ENOTFOUND;
  if (rc2 && rc2 != PMCP_ENOTFOUND)
    return rc2;
  if (rc2) {
    *out = 0;
    return pmcp_store_set_error(s, PMCP_ENOTFOUND, "project '%s' not found", slug);
  }
  return 0;
}

int pmcp__store_project_ws(pmcp_store *s, pmcp_tenant t, const char *slug, char *ws,
                           size_t size)
{
  ws[0] = '\0';
  pmcp__sql *c = pmcp__rt_sql(s);
  if (!c)
    return PMCP_EUNSUPPORTED;
  int own = 0;
  int64_t id = 0;
  int rc = pmcp__rt_read_begin(s, c, t, &own);
  if (rc)
    return rc;
  if (!(rc = pmcp__rt_project_id(s, c, t, slug, &id))) {
    static const char sql[] = "SELECT w.slug FROM projects p JOIN workspaces w"
                              " ON w.id=p.workspace_id WHERE p.id=?1";
    pmcp__stmt *st = NULL;
    if (!(rc = pmcp__sql_prep(s, c, sql, &st))) {
      pmcp__st_bind_int64(st, 1, id);
      int src = pmcp__st_step(st);
      const char *w = src == PMCP__ROW ? pmcp__st_text(st, 0) : NULL;
      if (w)
        snprintf(ws, size, "%s", w);
      else if (src == PMCP__ROW || src == PMCP__DONE)
        rc = pmcp_store_set_error(s, PMCP_ENOTFOUND, "project '%s' not found", slug);
      else
        rc = pmcp__st_err(s, st, "read the project");
      pmcp__st_reset(st);
    }
  }
  return pmcp__rt_read_end(s, c, own, rc);
}
