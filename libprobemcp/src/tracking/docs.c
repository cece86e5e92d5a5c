/* SPDX-License-Identifier: MIT */
/* Docs tools of the tracking toolset: list_docs (every page on using the
 * tools, with title and URL) and get_doc (one page as markdown,
 * cut at line ends into pieces that fit the token budget, continued by
 * character offset like the toolset's listings). The pages are built into
 * the library (docs.h). */
#include "tracking/tracking.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/page.h"
#include "tracking/docs.h"

/* Unicode characters in s[0, n) (s is valid UTF-8). */
static size_t chars_of(const char *s, size_t n)
{
  size_t c = 0;
  for (size_t i = 0; i < n; i++)
    c += ((unsigned char)s[i] & 0xC0) != 0x80;
  return c;
}

/* The byte where character @p ch starts (or n). */
static size_t byte_of(const char *s, size_t n, size_t ch)
{
  size_t i = 0;
  for (size_t c = 0; i < n; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80 && c++ == ch)
      return i;
  return n;
}

/* The page a name or URL names: "filters", "filters.md",
 * "docs/agent/filters.md". */
static const pmcp__trk_doc *find_doc(const char *name)
{
  size_t n = strlen(name);
  for (size_t i = 0; i < pmcp__trk_n_docs; i++) {
    const pmcp__trk_doc *d = &pmcp__trk_docs[i];
    if (!strcmp(name, d->page) || !strcmp(name, d->url) ||
        (n == strlen(d->page) + 3 && !strncmp(name, d->page, n - 3) &&
         !strcmp(name + n - 3, ".md")))
      return d;
  }
  return NULL;
}

static int doc_row(pmcp_json *j, size_t i, void *ud)
{
  (void)ud;
  const pmcp__trk_doc *d = &pmcp__trk_docs[i];
  pmcp_json_object_begin(j);
  pmcp__trk_kstr(j, "page", d->page);
  pmcp__trk_kstr(j, "title", d->title);
  pmcp__trk_kstr(j, "url", d->url);
  pmcp__trk_knum(j, "chars", (double)chars_of(d->markdown, d->len));
  return pmcp_json_object_end(j);
}

static int list_docs(pmcp_call *call, void *ud)
{
  (void)ud;
  return pmcp__trk_send_rows(call, pmcp__trk_n_docs, "docs", NULL, doc_row, NULL);
}

/* Writes into @p j (emptied) the answer holding markdown bytes [b0, b1)
 * of @p d; 0 or the writer's error. */
static int piece(pmcp_json *j, const pmcp__trk_doc *d, size_t total, size_t offset, size_t b0,
                 size_t b1)
{
  pmcp_json_reset(j);
  size_t n = chars_of(d->markdown + b0, b1 - b0);
  pmcp_json_object_begin(j);
  pmcp__trk_kstr(j, "page", d->page);
  pmcp__trk_kstr(j, "title", d->title);
  pmcp__trk_kstr(j, "url", d->url);
  pmcp__trk_knum(j, "total_chars", (double)total);
  pmcp__trk_knum(j, "offset", (double)offset);
  pmcp__trk_knum(j, "chars", (double)n);
  pmcp__trk_knum(j, "count", 1); /* one piece of one page */
  pmcp_json_key(j, "markdown");
  pmcp_json_string_n(j, d->markdown + b0, b1 - b0);
  if (b1 < d->len) {
    pmcp__trk_knum(j, "next_offset", (double)(offset + n));
    pmcp__trk_kbool(j, "truncated", 1);
    pmcp__trk_kstr(j, "hint", "the page goes on: call again with offset=next_offset "
                              "(or raise token_budget)");
  } else {
    pmcp__trk_kbool(j, "truncated", 0);
  }
  return pmcp_json_object_end(j);
}

/* Whether the piece ending at byte @p b1 fits the call's budget; -1 when
 * out of memory. */
static int fits_at(pmcp_call *call, pmcp_json *j, const pmcp__trk_doc *d, size_t total,
                   size_t offset, size_t b0, size_t b1)
{
  size_t len = 0;
  const char *t = piece(j, d, total, offset, b0, b1) ? NULL : pmcp_json_text(j, &len);
  if (!t)
    return -1;
  return pmcp__rs_fits_text(call, t, len, 0);
}

/* Sends the piece of @p d from byte @p b0 (character @p offset) that fits
 * the budget, written with @p j. */
static int doc_piece(pmcp_call *call, pmcp__tracking *tk, pmcp_json *j, const pmcp__trk_doc *d,
                     size_t total, size_t offset, size_t b0, size_t end)
{
  int ok = fits_at(call, j, d, total, offset, b0, end);
  if (ok < 0)
    return PMCP_ENOMEM;
  if (!ok) {
    /* Cut at a line end: the last one whose piece still fits (a piece
     * grows with its end, so bisect over the line ends). */
    size_t n_ends = 0;
    for (size_t i = b0; i < d->len; i++)
      n_ends += d->markdown[i] == '\n';
    size_t *ends = malloc((n_ends ? n_ends : 1) * sizeof *ends);
    if (!ends)
      return PMCP_ENOMEM;
    n_ends = 0;
    for (size_t i = b0; i < d->len; i++)
      if (d->markdown[i] == '\n')
        ends[n_ends++] = i + 1;
    size_t lo = b0, hi = d->len; /* lo fits (or is the start), hi does not */
    size_t ilo = 0, ihi = n_ends; /* candidates ends[ilo, ihi) */
    while (ilo < ihi) {
      size_t mid = ilo + (ihi - ilo) / 2;
      if (ends[mid] >= hi) {
        ihi = mid;
        continue;
      }
      ok = fits_at(call, j, d, total, offset, b0, ends[mid]);
      if (ok < 0) {
        free(ends);
        return PMCP_ENOMEM;
      }
      if (ok) {
        lo = ends[mid];
        ilo = mid + 1;
      } else {
        hi = ends[mid];
        ihi = mid;
      }
    }
    free(ends);
    if (lo == b0) {
      /* The first line alone is too long: cut it at a character. */
      size_t clo = b0, chi = hi;
      while (chi - clo > 1) {
        size_t mid = clo + (chi - clo) / 2;
        while (mid > clo && ((unsigned char)d->markdown[mid] & 0xC0) == 0x80)
          mid--;
        if (mid == clo)
          break;
        ok = fits_at(call, j, d, total, offset, b0, mid);
        if (ok < 0)
          return PMCP_ENOMEM;
        if (ok)
          clo = mid;
        else
          chi = mid;
      }
      lo = clo;
    }
    if (lo == b0)
      return pmcp__rs_fail(call, PMCP_TERR_TOKEN_BUDGET_TOO_SMALL,
                           "no part of '%s' fits token_budget=%d: raise token_budget",
                           d->page, pmcp__rs_budget(call));
    end = lo;
  }
  if (piece(j, d, total, offset, b0, end))
    return PMCP_ENOMEM;
  return pmcp__trk_send_object(call, tk, j);
}


static int get_doc(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  const char *name = NULL;
  int64_t offset = 0;
  pmcp_arg_string(call, "page", &name, NULL);
  pmcp_arg_int(call, "offset", &offset);
  const pmcp__trk_doc *d = find_doc(name ? name : "");
  if (!d)
    return pmcp__rs_fail(call, PMCP_TERR_NOT_FOUND,
                         "no documentation page '%.200s' (list_docs names them)", name);
  size_t total = chars_of(d->markdown, d->len);
  if ((size_t)offset >= total && !(offset == 0 && total == 0))
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                         "offset %lld is past the end of '%s' (%zu characters)",
                         (long long)offset, d->page, total);
  size_t b0 = byte_of(d->markdown, d->len, (size_t)offset);
  size_t end = d->len;
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, 0))
    return PMCP_ENOMEM;
  int rc = doc_piece(call, tk, j, d, total, (size_t)offset, b0, end);
  pmcp_json_free(j);
  return rc;
}

static const pmcp_arg_spec list_docs_args[] = {PMCP__TRK_ARG_LIMIT("100"),
                                               PMCP__TRK_ARG_OFFSET};
static const pmcp_arg_spec get_doc_args[] = {
  {"page", PMCP_T_STRING, 1,
   "As list_docs names it.", 1, 1, 1, 200, NULL, NULL},
  {"offset", PMCP_T_INTEGER, 0,
   "In characters.", 1, 1, 0, 10000000, NULL, "0"},
};

int pmcp__trk_add_docs(pmcp_server *server, pmcp__tracking *tk)
{
  int rc = pmcp__trk_add_tool(server, tk, "list_docs", NULL,
                              "Pages on using these tools.",
                              list_docs_args, sizeof list_docs_args / sizeof list_docs_args[0],
                              list_docs);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "get_doc", NULL,
                            "A documentation page as markdown, in pieces.",
                            get_doc_args, sizeof get_doc_args / sizeof get_doc_args[0],
                            get_doc);
  return rc;
}
