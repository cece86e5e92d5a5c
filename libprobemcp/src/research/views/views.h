/* SPDX-License-Identifier: MIT */
/* Entity views: each view of the matrix turns one ref into either an
 * object (card, record, code, ...) or a list (notes, versions, lineage,
 * ...). entity.c runs them for one ref (whole pages, with cursors) or a
 * batch (one item per ref). */
#ifndef PMCP_RESEARCH_VIEWS_VIEWS_H
#define PMCP_RESEARCH_VIEWS_VIEWS_H

#include <cjson/cJSON.h>

#include "research/lists.h"
#include "research/refs.h"
#include "research/research.h"

typedef struct pmcp__vctx {
  pmcp_call *call;
  pmcp__research *rs;
  pmcp__ref ref;
  char ref_text[PMCP__REF_MAX + 1];
  const char *view;
  const cJSON *opts;  /* view_options object or NULL */
  const cJSON *state; /* incoming cursor state for this ref, or NULL */
  int batch;          /* several refs: keep each item small */
  int include_deleted; /* show deleted things (marked) */
  cJSON *rec;         /* the entity's record (fetched once) */

  /* What the view produced: */
  cJSON *obj;              /* an object view's result */
  pmcp__list_req list;     /* a list view's store list ... */
  cJSON *items;            /* ... or an already built list */
  const char *list_name;
  /* A document: text served in fragments when it does not fit. */
  char *doc;               /* malloc'd */
  const char *doc_format;  /* "text_fragment" or "json_fragment" */
  /* An error the view reported: code and message. */
  pmcp_tool_error err_code; /* PMCP_TERR_NONE: no error */
  char err[600];
  /* Storage for list_req strings. */
  char parent[PMCP__REF_MAX + 48];
  char filter[256];
} pmcp__vctx;

/* Runs view @p v->view for @p v->ref. Returns 0 with one of obj / list /
 * items / doc set, or err_code set; negative on memory failure. */
int pmcp__view_run(pmcp__vctx *v);

/* Fetches v->rec if not yet fetched; on failure sets err_code. */
int pmcp__view_record(pmcp__vctx *v);

/* The card of a record (also the batch summary of object views). */
cJSON *pmcp__view_card(const cJSON *rec, pmcp__ref_kind kind);

/* content view (views/content.c): fills v->obj or v->err_code. */
int pmcp__view_content(pmcp__vctx *v);

/* versions view (views/versions.c) and lineage view (views/lineage.c). */
int pmcp__view_versions(pmcp__vctx *v);
int pmcp__view_lineage(pmcp__vctx *v);

/* Helper: sets the error of @p v (printf-style). Returns 0. */
int pmcp__view_fail(pmcp__vctx *v, pmcp_tool_error code, const char *fmt, ...)
    PMCP_PRINTF(3, 4);

#endif
