/* SPDX-License-Identifier: MIT */
/* The pure pieces of the OAuth server: redirect-URI rules, form parsing,
 * escaping, base URLs (PKCE and tokens are the library's, oauth.h). No I/O, no state:
 * tests/unit/test-oauth.c covers each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oauth.h"

static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

/* ---- redirect URIs ---------------------------------------------------------- */

static int fail(char *why, size_t n, const char *msg)
{
  if (why && n)
    snprintf(why, n, "%s", msg);
  return -1;
}

/* Loopback hosts (RFC 8252 7.3 and 8.3): the literal addresses, and the
 * name localhost, which clients use although the RFC prefers literals. */
static int loopback_host(const char *h, size_t n)
{
  if (n == 9 && strncasecmp(h, "localhost", 9) == 0)
    return 1;
  if (n == 5 && memcmp(h, "[::1]", 5) == 0)
    return 1;
  if (n >= 7 && n <= 15 && strncmp(h, "127.", 4) == 0) {
    int dots = 0;
    for (size_t i = 0; i < n; i++) {
      if (h[i] == '.')
        dots++;
      else if (!is_digit((unsigned char)h[i]))
        return 0;
    }
    return dots == 3;
  }
  return 0;
}

/* A DNS name (letters, digits, '-' inside labels, no empty label, at most
 * 253 characters, the last label not all digits unless the whole is a
 * dotted-quad IPv4 literal) or a bracketed IPv6 literal: no wildcards,
 * no percent-encoding, nothing a browser would "repair". */
static int valid_host(const char *h, size_t n)
{
  if (n == 0 || n > 253)
    return 0;
  if (h[0] == '[') {
    if (n < 4 || h[n - 1] != ']')
      return 0;
    int colons = 0;
    for (size_t i = 1; i + 1 < n; i++) {
      unsigned char c = (unsigned char)h[i];
      if (c == ':')
        colons++;
      else if (!is_digit(c) && !strchr("abcdefABCDEF.", c))
        return 0;
    }
    return colons >= 2;
  }
  size_t label = 0;
  int all_digits = 1, last_digits = 1;
  for (size_t i = 0; i <= n; i++) {
    if (i == n || h[i] == '.') {
      if (label == 0 || label > 63 || h[i - 1] == '-')
        return 0;
      last_digits = all_digits;
      label = 0;
      all_digits = 1;
      continue;
    }
    unsigned char c = (unsigned char)h[i];
    if (!is_alpha(c) && !is_digit(c) && !(c == '-' && label > 0))
      return 0;
    if (!is_digit(c))
      all_digits = 0;
    label++;
  }
  if (last_digits) {
    /* Numeric: only a dotted quad of 0..255. */
    unsigned parts = 0, v = 0, digits = 0;
    for (size_t i = 0; i <= n; i++) {
      if (i == n || h[i] == '.') {
        if (v > 255 || digits == 0 || digits > 3)
          return 0;
        parts++;
        v = digits = 0;
      } else {
        v = v * 10 + (unsigned)(h[i] - '0');
        digits++;
      }
    }
    return parts == 4;
  }
  return 1;
}

/* The authority after "//": host and an optional port of 1..65535, no
 * user information. NULL when fine, else the rule broken. */
static const char *check_authority(const char *auth, size_t an, size_t *host_len)
{
  if (memchr(auth, '@', an))
    return "redirect_uri must not contain user information";
  size_t hn;
  if (an && auth[0] == '[') {
    const char *rb = memchr(auth, ']', an);
    if (!rb)
      return "redirect_uri has a malformed IPv6 host";
    hn = (size_t)(rb - auth) + 1;
  } else {
    hn = strcspn(auth, ":/?");
    if (hn > an)
      hn = an;
  }
  if (hn == 0)
    return "redirect_uri must name a host";
  if (!valid_host(auth, hn))
    return "redirect_uri must name a valid host (DNS labels of letters, digits and '-', "
           "or an IP address; no wildcards)";
  if (hn < an) {
    if (auth[hn] != ':' || hn + 1 == an || an - hn - 1 > 5)
      return "redirect_uri has a malformed port";
    unsigned long port = 0;
    for (size_t i = hn + 1; i < an; i++) {
      if (!is_digit((unsigned char)auth[i]))
        return "redirect_uri has a malformed port";
      port = port * 10 + (unsigned long)(auth[i] - '0');
    }
    if (port == 0 || port > 65535)
      return "redirect_uri has a port outside 1..65535";
  }
  *host_len = hn;
  return NULL;
}

/* Private-use schemes (RFC 8252 7.1) in reverse-DNS form: at least two
 * labels of letters, digits and '-' ("com.example.app"). */
static int reverse_dns_scheme(const char *scheme)
{
  if (!strchr(scheme, '.'))
    return 0;
  size_t label = 0;
  for (const char *p = scheme;; p++) {
    if (*p == '.' || *p == '\0') {
      if (label == 0 || p[-1] == '-')
        return 0;
      if (*p == '\0')
        return 1;
      label = 0;
      continue;
    }
    if (!is_alpha((unsigned char)*p) && !is_digit((unsigned char)*p) && *p != '-')
      return 0;
    label++;
  }
}

/* The single-word schemes of well-known MCP clients (editors and desktop
 * applications registering "name://..." callbacks). */
static int known_app_scheme(const char *scheme)
{
  static const char *const apps[] = {"cursor", "vscode", "vscode-insiders",
                                     "windsurf", "claude", "zed", "jetbrains",
                                     "raycast", "goose", "warp"};
  for (size_t i = 0; i < sizeof apps / sizeof apps[0]; i++)
    if (strcmp(scheme, apps[i]) == 0)
      return 1;
  return 0;
}

int poauth_redirect_uri_check(const char *uri, char *why, size_t whysize)
{
  size_t len = uri ? strlen(uri) : 0;
  if (len == 0)
    return fail(why, whysize, "redirect_uri is empty");
  if (len > 2000)
    return fail(why, whysize, "redirect_uri is longer than 2000 characters");
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)uri[i];
    if (c <= 0x20 || c == 0x7f || c >= 0x80)
      return fail(why, whysize, "redirect_uri contains whitespace, control or non-ASCII characters");
    /* Only what RFC 3986 allows in a URI: browsers "repair" the rest
     * (a backslash becomes '/' in an https URL), which is how redirect
     * checks are fooled. */
    if (!is_alpha(c) && !is_digit(c) && !strchr("-._~:/?#[]@!$&'()*+,;=%", c))
      return fail(why, whysize, "redirect_uri contains a character URIs do not allow");
  }
  if (strchr(uri, '#'))
    return fail(why, whysize, "redirect_uri must not contain a fragment");
  /* scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":" */
  size_t s = 0;
  if (!is_alpha((unsigned char)uri[0]))
    return fail(why, whysize, "redirect_uri must be an absolute URI with a scheme");
  while (is_alpha((unsigned char)uri[s]) || is_digit((unsigned char)uri[s]) ||
         uri[s] == '+' || uri[s] == '-' || uri[s] == '.')
    s++;
  if (uri[s] != ':' || s > 64)
    return fail(why, whysize, "redirect_uri must be an absolute URI with a scheme");
  char scheme[65];
  for (size_t i = 0; i < s; i++)
    scheme[i] = (char)lower((unsigned char)uri[i]);
  scheme[s] = '\0';
  const char *rest = uri + s + 1;
  const char *bad;
  size_t hn = 0;
  if (strcmp(scheme, "https") == 0 || strcmp(scheme, "http") == 0) {
    if (strncmp(rest, "//", 2) != 0)
      return fail(why, whysize, "redirect_uri must name a host");
    const char *auth = rest + 2;
    size_t an = strcspn(auth, "/?");
    if ((bad = check_authority(auth, an, &hn)) != NULL)
      return fail(why, whysize, bad);
    if (scheme[4] == '\0' && !loopback_host(auth, hn))
      return fail(why, whysize, "redirect_uri must use https (http only on a loopback host)");
    return 0;
  }
  /* Allow-list, not deny-list: a scheme the operating system hands to some
   * other handler (smb:, search-ms:, shell:, jar:, ldap:, ms-settings: ...)
   * is an attack on the person's machine, not an application's callback. */
  if (!reverse_dns_scheme(scheme) && !known_app_scheme(scheme))
    return fail(why, whysize, "redirect_uri must use https, http on a loopback host, or "
                              "an application's private-use scheme in reverse-DNS form "
                              "(com.example.app:/callback) or of a known MCP client (cursor://)");
  if (!*rest || strcmp(rest, "/") == 0 || strcmp(rest, "//") == 0)
    return fail(why, whysize, "redirect_uri has nothing after its scheme");
  if (strncmp(rest, "//", 2) == 0) {
    const char *auth = rest + 2;
    size_t an = strcspn(auth, "/?");
    if ((bad = check_authority(auth, an, &hn)) != NULL)
      return fail(why, whysize, bad);
  }
  return 0;
}

/* ---- forms, escaping ------------------------------------------------------------ */

static int hexval(int c)
{
  if (is_digit(c))
    return c - '0';
  c = lower(c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decodes [p, p+n) into a new string; NULL with *bad set on a malformed
 * escape or an encoded NUL. */
static char *form_decode(const char *p, size_t n, int *bad)
{
  char *o = malloc(n + 1), *w = o;
  if (!o)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    if (p[i] == '+') {
      *w++ = ' ';
    } else if (p[i] == '%') {
      int hi = i + 2 < n ? hexval((unsigned char)p[i + 1]) : -1;
      int lo = hi >= 0 ? hexval((unsigned char)p[i + 2]) : -1;
      int a = hi >= 0 && lo >= 0 ? hi * 16 + lo : -1;
      if (a <= 0) { /* malformed, or an encoded NUL */
        free(o);
        *bad = 1;
        return NULL;
      }
      *w++ = (char)a;
      i += 2;
    } else {
      *w++ = p[i];
    }
  }
  *w = '\0';
  return o;
}

int poauth_json_has_nul(const char *text, size_t len)
{
  int in_str = 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] == '\0')
      return 1;
    if (!in_str) {
      in_str = text[i] == '"';
    } else if (text[i] == '"') {
      in_str = 0;
    } else if (text[i] == '\\' && i + 1 < len) {
      if (text[i + 1] == 'u' && i + 5 < len && memcmp(text + i + 2, "0000", 4) == 0)
        return 1;
      i++; /* the escaped character (a quote or a backslash included) */
    }
  }
  return 0;
}

int poauth_form_get(const char *form, const char *name, char **out)
{
  *out = NULL;
  size_t nl = strlen(name);
  const char *p = form ? form : "";
  while (*p) {
    size_t seg = strcspn(p, "&");
    const char *eq = memchr(p, '=', seg);
    size_t kn = eq ? (size_t)(eq - p) : seg;
    int bad = 0;
    char *key = form_decode(p, kn, &bad);
    if (!key) {
      free(*out);
      *out = NULL;
      return bad ? -1 : -2;
    }
    if (strcmp(key, name) == 0 && strlen(key) == nl) {
      if (*out) {
        free(key);
        free(*out);
        *out = NULL;
        return -1;
      }
      *out = eq ? form_decode(eq + 1, seg - kn - 1, &bad) : strdup("");
      if (!*out) {
        free(key);
        return bad ? -1 : -2;
      }
    }
    free(key);
    p += seg;
    if (*p == '&')
      p++;
  }
  return *out ? 1 : 0;
}

int poauth_url_escape(pmcp_buf *b, const char *s)
{
  static const char hex[] = "0123456789ABCDEF";
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    int rc;
    if (is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      rc = pmcp_buf_putc(b, (char)c);
    } else {
      char e[3] = {'%', hex[c >> 4], hex[c & 15]};
      rc = pmcp_buf_append(b, e, 3);
    }
    if (rc != 0)
      return rc;
  }
  return 0;
}

int poauth_html_escape(pmcp_buf *b, const char *s)
{
  for (; s && *s; s++) {
    int rc;
    switch (*s) {
    case '&': rc = pmcp_buf_puts(b, "&amp;"); break;
    case '<': rc = pmcp_buf_puts(b, "&lt;"); break;
    case '>': rc = pmcp_buf_puts(b, "&gt;"); break;
    case '"': rc = pmcp_buf_puts(b, "&quot;"); break;
    case '\'': rc = pmcp_buf_puts(b, "&#39;"); break;
    default: rc = pmcp_buf_putc(b, *s); break;
    }
    if (rc != 0)
      return rc;
  }
  return 0;
}

/* ---- base URLs -------------------------------------------------------------------- */

/* Copies the value of parameter @p key of the first element of a Forwarded
 * header (RFC 7239), unquoted, into out. */
static int forwarded_param(const char *fwd, const char *key, char *out, size_t size)
{
  size_t kn = strlen(key);
  const char *end = fwd + strcspn(fwd, ",");
  const char *p = fwd;
  while (p < end) {
    while (p < end && (*p == ' ' || *p == ';'))
      p++;
    const char *eq = memchr(p, '=', (size_t)(end - p));
    if (!eq)
      return -1;
    const char *v = eq + 1;
    const char *ve = v;
    if (*v == '"') {
      v++;
      ve = v;
      while (ve < end && *ve != '"')
        ve++;
    } else {
      while (ve < end && *ve != ';')
        ve++;
    }
    if ((size_t)(eq - p) == kn && strncasecmp(p, key, kn) == 0) {
      size_t n = (size_t)(ve - v);
      if (n == 0 || n >= size)
        return -1;
      memcpy(out, v, n);
      out[n] = '\0';
      return 0;
    }
    p = ve + (*ve == '"');
    while (p < end && *p != ';')
      p++;
  }
  return -1;
}

/* First element of a comma-separated X-Forwarded-* value, trimmed. */
static int first_item(const char *v, char *out, size_t size)
{
  while (*v == ' ')
    v++;
  size_t n = strcspn(v, ", ");
  if (n == 0 || n >= size)
    return -1;
  memcpy(out, v, n);
  out[n] = '\0';
  return 0;
}

/* A Host-style value: name (letters, digits, '-', '.', or [v6]) and an
 * optional numeric port. Lower-cases in place; returns the name length or
 * 0 when malformed. */
static size_t host_value_ok(char *v)
{
  size_t n = 0;
  if (v[0] == '[') {
    while (v[n] && v[n] != ']') {
      if (!is_digit((unsigned char)v[n]) && hexval((unsigned char)v[n]) < 0 &&
          v[n] != ':' && v[n] != '[' && v[n] != '.')
        return 0;
      n++;
    }
    if (v[n] != ']')
      return 0;
    n++;
  } else {
    while (v[n] && v[n] != ':') {
      if (!is_alpha((unsigned char)v[n]) && !is_digit((unsigned char)v[n]) &&
          v[n] != '-' && v[n] != '.')
        return 0;
      n++;
    }
  }
  if (n == 0)
    return 0;
  if (v[n] == ':') {
    if (!v[n + 1])
      return 0;
    for (size_t i = n + 1; v[i]; i++)
      if (!is_digit((unsigned char)v[i]))
        return 0;
  } else if (v[n]) {
    return 0;
  }
  for (char *s = v; *s; s++)
    *s = (char)lower((unsigned char)*s);
  return n;
}

int poauth_base_url(const pmcp_http_request *req, const char *fixed,
                    char *out, size_t size)
{
  if (fixed && *fixed) {
    int n = snprintf(out, size, "%s", fixed);
    return n > 0 && (size_t)n < size ? 0 : -1;
  }
  char proto[16] = "http", host[256] = "";
  /* Forwarded headers are anyone's to send: believed only from a proxy
   * the operator named. */
  int trusted = pmcp_http_peer_trusted(req);
  const char *fwd = trusted ? pmcp_http_request_header(req, "forwarded", NULL) : NULL;
  const char *xp = trusted ? pmcp_http_request_header(req, "x-forwarded-proto", NULL) : NULL;
  const char *xh = trusted ? pmcp_http_request_header(req, "x-forwarded-host", NULL) : NULL;
  char tmp[256];
  int forwarded_host = 0;
  if (xp && first_item(xp, tmp, sizeof tmp) == 0)
    snprintf(proto, sizeof proto, "%.15s", tmp);
  else if (fwd && forwarded_param(fwd, "proto", tmp, sizeof tmp) == 0)
    snprintf(proto, sizeof proto, "%.15s", tmp);
  for (char *s = proto; *s; s++)
    *s = (char)lower((unsigned char)*s);
  if (strcmp(proto, "http") != 0 && strcmp(proto, "https") != 0)
    return -1;
  if (xh && first_item(xh, host, sizeof host) == 0)
    forwarded_host = 1;
  else if (fwd && forwarded_param(fwd, "host", host, sizeof host) == 0)
    forwarded_host = 1;
  else {
    const char *hv = pmcp_http_request_header(req, "host", NULL);
    if (!hv || first_item(hv, host, sizeof host) != 0)
      return -1;
  }
  size_t hn = host_value_ok(host);
  if (hn == 0)
    return -1;
  if (forwarded_host) {
    /* The transport checked Host; a forwarded host is checked here, so a
     * client cannot make us advertise an issuer of its choosing. */
    char name[256];
    memcpy(name, host, hn);
    name[hn] = '\0';
    if (!pmcp_http_host_allowed(req->h, name))
      return -1;
  }
  int n = snprintf(out, size, "%s://%s", proto, host);
  return n > 0 && (size_t)n < size ? 0 : -1;
}

int poauth_config_url(const char *in, char *out, size_t size, char *why,
                      size_t whysize)
{
  size_t s;
  if (strncasecmp(in, "https://", 8) == 0)
    s = 8;
  else if (strncasecmp(in, "http://", 7) == 0)
    s = 7;
  else
    return fail(why, whysize, "must start with http:// or https://");
  char host[256];
  size_t an = strcspn(in + s, "/?#");
  if (an == 0 || an >= sizeof host)
    return fail(why, whysize, "must name a host");
  memcpy(host, in + s, an);
  host[an] = '\0';
  if (host_value_ok(host) == 0)
    return fail(why, whysize, "has a malformed host or port");
  const char *path = in + s + an;
  if (strpbrk(path, "?# \t\r\n\"<>\\"))
    return fail(why, whysize, "must not have a query, a fragment, spaces or quotes");
  size_t pl = strlen(path);
  while (pl && path[pl - 1] == '/')
    pl--;
  int n = snprintf(out, size, "%.*s%s%.*s", (int)s, in, host, (int)pl, path);
  if (n < 0 || (size_t)n >= size)
    return fail(why, whysize, "is too long");
  for (size_t i = 0; i < s; i++)
    out[i] = (char)lower((unsigned char)out[i]);
  return 0;
}

int poauth_base_host(const char *base, char *out, size_t size)
{
  char url[1024], why[100];
  if (poauth_config_url(base, url, sizeof url, why, sizeof why) != 0)
    return -1;
  int tls = strncmp(url, "https://", 8) == 0;
  const char *h = url + (tls ? 8 : 7);
  size_t an = strcspn(h, "/");
  const char *rb = h[0] == '[' ? memchr(h, ']', an) : NULL;
  const char *colon = memchr(rb ? rb : h, ':', an - (size_t)((rb ? rb : h) - h));
  int n = colon ? snprintf(out, size, "%.*s", (int)an, h)
                : snprintf(out, size, "%.*s:%d", (int)an, h, tls ? 443 : 80);
  return n > 0 && (size_t)n < size ? 0 : -1;
}

void poauth_origin_of(const char *base, char *out, size_t size)
{
  const char *p = strstr(base, "://");
  size_t n = p ? (size_t)(p + 3 - base) + strcspn(p + 3, "/") : strlen(base);
  snprintf(out, size, "%.*s", (int)n, base);
}

char *poauth_cookie_get(const char *header, const char *name)
{
  size_t nl = strlen(name);
  const char *p = header;
  while (p && *p) {
    while (*p == ' ' || *p == ';')
      p++;
    size_t seg = strcspn(p, ";");
    if (seg > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
      size_t vn = seg - nl - 1;
      char *v = malloc(vn + 1);
      if (v) {
        memcpy(v, p + nl + 1, vn);
        v[vn] = '\0';
      }
      return v;
    }
    p += seg;
  }
  return NULL;
}
