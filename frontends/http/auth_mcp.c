/* SPDX-License-Identifier: MIT */
/* See auth_mcp.h. Principals live in a table of holders, one per identity
 * (key id or connection id), for the life of the server: sessions and
 * engine calls keep pointers to them without reference counting, and each
 * request refreshes its holder from the store, so a revocation, a disabled
 * person or a changed role takes effect at the next request. The table is
 * bounded by the number of credentials that ever authenticated. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "auth_mcp.h"
#include "oauth.h"

/* A store handle of one authenticating thread (the transport's loop): the
 * credential check on every request runs on it without a lock, so the
 * loop never waits for a tool call's audit write on the shared handle,
 * and its prepared statements stay cached in that connection. */
typedef struct thread_store {
  struct thread_store *next;
  pmcp_store *st;   /* NULL: it would not open; retried from retry_at */
  time_t retry_at;
} thread_store;

typedef struct holder {
  struct holder *next;
  pthread_mutex_t mu;
  int kind;         /* the identity, immutable once listed (read under hmu) */
  char *id;
  pmcp_principal p; /* under mu */
} holder;

struct mcp_auth {
  pmcp_store *st;            /* writable; every use under mu */
  pthread_mutex_t mu;
  pmcp_tenant tenant;
  char public_base[512];
  char endpoint[256];
  holder *holders;           /* under hmu */
  pthread_mutex_t hmu;
  char token_prefix[32];
  mcp_token_fn token_fn;
  void *token_ud;
  pmcp_server *srv;          /* for the tools' hints (immutable once served) */
  char *where;               /* the store, for per-thread handles; NULL: none */
  pthread_key_t key;         /* this thread's thread_store */
  int have_key;
  thread_store *stores;      /* every thread's, under hmu; freed with a */
};

int mcp_auth_new(mcp_auth **out, pmcp_store *st, const char *tenant,
                 const char *public_base, const char *endpoint, char *why,
                 size_t whysize)
{
  *out = NULL;
  mcp_auth *a = calloc(1, sizeof *a);
  if (!a) {
    snprintf(why, whysize, "out of memory");
    return -1;
  }
  a->st = st;
  pthread_mutex_init(&a->mu, NULL);
  pthread_mutex_init(&a->hmu, NULL);
  snprintf(a->endpoint, sizeof a->endpoint, "%s", endpoint ? endpoint : "/mcp");
  if (public_base && *public_base &&
      poauth_config_url(public_base, a->public_base, sizeof a->public_base, why,
                        whysize) != 0) {
    mcp_auth_free(a);
    return -1;
  }
  if (pmcp_store_tenant(st, tenant, 0, &a->tenant) != 0) {
    snprintf(why, whysize, "no tenant '%s' in the store", tenant ? tenant : "default");
    mcp_auth_free(a);
    return -1;
  }
  *out = a;
  return 0;
}

void mcp_auth_free(mcp_auth *a)
{
  if (!a)
    return;
  for (holder *h = a->holders, *n; h; h = n) {
    n = h->next;
    pmcp_principal_dispose(&h->p);
    free(h->id);
    pthread_mutex_destroy(&h->mu);
    free(h);
  }
  for (thread_store *t = a->stores, *n; t; t = n) {
    n = t->next;
    pmcp_store_free(t->st);
    free(t);
  }
  if (a->have_key)
    pthread_key_delete(a->key);
  free(a->where);
  pthread_mutex_destroy(&a->mu);
  pthread_mutex_destroy(&a->hmu);
  free(a);
}

int mcp_auth_set_store(mcp_auth *a, const char *where)
{
  if (a->have_key || !where)
    return PMCP_EINVAL;
  if (!(a->where = strdup(where)))
    return PMCP_ENOMEM;
  if (pthread_key_create(&a->key, NULL) != 0) {
    free(a->where);
    a->where = NULL;
    return PMCP_ENOMEM;
  }
  a->have_key = 1;
  return 0;
}

/* This thread's own handle (opened on its first request), or NULL: use
 * the shared one under mu (no location given, or it would not open). */
static pmcp_store *thread_store_of(mcp_auth *a)
{
  if (!a->have_key)
    return NULL;
  thread_store *t = pthread_getspecific(a->key);
  if (t && (t->st || time(NULL) < t->retry_at))
    return t->st;
  /* An open that failed (the database refusing or slow to connect) is
   * tried again only after a pause: each try runs on this thread, which
   * may be the event loop, so it must not stall every request. */
  pmcp_store *st = NULL;
  int failed = pmcp_store_open(&st, a->where, 0) != 0;
  if (failed) {
    pmcp_store_free(st);
    st = NULL;
  }
  if (t) {
    t->st = st;
    t->retry_at = failed ? time(NULL) + 5 : 0;
    return st;
  }
  if (!(t = calloc(1, sizeof *t))) {
    pmcp_store_free(st);
    return NULL; /* retried at the next request */
  }
  t->st = st;
  t->retry_at = failed ? time(NULL) + 5 : 0;
  pthread_mutex_lock(&a->hmu);
  t->next = a->stores;
  a->stores = t;
  pthread_mutex_unlock(&a->hmu);
  pthread_setspecific(a->key, t);
  return st;
}

void mcp_auth_set_token_resolver(mcp_auth *a, const char *prefix, mcp_token_fn fn,
                                 void *ud)
{
  snprintf(a->token_prefix, sizeof a->token_prefix, "%s", prefix ? prefix : "");
  a->token_fn = fn;
  a->token_ud = ud;
}

pmcp_tenant mcp_auth_tenant(const mcp_auth *a)
{
  return a->tenant;
}

/* The holder of @p p's identity, refreshed from @p p. */
static holder *holder_for(mcp_auth *a, const pmcp_principal *p)
{
  pthread_mutex_lock(&a->hmu);
  holder *h = a->holders;
  while (h && !(h->kind == p->kind && strcmp(h->id, p->id) == 0))
    h = h->next;
  if (!h && (h = calloc(1, sizeof *h)) != NULL) {
    if (!(h->id = strdup(p->id))) {
      free(h);
      pthread_mutex_unlock(&a->hmu);
      return NULL;
    }
    pthread_mutex_init(&h->mu, NULL);
    h->kind = p->kind;
    h->p.version = PMCP_PRINCIPAL_VERSION;
    h->next = a->holders;
    a->holders = h;
  }
  pthread_mutex_unlock(&a->hmu);
  int rc = 0;
  if (h) {
    pthread_mutex_lock(&h->mu);
    rc = pmcp_principal_copy(&h->p, p);
    pthread_mutex_unlock(&h->mu);
  }
  return rc ? NULL : h;
}

int mcp_auth_principal(void *session_ud, pmcp_principal *out)
{
  holder *h = session_ud;
  if (!h)
    return -1;
  pthread_mutex_lock(&h->mu);
  int rc = pmcp_principal_copy(out, &h->p);
  pthread_mutex_unlock(&h->mu);
  return rc ? -1 : 0;
}

int mcp_auth_task_owner(void *ud, const void *session_ud, char *out, size_t size)
{
  (void)ud;
  pmcp_principal p = PMCP_PRINCIPAL_INIT;
  if (mcp_auth_principal((void *)session_ud, &p) != 0)
    return PMCP_EDENIED; /* every call is authenticated here */
  snprintf(out, size, "%lld/%s:%s", (long long)p.tenant_id,
           p.kind == PMCP_PRINCIPAL_KEY ? "key" : "connection", p.id);
  pmcp_principal_dispose(&p);
  return 0;
}

static void challenge_for(mcp_auth *a, const pmcp_http_request *req, int invalid,
                          char *out, size_t size)
{
  char base[512];
  if (poauth_base_url(req, a->public_base[0] ? a->public_base : NULL, base,
                      sizeof base) != 0) {
    /* No base known (no Host, a forwarded host not allowed): a relative
     * metadata URL would be resolved against whatever the client thinks,
     * so none is advertised. */
    snprintf(out, size, "Bearer%s", invalid ? " error=\"invalid_token\"" : "");
    return;
  }
  /* Only characters a quoted-string may hold reach the header. */
  for (char *p = base; *p; p++)
    if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20 || *p == 0x7f)
      *p = '_';
  snprintf(out, size, "Bearer resource_metadata=\"%s/.well-known/oauth-protected-resource%s\"%s",
           base, a->endpoint, invalid ? ", error=\"invalid_token\"" : "");
}

void *mcp_auth_http(void *ud, const pmcp_http_request *req, char *challenge,
                    size_t challenge_size, char *why, size_t why_size)
{
  mcp_auth *a = ud;
  int count = 0;
  const char *authz = pmcp_http_request_header(req, "authorization", &count);
  if (!authz || count != 1) {
    challenge_for(a, req, 0, challenge, challenge_size);
    snprintf(why, why_size, "%s", authz
             ? "send one Authorization header"
             : "authentication required: send Authorization: Bearer <API key or access token>");
    return NULL;
  }
  if (strncasecmp(authz, "Bearer ", 7) != 0) {
    challenge_for(a, req, 0, challenge, challenge_size);
    snprintf(why, why_size, "only Bearer credentials are accepted");
    return NULL;
  }
  const char *tok = authz + 7;
  while (*tok == ' ')
    tok++;
  size_t len = strlen(tok);
  pmcp_principal p = PMCP_PRINCIPAL_INIT;
  int rc = PMCP_EDENIED;
  const char *msg = "invalid or revoked credential";
  pmcp_store *own = thread_store_of(a);
  pmcp_store *st = own ? own : a->st;
  if (!own)
    pthread_mutex_lock(&a->mu);
  if (len >= 3 && strncmp(tok, "pk_", 3) == 0) {
    rc = pmcp_principal_of_key(st, tok, len, &p);
    msg = "invalid or revoked API key";
  } else if (a->token_fn && a->token_prefix[0] &&
             strncmp(tok, a->token_prefix, strlen(a->token_prefix)) == 0) {
    char conn[64] = "";
    /* The oauth code uses its own store handle and lock. */
    if (!own)
      pthread_mutex_unlock(&a->mu);
    int ok = a->token_fn(a->token_ud, tok, len, conn);
    if (!own)
      pthread_mutex_lock(&a->mu);
    msg = "invalid or expired access token";
    if (ok == 1)
      rc = pmcp_principal_of_connection(st, conn, &p);
    else
      rc = ok < 0 ? PMCP_ESTORE : PMCP_EDENIED;
  }
  if (!own)
    pthread_mutex_unlock(&a->mu);
  /* A credential of another tenant is answered exactly like an unknown
   * one: nothing says the other tenant exists. */
  if (rc == 0 && p.tenant_id != a->tenant.id)
    rc = PMCP_EDENIED;
  if (rc == PMCP_EDENIED) {
    pmcp_principal_dispose(&p);
    challenge_for(a, req, 1, challenge, challenge_size);
    snprintf(why, why_size, "%s", msg);
    return NULL;
  }
  /* The credential may well be good: no challenge, so the transport
   * answers 503 (retry) rather than 401, which would tell the client to
   * drop its key or token. */
  if (rc != 0) {
    pmcp_principal_dispose(&p);
    snprintf(why, why_size,
             "the credential could not be checked (the store is unavailable): try again");
    return NULL;
  }
  holder *h = holder_for(a, &p);
  pmcp_principal_dispose(&p);
  if (!h)
    snprintf(why, why_size, "out of memory");
  return h;
}

/* ---- tools ---------------------------------------------------------------- */

static int is_write_tool(const pmcp_server *srv, const char *name)
{
  return !pmcp_server_tool_read_only(srv, name);
}

static int filter(const char *tool, void *session_ud, void *ud)
{
  mcp_auth *a = ud;
  pmcp_principal p = PMCP_PRINCIPAL_INIT;
  if (mcp_auth_principal(session_ud, &p) != 0)
    return 0; /* authentication is on: a session without a principal sees nothing */
  int ok = !is_write_tool(a->srv, tool) || pmcp_principal_can_write(&p);
  pmcp_principal_dispose(&p);
  return ok;
}

int mcp_auth_install(mcp_auth *a, pmcp_server *srv)
{
  a->srv = srv;
  return pmcp_server_set_tool_filter(srv, filter, a, NULL);
}

typedef struct write_tool {
  mcp_auth *a;
  char *name, *action;
  pmcp_tool_fn handler;
  void *ud;
  void (*ud_free)(void *ud);
} write_tool;

static void write_tool_free(void *ud)
{
  write_tool *w = ud;
  if (!w)
    return;
  if (w->ud_free)
    w->ud_free(w->ud);
  free(w->name);
  free(w->action);
  free(w);
}

/* The call's arguments as audit details (pmcp_audit_add masks the values of
 * secret-looking names and credentials). */
static void audit_arguments(pmcp_buf *d, pmcp_call *call)
{
  const char *text = NULL;
  pmcp_buf_puts(d, pmcp_arg_json(call, NULL, &text) == 0 && text && *text == '{' ? text : "{}");
}

static int write_handler(pmcp_call *call, void *ud)
{
  write_tool *w = ud;
  if (!w->a)
    return w->handler(call, w->ud);
  pmcp_principal p = PMCP_PRINCIPAL_INIT;
  char msg[256];
  /* The filter already hides the tool; this is the second wall, with the
   * principal as of this call and its role in the workspace the call acts
   * in (the filter only knows the connection's own). */
  int prc = mcp_auth_call_principal(call, w->a, &p, msg, sizeof msg);
  if (prc != 0) {
    pmcp_principal_dispose(&p);
    pmcp_result_errorf(call, "%s", msg);
    return 0;
  }
  if (!pmcp_principal_can_write(&p)) {
    pmcp_result_errorf(call, "this connection may not use write tools in workspace '%s'"
                       " (it needs write access and the editor role there)", p.workspace);
    pmcp_principal_dispose(&p);
    return 0;
  }
  int rc = w->handler(call, w->ud);
  /* A tool that answered with an error result did not do its write. */
  int failed = rc != 0 || pmcp_result_is_error(call);
  pmcp_buf d = PMCP_BUF_INIT;
  pmcp_buf_puts(&d, "{\"tool\":");
  pmcp_buf_json_string(&d, w->name, strlen(w->name));
  pmcp_buf_printf(&d, ",\"status\":\"%s\",\"arguments\":", failed ? "failed" : "done");
  audit_arguments(&d, call);
  pmcp_buf_putc(&d, '}');
  if (d.ptr) {
    pthread_mutex_lock(&w->a->mu);
    pmcp_tenant t = {p.tenant_id, 0, 0};
    pmcp_audit_add(w->a->st, t, p.workspace, p.actor, w->action, "mcp", d.ptr);
    pthread_mutex_unlock(&w->a->mu);
  }
  pmcp_buf_dispose(&d);
  pmcp_principal_dispose(&p);
  return rc;
}

int mcp_auth_add_write_tool(mcp_auth *a, pmcp_server *srv, const pmcp_tool_def *def,
                            const char *action)
{
  write_tool *w = calloc(1, sizeof *w);
  if (!w || !(w->name = strdup(def->name ? def->name : "")) ||
      !(w->action = strdup(action ? action : "tool.write"))) {
    if (def->ud_free)
      def->ud_free(def->ud);
    if (w) {
      free(w->name);
      free(w);
    }
    return PMCP_ENOMEM;
  }
  w->a = a;
  w->handler = def->handler;
  w->ud = def->ud;
  w->ud_free = def->ud_free;
  pmcp_tool_def d = *def;
  if (d.read_only == PMCP_HINT_TRUE)
    d.read_only = PMCP_HINT_FALSE;
  d.handler = write_handler;
  d.ud = w;
  d.ud_free = write_tool_free;
  return pmcp_server_add_tool(srv, &d);
}

/* ---- the workspace of each tool call ---------------------------------------- */

/* The principal as it acts in @p asked (NULL or "": its own workspace):
 * the membership and its role are read now, on every call, so a removed
 * membership or a changed role takes effect at once. One message for a
 * workspace that does not exist, one of another tenant, and one the
 * person is not in. */
static int principal_in(mcp_auth *a, pmcp_call *call, const char *asked,
                        pmcp_principal *p, char *msg, size_t msg_size)
{
  /* The holder was refreshed from the store by this request's
   * authentication: a revoked key, a disabled person or a removed role of
   * the default workspace already answered 401. */
  if (mcp_auth_principal(pmcp_call_session_ud(call), p) != 0) {
    snprintf(msg, msg_size, "authentication required");
    return PMCP_EDENIED;
  }
  if (asked && *asked && strcmp(asked, p->workspace) != 0) {
    if (p->kind != PMCP_PRINCIPAL_CONNECTION) {
      snprintf(msg, msg_size, "an API key acts only in its own workspace ('%s'): drop the"
               " workspace argument, or use a key of the other workspace", p->workspace);
      return PMCP_EDENIED;
    }
    pthread_mutex_lock(&a->mu);
    int rc = pmcp_principal_in_workspace(a->st, p, asked);
    pthread_mutex_unlock(&a->mu);
    if (rc != 0) {
      snprintf(msg, msg_size, "%s", rc == PMCP_EDENIED
               ? "no such workspace, or no access to it"
               : "the workspace could not be checked (store unavailable): try again");
      return rc;
    }
  }
  return 0;
}

int mcp_auth_scope(pmcp_call *call, const char *asked, pmcp_call_scope *out, char *msg,
                   size_t msg_size, void *ud)
{
  mcp_auth *a = ud;
  pmcp_principal p = PMCP_PRINCIPAL_INIT;
  int rc = principal_in(a, call, asked, &p, msg, msg_size);
  if (rc) {
    pmcp_principal_dispose(&p);
    return rc;
  }
  char who[72];
  if (p.kind == PMCP_PRINCIPAL_CONNECTION)
    snprintf(who, sizeof who, "user:%.60s", p.user_id[0] ? p.user_id : p.id);
  else
    snprintf(who, sizeof who, "key:%.60s", p.id);
  if (pmcp_call_scope_set_workspace(out, p.workspace) ||
      pmcp_call_scope_set_role(out, pmcp_role_name(p.role)) ||
      pmcp_call_scope_set_principal(out, who))
    rc = PMCP_ENOMEM;
  pmcp_principal_dispose(&p);
  return rc;
}

int mcp_auth_call_principal(pmcp_call *call, mcp_auth *a, pmcp_principal *out,
                            char *msg, size_t msg_size)
{
  const char *asked = NULL;
  if (pmcp_arg_string(call, "workspace", &asked, NULL) != 0)
    asked = NULL;
  return principal_in(a, call, asked, out, msg, msg_size);
}

int mcp_auth_scope_list(pmcp_call *call, pmcp_buf *out, void *ud)
{
  mcp_auth *a = ud;
  pmcp_principal p = PMCP_PRINCIPAL_INIT;
  if (mcp_auth_principal(pmcp_call_session_ud(call), &p) != 0)
    return PMCP_EDENIED;
  pthread_mutex_lock(&a->mu);
  int rc = pmcp_principal_workspaces(a->st, &p, out);
  pthread_mutex_unlock(&a->mu);
  pmcp_principal_dispose(&p);
  return rc;
}
