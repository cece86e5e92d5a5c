/* SPDX-License-Identifier: MIT */
/* probe-mcp-http: serves libprobemcp over MCP Streamable HTTP. The
 * transport lives in transport.c (shared with probe-mcp-everything --http);
 * this file only reads the command line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <probemcp/probemcp.h>

#include "auth_mcp.h"
#include "oauth.h"
#include <probemcp/http.h>

static const char usage[] =
  "Usage: probe-mcp-http [--listen HOST:PORT] [--store S] [--tenant T]\n"
  "                      [--toolset research|tracking|all] [options]\n"
  "\n"
  "Serves MCP over Streamable HTTP (POST/GET/DELETE on one endpoint).\n"
  "\n"
  "  --listen HOST:PORT     address to listen on (default 127.0.0.1:8080;\n"
  "                         port 0 picks a free port; the URL is printed)\n"
  "  --endpoint PATH        MCP endpoint path (default /mcp)\n"
  "  --stateless            no sessions: every POST is self-contained\n"
  "  --allow-host NAME[:PORT]  accept this Host too, with any port or that\n"
  "                         one (repeatable; default: loopback names and the\n"
  "                         listening address with its port, and the host\n"
  "                         and port of the public base URL)\n"
  "  --allow-origin ORIGIN  accept this exact Origin too (repeatable)\n"
  "  --trusted-proxy ADDR   believe Forwarded / X-Forwarded-* only from this\n"
  "                         proxy address (repeatable; default: from none)\n"
  "  --max-body BYTES       largest request body (default 4194304)\n"
  "  --max-connections N    open connections (default 1024)\n"
  "  --max-connections-per-client N  from one client address (default a\n"
  "                         quarter of --max-connections)\n"
  "  --max-sessions N       live sessions (default 1000)\n"
  "  --session-idle SECS    end sessions idle this long (default 1800)\n"
  "  --header-timeout SECS  time to send request headers (default 10)\n"
  "  --body-timeout SECS    time to send the body after them (default 30)\n"
  "  --idle-timeout SECS    keep-alive between requests (default 60)\n"
  "  --shutdown-timeout SECS  wait for running calls on SIGTERM (default 30)\n"
  "  --handler-threads N    threads running tool handlers off the event\n"
  "                         loop (default 1, at most 16; 0: on the loop)\n"
  "  --max-queued N         calls that may wait for a handler thread; more\n"
  "                         are refused with 503 + Retry-After (default 256\n"
  "                         per thread). Blocking tools also wait for the\n"
  "                         engine's workers, at most $PROBE_MCP_QUEUE_MAX\n"
  "                         (default 64 per worker) before a retryable\n"
  "                         'Server busy' error; open-web work (find_papers)\n"
  "                         gets at most $PROBE_MCP_WEB_CAPACITY of them,\n"
  "                         one principal --workers-per-caller of them\n"
  "  --workers-per-caller N  workers one principal runs at once, its other\n"
  "                         calls waiting (default $PROBE_MCP_WORKERS_PER_CALLER)\n"
  "  --replay-buffer BYTES  SSE events kept per session for resumption\n"
  "                         (default 1048576)\n"
  "  --store S              the store to serve, read-only (SQLite path or\n"
  "                         postgresql:// URL; default $PROBE_STORE, else the\n"
  "                         user's store if it exists, else no tools)\n"
  "  --tenant T             tenant to serve (default: default)\n"
  "  --toolset NAME         research, tracking or all (default research)\n"
  "  --papers-url URL       remote papers provider for find_papers (default\n"
  "                         $PROBE_PAPERS_URL; none: the store's papers index)\n"
  "  --public-base-url URL  the service's public origin (default\n"
  "                         $PUBLIC_BASE_URL; else from Host / forwarded\n"
  "                         headers): the 401's resource_metadata URL\n"
  "  --insecure-no-auth     serve without authentication (local development\n"
  "                         only: refused unless listening on loopback)\n"
  "  --memory-tasks         keep tasks in memory only; by default they go to\n"
  "                         the store's tasks table (shared by the replicas\n"
  "                         of one database, kept across restarts)\n"
  "\n"
  "Authentication is on by default: every request to the endpoint needs\n"
  "Authorization: Bearer with a workspace API key (probe key create) or an\n"
  "OAuth access token; the store must exist and is opened read-write for\n"
  "the service tables (keys, users, audit), read-only for the tools.\n"
  "  --help                 this text\n"
  "  --version              print the version\n";

static int parse_u(const char *opt, const char *v, unsigned long max,
                   unsigned long *out)
{
  char *end;
  errno = 0;
  if (!v || !*v || *v == '-') {
    fprintf(stderr, "probe-mcp-http: %s needs a non-negative number\n", opt);
    return -1;
  }
  unsigned long x = strtoul(v, &end, 10);
  if (*end || errno || x > max) {
    fprintf(stderr, "probe-mcp-http: %s: '%s' is not a number in 0..%lu\n",
            opt, v, max);
    return -1;
  }
  *out = x;
  return 0;
}

typedef struct serve_ctx {
  const char *store, *tenant, *toolset;
  pmcp_store *st;     /* must outlive the server: freed after the run */
  const char *papers_url;
  mcp_auth *auth;     /* NULL: --insecure-no-auth */
  int memory_tasks;   /* --memory-tasks */
  unsigned long caller_workers; /* --workers-per-caller; 0: not given */
} serve_ctx;

/* True for a listening address only this machine can reach. */
static int loopback_host(const char *h)
{
  return strncmp(h, "127.", 4) == 0 || strcmp(h, "::1") == 0 || strcmp(h, "[::1]") == 0 ||
         strcmp(h, "localhost") == 0;
}

/* Registers the toolset asked for, as probe-mcp-stdio does: the store is
 * opened read-only; with no store given and none found, the server serves
 * no tools rather than made-up ones. */
static int setup(pmcp_server *srv, void *ud)
{
  serve_ctx *x = ud;
  /* The service's capacity rules: a bounded wait for the engine's workers
   * (unless PROBE_MCP_QUEUE_MAX says otherwise) and text results cut at
   * 256 KiB. */
  if (!getenv("PROBE_MCP_QUEUE_MAX"))
    pmcp_server_set_queue_max(srv, 0);
  pmcp_server_set_text_max(srv, 256 * 1024);
  if (x->caller_workers)
    pmcp_server_set_caller_workers(srv, x->caller_workers);
  if (x->auth && mcp_auth_install(x->auth, srv) != 0) {
    fprintf(stderr, "probe-mcp-http: cannot install the tool filter\n");
    return -1;
  }
  pmcp_toolsets_options to = PMCP_TOOLSETS_OPTIONS_INIT;
  to.toolset = x->toolset;
  to.store = x->store;
  to.tenant = x->tenant;
  to.papers_url = x->papers_url;
  to.memory_tasks = x->memory_tasks;
  /* With authentication every call acts in its credential's workspace. */
  if (x->auth) {
    to.scope = mcp_auth_scope;
    to.scope_ud = x->auth;
    to.scope_list = mcp_auth_scope_list;
    to.task_owner = mcp_auth_task_owner; /* a task is its credential's */
  }
  pmcp_buf msg = PMCP_BUF_INIT;
  int rc = pmcp_toolsets_register(srv, &to, &x->st, &msg);
  if (msg.len)
    fprintf(stderr, "probe-mcp-http: %s\n", msg.ptr);
  pmcp_buf_dispose(&msg);
  return rc ? -1 : 0;
}

/* What the command line asks for; the arrays and base_host are borrowed
 * by the server's options, so they live as long as the run. */
typedef struct cmdline {
  pmcp_http_options o;
  char host[128];
  int port;
  const char *store, *tenant, *toolset, *papers_url, *public_base;
  int no_auth, memory_tasks;
  unsigned long caller_workers;
  const char *hosts[64], *origins[64], *proxies[16];
  size_t nh, no, np;
  char base_host[300];
} cmdline;

/* 1 when option @p a has its value @p v; else says so and returns 0. */
static int need(const char *a, const char *v)
{
  if (!v)
    fprintf(stderr, "probe-mcp-http: %s needs a value\n", a);
  return v != NULL;
}

/* A time in seconds into milliseconds; 0 s becomes 1 ms, never "none". */
static int seconds(const char *a, const char *v, unsigned *ms)
{
  unsigned long x;
  if (parse_u(a, v, 86400 * 365, &x) != 0)
    return -1;
  *ms = x ? (unsigned)(x * 1000) : 1;
  return 0;
}

/* The options that take a number: limits and timeouts. Returns 2 when
 * @p a is one (its value @p v taken), 0 when it is none of them, -1 on a
 * missing or bad value (reported). */
static int limit_option(cmdline *c, const char *a, const char *v)
{
  pmcp_http_options *o = &c->o;
  /* counts of at least 1, into an unsigned or a size_t */
  const struct {
    const char *name;
    unsigned long max;
    unsigned *u;
    size_t *z;
  } counts[] = {{"--max-body", 1ul << 30, NULL, &o->max_body},
                {"--max-connections", 1000000, &o->max_connections, NULL},
                {"--max-connections-per-client", 1000000, &o->max_connections_per_client, NULL},
                {"--max-sessions", 10000000, &o->max_sessions, NULL},
                {"--max-queued", 1000000, &o->max_queued, NULL},
                {"--replay-buffer", 1ul << 30, NULL, &o->replay_bytes}};
  const struct {
    const char *name;
    unsigned *ms;
  } secs[] = {{"--session-idle", &o->session_idle_ms},
              {"--header-timeout", &o->header_timeout_ms},
              {"--body-timeout", &o->body_timeout_ms},
              {"--idle-timeout", &o->idle_timeout_ms},
              {"--shutdown-timeout", &o->shutdown_timeout_ms}};
  unsigned long x;
  for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
    if (strcmp(a, counts[k].name))
      continue;
    if (!need(a, v) || parse_u(a, v, counts[k].max, &x) != 0 || x == 0)
      return -1;
    if (counts[k].u)
      *counts[k].u = (unsigned)x;
    else
      *counts[k].z = x;
    return 2;
  }
  for (size_t k = 0; k < sizeof secs / sizeof *secs; k++)
    if (!strcmp(a, secs[k].name))
      return need(a, v) && seconds(a, v, secs[k].ms) == 0 ? 2 : -1;
  if (!strcmp(a, "--handler-threads")) {
    if (!need(a, v) || parse_u(a, v, 16, &x) != 0)
      return -1;
    o->handler_threads = (unsigned)x;
    o->handlers_inline = x == 0;
    return 2;
  }
  if (!strcmp(a, "--workers-per-caller")) {
    if (!need(a, v) || parse_u(a, v, 1000000, &x) != 0)
      return -1;
    if (x == 0) {
      fprintf(stderr, "probe-mcp-http: --workers-per-caller must be at least 1\n");
      return -1;
    }
    c->caller_workers = x;
    return 2;
  }
  return 0;
}

/* Appends @p v to a repeatable option's list of at most @p max. */
static int listed(const char *a, const char *v, const char **list, size_t *n, size_t max)
{
  if (*n == max) {
    fprintf(stderr, "probe-mcp-http: at most %zu %s\n", max, a);
    return -1;
  }
  list[(*n)++] = v;
  return 2;
}

/* The options that take a name or an address. Returns 2 when @p a is one
 * (its value @p v taken), 0 when it is none of them, -1 on a missing or
 * bad value (reported). */
static int value_option(cmdline *c, const char *a, const char *v)
{
  enum { LISTEN, ENDPOINT, ALLOW_HOST, TRUSTED_PROXY, ALLOW_ORIGIN, TOOLSET, N_CHECKED };
  static const char *const checked[N_CHECKED] = {[LISTEN] = "--listen",
                                                 [ENDPOINT] = "--endpoint",
                                                 [ALLOW_HOST] = "--allow-host",
                                                 [TRUSTED_PROXY] = "--trusted-proxy",
                                                 [ALLOW_ORIGIN] = "--allow-origin",
                                                 [TOOLSET] = "--toolset"};
  /* kept as given */
  const char **plain = !strcmp(a, "--store")             ? &c->store
                       : !strcmp(a, "--tenant")          ? &c->tenant
                       : !strcmp(a, "--public-base-url") ? &c->public_base
                       : !strcmp(a, "--papers-url")      ? &c->papers_url
                                                         : NULL;
  int k = 0;
  while (!plain && k < N_CHECKED && strcmp(a, checked[k]))
    k++;
  if (!plain && k == N_CHECKED)
    return 0;
  if (!need(a, v))
    return -1;
  if (plain) {
    *plain = v;
    return 2;
  }
  char err[200];
  switch (k) {
  case LISTEN:
    if (pmcp_http_parse_listen(v, c->host, sizeof c->host, &c->port, err, sizeof err) != 0) {
      fprintf(stderr, "probe-mcp-http: --listen: %s\n", err);
      return -1;
    }
    return 2;
  case ENDPOINT:
    if (v[0] != '/') {
      fprintf(stderr, "probe-mcp-http: --endpoint must start with '/'\n");
      return -1;
    }
    c->o.endpoint = v;
    return 2;
  case ALLOW_HOST: return listed(a, v, c->hosts, &c->nh, 64);
  case TRUSTED_PROXY: return listed(a, v, c->proxies, &c->np, 16);
  case ALLOW_ORIGIN: return listed(a, v, c->origins, &c->no, 64);
  default:
    if (strcmp(v, "research") && strcmp(v, "tracking") && strcmp(v, "all")) {
      fprintf(stderr, "probe-mcp-http: --toolset must be research, tracking or all\n");
      return -1;
    }
    c->toolset = v;
    return 2;
  }
}

/* Reads the command line into @p c. Returns -1 to go on serving, else
 * the exit status (0 after --help or --version, 2 on a usage error). */
static int parse_cmdline(cmdline *c, int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage, stdout);
      return 0;
    }
    if (!strcmp(a, "--version")) {
      printf("probe-mcp-http %s\n", pmcp_version());
      return 0;
    }
    int taken = limit_option(c, a, v);
    if (taken == 0)
      taken = value_option(c, a, v);
    if (taken == 0) {
      if (!strcmp(a, "--stateless"))
        c->o.stateless = 1;
      else if (!strcmp(a, "--insecure-no-auth"))
        c->no_auth = 1;
      else if (!strcmp(a, "--memory-tasks"))
        c->memory_tasks = 1;
      else {
        fprintf(stderr, "probe-mcp-http: unknown option '%s' (see --help)\n", a);
        return 2;
      }
      taken = 1;
    }
    if (taken < 0)
      return 2;
    i += taken - 1;
  }
  return -1;
}

/* The defaults that depend on other options, and the lists handed over. */
static void finish_options(cmdline *c)
{
  pmcp_http_options *o = &c->o;
  if (!o->max_queued)
    o->max_queued = 256 * (o->handler_threads ? o->handler_threads : 1);
  o->host = c->host;
  o->port = c->port;
  /* The public base URL's host and port are ours (a port mapping or a
   * proxy in front); one that is malformed is reported later. */
  if (c->public_base && *c->public_base && c->nh < 64 &&
      poauth_base_host(c->public_base, c->base_host, sizeof c->base_host) == 0)
    c->hosts[c->nh++] = c->base_host;
  o->allow_hosts = c->hosts;
  o->n_allow_hosts = c->nh;
  o->trusted_proxies = c->proxies;
  o->n_trusted_proxies = c->np;
  o->allow_origins = c->origins;
  o->n_allow_origins = c->no;
}

/* Opens the service's own read-write handle on the store (key last use,
 * audit; the tools get a read-only one in setup()), which also brings an
 * older store's schema up to date. 0, or -1 (reported). */
static int open_service_store(const char *store, pmcp_store **svc)
{
  int src = pmcp_store_open(svc, store, 0);
  if (src == 0)
    return 0;
  /* The hint only where there is no store to hold the keys: for an
   * unreachable server or a newer schema it would mislead. */
  fprintf(stderr, "probe-mcp-http: cannot open the store: %s%s\n",
          *svc ? pmcp_store_errmsg(*svc) : pmcp_strerror(src),
          src == PMCP_ENOTFOUND
              ? " (authentication needs the store that holds the API keys and users;"
                " create it with 'probe init', or use --insecure-no-auth on loopback for"
                " local development)"
          : src == PMCP_EREADONLY ? " (authentication writes to the store: API keys' last use,"
                                    " the audit log, OAuth grants)"
                                  : "");
  pmcp_store_free(*svc);
  *svc = NULL;
  return -1;
}

/* Authentication: the credential check on /mcp (API keys and OAuth access
 * tokens) and the OAuth server's routes, wired into @p c's options. On
 * failure (reported) everything opened here is closed again. 0, or -1. */
static int setup_auth(cmdline *c, serve_ctx *x, pmcp_store **svc, poauth_server **oauth)
{
  pmcp_http_options *o = &c->o;
  char why[600];
  if (open_service_store(c->store, svc) != 0)
    return -1;
  if (mcp_auth_new(&x->auth, *svc, c->tenant, c->public_base, o->endpoint, why, sizeof why) != 0) {
    fprintf(stderr, "probe-mcp-http: %s\n", why);
    goto fail;
  }
  /* The loop checks credentials on a handle of its own (auth_mcp.h). */
  pmcp_buf where = PMCP_BUF_INIT;
  int wrc = pmcp_store_resolve(&where, c->store);
  if (wrc == 0)
    wrc = mcp_auth_set_store(x->auth, where.ptr);
  pmcp_buf_dispose(&where);
  if (wrc != 0) {
    fprintf(stderr, "probe-mcp-http: %s\n", pmcp_strerror(wrc));
    goto fail;
  }
  o->auth = mcp_auth_http;
  o->auth_ud = x->auth;
  /* The OAuth 2.1 server and consent pages (/.well-known/..., /oauth/...)
   * keep their state in the store through a handle of their own; their
   * access tokens are one kind of /mcp credential. */
  if (poauth_service_open(oauth, c->store, o->endpoint, c->public_base, why, sizeof why) != 0) {
    fprintf(stderr, "probe-mcp-http: %s\n", why);
    goto fail;
  }
  pmcp_oauth_set_tenant((*oauth)->state, mcp_auth_tenant(x->auth).id);
  o->route_match = poauth_route_match;
  o->route_handle = poauth_route_handle;
  o->route_ud = *oauth;
  mcp_auth_set_token_resolver(x->auth, PMCP_OAUTH_AT_PREFIX, poauth_service_token, *oauth);
  return 0;
fail:
  mcp_auth_free(x->auth);
  x->auth = NULL;
  pmcp_store_free(*svc);
  *svc = NULL;
  return -1;
}

int main(int argc, char **argv)
{
  cmdline c = {.o = PMCP_HTTP_OPTIONS_INIT, .host = "127.0.0.1", .port = 8080};
  c.public_base = getenv("PUBLIC_BASE_URL");
  int rc = parse_cmdline(&c, argc, argv);
  if (rc >= 0)
    return rc;
  finish_options(&c);
  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  so.name = "probe-mcp-http";
  so.title = "probe-mcp";
  serve_ctx x = {c.store,      c.tenant, c.toolset,      NULL,
                 c.papers_url, NULL,     c.memory_tasks, c.caller_workers};
  pmcp_store *svc = NULL;
  poauth_server *oauth = NULL;
  if (c.no_auth && !loopback_host(c.host)) {
    fprintf(stderr,
            "probe-mcp-http: --insecure-no-auth is for local development and only"
            " listens on loopback (127.0.0.1, ::1), not on %s: drop it and use API keys"
            " (probe key create) or OAuth\n",
            c.host);
    return 2;
  }
  if (!c.no_auth && setup_auth(&c, &x, &svc, &oauth) != 0)
    return 1;
  rc = pmcp_http_run(&c.o, &so, setup, &x);
  pmcp_store_free(x.st);
  mcp_auth_free(x.auth);
  poauth_server_free(oauth);
  pmcp_store_free(svc);
  return rc;
}
