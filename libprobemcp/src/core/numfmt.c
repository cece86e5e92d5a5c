/* SPDX-License-Identifier: MIT */
/* The one number serializer every tool result goes through: six
 * significant figures, or the shortest round-trip form in lossless mode;
 * non-finite values become strings so JSON stays valid and nothing is lost
 * silently. */
#include "probemcp/json.h"
#include "util/abi.h"
#include "util/cnum.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An integer of magnitude below 10^15 as "%.*g" writes it at the precision
 * given (the fewest significant digits that round-trip, or 6): every such
 * integer is a distinct double, so the shortest precision is its digits
 * without trailing zeros. Returns 0 when @p v is not such an integer (the
 * caller formats it with printf). */
static size_t small_integer(double v, int lossless, char *out)
{
  if (!(v > -1e15 && v < 1e15) || v != (double)(int64_t)v || v == 0)
    return 0;
  uint64_t m = (uint64_t)(v < 0 ? -(int64_t)v : (int64_t)v);
  char d[20];
  int nd = 0;
  for (uint64_t x = m; x; x /= 10)
    d[nd++] = (char)('0' + x % 10); /* least significant first */
  int zeros = 0;
  while (d[zeros] == '0')
    zeros++;
  int sig = nd - zeros, x = nd - 1; /* significant digits, exponent */
  int prec = lossless ? sig : 6;
  size_t n = 0;
  if (v < 0)
    out[n++] = '-';
  if (x < prec) { /* fixed notation: the integer's digits */
    for (int i = nd - 1; i >= 0; i--)
      out[n++] = d[i];
  } else if (lossless) { /* d.ddde+XX, the significant digits only */
    out[n++] = d[nd - 1];
    if (sig > 1) {
      out[n++] = '.';
      for (int i = nd - 2; i >= zeros; i--)
        out[n++] = d[i];
    }
    out[n++] = 'e';
    out[n++] = '+';
    out[n++] = (char)('0' + x / 10);
    out[n++] = (char)('0' + x % 10);
  } else {
    return 0; /* six figures of a larger integer round: printf does it */
  }
  out[n] = '\0';
  return n;
}

/* The number's text in @p out, which has room for any. */
static size_t format(double v, unsigned flags, char out[PMCP_JSON_NUMBER_MAX])
{
  if (isnan(v))
    return (size_t)snprintf(out, PMCP_JSON_NUMBER_MAX, "\"NaN\"");
  if (isinf(v))
    return (size_t)snprintf(out, PMCP_JSON_NUMBER_MAX,
                            v < 0 ? "\"-Infinity\"" : "\"Infinity\"");
  size_t k = small_integer(v, (flags & PMCP_JSON_LOSSLESS) != 0, out);
  if (k)
    return k;
  int n;
  if (flags & PMCP_JSON_LOSSLESS) {
    /* The fewest significant digits that read back as @p v. If P digits
     * do, P + 1 do too (the P-digit decimal is also a (P+1)-digit one, and
     * the nearest (P+1)-digit decimal is no farther), so the precision is
     * found by bisection over 1..17 (17 always does). */
    int lo = 1, hi = 17;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      pmcp__c_snprintf(out, PMCP_JSON_NUMBER_MAX, "%.*g", mid, v);
      if (pmcp__c_strtod(out, NULL) == v)
        hi = mid;
      else
        lo = mid + 1;
    }
    n = pmcp__c_snprintf(out, PMCP_JSON_NUMBER_MAX, "%.*g", lo, v);
  } else {
    /* In the C locale: the host's LC_NUMERIC may have a comma or a
     * multi-byte decimal point. */
    n = pmcp__c_snprintf(out, PMCP_JSON_NUMBER_MAX, "%.6g", v);
  }
  return n < 0 ? 0 : (size_t)n;
}

/* Release 0.2's call, sized by the caller. With the version script it is
 * the default version of the name, and release 0.1's (below) stays for
 * programs linked against 0.1. */
PMCP_API size_t pmcp__json_format_number_0_2(double v, unsigned flags, char *out,
                                             size_t out_size);
PMCP__SYMVER_AS(pmcp__json_format_number_0_2, "pmcp_json_format_number@@PMCP_0.2")
size_t pmcp__json_format_number_0_2(double v, unsigned flags, char *out, size_t out_size)
{
  if (out_size >= PMCP_JSON_NUMBER_MAX)
    return format(v, flags, out); /* room for any: no copy */
  char tmp[PMCP_JSON_NUMBER_MAX];
  size_t n = format(v, flags, tmp);
  if (n < out_size)
    memcpy(out, tmp, n + 1);
  else if (out_size)
    out[0] = '\0'; /* too small: no cut number that reads as another */
  return n;
}

/* Release 0.1's call: a fixed array of PMCP_JSON_NUMBER_MAX bytes. */
PMCP_API size_t pmcp__json_format_number_0_1(double v, unsigned flags,
                                             char out[PMCP_JSON_NUMBER_MAX]);

PMCP__SYMVER_AS(pmcp__json_format_number_0_1, "pmcp_json_format_number@PMCP_0.1")
size_t pmcp__json_format_number_0_1(double v, unsigned flags, char out[PMCP_JSON_NUMBER_MAX])
{
  return format(v, flags, out);
}
