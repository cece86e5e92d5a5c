/* SPDX-License-Identifier: MIT */
/* Lists read from the store in windows (see lists.c). */
#ifndef PMCP_RESEARCH_LISTS_H
#define PMCP_RESEARCH_LISTS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "probemcp/json.h"
#include "research/research.h"
#include "util/buf.h"

typedef struct pmcp__list_req {
  const char *list;   /* the key the items go under */
  const char *kind;   /* store kind */
  const char *parent; /* ref or NULL */
  const char *query;
  const char *filter; /* JSON object text or NULL */
  int include_deleted;
  const char *const *keys;
  size_t limit;
  size_t excerpt; /* max chars of strings */
  const char *anchor; /* the cursor's anchor (pmcp__state_anchor) or NULL */
} pmcp__list_req;

/* A fetched window: items [skip, skip+limit) of the store page at after. */
typedef struct pmcp__window {
  cJSON *page;      /* the store's answer */
  cJSON *items;     /* picked copies of the window's items */
  char *after;      /* position the store page started at (or NULL) */
  size_t skip;      /* items of the store page before the window */
  size_t page_n;    /* items in the store page */
  const char *next; /* the store's next position (in page), or NULL */
  double total;
  int total_estimated; /* total is a lower bound (the store stopped counting) */
  const char *list;
  const char *parent;
  const char *anchor_in; /* the anchor the window was read at, or NULL */
  /* pmcp__fetch_text(): the store's answer kept as text (page and items
   * NULL), each item of the store page a span of it */
  pmcp_buf text;
  const char **span;
  size_t *span_len;
  char *next_buf;
} pmcp__window;


void pmcp__window_free(pmcp__window *w);
/* pmcp__window_state() of the window (a pmcp__window *) as a tree, or
 * NULL at the end (after @p placed items). */
cJSON *pmcp__window_next(size_t placed, void *ud);
/* Fetches the window at (@p after, @p skip). Error text in @p err. */
int pmcp__fetch(pmcp__research *rs, const pmcp__list_req *q,
                const char *after, size_t skip, pmcp__window *w, char *err,
                size_t errlen);
/* pmcp__fetch() with the store page kept as text: no cJSON tree is made;
 * pmcp__window_members() writes an item, pmcp__window_state() a position. */
int pmcp__fetch_text(pmcp__research *rs, const pmcp__list_req *q,
                     const char *after, size_t skip, pmcp__window *w, char *err,
                     size_t errlen);
/* Items of a text window (those after its skip). */
size_t pmcp__window_count(const pmcp__window *w);
/* The span of member @p key of item @p i of text window @p w: 1, or 0
 * when absent. */
int pmcp__window_member(const pmcp__window *w, size_t i, const char *key, const char **v,
                        size_t *vl);
/* The text of the JSON string literal [v, v + vl) in *s, *n: the literal's
 * own bytes when it has no escape, else decoded into @p tmp; 0 when it is
 * not a string. */
int pmcp__json_str_of(const char *v, size_t vl, pmcp_buf *tmp, const char **s, size_t *n);
/* The string member @p key of the object text [o, o + ol) (JSON the store
 * or the writer made) as a C string in @p buf: "" when absent or not a
 * string, cut to @p size; pmcp__js() of text. */
const char *pmcp__json_member_str(const char *o, size_t ol, const char *key, char *buf,
                                  size_t size);
/* The ref of item @p i of text window @p w (as pmcp__rs_ref), in @p buf. */
const char *pmcp__window_ref(const pmcp__window *w, size_t i, char *buf, size_t size);
/* Writes what a list shows of item @p i of text window @p w (@p q's keys,
 * the same members in the same order as pmcp__fetch() picks) as members of
 * the object open in @p j, leaving out the members named in @p drop (NULL
 * or NULL-terminated). */
int pmcp__window_members(pmcp_json *j, const pmcp__window *w, size_t i,
                         const pmcp__list_req *q, const char *const *drop);
/* Writes [@p s, + @p n) as a string (up to a NUL in it: text after one
 * was never shown), cut to @p max bytes (0: whole) at a character
 * boundary with "..." after the cut. Returns 1 when cut; *shown: the
 * bytes written. */
int pmcp__rs_excerpt_to(pmcp_json *j, const char *s, size_t n, size_t max, size_t *shown);
/* Writes into @p j (reset first) the position state after @p placed items
 * of window @p w: a text window, or one over a store page the tool parsed
 * (page set, its "items" the page's items). Returns 1 when written, 0 when
 * nothing remains after them, or -1 (out of memory). */
int pmcp__window_state(pmcp_json *j, const pmcp__window *w, size_t placed);
/* Reads a cursor state's position and skip (NULL state: the start). */
void pmcp__state_pos(const cJSON *st, const char **after, size_t *skip);
/* A list cursor is bound to its listing, not to the whole store: its state
 * names the ref of the last item shown ("k", the anchor). The next page is
 * read only if that item is still just before the position (nothing was
 * added, removed or reordered before it); whatever else the store gained,
 * a point logged, a run elsewhere, items after the position, does not stop
 * it. NULL when the state has none. */
const char *pmcp__state_anchor(const cJSON *st);
/* Where an anchored read starts: one item before (@p after, @p skip), the
 * position rewritten into @p before when it is a store page's start.
 * Returns 0, or -1 when the position cannot be checked. */
int pmcp__anchor_start(const char **after, size_t *skip, char before[32]);
/* Whether item @p skip - 1 of the store page @p items is @p anchor. */
int pmcp__anchor_holds(const cJSON *items, size_t skip, const char *anchor);

#endif
