/* The regular expressions of the filter language's `matches`: RE2 syntax
 * and RE2's engine (linear time in the subject, no backtracking), reached
 * from C through a small C++ shim (re2shim.cc). */
#ifndef PMCP_FILTER_RE_H
#define PMCP_FILTER_RE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pmcp__re pmcp__re;

/* Longest pattern accepted, in bytes: a filter is one request's argument. */
#define PMCP__RE_MAX_PATTERN 1024

/* Compiles @p pat (@p len bytes, UTF-8). On failure returns NULL and
 * writes RE2's reason (or "out of memory", "pattern too long") to @p err. */
pmcp__re *pmcp__re_new(const char *pat, size_t len, char *err, size_t errlen);
/* 1 when the pattern matches somewhere in @p s (unanchored, like RE2's
 * PartialMatch: anchor with ^ and $), else 0. */
int pmcp__re_search(const pmcp__re *re, const char *s, size_t len);
void pmcp__re_free(pmcp__re *re);

#ifdef __cplusplus
}
#endif

#endif
