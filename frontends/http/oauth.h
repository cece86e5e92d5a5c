/* SPDX-License-Identifier: MIT */
/* probe-mcp-http's OAuth 2.1 authorization server and consent pages
 * over the library's public API only. Files:
 *   oauth_util.c    pure pieces: redirect-URI rules, form/query parsing,
 *                   URL and HTML escaping, the advertised base URL
 *   oauth_cimd.c    client ID metadata documents: fetch, checks, cache
 *   oauth_routes.c  the protocol endpoints: metadata (RFC 9728, RFC 8414),
 *                   registration (RFC 7591), authorize, token, revocation
 *                   (RFC 7009)
 *   consent_pages.c the server-rendered sign-in, consent and connections
 *                   pages (cookie session, CSRF token, Origin check)
 * The state (clients, sealed requests and decisions, codes, connections,
 * tokens, browser sessions) and PKCE and token checks are the library's
 * service layer (probemcp/oauth.h), next to the tables' schema.
 * Everything here runs on libuv worker threads (route.c); the store is used
 * under one mutex, the password KDF outside it. */
#ifndef PMCP_HTTP_OAUTH_H
#define PMCP_HTTP_OAUTH_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <probemcp/probemcp.h>

#include "transport.h"

/* ---- oauth_util.c ---------------------------------------------------------- */

/* Redirect-URI rules: https with a host; http only on a
 * loopback host (localhost, 127.0.0.0/8, [::1]); or a private-use scheme
 * (RFC 8252 7.1, e.g. cursor:// or com.example.app:/cb). Never a fragment,
 * userinfo, whitespace or control characters, nor schemes a browser would
 * run or read locally (javascript:, data:, file:, ...). Returns 0, or -1
 * with a reason for the client in @p why. */
int poauth_redirect_uri_check(const char *uri, char *why, size_t whysize);

/* True when JSON text @p text holds a NUL byte or a \u0000 escape in a
 * string, which cJSON would cut the string at: such documents are refused. */
int poauth_json_has_nul(const char *text, size_t len);
/* application/x-www-form-urlencoded (bodies and query strings). Finds the
 * value of @p name; returns 1 found (*out malloc'd, decoded), 0 absent,
 * -1 malformed (bad percent escape, NUL) or repeated (RFC 6749 3.1: a
 * parameter MUST NOT appear more than once), -2 out of memory. */
int poauth_form_get(const char *form, const char *name, char **out);
/* Appends @p s percent-encoded (RFC 3986 unreserved kept). */
int poauth_url_escape(pmcp_buf *b, const char *s);
/* Appends @p s with & < > " ' escaped for HTML text and attributes. */
int poauth_html_escape(pmcp_buf *b, const char *s);

/* The base URLs a request is answered with: "scheme://host[:port]" without
 * a trailing slash. @p fixed (PUBLIC_BASE_URL or APP_BASE_URL) wins;
 * otherwise the scheme comes from X-Forwarded-Proto or Forwarded proto=
 * (default http) and the host from X-Forwarded-Host or Forwarded host=,
 * else Host; a forwarded host must be one the transport accepts. Returns
 * 0, or -1 (no usable host: the caller answers 400). */
int poauth_base_url(const pmcp_http_request *req, const char *fixed,
                    char *out, size_t size);
/* Normalises a configured base URL (PUBLIC_BASE_URL, APP_BASE_URL): http
 * or https, a host, optional port and path, no query or fragment; strips
 * a trailing '/'. Returns 0 or -1 with a reason. */
int poauth_config_url(const char *in, char *out, size_t size, char *why,
                      size_t whysize);
/* The Host ("host:port", the port given or the scheme's) of a configured
 * base URL: 0, or -1 when it is not one poauth_config_url accepts. */
int poauth_base_host(const char *base, char *out, size_t size);
/* The origin ("scheme://host[:port]") of a base URL. */
void poauth_origin_of(const char *base, char *out, size_t size);
/* The value of cookie @p name in a Cookie header (malloc'd) or NULL. */
char *poauth_cookie_get(const char *header, const char *name);


/* ---- oauth_cimd.c: client ID metadata documents --------------------------- */
struct sockaddr;
typedef struct poauth_cimd poauth_cimd;
/* The fetcher and its cache. Test-only environment (never in a deployment):
 * PROBE_TEST_CIMD_CA_FILE names a CA to trust, PROBE_TEST_CIMD_ALLOW_LOOPBACK=1
 * lets documents come from 127.0.0.0/8 and ::1 (no other special range). */
poauth_cimd *poauth_cimd_new(void);
void poauth_cimd_free(poauth_cimd *c);
/* True when @p client_id is a URL (http: or https:), i.e. names a metadata
 * document rather than a registration. */
int poauth_cimd_is_url(const char *client_id);
/* The rules of a client_id URL: https, a valid host, a path, no user
 * information, fragment or dot segments, at most PMCP_OAUTH_CLIENT_ID_MAX.
 * 0 or -1 with the rule in @p why. */
int poauth_cimd_url_check(const char *url, char *why, size_t whysize);
/* 0 an ordinary address, 1 loopback, 2 private, link-local, multicast or
 * another range a server-side request must not reach (IPv4 and IPv6,
 * IPv4-mapped and NAT64 forms by their IPv4 address). */
int poauth_cimd_address_class(const struct sockaddr *sa);
/* The cached document of @p url: 1 (*name, *uris malloc'd), 0 not cached. */
int poauth_cimd_cached(poauth_cimd *c, const char *url, int64_t now_ms, char **name,
                       char **uris);
/* Fetches and validates the document (client_id equal to @p url, 1-10
 * redirect_uris each passing poauth_redirect_uri_check(), a public client,
 * client_name a string of at most 200): 1 (*name, *uris as a JSON array,
 * malloc'd; cached as its Cache-Control says), 0 refused with the reason
 * in @p why, <0 out of memory. Blocks up to 5 seconds. */
int poauth_cimd_fetch(poauth_cimd *c, const char *url, int64_t now_ms, char **name,
                      char **uris, char *why, size_t whysize);
/* The authority (host[:port]) of @p url. */
void poauth_cimd_host(const char *url, char *out, size_t size);

/* ---- oauth_routes.c: the server object and its routes -------------------- */


/* Rate limits (oauth_limit.c): fixed windows per (kind, key) in a bounded
 * table; thread-safe. */
typedef struct poauth_limiter poauth_limiter;
poauth_limiter *poauth_limiter_new(void);
void poauth_limiter_free(poauth_limiter *l);
/* With @p count: counts one event of (kind, key) unless @p max were
 * reached in the window; without, only looks. Returns 0 when allowed,
 * else the milliseconds until the window ends. */
int64_t poauth_limit(poauth_limiter *l, const char *kind, const char *key, unsigned max,
                     int64_t window_ms, int64_t now_ms, int count);
void poauth_limit_clear(poauth_limiter *l, const char *kind, const char *key);

/* The limits (per client address unless said). */
#define POAUTH_REGISTER_PER_MIN 60     /* registrations */
#define POAUTH_AUTHORIZE_PER_MIN 120   /* authorization requests */
#define POAUTH_CIMD_FETCH_PER_MIN 30   /* metadata documents fetched */
#define POAUTH_LOGIN_FAIL_USER 5       /* failed sign-ins of one user name ... */
#define POAUTH_LOGIN_FAIL_ADDR 20      /* ... and from one address ... */
#define POAUTH_LOGIN_WINDOW_MS (15 * 60 * 1000) /* ... in 15 minutes lock it out */

typedef struct poauth_server {
  pmcp_oauth *state;         /* the state in the store (probemcp/oauth.h) */
  poauth_limiter *limits;
  poauth_cimd *cimd;
  char public_base[512];     /* PUBLIC_BASE_URL normalised, or "" */
  char app_base[512];        /* APP_BASE_URL normalised, or "" */
  const char *endpoint;      /* the MCP endpoint path */
} poauth_server;

/* Takes @p st (writable; freed with the server). @p public_base and
 * @p app_base may be NULL or "". Returns 0 or -1 with a reason. */
int poauth_server_new(poauth_server **out, pmcp_store *st,
                      const pmcp_oauth_hooks *hooks, const char *endpoint,
                      const char *public_base, const char *app_base,
                      char *why, size_t whysize);
void poauth_server_free(poauth_server *o);
/* pmcp_http_options.route_match / route_handle with ud = the server. */
int poauth_route_match(void *ud, const char *method, const char *path,
                       size_t len);
void poauth_route_handle(void *ud, const pmcp_http_request *req,
                         pmcp_http_response *res);

/* The client @p id: a registration, or a metadata document (from the cache,
 * else fetched, which counts against the fetch limit of @p req's address).
 * 1 (*name, *uris malloc'd), 0 unknown or refused (why), -1 store error,
 * -2 over the fetch limit (why). */
int poauth_client_lookup(poauth_server *o, const pmcp_http_request *req, const char *id,
                         char **name, char **uris, char *why, size_t whysize);

/* The redirect URI of JSON array @p uris_json equal to @p want (or the only
 * one when @p want is NULL), malloc'd; NULL when none matches. */
char *poauth_listed_uri(const char *uris_json, const char *want);

/* Response helpers shared by the route files. */
void poauth_json(pmcp_http_response *res, int status, const char *json);
void poauth_json_error(pmcp_http_response *res, int status, const char *error,
                       const char *description);
void poauth_header(pmcp_http_response *res, const char *fmt, ...)
    PMCP_PRINTF(2, 3);
/* The issuer base and the consent-page base of a request. -1: no usable
 * host (answered 400 already). */
int poauth_bases(poauth_server *o, const pmcp_http_request *req,
                 pmcp_http_response *res, char *base, char *app, size_t size);

/* ---- consent_pages.c ---- */
/* GET/POST /oauth/consent, /oauth/login, /oauth/connections, /oauth/logout.
 * Returns 1 when @p path is one of them (answered), else 0. */
int poauth_pages(poauth_server *o, const pmcp_http_request *req,
                 pmcp_http_response *res);

/* ---- oauth_service.c: probe-mcp-http's wiring ---- */
/* Opens the OAuth server of probe-mcp-http over @p store (resolved as
 * pmcp_store_open() does; opened writable, never created) with the auth
 * module's password check and audit log. @p public_base: --public-base-url
 * or PUBLIC_BASE_URL (NULL/"": from the request); APP_BASE_URL comes from
 * the environment. Returns 0, or -1 with a reason in @p why. */
int poauth_service_open(poauth_server **out, const char *store,
                        const char *endpoint, const char *public_base,
                        char *why, size_t whysize);
/* The /mcp token resolver (auth_mcp.h's mcp_token_fn, ud = the server):
 * the connection an access token ("pbm_at_...", @p len bytes) stands for.
 * 1 valid (id into @p connection_id), 0 unknown, expired, revoked or
 * malformed (a refresh token too), <0 store error. Thread-safe. */
int poauth_service_token(void *ud, const char *token, size_t len,
                         char connection_id[64]);

#endif
