/* SPDX-License-Identifier: MIT */
/* SQLite backend: keyword search (FTS5, BM25) over the documents the write
 * calls index (runs, experiments, projects, notes, artifacts, datasets,
 * sources, sessions, trials, groups, files) and the papers index. The
 * query is plain words: each becomes a quoted FTS5 term, so no query
 * syntax reaches FTS5 and nothing the caller types can be an operator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/search.h"
#include "store/sq.h"
#include "store/sq_search_rank.h"
#include "store/ws_scope.h"

/* The page at @p offset of every document of a store holding one lab. The
 * order is FTS5's ORDER BY rank: deterministic for the same data, so pages
 * of one store version neither overlap nor skip. */
static int search_one_lab(pmcp_store *s, pmcp__sq *q, const char *match, int64_t offset,
                          size_t limit, pmcp_buf *out)
{
  static const char sql_rank[] =
      "SELECT rowid, -rank, title, snippet(search_fts, 1, '', '', '...', 16) FROM search_fts"
      " WHERE search_fts MATCH ?1 AND rank MATCH 'bm25(2.0, 1.0)' ORDER BY rank"
      " LIMIT ?2 OFFSET ?3";
  static const char sql_item[] =
      "SELECT json_object('ref', d.ref, 'kind', d.kind, 'title', ?2, 'snippet', ?3,"
      " 'score', round(?4, 4)) FROM search_docs d WHERE d.id=?1";
  static const char sql_count[] = "SELECT count(*) FROM search_fts WHERE search_fts MATCH ?1";
  sqlite3_stmt *st, *it;
  int rc = pmcp__sq_prep(s, q, sql_rank, &st);
  if (rc)
    return rc;
  if ((rc = pmcp__sq_prep(s, q, sql_item, &it)))
    return rc;
  sqlite3_bind_text(st, 1, match, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 2, (int64_t)limit);
  sqlite3_bind_int64(st, 3, offset);
  pmcp__buf_reset(out);
  pmcp__buf_puts(out, "{\"items\":[");
  size_t n = 0, shown = 0;
  int src;
  while ((src = sqlite3_step(st)) == SQLITE_ROW) {
    n++;
    sqlite3_bind_int64(it, 1, sqlite3_column_int64(st, 0));
    sqlite3_bind_value(it, 2, sqlite3_column_value(st, 2));
    sqlite3_bind_value(it, 3, sqlite3_column_value(st, 3));
    sqlite3_bind_double(it, 4, sqlite3_column_double(st, 1));
    int isrc = sqlite3_step(it);
    if (isrc == SQLITE_ROW) {
      if (shown++)
        pmcp__buf_putc(out, ',');
      pmcp__sq_text_col(out, it, 0);
    }
    sqlite3_reset(it);
    if (isrc != SQLITE_ROW && isrc != SQLITE_DONE) {
      src = isrc;
      break;
    }
  }
  sqlite3_reset(st);
  if (src != SQLITE_DONE)
    return pmcp__sq_err(s, q, src, "search");
  int64_t total = offset + (int64_t)n;
  if (n == limit || (n == 0 && offset > 0)) {
    if ((rc = pmcp__sq_prep(s, q, sql_count, &st)))
      return rc;
    sqlite3_bind_text(st, 1, match, -1, SQLITE_TRANSIENT);
    src = sqlite3_step(st);
    if (src == SQLITE_ROW)
      total = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    if (src != SQLITE_ROW)
      return pmcp__sq_err(s, q, src, "search");
    if (n == 0 && offset > total)
      total = offset; /* past the end */
  }
  return pmcp__search_page_end(out, offset, n, total);
}

/* Appends the item of document @p rid (papers when @p paper) scored
 * @p score to @p out, a comma before it after the first (*shown). */
int pmcp__sq_search_item(pmcp_store *s, pmcp__sq *q, int paper, int64_t rid, const char *match,
                         double score, pmcp_buf *out, size_t *shown)
{
  static const char sql_doc[] =
      "SELECT json_object('ref', d.ref, 'kind', d.kind, 'title', f.title, 'snippet',"
      " (SELECT snippet(search_fts, 1, '', '', '...', 16) FROM search_fts"
      "  WHERE search_fts MATCH ?2 AND search_fts.rowid=?1), 'score', round(?3, 4))"
      " FROM search_docs d JOIN search_fts f ON f.rowid=d.id WHERE d.id=?1";
  static const char sql_paper[] =
      "SELECT json_object('ref', 'paper:' || p.arxiv_id, 'kind', 'paper', 'title', p.title,"
      " 'snippet', (SELECT snippet(papers_fts, 1, '', '', '...', 16) FROM papers_fts"
      "  WHERE papers_fts MATCH ?2 AND papers_fts.rowid=?1), 'score', round(?3, 4))"
      " FROM papers p WHERE p.id=?1";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, paper ? sql_paper : sql_doc, &st);
  if (rc)
    return rc;
  sqlite3_bind_int64(st, 1, rid);
  sqlite3_bind_text(st, 2, match, -1, SQLITE_TRANSIENT);
  sqlite3_bind_double(st, 3, score);
  int src = sqlite3_step(st);
  if (src == SQLITE_ROW) {
    if ((*shown)++)
      pmcp__buf_putc(out, ',');
    pmcp__sq_text_col(out, st, 0);
  }
  sqlite3_reset(st);
  if (src != SQLITE_ROW && src != SQLITE_DONE)
    return pmcp__sq_err(s, q, src, "search");
  return 0;
}

/* The parameters the rank and count statements share (?1-?5). */
static void bind_common(sqlite3_stmt *st, pmcp_tenant t, const pmcp__search_args *a)
{
  sqlite3_bind_int64(st, 1, t.id);
  sqlite3_bind_text(st, 2, a->match.ptr, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(st, 3, a->all);
  sqlite3_bind_text(st, 4, a->kinds.ptr, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(st, 5, a->with_papers);
}

int pmcp__sq_search(pmcp_store *s, void *ctx, pmcp_tenant t, const char *query,
                    const char *kinds, const char *after, size_t limit, pmcp_buf *out)
{
  pmcp__sq *q = SQ(ctx);
  pmcp__search_args a;
  char *scoped_rank = NULL, *scoped_count = NULL;
  int rc = pmcp__search_args_read(s, query, kinds, after, limit, PMCP__SEARCH_FTS5, &a);
  if (rc)
    goto out;
  int64_t offset = a.offset;
  limit = a.limit;
  /* Three steps, so the costly parts run on few rows:
   *  1. rank: every match's BM25 score with its tenant and kind checked,
   *     narrow rows (source, row id, score) sorted, one page kept; ties
   *     fall to the row id, so pages never overlap or skip;
   *  2. count: only when the page is full (otherwise it is the count);
   *  3. the page's items (ref, title, snippet), one row at a time. */
  static const char sql_rank[] =
      "SELECT src, rid, score FROM ("
      " SELECT 0 AS src, d.id AS rid, -bm25(search_fts, 2.0, 1.0) AS score"
      "  FROM search_fts CROSS JOIN search_docs d ON d.id=search_fts.rowid"
      "  WHERE search_fts MATCH ?2 AND d.tenant_id=?1"
      "  AND (?3 OR instr(?4, ' ' || d.kind || ' ') > 0)"
      " UNION ALL"
      " SELECT 1, p.id, -bm25(papers_fts, 2.0, 1.0, 0.5) FROM papers_fts CROSS JOIN papers p"
      "  ON p.id=papers_fts.rowid WHERE ?5 AND papers_fts MATCH ?2 AND p.tenant_id=?1)"
      " ORDER BY score DESC, src, rid LIMIT ?6 OFFSET ?7";
  static const char sql_count[] =
      "SELECT (SELECT count(*) FROM search_fts CROSS JOIN search_docs d"
      "  ON d.id=search_fts.rowid WHERE search_fts MATCH ?2 AND d.tenant_id=?1"
      "  AND (?3 OR instr(?4, ' ' || d.kind || ' ') > 0)) +"
      " (SELECT count(*) FROM papers_fts CROSS JOIN papers p ON p.id=papers_fts.rowid"
      "  WHERE ?5 AND papers_fts MATCH ?2 AND p.tenant_id=?1)";
  sqlite3_stmt *st;
  int src;
  /* A store of one lab searching all its kinds needs no join to tell its
   * documents apart: FTS5 ranks alone (its own ORDER BY rank) and builds
   * snippets for the page's rows only. */
  static const char sql_tenants[] = "SELECT count(*) FROM tenants";
  int single = 0;
  /* A workspace-scoped search keeps only the documents of visible refs
   * (ws_scope.h); its statements differ per workspace. */
  if (t.workspace) {
    pmcp_buf pred = PMCP_BUF_INIT;
    if (pmcp__ws_search_where(&pred) == 0) {
      scoped_rank = pmcp__ws_splice(sql_rank, "d.tenant_id=?1", pred.ptr, t);
      scoped_count = pmcp__ws_splice(sql_count, "d.tenant_id=?1", pred.ptr, t);
    }
    pmcp_buf_dispose(&pred);
    if (!scoped_rank || !scoped_count) {
      rc = pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
      goto out;
    }
  }
  if (a.all && !a.with_papers && !t.workspace) {
    if ((rc = pmcp__sq_prep(s, q, sql_tenants, &st)))
      goto out;
    single = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) == 1;
    sqlite3_reset(st);
  }
  if (single) {
    rc = pmcp__sq_search_topk(s, q, a.match.ptr, offset, limit, out);
    if (rc == PMCP__TOPK_NONE)
      rc = search_one_lab(s, q, a.match.ptr, offset, limit, out);
    goto out;
  }
  enum { PAGE_MAX = 200 };
  int64_t page_src[PAGE_MAX], page_rid[PAGE_MAX];
  double page_score[PAGE_MAX];
  size_t n = 0;
  if ((rc = scoped_rank ? pmcp__sq_prep_text(s, q, scoped_rank, &st)
                        : pmcp__sq_prep(s, q, sql_rank, &st)))
    goto out;
  bind_common(st, t, &a);
  sqlite3_bind_int64(st, 6, (int64_t)limit);
  sqlite3_bind_int64(st, 7, offset);
  while ((src = sqlite3_step(st)) == SQLITE_ROW && n < PAGE_MAX) {
    page_src[n] = sqlite3_column_int64(st, 0);
    page_rid[n] = sqlite3_column_int64(st, 1);
    page_score[n] = sqlite3_column_double(st, 2);
    n++;
  }
  sqlite3_reset(st);
  if (src != SQLITE_DONE && src != SQLITE_ROW) {
    rc = pmcp__sq_err(s, q, src, "search");
    goto out;
  }
  int64_t total = offset + (int64_t)n;
  if (n == limit || (n == 0 && offset > 0)) {
    if ((rc = scoped_count ? pmcp__sq_prep_text(s, q, scoped_count, &st)
                           : pmcp__sq_prep(s, q, sql_count, &st)))
      goto out;
    bind_common(st, t, &a);
    src = sqlite3_step(st);
    if (src == SQLITE_ROW)
      total = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    if (src != SQLITE_ROW) {
      rc = pmcp__sq_err(s, q, src, "search");
      goto out;
    }
    if (n == 0)
      total = offset > total ? offset : total; /* past the end */
  }
  pmcp__buf_reset(out);
  pmcp__buf_puts(out, "{\"items\":[");
  size_t shown = 0;
  for (size_t i = 0; i < n; i++)
    if ((rc = pmcp__sq_search_item(s, q, page_src[i] != 0, page_rid[i], a.match.ptr,
                                   page_score[i], out, &shown)))
      goto out;
  rc = pmcp__search_page_end(out, offset, n, total);
out:
  free(scoped_rank);
  free(scoped_count);
  pmcp__search_args_free(&a);
  return rc;
}
