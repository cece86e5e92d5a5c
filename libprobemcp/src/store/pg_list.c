/* PostgreSQL backend: pmcp_store_list(). Each kind is a row of a table: the
 * item's JSON expression, its FROM clause, order, which parents narrow it
 * (and how), its literal-query columns and its filters. The SQL is
 * assembled from those fixed fragments only; every value is bound. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "store/pg.h"
#include "store/ws_scope.h"

/* A 0/1 column as a JSON boolean; BB: an SQL boolean expression. */
#define B(col) "(" col "=1)"
#define BB(expr) "(" expr ")"

typedef struct parent_rule {
  const char *kind;   /* parent ref kind; "*" matches any ref (text :pref) */
  const char *cond;   /* uses :p (row id) or :pref (the ref text) */
} parent_rule;

typedef struct filter_rule {
  const char *name;
  char type;          /* 'b' bool, 's' string, 'i' integer */
  const char *cond;   /* uses :f */
} filter_rule;

typedef struct list_kind {
  const char *kind;
  const char *item;
  const char *from;
  const char *tenant_col;
  const char *order;
  const char *query;          /* text the literal query matches, or NULL */
  const char *deleted;        /* deleted flag column, or NULL */
  int parent_required;
  parent_rule parents[5];
  filter_rule filters[5];
} list_kind;

static const list_kind kinds[] = {
  {"workspace",
   "json_build_object('ref', 'workspace:' || w.slug, 'name', w.name, 'description', w.description,"
   " 'projects', (SELECT count(*) FROM projects WHERE workspace_id=w.id), 'created', w.created)",
   "workspaces w", "w.tenant_id", "w.name, w.id", "w.name || ' ' || w.slug", NULL, 0, {{0}}, {{0}}},
  {"project",
   "json_build_object('ref', 'project:' || p.slug, 'name', p.name, 'description', p.description,"
   " 'workspace', 'workspace:' || (SELECT slug FROM workspaces WHERE id=p.workspace_id),"
   " 'experiments', p.n_experiments, 'runs', p.n_runs, 'created', p.created)",
   "projects p", "p.tenant_id", "p.name, p.id", "p.name || ' ' || p.slug", NULL, 0,
   {{"workspace", "p.workspace_id=:p"}}, {{0}}},
  {"experiment",
   "json_build_object('ref', 'experiment:' || e.slug, 'name', e.name, 'description', e.description,"
   " 'project', 'project:' || (SELECT slug FROM projects WHERE id=e.project_id),"
   " 'runs', e.n_runs, 'deleted', " B("e.deleted") ", 'created', e.created)",
   "experiments e", "e.tenant_id", "e.created DESC, e.id DESC", "e.name || ' ' || e.slug",
   "e.deleted", 0, {{"project", "e.project_id=:p"}}, {{0}}},
  {"run",
   "json_build_object('ref', 'run:' || r.slug, 'name', r.name, 'status', r.status,"
   " 'project', 'project:' || (SELECT slug FROM projects WHERE id=r.project_id),"
   " 'experiment', 'experiment:' || (SELECT slug FROM experiments WHERE id=r.experiment_id),"
   " 'created', r.created, 'started', r.started, 'ended', r.ended, 'deleted', " B("r.deleted") ","
   " 'tags', (SELECT coalesce(json_agg(tag ORDER BY tag), '[]'::json) FROM tags WHERE owner_kind='run' AND owner_id=r.id))",
   "runs r", "r.tenant_id", "r.created DESC, r.id DESC", "r.name || ' ' || r.slug", "r.deleted", 0,
   {{"experiment", "r.experiment_id=:p"}, {"project", "r.project_id=:p"},
    {"group", "r.id IN (SELECT run_id FROM group_runs WHERE group_id=:p)"}},
   {{"status", 's', "r.status=:f"}, {"active", 'b', "(r.status='running')=:f"},
    {"unfiled", 'b', "(r.project_id IS NULL)=:f"},
    {"tag", 's', "r.id IN (SELECT owner_id FROM tags WHERE owner_kind='run' AND tag=:f)"}}},
  {"note",
   "json_build_object('ref', CASE n.kind WHEN 'sub-note' THEN 'sub-note:' WHEN 'team' THEN '' ELSE"
   " 'note:' END || CASE n.kind WHEN 'team' THEN 'team-note' ELSE n.slug END, 'note_kind', n.kind,"
   " 'title', n.title, 'status', n.status, 'on', n.owner_kind || ':' ||"
   " (SELECT slug FROM runs WHERE n.owner_kind='run' AND id=n.owner_id UNION ALL"
   "  SELECT slug FROM experiments WHERE n.owner_kind='experiment' AND id=n.owner_id UNION ALL"
   "  SELECT slug FROM projects WHERE n.owner_kind='project' AND id=n.owner_id),"
   " 'version', n.version, 'updated', n.updated, 'author', v.author, 'via', v.via,"
   " 'excerpt', substr(v.body, 1, 200), 'chars', length(v.body))",
   "notes n JOIN note_versions v ON v.note_id=n.id AND v.version=n.version", "n.tenant_id",
   "n.updated DESC, n.id DESC", "coalesce(n.title, '') || ' ' || v.body || ' ' || coalesce(v.summary, '')",
   NULL, 0,
   {{"run", "n.owner_kind='run' AND n.owner_id=:p"},
    {"experiment", "n.owner_kind='experiment' AND n.owner_id=:p"},
    {"project", "n.owner_kind='project' AND n.owner_id=:p"},
    {"note", "n.parent_id=:p"}, {"sub-note", "n.parent_id=:p"}},
   {{"kind", 's', "n.kind=:f"}}},
  {"note-version",
   "json_build_object('version', v.version, 'title', v.title, 'status', v.status, 'author', v.author,"
   " 'via', v.via, 'created', v.created, 'chars', length(v.body),"
   " 'has_summary', " BB("v.summary IS NOT NULL") ")",
   "note_versions v", "v.tenant_id", "v.version DESC", NULL, NULL, 1,
   {{"note", "v.note_id=:p"}, {"sub-note", "v.note_id=:p"}}, {{0}}},
  {"artifact",
   "json_build_object('ref', 'artifact:' || a.slug, 'name', a.name, 'description', a.description,"
   " 'on', a.owner_kind || ':' || (SELECT slug FROM runs WHERE a.owner_kind='run' AND id=a.owner_id"
   "  UNION ALL SELECT slug FROM experiments WHERE a.owner_kind='experiment' AND id=a.owner_id"
   "  UNION ALL SELECT slug FROM projects WHERE a.owner_kind='project' AND id=a.owner_id),"
   " 'shared', " B("a.shared") ", 'latest', a.latest, 'created', a.created,"
   " 'labels', (SELECT coalesce(json_object_agg(label, version ORDER BY label), '{}'::json) FROM artifact_labels WHERE artifact_id=a.id))",
   "artifacts a", "a.tenant_id", "a.created DESC, a.id DESC",
   "a.name || ' ' || coalesce(a.description, '')", NULL, 0,
   {{"run", "a.owner_kind='run' AND a.owner_id=:p"},
    {"experiment", "a.owner_kind='experiment' AND a.owner_id=:p"},
    {"project", "a.owner_kind='project' AND a.owner_id=:p"}},
   {{"shared", 'b', "(a.shared=1)=:f"}, {"name", 's', "a.name=:f"},
    /* the search tool's exact channel: a name, id, or a version's path, hash or URI */
    {"exact", 's', "(a.name=:f OR a.slug=:f OR a.id IN (SELECT artifact_id FROM artifact_versions"
                   " WHERE tenant_id=:t AND (sha256=:f OR uri=:f OR path=:f)))"}}},
  {"artifact-version",
   "json_build_object('version', v.version, 'path', v.path, 'media_type', v.media_type, 'size', v.size,"
   " 'sha256', v.sha256, 'uri', v.uri, 'stored', " BB("v.content IS NOT NULL") ","
   " 'text', " B("v.is_text") ", 'created', v.created, 'labels', (SELECT coalesce(json_agg(label ORDER BY label), '[]'::json)"
   " FROM artifact_labels l WHERE l.artifact_id=v.artifact_id AND l.version=v.version))",
   "artifact_versions v", "v.tenant_id", "v.version DESC", NULL, NULL, 1,
   {{"artifact", "v.artifact_id=:p"}}, {{0}}},
  {"dataset",
   "json_build_object('ref', 'dataset:' || d.slug, 'name', d.name, 'description', d.description,"
   " 'uri', d.uri, 'project', 'project:' || (SELECT slug FROM projects WHERE id=d.project_id),"
   " 'registered', " B("d.registered") ", 'versions', (SELECT count(*) FROM dataset_versions"
   " WHERE dataset_id=d.id), 'created', d.created)",
   "datasets d", "d.tenant_id", "d.name, d.id",
   "d.name || ' ' || coalesce(d.description, '') || ' ' || coalesce(d.uri, '')", NULL, 0,
   {{"project", "d.project_id=:p"}}, {{"registered", 'b', "(d.registered=1)=:f"},
    {"exact", 's', "(d.name=:f OR d.slug=:f OR d.uri=:f OR d.id IN (SELECT dataset_id FROM"
                   " dataset_versions WHERE tenant_id=:t AND (uri=:f OR sha256=:f)))"}}},
  {"dataset-version",
   "json_build_object('ref', 'dataset:' || (SELECT slug FROM datasets WHERE id=v.dataset_id) || '@' ||"
   " v.version, 'version', v.version, 'uri', v.uri, 'sha256', v.sha256, 'size', v.size, 'rows',"
   " v.rows, 'description', v.description, 'created', v.created)",
   "dataset_versions v", "v.tenant_id", "v.created DESC, v.id DESC", NULL, NULL, 1,
   {{"dataset", "v.dataset_id=:p"}}, {{0}}},
  {"checkpoint",
   "json_build_object('ref', 'checkpoint:' || r.slug || '@step' || c.step, 'run', 'run:' || r.slug,"
   " 'step', c.step, 'best', " B("c.best") ", 'stored', " B("c.stored") ", 'uri', c.uri,"
   " 'size', c.size, 'metric', c.metric, 'value', c.value::numeric, 'created', c.created)",
   "checkpoints c JOIN runs r ON r.id=c.run_id", "c.tenant_id", "c.created DESC, c.id DESC",
   "r.name || ' ' || r.slug || ' ' || coalesce(c.uri, '')", NULL, 0,
   {{"run", "c.run_id=:p"}, {"experiment", "r.experiment_id=:p"}, {"project", "r.project_id=:p"}},
   {{"best", 'b', "(c.best=1)=:f"}, {"stored", 'b', "(c.stored=1)=:f"}, {"exact", 's', "c.uri=:f"}}},
  {"source",
   "json_build_object('ref', 'source:' || s.slug, 'provider', s.provider, 'kind', s.kind, 'uri', s.uri,"
   " 'version', s.version, 'description', s.description, 'runs', (SELECT count(*) FROM lineage l"
   " WHERE l.tenant_id=s.tenant_id AND l.from_ref='source:' || s.slug AND l.to_ref LIKE 'run:%'),"
   " 'created', s.created)",
   "sources s", "s.tenant_id", "s.provider, s.uri, s.id",
   "s.uri || ' ' || coalesce(s.description, '') || ' ' || s.slug", NULL, 0, {{0}},
   {{"provider", 's', "s.provider=:f"}, {"kind", 's', "s.kind=:f"},
    {"exact", 's', "(s.uri=:f OR s.slug=:f)"}}},
  {"lineage",
   "json_build_object('from', l.from_ref, 'to', l.to_ref, 'relation', l.relation, 'steps', l.steps::json,"
   " 'created', l.created)",
   "lineage l", "l.tenant_id", "l.id", NULL, NULL, 0,
   {{"*", "(l.from_ref=:pref OR l.to_ref=:pref)"}},
   {{"direction", 's', "CASE :f WHEN 'upstream' THEN l.to_ref=:pref WHEN 'downstream' THEN"
                       " l.from_ref=:pref ELSE false END"},
    {"relation", 's', "l.relation=:f"}}},
  {"group",
   "json_build_object('ref', 'group:' || g.slug, 'name', g.name, 'description', g.description,"
   " 'experiment', 'experiment:' || (SELECT slug FROM experiments WHERE id=g.experiment_id),"
   " 'runs', (SELECT count(*) FROM group_runs WHERE group_id=g.id), 'created', g.created)",
   "groups g", "g.tenant_id", "g.name, g.id", "g.name || ' ' || coalesce(g.description, '')", NULL, 0,
   {{"experiment", "g.experiment_id=:p"},
    {"run", "g.id IN (SELECT group_id FROM group_runs WHERE run_id=:p)"}}, {{0}}},
  {"trial",
   "json_build_object('ref', 'trial:' || t.slug, 'name', t.name, 'run', 'run:' || (SELECT slug FROM runs"
   " WHERE id=t.run_id), 'status', t.status, 'score', t.score::numeric, 'params', t.params::json,"
   " 'steps', json_array_length(t.trajectory::json), 'created', t.created)",
   "trials t", "t.tenant_id", "t.created, t.id", "coalesce(t.name, '') || ' ' || t.slug", NULL, 0,
   {{"run", "t.run_id=:p"}}, {{"status", 's', "t.status=:f"}}},
  {"session",
   "json_build_object('ref', 'session:' || s.slug, 'title', s.title, 'agent', s.agent, 'started',"
   " s.started, 'ended', s.ended, 'turns', json_array_length(s.transcript::json), 'on', (SELECT"
   " coalesce(json_agg(ref ORDER BY ref), '[]'::json) FROM session_links WHERE session_id=s.id))",
   "sessions s", "s.tenant_id", "coalesce(s.started, s.created) DESC, s.id DESC",
   "s.title || ' ' || coalesce(s.agent, '')", NULL, 0,
   {{"*", "s.id IN (SELECT session_id FROM session_links WHERE ref=:pref)"}}, {{0}}},
  {"file",
   "json_build_object('ref', 'file:' || f.slug, 'path', f.path, 'workspace', 'workspace:' ||"
   " (SELECT slug FROM workspaces WHERE id=f.workspace_id), 'shared', " BB("f.workspace_id=0") ","
   " 'media_type', f.media_type, 'size', f.size, 'sha256', f.sha256, 'uri', f.uri,"
   " 'created', f.created)",
   "files f", "f.tenant_id", "f.path, f.id", "f.path", NULL, 0,
   {{"workspace", "f.workspace_id=:p"}}, {{"shared", 'b', "(f.workspace_id=0)=:f"},
    {"exact", 's', "(f.path=:f OR f.sha256=:f OR f.uri=:f OR f.slug=:f)"}}},
  {"embedding",
   "json_build_object('ref', e.ref, 'model', e.model, 'text_sha256', e.text_sha256,"
   " 'vector', e.vector::json)",
   "embeddings e", "e.tenant_id", "e.id", NULL, NULL, 0, {{0}},
   {{"model", 's', "e.model=:f"}}},
  {"search-doc",
   "json_build_object('ref', d.ref, 'kind', d.kind, 'title', d.title, 'body', d.body)",
   "search_docs d", "d.tenant_id", "d.id", NULL, NULL, 0,
   {{0}}, {{"kind", 's', "d.kind=:f"}}},
  {"paper",
   "json_build_object('ref', 'paper:' || pa.arxiv_id, 'title', pa.title, 'authors', pa.authors,"
   " 'categories', pa.categories, 'published', pa.published, 'provenance', 'open-web')",
   "papers pa", "pa.tenant_id", "pa.arxiv_id", "pa.title || ' ' || coalesce(pa.authors, '')", NULL, 0,
   {{"project", "pa.arxiv_id IN (SELECT arxiv_id FROM project_papers WHERE project_id=:p)"}},
   {{"category", 's', "(' ' || pa.categories || ' ') LIKE ('% ' || :f || ' %')"}}},
  {"event",
   "json_build_object('time', ev.time, 'kind', ev.kind, 'message', ev.message)",
   "run_events ev", "ev.tenant_id", "ev.time DESC, ev.id DESC", "ev.kind || ' ' || coalesce(ev.message, '')",
   NULL, 1, {{"run", "ev.run_id=:p"}}, {{"kind", 's', "ev.kind=:f"}}},
  {"series",
   "json_build_object('series', se.id, 'key', se.key, 'labels', se.labels::json, 'kind', se.kind,"
   " 'scale', se.scale, 'count', se.count, 'nonfinite', se.nonfinite, 'step_min', se.step_min,"
   " 'step_max', se.step_max, 'time_min', se.time_min, 'time_max', se.time_max,"
   " 'first', se.first::numeric, 'last', se.last::numeric, 'min', se.vmin::numeric, 'max',"
   " se.vmax::numeric, 'mean', CASE WHEN se.kind='float' AND se.count>se.nonfinite THEN"
   " (se.vsum / (se.count - se.nonfinite))::numeric END)",
   "series se", "se.tenant_id", "se.key, se.labels, se.id", "se.key", NULL, 1,
   {{"run", "se.run_id=:p"}},
   {{"kind", 's', "se.kind=:f"}, {"scale", 's', "se.scale=:f"}, {"key", 's', "se.key=:f"}}},
  {"experiment-version",
   "json_build_object('version', v.version, 'description', v.description, 'config', v.config::json,"
   " 'author', v.author, 'created', v.created)",
   "experiment_versions v", "v.tenant_id", "v.version DESC", NULL, NULL, 1,
   {{"experiment", "v.experiment_id=:p"}}, {{0}}},
  {"attribute",
   "json_build_object('path', at.path, 'type', at.type, 'value', CASE at.type WHEN 'string_set' THEN"
   " at.v_text::json WHEN 'bool' THEN to_json(at.v_int=1)"
   " ELSE coalesce(to_json(at.v_text), to_json(at.v_int), to_json(at.v_real::numeric)) END)",
   "attributes at", "at.tenant_id", "at.path", "at.path", NULL, 1,
   {{"run", "at.owner_kind='run' AND at.owner_id=:p"},
    {"experiment", "at.owner_kind='experiment' AND at.owner_id=:p"},
    {"project", "at.owner_kind='project' AND at.owner_id=:p"}}, {{0}}},
  {"env-attribute",
   "json_build_object('env', ea.env, 'path', ea.path, 'episode', ea.episode, 'type', ea.type,"
   " 'value', ea.value::json)",
   "env_attributes ea", "ea.tenant_id", "ea.env, ea.path, ea.episode", "ea.path", NULL, 1,
   {{"run", "ea.run_id=:p"}},
   {{"env", 's', "ea.env=:f"}, {"path", 's', "ea.path=:f"}}},
};

static const list_kind *find_kind(const char *k)
{
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (strcmp(kinds[i].kind, k) == 0)
      return &kinds[i];
  return NULL;
}

/* The SQL above names its parameters (:t, :p, :pref, :q, :fN, :lim,
 * :off); PostgreSQL numbers them. Each distinct name becomes $N in order
 * of first use (a '::' cast is left alone). */
typedef struct named_sql {
  pmcp_buf sql;
  char names[PMCP__PG_MAXP][8];
  int n;
} named_sql;

static int name_params(pmcp_store *s, const char *in, named_sql *ns)
{
  memset(ns, 0, sizeof *ns);
  char quote = 0;
  for (const char *p = in; *p; p++) {
    if (quote) {
      if (*p == quote)
        quote = 0;
      pmcp__buf_putc(&ns->sql, *p);
      continue;
    }
    if (*p == '\'') {
      quote = *p;
      pmcp__buf_putc(&ns->sql, *p);
      continue;
    }
    if (*p == ':' && p[1] == ':') {
      pmcp__buf_puts(&ns->sql, "::");
      p++;
      continue;
    }
    if (*p == ':' && p[1] >= 'a' && p[1] <= 'z') {
      char nm[8];
      size_t k = 0;
      const char *e = p + 1;
      while (((*e >= 'a' && *e <= 'z') || (*e >= '0' && *e <= '9')) && k < sizeof nm - 1)
        nm[k++] = *e++;
      nm[k] = '\0';
      int ix = 0;
      for (int i = 0; i < ns->n; i++)
        if (strcmp(ns->names[i], nm) == 0)
          ix = i + 1;
      if (!ix) {
        if (ns->n == PMCP__PG_MAXP) {
          pmcp_buf_dispose(&ns->sql);
          return pmcp_store_set_error(s, PMCP_EINTERNAL, "too many list parameters");
        }
        snprintf(ns->names[ns->n], sizeof ns->names[0], "%s", nm);
        ix = ++ns->n;
      }
      pmcp__buf_printf(&ns->sql, "$%d", ix);
      p = e - 1;
      continue;
    }
    pmcp__buf_putc(&ns->sql, *p);
  }
  return ns->sql.ptr ? 0 : pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
}

static int named_index(const named_sql *ns, const char *nm)
{
  for (int i = 0; i < ns->n; i++)
    if (strcmp(ns->names[i], nm) == 0)
      return i + 1;
  return 0;
}

int pmcp__pg_list(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_list_opts *o,
                  pmcp_buf *out)
{
  pmcp__pg *q = PG(ctx);
  const list_kind *lk = find_kind(o->kind);
  if (!lk)
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "unknown list kind '%.32s' (workspace, project, experiment, run, note, note-version,"
        " artifact, artifact-version, dataset, dataset-version, checkpoint, source, lineage,"
        " group, trial, session, file, paper, event, series, experiment-version, attribute,"
        " env-attribute)",
        o->kind);
  int rc = pmcp__pg_ready(s, q, t.id);
  if (rc)
    return rc;
  if (q->in_txn && q->n_pending && (rc = pmcp__pg_flush(s, q)))
    return rc;
  size_t limit = o->limit ? o->limit : 50;
  if (limit > 1000)
    limit = 1000;
  int64_t offset = 0;
  if (o->after && *o->after) {
    char *end;
    long long v = strtoll(o->after, &end, 10);
    if (*end || v < 0 || end == o->after)
      return pmcp_store_set_error(s, PMCP_EINVAL, "invalid list position '%.32s'", o->after);
    offset = v;
  }
  pmcp_buf where = PMCP_BUF_INIT;
  pmcp__buf_printf(&where, "%s=:t", lk->tenant_col);
  if ((rc = pmcp__ws_list_where(&where, t, lk->kind))) {
    pmcp_buf_dispose(&where);
    return pmcp_store_set_error(s, rc, "out of memory");
  }
  /* Parent. */
  int64_t prow = 0;
  const char *pref = NULL;
  if (o->parent) {
    char pk[32];
    const char *pid;
    if ((rc = pmcp__ref_split(s, o->parent, NULL, pk, &pid)))
      goto out;
    const parent_rule *rule = NULL;
    for (int i = 0; i < 5 && lk->parents[i].kind; i++)
      if (strcmp(lk->parents[i].kind, pk) == 0 || strcmp(lk->parents[i].kind, "*") == 0)
        rule = &lk->parents[i];
    if (!rule) {
      rc = pmcp_store_set_error(s, PMCP_EINVAL, "%s items cannot be listed under a %s",
                                lk->kind, pk);
      goto out;
    }
    if (strcmp(rule->kind, "*") == 0) {
      pref = o->parent;
    } else {
      char k2[32];
      if ((rc = pmcp__pg_resolve(s, q, t, o->parent, NULL, k2, &prow)))
        goto out;
    }
    pmcp__buf_printf(&where, " AND %s", rule->cond);
  } else if (lk->parent_required) {
    rc = pmcp_store_set_error(s, PMCP_EINVAL, "listing %s items needs a parent (e.g. %s)",
                              lk->kind, lk->parents[0].kind);
    goto out;
  }
  if (lk->deleted && !o->include_deleted)
    pmcp__buf_printf(&where, " AND %s=0", lk->deleted);
  if (o->query && *o->query) {
    if (!lk->query) {
      rc = pmcp_store_set_error(s, PMCP_EINVAL, "%s items cannot be searched with a query",
                                lk->kind);
      goto out;
    }
    pmcp__buf_printf(&where, " AND strpos(lower(%s), lower(:q)) > 0", lk->query);
  }
  /* Filters: a JSON object of name -> value. */
  cJSON *f = NULL;
  const filter_rule *used[5];
  cJSON *vals[5];
  int n_used = 0;
  if (o->filter && *o->filter) {
    f = cJSON_Parse(o->filter);
    if (!cJSON_IsObject(f)) {
      cJSON_Delete(f);
      rc = pmcp_store_set_error(s, PMCP_EINVAL, "the list filter is not a JSON object");
      goto out;
    }
    cJSON *it;
    cJSON_ArrayForEach(it, f) {
      const filter_rule *fr = NULL;
      for (int i = 0; i < 5 && lk->filters[i].name; i++)
        if (strcmp(lk->filters[i].name, it->string) == 0)
          fr = &lk->filters[i];
      if (!fr || n_used == 5) {
        rc = pmcp_store_set_error(s, PMCP_EINVAL, "%s items have no filter '%.32s'", lk->kind,
                                  it->string);
        break;
      }
      int ok = fr->type == 'b' ? cJSON_IsBool(it)
             : fr->type == 's' ? cJSON_IsString(it)
                               : cJSON_IsNumber(it);
      if (!ok) {
        rc = pmcp_store_set_error(s, PMCP_EINVAL, "filter '%s' must be a %s", fr->name,
                                  fr->type == 'b' ? "boolean" : fr->type == 's' ? "string" : "number");
        break;
      }
      if (strcmp(fr->name, "direction") == 0 &&
          (!pref || (strcmp(it->valuestring, "upstream") && strcmp(it->valuestring, "downstream")))) {
        rc = pmcp_store_set_error(s, PMCP_EINVAL,
            "filter 'direction' is upstream or downstream and needs a parent ref");
        break;
      }
      char cond[512];
      snprintf(cond, sizeof cond, "%s", fr->cond);
      /* Each filter binds its own :fN. */
      pmcp_buf c2 = PMCP_BUF_INIT;
      for (const char *p = cond; *p; p++) {
        if (p[0] == ':' && p[1] == 'f') {
          pmcp__buf_printf(&c2, ":f%d", n_used);
          p++;
        } else {
          pmcp__buf_putc(&c2, *p);
        }
      }
      pmcp__buf_printf(&where, " AND (%s)", c2.ptr);
      pmcp_buf_dispose(&c2);
      used[n_used] = fr;
      vals[n_used] = it;
      n_used++;
    }
    if (rc) {
      cJSON_Delete(f);
      goto out;
    }
  }
  pmcp_buf sql_items = PMCP_BUF_INIT, sql_count = PMCP_BUF_INIT;
  pmcp__buf_printf(&sql_items, "SELECT %s FROM %s WHERE %s ORDER BY %s LIMIT :lim OFFSET :off",
                   lk->item, lk->from, where.ptr, lk->order);
  pmcp__buf_printf(&sql_count, "SELECT count(*) FROM %s WHERE %s", lk->from, where.ptr);
  int64_t total = 0;
  pmcp__buf_reset(out);
  pmcp__buf_puts(out, "{\"items\":[");
  size_t n = 0;
  for (int k = 0; k < 2 && rc == 0; k++) {
    named_sql ns;
    if ((rc = name_params(s, k ? sql_items.ptr : sql_count.ptr, &ns)))
      break;
    pmcp__pg_stmt *st = NULL;
    if ((rc = pmcp__pg_prep_dyn(s, q, ns.sql.ptr, &st))) {
      pmcp_buf_dispose(&ns.sql);
      break;
    }
    int ix;
#define BIND_NAME(nm, call)                                                   \
  do {                                                                        \
    if ((ix = named_index(&ns, nm)) > 0)                                      \
      call;                                                                   \
  } while (0)
    BIND_NAME("t", pmcp__pg_bind_int64(st, ix, t.id));
    BIND_NAME("p", pmcp__pg_bind_int64(st, ix, prow));
    BIND_NAME("pref", pmcp__pg_bind_text(st, ix, pref ? pref : ""));
    BIND_NAME("q", pmcp__pg_bind_text(st, ix, o->query ? o->query : ""));
    BIND_NAME("lim", pmcp__pg_bind_int64(st, ix, (int64_t)limit + 1));
    BIND_NAME("off", pmcp__pg_bind_int64(st, ix, offset));
    for (int i = 0; i < n_used; i++) {
      char nm[16];
      snprintf(nm, sizeof nm, "f%d", i);
      cJSON *v = vals[i];
      if (used[i]->type == 'b')
        BIND_NAME(nm, pmcp__pg_bind_text(st, ix, cJSON_IsTrue(v) ? "true" : "false"));
      else if (used[i]->type == 's')
        BIND_NAME(nm, pmcp__pg_bind_text(st, ix, v->valuestring));
      else
        BIND_NAME(nm, pmcp__pg_bind_int64(st, ix, (int64_t)v->valuedouble));
    }
#undef BIND_NAME
    int src;
    while ((src = pmcp__pg_step(st)) == PG_ROW) {
      if (k == 0) {
        total = pmcp__pg_int64(st, 0);
        continue;
      }
      if (n == limit)
        break;
      if (n++)
        pmcp__buf_putc(out, ',');
      pmcp__pg_json_col(out, st, 0);
    }
    if (src == PG_ERR)
      rc = pmcp__pg_err(s, q, "list");
    pmcp__pg_finalize(st);
    pmcp_buf_dispose(&ns.sql);
  }
  pmcp_buf_dispose(&sql_items);
  pmcp_buf_dispose(&sql_count);
  cJSON_Delete(f);
  if (rc == 0) {
    if ((int64_t)(offset + (int64_t)n) < total)
      pmcp__buf_printf(out, "],\"total\":%lld,\"next\":\"%lld\"}", (long long)total,
                       (long long)(offset + (int64_t)n));
    else
      pmcp__buf_printf(out, "],\"total\":%lld,\"next\":null}", (long long)total);
    if (!out->ptr)
      rc = PMCP_ENOMEM;
  }
out:
  pmcp_buf_dispose(&where);
  return rc;
}
