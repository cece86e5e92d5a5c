/* SPDX-License-Identifier: MIT */
/* The HTTP transport's public API (probemcp/http.h) through the shared
 * libprobemcp-http alone: options checked (version, endpoint), a real bind
 * on loopback reporting its port, a taken port refused with PMCP_EIO, the
 * listen-address parser. Serving itself is tested over sockets by
 * tests/http and by install-test's http_host. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <probemcp/probemcp.h>
#include <probemcp/http.h>

START_TEST(test_options_checked)
{
  pmcp_http *h = (pmcp_http *)&h;
  char err[200] = "";
  ck_assert_int_eq(pmcp_http_new(&h, NULL, err, sizeof err), PMCP_EINVAL);
  pmcp_http_options o = PMCP_HTTP_OPTIONS_INIT;
  o.version = 0;
  ck_assert_int_eq(pmcp_http_new(&h, &o, err, sizeof err), PMCP_EINVAL);
  ck_assert_ptr_null(h);
  ck_assert_ptr_nonnull(strstr(err, "options version 0"));
  o.version = PMCP_HTTP_OPTIONS_VERSION + 1;
  ck_assert_int_eq(pmcp_http_new(&h, &o, err, sizeof err), PMCP_EINVAL);
  o.version = PMCP_HTTP_OPTIONS_VERSION;
  o.endpoint = "mcp";
  ck_assert_int_eq(pmcp_http_new(&h, &o, err, sizeof err), PMCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err, "endpoint"));
  o.endpoint = NULL;
  o.host = "not-an-address";
  ck_assert_int_eq(pmcp_http_new(&h, &o, err, sizeof err), PMCP_EIO);
  ck_assert_ptr_nonnull(strstr(err, "cannot listen on not-an-address"));
}
END_TEST

START_TEST(test_bind)
{
  pmcp_http_options o = PMCP_HTTP_OPTIONS_INIT;
  pmcp_http *h = NULL, *h2 = NULL;
  char err[200];
  ck_assert_int_eq(pmcp_http_new(&h, &o, err, sizeof err), 0);
  int port = pmcp_http_port(h);
  ck_assert_int_gt(port, 0);
  ck_assert_str_eq(pmcp_http_endpoint(h), "/mcp");
  ck_assert(pmcp_http_host_allowed(h, "localhost"));
  ck_assert(pmcp_http_host_allowed(h, "127.0.0.1"));
  ck_assert(!pmcp_http_host_allowed(h, "evil.example"));
  /* Configured hosts: NAME or NAME:PORT; anything else fails creation. */
  const char *bad[] = {"bad host", "x:0", "x:65536", "[::1", "a:b", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    pmcp_http_options ob = PMCP_HTTP_OPTIONS_INIT;
    ob.allow_hosts = &bad[i];
    ob.n_allow_hosts = 1;
    ck_assert_int_eq(pmcp_http_new(&h2, &ob, err, sizeof err), PMCP_EINVAL);
    ck_assert_ptr_null(h2);
    ck_assert_ptr_nonnull(strstr(err, "expected NAME or NAME:PORT"));
  }
  const char *good[] = {"MCP.Example.com:8443", "[::2]:9"};
  pmcp_http_options og = PMCP_HTTP_OPTIONS_INIT;
  og.allow_hosts = good;
  og.n_allow_hosts = 2;
  ck_assert_int_eq(pmcp_http_new(&h2, &og, err, sizeof err), 0);
  ck_assert(pmcp_http_host_allowed(h2, "mcp.example.com"));
  ck_assert(pmcp_http_host_allowed(h2, "[::2]"));
  pmcp_http_free(h2);
  h2 = NULL;
  /* The same port again: refused, with the address in the reason. */
  o.port = port;
  ck_assert_int_eq(pmcp_http_new(&h2, &o, err, sizeof err), PMCP_EIO);
  ck_assert_ptr_null(h2);
  ck_assert_ptr_nonnull(strstr(err, "cannot listen on 127.0.0.1:"));
  pmcp_http_free(h);
  pmcp_http_free(NULL);
  /* Freed: the port can be bound again. */
  ck_assert_int_eq(pmcp_http_new(&h2, &o, err, sizeof err), 0);
  ck_assert_int_eq(pmcp_http_port(h2), port);
  pmcp_http_free(h2);
}
END_TEST

START_TEST(test_parse_listen)
{
  char host[64], err[200];
  int port = -1;
  ck_assert_int_eq(pmcp_http_parse_listen("0.0.0.0:8080", host, sizeof host, &port, err, sizeof err), 0);
  ck_assert_str_eq(host, "0.0.0.0");
  ck_assert_int_eq(port, 8080);
  ck_assert_int_eq(pmcp_http_parse_listen("[::1]:9", host, sizeof host, &port, err, sizeof err), 0);
  ck_assert_str_eq(host, "::1");
  ck_assert_int_eq(port, 9);
  ck_assert_int_eq(pmcp_http_parse_listen(":7", host, sizeof host, &port, err, sizeof err), 0);
  ck_assert_str_eq(host, "127.0.0.1");
  ck_assert_int_eq(port, 7);
  ck_assert_int_eq(pmcp_http_parse_listen("7000", host, sizeof host, &port, err, sizeof err), 0);
  ck_assert_str_eq(host, "127.0.0.1");
  ck_assert_int_eq(port, 7000);
  ck_assert_int_eq(pmcp_http_parse_listen("h:70000", host, sizeof host, &port, err, sizeof err), -1);
  ck_assert_ptr_nonnull(strstr(err, "0-65535"));
  ck_assert_int_eq(pmcp_http_parse_listen("", host, sizeof host, &port, err, sizeof err), -1);
  ck_assert_int_eq(pmcp_http_parse_listen("[::1:80", host, sizeof host, &port, err, sizeof err), -1);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("http-api");
  TCase *tc = tcase_create("api");
  tcase_add_test(tc, test_options_checked);
  tcase_add_test(tc, test_bind);
  tcase_add_test(tc, test_parse_listen);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
