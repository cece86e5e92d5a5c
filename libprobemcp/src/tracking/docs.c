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

static int list_docs(pmcp_call *call, void *ud)
{
  (void)ud;
  cJSON *all = cJSON_CreateArray();
  if (!all)
    return PMCP_ENOMEM;
  for (size_t i = 0; i < pmcp__trk_n_docs; i++) {
    const pmcp__trk_doc *d = &pmcp__trk_docs[i];
    cJSON *o = cJSON_CreateObject();
    if (!o) {
      cJSON_Delete(all);
      return PMCP_ENOMEM;
    }
    cJSON_AddStringToObject(o, "page", d->page);
    cJSON_AddStringToObject(o, "title", d->title);
    cJSON_AddStringToObject(o, "url", d->url);
    cJSON_AddNumberToObject(o, "chars", (double)chars_of(d->markdown, d->len));
    cJSON_AddItemToArray(all, o);
  }
  return pmcp__trk_window(call, cJSON_CreateObject(), "docs", all);
}

/* The answer holding markdown bytes [b0, b1) of @p d. */
static cJSON *piece(const pmcp__trk_doc *d, size_t total, size_t offset, size_t b0, size_t b1)
{
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return NULL;
  size_t n = chars_of(d->markdown + b0, b1 - b0);
  cJSON_AddStringToObject(o, "page", d->page);
  cJSON_AddStringToObject(o, "title", d->title);
  cJSON_AddStringToObject(o, "url", d->url);
  cJSON_AddNumberToObject(o, "total_chars", (double)total);
  cJSON_AddNumberToObject(o, "offset", (double)offset);
  cJSON_AddNumberToObject(o, "chars", (double)n);
  cJSON_AddNumberToObject(o, "count", 1); /* one piece of one page */
  char *md = malloc(b1 - b0 + 1);
  if (!md) {
    cJSON_Delete(o);
    return NULL;
  }
  memcpy(md, d->markdown + b0, b1 - b0);
  md[b1 - b0] = '\0';
  cJSON_AddStringToObject(o, "markdown", md);
  free(md);
  if (b1 < d->len) {
    cJSON_AddNumberToObject(o, "next_offset", (double)(offset + n));
    cJSON_AddBoolToObject(o, "truncated", 1);
    cJSON_AddStringToObject(o, "hint", "the page goes on: call again with offset=next_offset "
                                       "(or raise token_budget)");
  } else {
    cJSON_AddBoolToObject(o, "truncated", 0);
  }
  return o;
}

/* Whether the piece ending at byte @p b1 fits the call's budget; -1 when
 * out of memory. */
static int fits_at(pmcp_call *call, const pmcp__trk_doc *d, size_t total, size_t offset,
                   size_t b0, size_t b1)
{
  cJSON *o = piece(d, total, offset, b0, b1);
  if (!o)
    return -1;
  int ok = pmcp__rs_fits(call, o, 0);
  cJSON_Delete(o);
  return ok;
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
  int ok = fits_at(call, d, total, (size_t)offset, b0, end);
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
      ok = fits_at(call, d, total, (size_t)offset, b0, ends[mid]);
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
        ok = fits_at(call, d, total, (size_t)offset, b0, mid);
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
  cJSON *o = piece(d, total, (size_t)offset, b0, end);
  if (!o)
    return PMCP_ENOMEM;
  return pmcp__rs_emit_one(call, tk->rs, o);
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
