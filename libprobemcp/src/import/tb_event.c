/* SPDX-License-Identifier: MIT */
/* TensorBoard Event records (the protobufs inside the TFRecord framing
 * of event files, tfrecord.c). From each Event (wall_time = 1, step = 2, summary = 5) we take
 * the Summary values (tag = 1, simple_value = 2, histo = 5, tensor = 8,
 * metadata = 9): plain float scalars, scalars written as rank-0 tensors
 * (TF2 / the "scalars" plugin), HistogramProto histograms, and the
 * "histograms" plugin's [k, 3] tensors (left, right, count rows).
 * The hparams plugin's session start info gives the run's parameters.
 * Other plugins (images, audio, text) are counted as skipped. */
#include "import/import.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "import/pb.h"
#include "import/tb_event.h"
#include "import/tfrecord.h"
#include "probemcp/error.h"
#include "util/buf.h"

/* ---- tag -> kind memory (metadata is written only with a tag's first
 * value in a file; later values of that tag carry none) ---- */

static uint64_t fnv(const uint8_t *s, size_t n)
{
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ s[i]) * 1099511628211ull;
  return h;
}

static pmcp__tb_tag *kind_slot(pmcp__tb_state *st, const uint8_t *tag, size_t n,
                      int create)
{
  if (create && (st->used + 1) * 2 > st->cap) {
    size_t cap = st->cap ? st->cap * 2 : 64;
    pmcp__tb_tag *t = calloc(cap, sizeof *t);
    if (!t)
      return NULL;
    for (size_t i = 0; i < st->cap; i++) {
      if (!st->tags[i].name)
        continue;
      size_t j = fnv((const uint8_t *)st->tags[i].name, st->tags[i].len) &
                 (cap - 1);
      while (t[j].name)
        j = (j + 1) & (cap - 1);
      t[j] = st->tags[i];
    }
    free(st->tags);
    st->tags = t;
    st->cap = cap;
  }
  if (!st->cap)
    return NULL;
  size_t j = fnv(tag, n) & (st->cap - 1);
  while (st->tags[j].name) {
    if (st->tags[j].len == n && memcmp(st->tags[j].name, tag, n) == 0)
      return &st->tags[j];
    j = (j + 1) & (st->cap - 1);
  }
  if (!create)
    return NULL;
  char *name = malloc(n + 1);
  if (!name)
    return NULL;
  memcpy(name, tag, n);
  name[n] = '\0';
  st->tags[j].name = name;
  st->tags[j].len = n;
  st->tags[j].kind = PMCP__TB_UNKNOWN;
  st->used++;
  return &st->tags[j];
}

void pmcp__tb_state_dispose(pmcp__tb_state *st)
{
  for (size_t i = 0; i < st->cap; i++)
    free(st->tags[i].name);
  free(st->tags);
  free(st->limits);
  free(st->counts);
  memset(st, 0, sizeof *st);
}

/* ---- protobuf pieces ---- */

/* SummaryMetadata (plugin_data = 1 { plugin_name = 1, content = 2 }):
 * which plugin wrote a value, and its content bytes. */
static int plugin_kind(const uint8_t *md, size_t len, const uint8_t **content,
                       size_t *clen)
{
  pmcp__pb r, r2;
  pmcp__pb_field f, g;
  pmcp__pb_init(&r, md, len);
  int rc, kind = PMCP__TB_UNKNOWN;
  *content = NULL;
  *clen = 0;
  while ((rc = pmcp__pb_next(&r, &f)) == 1) {
    if (f.num != 1 || f.wire != PMCP__PB_LEN)
      continue;
    pmcp__pb_init(&r2, f.data, f.len);
    while ((rc = pmcp__pb_next(&r2, &g)) == 1) {
      if (g.wire != PMCP__PB_LEN)
        continue;
      if (g.num == 2) {
        *content = g.data;
        *clen = g.len;
      } else if (g.num == 1) {
        if (g.len == 7 && memcmp(g.data, "scalars", 7) == 0)
          kind = PMCP__TB_SCALAR;
        else if (g.len == 10 && memcmp(g.data, "histograms", 10) == 0)
          kind = PMCP__TB_HISTO;
        else if (g.len == 7 && memcmp(g.data, "hparams", 7) == 0)
          kind = PMCP__TB_HPARAMS;
        else
          kind = PMCP__TB_OTHER;
      }
    }
    if (rc < 0)
      return -1;
  }
  return rc < 0 ? -1 : kind;
}

/* The hparams plugin's HParamsPluginData: session_start_info = 3 {
 * hparams = 1 (map<string, google.protobuf.Value>: key = 1, value = 2) }.
 * Value: null = 1, number = 2, string = 3, bool = 4 (struct and list
 * values are skipped). Each hyperparameter becomes a run parameter. */
static int hparams(pmcp__imp_ctx *cx, pmcp__tb_state *st, const uint8_t *d,
                   size_t len, int *sink_err)
{
  pmcp__pb r, rs, re, rv;
  pmcp__pb_field f, g, h, k;
  pmcp__pb_init(&r, d, len);
  int rc;
  while ((rc = pmcp__pb_next(&r, &f)) == 1) {
    if (f.num != 3 || f.wire != PMCP__PB_LEN)
      continue;
    pmcp__pb_init(&rs, f.data, f.len);
    while ((rc = pmcp__pb_next(&rs, &g)) == 1) {
      if (g.num != 1 || g.wire != PMCP__PB_LEN)
        continue;
      pmcp__pb_field key = {0}, val = {0};
      int has_key = 0, has_val = 0;
      pmcp__pb_init(&re, g.data, g.len);
      while ((rc = pmcp__pb_next(&re, &h)) == 1) {
        if (h.num == 1 && h.wire == PMCP__PB_LEN) {
          key = h;
          has_key = 1;
        } else if (h.num == 2 && h.wire == PMCP__PB_LEN) {
          val = h;
          has_val = 1;
        }
      }
      if (rc < 0 || !has_key || key.len == 0 || key.len > 200 ||
          !pmcp__imp_utf8_text(key.data, key.len))
        return -1;
      pmcp__imp_value v = {PMCP__IV_NULL, NULL, 0, 0};
      char *str = NULL;
      int ok = 1;
      if (has_val) {
        pmcp__pb_init(&rv, val.data, val.len);
        while ((rc = pmcp__pb_next(&rv, &k)) == 1) {
          if (k.num == 1 && k.wire == PMCP__PB_VARINT) {
            v.type = PMCP__IV_NULL;
          } else if (k.num == 2 && k.wire == PMCP__PB_I64) {
            double x = pmcp__pb_double(k.u);
            if (x == floor(x) && fabs(x) < 9e15) {
              v.type = PMCP__IV_INT; /* 32 is an int, 0.001 a float */
              v.i = (int64_t)x;
            } else {
              v.type = PMCP__IV_FLOAT;
              v.f = x;
            }
          } else if (k.num == 3 && k.wire == PMCP__PB_LEN) {
            if (!pmcp__imp_utf8_text(k.data, k.len)) {
              free(str);
              return -1;
            }
            free(str);
            str = malloc(k.len + 1);
            if (!str)
              return -2;
            memcpy(str, k.data, k.len);
            str[k.len] = '\0';
            v.type = PMCP__IV_STR;
            v.s = str;
          } else if (k.num == 4 && k.wire == PMCP__PB_VARINT) {
            v.type = PMCP__IV_BOOL;
            v.i = k.u != 0;
          } else if (k.num == 5 || k.num == 6) {
            ok = 0; /* struct / list: not a scalar parameter */
          }
        }
        if (rc < 0) {
          free(str);
          return -1;
        }
      }
      char *name = malloc(key.len + 1);
      if (!name) {
        free(str);
        return -2;
      }
      memcpy(name, key.data, key.len);
      name[key.len] = '\0';
      int src = 0;
      if (ok)
        src = pmcp__imp_run_attr(cx, PMCP__IA_PARAM, name, &v);
      else
        st->skipped++;
      free(name);
      free(str);
      if (src) {
        *sink_err = 1;
        return src;
      }
    }
    if (rc < 0)
      return -1;
  }
  return rc < 0 ? -1 : 0;
}

enum { DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_INT64 = 9,
       DT_BOOL = 10, DT_BFLOAT16 = 14, DT_HALF = 19 };

static double half_to_double(uint32_t h)
{
  int e = (h >> 10) & 0x1F;
  double m = h & 0x3FF;
  double v;
  if (e == 0)
    v = ldexp(m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

typedef struct tensor {
  int dtype;
  int64_t dims[4];
  int rank; /* -1: more than 4 dims or malformed shape */
  const uint8_t *content;
  size_t content_len;
  pmcp__pb_field vals; /* the first *_val field, if any */
  int has_vals;
} tensor;

static int read_tensor(const uint8_t *d, size_t len, tensor *t)
{
  memset(t, 0, sizeof *t);
  pmcp__pb r, rs, rd;
  pmcp__pb_field f, g, h;
  pmcp__pb_init(&r, d, len);
  int rc;
  while ((rc = pmcp__pb_next(&r, &f)) == 1) {
    switch (f.num) {
    case 1:
      if (f.wire == PMCP__PB_VARINT)
        t->dtype = (int)f.u;
      break;
    case 2: /* TensorShapeProto: dim = 2 { size = 1 } */
      if (f.wire != PMCP__PB_LEN)
        return -1;
      pmcp__pb_init(&rs, f.data, f.len);
      while ((rc = pmcp__pb_next(&rs, &g)) == 1) {
        if (g.num != 2 || g.wire != PMCP__PB_LEN)
          continue;
        int64_t size = 0;
        pmcp__pb_init(&rd, g.data, g.len);
        while ((rc = pmcp__pb_next(&rd, &h)) == 1)
          if (h.num == 1 && h.wire == PMCP__PB_VARINT)
            size = (int64_t)h.u;
        if (rc < 0)
          return -1;
        if (t->rank >= 0 && t->rank < 4)
          t->dims[t->rank++] = size;
        else
          t->rank = -1;
      }
      if (rc < 0)
        return -1;
      break;
    case 4:
      if (f.wire == PMCP__PB_LEN) {
        t->content = f.data;
        t->content_len = f.len;
      }
      break;
    case 5: case 6: case 7: case 10: case 11: case 13:
      if (!t->has_vals) {
        t->vals = f;
        t->has_vals = 1;
      }
      break;
    default:
      break;
    }
  }
  return rc < 0 ? -1 : 0;
}

static size_t dtype_size(int dt)
{
  switch (dt) {
  case DT_FLOAT: case DT_INT32: return 4;
  case DT_DOUBLE: case DT_INT64: return 8;
  case DT_BOOL: return 1;
  case DT_HALF: case DT_BFLOAT16: return 2;
  default: return 0;
  }
}

static double raw_elem(int dt, const uint8_t *p)
{
  uint64_t v = 0;
  size_t n = dtype_size(dt);
  for (size_t i = n; i > 0; i--)
    v = (v << 8) | p[i - 1];
  switch (dt) {
  case DT_FLOAT: return pmcp__pb_float((uint32_t)v);
  case DT_DOUBLE: return pmcp__pb_double(v);
  case DT_INT32: return (double)(int32_t)(uint32_t)v;
  case DT_INT64: return (double)(int64_t)v;
  case DT_BOOL: return v ? 1.0 : 0.0;
  case DT_HALF: return half_to_double((uint32_t)v);
  case DT_BFLOAT16: return pmcp__pb_float((uint32_t)v << 16);
  default: return NAN;
  }
}

/* Element @p i of a tensor, from tensor_content or from its first *_val
 * field. 0 or -1 (out of range or unsupported dtype). */
static int tensor_elem(const tensor *t, size_t i, double *out)
{
  size_t es = dtype_size(t->dtype);
  if (!es)
    return -1;
  if (t->content) {
    if (t->content_len / es <= i)
      return -1;
    *out = raw_elem(t->dtype, t->content + i * es);
    return 0;
  }
  if (!t->has_vals)
    return -1;
  const pmcp__pb_field *f = &t->vals;
  if (f->wire != PMCP__PB_LEN) { /* a single unpacked element */
    if (i != 0)
      return -1;
    if (t->dtype == DT_HALF || t->dtype == DT_BFLOAT16)
      *out = raw_elem(t->dtype, (const uint8_t[]){(uint8_t)f->u,
                                                  (uint8_t)(f->u >> 8)});
    else if (f->wire == PMCP__PB_VARINT && t->dtype == DT_INT32)
      *out = (double)(int32_t)f->u;
    else if (pmcp__pb_as_double(f, out) != 0)
      return -1;
    return 0;
  }
  /* Packed: fixed-width for float/double, varints otherwise. */
  if (f->num == 5 || f->num == 6) {
    size_t w = f->num == 5 ? 4 : 8;
    if (f->len / w <= i)
      return -1;
    *out = raw_elem(f->num == 5 ? DT_FLOAT : DT_DOUBLE, f->data + i * w);
    return 0;
  }
  const uint8_t *p = f->data, *end = f->data + f->len;
  uint64_t v = 0;
  for (size_t k = 0; k <= i; k++)
    if (pmcp__pb_varint(&p, end, &v) != 0)
      return -1;
  if (t->dtype == DT_HALF || t->dtype == DT_BFLOAT16)
    *out = raw_elem(t->dtype, (const uint8_t[]){(uint8_t)v, (uint8_t)(v >> 8)});
  else if (t->dtype == DT_INT32)
    *out = (double)(int32_t)v;
  else if (t->dtype == DT_BOOL)
    *out = v ? 1.0 : 0.0;
  else
    *out = (double)(int64_t)v;
  return 0;
}

static int read_histo(pmcp__tb_state *st, const uint8_t *d, size_t len,
                      pmcp__imp_hist *h)
{
  pmcp__pb r;
  pmcp__pb_field f;
  size_t nl = 0, nc = 0;
  memset(h, 0, sizeof *h);
  h->min = h->max = h->num = h->sum = h->sum_squares = NAN;
  pmcp__pb_init(&r, d, len);
  int rc;
  while ((rc = pmcp__pb_next(&r, &f)) == 1) {
    double v;
    switch (f.num) {
    case 1: case 2: case 3: case 4: case 5:
      if (pmcp__pb_as_double(&f, &v) != 0)
        return -1;
      if (f.num == 1) h->min = v;
      else if (f.num == 2) h->max = v;
      else if (f.num == 3) h->num = v;
      else if (f.num == 4) h->sum = v;
      else h->sum_squares = v;
      break;
    case 6:
      rc = pmcp__pb_doubles(&f, &st->limits, &nl, &st->lcap);
      if (rc)
        return rc == -2 ? -2 : -1;
      break;
    case 7:
      rc = pmcp__pb_doubles(&f, &st->counts, &nc, &st->ccap);
      if (rc)
        return rc == -2 ? -2 : -1;
      break;
    default:
      break;
    }
  }
  if (rc < 0 || nl != nc)
    return -1;
  h->n = nl;
  h->limits = st->limits;
  h->counts = st->counts;
  return 0;
}

static int grow2(pmcp__tb_state *st, size_t n)
{
  if (n > st->lcap) {
    double *a = realloc(st->limits, n * sizeof *a);
    if (!a)
      return -2;
    st->limits = a;
    st->lcap = n;
  }
  if (n > st->ccap) {
    double *a = realloc(st->counts, n * sizeof *a);
    if (!a)
      return -2;
    st->counts = a;
    st->ccap = n;
  }
  return 0;
}

/* The histograms plugin: a [k, 3] tensor of (left, right, count) rows. */
static int tensor_histo(pmcp__tb_state *st, const tensor *t, pmcp__imp_hist *h)
{
  if (t->rank != 2 || t->dims[1] != 3 || t->dims[0] < 0 ||
      t->dims[0] > (1 << 24))
    return -1;
  /* the plugin writes float64 (older versions float32); anything else is
   * left out rather than decoded element by element */
  if (t->dtype != DT_DOUBLE && t->dtype != DT_FLOAT)
    return 1;
  size_t k = (size_t)t->dims[0];
  /* the values must be there before any memory is reserved for them: a
   * few bytes must not claim millions of buckets */
  if (k && tensor_elem(t, 3 * k - 1, &(double){0}) != 0)
    return -1;
  if (k && grow2(st, k) != 0)
    return -2;
  memset(h, 0, sizeof *h);
  h->sum = h->sum_squares = NAN;
  h->num = 0;
  for (size_t i = 0; i < k; i++) {
    double left, right, count;
    if (tensor_elem(t, 3 * i, &left) || tensor_elem(t, 3 * i + 1, &right) ||
        tensor_elem(t, 3 * i + 2, &count))
      return -1;
    if (i == 0)
      h->min = left;
    h->max = right;
    st->limits[i] = right;
    st->counts[i] = count;
    h->num += count;
  }
  if (k == 0)
    h->min = h->max = NAN;
  h->n = k;
  h->limits = st->limits;
  h->counts = st->counts;
  return 0;
}

/* One Summary.Value. Returns 0, or -1 (malformed), -2 (memory), or a
 * sink error (negative PMCP code, flagged by *sink_err). */
static int one_value(pmcp__imp_ctx *cx, pmcp__tb_state *st, const uint8_t *d,
                     size_t len, int64_t step, double wall, int *sink_err)
{
  pmcp__pb r;
  pmcp__pb_field f, tag = {0}, simple = {0}, histo = {0}, tens = {0};
  int has_tag = 0, has_simple = 0, has_histo = 0, has_tensor = 0;
  int kind = PMCP__TB_UNKNOWN;
  const uint8_t *content = NULL;
  size_t content_len = 0;
  pmcp__pb_init(&r, d, len);
  int rc;
  while ((rc = pmcp__pb_next(&r, &f)) == 1) {
    switch (f.num) {
    case 1: /* tag */
      if (f.wire != PMCP__PB_LEN)
        return -1;
      tag = f;
      has_tag = 1;
      break;
    case 7: /* node_name: the tag of very old files */
      if (f.wire == PMCP__PB_LEN && !has_tag)
        tag = f;
      break;
    case 2:
      if (f.wire != PMCP__PB_I32)
        return -1;
      simple = f;
      has_simple = 1;
      break;
    case 5:
      if (f.wire != PMCP__PB_LEN)
        return -1;
      histo = f;
      has_histo = 1;
      break;
    case 8:
      if (f.wire != PMCP__PB_LEN)
        return -1;
      tens = f;
      has_tensor = 1;
      break;
    case 9:
      if (f.wire != PMCP__PB_LEN)
        return -1;
      kind = plugin_kind(f.data, f.len, &content, &content_len);
      if (kind < 0)
        return -1;
      break;
    default: /* image, audio, obsolete histograms: not ours */
      break;
    }
  }
  if (rc < 0)
    return -1;
  if (kind == PMCP__TB_HPARAMS) /* hyperparameters, not a series */
    return content ? hparams(cx, st, content, content_len, sink_err) : 0;
  if (tag.len == 0) { /* no tag: nothing to file the value under */
    st->skipped++;
    return 0;
  }
  if (!pmcp__imp_utf8_text(tag.data, tag.len))
    return -1;
  pmcp__tb_tag *slot = kind_slot(st, tag.data, tag.len, 1);
  if (!slot)
    return -2;
  if (kind != PMCP__TB_UNKNOWN)
    slot->kind = kind;
  else
    kind = slot->kind;
  const char *name = slot->name; /* NUL-terminated copy */
  int src = 0;
  if (has_simple) {
    src = pmcp__imp_scalar(cx, name, step, wall,
                           (double)pmcp__pb_float((uint32_t)simple.u));
  } else if (has_histo) {
    pmcp__imp_hist h;
    rc = read_histo(st, histo.data, histo.len, &h);
    if (rc)
      return rc;
    src = pmcp__imp_histogram(cx, name, step, wall, &h);
  } else if (has_tensor && kind != PMCP__TB_OTHER) {
    tensor t;
    if (read_tensor(tens.data, tens.len, &t) != 0)
      return -1;
    if (kind == PMCP__TB_HISTO) {
      pmcp__imp_hist h;
      rc = tensor_histo(st, &t, &h);
      if (rc == 1) {
        st->skipped++;
        return 0;
      }
      if (rc)
        return rc;
      src = pmcp__imp_histogram(cx, name, step, wall, &h);
    } else {
      int scalar_shape = t.rank >= 0;
      for (int i = 0; i < t.rank && scalar_shape; i++)
        scalar_shape = t.dims[i] == 1;
      double v;
      if (!scalar_shape || tensor_elem(&t, 0, &v) != 0) {
        if (kind == PMCP__TB_SCALAR)
          return -1; /* declared a scalar but is not one */
        st->skipped++;
        return 0;
      }
      src = pmcp__imp_scalar(cx, name, step, wall, v);
    }
  } else {
    st->skipped++;
  }
  if (src) {
    *sink_err = 1;
    return src;
  }
  return 0;
}

int pmcp__tb_event(pmcp__imp_ctx *cx, pmcp__tb_state *st, const uint8_t *d,
                   size_t len, int *sink_err)
{
  pmcp__pb r, rs;
  pmcp__pb_field f, g;
  double wall = NAN;
  int64_t step = 0;
  const uint8_t *summary = NULL;
  size_t summary_len = 0;
  *sink_err = 0;
  pmcp__pb_init(&r, d, len);
  int rc;
  /* The summary may come before step on the wire: read the whole event
   * first. */
  while ((rc = pmcp__pb_next(&r, &f)) == 1) {
    if (f.num == 1) {
      if (f.wire != PMCP__PB_I64)
        return -1;
      wall = pmcp__pb_double(f.u);
    } else if (f.num == 2) {
      if (f.wire != PMCP__PB_VARINT)
        return -1;
      step = (int64_t)f.u;
    } else if (f.num == 5) {
      if (f.wire != PMCP__PB_LEN)
        return -1;
      summary = f.data;
      summary_len = f.len;
    }
  }
  if (rc < 0)
    return -1;
  st->events++;
  if (!summary)
    return 0;
  pmcp__pb_init(&rs, summary, summary_len);
  while ((rc = pmcp__pb_next(&rs, &g)) == 1) {
    if (g.num != 1)
      continue;
    if (g.wire != PMCP__PB_LEN)
      return -1;
    int vrc = one_value(cx, st, g.data, g.len, step, wall, sink_err);
    if (vrc)
      return vrc;
  }
  return rc < 0 ? -1 : 0;
}
