/* SPDX-License-Identifier: MIT */
/* The consent pages: server-rendered HTML, no script at all.
 *   GET  /oauth/consent?req=ID   sign-in form, or the decision form
 *   POST /oauth/login            a local user's name and password
 *   POST /oauth/consent          approve (workspace, access level) or deny
 *   GET  /oauth/connections      the signed-in person's connections
 *   POST /oauth/connections      disconnect one
 *   POST /oauth/logout
 * A decision or a disconnection is accepted only from a signed-in cookie
 * session (HttpOnly, SameSite=Lax, Secure under https), with the session's
 * CSRF token, from the pages' own origin (Origin header). A request that
 * carries an Authorization header is refused outright: API keys and MCP
 * tokens never mint or manage connections. Every value written into a
 * page goes through poauth_html_escape(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oauth.h"

#define SESSION_COOKIE "pbm_session"
#define LOGIN_COOKIE "pbm_login"

typedef struct page_ctx {
  poauth_server *o;
  const pmcp_http_request *req;
  pmcp_http_response *res;
  char base[600], app[600], origin[600];
  int secure;                /* the pages are served over https */
  char *cookie;              /* pbm_session value or NULL */
  char user_id[128];         /* signed in: non-empty */
} page_ctx;

static const char style[] =
  "body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}"
  "main{max-width:46rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:8px;"
  "box-shadow:0 1px 3px rgba(0,0,0,.15)}h1{font-size:1.4rem;margin-top:0}"
  "label{display:block;margin:.8rem 0 .2rem}input[type=text],input[type=password],select"
  "{width:100%;padding:.5rem;box-sizing:border-box}fieldset{border:1px solid #ccd;margin:1rem 0}"
  "button{padding:.55rem 1.2rem;margin:1rem .5rem 0 0;font-size:1rem;cursor:pointer}"
  ".approve{background:#1f6feb;color:#fff;border:0;border-radius:4px}"
  ".error{color:#b00020}.muted{color:#667}table{width:100%;border-collapse:collapse;font-size:.92rem}td form button{margin:0}"
  "td,th{text-align:left;padding:.4rem;border-bottom:1px solid #e2e4e8}";

static void esc(page_ctx *p, const char *s) { poauth_html_escape(&p->res->body, s); }
static void out(page_ctx *p, const char *s) { pmcp_buf_puts(&p->res->body, s); }

static void page_begin(page_ctx *p, int status, const char *title)
{
  p->res->status = status;
  p->res->content_type = "text/html; charset=utf-8";
  p->res->body.len = 0;
  poauth_header(p->res, "Cache-Control: no-store");
  poauth_header(p->res, "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; "
                        "frame-ancestors 'none'; base-uri 'none'");
  poauth_header(p->res, "X-Frame-Options: DENY");
  poauth_header(p->res, "Referrer-Policy: same-origin");
  out(p, "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>");
  esc(p, title);
  out(p, " · probe-mcp</title><style>");
  out(p, style);
  out(p, "</style></head><body><main><h1>");
  esc(p, title);
  out(p, "</h1>");
}

static void page_end(page_ctx *p) { out(p, "</main></body></html>"); }

static void message_page(page_ctx *p, int status, const char *title, const char *msg)
{
  page_begin(p, status, title);
  out(p, "<p>");
  esc(p, msg);
  out(p, "</p>");
  page_end(p);
}

static void set_cookie(page_ctx *p, const char *name, const char *value, long max_age)
{
  poauth_header(p->res, "Set-Cookie: %s=%s; Path=/oauth; Max-Age=%ld; HttpOnly; SameSite=Lax%s",
                name, value, max_age, p->secure ? "; Secure" : "");
}

static void see_other(page_ctx *p, const char *location)
{
  p->res->status = 303;
  poauth_header(p->res, "Location: %s", location);
  poauth_header(p->res, "Cache-Control: no-store");
}

/* A hidden CSRF field bound to the session (or to the pre-sign-in cookie). */
static void csrf_field(page_ctx *p, const char *cookie)
{
  char tok[PMCP_OAUTH_HASH_HEX];
  if (pmcp_oauth_csrf_token(cookie, tok, sizeof tok) != 0)
    tok[0] = '\0'; /* a form that fails its check */
  out(p, "<input type=\"hidden\" name=\"csrf\" value=\"");
  esc(p, tok);
  out(p, "\">");
}

/* ---- sign-in -------------------------------------------------------------- */

static void signin_page(page_ctx *p, int status, const char *req_id, const char *error)
{
  char pre[PMCP_OAUTH_TOKEN_MAX];
  /* Login CSRF: a random cookie and a form field derived from it; a form
   * posted from another site cannot know the value. */
  if (pmcp_oauth_token_new("pbm_li_", pre, sizeof pre) != 0) {
    message_page(p, 500, "Sign in", "The server could not make a random value.");
    return;
  }
  set_cookie(p, LOGIN_COOKIE, pre, 1800);
  page_begin(p, status, "Sign in to probe-mcp");
  if (error) {
    out(p, "<p class=\"error\" role=\"alert\">");
    esc(p, error);
    out(p, "</p>");
  }
  out(p, "<form method=\"post\" action=\"/oauth/login\">");
  csrf_field(p, pre);
  if (req_id) {
    out(p, "<input type=\"hidden\" name=\"req\" value=\"");
    esc(p, req_id);
    out(p, "\">");
  }
  out(p, "<label for=\"username\">User name</label>"
         "<input type=\"text\" id=\"username\" name=\"username\" autocomplete=\"username\" required>"
         "<label for=\"password\">Password</label>"
         "<input type=\"password\" id=\"password\" name=\"password\" "
         "autocomplete=\"current-password\" required>"
         "<button class=\"approve\" type=\"submit\">Sign in</button></form>"
         "<p class=\"muted\">Accounts are created by an administrator with "
         "<code>probe user add</code>.</p>");
  page_end(p);
}

/* ---- the decision form ----------------------------------------------------------- */

static void consent_page(page_ctx *p, const char *req_id)
{
  pmcp_oauth_request r = PMCP_OAUTH_REQUEST_INIT;
  int found = pmcp_oauth_request_get(p->o->state, req_id, &r);
  if (found != 1) {
    message_page(p, found < 0 ? 500 : 400, "Sign-in request not found",
                 "This sign-in request has expired or was already answered. "
                 "Start again from your application.");
    return;
  }
  /* A metadata-document client is named by its document (cached), and
   * by the host it lives on, which no document can pretend. */
  char host[300] = "";
  if (poauth_cimd_is_url(r.client_id)) {
    char *name = NULL, *uris = NULL, why[400];
    int rc = poauth_client_lookup(p->o, p->req, r.client_id, &name, &uris, why, sizeof why);
    char *listed = rc == 1 ? poauth_listed_uri(uris, r.redirect_uri) : NULL;
    free(uris);
    if (!listed) {
      free(name);
      pmcp_oauth_request_dispose(&r);
      message_page(p, rc == -1 ? 500 : 400, "Application not accepted",
                   rc == 1 ? "The application's metadata document no longer lists its "
                             "redirect URI. Start again from your application."
                           : rc == -1 ? "The store failed." : why);
      return;
    }
    free(listed);
    free(r.client_name);
    r.client_name = name;
    poauth_cimd_host(r.client_id, host, sizeof host);
  }
  pmcp_oauth_workspace *ws = NULL;
  size_t nws = 0;
  char *who = pmcp_oauth_user_name(p->o->state, p->user_id);
  if (pmcp_oauth_workspaces(p->o->state, p->user_id, &ws, &nws) != 0) {
    free(who);
    pmcp_oauth_request_dispose(&r);
    message_page(p, 500, "Error", "The store failed.");
    return;
  }
  page_begin(p, 200, "Connect an application");
  out(p, "<p><strong id=\"client-name\">");
  esc(p, r.client_name && *r.client_name ? r.client_name : "An unnamed application");
  out(p, "</strong>");
  if (host[0]) {
    out(p, " (its description is published by <strong id=\"client-host\">");
    esc(p, host);
    out(p, "</strong>)");
  }
  out(p, " wants to use probe-mcp as <strong>");
  esc(p, who ? who : "you");
  out(p, "</strong>.</p><p class=\"muted\">After your decision you will be sent to <code>");
  esc(p, r.redirect_uri);
  out(p, "</code>.</p><form method=\"post\" action=\"/oauth/consent\">");
  csrf_field(p, p->cookie);
  out(p, "<input type=\"hidden\" name=\"req\" value=\"");
  esc(p, req_id);
  out(p, "\">");
  if (nws == 0) {
    out(p, "<p class=\"error\">You are not a member of any workspace, so there is "
           "nothing to connect. Ask an administrator to add you to one.</p>");
  } else {
    out(p, "<label for=\"workspace\">Workspace</label><select id=\"workspace\" name=\"workspace\">");
    for (size_t i = 0; i < nws; i++) {
      out(p, "<option value=\"");
      esc(p, ws[i].tenant_id);
      out(p, ":");
      esc(p, ws[i].workspace);
      out(p, "\">");
      esc(p, ws[i].tenant);
      out(p, " / ");
      esc(p, ws[i].workspace);
      out(p, " (");
      esc(p, ws[i].role);
      out(p, ")</option>");
    }
    out(p, "</select><fieldset><legend>Access</legend>"
           "<label><input type=\"radio\" name=\"access\" value=\"read\" checked> "
           "Read-only</label><label><input type=\"radio\" name=\"access\" value=\"write\"> "
           "Read &amp; write (limited by your role in the workspace)</label></fieldset>"
           "<button class=\"approve\" type=\"submit\" name=\"decision\" value=\"approve\">"
           "Approve</button>");
  }
  out(p, "<button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>"
         "<p class=\"muted\"><a href=\"/oauth/connections\">Your connections</a></p>");
  page_end(p);
  free(ws);
  free(who);
  pmcp_oauth_request_dispose(&r);
}

static void redirect_to_client(page_ctx *p, const pmcp_oauth_request *r, const char *code,
                               const char *error, const char *desc)
{
  pmcp_buf b = PMCP_BUF_INIT;
  pmcp_buf_puts(&b, r->redirect_uri);
  pmcp_buf_putc(&b, strchr(r->redirect_uri, '?') ? '&' : '?');
  if (code) {
    pmcp_buf_puts(&b, "code=");
    poauth_url_escape(&b, code);
  } else {
    pmcp_buf_puts(&b, "error=");
    poauth_url_escape(&b, error);
    pmcp_buf_puts(&b, "&error_description=");
    poauth_url_escape(&b, desc);
  }
  if (r->state) {
    pmcp_buf_puts(&b, "&state=");
    poauth_url_escape(&b, r->state);
  }
  char issuer[700];
  snprintf(issuer, sizeof issuer, "%s/oauth", p->base);
  pmcp_buf_puts(&b, "&iss=");
  poauth_url_escape(&b, issuer);
  see_other(p, b.ptr ? b.ptr : r->redirect_uri);
  free(b.ptr);
}

static void decide(page_ctx *p, char **v)
{
  const char *req_id = v[0], *decision = v[1], *ws = v[2], *access = v[3];
  pmcp_oauth_request r = PMCP_OAUTH_REQUEST_INIT;
  if (!req_id || !decision) {
    message_page(p, 400, "Bad request", "The form is incomplete.");
    return;
  }
  if (strcmp(decision, "deny") == 0) {
    int rc = pmcp_oauth_deny(p->o->state, req_id, &r);
    if (rc != 1) {
      message_page(p, 400, "Sign-in request not found",
                   "This sign-in request has expired or was already answered.");
      return;
    }
    redirect_to_client(p, &r, NULL, "access_denied", "the person denied access");
    pmcp_oauth_request_dispose(&r);
    return;
  }
  if (strcmp(decision, "approve") != 0 || !ws || !access ||
      (strcmp(access, "read") != 0 && strcmp(access, "write") != 0)) {
    message_page(p, 400, "Bad request",
                 "Choose a workspace and an access level (read-only or read & write).");
    return;
  }
  const char *colon = strchr(ws, ':');
  char tenant[24];
  size_t tn = colon ? (size_t)(colon - ws) : 0;
  if (!colon || tn == 0 || tn >= sizeof tenant || strspn(ws, "0123456789") != tn) {
    message_page(p, 400, "Bad request", "The workspace choice is malformed.");
    return;
  }
  memcpy(tenant, ws, tn);
  tenant[tn] = '\0';
  /* A metadata-document client is stored as its document says now (and
   * must still list the redirect URI), so its codes and connections name
   * a known client. */
  pmcp_oauth_request q = PMCP_OAUTH_REQUEST_INIT;
  int pending = pmcp_oauth_request_get(p->o->state, req_id, &q);
  if (pending == 1 && poauth_cimd_is_url(q.client_id)) {
    char *name = NULL, *uris = NULL, why[400];
    int lk = poauth_client_lookup(p->o, p->req, q.client_id, &name, &uris, why, sizeof why);
    char *listed = lk == 1 ? poauth_listed_uri(uris, q.redirect_uri) : NULL;
    int st = listed ? pmcp_oauth_client_remember(p->o->state, q.client_id, name, uris) : 0;
    free(name);
    free(uris);
    pmcp_oauth_request_dispose(&q);
    if (!listed || st) {
      free(listed);
      message_page(p, lk == -1 || st ? 500 : 400, "Not approved",
                   lk == -1 || st ? "The store failed."
                   : lk == 1 ? "The application's metadata document no longer lists its "
                               "redirect URI."
                             : why);
      return;
    }
    free(listed);
  } else if (pending == 1) {
    pmcp_oauth_request_dispose(&q);
  }
  char code[PMCP_OAUTH_TOKEN_MAX], conn[40];
  int rc = pmcp_oauth_approve(p->o->state, req_id, p->user_id, tenant, colon + 1, access,
                              code, sizeof code, &r, conn, sizeof conn);
  if (rc != 1) {
    message_page(p, rc < 0 ? 500 : 400, "Not approved", rc < 0 ? "The store failed." :
                 "This sign-in request has expired or was already answered, or you are "
                 "not a member of that workspace.");
    return;
  }
  redirect_to_client(p, &r, code, NULL, NULL);
  memset(code, 0, sizeof code);
  pmcp_oauth_request_dispose(&r);
}

/* ---- connections ---------------------------------------------------------------------- */

static void when(page_ctx *p, int64_t ms)
{
  if (!ms) {
    out(p, "never");
    return;
  }
  time_t t = (time_t)(ms / 1000);
  struct tm tm;
  char buf[40];
  gmtime_r(&t, &tm);
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  esc(p, buf);
}

static void connections_page(page_ctx *p)
{
  pmcp_oauth_connection *rows = NULL;
  size_t n = 0;
  if (pmcp_oauth_connections(p->o->state, p->user_id, &rows, &n) != 0) {
    message_page(p, 500, "Error", "The store failed.");
    return;
  }
  char *who = pmcp_oauth_user_name(p->o->state, p->user_id);
  page_begin(p, 200, "Your connections");
  out(p, "<p>Signed in as <strong>");
  esc(p, who ? who : "");
  out(p, "</strong>.</p>");
  if (n == 0)
    out(p, "<p id=\"no-connections\">No application is connected.</p>");
  else
    out(p, "<table id=\"connections\"><tr><th>Application</th><th>Workspace</th>"
           "<th>Access</th><th>Connected</th><th>Last used</th><th></th></tr>");
  for (size_t i = 0; i < n; i++) {
    out(p, "<tr data-connection=\"");
    esc(p, rows[i].id);
    out(p, "\"><td>");
    esc(p, rows[i].client[0] ? rows[i].client : "(unnamed)");
    out(p, "</td><td>");
    esc(p, rows[i].tenant);
    out(p, " / ");
    esc(p, rows[i].workspace);
    out(p, "</td><td>");
    out(p, strcmp(rows[i].access, "write") == 0 ? "read &amp; write" : "read-only");
    out(p, "</td><td>");
    when(p, rows[i].created);
    out(p, "</td><td>");
    when(p, rows[i].last_used);
    out(p, "</td><td><form method=\"post\" action=\"/oauth/connections\">");
    csrf_field(p, p->cookie);
    out(p, "<input type=\"hidden\" name=\"connection\" value=\"");
    esc(p, rows[i].id);
    out(p, "\"><button type=\"submit\">Disconnect</button></form></td></tr>");
  }
  if (n)
    out(p, "</table>");
  out(p, "<form method=\"post\" action=\"/oauth/logout\">");
  csrf_field(p, p->cookie);
  out(p, "<button type=\"submit\">Sign out</button></form>");
  page_end(p);
  free(rows);
  free(who);
}

/* ---- dispatch ---------------------------------------------------------------------------- */

/* The Origin of a POST must be the pages' own. Browsers send it on every
 * form POST; its absence is refused too. */
static int same_origin(page_ctx *p)
{
  int count;
  const char *o = pmcp_http_request_header(p->req, "origin", &count);
  return o && count == 1 && strcasecmp(o, p->origin) == 0;
}

static int form_params(page_ctx *p, const char *const *names, char **v, size_t n)
{
  const char *ct = pmcp_http_request_header(p->req, "content-type", NULL);
  if (!ct || strncasecmp(ct, "application/x-www-form-urlencoded", 33) != 0 ||
      memchr(p->req->body, '\0', p->req->body_len)) {
    message_page(p, 400, "Bad request", "Expected a form submission.");
    return -1;
  }
  for (size_t i = 0; i < n; i++)
    if (poauth_form_get(p->req->body, names[i], &v[i]) < 0) {
      message_page(p, 400, "Bad request", "A form field is repeated or malformed.");
      return -1;
    }
  return 0;
}

static void do_login(page_ctx *p)
{
  static const char *const names[] = {"username", "password", "req", "csrf"};
  char *v[4] = {0};
  if (form_params(p, names, v, 4) != 0)
    goto out;
  const char *ck = pmcp_http_request_header(p->req, "cookie", NULL);
  char *pre = ck ? poauth_cookie_get(ck, LOGIN_COOKIE) : NULL;
  int ok = pre && pmcp_oauth_csrf_ok(pre, v[3]);
  free(pre);
  if (!ok) {
    signin_page(p, 403, v[2], "Your sign-in form expired. Please try again.");
    goto out;
  }
  /* Lockout: too many failed sign-ins of this name, or from this address,
   * refuse even the right password until the window ends (and run no
   * KDF, so guessing costs the server nothing). */
  const char *addr = p->req->peer ? p->req->peer : "";
  const char *user = v[0] ? v[0] : "";
  int64_t now = pmcp_oauth_now_ms(p->o->state);
  int64_t wait = poauth_limit(p->o->limits, "login-user", user, POAUTH_LOGIN_FAIL_USER,
                              POAUTH_LOGIN_WINDOW_MS, now, 0);
  int64_t wait2 = poauth_limit(p->o->limits, "login-addr", addr, POAUTH_LOGIN_FAIL_ADDR,
                               POAUTH_LOGIN_WINDOW_MS, now, 0);
  if (wait2 > wait)
    wait = wait2;
  if (wait) {
    char msg[200];
    snprintf(msg, sizeof msg, "Too many failed sign-ins for this user or from this address."
             " Try again in %lld minute(s).", (long long)(wait + 59999) / 60000);
    pmcp_oauth_audit_signin(p->o->state, user, addr, "auth.login_locked");
    signin_page(p, 429, v[2], msg);
    goto out;
  }
  char uid[128];
  int rc = v[0] && v[1] ? pmcp_oauth_user_check(p->o->state, v[0], v[1], uid, sizeof uid) : 0;
  if (rc != 1) {
    if (rc == 0) {
      poauth_limit(p->o->limits, "login-user", user, POAUTH_LOGIN_FAIL_USER,
                   POAUTH_LOGIN_WINDOW_MS, now, 1);
      poauth_limit(p->o->limits, "login-addr", addr, POAUTH_LOGIN_FAIL_ADDR,
                   POAUTH_LOGIN_WINDOW_MS, now, 1);
      pmcp_oauth_audit_signin(p->o->state, user, addr, "auth.login_failed");
    }
    signin_page(p, rc < 0 ? 500 : 401, v[2],
                rc < 0 ? "The store failed." : "Wrong user name or password.");
    goto out;
  }
  poauth_limit_clear(p->o->limits, "login-user", user);
  char cookie[PMCP_OAUTH_TOKEN_MAX];
  if (pmcp_oauth_session_new(p->o->state, uid, cookie, sizeof cookie) != 0) {
    message_page(p, 500, "Error", "The store failed.");
    goto out;
  }
  set_cookie(p, SESSION_COOKIE, cookie, PMCP_OAUTH_SESSION_TTL);
  set_cookie(p, LOGIN_COOKIE, "", 0);
  memset(cookie, 0, sizeof cookie);
  pmcp_buf loc = PMCP_BUF_INIT;
  pmcp_buf_puts(&loc, p->app);
  if (v[2] && *v[2]) {
    pmcp_buf_puts(&loc, "/oauth/consent?req=");
    poauth_url_escape(&loc, v[2]);
  } else {
    pmcp_buf_puts(&loc, "/oauth/connections");
  }
  see_other(p, loc.ptr ? loc.ptr : "/oauth/connections");
  free(loc.ptr);
out:
  for (size_t i = 0; i < 4; i++)
    free(v[i]);
}

int poauth_pages(poauth_server *o, const pmcp_http_request *req,
                 pmcp_http_response *res)
{
  const char *path = req->path, *m = req->method;
  int consent = strcmp(path, "/oauth/consent") == 0;
  int login = strcmp(path, "/oauth/login") == 0;
  int conns = strcmp(path, "/oauth/connections") == 0;
  int logout = strcmp(path, "/oauth/logout") == 0;
  if (!consent && !login && !conns && !logout)
    return 0;
  page_ctx p = {0};
  p.o = o;
  p.req = req;
  p.res = res;
  if (poauth_bases(o, req, res, p.base, p.app, sizeof p.base) != 0)
    return 1;
  poauth_origin_of(p.app, p.origin, sizeof p.origin);
  p.secure = strncmp(p.app, "https:", 6) == 0;
  int post = strcmp(m, "POST") == 0;
  if (!post && strcmp(m, "GET") != 0 && strcmp(m, "HEAD") != 0) {
    poauth_header(res, "Allow: GET, POST");
    message_page(&p, 405, "Method not allowed", "Use GET or POST.");
    return 1;
  }
  if (pmcp_http_request_header(req, "authorization", NULL)) {
    message_page(&p, 403, "Not allowed",
                 "API keys and MCP access tokens cannot sign in, approve or manage "
                 "connections: use a browser and sign in.");
    return 1;
  }
  if (post && !same_origin(&p)) {
    message_page(&p, 403, "Not allowed",
                 "This form can only be sent from the probe-mcp sign-in pages themselves.");
    return 1;
  }
  const char *ck = pmcp_http_request_header(req, "cookie", NULL);
  p.cookie = ck ? poauth_cookie_get(ck, SESSION_COOKIE) : NULL;
  int signed_in = p.cookie &&
                  pmcp_oauth_session_user(o->state, p.cookie, p.user_id, sizeof p.user_id) == 1;
  if (login && post) {
    do_login(&p);
  } else if (login) {
    signin_page(&p, 200, NULL, NULL);
  } else if (!signed_in) {
    char *rq = NULL;
    if (consent && !post)
      poauth_form_get(req->query, "req", &rq);
    if (post)
      message_page(&p, 401, "Signed out",
                   "Your sign-in has expired. Start again from your application.");
    else
      signin_page(&p, 200, rq, NULL);
    free(rq);
  } else if (post) {
    static const char *const names[] = {"req", "decision", "workspace", "access", "csrf",
                                        "connection"};
    char *v[6] = {0};
    if (form_params(&p, names, v, 6) == 0) {
      if (!pmcp_oauth_csrf_ok(p.cookie, v[4]))
        message_page(&p, 403, "Not allowed",
                     "The form's security token does not match your sign-in. Reload the page.");
      else if (consent)
        decide(&p, v);
      else if (conns) {
        int rc = v[5] ? pmcp_oauth_connection_revoke(o->state, v[5], p.user_id,
                                                 "disconnected on the connections page") : 0;
        if (rc < 0)
          message_page(&p, 500, "Error", "The store failed.");
        else
          see_other(&p, "/oauth/connections");
      } else {
        pmcp_oauth_session_end(o->state, p.cookie);
        set_cookie(&p, SESSION_COOKIE, "", 0);
        see_other(&p, "/oauth/connections");
      }
    }
    for (size_t i = 0; i < 6; i++)
      free(v[i]);
  } else if (consent) {
    char *rq = NULL;
    if (poauth_form_get(req->query, "req", &rq) != 1)
      message_page(&p, 400, "Bad request", "The link is missing its request.");
    else
      consent_page(&p, rq);
    free(rq);
  } else if (conns) {
    connections_page(&p);
  } else {
    poauth_header(res, "Allow: POST");
    message_page(&p, 405, "Method not allowed", "Sign out with the button on the connections page.");
  }
  free(p.cookie);
  return 1;
}
