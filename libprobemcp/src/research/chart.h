/* SPDX-License-Identifier: MIT */
/* Metric charts as PNG images (Cairo), shared by the research `metrics`
 * tool and the tracking fetch tools: one line per run x key drawn from the
 * points the text answer carries, axes with ticks and labels, a legend, a
 * title, an optional log y axis, gaps where the store holds only
 * non-finite values, a smoothed line over a faint raw one, and a faint
 * min..max band for bucketed series. Built only with Cairo
 * (PMCP_HAVE_CAIRO); without it the tools do not offer `render`. */
#ifndef PMCP_RESEARCH_CHART_H
#define PMCP_RESEARCH_CHART_H

#include <stddef.h>
#include <stdint.h>

#include "probemcp/budget.h"
#include "research/research.h"

/* The argument specs the tools add when charts are built in. */
#define PMCP__CHART_ARG_RENDER                                                            \
  {"render", PMCP_T_STRING, 0, "Chart image too (w*h/750 tokens).",  \
   0, 0, 0, 0, pmcp__chart_renders, NULL}

extern const char *const pmcp__chart_renders[];

typedef struct pmcp__chart_line {
  char label[200];
  double *x, *y;       /* n points, x ascending; a NaN y breaks the line */
  double *smooth;      /* NULL, or n values drawn over a faint raw line */
  double *lo, *hi;     /* NULL, or a min..max band (NaN: none there) */
  size_t n;
} pmcp__chart_line;

enum {
  PMCP__CHART_X_NUMBER = 0, /* steps, seconds: numeric ticks */
  PMCP__CHART_X_WALL = 1    /* Unix seconds: clock ticks (UTC) */
};

typedef struct pmcp__chart {
  char title[200];
  char x_label[64], y_label[120];
  int x_kind;
  int log_y;
  pmcp__chart_line *lines;
  size_t n, cap;
} pmcp__chart;

/* The plot area of a rendered chart, in pixels (tests check against it). */
typedef struct pmcp__chart_box {
  double x0, y0, x1, y1;
} pmcp__chart_box;

/* Appends a line of @p n points (arrays allocated, filled by the caller;
 * smooth/lo/hi allocated when asked). NULL on ENOMEM. */
pmcp__chart_line *pmcp__chart_add(pmcp__chart *c, const char *label, size_t n,
                                  int with_smooth, int with_band);
void pmcp__chart_free(pmcp__chart *c);

/* Breaks @p ln (x in steps, or with @p by_time in seconds of wall time
 * minus @p off_ms) wherever the store holds only non-finite values for
 * series @p id over [lo, hi] (steps, or ms of wall time): a NaN point is
 * inserted there. Store reads hold rs->lock. 0 or an error. */
int pmcp__chart_breaks(pmcp__research *rs, int64_t id, int by_time, int64_t lo,
                       int64_t hi, int64_t off_ms, pmcp__chart_line *ln);

/* Renders @p c as a PNG of @p width x @p height into @p out (plot area in
 * @p box when not NULL). Deterministic for a given chart and fonts. */
int pmcp__chart_png(const pmcp__chart *c, int width, int height, pmcp_buf *out,
                    pmcp__chart_box *box);

/* Tokens the smallest chart costs: reserve them before adding items so the
 * text leaves room for at least one chart. */
int pmcp__chart_min_cost(void);

/* Draws @p c at the largest size that fits @p pg after its text and
 * attaches it (pmcp_page_image). When no size fits, the page fails with an
 * error naming the token_budget needed. 0 or an error. */
int pmcp__chart_attach(pmcp_page *pg, const pmcp__chart *c, int more);

/* The legend name of a run: "name (ID)", or the ID when it has no name. */
void pmcp__chart_run_name(pmcp__research *rs, const char *run_ref, char *out, size_t size);

/* A legend entry: the run's name, then @p key (NULL: left out), then the
 * series' labels as k=v. */
void pmcp__chart_label(pmcp__research *rs, const char *run_ref, const char *key,
                       const cJSON *labels, char *out, size_t size);
/* The call's string array @p arg joined with ", " into @p out; returns
 * its length. */
size_t pmcp__chart_keys(pmcp_call *call, const char *arg, char *out, size_t size);


/* Reads `render` (png, or png_log for a log y axis): 1 when a chart is asked for (and *log_y
 * set), 0 when not. */
int pmcp__chart_wanted(pmcp_call *call, int *log_y);

#endif
