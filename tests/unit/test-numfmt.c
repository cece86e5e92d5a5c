/* SPDX-License-Identifier: MIT */
/* The shared number serializer and the JSON writer (json.h). */
#define _GNU_SOURCE /* dlvsym */
#include <check.h>
#include <dlfcn.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "probemcp/json.h"
#include "test-random.h"

static const char *fmt(double v, unsigned flags)
{
  static char out[PMCP_JSON_NUMBER_MAX];
  size_t n = pmcp_json_format_number(v, flags, out, sizeof out);
  ck_assert_uint_eq(n, strlen(out));
  return out;
}

START_TEST(six_significant_figures)
{
  ck_assert_str_eq(fmt(1.0 / 3.0, 0), "0.333333");
  ck_assert_str_eq(fmt(2.0 / 3.0, 0), "0.666667");
  ck_assert_str_eq(fmt(1234567.0, 0), "1.23457e+06");
  ck_assert_str_eq(fmt(123456.0, 0), "123456");
  ck_assert_str_eq(fmt(100.0, 0), "100");
  ck_assert_str_eq(fmt(0.0, 0), "0");
  ck_assert_str_eq(fmt(-0.0, 0), "-0");
  ck_assert_str_eq(fmt(1e-7, 0), "1e-07");
  ck_assert_str_eq(fmt(-2.5, 0), "-2.5");
  ck_assert_str_eq(fmt(0.000123456789, 0), "0.000123457");
  ck_assert_str_eq(fmt(1.7976931348623157e308, 0), "1.79769e+308");
}
END_TEST

START_TEST(lossless_round_trips)
{
  ck_assert_str_eq(fmt(0.1, PMCP_JSON_LOSSLESS), "0.1");
  ck_assert_str_eq(fmt(1.0 / 3.0, PMCP_JSON_LOSSLESS), "0.3333333333333333");
  ck_assert_str_eq(fmt(5e-324, PMCP_JSON_LOSSLESS), "5e-324");
  ck_assert_str_eq(fmt(2.2250738585072014e-308, PMCP_JSON_LOSSLESS), "2.2250738585072014e-308");
  ck_assert_str_eq(fmt(1234567.0, PMCP_JSON_LOSSLESS), "1234567");
  /* random bit patterns: every finite double reads back exactly */
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int tested = 0; tested < 20000; tested++) {
    double v = tr_finite(&x);
    const char *s = fmt(v, PMCP_JSON_LOSSLESS);
    ck_assert_msg(strtod(s, NULL) == v, "%s does not read back", s);
    /* and the rounded form is never longer than %.6g allows */
    ck_assert_uint_le(strlen(fmt(v, 0)), 13);
  }
}
END_TEST

START_TEST(non_finite_are_strings)
{
  ck_assert_str_eq(fmt(NAN, 0), "\"NaN\"");
  ck_assert_str_eq(fmt(INFINITY, 0), "\"Infinity\"");
  ck_assert_str_eq(fmt(-INFINITY, PMCP_JSON_LOSSLESS), "\"-Infinity\"");
}
END_TEST

START_TEST(locale_independent)
{
  const char *locs[] = {"de_DE.UTF-8", "fr_FR.UTF-8", "de_DE", NULL};
  int set = 0;
  for (int i = 0; locs[i] && !set; i++)
    set = setlocale(LC_NUMERIC, locs[i]) != NULL;
  /* Without such a locale installed the check still runs in "C". */
  ck_assert_str_eq(fmt(0.5, 0), "0.5");
  ck_assert_str_eq(fmt(0.1, PMCP_JSON_LOSSLESS), "0.1");
  setlocale(LC_NUMERIC, "C");
}
END_TEST

/* pmcp_buf_json_string() against cJSON's own printing of the same string
 * (the same escapes: quote, backslash, \b \f \n \r \t, \u00XX below
 * 0x20, every other byte as it is), on random bytes dense in escapes,
 * appended after what the buffer already holds. */
START_TEST(json_string_matches_cjson)
{
  unsigned seed = 12345;
  static const char pick[] = "\"\\\n\r\t\b\f\x01\x1f\x7f/aZ\xc3\xa9 ";
  for (int round = 0; round < 2000; round++) {
    char in[300];
    seed = seed * 1103515245u + 12345u;
    size_t n = (seed >> 16) % sizeof in;
    for (size_t i = 0; i < n; i++) {
      seed = seed * 1103515245u + 12345u;
      unsigned r = seed >> 16;
      in[i] = r % 3 ? pick[r % (sizeof pick - 1)] : (char)(1 + r % 255);
    }
    in[n] = '\0';
    cJSON *str = cJSON_CreateString(in);
    char *want = cJSON_PrintUnformatted(str);
    pmcp_buf b = PMCP_BUF_INIT;
    ck_assert_int_eq(pmcp_buf_json_string(&b, "x", 1), 0); /* something before */
    ck_assert_int_eq(pmcp_buf_json_string(&b, in, n), 0);
    ck_assert_uint_eq(b.len, 3 + strlen(want));
    ck_assert_str_eq(b.ptr + 3, want);
    ck_assert_uint_eq(strlen(b.ptr), b.len);
    pmcp_buf_dispose(&b);
    cJSON_free(want);
    cJSON_Delete(str);
  }
  /* a NUL byte, which cJSON cannot carry */
  pmcp_buf b = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp_buf_json_string(&b, "a\0b", 3), 0);
  ck_assert_uint_eq(b.len, 10);
  ck_assert(memcmp(b.ptr, "\"a\\u0000b\"", 10) == 0);
  pmcp_buf_dispose(&b);
}
END_TEST

/* The formatter against printf itself: "%.6g", and in lossless mode the
 * first precision from 1 up whose "%.*g" reads back as the value, over
 * integers (every one to 2*10^4, random ones to 10^16, powers of ten and
 * their neighbours, negatives, zeros) and random doubles of every
 * magnitude. */
static void ref_number(double v, int lossless, char *out)
{
  if (!lossless) {
    snprintf(out, 64, "%.6g", v);
    return;
  }
  for (int p = 1; p <= 17; p++) {
    snprintf(out, 64, "%.*g", p, v);
    if (strtod(out, NULL) == v)
      return;
  }
}

static void check_number(double v)
{
  for (int lossless = 0; lossless < 2; lossless++) {
    char want[64], got[PMCP_JSON_NUMBER_MAX];
    ref_number(v, lossless, want);
    size_t n = pmcp_json_format_number(v, lossless ? PMCP_JSON_LOSSLESS : 0, got, sizeof got);
    ck_assert_msg(n == strlen(want) && strcmp(got, want) == 0, "%.17g (lossless %d): %s, not %s",
                  v, lossless, got, want);
  }
}

START_TEST(numbers_match_printf)
{
  for (int i = -20000; i <= 20000; i++)
    check_number(i);
  check_number(0.0);
  check_number(-0.0);
  double p10 = 1;
  for (int e = 0; e <= 22; e++, p10 *= 10)
    for (int d = -3; d <= 3; d++) {
      check_number(p10 + d);
      check_number(-(p10 + d));
      check_number(p10 * 1.5 + d);
      check_number(p10 / 1e9 + d);
    }
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 20000; i++) {
    tr_next(&x);
    check_number((double)(int64_t)(x % 10000000000000000ull) * (x & 1 ? 1 : -1));
    check_number((double)(x % 1000000000ull) * 1000.0);
    double r = (double)(x >> 11) / 9007199254740992.0; /* [0, 1) */
    check_number(r);
    check_number(r * pow(10, (int)(x % 40) - 20));
    check_number(-r * 1e6);
  }
}
END_TEST

/* Values whose texts are long and short, in both modes: non-finite
 * strings, the longest lossless texts (17 digits, a 3-digit exponent, a
 * sign), one digit. */
static const double awkward[] = {
  NAN, INFINITY, -INFINITY, 0.0, -0.0, 7.0, -1.7976931348623157e308,
  2.2250738585072014e-308, -4.9406564584124654e-324, 0.1, 1.0 / 3.0,
  -123456789012345678.0, 1e15, 999999999999999.0, -0.000123456789};

/* The sized form for every size from 0 to past the text's length, in a
 * buffer of exactly that many bytes (an overrun is ASan's to see) and in
 * one with guard bytes after it: the whole text when it fits, else "" and
 * nothing past out[0], and always the text's length as the answer. */
static void check_sizes(double v, unsigned flags)
{
  char want[64];
  ref_number(v, (flags & PMCP_JSON_LOSSLESS) != 0, want);
  if (isnan(v))
    strcpy(want, "\"NaN\"");
  else if (isinf(v))
    strcpy(want, v < 0 ? "\"-Infinity\"" : "\"Infinity\"");
  size_t len = strlen(want);
  ck_assert_uint_lt(len, PMCP_JSON_NUMBER_MAX);
  ck_assert_uint_eq(pmcp_json_format_number(v, flags, NULL, 0), len);
  for (size_t size = 0; size <= len + 2; size++) {
    char *exact = malloc(size ? size : 1);
    memset(exact, 'x', size ? size : 1);
    size_t n = pmcp_json_format_number(v, flags, exact, size);
    ck_assert_msg(n == len, "%s in %zu bytes: %zu", want, size, n);
    if (size > len)
      ck_assert_str_eq(exact, want);
    else if (size > 0)
      ck_assert_msg(exact[0] == '\0', "%s in %zu bytes: a cut text", want, size);
    free(exact);
    char guarded[PMCP_JSON_NUMBER_MAX + 16];
    memset(guarded, 'x', sizeof guarded);
    n = pmcp_json_format_number(v, flags, guarded, size);
    ck_assert_uint_eq(n, len);
    size_t written = size > len ? len + 1 : size ? 1 : 0;
    for (size_t i = written; i < sizeof guarded; i++)
      ck_assert_msg(guarded[i] == 'x', "%s in %zu bytes: byte %zu written", want, size, i);
  }
}

START_TEST(sized_form_never_overruns)
{
  for (size_t i = 0; i < sizeof awkward / sizeof awkward[0]; i++) {
    check_sizes(awkward[i], 0);
    check_sizes(awkward[i], PMCP_JSON_LOSSLESS);
  }
  uint64_t x = 0x2545F4914F6CDD1Dull;
  for (int i = 0; i < 300; i++) {
    double v = tr_finite(&x);
    check_sizes(v, 0);
    check_sizes(v, PMCP_JSON_LOSSLESS);
  }
}
END_TEST

/* A host linked against release 0.1 calls pmcp_json_format_number@PMCP_0.1
 * with its fixed array and no size, and gets the text it got then (the
 * shared library's own symbol, looked up by version). */
START_TEST(format_number_of_release_0_1)
{
  const char *path = getenv("PMCP_TEST_LIBPROBEMCP");
  ck_assert_msg(path && *path, "PMCP_TEST_LIBPROBEMCP names the shared library");
  /* Never unloaded: the library keeps its C locale (and a thread key
   * whose destructor is its code) for the life of the process. */
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  ck_assert_msg(lib, "%s", dlerror());
  size_t (*old)(double, unsigned, char[PMCP_JSON_NUMBER_MAX]) = NULL;
  size_t (*cur)(double, unsigned, char *, size_t) = NULL;
  *(void **)&old = dlvsym(lib, "pmcp_json_format_number", "PMCP_0.1");
  ck_assert_msg(old != NULL, "pmcp_json_format_number@PMCP_0.1: %s", dlerror());
  *(void **)&cur = dlvsym(lib, "pmcp_json_format_number", "PMCP_0.2");
  ck_assert_msg(cur != NULL, "pmcp_json_format_number@PMCP_0.2: %s", dlerror());
  ck_assert_msg(*(void **)&cur != *(void **)&old, "a default version of its own");
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 2000; i++) {
    double v = i < (int)(sizeof awkward / sizeof awkward[0]) ? awkward[i] : tr_finite(&x);
    for (unsigned flags = 0; flags <= PMCP_JSON_LOSSLESS; flags += PMCP_JSON_LOSSLESS) {
      char want[64], got[PMCP_JSON_NUMBER_MAX], now[PMCP_JSON_NUMBER_MAX];
      ref_number(v, flags != 0, want);
      if (isnan(v))
        strcpy(want, "\"NaN\"");
      else if (isinf(v))
        strcpy(want, v < 0 ? "\"-Infinity\"" : "\"Infinity\"");
      size_t n = old(v, flags, got);
      ck_assert_msg(n == strlen(want) && !strcmp(got, want), "0.1: %s, not %s", got, want);
      ck_assert_uint_eq(cur(v, flags, now, sizeof now), n);
      ck_assert_str_eq(now, want);
    }
  }
  dlclose(lib);
}
END_TEST

START_TEST(writer_builds_compact_json)
{
  pmcp_json *j;
  ck_assert_int_eq(pmcp_json_new(&j, 0), 0);
  ck_assert_ptr_null(pmcp_json_text(j, NULL));
  ck_assert_int_eq(pmcp_json_object_begin(j), 0);
  pmcp_json_key(j, "a");
  pmcp_json_int(j, -42);
  pmcp_json_key(j, "b");
  pmcp_json_array_begin(j);
  pmcp_json_number(j, 1.0 / 3.0);
  pmcp_json_number(j, NAN);
  pmcp_json_number_lossless(j, 0.1);
  pmcp_json_bool(j, 1);
  pmcp_json_null(j);
  pmcp_json_uint(j, UINT64_MAX);
  pmcp_json_array_end(j);
  pmcp_json_key(j, "s\"q");
  pmcp_json_string(j, "line\n\ttab \x01 \xC3\xA9");
  pmcp_json_key(j, "r");
  pmcp_json_raw(j, "{\"x\":1}", 7);
  ck_assert_int_eq(pmcp_json_object_end(j), 0);
  size_t len = 0;
  const char *t = pmcp_json_text(j, &len);
  ck_assert_str_eq(t, "{\"a\":-42,\"b\":[0.333333,\"NaN\",0.1,true,null,"
                      "18446744073709551615],\"s\\\"q\":\"line\\n\\ttab \\u0001 "
                      "\xC3\xA9\",\"r\":{\"x\":1}}");
  ck_assert_uint_eq(len, strlen(t));
  ck_assert_uint_eq(pmcp_json_non_finite(j), 1);
  /* a second top-level value is misuse, and the error sticks */
  ck_assert_int_eq(pmcp_json_int(j, 1), PMCP_EMISUSE);
  ck_assert_int_eq(pmcp_json_error(j), PMCP_EMISUSE);
  ck_assert_ptr_null(pmcp_json_text(j, NULL));
  pmcp_json_reset(j);
  ck_assert_int_eq(pmcp_json_error(j), 0);
  ck_assert_uint_eq(pmcp_json_non_finite(j), 0);
  pmcp_json_free(j);
}
END_TEST

START_TEST(writer_lossless_mode)
{
  pmcp_json *j;
  ck_assert_int_eq(pmcp_json_new(&j, PMCP_JSON_LOSSLESS), 0);
  pmcp_json_number(j, 1.0 / 3.0);
  ck_assert_str_eq(pmcp_json_text(j, NULL), "0.3333333333333333");
  pmcp_json_free(j);
}
END_TEST

START_TEST(writer_refuses_misuse)
{
  pmcp_json *j;
  ck_assert_int_eq(pmcp_json_new(&j, 0), 0);
  /* key outside an object */
  ck_assert_int_eq(pmcp_json_key(j, "a"), PMCP_EMISUSE);
  pmcp_json_reset(j);
  /* value without a key */
  pmcp_json_object_begin(j);
  ck_assert_int_eq(pmcp_json_int(j, 1), PMCP_EMISUSE);
  pmcp_json_reset(j);
  /* mismatched end */
  pmcp_json_array_begin(j);
  ck_assert_int_eq(pmcp_json_object_end(j), PMCP_EMISUSE);
  pmcp_json_reset(j);
  /* dangling key */
  pmcp_json_object_begin(j);
  pmcp_json_key(j, "k");
  ck_assert_int_eq(pmcp_json_object_end(j), PMCP_EMISUSE);
  pmcp_json_reset(j);
  /* too deep */
  int rc = 0;
  for (int i = 0; i < 65 && !rc; i++)
    rc = pmcp_json_array_begin(j);
  ck_assert_int_eq(rc, PMCP_EMISUSE);
  pmcp_json_reset(j);
  /* empty raw */
  ck_assert_int_eq(pmcp_json_raw(j, "", 0), PMCP_EINVAL);
  pmcp_json_reset(j);
  /* incomplete value has no text */
  pmcp_json_array_begin(j);
  ck_assert_ptr_null(pmcp_json_text(j, NULL));
  pmcp_json_free(j);
}
END_TEST

START_TEST(writer_replaces_invalid_utf8)
{
  pmcp_json *j;
  ck_assert_int_eq(pmcp_json_new(&j, 0), 0);
  /* lone continuation, overlong, surrogate, truncated sequence */
  const char bad[] = "a\x80" "b\xC0\xAF" "c\xED\xA0\x80" "d\xE2\x82";
  pmcp_json_string_n(j, bad, sizeof bad - 1);
  const char *t = pmcp_json_text(j, NULL);
  ck_assert_str_eq(t, "\"a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD"
                      "c\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
                      "d\xEF\xBF\xBD\xEF\xBF\xBD\"");
  pmcp_json_reset(j);
  /* valid 4-byte characters pass through */
  pmcp_json_string(j, "\xF0\x9F\x98\x80");
  ck_assert_str_eq(pmcp_json_text(j, NULL), "\"\xF0\x9F\x98\x80\"");
  pmcp_json_free(j);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("numfmt");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, six_significant_figures);
  tcase_add_test(tc, lossless_round_trips);
  tcase_add_test(tc, non_finite_are_strings);
  tcase_add_test(tc, locale_independent);
  tcase_add_test(tc, writer_builds_compact_json);
  tcase_add_test(tc, writer_lossless_mode);
  tcase_add_test(tc, writer_refuses_misuse);
  tcase_add_test(tc, writer_replaces_invalid_utf8);
  tcase_add_test(tc, json_string_matches_cjson);
  tcase_add_test(tc, numbers_match_printf);
  tcase_add_test(tc, sized_form_never_overruns);
  tcase_add_test(tc, format_number_of_release_0_1);
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
