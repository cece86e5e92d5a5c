/* SPDX-License-Identifier: MIT */
/* The HTTP transport's header logic (libprobemcp/src/http/hdr.c): Accept with
 * wildcards and q=0, Content-Type, Host and Origin names (DNS-rebinding
 * checks depend on them), Last-Event-ID, protocol versions, session ids,
 * and the listen-address parser. */
#include <check.h>
#include <string.h>

#include "internal.h"

#define ACC(s) phttp_accept((s), strlen(s))

START_TEST(accept_values)
{
  ck_assert_uint_eq(phttp_accept(NULL, 0), ACCEPT_JSON | ACCEPT_SSE);
  ck_assert_uint_eq(ACC("application/json, text/event-stream"), ACCEPT_JSON | ACCEPT_SSE);
  ck_assert_uint_eq(ACC("application/json"), ACCEPT_JSON);
  ck_assert_uint_eq(ACC("TEXT/Event-Stream"), ACCEPT_SSE);
  ck_assert_uint_eq(ACC("*/*"), ACCEPT_JSON | ACCEPT_SSE);
  ck_assert_uint_eq(ACC("text/*"), ACCEPT_SSE);
  ck_assert_uint_eq(ACC("application/*;q=0.5"), ACCEPT_JSON);
  ck_assert_uint_eq(ACC("text/html"), 0);
  ck_assert_uint_eq(ACC(""), 0);
  /* The most specific range decides: q=0 refuses despite the wildcard. */
  ck_assert_uint_eq(ACC("*/*, application/json;q=0"), ACCEPT_SSE);
  ck_assert_uint_eq(ACC("text/event-stream;q=0.000, application/json"), ACCEPT_JSON);
  ck_assert_uint_eq(ACC("text/event-stream;q=0.1"), ACCEPT_SSE);
  ck_assert_uint_eq(ACC(" application/json ; charset=utf-8 ,text/event-stream"),
                    ACCEPT_JSON | ACCEPT_SSE);
}
END_TEST

START_TEST(content_type)
{
  ck_assert(phttp_is_json_type("application/json", 16));
  ck_assert(phttp_is_json_type("Application/JSON; charset=utf-8", 31));
  ck_assert(!phttp_is_json_type("application/jsonx", 17));
  ck_assert(!phttp_is_json_type("text/plain", 10));
  ck_assert(!phttp_is_json_type("", 0));
}
END_TEST

static const char *host(const char *v)
{
  static char name[64];
  return phttp_host_name(v, strlen(v), name, sizeof name) == 0 ? name : NULL;
}

static const char *origin(const char *v)
{
  static char name[64];
  return phttp_origin_name(v, strlen(v), name, sizeof name) == 0 ? name : NULL;
}

START_TEST(host_and_origin)
{
  ck_assert_str_eq(host("LocalHost:8080"), "localhost");
  ck_assert_str_eq(host("127.0.0.1"), "127.0.0.1");
  ck_assert_str_eq(host("[::1]:9"), "[::1]");
  ck_assert_ptr_null(host("evil.com:80x"));
  ck_assert_ptr_null(host("a b"));
  ck_assert_ptr_null(host("user@localhost"));
  ck_assert_ptr_null(host("[::1"));
  ck_assert_ptr_null(host(""));
#define PORT(v) phttp_host_port(v, strlen(v), 0)
  ck_assert_int_eq(PORT("localhost:8080"), 8080);
  ck_assert_int_eq(PORT(" localhost "), 0);
  ck_assert_int_eq(PORT("[::1]:9"), 9);
  ck_assert_int_eq(PORT("[::1]"), 0);
  ck_assert_int_eq(PORT("localhost:65535"), 65535);
  ck_assert_int_eq(PORT("localhost:65536"), -1);
  ck_assert_int_eq(PORT("localhost:0"), -1);
  ck_assert_int_eq(PORT("localhost:"), -1);
  ck_assert_int_eq(PORT("localhost:8x"), -1);
  ck_assert_int_eq(PORT(""), -1);
  ck_assert_str_eq(origin("http://localhost:3000"), "localhost");
  ck_assert_str_eq(origin("https://[::1]"), "[::1]");
  ck_assert_str_eq(origin("http://127.0.0.1/"), "127.0.0.1");
  ck_assert_ptr_null(origin("null"));
  ck_assert_ptr_null(origin("file://"));
  ck_assert_ptr_null(origin("http://localhost/path"));
  ck_assert_ptr_null(origin("http://localhost.evil.com:1:2"));
  /* The origin's port (its scheme's default when left out) must be the
   * request's. */
#define SAME(o, h) phttp_origin_same_port(o, strlen(o), h, strlen(h))
  ck_assert(SAME("http://localhost:8080", "localhost:8080"));
  ck_assert(SAME("http://localhost:8080", "127.0.0.1:8080"));
  ck_assert(SAME("https://mcp.example.com", "mcp.example.com"));
  ck_assert(SAME("https://mcp.example.com", "mcp.example.com:443"));
  ck_assert(SAME("http://[::1]:9/", "[::1]:9"));
  ck_assert(!SAME("http://localhost:9999", "localhost:8080"));
  ck_assert(!SAME("http://localhost", "localhost:8080"));
  ck_assert(!SAME("https://localhost", "localhost:80"));
  ck_assert(!SAME("http://localhost:8080", "localhost"));
  ck_assert(!SAME("null", "localhost:8080"));
  ck_assert(!SAME("http://localhost:80x", "localhost:80"));
#undef SAME
}
END_TEST

START_TEST(event_ids_versions_sessions)
{
  uint32_t st;
  uint64_t seq;
  ck_assert_int_eq(phttp_event_id("3_17", 4, &st, &seq), 0);
  ck_assert_uint_eq(st, 3);
  ck_assert_uint_eq(seq, 17);
  ck_assert_int_eq(phttp_event_id("3-17", 4, &st, &seq), -1);
  ck_assert_int_eq(phttp_event_id("_1", 2, &st, &seq), -1);
  ck_assert_int_eq(phttp_event_id("1_", 2, &st, &seq), -1);
  ck_assert_int_eq(phttp_event_id("99999999999_1", 13, &st, &seq), -1);
  ck_assert(phttp_version_supported("2025-11-25", 10));
  ck_assert(phttp_version_supported("2025-03-26", 10));
  ck_assert(!phttp_version_supported("2025-11-2", 9));
  ck_assert(!phttp_version_supported("1999-01-01", 10));
  ck_assert(phttp_valid_session_id("abc-DEF_1", 9));
  ck_assert(!phttp_valid_session_id("a b", 3));
  ck_assert(!phttp_valid_session_id("", 0));
}
END_TEST

START_TEST(listen_address)
{
  char h[64], err[128];
  int port;
  ck_assert_int_eq(pmcp_http_parse_listen("127.0.0.1:0", h, sizeof h, &port, err, sizeof err), 0);
  ck_assert_str_eq(h, "127.0.0.1");
  ck_assert_int_eq(port, 0);
  ck_assert_int_eq(pmcp_http_parse_listen("[::1]:8080", h, sizeof h, &port, err, sizeof err), 0);
  ck_assert_str_eq(h, "::1");
  ck_assert_int_eq(port, 8080);
  ck_assert_int_eq(pmcp_http_parse_listen("localhost:9", h, sizeof h, &port, err, sizeof err), 0);
  ck_assert_str_eq(h, "127.0.0.1");
  ck_assert_int_eq(pmcp_http_parse_listen(":7", h, sizeof h, &port, err, sizeof err), 0);
  ck_assert_int_eq(pmcp_http_parse_listen("host.example:80", h, sizeof h, &port, err, sizeof err), -1);
  ck_assert_ptr_nonnull(strstr(err, "IP address"));
  ck_assert_int_eq(pmcp_http_parse_listen("127.0.0.1:70000", h, sizeof h, &port, err, sizeof err), -1);
  ck_assert_int_eq(pmcp_http_parse_listen("127.0.0.1:", h, sizeof h, &port, err, sizeof err), -1);
  ck_assert_int_eq(pmcp_http_parse_listen("", h, sizeof h, &port, err, sizeof err), -1);
}
END_TEST

/* The header index against a brute-force scan of the names it knows:
 * every name in every case pattern of a seeded generator, and every name
 * with one byte changed, cut short or lengthened. */
START_TEST(known_fields)
{
  static const struct { const char *name; phttp_known id; } names[] = {
    {"host", PH_HOST}, {"origin", PH_ORIGIN}, {"accept", PH_ACCEPT},
    {"content-type", PH_CONTENT_TYPE}, {"expect", PH_EXPECT}, {"cookie", PH_COOKIE},
    {"mcp-protocol-version", PH_VERSION}, {"mcp-session-id", PH_SESSION},
    {"last-event-id", PH_LAST_EVENT}, {"mcp-method", PH_METHOD}, {"mcp-name", PH_NAME},
  };
  size_t nn = sizeof names / sizeof names[0];
  unsigned seed = 12345;
  for (size_t i = 0; i < nn; i++) {
    size_t len = strlen(names[i].name);
    char buf[64];
    for (int round = 0; round < 200; round++) {
      for (size_t k = 0; k < len; k++) {
        seed = seed * 1103515245u + 12345u;
        char ch = names[i].name[k];
        buf[k] = ((seed >> 16) & 1) && ch >= 'a' && ch <= 'z' ? (char)(ch - 32) : ch;
      }
      ck_assert_int_eq(phttp_known_of(buf, len), names[i].id);
      /* one byte changed: whatever the brute force says (no other name) */
      seed = seed * 1103515245u + 12345u;
      size_t at = (seed >> 16) % len;
      char keep = buf[at];
      buf[at] = (char)('0' + (seed >> 8) % 10);
      phttp_known want = PH_OTHER;
      for (size_t j = 0; j < nn; j++)
        if (strlen(names[j].name) == len && strncasecmp(buf, names[j].name, len) == 0)
          want = names[j].id;
      ck_assert_int_eq(phttp_known_of(buf, len), want);
      buf[at] = keep;
    }
    ck_assert_int_eq(phttp_known_of(names[i].name, len - 1), PH_OTHER);
    memcpy(buf, names[i].name, len);
    buf[len] = 's';
    ck_assert_int_eq(phttp_known_of(buf, len + 1), PH_OTHER);
  }
  ck_assert_int_eq(phttp_known_of("", 0), PH_OTHER);
  ck_assert_int_eq(phttp_known_of("mcp-param-region", 16), PH_OTHER);
  char longname[300];
  memset(longname, 'a', sizeof longname);
  ck_assert_int_eq(phttp_known_of(longname, sizeof longname), PH_OTHER);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("http-hdr");
  TCase *tc = tcase_create("hdr");
  tcase_add_test(tc, accept_values);
  tcase_add_test(tc, content_type);
  tcase_add_test(tc, host_and_origin);
  tcase_add_test(tc, event_ids_versions_sessions);
  tcase_add_test(tc, listen_address);
  tcase_add_test(tc, known_fields);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
