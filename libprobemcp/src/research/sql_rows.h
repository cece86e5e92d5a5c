/* SPDX-License-Identifier: MIT */
/* The rows of a query_sql statement as a budgeted page, for either store:
 * "columns", then "rows" until the budget, with a cursor bound to the rows
 * already sent (their count and digest). The statement is run again for
 * the next page and continues while its first rows are those already
 * sent, whatever else the lab logged meanwhile; otherwise the call is told
 * to start over. */
#ifndef PMCP_RESEARCH_SQL_ROWS_H
#define PMCP_RESEARCH_SQL_ROWS_H

#include <stdint.h>

#include "research/metrics.h"

/* A running statement, one row at a time. */
typedef struct pmcp__sql_rows {
  void *src;
  int ncols;
  const char *(*name)(void *src, int c);
  /* Moves to the next row: 1 a row, 0 the end, or a PMCP_E* code (the
   * source keeps its message for fail). */
  int (*next)(void *src);
  /* @p h mixed with the current row's values. */
  uint64_t (*digest)(void *src, uint64_t h);
  /* Writes the current row's cells (inside the row's array). */
  void (*cells)(void *src, pmcp_json *j);
  /* Releases the statement (before the answer is sent). */
  void (*end)(void *src);
  /* The tool's answer to code @p rc from next. */
  int (*fail)(void *src, pmcp_call *call, int rc);
} pmcp__sql_rows;

/* Pages @p rows for @p call and answers it; ends the statement. */
int pmcp__sql_rows_send(pmcp_call *call, pmcp__research *rs, const pmcp__sql_rows *rows);

#endif
