/* SPDX-License-Identifier: MIT */
/* SQLite backend: the papers index's ranked search (papers_search.h).
 * One pass over FTS5's matches of the query's words (each a quoted term,
 * OR-ed: nothing the caller types is FTS5 syntax), each scored by bm25
 * (title 2, abstract 1, authors 0.5) and offered to a heap of k: the
 * pass counts every match, so the total is exact, and only the k kept
 * rows are read from the papers table. The papers table is joined only
 * when something must be checked on it: categories, or the tenant in a
 * store of several labs. */
#include <stdio.h>
#include <string.h>

#include "store/sq.h"

/* A tag that changes when the index does: FTS5's averages record (the
 * row count and token totals) and the highest paper id. */
static int index_version(pmcp_store *s, pmcp__sq *q, uint64_t *out)
{
  static const char sql[] =
      "SELECT (SELECT block FROM papers_fts_data WHERE id=1), (SELECT max(id) FROM papers)";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, sql, &st);
  if (rc)
    return rc;
  int src = sqlite3_step(st);
  uint64_t h = 1469598103934665603ull;
  if (src == SQLITE_ROW) {
    const unsigned char *b = sqlite3_column_blob(st, 0);
    int n = sqlite3_column_bytes(st, 0);
    for (int i = 0; b && i < n; i++)
      h = (h ^ b[i]) * 1099511628211ull;
    h = (h ^ (uint64_t)sqlite3_column_int64(st, 1)) * 1099511628211ull;
  }
  sqlite3_reset(st);
  if (src != SQLITE_ROW)
    return pmcp__sq_err(s, q, src, "papers search");
  *out = h;
  return 0;
}

int pmcp__sq_papers(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp__papers_query *pq,
                    pmcp__papers_result *r)
{
  pmcp__sq *q = SQ(ctx);
  if (!pq)
    return index_version(s, q, &r->version);
  static const char sql_alone[] =
      "SELECT rowid, bm25(papers_fts, 2.0, 1.0, 0.5) FROM papers_fts WHERE papers_fts MATCH ?1";
  static const char sql_join[] =
      "SELECT p.id, bm25(papers_fts, 2.0, 1.0, 0.5), p.categories FROM papers_fts"
      " CROSS JOIN papers p ON p.id=papers_fts.rowid"
      " WHERE papers_fts MATCH ?1 AND p.tenant_id=?2";
  static const char sql_tenants[] = "SELECT count(*) FROM tenants";
  static const char sql_rec[] =
      "SELECT json_object('id', arxiv_id, 'title', title, 'authors', authors, 'categories',"
      " categories, 'published', published, 'abstract', abstract) FROM papers WHERE id=?1";
  pmcp_buf match = PMCP_BUF_INIT;
  for (size_t i = 0; i < pq->n_words; i++)
    pmcp__buf_printf(&match, "%s\"%s\"", i ? " OR " : "", pq->words[i]);
  if (!match.ptr)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  sqlite3_stmt *st;
  int rc, src;
  int join = pq->n_cats > 0;
  if (!join) {
    if ((rc = pmcp__sq_prep(s, q, sql_tenants, &st)))
      goto out;
    join = sqlite3_step(st) != SQLITE_ROW || sqlite3_column_int64(st, 0) != 1;
    sqlite3_reset(st);
  }
  if ((rc = pmcp__sq_prep(s, q, join ? sql_join : sql_alone, &st)))
    goto out;
  sqlite3_bind_text(st, 1, match.ptr, -1, SQLITE_TRANSIENT);
  if (join)
    sqlite3_bind_int64(st, 2, t.id);
  pmcp__papers_heap hp;
  pmcp__papers_heap_init(&hp, pq);
  while ((src = sqlite3_step(st)) == SQLITE_ROW) {
    if (pq->n_cats &&
        !pmcp__papers_cats_match((const char *)sqlite3_column_text(st, 2), pq->cats, pq->n_cats))
      continue;
    pmcp__papers_heap_offer(&hp, sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1));
  }
  sqlite3_reset(st);
  if (src != SQLITE_DONE) {
    rc = pmcp__sq_err(s, q, src, "papers search");
    goto out;
  }
  pmcp__papers_heap_take(&hp, r);
  if ((rc = pmcp__sq_prep(s, q, sql_rec, &st)))
    goto out;
  pmcp__buf_putc(&r->records, '[');
  for (size_t i = 0; i < r->n; i++) {
    sqlite3_bind_int64(st, 1, r->hits[i].id);
    src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
      if (i)
        pmcp__buf_putc(&r->records, ',');
      pmcp__sq_text_col(&r->records, st, 0);
    }
    sqlite3_reset(st);
    if (src != SQLITE_ROW) {
      /* the index names a row the table does not have */
      rc = src == SQLITE_DONE ? pmcp_store_set_error(s, PMCP_ECORRUPT,
                                                     "the papers index is out of step with "
                                                     "the papers")
                              : pmcp__sq_err(s, q, src, "papers search");
      goto out;
    }
  }
  pmcp__buf_putc(&r->records, ']');
  rc = r->records.ptr ? 0 : pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
out:
  pmcp_buf_dispose(&match);
  return rc;
}

int pmcp__sq_papers_bulk(pmcp_store *s, void *ctx, int begin)
{
  pmcp__sq *q = SQ(ctx);
  sqlite3_stmt *st;
  int rc, src;
  if (begin) {
    if ((rc = pmcp__sq_prep(s, q, "SELECT coalesce(max(id), 0) FROM papers", &st)))
      return rc;
    src = sqlite3_step(st);
    q->papers_bulk_from = src == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (src != SQLITE_ROW)
      return pmcp__sq_err(s, q, src, "papers import");
    src = sqlite3_exec(q->db, "DROP TRIGGER papers_ai; DROP TRIGGER papers_au;", NULL, NULL,
                       NULL);
    return src == SQLITE_OK ? 0 : pmcp__sq_err(s, q, src, "papers import");
  }
  static const char sql[] =
      "INSERT INTO papers_fts(rowid, title, abstract, authors)"
      " SELECT id, title, abstract, authors FROM papers WHERE id > ?1 ORDER BY id";
  if ((rc = pmcp__sq_prep(s, q, sql, &st)))
    return rc;
  sqlite3_bind_int64(st, 1, q->papers_bulk_from);
  src = sqlite3_step(st);
  sqlite3_reset(st);
  if (src != SQLITE_DONE)
    return pmcp__sq_err(s, q, src, "papers import");
  src = sqlite3_exec(q->db, PMCP__SQ_PAPERS_AI PMCP__SQ_PAPERS_AU, NULL, NULL, NULL);
  return src == SQLITE_OK ? 0 : pmcp__sq_err(s, q, src, "papers import");
}
