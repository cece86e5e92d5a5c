/* SPDX-License-Identifier: MIT */
/* Pure header logic of the HTTP transport. Every function here reads
 * untrusted bytes with explicit lengths (header values are not
 * NUL-terminated in the arena) and is exercised by tests/fuzz/fuzz-http.c. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int is_ows(char c) { return c == ' ' || c == '\t'; }

static void trim(const char **p, const char **end)
{
  while (*p < *end && is_ows(**p))
    (*p)++;
  while (*end > *p && is_ows((*end)[-1]))
    (*end)--;
}

static int ieq(const char *a, size_t alen, const char *b)
{
  size_t blen = strlen(b);
  if (alen != blen)
    return 0;
  for (size_t i = 0; i < alen; i++)
    if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
      return 0;
  return 1;
}

/* q-value: 0 when "q=0", "q=0.", "q=0.0..." ; 1 otherwise (we only need
 * zero versus non-zero). Malformed q values count as acceptable, as most
 * servers do. */
static int q_is_zero(const char *p, const char *end)
{
  if (p >= end || *p != '0')
    return 0;
  p++;
  if (p < end && *p == '.') {
    p++;
    while (p < end && *p == '0')
      p++;
  }
  return p == end;
}

unsigned phttp_accept(const char *value, size_t len)
{
  if (!value)
    return ACCEPT_JSON | ACCEPT_SSE;
  /* Best specificity seen so far for each target and its q (0 = refused). */
  int spec[2] = {0, 0}, ok[2] = {0, 0};
  static const char *const types[2][2] = {{"application", "json"},
                                          {"text", "event-stream"}};
  const char *p = value, *end = value + len;
  while (p < end) {
    const char *e = memchr(p, ',', (size_t)(end - p));
    if (!e)
      e = end;
    const char *semi = memchr(p, ';', (size_t)(e - p));
    const char *mt = p, *mt_end = semi ? semi : e;
    trim(&mt, &mt_end);
    int zero = 0;
    if (semi) {
      const char *q = semi + 1;
      while (q < e) {
        const char *qe = memchr(q, ';', (size_t)(e - q));
        if (!qe)
          qe = e;
        const char *a = q, *b = qe;
        trim(&a, &b);
        if (b - a >= 2 && (a[0] == 'q' || a[0] == 'Q') && a[1] == '=') {
          const char *v = a + 2;
          zero = q_is_zero(v, b);
        }
        q = qe + 1;
      }
    }
    const char *slash = memchr(mt, '/', (size_t)(mt_end - mt));
    if (slash) {
      const char *t = mt, *st = slash + 1;
      size_t tl = (size_t)(slash - mt), stl = (size_t)(mt_end - st);
      for (int i = 0; i < 2; i++) {
        int s = 0;
        if (ieq(t, tl, "*") && ieq(st, stl, "*"))
          s = 1;
        else if (ieq(t, tl, types[i][0]) && ieq(st, stl, "*"))
          s = 2;
        else if (ieq(t, tl, types[i][0]) && ieq(st, stl, types[i][1]))
          s = 3;
        if (s > spec[i]) {
          spec[i] = s;
          ok[i] = !zero;
        } else if (s && s == spec[i] && !zero) {
          ok[i] = 1;
        }
      }
    }
    p = e + 1;
  }
  return (ok[0] ? ACCEPT_JSON : 0) | (ok[1] ? ACCEPT_SSE : 0);
}

int phttp_is_json_type(const char *value, size_t len)
{
  const char *p = value, *end = value + len;
  const char *semi = memchr(p, ';', len);
  if (semi)
    end = semi;
  trim(&p, &end);
  return ieq(p, (size_t)(end - p), "application/json");
}

static int copy_lower(const char *p, size_t n, char *out, size_t size)
{
  if (n == 0 || n >= size)
    return -1;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)p[i];
    if (ch <= 0x20 || ch >= 0x7f || ch == '/' || ch == '@' || ch == '?' ||
        ch == '#' || ch == '\\')
      return -1;
    out[i] = (char)tolower(ch);
  }
  out[n] = '\0';
  return 0;
}

static int digits(const char *p, const char *end)
{
  if (p >= end || end - p > 5)
    return 0;
  for (; p < end; p++)
    if (*p < '0' || *p > '9')
      return 0;
  return 1;
}

int phttp_host_name(const char *value, size_t len, char *name, size_t size)
{
  const char *p = value, *end = value + len;
  trim(&p, &end);
  if (p == end)
    return -1;
  const char *host_end;
  if (*p == '[') {
    const char *rb = memchr(p, ']', (size_t)(end - p));
    if (!rb)
      return -1;
    host_end = rb + 1;
    for (const char *q = p + 1; q < rb; q++)
      if (!isxdigit((unsigned char)*q) && *q != ':' && *q != '.')
        return -1;
  } else {
    host_end = memchr(p, ':', (size_t)(end - p));
    if (!host_end)
      host_end = end;
  }
  if (host_end < end) {
    if (*host_end != ':' || !digits(host_end + 1, end))
      return -1;
  }
  return copy_lower(p, (size_t)(host_end - p), name, size);
}

int phttp_origin_name(const char *value, size_t len, char *name, size_t size)
{
  const char *p = value, *end = value + len;
  trim(&p, &end);
  size_t n = (size_t)(end - p);
  size_t skip;
  if (n > 7 && ieq(p, 7, "http://"))
    skip = 7;
  else if (n > 8 && ieq(p, 8, "https://"))
    skip = 8;
  else
    return -1;
  p += skip;
  /* An origin has no path; tolerate a single trailing slash. */
  if (end > p && end[-1] == '/')
    end--;
  return phttp_host_name(p, (size_t)(end - p), name, size);
}

/* The port after a host (":8080"), else @p dflt; -1 when malformed. */
static long port_of(const char *p, const char *end, long dflt)
{
  if (*p == '[') {
    const char *rb = memchr(p, ']', (size_t)(end - p));
    if (!rb)
      return -1;
    p = rb + 1;
  } else {
    const char *c = memchr(p, ':', (size_t)(end - p));
    p = c ? c : end;
  }
  if (p == end)
    return dflt;
  long v = 0;
  if (*p != ':' || p + 1 == end || end - p > 6)
    return -1;
  for (const char *q = p + 1; q < end; q++) {
    if (*q < '0' || *q > '9')
      return -1;
    v = v * 10 + (*q - '0');
  }
  return v;
}

long phttp_host_port(const char *value, size_t len, long dflt)
{
  const char *p = value, *end = value + len;
  trim(&p, &end);
  if (p == end)
    return -1;
  long v = port_of(p, end, -2);
  return v == -2 ? dflt : v >= 1 && v <= 65535 ? v : -1;
}

int phttp_origin_same_port(const char *origin, size_t on, const char *host, size_t hn)
{
  char oname[256], hname[256];
  const char *p = origin, *end = origin + on;
  trim(&p, &end);
  long dflt;
  if ((size_t)(end - p) > 7 && ieq(p, 7, "http://"))
    p += 7, dflt = 80;
  else if ((size_t)(end - p) > 8 && ieq(p, 8, "https://"))
    p += 8, dflt = 443;
  else
    return 0;
  if (end > p && end[-1] == '/')
    end--;
  if (phttp_host_name(p, (size_t)(end - p), oname, sizeof oname) != 0)
    return 0;
  long oport = port_of(p, end, dflt);
  const char *h = host, *hend = host + hn;
  trim(&h, &hend);
  if (phttp_host_name(h, (size_t)(hend - h), hname, sizeof hname) != 0)
    return 0;
  /* A Host without a port: the origin's scheme's default (a TLS proxy in
   * front of us forwards "Host: name" for https://name). */
  long hport = port_of(h, hend, dflt);
  (void)oname;
  return oport > 0 && oport == hport;
}

int phttp_event_id(const char *value, size_t len, uint32_t *stream,
                   uint64_t *seq)
{
  const char *p = value, *end = value + len;
  trim(&p, &end);
  const char *us = memchr(p, '_', (size_t)(end - p));
  if (!us || us == p || us + 1 == end || us - p > 9 || end - us - 1 > 18)
    return -1;
  uint64_t a = 0, b = 0;
  for (const char *q = p; q < us; q++) {
    if (*q < '0' || *q > '9')
      return -1;
    a = a * 10 + (uint64_t)(*q - '0');
  }
  for (const char *q = us + 1; q < end; q++) {
    if (*q < '0' || *q > '9')
      return -1;
    b = b * 10 + (uint64_t)(*q - '0');
  }
  if (a > UINT32_MAX)
    return -1;
  *stream = (uint32_t)a;
  *seq = b;
  return 0;
}

int phttp_version_supported(const char *value, size_t len)
{
  /* The engine's one list: the modern revision and those initialize
   * negotiates. */
  return pmcp_protocol_version_era(value, len) != PMCP_ERA_NONE;
}

int phttp_valid_session_id(const char *value, size_t len)
{
  if (len == 0 || len > 64)
    return 0;
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)value[i] < 0x21 || (unsigned char)value[i] > 0x7e)
      return 0;
  return 1;
}

int phttp_base64_decode(const char *in, size_t n, char *out, size_t size,
                        size_t *len)
{
  /* Standard alphabet, padding optional (header values of SEP-2243). */
  unsigned acc = 0;
  int bits = 0;
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)in[i];
    int v;
    if (ch >= 'A' && ch <= 'Z') v = ch - 'A';
    else if (ch >= 'a' && ch <= 'z') v = ch - 'a' + 26;
    else if (ch >= '0' && ch <= '9') v = ch - '0' + 52;
    else if (ch == '+') v = 62;
    else if (ch == '/') v = 63;
    else if (ch == '=') { for (; i < n; i++) if (in[i] != '=') return -1; break; }
    else return -1;
    acc = (acc << 6) | (unsigned)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (o >= size)
        return -1;
      out[o++] = (char)((acc >> bits) & 0xff);
    }
  }
  *len = o;
  return 0;
}

phttp_known phttp_known_of(const char *name, size_t len)
{
  /* By length first: few case-insensitive compares at most. */
  static const struct { const char *name; phttp_known id; } by_len[21][4] = {
    [4] = {{"host", PH_HOST}},
    [6] = {{"origin", PH_ORIGIN}, {"accept", PH_ACCEPT}, {"expect", PH_EXPECT},
           {"cookie", PH_COOKIE}},
    [8] = {{"mcp-name", PH_NAME}},
    [10] = {{"mcp-method", PH_METHOD}},
    [12] = {{"content-type", PH_CONTENT_TYPE}},
    [13] = {{"last-event-id", PH_LAST_EVENT}},
    [14] = {{"mcp-session-id", PH_SESSION}},
    [20] = {{"mcp-protocol-version", PH_VERSION}},
  };
  if (len >= sizeof by_len / sizeof by_len[0])
    return PH_OTHER;
  for (int i = 0; i < 4 && by_len[len][i].name; i++)
    if (strncasecmp(name, by_len[len][i].name, len) == 0)
      return by_len[len][i].id;
  return PH_OTHER;
}
