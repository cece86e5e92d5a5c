/* SPDX-License-Identifier: MIT */
/* The store (both backends): the other record kinds of pmcp_store_put(): groups,
 * trials with trajectories, sessions with transcripts, shared and
 * per-workspace files, project paper links and experiment versions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/put.h"
#include "util/json.h"

int pmcp__put_group(put_ctx *c)
{
  const char *id, *name, *exp, *desc;
  int rc;
  if ((rc = pmcp__put_fstr(c, "id", 0, &id)) || (rc = pmcp__put_fstr(c, "name", 1, &name)) ||
      (rc = pmcp__put_fstr(c, "experiment", 0, &exp)) || (rc = pmcp__put_fstr(c, "description", 0, &desc)))
    return rc;
  cJSON *runs = cJSON_GetObjectItemCaseSensitive(c->o, "runs");
  if (runs && !cJSON_IsArray(runs))
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "group record: \"runs\" must be an array");
  char k[32];
  int64_t eid = 0, existing, gid;
  if (exp && (rc = pmcp__sql_resolve(c->s, c->q, c->t, exp, "experiment", k, &eid)))
    return rc;
  pmcp_buf slug = PMCP_BUF_INIT;
  if ((rc = pmcp__put_pick_slug(c, "groups", id, name, &slug, &existing)))
    goto out;
  static const char sql[] =
      "INSERT INTO groups(tenant_id, slug, name, experiment_id, description, created)"
      " VALUES(?1,?2,?3,?4,?5,?6) ON CONFLICT(tenant_id, slug) DO UPDATE SET name=excluded.name,"
      " experiment_id=coalesce(excluded.experiment_id, groups.experiment_id),"
      " description=coalesce(excluded.description, groups.description)";
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(c->s, c->q, sql, &st)))
    goto out;
  pmcp__st_bind_int64(st, 1, c->t.id);
  pmcp__st_bind_text(st, 2, slug.ptr);
  pmcp__st_bind_text(st, 3, name);
  if (eid)
    pmcp__st_bind_int64(st, 4, eid);
  pmcp__st_bind_text(st, 5, desc);
  pmcp__st_bind_int64(st, 6, pmcp__now_ms());
  if ((rc = pmcp__st_run1(c->s, st, "group")))
    goto out;
  gid = pmcp__put_by_slug(c, "groups", slug.ptr);
  cJSON *it;
  cJSON_ArrayForEach(it, runs) {
    int64_t rid;
    if (!cJSON_IsString(it)) {
      rc = pmcp_store_set_error(c->s, PMCP_EINVAL, "group record: \"runs\" holds run ids");
      goto out;
    }
    if ((rc = pmcp__sql_resolve(c->s, c->q, c->t, it->valuestring, "run", k, &rid)))
      goto out;
    static const char sql_m[] =
        "INSERT INTO group_runs(tenant_id, group_id, run_id) VALUES(?1,?2,?3)"
        " ON CONFLICT DO NOTHING";
    if ((rc = pmcp__sql_prep(c->s, c->q, sql_m, &st)))
      goto out;
    pmcp__st_bind_int64(st, 1, c->t.id);
    pmcp__st_bind_int64(st, 2, gid);
    pmcp__st_bind_int64(st, 3, rid);
    if ((rc = pmcp__st_run1(c->s, st, "group member")))
      goto out;
  }
  if ((rc = pmcp__put_set_ref(c, "group", slug.ptr)) == 0)
    rc = pmcp__put_index_doc(c, "group", name, desc ? desc : "");
out:
  pmcp_buf_dispose(&slug);
  return rc;
}

int pmcp__put_trial(put_ctx *c)
{
  const char *id, *run, *name, *status;
  char *params = NULL, *traj = NULL;
  double score = 0;
  int has_score, rc;
  if ((rc = pmcp__put_fstr(c, "id", 0, &id)) || (rc = pmcp__put_fstr(c, "run", 1, &run)) ||
      (rc = pmcp__put_fstr(c, "name", 0, &name)) || (rc = pmcp__put_fstr(c, "status", 0, &status)) ||
      (rc = pmcp__put_fnum(c, "score", &has_score, &score)))
    return rc;
  if ((rc = pmcp__put_fjson(c, "params", 0, &params)) || (rc = pmcp__put_fjson(c, "trajectory", 1, &traj)))
    goto out;
  char k[32];
  int64_t rid, existing;
  if ((rc = pmcp__sql_resolve(c->s, c->q, c->t, run, "run", k, &rid)))
    goto out;
  pmcp_buf slug = PMCP_BUF_INIT, nm = PMCP_BUF_INIT;
  const char *rs = strchr(run, ':') ? strchr(run, ':') + 1 : run;
  pmcp__buf_printf(&nm, "%s-%s", rs, name ? name : "trial");
  rc = pmcp__put_pick_slug(c, "trials", id, nm.ptr, &slug, &existing);
  pmcp_buf_dispose(&nm);
  static const char sql[] =
      "INSERT INTO trials(tenant_id, slug, run_id, name, params, status, score, trajectory,"
      " created) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9) ON CONFLICT(tenant_id, slug) DO UPDATE SET"
      " name=coalesce(excluded.name, trials.name), params=coalesce(excluded.params, trials.params),"
      " status=coalesce(excluded.status, trials.status), score=coalesce(excluded.score, trials.score),"
      " trajectory=coalesce(excluded.trajectory, trials.trajectory)";
  pmcp__stmt *st;
  if (rc == 0 && (rc = pmcp__sql_prep(c->s, c->q, sql, &st)) == 0) {
    pmcp__st_bind_int64(st, 1, c->t.id);
    pmcp__st_bind_text(st, 2, slug.ptr);
    pmcp__st_bind_int64(st, 3, rid);
    pmcp__st_bind_text(st, 4, name);
    pmcp__st_bind_text(st, 5, params);
    pmcp__st_bind_text(st, 6, status);
    if (has_score && isfinite(score))
      pmcp__st_bind_double(st, 7, score);
    pmcp__st_bind_text(st, 8, traj);
    pmcp__st_bind_int64(st, 9, pmcp__now_ms());
    rc = pmcp__st_run1(c->s, st, "trial");
  }
  if (rc == 0 && (rc = pmcp__put_set_ref(c, "trial", slug.ptr)) == 0)
    rc = pmcp__put_index_doc(c, "trial", name ? name : slug.ptr, params ? params : "");
  pmcp_buf_dispose(&slug);
out:
  cJSON_free(params);
  cJSON_free(traj);
  return rc;
}

int pmcp__put_session(put_ctx *c)
{
  const char *id, *title, *agent;
  int64_t started = 0, ended = 0;
  int has_s, has_e, rc;
  char *transcript = NULL;
  if ((rc = pmcp__put_fstr(c, "id", 0, &id)) || (rc = pmcp__put_fstr(c, "title", 1, &title)) ||
      (rc = pmcp__put_fstr(c, "agent", 0, &agent)) || (rc = pmcp__put_fint(c, "started", 0, &has_s, &started)) ||
      (rc = pmcp__put_fint(c, "ended", 0, &has_e, &ended)) || (rc = pmcp__put_fjson(c, "transcript", 1, &transcript)))
    return rc;
  cJSON *on = cJSON_GetObjectItemCaseSensitive(c->o, "on");
  cJSON *it;
  pmcp_buf slug = PMCP_BUF_INIT, body = PMCP_BUF_INIT;
  int64_t existing, sid;
  if (on && !cJSON_IsArray(on)) {
    rc = pmcp_store_set_error(c->s, PMCP_EINVAL, "session record: \"on\" must be an array of refs");
    goto out;
  }
  cJSON_ArrayForEach(it, on) {
    if (!cJSON_IsString(it)) {
      rc = pmcp_store_set_error(c->s, PMCP_EINVAL, "session record: \"on\" must hold refs");
      goto out;
    }
    if ((rc = pmcp__put_ref_exists(c, it->valuestring)))
      goto out;
  }
  cJSON *tr = cJSON_GetObjectItemCaseSensitive(c->o, "transcript");
  cJSON_ArrayForEach(it, tr) {
    cJSON *role = cJSON_GetObjectItemCaseSensitive(it, "role");
    cJSON *content = cJSON_GetObjectItemCaseSensitive(it, "content");
    if (!cJSON_IsString(role) || !cJSON_IsString(content)) {
      rc = pmcp_store_set_error(c->s, PMCP_EINVAL,
          "session record: each transcript entry needs string \"role\" and \"content\"");
      goto out;
    }
    pmcp__buf_printf(&body, "%s: %s\n", role->valuestring, content->valuestring);
  }
  if (id) {
    rc = pmcp__put_pick_slug(c, "sessions", id, NULL, &slug, &existing);
  } else {
    rc = pmcp__sql_new_id(c->s, c->q, c->t, "sessions", NULL, title, &slug, &existing);
  }
  if (rc)
    goto out;
  static const char sql[] =
      "INSERT INTO sessions(tenant_id, slug, title, agent, started, ended, transcript, created)"
      " VALUES(?1,?2,?3,?4,?5,?6,?7,?8) ON CONFLICT(tenant_id, slug) DO UPDATE SET"
      " title=excluded.title, agent=coalesce(excluded.agent, sessions.agent),"
      " started=coalesce(excluded.started, sessions.started), ended=coalesce(excluded.ended, sessions.ended),"
      " transcript=coalesce(excluded.transcript, sessions.transcript)";
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(c->s, c->q, sql, &st)))
    goto out;
  pmcp__st_bind_int64(st, 1, c->t.id);
  pmcp__st_bind_text(st, 2, slug.ptr);
  pmcp__st_bind_text(st, 3, title);
  pmcp__st_bind_text(st, 4, agent);
  if (has_s)
    pmcp__st_bind_int64(st, 5, started);
  if (has_e)
    pmcp__st_bind_int64(st, 6, ended);
  pmcp__st_bind_text(st, 7, transcript);
  pmcp__st_bind_int64(st, 8, has_s ? started : pmcp__now_ms());
  if ((rc = pmcp__st_run1(c->s, st, "session")))
    goto out;
  sid = pmcp__put_by_slug(c, "sessions", slug.ptr);
  cJSON_ArrayForEach(it, on) {
    static const char sql_l[] =
        "INSERT INTO session_links(tenant_id, session_id, ref) VALUES(?1,?2,?3)"
        " ON CONFLICT DO NOTHING";
    if ((rc = pmcp__sql_prep(c->s, c->q, sql_l, &st)))
      goto out;
    pmcp__st_bind_int64(st, 1, c->t.id);
    pmcp__st_bind_int64(st, 2, sid);
    pmcp__st_bind_text(st, 3, it->valuestring);
    if ((rc = pmcp__st_run1(c->s, st, "session link")))
      goto out;
  }
  if ((rc = pmcp__put_set_ref(c, "session", slug.ptr)) == 0)
    rc = pmcp__put_index_doc(c, "session", title, body.ptr ? body.ptr : "");
out:
  cJSON_free(transcript);
  pmcp_buf_dispose(&slug);
  pmcp_buf_dispose(&body);
  return rc;
}

int pmcp__put_file(put_ctx *c)
{
  const char *path, *ws, *content, *uri, *mt;
  int rc;
  if ((rc = pmcp__put_fstr(c, "path", 1, &path)) || (rc = pmcp__put_fstr(c, "workspace", 0, &ws)) ||
      (rc = pmcp__put_fstr(c, "content", 0, &content)) || (rc = pmcp__put_fstr(c, "uri", 0, &uri)) ||
      (rc = pmcp__put_fstr(c, "media_type", 0, &mt)))
    return rc;
  if (!content == !uri)
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "file record needs \"content\" or \"uri\" (one)");
  if (strlen(path) > 512 || path[0] == '/' || strstr(path, ".."))
    return pmcp_store_set_error(c->s, PMCP_EINVAL,
        "file record: \"path\" must be relative, without '..', at most 512 characters");
  char k[32];
  int64_t wid = 0, existing;
  if (ws && (rc = pmcp__sql_resolve(c->s, c->q, c->t, ws, "workspace", k, &wid)))
    return rc;
  pmcp_buf slug = PMCP_BUF_INIT;
  static const char sql_find[] =
      "SELECT slug FROM files WHERE tenant_id=?1 AND workspace_id=?2 AND path=?3";
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(c->s, c->q, sql_find, &st)))
    return rc;
  pmcp__st_bind_int64(st, 1, c->t.id);
  pmcp__st_bind_int64(st, 2, wid);
  pmcp__st_bind_text(st, 3, path);
  if (pmcp__st_step(st) == PMCP__ROW)
    pmcp__st_text_col(&slug, st, 0);
  pmcp__st_reset(st);
  if (!slug.len) {
    pmcp_buf nm = PMCP_BUF_INIT;
    pmcp__buf_printf(&nm, "%s%s%s", ws ? (strchr(ws, ':') ? strchr(ws, ':') + 1 : ws) : "shared",
                     "-", path);
    rc = pmcp__sql_new_id(c->s, c->q, c->t, "files", NULL, nm.ptr, &slug, &existing);
    pmcp_buf_dispose(&nm);
  }
  char sha[65] = "";
  if (content)
    pmcp__sha256_hex(content, strlen(content), sha);
  static const char sql[] =
      "INSERT INTO files(tenant_id, slug, workspace_id, path, media_type, content, uri, sha256,"
      " size, created) VALUES(?1,?2,?3,?4,?5,?6,?7,?10,?8,?9)"
      " ON CONFLICT(tenant_id, workspace_id, path) DO UPDATE SET media_type=excluded.media_type,"
      " content=excluded.content, uri=excluded.uri, size=excluded.size, sha256=excluded.sha256";
  if (rc == 0 && (rc = pmcp__sql_prep(c->s, c->q, sql, &st)) == 0) {
    pmcp__st_bind_int64(st, 1, c->t.id);
    pmcp__st_bind_text(st, 2, slug.ptr);
    pmcp__st_bind_int64(st, 3, wid);
    pmcp__st_bind_text(st, 4, path);
    pmcp__st_bind_text(st, 5, mt ? mt : (content ? "text/plain" : "application/octet-stream"));
    if (content)
      pmcp__st_bind_blob(st, 6, content, strlen(content));
    pmcp__st_bind_text(st, 7, uri);
    pmcp__st_bind_int64(st, 8, content ? (int64_t)strlen(content) : 0);
    pmcp__st_bind_int64(st, 9, pmcp__now_ms());
    if (content)
      pmcp__st_bind_text(st, 10, sha);
    rc = pmcp__st_run1(c->s, st, "file");
  }
  if (rc == 0 && (rc = pmcp__put_set_ref(c, "file", slug.ptr)) == 0)
    rc = pmcp__put_index_doc(c, "file", path, content ? content : uri);
  pmcp_buf_dispose(&slug);
  return rc;
}

int pmcp__put_paper_link(put_ctx *c)
{
  const char *project, *paper, *note;
  int rc;
  if ((rc = pmcp__put_fstr(c, "project", 1, &project)) || (rc = pmcp__put_fstr(c, "paper", 1, &paper)) ||
      (rc = pmcp__put_fstr(c, "note", 0, &note)))
    return rc;
  char k[32];
  int64_t pid;
  if ((rc = pmcp__sql_resolve(c->s, c->q, c->t, project, "project", k, &pid)))
    return rc;
  const char *pp = strncmp(paper, "paper:", 6) == 0 ? paper + 6 : paper;
  pmcp_buf r = PMCP_BUF_INIT;
  pmcp__buf_printf(&r, "paper:%s", pp);
  rc = pmcp__put_ref_exists(c, r.ptr);
  pmcp_buf_dispose(&r);
  if (rc)
    return rc;
  static const char sql[] =
      "INSERT INTO project_papers(tenant_id, project_id, arxiv_id, note) VALUES(?1,?2,?3,?4)"
      " ON CONFLICT(project_id, arxiv_id) DO UPDATE SET note=coalesce(excluded.note, project_papers.note)";
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(c->s, c->q, sql, &st)))
    return rc;
  pmcp__st_bind_int64(st, 1, c->t.id);
  pmcp__st_bind_int64(st, 2, pid);
  pmcp__st_bind_text(st, 3, pp);
  pmcp__st_bind_text(st, 4, note);
  if ((rc = pmcp__st_run1(c->s, st, "paper link")))
    return rc;
  pmcp__buf_reset(&c->ref);
  return pmcp__buf_printf(&c->ref, "paper:%s", pp);
}

int pmcp__put_experiment_version(put_ctx *c)
{
  const char *exp, *desc, *author;
  char *config = NULL;
  int rc;
  if ((rc = pmcp__put_fstr(c, "experiment", 1, &exp)) || (rc = pmcp__put_fstr(c, "description", 0, &desc)) ||
      (rc = pmcp__put_fstr(c, "author", 0, &author)) || (rc = pmcp__put_fjson(c, "config", 0, &config)))
    return rc;
  char k[32];
  int64_t eid, version = 0;
  pmcp__stmt *st;
  if ((rc = pmcp__sql_resolve(c->s, c->q, c->t, exp, "experiment", k, &eid)))
    goto out;
  /* Idempotent: the same description and config as the latest version
   * adds nothing. */
  static const char sql_last_sq[] =
      "SELECT version, description IS ?2, config IS ?3 FROM experiment_versions"
      " WHERE experiment_id=?1 ORDER BY version DESC LIMIT 1";
  static const char sql_last_pg[] =
      "SELECT version, description IS NOT DISTINCT FROM ?2::text,"
      " config IS NOT DISTINCT FROM ?3::text FROM experiment_versions"
      " WHERE experiment_id=?1 ORDER BY version DESC LIMIT 1";
  if ((rc = pmcp__sql_prep(c->s, c->q, PMCP__SQL_PICK(c->q, sql_last_sq, sql_last_pg), &st)))
    goto out;
  pmcp__st_bind_int64(st, 1, eid);
  pmcp__st_bind_text(st, 2, desc);
  pmcp__st_bind_text(st, 3, config);
  int same = 0;
  if (pmcp__st_step(st) == PMCP__ROW) {
    version = pmcp__st_int64(st, 0);
    same = (int)pmcp__st_int64(st, 1) && (int)pmcp__st_int64(st, 2);
  }
  pmcp__st_reset(st);
  if (!same) {
    version++;
    static const char sql[] =
        "INSERT INTO experiment_versions(tenant_id, experiment_id, version, description, config,"
        " author, created) VALUES(?1,?2,?3,?4,?5,?6,?7)";
    if ((rc = pmcp__sql_prep(c->s, c->q, sql, &st)))
      goto out;
    pmcp__st_bind_int64(st, 1, c->t.id);
    pmcp__st_bind_int64(st, 2, eid);
    pmcp__st_bind_int64(st, 3, version);
    pmcp__st_bind_text(st, 4, desc);
    pmcp__st_bind_text(st, 5, config);
    pmcp__st_bind_text(st, 6, author);
    pmcp__st_bind_int64(st, 7, pmcp__now_ms());
    if ((rc = pmcp__st_run1(c->s, st, "experiment version")))
      goto out;
    if (config) {
      static const char sql_c[] = "UPDATE experiments SET config=?2 WHERE id=?1";
      if ((rc = pmcp__sql_prep(c->s, c->q, sql_c, &st)))
        goto out;
      pmcp__st_bind_int64(st, 1, eid);
      pmcp__st_bind_text(st, 2, config);
      if ((rc = pmcp__st_run1(c->s, st, "experiment config")))
        goto out;
    }
  }
  const char *es = strchr(exp, ':') ? strchr(exp, ':') + 1 : exp;
  pmcp__buf_reset(&c->ref);
  rc = pmcp__buf_printf(&c->ref, "experiment:%s@%lld", es, (long long)version);
out:
  cJSON_free(config);
  return rc;
}


/* "embedding" {ref, model, vector: [numbers], text_sha256?}: the vector of
 * an indexed document under a model; writing it again replaces it. */
int pmcp__put_embedding(put_ctx *c)
{
  const char *ref, *model, *sha;
  int rc;
  if ((rc = pmcp__put_fstr(c, "ref", 1, &ref)) || (rc = pmcp__put_fstr(c, "model", 1, &model)) ||
      (rc = pmcp__put_fstr(c, "text_sha256", 0, &sha)))
    return rc;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->o, "vector");
  int n = cJSON_GetArraySize(v);
  if (!cJSON_IsArray(v) || n < 1 || n > 65536)
    return pmcp_store_set_error(c->s, PMCP_EINVAL,
                                "embedding: 'vector' must be an array of 1 to 65536 numbers");
  const cJSON *x;
  cJSON_ArrayForEach(x, v)
  {
    if (!cJSON_IsNumber(x))
      return pmcp_store_set_error(c->s, PMCP_EINVAL, "embedding: 'vector' holds a non-number");
  }
  char *vt = pmcp__cjson_print(v);
  if (!vt)
    return PMCP_ENOMEM;
  static const char sql[] =
      "INSERT INTO embeddings(tenant_id, ref, model, text_sha256, vector, created)"
      " VALUES(?1,?2,?3,?4,?5,?6) ON CONFLICT(tenant_id, model, ref) DO UPDATE SET"
      " text_sha256=excluded.text_sha256, vector=excluded.vector, created=excluded.created";
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(c->s, c->q, sql, &st))) {
    cJSON_free(vt);
    return rc;
  }
  pmcp__st_bind_int64(st, 1, c->t.id);
  pmcp__st_bind_text(st, 2, ref);
  pmcp__st_bind_text(st, 3, model);
  pmcp__st_bind_text(st, 4, sha);
  pmcp__st_bind_text(st, 5, vt);
  pmcp__st_bind_int64(st, 6, pmcp__now_ms());
  cJSON_free(vt);
  if ((rc = pmcp__st_run1(c->s, st, "embedding")))
    return rc;
  pmcp__buf_reset(&c->ref);
  return pmcp__buf_puts(&c->ref, ref);
}
