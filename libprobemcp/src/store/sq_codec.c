/* SPDX-License-Identifier: MIT */
/* SQLite backend: the metric block codec. A block holds up to
 * PMCP__SQ_BLOCK points of one series. Version 3, written now:
 *   u8 3, u8 segment count, u16 points (little-endian),
 *   per segment of PMCP__SQ_SEG points, 120 bytes: u32 compressed length,
 *   u32 points, u32 non-finite, u32 without a time, i64 step_min,
 *   step_max, time_min, time_max, step_first, step_last, step_at_min,
 *   step_at_max, f64 min, max, sum, first, last (little-endian),
 *   then each segment's points compressed on its own (below),
 * so a summary or a scan reads the segments it takes whole from the
 * header and decodes only the others. A segment's points (and a version
 * 2 block's, after u8 2 and a varint count) are
 *   steps and times: first value, then deltas of deltas (zigzag varints),
 *   values: u8 shift, u8 width, then each double's bit pattern shifted
 *   right by `shift` (the trailing zero bits every value has: 29 for
 *   float32 values widened to double), delta-coded against the previous
 *   one, zigzagged, and stored as `width` byte planes (most significant
 *   plane first),
 * compressed with zstd. Regular steps and clock ticks cost about nothing;
 * smooth values have small deltas, so the high planes are nearly all zero
 * and zstd codes the rest near their entropy. Versions 1 (XOR of whole
 * doubles, 8 planes) and 2 (the whole block one zstd frame) are still
 * read. */
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "store/sq.h"

#define ZSTD_LEVEL 3

static int put_varint(pmcp_buf *b, uint64_t v)
{
  unsigned char tmp[10];
  size_t n = 0;
  while (v >= 0x80) {
    tmp[n++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  tmp[n++] = (unsigned char)v;
  return pmcp__buf_append(b, tmp, n);
}

static uint64_t zz(int64_t v)
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

/* Delta of delta in wrapping unsigned arithmetic: exact for any int64. */
static int put_dod(pmcp_buf *b, const pmcp_point *p, size_t n, int which)
{
  uint64_t prev = 0, prev_delta = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t v = (uint64_t)(which ? p[i].time_ms : p[i].step);
    uint64_t delta = v - prev;
    int rc = put_varint(b, zz((int64_t)(delta - prev_delta)));
    if (rc)
      return rc;
    prev = v;
    prev_delta = delta;
  }
  return 0;
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
    uint64_t z, w;
    /* eight zero bytes: eight points of the same delta */
    if (n - i >= 8 && end - c >= 8 && (memcpy(&w, c, 8), w == 0)) {
      for (int k = 0; k < 8; k++) {
        prev += prev_delta;
        if (which)
          pts[i + k].time_ms = (int64_t)prev;
        else
          pts[i + k].step = (int64_t)prev;
      }
      c += 8;
      i += 7;
      continue;
    }
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
  uint64_t w;
  /* eight zero bytes (regular clock ticks) are eight varints */
  while (n >= 8 && end - c >= 8 && (memcpy(&w, c, 8), w == 0)) {
    c += 8;
    n -= 8;
  }
  while (n && c < end) {
    n -= *c++ < 0x80;
    while (n >= 8 && end - c >= 8 && (memcpy(&w, c, 8), w == 0)) {
      c += 8;
      n -= 8;
    }
  }
  if (n)
    return -1;
  *p = c;
  return 0;
}

/* The steps, times and value planes of p[0..n) appended to @p raw. */
static int raw_encode(pmcp_buf *raw, const pmcp_point *p, size_t n)
{
  int rc = put_dod(raw, p, n, 0);
  if (!rc)
    rc = put_dod(raw, p, n, 1);
  if (!rc)
    rc = pmcp__buf_reserve(raw, n * 8 + 2);
  if (rc)
    return PMCP_ENOMEM;
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
  raw->ptr[raw->len++] = (char)shift;
  raw->ptr[raw->len++] = (char)width;
  unsigned char *planes = (unsigned char *)raw->ptr + raw->len;
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
  raw->len += n * width;
  return 0;
}

static void put_le(unsigned char *p, uint64_t v, unsigned bytes)
{
  for (unsigned i = 0; i < bytes; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, unsigned bytes)
{
  uint64_t v = 0;
  for (unsigned i = 0; i < bytes; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static uint64_t dbits(double d)
{
  uint64_t b;
  memcpy(&b, &d, 8);
  return b;
}

static double bitsd(uint64_t b)
{
  double d;
  memcpy(&d, &b, 8);
  return d;
}

/* A segment's 120 header bytes. */
static void put_seg(unsigned char *h, const pmcp_bucket *b, uint64_t untimed, size_t len)
{
  put_le(h, len, 4);
  put_le(h + 4, b->count, 4);
  put_le(h + 8, b->nonfinite, 4);
  put_le(h + 12, untimed, 4);
  const int64_t iv[8] = {b->step_min, b->step_max, b->time_min, b->time_max,
                         b->step_first, b->step_last, b->step_at_min, b->step_at_max};
  for (int k = 0; k < 8; k++)
    put_le(h + 16 + 8 * k, (uint64_t)iv[k], 8);
  const double dv[5] = {b->min, b->max, b->sum, b->first, b->last};
  for (int k = 0; k < 5; k++)
    put_le(h + 80 + 8 * k, dbits(dv[k]), 8);
}

static void get_seg(const unsigned char *h, pmcp__sq_seg *g)
{
  pmcp_bucket *b = &g->sum;
  g->len = (size_t)get_le(h, 4);
  b->count = get_le(h + 4, 4);
  b->nonfinite = get_le(h + 8, 4);
  g->untimed = get_le(h + 12, 4);
  int64_t *iv[8] = {&b->step_min, &b->step_max, &b->time_min, &b->time_max,
                    &b->step_first, &b->step_last, &b->step_at_min, &b->step_at_max};
  for (int k = 0; k < 8; k++)
    *iv[k] = (int64_t)get_le(h + 16 + 8 * k, 8);
  double *dv[5] = {&b->min, &b->max, &b->sum, &b->first, &b->last};
  for (int k = 0; k < 5; k++)
    *dv[k] = bitsd(get_le(h + 80 + 8 * k, 8));
}

int pmcp__sq_encode(pmcp__sq *q, const pmcp_point *p, size_t n, pmcp_buf *out)
{
  if (n == 0 || n > PMCP__SQ_BLOCK)
    return PMCP_EINVAL;
  size_t nseg = (n + PMCP__SQ_SEG - 1) / PMCP__SQ_SEG;
  if (!q->cctx && !(q->cctx = ZSTD_createCCtx()))
    return PMCP_ENOMEM;
  pmcp__buf_reset(out);
  size_t hdr = PMCP__SQ_SEG_HDR(nseg);
  if (pmcp__buf_reserve(out, hdr))
    return PMCP_ENOMEM;
  memset(out->ptr, 0, hdr);
  out->len = hdr;
  unsigned char h0[4] = {3, (unsigned char)nseg, 0, 0};
  put_le(h0 + 2, n, 2);
  memcpy(out->ptr, h0, 4);
  pmcp_buf raw = PMCP_BUF_INIT;
  int rc = 0;
  for (size_t k = 0; k < nseg && rc == 0; k++) {
    size_t from = k * PMCP__SQ_SEG, m = n - from < PMCP__SQ_SEG ? n - from : PMCP__SQ_SEG;
    pmcp__buf_reset(&raw);
    if ((rc = raw_encode(&raw, p + from, m)))
      break;
    size_t bound = ZSTD_compressBound(raw.len);
    if (pmcp__buf_reserve(out, bound)) { /* room past out->len */
      rc = PMCP_ENOMEM;
      break;
    }
    size_t z = ZSTD_compressCCtx(q->cctx, out->ptr + out->len, bound, raw.ptr, raw.len,
                                 ZSTD_LEVEL);
    if (ZSTD_isError(z)) {
      rc = PMCP_EINTERNAL;
      break;
    }
    out->len += z;
    pmcp_bucket b;
    uint64_t untimed;
    pmcp__metric_summarize(p + from, m, &b, &untimed);
    put_seg((unsigned char *)out->ptr + 4 + k * 120, &b, untimed, z);
  }
  pmcp_buf_dispose(&raw);
  return rc;
}

int pmcp__sq_block_untimed(const void *data, size_t len, uint64_t *out)
{
  const unsigned char *h = data;
  *out = 0;
  if (len < 4 || h[0] != 3)
    return len >= 1 && h[0] != 3 ? 0 : PMCP_ECORRUPT;
  size_t ns = h[1];
  if (ns == 0 || ns > PMCP__SQ_MAX_SEGS || len < PMCP__SQ_SEG_HDR(ns))
    return PMCP_ECORRUPT;
  for (size_t k = 0; k < ns; k++)
    *out += get_le(h + 4 + k * 120 + 12, 4);
  return 1;
}

int pmcp__sq_seg_headers(const void *data, size_t len, size_t block_len, pmcp__sq_seg *segs,
                         size_t *nseg)
{
  const unsigned char *h = data;
  *nseg = 0;
  if (len < 1)
    return PMCP_ECORRUPT;
  if (h[0] != 3)
    return 0;
  if (len < 4)
    return PMCP_ECORRUPT;
  size_t ns = h[1], n = (size_t)get_le(h + 2, 2);
  if (ns == 0 || ns > PMCP__SQ_MAX_SEGS || len < PMCP__SQ_SEG_HDR(ns))
    return PMCP_ECORRUPT;
  size_t at = PMCP__SQ_SEG_HDR(ns), total = 0;
  for (size_t k = 0; k < ns; k++) {
    get_seg(h + 4 + k * 120, &segs[k]);
    segs[k].at = at;
    at += segs[k].len;
    total += segs[k].sum.count;
    if (segs[k].sum.count == 0 || segs[k].sum.count > PMCP__SQ_SEG || at > block_len)
      return PMCP_ECORRUPT;
  }
  if (total != n)
    return PMCP_ECORRUPT;
  *nseg = ns;
  return 1;
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

/* Decompresses one zstd frame into d->raw: *got bytes. */
static int unzstd(pmcp__sq_dec *d, const void *data, size_t len, size_t *got)
{
  unsigned long long sz = ZSTD_getFrameContentSize(data, len);
  if (sz == ZSTD_CONTENTSIZE_ERROR || sz == ZSTD_CONTENTSIZE_UNKNOWN ||
      sz > (unsigned long long)PMCP__SQ_BLOCK * 64 + 64)
    return PMCP_ECORRUPT;
  if (d->raw_cap < sz || !d->raw) {
    unsigned char *b = realloc(d->raw, sz ? (size_t)sz : 1);
    if (!b)
      return PMCP_ENOMEM;
    d->raw = b;
    d->raw_cap = (size_t)sz;
  }
  if (!d->dctx && !(d->dctx = ZSTD_createDCtx()))
    return PMCP_ENOMEM;
  size_t n = ZSTD_decompressDCtx(d->dctx, d->raw, (size_t)sz, data, len);
  if (ZSTD_isError(n) || n != sz)
    return PMCP_ECORRUPT;
  *got = n;
  return 0;
}

/* Room for @p count points in d->pts. */
static int pts_room(pmcp__sq_dec *d, size_t count)
{
  if (d->pts_cap >= count && d->pts)
    return 0;
  size_t cap = count > PMCP__SQ_BLOCK ? count : PMCP__SQ_BLOCK;
  pmcp_point *np = realloc(d->pts, cap * sizeof *np);
  if (!np)
    return PMCP_ENOMEM;
  d->pts = np;
  d->pts_cap = cap;
  return 0;
}

/* The steps and times of @p count points (times skipped, left 0, with
 * PMCP__SQ_DEC_NO_TIME), from *p on. */
static int steps_times(const unsigned char **p, const unsigned char *end, size_t count,
                       unsigned flags, pmcp_point *out)
{
  if (get_dod(p, end, out, count, 0))
    return PMCP_ECORRUPT;
  if (flags & PMCP__SQ_DEC_NO_TIME) {
    if (skip_varints(p, end, count))
      return PMCP_ECORRUPT;
    for (size_t i = 0; i < count; i++)
      out[i].time_ms = 0;
  } else if (get_dod(p, end, out, count, 1)) {
    return PMCP_ECORRUPT;
  }
  return 0;
}

/* The steps, times and value planes of @p count points (raw_encode()). */
static int raw_decode(const unsigned char *p, const unsigned char *end, size_t count,
                      unsigned flags, pmcp_point *out)
{
  if (steps_times(&p, end, count, flags, out))
    return PMCP_ECORRUPT;
  if (end - p < 2)
    return PMCP_ECORRUPT;
  unsigned shift = p[0], width = p[1];
  p += 2;
  if (shift > 63 || width > 8 || (size_t)(end - p) != count * width)
    return PMCP_ECORRUPT;
  get_planes(p, count, shift, width, out);
  return 0;
}

/* One segment's points into @p out (room for g->sum.count). */
static int seg_into(pmcp__sq_dec *d, const void *data, size_t len, const pmcp__sq_seg *g,
                    unsigned flags, pmcp_point *out)
{
  size_t got;
  int rc = unzstd(d, data, len, &got);
  if (rc)
    return rc;
  return raw_decode(d->raw, d->raw + got, (size_t)g->sum.count, flags, out);
}

int pmcp__sq_dec_seg(pmcp__sq_dec *d, const void *data, size_t len, const pmcp__sq_seg *g,
                     unsigned flags, pmcp_point **pts, size_t *n)
{
  *pts = NULL;
  *n = 0;
  int rc = pts_room(d, (size_t)g->sum.count);
  if (!rc)
    rc = seg_into(d, data, len, g, flags, d->pts);
  if (rc)
    return rc;
  *pts = d->pts;
  *n = (size_t)g->sum.count;
  return 0;
}

int pmcp__sq_dec_block(pmcp__sq_dec *d, const void *data, size_t len, unsigned flags,
                       pmcp_point **pts, size_t *n)
{
  *pts = NULL;
  *n = 0;
  pmcp__sq_seg segs[PMCP__SQ_MAX_SEGS];
  size_t nseg;
  int rc = pmcp__sq_seg_headers(data, len, len, segs, &nseg);
  if (rc < 0 || rc > 1)
    return rc;
  if (rc == 1) {
    size_t count = 0;
    if ((rc = pts_room(d, PMCP__SQ_BLOCK)))
      return rc;
    for (size_t k = 0; k < nseg; k++) {
      if ((rc = seg_into(d, (const unsigned char *)data + segs[k].at, segs[k].len, &segs[k],
                         flags, d->pts + count)))
        return rc;
      count += (size_t)segs[k].sum.count;
    }
    *pts = d->pts;
    *n = count;
    return 0;
  }
  size_t got;
  if ((rc = unzstd(d, data, len, &got)))
    return rc;
  const unsigned char *p = d->raw, *end = d->raw + got;
  uint64_t count;
  unsigned version = p < end ? *p++ : 0;
  if ((version != 1 && version != 2) || get_varint(&p, end, &count) ||
      count > PMCP__SQ_BLOCK * 4)
    return PMCP_ECORRUPT;
  if ((rc = pts_room(d, (size_t)count)))
    return rc;
  pmcp_point *out = d->pts;
  if (version == 2) {
    if ((rc = raw_decode(p, end, (size_t)count, flags, out)))
      return rc;
  } else {
    if (steps_times(&p, end, (size_t)count, flags, out) || (size_t)(end - p) != count * 8)
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
  pmcp__sq_dec_free(&q->dec);
}
