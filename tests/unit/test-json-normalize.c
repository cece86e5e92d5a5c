/* SPDX-License-Identifier: MIT */
/* pmcp_json_normalize() (json.h) against the truth: what it writes reads
 * back (strtod in the C locale, cJSON) as exactly the value it was given,
 * bit for bit (the sign of zero too), in the fewest digits %g can spell
 * that double with (found by trying every precision), compactly, and the
 * same a second time round. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "probemcp/probemcp.h"
#include "test-random.h"

/* normalize(@p in), which must succeed; the text is the caller's to free. */
static char *norm(const char *in)
{
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp_json_normalize(in, strlen(in), &b);
  ck_assert_msg(rc == 0, "normalize(%.200s): %s", in, pmcp_errname(rc));
  ck_assert_uint_eq(b.len, strlen(b.ptr));
  return b.ptr;
}

static int rc_of(const char *in, size_t len)
{
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp_json_normalize(in, len, &b);
  pmcp_buf_dispose(&b);
  return rc;
}

static int same_bits(double a, double b)
{
  return memcmp(&a, &b, sizeof a) == 0;
}

/* The fewest characters "%.{p}g" spells @p v in and still reads back. */
static size_t shortest_g(double v)
{
  char tmp[64];
  for (int p = 1; p <= 17; p++) {
    snprintf(tmp, sizeof tmp, "%.*g", p, v);
    if (same_bits(strtod(tmp, NULL), v))
      return strlen(tmp);
  }
  ck_abort_msg("%.17g: no precision reads back", v);
  return 0;
}

/* Checks the number text @p out against @p v: exact, and no longer than
 * the shortest %g spelling (an integer's digits alone, as the library
 * writes those below 10^15, are never longer). */
static void check_number(const char *in, const char *out, double v)
{
  char *end;
  double back = strtod(out, &end);
  ck_assert_msg(*end == '\0', "%s -> %s: not one number", in, out);
  ck_assert_msg(same_bits(back, v), "%s -> %s reads back as %.17g, not %.17g", in, out, back, v);
  ck_assert_msg(strlen(out) <= shortest_g(v), "%s -> %s: longer than %%g needs (%zu)", in, out,
                shortest_g(v));
}

/* The double @p v spelt several ways, each normalized on its own and in
 * an array. */
static void check_double(double v)
{
  for (int i = 0; i < 4; i++) {
    char in[128];
    if (i == 0)
      snprintf(in, sizeof in, "%.17g", v);
    else if (i == 1)
      snprintf(in, sizeof in, "%.25e", v);
    else if (i == 2)
      snprintf(in, sizeof in, "%.40g", v);
    else
      snprintf(in, sizeof in, "%a", v);
    if (strchr(in, 'x')) { /* a hex float is not JSON: refused, not misread */
      ck_assert_int_eq(rc_of(in, strlen(in)), PMCP_EPARSE);
      continue;
    }
    ck_assert_msg(same_bits(strtod(in, NULL), v), "the test's own spelling %s", in);
    char *out = norm(in);
    check_number(in, out, v);
    char arr[300];
    snprintf(arr, sizeof arr, " [ %s , %s ] ", in, in);
    char *a = norm(arr);
    char want[80];
    snprintf(want, sizeof want, "[%s,%s]", out, out);
    ck_assert_str_eq(a, want);
    free(a);
    free(out);
  }
}

START_TEST(every_double_category_round_trips)
{
  const double cases[] = {
      0.0, -0.0, 5e-324, -5e-324, 1e-323, 2.2250738585072009e-308 /* largest subnormal */,
      DBL_MIN, -DBL_MIN, nextafter(DBL_MIN, 1), DBL_MAX, -DBL_MAX, 1e308, -1e308,
      nextafter(1e308, 0), 0.1, 0.2, 0.30000000000000004, 1.0 / 3.0, 2.0 / 3.0, 1e-7, 1e21,
      1e22, 1e23, 123456.789, 9007199254740991.0 /* 2^53 - 1 */, 9007199254740992.0,
      9007199254740994.0, -9007199254740992.0, 1e15, 1e15 + 1, 1e16, 4294967296.0,
      18446744073709551616.0, 1.2345678901234568e+29, 0.5, 1.5, -2.5e-7, 100.0, 1.0, -1.0};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_double(cases[i]);
  /* random bit patterns: every category the generator hits */
  uint64_t x = 0x243F6A8885A308D3ull;
  for (int n = 0; n < 4000; n++)
    check_double(tr_finite(&x));
}
END_TEST

START_TEST(integers_and_spellings)
{
  static const char *const cases[][2] = {
      {"9007199254740991", "9007199254740991"}, /* 2^53 - 1: exact */
      {"9007199254740992", "9007199254740992"},
      {"9007199254740993", "9007199254740992"}, /* 2^53 + 1: the nearest double (even) */
      {"-9007199254740993", "-9007199254740992"},
      {"12345678901234567890123", "1.2345678901234568e+22"},
      /* the fewest significant digits, as %g spells them: 1000 is 1e+03 */
      {"1E3", "1e+03"}, {"1000", "1e+03"}, {"1234567", "1234567"}, {"1.0", "1"},
      {"-0.0", "-0"}, {"-0", "-0"}, {"0e0", "0"}, {"1e-400", "0"}, {"-1e-400", "-0"},
      {"1.5e+2", "1.5e+02"}, {"100e-2", "1"},
      {"4.9406564584124654e-324", "5e-324"}, {"0.30000000000000004", "0.30000000000000004"},
      {"1000000000000000000000", "1e+21"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *out = norm(cases[i][0]);
    ck_assert_msg(strcmp(out, cases[i][1]) == 0, "%s -> %s, not %s", cases[i][0], out,
                  cases[i][1]);
    check_number(cases[i][0], out, strtod(cases[i][0], NULL));
    free(out);
  }
  /* a literal far longer than any buffer a parser might copy it into */
  char lit[300];
  snprintf(lit, sizeof lit, "[1%0200de-200]", 0);
  char *out = norm(lit);
  ck_assert_str_eq(out, "[1]");
  free(out);
  /* long literals of every shape read as strtod reads them, inside a
   * structure, and the same digits inside a string stay as they are */
  char digits[201];
  memset(digits, '7', 200);
  digits[200] = '\0';
  char doc[1024];
  snprintf(doc, sizeof doc, "{\"s\":\"%s\",\"a\":[-%s,0.%s,%.80se-20,2]}", digits, digits,
           digits, digits);
  out = norm(doc);
  cJSON *t = cJSON_Parse(out);
  ck_assert_ptr_nonnull(t);
  ck_assert_str_eq(cJSON_GetObjectItem(t, "s")->valuestring, digits);
  cJSON *a = cJSON_GetObjectItem(t, "a");
  char want[300];
  snprintf(want, sizeof want, "-%s", digits);
  ck_assert(same_bits(cJSON_GetArrayItem(a, 0)->valuedouble, strtod(want, NULL)));
  snprintf(want, sizeof want, "0.%s", digits);
  ck_assert(same_bits(cJSON_GetArrayItem(a, 1)->valuedouble, strtod(want, NULL)));
  snprintf(want, sizeof want, "%.80se-20", digits);
  ck_assert(same_bits(cJSON_GetArrayItem(a, 2)->valuedouble, strtod(want, NULL)));
  ck_assert_int_eq(cJSON_GetArrayItem(a, 3)->valueint, 2);
  cJSON_Delete(t);
  free(out);
  /* and one beyond a double's range is refused, however long */
  char big[420];
  snprintf(big, sizeof big, "[1%0400d]", 0);
  ck_assert_int_eq(rc_of(big, strlen(big)), PMCP_EINVAL);
}
END_TEST

/* The string of a one-string array, decoded with the library's decoder. */
static size_t decoded(const char *json, char *buf, size_t cap)
{
  const char *q = strchr(json, '"');
  ck_assert_ptr_nonnull(q);
  size_t len = strlen(q), used, n;
  ck_assert_uint_le(len, cap);
  ck_assert_int_eq(pmcp_json_string_decode(q, len, 0, buf, &used, &n, NULL), 0);
  return n;
}

START_TEST(strings_keep_their_text)
{
  static const char *const cases[][2] = {
      {"[\"caf\\u00e9\"]", "[\"caf\xc3\xa9\"]"},
      {"[\"\\ud83d\\ude00 \xf0\x9f\x98\x80\"]", "[\"\xf0\x9f\x98\x80 \xf0\x9f\x98\x80\"]"},
      {"[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]", "[\"\\\"\\\\/\\b\\f\\n\\r\\t\"]"},
      {"[\"\\u001f\\u007f\\u0041\"]", "[\"\\u001f\x7f" "A\"]"},
      {"[\"\\u2028\\u2029\"]", "[\"\xe2\x80\xa8\xe2\x80\xa9\"]"},
      {"[\"a\\\\u0000\"]", "[\"a\\\\u0000\"]"}, /* an escaped backslash, then text */
      {"[\"\xce\xb1\xce\xb2\"]", "[\"\xce\xb1\xce\xb2\"]"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *out = norm(cases[i][0]);
    ck_assert_msg(strcmp(out, cases[i][1]) == 0, "case %zu: %s", i, out);
    char a[128], b[128];
    size_t na = decoded(cases[i][0], a, sizeof a), nb = decoded(out, b, sizeof b);
    ck_assert_msg(na == nb && memcmp(a, b, na) == 0, "case %zu: the text changed", i);
    free(out);
  }
  /* keys: escapes decoded and written as strings are; order and
   * duplicates kept */
  char *out = norm("{ \"k\\u00e9y\" : 1 , \"a\":2,\"a\" :3, \"\":{}}");
  ck_assert_str_eq(out, "{\"k\xc3\xa9y\":1,\"a\":2,\"a\":3,\"\":{}}");
  free(out);
  /* bytes that are not UTF-8 become U+FFFD, as the writer writes them */
  out = norm("[\"a\xff" "b\xc3\"]");
  ck_assert_str_eq(out, "[\"a\xef\xbf\xbd" "b\xef\xbf\xbd\"]");
  free(out);
}
END_TEST

START_TEST(structure_and_literals)
{
  char *out = norm(" \t\r\n{\"a\" : [ true , false , null , { } , [ ] , \"\" ] } \n");
  ck_assert_str_eq(out, "{\"a\":[true,false,null,{},[],\"\"]}");
  free(out);
  static const char *const same[] = {"true", "false", "null", "\"\"", "[]", "{}", "0"};
  for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
    out = norm(same[i]);
    ck_assert_str_eq(out, same[i]);
    free(out);
  }
}
END_TEST

/* @p n arrays, or objects with key "k", around 1. */
static char *nested(int n, int obj)
{
  char *s = malloc((size_t)n * 6 + 8), *p = s;
  for (int i = 0; i < n; i++)
    p += obj ? sprintf(p, "{\"k\":") : sprintf(p, "[");
  p += sprintf(p, "1");
  for (int i = 0; i < n; i++)
    *p++ = obj ? '}' : ']';
  *p = '\0';
  return s;
}

START_TEST(deep_nesting)
{
  for (int obj = 0; obj <= 1; obj++) {
    char *in = nested(1000, obj);
    char *out = norm(in);
    ck_assert_str_eq(out, in);
    free(out);
    free(in);
    static const int deeper[] = {1001, 1100, 1101, 5000, 100000};
    for (size_t i = 0; i < sizeof deeper / sizeof deeper[0]; i++) {
      in = nested(deeper[i], obj);
      ck_assert_int_eq(rc_of(in, strlen(in)), PMCP_ETOOBIG);
      free(in);
    }
  }
}
END_TEST

START_TEST(refusals)
{
  static const char *const bad[] = {"", " ", "[1,]", "01", "1 2", "[1", "{\"a\"}", "+1",
                                    ".5", "1.", "-", "NaN", "Infinity", "'a'", "[\"\t\"]",
                                    "[\"\\x\"]", "[\"\\ud800\"]", "{1:2}", "nul", "[] x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_msg(rc_of(bad[i], strlen(bad[i])) == PMCP_EPARSE, "'%s' accepted", bad[i]);
  /* a length stops the text: what follows is not read */
  ck_assert_int_eq(rc_of("[1]xyz", 3), 0);
  ck_assert_int_eq(rc_of("[1]xyz", 2), PMCP_EPARSE);
  /* numbers beyond a double, \u0000: refused, not turned into something else */
  static const char *const inval[] = {"1e400", "[-1e400]", "{\"a\":1e309}",
                                      "[\"a\\u0000b\"]", "{\"\\u0000\":1}"};
  for (size_t i = 0; i < sizeof inval / sizeof inval[0]; i++)
    ck_assert_msg(rc_of(inval[i], strlen(inval[i])) == PMCP_EINVAL, "'%s' accepted", inval[i]);
  pmcp_buf b = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp_json_normalize("1", 1, NULL), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_json_normalize(NULL, 1, &b), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_json_normalize(NULL, 0, &b), PMCP_EPARSE);
  ck_assert_ptr_null(b.ptr);
}
END_TEST

START_TEST(appends_and_fails_cleanly)
{
  pmcp_buf b = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp_buf_puts(&b, "x="), 0);
  ck_assert_int_eq(pmcp_json_normalize("[ 1e0 ]", 7, &b), 0);
  ck_assert_str_eq(b.ptr, "x=[1]");
  /* a failure half way through leaves the text as it was */
  const char *late = "[1,2,3,\"a\",{\"b\":[1e400]}]";
  ck_assert_int_eq(pmcp_json_normalize(late, strlen(late), &b), PMCP_EINVAL);
  ck_assert_uint_eq(b.len, 5);
  ck_assert_str_eq(b.ptr, "x=[1]");
  pmcp_buf_dispose(&b);
}
END_TEST

/* Exactly the same value, numbers bit for bit (cJSON_Compare allows a few
 * ulps). */
static int same_tree(const cJSON *a, const cJSON *b)
{
  if ((a->type & 0xff) != (b->type & 0xff))
    return 0;
  if (cJSON_IsNumber(a))
    return same_bits(a->valuedouble, b->valuedouble);
  if (cJSON_IsString(a))
    return strcmp(a->valuestring, b->valuestring) == 0;
  if (cJSON_IsObject(a) || cJSON_IsArray(a)) {
    const cJSON *x = a->child, *y = b->child;
    for (; x && y; x = x->next, y = y->next)
      if ((cJSON_IsObject(a) && strcmp(x->string, y->string) != 0) || !same_tree(x, y))
        return 0;
    return !x && !y;
  }
  return 1;
}

START_TEST(random_documents_read_back_the_same)
{
  /* documents of random numbers, strings and nesting: cJSON reads the
   * result back as exactly the tree it reads the input as, and a second
   * pass changes nothing */
  uint64_t x = 0x13198A2E03707344ull;
  for (int doc = 0; doc < 300; doc++) {
    pmcp_buf in = PMCP_BUF_INIT;
    int depth = 0;
    pmcp_buf_puts(&in, "[");
    for (int k = 0; k < 40; k++) {
      tr_next(&x);
      if (k)
        pmcp_buf_puts(&in, " ,\n ");
      switch (x % 6) {
      case 0:
        pmcp_buf_printf(&in, "%.17g", tr_finite(&x));
        break;
      case 1:
        pmcp_buf_printf(&in, "%lld", (long long)(int64_t)x);
        break;
      case 2:
        pmcp_buf_printf(&in, "\"s\\u%04x\\n%c\xc3\xa9\"", (unsigned)(x >> 20) % 0xd000 + 1,
                        (char)('a' + x % 26));
        break;
      case 3:
        pmcp_buf_printf(&in, "{\"k%u\" : %.6e}", (unsigned)(x % 100), (double)(x % 1000) / 7);
        break;
      case 4:
        if (depth < 20) {
          pmcp_buf_puts(&in, "[");
          depth++;
          pmcp_buf_puts(&in, "0"); /* its first member; the rest follow */
        } else {
          pmcp_buf_puts(&in, "null");
        }
        break;
      default:
        pmcp_buf_puts(&in, x & 1 ? "true" : "false");
      }
    }
    while (depth--)
      pmcp_buf_puts(&in, "]");
    pmcp_buf_puts(&in, "]");
    cJSON *want = cJSON_Parse(in.ptr);
    ck_assert_msg(want != NULL, "the test's own document: %s", in.ptr);
    char *out = norm(in.ptr);
    ck_assert_msg(!strpbrk(out, "\n\t"), "not compact: %s", out);
    cJSON *got = cJSON_Parse(out);
    ck_assert_msg(got && same_tree(want, got), "a different value: %s -> %s", in.ptr, out);
    char *again = norm(out);
    ck_assert_str_eq(again, out);
    free(again);
    free(out);
    cJSON_Delete(got);
    cJSON_Delete(want);
    pmcp_buf_dispose(&in);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("json-normalize");
  TCase *tc = tcase_create("normalize");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, every_double_category_round_trips);
  tcase_add_test(tc, integers_and_spellings);
  tcase_add_test(tc, strings_keep_their_text);
  tcase_add_test(tc, structure_and_literals);
  tcase_add_test(tc, deep_nesting);
  tcase_add_test(tc, refusals);
  tcase_add_test(tc, appends_and_fails_cleanly);
  tcase_add_test(tc, random_documents_read_back_the_same);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
