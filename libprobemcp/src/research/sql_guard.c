/* SPDX-License-Identifier: MIT */
/* The guarded read-only SQL connection of `query_sql` (see sql_guard.h). */
#include "research/sql_guard.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "research/sql_proxy.h"
#include "store/sq.h"
#include "store/ws_scope.h"
#include "util/buf.h"
#include "util/sql_lex.h"

/* The readable tables: each a TEMP view over main.<table> that keeps the
 * tenant's rows and leaves out internals
 * (tenant ids, blobs of compressed points, secrets, file contents); the
 * tenant id is appended to each. Deleted runs and trashed experiments, and
 * the rows hanging off them, are left out as every tool leaves them out;
 * deleted_runs and deleted_experiments hold them (as PostgreSQL's views,
 * store/pg_query.c). */
#define DEAD_RUNS "(SELECT id FROM main.runs WHERE deleted<>0)"
#define DEAD_OWNER                                                            \
  "((owner_kind='run' AND owner_id IN " DEAD_RUNS ") OR (owner_kind='experiment'" \
  " AND owner_id IN (SELECT id FROM main.experiments WHERE deleted<>0)))"
static const struct {
  const char *name;
  const char *select;
} views[] = {
  {"workspaces", "SELECT id, slug, name, description, created FROM main.workspaces"
                 " WHERE tenant_id="},
  {"projects", "SELECT id, workspace_id, slug, name, description, readme, created"
               " FROM main.projects WHERE tenant_id="},
  {"experiments", "SELECT id, project_id, slug, name, description, config, deleted, created"
                  " FROM main.experiments WHERE deleted=0 AND tenant_id="},
  {"deleted_experiments", "SELECT id, project_id, slug, name, description, config, deleted,"
                          " created FROM main.experiments WHERE deleted<>0 AND tenant_id="},
  {"runs", "SELECT id, project_id, experiment_id, slug, name, description, status, created,"
           " started, ended, deleted, command, environment, git_commit, git_branch,"
           " git_remote, git_dirty FROM main.runs WHERE deleted=0 AND tenant_id="},
  {"deleted_runs", "SELECT id, project_id, experiment_id, slug, name, description, status,"
                   " created, started, ended, deleted, command, environment, git_commit,"
                   " git_branch, git_remote, git_dirty FROM main.runs WHERE deleted<>0"
                   " AND tenant_id="},
  {"attributes", "SELECT owner_kind, owner_id, path, type, v_text, v_int, v_real"
                 " FROM main.attributes WHERE tenant_id="},
  {"tags", "SELECT owner_kind, owner_id, tag FROM main.tags WHERE tenant_id="},
  {"run_events", "SELECT id, run_id, time, kind, message FROM main.run_events"
                 " WHERE run_id NOT IN " DEAD_RUNS " AND tenant_id="},
  {"series", "SELECT id, run_id, key, labels, kind, scale, count, nonfinite, step_min,"
             " step_max, time_min, time_max, first, last, vmin, vmax, vsum"
             " FROM main.series WHERE run_id NOT IN " DEAD_RUNS " AND tenant_id="},
  /* every point, decoded from the blocks (sq_points_vtab.c) */
  {"metric_points", NULL},
  {"metric_blocks", "SELECT b.series_id, b.seq, b.n, b.nonfinite, b.step_min, b.step_max,"
                    " b.time_min, b.time_max, b.vmin, b.vmax, b.vsum, b.first, b.last"
                    " FROM main.metric_blocks b JOIN main.series s ON s.id=b.series_id"
                    " WHERE s.tenant_id="},
  {"notes", "SELECT id, slug, owner_kind, owner_id, kind, title, status, created, updated,"
            " version FROM main.notes WHERE NOT " DEAD_OWNER " AND tenant_id="},
  {"note_versions", "SELECT note_id, version, title, body, summary, status, author, via,"
                    " created FROM main.note_versions WHERE tenant_id="},
  {"artifacts", "SELECT id, slug, name, owner_kind, owner_id, shared, description, created,"
                " latest FROM main.artifacts WHERE NOT " DEAD_OWNER " AND tenant_id="},
  {"artifact_versions", "SELECT artifact_id, version, path, media_type, description, uri,"
                        " sha256, size, created FROM main.artifact_versions"
                        " WHERE tenant_id="},
  {"datasets", "SELECT id, slug, name, project_id, registered, description, uri, created"
               " FROM main.datasets WHERE tenant_id="},
  {"dataset_versions", "SELECT dataset_id, version, uri, sha256, size, rows, description,"
                       " created FROM main.dataset_versions WHERE tenant_id="},
  {"checkpoints", "SELECT id, slug, run_id, step, best, stored, uri, size, metric, value,"
                  " created FROM main.checkpoints WHERE run_id NOT IN " DEAD_RUNS " AND tenant_id="},
  {"sources", "SELECT id, slug, provider, kind, uri, version, description, created"
              " FROM main.sources WHERE tenant_id="},
  {"lineage", "SELECT from_ref, to_ref, relation, steps, created FROM main.lineage"
              " WHERE tenant_id="},
  {"groups", "SELECT id, slug, name, experiment_id, description, created FROM main.groups"
             " WHERE tenant_id="},
  {"group_runs", "SELECT group_id, run_id FROM main.group_runs"
                 " WHERE run_id NOT IN " DEAD_RUNS " AND tenant_id="},
  {"trials", "SELECT id, slug, run_id, name, params, status, score, created FROM main.trials"
             " WHERE run_id NOT IN " DEAD_RUNS " AND tenant_id="},
  {"sessions", "SELECT id, slug, title, agent, started, ended, created FROM main.sessions"
               " WHERE tenant_id="},
  {"papers", "SELECT arxiv_id, title, abstract, authors, categories, published, updated, doi,"
             " journal_ref FROM main.papers WHERE tenant_id="},
  {"project_papers", "SELECT project_id, arxiv_id, note FROM main.project_papers"
                     " WHERE tenant_id="},
};

#define N_VIEWS (sizeof views / sizeof views[0])

/* The hidden name of the points table when a scoped view wraps it. */
#define POINTS_ALL "metric_points_all"

const char *pmcp__sqlg_table(size_t i)
{
  return i < N_VIEWS ? views[i].name : NULL;
}

struct pmcp__sqlg {
  sqlite3 *db;          /* the agent's: in memory, the proxy tables only */
  sqlite3 *inner;       /* private: the store file and the scoped views */
  const char *names[N_VIEWS + 1]; /* the proxied views, NULL-terminated */
  pmcp__sqlg_limits lim;
  int guarded;          /* the authorizer judges */
  int internal;         /* metric_points is reading its blocks */
  int scoped;           /* the views keep one workspace's rows */
  char denied[200];     /* why the last prepare was denied */
  /* the running statement's caps */
  struct timespec deadline;
  int64_t cpu0;         /* the thread's CPU time when armed, ms */
  int64_t steps;
  int stop;             /* 1 CPU time, 2 steps, 3 cancelled, 4 elapsed time */
  pmcp_call *call;
};

sqlite3 *pmcp__sqlg_db(pmcp__sqlg *g)
{
  return g->db;
}

static int is_view(const char *name)
{
  for (size_t i = 0; name && i < N_VIEWS; i++)
    if (!strcmp(views[i].name, name))
      return 1;
  return 0;
}

static const char *const denied_functions[] = {"load_extension", "fts3_tokenizer",
                                               "readfile", "writefile", "edit", NULL};

/* Table-valued functions that only read their arguments. */
static int is_value_function(const char *name)
{
  return name && (!strcmp(name, "json_each") || !strcmp(name, "json_tree"));
}

/* The authorizer of the agent's connection. It is not what keeps other
 * tenants' rows out of reach (that connection holds none: sql_proxy.h);
 * it keeps the statement a single read and gives refusals their words. */
static int authorize(void *ud, int action, const char *a, const char *b, const char *db,
                     const char *accessor)
{
  pmcp__sqlg *g = ud;
  (void)accessor; /* the name of a view or a CTE alike: proves nothing */
  if (!g->guarded)
    return SQLITE_OK;
  switch (action) {
  case SQLITE_SELECT:
  case SQLITE_RECURSIVE:
    return SQLITE_OK;
  case SQLITE_READ:
    /* the proxy tables, by their real schema and name */
    if (db && !strcmp(db, "temp") && is_view(a))
      return SQLITE_OK;
    /* common table expressions and subqueries belong to no database */
    if (!db)
      return SQLITE_OK;
    if (is_value_function(a))
      return SQLITE_OK;
    if (!g->denied[0] && a && !strncmp(a, "pragma_", 7))
      snprintf(g->denied, sizeof g->denied,
               "table '%.64s' is not readable: PRAGMA functions are not allowed; call "
               "query_sql with no arguments to list the tables and columns", a);
    if (!g->denied[0] && a && !strncmp(a, "sqlite_", 7))
      snprintf(g->denied, sizeof g->denied,
               "the schema tables are not readable: call query_sql with no arguments to list "
               "the tables and columns");
    if (!g->denied[0])
      snprintf(g->denied, sizeof g->denied,
               "table '%.64s' is not readable: query_sql reads only the tables it lists "
               "(call it with no arguments), by their plain names", a ? a : "?");
    return SQLITE_DENY;
  case SQLITE_FUNCTION:
    for (size_t i = 0; denied_functions[i]; i++)
      if (b && !strcasecmp(b, denied_functions[i])) {
        snprintf(g->denied, sizeof g->denied, "function %.40s() is not allowed", b);
        return SQLITE_DENY;
      }
    return SQLITE_OK;
  default:
    break;
  }
  /* a table-valued function other than json_each/json_tree makes its
   * table in the schema on first use */
  if (!g->denied[0] && action == SQLITE_UPDATE && a && !strcmp(a, "sqlite_master"))
    snprintf(g->denied, sizeof g->denied,
             "this table-valued function is not allowed: query_sql reads the tables it lists, "
             "json_each() and json_tree()");
  if (!g->denied[0]) {
    const char *what = "this statement";
    switch (action) {
    case SQLITE_INSERT: case SQLITE_UPDATE: case SQLITE_DELETE:
      what = "writing"; break;
    case SQLITE_PRAGMA: what = "PRAGMA"; break;
    case SQLITE_ATTACH: case SQLITE_DETACH: what = "ATTACH/DETACH"; break;
    case SQLITE_TRANSACTION: case SQLITE_SAVEPOINT: what = "a transaction"; break;
    case SQLITE_CREATE_INDEX: case SQLITE_CREATE_TABLE: case SQLITE_CREATE_TEMP_INDEX:
    case SQLITE_CREATE_TEMP_TABLE: case SQLITE_CREATE_TEMP_TRIGGER:
    case SQLITE_CREATE_TEMP_VIEW: case SQLITE_CREATE_TRIGGER: case SQLITE_CREATE_VIEW:
    case SQLITE_CREATE_VTABLE: case SQLITE_DROP_INDEX: case SQLITE_DROP_TABLE:
    case SQLITE_DROP_TEMP_INDEX: case SQLITE_DROP_TEMP_TABLE: case SQLITE_DROP_TEMP_TRIGGER:
    case SQLITE_DROP_TEMP_VIEW: case SQLITE_DROP_TRIGGER: case SQLITE_DROP_VIEW:
    case SQLITE_DROP_VTABLE: case SQLITE_ALTER_TABLE:
      what = "changing the schema"; break;
    case SQLITE_ANALYZE: case SQLITE_REINDEX: what = "ANALYZE/REINDEX"; break;
    default: break;
    }
    snprintf(g->denied, sizeof g->denied,
             "%s is not allowed: query_sql runs one read-only SELECT over the listed tables",
             what);
  }
  return SQLITE_DENY;
}

static int64_t ms_left(const struct timespec *deadline)
{
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)(deadline->tv_sec - now.tv_sec) * 1000 +
         (deadline->tv_nsec - now.tv_nsec) / 1000000;
}

static int64_t thread_cpu_ms(void)
{
  struct timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

#define PROGRESS_OPS 1000
#define WALL_FACTOR 6

static int progress(void *ud)
{
  pmcp__sqlg *g = ud;
  g->steps += PROGRESS_OPS;
  if (g->steps > g->lim.max_steps) {
    g->stop = 2;
    return 1;
  }
  /* The cap is the statement's own CPU time (a busy machine does not cut
   * a statement short); elapsed time has a backstop of WALL_FACTOR times
   * the cap. A statement runs on one thread, the one that armed it. */
  if (thread_cpu_ms() - g->cpu0 > g->lim.time_ms) {
    g->stop = 1;
    return 1;
  }
  if (ms_left(&g->deadline) < 0) {
    g->stop = 4;
    return 1;
  }
  if (g->call && pmcp_call_cancelled(g->call)) {
    g->stop = 3;
    return 1;
  }
  return 0;
}

void pmcp__sqlg_free(pmcp__sqlg *g)
{
  if (!g)
    return;
  sqlite3_close(g->db); /* first: its tables read from the private one */
  sqlite3_close(g->inner);
  free(g);
}

/* Scoped to one workspace (pmcp_store_scope()): the condition each view
 * adds (ws_scope.h, shared with PostgreSQL's views), over the view's own
 * columns, the store's main.<table> and the other (already scoped) views,
 * which unqualified names inside a TEMP view resolve to. 0: none (papers
 * are lab-wide). */
static int scope_pred(pmcp_buf *out, const char *view)
{
  return pmcp__ws_view_where(out, view, "main.", "");
}

int pmcp__sqlg_open(pmcp__sqlg **out, pmcp_store *store, pmcp_tenant t,
                    const pmcp__sqlg_limits *lim, char *err, size_t errlen)
{
  int64_t tenant = t.id;
  *out = NULL;
  if (errlen)
    err[0] = '\0';
  pmcp__sqlg *g = calloc(1, sizeof *g);
  if (!g)
    return PMCP_ENOMEM;
  if (lim)
    g->lim = *lim;
  if (g->lim.time_ms <= 0)
    g->lim.time_ms = 5000;
  if (g->lim.max_steps <= 0)
    g->lim.max_steps = 2000000000;
  if (g->lim.max_value_bytes <= 0)
    g->lim.max_value_bytes = 1 << 20;
  int rc = pmcp__store_sqlite_ro_connection(store, &g->inner);
  if (rc) {
    snprintf(err, errlen, rc == PMCP_EUNSUPPORTED
                              ? "query_sql needs the SQLite store; this store does not offer SQL"
                              : "the store cannot be opened for SQL");
    free(g);
    return rc;
  }
  /* TEMP views need a writable temp schema; keep it in memory */
  sqlite3_exec(g->inner, "PRAGMA temp_store=MEMORY", NULL, NULL, NULL);
  g->scoped = t.workspace != 0;
  for (size_t i = 0; i < N_VIEWS && rc == 0; i++) {
    pmcp_buf sql = PMCP_BUF_INIT;
    if (!views[i].select) {
      /* Scoped: the points of the workspace's series only, through a view
       * over the tenant's points table under a name nobody may read. */
      pmcp_buf pred = PMCP_BUF_INIT;
      if (pmcp__sq_points_vtab(g->inner, tenant, &g->internal,
                               g->scoped ? POINTS_ALL : views[i].name))
        rc = PMCP_ESTORE;
      else if (g->scoped && scope_pred(&pred, views[i].name) != 1)
        rc = PMCP_ENOMEM;
      else if (g->scoped)
        pmcp__buf_printf(&sql, "CREATE TEMP VIEW %s AS SELECT * FROM temp." POINTS_ALL
                               " WHERE %s", views[i].name, pred.ptr);
      pmcp_buf_dispose(&pred);
    } else {
      pmcp__buf_printf(&sql, "CREATE TEMP VIEW %s AS %s%lld", views[i].name, views[i].select,
                       (long long)tenant);
      pmcp_buf pred = PMCP_BUF_INIT;
      int has = g->scoped ? scope_pred(&pred, views[i].name) : 0;
      char *inl = has == 1 ? pmcp__ws_inline(pred.ptr, t) : NULL;
      if (has < 0 || (has == 1 && !inl))
        rc = PMCP_ENOMEM;
      else if (inl)
        pmcp__buf_printf(&sql, " AND (%s)", inl);
      free(inl);
      pmcp_buf_dispose(&pred);
    }
    if (!rc && sql.ptr && sqlite3_exec(g->inner, sql.ptr, NULL, NULL, NULL) != SQLITE_OK)
      rc = PMCP_ESTORE;
    if (!rc && !sql.ptr && (views[i].select || g->scoped))
      rc = PMCP_ENOMEM;
    pmcp_buf_dispose(&sql);
    if (rc)
      snprintf(err, errlen, "the SQL tables cannot be prepared");
  }
  /* The agent's connection: a database of its own in memory, whose only
   * tables are the proxies of the views above. */
  for (size_t i = 0; i < N_VIEWS; i++)
    g->names[i] = views[i].name;
  if (!rc && sqlite3_open_v2(":memory:", &g->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MEMORY |
                                 SQLITE_OPEN_NOMUTEX,
                             NULL) != SQLITE_OK)
    rc = PMCP_ESTORE;
  /* A sort spills to a temporary file in runs of the page cache's size;
   * its merge then holds one row per run, so small runs of large rows
   * take memory that grows with the result (2 MB runs: 70 MB for 200 MB of
   * sorted rows). 16 MB runs keep it near the run size. */
  if (!rc)
    sqlite3_exec(g->db, "PRAGMA cache_size=-16384", NULL, NULL, NULL);
  if (!rc && pmcp__sqlproxy_attach(g->db, g->inner, g->names) != SQLITE_OK)
    rc = PMCP_ESTORE;
  /* json_each and json_tree make their (eponymous) tables on first use, a
   * schema change the authorizer would refuse: make them now */
  if (!rc && sqlite3_exec(g->db, "SELECT * FROM json_each('[]'); SELECT * FROM json_tree('[]')",
                          NULL, NULL, NULL) != SQLITE_OK)
    rc = PMCP_ESTORE;
  if (rc) {
    if (!err[0])
      snprintf(err, errlen, "the SQL tables cannot be prepared");
    pmcp__sqlg_free(g);
    return rc;
  }
  sqlite3_limit(g->inner, SQLITE_LIMIT_LENGTH, g->lim.max_value_bytes);
  sqlite3_progress_handler(g->inner, PROGRESS_OPS, progress, g);
  sqlite3_limit(g->db, SQLITE_LIMIT_LENGTH, g->lim.max_value_bytes);
  sqlite3_limit(g->db, SQLITE_LIMIT_SQL_LENGTH, 100000);
  sqlite3_limit(g->db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit(g->db, SQLITE_LIMIT_TRIGGER_DEPTH, 0);
  sqlite3_db_config(g->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
  sqlite3_db_config(g->db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
  sqlite3_db_config(g->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
  sqlite3_db_config(g->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)NULL);
  sqlite3_db_config(g->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, (int *)NULL);
  sqlite3_set_authorizer(g->db, authorize, g);
  sqlite3_progress_handler(g->db, PROGRESS_OPS, progress, g);
  g->guarded = 1;
  *out = g;
  return 0;
}

void pmcp__sqlg_arm(pmcp__sqlg *g, pmcp_call *call)
{
  clock_gettime(CLOCK_MONOTONIC, &g->deadline);
  int64_t wall = g->lim.time_ms * WALL_FACTOR;
  g->deadline.tv_sec += wall / 1000;
  g->deadline.tv_nsec += (wall % 1000) * 1000000;
  if (g->deadline.tv_nsec >= 1000000000) {
    g->deadline.tv_sec++;
    g->deadline.tv_nsec -= 1000000000;
  }
  g->steps = 0;
  g->stop = 0;
  g->call = call;
  g->cpu0 = thread_cpu_ms();
}

int pmcp__sqlg_prepare(pmcp__sqlg *g, const char *sql, size_t len, pmcp_call *call,
                       sqlite3_stmt **out, char *err, size_t errlen)
{
  *out = NULL;
  g->denied[0] = '\0';
  pmcp__sqlg_arm(g, call);
  if (memchr(sql, '\0', len)) {
    snprintf(err, errlen, "sql contains a NUL character");
    return PMCP_EINVAL;
  }
  const char *tail = NULL;
  sqlite3_stmt *st = NULL;
  int src = sqlite3_prepare_v3(g->db, sql, (int)len, 0, &st, &tail);
  if (src != SQLITE_OK) {
    if (g->denied[0])
      snprintf(err, errlen, "%s", g->denied);
    else if (src == SQLITE_TOOBIG)
      snprintf(err, errlen, "sql is too long");
    else if (!strncmp(sqlite3_errmsg(g->db), "no such table: ", 15))
      snprintf(err, errlen,
               "table '%.64s' is not readable: query_sql reads only the tables it lists "
               "(call it with no arguments), by their plain names",
               sqlite3_errmsg(g->db) + 15);
    else if (strstr(sqlite3_errmsg(g->db), "cannot modify") ||
             strstr(sqlite3_errmsg(g->db), "may not be modified"))
      snprintf(err, errlen, "writing is not allowed: query_sql is read-only (%s)",
               sqlite3_errmsg(g->db));
    else
      snprintf(err, errlen, "SQL error: %s", sqlite3_errmsg(g->db));
    sqlite3_finalize(st);
    return g->denied[0] || strstr(err, "not allowed") || strstr(err, "not readable")
               ? PMCP_EDENIED
               : PMCP_EINVAL;
  }
  if (!st) {
    snprintf(err, errlen, "sql holds no statement");
    return PMCP_EINVAL;
  }
  if (tail && pmcp__sql_skip_blank(tail, sql + len, 0) != sql + len) {
    sqlite3_finalize(st);
    snprintf(err, errlen, "sql must hold exactly one statement (a second one follows the "
                          "first)");
    return PMCP_EINVAL;
  }
  if (!sqlite3_stmt_readonly(st)) {
    sqlite3_finalize(st);
    snprintf(err, errlen, "only read-only SELECT statements are allowed");
    return PMCP_EDENIED;
  }
  /* a statement without result columns is no query (REINDEX) */
  if (sqlite3_column_count(st) == 0) {
    sqlite3_finalize(st);
    snprintf(err, errlen, "this statement is not allowed: query_sql runs one read-only SELECT "
                          "over the listed tables");
    return PMCP_EDENIED;
  }
  *out = st;
  return 0;
}

int pmcp__sqlg_step(pmcp__sqlg *g, sqlite3_stmt *st, char *err, size_t errlen)
{
  int src = sqlite3_step(st);
  if (src == SQLITE_ROW || src == SQLITE_DONE)
    return src;
  if (g->stop == 1)
    snprintf(err, errlen, "the statement ran past its time limit of %lld ms of CPU time; "
                          "narrow it (WHERE, LIMIT) or aggregate less", (long long)g->lim.time_ms);
  else if (g->stop == 4)
    snprintf(err, errlen, "the statement ran past its time limit of %lld ms elapsed (the "
                          "server is busy); narrow it (WHERE, LIMIT) or try again",
             (long long)g->lim.time_ms * WALL_FACTOR);
  else if (g->stop == 2)
    snprintf(err, errlen, "the statement scanned more than its limit of rows (%lld steps); "
                          "narrow it", (long long)g->lim.max_steps);
  else if (g->stop == 3)
    snprintf(err, errlen, "cancelled");
  else if (src == SQLITE_TOOBIG)
    snprintf(err, errlen, "a value is larger than the limit of %d bytes",
             g->lim.max_value_bytes);
  else if (g->denied[0])
    snprintf(err, errlen, "%s", g->denied);
  else
    snprintf(err, errlen, "SQL error: %s", sqlite3_errmsg(g->db));
  return src;
}
