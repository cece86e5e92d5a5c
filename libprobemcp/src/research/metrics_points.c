/* SPDX-License-Identifier: MIT */
/* `metrics` modes `coordinates` (the run's catalog: keys, label keys and
 * values, scales, point counts) and `points` (raw points losslessly, one
 * bounded page; whole histograms or scatter sets for those kinds, or one
 * statistic per histogram). */
#include "research/metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probemcp/tokens.h"
#include "util/cnum.h"

/* ---- coordinates ------------------------------------------------------------ */

/* Distinct strings in the order first seen (borrowed), at most @p max. */
typedef struct strset {
  const char **v;
  size_t n, cap, max;
} strset;

static int strset_add(strset *set, const char *s)
{
  for (size_t i = 0; i < set->n; i++)
    if (!strcmp(set->v[i], s))
      return 0;
  if (set->n >= set->max)
    return 0;
  if (set->n == set->cap) {
    size_t cap = set->cap ? set->cap * 2 : 8;
    const char **nv = realloc(set->v, cap * sizeof *nv);
    if (!nv)
      return PMCP_ENOMEM;
    set->v = nv;
    set->cap = cap;
  }
  set->v[set->n++] = s;
  return 0;
}

/* A label key and its values seen. */
typedef struct label_vals {
  const char *key;
  strset vals;
} label_vals;

/* What the run's catalog holds, each in the order first seen: keys,
 * scales, kinds, and label keys with up to 50 values each. */
typedef struct coords {
  strset keys, scales, kinds;
  label_vals *lk;
  size_t nlk, cap_lk;
  int64_t points;
} coords;

static void coords_free(coords *k)
{
  free(k->keys.v);
  free(k->scales.v);
  free(k->kinds.v);
  for (size_t i = 0; i < k->nlk; i++)
    free(k->lk[i].vals.v);
  free(k->lk);
}

static int coords_read(const pmcp__mx_catalog *c, coords *k)
{
  memset(k, 0, sizeof *k);
  k->keys.max = k->scales.max = k->kinds.max = SIZE_MAX;
  int rc = 0;
  for (size_t i = 0; !rc && i < c->n; i++) {
    const pmcp__mx_series *s = &c->s[i];
    k->points += s->count;
    rc = strset_add(&k->keys, s->key);
    if (!rc)
      rc = strset_add(&k->scales, s->scale);
    if (!rc)
      rc = strset_add(&k->kinds, s->kind);
    const cJSON *l;
    cJSON_ArrayForEach(l, s->labels)
    {
      size_t x = 0;
      while (x < k->nlk && strcmp(k->lk[x].key, l->string))
        x++;
      if (x == k->nlk) {
        if (x == k->cap_lk) {
          size_t cap = x ? x * 2 : 8;
          label_vals *nl = realloc(k->lk, cap * sizeof *nl);
          if (!nl)
            return PMCP_ENOMEM;
          k->lk = nl;
          k->cap_lk = cap;
        }
        k->lk[k->nlk++] = (label_vals){l->string, {NULL, 0, 0, 50}};
      }
      if (!rc && cJSON_IsString(l))
        rc = strset_add(&k->lk[x].vals, l->valuestring);
    }
  }
  return rc;
}

static void put_strings(pmcp_json *j, const strset *set)
{
  pmcp_json_array_begin(j);
  for (size_t i = 0; i < set->n; i++)
    pmcp_json_string(j, set->v[i]);
  pmcp_json_array_end(j);
}

/* A field of the page written by @p j (reset first). */
static void field_of(pmcp_page *pg, const char *name, pmcp_json *j)
{
  size_t n = 0;
  const char *t = pmcp_json_text(j, &n);
  if (t)
    pmcp_page_field_json(pg, name, t, n);
  pmcp_json_reset(j);
}

/* The catalog's keys, label_values, scales and kinds as page fields. */
static int coords_fields(pmcp_page *pg, const coords *k)
{
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, 0))
    return PMCP_ENOMEM;
  put_strings(j, &k->keys);
  field_of(pg, "keys", j);
  pmcp_json_object_begin(j);
  for (size_t i = 0; i < k->nlk; i++) {
    pmcp_json_key(j, k->lk[i].key);
    put_strings(j, &k->lk[i].vals);
  }
  pmcp_json_object_end(j);
  field_of(pg, "label_values", j);
  put_strings(j, &k->scales);
  field_of(pg, "scales", j);
  put_strings(j, &k->kinds);
  field_of(pg, "kinds", j);
  pmcp_json_free(j);
  return 0;
}

int pmcp__mx_coordinates(pmcp_call *call, pmcp__research *rs)
{
  const char *run = NULL;
  pmcp_arg_string(call, "run_id", &run, NULL);
  pmcp__mx_catalog c;
  int rc = pmcp__mx_catalog_read(call, rs, run, &c);
  if (rc)
    return rc > 0 ? 0 : rc;
  /* label keys with their values, scales and kinds present */
  coords k;
  rc = coords_read(&c, &k);
  pmcp_page *pg = rc ? NULL : pmcp__rs_page(call, rs, 0);
  if (!pg) {
    coords_free(&k);
    pmcp__mx_catalog_free(&c);
    return rc;
  }
  size_t pos = pmcp__mx_pos(pg);
  pmcp_page_field_string(pg, "mode", "coordinates");
  pmcp_page_field_string(pg, "run", c.n ? c.s[0].run : run);
  pmcp_page_field_int(pg, "series_total", (int64_t)c.n);
  pmcp_page_field_int(pg, "points_total", k.points);
  if (pos == 0)
    rc = coords_fields(pg, &k);
  coords_free(&k);
  if (rc) {
    pmcp_page_free(pg);
    pmcp__mx_catalog_free(&c);
    return rc;
  }
  pmcp_page_list(pg, "series");
  int more = 0;
  for (size_t i = pos; i < c.n; i++) {
    const pmcp__mx_series *s = &c.s[i];
    pmcp_json *j = pmcp_page_item(pg);
    if (!j)
      break;
    pmcp_json_object_begin(j);
    pmcp_json_key(j, "key");
    pmcp_json_string(j, s->key);
    if (cJSON_GetArraySize(s->labels) > 0)
      pmcp__mx_labels(j, s->labels);
    pmcp_json_key(j, "kind");
    pmcp_json_string(j, s->kind);
    pmcp_json_key(j, "scale");
    pmcp_json_string(j, s->scale);
    pmcp_json_key(j, "count");
    pmcp_json_int(j, s->count);
    if (s->nonfinite) {
      pmcp_json_key(j, "non_finite");
      pmcp_json_int(j, s->nonfinite);
    }
    if (s->count) {
      pmcp_json_key(j, "step_min");
      pmcp_json_int(j, s->step_min);
      pmcp_json_key(j, "step_max");
      pmcp_json_int(j, s->step_max);
    }
    pmcp_json_object_end(j);
    uint64_t next = i + 1;
    int arc = pmcp_page_commit(pg, &next, sizeof next);
    if (arc == PMCP_EBUDGET) {
      more = 1;
      break;
    }
    if (arc)
      break;
  }
  pmcp__mx_catalog_free(&c);
  return pmcp__rs_send(call, pg, more);
}

/* ---- points ----------------------------------------------------------------- */

/* after_id: "pt:SERIES:POS" (float points) or "set:SERIES:ID" (histogram and
 * scatter sets). POS / ID is the store's position of the last point read. */
static int parse_after(const char *s, int64_t *series, int64_t *pos)
{
  const char *p;
  if (!strncmp(s, "pt:", 3))
    p = s + 3;
  else if (!strncmp(s, "set:", 4))
    p = s + 4;
  else
    return -1;
  char *end;
  long long a = strtoll(p, &end, 10);
  if (end == p || *end != ':' || a <= 0)
    return -1;
  const char *q = end + 1;
  long long b = strtoll(q, &end, 10);
  if (end == q || *end || b < 0)
    return -1;
  *series = a;
  *pos = b;
  return 0;
}

typedef pmcp__mx_hist_stat hist_stat;

int pmcp__mx_hist_stat_parse(const char *s, hist_stat *out)
{
  memset(out, 0, sizeof *out);
  if (!strcmp(s, "mean"))
    out->kind = 1;
  else if (!strcmp(s, "std"))
    out->kind = 2;
  else if (!strcmp(s, "min"))
    out->kind = 3;
  else if (!strcmp(s, "max"))
    out->kind = 4;
  else if (!strcmp(s, "median"))
    out->kind = 5, out->q = 0.5;
  else if (s[0] == 'p' && s[1]) {
    char *end;
    double v = pmcp__c_strtod(s + 1, &end);
    if (*end || !(v >= 0 && v <= 100))
      return -1;
    out->kind = 5;
    out->q = v / 100;
  } else
    return -1;
  return 0;
}

/* One statistic of a histogram (counts over ascending edges); values are
 * taken at bin midpoints, quantiles interpolated inside their bin. */
double pmcp__mx_hist_value(const hist_stat *hs, const cJSON *edges, const cJSON *counts)
{
  int nb = cJSON_GetArraySize(counts);
  if (nb <= 0 || cJSON_GetArraySize(edges) != nb + 1)
    return NAN;
  double tot = 0, s1 = 0, s2 = 0;
  int first = -1, last = -1;
  for (int i = 0; i < nb; i++) {
    double c = cJSON_GetArrayItem(counts, i)->valuedouble;
    double lo = cJSON_GetArrayItem(edges, i)->valuedouble;
    double hi = cJSON_GetArrayItem(edges, i + 1)->valuedouble;
    if (!(c > 0))
      continue;
    double mid = (lo + hi) / 2;
    tot += c;
    s1 += c * mid;
    s2 += c * mid * mid;
    if (first < 0)
      first = i;
    last = i;
  }
  if (!(tot > 0))
    return NAN;
  switch (hs->kind) {
  case 1:
    return s1 / tot;
  case 2: {
    double m = s1 / tot, var = s2 / tot - m * m;
    return sqrt(var > 0 ? var : 0);
  }
  case 3:
    return cJSON_GetArrayItem(edges, first)->valuedouble;
  case 4:
    return cJSON_GetArrayItem(edges, last + 1)->valuedouble;
  default: {
    double target = hs->q * tot, cum = 0;
    for (int i = 0; i < nb; i++) {
      double c = cJSON_GetArrayItem(counts, i)->valuedouble;
      if (!(c > 0))
        continue;
      double lo = cJSON_GetArrayItem(edges, i)->valuedouble;
      double hi = cJSON_GetArrayItem(edges, i + 1)->valuedouble;
      if (cum + c >= target)
        return lo + (hi - lo) * ((target - cum) / c);
      cum += c;
    }
    return cJSON_GetArrayItem(edges, last + 1)->valuedouble;
  }
  }
}

/* Tokens an item may use so that the page envelope and a cursor still fit. */
static size_t item_room(pmcp_page *pg)
{
  int b = pmcp_page_budget(pg);
  return b > 400 ? (size_t)b - 330 : 100;
}

static size_t text_tokens(pmcp_json *j)
{
  size_t len = 0, n = 0;
  const char *t = pmcp_json_text(j, &len);
  if (!t || pmcp_tokens_count(t, len, &n))
    return (size_t)-1;
  return n;
}

static void write_float_chunk(pmcp_json *j, const pmcp__mx_series *s, const pmcp_point *p,
                              size_t n, int64_t pos)
{
  pmcp_json_reset(j);
  pmcp__mx_head(j, s, 0);
  int has_t = 0;
  for (size_t i = 0; i < n && !has_t; i++)
    has_t = p[i].time_ms != 0;
  pmcp_json_key(j, "step");
  pmcp_json_array_begin(j);
  for (size_t i = 0; i < n; i++)
    pmcp_json_int(j, p[i].step);
  pmcp_json_array_end(j);
  pmcp_json_key(j, "value");
  pmcp_json_array_begin(j);
  for (size_t i = 0; i < n; i++)
    pmcp_json_number_lossless(j, p[i].value);
  pmcp_json_array_end(j);
  if (has_t) {
    pmcp_json_key(j, "time_ms");
    pmcp_json_array_begin(j);
    for (size_t i = 0; i < n; i++)
      pmcp_json_int(j, p[i].time_ms);
    pmcp_json_array_end(j);
  }
  char id[64];
  if (pos)
    snprintf(id, sizeof id, "pt:%" PRId64 ":%" PRId64, s->id, pos);
  else
    snprintf(id, sizeof id, "pt:%" PRId64 ":end", s->id);
  pmcp_json_key(j, "last_id");
  pmcp_json_string(j, id);
  pmcp_json_object_end(j);
}

/* Where a page resumes: after position @c pos of @c series; pos -1: the
 * series is done, go on with the next one. */
typedef struct pstate {
  int64_t series, pos;
} pstate;

/* Float points of @p s after @p after, as chunks that fit the page.
 * Returns 1 when the page is full or the limit reached, 0 when the series
 * is done, <0 on error. */
static int float_points(pmcp__research *rs, pmcp_page *pg, const pmcp__mx_series *s,
                        int64_t from, int64_t to, int64_t after, size_t *left)
{
  size_t cap = *left < 2000 ? *left : 2000;
  pmcp_point *p = malloc((cap ? cap : 1) * sizeof *p);
  if (!p)
    return PMCP_ENOMEM;
  int rc = 0;
  while (*left > 0 && rc == 0) {
    size_t want = *left < cap ? *left : cap, got = 0;
    int64_t pos = 0;
    pthread_mutex_lock(rs->lock);
    rc = pmcp_store_points(rs->store, rs->tenant, s->id, from, to, after, p, want, &got,
                           &pos);
    pthread_mutex_unlock(rs->lock);
    if (rc || got == 0)
      break;
    /* pos: the position of the last point read when more follow, 0 when
     * the range is exhausted. */
    size_t n = got;
    pmcp_json *j = pmcp_page_item(pg);
    if (!j) {
      rc = pmcp_page_status(pg);
      break;
    }
    for (;;) {
      write_float_chunk(j, s, p, n, pos);
      size_t tok = text_tokens(j);
      if (tok <= item_room(pg) || n == 1)
        break;
      size_t nn = (size_t)((double)n * (double)item_room(pg) / (double)tok * 0.9);
      n = nn < 1 ? 1 : nn < n ? nn : n - 1;
      size_t g = 0;
      pthread_mutex_lock(rs->lock);
      rc = pmcp_store_points(rs->store, rs->tenant, s->id, from, to, after, p, n, &g, &pos);
      pthread_mutex_unlock(rs->lock);
      if (!rc && (g != n || pos == 0))
        rc = PMCP_EINTERNAL;
      if (rc)
        break;
    }
    if (rc)
      break;
    pstate st = {s->id, pos ? pos : -1};
    int arc = pmcp_page_commit(pg, &st, sizeof st);
    if (arc == PMCP_EBUDGET) {
      rc = 1;
      break;
    }
    if (arc) {
      rc = arc;
      break;
    }
    *left -= n;
    if (pos == 0)
      break; /* series done */
    after = pos;
    if (*left == 0)
      rc = 1;
  }
  free(p);
  return rc;
}

static void write_doubles(pmcp_json *j, const char *key, const cJSON *arr, const double *scale_by)
{
  pmcp_json_key(j, key);
  pmcp_json_array_begin(j);
  const cJSON *x;
  int i = 0;
  cJSON_ArrayForEach(x, arr)
  {
    if (!cJSON_IsNumber(x))
      pmcp_json_null(j);
    else if (scale_by)
      pmcp_json_number_lossless(j, x->valuedouble * scale_by[i]);
    else
      pmcp_json_number_lossless(j, x->valuedouble);
    i++;
  }
  pmcp_json_array_end(j);
}

typedef struct set_opts {
  int64_t from, to;
  hist_stat stat;
  int density;
} set_opts;

/* Histogram or scatter sets of @p s after set id @p after. Same returns as
 * float_points(). */
static int set_points(pmcp__research *rs, pmcp_page *pg, const pmcp__mx_series *s,
                      const set_opts *o, int64_t after, size_t *left)
{
  int hist = !strcmp(s->kind, "histogram");
  int rc = 0;
  while (*left > 0 && rc == 0) {
    size_t want = *left < 100 ? *left : 100;
    char aft[32];
    snprintf(aft, sizeof aft, "%" PRId64, after);
    pmcp_buf b = PMCP_BUF_INIT;
    pthread_mutex_lock(rs->lock);
    rc = pmcp_store_series_sets(rs->store, rs->tenant, s->id, o->from, o->to, aft, want, &b);
    pthread_mutex_unlock(rs->lock);
    cJSON *res = rc ? NULL : cJSON_ParseWithLength(b.ptr ? b.ptr : "", b.len);
    pmcp_buf_dispose(&b);
    if (rc)
      break;
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(res, "items");
    int more_in_series = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(res, "next"));
    size_t got = (size_t)cJSON_GetArraySize(items);
    if (!got) {
      cJSON_Delete(res);
      break;
    }
    if (hist && o->stat.kind) {
      /* one value per step, as parallel arrays */
      size_t n = got;
      pmcp_json *j = pmcp_page_item(pg);
      if (!j) {
        cJSON_Delete(res);
        return pmcp_page_status(pg);
      }
      int64_t last = 0;
      for (;;) {
        pmcp_json_reset(j);
        pmcp__mx_head(j, s, 0);
        pmcp_json_key(j, "stat");
        pmcp_json_string(j, o->stat.kind == 1 ? "mean" : o->stat.kind == 2 ? "std"
                            : o->stat.kind == 3 ? "min" : o->stat.kind == 4 ? "max"
                            : "quantile");
        if (o->stat.kind == 5) {
          pmcp_json_key(j, "q");
          pmcp_json_number_lossless(j, o->stat.q);
        }
        pmcp_json_key(j, "step");
        pmcp_json_array_begin(j);
        for (size_t i = 0; i < n; i++)
          pmcp_json_int(j, (int64_t)pmcp__jn(cJSON_GetArrayItem(items, (int)i), "step", 0));
        pmcp_json_array_end(j);
        pmcp_json_key(j, "value");
        pmcp_json_array_begin(j);
        for (size_t i = 0; i < n; i++) {
          const cJSON *it = cJSON_GetArrayItem(items, (int)i);
          pmcp_json_number_lossless(j, pmcp__mx_hist_value(&o->stat,
                                                  cJSON_GetObjectItemCaseSensitive(it, "edges"),
                                                  cJSON_GetObjectItemCaseSensitive(it, "counts")));
        }
        pmcp_json_array_end(j);
        last = (int64_t)pmcp__jn(cJSON_GetArrayItem(items, (int)n - 1), "id", 0);
        char id[64];
        snprintf(id, sizeof id, "set:%" PRId64 ":%" PRId64, s->id, last);
        pmcp_json_key(j, "last_id");
        pmcp_json_string(j, id);
        pmcp_json_object_end(j);
        size_t tok = text_tokens(j);
        if (tok <= item_room(pg) || n == 1)
          break;
        size_t nn = (size_t)((double)n * (double)item_room(pg) / (double)tok * 0.9);
        n = nn < 1 ? 1 : nn < n ? nn : n - 1;
      }
      int done = n == got && !more_in_series;
      pstate st = {s->id, done ? -1 : last};
      int arc = pmcp_page_commit(pg, &st, sizeof st);
      cJSON_Delete(res);
      if (arc == PMCP_EBUDGET)
        return 1;
      if (arc)
        return arc;
      *left -= n;
      if (done)
        return 0;
      after = last;
      if (*left == 0)
        return 1;
      continue;
    }
    /* whole sets, one item each */
    size_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, items)
    {
      i++;
      int64_t id = (int64_t)pmcp__jn(it, "id", 0);
      pmcp_json *j = pmcp_page_item(pg);
      if (!j) {
        rc = pmcp_page_status(pg);
        break;
      }
      pmcp__mx_head(j, s, 0);
      pmcp_json_key(j, "step");
      pmcp_json_int(j, (int64_t)pmcp__jn(it, "step", 0));
      double tm = pmcp__jn(it, "time", 0);
      if (tm) {
        pmcp_json_key(j, "time_ms");
        pmcp_json_int(j, (int64_t)tm);
      }
      if (hist) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(it, "edges");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(it, "counts");
        write_doubles(j, "edges", e, NULL);
        double *sc = NULL;
        int nb = cJSON_GetArraySize(c);
        if (o->density && nb > 0 && cJSON_GetArraySize(e) == nb + 1 &&
            (sc = malloc((size_t)nb * sizeof *sc))) {
          double tot = 0;
          for (int k = 0; k < nb; k++)
            tot += cJSON_GetArrayItem(c, k)->valuedouble;
          for (int k = 0; k < nb; k++) {
            double w = cJSON_GetArrayItem(e, k + 1)->valuedouble -
                       cJSON_GetArrayItem(e, k)->valuedouble;
            sc[k] = tot > 0 && w > 0 ? 1.0 / (tot * w) : NAN;
          }
        }
        write_doubles(j, sc ? "densities" : "counts", c, sc);
        free(sc);
      } else {
        write_doubles(j, "x", cJSON_GetObjectItemCaseSensitive(it, "x"), NULL);
        write_doubles(j, "y", cJSON_GetObjectItemCaseSensitive(it, "y"), NULL);
      }
      char ids[64];
      snprintf(ids, sizeof ids, "set:%" PRId64 ":%" PRId64, s->id, id);
      pmcp_json_key(j, "last_id");
      pmcp_json_string(j, ids);
      pmcp_json_object_end(j);
      int done = i == got && !more_in_series;
      pstate st = {s->id, done ? -1 : id};
      int arc = pmcp_page_commit(pg, &st, sizeof st);
      if (arc == PMCP_EBUDGET) {
        rc = 1;
        break;
      }
      if (arc) {
        rc = arc;
        break;
      }
      after = id;
      if (--*left == 0) {
        rc = done ? 2 : 1;
        break;
      }
    }
    cJSON_Delete(res);
    if (rc == 2)
      return 1;
    if (rc)
      return rc;
    if (!more_in_series)
      return 0;
  }
  return rc;
}

static int looks_like_cursor(const char *s)
{
  size_t n = strlen(s);
  if (n < 24)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
          (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'))
      return 0;
  return 1;
}

int pmcp__mx_points(pmcp_call *call, pmcp__research *rs)
{
  const char *run = NULL, *key = NULL, *kind = "float", *after_s = NULL, *stat_s = NULL;
  pmcp_arg_string(call, "run_id", &run, NULL);
  if (pmcp_arg_has(call, "key"))
    pmcp_arg_string(call, "key", &key, NULL);
  if (pmcp_arg_has(call, "kind"))
    pmcp_arg_string(call, "kind", &kind, NULL);
  if (pmcp_arg_has(call, "after_id"))
    pmcp_arg_string(call, "after_id", &after_s, NULL);
  if (pmcp_arg_has(call, "stat"))
    pmcp_arg_string(call, "stat", &stat_s, NULL);
  set_opts so = {INT64_MIN, INT64_MAX, {0, 0}, 0};
  int64_t v;
  if (pmcp_arg_int(call, "step_from", &v) == 0)
    so.from = v;
  if (pmcp_arg_int(call, "step_to", &v) == 0)
    so.to = v;
  if (so.from > so.to)
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "step_from is after step_to");
  size_t limit = 500;
  if (pmcp_arg_int(call, "limit", &v) == 0)
    limit = (size_t)v;
  if (pmcp_arg_has(call, "density"))
    pmcp_arg_bool(call, "density", &so.density);
  if ((stat_s || so.density) && strcmp(kind, "histogram"))
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "%s applies to kind=\"histogram\" only",
                         stat_s ? "stat" : "density");
  if (stat_s && pmcp__mx_hist_stat_parse(stat_s, &so.stat))
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                         "stat '%.32s' is not one of mean, std, min, max, median, pN "
                         "(a percentile such as p95)", stat_s);
  if (stat_s && so.density)
    return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT, "stat and density do not combine");
  int64_t a_series = 0, a_pos = 0;
  if (after_s) {
    if (parse_after(after_s, &a_series, &a_pos)) {
      size_t n = strlen(after_s);
      if (n > 4 && !strcmp(after_s + n - 4, ":end") &&
          (!strncmp(after_s, "pt:", 3) || !strncmp(after_s, "set:", 4)))
        a_pos = -1, a_series = strtoll(after_s + (after_s[0] == 'p' ? 3 : 4), NULL, 10);
      else if (looks_like_cursor(after_s))
        return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                             "after_id takes the last_id of a points item (\"pt:...\" or "
                             "\"set:...\"), not an MCP cursor: pass next_cursor as cursor");
      else
        return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                             "after_id '%.40s' is not a point id (the last_id of a points "
                             "item, \"pt:...\" or \"set:...\")", after_s);
    }
    if ((!strncmp(after_s, "pt:", 3)) != !strcmp(kind, "float"))
      return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                           "after_id '%.40s' belongs to another kind of series than %s",
                           after_s, kind);
  }
  pmcp__mx_where *where = NULL;
  int rc = pmcp__mx_where_from_call(call, &where);
  if (rc)
    return rc > 0 ? 0 : rc;
  pmcp__mx_catalog c;
  rc = pmcp__mx_catalog_read(call, rs, run, &c);
  size_t *sel = rc ? NULL : malloc((c.n ? c.n : 1) * sizeof *sel), ns = 0;
  if (!rc && !sel)
    rc = PMCP_ENOMEM;
  if (rc) {
    pmcp__mx_where_free(where);
    pmcp__mx_catalog_free(&c);
    return rc > 0 ? 0 : rc;
  }
  pmcp__mx_pick pick = {key, kind, where, NULL, 1};
  pmcp__mx_misses why;
  ns = pmcp__mx_select(&c, &pick, sel, &why);
  if (key && !ns) {
    rc = pmcp__mx_select_fail(call, &c, run, &pick, &why);
    pmcp__mx_where_free(where);
    free(sel);
    pmcp__mx_catalog_free(&c);
    return rc;
  }
  pmcp__mx_where_free(where);
  /* The pages walk these series by point position: points logged since
   * land after it, so the cursor is bound to the series read, not to the
   * store (another series in the selection is a different walk). */
  uint64_t scope = 0;
  for (size_t i = 0; i < ns; i++)
    scope = pmcp__rs_scope_mix(scope, c.s[sel[i]].id);
  pmcp_page *pg = pmcp__rs_page_scoped(call, rs, PMCP_PAGE_LOSSLESS, scope ? scope : 1);
  if (!pg) {
    free(sel);
    pmcp__mx_catalog_free(&c);
    return 0;
  }
  const void *pd = NULL;
  size_t pl = 0;
  if (pmcp_page_position(pg, &pd, &pl) == 0 && pd && pl == sizeof(pstate)) {
    pstate st;
    memcpy(&st, pd, sizeof st);
    a_series = st.series;
    a_pos = st.pos;
  }
  size_t start = 0;
  if (a_series) {
    while (start < ns && c.s[sel[start]].id != a_series)
      start++;
    if (start == ns) {
      free(sel);
      pmcp__mx_catalog_free(&c);
      pmcp_page_free(pg);
      return pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                           "after_id names a series this call does not read");
    }
  }
  pmcp_page_field_string(pg, "mode", "points");
  pmcp_page_field_string(pg, "run", c.n ? c.s[0].run : run);
  pmcp_page_list(pg, "series");
  size_t left = limit;
  int more = 0;
  rc = 0;
  for (size_t i = start; i < ns && rc == 0; i++) {
    const pmcp__mx_series *s = &c.s[sel[i]];
    int64_t after = 0;
    if (i == start && a_series) {
      if (a_pos < 0)
        continue; /* that series was finished */
      after = a_pos;
    }
    rc = !strcmp(kind, "float") ? float_points(rs, pg, s, so.from, so.to, after, &left)
                                : set_points(rs, pg, s, &so, after, &left);
    if (rc == 1) {
      /* full: more remains unless this was the last series and it ended */
      const void *d2;
      size_t l2;
      more = 1;
      (void)d2;
      (void)l2;
      rc = 0;
      break;
    }
  }
  free(sel);
  pmcp__mx_catalog_free(&c);
  if (rc < 0 && pmcp_page_status(pg) == 0)
    pmcp_page_fail(pg, pmcp__rs_error_member(PMCP_TERR_STORE),
                   "the points cannot be read");
  return pmcp__rs_send(call, pg, more);
}
