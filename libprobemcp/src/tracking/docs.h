/* SPDX-License-Identifier: MIT */
/* The documentation the tracking toolset's list_docs / get_doc serve: the
 * pages of docs/agent (how to use the tools), built in at build time by
 * gen_docs.py (a custom_target of this folder's meson.build), so nothing
 * is read from disk at run time. */
#ifndef PMCP_TRACKING_DOCS_H
#define PMCP_TRACKING_DOCS_H

#include <stddef.h>

typedef struct pmcp__trk_doc {
  const char *page;     /* "filters" */
  const char *title;    /* "Filters and sorts" */
  const char *url;      /* "docs/agent/filters.md" */
  const char *markdown; /* UTF-8 */
  size_t len;           /* bytes of markdown */
} pmcp__trk_doc;

extern const pmcp__trk_doc pmcp__trk_docs[];
extern const size_t pmcp__trk_n_docs;

#endif
