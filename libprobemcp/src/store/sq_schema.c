/* SPDX-License-Identifier: MIT */
/* SQLite backend: the schema and its forward migrations. migrations[i]
 * takes a store from version i to i + 1; a store records its version in
 * meta.schema_version. Every tenant-owned table has tenant_id, and every
 * read of the backend filters on it. Times are integer milliseconds. */
#include <stdio.h>
#include <string.h>

#include "store/db.h"
#include "store/sq.h"

static const char v1_0[] =
  "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
  "CREATE TABLE secrets(name TEXT PRIMARY KEY, value BLOB NOT NULL);"
  "CREATE TABLE tenants(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
  "  data_version INTEGER NOT NULL DEFAULT 1, created INTEGER NOT NULL);"
  "CREATE TABLE workspaces(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  slug TEXT NOT NULL, name TEXT NOT NULL, description TEXT, created INTEGER NOT NULL,"
  "  UNIQUE(tenant_id, slug));"
  "CREATE TABLE projects(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  workspace_id INTEGER NOT NULL, slug TEXT NOT NULL, name TEXT NOT NULL,"
  "  description TEXT, readme TEXT, created INTEGER NOT NULL, UNIQUE(tenant_id, slug));"
  "CREATE TABLE experiments(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  project_id INTEGER NOT NULL, slug TEXT NOT NULL, name TEXT NOT NULL,"
  "  description TEXT, config TEXT, deleted INTEGER NOT NULL DEFAULT 0,"
  "  created INTEGER NOT NULL, UNIQUE(tenant_id, slug));"
  "CREATE INDEX experiments_project ON experiments(project_id);"
  "CREATE TABLE experiment_versions(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  experiment_id INTEGER NOT NULL, version INTEGER NOT NULL, description TEXT,"
  "  config TEXT, author TEXT, created INTEGER NOT NULL, UNIQUE(experiment_id, version));"
  "CREATE TABLE runs(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  project_id INTEGER, experiment_id INTEGER, slug TEXT NOT NULL, name TEXT NOT NULL,"
  "  description TEXT, status TEXT NOT NULL, created INTEGER NOT NULL,"
  "  started INTEGER, ended INTEGER, deleted INTEGER NOT NULL DEFAULT 0,"
  "  command TEXT, environment TEXT, git_commit TEXT, git_branch TEXT, git_remote TEXT,"
  "  git_dirty INTEGER NOT NULL DEFAULT 0, git_diff TEXT, UNIQUE(tenant_id, slug));"
  "CREATE INDEX runs_created ON runs(tenant_id, created DESC, id DESC);"
  "CREATE INDEX runs_experiment ON runs(experiment_id);"
  "CREATE INDEX runs_project ON runs(project_id);"
  "CREATE TABLE attributes(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  owner_kind TEXT NOT NULL, owner_id INTEGER NOT NULL, path TEXT NOT NULL,"
  "  type TEXT NOT NULL, v_text TEXT, v_int INTEGER, v_real REAL,"
  "  UNIQUE(owner_kind, owner_id, path));"
  "CREATE TABLE tags(tenant_id INTEGER NOT NULL, owner_kind TEXT NOT NULL,"
  "  owner_id INTEGER NOT NULL, tag TEXT NOT NULL, PRIMARY KEY(owner_kind, owner_id, tag));"
  "CREATE TABLE run_events(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  run_id INTEGER NOT NULL, time INTEGER NOT NULL, kind TEXT NOT NULL, message TEXT);"
  "CREATE INDEX run_events_run ON run_events(run_id, time);";
static const char v1_1[] =
  "CREATE TABLE series(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  run_id INTEGER NOT NULL, key TEXT NOT NULL, labels TEXT NOT NULL DEFAULT '{}',"
  "  kind TEXT NOT NULL, scale TEXT NOT NULL, count INTEGER NOT NULL DEFAULT 0,"
  "  nonfinite INTEGER NOT NULL DEFAULT 0, step_min INTEGER, step_max INTEGER,"
  "  time_min INTEGER, time_max INTEGER, first REAL, last REAL, vmin REAL, vmax REAL,"
  "  vsum REAL NOT NULL DEFAULT 0, next_seq INTEGER NOT NULL DEFAULT 0,"
  "  UNIQUE(run_id, key, labels, kind, scale));"
  "CREATE TABLE metric_blocks(id INTEGER PRIMARY KEY, series_id INTEGER NOT NULL,"
  "  seq INTEGER NOT NULL, n INTEGER NOT NULL, nonfinite INTEGER NOT NULL,"
  "  step_min INTEGER NOT NULL, step_max INTEGER NOT NULL, time_min INTEGER,"
  "  time_max INTEGER, vmin REAL, vmax REAL, vsum REAL NOT NULL, first REAL, last REAL,"
  "  step_first INTEGER NOT NULL, step_last INTEGER NOT NULL, step_at_min INTEGER,"
  "  step_at_max INTEGER, codec INTEGER NOT NULL, data BLOB NOT NULL,"
  "  UNIQUE(series_id, seq));"
  "CREATE TABLE metric_sets(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  series_id INTEGER NOT NULL, step INTEGER NOT NULL, time INTEGER, n INTEGER NOT NULL,"
  "  a BLOB NOT NULL, b BLOB NOT NULL);"
  "CREATE INDEX metric_sets_series ON metric_sets(series_id, step);"
  "CREATE TABLE notes(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  slug TEXT NOT NULL, owner_kind TEXT, owner_id INTEGER, kind TEXT NOT NULL,"
  "  parent_id INTEGER, title TEXT, status TEXT, created INTEGER NOT NULL,"
  "  updated INTEGER NOT NULL, version INTEGER NOT NULL DEFAULT 0,"
  "  UNIQUE(tenant_id, slug));"
  "CREATE INDEX notes_owner ON notes(owner_kind, owner_id);"
  "CREATE TABLE note_versions(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  note_id INTEGER NOT NULL, version INTEGER NOT NULL, title TEXT, body TEXT NOT NULL,"
  "  summary TEXT, status TEXT, author TEXT, via TEXT, created INTEGER NOT NULL,"
  "  UNIQUE(note_id, version));"
  "CREATE TABLE artifacts(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  slug TEXT NOT NULL, name TEXT NOT NULL, owner_kind TEXT, owner_id INTEGER,"
  "  shared INTEGER NOT NULL DEFAULT 0, description TEXT, created INTEGER NOT NULL,"
  "  latest INTEGER NOT NULL DEFAULT 0, UNIQUE(tenant_id, slug));"
  "CREATE INDEX artifacts_owner ON artifacts(owner_kind, owner_id, name);"
  "CREATE TABLE artifact_versions(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  artifact_id INTEGER NOT NULL, version INTEGER NOT NULL, path TEXT, media_type TEXT,"
  "  description TEXT, content BLOB, uri TEXT, sha256 TEXT, size INTEGER,"
  "  is_text INTEGER NOT NULL DEFAULT 0, created INTEGER NOT NULL,"
  "  UNIQUE(artifact_id, version));";
static const char v1_2[] =
  "CREATE TABLE artifact_labels(tenant_id INTEGER NOT NULL, artifact_id INTEGER NOT NULL,"
  "  label TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY(artifact_id, label));"
  "CREATE TABLE datasets(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  slug TEXT NOT NULL, name TEXT NOT NULL, project_id INTEGER,"
  "  registered INTEGER NOT NULL DEFAULT 1, description TEXT, uri TEXT,"
  "  created INTEGER NOT NULL, UNIQUE(tenant_id, slug));"
  "CREATE TABLE dataset_versions(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  dataset_id INTEGER NOT NULL, version TEXT NOT NULL, uri TEXT, sha256 TEXT,"
  "  size INTEGER, rows INTEGER, description TEXT, created INTEGER NOT NULL,"
  "  UNIQUE(dataset_id, version));"
  "CREATE TABLE checkpoints(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  slug TEXT NOT NULL, run_id INTEGER NOT NULL, step INTEGER NOT NULL,"
  "  best INTEGER NOT NULL DEFAULT 0, stored INTEGER NOT NULL DEFAULT 0, uri TEXT,"
  "  size INTEGER, metric TEXT, value REAL, created INTEGER NOT NULL,"
  "  UNIQUE(tenant_id, slug), UNIQUE(run_id, step));"
  "CREATE TABLE sources(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  slug TEXT NOT NULL, provider TEXT NOT NULL, kind TEXT NOT NULL, uri TEXT NOT NULL,"
  "  version TEXT, description TEXT, created INTEGER NOT NULL, UNIQUE(tenant_id, slug));"
  "CREATE TABLE lineage(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  from_ref TEXT NOT NULL, to_ref TEXT NOT NULL, relation TEXT NOT NULL,"
  "  steps TEXT, created INTEGER NOT NULL, UNIQUE(tenant_id, from_ref, to_ref, relation));"
  "CREATE INDEX lineage_to ON lineage(tenant_id, to_ref);"
  "CREATE TABLE groups(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  slug TEXT NOT NULL, name TEXT NOT NULL, experiment_id INTEGER, description TEXT,"
  "  created INTEGER NOT NULL, UNIQUE(tenant_id, slug));"
  "CREATE TABLE group_runs(tenant_id INTEGER NOT NULL, group_id INTEGER NOT NULL,"
  "  run_id INTEGER NOT NULL, PRIMARY KEY(group_id, run_id));"
  "CREATE TABLE trials(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  slug TEXT NOT NULL, run_id INTEGER NOT NULL, name TEXT, params TEXT, status TEXT,"
  "  score REAL, trajectory TEXT, created INTEGER NOT NULL, UNIQUE(tenant_id, slug));"
  "CREATE TABLE sessions(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  slug TEXT NOT NULL, title TEXT NOT NULL, agent TEXT, started INTEGER, ended INTEGER,"
  "  transcript TEXT, created INTEGER NOT NULL, UNIQUE(tenant_id, slug));"
  "CREATE TABLE session_links(tenant_id INTEGER NOT NULL, session_id INTEGER NOT NULL,"
  "  ref TEXT NOT NULL, PRIMARY KEY(session_id, ref));"
  "CREATE INDEX session_links_ref ON session_links(tenant_id, ref);";
static const char v1_3[] =
  "CREATE TABLE files(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  slug TEXT NOT NULL, workspace_id INTEGER NOT NULL DEFAULT 0, path TEXT NOT NULL,"
  "  media_type TEXT, content BLOB, uri TEXT, sha256 TEXT, size INTEGER,"
  "  created INTEGER NOT NULL, UNIQUE(tenant_id, slug), UNIQUE(tenant_id, workspace_id, path));"
  "CREATE TABLE papers(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  arxiv_id TEXT NOT NULL, title TEXT NOT NULL, abstract TEXT, authors TEXT,"
  "  categories TEXT, published TEXT, updated TEXT, doi TEXT, journal_ref TEXT,"
  "  comments TEXT, UNIQUE(tenant_id, arxiv_id));"
  "CREATE TABLE project_papers(tenant_id INTEGER NOT NULL, project_id INTEGER NOT NULL,"
  "  arxiv_id TEXT NOT NULL, note TEXT, PRIMARY KEY(project_id, arxiv_id));";

/* Version 2: keyword search (FTS5, BM25) over the lab's text and the
 * papers index. */
static const char v2[] =
  "CREATE TABLE search_docs(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  ref TEXT NOT NULL, kind TEXT NOT NULL, UNIQUE(tenant_id, ref));"
  "CREATE VIRTUAL TABLE search_fts USING fts5(title, body, tokenize='porter unicode61');"
  "CREATE VIRTUAL TABLE papers_fts USING fts5(title, abstract, authors,"
  "  content='papers', content_rowid='id', tokenize='porter unicode61');"
  PMCP__SQ_PAPERS_AI
  "CREATE TRIGGER papers_ad AFTER DELETE ON papers BEGIN"
  "  INSERT INTO papers_fts(papers_fts, rowid, title, abstract, authors)"
  "  VALUES('delete', old.id, old.title, old.abstract, old.authors); END;"
  PMCP__SQ_PAPERS_AU;

/* v3: indexes that keep the research listings fast on large labs: live
 * run counts per project / experiment and the lab's run list and its total
 * without visiting table rows, and a project's or experiment's runs newest
 * first. */
static const char v3[] =
  "CREATE INDEX IF NOT EXISTS runs_project_live ON runs(project_id, deleted);"
  "CREATE INDEX IF NOT EXISTS runs_experiment_live ON runs(experiment_id, deleted);"
  "CREATE INDEX IF NOT EXISTS runs_tenant_live ON runs(tenant_id, deleted, created DESC, id DESC);"
  "CREATE INDEX IF NOT EXISTS runs_project_list ON runs(tenant_id, project_id, deleted, created DESC, id DESC);"
  "CREATE INDEX IF NOT EXISTS runs_experiment_list ON runs(tenant_id, experiment_id, deleted, created DESC,"
  "  id DESC);"
  "CREATE INDEX IF NOT EXISTS experiments_project_live ON experiments(project_id, deleted);";

/* v4: embeddings of the indexed documents, computed by `probe embed` (or
 * pmcp_research_embed()) with a model and read by search semantic=true. */
static const char v4[] =
  "CREATE TABLE IF NOT EXISTS embeddings(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  ref TEXT NOT NULL, model TEXT NOT NULL, text_sha256 TEXT, vector TEXT NOT NULL,"
  "  created INTEGER NOT NULL, UNIQUE(tenant_id, model, ref));";

/* v5: the lab's run list with project_id in the index, so the unfiled
 * runs (browse's tree root) are found without visiting table rows
 * (20 ms -> 1.5 ms on 10,000 runs). */
static const char v5[] =
  "CREATE INDEX IF NOT EXISTS runs_tenant_live_project ON runs(tenant_id, deleted,"
  "  created DESC, id DESC, project_id);";

/* v6: the service tables (service_schema.c, shared with every backend),
 * plus what portable SQL cannot say: the audit log is append-only. */
static const char v6_sqlite[] =
  "CREATE TRIGGER IF NOT EXISTS audit_log_no_update BEFORE UPDATE ON audit_log BEGIN"
  "  SELECT RAISE(ABORT, 'the audit log is append-only'); END;"
  "CREATE TRIGGER IF NOT EXISTS audit_log_no_delete BEFORE DELETE ON audit_log BEGIN"
  "  SELECT RAISE(ABORT, 'the audit log is append-only'); END;";

/* v8: attributes of RL environments (label `env` of a run's series),
 * versioned by episode ("env-attribute" records, sq_env.c). */
static const char v8[] =
  "CREATE TABLE IF NOT EXISTS env_attributes(id INTEGER PRIMARY KEY, tenant_id INTEGER NOT NULL,"
  "  run_id INTEGER NOT NULL, env TEXT NOT NULL, path TEXT NOT NULL, episode INTEGER NOT NULL,"
  "  type TEXT NOT NULL, value TEXT NOT NULL, created INTEGER NOT NULL,"
  "  UNIQUE(run_id, env, path, episode));";

/* v9 (research latency on large labs):
 *  - live run and experiment counts kept on projects and experiments by
 *    triggers, so browse's tree reads a number instead of counting index
 *    entries for every project and experiment it shows (a lab of 10,000
 *    runs counted 20,000 entries per tree page);
 *  - newest-first indexes for the notes, artifacts and checkpoints lists,
 *    so a page is read in order instead of sorting the whole catalog;
 *  - lookups by name, hash, path and URI for the search tool's exact
 *    channel and for artifact:NAME at the shared level.
 * Safe on existing stores: columns are added with a default (unless they
 * exist) and filled from the rows in the same transaction as the triggers
 * that keep them; running it again changes nothing. */
static const char v9_col1[] = "ALTER TABLE projects ADD COLUMN n_runs INTEGER NOT NULL DEFAULT 0";
static const char v9_col2[] =
  "ALTER TABLE projects ADD COLUMN n_experiments INTEGER NOT NULL DEFAULT 0";
static const char v9_col3[] =
  "ALTER TABLE experiments ADD COLUMN n_runs INTEGER NOT NULL DEFAULT 0";
static const char v9_counts[] =
  "UPDATE projects SET"
  "  n_runs=(SELECT count(*) FROM runs WHERE project_id=projects.id AND deleted=0),"
  "  n_experiments=(SELECT count(*) FROM experiments WHERE project_id=projects.id AND deleted=0);"
  "UPDATE experiments SET"
  "  n_runs=(SELECT count(*) FROM runs WHERE experiment_id=experiments.id AND deleted=0);"
  "CREATE TRIGGER IF NOT EXISTS runs_live_ai AFTER INSERT ON runs WHEN new.deleted=0 BEGIN"
  "  UPDATE projects SET n_runs=n_runs+1 WHERE id=new.project_id;"
  "  UPDATE experiments SET n_runs=n_runs+1 WHERE id=new.experiment_id; END;"
  "CREATE TRIGGER IF NOT EXISTS runs_live_ad AFTER DELETE ON runs WHEN old.deleted=0 BEGIN"
  "  UPDATE projects SET n_runs=n_runs-1 WHERE id=old.project_id;"
  "  UPDATE experiments SET n_runs=n_runs-1 WHERE id=old.experiment_id; END;"
  "CREATE TRIGGER IF NOT EXISTS runs_live_au AFTER UPDATE OF project_id, experiment_id, deleted ON runs BEGIN"
  "  UPDATE projects SET n_runs=n_runs-1 WHERE old.deleted=0 AND id=old.project_id;"
  "  UPDATE experiments SET n_runs=n_runs-1 WHERE old.deleted=0 AND id=old.experiment_id;"
  "  UPDATE projects SET n_runs=n_runs+1 WHERE new.deleted=0 AND id=new.project_id;"
  "  UPDATE experiments SET n_runs=n_runs+1 WHERE new.deleted=0 AND id=new.experiment_id; END;"
  "CREATE TRIGGER IF NOT EXISTS experiments_live_ai AFTER INSERT ON experiments WHEN new.deleted=0 BEGIN"
  "  UPDATE projects SET n_experiments=n_experiments+1 WHERE id=new.project_id; END;"
  "CREATE TRIGGER IF NOT EXISTS experiments_live_ad AFTER DELETE ON experiments WHEN old.deleted=0 BEGIN"
  "  UPDATE projects SET n_experiments=n_experiments-1 WHERE id=old.project_id; END;"
  "CREATE TRIGGER IF NOT EXISTS experiments_live_au AFTER UPDATE OF project_id, deleted ON experiments BEGIN"
  "  UPDATE projects SET n_experiments=n_experiments-1 WHERE old.deleted=0 AND id=old.project_id;"
  "  UPDATE projects SET n_experiments=n_experiments+1 WHERE new.deleted=0 AND id=new.project_id;"
  "  END;";
static const char v9_indexes[] =
  "CREATE INDEX IF NOT EXISTS notes_recent ON notes(tenant_id, updated DESC, id DESC);"
  "CREATE INDEX IF NOT EXISTS artifacts_recent ON artifacts(tenant_id, created DESC, id DESC);"
  "CREATE INDEX IF NOT EXISTS artifacts_name ON artifacts(tenant_id, name, shared);"
  "CREATE INDEX IF NOT EXISTS artifact_versions_sha256 ON artifact_versions(tenant_id, sha256);"
  "CREATE INDEX IF NOT EXISTS artifact_versions_uri ON artifact_versions(tenant_id, uri);"
  "CREATE INDEX IF NOT EXISTS artifact_versions_path ON artifact_versions(tenant_id, path);"
  "CREATE INDEX IF NOT EXISTS checkpoints_recent ON checkpoints(tenant_id, created DESC, id DESC);"
  "CREATE INDEX IF NOT EXISTS checkpoints_uri ON checkpoints(tenant_id, uri);"
  "CREATE INDEX IF NOT EXISTS dataset_versions_uri ON dataset_versions(tenant_id, uri);"
  "CREATE INDEX IF NOT EXISTS sources_uri ON sources(tenant_id, uri);"
  "CREATE INDEX IF NOT EXISTS files_sha256 ON files(tenant_id, sha256);";

static const char *const v1[] = {v1_0, v1_1, v1_2, v1_3, NULL};
static const char *const v2s[] = {v2, NULL};
static const char *const v3s[] = {v3, NULL};
static const char *const v4s[] = {v4, NULL};
static const char *const v5s[] = {v5, NULL};
static const char *const v6s[] = {v6_sqlite, NULL};
static const char *const v7s[] = {NULL}; /* v7: service tables only */
static const char *const v8s[] = {v8, NULL};
static const char *const v9s[] = {v9_col1, v9_col2, v9_col3, v9_counts, v9_indexes, NULL};
/* migrations[i]: the statements taking version i to i + 1 (after the
 * service tables of version i + 1, if any). */
/* v10: indexes for list_runs' run table (runtable.c): a filter
 * condition on an attribute or a series summary becomes one index range
 * scan (the runs whose config/optimizer is "adamw", whose config/lr is
 * below 0.001, whose last val/loss is below 0.5) instead of one lookup per
 * run, and an attribute path's values are read in one scan. tenant_id comes
 * last (the scans check it from the index): led by it, these indexes would
 * also serve one run's attribute listing ordered by path, and SQLite,
 * which has no statistics on a read-only store, took them for it (a scan of
 * every attribute of the lab instead of the run's own). */
static const char v10[] =
  "CREATE INDEX IF NOT EXISTS attributes_path_text ON attributes(owner_kind, path, v_text,"
  "  owner_id, tenant_id);"
  "CREATE INDEX IF NOT EXISTS attributes_path_num ON attributes(owner_kind, path,"
  "  coalesce(v_real, v_int), owner_id, tenant_id);"
  "CREATE INDEX IF NOT EXISTS series_key_last ON series(key, scale, last, run_id, tenant_id);";
static const char *const v10s[] = {v10, NULL};
/* v11: list_runs answered in SQL (runfilter.c):
 *  - attributes_path_number replaces attributes_path_num: the number an
 *    attribute lists (booleans, which v_int also holds, are not numbers),
 *    so a comparison scans exactly the runs that satisfy it;
 *  - series_key_shape: whether every series of a key on a scale has one
 *    labels text and one value kind (then no run has two, and a summary
 *    condition on the key is exact in SQL) is two probes of it. Labels and
 *    kind never change after a series is created: logging leaves it
 *    alone. */
static const char v11[] =
  "DROP INDEX IF EXISTS attributes_path_num;"
  "CREATE INDEX IF NOT EXISTS attributes_path_number ON attributes(owner_kind, path,"
  "  (CASE WHEN type='bool' THEN NULL ELSE coalesce(v_real, v_int) END), owner_id, tenant_id);"
  "CREATE INDEX IF NOT EXISTS series_key_shape ON series(key, scale, labels, kind);";
static const char *const v11s[] = {v11, NULL};
static const char *const v12s[] = {NULL}; /* v12: the tasks table (service tables) */
/* v13: list_runs conditions on the run row and tags answered from an
 * index (runfilter.c): a state (its runs newest first, as a page reads
 * them), a name prefix (a range of names), a tag (its runs). tenant_id
 * last in tags_tag, as in v10. notes_owner_recent: an entity's latest
 * notes (its card, its tree) without walking every note of the lab
 * newest first through notes_recent. */
static const char v13[] =
  "CREATE INDEX IF NOT EXISTS runs_project_status ON runs(tenant_id, project_id, deleted,"
  "  status, created DESC, id DESC);"
  "CREATE INDEX IF NOT EXISTS runs_project_name ON runs(tenant_id, project_id, deleted, name);"
  "CREATE INDEX IF NOT EXISTS tags_tag ON tags(owner_kind, tag, owner_id, tenant_id);"
  "CREATE INDEX IF NOT EXISTS notes_owner_recent ON notes(owner_kind, owner_id, updated DESC,"
  "  id DESC);";
static const char *const v13s[] = {v13, NULL};
/* v14: metric blocks of codec version 3 (sq_codec.c: segments with
 * their summaries in a header). No DDL: the blocks of older versions are
 * rewritten after it (pmcp__sq_reencode_blocks). */
static const char *const v14s[] = {NULL};
static const char *const *const migrations[] = {v1, v2s, v3s, v4s, v5s, v6s, v7s, v8s, v9s,
                                                v10s, v11s, v12s, v13s, v14s};

int pmcp__sq_schema_version(pmcp__sq *q, int *out)
{
  *out = 0;
  sqlite3_stmt *st = NULL;
  int src = sqlite3_prepare_v2(q->db,
      "SELECT (SELECT count(*) FROM sqlite_master),"
      " (SELECT count(*) FROM sqlite_master WHERE type='table' AND name='meta')",
      -1, &st, NULL);
  if (src != SQLITE_OK)
    return (src == SQLITE_NOTADB || src == SQLITE_CORRUPT) ? PMCP_ECORRUPT : PMCP_EIO;
  src = sqlite3_step(st);
  if (src != SQLITE_ROW) {
    sqlite3_finalize(st);
    return (src == SQLITE_NOTADB || src == SQLITE_CORRUPT) ? PMCP_ECORRUPT : PMCP_EIO;
  }
  int n_objects = sqlite3_column_int(st, 0);
  int has_meta = sqlite3_column_int(st, 1);
  sqlite3_finalize(st);
  if (!has_meta)
    return n_objects == 0 ? 0 : PMCP_ESTORE;
  src = sqlite3_prepare_v2(q->db, "SELECT value FROM meta WHERE key='schema_version'", -1,
                           &st, NULL);
  if (src != SQLITE_OK)
    return PMCP_ESTORE;
  if (sqlite3_step(st) == SQLITE_ROW)
    *out = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return *out > 0 ? 0 : PMCP_ESTORE;
}

/* For a lone "ALTER TABLE T ADD COLUMN C ..." statement: whether T already
 * has C (SQLite has no ADD COLUMN IF NOT EXISTS). */
static int column_exists(pmcp__sq *q, const char *stmt, int *has)
{
  static const char pre[] = "ALTER TABLE ";
  static const char mid[] = " ADD COLUMN ";
  *has = 0;
  if (strncmp(stmt, pre, sizeof pre - 1) != 0)
    return SQLITE_OK;
  const char *tab = stmt + sizeof pre - 1;
  const char *m = strstr(tab, mid);
  if (!m)
    return SQLITE_OK;
  const char *col = m + sizeof mid - 1;
  size_t cl = strcspn(col, " ");
  char tname[64], cname[64];
  if ((size_t)(m - tab) >= sizeof tname || cl >= sizeof cname)
    return SQLITE_ERROR;
  snprintf(tname, sizeof tname, "%.*s", (int)(m - tab), tab);
  snprintf(cname, sizeof cname, "%.*s", (int)cl, col);
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(q->db, "SELECT 1 FROM pragma_table_info(?1) WHERE name=?2", -1,
                              &st, NULL);
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_bind_text(st, 1, tname, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, cname, -1, SQLITE_TRANSIENT);
  rc = sqlite3_step(st);
  *has = rc == SQLITE_ROW;
  sqlite3_finalize(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int pmcp__sq_migrate(pmcp_store *s, pmcp__sq *q, int from, int to)
{
  int max = (int)(sizeof migrations / sizeof migrations[0]);
  if (to > max || from < 0)
    return pmcp_store_set_error(s, PMCP_EINTERNAL, "no migration to schema version %d", to);
  for (int v = from; v < to; v++) {
    const char *const *svc = pmcp__service_ddl(v + 1);
    for (const char *const *m = svc; m && *m; m++) {
      int rc = sqlite3_exec(q->db, *m, NULL, NULL, NULL);
      if (rc != SQLITE_OK)
        return pmcp__sq_err(s, q, rc, "migrate store");
    }
    for (const char *const *m = migrations[v]; *m; m++) {
      int has = 0;
      int rc = column_exists(q, *m, &has);
      if (rc == SQLITE_OK && has)
        continue;
      if (rc == SQLITE_OK)
        rc = sqlite3_exec(q->db, *m, NULL, NULL, NULL);
      if (rc != SQLITE_OK)
        return pmcp__sq_err(s, q, rc, "migrate store");
    }
    /* A new store (from 0) has no blocks to rewrite. */
    if (v + 1 == 14 && from > 0) {
      int rc = pmcp__sq_reencode_blocks(s, q);
      if (rc)
        return rc;
    }
  }
  char sql[128];
  snprintf(sql, sizeof sql,
           "INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', '%d')", to);
  return pmcp__sq_exec(s, q, sql);
}
