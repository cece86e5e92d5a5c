/* SPDX-License-Identifier: MIT */
/* The OAuth server's parsers on arbitrary bytes (frontends/http/oauth_util.c):
 * form/query parsing, redirect-URI rules, token shapes, cookies, configured
 * and forwarded base URLs, and the escapers. Beyond not crashing, each
 * checks what its callers rely on: an accepted redirect URI or base URL
 * can go into a Location header (no CR, LF, space, '#'), escaped HTML has
 * no markup characters left, URL escaping leaves only unreserved bytes and
 * '%XX'. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oauth.h"

static void check(int ok)
{
  if (!ok)
    abort();
}

static int header_safe(const char *s)
{
  return !strpbrk(s, "\r\n \t#\"<>\\");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *s = malloc(size + 1);
  if (!s)
    return 0;
  memcpy(s, data, size);
  s[size] = '\0'; /* stops at the first NUL, like a C string from a header */
  static const char *const names[] = {"code", "state", "redirect_uri", "a", ""};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char *v = NULL;
    int rc = poauth_form_get(s, names[i], &v);
    check(rc >= -2 && rc <= 1);
    check((rc == 1) == (v != NULL));
    if (v)
      check(strlen(v) <= size);
    free(v);
  }
  char why[200];
  if (poauth_redirect_uri_check(s, why, sizeof why) == 0) {
    check(header_safe(s));
    check(strlen(s) <= 2000);
  }
  /* A client_id URL that passes is https, short, header-safe, has a path. */
  if (poauth_cimd_url_check(s, why, sizeof why) == 0) {
    check(strncmp(s, "https://", 8) == 0);
    check(strlen(s) <= PMCP_OAUTH_CLIENT_ID_MAX);
    check(header_safe(s));
    check(strchr(s + 8, '/') != NULL);
  }
  if (pmcp_oauth_token_shape_ok(s, PMCP_OAUTH_AT_PREFIX))
    check(strlen(s) == strlen(PMCP_OAUTH_AT_PREFIX) + PMCP_OAUTH_SECRET_CHARS);
  char *c = poauth_cookie_get(s, "pbm_session");
  free(c);
  char base[600];
  if (poauth_config_url(s, base, sizeof base, why, sizeof why) == 0)
    check(header_safe(base) && strncmp(base, "http", 4) == 0);
  pmcp_buf b = {0};
  poauth_html_escape(&b, s);
  check(!b.ptr || !strpbrk(b.ptr, "<>\"'"));
  pmcp_buf_dispose(&b);
  poauth_url_escape(&b, s);
  for (size_t i = 0; b.ptr && b.ptr[i]; i++) {
    char ch = b.ptr[i];
    check((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
          strchr("-._~%", ch));
  }
  pmcp_buf_dispose(&b);
  /* The input as a forwarded host and proto. */
  pmcp_http_request r = PMCP_HTTP_REQUEST_INIT;
  const char *hn[3] = {"host", "x-forwarded-host", "forwarded"};
  const char *hv[3] = {"127.0.0.1:1", s, s};
  r.names = hn;
  r.values = hv;
  r.nheaders = 3;
  static pmcp_http *h;
  if (!h) {
    pmcp_http_options o = PMCP_HTTP_OPTIONS_INIT;
    o.testing = 1;
    if (pmcp_http_new(&h, &o, why, sizeof why) != 0)
      abort();
  }
  r.h = h;
  if (poauth_base_url(&r, NULL, base, sizeof base) == 0)
    check(header_safe(base));
  r.nheaders = 3;
  hn[1] = "x-forwarded-proto";
  if (poauth_base_url(&r, NULL, base, sizeof base) == 0)
    check(header_safe(base));
  free(s);
  return 0;
}
