/* SPDX-License-Identifier: MIT */
/* Build-time generator: o200k_base.tiktoken.zst -> o200k_ranks.c.
 *
 *   pmcp-gen-ranks INPUT.tiktoken.zst OUTPUT.c
 *
 * The input is tiktoken's rank file ("base64(token) SP rank LF" per line),
 * zstd-compressed. The output holds, as constant data (no run-time init):
 * the token bytes by rank, their offsets, an open-addressing hash of bytes
 * to rank (layout in ../ranks.h), the single-byte ranks and a 64 Ki table
 * of two-byte ranks, and a byte trie of all tokens (for longest-prefix
 * matches; layout in ../ranks.h). The generator refuses a file whose ranks are not
 * exactly 0..N-1 with every byte present and no duplicate, so a damaged
 * input fails the build instead of miscounting. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "ranks.h"

static void die(const char *msg, const char *detail)
{
  fprintf(stderr, "pmcp-gen-ranks: %s%s%s\n", msg, detail ? ": " : "",
          detail ? detail : "");
  exit(1);
}

static unsigned char *read_file(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    die(path, strerror(errno));
  size_t cap = 1 << 20, n = 0;
  unsigned char *buf = malloc(cap);
  if (!buf)
    die("out of memory", NULL);
  for (;;) {
    if (n == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      if (!buf)
        die("out of memory", NULL);
    }
    size_t r = fread(buf + n, 1, cap - n, f);
    n += r;
    if (r == 0)
      break;
  }
  if (ferror(f))
    die(path, "read error");
  fclose(f);
  *len = n;
  return buf;
}

static int b64val(unsigned char c)
{
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/* Decodes standard padded base64 [s, e) into out; returns the length or -1. */
static long b64dec(const unsigned char *s, const unsigned char *e, unsigned char *out)
{
  size_t n = (size_t)(e - s);
  if (n == 0 || n % 4)
    return -1;
  long o = 0;
  for (size_t i = 0; i < n; i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; k++) {
      if (s[i + k] == '=' && i + 4 == n && k >= 2) {
        v[k] = 0;
        pad++;
      } else {
        if (pad)
          return -1;
        v[k] = b64val(s[i + k]);
        if (v[k] < 0)
          return -1;
      }
    }
    unsigned w = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 | (unsigned)v[3];
    out[o++] = (unsigned char)(w >> 16);
    if (pad < 2)
      out[o++] = (unsigned char)(w >> 8);
    if (pad < 1)
      out[o++] = (unsigned char)w;
  }
  return o;
}

static void put_u32_array(FILE *f, const char *decl, const uint32_t *a, size_t n)
{
  fprintf(f, "%s = {\n", decl);
  for (size_t i = 0; i < n; i++)
    fprintf(f, "0x%X,%s", a[i], (i % 12 == 11) ? "\n" : "");
  fprintf(f, "\n};\n\n");
}


/* ---- the token trie ----
 * Built as a pointer trie, then numbered breadth first so the children of
 * every node are contiguous and sorted by byte: node v's children are
 * first[v] .. first[v + 1] - 1, and the root's are 1 + byte. */
typedef struct tnode {
  uint32_t tok;
  uint32_t nkid, capkid;
  uint32_t *kid; /* indexes into the node pool, sorted by byte */
  unsigned char byte;
} tnode;

static tnode *pool;
static uint32_t npool, cappool;

static uint32_t new_node(unsigned char byte)
{
  if (npool == cappool) {
    cappool = cappool ? cappool * 2 : 1u << 16;
    pool = realloc(pool, cappool * sizeof *pool);
    if (!pool)
      die("out of memory", NULL);
  }
  pool[npool] = (tnode){PMCP__TK_TRIE_NOTOK, 0, 0, NULL, byte};
  return npool++;
}

static void trie_insert(const unsigned char *t, size_t n, uint32_t rank)
{
  uint32_t v = 0;
  for (size_t i = 0; i < n; i++) {
    tnode *nd = &pool[v];
    uint32_t k = 0;
    while (k < nd->nkid && pool[nd->kid[k]].byte < t[i])
      k++;
    if (k < nd->nkid && pool[nd->kid[k]].byte == t[i]) {
      v = nd->kid[k];
      continue;
    }
    uint32_t c = new_node(t[i]);
    nd = &pool[v]; /* the pool may have moved */
    if (nd->nkid == nd->capkid) {
      nd->capkid = nd->capkid ? nd->capkid * 2 : 2;
      nd->kid = realloc(nd->kid, nd->capkid * sizeof *nd->kid);
      if (!nd->kid)
        die("out of memory", NULL);
    }
    memmove(nd->kid + k + 1, nd->kid + k, (nd->nkid - k) * sizeof *nd->kid);
    nd->kid[k] = c;
    nd->nkid++;
    v = c;
  }
  if (pool[v].tok != PMCP__TK_TRIE_NOTOK)
    die("trie", "duplicate token");
  pool[v].tok = rank;
}

static void put_trie(FILE *f)
{
  uint32_t *order = malloc(npool * sizeof *order);  /* BFS number -> pool */
  uint32_t *first = malloc((npool + 1) * sizeof *first);
  uint32_t *node = malloc(npool * sizeof *node);
  unsigned char *map = malloc(256 * (size_t)(PMCP__TK_TRIE_MAPS_MAX + 1));
  if (!order || !first || !node || !map)
    die("out of memory", NULL);
  uint32_t head = 0, tail = 0, nmap = 0;
  order[tail++] = 0;
  while (head < tail) {
    uint32_t v = order[head];
    first[head] = tail;
    if (pool[v].nkid > PMCP__TK_TRIE_SCAN && head != 0) {
      if (nmap == PMCP__TK_TRIE_MAPS_MAX || pool[v].nkid > 255)
        die("trie", "more wide nodes than the child maps can index");
      unsigned char *m = map + 256 * (size_t)nmap++;
      memset(m, 0, 256);
      for (uint32_t k = 0; k < pool[v].nkid; k++)
        m[pool[pool[v].kid[k]].byte] = (unsigned char)(k + 1);
      first[head] |= nmap << PMCP__TK_TRIE_BASE_BITS;
    }
    for (uint32_t k = 0; k < pool[v].nkid; k++)
      order[tail++] = pool[v].kid[k];
    head++;
  }
  first[npool] = tail;
  if (tail != npool || pool[0].nkid != 256 || npool >= 1u << PMCP__TK_TRIE_BASE_BITS)
    die("trie", "not every node reached, a byte missing, or too many nodes");
  for (uint32_t i = 0; i < npool; i++)
    node[i] = PMCP__TK_TRIE_NODE(pool[order[i]].byte, pool[order[i]].tok);
  fprintf(f, "const uint32_t pmcp__tk_trie_nodes = %u;\n", npool);
  put_u32_array(f, "const uint32_t pmcp__tk_trie_first[]", first, npool + 1);
  put_u32_array(f, "const uint32_t pmcp__tk_trie_node[]", node, npool);
  fprintf(f, "const unsigned char pmcp__tk_trie_map[][256] = {\n{0},\n");
  for (uint32_t i = 0; i < nmap; i++) {
    fputc('{', f);
    for (unsigned c = 0; c < 256; c++)
      fprintf(f, "%u,", map[256 * (size_t)i + c]);
    fputs("},\n", f);
  }
  fprintf(f, "};\n");
  fprintf(stderr, "pmcp-gen-ranks: trie of %u nodes, %u with child maps\n", npool, nmap);
  free(order);
  free(first);
  free(node);
  free(map);
}

int main(int argc, char **argv)
{
  if (argc != 3)
    die("usage: pmcp-gen-ranks INPUT.tiktoken.zst OUTPUT.c", NULL);
  size_t zlen;
  unsigned char *z = read_file(argv[1], &zlen);
  unsigned long long rawlen = ZSTD_getFrameContentSize(z, zlen);
  if (rawlen == ZSTD_CONTENTSIZE_UNKNOWN || rawlen == ZSTD_CONTENTSIZE_ERROR ||
      rawlen > (64u << 20))
    die(argv[1], "not a zstd frame with a known size");
  unsigned char *raw = malloc(rawlen ? rawlen : 1);
  if (!raw)
    die("out of memory", NULL);
  size_t got = ZSTD_decompress(raw, rawlen, z, zlen);
  if (ZSTD_isError(got) || got != rawlen)
    die(argv[1], ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short frame");
  free(z);

  uint32_t *off = calloc(PMCP__TK_NRANKS + 1, sizeof *off);
  unsigned char *bytes = malloc(rawlen); /* decoded data is smaller than base64 */
  uint32_t *hash = malloc(sizeof(uint32_t) * PMCP__TK_HASH_SIZE);
  uint32_t *pair = malloc(sizeof(uint32_t) * 65536);
  uint64_t *key8 = malloc(sizeof(uint64_t) * PMCP__TK_NRANKS);
  uint32_t byte_rank[256];
  if (!off || !bytes || !hash || !pair || !key8)
    die("out of memory", NULL);
  memset(hash, 0xFF, sizeof(uint32_t) * PMCP__TK_HASH_SIZE);
  memset(pair, 0xFF, sizeof(uint32_t) * 65536);
  memset(byte_rank, 0xFF, sizeof byte_rank);

  /* Ranks must come in order 0, 1, 2 ... so the token bytes are laid out by
   * rank and off[] is monotone. */
  size_t nb = 0;
  uint32_t next = 0;
  new_node(0); /* the root */
  const unsigned char *p = raw, *end = raw + rawlen;
  unsigned long maxprobe = 0, totprobe = 0;
  while (p < end) {
    const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl)
      die(argv[1], "last line has no newline");
    const unsigned char *sp = memchr(p, ' ', (size_t)(nl - p));
    if (!sp)
      die(argv[1], "line without a space");
    long tl = b64dec(p, sp, bytes + nb);
    if (tl <= 0 || (unsigned long)tl > PMCP__TK_MAXLEN)
      die(argv[1], "bad base64 token or token longer than 128 bytes");
    char *ep;
    errno = 0;
    unsigned long r = strtoul((const char *)sp + 1, &ep, 10);
    if (errno || ep != (const char *)nl || r != next)
      die(argv[1], "ranks are not 0, 1, 2, ... in order");
    if (next >= PMCP__TK_NRANKS)
      die(argv[1], "more ranks than o200k_base has");
    const unsigned char *t = bytes + nb;
    off[next] = (uint32_t)nb;
    key8[next] = pmcp__tk_key8of(t, (size_t)tl);
    uint64_t h = pmcp__tk_hashbytes(t, (size_t)tl);
    uint32_t idx = (uint32_t)(h >> (64 - PMCP__TK_HASH_BITS));
    uint32_t tag = (uint32_t)(h >> (64 - PMCP__TK_HASH_BITS - 7)) & 0x7F;
    unsigned long probes = 1;
    while (hash[idx] != PMCP__TK_EMPTY) {
      uint32_t s = hash[idx];
      uint32_t o = off[PMCP__TK_SLOT_RANK(s)];
      if (PMCP__TK_SLOT_LEN(s) == (uint32_t)tl && memcmp(bytes + o, t, (size_t)tl) == 0)
        die(argv[1], "duplicate token");
      idx = (idx + 1) & (PMCP__TK_HASH_SIZE - 1);
      probes++;
    }
    hash[idx] = PMCP__TK_SLOT(next, (uint32_t)tl, tag);
    totprobe += probes;
    if (probes > maxprobe)
      maxprobe = probes;
    trie_insert(t, (size_t)tl, next);
    if (tl == 1)
      byte_rank[t[0]] = next;
    if (tl == 2)
      pair[(unsigned)t[0] << 8 | t[1]] = next;
    nb += (size_t)tl;
    next++;
    p = nl + 1;
  }
  if (next != PMCP__TK_NRANKS)
    die(argv[1], "fewer ranks than o200k_base has");
  off[next] = (uint32_t)nb;
  for (int b = 0; b < 256; b++)
    if (byte_rank[b] == PMCP__TK_NORANK)
      die(argv[1], "a single byte has no rank");

  FILE *f = fopen(argv[2], "w");
  if (!f)
    die(argv[2], strerror(errno));
  fprintf(f, "/* GENERATED at build time by pmcp-gen-ranks from o200k_base.tiktoken.zst.\n"
             " * %u ranks, %zu token bytes; hash probes: mean %.3f, max %lu. */\n"
             "#include \"core/tokenizer/ranks.h\"\n\n",
          next, nb, (double)totprobe / next, maxprobe);
  /* The bytes as a string literal: compilers digest megabyte strings far
   * faster than megabyte initializer lists. */
  fprintf(f, "#if defined(__GNUC__)\n#pragma GCC diagnostic ignored \"-Woverlength-strings\"\n#endif\n");
  fprintf(f, "const unsigned char pmcp__tk_bytes[%zu] =\n\"", nb + 1);
  for (size_t i = 0; i < nb; i++) {
    unsigned c = bytes[i];
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\' && c != '?')
      fputc((int)c, f);
    else
      fprintf(f, "\\%03o", c);
    if (i % 64 == 63)
      fputs("\"\n\"", f);
  }
  fprintf(f, "\";\n\n");
  put_u32_array(f, "const uint32_t pmcp__tk_off[PMCP__TK_NRANKS + 1]", off, next + 1);
  put_u32_array(f, "const uint32_t pmcp__tk_hash[PMCP__TK_HASH_SIZE]", hash, PMCP__TK_HASH_SIZE);
  put_u32_array(f, "const uint32_t pmcp__tk_byte_rank[256]", byte_rank, 256);
  put_u32_array(f, "const uint32_t pmcp__tk_pair_rank[65536]", pair, 65536);
  fprintf(f, "const uint64_t pmcp__tk_key8[PMCP__TK_NRANKS] = {\n");
  for (uint32_t r = 0; r < next; r++)
    fprintf(f, "0x%llXu,%s", (unsigned long long)key8[r], (r % 8 == 7) ? "\n" : "");
  fprintf(f, "\n};\n\n");
  put_trie(f);
  if (fclose(f) != 0)
    die(argv[2], "write error");
  free(raw);
  free(off);
  free(bytes);
  free(hash);
  free(pair);
  free(key8);
  fprintf(stderr, "pmcp-gen-ranks: %u ranks, mean probes %.3f, max %lu\n", next,
          (double)totprobe / next, maxprobe);
  return 0;
}
