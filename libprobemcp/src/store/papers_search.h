/* SPDX-License-Identifier: MIT */
/* Internal: the papers index's ranked search (find_papers' local source).
 * One pass over the query's matches keeps the best k after a position
 * (a keyset: score, then row id), so a page costs the same at any depth
 * and pages of one index version neither overlap nor skip. The backend
 * ranks (SQLite: FTS5 bm25 with title 2, abstract 1, authors 0.5;
 * PostgreSQL: ts_rank over the weighted tsvector); papers_search.c holds
 * what both share. */
#ifndef PMCP_STORE_PAPERS_SEARCH_H
#define PMCP_STORE_PAPERS_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "probemcp/store.h"
#include "util/buf.h"

#define PMCP__PAPERS_K_MAX 64     /* hits per call */
#define PMCP__PAPERS_WORDS_MAX 32 /* query words used */
#define PMCP__PAPERS_CATS_MAX 8

/* score: lower is closer (SQLite: bm25(), negative; PostgreSQL: -ts_rank);
 * ties fall to the lower id. */
typedef struct pmcp__paper_hit {
  int64_t id;
  double score;
} pmcp__paper_hit;

typedef struct pmcp__papers_query {
  const char *const *words; /* 1..PMCP__PAPERS_WORDS_MAX, of [A-Za-z0-9] and bytes >= 0x80 */
  size_t n_words;
  const char *const *cats; /* all must apply; "cs" covers "cs.LG" */
  size_t n_cats;
  int has_after; /* only hits ordered after (after_score, after_id) */
  double after_score;
  int64_t after_id;
  size_t k; /* 1..PMCP__PAPERS_K_MAX */
} pmcp__papers_query;

/* What a call found: hits[0..n) best first, the number of matches in the
 * whole index (exact: the pass visits them all), and records, a JSON
 * array of the hits' papers in the same order ({"id", "title", "authors",
 * "categories", "published", "abstract"}). The version tag changes
 * whenever papers are added to the index (SQLite: also when one changes);
 * a cursor checks it. */
typedef struct pmcp__papers_result {
  pmcp__paper_hit hits[PMCP__PAPERS_K_MAX];
  size_t n;
  int64_t total;
  uint64_t version;
  pmcp_buf records;
} pmcp__papers_result;

/* With @p q NULL, only r->version is set. */
typedef int (*pmcp__papers_fn)(pmcp_store *s, void *ctx, pmcp_tenant t,
                               const pmcp__papers_query *q, pmcp__papers_result *r);

/* The papers index's version tag (r->version), cheap: read it before a
 * page to bind the page's cursor. Same errors as below. */
int pmcp__store_papers_version(pmcp_store *s, pmcp_tenant t, pmcp__papers_result *r);
/* Runs @p q on the backend's ranked search (r->records reset first; the
 * caller disposes of it). PMCP_EUNSUPPORTED when the backend has none (a
 * custom one: pmcp_store_search serves it), PMCP_EINVAL for a bad query,
 * or the backend's error, message on the handle. */
int pmcp__store_papers_search(pmcp_store *s, pmcp_tenant t, const pmcp__papers_query *q,
                              pmcp__papers_result *r);

/* Inside the caller's write transaction, a bulk load of papers: begin (1)
 * stops indexing each new paper as it is written, end (0) indexes every
 * paper added since in one statement (FTS5 builds its segments once,
 * about twice as fast) and indexes each one again from then on; a
 * rollback undoes both. Papers may only be added in between, never
 * changed. PMCP_EUNSUPPORTED when the backend indexes as it writes
 * anyway (PostgreSQL's generated tsvector). */
int pmcp__store_papers_bulk(pmcp_store *s, int begin);

/* Every category of @p want is among @p have (space separated). */
int pmcp__papers_cats_match(const char *have, const char *const *want, size_t n);

/* The bounded heap of a pass: offer each match, then take the hits best
 * first. */
typedef struct pmcp__papers_heap {
  const pmcp__papers_query *q;
  pmcp__paper_hit h[PMCP__PAPERS_K_MAX]; /* the worst kept at h[0] */
  size_t n;
  int64_t total;
} pmcp__papers_heap;
void pmcp__papers_heap_init(pmcp__papers_heap *hp, const pmcp__papers_query *q);
/* Counts a match and keeps it when it is after the position and among
 * the best k so far. */
void pmcp__papers_heap_offer(pmcp__papers_heap *hp, int64_t id, double score);
/* Moves the kept hits, best first, into r (hits, n, total). */
void pmcp__papers_heap_take(pmcp__papers_heap *hp, pmcp__papers_result *r);
/* a before b in the ranking */
int pmcp__papers_before(double sa, int64_t ia, double sb, int64_t ib);

#endif
