/* SPDX-License-Identifier: MIT */
/* Internal plumbing of the tracking toolset: its context (the research
 * toolset's store context plus the default workspace/project and role),
 * project resolution, run rows for the filter language, and offset pages
 * cut to the token budget. */
#ifndef PMCP_TRACKING_TRACKING_H
#define PMCP_TRACKING_TRACKING_H

#include <cjson/cJSON.h>

#include "probemcp/json.h"

#include "filter/filter.h"
#include "probemcp/tracking.h"
#include "research/metrics.h"
#include "research/research.h"
#include "util/fsum.h"
#include "util/isotime.h"

typedef struct pmcp__tracking {
  pmcp__research *rs; /* store, tenant, lock; one reference held */
  char *workspace, *project, *role;
  int refs;
  /* The host's list of the caller's workspaces (options v2), or NULL. */
  pmcp_scope_list_fn scope_list;
  /* In a call's view (see pmcp__trk_add_tool): the host's answer for this
   * call, or NULL without a scope hook. */
  const pmcp_call_scope *scope;
} pmcp__tracking;

void *pmcp__trk_retain(pmcp__tracking *tk);
void pmcp__trk_release(void *ud);

int pmcp__trk_add_discovery(pmcp_server *server, pmcp__tracking *tk);
int pmcp__trk_add_runs(pmcp_server *server, pmcp__tracking *tk);
int pmcp__trk_add_fetch(pmcp_server *server, pmcp__tracking *tk);
int pmcp__trk_add_docs(pmcp_server *server, pmcp__tracking *tk);

/* Registers one read-only, budgeted, possibly blocking tracking tool
 * holding a reference to @p tk (title may be NULL). */
int pmcp__trk_add_tool(pmcp_server *server, pmcp__tracking *tk, const char *name,
                       const char *title, const char *desc, const pmcp_arg_spec *args,
                       size_t n_args, pmcp_tool_fn fn);
int pmcp__trk_add_hist(pmcp_server *server, pmcp__tracking *tk);
int pmcp__trk_add_rl(pmcp_server *server, pmcp__tracking *tk);

/* Common argument specs. */
/* Gives @p tool's `filter` and `sort` the filter language's structural
 * schema: condition forms, operators, functions. */
int pmcp__trk_filter_schemas(pmcp_server *server, const char *tool);

/* The arguments most tools share, described as briefly as their names
 * allow: every tool pays for them in tools/list. */
#define PMCP__TRK_ARG_WORKSPACE {"workspace", PMCP_T_STRING, 0, NULL, 0, 0, 0, 0, NULL, NULL}
#define PMCP__TRK_ARG_PROJECT {"project", PMCP_T_STRING, 0, NULL, 0, 0, 0, 0, NULL, NULL}
/* Their length, checked for every tool in one place (tracking.c) rather
 * than stated in each schema. */
#define PMCP__TRK_NAME_MAX 200
#define PMCP__TRK_ARG_LIMIT(def) {"limit", PMCP_T_INTEGER, 0, NULL, 1, 1, 1, 100, NULL, def}
/* offset: a previous answer's next_offset, as token_budget says */
/* offset's upper bound is checked once for every tool (trk_tool_call), not
 * written into each tool's schema: PMCP__TRK_OFFSET_MAX. */
#define PMCP__TRK_OFFSET_MAX 1000000
#define PMCP__TRK_ARG_OFFSET {"offset", PMCP_T_INTEGER, 0, NULL, 1, 0, 0, 0, NULL, NULL}

/* The call's step range: step_from / step_to, open ends otherwise;
 * *ranged (may be NULL) says whether either was given. Returns 1 after
 * sending an error (step_from after step_to), else 0. */
int pmcp__trk_step_range(pmcp_call *call, int64_t *lo, int64_t *hi, int *ranged);

/* Axes of bucketed series. */
enum { PMCP__TRK_AX_STEP, PMCP__TRK_AX_RELATIVE, PMCP__TRK_AX_WALL };
/* Buckets shared by every entry of one call (buckets.c): @c n buckets of
 * @c width over [lo, hi] (steps, or milliseconds: wall clock, or since
 * each run's first point). Bucket i holds lo + i * width up to the next
 * edge; the last edge is hi + 1. */
typedef struct pmcp__trk_axis {
  int axis;
  int64_t lo, hi, width;
  size_t n;
} pmcp__trk_axis;
/* The fewest equal buckets, at most @p max_buckets, covering [lo, hi]
 * (none when lo > hi). */
void pmcp__trk_axis_make(pmcp__trk_axis *ax, int axis, int64_t lo, int64_t hi,
                         size_t max_buckets);
/* Edge @p i (0..n) of the axis. */
int64_t pmcp__trk_axis_edge(const pmcp__trk_axis *ax, size_t i);
/* A curve bucket: b.sum is not used, sum is the finite values' without
 * overflow on the way (values near DBL_MAX keep a finite mean). */
typedef struct pmcp__trk_bucket {
  pmcp_bucket b;
  pmcp__fsum sum;
} pmcp__trk_bucket;

/* Reads the points of series @p series with steps in [step_from, step_to]
 * into @p bk (ax->n buckets, zeroed here), exactly: count (every point),
 * nonfinite, and sum/min/max over the finite ones. Time axes place a
 * point at its time minus @p off; points without a time are counted in
 * *no_time (may be NULL). 0 or a store error. */
int pmcp__trk_bucket_scan(pmcp__tracking *tk, int64_t series, const pmcp__trk_axis *ax,
                          int64_t off, int64_t step_from, int64_t step_to,
                          pmcp__trk_bucket *bk, uint64_t *no_time);
/* The shared edges as the fields of page @p p, once: "bucket_edges"
 * (n + 1 steps, seconds since the start, or ISO times) and the width.
 * The buckets as parallel members of the object open in @p j: under
 * @p x_name each bucket's first edge, then mean, min, max over its
 * finite points and count (finite points); with any non-finite point a
 * parallel "nonfinite" array. Buckets without points are left out; one
 * holding only non-finite points has count 0 and null statistics. Both
 * return the first error or 0. */
struct pmcp__trk_page;
int pmcp__trk_edges_fields(struct pmcp__trk_page *p, const pmcp__trk_axis *ax);
int pmcp__trk_buckets_w(pmcp_json *j, const char *x_name, const pmcp__trk_bucket *bk,
                        const pmcp__trk_axis *ax);

/* Resolves the call's project (argument, then default, then the tenant's
 * only project) into its full store record (*out, caller deletes).
 * Returns 0, or 1 after sending an error naming the missing project. */
int pmcp__trk_project(pmcp_call *call, pmcp__tracking *tk, cJSON **out);

/* Resolves a run argument, as an agent has it (the id, the ref run:ID
 * browse gives, the run's name, an MLflow run uuid), into "run:ID" in
 * @p out. Returns 0, or 1 after sending an error: not found (naming
 * list_runs), a name several runs share (naming them), a store error. */
int pmcp__trk_run_ref(pmcp_call *call, pmcp__tracking *tk, const char *arg, char *out,
                      size_t outlen);

/* Reads every item of a store listing (paging through it), at most @p max.
 * Returns 0 with *out an array, or 1 after sending an error. */
int pmcp__trk_list_all(pmcp_call *call, pmcp__tracking *tk, const char *kind,
                       const char *parent, size_t max, cJSON **out);

/* ---- answers through the JSON writer (out.c) ----------------------------- */

/* Numbers are written with pmcp__rs_number (research/page.h), values
 * read from the store with pmcp__vw_value (research/views/views.h). */
/* A member: key, then the value. */
int pmcp__trk_kstr(pmcp_json *j, const char *key, const char *s);
int pmcp__trk_knum(pmcp_json *j, const char *key, double v);
int pmcp__trk_kbool(pmcp_json *j, const char *key, int v);
int pmcp__trk_kvalue(pmcp_json *j, const char *key, const cJSON *v);
/* A member holding an array of @p n numbers. */
int pmcp__trk_knums(pmcp_json *j, const char *key, const double *v, size_t n);
int pmcp__trk_kints(pmcp_json *j, const char *key, const int64_t *v, size_t n);
/* Sends @p j's one object (the whole answer; it must fit, else the error
 * names min_token_budget). */
int pmcp__trk_send_object(pmcp_call *call, pmcp__tracking *tk, pmcp_json *j);

/* An offset page written item by item: begin (the listing's @p total,
 * the page starting at @p offset; @p hint NULL: the default; @p chart
 * (NULL: none): a chart whose lines are the page's items from its first,
 * one added with each item, drawn as the page's image at the largest
 * size that fits after the text), the tool's own fields (pmcp__trk_field()
 * then pmcp__trk_field_end(), or _str / _value), pmcp__trk_list()
 * (total_count, offset, then the list @p name), items (pmcp__trk_item()
 * then pmcp__trk_item_end(): NULL once the budget filled the page, so
 * items past it are never built), then pmcp__trk_page_send(), which sends
 * the answer, or the error a failed step left, and frees the page. The
 * first error sticks; a field over the budget answers that the
 * listing's envelope does not fit. */
typedef struct pmcp__trk_page {
  pmcp_call *call;
  pmcp_page *pg;
  pmcp_json *f; /* a field's value being written */
  size_t offset, total;
  const struct pmcp__chart *chart;
  int rc;   /* the first error */
  int full; /* an item was refused: the page is full */
} pmcp__trk_page;
/* The call's `offset` and `limit` (50 when absent). */
void pmcp__trk_window_args(pmcp_call *call, size_t *offset, size_t *limit);
int pmcp__trk_page_begin(pmcp__trk_page *p, pmcp_call *call, size_t offset, size_t total,
                         const char *hint, const struct pmcp__chart *chart);
pmcp_json *pmcp__trk_field(pmcp__trk_page *p);
int pmcp__trk_field_end(pmcp__trk_page *p, const char *key);
int pmcp__trk_field_str(pmcp__trk_page *p, const char *key, const char *s);
int pmcp__trk_field_num(pmcp__trk_page *p, const char *key, double v);
int pmcp__trk_field_value(pmcp__trk_page *p, const char *key, const cJSON *v);
int pmcp__trk_list(pmcp__trk_page *p, const char *name);
pmcp_json *pmcp__trk_item(pmcp__trk_page *p);
int pmcp__trk_item_end(pmcp__trk_page *p);
/* An item written already (one JSON value's text), as pmcp__trk_item_end. */
int pmcp__trk_item_text(pmcp__trk_page *p, const char *txt, size_t len);
int pmcp__trk_page_send(pmcp__trk_page *p);
/* Frees the page unsent (the tool answers with an error of its own). */
void pmcp__trk_page_abort(pmcp__trk_page *p);
/* A page of @p n rows: the call's window of them, row @p i written by
 * @p row(j, i, ud) as one item; @p fields (NULL: none) writes the fields
 * before the list. */
int pmcp__trk_send_rows(pmcp_call *call, size_t n, const char *name,
                        int (*fields)(pmcp__trk_page *p, void *ud),
                        int (*row)(pmcp_json *j, size_t i, void *ud), void *ud);

/* True when every label of @p want (an object of strings) has the same
 * value in @p have. */
int pmcp__trk_labels_match(const cJSON *have, const cJSON *want);

/* A run as the filter language sees it: a flat object of attribute paths
 * (config/..., sys/name, sys/id, sys/state, sys/tags, sys/creation_time,
 * sys/experiment, ...) and, read on first use, the run's series. */
typedef struct pmcp__trk_run {
  pmcp__tracking *tk;
  cJSON *attrs;   /* path -> value */
  cJSON *types;   /* path -> the store's type (string, int, float, ...) */
  cJSON *series;  /* the store's series list items, or NULL until read */
  char id[160];
  int series_err;
} pmcp__trk_run;

/* Fills @p r from a store run list item; 0 or a store error. */
int pmcp__trk_run_load(pmcp__tracking *tk, const cJSON *item, pmcp__trk_run *r,
                       char *err, size_t errlen);
/* Adds the run's stored attributes that @p r does not hold yet (a run
 * listing's values take precedence); 0 or a store error. */
int pmcp__trk_run_attrs(pmcp__tracking *tk, pmcp__trk_run *r, char *err, size_t errlen);
void pmcp__trk_run_dispose(pmcp__trk_run *r);
/* An attribute value of the store's listing as the toolset shows it (a
 * datetime's epoch milliseconds as ISO 8601 UTC text); a new item. */
cJSON *pmcp__trk_attr_value(const char *type, const cJSON *v);
/* The row callbacks over a pmcp__trk_run. */
pmcp__filter_row pmcp__trk_row(pmcp__trk_run *r);
/* The store's series item a (key, scale, labels) names in @p r, or NULL. */
const cJSON *pmcp__trk_find_series(pmcp__trk_run *r, const char *key, const char *scale,
                                   const cJSON *labels);
/* list_runs over the store's run table when the store cannot answer
 * the filter and sort whole (pmcp__trk_run_page): the project's runs
 * newest first, a chunk at a time (narrowed in SQL where it can), each
 * checked with @p f (the parsed @p filter) and kept as an id and a sort
 * key only, so memory does not grow with the project's runs but with its
 * matches. *total runs match, and *out holds the rows of page
 * [offset, offset + limit) in order, as pmcp__trk_run_page's. Returns 0,
 * 1 after sending an error, PMCP_EUNSUPPORTED when the store has no run
 * table (read run by run), or a negative code. */
int pmcp__trk_run_scan(pmcp_call *call, pmcp__tracking *tk, const char *project,
                       const cJSON *filter, const pmcp__filter *f, const pmcp__sort *sort,
                       size_t offset, size_t limit, pmcp__trk_run **out, size_t *n_out,
                       size_t *total);

/* list_runs answered whole by the store (pmcp__store_run_page): *total
 * runs match @p filter (*estimated set: at least that many; the store
 * stopped counting past the page), and *out holds rows (as pmcp__trk_run_scan's) of
 * page [offset, offset + limit) in order. Returns 0, 1 after sending an
 * error, PMCP_EUNSUPPORTED when the store cannot answer this filter and
 * sort exactly (take pmcp__trk_run_scan's), or a negative
 * code. */
int pmcp__trk_run_page(pmcp_call *call, pmcp__tracking *tk, const char *project,
                       const cJSON *filter, const pmcp__sort *sort, size_t offset,
                       size_t limit, pmcp__trk_run **out, size_t *n_out, size_t *total,
                       int *estimated);

/* A stable merge sort with a context; @p tmp has room for @p n elements. */
void pmcp__trk_msort(void *base, size_t n, size_t size, void *tmp,
                     int (*cmp)(const void *a, const void *b, const void *ctx),
                     const void *ctx);

/* The tools' scale names (STEP, ENVIRONMENT_STEP, EPISODE; NULL-ended):
 * the enum_values of every `scale` argument. The RL tools take the tail
 * from ENVIRONMENT_STEP (PMCP__TRK_RL_SCALES), so one index maps both to
 * the store's names. */
extern const char *const pmcp__trk_scales[];
#define PMCP__TRK_RL_FIRST 1
#define PMCP__TRK_RL_SCALES (pmcp__trk_scales + PMCP__TRK_RL_FIRST)
/* The store name of the call's `scale` argument (or its default), for a
 * tool whose enum_values are pmcp__trk_scales + @p first; NULL when the
 * argument is absent without a default. */
const char *pmcp__trk_scale_arg(pmcp_call *call, size_t first);
/* Maps a scale written in JSON (a filter's, a sort's) to the store's
 * name: the tools' names or the store's own lower-case ones (step,
 * env_step, episode); NULL when unknown. */
const char *pmcp__trk_scale(const char *seed_scale);
/* The tools' name of a store scale. */
const char *pmcp__trk_scale_name(const char *store_scale);

/* ---- the fetch tools' selection (fetch.c) ------------------------------ */

/* The runs, scale and labels a fetch tool reads: `runs` (each run's series
 * catalog), `scale`, `labels`, and `project` / `workspace` when given. */
typedef struct pmcp__trk_sel {
  pmcp__mx_catalog *cat; /* one per run */
  size_t n_runs;
  const char *scale;     /* store name */
  cJSON *labels;         /* wanted labels or NULL */
  const char **missing;  /* asked `series` keys no run has (the call's) */
  size_t n_missing;
} pmcp__trk_sel;

/* Reads the selection. `series` keys that none of the runs has are
 * refused when no asked key is in any run, else noted (missing). A
 * `series` key that has no series on the chosen
 * scale in any run but is logged on an RL scale is refused when `scale`
 * was not given (RL series always need their scale). Returns 0, or 1
 * after sending an error (a missing run or project is named), or a
 * negative code. Free with pmcp__trk_sel_free() either way. */
int pmcp__trk_sel_read(pmcp_call *call, pmcp__tracking *tk, pmcp__trk_sel *s);
void pmcp__trk_sel_free(pmcp__trk_sel *s);
/* True when catalog entry @p e is one of the asked series (of value kind
 * @p kind: "float", "histogram", "scatter"; NULL: any). */
int pmcp__trk_sel_wanted(pmcp_call *call, const pmcp__trk_sel *s, const pmcp__mx_series *e,
                         const char *kind);
/* {"run", "series", "labels"?} of an entry written as an open object (the
 * caller adds members and ends it); the writer's error or 0. */
int pmcp__trk_entry_head_w(pmcp_json *j, const pmcp__mx_series *e);
/* The selection's field before a page's list: "missing_series" when some
 * asked keys are in none of the runs. */
int pmcp__trk_sel_fields(pmcp__trk_page *p, const pmcp__trk_sel *s);

/* fetch_float_series' histogram statistic (hist.c): the statistic of
 * each histogram of a series with steps in [lo, hi], in step order:
 * without a range the last max_points (before: how many came earlier);
 * with one holding more than max_points (bucketed), max_points buckets
 * of equal step width: each one's first step, mean, min, max and count. */
typedef struct pmcp__trk_hstat {
  int bucketed;
  size_t n, before, in_range;
  int64_t *step;
  double *value;     /* the statistic; bucketed: the means */
  double *min, *max; /* bucketed only */
  int64_t *count;    /* bucketed only */
} pmcp__trk_hstat;
/* Reads @p h (zeroed here; free with pmcp__trk_hstat_free either way);
 * @p ranged 0: no step range. Returns 0 or a negative code. */
int pmcp__trk_hstat_read(pmcp__tracking *tk, const pmcp__mx_series *e, int ranged, int64_t lo,
                         int64_t hi, size_t max_points, const pmcp__mx_hist_stat *stat,
                         pmcp__trk_hstat *h);
/* Writes @p h as members of the open object @p j: "statistic", then
 * "points_before"? and parallel "step"/"value", or bucketed: true,
 * points_in_range, step/mean/min/max/count. The writer's error or 0. */
int pmcp__trk_hstat_write(pmcp_json *j, const pmcp__trk_hstat *h, const char *stat_name);
void pmcp__trk_hstat_free(pmcp__trk_hstat *h);

#endif
