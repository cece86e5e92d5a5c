/* SPDX-License-Identifier: MIT */
/**
 * @file budget.h
 * Token budgets and the page builder.
 *
 * Every PMCP_TOOL_BUDGETED tool takes `token_budget` (integer, default 2000,
 * 512-8000) and `cursor` (string) in every mode; the engine adds both to the
 * tool's schema. The budget covers the complete text the agent receives for
 * the call: the result's one text item, holding one JSON object (the same
 * object is sent as structuredContent and not counted again). Tokens are
 * counted with o200k_base exactly as tiktoken counts them (tokens.h), and
 * the text's UTF-8 size may not exceed 8 bytes per budget token. A result
 * may also carry one PNG image item (pmcp_page_image()), priced at
 * width * height / 750 tokens and counted with the text. After the
 * handler returns, the engine checks the result against both limits; a
 * result over either becomes an error result (that is a tool bug), never an
 * over-budget answer.
 *
 * A page is the result object of one call:
 *
 *     {<fields>, "<list>": [<item>, ...], <fields>,
 *      "count": N, "truncated": B, ["non_finite": K,] ["next_cursor": "..."]}
 *
 * The tool adds fields and items in order; each item comes with the
 * position state that resumes *after* it. The page counts each part once as
 * it is added (the item in the context of the text before it, so the sum
 * of parts tracks the real count closely) and refuses an item that would
 * not fit together with the closing envelope and a next_cursor. At the end
 * the whole text is counted once more, exactly; should the sum of parts
 * have been low, items are dropped from the end until the text fits, and
 * next_cursor resumes after the last item kept. A result that fits keeps
 * its shape and has no next_cursor. An item that does not fit even on an
 * empty page is refused: the answer is an error naming the
 * `min_token_budget` it needs.
 *
 * Handler pattern:
 *
 *     pmcp_page *pg;
 *     int rc = pmcp_page_begin(&pg, call, source_version);
 *     if (rc) return rc;
 *     const void *pos; size_t pos_len;
 *     if (pmcp_page_position(pg, &pos, &pos_len) == 0) {
 *       pmcp_page_list(pg, "runs");
 *       for (...each run after pos...) {
 *         pmcp_json *j = pmcp_page_item(pg);
 *         ...write one object with pmcp_json_*...
 *         if (pmcp_page_commit(pg, &run_key, sizeof run_key)) break;
 *       }
 *     }
 *     rc = pmcp_page_finish(pg, more_runs_exist);
 *     pmcp_page_free(pg);
 *     return rc;
 *
 * Thread-safety: a page is used by one thread at a time.
 */
#ifndef PROBEMCP_BUDGET_H
#define PROBEMCP_BUDGET_H

#include "common.h"
#include "error.h"
#include "json.h"
#include "cursor.h"
#include "tool.h"

PMCP_BEGIN_DECLS

#define PMCP_BUDGET_MIN 512
#define PMCP_BUDGET_MAX 8000
#define PMCP_BUDGET_DEFAULT 2000
/** The byte ceiling: UTF-8 bytes allowed per budget token. */
#define PMCP_BUDGET_BYTES_PER_TOKEN 8

typedef struct pmcp_page pmcp_page;

/** Page flags. */
enum {
  /** Item writers and number fields use PMCP_JSON_LOSSLESS. */
  PMCP_PAGE_LOSSLESS = 1u << 0
};

#define PMCP_PAGE_OPTIONS_VERSION 1
/** Options of pmcp_page_new(): what pmcp_page_begin() takes from a call. */
typedef struct pmcp_page_options {
  unsigned version;          /**< PMCP_PAGE_OPTIONS_VERSION */
  int token_budget;          /**< 512..8000 */
  const char *tool;          /**< the tool cursors are bound to (required) */
  const char *args_json;     /**< the call's arguments object, or NULL */
  const char *cursor;        /**< the incoming cursor, or NULL */
  uint64_t source_version;   /**< see pmcp_cursor_encode() */
  const void *key;           /**< cursor key, 16..64 bytes */
  size_t key_len;
  unsigned flags;            /**< PMCP_PAGE_* */
} pmcp_page_options;

#define PMCP_PAGE_OPTIONS_INIT {PMCP_PAGE_OPTIONS_VERSION, PMCP_BUDGET_DEFAULT, \
    NULL, NULL, NULL, 0, NULL, 0, 0}

/**
 * Starts the page of a tool call: reads the call's token_budget, cursor,
 * tool name and arguments, and decodes the cursor against
 * @p source_version (0 for a source that never changes). A refused cursor
 * does not fail this call: the page is created in the refused state,
 * pmcp_page_position() returns PMCP_ECURSOR, adding returns PMCP_ECURSOR,
 * and pmcp_page_finish() answers with the restart error, which names the
 * reason and tells the agent to call again without the cursor.
 * @return 0; PMCP_EMISUSE (the tool is not PMCP_TOOL_BUDGETED);
 *         PMCP_ENOMEM.
 */
PMCP_API int pmcp_page_begin(pmcp_page **out, pmcp_call *call,
                             uint64_t source_version);
/** pmcp_page_begin() for a host or test that has no call. Same refused-
 *  cursor behaviour. @return 0; PMCP_EINVAL (budget out of range, no tool,
 *  bad key length, args not an object); PMCP_ENOMEM. */
PMCP_API int pmcp_page_new(pmcp_page **out, const pmcp_page_options *opts);
/** NULL ok. Freeing does not touch the call's result. */
PMCP_API void pmcp_page_free(pmcp_page *pg);

/**
 * The position state the incoming cursor carries.
 * @return 0 with *data NULL and *len 0 on a first page (no cursor);
 *         0 with the state (borrowed from the page) on a continuation;
 *         PMCP_ECURSOR when the cursor was refused.
 */
PMCP_API int pmcp_page_position(const pmcp_page *pg, const void **data,
                                size_t *len);
/** The page's token budget. */
PMCP_API int pmcp_page_budget(const pmcp_page *pg);
/** 0 while the page is usable; else the error that ended it
 *  (PMCP_ECURSOR, PMCP_EBUDGET after an indivisible item was refused on an
 *  empty page, or a sticky PMCP_ENOMEM / PMCP_EMISUSE). */
PMCP_API int pmcp_page_status(const pmcp_page *pg);
/** Items kept so far. */
PMCP_API size_t pmcp_page_count(const pmcp_page *pg);

/* ---- Fields ---------------------------------------------------------------
 * Top-level members, rendered in the order added (around the list, which is
 * placed where pmcp_page_list() was called). The names count, truncated,
 * non_finite, next_cursor and the list's own name are reserved. Fields may
 * not make the page overflow on their own: every field call returns
 * PMCP_EBUDGET when the envelope alone would exceed the budget. Each returns
 * 0, PMCP_EBUDGET, PMCP_EINVAL (reserved or duplicate name), PMCP_ENOMEM,
 * PMCP_ECURSOR (refused page). */
PMCP_API int pmcp_page_field_json(pmcp_page *pg, const char *key,
                                  const char *json, size_t len);
PMCP_API int pmcp_page_field_string(pmcp_page *pg, const char *key, const char *s);
PMCP_API int pmcp_page_field_int(pmcp_page *pg, const char *key, int64_t v);
PMCP_API int pmcp_page_field_number(pmcp_page *pg, const char *key, double v);
PMCP_API int pmcp_page_field_bool(pmcp_page *pg, const char *key, int v);

/**
 * Sets aside @p tokens for fields the tool will add after the items (for
 * instance a total known only at the end), so items leave room for them.
 * @return 0, PMCP_EINVAL (negative).
 */
PMCP_API int pmcp_page_reserve(pmcp_page *pg, int tokens);

/**
 * Makes the page continue by offset instead of by cursor, for a tool that
 * pages a listing with `limit` and `offset` arguments: the items the tool
 * adds are the listing's items from @p offset on, and @p total is the
 * listing's length. The page then ends with `"count":N,"truncated":B`,
 * `"next_offset":offset+N` when items remain (the first item not
 * returned: also when the budget cut the page short), and, when the budget
 * cut it (B true: an item was refused or dropped), `"hint":` @p hint. It
 * mints no cursor; the resume state given with items is not used. Fields
 * named next_offset and hint are refused. Call it before pmcp_page_list().
 * @return 0; PMCP_EINVAL (offset > total, hint NULL); PMCP_EMISUSE (a list
 *         was opened already); PMCP_ECURSOR (refused page); PMCP_ENOMEM.
 */
PMCP_API int pmcp_page_offsets(pmcp_page *pg, uint64_t offset, uint64_t total,
                               const char *hint);

/* ---- Items ---------------------------------------------------------------- */

/** Opens the paged list, named @p name, at this point of the object.
 *  @return 0; PMCP_EMISUSE (a list is already open or was closed by a
 *  later field); PMCP_EINVAL (reserved name); PMCP_ECURSOR. */
PMCP_API int pmcp_page_list(pmcp_page *pg, const char *name);

/** A writer, emptied, for the next item (one JSON value, normally an
 *  object). Owned by the page. NULL once the page has failed. */
PMCP_API pmcp_json *pmcp_page_item(pmcp_page *pg);

/**
 * Adds the value written to pmcp_page_item() as the next item.
 * @param resume the position state that continues after this item (at
 *        most 4096 bytes; copied).
 * @return 0 (kept; an item that fits only as the last one, without a
 *         next_cursor, is kept tentatively: should another item be added
 *         after it, it moves to the next page with that one, and the
 *         cursor resumes at it, so nothing is lost or sent twice);
 *         PMCP_EBUDGET (the page is full: the item is not on this
 *         page and the page's next_cursor will come back to it; stop adding;
 *         on an empty page the answer becomes the min_token_budget error);
 *         PMCP_EMISUSE (no list open, writer incomplete); PMCP_ECURSOR;
 *         PMCP_ENOMEM.
 */
PMCP_API int pmcp_page_commit(pmcp_page *pg, const void *resume, size_t resume_len);
/** pmcp_page_commit() with an item the tool serialized itself (one JSON
 *  value; not re-parsed). */
PMCP_API int pmcp_page_add(pmcp_page *pg, const char *json, size_t len,
                           const void *resume, size_t resume_len);

/** Fragment formats. */
typedef enum pmcp_fragment_format {
  PMCP_FRAGMENT_TEXT = 1, /**< text documents: "text" / "text_fragment" */
  PMCP_FRAGMENT_JSON = 2  /**< a JSON value: as is / "json_fragment" */
} pmcp_fragment_format;

#define PMCP_FRAGMENT_VERSION 1
/** A document or record that may be too large for one page. */
typedef struct pmcp_fragment {
  unsigned version;          /**< PMCP_FRAGMENT_VERSION */
  pmcp_fragment_format format;
  /** The whole document as it is now (valid UTF-8; for JSON, the value's
   *  JSON text, serialized the same way on every call). */
  const char *text;
  size_t len;
  /** Object members written before "data" in the item, e.g.
   *  "\"ref\":\"artifact:a\"" (no braces), or NULL. Must be the same on
   *  every page of one document. */
  const char *members_json;
  /** Position state that leads the tool back to this same document. */
  const void *resume_at;
  size_t resume_at_len;
  /** Position state after this document. */
  const void *resume_after;
  size_t resume_after_len;
} pmcp_fragment;

#define PMCP_FRAGMENT_INIT {PMCP_FRAGMENT_VERSION, PMCP_FRAGMENT_TEXT, NULL, 0, \
    NULL, NULL, 0, NULL, 0}

/**
 * Adds a document. If it fits the room left it becomes one whole item,
 * `{<members>,"data":{"format":"text","text":...}}` (text) or
 * `{<members>,"data":<the JSON>}` (JSON). If it would fit an empty page
 * but not the room left, the page is full (PMCP_EBUDGET) and the next page
 * starts with it. Otherwise it is cut into fragment items,
 * `{<members>,"data":{"format":"text_fragment"|"json_fragment","text":...,
 * "offset":O,"total_chars":T,"sha256":H,"complete":B}}`: offsets and
 * total_chars count Unicode characters (cuts never split a code point),
 * sha256 is the hex SHA-256 of the whole document's UTF-8, and
 * concatenating the texts in offset order gives it back. JSON is meant to
 * be decoded only once its sequence is complete.
 *
 * The cursor pins the document as it was when its first fragment was
 * served: on later pages an append is allowed (the sequence still ends
 * where it began) but an edit or deletion of the pinned text is a restart
 * error (PMCP_CURSOR_DOCUMENT_CHANGED). When a continuation resumes in the
 * middle of a document, the first pmcp_page_add_fragment() of the call must
 * be that document again (same members).
 *
 * @return 0 (the whole document, or its last fragment, is on the page:
 *         carry on); PMCP_EBUDGET (page full: stop; a fragment may have been
 *         added); PMCP_EUTF8 (text is not valid UTF-8); PMCP_ECURSOR
 *         (refused page, or the pinned text changed); PMCP_EMISUSE;
 *         PMCP_EINVAL; PMCP_ENOMEM.
 */
PMCP_API int pmcp_page_add_fragment(pmcp_page *pg, const pmcp_fragment *frag);

/**
 * Makes the page one prepared JSON object (serialized by the tool), for an
 * answer that is not a list and cannot be split: it must fit whole. The
 * page must be fresh (no field, list or item yet) and takes nothing more
 * afterwards. When the object does not fit the budget or the byte ceiling,
 * the page is refused like an indivisible item: pmcp_page_finish() answers
 * with the error naming the min_token_budget it needs.
 * @return 0 (it fits); PMCP_EBUDGET (refused); PMCP_EINVAL (not an
 *         object); PMCP_EMISUSE (page not fresh); PMCP_ECURSOR; PMCP_ENOMEM.
 */
PMCP_API int pmcp_page_object(pmcp_page *pg, const char *json, size_t len);

/* ---- An image beside the text ----------------------------------------------
 * A page may carry one PNG image, sent as an image content item after the
 * text item (success results only). Images are priced by a reference cost
 * of width * height / 750 tokens (rounded up), counted with the text
 * against token_budget; the byte ceiling applies to the text alone. The
 * usual order: reserve the smallest image's cost before adding items (so
 * the text leaves room for it), add the items, ask for the room left,
 * draw the largest image that fits and attach it. */

/** The reference token cost of a @p width x @p height image (0 when either
 *  is not positive). */
PMCP_API int pmcp_page_image_cost(int width, int height);

/** Sets aside @p tokens for an image to come, like pmcp_page_reserve() (the
 *  two add up). @return 0, PMCP_EINVAL (negative), PMCP_EMISUSE (an image is
 *  attached already). */
PMCP_API int pmcp_page_image_reserve(pmcp_page *pg, int tokens);

/**
 * The tokens an image may cost on this page now: the budget minus the
 * exact count of the text as it would render (with a next_cursor when
 * @p more, as for pmcp_page_finish(), or when the page is full) minus any
 * pmcp_page_reserve(); an image reservation counts as room.
 * @return 0; PMCP_EMISUSE; the page's error when it has failed.
 */
PMCP_API int pmcp_page_image_room(pmcp_page *pg, int more, int *room);

/**
 * Attaches one PNG (copied) of @p width x @p height, which must match the
 * image's own header. Its cost replaces the image reservation. Add no
 * items afterwards.
 * @return 0; PMCP_EBUDGET (it costs more than pmcp_page_image_room(): the
 *         page is unchanged, a smaller image may fit); PMCP_EINVAL (not a
 *         PNG, or its size differs); PMCP_EMISUSE (an image is attached
 *         already); the page's error when it has failed; PMCP_ENOMEM.
 */
PMCP_API int pmcp_page_image(pmcp_page *pg, int more, const void *png, size_t len,
                             int width, int height);

/** After pmcp_page_render() of a success page: appends the page's image (if
 *  any) to @p call's result as an image content item (base64, image/png).
 *  pmcp_page_finish() does this itself. @return 0 (also when there is no
 *  image, or the page rendered as an error); PMCP_EMISUSE (not rendered);
 *  PMCP_ENOMEM. */
PMCP_API int pmcp_page_send_image(pmcp_page *pg, pmcp_call *call);

/* ---- Ending --------------------------------------------------------------- */

/**
 * Makes the page the tool call's result: one text item holding the page's
 * JSON object, and the same object as structuredContent (and the page's
 * image, if one was attached, as an image item after the text). @p more says
 * whether the source has items after the last one added (implied once an
 * add returned PMCP_EBUDGET). A refused cursor, a refused indivisible item
 * or pmcp_page_fail() make an error result instead (isError, one JSON
 * object with "message"), fitted to the same budget.
 * @return 0; PMCP_ENOMEM; PMCP_EINTERNAL (the text could not be made to
 *         fit: not expected); PMCP_EMISUSE (no call: use pmcp_page_render()).
 */
PMCP_API int pmcp_page_finish(pmcp_page *pg, int more);

/** pmcp_page_finish() into a buffer, for hosts and tests without a call.
 *  @param[out] is_error set to 1 for an error object. May be called once. */
PMCP_API int pmcp_page_render(pmcp_page *pg, int more, pmcp_buf *out,
                              int *is_error);

/**
 * Turns the page into a tool error result: `{"message": <text>}` plus any
 * members given in @p members_json (object members, no braces, or NULL).
 * The message is shortened (at a character boundary, marked with "…") if
 * it would not fit the budget. Items and fields added so far are dropped.
 * @return 0, PMCP_ENOMEM.
 */
PMCP_API int pmcp_page_fail(pmcp_page *pg, const char *members_json,
                            const char *fmt, ...) PMCP_PRINTF(3, 4);

/** Figures about the page, for benchmarks and tests. */
typedef struct pmcp_page_stats {
  size_t tokens;      /**< exact tokens of the rendered text */
  size_t bytes;       /**< its UTF-8 size */
  size_t estimate;    /**< the sum-of-parts estimate for the same text */
  size_t dropped;     /**< items dropped at the final exact check */
  size_t counts;      /**< tokenizer calls made */
  size_t counted_bytes; /**< bytes handed to the tokenizer */
} pmcp_page_stats;
/** Fills @p out once the page was rendered or finished. @return 0,
 *  PMCP_EMISUSE (not rendered yet). */
PMCP_API int pmcp_page_stats_get(const pmcp_page *pg, pmcp_page_stats *out);

PMCP_END_DECLS

#endif
