/* SPDX-License-Identifier: MIT */
/* The filter language (libprobemcp/src/filter): every operator, series
 * conditions, any_of groups, sorting, RE2 patterns (hostile ones
 * included) and every refusal. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filter/filter.h"
#include "filter/re.h"
#include "probemcp/error.h"

/* A test row: {"attrs": nested tree, "series": {key: {fn: value}}}. */
static const cJSON *row_attr(void *ud, const char *path)
{
  return pmcp__filter_walk(cJSON_GetObjectItemCaseSensitive(ud, "attrs"), path);
}

static int row_series(void *ud, const char *key, const char *fn, const char *scale,
                      const cJSON *labels, double *out)
{
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ud, "series"), key);
  if (!s)
    return 1;
  if (scale) {
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(s, "scale");
    if (!cJSON_IsString(sc) || strcmp(sc->valuestring, scale) != 0)
      return 1;
  }
  if (labels) {
    const cJSON *l;
    const cJSON *have = cJSON_GetObjectItemCaseSensitive(s, "labels");
    cJSON_ArrayForEach(l, labels)
    {
      const cJSON *h = cJSON_GetObjectItemCaseSensitive(have, l->string);
      if (!cJSON_IsString(h) || strcmp(h->valuestring, l->valuestring) != 0)
        return 1;
    }
  }
  if (!fn)
    return 0;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, fn);
  if (!cJSON_IsNumber(v))
    return 1;
  *out = v->valuedouble;
  return 0;
}

static cJSON *rows;

static void setup(void)
{
  rows = cJSON_Parse(
      "["
      "{\"attrs\":{\"sys\":{\"name\":\"alpha-1\",\"tags\":[\"base\",\"gpu\"],\"creation_time\":"
      "\"2024-01-02T00:00:00.000Z\"},\"config\":{\"optimizer\":\"adamw\",\"lr\":0.0005,"
      "\"layers\":12,\"amp\":true}},\"series\":{\"val/loss\":{\"last\":0.9,\"min\":0.7}}},"
      "{\"attrs\":{\"sys\":{\"name\":\"beta-2\",\"tags\":[\"gpu\"],\"creation_time\":"
      "\"2024-03-01T00:00:00.000Z\"},\"config\":{\"optimizer\":\"adamw\",\"lr\":0.01,"
      "\"layers\":24,\"amp\":false}},\"series\":{\"val/loss\":{\"last\":0.4,\"min\":0.35,"
      "\"scale\":\"STEP\",\"labels\":{\"rank\":\"0\"}}}},"
      "{\"attrs\":{\"sys\":{\"name\":\"gamma-3\",\"tags\":[],\"creation_time\":"
      "\"2024-02-01T00:00:00.000Z\"},\"config\":{\"optimizer\":\"sgd\",\"lr\":0.0001,"
      "\"layers\":12}},\"series\":{}},"
      "{\"attrs\":{\"sys\":{\"name\":\"delta-4\"},\"config\":{\"optimizer\":\"adamw\","
      "\"lr\":0.02}},\"series\":{\"val/loss\":{\"last\":0.8}}}"
      "]");
  ck_assert_ptr_nonnull(rows);
}

static void teardown(void)
{
  cJSON_Delete(rows);
}

/* The rows' datetime: sys/creation_time. */
static int is_time(void *ud, const char *path)
{
  (void)ud;
  return !strcmp(path, "sys/creation_time");
}

/* Which rows match @p filter, as a string of row indexes ("013"), with
 * @p time (may be NULL) saying which paths hold datetimes. */
static const char *which_t(const char *filter, int (*time)(void *, const char *))
{
  static char out[16];
  cJSON *j = cJSON_Parse(filter);
  ck_assert_msg(j != NULL, "bad test JSON %s", filter);
  pmcp__filter *f;
  char err[256];
  int rc = pmcp__filter_parse(j, &f, err, sizeof err);
  ck_assert_msg(rc == 0, "%s: %s", filter, err);
  size_t n = 0, i = 0;
  const cJSON *r;
  cJSON_ArrayForEach(r, rows)
  {
    pmcp__filter_row row = {row_attr, row_series, (void *)r, time};
    int m = pmcp__filter_match(f, &row);
    ck_assert_int_ge(m, 0);
    if (m)
      out[n++] = (char)('0' + i);
    i++;
  }
  out[n] = '\0';
  pmcp__filter_free(f);
  cJSON_Delete(j);
  return out;
}

static const char *which(const char *filter)
{
  return which_t(filter, NULL);
}

/* The refusal message for @p filter (must fail with PMCP_EINVAL). */
static const char *refused(const char *filter)
{
  static char err[256];
  cJSON *j = cJSON_Parse(filter);
  ck_assert_msg(j != NULL, "bad test JSON %s", filter);
  pmcp__filter *f = (pmcp__filter *)1;
  int rc = pmcp__filter_parse(j, &f, err, sizeof err);
  cJSON_Delete(j);
  ck_assert_msg(rc == PMCP_EINVAL, "%s: accepted", filter);
  ck_assert_ptr_null(f);
  return err;
}

#define MATCH(filter, expect) ck_assert_str_eq(which(filter), expect)
#define REFUSE(filter, needle)                                                  \
  do {                                                                          \
    const char *e_ = refused(filter);                                           \
    ck_assert_msg(strstr(e_, needle) != NULL, "%s: message '%s' lacks '%s'",    \
                  filter, e_, needle);                                          \
  } while (0)

/* A datetime compares as an instant: ISO 8601 in any spelling, epoch ms, a
 * date alone (midnight; its whole day for eq / ne / in / not_in); no other
 * string equals it; text operators read its text. Rows: 0 2024-01-02,
 * 1 2024-03-01, 2 2024-02-01 (midnights, UTC), 3 none. */
START_TEST(datetimes_as_instants)
{
#define T(f, want) ck_assert_str_eq(which_t("[{\"attr\":\"sys/creation_time\"," f "}]", is_time), want)
  T("\"op\":\"eq\",\"value\":\"2024-03-01\"", "1");
  T("\"op\":\"eq\",\"value\":\"2024-03-01T02:00:00+02:00\"", "1");
  T("\"op\":\"eq\",\"value\":\"2024-03-01T00:00:00.001Z\"", "");
  T("\"op\":\"gt\",\"value\":\"2024-01-15\"", "12");
  T("\"op\":\"gt\",\"value\":\"2024-03-01\"", "");
  T("\"op\":\"gte\",\"value\":\"2024-03-01\"", "1");
  T("\"op\":\"lt\",\"value\":1706745600000", "0");
  T("\"op\":\"lte\",\"value\":1706745600000", "02");
  T("\"op\":\"in\",\"value\":[\"2024-01-02\",\"2024-02-01 00:00\"]", "02");
  T("\"op\":\"not_in\",\"value\":[\"2024-01-02\"]", "12");
  T("\"op\":\"ne\",\"value\":\"2024-01-02\"", "12");
  T("\"op\":\"eq\",\"value\":\"yesterday\"", "");
  T("\"op\":\"ne\",\"value\":\"yesterday\"", "012");
  T("\"op\":\"gt\",\"value\":\"2024\"", "");
  T("\"op\":\"matches\",\"value\":\"^2024-0[12]\"", "02");
#undef T
  /* a string that only looks like a time stays a string */
  ck_assert_str_eq(which("[{\"attr\":\"sys/creation_time\",\"op\":\"eq\",\"value\":"
                         "\"2024-03-01\"}]"), "");
}
END_TEST

START_TEST(comparison_ops)
{
  MATCH("[]", "0123");
  MATCH("null", "0123");
  MATCH("[{\"attr\":\"config/optimizer\",\"op\":\"eq\",\"value\":\"adamw\"}]", "013");
  MATCH("[{\"attr\":\"config/optimizer\",\"op\":\"ne\",\"value\":\"adamw\"}]", "2");
  MATCH("[{\"attr\":\"config/layers\",\"op\":\"eq\",\"value\":12}]", "02");
  MATCH("[{\"attr\":\"config/amp\",\"op\":\"eq\",\"value\":true}]", "0");
  MATCH("[{\"attr\":\"config/amp\",\"op\":\"ne\",\"value\":true}]", "1");
  /* different types are never equal */
  MATCH("[{\"attr\":\"config/layers\",\"op\":\"eq\",\"value\":\"12\"}]", "");
  MATCH("[{\"attr\":\"config/lr\",\"op\":\"gt\",\"value\":0.01}]", "3");
  MATCH("[{\"attr\":\"config/lr\",\"op\":\"gte\",\"value\":0.01}]", "13");
  MATCH("[{\"attr\":\"config/lr\",\"op\":\"lt\",\"value\":0.001}]", "02");
  MATCH("[{\"attr\":\"config/lr\",\"op\":\"lte\",\"value\":0.0005}]", "02");
  MATCH("[{\"attr\":\"sys/creation_time\",\"op\":\"gte\",\"value\":\"2024-02-01\"}]", "12");
  /* a number compared with a string never holds */
  MATCH("[{\"attr\":\"sys/name\",\"op\":\"gt\",\"value\":1}]", "");
}
END_TEST

START_TEST(string_and_set_ops)
{
  MATCH("[{\"attr\":\"sys/name\",\"op\":\"contains\",\"value\":\"ta-\"}]", "13");
  MATCH("[{\"attr\":\"sys/tags\",\"op\":\"contains\",\"value\":\"gpu\"}]", "01");
  MATCH("[{\"attr\":\"sys/tags\",\"op\":\"contains_any\",\"value\":[\"base\",\"x\"]}]", "0");
  MATCH("[{\"attr\":\"sys/tags\",\"op\":\"contains_all\",\"value\":[\"base\",\"gpu\"]}]", "0");
  MATCH("[{\"attr\":\"sys/tags\",\"op\":\"contains_all\",\"value\":[\"gpu\"]}]", "01");
  MATCH("[{\"attr\":\"sys/name\",\"op\":\"contains_any\",\"value\":[\"pha\",\"mma\"]}]", "02");
  MATCH("[{\"attr\":\"config/optimizer\",\"op\":\"in\",\"value\":[\"sgd\",\"adam\"]}]", "2");
  MATCH("[{\"attr\":\"config/layers\",\"op\":\"in\",\"value\":[24, 48]}]", "1");
  MATCH("[{\"attr\":\"config/optimizer\",\"op\":\"not_in\",\"value\":[\"sgd\"]}]", "013");
  /* missing attributes fail everything but exists:false */
  MATCH("[{\"attr\":\"config/layers\",\"op\":\"not_in\",\"value\":[12]}]", "1");
  MATCH("[{\"attr\":\"config/amp\",\"op\":\"exists\"}]", "01");
  MATCH("[{\"attr\":\"config/amp\",\"op\":\"exists\",\"value\":false}]", "23");
  MATCH("[{\"attr\":\"sys/tags\",\"op\":\"exists\"}]", "012");
}
END_TEST

START_TEST(matches_re2)
{
  MATCH("[{\"attr\":\"sys/name\",\"op\":\"matches\",\"value\":\"^[a-g][a-z]+-[0-9]$\"}]",
        "0123");
  MATCH("[{\"attr\":\"sys/name\",\"op\":\"matches\",\"value\":\"ta-\\\\d\"}]", "13");
  MATCH("[{\"attr\":\"sys/name\",\"op\":\"matches\",\"value\":\"(?i)GAMMA\"}]", "2");
  MATCH("[{\"attr\":\"sys/tags\",\"op\":\"matches\",\"value\":\"^ba\"}]", "0");
  /* RE2 refuses what needs backtracking, naming the reason */
  REFUSE("[{\"attr\":\"sys/name\",\"op\":\"matches\",\"value\":\"(a)\\\\1\"}]", "invalid RE2");
  REFUSE("[{\"attr\":\"sys/name\",\"op\":\"matches\",\"value\":\"a(?=b)\"}]", "invalid RE2");
  REFUSE("[{\"attr\":\"sys/name\",\"op\":\"matches\",\"value\":\"(\"}]", "missing )");
  REFUSE("[{\"attr\":\"sys/name\",\"op\":\"matches\",\"value\":\"((a{1000}){1000}){1000}\"}]",
         "invalid RE2");
}
END_TEST

/* The classic catastrophic-backtracking pattern stays linear. */
START_TEST(hostile_pattern_linear)
{
  char err[128];
  const char *pat = "^(a+)+$";
  pmcp__re *re = pmcp__re_new(pat, strlen(pat), err, sizeof err);
  ck_assert_ptr_nonnull(re);
  size_t n = 200000;
  char *s = malloc(n + 2);
  memset(s, 'a', n);
  s[n] = '!';
  s[n + 1] = '\0';
  clock_t t0 = clock();
  ck_assert_int_eq(pmcp__re_search(re, s, n + 1), 0);
  s[n] = '\0';
  ck_assert_int_eq(pmcp__re_search(re, s, n), 1);
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  ck_assert_msg(secs < 2.0, "hostile pattern took %.2fs", secs);
  free(s);
  pmcp__re_free(re);
  /* too long a pattern */
  char *big = malloc(PMCP__RE_MAX_PATTERN + 2);
  memset(big, 'x', PMCP__RE_MAX_PATTERN + 1);
  big[PMCP__RE_MAX_PATTERN + 1] = '\0';
  ck_assert_ptr_null(pmcp__re_new(big, strlen(big), err, sizeof err));
  ck_assert_ptr_nonnull(strstr(err, "too long"));
  free(big);
}
END_TEST

START_TEST(series_conditions)
{
  MATCH("[{\"series\":\"val/loss\",\"function\":\"last\",\"op\":\"lt\",\"value\":0.85}]", "13");
  MATCH("[{\"series\":\"val/loss\",\"function\":\"min\",\"op\":\"lte\",\"value\":0.7}]", "01");
  MATCH("[{\"series\":\"val/loss\",\"op\":\"exists\"}]", "013");
  MATCH("[{\"series\":\"val/loss\",\"op\":\"exists\",\"value\":false}]", "2");
  MATCH("[{\"series\":\"val/loss\",\"function\":\"last\",\"op\":\"lt\",\"value\":1,"
        "\"scale\":\"STEP\"}]", "1");
  MATCH("[{\"series\":\"val/loss\",\"function\":\"last\",\"op\":\"gt\",\"value\":0,"
        "\"labels\":{\"rank\":\"0\"}}]", "1");
  MATCH("[{\"series\":\"val/loss\",\"function\":\"last\",\"op\":\"gt\",\"value\":0,"
        "\"labels\":{\"rank\":\"1\"}}]", "");
  /* a summary the row lacks fails */
  MATCH("[{\"series\":\"val/loss\",\"function\":\"avg\",\"op\":\"gt\",\"value\":0}]", "");
}
END_TEST

/* Seed 001's own example: AdamW runs with a small learning rate or a low
 * validation loss. Row 0: small lr; row 1: low loss; row 3: neither;
 * row 2: not AdamW. */
START_TEST(seed_example_any_of)
{
  MATCH("[{\"attr\":\"config/optimizer\",\"op\":\"eq\",\"value\":\"adamw\"},"
        "{\"any_of\":[{\"attr\":\"config/lr\",\"op\":\"lt\",\"value\":0.001},"
        "{\"series\":\"val/loss\",\"function\":\"last\",\"op\":\"lt\",\"value\":0.5}]}]",
        "01");
}
END_TEST

START_TEST(refusals)
{
  REFUSE("{}", "must be an array");
  REFUSE("[1]", "condition 0 must be an object");
  REFUSE("[{}]", "\"attr\" must be a non-empty string");
  REFUSE("[{\"attr\":\"\",\"op\":\"eq\",\"value\":1}]", "non-empty");
  REFUSE("[{\"attr\":\"a\",\"series\":\"b\",\"op\":\"exists\"}]", "not both");
  REFUSE("[{\"attr\":\"a\",\"value\":1}]", "\"op\" is required");
  REFUSE("[{\"attr\":\"a\",\"op\":\"like\",\"value\":1}]", "unknown op \"like\"");
  REFUSE("[{\"attr\":\"a\",\"op\":\"eq\"}]", "needs a \"value\"");
  REFUSE("[{\"attr\":\"a\",\"op\":\"eq\",\"value\":1,\"function\":\"last\"}]",
         "unknown key \"function\"");
  REFUSE("[{\"attr\":\"a\",\"op\":\"eq\",\"value\":[1]}]", "string, number or boolean");
  REFUSE("[{\"attr\":\"a\",\"op\":\"ne\",\"value\":null}]", "string, number or boolean");
  REFUSE("[{\"attr\":\"a\",\"op\":\"lt\",\"value\":true}]", "number or a string");
  REFUSE("[{\"attr\":\"a\",\"op\":\"matches\",\"value\":1}]", "must be a string");
  REFUSE("[{\"attr\":\"a\",\"op\":\"contains\",\"value\":[\"x\"]}]", "must be a string");
  REFUSE("[{\"attr\":\"a\",\"op\":\"contains_any\",\"value\":\"x\"}]", "array of 1 to 1000");
  REFUSE("[{\"attr\":\"a\",\"op\":\"contains_all\",\"value\":[]}]", "array of 1 to 1000");
  REFUSE("[{\"attr\":\"a\",\"op\":\"contains_all\",\"value\":[1]}]", "array of 1 to 1000");
  REFUSE("[{\"attr\":\"a\",\"op\":\"in\",\"value\":[]}]", "array of 1 to 1000");
  REFUSE("[{\"attr\":\"a\",\"op\":\"not_in\",\"value\":[{}]}]", "array of 1 to 1000");
  REFUSE("[{\"attr\":\"a\",\"op\":\"exists\",\"value\":1}]", "true or false");
  REFUSE("[{\"series\":\"s\",\"op\":\"lt\",\"value\":1}]", "needs \"function\"");
  REFUSE("[{\"series\":\"s\",\"function\":\"median\",\"op\":\"lt\",\"value\":1}]",
         "needs \"function\"");
  REFUSE("[{\"series\":\"s\",\"function\":\"last\",\"op\":\"lt\",\"value\":\"1\"}]",
         "must be a number");
  REFUSE("[{\"series\":\"s\",\"function\":\"last\",\"op\":\"in\",\"value\":[1]}]",
         "does not apply to series");
  REFUSE("[{\"series\":\"s\",\"function\":\"last\",\"op\":\"exists\"}]", "takes no \"function\"");
  REFUSE("[{\"series\":\"s\",\"op\":\"exists\",\"scale\":3}]", "\"scale\" must be a string");
  REFUSE("[{\"series\":\"s\",\"op\":\"exists\",\"labels\":[]}]", "\"labels\" must be an object");
  REFUSE("[{\"series\":\"s\",\"op\":\"exists\",\"labels\":{\"r\":1}}]", "label \"r\"");
  REFUSE("[{\"series\":\"s\",\"op\":\"exists\",\"unit\":\"x\"}]", "unknown key \"unit\"");
  REFUSE("[{\"any_of\":[]}]", "array of 1 to 64");
  REFUSE("[{\"any_of\":{}}]", "array of 1 to 64");
  REFUSE("[{\"any_of\":[{\"attr\":\"a\",\"op\":\"exists\"}],\"attr\":\"b\"}]", "no other keys");
  REFUSE("[{\"any_of\":[{\"any_of\":[{\"attr\":\"a\",\"op\":\"exists\"}]}]}]", "do not nest");
  REFUSE("[{\"attr\":\"a\",\"op\":\"exists\"},{\"any_of\":[{\"attr\":\"a\",\"op\":\"exists\"},"
         "{\"attr\":\"b\",\"op\":\"zz\"}]}]", "condition 1, any_of item 1: unknown op");
  REFUSE("[{\"any_of\":[3]}]", "any_of item 0 must be an object");
  /* too many conditions */
  char big[64 * 40 + 16];
  strcpy(big, "[");
  for (int i = 0; i < 65; i++)
    strcat(big, i ? ",{\"attr\":\"a\",\"op\":\"exists\"}" : "{\"attr\":\"a\",\"op\":\"exists\"}");
  strcat(big, "]");
  REFUSE(big, "at most 64");
}
END_TEST

/* Sorting a copy of the rows by @p sort; returns the order as indexes. */
static const char *order(const char *sort)
{
  static char out[16];
  cJSON *j = cJSON_Parse(sort);
  pmcp__sort s;
  char err[256];
  ck_assert_msg(pmcp__sort_parse(j, &s, err, sizeof err) == 0, "%s: %s", sort, err);
  int n = cJSON_GetArraySize(rows);
  pmcp__sort_key k[8];
  int idx[8];
  for (int i = 0; i < n; i++) {
    pmcp__filter_row row = {row_attr, row_series, cJSON_GetArrayItem(rows, i), NULL};
    ck_assert_int_eq(pmcp__sort_key_of(&s, &row, &k[i]), 0);
    idx[i] = i;
  }
  for (int i = 1; i < n; i++) /* insertion sort keeps ties stable */
    for (int m = i; m > 0 && pmcp__sort_cmp(&s, &k[idx[m - 1]], &k[idx[m]]) > 0; m--) {
      int t = idx[m];
      idx[m] = idx[m - 1];
      idx[m - 1] = t;
    }
  for (int i = 0; i < n; i++)
    out[i] = (char)('0' + idx[i]);
  out[n] = '\0';
  pmcp__sort_dispose(&s);
  cJSON_Delete(j);
  return out;
}

START_TEST(sorting)
{
  ck_assert_str_eq(order("{\"attr\":\"sys/creation_time\",\"direction\":\"desc\"}"), "1203");
  ck_assert_str_eq(order("{\"attr\":\"sys/creation_time\",\"direction\":\"asc\"}"), "0213");
  ck_assert_str_eq(order("{\"attr\":\"config/lr\"}"), "3102");
  ck_assert_str_eq(order("{\"series\":\"val/loss\",\"function\":\"last\",\"direction\":\"asc\"}"),
                   "1302");
  ck_assert_str_eq(order("{\"series\":\"val/loss\",\"function\":\"min\",\"direction\":\"desc\"}"),
                   "0123");
  static const char *const bad[][2] = {
    {"[]", "must be an object"},
    {"{}", "exactly one of"},
    {"{\"attr\":\"a\",\"series\":\"b\"}", "exactly one of"},
    {"{\"attr\":\"a\",\"direction\":\"up\"}", "\"asc\" or \"desc\""},
    {"{\"attr\":\"a\",\"function\":\"last\"}", "unknown key \"function\""},
    {"{\"attr\":\"\"}", "non-empty"},
    {"{\"series\":\"s\"}", "needs \"function\""},
    {"{\"series\":\"s\",\"function\":\"last\",\"labels\":{\"a\":2}}", "label \"a\""},
    {"{\"attr\":\"a\",\"order\":\"asc\"}", "unknown key \"order\""},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cJSON *j = cJSON_Parse(bad[i][0]);
    pmcp__sort s;
    char err[256];
    ck_assert_int_eq(pmcp__sort_parse(j, &s, err, sizeof err), PMCP_EINVAL);
    ck_assert_msg(strstr(err, bad[i][1]) != NULL, "%s: '%s'", bad[i][0], err);
    pmcp__sort_dispose(&s);
    cJSON_Delete(j);
  }
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("filter");
  TCase *tc = tcase_create("filter");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, comparison_ops);
  tcase_add_test(tc, datetimes_as_instants);
  tcase_add_test(tc, string_and_set_ops);
  tcase_add_test(tc, matches_re2);
  tcase_add_test(tc, hostile_pattern_linear);
  tcase_add_test(tc, series_conditions);
  tcase_add_test(tc, seed_example_any_of);
  tcase_add_test(tc, refusals);
  tcase_add_test(tc, sorting);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
