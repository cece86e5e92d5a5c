/* SPDX-License-Identifier: MIT */
/* The o200k_base merge ranks as built-in tables. gen/gen_ranks.c turns
 * o200k_base.tiktoken.zst into o200k_ranks.c at build time; nothing is read
 * at run time. This header is shared by the generator and the library so
 * both use the same hash function and slot layout. */
#ifndef PMCP_CORE_TOKENIZER_RANKS_H
#define PMCP_CORE_TOKENIZER_RANKS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* o200k_base: ranks 0..199997 are the mergeable tokens (a rank is the id).
 * The longest token is 128 bytes. */
#define PMCP__TK_NRANKS 199998u
#define PMCP__TK_MAXLEN 128u
#define PMCP__TK_NORANK UINT32_MAX

/* Open-addressing hash of token bytes -> rank, linear probing.
 * A slot is 32 bits: rank (18 bits) | (len - 1) << 18 (7 bits) | tag << 25
 * (7 high bits of the hash), so most probes are rejected without touching
 * the token bytes. PMCP__TK_EMPTY marks an empty slot. */
#define PMCP__TK_HASH_BITS 19u
#define PMCP__TK_HASH_SIZE (1u << PMCP__TK_HASH_BITS)
#define PMCP__TK_EMPTY UINT32_MAX
#define PMCP__TK_SLOT_RANK(s) ((s) & 0x3FFFFu)
#define PMCP__TK_SLOT_LEN(s) ((((s) >> 18) & 0x7Fu) + 1u)
#define PMCP__TK_SLOT_TAG(s) ((s) >> 25)
#define PMCP__TK_SLOT(rank, len, tag) \
  ((uint32_t)(rank) | ((uint32_t)((len) - 1u) << 18) | ((uint32_t)(tag) << 25))

/* Generated tables (o200k_ranks.c). */
extern const uint32_t pmcp__tk_off[PMCP__TK_NRANKS + 1]; /* rank -> byte offset */
extern const unsigned char pmcp__tk_bytes[];               /* tokens, by rank */
extern const uint32_t pmcp__tk_hash[PMCP__TK_HASH_SIZE];   /* slots */
extern const uint32_t pmcp__tk_byte_rank[256];             /* single bytes */
extern const uint32_t pmcp__tk_pair_rank[65536];           /* b0 << 8 | b1 */
/* rank -> the token's first min(len, 8) bytes (pmcp__tk_key8of), so tokens
 * of up to 8 bytes are checked with one load instead of a memcmp. */
extern const uint64_t pmcp__tk_key8[PMCP__TK_NRANKS];

/* Byte trie of all tokens, numbered breadth first: the children of node v
 * (the root is 0) are nodes BASE(first[v]) .. BASE(first[v + 1]) - 1,
 * sorted by byte; the root's child for byte c is 1 + c. node[v] packs the
 * byte that leads to v and the token whose bytes spell the path to v (or
 * NOTOK). A node (not the root) with more than PMCP__TK_TRIE_SCAN children
 * has a child map, map[MAP(first[v])] (MAP 0: none): its child for byte c
 * is BASE(first[v]) + map[..][c] - 1, none where map[..][c] is 0. */
#define PMCP__TK_TRIE_SCAN 8u
#define PMCP__TK_TRIE_BASE_BITS 19u
#define PMCP__TK_TRIE_MAPS_MAX ((1u << (32 - PMCP__TK_TRIE_BASE_BITS)) - 1u)
#define PMCP__TK_TRIE_BASE(f) ((f) & ((1u << PMCP__TK_TRIE_BASE_BITS) - 1u))
#define PMCP__TK_TRIE_MAP(f) ((f) >> PMCP__TK_TRIE_BASE_BITS)
#define PMCP__TK_TRIE_NOTOK 0x3FFFFu
#define PMCP__TK_TRIE_NODE(byte, tok) ((uint32_t)(byte) << 18 | (uint32_t)(tok))
#define PMCP__TK_TRIE_BYTE(x) ((x) >> 18)
#define PMCP__TK_TRIE_TOK(x) ((x) & 0x3FFFFu)
extern const uint32_t pmcp__tk_trie_nodes;
extern const uint32_t pmcp__tk_trie_first[]; /* nodes + 1 entries */
extern const uint32_t pmcp__tk_trie_node[];
extern const unsigned char pmcp__tk_trie_map[][256];

static inline uint64_t pmcp__tk_load8(const unsigned char *p)
{
  uint64_t v;
  memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

/* The first @p n (1..7) bytes at @p p, little-endian, upper bytes zero.
 * Overlapping loads: the bytes they share have the same value. */
static inline uint64_t pmcp__tk_loadn(const unsigned char *p, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (n >= 4) {
    uint32_t lo, hi;
    memcpy(&lo, p, 4);
    memcpy(&hi, p + n - 4, 4);
    return (uint64_t)lo | (uint64_t)hi << (8 * (n - 4));
  }
  if (n >= 2) {
    uint16_t lo, hi;
    memcpy(&lo, p, 2);
    memcpy(&hi, p + n - 2, 2);
    return (uint64_t)lo | (uint64_t)hi << (8 * (n - 2));
  }
  return p[0];
#else
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
#endif
}

/* The first min(n, 8) bytes at @p p (n >= 1) as pmcp__tk_key8[] holds them. */
static inline uint64_t pmcp__tk_key8of(const unsigned char *p, size_t n)
{
  return n >= 8 ? pmcp__tk_load8(p) : pmcp__tk_loadn(p, n);
}

static inline uint64_t pmcp__tk_mix(uint64_t h)
{
  h ^= h >> 31;
  h *= 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  return h;
}

/* Hash of 1..8 bytes given as their key8 value @p v: one multiply (most
 * pieces are words of up to 8 bytes, looked up once each); the shift
 * folds the last bytes into the bits the multiply spreads to the top. */
static inline uint64_t pmcp__tk_hash8(uint64_t v, size_t n)
{
  return (v ^ v >> 29 ^ (uint64_t)n << 60) * 0x9E3779B97F4A7C15ull;
}

/* Hash of @p n (>= 1) bytes. Only the top 26 bits are used (index + tag).
 * For n <= 8 it equals pmcp__tk_hash8(pmcp__tk_key8of(p, n), n). */
static inline uint64_t pmcp__tk_hashbytes(const unsigned char *p, size_t n)
{
  if (n <= 8)
    return pmcp__tk_hash8(pmcp__tk_key8of(p, n), n);
  uint64_t h = 0x243F6A8885A308D3ull ^ n;
  while (n >= 8) {
    h = pmcp__tk_mix(h ^ pmcp__tk_load8(p)) + 0x13198A2E03707344ull;
    p += 8;
    n -= 8;
  }
  if (n)
    h = pmcp__tk_mix(h ^ pmcp__tk_loadn(p, n) ^ 0xA4093822299F31D0ull);
  return pmcp__tk_mix(h);
}

#endif
