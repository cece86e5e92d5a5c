/* SQLite side of runtable.h: a project's runs narrowed by the filter
 * conditions SQL can state, then the attribute values, tags and series
 * summaries the caller asked for, each in one query over those runs (with
 * the values typed as SQLite holds them: no text round trip of doubles).
 *
 * What is pushed down is always a necessary condition of the caller's
 * evaluator (filter.c): eq on a string value (v_text equal), eq / gt / gte
 * / lt / lte on a number (the numeric columns), in over strings, exists,
 * sys/state, sys/name and sys/id equality, series comparisons on last,
 * first, min, max and count over any series of the key and scale (the
 * evaluator picks one of them), series exists; an any_of group when every
 * member can be stated. Everything else is left to the evaluator.
 *
 * Numbers: the store's listings give REAL values as SQLite renders them in
 * JSON (15 significant digits), and the evaluator has always compared
 * those; values here are rounded the same way (pmcp__sq_listed()) so both paths
 * agree, and pushed comparisons are widened by a relative 1e-13 so a value
 * that only passes after rounding is never dropped by SQL. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/runtable.h"
#include "store/sq.h"
#ifdef PMCP_HAVE_POSTGRES
#include "store/pg_runtable.h"
#endif
#include "store/ws_scope.h"

#define MAX_BINDS 400

typedef struct bindv {
  int is_num; /* 0 text, 1 double, 2 integer */
  double num;
  int64_t i;
  const char *text;
} bindv;

typedef struct sqlb {
  pmcp_buf sql;
  bindv b[MAX_BINDS];
  int n;
  int oom;
} sqlb;

static int bind_text(sqlb *q, const char *s)
{
  if (q->n >= MAX_BINDS)
    return -1;
  q->b[q->n].is_num = 0;
  q->b[q->n].text = s;
  return ++q->n;
}

static int bind_num(sqlb *q, double d)
{
  if (q->n >= MAX_BINDS)
    return -1;
  q->b[q->n].is_num = 1;
  q->b[q->n].num = d;
  return ++q->n;
}

static int bind_int(sqlb *q, int64_t i)
{
  if (q->n >= MAX_BINDS)
    return -1;
  q->b[q->n].is_num = 2;
  q->b[q->n].i = i;
  return ++q->n;
}

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

double pmcp__sq_listed(double d)
{
  char b[40];
  snprintf(b, sizeof b, "%.15g", d);
  return strtod(b, NULL);
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

static const char *sql_op(const char *op)
{
  static const char *const ops[][2] = {{"eq", "="}, {"gt", ">"}, {"gte", ">="},
                                       {"lt", "<"}, {"lte", "<="}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (!strcmp(op, ops[i][0]))
      return ops[i][1];
  return NULL;
}

static const char *js(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Appends a boolean SQL expression implied by condition @p c; returns 1
 * (appended) or 0 (SQL cannot state it; nothing appended). */
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
  char head[200];
  int kp = bind_text(q, path);
  if (kp < 0)
    return 0;
  /* a set (one index range scan), not a lookup per run */
  snprintf(head, sizeof head,
           "r.id IN (SELECT a.owner_id FROM attributes a WHERE a.tenant_id=?1 AND"
           " a.owner_kind='run' AND a.path=?%d", kp);
  const char *so = sql_op(op);
  if (!strcmp(op, "exists")) {
    if (v && !cJSON_IsTrue(v))
      return 0;
    put(q, "%s)", head);
    return 1;
  }
  if (so && !strcmp(op, "eq") && cJSON_IsString(v)) {
    int k = bind_text(q, v->valuestring);
    if (k < 0)
      return 0;
    put(q, "%s AND a.v_text = ?%d)", head, k);
    return 1;
  }
  if (so && cJSON_IsNumber(v)) {
    put(q, "%s AND ", head);
    /* v11's attributes_path_number: the number the listing gives */
    if (!put_cmp(q, "(CASE WHEN a.type='bool' THEN NULL ELSE coalesce(a.v_real, a.v_int) END)",
                 op, v->valuedouble))
      return 0;
    put(q, ")");
    return 1;
  }
  if (!strcmp(op, "in") && cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0) {
    const cJSON *it;
    cJSON_ArrayForEach(it, v) if (!cJSON_IsString(it)) return 0;
    put(q, "%s AND a.v_text IN (", head);
    int first = 1;
    cJSON_ArrayForEach(it, v)
    {
      int k = bind_text(q, it->valuestring);
      if (k < 0) {
        q->oom = 1; /* half-written: the caller drops the whole query */
        return 1;
      }
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
  const char *so = sql_op(op);
  if (!so || !col || !cJSON_IsNumber(v))
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

/* Appends " AND (...)" for each condition SQL can state; returns how many. */
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

/* Binds ?3 onwards (?1 and ?2 are the tenant and the project). */
static int bind_all(sqlite3_stmt *st, const sqlb *q)
{
  for (int i = 2; i < q->n; i++) {
    int src = q->b[i].is_num == 2 ? sqlite3_bind_int64(st, i + 1, q->b[i].i)
              : q->b[i].is_num ? sqlite3_bind_double(st, i + 1, q->b[i].num)
                               : sqlite3_bind_text(st, i + 1, q->b[i].text, -1, SQLITE_STATIC);
    if (src != SQLITE_OK)
      return src;
  }
  return SQLITE_OK;
}

static char *col_dup(sqlite3_stmt *st, int c)
{
  const unsigned char *t = sqlite3_column_text(st, c);
  return t ? strdup((const char *)t) : NULL;
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

/* The value of an attribute row as the store's attribute listing gives it. */
static cJSON *attr_value(sqlite3_stmt *st, int c_type)
{
  const char *type = (const char *)sqlite3_column_text(st, c_type);
  int ct = sqlite3_column_type(st, c_type + 1), ci = sqlite3_column_type(st, c_type + 2);
  if (type && !strcmp(type, "string_set"))
    return cJSON_Parse((const char *)sqlite3_column_text(st, c_type + 1));
  if (type && !strcmp(type, "bool"))
    return cJSON_CreateBool(sqlite3_column_int64(st, c_type + 2) == 1);
  if (ct != SQLITE_NULL)
    return cJSON_CreateString((const char *)sqlite3_column_text(st, c_type + 1));
  if (ci != SQLITE_NULL)
    return cJSON_CreateNumber((double)sqlite3_column_int64(st, c_type + 2));
  if (sqlite3_column_type(st, c_type + 3) != SQLITE_NULL)
    return cJSON_CreateNumber(pmcp__sq_listed(sqlite3_column_double(st, c_type + 3)));
  return cJSON_CreateNull();
}

static void add_num(cJSON *o, const char *k, sqlite3_stmt *st, int c)
{
  if (sqlite3_column_type(st, c) == SQLITE_NULL)
    cJSON_AddNullToObject(o, k);
  else
    cJSON_AddNumberToObject(o, k, pmcp__sq_listed(sqlite3_column_double(st, c)));
}

/* Sorts a run's series items as the series listing does: key, labels (as
 * stored: canonical JSON text), id. A run has few series of a key: an
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

/* Appends " AND @p col IN (the query's ids)". */
static void put_ids(sqlb *q, const pmcp__rt_query *rq, const char *col)
{
  put(q, " AND %s IN (", col);
  for (size_t i = 0; i < rq->n_ids; i++) {
    int k = bind_int(q, rq->ids[i]);
    if (k < 0) {
      q->oom = 1;
      return;
    }
    put(q, "%s?%d", i ? "," : "", k);
  }
  put(q, ")");
}

/* The runs' scope, shared by every query: project, tenant, live, pushed
 * filter or the chosen ids. */
static void scope(sqlb *q, const pmcp__rt_query *rq, int with_filter, size_t *pushed)
{
  if (rq->ids) {
    /* by rowid: the unary + keep SQLite from scanning the project's
     * runs through runs_project_list instead */
    put(q, " FROM runs r WHERE +r.tenant_id=?1 AND +r.deleted=0 AND +r.project_id=?2");
    put_ids(q, rq, "r.id");
    return;
  }
  put(q, " FROM runs r WHERE r.tenant_id=?1 AND r.deleted=0 AND r.project_id=?2");
  if (with_filter && rq->filter) {
    size_t p = push_filter(q, rq->filter);
    if (pushed)
      *pushed = p;
  }
}

static int prep(pmcp_store *s, pmcp__sq *db, sqlb *q, int64_t tenant, int64_t project,
                sqlite3_stmt **st)
{
  *st = NULL;
  if (q->oom || !q->sql.ptr)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  int src = sqlite3_prepare_v2(db->db, q->sql.ptr, (int)q->sql.len, st, NULL);
  if (src != SQLITE_OK)
    return pmcp__sq_err(s, db, src, "read the run table");
  src = sqlite3_bind_int64(*st, 1, tenant);
  if (src == SQLITE_OK)
    src = sqlite3_bind_int64(*st, 2, project);
  if (src == SQLITE_OK)
    src = bind_all(*st, q);
  if (src != SQLITE_OK) {
    sqlite3_finalize(*st);
    *st = NULL;
    return pmcp__sq_err(s, db, src, "read the run table");
  }
  return 0;
}

/* Restarts @p q with the two fixed parameters ?1 (tenant) and ?2
 * (project) bound, binds numbered from ?3. */
static void reset(sqlb *q)
{
  pmcp__buf_reset(&q->sql);
  q->n = 2;
  q->oom = 0;
  q->b[0].is_num = q->b[1].is_num = 1; /* placeholders; bound by prep() */
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

int pmcp__store_run_table(pmcp_store *s, pmcp_tenant t, const pmcp__rt_query *rq,
                          pmcp__rt_result *out)
{
  memset(out, 0, sizeof *out);
#ifdef PMCP_HAVE_POSTGRES
  if (s && s->magic == PMCP__STORE_MAGIC && !strcmp(s->ops.name ? s->ops.name : "", "postgres"))
    return pmcp__pg_run_table(s, t, rq, out);
#endif
  if (!s || s->magic != PMCP__STORE_MAGIC || strcmp(s->ops.name ? s->ops.name : "", "sqlite"))
    return PMCP_EUNSUPPORTED;
  pmcp__sq *db = SQ(s->ctx);
  sqlb *q = calloc(1, sizeof *q);
  if (!q)
    return PMCP_ENOMEM;
  sqlite3_stmt *st = NULL;
  pmcp__rt_run **by_id = NULL;
  int rc = 0, src;
  int64_t project = 0;
  /* the project */
  if ((rc = pmcp__sq_project_id(s, db, t, rq->project, &project)))
    goto out;
  /* the runs, narrowed */
  reset(q);
  put(q, "SELECT r.id, r.slug, r.name, r.status, r.created, r.started, r.ended,"
         " (SELECT e.slug FROM experiments e WHERE e.id=r.experiment_id)");
  scope(q, rq, 1, &out->pushed);
  put(q, " ORDER BY r.created DESC, r.id DESC");
  if ((rc = prep(s, db, q, t.id, project, &st)))
    goto out;
  size_t cap = 0;
  while ((src = sqlite3_step(st)) == SQLITE_ROW) {
    if (out->n == cap) {
      cap = cap ? cap * 2 : 256;
      pmcp__rt_run *nr = realloc(out->runs, cap * sizeof *nr);
      if (!nr) {
        rc = PMCP_ENOMEM;
        goto out;
      }
      out->runs = nr;
    }
    pmcp__rt_run *r = &out->runs[out->n++];
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    r->slug = col_dup(st, 1);
    r->name = col_dup(st, 2);
    r->status = col_dup(st, 3);
    r->created = sqlite3_column_int64(st, 4);
    r->started = sqlite3_column_int64(st, 5);
    r->ended = sqlite3_column_int64(st, 6);
    r->experiment = col_dup(st, 7);
    r->attrs = cJSON_CreateObject();
    if (!r->slug || !r->name || !r->status || !r->attrs) {
      rc = PMCP_ENOMEM;
      goto out;
    }
  }
  if (src != SQLITE_DONE) {
    rc = pmcp__sq_err(s, db, src, "read the run table");
    goto out;
  }
  sqlite3_finalize(st);
  st = NULL;
  if (rq->ids && (rc = in_id_order(out, rq)))
    goto out;
  if (!out->n || (!rq->n_paths && !rq->n_keys && !rq->tags))
    goto out;
  by_id = malloc(out->n * sizeof *by_id);
  if (!by_id) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  for (size_t i = 0; i < out->n; i++)
    by_id[i] = &out->runs[i];
  qsort(by_id, out->n, sizeof *by_id, by_id_cmp);
  /* attribute values: one query per path, over the narrowed runs */
  for (size_t p = 0; p < rq->n_paths; p++) {
    reset(q);
    int kp = bind_text(q, rq->paths[p]);
    /* every run's value of the path (one index scan); rows of runs that
     * are not candidates are passed over */
    put(q, "SELECT a.owner_id, a.type, a.v_text, a.v_int, a.v_real FROM attributes a"
           " WHERE a.tenant_id=?1 AND ?2 > 0 AND a.owner_kind='run' AND a.path=?%d", kp);
    if (rq->ids)
      put_ids(q, rq, "a.owner_id");
    if ((rc = prep(s, db, q, t.id, project, &st)))
      goto out;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
      pmcp__rt_run *r = find_run(by_id, out->n, sqlite3_column_int64(st, 0));
      if (!r || cJSON_GetObjectItemCaseSensitive(r->attrs, rq->paths[p]))
        continue;
      cJSON *v = attr_value(st, 1);
      if (!v) {
        rc = PMCP_ENOMEM;
        goto out;
      }
      cJSON_AddItemToObject(r->attrs, rq->paths[p], v);
    }
    if (src != SQLITE_DONE) {
      rc = pmcp__sq_err(s, db, src, "read the run table");
      goto out;
    }
    sqlite3_finalize(st);
    st = NULL;
  }
  /* tags */
  if (rq->tags) {
    for (size_t i = 0; i < out->n; i++)
      if (!(out->runs[i].tags = cJSON_CreateArray())) {
        rc = PMCP_ENOMEM;
        goto out;
      }
    reset(q);
    put(q, "SELECT g.owner_id, g.tag FROM tags g WHERE g.tenant_id=?1 AND g.owner_kind='run'"
           " AND g.owner_id IN (SELECT r.id");
    scope(q, rq, 0, NULL);
    put(q, ") ORDER BY g.owner_id, g.tag");
    if ((rc = prep(s, db, q, t.id, project, &st)))
      goto out;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
      pmcp__rt_run *r = find_run(by_id, out->n, sqlite3_column_int64(st, 0));
      if (r)
        cJSON_AddItemToArray(r->tags,
                             cJSON_CreateString((const char *)sqlite3_column_text(st, 1)));
    }
    if (src != SQLITE_DONE) {
      rc = pmcp__sq_err(s, db, src, "read the run table");
      goto out;
    }
    sqlite3_finalize(st);
    st = NULL;
  }
  /* series summaries of the wanted keys, in the series listing's order */
  for (size_t k = 0; k < rq->n_keys; k++) {
    reset(q);
    int kk = bind_text(q, rq->keys[k]);
    /* in index order (no sort of every series): a run's series of one
     * key are put in the listing's order (labels, id) afterwards */
    put(q, "SELECT s.run_id, s.key, s.labels, s.kind, s.scale, s.count, s.nonfinite, s.first,"
           " s.last, s.vmin, s.vmax, CASE WHEN s.kind='float' AND s.count>s.nonfinite THEN"
           " s.vsum / (s.count - s.nonfinite) END, s.id FROM series s WHERE s.tenant_id=?1 AND"
           " ?2 > 0 AND s.key=?%d", kk);
    if (rq->ids)
      put_ids(q, rq, "s.run_id");
    if ((rc = prep(s, db, q, t.id, project, &st)))
      goto out;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
      pmcp__rt_run *r = find_run(by_id, out->n, sqlite3_column_int64(st, 0));
      if (!r)
        continue;
      cJSON *o = cJSON_CreateObject();
      if (!o || (!r->series && !(r->series = cJSON_CreateArray()))) {
        cJSON_Delete(o);
        rc = PMCP_ENOMEM;
        goto out;
      }
      cJSON_AddStringToObject(o, "key", (const char *)sqlite3_column_text(st, 1));
      const char *labels = (const char *)sqlite3_column_text(st, 2);
      if (labels && strcmp(labels, "{}"))
        cJSON_AddItemToObject(o, "labels", cJSON_Parse(labels));
      cJSON_AddStringToObject(o, "kind", (const char *)sqlite3_column_text(st, 3));
      cJSON_AddStringToObject(o, "scale", (const char *)sqlite3_column_text(st, 4));
      cJSON_AddNumberToObject(o, "count", (double)sqlite3_column_int64(st, 5));
      cJSON_AddNumberToObject(o, "nonfinite", (double)sqlite3_column_int64(st, 6));
      add_num(o, "first", st, 7);
      add_num(o, "last", st, 8);
      add_num(o, "min", st, 9);
      add_num(o, "max", st, 10);
      add_num(o, "mean", st, 11);
      cJSON_AddNumberToObject(o, "series", (double)sqlite3_column_int64(st, 12));
      cJSON_AddItemToArray(r->series, o);
    }
    if (src != SQLITE_DONE) {
      rc = pmcp__sq_err(s, db, src, "read the run table");
      goto out;
    }
    sqlite3_finalize(st);
    st = NULL;
  }
  for (size_t i = 0; rq->n_keys && i < out->n; i++)
    if (out->runs[i].series && out->runs[i].series->child &&
        out->runs[i].series->child->next)
      order_series(out->runs[i].series);
out:
  sqlite3_finalize(st);
  free(by_id);
  pmcp_buf_dispose(&q->sql);
  free(q);
  if (rc)
    pmcp__rt_result_dispose(out);
  return rc;
}

int pmcp__sq_project_id(pmcp_store *s, pmcp__sq *db, pmcp_tenant t, const char *slug,
                        int64_t *out)
{
  *out = 0;
  sqlite3_stmt *st = NULL;
  static const char sql[] = "SELECT id FROM projects WHERE tenant_id=?1 AND slug=?2";
  int rc = pmcp__sq_prep(s, db, sql, &st);
  if (rc)
    return rc;
  sqlite3_bind_int64(st, 1, t.id);
  sqlite3_bind_text(st, 2, slug, -1, SQLITE_STATIC);
  int src = sqlite3_step(st);
  if (src == SQLITE_ROW)
    *out = sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (src != SQLITE_ROW && src != SQLITE_DONE)
    return pmcp__sq_err(s, db, src, "read the run table");
  /* A project outside the call's workspace is a missing one. */
  int rc2 = *out ? pmcp__ws_check(s, t, "projects", *out) : PMCP_ENOTFOUND;
  if (rc2 && rc2 != PMCP_ENOTFOUND)
    return rc2;
  if (rc2) {
    *out = 0;
    return pmcp_store_set_error(s, PMCP_ENOTFOUND, "project '%s' not found", slug);
  }
  return 0;
}

void pmcp__rt_run_dispose(pmcp__rt_run *r)
{
  free(r->slug);
  free(r->name);
  free(r->status);
  free(r->experiment);
  cJSON_Delete(r->attrs);
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

int pmcp__store_run_attrs(pmcp_store *s, pmcp_tenant t, const char *const *slugs, size_t n,
                          cJSON **out)
{
  if (!s || s->magic != PMCP__STORE_MAGIC || strcmp(s->ops.name ? s->ops.name : "", "sqlite"))
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
  pmcp_buf sql = PMCP_BUF_INIT;
  /* CROSS JOIN: the named runs first, then each one's attributes; left to
   * itself SQLite reads every attribute of the lab in path order */
  int rc = pmcp__buf_puts(&sql, "SELECT r.slug, a.type, a.v_text, a.v_int, a.v_real, a.path"
                                " FROM runs r CROSS JOIN attributes a ON a.owner_kind='run' AND"
                                " a.owner_id=r.id WHERE r.tenant_id=?1 AND r.slug IN (");
  for (size_t i = 0; !rc && i < n; i++)
    rc = pmcp__buf_printf(&sql, "%s?%zu", i ? "," : "", i + 2);
  if (!rc)
    rc = pmcp__buf_puts(&sql, ")");
  /* only runs of the call's workspace, whatever slugs were asked for */
  if (!rc)
    rc = pmcp__ws_list_where(&sql, t, "run");
  if (!rc)
    rc = pmcp__buf_puts(&sql, " ORDER BY a.path");
  pmcp__sq *db = SQ(s->ctx);
  sqlite3_stmt *st = NULL;
  int src = SQLITE_OK;
  if (!rc) {
    src = sqlite3_prepare_v2(db->db, sql.ptr, (int)sql.len, &st, NULL);
    if (src == SQLITE_OK)
      src = sqlite3_bind_int64(st, 1, t.id);
    for (size_t i = 0; src == SQLITE_OK && i < n; i++)
      src = sqlite3_bind_text(st, (int)i + 2, slugs[i], -1, SQLITE_STATIC);
    while (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
      const char *slug = (const char *)sqlite3_column_text(st, 0);
      const char *path = (const char *)sqlite3_column_text(st, 5);
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
      src = SQLITE_OK;
    }
    if (!rc && src != SQLITE_DONE)
      rc = pmcp__sq_err(s, db, src, "read run attributes");
  } else {
    rc = PMCP_ENOMEM;
  }
  sqlite3_finalize(st);
  pmcp_buf_dispose(&sql);
  if (rc)
    for (size_t i = 0; i < n; i++) {
      cJSON_Delete(out[i]);
      out[i] = NULL;
    }
  return rc;
}
