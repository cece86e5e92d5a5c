/* SPDX-License-Identifier: MIT */
/* ISO 8601 instants as epoch milliseconds (isotime.h). */
#include "util/isotime.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "probemcp/error.h"

void pmcp__iso_ms(int64_t ms, char *out, size_t size)
{
  /* floor division, without negating (INT64_MIN has no opposite) */
  int frac = (int)(ms % 1000);
  int64_t sec = ms / 1000 - (frac < 0);
  if (frac < 0)
    frac += 1000;
  time_t t = (time_t)sec;
  struct tm tm;
  char base[40];
  if (!gmtime_r(&t, &tm) || !strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm)) {
    snprintf(out, size, "%lld", (long long)ms);
    return;
  }
  snprintf(out, size, "%s.%03dZ", base, frac);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/* Reads @p n digits at *@p s into *@p v; 0 when they are not there. */
static int digits(const char **s, int n, int64_t *v)
{
  *v = 0;
  for (int i = 0; i < n; i++, (*s)++) {
    if (**s < '0' || **s > '9')
      return 0;
    *v = *v * 10 + (**s - '0');
  }
  return 1;
}

int pmcp__iso_parse_ms(const char *s, int64_t *ms, int *date_only)
{
  int64_t y, mo, d, h = 0, mi = 0, sec = 0, frac = 0, tz = 0;
  if (date_only)
    *date_only = 0;
  if (!digits(&s, 4, &y) || *s++ != '-' || !digits(&s, 2, &mo) || *s++ != '-' ||
      !digits(&s, 2, &d) || mo < 1 || mo > 12 || d < 1 || d > 31)
    return PMCP_EINVAL;
  if (!*s && date_only)
    *date_only = 1;
  if (*s == 'T' || *s == 't' || *s == ' ') {
    s++;
    if (!digits(&s, 2, &h) || *s++ != ':' || !digits(&s, 2, &mi) || h > 23 || mi > 59)
      return PMCP_EINVAL;
    if (*s == ':') {
      s++;
      if (!digits(&s, 2, &sec) || sec > 60)
        return PMCP_EINVAL;
      if (*s == '.') {
        s++;
        int64_t scale = 100;
        if (*s < '0' || *s > '9')
          return PMCP_EINVAL;
        for (; *s >= '0' && *s <= '9'; s++, scale /= 10)
          frac += scale * (*s - '0'); /* milliseconds; finer digits are cut */
      }
    }
    if (*s == 'Z' || *s == 'z') {
      s++;
    } else if (*s == '+' || *s == '-') {
      int sign = *s++ == '-' ? -1 : 1;
      int64_t th, tm;
      if (!digits(&s, 2, &th))
        return PMCP_EINVAL;
      if (*s == ':')
        s++;
      if (!digits(&s, 2, &tm) || th > 23 || tm > 59)
        return PMCP_EINVAL;
      tz = sign * (th * 60 + tm);
    }
  }
  if (*s)
    return PMCP_EINVAL;
  *ms = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi - tz) * 60000 + sec * 1000 + frac;
  return 0;
}

int pmcp__iso_is_canonical(const char *s)
{
  /* 2024-05-01T12:00:00.250Z */
  static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
  for (size_t i = 0; i < sizeof shape - 1; i++) {
    if (shape[i] == 'd' ? s[i] < '0' || s[i] > '9' : s[i] != shape[i])
      return 0;
  }
  return s[sizeof shape - 1] == '\0';
}
