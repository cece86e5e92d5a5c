/* SPDX-License-Identifier: MIT */
/* How the entity views write what they show (pmcp_json): the store's
 * values with the research tools' number rules (pmcp__rs_number, spelled
 * as the answers have always spelled them), picked members, and
 * members of an object already written copied into another. */
#include "research/views/views.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "research/page.h"
#include "util/buf.h"
#include "util/json.h"

int pmcp__vw_number(pmcp_json *j, double d, int exact)
{
  /* exact: the shortest text that reads back as this double; integers
   * and non-finite values are written alike either way */
  if (exact && isfinite(d) && !(d == floor(d) && fabs(d) < 9007199254740992.0))
    return pmcp_json_number_lossless(j, d);
  return pmcp__rs_number(j, d);
}

/* A record view's object ("view" record, reproduce or inherited, with a
 * ref) keeps its numbers exact wherever it is: its values are the stored
 * ones, not summaries. */
static int is_exact_view(const cJSON *v)
{
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(v, "view");
  return cJSON_IsString(w) && pmcp__vw_exact_view(w->valuestring) &&
         cJSON_HasObjectItem(v, "ref");
}

int pmcp__vw_exact_view(const char *view)
{
  return strcmp(view, "record") == 0 || strcmp(view, "reproduce") == 0 ||
         strcmp(view, "inherited") == 0;
}

int pmcp__vw_value(pmcp_json *j, const cJSON *v, int exact)
{
  if (!v)
    return pmcp_json_null(j);
  if (cJSON_IsNumber(v))
    return pmcp__vw_number(j, v->valuedouble, exact);
  if (cJSON_IsString(v))
    return pmcp_json_string(j, v->valuestring);
  if (cJSON_IsBool(v))
    return pmcp_json_bool(j, cJSON_IsTrue(v));
  if (cJSON_IsRaw(v))
    return pmcp_json_raw(j, v->valuestring, strlen(v->valuestring));
  if (cJSON_IsArray(v)) {
    pmcp_json_array_begin(j);
    for (const cJSON *c = v->child; c; c = c->next)
      pmcp__vw_value(j, c, exact);
    return pmcp_json_array_end(j);
  }
  if (cJSON_IsObject(v)) {
    exact = exact || is_exact_view(v);
    pmcp_json_object_begin(j);
    for (const cJSON *c = v->child; c; c = c->next) {
      pmcp_json_key(j, c->string ? c->string : "");
      pmcp__vw_value(j, c, exact);
    }
    return pmcp_json_object_end(j);
  }
  return pmcp_json_null(j);
}

int pmcp__vw_excerpt(pmcp_json *j, const char *s, size_t max, int *cut)
{
  size_t shown;
  if (pmcp__rs_excerpt_to(j, s, strlen(s), max, &shown) && cut)
    *cut = 1;
  return pmcp_json_error(j);
}

int pmcp__vw_pick(pmcp_json *j, const cJSON *src, const char *const *keys, size_t max_chars,
                  int exact)
{
  /* one pass over the members finds each key's first member (a lookup
   * per key walked the members once for each) */
  enum { AT_MAX = 64 };
  const cJSON *at[AT_MAX];
  size_t nk = 0;
  while (keys[nk])
    nk++;
  size_t na = nk < AT_MAX ? nk : AT_MAX; /* keys past it are looked up one by one */
  memset(at, 0, na * sizeof at[0]);
  for (const cJSON *c = cJSON_IsObject(src) ? src->child : NULL; c; c = c->next) {
    const char *name = c->string;
    for (size_t i = 0; name && i < na; i++) {
      if (!at[i] && keys[i][0] == name[0] && strcmp(keys[i], name) == 0) {
        at[i] = c;
        break;
      }
    }
  }
  int cut = 0;
  for (size_t i = 0; i < nk; i++) {
    const cJSON *v = i < na ? at[i] : cJSON_GetObjectItemCaseSensitive(src, keys[i]);
    if (!v || cJSON_IsNull(v))
      continue;
    if (cJSON_IsNumber(v) && pmcp__rs_time_key(keys[i])) {
      if (!(v->valuedouble > 0 && v->valuedouble < 9.2e18))
        continue; /* 0: not recorded; past int64 ms: no time at all */
      char iso[32];
      pmcp__rs_iso((int64_t)v->valuedouble, iso, sizeof iso);
      pmcp_json_key(j, keys[i]);
      pmcp_json_string(j, iso);
    } else if (cJSON_IsString(v) && max_chars) {
      pmcp_json_key(j, keys[i]);
      pmcp__vw_excerpt(j, v->valuestring, max_chars, &cut);
    } else {
      pmcp_json_key(j, keys[i]);
      pmcp__vw_value(j, v, exact);
    }
  }
  if (cut) {
    pmcp_json_key(j, "truncated");
    pmcp_json_bool(j, 1);
  }
  return cut;
}

int pmcp__vw_each(const char *obj, size_t len, pmcp__vw_member_fn fn, void *ud)
{
  const char *p = obj, *end = obj + len;
  while (p < end && *p != '{')
    p++;
  if (p == end)
    return PMCP_EINVAL;
  p++;
  char small[128];
  int rc = 0;
  while (!rc && p < end && *p != '}') {
    if (*p == ',') {
      p++;
      continue;
    }
    /* the key: the object was written by pmcp_json, so it is well formed */
    size_t used = 0, klen = 0;
    if (pmcp_json_string_decode(p, (size_t)(end - p), PMCP_JSON_NO_NUL, NULL, &used, &klen,
                                NULL))
      return PMCP_EINVAL;
    char *key = klen < sizeof small ? small : malloc(klen + 1);
    if (!key)
      return PMCP_ENOMEM;
    pmcp_json_string_decode(p, (size_t)(end - p), PMCP_JSON_NO_NUL, key, NULL, NULL, NULL);
    key[klen] = '\0';
    p += used + 1; /* the key and its ':' */
    const char *ve = pmcp__json_skip(p, end);
    rc = ve ? fn(key, p, (size_t)(ve - p), ud) : PMCP_EINVAL;
    if (key != small)
      free(key);
    p = ve;
  }
  return rc;
}

typedef struct copy_ud {
  pmcp_json *j;
  const char *const *skip;
} copy_ud;

static int copy_member(const char *key, const char *val, size_t len, void *ud)
{
  copy_ud *c = ud;
  for (size_t i = 0; c->skip && c->skip[i]; i++) {
    if (strcmp(c->skip[i], key) == 0)
      return 0;
  }
  pmcp_json_key(c->j, key);
  return pmcp_json_raw(c->j, val, len);
}

int pmcp__vw_members(pmcp_json *j, const char *obj, size_t len, const char *const *skip)
{
  copy_ud c = {j, skip};
  int rc = pmcp__vw_each(obj, len, copy_member, &c);
  return rc ? rc : pmcp_json_error(j);
}

int pmcp__vw_take(pmcp_json *j, pmcp_buf *out)
{
  size_t n = 0;
  const char *t = pmcp_json_text(j, &n);
  int rc = t ? 0 : pmcp_json_error(j) ? pmcp_json_error(j) : PMCP_EMISUSE;
  out->len = 0;
  if (!rc)
    rc = pmcp__buf_append(out, t, n);
  pmcp_json_free(j);
  return rc;
}

int pmcp__vw_begin(pmcp__vctx *v, pmcp_json **j)
{
  *j = NULL;
  if (pmcp_json_new(j, 0))
    return PMCP_ENOMEM;
  pmcp_json_object_begin(*j);
  pmcp_json_key(*j, "ref");
  pmcp_json_string(*j, v->ref_text);
  pmcp_json_key(*j, "view");
  return pmcp_json_string(*j, v->view);
}

int pmcp__vw_end(pmcp__vctx *v, pmcp_json *j)
{
  pmcp_json_object_end(j);
  int rc = pmcp__vw_take(j, &v->head);
  v->has_head = rc == 0;
  return rc;
}
