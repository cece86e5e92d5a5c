/* SPDX-License-Identifier: MIT */
/* Charts of the tracking fetch tools (`render: "png"`): one line per entry,
 * drawn from the entry's own arrays (exact points, or bucket means with a
 * faint min..max band), broken where the store holds only non-finite
 * values. */
#ifdef PMCP_HAVE_CAIRO
#include "tracking/fetch_chart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "research/page.h"

int pmcp__trk_chart_note(pmcp__trk_chart_src **src, size_t *n, size_t *cap,
                         const pmcp__mx_series *e, int64_t lo, int64_t hi)
{
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 16;
    pmcp__trk_chart_src *s = realloc(*src, c * sizeof *s);
    if (!s)
      return PMCP_ENOMEM;
    *src = s;
    *cap = c;
  }
  pmcp__trk_chart_src *s = &(*src)[(*n)++];
  s->id = e->id;
  s->lo = lo > e->step_min ? lo : e->step_min;
  s->hi = hi < e->step_max ? hi : e->step_max;
  s->t_lo = e->time_min;
  s->t_hi = e->time_max;
  s->nonfinite = e->nonfinite > 0;
  s->off_ms = 0;
  return 0;
}

/* Seconds since the epoch of "YYYY-MM-DDTHH:MM:SSZ" (pmcp__rs_iso). */
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

static double num_at(const cJSON *a, size_t i)
{
  const cJSON *v = cJSON_GetArrayItem(a, (int)i);
  if (cJSON_IsNumber(v))
    return v->valuedouble;
  if (cJSON_IsString(v))
    return iso_seconds(v->valuestring);
  return NAN;
}

int pmcp__trk_chart_build(pmcp_call *call, pmcp__research *rs, const cJSON *all,
                          const pmcp__trk_chart_src *src, size_t n_src, int axis,
                          const char *what, pmcp__chart *ch)
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
  const char *x_name = axis == PMCP__TRK_AX_STEP ? "step"
                       : axis == PMCP__TRK_AX_RELATIVE ? "relative_time_s" : "wall_time";
  size_t i = 0;
  for (const cJSON *o = all->child; o; o = o->next, i++) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, x_name);
    const cJSON *mean = cJSON_GetObjectItemCaseSensitive(o, "mean");
    const cJSON *y = mean ? mean : cJSON_GetObjectItemCaseSensitive(o, "value");
    size_t n = cJSON_IsArray(x) && cJSON_IsArray(y) ? (size_t)cJSON_GetArraySize(x) : 0;
    if (cJSON_IsArray(y) && (size_t)cJSON_GetArraySize(y) < n)
      n = (size_t)cJSON_GetArraySize(y);
    char label[200];
    pmcp__chart_label(rs, pmcp__js(o, "run"), nk > 1 ? pmcp__js(o, "series") : NULL,
                      cJSON_GetObjectItemCaseSensitive(o, "labels"), label, sizeof label);
    pmcp__chart_line *ln = pmcp__chart_add(ch, label, n, 0, mean != NULL);
    if (!ln)
      return PMCP_ENOMEM;
    const cJSON *mn = cJSON_GetObjectItemCaseSensitive(o, "min");
    const cJSON *mx = cJSON_GetObjectItemCaseSensitive(o, "max");
    for (size_t k = 0; k < n; k++) {
      ln->x[k] = num_at(x, k);
      ln->y[k] = num_at(y, k);
      if (ln->lo) {
        ln->lo[k] = num_at(mn, k);
        ln->hi[k] = num_at(mx, k);
      }
    }
    if (i < n_src && src[i].nonfinite) {
      const pmcp__trk_chart_src *s = &src[i];
      int rc = axis == PMCP__TRK_AX_STEP
                 ? pmcp__chart_breaks(rs, s->id, 0, s->lo, s->hi, 0, ln)
                 : pmcp__chart_breaks(rs, s->id, 1, s->t_lo, s->t_hi, s->off_ms, ln);
      if (rc)
        return rc;
    }
  }
  return 0;
}
#endif
