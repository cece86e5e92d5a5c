// SPDX-License-Identifier: MIT
// C entry points to RE2 for the filter language. RE2 guarantees time
// linear in the subject and refuses constructs that need backtracking
// (backreferences, lookaround), so a hostile pattern cannot stall a call.
// Built as the module libprobemcp-re2.so, loaded by re.c on first use; its
// one exported symbol is the table pmcp__re2_api.
#include "filter/re.h"

#include <re2/re2.h>

#include <cstdio>
#include <cstring>
#include <new>

struct pmcp__re {
  re2::RE2 *re;
};

static void put_err(char *err, size_t errlen, const char *msg)
{
  if (err && errlen)
    std::snprintf(err, errlen, "%s", msg);
}

static pmcp__re *re_compile(const char *pat, size_t len, char *err, size_t errlen)
{
  if (!pat) {
    put_err(err, errlen, "no pattern");
    return nullptr;
  }
  if (len > PMCP__RE_MAX_PATTERN) {
    put_err(err, errlen, "pattern too long (at most 1024 bytes)");
    return nullptr;
  }
  try {
    re2::RE2::Options o;
    o.set_log_errors(false);
    o.set_encoding(re2::RE2::Options::EncodingUTF8);
    // Bounds the compiled program: large counted repetitions such as
    // (a{1000}){1000} fail to compile instead of eating memory.
    o.set_max_mem(8 << 20);
    pmcp__re *r = new pmcp__re;
    r->re = new re2::RE2(re2::StringPiece(pat, len), o);
    if (!r->re->ok()) {
      put_err(err, errlen, r->re->error().c_str());
      delete r->re;
      delete r;
      return nullptr;
    }
    return r;
  } catch (const std::bad_alloc &) {
    put_err(err, errlen, "out of memory");
    return nullptr;
  } catch (...) {
    put_err(err, errlen, "cannot compile the pattern");
    return nullptr;
  }
}

static int re_search(const pmcp__re *r, const char *s, size_t len)
{
  if (!r || !s)
    return 0;
  return re2::RE2::PartialMatch(re2::StringPiece(s, len), *r->re) ? 1 : 0;
}

static void re_release(pmcp__re *r)
{
  if (!r)
    return;
  delete r->re;
  delete r;
}

extern "C" {
// Default visibility: the module is built with hidden visibility otherwise.
__attribute__((visibility("default"))) extern const pmcp__re2_ops pmcp__re2_api;
const pmcp__re2_ops pmcp__re2_api = {PMCP__RE2_API_VERSION, re_compile, re_search, re_release};
}
