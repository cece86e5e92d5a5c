/* SPDX-License-Identifier: MIT */
/* list_runs (the run table: filter, sort, chosen attribute and summary
 * columns) and get_run_attributes. */
#include "tracking/tracking.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/page.h"
#include "store/runtable.h"

/* Most runs a project listing reads. */
#define MAX_RUNS 200000
#define MAX_COLUMNS 30

/* Checks every "scale" in a filter (or a sort / summary column) names a
 * known scale. Returns the bad value or NULL. */
static const char *bad_scale(const cJSON *j)
{
  if (cJSON_IsObject(j)) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "scale");
    if (cJSON_IsString(s) && !pmcp__trk_scale(s->valuestring))
      return s->valuestring;
  }
  const cJSON *it;
  if (cJSON_IsArray(j) || cJSON_IsObject(j))
    cJSON_ArrayForEach(it, j)
    {
      const char *b = bad_scale(it);
      if (b)
        return b;
    }
  return NULL;
}

typedef struct summary_col {
  pmcp__sort spec; /* series, function, scale, labels (direction unused) */
  char name[300];  /* "last(val/loss)", "last(train/loss, rank=0)" */
} summary_col;

/* A column's name: F(KEY), with its labels and a scale other than STEP,
 * so columns that differ only in those get different keys. */
static void col_name(summary_col *c)
{
  size_t n = (size_t)snprintf(c->name, sizeof c->name, "%s(%s", c->spec.function,
                              c->spec.series);
  const cJSON *l;
  cJSON_ArrayForEach(l, c->spec.labels)
  {
    if (n < sizeof c->name)
      n += (size_t)snprintf(c->name + n, sizeof c->name - n, ", %s=%s", l->string,
                            cJSON_IsString(l) ? l->valuestring : "?");
  }
  if (c->spec.scale && strcmp(c->spec.scale, "STEP") && n < sizeof c->name)
    n += (size_t)snprintf(c->name + n, sizeof c->name - n, ", scale=%s", c->spec.scale);
  if (n + 1 < sizeof c->name)
    snprintf(c->name + n, sizeof c->name - n, ")");
}

typedef struct hit {
  pmcp__trk_run run;
  pmcp__sort_key key;
  size_t order; /* store order: newest first; ties keep it */
} hit;

static int hit_cmp_ctx(const void *x, const void *y, const void *ctx)
{
  const hit *a = x, *b = y;
  int c = pmcp__sort_cmp(ctx, &a->key, &b->key);
  if (c)
    return c;
  return a->order < b->order ? -1 : a->order > b->order;
}

/* The stored attributes of the page's runs [offset, offset+limit) of
 * @p hits, in one query: *out gets @p limit objects (NULL past the end). */
static int page_attributes(pmcp__tracking *tk, const hit *hits, size_t n_hits, size_t offset,
                           size_t limit, cJSON ***out)
{
  *out = NULL;
  size_t n = offset < n_hits ? n_hits - offset : 0;
  if (n > limit)
    n = limit;
  const char **slugs = calloc(n ? n : 1, sizeof *slugs);
  cJSON **attrs = calloc(limit ? limit : 1, sizeof *attrs);
  if (!slugs || !attrs) {
    free(slugs);
    free(attrs);
    return PMCP_ENOMEM;
  }
  for (size_t i = 0; i < n; i++)
    slugs[i] = hits[offset + i].run.id;
  pthread_mutex_lock(tk->rs->lock);
  int rc = pmcp__store_run_attrs(tk->rs->store, tk->rs->tenant, slugs, n, attrs);
  pthread_mutex_unlock(tk->rs->lock);
  free(slugs);
  if (rc) {
    free(attrs);
    return rc;
  }
  *out = attrs;
  return 0;
}

/* ---- series a condition names: RL scales and label splits ------------- */

#define MAX_UNSCALED 96

/* A series condition, sort or summary column, and where it is. */
typedef struct unscaled {
  const char *key;
  const char *scale; /* store name: the given scale, or step */
  int scaled;        /* "scale" was given */
  int labelled;      /* "labels" was given */
  char where[80];
  unsigned mask;     /* scales the project logs the key on: 1 step, 2 env, 4 ep */
  char split[240];   /* label sets of runs holding the key only split by labels */
} unscaled;

static void note_unscaled(unscaled *u, size_t *n, const cJSON *c, const char *where)
{
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(c, "series");
  const cJSON *sc = cJSON_GetObjectItemCaseSensitive(c, "scale");
  if (*n >= MAX_UNSCALED || !cJSON_IsString(k))
    return;
  u[*n].key = k->valuestring;
  u[*n].scaled = sc != NULL;
  u[*n].scale = cJSON_IsString(sc) && pmcp__trk_scale(sc->valuestring)
                  ? pmcp__trk_scale(sc->valuestring) : "step";
  /* "exists" holds with any split of the key: it needs no labels */
  const cJSON *op = cJSON_GetObjectItemCaseSensitive(c, "op");
  u[*n].labelled = cJSON_GetObjectItemCaseSensitive(c, "labels") != NULL ||
                   (cJSON_IsString(op) && !strcmp(op->valuestring, "exists"));
  snprintf(u[*n].where, sizeof u[*n].where, "%s", where);
  u[*n].mask = 0;
  u[*n].split[0] = '\0';
  (*n)++;
}

/* Adds label set @p labels (JSON text) to @p u's split list once. */
static void note_split(unscaled *u, const char *labels)
{
  if (strstr(u->split, labels))
    return;
  size_t used = strlen(u->split);
  if (used + strlen(labels) + 3 < sizeof u->split)
    snprintf(u->split + used, sizeof u->split - used, "%s%s", used ? ", " : "", labels);
}

/* The scales and label splits of every key by reading the project's runs
 * one by one (a backend without SQL hooks). */
static int scales_run_by_run(pmcp_call *call, pmcp__tracking *tk, const char *pref,
                             unscaled *u, size_t n)
{
  cJSON *runs = NULL;
  if (pmcp__trk_list_all(call, tk, "run", pref, MAX_RUNS, &runs))
    return 1;
  const cJSON *run;
  int rc = 0;
  cJSON_ArrayForEach(run, runs)
  {
    pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
    o.kind = "series";
    o.parent = pmcp__js(run, "ref");
    o.limit = 1000;
    cJSON *page = NULL;
    char err[300];
    if ((rc = pmcp__rs_list(tk->rs, &o, &page, err, sizeof err)) != 0) {
      int f = pmcp__rs_fail(call, PMCP_TERR_STORE, "%s", err);
      rc = f ? f : 1;
      break;
    }
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(page, "items"), *it;
    for (size_t i = 0; i < n; i++) {
      int plain = 0;
      cJSON_ArrayForEach(it, items)
      {
        const char *sc = pmcp__js(it, "scale");
        if (strcmp(pmcp__js(it, "key"), u[i].key))
          continue;
        u[i].mask |= !strcmp(sc, "step") ? 1 : !strcmp(sc, "env_step") ? 2
                     : !strcmp(sc, "episode") ? 4 : 0;
        if (!strcmp(sc, u[i].scale) &&
            cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(it, "labels")) == 0)
          plain = 1;
      }
      cJSON_ArrayForEach(it, items)
      {
        const cJSON *lab = cJSON_GetObjectItemCaseSensitive(it, "labels");
        if (plain || strcmp(pmcp__js(it, "key"), u[i].key) ||
            strcmp(pmcp__js(it, "scale"), u[i].scale) || cJSON_GetArraySize(lab) == 0)
          continue;
        char *t = cJSON_PrintUnformatted(lab);
        if (t)
          note_split(&u[i], t);
        cJSON_free(t);
      }
    }
    cJSON_Delete(page);
  }
  cJSON_Delete(runs);
  return rc;
}

/* A series condition, sort or summary column without "scale" reads STEP;
 * on a key this project logs only on an RL scale it would match nothing,
 * silently. One without "labels" reads a run's unlabelled series of the
 * key; in a run that holds the key only split by a label (rank, env) it
 * would read one of the splits, silently. Both are refused instead,
 * naming the key and the scale or the label values to choose from.
 * Returns 0, 1 after sending the error, or a negative code. */
static int rl_scales_given(pmcp_call *call, pmcp__tracking *tk, const char *pref,
                           const cJSON *filter, const cJSON *sort, const cJSON *cols)
{
  unscaled *u = calloc(MAX_UNSCALED, sizeof *u);
  if (!u)
    return PMCP_ENOMEM;
  size_t n = 0, i = 0;
  char where[80];
  const cJSON *c, *g;
  cJSON_ArrayForEach(c, filter)
  {
    const cJSON *group = cJSON_GetObjectItemCaseSensitive(c, "any_of");
    size_t j = 0;
    cJSON_ArrayForEach(g, group)
    {
      snprintf(where, sizeof where, "filter condition %zu, any_of item %zu", i, j++);
      note_unscaled(u, &n, g, where);
    }
    snprintf(where, sizeof where, "filter condition %zu", i++);
    note_unscaled(u, &n, c, where);
  }
  if (sort)
    note_unscaled(u, &n, sort, "sort");
  i = 0;
  cJSON_ArrayForEach(c, cols)
  {
    snprintf(where, sizeof where, "summary_columns[%zu]", i++);
    note_unscaled(u, &n, c, where);
  }
  int rc = 0;
  for (i = 0; i < n && !rc; i++) {
    pthread_mutex_lock(tk->rs->lock);
    rc = pmcp__store_key_scales(tk->rs->store, tk->rs->tenant, pref + 8, u[i].key,
                                &u[i].mask);
    if (!rc && !u[i].labelled)
      rc = pmcp__store_key_split(tk->rs->store, tk->rs->tenant, pref + 8, u[i].key,
                                 u[i].scale, u[i].split, sizeof u[i].split);
    if (rc && rc != PMCP_EUNSUPPORTED && rc != PMCP_ENOMEM) {
      int f = pmcp__rs_fail(call, PMCP_TERR_STORE, "%s", pmcp_store_errmsg(tk->rs->store));
      rc = f ? f : 1;
    }
    pthread_mutex_unlock(tk->rs->lock);
  }
  if (rc == PMCP_EUNSUPPORTED)
    rc = scales_run_by_run(call, tk, pref, u, n);
  for (i = 0; i < n && !rc; i++)
    if (!u[i].scaled && !(u[i].mask & 1) && (u[i].mask & 6)) {
      const char *sc = pmcp__trk_scale_name(u[i].mask & 2 ? "env_step" : "episode");
      int f = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                         "%s: series '%.200s' is logged on the %s scale only: RL series "
                         "always need their scale (add \"scale\": \"%s\"; ENVIRONMENT_STEP "
                         "for per-step values, EPISODE for per-episode ones)",
                         u[i].where, u[i].key, sc, sc);
      rc = f ? f : 1;
    } else if (!u[i].labelled && u[i].split[0]) {
      size_t first = strcspn(u[i].split, "}") + 1;
      int f = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                         "%s: series '%.200s' is split by labels in some runs (%s): add "
                         "\"labels\" naming the one to read, e.g. \"labels\": %.*s",
                         u[i].where, u[i].key, u[i].split, (int)first, u[i].split);
      rc = f ? f : 1;
    }
  free(u);
  return rc;
}

/* ---- list_runs: parse, fetch, render ------------------------------------ */

/* list_runs' arguments, checked. */
typedef struct lr_args {
  cJSON *fjson, *sjson, *cjson;
  pmcp__filter *f;
  pmcp__sort sort;
  int have_sort;
  summary_col *cols;
  size_t n_cols, n_attr_cols;
  int64_t limit, offset;
} lr_args;

static void lr_args_dispose(lr_args *a)
{
  for (size_t i = 0; i < a->n_cols && a->cols; i++)
    pmcp__sort_dispose(&a->cols[i].spec);
  free(a->cols);
  pmcp__sort_dispose(&a->sort);
  pmcp__filter_free(a->f);
  cJSON_Delete(a->fjson);
  cJSON_Delete(a->sjson);
  cJSON_Delete(a->cjson);
}

/* Every refusal before any store work. 0, 1 after sending the error, or
 * a negative code; @p a is disposed by the caller either way. */
static int lr_parse(pmcp_call *call, lr_args *a)
{
  char err[300];
  memset(a, 0, sizeof *a);
  const char *fj = NULL, *sj = NULL, *cj = NULL;
  pmcp_arg_json(call, "filter", &fj);
  pmcp_arg_json(call, "sort", &sj);
  pmcp_arg_json(call, "summary_columns", &cj);
  a->fjson = fj ? cJSON_Parse(fj) : NULL;
  a->sjson = sj ? cJSON_Parse(sj) : NULL;
  a->cjson = cj ? cJSON_Parse(cj) : NULL;
  a->have_sort = a->sjson != NULL;
  const char *bs = bad_scale(a->fjson) ? bad_scale(a->fjson)
                   : bad_scale(a->sjson) ? bad_scale(a->sjson)
                                         : bad_scale(a->cjson);
  int rc = 0;
  if (bs)
    rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                       "unknown scale '%.40s': use STEP, ENVIRONMENT_STEP or EPISODE", bs);
  else if (pmcp__filter_parse(a->fjson, &a->f, err, sizeof err))
    rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "%s", err);
  else if (a->have_sort && pmcp__sort_parse(a->sjson, &a->sort, err, sizeof err))
    rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "%s", err);
  else
    goto columns;
  return rc ? rc : 1;
columns:
  a->n_attr_cols = pmcp_arg_count(call, "columns");
  a->limit = 20;
  pmcp_arg_int(call, "limit", &a->limit);
  pmcp_arg_int(call, "offset", &a->offset);
  if (!a->cjson)
    return 0;
  a->n_cols = (size_t)cJSON_GetArraySize(a->cjson);
  if (a->n_cols > MAX_COLUMNS) {
    a->n_cols = 0;
    rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "summary_columns: at most %d", MAX_COLUMNS);
    return rc ? rc : 1;
  }
  a->cols = calloc(a->n_cols ? a->n_cols : 1, sizeof *a->cols);
  if (!a->cols)
    return PMCP_ENOMEM;
  for (size_t i = 0; i < a->n_cols; i++) {
    cJSON *c = cJSON_GetArrayItem(a->cjson, (int)i);
    if (cJSON_IsObject(c) && cJSON_GetObjectItemCaseSensitive(c, "direction")) {
      rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                         "summary_columns[%zu]: unknown key \"direction\"", i);
      return rc ? rc : 1;
    }
    if (!cJSON_IsObject(c) || !cJSON_GetObjectItemCaseSensitive(c, "series") ||
        pmcp__sort_parse(c, &a->cols[i].spec, err, sizeof err)) {
      rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                         "summary_columns[%zu] must be {\"series\": KEY, \"function\": "
                         "last|first|min|max|avg|count, \"scale\"?, \"labels\"?}%s%s",
                         i, cJSON_IsObject(c) ? ": " : "",
                         cJSON_IsObject(c) ? err + (strncmp(err, "sort: ", 6) ? 0 : 6) : "");
      return rc ? rc : 1;
    }
    col_name(&a->cols[i]);
    for (size_t j = 0; j < i; j++)
      if (!strcmp(a->cols[j].name, a->cols[i].name)) {
        rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                           "summary_columns[%zu] repeats summary_columns[%zu] (%s)", i, j,
                           a->cols[i].name);
        return rc ? rc : 1;
      }
  }
  return 0;
}

/* The runs of one page and what rendering them needs. */
typedef struct lr_page {
  hit *hits;
  size_t n_hits;
  size_t first;       /* the page's first hit */
  size_t total;       /* runs the filter matches */
  int estimated;      /* total is a lower bound */
  int from_table;     /* rows from the store's run table: attributes to complete */
  cJSON **page_attrs; /* the page's stored attributes (from_table), or NULL */
  size_t n_attrs;
} lr_page;

static void lr_page_dispose(lr_page *p)
{
  for (size_t i = 0; i < p->n_hits; i++)
    pmcp__trk_run_dispose(&p->hits[i].run);
  free(p->hits);
  for (size_t i = 0; p->page_attrs && i < p->n_attrs; i++)
    cJSON_Delete(p->page_attrs[i]);
  free(p->page_attrs);
}

/* The page's rows answered by the store: whole in SQL, else its run
 * table walked in chunks. 0, 1 (error sent), PMCP_EUNSUPPORTED (no run
 * table: run by run) or a negative code. */
static int fetch_table(pmcp_call *call, pmcp__tracking *tk, const lr_args *a,
                       const char *project, lr_page *p)
{
  const pmcp__sort *so = a->have_sort ? &a->sort : NULL;
  pmcp__trk_run *table = NULL;
  size_t n_table = 0;
  int rc = pmcp__trk_run_page(call, tk, project, a->fjson, so, (size_t)a->offset,
                              (size_t)a->limit, &table, &n_table, &p->total, &p->estimated);
  if (rc == PMCP_EUNSUPPORTED)
    rc = pmcp__trk_run_scan(call, tk, project, a->fjson, a->f, so, (size_t)a->offset,
                            (size_t)a->limit, &table, &n_table, &p->total);
  if (rc)
    return rc;
  p->hits = calloc(n_table ? n_table : 1, sizeof *p->hits);
  if (!p->hits) {
    for (size_t i = 0; i < n_table; i++)
      pmcp__trk_run_dispose(&table[i]);
    free(table);
    return PMCP_ENOMEM;
  }
  for (size_t i = 0; i < n_table; i++) {
    hit *h = &p->hits[p->n_hits++];
    h->run = table[i];
    h->order = i;
    pmcp__filter_row row = pmcp__trk_row(&h->run);
    if (so && pmcp__sort_key_of(so, &row, &h->key) < 0 && !rc) {
      int f = pmcp__rs_fail(call, PMCP_TERR_STORE, "cannot read the series of run '%s'",
                            h->run.id);
      rc = f ? f : 1;
    }
  }
  free(table);
  if (rc)
    return rc;
  p->from_table = 1;
  p->n_attrs = (size_t)a->limit;
  rc = page_attributes(tk, p->hits, p->n_hits, 0, (size_t)a->limit, &p->page_attrs);
  if (rc && rc != PMCP_EUNSUPPORTED && rc != PMCP_ENOMEM) {
    int f = pmcp__rs_fail(call, PMCP_TERR_STORE, "%s", "the runs' attributes cannot be read");
    return f ? f : 1;
  }
  return rc == PMCP_ENOMEM ? rc : 0;
}

/* Every run of the project through the public store API, each checked
 * and sorted here (backends without a run table). */
static int fetch_run_by_run(pmcp_call *call, pmcp__tracking *tk, const lr_args *a,
                            const char *pref, lr_page *p)
{
  char err[300];
  cJSON *runs = NULL;
  if (pmcp__trk_list_all(call, tk, "run", pref, MAX_RUNS, &runs))
    return 1;
  size_t n_runs = (size_t)cJSON_GetArraySize(runs);
  int rc = 0;
  p->hits = calloc(n_runs ? n_runs : 1, sizeof *p->hits);
  if (!p->hits)
    rc = PMCP_ENOMEM;
  const cJSON *item = runs ? runs->child : NULL;
  for (size_t idx = 0; !rc && idx < n_runs; idx++, item = item->next) {
    if (pmcp_call_cancelled(call)) {
      rc = PMCP_ECANCELLED;
      break;
    }
    hit *h = &p->hits[p->n_hits];
    if (pmcp__trk_run_load(tk, item, &h->run, err, sizeof err)) {
      pmcp__trk_run_dispose(&h->run);
      rc = pmcp__rs_fail(call, PMCP_TERR_STORE, "%s", err);
      rc = rc ? rc : 1;
      break;
    }
    pmcp__filter_row row = pmcp__trk_row(&h->run);
    int m = pmcp__filter_match(a->f, &row);
    if (m > 0 && a->have_sort)
      m = pmcp__sort_key_of(&a->sort, &row, &h->key) < 0 ? -1 : 1;
    if (m <= 0) {
      if (m < 0) {
        rc = pmcp__rs_fail(call, PMCP_TERR_STORE, "cannot read the series of run '%s'",
                           h->run.id);
        rc = rc ? rc : 1;
      }
      pmcp__trk_run_dispose(&h->run);
      continue;
    }
    h->order = idx;
    p->n_hits++;
  }
  cJSON_Delete(runs);
  if (rc)
    return rc;
  p->total = p->n_hits;
  p->first = (size_t)a->offset;
  if (a->have_sort && p->n_hits > 1) {
    hit *tmp = malloc(p->n_hits * sizeof *tmp);
    if (!tmp)
      return PMCP_ENOMEM;
    pmcp__trk_msort(p->hits, p->n_hits, sizeof *p->hits, tmp, hit_cmp_ctx, &a->sort);
    free(tmp);
  }
  return 0;
}

/* The keys a row holds so far: a key is written once (a column naming an
 * attribute another column or the sort showed is not repeated). */
typedef struct row_keys {
  const char **k;
  size_t n;
} row_keys;

static int has_key(const row_keys *rk, const char *key)
{
  for (size_t i = 0; i < rk->n; i++)
    if (!strcmp(rk->k[i], key))
      return 1;
  return 0;
}

/* Writes @p key (kept in @p rk) and attribute value @p v. */
static void put_attr(pmcp_json *j, row_keys *rk, const char *key, const cJSON *v)
{
  rk->k[rk->n++] = key;
  pmcp__trk_kvalue(j, key, v);
}

/* One row of the table: the run, its chosen (or default) columns, the
 * sort's value and the summary columns. */
static int render_row(pmcp_call *call, const lr_args *a, hit *h, pmcp_json *j)
{
  pmcp__trk_run *r = &h->run;
  const char *keys[1 + 3 + 1 + MAX_COLUMNS + 1 + 64];
  const char **kp = keys;
  size_t cap = 1 + (a->n_attr_cols > 3 ? a->n_attr_cols : 3) + 1 + a->n_cols + 1;
  if (cap > sizeof keys / sizeof keys[0] && !(kp = malloc(cap * sizeof *kp)))
    return PMCP_ENOMEM;
  row_keys rk = {kp, 0};
  pmcp_json_object_begin(j);
  rk.k[rk.n++] = "run";
  pmcp__trk_kstr(j, "run", r->id);
  if (a->n_attr_cols) {
    for (size_t c = 0; c < a->n_attr_cols; c++) {
      const char *path = NULL;
      pmcp_arg_string_at(call, "columns", c, &path);
      const cJSON *v = path ? cJSON_GetObjectItemCaseSensitive(r->attrs, path) : NULL;
      if (v && !has_key(&rk, path))
        put_attr(j, &rk, path, v);
    }
  } else {
    static const char *const dflt[] = {"sys/name", "sys/state", "sys/creation_time", NULL};
    for (size_t c = 0; dflt[c]; c++) {
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->attrs, dflt[c]);
      if (v)
        put_attr(j, &rk, dflt[c], v);
    }
  }
  const pmcp__sort *so = a->have_sort ? &a->sort : NULL;
  /* The sort's value is shown, so the order can be checked. */
  if (so && so->attr && !has_key(&rk, so->attr)) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->attrs, so->attr);
    if (v)
      put_attr(j, &rk, so->attr, v);
  }
  pmcp__filter_row fr = pmcp__trk_row(r);
  for (size_t c = 0; c < a->n_cols; c++) {
    pmcp__sort_key k;
    if (pmcp__sort_key_of(&a->cols[c].spec, &fr, &k) == 0 && k.kind == 1) {
      rk.k[rk.n++] = a->cols[c].name;
      pmcp__trk_knum(j, a->cols[c].name, k.num);
    }
  }
  if (so && so->series && h->key.kind == 1) {
    char name[300];
    snprintf(name, sizeof name, "%s(%s)", so->function, so->series);
    if (!has_key(&rk, name))
      pmcp__trk_knum(j, name, h->key.num);
  }
  if (kp != keys)
    free(kp);
  return pmcp_json_object_end(j);
}

static int lr_render(pmcp_call *call, pmcp__tracking *tk, const lr_args *a, lr_page *p,
                     const char *project)
{
  char err[300];
  pmcp__trk_page pg;
  pmcp__trk_page_begin(&pg, call, (size_t)a->offset, p->total, NULL, NULL);
  pmcp__trk_field_str(&pg, "project", project);
  if (p->estimated) {
    pmcp_json *f = pmcp__trk_field(&pg);
    if (f)
      pmcp_json_bool(f, 1);
    pmcp__trk_field_end(&pg, "total_estimated");
  }
  pmcp__trk_list(&pg, "rows");
  pmcp_json *j;
  for (size_t i = p->first;
       i < p->n_hits && i < p->first + (size_t)a->limit && (j = pmcp__trk_item(&pg)); i++) {
    pmcp__trk_run *r = &p->hits[i].run;
    if (p->from_table) {
      /* a table row holds only what the filter read: the page's runs get
       * their other attributes (read in one query), and their series are
       * read afresh for the summary columns */
      const cJSON *at, *stored = p->page_attrs ? p->page_attrs[i - p->first] : NULL;
      cJSON_ArrayForEach(at, stored)
      {
        if (!cJSON_GetObjectItemCaseSensitive(r->attrs, at->string))
          cJSON_AddItemToObject(r->attrs, at->string, cJSON_Duplicate(at, 1));
      }
      if (!p->page_attrs && pmcp__trk_run_attrs(tk, r, err, sizeof err)) {
        pmcp__trk_page_abort(&pg);
        return pmcp__rs_fail(call, PMCP_TERR_STORE, "%s", err);
      }
      cJSON_Delete(r->series);
      r->series = NULL;
    }
    int rc = render_row(call, a, &p->hits[i], j);
    if (rc) {
      pmcp__trk_page_abort(&pg);
      return rc;
    }
    pmcp__trk_item_end(&pg);
  }
  return pmcp__trk_page_send(&pg);
}

static int list_runs(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  lr_args a;
  lr_page p;
  memset(&p, 0, sizeof p);
  cJSON *proj = NULL;
  int rc = lr_parse(call, &a);
  if (rc)
    goto out;
  if (pmcp__trk_project(call, tk, &proj))
    goto out;
  char pref[300];
  snprintf(pref, sizeof pref, "%s", pmcp__js(proj, "ref"));
  if ((rc = rl_scales_given(call, tk, pref, a.fjson, a.sjson, a.cjson)) != 0)
    goto out;
  /* The whole answer from the store when it states the filter and the
   * sort exactly (only the page's runs are read); else its run table in
   * chunks checked here; else run by run. */
  rc = fetch_table(call, tk, &a, pref + 8, &p);
  if (rc == PMCP_EUNSUPPORTED) {
    lr_page_dispose(&p);
    memset(&p, 0, sizeof p);
    rc = fetch_run_by_run(call, tk, &a, pref, &p);
  }
  if (!rc)
    rc = lr_render(call, tk, &a, &p, pmcp__js(proj, "ref") + 8);
out:
  lr_page_dispose(&p);
  lr_args_dispose(&a);
  cJSON_Delete(proj);
  return rc == 1 ? 0 : rc;
}

static int by_name(const void *a, const void *b)
{
  return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

static int get_run_attributes(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  const char *run = NULL;
  pmcp_arg_string(call, "run", &run, NULL);
  char ref[320], err[300];
  if (pmcp__trk_run_ref(call, tk, run, ref, sizeof ref))
    return 0;
  cJSON *rec = NULL;
  int rc = pmcp__rs_get(tk->rs, ref, &rec, err, sizeof err);
  if (rc)
    return pmcp__rs_fail(call, rc == PMCP_ENOTFOUND ? PMCP_TERR_NOT_FOUND : PMCP_TERR_STORE,
                         rc == PMCP_ENOTFOUND ? "run '%s' not found" : "%s",
                         rc == PMCP_ENOTFOUND ? ref + 4 : err);
  if (pmcp_arg_has(call, "project") || pmcp_arg_has(call, "workspace")) {
    cJSON *proj = NULL;
    if (pmcp__trk_project(call, tk, &proj)) {
      cJSON_Delete(rec);
      return 0;
    }
    int same = strcmp(pmcp__js(proj, "ref"), pmcp__js(rec, "project")) == 0;
    if (!same) {
      rc = pmcp__rs_fail(call, PMCP_TERR_NOT_FOUND, "run '%s' not found in project '%s'", ref + 4,
                         pmcp__js(proj, "ref") + 8);
      cJSON_Delete(proj);
      cJSON_Delete(rec);
      return rc;
    }
    cJSON_Delete(proj);
  }
  pmcp__trk_run r;
  rc = pmcp__trk_run_load(tk, rec, &r, err, sizeof err);
  if (rc) {
    pmcp__trk_run_dispose(&r);
    cJSON_Delete(rec);
    return pmcp__rs_fail(call, PMCP_TERR_STORE, "%s", err);
  }
  /* Project and timings from the record, which a listing item lacks. */
  if (*pmcp__js(rec, "project") && strlen(pmcp__js(rec, "project")) > 8 &&
      !cJSON_GetObjectItemCaseSensitive(r.attrs, "sys/project"))
    cJSON_AddStringToObject(r.attrs, "sys/project", pmcp__js(rec, "project") + 8);
  double dur = pmcp__jn(rec, "duration_ms", -1);
  if (dur >= 0 && pmcp__jn(rec, "ended", 0) > 0 &&
      !cJSON_GetObjectItemCaseSensitive(r.attrs, "sys/duration_ms"))
    cJSON_AddNumberToObject(r.attrs, "sys/duration_ms", dur);
  size_t n_prefix = pmcp_arg_count(call, "paths");
  int64_t limit = 200, offset = 0;
  pmcp_arg_int(call, "limit", &limit);
  pmcp_arg_int(call, "offset", &offset);
  /* Sorted by path so offsets are stable. */
  size_t n_all = (size_t)cJSON_GetArraySize(r.attrs), total = 0;
  const cJSON **keep = calloc(n_all ? n_all : 1, sizeof *keep);
  if (!keep) {
    pmcp__trk_run_dispose(&r);
    cJSON_Delete(rec);
    return PMCP_ENOMEM;
  }
  const cJSON *it;
  cJSON_ArrayForEach(it, r.attrs)
  {
    int ok = n_prefix == 0;
    for (size_t i = 0; i < n_prefix && !ok; i++) {
      const char *p = NULL;
      pmcp_arg_string_at(call, "paths", i, &p);
      size_t n = p ? strlen(p) : 0;
      ok = n && strncmp(it->string, p, n) == 0 &&
           (it->string[n] == '\0' || it->string[n] == '/' || p[n - 1] == '/');
    }
    if (ok)
      keep[total++] = it;
  }
  qsort(keep, total, sizeof *keep, by_name);
  pmcp__trk_page pg;
  pmcp__trk_page_begin(&pg, call, (size_t)offset, total, NULL, NULL);
  pmcp__trk_field_str(&pg, "run", r.id);
  pmcp__trk_list(&pg, "attributes");
  pmcp_json *j;
  for (size_t i = (size_t)offset;
       i < total && i < (size_t)(offset + limit) && (j = pmcp__trk_item(&pg)); i++) {
    pmcp_json_object_begin(j);
    pmcp__trk_kstr(j, "path", keep[i]->string);
    pmcp__trk_kvalue(j, "value", keep[i]);
    /* a datetime's ISO text would otherwise read as a string */
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(r.types, keep[i]->string);
    if (cJSON_IsString(type) && !strcmp(type->valuestring, "datetime"))
      pmcp__trk_kstr(j, "type", "datetime");
    pmcp_json_object_end(j);
    pmcp__trk_item_end(&pg);
  }
  free(keep);
  rc = pmcp__trk_page_send(&pg);
  pmcp__trk_run_dispose(&r);
  cJSON_Delete(rec);
  return rc;
}

static const pmcp_arg_spec list_runs_args[] = {
  PMCP__TRK_ARG_WORKSPACE,
  PMCP__TRK_ARG_PROJECT,
  {"filter", PMCP_T_ARRAY, 0,
   "Conditions, all to hold; any_of: one of its own. matches: RE2. Examples: get_doc "
   "filters.",
   0, 1, 0, 64, NULL, NULL},
  {"sort", PMCP_T_OBJECT, 0,
   "By attr, or series and function (scale, labels as in filter). Default: newest "
   "first.", 0, 0, 0, 0, NULL, NULL},
  {"columns", PMCP_T_STRING_ARRAY, 0,
   "Paths to show (default sys/name, sys/state, sys/creation_time).",
   0, 1, 0, MAX_COLUMNS, NULL, NULL},
  {"summary_columns", PMCP_T_ARRAY, 0,
   "[{series, function, scale?, labels?}], shown as function(series).", 0, 1, 0, MAX_COLUMNS, NULL, NULL},
  PMCP__TRK_ARG_LIMIT("20"),
  PMCP__TRK_ARG_OFFSET,
};

static const pmcp_arg_spec get_run_attributes_args[] = {
  {"run", PMCP_T_STRING, 1, "Id, name or ref.", 1, 1, 1, 200, NULL, NULL},
  PMCP__TRK_ARG_WORKSPACE,
  PMCP__TRK_ARG_PROJECT,
  {"paths", PMCP_T_STRING_ARRAY, 0,
   "Only paths under these.", 0, 1, 0, 50, NULL,
   NULL},
  {"limit", PMCP_T_INTEGER, 0, NULL, 1, 1, 1, 1000, NULL, "200"},
  PMCP__TRK_ARG_OFFSET,
};

int pmcp__trk_add_runs(pmcp_server *server, pmcp__tracking *tk)
{
  int rc = pmcp__trk_add_tool(server, tk, "list_runs", NULL,
               "Runs as a table, filtered and sorted by attributes or metric summaries.",
               list_runs_args, sizeof list_runs_args / sizeof list_runs_args[0], list_runs);
  if (!rc)
    rc = pmcp__trk_filter_schemas(server, "list_runs");
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "get_run_attributes", NULL,
             "One run's attributes as path/value rows.",
             get_run_attributes_args,
             sizeof get_run_attributes_args / sizeof get_run_attributes_args[0],
             get_run_attributes);
  return rc;
}
