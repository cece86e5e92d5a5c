/* SPDX-License-Identifier: MIT */
/* Pages of the research tools, built by the engine's page builder
 * (probemcp/budget.h): a result object holding one list, filled with as
 * many items as the call's token budget allows, closed with count,
 * truncated and next_cursor. Cursors are minted and checked with cursor.h
 * in the page builder's position layout, bound to the tool, its arguments
 * and the store's data version (or, for pinned reads, to version 0). */
#ifndef PMCP_RESEARCH_PAGE_H
#define PMCP_RESEARCH_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "probemcp/budget.h"
#include "probemcp/json.h"
#include "research/research.h"

/* The items of a page written with pmcp_json, for pmcp__rs_send_items. */
typedef struct pmcp__rs_items {
  size_t n; /* items the page may show */
  /* writes item @p i into @p j */
  int (*item)(pmcp_json *j, size_t i, void *ud);
  /* writes into @p j (reset) the position after @p placed items: 1, or 0
   * when nothing remains after them, or -1 (out of memory) */
  int (*state)(pmcp_json *j, size_t placed, void *ud);
  void *ud;
} pmcp__rs_items;

/* Sends a page for the call whose incoming cursor the handler opened
 * (pmcp__rs_cursor_in): the members of the object @p root holds as its
 * fields, then @p r's items as the list @p name, each written only when
 * it is placed, as many as fit, each resuming after itself. When the
 * fields alone are over the budget, the envelope with the list empty is
 * refused naming min_token_budget. */
int pmcp__rs_send_items(pmcp_call *call, pmcp__research *rs, pmcp_json *root, const char *name,
                        const pmcp__rs_items *r);

/* A page for the call under the toolset's cursor key and the store's data
 * version, decoding the call's cursor (lossless when @p flags has
 * PMCP_PAGE_LOSSLESS), for handlers that write items with pmcp_json.
 * Sends the error result and returns NULL when something fails. */
pmcp_page *pmcp__rs_page(pmcp_call *call, pmcp__research *rs, unsigned flags);
/* The same with cursors bound to @p scope, a digest of what the pages read
 * (pmcp__rs_scope_mix), not to the whole store's version: writes elsewhere
 * leave them valid. */
pmcp_page *pmcp__rs_page_scoped(pmcp_call *call, pmcp__research *rs, unsigned flags,
                                uint64_t scope);
uint64_t pmcp__rs_scope_mix(uint64_t h, int64_t v);
/* Renders @p pg as the call's result (text and structuredContent) and
 * frees it. */
int pmcp__rs_send(pmcp_call *call, pmcp_page *pg, int more);

/* Opens the incoming cursor, if any. Returns 0 with *state NULL (no
 * cursor) or the decoded state object; returns 1 after sending a restart
 * error (bad, foreign, stale cursor): the handler then returns 0. */
int pmcp__rs_cursor_in(pmcp_call *call, pmcp__research *rs, cJSON **state);

/* Mints a cursor continuing @p tool with @p args (JSON object text) and
 * position @p state, bound to the current data version; the caller frees
 * the result with free(). NULL on failure. Used for nested
 * <list>_cursor values that continue a different call. */
char *pmcp__rs_cursor_mint(pmcp_call *call, pmcp__research *rs,
                           const char *tool, const char *args_json,
                           const cJSON *state);

/* A page for the call whose incoming cursor the handler opened itself
 * (pmcp__rs_cursor_in): it only mints the next one. Sends the error
 * result and returns NULL when something fails. */
pmcp_page *pmcp__rs_page_plain(pmcp_call *call, pmcp__research *rs);
/* Sends the object text [@p txt, + @p len) as a page that must fit whole
 * (the refusal names min_token_budget otherwise). */
int pmcp__rs_send_object(pmcp_call *call, pmcp__research *rs, const char *txt, size_t len);

/* Writes @p d as a summary number: integers below 2^53 exactly, other
 * finite values at six significant figures, spelled as the cJSON route
 * printed them (1234567.8 as 1234570, -0 stays -0); non-finite values as
 * the strings "NaN", "Infinity", "-Infinity". pmcp__rs_number_text puts
 * the text in @p out (PMCP_JSON_NUMBER_MAX bytes) and returns its length. */
int pmcp__rs_number(pmcp_json *j, double d);
size_t pmcp__rs_number_text(double v, char out[PMCP_JSON_NUMBER_MAX]);

/* True when JSON text @p t (plus @p reserve tokens) fits the call's
 * budget and byte ceiling. */
int pmcp__rs_fits_text(pmcp_call *call, const char *t, size_t len, size_t reserve);

/* The call's token budget (2000 when the engine reports none). */
int pmcp__rs_budget(pmcp_call *call);

/* Exact o200k_base token count of @p s. */
size_t pmcp__rs_tokens(const char *s, size_t len);

#endif
