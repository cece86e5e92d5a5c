/* SPDX-License-Identifier: MIT */
/* Versioned public structs (ABI policy in libprobemcp(7)): a struct's
 * version field says which of its layouts the caller was compiled with,
 * and every version from 1 to the current one is accepted. A struct only
 * grows at its end, so a caller's older version is a prefix of the current
 * layout: read it through pmcp__abi_copy into a zeroed current one. */
#ifndef PMCP_UTIL_ABI_H
#define PMCP_UTIL_ABI_H

#include <stddef.h>
#include <string.h>

/* PMCP__SYMVER_AS(name, "pub@VER") before the definition of @p name
 * exports it as pub at symbol version VER ("pub@@VER": the default), so
 * that a call whose types changed keeps its old version for programs
 * linked against an older release. The attribute survives link-time
 * optimization, which a top-level .symver does not. The build always
 * links with the version script (meson refuses a linker without one). */
#if defined(__has_attribute)
#if __has_attribute(symver)
#define PMCP__SYMVER_AS(name, sym) __attribute__((symver(sym)))
#endif
#endif
#ifndef PMCP__SYMVER_AS
#define PMCP__SYMVER_AS(name, sym) __asm__(".symver " #name ", " sym);
#endif

/* 1 when @p v is a version this library knows (1 .. @p current). */
#define PMCP__VERSION_OK(v, current) ((v) >= 1u && (v) <= (unsigned)(current))

/* Copies the @p have bytes a caller's struct holds (0: as many as @p want)
 * into @p dst of @p want bytes, zeroing the rest: fields newer than the
 * caller read as 0. */
static inline void pmcp__abi_copy(void *dst, size_t want, const void *src, size_t have)
{
  size_t n = have && have < want ? have : want;
  memcpy(dst, src, n);
  if (n < want)
    memset((char *)dst + n, 0, want - n);
}

#endif
