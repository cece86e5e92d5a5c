/* SPDX-License-Identifier: MIT */
#include "import/csv.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

void pmcp__csv_init(pmcp__csv *c, const char *buf, size_t len)
{
  memset(c, 0, sizeof *c);
  c->p = buf;
  c->end = buf + len;
  c->line = 1;
  /* A UTF-8 byte order mark (Excel writes one) is not part of a name. */
  if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
    c->p += 3;
}

static int add_field(pmcp__csv *c)
{
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 16;
    size_t *o = realloc(c->off, cap * sizeof *o);
    if (!o)
      return -2;
    c->off = o;
    c->cap = cap;
  }
  c->off[c->n++] = c->cells.len;
  return 0;
}

static int end_field(pmcp__csv *c)
{
  return pmcp__buf_putc(&c->cells, '\0') ? -2 : 0;
}

static int bad(pmcp__csv *c, const char *why)
{
  c->why = why;
  return -1;
}

int pmcp__csv_row(pmcp__csv *c)
{
  /* skip blank lines */
  for (;;) {
    if (c->p >= c->end)
      return 0;
    if (*c->p == '\n') {
      c->p++;
      c->line++;
    } else if (*c->p == '\r' && c->p + 1 < c->end && c->p[1] == '\n') {
      c->p += 2;
      c->line++;
    } else {
      break;
    }
  }
  c->row_line = c->line;
  c->n = 0;
  pmcp__buf_reset(&c->cells);
  if (add_field(c))
    return -2;
  for (;;) {
    /* at the start of a field */
    if (c->p < c->end && *c->p == '"') {
      c->p++;
      for (;;) {
        if (c->p >= c->end)
          return bad(c, "unterminated quoted field");
        char ch = *c->p++;
        if (ch == '"') {
          if (c->p < c->end && *c->p == '"') {
            c->p++;
          } else {
            break;
          }
        } else if (ch == '\0') {
          return bad(c, "NUL byte");
        } else if (ch == '\n') {
          c->line++;
        }
        if (pmcp__buf_putc(&c->cells, ch))
          return -2;
      }
      if (c->p < c->end && *c->p != ',' && *c->p != '\n' &&
          !(*c->p == '\r' && c->p + 1 < c->end && c->p[1] == '\n'))
        return bad(c, "text after a closing quote");
    } else {
      const char *s = c->p;
      while (c->p < c->end && *c->p != ',' && *c->p != '\n' &&
             !(*c->p == '\r' && c->p + 1 < c->end && c->p[1] == '\n')) {
        if (*c->p == '"')
          return bad(c, "quote inside an unquoted field");
        if (*c->p == '\0')
          return bad(c, "NUL byte");
        c->p++;
      }
      if (pmcp__buf_append(&c->cells, s, (size_t)(c->p - s)))
        return -2;
    }
    if (end_field(c))
      return -2;
    if (c->p < c->end && *c->p == ',') {
      c->p++;
      if (add_field(c))
        return -2;
      continue;
    }
    /* end of row */
    if (c->p < c->end) {
      c->p += *c->p == '\r' ? 2 : 1;
      c->line++;
    }
    return 1;
  }
}

const char *pmcp__csv_field(const pmcp__csv *c, size_t i, size_t *len)
{
  if (i >= c->n)
    return NULL;
  const char *s = c->cells.ptr + c->off[i];
  size_t end = i + 1 < c->n ? c->off[i + 1] - 1 : c->cells.len - 1;
  if (len)
    *len = end - c->off[i];
  return s;
}

void pmcp__csv_dispose(pmcp__csv *c)
{
  pmcp_buf_dispose(&c->cells);
  free(c->off);
  c->off = NULL;
}
