/* SPDX-License-Identifier: MIT */
/* ISO 8601 instants as epoch milliseconds, both ways: what the tracking
 * toolset shows for wall-clock values and datetime attributes, and what
 * its filters and time ranges accept. */
#ifndef PMCP_UTIL_ISOTIME_H
#define PMCP_UTIL_ISOTIME_H

#include <stddef.h>
#include <stdint.h>

/* "2024-05-01T12:00:00.250Z": UTC with milliseconds (@p size >= 32). */
void pmcp__iso_ms(int64_t ms, char *out, size_t size);
/* An ISO 8601 date or date-time ("2024-05-01", "2024-05-01T12:00:00.250Z",
 * "...+02:00", "2024-05-01 12:00"; UTC without a zone) as epoch
 * milliseconds in *@p ms; *@p date_only (may be NULL) tells a date alone
 * (its midnight, UTC). @return 0, or PMCP_EINVAL when it is not one. */
int pmcp__iso_parse_ms(const char *s, int64_t *ms, int *date_only);
/* True when @p s is exactly the form pmcp__iso_ms() writes. */
int pmcp__iso_is_canonical(const char *s);

#endif
