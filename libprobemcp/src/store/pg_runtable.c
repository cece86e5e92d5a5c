/* PostgreSQL side of pmcp__store_run_table() (runtable.h): the SQLite
 * version's plan in PostgreSQL SQL. The project's runs are narrowed by
 * the filter conditions SQL can state (necessary conditions only: the
 * caller evaluates the whole filter again on what comes back), then the
 * wanted attribute values, tags and series summaries are read in one
 * query each over those runs, instead of one listing per run.
 *
 * Pushed: eq on a string, eq / gt / gte / lt / lte on a number (widened
 * by a relative 1e-13, as the listings round doubles to 15 significant
 * digits: float8::numeric), in over strings, exists, sys/state, sys/name
 * and sys/id equality, series last / first / min / max / count
 * comparisons and series exists; an any_of group when every member can
 * be stated. A condition whose binds would pass the statement layer's
 * parameter limit is left to the evaluator (a superset, never a loss). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg.h"
#include "store/pg_runtable.h"
#include "store/ws_scope.h"

typedef struct bindv {
  int kind; /* 0 text, 1 double, 2 integer */
  double num;
  int64_t i;
  const char *text;
} bindv;

typedef struct sqlb {
  pmcp_buf sql;
  bindv b[PMCP__PG_MAXP];
  int n;
  int oom;
} sqlb;

static int bind_v(sqlb *q, int kind, double d, int64_t i, const char *t)
{
  if (q->n >= PMCP__PG_MAXP)
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

static double listed(double d)
{
  char b[40];
  snprintf(b, sizeof b, "%.15g", d);
  return strtod(b, NULL);
}

static int put_cmp(sqlb *q, const char *x, const char *op, double w)
{
  double tol = (w < 0 ? -w : w) * 1e-13;
  if (!strcmp(op, "eq")) {
    int a = bind_num(q, w - tol), b = bind_num(q, w + tol);
    if (a < 0 || b < 0)
      return 0;
    put(q, "%s BETWEEN $%d AND $%d", x, a, b);
    return 1;
  }
  int up = !strcmp(op, "lt") || !strcmp(op, "lte");
  int k = bind_num(q, up ? w + tol : w - tol);
  if (k < 0)
    return 0;
  put(q, "%s %s $%d", x, up ? "<=" : ">=", k);
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
        put(q, "%s = $%d", cols[i][1], k);
        return 1;
      }
    return 0;
  }
  int kp = bind_text(q, path);
  if (kp < 0)
    return 0;
  char head[200];
  snprintf(head, sizeof head,
           "r.id IN (SELECT a.owner_id FROM attributes a WHERE a.tenant_id=$1 AND"
           " a.owner_kind='run' AND a.path=$%d", kp);
  if (!strcmp(op, "exists")) {
    if (v && !cJSON_IsTrue(v))
      return 0;
    put(q, "%s)", head);
    return 1;
  }
  if (!strcmp(op, "eq") && cJSON_IsString(v)) {
    int k = bind_text(q, v->valuestring);
    if (k < 0)
      return 0;
    put(q, "%s AND a.v_text = $%d)", head, k);
    return 1;
  }
  if (cmp_op(op) && cJSON_IsNumber(v)) {
    put(q, "%s AND ", head);
    /* the number the attribute listing gives (looser: a superset) */
    if (!put_cmp(q,
                 "(CASE WHEN a.type='bool' THEN NULL ELSE coalesce(a.v_int::float8, a.v_real) END)",
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
      if (k < 0)
        return 0; /* past the parameter limit: left to the evaluator */
      put(q, "%s$%d", first ? "" : ",", k);
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
                                        {"count", "s.count::float8"}};
  const char *col = NULL;
  for (size_t i = 0; fn && i < sizeof cols / sizeof cols[0]; i++)
    if (!strcmp(fn, cols[i][0]))
      col = cols[i][1];
  int kk = bind_text(q, key), ks = bind_text(q, scale ? scale : "step");
  if (kk < 0 || ks < 0)
    return 0;
  char head[200];
  snprintf(head, sizeof head,
           "r.id IN (SELECT s.run_id FROM series s WHERE s.tenant_id=$1 AND s.key=$%d AND"
           " s.scale=$%d", kk, ks);
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
 * has up to 100, past the parameter limit). */
static void put_ids(sqlb *q, const pmcp__rt_query *rq, const char *col)
{
  put(q, " AND %s IN (", col);
  for (size_t i = 0; i < rq->n_ids; i++)
    put(q, "%s%lld", i ? "," : "", (long long)rq->ids[i]);
  put(q, ")");
}

static void scope(sqlb *q, const pmcp__rt_query *rq, int with_filter, size_t *pushed)
{
  put(q, " FROM runs r WHERE r.tenant_id=$1 AND r.deleted=0 AND r.project_id=$2");
  if (rq->ids) {
    put_ids(q, rq, "r.id");
    return;
  }
  if (with_filter && rq->filter) {
    size_t p = push_filter(q, rq->filter);
    if (pushed)
      *pushed = p;
  }
}

static void reset(sqlb *q)
{
  pmcp__buf_reset(&q->sql);
  q->n = 2; /* $1 tenant, $2 project: bound by prep() */
  q->oom = 0;
}

static int prep(pmcp_store *s, pmcp__pg *g, sqlb *q, int64_t tenant, int64_t project,
                pmcp__pg_stmt **st)
{
  *st = NULL;
  if (q->oom || !q->sql.ptr)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  int rc = pmcp__pg_prep_dyn(s, g, q->sql.ptr, st);
  if (rc)
    return rc;
  pmcp__pg_bind_int64(*st, 1, tenant);
  pmcp__pg_bind_int64(*st, 2, project);
  for (int i = 2; i < q->n; i++) {
    if (q->b[i].kind == 2)
      pmcp__pg_bind_int64(*st, i + 1, q->b[i].i);
    else if (q->b[i].kind == 1)
      pmcp__pg_bind_double(*st, i + 1, q->b[i].num);
    else
      pmcp__pg_bind_text(*st, i + 1, q->b[i].text);
  }
  return 0;
}

static char *col_dup(pmcp__pg_stmt *st, int c)
{
  const char *t = pmcp__pg_text(st, c);
  return t ? strdup(t) : NULL;
}

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

/* An attribute row's value as the attribute listing (pg_list.c) gives it. */
static cJSON *attr_value(pmcp__pg_stmt *st, int c)
{
  const char *type = pmcp__pg_text(st, c);
  if (type && !strcmp(type, "string_set"))
    return cJSON_Parse(pmcp__pg_text(st, c + 1));
  if (type && !strcmp(type, "bool"))
    return cJSON_CreateBool(pmcp__pg_int64(st, c + 2) == 1);
  if (!pmcp__pg_isnull(st, c + 1))
    return cJSON_CreateString(pmcp__pg_text(st, c + 1));
  if (!pmcp__pg_isnull(st, c + 2))
    return cJSON_CreateNumber((double)pmcp__pg_int64(st, c + 2));
  if (!pmcp__pg_isnull(st, c + 3))
    return cJSON_CreateNumber(listed(pmcp__pg_double(st, c + 3)));
  return cJSON_CreateNull();
}

static void add_num(cJSON *o, const char *k, pmcp__pg_stmt *st, int c)
{
  if (pmcp__pg_isnull(st, c))
    cJSON_AddNullToObject(o, k);
  else
    cJSON_AddNumberToObject(o, k, listed(pmcp__pg_double(st, c)));
}

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
        out->runs[j].slug = NULL;
      }
  for (size_t j = 0; j < out->n; j++)
    if (out->runs[j].slug)
      pmcp__rt_run_dispose(&out->runs[j]);
  free(out->runs);
  out->runs = v;
  out->n = k;
  return 0;
}

static int project_id(pmcp_store *s, pmcp__pg *g, pmcp_tenant t, const char *slug,
                      int64_t *out)
{
  *out = 0;
  pmcp__pg_stmt *st;
  int rc = pmcp__pg_prep(s, g, "SELECT id FROM projects WHERE tenant_id=$1 AND slug=$2", &st);
  if (rc)
    return rc;
  pmcp__pg_bind_int64(st, 1, t.id);
  pmcp__pg_bind_text(st, 2, slug);
  int src = pmcp__pg_step(st);
  if (src == PG_ROW)
    *out = pmcp__pg_int64(st, 0);
  else if (src != PG_DONE)
    rc = pmcp__pg_err(s, g, "read the run table");
  pmcp__pg_reset(st);
  if (rc)
    return rc;
  int rc2 = *out ? pmcp__ws_check(s, t, "projects", *out) : PMCP_ENOTFOUND;
  if (rc2 && rc2 != PMCP_ENOTFOUND)
    return rc2;
  if (rc2) {
    *out = 0;
    return pmcp_store_set_error(s, PMCP_ENOTFOUND, "project '%s' not found", slug);
  }
  return 0;
}

/* Steps @p st to its end; 0 or the store error. */
static int finish(pmcp_store *s, pmcp__pg *g, int src)
{
  return src == PG_DONE ? 0 : pmcp__pg_err(s, g, "read the run table");
}

int pmcp__pg_run_table(pmcp_store *s, pmcp_tenant t, const pmcp__rt_query *rq,
                       pmcp__rt_result *out)
{
  memset(out, 0, sizeof *out);
  pmcp__pg *g = PG(s->ctx);
  int rc = pmcp__pg_ready(s, g, t.id);
  if (rc)
    return rc;
  sqlb *q = calloc(1, sizeof *q);
  if (!q)
    return PMCP_ENOMEM;
  pmcp__pg_stmt *st = NULL;
  pmcp__rt_run **by_id = NULL;
  pmcp_buf ids = PMCP_BUF_INIT;
  int src;
  int64_t project = 0;
  if ((rc = project_id(s, g, t, rq->project, &project)))
    goto out;
  reset(q);
  put(q, "SELECT r.id, r.slug, r.name, r.status, r.created, r.started, r.ended,"
         " (SELECT e.slug FROM experiments e WHERE e.id=r.experiment_id)");
  scope(q, rq, 1, &out->pushed);
  put(q, " ORDER BY r.created DESC, r.id DESC");
  if ((rc = prep(s, g, q, t.id, project, &st)))
    goto out;
  size_t cap = 0;
  while ((src = pmcp__pg_step(st)) == PG_ROW) {
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
    r->id = pmcp__pg_int64(st, 0);
    r->slug = col_dup(st, 1);
    r->name = col_dup(st, 2);
    r->status = col_dup(st, 3);
    r->created = pmcp__pg_int64(st, 4);
    r->started = pmcp__pg_int64(st, 5);
    r->ended = pmcp__pg_int64(st, 6);
    r->experiment = col_dup(st, 7);
    r->attrs = cJSON_CreateObject();
    if (!r->slug || !r->name || !r->status || !r->attrs) {
      rc = PMCP_ENOMEM;
      goto out;
    }
  }
  if ((rc = finish(s, g, src)))
    goto out;
  pmcp__pg_finalize(st);
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
  /* The candidates as one int8[] parameter: the later queries look them
   * up by id instead of planning the filter again (which PostgreSQL may
   * do badly on tables without fresh statistics). */
  for (size_t i = 0; i < out->n; i++)
    if (pmcp__buf_printf(&ids, "%c%lld", i ? ',' : '{', (long long)by_id[i]->id)) {
      rc = PMCP_ENOMEM;
      goto out;
    }
  if (pmcp__buf_puts(&ids, "}")) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  /* attribute values: one query per path over the narrowed runs */
  for (size_t p = 0; p < rq->n_paths; p++) {
    reset(q);
    int kp = bind_text(q, rq->paths[p]);
    int ki = bind_text(q, ids.ptr);
    put(q, "SELECT a.owner_id, a.type, a.v_text, a.v_int, a.v_real FROM attributes a"
           " WHERE a.tenant_id=$1 AND a.owner_kind='run' AND a.path=$%d AND"
           " a.owner_id = ANY($%d::int8[])", kp, ki);
    if ((rc = prep(s, g, q, t.id, project, &st)))
      goto out;
    while ((src = pmcp__pg_step(st)) == PG_ROW) {
      pmcp__rt_run *r = find_run(by_id, out->n, pmcp__pg_int64(st, 0));
      if (!r || cJSON_GetObjectItemCaseSensitive(r->attrs, rq->paths[p]))
        continue;
      cJSON *v = attr_value(st, 1);
      if (!v) {
        rc = PMCP_ENOMEM;
        goto out;
      }
      cJSON_AddItemToObject(r->attrs, rq->paths[p], v);
    }
    if ((rc = finish(s, g, src)))
      goto out;
    pmcp__pg_finalize(st);
    st = NULL;
  }
  if (rq->tags) {
    for (size_t i = 0; i < out->n; i++)
      if (!(out->runs[i].tags = cJSON_CreateArray())) {
        rc = PMCP_ENOMEM;
        goto out;
      }
    reset(q);
    int ki = bind_text(q, ids.ptr);
    put(q, "SELECT g.owner_id, g.tag FROM tags g WHERE g.tenant_id=$1 AND g.owner_kind='run'"
           " AND g.owner_id = ANY($%d::int8[]) ORDER BY g.owner_id, g.tag", ki);
    if ((rc = prep(s, g, q, t.id, project, &st)))
      goto out;
    while ((src = pmcp__pg_step(st)) == PG_ROW) {
      pmcp__rt_run *r = find_run(by_id, out->n, pmcp__pg_int64(st, 0));
      if (r)
        cJSON_AddItemToArray(r->tags, cJSON_CreateString(pmcp__pg_text(st, 1)));
    }
    if ((rc = finish(s, g, src)))
      goto out;
    pmcp__pg_finalize(st);
    st = NULL;
  }
  /* series summaries of the wanted keys, in the series listing's order
   * (pg_metrics_read.c: key, labels, kind, scale) */
  for (size_t k = 0; k < rq->n_keys; k++) {
    reset(q);
    int kk = bind_text(q, rq->keys[k]);
    put(q, "SELECT s.run_id, s.key, s.labels, s.kind, s.scale, s.count, s.nonfinite, s.first,"
           " s.last, s.vmin, s.vmax, CASE WHEN s.kind='float' AND s.count>s.nonfinite THEN"
           " s.vsum / (s.count - s.nonfinite) END, s.id FROM series s WHERE s.tenant_id=$1"
           " AND s.key=$%d AND s.run_id = ANY($%d::int8[])"
           " ORDER BY s.run_id, s.key, s.labels, s.kind, s.scale", kk, bind_text(q, ids.ptr));
    if ((rc = prep(s, g, q, t.id, project, &st)))
      goto out;
    while ((src = pmcp__pg_step(st)) == PG_ROW) {
      pmcp__rt_run *r = find_run(by_id, out->n, pmcp__pg_int64(st, 0));
      if (!r)
        continue;
      cJSON *o = cJSON_CreateObject();
      if (!o || (!r->series && !(r->series = cJSON_CreateArray()))) {
        cJSON_Delete(o);
        rc = PMCP_ENOMEM;
        goto out;
      }
      cJSON_AddStringToObject(o, "key", pmcp__pg_text(st, 1));
      const char *labels = pmcp__pg_text(st, 2);
      if (labels && strcmp(labels, "{}"))
        cJSON_AddItemToObject(o, "labels", cJSON_Parse(labels));
      cJSON_AddStringToObject(o, "kind", pmcp__pg_text(st, 3));
      cJSON_AddStringToObject(o, "scale", pmcp__pg_text(st, 4));
      cJSON_AddNumberToObject(o, "count", (double)pmcp__pg_int64(st, 5));
      cJSON_AddNumberToObject(o, "nonfinite", (double)pmcp__pg_int64(st, 6));
      add_num(o, "first", st, 7);
      add_num(o, "last", st, 8);
      add_num(o, "min", st, 9);
      add_num(o, "max", st, 10);
      add_num(o, "mean", st, 11);
      cJSON_AddNumberToObject(o, "series", (double)pmcp__pg_int64(st, 12));
      cJSON_AddItemToArray(r->series, o);
    }
    if ((rc = finish(s, g, src)))
      goto out;
    pmcp__pg_finalize(st);
    st = NULL;
  }
out:
  pmcp__pg_finalize(st);
  free(by_id);
  pmcp_buf_dispose(&ids);
  pmcp_buf_dispose(&q->sql);
  free(q);
  if (rc)
    pmcp__rt_result_dispose(out);
  return rc;
}
