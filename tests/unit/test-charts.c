/* SPDX-License-Identifier: MIT */
/* Metric charts (`render: "png"`): the PNG is decoded here (signature and
 * IHDR by hand, pixels with Cairo's PNG reader) and checked against the
 * data: one colour per line, the drawn extent spanning the plot, a NaN
 * region leaving columns without the line's colour, a log axis, the same
 * bytes for the same input; through the research `metrics` series mode and
 * the tracking fetch tools, with the image's cost (width*height/750)
 * counted with the text against token_budget and a clear refusal naming
 * the budget needed when no chart fits. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>
#include <cjson/cJSON.h>

#include "probemcp/probemcp.h"
#include "probemcp/research.h"
#include "probemcp/tokens.h"
#include "probemcp/tracking.h"
#include "research/chart.h"
#include "store-test-util.h"
#include "tool-call-util.h"

/* The palette's first colours (chart.c) and the frame's. */
static const int COL[3][3] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44}};
static const int AXIS[3] = {0x44, 0x44, 0x44};

/* ---- decoding ------------------------------------------------------------ */

typedef struct img {
  int w, h;
  unsigned char *rgb; /* w * h * 3 */
} img;

static int b64v(char c)
{
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Strict standard base64 (padding required). */
static unsigned char *b64_decode(const char *s, size_t *out_len)
{
  size_t n = strlen(s);
  ck_assert_msg(n % 4 == 0 && n > 0, "base64 length %zu", n);
  unsigned char *o = malloc(n / 4 * 3);
  size_t k = 0;
  for (size_t i = 0; i < n; i += 4) {
    int v[4];
    for (int j = 0; j < 4; j++) {
      v[j] = s[i + j] == '=' && i + 4 == n && j >= 2 ? 0 : b64v(s[i + j]);
      ck_assert_msg(v[j] >= 0, "bad base64 character at %zu", i + j);
    }
    uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | v[3];
    o[k++] = (unsigned char)(x >> 16);
    if (s[i + 2] != '=')
      o[k++] = (unsigned char)(x >> 8);
    if (s[i + 3] != '=')
      o[k++] = (unsigned char)x;
  }
  *out_len = k;
  return o;
}

typedef struct rd {
  const unsigned char *p;
  size_t n, at;
} rd;

static cairo_status_t rd_fn(void *c, unsigned char *data, unsigned int len)
{
  rd *r = c;
  if (r->at + len > r->n)
    return CAIRO_STATUS_READ_ERROR;
  memcpy(data, r->p + r->at, len);
  r->at += len;
  return CAIRO_STATUS_SUCCESS;
}

static uint32_t be32(const unsigned char *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Checks the signature and IHDR, then reads the pixels. */
static img png_decode(const unsigned char *p, size_t n)
{
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  ck_assert_msg(n > 33 && !memcmp(p, sig, 8), "no PNG signature");
  ck_assert_int_eq(be32(p + 8), 13);
  ck_assert(!memcmp(p + 12, "IHDR", 4));
  img im = {(int)be32(p + 16), (int)be32(p + 20), NULL};
  ck_assert_msg(!memcmp(p + n - 8, "IEND", 4), "PNG does not end with IEND");
  rd r = {p, n, 0};
  cairo_surface_t *s = cairo_image_surface_create_from_png_stream(rd_fn, &r);
  ck_assert_int_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
  ck_assert_int_eq(cairo_image_surface_get_width(s), im.w);
  ck_assert_int_eq(cairo_image_surface_get_height(s), im.h);
  cairo_surface_flush(s);
  const unsigned char *d = cairo_image_surface_get_data(s);
  int stride = cairo_image_surface_get_stride(s);
  im.rgb = malloc((size_t)im.w * im.h * 3);
  for (int y = 0; y < im.h; y++)
    for (int x = 0; x < im.w; x++) {
      uint32_t px = *(const uint32_t *)(d + y * stride + x * 4);
      unsigned char *o = im.rgb + ((size_t)y * im.w + x) * 3;
      o[0] = (px >> 16) & 255;
      o[1] = (px >> 8) & 255;
      o[2] = px & 255;
    }
  cairo_surface_destroy(s);
  return im;
}

static int near(const img *im, int x, int y, const int *c, int tol)
{
  const unsigned char *o = im->rgb + ((size_t)y * im->w + x) * 3;
  int d0 = o[0] - c[0], d1 = o[1] - c[1], d2 = o[2] - c[2];
  return d0 * d0 + d1 * d1 + d2 * d2 <= tol * tol;
}

/* The plot frame: the longest row runs of the axis colour are its top and
 * bottom edges. */
static pmcp__chart_box find_frame(const img *im)
{
  int best = 0, bx0 = 0, y0 = -1, y1 = -1;
  for (int y = 0; y < im->h; y++) {
    int run = 0, row_best = 0, row_x0 = 0;
    for (int x = 0; x < im->w; x++) {
      run = near(im, x, y, AXIS, 0) ? run + 1 : 0;
      if (run > row_best)
        row_best = run, row_x0 = x - run + 1;
    }
    if (row_best > best)
      best = row_best, bx0 = row_x0, y0 = y1 = y;
    else if (row_best == best && row_x0 == bx0)
      y1 = y;
  }
  ck_assert_msg(best > im->w / 3 && y1 - y0 > im->h / 3, "no plot frame (%d, %d..%d)", best,
                y0, y1);
  return (pmcp__chart_box){bx0, y0, bx0 + best - 1, y1};
}

/* Keeps a PNG for a look when CHART_DUMP names a folder. */
static void dump(const char *name, const unsigned char *p, size_t n)
{
  const char *dir = getenv("CHART_DUMP");
  if (!dir)
    return;
  char path[512];
  snprintf(path, sizeof path, "%s/%s.png", dir, name);
  FILE *f = fopen(path, "wb");
  if (f) {
    fwrite(p, 1, n, f);
    fclose(f);
  }
}

/* Columns of the plot holding colour @p c: count, first and last. */
static int colour_cols(const img *im, const pmcp__chart_box *b, const int *c, int x_from,
                       int x_to, int *first, int *last)
{
  int n = 0;
  *first = -1;
  *last = -1;
  for (int x = x_from; x <= x_to; x++) {
    int hit = 0;
    for (int y = (int)b->y0 + 2; y < (int)b->y1 - 1 && !hit; y++)
      hit = near(im, x, y, c, 40);
    if (hit) {
      n++;
      if (*first < 0)
        *first = x;
      *last = x;
    }
  }
  return n;
}

static int colour_pixels(const img *im, const pmcp__chart_box *b, const int *c)
{
  int n = 0;
  for (int y = (int)b->y0 + 2; y < (int)b->y1 - 1; y++)
    for (int x = (int)b->x0 + 2; x < (int)b->x1 - 1; x++)
      n += near(im, x, y, c, 40);
  return n;
}

/* ---- the chart on its own ------------------------------------------------- */

static void two_lines(pmcp__chart *c)
{
  snprintf(c->title, sizeof c->title, "loss - 2 runs");
  snprintf(c->x_label, sizeof c->x_label, "step");
  snprintf(c->y_label, sizeof c->y_label, "loss");
  pmcp__chart_line *a = pmcp__chart_add(c, "run a", 101, 0, 0);
  for (int i = 0; i <= 100; i++) {
    a->x[i] = i * 10;
    a->y[i] = i >= 40 && i <= 60 ? NAN : 2.0 - i * 0.015;
  }
  pmcp__chart_line *b = pmcp__chart_add(c, "run b", 51, 0, 0);
  for (int i = 0; i <= 50; i++) {
    b->x[i] = i * 20;
    b->y[i] = 0.5 + 0.2 * sin(i * 0.3);
  }
}

START_TEST(chart_pixels)
{
  pmcp__chart c = {0};
  two_lines(&c);
  pmcp_buf png = PMCP_BUF_INIT;
  pmcp__chart_box box;
  ck_assert_int_eq(pmcp__chart_png(&c, 800, 500, &png, &box), 0);
  dump("unit-two-lines", (const unsigned char *)png.ptr, png.len);
  img im = png_decode((const unsigned char *)png.ptr, png.len);
  ck_assert_int_eq(im.w, 800);
  ck_assert_int_eq(im.h, 500);
  pmcp__chart_box f = find_frame(&im);
  ck_assert_int_eq((int)f.x0, (int)box.x0);
  ck_assert_int_eq((int)f.x1, (int)box.x1);
  ck_assert_int_eq((int)f.y0, (int)box.y0);
  ck_assert_int_eq((int)f.y1, (int)box.y1);
  /* both colours drawn, as lines (many pixels) */
  ck_assert_int_gt(colour_pixels(&im, &f, COL[0]), 300);
  ck_assert_int_gt(colour_pixels(&im, &f, COL[1]), 300);
  ck_assert_int_eq(colour_pixels(&im, &f, COL[2]), 0);
  /* the x range is the data's: lines reach both ends of the plot */
  int first, last;
  colour_cols(&im, &f, COL[1], (int)f.x0 + 1, (int)f.x1 - 1, &first, &last);
  ck_assert_int_le(first, (int)f.x0 + 4);
  ck_assert_int_ge(last, (int)f.x1 - 4);
  /* y: line a starts at the top (its max 2.0) and ends near the bottom */
  double wpx = f.x1 - f.x0;
  /* the gap: steps 400..600 are NaN, so columns inside (390..610 map to
   * 39%..61%; keep a margin for the line caps) hold no colour of line a */
  int gx0 = (int)(f.x0 + wpx * 0.405), gx1 = (int)(f.x0 + wpx * 0.595);
  ck_assert_int_eq(colour_cols(&im, &f, COL[0], gx0, gx1, &first, &last), 0);
  ck_assert_int_gt(colour_cols(&im, &f, COL[0], (int)f.x0 + 2, (int)(f.x0 + wpx * 0.37),
                               &first, &last), (int)(wpx * 0.3));
  ck_assert_int_gt(colour_cols(&im, &f, COL[0], (int)(f.x0 + wpx * 0.63), (int)f.x1 - 2,
                               &first, &last), (int)(wpx * 0.3));
  /* the same input gives the same bytes */
  pmcp_buf again = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp__chart_png(&c, 800, 500, &again, NULL), 0);
  ck_assert_uint_eq(again.len, png.len);
  ck_assert(!memcmp(again.ptr, png.ptr, png.len));
  free(im.rgb);
  pmcp_buf_dispose(&png);
  pmcp_buf_dispose(&again);
  pmcp__chart_free(&c);
}
END_TEST

START_TEST(chart_log_and_empty)
{
  /* log y: a decade per fifth of the plot, values <= 0 not drawn */
  pmcp__chart c = {0};
  snprintf(c.x_label, sizeof c.x_label, "step");
  c.log_y = 1;
  pmcp__chart_line *a = pmcp__chart_add(&c, "decay", 5, 0, 0);
  double ys[5] = {1000, 100, 10, 1, 0.1};
  for (int i = 0; i < 5; i++)
    a->x[i] = i, a->y[i] = ys[i];
  pmcp__chart_line *b = pmcp__chart_add(&c, "signed", 3, 0, 0);
  double yb[3] = {-1, 0, 5};
  for (int i = 0; i < 3; i++)
    b->x[i] = i, b->y[i] = yb[i];
  pmcp_buf png = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp__chart_png(&c, 640, 400, &png, NULL), 0);
  dump("unit-log", (const unsigned char *)png.ptr, png.len);
  img im = png_decode((const unsigned char *)png.ptr, png.len);
  pmcp__chart_box f = find_frame(&im);
  /* on a log axis the decay is a straight line: at x = 2 (the middle) it
   * passes y = 10, the middle decade of 0.1..1000 */
  int mx = (int)(f.x0 + (f.x1 - f.x0) / 2), hits = 0;
  double sum = 0;
  for (int y = (int)f.y0 + 2; y < (int)f.y1 - 1; y++)
    if (near(&im, mx, y, COL[0], 40))
      hits++, sum += y;
  ck_assert_int_gt(hits, 0);
  double mid = (f.y0 + f.y1) / 2;
  ck_assert_msg(fabs(sum / hits - mid) < (f.y1 - f.y0) * 0.05, "log midpoint at %f, not %f",
                sum / hits, mid);
  /* "signed" has one drawable point (5 at x=2): a dot, not a line */
  int pb = colour_pixels(&im, &f, COL[1]);
  ck_assert_int_gt(pb, 0);
  ck_assert_int_lt(pb, 80);
  free(im.rgb);
  pmcp_buf_dispose(&png);
  pmcp__chart_free(&c);
  /* nothing to draw: still a chart (frame, message) */
  pmcp__chart e = {0};
  ck_assert_int_eq(pmcp__chart_png(&e, 480, 300, &png, NULL), 0);
  im = png_decode((const unsigned char *)png.ptr, png.len);
  find_frame(&im);
  free(im.rgb);
  pmcp_buf_dispose(&png);
}
END_TEST

/* Awkward input: many lines (the legend says how many more), a flat
 * line, a line of NaN only, one point, huge and tiny values, Inf. */
START_TEST(chart_awkward)
{
  pmcp__chart c = {0};
  snprintf(c.title, sizeof c.title, "%s", "a very long title that goes on and on and on and on "
           "and on and on and on and on and on and on and on and on and on and on and on");
  snprintf(c.x_label, sizeof c.x_label, "step");
  for (int l = 0; l < 30; l++) {
    char name[64];
    snprintf(name, sizeof name, "run-%02d with a rather long name indeed", l);
    pmcp__chart_line *ln = pmcp__chart_add(&c, name, 50, l == 3, l == 4);
    for (int i = 0; i < 50; i++) {
      ln->x[i] = 1e9 + i * 1e7;
      ln->y[i] = l == 0 ? 5.0 : l == 1 ? NAN : l == 2 ? (i == 7 ? 1.0 : NAN)
               : l == 5 ? (i == 3 ? INFINITY : -INFINITY) : 1e12 + l * 1e9 * sin(i);
      if (ln->smooth)
        ln->smooth[i] = 1e12;
      if (ln->lo)
        ln->lo[i] = ln->y[i] - 1e9, ln->hi[i] = ln->y[i] + 1e9;
    }
  }
  pmcp_buf png = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp__chart_png(&c, 480, 300, &png, NULL), 0);
  img im = png_decode((const unsigned char *)png.ptr, png.len);
  find_frame(&im);
  free(im.rgb);
  pmcp_buf_dispose(&png);
  c.log_y = 1;
  ck_assert_int_eq(pmcp__chart_png(&c, 1200, 750, &png, NULL), 0);
  dump("unit-awkward", (const unsigned char *)png.ptr, png.len);
  pmcp_buf_dispose(&png);
  pmcp__chart_free(&c);
  /* tiny values, one flat line */
  pmcp__chart t = {0};
  pmcp__chart_line *ln = pmcp__chart_add(&t, "flat", 2, 0, 0);
  ln->x[0] = 0, ln->x[1] = 1, ln->y[0] = ln->y[1] = 3e-9;
  ck_assert_int_eq(pmcp__chart_png(&t, 640, 400, &png, NULL), 0);
  pmcp_buf_dispose(&png);
  ck_assert_int_eq(pmcp__chart_png(&t, 10, 10, &png, NULL), PMCP_EINVAL);
  pmcp__chart_free(&t);
}
END_TEST

START_TEST(image_cost)
{
  ck_assert_int_eq(pmcp_page_image_cost(750, 1), 1);
  ck_assert_int_eq(pmcp_page_image_cost(751, 1), 2);
  ck_assert_int_eq(pmcp_page_image_cost(480, 300), 192);
  ck_assert_int_eq(pmcp_page_image_cost(1200, 750), 1200);
  ck_assert_int_eq(pmcp_page_image_cost(0, 10), 0);
  ck_assert_int_eq(pmcp__chart_min_cost(), 192);
}
END_TEST

/* ---- through the tools ------------------------------------------------------ */

static pmcp_store *RO;

static void log_points(pmcp_store *s, pmcp_tenant t, const char *run, const char *key,
                       int n, int step, double (*f)(int), int nan_from, int nan_to)
{
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, key, NULL, 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
  int64_t id;
  ST_OK(s, pmcp_store_series(s, t, run, &sp, &id));
  pmcp_point *p = malloc((size_t)n * sizeof *p);
  for (int i = 0; i < n; i++) {
    p[i].step = (int64_t)i * step;
    p[i].time_ms = 1700000000000LL + (int64_t)i * 1000;
    p[i].value = i >= nan_from && i < nan_to ? NAN : f(i);
  }
  ST_OK(s, pmcp_store_log(s, t, id, p, (size_t)n));
  free(p);
}

static double loss_a(int i) { return 2.0 * exp(-i / 300.0) + 0.1; }
static double loss_b(int i) { return 1.5 * exp(-i / 200.0) + 0.2; }
static double acc(int i) { return 1 - exp(-i / 250.0); }

static void setup(void)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  pmcp_entity_spec p = PMCP_ENTITY_SPEC_INIT;
  p.id = "proj";
  p.name = "proj";
  ST_OK(s, pmcp_store_create(s, t, "project", &p, NULL));
  const char *ids[2] = {"ra", "rb"}, *names[2] = {"baseline", "wide-lr"};
  for (int i = 0; i < 2; i++) {
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = ids[i];
    r.name = names[i];
    r.project = "proj";
    r.created_ms = 1700000000000LL;
    ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  }
  ST_OK(s, pmcp_store_begin(s));
  /* ra's loss: NaN over points 400..599 (steps 400..599) */
  log_points(s, t, "ra", "loss", 1000, 1, loss_a, 400, 600);
  log_points(s, t, "rb", "loss", 1000, 1, loss_b, 0, 0);
  log_points(s, t, "ra", "acc", 1000, 1, acc, 0, 0);
  ST_OK(s, pmcp_store_commit(s));
  pmcp_store_free(s);
  ck_assert_int_eq(pmcp_store_open(&RO, st_path, PMCP_STORE_READONLY), 0);
  tc_server_new();
  pmcp_tracking_options o = PMCP_TRACKING_OPTIONS_INIT;
  ck_assert_int_eq(pmcp_tracking_register(tc_server(), RO, &o), 0);
  ck_assert_int_eq(pmcp_research_register(tc_server(), RO, NULL), 0);
  tc_initialize();
}

static void teardown(void)
{
  tc_server_free();
  pmcp_store_free(RO);
  RO = NULL;
  st_cleanup();
}

/* One tools/call answer taken apart. */
typedef struct answer {
  cJSON *resp;
  cJSON *obj;       /* the text item's JSON */
  const char *text;
  int is_error;
  int has_image;
  img im;
  size_t text_tokens;
} answer;

static answer call(const char *tool, const char *args)
{
  size_t n = strlen(tool) + strlen(args) + 64;
  char *p = malloc(n);
  snprintf(p, n, "{\"name\":\"%s\",\"arguments\":%s}", tool, args);
  answer a = {0};
  a.resp = tc_rpc("tools/call", p);
  free(p);
  const cJSON *res = cJSON_GetObjectItem(a.resp, "result");
  ck_assert_msg(res != NULL, "no result: %s", tc_last());
  const cJSON *content = cJSON_GetObjectItem(res, "content");
  int nc = cJSON_GetArraySize(content);
  ck_assert_msg(nc == 1 || nc == 2, "%d content items", nc);
  const cJSON *t0 = cJSON_GetArrayItem(content, 0);
  ck_assert_str_eq(cJSON_GetObjectItem(t0, "type")->valuestring, "text");
  a.text = cJSON_GetObjectItem(t0, "text")->valuestring;
  a.obj = cJSON_Parse(a.text);
  ck_assert_ptr_nonnull(a.obj);
  a.is_error = cJSON_IsTrue(cJSON_GetObjectItem(res, "isError"));
  ck_assert_int_eq(pmcp_tokens_count(a.text, strlen(a.text), &a.text_tokens), 0);
  if (nc == 2) {
    ck_assert_msg(!a.is_error, "an error with an image");
    const cJSON *i1 = cJSON_GetArrayItem(content, 1);
    ck_assert_str_eq(cJSON_GetObjectItem(i1, "type")->valuestring, "image");
    ck_assert_str_eq(cJSON_GetObjectItem(i1, "mimeType")->valuestring, "image/png");
    size_t len = 0;
    unsigned char *png = b64_decode(cJSON_GetObjectItem(i1, "data")->valuestring, &len);
    static int seq;
    char nm[64];
    snprintf(nm, sizeof nm, "%s-%d", tool, seq++);
    dump(nm, png, len);
    a.im = png_decode(png, len);
    free(png);
    a.has_image = 1;
  }
  return a;
}

static void answer_free(answer *a)
{
  cJSON_Delete(a->resp);
  cJSON_Delete(a->obj);
  free(a->im.rgb);
}

static int budget_of(const char *args)
{
  const char *b = strstr(args, "\"token_budget\":");
  return b ? atoi(b + 15) : 2000;
}

/* Text tokens plus the image's cost within the budget. */
static void within_budget(const answer *a, const char *args)
{
  size_t cost = a->has_image ? (size_t)pmcp_page_image_cost(a->im.w, a->im.h) : 0;
  ck_assert_msg(a->text_tokens + cost <= (size_t)budget_of(args),
                "%zu text + %zu image tokens over %d", a->text_tokens, cost, budget_of(args));
}

START_TEST(research_series_chart)
{
  const char *plain = "{\"mode\":\"series\",\"run_ids\":[\"ra\",\"rb\"],\"keys\":[\"loss\"],"
                      "\"max_points\":60}";
  const char *chart = "{\"mode\":\"series\",\"run_ids\":[\"ra\",\"rb\"],\"keys\":[\"loss\"],"
                      "\"max_points\":60,\"render\":\"png\"}";
  answer a = call("metrics", plain);
  ck_assert(!a.is_error && !a.has_image);
  answer b = call("metrics", chart);
  ck_assert_msg(!b.is_error && b.has_image, "%s", b.text);
  /* the numbers are the same with and without the chart */
  ck_assert_str_eq(a.text, b.text);
  within_budget(&b, chart);
  /* the largest size that fits 2000 after ~this text */
  int cost = pmcp_page_image_cost(b.im.w, b.im.h);
  ck_assert_int_le((int)b.text_tokens + cost, 2000);
  ck_assert_msg(b.im.w == 1200 || (int)b.text_tokens + 1200 > 2000, "not the largest size");
  pmcp__chart_box f = find_frame(&b.im);
  ck_assert_int_gt(colour_pixels(&b.im, &f, COL[0]), 200);
  ck_assert_int_gt(colour_pixels(&b.im, &f, COL[1]), 200);
  ck_assert_int_eq(colour_pixels(&b.im, &f, COL[2]), 0);
  /* ra's NaN steps 400..599: no ra colour in their columns */
  double w = f.x1 - f.x0;
  int first, last;
  ck_assert_int_eq(colour_cols(&b.im, &f, COL[0], (int)(f.x0 + w * 0.42),
                               (int)(f.x0 + w * 0.58), &first, &last), 0);
  ck_assert_int_gt(colour_cols(&b.im, &f, COL[1], (int)(f.x0 + w * 0.42),
                               (int)(f.x0 + w * 0.58), &first, &last), (int)(w * 0.1));
  /* both lines span the plot from step 0 to 999 */
  colour_cols(&b.im, &f, COL[1], (int)f.x0 + 1, (int)f.x1 - 1, &first, &last);
  ck_assert_int_le(first, (int)f.x0 + 4);
  ck_assert_int_ge(last, (int)f.x1 - 4);
  answer_free(&a);
  answer_free(&b);

  /* smoothing: a smoothed line over a faint raw one, both visible */
  const char *sm = "{\"mode\":\"series\",\"run_ids\":[\"rb\"],\"keys\":[\"loss\",\"acc\"],"
                   "\"max_points\":60,\"smoothing\":0.8,\"render\":\"png_log\"}";
  answer c = call("metrics", sm);
  ck_assert_msg(!c.is_error && c.has_image, "%s", c.text);
  within_budget(&c, sm);
  answer_free(&c);
}
END_TEST

/* Every budget either answers within it (text + image) or refuses naming
 * a min_token_budget that then works. */
START_TEST(research_budgets)
{
  int refusals = 0, sizes_seen[2] = {0, 0};
  for (int budget = 512; budget <= 3000; budget += 212) {
    char args[300];
    snprintf(args, sizeof args, "{\"mode\":\"series\",\"run_ids\":[\"ra\",\"rb\"],"
             "\"keys\":[\"loss\"],\"max_points\":100,\"render\":\"png\",\"token_budget\":%d}",
             budget);
    answer a = call("metrics", args);
    if (a.is_error) {
      const cJSON *need = cJSON_GetObjectItem(a.obj, "min_token_budget");
      ck_assert_msg(cJSON_IsNumber(need) && need->valueint > budget, "%s", a.text);
      ck_assert(strstr(cJSON_GetObjectItem(a.obj, "message")->valuestring, "token_budget"));
      char again[300];
      snprintf(again, sizeof again, "{\"mode\":\"series\",\"run_ids\":[\"ra\",\"rb\"],"
               "\"keys\":[\"loss\"],\"max_points\":100,\"render\":\"png\","
               "\"token_budget\":%d}", need->valueint);
      answer b = call("metrics", again);
      ck_assert_msg(!b.is_error && b.has_image, "%s", b.text);
      within_budget(&b, again);
      answer_free(&b);
      refusals++;
    } else {
      ck_assert_msg(a.has_image, "%s", a.text);
      within_budget(&a, args);
      if (budget == 512 + 212)
        sizes_seen[0] = a.im.w;
      sizes_seen[1] = a.im.w;
    }
    answer_free(&a);
  }
  /* larger budgets, larger charts */
  ck_assert_int_eq(sizes_seen[1], 1200);
  ck_assert_int_lt(sizes_seen[0] ? sizes_seen[0] : 0, 1200);
  ck_assert_int_gt(refusals, 0);
  /* a text that fits alone but not beside the smallest chart: refused by
   * the chart, naming the budget */
  answer p = call("metrics", "{\"mode\":\"series\",\"run_ids\":[\"ra\",\"rb\"],\"keys\":"
                             "[\"loss\"],\"max_points\":40,\"token_budget\":512}");
  if (!p.is_error) {
    answer q = call("metrics", "{\"mode\":\"series\",\"run_ids\":[\"ra\",\"rb\"],\"keys\":"
                               "[\"loss\"],\"max_points\":40,\"token_budget\":512,"
                               "\"render\":\"png\"}");
    ck_assert(q.is_error || q.has_image);
    if (q.is_error)
      ck_assert_int_gt(cJSON_GetObjectItem(q.obj, "min_token_budget")->valueint, 512);
    answer_free(&q);
  }
  answer_free(&p);
}
END_TEST

START_TEST(tracking_charts)
{
  const char *plain = "{\"runs\":[\"ra\",\"rb\"],\"series\":[\"loss\"],\"step_from\":0,"
                      "\"step_to\":999,\"max_points\":40,\"token_budget\":4000}";
  const char *chart = "{\"runs\":[\"ra\",\"rb\"],\"series\":[\"loss\"],\"step_from\":0,"
                      "\"step_to\":999,\"max_points\":40,\"token_budget\":4000,"
                      "\"render\":\"png\"}";
  answer a = call("fetch_float_series", plain);
  ck_assert(!a.is_error && !a.has_image);
  answer b = call("fetch_float_series", chart);
  ck_assert_msg(!b.is_error && b.has_image, "%s", b.text);
  ck_assert_str_eq(a.text, b.text);
  within_budget(&b, chart);
  pmcp__chart_box f = find_frame(&b.im);
  ck_assert_int_gt(colour_pixels(&b.im, &f, COL[0]), 200);
  ck_assert_int_gt(colour_pixels(&b.im, &f, COL[1]), 200);
  double w = f.x1 - f.x0;
  int first, last;
  ck_assert_int_eq(colour_cols(&b.im, &f, COL[0], (int)(f.x0 + w * 0.42),
                               (int)(f.x0 + w * 0.58), &first, &last), 0);
  answer_free(&a);
  answer_free(&b);

  const char *bk = "{\"runs\":[\"ra\",\"rb\"],\"series\":[\"loss\"],\"buckets\":50,"
                   "\"render\":\"png\",\"token_budget\":4000}";
  answer c = call("fetch_float_series_buckets", bk);
  ck_assert_msg(!c.is_error && c.has_image, "%s", c.text);
  within_budget(&c, bk);
  f = find_frame(&c.im);
  ck_assert_int_gt(colour_pixels(&c.im, &f, COL[0]), 200);
  ck_assert_int_gt(colour_pixels(&c.im, &f, COL[1]), 200);
  w = f.x1 - f.x0;
  /* bucket 20..29 of 50 are all NaN for ra (steps 400..599) */
  ck_assert_int_eq(colour_cols(&c.im, &f, COL[0], (int)(f.x0 + w * 0.43),
                               (int)(f.x0 + w * 0.57), &first, &last), 0);
  answer_free(&c);
  /* relative time axis */
  answer d = call("fetch_float_series_buckets",
                  "{\"runs\":[\"ra\"],\"series\":[\"loss\"],\"axis\":\"relative_time\","
                  "\"render\":\"png\",\"token_budget\":4000}");
  ck_assert_msg(!d.is_error && d.has_image, "%s", d.text);
  answer_free(&d);
  answer e = call("fetch_float_series_buckets",
                  "{\"runs\":[\"ra\"],\"series\":[\"loss\"],\"axis\":\"wall_clock\","
                  "\"render\":\"png\",\"token_budget\":4000}");
  ck_assert_msg(!e.is_error && e.has_image, "%s", e.text);
  answer_free(&e);
}
END_TEST

START_TEST(render_offered)
{
  cJSON *r = tc_rpc("tools/list", "{}");
  char *s = cJSON_PrintUnformatted(r);
  ck_assert_ptr_nonnull(strstr(s, "\"render\""));
  ck_assert_ptr_nonnull(strstr(s, "\"png_log\""));
  cJSON_free(s);
  cJSON_Delete(r);
  /* a render other than png is refused by the schema */
  int err = 0;
  cJSON *o = tc_call("metrics", "{\"mode\":\"series\",\"run_ids\":[\"ra\"],\"keys\":"
                                "[\"loss\"],\"render\":\"svg\"}", &err);
  ck_assert_int_eq(err, 1);
  cJSON_Delete(o);
  /* the log axis is a render value, not an argument of its own */
  tc_refused("metrics", "{\"mode\":\"series\",\"run_ids\":[\"ra\"],\"keys\":[\"loss\"],"
                        "\"log_y\":true}", "log_y");
}
END_TEST

/* ---- the page API ------------------------------------------------------------ */

static const unsigned char KEY[32] = "k3y-for-the-chart-unit-tests!!!!";

static pmcp_page *page_of(int budget, int items)
{
  pmcp_page_options o = PMCP_PAGE_OPTIONS_INIT;
  o.token_budget = budget;
  o.tool = "toy";
  o.key = KEY;
  o.key_len = sizeof KEY;
  pmcp_page *pg = NULL;
  ck_assert_int_eq(pmcp_page_new(&pg, &o), 0);
  ck_assert_int_eq(pmcp_page_list(pg, "rows"), 0);
  for (int i = 0; i < items; i++) {
    char item[200];
    snprintf(item, sizeof item, "{\"id\":%d,\"text\":\"row %d of the listing, with words "
             "that the tokenizer counts one by one\"}", i, i);
    uint32_t pos = (uint32_t)i + 1;
    ck_assert_int_eq(pmcp_page_add(pg, item, strlen(item), &pos, sizeof pos), 0);
  }
  return pg;
}

static void empty_png(int w, int h, pmcp_buf *out)
{
  pmcp__chart c = {0};
  ck_assert_int_eq(pmcp__chart_png(&c, w, h, out, NULL), 0);
}

START_TEST(page_image_api)
{
  pmcp_page *pg = page_of(2000, 10);
  int room = 0;
  ck_assert_int_eq(pmcp_page_image_room(pg, 0, &room), 0);
  pmcp_buf small = PMCP_BUF_INIT, big = PMCP_BUF_INIT;
  empty_png(480, 300, &small);
  empty_png(1200, 750, &big);
  /* the header decides the size: a wrong one, or no PNG, is refused */
  ck_assert_int_eq(pmcp_page_image(pg, 0, small.ptr, small.len, 481, 300), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_page_image(pg, 0, "not a png at all, really not", 28, 480, 300),
                   PMCP_EINVAL);
  /* 1200x750 costs 1200: over the room of 2000 minus ten rows? */
  int rc = pmcp_page_image(pg, 0, big.ptr, big.len, 1200, 750);
  ck_assert_int_eq(rc, room >= 1200 ? 0 : PMCP_EBUDGET);
  if (rc)
    ck_assert_int_eq(pmcp_page_image(pg, 0, small.ptr, small.len, 480, 300), 0);
  ck_assert_int_eq(pmcp_page_image(pg, 0, small.ptr, small.len, 480, 300), PMCP_EMISUSE);
  pmcp_buf text = PMCP_BUF_INIT;
  int err = 1;
  ck_assert_int_eq(pmcp_page_render(pg, 0, &text, &err), 0);
  ck_assert_int_eq(err, 0);
  size_t tokens = 0;
  ck_assert_int_eq(pmcp_tokens_count(text.ptr, text.len, &tokens), 0);
  int cost = rc ? 192 : 1200;
  ck_assert_int_le((int)tokens + cost, 2000);
  /* the room was exact: the budget less the text */
  ck_assert_int_eq(room, 2000 - (int)tokens);
  pmcp_page_free(pg);
  pmcp_buf_dispose(&text);

  /* a reserved image keeps room through the items: a page filled to the
   * brim still takes the smallest chart */
  pg = page_of(600, 0);
  ck_assert_int_eq(pmcp_page_image_reserve(pg, 192), 0);
  int added = 0;
  for (int i = 0; i < 100; i++) {
    char item[200];
    snprintf(item, sizeof item, "{\"id\":%d,\"text\":\"row %d of the listing, with words "
             "that the tokenizer counts one by one\"}", i, i);
    uint32_t pos = (uint32_t)i + 1;
    if (pmcp_page_add(pg, item, strlen(item), &pos, sizeof pos))
      break;
    added++;
  }
  ck_assert_int_gt(added, 0);
  ck_assert_int_lt(added, 100);
  ck_assert_int_eq(pmcp_page_image_room(pg, 1, &room), 0);
  ck_assert_int_ge(room, 192);
  ck_assert_int_eq(pmcp_page_image(pg, 1, small.ptr, small.len, 480, 300), 0);
  ck_assert_int_eq(pmcp_page_render(pg, 1, &text, &err), 0);
  ck_assert_int_eq(err, 0);
  ck_assert_int_eq(pmcp_tokens_count(text.ptr, text.len, &tokens), 0);
  ck_assert_int_le((int)tokens + 192, 600);
  ck_assert_ptr_nonnull(strstr(text.ptr, "next_cursor"));
  pmcp_page_free(pg);
  pmcp_buf_dispose(&text);
  pmcp_buf_dispose(&small);
  pmcp_buf_dispose(&big);
}
END_TEST

/* No room for any chart after the text: an error naming the budget that
 * fits text and the smallest chart, and that budget then works. */
START_TEST(chart_too_small)
{
  pmcp_page *pg = page_of(512, 0);
  int n = 0;
  for (; n < 100; n++) {
    char item[200];
    snprintf(item, sizeof item, "{\"id\":%d,\"text\":\"row %d of the listing, with words "
             "that the tokenizer counts one by one\"}", n, n);
    uint32_t pos = (uint32_t)n + 1;
    int room = 0;
    pmcp_page_image_room(pg, 0, &room);
    if (room < 150)
      break;
    ck_assert_int_eq(pmcp_page_add(pg, item, strlen(item), &pos, sizeof pos), 0);
  }
  pmcp__chart c = {0};
  pmcp__chart_line *ln = pmcp__chart_add(&c, "x", 2, 0, 0);
  ln->x[0] = 0, ln->x[1] = 1, ln->y[0] = 1, ln->y[1] = 2;
  ck_assert_int_eq(pmcp__chart_attach(pg, &c, 0), 0);
  pmcp_buf text = PMCP_BUF_INIT;
  int err = 0;
  ck_assert_int_eq(pmcp_page_render(pg, 0, &text, &err), 0);
  ck_assert_int_eq(err, 1);
  cJSON *o = cJSON_Parse(text.ptr);
  const cJSON *need = cJSON_GetObjectItem(o, "min_token_budget");
  ck_assert_msg(cJSON_IsNumber(need) && need->valueint > 512, "%s", text.ptr);
  ck_assert_str_eq(cJSON_GetObjectItem(o, "error")->valuestring, "token_budget_too_small");
  ck_assert_ptr_nonnull(strstr(cJSON_GetObjectItem(o, "message")->valuestring, "chart"));
  pmcp_page_free(pg);
  pmcp_buf_dispose(&text);
  /* the same items with that budget: the chart fits */
  pmcp_page *ok = page_of(need->valueint, n);
  ck_assert_int_eq(pmcp__chart_attach(ok, &c, 0), 0);
  ck_assert_int_eq(pmcp_page_render(ok, 0, &text, &err), 0);
  ck_assert_int_eq(err, 0);
  size_t tokens = 0;
  ck_assert_int_eq(pmcp_tokens_count(text.ptr, text.len, &tokens), 0);
  ck_assert_int_le((int)tokens + 192, need->valueint);
  pmcp_page_free(ok);
  pmcp_buf_dispose(&text);
  cJSON_Delete(o);
  pmcp__chart_free(&c);
}
END_TEST

/* ---- the engine prices images from their header ---------------------------- */

static const pmcp_arg_spec toy_args[] = {
  {"w", PMCP_T_INTEGER, 1, "width", 1, 1, 200, 4000, NULL, NULL},
  {"h", PMCP_T_INTEGER, 1, "height", 1, 1, 150, 4000, NULL, NULL},
  {"mime", PMCP_T_STRING, 0, "mime type", 0, 0, 0, 0, NULL, "\"image/png\""},
};

static char *b64(const unsigned char *p, size_t n)
{
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *s = malloc((n + 2) / 3 * 4 + 1);
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t x = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                 (i + 2 < n ? p[i + 2] : 0);
    s[o++] = tab[x >> 18 & 63];
    s[o++] = tab[x >> 12 & 63];
    s[o++] = i + 1 < n ? tab[x >> 6 & 63] : '=';
    s[o++] = i + 2 < n ? tab[x & 63] : '=';
  }
  s[o] = 0;
  return s;
}

/* A budgeted tool that answers "{}" and an image it does not price. */
static int toy_image(pmcp_call *call, void *ud)
{
  (void)ud;
  int64_t w = 0, h = 0;
  const char *mime = "image/png";
  pmcp_arg_int(call, "w", &w);
  pmcp_arg_int(call, "h", &h);
  pmcp_arg_string(call, "mime", &mime, NULL);
  pmcp_buf png = PMCP_BUF_INIT;
  empty_png((int)w, (int)h, &png);
  char *s = b64((const unsigned char *)png.ptr, png.len);
  int rc = pmcp_result_text(call, "{}", 2);
  if (!rc)
    rc = pmcp_result_image(call, s, mime);
  free(s);
  pmcp_buf_dispose(&png);
  return rc;
}

static void setup_toy(void)
{
  tc_server_new();
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = "toy";
  d.description = "toy";
  d.args = toy_args;
  d.n_args = 3;
  d.flags = PMCP_TOOL_BUDGETED;
  d.read_only = PMCP_HINT_TRUE;
  d.handler = toy_image;
  ck_assert_int_eq(pmcp_server_add_tool(tc_server(), &d), 0);
  tc_initialize();
}

static void teardown_toy(void) { tc_server_free(); }

START_TEST(engine_prices_images)
{
  answer a = call("toy", "{\"w\":480,\"h\":300,\"token_budget\":512}");
  ck_assert(!a.is_error && a.has_image);
  answer_free(&a);
  /* 1200x750 = 1200 tokens: over 512, whatever the tool thought */
  answer b = call("toy", "{\"w\":1200,\"h\":750,\"token_budget\":512}");
  ck_assert(b.is_error && !b.has_image);
  ck_assert_str_eq(cJSON_GetObjectItem(b.obj, "error")->valuestring, "budget_exceeded");
  ck_assert_int_eq(cJSON_GetObjectItem(b.obj, "tokens")->valueint, 1201); /* "{}" is one token */
  answer_free(&b);
  answer c = call("toy", "{\"w\":1200,\"h\":750,\"token_budget\":1300}");
  ck_assert(!c.is_error && c.has_image);
  answer_free(&c);
  /* an image the budget cannot price is a shape error */
  answer d = call("toy", "{\"w\":480,\"h\":300,\"mime\":\"image/jpeg\"}");
  ck_assert(d.is_error && !d.has_image);
  ck_assert_str_eq(cJSON_GetObjectItem(d.obj, "error")->valuestring, "tool_result_shape");
  answer_free(&d);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("charts");
  TCase *c = tcase_create("chart");
  tcase_add_test(c, chart_pixels);
  tcase_add_test(c, chart_log_and_empty);
  tcase_add_test(c, chart_awkward);
  tcase_add_test(c, image_cost);
  tcase_add_test(c, page_image_api);
  tcase_add_test(c, chart_too_small);
  suite_add_tcase(s, c);
  TCase *e = tcase_create("engine");
  tcase_add_checked_fixture(e, setup_toy, teardown_toy);
  tcase_add_test(e, engine_prices_images);
  suite_add_tcase(s, e);
  TCase *t = tcase_create("tools");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 60);
  tcase_add_test(t, research_series_chart);
  tcase_add_test(t, research_budgets);
  tcase_add_test(t, tracking_charts);
  tcase_add_test(t, render_offered);
  suite_add_tcase(s, t);
  return s;
}

int main(void)
{
  return st_run_suite(suite());
}
