/* SPDX-License-Identifier: MIT */
/* The transport object: options, listening socket, the queue that carries
 * the engine's output from any thread to the loop, signals and the
 * graceful shutdown. */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static char *dupstr(const char *s)
{
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d)
    memcpy(d, s, n);
  return d;
}

static int add_host(pmcp_http *h, const char *name, long port)
{
  for (size_t i = 0; i < h->n_allow_hosts; i++)
    if (strcmp(h->allow_hosts[i], name) == 0 && h->allow_ports[i] == port)
      return 0;
  char **v = realloc(h->allow_hosts, (h->n_allow_hosts + 1) * sizeof *v);
  if (!v)
    return -1;
  h->allow_hosts = v;
  long *pv = realloc(h->allow_ports, (h->n_allow_hosts + 1) * sizeof *pv);
  if (!pv)
    return -1;
  h->allow_ports = pv;
  char *d = dupstr(name);
  if (!d)
    return -1;
  for (char *p = d; *p; p++)
    if (*p >= 'A' && *p <= 'Z')
      *p = (char)(*p - 'A' + 'a');
  h->allow_ports[h->n_allow_hosts] = port;
  h->allow_hosts[h->n_allow_hosts++] = d;
  return 0;
}

/* A configured Host: NAME (any port) or NAME:PORT (that port only). */
static int add_configured_host(pmcp_http *h, const char *spec, char *err, size_t errsize)
{
  char name[256];
  size_t n = strlen(spec);
  long port = phttp_host_port(spec, n, PHTTP_ANY_PORT);
  if (phttp_host_name(spec, n, name, sizeof name) != 0 || port < 0) {
    snprintf(err, errsize, "allowed host '%.100s': expected NAME or NAME:PORT (PORT in 1..65535)",
             spec);
    return PMCP_EINVAL;
  }
  if (add_host(h, name, port) != 0) {
    snprintf(err, errsize, "out of memory");
    return PMCP_ENOMEM;
  }
  return 0;
}

int pmcp_http_parse_listen(const char *spec, char *host, size_t hostsize,
                           int *port, char *err, size_t errsize)
{
  const char *colon;
  const char *h0 = spec, *h1;
  if (!spec || !*spec) {
    snprintf(err, errsize, "empty listen address");
    return -1;
  }
  if (spec[0] == '[') {
    const char *rb = strchr(spec, ']');
    if (!rb || rb[1] != ':') {
      snprintf(err, errsize, "listen address '%s': expected [IPV6]:PORT", spec);
      return -1;
    }
    h0 = spec + 1;
    h1 = rb;
    colon = rb + 1;
  } else {
    colon = strrchr(spec, ':');
    if (!colon) {
      h0 = h1 = spec;
      colon = spec - 1; /* bare PORT */
    } else {
      h1 = colon;
    }
  }
  const char *p = colon + 1;
  char *end;
  errno = 0;
  long v = strtol(p, &end, 10);
  if (!*p || *end || errno || v < 0 || v > 65535) {
    snprintf(err, errsize, "listen address '%s': the port must be 0-65535", spec);
    return -1;
  }
  size_t n = (size_t)(h1 - h0);
  if (n == 0) {
    snprintf(host, hostsize, "127.0.0.1");
  } else if (n >= hostsize) {
    snprintf(err, errsize, "listen address '%s': host too long", spec);
    return -1;
  } else {
    memcpy(host, h0, n);
    host[n] = '\0';
  }
  if (strcmp(host, "localhost") == 0)
    snprintf(host, hostsize, "127.0.0.1");
  struct in_addr a4;
  struct in6_addr a6;
  if (inet_pton(AF_INET, host, &a4) != 1 && inet_pton(AF_INET6, host, &a6) != 1) {
    snprintf(err, errsize, "listen address '%s': the host must be an IP address or localhost", spec);
    return -1;
  }
  *port = (int)v;
  return 0;
}

static void on_connection(uv_stream_t *server, int status)
{
  pmcp_http *h = server->data;
  if (status < 0)
    return;
  phttp_conn_accept(h);
}

static void on_async(uv_async_t *a)
{
  phttp_drain_queue(a->data);
}

void phttp_drain_queue(pmcp_http *h)
{
  pthread_mutex_lock(&h->qlock);
  phttp_qmsg *m = h->qhead;
  h->qhead = h->qtail = NULL;
  pthread_mutex_unlock(&h->qlock);
  while (m) {
    phttp_qmsg *next = m->next;
    phttp_deliver(h, m);
    free(m);
    m = next;
  }
}

void pmcp_http_sink(const pmcp_out *msg, void *ud)
{
  pmcp_http *h = ud;
  const char *sess = msg->session ? msg->session : "";
  size_t sl = strlen(sess) + 1;
  size_t rl = msg->related_id ? strlen(msg->related_id) + 1 : 0;
  size_t dl = msg->data ? msg->len : 0;
  phttp_qmsg *m = malloc(sizeof *m + sl + rl + dl + 1);
  if (!m)
    return; /* the client sees a stream without its answer; nothing else to do */
  m->next = NULL;
  m->kind = msg->kind;
  m->final = msg->final;
  m->http_status = msg->http_status;
  m->session = m->buf;
  memcpy(m->session, sess, sl);
  m->related = NULL;
  if (rl) {
    m->related = m->buf + sl;
    memcpy(m->related, msg->related_id, rl);
  }
  m->data = NULL;
  m->len = dl;
  if (msg->data) {
    m->data = m->buf + sl + rl;
    memcpy(m->data, msg->data, dl);
    m->data[dl] = '\0';
  }
  pthread_mutex_lock(&h->qlock);
  if (h->qclosed) {
    pthread_mutex_unlock(&h->qlock);
    free(m);
    return;
  }
  if (h->qtail)
    h->qtail->next = m;
  else
    h->qhead = m;
  h->qtail = m;
  /* On the loop thread the caller drains right after pmcp_server_handle()
   * returns, and on a pool thread work_done() does; only other threads
   * (the engine's workers) need to wake the loop. */
  if (!phttp_in_work &&
      (!h->serving || !pthread_equal(pthread_self(), h->loop_thread)))
    uv_async_send(&h->async);
  pthread_mutex_unlock(&h->qlock);
}

static void on_sweep(uv_timer_t *t)
{
  phttp_sweep_sessions(t->data);
}

int pmcp_http_new(pmcp_http **out, const pmcp_http_options *opts,
                  char *err, size_t errsize)
{
  if (!out || !opts) {
    snprintf(err, errsize, "no transport or no options given");
    return PMCP_EINVAL;
  }
  *out = NULL;
  if (opts->version < 1 || opts->version > PMCP_HTTP_OPTIONS_VERSION) {
    snprintf(err, errsize, "unknown HTTP options version %u (this library knows 1 to %u)",
             opts->version, (unsigned)PMCP_HTTP_OPTIONS_VERSION);
    return PMCP_EINVAL;
  }
  pmcp_http *h = calloc(1, sizeof *h);
  if (!h) {
    snprintf(err, errsize, "out of memory");
    return PMCP_ENOMEM;
  }
  h->o = *opts;
  pmcp_http_options *o = &h->o;
  if (!o->max_body) o->max_body = 4u << 20;
  if (!o->max_header) o->max_header = 16u << 10;
  if (!o->max_connections) o->max_connections = 1024;
  if (!o->max_connections_per_client)
    o->max_connections_per_client =
      o->max_connections >= 4 ? o->max_connections / 4 : 1;
  if (!o->max_sessions) o->max_sessions = 1000;
  if (!o->session_idle_ms) o->session_idle_ms = 30u * 60 * 1000;
  if (!o->header_timeout_ms) o->header_timeout_ms = 10000;
  if (!o->body_timeout_ms) o->body_timeout_ms = 30000;
  if (!o->idle_timeout_ms) o->idle_timeout_ms = 60000;
  if (!o->shutdown_timeout_ms) o->shutdown_timeout_ms = 30000;
  if (!o->sse_retry_ms) o->sse_retry_ms = 1000;
  if (!o->sse_ping_ms) o->sse_ping_ms = 25000;
  if (!o->replay_bytes) o->replay_bytes = 1u << 20;
  if (!o->max_inflight) o->max_inflight = 256;
  if (!o->max_inflight_principal) o->max_inflight_principal = 4 * o->max_inflight;
  if (!o->max_inflight_total) o->max_inflight_total = 4096;
  if (!o->announce) o->announce = stdout;
  h->host = dupstr(o->host ? o->host : "127.0.0.1");
  h->endpoint = dupstr(o->endpoint ? o->endpoint : "/mcp");
  pthread_mutex_init(&h->qlock, NULL);
  if (!h->host || !h->endpoint || h->endpoint[0] != '/') {
    snprintf(err, errsize, "the endpoint must start with '/'");
    pmcp_http_free(h);
    return PMCP_EINVAL;
  }
  /* Default allow-list: the loopback names, and the listening literal. */
  int v6 = strchr(h->host, ':') != NULL;
  char lit[80];
  snprintf(lit, sizeof lit, v6 ? "[%s]" : "%s", h->host);
  /* They are this machine's names for us only with our port: another
   * port is another program (or a mapping nobody configured), and a base
   * URL made from such a Host would point there. */
  int rc = add_host(h, "localhost", PHTTP_LISTEN_PORT) |
           add_host(h, "127.0.0.1", PHTTP_LISTEN_PORT) |
           add_host(h, "[::1]", PHTTP_LISTEN_PORT) | add_host(h, lit, PHTTP_LISTEN_PORT);
  for (size_t i = 0; !rc && i < o->n_allow_hosts; i++) {
    int crc = add_configured_host(h, o->allow_hosts[i], err, errsize);
    if (crc) {
      pmcp_http_free(h);
      return crc;
    }
  }
  if (o->n_allow_origins) {
    h->allow_origins = calloc(o->n_allow_origins, sizeof *h->allow_origins);
    if (!h->allow_origins)
      rc = -1;
    for (size_t i = 0; !rc && i < o->n_allow_origins; i++) {
      h->allow_origins[i] = dupstr(o->allow_origins[i]);
      if (!h->allow_origins[i])
        rc = -1;
      h->n_allow_origins++;
    }
  }
  if (rc || phttp_sessions_init(h) != 0) {
    snprintf(err, errsize, "out of memory");
    pmcp_http_free(h);
    return PMCP_ENOMEM;
  }
  if (uv_loop_init(&h->loop) != 0) {
    snprintf(err, errsize, "cannot create the event loop");
    pmcp_http_free(h);
    return PMCP_EIO;
  }
  h->loop_ok = 1;
  uv_async_init(&h->loop, &h->async, on_async);
  h->async.data = h;
  uv_timer_init(&h->loop, &h->sweep);
  h->sweep.data = h;
  uv_timer_init(&h->loop, &h->shutdown_timer);
  h->shutdown_timer.data = h;
  uv_signal_init(&h->loop, &h->sigterm);
  uv_signal_init(&h->loop, &h->sigint);
  h->sigterm.data = h->sigint.data = h;
  if (o->testing)
    return *out = h, 0;
  struct sockaddr_storage ss;
  if (v6)
    rc = uv_ip6_addr(h->host, o->port, (struct sockaddr_in6 *)&ss);
  else
    rc = uv_ip4_addr(h->host, o->port, (struct sockaddr_in *)&ss);
  if (rc == 0)
    rc = uv_tcp_init(&h->loop, &h->listener);
  if (rc == 0) {
    h->listening = 1;
    h->listener.data = h;
    rc = uv_tcp_bind(&h->listener, (struct sockaddr *)&ss, 0);
  }
  if (rc == 0)
    rc = uv_listen((uv_stream_t *)&h->listener, 511, on_connection);
  if (rc != 0) {
    snprintf(err, errsize, "cannot listen on %s:%d: %s", h->host, o->port,
             uv_strerror(rc));
    pmcp_http_free(h);
    return PMCP_EIO;
  }
  struct sockaddr_storage bound;
  int len = sizeof bound;
  uv_tcp_getsockname(&h->listener, (struct sockaddr *)&bound, &len);
  h->port = ntohs(bound.ss_family == AF_INET6
                      ? ((struct sockaddr_in6 *)&bound)->sin6_port
                      : ((struct sockaddr_in *)&bound)->sin_port);
  *out = h;
  return 0;
}

int pmcp_http_port(const pmcp_http *h)
{
  return h->port;
}

static void on_closed_handle(uv_handle_t *hd) { (void)hd; }

/* Called whenever something finished: once stopping and idle, close all. */
void phttp_maybe_finish_shutdown(pmcp_http *h)
{
  if (!h->stopping || h->inflight > 0 || h->forced == 2)
    return;
  h->forced = 2; /* finishing */
  phttp_close_all_sessions(h);
  while (h->conns)
    phttp_conn_close(h->conns);
  pthread_mutex_lock(&h->qlock);
  h->qclosed = 1;
  pthread_mutex_unlock(&h->qlock);
  uv_close((uv_handle_t *)&h->async, on_closed_handle);
  phttp_pool_close(h);
  uv_close((uv_handle_t *)&h->sweep, on_closed_handle);
  uv_close((uv_handle_t *)&h->shutdown_timer, on_closed_handle);
  uv_close((uv_handle_t *)&h->sigterm, on_closed_handle);
  uv_close((uv_handle_t *)&h->sigint, on_closed_handle);
}

static void on_shutdown_timeout(uv_timer_t *t)
{
  pmcp_http *h = t->data;
  phttp_log(h, "shutdown: %u request(s) still running after %u ms; cancelling them",
            h->inflight, h->o.shutdown_timeout_ms);
  h->inflight = 0;
  phttp_maybe_finish_shutdown(h);
}

void pmcp_http_stop(pmcp_http *h)
{
  if (h->stopping) {
    /* A second signal: do not wait any longer. */
    h->inflight = 0;
    phttp_maybe_finish_shutdown(h);
    return;
  }
  h->stopping = 1;
  if (h->listening) {
    uv_close((uv_handle_t *)&h->listener, on_closed_handle);
    h->listening = 0;
  }
  /* Idle keep-alive connections go now; busy ones close after their
   * response; GET streams end so their clients stop waiting. */
  phttp_end_standalone_streams(h);
  phttp_end_detached_sessions(h);
  for (phttp_conn *c = h->conns, *next; c; c = next) {
    next = c->next;
    if (c->state == CONN_IDLE)
      phttp_conn_close(c);
  }
  if (h->inflight)
    phttp_log(h, "shutting down: waiting for %u request(s)", h->inflight);
  uv_timer_start(&h->shutdown_timer, on_shutdown_timeout,
                 h->o.shutdown_timeout_ms, 0);
  phttp_maybe_finish_shutdown(h);
}

static void on_signal(uv_signal_t *s, int signum)
{
  pmcp_http_stop(s->data);
}

void phttp_testing_attach(pmcp_http *h, pmcp_server *server)
{
  h->server = server;
  h->loop_thread = pthread_self();
  h->serving = 1;
}

int pmcp_http_serve(pmcp_http *h, pmcp_server *server)
{
  h->server = server;
  h->loop_thread = pthread_self();
  h->serving = 1;
  signal(SIGPIPE, SIG_IGN);
  uv_signal_start(&h->sigterm, on_signal, SIGTERM);
  uv_signal_start(&h->sigint, on_signal, SIGINT);
  unsigned every = h->o.session_idle_ms / 4;
  if (every < 1000)
    every = 1000;
  if (every > 30000)
    every = 30000;
  uv_timer_start(&h->sweep, on_sweep, every, every);
  /* Threads for handler runs. One by default: tools that may block are
   * declared so and run on the engine's own workers; the rest are meant to
   * be quick, and one thread that rarely sleeps hands work over with the
   * fewest wake-ups (measured: 16 us of server CPU per call against 24 us
   * with two threads on two cores). */
  unsigned n = h->o.handler_threads ? h->o.handler_threads : 1;
  if (!h->o.handlers_inline && !h->o.testing && phttp_pool_start(h, n) != 0)
    phttp_log(h, "no handler threads: tool calls run on the event loop");
  uv_run(&h->loop, UV_RUN_DEFAULT);
  phttp_pool_join(h);
  h->serving = 0;
  h->server = NULL; /* freed by the caller next */
  return 0;
}

void phttp_testing_finish(pmcp_http *h)
{
  h->stopping = 1;
  h->inflight = 0;
  phttp_maybe_finish_shutdown(h);
  uv_run(&h->loop, UV_RUN_DEFAULT);
  h->server = NULL;
}

void pmcp_http_free(pmcp_http *h)
{
  if (!h)
    return;
  if (h->loop_ok) {
    pthread_mutex_lock(&h->qlock);
    h->qclosed = 1;
    pthread_mutex_unlock(&h->qlock);
    if (!h->stopping || h->forced != 2) {
      h->stopping = 1;
      h->inflight = 0;
      if (h->listening)
        uv_close((uv_handle_t *)&h->listener, on_closed_handle);
      h->listening = 0;
      h->forced = 0;
      phttp_maybe_finish_shutdown(h);
    }
    uv_run(&h->loop, UV_RUN_DEFAULT);
    phttp_pool_join(h);
    uv_loop_close(&h->loop);
  }
  for (phttp_qmsg *m = h->qhead, *next; m; m = next) {
    next = m->next;
    free(m);
  }
  pthread_mutex_destroy(&h->qlock);
  for (size_t i = 0; i < h->n_allow_hosts; i++)
    free(h->allow_hosts[i]);
  free(h->allow_hosts);
  free(h->allow_ports);
  for (size_t i = 0; i < h->n_allow_origins; i++)
    free(h->allow_origins[i]);
  free(h->allow_origins);
  while (h->pcounts) {
    struct phttp_pcount *e = h->pcounts;
    h->pcounts = e->next;
    free(e);
  }
  free(h->table);
  phttp_sessions_free_spare(h);
  free(h->host);
  free(h->endpoint);
  free(h);
}

static void log_stderr(const char *line, void *ud)
{
  fprintf(stderr, "%s: %s\n", (const char *)ud, line);
}

int pmcp_http_run(const pmcp_http_options *hopts, pmcp_server_options *sopts,
                  int (*setup)(pmcp_server *server, void *ud), void *ud)
{
  pmcp_http_options o = *hopts;
  const char *prog = sopts->name ? sopts->name : "probe-mcp-http";
  if (!o.log) {
    o.log = log_stderr;
    o.log_ud = (void *)prog;
  }
  char err[256];
  pmcp_http *h;
  if (pmcp_http_new(&h, &o, err, sizeof err) != 0) {
    fprintf(stderr, "%s: %s\n", prog, err);
    return 1;
  }
  sopts->sink = pmcp_http_sink;
  sopts->sink_ud = h;
  pmcp_server *srv = NULL;
  int rc = pmcp_server_new(&srv, sopts);
  if (rc != 0) {
    fprintf(stderr, "%s: cannot create the server: %s\n", prog, pmcp_strerror(rc));
    pmcp_http_free(h);
    return 1;
  }
  if (setup && setup(srv, ud) != 0) {
    /* setup() may have said why already; add the server's detail if any. */
    const char *why = pmcp_server_errmsg(srv);
    if (why && *why)
      fprintf(stderr, "%s: %s\n", prog, why);
    pmcp_server_free(srv);
    pmcp_http_free(h);
    return 1;
  }
  int v6 = strchr(h->host, ':') != NULL;
  FILE *ann = o.announce ? o.announce : stdout;
  fprintf(ann, "listening on http://%s%s%s:%d%s\n", v6 ? "[" : "",
          h->host, v6 ? "]" : "", h->port, h->endpoint);
  fflush(ann);
  pmcp_http_serve(h, srv);
  pmcp_server_free(srv);
  pmcp_http_free(h);
  return 0;
}
