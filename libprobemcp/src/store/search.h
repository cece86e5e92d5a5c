/* SPDX-License-Identifier: MIT */
/* Internal: what keyword search does the same on both backends (search.c):
 * reading the caller's arguments and closing a page. The ranking itself is
 * the backend's (SQLite: FTS5 and BM25, sq_search.c; PostgreSQL: tsvector
 * and ts_rank, pg_search.c). */
#ifndef PMCP_STORE_SEARCH_H
#define PMCP_STORE_SEARCH_H

#include <stdint.h>

#include "store/store_int.h"
#include "util/buf.h"

typedef struct pmcp__search_args {
  pmcp_buf match;        /* the query's words, as the backend wants them */
  pmcp_buf kinds;        /* " kind kind ... " (" " when all) */
  int all;               /* no kinds given: every kind but papers */
  int with_papers;
  int64_t offset;        /* from the position "after" */
  size_t limit;          /* 1-200 (0 given: 20) */
} pmcp__search_args;

#define PMCP__SEARCH_FTS5 1  /* match: `"w1" OR "w2" ...` (FTS5 terms) */
#define PMCP__SEARCH_LINES 0 /* match: the words, one a line */

/* Reads a search call's arguments into @p a (free it with
 * pmcp__search_args_free, also after an error). The words are letters,
 * digits and any non-ASCII byte (the first 32); everything else separates
 * them, so nothing the caller types is query syntax. PMCP_EINVAL (message
 * set) for no words, an unknown kind or a bad position. */
int pmcp__search_args_read(pmcp_store *s, const char *query, const char *kinds,
                           const char *after, size_t limit, int style, pmcp__search_args *a);
void pmcp__search_args_free(pmcp__search_args *a);
/* Closes a page of @p n items begun at @p offset of @p total:
 * `],"total":N,"next":...}`. */
int pmcp__search_page_end(pmcp_buf *out, int64_t offset, size_t n, int64_t total);
/* The same, @p estimated saying the total is an estimate: the answer then
 * carries "total_estimated":true (next is given while the page is short of
 * @p total). */
int pmcp__search_page_end_est(pmcp_buf *out, int64_t offset, size_t n, int64_t total,
                              int estimated);

#endif
