/* SPDX-License-Identifier: MIT */
/* pmcp__store_run_page() (runtable.h) for both built-in backends, over
 * sql.h: list_runs' whole answer (total and one page of run ids) from
 * index scans, when SQL can state every filter condition and the sort
 * exactly as the evaluator (filter.c) reads the store's listings.
 *
 * Each condition becomes a bitmap of run ids from one index range scan
 * (an attribute path's text or number, a series key's summary); any_of
 * groups are unions, the filter their intersection with the project's
 * live runs. The page is then read in order without sorting the matches:
 * from the project's runs newest first, or, for a series sort, from the
 * series in value order (series_key_last gives `last` in order), and only
 * a page of ids leaves here. SQLite streams those walks and stops when the
 * page is full; PostgreSQL's layer receives a statement's whole result, so
 * there they go in batches (keyset: each continues after the last row).
 *
 * Exactness, condition by condition (anything else: PMCP_EUNSUPPORTED and
 * the caller checks candidates in C):
 *  - numbers are compared as the listings give them, rounded to 15
 *    significant digits (pmcp__rt_listed; PostgreSQL's listings round
 *    through float8::numeric, DBL_DIG digits: the same). Rounding is monotonic, so
 *    "listed(x) < w" is "x <= B" for one double B found by bisection over
 *    the doubles; integers below 1e15 are unchanged by the rounding, so
 *    the same bound serves them. Booleans are not numbers (SQLite v11's
 *    attributes_path_number leaves them out; runsql.h).
 *  - strings compare bytewise on both sides (PostgreSQL: COLLATE "C");
 *    a string set is stored as
 *    its JSON text ("[...]"), which the evaluator sees as an array, so a
 *    string condition is exact only when no text starting with '[' can
 *    satisfy it.
 *  - a series condition without labels reads the run's one series of the
 *    key and scale; when some run might have two (labels or value kinds
 *    differ among the key's series: series_key_shape answers in two index
 *    probes) the evaluator's choice among them is not SQL's.
 *  - ties of a sort (equal after rounding) keep the store's order, newest
 *    first, as the evaluator's stable sort does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/runpage.h"
#include "store/runsql.h"
#include "util/isotime.h"

/* Run ids a bitmap may cover (16 MiB); a store with larger ids takes the
 * candidate path. */
#define MAX_ID (((int64_t)1) << 27)
/* Largest |value| compared exactly (integers up to it are exact doubles
 * that 15-digit rounding leaves alone). */
#define MAX_EXACT 1e15
/* Rows a PostgreSQL walk reads at first (then four times more each
 * batch, up to BATCH_MAX). */
#define BATCH_MIN 256
#define BATCH_MAX 65536

typedef struct rf {
  pmcp_store *s;
  pmcp__sql *q;
  int64_t tenant, project;
  size_t words;      /* bitmap size in 64-bit words */
  uint64_t *scope;   /* the project's live runs */
  /* Set (runpage.c): the walks read the runs this SQL keeps (" AND ..."
   * over runs r, texts from ?8), not the bitmaps. */
  const char *where;
  const char *const *wtxt;
  int wn;
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
    double l = pmcp__rt_listed(unkey(mid));
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

/* Binds for a scan: ?1 tenant, then ?2 onwards in order. */
#define SCAN_BINDS 6
typedef struct scan_args {
  struct {
    int kind; /* 0 text, 1 double, 2 integer */
    const char *text;
    double num;
    int64_t i;
  } v[SCAN_BINDS];
  int n;
} scan_args;

/* Adds a bind; its placeholder number. */
static int arg_text(scan_args *a, const char *t)
{
  a->v[a->n].kind = 0;
  a->v[a->n].text = t;
  return 2 + a->n++;
}

static int arg_num(scan_args *a, double d)
{
  a->v[a->n].kind = 1;
  a->v[a->n].num = d;
  return 2 + a->n++;
}

static int arg_int(scan_args *a, int64_t i)
{
  a->v[a->n].kind = 2;
  a->v[a->n].i = i;
  return 2 + a->n++;
}

/* Runs @p sql (first column: a run id) and sets each id's bit in @p out.
 * Binds ?1 tenant, ?2.. the texts then the numbers of @p a. */
static int scan(rf *c, const char *sql, const scan_args *a, uint64_t *out)
{
  pmcp__stmt *st;
  int rc = pmcp__sql_prep_text(c->s, c->q, sql, &st);
  if (rc)
    return rc;
  int src;
  pmcp__st_bind_int64(st, 1, c->tenant);
  for (int i = 0; i < a->n; i++) {
    if (a->v[i].kind == 0)
      pmcp__st_bind_text(st, i + 2, a->v[i].text);
    else if (a->v[i].kind == 1)
      pmcp__st_bind_double(st, i + 2, a->v[i].num);
    else
      pmcp__st_bind_int64(st, i + 2, a->v[i].i);
  }
  int64_t max = (int64_t)c->words * 64;
  while ((src = pmcp__st_step(st)) == PMCP__ROW) {
    int64_t id = pmcp__st_int64(st, 0);
    if (id >= 0 && id < max)
      bm_set(out, id);
  }
  rc = src == PMCP__DONE ? 0 : pmcp__st_err(c->s, st, "read the run table");
  pmcp__sql_release(c->q, st);
  return rc;
}

/* Appends to @p sql the condition "@p e is in range @p r" (not empty),
 * its bounds to @p a: doubles, or (@p ints) the integers in the range. */
static void put_cond(char *sql, size_t size, const char *e, const range *r, scan_args *a,
                     int ints)
{
  size_t n = strlen(sql);
  /* integers x within [lo, hi] are those within [ceil(lo), floor(hi)];
   * the bounds stay near the compared value, far inside int64 */
  int lo = !r->has_lo ? 0 : ints ? arg_int(a, (int64_t)ceil(r->lo)) : arg_num(a, r->lo);
  int hi = !r->has_hi ? 0 : ints ? arg_int(a, (int64_t)floor(r->hi)) : arg_num(a, r->hi);
  if (lo && hi)
    snprintf(sql + n, size - n, "%s BETWEEN ?%d AND ?%d", e, lo, hi);
  else if (lo)
    snprintf(sql + n, size - n, "%s >= ?%d", e, lo);
  else if (hi)
    snprintf(sql + n, size - n, "%s <= ?%d", e, hi);
  else
    snprintf(sql + n, size - n, "%s IS NOT NULL", e);
}

/* Appends " AND (@p e in range @p r)" to @p sql, its bounds to @p a. */
static void put_range(char *sql, size_t size, const char *e, const range *r, scan_args *a)
{
  size_t n = strlen(sql);
  snprintf(sql + n, size - n, " AND ");
  if (r->empty)
    snprintf(sql + n, size - n, " AND 1=0");
  else
    put_cond(sql, size, e, r, a, 0);
}

/* Appends " AND (the number attribute row a lists is in range @p r)".
 * SQLite states it as its index does (runsql.h). On PostgreSQL the
 * index over coalesce(v_real, v_int) cannot serve under row-level
 * security (the planner takes COALESCE for a leaky expression and keeps
 * it behind the policy), so the two columns are compared apart, each
 * with an index of its own (v11). */
static void put_num_range(const rf *c, char *sql, size_t size, const range *r, scan_args *a)
{
  if (!c->q->ops->pg || r->empty) {
    put_range(sql, size, PMCP__RT_NUM_SQ, r, a);
    return;
  }
  size_t n = strlen(sql);
  snprintf(sql + n, size - n, " AND a.type<>'bool' AND (");
  put_cond(sql, size, "a.v_real", r, a, 0);
  n = strlen(sql);
  snprintf(sql + n, size - n, " OR (a.v_real IS NULL AND ");
  put_cond(sql, size, "a.v_int", r, a, 1);
  n = strlen(sql);
  snprintf(sql + n, size - n, "))");
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

#define ATTR_SCAN                                                                          \
  "SELECT a.owner_id FROM attributes a WHERE a.tenant_id=?1 AND a.owner_kind='run' AND"     \
  " a.path=?2"

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
  scan_args a = {.n = 0};
  arg_text(&a, path);
  if (cJSON_IsString(v)) {
    int64_t ms;
    /* an ISO 8601 time: datetime attributes (epoch ms, no text) compare
     * with it as instants (filter.h), in the evaluator */
    if (!text_exact(op, v->valuestring) || !pmcp__iso_parse_ms(v->valuestring, &ms, NULL))
      return 1;
    static const char *const sym[][2] = {{"eq", "="}, {"gt", ">"}, {"gte", ">="},
                                         {"lt", "<"}, {"lte", "<="}};
    const char *o = "=";
    for (size_t i = 0; i < sizeof sym / sizeof sym[0]; i++)
      if (!strcmp(op, sym[i][0]))
        o = sym[i][1];
    if (!out)
      return 0;
    snprintf(sql, sizeof sql, ATTR_SCAN " AND a.v_text%s %s ?%d",
             strcmp(o, "=") ? PMCP__RT_BYTES(c->q) : "", o, arg_text(&a, v->valuestring));
    return scan(c, sql, &a, out);
  }
  if (!cJSON_IsNumber(v) || !(v->valuedouble > -MAX_EXACT && v->valuedouble < MAX_EXACT))
    return 1; /* booleans: no index; huge numbers: integers round */
  if (!out)
    return 0;
  range r = listed_range(op, v->valuedouble);
  snprintf(sql, sizeof sql, ATTR_SCAN);
  put_num_range(c, sql, sizeof sql, &r, &a);
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

/* ---- run columns and tags (sys/ paths) --------------------------------- */

/* The run row's column behind a text sys/ path, or NULL. A run lists the
 * path only when the column is not empty (names default to the id). */
const char *pmcp__rf_run_col(const char *path)
{
  static const char *const cols[][2] = {
    {"sys/state", "r.status"}, {"sys/name", "r.name"}, {"sys/id", "r.slug"}};
  for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
    if (!strcmp(path, cols[i][0]))
      return cols[i][1];
  return NULL;
}

/* The literal prefix of a pattern "^literal" (no metacharacter after the
 * anchor: the pattern then matches exactly the texts starting with it),
 * copied to @p out; 0 when the pattern is anything else. */
int pmcp__rf_literal_prefix(const char *re, char *out, size_t size)
{
  if (re[0] != '^')
    return 0;
  size_t n = strlen(re + 1);
  if (n + 1 >= size)
    return 0;
  for (size_t i = 1; re[i]; i++)
    if (strchr(".^$*+?()[]{}|\\", re[i]) || (unsigned char)re[i] < 0x20)
      return 0;
  memcpy(out, re + 1, n + 1);
  return 1;
}

/* Scans the project's live runs whose column @p col (not empty) also
 * satisfies @p cond (SQL over the binds already in @p a after ?2). */
static int col_scan(rf *c, const char *col, const char *cond, scan_args *a, uint64_t *out)
{
  char sql[500];
  snprintf(sql, sizeof sql,
           "SELECT r.id FROM runs r WHERE r.tenant_id=?1 AND r.project_id=?2 AND r.deleted=0"
           " AND %s<>''%s%s", col, *cond ? " AND " : "", cond);
  return scan(c, sql, a, out);
}

/* The runs whose column @p col equals one of the strings of @p vals (an
 * array) or @p one. */
static int col_eq(rf *c, const char *col, const cJSON *vals, const cJSON *one, uint64_t *out)
{
  const cJSON *it = vals ? vals->child : one;
  for (; it; it = vals ? it->next : NULL) {
    if (!cJSON_IsString(it))
      continue; /* another type never equals a text */
    scan_args a = {.n = 0};
    arg_int(&a, c->project);
    char cond[80];
    snprintf(cond, sizeof cond, "%s = ?%d", col, arg_text(&a, it->valuestring));
    int rc = col_scan(c, col, cond, &a, out);
    if (rc)
      return rc;
  }
  return 0;
}

/* A condition on a run column: exact for eq, ne, in, not_in, exists, the
 * ordered comparisons with a text and matches with a literal prefix.
 * Returns 0, 1 (not exact) or an error; with @p out NULL only decides. */
static int col_leaf(rf *c, const char *col, const char *op, const cJSON *v, uint64_t *out)
{
  char prefix[256];
  int exists = !strcmp(op, "exists"), eq = !strcmp(op, "eq") || !strcmp(op, "in");
  int neg = !strcmp(op, "ne") || !strcmp(op, "not_in");
  int ordered = is_cmp(op) && strcmp(op, "eq") && cJSON_IsString(v);
  int pre = !strcmp(op, "matches") && cJSON_IsString(v) &&
            pmcp__rf_literal_prefix(v->valuestring, prefix, sizeof prefix);
  if (!exists && !eq && !neg && !ordered && !pre)
    return 1;
  if (!out)
    return 0;
  int many = !strcmp(op, "in") || !strcmp(op, "not_in");
  scan_args a = {.n = 0};
  arg_int(&a, c->project);
  char cond[200] = "";
  if (exists || neg) {
    int rc = col_scan(c, col, "", &a, out);
    if (rc || (exists && (!v || cJSON_IsTrue(v))))
      return rc;
    uint64_t *eqs = bm_new(c, 0);
    if (!eqs)
      return PMCP_ENOMEM;
    rc = exists ? 0 : col_eq(c, col, many ? v : NULL, many ? NULL : v, eqs);
    for (size_t i = 0; !rc && i < c->words; i++)
      out[i] = exists ? ~out[i] : out[i] & ~eqs[i]; /* exists false: none; the scope cuts */
    free(eqs);
    return rc;
  }
  if (eq)
    return col_eq(c, col, many ? v : NULL, many ? NULL : v, out);
  if (ordered) {
    static const char *const sym[][2] = {{"gt", ">"}, {"gte", ">="}, {"lt", "<"},
                                         {"lte", "<="}};
    const char *o = ">";
    for (size_t i = 0; i < sizeof sym / sizeof sym[0]; i++)
      if (!strcmp(op, sym[i][0]))
        o = sym[i][1];
    snprintf(cond, sizeof cond, "%s%s %s ?%d", col, PMCP__RT_BYTES(c->q), o,
             arg_text(&a, v->valuestring));
    return col_scan(c, col, cond, &a, out);
  }
  /* matches "^prefix": the texts in [prefix, prefix with its last byte
   * raised), bytewise (UTF-8 never holds 0xff) */
  size_t n = strlen(prefix);
  if (!n)
    return col_scan(c, col, "", &a, out);
  char upper[256];
  memcpy(upper, prefix, n + 1);
  upper[n - 1] = (char)((unsigned char)upper[n - 1] + 1);
  int lo = arg_text(&a, prefix), hi = arg_text(&a, upper);
  snprintf(cond, sizeof cond, "%s%s >= ?%d AND %s%s < ?%d", col, PMCP__RT_BYTES(c->q), lo, col,
           PMCP__RT_BYTES(c->q), hi);
  return col_scan(c, col, cond, &a, out);
}

#define TAG_SCAN                                                                           \
  "SELECT g.owner_id FROM tags g WHERE g.tenant_id=?1 AND g.owner_kind='run' AND g.tag=?2"

/* sys/tags (a set): contains, contains_any, contains_all, each a
 * membership test of whole tags. */
static int tags_leaf(rf *c, const char *op, const cJSON *v, uint64_t *out)
{
  int all = !strcmp(op, "contains_all");
  if (!strcmp(op, "contains") ? !cJSON_IsString(v)
                              : (strcmp(op, "contains_any") && !all) || !cJSON_IsArray(v))
    return 1;
  if (!out)
    return 0;
  const cJSON *it = cJSON_IsString(v) ? v : v->child;
  uint64_t *one = all ? bm_new(c, 0) : NULL;
  int rc = all && !one ? PMCP_ENOMEM : 0;
  if (all && !it)
    memset(out, 0xff, c->words * sizeof *out); /* all of none: every run */
  for (int first = 1; !rc && it; it = cJSON_IsString(v) ? NULL : it->next, first = 0) {
    if (!cJSON_IsString(it)) {
      rc = 1;
      break;
    }
    scan_args a = {.n = 0};
    arg_text(&a, it->valuestring);
    if (!all) {
      rc = scan(c, TAG_SCAN, &a, out);
      continue;
    }
    memset(one, 0, c->words * sizeof *one);
    rc = scan(c, TAG_SCAN, &a, one);
    for (size_t i = 0; !rc && i < c->words; i++)
      out[i] = first ? one[i] : out[i] & one[i];
  }
  free(one);
  return rc;
}

static int sys_leaf(rf *c, const char *path, const char *op, const cJSON *v, uint64_t *out)
{
  const char *col = pmcp__rf_run_col(path);
  if (col)
    return col_leaf(c, col, op, v, out);
  if (!strcmp(path, "sys/tags"))
    return tags_leaf(c, op, v, out);
  return 1; /* times, experiment, duration: the candidate path */
}

static int attr_leaf(rf *c, const cJSON *cond, uint64_t *out)
{
  const char *path = js(cond, "attr"), *op = js(cond, "op");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(cond, "value");
  if (!path || !op)
    return 1;
  if (!strncmp(path, "sys/", 4))
    return sys_leaf(c, path, op, v, out);
  int neg = 0, rc;
  uint64_t *have = NULL;
  if (!strcmp(op, "exists")) {
    if (!out)
      return 0;
    scan_args a = {.n = 0};
    arg_text(&a, path);
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
      scan_args a = {.n = 0};
      arg_text(&a, path);
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
const char *pmcp__rf_series_expr(const char *fn)
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
  /* SQLite v11's series_key_shape leads with the key (across tenants);
   * PostgreSQL's with the tenant, as its other indexes */
  static const char *const sql[2][2] = {
    {"SELECT labels, kind FROM series WHERE key=?1 AND scale=?2 AND ?3 > 0"
     " ORDER BY labels, kind LIMIT 1",
     "SELECT labels, kind FROM series WHERE key=?1 AND scale=?2 AND ?3 > 0"
     " ORDER BY labels DESC, kind DESC LIMIT 1"},
    {"SELECT labels, kind FROM series WHERE tenant_id=?3 AND key=?1 AND scale=?2"
     " ORDER BY labels, kind LIMIT 1",
     "SELECT labels, kind FROM series WHERE tenant_id=?3 AND key=?1 AND scale=?2"
     " ORDER BY labels DESC, kind DESC LIMIT 1"}};
  char *got[2][2] = {{NULL, NULL}, {NULL, NULL}};
  int rc = 0, n = 0;
  for (int i = 0; i < 2 && !rc; i++) {
    pmcp__stmt *st;
    if ((rc = pmcp__sql_prep(c->s, c->q, sql[c->q->ops->pg ? 1 : 0][i], &st)))
      break;
    pmcp__st_bind_text(st, 1, key);
    pmcp__st_bind_text(st, 2, scale);
    pmcp__st_bind_int64(st, 3, c->tenant);
    int src = pmcp__st_step(st);
    if (src == PMCP__ROW) {
      n++;
      const char *l = pmcp__st_text(st, 0);
      const char *k = pmcp__st_text(st, 1);
      got[i][0] = strdup(l ? l : "");
      got[i][1] = strdup(k ? k : "");
      if (!got[i][0] || !got[i][1])
        rc = PMCP_ENOMEM;
    } else if (src != PMCP__DONE) {
      rc = pmcp__st_err(c->s, st, "read the run table");
    }
    pmcp__st_reset(st);
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
  scan_args a = {.n = 0};
  arg_text(&a, key);
  arg_text(&a, scale);
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
  const char *e = pmcp__rf_series_expr(fn);
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
    scan_args h = {.n = 0};
    arg_text(&h, key);
    arg_text(&h, scale);
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

/* The LIMIT of a walk's next statement: none on SQLite (-1: it streams
 * and stops when the page is full), a batch growing fourfold on
 * PostgreSQL. */
static int64_t next_batch(const rf *c, int64_t *batch)
{
  if (!c->q->ops->pg)
    return -1;
  int64_t b = *batch;
  *batch = b * 4 < BATCH_MAX ? b * 4 : BATCH_MAX;
  return b;
}

/* Walks the project's live runs newest first (the store's order) and
 * places those set in @p want until the page is full. */
static int walk_store_order(rf *c, const uint64_t *want, page *p)
{
  static const char first_q[] = "SELECT id, created FROM runs WHERE tenant_id=?1 AND"
                                " project_id=?2 AND deleted=0"
                                " ORDER BY created DESC, id DESC LIMIT ?3";
  static const char next_q[] = "SELECT id, created FROM runs WHERE tenant_id=?1 AND"
                               " project_id=?2 AND deleted=0 AND created <= ?4 AND"
                               " (created < ?4 OR id < ?5) ORDER BY created DESC, id DESC"
                               " LIMIT ?3";
  int64_t max = (int64_t)c->words * 64, batch = BATCH_MIN, last_id = 0, last_created = 0;
  int rc = 0, more = 1, first = 1;
  while (!rc && more && p->pos < p->need) {
    pmcp__stmt *st;
    if ((rc = pmcp__sql_prep(c->s, c->q, first ? first_q : next_q, &st)))
      break;
    int64_t lim = next_batch(c, &batch), rows = 0;
    pmcp__st_bind_int64(st, 1, c->tenant);
    pmcp__st_bind_int64(st, 2, c->project);
    pmcp__st_bind_int64(st, 3, lim);
    if (!first) {
      pmcp__st_bind_int64(st, 4, last_created);
      pmcp__st_bind_int64(st, 5, last_id);
    }
    int src;
    while (p->pos < p->need && (src = pmcp__st_step(st)) == PMCP__ROW) {
      int64_t id = pmcp__st_int64(st, 0);
      last_id = id;
      last_created = pmcp__st_int64(st, 1);
      rows++;
      if (id >= 0 && id < max && bm_has(want, id))
        put_id(p, id);
    }
    if (p->pos < p->need && src != PMCP__DONE)
      rc = pmcp__st_err(c->s, st, "read the run table");
    pmcp__st_reset(st);
    more = lim > 0 && rows == lim;
    first = 0;
  }
  return rc;
}

typedef pmcp__rf_run member;

int pmcp__rf_newest_first(const void *a, const void *b)
{
  const member *x = a, *y = b;
  if (x->created != y->created)
    return x->created > y->created ? -1 : 1;
  return x->id > y->id ? -1 : x->id < y->id;
}
#define newest_first pmcp__rf_newest_first

static int by_id(const void *a, const void *b)
{
  const member *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* Reads the creation times of g[0..n) (sorted by id). A tie group can
 * hold thousands of runs: SQLite looks each up by its primary key, while
 * PostgreSQL, where each statement is a round trip, takes them all as one
 * int8[] parameter. (Fixed statement texts: SQLite's cache of built ones
 * could drop the walk's statement under it.) */
static int group_created(rf *c, member *g, size_t n)
{
  static const char one[] = "SELECT id, created FROM runs WHERE id=?1";
  static const char all[] = "SELECT id, created FROM runs WHERE id = ANY(?1::int8[])";
  pmcp_buf ids = PMCP_BUF_INIT;
  int pg = c->q->ops->pg, rc = 0;
  for (size_t i = 0; pg && !rc && i < n; i++)
    rc = pmcp__buf_printf(&ids, "%c%lld", i ? ',' : '{', (long long)g[i].id);
  if (pg && !rc)
    rc = pmcp__buf_puts(&ids, "}");
  if (rc) {
    pmcp_buf_dispose(&ids);
    return pmcp_store_set_error(c->s, PMCP_ENOMEM, "out of memory");
  }
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(c->s, c->q, pg ? all : one, &st))) {
    pmcp_buf_dispose(&ids);
    return rc;
  }
  for (size_t i = 0; !rc && i < (pg ? 1 : n); i++) {
    if (pg)
      pmcp__st_bind_text(st, 1, ids.ptr);
    else
      pmcp__st_bind_int64(st, 1, g[i].id);
    int src;
    while ((src = pmcp__st_step(st)) == PMCP__ROW) {
      member key = {pmcp__st_int64(st, 0), 0};
      member *hit = bsearch(&key, g, n, sizeof *g, by_id);
      if (hit)
        hit->created = pmcp__st_int64(st, 1);
    }
    if (src != PMCP__DONE)
      rc = pmcp__st_err(c->s, st, "read the run table");
    pmcp__st_reset(st);
  }
  pmcp_buf_dispose(&ids);
  return rc;
}

/* Places a group of matches with one sort value: in the store's order
 * when part of it lands on the page. */
static int flush_group(rf *c, member *g, size_t n, page *p)
{
  if (p->pos + n <= p->offset || p->pos >= p->need) {
    p->pos += n;
    return 0;
  }
  if (!c->where) { /* with a SQL condition the walk read them */
    qsort(g, n, sizeof *g, by_id);
    int rc = group_created(c, g, n);
    if (rc)
      return rc;
  }
  if (n > 1)
    qsort(g, n, sizeof *g, newest_first);
  for (size_t i = 0; i < n; i++)
    put_id(p, g[i].id);
  return 0;
}

/* The state of a series walk: the current group of matches with one
 * listed value. */
typedef struct swalk {
  member *g;
  size_t n, cap;
  double raw, lv, glv;
  int have_raw, done;
  uint64_t *valued;
} swalk;

/* Takes one row (run @p id, value @p x) of the walk in value order. */
static int walk_row(rf *c, swalk *w, const uint64_t *m, page *p, int64_t id, double x,
                    int64_t created)
{
  int64_t max = (int64_t)c->words * 64;
  if (!c->where) {
    if (id < 0 || id >= max || !bm_has(c->scope, id))
      return 0;
    bm_set(w->valued, id);
    if (!bm_has(m, id))
      return 0;
  }
  if (!w->have_raw || x != w->raw) {
    w->raw = x;
    w->lv = pmcp__rt_listed(x);
    w->have_raw = 1;
  }
  if (w->n && w->lv != w->glv) {
    int rc = flush_group(c, w->g, w->n, p);
    w->n = 0;
    if (rc)
      return rc;
    if (p->pos >= p->need) {
      w->done = 1;
      return 0;
    }
  }
  if (w->n == w->cap) {
    member *ng = realloc(w->g, (w->cap *= 2) * sizeof *w->g);
    if (!ng)
      return PMCP_ENOMEM;
    w->g = ng;
  }
  w->glv = w->lv;
  w->g[w->n].id = id;
  w->g[w->n++].created = created;
  return 0;
}

/* The rest of a series sort's page (c->where set): the runs kept without
 * a value of the sort, newest first, after the valued ones placed. */
static int walk_unvalued(rf *c, const pmcp__rt_sort *so, const char *e, page *p)
{
  size_t skip = p->offset > p->pos ? p->offset - p->pos : 0;
  char sql[2600];
  if (strlen(c->where) + 500 > sizeof sql)
    return 1;
  snprintf(sql, sizeof sql,
           "SELECT r.id FROM runs r WHERE r.tenant_id=?3 AND r.project_id=?7 AND r.deleted=0%s"
           " AND NOT EXISTS(SELECT 1 FROM series s WHERE s.run_id=r.id AND s.key=?1 AND"
           " s.scale=?2 AND s.tenant_id=?3 AND %s IS NOT NULL)"
           " ORDER BY r.created DESC, r.id DESC LIMIT ?4 OFFSET ?5", c->where, e);
  pmcp__stmt *st;
  int rc = pmcp__sql_prep_text(c->s, c->q, sql, &st);
  if (rc)
    return rc;
  pmcp__st_bind_text(st, 1, so->series);
  pmcp__st_bind_text(st, 2, so->scale ? so->scale : "step");
  pmcp__st_bind_int64(st, 3, c->tenant);
  pmcp__st_bind_int64(st, 4, (int64_t)(p->need - p->pos - skip));
  pmcp__st_bind_int64(st, 5, (int64_t)skip);
  pmcp__st_bind_int64(st, 6, 0);
  pmcp__st_bind_int64(st, 7, c->project);
  for (int i = 0; i < c->wn; i++)
    pmcp__st_bind_text(st, 8 + i, c->wtxt[i]);
  p->pos += skip;
  int src;
  while (p->pos < p->need && (src = pmcp__st_step(st)) == PMCP__ROW)
    put_id(p, pmcp__st_int64(st, 0));
  if (p->pos < p->need && src != PMCP__DONE)
    rc = pmcp__st_err(c->s, st, "read the run table");
  pmcp__sql_release(c->q, st);
  return rc;
}

/* The page for a series sort: the key's series in value order, ties (equal
 * once rounded) in the store's order, then the matches without a value in
 * the store's order. */
static int walk_series(rf *c, const pmcp__rt_sort *so, const uint64_t *m, page *p)
{
  const char *e = pmcp__rf_series_expr(so->function);
  const char *dir = so->desc ? "DESC" : "ASC", *cmp = so->desc ? "<" : ">";
  char sql[2][2400];
  /* (value, run id) order: the index's for `last`, and a key to continue;
   * with a SQL condition, each row joined to its run and checked */
  char from[2000] = "FROM series WHERE key=?1 AND scale=?2 AND tenant_id=?3 AND";
  if (c->where && strlen(c->where) + 300 > sizeof from)
    return 1;
  /* each row's run looked up by id in the index's order: PostgreSQL
   * would rather hash every run of the project (see runpage.c) */
  if (c->where && c->q->ops->pg)
    snprintf(from, sizeof from,
             "FROM series s CROSS JOIN LATERAL (SELECT r.created FROM runs r WHERE"
             " r.id=s.run_id AND r.tenant_id=?3 AND r.project_id=?7 AND r.deleted=0%s OFFSET 0)"
             " r WHERE s.key=?1 AND s.scale=?2 AND s.tenant_id=?3 AND", c->where);
  else if (c->where)
    snprintf(from, sizeof from,
             "FROM series s CROSS JOIN runs r ON r.id=s.run_id WHERE s.key=?1 AND s.scale=?2 AND"
             " s.tenant_id=?3 AND r.tenant_id=?3 AND r.project_id=?7 AND r.deleted=0%s AND",
             c->where);
  const char *rid = c->where ? "s.run_id" : "run_id", *crt = c->where ? "r.created" : "0";
  snprintf(sql[0], sizeof sql[0],
           "SELECT %s, %s, %s %s %s IS NOT NULL ORDER BY %s %s, %s %s LIMIT ?4", rid, e, crt,
           from, e, e, dir, rid, dir);
  snprintf(sql[1], sizeof sql[1],
           "SELECT %s, %s, %s %s %s IS NOT NULL AND %s %s= ?5 AND (%s %s ?5 OR %s %s ?6)"
           " ORDER BY %s %s, %s %s LIMIT ?4", rid, e, crt, from, e, e, cmp, e, cmp, rid, cmp,
           e, dir, rid, dir);
  swalk w = {NULL, 0, 64, 0, 0, 0, 0, 0, c->where ? NULL : bm_new(c, 0)};
  w.g = malloc(w.cap * sizeof *w.g);
  int rc = (!c->where && !w.valued) || !w.g ? PMCP_ENOMEM : 0, more = 1, first = 1;
  int64_t batch = BATCH_MIN, last_id = 0;
  double last_x = 0;
  while (!rc && more && !w.done) {
    pmcp__stmt *st;
    if ((rc = pmcp__sql_prep_text(c->s, c->q, sql[first ? 0 : 1], &st)))
      break;
    int64_t lim = next_batch(c, &batch), rows = 0;
    pmcp__st_bind_text(st, 1, so->series);
    pmcp__st_bind_text(st, 2, so->scale ? so->scale : "step");
    pmcp__st_bind_int64(st, 3, c->tenant);
    pmcp__st_bind_int64(st, 4, lim);
    if (!first) {
      pmcp__st_bind_double(st, 5, last_x);
      pmcp__st_bind_int64(st, 6, last_id);
    } else if (c->where) {
      /* ?5 and ?6 unused on the first batch: bound all the same */
      pmcp__st_bind_double(st, 5, 0);
      pmcp__st_bind_int64(st, 6, 0);
    }
    if (c->where) {
      pmcp__st_bind_int64(st, 7, c->project);
      for (int i = 0; i < c->wn; i++)
        pmcp__st_bind_text(st, 8 + i, c->wtxt[i]);
    }
    int src;
    while (!rc && !w.done && (src = pmcp__st_step(st)) == PMCP__ROW) {
      last_id = pmcp__st_int64(st, 0);
      last_x = pmcp__st_double(st, 1);
      rows++;
      rc = walk_row(c, &w, m, p, last_id, last_x, pmcp__st_int64(st, 2));
    }
    if (!rc && !w.done && src != PMCP__DONE)
      rc = pmcp__st_err(c->s, st, "read the run table");
    pmcp__sql_release(c->q, st);
    more = lim > 0 && rows == lim;
    first = 0;
  }
  if (!rc && !w.done && w.n)
    rc = flush_group(c, w.g, w.n, p);
  if (!rc && !w.done && p->pos < p->need && c->where) {
    rc = walk_unvalued(c, so, e, p);
  } else if (!rc && !w.done && p->pos < p->need) {
    /* every valued run was seen: the rest have no value */
    for (size_t i = 0; i < c->words; i++)
      w.valued[i] = m[i] & ~w.valued[i];
    rc = walk_store_order(c, w.valued, p);
  }
  free(w.g);
  free(w.valued);
  return rc;
}

int pmcp__rf_series_where(pmcp_store *s, pmcp__sql *q, int64_t tenant, int64_t project,
                          const pmcp__rt_sort *so, const char *where, const char *const *txt,
                          int n_txt, size_t offset, size_t limit, pmcp__rt_page *out)
{
  rf c = {s, q, tenant, project, 0, NULL, where, txt, n_txt};
  page p = {out, offset, offset + limit, 0};
  return walk_series(&c, so, NULL, &p);
}

/* Whether the sort can be answered here (0) or not (1). */
static int sort_exact(rf *c, const pmcp__rt_sort *so)
{
  if (!so)
    return 0;
  if (so->attr || so->labels || !so->series || !pmcp__rf_series_expr(so->function))
    return 1;
  int one = one_series(c, so->series, so->scale ? so->scale : "step");
  return one < 0 ? one : !one;
}

/* Sets the bits of the run ids @p sql (over ?1 tenant, ?2 project) gives. */
static int scan_ids(rf *c, const char *sql, uint64_t *out, int64_t max_id)
{
  pmcp__stmt *st;
  int rc = pmcp__sql_prep(c->s, c->q, sql, &st), src;
  if (rc)
    return rc;
  pmcp__st_bind_int64(st, 1, c->tenant);
  pmcp__st_bind_int64(st, 2, c->project);
  while ((src = pmcp__st_step(st)) == PMCP__ROW) {
    int64_t id = pmcp__st_int64(st, 0);
    if (id >= 0 && id <= max_id)
      bm_set(out, id);
  }
  rc = src == PMCP__DONE ? 0 : pmcp__st_err(c->s, st, "read the run table");
  pmcp__st_reset(st);
  return rc;
}

static int max_run_id(rf *c, int64_t *out)
{
  /* no WHERE: SQLite reads the last key of the primary index */
  static const char sql[] = "SELECT max(id) FROM runs";
  pmcp__stmt *st;
  int rc = pmcp__sql_prep(c->s, c->q, sql, &st);
  if (rc)
    return rc;
  int src = pmcp__st_step(st);
  *out = src == PMCP__ROW ? pmcp__st_int64(st, 0) : 0;
  rc = src == PMCP__ROW ? 0 : pmcp__st_err(c->s, st, "read the run table");
  pmcp__st_reset(st);
  return rc;
}

int pmcp__store_run_page(pmcp_store *s, pmcp_tenant t, const pmcp__rt_page_query *rq,
                         pmcp__rt_page *out)
{
  memset(out, 0, sizeof *out);
  pmcp__sql *q = pmcp__rt_sql(s);
  if (!q)
    return PMCP_EUNSUPPORTED;
  rf c = {s, q, t.id, 0, 0, NULL, NULL, NULL, 0};
  uint64_t *m = NULL;
  int own = 0;
  int rc = pmcp__rt_read_begin(s, q, t, &own);
  if (rc)
    return rc;
  if ((rc = pmcp__rt_project_id(s, q, t, rq->project, &c.project)))
    goto out;
  /* every condition and the sort exact, before any scan */
  if ((rc = filter_bits(&c, rq->filter, NULL)) || (rc = sort_exact(&c, rq->sort)))
    goto out;
  out->ids = malloc((rq->limit ? rq->limit : 1) * sizeof *out->ids);
  if (!out->ids) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  /* conditions on the run row and its tags: read in the page's order */
  if ((rc = pmcp__rp_page(s, q, t.id, c.project, rq, out)) != 1)
    goto out;
  int64_t max_id = 0;
  if ((rc = max_run_id(&c, &max_id)))
    goto out;
  if (max_id >= MAX_ID) {
    rc = 1;
    goto out;
  }
  c.words = (size_t)(max_id / 64 + 1);
  c.scope = bm_new(&c, 0);
  m = bm_new(&c, 1);
  if (!c.scope || !m) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  static const char scope_q[] = "SELECT id FROM runs WHERE tenant_id=?1 AND project_id=?2 AND"
                                " deleted=0";
  if ((rc = scan_ids(&c, scope_q, c.scope, max_id)) || (rc = filter_bits(&c, rq->filter, m)))
    goto out;
  for (size_t i = 0; i < c.words; i++) {
    m[i] &= c.scope[i];
    out->total += popcount64(m[i]);
  }
  page p = {out, rq->offset, rq->offset + rq->limit, 0};
  rc = rq->sort ? walk_series(&c, rq->sort, m, &p) : walk_store_order(&c, m, &p);
out:
  free(c.scope);
  free(m);
  int inexact = rc == 1;
  rc = pmcp__rt_read_end(s, q, own, inexact ? 0 : rc);
  if (!rc && inexact)
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
