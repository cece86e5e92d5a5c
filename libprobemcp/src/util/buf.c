/* SPDX-License-Identifier: MIT */
#include "util/buf.h"

#include <stdint.h>
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

/* Bytes an escape adds to a byte of a JSON string: 1 for the two-character
 * escapes (quote, backslash, \b \t \n \f \r), 5 for \u00XX, 0 for a byte
 * copied as it is (every byte from 0x80 up is 0: UTF-8 is copied). */
static const unsigned char esc_tab[256] = {
  5, 5, 5, 5, 5, 5, 5, 5, 1, 1, 1, 5, 1, 1, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
  0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static unsigned char esc_extra(unsigned char c)
{
  return esc_tab[c];
}

int pmcp__buf_json_string(pmcp_buf *b, const char *s, size_t len)
{
  static const char hex[] = "0123456789abcdef";
  /* One pass for the exact length, one that writes in place: a page's
   * text is mostly quotes between short runs. */
  size_t extra = 0;
  for (size_t i = 0; i < len; i++)
    extra += esc_extra((unsigned char)s[i]);
  if (len > SIZE_MAX / 2 - 2 || extra > SIZE_MAX / 2)
    return PMCP_ENOMEM;
  int rc = pmcp__buf_reserve(b, len + extra + 2);
  if (rc)
    return rc;
  char *o = b->ptr + b->len;
  *o++ = '"';
  size_t i = 0;
  while (i < len) {
    size_t run = i;
    while (run < len && !esc_extra((unsigned char)s[run]))
      run++;
    memcpy(o, s + i, run - i);
    o += run - i;
    if (run >= len)
      break;
    unsigned char c = (unsigned char)s[run];
    char e = c == '"' ? '"' : c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\r' ? 'r'
           : c == '\t' ? 't' : c == '\b' ? 'b' : c == '\f' ? 'f' : 0;
    *o++ = '\\';
    if (e) {
      *o++ = e;
    } else {
      *o++ = 'u';
      *o++ = '0';
      *o++ = '0';
      *o++ = hex[c >> 4];
      *o++ = hex[c & 15];
    }
    i = run + 1;
  }
  *o++ = '"';
  b->len = (size_t)(o - b->ptr);
  b->ptr[b->len] = '\0';
  return 0;
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
