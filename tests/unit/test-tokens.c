/* SPDX-License-Identifier: MIT */
/* Unit tests of the o200k_base tokenizer (probemcp/tokens.h).
 * Data: $PMCP_TEST_DATA/tokenizer/ (vectors_public.jsonl produced by the
 * tiktoken npm package 1.0.22, the WASM build of the reference; a 256 KiB
 * slice of the benchmark corpus and its reference count). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "core/tokenizer/bpe.h"
#include "core/tokenizer/pretok.h"
#include "core/tokenizer/ranks.h"
#include "core/tokenizer/tokclass.h"
#include "core/tokenizer/tokenizer.h"
#include "probemcp/probemcp.h"

unsigned pmcp__pretok_ascii_class(unsigned c);

/* tiktoken 1.0.22 encode_ordinary(corpus_256k.txt).length */
#define CORPUS_256K_COUNT 79875u

static char *read_data(const char *name, size_t *len)
{
  const char *dir = getenv("PMCP_TEST_DATA");
  char path[4096];
  snprintf(path, sizeof path, "%s/tokenizer/%s", dir ? dir : "tests/data", name);
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(buf);
  ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  buf[n] = '\0';
  *len = (size_t)n;
  return buf;
}

/* Decodes the JSON string starting at *p (after the opening quote) into a
 * malloc'd buffer, keeping NUL bytes (cJSON would cut the string there). */
static char *json_text(const char *p, size_t *len)
{
  size_t cap = strlen(p) + 1, n = 0;
  char *o = malloc(cap);
  ck_assert_ptr_nonnull(o);
  while (*p && *p != '"') {
    unsigned cp;
    if (*p != '\\') {
      o[n++] = *p++;
      continue;
    }
    p++;
    char c = *p++;
    switch (c) {
    case 'n': cp = '\n'; break;
    case 'r': cp = '\r'; break;
    case 't': cp = '\t'; break;
    case 'b': cp = '\b'; break;
    case 'f': cp = '\f'; break;
    case 'u': {
      char h[5] = {p[0], p[1], p[2], p[3], 0};
      cp = (unsigned)strtoul(h, NULL, 16);
      p += 4;
      if (cp >= 0xD800 && cp <= 0xDBFF && p[0] == '\\' && p[1] == 'u') {
        char l[5] = {p[2], p[3], p[4], p[5], 0};
        unsigned lo = (unsigned)strtoul(l, NULL, 16);
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        p += 6;
      }
      break;
    }
    default: cp = (unsigned char)c; break;
    }
    if (cp < 0x80) {
      o[n++] = (char)cp;
    } else if (cp < 0x800) {
      o[n++] = (char)(0xC0 | cp >> 6);
      o[n++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      o[n++] = (char)(0xE0 | cp >> 12);
      o[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
      o[n++] = (char)(0x80 | (cp & 0x3F));
    } else {
      o[n++] = (char)(0xF0 | cp >> 18);
      o[n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
      o[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
      o[n++] = (char)(0x80 | (cp & 0x3F));
    }
  }
  *len = n;
  return o;
}

typedef struct vec {
  char *text;
  size_t len;
  uint32_t *ids;
  size_t n;
} vec;

static vec *load_vectors(size_t *count)
{
  size_t len;
  char *all = read_data("vectors_public.jsonl", &len);
  size_t cap = 512, nv = 0;
  vec *v = calloc(cap, sizeof *v);
  char *line = all;
  while (line && *line) {
    char *nl = strchr(line, '\n');
    if (nl)
      *nl = '\0';
    ck_assert_msg(strncmp(line, "{\"text\":\"", 9) == 0, "vector line %zu: unexpected shape", nv + 1);
    cJSON *j = cJSON_Parse(line);
    ck_assert_msg(j != NULL, "vector line %zu is not JSON", nv + 1);
    cJSON *toks = cJSON_GetObjectItemCaseSensitive(j, "tokens");
    ck_assert(cJSON_IsArray(toks));
    ck_assert_uint_lt(nv, cap);
    v[nv].text = json_text(line + 9, &v[nv].len);
    v[nv].n = (size_t)cJSON_GetArraySize(toks);
    v[nv].ids = malloc((v[nv].n + 1) * sizeof(uint32_t));
    size_t k = 0;
    cJSON *t;
    cJSON_ArrayForEach(t, toks) v[nv].ids[k++] = (uint32_t)t->valuedouble;
    cJSON *cnt = cJSON_GetObjectItemCaseSensitive(j, "count");
    ck_assert_uint_eq((size_t)cnt->valuedouble, v[nv].n);
    cJSON_Delete(j);
    nv++;
    line = nl ? nl + 1 : NULL;
  }
  free(all);
  *count = nv;
  return v;
}

static void free_vectors(vec *v, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    free(v[i].text);
    free(v[i].ids);
  }
  free(v);
}

START_TEST(vectors_exact)
{
  size_t nv;
  vec *v = load_vectors(&nv);
  ck_assert_uint_eq(nv, 350);
  for (size_t i = 0; i < nv; i++) {
    uint32_t *ids;
    size_t n, c;
    ck_assert_int_eq(pmcp_tokens_encode(v[i].text, v[i].len, &ids, &n), 0);
    ck_assert_msg(n == v[i].n, "line %zu: %zu ids, expected %zu", i + 1, n, v[i].n);
    for (size_t k = 0; k < n; k++)
      ck_assert_msg(ids[k] == v[i].ids[k], "line %zu: id %zu is %u, expected %u", i + 1, k,
                    ids[k], v[i].ids[k]);
    ck_assert_int_eq(pmcp_tokens_count(v[i].text, v[i].len, &c), 0);
    ck_assert_uint_eq(c, n);
    pmcp_buf b = PMCP_BUF_INIT;
    ck_assert_int_eq(pmcp_tokens_decode(ids, n, &b), 0);
    ck_assert_uint_eq(b.len, v[i].len);
    ck_assert(memcmp(b.ptr, v[i].text, b.len) == 0);
    pmcp_buf_dispose(&b);
    pmcp_tokens_free(ids);
  }
  free_vectors(v, nv);
}
END_TEST

/* The built-in tables hold exactly tiktoken's o200k_base.tiktoken: written
 * back out in its format they hash to the sha256 tiktoken itself expects
 * (tiktoken_ext/openai_public.py). */
START_TEST(tables_are_the_reference_ranks)
{
  static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  EVP_MD_CTX *md = EVP_MD_CTX_new();
  ck_assert_ptr_nonnull(md);
  ck_assert_int_eq(EVP_DigestInit_ex(md, EVP_sha256(), NULL), 1);
  for (uint32_t r = 0; r < PMCP__TK_NRANKS; r++) {
    const unsigned char *t = pmcp__tk_bytes + pmcp__tk_off[r];
    size_t n = pmcp__tk_off[r + 1] - pmcp__tk_off[r], o = 0;
    char line[256];
    for (size_t i = 0; i < n; i += 3) {
      unsigned v = (unsigned)t[i] << 16 | (i + 1 < n ? (unsigned)t[i + 1] << 8 : 0) |
                   (i + 2 < n ? t[i + 2] : 0);
      line[o++] = b64[v >> 18];
      line[o++] = b64[(v >> 12) & 63];
      line[o++] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
      line[o++] = i + 2 < n ? b64[v & 63] : '=';
    }
    o += (size_t)snprintf(line + o, sizeof line - o, " %u\n", r);
    EVP_DigestUpdate(md, line, o);
    /* and the hash finds every token under its own rank */
    ck_assert_uint_eq(pmcp__tk_rank(t, n), r);
  }
  unsigned char h[32];
  unsigned hl;
  EVP_DigestFinal_ex(md, h, &hl);
  EVP_MD_CTX_free(md);
  char hex[65];
  for (int i = 0; i < 32; i++)
    snprintf(hex + 2 * i, 3, "%02x", h[i]);
  ck_assert_str_eq(hex, "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d");
}
END_TEST

START_TEST(corpus_slice)
{
  size_t len, c;
  char *t = read_data("corpus_256k.txt", &len);
  ck_assert_int_eq(pmcp_tokens_count(t, len, &c), 0);
  ck_assert_uint_eq(c, CORPUS_256K_COUNT);
  free(t);
}
END_TEST

START_TEST(ascii_classes_match_tables)
{
  for (unsigned c = 0; c < 128; c++)
    ck_assert_msg(pmcp__pretok_ascii_class(c) == pmcp__tk_class(c), "U+%04X", c);
  /* spot checks of Unicode 16.0 facts the pattern depends on */
  ck_assert(pmcp__tk_class(0x85) & PMCP__TK_WS);    /* NEL is White_Space */
  ck_assert(!(pmcp__tk_class(0xFEFF) & PMCP__TK_WS)); /* BOM is not */
  ck_assert(!(pmcp__tk_class(0x200B) & PMCP__TK_WS));
  ck_assert(pmcp__tk_class(0x3000) & PMCP__TK_WS);
  ck_assert_uint_eq(pmcp__tk_class(0x01C5), PMCP__TK_A | PMCP__TK_L); /* Lt */
  ck_assert_uint_eq(pmcp__tk_class(0x02B0), PMCP__TK_A | PMCP__TK_B | PMCP__TK_L); /* Lm */
  ck_assert_uint_eq(pmcp__tk_class(0x0301), PMCP__TK_A | PMCP__TK_B | PMCP__TK_M);
  ck_assert(pmcp__tk_class(0x00B2) & PMCP__TK_N);  /* superscript two: No */
  ck_assert(pmcp__tk_class(0x10D40) != 0);          /* new in 16.0 (Garay) */
  ck_assert_uint_eq(pmcp__tk_class(0x11DE0), 0);    /* new only in 17.0 */
}
END_TEST

START_TEST(invalid_utf8)
{
  static const struct {
    const char *s;
    size_t len, bad;
  } cases[] = {
    {"ab\x80", 3, 2},             /* lone continuation byte */
    {"\xC0\x80", 2, 0},           /* overlong NUL */
    {"\xC1\xBF", 2, 0},           /* overlong */
    {"a\xE0\x80\x80", 4, 1},      /* overlong 3-byte */
    {"\xED\xA0\x80", 3, 0},       /* UTF-16 surrogate */
    {"\xED\xBF\xBF", 3, 0},
    {"x\xF4\x90\x80\x80", 5, 1},  /* above U+10FFFF */
    {"\xF5\x80\x80\x80", 4, 0},
    {"\xFF", 1, 0},
    {"\xFE", 1, 0},
    {"abc\xE2\x82", 5, 3},        /* truncated at the end */
    {"\xE2\x82" "a", 3, 0},       /* truncated before ASCII */
    {"\xF0\x9F\x98", 3, 0},
    {"12345678\x80", 9, 8},       /* after the 8-byte ASCII fast path */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t c = 12345, off = 999;
    ck_assert_int_eq(pmcp_tokens_count(cases[i].s, cases[i].len, &c), PMCP_EUTF8);
    ck_assert_uint_eq(c, 12345);
    uint32_t *ids = (uint32_t *)&c;
    size_t n = 7;
    ck_assert_int_eq(pmcp_tokens_encode(cases[i].s, cases[i].len, &ids, &n), PMCP_EUTF8);
    ck_assert_ptr_null(ids);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(pmcp_tokens_utf8_check(cases[i].s, cases[i].len, &off), PMCP_EUTF8);
    ck_assert_msg(off == cases[i].bad, "case %zu: offset %zu, expected %zu", i, off, cases[i].bad);
  }
  /* the extremes that are valid */
  static const char ok[] = "\xF4\x8F\xBF\xBF \xEF\xBF\xBF \xED\x9F\xBF \xEE\x80\x80 \xC2\x80 \x7F";
  size_t c;
  ck_assert_int_eq(pmcp_tokens_utf8_check(ok, sizeof ok - 1, NULL), 0);
  ck_assert_int_eq(pmcp_tokens_count(ok, sizeof ok - 1, &c), 0);
  ck_assert_uint_gt(c, 0);
}
END_TEST

START_TEST(bad_arguments)
{
  size_t c;
  uint32_t *ids;
  size_t n;
  pmcp_buf b = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp_tokens_count(NULL, 3, &c), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_tokens_count("abc", 3, NULL), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_tokens_count(NULL, 0, &c), 0);
  ck_assert_uint_eq(c, 0);
  ck_assert_int_eq(pmcp_tokens_encode(NULL, 0, &ids, &n), 0);
  ck_assert_ptr_null(ids);
  ck_assert_uint_eq(n, 0);
  ck_assert_int_eq(pmcp_tokens_encode(NULL, 1, &ids, &n), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_tokens_encode("a", 1, NULL, &n), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_tokens_decode(NULL, 1, &b), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_tokens_decode(NULL, 0, NULL), PMCP_EINVAL);
  uint32_t bad[] = {100, 199998};
  ck_assert_int_eq(pmcp_tokens_decode(bad, 2, &b), PMCP_EINVAL);
  ck_assert_uint_eq(b.len, 0);
  uint32_t bad2[] = {200000};
  ck_assert_int_eq(pmcp_tokens_decode(bad2, 1, &b), PMCP_EINVAL);
  uint32_t sp[] = {PMCP_TOKEN_ENDOFTEXT, 200, PMCP_TOKEN_ENDOFPROMPT};
  ck_assert_int_eq(pmcp_tokens_decode(sp, 3, &b), 0);
  ck_assert(strncmp(b.ptr, "<|endoftext|>", 13) == 0);
  ck_assert(strcmp(b.ptr + b.len - 15, "<|endofprompt|>") == 0);
  pmcp_buf_dispose(&b);
  /* special tokens are ordinary text when encoding */
  ck_assert_int_eq(pmcp_tokens_count("<|endoftext|>", 13, &c), 0);
  ck_assert_uint_eq(c, 7); /* < | end of text | > as tiktoken (vector line 6) */
  /* NUL bytes are text too */
  ck_assert_int_eq(pmcp_tokens_count("a\0b", 3, &c), 0);
  ck_assert_uint_eq(c, 3);
}
END_TEST

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 11);
}

/* The heap merge and tiktoken's linear scan agree on every piece. */
START_TEST(heap_merge_matches_linear)
{
  static const char alpha[] = "aaaabbe lt.-_=0123/\xC3\xA9\xE4\xB8\xAD";
  unsigned char piece[PMCP__BPE_SMALL];
  uint32_t a[PMCP__BPE_SMALL], b[PMCP__BPE_SMALL];
  for (int iter = 0; iter < 8000; iter++) {
    size_t n = 1 + rnd() % PMCP__BPE_SMALL;
    int mode = (int)(rnd() % 3);
    for (size_t i = 0; i < n; i++)
      piece[i] = mode == 0 ? (unsigned char)alpha[rnd() % (sizeof alpha - 1)]
                 : mode == 1 ? (unsigned char)("ab"[rnd() % 2])
                             : (unsigned char)(rnd() & 0xFF);
    size_t na, nb;
    ck_assert_int_eq(pmcp__bpe(piece, n, a, &na), 0);
    ck_assert_int_eq(pmcp__bpe_heap(piece, n, b, &nb), 0);
    ck_assert_uint_eq(na, nb);
    ck_assert(memcmp(a, b, na * sizeof *a) == 0);
  }
}
END_TEST

/* ---- brute-force reference merge, straight from the rank tables ----
 * Its own lookup (ranks sorted by their bytes, binary search) and the
 * textbook loop: find the lowest-ranked adjacent pair (leftmost on ties),
 * join it, repeat. O(n^2), independent of the library's hash and heap. */
static uint32_t *ref_sorted;

static int ref_cmp_bytes(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
  int c = memcmp(a, b, an < bn ? an : bn);
  return c ? c : (an > bn) - (an < bn);
}

static int ref_cmp_rank(const void *x, const void *y)
{
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  return ref_cmp_bytes(pmcp__tk_bytes + pmcp__tk_off[a], pmcp__tk_off[a + 1] - pmcp__tk_off[a],
                       pmcp__tk_bytes + pmcp__tk_off[b], pmcp__tk_off[b + 1] - pmcp__tk_off[b]);
}

static uint32_t ref_rank(const unsigned char *p, size_t n)
{
  if (!ref_sorted) {
    ref_sorted = malloc(PMCP__TK_NRANKS * sizeof *ref_sorted);
    ck_assert_ptr_nonnull(ref_sorted);
    for (uint32_t r = 0; r < PMCP__TK_NRANKS; r++)
      ref_sorted[r] = r;
    qsort(ref_sorted, PMCP__TK_NRANKS, sizeof *ref_sorted, ref_cmp_rank);
  }
  size_t lo = 0, hi = PMCP__TK_NRANKS;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    uint32_t r = ref_sorted[mid];
    int c = ref_cmp_bytes(pmcp__tk_bytes + pmcp__tk_off[r], pmcp__tk_off[r + 1] - pmcp__tk_off[r], p, n);
    if (c == 0)
      return r;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return PMCP__TK_NORANK;
}

/* Writes the ids of the piece p[0..n) to out (room for n), returns their count. */
static size_t ref_bpe(const unsigned char *p, size_t n, uint32_t *out)
{
  size_t *st = malloc((n + 1) * sizeof *st), m = n; /* m parts; st[m] = n */
  uint32_t *rk = malloc((n + 1) * sizeof *rk);      /* rk[i]: parts i, i+1 joined */
  ck_assert(st && rk);
  for (size_t i = 0; i <= n; i++)
    st[i] = i;
  for (size_t i = 0; i + 1 < m; i++)
    rk[i] = ref_rank(p + st[i], st[i + 2] - st[i]);
  for (;;) {
    size_t bi = SIZE_MAX;
    for (size_t i = 0; i + 1 < m; i++)
      if (rk[i] != PMCP__TK_NORANK && (bi == SIZE_MAX || rk[i] < rk[bi]))
        bi = i;
    if (bi == SIZE_MAX)
      break;
    memmove(st + bi + 1, st + bi + 2, (m - bi - 1) * sizeof *st);
    memmove(rk + bi, rk + bi + 1, (m - bi - 1) * sizeof *rk);
    m--;
    if (bi + 1 < m)
      rk[bi] = ref_rank(p + st[bi], st[bi + 2] - st[bi]);
    if (bi > 0)
      rk[bi - 1] = ref_rank(p + st[bi - 1], st[bi + 1] - st[bi - 1]);
  }
  for (size_t i = 0; i < m; i++) {
    out[i] = ref_rank(p + st[i], st[i + 1] - st[i]);
    ck_assert_uint_ne(out[i], PMCP__TK_NORANK);
  }
  free(st);
  free(rk);
  return m;
}

/* Every merge path (the dispatcher with its cache, counting and encoding,
 * the heap, the scan) against the reference on one piece. */
static void check_piece(const unsigned char *p, size_t n, const char *what)
{
  uint32_t *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
  ck_assert(want && got);
  size_t nw = ref_bpe(p, n, want), ng;
  for (int round = 0; round < 2; round++) { /* the second round hits the cache */
    ck_assert_int_eq(pmcp__bpe(p, n, NULL, &ng), 0);
    ck_assert_msg(ng == nw, "%s, %zu bytes: count %zu, reference %zu", what, n, ng, nw);
    ck_assert_int_eq(pmcp__bpe(p, n, got, &ng), 0);
    ck_assert_msg(ng == nw && memcmp(got, want, nw * sizeof *got) == 0,
                  "%s, %zu bytes: ids differ from the reference", what, n);
  }
  ck_assert_int_eq(pmcp__bpe_heap(p, n, got, &ng), 0);
  ck_assert_msg(ng == nw && memcmp(got, want, nw * sizeof *got) == 0, "%s, %zu bytes: heap", what, n);
  ck_assert_int_eq(pmcp__bpe_backtrack(p, n, got, &ng), 0);
  ck_assert_msg(ng == nw && memcmp(got, want, nw * sizeof *got) == 0, "%s, %zu bytes: backtracking",
                what, n);
  if (n <= PMCP__BPE_SMALL) {
    ck_assert_int_eq(pmcp__bpe_scan(p, n, got, &ng), 0);
    ck_assert_msg(ng == nw && memcmp(got, want, nw * sizeof *got) == 0, "%s, %zu bytes: scan", what, n);
  }
  free(want);
  free(got);
}

/* Random pieces of every length class, from alphabets that make long
 * merge chains (letters, CJK, emoji, digits, spaces) and from raw bytes. */
START_TEST(merge_matches_reference_random)
{
  static const char *alphas[] = {
    "aaaabbe lt.-_=0123/\xC3\xA9\xE4\xB8\xAD",
    "ab",
    "etaoinshrdlu",
    "\xE7\x9A\x84\xE6\x98\xAF\xE4\xB8\x8D\xE4\xBA\x86\xE4\xBA\xBA\xE6\x88\x91\xE5\x9C\xA8\xE6\x9C\x89", /* CJK */
    "\xF0\x9F\x98\x80\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD\xE2\x80\x8D\xE2\x9D\xA4\xEF\xB8\x8F",          /* emoji */
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    " \n\t",
  };
  static const size_t lens[] = {2, 5, 9, 17, 24, 25, 31, 44, 45, 64, 100, 128, 129, 300, 512, 513, 2000};
  unsigned char *piece = malloc(4096);
  for (int iter = 0; iter < 1500; iter++) {
    size_t n = lens[rnd() % (sizeof lens / sizeof lens[0])];
    if (rnd() % 2)
      n = 1 + rnd() % n;
    size_t a = rnd() % (sizeof alphas / sizeof alphas[0] + 1);
    for (size_t i = 0; i < n; i++)
      piece[i] = a == sizeof alphas / sizeof alphas[0] ? (unsigned char)(rnd() & 0xFF)
                                                       : (unsigned char)alphas[a][rnd() % strlen(alphas[a])];
    check_piece(piece, n, a == sizeof alphas / sizeof alphas[0] ? "random bytes" : alphas[a]);
  }
  free(piece);
  /* pieces long enough for the encoder's heap-allocated search state */
  piece = malloc(6000);
  for (int iter = 0; iter < 48; iter++) {
    size_t n = PMCP__BPE_STACK + 1 + rnd() % (6000 - PMCP__BPE_STACK - 1);
    size_t a = (size_t)iter % (sizeof alphas / sizeof alphas[0] + 1);
    for (size_t i = 0; i < n; i++)
      piece[i] = a == sizeof alphas / sizeof alphas[0] ? (unsigned char)(rnd() & 0xFF)
                                                       : (unsigned char)alphas[a][rnd() % strlen(alphas[a])];
    check_piece(piece, n, a == sizeof alphas / sizeof alphas[0] ? "long random bytes" : alphas[a]);
  }
  free(piece);
}
END_TEST

/* The generated trie holds exactly the tokens: walking each token's bytes
 * (children found by a plain scan of the node's child range) ends at a
 * node marked with that token, every node marked with a token spells it,
 * and every child map agrees with the child range it indexes. */
START_TEST(trie_is_the_tokens)
{
  uint32_t marked = 0;
  for (uint32_t v = 0; v < pmcp__tk_trie_nodes; v++) {
    uint32_t lo = PMCP__TK_TRIE_BASE(pmcp__tk_trie_first[v]);
    uint32_t hi = PMCP__TK_TRIE_BASE(pmcp__tk_trie_first[v + 1]);
    ck_assert_uint_le(lo, hi);
    for (uint32_t c = lo; c + 1 < hi; c++)
      ck_assert_uint_lt(PMCP__TK_TRIE_BYTE(pmcp__tk_trie_node[c]),
                        PMCP__TK_TRIE_BYTE(pmcp__tk_trie_node[c + 1]));
    uint32_t mi = PMCP__TK_TRIE_MAP(pmcp__tk_trie_first[v]);
    ck_assert(mi ? hi - lo > PMCP__TK_TRIE_SCAN && v != 0 : hi - lo <= PMCP__TK_TRIE_SCAN || v == 0);
    if (mi) {
      uint32_t seen = 0;
      for (unsigned b = 0; b < 256; b++) {
        unsigned k = pmcp__tk_trie_map[mi][b];
        if (k) {
          ck_assert_uint_le(k, hi - lo);
          ck_assert_uint_eq(PMCP__TK_TRIE_BYTE(pmcp__tk_trie_node[lo + k - 1]), b);
          seen++;
        }
      }
      ck_assert_uint_eq(seen, hi - lo);
    }
    if (PMCP__TK_TRIE_TOK(pmcp__tk_trie_node[v]) != PMCP__TK_TRIE_NOTOK)
      marked++;
  }
  ck_assert_uint_eq(marked, PMCP__TK_NRANKS);
  for (uint32_t r = 0; r < PMCP__TK_NRANKS; r++) {
    const unsigned char *t = pmcp__tk_bytes + pmcp__tk_off[r];
    uint32_t len = pmcp__tk_off[r + 1] - pmcp__tk_off[r], v = 0;
    for (uint32_t i = 0; i < len; i++) {
      uint32_t lo = PMCP__TK_TRIE_BASE(pmcp__tk_trie_first[v]);
      uint32_t hi = PMCP__TK_TRIE_BASE(pmcp__tk_trie_first[v + 1]), c = lo;
      while (c < hi && PMCP__TK_TRIE_BYTE(pmcp__tk_trie_node[c]) != t[i])
        c++;
      ck_assert_msg(c < hi, "token %u: byte %u not in the trie", r, i);
      v = c;
    }
    ck_assert_uint_eq(PMCP__TK_TRIE_TOK(pmcp__tk_trie_node[v]), r);
  }
}
END_TEST

/* Differential test of the backtracking encoder against the heap merge
 * (the previous long-piece merge, kept as the oracle) on long pieces:
 * random bytes, random code points of every UTF-8 length, runs of one unit
 * with random interruptions, CJK and emoji words, base64, and counting
 * through the public API where the text stays one piece.
 * PMCP_TOKENIZER_BT_N sets the number of pieces (default 600). */
START_TEST(backtrack_matches_heap)
{
  static const char *units[] = {"a", " ", "\xE4\xB8\xAD", "ab", "\xF0\x9F\x98\x80", "=", "\xC3\xA9",
                                "\n", "aB", "\xE2\x80\x8D"};
  static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const char *env = getenv("PMCP_TOKENIZER_BT_N");
  long iters = env ? atol(env) : 600;
  size_t cap = 40000;
  unsigned char *p = malloc(cap + 4);
  uint32_t *want = malloc(cap * sizeof *want), *got = malloc(cap * sizeof *got);
  ck_assert(p && want && got);
  for (long iter = 0; iter < iters; iter++) {
    size_t n = 0, target = 1 + rnd() % (rnd() % 4 == 0 ? cap : 3000);
    int mode = (int)(rnd() % 5);
    const char *u = units[rnd() % (sizeof units / sizeof units[0])];
    while (n < target) {
      if (mode == 0) {
        p[n++] = (unsigned char)(rnd() & 0xFF);
      } else if (mode == 1) { /* random code point, UTF-8 */
        uint32_t cp;
        do {
          unsigned w = rnd() % 4;
          cp = w == 0 ? rnd() % 0x80 : w == 1 ? rnd() % 0x800 : w == 2 ? rnd() % 0x10000 : rnd() % 0x110000;
        } while (cp >= 0xD800 && cp < 0xE000);
        if (cp < 0x80) {
          p[n++] = (unsigned char)cp;
        } else if (cp < 0x800) {
          p[n++] = (unsigned char)(0xC0 | cp >> 6);
          p[n++] = (unsigned char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
          p[n++] = (unsigned char)(0xE0 | cp >> 12);
          p[n++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
          p[n++] = (unsigned char)(0x80 | (cp & 0x3F));
        } else {
          p[n++] = (unsigned char)(0xF0 | cp >> 18);
          p[n++] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
          p[n++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
          p[n++] = (unsigned char)(0x80 | (cp & 0x3F));
        }
      } else if (mode == 2) { /* a run of one unit, now and then broken */
        size_t ul = strlen(u);
        if (rnd() % 64 == 0) {
          p[n++] = (unsigned char)("xyz0 .-"[rnd() % 7]);
        } else {
          memcpy(p + n, u, ul);
          n += ul;
        }
      } else if (mode == 3) { /* CJK characters from a small block */
        uint32_t cp = 0x4E00 + rnd() % 200;
        p[n++] = (unsigned char)(0xE0 | cp >> 12);
        p[n++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        p[n++] = (unsigned char)(0x80 | (cp & 0x3F));
      } else {
        p[n++] = (unsigned char)b64[rnd() % 64];
      }
    }
    if (n > cap)
      n = cap;
    size_t nw, ng, nc;
    ck_assert_int_eq(pmcp__bpe_heap(p, n, want, &nw), 0);
    ck_assert_int_eq(pmcp__bpe_backtrack(p, n, got, &ng), 0);
    ck_assert_msg(ng == nw && memcmp(got, want, nw * sizeof *got) == 0,
                  "iter %ld, mode %d, %zu bytes: backtracking differs from the heap merge", iter, mode,
                  n);
    ck_assert_int_eq(pmcp__bpe_backtrack(p, n, NULL, &nc), 0);
    ck_assert_uint_eq(nc, nw);
    ck_assert_int_eq(pmcp__bpe(p, n, NULL, &nc), 0);
    ck_assert_uint_eq(nc, nw);
  }
  free(p);
  free(want);
  free(got);
}
END_TEST

/* Long runs of one unit (a letter, a CJK character, a digit, a space,
 * two letters) and one long CJK word, whole pieces, against the reference;
 * the public count of the same text equals the reference's count where the
 * pre-tokenizer keeps it one piece. */
/* Reference UTF-8 validation, written from the definition (RFC 3629 table
 * of well-formed sequences), independent of the scanner's fast paths:
 * the valid prefix length, and whether the rest is a cut character. */
static size_t ref_utf8(const unsigned char *s, size_t n, int *truncated)
{
  static const struct {
    unsigned char lead_lo, lead_hi, b1_lo, b1_hi, len;
  } rows[] = {
    {0x00, 0x7F, 0, 0, 1},       {0xC2, 0xDF, 0x80, 0xBF, 2}, {0xE0, 0xE0, 0xA0, 0xBF, 3},
    {0xE1, 0xEC, 0x80, 0xBF, 3}, {0xED, 0xED, 0x80, 0x9F, 3}, {0xEE, 0xEF, 0x80, 0xBF, 3},
    {0xF0, 0xF0, 0x90, 0xBF, 4}, {0xF1, 0xF3, 0x80, 0xBF, 4}, {0xF4, 0xF4, 0x80, 0x8F, 4},
  };
  size_t i = 0;
  *truncated = 0;
  while (i < n) {
    size_t r = 0, nr = sizeof rows / sizeof rows[0];
    while (r < nr && !(s[i] >= rows[r].lead_lo && s[i] <= rows[r].lead_hi))
      r++;
    if (r == nr)
      return i;
    size_t len = rows[r].len;
    for (size_t k = 1; k < len; k++) {
      if (i + k >= n) {
        *truncated = 1;
        return i;
      }
      unsigned lo = k == 1 ? rows[r].b1_lo : 0x80, hi = k == 1 ? rows[r].b1_hi : 0xBF;
      if (s[i + k] < lo || s[i + k] > hi)
        return i;
    }
    i += len;
  }
  return n;
}

/* Random byte strings biased to the scanner's branches (runs of ASCII,
 * three-byte characters with every lead, four-byte characters, E0/ED/F0/F4
 * edges, stray continuations, cuts at the end) against the reference
 * validation. */
START_TEST(utf8_scan_matches_reference)
{
  static const unsigned char leads[] = {0xC2, 0xDF, 0xE0, 0xE1, 0xE4, 0xEC, 0xED, 0xEE, 0xEF,
                                        0xF0, 0xF1, 0xF3, 0xF4, 0xC0, 0xC1, 0xF5, 0xFF};
  unsigned char buf[96];
  for (int iter = 0; iter < 200000; iter++) {
    size_t n = 1 + rnd() % sizeof buf;
    for (size_t i = 0; i < n; i++) {
      uint32_t m = rnd() % 8;
      buf[i] = m < 3   ? (unsigned char)(0x20 + rnd() % 0x5F)
               : m < 5 ? (unsigned char)(0x80 + rnd() % 0x40)
               : m < 7 ? leads[rnd() % sizeof leads]
                       : (unsigned char)rnd();
    }
    /* mostly well-formed three-byte characters, one damaged byte at most */
    if (iter % 3 == 1) {
      for (size_t i = 0; i + 3 <= n; i += 3) {
        buf[i] = (unsigned char)(0xE1 + rnd() % 15);
        buf[i + 1] = (unsigned char)(0x80 + rnd() % 0x40);
        buf[i + 2] = (unsigned char)(0x80 + rnd() % 0x40);
      }
      if (rnd() % 2)
        buf[rnd() % n] = (unsigned char)rnd();
    } else if (iter % 3 == 2) {
      /* four-byte characters (emoji), second bytes at and past the edges
       * of F0 and F4, one damaged byte at most */
      static const unsigned char b1[] = {0x80, 0x8F, 0x90, 0x9F, 0xBF, 0x7F, 0xC0};
      for (size_t i = 0; i + 4 <= n; i += 4) {
        buf[i] = (unsigned char)(0xF0 + rnd() % 5);
        buf[i + 1] = rnd() % 2 ? b1[rnd() % sizeof b1] : (unsigned char)(0x80 + rnd() % 0x40);
        buf[i + 2] = (unsigned char)(0x80 + rnd() % 0x40);
        buf[i + 3] = (unsigned char)(0x80 + rnd() % 0x40);
      }
      if (rnd() % 2)
        buf[rnd() % n] = (unsigned char)rnd();
    }
    int t1, t2;
    size_t a = pmcp__utf8_scan(buf, n, &t1), b = ref_utf8(buf, n, &t2);
    ck_assert_msg(a == b, "iter %d: valid prefix %zu, reference %zu", iter, a, b);
    if (a < n)
      ck_assert_msg(t1 == t2, "iter %d: truncated %d, reference %d", iter, t1, t2);
  }
}
END_TEST

/* Words of every length up to 40 (the pre-tokenizer scans lowercase runs
 * eight bytes at a time), at every alignment, after a space and up to two
 * capitals, ended by every ASCII byte that ends a word, by two non-ASCII
 * characters that end one (an em dash, a no-break space) or by the end of
 * the text: the piece is the space and the word, and only the end of the
 * text is looked past. */
START_TEST(word_ends)
{
  static const char *ends[] = {"\xE2\x80\x94", "\xC2\xA0", ""};
  unsigned char t[80];
  for (unsigned term = 1; term < 128 + 3; term++) {
    if (term < 128 && (term == '\'' || (term >= 'a' && term <= 'z')))
      continue;
    for (size_t k = 0; k <= 40; k++) {
      for (size_t off = 0; off < 8; off++) {
        size_t up = rnd() % 3, n = 0;
        if (k + up == 0 || (k == 0 && term >= 'A' && term <= 'Z'))
          continue; /* no word, or the capital would continue it */
        memset(t, '.', off);
        n = off;
        t[n++] = ' ';
        for (size_t i = 0; i < up; i++)
          t[n++] = (unsigned char)('A' + rnd() % 26);
        for (size_t i = 0; i < k; i++)
          t[n++] = (unsigned char)('a' + rnd() % 26);
        size_t word_end = n;
        if (term < 128) {
          t[n++] = (unsigned char)term;
        } else {
          size_t el = strlen(ends[term - 128]);
          memcpy(t + n, ends[term - 128], el);
          n += el;
        }
        if (term != 130) {
          memcpy(t + n, "x y", 3);
          n += 3;
        }
        int at_end = -1;
        size_t e = pmcp__pretok_next(t, n, off, &at_end);
        ck_assert_msg(e == word_end, "byte %u after %zu+%zu letters at %zu: piece ends at %zu",
                      term, up, k, off, e);
        ck_assert_int_eq(at_end, word_end == n);
      }
    }
  }
}
END_TEST

/* Every two-byte piece, and three-byte pieces from several alphabets: the
 * short pieces decided without the merge loop. */
START_TEST(short_pieces_match_reference)
{
  unsigned char p[3];
  for (unsigned v = 0; v < 65536; v++) {
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
    uint32_t want[2], got[2];
    size_t nw = ref_bpe(p, 2, want), ng;
    ck_assert_int_eq(pmcp__bpe(p, 2, got, &ng), 0);
    ck_assert_msg(ng == nw && memcmp(got, want, nw * sizeof *got) == 0, "%02X %02X", p[0], p[1]);
  }
  static const char alpha[] = "aaAbBzZ09+/= \n'\xC3\xA9\xE4\xB8\xAD\x80\xFF";
  for (int iter = 0; iter < 100000; iter++) {
    for (int i = 0; i < 3; i++)
      p[i] = iter % 4 ? (unsigned char)alpha[rnd() % (sizeof alpha - 1)] : (unsigned char)rnd();
    uint32_t want[3], got[3];
    size_t nw = ref_bpe(p, 3, want), ng;
    ck_assert_int_eq(pmcp__bpe(p, 3, got, &ng), 0);
    ck_assert_msg(ng == nw && memcmp(got, want, nw * sizeof *got) == 0, "%02X %02X %02X", p[0],
                  p[1], p[2]);
    ck_assert_int_eq(pmcp__bpe(p, 3, NULL, &ng), 0);
    ck_assert_uint_eq(ng, nw);
  }
}
END_TEST

/* Pieces that never repeat (the piece cache turns itself off), then
 * pieces that repeat (it turns back on): every answer stays the
 * reference's, counting and encoding. */
START_TEST(piece_cache_bypass_is_exact)
{
  static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  static const char *words[] = {" unfolded", " extraordinary", "Tokenization", " jumps", " qu'il"};
  unsigned char p[24]; /* short pieces, within the piece cache's reach */
  uint32_t want[24], got[24];
  for (int phase = 0; phase < 4; phase++) {
    for (int iter = 0; iter < 6000; iter++) {
      size_t n;
      if (phase % 2 == 0) {
        n = 4 + rnd() % (sizeof p - 4);
        for (size_t i = 0; i < n; i++)
          p[i] = (unsigned char)b64[rnd() % (sizeof b64 - 1)];
      } else {
        const char *w = words[rnd() % (sizeof words / sizeof words[0])];
        n = strlen(w);
        memcpy(p, w, n);
      }
      /* one call per piece: a second call of the same piece would hit */
      size_t nw = ref_bpe(p, n, want), ng;
      if (iter % 2) {
        ck_assert_int_eq(pmcp__bpe(p, n, NULL, &ng), 0);
        ck_assert_msg(ng == nw, "phase %d iter %d: count", phase, iter);
      } else {
        ck_assert_int_eq(pmcp__bpe(p, n, got, &ng), 0);
        ck_assert_msg(ng == nw && memcmp(got, want, nw * sizeof *got) == 0, "phase %d iter %d",
                      phase, iter);
      }
    }
  }
}
END_TEST

START_TEST(long_runs_match_reference)
{
  static const char *units[] = {"a", "\xE4\xB8\xAD", "7", " ", "ab", "\xF0\x9F\x98\x80", "=", "aB"};
  static const char cjk[] = "\xE7\x9A\x84\xE6\x98\xAF\xE4\xB8\x8D\xE4\xBA\x86\xE4\xBA\xBA\xE6\x88\x91"
                            "\xE5\x9C\xA8\xE6\x9C\x89\xE4\xB8\xAD\xE5\x9B\xBD\xE5\xA4\xA7\xE5\xAD\xA6";
  static const size_t lens[] = {127, 128, 129, 511, 512, 513, 1000, 4099, 9001};
  size_t cap = 9001 * 4;
  unsigned char *t = malloc(cap);
  uint32_t *want = malloc(cap * sizeof *want);
  for (size_t u = 0; u <= sizeof units / sizeof units[0]; u++) {
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
      size_t n = 0;
      if (u < sizeof units / sizeof units[0]) {
        size_t ul = strlen(units[u]);
        for (; n + ul <= lens[li]; n += ul)
          memcpy(t + n, units[u], ul);
      } else { /* random CJK characters: one long word */
        while (n + 3 <= lens[li]) {
          memcpy(t + n, cjk + 3 * (rnd() % ((sizeof cjk - 1) / 3)), 3);
          n += 3;
        }
      }
      check_piece(t, n, u < sizeof units / sizeof units[0] ? units[u] : "CJK word");
      size_t c, nw = ref_bpe(t, n, want);
      ck_assert_int_eq(pmcp_tokens_count((const char *)t, n, &c), 0);
      if (u == 0 || u == 1 || u == 4 || u == sizeof units / sizeof units[0])
        ck_assert_msg(c == nw, "count of %zu bytes: %zu, reference %zu", n, c, nw);
    }
  }
  free(t);
  free(want);
}
END_TEST

/* Long single pieces: linear-ish time, and the ids decode back. */
START_TEST(long_pieces)
{
  size_t n = 1u << 18;
  char *t = malloc(n);
  const char *fills[] = {"a", "!", " ", "\xC3\xA9", "7", "ab"};
  for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++) {
    size_t fl = strlen(fills[f]);
    for (size_t i = 0; i < n; i++)
      t[i] = fills[f][i % fl];
    uint32_t *ids;
    size_t k, c;
    ck_assert_int_eq(pmcp_tokens_encode(t, n, &ids, &k), 0);
    ck_assert_int_eq(pmcp_tokens_count(t, n, &c), 0);
    ck_assert_uint_eq(c, k);
    ck_assert_uint_gt(k, 0);
    pmcp_buf b = PMCP_BUF_INIT;
    ck_assert_int_eq(pmcp_tokens_decode(ids, k, &b), 0);
    ck_assert_uint_eq(b.len, n);
    ck_assert(memcmp(b.ptr, t, n) == 0);
    pmcp_buf_dispose(&b);
    pmcp_tokens_free(ids);
  }
  free(t);
}
END_TEST

/* The incremental counter equals a one-shot count however the text is cut,
 * including inside UTF-8 characters. */
START_TEST(counter_matches_count)
{
  size_t nv;
  vec *v = load_vectors(&nv);
  pmcp_tokens_counter *c, *snap;
  ck_assert_int_eq(pmcp_tokens_counter_new(&c), 0);
  ck_assert_int_eq(pmcp_tokens_counter_new(&snap), 0);
  for (size_t i = 0; i < nv; i++) {
    for (int round = 0; round < 3; round++) {
      pmcp_tokens_counter_reset(c);
      size_t pos = 0, total;
      while (pos < v[i].len) {
        size_t step = round == 0 ? 1 : 1 + rnd() % (round == 1 ? 7 : 300);
        if (step > v[i].len - pos)
          step = v[i].len - pos;
        ck_assert_int_eq(pmcp_tokens_counter_add(c, v[i].text + pos, step), 0);
        pos += step;
      }
      ck_assert_int_eq(pmcp_tokens_counter_total(c, &total), 0);
      ck_assert_msg(total == v[i].n, "line %zu round %d: %zu, expected %zu", i + 1, round,
                    total, v[i].n);
      ck_assert_uint_eq(pmcp_tokens_counter_bytes(c), v[i].len);
    }
  }
  /* peek and copy: a prefix plus any suffix */
  for (size_t i = 0; i + 1 < nv; i++) {
    size_t cut = v[i].len / 2, peek, want, total;
    while (cut > 0 && ((unsigned char)v[i].text[cut] & 0xC0) == 0x80)
      cut--;
    pmcp_tokens_counter_reset(c);
    ck_assert_int_eq(pmcp_tokens_counter_add(c, v[i].text, cut), 0);
    ck_assert_int_eq(pmcp_tokens_counter_copy(snap, c), 0);
    size_t jl = v[i].len - cut + v[i + 1].len;
    char *joined = malloc(v[i].len + v[i + 1].len + 1);
    memcpy(joined, v[i].text, v[i].len);
    memcpy(joined + v[i].len, v[i + 1].text, v[i + 1].len);
    ck_assert_int_eq(pmcp_tokens_count(joined, v[i].len + v[i + 1].len, &want), 0);
    ck_assert_int_eq(pmcp_tokens_counter_peek(c, joined + cut, jl, &peek), 0);
    ck_assert_uint_eq(peek, want);
    ck_assert_int_eq(pmcp_tokens_counter_add(c, joined + cut, jl), 0);
    ck_assert_int_eq(pmcp_tokens_counter_total(c, &total), 0);
    ck_assert_uint_eq(total, want);
    /* roll back to the snapshot */
    ck_assert_int_eq(pmcp_tokens_counter_copy(c, snap), 0);
    ck_assert_int_eq(pmcp_tokens_counter_total(c, &total), 0);
    ck_assert_int_eq(pmcp_tokens_count(v[i].text, cut, &want), 0);
    ck_assert_uint_eq(total, want);
    free(joined);
  }
  pmcp_tokens_counter_free(c);
  pmcp_tokens_counter_free(snap);
  free_vectors(v, nv);
}
END_TEST

START_TEST(counter_utf8)
{
  pmcp_tokens_counter *c;
  size_t total;
  ck_assert_int_eq(pmcp_tokens_counter_new(&c), 0);
  ck_assert_int_eq(pmcp_tokens_counter_add(c, "caf\xC3", 4), 0);
  ck_assert_int_eq(pmcp_tokens_counter_total(c, &total), PMCP_EUTF8); /* mid-character */
  ck_assert_int_eq(pmcp_tokens_counter_peek(c, "x", 1, &total), PMCP_EUTF8);
  ck_assert_int_eq(pmcp_tokens_counter_add(c, "\x28", 1), PMCP_EUTF8); /* not a continuation */
  ck_assert_uint_eq(pmcp_tokens_counter_bytes(c), 4);                  /* nothing appended */
  ck_assert_int_eq(pmcp_tokens_counter_add(c, "\xA9", 1), 0);
  ck_assert_int_eq(pmcp_tokens_counter_total(c, &total), 0);
  size_t want;
  ck_assert_int_eq(pmcp_tokens_count("caf\xC3\xA9", 5, &want), 0);
  ck_assert_uint_eq(total, want);
  ck_assert_int_eq(pmcp_tokens_counter_add(c, "\xFF", 1), PMCP_EUTF8);
  ck_assert_int_eq(pmcp_tokens_counter_total(c, &total), 0);
  ck_assert_uint_eq(total, want);
  ck_assert_int_eq(pmcp_tokens_counter_add(NULL, "a", 1), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_tokens_counter_total(c, NULL), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_tokens_counter_new(NULL), PMCP_EINVAL);
  pmcp_tokens_counter_free(c);
  pmcp_tokens_counter_free(NULL);
}
END_TEST

/* Piece boundaries that a later chunk changes (the counter must keep them
 * open): letters that re-split, digits, whitespace before a word, a
 * contraction cut after the apostrophe. */
START_TEST(counter_reopens_pieces)
{
  static const char *const cases[][2] = {
    {"\xE6\x97\xA5\xE6\x9C\xAC" "A", "b"}, {"12345", "6"}, {"x   ", "y"}, {"it'", "ll"},
    {"don", "'T"}, {"a\r", "\n"}, {"!!", "/"}, {"  \n ", "\n"}, {"ea'\xC5", "\xBF"},
  };
  pmcp_tokens_counter *c;
  ck_assert_int_eq(pmcp_tokens_counter_new(&c), 0);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[64];
    size_t l0 = strlen(cases[i][0]), l1 = strlen(cases[i][1]), want, total;
    memcpy(buf, cases[i][0], l0);
    memcpy(buf + l0, cases[i][1], l1);
    ck_assert_int_eq(pmcp_tokens_count(buf, l0 + l1, &want), 0);
    pmcp_tokens_counter_reset(c);
    ck_assert_int_eq(pmcp_tokens_counter_add(c, cases[i][0], l0), 0);
    ck_assert_int_eq(pmcp_tokens_counter_add(c, cases[i][1], l1), 0);
    ck_assert_int_eq(pmcp_tokens_counter_total(c, &total), 0);
    ck_assert_msg(total == want, "case %zu: %zu, expected %zu", i, total, want);
  }
  pmcp_tokens_counter_free(c);
}
END_TEST

/* A 256 KiB unfinished piece fed one byte at a time stays linear
 * (a re-scan per byte would take hours and hit the test timeout). */
START_TEST(counter_long_piece_bytewise)
{
  size_t n = 1u << 18, total, want;
  char *t = malloc(n);
  for (size_t i = 0; i < n; i++)
    t[i] = "ab"[(i / 3) % 2];
  pmcp_tokens_counter *c;
  ck_assert_int_eq(pmcp_tokens_counter_new(&c), 0);
  for (size_t i = 0; i < n; i++)
    ck_assert_int_eq(pmcp_tokens_counter_add(c, t + i, 1), 0);
  ck_assert_int_eq(pmcp_tokens_counter_total(c, &total), 0);
  ck_assert_int_eq(pmcp_tokens_count(t, n, &want), 0);
  ck_assert_uint_eq(total, want);
  pmcp_tokens_counter_free(c);
  free(t);
}
END_TEST

static void *count_thread(void *arg)
{
  const vec *v = arg;
  size_t bad = 0;
  for (int rep = 0; rep < 3; rep++)
    for (size_t i = 0; i < 350; i++) {
      size_t c;
      if (pmcp_tokens_count(v[i].text, v[i].len, &c) != 0 || c != v[i].n)
        bad++;
    }
  return (void *)(uintptr_t)bad;
}

START_TEST(threads)
{
  size_t nv;
  vec *v = load_vectors(&nv);
  pthread_t th[4];
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(pthread_create(&th[i], NULL, count_thread, v), 0);
  for (int i = 0; i < 4; i++) {
    void *r;
    pthread_join(th[i], &r);
    ck_assert_uint_eq((uintptr_t)r, 0);
  }
  free_vectors(v, nv);
}
END_TEST

static Suite *tokens_suite(void)
{
  Suite *s = suite_create("tokens");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, vectors_exact);
  tcase_add_test(tc, tables_are_the_reference_ranks);
  tcase_add_test(tc, corpus_slice);
  tcase_add_test(tc, ascii_classes_match_tables);
  tcase_add_test(tc, invalid_utf8);
  tcase_add_test(tc, bad_arguments);
  tcase_add_test(tc, heap_merge_matches_linear);
  tcase_add_test(tc, long_pieces);
  tcase_add_test(tc, merge_matches_reference_random);
  tcase_add_test(tc, trie_is_the_tokens);
  tcase_add_test(tc, backtrack_matches_heap);
  tcase_add_test(tc, long_runs_match_reference);
  tcase_add_test(tc, utf8_scan_matches_reference);
  tcase_add_test(tc, short_pieces_match_reference);
  tcase_add_test(tc, word_ends);
  tcase_add_test(tc, piece_cache_bypass_is_exact);
  tcase_add_test(tc, counter_matches_count);
  tcase_add_test(tc, counter_utf8);
  tcase_add_test(tc, counter_reopens_pieces);
  tcase_add_test(tc, counter_long_piece_bytewise);
  tcase_add_test(tc, threads);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(tokens_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
