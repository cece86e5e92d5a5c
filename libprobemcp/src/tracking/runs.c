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

static int hit_cmp_ctx(const pmcp__sort *s, const hit *a, const hit *b)
{
  int c = pmcp__sort_cmp(s, &a->key, &b->key);
  if (c)
    return c;
  return a->order < b->order ? -1 : a->order > b->order;
}

/* A merge sort (stable, with a context) so no global state is needed. */
static void sort_hits(const pmcp__sort *s, hit *h, hit *tmp, size_t n)
{
  if (n < 2)
    return;
  size_t m = n / 2;
  sort_hits(s, h, tmp, m);
  sort_hits(s, h + m, tmp, n - m);
  size_t i = 0, j = m, k = 0;
  while (i < m && j < n)
    tmp[k++] = hit_cmp_ctx(s, &h[j], &h[i]) < 0 ? h[j++] : h[i++];
  while (i < m)
    tmp[k++] = h[i++];
  while (j < n)
    tmp[k++] = h[j++];
  memcpy(h, tmp, n * sizeof *h);
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

static int list_runs(pmcp_call *call, void *ud)
{
  pmcp__tracking *tk = ud;
  char err[300];
  /* Arguments first: every refusal before any store work. */
  const char *fj = NULL, *sj = NULL, *cj = NULL;
  pmcp_arg_json(call, "filter", &fj);
  pmcp_arg_json(call, "sort", &sj);
  pmcp_arg_json(call, "summary_columns", &cj);
  cJSON *fjson = fj ? cJSON_Parse(fj) : NULL;
  cJSON *sjson = sj ? cJSON_Parse(sj) : NULL;
  cJSON *cjson = cj ? cJSON_Parse(cj) : NULL;
  pmcp__filter *f = NULL;
  pmcp__sort sort;
  int have_sort = sjson != NULL;
  memset(&sort, 0, sizeof sort);
  summary_col *cols = NULL;
  size_t n_cols = 0;
  hit *hits = NULL;
  size_t n_hits = 0;
  pmcp__trk_run *table = NULL;
  size_t n_table = 0;
  cJSON **page_attrs = NULL;
  cJSON *proj = NULL, *runs = NULL;
  int rc = 0;
  const char *bs = bad_scale(fjson) ? bad_scale(fjson) : bad_scale(sjson) ? bad_scale(sjson)
                                                                         : bad_scale(cjson);
  if (bs) {
    rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                       "unknown scale '%.40s': use STEP, ENVIRONMENT_STEP or EPISODE", bs);
    goto out;
  }
  if (pmcp__filter_parse(fjson, &f, err, sizeof err)) {
    rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "%s", err);
    goto out;
  }
  if (have_sort && pmcp__sort_parse(sjson, &sort, err, sizeof err)) {
    rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "%s", err);
    goto out;
  }
  if (cjson) {
    n_cols = (size_t)cJSON_GetArraySize(cjson);
    if (n_cols > MAX_COLUMNS) {
      rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                         "summary_columns: at most %d", MAX_COLUMNS);
      goto out;
    }
    cols = calloc(n_cols ? n_cols : 1, sizeof *cols);
    if (!cols) {
      rc = PMCP_ENOMEM;
      goto out;
    }
    for (size_t i = 0; i < n_cols; i++) {
      cJSON *c = cJSON_GetArrayItem(cjson, (int)i);
      if (cJSON_IsObject(c) && cJSON_GetObjectItemCaseSensitive(c, "direction")) {
        rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                           "summary_columns[%zu]: unknown key \"direction\"", i);
        goto out;
      }
      if (!cJSON_IsObject(c) || !cJSON_GetObjectItemCaseSensitive(c, "series") ||
          pmcp__sort_parse(c, &cols[i].spec, err, sizeof err)) {
        rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                           "summary_columns[%zu] must be {\"series\": KEY, \"function\": "
                           "last|first|min|max|avg|count, \"scale\"?, \"labels\"?}%s%s",
                           i, cJSON_IsObject(c) ? ": " : "",
                           cJSON_IsObject(c) ? err + (strncmp(err, "sort: ", 6) ? 0 : 6) : "");
        goto out;
      }
      col_name(&cols[i]);
      for (size_t j = 0; j < i; j++)
        if (!strcmp(cols[j].name, cols[i].name)) {
          rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                             "summary_columns[%zu] repeats summary_columns[%zu] (%s)", i, j,
                             cols[i].name);
          goto out;
        }
    }
  }
  size_t n_attr_cols = pmcp_arg_count(call, "columns");
  int64_t limit = 20, offset = 0;
  pmcp_arg_int(call, "limit", &limit);
  pmcp_arg_int(call, "offset", &offset);
  if (pmcp__trk_project(call, tk, &proj))
    goto out;
  char pref[300];
  snprintf(pref, sizeof pref, "%s", pmcp__js(proj, "ref"));
  if ((rc = rl_scales_given(call, tk, pref, fjson, sjson, cjson)) != 0) {
    rc = rc == 1 ? 0 : rc;
    goto out;
  }
  /* The whole answer from the store when it states the filter and the
   * sort exactly (only the page's runs are read); else the candidates of
   * its run table (the filter narrowed in SQL, values read in set
   * queries) checked here; else run by run. */
  size_t total = 0;
  int exact = pmcp__trk_run_page(call, tk, pref + 8, fjson, have_sort ? &sort : NULL,
                                 (size_t)offset, (size_t)limit, &table, &n_table, &total);
  if (exact == 1)
    goto out;
  if (exact && exact != PMCP_EUNSUPPORTED) {
    rc = exact;
    goto out;
  }
  exact = exact == 0;
  int fast = exact ? 0 : pmcp__trk_run_table(call, tk, pref + 8, fjson,
                                             have_sort ? &sort : NULL, &table, &n_table);
  if (fast == 1)
    goto out;
  if (fast && fast != PMCP_EUNSUPPORTED) {
    rc = fast;
    goto out;
  }
  if (fast && pmcp__trk_list_all(call, tk, "run", pref, MAX_RUNS, &runs))
    goto out;
  size_t n_runs = fast ? (size_t)cJSON_GetArraySize(runs) : n_table;
  hits = calloc(n_runs ? n_runs : 1, sizeof *hits);
  if (!hits) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  const cJSON *item = runs ? runs->child : NULL;
  for (size_t idx = 0; idx < n_runs; idx++) {
    if (pmcp_call_cancelled(call)) {
      rc = PMCP_ECANCELLED;
      goto out;
    }
    hit *h = &hits[n_hits];
    if (!fast) {
      h->run = table[idx];
      memset(&table[idx], 0, sizeof table[idx]);
    } else {
      int lr = pmcp__trk_run_load(tk, item, &h->run, err, sizeof err);
      item = item->next;
      if (lr) {
        pmcp__trk_run_dispose(&h->run);
        rc = pmcp__rs_fail(call, PMCP_TERR_STORE, "%s", err);
        goto out;
      }
    }
    pmcp__filter_row row = pmcp__trk_row(&h->run);
    int m = exact ? 1 : pmcp__filter_match(f, &row);
    if (m > 0 && have_sort)
      m = pmcp__sort_key_of(&sort, &row, &h->key) < 0 ? -1 : 1;
    if (m < 0) {
      pmcp__trk_run_dispose(&h->run);
      rc = pmcp__rs_fail(call, PMCP_TERR_STORE, "cannot read the series of run '%s'", h->run.id);
      goto out;
    }
    if (m == 0) {
      pmcp__trk_run_dispose(&h->run);
      continue;
    }
    h->order = idx;
    n_hits++;
  }
  /* the exact path's rows are the page, in order */
  size_t first = exact ? 0 : (size_t)offset;
  if (!exact)
    total = n_hits;
  if (have_sort && !exact) {
    hit *tmp = malloc((n_hits ? n_hits : 1) * sizeof *tmp);
    if (!tmp) {
      rc = PMCP_ENOMEM;
      goto out;
    }
    sort_hits(&sort, hits, tmp, n_hits);
    free(tmp);
  }
  if (!fast) {
    rc = page_attributes(tk, hits, n_hits, first, (size_t)limit, &page_attrs);
    if (rc && rc != PMCP_EUNSUPPORTED) {
      rc = rc == PMCP_ENOMEM ? rc : pmcp__rs_fail(call, PMCP_TERR_STORE, "%s",
                                                  "the runs' attributes cannot be read");
      goto out;
    }
    rc = 0;
  }
  cJSON *rows = cJSON_CreateArray();
  for (size_t i = first; i < n_hits && i < first + (size_t)limit; i++) {
    pmcp__trk_run *r = &hits[i].run;
    if (!fast) {
      /* a table row holds only what the filter read: the page's runs get
       * their other attributes (read above in one query), and their series
       * are read afresh for the summary columns */
      const cJSON *a, *stored = page_attrs ? page_attrs[i - first] : NULL;
      cJSON_ArrayForEach(a, stored)
      {
        if (!cJSON_GetObjectItemCaseSensitive(r->attrs, a->string))
          cJSON_AddItemToObject(r->attrs, a->string, cJSON_Duplicate(a, 1));
      }
      if (!page_attrs && (rc = pmcp__trk_run_attrs(tk, r, err, sizeof err)) != 0) {
        cJSON_Delete(rows);
        rc = pmcp__rs_fail(call, PMCP_TERR_STORE, "%s", err);
        goto out;
      }
      cJSON_Delete(r->series);
      r->series = NULL;
    }
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "run", r->id);
    if (n_attr_cols) {
      for (size_t c = 0; c < n_attr_cols; c++) {
        const char *path = NULL;
        pmcp_arg_string_at(call, "columns", c, &path);
        const cJSON *v = path ? cJSON_GetObjectItemCaseSensitive(r->attrs, path) : NULL;
        if (v && !cJSON_GetObjectItemCaseSensitive(row, path))
          cJSON_AddItemToObject(row, path, cJSON_Duplicate(v, 1));
      }
    } else {
      static const char *const dflt[] = {"sys/name", "sys/state", "sys/creation_time", NULL};
      for (size_t c = 0; dflt[c]; c++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->attrs, dflt[c]);
        if (v)
          cJSON_AddItemToObject(row, dflt[c], cJSON_Duplicate(v, 1));
      }
    }
    /* The sort's value is shown, so the order can be checked. */
    if (have_sort && sort.attr && !cJSON_GetObjectItemCaseSensitive(row, sort.attr)) {
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->attrs, sort.attr);
      if (v)
        cJSON_AddItemToObject(row, sort.attr, cJSON_Duplicate(v, 1));
    }
    pmcp__filter_row fr = pmcp__trk_row(r);
    for (size_t c = 0; c < n_cols; c++) {
      pmcp__sort_key k;
      if (pmcp__sort_key_of(&cols[c].spec, &fr, &k) == 0 && k.kind == 1)
        cJSON_AddNumberToObject(row, cols[c].name, k.num);
    }
    if (have_sort && sort.series && hits[i].key.kind == 1) {
      char name[300];
      snprintf(name, sizeof name, "%s(%s)", sort.function, sort.series);
      if (!cJSON_GetObjectItemCaseSensitive(row, name))
        cJSON_AddNumberToObject(row, name, hits[i].key.num);
    }
    cJSON_AddItemToArray(rows, row);
  }
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "project", pmcp__js(proj, "ref") + 8);
  rc = pmcp__trk_emit(call, root, "rows", rows, (size_t)offset, total);
out:
  for (size_t i = 0; i < n_hits; i++)
    pmcp__trk_run_dispose(&hits[i].run);
  free(hits);
  for (size_t i = 0; i < n_table; i++)
    pmcp__trk_run_dispose(&table[i]);
  free(table);
  for (size_t i = 0; page_attrs && i < (size_t)limit; i++)
    cJSON_Delete(page_attrs[i]);
  free(page_attrs);
  for (size_t i = 0; i < n_cols && cols; i++)
    pmcp__sort_dispose(&cols[i].spec);
  free(cols);
  pmcp__sort_dispose(&sort);
  pmcp__filter_free(f);
  cJSON_Delete(fjson);
  cJSON_Delete(sjson);
  cJSON_Delete(cjson);
  cJSON_Delete(proj);
  cJSON_Delete(runs);
  return rc;
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
  cJSON *page = cJSON_CreateArray();
  for (size_t i = (size_t)offset; i < total && i < (size_t)(offset + limit); i++) {
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "path", keep[i]->string);
    cJSON_AddItemToObject(row, "value", cJSON_Duplicate(keep[i], 1));
    /* a datetime's ISO text would otherwise read as a string */
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(r.types, keep[i]->string);
    if (cJSON_IsString(type) && !strcmp(type->valuestring, "datetime"))
      cJSON_AddStringToObject(row, "type", "datetime");
    cJSON_AddItemToArray(page, row);
  }
  free(keep);
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "run", r.id);
  pmcp__trk_run_dispose(&r);
  cJSON_Delete(rec);
  return pmcp__trk_emit(call, root, "attributes", page, (size_t)offset, total);
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
