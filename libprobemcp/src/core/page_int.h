/* SPDX-License-Identifier: MIT */
/* Internal state of a pmcp_page, shared by page.c and fragment.c. */
#ifndef PMCP_CORE_PAGE_INT_H
#define PMCP_CORE_PAGE_INT_H

#include "probemcp/budget.h"
#include "probemcp/tokens.h"
#include "core/cursor_int.h"

#define PMCP__PAGE_MAGIC 0x70616765u
/* Largest position state one item may carry. */
#define PMCP__RESUME_MAX 4096

/* Page payload tags (first byte of the state a page cursor carries). */
#define PMCP__POS_PLAIN 0
#define PMCP__POS_FRAGMENT 1

/* Where a fragment sequence stands. Offsets are bytes and characters into
 * the pinned document; pin_len bytes of it are pinned by sha. */
typedef struct pmcp__fragpos {
  uint64_t byte_off, char_off, pin_len, total_chars;
  unsigned char sha[32];
  unsigned char members_id[8];
} pmcp__fragpos;

typedef struct pmcp__pitem {
  size_t off, len;       /* the item's JSON in pg->items */
  size_t st_off, st_len; /* its page payload (tag + state) in pg->states */
  size_t non_finite;
  int partial;           /* an unfinished fragment: the page ends here */
} pmcp__pitem;

struct pmcp_page {
  unsigned magic;
  pmcp_call *call;
  int budget;
  unsigned flags;
  char *tool;
  unsigned char args_hash[PMCP__ARGS_HASH_LEN];
  unsigned char key[PMCP_CURSOR_KEY_MAX];
  size_t key_len;
  uint64_t version;

  int status;                  /* 0 or the error that ended the page */
  pmcp_cursor_status cstatus;  /* why the cursor was refused */
  int continued;               /* a cursor was given and accepted */
  pmcp_buf position;           /* the tool's state from the cursor */
  int frag_pending;            /* the cursor stopped inside a document */
  int frag_seen;               /* the first fragment add happened */
  pmcp__fragpos pend;

  pmcp_buf head;               /* "{" fields [, "list":[ ] */
  size_t head_fields;
  int list_open;
  char *list_name;
  pmcp_buf names;              /* field names, NUL-separated */
  pmcp_buf tailf;              /* fields after the list: ,"k":v ... */
  size_t reserve;
  size_t field_non_finite;

  pmcp_buf items, states;
  pmcp__pitem *it;
  size_t n, cap;
  size_t items_bytes;          /* item bytes plus separating commas */
  /* Exact running count of head + items (tokens.h counter), a snapshot
   * taken before the last item (to take back a tentative one) and a
   * scratch copy for trying an item. */
  pmcp_tokens_counter *ctr, *prev, *work;
  int prev_valid;              /* prev is the count before the last item */
  int full;                    /* an add was refused: more is implied */
  int tentative;               /* the last item fits only without cursor */
  size_t min_budget;           /* for the indivisible-item refusal */

  int whole;                   /* pmcp_page_object(): nothing more */
  int failed;                  /* pmcp_page_fail() */
  pmcp_buf fail_msg, fail_members;

  /* pmcp_page_offsets(): continued by offset; an item's page payload is
   * the offset after it (8 bytes). */
  int by_offset;
  uint64_t off_base, off_total;
  pmcp_buf off_hint;           /* the hint as a JSON string */

  /* pmcp_page_image(): one PNG beside the text; its reference cost is
   * part of reserve (img_tokens of it), as is an image reservation. */
  pmcp_buf image;
  int img_w, img_h;
  size_t img_tokens;

  /* pmcp__page_resume_empty(): the page payload a page without items
   * continues at (the source read items it did not show), or empty. */
  pmcp_buf empty_state;

  pmcp_json *w;
  int done;
  pmcp_page_stats stats;
};

/* How pmcp__page_try() treats an item. */
enum {
  PMCP__TRY_PROBE = 1u << 0,   /* only say whether it fits */
  PMCP__TRY_PARTIAL = 1u << 1, /* an unfinished fragment (page ends) */
  PMCP__TRY_QUIET = 1u << 2,   /* a refusal on an empty page is not final */
  PMCP__TRY_NOFULL = 1u << 3   /* a refusal does not end the page */
};

/* Tries to add one item with its page payload. 0 (added, or fits when
 * probing) or PMCP_EBUDGET (does not fit), or another error. */
int pmcp__page_try(pmcp_page *pg, const char *text, size_t len,
                   const void *payload, size_t plen, size_t non_finite,
                   unsigned how);
/* Tokens an empty page holding just this item (and a cursor for
 * @p payload) would need. */
int pmcp__page_alone(pmcp_page *pg, const char *text, size_t len,
                     const void *payload, size_t plen, size_t *tokens,
                     size_t *bytes);
/* Takes back a tentative last item (there is more after it): returns
 * PMCP_EBUDGET then, else 0. */
int pmcp__page_close_tentative(pmcp_page *pg);
/* Builds the tail (see page.c) for @p n items and cursor text. */
int pmcp__page_tail(const pmcp_page *pg, size_t n, const char *cursor,
                    size_t cursor_len, pmcp_buf *out);
int pmcp__page_encode(const pmcp_page *pg, const void *payload, size_t plen,
                      pmcp_buf *out);
/* Renders {"message":msg[,members]} fitted to @p budget (message cut at a
 * character boundary with an ellipsis; members dropped as a last resort). */
int pmcp__budget_error_text(int budget, const char *msg, size_t msg_len,
                            const char *members, size_t members_len,
                            pmcp_buf *out, size_t *out_tokens);
/* Ends the page because an indivisible item needing @p tokens was
 * refused. */
/* The budget an item of @p tokens tokens and @p bytes bytes (alone on a
 * page) asks for: enough for both limits, at least PMCP_BUDGET_MIN. */
size_t pmcp__page_needed_budget(size_t tokens, size_t bytes);
void pmcp__page_refuse(pmcp_page *pg, size_t tokens);
int pmcp__page_counter_add(pmcp_page *pg, pmcp_tokens_counter *c,
                           const char *s, size_t len);

/* Offset mode (page_offsets.c): the tail's envelope after the fields for
 * @p n items, next_offset @p next (NULL: none); the upper bound of its
 * length; the continuation text of a payload. */
int pmcp__page_offset_tail(const pmcp_page *pg, size_t n, const char *next,
                           size_t next_len, pmcp_buf *out);
size_t pmcp__page_offset_tail_bound(const pmcp_page *pg);
int pmcp__page_offset_encode(const void *payload, size_t plen, pmcp_buf *out);

/* The position a page that ends with no item continues at (a tool that
 * read items and showed none of them, e.g. all hidden): without it such a
 * page carries no next_cursor. Copied; PMCP_EINVAL when too long. */
int pmcp__page_resume_empty(pmcp_page *pg, const void *resume, size_t resume_len);
/* Hands @p text, just rendered from @p pg (pmcp_page_render()), to @p call
 * as its text item, carrying the count the page made of it so the budget
 * check does not count it again, and with @p structured the same object
 * as structuredContent (the page wrote it: an object, minified as any
 * structured result is). */
int pmcp__page_result(const pmcp_page *pg, pmcp_call *call, const char *text,
                      size_t len, int structured);
/* Exact tokens of the page's text as it would render now with its items
 * (with a next_cursor when @p more or the page is full). */
int pmcp__page_text_tokens(pmcp_page *pg, int more, size_t *tokens);
/* Width and height from a PNG's signature and IHDR: 0 or PMCP_EINVAL. */
int pmcp__png_size(const unsigned char *p, size_t len, int *w, int *h);
/* The reference token cost of a serialized image content item (PNG,
 * base64): 0, or PMCP_EINVAL when it is no image the budget can price. */
int pmcp__image_item_cost(const char *json, size_t len, size_t *tokens);

/* Decodes fragment state from a payload; returns bytes consumed or 0. */
size_t pmcp__fragpos_get(const unsigned char *p, size_t len, pmcp__fragpos *out);

#endif
