/* The documentation the tracking toolset's list_docs / get_doc serve: the
 * README and every man page as markdown, generated at build time by
 * gen_docs.py (a custom_target of this folder's meson.build), so nothing
 * is read from disk at run time. */
#ifndef PMCP_TRACKING_DOCS_H
#define PMCP_TRACKING_DOCS_H

#include <stddef.h>

typedef struct pmcp__trk_doc {
  const char *page;     /* "README", "probe-mcp-stdio.1" */
  const char *title;    /* "probe-mcp-stdio(1): serve the ..." */
  const char *url;      /* "README.md", "man:probe-mcp-stdio(1)" */
  const char *markdown; /* UTF-8 */
  size_t len;           /* bytes of markdown */
} pmcp__trk_doc;

extern const pmcp__trk_doc pmcp__trk_docs[];
extern const size_t pmcp__trk_n_docs;

#endif
