/* SQLite side of pmcp__store_run_page() (runtable.h): list_runs' whole
 * answer (total and one page of run ids) from index scans, when SQL can
 * state every filter condition and the sort exactly as the evaluator
 * (filter.c) reads the store's listings.
 *
 * Each condition becomes a bitmap of run ids from one index range scan
 * (an attribute path's text or number, a series key's summary); any_of
 * groups are unions, the filter their intersection with the project's
 * live runs. The page is then read in order without sorting the matches:
 * from the project's runs newest first, or, for a series sort, from the
 * series in value order (series_key_last gives `last` in order), and only
 * a page of ids leaves here.
 *
 * Exactness, condition by condition (anything else: PMCP_EUNSUPPORTED and
 * the caller checks candidates in C):
 *  - numbers are compared as the listings give them, rounded to 15
 *    significant digits (pmcp__sq_listed). Rounding is monotonic, so
 *    "listed(x) < w" is "x <= B" for one double B found by bisection over
 *    the doubles; integers below 1e15 are unchanged by the rounding, so
 *    the same bound serves them. Booleans are not numbers (v11's
 *    attributes_path_number leaves them out).
 *  - strings compare bytewise on both sides; a string set is stored as
 *    its JSON text ("[...]"), which the evaluator sees as an array, so a
 *    string condition is exact only when no text starting with '[' can
 *    satisfy it.
 *  - a series condition without labels reads the run's one series of the
 *    key and scale; when some run might have two (labels or value kinds
 *    differ among the key's series: v11's series_key_shape answers in two
 *    index probes) the evaluator's choice among them is not SQL's.
 *  - ties of a sort (equal after rounding) keep the store's order, newest
 *    first, as the evaluator's stable sort does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/runtable.h"
#include "store/sq.h"

/* Run ids a bitmap may cover (16 MiB); a store with larger ids takes the
 * candidate path. */
#define MAX_ID (((int64_t)1) << 27)
/* Largest |value| compared exactly (integers up to it are exact doubles
 * that 15-digit rounding leaves alone). */
#define MAX_EXACT 1e15
/* The number an attribute row lists, as v11's index states it. */
#define NUM_EXPR "(CASE WHEN type='bool' THEN NULL ELSE coalesce(v_real, v_int) END)"

typedef struct rf {
  pmcp_store *s;
  pmcp__sq *q;
  int64_t tenant, project;
  size_t words;      /* bitmap size in 64-bit words */
  uint64_t *scope;   /* the project's live runs */
} rf;

/* ---- bitmaps ------------------------------------------------------------ */

static uint64_t *bm_new(const rf *c, int ones)
{
  uint64_t *b = malloc(c->words * sizeof *b);
  if (b)
    memset(b, ones ? 0xff : 0, c->words * sizeof *b);
  return b;
}

static int bm_has(const uint64_t *b, int64_t id)
{
  return (b[id >> 6] >> (id & 63)) & 1;
}

static void bm_set(uint64_t *b, int64_t id)
{
  b[id >> 6] |= (uint64_t)1 << (id & 63);
}

static size_t popcount64(uint64_t x)
{
#if defined(__GNUC__)
  return (size_t)__builtin_popcountll(x);
#else
  size_t n = 0;
  for (; x; x &= x - 1)
    n++;
  return n;
#endif
}

/* ---- bounds of "listed(x) OP w" on raw doubles -------------------------- */

/* Doubles mapped to unsigned integers in the same order. */
static uint64_t okey(double d)
{
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return (u >> 63) ? ~u : u | ((uint64_t)1 << 63);
}

static double unkey(uint64_t k)
{
  uint64_t u = (k >> 63) ? k & ~((uint64_t)1 << 63) : ~k;
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* The key of the least x in [-inf, +inf] whose listed value is >= w
 * (strict: > w); okey(+inf) + 1 when there is none. */
static uint64_t first_above(double w, int strict)
{
  uint64_t lo = okey(-HUGE_VAL), hi = okey(HUGE_VAL) + 1;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    double l = pmcp__sq_listed(unkey(mid));
    if (strict ? l > w : l >= w)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

typedef struct range {
  int empty, has_lo, has_hi;
  double lo, hi;
} range;

/* The raw values x with listed(x) OP w (OP: eq, gt, gte, lt, lte). */
static range listed_range(const char *op, double w)
{
  uint64_t kmin = okey(-HUGE_VAL), kmax = okey(HUGE_VAL);
  uint64_t a = kmin, b = kmax;
  if (!strcmp(op, "gte") || !strcmp(op, "eq"))
    a = first_above(w, 0);
  else if (!strcmp(op, "gt"))
    a = first_above(w, 1);
  if (!strcmp(op, "lt")) {
    uint64_t f = first_above(w, 0);
    b = f - 1; /* f > kmin unless everything passes gte: then none is < w */
    if (f == kmin)
      return (range){1, 0, 0, 0, 0};
  } else if (!strcmp(op, "lte") || !strcmp(op, "eq")) {
    uint64_t f = first_above(w, 1);
    if (f == kmin)
      return (range){1, 0, 0, 0, 0};
    b = f - 1;
  }
  range r = {0, a != kmin, b != kmax, 0, 0};
  if (a > kmax || a > b)
    r.empty = 1;
  r.lo = unkey(a <= kmax ? a : kmax);
  r.hi = unkey(b);
  return r;
}

/* ---- one scan into a bitmap --------------------------------------------- */

/* Binds for a scan: ?1 tenant, then up to 4 values. */
typedef struct scan_args {
  const char *text[2];
  int n_text;
  double num[2];
  int n_num;
} scan_args;

/* Runs @p sql (first column: a run id) and sets each id's bit in @p out.
 * Binds ?1 tenant, ?2.. the texts then the numbers of @p a. */
static int scan(rf *c, const char *sql, const scan_args *a, uint64_t *out)
{
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep_text(c->s, c->q, sql, &st);
  if (rc)
    return rc;
  int k = 1, src = sqlite3_bind_int64(st, k++, c->tenant);
  for (int i = 0; src == SQLITE_OK && i < a->n_text; i++)
    src = sqlite3_bind_text(st, k++, a->text[i], -1, SQLITE_STATIC);
  for (int i = 0; src == SQLITE_OK && i < a->n_num; i++)
    src = sqlite3_bind_double(st, k++, a->num[i]);
  int64_t max = (int64_t)c->words * 64;
  while (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(st, 0);
    if (id >= 0 && id < max)
      bm_set(out, id);
    src = SQLITE_OK;
  }
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return src == SQLITE_DONE ? 0 : pmcp__sq_err(c->s, c->q, src, "read the run table");
}

/* Appends the SQL of range @p r over expression @p e to @p sql, its
 * numbers to @p a. */
static void put_range(char *sql, size_t size, const char *e, const range *r, scan_args *a)
{
  size_t n = strlen(sql);
  if (r->empty)
    snprintf(sql + n, size - n, " AND 0");
  else if (r->has_lo && r->has_hi)
    snprintf(sql + n, size - n, " AND %s BETWEEN ?%d AND ?%d", e, 2 + a->n_text + a->n_num,
             3 + a->n_text + a->n_num);
  else if (r->has_lo)
    snprintf(sql + n, size - n, " AND %s >= ?%d", e, 2 + a->n_text + a->n_num);
  else if (r->has_hi)
    snprintf(sql + n, size - n, " AND %s <= ?%d", e, 2 + a->n_text + a->n_num);
  else
    snprintf(sql + n, size - n, " AND %s IS NOT NULL", e);
  if (!r->empty && r->has_lo)
    a->num[a->n_num++] = r->lo;
  if (!r->empty && r->has_hi)
    a->num[a->n_num++] = r->hi;
}

static const char *js(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int is_cmp(const char *op)
{
  return !strcmp(op, "eq") || !strcmp(op, "gt") || !strcmp(op, "gte") || !strcmp(op, "lt") ||
         !strcmp(op, "lte");
}

/* ---- attribute conditions ----------------------------------------------- */

#define ATTR_SCAN "SELECT owner_id FROM attributes WHERE tenant_id=?1 AND owner_kind='run' AND path=?2"

/* A string comparison SQL states exactly: no "[..." text (a string set's
 * JSON) can pass it. */
static int text_exact(const char *op, const char *w)
{
  if (!strcmp(op, "eq"))
    return w[0] != '[';
  if (!strcmp(op, "gt") || !strcmp(op, "gte"))
    return (unsigned char)w[0] > '[';
  return w[0] != '\0' && (unsigned char)w[0] < '['; /* lt, lte */
}

/* The runs whose attribute @p path satisfies "OP value" for one scalar
 * comparison (eq, gt, gte, lt, lte). Returns 0, 1 (not exact) or an
 * error; with @p out NULL only decides. */
static int attr_cmp(rf *c, const char *path, const char *op, const cJSON *v, uint64_t *out)
{
  char sql[400];
  scan_args a = {{path, NULL}, 1, {0, 0}, 0};
  if (cJSON_IsString(v)) {
    if (!text_exact(op, v->valuestring))
      return 1;
    static const char *const sym[][2] = {{"eq", "="}, {"gt", ">"}, {"gte", ">="},
                                         {"lt", "<"}, {"lte", "<="}};
    const char *o = "=";
    for (size_t i = 0; i < sizeof sym / sizeof sym[0]; i++)
      if (!strcmp(op, sym[i][0]))
        o = sym[i][1];
    if (!out)
      return 0;
    snprintf(sql, sizeof sql, ATTR_SCAN " AND v_text %s ?3", o);
    a.text[a.n_text++] = v->valuestring;
    return scan(c, sql, &a, out);
  }
  if (!cJSON_IsNumber(v) || !(v->valuedouble > -MAX_EXACT && v->valuedouble < MAX_EXACT))
    return 1; /* booleans: no index; huge numbers: integers round */
  if (!out)
    return 0;
  range r = listed_range(op, v->valuedouble);
  snprintf(sql, sizeof sql, ATTR_SCAN);
  put_range(sql, sizeof sql, NUM_EXPR, &r, &a);
  return scan(c, sql, &a, out);
}

/* OR of eq over the items of an in / not_in list. */
static int attr_in(rf *c, const char *path, const cJSON *list, uint64_t *out)
{
  const cJSON *it;
  cJSON_ArrayForEach(it, list)
  {
    int rc = attr_cmp(c, path, "eq", it, out);
    if (rc)
      return rc;
  }
  return 0;
}

static int attr_leaf(rf *c, const cJSON *cond, uint64_t *out)
{
  const char *path = js(cond, "attr"), *op = js(cond, "op");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(cond, "value");
  if (!path || !op || !strncmp(path, "sys/", 4))
    return 1; /* run columns, tags: the candidate path */
  int neg = 0, rc;
  uint64_t *have = NULL;
  if (!strcmp(op, "exists")) {
    if (!out)
      return 0;
    scan_args a = {{path, NULL}, 1, {0, 0}, 0};
    rc = scan(c, ATTR_SCAN, &a, out);
    neg = v && !cJSON_IsTrue(v);
  } else if (is_cmp(op)) {
    rc = attr_cmp(c, path, op, v, out);
  } else if (!strcmp(op, "ne") || !strcmp(op, "in") || !strcmp(op, "not_in")) {
    const char *base = !strcmp(op, "ne") ? "eq" : "in";
    /* ne / not_in: the runs that have the path, less those equal */
    int negated = strcmp(op, "in") != 0;
    const cJSON *it;
    if (!strcmp(base, "eq"))
      rc = attr_cmp(c, path, "eq", v, NULL);
    else {
      rc = 0;
      cJSON_ArrayForEach(it, v) if (!rc) rc = attr_cmp(c, path, "eq", it, NULL);
    }
    if (rc || !out)
      return rc;
    rc = !strcmp(base, "eq") ? attr_cmp(c, path, "eq", v, out) : attr_in(c, path, v, out);
    if (!rc && negated) {
      have = bm_new(c, 0);
      scan_args a = {{path, NULL}, 1, {0, 0}, 0};
      rc = have ? scan(c, ATTR_SCAN, &a, have) : PMCP_ENOMEM;
      for (size_t i = 0; !rc && i < c->words; i++)
        out[i] = have[i] & ~out[i];
    }
  } else {
    return 1; /* matches, contains...: the candidate path */
  }
  if (!rc && neg)
    for (size_t i = 0; i < c->words; i++)
      out[i] = ~out[i];
  free(have);
  return rc;
}

/* ---- series conditions -------------------------------------------------- */

/* The column a series summary is listed from. */
static const char *series_expr(const char *fn)
{
  static const char *const cols[][2] = {
    {"last", "last"}, {"first", "first"}, {"min", "vmin"}, {"max", "vmax"}, {"count", "count"},
    {"avg", "(CASE WHEN kind='float' AND count>nonfinite THEN vsum / (count - nonfinite) END)"}};
  for (size_t i = 0; fn && i < sizeof cols / sizeof cols[0]; i++)
    if (!strcmp(fn, cols[i][0]))
      return cols[i][1];
  return NULL;
}

/* 1 when no run can have two series of (key, scale): all of the key's
 * series on that scale share one labels text and one value kind (across
 * tenants: a cautious answer). 0 when some might; negative on error. */
static int one_series(rf *c, const char *key, const char *scale)
{
  static const char *const sql[2] = {
    "SELECT labels, kind FROM series WHERE key=?1 AND scale=?2 ORDER BY labels, kind LIMIT 1",
    "SELECT labels, kind FROM series WHERE key=?1 AND scale=?2"
    " ORDER BY labels DESC, kind DESC LIMIT 1"};
  char *got[2][2] = {{NULL, NULL}, {NULL, NULL}};
  int rc = 0, n = 0;
  for (int i = 0; i < 2 && !rc; i++) {
    sqlite3_stmt *st;
    if ((rc = pmcp__sq_prep(c->s, c->q, sql[i], &st)))
      break;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, scale, -1, SQLITE_STATIC);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
      n++;
      const char *l = (const char *)sqlite3_column_text(st, 0);
      const char *k = (const char *)sqlite3_column_text(st, 1);
      got[i][0] = strdup(l ? l : "");
      got[i][1] = strdup(k ? k : "");
      if (!got[i][0] || !got[i][1])
        rc = PMCP_ENOMEM;
    } else if (src != SQLITE_DONE) {
      rc = pmcp__sq_err(c->s, c->q, src, "read the run table");
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
  }
  int one = !rc && (n < 2 || (!strcmp(got[0][0], got[1][0]) && !strcmp(got[0][1], got[1][1])));
  for (int i = 0; i < 2; i++) {
    free(got[i][0]);
    free(got[i][1]);
  }
  return rc ? rc : one;
}

#define SERIES_SCAN "SELECT run_id FROM series WHERE tenant_id=?1 AND key=?2 AND scale=?3"

static int series_leaf(rf *c, const cJSON *cond, uint64_t *out)
{
  const char *key = js(cond, "series"), *op = js(cond, "op"), *fn = js(cond, "function");
  const char *scale = js(cond, "scale");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(cond, "value");
  if (!key || !op || cJSON_GetObjectItemCaseSensitive(cond, "labels"))
    return 1; /* a choice among labelled series: the candidate path */
  if (!scale)
    scale = "step";
  scan_args a = {{key, scale}, 2, {0, 0}, 0};
  if (!strcmp(op, "exists")) {
    /* any series of the key and scale is the evaluator's choice */
    if (!out)
      return 0;
    int rc = scan(c, SERIES_SCAN, &a, out);
    if (!rc && v && !cJSON_IsTrue(v))
      for (size_t i = 0; i < c->words; i++)
        out[i] = ~out[i];
    return rc;
  }
  const char *e = series_expr(fn);
  int ne = !strcmp(op, "ne");
  if (!e || !cJSON_IsNumber(v) || (!ne && !is_cmp(op)) ||
      !(v->valuedouble > -MAX_EXACT && v->valuedouble < MAX_EXACT))
    return 1;
  int one = one_series(c, key, scale);
  if (one <= 0)
    return one < 0 ? one : 1;
  if (!out)
    return 0;
  char sql[400];
  snprintf(sql, sizeof sql, SERIES_SCAN);
  range r = listed_range(ne ? "eq" : op, v->valuedouble);
  put_range(sql, sizeof sql, e, &r, &a);
  int rc = scan(c, sql, &a, out);
  if (!rc && ne) {
    /* ne: a value (not NULL), and not equal */
    uint64_t *have = bm_new(c, 0);
    scan_args h = {{key, scale}, 2, {0, 0}, 0};
    range any = {0, 0, 0, 0, 0};
    snprintf(sql, sizeof sql, SERIES_SCAN);
    put_range(sql, sizeof sql, e, &any, &h);
    rc = have ? scan(c, sql, &h, have) : PMCP_ENOMEM;
    for (size_t i = 0; !rc && i < c->words; i++)
      out[i] = have[i] & ~out[i];
    free(have);
  }
  return rc;
}

static int leaf(rf *c, const cJSON *cond, uint64_t *out)
{
  if (cJSON_GetObjectItemCaseSensitive(cond, "attr"))
    return attr_leaf(c, cond, out);
  if (cJSON_GetObjectItemCaseSensitive(cond, "series"))
    return series_leaf(c, cond, out);
  return 1;
}

/* Decides (@p m NULL) or computes into @p m the filter's matches. */
static int filter_bits(rf *c, const cJSON *filter, uint64_t *m)
{
  uint64_t *one = m ? bm_new(c, 0) : NULL, *part = m ? bm_new(c, 0) : NULL;
  int rc = m && (!one || !part) ? PMCP_ENOMEM : 0;
  const cJSON *cond;
  cJSON_ArrayForEach(cond, filter)
  {
    if (rc)
      break;
    const cJSON *group = cJSON_GetObjectItemCaseSensitive(cond, "any_of");
    if (m)
      memset(part, 0, c->words * sizeof *part);
    if (group) {
      const cJSON *g;
      cJSON_ArrayForEach(g, group)
      {
        if (m)
          memset(one, 0, c->words * sizeof *one);
        if ((rc = leaf(c, g, m ? one : NULL)))
          break;
        for (size_t i = 0; m && i < c->words; i++)
          part[i] |= one[i];
      }
    } else {
      rc = leaf(c, cond, part);
    }
    for (size_t i = 0; !rc && m && i < c->words; i++)
      m[i] &= part[i];
  }
  free(one);
  free(part);
  return rc;
}

/* ---- the page ----------------------------------------------------------- */

typedef struct page {
  pmcp__rt_page *out;
  size_t offset, need; /* need = offset + limit */
  size_t pos;          /* matches placed so far */
} page;

static void put_id(page *p, int64_t id)
{
  if (p->pos >= p->offset && p->pos < p->need)
    p->out->ids[p->out->n++] = id;
  p->pos++;
}

/* Walks the project's live runs newest first (the store's order) and
 * places those set in @p want until the page is full. */
static int walk_store_order(rf *c, const uint64_t *want, page *p)
{
  static const char sql[] = "SELECT id FROM runs WHERE tenant_id=?1 AND project_id=?2 AND"
                            " deleted=0 ORDER BY created DESC, id DESC";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(c->s, c->q, sql, &st);
  if (rc)
    return rc;
  sqlite3_bind_int64(st, 1, c->tenant);
  sqlite3_bind_int64(st, 2, c->project);
  int64_t max = (int64_t)c->words * 64;
  int src = SQLITE_DONE;
  while (p->pos < p->need && (src = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(st, 0);
    if (id >= 0 && id < max && bm_has(want, id))
      put_id(p, id);
  }
  if (p->pos >= p->need)
    src = SQLITE_DONE;
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return src == SQLITE_DONE ? 0 : pmcp__sq_err(c->s, c->q, src, "read the run table");
}

typedef struct member {
  int64_t id, created;
} member;

static int newest_first(const void *a, const void *b)
{
  const member *x = a, *y = b;
  if (x->created != y->created)
    return x->created > y->created ? -1 : 1;
  return x->id > y->id ? -1 : x->id < y->id;
}

/* Places a group of matches with one sort value: in the store's order
 * when part of it lands on the page. */
static int flush_group(rf *c, member *g, size_t n, page *p)
{
  if (p->pos + n <= p->offset || p->pos >= p->need) {
    p->pos += n;
    return 0;
  }
  static const char sql[] = "SELECT created FROM runs WHERE id=?1";
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep(c->s, c->q, sql, &st);
  for (size_t i = 0; !rc && i < n; i++) {
    sqlite3_bind_int64(st, 1, g[i].id);
    int src = sqlite3_step(st);
    g[i].created = src == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    if (src != SQLITE_ROW && src != SQLITE_DONE)
      rc = pmcp__sq_err(c->s, c->q, src, "read the run table");
    sqlite3_reset(st);
  }
  if (rc)
    return rc;
  if (n > 1)
    qsort(g, n, sizeof *g, newest_first);
  for (size_t i = 0; i < n; i++)
    put_id(p, g[i].id);
  return 0;
}

/* The page for a series sort: the key's series in value order, ties (equal
 * once rounded) in the store's order, then the matches without a value in
 * the store's order. */
static int walk_series(rf *c, const pmcp__rt_sort *so, const uint64_t *m, page *p)
{
  const char *e = series_expr(so->function);
  char sql[400];
  snprintf(sql, sizeof sql,
           "SELECT run_id, %s FROM series WHERE key=?1 AND scale=?2 AND tenant_id=?3 AND"
           " %s IS NOT NULL ORDER BY %s %s", e, e, e, so->desc ? "DESC" : "ASC");
  sqlite3_stmt *st;
  int rc = pmcp__sq_prep_text(c->s, c->q, sql, &st);
  if (rc)
    return rc;
  uint64_t *valued = bm_new(c, 0);
  size_t cap = 64, n = 0;
  member *g = malloc(cap * sizeof *g);
  if (!valued || !g) {
    free(valued);
    free(g);
    return PMCP_ENOMEM;
  }
  sqlite3_bind_text(st, 1, so->series, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, so->scale ? so->scale : "step", -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 3, c->tenant);
  int64_t max = (int64_t)c->words * 64;
  double raw = 0, lv = 0, glv = 0;
  int have_raw = 0, src, done = 0;
  while (!rc && (src = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(st, 0);
    if (id < 0 || id >= max || !bm_has(c->scope, id))
      continue;
    bm_set(valued, id);
    if (!bm_has(m, id))
      continue;
    double x = sqlite3_column_double(st, 1);
    if (!have_raw || x != raw) {
      raw = x;
      lv = pmcp__sq_listed(x);
      have_raw = 1;
    }
    if (n && lv != glv) {
      rc = flush_group(c, g, n, p);
      n = 0;
      if (p->pos >= p->need) {
        done = 1;
        break;
      }
    }
    if (n == cap) {
      member *ng = realloc(g, (cap *= 2) * sizeof *g);
      if (!ng) {
        rc = PMCP_ENOMEM;
        break;
      }
      g = ng;
    }
    glv = lv;
    g[n].id = id;
    g[n++].created = 0;
  }
  if (!rc && !done && src != SQLITE_DONE)
    rc = pmcp__sq_err(c->s, c->q, src, "read the run table");
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (!rc && n)
    rc = flush_group(c, g, n, p);
  if (!rc && !done && p->pos < p->need) {
    /* every valued run was seen: the rest have no value */
    for (size_t i = 0; i < c->words; i++)
      valued[i] = m[i] & ~valued[i];
    rc = walk_store_order(c, valued, p);
  }
  free(g);
  free(valued);
  return rc;
}

/* Whether the sort can be answered here (0) or not (1). */
static int sort_exact(rf *c, const pmcp__rt_sort *so)
{
  if (!so)
    return 0;
  if (so->attr || so->labels || !so->series || !series_expr(so->function))
    return 1;
  int one = one_series(c, so->series, so->scale ? so->scale : "step");
  return one < 0 ? one : !one;
}

int pmcp__store_run_page(pmcp_store *s, pmcp_tenant t, const pmcp__rt_page_query *rq,
                         pmcp__rt_page *out)
{
  memset(out, 0, sizeof *out);
  if (!s || s->magic != PMCP__STORE_MAGIC || strcmp(s->ops.name ? s->ops.name : "", "sqlite"))
    return PMCP_EUNSUPPORTED;
  rf c = {s, SQ(s->ctx), t.id, 0, 0, NULL};
  uint64_t *m = NULL;
  int own_txn = !c.q->in_txn && sqlite3_get_autocommit(c.q->db);
  int rc = own_txn ? pmcp__sq_exec(s, c.q, "BEGIN") : 0;
  if (rc)
    return rc;
  /* points a caller's transaction holds back count too */
  if (c.q->in_txn && c.q->n_pending && (rc = pmcp__sq_flush(s, c.q)))
    goto out;
  if ((rc = pmcp__sq_project_id(s, c.q, t, rq->project, &c.project)))
    goto out;
  /* every condition and the sort exact, before any scan */
  if ((rc = filter_bits(&c, rq->filter, NULL)) || (rc = sort_exact(&c, rq->sort)))
    goto out;
  sqlite3_stmt *st;
  static const char maxq[] = "SELECT max(id) FROM runs";
  if ((rc = pmcp__sq_prep(s, c.q, maxq, &st)))
    goto out;
  int src = sqlite3_step(st);
  int64_t max_id = src == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_reset(st);
  if (src != SQLITE_ROW) {
    rc = pmcp__sq_err(s, c.q, src, "read the run table");
    goto out;
  }
  if (max_id >= MAX_ID) {
    rc = 1;
    goto out;
  }
  c.words = (size_t)(max_id / 64 + 1);
  c.scope = bm_new(&c, 0);
  m = bm_new(&c, 1);
  out->ids = malloc((rq->limit ? rq->limit : 1) * sizeof *out->ids);
  if (!c.scope || !m || !out->ids) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  static const char scope_q[] = "SELECT id FROM runs WHERE tenant_id=?1 AND project_id=?2 AND"
                                " deleted=0";
  if ((rc = pmcp__sq_prep(s, c.q, scope_q, &st)))
    goto out;
  sqlite3_bind_int64(st, 1, c.tenant);
  sqlite3_bind_int64(st, 2, c.project);
  while ((src = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(st, 0);
    if (id >= 0 && id <= max_id)
      bm_set(c.scope, id);
  }
  sqlite3_reset(st);
  if (src != SQLITE_DONE) {
    rc = pmcp__sq_err(s, c.q, src, "read the run table");
    goto out;
  }
  if ((rc = filter_bits(&c, rq->filter, m)))
    goto out;
  for (size_t i = 0; i < c.words; i++) {
    m[i] &= c.scope[i];
    out->total += popcount64(m[i]);
  }
  page p = {out, rq->offset, rq->offset + rq->limit, 0};
  rc = rq->sort ? walk_series(&c, rq->sort, m, &p) : walk_store_order(&c, m, &p);
out:
  if (own_txn)
    sqlite3_exec(c.q->db, rc ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
  free(c.scope);
  free(m);
  if (rc == 1)
    rc = PMCP_EUNSUPPORTED;
  if (rc)
    pmcp__rt_page_dispose(out);
  return rc;
}

void pmcp__rt_page_dispose(pmcp__rt_page *p)
{
  free(p->ids);
  memset(p, 0, sizeof *p);
}
