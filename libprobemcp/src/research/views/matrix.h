/* SPDX-License-Identifier: MIT */
/* The entity view matrix: which views each ref kind has, what
 * each view reads, and which view_options it takes. One table, so card's
 * available_views, the refusal of a view a kind lacks, the refusal of a
 * view_options key a view does not read, and the tool description all
 * agree. */
#ifndef PMCP_RESEARCH_VIEWS_MATRIX_H
#define PMCP_RESEARCH_VIEWS_MATRIX_H

#include <stddef.h>

#include "research/refs.h"

typedef struct pmcp__view_info {
  const char *name;
  const char *reads;          /* one line: what the view shows */
  const char *const *options; /* NULL-terminated view_options keys */
} pmcp__view_info;

/* The view named @p name, or NULL when no kind has it. */
const pmcp__view_info *pmcp__view_find(const char *name);

/* The views of @p kind in matrix order; *n receives the count. */
const char *const *pmcp__views_of(pmcp__ref_kind kind, size_t *n);

/* True when @p kind has view @p view. */
int pmcp__view_allowed(pmcp__ref_kind kind, const char *view);

/* True when view @p view reads view_options key @p key. */
int pmcp__view_option_ok(const pmcp__view_info *v, const char *key);

/* Every view name (for the schema's enum), NULL-terminated. */
const char *const *pmcp__view_names(void);

#endif
