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
#include "store/ws_scope.h"

static const char *const search_kinds[] = {
  "run", "experiment", "project", "workspace", "note", "sub-note", "artifact", "dataset",
  "source", "session", "trial", "group", "file", "paper", NULL,
};

/* The words of @p query (letters, digits and any non-ASCII byte;
 * everything else separates words) joined by newlines: SQL turns each into
 * plainto_tsquery('english', word) and ORs them. */
static int match_words(const char *query, pmcp_buf *out)
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
        pmcp__buf_putc(out, '\n');
      pmcp__buf_append(out, w, (size_t)(p - w));
    }
  }
  return n;
}

int pmcp__pg_search(pmcp_store *s, void *ctx, pmcp_tenant t, const char *query,
                    const char *kinds, const char *after, size_t limit, pmcp_buf *out)
{
  pmcp__pg *q = PG(ctx);
  pmcp_buf m = PMCP_BUF_INIT, kl = PMCP_BUF_INIT;
  int rc = pmcp__pg_ready(s, q, t.id);
  if (rc)
    return rc;
  if (match_words(query, &m) == 0) {
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
  pmcp__pg_bind_text(st, 2, m.ptr);
  pmcp__pg_bind_text(st, 3, all ? "true" : "false");
  pmcp__pg_bind_text(st, 4, kl.ptr);
  pmcp__pg_bind_text(st, 5, with_papers ? "true" : "false");
  pmcp__pg_bind_int64(st, 6, (int64_t)limit);
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
