/* SPDX-License-Identifier: MIT */
/* The OAuth 2.1 protocol endpoints of probe-mcp-http:
 *   metadata   RFC 9728 protected-resource metadata; RFC 8414 authorization
 *              server metadata for issuer {base}/oauth at the path-insertion,
 *              path-appending and OpenID Connect discovery locations
 *   /oauth/register   RFC 7591, public clients only
 *   /oauth/authorize  code + PKCE S256 (mandatory): checks the request and
 *                     its client (a registration or a client ID metadata
 *                     document), and sends the browser to the consent
 *                     page (consent_pages.c) with the request sealed
 *   /oauth/token      authorization_code and refresh_token grants
 *   /oauth/revoke     RFC 7009
 * These endpoints are called by MCP clients, possibly from web pages of
 * other origins, and carry no cookies: they answer any Origin (CORS *). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "oauth.h"

#define SCOPE_READ "mcp:read"
#define SCOPE_WRITE "mcp:write"

int poauth_server_new(poauth_server **out, pmcp_store *st,
                      const pmcp_oauth_hooks *hooks, const char *endpoint,
                      const char *public_base, const char *app_base,
                      char *why, size_t whysize)
{
  *out = NULL;
  poauth_server *o = calloc(1, sizeof *o);
  if (!o) {
    pmcp_store_free(st);
    snprintf(why, whysize, "out of memory");
    return -1;
  }
  char w[160];
  if (public_base && *public_base &&
      poauth_config_url(public_base, o->public_base, sizeof o->public_base, w, sizeof w)) {
    snprintf(why, whysize, "PUBLIC_BASE_URL %s", w);
    goto fail;
  }
  if (app_base && *app_base &&
      poauth_config_url(app_base, o->app_base, sizeof o->app_base, w, sizeof w)) {
    snprintf(why, whysize, "APP_BASE_URL %s", w);
    goto fail;
  }
  o->endpoint = endpoint ? endpoint : "/mcp";
  if (!(o->limits = poauth_limiter_new()) || !(o->cimd = poauth_cimd_new())) {
    snprintf(why, whysize, "out of memory");
    poauth_limiter_free(o->limits);
    goto fail;
  }
  if (pmcp_oauth_new(&o->state, st, hooks) != 0) {
    snprintf(why, whysize, "out of memory");
    poauth_limiter_free(o->limits);
    poauth_cimd_free(o->cimd);
    goto fail;
  }
  *out = o;
  return 0;
fail:
  pmcp_store_free(st);
  free(o);
  return -1;
}

void poauth_server_free(poauth_server *o)
{
  if (!o)
    return;
  pmcp_oauth_free(o->state);
  poauth_limiter_free(o->limits);
  poauth_cimd_free(o->cimd);
  free(o);
}

static void error_page(pmcp_http_response *res, int status, const char *msg);

/* 429 with Retry-After when (kind, the client's address) is over @p max a
 * minute; returns 1 then. Counts the request otherwise. */
static int over_limit(poauth_server *o, const pmcp_http_request *req, const char *kind,
                      unsigned max, pmcp_http_response *res, int json)
{
  int64_t wait = poauth_limit(o->limits, kind, req->peer, max, 60 * 1000,
                              pmcp_oauth_now_ms(o->state), 1);
  if (!wait)
    return 0;
  char msg[200];
  snprintf(msg, sizeof msg, "too many %s requests from this address: at most %u a minute;"
           " retry in %lld s", kind, max, (long long)(wait + 999) / 1000);
  if (json)
    poauth_json_error(res, 429, "slow_down", msg);
  else {
    error_page(res, 429, msg);
  }
  poauth_header(res, "Retry-After: %lld", (long long)(wait + 999) / 1000);
  return 1;
}

/* ---- responses ----------------------------------------------------------- */

void poauth_header(pmcp_http_response *res, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  pmcp_buf_vprintf(&res->headers, fmt, ap);
  va_end(ap);
  pmcp_buf_puts(&res->headers, "\r\n");
}

void poauth_json(pmcp_http_response *res, int status, const char *json)
{
  res->status = status;
  res->content_type = "application/json";
  res->body.len = 0;
  pmcp_buf_puts(&res->body, json);
}

/* A writer for an answer's object, its opening brace written; NULL when
 * out of memory (json_send() then answers 500). */
static pmcp_json *json_object(void)
{
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, 0) != 0)
    return NULL;
  pmcp_json_object_begin(j);
  return j;
}

/* A member whose value is a string. */
static void json_str(pmcp_json *j, const char *key, const char *v)
{
  pmcp_json_key(j, key);
  pmcp_json_string(j, v);
}

/* A member whose value is an array of @p n strings. */
static void json_strs(pmcp_json *j, const char *key, const char *const *v, size_t n)
{
  pmcp_json_key(j, key);
  pmcp_json_array_begin(j);
  for (size_t i = 0; i < n; i++)
    pmcp_json_string(j, v[i]);
  pmcp_json_array_end(j);
}

/* Closes the object json_object() began: its text, borrowed from @p j;
 * NULL when out of memory. */
static const char *json_close(pmcp_json *j)
{
  return j && pmcp_json_object_end(j) == 0 ? pmcp_json_text(j, NULL) : NULL;
}

/* Answers the object @p j holds with @p status; frees @p j. */
static void json_send(pmcp_http_response *res, int status, pmcp_json *j)
{
  const char *t = json_close(j);
  if (t)
    poauth_json(res, status, t);
  else
    poauth_json_error(res, 500, "server_error", "out of memory");
  pmcp_json_free(j);
}

void poauth_json_error(pmcp_http_response *res, int status, const char *error,
                       const char *description)
{
  pmcp_json *j = json_object();
  if (j) {
    json_str(j, "error", error);
    if (description)
      json_str(j, "error_description", description);
  }
  const char *t = json_close(j);
  poauth_json(res, status, t ? t : "{\"error\":\"server_error\"}");
  pmcp_json_free(j);
  if (status == 401)
    poauth_header(res, "WWW-Authenticate: Bearer error=\"%s\"", error);
}

int poauth_bases(poauth_server *o, const pmcp_http_request *req,
                 pmcp_http_response *res, char *base, char *app, size_t size)
{
  if (poauth_base_url(req, o->public_base, base, size) != 0 ||
      poauth_base_url(req, o->app_base[0] ? o->app_base : o->public_base, app, size) != 0) {
    poauth_json_error(res, 400, "invalid_request",
                      "cannot tell this server's URL from the request: its Host or "
                      "forwarded headers are missing or not allowed (set PUBLIC_BASE_URL)");
    return -1;
  }
  return 0;
}

/* ---- metadata ---------------------------------------------------------------- */

static void resource_metadata(poauth_server *o, const char *base,
                              pmcp_http_response *res)
{
  static const char *const scopes[] = {SCOPE_READ, SCOPE_WRITE};
  static const char *const methods[] = {"header"};
  char url[1100];
  pmcp_json *m = json_object();
  if (m) {
    snprintf(url, sizeof url, "%s%s", base, o->endpoint);
    json_str(m, "resource", url);
    snprintf(url, sizeof url, "%s/oauth", base);
    const char *servers[] = {url};
    json_strs(m, "authorization_servers", servers, 1);
    json_strs(m, "bearer_methods_supported", methods, 1);
    json_strs(m, "scopes_supported", scopes, 2);
    json_str(m, "resource_name", "probe-mcp");
  }
  json_send(res, 200, m);
}

static void server_metadata(const char *base, pmcp_http_response *res)
{
  static const char *const scopes[] = {SCOPE_READ, SCOPE_WRITE};
  static const char *const rtypes[] = {"code"};
  static const char *const gtypes[] = {"authorization_code", "refresh_token"};
  static const char *const pkce[] = {"S256"};
  static const char *const auth[] = {"none"};
  static const char *const modes[] = {"query"};
  static const char *const endpoints[][2] = {{"issuer", ""},
                                             {"authorization_endpoint", "/authorize"},
                                             {"token_endpoint", "/token"},
                                             {"registration_endpoint", "/register"},
                                             {"revocation_endpoint", "/revoke"}};
  char url[1100];
  pmcp_json *m = json_object();
  if (!m) {
    json_send(res, 200, NULL);
    return;
  }
  for (size_t i = 0; i < sizeof endpoints / sizeof *endpoints; i++) {
    snprintf(url, sizeof url, "%s/oauth%s", base, endpoints[i][1]);
    json_str(m, endpoints[i][0], url);
  }
  json_strs(m, "scopes_supported", scopes, 2);
  json_strs(m, "response_types_supported", rtypes, 1);
  json_strs(m, "response_modes_supported", modes, 1);
  json_strs(m, "grant_types_supported", gtypes, 2);
  json_strs(m, "code_challenge_methods_supported", pkce, 1);
  json_strs(m, "token_endpoint_auth_methods_supported", auth, 1);
  json_strs(m, "revocation_endpoint_auth_methods_supported", auth, 1);
  pmcp_json_key(m, "authorization_response_iss_parameter_supported");
  pmcp_json_bool(m, 1);
  /* Both registrations: RFC 7591 above, and client IDs that are https
   * URLs of metadata documents (oauth_cimd.c). */
  pmcp_json_key(m, "client_id_metadata_document_supported");
  pmcp_json_bool(m, 1);
  json_send(res, 200, m);
}

/* ---- registration (RFC 7591) ---------------------------------------------------------- */

static int only_strings(const cJSON *a, const char *const *allowed, size_t n)
{
  const cJSON *it;
  cJSON_ArrayForEach(it, a) {
    int ok = 0;
    for (size_t i = 0; cJSON_IsString(it) && i < n && !ok; i++)
      ok = strcmp(it->valuestring, allowed[i]) == 0;
    if (!ok)
      return 0;
  }
  return 1;
}

static void do_register(poauth_server *o, const pmcp_http_request *req,
                        pmcp_http_response *res)
{
  static const char *const gtypes[] = {"authorization_code", "refresh_token"};
  static const char *const rtypes[] = {"code"};
  if (over_limit(o, req, "registration", POAUTH_REGISTER_PER_MIN, res, 1))
    return;
  /* Names end up in HTML pages and the audit log's JSON: UTF-8 only. */
  if (!pmcp_utf8_valid(req->body, req->body_len)) {
    poauth_json_error(res, 400, "invalid_client_metadata", "the body is not valid UTF-8");
    return;
  }
  if (poauth_json_has_nul(req->body, req->body_len)) {
    poauth_json_error(res, 400, "invalid_client_metadata",
                      "a string of the registration contains a NUL character (\\u0000)");
    return;
  }
  cJSON *in = cJSON_ParseWithLength(req->body, req->body_len);
  if (!cJSON_IsObject(in)) {
    cJSON_Delete(in);
    poauth_json_error(res, 400, "invalid_client_metadata", "the body must be a JSON object");
    return;
  }
  const cJSON *uris = cJSON_GetObjectItemCaseSensitive(in, "redirect_uris");
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(in, "token_endpoint_auth_method");
  const cJSON *gt = cJSON_GetObjectItemCaseSensitive(in, "grant_types");
  const cJSON *rt = cJSON_GetObjectItemCaseSensitive(in, "response_types");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(in, "client_name");
  char why[200];
  const char *err = NULL;
  if (!cJSON_IsArray(uris) || cJSON_GetArraySize(uris) == 0)
    err = "redirect_uris must be a non-empty array";
  else if (cJSON_GetArraySize(uris) > 10)
    err = "at most 10 redirect_uris";
  else if (method && (!cJSON_IsString(method) || strcmp(method->valuestring, "none") != 0))
    err = "only public clients are registered: token_endpoint_auth_method must be \"none\"";
  else if (gt && (!cJSON_IsArray(gt) || !only_strings(gt, gtypes, 2)))
    err = "grant_types may only hold authorization_code and refresh_token";
  else if (rt && (!cJSON_IsArray(rt) || !only_strings(rt, rtypes, 1)))
    err = "response_types may only hold code";
  else if (name && (!cJSON_IsString(name) || strlen(name->valuestring) > 200))
    err = "client_name must be a string of at most 200 characters";
  if (err) {
    cJSON_Delete(in);
    poauth_json_error(res, 400, "invalid_client_metadata", err);
    return;
  }
  const cJSON *u;
  cJSON_ArrayForEach(u, uris) {
    if (!cJSON_IsString(u)) {
      cJSON_Delete(in);
      poauth_json_error(res, 400, "invalid_redirect_uri", "redirect_uris must hold strings");
      return;
    }
    if (poauth_redirect_uri_check(u->valuestring, why, sizeof why) != 0) {
      char msg[400];
      snprintf(msg, sizeof msg, "%s", why);
      cJSON_Delete(in);
      poauth_json_error(res, 400, "invalid_redirect_uri", msg);
      return;
    }
  }
  pmcp_oauth_prune(o->state);
  char *uris_text = cJSON_PrintUnformatted(uris);
  char id[40];
  const char *cname = name ? name->valuestring : "";
  int rc = uris_text ? pmcp_oauth_client_register(o->state, cname, uris_text, id, sizeof id)
                     : PMCP_ENOMEM;
  free(uris_text);
  if (rc) {
    cJSON_Delete(in);
    poauth_json_error(res, 500, "server_error", "could not store the registration");
    return;
  }
  pmcp_json *out = json_object();
  if (out) {
    json_str(out, "client_id", id);
    pmcp_json_key(out, "client_id_issued_at");
    pmcp_json_int(out, pmcp_oauth_now_ms(o->state) / 1000);
    if (name)
      json_str(out, "client_name", cname);
    /* the URIs as registered (each checked to be a string above) */
    pmcp_json_key(out, "redirect_uris");
    pmcp_json_array_begin(out);
    cJSON_ArrayForEach(u, uris)
      pmcp_json_string(out, u->valuestring);
    pmcp_json_array_end(out);
    json_strs(out, "grant_types", gtypes, 2);
    json_strs(out, "response_types", rtypes, 1);
    json_str(out, "token_endpoint_auth_method", "none");
  }
  cJSON_Delete(in);
  json_send(res, 201, out);
}

/* ---- clients of both kinds ------------------------------------------------------------ */

int poauth_client_lookup(poauth_server *o, const pmcp_http_request *req, const char *id,
                         char **name, char **uris, char *why, size_t whysize)
{
  *name = *uris = NULL;
  if (!poauth_cimd_is_url(id)) {
    int found = pmcp_oauth_client_get(o->state, id, name, uris);
    if (found == 0)
      snprintf(why, whysize, "This application is not registered here (unknown client_id). "
               "Registrations never used are removed after a day: let the application "
               "register again.");
    return found < 0 ? -1 : found;
  }
  int64_t now = pmcp_oauth_now_ms(o->state);
  int rc = poauth_cimd_cached(o->cimd, id, now, name, uris);
  if (rc)
    return rc == 1 ? 1 : -1;
  if (poauth_cimd_url_check(id, why, whysize) != 0)
    return 0;
  /* Each fetch is a request this server makes for whoever typed the URL. */
  int64_t wait = poauth_limit(o->limits, "metadata-fetch", req && req->peer ? req->peer : "",
                              POAUTH_CIMD_FETCH_PER_MIN, 60 * 1000, now, 1);
  if (wait) {
    snprintf(why, whysize, "too many client metadata documents fetched for this address: at "
             "most %u a minute; retry in %lld s", POAUTH_CIMD_FETCH_PER_MIN,
             (long long)(wait + 999) / 1000);
    return -2;
  }
  rc = poauth_cimd_fetch(o->cimd, id, now, name, uris, why, whysize);
  return rc < 0 ? -1 : rc;
}

/* ---- authorize ----------------------------------------------------------------- */

static void error_page(pmcp_http_response *res, int status, const char *msg)
{
  res->status = status;
  res->content_type = "text/html; charset=utf-8";
  pmcp_buf_puts(&res->body, "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                              "<title>Sign-in request refused</title></head><body>"
                              "<h1>Sign-in request refused</h1><p>");
  poauth_html_escape(&res->body, msg);
  pmcp_buf_puts(&res->body, "</p></body></html>");
  poauth_header(res, "Cache-Control: no-store");
  poauth_header(res, "Content-Security-Policy: default-src 'none'");
}

/* Redirects to the client with an error (RFC 6749 4.1.2.1). */
static void redirect_error(pmcp_http_response *res, const char *uri, const char *error,
                           const char *desc, const char *state, const char *issuer)
{
  pmcp_buf b = PMCP_BUF_INIT;
  pmcp_buf_puts(&b, uri);
  pmcp_buf_putc(&b, strchr(uri, '?') ? '&' : '?');
  pmcp_buf_puts(&b, "error=");
  poauth_url_escape(&b, error);
  pmcp_buf_puts(&b, "&error_description=");
  poauth_url_escape(&b, desc);
  if (state) {
    pmcp_buf_puts(&b, "&state=");
    poauth_url_escape(&b, state);
  }
  pmcp_buf_puts(&b, "&iss=");
  poauth_url_escape(&b, issuer);
  res->status = 302;
  poauth_header(res, "Location: %s", b.ptr ? b.ptr : uri);
  poauth_header(res, "Cache-Control: no-store");
  free(b.ptr);
}

/* The registered redirect URI equal to @p want (or the only one when
 * @p want is NULL), malloc'd; NULL when none matches. */
char *poauth_listed_uri(const char *uris_json, const char *want)
{
  cJSON *a = cJSON_Parse(uris_json);
  char *found = NULL;
  if (cJSON_IsArray(a)) {
    if (!want && cJSON_GetArraySize(a) == 1 && cJSON_IsString(a->child))
      found = strdup(a->child->valuestring);
    const cJSON *u;
    cJSON_ArrayForEach(u, a)
      if (want && !found && cJSON_IsString(u) && strcmp(u->valuestring, want) == 0)
        found = strdup(want);
  }
  cJSON_Delete(a);
  return found;
}

/* True when @p resource names our MCP endpoint (RFC 8707); a trailing '/'
 * is tolerated. */
static int resource_ok(const char *resource, const char *mcp_url)
{
  size_t n = strlen(mcp_url), r = strlen(resource);
  if (r == n + 1 && resource[n] == '/')
    r = n;
  return r == n && strncmp(resource, mcp_url, n) == 0;
}

static void do_authorize(poauth_server *o, const pmcp_http_request *req,
                         pmcp_http_response *res, const char *base, const char *app)
{
  static const char *const names[] = {"client_id", "redirect_uri", "response_type",
                                      "code_challenge", "code_challenge_method",
                                      "state", "resource", "scope"};
  char *v[8] = {0};
  for (size_t i = 0; i < 8; i++) {
    int rc = poauth_form_get(req->query, names[i], &v[i]);
    if (rc < 0) {
      char msg[160];
      snprintf(msg, sizeof msg, "the parameter %s is repeated or malformed", names[i]);
      error_page(res, 400, msg);
      goto out;
    }
  }
  char *client = v[0], *uri = v[1], *rtype = v[2], *challenge = v[3],
       *method = v[4], *state = v[5], *resource = v[6], *scope = v[7];
  char issuer[700], mcp_url[1100];
  snprintf(issuer, sizeof issuer, "%s/oauth", base);
  snprintf(mcp_url, sizeof mcp_url, "%s%s", base, o->endpoint);
  if (!client) {
    error_page(res, 400, "client_id is missing.");
    goto out;
  }
  char *cname = NULL, *uris = NULL, cwhy[400];
  int found = poauth_client_lookup(o, req, client, &cname, &uris, cwhy, sizeof cwhy);
  if (found != 1) {
    error_page(res, found == -1 ? 500 : found == -2 ? 429 : 400,
               found == -1 ? "The store failed." : cwhy);
    goto out;
  }
  char *redirect = poauth_listed_uri(uris, uri);
  free(uris);
  free(cname);
  if (!redirect) {
    error_page(res, 400, uri ? "redirect_uri is not one this application registered."
                             : "redirect_uri is missing.");
    goto out;
  }
  /* From here on, errors go back to the application, but only to one
   * somebody has signed in with (RFC 9700 4.11.2): anyone may register a
   * client, so an error redirect for a fresh one would make this server
   * an open redirector with text of the attacker's choosing. */
  int used = pmcp_oauth_client_used(o->state, client);
  if (used < 0) {
    error_page(res, 500, "The store failed.");
    free(redirect);
    goto out;
  }
  const char *err = NULL, *desc = NULL;
  if (!rtype || strcmp(rtype, "code") != 0)
    err = "unsupported_response_type", desc = "only response_type=code is supported";
  else if (!challenge)
    err = "invalid_request", desc = "code_challenge is required (PKCE with S256)";
  else if (!method || strcmp(method, "S256") != 0)
    err = "invalid_request", desc = "code_challenge_method must be S256 (plain is not accepted)";
  else if (!pmcp_oauth_challenge_valid(challenge))
    err = "invalid_request", desc = "code_challenge must be 43 base64url characters";
  else if (resource && !resource_ok(resource, mcp_url))
    err = "invalid_target", desc = "resource must be this server's MCP endpoint";
  else if (state && strlen(state) > 1000)
    err = "invalid_request", desc = "state is too long", state = NULL;
  if (err && used == 1)
    redirect_error(res, redirect, err, desc, state, issuer);
  else if (err) {
    char msg[300];
    snprintf(msg, sizeof msg, "The application's request is malformed (%s: %s). "
             "Nothing was sent back to it: it has never been used to sign in here.",
             err, desc);
    error_page(res, 400, msg);
  }
  else {
    pmcp_oauth_request r = PMCP_OAUTH_REQUEST_INIT;
    char *id = NULL;
    r.client_id = client;
    r.redirect_uri = redirect;
    r.challenge = challenge;
    r.state = state;
    r.resource = resource ? mcp_url : NULL;
    r.scope = scope;
    /* Nothing is stored: the request goes to the consent page sealed. */
    if (over_limit(o, req, "authorization", POAUTH_AUTHORIZE_PER_MIN, res, 0)) {
      /* answered */
    } else if (pmcp_oauth_request_seal(o->state, &r, &id) != 0) {
      error_page(res, 400, "The authorization request is too large.");
    } else {
      res->status = 302;
      poauth_header(res, "Location: %s/oauth/consent?req=%s", app, id);
      poauth_header(res, "Cache-Control: no-store");
    }
    free(id);
  }
  free(redirect);
out:
  for (size_t i = 0; i < 8; i++)
    free(v[i]);
}

/* ---- token, revoke ---------------------------------------------------------------------- */

static int form_body(const pmcp_http_request *req, pmcp_http_response *res)
{
  const char *ct = pmcp_http_request_header(req, "content-type", NULL);
  if (!ct || strncasecmp(ct, "application/x-www-form-urlencoded", 33) != 0) {
    poauth_json_error(res, 400, "invalid_request",
                      "the body must be application/x-www-form-urlencoded");
    return -1;
  }
  if (memchr(req->body, '\0', req->body_len)) {
    poauth_json_error(res, 400, "invalid_request", "the body holds a NUL byte");
    return -1;
  }
  return 0;
}

/* Reads parameters; answers invalid_request for a repeated or malformed
 * one. */
static int params(const pmcp_http_request *req, pmcp_http_response *res,
                  const char *const *names, char **v, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    int rc = poauth_form_get(req->body, names[i], &v[i]);
    if (rc < 0) {
      char msg[160];
      snprintf(msg, sizeof msg, "the parameter %s is repeated or malformed", names[i]);
      poauth_json_error(res, 400, "invalid_request", msg);
      return -1;
    }
  }
  return 0;
}

static void tokens_json(pmcp_http_response *res, const pmcp_oauth_tokens *t)
{
  pmcp_json *o = json_object();
  if (o) {
    json_str(o, "access_token", t->access);
    json_str(o, "token_type", "Bearer");
    pmcp_json_key(o, "expires_in");
    pmcp_json_int(o, PMCP_OAUTH_ACCESS_TTL);
    json_str(o, "refresh_token", t->refresh);
    json_str(o, "scope",
             strcmp(t->access_level, "write") == 0 ? SCOPE_READ " " SCOPE_WRITE : SCOPE_READ);
  }
  json_send(res, 200, o);
}

static void do_token(poauth_server *o, const pmcp_http_request *req,
                     pmcp_http_response *res, const char *base)
{
  static const char *const names[] = {"grant_type", "client_id", "code", "redirect_uri",
                                      "code_verifier", "refresh_token", "resource"};
  char *v[7] = {0};
  if (form_body(req, res) != 0 || params(req, res, names, v, 7) != 0)
    goto out;
  const char *grant = v[0], *client = v[1];
  char mcp_url[1100];
  snprintf(mcp_url, sizeof mcp_url, "%s%s", base, o->endpoint);
  if (!grant) {
    poauth_json_error(res, 400, "invalid_request", "grant_type is missing");
    goto out;
  }
  if (strcmp(grant, "authorization_code") != 0 && strcmp(grant, "refresh_token") != 0) {
    poauth_json_error(res, 400, "unsupported_grant_type",
                      "grant_type must be authorization_code or refresh_token");
    goto out;
  }
  if (!client) {
    poauth_json_error(res, 401, "invalid_client", "client_id is missing");
    goto out;
  }
  char *cname = NULL, *uris = NULL;
  int found = pmcp_oauth_client_get(o->state, client, &cname, &uris);
  free(cname);
  free(uris);
  if (found != 1) {
    poauth_json_error(res, found < 0 ? 500 : 401, found < 0 ? "server_error" : "invalid_client",
                      found < 0 ? "the store failed" : "unknown client_id");
    goto out;
  }
  const char *resource = v[6];
  if (resource && !resource_ok(resource, mcp_url)) {
    poauth_json_error(res, 400, "invalid_target", "resource must be this server's MCP endpoint");
    goto out;
  }
  pmcp_oauth_tokens t = PMCP_OAUTH_TOKENS_INIT;
  pmcp_oauth_err e = PMCP_OAUTH_ERR_INIT;
  int rc;
  if (strcmp(grant, "authorization_code") == 0) {
    if (!v[2] || !v[4]) {
      poauth_json_error(res, 400, "invalid_request",
                        !v[2] ? "code is missing" : "code_verifier is missing (PKCE is required)");
      goto out;
    }
    rc = pmcp_oauth_exchange_code(o->state, v[2], client, v[3], v[4],
                              resource ? mcp_url : NULL, &t, &e);
  } else {
    if (!v[5]) {
      poauth_json_error(res, 400, "invalid_request", "refresh_token is missing");
      goto out;
    }
    rc = pmcp_oauth_refresh(o->state, v[5], client, resource ? mcp_url : NULL, &t, &e);
  }
  if (rc < -1) /* not a protocol error: the call itself was misused */
    poauth_json_error(res, 500, "server_error", pmcp_strerror(rc));
  else if (rc)
    poauth_json_error(res, e.status, e.error, e.description);
  else
    tokens_json(res, &t);
  pmcp_oauth_tokens_dispose(&t); /* clears the secrets too */
out:
  poauth_header(res, "Cache-Control: no-store");
  for (size_t i = 0; i < 7; i++)
    free(v[i]);
}

static void do_revoke(poauth_server *o, const pmcp_http_request *req,
                      pmcp_http_response *res)
{
  static const char *const names[] = {"token", "token_type_hint", "client_id"};
  char *v[3] = {0};
  if (form_body(req, res) != 0 || params(req, res, names, v, 3) != 0)
    goto out;
  if (!v[0]) {
    poauth_json_error(res, 400, "invalid_request", "token is missing");
    goto out;
  }
  /* A public client authenticates by its client_id (RFC 7009 2.1): a
   * token is only revoked by the client it was issued to. */
  if (!v[2]) {
    poauth_json_error(res, 400, "invalid_client",
                      "client_id is required: a public client names itself to revoke its tokens");
    goto out;
  }
  char *cname = NULL, *uris = NULL;
  int known = pmcp_oauth_client_get(o->state, v[2], &cname, &uris);
  free(cname);
  free(uris);
  int rc = known == 1 ? pmcp_oauth_revoke_token(o->state, v[0], v[2]) : known;
  if (rc < 0) {
    poauth_json_error(res, 503, "temporarily_unavailable", "the store failed; try again");
    goto out;
  }
  if (known == 0 || rc == 1) {
    poauth_json_error(res, 400, "invalid_client", known == 0
                      ? "client_id is not a client registered here"
                      : "the token was not issued to this client_id");
    goto out;
  }
  res->status = 200;
out:
  poauth_header(res, "Cache-Control: no-store");
  for (size_t i = 0; i < 3; i++)
    free(v[i]);
}

/* ---- routing ---------------------------------------------------------------------- */

static int has_prefix(const char *p, size_t n, const char *pre)
{
  size_t k = strlen(pre);
  return n >= k && memcmp(p, pre, k) == 0;
}

int poauth_route_match(void *ud, const char *method, const char *path, size_t len)
{
  (void)ud;
  (void)method;
  return has_prefix(path, len, "/.well-known/oauth-") ||
         has_prefix(path, len, "/.well-known/openid-configuration") ||
         has_prefix(path, len, "/oauth/") || (len == 6 && memcmp(path, "/oauth", 6) == 0);
}

static int is(const char *a, const char *b) { return strcmp(a, b) == 0; }

void poauth_route_handle(void *ud, const pmcp_http_request *req, pmcp_http_response *res)
{
  poauth_server *o = ud;
  const char *p = req->path, *m = req->method;
  char base[600], app[600], prm[700];
  if (poauth_bases(o, req, res, base, app, sizeof base) != 0)
    return;
  snprintf(prm, sizeof prm, "/.well-known/oauth-protected-resource%s", o->endpoint);
  int is_prm = is(p, "/.well-known/oauth-protected-resource") || is(p, prm);
  int is_asm = is(p, "/.well-known/oauth-authorization-server/oauth") ||
               is(p, "/oauth/.well-known/oauth-authorization-server") ||
               is(p, "/.well-known/openid-configuration/oauth") ||
               is(p, "/oauth/.well-known/openid-configuration");
  int api = is_prm || is_asm || is(p, "/oauth/register") || is(p, "/oauth/token") ||
            is(p, "/oauth/revoke");
  if (api) {
    /* Public protocol endpoints: no cookies, any origin. */
    poauth_header(res, "Access-Control-Allow-Origin: *");
    if (is(m, "OPTIONS")) {
      res->status = 204;
      poauth_header(res, "Access-Control-Allow-Methods: %s",
                    is_prm || is_asm ? "GET, OPTIONS" : "POST, OPTIONS");
      poauth_header(res, "Access-Control-Allow-Headers: Content-Type, Authorization, MCP-Protocol-Version");
      poauth_header(res, "Access-Control-Max-Age: 86400");
      return;
    }
    int get = is_prm || is_asm;
    if (get ? !is(m, "GET") && !is(m, "HEAD") : !is(m, "POST")) {
      poauth_header(res, "Allow: %s", get ? "GET, HEAD, OPTIONS" : "POST, OPTIONS");
      poauth_json_error(res, 405, "invalid_request", get ? "use GET" : "use POST");
      return;
    }
  }
  if (is_prm)
    resource_metadata(o, base, res);
  else if (is_asm)
    server_metadata(base, res);
  else if (is(p, "/oauth/register"))
    do_register(o, req, res);
  else if (is(p, "/oauth/token"))
    do_token(o, req, res, base);
  else if (is(p, "/oauth/revoke"))
    do_revoke(o, req, res);
  else if (is(p, "/oauth/authorize")) {
    if (!is(m, "GET") && !is(m, "HEAD")) {
      poauth_header(res, "Allow: GET");
      error_page(res, 405, "Use GET for the authorization endpoint.");
    } else if (pmcp_http_request_header(req, "authorization", NULL)) {
      /* A browser navigation never carries one: an API key or an access
       * token here is a client trying to use it beyond /mcp. */
      error_page(res, 403, "API keys and access tokens are valid on the MCP endpoint only.");
    } else {
      pmcp_oauth_prune(o->state);
      do_authorize(o, req, res, base, app);
    }
  } else if (!poauth_pages(o, req, res)) {
    poauth_json_error(res, 404, "not_found", "no such OAuth endpoint");
  }
}
