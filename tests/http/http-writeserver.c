/* SPDX-License-Identifier: MIT */
/* Test-only server (never installed): probe-mcp-http's authentication and
 * tool gating around a write tool, which the research toolsets do not
 * have. It serves, with authentication on, over the store given:
 *   whoami      read-only: the principal this call acts as (kind, tenant,
 *               workspace, role, access), re-read on every request
 *   delete_run  a write tool (destructiveHint): marks a run deleted in the
 *               principal's workspace; audited as run.delete
 * Test credentials besides API keys: --connection USER:WORKSPACE:ACCESS
 * inserts an OAuth connection row (as the consent page would) and prints
 * "connection <id>"; bearer "tst_<id>" then resolves to it, standing in
 * for the OAuth access tokens the oauth code issues. With --oauth it also
 * serves the real OAuth server and consent pages (oauth.h), whose
 * "pbm_at_" access tokens then reach the write tool.
 * --research also serves the research and tracking toolsets as
 * probe-mcp-http does (read-only store, every call scoped to the
 * principal's workspace by mcp_auth_scope). --hold adds, for the capacity
 * test, hold (blocking: waits until released), held (inline: how many
 * holds run and how many calls wait for a worker) and release (inline);
 * --workers N sizes the engine's pool. The service's queue bound applies
 * as in probe-mcp-http (PROBE_MCP_QUEUE_MAX, else 64 per worker). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <probemcp/probemcp.h>

#include "auth/auth.h"
#include "auth_mcp.h"
#include "core/workers.h"
#include "oauth.h"
#include "store/db.h"
#include <probemcp/http.h>

typedef struct ctx {
  pmcp_store *rw;            /* the tools' writes, under mu */
  pthread_mutex_t mu;
  mcp_auth *auth;
  const char *store;
  pmcp_store *ro;            /* --research: the toolsets' read-only handle */
  int research, hold;
  pthread_cond_t cond;       /* --hold: holds wait on it (under mu) */
  int running, released;
  pmcp_server *srv;
} ctx;

/* hold: runs on a worker until release (bounded: 120 s). */
static int hold(pmcp_call *call, void *ud)
{
  ctx *x = ud;
  pthread_mutex_lock(&x->mu);
  x->running++;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 120;
  while (!x->released && pthread_cond_timedwait(&x->cond, &x->mu, &until) == 0)
    ;
  x->running--;
  int ok = x->released;
  pthread_mutex_unlock(&x->mu);
  return ok ? pmcp_result_text(call, "released", 8) : pmcp_result_errorf(call, "never released");
}

static int held(pmcp_call *call, void *ud)
{
  ctx *x = ud;
  pthread_mutex_lock(&x->mu);
  int running = x->running;
  pthread_mutex_unlock(&x->mu);
  char out[80];
  snprintf(out, sizeof out, "{\"running\":%d,\"waiting\":%zu}", running,
           pmcp__workers_waiting(x->srv));
  return pmcp_result_text(call, out, strlen(out));
}

static int release(pmcp_call *call, void *ud)
{
  ctx *x = ud;
  pthread_mutex_lock(&x->mu);
  x->released = 1;
  pthread_cond_broadcast(&x->cond);
  pthread_mutex_unlock(&x->mu);
  return pmcp_result_text(call, "ok", 2);
}

static int add_simple(pmcp_server *srv, ctx *x, const char *name, pmcp_tool_fn fn,
                      unsigned flags)
{
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = name;
  d.description = name;
  d.read_only = PMCP_HINT_TRUE;
  d.flags = flags;
  d.handler = fn;
  d.ud = x;
  return pmcp_server_add_tool(srv, &d);
}

static int whoami(pmcp_call *call, void *ud)
{
  (void)ud;
  pmcp_principal p = PMCP_PRINCIPAL_INIT;
  if (mcp_auth_principal(pmcp_call_session_ud(call), &p) != 0)
    return pmcp_result_errorf(call, "no principal");
  char out[800];
  snprintf(out, sizeof out,
           "{\"kind\":\"%s\",\"id\":\"%s\",\"tenant\":\"%s\",\"workspace\":\"%s\","
           "\"role\":\"%s\",\"write\":%s,\"actor\":\"%s\"}",
           p.kind == PMCP_PRINCIPAL_KEY ? "key" : "connection", p.id, p.tenant, p.workspace,
           pmcp_role_name(p.role), pmcp_principal_can_write(&p) ? "true" : "false", p.actor);
  pmcp_principal_dispose(&p);
  return pmcp_result_text(call, out, strlen(out));
}

static int delete_run(pmcp_call *call, void *ud)
{
  ctx *x = ud;
  pmcp_principal p = PMCP_PRINCIPAL_INIT;
  const char *run;
  size_t len;
  char msg[256];
  if (pmcp_arg_string(call, "run", &run, &len) != 0)
    return pmcp_result_errorf(call, "bad call");
  if (mcp_auth_call_principal(call, x->auth, &p, msg, sizeof msg) != 0) {
    pmcp_principal_dispose(&p);
    return pmcp_result_errorf(call, "%s", msg);
  }
  pthread_mutex_lock(&x->mu);
  /* Writes act in the call's workspace (its `workspace` argument, else
   * the principal's): a run of another workspace is not found. */
  pmcp_tenant all = {p.tenant_id, 0, 0}, t;
  int rc = pmcp_store_scope(x->rw, all, p.workspace, &t);
  if (rc == 0)
    rc = pmcp_store_set_deleted(x->rw, t, run, 1);
  pthread_mutex_unlock(&x->mu);
  pmcp_principal_dispose(&p);
  if (rc == PMCP_ENOTFOUND)
    return pmcp_result_errorf(call, "no run %s", run);
  if (rc)
    return pmcp_result_errorf(call, "cannot delete %s", run);
  return pmcp_result_text(call, "deleted", 7);
}

static int token_fn(void *ud, const char *token, size_t len, char conn_id[64])
{
  (void)ud;
  if (len < 5 || len - 4 >= 64)
    return 0;
  memcpy(conn_id, token + 4, len - 4);
  conn_id[len - 4] = '\0';
  return 1;
}

static int setup(pmcp_server *srv, void *ud)
{
  ctx *x = ud;
  x->srv = srv;
  if (mcp_auth_install(x->auth, srv) != 0)
    return -1;
  if (!getenv("PROBE_MCP_QUEUE_MAX"))
    pmcp_server_set_queue_max(srv, 0);
  if (x->hold && (add_simple(srv, x, "hold", hold, PMCP_TOOL_BLOCKING) != 0 ||
                  add_simple(srv, x, "held", held, 0) != 0 ||
                  add_simple(srv, x, "release", release, 0) != 0))
    return -1;
  if (x->research) {
    if (pmcp_store_open(&x->ro, x->store, PMCP_STORE_READONLY) != 0)
      return -1;
    pmcp_research_options ro = PMCP_RESEARCH_OPTIONS_INIT;
    ro.scope = mcp_auth_scope;
    ro.scope_ud = x->auth;
    pmcp_tracking_options to = PMCP_TRACKING_OPTIONS_INIT;
    to.scope = mcp_auth_scope;
    to.scope_ud = x->auth;
    to.scope_list = mcp_auth_scope_list;
    if (pmcp_research_register(srv, x->ro, &ro) != 0 ||
        pmcp_tracking_register(srv, x->ro, &to) != 0)
      return -1;
  }
  pmcp_tool_def w = PMCP_TOOL_DEF_INIT;
  w.name = "whoami";
  w.description = "Who this connection acts as.";
  w.read_only = PMCP_HINT_TRUE;
  w.handler = whoami;
  if (pmcp_server_add_tool(srv, &w) != 0)
    return -1;
  static const pmcp_arg_spec args[] = {
    {"run", PMCP_T_STRING, 1, "the run to delete (run:ID)", 0, 0, 0, 0, NULL, NULL},
    {"workspace", PMCP_T_STRING, 0, "the workspace to act in (default: the connection's)",
     0, 0, 0, 0, NULL, NULL}};
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = "delete_run";
  d.description = "Marks a run deleted.";
  d.args = args;
  d.n_args = 2;
  d.read_only = PMCP_HINT_FALSE;
  d.destructive = PMCP_HINT_TRUE;
  d.handler = delete_run;
  d.ud = x;
  return mcp_auth_add_write_tool(x->auth, srv, &d, "run.delete");
}

static int add_connection(pmcp_store *st, const char *spec)
{
  char user[128], ws[128], access[16];
  if (sscanf(spec, "%127[^:]:%127[^:]:%15s", user, ws, access) != 3)
    return -1;
  pmcp_tenant t;
  if (pmcp_store_tenant(st, NULL, 0, &t) != 0)
    return -1;
  pmcp__db_res *r = NULL;
  const char *pu[] = {user};
  if (pmcp__db_query(st, "SELECT id FROM users WHERE name = $1", 1, pu, &r) != 0 ||
      pmcp__db_nrows(r) != 1) {
    pmcp__db_res_free(r);
    return -1;
  }
  char id[40], tid[24], uid[64];
  snprintf(uid, sizeof uid, "%s", pmcp__db_get(r, 0, 0));
  pmcp__db_res_free(r);
  pmcp__auth_new_id(id, sizeof id, "conn");
  snprintf(tid, sizeof tid, "%lld", (long long)t.id);
  const char *p[] = {id, uid, tid, ws, access};
  if (pmcp__db_exec(st, "INSERT INTO mcp_connections(id, user_id, client_id, tenant_id,"
                        " workspace, access, created) VALUES($1, $2, 'test-client', $3, $4,"
                        " $5, 0)", 5, p, NULL) != 0)
    return -1;
  printf("connection %s\n", id);
  return 0;
}

int main(int argc, char **argv)
{
  const char *store = NULL, *listen = "127.0.0.1:0";
  const char *conns[16];
  int nconn = 0, with_oauth = 0, research = 0, hold_tools = 0;
  unsigned workers = 0, max_principal = 0;
  for (int i = 1; i < argc; i += 2) {
    if (!strcmp(argv[i], "--oauth")) {
      with_oauth = 1;
      i--;
    } else if (!strcmp(argv[i], "--research")) {
      research = 1;
      i--;
    } else if (!strcmp(argv[i], "--hold")) {
      hold_tools = 1;
      i--;
    } else if (i + 1 >= argc) {
      fprintf(stderr, "http-writeserver: %s needs a value\n", argv[i]);
      return 2;
    } else if (!strcmp(argv[i], "--store"))
      store = argv[i + 1];
    else if (!strcmp(argv[i], "--listen"))
      listen = argv[i + 1];
    else if (!strcmp(argv[i], "--workers"))
      workers = (unsigned)atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--max-inflight-principal"))
      max_principal = (unsigned)atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--connection") && nconn < 16)
      conns[nconn++] = argv[i + 1];
    else {
      fprintf(stderr, "http-writeserver: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  char host[128], err[200];
  int port;
  if (!store || pmcp_http_parse_listen(listen, host, sizeof host, &port, err, sizeof err)) {
    fprintf(stderr, "usage: http-writeserver --store S [--listen H:P] [--connection U:W:A]"
            " [--oauth] [--research] [--hold] [--workers N] [--max-inflight-principal N]\n");
    return 2;
  }
  ctx x = {0};
  pthread_mutex_init(&x.mu, NULL);
  pthread_cond_init(&x.cond, NULL);
  x.store = store;
  x.research = research;
  x.hold = hold_tools;
  pmcp_store *svc = NULL;
  char why[300];
  if (pmcp_store_open(&svc, store, 0) || pmcp_store_open(&x.rw, store, 0) ||
      mcp_auth_new(&x.auth, svc, NULL, NULL, "/mcp", why, sizeof why) ||
      (store && mcp_auth_set_store(x.auth, store))) {
    fprintf(stderr, "http-writeserver: cannot start: %s\n", pmcp_store_errmsg(svc));
    return 1;
  }
  for (int i = 0; i < nconn; i++)
    if (add_connection(svc, conns[i]) != 0) {
      fprintf(stderr, "http-writeserver: bad --connection %s\n", conns[i]);
      return 1;
    }
  fflush(stdout);
  pmcp_http_options o = PMCP_HTTP_OPTIONS_INIT;
  poauth_server *oauth = NULL;
  if (with_oauth) {
    if (poauth_service_open(&oauth, store, "/mcp", NULL, why, sizeof why) != 0) {
      fprintf(stderr, "http-writeserver: %s\n", why);
      return 1;
    }
    o.route_match = poauth_route_match;
    o.route_handle = poauth_route_handle;
    o.route_ud = oauth;
    mcp_auth_set_token_resolver(x.auth, PMCP_OAUTH_AT_PREFIX, poauth_service_token, oauth);
  } else {
    mcp_auth_set_token_resolver(x.auth, "tst_", token_fn, NULL);
  }
  o.host = host;
  o.port = port;
  o.max_inflight_principal = max_principal;
  o.auth = mcp_auth_http;
  o.auth_ud = x.auth;
  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  so.name = "http-writeserver";
  so.server_version = "1.0.0";
  so.workers = workers;
  int rc = pmcp_http_run(&o, &so, setup, &x);
  pmcp_store_free(x.ro);
  pthread_cond_destroy(&x.cond);
  mcp_auth_free(x.auth);
  poauth_server_free(oauth);
  pmcp_store_free(x.rw);
  pmcp_store_free(svc);
  pthread_mutex_destroy(&x.mu);
  return rc;
}
