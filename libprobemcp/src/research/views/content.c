/* SPDX-License-Identifier: MIT */
/* The content view: a file's own text in 40-line sections with its
 * SHA-256, paged with start_line (or the cursor), searched with grep (a
 * POSIX extended regular expression) and context_lines. Binary files, files
 * over 2 MiB and references are refused, naming the download command. The
 * version read is pinned: a cursor keeps reading the same version even if
 * a newer one is added. */
#include <assert.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/page.h"
#include "research/views/views.h"
#include "util/buf.h"

#define SECTION_LINES 40
#define MAX_BYTES (2u * 1024u * 1024u)

static int is_text(const unsigned char *p, size_t n)
{
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c == 0)
      return 0;
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
               : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (!len || i + len > n || (len == 2 && c < 0xC2))
      return 0;
    for (size_t k = 1; k < len; k++) {
      if ((p[i + k] & 0xC0) != 0x80)
        return 0;
    }
    i += len;
  }
  return 1;
}

/* Offsets of line starts; *n lines (a trailing newline ends the last). */
static size_t *line_index(const char *t, size_t len, size_t *n)
{
  size_t cap = 64, c = 0;
  size_t *ix = malloc(cap * sizeof *ix);
  if (!ix)
    return NULL;
  size_t pos = 0;
  while (pos < len) {
    if (c == cap) {
      size_t *nx = realloc(ix, (cap *= 2) * sizeof *ix);
      if (!nx) {
        free(ix);
        return NULL;
      }
      ix = nx;
    }
    ix[c++] = pos;
    const char *nl = memchr(t + pos, '\n', len - pos);
    pos = nl ? (size_t)(nl - t) + 1 : len;
  }
  *n = c;
  return ix;
}

static size_t line_len(const char *t, size_t len, const size_t *ix, size_t n,
                       size_t i)
{
  assert(i < n);
  size_t end = i + 1 < n ? ix[i + 1] : len;
  size_t l = end - ix[i];
  if (l && t[ix[i] + l - 1] == '\n')
    l--;
  if (l && t[ix[i] + l - 1] == '\r')
    l--;
  return l;
}

static cJSON *str_n(const char *s, size_t n)
{
  char *c = malloc(n + 1);
  if (!c)
    return NULL;
  memcpy(c, s, n);
  c[n] = '\0';
  cJSON *v = cJSON_CreateString(c);
  free(c);
  return v;
}

/* Lines start .. start-1+want (to the end at most) of the text as a page
 * of @p head's fields; *end is the last line's number. */
static cJSON *section(const cJSON *head, const char *t, size_t len, const size_t *ix,
                      size_t nlines, size_t start, size_t want, size_t *end)
{
  assert(start >= 1 && want >= 1 && (nlines ? start <= nlines : start == 1));
  size_t e = start - 1 + want;
  if (e > nlines)
    e = nlines;
  *end = e;
  size_t from = nlines ? ix[start - 1] : 0;
  size_t to = e < nlines ? ix[e] : len;
  cJSON *sec = cJSON_Duplicate(head, 1);
  if (!sec)
    return NULL;
  cJSON_AddNumberToObject(sec, "start_line", (double)start);
  cJSON_AddNumberToObject(sec, "end_line", (double)e);
  cJSON_AddItemToObject(sec, "text", str_n(t + from, to - from));
  if (e < nlines)
    cJSON_AddNumberToObject(sec, "next_start_line", (double)(e + 1));
  return sec;
}

/* The longest prefix of [s, s+n), cut at a character, of at most @p cap
 * tokens. */
static size_t line_cut(const char *s, size_t n, size_t cap)
{
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo + 1) / 2, l = mid;
    while (l > 0 && l < n && ((unsigned char)s[l] & 0xC0) == 0x80)
      l--;
    if (pmcp__rs_tokens(s, l) + 2 <= cap)
      lo = mid;
    else
      hi = mid - 1;
  }
  while (lo > 0 && lo < n && ((unsigned char)s[lo] & 0xC0) == 0x80)
    lo--;
  return lo;
}

/* A page of line @p start from byte @p col of it, for a line too long
 * for one page: as many bytes as the budget holds, by tokens, cut at a
 * character; the next page continues the line at next_start_col (the
 * text of the pages joins back to the line). */
static int line_part(pmcp__vctx *v, const char *t, size_t len, const size_t *ix,
                     size_t nlines, size_t start, size_t col)
{
  assert(start >= 1 && (nlines ? start <= nlines : start == 1));
  size_t from = (nlines ? ix[start - 1] : 0) + col;
  size_t to = start < nlines ? ix[start] : len;
  if (from > to)
    return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                           "the cursor is past the end of line %zu", start);
  /* the largest length that fits: fits(mid cut at a character) falls as
   * mid grows, so the search moves on mid itself */
  size_t lo = 1, hi = to - from;
  cJSON *best = NULL;
  while (lo <= hi) {
    size_t mid = lo + (hi - lo) / 2, l = mid;
    while (l > 0 && from + l < to && ((unsigned char)t[from + l] & 0xC0) == 0x80)
      l--; /* a character's continuation bytes stay with it */
    int last = from + l == to;
    cJSON *sec = cJSON_Duplicate(v->obj, 1);
    if (!sec)
      break;
    cJSON_AddNumberToObject(sec, "start_line", (double)start);
    cJSON_AddNumberToObject(sec, "end_line", (double)start);
    if (col)
      cJSON_AddNumberToObject(sec, "start_col", (double)col);
    cJSON_AddItemToObject(sec, "text", str_n(t + from, l));
    if (!last) {
      cJSON_AddTrueToObject(sec, "line_truncated");
      cJSON_AddNumberToObject(sec, "next_start_line", (double)start);
      cJSON_AddNumberToObject(sec, "next_start_col", (double)(col + l));
    } else if (start < nlines) {
      cJSON_AddNumberToObject(sec, "next_start_line", (double)(start + 1));
    }
    if (l > 0 && pmcp__rs_fits(v->call, sec, last && start >= nlines ? 0 : 160)) {
      cJSON_Delete(best);
      best = sec;
      if (last)
        break;
      lo = mid + 1;
    } else {
      cJSON_Delete(sec);
      hi = mid - 1;
    }
  }
  if (!best)
    return pmcp__view_fail(v, PMCP_TERR_TOKEN_BUDGET_TOO_SMALL,
                           "line %zu is too long to show any of it in this budget", start);
  cJSON_Delete(v->obj);
  v->obj = best;
  return 0;
}

static int refuse(pmcp__vctx *v, const char *why)
{
  if (v->ref.kind == PMCP__REF_FILE)
    return pmcp__view_fail(v, PMCP_TERR_NOT_TEXT,
                           "%s %s; read it from its uri (view=record)",
                           v->ref_text, why);
  return pmcp__view_fail(v, PMCP_TERR_NOT_TEXT,
                         "%s %s; download it with `probe artifact download "
                         "%s`",
                         v->ref_text, why, v->ref_text);
}

/* A refusal inside the steps below: the error is set, the step answers 1. */
#define REFUSED(...) (pmcp__view_fail(v, __VA_ARGS__), 1)

/* ---- parse: view_options and the version read ------------------------- */

typedef struct content_opts {
  const char *grep; /* pattern, or NULL for a page of lines */
  size_t start;     /* first line (1-based) */
  size_t ctx;       /* context lines around a match */
  int64_t version;  /* 0: the latest */
} content_opts;

/* Reads view_options and the version into @p p. Returns 0, or 1 having
 * set the error. */
static int parse(pmcp__vctx *v, content_opts *p)
{
  const cJSON *o = v->opts;
  const cJSON *jstart = o ? cJSON_GetObjectItemCaseSensitive(o, "start_line") : NULL;
  const cJSON *jgrep = o ? cJSON_GetObjectItemCaseSensitive(o, "grep") : NULL;
  const cJSON *jctx = o ? cJSON_GetObjectItemCaseSensitive(o, "context_lines") : NULL;
  p->grep = NULL;
  p->start = 1;
  p->ctx = 2;
  p->version = 0;
  if (jstart) {
    if (!cJSON_IsNumber(jstart) || jstart->valuedouble < 1 ||
        jstart->valuedouble != (double)(long long)jstart->valuedouble)
      return REFUSED(PMCP_TERR_INVALID_ARGUMENT,
                     "view_options.start_line is a whole number >= 1");
    p->start = (size_t)jstart->valuedouble;
  }
  if (jctx) {
    if (!jgrep)
      return REFUSED(PMCP_TERR_INVALID_ARGUMENT,
                     "view_options.context_lines goes with grep");
    if (!cJSON_IsNumber(jctx) || jctx->valuedouble < 0 ||
        jctx->valuedouble > 20 ||
        jctx->valuedouble != (double)(int)jctx->valuedouble)
      return REFUSED(PMCP_TERR_INVALID_ARGUMENT,
                     "view_options.context_lines is 0 to 20");
    p->ctx = (size_t)jctx->valuedouble;
  }
  if (jgrep && jstart)
    return REFUSED(PMCP_TERR_INVALID_ARGUMENT,
                   "view_options: use start_line or grep, not both");
  if (jgrep && (!cJSON_IsString(jgrep) || !*jgrep->valuestring ||
                strlen(jgrep->valuestring) > 500))
    return REFUSED(PMCP_TERR_INVALID_ARGUMENT,
                   "view_options.grep is a non-empty pattern of at "
                   "most 500 characters");
  p->grep = jgrep ? jgrep->valuestring : NULL;
  /* The version read: the cursor's pinned one, else the ref's, else 0
   * (latest). */
  int pinned = v->state && pmcp__jn(v->state, "v", 0) > 0;
  if (pinned)
    p->version = (int64_t)pmcp__jn(v->state, "v", 0);
  else if (v->ref.version[0]) {
    char *end;
    long long n = strtoll(v->ref.version, &end, 10);
    if (*end || n < 1)
      return REFUSED(PMCP_TERR_INVALID_ARGUMENT,
                     "%s: content reads a version number "
                     "(artifact:NAME@3); find a label's number with "
                     "view=versions",
                     v->ref_text);
    p->version = n;
  }
  const cJSON *jver = o ? cJSON_GetObjectItemCaseSensitive(o, "version") : NULL;
  if (jver && !pinned) {
    if (!cJSON_IsNumber(jver) || jver->valuedouble < 1 || jver->valuedouble > 1e15 ||
        jver->valuedouble != (double)(long long)jver->valuedouble)
      return REFUSED(PMCP_TERR_INVALID_ARGUMENT,
                     "view_options.version is a version number >= 1 (view=versions "
                     "lists them)");
    if (v->ref.kind == PMCP__REF_FILE)
      return REFUSED(PMCP_TERR_INVALID_ARGUMENT,
                     "view_options.version reads an artifact's older version; a "
                     "file has one text");
    if (p->version && p->version != (int64_t)jver->valuedouble)
      return REFUSED(PMCP_TERR_INVALID_ARGUMENT,
                     "%s names version %lld and view_options.version %.0f: give one",
                     v->ref_text, (long long)p->version, jver->valuedouble);
    p->version = (int64_t)jver->valuedouble;
  }
  assert(p->start >= 1 && p->ctx <= 20 && p->version >= 0);
  assert(!(p->grep && jstart));
  return 0;
}

/* ---- fetch: the text, its metadata and its lines ---------------------- */

typedef struct content_text {
  pmcp_buf data;   /* the text (owned) */
  cJSON *meta;     /* its metadata object (owned), or NULL */
  const char *t;   /* data.ptr, or "" when empty */
  size_t len;
  size_t *ix;      /* line starts (owned); NULL when len is 0 */
  size_t nlines;
} content_text;

static void text_free(content_text *x)
{
  free(x->ix);
  x->ix = NULL;
  pmcp_buf_dispose(&x->data);
  cJSON_Delete(x->meta);
  x->meta = NULL;
}

/* The stored bytes and metadata of the ref (@p version of an artifact)
 * into @p data / @p meta. Returns 0, 1 having set the error, or a
 * negative code. */
static int fetch_bytes(pmcp__vctx *v, int64_t version, pmcp_buf *data, pmcp_buf *meta)
{
  int rc = 0;
  if (v->ref.kind == PMCP__REF_FILE) {
    /* a file's text is in its record (or it is a reference) */
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(v->rec, "content");
    if (!cJSON_IsString(c))
      return refuse(v, "is a reference to an outside file, not stored text"), 1;
    rc = pmcp__buf_puts(data, c->valuestring);
    char *mt = cJSON_PrintUnformatted(v->rec);
    if (!rc && mt)
      rc = pmcp__buf_puts(meta, mt);
    cJSON_free(mt);
    return rc ? PMCP_ENOMEM : 0;
  }
  char base[PMCP__REF_MAX + 16];
  snprintf(base, sizeof base, "artifact:%s", v->ref.id);
  pthread_mutex_lock(v->rs->lock);
  rc = pmcp_store_artifact_content(v->rs->store, v->rs->tenant, base,
                                   version, data, meta);
  char err[300] = "";
  if (rc && rc != PMCP_EUNSUPPORTED)
    snprintf(err, sizeof err, "%s", pmcp_store_errmsg(v->rs->store));
  pthread_mutex_unlock(v->rs->lock);
  if (rc == PMCP_EUNSUPPORTED)
    return refuse(v, "is a reference to an outside file, not stored text"), 1;
  if (rc == PMCP_ENOMEM)
    return rc;
  if (rc)
    return REFUSED(rc == PMCP_ENOTFOUND ? PMCP_TERR_NOT_FOUND : PMCP_TERR_STORE,
                   "%s", err);
  return 0;
}

/* The text to show: fetched, refused when over 2 MiB or not UTF-8 text,
 * indexed by lines. Returns as fetch_bytes(); @p x is to be freed with
 * text_free() either way. */
static int fetch(pmcp__vctx *v, int64_t version, content_text *x)
{
  *x = (content_text){PMCP_BUF_INIT, NULL, "", 0, NULL, 0};
  pmcp_buf meta = PMCP_BUF_INIT;
  int rc = fetch_bytes(v, version, &x->data, &meta);
  if (rc) {
    pmcp_buf_dispose(&meta);
    return rc;
  }
  x->meta = cJSON_ParseWithLength(meta.ptr ? meta.ptr : "{}",
                                  meta.ptr ? meta.len : 2);
  pmcp_buf_dispose(&meta);
  if (x->data.len > MAX_BYTES)
    return refuse(v, "is over 2 MiB"), 1;
  if (!is_text((const unsigned char *)(x->data.ptr ? x->data.ptr : ""), x->data.len))
    return refuse(v, "is binary"), 1;
  x->t = x->data.ptr ? x->data.ptr : "";
  x->len = x->data.len;
  x->ix = line_index(x->t, x->len, &x->nlines);
  if (!x->ix && x->len)
    return PMCP_ENOMEM;
  assert(x->len <= MAX_BYTES);
  assert(x->nlines <= x->len && (x->nlines == 0) == (x->len == 0));
  return 0;
}

/* ---- render: the head, then the matches or a page of lines ------------- */

/* v->obj: the fields every page of the content has. */
static int render_head(pmcp__vctx *v, const content_text *x)
{
  v->obj = cJSON_CreateObject();
  if (!v->obj)
    return PMCP_ENOMEM;
  cJSON_AddStringToObject(v->obj, "ref", v->ref_text);
  cJSON_AddStringToObject(v->obj, "view", "content");
  static const char *const mk[] = {"version", "path", "media_type", "size",
                                   "sha256", NULL};
  for (size_t i = 0; mk[i]; i++) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(x->meta, mk[i]);
    if (f && !cJSON_IsNull(f))
      cJSON_AddItemToObject(v->obj, mk[i], cJSON_Duplicate(f, 1));
  }
  cJSON_AddNumberToObject(v->obj, "total_lines", (double)x->nlines);
  return 0;
}

/* The lines matching @p grep, with @p ctx lines around them, in blocks
 * (v->items, "matches"). */
static int render_grep(pmcp__vctx *v, const content_text *x, const char *grep, size_t ctx)
{
  const char *t = x->t;
  size_t len = x->len, nlines = x->nlines;
  const size_t *ix = x->ix;
  regex_t re;
  int rerr = regcomp(&re, grep, REG_EXTENDED);
  if (rerr) {
    char why[160];
    regerror(rerr, &re, why, sizeof why);
    return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                           "view_options.grep: not a valid extended "
                           "regular expression (%s)",
                           why);
  }
  v->items = cJSON_CreateArray();
  v->list_name = "matches";
  /* A block of contiguous matches is split at line boundaries when it
   * outgrows a share of the budget, so each block fits a page: a
   * continuation block says so ("continued"). */
  int budget = pmcp__rs_budget(v->call);
  size_t cap = budget > 1000 ? (size_t)(budget - 600) / 2 : 200;
  size_t hits = 0, block_end = 0, block_tok = 0;
  int open = 0, k_first = 1;
  cJSON *block = NULL, *lines = NULL, *mlines = NULL;
  char *line = malloc(len + 1);
  for (size_t i = 0; line && i < nlines; i++) {
    size_t ll = line_len(t, len, ix, nlines, i);
    memcpy(line, t + ix[i], ll);
    line[ll] = '\0';
    regmatch_t at[1];
    if (regexec(&re, line, 1, at, 0) != 0)
      continue;
    size_t at_byte = at[0].rm_so > 0 ? (size_t)at[0].rm_so : 0;
    hits++;
    size_t from = i >= ctx ? i - ctx : 0;
    size_t to = i + ctx < nlines ? i + ctx : nlines - 1;
    int cont = 0;
    if (open && from <= block_end + 1) {
      from = block_end + 1; /* overlaps the open block: the lines it lacks */
      cont = 1;
    }
    for (size_t k = from; k <= to; k++) {
      size_t kl = line_len(t, len, ix, nlines, k);
      size_t tok = pmcp__rs_tokens(t + ix[k], kl) + 2;
      if (!open || !cont || (block_tok + tok > cap && cJSON_GetArraySize(lines) > 0)) {
        block = cJSON_CreateObject();
        cJSON_AddNumberToObject(block, "start_line", (double)(k + 1));
        if (open && cont)
          cJSON_AddTrueToObject(block, "continued");
        lines = cJSON_AddArrayToObject(block, "lines");
        mlines = cJSON_AddArrayToObject(block, "match_lines");
        cJSON_AddItemToArray(v->items, block);
        block_tok = 0;
        open = cont = 1;
      }
      if (tok > cap) {
        /* a line longer than a block's share: the part that holds,
         * from a little before the match (from its start for context
         * lines), the whole line being in view=content */
        size_t off = k == i ? (at_byte > 64 ? at_byte - 64 : 0) : 0;
        while (off > 0 && ((unsigned char)t[ix[k] + off] & 0xC0) == 0x80)
          off--;
        assert(off <= kl);
        size_t n = line_cut(t + ix[k] + off, kl - off, cap);
        cJSON_AddItemToArray(lines, str_n(t + ix[k] + off, n));
        cJSON *cut = cJSON_GetObjectItemCaseSensitive(block, "cut_lines");
        if (!cut)
          cut = cJSON_AddArrayToObject(block, "cut_lines");
        cJSON *c = cJSON_CreateObject();
        cJSON_AddNumberToObject(c, "line", (double)(k + 1));
        cJSON_AddNumberToObject(c, "from_byte", (double)off);
        cJSON_AddNumberToObject(c, "bytes", (double)n);
        cJSON_AddNumberToObject(c, "line_bytes", (double)kl);
        cJSON_AddItemToArray(cut, c);
        tok = cap;
      } else {
        cJSON_AddItemToArray(lines, str_n(t + ix[k], kl));
      }
      block_tok += tok;
      if (k == i)
        cJSON_AddItemToArray(mlines, cJSON_CreateNumber((double)(i + 1)));
    }
    if (i < from) {
      /* its line is shown already: in the block that holds it */
      cJSON *b = cJSON_GetArrayItem(v->items, cJSON_GetArraySize(v->items) - 1);
      while (b && b->prev && b != v->items->child && pmcp__jn(b, "start_line", 0) > (double)(i + 1))
        b = b->prev;
      cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(b, "match_lines"),
                           cJSON_CreateNumber((double)(i + 1)));
    }
    if (to > block_end || k_first)
      block_end = to;
    k_first = 0;
  }
  free(line);
  regfree(&re);
  cJSON_AddStringToObject(v->obj, "grep", grep);
  cJSON_AddNumberToObject(v->obj, "match_count", (double)hits);
  return 0;
}

/* A page of lines from @p start (or the cursor's line and column) that
 * fits the budget, in v->obj. */
static int render_page(pmcp__vctx *v, const content_text *x, size_t start)
{
  const char *t = x->t;
  size_t len = x->len, nlines = x->nlines;
  const size_t *ix = x->ix;
  size_t col = 0; /* a cursor inside a line too long for one page */
  if (v->state && pmcp__jn(v->state, "line", 0) >= 1) {
    start = (size_t)pmcp__jn(v->state, "line", 1);
    double c = pmcp__jn(v->state, "col", 0);
    col = c > 0 ? (size_t)c : 0;
  }
  if (nlines == 0 ? start > 1 : start > nlines) {
    cJSON_Delete(v->obj);
    v->obj = NULL;
    return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                           "view_options.start_line %zu is past the end "
                           "(%zu lines)",
                           start, nlines);
  }
  /* section() and line_part() read from line start, which is in the text */
  assert(start >= 1 && (nlines ? start <= nlines : start == 1));
  if (col)
    return line_part(v, t, len, ix, nlines, start, col);
  /* The page: as many whole 40-line sections as the budget holds (a
   * bigger budget gives bigger pages); fewer lines when not even one
   * section fits. */
  size_t max_k = nlines >= start ? (nlines - start + SECTION_LINES) / SECTION_LINES : 1;
  size_t lo = 0, hi = 0;
  cJSON *best = NULL;
  for (size_t k = 1; k <= max_k; k = k * 2 > max_k && k < max_k ? max_k : k * 2) {
    size_t end;
    cJSON *sec = section(v->obj, t, len, ix, nlines, start, k * SECTION_LINES, &end);
    if (!sec)
      break;
    if (!pmcp__rs_fits(v->call, sec, end < nlines ? 160 : 0)) {
      cJSON_Delete(sec);
      hi = k;
      break;
    }
    cJSON_Delete(best);
    best = sec;
    lo = k;
    if (k == max_k)
      break;
  }
  /* lo sections fit and hi do not (0: none tried past lo) */
  assert(!hi || lo < hi);
  while (lo && hi > lo + 1) {
    size_t mid = lo + (hi - lo) / 2, end;
    cJSON *sec = section(v->obj, t, len, ix, nlines, start, mid * SECTION_LINES, &end);
    if (!sec)
      break;
    if (pmcp__rs_fits(v->call, sec, end < nlines ? 160 : 0)) {
      cJSON_Delete(best);
      best = sec;
      lo = mid;
    } else {
      cJSON_Delete(sec);
      hi = mid;
    }
  }
  if (best) {
    cJSON_Delete(v->obj);
    v->obj = best;
    return 0;
  }
  size_t want = SECTION_LINES / 2;
  for (;;) {
    assert(want >= 1);
    size_t end;
    cJSON *sec = section(v->obj, t, len, ix, nlines, start, want, &end);
    /* 160 tokens stay free for the cursor entity.c adds. */
    if (want == 1 || pmcp__rs_fits(v->call, sec, end < nlines ? 160 : 0)) {
      if (want == 1 && !pmcp__rs_fits(v->call, sec, 160)) {
        /* One line too long for the budget: it is read in parts */
        cJSON_Delete(sec);
        return line_part(v, t, len, ix, nlines, start, 0);
      }
      cJSON_Delete(v->obj);
      v->obj = sec;
      break;
    }
    cJSON_Delete(sec);
    want /= 2;
  }
  /* entity.c turns next_start_line into next_cursor, pinned to this
   * version. */
  return 0;
}

int pmcp__view_content(pmcp__vctx *v)
{
  content_opts p;
  if (parse(v, &p))
    return 0;
  content_text x;
  int rc = fetch(v, p.version, &x);
  if (!rc)
    rc = render_head(v, &x);
  if (!rc)
    rc = p.grep ? render_grep(v, &x, p.grep, p.ctx) : render_page(v, &x, p.start);
  text_free(&x);
  return rc < 0 ? rc : 0;
}
