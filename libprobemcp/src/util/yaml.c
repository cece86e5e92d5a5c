/* SPDX-License-Identifier: MIT */
/* YAML for the importers through libyaml's document loader: it resolves
 * anchors and aliases and folds multi-line scalars; this file walks the
 * tree into the importers' paths and typed values. */
#include "util/yaml.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "probemcp/error.h"
#include "util/buf.h"
#include "util/cnum.h"

/* Nesting deeper than this is refused, and so is a document whose
 * aliases expand to more nodes than this (a "billion laughs" file). */
#define MAX_DEPTH 64
#define MAX_VISITS 1000000

typedef struct walker {
  yaml_document_t *doc;
  pmcp__yaml_fn fn;
  void *ud;
  pmcp_buf path, text;
  size_t visits;
  int err_line;
  const char *why;
} walker;

static int werr(walker *w, const yaml_node_t *n, const char *why)
{
  w->err_line = n ? (int)n->start_mark.line + 1 : 0;
  w->why = why;
  return PMCP_EPARSE;
}

static int visit(walker *w, const yaml_node_t *n, int depth)
{
  if (depth > MAX_DEPTH)
    return werr(w, n, "YAML nested too deep");
  if (++w->visits > MAX_VISITS)
    return werr(w, n, "YAML too large once its aliases are expanded");
  return 0;
}

static int is_word(const char *s, size_t n, const char *const *words)
{
  for (; *words; words++)
    if (strlen(*words) == n && memcmp(s, *words, n) == 0)
      return 1;
  return 0;
}

/* Types a plain scalar (YAML 1.2 core schema, plus Python's spellings). */
static void type_plain(const char *s, size_t n, pmcp__imp_value *v)
{
  static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
  static const char *const trues[] = {"true", "True", "TRUE", NULL};
  static const char *const falses[] = {"false", "False", "FALSE", NULL};
  static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};
  static const char *const infs[] = {".inf", ".Inf", ".INF", "+.inf",
                                     "+.Inf", "+.INF", NULL};
  static const char *const ninfs[] = {"-.inf", "-.Inf", "-.INF", NULL};
  memset(v, 0, sizeof *v);
  v->type = PMCP__IV_STR;
  v->s = s;
  if (is_word(s, n, nulls)) { v->type = PMCP__IV_NULL; return; }
  if (is_word(s, n, trues)) { v->type = PMCP__IV_BOOL; v->i = 1; return; }
  if (is_word(s, n, falses)) { v->type = PMCP__IV_BOOL; return; }
  if (is_word(s, n, nans)) { v->type = PMCP__IV_FLOAT; v->f = NAN; return; }
  if (is_word(s, n, infs)) { v->type = PMCP__IV_FLOAT; v->f = INFINITY; return; }
  if (is_word(s, n, ninfs)) { v->type = PMCP__IV_FLOAT; v->f = -INFINITY; return; }
  int64_t i;
  double d;
  if (pmcp__imp_parse_int64(s, n, &i) == 0) {
    v->type = PMCP__IV_INT;
    v->i = i;
  } else if (n && s[n - 1] >= '0' && s[n - 1] <= '9' &&
             pmcp__imp_parse_double(s, n, &d) == 0) {
    v->type = PMCP__IV_FLOAT;
    v->f = d;
  }
}

/* The value of a scalar node: quoted and block scalars are strings, and
 * so is a plain one tagged !!str; other plain ones are typed by their
 * text. v->s points into the document. */
static void scalar_value(const yaml_node_t *n, pmcp__imp_value *v)
{
  const char *s = (const char *)n->data.scalar.value;
  size_t len = n->data.scalar.length;
  if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
    type_plain(s, len, v);
    return;
  }
  memset(v, 0, sizeof *v);
  v->type = PMCP__IV_STR;
  v->s = s;
}

static int is_merge_key(const yaml_node_t *k)
{
  return k && k->type == YAML_SCALAR_NODE &&
         k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
         k->data.scalar.length == 2 && memcmp(k->data.scalar.value, "<<", 2) == 0;
}

static int json_node(walker *w, pmcp_buf *out, const yaml_node_t *n, int depth);

/* A mapping's pairs in order, those of "<<" merges first-wins after the
 * mapping's own keys (YAML 1.1's merge key), calling @p each per pair. */
typedef int (*pair_fn)(walker *w, void *ctx, const yaml_node_t *k, const yaml_node_t *v,
                       int depth);

static int has_own_key(walker *w, const yaml_node_t *m, const yaml_node_t *key)
{
  for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
    const yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
    if (k && k->type == YAML_SCALAR_NODE && !is_merge_key(k) &&
        k->data.scalar.length == key->data.scalar.length &&
        memcmp(k->data.scalar.value, key->data.scalar.value, k->data.scalar.length) == 0)
      return 1;
  }
  return 0;
}

static int each_pair(walker *w, const yaml_node_t *m, const yaml_node_t *top, pair_fn each,
                     void *ctx, int depth)
{
  int rc = visit(w, m, depth);
  if (rc)
    return rc;
  for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
    const yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
    const yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
    if (!k || !v)
      return werr(w, m, "broken YAML document");
    if (is_merge_key(k))
      continue;
    if (k->type != YAML_SCALAR_NODE)
      return werr(w, k, "unsupported YAML (a key that is not a scalar)");
    if (m != top && has_own_key(w, top, k))
      continue; /* a merged key the mapping sets itself */
    if ((rc = each(w, ctx, k, v, depth)))
      return rc;
  }
  for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
    const yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
    const yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
    if (!is_merge_key(k))
      continue;
    if (v->type == YAML_MAPPING_NODE) {
      rc = each_pair(w, v, top, each, ctx, depth + 1);
    } else if (v->type == YAML_SEQUENCE_NODE) {
      for (yaml_node_item_t *it = v->data.sequence.items.start;
           !rc && it < v->data.sequence.items.top; it++) {
        const yaml_node_t *src = yaml_document_get_node(w->doc, *it);
        if (!src || src->type != YAML_MAPPING_NODE)
          return werr(w, v, "a merge key (<<) takes a mapping or a list of them");
        rc = each_pair(w, src, top, each, ctx, depth + 1);
      }
    } else {
      return werr(w, v, "a merge key (<<) takes a mapping or a list of them");
    }
    if (rc)
      return rc;
  }
  return 0;
}

typedef struct jctx {
  pmcp_buf *out;
  int n;
} jctx;

static int json_pair(walker *w, void *ctx, const yaml_node_t *k, const yaml_node_t *v, int depth)
{
  jctx *j = ctx;
  if ((j->n++ && pmcp__buf_putc(j->out, ',')) ||
      pmcp__buf_json_string(j->out, (const char *)k->data.scalar.value, k->data.scalar.length) ||
      pmcp__buf_putc(j->out, ':'))
    return PMCP_ENOMEM;
  return json_node(w, j->out, v, depth + 1);
}

static int json_scalar(pmcp_buf *out, const pmcp__imp_value *v, size_t len)
{
  switch (v->type) {
  case PMCP__IV_NULL: return pmcp__buf_puts(out, "null");
  case PMCP__IV_BOOL: return pmcp__buf_puts(out, v->i ? "true" : "false");
  case PMCP__IV_INT: return pmcp__buf_printf(out, "%lld", (long long)v->i);
  case PMCP__IV_FLOAT:
    if (!isfinite(v->f)) /* JSON has no NaN / Infinity: keep YAML's text */
      return pmcp__buf_json_string(out, v->s, len);
    {
      /* the shortest text that reads back as the same double */
      char tmp[40];
      for (int prec = 15; prec <= 17; prec++) {
        pmcp__c_snprintf(tmp, sizeof tmp, "%.*g", prec, v->f);
        if (pmcp__c_strtod(tmp, NULL) == v->f)
          break;
      }
      return pmcp__buf_puts(out, tmp);
    }
  default:
    return pmcp__buf_json_string(out, v->s, len);
  }
}

/* Any node as JSON text appended to @p out. */
static int json_node(walker *w, pmcp_buf *out, const yaml_node_t *n, int depth)
{
  int rc = visit(w, n, depth);
  if (rc)
    return rc;
  switch (n->type) {
  case YAML_SCALAR_NODE: {
    pmcp__imp_value v;
    scalar_value(n, &v);
    return json_scalar(out, &v, n->data.scalar.length) ? PMCP_ENOMEM : 0;
  }
  case YAML_SEQUENCE_NODE:
    if (pmcp__buf_putc(out, '['))
      return PMCP_ENOMEM;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
      const yaml_node_t *c = yaml_document_get_node(w->doc, *it);
      if (!c)
        return werr(w, n, "broken YAML document");
      if (it > n->data.sequence.items.start && pmcp__buf_putc(out, ','))
        return PMCP_ENOMEM;
      if ((rc = json_node(w, out, c, depth + 1)))
        return rc;
    }
    return pmcp__buf_putc(out, ']') ? PMCP_ENOMEM : 0;
  case YAML_MAPPING_NODE: {
    if (pmcp__buf_putc(out, '{'))
      return PMCP_ENOMEM;
    jctx j = {out, 0};
    if ((rc = each_pair(w, n, n, json_pair, &j, depth)))
      return rc;
    return pmcp__buf_putc(out, '}') ? PMCP_ENOMEM : 0;
  }
  default:
    return werr(w, n, "broken YAML document");
  }
}

static int emit(walker *w, const pmcp__imp_value *v, const yaml_node_t *n)
{
  return w->fn(w->ud, w->path.ptr ? w->path.ptr : "", v, (int)n->start_mark.line + 1);
}

static int map_pair(walker *w, void *ctx, const yaml_node_t *k, const yaml_node_t *v, int depth)
{
  (void)ctx;
  size_t keep = w->path.len;
  if ((keep && pmcp__buf_putc(&w->path, '/')) ||
      pmcp__buf_append(&w->path, k->data.scalar.value, k->data.scalar.length))
    return PMCP_ENOMEM;
  int rc;
  if (v->type == YAML_MAPPING_NODE && v->data.mapping.pairs.top > v->data.mapping.pairs.start) {
    rc = each_pair(w, v, v, map_pair, NULL, depth + 1);
  } else if (v->type == YAML_SCALAR_NODE) {
    pmcp__imp_value iv;
    scalar_value(v, &iv);
    rc = emit(w, &iv, v);
  } else {
    /* a sequence or an empty mapping: one value, its JSON text */
    pmcp__buf_reset(&w->text);
    rc = json_node(w, &w->text, v, depth + 1);
    if (rc == 0) {
      pmcp__imp_value iv = {PMCP__IV_JSON, w->text.ptr ? w->text.ptr : "", 0, 0};
      rc = emit(w, &iv, v);
    }
  }
  w->path.len = keep;
  if (w->path.ptr)
    w->path.ptr[keep] = '\0';
  return rc;
}

static int parse_error(const yaml_parser_t *p, int *err_line, const char **why)
{
  if (p->error == YAML_MEMORY_ERROR)
    return PMCP_ENOMEM;
  *err_line = (int)p->problem_mark.line + 1;
  *why = p->problem ? p->problem : "malformed YAML";
  return PMCP_EPARSE;
}

int pmcp__yaml_parse(const char *buf, size_t len, pmcp__yaml_fn fn, void *ud,
                     int *err_line, const char **why)
{
  if (memchr(buf, '\0', len)) {
    const char *z = memchr(buf, '\0', len);
    int line = 1;
    for (const char *c = buf; c < z; c++)
      line += *c == '\n';
    *err_line = line;
    *why = "NUL byte";
    return PMCP_EPARSE;
  }
  yaml_parser_t p;
  if (!yaml_parser_initialize(&p))
    return PMCP_ENOMEM;
  yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
  yaml_document_t doc;
  int rc = 0;
  if (!yaml_parser_load(&p, &doc)) {
    rc = parse_error(&p, err_line, why);
    yaml_parser_delete(&p);
    return rc;
  }
  walker w;
  memset(&w, 0, sizeof w);
  w.doc = &doc;
  w.fn = fn;
  w.ud = ud;
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (!root) {
    rc = 0; /* an empty document: nothing to read */
  } else if (root->type == YAML_MAPPING_NODE) {
    rc = each_pair(&w, root, root, map_pair, NULL, 0);
  } else if (root->type == YAML_SEQUENCE_NODE) {
    rc = werr(&w, root, "unsupported YAML (a sequence where keys were expected)");
  } else if (root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
             root->data.scalar.length == 0) {
    rc = 0;
  } else {
    rc = werr(&w, root, "expected 'key: value'");
  }
  if (rc == 0 && root) {
    /* One document per file: a second one is refused, not ignored. */
    yaml_document_t next;
    if (!yaml_parser_load(&p, &next)) {
      rc = parse_error(&p, err_line, why);
    } else {
      yaml_node_t *r2 = yaml_document_get_root_node(&next);
      if (r2) {
        w.err_line = (int)next.start_mark.line + 1;
        w.why = "unsupported YAML (several documents)";
        rc = PMCP_EPARSE;
      }
      yaml_document_delete(&next);
    }
  }
  if (rc == PMCP_EPARSE && w.why) {
    *err_line = w.err_line;
    *why = w.why;
  }
  yaml_document_delete(&doc);
  yaml_parser_delete(&p);
  pmcp_buf_dispose(&w.path);
  pmcp_buf_dispose(&w.text);
  return rc;
}
