/* SPDX-License-Identifier: MIT */
/* Internal interface of the o200k_base tokenizer (public API: tokens.h). */
#ifndef PMCP_CORE_TOKENIZER_TOKENIZER_H
#define PMCP_CORE_TOKENIZER_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

/* Length of the longest prefix of @p s[0..n) made of whole valid UTF-8
 * characters. When that is < n, *@p truncated says whether the rest is only
 * the start of a valid character cut by the end of the input (more bytes
 * could complete it) rather than an invalid sequence. */
size_t pmcp__utf8_scan(const unsigned char *s, size_t n, int *truncated);

/* Token count of valid UTF-8 @p s[0..n). 0 or PMCP_ENOMEM. */
int pmcp__tokens_count_valid(const unsigned char *s, size_t n, size_t *out);

#endif
