/* SPDX-License-Identifier: MIT */
#include "util/base64url.h"

#include "util/buf.h"

static const char alphabet[] =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t pmcp__b64url_len(size_t n)
{
  return n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
}

int pmcp__b64url_encode(pmcp_buf *out, const void *data, size_t len)
{
  const unsigned char *p = data;
  int rc = pmcp__buf_reserve(out, pmcp__b64url_len(len));
  if (rc)
    return rc;
  char *o = out->ptr + out->len;
  size_t i = 0;
  for (; i + 3 <= len; i += 3) {
    unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
    *o++ = alphabet[v >> 18];
    *o++ = alphabet[(v >> 12) & 63];
    *o++ = alphabet[(v >> 6) & 63];
    *o++ = alphabet[v & 63];
  }
  if (len - i == 1) {
    unsigned v = (unsigned)p[i] << 16;
    *o++ = alphabet[v >> 18];
    *o++ = alphabet[(v >> 12) & 63];
  } else if (len - i == 2) {
    unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;
    *o++ = alphabet[v >> 18];
    *o++ = alphabet[(v >> 12) & 63];
    *o++ = alphabet[(v >> 6) & 63];
  }
  out->len = (size_t)(o - out->ptr);
  out->ptr[out->len] = '\0';
  return 0;
}

static int sextet(unsigned char c)
{
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '-')
    return 62;
  if (c == '_')
    return 63;
  return -1;
}

int pmcp__b64url_decode(const char *in, size_t len, unsigned char *out,
                        size_t *out_len)
{
  *out_len = 0;
  /* Classify characters first so a standard-base64 or percent-encoded
   * cursor is reported as re-encoded even when its length is also off. */
  int bad = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)in[i];
    if (c == '+' || c == '/' || c == '=' || c == '%')
      return PMCP__B64_FOREIGN;
    if (sextet(c) < 0)
      bad = 1;
  }
  if (bad)
    return PMCP__B64_BADCHAR;
  if (len % 4 == 1)
    return PMCP__B64_BADLEN;
  size_t n = 0, i = 0;
  for (; i + 4 <= len; i += 4) {
    unsigned v = (unsigned)sextet((unsigned char)in[i]) << 18 |
                 (unsigned)sextet((unsigned char)in[i + 1]) << 12 |
                 (unsigned)sextet((unsigned char)in[i + 2]) << 6 |
                 (unsigned)sextet((unsigned char)in[i + 3]);
    out[n++] = (unsigned char)(v >> 16);
    out[n++] = (unsigned char)(v >> 8);
    out[n++] = (unsigned char)v;
  }
  size_t rest = len - i;
  if (rest == 2) {
    unsigned a = (unsigned)sextet((unsigned char)in[i]);
    unsigned b = (unsigned)sextet((unsigned char)in[i + 1]);
    out[n++] = (unsigned char)(a << 2 | b >> 4);
    if (b & 15) {
      *out_len = n;
      return PMCP__B64_NONCANON;
    }
  } else if (rest == 3) {
    unsigned a = (unsigned)sextet((unsigned char)in[i]);
    unsigned b = (unsigned)sextet((unsigned char)in[i + 1]);
    unsigned c = (unsigned)sextet((unsigned char)in[i + 2]);
    out[n++] = (unsigned char)(a << 2 | b >> 4);
    out[n++] = (unsigned char)((b & 15) << 4 | c >> 2);
    if (c & 3) {
      *out_len = n;
      return PMCP__B64_NONCANON;
    }
  }
  *out_len = n;
  return PMCP__B64_OK;
}
