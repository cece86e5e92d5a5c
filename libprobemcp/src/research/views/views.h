/* SPDX-License-Identifier: MIT */
/* Entity views: each view of the matrix turns one ref into either an
 * object (card, record, code, ...) or a list (notes, versions, lineage,
 * ...). entity.c runs them for one ref (whole pages, with cursors) or a
 * batch (one item per ref). */
#ifndef PMCP_RESEARCH_VIEWS_VIEWS_H
#define PMCP_RESEARCH_VIEWS_VIEWS_H

#include <cjson/cJSON.h>

#include "probemcp/json.h"

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
  pmcp_buf head;           /* an object view's result, written (pmcp_json) */
  int has_head;
  pmcp_buf data;           /* view record: its "data", written; head holds the
                              rest, and data goes before its provenance */
  int has_data;
  pmcp_buf resume;         /* an object view that continues (content): the
                              position state of its next page, pinned to
                              what it read; the next_cursor is minted from it */
  pmcp__list_req list;     /* a list view's store list ... */
  pmcp_buf list_text;      /* ... or a list the view wrote: a JSON array */
  size_t list_n;           /* its items */
  int has_list;
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

/* Runs view @p v->view for @p v->ref. Returns 0 with one of head / data /
 * list / list_text / doc set, or err_code set; negative on memory failure. */
int pmcp__view_run(pmcp__vctx *v);

/* Fetches v->rec if not yet fetched; on failure sets err_code. */
int pmcp__view_record(pmcp__vctx *v);

/* Writes the card of a record (also the batch summary of object views)
 * as one object; @p exact: its numbers at full precision. */
int pmcp__view_card(pmcp_json *j, const cJSON *rec, pmcp__ref_kind kind, int exact);

/* content view (views/content.c): fills v->head (and v->resume), or
 * v->head and v->list_text (grep), or v->err_code. */
int pmcp__view_content(pmcp__vctx *v);

/* versions view (views/versions.c) and lineage view (views/lineage.c). */
int pmcp__view_versions(pmcp__vctx *v);
int pmcp__view_lineage(pmcp__vctx *v);

/* Helper: sets the error of @p v (printf-style). Returns 0. */
int pmcp__view_fail(pmcp__vctx *v, pmcp_tool_error code, const char *fmt, ...)
    PMCP_PRINTF(3, 4);

/* ---- writing (views/out.c) ---------------------------------------------
 * Numbers follow the research tools' rules (pmcp__rs_number), spelled as cJSON printed the
 * rounded double (1234567.8 at six figures is 1234570): integers below
 * 2^53 exact, non-finite values as "NaN", "Infinity", "-Infinity", others
 * at six significant figures, or shortest round-trip when @p exact. */
int pmcp__vw_number(pmcp_json *j, double d, int exact);
/* A stored value; an object that is a record view's (pmcp__vw_exact_view
 * with a ref) turns @p exact on for what it holds. */
int pmcp__vw_value(pmcp_json *j, const cJSON *v, int exact);
/* 1 for the views whose numbers are exact: record, reproduce, inherited. */
int pmcp__vw_exact_view(const char *view);
/* @p s cut to @p max bytes at a character, "..." after a cut (*cut = 1). */
int pmcp__vw_excerpt(pmcp_json *j, const char *s, size_t max, int *cut);
/* Writes into the open object of @p j the members @p keys of @p src that
 * are there and not null (strings cut to @p max_chars, times in
 * milliseconds as ISO 8601 UTC), then "truncated":true when a string was
 * cut. Returns 1 then. */
int pmcp__vw_pick(pmcp_json *j, const cJSON *src, const char *const *keys, size_t max_chars,
                  int exact);
/* Calls @p fn for each member of the object text [obj, obj+len), as
 * pmcp_json wrote it; stops at the first non-zero return. */
typedef int (*pmcp__vw_member_fn)(const char *key, const char *val, size_t len, void *ud);
int pmcp__vw_each(const char *obj, size_t len, pmcp__vw_member_fn fn, void *ud);
/* Copies the members of the object text into the open object of @p j,
 * but those named in @p skip (NULL-terminated, or NULL). */
int pmcp__vw_members(pmcp_json *j, const char *obj, size_t len, const char *const *skip);
/* Moves the text of @p j (done) into @p out and frees @p j. */
int pmcp__vw_take(pmcp_json *j, pmcp_buf *out);
/* A writer holding the open object {"ref":...,"view":... of @p v. */
int pmcp__vw_begin(pmcp__vctx *v, pmcp_json **j);
/* Closes it into v->head. */
int pmcp__vw_end(pmcp__vctx *v, pmcp_json *j);

#endif
