/* SPDX-License-Identifier: MIT */
/* Shared parts of the `metrics` tool: the run's series catalog, label
 * conditions (`where`), and pages under the toolset's cursor key. */
#include "research/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter/filter.h"
#include "research/page.h"
#include "research/refs.h"
#include "util/cnum.h"
#include "util/fsum.h"

int pmcp__mx_scale_ok(const char *s)
{
  return s && (!strcmp(s, "step") || !strcmp(s, "env_step") || !strcmp(s, "episode"));
}

void pmcp__mx_catalog_free(pmcp__mx_catalog *c)
{
  if (!c)
    return;
  cJSON_Delete(c->json);
  free(c->s);
  memset(c, 0, sizeof *c);
}

static int64_t ji(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

static double jd(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The mean of a series whose stored sum does not fit a double (the
 * catalog has none) from its points, summed without overflow: the mean
 * of finite values always fits. NaN when they cannot be read. */
static double mean_from_points(pmcp__research *rs, const pmcp__mx_series *s)
{
  enum { CAP = 4096 };
  pmcp_point *p = malloc(CAP * sizeof *p);
  pmcp__fsum sum = {0, 0};
  uint64_t n = 0;
  double min = INFINITY, max = -INFINITY;
  int64_t after = 0;
  int rc = p ? 0 : PMCP_ENOMEM;
  while (rc == 0) {
    size_t got = 0;
    int64_t next = 0;
    pthread_mutex_lock(rs->lock);
    rc = pmcp_store_points(rs->store, rs->tenant, s->id, INT64_MIN, INT64_MAX, after, p, CAP,
                           &got, &next);
    pthread_mutex_unlock(rs->lock);
    for (size_t i = 0; rc == 0 && i < got; i++)
      if (isfinite(p[i].value)) {
        pmcp__fsum_add(&sum, p[i].value);
        n++;
        min = p[i].value < min ? p[i].value : min;
        max = p[i].value > max ? p[i].value : max;
      }
    if (rc || !next)
      break;
    after = next;
  }
  free(p);
  return rc || !n ? NAN : pmcp__fsum_mean(&sum, (double)n, min, max);
}

int pmcp__mx_catalog_read(pmcp_call *call, pmcp__research *rs,
                          const char *run_arg, pmcp__mx_catalog *out)
{
  memset(out, 0, sizeof *out);
  pmcp__ref ref;
  char err[256];
  if (pmcp__ref_parse_run(&ref, run_arg, err, sizeof err))
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "%s", err), 1;
  pmcp_buf b = PMCP_BUF_INIT;
  pthread_mutex_lock(rs->lock);
  int rc = pmcp_store_series_list(rs->store, rs->tenant, ref.id, &b);
  pthread_mutex_unlock(rs->lock);
  if (rc == PMCP_ENOTFOUND) {
    pmcp_buf_dispose(&b);
    return pmcp__rs_fail(call, PMCP_TERR_NOT_FOUND, "run:%s not found", ref.id), 1;
  }
  if (rc) {
    pmcp_buf_dispose(&b);
    return pmcp__rs_fail(call, PMCP_TERR_STORE, "the metrics of run:%s cannot be read",
                         ref.id), 1;
  }
  out->json = cJSON_ParseWithLength(b.ptr ? b.ptr : "", b.len);
  pmcp_buf_dispose(&b);
  const cJSON *items = cJSON_GetObjectItemCaseSensitive(out->json, "items");
  if (!cJSON_IsArray(items)) {
    pmcp__mx_catalog_free(out);
    return pmcp__rs_fail(call, PMCP_TERR_STORE, "the series catalog is unreadable"), 1;
  }
  size_t n = (size_t)cJSON_GetArraySize(items);
  out->s = calloc(n ? n : 1, sizeof *out->s);
  if (!out->s) {
    pmcp__mx_catalog_free(out);
    return PMCP_ENOMEM;
  }
  const cJSON *it;
  cJSON_ArrayForEach(it, items)
  {
    pmcp__mx_series *s = &out->s[out->n++];
    snprintf(s->run, sizeof s->run, "run:%s", ref.id);
    s->id = ji(it, "series");
    s->key = pmcp__js(it, "key");
    s->labels = cJSON_GetObjectItemCaseSensitive(it, "labels");
    s->kind = pmcp__js(it, "kind");
    s->scale = pmcp__js(it, "scale");
    s->count = ji(it, "count");
    s->nonfinite = ji(it, "nonfinite");
    s->step_min = ji(it, "step_min");
    s->step_max = ji(it, "step_max");
    s->time_min = ji(it, "time_min");
    s->time_max = ji(it, "time_max");
    s->first = jd(it, "first");
    s->last = jd(it, "last");
    s->min = jd(it, "min");
    s->max = jd(it, "max");
    s->mean = jd(it, "mean");
    if (s->kind && !strcmp(s->kind, "float") && s->count > s->nonfinite && !isfinite(s->mean))
      s->mean = mean_from_points(rs, s);
    s->has_stats = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(it, "count"));
  }
  return 0;
}

/* ---- where ---------------------------------------------------------------- */

/* `where` is the shared filter language (filter/filter.h) with attribute
 * conditions naming label keys: {"attr": "rank", "op": "lt", "value": 4}.
 * Labels are stored as text; a label compared with a number (gt, lt, eq,
 * in, ... with a numeric value) is read as a number, and the condition's
 * numeric strings with it, so "rank" lt 4 and "rank" in ["0", "3"] both
 * mean what they say. */
struct pmcp__mx_where {
  pmcp__filter *f;
  cJSON *numeric; /* {label: true}: label keys read as numbers */
};

static int num_text(const char *s, double *out)
{
  char *end;
  if (!s || !*s)
    return 0;
  double v = pmcp__c_strtod(s, &end);
  if (*end || !isfinite(v))
    return 0;
  *out = v;
  return 1;
}

static int has_number(const cJSON *v)
{
  const cJSON *x;
  if (cJSON_IsNumber(v))
    return 1;
  cJSON_ArrayForEach(x, v)
    if (cJSON_IsNumber(x))
      return 1;
  return 0;
}

static int op_is(const char *op, const char *const *names)
{
  for (size_t i = 0; names[i]; i++)
    if (!strcmp(op, names[i]))
      return 1;
  return 0;
}

static const char *const text_ops[] = {"matches", "contains", "contains_any", "contains_all",
                                       NULL};
static const char *const value_ops[] = {"eq", "ne", "gt", "gte", "lt", "lte", "in", "not_in",
                                        NULL};

/* Visits the leaves of @p where (top level and any_of groups). */
static int leaves(cJSON *where, int (*fn)(cJSON *leaf, size_t idx, void *ud, char *err,
                                          size_t errlen),
                  void *ud, char *err, size_t errlen)
{
  cJSON *c;
  size_t i = 0;
  cJSON_ArrayForEach(c, where)
  {
    cJSON *any = cJSON_GetObjectItemCaseSensitive(c, "any_of"), *x;
    int rc = 0;
    if (cJSON_IsArray(any)) {
      cJSON_ArrayForEach(x, any)
        if (!rc && cJSON_IsObject(x))
          rc = fn(x, i, ud, err, errlen);
    } else if (cJSON_IsObject(c)) {
      rc = fn(c, i, ud, err, errlen);
    }
    if (rc)
      return rc;
    i++;
  }
  return 0;
}

typedef struct scan_state {
  cJSON *numeric, *textual;
} scan_state;

static int leaf_scan(cJSON *c, size_t idx, void *ud, char *err, size_t errlen)
{
  scan_state *st = ud;
  if (cJSON_GetObjectItemCaseSensitive(c, "series")) {
    snprintf(err, errlen, "where: condition %zu is a series condition; where selects series "
             "by their labels: {\"attr\": LABEL, \"op\": OP, \"value\": V}", idx);
    return PMCP_EINVAL;
  }
  const cJSON *attr = cJSON_GetObjectItemCaseSensitive(c, "attr");
  const cJSON *op = cJSON_GetObjectItemCaseSensitive(c, "op");
  if (!cJSON_IsString(attr) || !cJSON_IsString(op))
    return 0; /* the filter parser names what is missing */
  cJSON *set = NULL;
  if (op_is(op->valuestring, text_ops))
    set = st->textual;
  else if (op_is(op->valuestring, value_ops) &&
           has_number(cJSON_GetObjectItemCaseSensitive(c, "value")))
    set = st->numeric;
  if (set && !cJSON_GetObjectItemCaseSensitive(set, attr->valuestring))
    cJSON_AddTrueToObject(set, attr->valuestring);
  return 0;
}

static void to_number(cJSON *v)
{
  double d;
  if (cJSON_IsString(v) && num_text(v->valuestring, &d)) {
    cJSON_free(v->valuestring);
    v->valuestring = NULL;
    v->type = cJSON_Number;
    cJSON_SetNumberValue(v, d);
  }
}

static int leaf_numeric(cJSON *c, size_t idx, void *ud, char *err, size_t errlen)
{
  (void)idx;
  (void)err;
  (void)errlen;
  const cJSON *attr = cJSON_GetObjectItemCaseSensitive(c, "attr");
  const cJSON *op = cJSON_GetObjectItemCaseSensitive(c, "op");
  cJSON *val = cJSON_GetObjectItemCaseSensitive(c, "value"), *x;
  if (!cJSON_IsString(attr) || !cJSON_IsString(op) || !op_is(op->valuestring, value_ops) ||
      !cJSON_GetObjectItemCaseSensitive(ud, attr->valuestring))
    return 0;
  to_number(val);
  cJSON_ArrayForEach(x, val)
    to_number(x);
  return 0;
}

void pmcp__mx_where_free(pmcp__mx_where *w)
{
  if (!w)
    return;
  pmcp__filter_free(w->f);
  cJSON_Delete(w->numeric);
  free(w);
}

int pmcp__mx_where_from_call(pmcp_call *call, pmcp__mx_where **out)
{
  *out = NULL;
  const char *wj = NULL;
  if (!pmcp_arg_has(call, "where") || pmcp_arg_json(call, "where", &wj) || !wj)
    return 0;
  char err[300] = "";
  cJSON *json = cJSON_Parse(wj);
  scan_state st = {cJSON_CreateObject(), cJSON_CreateObject()};
  pmcp__mx_where *w = calloc(1, sizeof *w);
  int rc = json && st.numeric && st.textual && w ? 0 : PMCP_ENOMEM;
  if (!rc && !cJSON_IsArray(json)) {
    snprintf(err, sizeof err, "where must be a list of conditions");
    rc = PMCP_EINVAL;
  }
  if (!rc)
    rc = leaves(json, leaf_scan, &st, err, sizeof err);
  const cJSON *k;
  cJSON_ArrayForEach(k, st.numeric)
    if (!rc && cJSON_GetObjectItemCaseSensitive(st.textual, k->string)) {
      snprintf(err, sizeof err, "where: label '%.64s' is compared both with a number and "
               "as text (matches/contains); use one or the other", k->string);
      rc = PMCP_EINVAL;
    }
  if (!rc)
    rc = leaves(json, leaf_numeric, st.numeric, err, sizeof err);
  if (!rc)
    rc = pmcp__filter_parse(json, &w->f, err, sizeof err);
  cJSON_Delete(json);
  cJSON_Delete(st.textual);
  if (w)
    w->numeric = st.numeric;
  else
    cJSON_Delete(st.numeric);
  if (rc) {
    pmcp__mx_where_free(w);
    if (rc == PMCP_EINVAL)
      return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                           "%s%s", strncmp(err, "where", 5) ? "where: " : "", err), 1;
    return rc;
  }
  *out = w;
  return 0;
}

static const cJSON *label_attr(void *ud, const char *path)
{
  return cJSON_GetObjectItemCaseSensitive((const cJSON *)ud, path);
}

int pmcp__mx_where_match(const pmcp__mx_where *w, const cJSON *labels)
{
  if (!w)
    return 1;
  /* the labels as the conditions read them */
  cJSON *typed = cJSON_CreateObject();
  const cJSON *l;
  double d;
  cJSON_ArrayForEach(l, labels)
  {
    cJSON *v = cJSON_IsString(l) && cJSON_GetObjectItemCaseSensitive(w->numeric, l->string) &&
                       num_text(l->valuestring, &d)
                   ? cJSON_CreateNumber(d)
                   : cJSON_Duplicate(l, 1);
    cJSON_AddItemToObject(typed, l->string, v);
  }
  pmcp__filter_row row = {label_attr, NULL, typed, NULL};
  int m = pmcp__filter_match(w->f, &row) == 1;
  cJSON_Delete(typed);
  return m;
}

/* ---- selection -------------------------------------------------------------- */

size_t pmcp__mx_select(const pmcp__mx_catalog *c, const pmcp__mx_pick *p, size_t *idx,
                       pmcp__mx_misses *why)
{
  size_t n = 0;
  memset(why, 0, sizeof *why);
  for (size_t i = 0; i < c->n; i++) {
    const pmcp__mx_series *s = &c->s[i];
    if (p->key && strcmp(s->key, p->key))
      continue;
    why->key_seen = 1;
    if (p->kind && strcmp(s->kind, p->kind))
      continue;
    if (!pmcp__mx_where_match(p->where, s->labels))
      continue;
    if (!p->any_scale && strcmp(s->scale, p->scale ? p->scale : "step")) {
      why->rl += !p->scale;
      continue;
    }
    idx[n++] = i;
  }
  return n;
}

int pmcp__mx_select_fail(pmcp_call *call, const pmcp__mx_catalog *c, const char *run,
                         const pmcp__mx_pick *p, const pmcp__mx_misses *why)
{
  const char *r = c->n ? c->s[0].run : run;
  if (why->rl)
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                         "%s of %s is logged on an RL scale: scale is required (env_step for "
                         "per-step values, episode for per-episode ones)",
                         p->key ? p->key : "a series", r);
  if (p->key && why->key_seen)
    return pmcp__rs_fail(call, PMCP_TERR_NOT_FOUND,
                         "no %s series of '%s' in %s matches (mode=coordinates lists them)",
                         p->kind ? p->kind : "", p->key, r);
  if (p->key)
    return pmcp__rs_fail(call, PMCP_TERR_NOT_FOUND, "%s has no series '%s' (mode=coordinates lists "
                         "them)", r, p->key);
  return pmcp__rs_fail(call, PMCP_TERR_NOT_FOUND, "no series of %s matches", r);
}

void pmcp__mx_head(pmcp_json *j, const pmcp__mx_series *s, int with_run)
{
  pmcp_json_object_begin(j);
  if (with_run) {
    pmcp_json_key(j, "run");
    pmcp_json_string(j, s->run);
  }
  pmcp_json_key(j, "key");
  pmcp_json_string(j, s->key);
  if (cJSON_GetArraySize(s->labels) > 0)
    pmcp__mx_labels(j, s->labels);
  if (strcmp(s->kind, "float")) {
    pmcp_json_key(j, "kind");
    pmcp_json_string(j, s->kind);
  }
  if (strcmp(s->scale, "step")) {
    pmcp_json_key(j, "scale");
    pmcp_json_string(j, s->scale);
  }
}

/* ---- pages ----------------------------------------------------------------- */

size_t pmcp__mx_pos(pmcp_page *pg)
{
  const void *d = NULL;
  size_t n = 0;
  if (pmcp_page_position(pg, &d, &n) || !d || n != sizeof(uint64_t))
    return 0;
  uint64_t v;
  memcpy(&v, d, sizeof v);
  return (size_t)v;
}

void pmcp__mx_labels(pmcp_json *j, const cJSON *labels)
{
  pmcp_json_key(j, "labels");
  pmcp_json_object_begin(j);
  const cJSON *l;
  cJSON_ArrayForEach(l, labels)
  {
    pmcp_json_key(j, l->string);
    if (cJSON_IsString(l))
      pmcp_json_string(j, l->valuestring);
    else if (cJSON_IsNumber(l))
      pmcp_json_number_lossless(j, l->valuedouble);
    else
      pmcp_json_null(j);
  }
  pmcp_json_object_end(j);
}
