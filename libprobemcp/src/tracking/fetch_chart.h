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

/* The source of an entry for @p e over steps [lo, hi]. */
pmcp__trk_chart_src pmcp__trk_chart_src_of(const pmcp__mx_series *e, int64_t lo, int64_t hi);

/* Titles @p ch (zeroed by the caller) with the call's series and @p what,
 * and labels its axes for @p axis (PMCP__TRK_AX_*). */
void pmcp__trk_chart_begin(pmcp_call *call, int axis, const char *what, pmcp__chart *ch);

/* Adds the line of entry @p e: @p n points (x, y, and with @p band
 * lo/hi: min..max) the caller fills. NULL when out of memory. */
pmcp__chart_line *pmcp__trk_chart_line(pmcp_call *call, pmcp__research *rs, pmcp__chart *ch,
                                       const pmcp__mx_series *e, size_t n, int band);

/* Adds the line of a bucketed entry: bucket means at each bucket's first
 * edge, its min..max as the band (buckets without points are left out). */
pmcp__chart_line *pmcp__trk_chart_buckets(pmcp_call *call, pmcp__research *rs, pmcp__chart *ch,
                                          const pmcp__mx_series *e, const pmcp__trk_bucket *bk,
                                          const pmcp__trk_axis *ax);

/* Breaks @p ln where the store holds only non-finite values of @p s's
 * series (when it holds any), on @p axis. 0 or an error. */
int pmcp__trk_chart_gaps(pmcp__research *rs, const pmcp__trk_chart_src *s, int axis,
                         pmcp__chart_line *ln);

#endif
