/* SPDX-License-Identifier: MIT */
/* The run table (runtable.h) for both built-in backends, over sql.h: a
 * project's runs narrowed by the filter conditions SQL can state, then the
 * attribute values, tags and series summaries the caller asked for, each
 * in one query over those runs (values typed as the backend holds them:
 * no text round trip of doubles on SQLite).
 *
 * What is pushed down is always a necessary condition of the caller's
 * evaluator (filter.c): eq on a string value (v_text equal), eq / gt / gte
 * / lt / lte on a number (the numeric columns), in over strings, exists,
 * sys/state, sys/name and sys/id equality, series comparisons on last,
 * first, min, max and count over any series of the key and scale (the
 * evaluator picks one of them), series exists; an any_of group when every
 * member can be stated. Everything else is left to the evaluator, and so
 * is a condition whose binds would pass the backend's parameter limit.
 *
 * Numbers: the store's listings give doubles rounded to 15 significant
 * digits (SQLite's JSON; PostgreSQL's float8::numeric), and the evaluator
 * has always compared those; values here are rounded the same way
 * (pmcp__rt_listed()) so both paths agree, and pushed comparisons are
 * widened by a relative 1e-13 so a value that only passes after rounding
 * is never dropped by SQL.
 *
 * Where the backends differ (runsql.h says what): the candidates of the
 * later set queries are an int8[] parameter on PostgreSQL (its planner
 * then never re-plans the filter) and, on SQLite, one index scan whose
 * rows of other runs are passed over; a run's series come in the listing's
 * order from SQL on PostgreSQL and are ordered here on SQLite. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/runsql.h"
#include "store/ws_scope.h"
#include "util/isotime.h"

/* ---- statement text with its binds -------------------------------------- */

#define MAX_BINDS 400

typedef struct bindv {
  int kind; /* 0 text, 1 double, 2 integer */
  double num;
  int64_t i;
  const char *text;
} bindv;

typedef struct sqlb {
  pmcp__sql *c;
  pmcp_buf sql;
  bindv b[MAX_BINDS];
  int n, max;
  int oom;
} sqlb;

static int bind_v(sqlb *q, int kind, double d, int64_t i, const char *t)
{
  if (q->n >= q->max)
    return -1;
  q->b[q->n] = (bindv){kind, d, i, t};
  return ++q->n;
}
#define bind_text(q, s) bind_v((q), 0, 0, 0, (s))
#define bind_num(q, d) bind_v((q), 1, (d), 0, NULL)

static void put(sqlb *q, const char *fmt, ...) PMCP_PRINTF(2, 3);
static void put(sqlb *q, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char tmp[512];
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof tmp || pmcp__buf_puts(&q->sql, tmp))
    q->oom = 1;
}

/* Appends "x <op> ?k" for a numeric comparison, widened so that rounding
 * to 15 significant digits cannot move a passing value outside it. */
static int put_cmp(sqlb *q, const char *x, const char *op, double w)
{
  double tol = (w < 0 ? -w : w) * 1e-13;
  if (!strcmp(op, "eq")) {
    int a = bind_num(q, w - tol), b = bind_num(q, w + tol);
    if (a < 0 || b < 0)
      return 0;
    put(q, "%s BETWEEN ?%d AND ?%d", x, a, b);
    return 1;
  }
  int up = !strcmp(op, "lt") || !strcmp(op, "lte");
  int k = bind_num(q, up ? w + tol : w - tol);
  if (k < 0)
    return 0;
  put(q, "%s %s ?%d", x, up ? "<=" : ">=", k);
  return 1;
}

/* put_cmp() over an integer column: the integers within the widened
 * bounds (0: not stated, bounds past int64). */
static int put_cmp_int(sqlb *q, const char *x, const char *op, double w)
{
  double tol = (w < 0 ? -w : w) * 1e-13, lo = ceil(w - tol), hi = floor(w + tol);
  if (!(lo > -9e18 && hi < 9e18))
    return 0;
  int eq = !strcmp(op, "eq"), up = !strcmp(op, "lt") || !strcmp(op, "lte");
  int a = eq || !up ? bind_v(q, 2, 0, (int64_t)lo, NULL) : 0;
  int b = eq || up ? bind_v(q, 2, 0, (int64_t)hi, NULL) : 0;
  if (a < 0 || b < 0)
    return 0;
  if (eq)
    put(q, "%s BETWEEN ?%d AND ?%d", x, a, b);
  else
    put(q, "%s %s ?%d", x, up ? "<=" : ">=", up ? b : a);
  return 1;
}

/* Appends the number attribute row `a` lists compared with @p w. On
 * PostgreSQL the columns are compared apart (runfilter.c's put_num_range()
 * says why). */
static int put_num_cmp(sqlb *q, const char *op, double w)
{
  if (!q->c->ops->pg)
    return put_cmp(q, PMCP__RT_NUM_SQ, op, w);
  put(q, "a.type<>'bool' AND (");
  if (!put_cmp(q, "a.v_real", op, w))
    return 0;
  put(q, " OR (a.v_real IS NULL AND ");
  if (!put_cmp_int(q, "a.v_int", op, w))
    return 0;
  put(q, "))");
  return 1;
}

static int cmp_op(const char *op)
{
  return !strcmp(op, "eq") || !strcmp(op, "gt") || !strcmp(op, "gte") || !strcmp(op, "lt") ||
         !strcmp(op, "lte");
}

static const char *js(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ---- the filter pushed down --------------------------------------------- */

/* An ISO 8601 date or date-time: a datetime attribute (held as epoch
 * milliseconds, no text) compares with it as an instant (filter.h). */
static int is_time_text(const cJSON *v)
{
  int64_t ms;
  return cJSON_IsString(v) && !pmcp__iso_parse_ms(v->valuestring, &ms, NULL);
}

/* Appends a boolean SQL expression implied by condition @p c; 1 when
 * appended, 0 when SQL cannot state it (the caller takes back the text). */
static int push_attr(sqlb *q, const cJSON *c)
{
  const char *path = js(c, "attr"), *op = js(c, "op");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, "value");
  if (!path || !op)
    return 0;
  if (!strncmp(path, "sys/", 4)) {
    static const char *const cols[][2] = {{"sys/state", "r.status"}, {"sys/name", "r.name"},
                                          {"sys/id", "r.slug"}};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
      if (!strcmp(path, cols[i][0]) && !strcmp(op, "eq") && cJSON_IsString(v)) {
        int k = bind_text(q, v->valuestring);
        if (k < 0)
          return 0;
        put(q, "%s = ?%d", cols[i][1], k);
        return 1;
      }
    return 0; /* the other sys/ paths are not attribute rows */
  }
  int kp = bind_text(q, path);
  if (kp < 0)
    return 0;
  /* a set (one index range scan), not a lookup per run */
  char head[200];
  snprintf(head, sizeof head,
           "r.id IN (SELECT a.owner_id FROM attributes a WHERE a.tenant_id=?1 AND"
           " a.owner_kind='run' AND a.path=?%d", kp);
  if (!strcmp(op, "exists")) {
    if (v && !cJSON_IsTrue(v))
      return 0;
    put(q, "%s)", head);
    return 1;
  }
  if (!strcmp(op, "eq") && cJSON_IsString(v)) {
    if (is_time_text(v))
      return 0; /* a datetime attribute equals it as an instant */
    int k = bind_text(q, v->valuestring);
    if (k < 0)
      return 0;
    put(q, "%s AND a.v_text = ?%d)", head, k);
    return 1;
  }
  if (cmp_op(op) && cJSON_IsNumber(v)) {
    put(q, "%s AND ", head);
    if (!put_num_cmp(q, op, v->valuedouble))
      return 0;
    put(q, ")");
    return 1;
  }
  if (!strcmp(op, "in") && cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0) {
    const cJSON *it;
    cJSON_ArrayForEach(it, v) if (!cJSON_IsString(it) || is_time_text(it)) return 0;
    put(q, "%s AND a.v_text IN (", head);
    int first = 1;
    cJSON_ArrayForEach(it, v)
    {
      int k = bind_text(q, it->valuestring);
      if (k < 0)
        return 0; /* past the parameter limit: left to the evaluator */
      put(q, "%s?%d", first ? "" : ",", k);
      first = 0;
    }
    put(q, "))");
    return 1;
  }
  return 0;
}

static int push_series(sqlb *q, const cJSON *c)
{
  const char *key = js(c, "series"), *op = js(c, "op"), *fn = js(c, "function");
  const char *scale = js(c, "scale");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, "value");
  if (!key || !op)
    return 0;
  static const char *const cols[][2] = {{"last", "s.last"}, {"first", "s.first"},
                                        {"min", "s.vmin"}, {"max", "s.vmax"},
                                        {"count", "s.count"}};
  const char *col = NULL;
  for (size_t i = 0; fn && i < sizeof cols / sizeof cols[0]; i++)
    if (!strcmp(fn, cols[i][0]))
      col = cols[i][1];
  int kk = bind_text(q, key), ks = bind_text(q, scale ? scale : "step");
  if (kk < 0 || ks < 0)
    return 0;
  char head[200];
  snprintf(head, sizeof head,
           "r.id IN (SELECT s.run_id FROM series s WHERE s.tenant_id=?1 AND s.key=?%d AND"
           " s.scale=?%d", kk, ks);
  if (!strcmp(op, "exists")) {
    if (v && !cJSON_IsTrue(v))
      return 0;
    put(q, "%s)", head);
    return 1;
  }
  if (!cmp_op(op) || !col || !cJSON_IsNumber(v))
    return 0;
  put(q, "%s AND ", head);
  if (!put_cmp(q, col, op, v->valuedouble))
    return 0;
  put(q, ")");
  return 1;
}

static int push_one(sqlb *q, const cJSON *c)
{
  if (cJSON_GetObjectItemCaseSensitive(c, "attr"))
    return push_attr(q, c);
  if (cJSON_GetObjectItemCaseSensitive(c, "series"))
    return push_series(q, c);
  return 0;
}

/* Appends " AND (...)" for each condition SQL can state; how many. */
static size_t push_filter(sqlb *q, const cJSON *filter)
{
  size_t pushed = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, filter)
  {
    size_t mark = q->sql.len;
    int nb = q->n;
    const cJSON *group = cJSON_GetObjectItemCaseSensitive(c, "any_of");
    put(q, " AND (");
    int ok = 1;
    if (group) {
      const cJSON *m;
      int first = 1;
      cJSON_ArrayForEach(m, group)
      {
        if (!first)
          put(q, " OR ");
        first = 0;
        if (!push_one(q, m)) {
          ok = 0;
          break;
        }
      }
      ok = ok && !first;
    } else {
      ok = push_one(q, c);
    }
    if (ok) {
      put(q, ")");
      pushed++;
    } else {
      q->sql.len = mark; /* taken back whole */
      q->n = nb;
    }
  }
  if (q->sql.ptr)
    q->sql.ptr[q->sql.len] = '\0';
  return pushed;
}

/* " AND @p col IN (ids)": store ids are integers, written inline (a page
 * has up to 100, past PostgreSQL's parameter limit). */
static void put_ids(sqlb *q, const pmcp__rt_query *rq, const char *col)
{
  put(q, " AND %s IN (", col);
  for (size_t i = 0; i < rq->n_ids; i++)
    put(q, "%s%lld", i ? "," : "", (long long)rq->ids[i]);
  put(q, ")");
}

/* The runs' scope: project, tenant, live, pushed filter or the chosen ids. */
static void scope(sqlb *q, const pmcp__rt_query *rq, int with_filter, size_t *pushed)
{
  if (rq->ids) {
    /* by id: the unary + keep SQLite from scanning the project's runs
     * through runs_project_list instead */
    put(q, " FROM runs r WHERE +r.tenant_id=?1 AND +r.deleted=0 AND +r.project_id=?2");
    put_ids(q, rq, "r.id");
    return;
  }
  put(q, " FROM runs r WHERE r.tenant_id=?1 AND r.deleted=0 AND r.project_id=?2");
  if (rq->max_rows && rq->after_id > 0) {
    int kc = bind_v(q, 2, 0, rq->after_created, NULL), ki = bind_v(q, 2, 0, rq->after_id, NULL);
    if (kc < 0 || ki < 0)
      q->oom = 1;
    put(q, " AND r.created <= ?%d AND (r.created < ?%d OR r.id < ?%d)", kc, kc, ki);
  }
  if (with_filter && rq->filter) {
    size_t p = push_filter(q, rq->filter);
    if (pushed)
      *pushed = p;
  }
}

/* Restarts @p q with ?1 (tenant) and ?2 (project) bound by prep(), binds
 * numbered from ?3. */
static void reset(sqlb *q)
{
  pmcp__buf_reset(&q->sql);
  q->n = 2;
  q->oom = 0;
}

static int prep(pmcp_store *s, sqlb *q, int64_t tenant, int64_t project, pmcp__stmt **st)
{
  *st = NULL;
  if (q->oom || !q->sql.ptr)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  int rc = pmcp__sql_prep_text(s, q->c, q->sql.ptr, st);
  if (rc)
    return rc;
  pmcp__st_bind_int64(*st, 1, tenant);
  pmcp__st_bind_int64(*st, 2, project);
  for (int i = 2; i < q->n; i++) {
    if (q->b[i].kind == 2)
      pmcp__st_bind_int64(*st, i + 1, q->b[i].i);
    else if (q->b[i].kind == 1)
      pmcp__st_bind_double(*st, i + 1, q->b[i].num);
    else
      pmcp__st_bind_text(*st, i + 1, q->b[i].text);
  }
  return 0;
}

/* Ends a statement stepped to @p src: 0 or the store error. */
static int finish(pmcp_store *s, sqlb *q, pmcp__stmt **st, int src)
{
  int rc = src == PMCP__DONE ? 0 : pmcp__st_err(s, *st, "read the run table");
  pmcp__sql_release(q->c, *st);
  *st = NULL;
  return rc;
}

/* ---- rows into runs ------------------------------------------------------ */

static char *col_dup(pmcp__stmt *st, int c)
{
  const char *t = pmcp__st_text(st, c);
  return t ? strdup(t) : NULL;
}

/* The run with store id @p id (runs sorted by id in @p by_id). */
static pmcp__rt_run *find_run(pmcp__rt_run **by_id, size_t n, int64_t id)
{
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (by_id[mid]->id < id)
      lo = mid + 1;
    else if (by_id[mid]->id > id)
      hi = mid;
    else
      return by_id[mid];
  }
  return NULL;
}

static int by_id_cmp(const void *a, const void *b)
{
  int64_t x = (*(pmcp__rt_run *const *)a)->id, y = (*(pmcp__rt_run *const *)b)->id;
  return x < y ? -1 : x > y;
}

/* The value of an attribute row (type, v_text, v_int, v_real from column
 * @p c) as the store's attribute listing gives it. */
static cJSON *attr_value(pmcp__stmt *st, int c)
{
  const char *type = pmcp__st_text(st, c);
  if (type && !strcmp(type, "datetime") && !pmcp__st_null(st, c + 2)) {
    char iso[48]; /* shown as ISO 8601 UTC with milliseconds, not epoch ms */
    pmcp__iso_ms(pmcp__st_int64(st, c + 2), iso, sizeof iso);
    return cJSON_CreateString(iso);
  }
  if (type && !strcmp(type, "string_set"))
    return cJSON_Parse(pmcp__st_text(st, c + 1));
  if (type && !strcmp(type, "bool"))
    return cJSON_CreateBool(pmcp__st_int64(st, c + 2) == 1);
  if (!pmcp__st_null(st, c + 1))
    return cJSON_CreateString(pmcp__st_text(st, c + 1));
  if (!pmcp__st_null(st, c + 2))
    return cJSON_CreateNumber((double)pmcp__st_int64(st, c + 2));
  if (!pmcp__st_null(st, c + 3))
    return cJSON_CreateNumber(pmcp__rt_listed(pmcp__st_double(st, c + 3)));
  return cJSON_CreateNull();
}

static void add_num(cJSON *o, const char *k, pmcp__stmt *st, int c)
{
  if (pmcp__st_null(st, c))
    cJSON_AddNullToObject(o, k);
  else
    cJSON_AddNumberToObject(o, k, pmcp__rt_listed(pmcp__st_double(st, c)));
}

/* Sorts a run's series items as SQLite's series listing does: key, labels
 * (as stored: canonical JSON text), id. A run has few series of a key: an
 * insertion sort. */
static const char *labels_text(const cJSON *o, char *buf, size_t size)
{
  const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "labels");
  if (!l)
    return "{}";
  if (!cJSON_PrintPreallocated((cJSON *)l, buf, (int)size, 0))
    return "";
  return buf;
}

static int series_before(const cJSON *a, const cJSON *b)
{
  int c = strcmp(js(a, "key"), js(b, "key"));
  if (c)
    return c < 0;
  char la[512], lb[512];
  c = strcmp(labels_text(a, la, sizeof la), labels_text(b, lb, sizeof lb));
  if (c)
    return c < 0;
  return cJSON_GetObjectItemCaseSensitive(a, "series")->valuedouble <
         cJSON_GetObjectItemCaseSensitive(b, "series")->valuedouble;
}

static void order_series(cJSON *arr)
{
  int n = cJSON_GetArraySize(arr);
  cJSON **v = n > 1 ? malloc((size_t)n * sizeof *v) : NULL;
  if (!v)
    return;
  for (int i = 0; i < n; i++)
    v[i] = cJSON_DetachItemViaPointer(arr, arr->child);
  for (int i = 1; i < n; i++)
    for (int k = i; k > 0 && series_before(v[k], v[k - 1]); k--) {
      cJSON *t = v[k];
      v[k] = v[k - 1];
      v[k - 1] = t;
    }
  for (int i = 0; i < n; i++)
    cJSON_AddItemToArray(arr, v[i]);
  free(v);
}

/* Puts the runs read for a page in the page's order (ids absent from the
 * store, deleted since, are left out). */
static int in_id_order(pmcp__rt_result *out, const pmcp__rt_query *rq)
{
  pmcp__rt_run *v = calloc(out->n ? out->n : 1, sizeof *v);
  if (!v)
    return PMCP_ENOMEM;
  size_t k = 0;
  for (size_t i = 0; i < rq->n_ids; i++)
    for (size_t j = 0; j < out->n; j++)
      if (out->runs[j].id == rq->ids[i] && out->runs[j].slug) {
        v[k++] = out->runs[j];
        out->runs[j].slug = NULL; /* moved */
      }
  for (size_t j = 0; j < out->n; j++)
    if (out->runs[j].slug)
      pmcp__rt_run_dispose(&out->runs[j]);
  free(out->runs);
  out->runs = v;
  out->n = k;
  return 0;
}

/* " AND @p col is a candidate" for the set queries after the narrowing:
 * the page's ids; on PostgreSQL the candidates as one int8[] parameter
 * (@p ids); on SQLite nothing (@p sub 0: rows of other runs are passed
 * over) or the narrowing again as a subquery (@p sub 1). */
static void put_cands(sqlb *q, const pmcp__rt_query *rq, const char *col, const char *ids,
                      int sub)
{
  if (rq->ids) {
    put_ids(q, rq, col);
  } else if (q->c->ops->pg) {
    int k = bind_text(q, ids);
    if (k < 0)
      q->oom = 1;
    put(q, " AND %s = ANY(?%d::int8[])", col, k);
  } else if (sub) {
    put(q, " AND %s IN (SELECT r.id", col);
    scope(q, rq, 0, NULL);
    put(q, ")");
  }
}

/* The narrowed runs, newest first (or in the page's order). */
static int read_runs(pmcp_store *s, sqlb *q, pmcp_tenant t, int64_t project,
                     const pmcp__rt_query *rq, pmcp__rt_result *out)
{
  pmcp__stmt *st;
  reset(q);
  put(q, "SELECT r.id, r.slug, r.name, r.status, r.created, r.started, r.ended,"
         " (SELECT e.slug FROM experiments e WHERE e.id=r.experiment_id)");
  scope(q, rq, 1, &out->pushed);
  put(q, " ORDER BY r.created DESC, r.id DESC");
  if (rq->max_rows && !rq->ids)
    put(q, " LIMIT %zu", rq->max_rows);
  int rc = prep(s, q, t.id, project, &st), src;
  if (rc)
    return rc;
  size_t cap = 0;
  while ((src = pmcp__st_step(st)) == PMCP__ROW) {
    if (out->n == cap) {
      cap = cap ? cap * 2 : 256;
      pmcp__rt_run *nr = realloc(out->runs, cap * sizeof *nr);
      if (!nr) {
        rc = PMCP_ENOMEM;
        break;
      }
      out->runs = nr;
    }
    pmcp__rt_run *r = &out->runs[out->n++];
    memset(r, 0, sizeof *r);
    r->id = pmcp__st_int64(st, 0);
    r->slug = col_dup(st, 1);
    r->name = col_dup(st, 2);
    r->status = col_dup(st, 3);
    r->created = pmcp__st_int64(st, 4);
    r->started = pmcp__st_int64(st, 5);
    r->ended = pmcp__st_int64(st, 6);
    r->experiment = col_dup(st, 7);
    r->attrs = cJSON_CreateObject();
    if (!r->slug || !r->name || !r->status || !r->attrs) {
      rc = PMCP_ENOMEM;
      break;
    }
  }
  if (rc) {
    pmcp__sql_release(q->c, st);
    return rc;
  }
  return finish(s, q, &st, src);
}

static cJSON *series_item(pmcp__stmt *st)
{
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return NULL;
  cJSON_AddStringToObject(o, "key", pmcp__st_text(st, 1));
  const char *labels = pmcp__st_text(st, 2);
  if (labels && strcmp(labels, "{}"))
    cJSON_AddItemToObject(o, "labels", cJSON_Parse(labels));
  cJSON_AddStringToObject(o, "kind", pmcp__st_text(st, 3));
  cJSON_AddStringToObject(o, "scale", pmcp__st_text(st, 4));
  cJSON_AddNumberToObject(o, "count", (double)pmcp__st_int64(st, 5));
  cJSON_AddNumberToObject(o, "nonfinite", (double)pmcp__st_int64(st, 6));
  add_num(o, "first", st, 7);
  add_num(o, "last", st, 8);
  add_num(o, "min", st, 9);
  add_num(o, "max", st, 10);
  add_num(o, "mean", st, 11);
  cJSON_AddNumberToObject(o, "series", (double)pmcp__st_int64(st, 12));
  return o;
}

/* The attribute values, tags and series summaries of the runs read. */
static int read_details(pmcp_store *s, sqlb *q, pmcp_tenant t, int64_t project,
                        const pmcp__rt_query *rq, pmcp__rt_result *out,
                        pmcp__rt_run **by_id, const char *ids)
{
  pmcp__stmt *st = NULL;
  int rc = 0, src;
  /* attribute values: one query per path (on SQLite every run's value of
   * the path in one index scan, rows of other runs passed over) */
  for (size_t p = 0; !rc && p < rq->n_paths; p++) {
    reset(q);
    int kp = bind_text(q, rq->paths[p]);
    put(q, "SELECT a.owner_id, a.type, a.v_text, a.v_int, a.v_real FROM attributes a"
           " WHERE a.tenant_id=?1 AND ?2 > 0 AND a.owner_kind='run' AND a.path=?%d", kp);
    put_cands(q, rq, "a.owner_id", ids, 0);
    if ((rc = prep(s, q, t.id, project, &st)))
      return rc;
    while ((src = pmcp__st_step(st)) == PMCP__ROW) {
      pmcp__rt_run *r = find_run(by_id, out->n, pmcp__st_int64(st, 0));
      if (!r || cJSON_GetObjectItemCaseSensitive(r->attrs, rq->paths[p]))
        continue;
      cJSON *v = attr_value(st, 1);
      if (!v) {
        rc = PMCP_ENOMEM;
        break;
      }
      cJSON_AddItemToObject(r->attrs, rq->paths[p], v);
      const char *type = pmcp__st_text(st, 1);
      if (type && !strcmp(type, "datetime") &&
          ((!r->types && !(r->types = cJSON_CreateObject())) ||
           !cJSON_AddStringToObject(r->types, rq->paths[p], type))) {
        rc = PMCP_ENOMEM;
        break;
      }
    }
    if (rc)
      pmcp__sql_release(q->c, st);
    else
      rc = finish(s, q, &st, src);
  }
  if (!rc && rq->tags) {
    for (size_t i = 0; i < out->n; i++)
      if (!(out->runs[i].tags = cJSON_CreateArray()))
        return PMCP_ENOMEM;
    reset(q);
    put(q, "SELECT g.owner_id, g.tag FROM tags g WHERE g.tenant_id=?1 AND ?2 > 0"
           " AND g.owner_kind='run'");
    put_cands(q, rq, "g.owner_id", ids, 1);
    put(q, " ORDER BY g.owner_id, g.tag");
    if ((rc = prep(s, q, t.id, project, &st)))
      return rc;
    while ((src = pmcp__st_step(st)) == PMCP__ROW) {
      pmcp__rt_run *r = find_run(by_id, out->n, pmcp__st_int64(st, 0));
      if (r)
        cJSON_AddItemToArray(r->tags, cJSON_CreateString(pmcp__st_text(st, 1)));
    }
    rc = finish(s, q, &st, src);
  }
  /* series summaries of the wanted keys */
  for (size_t k = 0; !rc && k < rq->n_keys; k++) {
    reset(q);
    int kk = bind_text(q, rq->keys[k]);
    put(q, "SELECT s.run_id, s.key, s.labels, s.kind, s.scale, s.count, s.nonfinite, s.first,"
           " s.last, s.vmin, s.vmax, CASE WHEN s.kind='float' AND s.count>s.nonfinite THEN"
           " s.vsum / (s.count - s.nonfinite) END, s.id FROM series s WHERE s.tenant_id=?1 AND"
           " ?2 > 0 AND s.key=?%d", kk);
    put_cands(q, rq, "s.run_id", ids, 0);
    /* PostgreSQL's series listing order (pg_metrics_read.c); SQLite's is
     * made per run afterwards (no sort of every series here) */
    if (q->c->ops->pg)
      put(q, " ORDER BY s.run_id, s.key, s.labels, s.kind, s.scale");
    if ((rc = prep(s, q, t.id, project, &st)))
      return rc;
    while ((src = pmcp__st_step(st)) == PMCP__ROW) {
      pmcp__rt_run *r = find_run(by_id, out->n, pmcp__st_int64(st, 0));
      if (!r)
        continue;
      cJSON *o = series_item(st);
      if (!o || (!r->series && !(r->series = cJSON_CreateArray()))) {
        cJSON_Delete(o);
        rc = PMCP_ENOMEM;
        break;
      }
      cJSON_AddItemToArray(r->series, o);
    }
    if (rc)
      pmcp__sql_release(q->c, st);
    else
      rc = finish(s, q, &st, src);
  }
  for (size_t i = 0; !rc && !q->c->ops->pg && rq->n_keys && i < out->n; i++)
    if (out->runs[i].series && out->runs[i].series->child &&
        out->runs[i].series->child->next)
      order_series(out->runs[i].series);
  return rc;
}

int pmcp__store_run_table(pmcp_store *s, pmcp_tenant t, const pmcp__rt_query *rq,
                          pmcp__rt_result *out)
{
  memset(out, 0, sizeof *out);
  pmcp__sql *c = pmcp__rt_sql(s);
  if (!c)
    return PMCP_EUNSUPPORTED;
  sqlb *q = calloc(1, sizeof *q);
  if (!q)
    return PMCP_ENOMEM;
  q->c = c;
  q->max = pmcp__rt_maxp(c);
  pmcp__rt_run **by_id = NULL;
  pmcp_buf ids = PMCP_BUF_INIT;
  int64_t project = 0, *chunk_ids = NULL;
  pmcp__rt_query chunk;
  int own = 0;
  int rc = pmcp__rt_read_begin(s, c, t, &own);
  if (rc)
    goto out;
  if ((rc = pmcp__rt_project_id(s, c, t, rq->project, &project)) ||
      (rc = read_runs(s, q, t, project, rq, out)))
    goto out;
  if (rq->ids && (rc = in_id_order(out, rq)))
    goto out;
  if (!out->n || (!rq->n_paths && !rq->n_keys && !rq->tags))
    goto out;
  /* a chunk's details are read for its own ids (inline), not by scans
   * of every run's values that pass over the others' rows */
  if (rq->max_rows && !rq->ids) {
    chunk_ids = malloc(out->n * sizeof *chunk_ids);
    if (!chunk_ids) {
      rc = PMCP_ENOMEM;
      goto out;
    }
    for (size_t i = 0; i < out->n; i++)
      chunk_ids[i] = out->runs[i].id;
    chunk = *rq;
    chunk.ids = chunk_ids;
    chunk.n_ids = out->n;
    rq = &chunk;
  }
  by_id = malloc(out->n * sizeof *by_id);
  if (!by_id) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  for (size_t i = 0; i < out->n; i++)
    by_id[i] = &out->runs[i];
  qsort(by_id, out->n, sizeof *by_id, by_id_cmp);
  /* the candidates as an int8[] literal (PostgreSQL: later queries look
   * them up by id instead of planning the filter again) */
  for (size_t i = 0; c->ops->pg && !rc && i < out->n; i++)
    rc = pmcp__buf_printf(&ids, "%c%lld", i ? ',' : '{', (long long)by_id[i]->id);
  if (!rc && c->ops->pg)
    rc = pmcp__buf_puts(&ids, "}");
  if (rc) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  rc = read_details(s, q, t, project, rq, out, by_id, ids.ptr);
out:
  rc = pmcp__rt_read_end(s, c, own, rc);
  free(chunk_ids);
  free(by_id);
  pmcp_buf_dispose(&ids);
  pmcp_buf_dispose(&q->sql);
  free(q);
  if (rc)
    pmcp__rt_result_dispose(out);
  return rc;
}

void pmcp__rt_run_dispose(pmcp__rt_run *r)
{
  free(r->slug);
  free(r->name);
  free(r->status);
  free(r->experiment);
  cJSON_Delete(r->attrs);
  cJSON_Delete(r->types);
  cJSON_Delete(r->tags);
  cJSON_Delete(r->series);
  memset(r, 0, sizeof *r);
}

void pmcp__rt_result_dispose(pmcp__rt_result *r)
{
  for (size_t i = 0; r->runs && i < r->n; i++)
    pmcp__rt_run_dispose(&r->runs[i]);
  free(r->runs);
  memset(r, 0, sizeof *r);
}

/* One statement of pmcp__store_run_attrs(): the runs slugs[0..n). */
static int run_attrs_part(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *const *slugs,
                          size_t n, cJSON **out)
{
  pmcp_buf sql = PMCP_BUF_INIT;
  /* the named runs first, then each one's attributes (SQLite's CROSS JOIN
   * fixes that order; left to itself it reads every attribute of the lab
   * in path order) */
  int rc = pmcp__buf_printf(&sql, "SELECT r.slug, a.type, a.v_text, a.v_int, a.v_real, a.path"
                                  " FROM runs r %s attributes a ON a.owner_kind='run' AND"
                                  " a.owner_id=r.id WHERE r.tenant_id=?1 AND r.slug IN (",
                            PMCP__SQL_PICK(c, "CROSS JOIN", "JOIN"));
  for (size_t i = 0; !rc && i < n; i++)
    rc = pmcp__buf_printf(&sql, "%s?%zu", i ? "," : "", i + 2);
  if (!rc)
    rc = pmcp__buf_puts(&sql, ")");
  /* only runs of the call's workspace, whatever slugs were asked for */
  if (!rc)
    rc = pmcp__ws_list_where(&sql, t, "run");
  if (!rc)
    rc = pmcp__buf_puts(&sql, " ORDER BY a.path");
  pmcp__stmt *st = NULL;
  if (rc)
    rc = pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  if (!rc && !(rc = pmcp__sql_prep_text(s, c, sql.ptr, &st))) {
    pmcp__st_bind_int64(st, 1, t.id);
    for (size_t i = 0; i < n; i++)
      pmcp__st_bind_text(st, (int)i + 2, slugs[i]);
    int src;
    while ((src = pmcp__st_step(st)) == PMCP__ROW) {
      const char *slug = pmcp__st_text(st, 0);
      const char *path = pmcp__st_text(st, 5);
      for (size_t i = 0; slug && path && i < n; i++)
        if (!strcmp(slugs[i], slug) && !cJSON_GetObjectItemCaseSensitive(out[i], path)) {
          cJSON *v = attr_value(st, 1);
          if (!v || !cJSON_AddItemToObject(out[i], path, v)) {
            cJSON_Delete(v);
            rc = PMCP_ENOMEM;
          }
        }
      if (rc)
        break;
    }
    if (!rc && src != PMCP__DONE)
      rc = pmcp__st_err(s, st, "read run attributes");
    pmcp__sql_release(c, st);
  }
  pmcp_buf_dispose(&sql);
  return rc;
}

int pmcp__store_run_attrs(pmcp_store *s, pmcp_tenant t, const char *const *slugs, size_t n,
                          cJSON **out)
{
  pmcp__sql *c = pmcp__rt_sql(s);
  if (!c)
    return PMCP_EUNSUPPORTED;
  if (n > 100)
    return PMCP_EINVAL;
  for (size_t i = 0; i < n; i++)
    if (!(out[i] = cJSON_CreateObject())) {
      for (size_t k = 0; k < i; k++)
        cJSON_Delete(out[k]);
      return PMCP_ENOMEM;
    }
  if (!n)
    return 0;
  int rc = pmcp__sql_ready(s, c, t);
  if (!rc)
    rc = pmcp__sql_flush(s, c);
  /* as many slugs a statement as the backend binds, less the tenant */
  size_t per = (size_t)pmcp__rt_maxp(c) - 1;
  for (size_t i = 0; !rc && i < n; i += per)
    rc = run_attrs_part(s, c, t, slugs + i, n - i < per ? n - i : per, out + i);
  if (rc)
    for (size_t i = 0; i < n; i++) {
      cJSON_Delete(out[i]);
      out[i] = NULL;
    }
  return rc;
}
