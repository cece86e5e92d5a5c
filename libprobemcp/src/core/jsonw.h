/* SPDX-License-Identifier: MIT */
/* Internal JSON text helpers shared by the writer, pages, cursors and
 * fragments. */
#ifndef PMCP_CORE_JSONW_H
#define PMCP_CORE_JSONW_H

#include <stddef.h>
#include "probemcp/common.h"

/* Appends @p s as a JSON string literal; invalid UTF-8 bytes become
 * U+FFFD. 0 or PMCP_ENOMEM. */
int pmcp__jw_put_string(pmcp_buf *b, const char *s, size_t len);
/* Length of the valid UTF-8 sequence starting at @p s, 0 when invalid. */
size_t pmcp__jw_utf8_seq(const unsigned char *s, size_t len);

#endif
