/* SPDX-License-Identifier: MIT */
/* Internal: the kinds of pmcp_store_list() (list.h) for both backends,
 * written once. sq_list.c and pg_list.c each include this file inside the
 * initializer of their table, with these macros defined in their dialect:
 *   JO          the JSON object constructor with its "(";
 *   B(col)      a 0/1 column as a JSON boolean; BB(expr) an SQL boolean;
 *   BF(col)     a filter "the 0/1 column equals the boolean :f";
 *   JSON(x)     a JSON text column as JSON; JARG(x) as a JSON function's
 *               argument;
 *   NUM(x)      a REAL as its JSON number (PostgreSQL: through numeric, 15
 *               significant digits as in SQLite's JSON);
 *   ARR(x)      a JSON array aggregate of x, ordered by x;
 *   FALSE_      the false constant;
 *   SQ_PG(a, b) the SQLite text a or the PostgreSQL text b.
 * Each kind is a row: the item's JSON, its FROM clause, order, literal-query
 * text, deleted condition, whether it needs a parent, parents and filters.
 * The deleted condition (an SQL boolean) is true for a deleted run or
 * experiment and for what hangs off one (its notes, artifacts, checkpoints,
 * trials): listings leave those out unless asked, and mark them. */
#define DEAD_OWNER(k, id)                                                      \
  "((" k "='run' AND " id " IN (SELECT id FROM runs WHERE deleted<>0)) OR ("  \
  k "='experiment' AND " id " IN (SELECT id FROM experiments WHERE deleted<>0)))"
#define DEAD_RUN(id) "(" id " IN (SELECT id FROM runs WHERE deleted<>0))"
  {"workspace",
   JO "'ref', 'workspace:' || w.slug, 'name', w.name, 'description', w.description,"
   " 'projects', (SELECT count(*) FROM projects WHERE workspace_id=w.id), 'created', w.created)",
   "workspaces w", "w.tenant_id", "w.name, w.id", "w.name || ' ' || w.slug", NULL, 0, {{0}}, {{0}}},
  {"project",
   JO "'ref', 'project:' || p.slug, 'name', p.name, 'description', p.description,"
   " 'workspace', 'workspace:' || (SELECT slug FROM workspaces WHERE id=p.workspace_id),"
   " 'experiments', p.n_experiments, 'runs', p.n_runs, 'created', p.created)",
   "projects p", "p.tenant_id", "p.name, p.id", "p.name || ' ' || p.slug", NULL, 0,
   {{"workspace", "p.workspace_id=:p"}}, {{0}}},
  {"experiment",
   JO "'ref', 'experiment:' || e.slug, 'name', e.name, 'description', e.description,"
   " 'project', 'project:' || (SELECT slug FROM projects WHERE id=e.project_id),"
   " 'runs', e.n_runs, 'deleted', " B("e.deleted") ", 'created', e.created)",
   "experiments e", "e.tenant_id", "e.created DESC, e.id DESC", "e.name || ' ' || e.slug",
   "e.deleted<>0", 0, {{"project", "e.project_id=:p"}}, {{0}}},
  {"run",
   JO "'ref', 'run:' || r.slug, 'name', r.name, 'status', r.status,"
   " 'project', 'project:' || (SELECT slug FROM projects WHERE id=r.project_id),"
   " 'experiment', 'experiment:' || (SELECT slug FROM experiments WHERE id=r.experiment_id),"
   " 'created', r.created, 'started', r.started, 'ended', r.ended, 'deleted', " B("r.deleted") ","
   " 'tags', (SELECT " ARR("tag") " FROM tags WHERE owner_kind='run' AND owner_id=r.id))",
   "runs r", "r.tenant_id", "r.created DESC, r.id DESC", "r.name || ' ' || r.slug", "r.deleted<>0", 0,
   {{"experiment", "r.experiment_id=:p"}, {"project", "r.project_id=:p"},
    {"group", "r.id IN (SELECT run_id FROM group_runs WHERE group_id=:p)"}},
   {{"status", 's', "r.status=:f"}, {"active", 'b', "(r.status='running')=:f"},
    {"unfiled", 'b', SQ_PG("r.project_id IS NULL|r.project_id IS NOT NULL",
                              "(r.project_id IS NULL)=:f")},
    {"tag", 's', "r.id IN (SELECT owner_id FROM tags WHERE owner_kind='run' AND tag=:f)"}}},
  {"note",
   JO "'ref', CASE n.kind WHEN 'sub-note' THEN 'sub-note:' WHEN 'team' THEN '' ELSE"
   " 'note:' END || CASE n.kind WHEN 'team' THEN 'team-note' ELSE n.slug END, 'note_kind', n.kind,"
   " 'title', n.title, 'status', n.status, 'on', n.owner_kind || ':' ||"
   " (SELECT slug FROM runs WHERE n.owner_kind='run' AND id=n.owner_id UNION ALL"
   "  SELECT slug FROM experiments WHERE n.owner_kind='experiment' AND id=n.owner_id UNION ALL"
   "  SELECT slug FROM projects WHERE n.owner_kind='project' AND id=n.owner_id),"
   " 'version', n.version, 'updated', n.updated, 'author', v.author, 'via', v.via,"
   " 'excerpt', substr(v.body, 1, 200), 'chars', length(v.body),"
   " 'deleted', " BB(DEAD_OWNER("n.owner_kind", "n.owner_id")) ")",
   "notes n JOIN note_versions v ON v.note_id=n.id AND v.version=n.version", "n.tenant_id",
   "n.updated DESC, n.id DESC", "coalesce(n.title, '') || ' ' || v.body || ' ' || coalesce(v.summary, '')",
   DEAD_OWNER("n.owner_kind", "n.owner_id"), 0,
   {{"run", "n.owner_kind='run' AND n.owner_id=:p"},
    {"experiment", "n.owner_kind='experiment' AND n.owner_id=:p"},
    {"project", "n.owner_kind='project' AND n.owner_id=:p"},
    {"note", "n.parent_id=:p"}, {"sub-note", "n.parent_id=:p"}},
   {{"kind", 's', "n.kind=:f"}}},
  {"note-version",
   JO "'version', v.version, 'title', v.title, 'status', v.status, 'author', v.author,"
   " 'via', v.via, 'created', v.created, 'chars', length(v.body),"
   " 'has_summary', " BB("v.summary IS NOT NULL") ")",
   "note_versions v", "v.tenant_id", "v.version DESC", NULL, NULL, 1,
   {{"note", "v.note_id=:p"}, {"sub-note", "v.note_id=:p"}}, {{0}}},
  {"artifact",
   JO "'ref', 'artifact:' || a.slug, 'name', a.name, 'description', a.description,"
   " 'on', a.owner_kind || ':' || (SELECT slug FROM runs WHERE a.owner_kind='run' AND id=a.owner_id"
   "  UNION ALL SELECT slug FROM experiments WHERE a.owner_kind='experiment' AND id=a.owner_id"
   "  UNION ALL SELECT slug FROM projects WHERE a.owner_kind='project' AND id=a.owner_id),"
   " 'shared', " B("a.shared") ", 'latest', a.latest, 'created', a.created,"
   " 'labels', (SELECT " SQ_PG("json_group_object(label, version)",
   "coalesce(json_object_agg(label, version ORDER BY label), '{}'::json)") " FROM artifact_labels"
   " WHERE artifact_id=a.id), 'deleted', " BB(DEAD_OWNER("a.owner_kind", "a.owner_id")) ")",
   "artifacts a", "a.tenant_id", "a.created DESC, a.id DESC",
   "a.name || ' ' || coalesce(a.description, '')",
   DEAD_OWNER("a.owner_kind", "a.owner_id"), 0,
   {{"run", "a.owner_kind='run' AND a.owner_id=:p"},
    {"experiment", "a.owner_kind='experiment' AND a.owner_id=:p"},
    {"project", "a.owner_kind='project' AND a.owner_id=:p"}},
   {{"shared", 'b', BF("a.shared")}, {"name", 's', "a.name=:f"},
    /* the search tool's exact channel: a name, id, or a version's path, hash or URI */
    {"exact", 's', "(a.name=:f OR a.slug=:f OR a.id IN (SELECT artifact_id FROM artifact_versions"
                   " WHERE tenant_id=:t AND " SQ_PG("sha256=:f UNION SELECT artifact_id FROM"
                   " artifact_versions WHERE tenant_id=:t AND uri=:f UNION SELECT artifact_id"
                   " FROM artifact_versions WHERE tenant_id=:t AND path=:f)",
                   "(sha256=:f OR uri=:f OR path=:f))") ")"}}},
  {"artifact-version",
   JO "'version', v.version, 'path', v.path, 'media_type', v.media_type, 'size', v.size,"
   " 'sha256', v.sha256, 'uri', v.uri, 'stored', " BB("v.content IS NOT NULL") ","
   " 'text', " B("v.is_text") ", 'created', v.created, 'labels', (SELECT " ARR("label")
   " FROM artifact_labels l WHERE l.artifact_id=v.artifact_id AND l.version=v.version))",
   "artifact_versions v", "v.tenant_id", "v.version DESC", NULL, NULL, 1,
   {{"artifact", "v.artifact_id=:p"}}, {{0}}},
  {"dataset",
   JO "'ref', 'dataset:' || d.slug, 'name', d.name, 'description', d.description,"
   " 'uri', d.uri, 'project', 'project:' || (SELECT slug FROM projects WHERE id=d.project_id),"
   " 'registered', " B("d.registered") ", 'versions', (SELECT count(*) FROM dataset_versions"
   " WHERE dataset_id=d.id), 'created', d.created)",
   "datasets d", "d.tenant_id", "d.name, d.id",
   "d.name || ' ' || coalesce(d.description, '') || ' ' || coalesce(d.uri, '')", NULL, 0,
   {{"project", "d.project_id=:p"}}, {{"registered", 'b', BF("d.registered")},
    {"exact", 's', "(d.name=:f OR d.slug=:f OR d.uri=:f OR d.id IN (SELECT dataset_id FROM"
                   " dataset_versions WHERE tenant_id=:t AND (uri=:f OR sha256=:f)))"}}},
  {"dataset-version",
   JO "'ref', 'dataset:' || (SELECT slug FROM datasets WHERE id=v.dataset_id) || '@' ||"
   " v.version, 'version', v.version, 'uri', v.uri, 'sha256', v.sha256, 'size', v.size, 'rows',"
   " v.rows, 'description', v.description, 'created', v.created)",
   "dataset_versions v", "v.tenant_id", "v.created DESC, v.id DESC", NULL, NULL, 1,
   {{"dataset", "v.dataset_id=:p"}}, {{0}}},
  {"checkpoint",
   JO "'ref', 'checkpoint:' || r.slug || '@step' || c.step, 'run', 'run:' || r.slug,"
   " 'step', c.step, 'best', " B("c.best") ", 'stored', " B("c.stored") ", 'uri', c.uri,"
    " 'size', c.size, 'metric', c.metric, 'value', " NUM("c.value") ", 'created', c.created,"
   " 'deleted', " B("r.deleted") ")",
   "checkpoints c JOIN runs r ON r.id=c.run_id", "c.tenant_id", "c.created DESC, c.id DESC",
   "r.name || ' ' || r.slug || ' ' || coalesce(c.uri, '')", "r.deleted<>0", 0,
   {{"run", "c.run_id=:p"}, {"experiment", "r.experiment_id=:p"}, {"project", "r.project_id=:p"}},
   {{"best", 'b', BF("c.best")}, {"stored", 'b', BF("c.stored")}, {"exact", 's', "c.uri=:f"}}},
  {"source",
   JO "'ref', 'source:' || s.slug, 'provider', s.provider, 'kind', s.kind, 'uri', s.uri,"
   " 'version', s.version, 'description', s.description, 'runs', (SELECT count(*) FROM lineage l"
   " WHERE l.tenant_id=s.tenant_id AND l.from_ref='source:' || s.slug AND l.to_ref LIKE 'run:%'"
   "/*ws ref l.to_ref*/),"
   " 'created', s.created)",
   "sources s", "s.tenant_id", "s.provider, s.uri, s.id",
   "s.uri || ' ' || coalesce(s.description, '') || ' ' || s.slug", NULL, 0, {{0}},
   {{"provider", 's', "s.provider=:f"}, {"kind", 's', "s.kind=:f"},
    {"exact", 's', "(s.uri=:f OR s.slug=:f)"}}},
  {"lineage",
   JO "'from', l.from_ref, 'to', l.to_ref, 'relation', l.relation, 'steps', " JSON("l.steps") ","
   " 'created', l.created)",
   "lineage l", "l.tenant_id", "l.id", NULL, NULL, 0,
   {{"*", "(l.from_ref=:pref OR l.to_ref=:pref)"}},
   {{"direction", 's', "CASE :f WHEN 'upstream' THEN l.to_ref=:pref WHEN 'downstream' THEN"
                       " l.from_ref=:pref ELSE " FALSE_ " END"},
    {"relation", 's', "l.relation=:f"}}},
  {"group",
   JO "'ref', 'group:' || g.slug, 'name', g.name, 'description', g.description,"
   " 'experiment', 'experiment:' || (SELECT slug FROM experiments WHERE id=g.experiment_id),"
   " 'runs', (SELECT count(*) FROM group_runs WHERE group_id=g.id/*ws row runs run_id*/),"
   " 'created', g.created)",
   "groups g", "g.tenant_id", "g.name, g.id", "g.name || ' ' || coalesce(g.description, '')", NULL, 0,
   {{"experiment", "g.experiment_id=:p"},
    {"run", "g.id IN (SELECT group_id FROM group_runs WHERE run_id=:p)"}}, {{0}}},
  {"trial",
   JO "'ref', 'trial:' || t.slug, 'name', t.name, 'run', 'run:' || (SELECT slug FROM runs"
   " WHERE id=t.run_id), 'status', t.status, 'score', " NUM("t.score") ", 'params', " JSON("t.params") ","
   " 'steps', json_array_length(" JARG("t.trajectory") "), 'created', t.created,"
   " 'deleted', " BB(DEAD_RUN("t.run_id")) ")",
   "trials t", "t.tenant_id", "t.created, t.id", "coalesce(t.name, '') || ' ' || t.slug",
   DEAD_RUN("t.run_id"), 0,
   {{"run", "t.run_id=:p"}}, {{"status", 's', "t.status=:f"}}},
  {"session",
   JO "'ref', 'session:' || s.slug, 'title', s.title, 'agent', s.agent, 'started',"
   " s.started, 'ended', s.ended, 'turns', json_array_length(" JARG("s.transcript") "), 'on',"
   " (SELECT " ARR("ref") " FROM session_links WHERE session_id=s.id))",
   "sessions s", "s.tenant_id", "coalesce(s.started, s.created) DESC, s.id DESC",
   "s.title || ' ' || coalesce(s.agent, '')", NULL, 0,
   {{"*", "s.id IN (SELECT session_id FROM session_links WHERE ref=:pref)"}}, {{0}}},
  {"file",
   JO "'ref', 'file:' || f.slug, 'path', f.path, 'workspace', 'workspace:' ||"
   " (SELECT slug FROM workspaces WHERE id=f.workspace_id), 'shared', " BB("f.workspace_id=0") ","
   " 'media_type', f.media_type, 'size', f.size, 'sha256', f.sha256, 'uri', f.uri,"
   " 'created', f.created)",
   "files f", "f.tenant_id", "f.path, f.id", "f.path", NULL, 0,
   {{"workspace", "f.workspace_id=:p"}}, {{"shared", 'b', "(f.workspace_id=0)=:f"},
    {"exact", 's', "(f.path=:f OR f.sha256=:f OR f.uri=:f OR f.slug=:f)"}}},
  {"embedding",
   JO "'ref', e.ref, 'model', e.model, 'text_sha256', e.text_sha256,"
   " 'vector', " JSON("e.vector") ")",
   "embeddings e", "e.tenant_id", "e.id", NULL, NULL, 0, {{0}},
   {{"model", 's', "e.model=:f"}}},
  {"search-doc",
   JO "'ref', d.ref, 'kind', d.kind, " SQ_PG("'title', f.title, 'body', f.body)",
                                           "'title', d.title, 'body', d.body)"),
   SQ_PG("search_docs d JOIN search_fts f ON f.rowid=d.id", "search_docs d"), "d.tenant_id", "d.id", NULL, NULL, 0,
   {{0}}, {{"kind", 's', "d.kind=:f"}}},
  {"paper",
   JO "'ref', 'paper:' || pa.arxiv_id, 'title', pa.title, 'authors', pa.authors,"
   " 'categories', pa.categories, 'published', pa.published, 'provenance', 'open-web')",
   "papers pa", "pa.tenant_id", "pa.arxiv_id", "pa.title || ' ' || coalesce(pa.authors, '')", NULL, 0,
   {{"project", "pa.arxiv_id IN (SELECT arxiv_id FROM project_papers WHERE project_id=:p)"}},
   {{"category", 's', "(' ' || pa.categories || ' ') LIKE ('% ' || :f || ' %')"}}},
  {"event",
   JO "'time', ev.time, 'kind', ev.kind, 'message', ev.message)",
   "run_events ev", "ev.tenant_id", "ev.time DESC, ev.id DESC", "ev.kind || ' ' || coalesce(ev.message, '')",
   NULL, 1, {{"run", "ev.run_id=:p"}}, {{"kind", 's', "ev.kind=:f"}}},
  {"series",
   JO "'series', se.id, 'key', se.key, 'labels', " JSON("se.labels") ", 'kind', se.kind,"
   " 'scale', se.scale, 'count', se.count, 'nonfinite', se.nonfinite, 'step_min', se.step_min,"
   " 'step_max', se.step_max, 'time_min', se.time_min, 'time_max', se.time_max,"
   " 'first', " NUM("se.first") ", 'last', " NUM("se.last") ", 'min', " NUM("se.vmin") ","
   " 'max', " NUM("se.vmax") ", 'mean', CASE WHEN se.kind='float' AND se.count>se.nonfinite"
   " THEN " NUM("(se.vsum / (se.count - se.nonfinite))") " END)",
   "series se", "se.tenant_id", "se.key, se.labels, se.id", "se.key", NULL, 1,
   {{"run", "se.run_id=:p"}},
   {{"kind", 's', "se.kind=:f"}, {"scale", 's', "se.scale=:f"}, {"key", 's', "se.key=:f"}}},
  {"experiment-version",
   JO "'version', v.version, 'description', v.description, 'config', " JSON("v.config") ","
   " 'author', v.author, 'created', v.created)",
   "experiment_versions v", "v.tenant_id", "v.version DESC", NULL, NULL, 1,
   {{"experiment", "v.experiment_id=:p"}}, {{0}}},
  {"attribute",
   JO "'path', at.path, 'type', at.type, 'value', CASE at.type WHEN 'string_set' THEN"
   " " JSON("at.v_text") " WHEN 'bool' THEN "
   SQ_PG("json(CASE at.v_int WHEN 1 THEN 'true' ELSE 'false' END)"
         " ELSE coalesce(at.v_text, at.v_int, at.v_real) END)",
         "to_json(at.v_int=1)"
         " ELSE coalesce(to_json(at.v_text), to_json(at.v_int), to_json(at.v_real::numeric)) END)"),
   "attributes at", "at.tenant_id", "at.path", "at.path", NULL, 1,
   {{"run", "at.owner_kind='run' AND at.owner_id=:p"},
    {"experiment", "at.owner_kind='experiment' AND at.owner_id=:p"},
    {"project", "at.owner_kind='project' AND at.owner_id=:p"}}, {{0}}},
  {"env-attribute",
   JO "'env', ea.env, 'path', ea.path, 'episode', ea.episode, 'type', ea.type,"
   " 'value', " JSON("ea.value") ")",
   "env_attributes ea", "ea.tenant_id", "ea.env, ea.path, ea.episode", "ea.path", NULL, 1,
   {{"run", "ea.run_id=:p"}},
   {{"env", 's', "ea.env=:f"}, {"path", 's', "ea.path=:f"}}},
