/* SPDX-License-Identifier: MIT */
/* The tracking tools' number rule as the JSON writer writes it
 * (tracking/out.c) against the tree path it replaced: a cJSON number
 * rounded to six figures (non-finite ones as strings, integers below 2^53
 * exact) and printed by cJSON, on awkward values
 * (both sides of 2^31, 2^53, 1e15, six-figure ties, -0, subnormals,
 * DBL_MAX, non-finite ones) and random bit patterns. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "research/page.h"
#include "util/cnum.h"
#include "test-random.h"
#include "tracking/tracking.h"

/* The answer text the tree path gave for @p v, brackets stripped. */
static void tree_text(double v, char *out, size_t size)
{
  cJSON *a = cJSON_CreateArray();
  if (!isfinite(v)) {
    cJSON_AddItemToArray(a, cJSON_CreateString(isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity"));
  } else if (v == floor(v) && fabs(v) < 9007199254740992.0) {
    cJSON_AddItemToArray(a, cJSON_CreateNumber(v));
  } else {
    char six[PMCP_JSON_NUMBER_MAX];
    pmcp_json_format_number(v, 0, six, sizeof six);
    cJSON_AddItemToArray(a, cJSON_CreateNumber(pmcp__c_strtod(six, NULL)));
  }
  char *t = cJSON_PrintUnformatted(a);
  size_t n = strlen(t);
  ck_assert_uint_ge(n, 2);
  snprintf(out, size, "%.*s", (int)(n - 2), t + 1);
  cJSON_free(t);
  cJSON_Delete(a);
}

static void same(double v)
{
  char want[64], got[PMCP_JSON_NUMBER_MAX];
  tree_text(v, want, sizeof want);
  size_t n = pmcp__rs_number_text(v, got);
  ck_assert_uint_eq(n, strlen(got));
  if (strcmp(want, got) != 0)
    ck_abort_msg("%.17g: tree path %s, writer %s", v, want, got);
}

START_TEST(awkward_values)
{
  static const double vs[] = {
    0.0, -0.0, 1, -1, 0.5, 1.0 / 3, 2.0 / 3, 1e-7, 123456.5, 1234565, 1234567, 9999995,
    0.0000123456789, 2147483647.0, 2147483648.0, -2147483648.0, -2147483649.0, 1e10,
    1e15, 1e15 + 1, 999999999999999.0, 9007199254740991.0, 9007199254740992.0,
    9007199254740994.0, -9007199254740993.0, 1e16, 1e20, 1e21, 1e22, 1.5e300, DBL_MAX,
    -DBL_MAX, DBL_MIN, 4.9e-324, 1.7976931348623157e308, 0.1 + 0.2, 1714867200000.0,
    1714867200000.5, 3.14159265358979, 299792.458, 6.02214076e23, 1e-300, 12345.65,
    NAN, INFINITY, -INFINITY};
  for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
    same(vs[i]);
}
END_TEST

START_TEST(random_values)
{
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 200000; i++) {
    uint64_t bits = tr_next(&x);
    double v;
    memcpy(&v, &bits, sizeof v); /* any double, non-finite ones included */
    same(v);
    same((double)(int64_t)(bits >> (bits & 63))); /* integers of every size */
    same(tr_finite(&x));
    same(floor(ldexp((double)(bits & 0xFFFFF), (int)(bits >> 58)) * 1000.0) / 1000.0);
  }
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("tracking-num");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, awkward_values);
  tcase_add_test(tc, random_values);
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
