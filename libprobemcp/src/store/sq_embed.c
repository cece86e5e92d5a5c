/* SQLite backend: embeddings of the search documents for semantic search.
 * The write path computes them (`probe embed` against an OpenAI-compatible
 * endpoint) and stores them here; the research tools compare a query's
 * vector with them (cosine similarity, exhaustive: a lab's documents
 * number in the thousands). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "store/sq.h"

static int model_ok(const char *m)
{
  size_t n = m ? strlen(m) : 0;
  if (n == 0 || n > 128)
    return 0;
  for (const char *p = m; *p; p++)
    if ((unsigned char)*p < 0x21 || *p == 0x7f)
      return 0;
  return 1;
}

int pmcp__sq_embed_todo(pmcp_store *s, void *ctx, pmcp_tenant t, const char *model,
                        size_t limit, pmcp_buf *out)
{
  pmcp__sq *q = SQ(ctx);
  if (!model_ok(model))
    return pmcp_store_set_error(s, PMCP_EINVAL, "invalid embedding model name");
  if (limit == 0 || limit > 1000)
    limit = 100;
  /* Documents with no vector for the model, or whose text changed since. */
  static const char sql[] =
      "SELECT d.ref, d.kind, substr(f.title || char(10) || f.body, 1, 8000) FROM search_docs d"
      " JOIN search_fts f ON f.rowid=d.id LEFT JOIN embeddings e ON e.tenant_id=d.tenant_id"
      " AND e.model=?2 AND e.ref=d.ref WHERE d.tenant_id=?1 ORDER BY d.id";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, sql, &st);
  if (rc)
    return rc;
  static const char sql_sha[] =
      "SELECT text_sha FROM embeddings WHERE tenant_id=?1 AND model=?2 AND ref=?3";
  sqlite3_stmt *sh;
  if ((rc = pmcp__sq_prep(s, q, sql_sha, &sh)))
    return rc;
  sqlite3_bind_int64(st, 1, t.id);
  sqlite3_bind_text(st, 2, model, -1, SQLITE_TRANSIENT);
  cJSON *root = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(root, "items");
  size_t n = 0;
  int src;
  while (n < limit && (src = sqlite3_step(st)) == SQLITE_ROW) {
    const char *ref = (const char *)sqlite3_column_text(st, 0);
    const char *text = (const char *)sqlite3_column_text(st, 2);
    char sha[65];
    pmcp__sha256_hex(text ? text : "", text ? strlen(text) : 0, sha);
    sqlite3_reset(sh);
    sqlite3_bind_int64(sh, 1, t.id);
    sqlite3_bind_text(sh, 2, model, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(sh, 3, ref, -1, SQLITE_TRANSIENT);
    int same = sqlite3_step(sh) == SQLITE_ROW &&
               strcmp((const char *)sqlite3_column_text(sh, 0), sha) == 0;
    sqlite3_reset(sh);
    if (same)
      continue;
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "ref", ref);
    cJSON_AddStringToObject(it, "kind", (const char *)sqlite3_column_text(st, 1));
    cJSON_AddStringToObject(it, "text", text ? text : "");
    cJSON_AddStringToObject(it, "sha256", sha);
    cJSON_AddItemToArray(items, it);
    n++;
  }
  sqlite3_reset(st);
  char *txt = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (!txt)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  pmcp__buf_reset(out);
  rc = pmcp__buf_puts(out, txt);
  cJSON_free(txt);
  return rc;
}

int pmcp__sq_embed_put(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                       const char *model, const float *vec, size_t dim, const char *text_sha)
{
  pmcp__sq *q = SQ(ctx);
  if (!model_ok(model))
    return pmcp_store_set_error(s, PMCP_EINVAL, "invalid embedding model name");
  if (dim == 0 || dim > 16384)
    return pmcp_store_set_error(s, PMCP_EINVAL, "an embedding has 1-16384 dimensions");
  for (size_t i = 0; i < dim; i++)
    if (!isfinite(vec[i]))
      return pmcp_store_set_error(s, PMCP_EINVAL, "embedding value %zu is not finite", i);
  if (!text_sha || strlen(text_sha) != 64)
    return pmcp_store_set_error(s, PMCP_EINVAL, "text_sha must be the text's SHA-256 (hex)");
  int rc = pmcp__sq_wbegin(s, q);
  if (rc)
    return rc;
  static const char sql_doc[] = "SELECT 1 FROM search_docs WHERE tenant_id=?1 AND ref=?2";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(s, q, sql_doc, &st)) == 0) {
    sqlite3_bind_int64(st, 1, t.id);
    sqlite3_bind_text(st, 2, ref, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) != SQLITE_ROW)
      rc = pmcp_store_set_error(s, PMCP_ENOTFOUND, "no searchable document '%.64s'", ref);
    sqlite3_reset(st);
  }
  static const char sql[] =
      "INSERT INTO embeddings(tenant_id, ref, model, dim, vec, text_sha, created)"
      " VALUES(?1,?2,?3,?4,?5,?6,?7) ON CONFLICT(tenant_id, model, ref) DO UPDATE SET"
      " dim=excluded.dim, vec=excluded.vec, text_sha=excluded.text_sha, created=excluded.created";
  if (rc == 0 && (rc = pmcp__sq_prep(s, q, sql, &st)) == 0) {
    sqlite3_bind_int64(st, 1, t.id);
    sqlite3_bind_text(st, 2, ref, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, model, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 4, (int64_t)dim);
    sqlite3_bind_blob(st, 5, vec, (int)(dim * sizeof *vec), SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 6, text_sha, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 7, pmcp__now_ms());
    int src = sqlite3_step(st);
    sqlite3_reset(st);
    if (src != SQLITE_DONE)
      rc = pmcp__sq_err(s, q, src, "store embedding");
  }
  return pmcp__sq_wend(s, q, t, rc);
}

typedef struct hit {
  double score;
  char *ref, *kind, *title;
} hit;

static int hit_cmp(const void *a, const void *b)
{
  const hit *x = a, *y = b;
  if (x->score != y->score)
    return x->score < y->score ? 1 : -1;
  return strcmp(x->ref, y->ref);
}

int pmcp__sq_embed_search(pmcp_store *s, void *ctx, pmcp_tenant t, const char *model,
                          const float *vec, size_t dim, const char *kinds, size_t limit,
                          pmcp_buf *out)
{
  pmcp__sq *q = SQ(ctx);
  if (!model_ok(model))
    return pmcp_store_set_error(s, PMCP_EINVAL, "invalid embedding model name");
  if (dim == 0 || dim > 16384)
    return pmcp_store_set_error(s, PMCP_EINVAL, "an embedding has 1-16384 dimensions");
  if (limit == 0 || limit > 200)
    limit = 20;
  double qn = 0;
  for (size_t i = 0; i < dim; i++)
    qn += (double)vec[i] * vec[i];
  if (!(qn > 0) || !isfinite(qn))
    return pmcp_store_set_error(s, PMCP_EINVAL, "the query vector is zero or not finite");
  qn = sqrt(qn);
  pmcp_buf kl = PMCP_BUF_INIT;
  pmcp__buf_printf(&kl, " %s ", kinds ? kinds : "");
  static const char sql[] =
      "SELECT e.ref, d.kind, f.title, e.vec FROM embeddings e JOIN search_docs d"
      " ON d.tenant_id=e.tenant_id AND d.ref=e.ref JOIN search_fts f ON f.rowid=d.id"
      " WHERE e.tenant_id=?1 AND e.model=?2 AND e.dim=?3"
      " AND (?4 OR instr(?5, ' ' || d.kind || ' ') > 0)";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, sql, &st);
  if (rc) {
    pmcp_buf_dispose(&kl);
    return rc;
  }
  sqlite3_bind_int64(st, 1, t.id);
  sqlite3_bind_text(st, 2, model, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 3, (int64_t)dim);
  sqlite3_bind_int(st, 4, !kinds || !*kinds);
  sqlite3_bind_text(st, 5, kl.ptr, -1, SQLITE_TRANSIENT);
  hit *hits = NULL;
  size_t n = 0, cap = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const float *v = sqlite3_column_blob(st, 3);
    if ((size_t)sqlite3_column_bytes(st, 3) != dim * sizeof *v)
      continue;
    double dot = 0, vn = 0;
    for (size_t i = 0; i < dim; i++) {
      float x;
      memcpy(&x, (const char *)v + i * sizeof x, sizeof x);
      dot += (double)x * vec[i];
      vn += (double)x * x;
    }
    if (!(vn > 0))
      continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      hit *nh = realloc(hits, cap * sizeof *nh);
      if (!nh)
        break;
      hits = nh;
    }
    hits[n].score = dot / (qn * sqrt(vn));
    hits[n].ref = strdup((const char *)sqlite3_column_text(st, 0));
    hits[n].kind = strdup((const char *)sqlite3_column_text(st, 1));
    hits[n].title = strdup((const char *)sqlite3_column_text(st, 2));
    n++;
  }
  sqlite3_reset(st);
  pmcp_buf_dispose(&kl);
  if (n)
    qsort(hits, n, sizeof *hits, hit_cmp);
  cJSON *root = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(root, "items");
  for (size_t i = 0; i < n && i < limit; i++) {
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "ref", hits[i].ref ? hits[i].ref : "");
    cJSON_AddStringToObject(it, "kind", hits[i].kind ? hits[i].kind : "");
    cJSON_AddStringToObject(it, "title", hits[i].title ? hits[i].title : "");
    cJSON_AddNumberToObject(it, "score", round(hits[i].score * 1e4) / 1e4);
    cJSON_AddItemToArray(items, it);
  }
  cJSON_AddNumberToObject(root, "total", (double)n);
  for (size_t i = 0; i < n; i++) {
    free(hits[i].ref);
    free(hits[i].kind);
    free(hits[i].title);
  }
  free(hits);
  char *txt = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (!txt)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  pmcp__buf_reset(out);
  rc = pmcp__buf_puts(out, txt);
  cJSON_free(txt);
  return rc;
}
