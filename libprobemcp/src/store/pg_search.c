/* SPDX-License-Identifier: MIT */
/* PostgreSQL backend: keyword search (full text: tsvector, ts_rank) over
 * the documents the write calls index (runs, experiments, projects, notes,
 * artifacts, datasets, sources, sessions, trials, groups, files) and the
 * papers index. The query is plain words: each becomes one plainto_tsquery
 * term OR-ed with the others, so nothing the caller types is an operator;
 * ranking weighs titles above bodies, and snippets (ts_headline, the
 * costly part) are made only for the rows of the page. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg.h"
#include "store/search.h"
#include "store/ws_scope.h"

int pmcp__pg_search(pmcp_store *s, void *ctx, pmcp_tenant t, const char *query,
                    const char *kinds, const char *after, size_t limit, pmcp_buf *out)
{
  pmcp__pg *q = PG(ctx);
  int rc = pmcp__pg_ready(s, q, t.id);
  if (rc)
    return rc;
  pmcp__search_args a;
  if ((rc = pmcp__search_args_read(s, query, kinds, after, limit, PMCP__SEARCH_LINES, &a)))
    goto out;
  int64_t offset = a.offset;
  static const char sql[] =
      "WITH tq AS (SELECT coalesce((SELECT string_agg(plainto_tsquery('english', w)::text, ' | ')"
      "   FROM unnest(string_to_array($2, E'\\n')) AS w"
      "   WHERE plainto_tsquery('english', w)::text <> ''), '')::tsquery AS q),"
      " hits AS ("
      " SELECT d.ref AS ref, d.kind AS kind, d.title AS title, 0 AS src, d.id AS rid,"
      "  round(ts_rank('{0.1, 0.2, 0.5, 1.0}', d.tsv, tq.q)::numeric, 4)::float8 AS score"
      "  FROM search_docs d, tq WHERE d.tsv @@ tq.q AND d.tenant_id=$1"
      "  AND ($3 OR strpos($4, ' ' || d.kind || ' ') > 0)"
      " UNION ALL"
      " SELECT 'paper:' || p.arxiv_id, 'paper', p.title, 1, p.id,"
      "  round(ts_rank('{0.1, 0.2, 0.5, 1.0}', p.tsv, tq.q)::numeric, 4)::float8"
      "  FROM papers p, tq WHERE p.tsv @@ tq.q AND p.tenant_id=$1 AND $5),"
      " page AS (SELECT *, count(*) OVER () AS total FROM hits"
      "  ORDER BY score DESC, ref LIMIT $6 OFFSET $7)"
      " SELECT json_build_object('ref', x.ref, 'kind', x.kind, 'title', x.title, 'snippet',"
      "  CASE x.src WHEN 0 THEN (SELECT ts_headline('english', left(d.body, 100000), tq.q,"
      "    'StartSel=\"\", StopSel=\"\", MaxWords=16, MinWords=6, ShortWord=2,"
      "     MaxFragments=1, FragmentDelimiter=...') FROM search_docs d WHERE d.id=x.rid)"
      "  ELSE (SELECT ts_headline('english', coalesce(p.abstract, p.title), tq.q,"
      "    'StartSel=\"\", StopSel=\"\", MaxWords=16, MinWords=6, ShortWord=2,"
      "     MaxFragments=1, FragmentDelimiter=...') FROM papers p WHERE p.id=x.rid) END,"
      "  'score', x.score), x.total FROM page x, tq ORDER BY x.score DESC, x.ref";
  pmcp__pg_stmt *st;
  /* A workspace-scoped search keeps only the documents of visible refs
   * (ws_scope.h). */
  if (t.workspace) {
    pmcp_buf pred = PMCP_BUF_INIT;
    char *scoped = pmcp__ws_search_where(&pred) == 0
                       ? pmcp__ws_splice(sql, "d.tenant_id=$1", pred.ptr, t) : NULL;
    pmcp_buf_dispose(&pred);
    if (!scoped) {
      rc = pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
      goto out;
    }
    rc = pmcp__pg_prep_dyn(s, q, scoped, &st);
    free(scoped);
  } else {
    rc = pmcp__pg_prep(s, q, sql, &st);
  }
  if (rc)
    goto out;
  pmcp__pg_bind_int64(st, 1, t.id);
  pmcp__pg_bind_text(st, 2, a.match.ptr);
  pmcp__pg_bind_text(st, 3, a.all ? "true" : "false");
  pmcp__pg_bind_text(st, 4, a.kinds.ptr);
  pmcp__pg_bind_text(st, 5, a.with_papers ? "true" : "false");
  pmcp__pg_bind_int64(st, 6, (int64_t)a.limit);
  pmcp__pg_bind_int64(st, 7, offset);
  pmcp__buf_reset(out);
  pmcp__buf_puts(out, "{\"items\":[");
  size_t n = 0;
  int64_t total = offset;
  int src;
  while ((src = pmcp__pg_step(st)) == PG_ROW) {
    if (n++)
      pmcp__buf_putc(out, ',');
    pmcp__pg_json_col(out, st, 0);
    total = pmcp__pg_int64(st, 1);
  }
  if (src != PG_DONE)
    rc = pmcp__pg_err(s, q, "search");
  if (t.workspace)
    pmcp__pg_finalize(st);
  else
    pmcp__pg_reset(st);
  if (rc)
    goto out;
  if (n == 0 && offset) {
    /* Past the end: the count comes from a window over no rows. */
    total = offset;
  }
  rc = pmcp__search_page_end(out, offset, n, total);
out:
  pmcp__search_args_free(&a);
  return rc;
}
