/* SPDX-License-Identifier: MIT */
/* probe-mcp-http's OAuth server (frontends/http/oauth_*.c): PKCE S256,
 * redirect-URI rules, token shapes and hashes (tampered, truncated),
 * form parsing, escaping, base URLs, and the code / refresh-token state
 * machine over a real SQLite store: single use, replay revokes, rotation,
 * reuse revokes, expiry, membership, pruning, RFC 7009, audit. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "oauth.h"
#include "store-test-util.h"
#include "store/db.h"
#include "util/base64url.h"

/* ---- client ID metadata documents: URL rules, address classes ---------------- */

static int addr_class(const char *text)
{
  struct sockaddr_in in = {0};
  struct sockaddr_in6 in6 = {0};
  if (inet_pton(AF_INET, text, &in.sin_addr) == 1) {
    in.sin_family = AF_INET;
    return poauth_cimd_address_class((const struct sockaddr *)&in);
  }
  ck_assert_int_eq(inet_pton(AF_INET6, text, &in6.sin6_addr), 1);
  in6.sin6_family = AF_INET6;
  return poauth_cimd_address_class((const struct sockaddr *)&in6);
}

START_TEST(cimd_rules)
{
  static const char *const loop[] = {"127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1"};
  static const char *const special[] = {
    "0.0.0.0", "10.0.0.1", "100.64.1.1", "169.254.169.254", "172.16.0.1", "172.31.255.255",
    "192.0.0.8", "192.0.2.1", "192.168.1.1", "198.18.0.1", "198.51.100.7", "203.0.113.9",
    "224.0.0.1", "240.0.0.1", "255.255.255.255", "::", "fd00::1", "fc00::1", "fe80::1",
    "fec0::1", "ff02::1", "2001:db8::1", "::ffff:10.0.0.1", "64:ff9b::a9fe:a9fe", "::10.0.0.1"};
  static const char *const ordinary[] = {"1.1.1.1", "8.8.8.8", "172.32.0.1", "100.128.0.1",
                                         "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"};
  for (size_t i = 0; i < sizeof loop / sizeof *loop; i++)
    ck_assert_msg(addr_class(loop[i]) == 1, "%s", loop[i]);
  for (size_t i = 0; i < sizeof special / sizeof *special; i++)
    ck_assert_msg(addr_class(special[i]) == 2, "%s", special[i]);
  for (size_t i = 0; i < sizeof ordinary / sizeof *ordinary; i++)
    ck_assert_msg(addr_class(ordinary[i]) == 0, "%s", ordinary[i]);
  char why[200];
  ck_assert_int_eq(poauth_cimd_url_check("https://app.example.com/oauth/client.json", why, sizeof why), 0);
  ck_assert_int_eq(poauth_cimd_url_check("https://app.example.com:8443/c?v=1", why, sizeof why), 0);
  static const char *const bad[] = {
    "http://app.example.com/client.json", "HTTPS://app.example.com/c", "https://app.example.com",
    "https://app.example.com/", "https://app.example.com/?x", "https://u@app.example.com/c",
    "https://app.example.com/c#f", "https://*.example.com/c", "https://app.example.com/a/../c",
    "https://app.example.com/./c", "https://app.example.com/c/..", "https://app.example.com:0/c",
    "https://app.example.com/c d"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    ck_assert_msg(poauth_cimd_url_check(bad[i], why, sizeof why) == -1, "%s", bad[i]);
  char longer[PMCP_OAUTH_CLIENT_ID_MAX + 40];
  snprintf(longer, sizeof longer, "https://app.example.com/%0*d", PMCP_OAUTH_CLIENT_ID_MAX, 0);
  ck_assert_int_eq(poauth_cimd_url_check(longer, why, sizeof why), -1);
  ck_assert(poauth_cimd_is_url("https://x/y") && poauth_cimd_is_url("http://x/y"));
  ck_assert(!poauth_cimd_is_url("pbm_client_abc"));
  char host[64];
  poauth_cimd_host("https://app.example.com:8443/c?x", host, sizeof host);
  ck_assert_str_eq(host, "app.example.com:8443");
}
END_TEST

/* ---- PKCE --------------------------------------------------------------- */

START_TEST(pkce_rfc7636_example)
{
  /* RFC 7636 appendix B. */
  const char *v = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
  const char *c = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
  ck_assert(pmcp_oauth_verifier_valid(v));
  ck_assert(pmcp_oauth_challenge_valid(c));
  ck_assert(pmcp_oauth_pkce_s256_ok(v, c));
  /* One character off in either. */
  ck_assert(!pmcp_oauth_pkce_s256_ok("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXl", c));
  ck_assert(!pmcp_oauth_pkce_s256_ok(v, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN"));
  /* plain: the verifier given as its own challenge never passes. */
  ck_assert(!pmcp_oauth_pkce_s256_ok(v, v));
  /* Verifier bounds and alphabet. */
  ck_assert(!pmcp_oauth_verifier_valid("short"));
  char longv[130];
  memset(longv, 'a', 129);
  longv[129] = '\0';
  ck_assert(!pmcp_oauth_verifier_valid(longv));
  longv[128] = '\0';
  ck_assert(pmcp_oauth_verifier_valid(longv));
  ck_assert(!pmcp_oauth_verifier_valid("dBjftJeZ4CVP+mJ92K27uhbUJU1p1r/wW1gFWFOEjXk"));
  ck_assert(pmcp_oauth_verifier_valid("dBjftJeZ4CVP.mJ92K27uhbUJU1p1r~wW1gFWFOEjXk"));
  ck_assert(!pmcp_oauth_challenge_valid("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-c"));
  ck_assert(!pmcp_oauth_challenge_valid("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM="));
  ck_assert(!pmcp_oauth_pkce_s256_ok(NULL, c));
  ck_assert(!pmcp_oauth_pkce_s256_ok(v, NULL));
}
END_TEST

/* ---- redirect URIs ---------------------------------------------------------- */

START_TEST(redirect_uris)
{
  static const char *const good[] = {
    "https://app.example.com/callback", "https://app.example.com:8443/cb?x=1",
    "http://localhost:3000/callback", "http://127.0.0.1:41234/cb",
    "http://127.9.9.9/cb", "http://[::1]:8080/cb", "http://LOCALHOST/cb",
    "cursor://anysphere.cursor-retrieval/oauth/user-probe/callback",
    "com.example.app:/oauth2redirect", "vscode://vscode.github-authentication/did-authenticate",
    "https://a-b.example.com:65535/cb", "https://192.0.2.10/cb", "https://[2001:db8::1]:443/cb",
    "com.example.app://cb/path", "Com.Example-App:/cb"};
  static const char *const bad[] = {
    "", "http://example.com/cb", "http://localhost.evil.com/cb",
    "http://127.0.0.1.evil.com/cb", "http://10.0.0.1/cb", "https://app.example.com/cb#frag",
    "https://user@evil.example/cb", "https:///nohost", "https:app.example.com",
    "javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,hi", "file:///etc/passwd",
    "https://app.example.com/a b", "https://app.example.com:/cb",
    "https://app.example.com:80x/cb", "relative/path", "//app.example.com/cb",
    "cursor:", "https://[::1/cb", "http://[::2]/cb", "https://a.example\\@evil.example/",
    "cursor:\\//x", "https://a.example/<x>", "https://a.example/{x}",
    /* not on the allow-list: schemes the system hands to other handlers */
    "smb://evil.example/share", "search-ms:query=x&crumb=location:\\\\evil", "shell:startup",
    "jar:https://evil.example/x.jar!/", "ldap://evil.example/o=x", "ms-settings:privacy",
    "steam://run/1", "itms-services://?action=download", "mycustom:/cb",
    /* wildcard and malformed hosts, ports out of range */
    "https://*.example.com/cb", "https://a..example.com/cb", "https://-a.example.com/cb",
    "https://a-.example.com/cb", "https://a_b.example.com/cb", "https://a.example%2ecom/cb",
    "https://999.1.1.1/cb", "https://1.2.3/cb", "https://a.example:0/cb",
    "https://a.example:65536/cb", "https://a.example:123456/cb", "https://[zz::1]/cb",
    "com.example.app://*.evil/cb", "com..example:/cb", "com.example.:/cb", "cursor://",
    "http://127.0.0.1:99999/cb"};
  char why[200];
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    ck_assert_msg(poauth_redirect_uri_check(good[i], why, sizeof why) == 0,
                  "%s refused: %s", good[i], why);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    why[0] = '\0';
    ck_assert_msg(poauth_redirect_uri_check(bad[i], why, sizeof why) == -1,
                  "%s accepted", bad[i]);
    ck_assert_msg(strstr(why, "redirect_uri") != NULL, "reason for %s: %s", bad[i], why);
  }
  /* JSON strings cJSON would cut. */
#define NUL(t) poauth_json_has_nul(t, sizeof t - 1)
  ck_assert(NUL("{\"client_name\":\"a\\u0000b\"}"));
  ck_assert(NUL("{\"a\":\"x\0y\"}"));
  ck_assert(!NUL("{\"a\":\"x\\\\u0000\"}")); /* an escaped backslash, then text */
  ck_assert(NUL("{\"a\":\"\\u00001\"}"));
  ck_assert(NUL("{\"a\":\"\\u0041\\\"\\u0000\"}"));
  ck_assert(!NUL("{\"a\":\"plain\"}"));
#undef NUL
  char huge[2100];
  memset(huge, 'a', sizeof huge - 1);
  huge[sizeof huge - 1] = '\0';
  memcpy(huge, "https://a/", 10);
  ck_assert_int_eq(poauth_redirect_uri_check(huge, why, sizeof why), -1);
}
END_TEST

/* ---- tokens ------------------------------------------------------------------ */

START_TEST(token_shapes)
{
  char a[PMCP_OAUTH_TOKEN_MAX], b[PMCP_OAUTH_TOKEN_MAX];
  ck_assert_int_eq(pmcp_oauth_token_new(PMCP_OAUTH_AT_PREFIX, a, sizeof a), 0);
  ck_assert_int_eq(pmcp_oauth_token_new(PMCP_OAUTH_AT_PREFIX, b, sizeof b), 0);
  ck_assert_str_ne(a, b);
  ck_assert_uint_eq(strlen(a), strlen(PMCP_OAUTH_AT_PREFIX) + PMCP_OAUTH_SECRET_CHARS);
  ck_assert(pmcp_oauth_token_shape_ok(a, PMCP_OAUTH_AT_PREFIX));
  ck_assert(!pmcp_oauth_token_shape_ok(a, PMCP_OAUTH_RT_PREFIX));
  /* Truncated, extended, tampered. */
  char t[PMCP_OAUTH_TOKEN_MAX + 2];
  snprintf(t, sizeof t, "%s", a);
  t[strlen(t) - 1] = '\0';
  ck_assert(!pmcp_oauth_token_shape_ok(t, PMCP_OAUTH_AT_PREFIX));
  snprintf(t, sizeof t, "%sA", a);
  ck_assert(!pmcp_oauth_token_shape_ok(t, PMCP_OAUTH_AT_PREFIX));
  snprintf(t, sizeof t, "%s", a);
  t[10] = '!';
  ck_assert(!pmcp_oauth_token_shape_ok(t, PMCP_OAUTH_AT_PREFIX));
  /* The last character carries 4 unused bits, always zero from us: 'B'
   * (000001) has one set. */
  snprintf(t, sizeof t, "%s", a);
  t[strlen(t) - 1] = 'B';
  ck_assert(!pmcp_oauth_token_shape_ok(t, PMCP_OAUTH_AT_PREFIX));
  ck_assert(!pmcp_oauth_token_shape_ok("", PMCP_OAUTH_AT_PREFIX));
  ck_assert(!pmcp_oauth_token_shape_ok(NULL, PMCP_OAUTH_AT_PREFIX));
  /* The hash: 64 lower-case hex, stable, different per token. */
  char h1[PMCP_OAUTH_HASH_HEX], h2[PMCP_OAUTH_HASH_HEX], h3[PMCP_OAUTH_HASH_HEX];
  ck_assert_int_eq(pmcp_oauth_token_hash(a, h1, sizeof h1), 0);
  ck_assert_int_eq(pmcp_oauth_token_hash(a, h2, sizeof h2), 0);
  ck_assert_int_eq(pmcp_oauth_token_hash(b, h3, sizeof h3), 0);
  ck_assert_uint_eq(strlen(h1), 64);
  ck_assert_str_eq(h1, h2);
  ck_assert_str_ne(h1, h3);
  ck_assert_uint_eq(strspn(h1, "0123456789abcdef"), 64);
  /* SHA-256("abc"), to pin the function. */
  ck_assert_int_eq(pmcp_oauth_token_hash("abc", h1, sizeof h1), 0);
  ck_assert_str_eq(h1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

/* The (buffer, size) calls: one byte short is PMCP_ETOOBIG with the buffer
 * "" and nothing written past @p size, the exact size is enough, and what
 * fits is what these calls always made (the digests against hashlib's). */
static void filled(char *b, size_t n) { memset(b, 'x', n); }

static int untouched(const char *b, size_t from, size_t n)
{
  for (size_t i = from; i < n; i++)
    if (b[i] != 'x')
      return 0;
  return 1;
}

/* A digest call (token hash, CSRF token) of @p in, whose hex is @p want:
 * a byte short, the exact size, NULL in or out. */
static void digest_sizes(int (*fn)(const char *, char *, size_t), const char *in,
                         const char *want)
{
  char h[PMCP_OAUTH_HASH_HEX + 8];
  filled(h, sizeof h);
  ck_assert_int_eq(fn(in, h, PMCP_OAUTH_HASH_HEX - 1), PMCP_ETOOBIG);
  ck_assert_str_eq(h, "");
  ck_assert(untouched(h, 1, sizeof h));
  filled(h, sizeof h);
  ck_assert_int_eq(fn(in, h, PMCP_OAUTH_HASH_HEX), 0);
  ck_assert_str_eq(h, want);
  ck_assert(untouched(h, PMCP_OAUTH_HASH_HEX, sizeof h));
  ck_assert_int_eq(fn(NULL, h, sizeof h), PMCP_EINVAL);
  ck_assert_str_eq(h, "");
  ck_assert_int_eq(fn(in, NULL, PMCP_OAUTH_HASH_HEX), PMCP_EINVAL);
}

START_TEST(token_buffer_sizes)
{
  char buf[PMCP_OAUTH_TOKEN_MAX + 16];
  /* The longest prefix PMCP_OAUTH_TOKEN_MAX leaves room for, and one more. */
  char longest[PMCP_OAUTH_TOKEN_MAX], too_long[PMCP_OAUTH_TOKEN_MAX];
  size_t lp = PMCP_OAUTH_TOKEN_MAX - PMCP_OAUTH_SECRET_CHARS - 1;
  memset(longest, 'p', lp);
  longest[lp] = '\0';
  memset(too_long, 'p', lp + 1);
  too_long[lp + 1] = '\0';
  const char *prefixes[] = {PMCP_OAUTH_AT_PREFIX, PMCP_OAUTH_RT_PREFIX, PMCP_OAUTH_CODE_PREFIX,
                            "pbm_li_", "", longest};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    const char *p = prefixes[i];
    size_t need = strlen(p) + PMCP_OAUTH_SECRET_CHARS + 1;
    ck_assert_uint_le(need, PMCP_OAUTH_TOKEN_MAX);
    filled(buf, sizeof buf);
    ck_assert_int_eq(pmcp_oauth_token_new(p, buf, need - 1), PMCP_ETOOBIG);
    ck_assert_str_eq(buf, "");
    ck_assert(untouched(buf, 1, sizeof buf));
    filled(buf, sizeof buf);
    ck_assert_int_eq(pmcp_oauth_token_new(p, buf, need), 0);
    ck_assert_uint_eq(strlen(buf), need - 1);
    ck_assert(untouched(buf, need, sizeof buf));
    ck_assert(pmcp_oauth_token_shape_ok(buf, p));
    ck_assert_int_eq(strncmp(buf, p, strlen(p)), 0);
  }
  filled(buf, sizeof buf);
  ck_assert_int_eq(pmcp_oauth_token_new(PMCP_OAUTH_AT_PREFIX, buf, 0), PMCP_ETOOBIG);
  ck_assert(untouched(buf, 0, sizeof buf));
  /* A prefix PMCP_OAUTH_TOKEN_MAX has no room for stays refused, however
   * large the buffer, as before. */
  filled(buf, sizeof buf);
  ck_assert_int_eq(pmcp_oauth_token_new(too_long, buf, sizeof buf), PMCP_EINVAL);
  ck_assert_str_eq(buf, "");
  ck_assert_int_eq(pmcp_oauth_token_new(NULL, buf, sizeof buf), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_oauth_token_new(PMCP_OAUTH_AT_PREFIX, NULL, 64), PMCP_EINVAL);

  /* SHA-256 of the token; the CSRF token's of "probe-mcp consent csrf\n"
   * and the cookie. */
  digest_sizes(pmcp_oauth_token_hash, "abc",
               "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  digest_sizes(pmcp_oauth_token_hash, "",
               "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const char *cookie = "pbm_ss_cookie-value";
  char h[PMCP_OAUTH_HASH_HEX];
  digest_sizes(pmcp_oauth_csrf_token, cookie,
               "9fa84dad9b86333895fff3cabf0aba840a000534eca8ff6968a295fc98b05b37");
  ck_assert_int_eq(pmcp_oauth_csrf_token(cookie, h, sizeof h), 0);
  ck_assert(pmcp_oauth_csrf_ok(cookie, h));
  ck_assert(!pmcp_oauth_csrf_ok("pbm_ss_other", h));
}
END_TEST

/* ---- forms, escaping, URLs ---------------------------------------------------- */

START_TEST(forms)
{
  char *v = NULL;
  ck_assert_int_eq(poauth_form_get("a=1&b=x+y%21&c=", "b", &v), 1);
  ck_assert_str_eq(v, "x y!");
  free(v);
  ck_assert_int_eq(poauth_form_get("a=1&b=2", "c", &v), 0);
  ck_assert_ptr_null(v);
  ck_assert_int_eq(poauth_form_get("a=1&c=", "c", &v), 1);
  ck_assert_str_eq(v, "");
  free(v);
  ck_assert_int_eq(poauth_form_get("a=1&a=2", "a", &v), -1);   /* repeated */
  ck_assert_int_eq(poauth_form_get("a=%zz", "a", &v), -1);
  ck_assert_int_eq(poauth_form_get("a=%4", "a", &v), -1);
  ck_assert_int_eq(poauth_form_get("a=%00x", "a", &v), -1);
  ck_assert_int_eq(poauth_form_get("%61=ok", "a", &v), 1);     /* encoded name */
  ck_assert_str_eq(v, "ok");
  free(v);
  ck_assert_int_eq(poauth_form_get("", "a", &v), 0);
  ck_assert_int_eq(poauth_form_get("ab=1", "a", &v), 0);
  pmcp_buf b = PMCP_BUF_INIT;
  poauth_html_escape(&b, "<script>alert(\"x\" & 'y')</script>");
  ck_assert_str_eq(b.ptr, "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;");
  pmcp_buf_dispose(&b);
  poauth_url_escape(&b, "a b&c=d/é~");
  ck_assert_str_eq(b.ptr, "a%20b%26c%3Dd%2F%C3%A9~");
  pmcp_buf_dispose(&b);
  char *c = poauth_cookie_get("x=1; pbm_session=abc; y=2", "pbm_session");
  ck_assert_str_eq(c, "abc");
  free(c);
  ck_assert_ptr_null(poauth_cookie_get("xpbm_session=abc", "pbm_session"));
  char out[600], why[100];
  ck_assert_int_eq(poauth_config_url("https://Mcp.Example.com/", out, sizeof out, why, sizeof why), 0);
  ck_assert_str_eq(out, "https://mcp.example.com");
  ck_assert_int_eq(poauth_config_url("HTTP://h:8080/base//", out, sizeof out, why, sizeof why), 0);
  ck_assert_str_eq(out, "http://h:8080/base");
  ck_assert_int_eq(poauth_config_url("ftp://h", out, sizeof out, why, sizeof why), -1);
  ck_assert_int_eq(poauth_config_url("https://h/?q", out, sizeof out, why, sizeof why), -1);
  ck_assert_int_eq(poauth_config_url("https://", out, sizeof out, why, sizeof why), -1);
  ck_assert_int_eq(poauth_config_url("https://h:x/", out, sizeof out, why, sizeof why), -1);
  poauth_origin_of("https://h:1/a/b", out, sizeof out);
  ck_assert_str_eq(out, "https://h:1");
}
END_TEST

START_TEST(base_urls)
{
  pmcp_http *h = NULL;
  pmcp_http_options o = PMCP_HTTP_OPTIONS_INIT;
  const char *hosts[] = {"mcp.example.com"};
  const char *proxies[] = {"10.0.0.7"};
  o.testing = 1;
  o.allow_hosts = hosts;
  o.n_allow_hosts = 1;
  o.trusted_proxies = proxies;
  o.n_trusted_proxies = 1;
  char err[200];
  ck_assert_int_eq(pmcp_http_new(&h, &o, err, sizeof err), 0);
  const char *names[4], *values[4];
  pmcp_http_request r = PMCP_HTTP_REQUEST_INIT;
  r.h = h;
  r.names = names;
  r.values = values;
  char out[600];
  names[0] = "host";
  values[0] = "127.0.0.1:8080";
  r.nheaders = 1;
  ck_assert_int_eq(poauth_base_url(&r, NULL, out, sizeof out), 0);
  ck_assert_str_eq(out, "http://127.0.0.1:8080");
  ck_assert_int_eq(poauth_base_url(&r, "https://fixed.example", out, sizeof out), 0);
  ck_assert_str_eq(out, "https://fixed.example");
  names[1] = "x-forwarded-proto";
  values[1] = "https, http";
  names[2] = "x-forwarded-host";
  values[2] = "MCP.example.com";
  r.nheaders = 3;
  /* From anyone but a trusted proxy, forwarded headers are ignored. */
  ck_assert_int_eq(poauth_base_url(&r, NULL, out, sizeof out), 0);
  ck_assert_str_eq(out, "http://127.0.0.1:8080");
  r.peer = "10.0.0.8";
  ck_assert_int_eq(poauth_base_url(&r, NULL, out, sizeof out), 0);
  ck_assert_str_eq(out, "http://127.0.0.1:8080");
  r.peer = "10.0.0.7";
  ck_assert_int_eq(poauth_base_url(&r, NULL, out, sizeof out), 0);
  ck_assert_str_eq(out, "https://mcp.example.com");
  values[2] = "evil.example";   /* not an allowed host */
  ck_assert_int_eq(poauth_base_url(&r, NULL, out, sizeof out), -1);
  values[2] = "mcp.example.com/x"; /* not a host */
  ck_assert_int_eq(poauth_base_url(&r, NULL, out, sizeof out), -1);
  names[1] = "forwarded";
  values[1] = "for=1.2.3.4;proto=https;host=\"mcp.example.com:8443\"";
  r.nheaders = 2;
  ck_assert_int_eq(poauth_base_url(&r, NULL, out, sizeof out), 0);
  ck_assert_str_eq(out, "https://mcp.example.com:8443");
  values[1] = "proto=gopher";
  ck_assert_int_eq(poauth_base_url(&r, NULL, out, sizeof out), -1);
  r.nheaders = 0;               /* no Host at all */
  ck_assert_int_eq(poauth_base_url(&r, NULL, out, sizeof out), -1);
  pmcp_http_free(h);
}
END_TEST

/* ---- the state machine ---------------------------------------------------------- */

static char audit_log[4096];
/* When set, the audit hook fails for this action (as a full disk would). */
static const char *audit_fail;

static int test_verify(const char *stored, const char *password, void *ud)
{
  (void)ud;
  return stored && *stored && strcmp(stored, password) == 0;
}

static int test_audit(void *ud, pmcp_store *st, const char *tenant, const char *ws,
                      const char *actor, const char *action, const char *details)
{
  (void)ud;
  (void)st;
  if (audit_fail && strcmp(action, audit_fail) == 0)
    return PMCP_EIO;
  size_t n = strlen(audit_log);
  snprintf(audit_log + n, sizeof audit_log - n, "%s|%s|%s|%s|%s\n", action,
           tenant ? tenant : "-", ws ? ws : "-", actor, details);
  return 0;
}

static pmcp_oauth *state;
static const char *const VER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
static const char *const CH = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
static const char *const CB = "http://127.0.0.1:9/cb";
static const char *const RES = "http://127.0.0.1:8080/mcp";
static char client[40];

static void setup(void)
{
  audit_log[0] = '\0';
  audit_fail = NULL;
  pmcp_store *s = st_open_new(NULL);
  const char *u1[] = {"u-ada", "ada", "pw-ada"};
  const char *u2[] = {"u-bob", "bob", "pw-bob"};
  const char *ins = "INSERT INTO users(id, name, password, created, updated)"
                    " VALUES($1, $2, $3, 1, 1)";
  ck_assert_int_eq(pmcp__db_exec(s, ins, 3, u1, NULL), 0);
  ck_assert_int_eq(pmcp__db_exec(s, ins, 3, u2, NULL), 0);
  const char *m1[] = {"u-ada", "main"};
  ck_assert_int_eq(pmcp__db_exec(s, "INSERT INTO memberships(user_id, tenant_id, workspace,"
                                    " role, created) SELECT $1, id, $2, 'editor', 1 FROM tenants"
                                    " WHERE name = 'default'", 2, m1, NULL), 0);
  pmcp_oauth_hooks hk = {test_verify, test_audit, NULL};
  ck_assert_int_eq(pmcp_oauth_new(&state, s, &hk), 0);
  ck_assert_int_eq(pmcp_oauth_client_register(state, "Test client", "[\"http://127.0.0.1:9/cb\"]",
                                          client, sizeof client), 0);
}

static void teardown(void)
{
  pmcp_oauth_free(state);
  state = NULL;
  st_cleanup();
}

static const char *tenant_id(void)
{
  static char id[24];
  pmcp_oauth_workspace *ws = NULL;
  size_t n = 0;
  ck_assert_int_eq(pmcp_oauth_workspaces(state, "u-ada", &ws, &n), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_str_eq(ws[0].tenant, "default");
  ck_assert_str_eq(ws[0].workspace, "main");
  ck_assert_str_eq(ws[0].role, "editor");
  snprintf(id, sizeof id, "%s", ws[0].tenant_id);
  free(ws);
  return id;
}

/* Rows of oauth_requests, read through a handle of its own. */
static size_t stored_requests(void)
{
  pmcp_store *st = NULL;
  pmcp__db_res *r = NULL;
  ck_assert_int_eq(pmcp_store_open(&st, st_path, 0), 0);
  const char *p[] = {"x"};
  ck_assert_int_eq(pmcp__db_query(st, "SELECT COUNT(*) FROM oauth_requests WHERE $1 = $1",
                                  1, p, &r), 0);
  size_t n = (size_t)strtoull(pmcp__db_get(r, 0, 0), NULL, 10);
  pmcp__db_res_free(r);
  pmcp_store_free(st);
  return n;
}

/* A pending request approved by ada: returns the code. */
static void approved_code(const char *access, char code[PMCP_OAUTH_TOKEN_MAX], char conn[40])
{
  pmcp_oauth_request r = PMCP_OAUTH_REQUEST_INIT, got = PMCP_OAUTH_REQUEST_INIT;
  char *id = NULL;
  r.client_id = client;
  r.redirect_uri = (char *)CB;
  r.challenge = (char *)CH;
  r.state = (char *)"st-1";
  r.resource = (char *)RES;
  size_t before = stored_requests();
  ck_assert_int_eq(pmcp_oauth_request_seal(state, &r, &id), 0);
  ck_assert_int_eq(pmcp_oauth_request_get(state, id, &got), 1);
  /* Nothing is stored until the person decides. */
  ck_assert_uint_eq(stored_requests(), before);
  ck_assert_str_eq(got.client_name, "Test client");
  ck_assert_str_eq(got.state, "st-1");
  pmcp_oauth_request_dispose(&got);
  ck_assert_int_eq(pmcp_oauth_approve(state, id, "u-ada", tenant_id(), "main", access,
                                  code, PMCP_OAUTH_TOKEN_MAX, &got, conn, 40), 1);
  ck_assert_str_eq(got.redirect_uri, CB);
  pmcp_oauth_request_dispose(&got);
  ck_assert_uint_eq(stored_requests(), before + 1);
  /* The request is decided: a second approval fails. */
  char code2[PMCP_OAUTH_TOKEN_MAX], conn2[40];
  ck_assert_int_eq(pmcp_oauth_approve(state, id, "u-ada", tenant_id(), "main", access,
                                  code2, PMCP_OAUTH_TOKEN_MAX, &got, conn2, 40), 0);
  ck_assert(pmcp_oauth_token_shape_ok(code, PMCP_OAUTH_CODE_PREFIX));
  free(id);
}

START_TEST(code_flow_and_replay)
{
  char code[PMCP_OAUTH_TOKEN_MAX], conn[40];
  approved_code("write", code, conn);
  ck_assert_ptr_nonnull(strstr(audit_log, "mcp_connection.authorize|"));
  ck_assert_ptr_nonnull(strstr(audit_log, "|main|user:ada|"));
  ck_assert_ptr_null(strstr(audit_log, code)); /* never a secret in the log */
  /* the details exactly, members in this order */
  char want[400];
  snprintf(want, sizeof want, "|{\"connection\":\"%s\",\"client_id\":\"%s\","
           "\"client_name\":\"Test client\",\"access\":\"write\"}\n", conn, client);
  ck_assert_msg(strstr(audit_log, want) != NULL, "no %s in %s", want, audit_log);
  pmcp_oauth_tokens t = PMCP_OAUTH_TOKENS_INIT;
  pmcp_oauth_err e = PMCP_OAUTH_ERR_INIT;
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, client, CB, VER, RES, &t, &e), 0);
  ck_assert(pmcp_oauth_token_shape_ok(t.access, PMCP_OAUTH_AT_PREFIX));
  ck_assert(pmcp_oauth_token_shape_ok(t.refresh, PMCP_OAUTH_RT_PREFIX));
  ck_assert_str_eq(t.access_level, "write");
  pmcp_oauth_principal p = PMCP_OAUTH_PRINCIPAL_INIT;
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t.access, &p), 1);
  ck_assert_str_eq(p.user_id, "u-ada");
  ck_assert_str_eq(p.workspace, "main");
  ck_assert_str_eq(p.access, "write");
  ck_assert_str_eq(p.client_id, client);
  ck_assert_str_eq(p.connection_id, conn);
  /* The refresh token is not an access token. */
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t.refresh, &p), 0);
  /* Replay: refused, and the connection is revoked with its tokens. */
  pmcp_oauth_tokens t2 = PMCP_OAUTH_TOKENS_INIT;
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, client, CB, VER, RES, &t2, &e), -1);
  ck_assert_str_eq(e.error, "invalid_grant");
  ck_assert_ptr_nonnull(strstr(e.description, "already used"));
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t.access, &p), 0);
  ck_assert_int_eq(pmcp_oauth_refresh(state, t.refresh, client, NULL, &t2, &e), -1);
  ck_assert_ptr_nonnull(strstr(audit_log, "mcp_connection.revoke|"));
  ck_assert_ptr_nonnull(strstr(audit_log, "authorization code replayed"));
  snprintf(want, sizeof want, "mcp_connection.revoke|%s|main|system|{\"connection\":\"%s\","
           "\"client_id\":\"%s\",\"reason\":\"authorization code replayed\"}\n",
           tenant_id(), conn, client);
  ck_assert_msg(strstr(audit_log, want) != NULL, "no %s in %s", want, audit_log);
  pmcp_oauth_connection *rows;
  size_t n;
  ck_assert_int_eq(pmcp_oauth_connections(state, "u-ada", &rows, &n), 0);
  ck_assert_uint_eq(n, 0);
  free(rows);
  pmcp_oauth_tokens_dispose(&t);
  pmcp_oauth_tokens_dispose(&t2);
  pmcp_oauth_principal_dispose(&p);
}
END_TEST

START_TEST(code_refusals)
{
  char code[PMCP_OAUTH_TOKEN_MAX], conn[40];
  pmcp_oauth_tokens t = PMCP_OAUTH_TOKENS_INIT;
  pmcp_oauth_err e = PMCP_OAUTH_ERR_INIT;
  /* Wrong verifier: refused, and the code is spent. */
  approved_code("read", code, conn);
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, client, CB,
                                        "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXl", RES, &t, &e), -1);
  ck_assert_str_eq(e.error, "invalid_grant");
  ck_assert_ptr_nonnull(strstr(e.description, "code_verifier"));
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, client, CB, VER, RES, &t, &e), -1);
  /* Foreign redirect URI, other client, wrong resource, malformed code. */
  approved_code("read", code, conn);
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, client, "https://evil.example/cb", VER,
                                        RES, &t, &e), -1);
  ck_assert_ptr_nonnull(strstr(e.description, "redirect_uri"));
  approved_code("read", code, conn);
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, "pbm_client_other", CB, VER, RES, &t, &e), -1);
  ck_assert_ptr_nonnull(strstr(e.description, "another client"));
  approved_code("read", code, conn);
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, client, CB, VER,
                                        "http://127.0.0.1:8080/other", &t, &e), -1);
  ck_assert_str_eq(e.error, "invalid_target");
  char bad[PMCP_OAUTH_TOKEN_MAX + 1];
  snprintf(bad, sizeof bad, "%.*s", (int)strlen(code) - 1, code);
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, bad, client, CB, VER, RES, &t, &e), -1);
  ck_assert_ptr_nonnull(strstr(e.description, "malformed"));
  /* Expired: 10 minutes. */
  approved_code("read", code, conn);
  pmcp_oauth_testing_shift_clock(state, (PMCP_OAUTH_CODE_TTL + 1) * 1000LL);
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, client, CB, VER, RES, &t, &e), -1);
  ck_assert_ptr_nonnull(strstr(e.description, "expired"));
  /* Not a member: no approval. */
  pmcp_oauth_request r = PMCP_OAUTH_REQUEST_INIT, got = PMCP_OAUTH_REQUEST_INIT;
  char *id = NULL, conn2[40];
  r.client_id = client;
  r.redirect_uri = (char *)CB;
  r.challenge = (char *)CH;
  ck_assert_int_eq(pmcp_oauth_request_seal(state, &r, &id), 0);
  ck_assert_int_eq(pmcp_oauth_approve(state, id, "u-bob", tenant_id(), "main", "read",
                                  code, PMCP_OAUTH_TOKEN_MAX, &got, conn2, 40), 0);
  ck_assert_int_eq(pmcp_oauth_approve(state, id, "u-ada", tenant_id(), "other-ws", "read",
                                  code, PMCP_OAUTH_TOKEN_MAX, &got, conn2, 40), 0);
  /* Denied: the request closes. */
  ck_assert_int_eq(pmcp_oauth_deny(state, id, &got), 1);
  pmcp_oauth_request_dispose(&got);
  ck_assert_int_eq(pmcp_oauth_request_get(state, id, &got), 0);
  /* Sealed, not stored: an altered or foreign request opens nothing. */
  char *alt = strdup(id);
  alt[3] = alt[3] == 'A' ? 'B' : 'A';
  ck_assert_int_eq(pmcp_oauth_request_get(state, alt, &got), 0);
  free(alt);
  free(id);
  id = NULL;
  ck_assert_int_eq(pmcp_oauth_request_seal(state, &r, &id), 0);
  char *tail = strrchr(id, '.');
  tail[2] = tail[2] == 'A' ? 'B' : 'A';
  ck_assert_int_eq(pmcp_oauth_request_get(state, id, &got), 0);
  /* A MAC of any other length, up to the longest sealed text, is refused
   * before it is decoded (a long one must not overrun the MAC's buffer). */
  size_t keep = (size_t)(strrchr(id, '.') - id) + 1;
  char *longer = malloc(8192 + 1);
  ck_assert_ptr_nonnull(longer);
  memcpy(longer, id, keep);
  for (size_t n = keep; n < 8192; n++)
    longer[n] = 'A';
  longer[8192] = '\0';
  for (size_t cut = keep + 40; cut < 8192; cut = cut < keep + 48 ? cut + 1 : cut * 2) {
    char c = longer[cut];
    longer[cut] = '\0';
    ck_assert_int_eq(pmcp_oauth_request_get(state, longer, &got), 0);
    longer[cut] = c;
  }
  ck_assert_int_eq(pmcp_oauth_request_get(state, longer, &got), 0);
  free(longer);
  free(id);
  id = NULL;
  /* ... and one past its lifetime neither. */
  ck_assert_int_eq(pmcp_oauth_request_seal(state, &r, &id), 0);
  pmcp_oauth_testing_shift_clock(state, (PMCP_OAUTH_REQUEST_TTL + 1) * 1000LL);
  ck_assert_int_eq(pmcp_oauth_request_get(state, id, &got), 0);
  free(id);
}
END_TEST

START_TEST(refresh_rotation_and_reuse)
{
  char code[PMCP_OAUTH_TOKEN_MAX], conn[40];
  pmcp_oauth_tokens t1 = PMCP_OAUTH_TOKENS_INIT, t2 = PMCP_OAUTH_TOKENS_INIT,
                    t3 = PMCP_OAUTH_TOKENS_INIT;
  pmcp_oauth_err e = PMCP_OAUTH_ERR_INIT;
  pmcp_oauth_principal p = PMCP_OAUTH_PRINCIPAL_INIT;
  approved_code("read", code, conn);
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, client, CB, VER, NULL, &t1, &e), 0);
  ck_assert_int_eq(pmcp_oauth_refresh(state, t1.refresh, client, RES, &t2, &e), 0);
  ck_assert_str_ne(t1.refresh, t2.refresh);
  ck_assert_str_ne(t1.access, t2.access);
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t2.access, &p), 1);
  ck_assert_str_eq(p.access, "read");
  /* Another client cannot use it (and it is not spent by that). */
  ck_assert_int_eq(pmcp_oauth_refresh(state, t2.refresh, "pbm_client_other", NULL, &t3, &e), -1);
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t2.access, &p), 1);
  /* The rotated one comes back: the connection is revoked. */
  ck_assert_int_eq(pmcp_oauth_refresh(state, t1.refresh, client, NULL, &t3, &e), -1);
  ck_assert_ptr_nonnull(strstr(e.description, "already used"));
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t2.access, &p), 0);
  ck_assert_int_eq(pmcp_oauth_refresh(state, t2.refresh, client, NULL, &t3, &e), -1);
  ck_assert_ptr_nonnull(strstr(audit_log, "rotated refresh token reused"));
  pmcp_oauth_tokens_dispose(&t1);
  pmcp_oauth_tokens_dispose(&t2);
  pmcp_oauth_tokens_dispose(&t3);
  pmcp_oauth_principal_dispose(&p);
}
END_TEST

/* A revocation and its audit entry are one transaction: when the entry
 * cannot be written, the connection and its tokens stay as they were. */
START_TEST(revocation_audit_atomic)
{
  char code[PMCP_OAUTH_TOKEN_MAX], conn[40];
  pmcp_oauth_tokens t = PMCP_OAUTH_TOKENS_INIT, t2 = PMCP_OAUTH_TOKENS_INIT;
  pmcp_oauth_err e = PMCP_OAUTH_ERR_INIT;
  pmcp_oauth_principal p = PMCP_OAUTH_PRINCIPAL_INIT;
  approved_code("read", code, conn);
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, client, CB, VER, RES, &t, &e), 0);
  audit_fail = "mcp_connection.revoke";
  ck_assert_int_lt(pmcp_oauth_connection_revoke(state, conn, "u-ada", "test"), 0);
  ck_assert_int_lt(pmcp_oauth_revoke_token(state, t.refresh, client), 0);
  /* A replayed code cannot be answered "revoked" when it was not. */
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, client, CB, VER, RES, &t2, &e), -1);
  ck_assert_str_eq(e.error, "server_error");
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t.access, &p), 1);
  pmcp_oauth_connection *rows;
  size_t n;
  ck_assert_int_eq(pmcp_oauth_connections(state, "u-ada", &rows, &n), 0);
  ck_assert_uint_eq(n, 1);
  free(rows);
  ck_assert_ptr_null(strstr(audit_log, "mcp_connection.revoke|"));
  audit_fail = NULL;
  ck_assert_int_eq(pmcp_oauth_revoke_token(state, t.refresh, client), 0);
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t.access, &p), 0);
  ck_assert_ptr_nonnull(strstr(audit_log, "mcp_connection.revoke|"));
  ck_assert_int_eq(pmcp_oauth_connections(state, "u-ada", &rows, &n), 0);
  ck_assert_uint_eq(n, 0);
  free(rows);
  pmcp_oauth_tokens_dispose(&t);
  pmcp_oauth_tokens_dispose(&t2);
  pmcp_oauth_principal_dispose(&p);
}
END_TEST

START_TEST(expiry_revocation_prune)
{
  char code[PMCP_OAUTH_TOKEN_MAX], conn[40];
  pmcp_oauth_tokens t1 = PMCP_OAUTH_TOKENS_INIT, t2 = PMCP_OAUTH_TOKENS_INIT;
  pmcp_oauth_err e = PMCP_OAUTH_ERR_INIT;
  pmcp_oauth_principal p = PMCP_OAUTH_PRINCIPAL_INIT;
  approved_code("write", code, conn);
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, client, CB, VER, RES, &t1, &e), 0);
  /* RFC 7009 from another client: no effect; from ours: revoked. */
  ck_assert_int_eq(pmcp_oauth_revoke_token(state, t1.refresh, "pbm_client_other"), 1);
  ck_assert_int_eq(pmcp_oauth_revoke_token(state, t1.refresh, NULL), 1);
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t1.access, &p), 1);
  ck_assert_int_eq(pmcp_oauth_revoke_token(state, "pbm_rt_garbage", client), 0);
  /* An access token expires after an hour; the refresh token still works. */
  pmcp_oauth_testing_shift_clock(state, (PMCP_OAUTH_ACCESS_TTL + 1) * 1000LL);
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t1.access, &p), 0);
  ck_assert_int_eq(pmcp_oauth_refresh(state, t1.refresh, client, NULL, &t2, &e), 0);
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t2.access, &p), 1);
  /* Disconnect from the connections page (only the owner can). */
  ck_assert_int_eq(pmcp_oauth_connection_revoke(state, conn, "u-bob", "test"), 0);
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t2.access, &p), 1);
  /* without a reason: the detail is left out, not written "" */
  audit_log[0] = '\0';
  ck_assert_int_eq(pmcp_oauth_connection_revoke(state, conn, "u-ada", NULL), 1);
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t2.access, &p), 0);
  {
    char want[400];
    snprintf(want, sizeof want, "mcp_connection.revoke|%s|main|user:ada|{\"connection\":\"%s\","
             "\"client_id\":\"%s\"}\n", tenant_id(), conn, client);
    ck_assert_msg(strstr(audit_log, want) != NULL, "no %s in [%s]", want, audit_log);
  }
  ck_assert_int_eq(pmcp_oauth_connection_revoke(state, conn, "u-ada", "test"), 0);
  /* Pruning: a registration never used goes after a day; ours stays. */
  char unused[40], *n1, *u1;
  ck_assert_int_eq(pmcp_oauth_client_register(state, "", "[\"https://a.example/cb\"]", unused,
                                              sizeof unused), 0);
  pmcp_oauth_testing_shift_clock(state, (PMCP_OAUTH_UNUSED_CLIENT_TTL + 10) * 1000LL);
  pmcp_oauth_prune(state);
  ck_assert_int_eq(pmcp_oauth_client_get(state, unused, &n1, &u1), 0);
  ck_assert_int_eq(pmcp_oauth_client_get(state, client, &n1, &u1), 1);
  free(n1);
  free(u1);
  /* An RFC 7009 revocation of a refresh token ends the connection. */
  approved_code("read", code, conn);
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, client, CB, VER, RES, &t1, &e), 0);
  ck_assert_int_eq(pmcp_oauth_revoke_token(state, t1.refresh, client), 0);
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t1.access, &p), 0);
  pmcp_oauth_tokens_dispose(&t1);
  pmcp_oauth_tokens_dispose(&t2);
  pmcp_oauth_principal_dispose(&p);
}
END_TEST

/* The consent page offers, and approval accepts, only the workspaces of
 * the tenant the server serves: a connection to another tenant's would
 * mint tokens its /mcp refuses. */
/* ada is also in workspace "elsewhere" of a second tenant, lab-b. */
static void member_of_lab_b(pmcp_tenant *lb, pmcp_tenant *def, char lbid[24], char defid[24])
{
  pmcp_store *s = NULL;
  ck_assert_int_eq(pmcp_store_open(&s, st_path, 0), 0);
  ST_OK(s, pmcp_store_tenant(s, "lab-b", PMCP_STORE_CREATE, lb));
  ST_OK(s, pmcp_store_tenant(s, NULL, 0, def));
  snprintf(lbid, 24, "%lld", (long long)lb->id);
  snprintf(defid, 24, "%lld", (long long)def->id);
  const char *m[] = {"u-ada", lbid, "elsewhere"};
  ck_assert_int_eq(pmcp__db_exec(s, "INSERT INTO memberships(user_id, tenant_id, workspace,"
                                    " role, created) VALUES($1, $2, $3, 'editor', 1)",
                                 3, m, NULL), 0);
  pmcp_store_free(s);
}

START_TEST(consent_served_tenant_only)
{
  pmcp_tenant lb, def;
  char lbid[24], defid[24];
  member_of_lab_b(&lb, &def, lbid, defid);
  pmcp_oauth_workspace *ws = NULL;
  size_t n = 0;
  /* a state serving every tenant (the library's default) lists both */
  ck_assert_int_eq(pmcp_oauth_workspaces(state, "u-ada", &ws, &n), 0);
  ck_assert_uint_eq(n, 2);
  free(ws);
  pmcp_oauth_set_tenant(state, def.id);
  ck_assert_int_eq(pmcp_oauth_workspaces(state, "u-ada", &ws, &n), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_str_eq(ws[0].tenant_id, defid);
  ck_assert_str_eq(ws[0].workspace, "main");
  free(ws);
  pmcp_oauth_request r = PMCP_OAUTH_REQUEST_INIT, got = PMCP_OAUTH_REQUEST_INIT;
  char *id = NULL, code[PMCP_OAUTH_TOKEN_MAX], conn[40];
  r.client_id = client;
  r.redirect_uri = (char *)CB;
  r.challenge = (char *)CH;
  r.resource = (char *)RES;
  ck_assert_int_eq(pmcp_oauth_request_seal(state, &r, &id), 0);
  /* the other tenant's workspace, posted by hand: refused, request still open */
  ck_assert_int_eq(pmcp_oauth_approve(state, id, "u-ada", lbid, "elsewhere", "read",
                                  code, PMCP_OAUTH_TOKEN_MAX, &got, conn, 40), 0);
  ck_assert_int_eq(pmcp_oauth_request_get(state, id, &got), 1);
  pmcp_oauth_request_dispose(&got);
  ck_assert_int_eq(pmcp_oauth_approve(state, id, "u-ada", defid, "main", "read",
                                  code, PMCP_OAUTH_TOKEN_MAX, &got, conn, 40), 1);
  pmcp_oauth_request_dispose(&got);
  /* served from the other tenant: only its workspace */
  pmcp_oauth_set_tenant(state, lb.id);
  ck_assert_int_eq(pmcp_oauth_workspaces(state, "u-ada", &ws, &n), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_str_eq(ws[0].workspace, "elsewhere");
  ck_assert_str_eq(ws[0].tenant, "lab-b");
  free(ws);
  free(id);
}
END_TEST

/* The consent page itself: the workspace choices a signed-in person sees
 * are the served tenant's. */
static char *consent_html(poauth_server *o, const char *req_id, const char *cookie)
{
  char query[9000], ck[PMCP_OAUTH_TOKEN_MAX + 20];
  snprintf(query, sizeof query, "req=%s", req_id);
  snprintf(ck, sizeof ck, "pbm_session=%s", cookie);
  const char *names[] = {"host", "cookie"};
  const char *values[] = {"127.0.0.1:8080", ck};
  pmcp_http_request rq = PMCP_HTTP_REQUEST_INIT;
  rq.method = "GET";
  rq.path = "/oauth/consent";
  rq.query = query;
  rq.body = "";
  rq.nheaders = 2;
  rq.names = names;
  rq.values = values;
  rq.peer = "";
  pmcp_http_response res = PMCP_HTTP_RESPONSE_INIT;
  ck_assert_int_eq(poauth_pages(o, &rq, &res), 1);
  ck_assert_int_eq(res.status, 200);
  char *html = strdup(res.body.ptr);
  pmcp_buf_dispose(&res.body);
  pmcp_buf_dispose(&res.headers);
  return html;
}

/* An OAuth server on the test store, at http://127.0.0.1:8080/mcp. */
static poauth_server *test_server(void)
{
  pmcp_store *st = NULL;
  ck_assert_int_eq(pmcp_store_open(&st, st_path, 0), 0);
  pmcp_oauth_hooks hk = {test_verify, test_audit, NULL};
  poauth_server *o = NULL;
  char why[200];
  ck_assert_int_eq(poauth_server_new(&o, st, &hk, "/mcp", "http://127.0.0.1:8080", NULL, why,
                                     sizeof why), 0);
  return o;
}

START_TEST(consent_page_served_tenant)
{
  pmcp_tenant lb, def;
  char lbid[24], defid[24];
  member_of_lab_b(&lb, &def, lbid, defid);
  poauth_server *o = test_server();
  pmcp_oauth_request r = PMCP_OAUTH_REQUEST_INIT;
  char *id = NULL, cookie[PMCP_OAUTH_TOKEN_MAX];
  r.client_id = client;
  r.redirect_uri = (char *)CB;
  r.challenge = (char *)CH;
  r.resource = (char *)RES;
  ck_assert_int_eq(pmcp_oauth_request_seal(o->state, &r, &id), 0);
  ck_assert_int_eq(pmcp_oauth_session_new(o->state, "u-ada", cookie, sizeof cookie), 0);
  /* a server of the whole store offers both tenants' */
  char *html = consent_html(o, id, cookie);
  ck_assert_ptr_nonnull(strstr(html, "elsewhere"));
  free(html);
  pmcp_oauth_set_tenant(o->state, def.id);
  html = consent_html(o, id, cookie);
  char want[64];
  snprintf(want, sizeof want, "value=\"%s:main\"", defid);
  ck_assert_msg(strstr(html, want) != NULL, "no %s in %s", want, html);
  ck_assert_msg(strstr(html, "elsewhere") == NULL && strstr(html, "lab-b") == NULL,
                "another tenant's workspace offered: %s", html);
  free(html);
  free(id);
  poauth_server_free(o);
}
END_TEST

/* Versions and buffers: an unknown struct version is refused before
 * anything happens, a buffer one byte short answers PMCP_ETOOBIG and one
 * that fits exactly gets the whole string. */
START_TEST(versions_and_buffers)
{
  char uid[6], small[5], id[40];
  ck_assert_int_eq(pmcp_oauth_user_check(state, "ada", "pw-ada", uid, 5), PMCP_ETOOBIG);
  ck_assert_int_eq(pmcp_oauth_user_check(state, "ada", "pw-ada", uid, sizeof uid), 1);
  ck_assert_str_eq(uid, "u-ada");
  ck_assert_int_eq(pmcp_oauth_client_register(state, "x", "[\"https://a.example/cb\"]", small,
                                              sizeof small), PMCP_ETOOBIG);
  ck_assert_str_eq(small, "");
  ck_assert_int_eq(pmcp_oauth_session_new(state, "u-ada", small, sizeof small), PMCP_ETOOBIG);
  char cookie[PMCP_OAUTH_TOKEN_MAX];
  ck_assert_int_eq(pmcp_oauth_session_new(state, "u-ada", cookie, sizeof cookie), 0);
  ck_assert_int_eq(pmcp_oauth_session_user(state, cookie, uid, 5), PMCP_ETOOBIG);
  /* a code buffer too small approves nothing: the request stays open */
  pmcp_oauth_request r = PMCP_OAUTH_REQUEST_INIT, got = PMCP_OAUTH_REQUEST_INIT;
  char *sealed = NULL, code[PMCP_OAUTH_TOKEN_MAX];
  r.client_id = client;
  r.redirect_uri = (char *)CB;
  r.challenge = (char *)CH;
  ck_assert_int_eq(pmcp_oauth_request_seal(state, &r, &sealed), 0);
  ck_assert_int_eq(pmcp_oauth_approve(state, sealed, "u-ada", tenant_id(), "main", "read", code,
                                      10, &got, id, sizeof id), PMCP_ETOOBIG);
  ck_assert_int_eq(pmcp_oauth_approve(state, sealed, "u-ada", tenant_id(), "main", "read", code,
                                      sizeof code, &got, id, 10), PMCP_ETOOBIG);
  ck_assert_int_eq(pmcp_oauth_request_get(state, sealed, &got), 1);
  ck_assert_uint_eq(strlen(got.id), 32);
  /* filling it again disposes what it held (valgrind sees a leak if not) */
  ck_assert_int_eq(pmcp_oauth_request_get(state, sealed, &got), 1);
  pmcp_oauth_request_dispose(&got);
  ck_assert_ptr_null(got.client_id);
  ck_assert_uint_eq(got.version, PMCP_OAUTH_REQUEST_VERSION);
  pmcp_oauth_request bad = PMCP_OAUTH_REQUEST_INIT;
  bad.version = 0;
  ck_assert_int_eq(pmcp_oauth_request_get(state, sealed, &bad), PMCP_EINVAL);
  bad.version = PMCP_OAUTH_REQUEST_VERSION + 1;
  ck_assert_int_eq(pmcp_oauth_request_get(state, sealed, &bad), PMCP_EINVAL);
  char *again = NULL;
  ck_assert_int_eq(pmcp_oauth_request_seal(state, &bad, &again), PMCP_EINVAL);
  ck_assert_ptr_null(again);
  /* the code flow with versions the library does not know */
  ck_assert_int_eq(pmcp_oauth_approve(state, sealed, "u-ada", tenant_id(), "main", "write",
                                      code, sizeof code, &got, id, sizeof id), 1);
  pmcp_oauth_request_dispose(&got);
  pmcp_oauth_tokens t = PMCP_OAUTH_TOKENS_INIT;
  pmcp_oauth_err e = PMCP_OAUTH_ERR_INIT;
  t.version = 0;
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, client, CB, VER, NULL, &t, &e),
                   PMCP_EINVAL);
  t.version = PMCP_OAUTH_TOKENS_VERSION;
  e.version = PMCP_OAUTH_ERR_VERSION + 1;
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, client, CB, VER, NULL, &t, &e),
                   PMCP_EINVAL);
  e.version = PMCP_OAUTH_ERR_VERSION;
  /* refused before the code was looked at: it still works once */
  ck_assert_int_eq(pmcp_oauth_exchange_code(state, code, client, CB, VER, NULL, &t, &e), 0);
  ck_assert_str_eq(t.access_level, "write");
  pmcp_oauth_principal p = PMCP_OAUTH_PRINCIPAL_INIT;
  p.version = 99;
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t.access, &p), PMCP_EINVAL);
  p.version = PMCP_OAUTH_PRINCIPAL_VERSION;
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t.access, &p), 1);
  ck_assert_str_eq(p.connection_id, id);
  ck_assert_str_eq(p.user_id, "u-ada");
  ck_assert_str_eq(p.tenant_id, tenant_id());
  /* resolved again into the same struct: the old strings are released */
  ck_assert_int_eq(pmcp_oauth_access_resolve(state, t.access, &p), 1);
  ck_assert_str_eq(p.access, "write");
  pmcp_oauth_principal_dispose(&p);
  ck_assert_ptr_null(p.user_id);
  /* rows and their strings: one allocation, one free() */
  pmcp_oauth_connection *rows = NULL;
  size_t n = 0;
  ck_assert_int_eq(pmcp_oauth_connections(state, "u-ada", &rows, &n), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(rows[0].version, PMCP_OAUTH_CONNECTION_VERSION);
  ck_assert_str_eq(rows[0].id, id);
  ck_assert_str_eq(rows[0].client, "Test client");
  ck_assert_str_eq(rows[0].workspace, "main");
  ck_assert_str_eq(rows[0].access, "write");
  ck_assert(rows[0].id >= (const char *)(rows + n)); /* after the rows, in their block */
  free(rows);
  pmcp_oauth_tokens_dispose(&t);
  ck_assert_ptr_null(t.access);
  ck_assert_uint_eq(t.version, PMCP_OAUTH_TOKENS_VERSION);
  free(sealed);
}
END_TEST

START_TEST(users_and_sessions)
{
  char uid[128], cookie[PMCP_OAUTH_TOKEN_MAX];
  ck_assert_int_eq(pmcp_oauth_user_check(state, "ada", "pw-ada", uid, sizeof uid), 1);
  ck_assert_str_eq(uid, "u-ada");
  ck_assert_int_eq(pmcp_oauth_user_check(state, "ada", "wrong", uid, sizeof uid), 0);
  ck_assert_int_eq(pmcp_oauth_user_check(state, "nobody", "pw-ada", uid, sizeof uid), 0);
  ck_assert_int_eq(pmcp_oauth_session_new(state, "u-ada", cookie, sizeof cookie), 0);
  ck_assert_int_eq(pmcp_oauth_session_user(state, cookie, uid, sizeof uid), 1);
  ck_assert_str_eq(uid, "u-ada");
  char t1[PMCP_OAUTH_HASH_HEX], t2[PMCP_OAUTH_HASH_HEX];
  ck_assert_int_eq(pmcp_oauth_csrf_token(cookie, t1, sizeof t1), 0);
  ck_assert_int_eq(pmcp_oauth_csrf_token(cookie, t2, sizeof t2), 0);
  ck_assert_str_eq(t1, t2);
  ck_assert_ptr_null(strstr(cookie, t1));
  cookie[10] ^= 1;
  ck_assert_int_eq(pmcp_oauth_session_user(state, cookie, uid, sizeof uid), 0);
  cookie[10] ^= 1;
  pmcp_oauth_session_end(state, cookie);
  ck_assert_int_eq(pmcp_oauth_session_user(state, cookie, uid, sizeof uid), 0);
}
END_TEST

/* A failed sign-in's audit entry: the name as typed, escaped as JSON
 * strings are (a quote, a control character, UTF-8 as it is). */
START_TEST(signin_audit_details)
{
  pmcp_oauth_audit_signin(state, "a\"d\x01\xc3\xa9", "192.0.2.7", "auth.login_failed");
  char want[300];
  snprintf(want, sizeof want, "auth.login_failed|%s|-|user:a\"d\x01\xc3\xa9|{\"user\":"
           "\"a\\\"d\\u0001\xc3\xa9\",\"address\":\"192.0.2.7\"}\n", tenant_id());
  ck_assert_str_eq(audit_log, want);
  /* a name that is not UTF-8 is written with U+FFFD: the details stay JSON
   * text (PostgreSQL refuses the entry otherwise) */
  audit_log[0] = '\0';
  pmcp_oauth_audit_signin(state, "x\xffy", "192.0.2.7", "auth.login_failed");
  ck_assert_ptr_nonnull(
      strstr(audit_log, "|{\"user\":\"x\xef\xbf\xbdy\",\"address\":\"192.0.2.7\"}\n"));
}
END_TEST

/* A sealed request's text: [expiry ms, client, redirect URI, challenge,
 * state, resource, scope, nonce], absent members null. */
START_TEST(sealed_request_text)
{
  pmcp_oauth_request r = PMCP_OAUTH_REQUEST_INIT;
  char *id = NULL;
  r.client_id = client;
  r.redirect_uri = (char *)CB;
  r.challenge = (char *)CH;
  r.state = (char *)"st \"1\"";
  r.resource = (char *)RES;
  int64_t t0 = pmcp_oauth_now_ms(state);
  ck_assert_int_eq(pmcp_oauth_request_seal(state, &r, &id), 0);
  int64_t t1 = pmcp_oauth_now_ms(state);
  const char *dot = strrchr(id, '.');
  ck_assert_ptr_nonnull(dot);
  unsigned char text[2000];
  size_t n = 0;
  ck_assert_int_lt((size_t)(dot - id), sizeof text * 4 / 3 - 4);
  ck_assert_int_eq(pmcp__b64url_decode(id, (size_t)(dot - id), text, &n), PMCP__B64_OK);
  text[n] = '\0';
  long long exp = 0;
  int used = 0;
  ck_assert_int_eq(sscanf((const char *)text, "[%lld%n", &exp, &used), 1);
  ck_assert(exp >= t0 + PMCP_OAUTH_REQUEST_TTL * 1000 && exp <= t1 + PMCP_OAUTH_REQUEST_TTL * 1000);
  const char *nonce = strrchr((const char *)text, ',');
  ck_assert_ptr_nonnull(nonce);
  char want[600];
  snprintf(want, sizeof want, "[%lld,\"%s\",\"%s\",\"%s\",\"st \\\"1\\\"\",\"%s\",null%s", exp,
           client, CB, CH, RES, nonce);
  ck_assert_str_eq((const char *)text, want);
  ck_assert_uint_eq(strlen(nonce), 2 + 24 + 2); /* ,"<24 characters>"] */
  free(id);
  /* a state that is not UTF-8 comes back byte for byte */
  pmcp_oauth_request got = PMCP_OAUTH_REQUEST_INIT;
  r.state = (char *)"\xff\x01\xc3";
  ck_assert_int_eq(pmcp_oauth_request_seal(state, &r, &id), 0);
  ck_assert_int_eq(pmcp_oauth_request_get(state, id, &got), 1);
  ck_assert_str_eq(got.state, "\xff\x01\xc3");
  pmcp_oauth_request_dispose(&got);
  free(id);
}
END_TEST

/* One request to the OAuth routes; the response is the caller's. */
static void route(poauth_server *o, const char *method, const char *path, const char *ctype,
                  const char *body, pmcp_http_response *res)
{
  const char *names[] = {"host", "content-type"};
  const char *values[] = {"127.0.0.1:8080", ctype ? ctype : ""};
  pmcp_http_request rq = PMCP_HTTP_REQUEST_INIT;
  rq.method = method;
  rq.path = path;
  rq.query = "";
  rq.body = body ? body : "";
  rq.body_len = strlen(rq.body);
  rq.nheaders = ctype ? 2 : 1;
  rq.names = names;
  rq.values = values;
  rq.peer = "192.0.2.9";
  pmcp_http_response r = PMCP_HTTP_RESPONSE_INIT;
  *res = r;
  poauth_route_handle(o, &rq, res);
}

static void response_dispose(pmcp_http_response *res)
{
  pmcp_buf_dispose(&res->body);
  pmcp_buf_dispose(&res->headers);
}

/* The member @p key of the JSON object @p json as a string, malloc'd. */
static char *member(const char *json, const char *key)
{
  cJSON *o = cJSON_Parse(json);
  const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
  ck_assert_msg(v != NULL, "no \"%s\" in %s", key, json);
  char *copy = strdup(v);
  cJSON_Delete(o);
  return copy;
}

#define FORM "application/x-www-form-urlencoded"

/* The routes' JSON answers byte for byte: members in their order, strings
 * escaped as JSON's printer always wrote them, integers as integers. */
START_TEST(routes_json)
{
  poauth_server *o = test_server();
  pmcp_http_response res;
  route(o, "GET", "/.well-known/oauth-protected-resource/mcp", NULL, NULL, &res);
  ck_assert_int_eq(res.status, 200);
  ck_assert_str_eq(res.body.ptr,
                   "{\"resource\":\"http://127.0.0.1:8080/mcp\",\"authorization_servers\":"
                   "[\"http://127.0.0.1:8080/oauth\"],\"bearer_methods_supported\":[\"header\"],"
                   "\"scopes_supported\":[\"mcp:read\",\"mcp:write\"],\"resource_name\":"
                   "\"probe-mcp\"}");
  response_dispose(&res);
  route(o, "GET", "/.well-known/oauth-authorization-server/oauth", NULL, NULL, &res);
  ck_assert_int_eq(res.status, 200);
  ck_assert_str_eq(
      res.body.ptr,
      "{\"issuer\":\"http://127.0.0.1:8080/oauth\",\"authorization_endpoint\":"
      "\"http://127.0.0.1:8080/oauth/authorize\",\"token_endpoint\":"
      "\"http://127.0.0.1:8080/oauth/token\",\"registration_endpoint\":"
      "\"http://127.0.0.1:8080/oauth/register\",\"revocation_endpoint\":"
      "\"http://127.0.0.1:8080/oauth/revoke\",\"scopes_supported\":[\"mcp:read\",\"mcp:write\"],"
      "\"response_types_supported\":[\"code\"],\"response_modes_supported\":[\"query\"],"
      "\"grant_types_supported\":[\"authorization_code\",\"refresh_token\"],"
      "\"code_challenge_methods_supported\":[\"S256\"],"
      "\"token_endpoint_auth_methods_supported\":[\"none\"],"
      "\"revocation_endpoint_auth_methods_supported\":[\"none\"],"
      "\"authorization_response_iss_parameter_supported\":true,"
      "\"client_id_metadata_document_supported\":true}");
  response_dispose(&res);

  /* registration: the name and URIs echoed as written */
  int64_t t0 = pmcp_oauth_now_ms(o->state) / 1000;
  route(o, "POST", "/oauth/register", "application/json",
        "{\"redirect_uris\":[\"http://127.0.0.1:9/cb\",\"http://localhost:7/x?a=1&b=%2F\"],"
        "\"client_name\":\"T\\u00e9st \\\"q\\\" \\\\ / \\t\\u0001\"}",
        &res);
  int64_t t1 = pmcp_oauth_now_ms(o->state) / 1000;
  ck_assert_int_eq(res.status, 201);
  char *id = member(res.body.ptr, "client_id");
  const char *at = strstr(res.body.ptr, "\"client_id_issued_at\":");
  ck_assert_ptr_nonnull(at);
  long long issued = strtoll(at + 22, NULL, 10);
  ck_assert(issued >= t0 && issued <= t1);
  char want[1200];
  snprintf(want, sizeof want,
           "{\"client_id\":\"%s\",\"client_id_issued_at\":%lld,\"client_name\":"
           "\"T\xc3\xa9st \\\"q\\\" \\\\ / \\t\\u0001\",\"redirect_uris\":"
           "[\"http://127.0.0.1:9/cb\",\"http://localhost:7/x?a=1&b=%%2F\"],"
           "\"grant_types\":[\"authorization_code\",\"refresh_token\"],"
           "\"response_types\":[\"code\"],\"token_endpoint_auth_method\":\"none\"}",
           id, issued);
  ck_assert_str_eq(res.body.ptr, want);
  free(id);
  response_dispose(&res);

  /* errors: with a description, and the 401's challenge */
  route(o, "POST", "/oauth/token", FORM, "client_id=x", &res);
  ck_assert_int_eq(res.status, 400);
  ck_assert_str_eq(res.body.ptr,
                   "{\"error\":\"invalid_request\",\"error_description\":\"grant_type is missing\"}");
  response_dispose(&res);
  route(o, "POST", "/oauth/token", FORM, "grant_type=refresh_token&client_id=nobody", &res);
  ck_assert_int_eq(res.status, 401);
  ck_assert_str_eq(res.body.ptr,
                   "{\"error\":\"invalid_client\",\"error_description\":\"unknown client_id\"}");
  ck_assert_ptr_nonnull(strstr(res.headers.ptr, "WWW-Authenticate: Bearer error=\"invalid_client\""));
  response_dispose(&res);

  /* tokens */
  char code[PMCP_OAUTH_TOKEN_MAX], conn[40];
  approved_code("write", code, conn);
  pmcp_buf form = PMCP_BUF_INIT;
  pmcp_buf_printf(&form, "grant_type=authorization_code&client_id=%s&code=", client);
  poauth_url_escape(&form, code);
  pmcp_buf_puts(&form, "&redirect_uri=");
  poauth_url_escape(&form, CB);
  pmcp_buf_printf(&form, "&code_verifier=%s&resource=", VER);
  poauth_url_escape(&form, RES);
  route(o, "POST", "/oauth/token", FORM, form.ptr, &res);
  pmcp_buf_dispose(&form);
  ck_assert_int_eq(res.status, 200);
  char *access = member(res.body.ptr, "access_token");
  char *refresh = member(res.body.ptr, "refresh_token");
  snprintf(want, sizeof want,
           "{\"access_token\":\"%s\",\"token_type\":\"Bearer\",\"expires_in\":%d,"
           "\"refresh_token\":\"%s\",\"scope\":\"mcp:read mcp:write\"}",
           access, PMCP_OAUTH_ACCESS_TTL, refresh);
  ck_assert_str_eq(res.body.ptr, want);
  free(access);
  free(refresh);
  response_dispose(&res);
  poauth_server_free(o);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("oauth");
  TCase *t = tcase_create("pure");
  tcase_add_test(t, pkce_rfc7636_example);
  tcase_add_test(t, redirect_uris);
  tcase_add_test(t, token_shapes);
  tcase_add_test(t, token_buffer_sizes);
  tcase_add_test(t, forms);
  tcase_add_test(t, base_urls);
  tcase_add_test(t, cimd_rules);
  suite_add_tcase(s, t);
  t = tcase_create("state");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, code_flow_and_replay);
  tcase_add_test(t, code_refusals);
  tcase_add_test(t, refresh_rotation_and_reuse);
  tcase_add_test(t, expiry_revocation_prune);
  tcase_add_test(t, revocation_audit_atomic);
  tcase_add_test(t, users_and_sessions);
  tcase_add_test(t, versions_and_buffers);
  tcase_add_test(t, consent_served_tenant_only);
  tcase_add_test(t, consent_page_served_tenant);
  tcase_add_test(t, signin_audit_details);
  tcase_add_test(t, sealed_request_text);
  tcase_add_test(t, routes_json);
  suite_add_tcase(s, t);
  return s;
}

int main(void)
{
  int skip = st_backend_check(); /* PMCP_TEST_STORE=pg without a cluster */
  if (skip)
    return skip;
  SRunner *r = srunner_create(suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? 1 : 0;
}
