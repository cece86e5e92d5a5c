/* SPDX-License-Identifier: MIT */
/* A page that is one prepared object (budget.h, pmcp_page_object()): for
 * answers that are not a list and cannot be split, such as one entity's
 * record. It goes through the same exact count, byte ceiling and
 * min_token_budget refusal as a list page, and the same rendering. */
#include "core/page_int.h"

#include "util/buf.h"

int pmcp_page_object(pmcp_page *pg, const char *json, size_t len)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC)
    return PMCP_EMISUSE;
  if (pg->status)
    return pg->status;
  if (pg->whole || pg->list_open || pg->list_name || pg->head_fields ||
      pg->tailf.len || pg->n || pg->head.len != 1)
    return PMCP_EMISUSE;
  if (!json || len < 2 || json[0] != '{' || json[len - 1] != '}')
    return PMCP_EINVAL;
  /* The counter holds the opening brace: the object is counted once, into
   * a copy that becomes the page's count when it fits. */
  size_t tokens = 0;
  int rc = pmcp_tokens_counter_copy(pg->work, pg->ctr);
  if (!rc)
    rc = pmcp__page_counter_add(pg, pg->work, json + 1, len - 2);
  if (!rc) {
    pg->stats.counts++;
    pg->stats.counted_bytes++;
    rc = pmcp_tokens_counter_peek(pg->work, "}", 1, &tokens);
  }
  if (rc) {
    pg->status = rc == PMCP_ENOMEM ? rc : PMCP_EINVAL;
    return pg->status;
  }
  pg->whole = 1;
  tokens += pg->reserve;
  if (tokens > (size_t)pg->budget ||
      len > (size_t)pg->budget * PMCP_BUDGET_BYTES_PER_TOKEN) {
    pmcp__page_refuse(pg, pmcp__page_needed_budget(tokens, len));
    return PMCP_EBUDGET;
  }
  /* The head holds the object without its closing brace; with no list and
   * no fields after it, rendering adds just that brace back. */
  rc = pmcp__buf_append(&pg->head, json + 1, len - 2);
  if (rc) {
    pg->status = PMCP_ENOMEM;
    return rc;
  }
  pmcp_tokens_counter *t = pg->ctr;
  pg->ctr = pg->work;
  pg->work = t;
  pg->head_fields = len > 2;
  return 0;
}
