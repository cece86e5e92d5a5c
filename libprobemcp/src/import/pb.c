/* SPDX-License-Identifier: MIT */
#include "import/pb.h"

#include <stdlib.h>
#include <string.h>

int pmcp__pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
  const uint8_t *p = *pp;
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p >= end)
      return -1;
    uint8_t b = *p++;
    /* The tenth byte may only carry the top bit of a 64-bit value. */
    if (shift == 63 && b > 1)
      return -1;
    v |= (uint64_t)(b & 0x7F) << shift;
    if (!(b & 0x80)) {
      *pp = p;
      *out = v;
      return 0;
    }
  }
  return -1;
}

static uint64_t le(const uint8_t *p, int n)
{
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

int pmcp__pb_next(pmcp__pb *r, pmcp__pb_field *f)
{
  if (r->p >= r->end)
    return 0;
  const uint8_t *p = r->p;
  uint64_t key;
  if (pmcp__pb_varint(&p, r->end, &key) != 0)
    return -1;
  uint64_t num = key >> 3;
  if (num == 0 || num > 0x1FFFFFFF)
    return -1;
  memset(f, 0, sizeof *f);
  f->num = (uint32_t)num;
  f->wire = (int)(key & 7);
  switch (f->wire) {
  case PMCP__PB_VARINT:
    if (pmcp__pb_varint(&p, r->end, &f->u) != 0)
      return -1;
    break;
  case PMCP__PB_I64:
    if (r->end - p < 8)
      return -1;
    f->u = le(p, 8);
    p += 8;
    break;
  case PMCP__PB_I32:
    if (r->end - p < 4)
      return -1;
    f->u = le(p, 4);
    p += 4;
    break;
  case PMCP__PB_LEN: {
    uint64_t len;
    if (pmcp__pb_varint(&p, r->end, &len) != 0)
      return -1;
    if (len > (uint64_t)(r->end - p))
      return -1;
    f->data = p;
    f->len = (size_t)len;
    p += len;
    break;
  }
  default:
    return -1;
  }
  r->p = p;
  return 1;
}

double pmcp__pb_double(uint64_t bits)
{
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

float pmcp__pb_float(uint32_t bits)
{
  float v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

int pmcp__pb_as_double(const pmcp__pb_field *f, double *out)
{
  switch (f->wire) {
  case PMCP__PB_I64:
    *out = pmcp__pb_double(f->u);
    return 0;
  case PMCP__PB_I32:
    *out = pmcp__pb_float((uint32_t)f->u);
    return 0;
  case PMCP__PB_VARINT:
    *out = (double)(int64_t)f->u;
    return 0;
  default:
    return -1;
  }
}

static int push(double v, double **arr, size_t *n, size_t *cap)
{
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 16;
    double *a = realloc(*arr, c * sizeof *a);
    if (!a)
      return -2;
    *arr = a;
    *cap = c;
  }
  (*arr)[(*n)++] = v;
  return 0;
}

int pmcp__pb_doubles(const pmcp__pb_field *f, double **arr, size_t *n,
                     size_t *cap)
{
  if (f->wire == PMCP__PB_I64)
    return push(pmcp__pb_double(f->u), arr, n, cap);
  if (f->wire != PMCP__PB_LEN || f->len % 8 != 0)
    return -1;
  for (size_t i = 0; i < f->len; i += 8) {
    int rc = push(pmcp__pb_double(le(f->data + i, 8)), arr, n, cap);
    if (rc)
      return rc;
  }
  return 0;
}
