/* SPDX-License-Identifier: MIT */
/* The filter language: parsing (every refusal named), evaluation over a
 * row read through callbacks, and sort keys. See filter.h. */
#include "filter/filter.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter/re.h"
#include "probemcp/error.h"
#include "util/isotime.h"

enum op {
  OP_EQ, OP_NE, OP_GT, OP_GTE, OP_LT, OP_LTE, OP_MATCHES, OP_CONTAINS,
  OP_CONTAINS_ANY, OP_CONTAINS_ALL, OP_IN, OP_NOT_IN, OP_EXISTS
};

static const char *const op_names[] = {
  "eq", "ne", "gt", "gte", "lt", "lte", "matches", "contains",
  "contains_any", "contains_all", "in", "not_in", "exists", NULL
};

static const char *const functions[] = {"last", "first", "min", "max", "avg", "count", NULL};

typedef struct cond {
  int is_series;
  enum op op;
  char *path;          /* attribute path or series key */
  char *function, *scale;
  cJSON *labels;
  cJSON *value;        /* a copy of "value" */
  int exists_want;     /* exists: the truth wanted */
  pmcp__re *re;        /* matches */
  struct cond *group;  /* any_of members (path NULL) */
  size_t n_group;
} cond;

struct pmcp__filter {
  cond *c;
  size_t n;
};

static void cond_dispose(cond *c)
{
  free(c->path);
  free(c->function);
  free(c->scale);
  cJSON_Delete(c->labels);
  cJSON_Delete(c->value);
  pmcp__re_free(c->re);
  for (size_t i = 0; i < c->n_group; i++)
    cond_dispose(&c->group[i]);
  free(c->group);
  memset(c, 0, sizeof *c);
}

void pmcp__filter_free(pmcp__filter *f)
{
  if (!f)
    return;
  for (size_t i = 0; i < f->n; i++)
    cond_dispose(&f->c[i]);
  free(f->c);
  free(f);
}

size_t pmcp__filter_count(const pmcp__filter *f)
{
  return f ? f->n : 0;
}

static int lookup(const char *const *names, const char *s)
{
  for (int i = 0; names[i]; i++)
    if (strcmp(names[i], s) == 0)
      return i;
  return -1;
}

static int is_scalar(const cJSON *v)
{
  return cJSON_IsString(v) || cJSON_IsNumber(v) || cJSON_IsBool(v);
}

static int all_strings(const cJSON *v)
{
  const cJSON *it;
  cJSON_ArrayForEach(it, v) if (!cJSON_IsString(it)) return 0;
  return 1;
}

static int all_scalars(const cJSON *v)
{
  const cJSON *it;
  cJSON_ArrayForEach(it, v) if (!is_scalar(it)) return 0;
  return 1;
}

#define FAIL(...)                                    \
  do {                                               \
    snprintf(err, errlen, __VA_ARGS__);              \
    return PMCP_EINVAL;                              \
  } while (0)

/* Parses one attribute or series condition; @p where names it ("condition
 * 2", "condition 1, any_of item 0") in messages. */
static int parse_leaf(const cJSON *j, const char *where, cond *c, char *err, size_t errlen)
{
  const cJSON *attr = cJSON_GetObjectItemCaseSensitive(j, "attr");
  const cJSON *series = cJSON_GetObjectItemCaseSensitive(j, "series");
  const cJSON *op = cJSON_GetObjectItemCaseSensitive(j, "op");
  const cJSON *value = cJSON_GetObjectItemCaseSensitive(j, "value");
  if (attr && series)
    FAIL("%s: give either \"attr\" or \"series\", not both", where);
  c->is_series = series != NULL;
  const cJSON *name = series ? series : attr;
  if (!cJSON_IsString(name) || !name->valuestring[0] || strlen(name->valuestring) > 256)
    FAIL("%s: \"%s\" must be a non-empty string of at most 256 characters", where,
         series ? "series" : "attr");
  const cJSON *k;
  cJSON_ArrayForEach(k, j)
  {
    static const char *const attr_keys[] = {"attr", "op", "value", NULL};
    static const char *const series_keys[] = {"series", "op", "value", "function",
                                              "scale", "labels", NULL};
    if (lookup(c->is_series ? series_keys : attr_keys, k->string) < 0)
      FAIL("%s: unknown key \"%s\" in %s condition", where, k->string,
           c->is_series ? "a series" : "an attribute");
  }
  if (!cJSON_IsString(op))
    FAIL("%s: \"op\" is required (one of eq, ne, gt, gte, lt, lte, matches, contains, "
         "contains_any, contains_all, in, not_in, exists)", where);
  int o = lookup(op_names, op->valuestring);
  if (o < 0)
    FAIL("%s: unknown op \"%.40s\"", where, op->valuestring);
  c->op = (enum op)o;
  c->path = strdup(name->valuestring);
  if (!c->path)
    return PMCP_ENOMEM;
  if (c->op == OP_EXISTS) {
    if (value && !cJSON_IsBool(value))
      FAIL("%s: \"value\" of exists must be true or false", where);
    c->exists_want = value ? cJSON_IsTrue(value) : 1;
  } else if (!value) {
    FAIL("%s: op %s needs a \"value\"", where, op_names[o]);
  }
  if (c->is_series) {
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(j, "function");
    const cJSON *scale = cJSON_GetObjectItemCaseSensitive(j, "scale");
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(j, "labels");
    if (c->op == OP_EXISTS) {
      if (fn)
        FAIL("%s: a series exists condition takes no \"function\"", where);
    } else {
      if (c->op > OP_LTE)
        FAIL("%s: op %s does not apply to series (use eq, ne, gt, gte, lt, lte or exists)",
             where, op_names[o]);
      if (!cJSON_IsString(fn) || lookup(functions, fn->valuestring) < 0)
        FAIL("%s: a series condition needs \"function\": one of last, first, min, max, "
             "avg, count", where);
      if (!cJSON_IsNumber(value))
        FAIL("%s: the value of a series condition must be a number", where);
      c->function = strdup(fn->valuestring);
      if (!c->function)
        return PMCP_ENOMEM;
    }
    if (scale) {
      if (!cJSON_IsString(scale) || !scale->valuestring[0])
        FAIL("%s: \"scale\" must be a string", where);
      c->scale = strdup(scale->valuestring);
      if (!c->scale)
        return PMCP_ENOMEM;
    }
    if (labels) {
      if (!cJSON_IsObject(labels))
        FAIL("%s: \"labels\" must be an object of label values", where);
      const cJSON *l;
      cJSON_ArrayForEach(l, labels) if (!cJSON_IsString(l))
          FAIL("%s: label \"%s\" must have a string value", where, l->string);
      c->labels = cJSON_Duplicate(labels, 1);
      if (!c->labels)
        return PMCP_ENOMEM;
    }
  } else {
    switch (c->op) {
    case OP_EQ:
    case OP_NE:
      if (!is_scalar(value))
        FAIL("%s: the value of %s must be a string, number or boolean", where, op_names[o]);
      break;
    case OP_GT:
    case OP_GTE:
    case OP_LT:
    case OP_LTE:
      if (!cJSON_IsNumber(value) && !cJSON_IsString(value))
        FAIL("%s: the value of %s must be a number or a string", where, op_names[o]);
      break;
    case OP_MATCHES:
    case OP_CONTAINS:
      if (!cJSON_IsString(value))
        FAIL("%s: the value of %s must be a string", where, op_names[o]);
      if (c->op == OP_MATCHES) {
        char why[200];
        if (!pmcp__re_available(why, sizeof why))
          FAIL("%s: matches is unavailable on this server: %s", where, why);
        c->re = pmcp__re_new(value->valuestring, strlen(value->valuestring), why, sizeof why);
        if (!c->re)
          FAIL("%s: invalid RE2 pattern: %s", where, why);
      }
      break;
    case OP_CONTAINS_ANY:
    case OP_CONTAINS_ALL:
      if (!cJSON_IsArray(value) || !all_strings(value) || cJSON_GetArraySize(value) == 0 ||
          cJSON_GetArraySize(value) > 1000)
        FAIL("%s: the value of %s must be an array of 1 to 1000 strings", where, op_names[o]);
      break;
    case OP_IN:
    case OP_NOT_IN:
      if (!cJSON_IsArray(value) || !all_scalars(value) || cJSON_GetArraySize(value) == 0 ||
          cJSON_GetArraySize(value) > 1000)
        FAIL("%s: the value of %s must be an array of 1 to 1000 strings, numbers or booleans",
             where, op_names[o]);
      break;
    case OP_EXISTS:
      break;
    }
  }
  if (value && c->op != OP_EXISTS) {
    c->value = cJSON_Duplicate(value, 1);
    if (!c->value)
      return PMCP_ENOMEM;
  }
  return 0;
}

static int parse_cond(const cJSON *j, size_t idx, cond *c, char *err, size_t errlen)
{
  char where[64];
  snprintf(where, sizeof where, "filter condition %zu", idx);
  if (!cJSON_IsObject(j))
    FAIL("%s must be an object", where);
  const cJSON *any = cJSON_GetObjectItemCaseSensitive(j, "any_of");
  if (!any)
    return parse_leaf(j, where, c, err, errlen);
  if (cJSON_GetArraySize(j) != 1)
    FAIL("%s: an any_of group takes no other keys", where);
  int n = cJSON_GetArraySize(any);
  if (!cJSON_IsArray(any) || n < 1 || n > PMCP__FILTER_MAX)
    FAIL("%s: \"any_of\" must be an array of 1 to %d conditions", where, PMCP__FILTER_MAX);
  c->group = calloc((size_t)n, sizeof *c->group);
  if (!c->group)
    return PMCP_ENOMEM;
  size_t i = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, any)
  {
    char w2[96];
    snprintf(w2, sizeof w2, "%s, any_of item %zu", where, i);
    if (!cJSON_IsObject(it))
      FAIL("%s must be an object", w2);
    if (cJSON_GetObjectItemCaseSensitive(it, "any_of"))
      FAIL("%s: any_of groups do not nest", w2);
    c->n_group = i + 1;
    int rc = parse_leaf(it, w2, &c->group[i], err, errlen);
    if (rc)
      return rc;
    i++;
  }
  return 0;
}

int pmcp__filter_parse(const cJSON *json, pmcp__filter **out, char *err, size_t errlen)
{
  *out = NULL;
  if (err && errlen)
    err[0] = '\0';
  if (json && !cJSON_IsNull(json) && !cJSON_IsArray(json))
    FAIL("filter must be an array of conditions");
  int n = json ? cJSON_GetArraySize(json) : 0;
  if (n > PMCP__FILTER_MAX)
    FAIL("filter has %d conditions; at most %d", n, PMCP__FILTER_MAX);
  pmcp__filter *f = calloc(1, sizeof *f);
  if (!f || (n && !(f->c = calloc((size_t)n, sizeof *f->c)))) {
    free(f);
    return PMCP_ENOMEM;
  }
  const cJSON *it;
  size_t i = 0;
  if (n) {
    cJSON_ArrayForEach(it, json)
    {
      f->n = i + 1;
      int rc = parse_cond(it, i, &f->c[i], err, errlen);
      if (rc) {
        pmcp__filter_free(f);
        return rc;
      }
      i++;
    }
  }
  *out = f;
  return 0;
}

/* ---- evaluation --------------------------------------------------------- */

static int cmp_result(enum op op, int c)
{
  switch (op) {
  case OP_EQ: return c == 0;
  case OP_NE: return c != 0;
  case OP_GT: return c > 0;
  case OP_GTE: return c >= 0;
  case OP_LT: return c < 0;
  case OP_LTE: return c <= 0;
  default: return 0;
  }
}

static int num_cmp(double a, double b)
{
  return a < b ? -1 : a > b ? 1 : 0;
}

/* Equality of two scalars of the same JSON type; -1 when types differ. */
static int scalar_eq(const cJSON *a, const cJSON *b)
{
  if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
    return a->valuedouble == b->valuedouble;
  if (cJSON_IsString(a) && cJSON_IsString(b))
    return strcmp(a->valuestring, b->valuestring) == 0;
  if (cJSON_IsBool(a) && cJSON_IsBool(b))
    return cJSON_IsTrue(a) == cJSON_IsTrue(b);
  return -1;
}

static int set_has(const cJSON *set, const char *s)
{
  const cJSON *it;
  cJSON_ArrayForEach(it, set) if (cJSON_IsString(it) && strcmp(it->valuestring, s) == 0) return 1;
  return 0;
}

/* contains on a string is a substring test; on a set, membership. */
static int contains(const cJSON *v, const char *s)
{
  if (cJSON_IsString(v))
    return strstr(v->valuestring, s) != NULL;
  if (cJSON_IsArray(v))
    return set_has(v, s);
  return 0;
}

#define DAY_MS 86400000.0

/* Compares instant @p t (epoch ms) with condition value @p w: -1, 0, 1,
 * or 2 when @p w is no time (never equal, never ordered). A date alone
 * for equality (@p whole_day) is the span of that day. */
static int time_cmp(double t, const cJSON *w, int whole_day)
{
  double x;
  int date_only = 0;
  if (cJSON_IsNumber(w)) {
    x = w->valuedouble;
  } else {
    int64_t ms;
    if (!cJSON_IsString(w) || pmcp__iso_parse_ms(w->valuestring, &ms, &date_only))
      return 2;
    x = (double)ms;
  }
  if (whole_day && date_only)
    return t < x ? -1 : t >= x + DAY_MS ? 1 : 0;
  return num_cmp(t, x);
}

/* eval_attr() for a datetime value @p v (ISO text): comparisons as
 * instants, text operators (matches, contains) on its text. */
static int eval_time(const cond *c, const cJSON *v, int *done)
{
  int64_t ms;
  *done = 0;
  if (pmcp__iso_parse_ms(v->valuestring, &ms, NULL))
    return 0; /* not a time after all: as a string */
  double t = (double)ms;
  const cJSON *it;
  *done = 1;
  switch (c->op) {
  case OP_EQ:
  case OP_NE: {
    int e = time_cmp(t, c->value, 1) == 0;
    return c->op == OP_EQ ? e : !e;
  }
  case OP_GT:
  case OP_GTE:
  case OP_LT:
  case OP_LTE: {
    int k = time_cmp(t, c->value, 0);
    return k != 2 && cmp_result(c->op, k);
  }
  case OP_IN:
  case OP_NOT_IN: {
    int found = 0;
    cJSON_ArrayForEach(it, c->value) if (time_cmp(t, it, 1) == 0) found = 1;
    return c->op == OP_IN ? found : !found;
  }
  default:
    *done = 0;
    return 0;
  }
}

static int eval_attr(const cond *c, const pmcp__filter_row *row)
{
  const cJSON *v = row->attr ? row->attr(row->ud, c->path) : NULL;
  if (v && cJSON_IsNull(v))
    v = NULL;
  if (c->op == OP_EXISTS)
    return (v != NULL) == c->exists_want;
  if (!v)
    return 0;
  if (cJSON_IsString(v) && row->is_time && row->is_time(row->ud, c->path)) {
    int done, r = eval_time(c, v, &done);
    if (done)
      return r;
  }
  const cJSON *w = c->value, *it;
  switch (c->op) {
  case OP_EQ:
  case OP_NE: {
    int e = scalar_eq(v, w);
    if (e < 0)
      return c->op == OP_NE; /* different types are never equal */
    return c->op == OP_EQ ? e : !e;
  }
  case OP_GT:
  case OP_GTE:
  case OP_LT:
  case OP_LTE:
    if (cJSON_IsNumber(v) && cJSON_IsNumber(w))
      return cmp_result(c->op, num_cmp(v->valuedouble, w->valuedouble));
    if (cJSON_IsString(v) && cJSON_IsString(w))
      return cmp_result(c->op, strcmp(v->valuestring, w->valuestring));
    return 0;
  case OP_MATCHES:
    if (cJSON_IsString(v))
      return pmcp__re_search(c->re, v->valuestring, strlen(v->valuestring));
    if (cJSON_IsArray(v)) {
      cJSON_ArrayForEach(it, v) if (cJSON_IsString(it) &&
                                    pmcp__re_search(c->re, it->valuestring,
                                                    strlen(it->valuestring))) return 1;
    }
    return 0;
  case OP_CONTAINS:
    return contains(v, w->valuestring);
  case OP_CONTAINS_ANY:
    cJSON_ArrayForEach(it, w) if (contains(v, it->valuestring)) return 1;
    return 0;
  case OP_CONTAINS_ALL:
    cJSON_ArrayForEach(it, w) if (!contains(v, it->valuestring)) return 0;
    return 1;
  case OP_IN:
  case OP_NOT_IN: {
    int found = 0;
    cJSON_ArrayForEach(it, w) if (scalar_eq(v, it) == 1) found = 1;
    return c->op == OP_IN ? found : !found;
  }
  case OP_EXISTS:
    break;
  }
  return 0;
}

static int eval_series(const cond *c, const pmcp__filter_row *row)
{
  if (!row->series)
    return c->op == OP_EXISTS ? !c->exists_want : 0;
  double x = 0;
  int rc = row->series(row->ud, c->path, c->op == OP_EXISTS ? NULL : c->function, c->scale,
                       c->labels, &x);
  if (rc < 0)
    return rc;
  if (c->op == OP_EXISTS)
    return (rc == 0) == c->exists_want;
  if (rc != 0 || isnan(x))
    return 0;
  return cmp_result(c->op, num_cmp(x, c->value->valuedouble));
}

static int eval_leaf(const cond *c, const pmcp__filter_row *row)
{
  return c->is_series ? eval_series(c, row) : eval_attr(c, row);
}

int pmcp__filter_match(const pmcp__filter *f, const pmcp__filter_row *row)
{
  if (!f)
    return 1;
  /* Attribute conditions first: they are cheap, series may read the store. */
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < f->n; i++) {
      const cond *c = &f->c[i];
      int heavy = c->group ? 1 : c->is_series;
      if (heavy != pass)
        continue;
      int r;
      if (c->group) {
        r = 0;
        for (size_t g = 0; g < c->n_group && r == 0; g++)
          r = eval_leaf(&c->group[g], row);
      } else {
        r = eval_leaf(c, row);
      }
      if (r <= 0)
        return r;
    }
  }
  return 1;
}

/* ---- sorting ------------------------------------------------------------ */

void pmcp__sort_dispose(pmcp__sort *s)
{
  if (!s)
    return;
  free(s->attr);
  free(s->series);
  free(s->function);
  free(s->scale);
  cJSON_Delete(s->labels);
  memset(s, 0, sizeof *s);
}

int pmcp__sort_parse(const cJSON *j, pmcp__sort *s, char *err, size_t errlen)
{
  memset(s, 0, sizeof *s);
  if (!cJSON_IsObject(j))
    FAIL("sort must be an object such as {\"attr\": \"sys/creation_time\", "
         "\"direction\": \"desc\"}");
  const cJSON *attr = cJSON_GetObjectItemCaseSensitive(j, "attr");
  const cJSON *series = cJSON_GetObjectItemCaseSensitive(j, "series");
  const cJSON *dir = cJSON_GetObjectItemCaseSensitive(j, "direction");
  const cJSON *fn = cJSON_GetObjectItemCaseSensitive(j, "function");
  const cJSON *scale = cJSON_GetObjectItemCaseSensitive(j, "scale");
  const cJSON *labels = cJSON_GetObjectItemCaseSensitive(j, "labels");
  if (!!attr == !!series)
    FAIL("sort needs exactly one of \"attr\" or \"series\"");
  const cJSON *k;
  cJSON_ArrayForEach(k, j)
  {
    static const char *const keys[] = {"attr", "series", "direction", "function", "scale",
                                       "labels", NULL};
    if (lookup(keys, k->string) < 0 || (attr && lookup(keys + 2, k->string) > 0))
      FAIL("sort: unknown key \"%s\"", k->string);
  }
  const cJSON *name = attr ? attr : series;
  if (!cJSON_IsString(name) || !name->valuestring[0])
    FAIL("sort: \"%s\" must be a non-empty string", attr ? "attr" : "series");
  if (dir && (!cJSON_IsString(dir) || (strcmp(dir->valuestring, "asc") != 0 &&
                                       strcmp(dir->valuestring, "desc") != 0)))
    FAIL("sort: \"direction\" must be \"asc\" or \"desc\"");
  if (series) {
    if (!cJSON_IsString(fn) || lookup(functions, fn->valuestring) < 0)
      FAIL("sort: a series sort needs \"function\": one of last, first, min, max, avg, count");
    if (scale && !cJSON_IsString(scale))
      FAIL("sort: \"scale\" must be a string");
    if (labels) {
      if (!cJSON_IsObject(labels))
        FAIL("sort: \"labels\" must be an object of label values");
      const cJSON *l;
      cJSON_ArrayForEach(l, labels) if (!cJSON_IsString(l))
          FAIL("sort: label \"%s\" must have a string value", l->string);
    }
  }
  s->desc = dir ? strcmp(dir->valuestring, "desc") == 0 : !series;
  if (attr) {
    if (!(s->attr = strdup(attr->valuestring)))
      return PMCP_ENOMEM;
    return 0;
  }
  s->series = strdup(series->valuestring);
  s->function = strdup(fn->valuestring);
  s->scale = scale ? strdup(scale->valuestring) : NULL;
  s->labels = labels ? cJSON_Duplicate(labels, 1) : NULL;
  if (!s->series || !s->function || (scale && !s->scale) || (labels && !s->labels)) {
    pmcp__sort_dispose(s);
    return PMCP_ENOMEM;
  }
  return 0;
}

int pmcp__sort_key_of(const pmcp__sort *s, const pmcp__filter_row *row, pmcp__sort_key *out)
{
  memset(out, 0, sizeof *out);
  if (s->attr) {
    const cJSON *v = row->attr ? row->attr(row->ud, s->attr) : NULL;
    if (cJSON_IsNumber(v)) {
      out->kind = 1;
      out->num = v->valuedouble;
    } else if (cJSON_IsString(v)) {
      out->kind = 2;
      out->str = v->valuestring;
    } else if (cJSON_IsBool(v)) {
      out->kind = 3;
      out->num = cJSON_IsTrue(v);
    }
    return 0;
  }
  if (!row->series)
    return 0;
  double x;
  int rc = row->series(row->ud, s->series, s->function, s->scale, s->labels, &x);
  if (rc < 0)
    return rc;
  if (rc == 0 && !isnan(x)) {
    out->kind = 1;
    out->num = x;
  }
  return 0;
}

int pmcp__sort_cmp(const pmcp__sort *s, const pmcp__sort_key *a, const pmcp__sort_key *b)
{
  if (!a->kind || !b->kind)
    return (a->kind == 0) - (b->kind == 0); /* missing last */
  /* kinds keep their order (numbers, strings, booleans) in either
   * direction: a string such as MLflow's "None" among a parameter's
   * numbers never comes before the largest number of a descending sort */
  if (a->kind != b->kind)
    return a->kind - b->kind;
  int c;
  if (a->kind == 2)
    c = strcmp(a->str, b->str);
  else
    c = num_cmp(a->num, b->num);
  return s->desc ? -c : c;
}

const cJSON *pmcp__filter_walk(const cJSON *tree, const char *path)
{
  const cJSON *node = tree;
  const char *seg = path;
  while (node && cJSON_IsObject(node)) {
    const char *slash = strchr(seg, '/');
    if (!slash)
      return cJSON_GetObjectItemCaseSensitive(node, seg);
    size_t n = (size_t)(slash - seg);
    const cJSON *child = NULL, *it;
    cJSON_ArrayForEach(it, node) if (it->string && strlen(it->string) == n &&
                                     memcmp(it->string, seg, n) == 0)
    {
      child = it;
      break;
    }
    node = child;
    seg = slash + 1;
  }
  return NULL;
}
