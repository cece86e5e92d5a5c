/* SPDX-License-Identifier: MIT */
/* SQLite backend: the top-k pass of a keyword search of a one-lab store
 * (sq_search_rank.h). A query of `"w1" OR "w2"` where one word is in a
 * few documents and another in thousands ranked every match with bm25()
 * and counted them all: a name like trial-042 in a lab of 10^5 runs was a
 * second a call. Here:
 *  1. each word's documents are counted up to RARE_CAP; a word past it is
 *     common and its count is estimated from a sample of its index spread
 *     over the row ids (deterministic: the same data, the same count);
 *  2. the documents holding a rare word are scored (pmcp_bm25, every word
 *     of the query counted, common ones too) and the page's end kept;
 *  3. a document holding only common words scores below the sum of their
 *     bounds (IDF times k1 + 1); when the page's last score is above it,
 *     that is the page. Otherwise (few rare matches, or a page far down)
 *     every match is scored with the same counts, so pages agree.
 * The total is then an estimate (the largest word's count, at least the
 * page's end) and says so. */
#include <stdlib.h>
#include <string.h>

#include "store/search.h"
#include "store/sq_search_rank.h"

/* A word in more documents than this is common: estimated, not counted,
 * and the documents holding only such words are bounded, not scored. */
#define RARE_CAP 1000
/* The sample of a common word: this many stretches of the row ids, at
 * most SAMPLE_READ of its documents read from the start of each. */
#define SAMPLE_STRETCHES 8
#define SAMPLE_READ 64

typedef struct qword {
  const char *p; /* inside the match text, without its quotes */
  size_t len;
  int uniq;      /* index of its first occurrence's distinct word */
} qword;

/* The words of a match text `"w1" OR "w2" ...` (search.h: words hold no
 * quote). */
static int split_words(const char *match, qword *w, int max)
{
  int n = 0;
  const char *p = match;
  while ((p = strchr(p, '"')) && n < max) {
    const char *e = strchr(p + 1, '"');
    if (!e)
      break;
    w[n].p = p + 1;
    w[n].len = (size_t)(e - p - 1);
    w[n].uniq = n;
    for (int j = 0; j < n; j++)
      if (w[j].len == w[n].len && memcmp(w[j].p, w[n].p, w[n].len) == 0) {
        w[n].uniq = w[j].uniq;
        break;
      }
    n++;
    p = e + 1;
  }
  return n;
}

static int phrase_of(pmcp_buf *b, const qword *w)
{
  pmcp__buf_reset(b);
  pmcp__buf_putc(b, '"');
  pmcp__buf_append(b, w->p, w->len);
  pmcp__buf_putc(b, '"');
  return b->ptr ? 0 : PMCP_ENOMEM;
}

/* Documents holding @p phrase: counted up to RARE_CAP + 1, estimated
 * beyond (*common set). */
static int word_count(pmcp_store *s, pmcp__sq *q, const char *phrase, double *df, int *common)
{
  static const char sql_count[] =
      "SELECT count(*) FROM (SELECT 1 FROM search_fts WHERE search_fts MATCH ?1 LIMIT ?2)";
  /* apart: min and max in one SELECT scan the table */
  static const char sql_span[] =
      "SELECT (SELECT min(id) FROM search_docs), (SELECT max(id) FROM search_docs)";
  static const char sql_read[] =
      "SELECT count(*), max(r) FROM (SELECT rowid AS r FROM search_fts"
      " WHERE search_fts MATCH ?1 AND rowid >= ?2 AND rowid <= ?3 LIMIT ?4)";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(s, q, sql_count, &st);
  if (rc)
    return rc;
  sqlite3_bind_text(st, 1, phrase, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(st, 2, RARE_CAP + 1);
  int src = sqlite3_step(st);
  int64_t n = src == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_reset(st);
  if (src != SQLITE_ROW)
    return pmcp__sq_err(s, q, src, "search");
  *df = (double)n;
  *common = n > RARE_CAP;
  if (!*common)
    return 0;
  if ((rc = pmcp__sq_prep(s, q, sql_span, &st)))
    return rc;
  src = sqlite3_step(st);
  int64_t lo = src == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  int64_t hi = src == SQLITE_ROW ? sqlite3_column_int64(st, 1) : 0;
  sqlite3_reset(st);
  if (src != SQLITE_ROW)
    return pmcp__sq_err(s, q, src, "search");
  if ((rc = pmcp__sq_prep(s, q, sql_read, &st)))
    return rc;
  double est = 0;
  int64_t width = (hi - lo) / SAMPLE_STRETCHES + 1;
  for (int64_t a = lo; a <= hi; a += width) {
    int64_t z = a + width - 1 < hi ? a + width - 1 : hi;
    sqlite3_bind_text(st, 1, phrase, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, a);
    sqlite3_bind_int64(st, 3, z);
    sqlite3_bind_int(st, 4, SAMPLE_READ);
    src = sqlite3_step(st);
    int64_t got = src == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    int64_t last = src == SQLITE_ROW ? sqlite3_column_int64(st, 1) : a;
    sqlite3_reset(st);
    if (src != SQLITE_ROW)
      return pmcp__sq_err(s, q, src, "search");
    /* a full read: its density over the stretch; a short one is exact */
    est += got < SAMPLE_READ ? (double)got
                             : (double)got * (double)(z - a + 1) / (double)(last - a + 1);
  }
  est = (double)(int64_t)(est + 0.5);
  *df = est > RARE_CAP + 1 ? est : RARE_CAP + 1;
  return 0;
}

/* Reads up to @p k rows (row id, score) of @p st. */
static int read_ranked(pmcp_store *s, pmcp__sq *q, sqlite3_stmt *st, size_t k, int64_t *rid,
                       double *score, size_t *n)
{
  int src;
  *n = 0;
  while (*n < k && (src = sqlite3_step(st)) == SQLITE_ROW) {
    rid[*n] = sqlite3_column_int64(st, 0);
    score[*n] = sqlite3_column_double(st, 1);
    (*n)++;
  }
  if (*n < k && src != SQLITE_DONE) {
    sqlite3_reset(st);
    return pmcp__sq_err(s, q, src, "search");
  }
  sqlite3_reset(st);
  return 0;
}

int pmcp__sq_search_topk(pmcp_store *s, pmcp__sq *q, const char *match, int64_t offset,
                         size_t limit, pmcp_buf *out)
{
  qword w[PMCP__RANK_WORDS_MAX];
  if (!q->rank_fn)
    return PMCP__TOPK_NONE;
  int n_words = split_words(match, w, PMCP__RANK_WORDS_MAX);
  if (n_words < 2)
    return PMCP__TOPK_NONE; /* one word: nothing to bound it by */
  pmcp__rank_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.n_words = n_words;
  int common[PMCP__RANK_WORDS_MAX] = {0}, n_common = 0, n_rare = 0;
  double df_max = 0;
  pmcp_buf ph = PMCP_BUF_INIT, expr = PMCP_BUF_INIT;
  int64_t *rid = NULL;
  double *score = NULL;
  int rc = 0;
  for (int i = 0; i < n_words; i++) {
    if (w[i].uniq != i) {
      spec.df[i] = spec.df[w[i].uniq];
      common[i] = common[w[i].uniq];
      continue;
    }
    if ((rc = phrase_of(&ph, &w[i])) || (rc = word_count(s, q, ph.ptr, &spec.df[i], &common[i])))
      goto out;
    if (spec.df[i] > df_max)
      df_max = spec.df[i];
    if (common[i])
      n_common++;
    else
      n_rare++;
  }
  if (!n_common || !n_rare) {
    rc = PMCP__TOPK_NONE; /* every count is exact and small, or none is */
    goto out;
  }
  /* The candidates: documents holding a rare word, every word's phrase
   * in the expression so the score counts it: (R) AND (C OR R). Phrases
   * are numbered in the order they are written. */
  int phrase[PMCP__RANK_WORDS_MAX], next = 0;
  for (int pass = 0; pass < 3; pass++) {
    /* pass 0: the rare words; 1: the common ones; 2: the rare ones again */
    pmcp__buf_puts(&expr, pass == 0 ? "(" : pass == 1 ? ") AND (" : "");
    for (int i = 0; i < n_words; i++) {
      if (w[i].uniq != i || common[i] != (pass == 1))
        continue;
      if (pass == 2 || next > (pass == 1 ? n_rare : 0))
        pmcp__buf_puts(&expr, " OR ");
      if (pass < 2)
        phrase[i] = next;
      next++;
      pmcp__buf_putc(&expr, '"');
      pmcp__buf_append(&expr, w[i].p, w[i].len);
      pmcp__buf_putc(&expr, '"');
    }
  }
  pmcp__buf_putc(&expr, ')');
  if (!expr.ptr) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  for (int i = 0; i < n_words; i++)
    spec.phrase[i] = phrase[w[i].uniq];
  static const char sql_rank[] =
      "SELECT rowid, pmcp_bm25(search_fts, ?2, 2.0, 1.0) AS sc FROM search_fts"
      " WHERE search_fts MATCH ?1 ORDER BY sc DESC, rowid LIMIT ?3 OFFSET ?4";
  size_t k = (size_t)offset + limit;
  sqlite3_stmt *st;
  size_t n = 0;
  int topk = 0;
  if (offset <= RARE_CAP - (int64_t)limit) {
    rid = malloc(k * sizeof *rid);
    score = malloc(k * sizeof *score);
    if (!rid || !score) {
      rc = PMCP_ENOMEM;
      goto out;
    }
    if ((rc = pmcp__sq_prep(s, q, sql_rank, &st)))
      goto out;
    sqlite3_bind_text(st, 1, expr.ptr, -1, SQLITE_TRANSIENT);
    sqlite3_bind_pointer(st, 2, &spec, PMCP__RANK_SPEC, NULL);
    sqlite3_bind_int64(st, 3, (int64_t)k);
    sqlite3_bind_int64(st, 4, 0);
    if ((rc = read_ranked(s, q, st, k, rid, score, &n)))
      goto out;
    double bound = 0;
    for (int i = 0; i < n_words; i++)
      if (common[i])
        bound += pmcp__rank_bound(spec.idf[i]);
    /* no document outside the candidates scores above bound: the page is
     * theirs when its last score is above it (a tie could fall either way) */
    topk = n == k && spec.ready && score[k - 1] > bound;
  }
  if (!topk) {
    /* every match ranked, with the same counts: the full query's phrases
     * are its words, repeats included */
    for (int i = 0; i < n_words; i++)
      spec.phrase[i] = i;
    spec.ready = 0;
    free(rid);
    free(score);
    rid = malloc((limit + 1) * sizeof *rid);
    score = malloc((limit + 1) * sizeof *score);
    if (!rid || !score) {
      rc = PMCP_ENOMEM;
      goto out;
    }
    if ((rc = pmcp__sq_prep(s, q, sql_rank, &st)))
      goto out;
    sqlite3_bind_text(st, 1, match, -1, SQLITE_TRANSIENT);
    sqlite3_bind_pointer(st, 2, &spec, PMCP__RANK_SPEC, NULL);
    sqlite3_bind_int64(st, 3, (int64_t)limit + 1);
    sqlite3_bind_int64(st, 4, offset);
    if ((rc = read_ranked(s, q, st, limit + 1, rid, score, &n)))
      goto out;
  }
  /* the top-k pass reads no further than the page's end, and its common
   * word holds more than RARE_CAP documents: there are more */
  size_t first = topk ? (size_t)offset : 0;
  size_t shown_n = topk ? limit : n > limit ? limit : n;
  int more = topk || n > limit;
  pmcp__buf_reset(out);
  pmcp__buf_puts(out, "{\"items\":[");
  size_t shown = 0;
  for (size_t j = 0; j < shown_n; j++)
    if ((rc = pmcp__sq_search_item(s, q, 0, rid[first + j], match, score[first + j], out,
                                   &shown)))
      goto out;
  /* The end of the matches is reached: the total is what the pages held
   * (the common word's estimate may be above it, and a total past the
   * last page would hand out a next position that shows nothing, again
   * and again). Before that the estimate stands, at least past the page. */
  int64_t end = offset + (int64_t)shown_n + (more ? 1 : 0);
  int64_t total = !more ? end : (int64_t)df_max > end ? (int64_t)df_max : end;
  rc = pmcp__search_page_end_est(out, offset, shown_n, total, 1);
out:
  free(rid);
  free(score);
  pmcp_buf_dispose(&ph);
  pmcp_buf_dispose(&expr);
  return rc;
}
