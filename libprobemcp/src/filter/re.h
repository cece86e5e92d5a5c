/* SPDX-License-Identifier: MIT */
/* The regular expressions of the filter language's `matches`: RE2 syntax
 * and RE2's engine (linear time in the subject, no backtracking), reached
 * from C through a small C++ shim (re2shim.cc).
 *
 * The shim is the library's only C++ and the only user of libre2 and
 * libstdc++, so it is a module of its own, libprobemcp-re2.so, loaded on the
 * first `matches` (re.c): a program that never filters with a pattern (say
 * probe-mcp-stdio serving the research toolset) does not load, relocate and
 * keep resident those libraries at start-up. The module is looked up next
 * to libprobemcp.so (the build tree and the install tree both keep it
 * there), then by name through the dynamic loader's search path. Programs
 * that link the shim in directly (the static flavour in this tree) use it
 * without loading anything. */
#ifndef PMCP_FILTER_RE_H
#define PMCP_FILTER_RE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pmcp__re pmcp__re;

/* Longest pattern accepted, in bytes: a filter is one request's argument. */
#define PMCP__RE_MAX_PATTERN 1024

/* 1 when patterns can be used (the module is loaded or linked in), else 0
 * with the reason in @p err. Thread-safe; loads the module at most once. */
int pmcp__re_available(char *err, size_t errlen);
/* Compiles @p pat (@p len bytes, UTF-8). On failure returns NULL and
 * writes RE2's reason (or "out of memory", "pattern too long", or why the
 * module is unavailable) to @p err. */
pmcp__re *pmcp__re_new(const char *pat, size_t len, char *err, size_t errlen);
/* 1 when the pattern matches somewhere in @p s (unanchored, like RE2's
 * PartialMatch: anchor with ^ and $), else 0. */
int pmcp__re_search(const pmcp__re *re, const char *s, size_t len);
void pmcp__re_free(pmcp__re *re);

/* What the module exports, under the name PMCP__RE2_API_SYMBOL. */
typedef struct pmcp__re2_ops {
  unsigned version; /* PMCP__RE2_API_VERSION */
  pmcp__re *(*compile)(const char *pat, size_t len, char *err, size_t errlen);
  int (*search)(const pmcp__re *re, const char *s, size_t len);
  void (*release)(pmcp__re *re);
} pmcp__re2_ops;

#define PMCP__RE2_API_VERSION 1u
#define PMCP__RE2_API_SYMBOL "pmcp__re2_api"
#define PMCP__RE2_MODULE "libprobemcp-re2.so"
/* The private folder of the library's modules, under its libdir: the
 * module is no library for others to link, so it stays out of libdir. */
#ifndef PMCP__RE2_SUBDIR /* set by the build from the soversion */
#define PMCP__RE2_SUBDIR "probemcp-0.1"
#endif

#ifdef __cplusplus
}
#endif

#endif
