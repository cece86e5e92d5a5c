/* SPDX-License-Identifier: MIT */
/* Internal: BM25 with document counts the caller gives (sq_search_rank.c).
 * FTS5's bm25() counts every match of every phrase of the query to weigh
 * it, on every call: a word in every document costs a pass over the whole
 * index. pmcp_bm25() is the same formula (k1 1.2, b 0.75, FTS5's IDF and
 * its floor) over counts the caller measured once, exactly for the rare
 * words and from a sample for the common ones, so a top-k pass can score
 * the documents holding a rare word and bound the rest. */
#ifndef PMCP_STORE_SQ_SEARCH_RANK_H
#define PMCP_STORE_SQ_SEARCH_RANK_H

#include <sqlite3.h>
#include <stdint.h>

#include "store/sq.h"

#define PMCP__RANK_WORDS_MAX 33

/* What a statement's pmcp_bm25(search_fts, ?spec, w0, w1, ...) reads,
 * bound with sqlite3_bind_pointer(st, i, spec, PMCP__RANK_SPEC, NULL). The
 * score is summed over the query's words in their order, word i counting
 * the instances of phrase phrase[i] of the MATCH expression (weighted by
 * column): the same sum, in the same order, as bm25() over the query. */
typedef struct pmcp__rank_spec {
  int n_words;
  int phrase[PMCP__RANK_WORDS_MAX];
  double df[PMCP__RANK_WORDS_MAX];  /* documents holding word i */
  /* set on the first row scored */
  int ready;
  int64_t n_rows;                   /* documents in the index */
  double avgdl;
  double idf[PMCP__RANK_WORDS_MAX];
} pmcp__rank_spec;

#define PMCP__RANK_SPEC "pmcp_rank_spec"

/* FTS5's IDF of a word held by @p df of @p n_rows documents. */
double pmcp__rank_idf(int64_t n_rows, double df);
/* The most one word can add to a score: its IDF times k1 + 1. */
double pmcp__rank_bound(double idf);
/* Registers pmcp_bm25 on @p db (its FTS5); 0 or an SQLite code. */
int pmcp__sq_search_rank_setup(sqlite3 *db);

/* sq_search_topk.c: the page at @p offset of a one-lab store's search for
 * @p match (`"w1" OR "w2"`, search.h) into @p out, when a word is common
 * and another rare: ranked by pmcp_bm25, the total estimated. Returns
 * PMCP__TOPK_NONE when the query is not of that shape (the caller ranks it
 * with bm25(), exactly), or 0 / an error code. */
#define PMCP__TOPK_NONE 1
/* sq_search.c: appends the item (ref, kind, title, snippet of @p match,
 * score) of document @p rid, of the papers index when @p paper, to @p out
 * (a comma first after the first: *shown counts them). */
int pmcp__sq_search_item(pmcp_store *s, pmcp__sq *q, int paper, int64_t rid, const char *match,
                         double score, pmcp_buf *out, size_t *shown);
int pmcp__sq_search_topk(pmcp_store *s, pmcp__sq *q, const char *match, int64_t offset,
                         size_t limit, pmcp_buf *out);

#endif
