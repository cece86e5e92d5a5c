/* SQLite backend: pmcp_store_put(), the catalog and the other record kinds
 * described as JSON (datasets and versions, checkpoints, sources, lineage,
 * groups, trials, sessions, files, paper links, experiment versions). Each
 * kind has an identity, so writing the same record twice changes nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "store/sq.h"

typedef struct put_ctx {
  pmcp_store *s;
  pmcp__sq *q;
  pmcp_tenant t;
  const char *kind;
  cJSON *o;
  pmcp_buf ref;
} put_ctx;

/* Field readers: absent is NULL / default; a present field of the wrong
 * type is an error naming it. */
static int fstr(put_ctx *c, const char *name, int required, const char **out)
{
  *out = NULL;
  cJSON *f = cJSON_GetObjectItemCaseSensitive(c->o, name);
  if (!f || cJSON_IsNull(f)) {
    if (required)
      return pmcp_store_set_error(c->s, PMCP_EINVAL, "%s record needs \"%s\"", c->kind, name);
    return 0;
  }
  if (!cJSON_IsString(f))
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "%s record: \"%s\" must be a string", c->kind,
                                name);
  if (required && !*f->valuestring)
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "%s record: \"%s\" is empty", c->kind, name);
  *out = f->valuestring;
  return 0;
}

static int fnum(put_ctx *c, const char *name, int *present, double *out)
{
  *present = 0;
  cJSON *f = cJSON_GetObjectItemCaseSensitive(c->o, name);
  if (!f || cJSON_IsNull(f))
    return 0;
  if (!cJSON_IsNumber(f))
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "%s record: \"%s\" must be a number", c->kind,
                                name);
  *present = 1;
  *out = f->valuedouble;
  return 0;
}

static int fint(put_ctx *c, const char *name, int required, int *present, int64_t *out)
{
  double d = 0;
  int rc = fnum(c, name, present, &d);
  if (rc)
    return rc;
  if (!*present) {
    if (required)
      return pmcp_store_set_error(c->s, PMCP_EINVAL, "%s record needs \"%s\"", c->kind, name);
    return 0;
  }
  if (d != floor(d) || fabs(d) > 9007199254740992.0)
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "%s record: \"%s\" must be an integer",
                                c->kind, name);
  *out = (int64_t)d;
  return 0;
}

static int fbool(put_ctx *c, const char *name, int dflt, int *out)
{
  *out = dflt;
  cJSON *f = cJSON_GetObjectItemCaseSensitive(c->o, name);
  if (!f || cJSON_IsNull(f))
    return 0;
  if (!cJSON_IsBool(f))
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "%s record: \"%s\" must be true or false",
                                c->kind, name);
  *out = cJSON_IsTrue(f);
  return 0;
}

/* A JSON sub-value (object or array) printed compactly; NULL when absent. */
static int fjson(put_ctx *c, const char *name, int want_array, char **out)
{
  *out = NULL;
  cJSON *f = cJSON_GetObjectItemCaseSensitive(c->o, name);
  if (!f || cJSON_IsNull(f))
    return 0;
  if (want_array ? !cJSON_IsArray(f) : !cJSON_IsObject(f))
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "%s record: \"%s\" must be a JSON %s",
                                c->kind, name, want_array ? "array" : "object");
  *out = cJSON_PrintUnformatted(f);
  return *out ? 0 : pmcp_store_set_error(c->s, PMCP_ENOMEM, "out of memory");
}

static void bind_opt(sqlite3_stmt *st, int i, const char *v)
{
  if (v)
    sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null(st, i);
}

static int run1(put_ctx *c, sqlite3_stmt *st, const char *what)
{
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    return pmcp__sq_err(c->s, c->q, rc, what);
  return 0;
}

/* Looks up an existing row id by slug; 0 when absent. */
static int64_t by_slug(put_ctx *c, const char *table, const char *slug)
{
  char *sql = sqlite3_mprintf("SELECT id FROM %s WHERE tenant_id=?1 AND slug=?2", table);
  sqlite3_stmt *st = NULL;
  int64_t id = 0;
  if (sqlite3_prepare_v2(c->q->db, sql, -1, &st, NULL) == SQLITE_OK) {
    sqlite3_bind_int64(st, 1, c->t.id);
    sqlite3_bind_text(st, 2, slug, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW)
      id = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  sqlite3_free(sql);
  return id;
}

/* The slug a record gets: its "id" when given, else one made from @p name
 * (reused when a row with that slug exists, so a second put updates). */
static int pick_slug(put_ctx *c, const char *table, const char *id, const char *name,
                     pmcp_buf *out, int64_t *existing)
{
  *existing = 0;
  if (id) {
    if (!pmcp__id_ok(id))
      return pmcp_store_set_error(c->s, PMCP_EINVAL,
          "%s record: invalid id '%.64s' (A-Z a-z 0-9 . _ -)", c->kind, id);
    pmcp__buf_reset(out);
    pmcp__buf_puts(out, id);
  } else if (pmcp__slugify(out, name)) {
    return pmcp_store_set_error(c->s, PMCP_ENOMEM, "out of memory");
  }
  *existing = by_slug(c, table, out->ptr);
  return 0;
}

static int set_ref(put_ctx *c, const char *kind, const char *slug)
{
  pmcp__buf_reset(&c->ref);
  return pmcp__buf_printf(&c->ref, "%s:%s", kind, slug);
}

/* Checks that a ref names something in the tenant (the base entity for
 * versioned forms such as dataset:NAME@2 or checkpoint:RUN@best). */
static int ref_exists(put_ctx *c, const char *ref)
{
  char kind[32];
  const char *id;
  int rc = pmcp__ref_split(c->s, ref, NULL, kind, &id);
  if (rc)
    return rc;
  if (strcmp(kind, "team-note") == 0)
    return 0;
  char base[160];
  snprintf(base, sizeof base, "%s", id);
  char *at = strchr(base, '@');
  if (at)
    *at = '\0';
  int64_t row;
  if (strcmp(kind, "checkpoint") == 0) {
    if (!at && by_slug(c, "checkpoints", base))
      return 0;
    return pmcp__sq_find(c->s, c->q, c->t, "run", base, &row);
  }
  if (strcmp(kind, "paper") == 0) {
    static const char sql[] = "SELECT 1 FROM papers WHERE tenant_id=?1 AND arxiv_id=?2";
    sqlite3_stmt *st;
    if ((rc = pmcp__sq_prep(c->s, c->q, sql, &st)))
      return rc;
    sqlite3_bind_int64(st, 1, c->t.id);
    sqlite3_bind_text(st, 2, base, -1, SQLITE_TRANSIENT);
    int found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_reset(st);
    return found ? 0 : pmcp_store_set_error(c->s, PMCP_ENOTFOUND, "no paper '%.64s'", base);
  }
  if (!pmcp__kind_table(kind))
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "unknown ref kind '%s' in '%.64s'", kind, ref);
  return pmcp__sq_find(c->s, c->q, c->t, strcmp(kind, "sub-note") == 0 ? "note" : kind, base,
                       &row);
}

static int index_doc(put_ctx *c, const char *kind, const char *title, const char *body)
{
  return pmcp__sq_index(c->s, c->q, c->t, c->ref.ptr, kind, title, body);
}

/* ---- kinds ---- */

static int put_dataset(put_ctx *c)
{
  const char *id, *name, *project, *desc, *uri;
  int registered, rc;
  if ((rc = fstr(c, "id", 0, &id)) || (rc = fstr(c, "name", 1, &name)) ||
      (rc = fstr(c, "project", 0, &project)) || (rc = fstr(c, "description", 0, &desc)) ||
      (rc = fstr(c, "uri", 0, &uri)) || (rc = fbool(c, "registered", 1, &registered)))
    return rc;
  int64_t proj = 0, existing;
  char k[32];
  if (project && (rc = pmcp__sq_resolve(c->s, c->q, c->t, project, "project", k, &proj)))
    return rc;
  pmcp_buf slug = PMCP_BUF_INIT;
  if ((rc = pick_slug(c, "datasets", id, name, &slug, &existing)) == 0) {
    static const char sql[] =
        "INSERT INTO datasets(tenant_id, slug, name, project_id, registered, description, uri,"
        " created) VALUES(?1,?2,?3,?4,?5,?6,?7,?8) ON CONFLICT(tenant_id, slug) DO UPDATE SET"
        " name=excluded.name, project_id=coalesce(excluded.project_id, project_id),"
        " registered=excluded.registered, description=coalesce(excluded.description,"
        " description), uri=coalesce(excluded.uri, uri)";
    sqlite3_stmt *st;
    if ((rc = pmcp__sq_prep(c->s, c->q, sql, &st)) == 0) {
      sqlite3_bind_int64(st, 1, c->t.id);
      sqlite3_bind_text(st, 2, slug.ptr, -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
      if (proj)
        sqlite3_bind_int64(st, 4, proj);
      sqlite3_bind_int(st, 5, registered);
      bind_opt(st, 6, desc);
      bind_opt(st, 7, uri);
      sqlite3_bind_int64(st, 8, pmcp__now_ms());
      rc = run1(c, st, "dataset");
    }
  }
  if (rc == 0 && (rc = set_ref(c, "dataset", slug.ptr)) == 0) {
    pmcp_buf body = PMCP_BUF_INIT;
    pmcp__buf_printf(&body, "%s\n%s", desc ? desc : "", uri ? uri : "");
    rc = index_doc(c, "dataset", name, body.ptr);
    pmcp_buf_dispose(&body);
  }
  pmcp_buf_dispose(&slug);
  return rc;
}

static int put_dataset_version(put_ctx *c)
{
  const char *ds, *version, *uri, *sha, *desc;
  int64_t size = 0, rows = 0;
  int has_size, has_rows, rc;
  if ((rc = fstr(c, "dataset", 1, &ds)) || (rc = fstr(c, "version", 0, &version)) ||
      (rc = fstr(c, "uri", 0, &uri)) || (rc = fstr(c, "sha256", 0, &sha)) ||
      (rc = fstr(c, "description", 0, &desc)) ||
      (rc = fint(c, "size", 0, &has_size, &size)) || (rc = fint(c, "rows", 0, &has_rows, &rows)))
    return rc;
  char k[32];
  int64_t dsid;
  if ((rc = pmcp__sq_resolve(c->s, c->q, c->t, ds, "dataset", k, &dsid)))
    return rc;
  char vbuf[32];
  if (!version) {
    static const char sql[] = "SELECT count(*) + 1 FROM dataset_versions WHERE dataset_id=?1";
    sqlite3_stmt *st;
    if ((rc = pmcp__sq_prep(c->s, c->q, sql, &st)))
      return rc;
    sqlite3_bind_int64(st, 1, dsid);
    sqlite3_step(st);
    snprintf(vbuf, sizeof vbuf, "%lld", (long long)sqlite3_column_int64(st, 0));
    sqlite3_reset(st);
    version = vbuf;
  } else if (!pmcp__id_ok(version)) {
    return pmcp_store_set_error(c->s, PMCP_EINVAL,
        "dataset-version record: invalid version '%.32s'", version);
  }
  static const char sql[] =
      "INSERT INTO dataset_versions(tenant_id, dataset_id, version, uri, sha256, size, rows,"
      " description, created) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)"
      " ON CONFLICT(dataset_id, version) DO UPDATE SET uri=coalesce(excluded.uri, uri),"
      " sha256=coalesce(excluded.sha256, sha256), size=coalesce(excluded.size, size),"
      " rows=coalesce(excluded.rows, rows), description=coalesce(excluded.description, description)";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(c->s, c->q, sql, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, c->t.id);
  sqlite3_bind_int64(st, 2, dsid);
  sqlite3_bind_text(st, 3, version, -1, SQLITE_TRANSIENT);
  bind_opt(st, 4, uri);
  bind_opt(st, 5, sha);
  if (has_size)
    sqlite3_bind_int64(st, 6, size);
  if (has_rows)
    sqlite3_bind_int64(st, 7, rows);
  bind_opt(st, 8, desc);
  sqlite3_bind_int64(st, 9, pmcp__now_ms());
  if ((rc = run1(c, st, "dataset version")))
    return rc;
  const char *slug = strchr(ds, ':') ? strchr(ds, ':') + 1 : ds;
  pmcp__buf_reset(&c->ref);
  return pmcp__buf_printf(&c->ref, "dataset:%s@%s", slug, version);
}

static int put_checkpoint(put_ctx *c)
{
  const char *run, *uri, *metric;
  int64_t step = 0, size = 0;
  int has, has_size, has_value, best, stored, rc;
  double value = 0;
  if ((rc = fstr(c, "run", 1, &run)) || (rc = fint(c, "step", 1, &has, &step)) ||
      (rc = fstr(c, "uri", 0, &uri)) || (rc = fstr(c, "metric", 0, &metric)) ||
      (rc = fint(c, "size", 0, &has_size, &size)) || (rc = fnum(c, "value", &has_value, &value)) ||
      (rc = fbool(c, "best", 0, &best)) || (rc = fbool(c, "stored", uri != NULL, &stored)))
    return rc;
  char k[32];
  int64_t run_id;
  if ((rc = pmcp__sq_resolve(c->s, c->q, c->t, run, "run", k, &run_id)))
    return rc;
  const char *rs = strchr(run, ':') ? strchr(run, ':') + 1 : run;
  pmcp_buf slug = PMCP_BUF_INIT;
  pmcp__buf_printf(&slug, "%s.step%lld", rs, (long long)step);
  sqlite3_stmt *st;
  if (best) {
    /* One best checkpoint per run. */
    static const char sql[] = "UPDATE checkpoints SET best=0 WHERE run_id=?1 AND step<>?2";
    if ((rc = pmcp__sq_prep(c->s, c->q, sql, &st)) == 0) {
      sqlite3_bind_int64(st, 1, run_id);
      sqlite3_bind_int64(st, 2, step);
      rc = run1(c, st, "checkpoint");
    }
  }
  static const char sql[] =
      "INSERT INTO checkpoints(tenant_id, slug, run_id, step, best, stored, uri, size, metric,"
      " value, created) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)"
      " ON CONFLICT(run_id, step) DO UPDATE SET best=excluded.best, stored=excluded.stored,"
      " uri=coalesce(excluded.uri, uri), size=coalesce(excluded.size, size),"
      " metric=coalesce(excluded.metric, metric), value=coalesce(excluded.value, value)";
  if (rc == 0 && (rc = pmcp__sq_prep(c->s, c->q, sql, &st)) == 0) {
    sqlite3_bind_int64(st, 1, c->t.id);
    sqlite3_bind_text(st, 2, slug.ptr, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, run_id);
    sqlite3_bind_int64(st, 4, step);
    sqlite3_bind_int(st, 5, best);
    sqlite3_bind_int(st, 6, stored);
    bind_opt(st, 7, uri);
    if (has_size)
      sqlite3_bind_int64(st, 8, size);
    bind_opt(st, 9, metric);
    if (has_value && isfinite(value))
      sqlite3_bind_double(st, 10, value);
    sqlite3_bind_int64(st, 11, pmcp__now_ms());
    rc = run1(c, st, "checkpoint");
  }
  if (rc == 0) {
    pmcp__buf_reset(&c->ref);
    rc = pmcp__buf_printf(&c->ref, "checkpoint:%s@step%lld", rs, (long long)step);
  }
  pmcp_buf_dispose(&slug);
  return rc;
}

static int put_source(put_ctx *c)
{
  const char *id, *provider, *kind, *uri, *version, *desc;
  int rc;
  if ((rc = fstr(c, "id", 0, &id)) || (rc = fstr(c, "provider", 1, &provider)) ||
      (rc = fstr(c, "kind", 1, &kind)) || (rc = fstr(c, "uri", 1, &uri)) ||
      (rc = fstr(c, "version", 0, &version)) || (rc = fstr(c, "description", 0, &desc)))
    return rc;
  pmcp_buf slug = PMCP_BUF_INIT;
  int64_t existing = 0;
  if (!id) {
    /* The same provider + uri is the same source. */
    static const char sql[] =
        "SELECT slug FROM sources WHERE tenant_id=?1 AND provider=?2 AND uri=?3";
    sqlite3_stmt *st;
    if ((rc = pmcp__sq_prep(c->s, c->q, sql, &st)))
      return rc;
    sqlite3_bind_int64(st, 1, c->t.id);
    sqlite3_bind_text(st, 2, provider, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, uri, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW)
      pmcp__sq_text_col(&slug, st, 0);
    sqlite3_reset(st);
  }
  if (!slug.len) {
    const char *tail = strrchr(uri, '/');
    tail = tail && tail[1] ? tail + 1 : uri;
    pmcp_buf nm = PMCP_BUF_INIT;
    pmcp__buf_printf(&nm, "%s-%s", provider, tail);
    rc = pick_slug(c, "sources", id, nm.ptr, &slug, &existing);
    pmcp_buf_dispose(&nm);
    if (rc == 0 && existing && !id) {
      /* Same slug, different source: make it unique. */
      int64_t ex2;
      pmcp_buf nm2 = PMCP_BUF_INIT;
      pmcp__buf_puts(&nm2, slug.ptr);
      rc = pmcp__sq_new_id(c->s, c->q, c->t, "sources", NULL, nm2.ptr, &slug, &ex2);
      pmcp_buf_dispose(&nm2);
    }
  }
  static const char sql[] =
      "INSERT INTO sources(tenant_id, slug, provider, kind, uri, version, description, created)"
      " VALUES(?1,?2,?3,?4,?5,?6,?7,?8) ON CONFLICT(tenant_id, slug) DO UPDATE SET"
      " provider=excluded.provider, kind=excluded.kind, uri=excluded.uri,"
      " version=coalesce(excluded.version, version),"
      " description=coalesce(excluded.description, description)";
  sqlite3_stmt *st;
  if (rc == 0 && (rc = pmcp__sq_prep(c->s, c->q, sql, &st)) == 0) {
    sqlite3_bind_int64(st, 1, c->t.id);
    sqlite3_bind_text(st, 2, slug.ptr, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, provider, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, kind, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, uri, -1, SQLITE_TRANSIENT);
    bind_opt(st, 6, version);
    bind_opt(st, 7, desc);
    sqlite3_bind_int64(st, 8, pmcp__now_ms());
    rc = run1(c, st, "source");
  }
  if (rc == 0 && (rc = set_ref(c, "source", slug.ptr)) == 0) {
    pmcp_buf body = PMCP_BUF_INIT;
    pmcp__buf_printf(&body, "%s %s %s\n%s", provider, kind, uri, desc ? desc : "");
    rc = index_doc(c, "source", uri, body.ptr);
    pmcp_buf_dispose(&body);
  }
  pmcp_buf_dispose(&slug);
  return rc;
}

static int lineage_edge(put_ctx *c, const char *from, const char *to, const char *relation,
                        const char *steps)
{
  int rc;
  if ((rc = ref_exists(c, from)) || (rc = ref_exists(c, to)))
    return rc;
  if (strcmp(from, to) == 0)
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "lineage record: an edge from %s to itself",
                                from);
  static const char sql[] =
      "INSERT INTO lineage(tenant_id, from_ref, to_ref, relation, steps, created)"
      " VALUES(?1,?2,?3,?4,?5,?6) ON CONFLICT(tenant_id, from_ref, to_ref, relation)"
      " DO UPDATE SET steps=coalesce(excluded.steps, steps)";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(c->s, c->q, sql, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, c->t.id);
  sqlite3_bind_text(st, 2, from, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 3, to, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 4, relation, -1, SQLITE_TRANSIENT);
  bind_opt(st, 5, steps);
  sqlite3_bind_int64(st, 6, pmcp__now_ms());
  if ((rc = run1(c, st, "lineage")))
    return rc;
  pmcp__buf_reset(&c->ref);
  return pmcp__buf_printf(&c->ref, "%s", to);
}

static int put_lineage(put_ctx *c)
{
  const char *from, *to, *relation;
  char *steps = NULL;
  int rc;
  if ((rc = fstr(c, "from", 1, &from)) || (rc = fstr(c, "to", 1, &to)) ||
      (rc = fstr(c, "relation", 0, &relation)) || (rc = fjson(c, "steps", 1, &steps)))
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

static int put_run_use(put_ctx *c)
{
  const char *run, *uses;
  int rc;
  if ((rc = fstr(c, "run", 1, &run)) || (rc = fstr(c, "uses", 1, &uses)))
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

static int put_group(put_ctx *c)
{
  const char *id, *name, *exp, *desc;
  int rc;
  if ((rc = fstr(c, "id", 0, &id)) || (rc = fstr(c, "name", 1, &name)) ||
      (rc = fstr(c, "experiment", 0, &exp)) || (rc = fstr(c, "description", 0, &desc)))
    return rc;
  cJSON *runs = cJSON_GetObjectItemCaseSensitive(c->o, "runs");
  if (runs && !cJSON_IsArray(runs))
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "group record: \"runs\" must be an array");
  char k[32];
  int64_t eid = 0, existing, gid;
  if (exp && (rc = pmcp__sq_resolve(c->s, c->q, c->t, exp, "experiment", k, &eid)))
    return rc;
  pmcp_buf slug = PMCP_BUF_INIT;
  if ((rc = pick_slug(c, "groups", id, name, &slug, &existing)))
    goto out;
  static const char sql[] =
      "INSERT INTO groups(tenant_id, slug, name, experiment_id, description, created)"
      " VALUES(?1,?2,?3,?4,?5,?6) ON CONFLICT(tenant_id, slug) DO UPDATE SET name=excluded.name,"
      " experiment_id=coalesce(excluded.experiment_id, experiment_id),"
      " description=coalesce(excluded.description, description)";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(c->s, c->q, sql, &st)))
    goto out;
  sqlite3_bind_int64(st, 1, c->t.id);
  sqlite3_bind_text(st, 2, slug.ptr, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
  if (eid)
    sqlite3_bind_int64(st, 4, eid);
  bind_opt(st, 5, desc);
  sqlite3_bind_int64(st, 6, pmcp__now_ms());
  if ((rc = run1(c, st, "group")))
    goto out;
  gid = by_slug(c, "groups", slug.ptr);
  cJSON *it;
  cJSON_ArrayForEach(it, runs) {
    int64_t rid;
    if (!cJSON_IsString(it)) {
      rc = pmcp_store_set_error(c->s, PMCP_EINVAL, "group record: \"runs\" holds run ids");
      goto out;
    }
    if ((rc = pmcp__sq_resolve(c->s, c->q, c->t, it->valuestring, "run", k, &rid)))
      goto out;
    static const char sql_m[] =
        "INSERT OR IGNORE INTO group_runs(tenant_id, group_id, run_id) VALUES(?1,?2,?3)";
    if ((rc = pmcp__sq_prep(c->s, c->q, sql_m, &st)))
      goto out;
    sqlite3_bind_int64(st, 1, c->t.id);
    sqlite3_bind_int64(st, 2, gid);
    sqlite3_bind_int64(st, 3, rid);
    if ((rc = run1(c, st, "group member")))
      goto out;
  }
  if ((rc = set_ref(c, "group", slug.ptr)) == 0)
    rc = index_doc(c, "group", name, desc ? desc : "");
out:
  pmcp_buf_dispose(&slug);
  return rc;
}

static int put_trial(put_ctx *c)
{
  const char *id, *run, *name, *status;
  char *params = NULL, *traj = NULL;
  double score = 0;
  int has_score, rc;
  if ((rc = fstr(c, "id", 0, &id)) || (rc = fstr(c, "run", 1, &run)) ||
      (rc = fstr(c, "name", 0, &name)) || (rc = fstr(c, "status", 0, &status)) ||
      (rc = fnum(c, "score", &has_score, &score)))
    return rc;
  if ((rc = fjson(c, "params", 0, &params)) || (rc = fjson(c, "trajectory", 1, &traj)))
    goto out;
  char k[32];
  int64_t rid, existing;
  if ((rc = pmcp__sq_resolve(c->s, c->q, c->t, run, "run", k, &rid)))
    goto out;
  pmcp_buf slug = PMCP_BUF_INIT, nm = PMCP_BUF_INIT;
  const char *rs = strchr(run, ':') ? strchr(run, ':') + 1 : run;
  pmcp__buf_printf(&nm, "%s-%s", rs, name ? name : "trial");
  rc = pick_slug(c, "trials", id, nm.ptr, &slug, &existing);
  pmcp_buf_dispose(&nm);
  static const char sql[] =
      "INSERT INTO trials(tenant_id, slug, run_id, name, params, status, score, trajectory,"
      " created) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9) ON CONFLICT(tenant_id, slug) DO UPDATE SET"
      " name=coalesce(excluded.name, name), params=coalesce(excluded.params, params),"
      " status=coalesce(excluded.status, status), score=coalesce(excluded.score, score),"
      " trajectory=coalesce(excluded.trajectory, trajectory)";
  sqlite3_stmt *st;
  if (rc == 0 && (rc = pmcp__sq_prep(c->s, c->q, sql, &st)) == 0) {
    sqlite3_bind_int64(st, 1, c->t.id);
    sqlite3_bind_text(st, 2, slug.ptr, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, rid);
    bind_opt(st, 4, name);
    bind_opt(st, 5, params);
    bind_opt(st, 6, status);
    if (has_score && isfinite(score))
      sqlite3_bind_double(st, 7, score);
    bind_opt(st, 8, traj);
    sqlite3_bind_int64(st, 9, pmcp__now_ms());
    rc = run1(c, st, "trial");
  }
  if (rc == 0 && (rc = set_ref(c, "trial", slug.ptr)) == 0)
    rc = index_doc(c, "trial", name ? name : slug.ptr, params ? params : "");
  pmcp_buf_dispose(&slug);
out:
  cJSON_free(params);
  cJSON_free(traj);
  return rc;
}

static int put_session(put_ctx *c)
{
  const char *id, *title, *agent;
  int64_t started = 0, ended = 0;
  int has_s, has_e, rc;
  char *transcript = NULL;
  if ((rc = fstr(c, "id", 0, &id)) || (rc = fstr(c, "title", 1, &title)) ||
      (rc = fstr(c, "agent", 0, &agent)) || (rc = fint(c, "started", 0, &has_s, &started)) ||
      (rc = fint(c, "ended", 0, &has_e, &ended)) || (rc = fjson(c, "transcript", 1, &transcript)))
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
    if ((rc = ref_exists(c, it->valuestring)))
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
    rc = pick_slug(c, "sessions", id, NULL, &slug, &existing);
  } else {
    rc = pmcp__sq_new_id(c->s, c->q, c->t, "sessions", NULL, title, &slug, &existing);
  }
  if (rc)
    goto out;
  static const char sql[] =
      "INSERT INTO sessions(tenant_id, slug, title, agent, started, ended, transcript, created)"
      " VALUES(?1,?2,?3,?4,?5,?6,?7,?8) ON CONFLICT(tenant_id, slug) DO UPDATE SET"
      " title=excluded.title, agent=coalesce(excluded.agent, agent),"
      " started=coalesce(excluded.started, started), ended=coalesce(excluded.ended, ended),"
      " transcript=coalesce(excluded.transcript, transcript)";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(c->s, c->q, sql, &st)))
    goto out;
  sqlite3_bind_int64(st, 1, c->t.id);
  sqlite3_bind_text(st, 2, slug.ptr, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 3, title, -1, SQLITE_TRANSIENT);
  bind_opt(st, 4, agent);
  if (has_s)
    sqlite3_bind_int64(st, 5, started);
  if (has_e)
    sqlite3_bind_int64(st, 6, ended);
  bind_opt(st, 7, transcript);
  sqlite3_bind_int64(st, 8, has_s ? started : pmcp__now_ms());
  if ((rc = run1(c, st, "session")))
    goto out;
  sid = by_slug(c, "sessions", slug.ptr);
  cJSON_ArrayForEach(it, on) {
    static const char sql_l[] =
        "INSERT OR IGNORE INTO session_links(tenant_id, session_id, ref) VALUES(?1,?2,?3)";
    if ((rc = pmcp__sq_prep(c->s, c->q, sql_l, &st)))
      goto out;
    sqlite3_bind_int64(st, 1, c->t.id);
    sqlite3_bind_int64(st, 2, sid);
    sqlite3_bind_text(st, 3, it->valuestring, -1, SQLITE_TRANSIENT);
    if ((rc = run1(c, st, "session link")))
      goto out;
  }
  if ((rc = set_ref(c, "session", slug.ptr)) == 0)
    rc = index_doc(c, "session", title, body.ptr ? body.ptr : "");
out:
  cJSON_free(transcript);
  pmcp_buf_dispose(&slug);
  pmcp_buf_dispose(&body);
  return rc;
}

static int put_file(put_ctx *c)
{
  const char *path, *ws, *content, *uri, *mt;
  int rc;
  if ((rc = fstr(c, "path", 1, &path)) || (rc = fstr(c, "workspace", 0, &ws)) ||
      (rc = fstr(c, "content", 0, &content)) || (rc = fstr(c, "uri", 0, &uri)) ||
      (rc = fstr(c, "media_type", 0, &mt)))
    return rc;
  if (!content == !uri)
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "file record needs \"content\" or \"uri\" (one)");
  if (strlen(path) > 512 || path[0] == '/' || strstr(path, ".."))
    return pmcp_store_set_error(c->s, PMCP_EINVAL,
        "file record: \"path\" must be relative, without '..', at most 512 characters");
  char k[32];
  int64_t wid = 0, existing;
  if (ws && (rc = pmcp__sq_resolve(c->s, c->q, c->t, ws, "workspace", k, &wid)))
    return rc;
  pmcp_buf slug = PMCP_BUF_INIT;
  static const char sql_find[] =
      "SELECT slug FROM files WHERE tenant_id=?1 AND workspace_id=?2 AND path=?3";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(c->s, c->q, sql_find, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, c->t.id);
  sqlite3_bind_int64(st, 2, wid);
  sqlite3_bind_text(st, 3, path, -1, SQLITE_TRANSIENT);
  if (sqlite3_step(st) == SQLITE_ROW)
    pmcp__sq_text_col(&slug, st, 0);
  sqlite3_reset(st);
  if (!slug.len) {
    pmcp_buf nm = PMCP_BUF_INIT;
    pmcp__buf_printf(&nm, "%s%s%s", ws ? (strchr(ws, ':') ? strchr(ws, ':') + 1 : ws) : "shared",
                     "-", path);
    rc = pmcp__sq_new_id(c->s, c->q, c->t, "files", NULL, nm.ptr, &slug, &existing);
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
  if (rc == 0 && (rc = pmcp__sq_prep(c->s, c->q, sql, &st)) == 0) {
    sqlite3_bind_int64(st, 1, c->t.id);
    sqlite3_bind_text(st, 2, slug.ptr, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, wid);
    sqlite3_bind_text(st, 4, path, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, mt ? mt : (content ? "text/plain" : "application/octet-stream"), -1,
                      SQLITE_TRANSIENT);
    if (content)
      sqlite3_bind_blob(st, 6, content, (int)strlen(content), SQLITE_TRANSIENT);
    bind_opt(st, 7, uri);
    sqlite3_bind_int64(st, 8, content ? (int64_t)strlen(content) : 0);
    sqlite3_bind_int64(st, 9, pmcp__now_ms());
    if (content)
      sqlite3_bind_text(st, 10, sha, -1, SQLITE_TRANSIENT);
    rc = run1(c, st, "file");
  }
  if (rc == 0 && (rc = set_ref(c, "file", slug.ptr)) == 0)
    rc = index_doc(c, "file", path, content ? content : uri);
  pmcp_buf_dispose(&slug);
  return rc;
}

static int put_paper_link(put_ctx *c)
{
  const char *project, *paper, *note;
  int rc;
  if ((rc = fstr(c, "project", 1, &project)) || (rc = fstr(c, "paper", 1, &paper)) ||
      (rc = fstr(c, "note", 0, &note)))
    return rc;
  char k[32];
  int64_t pid;
  if ((rc = pmcp__sq_resolve(c->s, c->q, c->t, project, "project", k, &pid)))
    return rc;
  const char *pp = strncmp(paper, "paper:", 6) == 0 ? paper + 6 : paper;
  pmcp_buf r = PMCP_BUF_INIT;
  pmcp__buf_printf(&r, "paper:%s", pp);
  rc = ref_exists(c, r.ptr);
  pmcp_buf_dispose(&r);
  if (rc)
    return rc;
  static const char sql[] =
      "INSERT INTO project_papers(tenant_id, project_id, arxiv_id, note) VALUES(?1,?2,?3,?4)"
      " ON CONFLICT(project_id, arxiv_id) DO UPDATE SET note=coalesce(excluded.note, note)";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(c->s, c->q, sql, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, c->t.id);
  sqlite3_bind_int64(st, 2, pid);
  sqlite3_bind_text(st, 3, pp, -1, SQLITE_TRANSIENT);
  bind_opt(st, 4, note);
  if ((rc = run1(c, st, "paper link")))
    return rc;
  pmcp__buf_reset(&c->ref);
  return pmcp__buf_printf(&c->ref, "paper:%s", pp);
}

static int put_experiment_version(put_ctx *c)
{
  const char *exp, *desc, *author;
  char *config = NULL;
  int rc;
  if ((rc = fstr(c, "experiment", 1, &exp)) || (rc = fstr(c, "description", 0, &desc)) ||
      (rc = fstr(c, "author", 0, &author)) || (rc = fjson(c, "config", 0, &config)))
    return rc;
  char k[32];
  int64_t eid, version = 0;
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_resolve(c->s, c->q, c->t, exp, "experiment", k, &eid)))
    goto out;
  /* Idempotent: the same description and config as the latest version
   * adds nothing. */
  static const char sql_last[] =
      "SELECT version, description IS ?2, config IS ?3 FROM experiment_versions"
      " WHERE experiment_id=?1 ORDER BY version DESC LIMIT 1";
  if ((rc = pmcp__sq_prep(c->s, c->q, sql_last, &st)))
    goto out;
  sqlite3_bind_int64(st, 1, eid);
  bind_opt(st, 2, desc);
  bind_opt(st, 3, config);
  int same = 0;
  if (sqlite3_step(st) == SQLITE_ROW) {
    version = sqlite3_column_int64(st, 0);
    same = sqlite3_column_int(st, 1) && sqlite3_column_int(st, 2);
  }
  sqlite3_reset(st);
  if (!same) {
    version++;
    static const char sql[] =
        "INSERT INTO experiment_versions(tenant_id, experiment_id, version, description, config,"
        " author, created) VALUES(?1,?2,?3,?4,?5,?6,?7)";
    if ((rc = pmcp__sq_prep(c->s, c->q, sql, &st)))
      goto out;
    sqlite3_bind_int64(st, 1, c->t.id);
    sqlite3_bind_int64(st, 2, eid);
    sqlite3_bind_int64(st, 3, version);
    bind_opt(st, 4, desc);
    bind_opt(st, 5, config);
    bind_opt(st, 6, author);
    sqlite3_bind_int64(st, 7, pmcp__now_ms());
    if ((rc = run1(c, st, "experiment version")))
      goto out;
    if (config) {
      static const char sql_c[] = "UPDATE experiments SET config=?2 WHERE id=?1";
      if ((rc = pmcp__sq_prep(c->s, c->q, sql_c, &st)))
        goto out;
      sqlite3_bind_int64(st, 1, eid);
      sqlite3_bind_text(st, 2, config, -1, SQLITE_TRANSIENT);
      if ((rc = run1(c, st, "experiment config")))
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

static const struct {
  const char *kind;
  int (*fn)(put_ctx *c);
} put_kinds[] = {
  {"dataset", put_dataset}, {"dataset-version", put_dataset_version},
  {"checkpoint", put_checkpoint}, {"source", put_source}, {"lineage", put_lineage},
  {"run-use", put_run_use}, {"group", put_group}, {"trial", put_trial},
  {"session", put_session}, {"file", put_file}, {"paper-link", put_paper_link},
  {"experiment-version", put_experiment_version},
};

int pmcp__sq_put(pmcp_store *s, void *ctx, pmcp_tenant t, const char *kind,
                 const char *json, size_t len, pmcp_buf *out_ref)
{
  pmcp__sq *q = SQ(ctx);
  int (*fn)(put_ctx *) = NULL;
  for (size_t i = 0; i < sizeof put_kinds / sizeof put_kinds[0]; i++)
    if (strcmp(kind, put_kinds[i].kind) == 0)
      fn = put_kinds[i].fn;
  if (!fn)
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "unknown record kind '%.32s' (dataset, dataset-version, checkpoint, source, lineage,"
        " run-use, group, trial, session, file, paper-link, experiment-version)", kind);
  cJSON *o = cJSON_ParseWithLength(json, len);
  if (!o || !cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return pmcp_store_set_error(s, PMCP_EINVAL, "%s record is not a JSON object", kind);
  }
  put_ctx c = {s, q, t, kind, o, PMCP_BUF_INIT};
  int rc = pmcp__sq_wbegin(s, q);
  if (rc == 0)
    rc = pmcp__sq_wend(s, q, t, fn(&c));
  if (rc == 0 && out_ref) {
    pmcp__buf_reset(out_ref);
    rc = pmcp__buf_puts(out_ref, c.ref.ptr ? c.ref.ptr : "");
  }
  pmcp_buf_dispose(&c.ref);
  cJSON_Delete(o);
  return rc;
}
