/* SPDX-License-Identifier: MIT */
/**
 * @file http.h
 * The MCP Streamable HTTP transport over libuv, an optional module of its
 * own library: link libprobemcp-http (pkg-config libprobemcp-http), which
 * needs libuv; the engine alone (libprobemcp) does not. Not included by
 * probemcp.h. probe-mcp-http and probe-mcp-everything --http serve with it.
 *
 * The transport owns a libuv loop, a listening socket and the HTTP/1.1
 * connections; it moves whole JSON-RPC messages between clients and a
 * pmcp_server. The server is created with pmcp_http_sink() as its sink and
 * the transport as the sink's ud, because the sink is fixed at
 * pmcp_server_new() time:
 *
 *   pmcp_http *h; pmcp_http_new(&h, &hopts);
 *   sopts.sink = pmcp_http_sink; sopts.sink_ud = h;
 *   pmcp_server_new(&srv, &sopts); ...register...
 *   pmcp_http_serve(h, srv);          // until SIGTERM / SIGINT
 *   pmcp_server_free(srv); pmcp_http_free(h);   // in this order
 *
 * pmcp_http_run() does exactly that for a host's main():
 *
 *   pmcp_http_options ho = PMCP_HTTP_OPTIONS_INIT;   // 127.0.0.1, free port
 *   pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT; so.name = "host";
 *   return pmcp_http_run(&ho, &so, register_tools, NULL);
 *
 * Ownership: the pmcp_http is the caller's, freed with pmcp_http_free()
 * after the server it feeds. Option strings and arrays are borrowed: they
 * must outlive the transport. The principal the auth callback returns is
 * the host's and must live as long as the transport.
 *
 * Errors: PMCP_E* codes (PMCP_EINVAL for bad options, PMCP_EIO when the
 * address cannot be bound, PMCP_ENOMEM), with a reason written into the
 * caller's buffer.
 *
 * Threads: everything but pmcp_http_sink() runs on the thread that calls
 * pmcp_http_serve(). The sink may be called from any thread (the engine's
 * workers); it copies the message into a queue and wakes the loop with
 * uv_async, so nothing a tool does ever blocks the loop and no connection
 * state is touched off the loop thread.
 */
#ifndef PROBEMCP_HTTP_H
#define PROBEMCP_HTTP_H

#include <stdio.h>

#include "common.h"
#include "error.h"
#include "server.h"

PMCP_BEGIN_DECLS

typedef struct pmcp_http pmcp_http;

/* The layouts of pmcp_http_request and pmcp_http_response. Version 2
 * (release 0.2) leads with the version member; release 0.1's layouts had
 * none. The library sets the member in what it hands a handler to the
 * layout it filled, its own PMCP_HTTP_REQUEST_VERSION (or _RESPONSE_):
 * each struct only grows at its end and each new member bumps its
 * version, so a handler reads a member, or sets one of the response, only
 * when the version says the library has it. A transport whose options
 * are of version 1 (a program built against release 0.1) hands its
 * handlers release 0.1's layouts, and such a program's calls of
 * pmcp_http_request_header() and pmcp_http_peer_trusted() read those. */
#define PMCP_HTTP_REQUEST_VERSION 2
#define PMCP_HTTP_RESPONSE_VERSION 2

/* A request to one of the host's own routes (pmcp_http_options.route_*),
 * as its handler sees it on a worker thread (and, without the body, as
 * the auth callback sees it). Every string is NUL-terminated and lives
 * until the handler returns. */
typedef struct pmcp_http_request {
  unsigned version;          /* set by the library (see above) */
  pmcp_http *h;
  const char *method;        /* "GET", "POST", ... */
  const char *path;          /* without the query */
  const char *query;         /* after '?' (percent-encoded), or "" */
  const char *body;          /* "" when there is none */
  size_t body_len;
  size_t nheaders;
  const char *const *names;  /* lower-case */
  const char *const *values;
  const char *peer;          /* the client's address ("127.0.0.1"), or "" */
} pmcp_http_request;

/* For code that makes a request itself (a test calling its handler): the
 * current version, every other member 0. */
#define PMCP_HTTP_REQUEST_INIT {PMCP_HTTP_REQUEST_VERSION, NULL, NULL, NULL, NULL, NULL, \
    0, 0, NULL, NULL, NULL}

/* What a route handler answers, in a struct the library zeroes and
 * versions before the handler runs. The transport adds Content-Length and
 * Connection; headers holds further lines, each ending in CRLF. */
typedef struct pmcp_http_response {
  unsigned version;          /* set by the library (see above) */
  int status;                /* 0: 500 */
  const char *content_type;  /* static string or NULL */
  pmcp_buf headers;
  pmcp_buf body;
} pmcp_http_response;

#define PMCP_HTTP_RESPONSE_INIT {PMCP_HTTP_RESPONSE_VERSION, 0, NULL, PMCP_BUF_INIT, \
    PMCP_BUF_INIT}

/* The value of header @p name (lower-case) or NULL; *count (may be NULL)
 * gets how many times it appeared. */
PMCP_API const char *pmcp_http_request_header(const pmcp_http_request *r,
                                     const char *name, int *count);
/* True when @p name (a host name without port, lower-case) is one the
 * transport accepts in Host with some port. Thread-safe. */
PMCP_API int pmcp_http_host_allowed(const pmcp_http *h, const char *name);
/* True when @p req came from one of the trusted proxies. */
PMCP_API int pmcp_http_peer_trusted(const pmcp_http_request *req);
/* The endpoint path ("/mcp" unless configured). */
PMCP_API const char *pmcp_http_endpoint(const pmcp_http *h);

/* Version 2 (release 0.2) has no new member: route_handle and auth get
 * the version 2 layouts of pmcp_http_request and pmcp_http_response, with
 * their version member. Version 1 is release 0.1's, whose handlers get
 * that release's layouts, without it. */
#define PMCP_HTTP_OPTIONS_VERSION 2

/* Every field but the version: 0 or NULL is its default. */
typedef struct pmcp_http_options {
  unsigned version;          /* PMCP_HTTP_OPTIONS_VERSION */
  const char *host;          /* listen address; NULL: 127.0.0.1 */
  int port;                  /* 0: pick a free port */
  const char *endpoint;      /* NULL: "/mcp" */
  int stateless;             /* no sessions: every POST self-contained */
  /* Extra Hosts and exact Origins allowed besides the loopback names and
   * the listening address, which are allowed with the listening port
   * only. A Host is "NAME" (with any port) or "NAME:PORT" / "[V6]:PORT"
   * (that port only; a Host header without a port stands for 80 or
   * 443). A malformed one fails pmcp_http_new. */
  const char *const *allow_hosts;
  size_t n_allow_hosts;
  /* Addresses of the reverse proxies in front ("127.0.0.1", "::1"): only
   * their Forwarded / X-Forwarded-* headers are believed (strings and the
   * array must outlive the transport). */
  const char *const *trusted_proxies;
  size_t n_trusted_proxies;
  const char *const *allow_origins;
  size_t n_allow_origins;
  size_t max_body;           /* bytes; 0: 4 MiB */
  size_t max_header;         /* bytes of request line + headers; 0: 16 KiB */
  unsigned max_connections;  /* 0: 1024 */
  /* Open connections from one client address; 0: max_connections / 4. */
  unsigned max_connections_per_client;
  unsigned max_sessions;     /* 0: 1000 */
  unsigned session_idle_ms;  /* idle session expiry; 0: 30 min */
  unsigned header_timeout_ms;/* first byte to end of headers; 0: 10 s */
  unsigned body_timeout_ms;  /* end of headers to end of body; 0: 30 s */
  unsigned idle_timeout_ms;  /* keep-alive between requests; 0: 60 s */
  unsigned shutdown_timeout_ms; /* graceful shutdown limit; 0: 30 s */
  unsigned sse_retry_ms;     /* SSE retry: field; 0: 1000 */
  unsigned sse_ping_ms;      /* SSE comment keep-alive; 0: 25 s */
  size_t replay_bytes;       /* per-session SSE replay buffer; 0: 1 MiB */
  unsigned max_inflight;     /* requests in flight per session; 0: 256 */
  /* Requests in flight per principal (authentication on), over all its
   * sessions; 0: 4 x max_inflight. */
  unsigned max_inflight_principal;
  unsigned max_inflight_total; /* in the whole server; 0: 4096 */
  /* Threads that run tool/resource/prompt handlers off the loop (at most
   * 16); 0: 1. */
  unsigned handler_threads;
  /* Calls that may wait for a handler thread; past it a request is refused
   * with 503 and Retry-After. 0: no bound but max_connections (each
   * connection has one request at a time in the pool). */
  unsigned max_queued;
  /* Run handlers on the loop thread instead (for hosts whose tools that
   * are not declared PMCP_TOOL_BLOCKING are all quick): saves a thread
   * hand-over per call, but a slow handler then stalls every client. */
  int handlers_inline;
  /* Where the "listening on URL" line goes (flushed); NULL: stdout. */
  FILE *announce;
  /* Diagnostics (one line, no newline); NULL: none. */
  void (*log)(const char *line, void *ud);
  void *log_ud;
  /* Routes of the host's own besides the endpoint (probe-mcp-http's OAuth
   * server and consent pages). route_match runs on the loop thread at the
   * end of a request's headers, after the Host check (the Origin check is
   * the route's: a token endpoint serves foreign origins, a consent form
   * only its own); returning 1 claims the request. route_handle then runs
   * on a libuv worker thread once the body is read, so it may block (SQL,
   * a password KDF); the transport writes its response on the loop. */
  int (*route_match)(void *ud, const char *method, const char *path,
                     size_t path_len);
  void (*route_handle)(void *ud, const pmcp_http_request *req,
                       pmcp_http_response *res);
  void *route_ud;
  /* Authentication of the endpoint (probe-mcp-http), or NULL: open (the
   * conformance fixtures). Runs on the loop thread for every request to
   * the endpoint that passed the header checks; its Cookie headers are
   * gone by then, so a browser's session never reaches MCP. @p req has
   * the method, path and headers (no body). Returns the request's
   * principal, an object of the host's that lives as long as the
   * transport (the same object for the same identity: a session only
   * accepts requests of the principal it was opened with, others get 404
   * like an unknown session; it is the session's ud in the engine, and
   * the caller its worker pool is fair to), or
   * NULL: 401 with "WWW-Authenticate: " + what was written to
   * @p challenge and a JSON-RPC error carrying @p why; when @p challenge
   * is left empty the credential could not be checked (the host's store
   * is unavailable): 503 with Retry-After and a retryable error. */
  void *(*auth)(void *ud, const pmcp_http_request *req, char *challenge,
                size_t challenge_size, char *why, size_t why_size);
  void *auth_ud;
  /* Testing only (the fuzz target): session ids are a counter, not random,
   * and no socket is opened. Never set by the frontends. */
  int testing;
} pmcp_http_options;

/* All defaults (listen on 127.0.0.1, a free port, /mcp, sessions, no
 * authentication). */
#define PMCP_HTTP_OPTIONS_INIT {PMCP_HTTP_OPTIONS_VERSION, NULL, 0, NULL, 0, \
    NULL, 0, NULL, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, \
    0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0}

/* Creates the transport and binds the listening socket (so the chosen port
 * is known before pmcp_http_serve()). Writes a reason into err (size
 * errsize) on failure. Returns 0 or a negative PMCP_E* code (PMCP_EINVAL
 * for a NULL argument or an unknown options version). */
PMCP_API int pmcp_http_new(pmcp_http **out, const pmcp_http_options *opts,
                  char *err, size_t errsize);

/* The pmcp_server sink; ud is the pmcp_http. Thread-safe. */
PMCP_API void pmcp_http_sink(const pmcp_out *msg, void *ud);

/* The bound port (useful with port 0). */
PMCP_API int pmcp_http_port(const pmcp_http *h);

/* Serves @p server until SIGTERM or SIGINT (or pmcp_http_stop()), then
 * shuts down gracefully: stops accepting, lets in-flight calls finish (at
 * most shutdown_timeout_ms), closes everything. Returns 0. */
PMCP_API int pmcp_http_serve(pmcp_http *h, pmcp_server *server);

/* Starts the graceful shutdown from the loop thread. */
PMCP_API void pmcp_http_stop(pmcp_http *h);

/* Frees the transport; call after pmcp_server_free(). NULL ok. */
PMCP_API void pmcp_http_free(pmcp_http *h);

/* For a frontend's main(): creates the transport and a server whose sink
 * is the transport, lets @p setup register tools, prints the URL, serves
 * until a signal, frees everything. Errors go to stderr. Returns an exit
 * status (0, or 1 after printing why). */
PMCP_API int pmcp_http_run(const pmcp_http_options *hopts, pmcp_server_options *sopts,
                  int (*setup)(pmcp_server *server, void *ud), void *ud);

/* Parses "HOST:PORT", "[V6]:PORT" or ":PORT" / "PORT" (host 127.0.0.1)
 * into host (size hostsize) and port. Returns 0 or -1 with a reason in
 * err. */
PMCP_API int pmcp_http_parse_listen(const char *spec, char *host, size_t hostsize,
                           int *port, char *err, size_t errsize);

PMCP_END_DECLS

#endif
