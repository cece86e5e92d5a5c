/* SPDX-License-Identifier: MIT */
/* Arena-held JSON messages (jdoc.h). */
#include "core/jdoc.h"

#include <limits.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/engine.h"
#include "probemcp/json.h"
#include "util/buf.h"
#include "util/cnum.h"

/* Arena blocks: the first one is allocated with the document header and
 * sized from the message, which fits a typical request whole; later ones
 * double, and a string too big for any block gets a block of its own. */
typedef struct block {
  struct block *next;
  size_t cap, used;
  alignas(max_align_t) char data[];
} block;

struct pmcp__jdoc {
  atomic_size_t refs;
  pmcp_server *srv;
  block *blocks; /* newest first; the last one lives in this allocation */
  int nul;       /* some string or member name holds a decoded \u0000 */
};

/* Where the first block starts, in the same allocation as the header. */
#define FIRST_AT (((sizeof(pmcp__jdoc) + alignof(max_align_t) - 1) / alignof(max_align_t)) * \
                  alignof(max_align_t))

#define FIRST_MIN 512u
#define FIRST_MAX (16u * 1024)
#define BLOCK_MAX (1024u * 1024)

typedef struct parser {
  pmcp__jdoc *doc;
  const char *p, *end;
  int depth;
  int oom;
  int last_nul; /* the string just parsed decoded a \u0000 */
  int cache;    /* look params' _meta up in the server's cache */
} parser;

static void *take(parser *ps, size_t n, size_t align)
{
  block *b = ps->doc->blocks;
  size_t at = (b->used + align - 1) & ~(align - 1);
  if (at <= b->cap && n <= b->cap - at) {
    b->used = at + n;
    return b->data + at;
  }
  size_t cap = b->cap * 2 < BLOCK_MAX ? b->cap * 2 : BLOCK_MAX;
  if (cap < n)
    cap = n;
  if (cap > SIZE_MAX - sizeof(block)) {
    ps->oom = 1;
    return NULL;
  }
  block *nb = pmcp__malloc(ps->doc->srv, sizeof(block) + cap);
  if (!nb) {
    ps->oom = 1;
    return NULL;
  }
  nb->cap = cap;
  nb->used = n;
  nb->next = b;
  ps->doc->blocks = nb;
  return nb->data;
}

static cJSON *new_node(parser *ps)
{
  cJSON *n = take(ps, sizeof(cJSON), alignof(cJSON));
  if (n)
    memset(n, 0, sizeof *n);
  return n;
}

static void skip_ws(parser *ps)
{
  const char *p = ps->p;
  while (p < ps->end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
    p++;
  ps->p = p;
}

/* A string literal at ps->p (its opening quote); the decoded text goes to
 * *out. The literal is measured first, so that the arena gives the text
 * its exact room; a literal without escapes is copied as it is. */
static int parse_string(parser *ps, char **out)
{
  size_t used, n;
  if (pmcp_json_string_decode(ps->p, (size_t)(ps->end - ps->p), 0, NULL, &used, &n, NULL))
    return -1;
  char *o = take(ps, n + 1, 1);
  if (!o)
    return -1;
  if (n + 2 == used) {
    memcpy(o, ps->p + 1, n);
    o[n] = '\0';
  } else {
    pmcp_json_string_decode(ps->p, used, 0, o, &used, &n, NULL);
    if (memchr(o, '\0', n))
      ps->last_nul = 1;
  }
  if (ps->last_nul)
    ps->doc->nul = 1;
  *out = o;
  ps->p += used;
  return 0;
}

static int parse_number(parser *ps, cJSON *item)
{
  const char *p = ps->p, *end = ps->end, *start = p;
  int neg = 0, simple = 1;
  if (*p == '-') {
    neg = 1;
    p++;
  }
  if (p >= end || *p < '0' || *p > '9')
    return -1;
  const char *digits = p;
  if (*p == '0')
    p++;
  else
    while (p < end && *p >= '0' && *p <= '9')
      p++;
  size_t n_int = (size_t)(p - digits);
  if (p < end && *p == '.') {
    simple = 0;
    p++;
    if (p >= end || *p < '0' || *p > '9')
      return -1;
    while (p < end && *p >= '0' && *p <= '9')
      p++;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    simple = 0;
    p++;
    if (p < end && (*p == '+' || *p == '-'))
      p++;
    if (p >= end || *p < '0' || *p > '9')
      return -1;
    while (p < end && *p >= '0' && *p <= '9')
      p++;
  }
  double d;
  if (simple && n_int <= 15) {
    /* Exact in a double, so the same value strtod would give. */
    int64_t v = 0;
    for (const char *c = digits; c < p; c++)
      v = v * 10 + (*c - '0');
    d = neg ? -(double)v : (double)v;
  } else {
    /* JSON's '.' whatever the host's LC_NUMERIC. */
    size_t n = (size_t)(p - start);
    char small[64];
    char *tmp = n < sizeof small ? small : take(ps, n + 1, 1);
    if (!tmp)
      return -1;
    memcpy(tmp, start, n);
    tmp[n] = '\0';
    d = pmcp__c_strtod(tmp, NULL);
  }
  item->type = cJSON_Number;
  item->valuedouble = d;
  /* cJSON's valueint: saturated at the int range. */
  if (d >= INT_MAX)
    item->valueint = INT_MAX;
  else if (d <= (double)INT_MIN)
    item->valueint = INT_MIN;
  else
    item->valueint = (int)d;
  ps->p = p;
  return 0;
}

static int literal(parser *ps, const char *word, size_t n)
{
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
    return -1;
  ps->p += n;
  return 0;
}

static int parse_value(parser *ps, cJSON *item);

/* A _meta member's value: 1 when linked from the cache or parsed and
 * offered to it, 0 to parse it as any value, -1 when malformed. */
static int parse_meta(parser *ps, cJSON *item)
{
  skip_ws(ps);
  if (ps->p >= ps->end || *ps->p != '{')
    return 0;
  pmcp_server *srv = ps->doc->srv;
  const pmcp__meta_entry *e =
      pmcp__meta_cache_find(srv, ps->p, (size_t)(ps->end - ps->p), ps->depth);
  if (e) {
    item->type = cJSON_Object;
    item->child = e->root->child;
    ps->p += e->len;
    return 1;
  }
  const char *start = ps->p;
  if (parse_value(ps, item))
    return -1;
  pmcp__meta_cache_offer(srv, start, (size_t)(ps->p - start), item);
  return 1;
}

/* The members of an object or the elements of an array, after its opening
 * bracket; links them as cJSON does (child->prev is the last one). */
static int parse_container(parser *ps, cJSON *item, int object)
{
  char close = object ? '}' : ']';
  if (ps->depth >= PMCP__JDOC_DEPTH)
    return -1;
  ps->depth++;
  item->type = object ? cJSON_Object : cJSON_Array;
  ps->p++;
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == close) {
    ps->p++;
    ps->depth--;
    return 0;
  }
  cJSON *last = NULL;
  for (;;) {
    int key_nul = 0;
    cJSON *child = new_node(ps);
    if (!child)
      return -1;
    if (object) {
      skip_ws(ps);
      if (ps->p >= ps->end || *ps->p != '"' || parse_string(ps, &child->string))
        return -1;
      key_nul = ps->last_nul;
      ps->last_nul = 0;
      skip_ws(ps);
      if (ps->p >= ps->end || *ps->p != ':')
        return -1;
      ps->p++;
      if (ps->cache && child->string[0] == '_' && strcmp(child->string, "_meta") == 0) {
        int r = parse_meta(ps, child);
        if (r < 0)
          return -1;
        if (r)
          goto linked;
      }
    }
    if (parse_value(ps, child))
      return -1;
  linked:
    if (key_nul)
      child->type |= PMCP__JDOC_NULKEY;
    if (last) {
      last->next = child;
      child->prev = last;
    } else {
      item->child = child;
    }
    last = child;
    item->child->prev = last;
    skip_ws(ps);
    if (ps->p >= ps->end)
      return -1;
    if (*ps->p == ',') {
      ps->p++;
      continue;
    }
    if (*ps->p != close)
      return -1;
    ps->p++;
    ps->depth--;
    return 0;
  }
}

static int parse_value(parser *ps, cJSON *item)
{
  skip_ws(ps);
  if (ps->p >= ps->end)
    return -1;
  switch (*ps->p) {
  case '{': return parse_container(ps, item, 1);
  case '[': return parse_container(ps, item, 0);
  case '"':
    item->type = cJSON_String;
    if (parse_string(ps, &item->valuestring))
      return -1;
    if (ps->last_nul)
      item->type |= PMCP__JDOC_NUL;
    ps->last_nul = 0;
    return 0;
  case 't':
    item->type = cJSON_True;
    item->valueint = 1;
    return literal(ps, "true", 4);
  case 'f':
    item->type = cJSON_False;
    return literal(ps, "false", 5);
  case 'n':
    item->type = cJSON_NULL;
    return literal(ps, "null", 4);
  default:
    return parse_number(ps, item);
  }
}

static int parse_doc(pmcp__jdoc **out, cJSON **root, pmcp_server *srv,
                     const char *text, size_t len, int cache)
{
  *out = NULL;
  *root = NULL;
  /* Room for the nodes and strings of a typical request of this length. */
  size_t cap = len < (FIRST_MAX - FIRST_MIN) / 8 ? FIRST_MIN + len * 8 : FIRST_MAX;
  pmcp__jdoc *doc = pmcp__malloc(srv, FIRST_AT + sizeof(block) + cap);
  if (!doc)
    return PMCP_ENOMEM;
  atomic_init(&doc->refs, 1);
  doc->srv = srv;
  block *first = (block *)(void *)((char *)doc + FIRST_AT);
  first->next = NULL;
  first->cap = cap;
  first->used = 0;
  doc->blocks = first;
  doc->nul = 0;
  parser ps = {doc, text, text + len, 0, 0, 0, cache};
  cJSON *r = new_node(&ps);
  int bad = !r || parse_value(&ps, r);
  if (!bad) {
    skip_ws(&ps);
    bad = ps.p != ps.end;
  }
  if (bad) {
    pmcp__jdoc_unref(doc);
    return ps.oom ? PMCP_ENOMEM : PMCP_EPROTO;
  }
  *out = doc;
  *root = r;
  return 0;
}

int pmcp__jdoc_parse(pmcp__jdoc **out, cJSON **root, pmcp_server *srv,
                     const char *text, size_t len)
{
  return parse_doc(out, root, srv, text, len, 1);
}

int pmcp__jdoc_parse_plain(pmcp__jdoc **out, cJSON **root, pmcp_server *srv,
                           const char *text, size_t len)
{
  return parse_doc(out, root, srv, text, len, 0);
}

int pmcp__jdoc_has_nul(const pmcp__jdoc *doc)
{
  return doc && doc->nul;
}

/* Appends the path of the first node flagged under @p v to @p path:
 * 1 for a value, 2 for a member name (the path is then its object's). */
static int nul_path(const cJSON *v, pmcp_buf *path)
{
  int i = 0;
  for (const cJSON *c = v ? v->child : NULL; c; c = c->next, i++) {
    if (c->type & PMCP__JDOC_NULKEY)
      return 2;
    size_t mark = path->len;
    int rc = c->string ? pmcp__buf_printf(path, "%s%s", path->len ? "." : "", c->string)
                       : pmcp__buf_printf(path, "[%d]", i);
    if (rc)
      return -1;
    if (c->type & PMCP__JDOC_NUL)
      return 1;
    int r = nul_path(c, path);
    if (r)
      return r;
    path->len = mark;
    if (path->ptr)
      path->ptr[mark] = '\0';
  }
  return 0;
}

int pmcp__jdoc_nul_path(const cJSON *root, pmcp_buf *path)
{
  return nul_path(root, path);
}

void pmcp__jdoc_ref(pmcp__jdoc *doc)
{
  atomic_fetch_add_explicit(&doc->refs, 1, memory_order_relaxed);
}

void pmcp__jdoc_unref(pmcp__jdoc *doc)
{
  if (!doc || atomic_fetch_sub_explicit(&doc->refs, 1, memory_order_acq_rel) != 1)
    return;
  pmcp_server *srv = doc->srv;
  for (block *b = doc->blocks; b->next;) {
    block *next = b->next;
    pmcp__free(srv, b);
    b = next;
  }
  pmcp__free(srv, doc);
}
