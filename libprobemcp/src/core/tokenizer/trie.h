/* SPDX-License-Identifier: MIT */
/* Walks over the byte trie of all tokens (layout in ranks.h). */
#ifndef PMCP_CORE_TOKENIZER_TRIE_H
#define PMCP_CORE_TOKENIZER_TRIE_H

#include <stddef.h>
#include <stdint.h>

#include "core/tokenizer/ranks.h"

/* Child of trie node @p v for byte @p c, or 0 (the root is no child). */
static inline uint32_t pmcp__tk_trie_child(uint32_t v, unsigned c)
{
  uint32_t f = pmcp__tk_trie_first[v], lo = PMCP__TK_TRIE_BASE(f);
  if (PMCP__TK_TRIE_MAP(f)) {
    unsigned k = pmcp__tk_trie_map[PMCP__TK_TRIE_MAP(f)][c];
    return k ? lo + k - 1 : 0;
  }
  uint32_t end = PMCP__TK_TRIE_BASE(pmcp__tk_trie_first[v + 1]);
  for (; lo < end; lo++) {
    unsigned b = PMCP__TK_TRIE_BYTE(pmcp__tk_trie_node[lo]);
    if (b >= c)
      return b == c ? lo : 0;
  }
  return 0;
}

/* Whether some token spans byte @p b of @p p[a..e): starts before b and
 * ends after it (a < b < e, e - a <= 256). */
int pmcp__tk_spanned(const unsigned char *p, size_t a, size_t b, size_t e);

#endif
