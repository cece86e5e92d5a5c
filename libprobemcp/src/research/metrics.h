/* SPDX-License-Identifier: MIT */
/* The `metrics` tool: one run's numbers at the grain asked for, or several
 * runs' curves side by side. Modes (each validated against its own
 * arguments by the engine): grouped, coordinates, points, series,
 * summaries. This header is shared by metrics*.c only. */
#ifndef PMCP_RESEARCH_METRICS_H
#define PMCP_RESEARCH_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "probemcp/budget.h"
#include "probemcp/json.h"
#include "research/page.h" /* pmcp__rs_page, pmcp__rs_send */
#include "research/research.h"

/* One series of the run's catalog (pmcp_store_series_list()). */
typedef struct pmcp__mx_series {
  int64_t id;
  char run[272];        /* "run:ID" */
  const char *key;      /* borrowed from the catalog JSON */
  const cJSON *labels;  /* object, borrowed */
  const char *kind;     /* float | histogram | scatter */
  const char *scale;    /* step | env_step | episode */
  int64_t count, nonfinite, step_min, step_max, time_min, time_max;
  double first, last, min, max, mean;
  int has_stats;
} pmcp__mx_series;

/* A run's catalog, parsed. */
typedef struct pmcp__mx_catalog {
  cJSON *json;
  pmcp__mx_series *s;
  size_t n;
} pmcp__mx_catalog;

/* Reads the catalog of @p run_arg (run:ID or ID). On failure sends the
 * error result and returns 1; 0 on success; <0 on a protocol failure. */
int pmcp__mx_catalog_read(pmcp_call *call, pmcp__research *rs,
                          const char *run_arg, pmcp__mx_catalog *out);
void pmcp__mx_catalog_free(pmcp__mx_catalog *c);

/* `where`: the shared filter conditions on labels (metrics_common.c). */
typedef struct pmcp__mx_where pmcp__mx_where;
/* Parses the call's `where` (NULL when absent). Returns 0; 1 when an
 * error result naming the problem was sent; <0 on a protocol failure. */
int pmcp__mx_where_from_call(pmcp_call *call, pmcp__mx_where **out);
void pmcp__mx_where_free(pmcp__mx_where *w);
/* 1 when @p labels satisfy @p w (NULL: always). */
int pmcp__mx_where_match(const pmcp__mx_where *w, const cJSON *labels);

/* Which series of a catalog a call reads. */
typedef struct pmcp__mx_pick {
  const char *key;             /* NULL: any */
  const char *kind;            /* NULL: any */
  const pmcp__mx_where *where; /* NULL: all */
  const char *scale;           /* NULL: "step" (RL series need it named) */
  int any_scale;               /* 1: no scale test (points) */
} pmcp__mx_pick;
/* Why nothing was picked. */
typedef struct pmcp__mx_misses {
  int key_seen; /* the key exists (another kind, labels or scale) */
  size_t rl;    /* series left out for an RL scale not asked for */
} pmcp__mx_misses;
/* Writes the indices of the picked series into @p idx (room for c->n);
 * returns how many. */
size_t pmcp__mx_select(const pmcp__mx_catalog *c, const pmcp__mx_pick *p, size_t *idx,
                       pmcp__mx_misses *why);
/* Sends the error result for an empty pick (scale required, no such key,
 * nothing matches); returns what pmcp__rs_fail() returns. */
int pmcp__mx_select_fail(pmcp_call *call, const pmcp__mx_catalog *c, const char *run,
                         const pmcp__mx_pick *p, const pmcp__mx_misses *why);

/* Begins a series item: {"run"?, "key", "labels"?, "kind"? (unless float),
 * "scale"? (unless step) ... left open. */
void pmcp__mx_head(pmcp_json *j, const pmcp__mx_series *s, int with_run);

/* The page position as a row index (0 on a first page). */
size_t pmcp__mx_pos(pmcp_page *pg);

/* Writes "labels":{...} members of @p labels into @p j. */
void pmcp__mx_labels(pmcp_json *j, const cJSON *labels);

/* Downsampling (metrics_series.c). Of @p n finite points sorted by (step,
 * value), keeps exactly min(n, @p m) (m >= 4): all of them when n <= m;
 * otherwise the first and the last, and over the inner points split by
 * rank into (m - 1) / 2 groups of at least two points, each group's
 * minimum and maximum (when m is odd, the one inner point that bends the
 * line least is dropped, never the global minimum or maximum). Ranks, not
 * step widths, so gaps and duplicate steps never leave a bucket empty.
 * Writes ascending indices into @p idx (room for m + 1), returns how many. */
size_t pmcp__mx_downsample_points(const int64_t *step, const double *value,
                                  size_t n, size_t m, size_t *idx);

/* A point of a `series` row: its step, value and the EMA there (NaN when
 * it was not smoothed over the raw points). */
typedef struct pmcp__mx_pt {
  int64_t step;
  double v;
  double sm;
} pmcp__mx_pt;
/* qsort order of points: by step, then by value. */
int pmcp__mx_pt_cmp(const void *a, const void *b);

/* Candidate points of a long range (metrics_cands.c): finite, real
 * points; after pmcp__mx_cands_finish() sorted by (step, value), distinct,
 * and holding the range's first and last finite point. */
typedef struct pmcp__mx_cands {
  pmcp__mx_pt *p;
  size_t n, cap;
  uint64_t total, nonfinite;  /* points in range read */
  int64_t unit_lo, unit_hi;   /* span of the summaries taken with finite values */
} pmcp__mx_cands;
void pmcp__mx_cands_reset(pmcp__mx_cands *c);
/* 1 when the store has a scan of its own (block and segment summaries):
 * pmcp__mx_cands_scan() reads a long range cheaply; else use buckets. */
int pmcp__mx_cands_scannable(const pmcp__research *rs);
/* Resets @p c and reads lo..hi of @p series: summaries of at most @p unit
 * points give four points each, decoded points four per @p unit. */
int pmcp__mx_cands_scan(pmcp__research *rs, int64_t series, int64_t lo, int64_t hi,
                        uint64_t unit, pmcp__mx_cands *c);
/* Adds a bucket's (or summary's) count and its first, minimum, maximum and
 * last finite points. */
int pmcp__mx_cands_bucket(pmcp__mx_cands *c, const pmcp_bucket *b);
/* Sorts and dedups, then makes the first and last finite points exact by
 * reading the steps at the ends that summaries left open. */
int pmcp__mx_cands_finish(pmcp__research *rs, int64_t series, pmcp__mx_cands *c);

/* TensorBoard's debiased exponential moving average with weight @p w in
 * [0, 1), in place over @p n values. */
void pmcp__mx_smooth(double *v, size_t n, double w);

/* Mode handlers. */
int pmcp__mx_coordinates(pmcp_call *call, pmcp__research *rs);
int pmcp__mx_points(pmcp_call *call, pmcp__research *rs);
int pmcp__mx_series_mode(pmcp_call *call, pmcp__research *rs);
int pmcp__mx_summaries(pmcp_call *call, pmcp__research *rs);
int pmcp__mx_grouped(pmcp_call *call, pmcp__research *rs);

/* One statistic of a histogram (metrics_points.c), shared with the
 * tracking toolset's histogram reads. */
typedef struct pmcp__mx_hist_stat {
  int kind; /* 0 none, 1 mean, 2 std, 3 min, 4 max, 5 quantile */
  double q;
} pmcp__mx_hist_stat;
/* "mean", "std", "min", "max", "median" or "pNN" (0 <= NN <= 100).
 * Returns 0, or -1 for anything else. */
int pmcp__mx_hist_stat_parse(const char *s, pmcp__mx_hist_stat *out);
/* The statistic of counts over ascending edges: values at bin midpoints,
 * quantiles interpolated inside their bin; NaN for an empty histogram. */
double pmcp__mx_hist_value(const pmcp__mx_hist_stat *hs, const cJSON *edges,
                           const cJSON *counts);

/* Reductions across series (metrics_grouped.c): the kind of "avg", "min",
 * "max", "sum", "std" (population) or "median", 0 for anything else; and
 * the reduction of @p n > 0 values (@p v may be reordered). */
int pmcp__mx_reduce_kind(const char *name);
double pmcp__mx_reduce(double *v, size_t n, int how);

/* Scale names: "step", "env_step", "episode". */
int pmcp__mx_scale_ok(const char *s);

#endif
