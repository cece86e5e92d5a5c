/* SPDX-License-Identifier: MIT */
/* The store (both backends): pmcp_store_get(), one entity's whole record
 * as JSON. The base row comes out of the database's JSON functions: each
 * statement is written once with the dialect macros of store/dialect.h
 * (SQLite's json_object(), PostgreSQL's json_build_object(), ...), and
 * PMCP__SQL_PICK takes the store's text of the two; children (attributes
 * as a nested tree, tags, versions, events, ...) are added with cJSON.
 * A record is the stored record: its doubles keep every digit (SQLite's
 * through pmcp_num(), its JSON writing 15; PostgreSQL's float8 as it is,
 * the session's extra_float_digits giving the shortest exact form).
 * Every query filters on the tenant. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "store/dialect.h"
#include "store/sql.h"
#include "store/ws_scope.h"
#include "util/json.h"

typedef struct rd {
  pmcp_store *s;
  pmcp__sql *q;
  pmcp_tenant t;
  int rc;
  int brief; /* PMCP__GET_BRIEF: what a card shows (store_int.h) */
} rd;

/* Runs @p sql with ?1 = tenant, ?2 = a, ?3 = text (when non-NULL) and
 * parses column 0: of the first row (@p all 0; NULL when there is no row),
 * or of every row into an array (@p all 1; never NULL unless an error is
 * recorded, a NULL column becomes null). */
static cJSON *jquery(rd *r, const char *sql, int64_t a, const char *text, int all)
{
  cJSON *arr = all ? cJSON_CreateArray() : NULL;
  pmcp__stmt *st;
  if ((all && !arr) || r->rc)
    return arr;
  /* A scoped read keeps only the linked rows its workspace sees (the
   * statement's scope marks, ws_scope.h): one text for every scope,
   * prepared once like the unscoped one. */
  const char *text_sql = sql;
  int first = 0;
  if (r->t.workspace && !(text_sql = pmcp__ws_marks_param(sql, &first))) {
    r->rc = pmcp_store_set_error(r->s, PMCP_ENOMEM, "out of memory");
    return arr;
  }
  if ((r->rc = pmcp__sql_prep(r->s, r->q, text_sql, &st)))
    return arr;
  if (first) {
    pmcp__st_bind_int64(st, first, r->t.id);
    pmcp__st_bind_int64(st, first + 1, r->t.workspace);
    pmcp__st_bind_int64(st, first + 2, r->t.unfiled ? 1 : 0);
  }
  pmcp__st_bind_int64(st, 1, r->t.id);
  pmcp__st_bind_int64(st, 2, a);
  if (text)
    pmcp__st_bind_text(st, 3, text);
  cJSON *out = NULL;
  int src;
  while ((src = pmcp__st_step(st)) == PMCP__ROW) {
    const char *txt = (const char *)pmcp__st_text(st, 0);
    cJSON *it = txt ? cJSON_Parse(txt) : all ? cJSON_CreateNull() : NULL;
    if (!all) {
      out = it;
      if (!out)
        r->rc = pmcp_store_set_error(r->s, PMCP_ENOMEM, "out of memory");
      src = PMCP__DONE;
      break;
    }
    if (it)
      cJSON_AddItemToArray(arr, it);
  }
  if (src != PMCP__DONE)
    r->rc = pmcp__st_err(r->s, st, "read");
  pmcp__st_reset(st);
  return all ? arr : out;
}

static cJSON *jrow(rd *r, const char *sql, int64_t a, const char *text)
{
  return jquery(r, sql, a, text, 0);
}

static cJSON *jrows(rd *r, const char *sql, int64_t a, const char *text)
{
  return jquery(r, sql, a, text, 1);
}

static void add(cJSON *o, const char *name, cJSON *v)
{
  if (o && v)
    cJSON_AddItemToObject(o, name, v);
  else
    cJSON_Delete(v);
}

static void iso_time(int64_t ms, char out[48])
{
  time_t secs = (time_t)(ms / 1000);
  struct tm tm;
  gmtime_r(&secs, &tm);
  snprintf(out, 48, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000 + 1000) % 1000);
}

/* Attributes of one owner as {"attributes": nested tree, "attribute_types":
 * {path: type}}; a path's segments become nested objects. */
static void add_attributes(rd *r, cJSON *o, const char *kind, int64_t owner)
{
  static const char sql[] =
      "SELECT path, type, v_text, v_int, v_real FROM attributes WHERE tenant_id=?1"
      " AND owner_kind=?3 AND owner_id=?2 ORDER BY path";
  pmcp__stmt *st;
  if (r->rc || (r->rc = pmcp__sql_prep(r->s, r->q, sql, &st)))
    return;
  pmcp__st_bind_int64(st, 1, r->t.id);
  pmcp__st_bind_int64(st, 2, owner);
  pmcp__st_bind_text(st, 3, kind);
  cJSON *tree = cJSON_CreateObject(), *types = cJSON_CreateObject();
  while (pmcp__st_step(st) == PMCP__ROW) {
    const char *path = (const char *)pmcp__st_text(st, 0);
    const char *type = (const char *)pmcp__st_text(st, 1);
    cJSON *v;
    if (strcmp(type, "string") == 0)
      v = cJSON_CreateString((const char *)pmcp__st_text(st, 2));
    else if (strcmp(type, "int") == 0)
      v = cJSON_CreateNumber((double)pmcp__st_int64(st, 3));
    else if (strcmp(type, "bool") == 0)
      v = cJSON_CreateBool(pmcp__st_int64(st, 3) != 0);
    else if (strcmp(type, "datetime") == 0) {
      char iso[48];
      iso_time(pmcp__st_int64(st, 3), iso);
      v = cJSON_CreateString(iso);
    } else if (strcmp(type, "float") == 0)
      v = !pmcp__st_null(st, 2)
              ? cJSON_CreateString((const char *)pmcp__st_text(st, 2))
              : cJSON_CreateNumber(pmcp__st_double(st, 4));
    else
      v = cJSON_Parse((const char *)pmcp__st_text(st, 2));
    cJSON_AddItemToObject(types, path, cJSON_CreateString(type));
    /* Walk/create the nested objects of the path. */
    cJSON *node = tree;
    const char *seg = path;
    for (;;) {
      const char *slash = strchr(seg, '/');
      if (!slash) {
        cJSON_DeleteItemFromObjectCaseSensitive(node, seg);
        cJSON_AddItemToObject(node, seg, v);
        break;
      }
      char name[257];
      size_t n = (size_t)(slash - seg);
      if (n > 256)
        n = 256;
      memcpy(name, seg, n);
      name[n] = '\0';
      cJSON *child = cJSON_GetObjectItemCaseSensitive(node, name);
      if (!cJSON_IsObject(child)) {
        /* A value and a subtree under one name: the subtree wins, the
         * value stays readable under "name/" in attribute_types. */
        cJSON_DeleteItemFromObjectCaseSensitive(node, name);
        child = cJSON_AddObjectToObject(node, name);
      }
      node = child;
      seg = slash + 1;
    }
  }
  pmcp__st_reset(st);
  add(o, "attributes", tree);
  add(o, "attribute_types", types);
}

static void add_tags(rd *r, cJSON *o, const char *kind, int64_t owner)
{
  /* SQLite took tags_tag for this (it covers tenant_id), reading every
   * tag of the kind per card; the primary key finds the owner's own */
  static const char sql_sq[] =
      "SELECT tag FROM tags INDEXED BY sqlite_autoindex_tags_1 WHERE tenant_id=?1"
      " AND owner_kind=?3 AND owner_id=?2 ORDER BY tag";
  static const char sql_pg[] =
      "SELECT tag FROM tags WHERE tenant_id=?1 AND owner_kind=?3 AND owner_id=?2 ORDER BY tag";
  const char *sql = PMCP__SQL_PICK(r->q, sql_sq, sql_pg);
  pmcp__stmt *st;
  if (r->rc || (r->rc = pmcp__sql_prep(r->s, r->q, sql, &st)))
    return;
  pmcp__st_bind_int64(st, 1, r->t.id);
  pmcp__st_bind_int64(st, 2, owner);
  pmcp__st_bind_text(st, 3, kind);
  cJSON *arr = cJSON_CreateArray();
  while (pmcp__st_step(st) == PMCP__ROW)
    cJSON_AddItemToArray(arr, cJSON_CreateString((const char *)pmcp__st_text(st, 0)));
  pmcp__st_reset(st);
  add(o, "tags", arr);
}

static void add_notes_of(rd *r, cJSON *o, const char *kind, int64_t owner)
{
#define SQL_1(D) \
    "SELECT " D##_JO "'ref', CASE n.kind WHEN 'sub-note' THEN 'sub-note:' ELSE 'note:'" \
    " END || n.slug, 'kind', n.kind, 'title', n.title, 'version', n.version," \
    " 'updated', n.updated) FROM notes n WHERE n.tenant_id=?1 AND n.owner_kind=?3 AND" \
    " n.owner_id=?2 ORDER BY n.updated DESC, n.id DESC LIMIT 100"
  PMCP__SQL_BOTH(sql, SQL_1);
#undef SQL_1
  const char *sql = PMCP__SQL_PICK(r->q, sql_sq, sql_pg);
  add(o, "notes", jrows(r, sql, owner, kind));
}

static void add_sessions_of(rd *r, cJSON *o, const char *ref)
{
#define SQL_2(D) \
    "SELECT " D##_JO "'ref', 'session:' || s.slug, 'title', s.title, 'agent', s.agent," \
    " 'started', s.started) FROM sessions s JOIN session_links l ON l.session_id=s.id" \
    " WHERE l.tenant_id=?1 AND l.ref=?3 AND ?2=?2/*ws row sessions s.id*/ ORDER BY" \
    " coalesce(s.started, s.created) DESC LIMIT 100"
  PMCP__SQL_BOTH(sql, SQL_2);
#undef SQL_2
  const char *sql = PMCP__SQL_PICK(r->q, sql_sq, sql_pg);
  add(o, "sessions", jrows(r, sql, 0, ref));
}

static void add_lineage_of(rd *r, cJSON *o, const char *ref)
{
#define UP_3(D) \
    "SELECT " D##_JO "'from', from_ref, 'relation', relation, 'steps', " \
    D##_JSON("steps") ") FROM lineage WHERE tenant_id=?1 AND to_ref=?3 AND ?2=?2/*ws" \
    " ref from_ref*/ ORDER BY id LIMIT 100"
  PMCP__SQL_BOTH(up, UP_3);
#undef UP_3
  const char *up = PMCP__SQL_PICK(r->q, up_sq, up_pg);
#define DOWN_4(D) \
    "SELECT " D##_JO "'to', to_ref, 'relation', relation, 'steps', " D##_JSON("steps") \
    ") FROM lineage WHERE tenant_id=?1 AND from_ref=?3 AND ?2=?2/*ws ref to_ref*/" \
    " ORDER BY id LIMIT 100"
  PMCP__SQL_BOTH(down, DOWN_4);
#undef DOWN_4
  const char *down = PMCP__SQL_PICK(r->q, down_sq, down_pg);
  add(o, "upstream", jrows(r, up, 0, ref));
  add(o, "downstream", jrows(r, down, 0, ref));
}

static void add_artifacts_of(rd *r, cJSON *o, const char *kind, int64_t owner)
{
#define SQL_5(D) \
    "SELECT " D##_JO "'ref', 'artifact:' || slug, 'name', name, 'latest', latest," \
    " 'shared', " D##_B("shared") ") FROM artifacts WHERE tenant_id=?1 AND" \
    " owner_kind=?3 AND owner_id=?2 ORDER BY name LIMIT 200"
  PMCP__SQL_BOTH(sql, SQL_5);
#undef SQL_5
  const char *sql = PMCP__SQL_PICK(r->q, sql_sq, sql_pg);
  add(o, "artifacts", jrows(r, sql, owner, kind));
}

/* What a run, experiment or project owns: attributes, tags, notes,
 * artifacts, sessions, lineage. */
static void add_owned(rd *r, cJSON *o, const char *kind, int64_t rowid, const char *id)
{
  if (r->brief)
    return;
  char ref[160];
  snprintf(ref, sizeof ref, "%s:%s", kind, id);
  add_notes_of(r, o, kind, rowid);
  add_artifacts_of(r, o, kind, rowid);
  add_sessions_of(r, o, ref);
  add_lineage_of(r, o, ref);
}

/* Lineage of the entity @p o describes, by its own "ref". */
static void add_lineage_self(rd *r, cJSON *o)
{
  const cJSON *ref = cJSON_GetObjectItemCaseSensitive(o, "ref");
  if (o && cJSON_IsString(ref)) {
    char buf[320];
    snprintf(buf, sizeof buf, "%s", ref->valuestring);
    add_lineage_of(r, o, buf);
  }
}

static int64_t row_id(rd *r, const char *kind, const char *id)
{
  int64_t rowid = 0;
  if (!r->rc)
    r->rc = pmcp__sql_find(r->s, r->q, r->t, kind, id, &rowid);
  return rowid;
}

static cJSON *get_run(rd *r, const char *id)
{
  int64_t rid = row_id(r, "run", id);
#define RUN_SQL(D) \
    "SELECT " D##_JO "'kind', 'run', 'ref', 'run:' || r.slug, 'id', r.slug, 'name', r.name," \
    " 'description', r.description, 'status', r.status," \
    " 'project', 'project:' || p.slug, 'experiment', 'experiment:' || e.slug," \
    " 'created', r.created, 'started', r.started, 'ended', r.ended," \
    " 'duration_ms', r.ended - r.started," \
    " 'deleted', " D##_B("r.deleted") "," \
    " 'command', r.command, 'environment', " D##_JSON("r.environment") "," \
    " 'code', " D##_JO "'commit', r.git_commit, 'branch', r.git_branch, 'remote', r.git_remote," \
    "   'dirty', " D##_B("r.git_dirty") ", 'diff', r.git_diff)," \
    " 'inherited', " D##_JSON("e.config") "," \
    " 'series_count', (SELECT count(*) FROM series WHERE run_id=r.id)," \
    " 'groups', (SELECT " D##_AGG_BY("'group:' || g.slug", "gr.group_id") " FROM group_runs gr" \
    " JOIN groups g" \
    "   ON g.id=gr.group_id WHERE gr.run_id=r.id/*ws row groups g.id*/)," \
    " 'checkpoints', (SELECT " D##_AGG(D##_JO "'ref', 'checkpoint:' || r.slug ||" \
    "   '@step' || c.step, 'step', c.step, 'best', " D##_B("c.best") ", 'stored', " \
    D##_B("c.stored") ")") \
    "   FROM (SELECT * FROM checkpoints WHERE run_id=r.id ORDER BY step) c)," \
    " 'trials', (SELECT count(*) FROM trials WHERE run_id=r.id)," \
    " 'events', (SELECT count(*) FROM run_events WHERE run_id=r.id))" \
    " FROM runs r LEFT JOIN projects p ON p.id=r.project_id" \
    " LEFT JOIN experiments e ON e.id=r.experiment_id WHERE r.tenant_id=?1 AND r.id=?2"
  PMCP__SQL_BOTH(sql, RUN_SQL);
#undef RUN_SQL
  /* brief: the base members only (what a card picks of them), without the
   * environment, code, counts and lists the whole record carries */
#define RUN_BRIEF_SQL(D) \
    "SELECT " D##_JO "'kind', 'run', 'ref', 'run:' || r.slug, 'id', r.slug, 'name', r.name," \
    " 'description', r.description, 'status', r.status," \
    " 'project', 'project:' || p.slug, 'experiment', 'experiment:' || e.slug," \
    " 'created', r.created, 'started', r.started, 'ended', r.ended," \
    " 'deleted', " D##_B("r.deleted") ")" \
    " FROM runs r LEFT JOIN projects p ON p.id=r.project_id" \
    " LEFT JOIN experiments e ON e.id=r.experiment_id WHERE r.tenant_id=?1 AND r.id=?2"
  PMCP__SQL_BOTH(brief, RUN_BRIEF_SQL);
#undef RUN_BRIEF_SQL
  const char *sql = r->brief ? PMCP__SQL_PICK(r->q, brief_sq, brief_pg)
                             : PMCP__SQL_PICK(r->q, sql_sq, sql_pg);
  cJSON *o = jrow(r, sql, rid, NULL);
  if (!o)
    return NULL;
  add_attributes(r, o, "run", rid);
  add_tags(r, o, "run", rid);
  /* The experiment's config attributes are inherited too. */
  static const char sql_e[] = "SELECT experiment_id FROM runs WHERE id=?1";
  pmcp__stmt *st;
  int64_t eid = 0;
  if (r->brief)
    return o; /* no config, inherited config nor what the run owns */
  if (!r->rc && !(r->rc = pmcp__sql_prep(r->s, r->q, sql_e, &st))) {
    pmcp__st_bind_int64(st, 1, rid);
    if (pmcp__st_step(st) == PMCP__ROW)
      eid = pmcp__st_int64(st, 0);
    pmcp__st_reset(st);
  }
  if (eid) {
    cJSON *tmp = cJSON_CreateObject();
    add_attributes(r, tmp, "experiment", eid);
    cJSON *ea = cJSON_GetObjectItemCaseSensitive(tmp, "attributes");
    cJSON *cfg = cJSON_GetObjectItemCaseSensitive(ea, "config");
    if (cfg && cJSON_GetArraySize(cfg) > 0) {
      cJSON *inh = cJSON_GetObjectItemCaseSensitive(o, "inherited");
      if (!cJSON_IsObject(inh)) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, "inherited");
        inh = cJSON_AddObjectToObject(o, "inherited");
      }
      cJSON *it;
      cJSON_ArrayForEach(it, cfg)
        if (!cJSON_GetObjectItemCaseSensitive(inh, it->string))
          cJSON_AddItemToObject(inh, it->string, cJSON_Duplicate(it, 1));
    }
    cJSON_Delete(tmp);
  }
  cJSON *attrs = cJSON_GetObjectItemCaseSensitive(o, "attributes");
  cJSON *cfg = cJSON_GetObjectItemCaseSensitive(attrs, "config");
  add(o, "config", cfg ? cJSON_Duplicate(cfg, 1) : cJSON_CreateObject());
  add_owned(r, o, "run", rid, id);
  return o;
}

/* An experiment's and a project's "runs" are the live counts the triggers
 * keep (SQLite v9, PostgreSQL v7), the numbers their listings show too,
 * read instead of counted. */
static cJSON *get_experiment(rd *r, const char *id)
{
  int64_t eid = row_id(r, "experiment", id);
#define EXPERIMENT_SQL(D) \
    "SELECT " D##_JO "'kind', 'experiment', 'ref', 'experiment:' || e.slug, 'id', e.slug," \
    " 'name', e.name, 'description', e.description, 'project', 'project:' || p.slug," \
    " 'config', " D##_JSON("e.config") ", 'created', e.created," \
    " 'deleted', " D##_B("e.deleted") "," \
    " 'runs', e.n_runs," \
    " 'versions', (SELECT " D##_AGG(D##_JO "'version', v.version, 'description'," \
    "   v.description, 'config', " D##_JSON("v.config") ", 'author', v.author, 'created'," \
    " v.created)") \
    "   FROM (SELECT * FROM experiment_versions WHERE experiment_id=e.id ORDER BY version" \
    " DESC) v)," \
    " 'groups', (SELECT " D##_AGG_BY(D##_JO "'ref', 'group:' || g.slug, 'name', g.name)", "g.id") \
    "   FROM groups g WHERE g.experiment_id=e.id)," \
    " 'overview', (SELECT " D##_JO "'ref', 'note:' || n.slug, 'version', n.version," \
    "   'status', n.status, 'updated', n.updated) FROM notes n WHERE n.kind='overview'" \
    "   AND n.owner_kind='experiment' AND n.owner_id=e.id))" \
    " FROM experiments e JOIN projects p ON p.id=e.project_id WHERE e.tenant_id=?1 AND e.id=?2"
  PMCP__SQL_BOTH(sql, EXPERIMENT_SQL);
#undef EXPERIMENT_SQL
#define EXPERIMENT_BRIEF_SQL(D) \
    "SELECT " D##_JO "'kind', 'experiment', 'ref', 'experiment:' || e.slug, 'id', e.slug," \
    " 'name', e.name, 'description', e.description, 'project', 'project:' || p.slug," \
    " 'created', e.created, 'deleted', " D##_B("e.deleted") ", 'runs', e.n_runs)" \
    " FROM experiments e JOIN projects p ON p.id=e.project_id WHERE e.tenant_id=?1 AND e.id=?2"
  PMCP__SQL_BOTH(brief, EXPERIMENT_BRIEF_SQL);
#undef EXPERIMENT_BRIEF_SQL
  const char *sql = r->brief ? PMCP__SQL_PICK(r->q, brief_sq, brief_pg)
                             : PMCP__SQL_PICK(r->q, sql_sq, sql_pg);
  cJSON *o = jrow(r, sql, eid, NULL);
  if (!o)
    return NULL;
  add_attributes(r, o, "experiment", eid);
  add_tags(r, o, "experiment", eid);
  add_owned(r, o, "experiment", eid, id);
  return o;
}

static cJSON *get_project(rd *r, const char *id)
{
  int64_t pid = row_id(r, "project", id);
#define PROJECT_SQL(D) \
    "SELECT " D##_JO "'kind', 'project', 'ref', 'project:' || p.slug, 'id', p.slug," \
    " 'name', p.name, 'description', p.description, 'workspace', 'workspace:' || w.slug," \
    " 'readme', p.readme, 'created', p.created," \
    " 'experiments', (SELECT " D##_AGG(D##_JO "'ref', 'experiment:' || slug, 'name'," \
    "   name)") " FROM (SELECT * FROM experiments WHERE project_id=p.id AND deleted=0 ORDER" \
    " BY name) x)," \
    " 'runs', p.n_runs," \
    " 'papers', (SELECT " D##_AGG_BY(D##_JO "'ref', 'paper:' || pp.arxiv_id, 'title'," \
    "   pa.title, 'note', pp.note)", "pp.arxiv_id") " FROM project_papers pp LEFT JOIN papers pa" \
    "   ON pa.tenant_id=pp.tenant_id AND pa.arxiv_id=pp.arxiv_id WHERE pp.project_id=p.id)," \
    " 'overview', (SELECT " D##_JO "'ref', 'note:' || n.slug, 'version', n.version," \
    "   'status', n.status, 'updated', n.updated) FROM notes n WHERE n.kind='overview'" \
    "   AND n.owner_kind='project' AND n.owner_id=p.id))" \
    " FROM projects p JOIN workspaces w ON w.id=p.workspace_id WHERE p.tenant_id=?1 AND p.id=?2"
  PMCP__SQL_BOTH(sql, PROJECT_SQL);
#undef PROJECT_SQL
#define PROJECT_BRIEF_SQL(D) \
    "SELECT " D##_JO "'kind', 'project', 'ref', 'project:' || p.slug, 'id', p.slug," \
    " 'name', p.name, 'description', p.description, 'workspace', 'workspace:' || w.slug," \
    " 'created', p.created, 'runs', p.n_runs)" \
    " FROM projects p JOIN workspaces w ON w.id=p.workspace_id WHERE p.tenant_id=?1 AND p.id=?2"
  PMCP__SQL_BOTH(brief, PROJECT_BRIEF_SQL);
#undef PROJECT_BRIEF_SQL
  const char *sql = r->brief ? PMCP__SQL_PICK(r->q, brief_sq, brief_pg)
                             : PMCP__SQL_PICK(r->q, sql_sq, sql_pg);
  cJSON *o = jrow(r, sql, pid, NULL);
  if (!o)
    return NULL;
  add_attributes(r, o, "project", pid);
  add_tags(r, o, "project", pid);
  add_owned(r, o, "project", pid, id);
  return o;
}

static cJSON *get_workspace(rd *r, const char *id)
{
  int64_t wid = row_id(r, "workspace", id);
#define WORKSPACE_SQL(D) \
    "SELECT " D##_JO "'kind', 'workspace', 'ref', 'workspace:' || w.slug, 'id', w.slug," \
    " 'name', w.name, 'description', w.description, 'created', w.created," \
    " 'projects', (SELECT " D##_AGG(D##_JO "'ref', 'project:' || slug, 'name', name)") \
    "   FROM (SELECT * FROM projects WHERE workspace_id=w.id ORDER BY name) x)," \
    " 'files', (SELECT count(*) FROM files WHERE workspace_id=w.id))" \
    " FROM workspaces w WHERE w.tenant_id=?1 AND w.id=?2"
  PMCP__SQL_BOTH(sql, WORKSPACE_SQL);
#undef WORKSPACE_SQL
  const char *sql = PMCP__SQL_PICK(r->q, sql_sq, sql_pg);
  return jrow(r, sql, wid, NULL);
}

#define NOTE_SQL(D) \
    "SELECT " D##_JO "'kind', CASE n.kind WHEN 'sub-note' THEN 'sub-note' WHEN 'team' THEN" \
    " 'team-note' ELSE 'note' END, 'ref', CASE n.kind WHEN 'team' THEN 'team-note' WHEN" \
    " 'sub-note' THEN 'sub-note:' || n.slug ELSE 'note:' || n.slug END, 'id', n.slug," \
    " 'note_kind', n.kind, 'title', n.title, 'status', n.status, 'on', n.owner_kind || ':' ||" \
    " (SELECT slug FROM runs WHERE n.owner_kind='run' AND id=n.owner_id UNION ALL" \
    "  SELECT slug FROM experiments WHERE n.owner_kind='experiment' AND id=n.owner_id UNION ALL" \
    "  SELECT slug FROM projects WHERE n.owner_kind='project' AND id=n.owner_id)," \
    " 'parent', (SELECT CASE p.kind WHEN 'sub-note' THEN 'sub-note:' ELSE 'note:' END || p.slug" \
    "   FROM notes p WHERE p.id=n.parent_id/*ws row notes p.id*/)," \
    " 'version', n.version, 'created', n.created, 'updated', n.updated," \
    " 'body', v.body, 'summary', v.summary, 'author', v.author, 'via', v.via," \
    " 'sub_notes', (SELECT " D##_AGG_BY("'sub-note:' || c.slug", "c.id") " FROM notes c" \
    "   WHERE c.parent_id=n.id/*ws row notes c.id*/)," \
    " 'history', (SELECT " D##_AGG(D##_JO "'version', h.version, 'author', h.author," \
    "   'via', h.via, 'created', h.created, 'status', h.status)") " FROM (SELECT * FROM" \
    " note_versions" \
    "   WHERE note_id=n.id ORDER BY version DESC) h))" \
    " FROM notes n JOIN note_versions v ON v.note_id=n.id AND v.version=n.version" \
    " WHERE n.tenant_id=?1 AND n.id=?2"
PMCP__SQL_BOTH(note_sql, NOTE_SQL);
#undef NOTE_SQL

static cJSON *get_note(rd *r, const char *id)
{
  /* note:ID@N reads version N. */
  char base[160];
  snprintf(base, sizeof base, "%s", id);
  char *at = strchr(base, '@');
  long long want = 0;
  if (at) {
    *at = '\0';
    char *end;
    want = strtoll(at + 1, &end, 10);
    if (*end || want <= 0) {
      r->rc = pmcp_store_set_error(r->s, PMCP_EINVAL, "invalid note version '%.32s'", at + 1);
      return NULL;
    }
  }
  int64_t nid = row_id(r, "note", base);
  cJSON *o = jrow(r, PMCP__SQL_PICK(r->q, note_sql_sq, note_sql_pg), nid, NULL);
  if (o && want) {
#define SQL_6(D) \
    "SELECT " D##_JO "'version', version, 'title', title, 'body', body, 'summary'," \
    " summary, 'status', status, 'author', author, 'via', via, 'created', created)" \
    " FROM note_versions WHERE tenant_id=?1 AND note_id=?2 AND version=?3"
    PMCP__SQL_BOTH(sql, SQL_6);
#undef SQL_6
    const char *sql = PMCP__SQL_PICK(r->q, sql_sq, sql_pg);
    char vb[32];
    snprintf(vb, sizeof vb, "%lld", want);
    cJSON *v = jrow(r, sql, nid, vb);
    if (!v && !r->rc)
      r->rc = pmcp_store_set_error(r->s, PMCP_ENOTFOUND, "note '%s' has no version %lld", base,
                                   want);
    const char *keys[] = {"version", "title", "body", "summary", "status", "author", "via"};
    for (size_t i = 0; v && i < sizeof keys / sizeof keys[0]; i++) {
      cJSON *it = cJSON_DetachItemFromObjectCaseSensitive(v, keys[i]);
      if (it)
        cJSON_ReplaceItemInObjectCaseSensitive(o, keys[i], it);
    }
    cJSON_Delete(v);
  }
  return o;
}

static cJSON *get_team_note(rd *r)
{
  static const char sql[] = "SELECT id FROM notes WHERE tenant_id=?1 AND kind='team' AND ?2=?2";
  pmcp__stmt *st;
  int64_t nid = 0;
  if ((r->rc = pmcp__sql_prep(r->s, r->q, sql, &st)))
    return NULL;
  pmcp__st_bind_int64(st, 1, r->t.id);
  pmcp__st_bind_int64(st, 2, 0);
  if (pmcp__st_step(st) == PMCP__ROW)
    nid = pmcp__st_int64(st, 0);
  pmcp__st_reset(st);
  if (!nid) {
    r->rc = pmcp_store_set_error(r->s, PMCP_ENOTFOUND, "this lab has no team note yet");
    return NULL;
  }
  return jrow(r, PMCP__SQL_PICK(r->q, note_sql_sq, note_sql_pg), nid, NULL);
}

static cJSON *get_artifact(rd *r, const char *id)
{
  int64_t aid = row_id(r, "artifact", id);
#define ARTIFACT_SQL(D) \
    "SELECT " D##_JO "'kind', 'artifact', 'ref', 'artifact:' || a.slug, 'id', a.slug," \
    " 'name', a.name, 'description', a.description," \
    " 'on', a.owner_kind || ':' || (SELECT slug FROM runs WHERE a.owner_kind='run' AND" \
    " id=a.owner_id" \
    "  UNION ALL SELECT slug FROM experiments WHERE a.owner_kind='experiment' AND id=a.owner_id" \
    "  UNION ALL SELECT slug FROM projects WHERE a.owner_kind='project' AND id=a.owner_id)," \
    " 'shared', " D##_B("a.shared") ", 'latest', a.latest," \
    " 'created', a.created," \
    " 'labels', (SELECT " D##_OBJ_AGG("label", "version") " FROM artifact_labels" \
    "   WHERE artifact_id=a.id)," \
    " 'versions', (SELECT " D##_AGG(D##_JO "'version', v.version, 'path', v.path," \
    "   'media_type', v.media_type, 'size', v.size, 'sha256', v.sha256, 'uri', v.uri," \
    "   'stored', " D##_BB("v.content IS NOT NULL") "," \
    "   'text', " D##_B("v.is_text") "," \
    "   'created', v.created, 'labels', (SELECT " D##_ARR("label") " FROM artifact_labels l" \
    "   WHERE l.artifact_id=a.id AND l.version=v.version))") \
    "   FROM (SELECT * FROM artifact_versions WHERE artifact_id=a.id ORDER BY version DESC) v))" \
    " FROM artifacts a WHERE a.tenant_id=?1 AND a.id=?2"
  PMCP__SQL_BOTH(sql, ARTIFACT_SQL);
#undef ARTIFACT_SQL
  const char *sql = PMCP__SQL_PICK(r->q, sql_sq, sql_pg);
  cJSON *o = jrow(r, sql, aid, NULL);
  if (o) {
    char ref[300];
    snprintf(ref, sizeof ref, "artifact:%s", cJSON_GetObjectItem(o, "id")->valuestring);
    add_sessions_of(r, o, ref);
  }
  add_lineage_self(r, o);
  return o;
}

static cJSON *get_dataset(rd *r, const char *id)
{
  char base[160];
  snprintf(base, sizeof base, "%s", id);
  char *at = strchr(base, '@');
  if (at)
    *at++ = '\0';
  int64_t did = row_id(r, "dataset", base);
#define DATASET_SQL(D) \
    "SELECT " D##_JO "'kind', 'dataset', 'ref', 'dataset:' || d.slug, 'id', d.slug," \
    " 'name', d.name, 'description', d.description, 'uri', d.uri," \
    " 'project', 'project:' || (SELECT slug FROM projects WHERE id=d.project_id)," \
    " 'registered', " D##_B("d.registered") "," \
    " 'created', d.created," \
    " 'versions', (SELECT " D##_AGG(D##_JO "'version', v.version, 'uri', v.uri," \
    "   'sha256', v.sha256, 'size', v.size, 'rows', v.rows, 'description', v.description," \
    "   'created', v.created)") " FROM (SELECT * FROM dataset_versions WHERE dataset_id=d.id" \
    "   ORDER BY created DESC, id DESC) v))" \
    " FROM datasets d WHERE d.tenant_id=?1 AND d.id=?2"
  PMCP__SQL_BOTH(sql, DATASET_SQL);
#undef DATASET_SQL
  const char *sql = PMCP__SQL_PICK(r->q, sql_sq, sql_pg);
  cJSON *o = jrow(r, sql, did, NULL);
  if (o && at) {
#define SQL_V_7(D) \
    "SELECT " D##_JO "'version', version, 'uri', uri, 'sha256', sha256, 'size', size," \
    " 'rows', rows, 'description', description, 'created', created) FROM" \
    " dataset_versions WHERE tenant_id=?1 AND dataset_id=?2 AND version=?3"
    PMCP__SQL_BOTH(sql_v, SQL_V_7);
#undef SQL_V_7
    const char *sql_v = PMCP__SQL_PICK(r->q, sql_v_sq, sql_v_pg);
    cJSON *v = jrow(r, sql_v, did, at);
    if (!v && !r->rc)
      r->rc = pmcp_store_set_error(r->s, PMCP_ENOTFOUND, "dataset '%s' has no version '%.32s'",
                                   base, at);
    add(o, "version", v);
    char ref[320];
    snprintf(ref, sizeof ref, "dataset:%s@%s", base, at);
    cJSON_ReplaceItemInObjectCaseSensitive(o, "ref", cJSON_CreateString(ref));
  }
  add_lineage_self(r, o);
  return o;
}

static cJSON *get_checkpoint(rd *r, const char *id)
{
  /* checkpoint:RUN@best | @latest | @stepN, or a checkpoint's own id. */
  char base[160];
  snprintf(base, sizeof base, "%s", id);
  char *at = strchr(base, '@');
  int64_t cid = 0;
  pmcp__stmt *st;
  if (!at) {
    cid = row_id(r, "checkpoint", base);
  } else {
    *at++ = '\0';
    int64_t rid = row_id(r, "run", base);
    if (r->rc)
      return NULL;
    const char *sql;
    long long step = 0;
    if (strcmp(at, "best") == 0)
      sql = "SELECT id FROM checkpoints WHERE run_id=?1 AND best=1 AND ?2=?2";
    else if (strcmp(at, "latest") == 0)
      sql = "SELECT id FROM checkpoints WHERE run_id=?1 AND ?2=?2 ORDER BY step DESC LIMIT 1";
    else if (strncmp(at, "step", 4) == 0 && at[4]) {
      char *end;
      step = strtoll(at + 4, &end, 10);
      if (*end) {
        r->rc = pmcp_store_set_error(r->s, PMCP_EINVAL,
            "invalid checkpoint selector '@%.32s' (@best, @latest or @stepN)", at);
        return NULL;
      }
      sql = "SELECT id FROM checkpoints WHERE run_id=?1 AND step=?2";
    } else {
      r->rc = pmcp_store_set_error(r->s, PMCP_EINVAL,
          "invalid checkpoint selector '@%.32s' (@best, @latest or @stepN)", at);
      return NULL;
    }
    if ((r->rc = pmcp__sql_prep(r->s, r->q, sql, &st)))
      return NULL;
    pmcp__st_bind_int64(st, 1, rid);
    pmcp__st_bind_int64(st, 2, step);
    if (pmcp__st_step(st) == PMCP__ROW)
      cid = pmcp__st_int64(st, 0);
    pmcp__st_reset(st);
    if (!cid) {
      r->rc = pmcp_store_set_error(r->s, PMCP_ENOTFOUND, "run '%s' has no checkpoint @%.32s",
                                   base, at);
      return NULL;
    }
  }
#define CHECKPOINT_SQL(D) \
    "SELECT " D##_JO "'kind', 'checkpoint', 'ref', 'checkpoint:' || r.slug || '@step' || c.step," \
    " 'id', c.slug, 'run', 'run:' || r.slug, 'step', c.step," \
    " 'best', " D##_B("c.best") "," \
    " 'stored', " D##_B("c.stored") ", 'uri', c.uri," \
    " 'size', c.size, 'metric', c.metric, 'value', " D##_NUMJ("c.value") ", 'created', c.created," \
    " 'versions', (SELECT " D##_AGG(D##_JO "'ref', 'checkpoint:' || r.slug || '@step'" \
    "   || o.step, 'step', o.step, 'best', " D##_B("o.best") ")") \
    "   FROM (SELECT * FROM checkpoints WHERE run_id=c.run_id ORDER BY step) o))" \
    " FROM checkpoints c JOIN runs r ON r.id=c.run_id WHERE c.tenant_id=?1 AND c.id=?2"
  PMCP__SQL_BOTH(sql, CHECKPOINT_SQL);
#undef CHECKPOINT_SQL
  const char *sql = PMCP__SQL_PICK(r->q, sql_sq, sql_pg);
  cJSON *o = jrow(r, sql, cid, NULL);
  add_lineage_self(r, o);
  return o;
}

static cJSON *get_simple(rd *r, const char *kind, const char *id)
{
#define SQL_SOURCE_8(D) \
    "SELECT " D##_JO "'kind', 'source', 'ref', 'source:' || slug, 'id', slug," \
    " 'provider', provider, 'source_kind', kind, 'uri', uri, 'version', version," \
    " 'description', description, 'created', created, 'runs', (SELECT count(*) FROM" \
    " lineage l WHERE l.tenant_id=s.tenant_id AND l.from_ref='source:' || s.slug AND" \
    " l.to_ref LIKE 'run:%'/*ws ref l.to_ref*/)) FROM sources s WHERE tenant_id=?1" \
    " AND id=?2"
  PMCP__SQL_BOTH(sql_source, SQL_SOURCE_8);
#undef SQL_SOURCE_8
  const char *sql_source = PMCP__SQL_PICK(r->q, sql_source_sq, sql_source_pg);
#define SQL_GROUP(D) \
    "SELECT " D##_JO "'kind', 'group', 'ref', 'group:' || g.slug, 'id', g.slug, 'name', g.name," \
    " 'description', g.description, 'experiment', 'experiment:' || (SELECT slug FROM experiments" \
    " WHERE id=g.experiment_id), 'created', g.created, 'runs', (SELECT " D##_AGG_BY( \
    D##_JO "'ref', 'run:' || r.slug, 'name', r.name, 'status', r.status, 'deleted', " \
    D##_BB("r.deleted<>0") ")", "gr.run_id") " FROM group_runs gr" \
    " JOIN runs r ON r.id=gr.run_id WHERE gr.group_id=g.id/*ws row runs r.id*/))" \
    " FROM groups g WHERE g.tenant_id=?1 AND g.id=?2"
  PMCP__SQL_BOTH(sql_group, SQL_GROUP);
#undef SQL_GROUP
  const char *sql_group = PMCP__SQL_PICK(r->q, sql_group_sq, sql_group_pg);
#define SQL_TRIAL_9(D) \
    "SELECT " D##_JO "'kind', 'trial', 'ref', 'trial:' || t.slug, 'id', t.slug," \
    " 'name', t.name, 'run', 'run:' || r.slug, 'params', " D##_JSON("t.params") \
    ", 'status', t.status, 'score', " D##_NUMJ("t.score") ", 'trajectory', " \
    D##_JSON("t.trajectory") ", 'created', t.created) FROM trials t JOIN runs r ON" \
    " r.id=t.run_id WHERE t.tenant_id=?1 AND t.id=?2"
  PMCP__SQL_BOTH(sql_trial, SQL_TRIAL_9);
#undef SQL_TRIAL_9
  const char *sql_trial = PMCP__SQL_PICK(r->q, sql_trial_sq, sql_trial_pg);
#define SQL_SESSION(D) \
    "SELECT " D##_JO "'kind', 'session', 'ref', 'session:' || s.slug, 'id', s.slug, 'title'," \
    " s.title, 'agent', s.agent, 'started', s.started, 'ended', s.ended, 'created', s.created," \
    " 'on', (SELECT " D##_ARR("ref") " FROM session_links WHERE session_id=s.id)," \
    " 'transcript', " D##_JSON("s.transcript") ") FROM sessions s WHERE s.tenant_id=?1 AND s.id=?2"
  PMCP__SQL_BOTH(sql_session, SQL_SESSION);
#undef SQL_SESSION
  const char *sql_session = PMCP__SQL_PICK(r->q, sql_session_sq, sql_session_pg);
#define SQL_FILE(D) \
    "SELECT " D##_JO "'kind', 'file', 'ref', 'file:' || f.slug, 'id', f.slug, 'path', f.path," \
    " 'workspace', 'workspace:' || (SELECT slug FROM workspaces WHERE id=f.workspace_id)," \
    " 'shared', " D##_BB("f.workspace_id=0") "," \
    " 'media_type', f.media_type, 'size', f.size, 'sha256', f.sha256, 'uri', f.uri," \
    " 'created', f.created, 'content', " D##_TEXT("f.content") ")" \
    " FROM files f WHERE f.tenant_id=?1 AND f.id=?2"
  PMCP__SQL_BOTH(sql_file, SQL_FILE);
#undef SQL_FILE
  const char *sql_file = PMCP__SQL_PICK(r->q, sql_file_sq, sql_file_pg);
  const char *sql = strcmp(kind, "source") == 0    ? sql_source
                    : strcmp(kind, "group") == 0   ? sql_group
                    : strcmp(kind, "trial") == 0   ? sql_trial
                    : strcmp(kind, "session") == 0 ? sql_session
                                                   : sql_file;
  char base[160];
  snprintf(base, sizeof base, "%s", id);
  char *at = strchr(base, '@');
  if (at && strcmp(kind, "source") == 0)
    *at = '\0';
  int64_t rid = row_id(r, kind, base);
  cJSON *o = jrow(r, sql, rid, NULL);
  if (o && at && strcmp(kind, "source") == 0) {
    /* source:ID@V names the source at version V: another is not found */
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "version");
    if (!cJSON_IsString(v) || strcmp(v->valuestring, at + 1) != 0) {
      r->rc = pmcp_store_set_error(r->s, PMCP_ENOTFOUND, "source '%.64s' has no version '%.64s'%s%.64s%s",
                                   base, at + 1, cJSON_IsString(v) ? " (it is at " : "",
                                   cJSON_IsString(v) ? v->valuestring : "",
                                   cJSON_IsString(v) ? ")" : "");
      cJSON_Delete(o);
      return NULL;
    }
  }
  if (strcmp(kind, "source") == 0 || strcmp(kind, "group") == 0)
    add_lineage_self(r, o);
  return o;
}

static cJSON *get_paper(rd *r, const char *id)
{
#define SQL_10(D) \
    "SELECT " D##_JO "'kind', 'paper', 'ref', 'paper:' || arxiv_id, 'id', arxiv_id," \
    " 'title', title, 'abstract', abstract, 'authors', authors, 'categories'," \
    " categories, 'published', published, 'updated', updated, 'doi', doi," \
    " 'journal_ref', journal_ref, 'comments', comments, 'provenance', 'open-web')" \
    " FROM papers WHERE tenant_id=?1 AND ?2=?2 AND arxiv_id=?3"
  PMCP__SQL_BOTH(sql, SQL_10);
#undef SQL_10
  const char *sql = PMCP__SQL_PICK(r->q, sql_sq, sql_pg);
  cJSON *o = jrow(r, sql, 0, id);
  if (!o && !r->rc)
    r->rc = pmcp_store_set_error(r->s, PMCP_ENOTFOUND, "no paper '%.64s' in the papers index", id);
  return o;
}

/* As the record's text read back would be: a number that is not finite is
 * written as null. */
static void as_read_back(cJSON *v)
{
  for (cJSON *c = v ? v->child : NULL; c; c = c->next) {
    if (cJSON_IsNumber(c) && !isfinite(c->valuedouble)) {
      c->type = cJSON_NULL | (c->type & cJSON_StringIsConst);
      c->valuedouble = 0;
      c->valueint = 0;
    } else if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
      as_read_back(c);
    }
  }
}

int pmcp__sql_get(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref, pmcp_buf *out)
{
  cJSON *o = NULL;
  int rc = pmcp__sql_get_tree(s, ctx, t, ref, 0, &o);
  if (rc)
    return rc;
  pmcp__buf_reset(out);
  rc = pmcp__cjson_write(out, o, 0);
  cJSON_Delete(o);
  return rc ? pmcp_store_set_error(s, rc, "the record cannot be printed: %s", pmcp_strerror(rc))
            : 0;
}

static int get_tree(pmcp_store *s, pmcp__sql *q, pmcp_tenant t, const char *ref,
                    unsigned flags, cJSON **out)
{
  rd r = {s, q, t, 0, (flags & PMCP__GET_BRIEF) != 0};
  cJSON *o = NULL;
  if (strcmp(ref, "team-note") == 0) {
    o = get_team_note(&r);
  } else {
    char kind[32];
    const char *id;
    if ((r.rc = pmcp__ref_split(s, ref, NULL, kind, &id)))
      return r.rc;
    if (strlen(id) > 150)
      return pmcp_store_set_error(s, PMCP_EINVAL, "ref '%.64s...' is too long", ref);
    if (strcmp(kind, "run") == 0)
      o = get_run(&r, id);
    else if (strcmp(kind, "experiment") == 0)
      o = get_experiment(&r, id);
    else if (strcmp(kind, "project") == 0)
      o = get_project(&r, id);
    else if (strcmp(kind, "workspace") == 0)
      o = get_workspace(&r, id);
    else if (strcmp(kind, "note") == 0 || strcmp(kind, "sub-note") == 0)
      o = get_note(&r, id);
    else if (strcmp(kind, "artifact") == 0)
      o = get_artifact(&r, id);
    else if (strcmp(kind, "dataset") == 0)
      o = get_dataset(&r, id);
    else if (strcmp(kind, "checkpoint") == 0)
      o = get_checkpoint(&r, id);
    else if (strcmp(kind, "source") == 0 || strcmp(kind, "group") == 0 ||
             strcmp(kind, "trial") == 0 || strcmp(kind, "session") == 0 ||
             strcmp(kind, "file") == 0)
      o = get_simple(&r, kind, id);
    else if (strcmp(kind, "paper") == 0)
      o = get_paper(&r, id);
    else
      return pmcp_store_set_error(s, PMCP_EINVAL,
          "unknown ref kind '%s' (run, experiment, project, workspace, note, sub-note, artifact,"
          " dataset, checkpoint, source, group, trial, session, file, paper, team-note)", kind);
  }
  if (r.rc || !o) {
    cJSON_Delete(o);
    return r.rc ? r.rc : pmcp_store_set_error(s, PMCP_ENOTFOUND, "no such entity '%.64s'", ref);
  }
  as_read_back(o);
  *out = o;
  return 0;
}

int pmcp__sql_get_tree(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                       unsigned flags, cJSON **out)
{
  *out = NULL;
  pmcp__sql *q = PMCP__SQL(ctx);
  int rc, opened = 0;
  if ((rc = pmcp__sql_ready(s, q, t)) || (rc = pmcp__sql_flush(s, q)))
    return rc;
  /* one read transaction for the record's statements */
  if ((rc = pmcp__sql_rbegin(s, q, &opened)))
    return rc;
  rc = get_tree(s, q, t, ref, flags, out);
  pmcp__sql_rend(s, q, opened);
  return rc;
}
