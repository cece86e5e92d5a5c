/* SPDX-License-Identifier: MIT */
/* The emitters every parser calls (they count and skip), and small helpers
 * the parsers share: whole-file reads, number parsing as Python writes
 * numbers, UTF-8 checks, paths. */
#include "import/import.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "probemcp/error.h"
#include "util/buf.h"
#include "util/cnum.h"

int pmcp__imp_fail(pmcp__imp_ctx *cx, int code, const char *fmt, ...)
{
  if (cx->err.len == 0) {
    va_list ap;
    va_start(ap, fmt);
    if (pmcp__buf_vprintf(&cx->err, fmt, ap) != 0)
      code = PMCP_ENOMEM;
    va_end(ap);
  }
  return code;
}

static int sink_rc(pmcp__imp_ctx *cx, int rc, const char *what)
{
  if (rc < 0 && cx->err.len == 0)
    pmcp__imp_fail(cx, rc, "storing %s failed: %s", what, pmcp_strerror(rc));
  return rc;
}

int pmcp__imp_add_experiment(pmcp__imp_ctx *cx, const pmcp__imp_experiment *e)
{
  int rc = cx->sink->experiment ? cx->sink->experiment(cx, e) : 0;
  if (rc < 0)
    return sink_rc(cx, rc, "an experiment");
  if (rc == 0)
    cx->n.experiments++;
  return 0;
}

int pmcp__imp_run_begin(pmcp__imp_ctx *cx, const pmcp__imp_run *r)
{
  if (cx->in_run)
    return pmcp__imp_fail(cx, PMCP_EINTERNAL, "importer: nested run");
  int rc = cx->sink->run_begin ? cx->sink->run_begin(cx, r) : 0;
  if (rc < 0)
    return sink_rc(cx, rc, "a run");
  cx->in_run = 1;
  cx->skipping = rc == PMCP__IMP_SKIP;
  if (cx->skipping) {
    cx->n.runs_skipped++;
  } else {
    cx->n.runs++;
    if (r->deleted)
      cx->n.deleted_runs++;
  }
  return 0;
}

int pmcp__imp_run_attr(pmcp__imp_ctx *cx, int kind, const char *key,
                       const pmcp__imp_value *v)
{
  if (cx->skipping)
    return 0;
  int rc = cx->sink->run_attr ? cx->sink->run_attr(cx, kind, key, v) : 0;
  if (rc < 0)
    return sink_rc(cx, rc, "a run attribute");
  cx->n.attrs++;
  return 0;
}

int pmcp__imp_run_attr_str(pmcp__imp_ctx *cx, int kind, const char *key,
                           const char *s)
{
  pmcp__imp_value v = {PMCP__IV_STR, s, 0, 0};
  if (!s)
    v.type = PMCP__IV_NULL;
  return pmcp__imp_run_attr(cx, kind, key, &v);
}

int pmcp__imp_scalar(pmcp__imp_ctx *cx, const char *key, int64_t step,
                     double wall_s, double value)
{
  if (cx->skipping)
    return 0;
  int rc = cx->sink->scalar ? cx->sink->scalar(cx, key, step, wall_s, value)
                            : 0;
  if (rc < 0)
    return sink_rc(cx, rc, "a metric point");
  cx->n.points++;
  return 0;
}

int pmcp__imp_histogram(pmcp__imp_ctx *cx, const char *key, int64_t step,
                        double wall_s, const pmcp__imp_hist *h)
{
  if (cx->skipping)
    return 0;
  int rc = cx->sink->histogram
               ? cx->sink->histogram(cx, key, step, wall_s, h)
               : 0;
  if (rc < 0)
    return sink_rc(cx, rc, "a histogram");
  if (rc == 0)
    cx->n.histograms++;
  return 0;
}

int pmcp__imp_artifact(pmcp__imp_ctx *cx, const char *name, const void *data,
                       size_t len)
{
  if (cx->skipping)
    return 0;
  int rc = cx->sink->artifact ? cx->sink->artifact(cx, name, data, len) : 0;
  if (rc < 0)
    return sink_rc(cx, rc, "an artifact");
  cx->n.artifacts++;
  return 0;
}

int pmcp__imp_checkpoint(pmcp__imp_ctx *cx, const char *name, int64_t step,
                         int best, double value)
{
  if (cx->skipping)
    return 0;
  int rc = cx->sink->checkpoint ? cx->sink->checkpoint(cx, name, step, best, value)
                                : 0;
  if (rc < 0)
    return sink_rc(cx, rc, "a checkpoint");
  if (rc == 0)
    cx->n.checkpoints++;
  return 0;
}

int pmcp__imp_run_end(pmcp__imp_ctx *cx)
{
  if (!cx->in_run)
    return 0;
  int skipping = cx->skipping;
  cx->in_run = 0;
  cx->skipping = 0;
  if (skipping)
    return 0;
  int rc = cx->sink->run_end ? cx->sink->run_end(cx) : 0;
  return rc < 0 ? sink_rc(cx, rc, "a run") : 0;
}

int pmcp__imp_add_paper(pmcp__imp_ctx *cx, const pmcp__imp_paper *p)
{
  int rc = cx->sink->paper ? cx->sink->paper(cx, p) : 0;
  if (rc < 0)
    return sink_rc(cx, rc, "a paper");
  if (rc == PMCP__IMP_SKIP)
    cx->n.papers_skipped++;
  else
    cx->n.papers++;
  return 0;
}

void pmcp__imp_progress(pmcp__imp_ctx *cx, const char *what, uint64_t done,
                        uint64_t total)
{
  if (cx->progress)
    cx->progress(what, done, total, cx->progress_ud);
}

int pmcp__imp_read_file(pmcp__imp_ctx *cx, const char *path, char **out,
                        size_t *len)
{
  *out = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return pmcp__imp_fail(cx, PMCP_EIO, "%s: cannot open: %s", path,
                          strerror(errno));
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_reserve(&b, 4096);
  while (rc == 0) {
    size_t room = b.cap - b.len - 1;
    size_t got = fread(b.ptr + b.len, 1, room, f);
    b.len += got;
    b.ptr[b.len] = '\0';
    if (got < room) {
      if (ferror(f))
        rc = pmcp__imp_fail(cx, PMCP_EIO, "%s: read error", path);
      break;
    }
    rc = pmcp__buf_reserve(&b, b.cap);
  }
  fclose(f);
  if (rc) {
    if (rc == PMCP_ENOMEM)
      pmcp__imp_fail(cx, rc, "%s: out of memory", path);
    pmcp_buf_dispose(&b);
    return rc;
  }
  cx->n.files++;
  *len = b.len;
  *out = pmcp__buf_steal(&b, NULL);
  return 0;
}

int pmcp__imp_sha256_hex(const void *data, size_t len, char out[65])
{
  unsigned char md[32];
  unsigned int mdlen = 0;
  if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
      mdlen != 32)
    return PMCP_EINTERNAL;
  static const char hex[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++) {
    out[2 * i] = hex[md[i] >> 4];
    out[2 * i + 1] = hex[md[i] & 15];
  }
  out[64] = '\0';
  return 0;
}

void pmcp__imp_infer_value(const char *s, pmcp__imp_value *out)
{
  size_t len = strlen(s);
  memset(out, 0, sizeof *out);
  out->s = s;
  int64_t i;
  double d;
  if (pmcp__imp_parse_int64(s, len, &i) == 0) {
    out->type = PMCP__IV_INT;
    out->i = i;
  } else if (len && (s[len - 1] >= '0' && s[len - 1] <= '9') &&
             pmcp__imp_parse_double(s, len, &d) == 0) {
    /* Only digit-final text becomes a float: "nan" or "inf" as a
     * parameter is more likely a word than a number. */
    out->type = PMCP__IV_FLOAT;
    out->f = d;
  } else if (strcmp(s, "True") == 0 || strcmp(s, "true") == 0) {
    out->type = PMCP__IV_BOOL;
    out->i = 1;
  } else if (strcmp(s, "False") == 0 || strcmp(s, "false") == 0) {
    out->type = PMCP__IV_BOOL;
    out->i = 0;
  } else {
    out->type = PMCP__IV_STR;
  }
}

int pmcp__imp_utf8_text(const void *data, size_t len)
{
  const unsigned char *s = data;
  size_t i = 0;
  while (i < len) {
    unsigned c = s[i];
    if (c == 0)
      return 0;
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t n;
    unsigned min;
    if ((c & 0xE0) == 0xC0) {
      n = 1;
      min = 0x80;
      c &= 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      min = 0x800;
      c &= 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      min = 0x10000;
      c &= 0x07;
    } else {
      return 0;
    }
    if (len - i <= n)
      return 0;
    for (size_t k = 1; k <= n; k++) {
      if ((s[i + k] & 0xC0) != 0x80)
        return 0;
      c = (c << 6) | (s[i + k] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
      return 0;
    i += n + 1;
  }
  return 1;
}

const char *pmcp__imp_basename(const char *path)
{
  size_t n = strlen(path);
  while (n > 1 && path[n - 1] == '/')
    n--;
  size_t i = n;
  while (i > 0 && path[i - 1] != '/')
    i--;
  return path + i;
}

char *pmcp__imp_dirname(const char *path)
{
  size_t n = strlen(path);
  while (n > 1 && path[n - 1] == '/')
    n--;
  while (n > 0 && path[n - 1] != '/')
    n--;
  while (n > 1 && path[n - 1] == '/')
    n--;
  if (n == 0)
    return strdup(".");
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, path, n);
    d[n] = '\0';
  }
  return d;
}

char *pmcp__imp_join(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b);
  while (la > 1 && a[la - 1] == '/')
    la--;
  char *p = malloc(la + lb + 2);
  if (!p)
    return NULL;
  memcpy(p, a, la);
  p[la] = '/';
  memcpy(p + la + 1, b, lb + 1);
  return p;
}
