/* SPDX-License-Identifier: MIT */
/* Cursors (cursor.h): round trips, canonical arguments, and every reason a
 * cursor is refused. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core/cursor_int.h"
#include "util/base64url.h"
#include "util/buf.h"

static const unsigned char key[32] = "0123456789abcdef0123456789abcdef";
static const unsigned char other_key[32] = "fedcba9876543210fedcba9876543210";

static void hash_args(const char *json, unsigned char out[PMCP__ARGS_HASH_LEN])
{
  ck_assert_int_eq(pmcp__args_hash(json, json ? strlen(json) : 0, out), 0);
}

static void mint(const char *tool, const char *args, uint64_t ver,
                 const void *state, size_t len, pmcp_buf *out)
{
  unsigned char ah[PMCP__ARGS_HASH_LEN];
  hash_args(args, ah);
  pmcp__buf_reset(out);
  ck_assert_int_eq(pmcp__cursor_encode_key(key, sizeof key, tool, ah, ver, state,
                                           len, out), 0);
}

static pmcp_cursor_status open_with(const unsigned char *k, const char *tool,
                                    const char *args, uint64_t ver,
                                    const char *cursor, size_t len, pmcp_buf *state)
{
  unsigned char ah[PMCP__ARGS_HASH_LEN];
  hash_args(args, ah);
  pmcp_cursor_status st = (pmcp_cursor_status)99;
  int rc = pmcp__cursor_decode_key(k, 32, tool, ah, ver, cursor, len, state, &st);
  if (st == PMCP_CURSOR_OK)
    ck_assert_int_eq(rc, 0);
  else
    ck_assert_int_eq(rc, PMCP_ECURSOR);
  return st;
}

static pmcp_cursor_status open_(const char *tool, const char *args, uint64_t ver,
                                const char *cursor, pmcp_buf *state)
{
  return open_with(key, tool, args, ver, cursor, strlen(cursor), state);
}

START_TEST(round_trip)
{
  pmcp_buf c = PMCP_BUF_INIT, st = PMCP_BUF_INIT;
  const char pos[] = "run:abc|2024-01-01";
  mint("browse", "{\"mode\":\"runs\",\"limit\":10}", 7, pos, sizeof pos, &c);
  for (size_t i = 0; i < c.len; i++) {
    char ch = c.ptr[i];
    ck_assert_msg((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                  (ch >= '0' && ch <= '9') || ch == '-' || ch == '_',
                  "not URL-safe: %c", ch);
  }
  ck_assert_int_eq(open_("browse", "{\"limit\":10,\"mode\":\"runs\"}", 7, c.ptr, &st),
                   PMCP_CURSOR_OK);
  ck_assert_uint_eq(st.len, sizeof pos);
  ck_assert_mem_eq(st.ptr, pos, sizeof pos);
  /* empty state */
  mint("browse", NULL, 0, NULL, 0, &c);
  ck_assert_int_eq(open_("browse", "{}", 0, c.ptr, &st), PMCP_CURSOR_OK);
  ck_assert_uint_eq(st.len, 0);
  pmcp_buf_dispose(&c);
  pmcp_buf_dispose(&st);
}
END_TEST

START_TEST(compresses_when_it_helps)
{
  pmcp_buf c = PMCP_BUF_INIT, st = PMCP_BUF_INIT;
  char big[3000];
  for (size_t i = 0; i < sizeof big; i++)
    big[i] = "project:alpha/experiment:beta/"[i % 30];
  mint("browse", "{}", 1, big, sizeof big, &c);
  ck_assert_uint_lt(c.len, pmcp__b64url_len(sizeof big) / 4);
  ck_assert_int_eq(open_("browse", "{}", 1, c.ptr, &st), PMCP_CURSOR_OK);
  ck_assert_uint_eq(st.len, sizeof big);
  ck_assert_mem_eq(st.ptr, big, sizeof big);
  /* incompressible state is stored as is */
  unsigned char rnd[200];
  uint32_t x = 12345;
  for (size_t i = 0; i < sizeof rnd; i++) {
    x = x * 1103515245u + 12345u;
    rnd[i] = (unsigned char)(x >> 23);
  }
  mint("browse", "{}", 1, rnd, sizeof rnd, &c);
  ck_assert_int_eq(open_("browse", "{}", 1, c.ptr, &st), PMCP_CURSOR_OK);
  ck_assert_mem_eq(st.ptr, rnd, sizeof rnd);
  pmcp_buf_dispose(&c);
  pmcp_buf_dispose(&st);
}
END_TEST

START_TEST(canonical_arguments)
{
  pmcp_buf a = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp__args_canonical(
      "{ \"z\": [1, 2.50, {\"b\":true,\"a\":null}], \"a\" : \"x\", "
      "\"token_budget\": 900, \"cursor\": \"abc\", \"n\": 1.0 }", 100, &a), 0);
  /* (the length above covers the whole literal) */
  ck_assert_str_eq(a.ptr, "{\"a\":\"x\",\"n\":1,\"z\":[1,2.5,{\"a\":null,\"b\":true}]}");
  pmcp__buf_reset(&a);
  /* nested token_budget keys are arguments like any other */
  ck_assert_int_eq(pmcp__args_canonical("{\"v\":{\"token_budget\":1}}", 24, &a), 0);
  ck_assert_str_eq(a.ptr, "{\"v\":{\"token_budget\":1}}");
  pmcp__buf_reset(&a);
  ck_assert_int_eq(pmcp__args_canonical("[1]", 3, &a), PMCP_EINVAL);
  ck_assert_int_eq(pmcp__args_canonical("{bad", 4, &a), PMCP_EINVAL);
  pmcp_buf_dispose(&a);

  unsigned char h1[8], h2[8], h3[8];
  hash_args("{\"a\":1,\"b\":[\"x\"]}", h1);
  hash_args("{\"b\":[\"x\"],\"token_budget\":4000,\"a\":1,\"cursor\":\"zz\"}", h2);
  hash_args("{\"b\":[\"x\"],\"a\":2}", h3);
  ck_assert_mem_eq(h1, h2, 8);
  ck_assert(memcmp(h1, h3, 8) != 0);
}
END_TEST

START_TEST(refuses_malformed)
{
  pmcp_buf st = PMCP_BUF_INIT;
  ck_assert_int_eq(open_("t", "{}", 0, "", &st), PMCP_CURSOR_MALFORMED);
  ck_assert_int_eq(open_("t", "{}", 0, "not a cursor!", &st), PMCP_CURSOR_REENCODED);
  ck_assert_int_eq(open_("t", "{}", 0, "abc.def", &st), PMCP_CURSOR_MALFORMED);
  ck_assert_int_eq(open_("t", "{}", 0, "\xC3\xA9t\xC3\xA9", &st), PMCP_CURSOR_MALFORMED);
  /* a NUL inside */
  ck_assert_int_eq(open_with(key, "t", "{}", 0, "AAAA\0AAA", 8, &st),
                   PMCP_CURSOR_MALFORMED);
  /* valid alphabet, but random: the length field does not match */
  ck_assert_int_ne(open_("t", "{}", 0, "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyAh", &st),
                   PMCP_CURSOR_OK);
  pmcp_buf_dispose(&st);
}
END_TEST

START_TEST(refuses_reencoded)
{
  pmcp_buf c = PMCP_BUF_INIT, st = PMCP_BUF_INIT, alt = PMCP_BUF_INIT;
  /* find a cursor that uses '-' or '_' and whose length is not a multiple
   * of 4, by varying the state */
  for (unsigned i = 0;; i++) {
    mint("search", "{\"query\":\"x\"}", 3, &i, sizeof i, &c);
    if (c.len % 4 && (strchr(c.ptr, '-') || strchr(c.ptr, '_')))
      break;
  }
  ck_assert_int_eq(open_("search", "{\"query\":\"x\"}", 3, c.ptr, &st), PMCP_CURSOR_OK);
  /* standard base64 alphabet */
  pmcp__buf_reset(&alt);
  for (size_t i = 0; i < c.len; i++)
    pmcp__buf_putc(&alt, c.ptr[i] == '-' ? '+' : c.ptr[i] == '_' ? '/' : c.ptr[i]);
  ck_assert_int_eq(open_("search", "{\"query\":\"x\"}", 3, alt.ptr, &st),
                   PMCP_CURSOR_REENCODED);
  /* padded */
  pmcp__buf_reset(&alt);
  pmcp__buf_append(&alt, c.ptr, c.len);
  while (alt.len % 4)
    pmcp__buf_putc(&alt, '=');
  ck_assert_int_eq(open_("search", "{\"query\":\"x\"}", 3, alt.ptr, &st),
                   PMCP_CURSOR_REENCODED);
  /* percent-encoded padding */
  pmcp__buf_reset(&alt);
  pmcp__buf_append(&alt, c.ptr, c.len);
  pmcp__buf_puts(&alt, "%3D");
  ck_assert_int_eq(open_("search", "{\"query\":\"x\"}", 3, alt.ptr, &st),
                   PMCP_CURSOR_REENCODED);
  /* line-wrapped */
  pmcp__buf_reset(&alt);
  pmcp__buf_append(&alt, c.ptr, 8);
  pmcp__buf_putc(&alt, '\n');
  pmcp__buf_puts(&alt, c.ptr + 8);
  ck_assert_int_eq(open_("search", "{\"query\":\"x\"}", 3, alt.ptr, &st),
                   PMCP_CURSOR_REENCODED);
  /* non-canonical trailing bits: same bytes, different text */
  pmcp__buf_reset(&alt);
  pmcp__buf_append(&alt, c.ptr, c.len);
  static const char abc[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  size_t idx = (size_t)(strchr(abc, alt.ptr[alt.len - 1]) - abc);
  alt.ptr[alt.len - 1] = abc[idx | 1];
  ck_assert_int_eq(open_("search", "{\"query\":\"x\"}", 3, alt.ptr, &st),
                   PMCP_CURSOR_REENCODED);
  pmcp_buf_dispose(&c);
  pmcp_buf_dispose(&alt);
  pmcp_buf_dispose(&st);
}
END_TEST

START_TEST(refuses_truncated)
{
  pmcp_buf c = PMCP_BUF_INIT, st = PMCP_BUF_INIT;
  const char pos[] = "position-state";
  mint("entity", "{}", 0, pos, sizeof pos, &c);
  /* every cut is reported as truncated, never as a valid cursor */
  for (size_t cut = 1; cut < c.len; cut++) {
    pmcp_cursor_status s = open_with(key, "entity", "{}", 0, c.ptr, cut, &st);
    ck_assert_msg(s == PMCP_CURSOR_TRUNCATED, "cut at %zu of %zu: %s", cut, c.len,
                  pmcp_cursor_status_name(s));
  }
  pmcp_buf_dispose(&c);
  pmcp_buf_dispose(&st);
}
END_TEST

/* Re-encodes @p c after @p edit changed its bytes. */
static void edit_raw(pmcp_buf *c, void (*edit)(unsigned char *, size_t))
{
  unsigned char raw[512];
  size_t n = 0;
  ck_assert_int_eq(pmcp__b64url_decode(c->ptr, c->len, raw, &n), PMCP__B64_OK);
  edit(raw, n);
  pmcp__buf_reset(c);
  ck_assert_int_eq(pmcp__b64url_encode(c, raw, n), 0);
}

static void bump_version(unsigned char *raw, size_t n) { (void)n; raw[0] = 2; }
static void flip_middle(unsigned char *raw, size_t n) { raw[n / 2] ^= 0x01; }
static void flip_mac(unsigned char *raw, size_t n) { raw[n - 1] ^= 0x80; }

START_TEST(refuses_version_and_forgery)
{
  pmcp_buf c = PMCP_BUF_INIT, st = PMCP_BUF_INIT;
  const char pos[] = "p";
  mint("metrics", "{}", 0, pos, 1, &c);
  edit_raw(&c, bump_version);
  ck_assert_int_eq(open_("metrics", "{}", 0, c.ptr, &st), PMCP_CURSOR_VERSION);

  mint("metrics", "{}", 0, pos, 1, &c);
  edit_raw(&c, flip_middle);
  ck_assert_int_eq(open_("metrics", "{}", 0, c.ptr, &st), PMCP_CURSOR_FORGED);

  mint("metrics", "{}", 0, pos, 1, &c);
  edit_raw(&c, flip_mac);
  ck_assert_int_eq(open_("metrics", "{}", 0, c.ptr, &st), PMCP_CURSOR_FORGED);

  /* issued under another key (another server without the shared key) */
  mint("metrics", "{}", 0, pos, 1, &c);
  ck_assert_int_eq(open_with(other_key, "metrics", "{}", 0, c.ptr, c.len, &st),
                   PMCP_CURSOR_FORGED);
  /* every single-bit flip of the bytes is caught */
  unsigned char raw[256];
  size_t n = 0;
  ck_assert_int_eq(pmcp__b64url_decode(c.ptr, c.len, raw, &n), PMCP__B64_OK);
  pmcp_buf alt = PMCP_BUF_INIT;
  for (size_t i = 0; i < n * 8; i++) {
    raw[i / 8] ^= (unsigned char)(1u << (i % 8));
    pmcp__buf_reset(&alt);
    pmcp__b64url_encode(&alt, raw, n);
    pmcp_cursor_status s = open_("metrics", "{}", 0, alt.ptr, &st);
    ck_assert_msg(s != PMCP_CURSOR_OK, "bit %zu accepted", i);
    raw[i / 8] ^= (unsigned char)(1u << (i % 8));
  }
  pmcp_buf_dispose(&alt);
  pmcp_buf_dispose(&c);
  pmcp_buf_dispose(&st);
}
END_TEST

START_TEST(refuses_foreign_changed_stale)
{
  pmcp_buf c = PMCP_BUF_INIT, st = PMCP_BUF_INIT;
  const char *args = "{\"refs\":[\"run:a\"],\"view\":\"card\",\"token_budget\":1000}";
  mint("entity", args, 5, "x", 1, &c);
  ck_assert_int_eq(open_("search", args, 5, c.ptr, &st), PMCP_CURSOR_FOREIGN_TOOL);
  ck_assert_int_eq(open_("entity", "{\"refs\":[\"run:b\"],\"view\":\"card\"}", 5, c.ptr, &st),
                   PMCP_CURSOR_CHANGED_ARGUMENTS);
  ck_assert_int_eq(open_("entity", "{\"refs\":[\"run:a\"]}", 5, c.ptr, &st),
                   PMCP_CURSOR_CHANGED_ARGUMENTS);
  ck_assert_int_eq(open_("entity", args, 6, c.ptr, &st), PMCP_CURSOR_STALE);
  /* token_budget and key order may change */
  ck_assert_int_eq(open_("entity", "{\"view\":\"card\",\"token_budget\":512,"
                                   "\"refs\":[\"run:a\"]}", 5, c.ptr, &st),
                   PMCP_CURSOR_OK);
  ck_assert_uint_eq(st.len, 1);
  pmcp_buf_dispose(&c);
  pmcp_buf_dispose(&st);
}
END_TEST

START_TEST(status_names)
{
  const char *names[] = {"ok", "malformed", "reencoded", "truncated",
                         "unsupported_version", "forged", "foreign_tool",
                         "changed_arguments", "stale", "document_changed"};
  for (int i = 0; i <= PMCP_CURSOR_DOCUMENT_CHANGED; i++) {
    ck_assert_str_eq(pmcp_cursor_status_name(i), names[i]);
    ck_assert(strlen(pmcp_cursor_status_message(i)) > 10);
  }
  ck_assert_str_eq(pmcp_cursor_status_name(99), "unknown");
  ck_assert_str_eq(pmcp_cursor_status_name(-1), "unknown");
  unsigned char k[64];
  ck_assert_int_eq(pmcp_cursor_key_generate(k, 32), 0);
  ck_assert_int_eq(pmcp_cursor_key_generate(k, 8), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_cursor_key_generate(k, 65), PMCP_EINVAL);
}
END_TEST

START_TEST(encode_rejects_bad_input)
{
  pmcp_buf c = PMCP_BUF_INIT;
  unsigned char ah[8] = {0};
  ck_assert_int_eq(pmcp__cursor_encode_key(key, 8, "t", ah, 0, NULL, 0, &c), PMCP_EINVAL);
  ck_assert_int_eq(pmcp__cursor_encode_key(key, 32, NULL, ah, 0, NULL, 0, &c), PMCP_EINVAL);
  ck_assert_int_eq(pmcp__cursor_encode_key(key, 32, "t", ah, 0, NULL, 3, &c), PMCP_EINVAL);
  char *huge = calloc(1, PMCP__CURSOR_STATE_MAX + 1);
  ck_assert_int_eq(pmcp__cursor_encode_key(key, 32, "t", ah, 0, huge,
                                           PMCP__CURSOR_STATE_MAX + 1, &c), PMCP_EINVAL);
  free(huge);
  pmcp_buf_dispose(&c);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("cursor");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, round_trip);
  tcase_add_test(tc, compresses_when_it_helps);
  tcase_add_test(tc, canonical_arguments);
  tcase_add_test(tc, refuses_malformed);
  tcase_add_test(tc, refuses_reencoded);
  tcase_add_test(tc, refuses_truncated);
  tcase_add_test(tc, refuses_version_and_forgery);
  tcase_add_test(tc, refuses_foreign_changed_stale);
  tcase_add_test(tc, status_names);
  tcase_add_test(tc, encode_rejects_bad_input);
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
