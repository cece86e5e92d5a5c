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

/* The fields every page of the content has. */
static void put_head(pmcp_json *j, const pmcp__vctx *v, const content_text *x)
{
  pmcp_json_key(j, "ref");
  pmcp_json_string(j, v->ref_text);
  pmcp_json_key(j, "view");
  pmcp_json_string(j, "content");
  static const char *const mk[] = {"version", "path", "media_type", "size",
                                   "sha256", NULL};
  for (size_t i = 0; mk[i]; i++) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(x->meta, mk[i]);
    if (f && !cJSON_IsNull(f)) {
      pmcp_json_key(j, mk[i]);
      pmcp__vw_value(j, f, 0);
    }
  }
  pmcp_json_key(j, "total_lines");
  pmcp_json_uint(j, x->nlines);
}

/* Where a page of lines ends and the next one starts (line 0: none). */
typedef struct page_end {
  size_t end;  /* the page's last line */
  size_t line; /* next_start_line, or 0 at the end of the text */
  size_t col;  /* next_start_col inside a cut line, or 0 */
} page_end;

/* The page of lines @p start .. at->end, from byte @p col of line
 * @p start, whose text is [from, from + n) of the text (@p cut: the line
 * goes on past it), into @p out; @p at says where the next page starts. */
static int write_lines(const pmcp__vctx *v, const content_text *x, size_t start, size_t col,
                       size_t from, size_t n, int cut, const page_end *at, pmcp_buf *out)
{
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, 0))
    return PMCP_ENOMEM;
  pmcp_json_object_begin(j);
  put_head(j, v, x);
  pmcp_json_key(j, "start_line");
  pmcp_json_uint(j, start);
  pmcp_json_key(j, "end_line");
  pmcp_json_uint(j, at->end);
  if (col) {
    pmcp_json_key(j, "start_col");
    pmcp_json_uint(j, col);
  }
  pmcp_json_key(j, "text");
  pmcp_json_string_n(j, x->t + from, n);
  if (cut) {
    pmcp_json_key(j, "line_truncated");
    pmcp_json_bool(j, 1);
  }
  if (at->line) {
    pmcp_json_key(j, "next_start_line");
    pmcp_json_uint(j, at->line);
  }
  if (at->col) {
    pmcp_json_key(j, "next_start_col");
    pmcp_json_uint(j, at->col);
  }
  pmcp_json_object_end(j);
  return pmcp__vw_take(j, out);
}

/* Lines start .. start-1+want (to the end at most) of the text as a page,
 * into @p out; @p at says where it ends. */
static int section(const pmcp__vctx *v, const content_text *x, size_t start, size_t want,
                   page_end *at, pmcp_buf *out)
{
  size_t nlines = x->nlines;
  assert(start >= 1 && want >= 1 && (nlines ? start <= nlines : start == 1));
  size_t e = start - 1 + want;
  if (e > nlines)
    e = nlines;
  *at = (page_end){e, e < nlines ? e + 1 : 0, 0};
  size_t from = nlines ? x->ix[start - 1] : 0;
  size_t to = e < nlines ? x->ix[e] : x->len;
  return write_lines(v, x, start, 0, from, to - from, 0, at, out);
}

/* Makes @p page (taken) the view's object, and its continuation the
 * position state entity.c mints the next_cursor from: the next line (and
 * column) of the same version. */
static int keep_page(pmcp__vctx *v, const content_text *x, pmcp_buf *page, const page_end *at)
{
  pmcp_buf_dispose(&v->head);
  v->head = *page;
  *page = (pmcp_buf)PMCP_BUF_INIT;
  v->has_head = 1;
  if (!at->line)
    return 0;
  int rc = pmcp__buf_printf(&v->resume, "{\"line\":%zu", at->line);
  if (!rc && at->col)
    rc = pmcp__buf_printf(&v->resume, ",\"col\":%zu", at->col);
  if (!rc)
    rc = pmcp__buf_printf(&v->resume, ",\"v\":%.0f}", pmcp__jn(x->meta, "version", 0));
  return rc ? PMCP_ENOMEM : 0;
}

/* Bytes [from, from + l) of line @p start, beginning at column @p col, as a
 * page into @p out; @p at says where it ends. */
static int line_piece(const pmcp__vctx *v, const content_text *x, size_t start, size_t col,
                      size_t from, size_t l, size_t to, page_end *at, pmcp_buf *out)
{
  int last = from + l == to;
  *at = (page_end){start, !last ? start : start < x->nlines ? start + 1 : 0, !last ? col + l : 0};
  return write_lines(v, x, start, col, from, l, !last, at, out);
}

/* A page of line @p start from byte @p col of it, for a line too long
 * for one page: as many bytes as the budget holds, by tokens, cut at a
 * character; the next page continues the line at next_start_col (the
 * text of the pages joins back to the line). */
static int line_part(pmcp__vctx *v, const content_text *x, size_t start, size_t col)
{
  size_t nlines = x->nlines;
  const char *t = x->t;
  assert(start >= 1 && (nlines ? start <= nlines : start == 1));
  size_t from = (nlines ? x->ix[start - 1] : 0) + col;
  size_t to = start < nlines ? x->ix[start] : x->len;
  if (from > to)
    return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT, "the cursor is past the end of line %zu",
                           start);
  /* the largest length that fits: fits(mid cut at a character) falls as
   * mid grows, so the search moves on mid itself */
  size_t lo = 1, hi = to - from;
  pmcp_buf best = PMCP_BUF_INIT, sec = PMCP_BUF_INIT;
  page_end best_at = {0, 0, 0}, at;
  int rc = 0, found = 0;
  while (!rc && lo <= hi) {
    size_t mid = lo + (hi - lo) / 2, l = mid;
    while (l > 0 && from + l < to && ((unsigned char)t[from + l] & 0xC0) == 0x80)
      l--; /* a character's continuation bytes stay with it */
    int last = from + l == to;
    rc = line_piece(v, x, start, col, from, l, to, &at, &sec);
    if (rc)
      break;
    if (l > 0 && pmcp__rs_fits_text(v->call, sec.ptr, sec.len, last && start >= nlines ? 0 : 160)) {
      pmcp_buf swap = best;
      best = sec;
      sec = swap;
      best_at = at;
      found = 1;
      if (last)
        break;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  pmcp_buf_dispose(&sec);
  if (!rc && !found)
    rc = pmcp__view_fail(v, PMCP_TERR_TOKEN_BUDGET_TOO_SMALL,
                         "line %zu is too long to show any of it in this budget", start);
  else if (!rc)
    rc = keep_page(v, x, &best, &best_at);
  pmcp_buf_dispose(&best);
  return rc;
}

/* ---- grep: the matching lines in blocks --------------------------------- */

/* A block of lines shown ("matches" item): its lines, cut lines and
 * match lines are runs of the arrays of grep_out. */
typedef struct grep_block {
  size_t start_line;
  int continued;
  size_t line0, nline;    /* its lines: lines[line0 .. +nline) */
  size_t cut0, ncut;      /* its cut lines: cuts[cut0 .. +ncut) */
  size_t m_first, m_last; /* its match lines: a chain through matches (+1; 0 none) */
} grep_block;

typedef struct grep_cut {
  size_t line, from_byte, bytes, line_bytes;
} grep_cut;

typedef struct grep_match {
  size_t line, next; /* next: index + 1 of the block's next match, 0 none */
} grep_match;

typedef struct grep_out {
  grep_block *blocks;
  size_t nblocks, cap_blocks;
  size_t (*lines)[2]; /* offset and length in the text */
  size_t nlines, cap_lines;
  grep_cut *cuts;
  size_t ncuts, cap_cuts;
  grep_match *matches;
  size_t nmatches, cap_matches;
} grep_out;

/* Room for one more element of @p *arr (n used of *cap). */
static int room(void **arr, size_t n, size_t *cap, size_t size)
{
  if (n < *cap)
    return 0;
  size_t c = *cap ? *cap * 2 : 16;
  void *p = realloc(*arr, c * size);
  if (!p)
    return PMCP_ENOMEM;
  *arr = p;
  *cap = c;
  return 0;
}

#define GROW(g, arr, n, cap) room((void **)&(g)->arr, (g)->n, &(g)->cap, sizeof *(g)->arr)

static void grep_free(grep_out *g)
{
  free(g->blocks);
  free(g->lines);
  free(g->cuts);
  free(g->matches);
}

/* Adds match line @p line to block @p b. */
static int add_match(grep_out *g, size_t b, size_t line)
{
  if (GROW(g, matches, nmatches, cap_matches))
    return PMCP_ENOMEM;
  g->matches[g->nmatches++] = (grep_match){line, 0};
  grep_block *bl = &g->blocks[b];
  if (bl->m_last)
    g->matches[bl->m_last - 1].next = g->nmatches;
  else
    bl->m_first = g->nmatches;
  bl->m_last = g->nmatches;
  return 0;
}

/* The blocks as a JSON array into @p out. */
static int grep_write(const grep_out *g, const char *t, pmcp_buf *out)
{
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, 0))
    return PMCP_ENOMEM;
  pmcp_json_array_begin(j);
  for (size_t b = 0; b < g->nblocks; b++) {
    const grep_block *bl = &g->blocks[b];
    pmcp_json_object_begin(j);
    pmcp_json_key(j, "start_line");
    pmcp_json_uint(j, bl->start_line);
    if (bl->continued) {
      pmcp_json_key(j, "continued");
      pmcp_json_bool(j, 1);
    }
    pmcp_json_key(j, "lines");
    pmcp_json_array_begin(j);
    for (size_t i = bl->line0; i < bl->line0 + bl->nline; i++)
      pmcp_json_string_n(j, t + g->lines[i][0], g->lines[i][1]);
    pmcp_json_array_end(j);
    pmcp_json_key(j, "match_lines");
    pmcp_json_array_begin(j);
    for (size_t m = bl->m_first; m; m = g->matches[m - 1].next)
      pmcp_json_uint(j, g->matches[m - 1].line);
    pmcp_json_array_end(j);
    if (bl->ncut) {
      pmcp_json_key(j, "cut_lines");
      pmcp_json_array_begin(j);
      for (size_t i = bl->cut0; i < bl->cut0 + bl->ncut; i++) {
        const grep_cut *c = &g->cuts[i];
        pmcp_json_object_begin(j);
        pmcp_json_key(j, "line");
        pmcp_json_uint(j, c->line);
        pmcp_json_key(j, "from_byte");
        pmcp_json_uint(j, c->from_byte);
        pmcp_json_key(j, "bytes");
        pmcp_json_uint(j, c->bytes);
        pmcp_json_key(j, "line_bytes");
        pmcp_json_uint(j, c->line_bytes);
        pmcp_json_object_end(j);
      }
      pmcp_json_array_end(j);
    }
    pmcp_json_object_end(j);
  }
  pmcp_json_array_end(j);
  return pmcp__vw_take(j, out);
}

/* Line @p k of the text into the open block: whole, or, when longer than
 * a block's share (@p cap tokens), the part that holds from a little
 * before the match at @p at_byte (from its start for context lines), the
 * whole line being in view=content. Returns the tokens it counts for. */
static int grep_line(grep_out *g, const content_text *x, size_t k, size_t kl, size_t tok,
                     size_t cap, int is_match, size_t at_byte, size_t *counted)
{
  const char *t = x->t;
  size_t off = 0, n = kl;
  if (tok > cap) {
    off = is_match ? (at_byte > 64 ? at_byte - 64 : 0) : 0;
    while (off > 0 && ((unsigned char)t[x->ix[k] + off] & 0xC0) == 0x80)
      off--;
    assert(off <= kl);
    n = line_cut(t + x->ix[k] + off, kl - off, cap);
    if (GROW(g, cuts, ncuts, cap_cuts))
      return PMCP_ENOMEM;
    grep_block *bl = &g->blocks[g->nblocks - 1];
    if (!bl->ncut)
      bl->cut0 = g->ncuts;
    bl->ncut++;
    g->cuts[g->ncuts++] = (grep_cut){k + 1, off, n, kl};
    tok = cap;
  }
  if (GROW(g, lines, nlines, cap_lines))
    return PMCP_ENOMEM;
  g->lines[g->nlines][0] = x->ix[k] + off;
  g->lines[g->nlines][1] = n;
  g->nlines++;
  g->blocks[g->nblocks - 1].nline++;
  *counted = tok;
  return 0;
}

/* The lines matching @p grep, with @p ctx lines around them, in blocks
 * (into @p g); *hits counts the matching lines. */
static int grep_scan(pmcp__vctx *v, const content_text *x, regex_t *re, size_t ctx, grep_out *g,
                     size_t *hits)
{
  const char *t = x->t;
  size_t len = x->len, nlines = x->nlines;
  const size_t *ix = x->ix;
  /* A block of contiguous matches is split at line boundaries when it
   * outgrows a share of the budget, so each block fits a page: a
   * continuation block says so ("continued"). */
  int budget = pmcp__rs_budget(v->call);
  size_t cap = budget > 1000 ? (size_t)(budget - 600) / 2 : 200;
  size_t block_end = 0, block_tok = 0;
  int open = 0, k_first = 1, rc = 0;
  char *line = malloc(len + 1);
  if (!line)
    return PMCP_ENOMEM;
  for (size_t i = 0; !rc && i < nlines; i++) {
    size_t ll = line_len(t, len, ix, nlines, i);
    memcpy(line, t + ix[i], ll);
    line[ll] = '\0';
    regmatch_t at[1];
    if (regexec(re, line, 1, at, 0) != 0)
      continue;
    size_t at_byte = at[0].rm_so > 0 ? (size_t)at[0].rm_so : 0;
    (*hits)++;
    size_t from = i >= ctx ? i - ctx : 0;
    size_t to = i + ctx < nlines ? i + ctx : nlines - 1;
    int cont = 0;
    if (open && from <= block_end + 1) {
      from = block_end + 1; /* overlaps the open block: the lines it lacks */
      cont = 1;
    }
    for (size_t k = from; !rc && k <= to; k++) {
      size_t kl = line_len(t, len, ix, nlines, k);
      size_t tok = pmcp__rs_tokens(t + ix[k], kl) + 2;
      if (!open || !cont || (block_tok + tok > cap && g->blocks[g->nblocks - 1].nline > 0)) {
        if (GROW(g, blocks, nblocks, cap_blocks)) {
          rc = PMCP_ENOMEM;
          break;
        }
        g->blocks[g->nblocks++] = (grep_block){k + 1, open && cont, g->nlines, 0, 0, 0, 0, 0};
        block_tok = 0;
        open = cont = 1;
      }
      rc = grep_line(g, x, k, kl, tok, cap, k == i, at_byte, &tok);
      block_tok += tok;
      if (!rc && k == i)
        rc = add_match(g, g->nblocks - 1, i + 1);
    }
    if (!rc && i < from) {
      /* its line is shown already: in the block that holds it */
      size_t b = g->nblocks - 1;
      while (b > 0 && g->blocks[b].start_line > i + 1)
        b--;
      rc = add_match(g, b, i + 1);
    }
    if (to > block_end || k_first)
      block_end = to;
    k_first = 0;
  }
  free(line);
  return rc;
}

/* The lines matching @p grep, with @p ctx lines around them, in blocks
 * (the list "matches"; the head with grep and match_count in v->head). */
static int render_grep(pmcp__vctx *v, const content_text *x, const char *grep, size_t ctx)
{
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
  grep_out g = {0};
  size_t hits = 0;
  int rc = grep_scan(v, x, &re, ctx, &g, &hits);
  regfree(&re);
  if (!rc)
    rc = grep_write(&g, x->t, &v->list_text);
  v->list_n = g.nblocks;
  grep_free(&g);
  if (rc)
    return rc;
  v->has_list = 1;
  v->list_name = "matches";
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, 0))
    return PMCP_ENOMEM;
  pmcp_json_object_begin(j);
  put_head(j, v, x);
  pmcp_json_key(j, "grep");
  pmcp_json_string(j, grep);
  pmcp_json_key(j, "match_count");
  pmcp_json_uint(j, hits);
  pmcp_json_object_end(j);
  rc = pmcp__vw_take(j, &v->head);
  v->has_head = rc == 0;
  return rc;
}

/* ---- a page of lines ----------------------------------------------------- */

/* The page of @p want lines from @p start into @p sec when it fits the
 * budget (160 tokens stay free for the cursor entity.c adds when more
 * follows): 1 it fits, 0 not, or a negative error. */
static int try_section(const pmcp__vctx *v, const content_text *x, size_t start, size_t want,
                       page_end *at, pmcp_buf *sec)
{
  int rc = section(v, x, start, want, at, sec);
  if (rc)
    return rc;
  return pmcp__rs_fits_text(v->call, sec->ptr, sec->len, at->end < x->nlines ? 160 : 0);
}

/* A page of lines from @p start (or the cursor's line and column) that
 * fits the budget, in v->head. */
static int render_page(pmcp__vctx *v, const content_text *x, size_t start)
{
  size_t nlines = x->nlines;
  size_t col = 0; /* a cursor inside a line too long for one page */
  if (v->state && pmcp__jn(v->state, "line", 0) >= 1) {
    start = (size_t)pmcp__jn(v->state, "line", 1);
    double c = pmcp__jn(v->state, "col", 0);
    col = c > 0 ? (size_t)c : 0;
  }
  if (nlines == 0 ? start > 1 : start > nlines)
    return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                           "view_options.start_line %zu is past the end "
                           "(%zu lines)",
                           start, nlines);
  /* section() and line_part() read from line start, which is in the text */
  assert(start >= 1 && (nlines ? start <= nlines : start == 1));
  if (col)
    return line_part(v, x, start, col);
  /* The page: as many whole 40-line sections as the budget holds (a
   * bigger budget gives bigger pages); fewer lines when not even one
   * section fits. */
  size_t max_k = nlines >= start ? (nlines - start + SECTION_LINES) / SECTION_LINES : 1;
  size_t lo = 0, hi = 0;
  pmcp_buf best = PMCP_BUF_INIT, sec = PMCP_BUF_INIT;
  page_end best_at = {0, 0, 0}, at;
  int fit = 0;
  for (size_t k = 1; k <= max_k; k = k * 2 > max_k && k < max_k ? max_k : k * 2) {
    if ((fit = try_section(v, x, start, k * SECTION_LINES, &at, &sec)) <= 0) {
      hi = k;
      break;
    }
    pmcp_buf swap = best;
    best = sec;
    sec = swap;
    best_at = at;
    lo = k;
    if (k == max_k)
      break;
  }
  /* lo sections fit and hi do not (0: none tried past lo) */
  assert(fit < 0 || !hi || lo < hi);
  while (fit >= 0 && lo && hi > lo + 1) {
    size_t mid = lo + (hi - lo) / 2;
    if ((fit = try_section(v, x, start, mid * SECTION_LINES, &at, &sec)) > 0) {
      pmcp_buf swap = best;
      best = sec;
      sec = swap;
      best_at = at;
      lo = mid;
    } else {
      hi = mid;
    }
  }
  size_t want = SECTION_LINES / 2;
  while (fit >= 0 && !lo) {
    assert(want >= 1);
    fit = try_section(v, x, start, want, &at, &sec);
    if (fit > 0 || (fit == 0 && want == 1)) {
      if (want == 1 && !pmcp__rs_fits_text(v->call, sec.ptr, sec.len, 160)) {
        /* One line too long for the budget: it is read in parts */
        pmcp_buf_dispose(&best);
        pmcp_buf_dispose(&sec);
        return line_part(v, x, start, 0);
      }
      pmcp_buf swap = best;
      best = sec;
      sec = swap;
      best_at = at;
      lo = 1;
    }
    want /= 2;
  }
  int rc = fit < 0 ? fit : keep_page(v, x, &best, &best_at);
  pmcp_buf_dispose(&best);
  pmcp_buf_dispose(&sec);
  return rc;
}

int pmcp__view_content(pmcp__vctx *v)
{
  content_opts p;
  if (parse(v, &p))
    return 0;
  content_text x;
  int rc = fetch(v, p.version, &x);
  if (!rc)
    rc = p.grep ? render_grep(v, &x, p.grep, p.ctx) : render_page(v, &x, p.start);
  text_free(&x);
  return rc < 0 ? rc : 0;
}
