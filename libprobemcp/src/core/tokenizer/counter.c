/* SPDX-License-Identifier: MIT */
/* Incremental token counter (tokens.h).
 *
 * The pre-tokenizer reports, for each piece, whether its boundaries
 * depended on where the text ended. Pieces before the first such piece are
 * final whatever is appended later (the pattern looks only forward and each
 * match starts where the previous one ended), so their tokens are committed
 * and their bytes dropped. The counter keeps only the unfinished end, plus
 * up to three bytes of a UTF-8 character cut between two chunks. */
#include <stdlib.h>
#include <string.h>

#include "core/tokenizer/bpe.h"
#include "core/tokenizer/pretok.h"
#include "core/tokenizer/tokenizer.h"
#include "probemcp/tokens.h"

#define COUNTER_MAGIC 0x746F6B63u /* "tokc" */

struct pmcp_tokens_counter {
  uint32_t magic;
  size_t committed;    /* tokens of the final pieces already dropped */
  size_t bytes;        /* bytes appended in all */
  unsigned char *tail; /* the unfinished end of the text */
  size_t len, cap;
  size_t valid;        /* tail[0..valid) is whole characters */
  size_t scanned;      /* valid after the last commit scan */
  size_t tail_count;   /* tokens of tail[0..valid) as if the text ended */
  int tail_dirty;      /* tail_count must be recomputed */
  unsigned char *scratch; /* tail + suffix for peek */
  size_t scratch_cap;
};

static int grow(unsigned char **p, size_t *cap, size_t need)
{
  if (need <= *cap)
    return 0;
  size_t ncap = *cap ? *cap : 256;
  while (ncap < need)
    ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
  unsigned char *np = realloc(*p, ncap);
  if (!np)
    return PMCP_ENOMEM;
  *p = np;
  *cap = ncap;
  return 0;
}

int pmcp_tokens_counter_new(pmcp_tokens_counter **out)
{
  if (!out)
    return PMCP_EINVAL;
  pmcp_tokens_counter *c = calloc(1, sizeof *c);
  *out = c;
  if (!c)
    return PMCP_ENOMEM;
  c->magic = COUNTER_MAGIC;
  return 0;
}

void pmcp_tokens_counter_free(pmcp_tokens_counter *c)
{
  if (!c || c->magic != COUNTER_MAGIC)
    return;
  c->magic = 0;
  free(c->tail);
  free(c->scratch);
  free(c);
}

void pmcp_tokens_counter_reset(pmcp_tokens_counter *c)
{
  if (!c || c->magic != COUNTER_MAGIC)
    return;
  c->committed = c->bytes = c->len = c->valid = c->tail_count = c->scanned = 0;
  c->tail_dirty = 0;
}

size_t pmcp_tokens_counter_bytes(const pmcp_tokens_counter *c)
{
  return c && c->magic == COUNTER_MAGIC ? c->bytes : 0;
}

int pmcp_tokens_counter_add(pmcp_tokens_counter *c, const char *text, size_t len)
{
  if (!c || c->magic != COUNTER_MAGIC || (!text && len))
    return PMCP_EINVAL;
  if (len == 0)
    return 0;
  if (len > SIZE_MAX - c->len || grow(&c->tail, &c->cap, c->len + len) < 0)
    return PMCP_ENOMEM;
  size_t old_len = c->len;
  memcpy(c->tail + c->len, text, len);
  size_t n = c->len + len;
  int truncated;
  size_t v = c->valid + pmcp__utf8_scan(c->tail + c->valid, n - c->valid, &truncated);
  if (v < n && !truncated)
    return PMCP_EUTF8; /* c->len unchanged: nothing appended */

  /* Scan for final pieces only once the tail has grown by as much as it
   * held after the last scan (and by 64 bytes at least): a long unfinished
   * piece fed in small chunks is then re-scanned a logarithmic number of
   * times, not once per chunk, and appending stays linear overall. */
  size_t step = c->scanned > 64 ? c->scanned : 64;
  if (v - c->scanned < step) {
    c->len = n;
    c->valid = v;
    c->bytes += len;
    c->tail_dirty = 1;
    return 0;
  }

  /* Commit the final pieces of tail[0..v). */
  size_t pos = 0, add = 0;
  while (pos < v) {
    int at_end;
    size_t e = pmcp__pretok_next(c->tail, v, pos, &at_end);
    if (at_end)
      break;
    size_t k;
    int rc = pmcp__bpe(c->tail + pos, e - pos, NULL, &k);
    if (rc < 0) {
      c->len = old_len;
      return rc;
    }
    add += k;
    pos = e;
  }
  memmove(c->tail, c->tail + pos, n - pos);
  c->committed += add;
  c->len = n - pos;
  c->valid = v - pos;
  c->scanned = c->valid;
  c->bytes += len;
  c->tail_dirty = 1;
  return 0;
}

int pmcp_tokens_counter_total(pmcp_tokens_counter *c, size_t *out)
{
  if (!c || c->magic != COUNTER_MAGIC || !out)
    return PMCP_EINVAL;
  if (c->valid != c->len)
    return PMCP_EUTF8;
  if (c->tail_dirty) {
    int rc = pmcp__tokens_count_valid(c->tail, c->valid, &c->tail_count);
    if (rc < 0)
      return rc;
    c->tail_dirty = 0;
  }
  *out = c->committed + c->tail_count;
  return 0;
}

int pmcp_tokens_counter_peek(pmcp_tokens_counter *c, const char *suffix, size_t len,
                             size_t *out)
{
  if (!c || c->magic != COUNTER_MAGIC || !out || (!suffix && len))
    return PMCP_EINVAL;
  if (len == 0)
    return pmcp_tokens_counter_total(c, out);
  if (len > SIZE_MAX - c->len || grow(&c->scratch, &c->scratch_cap, c->len + len) < 0)
    return PMCP_ENOMEM;
  memcpy(c->scratch, c->tail, c->len);
  memcpy(c->scratch + c->len, suffix, len);
  size_t n = c->len + len;
  int truncated;
  if (c->valid + pmcp__utf8_scan(c->scratch + c->valid, n - c->valid, &truncated) != n)
    return PMCP_EUTF8;
  size_t k;
  int rc = pmcp__tokens_count_valid(c->scratch, n, &k);
  if (rc < 0)
    return rc;
  *out = c->committed + k;
  return 0;
}

int pmcp_tokens_counter_copy(pmcp_tokens_counter *dst, const pmcp_tokens_counter *src)
{
  if (!dst || !src || dst->magic != COUNTER_MAGIC || src->magic != COUNTER_MAGIC)
    return PMCP_EINVAL;
  if (dst == src)
    return 0;
  if (grow(&dst->tail, &dst->cap, src->len) < 0)
    return PMCP_ENOMEM;
  if (src->len)
    memcpy(dst->tail, src->tail, src->len);
  dst->committed = src->committed;
  dst->bytes = src->bytes;
  dst->len = src->len;
  dst->valid = src->valid;
  dst->scanned = src->scanned;
  dst->tail_count = src->tail_count;
  dst->tail_dirty = src->tail_dirty;
  return 0;
}
