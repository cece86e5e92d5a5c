/* SPDX-License-Identifier: MIT */
/* Internal: a sum of doubles that cannot overflow on the way. Values of
 * magnitude 2^896 or more are added scaled by 2^-256 (exactly) into a
 * second part, so neither part overflows for up to 2^63 finite values,
 * and only the final rounding to one double gives +/-Inf, when the true
 * sum is out of its range. A mean taken from the parts stays finite
 * (values near DBL_MAX average to values near DBL_MAX), and huge values
 * that cancel leave the ordinary ones' sum whole. Below 2^896 it is the
 * plain sum in the order given, bit for bit, so stored summaries of
 * ordinary series are what they always were. */
#ifndef PMCP_UTIL_FSUM_H
#define PMCP_UTIL_FSUM_H

#include <math.h>

#define PMCP__FSUM_BIG 0x1p896
#define PMCP__FSUM_SHIFT 256

typedef struct pmcp__fsum {
  double lo;             /* the values below 2^896 */
  double hi;             /* the others times 2^-256 */
} pmcp__fsum;

/* Adds finite @p x (a value, or a finite sum of values). */
static inline void pmcp__fsum_add(pmcp__fsum *a, double x)
{
  if (fabs(x) < PMCP__FSUM_BIG)
    a->lo += x;
  else
    a->hi += ldexp(x, -PMCP__FSUM_SHIFT);
}

static inline void pmcp__fsum_merge(pmcp__fsum *a, const pmcp__fsum *b)
{
  a->lo += b->lo;
  a->hi += b->hi;
}

/* The sum rounded to a double: +/-Inf when it is out of range. */
static inline double pmcp__fsum_value(const pmcp__fsum *a)
{
  return a->hi == 0 ? a->lo : ldexp(a->hi, PMCP__FSUM_SHIFT) + a->lo;
}

/* The mean of the @p n (>= 1) values added, kept within their extremes
 * @p min..@p max (rounding may step just past them). */
static inline double pmcp__fsum_mean(const pmcp__fsum *a, double n, double min, double max)
{
  double m = a->hi == 0 ? a->lo / n : ldexp(a->hi / n, PMCP__FSUM_SHIFT) + a->lo / n;
  return m < min ? min : m > max ? max : m;
}

#endif
