/* SPDX-License-Identifier: MIT */
/* The store (both backends): workspaces, projects, experiments and runs; typed
 * attributes, tags, status and events; and their keyword-index documents. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <openssl/rand.h>

#include "store/sql.h"


static void bind_opt_time(pmcp__stmt *st, int i, int64_t v)
{
  if (v)
    pmcp__st_bind_int64(st, i, v);
  else
    pmcp__st_bind_null(st, i);
}

/* The keyword document of a run, experiment or project: its name,
 * description, README and every attribute as "path value", then its tags,
 * read by one query (sql.h index_doc: on PostgreSQL the index row is
 * written by it, with no round trip of its own; the document took four:
 * the row, its attributes, its tags, the index row). The two dialects
 * differ only in the ordered concatenation: SQLite's group_concat() over
 * an ordered subquery, PostgreSQL's string_agg(... ORDER BY). */
#define DOC_ATTR_LINE                                                                        \
  "'\n' || a.path || ' ' || coalesce(a.v_text, CAST(a.v_int AS TEXT), CAST(a.v_real AS TEXT), '')"
#define DOC_ATTRS_FROM " FROM attributes a WHERE a.owner_kind=?1 AND a.owner_id=x.id"
#define DOC_TAGS_FROM " FROM tags g WHERE g.owner_kind=?1 AND g.owner_id=x.id"
#define DOC_SQ_AGG(LINE, FROM, ORDER)                                                        \
  "coalesce((SELECT group_concat(l, '') FROM (SELECT " LINE " AS l" FROM " ORDER BY " ORDER  \
  ")), '')"
#define DOC_PG_AGG(LINE, FROM, ORDER)                                                        \
  "coalesce((SELECT string_agg(" LINE ", '' ORDER BY " ORDER ")" FROM "), '')"
#define DOC_SQL(AGG, TABLE, BODY)                                                            \
  "SELECT ?1 || ':' || x.slug, coalesce(x.name, ''), " BODY                                 \
  " || " AGG(DOC_ATTR_LINE, DOC_ATTRS_FROM, "a.path")                                       \
  " || " AGG("'\ntag ' || g.tag", DOC_TAGS_FROM, "g.tag") " FROM " TABLE " x WHERE x.id=?2"
#define DOC_RUN "runs", "coalesce(x.description,'') || ' ' || coalesce(x.command,'')"
#define DOC_EXP "experiments", "coalesce(x.description,'') || ' ' || coalesce(x.config,'')"
#define DOC_PROJ "projects", "coalesce(x.description,'') || ' ' || coalesce(x.readme,'')"
#define DOC_WS "workspaces", "coalesce(x.description,'')"
#define DOC_PAIR(WHAT) {DOC_SQL(DOC_SQ_AGG, WHAT), DOC_SQL(DOC_PG_AGG, WHAT)}

static int reindex(pmcp_store *s, pmcp__sql *q, pmcp_tenant t, const char *kind,
                   int64_t rowid)
{
  static const char *const docs[][2] = {
    DOC_PAIR(DOC_RUN), DOC_PAIR(DOC_EXP), DOC_PAIR(DOC_PROJ), DOC_PAIR(DOC_WS),
  };
  static const char *const kinds[] = {"run", "experiment", "project", "workspace"};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    if (strcmp(kind, kinds[k]) == 0)
      return pmcp__sql_index_doc(s, q, t, PMCP__SQL_PICK(q, docs[k][0], docs[k][1]), kind,
                                 rowid);
  return 0;
}

static int default_workspace(pmcp_store *s, pmcp__sql *q, pmcp_tenant t, int64_t *out)
{
  static const char sql_find[] = "SELECT id FROM workspaces WHERE tenant_id=?1 AND slug='default'";
  static const char sql_ins[] =
      "INSERT INTO workspaces(tenant_id, slug, name, description, created)"
      " VALUES(?1, 'default', 'default', 'The lab''s default workspace', ?2) RETURNING id";
  pmcp__stmt *st;
  int rc = pmcp__sql_prep(s, q, sql_find, &st);
  if (rc)
    return rc;
  pmcp__st_bind_int64(st, 1, t.id);
  if (pmcp__st_step(st) == PMCP__ROW) {
    *out = pmcp__st_int64(st, 0);
    pmcp__st_reset(st);
    return 0;
  }
  pmcp__st_reset(st);
  if ((rc = pmcp__sql_prep(s, q, sql_ins, &st)))
    return rc;
  pmcp__st_bind_int64(st, 1, t.id);
  pmcp__st_bind_int64(st, 2, pmcp__now_ms());
  if ((rc = pmcp__st_step1(s, st, "create workspace")) == 0)
    *out = pmcp__st_int64(st, 0);
  pmcp__st_reset(st);
  return rc ? rc : reindex(s, q, t, "workspace", *out);
}

static int json_object_ok(pmcp_store *s, pmcp__sql *q, const char *json, const char *what)
{
  if (!json)
    return 0;
  (void)q;
  /* Strict: nothing but blanks may follow the object (cJSON checks that
   * for the terminating NUL, so the length counts it). */
  cJSON *o = cJSON_ParseWithLengthOpts(json, strlen(json) + 1, NULL, 1);
  int ok = cJSON_IsObject(o);
  cJSON_Delete(o);
  return ok ? 0 : pmcp_store_set_error(s, PMCP_EINVAL, "%s is not a JSON object", what);
}

static int create_in(pmcp_store *s, pmcp__sql *q, pmcp_tenant t, const char *kind,
                     const pmcp_entity_spec *spec, pmcp_buf *out_id)
{
  const char *table = pmcp__kind_table(kind);
  if (!table || !(strcmp(kind, "workspace") == 0 || strcmp(kind, "project") == 0 ||
                  strcmp(kind, "experiment") == 0))
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "cannot create a '%.32s' here (workspace, project or experiment)", kind);
  if (!spec->name || !*spec->name)
    return pmcp_store_set_error(s, PMCP_EINVAL, "a %s needs a name", kind);
  int64_t parent = 0, exists = 0;
  int rc = 0;
  char pk[32];
  if (strcmp(kind, "project") == 0) {
    if (spec->parent)
      rc = pmcp__sql_resolve(s, q, t, spec->parent, "workspace", pk, &parent);
    else
      rc = default_workspace(s, q, t, &parent);
  } else if (strcmp(kind, "experiment") == 0) {
    if (!spec->parent)
      return pmcp_store_set_error(s, PMCP_EINVAL, "an experiment needs a project");
    rc = pmcp__sql_resolve(s, q, t, spec->parent, "project", pk, &parent);
    if (rc == 0)
      rc = json_object_ok(s, q, spec->body, "the experiment's config");
  }
  if (rc)
    return rc;
  pmcp_buf id = PMCP_BUF_INIT;
  rc = pmcp__sql_new_id(s, q, t, table, spec->id, spec->name, &id, &exists);
  if (rc == 0 && exists) {
    if (!(spec->flags & PMCP_STORE_REUSE))
      rc = pmcp_store_set_error(s, PMCP_EEXIST, "%s '%s' already exists", kind, id.ptr);
    goto out;
  }
  if (rc)
    goto out;
  pmcp__stmt *st;
  int64_t created = spec->created_ms ? spec->created_ms : pmcp__now_ms();
  if (strcmp(kind, "workspace") == 0) {
    static const char sql[] = "INSERT INTO workspaces(tenant_id, slug, name, description, created)"
                              " VALUES(?1,?2,?3,?4,?5) RETURNING id";
    if ((rc = pmcp__sql_prep(s, q, sql, &st)))
      goto out;
    pmcp__st_bind_int64(st, 5, created);
  } else if (strcmp(kind, "project") == 0) {
    static const char sql[] = "INSERT INTO projects(tenant_id, slug, name, description, "
                              "workspace_id, readme, created) VALUES(?1,?2,?3,?4,?5,?6,?7) RETURNING id";
    if ((rc = pmcp__sql_prep(s, q, sql, &st)))
      goto out;
    pmcp__st_bind_int64(st, 5, parent);
    pmcp__st_bind_text(st, 6, spec->body);
    pmcp__st_bind_int64(st, 7, created);
  } else {
    static const char sql[] = "INSERT INTO experiments(tenant_id, slug, name, description, "
                              "project_id, config, deleted, created) VALUES(?1,?2,?3,?4,?5,?6,?7,?8)"
                              " RETURNING id";
    if ((rc = pmcp__sql_prep(s, q, sql, &st)))
      goto out;
    pmcp__st_bind_int64(st, 5, parent);
    pmcp__st_bind_text(st, 6, spec->body);
    pmcp__st_bind_int64(st, 7, spec->deleted ? 1 : 0);
    pmcp__st_bind_int64(st, 8, created);
  }
  pmcp__st_bind_int64(st, 1, t.id);
  pmcp__st_bind_text(st, 2, id.ptr);
  pmcp__st_bind_text(st, 3, spec->name);
  pmcp__st_bind_text(st, 4, spec->description);
  if ((rc = pmcp__st_step1(s, st, "create"))) {
    pmcp__st_reset(st);
    goto out;
  }
  int64_t rowid = pmcp__st_int64(st, 0);
  pmcp__st_reset(st);
  rc = reindex(s, q, t, kind, rowid);
out:
  if (rc == 0 && out_id) {
    pmcp__buf_reset(out_id);
    rc = pmcp__buf_puts(out_id, id.ptr);
  }
  pmcp_buf_dispose(&id);
  return rc;
}

int pmcp__sql_create(pmcp_store *s, void *ctx, pmcp_tenant t, const char *kind,
                    const pmcp_entity_spec *spec, pmcp_buf *out_id)
{
  pmcp__sql *q = PMCP__SQL(ctx);
  if (spec->version < 1 || spec->version > PMCP_ENTITY_SPEC_VERSION)
    return pmcp_store_set_error(s, PMCP_EINVAL, "unknown pmcp_entity_spec version");
  int rc = pmcp__sql_wbegin(s, q, t);
  if (rc)
    return rc;
  return pmcp__sql_wend(s, q, t, create_in(s, q, t, kind, spec, out_id));
}

static int status_ok(const char *st)
{
  return st && (strcmp(st, "running") == 0 || strcmp(st, "finished") == 0 ||
                strcmp(st, "failed") == 0 || strcmp(st, "killed") == 0);
}

static int add_event(pmcp_store *s, pmcp__sql *q, pmcp_tenant t, int64_t run, int64_t time,
                     const char *kind, const char *msg)
{
  static const char sql[] =
      "INSERT INTO run_events(tenant_id, run_id, time, kind, message) VALUES(?1,?2,?3,?4,?5)";
  pmcp__stmt *st;
  int rc = pmcp__sql_prep(s, q, sql, &st);
  if (rc)
    return rc;
  pmcp__st_bind_int64(st, 1, t.id);
  pmcp__st_bind_int64(st, 2, run);
  pmcp__st_bind_int64(st, 3, time ? time : pmcp__now_ms());
  pmcp__st_bind_text(st, 4, kind);
  pmcp__st_bind_text(st, 5, msg);
  return pmcp__st_defer(s, st, "run event");
}

static int run_create_in(pmcp_store *s, pmcp__sql *q, pmcp_tenant t, const pmcp_run_spec *spec,
                         pmcp_buf *out_id)
{
  int64_t project = 0, experiment = 0, exists = 0;
  char k[32];
  int rc = 0;
  if (spec->status && !status_ok(spec->status))
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "unknown run status '%.32s' (running, finished, failed, killed)", spec->status);
  if (spec->experiment) {
    if ((rc = pmcp__sql_resolve(s, q, t, spec->experiment, "experiment", k, &experiment)))
      return rc;
    static const char sql[] = "SELECT project_id FROM experiments WHERE id=?1";
    pmcp__stmt *st;
    if ((rc = pmcp__sql_prep(s, q, sql, &st)))
      return rc;
    pmcp__st_bind_int64(st, 1, experiment);
    if (pmcp__st_step(st) == PMCP__ROW)
      project = pmcp__st_int64(st, 0);
    pmcp__st_reset(st);
  }
  if (spec->project) {
    int64_t p = 0;
    if ((rc = pmcp__sql_resolve(s, q, t, spec->project, "project", k, &p)))
      return rc;
    if (experiment && p != project)
      return pmcp_store_set_error(s, PMCP_EINVAL,
          "experiment '%.64s' is not in project '%.64s'", spec->experiment, spec->project);
    project = p;
  }
  if ((rc = json_object_ok(s, q, spec->environment, "the run's environment")))
    return rc;
  pmcp_buf id = PMCP_BUF_INIT;
  if (spec->id) {
    /* A given id is not looked up first: the insert below skips a taken
     * one (one round trip less on PostgreSQL). */
    if (!pmcp__id_ok(spec->id))
      rc = pmcp_store_set_error(s, PMCP_EINVAL,
          "invalid id '%.64s': use 1-128 characters of A-Z a-z 0-9 . _ -", spec->id);
    else if (pmcp__buf_puts(&id, spec->id))
      rc = pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  } else if (spec->name) {
    rc = pmcp__sql_new_id(s, q, t, "runs", NULL, spec->name, &id, &exists);
  } else {
    unsigned char r[4];
    if (RAND_bytes(r, sizeof r) != 1)
      memset(r, 0, sizeof r);
    char name[32];
    snprintf(name, sizeof name, "run-%02x%02x%02x%02x", r[0], r[1], r[2], r[3]);
    rc = pmcp__sql_new_id(s, q, t, "runs", NULL, name, &id, &exists);
  }
  if (rc == 0 && exists) {
    if (!(spec->flags & PMCP_STORE_REUSE))
      rc = pmcp_store_set_error(s, PMCP_EEXIST, "run '%s' already exists", id.ptr);
    goto out;
  }
  if (rc)
    goto out;
  static const char sql[] =
      "INSERT INTO runs(tenant_id, project_id, experiment_id, slug, name, description, status,"
      " created, started, ended, deleted, command, environment, git_commit, git_branch,"
      " git_remote, git_dirty, git_diff)"
      " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18)"
      " ON CONFLICT(tenant_id, slug) DO NOTHING RETURNING id";
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(s, q, sql, &st)))
    goto out;
  int64_t created = spec->created_ms ? spec->created_ms
                                     : (spec->started_ms ? spec->started_ms : pmcp__now_ms());
  const char *status = spec->status ? spec->status : "running";
  pmcp__st_bind_int64(st, 1, t.id);
  if (project)
    pmcp__st_bind_int64(st, 2, project);
  if (experiment)
    pmcp__st_bind_int64(st, 3, experiment);
  pmcp__st_bind_text(st, 4, id.ptr);
  pmcp__st_bind_text(st, 5, spec->name ? spec->name : id.ptr);
  pmcp__st_bind_text(st, 6, spec->description);
  pmcp__st_bind_text(st, 7, status);
  pmcp__st_bind_int64(st, 8, created);
  bind_opt_time(st, 9, spec->started_ms ? spec->started_ms
                       : (strcmp(status, "running") == 0 ? created : 0));
  bind_opt_time(st, 10, spec->ended_ms);
  pmcp__st_bind_int64(st, 11, spec->deleted ? 1 : 0);
  pmcp__st_bind_text(st, 12, spec->command);
  pmcp__st_bind_text(st, 13, spec->environment);
  pmcp__st_bind_text(st, 14, spec->git_commit);
  pmcp__st_bind_text(st, 15, spec->git_branch);
  pmcp__st_bind_text(st, 16, spec->git_remote);
  pmcp__st_bind_int64(st, 17, spec->git_dirty ? 1 : 0);
  pmcp__st_bind_text(st, 18, spec->git_diff);
  int src = pmcp__st_step(st);
  if (src != PMCP__ROW) {
    /* No row: the id is taken. */
    rc = src != PMCP__DONE ? pmcp__st_err(s, st, "create run")
         : (spec->flags & PMCP_STORE_REUSE) ? 0
         : pmcp_store_set_error(s, PMCP_EEXIST, "run '%s' already exists", id.ptr);
    pmcp__st_reset(st);
    goto out;
  }
  int64_t rowid = pmcp__st_int64(st, 0);
  pmcp__st_reset(st);
  char msg[64];
  snprintf(msg, sizeof msg, "created with status %s", status);
  rc = add_event(s, q, t, rowid, created, "status", msg);
  if (rc == 0 && spec->ended_ms && strcmp(status, "running") != 0) {
    snprintf(msg, sizeof msg, "status %s", status);
    rc = add_event(s, q, t, rowid, spec->ended_ms, "status", msg);
  }
  if (rc == 0)
    rc = reindex(s, q, t, "run", rowid);
out:
  if (rc == 0 && out_id) {
    pmcp__buf_reset(out_id);
    rc = pmcp__buf_puts(out_id, id.ptr);
  }
  pmcp_buf_dispose(&id);
  return rc;
}

int pmcp__sql_run_create(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_run_spec *spec,
                        pmcp_buf *out_id)
{
  pmcp__sql *q = PMCP__SQL(ctx);
  if (spec->version < 1 || spec->version > PMCP_RUN_SPEC_VERSION)
    return pmcp_store_set_error(s, PMCP_EINVAL, "unknown pmcp_run_spec version");
  int rc = pmcp__sql_wbegin(s, q, t);
  if (rc)
    return rc;
  return pmcp__sql_wend(s, q, t, run_create_in(s, q, t, spec, out_id));
}

int pmcp__sql_run_status(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                        const char *status, int64_t time_ms)
{
  pmcp__sql *q = PMCP__SQL(ctx);
  if (!status_ok(status))
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "unknown run status '%.32s' (running, finished, failed, killed)", status);
  int rc = pmcp__sql_wbegin(s, q, t);
  if (rc)
    return rc;
  char k[32];
  int64_t id = 0;
  int64_t now = time_ms ? time_ms : pmcp__now_ms();
  rc = pmcp__sql_resolve(s, q, t, run, "run", k, &id);
  if (rc == 0) {
    static const char sql[] =
        "UPDATE runs SET status=?2,"
        " started=CASE WHEN ?2='running' THEN coalesce(started, ?3) ELSE started END,"
        " ended=CASE WHEN ?2='running' THEN NULL ELSE ?3 END WHERE id=?1";
    pmcp__stmt *st;
    if ((rc = pmcp__sql_prep(s, q, sql, &st)) == 0) {
      pmcp__st_bind_int64(st, 1, id);
      pmcp__st_bind_text(st, 2, status);
      pmcp__st_bind_int64(st, 3, now);
      rc = pmcp__st_defer(s, st, "run status");
    }
  }
  if (rc == 0) {
    char msg[64];
    snprintf(msg, sizeof msg, "status %s", status);
    rc = add_event(s, q, t, id, now, "status", msg);
  }
  return pmcp__sql_wend(s, q, t, rc);
}

int pmcp__sql_run_event(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                       const char *kind, const char *message, int64_t time_ms)
{
  pmcp__sql *q = PMCP__SQL(ctx);
  if (!pmcp__id_ok(kind))
    return pmcp_store_set_error(s, PMCP_EINVAL, "invalid event kind '%.32s'", kind);
  int rc = pmcp__sql_wbegin(s, q, t);
  if (rc)
    return rc;
  char k[32];
  int64_t id = 0;
  rc = pmcp__sql_resolve(s, q, t, run, "run", k, &id);
  if (rc == 0)
    rc = add_event(s, q, t, id, time_ms, kind, message);
  return pmcp__sql_wend(s, q, t, rc);
}

int pmcp__sql_set_deleted(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                         int deleted)
{
  pmcp__sql *q = PMCP__SQL(ctx);
  int rc = pmcp__sql_wbegin(s, q, t);
  if (rc)
    return rc;
  char k[32];
  int64_t id = 0;
  rc = pmcp__sql_resolve(s, q, t, ref, "run experiment", k, &id);
  if (rc == 0) {
    static const char sql_r[] = "UPDATE runs SET deleted=?2 WHERE id=?1";
    static const char sql_e[] = "UPDATE experiments SET deleted=?2 WHERE id=?1";
    pmcp__stmt *st;
    if ((rc = pmcp__sql_prep(s, q, strcmp(k, "run") == 0 ? sql_r : sql_e, &st)) == 0) {
      pmcp__st_bind_int64(st, 1, id);
      pmcp__st_bind_int64(st, 2, deleted ? 1 : 0);
      rc = pmcp__st_defer(s, st, "delete");
    }
    if (rc == 0 && strcmp(k, "run") == 0)
      rc = add_event(s, q, t, id, 0, "status", deleted ? "deleted" : "restored");
  }
  return pmcp__sql_wend(s, q, t, rc);
}

static int path_ok(const char *p)
{
  size_t n = strlen(p);
  if (n == 0 || n > 256 || p[0] == '/' || p[n - 1] == '/' || strstr(p, "//"))
    return 0;
  for (const unsigned char *c = (const unsigned char *)p; *c; c++)
    if (*c < 0x20 || *c == 0x7f)
      return 0;
  return 1;
}

static int attr_write(pmcp_store *s, pmcp__sql *q, pmcp_tenant t, const char *ref,
                      const char *path, const pmcp_value *v)
{
  char k[32];
  int64_t id = 0;
  int rc = pmcp__sql_resolve(s, q, t, ref, "run experiment project", k, &id);
  if (rc)
    return rc;
  if (!path_ok(path))
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "invalid attribute path '%.64s' (slash-separated names such as config/optimizer/lr)",
        path);
  if (!v) {
    static const char sql[] = "DELETE FROM attributes WHERE owner_kind=?1 AND owner_id=?2 AND path=?3";
    pmcp__stmt *st;
    if ((rc = pmcp__sql_prep(s, q, sql, &st)))
      return rc;
    pmcp__st_bind_text(st, 1, k);
    pmcp__st_bind_int64(st, 2, id);
    pmcp__st_bind_text(st, 3, path);
    if ((rc = pmcp__st_run1(s, st, "unset attribute")))
      return rc;
    if (pmcp__st_changes(st) == 0)
      return pmcp_store_set_error(s, PMCP_ENOTFOUND, "%s has no attribute '%.64s'", ref, path);
    return reindex(s, q, t, k, id);
  }
  static const char sql[] =
      "INSERT INTO attributes(tenant_id, owner_kind, owner_id, path, type, v_text, v_int, v_real)"
      " VALUES(?1,?2,?3,?4,?5,?6,?7,?8) ON CONFLICT(owner_kind, owner_id, path) DO UPDATE SET"
      " type=excluded.type, v_text=excluded.v_text, v_int=excluded.v_int, v_real=excluded.v_real";
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(s, q, sql, &st)))
    return rc;
  pmcp__st_bind_int64(st, 1, t.id);
  pmcp__st_bind_text(st, 2, k);
  pmcp__st_bind_int64(st, 3, id);
  pmcp__st_bind_text(st, 4, path);
  pmcp_buf set = PMCP_BUF_INIT;
  switch (v->type) {
  case PMCP_V_STRING:
    if (!v->s)
      return pmcp_store_set_error(s, PMCP_EINVAL, "string attribute '%.64s' has no value", path);
    pmcp__st_bind_text(st, 5, "string");
    pmcp__st_bind_text(st, 6, v->s);
    break;
  case PMCP_V_INT:
    pmcp__st_bind_text(st, 5, "int");
    pmcp__st_bind_int64(st, 7, v->i);
    break;
  case PMCP_V_BOOL:
    pmcp__st_bind_text(st, 5, "bool");
    pmcp__st_bind_int64(st, 7, v->i ? 1 : 0);
    break;
  case PMCP_V_DATETIME:
    pmcp__st_bind_text(st, 5, "datetime");
    pmcp__st_bind_int64(st, 7, v->i);
    break;
  case PMCP_V_FLOAT:
    pmcp__st_bind_text(st, 5, "float");
    /* SQLite stores NaN as NULL: keep non-finite values as text. */
    if (v->f != v->f)
      pmcp__st_bind_text(st, 6, "NaN");
    else if (v->f > 1.7976931348623157e308)
      pmcp__st_bind_text(st, 6, "Infinity");
    else if (v->f < -1.7976931348623157e308)
      pmcp__st_bind_text(st, 6, "-Infinity");
    else
      pmcp__st_bind_double(st, 8, v->f);
    break;
  case PMCP_V_STRING_SET:
    if (v->n_set && !v->set)
      return pmcp_store_set_error(s, PMCP_EINVAL, "string set '%.64s' has no items", path);
    pmcp__buf_putc(&set, '[');
    for (size_t i = 0; i < v->n_set; i++) {
      if (!v->set[i]) {
        pmcp_buf_dispose(&set);
        return pmcp_store_set_error(s, PMCP_EINVAL, "string set '%.64s' has a NULL item", path);
      }
      if (i)
        pmcp__buf_putc(&set, ',');
      pmcp__buf_json_string(&set, v->set[i], strlen(v->set[i]));
    }
    pmcp__buf_putc(&set, ']');
    pmcp__st_bind_text(st, 5, "string_set");
    pmcp__st_bind_text(st, 6, set.ptr);
    break;
  default:
    return pmcp_store_set_error(s, PMCP_EINVAL, "unknown value type %d for '%.64s'",
                                (int)v->type, path);
  }
  rc = pmcp__st_defer(s, st, "set attribute");
  pmcp_buf_dispose(&set);
  if (rc == 0)
    rc = reindex(s, q, t, k, id);
  return rc;
}

int pmcp__sql_set_attr(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                      const char *path, const pmcp_value *value)
{
  pmcp__sql *q = PMCP__SQL(ctx);
  int rc = pmcp__sql_wbegin(s, q, t);
  if (rc)
    return rc;
  return pmcp__sql_wend(s, q, t, attr_write(s, q, t, ref, path, value));
}

int pmcp__sql_unset_attr(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                        const char *path)
{
  pmcp__sql *q = PMCP__SQL(ctx);
  int rc = pmcp__sql_wbegin(s, q, t);
  if (rc)
    return rc;
  return pmcp__sql_wend(s, q, t, attr_write(s, q, t, ref, path, NULL));
}

int pmcp__sql_tag(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref, const char *tag,
                 int add)
{
  pmcp__sql *q = PMCP__SQL(ctx);
  size_t n = strlen(tag);
  if (n == 0 || n > 128 || strchr(tag, '\n'))
    return pmcp_store_set_error(s, PMCP_EINVAL, "invalid tag '%.64s' (1-128 characters, one line)",
                                tag);
  int rc = pmcp__sql_wbegin(s, q, t);
  if (rc)
    return rc;
  char k[32];
  int64_t id = 0;
  rc = pmcp__sql_resolve(s, q, t, ref, "run experiment project", k, &id);
  if (rc == 0) {
    static const char sql_add[] =
        "INSERT INTO tags(tenant_id, owner_kind, owner_id, tag) VALUES(?1,?2,?3,?4)"
        " ON CONFLICT DO NOTHING";
    static const char sql_del[] =
        "DELETE FROM tags WHERE tenant_id=?1 AND owner_kind=?2 AND owner_id=?3 AND tag=?4";
    pmcp__stmt *st;
    if ((rc = pmcp__sql_prep(s, q, add ? sql_add : sql_del, &st)) == 0) {
      pmcp__st_bind_int64(st, 1, t.id);
      pmcp__st_bind_text(st, 2, k);
      pmcp__st_bind_int64(st, 3, id);
      pmcp__st_bind_text(st, 4, tag);
      rc = pmcp__st_defer(s, st, "tag");
    }
    if (rc == 0)
      rc = reindex(s, q, t, k, id);
  }
  return pmcp__sql_wend(s, q, t, rc);
}
