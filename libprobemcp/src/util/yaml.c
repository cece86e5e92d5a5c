#include "util/yaml.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probemcp/error.h"
#include "util/buf.h"

#define MAX_DEPTH 32

typedef struct line {
  const char *s; /* content after the indentation */
  size_t len;    /* without the line end */
  int indent;
  int no;        /* 1-based */
  int blank;     /* empty or comment only */
} line;

typedef struct parser {
  const char *buf, *end, *pos;
  int lineno;
  line cur;
  int have; /* cur holds an unconsumed line */
  pmcp__yaml_fn fn;
  void *ud;
  int err_line;
  const char *why;
  pmcp_buf path, text, json;
} parser;

static int perr(parser *p, int lineno, const char *why)
{
  p->err_line = lineno;
  p->why = why;
  return PMCP_EPARSE;
}

/* Reads the next physical line into p->cur. 0 at end of input, 1 else,
 * negative on a tab in the indentation. */
static int next_line(parser *p)
{
  if (p->have)
    return 1;
  if (p->pos >= p->end)
    return 0;
  const char *s = p->pos;
  const char *nl = memchr(s, '\n', (size_t)(p->end - s));
  const char *e = nl ? nl : p->end;
  p->pos = nl ? nl + 1 : p->end;
  p->lineno++;
  if (e > s && e[-1] == '\r')
    e--;
  int ind = 0;
  while (s + ind < e && s[ind] == ' ')
    ind++;
  line *l = &p->cur;
  l->s = s + ind;
  l->len = (size_t)(e - l->s);
  l->indent = ind;
  l->no = p->lineno;
  l->blank = l->len == 0 || l->s[0] == '#';
  if (!l->blank && l->s[0] == '\t')
    return perr(p, l->no, "tab in indentation");
  /* trailing spaces */
  while (l->len && (l->s[l->len - 1] == ' ' || l->s[l->len - 1] == '\t'))
    l->len--;
  if (l->len == 0)
    l->blank = 1;
  for (size_t i = 0; i < l->len; i++)
    if (l->s[i] == '\0')
      return perr(p, l->no, "NUL byte");
  p->have = 1;
  return 1;
}

/* Next non-blank line, or 0 at end. */
static int peek(parser *p)
{
  for (;;) {
    int rc = next_line(p);
    if (rc <= 0)
      return rc;
    if (!p->cur.blank)
      return 1;
    p->have = 0;
  }
}

/* Where a plain scalar ends: at " #" (a comment). */
static size_t plain_len(const char *s, size_t len)
{
  for (size_t i = 0; i < len; i++)
    if (s[i] == '#' && i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t')) {
      while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t'))
        i--;
      return i;
    }
  return len;
}

static int hexval(char c)
{
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int put_utf8(pmcp_buf *b, unsigned long c)
{
  char u[4];
  size_t n;
  if (c < 0x80) { u[0] = (char)c; n = 1; }
  else if (c < 0x800) { u[0] = (char)(0xC0 | (c >> 6)); u[1] = (char)(0x80 | (c & 0x3F)); n = 2; }
  else if (c < 0x10000) { u[0] = (char)(0xE0 | (c >> 12)); u[1] = (char)(0x80 | ((c >> 6) & 0x3F)); u[2] = (char)(0x80 | (c & 0x3F)); n = 3; }
  else { u[0] = (char)(0xF0 | (c >> 18)); u[1] = (char)(0x80 | ((c >> 12) & 0x3F)); u[2] = (char)(0x80 | ((c >> 6) & 0x3F)); u[3] = (char)(0x80 | (c & 0x3F)); n = 4; }
  return pmcp__buf_append(b, u, n);
}

/* Decodes a quoted scalar starting at s[0] (the quote) into p->text.
 * *used gets the bytes consumed including the closing quote; -1 if the
 * closing quote is missing; PMCP_EPARSE for a bad escape. */
static int unquote(parser *p, const char *s, size_t len, size_t *used,
                   int lineno)
{
  char q = s[0];
  pmcp__buf_reset(&p->text);
  size_t i = 1;
  while (i < len) {
    char c = s[i];
    if (c == q) {
      if (q == '\'' && i + 1 < len && s[i + 1] == '\'') {
        if (pmcp__buf_putc(&p->text, '\''))
          return PMCP_ENOMEM;
        i += 2;
        continue;
      }
      *used = i + 1;
      return 0;
    }
    if (q == '"' && c == '\\') {
      if (i + 1 >= len)
        return perr(p, lineno, "bad escape in a double-quoted string");
      char e = s[++i];
      unsigned long cp = 0;
      int nhex = 0;
      switch (e) {
      case 'n': cp = '\n'; break;
      case 't': case '\t': cp = '\t'; break;
      case 'r': cp = '\r'; break;
      case '0': cp = 0; break;
      case '"': cp = '"'; break;
      case '\\': cp = '\\'; break;
      case '/': cp = '/'; break;
      case ' ': cp = ' '; break;
      case 'x': nhex = 2; break;
      case 'u': nhex = 4; break;
      case 'U': nhex = 8; break;
      default:
        return perr(p, lineno, "bad escape in a double-quoted string");
      }
      for (int k = 0; k < nhex; k++) {
        int h = i + 1 < len ? hexval(s[i + 1]) : -1;
        if (h < 0)
          return perr(p, lineno, "bad escape in a double-quoted string");
        cp = cp * 16 + (unsigned long)h;
        i++;
      }
      if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return perr(p, lineno, "unsupported character escape");
      if (put_utf8(&p->text, cp))
        return PMCP_ENOMEM;
      i++;
      continue;
    }
    if (pmcp__buf_putc(&p->text, c))
      return PMCP_ENOMEM;
    i++;
  }
  return -1;
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

static int emit(parser *p, const pmcp__imp_value *v, int lineno)
{
  int rc = p->fn(p->ud, p->path.ptr ? p->path.ptr : "", v, lineno);
  return rc;
}

static int unsupported_start(char c)
{
  return c == '&' || c == '*' || c == '!' || c == '|' || c == '>' ||
         c == '%' || c == '@' || c == '`' || c == '?';
}

/* Appends one scalar item to the JSON array in p->json. */
static int json_item(parser *p, const pmcp__imp_value *v)
{
  if (p->json.len > 1 && pmcp__buf_putc(&p->json, ','))
    return PMCP_ENOMEM;
  switch (v->type) {
  case PMCP__IV_NULL: return pmcp__buf_puts(&p->json, "null");
  case PMCP__IV_BOOL: return pmcp__buf_puts(&p->json, v->i ? "true" : "false");
  case PMCP__IV_INT: return pmcp__buf_printf(&p->json, "%lld", (long long)v->i);
  case PMCP__IV_FLOAT:
    if (!isfinite(v->f)) /* JSON has no NaN / Infinity: keep YAML's text */
      return pmcp__buf_json_string(&p->json, isnan(v->f) ? ".nan" : v->f > 0 ? ".inf" : "-.inf",
                                   isnan(v->f) ? 4 : v->f > 0 ? 4 : 5);
  {
    /* the shortest text that reads back as the same double */
    char tmp[40];
    for (int prec = 15; prec <= 17; prec++) {
      snprintf(tmp, sizeof tmp, "%.*g", prec, v->f);
      if (strtod(tmp, NULL) == v->f)
        break;
    }
    return pmcp__buf_puts(&p->json, tmp);
  }
  default:
    return pmcp__buf_json_string(&p->json, v->s, strlen(v->s));
  }
}

/* Parses the scalar s[0..len) (single line) into v, using p->text for
 * string storage. */
static int scalar(parser *p, const char *s, size_t len, pmcp__imp_value *v,
                  int lineno)
{
  if (len && (s[0] == '\'' || s[0] == '"')) {
    size_t used = 0;
    int rc = unquote(p, s, len, &used, lineno);
    if (rc == -1)
      return perr(p, lineno, "unterminated quoted string");
    if (rc)
      return rc;
    size_t rest = used;
    while (rest < len && (s[rest] == ' ' || s[rest] == '\t'))
      rest++;
    if (rest < len && s[rest] != '#')
      return perr(p, lineno, "text after a quoted string");
    memset(v, 0, sizeof *v);
    v->type = PMCP__IV_STR;
    v->s = p->text.ptr ? p->text.ptr : "";
    return 0;
  }
  if (len && unsupported_start(s[0]))
    return perr(p, lineno,
                "unsupported YAML (anchors, aliases, tags, block scalars)");
  if (len && (s[0] == '{' || s[0] == '['))
    return perr(p, lineno, "unsupported YAML flow collection");
  if (len >= 2 && s[0] == '-' && s[1] == ' ')
    return perr(p, lineno, "unsupported YAML (sequence as a value)");
  size_t n = plain_len(s, len);
  pmcp__buf_reset(&p->text);
  if (pmcp__buf_append(&p->text, s, n))
    return PMCP_ENOMEM;
  type_plain(p->text.ptr, n, v);
  v->s = p->text.ptr;
  return 0;
}

/* A flow sequence "[a, b, 'c']" of scalars on one line, into p->json. */
static int flow_seq(parser *p, const char *s, size_t len, int lineno)
{
  size_t n = plain_len(s, len);
  while (n && s[n - 1] == ' ')
    n--;
  if (n < 2 || s[n - 1] != ']')
    return perr(p, lineno, "unsupported YAML flow sequence");
  pmcp__buf_reset(&p->json);
  if (pmcp__buf_putc(&p->json, '['))
    return PMCP_ENOMEM;
  size_t i = 1, end = n - 1;
  while (i < end) {
    while (i < end && s[i] == ' ')
      i++;
    if (i >= end)
      break;
    size_t j = i;
    if (s[i] == '\'' || s[i] == '"') {
      size_t used = 0;
      int rc = unquote(p, s + i, end - i, &used, lineno);
      if (rc == -1)
        return perr(p, lineno, "unterminated quoted string");
      if (rc)
        return rc;
      pmcp__imp_value v = {PMCP__IV_STR, p->text.ptr ? p->text.ptr : "", 0, 0};
      if ((rc = json_item(p, &v)))
        return rc;
      j = i + used;
    } else {
      while (j < end && s[j] != ',')
        j++;
      size_t k = j;
      while (k > i && s[k - 1] == ' ')
        k--;
      const char *t = s + i;
      if (k == i || unsupported_start(*t) || *t == '[' || *t == '{' ||
          memchr(t, ':', k - i))
        return perr(p, lineno, "unsupported YAML flow sequence");
      pmcp__buf_reset(&p->text);
      if (pmcp__buf_append(&p->text, t, k - i))
        return PMCP_ENOMEM;
      pmcp__imp_value v;
      type_plain(p->text.ptr, k - i, &v);
      v.s = p->text.ptr;
      int rc = json_item(p, &v);
      if (rc)
        return rc;
    }
    while (j < end && s[j] == ' ')
      j++;
    if (j < end && s[j] != ',')
      return perr(p, lineno, "unsupported YAML flow sequence");
    i = j + 1;
  }
  return pmcp__buf_putc(&p->json, ']');
}

/* Finds "key:" at the start of a mapping line. Sets key (into p->text)
 * and the value part. 0, or PMCP_EPARSE. */
static int split_key(parser *p, const line *l, pmcp_buf *key,
                     const char **val, size_t *vlen)
{
  const char *s = l->s;
  size_t len = l->len, i;
  pmcp__buf_reset(key);
  if (s[0] == '\'' || s[0] == '"') {
    size_t used = 0;
    int rc = unquote(p, s, len, &used, l->no);
    if (rc == -1)
      return perr(p, l->no, "unterminated quoted key");
    if (rc)
      return rc;
    if (pmcp__buf_append(key, p->text.ptr ? p->text.ptr : "", p->text.len))
      return PMCP_ENOMEM;
    i = used;
    while (i < len && s[i] == ' ')
      i++;
    if (i >= len || s[i] != ':')
      return perr(p, l->no, "expected ':' after a key");
  } else {
    if (unsupported_start(s[0]) || s[0] == '{' || s[0] == '[')
      return perr(p, l->no,
                  "unsupported YAML (anchors, aliases, tags, flow keys)");
    for (i = 0; i < len; i++)
      if (s[i] == ':' && (i + 1 == len || s[i + 1] == ' ' || s[i + 1] == '\t'))
        break;
    if (i == len || (i > 0 && plain_len(s, i) < i))
      return perr(p, l->no, "expected 'key: value'");
    size_t k = i;
    while (k > 0 && s[k - 1] == ' ')
      k--;
    if (k == 0)
      return perr(p, l->no, "empty key");
    if (pmcp__buf_append(key, s, k))
      return PMCP_ENOMEM;
  }
  if (memchr(key->ptr ? key->ptr : "", '\0', key->len))
    return perr(p, l->no, "NUL in a key");
  i++; /* the ':' */
  while (i < len && (s[i] == ' ' || s[i] == '\t'))
    i++;
  *val = s + i;
  *vlen = len - i;
  if (*vlen && (*val)[0] == '#')
    *vlen = 0;
  return 0;
}

/* A value given on the key's line may continue on following lines that
 * are indented more than the key (folded: one space per line break, a
 * newline per blank line). Collects the whole value into @p acc. */
static int gather(parser *p, int key_indent, const char *v, size_t vlen,
                  pmcp_buf *acc)
{
  pmcp__buf_reset(acc);
  if (pmcp__buf_append(acc, v, vlen))
    return PMCP_ENOMEM;
  int quoted = vlen && (v[0] == '"' || v[0] == '\'');
  for (;;) {
    int rc = next_line(p);
    if (rc < 0)
      return rc;
    if (rc == 0)
      break;
    line *l = &p->cur;
    if (l->len == 0) { /* blank line inside a folded value */
      p->have = 0;
      if (pmcp__buf_putc(acc, '\n'))
        return PMCP_ENOMEM;
      continue;
    }
    if (!quoted && l->s[0] == '#')
      break;
    if (l->indent <= key_indent)
      break;
    p->have = 0;
    size_t n = quoted ? l->len : plain_len(l->s, l->len);
    if (acc->len && acc->ptr[acc->len - 1] != '\n' && pmcp__buf_putc(acc, ' '))
      return PMCP_ENOMEM;
    if (pmcp__buf_append(acc, l->s, n))
      return PMCP_ENOMEM;
    if (!quoted && n < l->len)
      break; /* a comment ends a plain scalar */
  }
  /* blank lines at the end belong to no value */
  while (acc->len && acc->ptr[acc->len - 1] == '\n')
    acc->ptr[--acc->len] = '\0';
  return 0;
}

/* A block sequence of scalars ("- x" lines at indent @p ind). */
static int block_seq(parser *p, int ind)
{
  pmcp__buf_reset(&p->json);
  if (pmcp__buf_putc(&p->json, '['))
    return PMCP_ENOMEM;
  int first = p->cur.no;
  for (;;) {
    int rc = peek(p);
    if (rc < 0)
      return rc;
    if (rc == 0)
      break;
    line *l = &p->cur;
    if (l->indent != ind || l->s[0] != '-' || (l->len > 1 && l->s[1] != ' '))
      break;
    p->have = 0;
    const char *s = l->s + 1;
    size_t n = l->len - 1;
    while (n && *s == ' ') {
      s++;
      n--;
    }
    if (n == 0)
      return perr(p, l->no, "unsupported YAML (nested sequence item)");
    size_t k;
    for (k = 0; k < n; k++)
      if (s[k] == ':' && (k + 1 == n || s[k + 1] == ' '))
        if (s[0] != '\'' && s[0] != '"')
          return perr(p, l->no, "unsupported YAML (sequence of mappings)");
    pmcp__imp_value v;
    if ((rc = scalar(p, s, n, &v, l->no)))
      return rc;
    if ((rc = json_item(p, &v)))
      return rc;
  }
  if (pmcp__buf_putc(&p->json, ']'))
    return PMCP_ENOMEM;
  pmcp__imp_value v = {PMCP__IV_JSON, p->json.ptr, 0, 0};
  return emit(p, &v, first);
}

/* A block mapping whose keys sit at indent @p ind; p->path is its prefix. */
static int mapping(parser *p, int ind, int depth)
{
  if (depth > MAX_DEPTH)
    return perr(p, p->cur.no, "YAML nested too deeply");
  pmcp_buf key = PMCP_BUF_INIT, acc = PMCP_BUF_INIT;
  size_t base = p->path.len;
  int rc = 0;
  for (;;) {
    rc = peek(p);
    if (rc <= 0)
      break;
    line *l = &p->cur;
    if (l->indent < ind)
      break;
    if (l->indent > ind) {
      rc = perr(p, l->no, "unexpected indentation");
      break;
    }
    if (l->len >= 3 && (memcmp(l->s, "---", 3) == 0 ||
                        memcmp(l->s, "...", 3) == 0) &&
        (l->len == 3 || l->s[3] == ' ')) {
      rc = perr(p, l->no, "unsupported YAML (several documents)");
      break;
    }
    if (l->s[0] == '-' && (l->len == 1 || l->s[1] == ' ')) {
      rc = perr(p, l->no, "unsupported YAML (a sequence where keys were expected)");
      break;
    }
    int kline = l->no;
    const char *val;
    size_t vlen;
    if ((rc = split_key(p, l, &key, &val, &vlen)))
      break;
    p->path.len = base;
    if (p->path.ptr)
      p->path.ptr[base] = '\0';
    if ((base && (rc = pmcp__buf_putc(&p->path, '/'))) ||
        (rc = pmcp__buf_append(&p->path, key.ptr, key.len)))
      break;
    if (vlen == 0) {
      p->have = 0;
      rc = peek(p);
      if (rc < 0)
        break;
      line *n = &p->cur;
      if (rc == 1 && n->indent >= ind && n->s[0] == '-' &&
          (n->len == 1 || n->s[1] == ' ')) {
        rc = block_seq(p, n->indent);
      } else if (rc == 1 && n->indent > ind) {
        rc = mapping(p, n->indent, depth + 1);
      } else {
        pmcp__imp_value v = {PMCP__IV_NULL, NULL, 0, 0};
        rc = emit(p, &v, kline);
      }
      if (rc)
        break;
      continue;
    }
    if (val[0] == '[') {
      p->have = 0;
      if ((rc = flow_seq(p, val, vlen, kline)))
        break;
      pmcp__imp_value v = {PMCP__IV_JSON, p->json.ptr, 0, 0};
      if ((rc = emit(p, &v, kline)))
        break;
      continue;
    }
    if (val[0] == '{') {
      size_t n = plain_len(val, vlen);
      while (n && val[n - 1] == ' ')
        n--;
      int empty = n >= 2 && val[n - 1] == '}';
      for (size_t i = 1; empty && i + 1 < n; i++)
        empty = val[i] == ' ';
      if (!empty) {
        rc = perr(p, kline, "unsupported YAML flow mapping");
        break;
      }
      p->have = 0;
      pmcp__imp_value v = {PMCP__IV_JSON, "{}", 0, 0};
      if ((rc = emit(p, &v, kline)))
        break;
      continue;
    }
    p->have = 0;
    if ((rc = gather(p, ind, val, vlen, &acc)))
      break;
    pmcp__imp_value v;
    if ((rc = scalar(p, acc.ptr, acc.len, &v, kline)))
      break;
    if ((rc = emit(p, &v, kline)))
      break;
  }
  p->path.len = base;
  if (p->path.ptr)
    p->path.ptr[base] = '\0';
  pmcp_buf_dispose(&key);
  pmcp_buf_dispose(&acc);
  return rc < 0 ? rc : rc > 0 && rc != 1 ? rc : 0;
}

int pmcp__yaml_parse(const char *buf, size_t len, pmcp__yaml_fn fn, void *ud,
                     int *err_line, const char **why)
{
  parser p;
  memset(&p, 0, sizeof p);
  p.buf = p.pos = buf;
  p.end = buf + len;
  p.fn = fn;
  p.ud = ud;
  /* A UTF-8 byte order mark is allowed at the very start. */
  if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
    p.pos += 3;
  int rc = peek(&p);
  if (rc == 1 && p.cur.indent == 0 && p.cur.len >= 3 &&
      memcmp(p.cur.s, "---", 3) == 0 &&
      (p.cur.len == 3 || p.cur.s[3] == ' ' || p.cur.s[3] == '#')) {
    p.have = 0;
    rc = peek(&p);
  }
  if (rc == 1) {
    line *l = &p.cur;
    if (l->len >= 2 && l->s[0] == '{') { /* "{}": an empty document */
      size_t n = plain_len(l->s, l->len);
      int empty = n >= 2 && l->s[n - 1] == '}';
      for (size_t i = 1; empty && i + 1 < n; i++)
        empty = l->s[i] == ' ';
      if (!empty)
        rc = perr(&p, l->no, "unsupported YAML flow mapping");
      else
        p.have = 0;
    } else {
      rc = mapping(&p, l->indent, 0);
    }
    if (rc == 1)
      rc = 0;
    if (rc == 0) {
      rc = peek(&p);
      if (rc == 1) {
        l = &p.cur;
        if (l->len >= 3 && memcmp(l->s, "...", 3) == 0 && l->indent == 0) {
          rc = 0;
        } else {
          rc = perr(&p, l->no, "unexpected indentation");
        }
      }
    }
  }
  if (rc == PMCP_EPARSE) {
    *err_line = p.err_line;
    *why = p.why;
  }
  pmcp_buf_dispose(&p.path);
  pmcp_buf_dispose(&p.text);
  pmcp_buf_dispose(&p.json);
  return rc;
}
