/* SQLite backend: keyword search (FTS5, BM25) over the documents the write
 * calls index (runs, experiments, projects, notes, artifacts, datasets,
 * sources, sessions, trials, groups, files) and the papers index. The
 * query is plain words: each becomes a quoted FTS5 term, so no query
 * syntax reaches FTS5 and nothing the caller types can be an operator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sq.h"

static const char *const search_kinds[] = {
  "run", "experiment", "project", "workspace", "note", "sub-note", "artifact", "dataset",
  "source", "session", "trial", "group", "file", "paper", NULL,
};

/* Builds `"w1" OR "w2" ...` from the words of @p query (letters, digits,
 * and any non-ASCII byte; everything else separates words). */
static int match_expr(const char *query, pmcp_buf *out)
{
  pmcp__buf_reset(out);
  const unsigned char *p = (const unsigned char *)query;
  int n = 0;
  while (*p) {
    while (*p && !(*p >= 0x80 || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
                   (*p >= 'A' && *p <= 'Z')))
      p++;
    const unsigned char *w = p;
    while (*p && (*p >= 0x80 || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
                  (*p >= 'A' && *p <= 'Z')))
      p++;
    if (p > w) {
      if (n++ >= 32)
        break;
      if (n > 1)
        pmcp__buf_puts(out, " OR ");
      pmcp__buf_putc(out, '"');
      pmcp__buf_append(out, w, (size_t)(p - w));
      pmcp__buf_putc(out, '"');
    }
  }
  return n;
}

int pmcp__sq_search(pmcp_store *s, void *ctx, pmcp_tenant t, const char *query,
                    const char *kinds, const char *after, size_t limit, pmcp_buf *out)
{
  pmcp__sq *q = SQ(ctx);
  pmcp_buf m = PMCP_BUF_INIT, kl = PMCP_BUF_INIT;
  int rc = 0;
  if (match_expr(query, &m) == 0) {
    pmcp_buf_dispose(&m);
    return pmcp_store_set_error(s, PMCP_EINVAL, "the search query has no words");
  }
  int with_papers = 0, all = 1;
  pmcp__buf_putc(&kl, ' ');
  if (kinds && *kinds) {
    all = 0;
    const char *p = kinds;
    while (*p) {
      size_t n = strcspn(p, " ,");
      if (n) {
        int ok = 0;
        for (int i = 0; search_kinds[i]; i++)
          if (strlen(search_kinds[i]) == n && strncmp(search_kinds[i], p, n) == 0)
            ok = 1;
        if (!ok) {
          rc = pmcp_store_set_error(s, PMCP_EINVAL, "cannot search kind '%.*s'", (int)(n > 32 ? 32 : n), p);
          goto out;
        }
        if (n == 5 && strncmp(p, "paper", 5) == 0)
          with_papers = 1;
        pmcp__buf_append(&kl, p, n);
        pmcp__buf_putc(&kl, ' ');
      }
      p += n;
      while (*p == ' ' || *p == ',')
        p++;
    }
  }
  int64_t offset = 0;
  if (after && *after) {
    char *end;
    long long v = strtoll(after, &end, 10);
    if (*end || v < 0 || end == after) {
      rc = pmcp_store_set_error(s, PMCP_EINVAL, "invalid search position '%.32s'", after);
      goto out;
    }
    offset = v;
  }
  if (limit == 0)
    limit = 20;
  if (limit > 200)
    limit = 200;
  static const char sql[] =
      /* Rank and count every match, but build snippets (the costly
       * part) only for the rows of the page. */
      "SELECT json_object('ref', x.ref, 'kind', x.kind, 'title', x.title, 'snippet',"
      "  CASE x.src WHEN 0 THEN (SELECT snippet(search_fts, 1, '', '', '...', 16) FROM search_fts"
      "   WHERE search_fts MATCH ?2 AND search_fts.rowid=x.rid)"
      "  ELSE (SELECT snippet(papers_fts, 1, '', '', '...', 16) FROM papers_fts"
      "   WHERE papers_fts MATCH ?2 AND papers_fts.rowid=x.rid) END, 'score', x.score),"
      " x.total FROM ("
      " SELECT ref, kind, title, src, rid, score, count(*) OVER () AS total FROM ("
      " SELECT d.ref AS ref, d.kind AS kind, search_fts.title AS title, 0 AS src,"
      "  search_fts.rowid AS rid, round(-bm25(search_fts, 2.0, 1.0), 4)"
      "  AS score FROM search_fts CROSS JOIN search_docs d ON d.id=search_fts.rowid"
      "  WHERE search_fts MATCH ?2 AND d.tenant_id=?1 AND (?3 OR instr(?4, ' ' || d.kind || ' ') > 0)"
      " UNION ALL"
      " SELECT 'paper:' || p.arxiv_id, 'paper', p.title, 1, papers_fts.rowid,"
      "  round(-bm25(papers_fts, 2.0, 1.0, 0.5), 4) FROM papers_fts CROSS JOIN papers p"
      "  ON p.id=papers_fts.rowid WHERE papers_fts MATCH ?2 AND p.tenant_id=?1 AND ?5)"
      " ORDER BY score DESC, ref LIMIT ?6 OFFSET ?7) x ORDER BY x.score DESC, x.ref";
  sqlite3_stmt *st;
  if ((rc = pmcp__sq_prep(s, q, sql, &st)))
    goto out;
  sqlite3_bind_int64(st, 1, t.id);
  sqlite3_bind_text(st, 2, m.ptr, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(st, 3, all);
  sqlite3_bind_text(st, 4, kl.ptr, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(st, 5, with_papers);
  sqlite3_bind_int64(st, 6, (int64_t)limit);
  sqlite3_bind_int64(st, 7, offset);
  pmcp__buf_reset(out);
  pmcp__buf_puts(out, "{\"items\":[");
  size_t n = 0;
  int64_t total = offset;
  int src;
  while ((src = sqlite3_step(st)) == SQLITE_ROW) {
    if (n++)
      pmcp__buf_putc(out, ',');
    pmcp__sq_text_col(out, st, 0);
    total = sqlite3_column_int64(st, 1);
  }
  sqlite3_reset(st);
  if (src != SQLITE_DONE) {
    rc = pmcp__sq_err(s, q, src, "search");
    goto out;
  }
  if (n == 0 && offset) {
    /* Past the end: the count comes from a window over no rows. */
    total = offset;
  }
  if (offset + (int64_t)n < total)
    pmcp__buf_printf(out, "],\"total\":%lld,\"next\":\"%lld\"}", (long long)total,
                     (long long)(offset + (int64_t)n));
  else
    pmcp__buf_printf(out, "],\"total\":%lld,\"next\":null}", (long long)total);
out:
  pmcp_buf_dispose(&m);
  pmcp_buf_dispose(&kl);
  return rc;
}
