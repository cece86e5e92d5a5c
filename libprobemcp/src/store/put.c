/* SPDX-License-Identifier: MIT */
/* pmcp_store_put() of both backends, records described as JSON. This file
 * holds what every kind shares (field readers that name a mistyped field,
 * slugs, ref checks, the keyword index) and the dispatch; the kinds are in
 * catalog.c (datasets, checkpoints, sources, lineage) and records.c
 * (groups, trials, sessions, files, paper links, experiment versions); env-attribute in env_attr.c.
 * Each kind has an identity, so writing the same record twice changes
 * nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/put.h"
#include "util/json.h"

/* Field readers: absent is NULL / default; a present field of the wrong
 * type is an error naming it. */
int pmcp__put_fstr(put_ctx *c, const char *name, int required, const char **out)
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

int pmcp__put_fnum(put_ctx *c, const char *name, int *present, double *out)
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

int pmcp__put_fint(put_ctx *c, const char *name, int required, int *present, int64_t *out)
{
  double d = 0;
  int rc = pmcp__put_fnum(c, name, present, &d);
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

int pmcp__put_fbool(put_ctx *c, const char *name, int dflt, int *out)
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
int pmcp__put_fjson(put_ctx *c, const char *name, int want_array, char **out)
{
  *out = NULL;
  cJSON *f = cJSON_GetObjectItemCaseSensitive(c->o, name);
  if (!f || cJSON_IsNull(f))
    return 0;
  if (want_array ? !cJSON_IsArray(f) : !cJSON_IsObject(f))
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "%s record: \"%s\" must be a JSON %s",
                                c->kind, name, want_array ? "array" : "object");
  *out = pmcp__cjson_print(f);
  return *out ? 0 : pmcp_store_set_error(c->s, PMCP_ENOMEM, "out of memory");
}


/* Looks up an existing row id by slug; 0 when absent. */
int64_t pmcp__put_by_slug(put_ctx *c, const char *table, const char *slug)
{
  const char *sql = pmcp__sql_slug_query(table);
  pmcp__stmt *st;
  int64_t id = 0;
  if (sql && pmcp__sql_prep(c->s, c->q, sql, &st) == 0) {
    pmcp__st_bind_int64(st, 1, c->t.id);
    pmcp__st_bind_text(st, 2, slug);
    if (pmcp__st_step(st) == PMCP__ROW)
      id = pmcp__st_int64(st, 0);
    pmcp__st_reset(st);
  }
  return id;
}

/* The slug a record gets: its "id" when given, else one made from @p name
 * (reused when a row with that slug exists, so a second put updates). */
int pmcp__put_pick_slug(put_ctx *c, const char *table, const char *id, const char *name,
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
  *existing = pmcp__put_by_slug(c, table, out->ptr);
  return 0;
}

int pmcp__put_set_ref(put_ctx *c, const char *kind, const char *slug)
{
  pmcp__buf_reset(&c->ref);
  return pmcp__buf_printf(&c->ref, "%s:%s", kind, slug);
}

/* Checks that a ref names something in the tenant (the base entity for
 * versioned forms such as dataset:NAME@2 or checkpoint:RUN@best). */
int pmcp__put_ref_exists(put_ctx *c, const char *ref)
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
    if (!at && pmcp__put_by_slug(c, "checkpoints", base))
      return 0;
    return pmcp__sql_find(c->s, c->q, c->t, "run", base, &row);
  }
  if (strcmp(kind, "paper") == 0) {
    static const char sql[] = "SELECT 1 FROM papers WHERE tenant_id=?1 AND arxiv_id=?2";
    pmcp__stmt *st;
    if ((rc = pmcp__sql_prep(c->s, c->q, sql, &st)))
      return rc;
    pmcp__st_bind_int64(st, 1, c->t.id);
    pmcp__st_bind_text(st, 2, base);
    int found = pmcp__st_step(st) == PMCP__ROW;
    pmcp__st_reset(st);
    return found ? 0 : pmcp_store_set_error(c->s, PMCP_ENOTFOUND, "no paper '%.64s'", base);
  }
  if (!pmcp__kind_table(kind))
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "unknown ref kind '%s' in '%.64s'", kind, ref);
  return pmcp__sql_find(c->s, c->q, c->t, strcmp(kind, "sub-note") == 0 ? "note" : kind, base,
                       &row);
}

/* The text of column 0 of @p sql (?1 the tenant, ?2 @p a, ?3 @p b) into
 * @p out; PMCP_ENOTFOUND when there is no row. */
static int canon_row(put_ctx *c, const char *sql, int64_t a, int64_t b, pmcp_buf *out)
{
  pmcp__stmt *st;
  int rc = pmcp__sql_prep(c->s, c->q, sql, &st);
  if (rc)
    return rc;
  pmcp__st_bind_int64(st, 1, c->t.id);
  pmcp__st_bind_int64(st, 2, a);
  pmcp__st_bind_int64(st, 3, b);
  int src = pmcp__st_step(st);
  if (src == PMCP__ROW) {
    pmcp__buf_reset(out);
    rc = pmcp__buf_puts(out, pmcp__st_text(st, 0));
  } else {
    rc = src == PMCP__DONE ? PMCP_ENOTFOUND : pmcp__st_err(c->s, st, "store lookup");
  }
  pmcp__st_reset(st);
  return rc;
}

int pmcp__put_canon_ref(put_ctx *c, const char *ref, pmcp_buf *out)
{
  char kind[32];
  const char *id;
  int rc = pmcp__ref_split(c->s, ref, NULL, kind, &id);
  if (rc)
    return rc;
  char base[160];
  snprintf(base, sizeof base, "%s", id);
  char *at = strchr(base, '@');
  if (at)
    *at++ = '\0';
  const char *table = pmcp__kind_table(kind);
  if (!table || strcmp(kind, "sub-note") == 0 || strcmp(kind, "note") == 0) {
    /* papers, notes, the team note: their ref is their id */
    if ((rc = pmcp__put_ref_exists(c, ref)))
      return rc;
    pmcp__buf_reset(out);
    return pmcp__buf_puts(out, ref);
  }
  int64_t row = 0;
  if (strcmp(kind, "checkpoint") == 0) {
    int64_t cid = !at ? pmcp__put_by_slug(c, "checkpoints", base) : 0;
    static const char by_id[] =
        "SELECT 'checkpoint:' || r.slug || '@step' || c.step FROM checkpoints c"
        " JOIN runs r ON r.id=c.run_id WHERE c.tenant_id=?1 AND c.id=?2 AND ?3=?3";
    if (cid)
      return canon_row(c, by_id, cid, 0, out);
    if ((rc = pmcp__sql_find(c->s, c->q, c->t, "run", base, &row)))
      return rc;
    static const char best[] =
        "SELECT 'checkpoint:' || r.slug || '@step' || c.step FROM checkpoints c"
        " JOIN runs r ON r.id=c.run_id WHERE c.tenant_id=?1 AND c.run_id=?2 AND c.best=1"
        " AND ?3=?3 ORDER BY c.step DESC LIMIT 1";
    static const char latest[] =
        "SELECT 'checkpoint:' || r.slug || '@step' || c.step FROM checkpoints c"
        " JOIN runs r ON r.id=c.run_id WHERE c.tenant_id=?1 AND c.run_id=?2 AND ?3=?3"
        " ORDER BY c.step DESC LIMIT 1";
    static const char step[] =
        "SELECT 'checkpoint:' || r.slug || '@step' || c.step FROM checkpoints c"
        " JOIN runs r ON r.id=c.run_id WHERE c.tenant_id=?1 AND c.run_id=?2 AND c.step=?3";
    const char *sql = NULL;
    int64_t n = 0;
    if (at && strcmp(at, "best") == 0)
      sql = best;
    else if (at && strcmp(at, "latest") == 0)
      sql = latest;
    else if (at && strncmp(at, "step", 4) == 0 && at[4]) {
      char *end;
      n = strtoll(at + 4, &end, 10);
      sql = *end ? NULL : step;
    }
    if (!sql)
      return pmcp_store_set_error(c->s, PMCP_EINVAL,
          "invalid checkpoint selector in '%.64s' (@best, @latest or @stepN)", ref);
    rc = canon_row(c, sql, row, n, out);
    if (rc == PMCP_ENOTFOUND)
      pmcp_store_set_error(c->s, rc, "run '%.64s' has no checkpoint @%.32s", base, at);
    return rc;
  }
  if ((rc = pmcp__sql_find(c->s, c->q, c->t, kind, base, &row)))
    return rc;
  /* literals: a statement's text is its cache key */
  static const struct {
    const char *table, *sql;
  } slugs[] = {
#define SLUG(t) {t, "SELECT slug FROM " t " WHERE tenant_id=?1 AND id=?2 AND ?3=?3"}
    SLUG("workspaces"), SLUG("projects"), SLUG("experiments"), SLUG("runs"),
    SLUG("artifacts"), SLUG("datasets"), SLUG("sources"), SLUG("groups"), SLUG("trials"),
    SLUG("sessions"), SLUG("files"),
#undef SLUG
  };
  const char *sql = NULL;
  for (size_t i = 0; i < sizeof slugs / sizeof slugs[0]; i++)
    if (strcmp(slugs[i].table, table) == 0)
      sql = slugs[i].sql;
  if (!sql)
    return pmcp_store_set_error(c->s, PMCP_EINTERNAL, "no slug of %s", table);
  pmcp_buf slug = PMCP_BUF_INIT;
  if ((rc = canon_row(c, sql, row, 0, &slug))) {
    pmcp_buf_dispose(&slug);
    return rc;
  }
  if (at && strcmp(kind, "dataset") == 0) {
    /* a dataset's version must be one of its versions */
    static const char has_v[] =
        "SELECT 1 FROM dataset_versions WHERE tenant_id=?1 AND dataset_id=?2 AND version=?3";
    pmcp__stmt *st;
    if ((rc = pmcp__sql_prep(c->s, c->q, has_v, &st)) == 0) {
      pmcp__st_bind_int64(st, 1, c->t.id);
      pmcp__st_bind_int64(st, 2, row);
      pmcp__st_bind_text(st, 3, at);
      int src = pmcp__st_step(st);
      rc = src == PMCP__ROW ? 0
           : src == PMCP__DONE ? pmcp_store_set_error(c->s, PMCP_ENOTFOUND,
                                     "dataset '%.64s' has no version '%.64s'", base, at)
                               : pmcp__st_err(c->s, st, "store lookup");
      pmcp__st_reset(st);
    }
    if (rc) {
      pmcp_buf_dispose(&slug);
      return rc;
    }
  }
  if (at && strcmp(kind, "source") == 0) {
    /* a source is at one version: another is not that source */
    pmcp_buf v = PMCP_BUF_INIT;
    rc = canon_row(c, "SELECT coalesce(version, '') FROM sources WHERE tenant_id=?1 AND id=?2"
                      " AND ?3=?3", row, 0, &v);
    if (rc == 0 && strcmp(v.ptr ? v.ptr : "", at) != 0)
      rc = pmcp_store_set_error(c->s, PMCP_ENOTFOUND, "source '%.64s' has no version '%.64s'",
                                base, at);
    pmcp_buf_dispose(&v);
  }
  if (rc == 0) {
    pmcp__buf_reset(out);
    /* a dataset's version is an entity of its own; a source has one */
    int keep = at && strcmp(kind, "dataset") == 0;
    rc = pmcp__buf_printf(out, "%s:%s%s%s", kind, slug.ptr, keep ? "@" : "", keep ? at : "");
  }
  pmcp_buf_dispose(&slug);
  return rc;
}

int pmcp__put_index_doc(put_ctx *c, const char *kind, const char *title, const char *body)
{
  return pmcp__sql_index(c->s, c->q, c->t, c->ref.ptr, kind, title, body);
}

static const struct {
  const char *kind;
  int (*fn)(put_ctx *c);
} put_kinds[] = {
  {"dataset", pmcp__put_dataset}, {"dataset-version", pmcp__put_dataset_version},
  {"checkpoint", pmcp__put_checkpoint}, {"source", pmcp__put_source}, {"lineage", pmcp__put_lineage},
  {"run-use", pmcp__put_run_use}, {"group", pmcp__put_group}, {"trial", pmcp__put_trial},
  {"session", pmcp__put_session}, {"file", pmcp__put_file}, {"paper-link", pmcp__put_paper_link},
  {"experiment-version", pmcp__put_experiment_version}, {"embedding", pmcp__put_embedding},
  {"env-attribute", pmcp__put_env_attribute},
};

int pmcp__sql_put(pmcp_store *s, void *ctx, pmcp_tenant t, const char *kind,
                 const char *json, size_t len, pmcp_buf *out_ref)
{
  pmcp__sql *q = PMCP__SQL(ctx);
  int (*fn)(put_ctx *) = NULL;
  for (size_t i = 0; i < sizeof put_kinds / sizeof put_kinds[0]; i++)
    if (strcmp(kind, put_kinds[i].kind) == 0)
      fn = put_kinds[i].fn;
  if (!fn)
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "unknown record kind '%.32s' (dataset, dataset-version, checkpoint, source, lineage,"
        " run-use, group, trial, session, file, paper-link, experiment-version, embedding,"
        " env-attribute)", kind);
  cJSON *o = cJSON_ParseWithLength(json, len);
  if (!o || !cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return pmcp_store_set_error(s, PMCP_EINVAL, "%s record is not a JSON object", kind);
  }
  put_ctx c = {s, q, t, kind, o, PMCP_BUF_INIT};
  int rc = pmcp__sql_wbegin(s, q, t);
  if (rc == 0)
    rc = pmcp__sql_wend(s, q, t, fn(&c));
  if (rc == 0 && out_ref) {
    pmcp__buf_reset(out_ref);
    rc = pmcp__buf_puts(out_ref, c.ref.ptr ? c.ref.ptr : "");
  }
  pmcp_buf_dispose(&c.ref);
  cJSON_Delete(o);
  return rc;
}
