/* SPDX-License-Identifier: MIT */
/* probe log's line parser (log_parse.h): a strict JSON reader (RFC 8259
 * grammar, nesting up to 512 levels) that fills a log_line directly. */
#include "log_parse.h"

#include "probemcp/json.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 512

typedef struct rd {
  char *p, *end, *start;
  char *why;
  size_t whyn;
  int oom;
  log_tmpl1 *t; /* numbers of scalar members are recorded as holes */
  int no_tmpl; /* the line has number arrays */
} rd;

static int bad(rd *r, const char *what)
{
  if (r->p >= r->end)
    snprintf(r->why, r->whyn, "the line ends where %s was expected", what);
  else
    snprintf(r->why, r->whyn, "byte %zu: %s expected", (size_t)(r->p - r->start) + 1, what);
  return -1;
}

static inline void ws(rd *r)
{
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\r' || *r->p == '\n'))
    r->p++;
}

/* A string at r->p (on its opening quote), decoded in place and
 * NUL-terminated (the decoded text is never longer than the escaped). */
static int str(rd *r, const char **out)
{
  assert(r->p < r->end && *r->p == '"');
  size_t used, n;
  const char *what;
  if (pmcp_json_string_decode(r->p, (size_t)(r->end - r->p), PMCP_JSON_NO_NUL, r->p + 1, &used,
                              &n, &what)) {
    r->p += used;
    return bad(r, what);
  }
  *out = r->p + 1;
  r->p += used;
  return 0;
}

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                               1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                               1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Eight ASCII digits at once (the SWAR conversion of fast_float). */
static inline uint64_t eight_digits(const char *p)
{
  uint64_t v;
  memcpy(&v, p, 8);
  v -= 0x3030303030303030ull;
  v = v * 10 + (v >> 8);
  v = (((v & 0x000000FF000000FFull) * 0x000F424000000064ull) +
       (((v >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >> 32;
  return v;
}

/* True when the eight bytes at @p p are all ASCII digits. */
static inline int is_eight_digits(const char *p)
{
  uint64_t v;
  memcpy(&v, p, 8);
  return ((v & 0xF0F0F0F0F0F0F0F0ull) |
          (((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) == 0x3333333333333333ull;
}

/* The digits from @p p on, read into *m (m * 10 + digit, wrapping past
 * 19 digits, when the caller does not use it); past them. */
static inline char *digits(char *p, const char *e, uint64_t *m)
{
  uint64_t v = *m;
  while (e - p >= 8 && is_eight_digits(p)) {
    v = v * 100000000 + eight_digits(p);
    p += 8;
  }
  while (p < e && (unsigned)(*p - '0') < 10)
    v = v * 10 + (uint64_t)(*p++ - '0');
  *m = v;
  return p;
}

/* The gap from positive finite @p d to its neighbour below and above. */
static double gap_min(double d)
{
  uint64_t b;
  memcpy(&b, &d, 8);
  uint64_t lo = b - 1, hi = b + 1;
  double dl, dh;
  memcpy(&dl, &lo, 8);
  memcpy(&dh, &hi, 8);
  double a = d - dl, c = dh - d;
  return a < c ? a : c;
}

/* m * 10^e10 (m < 2^64, |e10| <= 22, so 10^|e10| is exact) correctly
 * rounded, for mantissas of more than 53 bits (17-digit decimals): the
 * first rounding q and its exact residual (fma) give the rest c, and the
 * sum is kept only when its rounding residual plus a bound on the error
 * of c stays clear of half the gap to either neighbour, so it is the
 * correctly rounded value; else 0 (strtod decides). */
static int near_exact(uint64_t m, int e10, double *out)
{
  double mh = (double)m;
  if (mh >= 18446744073709551616.0)
    return 0;
  double ml = (double)(int64_t)(m - (uint64_t)mh); /* exact: |ml| <= 2^11 */
  double p = POW10[e10 < 0 ? -e10 : e10], q, c;
  if (e10 < 0) {
    q = mh / p;
    c = (fma(-q, p, mh) + ml) / p;
  } else {
    q = mh * p;
    c = fma(mh, p, -q) + ml * p;
  }
  if (!isfinite(q) || q < 2.2250738585072014e-292) /* no subnormal margins */
    return 0;
  double sum = q + c;
  double e = c - (sum - q); /* Fast2Sum: |q| >= |c| */
  double err = fabs(c) * 0x1p-49 + fabs(q) * 0x1p-104;
  if (fabs(e) + err >= gap_min(sum) / 2)
    return 0;
  *out = sum;
  return 1;
}

/* A number (JSON grammar). Converted exactly: with at most 19 digits, a
 * mantissa below 2^53 and a power of ten within 10^+-22, one IEEE
 * multiply or divide is correctly rounded (both operands are exact);
 * anything else goes to strtod (the CLI runs in the C locale). */
static int num(rd *r, double *out)
{
  char *s = r->p, *p = s, *e = r->end;
  int neg = p < e && *p == '-';
  p += neg;
  char *ib = p;
  uint64_t m = 0;
  if (p < e && *p == '0')
    p++;
  else
    p = digits(p, e, &m);
  if (p == ib) {
    r->p = p;
    return bad(r, "a digit");
  }
  char *ie = p, *fb = p, *fe = p;
  if (p < e && *p == '.') {
    fb = ++p;
    p = fe = digits(p, e, &m);
    if (fe == fb) {
      r->p = p;
      return bad(r, "a digit after the decimal point");
    }
  }
  int e10 = 0;
  if (p < e && (*p == 'e' || *p == 'E')) {
    p++;
    int eneg = 0;
    if (p < e && (*p == '+' || *p == '-'))
      eneg = *p++ == '-';
    if (p >= e || (unsigned)(*p - '0') >= 10) {
      r->p = p;
      return bad(r, "a digit in the exponent");
    }
    while (p < e && (unsigned)(*p - '0') < 10) {
      if (e10 < 100000)
        e10 = e10 * 10 + (*p - '0');
      p++;
    }
    if (eneg)
      e10 = -e10;
  }
  r->p = p;
  if (!out)
    return 0;
  if ((ie - ib) + (fe - fb) <= 19) {
    e10 -= (int)(fe - fb);
    if (m < (1ull << 53) && e10 >= -22 && e10 <= 22) {
      double v = (double)m;
      v = e10 < 0 ? v / POW10[-e10] : v * POW10[e10];
      *out = neg ? -v : v;
      return 0;
    }
    double v;
    if (m && e10 >= -22 && e10 <= 22 && near_exact(m, e10, &v)) {
      *out = neg ? -v : v;
      return 0;
    }
  }
  char tmp[64], *buf = tmp;
  size_t n = (size_t)(p - s);
  if (n >= sizeof tmp && !(buf = malloc(n + 1))) {
    r->oom = 1;
    return -1;
  }
  memcpy(buf, s, n);
  buf[n] = '\0';
  *out = strtod(buf, NULL);
  if (buf != tmp)
    free(buf);
  return 0;
}

static int lit(rd *r, const char *word, size_t n)
{
  if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n))
    return bad(r, "a value (object, array, string, number, true, false, null)");
  r->p += n;
  return 0;
}

/* Any value, checked and skipped; its type in @p t. */
static int skip(rd *r, int depth, lj_type *t)
{
  if (depth > MAX_DEPTH)
    return bad(r, "less nesting (at most 512 levels)");
  ws(r);
  if (r->p >= r->end)
    return bad(r, "a value");
  const char *s;
  switch (*r->p) {
  case '"':
    *t = LJ_STRING;
    return str(r, &s);
  case 't':
    *t = LJ_BOOL;
    return lit(r, "true", 4);
  case 'f':
    *t = LJ_BOOL;
    return lit(r, "false", 5);
  case 'n':
    *t = LJ_NULL;
    return lit(r, "null", 4);
  case '[':
  case '{': {
    int obj = *r->p == '{';
    char close = obj ? '}' : ']';
    *t = obj ? LJ_OBJECT : LJ_ARRAY;
    r->p++;
    ws(r);
    if (r->p < r->end && *r->p == close) {
      r->p++;
      return 0;
    }
    for (;;) {
      lj_type it;
      ws(r);
      if (obj) {
        if (r->p >= r->end || *r->p != '"')
          return bad(r, "a member name in quotes");
        if (str(r, &s))
          return -1;
        ws(r);
        if (r->p >= r->end || *r->p != ':')
          return bad(r, "':'");
        r->p++;
      }
      if (skip(r, depth + 1, &it))
        return -1;
      ws(r);
      if (r->p < r->end && *r->p == ',') {
        r->p++;
        continue;
      }
      if (r->p < r->end && *r->p == close) {
        r->p++;
        return 0;
      }
      return bad(r, obj ? "',' or '}'" : "',' or ']'");
    }
  }
  default:
    if (*r->p != '-' && (*r->p < '0' || *r->p > '9'))
      return bad(r, "a value (object, array, string, number, true, false, null)");
    *t = LJ_NUMBER;
    return num(r, NULL);
  }
}

/* One value into @p t / @p n / @p s: a number is converted, a string
 * decoded, anything else checked and skipped. */
static int hole(rd *r, size_t at, size_t dst)
{
  log_tmpl1 *t = r->t;
  if (t->n == t->cap_h) {
    size_t cap = t->cap_h ? t->cap_h * 2 : 16;
    log_hole *nh = realloc(t->h, cap * sizeof *nh);
    if (!nh) {
      r->oom = 1;
      return -1;
    }
    t->h = nh;
    t->cap_h = cap;
  }
  t->h[t->n++] = (log_hole){at, (size_t)(r->p - r->start), dst};
  return 0;
}

/* @p dst: where a number goes in a template (SIZE_MAX: not recorded). */
static int scalar(rd *r, lj_type *t, double *n, const char **s, size_t dst)
{
  ws(r);
  if (r->p < r->end && *r->p == '"') {
    *t = LJ_STRING;
    return str(r, s);
  }
  if (r->p < r->end && (*r->p == '-' || (*r->p >= '0' && *r->p <= '9'))) {
    *t = LJ_NUMBER;
    size_t at = (size_t)(r->p - r->start);
    if (num(r, n))
      return -1;
    return dst == SIZE_MAX ? 0 : hole(r, at, dst);
  }
  return skip(r, 1, t);
}

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
  if (need <= *cap)
    return 0;
  size_t c = *cap ? *cap * 2 : 16;
  while (c < need)
    c *= 2;
  void *nv = realloc(*v, c * size);
  if (!nv)
    return -1;
  *v = nv;
  *cap = c;
  return 0;
}

/* An object of scalars (labels, values) into @p kv; another type is only
 * recorded in @p t. */
static int kv_object(rd *r, lj_type *t, log_kv **kv, size_t *n, size_t *cap, size_t vdst)
{
  ws(r);
  if (r->p >= r->end || *r->p != '{')
    return skip(r, 1, t);
  *t = LJ_OBJECT;
  r->p++;
  ws(r);
  if (r->p < r->end && *r->p == '}') {
    r->p++;
    return 0;
  }
  for (;;) {
    ws(r);
    if (r->p >= r->end || *r->p != '"')
      return bad(r, "a member name in quotes");
    if (grow((void **)kv, cap, *n + 1, sizeof **kv)) {
      r->oom = 1;
      return -1;
    }
    log_kv *e = &(*kv)[*n];
    if (str(r, &e->name))
      return -1;
    ws(r);
    if (r->p >= r->end || *r->p != ':')
      return bad(r, "':'");
    r->p++;
    e->str = NULL;
    e->num = 0;
    if (scalar(r, &e->type, &e->num, &e->str, vdst == SIZE_MAX ? SIZE_MAX : vdst + *n))
      return -1;
    (*n)++;
    ws(r);
    if (r->p < r->end && *r->p == ',') {
      r->p++;
      continue;
    }
    if (r->p < r->end && *r->p == '}') {
      r->p++;
      return 0;
    }
    return bad(r, "',' or '}'");
  }
}

/* An array of numbers into @p a; another type only recorded. */
static int num_array(rd *r, log_arr *a)
{
  ws(r);
  a->n = 0;
  a->all_numbers = 1;
  if (r->p >= r->end || *r->p != '[')
    return skip(r, 1, &a->type);
  a->type = LJ_ARRAY;
  r->no_tmpl = 1;
  r->p++;
  ws(r);
  if (r->p < r->end && *r->p == ']') {
    r->p++;
    return 0;
  }
  for (;;) {
    lj_type t;
    double v = 0;
    const char *s;
    if (scalar(r, &t, &v, &s, SIZE_MAX))
      return -1;
    if (t != LJ_NUMBER) {
      a->all_numbers = 0;
    } else {
      if (grow((void **)&a->v, &a->cap, a->n + 1, sizeof *a->v)) {
        r->oom = 1;
        return -1;
      }
      a->v[a->n++] = v;
    }
    ws(r);
    if (r->p < r->end && *r->p == ',') {
      r->p++;
      continue;
    }
    if (r->p < r->end && *r->p == ']') {
      r->p++;
      return 0;
    }
    return bad(r, "',' or ']'");
  }
}

static int member(rd *r, const char *name, log_line *l)
{
  const char *s = NULL;
  lj_type t;
  double d;
  /* the first occurrence of a member counts; a repeat is only checked */
#define ONCE(field) (l->field == LJ_ABSENT)
  switch (name[0]) {
  case 'k':
    if (!strcmp(name, "key") && ONCE(key_t))
      return scalar(r, &l->key_t, &d, &l->key, SIZE_MAX);
    if (!strcmp(name, "kind") && ONCE(kind_t))
      return scalar(r, &l->kind_t, &d, &l->kind, SIZE_MAX);
    break;
  case 's':
    if (!strcmp(name, "step") && ONCE(step_t))
      return scalar(r, &l->step_t, &l->step, &s, 0);
    if (!strcmp(name, "scale") && ONCE(scale_t))
      return scalar(r, &l->scale_t, &d, &l->scale, SIZE_MAX);
    break;
  case 'v':
    if (!strcmp(name, "value") && ONCE(value_t))
      return scalar(r, &l->value_t, &l->value, &l->value_str, 2);
    if (!strcmp(name, "values") && ONCE(values_t))
      return kv_object(r, &l->values_t, &l->values, &l->n_values, &l->cap_values, 3);
    break;
  case 't':
    if (!strcmp(name, "time") && ONCE(time_t))
      return scalar(r, &l->time_t, &l->time_num, &l->time_str, 1);
    break;
  case 'l':
    if (!strcmp(name, "labels") && ONCE(labels_t))
      return kv_object(r, &l->labels_t, &l->labels, &l->n_labels, &l->cap_labels, SIZE_MAX);
    break;
  case 'e':
    if (!strcmp(name, "edges") && l->arr[LA_EDGES].type == LJ_ABSENT)
      return num_array(r, &l->arr[LA_EDGES]);
    break;
  case 'c':
    if (!strcmp(name, "counts") && l->arr[LA_COUNTS].type == LJ_ABSENT)
      return num_array(r, &l->arr[LA_COUNTS]);
    break;
  case 'x':
    if (!name[1] && l->arr[LA_X].type == LJ_ABSENT)
      return num_array(r, &l->arr[LA_X]);
    break;
  case 'y':
    if (!name[1] && l->arr[LA_Y].type == LJ_ABSENT)
      return num_array(r, &l->arr[LA_Y]);
    break;
  }
#undef ONCE
  return skip(r, 1, &t);
}

static double *hole_dst(log_line *l, size_t dst)
{
  return dst == 0 ? &l->step : dst == 1 ? &l->time_num : dst == 2 ? &l->value
                                                              : &l->values[dst - 3].num;
}

/* Copies the members of @p from into @p to (arrays grown as needed). */
static int line_copy(log_line *to, const log_line *from)
{
  log_kv *lab = to->labels, *val = to->values;
  size_t cl = to->cap_labels, cv = to->cap_values;
  if (grow((void **)&lab, &cl, from->n_labels, sizeof *lab))
    return -1;
  to->labels = lab;
  to->cap_labels = cl;
  if (grow((void **)&val, &cv, from->n_values, sizeof *val))
    return -1;
  to->values = val;
  to->cap_values = cv;
  log_arr arr[LA_N];
  memcpy(arr, to->arr, sizeof arr);
  log_line keep = *to;
  *to = *from;
  to->labels = keep.labels;
  to->values = keep.values;
  to->cap_labels = keep.cap_labels;
  to->cap_values = keep.cap_values;
  memcpy(to->arr, arr, sizeof arr);
  if (from->n_labels)
    memcpy(to->labels, from->labels, from->n_labels * sizeof *lab);
  if (from->n_values)
    memcpy(to->values, from->values, from->n_values * sizeof *val);
  return 0;
}

/* The line as template @p t's object with other numbers: 1, else 0 (the
 * line is then parsed, which names any problem). */
static int from_template(char *line, size_t len, log_line *l, const log_tmpl1 *t, int held)
{
  char *p = line, *e = line + len, why[8];
  size_t lit = 0;
  double v[64];
  if (t->n > 64)
    return 0;
  for (size_t i = 0; i < t->n; i++) {
    const log_hole *h = &t->h[i];
    size_t n = h->at - lit;
    if ((size_t)(e - p) < n || memcmp(p, t->raw + lit, n))
      return 0;
    p += n;
    rd r = {p, e, line, why, sizeof why, 0, NULL, 0};
    if (num(&r, &v[i]))
      return 0;
    p = r.p;
    lit = h->end;
  }
  if ((size_t)(e - p) != t->len - lit || memcmp(p, t->raw + lit, t->len - lit))
    return 0;
  if (!held && line_copy(l, t->saved))
    return 0;
  for (size_t i = 0; i < t->n; i++)
    *hole_dst(l, t->h[i].dst) = v[i];
  return 1;
}

/* Makes the line just parsed (@p line decoded, t->raw as read) the
 * template @p t: its strings move to the template's decoded copy, its
 * members are saved. */
static int keep_template(char *line, size_t len, log_line *l, log_tmpl1 *t)
{
  memcpy(t->dec, line, len);
  t->len = len;
#define MOVE(ptr)                                                                  \
  do {                                                                             \
    if ((ptr) && (ptr) >= line && (ptr) < line + len)                              \
      (ptr) = t->dec + ((ptr) - line);                                             \
  } while (0)
  MOVE(l->key);
  MOVE(l->kind);
  MOVE(l->scale);
  MOVE(l->time_str);
  MOVE(l->value_str);
  for (size_t i = 0; i < l->n_labels; i++) {
    MOVE(l->labels[i].name);
    MOVE(l->labels[i].str);
  }
  for (size_t i = 0; i < l->n_values; i++) {
    MOVE(l->values[i].name);
    MOVE(l->values[i].str);
  }
#undef MOVE
  if (!t->saved && !(t->saved = calloc(1, sizeof *t->saved)))
    return -1;
  if (line_copy(t->saved, l))
    return -1;
  t->valid = 1;
  return 0;
}

int probe_log_parse(char *line, size_t len, log_line *l, log_tmpl *ts, char *why, size_t whyn)
{
  /* the template after the last one first (lines that cycle), then the
   * last, then the others */
  for (int k = 0, i = ts->last; k < ts->used; k++) {
    i = i + 1 < ts->used ? i + 1 : 0;
    if (ts->t[i].valid && from_template(line, len, l, &ts->t[i], l->tmpl == i)) {
      ts->last = i;
      l->tmpl = i;
      l->tmpl_new = 0;
      return 0;
    }
  }
  /* keep the raw bytes for a template of this line */
  int vi = ts->victim;
  log_tmpl1 *t = &ts->t[vi];
  t->valid = 0;
  t->n = 0;
  int can_tmpl = 1;
  if (len > t->cap) {
    char *nr = realloc(t->raw, len), *nd = nr ? realloc(t->dec, len) : NULL;
    if (nr)
      t->raw = nr;
    if (nd)
      t->dec = nd;
    if (nr && nd)
      t->cap = len;
    else
      can_tmpl = 0;
  }
  if (can_tmpl)
    memcpy(t->raw, line, len);
  rd r = {line, line + len, line, why, whyn, 0, t, 0};
  l->tmpl = -1;
  l->tmpl_new = 0;
  l->key = l->kind = l->scale = l->time_str = l->value_str = NULL;
  l->step_t = l->time_t = l->value_t = l->key_t = l->kind_t = l->scale_t = LJ_ABSENT;
  l->labels_t = l->values_t = LJ_ABSENT;
  l->n_labels = l->n_values = 0;
  for (int i = 0; i < LA_N; i++) {
    l->arr[i].type = LJ_ABSENT;
    l->arr[i].n = 0;
  }
  ws(&r);
  int rc = 0;
  if (r.p < r.end && *r.p == '{') {
    r.p++;
    ws(&r);
    if (r.p < r.end && *r.p == '}') {
      r.p++;
    } else {
      for (;;) {
        const char *name;
        ws(&r);
        if (r.p >= r.end || *r.p != '"') {
          rc = bad(&r, "a member name in quotes");
          break;
        }
        if ((rc = str(&r, &name)))
          break;
        ws(&r);
        if (r.p >= r.end || *r.p != ':') {
          rc = bad(&r, "':'");
          break;
        }
        r.p++;
        if ((rc = member(&r, name, l)))
          break;
        ws(&r);
        if (r.p < r.end && *r.p == ',') {
          r.p++;
          continue;
        }
        if (r.p < r.end && *r.p == '}') {
          r.p++;
          break;
        }
        rc = bad(&r, "',' or '}'");
        break;
      }
    }
  } else {
    lj_type t;
    rc = skip(&r, 1, &t);
    if (!rc) {
      ws(&r);
      if (r.p < r.end)
        return bad(&r, "the end of the line after one JSON value");
      return -2;
    }
  }
  if (r.oom)
    return -3;
  if (rc)
    return rc;
  ws(&r);
  if (r.p < r.end)
    return bad(&r, "the end of the line after the object");
  if (can_tmpl && !r.no_tmpl && t->n <= 64) {
    if (keep_template(line, len, l, t)) {
      t->valid = 0;
    } else {
      l->tmpl = vi;
      l->tmpl_new = 1;
      ts->last = vi;
      ts->victim = (vi + 1) % LOG_TMPLS;
      if (ts->used < LOG_TMPLS && vi == ts->used)
        ts->used++;
    }
  }
  return 0;
}

void probe_log_line_free(log_line *l, log_tmpl *ts)
{
  for (int i = 0; i < LOG_TMPLS; i++) {
    log_tmpl1 *t = &ts->t[i];
    free(t->raw);
    free(t->dec);
    free(t->h);
    if (t->saved) {
      free(t->saved->labels);
      free(t->saved->values);
      free(t->saved);
    }
  }
  memset(ts, 0, sizeof *ts);
  free(l->labels);
  free(l->values);
  for (int i = 0; i < LA_N; i++)
    free(l->arr[i].v);
  memset(l, 0, sizeof *l);
}
