/* Shared parts of the `metrics` tool: the run's series catalog, label
 * conditions (`where`), and pages under the toolset's cursor key. */
#include "research/metrics.h"

#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/page.h"
#include "research/refs.h"

int pmcp__mx_scale_ok(const char *s)
{
  return s && (!strcmp(s, "step") || !strcmp(s, "env_step") || !strcmp(s, "episode"));
}

void pmcp__mx_catalog_free(pmcp__mx_catalog *c)
{
  if (!c)
    return;
  cJSON_Delete(c->json);
  free(c->s);
  memset(c, 0, sizeof *c);
}

static int64_t ji(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

static double jd(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

int pmcp__mx_catalog_read(pmcp_call *call, pmcp__research *rs,
                          const char *run_arg, pmcp__mx_catalog *out)
{
  memset(out, 0, sizeof *out);
  pmcp__ref ref;
  char err[256];
  if (pmcp__ref_parse_run(&ref, run_arg, err, sizeof err))
    return pmcp__rs_fail(call, "invalid_argument", "%s", err), 1;
  pmcp_buf b = PMCP_BUF_INIT;
  pthread_mutex_lock(&rs->lock);
  int rc = pmcp_store_series_list(rs->store, rs->tenant, ref.id, &b);
  pthread_mutex_unlock(&rs->lock);
  if (rc == PMCP_ENOTFOUND) {
    pmcp_buf_dispose(&b);
    return pmcp__rs_fail(call, "not_found", "run:%s not found", ref.id), 1;
  }
  if (rc) {
    pmcp_buf_dispose(&b);
    return pmcp__rs_fail(call, "store_error", "the metrics of run:%s cannot be read",
                         ref.id), 1;
  }
  out->json = cJSON_ParseWithLength(b.ptr ? b.ptr : "", b.len);
  pmcp_buf_dispose(&b);
  const cJSON *items = cJSON_GetObjectItemCaseSensitive(out->json, "items");
  if (!cJSON_IsArray(items)) {
    pmcp__mx_catalog_free(out);
    return pmcp__rs_fail(call, "store_error", "the series catalog is unreadable"), 1;
  }
  size_t n = (size_t)cJSON_GetArraySize(items);
  out->s = calloc(n ? n : 1, sizeof *out->s);
  if (!out->s) {
    pmcp__mx_catalog_free(out);
    return PMCP_ENOMEM;
  }
  const cJSON *it;
  cJSON_ArrayForEach(it, items)
  {
    pmcp__mx_series *s = &out->s[out->n++];
    snprintf(s->run, sizeof s->run, "run:%s", ref.id);
    s->id = ji(it, "series");
    s->key = pmcp__js(it, "key");
    s->labels = cJSON_GetObjectItemCaseSensitive(it, "labels");
    s->kind = pmcp__js(it, "kind");
    s->scale = pmcp__js(it, "scale");
    s->count = ji(it, "count");
    s->nonfinite = ji(it, "nonfinite");
    s->step_min = ji(it, "step_min");
    s->step_max = ji(it, "step_max");
    s->time_min = ji(it, "time_min");
    s->time_max = ji(it, "time_max");
    s->first = jd(it, "first");
    s->last = jd(it, "last");
    s->min = jd(it, "min");
    s->max = jd(it, "max");
    s->mean = jd(it, "mean");
    s->has_stats = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(it, "count"));
  }
  return 0;
}

/* ---- where ---------------------------------------------------------------- */

static const char *const ops[] = {"eq", "ne", "gt", "gte", "lt", "lte",
                                  "matches", "contains", "contains_any",
                                  "contains_all", "in", "not_in", "exists",
                                  NULL};

static int check_cond(const cJSON *c, int nested, char *err, size_t errlen)
{
  if (!cJSON_IsObject(c)) {
    snprintf(err, errlen, "where: each condition must be an object");
    return PMCP_EINVAL;
  }
  const cJSON *any = cJSON_GetObjectItemCaseSensitive(c, "any_of");
  if (any) {
    if (nested) {
      snprintf(err, errlen, "where: any_of groups do not nest");
      return PMCP_EINVAL;
    }
    if (!cJSON_IsArray(any) || cJSON_GetArraySize(any) == 0) {
      snprintf(err, errlen, "where: any_of must be a non-empty list of conditions");
      return PMCP_EINVAL;
    }
    const cJSON *x;
    cJSON_ArrayForEach(x, any)
    {
      int rc = check_cond(x, 1, err, errlen);
      if (rc)
        return rc;
    }
    return 0;
  }
  const cJSON *lab = cJSON_GetObjectItemCaseSensitive(c, "label");
  const cJSON *op = cJSON_GetObjectItemCaseSensitive(c, "op");
  const cJSON *val = cJSON_GetObjectItemCaseSensitive(c, "value");
  if (!cJSON_IsString(lab) || !*lab->valuestring) {
    snprintf(err, errlen, "where: a condition needs \"label\" (a label key) and \"op\"");
    return PMCP_EINVAL;
  }
  if (!cJSON_IsString(op)) {
    snprintf(err, errlen, "where: condition on label '%.64s' needs \"op\"", lab->valuestring);
    return PMCP_EINVAL;
  }
  size_t i = 0;
  while (ops[i] && strcmp(ops[i], op->valuestring))
    i++;
  if (!ops[i]) {
    snprintf(err, errlen,
             "where: unknown op '%.32s' (eq, ne, gt, gte, lt, lte, matches, contains, "
             "contains_any, contains_all, in, not_in, exists)", op->valuestring);
    return PMCP_EINVAL;
  }
  int list = !strcmp(op->valuestring, "in") || !strcmp(op->valuestring, "not_in") ||
             !strcmp(op->valuestring, "contains_any") ||
             !strcmp(op->valuestring, "contains_all");
  if (!strcmp(op->valuestring, "exists"))
    return 0;
  if (list ? !cJSON_IsArray(val) : !(cJSON_IsString(val) || cJSON_IsNumber(val) ||
                                     cJSON_IsBool(val))) {
    snprintf(err, errlen, "where: op '%s' needs %s \"value\"", op->valuestring,
             list ? "a list as" : "a string or number as");
    return PMCP_EINVAL;
  }
  if (!strcmp(op->valuestring, "matches")) {
    regex_t re;
    if (!cJSON_IsString(val) ||
        regcomp(&re, val->valuestring, REG_EXTENDED | REG_NOSUB) != 0) {
      snprintf(err, errlen, "where: 'matches' needs a valid regular expression");
      return PMCP_EINVAL;
    }
    regfree(&re);
  }
  return 0;
}

int pmcp__mx_where_check(const cJSON *where, char *err, size_t errlen)
{
  if (!where)
    return 0;
  if (!cJSON_IsArray(where)) {
    snprintf(err, errlen, "where must be a list of conditions");
    return PMCP_EINVAL;
  }
  if (cJSON_GetArraySize(where) > 32) {
    snprintf(err, errlen, "where: at most 32 conditions");
    return PMCP_EINVAL;
  }
  const cJSON *c;
  cJSON_ArrayForEach(c, where)
  {
    int rc = check_cond(c, 0, err, errlen);
    if (rc)
      return rc;
  }
  return 0;
}

/* The value of a condition as text (numbers in shortest form). */
static const char *val_text(const cJSON *v, char *buf, size_t n)
{
  if (cJSON_IsString(v))
    return v->valuestring;
  if (cJSON_IsBool(v))
    return cJSON_IsTrue(v) ? "true" : "false";
  if (cJSON_IsNumber(v)) {
    char t[PMCP_JSON_NUMBER_MAX];
    pmcp_json_format_number(v->valuedouble, PMCP_JSON_LOSSLESS, t);
    snprintf(buf, n, "%s", t);
    return buf;
  }
  return "";
}

static int cmp_num(const char *a, const cJSON *v, int *out)
{
  char *end;
  double x = strtod(a, &end);
  if (end == a || *end)
    return 0;
  double y;
  if (cJSON_IsNumber(v))
    y = v->valuedouble;
  else if (cJSON_IsString(v)) {
    y = strtod(v->valuestring, &end);
    if (end == v->valuestring || *end)
      return 0;
  } else
    return 0;
  *out = x < y ? -1 : x > y ? 1 : 0;
  return 1;
}

static int in_list(const char *s, const cJSON *list, int substring)
{
  const cJSON *x;
  char buf[64];
  cJSON_ArrayForEach(x, list)
  {
    const char *t = val_text(x, buf, sizeof buf);
    if (substring ? strstr(s, t) != NULL : strcmp(s, t) == 0)
      return 1;
  }
  return 0;
}

static int match_cond(const cJSON *c, const cJSON *labels)
{
  const cJSON *any = cJSON_GetObjectItemCaseSensitive(c, "any_of");
  if (any) {
    const cJSON *x;
    cJSON_ArrayForEach(x, any)
      if (match_cond(x, labels))
        return 1;
    return 0;
  }
  const char *lab = cJSON_GetObjectItemCaseSensitive(c, "label")->valuestring;
  const char *op = cJSON_GetObjectItemCaseSensitive(c, "op")->valuestring;
  const cJSON *val = cJSON_GetObjectItemCaseSensitive(c, "value");
  const cJSON *lv = cJSON_GetObjectItemCaseSensitive(labels, lab);
  char buf[64];
  const char *s = lv ? val_text(lv, buf, sizeof buf) : NULL;
  if (!strcmp(op, "exists"))
    return s != NULL;
  if (!strcmp(op, "ne") || !strcmp(op, "not_in")) {
    if (!s)
      return 1;
  } else if (!s) {
    return 0;
  }
  char vb[64];
  int k;
  if (!strcmp(op, "eq"))
    return !strcmp(s, val_text(val, vb, sizeof vb)) || (cmp_num(s, val, &k) && k == 0);
  if (!strcmp(op, "ne"))
    return !(!strcmp(s, val_text(val, vb, sizeof vb)) || (cmp_num(s, val, &k) && k == 0));
  if (!strcmp(op, "gt"))
    return cmp_num(s, val, &k) ? k > 0 : strcmp(s, val_text(val, vb, sizeof vb)) > 0;
  if (!strcmp(op, "gte"))
    return cmp_num(s, val, &k) ? k >= 0 : strcmp(s, val_text(val, vb, sizeof vb)) >= 0;
  if (!strcmp(op, "lt"))
    return cmp_num(s, val, &k) ? k < 0 : strcmp(s, val_text(val, vb, sizeof vb)) < 0;
  if (!strcmp(op, "lte"))
    return cmp_num(s, val, &k) ? k <= 0 : strcmp(s, val_text(val, vb, sizeof vb)) <= 0;
  if (!strcmp(op, "contains"))
    return strstr(s, val_text(val, vb, sizeof vb)) != NULL;
  if (!strcmp(op, "in"))
    return in_list(s, val, 0);
  if (!strcmp(op, "not_in"))
    return !in_list(s, val, 0);
  if (!strcmp(op, "contains_any"))
    return in_list(s, val, 1);
  if (!strcmp(op, "contains_all")) {
    const cJSON *x;
    cJSON_ArrayForEach(x, val)
      if (!strstr(s, val_text(x, vb, sizeof vb)))
        return 0;
    return 1;
  }
  if (!strcmp(op, "matches")) {
    regex_t re;
    if (regcomp(&re, val->valuestring, REG_EXTENDED | REG_NOSUB))
      return 0;
    int m = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return m;
  }
  return 0;
}

int pmcp__mx_where_match(const cJSON *where, const cJSON *labels)
{
  const cJSON *c;
  cJSON_ArrayForEach(c, where)
    if (!match_cond(c, labels))
      return 0;
  return 1;
}

/* ---- pages ----------------------------------------------------------------- */

size_t pmcp__mx_pos(pmcp_page *pg)
{
  const void *d = NULL;
  size_t n = 0;
  if (pmcp_page_position(pg, &d, &n) || !d || n != sizeof(uint64_t))
    return 0;
  uint64_t v;
  memcpy(&v, d, sizeof v);
  return (size_t)v;
}

void pmcp__mx_labels(pmcp_json *j, const cJSON *labels)
{
  pmcp_json_key(j, "labels");
  pmcp_json_object_begin(j);
  const cJSON *l;
  cJSON_ArrayForEach(l, labels)
  {
    pmcp_json_key(j, l->string);
    if (cJSON_IsString(l))
      pmcp_json_string(j, l->valuestring);
    else if (cJSON_IsNumber(l))
      pmcp_json_number_lossless(j, l->valuedouble);
    else
      pmcp_json_null(j);
  }
  pmcp_json_object_end(j);
}
