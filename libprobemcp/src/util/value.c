/* SPDX-License-Identifier: MIT */
/* Numbers in text, as the readers of structured text need them
 * (util/value.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/cnum.h"
#include "util/value.h"

static int ieq(const char *s, size_t len, const char *lit)
{
  size_t n = strlen(lit);
  if (len != n)
    return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z')
      c = (char)(c - 'A' + 'a');
    if (c != lit[i])
      return 0;
  }
  return 1;
}

int pmcp__imp_parse_double(const char *s, size_t len, double *out)
{
  char tmp[64];
  if (len == 0 || len >= sizeof tmp)
    return -1;
  const char *p = s;
  size_t n = len;
  int neg = 0;
  if (*p == '-' || *p == '+') {
    neg = *p == '-';
    p++;
    n--;
  }
  /* strtod also takes hex floats and "infinity"/"nan(...)" spellings;
   * accept only what Python and numpy write. */
  if (ieq(p, n, "nan")) {
    *out = NAN;
    return 0;
  }
  if (ieq(p, n, "inf") || ieq(p, n, "infinity")) {
    *out = neg ? -INFINITY : INFINITY;
    return 0;
  }
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' ||
          c == '-' || c == '+'))
      return -1;
  }
  memcpy(tmp, s, len);
  tmp[len] = '\0';
  char *end = NULL;
  errno = 0;
  double v = pmcp__c_strtod(tmp, &end);
  if (end != tmp + len || end == tmp)
    return -1;
  *out = v;
  return 0;
}

int pmcp__imp_parse_int64(const char *s, size_t len, int64_t *out)
{
  char tmp[32];
  if (len == 0 || len >= sizeof tmp)
    return -1;
  for (size_t i = 0; i < len; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (i == 0 && s[i] == '-')))
      return -1;
  memcpy(tmp, s, len);
  tmp[len] = '\0';
  char *end = NULL;
  errno = 0;
  long long v = strtoll(tmp, &end, 10);
  if (errno || end != tmp + len || end == tmp ||
      (tmp[0] == '-' && len == 1))
    return -1;
  *out = (int64_t)v;
  return 0;
}
