/* SPDX-License-Identifier: MIT */
/* Metric charts drawn with Cairo's image surface and written with its PNG
 * writer (chart.h). Text uses Cairo's toy API with the system's sans
 * family (fontconfig picks a fallback). Nothing time- or host-dependent is
 * written, so one chart always gives the same bytes with the same fonts. */
#include "research/chart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cairo.h>

#include "util/buf.h"
#include "util/cnum.h"

const char *const pmcp__chart_renders[] = {"png", "png_log", NULL};
enum { RENDER_PNG, RENDER_PNG_LOG }; /* the order of pmcp__chart_renders */

/* Line colours (Tableau 10 without its grey, which reads as an axis). */
static const double palette[][3] = {
  {31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40}, {148, 103, 189},
  {140, 86, 75},  {227, 119, 194}, {188, 189, 34}, {23, 190, 207}, {0, 0, 128},
};
#define N_PALETTE (sizeof palette / sizeof palette[0])
/* The frame's colour: drawn without antialiasing, so it is exact. */
#define AXIS_RGB 0x44 / 255.0, 0x44 / 255.0, 0x44 / 255.0

/* Sizes tried from the largest; each costs width * height / 750 tokens. */
static const int sizes[][2] = {{1200, 750}, {960, 600}, {800, 500}, {640, 400}, {480, 300}};
#define N_SIZES (sizeof sizes / sizeof sizes[0])
/* A PNG over this many bytes is drawn again smaller: one reply must not
 * flood a transport (the text of a reply is cut at 256 KiB too). */
#define CHART_BYTES_MAX (192 * 1024)

pmcp__chart_line *pmcp__chart_add(pmcp__chart *c, const char *label, size_t n,
                                  int with_smooth, int with_band)
{
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 8;
    pmcp__chart_line *l = realloc(c->lines, cap * sizeof *l);
    if (!l)
      return NULL;
    c->lines = l;
    c->cap = cap;
  }
  pmcp__chart_line *ln = &c->lines[c->n];
  memset(ln, 0, sizeof *ln);
  snprintf(ln->label, sizeof ln->label, "%s", label ? label : "");
  size_t m = n ? n : 1;
  ln->x = malloc(m * sizeof *ln->x);
  ln->y = malloc(m * sizeof *ln->y);
  if (with_smooth)
    ln->smooth = malloc(m * sizeof *ln->smooth);
  if (with_band) {
    ln->lo = malloc(m * sizeof *ln->lo);
    ln->hi = malloc(m * sizeof *ln->hi);
  }
  if (!ln->x || !ln->y || (with_smooth && !ln->smooth) ||
      (with_band && (!ln->lo || !ln->hi))) {
    free(ln->x);
    free(ln->y);
    free(ln->smooth);
    free(ln->lo);
    free(ln->hi);
    return NULL;
  }
  ln->n = n;
  c->n++;
  return ln;
}

void pmcp__chart_free(pmcp__chart *c)
{
  for (size_t i = 0; i < c->n; i++) {
    free(c->lines[i].x);
    free(c->lines[i].y);
    free(c->lines[i].smooth);
    free(c->lines[i].lo);
    free(c->lines[i].hi);
  }
  free(c->lines);
  c->lines = NULL;
  c->n = c->cap = 0;
}

/* ---- gaps ------------------------------------------------------------------ */

/* Inserts a NaN point at @p x into @p ln (x ascending). */
static int insert_break(pmcp__chart_line *ln, double x)
{
  size_t at = 0;
  while (at < ln->n && ln->x[at] < x)
    at++;
  if ((at > 0 && isnan(ln->y[at - 1])) || (at < ln->n && isnan(ln->y[at])))
    return 0; /* broken there already */
  size_t m = ln->n + 1;
  double **arr[] = {&ln->x, &ln->y, &ln->smooth, &ln->lo, &ln->hi};
  for (size_t a = 0; a < sizeof arr / sizeof arr[0]; a++) {
    if (!*arr[a])
      continue;
    double *p = realloc(*arr[a], m * sizeof *p);
    if (!p)
      return PMCP_ENOMEM;
    memmove(p + at + 1, p + at, (ln->n - at) * sizeof *p);
    p[at] = a == 0 ? x : NAN;
    *arr[a] = p;
  }
  ln->n = m;
  return 0;
}

/* Resolution of the gap search: finer than any chart's plot width. */
#define GAP_BUCKETS 1024

int pmcp__chart_breaks(pmcp__research *rs, int64_t id, int by_time, int64_t lo,
                       int64_t hi, int64_t off_ms, pmcp__chart_line *ln)
{
  if (lo > hi)
    return 0;
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
  size_t k = span < GAP_BUCKETS ? (size_t)span : GAP_BUCKETS;
  pmcp_bucket *bk = calloc(k, sizeof *bk);
  if (!bk)
    return PMCP_ENOMEM;
  size_t nb = 0;
  pthread_mutex_lock(rs->lock);
  int rc = by_time ? pmcp_store_summary_time(rs->store, rs->tenant, id, lo, hi, k, bk, &nb)
                   : pmcp_store_summary(rs->store, rs->tenant, id, lo, hi, k, bk, &nb);
  pthread_mutex_unlock(rs->lock);
  for (size_t b = 0; !rc && b < nb; b++) {
    if (!bk[b].count || bk[b].nonfinite < bk[b].count)
      continue;
    /* only non-finite values here: the line stops */
    double x = by_time ? (double)(bk[b].time_min - off_ms) / 1000.0 : (double)bk[b].step_min;
    rc = insert_break(ln, x);
  }
  free(bk);
  return rc;
}

/* ---- scales and ticks -------------------------------------------------------- */

typedef struct axis {
  double lo, hi;   /* data range (log10 of values on a log axis) */
  double a0, a1;   /* pixel range */
  int log;
} axis;

static double to_px(const axis *a, double v)
{
  if (a->log)
    v = log10(v);
  return a->a0 + (v - a->lo) / (a->hi - a->lo) * (a->a1 - a->a0);
}

static double nice_step(double range, int target)
{
  double raw = range / (target > 1 ? target : 1);
  double p = pow(10, floor(log10(raw)));
  double f = raw / p;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * p;
}

static void fmt_num(double v, double step, char *out, size_t size)
{
  double a = fabs(v);
  if (a < step * 1e-9)
    v = 0, a = 0;
  if (a >= 1e9 || (a != 0 && a < 1e-4)) {
    /* 1e12, 2.5e-7: no "+" and no leading zeros in the exponent */
    char t[32];
    pmcp__c_snprintf(t, sizeof t, "%.3g", v);
    char *e = strchr(t, 'e');
    if (e) {
      char *d = e + 1, *q = e + 1;
      if (*q == '+')
        q++;
      else if (*q == '-')
        *d++ = *q++;
      while (*q == '0' && q[1])
        q++;
      memmove(d, q, strlen(q) + 1);
    }
    snprintf(out, size, "%s", t);
  } else if (a >= 1e6 && step >= 1e4)
    pmcp__c_snprintf(out, size, "%gM", round(v / 1e6 * 1000) / 1000);
  else if (a >= 1e4 && step >= 1000)
    pmcp__c_snprintf(out, size, "%gk", round(v / 1e3 * 1000) / 1000);
  else if (step >= 1)
    snprintf(out, size, "%.0f", v);
  else if (step < 1e-6)
    pmcp__c_snprintf(out, size, "%.2g", v);
  else {
    int d = (int)ceil(-log10(step) - 1e-9);
    pmcp__c_snprintf(out, size, "%.*f", d < 0 ? 0 : d > 8 ? 8 : d, v);
  }
}

/* Wall-clock tick steps in seconds. */
static const double clock_steps[] = {1,    2,     5,     10,    15,     30,     60,
                                     120,  300,   600,   900,   1800,   3600,   7200,
                                     10800, 21600, 43200, 86400, 172800, 604800, 2592000,
                                     31536000};

static double clock_step(double range, int target)
{
  double raw = range / (target > 1 ? target : 1);
  for (size_t i = 0; i < sizeof clock_steps / sizeof clock_steps[0]; i++)
    if (clock_steps[i] >= raw)
      return clock_steps[i];
  return nice_step(range, target);
}

static void fmt_clock(double secs, double step, double span, char *out, size_t size)
{
  time_t t = (time_t)floor(secs);
  struct tm tm;
  gmtime_r(&t, &tm);
  size_t n;
  if (step >= 86400)
    n = strftime(out, size, "%Y-%m-%d", &tm);
  else if (span >= 86400)
    n = strftime(out, size, "%m-%d %H:%M", &tm);
  else if (step < 60)
    n = strftime(out, size, "%H:%M:%S", &tm);
  else
    n = strftime(out, size, "%H:%M", &tm);
  if (!n)
    snprintf(out, size, "?");
}

/* The y ticks (values, not logs) over [yl, yh] (logs on a log axis); each
 * with the step its label is written to. */
#define MAX_TICKS 64
static size_t y_ticks(double yl, double yh, int log_y, int target, double *v, double *st)
{
  size_t n = 0;
  if (!log_y) {
    double step = nice_step(yh - yl, target);
    for (double t = ceil(yl / step) * step; t <= yh + step * 1e-9 && n < MAX_TICKS; t += step) {
      v[n] = t;
      st[n++] = step;
    }
    return n;
  }
  double decades = yh - yl;
  if (decades > 2.5) {
    double every = ceil(decades / (target > 1 ? target : 1));
    for (double e = ceil(yl / every) * every; e <= yh + 1e-9 && n < MAX_TICKS; e += every) {
      v[n] = pow(10, e);
      st[n++] = pow(10, e);
    }
    return n;
  }
  /* within a few decades: 1-2-5 (or every digit) of each decade */
  static const double m125[] = {1, 2, 5}, m19[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const double *m = decades > 0.8 ? m125 : m19;
  size_t nm = decades > 0.8 ? 3 : 9;
  for (double e = floor(yl); e <= ceil(yh) && n < MAX_TICKS; e++)
    for (size_t k = 0; k < nm && n < MAX_TICKS; k++) {
      double x = m[k] * pow(10, e), lx = log10(x);
      if (lx >= yl - 1e-9 && lx <= yh + 1e-9) {
        v[n] = x;
        st[n++] = pow(10, e);
      }
    }
  return n;
}

/* ---- drawing ------------------------------------------------------------------ */

static void set_font(cairo_t *cr, double px, int bold)
{
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, px);
}

static double text_w(cairo_t *cr, const char *s)
{
  cairo_text_extents_t e;
  cairo_text_extents(cr, s, &e);
  return e.x_advance;
}

/* @p s cut (at a UTF-8 boundary, with "...") to at most @p w pixels. */
static void fit_text(cairo_t *cr, const char *s, double w, char *out, size_t size)
{
  snprintf(out, size, "%s", s);
  if (text_w(cr, out) <= w)
    return;
  size_t n = strlen(out);
  while (n > 0) {
    n--;
    while (n > 0 && ((unsigned char)out[n] & 0xC0) == 0x80)
      n--;
    if (n + 4 > size)
      continue;
    memcpy(out + n, "...", 4);
    if (text_w(cr, out) <= w)
      return;
  }
  out[0] = '\0';
}

/* Where text goes: x left, baseline y; align 0 left, 1 centre, 2 right. */
static void put_text(cairo_t *cr, const char *s, double x, double y, int align)
{
  double w = text_w(cr, s);
  cairo_move_to(cr, align == 1 ? x - w / 2 : align == 2 ? x - w : x, y);
  cairo_show_text(cr, s);
}

static int usable(const axis *ay, double v)
{
  return isfinite(v) && (!ay->log || v > 0);
}

/* One polyline of @p y (breaks at NaN, and at values a log axis cannot
 * show); isolated points become dots. */
static void stroke_values(cairo_t *cr, const pmcp__chart_line *ln, const double *y,
                          const axis *ax, const axis *ay, double width)
{
  size_t run = 0;
  double lx = 0, ly = 0;
  cairo_set_line_width(cr, width);
  for (size_t i = 0; i <= ln->n; i++) {
    int ok = i < ln->n && usable(ay, y[i]) && isfinite(ln->x[i]);
    if (!ok) {
      if (run == 1) {
        cairo_new_sub_path(cr);
        cairo_arc(cr, lx, ly, width * 1.2, 0, 2 * M_PI);
        cairo_fill(cr);
      } else if (run > 1) {
        cairo_stroke(cr);
      }
      cairo_new_path(cr);
      run = 0;
      continue;
    }
    lx = to_px(ax, ln->x[i]);
    ly = to_px(ay, y[i]);
    if (run == 0)
      cairo_move_to(cr, lx, ly);
    else
      cairo_line_to(cr, lx, ly);
    run++;
  }
}

/* The faint min..max band of bucketed series, one quad per segment. */
static void fill_band(cairo_t *cr, const pmcp__chart_line *ln, const axis *ax,
                      const axis *ay)
{
  for (size_t i = 0; i + 1 < ln->n; i++) {
    if (!usable(ay, ln->lo[i]) || !usable(ay, ln->hi[i]) || !usable(ay, ln->lo[i + 1]) ||
        !usable(ay, ln->hi[i + 1]) || isnan(ln->y[i]) || isnan(ln->y[i + 1]))
      continue;
    cairo_move_to(cr, to_px(ax, ln->x[i]), to_px(ay, ln->hi[i]));
    cairo_line_to(cr, to_px(ax, ln->x[i + 1]), to_px(ay, ln->hi[i + 1]));
    cairo_line_to(cr, to_px(ax, ln->x[i + 1]), to_px(ay, ln->lo[i + 1]));
    cairo_line_to(cr, to_px(ax, ln->x[i]), to_px(ay, ln->lo[i]));
    cairo_close_path(cr);
  }
  cairo_fill(cr);
}

static void widen(double *lo, double *hi, double v)
{
  if (v < *lo)
    *lo = v;
  if (v > *hi)
    *hi = v;
}

/* Data ranges over every drawable value; 0 when there is none. */
static int ranges(const pmcp__chart *c, int log_y, double *xl, double *xh, double *yl,
                  double *yh)
{
  *xl = *yl = INFINITY;
  *xh = *yh = -INFINITY;
  axis probe = {0, 1, 0, 1, log_y};
  for (size_t l = 0; l < c->n; l++) {
    const pmcp__chart_line *ln = &c->lines[l];
    for (size_t i = 0; i < ln->n; i++) {
      if (!isfinite(ln->x[i]))
        continue;
      const double *vals[] = {ln->y, ln->smooth, ln->lo, ln->hi};
      int any = 0;
      for (size_t k = 0; k < 4; k++)
        if (vals[k] && usable(&probe, vals[k][i])) {
          widen(yl, yh, log_y ? log10(vals[k][i]) : vals[k][i]);
          any = 1;
        }
      if (any)
        widen(xl, xh, ln->x[i]);
    }
  }
  return isfinite(*xl) && isfinite(*yl);
}

static void legend(cairo_t *cr, const pmcp__chart *c, double x, double y, double w,
                   double bottom, double fs)
{
  double lh = fs * 1.5;
  size_t fit = (size_t)((bottom - y) / lh);
  size_t shown = c->n <= fit ? c->n : fit > 0 ? fit - 1 : 0;
  char buf[256];
  for (size_t i = 0; i < shown; i++) {
    const double *p = palette[i % N_PALETTE];
    double cy = y + lh * (double)i + lh / 2;
    cairo_set_source_rgb(cr, p[0] / 255, p[1] / 255, p[2] / 255);
    cairo_set_line_width(cr, 3);
    cairo_move_to(cr, x, cy);
    cairo_line_to(cr, x + fs * 1.6, cy);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.13, 0.13, 0.13);
    fit_text(cr, c->lines[i].label, w - fs * 2.2, buf, sizeof buf);
    put_text(cr, buf, x + fs * 2.1, cy + fs * 0.35, 0);
  }
  if (shown < c->n) {
    snprintf(buf, sizeof buf, "+%zu more", c->n - shown);
    cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
    put_text(cr, buf, x, y + lh * (double)shown + lh / 2 + fs * 0.35, 0);
  }
}

static cairo_status_t png_out(void *closure, const unsigned char *data, unsigned int len)
{
  return pmcp__buf_append(closure, data, len) ? CAIRO_STATUS_NO_MEMORY
                                              : CAIRO_STATUS_SUCCESS;
}

int pmcp__chart_png(const pmcp__chart *c, int width, int height, pmcp_buf *out,
                    pmcp__chart_box *box)
{
  if (width < 200 || height < 150 || width > 4000 || height > 4000)
    return PMCP_EINVAL;
  cairo_surface_t *sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
  if (cairo_surface_status(sf) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(sf);
    return PMCP_ENOMEM;
  }
  cairo_t *cr = cairo_create(sf);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);

  double fs = height * 0.028 < 10 ? 10 : height * 0.028; /* tick and legend text */
  double ts = fs * 1.3;                                   /* title */
  int log_y = c->log_y;
  double xl, xh, yl, yh;
  int have = ranges(c, log_y, &xl, &xh, &yl, &yh);
  if (!have)
    xl = 0, xh = 1, yl = 0, yh = 1;
  if (xh <= xl)
    xl -= 1, xh += 1;
  if (yh <= yl) {
    double d = log_y ? 0.5 : fabs(yl) > 0 ? fabs(yl) * 0.1 : 1;
    yl -= d, yh += d;
  } else if (!log_y) {
    double pad = (yh - yl) * 0.05;
    yl -= pad, yh += pad;
  } else {
    yl -= (yh - yl) * 0.05, yh += (yh - yl) * 0.05;
  }

  /* y tick labels decide the left margin */
  set_font(cr, fs, 0);
  double tv[MAX_TICKS], tst[MAX_TICKS];
  size_t nt = y_ticks(yl, yh, log_y, (int)(height / 70), tv, tst);
  char lab[64];
  double max_lab = 0;
  for (size_t k = 0; k < nt; k++) {
    fmt_num(tv[k], tst[k], lab, sizeof lab);
    double w = text_w(cr, lab);
    if (w > max_lab)
      max_lab = w;
  }
  double legend_w = 0;
  for (size_t i = 0; i < c->n; i++) {
    double w = text_w(cr, c->lines[i].label) + fs * 3.4;
    if (w > legend_w)
      legend_w = w;
  }
  if (legend_w > width * 0.3)
    legend_w = width * 0.3;
  double left = fs * 1.6 + max_lab + fs * 0.8;
  double top = ts * 2.2;
  double bottom = height - fs * 3.6;
  double right = width - (c->n ? legend_w + fs : fs * 1.5);
  /* pixel-aligned frame so the axis colour is exact */
  double x0 = floor(left) + 0.5, x1 = floor(right) + 0.5;
  double y0 = floor(top) + 0.5, y1 = floor(bottom) + 0.5;
  if (box)
    *box = (pmcp__chart_box){x0, y0, x1, y1};
  axis ax = {xl, xh, x0, x1, 0};
  axis ay = {yl, yh, y1, y0, log_y};

  /* title */
  set_font(cr, ts, 1);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  char tbuf[256];
  fit_text(cr, c->title, width - fs * 2, tbuf, sizeof tbuf);
  put_text(cr, tbuf, width / 2.0, ts * 1.3, 1);

  /* grid and tick labels */
  set_font(cr, fs, 0);
  cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
  cairo_set_line_width(cr, 1);
  for (size_t k = 0; k < nt; k++) {
    double v = tv[k];
    double py = floor(to_px(&ay, v)) + 0.5;
    cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
    cairo_move_to(cr, x0, py);
    cairo_line_to(cr, x1, py);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, AXIS_RGB);
    cairo_move_to(cr, x0 - fs * 0.4, py);
    cairo_line_to(cr, x0, py);
    cairo_stroke(cr);
    fmt_num(v, tst[k], lab, sizeof lab);
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
    put_text(cr, lab, x0 - fs * 0.6, py + fs * 0.35, 2);
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
  }
  int target = (int)((x1 - x0) / (fs * 9));
  double xstep = c->x_kind == PMCP__CHART_X_WALL ? clock_step(xh - xl, target)
                                                  : nice_step(xh - xl, target);
  if (c->x_kind != PMCP__CHART_X_WALL && xstep < 1 && floor(xl) == xl && floor(xh) == xh &&
      !strcmp(c->x_label, "step"))
    xstep = 1; /* steps are whole */
  for (double t = ceil(xl / xstep) * xstep; t <= xh + xstep * 1e-9; t += xstep) {
    double px = floor(to_px(&ax, t)) + 0.5;
    cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
    cairo_move_to(cr, px, y0);
    cairo_line_to(cr, px, y1);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, AXIS_RGB);
    cairo_move_to(cr, px, y1);
    cairo_line_to(cr, px, y1 + fs * 0.4);
    cairo_stroke(cr);
    if (c->x_kind == PMCP__CHART_X_WALL)
      fmt_clock(t, xstep, xh - xl, lab, sizeof lab);
    else
      fmt_num(t, xstep, lab, sizeof lab);
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
    put_text(cr, lab, px, y1 + fs * 1.5, 1);
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
  }
  /* the frame */
  cairo_set_source_rgb(cr, AXIS_RGB);
  cairo_rectangle(cr, x0, y0, x1 - x0, y1 - y0);
  cairo_stroke(cr);
  cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);

  /* axis labels */
  cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
  fit_text(cr, c->x_label, x1 - x0, tbuf, sizeof tbuf);
  put_text(cr, tbuf, (x0 + x1) / 2, height - fs * 0.7, 1);
  char ylab[160];
  snprintf(ylab, sizeof ylab, "%s%s", c->y_label, log_y ? " (log)" : "");
  fit_text(cr, ylab, y1 - y0, tbuf, sizeof tbuf);
  cairo_save(cr);
  cairo_translate(cr, fs * 1.1, (y0 + y1) / 2);
  cairo_rotate(cr, -M_PI / 2);
  put_text(cr, tbuf, 0, 0, 1);
  cairo_restore(cr);

  /* the data, clipped to the plot */
  cairo_save(cr);
  cairo_rectangle(cr, x0 + 1, y0 + 1, x1 - x0 - 2, y1 - y0 - 2);
  cairo_clip(cr);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
  double lw = height >= 500 ? 2.5 : 2;
  for (size_t l = 0; l < c->n && have; l++) {
    const pmcp__chart_line *ln = &c->lines[l];
    const double *p = palette[l % N_PALETTE];
    if (ln->lo && ln->hi) {
      cairo_set_source_rgba(cr, p[0] / 255, p[1] / 255, p[2] / 255, 0.15);
      fill_band(cr, ln, &ax, &ay);
    }
    if (ln->smooth) {
      cairo_set_source_rgba(cr, p[0] / 255, p[1] / 255, p[2] / 255, 0.3);
      stroke_values(cr, ln, ln->y, &ax, &ay, lw * 0.6);
    }
  }
  for (size_t l = 0; l < c->n && have; l++) {
    const pmcp__chart_line *ln = &c->lines[l];
    const double *p = palette[l % N_PALETTE];
    cairo_set_source_rgb(cr, p[0] / 255, p[1] / 255, p[2] / 255);
    stroke_values(cr, ln, ln->smooth ? ln->smooth : ln->y, &ax, &ay, lw);
  }
  cairo_restore(cr);
  if (!have) {
    set_font(cr, fs * 1.2, 0);
    cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
    put_text(cr, log_y ? "no positive finite points to draw" : "no finite points to draw",
             (x0 + x1) / 2, (y0 + y1) / 2, 1);
  }
  set_font(cr, fs, 0);
  if (c->n)
    legend(cr, c, x1 + fs * 0.8, y0, legend_w - fs * 0.8, y1, fs);

  cairo_surface_flush(sf);
  int rc = cairo_status(cr) == CAIRO_STATUS_SUCCESS ? 0 : PMCP_ENOMEM;
  cairo_destroy(cr);
  if (!rc && cairo_surface_write_to_png_stream(sf, png_out, out) != CAIRO_STATUS_SUCCESS)
    rc = PMCP_ENOMEM;
  cairo_surface_destroy(sf);
  return rc;
}

/* ---- on a page ------------------------------------------------------------------ */

int pmcp__chart_min_cost(void)
{
  return pmcp_page_image_cost(sizes[N_SIZES - 1][0], sizes[N_SIZES - 1][1]);
}

int pmcp__chart_attach(pmcp_page *pg, const pmcp__chart *c, int more)
{
  if (pmcp_page_status(pg))
    return 0; /* the page answers with its own error */
  int room = 0;
  int rc = pmcp_page_image_room(pg, more, &room);
  if (rc)
    return rc;
  for (size_t i = 0; i < N_SIZES; i++) {
    int w = sizes[i][0], h = sizes[i][1];
    if (pmcp_page_image_cost(w, h) > room)
      continue;
    pmcp_buf png = PMCP_BUF_INIT;
    rc = pmcp__chart_png(c, w, h, &png, NULL);
    if (!rc && png.len > CHART_BYTES_MAX && i + 1 < N_SIZES) {
      pmcp_buf_dispose(&png); /* a very busy chart: a smaller one */
      continue;
    }
    if (!rc)
      rc = pmcp_page_image(pg, more, png.ptr, png.len, w, h);
    pmcp_buf_dispose(&png);
    return rc;
  }
  int need = pmcp_page_budget(pg) - room + pmcp__chart_min_cost();
  char members[160];
  snprintf(members, sizeof members,
           "\"error\":\"%s\",\"min_token_budget\":%d,\"token_budget\":%d",
           pmcp_tool_error_name(PMCP_TERR_TOKEN_BUDGET_TOO_SMALL), need, pmcp_page_budget(pg));
  return pmcp_page_fail(pg,
      members, "The chart does not fit token_budget %d after the text: the smallest chart "
      "(%dx%d) costs %d tokens, so this answer needs token_budget %d or more%s. Raise "
      "token_budget, ask for fewer points or series, or leave out render.",
      pmcp_page_budget(pg), sizes[N_SIZES - 1][0], sizes[N_SIZES - 1][1],
      pmcp__chart_min_cost(), need, need > PMCP_BUDGET_MAX ? " (over the largest allowed)" : "");
}

int pmcp__chart_wanted(pmcp_call *call, int *log_y)
{
  *log_y = 0;
  size_t r;
  if (!pmcp_arg_has(call, "render") || pmcp_arg_enum(call, "render", &r))
    return 0;
  *log_y = r == RENDER_PNG_LOG;
  return 1;
}

void pmcp__chart_run_name(pmcp__research *rs, const char *run_ref, char *out, size_t size)
{
  const char *id = strncmp(run_ref, "run:", 4) ? run_ref : run_ref + 4;
  cJSON *rec = NULL;
  char err[200];
  char ref[300];
  snprintf(ref, sizeof ref, "run:%s", id);
  const char *name = "";
  if (pmcp__rs_get(rs, ref, &rec, err, sizeof err) == 0)
    name = pmcp__js(rec, "name");
  if (*name && strcmp(name, id) != 0)
    snprintf(out, size, "%s (%s)", name, id);
  else
    snprintf(out, size, "%s", id);
  cJSON_Delete(rec);
}

void pmcp__chart_label(pmcp__research *rs, const char *run_ref, const char *key,
                       const cJSON *labels, char *out, size_t size)
{
  char name[160];
  pmcp__chart_run_name(rs, run_ref, name, sizeof name);
  size_t l = (size_t)snprintf(out, size, "%s", name);
  if (key && l < size)
    l += (size_t)snprintf(out + l, size - l, " %s", key);
  /* series of one run and key differ by their labels (rank=0, ...) */
  const cJSON *kv;
  int first = 1;
  cJSON_ArrayForEach(kv, labels)
  {
    if (!cJSON_IsString(kv) || l >= size)
      continue;
    l += (size_t)snprintf(out + l, size - l, "%s%s=%s", first ? " " : ",", kv->string,
                          kv->valuestring);
    first = 0;
  }
}

size_t pmcp__chart_keys(pmcp_call *call, const char *arg, char *out, size_t size)
{
  size_t nk = pmcp_arg_count(call, arg);
  out[0] = '\0';
  for (size_t k = 0; k < nk; k++) {
    const char *key = NULL;
    pmcp_arg_string_at(call, arg, k, &key);
    size_t l = strlen(out);
    snprintf(out + l, size - l, "%s%s", k ? ", " : "", key ? key : "");
  }
  return nk;
}

