/* SPDX-License-Identifier: MIT */
/* Pages continued by offset (budget.h, pmcp_page_offsets()): the same
 * builder, counting and fitting as cursor pages, with a different ending.
 * Instead of a next_cursor the page carries next_offset, the listing
 * offset of the first item not returned, so a tool whose callers page with
 * limit/offset gets pages cut to the budget that still continue exactly;
 * truncated says the budget (not the limit) ended the page, and a hint
 * says how to go on. */
#include "core/page_int.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/jsonw.h"
#include "util/buf.h"

int pmcp_page_offsets(pmcp_page *pg, uint64_t offset, uint64_t total, const char *hint)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC)
    return PMCP_EMISUSE;
  if (pg->status)
    return pg->status;
  if (pg->list_open || pg->list_name || pg->n || pg->whole || pg->by_offset)
    return PMCP_EMISUSE;
  if (!hint || offset > total)
    return PMCP_EINVAL;
  pmcp__buf_reset(&pg->off_hint);
  int rc = pmcp__jw_put_string(&pg->off_hint, hint, strlen(hint));
  if (rc) {
    pg->status = PMCP_ENOMEM;
    return rc;
  }
  pg->by_offset = 1;
  pg->off_base = offset;
  pg->off_total = total;
  return 0;
}

/* Whether the budget cut the page. While items are still being added the
 * answer is not known, and the tail is counted as if it were (the hint
 * then always has room). */
static int cut(const pmcp_page *pg)
{
  return !pg->done || pg->full || pg->stats.dropped;
}

int pmcp__page_offset_tail(const pmcp_page *pg, size_t n, const char *next,
                           size_t next_len, pmcp_buf *out)
{
  assert(pg->off_base <= pg->off_total);
  int c = cut(pg);
  int rc = 0;
  if (pg->list_open)
    rc = pmcp__buf_printf(out, ",\"count\":%zu,\"truncated\":%s", n, c ? "true" : "false");
  size_t nf = pg->field_non_finite;
  for (size_t i = 0; i < n && i < pg->n; i++)
    nf += pg->it[i].non_finite;
  int any = pg->head_fields > 0 || pg->list_open || pg->tailf.len;
  if (!rc && nf)
    rc = pmcp__buf_printf(out, "%s\"non_finite\":%zu", any ? "," : "", nf);
  if (!rc && next) {
    rc = pmcp__buf_puts(out, ",\"next_offset\":");
    if (!rc)
      rc = pmcp__buf_append(out, next, next_len);
  }
  if (!rc && c && pg->list_open) {
    rc = pmcp__buf_puts(out, ",\"hint\":");
    if (!rc)
      rc = pmcp__buf_append(out, pg->off_hint.ptr, pg->off_hint.len);
  }
  return rc;
}

size_t pmcp__page_offset_tail_bound(const pmcp_page *pg)
{
  return sizeof ",\"count\":,\"truncated\":false" + 20 + sizeof ",\"non_finite\":" + 20 +
         sizeof ",\"next_offset\":" + 20 + sizeof ",\"hint\":" + pg->off_hint.len + 1;
}

int pmcp__page_offset_encode(const void *payload, size_t plen, pmcp_buf *out)
{
  uint64_t next = 0;
  if (plen != sizeof next)
    return PMCP_EINTERNAL;
  memcpy(&next, payload, sizeof next);
  return pmcp__buf_printf(out, "%" PRIu64, next);
}
