/* SPDX-License-Identifier: MIT */
#include "util/json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "probemcp/error.h"
#include "probemcp/json.h"
#include "util/buf.h"
#include "util/cnum.h"

/* cJSON limits nesting to 1000; we stop a little above so that any text it
 * accepted can be scanned, and never recurse without bound. */
#define SCAN_DEPTH 1100

static const char *ws(const char *p, const char *end)
{
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

/* p at the opening quote; strict: no raw control characters, valid escapes
 * (so that anything it accepts can be copied into a one-line message). */
static const char *skip_string(const char *p, const char *end)
{
  size_t used;
  if (pmcp_json_string_decode(p, (size_t)(end - p), 0, NULL, &used, NULL, NULL))
    return NULL;
  return p + used;
}

static int digit(const char *p, const char *end)
{
  return p < end && *p >= '0' && *p <= '9';
}

/* RFC 8259 number grammar. */
static const char *skip_number(const char *p, const char *end)
{
  if (p < end && *p == '-')
    p++;
  if (!digit(p, end))
    return NULL;
  if (*p == '0')
    p++;
  else
    while (digit(p, end))
      p++;
  if (p < end && *p == '.') {
    p++;
    if (!digit(p, end))
      return NULL;
    while (digit(p, end))
      p++;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-'))
      p++;
    if (!digit(p, end))
      return NULL;
    while (digit(p, end))
      p++;
  }
  return p;
}

/* The member at @p p of an object's text ("key": value, whitespace
 * allowed): its key's raw span [*ks, *ke) and the value's start; NULL
 * when the text there is no member. */
static const char *member_head(const char *p, const char *end, const char **ks,
                               const char **ke)
{
  p = ws(p, end);
  if (p >= end || *p != '"')
    return NULL;
  *ks = p + 1;
  p = skip_string(p, end);
  if (!p)
    return NULL;
  *ke = p - 1;
  p = ws(p, end);
  if (p >= end || *p != ':')
    return NULL;
  return ws(p + 1, end);
}

static const char *skip_value(const char *p, const char *end, int depth)
{
  p = ws(p, end);
  if (p >= end || depth > SCAN_DEPTH)
    return NULL;
  switch (*p) {
  case '"':
    return skip_string(p, end);
  case '{':
  case '[': {
    char close = *p == '{' ? '}' : ']';
    int obj = *p == '{';
    p = ws(p + 1, end);
    if (p < end && *p == close)
      return p + 1;
    for (;;) {
      if (obj) {
        const char *ks, *ke;
        if (!(p = member_head(p, end, &ks, &ke)))
          return NULL;
      }
      p = skip_value(p, end, depth + 1);
      if (!p)
        return NULL;
      p = ws(p, end);
      if (p >= end)
        return NULL;
      if (*p == close)
        return p + 1;
      if (*p != ',')
        return NULL;
      p++;
    }
  }
  case 't':
    return end - p >= 4 && memcmp(p, "true", 4) == 0 ? p + 4 : NULL;
  case 'f':
    return end - p >= 5 && memcmp(p, "false", 5) == 0 ? p + 5 : NULL;
  case 'n':
    return end - p >= 4 && memcmp(p, "null", 4) == 0 ? p + 4 : NULL;
  default:
    return skip_number(p, end);
  }
}

const char *pmcp__json_skip(const char *p, const char *end)
{
  return skip_value(p, end, 0);
}

int pmcp__json_valid(const char *p, size_t len)
{
  const char *end = p + len;
  const char *e = skip_value(p, end, 0);
  return e && ws(e, end) == end;
}

/* Compares the raw string token [s, e) (quotes excluded, already
 * checked) with @p key, decoding escapes. */
static int key_equals(const char *s, const char *e, const char *key)
{
  size_t n = (size_t)(e - s), k = strlen(key);
  if (!memchr(s, '\\', n))
    return n == k && memcmp(s, key, n) == 0;
  /* every escape is at most six bytes for each byte it stands for */
  if (n > 6 * k)
    return 0;
  char tmp[256], *buf = n + 2 <= sizeof tmp ? tmp : malloc(n + 2);
  size_t got;
  int eq = buf && pmcp_json_string_decode(s - 1, n + 2, 0, buf, NULL, &got, NULL) == 0 &&
           got == k && memcmp(buf, key, k) == 0;
  if (buf != tmp)
    free(buf);
  return eq;
}

int pmcp__json_member(const char *obj, size_t len, const char *key,
                      const char **val, size_t *val_len)
{
  const char *end = obj + len;
  const char *p = ws(obj, end);
  if (p >= end || *p != '{')
    return 0;
  p = ws(p + 1, end);
  if (p < end && *p == '}')
    return 0;
  for (;;) {
    const char *ks, *ke;
    const char *vs = member_head(p, end, &ks, &ke);
    const char *ve = vs ? skip_value(vs, end, 1) : NULL;
    if (!ve)
      return 0;
    if (key_equals(ks, ke, key)) {
      *val = vs;
      *val_len = (size_t)(ve - vs);
      return 1;
    }
    p = ws(ve, end);
    if (p >= end || *p != ',')
      return 0;
    p++;
  }
}

/* The closing quote of a well-formed string whose text starts at @p p
 * (after its opening quote), or NULL: quotes found by memchr, one preceded
 * by an odd run of backslashes is escaped. */
static const char *trusted_quote(const char *p, const char *end)
{
  for (;;) {
    const char *q = memchr(p, '"', (size_t)(end - p));
    if (!q)
      return NULL;
    size_t bs = 0;
    while (q - bs > p && q[-1 - (ptrdiff_t)bs] == '\\')
      bs++;
    if (!(bs & 1))
      return q;
    p = q + 1;
  }
}

/* Past the value at @p p of text known to be well-formed (no checks but
 * the bounds): strings skipped by their quotes, containers by depth. */
static const char *skip_trusted(const char *p, const char *end)
{
  p = ws(p, end);
  int depth = 0;
  while (p < end) {
    char c = *p++;
    if (c == '"') {
      if (!(p = trusted_quote(p, end)))
        return NULL;
      p++;
    } else if (c == '{' || c == '[') {
      depth++;
      continue;
    } else if (c == '}' || c == ']') {
      depth--;
    } else if (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      /* between the tokens of an array or object: the next token may be
       * a string or a container (skipped above as a literal, it swallowed
       * its opening quote or bracket) */
      continue;
    } else {
      /* a number or literal: up to its end */
      while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' &&
             *p != '\t' && *p != '\n' && *p != '\r')
        p++;
    }
    if (depth <= 0)
      return depth == 0 ? p : NULL;
  }
  return NULL;
}

/* member_head() of well-formed text: the key skipped by its quotes. */
static const char *member_head_trusted(const char *p, const char *end, const char **ks,
                                       const char **ke)
{
  p = ws(p, end);
  if (p >= end || *p != '"')
    return NULL;
  *ks = ++p;
  if (!(p = trusted_quote(p, end)))
    return NULL;
  *ke = p++;
  p = ws(p, end);
  if (p >= end || *p != ':')
    return NULL;
  return ws(p + 1, end);
}

size_t pmcp__json_members(const char *obj, size_t len, const char *const *keys,
                          size_t n, const char **vals, size_t *lens)
{
  size_t found = 0;
  for (size_t i = 0; i < n; i++)
    vals[i] = NULL, lens[i] = 0;
  const char *end = obj + len;
  const char *p = ws(obj, end);
  if (p >= end || *p != '{')
    return 0;
  p = ws(p + 1, end);
  if (p < end && *p == '}')
    return 0;
  /* The keys' lengths once, and a member's escapes looked for once: a
   * list page asks this of every member of every item. */
  size_t klen[32];
  for (size_t i = 0; i < n && i < 32; i++)
    klen[i] = strlen(keys[i]);
  while (found < n) {
    const char *ks, *ke;
    const char *vs = member_head_trusted(p, end, &ks, &ke);
    const char *ve = vs ? skip_trusted(vs, end) : NULL;
    if (!ve)
      return found;
    size_t kn = (size_t)(ke - ks);
    int plain = !memchr(ks, '\\', kn);
    for (size_t i = 0; i < n; i++) {
      if (vals[i])
        continue;
      int eq = plain && i < 32 ? kn == klen[i] && memcmp(ks, keys[i], kn) == 0
                               : key_equals(ks, ke, keys[i]);
      if (eq) {
        vals[i] = vs;
        lens[i] = (size_t)(ve - vs);
        found++;
        break;
      }
    }
    p = ws(ve, end);
    if (p >= end || *p != ',')
      return found;
    p++;
  }
  return found;
}

const char *pmcp__json_element(const char *p, const char *end, const char **val,
                               size_t *val_len)
{
  p = ws(p, end);
  if (p < end && *p == ',')
    p = ws(p + 1, end);
  if (p >= end || *p == ']')
    return NULL;
  const char *e = skip_trusted(p, end);
  if (!e)
    return NULL;
  *val = p;
  *val_len = (size_t)(e - p);
  return e;
}

int pmcp__json_path(const char *obj, size_t len, const char *const *keys,
                    size_t n_keys, const char **val, size_t *val_len)
{
  const char *p = obj;
  size_t n = len;
  for (size_t i = 0; i < n_keys; i++) {
    if (!pmcp__json_member(p, n, keys[i], &p, &n))
      return 0;
  }
  *val = p;
  *val_len = n;
  return 1;
}

int pmcp__json_is_integer(const char *p, size_t len)
{
  size_t i = 0;
  if (i < len && p[i] == '-')
    i++;
  if (i >= len)
    return 0;
  if (p[i] == '0')
    return i + 1 == len;
  for (; i < len; i++)
    if (p[i] < '0' || p[i] > '9')
      return 0;
  return 1;
}

int pmcp__utf8_valid(const char *s, size_t len)
{
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < len) {
    /* ASCII runs 32, then eight bytes at a time: messages are mostly
     * ASCII (one test per 32 bytes). */
    while (len - i >= 32) {
      uint64_t w[4];
      memcpy(w, p + i, 32);
      if ((w[0] | w[1] | w[2] | w[3]) & 0x8080808080808080ull)
        break;
      i += 32;
    }
    while (len - i >= 8) {
      uint64_t w;
      memcpy(&w, p + i, 8);
      if (w & 0x8080808080808080ull)
        break;
      i += 8;
    }
    if (i >= len)
      break;
    unsigned c = p[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t n;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      cp = c & 0x07;
    } else {
      return 0;
    }
    if (len - i <= n)
      return 0;
    for (size_t k = 1; k <= n; k++) {
      if ((p[i + k] & 0xc0) != 0x80)
        return 0;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return 0;
    i += n + 1;
  }
  return 1;
}

int pmcp_utf8_valid(const char *s, size_t len)
{
  return s ? pmcp__utf8_valid(s, len) : len == 0;
}

size_t pmcp__utf8_count(const char *s, size_t len)
{
  size_t n = 0;
  for (size_t i = 0; i < len; i++)
    if (((unsigned char)s[i] & 0xc0) != 0x80)
      n++;
  return n;
}

int pmcp__json_minify(pmcp_buf *out, const char *p, size_t len)
{
  const char *end = p + len;
  if (!pmcp__json_valid(p, len))
    return PMCP_EINVAL;
  int rc = pmcp__buf_reserve(out, len);
  if (rc)
    return rc;
  while (p < end) {
    char c = *p;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      p++;
      continue;
    }
    if (c == '"') {
      const char *e = skip_string(p, end);
      if (!e)
        return PMCP_EINVAL;
      rc = pmcp__buf_append(out, p, (size_t)(e - p));
      if (rc)
        return rc;
      p = e;
      continue;
    }
    rc = pmcp__buf_putc(out, c);
    if (rc)
      return rc;
    p++;
  }
  return 0;
}

int pmcp__buf_number(pmcp_buf *b, double v)
{
  if (!isfinite(v))
    return PMCP_EINVAL;
  if (v == floor(v) && fabs(v) <= 9007199254740992.0)
    return pmcp__buf_printf(b, "%.0f", v == 0 ? 0.0 : v);
  char tmp[40];
  for (int prec = 15; prec <= 17; prec++) {
    pmcp__c_snprintf(tmp, sizeof tmp, "%.*g", prec, v);
    if (pmcp__c_strtod(tmp, NULL) == v)
      break;
  }
  return pmcp__buf_puts(b, tmp);
}
