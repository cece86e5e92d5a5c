/* SPDX-License-Identifier: MIT */
/* Byte-pair merging with tiktoken's exact semantics (see bpe.h).
 *
 * Very short pieces run tiktoken's own algorithm over stack arrays: keep
 * the rank of every adjacent pair, merge the leftmost minimum, update the
 * two neighbouring ranks (O(n*m), cheapest while n is tiny). Longer pieces
 * (CJK words, base64, a megabyte of one letter) go to the backtracking
 * encoder (backtrack.c), linear in n. An indexed binary heap keyed by
 * (rank, position) over a linked list of parts, which merges in tiktoken's
 * order in O(n log n), decides token pairs of over PMCP__BPE_SMALL bytes
 * and serves the tests as an independent oracle.
 * Two per-thread caches take lookups off the 2 MB rank hash, whose probes
 * are cache misses: multi-token pieces of up to PIECE_KEY bytes with their
 * tokens (text repeats its words), and the rank of the join of two tokens
 * by their ids (CJK and emoji text join the same pairs again and again).
 * The backtracking encoder asks here whether two tokens are a valid pair. */
#include "core/tokenizer/bpe.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/tokenizer/ranks.h"
#include "core/tokenizer/trie.h"
#include "probemcp/error.h"

/* Inline, so the one lookup most pieces need costs no call. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline uint32_t rank_of(const unsigned char *p, size_t n)
{
  if (n == 1)
    return pmcp__tk_byte_rank[p[0]];
  if (n == 2)
    return pmcp__tk_pair_rank[(unsigned)p[0] << 8 | p[1]];
  if (n > PMCP__TK_MAXLEN)
    return PMCP__TK_NORANK;
  uint64_t v = pmcp__tk_key8of(p, n);
  uint64_t h = n <= 8 ? pmcp__tk_hash8(v, n) : pmcp__tk_hashbytes(p, n);
  uint32_t idx = (uint32_t)(h >> (64 - PMCP__TK_HASH_BITS));
  uint32_t tag = (uint32_t)(h >> (64 - PMCP__TK_HASH_BITS - 7)) & 0x7F;
  uint32_t want = PMCP__TK_SLOT(0, (uint32_t)n, tag);
  for (;;) {
    uint32_t s = pmcp__tk_hash[idx];
    if (s == PMCP__TK_EMPTY)
      return PMCP__TK_NORANK;
    if ((s & ~0x3FFFFu) == want) {
      /* same length and tag: compare the first 8 bytes, then the rest */
      uint32_t r = PMCP__TK_SLOT_RANK(s);
      if (pmcp__tk_key8[r] == v &&
          (n <= 8 || memcmp(pmcp__tk_bytes + pmcp__tk_off[r] + 8, p + 8, n - 8) == 0))
        return r;
    }
    idx = (idx + 1) & (PMCP__TK_HASH_SIZE - 1);
  }
}

uint32_t pmcp__tk_rank(const unsigned char *p, size_t n)
{
  return rank_of(p, n);
}

/* ---- per-thread caches ----
 * Pieces: direct-mapped on the piece's hash; an entry holds the piece's
 * bytes, its token count and, when there are at most PIECE_IDS of them,
 * its ids (a count-only entry still answers counting).
 * Joins: direct-mapped on (id a, id b); an entry is valid << 63 | a << 36 |
 * b << 18 | rank of the bytes of a then b (JOIN_NONE: not a token).
 * Allocated on a thread's first lookup, freed when the thread ends. */
#define PIECE_KEY 44u
#define PIECE_IDS 10u
#define PIECE_BITS 11u
#define JOIN_BITS 15u
#define JOIN_NONE 0x3FFFFu
#define PAIR_BITS 16u

typedef struct piece_ent {
  uint8_t len;   /* 0: empty */
  uint8_t count; /* tokens */
  uint8_t has_ids;
  unsigned char bytes[PIECE_KEY];
  uint32_t ids[PIECE_IDS];
} piece_ent;

/* The piece cache is skipped for SKIP_RUN pieces whenever fewer than
 * 1 / 16 of the last PROBE_RUN lookups hit (text whose pieces do not
 * repeat, such as base64, would pay a miss and a store on every piece). */
#define PROBE_RUN 256u
#define SKIP_RUN 4096u

typedef struct pmcp__bpe_ctx {
  uint32_t looks, hits, skip;
  piece_ent piece[1u << PIECE_BITS];
  uint64_t join[1u << JOIN_BITS];
  uint64_t pair[1u << PAIR_BITS];
  /* per token: known, then whether it merges alone into itself */
  uint64_t self_known[PMCP__TK_NRANKS / 64 + 1];
  uint64_t self_ok[PMCP__TK_NRANKS / 64 + 1];
} tk_cache;

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static int cache_key_ok;
static _Thread_local tk_cache *cache_tls;
static _Thread_local int cache_failed;

static void cache_key_init(void)
{
  cache_key_ok = pthread_key_create(&cache_key, free) == 0;
}

/* This thread's caches, or NULL when they cannot be had (then every
 * lookup goes to the rank hash: slower, same result). */
static tk_cache *cache_get(void)
{
  if (cache_tls || cache_failed)
    return cache_tls;
  cache_failed = 1; /* one attempt per thread */
  pthread_once(&cache_once, cache_key_init);
  if (!cache_key_ok)
    return NULL;
  tk_cache *t = calloc(1, sizeof *t);
  if (!t)
    return NULL;
  if (pthread_setspecific(cache_key, t) != 0) {
    free(t);
    return NULL;
  }
  cache_tls = t;
  return t;
}

/* Rank of the bytes @p p[0..len), known to be token @p a then token @p b. */
static inline uint32_t join_rank(tk_cache *tc, uint32_t a, uint32_t b, const unsigned char *p,
                                 size_t len)
{
  if (len == 2)
    return pmcp__tk_pair_rank[(unsigned)p[0] << 8 | p[1]];
  if (len > PMCP__TK_MAXLEN)
    return PMCP__TK_NORANK;
  if (!tc)
    return pmcp__tk_rank(p, len);
  uint64_t key = (uint64_t)a << 18 | b;
  uint64_t *e = &tc->join[(key * 0x9E3779B97F4A7C15ull) >> (64 - JOIN_BITS)];
  if ((*e >> 18) == (key | 1ull << 45)) {
    uint32_t r = (uint32_t)(*e & JOIN_NONE);
    return r == JOIN_NONE ? PMCP__TK_NORANK : r;
  }
  uint32_t r = pmcp__tk_rank(p, len);
  *e = 1ull << 63 | key << 18 | (r == PMCP__TK_NORANK ? JOIN_NONE : r);
  return r;
}

/* tiktoken's scan over stack arrays (n <= PMCP__BPE_SMALL): parts are
 * st[i]..st[i+1] with token id[i]; rk[i] is the rank of parts i and i+1
 * joined. */
static void bpe_small(tk_cache *tc, const unsigned char *p, size_t n, uint32_t *out,
                      size_t *count)
{
  uint32_t st[PMCP__BPE_SMALL + 1];
  uint32_t rk[PMCP__BPE_SMALL + 1];
  uint32_t id[PMCP__BPE_SMALL + 1];
  size_t m = n; /* parts */
  for (size_t i = 0; i <= n; i++)
    st[i] = (uint32_t)i;
  for (size_t i = 0; i < n; i++)
    id[i] = pmcp__tk_byte_rank[p[i]];
  for (size_t i = 0; i + 1 < n; i++)
    rk[i] = pmcp__tk_pair_rank[(unsigned)p[i] << 8 | p[i + 1]];
  rk[n - 1] = PMCP__TK_NORANK;
  for (;;) {
    uint32_t best = PMCP__TK_NORANK;
    size_t bi = 0;
    for (size_t i = 0; i + 1 < m; i++) {
      if (rk[i] < best) {
        best = rk[i];
        bi = i;
      }
    }
    if (best == PMCP__TK_NORANK)
      break;
    /* parts bi and bi+1 become one */
    /* plain loops: the arrays are short, a libc call costs more */
    for (size_t k = bi + 1; k < m; k++)
      st[k] = st[k + 1];
    for (size_t k = bi + 1; k + 1 < m; k++) {
      id[k] = id[k + 1];
      rk[k] = rk[k + 1];
    }
    m--;
    id[bi] = best;
    rk[bi] = bi + 1 < m ? join_rank(tc, best, id[bi + 1], p + st[bi], st[bi + 2] - st[bi])
                        : PMCP__TK_NORANK;
    if (bi > 0)
      rk[bi - 1] = join_rank(tc, id[bi - 1], best, p + st[bi - 1], st[bi + 1] - st[bi - 1]);
  }
  if (out)
    memcpy(out, id, m * sizeof *out);
  *count = m;
}

/* ---- longer pieces: indexed min-heap of parts keyed by (rank, start) ----
 * A key is rank << 32 | start, so comparing keys compares ranks and breaks
 * ties to the left, and the heap compares its own entries without
 * indirection. A part with no rank with its successor is not in the heap. */

typedef struct big {
  const unsigned char *p;
  uint32_t n;
  uint32_t *nxt;  /* the part starting at byte i ends at nxt[i] */
  uint32_t *prv;  /* start of the previous part */
  uint32_t *hpos; /* index in heap, or NOTIN */
  uint32_t *id;   /* token of the part starting at byte i */
  uint64_t *heap;
  uint32_t hn;
  tk_cache *tc;
} big;

#define NOTIN UINT32_MAX
#define KEY_PART(k) ((uint32_t)(k))

static void sift_up(big *b, uint32_t k, uint64_t key)
{
  while (k > 0) {
    uint32_t parent = (k - 1) / 2;
    uint64_t y = b->heap[parent];
    if (y <= key)
      break;
    b->heap[k] = y;
    b->hpos[KEY_PART(y)] = k;
    k = parent;
  }
  b->heap[k] = key;
  b->hpos[KEY_PART(key)] = k;
}

static void sift_down(big *b, uint32_t k, uint64_t key)
{
  for (;;) {
    uint32_t c = 2 * k + 1;
    if (c >= b->hn)
      break;
    uint64_t cv = b->heap[c];
    if (c + 1 < b->hn && b->heap[c + 1] < cv)
      cv = b->heap[++c];
    if (cv >= key)
      break;
    b->heap[k] = cv;
    b->hpos[KEY_PART(cv)] = k;
    k = c;
  }
  b->heap[k] = key;
  b->hpos[KEY_PART(key)] = k;
}

/* Puts @p key at heap index @p k (replacing what was there) and restores
 * the heap order around it. */
static void heap_fix(big *b, uint32_t k, uint64_t key)
{
  if (k > 0 && b->heap[(k - 1) / 2] > key)
    sift_up(b, k, key);
  else
    sift_down(b, k, key);
}

static void heap_remove(big *b, uint32_t x)
{
  uint32_t k = b->hpos[x];
  if (k == NOTIN)
    return;
  b->hpos[x] = NOTIN;
  uint64_t last = b->heap[--b->hn];
  if (k < b->hn)
    heap_fix(b, k, last);
}

/* Recomputes the rank of part @p x with its successor and fixes the heap. */
static void rerank(big *b, uint32_t x)
{
  uint32_t e = b->nxt[x];
  uint32_t r = PMCP__TK_NORANK;
  if (e < b->n)
    r = join_rank(b->tc, b->id[x], b->id[e], b->p + x, b->nxt[e] - x);
  if (r == PMCP__TK_NORANK) {
    heap_remove(b, x);
    return;
  }
  uint64_t key = (uint64_t)r << 32 | x;
  if (b->hpos[x] == NOTIN)
    sift_up(b, b->hn++, key);
  else
    heap_fix(b, b->hpos[x], key);
}

/* The heap merge over caller-provided memory: @p heap has room for n keys,
 * @p mem for 4 * (n + 1) words. */
static void heap_merge(tk_cache *tc, const unsigned char *p, uint32_t n, uint32_t *out,
                       size_t *count, uint64_t *heap, uint32_t *mem)
{
  big b = {p, n, mem, mem + (n + 1), mem + 2 * (n + 1), mem + 3 * (n + 1), heap, 0, tc};
  for (uint32_t i = 0; i < n; i++) {
    b.nxt[i] = i + 1;
    b.prv[i + 1] = i;
    b.hpos[i] = NOTIN;
    b.id[i] = pmcp__tk_byte_rank[p[i]];
    uint32_t r = i + 1 < n ? pmcp__tk_pair_rank[(unsigned)p[i] << 8 | p[i + 1]] : PMCP__TK_NORANK;
    if (r != PMCP__TK_NORANK) {
      b.heap[b.hn] = (uint64_t)r << 32 | i;
      b.hpos[i] = b.hn++;
    }
  }
  b.prv[0] = NOTIN;
  b.nxt[n] = n;
  b.hpos[n] = NOTIN;
  for (uint32_t k = b.hn / 2; k-- > 0;)
    sift_down(&b, k, b.heap[k]);

  while (b.hn > 0) {
    uint64_t top = b.heap[0];
    uint32_t i = KEY_PART(top);
    uint32_t j = b.nxt[i];
    heap_remove(&b, j);
    b.nxt[i] = b.nxt[j];
    if (b.nxt[j] < n)
      b.prv[b.nxt[j]] = i;
    b.id[i] = (uint32_t)(top >> 32);
    rerank(&b, i);
    if (i > 0)
      rerank(&b, b.prv[i]);
  }
  size_t c = 0;
  for (uint32_t i = 0; i < n; i = b.nxt[i]) {
    if (out)
      out[c] = b.id[i];
    c++;
  }
  *count = c;
}

static int bpe_big(tk_cache *tc, const unsigned char *p, size_t n, uint32_t *out, size_t *count)
{
  if (n >= UINT32_MAX)
    return PMCP_ETOOBIG;
  if (n <= PMCP__BPE_STACK) {
    uint64_t heap[PMCP__BPE_STACK];
    uint32_t mem[4 * (PMCP__BPE_STACK + 1)];
    heap_merge(tc, p, (uint32_t)n, out, count, heap, mem);
    return 0;
  }
  /* 24 bytes per byte of the piece */
  uint64_t *heap = malloc(sizeof(uint64_t) * n);
  uint32_t *mem = malloc(sizeof(uint32_t) * 4 * (n + 1));
  if (!heap || !mem) {
    free(heap);
    free(mem);
    return PMCP_ENOMEM;
  }
  heap_merge(tc, p, (uint32_t)n, out, count, heap, mem);
  free(heap);
  free(mem);
  return 0;
}

/* ---- token pairs, for the backtracking encoder (backtrack.c) ----
 * Tokens x then y are a valid pair when the merge of their bytes is
 * [x, y]. When no token spans the boundary between them, no merge of
 * their bytes can cross it: they merge as each does alone, and the pair is
 * valid when both merge alone into themselves (cached per token). Else the
 * exact merge above decides, right by definition. A per-thread
 * direct-mapped cache keeps the answers of pairs seen before (text joins
 * the same pairs again and again), so the span walk and the merge are paid
 * once per pair. */

static int pair_merge(tk_cache *tc, uint32_t x, uint32_t y)
{
  unsigned char buf[2 * PMCP__TK_MAXLEN];
  uint32_t xl = 0, yl = pmcp__tk_off[y + 1] - pmcp__tk_off[y];
  if (x != PMCP__TK_NORANK) {
    xl = pmcp__tk_off[x + 1] - pmcp__tk_off[x];
    memcpy(buf, pmcp__tk_bytes + pmcp__tk_off[x], xl);
  }
  memcpy(buf + xl, pmcp__tk_bytes + pmcp__tk_off[y], yl);
  uint32_t ids[2 * PMCP__TK_MAXLEN];
  size_t k;
  if (xl + yl <= PMCP__BPE_SMALL)
    bpe_small(tc, buf, xl + yl, ids, &k);
  else
    bpe_big(tc, buf, xl + yl, ids, &k); /* on the stack: cannot fail */
  if (x == PMCP__TK_NORANK)
    return k == 1 && ids[0] == y;
  return k == 2 && ids[0] == x && ids[1] == y;
}

static int self_valid(tk_cache *tc, uint32_t t)
{
  if (!tc)
    return pair_merge(NULL, PMCP__TK_NORANK, t);
  uint64_t bit = 1ull << (t % 64);
  if (!(tc->self_known[t / 64] & bit)) {
    if (pair_merge(tc, PMCP__TK_NORANK, t))
      tc->self_ok[t / 64] |= bit;
    tc->self_known[t / 64] |= bit;
  }
  return (tc->self_ok[t / 64] & bit) != 0;
}

static int pair_test(tk_cache *tc, uint32_t x, uint32_t y)
{
  unsigned char buf[2 * PMCP__TK_MAXLEN];
  uint32_t xl = pmcp__tk_off[x + 1] - pmcp__tk_off[x], yl = pmcp__tk_off[y + 1] - pmcp__tk_off[y];
  memcpy(buf, pmcp__tk_bytes + pmcp__tk_off[x], xl);
  memcpy(buf + xl, pmcp__tk_bytes + pmcp__tk_off[y], yl);
  if (!pmcp__tk_spanned(buf, 0, xl, xl + yl))
    return self_valid(tc, x) && self_valid(tc, y);
  return pair_merge(tc, x, y);
}

pmcp__bpe_ctx *pmcp__bpe_ctx_get(void)
{
  return (pmcp__bpe_ctx *)cache_get();
}

int pmcp__bpe_self_valid(pmcp__bpe_ctx *cx, uint32_t t)
{
  return self_valid((tk_cache *)cx, t);
}

int pmcp__bpe_pair_valid(pmcp__bpe_ctx *cx, uint32_t x, uint32_t y)
{
  tk_cache *tc = (tk_cache *)cx;
  if (x == PMCP__TK_NORANK)
    return self_valid(tc, y);
  if (!tc)
    return pair_test(NULL, x, y);
  /* key: x << 18 | y, 36 bits; entry: 1 << 63 | valid << 62 | key */
  uint64_t key = (uint64_t)x << 18 | y;
  uint64_t *e = &tc->pair[(key * 0x9E3779B97F4A7C15ull) >> (64 - PAIR_BITS)];
  if ((*e & ~(1ull << 62)) == (key | 1ull << 63))
    return (int)(*e >> 62 & 1);
  int ok = pair_test(tc, x, y);
  *e = 1ull << 63 | (uint64_t)ok << 62 | key;
  return ok;
}

static int merge_piece(tk_cache *tc, const unsigned char *p, size_t n, uint32_t *out,
                       size_t *count)
{
  if (n <= PMCP__BPE_SCAN || (n <= PMCP__BPE_SCAN_ASCII && p[n - 1] < 0x80)) {
    bpe_small(tc, p, n, out, count);
    return 0;
  }
  return pmcp__bpe_backtrack(p, n, out, count);
}

int pmcp__bpe(const unsigned char *p, size_t n, uint32_t *out, size_t *count)
{
  /* most pieces are one token: one probe of the rank hash */
  if (n <= PMCP__TK_MAXLEN) {
    uint32_t r = rank_of(p, n);
    if (r != PMCP__TK_NORANK) {
      if (out)
        out[0] = r;
      *count = 1;
      return 0;
    }
  }
  /* two or three bytes that are no token: at most one merge, decided by
   * the two-byte table (no cache: such pieces, as in base64, rarely repeat
   * and a cache miss costs more than the answer) */
  if (n == 2 || n == 3) {
    uint32_t r01 = pmcp__tk_pair_rank[(unsigned)p[0] << 8 | p[1]];
    uint32_t r12 = n == 3 ? pmcp__tk_pair_rank[(unsigned)p[1] << 8 | p[2]] : PMCP__TK_NORANK;
    uint32_t t[3] = {pmcp__tk_byte_rank[p[0]], pmcp__tk_byte_rank[p[1]],
                     n == 3 ? pmcp__tk_byte_rank[p[2]] : 0};
    size_t k = n;
    if (r01 != PMCP__TK_NORANK && r01 <= r12) { /* ties: the leftmost pair */
      t[0] = r01;
      t[1] = t[2];
      k--;
    } else if (r12 != PMCP__TK_NORANK) {
      t[1] = r12;
      k--;
    }
    if (out)
      memcpy(out, t, k * sizeof *out);
    *count = k;
    return 0;
  }
  tk_cache *tc = cache_get();
  if (n > PIECE_KEY || !tc)
    return merge_piece(tc, p, n, out, count);
  if (tc->skip) {
    tc->skip--;
    return merge_piece(tc, p, n, out, count);
  }
  if (++tc->looks == PROBE_RUN) {
    if (tc->hits < PROBE_RUN / 16)
      tc->skip = SKIP_RUN;
    tc->looks = tc->hits = 0;
  }
  piece_ent *e = &tc->piece[pmcp__tk_hashbytes(p, n) >> (64 - PIECE_BITS)];
  if (e->len == n && memcmp(e->bytes, p, n) == 0 && (!out || e->has_ids)) {
    if (out)
      memcpy(out, e->ids, e->count * sizeof *out);
    *count = e->count;
    tc->hits++;
    return 0;
  }
  uint32_t ids[PIECE_KEY];
  int rc = merge_piece(tc, p, n, ids, count);
  if (rc < 0)
    return rc;
  if (out)
    memcpy(out, ids, *count * sizeof *out);
  e->len = (uint8_t)n;
  e->count = (uint8_t)*count;
  e->has_ids = *count <= PIECE_IDS;
  memcpy(e->bytes, p, n);
  if (e->has_ids)
    memcpy(e->ids, ids, *count * sizeof *ids);
  return 0;
}

int pmcp__bpe_heap(const unsigned char *p, size_t n, uint32_t *out, size_t *count)
{
  return bpe_big(NULL, p, n, out, count);
}

int pmcp__bpe_scan(const unsigned char *p, size_t n, uint32_t *out, size_t *count)
{
  bpe_small(NULL, p, n, out, count);
  return 0;
}
