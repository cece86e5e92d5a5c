/* SPDX-License-Identifier: MIT */
/* list_runs' candidates from the store's run table (store/runtable.h):
 * the project's runs narrowed in SQL by what the filter lets SQL state,
 * with the attribute values, tags and series summaries the filter and the
 * sort read loaded in a few set queries, as filter rows
 * (pmcp__trk_run) that the same evaluator as the run-by-run path checks.
 * Backends without a run table answer PMCP_EUNSUPPORTED and list_runs
 * reads run by run. */
#include "tracking/tracking.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/page.h"
#include "store/runtable.h"

/* The sys/ paths that come from the run row, not from attribute rows. */
static int builtin(const char *path)
{
  static const char *const sys[] = {"sys/id", "sys/name", "sys/state", "sys/experiment",
                                    "sys/creation_time", "sys/start_time", "sys/end_time",
                                    "sys/tags", "sys/duration_ms", "sys/project", NULL};
  for (size_t i = 0; sys[i]; i++)
    if (!strcmp(path, sys[i]))
      return 1;
  return 0;
}

static int has_str(const cJSON *arr, const char *s)
{
  const cJSON *it;
  cJSON_ArrayForEach(it, arr) if (!strcmp(it->valuestring, s)) return 1;
  return 0;
}

static void want_attr(cJSON *paths, int *tags, const char *path)
{
  if (!strcmp(path, "sys/tags"))
    *tags = 1;
  else if (!builtin(path) && !has_str(paths, path))
    cJSON_AddItemToArray(paths, cJSON_CreateString(path));
}

static void want_key(cJSON *keys, const char *key)
{
  if (!has_str(keys, key))
    cJSON_AddItemToArray(keys, cJSON_CreateString(key));
}

/* Walks the filter's conditions (and any_of members), noting what they
 * read and translating scales to the store's names in place. */
static void collect(cJSON *conds, cJSON *paths, cJSON *keys, int *tags)
{
  cJSON *c;
  cJSON_ArrayForEach(c, conds)
  {
    cJSON *group = cJSON_GetObjectItemCaseSensitive(c, "any_of");
    if (group) {
      collect(group, paths, keys, tags);
      continue;
    }
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(c, "attr");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, "series");
    if (cJSON_IsString(a))
      want_attr(paths, tags, a->valuestring);
    if (cJSON_IsString(s)) {
      want_key(keys, s->valuestring);
      cJSON *sc = cJSON_GetObjectItemCaseSensitive(c, "scale");
      if (cJSON_IsString(sc) && pmcp__trk_scale(sc->valuestring))
        cJSON_SetValuestring(sc, pmcp__trk_scale(sc->valuestring));
    }
  }
}

/* Fills @p r (a filter row) from table run @p t of @p project, whose
 * contents it takes. */
static int to_row(pmcp__tracking *tk, pmcp__rt_run *t, const char *project,
                  pmcp__trk_run *r)
{
  memset(r, 0, sizeof *r);
  r->tk = tk;
  snprintf(r->id, sizeof r->id, "%s", t->slug);
  r->attrs = t->attrs;
  t->attrs = NULL;
  r->series = t->series ? t->series : cJSON_CreateArray(); /* read: no per-run listing */
  t->series = NULL;
  r->types = t->types ? t->types : cJSON_CreateObject();
  t->types = NULL;
  if (!r->attrs || !r->series || !r->types)
    return PMCP_ENOMEM;
  cJSON_AddStringToObject(r->attrs, "sys/id", r->id);
  if (*t->name)
    cJSON_AddStringToObject(r->attrs, "sys/name", t->name);
  if (*t->status)
    cJSON_AddStringToObject(r->attrs, "sys/state", t->status);
  if (t->experiment)
    cJSON_AddStringToObject(r->attrs, "sys/experiment", t->experiment);
  const struct { int64_t ms; const char *path; } times[] = {
    {t->created, "sys/creation_time"}, {t->started, "sys/start_time"},
    {t->ended, "sys/end_time"}};
  for (size_t i = 0; i < 3; i++)
    if (times[i].ms > 0) {
      char iso[48];
      pmcp__iso_ms(times[i].ms, iso, sizeof iso);
      cJSON_AddStringToObject(r->attrs, times[i].path, iso);
      cJSON_AddStringToObject(r->types, times[i].path, "datetime");
    }
  if (t->started > 0 && t->ended >= t->started) {
    cJSON_AddNumberToObject(r->attrs, "sys/duration_ms", (double)(t->ended - t->started));
    cJSON_AddStringToObject(r->types, "sys/duration_ms", "int");
  }
  if (project && *project)
    cJSON_AddStringToObject(r->attrs, "sys/project", project);
  cJSON_AddItemToObject(r->attrs, "sys/tags", t->tags ? t->tags : cJSON_CreateArray());
  t->tags = NULL;
  return 0;
}

/* Reads @p q's run table (under the store lock) into filter rows. */
static int load_rows(pmcp_call *call, pmcp__tracking *tk, const pmcp__rt_query *q,
                     pmcp__trk_run **out, size_t *n_out)
{
  pmcp__rt_result res;
  memset(&res, 0, sizeof res);
  int rc = pmcp__store_run_table(tk->rs->store, tk->rs->tenant, q, &res);
  if (rc && rc != PMCP_EUNSUPPORTED && rc != PMCP_ENOMEM) {
    pmcp__rs_fail(call, rc == PMCP_ENOTFOUND ? PMCP_TERR_NOT_FOUND : PMCP_TERR_STORE, "%s",
                  pmcp_store_errmsg(tk->rs->store));
    rc = 1;
  }
  if (rc)
    return rc;
  pmcp__trk_run *rows = calloc(res.n ? res.n : 1, sizeof *rows);
  if (!rows) {
    pmcp__rt_result_dispose(&res);
    return PMCP_ENOMEM;
  }
  for (size_t i = 0; i < res.n; i++) {
    rc = to_row(tk, &res.runs[i], q->project, &rows[i]);
    if (rc) {
      for (size_t k = 0; k <= i; k++)
        pmcp__trk_run_dispose(&rows[k]);
      free(rows);
      pmcp__rt_result_dispose(&res);
      return rc;
    }
  }
  *out = rows;
  *n_out = res.n;
  pmcp__rt_result_dispose(&res);
  return 0;
}

/* Runs the table walk reads per statement: what one call holds at once,
 * whatever the size of the project. */
#define CHUNK 1024

/* A match of the walk: its store id, store order and sort key (a string
 * key is owned: the row it came from is gone). */
typedef struct match {
  int64_t sid;
  size_t order;
  pmcp__sort_key key;
  char *str;
} match;

/* Sort order, ties in the store's order. */
static int match_cmp(const void *x, const void *y, const void *ctx)
{
  const match *a = x, *b = y;
  int c = pmcp__sort_cmp(ctx, &a->key, &b->key);
  if (c)
    return c;
  return a->order < b->order ? -1 : a->order > b->order;
}

typedef struct walk {
  match *m;
  size_t n, cap, seen;
} walk;

/* Checks one table run against the filter; keeps a match's key. */
static int take(pmcp_call *call, pmcp__tracking *tk, const pmcp__filter *f,
                const pmcp__sort *sort, const char *project, pmcp__rt_run *t, walk *w)
{
  pmcp__trk_run r;
  int rc = to_row(tk, t, project, &r);
  if (rc) {
    pmcp__trk_run_dispose(&r);
    return rc;
  }
  pmcp__filter_row row = pmcp__trk_row(&r);
  int m = pmcp__filter_match(f, &row);
  pmcp__sort_key key = {0, 0, NULL};
  if (m > 0 && sort)
    m = pmcp__sort_key_of(sort, &row, &key) < 0 ? -1 : 1;
  if (m < 0) {
    rc = pmcp__rs_fail(call, PMCP_TERR_STORE, "cannot read the series of run '%s'", r.id);
    pmcp__trk_run_dispose(&r);
    return rc ? rc : 1;
  }
  size_t order = w->seen++;
  if (m > 0 && w->n == w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 256;
    match *nm = realloc(w->m, cap * sizeof *nm);
    if (!nm)
      rc = PMCP_ENOMEM;
    else {
      w->m = nm;
      w->cap = cap;
    }
  }
  if (m > 0 && !rc) {
    match *x = &w->m[w->n];
    x->sid = t->id;
    x->order = order;
    x->key = key;
    x->str = key.str ? strdup(key.str) : NULL;
    x->key.str = x->str;
    if (key.str && !x->str)
      rc = PMCP_ENOMEM;
    else
      w->n++;
  }
  pmcp__trk_run_dispose(&r);
  return rc;
}

/* Walks the project's run table newest first in chunks of CHUNK runs
 * (each narrowed in SQL by what the filter lets SQL state, with the values
 * the filter and the sort read), checking each run and keeping only its
 * id and sort key. */
static int walk_table(pmcp_call *call, pmcp__tracking *tk, const pmcp__rt_query *base,
                      const pmcp__filter *f, const pmcp__sort *sort, walk *w)
{
  pmcp__rt_query q = *base;
  q.max_rows = CHUNK;
  int rc = 0;
  for (;;) {
    if (pmcp_call_cancelled(call))
      return PMCP_ECANCELLED;
    pmcp__rt_result res;
    memset(&res, 0, sizeof res);
    pthread_mutex_lock(tk->rs->lock);
    rc = pmcp__store_run_table(tk->rs->store, tk->rs->tenant, &q, &res);
    if (rc && rc != PMCP_EUNSUPPORTED && rc != PMCP_ENOMEM) {
      pmcp__rs_fail(call, rc == PMCP_ENOTFOUND ? PMCP_TERR_NOT_FOUND : PMCP_TERR_STORE, "%s",
                    pmcp_store_errmsg(tk->rs->store));
      rc = 1;
    }
    pthread_mutex_unlock(tk->rs->lock);
    if (rc)
      return rc;
    for (size_t i = 0; !rc && i < res.n; i++)
      rc = take(call, tk, f, sort, q.project, &res.runs[i], w);
    size_t n = res.n;
    if (n) {
      q.after_created = res.runs[n - 1].created;
      q.after_id = res.runs[n - 1].id;
    }
    pmcp__rt_result_dispose(&res);
    if (rc || n < CHUNK)
      return rc;
  }
}

int pmcp__trk_run_scan(pmcp_call *call, pmcp__tracking *tk, const char *project,
                       const cJSON *filter, const pmcp__filter *f, const pmcp__sort *sort,
                       size_t offset, size_t limit, pmcp__trk_run **out, size_t *n_out,
                       size_t *total)
{
  *out = NULL;
  *n_out = 0;
  *total = 0;
  cJSON *fcopy = filter ? cJSON_Duplicate(filter, 1) : NULL;
  cJSON *paths = cJSON_CreateArray(), *keys = cJSON_CreateArray();
  const char **pv = NULL, **kv = NULL;
  walk w = {NULL, 0, 0, 0};
  int64_t *ids = NULL;
  int tags = 0, rc = PMCP_ENOMEM;
  if ((filter && !fcopy) || !paths || !keys)
    goto out;
  collect(fcopy, paths, keys, &tags);
  if (sort && sort->attr)
    want_attr(paths, &tags, sort->attr);
  if (sort && sort->series)
    want_key(keys, sort->series);
  size_t np = (size_t)cJSON_GetArraySize(paths), nk = (size_t)cJSON_GetArraySize(keys);
  pv = calloc(np + 1, sizeof *pv);
  kv = calloc(nk + 1, sizeof *kv);
  if (!pv || !kv)
    goto out;
  size_t i = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, paths) pv[i++] = it->valuestring;
  i = 0;
  cJSON_ArrayForEach(it, keys) kv[i++] = it->valuestring;
  pmcp__rt_query q = {project, fcopy, pv, np, kv, nk, tags, NULL, 0, 0, 0, 0};
  if ((rc = walk_table(call, tk, &q, f, sort, &w)))
    goto out;
  if (sort && w.n > 1) {
    match *tmp = malloc(w.n * sizeof *tmp);
    if (!tmp) {
      rc = PMCP_ENOMEM;
      goto out;
    }
    pmcp__trk_msort(w.m, w.n, sizeof *w.m, tmp, match_cmp, sort);
    free(tmp);
  }
  *total = w.n;
  size_t n = offset < w.n ? w.n - offset : 0;
  if (n > limit)
    n = limit;
  if (!n)
    goto out;
  if (!(ids = malloc(n * sizeof *ids))) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  for (i = 0; i < n; i++)
    ids[i] = w.m[offset + i].sid;
  /* the page's rows: what the sort and the row read, for these runs */
  const char *spv[1] = {sort ? sort->attr : NULL}, *skv[1] = {sort ? sort->series : NULL};
  pmcp__rt_query pq = {project, NULL, spv, spv[0] ? 1 : 0, skv, skv[0] ? 1 : 0, 1, ids, n,
                       0, 0, 0};
  pthread_mutex_lock(tk->rs->lock);
  rc = load_rows(call, tk, &pq, out, n_out);
  pthread_mutex_unlock(tk->rs->lock);
out:
  for (i = 0; i < w.n; i++)
    free(w.m[i].str);
  free(w.m);
  free(ids);
  free(pv);
  free(kv);
  cJSON_Delete(paths);
  cJSON_Delete(keys);
  cJSON_Delete(fcopy);
  return rc;
}

int pmcp__trk_run_page(pmcp_call *call, pmcp__tracking *tk, const char *project,
                       const cJSON *filter, const pmcp__sort *sort, size_t offset,
                       size_t limit, pmcp__trk_run **out, size_t *n_out, size_t *total,
                       int *estimated)
{
  *out = NULL;
  *n_out = 0;
  *total = 0;
  *estimated = 0;
  cJSON *fcopy = filter ? cJSON_Duplicate(filter, 1) : NULL;
  cJSON *paths = cJSON_CreateArray(), *keys = cJSON_CreateArray();
  int tags = 0, rc = PMCP_ENOMEM;
  if ((filter && !fcopy) || !paths || !keys)
    goto out;
  collect(fcopy, paths, keys, &tags); /* scales in the store's names */
  pmcp__rt_sort rs = {NULL, NULL, NULL, NULL, NULL, 0};
  if (sort) {
    rs.attr = sort->attr;
    rs.series = sort->series;
    rs.function = sort->function;
    rs.scale = sort->series ? pmcp__trk_scale(sort->scale) : NULL;
    rs.labels = sort->labels;
    rs.desc = sort->desc;
  }
  pmcp__rt_page_query pq = {project, fcopy, sort ? &rs : NULL, offset, limit};
  pmcp__rt_page pg;
  pthread_mutex_lock(tk->rs->lock);
  rc = pmcp__store_run_page(tk->rs->store, tk->rs->tenant, &pq, &pg);
  if (rc == 0 && pg.n) {
    /* the page's rows: what the sort and the row read, for these runs */
    const char *pv[1] = {sort ? sort->attr : NULL}, *kv[1] = {sort ? sort->series : NULL};
    pmcp__rt_query q = {project, NULL, pv, pv[0] ? 1 : 0, kv, kv[0] ? 1 : 0, 1,
                        pg.ids, pg.n, 0, 0, 0};
    rc = load_rows(call, tk, &q, out, n_out);
  } else if (rc && rc != PMCP_EUNSUPPORTED && rc != PMCP_ENOMEM) {
    pmcp__rs_fail(call, rc == PMCP_ENOTFOUND ? PMCP_TERR_NOT_FOUND : PMCP_TERR_STORE, "%s",
                  pmcp_store_errmsg(tk->rs->store));
    rc = 1;
  }
  pthread_mutex_unlock(tk->rs->lock);
  if (rc == 0) {
    *total = pg.total;
    *estimated = pg.estimated;
  }
  pmcp__rt_page_dispose(&pg);
out:
  cJSON_Delete(paths);
  cJSON_Delete(keys);
  cJSON_Delete(fcopy);
  return rc;
}
