/* SPDX-License-Identifier: MIT */
/* Internal growable buffer helpers over the public pmcp_buf. Buffers handed
 * to callers are malloc'd so pmcp_buf_dispose() can free them. */
#ifndef PMCP_UTIL_BUF_H
#define PMCP_UTIL_BUF_H

#include <stdarg.h>
#include "probemcp/common.h"

/* Ensures room for @p extra more bytes plus a NUL. 0 or PMCP_ENOMEM. */
int pmcp__buf_reserve(pmcp_buf *b, size_t extra);
int pmcp__buf_append(pmcp_buf *b, const void *data, size_t len);
int pmcp__buf_puts(pmcp_buf *b, const char *s);
int pmcp__buf_putc(pmcp_buf *b, char c);
int pmcp__buf_printf(pmcp_buf *b, const char *fmt, ...) PMCP_PRINTF(2, 3);
int pmcp__buf_vprintf(pmcp_buf *b, const char *fmt, va_list ap) PMCP_PRINTF(2, 0);
/* Appends @p s as a JSON string literal (quotes and escapes). */
int pmcp__buf_json_string(pmcp_buf *b, const char *s, size_t len);
/* Empties without freeing. */
void pmcp__buf_reset(pmcp_buf *b);
/* Hands the contents over (caller frees with free()); leaves @p b empty.
 * Never NULL on success: an empty buffer yields "". */
char *pmcp__buf_steal(pmcp_buf *b, size_t *len);

#endif
