/* SPDX-License-Identifier: MIT */
/* The one exact printer of JSON trees: the store's values go through it
 * (pmcp__cjson_print), and so does pmcp_json_normalize(), by which hosts
 * such as the probe CLI reach it. cJSON's own printer will not do: it takes
 * a double within a few ulps for the same (0.30000000000000004 comes out
 * as 0.3) and writes the host's decimal point. */
#include "util/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/jsonw.h"
#include "probemcp/error.h"
#include "probemcp/json.h"
#include "util/buf.h"
#include "util/cnum.h"

/* Deeper than cJSON's parser goes, so every tree it made prints; the bound
 * keeps the recursion off the end of a small thread stack. */
#define PRINT_DEPTH CJSON_NESTING_LIMIT

/* A finite number in shortest round-trip form; apart so that its buffer
 * is not in every frame of the recursion. */
static int put_number(pmcp_buf *b, double v)
{
  char tmp[PMCP_JSON_NUMBER_MAX];
  size_t n = pmcp_json_format_number(v, PMCP_JSON_LOSSLESS, tmp, sizeof tmp);
  return pmcp__buf_append(b, tmp, n);
}

static int put_tree(pmcp_buf *b, const cJSON *v, unsigned flags, int depth)
{
  if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
    int obj = cJSON_IsObject(v);
    if (depth >= PRINT_DEPTH)
      return PMCP_ETOOBIG;
    if (pmcp__buf_putc(b, obj ? '{' : '['))
      return PMCP_ENOMEM;
    for (const cJSON *c = v->child; c; c = c->next) {
      if (c != v->child && pmcp__buf_putc(b, ','))
        return PMCP_ENOMEM;
      if (obj) {
        const char *k = c->string ? c->string : "";
        if (pmcp__jw_put_string(b, k, strlen(k)) || pmcp__buf_putc(b, ':'))
          return PMCP_ENOMEM;
      }
      int rc = put_tree(b, c, flags, depth + 1);
      if (rc)
        return rc;
    }
    return pmcp__buf_putc(b, obj ? '}' : ']') ? PMCP_ENOMEM : 0;
  }
  if (cJSON_IsString(v)) {
    const char *s = v->valuestring ? v->valuestring : "";
    return pmcp__jw_put_string(b, s, strlen(s));
  }
  if (cJSON_IsNumber(v)) {
    if (isfinite(v->valuedouble))
      return put_number(b, v->valuedouble);
    if (flags & PMCP__PRINT_FINITE)
      return PMCP_EINVAL;
    return pmcp__buf_puts(b, "null"); /* as the store reads such a value back */
  }
  if (cJSON_IsTrue(v))
    return pmcp__buf_puts(b, "true");
  if (cJSON_IsFalse(v))
    return pmcp__buf_puts(b, "false");
  if (cJSON_IsNull(v))
    return pmcp__buf_puts(b, "null");
  if (cJSON_IsRaw(v) && v->valuestring && *v->valuestring)
    return pmcp__buf_puts(b, v->valuestring); /* the caller vouches for it, as in cJSON */
  return PMCP_EINVAL;
}

int pmcp__cjson_write(pmcp_buf *out, const cJSON *v, unsigned flags)
{
  if (!out || !v)
    return PMCP_EINVAL;
  size_t mark = out->len;
  int rc = put_tree(out, v, flags, 0);
  if (rc && out->ptr) {
    out->len = mark;
    out->ptr[mark] = '\0';
  }
  return rc;
}

char *pmcp__cjson_print(const cJSON *v)
{
  pmcp_buf b = PMCP_BUF_INIT;
  char *out = NULL;
  if (pmcp__cjson_write(&b, v, 0) == 0 && (out = cJSON_malloc(b.len + 1)))
    memcpy(out, b.ptr, b.len + 1);
  pmcp_buf_dispose(&b);
  return out;
}

/* Of JSON text: its deepest nesting, and whether a string holds \u0000
 * (cJSON, reading into C strings, would cut it off there). Exact for valid
 * text, which is all that is asked of it. */
static void scan(const char *p, size_t len, int *depth, int *nul)
{
  int d = 0, in = 0;
  *depth = 0;
  *nul = 0;
  for (size_t i = 0; i < len; i++) {
    char c = p[i];
    if (in) {
      if (c == '"') {
        in = 0;
      } else if (c == '\\') {
        if (len - i > 5 && memcmp(p + i + 1, "u0000", 5) == 0)
          *nul = 1;
        i++; /* the escaped character: never a closing quote */
      }
    } else if (c == '"') {
      in = 1;
    } else if (c == '{' || c == '[') {
      if (++d > *depth)
        *depth = d;
    } else if (c == '}' || c == ']') {
      d--;
    }
  }
}

/* cJSON reads at most 63 characters of a number (a longer literal fails
 * its parse): such literals are rewritten as their double, in 17
 * significant digits, before it sees the text. NULL when there is none
 * (*@p rc 0) or on an error (*@p rc: PMCP_EINVAL for a number beyond a
 * double's range, PMCP_ENOMEM). Runs in the C numeric locale. */
static char *shorten_numbers(const char *json, size_t len, size_t *outlen, int *rc)
{
  pmcp_buf b = PMCP_BUF_INIT;
  size_t done = 0; /* bytes of @p json copied to b */
  int in_str = 0;
  *rc = 0;
  for (size_t i = 0; i < len; i++) {
    char ch = json[i];
    if (in_str) {
      if (ch == '\\')
        i++;
      else if (ch == '"')
        in_str = 0;
      continue;
    }
    if (ch == '"') {
      in_str = 1;
      continue;
    }
    if (ch != '-' && (ch < '0' || ch > '9'))
      continue;
    size_t e = i;
    while (e < len && strchr("0123456789+-.eE", json[e]))
      e++;
    if (e - i > 63) {
      char *lit = strndup(json + i, e - i);
      double v = lit ? strtod(lit, NULL) : 0;
      free(lit);
      char num[40];
      int n = snprintf(num, sizeof num, "%.17g", v);
      if (!lit)
        *rc = PMCP_ENOMEM;
      else if (!isfinite(v))
        *rc = PMCP_EINVAL;
      else if (pmcp__buf_append(&b, json + done, i - done) ||
               pmcp__buf_append(&b, num, (size_t)n))
        *rc = PMCP_ENOMEM;
      if (*rc) {
        pmcp_buf_dispose(&b);
        return NULL;
      }
      done = e;
    }
    i = e - 1;
  }
  if (!done)
    return NULL;
  if (pmcp__buf_append(&b, json + done, len - done)) {
    *rc = PMCP_ENOMEM;
    pmcp_buf_dispose(&b);
    return NULL;
  }
  *outlen = b.len;
  return b.ptr; /* a pmcp_buf's storage: free() releases it */
}

int pmcp_json_normalize(const char *json, size_t len, pmcp_buf *out)
{
  if (!out || (!json && len))
    return PMCP_EINVAL;
  int depth = 0, nul = 0;
  if (json)
    scan(json, len, &depth, &nul);
  if (depth > PRINT_DEPTH)
    return PMCP_ETOOBIG; /* before the validator, which gives up a little deeper */
  if (!json || !pmcp__json_valid(json, len))
    return PMCP_EPARSE;
  if (nul)
    return PMCP_EINVAL;
  /* cJSON reads numbers with the host's decimal point */
  locale_t prev = pmcp__c_numeric_enter();
  size_t slen = 0;
  int rc = 0;
  char *shorter = shorten_numbers(json, len, &slen, &rc);
  cJSON *tree = rc ? NULL : shorter ? cJSON_ParseWithLength(shorter, slen)
                                    : cJSON_ParseWithLength(json, len);
  pmcp__c_numeric_leave(prev);
  free(shorter);
  if (rc)
    return rc;
  if (!tree)
    return PMCP_ENOMEM; /* the text is valid, within cJSON's nesting and numbers */
  rc = pmcp__cjson_write(out, tree, PMCP__PRINT_FINITE);
  cJSON_Delete(tree);
  return rc;
}
