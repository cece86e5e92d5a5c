/* SPDX-License-Identifier: MIT */
/* Charts of the tracking fetch tools (`render: "png"`): one line per entry,
 * drawn from the values the entry shows (exact points, or bucket means
 * with a faint min..max band), broken where the store holds only
 * non-finite values. */
#ifdef PMCP_HAVE_CAIRO
#include "tracking/fetch_chart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "research/page.h"

pmcp__trk_chart_src pmcp__trk_chart_src_of(const pmcp__mx_series *e, int64_t lo, int64_t hi)
{
  pmcp__trk_chart_src s;
  s.id = e->id;
  s.lo = lo > e->step_min ? lo : e->step_min;
  s.hi = hi < e->step_max ? hi : e->step_max;
  s.t_lo = e->time_min;
  s.t_hi = e->time_max;
  s.nonfinite = e->nonfinite > 0;
  s.off_ms = 0;
  return s;
}

/* Seconds since the epoch of "YYYY-MM-DDTHH:MM:SSZ" (pmcp__rs_iso): a
 * wall-clock edge is drawn at the whole second the answer shows. */
static double iso_seconds(const char *s)
{
  struct tm tm = {0};
  if (!s || sscanf(s, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                   &tm.tm_min, &tm.tm_sec) != 6)
    return NAN;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return (double)timegm(&tm);
}

/* Edge @p e on the chart's x axis: steps, seconds, or wall-clock seconds. */
static double edge_x(const pmcp__trk_axis *ax, int64_t e)
{
  if (ax->axis == PMCP__TRK_AX_STEP)
    return (double)e;
  if (ax->axis == PMCP__TRK_AX_RELATIVE)
    return (double)e / 1000.0;
  char iso[48];
  pmcp__iso_ms(e, iso, sizeof iso);
  return iso_seconds(iso);
}

void pmcp__trk_chart_begin(pmcp_call *call, int axis, const char *what, pmcp__chart *ch)
{
  int log_y = 0;
  pmcp__chart_wanted(call, &log_y);
  ch->log_y = log_y;
  char keys[160];
  size_t nk = pmcp__chart_keys(call, "series", keys, sizeof keys);
  snprintf(ch->title, sizeof ch->title, "%s - %s", keys, what);
  snprintf(ch->x_label, sizeof ch->x_label, "%s",
           axis == PMCP__TRK_AX_STEP ? "step"
           : axis == PMCP__TRK_AX_RELATIVE ? "seconds since the run's first point"
                                           : "wall clock (UTC)");
  ch->x_kind = axis == PMCP__TRK_AX_WALL ? PMCP__CHART_X_WALL : PMCP__CHART_X_NUMBER;
  snprintf(ch->y_label, sizeof ch->y_label, "%.100s", nk == 1 ? keys : "value");
}

pmcp__chart_line *pmcp__trk_chart_line(pmcp_call *call, pmcp__research *rs, pmcp__chart *ch,
                                       const pmcp__mx_series *e, size_t n, int band)
{
  char label[200];
  pmcp__chart_label(rs, e->run + 4, pmcp_arg_count(call, "series") > 1 ? e->key : NULL, e->labels,
                    label, sizeof label);
  return pmcp__chart_add(ch, label, n, 0, band);
}

pmcp__chart_line *pmcp__trk_chart_buckets(pmcp_call *call, pmcp__research *rs, pmcp__chart *ch,
                                          const pmcp__mx_series *e, const pmcp__trk_bucket *bk,
                                          const pmcp__trk_axis *ax)
{
  size_t n = 0;
  for (size_t b = 0; b < ax->n; b++)
    n += bk[b].b.count > 0;
  pmcp__chart_line *ln = pmcp__trk_chart_line(call, rs, ch, e, n, 1);
  for (size_t b = 0, k = 0; ln && b < ax->n; b++) {
    const pmcp_bucket *t = &bk[b].b;
    uint64_t finite = t->count - t->nonfinite;
    if (!t->count)
      continue;
    ln->x[k] = edge_x(ax, pmcp__trk_axis_edge(ax, b));
    /* a bucket of non-finite points only breaks the line */
    ln->y[k] = finite ? pmcp__fsum_mean(&bk[b].sum, (double)finite, t->min, t->max) : NAN;
    ln->lo[k] = finite ? t->min : NAN;
    ln->hi[k] = finite ? t->max : NAN;
    k++;
  }
  return ln;
}

int pmcp__trk_chart_gaps(pmcp__research *rs, const pmcp__trk_chart_src *s, int axis,
                         pmcp__chart_line *ln)
{
  if (!s->nonfinite)
    return 0;
  return axis == PMCP__TRK_AX_STEP
             ? pmcp__chart_breaks(rs, s->id, 0, s->lo, s->hi, 0, ln)
             : pmcp__chart_breaks(rs, s->id, 1, s->t_lo, s->t_hi, s->off_ms, ln);
}
#endif
