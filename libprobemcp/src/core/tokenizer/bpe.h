/* SPDX-License-Identifier: MIT */
/* tiktoken-exact byte-pair merging of one piece: the adjacent pair whose
 * concatenated bytes have the lowest rank merges first, ties go to the
 * leftmost pair, until no adjacent pair is a token. */
#ifndef PMCP_CORE_TOKENIZER_BPE_H
#define PMCP_CORE_TOKENIZER_BPE_H

#include <stddef.h>
#include <stdint.h>

/* Rank of the token with bytes @p p[0..n), or PMCP__TK_NORANK. */
uint32_t pmcp__tk_rank(const unsigned char *p, size_t n);

/* Pieces up to PMCP__BPE_SCAN bytes (PMCP__BPE_SCAN_ASCII when they end
 * in ASCII, as words, numbers and JSON do: the scan is cheaper there)
 * merge by tiktoken's linear scan; longer ones by the backtracking encoder
 * (linear; cheaper on CJK and emoji runs), with its search state
 * on the stack up to PMCP__BPE_STACK bytes. The heap merge (O(n log n), on
 * the stack up to PMCP__BPE_STACK bytes) checks token pairs of over
 * PMCP__BPE_SMALL bytes, which bounds pieces the scan may be given
 * (pmcp__bpe_scan). */
#define PMCP__BPE_SMALL 128u
#define PMCP__BPE_SCAN 12u
#define PMCP__BPE_SCAN_ASCII 24u
#define PMCP__BPE_STACK 512u

/* Merges the piece @p p[0..n) (n >= 1). With @p out non-NULL (room for n
 * ids) writes the ids. Sets *@p count. @return 0 or PMCP_ENOMEM (only for
 * pieces longer than PMCP__BPE_STACK). */
int pmcp__bpe(const unsigned char *p, size_t n, uint32_t *out, size_t *count);

/* The heap merge alone, for any n >= 1, and the linear scan alone, for
 * 1 <= n <= PMCP__BPE_SMALL, without the cache (tests check them against
 * each other and against a brute-force merge). */
int pmcp__bpe_heap(const unsigned char *p, size_t n, uint32_t *out, size_t *count);
int pmcp__bpe_scan(const unsigned char *p, size_t n, uint32_t *out, size_t *count);

/* The calling thread's caches, or NULL when it has none (the calls below
 * then work uncached). Owned by the thread. */
typedef struct pmcp__bpe_ctx pmcp__bpe_ctx;
pmcp__bpe_ctx *pmcp__bpe_ctx_get(void);

/* Whether tokens @p x then @p y are a valid pair: the merge of x's bytes
 * then y's is [x, y]. With @p x == PMCP__TK_NORANK: whether the merge of
 * y's bytes is [y]. @p cx: from pmcp__bpe_ctx_get on this thread. */
int pmcp__bpe_pair_valid(pmcp__bpe_ctx *cx, uint32_t x, uint32_t y);

/* Whether the merge of token @p t's bytes is [t]. */
int pmcp__bpe_self_valid(pmcp__bpe_ctx *cx, uint32_t t);

/* The backtracking encoder alone, for any n >= 1 (tests check it against
 * the heap merge). 0, PMCP_ENOMEM, PMCP_ETOOBIG or PMCP_EINTERNAL (a
 * search that finds no merge: a bug, never a wrong answer). */
int pmcp__bpe_backtrack(const unsigned char *p, size_t n, uint32_t *out, size_t *count);

#endif
