/* SPDX-License-Identifier: MIT */
/* pmcp_time_parse() and pmcp_time_format() of store.h: the ISO 8601
 * times of util/isotime.c for programs that write the store. */
#include <string.h>

#include "probemcp/store.h"
#include "util/isotime.h"

PMCP_API int pmcp_time_parse(const char *s, int64_t *ms)
{
  if (!s || !ms)
    return PMCP_EINVAL;
  return pmcp__iso_parse_ms(s, ms, NULL) ? PMCP_EINVAL : 0;
}

PMCP_API int pmcp_time_format(int64_t ms, char *out, size_t size)
{
  if (!out)
    return PMCP_EINVAL;
  char t[PMCP_TIME_MAX + 16];
  pmcp__iso_ms(ms, t, sizeof t);
  size_t n = strlen(t);
  if (n >= size) {
    if (size)
      out[0] = '\0';
    return PMCP_ETOOBIG;
  }
  memcpy(out, t, n + 1);
  return 0;
}
