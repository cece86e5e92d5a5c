/* SPDX-License-Identifier: MIT */
/* The HTTP transport's public API (probemcp/http.h) through the shared
 * libprobemcp-http alone: options checked (version, endpoint), a real bind
 * on loopback reporting its port, a taken port refused with PMCP_EIO, the
 * listen-address parser, and what a host's route handler and auth
 * callback are handed: the versioned request and response, or release
 * 0.1's layouts for options of version 1. Serving itself is tested over
 * sockets by tests/http and by install-test's http_host. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <check.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

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


/* ---- what handlers are handed ---- */

/* Release 0.1's http.h, member for member: a host built against it. */
typedef struct request_0_1 {
  pmcp_http *h;
  const char *method, *path, *query, *body;
  size_t body_len;
  size_t nheaders;
  const char *const *names;
  const char *const *values;
  const char *peer;
} request_0_1;

typedef struct response_0_1 {
  int status;
  const char *content_type;
  pmcp_buf headers;
  pmcp_buf body;
} response_0_1;

/* The calls such a host is bound to: the names at version PMCP_0.1. */
static const char *(*header_0_1)(const request_0_1 *, const char *, int *);
static int (*trusted_0_1)(const request_0_1 *);

static char auth_saw[400];

static int route_match(void *ud, const char *method, const char *path, size_t n)
{
  (void)ud;
  (void)method;
  return n == 6 && memcmp(path, "/hello", 6) == 0;
}

static void route_current(void *ud, const pmcp_http_request *req, pmcp_http_response *res)
{
  (void)ud;
  int n = 0;
  const char *v = pmcp_http_request_header(req, "x-probe", &n);
  pmcp_buf_printf(&res->body, "req v%u res v%u %s %s q=%s body=%s/%zu x-probe=%s*%d trusted=%d",
                  req->version, res->version, req->method, req->path, req->query, req->body,
                  req->body_len, v ? v : "-", n, pmcp_http_peer_trusted(req));
  pmcp_buf_puts(&res->headers, "X-Layout: current\r\n");
  res->content_type = "text/plain";
  res->status = 201;
}

static void route_0_1(void *ud, const pmcp_http_request *r, pmcp_http_response *rs)
{
  (void)ud;
  const request_0_1 *req = (const void *)r;
  response_0_1 *res = (void *)rs;
  int n = 0;
  const char *v = header_0_1(req, "x-probe", &n);
  pmcp_buf_printf(&res->body, "0.1 %s %s q=%s body=%s/%zu x-probe=%s*%d trusted=%d",
                  req->method, req->path, req->query, req->body, req->body_len, v ? v : "-", n,
                  trusted_0_1(req));
  pmcp_buf_puts(&res->headers, "X-Layout: 0.1\r\n");
  res->content_type = "text/plain";
  res->status = 201;
}

/* Records what it saw and refuses. */
static void *auth_current(void *ud, const pmcp_http_request *req, char *challenge,
                          size_t cs, char *why, size_t ws)
{
  (void)ud;
  (void)why;
  (void)ws;
  int n = 0;
  const char *v = pmcp_http_request_header(req, "x-probe", &n);
  snprintf(auth_saw, sizeof auth_saw, "req v%u %s %s x-probe=%s*%d trusted=%d", req->version,
           req->method, req->path, v ? v : "-", n, pmcp_http_peer_trusted(req));
  snprintf(challenge, cs, "Bearer realm=\"t\"");
  return NULL;
}

static void *auth_0_1(void *ud, const pmcp_http_request *r, char *challenge, size_t cs,
                      char *why, size_t ws)
{
  (void)ud;
  (void)why;
  (void)ws;
  const request_0_1 *req = (const void *)r;
  int n = 0;
  const char *v = header_0_1(req, "x-probe", &n);
  snprintf(auth_saw, sizeof auth_saw, "0.1 %s %s x-probe=%s*%d trusted=%d", req->method,
           req->path, v ? v : "-", n, trusted_0_1(req));
  snprintf(challenge, cs, "Bearer realm=\"t\"");
  return NULL;
}

typedef struct served {
  pmcp_http *h;
  pmcp_server *srv;
} served;

static void *serve_thread(void *p)
{
  served *s = p;
  pmcp_http_serve(s->h, s->srv);
  return NULL;
}

/* One request over a fresh connection: the whole response (the
 * transport closes after it). */
static char *exchange(int port, const char *req)
{
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ck_assert_int_ge(fd, 0);
  struct timeval tv = {10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  ck_assert_int_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
  size_t cap = 8192, len = 0;
  char *out = malloc(cap);
  ssize_t n;
  while (len + 1 < cap && (n = read(fd, out + len, cap - 1 - len)) > 0)
    len += (size_t)n;
  out[len] = '\0';
  close(fd);
  return out;
}

/* A route request and an endpoint request through a transport whose
 * options are of @p version, with the handlers of that release. */
static void serve_both(unsigned version, char **route_out, char **auth_out)
{
  pmcp_http_options o = PMCP_HTTP_OPTIONS_INIT;
  const char *proxies[] = {"127.0.0.1"};
  o.version = version;
  o.trusted_proxies = proxies;
  o.n_trusted_proxies = 1;
  o.route_match = route_match;
  o.route_handle = version == 1 ? route_0_1 : route_current;
  o.auth = version == 1 ? auth_0_1 : auth_current;
  FILE *devnull = fopen("/dev/null", "w");
  o.announce = devnull;
  served s = {NULL, NULL};
  char err[200];
  ck_assert_int_eq(pmcp_http_new(&s.h, &o, err, sizeof err), 0);
  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  so.name = "http-api";
  so.sink = pmcp_http_sink;
  so.sink_ud = s.h;
  ck_assert_int_eq(pmcp_server_new(&s.srv, &so), 0);
  int port = pmcp_http_port(s.h);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, serve_thread, &s), 0);
  char req[1024];
  snprintf(req, sizeof req,
           "POST /hello?a=b%%20c HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Probe: one\r\n"
           "x-probe: two\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
           port);
  *route_out = exchange(port, req);
  const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
  snprintf(req, sizeof req,
           "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Probe: three\r\n"
           "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
           "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
           port, strlen(body), body);
  *auth_out = exchange(port, req);
  kill(getpid(), SIGTERM); /* what pmcp_http_serve() waits for */
  pthread_join(t, NULL);
  pmcp_server_free(s.srv);
  pmcp_http_free(s.h);
  fclose(devnull);
}

START_TEST(test_handlers_get_versioned_layouts)
{
  char *route = NULL, *auth = NULL;
  serve_both(PMCP_HTTP_OPTIONS_VERSION, &route, &auth);
  ck_assert_msg(strncmp(route, "HTTP/1.1 201 ", 13) == 0, "%s", route);
  ck_assert_ptr_nonnull(strstr(route, "\r\nX-Layout: current\r\n"));
  ck_assert_ptr_nonnull(strstr(route, "\r\nContent-Type: text/plain\r\n"));
  char want[200];
  snprintf(want, sizeof want,
           "\r\n\r\nreq v%d res v%d POST /hello q=a=b%%20c body=hello/5 x-probe=one*2 trusted=1",
           PMCP_HTTP_REQUEST_VERSION, PMCP_HTTP_RESPONSE_VERSION);
  ck_assert_msg(strstr(route, want) != NULL, "%s", route);
  ck_assert_int_eq(PMCP_HTTP_REQUEST_VERSION, 2);
  ck_assert_int_eq(PMCP_HTTP_RESPONSE_VERSION, 2);
  ck_assert_msg(strncmp(auth, "HTTP/1.1 401 ", 13) == 0, "%s", auth);
  ck_assert_str_eq(auth_saw, "req v2 POST /mcp x-probe=three*1 trusted=1");
  free(route);
  free(auth);
}
END_TEST

/* A host built against release 0.1 (options version 1, the calls at
 * PMCP_0.1) is served as before: its handlers read the layouts without
 * the version member, and its calls read them too. */
START_TEST(test_handlers_of_release_0_1)
{
  *(void **)&header_0_1 = dlvsym(RTLD_DEFAULT, "pmcp_http_request_header", "PMCP_0.1");
  *(void **)&trusted_0_1 = dlvsym(RTLD_DEFAULT, "pmcp_http_peer_trusted", "PMCP_0.1");
  ck_assert_msg(header_0_1 && trusted_0_1, "the PMCP_0.1 symbols: %s", dlerror());
  void *cur = dlvsym(RTLD_DEFAULT, "pmcp_http_request_header", "PMCP_0.2");
  ck_assert_msg(cur && cur != *(void **)&header_0_1, "a default version of its own");
  cur = dlvsym(RTLD_DEFAULT, "pmcp_http_peer_trusted", "PMCP_0.2");
  ck_assert_msg(cur && cur != *(void **)&trusted_0_1, "a default version of its own");
  char *route = NULL, *auth = NULL;
  serve_both(1, &route, &auth);
  ck_assert_msg(strncmp(route, "HTTP/1.1 201 ", 13) == 0, "%s", route);
  ck_assert_ptr_nonnull(strstr(route, "\r\nX-Layout: 0.1\r\n"));
  ck_assert_ptr_nonnull(strstr(route, "\r\nContent-Type: text/plain\r\n"));
  ck_assert_msg(strstr(route, "\r\n\r\n0.1 POST /hello q=a=b%20c body=hello/5 x-probe=one*2 "
                              "trusted=1") != NULL, "%s", route);
  ck_assert_msg(strncmp(auth, "HTTP/1.1 401 ", 13) == 0, "%s", auth);
  ck_assert_str_eq(auth_saw, "0.1 POST /mcp x-probe=three*1 trusted=1");
  free(route);
  free(auth);
}
END_TEST

/* The INIT macros: current versions, every other member empty. */
START_TEST(test_request_init)
{
  pmcp_http_request r = PMCP_HTTP_REQUEST_INIT;
  pmcp_http_response res = PMCP_HTTP_RESPONSE_INIT;
  ck_assert_uint_eq(r.version, PMCP_HTTP_REQUEST_VERSION);
  ck_assert_ptr_null(r.h);
  ck_assert_uint_eq(r.nheaders, 0);
  ck_assert_ptr_null(pmcp_http_request_header(&r, "host", NULL));
  ck_assert_int_eq(pmcp_http_peer_trusted(&r), 0);
  ck_assert_uint_eq(res.version, PMCP_HTTP_RESPONSE_VERSION);
  ck_assert_int_eq(res.status, 0);
  ck_assert_ptr_null(res.body.ptr);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("http-api");
  TCase *tc = tcase_create("api");
  tcase_add_test(tc, test_options_checked);
  tcase_add_test(tc, test_bind);
  tcase_add_test(tc, test_parse_listen);
  tcase_add_test(tc, test_handlers_get_versioned_layouts);
  tcase_add_test(tc, test_handlers_of_release_0_1);
  tcase_add_test(tc, test_request_init);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
