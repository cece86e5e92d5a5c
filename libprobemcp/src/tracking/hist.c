/* SPDX-License-Identifier: MIT */
/* Histogram and scatter tools of the tracking toolset:
 * fetch_histogram_series (whole histograms: edges, counts or densities,
 * and their statistics), fetch_scatter_series (point sets per step), and
 * the histogram statistic fetch_float_series reads per step. Sets are
 * read with pmcp_store_series_sets(); statistics are the research
 * `metrics` tool's (pmcp__mx_hist_value), so both toolsets agree. Items
 * are one per run, series and step, paged by offset. */
#include "tracking/tracking.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/page.h"

/* Most sets one call visits per series to count those in a step range
 * (without a range the catalog counts them and reading stops at the page). */
#define MAX_SETS 100000
#define SETS_PER_READ 200

/* Called per set in logging order: 0 goes on, 1 stops, negative fails. */
typedef int (*set_fn)(const cJSON *set, void *ud);

static int each_set(pmcp__tracking *tk, int64_t series, int64_t lo, int64_t hi, size_t cap,
                    set_fn fn, void *ud)
{
  char after[32] = "";
  size_t seen = 0;
  for (;;) {
    pmcp_buf b = PMCP_BUF_INIT;
    pthread_mutex_lock(tk->rs->lock);
    int rc = pmcp_store_series_sets(tk->rs->store, tk->rs->tenant, series, lo, hi, after,
                                    SETS_PER_READ, &b);
    pthread_mutex_unlock(tk->rs->lock);
    cJSON *res = rc ? NULL : cJSON_ParseWithLength(b.ptr ? b.ptr : "", b.len);
    pmcp_buf_dispose(&b);
    if (rc)
      return rc;
    if (!res)
      return PMCP_ENOMEM;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(res, "items"))
    {
      rc = fn(it, ud);
      if (rc || ++seen >= cap) {
        cJSON_Delete(res);
        return rc < 0 ? rc : 0;
      }
    }
    const cJSON *next = cJSON_GetObjectItemCaseSensitive(res, "next");
    if (!cJSON_IsString(next) || strlen(next->valuestring) >= sizeof after) {
      cJSON_Delete(res);
      return 0;
    }
    snprintf(after, sizeof after, "%s", next->valuestring);
    cJSON_Delete(res);
  }
}

/* When none of the asked keys has a series of @p kind on the chosen scale
 * but one has another kind, names it and the tool that reads it. Returns
 * 1 after sending the error. */
static int kind_check(pmcp_call *call, const pmcp__trk_sel *s, const char *kind)
{
  const char *other = NULL, *other_key = NULL;
  for (size_t r = 0; r < s->n_runs; r++)
    for (size_t i = 0; i < s->cat[r].n; i++) {
      const pmcp__mx_series *e = &s->cat[r].s[i];
      if (!pmcp__trk_sel_wanted(call, s, e, NULL))
        continue;
      if (!strcmp(e->kind, kind))
        return 0;
      other = e->kind;
      other_key = e->key;
    }
  if (!other)
    return 0; /* nothing logged under these keys: an empty answer */
  pmcp__rs_fail(call, PMCP_TERR_INVALID_ARGUMENT,
                "%s is a %s series, not a %s one: read it with %s",
                other_key, other, kind,
                !strcmp(other, "float")       ? "fetch_float_series"
                : !strcmp(other, "histogram") ? "fetch_histogram_series (or fetch_float_series "
                                                "with histogram_statistic)"
                                              : "fetch_scatter_series");
  return 1;
}

/* ---- fetch_histogram_series --------------------------------------------- */

typedef struct page_acc {
  const pmcp__mx_series *e;
  size_t idx, offset, limit;
  int stop; /* the total is known: stop reading past the page */
  int density;
  size_t max_points; /* scatter */
  /* the page's items as written text: a step range's total is known
   * only once every set was read, and the page's fields come first */
  pmcp_json *w;
  char **txt;
  size_t *len, n, cap;
} page_acc;

/* Keeps the item @p a->w holds. */
static int keep_item(page_acc *a)
{
  size_t len = 0;
  const char *t = pmcp_json_text(a->w, &len);
  if (!t)
    return pmcp_json_error(a->w) ? pmcp_json_error(a->w) : PMCP_EMISUSE;
  if (a->n == a->cap) {
    size_t cap = a->cap ? 2 * a->cap : 16;
    char **tx = realloc(a->txt, cap * sizeof *tx);
    if (!tx)
      return PMCP_ENOMEM;
    a->txt = tx;
    size_t *ln = realloc(a->len, cap * sizeof *ln);
    if (!ln)
      return PMCP_ENOMEM;
    a->len = ln;
    a->cap = cap;
  }
  if (!(a->txt[a->n] = malloc(len)))
    return PMCP_ENOMEM;
  memcpy(a->txt[a->n], t, len);
  a->len[a->n++] = len;
  return 0;
}

static void numbers(pmcp_json *j, const char *key, const cJSON *arr, const double *scale_by)
{
  pmcp_json_key(j, key);
  pmcp_json_array_begin(j);
  const cJSON *x;
  int i = 0;
  cJSON_ArrayForEach(x, arr)
  {
    /* the store writes non-finite numbers as strings */
    const char *t = cJSON_IsString(x) ? x->valuestring : "";
    double v = cJSON_IsNumber(x)             ? x->valuedouble
               : !strcmp(t, "Infinity")      ? INFINITY
               : !strcmp(t, "-Infinity")     ? -INFINITY
                                             : NAN;
    if (scale_by)
      v *= scale_by[i];
    /* A non-finite bin stays in place, so the arrays stay parallel to the
     * edges, spelt "NaN" / "Infinity" as everywhere. */
    pmcp__rs_number(j, v);
    i++;
  }
  pmcp_json_array_end(j);
}

static int add_histogram(const cJSON *set, void *ud)
{
  page_acc *a = ud;
  size_t i = a->idx++;
  if (i >= a->offset + a->limit && a->stop)
    return 1;
  if (i < a->offset || i >= a->offset + a->limit)
    return 0;
  const cJSON *edges = cJSON_GetObjectItemCaseSensitive(set, "edges");
  const cJSON *counts = cJSON_GetObjectItemCaseSensitive(set, "counts");
  pmcp_json *j = a->w;
  pmcp_json_reset(j);
  pmcp__trk_entry_head_w(j, a->e);
  pmcp__trk_knum(j, "step", pmcp__jn(set, "step", 0));
  if (pmcp__jn(set, "time", 0) > 0 && pmcp__jn(set, "time", 0) < 9.2e18) {
    char iso[48];
    pmcp__iso_ms((int64_t)pmcp__jn(set, "time", 0), iso, sizeof iso);
    pmcp__trk_kstr(j, "wall_time", iso);
  }
  numbers(j, "edges", edges, NULL);
  int nb = cJSON_GetArraySize(counts);
  double total = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, counts) if (cJSON_IsNumber(c) && c->valuedouble > 0) total +=
      c->valuedouble;
  double *dens = NULL;
  if (a->density && nb > 0 && cJSON_GetArraySize(edges) == nb + 1 &&
      (dens = malloc((size_t)nb * sizeof *dens))) {
    for (int k = 0; k < nb; k++) {
      double w = cJSON_GetArrayItem(edges, k + 1)->valuedouble -
                 cJSON_GetArrayItem(edges, k)->valuedouble;
      dens[k] = total > 0 && w > 0 ? 1.0 / (total * w) : NAN;
    }
  }
  numbers(j, dens ? "densities" : "counts", counts, dens);
  free(dens);
  pmcp_json_key(j, "stats");
  pmcp_json_object_begin(j);
  pmcp__trk_knum(j, "total", total);
  static const char *const names[] = {"mean", "std", "min", "max", "median"};
  for (size_t k = 0; k < 5 && total > 0; k++) {
    pmcp__mx_hist_stat hs;
    pmcp__mx_hist_stat_parse(names[k], &hs);
    double v = pmcp__mx_hist_value(&hs, edges, counts);
    if (isfinite(v))
      pmcp__trk_knum(j, names[k], v);
  }
  pmcp_json_object_end(j);
  pmcp_json_object_end(j);
  return keep_item(a);
}

static int add_scatter(const cJSON *set, void *ud)
{
  page_acc *a = ud;
  size_t i = a->idx++;
  if (i >= a->offset + a->limit && a->stop)
    return 1;
  if (i < a->offset || i >= a->offset + a->limit)
    return 0;
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(set, "x");
  const cJSON *y = cJSON_GetObjectItemCaseSensitive(set, "y");
  size_t n = (size_t)cJSON_GetArraySize(x);
  pmcp_json *j = a->w;
  pmcp_json_reset(j);
  pmcp__trk_entry_head_w(j, a->e);
  pmcp__trk_knum(j, "step", pmcp__jn(set, "step", 0));
  pmcp__trk_knum(j, "points_total", (double)n);
  /* A set larger than max_points is sampled evenly (every k-th point), so
   * its shape survives; it says so. Non-finite points are left out. */
  size_t keep = n > a->max_points ? a->max_points : n;
  if (keep < n)
    pmcp__trk_kbool(j, "sampled", 1);
  /* Walk the arrays once; pick indices floor(j * n / keep): x, then y. */
  size_t kept = 0;
  for (int pass = 0; pass < 2; pass++) {
    pmcp_json_key(j, pass ? "y" : "x");
    pmcp_json_array_begin(j);
    size_t jj = 0, want = 0, k = 0;
    const cJSON *px = x ? x->child : NULL, *py = y ? y->child : NULL;
    for (; px && py && jj < keep; px = px->next, py = py->next, k++) {
      want = (size_t)((double)jj * (double)n / (double)keep);
      if (k != want)
        continue;
      jj++;
      if (cJSON_IsNumber(px) && cJSON_IsNumber(py) && isfinite(px->valuedouble) &&
          isfinite(py->valuedouble)) {
        pmcp__rs_number(j, pass ? py->valuedouble : px->valuedouble);
        kept += !pass;
      }
    }
    pmcp_json_array_end(j);
  }
  pmcp__trk_knum(j, "count", (double)kept);
  pmcp_json_object_end(j);
  return keep_item(a);
}

static void page_acc_dispose(page_acc *a)
{
  for (size_t i = 0; i < a->n; i++)
    free(a->txt[i]);
  free(a->txt);
  free(a->len);
  pmcp_json_free(a->w);
}

static int fetch_sets(pmcp_call *call, pmcp__tracking *tk, const char *kind)
{
  int64_t lo, hi;
  if (pmcp__trk_step_range(call, &lo, &hi, NULL))
    return 0;
  pmcp__trk_sel s;
  int rc = pmcp__trk_sel_read(call, tk, &s);
  if (rc || kind_check(call, &s, kind)) {
    pmcp__trk_sel_free(&s);
    return rc < 0 ? rc : 0;
  }
  int64_t limit = 10, offset = 0, maxp = 200;
  int density = 0;
  pmcp_arg_int(call, "limit", &limit);
  pmcp_arg_int(call, "offset", &offset);
  pmcp_arg_int(call, "max_points", &maxp);
  pmcp_arg_bool(call, "density", &density);
  /* Without a step range the catalog's set counts give the total, so
   * series wholly before or after the page are not read. */
  int ranged = pmcp_arg_has(call, "step_from") || pmcp_arg_has(call, "step_to");
  page_acc a = {NULL, 0, (size_t)offset, (size_t)limit, !ranged, density, (size_t)maxp,
                NULL, NULL, NULL, 0, 0};
  if (pmcp_json_new(&a.w, 0)) {
    pmcp__trk_sel_free(&s);
    return PMCP_ENOMEM;
  }
  size_t total = 0;
  int hist = !strcmp(kind, "histogram");
  for (size_t r = 0; r < s.n_runs && !rc; r++)
    for (size_t i = 0; i < s.cat[r].n && !rc; i++) {
      const pmcp__mx_series *e = &s.cat[r].s[i];
      if (!pmcp__trk_sel_wanted(call, &s, e, kind) || e->count == 0)
        continue;
      size_t before = total;
      total += (size_t)e->count;
      if (!ranged && (total <= a.offset || before >= a.offset + a.limit))
        continue;
      a.e = e;
      a.idx = ranged ? a.idx : before;
      rc = each_set(tk, e->id, lo, hi, ranged ? MAX_SETS : SIZE_MAX,
                    hist ? add_histogram : add_scatter, &a);
    }
  if (ranged)
    total = a.idx;
  if (rc) {
    page_acc_dispose(&a);
    pmcp__trk_sel_free(&s);
    return rc == PMCP_ENOMEM ? PMCP_ENOMEM
                             : pmcp__rs_fail(call, PMCP_TERR_STORE, "the %s sets cannot be read",
                                             kind);
  }
  pmcp__trk_page p;
  pmcp__trk_page_begin(&p, call, (size_t)offset, total, NULL, NULL);
  pmcp__trk_sel_fields(&p, &s);
  pmcp__trk_list(&p, hist ? "histograms" : "sets");
  for (size_t i = 0; i < a.n; i++)
    pmcp__trk_item_text(&p, a.txt[i], a.len[i]);
  page_acc_dispose(&a);
  pmcp__trk_sel_free(&s);
  return pmcp__trk_page_send(&p);
}

static int fetch_histogram_series(pmcp_call *call, void *ud)
{
  return fetch_sets(call, ud, "histogram");
}

static int fetch_scatter_series(pmcp_call *call, void *ud)
{
  return fetch_sets(call, ud, "scatter");
}

/* ---- fetch_float_series: histograms read as a statistic ------------------ */

typedef struct stat_acc {
  const pmcp__mx_hist_stat *stat;
  int64_t *step;
  double *value;
  size_t n, cap;
} stat_acc;

static int add_stat(const cJSON *set, void *ud)
{
  stat_acc *a = ud;
  double v = pmcp__mx_hist_value(a->stat, cJSON_GetObjectItemCaseSensitive(set, "edges"),
                                 cJSON_GetObjectItemCaseSensitive(set, "counts"));
  if (!isfinite(v))
    return 0; /* an empty histogram has no statistic: left out */
  if (a->n == a->cap) {
    size_t cap = a->cap ? 2 * a->cap : 256;
    int64_t *s = realloc(a->step, cap * sizeof *s);
    if (!s)
      return PMCP_ENOMEM;
    a->step = s;
    double *d = realloc(a->value, cap * sizeof *d);
    if (!d)
      return PMCP_ENOMEM;
    a->value = d;
    a->cap = cap;
  }
  a->step[a->n] = (int64_t)pmcp__jn(set, "step", 0);
  a->value[a->n++] = v;
  return 0;
}

void pmcp__trk_hstat_free(pmcp__trk_hstat *h)
{
  free(h->step);
  free(h->value);
  free(h->min);
  free(h->max);
  free(h->count);
  memset(h, 0, sizeof *h);
}

/* Too many in the range: @p max_points buckets of equal step width over
 * the steps present, as fetch_float_series does for float series. */
static int stat_buckets(const stat_acc *a, size_t max_points, pmcp__trk_hstat *h)
{
  int64_t smin = a->step[0], smax = a->step[0];
  for (size_t i = 1; i < a->n; i++) {
    smin = a->step[i] < smin ? a->step[i] : smin;
    smax = a->step[i] > smax ? a->step[i] : smax;
  }
  double width = ((double)smax - (double)smin + 1) / (double)max_points;
  typedef struct {
    pmcp__fsum sum;
    double min, max;
    uint64_t n;
    int64_t step;
  } bk;
  bk *b = calloc(max_points, sizeof *b);
  h->step = malloc(max_points * sizeof *h->step);
  h->value = malloc(max_points * sizeof *h->value);
  h->min = malloc(max_points * sizeof *h->min);
  h->max = malloc(max_points * sizeof *h->max);
  h->count = malloc(max_points * sizeof *h->count);
  if (!b || !h->step || !h->value || !h->min || !h->max || !h->count) {
    free(b);
    return PMCP_ENOMEM;
  }
  for (size_t i = 0; i < a->n; i++) {
    size_t k = (size_t)(((double)a->step[i] - (double)smin) / width);
    if (k >= max_points)
      k = max_points - 1;
    if (!b[k].n || a->step[i] < b[k].step)
      b[k].step = a->step[i];
    if (!b[k].n || a->value[i] < b[k].min)
      b[k].min = a->value[i];
    if (!b[k].n || a->value[i] > b[k].max)
      b[k].max = a->value[i];
    pmcp__fsum_add(&b[k].sum, a->value[i]);
    b[k].n++;
  }
  h->bucketed = 1;
  h->in_range = a->n;
  for (size_t k = 0; k < max_points; k++) {
    if (!b[k].n)
      continue;
    h->step[h->n] = b[k].step;
    h->value[h->n] = pmcp__fsum_mean(&b[k].sum, (double)b[k].n, b[k].min, b[k].max);
    h->min[h->n] = b[k].min;
    h->max[h->n] = b[k].max;
    h->count[h->n++] = (int64_t)b[k].n;
  }
  free(b);
  return 0;
}

int pmcp__trk_hstat_read(pmcp__tracking *tk, const pmcp__mx_series *e, int ranged, int64_t lo,
                         int64_t hi, size_t max_points, const pmcp__mx_hist_stat *stat,
                         pmcp__trk_hstat *h)
{
  memset(h, 0, sizeof *h);
  stat_acc a = {stat, NULL, NULL, 0, 0};
  int rc = each_set(tk, e->id, lo, hi, MAX_SETS, add_stat, &a);
  if (!rc && ranged && a.n > max_points) {
    rc = stat_buckets(&a, max_points, h);
  } else if (!rc) {
    /* the last max_points, kept in place */
    h->before = a.n > max_points ? a.n - max_points : 0;
    h->n = a.n - h->before;
    if (h->before) {
      memmove(a.step, a.step + h->before, h->n * sizeof *a.step);
      memmove(a.value, a.value + h->before, h->n * sizeof *a.value);
    }
    h->step = a.step;
    h->value = a.value;
    return 0;
  }
  free(a.step);
  free(a.value);
  return rc;
}

int pmcp__trk_hstat_write(pmcp_json *j, const pmcp__trk_hstat *h, const char *stat_name)
{
  pmcp__trk_kstr(j, "statistic", stat_name);
  if (!h->bucketed) {
    if (h->before)
      pmcp__trk_knum(j, "points_before", (double)h->before);
    pmcp__trk_kints(j, "step", h->step, h->n);
    pmcp__trk_knums(j, "value", h->value, h->n);
    return pmcp_json_error(j);
  }
  pmcp__trk_kbool(j, "bucketed", 1);
  pmcp__trk_knum(j, "points_in_range", (double)h->in_range);
  pmcp__trk_kints(j, "step", h->step, h->n);
  pmcp__trk_knums(j, "mean", h->value, h->n);
  pmcp__trk_knums(j, "min", h->min, h->n);
  pmcp__trk_knums(j, "max", h->max, h->n);
  pmcp__trk_kints(j, "count", h->count, h->n);
  return pmcp_json_error(j);
}

/* ---- registration ---------------------------------------------------------- */


#define SET_ARGS                                                                           \
  {"runs", PMCP_T_STRING_ARRAY, 1, "Ids, names or refs.", 1, 1, 1, 50, NULL, NULL},    \
  {"series", PMCP_T_STRING_ARRAY, 1, NULL, 1, 1, 1, 20,                          \
   NULL, NULL},                                                                            \
  {"scale", PMCP_T_STRING, 0, NULL, 0, 0, 0, 0, pmcp__trk_scales,                          \
   "\"STEP\""},                                                                            \
  {"labels", PMCP_T_OBJECT, 0, NULL, 0, 0, 0,          \
   0, NULL, NULL},                                                                         \
  {"step_from", PMCP_T_INTEGER, 0, NULL, 0, 0, 0, 0, NULL, NULL},                           \
  {"step_to", PMCP_T_INTEGER, 0, NULL, 0, 0, 0, 0, NULL, NULL},                            \
  PMCP__TRK_ARG_WORKSPACE, PMCP__TRK_ARG_PROJECT,                                          \
  {"limit", PMCP_T_INTEGER, 0, NULL, 1, 1, 1, 100, NULL, "10"},       \
  PMCP__TRK_ARG_OFFSET

static const pmcp_arg_spec hist_args[] = {
  SET_ARGS,
  {"density", PMCP_T_BOOLEAN, 0, "count / (total x bin width).", 0, 0, 0, 0, NULL, "false"},
};
static const pmcp_arg_spec scatter_args[] = {
  SET_ARGS,
  {"max_points", PMCP_T_INTEGER, 0, "More are sampled evenly.", 1, 1, 1, 5000, NULL, "200"},
};

int pmcp__trk_add_hist(pmcp_server *server, pmcp__tracking *tk)
{
  int rc = pmcp__trk_add_tool(server, tk, "fetch_histogram_series", NULL,
               "Histograms per run, series and step: edges, counts, statistics.",
               hist_args, sizeof hist_args / sizeof hist_args[0], fetch_histogram_series);
  if (!rc)
    rc = pmcp__trk_add_tool(server, tk, "fetch_scatter_series", NULL,
             "Scatter point sets per run, series and step as x/y arrays.",
             scatter_args, sizeof scatter_args / sizeof scatter_args[0],
             fetch_scatter_series);
  return rc;
}
