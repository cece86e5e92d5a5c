/* SPDX-License-Identifier: MIT */
/* pmcp__rp_page() (runpage.h): list_runs' exact page when every filter
 * condition is on the run row (sys/state, sys/name, sys/id) or its tags.
 * The conditions become one SQL predicate on the runs row, so nothing is
 * read per project run: the cost follows the page and a cap, not the lab.
 *
 *  - A condition matching few runs (under SELECTIVE, counted from its own
 *    index: a state, a name range, one tag) drives: its runs are read from
 *    that index with the other conditions checked, sorted here, and the
 *    total is exact.
 *  - Otherwise the project's runs are read in the page's order (newest
 *    first from runs_project_list or runs_project_status, or a series in
 *    value order) with the predicate checked on each row, so a page costs
 *    about (offset + limit) / density rows; the total is counted up to
 *    PMCP__RP_COUNT_PAST past the page and is a lower bound beyond.
 *
 * The predicates state the same sets as runfilter.c's bitmap scans of
 * these conditions (col_leaf, tags_leaf); tracking-exact checks both
 * against the run-by-run evaluator. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/runpage.h"
#include "util/buf.h"

/* A condition counted under this many runs drives (is read whole). */
#define SELECTIVE 1000
/* Texts one predicate binds; more (long in lists) take the bitmaps. */
#define MAX_BINDS 64
#define MAX_DRIVERS 16

typedef struct pred {
  pmcp_buf sql;              /* " AND ..." over runs r */
  const char *txt[MAX_BINDS];
  char *own[MAX_BINDS];      /* bounds made here */
  int n, n_own;
  int base;                  /* the first text's placeholder */
  int hint;                  /* SQLite: keep ranges off the indexes (a walk in order) */
  const char *driven;        /* a tag the read joins already: not checked again */
} pred;

static void pred_init(pred *p, int base, int hint)
{
  memset(p, 0, sizeof *p);
  p->sql = (pmcp_buf)PMCP_BUF_INIT;
  p->base = base;
  p->hint = hint;
}

static void pred_free(pred *p)
{
  for (int i = 0; i < p->n_own; i++)
    free(p->own[i]);
  pmcp_buf_dispose(&p->sql);
}

/* The placeholder of a new text bind; 0 when there is no room. */
static int ph(pred *p, const char *t)
{
  if (p->n == MAX_BINDS)
    return 0;
  p->txt[p->n] = t;
  return p->base + p->n++;
}

static int ph_copy(pred *p, const char *t)
{
  char *c = p->n_own < MAX_BINDS ? strdup(t) : NULL;
  if (!c)
    return 0;
  p->own[p->n_own++] = c;
  return ph(p, c);
}

static const char *js(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *ordered_sym(const char *op)
{
  static const char *const sym[][2] = {{"gt", ">"}, {"gte", ">="}, {"lt", "<"}, {"lte", "<="}};
  for (size_t i = 0; i < sizeof sym / sizeof sym[0]; i++)
    if (!strcmp(op, sym[i][0]))
      return sym[i][1];
  return NULL;
}

/* A condition on a run column (its text never NULL): the runs listing the
 * path (not empty) that satisfy it. 0, 1 (not stated here) or an error. */
static int put_col(pred *p, const pmcp__sql *q, const char *col, const char *op,
                   const cJSON *v)
{
  char prefix[256];
  int exists = !strcmp(op, "exists"), eq = !strcmp(op, "eq"), in = !strcmp(op, "in");
  int ne = !strcmp(op, "ne"), nin = !strcmp(op, "not_in");
  const char *sym = cJSON_IsString(v) ? ordered_sym(op) : NULL;
  int pre = !strcmp(op, "matches") && cJSON_IsString(v) &&
            pmcp__rf_literal_prefix(v->valuestring, prefix, sizeof prefix);
  if (!exists && !eq && !in && !ne && !nin && !sym && !pre)
    return 1;
  if ((in || nin) && !cJSON_IsArray(v))
    return 1;
  /* a walk in order: only an equal state has an index in that order
   * (runs_project_status); "+" keeps SQLite from sorting a range's runs */
  const char *plus = p->hint && !(eq && !strcmp(col, "r.status")) ? "+" : "";
  pmcp_buf *b = &p->sql;
  int rc = 0;
  if (exists && v && !cJSON_IsTrue(v))
    return pmcp__buf_printf(b, " AND %s%s=''", plus, col) ? PMCP_ENOMEM : 0;
  rc |= pmcp__buf_printf(b, " AND %s%s<>''", plus, col);
  if (exists)
    return rc ? PMCP_ENOMEM : 0;
  if (eq || in || ne || nin) {
    const cJSON *it = (in || nin) ? v->child : v;
    int n_str = 0;
    for (; it; it = (in || nin) ? it->next : NULL) {
      if (!cJSON_IsString(it))
        continue; /* another type never equals a text */
      int k = ph(p, it->valuestring);
      if (!k)
        return 1;
      if (!n_str++)
        rc |= pmcp__buf_printf(b, " AND %s%s %sIN (", plus, col, ne || nin ? "NOT " : "");
      rc |= pmcp__buf_printf(b, "%s?%d", n_str > 1 ? "," : "", k);
    }
    if (n_str)
      rc |= pmcp__buf_puts(b, ")");
    else if (eq || in)
      rc |= pmcp__buf_puts(b, " AND 1=0");
    return rc ? PMCP_ENOMEM : 0;
  }
  if (sym) {
    int k = ph(p, v->valuestring);
    if (!k)
      return 1;
    rc |= pmcp__buf_printf(b, " AND %s%s%s %s ?%d", plus, col, PMCP__RT_BYTES(q), sym, k);
    return rc ? PMCP_ENOMEM : 0;
  }
  /* matches "^prefix": the texts in [prefix, prefix with its last byte
   * raised), bytewise (UTF-8 never holds 0xff) */
  size_t n = strlen(prefix);
  if (!n)
    return rc ? PMCP_ENOMEM : 0;
  int lo = ph_copy(p, prefix);
  prefix[n - 1] = (char)((unsigned char)prefix[n - 1] + 1);
  int hi = ph_copy(p, prefix);
  if (!lo || !hi)
    return 1;
  rc |= pmcp__buf_printf(b, " AND %s%s%s >= ?%d AND %s%s%s < ?%d", plus, col,
                         PMCP__RT_BYTES(q), lo, plus, col, PMCP__RT_BYTES(q), hi);
  return rc ? PMCP_ENOMEM : 0;
}

/* sys/tags: contains, contains_any, contains_all, whole tags. The run's
 * tags are its tenant's (no tenant_id: the primary key alone answers). */
static int put_tags(pred *p, const char *op, const cJSON *v)
{
  int all = !strcmp(op, "contains_all"), any = !strcmp(op, "contains_any");
  if (!strcmp(op, "contains") ? !cJSON_IsString(v) : (!any && !all) || !cJSON_IsArray(v))
    return 1;
  const cJSON *it = cJSON_IsString(v) ? v : v->child;
  int rc = 0, n = 0;
  for (; it; it = cJSON_IsString(v) ? NULL : it->next) {
    if (!any && p->driven && it->valuestring == p->driven)
      continue;
    int k = cJSON_IsString(it) ? ph(p, it->valuestring) : 0;
    if (!k)
      return 1;
    if (!any || !n)
      rc |= pmcp__buf_printf(&p->sql,
                             " AND EXISTS(SELECT 1 FROM tags x WHERE x.owner_kind='run' AND"
                             " x.owner_id=r.id AND x.tag%s", any ? " IN (" : "=");
    rc |= pmcp__buf_printf(&p->sql, "%s?%d%s", any && n ? "," : "", k, any ? "" : ")");
    n++;
  }
  if (any)
    rc |= pmcp__buf_puts(&p->sql, n ? "))" : " AND 1=0");
  return rc ? PMCP_ENOMEM : 0;
}

/* One top-level condition. 0, 1 (not stated here) or an error. */
static int put_cond(pred *p, const pmcp__sql *q, const cJSON *cond)
{
  const char *path = js(cond, "attr"), *op = js(cond, "op");
  if (!path || !op || cJSON_GetObjectItemCaseSensitive(cond, "any_of"))
    return 1;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(cond, "value");
  const char *col = pmcp__rf_run_col(path);
  if (col)
    return put_col(p, q, col, op, v);
  if (!strcmp(path, "sys/tags"))
    return put_tags(p, op, v);
  return 1;
}

static int put_filter(pred *p, const pmcp__sql *q, const cJSON *filter)
{
  const cJSON *cond;
  cJSON_ArrayForEach(cond, filter)
  {
    int rc = put_cond(p, q, cond);
    if (rc)
      return rc;
  }
  return 0;
}

/* ---- statements ---------------------------------------------------------- */

typedef struct rp {
  pmcp_store *s;
  pmcp__sql *q;
  int64_t tenant, project;
} rp;

/* Prepares @p sql and binds ?1 tenant, ?2 project (when @p project),
 * the texts of @p p and the integers @p ints from ?(base + texts). */
static int prep(rp *c, const char *sql, const pred *p, int project, const int64_t *ints,
                int n_ints, pmcp__stmt **st)
{
  int rc = pmcp__sql_prep_text(c->s, c->q, sql, st);
  if (rc)
    return rc;
  pmcp__st_bind_int64(*st, 1, c->tenant);
  if (project)
    pmcp__st_bind_int64(*st, 2, c->project);
  for (int i = 0; p && i < p->n; i++)
    pmcp__st_bind_text(*st, p->base + i, p->txt[i]);
  for (int i = 0; i < n_ints; i++)
    pmcp__st_bind_int64(*st, (p ? p->base + p->n : 3) + i, ints[i]);
  return 0;
}

static int count1(rp *c, const char *sql, const pred *p, int project, const int64_t *ints,
                  int n_ints, int64_t *out)
{
  pmcp__stmt *st;
  int rc = prep(c, sql, p, project, ints, n_ints, &st);
  if (rc)
    return rc;
  int src = pmcp__st_step(st);
  *out = src == PMCP__ROW ? pmcp__st_int64(st, 0) : 0;
  rc = src == PMCP__ROW ? 0 : pmcp__st_err(c->s, st, "read the run table");
  pmcp__sql_release(c->q, st);
  return rc;
}

#define SCOPE "r.tenant_id=?1 AND r.project_id=?2 AND r.deleted=0"
/* A run looked up by id: its project is its tenant's, and the check is
 * then a covering index probe (runs_project_live) */
#define SCOPE_OF_ID "r.project_id=?2 AND r.deleted=0"

/* A condition's own index: a run column condition over the project's
 * runs, or one tag (a contains, or a member of a contains_all). */
typedef struct driver {
  const cJSON *cond; /* the run column condition, or NULL */
  const char *tag;
} driver;

static int find_drivers(const cJSON *filter, driver *d, int *n)
{
  const cJSON *cond;
  *n = 0;
  cJSON_ArrayForEach(cond, filter)
  {
    const char *path = js(cond, "attr"), *op = js(cond, "op");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cond, "value");
    if (*n >= MAX_DRIVERS)
      return 1;
    if (pmcp__rf_run_col(path))
      d[(*n)++] = (driver){cond, NULL};
    else if (!strcmp(op, "contains"))
      d[(*n)++] = (driver){NULL, v->valuestring};
    else if (!strcmp(op, "contains_all") && v->child)
      d[(*n)++] = (driver){NULL, v->child->valuestring};
  }
  return 0;
}

/* How many runs driver @p d reads, counted up to @p cap. */
static int driver_count(rp *c, const driver *d, int64_t cap, int64_t *out)
{
  char sql[1200];
  if (d->tag) {
    pred p;
    pred_init(&p, 2, 0);
    ph(&p, d->tag);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM (SELECT 1 FROM tags g WHERE g.owner_kind='run' AND"
             " g.tag=?2 AND g.tenant_id=?1 LIMIT %lld) AS k", (long long)cap);
    int rc = count1(c, sql, &p, 0, NULL, 0, out);
    pred_free(&p);
    return rc;
  }
  pred p;
  pred_init(&p, 3, 0);
  int rc = put_cond(&p, c->q, d->cond);
  if (!rc && p.sql.len + 200 > sizeof sql)
    rc = 1;
  if (!rc) {
    snprintf(sql, sizeof sql, "SELECT count(*) FROM (SELECT 1 FROM runs r WHERE " SCOPE
             "%s LIMIT %lld) AS k", p.sql.ptr, (long long)cap);
    rc = count1(c, sql, &p, 1, NULL, 0, out);
  }
  pred_free(&p);
  return rc;
}

/* "FROM ... WHERE ..." reading driver @p d's runs (all of the project's
 * live runs when @p d is NULL) with @p p checked; the driver's tag is a
 * text of @p p (added here). */
static int from_where(rp *c, const driver *d, pred *p, pmcp_buf *out)
{
  int rc;
  const char *cond = p->sql.len ? p->sql.ptr : "";
  if (d && d->tag) {
    int k = ph(p, d->tag);
    if (!k)
      return 1;
    /* each of the tag's runs looked up by id, in the tag's order: SQLite
     * joins in the order written (CROSS JOIN); PostgreSQL would hash the
     * project's runs instead (its row estimate ignores the LIMIT), which a
     * LATERAL subquery it cannot flatten (OFFSET 0) rules out */
    if (c->q->ops->pg)
      rc = pmcp__buf_printf(out,
                            " FROM tags g CROSS JOIN LATERAL (SELECT r.id, r.created FROM runs r"
                            " WHERE r.id=g.owner_id AND " SCOPE_OF_ID "%s OFFSET 0) r WHERE"
                            " g.owner_kind='run' AND g.tag=?%d AND g.tenant_id=?1", cond, k);
    else
      rc = pmcp__buf_printf(out,
                            " FROM tags g CROSS JOIN runs r ON r.id=g.owner_id WHERE"
                            " g.owner_kind='run' AND g.tag=?%d AND g.tenant_id=?1 AND "
                            SCOPE_OF_ID "%s", k, cond);
  } else {
    rc = pmcp__buf_printf(out, " FROM runs r WHERE " SCOPE "%s", cond);
  }
  return rc ? PMCP_ENOMEM : 0;
}

/* ---- a driver's runs, sorted here ---------------------------------------- */

typedef struct row {
  pmcp__rf_run run; /* first: pmcp__rf_newest_first() orders rows */
  int valued;
  double raw, lv;   /* the sort value, and as listed */
} row;

#define newest_first pmcp__rf_newest_first

/* The order of runfilter.c's series walk (the index's): valued rows by raw
 * value (a NaN above every number), then run id; descending reverses both. */
static _Thread_local int desc_walk; /* qsort has no user data: per thread */
static int walk_order(const void *a, const void *b)
{
  const row *x = a, *y = b;
  if (x->valued != y->valued)
    return x->valued ? -1 : 1;
  if (!x->valued)
    return newest_first(a, b);
  int c = 0;
  if (isnan(x->raw) || isnan(y->raw))
    c = isnan(x->raw) - isnan(y->raw);
  else if (x->raw != y->raw)
    c = x->raw < y->raw ? -1 : 1;
  if (!c)
    c = x->run.id < y->run.id ? -1 : x->run.id > y->run.id;
  return desc_walk ? -c : c;
}

/* Sorts @p r as the evaluator: by the listed value, ties (equal once
 * listed; a NaN ties with nothing) newest first, then the runs without a
 * value newest first; or newest first throughout without a sort. */
static void sort_rows(row *r, size_t n, const pmcp__rt_sort *so)
{
  if (!so) {
    qsort(r, n, sizeof *r, newest_first);
    return;
  }
  desc_walk = so->desc;
  qsort(r, n, sizeof *r, walk_order);
  for (size_t i = 0; i < n && r[i].valued;) {
    size_t j = i + 1;
    while (j < n && r[j].valued && r[j].lv == r[i].lv)
      j++;
    if (j - i > 1)
      qsort(r + i, j - i, sizeof *r, newest_first);
    i = j;
  }
}

/* Reads every run driver @p d gives that @p p keeps (fewer than
 * SELECTIVE), sorts them and places the page. */
static int read_driver(rp *c, const driver *d, pred *p, const pmcp__rt_page_query *rq,
                       pmcp__rt_page *out)
{
  const pmcp__rt_sort *so = rq->sort;
  pmcp_buf sql = PMCP_BUF_INIT;
  int rc = 0, k_key = 0, k_scale = 0;
  if (so && (!(k_key = ph(p, so->series)) ||
             !(k_scale = ph(p, so->scale ? so->scale : "step"))))
    return 1;
  if (so)
    rc = pmcp__buf_printf(&sql,
                          "SELECT r.id, r.created, (SELECT %s FROM series s WHERE"
                          " s.run_id=r.id AND s.key=?%d AND s.scale=?%d AND s.tenant_id=?1)",
                          pmcp__rf_series_expr(so->function), k_key, k_scale);
  else
    rc = pmcp__buf_puts(&sql, "SELECT r.id, r.created, NULL");
  if (rc || (rc = from_where(c, d, p, &sql))) {
    pmcp_buf_dispose(&sql);
    return rc; /* 1: no room to state it here (the caller scans instead) */
  }
  pmcp__stmt *st;
  if ((rc = prep(c, sql.ptr, p, 1, NULL, 0, &st))) {
    pmcp_buf_dispose(&sql);
    return rc;
  }
  size_t n = 0, cap = 64;
  row *r = malloc(cap * sizeof *r);
  int src = PMCP__DONE;
  while (r && (src = pmcp__st_step(st)) == PMCP__ROW) {
    if (n == cap) {
      row *nr = realloc(r, (cap *= 2) * sizeof *r);
      if (!nr)
        break;
      r = nr;
    }
    row *w = &r[n++];
    w->run.id = pmcp__st_int64(st, 0);
    w->run.created = pmcp__st_int64(st, 1);
    w->valued = !pmcp__st_null(st, 2);
    w->raw = w->valued ? pmcp__st_double(st, 2) : 0;
    w->lv = pmcp__rt_listed(w->raw);
  }
  if (!r || src == PMCP__ROW)
    rc = pmcp_store_set_error(c->s, PMCP_ENOMEM, "out of memory");
  else if (src != PMCP__DONE)
    rc = pmcp__st_err(c->s, st, "read the run table");
  pmcp__sql_release(c->q, st);
  pmcp_buf_dispose(&sql);
  if (!rc) {
    sort_rows(r, n, so);
    out->total = n;
    for (size_t i = rq->offset; i < n && out->n < rq->limit; i++)
      out->ids[out->n++] = r[i].run.id;
  }
  free(r);
  return rc;
}

/* ---- the project's runs in the page's order ------------------------------ */

static int walk_page(rp *c, const pmcp__rt_page_query *rq, pmcp__rt_page *out)
{
  pred w;
  pred_init(&w, rq->sort ? 8 : 3, !c->q->ops->pg);
  int rc = put_filter(&w, c->q, rq->filter);
  if (!rc && rq->sort) {
    rc = pmcp__rf_series_where(c->s, c->q, c->tenant, c->project, rq->sort,
                               w.sql.len ? w.sql.ptr : "", w.txt, w.n, rq->offset, rq->limit,
                               out);
  } else if (!rc) {
    pmcp_buf sql = PMCP_BUF_INIT;
    rc = pmcp__buf_printf(&sql, "SELECT r.id FROM runs r WHERE " SCOPE "%s"
                          " ORDER BY r.created DESC, r.id DESC LIMIT ?%d OFFSET ?%d",
                          w.sql.len ? w.sql.ptr : "", w.base + w.n, w.base + w.n + 1)
             ? PMCP_ENOMEM : 0;
    int64_t ints[2] = {(int64_t)rq->limit, (int64_t)rq->offset};
    pmcp__stmt *st;
    if (!rc && !(rc = prep(c, sql.ptr, &w, 1, ints, 2, &st))) {
      int src;
      while ((src = pmcp__st_step(st)) == PMCP__ROW && out->n < rq->limit)
        out->ids[out->n++] = pmcp__st_int64(st, 0);
      if (src != PMCP__ROW && src != PMCP__DONE)
        rc = pmcp__st_err(c->s, st, "read the run table");
      pmcp__sql_release(c->q, st);
    }
    pmcp_buf_dispose(&sql);
  }
  pred_free(&w);
  return rc;
}

/* The total, counted through driver @p d (or the project's runs) up to
 * the page's end plus PMCP__RP_COUNT_PAST. */
static int count_total(rp *c, const driver *d, const pmcp__rt_page_query *rq,
                       pmcp__rt_page *out)
{
  pred p;
  pred_init(&p, 3, 0);
  pmcp_buf sql = PMCP_BUF_INIT;
  int64_t cap = (int64_t)(rq->offset + rq->limit) + PMCP__RP_COUNT_PAST, n = 0;
  p.driven = d ? d->tag : NULL;
  int rc = put_filter(&p, c->q, rq->filter);
  if (!rc && !(rc = pmcp__buf_puts(&sql, "SELECT count(*) FROM (SELECT 1") ? PMCP_ENOMEM : 0))
    rc = from_where(c, d, &p, &sql);
  if (!rc)
    rc = pmcp__buf_printf(&sql, " LIMIT ?%d) AS k", p.base + p.n) ? PMCP_ENOMEM : 0;
  if (!rc)
    rc = count1(c, sql.ptr, &p, 1, &cap, 1, &n);
  if (!rc) {
    out->total = (size_t)n;
    out->estimated = n >= cap;
  }
  pmcp_buf_dispose(&sql);
  pred_free(&p);
  return rc;
}

int pmcp__rp_page(pmcp_store *s, pmcp__sql *q, int64_t tenant, int64_t project,
                  const pmcp__rt_page_query *rq, pmcp__rt_page *out)
{
  rp c = {s, q, tenant, project};
  if (rq->filter && !cJSON_IsArray(rq->filter))
    return 1;
  if (rq->sort && (!rq->sort->series || rq->sort->attr || rq->sort->labels))
    return 1;
  /* every condition stated here, before any read */
  pred all;
  pred_init(&all, 3, 0);
  int rc = put_filter(&all, q, rq->filter);
  pred_free(&all);
  driver d[MAX_DRIVERS];
  int n_d = 0;
  if (rc || (rc = find_drivers(rq->filter, d, &n_d)))
    return rc;
  /* the driver with the fewest runs, when it has few */
  int best = -1;
  int64_t best_n = SELECTIVE;
  for (int i = 0; i < n_d && !rc; i++) {
    int64_t n = 0;
    rc = driver_count(&c, &d[i], best_n, &n);
    if (!rc && n < best_n) {
      best = i;
      best_n = n;
    }
  }
  if (rc)
    return rc;
  if (best >= 0) {
    pred p;
    pred_init(&p, 3, 0);
    p.driven = d[best].tag;
    rc = put_filter(&p, q, rq->filter);
    if (!rc)
      rc = read_driver(&c, &d[best], &p, rq, out);
    pred_free(&p);
    return rc;
  }
  /* counted through a run column's index when there is one (a tag's runs
   * are looked up one by one), else the first tag's */
  const driver *cd = NULL;
  for (int i = 0; i < n_d && !cd; i++)
    if (d[i].cond)
      cd = &d[i];
  if (!cd && n_d)
    cd = &d[0];
  if ((rc = count_total(&c, cd, rq, out)))
    return rc;
  return walk_page(&c, rq, out);
}
