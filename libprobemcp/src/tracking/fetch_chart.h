/* SPDX-License-Identifier: MIT */
/* Charts of the tracking fetch tools (fetch_chart.c), with Cairo only. */
#ifndef PMCP_TRACKING_FETCH_CHART_H
#define PMCP_TRACKING_FETCH_CHART_H

#include "research/chart.h"
#include "research/metrics.h"
#include "tracking/tracking.h"

/* Where one entry's series is, for its gaps. */
typedef struct pmcp__trk_chart_src {
  int64_t id, lo, hi;   /* steps drawn */
  int64_t t_lo, t_hi;   /* wall time drawn (ms) */
  int64_t off_ms;       /* relative time: the run's first point */
  int nonfinite;        /* the series holds non-finite values */
} pmcp__trk_chart_src;

/* Appends the source of the entry just added for @p e over steps [lo, hi]. */
int pmcp__trk_chart_note(pmcp__trk_chart_src **src, size_t *n, size_t *cap,
                         const pmcp__mx_series *e, int64_t lo, int64_t hi);

/* One chart line per entry of @p all (parallel to @p src), on @p axis
 * (PMCP__TRK_AX_*), titled with the call's series and @p what. */
int pmcp__trk_chart_build(pmcp_call *call, pmcp__research *rs, const cJSON *all,
                          const pmcp__trk_chart_src *src, size_t n_src, int axis,
                          const char *what, pmcp__chart *ch);

#endif
