/* SPDX-License-Identifier: MIT */
/* pmcp_json_string_decode(): the one decoder of JSON string literals, used
 * by the engine's message parser (core/jdoc.c) and by hosts (probe log's
 * line reader). */
#include <stdint.h>
#include <string.h>

#include "probemcp/json.h"

static int hex4(const char *p, unsigned *out)
{
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= (unsigned)(c - 'A' + 10);
    else
      return -1;
  }
  *out = v;
  return 0;
}

/* The UTF-8 of @p cp into @p w (NULL: only counted); its length. */
static size_t put_utf8(char *w, unsigned cp)
{
  char b[4];
  size_t n;
  if (cp < 0x80) {
    b[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    b[0] = (char)(0xC0 | (cp >> 6));
    b[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    b[0] = (char)(0xE0 | (cp >> 12));
    b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    b[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    b[0] = (char)(0xF0 | (cp >> 18));
    b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    b[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  if (w)
    memcpy(w, b, n);
  return n;
}

/* Past the plain bytes from @p p: stops at a quote, a backslash, a control
 * character or @p end. Eight bytes at a time while eight remain (a hit
 * may be a false one after a real one, never before). */
static const char *plain_run(const char *p, const char *end)
{
  const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  while (end - p >= 8) {
    uint64_t x;
    memcpy(&x, p, 8);
    uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
    uint64_t hit = ((q - ones) & ~q) | ((b - ones) & ~b) | (x - ones * 0x20);
    if ((hit & ~x & high) != 0)
      break;
    p += 8;
  }
  while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
    p++;
  return p;
}

static int fail(size_t *used, const char **expected, const char *in, const char *at,
                const char *what)
{
  *used = (size_t)(at - in);
  if (expected)
    *expected = what;
  return PMCP_EINVAL;
}

int pmcp_json_string_decode(const char *in, size_t len, unsigned flags, char *out,
                            size_t *used, size_t *out_len, const char **expected)
{
  size_t u0, n0;
  if (!used)
    used = &u0;
  if (!out_len)
    out_len = &n0;
  if (!in || len == 0 || *in != '"')
    return fail(used, expected, in, in, "a string (\")");
  const char *p = in + 1, *end = in + len;
  size_t n = 0;
  for (;;) {
    const char *q = plain_run(p, end);
    if (out && out + n != p)
      memmove(out + n, p, (size_t)(q - p));
    n += (size_t)(q - p);
    p = q;
    if (p >= end)
      return fail(used, expected, in, p, "the closing quote of a string");
    if (*p == '"')
      break;
    if (*p != '\\')
      return fail(used, expected, in, p,
                  "a control character escaped in a string (\\n, \\u0001)");
    if (end - p < 2)
      return fail(used, expected, in, p + 1, "an escape");
    char e = p[1], c;
    switch (e) {
    case '"': c = '"'; break;
    case '\\': c = '\\'; break;
    case '/': c = '/'; break;
    case 'b': c = '\b'; break;
    case 'f': c = '\f'; break;
    case 'n': c = '\n'; break;
    case 'r': c = '\r'; break;
    case 't': c = '\t'; break;
    case 'u': {
      unsigned cp, lo;
      const char *h = p + 2;
      if (end - h < 4 || hex4(h, &cp))
        return fail(used, expected, in, h, "four hex digits after \\u");
      if (cp >= 0xDC00 && cp <= 0xDFFF)
        return fail(used, expected, in, p, "a high surrogate before this low one");
      h += 4;
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (end - h < 6 || h[0] != '\\' || h[1] != 'u' || hex4(h + 2, &lo) || lo < 0xDC00 ||
            lo > 0xDFFF)
          return fail(used, expected, in, h,
                      "the low half of a surrogate pair (\\uDC00-\\uDFFF)");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        h += 6;
      }
      if (cp == 0 && (flags & PMCP_JSON_NO_NUL))
        return fail(used, expected, in, p, "a character other than \\u0000");
      /* the escape is longer than its UTF-8: writing never overtakes p */
      n += put_utf8(out ? out + n : NULL, cp);
      p = h;
      continue;
    }
    default:
      return fail(used, expected, in, p + 1,
                  "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
    }
    if (out)
      out[n] = c;
    n++;
    p += 2;
  }
  if (out)
    out[n] = '\0';
  *used = (size_t)(p + 1 - in);
  *out_len = n;
  return 0;
}
