/* SPDX-License-Identifier: MIT */
/* The RL tools of the tracking toolset (the environment model is in
 * rl_env.c, the series tools in rl_series.c): get_rl_info,
 * list_rl_environments, list_rl_metrics, list_rl_attribute_definitions
 * and get_rl_environment_attributes, and the registration of every RL
 * tool. */
#include "tracking/rl.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/page.h"
#include "util/buf.h"

#define MAX_COLUMNS 30

/* ---- get_rl_info ------------------------------------------------------------ */

static int get_rl_info(pmcp_call *call, void *ud)
{
  pmcp__rl_run r;
  int rc = pmcp__rl_load(call, ud, INT64_MAX, &r);
  if (rc) {
    pmcp__rl_dispose(&r);
    return rc < 0 ? rc : 0;
  }
  pmcp_json *j = NULL;
  rc = pmcp_json_new(&j, 0);
  if (!rc) {
    pmcp_json_object_begin(j);
    pmcp__trk_kstr(j, "run", r.id);
    pmcp__trk_knum(j, "count", 1); /* one run's overview, as every answer counts */
    pmcp__trk_knum(j, "environment_count", (double)r.n_envs);
    if (r.latest_episode >= 0)
      pmcp__trk_knum(j, "latest_episode", (double)r.latest_episode);
    if (r.latest_step >= 0)
      pmcp__trk_knum(j, "latest_rl_step", (double)r.latest_step);
    pmcp__trk_knum(j, "rl_series_count", (double)r.n_rl_series);
    pmcp__trk_kstr(j, "environment_label", PMCP__RL_LABEL);
    if (!r.n_rl_series && !r.n_envs)
      pmcp__trk_kstr(j, "note",
                     "this run logs no RL series (scale ENVIRONMENT_STEP "
                     "or EPISODE) and no environment attributes");
    pmcp_json_object_end(j);
    rc = pmcp__trk_send_object(call, ud, j);
  }
  pmcp_json_free(j);
  pmcp__rl_dispose(&r);
  return rc;
}

/* ---- list_rl_environments ----------------------------------------------------- */

typedef struct hit {
  pmcp__rl_env *env;
  pmcp__sort_key key;
} hit;

static int hit_cmp(const pmcp__sort *s, const hit *a, const hit *b)
{
  int c = s ? pmcp__sort_cmp(s, &a->key, &b->key) : 0;
  return c ? c : pmcp__rl_id_cmp(a->env->id, b->env->id);
}

/* Stable merge sort with a context (no global state). */
static void sort_hits(const pmcp__sort *s, hit *h, hit *tmp, size_t n)
{
  if (n < 2)
    return;
  size_t m = n / 2, i = 0, j = m, k = 0;
  sort_hits(s, h, tmp, m);
  sort_hits(s, h + m, tmp, n - m);
  while (i < m && j < n)
    tmp[k++] = hit_cmp(s, &h[j], &h[i]) < 0 ? h[j++] : h[i++];
  while (i < m)
    tmp[k++] = h[i++];
  while (j < n)
    tmp[k++] = h[j++];
  memcpy(h, tmp, n * sizeof *h);
}

/* What a row of list_rl_environments shows besides its environment: the
 * asked paths (default: the last episode and step), the sort's value so
 * the order can be checked, and the summary columns; a key shown once. */
typedef struct env_rows {
  pmcp_call *call;
  const char *run;
  const hit *hits;
  const pmcp__sort *sort, *cols;
  size_t n_cols, n_attr;
  char names[MAX_COLUMNS + 1][300]; /* the summary columns', then the sort's */
} env_rows;

/* The most members a row writes: the environment, the columns, the sort's
 * attribute, the summary columns and the sort's series. */
#define ROW_KEYS (2 * MAX_COLUMNS + 3)

/* True, noting @p key, when the row has no member @p key yet. */
static int fresh(const char **keys, size_t *n, const char *key)
{
  for (size_t i = 0; i < *n; i++)
    if (!strcmp(keys[i], key))
      return 0;
  /* the argument schema caps columns and summary_columns at MAX_COLUMNS */
  assert(*n < ROW_KEYS);
  if (*n >= ROW_KEYS)
    return 0;
  keys[(*n)++] = key;
  return 1;
}

static int env_row(pmcp_json *j, size_t i, void *ud)
{
  const env_rows *w = ud;
  pmcp__rl_env *e = w->hits[i].env;
  const char *keys[ROW_KEYS];
  size_t nk = 0;
  static const char *const dflt[] = {"sys/last_episode", "sys/last_step"};
  pmcp_json_object_begin(j);
  pmcp__trk_kstr(j, "environment", e->id);
  fresh(keys, &nk, "environment");
  for (size_t c = 0; c < (w->n_attr ? w->n_attr : 2); c++) {
    const char *path = dflt[c < 2 ? c : 0];
    if (w->n_attr)
      pmcp_arg_string_at(w->call, "columns", c, &path);
    const cJSON *v = path ? cJSON_GetObjectItemCaseSensitive(e->attrs, path) : NULL;
    if (v && fresh(keys, &nk, path))
      pmcp__trk_kvalue(j, path, v);
  }
  if (w->sort->attr) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e->attrs, w->sort->attr);
    if (v && fresh(keys, &nk, w->sort->attr))
      pmcp__trk_kvalue(j, w->sort->attr, v);
  }
  pmcp__filter_row fr = pmcp__rl_row(e);
  for (size_t c = 0; c < w->n_cols; c++) {
    pmcp__sort_key k;
    if (pmcp__sort_key_of(&w->cols[c], &fr, &k) == 0 && k.kind == 1 &&
        fresh(keys, &nk, w->names[c]))
      pmcp__trk_knum(j, w->names[c], k.num);
  }
  if (w->sort->series && w->hits[i].key.kind == 1 && fresh(keys, &nk, w->names[MAX_COLUMNS]))
    pmcp__trk_knum(j, w->names[MAX_COLUMNS], w->hits[i].key.num);
  return pmcp_json_object_end(j);
}

static int env_fields(pmcp__trk_page *p, void *ud)
{
  return pmcp__trk_field_str(p, "run", ((env_rows *)ud)->run);
}

/* Sends the rows of the @p n chosen environments @p hits (in order). */
static int send_env_rows(pmcp_call *call, const pmcp__rl_run *r, const hit *hits, size_t n,
                         const pmcp__sort *sort, const pmcp__sort *cols, size_t n_cols)
{
  env_rows *w = calloc(1, sizeof *w);
  if (!w)
    return PMCP_ENOMEM;
  w->call = call;
  w->run = r->id;
  w->hits = hits;
  w->sort = sort;
  w->cols = cols;
  w->n_cols = n_cols;
  w->n_attr = pmcp_arg_count(call, "columns");
  for (size_t c = 0; c < n_cols; c++)
    snprintf(w->names[c], sizeof w->names[c], "%s(%s)", cols[c].function, cols[c].series);
  if (sort->series)
    snprintf(w->names[MAX_COLUMNS], sizeof w->names[0], "%s(%s)", sort->function, sort->series);
  int rc = pmcp__trk_send_rows(call, n, "rows", env_fields, env_row, w);
  free(w);
  return rc;
}

static int list_rl_environments(pmcp_call *call, void *ud)
{
  char err[300];
  const char *sj = NULL, *cj = NULL;
  pmcp_arg_json(call, "sort", &sj);
  pmcp_arg_json(call, "summary_columns", &cj);
  cJSON *sjson = sj ? cJSON_Parse(sj) : NULL, *cjson = cj ? cJSON_Parse(cj) : NULL;
  pmcp__sort sort, cols[MAX_COLUMNS];
  memset(&sort, 0, sizeof sort);
  memset(cols, 0, sizeof cols);
  size_t n_cols = cjson ? (size_t)cJSON_GetArraySize(cjson) : 0;
  hit *hits = NULL, *tmp = NULL;
  unsigned char *keep = NULL;
  pmcp__rl_run r;
  memset(&r, 0, sizeof r);
  int rc = 0;
  if (pmcp__rl_check_scales(call, "sort", sjson) ||
      pmcp__rl_check_scales(call, "summary_columns", cjson))
    goto out;
  if (sjson && pmcp__sort_parse(sjson, &sort, err, sizeof err)) {
    rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "%s", err);
    goto out;
  }
  for (size_t i = 0; i < n_cols; i++) {
    const cJSON *c = cJSON_GetArrayItem(cjson, (int)i);
    if (!cJSON_IsObject(c) || !cJSON_GetObjectItemCaseSensitive(c, "series") ||
        cJSON_GetObjectItemCaseSensitive(c, "direction") ||
        pmcp__sort_parse(c, &cols[i], err, sizeof err)) {
      rc = pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                         "summary_columns[%zu] must be {\"series\": KEY, \"function\": "
                         "last|first|min|max|avg|count, \"scale\": EPISODE|ENVIRONMENT_STEP, "
                         "\"labels\"?}", i);
      goto out;
    }
  }
  rc = pmcp__rl_load(call, ud, INT64_MAX, &r);
  if (rc) {
    rc = rc < 0 ? rc : 0;
    goto out;
  }
  keep = calloc(r.n_envs ? r.n_envs : 1, 1);
  hits = calloc(r.n_envs ? r.n_envs : 1, sizeof *hits);
  tmp = calloc(r.n_envs ? r.n_envs : 1, sizeof *tmp);
  if (!keep || !hits || !tmp) {
    rc = PMCP_ENOMEM;
    goto out;
  }
  rc = pmcp__rl_select(call, &r, keep);
  if (rc) {
    rc = rc < 0 ? rc : 0;
    goto out;
  }
  size_t n = 0;
  for (size_t i = 0; i < r.n_envs; i++) {
    if (!keep[i])
      continue;
    hits[n].env = &r.envs[i];
    if (sjson) {
      pmcp__filter_row row = pmcp__rl_row(&r.envs[i]);
      pmcp__sort_key_of(&sort, &row, &hits[n].key);
    }
    n++;
  }
  sort_hits(sjson ? &sort : NULL, hits, tmp, n);
  rc = send_env_rows(call, &r, hits, n, &sort, cols, n_cols);
out:
  free(keep);
  free(hits);
  free(tmp);
  pmcp__rl_dispose(&r);
  pmcp__sort_dispose(&sort);
  for (size_t i = 0; i < n_cols && i < MAX_COLUMNS; i++)
    pmcp__sort_dispose(&cols[i]);
  cJSON_Delete(sjson);
  cJSON_Delete(cjson);
  return rc;
}

/* ---- list_rl_metrics / list_rl_attribute_definitions --------------------------- */

/* The items of a listing are kept in pmcp_buf arrays (pmcp__buf_append of
 * one element at a time): n elements of the type at ptr. */
#define AT(buf, type)    ((type *)(buf).ptr)
#define COUNT(buf, type) ((buf).len / sizeof(type))

/* One RL metric, a (key, scale, kind), over the runs read. */
typedef struct rl_met {
  char *id; /* key \x1f scale \x1f kind: the list's order */
  char *name, *kind;
  const char *scale;
  pmcp_buf keys;                 /* char *: label keys besides env, in the order first seen */
  pmcp_buf envs;                 /* char *: the environments counted in the run being read */
  size_t runs, envs_n, run_seen; /* run_seen: the last run counted, from 1 */
  double points;
} rl_met;

/* One environment attribute path over the runs read. */
typedef struct rl_def {
  char *path, *type;
  size_t runs, envs, versions, run_seen;
} rl_def;

/* A listing being read: its items (rl_met or rl_def) and the runs read. */
typedef struct rl_acc {
  pmcp_buf items;
  size_t run; /* the run being read, from 1 */
} rl_acc;

static int push_str(pmcp_buf *b, const char *s)
{
  char *d = strdup(s);
  if (!d || pmcp__buf_append(b, &d, sizeof d)) {
    free(d);
    return PMCP_ENOMEM;
  }
  return 0;
}

static int has_str(const pmcp_buf *b, const char *s)
{
  for (size_t i = 0; i < COUNT(*b, char *); i++)
    if (!strcmp(AT(*b, char *)[i], s))
      return 1;
  return 0;
}

static void free_strs(pmcp_buf *b)
{
  for (size_t i = 0; i < COUNT(*b, char *); i++)
    free(AT(*b, char *)[i]);
  pmcp_buf_dispose(b);
}

static rl_met *met_of(rl_acc *a, const char *id, const pmcp__mx_series *s, const char *scale)
{
  for (size_t i = 0; i < COUNT(a->items, rl_met); i++)
    if (!strcmp(AT(a->items, rl_met)[i].id, id))
      return &AT(a->items, rl_met)[i];
  rl_met m = {0};
  m.scale = scale;
  m.id = strdup(id);
  m.name = strdup(s->key);
  m.kind = strdup(s->kind);
  if (!m.id || !m.name || !m.kind || pmcp__buf_append(&a->items, &m, sizeof m)) {
    free(m.id);
    free(m.name);
    free(m.kind);
    return NULL;
  }
  return &AT(a->items, rl_met)[COUNT(a->items, rl_met) - 1];
}

/* Adds @p r's RL metrics to @p a. */
static int add_metrics(const pmcp__rl_run *r, rl_acc *a)
{
  for (size_t i = 0; i < r->cat.n; i++) {
    const pmcp__mx_series *s = &r->cat.s[i];
    if (!pmcp__rl_is_rl_scale(s->scale))
      continue;
    const char *scale = pmcp__trk_scale_name(s->scale);
    char id[600];
    snprintf(id, sizeof id, "%s\x1f%s\x1f%s", s->key, scale, s->kind);
    rl_met *m = met_of(a, id, s, scale);
    if (!m)
      return PMCP_ENOMEM;
    if (m->run_seen != a->run) {
      m->run_seen = a->run;
      m->runs++;
      free_strs(&m->envs);
    }
    const cJSON *l;
    cJSON_ArrayForEach(l, s->labels)
    {
      if (strcmp(l->string, PMCP__RL_LABEL) && !has_str(&m->keys, l->string) &&
          push_str(&m->keys, l->string))
        return PMCP_ENOMEM;
    }
    /* distinct environments: one env may log a metric under other labels */
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(s->labels, PMCP__RL_LABEL);
    if (cJSON_IsString(env) && !has_str(&m->envs, env->valuestring)) {
      if (push_str(&m->envs, env->valuestring))
        return PMCP_ENOMEM;
      m->envs_n++;
    }
    m->points += (double)s->count;
  }
  return 0;
}

static int met_row(pmcp_json *j, size_t i, void *ud)
{
  const rl_met *m = &AT(((rl_acc *)ud)->items, rl_met)[i];
  pmcp_json_object_begin(j);
  pmcp__trk_kstr(j, "name", m->name);
  pmcp__trk_kstr(j, "scale", m->scale);
  pmcp__trk_kstr(j, "kind", m->kind);
  pmcp_json_key(j, "label_keys");
  pmcp_json_array_begin(j);
  for (size_t k = 0; k < COUNT(m->keys, char *); k++)
    pmcp_json_string(j, AT(m->keys, char *)[k]);
  pmcp_json_array_end(j);
  pmcp__trk_knum(j, "run_count", (double)m->runs);
  pmcp__trk_knum(j, "environment_count", (double)m->envs_n);
  pmcp__trk_knum(j, "point_count", m->points);
  return pmcp_json_object_end(j);
}

static int met_cmp(const void *x, const void *y)
{
  return strcmp(((const rl_met *)x)->id, ((const rl_met *)y)->id);
}

static void met_free(rl_acc *a)
{
  for (size_t i = 0; i < COUNT(a->items, rl_met); i++) {
    rl_met *m = &AT(a->items, rl_met)[i];
    free(m->id);
    free(m->name);
    free(m->kind);
    free_strs(&m->keys);
    free_strs(&m->envs);
  }
  pmcp_buf_dispose(&a->items);
}

static rl_def *def_of(rl_acc *a, const char *path)
{
  for (size_t i = 0; i < COUNT(a->items, rl_def); i++)
    if (!strcmp(AT(a->items, rl_def)[i].path, path))
      return &AT(a->items, rl_def)[i];
  return NULL;
}

/* Adds @p r's environment attribute paths to @p a. */
static int add_defs(const pmcp__rl_run *r, rl_acc *a)
{
  for (size_t i = 0; i < r->n_envs; i++) {
    const pmcp__rl_env *e = &r->envs[i];
    const cJSON *at;
    cJSON_ArrayForEach(at, e->attrs)
    {
      rl_def *d = def_of(a, at->string);
      if (!d) {
        rl_def n = {0};
        n.path = strdup(at->string);
        n.type = strdup(pmcp__js(e->types, at->string));
        if (!n.path || !n.type || pmcp__buf_append(&a->items, &n, sizeof n)) {
          free(n.path);
          free(n.type);
          return PMCP_ENOMEM;
        }
        d = &AT(a->items, rl_def)[COUNT(a->items, rl_def) - 1];
      }
      if (d->run_seen != a->run) {
        d->run_seen = a->run;
        d->runs++;
      }
      d->envs++;
    }
    const cJSON *v;
    cJSON_ArrayForEach(v, e->versions)
    {
      rl_def *d = def_of(a, pmcp__js(v, "path"));
      if (d)
        d->versions++;
    }
  }
  return 0;
}

static int def_row(pmcp_json *j, size_t i, void *ud)
{
  const rl_def *d = &AT(((rl_acc *)ud)->items, rl_def)[i];
  pmcp_json_object_begin(j);
  pmcp__trk_kstr(j, "path", d->path);
  pmcp__trk_kstr(j, "type", d->type);
  pmcp__trk_knum(j, "run_count", (double)d->runs);
  pmcp__trk_knum(j, "environment_count", (double)d->envs);
  pmcp__trk_knum(j, "version_count", (double)d->versions);
  return pmcp_json_object_end(j);
}

static int def_cmp(const void *x, const void *y)
{
  return strcmp(((const rl_def *)x)->path, ((const rl_def *)y)->path);
}

static void def_free(rl_acc *a)
{
  for (size_t i = 0; i < COUNT(a->items, rl_def); i++) {
    free(AT(a->items, rl_def)[i].path);
    free(AT(a->items, rl_def)[i].type);
  }
  pmcp_buf_dispose(&a->items);
}

/* Most runs a project-wide RL listing reads. */
#define MAX_PROJECT_RUNS 10000

/* What a listing reads and shows before its items: the run, or the
 * project and how many of its runs were read. */
typedef struct rl_head {
  char run[160];
  char *project;
  size_t runs_read;
  rl_acc acc;
  int (*row)(pmcp_json *j, size_t i, void *ud);
} rl_head;

static int head_fields(pmcp__trk_page *p, void *ud)
{
  const rl_head *h = ud;
  if (!h->project)
    return pmcp__trk_field_str(p, "run", h->run);
  pmcp__trk_field_str(p, "project", h->project);
  return pmcp__trk_field_num(p, "runs_read", (double)h->runs_read);
}

static int head_row(pmcp_json *j, size_t i, void *ud)
{
  rl_head *h = ud;
  return h->row(j, i, &h->acc);
}

/* Feeds the call's `run`, or without one every run of its project, to
 * @p add. Returns 0, or 1 after sending an error, or a negative code. */
static int rl_read(pmcp_call *call, pmcp__tracking *tk, rl_head *h,
                   int (*add)(const pmcp__rl_run *r, rl_acc *a))
{
  pmcp__rl_run r;
  int rc = 0;
  if (pmcp_arg_has(call, "run")) {
    rc = pmcp__rl_load(call, tk, INT64_MAX, &r);
    if (!rc) {
      snprintf(h->run, sizeof h->run, "%s", r.id);
      h->acc.run = 1;
      rc = add(&r, &h->acc);
    }
    pmcp__rl_dispose(&r);
    return rc;
  }
  cJSON *proj = NULL, *runs = NULL;
  rc = pmcp__trk_project(call, tk, &proj);
  if (!rc)
    rc = pmcp__trk_list_all(call, tk, "run", pmcp__js(proj, "ref"), MAX_PROJECT_RUNS, &runs);
  if (!rc && !(h->project = strdup(pmcp__js(proj, "ref") + 8)))
    rc = PMCP_ENOMEM;
  const cJSON *it, *list = rc ? NULL : runs;
  cJSON_ArrayForEach(it, list)
  {
    if (pmcp_call_cancelled(call)) {
      rc = PMCP_ECANCELLED;
      break;
    }
    rc = pmcp__rl_load_run(call, tk, pmcp__js(it, "ref"), 0, INT64_MAX, &r);
    h->acc.run = h->runs_read + 1;
    if (!rc)
      rc = add(&r, &h->acc);
    pmcp__rl_dispose(&r);
    if (rc)
      break;
    h->runs_read++;
  }
  cJSON_Delete(proj);
  cJSON_Delete(runs);
  return rc;
}

/* Reads the listing (rl_read), then sends its items, sorted by
 * @p cmp, under @p name. */
static int rl_listing(pmcp_call *call, pmcp__tracking *tk, const char *name,
                      int (*add)(const pmcp__rl_run *r, rl_acc *a),
                      int (*cmp)(const void *x, const void *y), size_t size,
                      int (*row)(pmcp_json *j, size_t i, void *ud), void (*done)(rl_acc *a))
{
  rl_head h;
  memset(&h, 0, sizeof h);
  h.row = row;
  int rc = rl_read(call, tk, &h, add);
  if (rc) {
    rc = rc < 0 ? rc : 0;
  } else {
    size_t n = h.acc.items.len / size;
    if (n)
      qsort(h.acc.items.ptr, n, size, cmp);
    rc = pmcp__trk_send_rows(call, n, name, head_fields, head_row, &h);
  }
  done(&h.acc);
  free(h.project);
  return rc;
}

static int list_rl_metrics(pmcp_call *call, void *ud)
{
  return rl_listing(call, ud, "metrics", add_metrics, met_cmp, sizeof(rl_met), met_row, met_free);
}

static int list_rl_attribute_definitions(pmcp_call *call, void *ud)
{
  return rl_listing(call, ud, "attributes", add_defs, def_cmp, sizeof(rl_def), def_row, def_free);
}

/* ---- get_rl_environment_attributes ------------------------------------------- */

static int path_wanted(pmcp_call *call, const char *path)
{
  size_t n = pmcp_arg_count(call, "paths");
  for (size_t i = 0; i < n; i++) {
    const char *p = NULL;
    pmcp_arg_string_at(call, "paths", i, &p);
    size_t k = p ? strlen(p) : 0;
    if (k && !strncmp(path, p, k) && (path[k] == '\0' || path[k] == '/' || p[k - 1] == '/'))
      return 1;
  }
  return n == 0;
}

/* An environment's attributes or versions as a page: the chosen items of
 * @p e (versions: as of @p as_of, in their order; attributes: by path). */
typedef struct attr_rows {
  const pmcp__rl_run *r;
  const pmcp__rl_env *e;
  int64_t as_of;
  const cJSON **items;
} attr_rows;

static int attr_fields(pmcp__trk_page *p, void *ud)
{
  const attr_rows *w = ud;
  pmcp__trk_field_str(p, "run", w->r->id);
  pmcp__trk_field_str(p, "environment", w->e->id);
  if (w->as_of != INT64_MAX)
    pmcp__trk_field_num(p, "as_of_episode", (double)w->as_of);
  return p->rc;
}

static int version_row(pmcp_json *j, size_t i, void *ud)
{
  const cJSON *v = ((attr_rows *)ud)->items[i];
  const cJSON *val = cJSON_GetObjectItemCaseSensitive(v, "value");
  pmcp_json_object_begin(j);
  pmcp__trk_kstr(j, "path", pmcp__js(v, "path"));
  pmcp__trk_knum(j, "episode", pmcp__jn(v, "episode", 0));
  if (val)
    pmcp__trk_kvalue(j, "value", val);
  return pmcp_json_object_end(j);
}

static int attr_row(pmcp_json *j, size_t i, void *ud)
{
  const attr_rows *w = ud;
  const cJSON *a = w->items[i];
  const cJSON *since = cJSON_GetObjectItemCaseSensitive(w->e->since, a->string);
  pmcp_json_object_begin(j);
  pmcp__trk_kstr(j, "path", a->string);
  pmcp__trk_kvalue(j, "value", a);
  if (since)
    pmcp__trk_knum(j, "since_episode", since->valuedouble);
  return pmcp_json_object_end(j);
}

static int by_name(const void *x, const void *y)
{
  return strcmp((*(const cJSON *const *)x)->string, (*(const cJSON *const *)y)->string);
}

static int get_rl_environment_attributes(pmcp_call *call, void *ud)
{
  int64_t as_of = INT64_MAX;
  int history = 0;
  if (pmcp_arg_has(call, "episode"))
    pmcp_arg_int(call, "episode", &as_of);
  pmcp_arg_bool(call, "history", &history);
  pmcp__rl_run r;
  int rc = pmcp__rl_load(call, ud, as_of, &r);
  if (rc) {
    pmcp__rl_dispose(&r);
    return rc < 0 ? rc : 0;
  }
  const char *id = NULL;
  pmcp_arg_string(call, "environment", &id, NULL);
  pmcp__rl_env *e = pmcp__rl_find(&r, id);
  if (!e) {
    rc = pmcp__rl_env_missing(call, &r, id ? id : "");
    pmcp__rl_dispose(&r);
    return rc;
  }
  /* history: every version up to the episode asked, by path then episode */
  const cJSON *from = history ? e->versions : e->attrs, *v;
  attr_rows w = {&r, e, as_of, calloc((size_t)cJSON_GetArraySize(from) + 1, sizeof *w.items)};
  size_t n = 0;
  if (!w.items)
    from = NULL;
  cJSON_ArrayForEach(v, from)
  {
    if (history
            ? pmcp__jn(v, "episode", 0) <= (double)as_of && path_wanted(call, pmcp__js(v, "path"))
            : path_wanted(call, v->string))
      w.items[n++] = v;
  }
  if (!w.items)
    rc = PMCP_ENOMEM;
  else {
    if (!history && n)
      qsort(w.items, n, sizeof *w.items, by_name);
    rc = pmcp__trk_send_rows(call, n, history ? "versions" : "attributes", attr_fields,
                             history ? version_row : attr_row, &w);
  }
  free(w.items);
  pmcp__rl_dispose(&r);
  return rc;
}

/* ---- registration --------------------------------------------------------------- */

static const char *const functions[] = {"avg", "min", "max", "sum", "std", "median", NULL};

#define RUN_ARG {"run", PMCP_T_STRING, 1, "Id, name or ref.", 1, 1, 1, 200, NULL, NULL}
#define FILTER_ARG                                                                        \
  {"filter", PMCP_T_ARRAY, 0,                                                            \
   "As list_runs'; series need scale.", 0, 1, 0, 64, NULL, NULL}
#define ENVS_ARG                                                                           \
  {"environments", PMCP_T_STRING_ARRAY, 0, NULL, 0, 1, 0, 200, NULL, NULL}
#define SERIES_RANGE_ARGS                                                                  \
  {"scale", PMCP_T_STRING, 1, NULL, \
   0, 0, 0, 0, PMCP__TRK_RL_SCALES, NULL},                                                           \
  {"labels", PMCP_T_OBJECT, 0, NULL, 0, 0,\
   0, 0, NULL, NULL},                                                                      \
  {"buckets", PMCP_T_INTEGER, 0, NULL, 1, 1, 2, 1000, NULL, "50"},                        \
  {"step_from", PMCP_T_INTEGER, 0, NULL, 0, 0, 0, 0, NULL, NULL},     \
  {"step_to", PMCP_T_INTEGER, 0, NULL, 0, 0, 0, 0, NULL, NULL}

static const pmcp_arg_spec info_args[] = {RUN_ARG, PMCP__TRK_ARG_WORKSPACE,
                                          PMCP__TRK_ARG_PROJECT};
static const pmcp_arg_spec envs_args[] = {
  RUN_ARG, PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT, FILTER_ARG, ENVS_ARG,
  {"sort", PMCP_T_OBJECT, 0, "As list_runs'; default: by environment.", 0, 0, 0, 0, NULL, NULL},
  {"columns", PMCP_T_STRING_ARRAY, 0, "Paths to show.", 0, 1, 0, MAX_COLUMNS, NULL, NULL},
  {"summary_columns", PMCP_T_ARRAY, 0, "As list_runs'; scale needed.", 0, 1, 0, MAX_COLUMNS,
   NULL, NULL},
  PMCP__TRK_ARG_LIMIT("20"), PMCP__TRK_ARG_OFFSET};
static const pmcp_arg_spec run_list_args[] = {
  {"run", PMCP_T_STRING, 0, "Default: all runs.", 1,
   1, 1, 200, NULL, NULL},
  PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT, PMCP__TRK_ARG_LIMIT("50"),
  PMCP__TRK_ARG_OFFSET};
static const pmcp_arg_spec env_attrs_args[] = {
  RUN_ARG,
  {"environment", PMCP_T_STRING, 1, "Its env label value.", 1, 1, 1, 128, NULL, NULL},
  {"episode", PMCP_T_INTEGER, 0, "Default: the latest.", 1, 0, 0, 0,
   NULL, NULL},
  {"history", PMCP_T_BOOLEAN, 0, "Every version instead.", 0, 0, 0,
   0, NULL, "false"},
  {"paths", PMCP_T_STRING_ARRAY, 0, "Only paths under these.", 0, 1, 0, 50, NULL,
   NULL},
  PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT,
  {"limit", PMCP_T_INTEGER, 0, NULL, 1, 1, 1, 1000, NULL, "200"},
  PMCP__TRK_ARG_OFFSET};
static const pmcp_arg_spec buckets_args[] = {
  RUN_ARG,
  {"series", PMCP_T_STRING_ARRAY, 1, NULL, 1, 1, 1, 20, NULL, NULL},
  SERIES_RANGE_ARGS, ENVS_ARG, FILTER_ARG, PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT,
  PMCP__TRK_ARG_LIMIT("50"), PMCP__TRK_ARG_OFFSET};
static const pmcp_arg_spec aggregate_args[] = {
  RUN_ARG,
  {"series", PMCP_T_STRING, 1, NULL, 1, 1, 1, 200, NULL, NULL},
  SERIES_RANGE_ARGS,
  {"function", PMCP_T_STRING, 0, "Reduces the environments' bucket means.", 0, 0, 0, 0,
   functions, "\"avg\""},
  {"group_by", PMCP_T_STRING, 0, "Attribute path: a group per value.", 1, 1, 1, 256, NULL, NULL},
  ENVS_ARG, FILTER_ARG, PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT,
  PMCP__TRK_ARG_LIMIT("20"), PMCP__TRK_ARG_OFFSET};

#define N(a) (sizeof a / sizeof a[0])

int pmcp__trk_add_rl(pmcp_server *server, pmcp__tracking *tk)
{
  int rc = pmcp__trk_add_tool(server, tk, "get_rl_info", NULL,
               "A run's RL overview: environments, last episode and step.",
               info_args, N(info_args), get_rl_info);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "list_rl_environments", NULL,
             "A run's environments as a table, like list_runs.",
             envs_args, N(envs_args), list_rl_environments);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "list_rl_metrics", NULL,
             "Metrics of environments: scale, kind, label keys, counts.",
             run_list_args, N(run_list_args), list_rl_metrics);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "list_rl_attribute_definitions", NULL,
             "Attribute paths and types of environments.",
             run_list_args, N(run_list_args), list_rl_attribute_definitions);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "get_rl_environment_attributes", NULL,
             "An environment's attributes as of an episode, or every version.",
             env_attrs_args, N(env_attrs_args), get_rl_environment_attributes);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "fetch_rl_env_series_buckets", NULL,
             "As fetch_float_series_buckets, per environment.",
             buckets_args, N(buckets_args), pmcp__rl_fetch_buckets);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "aggregate_rl_env_series", NULL,
             "One series reduced across environments per bucket (in group_by groups).",
             aggregate_args, N(aggregate_args), pmcp__rl_aggregate);
  return rc;
}
