/* SPDX-License-Identifier: MIT */
/* PostgreSQL backend: the papers index's ranked search (papers_search.h).
 * The query's words become plainto_tsquery terms OR-ed together (nothing
 * the caller types is an operator); the GIN index finds the matches,
 * ts_rank scores them (title above abstract above authors) and the
 * server keeps the best k after the position (a top-N sort), counting
 * every match in the same pass. Only the k rows of the page leave the
 * server. */
#include <stdio.h>
#include <string.h>

#include "store/pg.h"

int pmcp__pg_papers(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp__papers_query *pq,
                    pmcp__papers_result *r)
{
  pmcp__pg *g = PG(ctx);
  int rc = pmcp__pg_ready(s, g, t.id);
  if (rc)
    return rc;
  if (!pq) {
    /* the newest paper: PostgreSQL keeps no cheap tag of a table's
     * content, and imports add papers (they never rewrite one) */
    static const char sql_v[] = "SELECT coalesce(max(id), 0) FROM papers WHERE tenant_id=$1";
    pmcp__pg_stmt *sv;
    if ((rc = pmcp__pg_prep(s, g, sql_v, &sv)))
      return rc;
    pmcp__pg_bind_int64(sv, 1, t.id);
    if (pmcp__pg_step(sv) == PG_ROW)
      r->version = (uint64_t)pmcp__pg_int64(sv, 0) + 1;
    else
      rc = pmcp__pg_err(s, g, "papers search");
    pmcp__pg_reset(sv);
    return rc;
  }
  /* categories: every wanted one ($3, one a line) is a category of the
   * paper or the prefix of one before a dot */
  static const char sql[] =
      "WITH tq AS (SELECT coalesce((SELECT string_agg(plainto_tsquery('english', w)::text,"
      "   ' | ') FROM unnest(string_to_array($2, E'\\n')) AS w"
      "   WHERE plainto_tsquery('english', w)::text <> ''), '')::tsquery AS q),"
      " hits AS (SELECT p.id AS id,"
      "  (-ts_rank('{0.1, 0.2, 0.5, 1.0}', p.tsv, tq.q))::float8 AS score,"
      "  count(*) OVER () AS total FROM papers p, tq"
      "  WHERE p.tsv @@ tq.q AND p.tenant_id=$1 AND ($3 = '' OR NOT EXISTS ("
      "   SELECT 1 FROM unnest(string_to_array($3, E'\\n')) AS w WHERE NOT EXISTS ("
      "    SELECT 1 FROM unnest(string_to_array(coalesce(p.categories, ''), ' ')) AS c"
      "    WHERE c = w OR left(c, length(w) + 1) = w || '.'))))"
      " SELECT h.id, h.score, h.total, json_build_object('id', p.arxiv_id, 'title', p.title,"
      "  'authors', p.authors, 'categories', p.categories, 'published', p.published,"
      "  'abstract', p.abstract)"
      " FROM (SELECT * FROM hits WHERE NOT $4::boolean OR score > $5"
      "  OR (score = $5 AND id > $6) ORDER BY score, id LIMIT $7) h"
      " JOIN papers p ON p.id=h.id ORDER BY h.score, h.id";
  static const char sql_count[] =
      "SELECT count(*) FROM papers p,"
      " (SELECT coalesce((SELECT string_agg(plainto_tsquery('english', w)::text, ' | ')"
      "   FROM unnest(string_to_array($2, E'\\n')) AS w"
      "   WHERE plainto_tsquery('english', w)::text <> ''), '')::tsquery AS q) tq"
      " WHERE p.tsv @@ tq.q AND p.tenant_id=$1 AND ($3 = '' OR NOT EXISTS ("
      "  SELECT 1 FROM unnest(string_to_array($3, E'\\n')) AS w WHERE NOT EXISTS ("
      "   SELECT 1 FROM unnest(string_to_array(coalesce(p.categories, ''), ' ')) AS c"
      "   WHERE c = w OR left(c, length(w) + 1) = w || '.')))";
  pmcp_buf words = PMCP_BUF_INIT, cats = PMCP_BUF_INIT;
  for (size_t i = 0; i < pq->n_words; i++)
    pmcp__buf_printf(&words, "%s%s", i ? "\n" : "", pq->words[i]);
  pmcp__buf_puts(&cats, "");
  for (size_t i = 0; i < pq->n_cats; i++)
    pmcp__buf_printf(&cats, "%s%s", i ? "\n" : "", pq->cats[i]);
  if (!words.ptr || !cats.ptr) {
    rc = pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
    goto out;
  }
  pmcp__pg_stmt *st;
  if ((rc = pmcp__pg_prep(s, g, sql, &st)))
    goto out;
  pmcp__pg_bind_int64(st, 1, t.id);
  pmcp__pg_bind_text(st, 2, words.ptr);
  pmcp__pg_bind_text(st, 3, cats.ptr);
  pmcp__pg_bind_text(st, 4, pq->has_after ? "true" : "false");
  pmcp__pg_bind_double(st, 5, pq->has_after ? pq->after_score : 0);
  pmcp__pg_bind_int64(st, 6, pq->has_after ? pq->after_id : 0);
  pmcp__pg_bind_int64(st, 7, (int64_t)pq->k);
  pmcp__buf_putc(&r->records, '[');
  int src;
  while ((src = pmcp__pg_step(st)) == PG_ROW && r->n < pq->k) {
    pmcp__paper_hit *h = &r->hits[r->n];
    h->id = pmcp__pg_int64(st, 0);
    h->score = pmcp__pg_double(st, 1);
    r->total = pmcp__pg_int64(st, 2);
    if (r->n++)
      pmcp__buf_putc(&r->records, ',');
    pmcp__pg_json_col(&r->records, st, 3);
  }
  if (src != PG_DONE && src != PG_ROW)
    rc = pmcp__pg_err(s, g, "papers search");
  pmcp__pg_reset(st);
  if (rc)
    goto out;
  pmcp__buf_putc(&r->records, ']');
  if (r->n == 0) {
    /* no row to carry the count (nothing matched, or past the end) */
    if ((rc = pmcp__pg_prep(s, g, sql_count, &st)))
      goto out;
    pmcp__pg_bind_int64(st, 1, t.id);
    pmcp__pg_bind_text(st, 2, words.ptr);
    pmcp__pg_bind_text(st, 3, cats.ptr);
    if ((src = pmcp__pg_step(st)) == PG_ROW) {
      r->total = pmcp__pg_int64(st, 0);
    } else {
      rc = pmcp__pg_err(s, g, "papers search");
    }
    pmcp__pg_reset(st);
    if (rc)
      goto out;
  }
  rc = r->records.ptr ? 0 : pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
out:
  pmcp_buf_dispose(&words);
  pmcp_buf_dispose(&cats);
  return rc;
}
