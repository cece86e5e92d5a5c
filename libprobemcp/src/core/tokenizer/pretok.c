/* SPDX-License-Identifier: MIT */
/* The o200k_base pre-tokenizer (see pretok.h): a port of the regex-free
 * specification ref_o200k.mjs, checked against tiktoken on every public
 * vector and by the differential test in tests/tokenizer/. */
#include "core/tokenizer/pretok.h"

#include <stdint.h>
#include <string.h>

#include "core/tokenizer/tokclass.h"

#define F_A PMCP__TK_A
#define F_B PMCP__TK_B
#define F_L PMCP__TK_L
#define F_N PMCP__TK_N
#define F_WS PMCP__TK_WS
#define F_M PMCP__TK_M
#define F_NL 64u   /* CR or LF */
#define F_END 128u /* past the end of the text: matches no class */
#define NONE SIZE_MAX

/* ASCII classes written out (they are stable facts of Unicode; the unit
 * test checks them against the generated tables). */
#define AC(c)                                                                 \
  ((c) >= 'A' && (c) <= 'Z'   ? (F_A | F_L)                                   \
   : (c) >= 'a' && (c) <= 'z' ? (F_B | F_L)                                   \
   : (c) >= '0' && (c) <= '9' ? F_N                                           \
   : (c) == '\n' || (c) == '\r' ? (F_WS | F_NL)                               \
   : ((c) >= 9 && (c) <= 13) || (c) == ' ' ? F_WS                             \
                                            : 0u)
#define AC4(c) AC(c), AC((c) + 1), AC((c) + 2), AC((c) + 3)
#define AC16(c) AC4(c), AC4((c) + 4), AC4((c) + 8), AC4((c) + 12)
static const unsigned char ascii_class[128] = {
  AC16(0), AC16(16), AC16(32), AC16(48), AC16(64), AC16(80), AC16(96), AC16(112)};

unsigned pmcp__pretok_ascii_class(unsigned c);
unsigned pmcp__pretok_ascii_class(unsigned c)
{
  return c < 128 ? ascii_class[c] & 0x3Fu : 0;
}

typedef struct scan {
  const unsigned char *s;
  size_t n;
  int end; /* the decision looked past the last character */
} scan;

static inline uint32_t decode(const unsigned char *s, size_t *len)
{
  unsigned c = s[0];
  if (c < 0xE0) {
    *len = 2;
    return (uint32_t)(c & 0x1F) << 6 | (s[1] & 0x3Fu);
  }
  if (c < 0xF0) {
    *len = 3;
    return (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3Fu);
  }
  *len = 4;
  return (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 |
         (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3Fu);
}

/* Class flags of the character at byte @p i and its length. */
static inline unsigned at(scan *sc, size_t i, size_t *len)
{
  if (i >= sc->n) {
    sc->end = 1;
    *len = 0;
    return F_END;
  }
  unsigned c = sc->s[i];
  if (c < 0x80) {
    *len = 1;
    return ascii_class[c];
  }
  return pmcp__tk_class(decode(sc->s + i, len));
}

#define IS_P(f) (((f) & (F_L | F_N | F_NL | F_END)) == 0)      /* [^\r\n\p{L}\p{N}] */
#define IS_OTHER(f) (((f) & (F_L | F_N | F_WS | F_END)) == 0)  /* [^\s\p{L}\p{N}] */

/* The character at @p i case-folded if it folds to an ASCII letter of the
 * contractions, else -1 (also at the end of the text). */
static int fold_at(scan *sc, size_t i, size_t *len)
{
  if (i >= sc->n) {
    sc->end = 1;
    *len = 0;
    return -1;
  }
  unsigned c = sc->s[i];
  if (c < 0x80) {
    *len = 1;
    return (c >= 'A' && c <= 'Z') ? (int)(c | 0x20) : (int)c;
  }
  uint32_t cp = decode(sc->s + i, len);
  for (unsigned k = 0; k < pmcp__ucd_n_contraction_folds; k++)
    if (pmcp__ucd_contraction_folds[k].cp == cp)
      return pmcp__ucd_contraction_folds[k].lower;
  return -1;
}

/* (?i:'s|'t|'re|'ve|'m|'ll|'d)? at @p e. */
static size_t contraction(scan *sc, size_t e)
{
  if (e >= sc->n) {
    sc->end = 1;
    return e;
  }
  if (sc->s[e] != '\'')
    return e;
  size_t l1, l2;
  int c1 = fold_at(sc, e + 1, &l1);
  if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd')
    return e + 1 + l1;
  if (c1 == 'r' || c1 == 'v' || c1 == 'l') {
    int c2 = fold_at(sc, e + 1 + l1, &l2);
    if (c2 == (c1 == 'l' ? 'l' : 'e'))
      return e + 1 + l1 + l2;
  }
  return e;
}

/* [A]*[B]+ at @p q with the regex's backtracking: the longest A run, then
 * the B run after it; if the letter run holds no Ll (all A), A* gives back
 * characters up to the last one that is also B. */
static size_t alt1(scan *sc, size_t q)
{
  size_t len, i = q, last_b = NONE;
  unsigned f = at(sc, i, &len);
  if (!(f & (F_A | F_B)))
    return NONE;
  while (f & F_A) {
    if (f & F_B)
      last_b = i + len;
    i += len;
    f = at(sc, i, &len);
  }
  if (f & F_B) {
    do {
      i += len;
      f = at(sc, i, &len);
    } while (f & F_B);
    return i;
  }
  return last_b;
}

/* [A]+[B]* at @p q. */
static size_t alt2(scan *sc, size_t q)
{
  size_t len, i = q;
  unsigned f = at(sc, i, &len);
  if (!(f & F_A))
    return NONE;
  do {
    i += len;
    f = at(sc, i, &len);
  } while (f & F_A);
  while (f & F_B) {
    i += len;
    f = at(sc, i, &len);
  }
  return i;
}

/* ---- ASCII fast path ----
 * The common pieces of ASCII text (a word with its optional prefix
 * character, up to three digits, punctuation, a whitespace run) decided
 * from the ASCII table alone, with exactly the general path's result and
 * at_end. Whenever the decision would depend on a non-ASCII character or
 * on a contraction, it returns NONE and the general path decides. */
#define ASC_UP(c) ((unsigned)(c) - 'A' < 26u)
#define ASC_LO(c) ((unsigned)(c) - 'a' < 26u)

/* The end of the run of ASCII lowercase letters at @p s[i..n): eight
 * bytes at a time where eight remain (words are most of the text). Per
 * byte x: (x & 0x7F) + 0x1F has its high bit set from 'a' up and
 * (x & 0x7F) + 0x05 from '{' up, with no carry into the next byte; x's
 * own high bit rules out the non-ASCII bytes. */
static inline size_t lower_run(const unsigned char *s, size_t n, size_t i)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  const uint64_t lo7 = 0x7F7F7F7F7F7F7F7Full, hi = 0x8080808080808080ull;
  while (i + 8 <= n) {
    uint64_t x;
    memcpy(&x, s + i, 8);
    uint64_t y = x & lo7;
    uint64_t ge_a = y + 0x1F1F1F1F1F1F1F1Full, gt_z = y + 0x0505050505050505ull;
    uint64_t not_lower = (~ge_a | gt_z | x) & hi;
    if (not_lower)
      return i + ((unsigned)__builtin_ctzll(not_lower) >> 3);
    i += 8;
  }
#endif
  while (i < n && ASC_LO(s[i]))
    i++;
  return i;
}

/* [A]*[B]+ | [A]+[B]* over ASCII letters from @p i (a letter): the
 * uppercase run, then the lowercase run; both alternatives end there. */
static size_t ascii_word(const unsigned char *s, size_t n, size_t i, int *at_end)
{
  while (i < n && ASC_UP(s[i]))
    i++;
  i = lower_run(s, n, i);
  if (i < n && (s[i] >= 0x80 || s[i] == '\''))
    return NONE; /* a mark or letter may follow, or a contraction */
  *at_end = i >= n;
  return i;
}

static size_t ascii_fast(const unsigned char *s, size_t n, size_t pos, int *at_end)
{
  unsigned c0 = s[pos];
  if (c0 >= 0x80)
    return NONE;
  unsigned f0 = ascii_class[c0];
  if (f0 & F_L)
    return ascii_word(s, n, pos, at_end);
  if (f0 & F_N) {
    /* \p{N}{1,3}: looks at up to two more characters */
    size_t e = pos + 1;
    int end = 0;
    for (int k = 0; k < 2; k++) {
      if (e >= n) {
        end = 1;
        break;
      }
      if (s[e] >= 0x80)
        return NONE;
      if (!(ascii_class[s[e]] & F_N))
        break;
      e++;
    }
    *at_end = end;
    return e;
  }
  /* whitespace or other: the next character decides */
  if (pos + 1 >= n || s[pos + 1] >= 0x80)
    return NONE;
  unsigned f1 = ascii_class[s[pos + 1]];
  if (IS_P(f0) && (f1 & F_L))
    return ascii_word(s, n, pos + 1, at_end);
  size_t e = NONE;
  if (c0 == ' ' && IS_OTHER(f1))
    e = pos + 1;
  else if (IS_OTHER(f0))
    e = pos;
  if (e != NONE) {
    /*  ?[^\s\p{L}\p{N}]+[\r\n/]* */
    while (e < n && s[e] < 0x80 && IS_OTHER(ascii_class[s[e]]))
      e++;
    if (e < n && s[e] >= 0x80)
      return NONE;
    while (e < n && (s[e] == '\r' || s[e] == '\n' || s[e] == '/'))
      e++;
    *at_end = e >= n;
    return e;
  }
  /* a whitespace run, as in the general path */
  size_t w = pos, last_nl = NONE, last_start = pos;
  while (w < n && s[w] < 0x80 && (ascii_class[s[w]] & F_WS)) {
    if (ascii_class[s[w]] & F_NL)
      last_nl = w + 1;
    last_start = w;
    w++;
  }
  if (w < n && s[w] >= 0x80)
    return NONE; /* it may be whitespace too */
  *at_end = w >= n;
  if (last_nl != NONE)
    return last_nl;
  if (w >= n)
    return n;
  return last_start > pos ? last_start : w;
}

size_t pmcp__pretok_next(const unsigned char *s, size_t n, size_t pos, int *at_end)
{
  size_t fe = ascii_fast(s, n, pos, at_end);
  if (fe != NONE)
    return fe;
  scan sc = {s, n, 0};
  size_t l0, len, e;
  unsigned f0 = at(&sc, pos, &l0);
  unsigned f;
  int p = IS_P(f0);

  /* Alternatives 1 and 2, in the regex's order: each first with the
   * optional prefix character taken, then without it. */
  if (p && (e = alt1(&sc, pos + l0)) != NONE)
    goto contr;
  if ((e = alt1(&sc, pos)) != NONE)
    goto contr;
  if (p && (e = alt2(&sc, pos + l0)) != NONE)
    goto contr;
  if ((e = alt2(&sc, pos)) != NONE)
    goto contr;

  /* 3: \p{N}{1,3} */
  if (f0 & F_N) {
    e = pos + l0;
    f = at(&sc, e, &len);
    if (f & F_N) {
      e += len;
      f = at(&sc, e, &len);
      if (f & F_N)
        e += len;
    }
    goto done;
  }

  /* 4:  ?[^\s\p{L}\p{N}]+[\r\n/]* */
  e = NONE;
  if (s[pos] == ' ') {
    if (IS_OTHER(at(&sc, pos + 1, &len)))
      e = pos + 1;
  } else if (IS_OTHER(f0)) {
    e = pos;
  }
  if (e != NONE) {
    while (IS_OTHER(f = at(&sc, e, &len)))
      e += len;
    while (e < n && (s[e] == '\r' || s[e] == '\n' || s[e] == '/'))
      e++;
    if (e >= n)
      sc.end = 1;
    goto done;
  }

  /* 5-7: whitespace. \s*[\r\n]+ ends after the run's last CR/LF;
   * \s+(?!\S) leaves the run's last character to the next piece unless
   * the run ends the text; a lone character is \s+. */
  if (f0 & F_WS) {
    size_t w = pos, last_nl = NONE, last_start = pos;
    f = f0;
    len = l0;
    while (f & F_WS) {
      if (f & F_NL)
        last_nl = w + len;
      last_start = w;
      w += len;
      f = at(&sc, w, &len);
    }
    if (last_nl != NONE)
      e = last_nl;
    else if (w >= n)
      e = n;
    else if (last_start > pos)
      e = last_start;
    else
      e = w;
    goto done;
  }

  /* Unreachable: every character is a letter or mark (alternatives 1-2),
   * a number (3), whitespace (5-7) or else (4). Advance one character so a
   * table error could never loop. */
  e = pos + l0;
  goto done;

contr:
  e = contraction(&sc, e);
done:
  *at_end = sc.end;
  return e;
}
