/* SPDX-License-Identifier: MIT */
/* pmcp_time_format() and pmcp_time_parse() of store.h: the form, against
 * gmtime_r's fields; the (buffer, size) contract (a byte short is
 * PMCP_ETOOBIG with nothing written past the size, the exact size is
 * enough); PMCP_TIME_MAX enough for every int64 of milliseconds. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <probemcp/store.h>

/* The expected text, from the C library's calendar (for times it
 * covers). */
static void truth(int64_t ms, char *out, size_t size)
{
  int64_t sec = ms / 1000, frac = ms % 1000;
  if (frac < 0) {
    frac += 1000;
    sec--;
  }
  time_t t = (time_t)sec;
  struct tm tm;
  ck_assert_ptr_nonnull(gmtime_r(&t, &tm));
  snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)frac);
}

START_TEST(format_and_parse)
{
  const int64_t cases[] = {0, 1, 999, 1000, -1, -999, -1000, -1001, 1714564800250,
                           951782400000 /* 2000-02-29 */, -30610224000000 /* 1000-01-01 */,
                           253402300799999 /* 9999-12-31T23:59:59.999 */};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char want[64], got[PMCP_TIME_MAX];
    truth(cases[i], want, sizeof want);
    ck_assert_int_eq(pmcp_time_format(cases[i], got, sizeof got), 0);
    ck_assert_str_eq(got, want);
    int64_t back = 0;
    ck_assert_int_eq(pmcp_time_parse(got, &back), 0);
    ck_assert_int_eq(back, cases[i]);
  }
  char got[PMCP_TIME_MAX];
  ck_assert_int_eq(pmcp_time_format(1714564800250, got, sizeof got), 0);
  ck_assert_str_eq(got, "2024-05-01T12:00:00.250Z");
}
END_TEST

START_TEST(buffer_sizes)
{
  /* Every length the form takes, the extremes included: PMCP_TIME_MAX
   * holds each, a byte short of each is refused. */
  const int64_t cases[] = {0, -1, 1714564800250, INT64_MAX, INT64_MIN, INT64_MIN + 1,
                           INT64_MAX / 1000 * 999};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char big[PMCP_TIME_MAX + 64];
    memset(big, 'x', sizeof big);
    ck_assert_int_eq(pmcp_time_format(cases[i], big, sizeof big), 0);
    size_t need = strlen(big) + 1;
    ck_assert_msg(need <= PMCP_TIME_MAX, "%" PRId64 ": %s", cases[i], big);
    char exact[PMCP_TIME_MAX + 8];
    memset(exact, 'x', sizeof exact);
    ck_assert_int_eq(pmcp_time_format(cases[i], exact, need), 0);
    ck_assert_str_eq(exact, big);
    for (size_t k = need; k < sizeof exact; k++)
      ck_assert_int_eq(exact[k], 'x');
    memset(exact, 'x', sizeof exact);
    ck_assert_int_eq(pmcp_time_format(cases[i], exact, need - 1), PMCP_ETOOBIG);
    ck_assert_str_eq(exact, "");
    for (size_t k = 1; k < sizeof exact; k++)
      ck_assert_int_eq(exact[k], 'x');
  }
  char one = 'x';
  ck_assert_int_eq(pmcp_time_format(0, &one, 0), PMCP_ETOOBIG);
  ck_assert_int_eq(one, 'x');
  ck_assert_int_eq(pmcp_time_format(0, NULL, 32), PMCP_EINVAL);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("store-time");
  TCase *tc = tcase_create("time");
  tcase_add_test(tc, format_and_parse);
  tcase_add_test(tc, buffer_sizes);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
