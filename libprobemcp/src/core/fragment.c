/* SPDX-License-Identifier: MIT */
/* Fragments (budget.h, pmcp_page_add_fragment()): a document too large for
 * a page is served as a sequence of items whose texts, concatenated in
 * offset order, give it back, with the whole document's SHA-256. The
 * cursor pins the document's first pin_len bytes by hash so a continuation
 * never splices two versions together. */
#include "core/page_int.h"

#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "util/buf.h"
#include "util/crypto.h"

/* A fragment shorter than this is not started at the end of a page that
 * already holds items: the document starts on the next page instead. */
#define MIN_PIECE 256
/* The cut search stops once the bracket is this narrow (bytes). */
#define SEARCH_SLACK 48

static int put_varint(pmcp_buf *b, uint64_t v)
{
  unsigned char tmp[10];
  size_t n = 0;
  do {
    unsigned char byte = v & 0x7F;
    v >>= 7;
    tmp[n++] = byte | (v ? 0x80 : 0);
  } while (v);
  return pmcp__buf_append(b, tmp, n);
}

static int get_varint(const unsigned char *p, size_t len, size_t *pos, uint64_t *out)
{
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (*pos >= len)
      return -1;
    unsigned char byte = p[(*pos)++];
    v |= (uint64_t)(byte & 0x7F) << shift;
    if (!(byte & 0x80)) {
      *out = v;
      return 0;
    }
  }
  return -1;
}

static int fragpos_put(pmcp_buf *b, const pmcp__fragpos *f)
{
  int rc = put_varint(b, f->byte_off);
  if (!rc)
    rc = put_varint(b, f->char_off);
  if (!rc)
    rc = put_varint(b, f->pin_len);
  if (!rc)
    rc = put_varint(b, f->total_chars);
  if (!rc)
    rc = pmcp__buf_append(b, f->sha, sizeof f->sha);
  if (!rc)
    rc = pmcp__buf_append(b, f->members_id, sizeof f->members_id);
  return rc;
}

size_t pmcp__fragpos_get(const unsigned char *p, size_t len, pmcp__fragpos *out)
{
  size_t pos = 0;
  if (get_varint(p, len, &pos, &out->byte_off) ||
      get_varint(p, len, &pos, &out->char_off) ||
      get_varint(p, len, &pos, &out->pin_len) ||
      get_varint(p, len, &pos, &out->total_chars) ||
      len - pos < sizeof out->sha + sizeof out->members_id)
    return 0;
  memcpy(out->sha, p + pos, sizeof out->sha);
  pos += sizeof out->sha;
  memcpy(out->members_id, p + pos, sizeof out->members_id);
  pos += sizeof out->members_id;
  if (out->byte_off > out->pin_len || out->char_off > out->total_chars)
    return 0;
  return pos;
}

static size_t count_chars(const char *s, size_t len)
{
  size_t n = 0;
  for (size_t i = 0; i < len; i++)
    n += ((unsigned char)s[i] & 0xC0) != 0x80;
  return n;
}

/* Moves @p e back to the start of a character. */
static size_t align_down(const char *s, size_t start, size_t e)
{
  while (e > start && ((unsigned char)s[e] & 0xC0) == 0x80)
    e--;
  return e;
}

typedef struct seq {
  const pmcp_fragment *f;
  pmcp__fragpos pos;     /* byte_off/char_off: where this page's piece starts */
  char sha_hex[65];
} seq;

static int open_item(pmcp_buf *b, const pmcp_fragment *f)
{
  int rc = pmcp__buf_putc(b, '{');
  if (!rc && f->members_json && *f->members_json) {
    rc = pmcp__buf_puts(b, f->members_json);
    if (!rc)
      rc = pmcp__buf_putc(b, ',');
  }
  return rc ? rc : pmcp__buf_puts(b, "\"data\":");
}

static int whole_item(const pmcp_fragment *f, pmcp_buf *b)
{
  int rc = open_item(b, f);
  if (rc)
    return rc;
  if (f->format == PMCP_FRAGMENT_JSON) {
    rc = pmcp__buf_append(b, f->text, f->len);
  } else {
    rc = pmcp__buf_puts(b, "{\"format\":\"text\",\"text\":");
    if (!rc)
      rc = pmcp__jw_put_string(b, f->text, f->len);
    if (!rc)
      rc = pmcp__buf_putc(b, '}');
  }
  return rc ? rc : pmcp__buf_putc(b, '}');
}

/* The item for the piece [s->pos.byte_off, e) and its page payload. */
static int piece_item(const seq *s, size_t e, pmcp_buf *item, pmcp_buf *payload)
{
  const pmcp_fragment *f = s->f;
  size_t b0 = (size_t)s->pos.byte_off;
  int complete = e == s->pos.pin_len;
  pmcp__buf_reset(item);
  pmcp__buf_reset(payload);
  int rc = open_item(item, f);
  if (!rc)
    rc = pmcp__buf_printf(item, "{\"format\":\"%s\",\"text\":",
                          f->format == PMCP_FRAGMENT_JSON ? "json_fragment"
                                                          : "text_fragment");
  if (!rc)
    rc = pmcp__jw_put_string(item, f->text + b0, e - b0);
  if (!rc)
    rc = pmcp__buf_printf(item,
                          ",\"offset\":%llu,\"total_chars\":%llu,\"sha256\":\"%s\","
                          "\"complete\":%s}}",
                          (unsigned long long)s->pos.char_off,
                          (unsigned long long)s->pos.total_chars, s->sha_hex,
                          complete ? "true" : "false");
  if (rc)
    return rc;
  if (complete) {
    unsigned char tag = PMCP__POS_PLAIN;
    rc = pmcp__buf_append(payload, &tag, 1);
    if (!rc && f->resume_after_len)
      rc = pmcp__buf_append(payload, f->resume_after, f->resume_after_len);
  } else {
    unsigned char tag = PMCP__POS_FRAGMENT;
    pmcp__fragpos next = s->pos;
    next.byte_off = e;
    next.char_off = s->pos.char_off + count_chars(f->text + b0, e - b0);
    rc = pmcp__buf_append(payload, &tag, 1);
    if (!rc)
      rc = fragpos_put(payload, &next);
    if (!rc && f->resume_at_len)
      rc = pmcp__buf_append(payload, f->resume_at, f->resume_at_len);
  }
  return rc;
}

/* Tokens and bytes of the page with the piece ending at @p e appended. */
static int measure(pmcp_page *pg, const seq *s, size_t e, pmcp_buf *item,
                   pmcp_buf *payload, size_t *tokens, size_t *bytes)
{
  pmcp_buf cur = PMCP_BUF_INIT, tail = PMCP_BUF_INIT;
  int rc = piece_item(s, e, item, payload);
  if (!rc)
    rc = pmcp__page_encode(pg, payload->ptr, payload->len, &cur);
  if (!rc)
    rc = pmcp__page_tail(pg, pg->n + 1, cur.ptr, cur.len, &tail);
  if (!rc)
    rc = pmcp_tokens_counter_copy(pg->work, pg->ctr);
  if (!rc && pg->n)
    rc = pmcp__page_counter_add(pg, pg->work, ",", 1);
  if (!rc)
    rc = pmcp__page_counter_add(pg, pg->work, item->ptr, item->len);
  if (!rc) {
    pg->stats.counts++;
    pg->stats.counted_bytes += tail.len;
    rc = pmcp_tokens_counter_peek(pg->work, tail.ptr, tail.len, tokens);
  }
  if (!rc) {
    *tokens += pg->reserve;
    *bytes = pg->head.len + pg->items_bytes + (pg->n > 0) + item->len + tail.len;
  }
  pmcp_buf_dispose(&cur);
  pmcp_buf_dispose(&tail);
  return rc;
}

static int emit(pmcp_page *pg, seq *s)
{
  const pmcp_fragment *f = s->f;
  size_t start = (size_t)s->pos.byte_off, end = (size_t)s->pos.pin_len;
  size_t budget = (size_t)pg->budget;
  size_t cap = budget * PMCP_BUDGET_BYTES_PER_TOKEN;
  pmcp_buf item = PMCP_BUF_INIT, payload = PMCP_BUF_INIT;
  int rc = 0;
  size_t tokens = 0, bytes = 0;

  /* The piece's raw bytes can be no more than the bytes left. */
  size_t used = pg->head.len + pg->items_bytes + 300;
  size_t room = cap > used ? cap - used : 0;
  size_t hi = end - start < room ? end : align_down(f->text, start, start + room);
  size_t lo = start; /* the longest piece known to fit (start: none) */
  if (hi > start) {
    /* Tokens grow about linearly with the piece: t(e) ~ t0 + k (e - start).
     * t0 is the page with an empty piece; k comes from a sample of the
     * text, then from the measurements themselves. Each probe counts the
     * whole page once, so a good first guess matters more than anything. */
    size_t t0 = 0, b0 = 0;
    rc = measure(pg, s, start, &item, &payload, &t0, &b0);
    if (rc)
      goto out;
    size_t sample = align_down(f->text, start, start + (hi - start < 4096 ? hi - start : 4096));
    size_t ts = 0;
    if (sample > start && pmcp_tokens_count(f->text + start, sample - start, &ts) == 0)
      pg->stats.counts++, pg->stats.counted_bytes += sample - start;
    double k = ts ? (double)ts / (double)(sample - start) : 0.25;
    size_t top = hi, t_top = 0; /* t_top 0: not measured */
    size_t t_lo = t0;
    int first = 1;
    while (lo < top) {
      size_t guess;
      if (t_top && t_top > t_lo) {
        double frac = (double)((budget > t_lo ? budget : t_lo) - t_lo) /
                      (double)(t_top - t_lo);
        guess = lo + (size_t)((double)(top - lo) * frac * 0.995);
      } else {
        if (lo > start && t_lo > t0)
          k = (double)(t_lo - t0) / (double)(lo - start);
        double want = budget > t_lo ? (double)(budget - t_lo) : 0;
        guess = lo + (size_t)(want / k * (first ? 0.985 : 0.995));
      }
      first = 0;
      if (guess > top)
        guess = top;
      if (guess <= lo)
        guess = lo + (top - lo) / 2;
      guess = align_down(f->text, start, guess);
      if (guess <= lo)
        break;
      rc = measure(pg, s, guess, &item, &payload, &tokens, &bytes);
      if (rc)
        goto out;
      if (tokens <= budget && bytes <= cap) {
        lo = guess;
        t_lo = tokens;
      } else {
        top = guess;
        t_top = tokens;
      }
      /* within 1.5% of the piece (or a few bytes) is full enough: a page a
       * little less full costs less than another count of it */
      if (top - lo <= SEARCH_SLACK || top - lo <= (lo - start) / 64)
        break;
      if (lo == hi)
        break;
    }
  }
  if (lo == start || (pg->n > 0 && lo < end && lo - start < MIN_PIECE)) {
    if (pg->n > 0) {
      pg->full = 1;
      rc = PMCP_EBUDGET;
      goto out;
    }
    /* Not one character fits an empty page: ask for a larger budget. */
    size_t one = start + 1;
    while (one < end && ((unsigned char)f->text[one] & 0xC0) == 0x80)
      one++;
    rc = piece_item(s, one, &item, &payload);
    size_t need = 0, nbytes = 0;
    if (!rc)
      rc = pmcp__page_alone(pg, item.ptr, item.len, payload.ptr, payload.len,
                            &need, &nbytes);
    if (rc)
      goto out;
    size_t by_bytes = (nbytes + PMCP_BUDGET_BYTES_PER_TOKEN - 1) / PMCP_BUDGET_BYTES_PER_TOKEN;
    pmcp__page_refuse(pg, need > by_bytes ? need : by_bytes);
    rc = PMCP_EBUDGET;
    goto out;
  }
  rc = piece_item(s, lo, &item, &payload);
  if (rc)
    goto out;
  int complete = lo == end;
  rc = pmcp__page_try(pg, item.ptr, item.len, payload.ptr, payload.len, 0,
                      complete ? PMCP__TRY_QUIET : PMCP__TRY_PARTIAL | PMCP__TRY_QUIET);
  if (!rc && !complete)
    rc = PMCP_EBUDGET; /* the page ends with this fragment */
out:
  pmcp_buf_dispose(&item);
  pmcp_buf_dispose(&payload);
  return rc;
}

int pmcp_page_add_fragment(pmcp_page *pg, const pmcp_fragment *f)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC)
    return PMCP_EMISUSE;
  if (pg->status)
    return pg->status;
  if (pg->by_offset)
    return PMCP_EMISUSE; /* a document's pieces continue by cursor */
  if (!f || f->version < 1 ||
      (f->format != PMCP_FRAGMENT_TEXT && f->format != PMCP_FRAGMENT_JSON) ||
      (!f->text && f->len) || (!f->resume_at && f->resume_at_len) ||
      (!f->resume_after && f->resume_after_len) ||
      f->resume_at_len > PMCP__RESUME_MAX - 80 ||
      f->resume_after_len > PMCP__RESUME_MAX)
    return PMCP_EINVAL;
  if (f->format == PMCP_FRAGMENT_JSON && !f->len)
    return PMCP_EINVAL;
  if (!pg->list_open)
    return PMCP_EMISUSE;
  if (f->len && pmcp_tokens_utf8_check(f->text, f->len, NULL))
    return PMCP_EUTF8;
  int rc = pmcp__page_close_tentative(pg);
  if (rc)
    return rc;
  if (pg->full || (pg->n && pg->it[pg->n - 1].partial))
    return PMCP_EBUDGET;

  seq s;
  memset(&s, 0, sizeof s);
  s.f = f;
  unsigned char d[PMCP__SHA256_LEN];
  const char *members = f->members_json ? f->members_json : "";
  rc = pmcp__sha256(members, strlen(members), d);
  if (rc)
    return rc;

  if (pg->frag_pending && !pg->frag_seen) {
    /* Resuming inside this document: it must be the pinned one. */
    pg->frag_seen = 1;
    s.pos = pg->pend;
    unsigned char now[PMCP__SHA256_LEN];
    int same = !memcmp(d, s.pos.members_id, sizeof s.pos.members_id) &&
               f->len >= s.pos.pin_len &&
               !pmcp__sha256(f->text, (size_t)s.pos.pin_len, now) &&
               pmcp__ct_equal(now, s.pos.sha, sizeof now);
    if (!same) {
      pg->status = PMCP_ECURSOR;
      pg->cstatus = PMCP_CURSOR_DOCUMENT_CHANGED;
      return PMCP_ECURSOR;
    }
    pmcp__hex(s.pos.sha, sizeof s.pos.sha, s.sha_hex);
    return emit(pg, &s);
  }
  pg->frag_seen = 1;

  /* Whole, if it fits the room left; a document over the byte ceiling
   * cannot, and is not even serialized whole. */
  pmcp_buf item = PMCP_BUF_INIT, payload = PMCP_BUF_INIT;
  unsigned char tag = PMCP__POS_PLAIN;
  if (f->len + 16 > (size_t)pg->budget * PMCP_BUDGET_BYTES_PER_TOKEN) {
    rc = PMCP_EBUDGET;
    goto fragments;
  }
  rc = whole_item(f, &item);
  if (!rc)
    rc = pmcp__buf_append(&payload, &tag, 1);
  if (!rc && f->resume_after_len)
    rc = pmcp__buf_append(&payload, f->resume_after, f->resume_after_len);
  if (!rc)
    rc = pmcp__page_try(pg, item.ptr, item.len, payload.ptr, payload.len, 0,
                        PMCP__TRY_QUIET | PMCP__TRY_NOFULL);
  if (rc == PMCP_EBUDGET && pg->n > 0 && !pg->full) {
    /* On an empty page it would be whole: start it there. */
    size_t need = 0, nbytes = 0;
    rc = pmcp__page_alone(pg, item.ptr, item.len, payload.ptr, payload.len,
                          &need, &nbytes);
    if (!rc && need <= (size_t)pg->budget &&
        nbytes <= (size_t)pg->budget * PMCP_BUDGET_BYTES_PER_TOKEN) {
      pg->full = 1;
      rc = PMCP_EBUDGET;
    } else if (!rc) {
      rc = PMCP_EBUDGET;
    }
    if (rc == PMCP_EBUDGET && pg->full)
      goto out;
  }
  if (rc != PMCP_EBUDGET || pg->full)
    goto out;
fragments:

  /* Too large for any page of this budget: fragments, pinned from now. */
  s.pos.byte_off = 0;
  s.pos.char_off = 0;
  s.pos.pin_len = f->len;
  s.pos.total_chars = count_chars(f->text, f->len);
  memcpy(s.pos.members_id, d, sizeof s.pos.members_id);
  rc = pmcp__sha256(f->text, f->len, s.pos.sha);
  if (!rc) {
    pmcp__hex(s.pos.sha, sizeof s.pos.sha, s.sha_hex);
    rc = emit(pg, &s);
  }
out:
  pmcp_buf_dispose(&item);
  pmcp_buf_dispose(&payload);
  return rc;
}
