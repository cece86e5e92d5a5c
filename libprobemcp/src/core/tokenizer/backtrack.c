/* SPDX-License-Identifier: MIT */
/* Linear-time byte-pair merging of long pieces, by backtracking over the
 * token trie (the method of GitHub's `bpe` crate, with an exact pair test).
 *
 * Why it is exact. Call a token sequence of a piece valid when each token
 * t merges alone into [t] and each adjacent pair x y merges into [x, y]
 * (pmcp__bpe_pair_valid). The merge of a piece is valid: the parts inside
 * a final token, or inside two neighbours, are merged in the piece in the
 * same order as alone (a merge only looks at its two parts, and the
 * candidates alone are a subset of those in the piece), and alone no other
 * merge is on offer. A valid sequence is the merge: if the piece made a
 * first merge across a boundary of the sequence, the pair around that
 * boundary would make it alone too. So a piece has one valid sequence, and
 * the valid tokens of a prefix up to a boundary are the merge of that
 * prefix.
 *
 * The search: at each position the tokens that are prefixes of the rest
 * (one trie walk), longest first; the first that ends at a position not
 * known dead and forms a valid pair with the previous token is taken. When
 * none fits, the tokens before the position are the merge of that prefix
 * (the only valid sequence), so no valid sequence of the piece has a
 * boundary there: the position is dead, the last token is dropped, and
 * shorter tokens are tried at its start (longer ones failed before, and
 * still fail). Each step takes a token or kills a position, so the work is
 * linear in the length (at most 128 candidates per position). */
#include <stdlib.h>
#include <string.h>

#include "core/tokenizer/bpe.h"
#include "core/tokenizer/ranks.h"
#include "core/tokenizer/trie.h"
#include "probemcp/error.h"

static inline uint32_t tok_len(uint32_t t)
{
  return pmcp__tk_off[t + 1] - pmcp__tk_off[t];
}

/* Whether token @p t may follow @p last (the token before it, or
 * PMCP__TK_NORANK at the start): [last, t] is a valid pair. A function of
 * the two tokens alone, cached per thread (bpe.c). */
static inline int fits(pmcp__bpe_ctx *cx, uint32_t last, uint32_t t)
{
  if (last == PMCP__TK_NORANK)
    return pmcp__bpe_self_valid(cx, t);
  return pmcp__bpe_pair_valid(cx, last, t);
}

/* The tokens that are prefixes of @p p[0..n), shortest first, with their
 * lengths - 1; returns how many (at least 1: every byte is a token). */
static unsigned prefixes(const unsigned char *p, size_t n, uint32_t *tok, uint8_t *len)
{
  uint32_t v = 1u + p[0];
  unsigned m = 0;
  tok[m] = PMCP__TK_TRIE_TOK(pmcp__tk_trie_node[v]);
  len[m++] = 0;
  size_t lim = n < PMCP__TK_MAXLEN ? n : PMCP__TK_MAXLEN;
  for (size_t i = 1; i < lim; i++) {
    v = pmcp__tk_trie_child(v, p[i]);
    if (!v)
      break;
    uint32_t t = PMCP__TK_TRIE_TOK(pmcp__tk_trie_node[v]);
    if (t != PMCP__TK_TRIE_NOTOK) {
      tok[m] = t;
      len[m++] = (uint8_t)i;
    }
  }
  return m;
}

/* The search over caller-provided memory: @p dead (zeroed) has n + 1
 * bits; @p *stk room for *cap ids, grown with realloc when @p grow. */
static int search(const unsigned char *p, size_t n, uint64_t *dead, uint32_t **stk, size_t *cap,
                  int grow, size_t *count)
{
  uint32_t ctok[PMCP__TK_MAXLEN];
  uint8_t clen[PMCP__TK_MAXLEN]; /* length - 1 */
  size_t k = 0, pos = 0;
  unsigned limit = PMCP__TK_MAXLEN; /* try lengths - 1 below this */
  pmcp__bpe_ctx *cx = pmcp__bpe_ctx_get();
  uint32_t *st = *stk;
  while (pos < n) {
    unsigned m = prefixes(p + pos, n - pos, ctok, clen);
    uint32_t last = k ? st[k - 1] : PMCP__TK_NORANK;
    int taken = 0;
    while (m-- > 0) {
      if (clen[m] >= limit)
        continue;
      size_t end = pos + clen[m] + 1;
      if (end < n && (dead[end / 64] >> (end % 64) & 1))
        continue;
      if (!fits(cx, last, ctok[m]))
        continue;
      if (k == *cap) {
        size_t ncap = *cap * 2 < n ? *cap * 2 : n;
        uint32_t *ns = grow ? realloc(st, ncap * sizeof *ns) : NULL;
        if (!ns)
          return PMCP_ENOMEM;
        *stk = st = ns;
        *cap = ncap;
      }
      st[k++] = ctok[m];
      pos = end;
      limit = PMCP__TK_MAXLEN;
      taken = 1;
      break;
    }
    if (taken)
      continue;
    if (k == 0) /* cannot happen: the merge's first token always fits */
      return PMCP_EINTERNAL;
    dead[pos / 64] |= 1ull << (pos % 64);
    uint32_t t = st[--k];
    pos -= tok_len(t);
    limit = tok_len(t) - 1;
  }
  *count = k;
  return 0;
}

int pmcp__bpe_backtrack(const unsigned char *p, size_t n, uint32_t *out, size_t *count)
{
  if (n >= UINT32_MAX)
    return PMCP_ETOOBIG;
  if (n <= PMCP__BPE_STACK) {
    uint64_t dead[PMCP__BPE_STACK / 64 + 1] = {0};
    uint32_t ids[PMCP__BPE_STACK];
    uint32_t *stk = out ? out : ids;
    size_t cap = n;
    return search(p, n, dead, &stk, &cap, 0, count);
  }
  uint64_t *dead = calloc(n / 64 + 1, sizeof *dead);
  size_t cap = out ? n : n / 4 + 16;
  uint32_t *stk = out ? out : malloc(cap * sizeof *stk);
  int rc = dead && stk ? search(p, n, dead, &stk, &cap, !out, count) : PMCP_ENOMEM;
  free(dead);
  if (!out)
    free(stk);
  return rc;
}
