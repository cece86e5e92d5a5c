/* SPDX-License-Identifier: MIT */
/* The JSON writer tools build results with (json.h). */
#include "probemcp/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "util/buf.h"

#define MAX_DEPTH 64

struct pmcp_json {
  pmcp_buf buf;
  unsigned flags;
  int err;
  int depth;
  /* per level: 'o' object or 'a' array */
  char kind[MAX_DEPTH];
  /* per level: number of members written */
  size_t count[MAX_DEPTH];
  int want_value; /* a key was written, its value is due */
  int done;       /* a complete top-level value exists */
  size_t non_finite;
};

int pmcp_json_new(pmcp_json **out, unsigned flags)
{
  *out = calloc(1, sizeof **out);
  if (!*out)
    return PMCP_ENOMEM;
  (*out)->flags = flags;
  return 0;
}

void pmcp_json_free(pmcp_json *j)
{
  if (!j)
    return;
  pmcp_buf_dispose(&j->buf);
  free(j);
}

void pmcp_json_reset(pmcp_json *j)
{
  pmcp__buf_reset(&j->buf);
  j->err = 0;
  j->depth = 0;
  j->want_value = 0;
  j->done = 0;
  j->non_finite = 0;
}

static int fail(pmcp_json *j, int rc)
{
  if (!j->err)
    j->err = rc;
  return j->err;
}

/* Writes the separator a new value needs and checks it is allowed here. */
static int before_value(pmcp_json *j)
{
  if (j->err)
    return j->err;
  if (j->depth == 0) {
    if (j->done)
      return fail(j, PMCP_EMISUSE);
    return 0;
  }
  int d = j->depth - 1;
  if (j->kind[d] == 'o') {
    if (!j->want_value)
      return fail(j, PMCP_EMISUSE);
    j->want_value = 0;
    return 0;
  }
  if (j->count[d]++ && pmcp__buf_putc(&j->buf, ','))
    return fail(j, PMCP_ENOMEM);
  return 0;
}

static int after_value(pmcp_json *j)
{
  if (j->depth == 0)
    j->done = 1;
  return 0;
}

static int put(pmcp_json *j, const char *s, size_t len)
{
  if (pmcp__buf_append(&j->buf, s, len))
    return fail(j, PMCP_ENOMEM);
  return 0;
}

static int open_(pmcp_json *j, char kind)
{
  int rc = before_value(j);
  if (rc)
    return rc;
  if (j->depth >= MAX_DEPTH)
    return fail(j, PMCP_EMISUSE);
  j->kind[j->depth] = kind;
  j->count[j->depth] = 0;
  j->depth++;
  return put(j, kind == 'o' ? "{" : "[", 1);
}

static int close_(pmcp_json *j, char kind)
{
  if (j->err)
    return j->err;
  if (j->depth == 0 || j->kind[j->depth - 1] != kind || j->want_value)
    return fail(j, PMCP_EMISUSE);
  j->depth--;
  int rc = put(j, kind == 'o' ? "}" : "]", 1);
  return rc ? rc : after_value(j);
}

int pmcp_json_object_begin(pmcp_json *j) { return open_(j, 'o'); }
int pmcp_json_object_end(pmcp_json *j) { return close_(j, 'o'); }
int pmcp_json_array_begin(pmcp_json *j) { return open_(j, 'a'); }
int pmcp_json_array_end(pmcp_json *j) { return close_(j, 'a'); }

int pmcp_json_key(pmcp_json *j, const char *key)
{
  if (j->err)
    return j->err;
  if (!key || j->depth == 0 || j->kind[j->depth - 1] != 'o' || j->want_value)
    return fail(j, PMCP_EMISUSE);
  int d = j->depth - 1;
  if (j->count[d]++ && put(j, ",", 1))
    return j->err;
  if (pmcp__jw_put_string(&j->buf, key, strlen(key)))
    return fail(j, PMCP_ENOMEM);
  if (put(j, ":", 1))
    return j->err;
  j->want_value = 1;
  return 0;
}

int pmcp_json_string_n(pmcp_json *j, const char *s, size_t len)
{
  int rc = before_value(j);
  if (rc)
    return rc;
  if (!s && len)
    return fail(j, PMCP_EMISUSE);
  if (pmcp__jw_put_string(&j->buf, s ? s : "", len))
    return fail(j, PMCP_ENOMEM);
  return after_value(j);
}

int pmcp_json_string(pmcp_json *j, const char *s)
{
  return pmcp_json_string_n(j, s, s ? strlen(s) : 0);
}

static int scalar(pmcp_json *j, const char *text, size_t len)
{
  int rc = before_value(j);
  if (rc)
    return rc;
  rc = put(j, text, len);
  return rc ? rc : after_value(j);
}

int pmcp_json_int(pmcp_json *j, int64_t v)
{
  char tmp[32];
  int n = snprintf(tmp, sizeof tmp, "%" PRId64, v);
  return scalar(j, tmp, (size_t)n);
}

int pmcp_json_uint(pmcp_json *j, uint64_t v)
{
  char tmp[32];
  int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v);
  return scalar(j, tmp, (size_t)n);
}

static int number(pmcp_json *j, double v, unsigned flags)
{
  char tmp[PMCP_JSON_NUMBER_MAX];
  size_t n = pmcp_json_format_number(v, flags, tmp, sizeof tmp);
  int rc = scalar(j, tmp, n);
  if (!rc && !isfinite(v))
    j->non_finite++;
  return rc;
}

int pmcp_json_number(pmcp_json *j, double v)
{
  return number(j, v, j->flags);
}

int pmcp_json_number_lossless(pmcp_json *j, double v)
{
  return number(j, v, j->flags | PMCP_JSON_LOSSLESS);
}

int pmcp_json_bool(pmcp_json *j, int v)
{
  return v ? scalar(j, "true", 4) : scalar(j, "false", 5);
}

int pmcp_json_null(pmcp_json *j)
{
  return scalar(j, "null", 4);
}

int pmcp_json_raw(pmcp_json *j, const char *json, size_t len)
{
  if (!j->err && (!json || !len))
    return fail(j, PMCP_EINVAL);
  return scalar(j, json, len);
}

const char *pmcp_json_text(const pmcp_json *j, size_t *len)
{
  if (j->err || !j->done) {
    if (len)
      *len = 0;
    return NULL;
  }
  if (len)
    *len = j->buf.len;
  return j->buf.ptr;
}

int pmcp_json_error(const pmcp_json *j)
{
  return j->err;
}

size_t pmcp_json_non_finite(const pmcp_json *j)
{
  return j->non_finite;
}

/* ---- shared escaping ---------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s[0..len), or 0 if invalid
 * (overlong forms, surrogates and values above U+10FFFF are invalid). */
size_t pmcp__jw_utf8_seq(const unsigned char *s, size_t len)
{
  unsigned c = s[0];
  if (c < 0x80)
    return 1;
  size_t n;
  unsigned min;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (len < n)
    return 0;
  unsigned cp = c & (0xFFu >> (n + 1));
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80)
      return 0;
    cp = cp << 6 | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

int pmcp__jw_put_string(pmcp_buf *b, const char *s, size_t len)
{
  static const char hex[] = "0123456789abcdef";
  const unsigned char *p = (const unsigned char *)s;
  if (pmcp__buf_reserve(b, len + 2))
    return PMCP_ENOMEM;
  b->ptr[b->len++] = '"';
  size_t i = 0;
  while (i < len) {
    /* copy the longest run that needs no escaping in one go */
    size_t run = i;
    while (run < len && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' &&
           p[run] != '\\')
      run++;
    if (run > i) {
      if (pmcp__buf_append(b, p + i, run - i))
        return PMCP_ENOMEM;
      i = run;
      continue;
    }
    unsigned c = p[i];
    int rc;
    if (c >= 0x80) {
      size_t n = pmcp__jw_utf8_seq(p + i, len - i);
      if (n) {
        rc = pmcp__buf_append(b, p + i, n);
        i += n;
      } else {
        rc = pmcp__buf_append(b, "\xEF\xBF\xBD", 3); /* U+FFFD */
        i++;
      }
    } else {
      char e[6] = {'\\', 0, 0, 0, 0, 0};
      size_t en = 2;
      switch (c) {
      case '"': e[1] = '"'; break;
      case '\\': e[1] = '\\'; break;
      case '\n': e[1] = 'n'; break;
      case '\r': e[1] = 'r'; break;
      case '\t': e[1] = 't'; break;
      case '\b': e[1] = 'b'; break;
      case '\f': e[1] = 'f'; break;
      default:
        e[1] = 'u';
        e[2] = '0';
        e[3] = '0';
        e[4] = hex[c >> 4];
        e[5] = hex[c & 15];
        en = 6;
      }
      rc = pmcp__buf_append(b, e, en);
      i++;
    }
    if (rc)
      return PMCP_ENOMEM;
  }
  return pmcp__buf_putc(b, '"') ? PMCP_ENOMEM : 0;
}
