/* SPDX-License-Identifier: MIT */
/* Reproducible random bits for the suites that try many values (xorshift64:
 * the same sequence on every run and platform). */
#ifndef PMCP_TEST_RANDOM_H
#define PMCP_TEST_RANDOM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The next value of the sequence in @p x (which must not be 0). */
static inline uint64_t tr_next(uint64_t *x)
{
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* A finite double of random bits: every category (zeros, subnormals,
 * normals of every exponent) turns up. */
static inline double tr_finite(uint64_t *x)
{
  double v;
  do {
    uint64_t bits = tr_next(x);
    memcpy(&v, &bits, sizeof v);
  } while (!isfinite(v));
  return v;
}

#endif
