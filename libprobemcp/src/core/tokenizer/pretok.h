/* SPDX-License-Identifier: MIT */
/* The o200k_base pre-tokenizer, hand-written (no regex engine): it cuts
 * valid UTF-8 into the pieces tiktoken's pattern
 *
 *   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
 *  |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
 *  |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *
 * finds with leftmost-first (backtracking) semantics. Each piece costs time
 * linear in the characters it examines, and a piece never examines more
 * than its own characters plus the rest of the letter / whitespace run it
 * ends in and three characters, so a whole text is scanned in linear time. */
#ifndef PMCP_CORE_TOKENIZER_PRETOK_H
#define PMCP_CORE_TOKENIZER_PRETOK_H

#include <stddef.h>

/* Returns the end of the piece that starts at @p pos (< @p n) in the valid
 * UTF-8 text @p s. Sets *@p at_end to 1 when the decision looked at the end
 * of the text (so more text appended could change this piece), else 0. */
size_t pmcp__pretok_next(const unsigned char *s, size_t n, size_t pos, int *at_end);

#endif
