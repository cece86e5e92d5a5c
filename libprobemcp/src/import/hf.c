/* SPDX-License-Identifier: MIT */
/* `probe import hf FILE`: a Hugging Face Trainer's trainer_state.json.
 * log_history is a list of entries, each with a "step" and the numbers
 * logged at it (loss, learning_rate, eval_*, epoch, grad_norm, the final
 * train_* summary): every number becomes a point of the series of that
 * name at that step. The other top-level fields (global_step, epoch,
 * best_metric, max_steps, ...) become run attributes "trainer/<field>",
 * and best_model_checkpoint a checkpoint marked best.
 * Python's json writes NaN and Infinity bare, which JSON (and cJSON) do
 * not allow; they are rewritten before parsing, outside strings only. */
#include "import/import.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import/pyjson.h"
#include "probemcp/error.h"
#include "util/buf.h"

/* Marker strings standing for Python's bare NaN / Infinity. A real string
 * with this text would be a string, not a number: numbers are only read
 * from cJSON number nodes or from these exact markers in number places. */
#define NAN_MARK "\x01NaN"
#define PINF_MARK "\x01Inf"
#define NINF_MARK "\x01-Inf"

/* Copies @p s, replacing bare NaN / Infinity / -Infinity (outside
 * strings) by marker strings. Line breaks are kept, so line numbers of
 * parse errors stay right. */
int pmcp__hf_python_json(const char *s, size_t len, pmcp_buf *out)
{
  int in_str = 0;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (in_str) {
      if (c == '\\' && i + 1 < len) {
        if (pmcp__buf_append(out, s + i, 2))
          return PMCP_ENOMEM;
        i++;
        continue;
      }
      if (c == '"')
        in_str = 0;
    } else if (c == '"') {
      in_str = 1;
    } else if (c == 'N' && len - i >= 3 && memcmp(s + i, "NaN", 3) == 0) {
      if (pmcp__buf_puts(out, "\"\\u0001NaN\""))
        return PMCP_ENOMEM;
      i += 2;
      continue;
    } else if (c == 'I' && len - i >= 8 && memcmp(s + i, "Infinity", 8) == 0) {
      if (pmcp__buf_puts(out, "\"\\u0001Inf\""))
        return PMCP_ENOMEM;
      i += 7;
      continue;
    } else if (c == '-' && len - i >= 9 &&
               memcmp(s + i, "-Infinity", 9) == 0) {
      if (pmcp__buf_puts(out, "\"\\u0001-Inf\""))
        return PMCP_ENOMEM;
      i += 8;
      continue;
    }
    if (pmcp__buf_putc(out, c))
      return PMCP_ENOMEM;
  }
  return 0;
}

/* A number node, or one of the markers. 1 and *out, or 0. */
int pmcp__hf_number(const cJSON *j, double *out)
{
  if (cJSON_IsNumber(j)) {
    *out = j->valuedouble;
    return 1;
  }
  if (cJSON_IsString(j) && j->valuestring) {
    if (strcmp(j->valuestring, NAN_MARK) == 0) {
      *out = NAN;
      return 1;
    }
    if (strcmp(j->valuestring, PINF_MARK) == 0) {
      *out = INFINITY;
      return 1;
    }
    if (strcmp(j->valuestring, NINF_MARK) == 0) {
      *out = -INFINITY;
      return 1;
    }
  }
  return 0;
}

static int line_of(const char *buf, const char *at)
{
  int line = 1;
  for (const char *p = buf; p < at; p++)
    line += *p == '\n';
  return line;
}

/* Parses a JSON text that may hold Python's NaN / Infinity. On failure
 * sets "PATH: line N: invalid JSON". */
cJSON *pmcp__hf_parse(pmcp__imp_ctx *cx, const char *path, int base_line,
                      const char *s, size_t len)
{
  pmcp_buf b = PMCP_BUF_INIT;
  if (pmcp__hf_python_json(s, len, &b) || pmcp__buf_reserve(&b, 0)) {
    pmcp__imp_fail(cx, PMCP_ENOMEM, "%s: out of memory", path);
    pmcp_buf_dispose(&b);
    return NULL;
  }
  const char *end = NULL;
  cJSON *j = cJSON_ParseWithLengthOpts(b.ptr, b.len, &end, 0);
  if (!j) {
    int line = base_line + line_of(b.ptr, end && end >= b.ptr &&
                                                  end <= b.ptr + b.len
                                              ? end
                                              : b.ptr) - 1;
    pmcp__imp_fail(cx, PMCP_ECORRUPT, "%s: line %d: invalid JSON", path,
                   line);
  } else if (end && end < b.ptr + b.len) {
    const char *p = end;
    while (p < b.ptr + b.len && (*p == ' ' || *p == '\n' || *p == '\r' ||
                                 *p == '\t'))
      p++;
    if (p < b.ptr + b.len) {
      pmcp__imp_fail(cx, PMCP_ECORRUPT,
                     "%s: line %d: text after the JSON value", path,
                     base_line + line_of(b.ptr, p) - 1);
      cJSON_Delete(j);
      j = NULL;
    }
  }
  pmcp_buf_dispose(&b);
  return j;
}

static int attr_from_json(pmcp__imp_ctx *cx, const char *key, const cJSON *j)
{
  pmcp__imp_value v = {PMCP__IV_NULL, NULL, 0, 0};
  char *json = NULL;
  double d;
  if (cJSON_IsBool(j)) {
    v.type = PMCP__IV_BOOL;
    v.i = cJSON_IsTrue(j);
  } else if (pmcp__hf_number(j, &d)) {
    if (cJSON_IsNumber(j) && d == floor(d) && fabs(d) < 9e15) {
      v.type = PMCP__IV_INT;
      v.i = (int64_t)d;
    } else {
      v.type = PMCP__IV_FLOAT;
      v.f = d;
    }
  } else if (cJSON_IsString(j)) {
    v.type = PMCP__IV_STR;
    v.s = j->valuestring;
  } else if (cJSON_IsArray(j) || cJSON_IsObject(j)) {
    json = cJSON_PrintUnformatted(j);
    if (!json)
      return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
    v.type = PMCP__IV_JSON;
    v.s = json;
  }
  int rc = pmcp__imp_run_attr(cx, PMCP__IA_ATTR, key, &v);
  cJSON_free(json);
  return rc;
}

/* "…/checkpoint-3000" -> step 3000, or -1. */
static int64_t checkpoint_step(const char *name)
{
  const char *d = strrchr(name, '-');
  int64_t v;
  if (!d || pmcp__imp_parse_int64(d + 1, strlen(d + 1), &v) != 0 || v < 0)
    return -1;
  return v;
}

static char *run_display_name(const char *path)
{
  char *dir = pmcp__imp_dirname(path);
  if (!dir)
    return NULL;
  char *rp = realpath(dir, NULL);
  const char *b = pmcp__imp_basename(rp ? rp : dir);
  char *name;
  if (!*b || strcmp(b, "/") == 0) {
    name = strdup("trainer");
  } else if (strcmp(b, "last-checkpoint") == 0 ||
             strncmp(b, "checkpoint-", 11) == 0) {
    /* a checkpoint's copy of the state: name it after the training run */
    char *up = pmcp__imp_dirname(rp ? rp : dir);
    const char *ub = up ? pmcp__imp_basename(up) : "";
    size_t n = strlen(ub) + strlen(b) + 2;
    name = malloc(n);
    if (name)
      snprintf(name, n, "%s%s%s", ub, *ub && strcmp(ub, "/") ? "/" : "", b);
    free(up);
  } else {
    name = strdup(b);
  }
  free(rp);
  free(dir);
  return name;
}

int pmcp__import_hf(pmcp__imp_ctx *cx, const char *path)
{
  char *buf;
  size_t len;
  int rc = pmcp__imp_read_file(cx, path, &buf, &len);
  if (rc)
    return rc;
  char *name = NULL;
  cJSON *root = pmcp__hf_parse(cx, path, 1, buf, len);
  if (!root) {
    rc = PMCP_ECORRUPT;
    goto out;
  }
  const cJSON *hist = cJSON_GetObjectItemCaseSensitive(root, "log_history");
  if (!cJSON_IsObject(root) || !cJSON_IsArray(hist)) {
    rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                        "%s: not a trainer_state.json (no \"log_history\" "
                        "list)",
                        path);
    goto out;
  }
  char hex[65], key[96];
  if (pmcp__imp_sha256_hex(buf, len, hex)) {
    rc = pmcp__imp_fail(cx, PMCP_EINTERNAL, "sha256 failed");
    goto out;
  }
  snprintf(key, sizeof key, "hf:%.32s", hex);
  name = cx->run_name ? strdup(cx->run_name) : run_display_name(path);
  if (!name) {
    rc = pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
    goto out;
  }
  pmcp__imp_run run = {key, name, NULL, "hf", NULL, NULL, 0, -1, -1,
                       NULL, NULL, NULL, NULL, NULL};
  if ((rc = pmcp__imp_run_begin(cx, &run)))
    goto out;
  if (cx->skipping)
    goto end;
  const cJSON *it;
  cJSON_ArrayForEach(it, root)
  {
    if (it == hist || !it->string)
      continue;
    char k[160];
    snprintf(k, sizeof k, "trainer/%.140s", it->string);
    if ((rc = attr_from_json(cx, k, it)))
      goto out;
  }
  const cJSON *best =
      cJSON_GetObjectItemCaseSensitive(root, "best_model_checkpoint");
  if (cJSON_IsString(best) && best->valuestring && *best->valuestring) {
    const char *cp = pmcp__imp_basename(best->valuestring);
    const cJSON *bm = cJSON_GetObjectItemCaseSensitive(root, "best_metric");
    double bv = NAN;
    if (!pmcp__hf_number(bm, &bv))
      bv = NAN;
    if ((rc = pmcp__imp_checkpoint(cx, cp, checkpoint_step(cp), 1, bv)))
      goto out;
  }
  size_t idx = 0, total = (size_t)cJSON_GetArraySize(hist);
  cJSON_ArrayForEach(it, hist)
  {
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(it, "step");
    double sd = cJSON_IsNumber(st) ? st->valuedouble : 0.5;
    if (!cJSON_IsObject(it) || sd != floor(sd) || fabs(sd) > 9e15) {
      rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                          "%s: log_history[%zu]: no integer \"step\"", path,
                          idx);
      goto out;
    }
    const cJSON *f;
    cJSON_ArrayForEach(f, it)
    {
      double v;
      if (f == st || !f->string || !pmcp__hf_number(f, &v))
        continue;
      if (!f->string[0]) {
        rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                            "%s: log_history[%zu]: a value with an empty name",
                            path, idx);
        goto out;
      }
      if ((rc = pmcp__imp_scalar(cx, f->string, (int64_t)sd, NAN, v)))
        goto out;
    }
    idx++;
    if (idx % 1024 == 0)
      pmcp__imp_progress(cx, "hf", idx, total);
  }
  pmcp__imp_progress(cx, "hf", total, total);
end:
  rc = pmcp__imp_run_end(cx);
out:
  free(name);
  cJSON_Delete(root);
  free(buf);
  return rc;
}
