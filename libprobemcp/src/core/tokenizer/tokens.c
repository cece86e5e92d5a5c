/* SPDX-License-Identifier: MIT */
/* Public o200k_base API (tokens.h): validation, count, encode, decode. */
#include <stdlib.h>
#include <string.h>

#include "core/tokenizer/bpe.h"
#include "core/tokenizer/pretok.h"
#include "core/tokenizer/ranks.h"
#include "core/tokenizer/tokenizer.h"
#include "probemcp/tokens.h"
#include "util/buf.h"

size_t pmcp__utf8_scan(const unsigned char *s, size_t n, int *truncated)
{
  size_t i = 0;
  *truncated = 0;
  while (i < n) {
    /* ASCII runs eight bytes at a time */
    while (i + 8 <= n) {
      uint64_t v;
      memcpy(&v, s + i, 8);
      if (v & 0x8080808080808080ull)
        break;
      i += 8;
    }
    if (i >= n)
      break;
    unsigned c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    /* three-byte characters whose second byte may be any continuation
     * (most of the BMP: CJK, kana, Hangul) take one test */
    while (c >= 0xE1 && c <= 0xEF && c != 0xED && i + 2 < n && (s[i + 1] & 0xC0) == 0x80 &&
           (s[i + 2] & 0xC0) == 0x80) {
      i += 3;
      if (i >= n)
        return n;
      c = s[i];
    }
    /* four-byte characters (emoji: F0 9F ..) take one test too */
    while (c >= 0xF0 && c <= 0xF4 && i + 3 < n && s[i + 1] >= (c == 0xF0 ? 0x90u : 0x80u) &&
           s[i + 1] <= (c == 0xF4 ? 0x8Fu : 0xBFu) && (s[i + 2] & 0xC0) == 0x80 &&
           (s[i + 3] & 0xC0) == 0x80) {
      i += 4;
      if (i >= n)
        return n;
      c = s[i];
    }
    if (c < 0x80)
      continue;
    size_t need;
    unsigned lo = 0x80, hi = 0xBF; /* range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2;
      if (c == 0xE0)
        lo = 0xA0; /* no overlongs */
      else if (c == 0xED)
        hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3;
      if (c == 0xF0)
        lo = 0x90;
      else if (c == 0xF4)
        hi = 0x8F; /* nothing above U+10FFFF */
    } else {
      return i;
    }
    for (size_t k = 1; k <= need; k++) {
      if (i + k >= n) {
        *truncated = 1;
        return i;
      }
      unsigned b = s[i + k];
      if (k == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80)
        return i;
    }
    i += need + 1;
  }
  return n;
}

int pmcp__tokens_count_valid(const unsigned char *s, size_t n, size_t *out)
{
  size_t pos = 0, total = 0;
  while (pos < n) {
    int at_end;
    size_t e = pmcp__pretok_next(s, n, pos, &at_end);
    size_t c;
    int rc = pmcp__bpe(s + pos, e - pos, NULL, &c);
    if (rc < 0)
      return rc;
    total += c;
    pos = e;
  }
  *out = total;
  return 0;
}

int pmcp_tokens_utf8_check(const char *text, size_t len, size_t *bad_offset)
{
  if (!text && len)
    return PMCP_EINVAL;
  int truncated;
  size_t v = pmcp__utf8_scan((const unsigned char *)text, len, &truncated);
  if (v == len)
    return 0;
  if (bad_offset)
    *bad_offset = v;
  return PMCP_EUTF8;
}

int pmcp_tokens_count(const char *text, size_t len, size_t *out)
{
  if (!out || (!text && len))
    return PMCP_EINVAL;
  if (len == 0) {
    *out = 0;
    return 0;
  }
  const unsigned char *s = (const unsigned char *)text;
  int truncated;
  if (pmcp__utf8_scan(s, len, &truncated) != len)
    return PMCP_EUTF8;
  return pmcp__tokens_count_valid(s, len, out);
}

int pmcp_tokens_encode(const char *text, size_t len, uint32_t **out, size_t *n)
{
  if (!out || !n)
    return PMCP_EINVAL;
  *out = NULL;
  *n = 0;
  if (!text && len)
    return PMCP_EINVAL;
  const unsigned char *s = (const unsigned char *)text;
  int truncated;
  if (pmcp__utf8_scan(s, len, &truncated) != len)
    return PMCP_EUTF8;
  if (len == 0)
    return 0;
  /* o200k averages ~3-4 bytes per token; grow when a piece could overflow */
  size_t cap = len / 3 + 16, cnt = 0, pos = 0;
  uint32_t *ids = malloc(cap * sizeof *ids);
  if (!ids)
    return PMCP_ENOMEM;
  while (pos < len) {
    int at_end;
    size_t e = pmcp__pretok_next(s, len, pos, &at_end);
    if (cap - cnt < e - pos) {
      size_t ncap = cap * 2;
      if (ncap - cnt < e - pos)
        ncap = cnt + (e - pos);
      uint32_t *nids = realloc(ids, ncap * sizeof *ids);
      if (!nids) {
        free(ids);
        return PMCP_ENOMEM;
      }
      ids = nids;
      cap = ncap;
    }
    size_t c;
    int rc = pmcp__bpe(s + pos, e - pos, ids + cnt, &c);
    if (rc < 0) {
      free(ids);
      return rc;
    }
    cnt += c;
    pos = e;
  }
  uint32_t *fit = realloc(ids, cnt * sizeof *ids);
  *out = fit ? fit : ids;
  *n = cnt;
  return 0;
}

void pmcp_tokens_free(uint32_t *ids)
{
  free(ids);
}

int pmcp_tokens_decode(const uint32_t *ids, size_t n, pmcp_buf *out)
{
  static const char eot[] = "<|endoftext|>", eop[] = "<|endofprompt|>";
  if (!out || (!ids && n))
    return PMCP_EINVAL;
  size_t need = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t id = ids[i];
    if (id < PMCP__TK_NRANKS)
      need += pmcp__tk_off[id + 1] - pmcp__tk_off[id];
    else if (id == PMCP_TOKEN_ENDOFTEXT)
      need += sizeof eot - 1;
    else if (id == PMCP_TOKEN_ENDOFPROMPT)
      need += sizeof eop - 1;
    else
      return PMCP_EINVAL;
  }
  if (pmcp__buf_reserve(out, need) < 0)
    return PMCP_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    uint32_t id = ids[i];
    if (id < PMCP__TK_NRANKS)
      pmcp__buf_append(out, pmcp__tk_bytes + pmcp__tk_off[id],
                       pmcp__tk_off[id + 1] - pmcp__tk_off[id]);
    else if (id == PMCP_TOKEN_ENDOFTEXT)
      pmcp__buf_append(out, eot, sizeof eot - 1);
    else
      pmcp__buf_append(out, eop, sizeof eop - 1);
  }
  return 0;
}
