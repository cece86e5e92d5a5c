/* SPDX-License-Identifier: MIT */
/* The page builder (budget.h): a tool's result object, filled item by item
 * under an exact running token count, closed with count / truncated /
 * next_cursor, and checked once more in full before it is handed over. */
#include "core/page_int.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "util/base64url.h"
#include "util/buf.h"

static const char *const reserved_names[] = {
  "count", "truncated", "non_finite", "next_cursor", NULL
};

/* ---- counting ----------------------------------------------------------- */

int pmcp__page_counter_add(pmcp_page *pg, pmcp_tokens_counter *c,
                           const char *s, size_t len)
{
  pg->stats.counts++;
  pg->stats.counted_bytes += len;
  return pmcp_tokens_counter_add(c, s, len);
}

static int count_full(pmcp_page *pg, const char *s, size_t len, size_t *out)
{
  pg->stats.counts++;
  pg->stats.counted_bytes += len;
  return pmcp_tokens_count(s, len, out);
}

static int peek(pmcp_page *pg, pmcp_tokens_counter *c, const char *s,
                size_t len, size_t *out)
{
  pg->stats.counts++;
  pg->stats.counted_bytes += len;
  return pmcp_tokens_counter_peek(c, s, len, out);
}

static size_t ceiling(const pmcp_page *pg)
{
  return (size_t)pg->budget * PMCP_BUDGET_BYTES_PER_TOKEN;
}

/* ---- life cycle --------------------------------------------------------- */

static int decode_cursor(pmcp_page *pg, const char *cursor)
{
  pmcp_buf st = PMCP_BUF_INIT;
  pmcp_cursor_status why = PMCP_CURSOR_OK;
  int rc = pmcp__cursor_decode_key(pg->key, pg->key_len, pg->tool,
                                   pg->args_hash, pg->version, cursor,
                                   strlen(cursor), &st, &why);
  if (rc == PMCP_ECURSOR) {
    pg->status = PMCP_ECURSOR;
    pg->cstatus = why;
    pmcp_buf_dispose(&st);
    return 0;
  }
  if (rc) {
    pmcp_buf_dispose(&st);
    return rc;
  }
  /* The payload is ours (authenticated); a layout we cannot read means a
   * library that wrote it differently. */
  const unsigned char *p = (const unsigned char *)st.ptr;
  size_t used = 0;
  if (st.len < 1 || p[0] > PMCP__POS_FRAGMENT) {
    used = 0;
  } else if (p[0] == PMCP__POS_FRAGMENT) {
    size_t k = pmcp__fragpos_get(p + 1, st.len - 1, &pg->pend);
    used = k ? 1 + k : 0;
    pg->frag_pending = used != 0;
  } else {
    used = 1;
  }
  if (!used) {
    pg->status = PMCP_ECURSOR;
    pg->cstatus = PMCP_CURSOR_VERSION;
    pmcp_buf_dispose(&st);
    return 0;
  }
  rc = pmcp__buf_append(&pg->position, st.ptr + used, st.len - used);
  pmcp_buf_dispose(&st);
  pg->continued = 1;
  return rc;
}

int pmcp_page_new(pmcp_page **out, const pmcp_page_options *o)
{
  if (!out)
    return PMCP_EINVAL;
  *out = NULL;
  if (!o || o->version < 1 || !o->tool || !o->key ||
      o->key_len < PMCP_CURSOR_KEY_MIN || o->key_len > PMCP_CURSOR_KEY_MAX ||
      o->token_budget < PMCP_BUDGET_MIN || o->token_budget > PMCP_BUDGET_MAX)
    return PMCP_EINVAL;
  pmcp_page *pg = calloc(1, sizeof *pg);
  if (!pg)
    return PMCP_ENOMEM;
  pg->magic = PMCP__PAGE_MAGIC;
  pg->budget = o->token_budget;
  assert(pg->budget >= PMCP_BUDGET_MIN && pg->budget <= PMCP_BUDGET_MAX);
  pg->flags = o->flags;
  pg->version = o->source_version;
  memcpy(pg->key, o->key, o->key_len);
  pg->key_len = o->key_len;
  int rc = PMCP_ENOMEM;
  pg->tool = strdup(o->tool);
  if (!pg->tool)
    goto fail;
  rc = pmcp__args_hash(o->args_json, o->args_json ? strlen(o->args_json) : 0,
                       pg->args_hash);
  if (rc)
    goto fail;
  rc = PMCP_ENOMEM;
  if (pmcp_tokens_counter_new(&pg->ctr) || pmcp_tokens_counter_new(&pg->prev) ||
      pmcp_tokens_counter_new(&pg->work) ||
      pmcp_json_new(&pg->w, (o->flags & PMCP_PAGE_LOSSLESS) ? PMCP_JSON_LOSSLESS : 0) ||
      pmcp__buf_putc(&pg->head, '{') ||
      pmcp__page_counter_add(pg, pg->ctr, "{", 1) ||
      pmcp__buf_reserve(&pg->position, 0))
    goto fail;
  if (o->cursor && (rc = decode_cursor(pg, o->cursor)))
    goto fail;
  *out = pg;
  return 0;
fail:
  pmcp_page_free(pg);
  return rc;
}

void pmcp_page_free(pmcp_page *pg)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC)
    return;
  pg->magic = 0;
  free(pg->tool);
  free(pg->list_name);
  free(pg->it);
  pmcp_buf_dispose(&pg->position);
  pmcp_buf_dispose(&pg->head);
  pmcp_buf_dispose(&pg->names);
  pmcp_buf_dispose(&pg->tailf);
  pmcp_buf_dispose(&pg->items);
  pmcp_buf_dispose(&pg->states);
  pmcp_buf_dispose(&pg->fail_msg);
  pmcp_buf_dispose(&pg->fail_members);
  pmcp_buf_dispose(&pg->off_hint);
  pmcp_buf_dispose(&pg->image);
  pmcp_buf_dispose(&pg->empty_state);
  pmcp_tokens_counter_free(pg->ctr);
  pmcp_tokens_counter_free(pg->prev);
  pmcp_tokens_counter_free(pg->work);
  pmcp_json_free(pg->w);
  free(pg);
}

int pmcp_page_position(const pmcp_page *pg, const void **data, size_t *len)
{
  if (data)
    *data = NULL;
  if (len)
    *len = 0;
  if (!pg || pg->magic != PMCP__PAGE_MAGIC)
    return PMCP_EMISUSE;
  if (pg->status == PMCP_ECURSOR)
    return PMCP_ECURSOR;
  if (pg->continued) {
    if (data)
      *data = pg->position.ptr;
    if (len)
      *len = pg->position.len;
  }
  return 0;
}

int pmcp_page_budget(const pmcp_page *pg)
{
  return pg && pg->magic == PMCP__PAGE_MAGIC ? pg->budget : 0;
}

int pmcp_page_status(const pmcp_page *pg)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC)
    return PMCP_EMISUSE;
  return pg->status;
}

size_t pmcp_page_count(const pmcp_page *pg)
{
  return pg && pg->magic == PMCP__PAGE_MAGIC ? pg->n : 0;
}

int pmcp_page_reserve(pmcp_page *pg, int tokens)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC || tokens < 0)
    return PMCP_EINVAL;
  pg->reserve = (size_t)tokens + pg->img_tokens;
  return 0;
}

/* ---- fields ------------------------------------------------------------- */

static int name_taken(const pmcp_page *pg, const char *key)
{
  for (size_t i = 0; reserved_names[i]; i++)
    if (!strcmp(key, reserved_names[i]))
      return 1;
  if (pg->list_name && !strcmp(key, pg->list_name))
    return 1;
  if (pg->by_offset && (!strcmp(key, "next_offset") || !strcmp(key, "hint")))
    return 1;
  for (size_t i = 0; i < pg->names.len; i += strlen(pg->names.ptr + i) + 1)
    if (!strcmp(pg->names.ptr + i, key))
      return 1;
  return 0;
}

/* Everything after the items for @p n items and next_cursor @p cursor
 * (NULL: none): "]", fields after the list, the envelope and "}". */
static int build_tail(const pmcp_page *pg, size_t n, const char *cursor,
                      size_t cursor_len, pmcp_buf *out)
{
  pmcp__buf_reset(out);
  int rc = 0;
  int any = pg->head_fields > 0 || pg->list_open;
  if (pg->list_open)
    rc = pmcp__buf_putc(out, ']');
  if (!rc && pg->tailf.len)
    rc = pmcp__buf_append(out, pg->tailf.ptr, pg->tailf.len);
  any = any || pg->tailf.len;
  if (!rc && pg->by_offset) {
    rc = pmcp__page_offset_tail(pg, n, cursor, cursor_len, out);
    return rc ? rc : pmcp__buf_putc(out, '}');
  }
  if (!rc && pg->list_open)
    rc = pmcp__buf_printf(out, ",\"count\":%zu,\"truncated\":%s", n,
                          cursor ? "true" : "false");
  size_t nf = pg->field_non_finite;
  for (size_t i = 0; i < n && i < pg->n; i++)
    nf += pg->it[i].non_finite;
  if (!rc && nf)
    rc = pmcp__buf_printf(out, "%s\"non_finite\":%zu", any ? "," : "", nf);
  if (!rc && cursor) {
    rc = pmcp__buf_puts(out, ",\"next_cursor\":\"");
    if (!rc)
      rc = pmcp__buf_append(out, cursor, cursor_len);
    if (!rc)
      rc = pmcp__buf_putc(out, '"');
  }
  return rc ? rc : pmcp__buf_putc(out, '}');
}

/* An upper bound on the tail's length for @p n items and a cursor carrying
 * @p plen payload bytes: tokens never outnumber bytes, so it is also a
 * bound on the tail's tokens. */
static size_t tail_bound(const pmcp_page *pg, size_t plen)
{
  size_t raw = 1 + 10 + 1 + 4 + PMCP__ARGS_HASH_LEN + 10 + 10 + plen + 16;
  if (pg->by_offset)
    return 1 + pg->tailf.len + pmcp__page_offset_tail_bound(pg);
  return 1 + pg->tailf.len + sizeof ",\"count\":,\"truncated\":false" + 20 +
         sizeof ",\"non_finite\":" + 20 + sizeof ",\"next_cursor\":\"\"" +
         pmcp__b64url_len(raw) + 1;
}

static int encode_payload(const pmcp_page *pg, const void *payload, size_t plen,
                          pmcp_buf *out);
static void take_back_last(pmcp_page *pg);

static int add_field(pmcp_page *pg, const char *key, const char *json,
                     size_t len, size_t non_finite)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC)
    return PMCP_EMISUSE;
  if (pg->status)
    return pg->status;
  if (pg->whole)
    return PMCP_EMISUSE;
  if (!key || !json || !len)
    return PMCP_EINVAL;
  if (name_taken(pg, key))
    return PMCP_EINVAL;
  pmcp_buf piece = PMCP_BUF_INIT;
  int in_head = !pg->list_open;
  int rc = 0;
  if (!in_head || pg->head_fields)
    rc = pmcp__buf_putc(&piece, ',');
  if (!rc)
    rc = pmcp__jw_put_string(&piece, key, strlen(key));
  if (!rc)
    rc = pmcp__buf_putc(&piece, ':');
  if (!rc)
    rc = pmcp__buf_append(&piece, json, len);
  if (rc)
    goto out;
  /* Exact check: the page with this field, its envelope and (for a field
   * after the items) the next_cursor the last item would need. A field
   * after the items has priority over the last item: if it does not fit,
   * that item goes to the next page (once). */
  int retried = 0;
retry:;
  size_t tokens = 0, field_tokens = 0;
  size_t saved_tailf = pg->tailf.len;
  pmcp_buf cur = PMCP_BUF_INIT, tail = PMCP_BUF_INIT;
  if (in_head) {
    rc = pmcp_tokens_counter_copy(pg->work, pg->ctr);
    if (!rc)
      rc = pmcp__page_counter_add(pg, pg->work, piece.ptr, piece.len);
    if (!rc)
      rc = build_tail(pg, 0, NULL, 0, &tail);
    if (!rc)
      rc = peek(pg, pg->work, tail.ptr, tail.len, &tokens);
  } else {
    rc = pmcp__buf_append(&pg->tailf, piece.ptr, piece.len);
    /* A tentative last item stands only without a cursor; with one it
     * goes, and the cursor takes its room. */
    int with_cursor = pg->n && !pg->tentative;
    if (!rc && with_cursor) {
      const pmcp__pitem *last = &pg->it[pg->n - 1];
      rc = encode_payload(pg, pg->states.ptr + last->st_off, last->st_len, &cur);
    }
    if (!rc)
      rc = build_tail(pg, pg->n, with_cursor ? cur.ptr : NULL, cur.len, &tail);
    if (!rc)
      rc = peek(pg, pg->ctr, tail.ptr, tail.len, &tokens);
    pg->tailf.len = saved_tailf;
    /* what the field costs where it stands (BPE is not additive, so the
     * standalone count is not its cost) */
    size_t without = 0;
    pmcp_buf t0 = PMCP_BUF_INIT;
    if (!rc)
      rc = build_tail(pg, pg->n, with_cursor ? cur.ptr : NULL, cur.len, &t0);
    if (!rc)
      rc = peek(pg, pg->ctr, t0.ptr, t0.len, &without);
    pmcp_buf_dispose(&t0);
    if (!rc)
      field_tokens = tokens > without ? tokens - without : 0;
  }
  size_t bytes = pg->head.len + pg->items_bytes + tail.len + (in_head ? piece.len : 0);
  /* a field after the items uses the room reserved for it */
  size_t reserve = pg->reserve > field_tokens ? pg->reserve - field_tokens : 0;
  pmcp_buf_dispose(&cur);
  pmcp_buf_dispose(&tail);
  if (rc)
    goto out;
  if (tokens + reserve > (size_t)pg->budget || bytes > ceiling(pg)) {
    if (!in_head && !retried && pg->n > 1) {
      retried = 1;
      if (!pmcp__page_close_tentative(pg)) {
        take_back_last(pg);
        pg->full = 1;
      }
      goto retry;
    }
    rc = PMCP_EBUDGET;
    goto out;
  }
  if (in_head) {
    if (pg->n) {
      rc = PMCP_EMISUSE;
      goto out;
    }
    rc = pmcp__buf_append(&pg->head, piece.ptr, piece.len);
    if (rc)
      goto out;
    pmcp_tokens_counter *t = pg->ctr;
    pg->ctr = pg->work;
    pg->work = t;
    pg->head_fields++;
  } else {
    rc = pmcp__buf_append(&pg->tailf, piece.ptr, piece.len);
    if (rc)
      goto out;
    pg->reserve = reserve;
  }
  rc = pmcp__buf_append(&pg->names, key, strlen(key) + 1);
  pg->field_non_finite += non_finite;
out:
  pmcp_buf_dispose(&piece);
  if (rc == PMCP_ENOMEM)
    pg->status = rc;
  return rc;
}

int pmcp_page_field_json(pmcp_page *pg, const char *key, const char *json,
                         size_t len)
{
  return add_field(pg, key, json, len, 0);
}

int pmcp_page_field_string(pmcp_page *pg, const char *key, const char *s)
{
  if (!s)
    return PMCP_EINVAL;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__jw_put_string(&b, s, strlen(s));
  if (!rc)
    rc = add_field(pg, key, b.ptr, b.len, 0);
  pmcp_buf_dispose(&b);
  return rc;
}

int pmcp_page_field_int(pmcp_page *pg, const char *key, int64_t v)
{
  char tmp[32];
  int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v);
  return add_field(pg, key, tmp, (size_t)n, 0);
}

int pmcp_page_field_number(pmcp_page *pg, const char *key, double v)
{
  char tmp[PMCP_JSON_NUMBER_MAX];
  unsigned fl = (pg && (pg->flags & PMCP_PAGE_LOSSLESS)) ? PMCP_JSON_LOSSLESS : 0;
  size_t n = pmcp_json_format_number(v, fl, tmp, sizeof tmp);
  return add_field(pg, key, tmp, n, tmp[0] == '"');
}

int pmcp_page_field_bool(pmcp_page *pg, const char *key, int v)
{
  return add_field(pg, key, v ? "true" : "false", v ? 4 : 5, 0);
}

int pmcp_page_list(pmcp_page *pg, const char *name)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC)
    return PMCP_EMISUSE;
  if (pg->status)
    return pg->status;
  if (!name || !*name)
    return PMCP_EINVAL;
  if (pg->list_open || pg->list_name || pg->whole)
    return PMCP_EMISUSE;
  if (name_taken(pg, name))
    return PMCP_EINVAL;
  pmcp_buf piece = PMCP_BUF_INIT;
  int rc = pg->head_fields ? pmcp__buf_putc(&piece, ',') : 0;
  if (!rc)
    rc = pmcp__jw_put_string(&piece, name, strlen(name));
  if (!rc)
    rc = pmcp__buf_puts(&piece, ":[");
  if (!rc)
    rc = pmcp__buf_append(&pg->head, piece.ptr, piece.len);
  if (!rc)
    rc = pmcp__page_counter_add(pg, pg->ctr, piece.ptr, piece.len);
  if (!rc) {
    pg->list_name = strdup(name);
    if (!pg->list_name)
      rc = PMCP_ENOMEM;
  }
  pmcp_buf_dispose(&piece);
  if (rc) {
    pg->status = rc;
    return rc;
  }
  pg->list_open = 1;
  return 0;
}

/* ---- items -------------------------------------------------------------- */

int pmcp__page_tail(const pmcp_page *pg, size_t n, const char *cursor,
                    size_t cursor_len, pmcp_buf *out)
{
  return build_tail(pg, n, cursor, cursor_len, out);
}

static int encode_payload(const pmcp_page *pg, const void *payload, size_t plen,
                          pmcp_buf *out)
{
  pmcp__buf_reset(out);
  if (pg->by_offset)
    return pmcp__page_offset_encode(payload, plen, out);
  return pmcp__cursor_encode_key(pg->key, pg->key_len, pg->tool, pg->args_hash,
                                 pg->version, payload, plen, out);
}

static void take_back_last(pmcp_page *pg);

int pmcp__page_encode(const pmcp_page *pg, const void *payload, size_t plen,
                      pmcp_buf *out)
{
  return encode_payload(pg, payload, plen, out);
}


int pmcp__page_close_tentative(pmcp_page *pg)
{
  if (!pg->tentative)
    return 0;
  pg->tentative = 0;
  if (pg->n == 1) {
    /* It was the only item: with a next_cursor it fits no page of this
     * budget, so it is refused like any indivisible item. */
    const pmcp__pitem *it = &pg->it[0];
    size_t need = 0, bytes = 0;
    int rc = pmcp__page_alone(pg, pg->items.ptr + it->off, it->len,
                              pg->states.ptr + it->st_off, it->st_len, &need,
                              &bytes);
    take_back_last(pg);
    if (rc) {
      pg->status = rc;
      return rc;
    }
    pmcp__page_refuse(pg, pmcp__page_needed_budget(need, bytes));
    return PMCP_EBUDGET;
  }
  take_back_last(pg);
  pg->full = 1;
  return PMCP_EBUDGET;
}

static void take_back_last(pmcp_page *pg)
{
  pmcp__pitem *last = &pg->it[pg->n - 1];
  pg->items_bytes -= last->len + (pg->n > 1);
  pg->items.len = last->off - (pg->n > 1);
  pg->states.len = last->st_off;
  pg->n--;
  if (pg->prev_valid) {
    pmcp_tokens_counter *t = pg->ctr;
    pg->ctr = pg->prev;
    pg->prev = t;
  } else {
    /* no snapshot left: count head and items again (rare) */
    pmcp_tokens_counter_reset(pg->ctr);
    if (pmcp__page_counter_add(pg, pg->ctr, pg->head.ptr, pg->head.len) ||
        pmcp__page_counter_add(pg, pg->ctr, pg->items.ptr, pg->items.len))
      pg->status = PMCP_ENOMEM;
  }
  pg->prev_valid = 0; /* the snapshot is used up */
}

void pmcp__page_refuse(pmcp_page *pg, size_t tokens)
{
  pg->status = PMCP_EBUDGET;
  pg->min_budget = tokens;
}

int pmcp__page_alone(pmcp_page *pg, const char *text, size_t len,
                     const void *payload, size_t plen, size_t *tokens,
                     size_t *bytes)
{
  pmcp_buf cur = PMCP_BUF_INIT, page = PMCP_BUF_INIT, tail = PMCP_BUF_INIT;
  int rc = encode_payload(pg, payload, plen, &cur);
  if (!rc)
    rc = pmcp__buf_append(&page, pg->head.ptr, pg->head.len);
  if (!rc)
    rc = pmcp__buf_append(&page, text, len);
  if (!rc)
    rc = build_tail(pg, 1, cur.ptr, cur.len, &tail);
  if (!rc)
    rc = pmcp__buf_append(&page, tail.ptr, tail.len);
  if (!rc)
    rc = count_full(pg, page.ptr, page.len, tokens);
  if (!rc) {
    *tokens += pg->reserve;
    *bytes = page.len;
  }
  pmcp_buf_dispose(&cur);
  pmcp_buf_dispose(&page);
  pmcp_buf_dispose(&tail);
  return rc;
}

/* The budget an item that fits nowhere asks for: enough tokens, and enough
 * for its bytes under the byte ceiling. */
size_t pmcp__page_needed_budget(size_t tokens, size_t bytes)
{
  size_t by_bytes = (bytes + PMCP_BUDGET_BYTES_PER_TOKEN - 1) /
                    PMCP_BUDGET_BYTES_PER_TOKEN;
  size_t need = tokens > by_bytes ? tokens : by_bytes;
  return need < PMCP_BUDGET_MIN ? PMCP_BUDGET_MIN : need;
}

static int accept(pmcp_page *pg, const char *text, size_t len,
                  const void *payload, size_t plen, size_t non_finite,
                  int partial)
{
  if (pg->n == pg->cap) {
    size_t cap = pg->cap ? pg->cap * 2 : 16;
    pmcp__pitem *it = realloc(pg->it, cap * sizeof *it);
    if (!it)
      return PMCP_ENOMEM;
    pg->it = it;
    pg->cap = cap;
  }
  pmcp__pitem *r = &pg->it[pg->n];
  size_t mark = pg->items.len;
  /* items are kept joined, so rendering is one copy */
  if (pg->n && pmcp__buf_putc(&pg->items, ','))
    return PMCP_ENOMEM;
  r->off = pg->items.len;
  r->len = len;
  r->st_off = pg->states.len;
  r->st_len = plen;
  r->non_finite = non_finite;
  r->partial = partial;
  if (pmcp__buf_append(&pg->items, text, len) ||
      pmcp__buf_append(&pg->states, payload, plen)) {
    pg->items.len = mark;
    pg->states.len = r->st_off;
    return PMCP_ENOMEM;
  }
  pg->items_bytes += len + (pg->n > 0);
  pg->n++;
  pg->prev_valid = 1;
  /* ctr <- work (with the item); prev <- the count before it */
  pmcp_tokens_counter *t = pg->prev;
  pg->prev = pg->ctr;
  pg->ctr = pg->work;
  pg->work = t;
  return 0;
}

int pmcp__page_try(pmcp_page *pg, const char *text, size_t len,
                   const void *payload, size_t plen, size_t non_finite,
                   unsigned how)
{
  if (pg->status)
    return pg->status;
  if (!pg->list_open)
    return PMCP_EMISUSE;
  /* The last item fitted only as the last one; there are more. */
  if (!(how & PMCP__TRY_PROBE) && pg->tentative)
    return pmcp__page_close_tentative(pg);
  if (pg->full || (pg->n && pg->it[pg->n - 1].partial))
    return PMCP_EBUDGET;

  pmcp_buf cur = PMCP_BUF_INIT, tail = PMCP_BUF_INIT;
  size_t items_tokens = 0, total = 0;
  int rc = 0;
  size_t bytes = pg->head.len + pg->items_bytes + (pg->n > 0) + len;
  size_t cap = ceiling(pg), budget = (size_t)pg->budget;
  int fits = 0, tentative = 0;
  if (bytes + 2 > cap)
    goto decided; /* over the byte ceiling whatever it counts */
  rc = pmcp_tokens_counter_copy(pg->work, pg->ctr);
  if (!rc && pg->n)
    rc = pmcp__page_counter_add(pg, pg->work, ",", 1);
  if (!rc)
    rc = pmcp__page_counter_add(pg, pg->work, text, len);
  if (!rc)
    rc = pmcp_tokens_counter_total(pg->work, &items_tokens);
  if (rc)
    goto out;
  size_t bound = tail_bound(pg, plen);
  if (items_tokens + pg->reserve + bound <= budget && bytes + bound <= cap) {
    fits = 1;
  } else if (items_tokens + pg->reserve < budget && bytes < cap) {
    /* Close to the edge: count the real tail with its real cursor. */
    rc = encode_payload(pg, payload, plen, &cur);
    if (!rc)
      rc = build_tail(pg, pg->n + 1, cur.ptr, cur.len, &tail);
    if (!rc)
      rc = peek(pg, pg->work, tail.ptr, tail.len, &total);
    if (rc)
      goto out;
    if (total + pg->reserve <= budget && bytes + tail.len <= cap) {
      fits = 1;
    } else if (!(how & PMCP__TRY_PARTIAL)) {
      /* Would it fit as the last item, with no next_cursor? */
      rc = build_tail(pg, pg->n + 1, NULL, 0, &tail);
      if (!rc)
        rc = peek(pg, pg->work, tail.ptr, tail.len, &total);
      if (rc)
        goto out;
      if (total + pg->reserve <= budget && bytes + tail.len <= cap)
        fits = tentative = 1;
    }
  }
decided:
  if (how & PMCP__TRY_PROBE) {
    rc = fits ? 0 : PMCP_EBUDGET;
    goto out;
  }
  if (!fits) {
    if (pg->n == 0 && !(how & PMCP__TRY_QUIET)) {
      size_t need = 0, nbytes = 0;
      if (bytes + 2 > cap) {
        /* not counted yet: count it alone */
        rc = pmcp__page_alone(pg, text, len, payload, plen, &need, &nbytes);
      } else {
        /* work holds head + item exactly: add the real tail */
        if (!cur.len)
          rc = encode_payload(pg, payload, plen, &cur);
        if (!rc)
          rc = build_tail(pg, 1, cur.ptr, cur.len, &tail);
        if (!rc)
          rc = peek(pg, pg->work, tail.ptr, tail.len, &need);
        need += pg->reserve;
        nbytes = bytes + tail.len;
      }
      if (rc)
        goto out;
      pmcp__page_refuse(pg, pmcp__page_needed_budget(need, nbytes));
    }
    if (pg->n && !(how & PMCP__TRY_NOFULL))
      pg->full = 1;
    rc = PMCP_EBUDGET;
    goto out;
  }
  rc = accept(pg, text, len, payload, plen, non_finite,
              (how & PMCP__TRY_PARTIAL) != 0);
  if (!rc)
    pg->tentative = tentative;
out:
  pmcp_buf_dispose(&cur);
  pmcp_buf_dispose(&tail);
  if (rc && rc != PMCP_EBUDGET && !pg->status)
    pg->status = rc;
  return rc;
}

static int add_plain(pmcp_page *pg, const char *json, size_t len,
                     const void *resume, size_t resume_len, size_t non_finite)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC)
    return PMCP_EMISUSE;
  if (pg->status)
    return pg->status;
  if (!json || !len || (!resume && resume_len) || resume_len > PMCP__RESUME_MAX)
    return PMCP_EINVAL;
  unsigned char small[256];
  if (pg->by_offset)
    resume_len = 0; /* the page continues by offset, not by this state */
  unsigned char *payload = resume_len + 1 <= sizeof small ? small
                                                          : malloc(resume_len + 1);
  if (!payload)
    return PMCP_ENOMEM;
  payload[0] = PMCP__POS_PLAIN;
  if (resume_len)
    memcpy(payload + 1, resume, resume_len);
  size_t plen = resume_len + 1;
  if (pg->by_offset) {
    /* the offset after this item is what continues the listing */
    uint64_t next = pg->off_base + pg->n + 1;
    assert(next > pg->off_base && "page offsets only grow");
    memcpy(payload, &next, sizeof next);
    plen = sizeof next;
  }
  int rc = pmcp__page_try(pg, json, len, payload, plen, non_finite, 0);
  if (payload != small)
    free(payload);
  return rc;
}

int pmcp_page_add(pmcp_page *pg, const char *json, size_t len,
                  const void *resume, size_t resume_len)
{
  return add_plain(pg, json, len, resume, resume_len, 0);
}

int pmcp__page_resume_empty(pmcp_page *pg, const void *resume, size_t resume_len)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC)
    return PMCP_EMISUSE;
  if ((!resume && resume_len) || resume_len > PMCP__RESUME_MAX)
    return PMCP_EINVAL;
  unsigned char tag = PMCP__POS_PLAIN;
  pmcp__buf_reset(&pg->empty_state);
  int rc = pmcp__buf_append(&pg->empty_state, &tag, 1);
  if (!rc && resume_len)
    rc = pmcp__buf_append(&pg->empty_state, resume, resume_len);
  return rc;
}

pmcp_json *pmcp_page_item(pmcp_page *pg)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC || pg->status)
    return NULL;
  pmcp_json_reset(pg->w);
  return pg->w;
}

int pmcp_page_commit(pmcp_page *pg, const void *resume, size_t resume_len)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC)
    return PMCP_EMISUSE;
  if (pg->status)
    return pg->status;
  int err = pmcp_json_error(pg->w);
  if (err)
    return err;
  size_t len = 0;
  const char *text = pmcp_json_text(pg->w, &len);
  if (!text)
    return PMCP_EMISUSE;
  return add_plain(pg, text, len, resume, resume_len, pmcp_json_non_finite(pg->w));
}

/* ---- errors ------------------------------------------------------------- */

int pmcp_page_fail(pmcp_page *pg, const char *members_json, const char *fmt, ...)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC || !fmt)
    return PMCP_EINVAL;
  pmcp__buf_reset(&pg->fail_msg);
  pmcp__buf_reset(&pg->fail_members);
  va_list ap;
  va_start(ap, fmt);
  int rc = pmcp__buf_vprintf(&pg->fail_msg, fmt, ap);
  va_end(ap);
  if (!rc && members_json && *members_json)
    rc = pmcp__buf_puts(&pg->fail_members, members_json);
  if (rc)
    return rc;
  pg->failed = 1;
  return 0;
}

/* Renders {"message":msg[,members]} so that it fits the budget, cutting
 * the message at a character boundary (marked with an ellipsis) and, as a
 * last resort, dropping the members. */
int pmcp__budget_error_text(int budget, const char *msg, size_t msg_len,
                            const char *members, size_t members_len,
                            pmcp_buf *out, size_t *out_tokens)
{
  assert(budget > 0 && "a budget is never zero or negative");
  size_t cap = (size_t)budget * PMCP_BUDGET_BYTES_PER_TOKEN;
  size_t keep = msg_len;
  for (int attempt = 0; attempt < 40; attempt++) {
    assert(keep <= msg_len && "the message only ever shrinks");
    pmcp__buf_reset(out);
    int rc = pmcp__buf_puts(out, "{\"message\":");
    pmcp_buf m = PMCP_BUF_INIT;
    if (!rc)
      rc = pmcp__buf_append(&m, msg, keep);
    if (!rc && keep < msg_len)
      rc = pmcp__buf_puts(&m, "\xE2\x80\xA6");
    if (!rc)
      rc = pmcp__jw_put_string(out, m.ptr ? m.ptr : "", m.len);
    pmcp_buf_dispose(&m);
    if (!rc && members_len) {
      rc = pmcp__buf_putc(out, ',');
      if (!rc)
        rc = pmcp__buf_append(out, members, members_len);
    }
    if (!rc)
      rc = pmcp__buf_putc(out, '}');
    size_t tokens = 0;
    if (!rc)
      rc = pmcp_tokens_count(out->ptr, out->len, &tokens);
    if (rc)
      return rc;
    if (tokens <= (size_t)budget && out->len <= cap) {
      if (out_tokens)
        *out_tokens = tokens;
      return 0;
    }
    if (keep == 0) {
      if (!members_len)
        return PMCP_EINTERNAL;
      members_len = 0;
      keep = msg_len;
      continue;
    }
    /* shrink in proportion to the overflow, then to a character start */
    size_t over_t = tokens > (size_t)budget ? tokens - (size_t)budget : 0;
    size_t over_b = out->len > cap ? out->len - cap : 0;
    size_t cut = over_b > over_t * 4 ? over_b : over_t * 4;
    cut += 8 + keep / 16;
    keep = cut >= keep ? 0 : keep - cut;
    while (keep > 0 && ((unsigned char)msg[keep] & 0xC0) == 0x80)
      keep--;
  }
  return PMCP_EINTERNAL;
}

static int render_error(pmcp_page *pg, const char *msg, size_t msg_len,
                        const char *members, size_t members_len, pmcp_buf *out)
{
  size_t tokens = 0;
  int rc = pmcp__budget_error_text(pg->budget, msg, msg_len, members,
                                   members_len, out, &tokens);
  pg->stats.counts++;
  pg->stats.counted_bytes += out->len;
  pg->stats.tokens = pg->stats.estimate = tokens;
  pg->stats.bytes = out->len;
  return rc;
}

static int render_failure(pmcp_page *pg, pmcp_buf *out)
{
  pmcp_buf msg = PMCP_BUF_INIT, mem = PMCP_BUF_INIT;
  int rc = 0;
  if (pg->status == PMCP_ECURSOR) {
    rc = pmcp__buf_printf(&msg, "%s Call %s again without `cursor` to start over.",
                          pmcp_cursor_status_message((int)pg->cstatus), pg->tool);
    if (!rc)
      rc = pmcp__buf_printf(&mem, "\"error\":\"%s\",\"reason\":\"%s\",\"restart\":true",
                            pmcp_tool_error_name(PMCP_TERR_INVALID_CURSOR),
                            pmcp_cursor_status_name((int)pg->cstatus));
  } else if (pg->status == PMCP_EBUDGET) {
    if (pg->min_budget > PMCP_BUDGET_MAX)
      rc = pmcp__buf_printf(&msg,
          "The next item needs a token_budget of %zu, more than the largest "
          "allowed (%d), so %s cannot return it.",
          pg->min_budget, PMCP_BUDGET_MAX, pg->tool);
    else
      rc = pmcp__buf_printf(&msg,
          "The next item does not fit token_budget %d: it needs at least %zu. "
          "Call %s again with token_budget %zu or more%s.",
          pg->budget, pg->min_budget, pg->tool, pg->min_budget,
          pg->continued ? " and the same cursor" : "");
    if (!rc)
      rc = pmcp__buf_printf(&mem, "\"error\":\"%s\","
                            "\"min_token_budget\":%zu,\"token_budget\":%d",
                            pmcp_tool_error_name(PMCP_TERR_TOKEN_BUDGET_TOO_SMALL),
                            pg->min_budget, pg->budget);
  } else if (pg->failed) {
    rc = pmcp__buf_append(&msg, pg->fail_msg.ptr ? pg->fail_msg.ptr : "",
                          pg->fail_msg.len);
    if (!rc && pg->fail_members.len)
      rc = pmcp__buf_append(&mem, pg->fail_members.ptr, pg->fail_members.len);
  } else {
    rc = pmcp__buf_printf(&msg, "%s failed: %s", pg->tool, pmcp_strerror(pg->status));
  }
  if (!rc)
    rc = render_error(pg, msg.ptr ? msg.ptr : "", msg.len,
                      mem.ptr ? mem.ptr : "", mem.len, out);
  pmcp_buf_dispose(&msg);
  pmcp_buf_dispose(&mem);
  return rc;
}

/* ---- ending ------------------------------------------------------------- */

static int render_items(pmcp_page *pg, size_t n, int more, pmcp_buf *out,
                        pmcp_buf *cur, pmcp_buf *tail)
{
  int rc = 0;
  pmcp__buf_reset(cur);
  int need_cursor = n > 0 && (more || pg->it[n - 1].partial);
  if (pg->by_offset)
    need_cursor = n > 0 && pg->off_base + n < pg->off_total;
  /* no item shown, yet the source moved on: continue where it stopped */
  int empty_cursor = n == 0 && more && pg->n == 0 && pg->empty_state.len && !pg->by_offset;
  if (need_cursor) {
    const pmcp__pitem *last = &pg->it[n - 1];
    rc = encode_payload(pg, pg->states.ptr + last->st_off, last->st_len, cur);
  } else if (empty_cursor) {
    rc = encode_payload(pg, pg->empty_state.ptr, pg->empty_state.len, cur);
    need_cursor = 1;
  }
  if (!rc)
    rc = build_tail(pg, n, need_cursor ? cur->ptr : NULL, cur->len, tail);
  pmcp__buf_reset(out);
  if (!rc)
    rc = pmcp__buf_append(out, pg->head.ptr, pg->head.len);
  if (!rc && n) {
    const pmcp__pitem *last = &pg->it[n - 1];
    rc = pmcp__buf_append(out, pg->items.ptr, last->off + last->len);
  }
  if (!rc)
    rc = pmcp__buf_append(out, tail->ptr, tail->len);
  return rc;
}

int pmcp__page_text_tokens(pmcp_page *pg, int more, size_t *tokens)
{
  pmcp_buf out = PMCP_BUF_INIT, cur = PMCP_BUF_INIT, tail = PMCP_BUF_INIT;
  int rc = render_items(pg, pg->n, more || pg->full, &out, &cur, &tail);
  if (!rc)
    rc = count_full(pg, out.ptr, out.len, tokens);
  pmcp_buf_dispose(&out);
  pmcp_buf_dispose(&cur);
  pmcp_buf_dispose(&tail);
  return rc;
}

static int do_render(pmcp_page *pg, int more, pmcp_buf *out, int *is_error)
{
  *is_error = 0;
  if (pg->done)
    return PMCP_EMISUSE;
  pg->done = 1;
  if (pg->status || pg->failed) {
    *is_error = 1;
    return render_failure(pg, out);
  }
  if (pg->by_offset)
    more = pg->off_base + pg->n < pg->off_total;
  if (pg->tentative && (more || pg->full) &&
      pmcp__page_close_tentative(pg) && pg->status) {
    *is_error = 1;
    return render_failure(pg, out);
  }
  pg->tentative = 0;
  more = more || pg->full;
  int rc = 0;
  pmcp_buf cur = PMCP_BUF_INIT, tail = PMCP_BUF_INIT;
  size_t n = pg->n;
  for (;;) {
    rc = render_items(pg, n, more, out, &cur, &tail);
    size_t tokens = 0;
    /* With every item kept, the running count of head and items is exact
     * (pmcp_tokens_counter_peek() counts as pmcp_tokens_count() of the
     * whole text does): only the tail is counted. Once items are dropped,
     * the page is counted again in full. */
    if (!rc && n == pg->n)
      rc = peek(pg, pg->ctr, tail.ptr, tail.len, &tokens);
    else if (!rc)
      rc = count_full(pg, out->ptr, out->len, &tokens);
    if (rc)
      goto out;
    if (tokens + pg->reserve <= (size_t)pg->budget && out->len <= ceiling(pg)) {
      pg->stats.tokens = tokens;
      pg->stats.bytes = out->len;
      break;
    }
    /* The running count and the full count disagree: keep the answer
     * within budget by dropping items from the end; next_cursor then
     * resumes after the last item kept. */
    if (n == 0 && pg->n == 0 && pg->empty_state.len && !pg->by_offset) {
      /* the fields and a next_cursor over no item: refused, naming the
       * budget they need, rather than ending without the cursor */
      pmcp__page_refuse(pg, pmcp__page_needed_budget(tokens + pg->reserve + 1, out->len));
      *is_error = 1;
      rc = render_failure(pg, out);
      goto out;
    }
    if (n == 0) {
      rc = PMCP_EINTERNAL;
      pg->status = rc;
      *is_error = 1;
      pg->done = 1;
      rc = render_failure(pg, out);
      goto out;
    }
    n--;
    more = 1;
    pg->stats.dropped++;
    if (n == 0) {
      size_t need = 0, nbytes = 0;
      const pmcp__pitem *first = &pg->it[0];
      rc = pmcp__page_alone(pg, pg->items.ptr + first->off, first->len,
                            pg->states.ptr + first->st_off, first->st_len,
                            &need, &nbytes);
      if (rc)
        goto out;
      pmcp__page_refuse(pg, pmcp__page_needed_budget(need + 1, nbytes));
      *is_error = 1;
      rc = render_failure(pg, out);
      goto out;
    }
  }
  /* The estimate the page worked with, for the same text: the running
   * count of head + items plus the tail as rendered (what was counted
   * above when no item was dropped). */
  if (n == pg->n)
    pg->stats.estimate = pg->stats.tokens;
  pg->n = n;
out:
  pmcp_buf_dispose(&cur);
  pmcp_buf_dispose(&tail);
  return rc;
}

int pmcp_page_render(pmcp_page *pg, int more, pmcp_buf *out, int *is_error)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC || !out)
    return PMCP_EMISUSE;
  int dummy = 0;
  pmcp__buf_reset(out);
  return do_render(pg, more, out, is_error ? is_error : &dummy);
}

int pmcp_page_stats_get(const pmcp_page *pg, pmcp_page_stats *out)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC || !out || !pg->done)
    return PMCP_EMISUSE;
  *out = pg->stats;
  return 0;
}
