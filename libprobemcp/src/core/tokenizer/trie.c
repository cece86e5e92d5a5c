/* SPDX-License-Identifier: MIT */
/* Token spans over the byte trie (trie.h). */
#include "core/tokenizer/trie.h"

int pmcp__tk_spanned(const unsigned char *p, size_t a, size_t b, size_t e)
{
  for (size_t s = b; s-- > a;) {
    uint32_t v = 1u + p[s];
    size_t i = s + 1;
    while (v && i < b)
      v = pmcp__tk_trie_child(v, p[i++]);
    for (; v && i < e; i++) {
      v = pmcp__tk_trie_child(v, p[i]);
      if (v && PMCP__TK_TRIE_TOK(pmcp__tk_trie_node[v]) != PMCP__TK_TRIE_NOTOK)
        return 1;
    }
  }
  return 0;
}
