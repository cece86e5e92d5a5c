/* SPDX-License-Identifier: MIT */
/* The row-paging loop of query_sql, shared by the SQLite and PostgreSQL
 * stores (sql_rows.h). */
#include <string.h>

#include "probemcp/budget.h"
#include "research/sql_rows.h"

/* The rows sent so far, as a page's position: how many and their digest. */
typedef struct sql_pos {
  uint64_t next;
  uint64_t digest;
} sql_pos;

static void columns_field(pmcp_page *pg, const pmcp__sql_rows *rows)
{
  pmcp_json *cj = NULL;
  if (pmcp_json_new(&cj, 0) != 0)
    return;
  pmcp_json_array_begin(cj);
  for (int c = 0; c < rows->ncols; c++)
    pmcp_json_string(cj, rows->name(rows->src, c));
  pmcp_json_array_end(cj);
  size_t cl = 0;
  const char *ct = pmcp_json_text(cj, &cl);
  if (ct)
    pmcp_page_field_json(pg, "columns", ct, cl);
  pmcp_json_free(cj);
}

int pmcp__sql_rows_send(pmcp_call *call, pmcp__research *rs, const pmcp__sql_rows *rows)
{
  void *s = rows->src;
  pmcp_page *pg = pmcp__rs_page_scoped(call, rs, PMCP_PAGE_LOSSLESS, 1);
  if (!pg) {
    rows->end(s);
    return 0;
  }
  sql_pos at = {0, 0};
  const void *pd = NULL;
  size_t pl = 0;
  if (pmcp_page_position(pg, &pd, &pl) == 0 && pd && pl == sizeof at)
    memcpy(&at, pd, sizeof at);
  uint64_t pos = at.next, digest = 0, row = 0;
  columns_field(pg, rows);
  pmcp_page_list(pg, "rows");
  int more = 0, changed = 0, src;
  while ((src = rows->next(s)) == 1) {
    if (row++ < pos) {
      digest = rows->digest(s, digest); /* sent on an earlier page */
      continue;
    }
    if (row == pos + 1 && pos && digest != at.digest) {
      changed = 1;
      break;
    }
    digest = rows->digest(s, digest);
    pmcp_json *j = pmcp_page_item(pg);
    if (!j)
      break;
    pmcp_json_array_begin(j);
    rows->cells(s, j);
    pmcp_json_array_end(j);
    sql_pos next = {row, digest};
    int arc = pmcp_page_commit(pg, &next, sizeof next);
    if (arc == PMCP_EBUDGET) {
      more = 1;
      break;
    }
    if (arc)
      break;
  }
  rows->end(s);
  if (src == 0 && pos && row <= pos && (row < pos || digest != at.digest))
    changed = 1; /* rows sent earlier are gone or changed */
  if (changed) {
    pmcp_page_free(pg);
    return pmcp__rs_restart(call, "stale",
                            "The rows on the pages before changed. Call query_sql again "
                            "without `cursor` to start over.");
  }
  if (src < 0) {
    pmcp_page_free(pg);
    return rows->fail(s, call, src);
  }
  return pmcp__rs_send(call, pg, more);
}
