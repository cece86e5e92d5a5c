/* SPDX-License-Identifier: MIT */
/* Internal: the exact page (runfilter.c) for filters on the run row and
 * its tags, read in the page's order instead of through bitmaps of the
 * project's runs (runpage.c), and what the two files share. */
#ifndef PMCP_STORE_RUNPAGE_H
#define PMCP_STORE_RUNPAGE_H

#include <stddef.h>
#include <stdint.h>

#include "store/runsql.h"

/* Matching runs counted past the page's end; beyond, the total is a lower
 * bound (pmcp__rt_page.estimated). */
#define PMCP__RP_COUNT_PAST 1000

/* pmcp__store_run_page()'s answer (inside its read) when every filter
 * condition is one on sys/state, sys/name, sys/id or sys/tags (no any_of)
 * and the sort is none or a series summary pmcp__store_run_page() found
 * exact. @return 0; 1 when the filter is not one of those; store errors. */
int pmcp__rp_page(pmcp_store *s, pmcp__sql *q, int64_t tenant, int64_t project,
                  const pmcp__rt_page_query *rq, pmcp__rt_page *out);

/* runfilter.c: page [offset, offset + limit) of a series sort over the
 * project's live runs that the SQL @p where keeps (" AND ..." over runs
 * r, its texts @p txt bound from ?8), appended to out->ids
 * (room for @p limit). @return 0; store errors. */
int pmcp__rf_series_where(pmcp_store *s, pmcp__sql *q, int64_t tenant, int64_t project,
                          const pmcp__rt_sort *so, const char *where, const char *const *txt,
                          int n_txt, size_t offset, size_t limit, pmcp__rt_page *out);

/* A run in the store's order: newest first (created, then id, descending). */
typedef struct pmcp__rf_run {
  int64_t id, created;
} pmcp__rf_run;
/* runfilter.c: qsort() order of pmcp__rf_run (or of a struct that begins
 * with one), newest first. */
int pmcp__rf_newest_first(const void *a, const void *b);

/* runfilter.c: the column behind a text sys/ path (r.status, r.name,
 * r.slug), or NULL. */
const char *pmcp__rf_run_col(const char *path);
/* runfilter.c: the literal prefix of a pattern "^literal", copied to
 * @p out; 0 when the pattern is anything else. */
int pmcp__rf_literal_prefix(const char *re, char *out, size_t size);
/* runfilter.c: the series column a summary function is listed from. */
const char *pmcp__rf_series_expr(const char *fn);

#endif
