/* SPDX-License-Identifier: MIT */
#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probemcp/error.h"
#include "util/cnum.h"

void pmcp_buf_dispose(pmcp_buf *buf)
{
  if (!buf)
    return;
  free(buf->ptr);
  buf->ptr = NULL;
  buf->len = buf->cap = 0;
}

int pmcp__buf_reserve(pmcp_buf *b, size_t extra)
{
  if (extra > SIZE_MAX - b->len - 1)
    return PMCP_ENOMEM;
  size_t need = b->len + extra + 1;
  if (need <= b->cap)
    return 0;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need)
    cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  char *p = realloc(b->ptr, cap);
  if (!p)
    return PMCP_ENOMEM;
  b->ptr = p;
  b->cap = cap;
  return 0;
}

int pmcp__buf_append(pmcp_buf *b, const void *data, size_t len)
{
  int rc = pmcp__buf_reserve(b, len);
  if (rc)
    return rc;
  if (len)
    memcpy(b->ptr + b->len, data, len);
  b->len += len;
  b->ptr[b->len] = '\0';
  return 0;
}

int pmcp__buf_puts(pmcp_buf *b, const char *s)
{
  return pmcp__buf_append(b, s, strlen(s));
}

int pmcp__buf_putc(pmcp_buf *b, char c)
{
  return pmcp__buf_append(b, &c, 1);
}

int pmcp__buf_vprintf(pmcp_buf *b, const char *fmt, va_list ap)
{
  va_list ap2;
  va_copy(ap2, ap);
  int n = pmcp__c_vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0)
    return PMCP_EINVAL;
  int rc = pmcp__buf_reserve(b, (size_t)n);
  if (rc)
    return rc;
  pmcp__c_vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
  return 0;
}

int pmcp__buf_printf(pmcp_buf *b, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int rc = pmcp__buf_vprintf(b, fmt, ap);
  va_end(ap);
  return rc;
}

int pmcp__buf_json_string(pmcp_buf *b, const char *s, size_t len)
{
  static const char hex[] = "0123456789abcdef";
  int rc = pmcp__buf_reserve(b, len + 2);
  if (rc)
    return rc;
  b->ptr[b->len++] = '"';
  for (size_t i = 0; i < len; i++) {
    /* Copy the run of bytes that need no escape in one go. */
    size_t run = i;
    while (run < len && (unsigned char)s[run] >= 0x20 && s[run] != '"' && s[run] != '\\')
      run++;
    if (run > i) {
      rc = pmcp__buf_append(b, s + i, run - i);
      if (rc)
        return rc;
      i = run;
      if (i >= len)
        break;
    }
    unsigned char c = (unsigned char)s[i];
    char esc = 0;
    switch (c) {
    case '"': esc = '"'; break;
    case '\\': esc = '\\'; break;
    case '\n': esc = 'n'; break;
    case '\r': esc = 'r'; break;
    case '\t': esc = 't'; break;
    case '\b': esc = 'b'; break;
    case '\f': esc = 'f'; break;
    default: break;
    }
    if (esc) {
      char e[2] = {'\\', esc};
      rc = pmcp__buf_append(b, e, 2);
    } else if (c < 0x20) {
      char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      rc = pmcp__buf_append(b, e, 6);
    } else {
      rc = pmcp__buf_append(b, &s[i], 1);
    }
    if (rc)
      return rc;
  }
  return pmcp__buf_putc(b, '"');
}

void pmcp__buf_reset(pmcp_buf *b)
{
  b->len = 0;
  if (b->ptr)
    b->ptr[0] = '\0';
}

char *pmcp__buf_steal(pmcp_buf *b, size_t *len)
{
  if (!b->ptr && pmcp__buf_reserve(b, 0))
    return NULL;
  char *p = b->ptr;
  if (len)
    *len = b->len;
  b->ptr = NULL;
  b->len = b->cap = 0;
  return p;
}

/* The public calls (probemcp/common.h): the library itself calls the
 * hidden pmcp__ names, which no host can interpose. */
int pmcp_buf_reserve(pmcp_buf *b, size_t extra) { return pmcp__buf_reserve(b, extra); }

int pmcp_buf_append(pmcp_buf *b, const void *data, size_t len)
{
  return pmcp__buf_append(b, data, len);
}

int pmcp_buf_puts(pmcp_buf *b, const char *s) { return pmcp__buf_puts(b, s); }

int pmcp_buf_putc(pmcp_buf *b, char c) { return pmcp__buf_putc(b, c); }

int pmcp_buf_printf(pmcp_buf *b, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int rc = pmcp__buf_vprintf(b, fmt, ap);
  va_end(ap);
  return rc;
}

int pmcp_buf_vprintf(pmcp_buf *b, const char *fmt, va_list ap)
{
  return pmcp__buf_vprintf(b, fmt, ap);
}

int pmcp_buf_json_string(pmcp_buf *b, const char *s, size_t len)
{
  return pmcp__buf_json_string(b, s, len);
}
