/* SPDX-License-Identifier: MIT */
/* Keyword search: the arguments and the page's end, the same on both
 * backends (search.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/search.h"

static const char *const search_kinds[] = {
  "run", "experiment", "project", "workspace", "note", "sub-note", "artifact", "dataset",
  "source", "session", "trial", "group", "file", "paper", NULL,
};

static int is_word_byte(unsigned char c)
{
  return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The words of @p query in @p style; returns how many (up to 33: one past
 * the 32 kept tells that there were more). */
static int match_words(const char *query, int style, pmcp_buf *out)
{
  pmcp__buf_reset(out);
  const unsigned char *p = (const unsigned char *)query;
  int n = 0;
  while (*p) {
    while (*p && !is_word_byte(*p))
      p++;
    const unsigned char *w = p;
    while (*p && is_word_byte(*p))
      p++;
    if (p > w) {
      if (n++ >= 32)
        break;
      if (style == PMCP__SEARCH_FTS5) {
        if (n > 1)
          pmcp__buf_puts(out, " OR ");
        pmcp__buf_putc(out, '"');
        pmcp__buf_append(out, w, (size_t)(p - w));
        pmcp__buf_putc(out, '"');
      } else {
        if (n > 1)
          pmcp__buf_putc(out, '\n');
        pmcp__buf_append(out, w, (size_t)(p - w));
      }
    }
  }
  return n;
}

int pmcp__search_args_read(pmcp_store *s, const char *query, const char *kinds,
                           const char *after, size_t limit, int style, pmcp__search_args *a)
{
  memset(a, 0, sizeof *a);
  if (match_words(query, style, &a->match) == 0)
    return pmcp_store_set_error(s, PMCP_EINVAL, "the search query has no words");
  a->all = 1;
  pmcp__buf_putc(&a->kinds, ' ');
  if (kinds && *kinds) {
    a->all = 0;
    const char *p = kinds;
    while (*p) {
      size_t n = strcspn(p, " ,");
      if (n) {
        int ok = 0;
        for (int i = 0; search_kinds[i]; i++)
          if (strlen(search_kinds[i]) == n && strncmp(search_kinds[i], p, n) == 0)
            ok = 1;
        if (!ok)
          return pmcp_store_set_error(s, PMCP_EINVAL, "cannot search kind '%.*s'",
                                      (int)(n > 32 ? 32 : n), p);
        if (n == 5 && strncmp(p, "paper", 5) == 0)
          a->with_papers = 1;
        pmcp__buf_append(&a->kinds, p, n);
        pmcp__buf_putc(&a->kinds, ' ');
      }
      p += n;
      while (*p == ' ' || *p == ',')
        p++;
    }
  }
  if (after && *after) {
    char *end;
    errno = 0;
    long long v = strtoll(after, &end, 10);
    /* a position past any page a store reaches is refused, so that the
     * page's end (offset + limit) cannot overflow */
    if (*end || v < 0 || end == after || errno == ERANGE || v > INT32_MAX)
      return pmcp_store_set_error(s, PMCP_EINVAL, "invalid search position '%.32s'", after);
    a->offset = v;
  }
  if (limit == 0)
    limit = 20;
  if (limit > 200)
    limit = 200;
  a->limit = limit;
  return 0;
}

void pmcp__search_args_free(pmcp__search_args *a)
{
  pmcp_buf_dispose(&a->match);
  pmcp_buf_dispose(&a->kinds);
}

int pmcp__search_page_end(pmcp_buf *out, int64_t offset, size_t n, int64_t total)
{
  return pmcp__search_page_end_est(out, offset, n, total, 0);
}

int pmcp__search_page_end_est(pmcp_buf *out, int64_t offset, size_t n, int64_t total,
                              int estimated)
{
  pmcp__buf_printf(out, "],\"total\":%lld,%s", (long long)total,
                   estimated ? "\"total_estimated\":true," : "");
  if (offset + (int64_t)n < total)
    pmcp__buf_printf(out, "\"next\":\"%lld\"}", (long long)(offset + (int64_t)n));
  else
    pmcp__buf_puts(out, "\"next\":null}");
  return out->ptr ? 0 : PMCP_ENOMEM;
}
