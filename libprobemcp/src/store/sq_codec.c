/* SPDX-License-Identifier: MIT */
/* SQLite backend: the metric block codec. A block holds up to
 * PMCP__SQ_BLOCK points of one series:
 *   u8 codec version (2), varint n,
 *   steps and times: first value, then deltas of deltas (zigzag varints),
 *   values: u8 shift, u8 width, then each double's bit pattern shifted
 *   right by `shift` (the trailing zero bits every value of the block has:
 *   29 for float32 values widened to double), delta-coded against the
 *   previous one, zigzagged, and stored as `width` byte planes (most
 *   significant plane first),
 * and the whole compressed with zstd. Regular steps and clock ticks cost
 * about nothing; smooth values have small deltas, so the high planes are
 * nearly all zero and zstd codes the rest near their entropy. Version 1
 * (XOR of whole doubles, 8 planes) is still read. */
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "store/sq.h"

#define ZSTD_LEVEL 3

/* At most 10 bytes at @p w; past them. */
static inline unsigned char *put_varint(unsigned char *w, uint64_t v)
{
  while (v >= 0x80) {
    *w++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *w++ = (unsigned char)v;
  return w;
}

static inline uint64_t zz(int64_t v)
{
  return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzz(uint64_t v)
{
  return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *out)
{
  if (*p < end && **p < 0x80) {
    *out = *(*p)++;
    return 0;
  }
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*p >= end)
      return -1;
    unsigned char c = *(*p)++;
    v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) {
      *out = v;
      return 0;
    }
  }
  return -1;
}

/* Delta of delta in wrapping unsigned arithmetic: exact for any int64; at
 * most 10 bytes a point at @p w. Past what it wrote. */
static unsigned char *put_dod(unsigned char *w, const pmcp_point *p, size_t n, int which)
{
  uint64_t prev = 0, prev_delta = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t v = (uint64_t)(which ? p[i].time_ms : p[i].step);
    uint64_t delta = v - prev;
    w = put_varint(w, zz((int64_t)(delta - prev_delta)));
    prev = v;
    prev_delta = delta;
  }
  return w;
}

/* Decodes @p n delta-of-delta varints into steps (which 0) or times
 * (which 1). Regular steps and clock ticks are runs of zero bytes: those
 * take the fast path (no varint loop, no zigzag). */
static int get_dod(const unsigned char **p, const unsigned char *end, pmcp_point *pts,
                   size_t n, int which)
{
  uint64_t prev = 0, prev_delta = 0;
  const unsigned char *c = *p;
  for (size_t i = 0; i < n; i++) {
    uint64_t z;
    if (c < end && *c == 0) {
      c++;
      z = 0;
    } else if (get_varint(&c, end, &z)) {
      return -1;
    }
    prev_delta += (uint64_t)unzz(z);
    prev += prev_delta;
    if (which)
      pts[i].time_ms = (int64_t)prev;
    else
      pts[i].step = (int64_t)prev;
  }
  *p = c;
  return 0;
}

/* Skips @p n varints (the times, when the caller does not read them): a
 * varint ends at each byte below 0x80. */
static int skip_varints(const unsigned char **p, const unsigned char *end, size_t n)
{
  const unsigned char *c = *p;
  while (n && c < end)
    n -= *c++ < 0x80;
  if (n)
    return -1;
  *p = c;
  return 0;
}

int pmcp__sq_encode(pmcp__sq *q, const pmcp_point *p, size_t n, const void **data, size_t *len)
{
  /* version, count, steps and times (10 bytes each at most), shift,
   * width, planes */
  pmcp_buf *raw = &q->enc_raw;
  pmcp__buf_reset(raw);
  if (n > (SIZE_MAX - 16) / 28 || pmcp__buf_reserve(raw, 16 + n * 28))
    return PMCP_ENOMEM;
  unsigned char *w = (unsigned char *)raw->ptr;
  *w++ = 2;
  w = put_varint(w, n);
  w = put_dod(w, p, n, 0);
  w = put_dod(w, p, n, 1);
  uint64_t orall = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t bits;
    memcpy(&bits, &p[i].value, 8);
    orall |= bits;
  }
  unsigned shift = 0;
  while (shift < 63 && orall && !(orall & (1ull << shift)))
    shift++;
  uint64_t prev = 0, maxz = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t bits;
    memcpy(&bits, &p[i].value, 8);
    uint64_t v = bits >> shift;
    uint64_t z = zz((int64_t)(v - prev));
    prev = v;
    if (z > maxz)
      maxz = z;
  }
  unsigned width = 0;
  while (width < 8 && (maxz >> (8 * width)))
    width++;
  *w++ = (unsigned char)shift;
  *w++ = (unsigned char)width;
  unsigned char *planes = w;
  prev = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t bits;
    memcpy(&bits, &p[i].value, 8);
    uint64_t v = bits >> shift;
    uint64_t z = zz((int64_t)(v - prev));
    prev = v;
    for (unsigned b = 0; b < width; b++)
      planes[(size_t)b * n + i] = (unsigned char)(z >> (8 * (width - 1 - b)));
  }
  raw->len = (size_t)(planes + n * width - (unsigned char *)raw->ptr);
  if (!q->cctx && !(q->cctx = ZSTD_createCCtx()))
    return PMCP_ENOMEM;
  size_t bound = ZSTD_compressBound(raw->len);
  pmcp_buf *out = &q->enc_out;
  pmcp__buf_reset(out);
  if (pmcp__buf_reserve(out, bound))
    return PMCP_ENOMEM;
  size_t z = ZSTD_compressCCtx(q->cctx, out->ptr, bound, raw->ptr, raw->len, ZSTD_LEVEL);
  if (ZSTD_isError(z))
    return PMCP_EINTERNAL;
  *data = out->ptr;
  *len = z;
  return 0;
}

/* The value planes of a version 2 block, one loop per width so that the
 * compiler keeps the plane offsets in registers. */
#define PLANES(W)                                                       \
  for (size_t i = 0; i < count; i++) {                                  \
    uint64_t z = 0;                                                     \
    for (unsigned b = 0; b < (W); b++)                                  \
      z = (z << 8) | p[(size_t)b * count + i];                          \
    prev += (uint64_t)unzz(z);                                          \
    uint64_t bits = prev << shift;                                      \
    memcpy(&out[i].value, &bits, 8);                                    \
  }

static void get_planes(const unsigned char *p, size_t count, unsigned shift, unsigned width,
                       pmcp_point *out)
{
  uint64_t prev = 0;
  double z0;
  switch (width) {
  case 0: /* every delta is 0: every value has the bits 0 */
    memset(&z0, 0, sizeof z0);
    for (size_t i = 0; i < count; i++)
      out[i].value = z0;
    break;
  case 1: PLANES(1) break;
  case 2: PLANES(2) break;
  case 3: PLANES(3) break;
  case 4: PLANES(4) break;
  case 5: PLANES(5) break;
  case 6: PLANES(6) break;
  case 7: PLANES(7) break;
  default: PLANES(8) break;
  }
}

int pmcp__sq_dec_block(pmcp__sq_dec *d, const void *data, size_t len, unsigned flags,
                       pmcp_point **pts, size_t *n)
{
  *pts = NULL;
  *n = 0;
  unsigned long long sz = ZSTD_getFrameContentSize(data, len);
  if (sz == ZSTD_CONTENTSIZE_ERROR || sz == ZSTD_CONTENTSIZE_UNKNOWN ||
      sz > (unsigned long long)PMCP__SQ_BLOCK * 64 + 64)
    return PMCP_ECORRUPT;
  if (d->raw_cap < sz) {
    unsigned char *b = realloc(d->raw, (size_t)sz);
    if (!b)
      return PMCP_ENOMEM;
    d->raw = b;
    d->raw_cap = (size_t)sz;
  }
  if (!d->dctx && !(d->dctx = ZSTD_createDCtx()))
    return PMCP_ENOMEM;
  size_t got = ZSTD_decompressDCtx(d->dctx, d->raw, (size_t)sz, data, len);
  if (ZSTD_isError(got) || got != sz)
    return PMCP_ECORRUPT;
  const unsigned char *p = d->raw, *end = d->raw + got;
  uint64_t count;
  unsigned version = p < end ? *p++ : 0;
  if ((version != 1 && version != 2) || get_varint(&p, end, &count) ||
      count > PMCP__SQ_BLOCK * 4)
    return PMCP_ECORRUPT;
  if (d->pts_cap < count || !d->pts) {
    size_t cap = count > PMCP__SQ_BLOCK ? (size_t)count : PMCP__SQ_BLOCK;
    pmcp_point *np = realloc(d->pts, cap * sizeof *np);
    if (!np)
      return PMCP_ENOMEM;
    d->pts = np;
    d->pts_cap = cap;
  }
  pmcp_point *out = d->pts;
  if (get_dod(&p, end, out, (size_t)count, 0))
    return PMCP_ECORRUPT;
  if (flags & PMCP__SQ_DEC_NO_TIME) {
    if (skip_varints(&p, end, (size_t)count))
      return PMCP_ECORRUPT;
    for (size_t i = 0; i < count; i++)
      out[i].time_ms = 0;
  } else if (get_dod(&p, end, out, (size_t)count, 1)) {
    return PMCP_ECORRUPT;
  }
  if (version == 1) {
    if ((size_t)(end - p) != count * 8)
      return PMCP_ECORRUPT;
    uint64_t prev = 0;
    for (size_t i = 0; i < count; i++) {
      uint64_t x = 0;
      for (int b = 0; b < 8; b++)
        x |= (uint64_t)p[(size_t)b * count + i] << (56 - 8 * b);
      uint64_t bits = x ^ prev;
      prev = bits;
      memcpy(&out[i].value, &bits, 8);
    }
  } else {
    if (end - p < 2)
      return PMCP_ECORRUPT;
    unsigned shift = p[0], width = p[1];
    p += 2;
    if (shift > 63 || width > 8 || (size_t)(end - p) != count * width)
      return PMCP_ECORRUPT;
    get_planes(p, (size_t)count, shift, width, out);
  }
  *pts = out;
  *n = (size_t)count;
  return 0;
}

int pmcp__sq_decode(pmcp__sq *q, const void *data, size_t len, pmcp_point **pts, size_t *n)
{
  pmcp_point *p;
  *pts = NULL;
  *n = 0;
  int rc = pmcp__sq_dec_block(&q->dec, data, len, 0, &p, n);
  if (rc)
    return rc;
  *pts = malloc((*n ? *n : 1) * sizeof **pts);
  if (!*pts)
    return PMCP_ENOMEM;
  memcpy(*pts, p, *n * sizeof *p);
  return 0;
}

void pmcp__sq_dec_free(pmcp__sq_dec *d)
{
  ZSTD_freeDCtx(d->dctx);
  free(d->raw);
  free(d->pts);
  memset(d, 0, sizeof *d);
}

void pmcp__sq_codec_free(pmcp__sq *q)
{
  ZSTD_freeCCtx(q->cctx);
  q->cctx = NULL;
  pmcp_buf_dispose(&q->enc_raw);
  pmcp_buf_dispose(&q->enc_out);
  pmcp__sq_dec_free(&q->dec);
}
