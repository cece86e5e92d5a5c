/* SPDX-License-Identifier: MIT */
/* The store (both backends): the data catalog's record kinds of pmcp_store_put():
 * datasets and their versions, checkpoints, sources, lineage edges (with
 * method steps) and run-use edges. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/put.h"

int pmcp__put_dataset(put_ctx *c)
{
  const char *id, *name, *project, *desc, *uri;
  int registered, rc;
  if ((rc = pmcp__put_fstr(c, "id", 0, &id)) || (rc = pmcp__put_fstr(c, "name", 1, &name)) ||
      (rc = pmcp__put_fstr(c, "project", 0, &project)) || (rc = pmcp__put_fstr(c, "description", 0, &desc)) ||
      (rc = pmcp__put_fstr(c, "uri", 0, &uri)) || (rc = pmcp__put_fbool(c, "registered", 1, &registered)))
    return rc;
  int64_t proj = 0, existing;
  char k[32];
  if (project && (rc = pmcp__sql_resolve(c->s, c->q, c->t, project, "project", k, &proj)))
    return rc;
  pmcp_buf slug = PMCP_BUF_INIT;
  if ((rc = pmcp__put_pick_slug(c, "datasets", id, name, &slug, &existing)) == 0) {
    static const char sql[] =
        "INSERT INTO datasets(tenant_id, slug, name, project_id, registered, description, uri,"
        " created) VALUES(?1,?2,?3,?4,?5,?6,?7,?8) ON CONFLICT(tenant_id, slug) DO UPDATE SET"
        " name=excluded.name, project_id=coalesce(excluded.project_id, datasets.project_id),"
        " registered=excluded.registered, description=coalesce(excluded.description,"
        " datasets.description), uri=coalesce(excluded.uri, datasets.uri)";
    pmcp__stmt *st;
    if ((rc = pmcp__sql_prep(c->s, c->q, sql, &st)) == 0) {
      pmcp__st_bind_int64(st, 1, c->t.id);
      pmcp__st_bind_text(st, 2, slug.ptr);
      pmcp__st_bind_text(st, 3, name);
      if (proj)
        pmcp__st_bind_int64(st, 4, proj);
      pmcp__st_bind_int64(st, 5, registered);
      pmcp__st_bind_text(st, 6, desc);
      pmcp__st_bind_text(st, 7, uri);
      pmcp__st_bind_int64(st, 8, pmcp__now_ms());
      rc = pmcp__st_run1(c->s, st, "dataset");
    }
  }
  if (rc == 0 && (rc = pmcp__put_set_ref(c, "dataset", slug.ptr)) == 0) {
    pmcp_buf body = PMCP_BUF_INIT;
    pmcp__buf_printf(&body, "%s\n%s", desc ? desc : "", uri ? uri : "");
    rc = pmcp__put_index_doc(c, "dataset", name, body.ptr);
    pmcp_buf_dispose(&body);
  }
  pmcp_buf_dispose(&slug);
  return rc;
}

int pmcp__put_dataset_version(put_ctx *c)
{
  const char *ds, *version, *uri, *sha, *desc;
  int64_t size = 0, rows = 0;
  int has_size, has_rows, rc;
  if ((rc = pmcp__put_fstr(c, "dataset", 1, &ds)) || (rc = pmcp__put_fstr(c, "version", 0, &version)) ||
      (rc = pmcp__put_fstr(c, "uri", 0, &uri)) || (rc = pmcp__put_fstr(c, "sha256", 0, &sha)) ||
      (rc = pmcp__put_fstr(c, "description", 0, &desc)) ||
      (rc = pmcp__put_fint(c, "size", 0, &has_size, &size)) || (rc = pmcp__put_fint(c, "rows", 0, &has_rows, &rows)))
    return rc;
  char k[32];
  int64_t dsid;
  if ((rc = pmcp__sql_resolve(c->s, c->q, c->t, ds, "dataset", k, &dsid)))
    return rc;
  char vbuf[32];
  if (!version) {
    static const char sql[] = "SELECT count(*) + 1 FROM dataset_versions WHERE dataset_id=?1";
    pmcp__stmt *st;
    if ((rc = pmcp__sql_prep(c->s, c->q, sql, &st)))
      return rc;
    pmcp__st_bind_int64(st, 1, dsid);
    pmcp__st_step(st);
    snprintf(vbuf, sizeof vbuf, "%lld", (long long)pmcp__st_int64(st, 0));
    pmcp__st_reset(st);
    version = vbuf;
  } else if (!pmcp__id_ok(version)) {
    return pmcp_store_set_error(c->s, PMCP_EINVAL,
        "dataset-version record: invalid version '%.32s'", version);
  }
  static const char sql[] =
      "INSERT INTO dataset_versions(tenant_id, dataset_id, version, uri, sha256, size, rows,"
      " description, created) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)"
      " ON CONFLICT(dataset_id, version) DO UPDATE SET uri=coalesce(excluded.uri, dataset_versions.uri),"
      " sha256=coalesce(excluded.sha256, dataset_versions.sha256), size=coalesce(excluded.size, dataset_versions.size),"
      " rows=coalesce(excluded.rows, dataset_versions.rows), description=coalesce(excluded.description, dataset_versions.description)";
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(c->s, c->q, sql, &st)))
    return rc;
  pmcp__st_bind_int64(st, 1, c->t.id);
  pmcp__st_bind_int64(st, 2, dsid);
  pmcp__st_bind_text(st, 3, version);
  pmcp__st_bind_text(st, 4, uri);
  pmcp__st_bind_text(st, 5, sha);
  if (has_size)
    pmcp__st_bind_int64(st, 6, size);
  if (has_rows)
    pmcp__st_bind_int64(st, 7, rows);
  pmcp__st_bind_text(st, 8, desc);
  pmcp__st_bind_int64(st, 9, pmcp__now_ms());
  if ((rc = pmcp__st_run1(c->s, st, "dataset version")))
    return rc;
  const char *slug = strchr(ds, ':') ? strchr(ds, ':') + 1 : ds;
  pmcp__buf_reset(&c->ref);
  return pmcp__buf_printf(&c->ref, "dataset:%s@%s", slug, version);
}

int pmcp__put_checkpoint(put_ctx *c)
{
  const char *run, *uri, *metric;
  int64_t step = 0, size = 0;
  int has, has_size, has_value, best, stored, rc;
  double value = 0;
  if ((rc = pmcp__put_fstr(c, "run", 1, &run)) || (rc = pmcp__put_fint(c, "step", 1, &has, &step)) ||
      (rc = pmcp__put_fstr(c, "uri", 0, &uri)) || (rc = pmcp__put_fstr(c, "metric", 0, &metric)) ||
      (rc = pmcp__put_fint(c, "size", 0, &has_size, &size)) || (rc = pmcp__put_fnum(c, "value", &has_value, &value)) ||
      (rc = pmcp__put_fbool(c, "best", 0, &best)) || (rc = pmcp__put_fbool(c, "stored", uri != NULL, &stored)))
    return rc;
  char k[32];
  int64_t run_id;
  if ((rc = pmcp__sql_resolve(c->s, c->q, c->t, run, "run", k, &run_id)))
    return rc;
  const char *rs = strchr(run, ':') ? strchr(run, ':') + 1 : run;
  pmcp_buf slug = PMCP_BUF_INIT;
  pmcp__buf_printf(&slug, "%s.step%lld", rs, (long long)step);
  pmcp__stmt *st;
  if (best) {
    /* One best checkpoint per run. */
    static const char sql[] = "UPDATE checkpoints SET best=0 WHERE run_id=?1 AND step<>?2";
    if ((rc = pmcp__sql_prep(c->s, c->q, sql, &st)) == 0) {
      pmcp__st_bind_int64(st, 1, run_id);
      pmcp__st_bind_int64(st, 2, step);
      rc = pmcp__st_run1(c->s, st, "checkpoint");
    }
  }
  static const char sql[] =
      "INSERT INTO checkpoints(tenant_id, slug, run_id, step, best, stored, uri, size, metric,"
      " value, created) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)"
      " ON CONFLICT(run_id, step) DO UPDATE SET best=excluded.best, stored=excluded.stored,"
      " uri=coalesce(excluded.uri, checkpoints.uri), size=coalesce(excluded.size, checkpoints.size),"
      " metric=coalesce(excluded.metric, checkpoints.metric), value=coalesce(excluded.value, checkpoints.value)";
  if (rc == 0 && (rc = pmcp__sql_prep(c->s, c->q, sql, &st)) == 0) {
    pmcp__st_bind_int64(st, 1, c->t.id);
    pmcp__st_bind_text(st, 2, slug.ptr);
    pmcp__st_bind_int64(st, 3, run_id);
    pmcp__st_bind_int64(st, 4, step);
    pmcp__st_bind_int64(st, 5, best);
    pmcp__st_bind_int64(st, 6, stored);
    pmcp__st_bind_text(st, 7, uri);
    if (has_size)
      pmcp__st_bind_int64(st, 8, size);
    pmcp__st_bind_text(st, 9, metric);
    if (has_value && isfinite(value))
      pmcp__st_bind_double(st, 10, value);
    pmcp__st_bind_int64(st, 11, pmcp__now_ms());
    rc = pmcp__st_run1(c->s, st, "checkpoint");
  }
  if (rc == 0) {
    pmcp__buf_reset(&c->ref);
    rc = pmcp__buf_printf(&c->ref, "checkpoint:%s@step%lld", rs, (long long)step);
  }
  pmcp_buf_dispose(&slug);
  return rc;
}

int pmcp__put_source(put_ctx *c)
{
  const char *id, *provider, *kind, *uri, *version, *desc;
  int rc;
  if ((rc = pmcp__put_fstr(c, "id", 0, &id)) || (rc = pmcp__put_fstr(c, "provider", 1, &provider)) ||
      (rc = pmcp__put_fstr(c, "kind", 1, &kind)) || (rc = pmcp__put_fstr(c, "uri", 1, &uri)) ||
      (rc = pmcp__put_fstr(c, "version", 0, &version)) || (rc = pmcp__put_fstr(c, "description", 0, &desc)))
    return rc;
  pmcp_buf slug = PMCP_BUF_INIT;
  int64_t existing = 0;
  if (!id) {
    /* The same provider + uri is the same source. */
    static const char sql[] =
        "SELECT slug FROM sources WHERE tenant_id=?1 AND provider=?2 AND uri=?3";
    pmcp__stmt *st;
    if ((rc = pmcp__sql_prep(c->s, c->q, sql, &st)))
      return rc;
    pmcp__st_bind_int64(st, 1, c->t.id);
    pmcp__st_bind_text(st, 2, provider);
    pmcp__st_bind_text(st, 3, uri);
    if (pmcp__st_step(st) == PMCP__ROW)
      pmcp__st_text_col(&slug, st, 0);
    pmcp__st_reset(st);
  }
  if (!slug.len) {
    const char *tail = strrchr(uri, '/');
    tail = tail && tail[1] ? tail + 1 : uri;
    pmcp_buf nm = PMCP_BUF_INIT;
    pmcp__buf_printf(&nm, "%s-%s", provider, tail);
    rc = pmcp__put_pick_slug(c, "sources", id, nm.ptr, &slug, &existing);
    pmcp_buf_dispose(&nm);
    if (rc == 0 && existing && !id) {
      /* Same slug, different source: make it unique. */
      int64_t ex2;
      pmcp_buf nm2 = PMCP_BUF_INIT;
      pmcp__buf_puts(&nm2, slug.ptr);
      rc = pmcp__sql_new_id(c->s, c->q, c->t, "sources", NULL, nm2.ptr, &slug, &ex2);
      pmcp_buf_dispose(&nm2);
    }
  }
  static const char sql[] =
      "INSERT INTO sources(tenant_id, slug, provider, kind, uri, version, description, created)"
      " VALUES(?1,?2,?3,?4,?5,?6,?7,?8) ON CONFLICT(tenant_id, slug) DO UPDATE SET"
      " provider=excluded.provider, kind=excluded.kind, uri=excluded.uri,"
      " version=coalesce(excluded.version, sources.version),"
      " description=coalesce(excluded.description, sources.description)";
  pmcp__stmt *st;
  if (rc == 0 && (rc = pmcp__sql_prep(c->s, c->q, sql, &st)) == 0) {
    pmcp__st_bind_int64(st, 1, c->t.id);
    pmcp__st_bind_text(st, 2, slug.ptr);
    pmcp__st_bind_text(st, 3, provider);
    pmcp__st_bind_text(st, 4, kind);
    pmcp__st_bind_text(st, 5, uri);
    pmcp__st_bind_text(st, 6, version);
    pmcp__st_bind_text(st, 7, desc);
    pmcp__st_bind_int64(st, 8, pmcp__now_ms());
    rc = pmcp__st_run1(c->s, st, "source");
  }
  if (rc == 0 && (rc = pmcp__put_set_ref(c, "source", slug.ptr)) == 0) {
    pmcp_buf body = PMCP_BUF_INIT;
    pmcp__buf_printf(&body, "%s %s %s\n%s", provider, kind, uri, desc ? desc : "");
    rc = pmcp__put_index_doc(c, "source", uri, body.ptr);
    pmcp_buf_dispose(&body);
  }
  pmcp_buf_dispose(&slug);
  return rc;
}

static int lineage_row(put_ctx *c, const char *from, const char *to, const char *relation,
                       const char *steps);

/* An edge is recorded between entities: each end by its canonical ref
 * (pmcp__put_canon_ref), so every form of a ref finds it and @best keeps
 * naming the checkpoint that was best when the edge was recorded. */
static int lineage_edge(put_ctx *c, const char *from_ref, const char *to_ref,
                        const char *relation, const char *steps)
{
  pmcp_buf fb = PMCP_BUF_INIT, tb = PMCP_BUF_INIT;
  int rc = pmcp__put_canon_ref(c, from_ref, &fb);
  if (rc == 0)
    rc = pmcp__put_canon_ref(c, to_ref, &tb);
  if (rc == 0)
    rc = lineage_row(c, fb.ptr, tb.ptr, relation, steps);
  pmcp_buf_dispose(&fb);
  pmcp_buf_dispose(&tb);
  return rc;
}

static int lineage_row(put_ctx *c, const char *from, const char *to, const char *relation,
                       const char *steps)
{
  int rc;
  if (strcmp(from, to) == 0)
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "lineage record: an edge from %s to itself",
                                from);
  static const char sql[] =
      "INSERT INTO lineage(tenant_id, from_ref, to_ref, relation, steps, created)"
      " VALUES(?1,?2,?3,?4,?5,?6) ON CONFLICT(tenant_id, from_ref, to_ref, relation)"
      " DO UPDATE SET steps=coalesce(excluded.steps, lineage.steps)";
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(c->s, c->q, sql, &st)))
    return rc;
  pmcp__st_bind_int64(st, 1, c->t.id);
  pmcp__st_bind_text(st, 2, from);
  pmcp__st_bind_text(st, 3, to);
  pmcp__st_bind_text(st, 4, relation);
  pmcp__st_bind_text(st, 5, steps);
  pmcp__st_bind_int64(st, 6, pmcp__now_ms());
  if ((rc = pmcp__st_run1(c->s, st, "lineage")))
    return rc;
  pmcp__buf_reset(&c->ref);
  return pmcp__buf_printf(&c->ref, "%s", to);
}

int pmcp__put_lineage(put_ctx *c)
{
  const char *from, *to, *relation;
  char *steps = NULL;
  int rc;
  if ((rc = pmcp__put_fstr(c, "from", 1, &from)) || (rc = pmcp__put_fstr(c, "to", 1, &to)) ||
      (rc = pmcp__put_fstr(c, "relation", 0, &relation)) || (rc = pmcp__put_fjson(c, "steps", 1, &steps)))
    return rc;
  cJSON *sa = cJSON_GetObjectItemCaseSensitive(c->o, "steps");
  cJSON *it;
  cJSON_ArrayForEach(it, sa) {
    cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "name");
    if (!cJSON_IsObject(it) || !cJSON_IsString(nm)) {
      cJSON_free(steps);
      return pmcp_store_set_error(c->s, PMCP_EINVAL,
          "lineage record: each of \"steps\" must be an object with a \"name\"");
    }
  }
  rc = lineage_edge(c, from, to, relation ? relation : "derived", steps);
  cJSON_free(steps);
  return rc;
}

int pmcp__put_run_use(put_ctx *c)
{
  const char *run, *uses;
  int rc;
  if ((rc = pmcp__put_fstr(c, "run", 1, &run)) || (rc = pmcp__put_fstr(c, "uses", 1, &uses)))
    return rc;
  pmcp_buf r = PMCP_BUF_INIT;
  if (!strchr(run, ':'))
    pmcp__buf_printf(&r, "run:%s", run);
  else
    pmcp__buf_puts(&r, run);
  rc = lineage_edge(c, uses, r.ptr, "used", NULL);
  pmcp_buf_dispose(&r);
  return rc;
}

