/* SPDX-License-Identifier: MIT */
/* A CSV reader (RFC 4180: quoted fields with "" escapes and line breaks
 * inside quotes; LF or CRLF line ends) over a buffer of known length.
 * Blank lines are skipped. Malformed input yields an error with the line
 * number where the bad record starts. */
#ifndef PMCP_IMPORT_CSV_H
#define PMCP_IMPORT_CSV_H

#include <stddef.h>

#include "probemcp/common.h"

typedef struct pmcp__csv {
  const char *p, *end;
  int line;       /* line of the next byte */
  int row_line;   /* first line of the current row */
  pmcp_buf cells; /* the row's fields, each NUL-terminated */
  size_t *off;    /* field start offsets into cells */
  size_t n, cap;
  const char *why;
} pmcp__csv;

void pmcp__csv_init(pmcp__csv *c, const char *buf, size_t len);
/* 1: a row (pmcp__csv_field), 0: end, -1: malformed (why, row_line),
 * -2: out of memory. */
int pmcp__csv_row(pmcp__csv *c);
const char *pmcp__csv_field(const pmcp__csv *c, size_t i, size_t *len);
void pmcp__csv_dispose(pmcp__csv *c);

#endif
