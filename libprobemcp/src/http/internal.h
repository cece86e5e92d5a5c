/* SPDX-License-Identifier: MIT */
/* Internals of the Streamable HTTP transport, shared by its files:
 *   hdr.c   pure header logic (Accept, media types, Host/Origin, ids)
 *   conn.c  connections: libuv I/O, llhttp parsing, timeouts, writing
 *   session.c  sessions, streams, SSE replay, routing the engine's output
 *   request.c  the checks of each request; POST, GET and DELETE
 *   pool.c  handler threads (tool calls never run on the loop)
 *   transport.c  the object, the sink queue, signals, shutdown, run()
 *   route.c  the host's own routes (OAuth, consent pages) off the loop
 *   compat.c  release 0.1's request and response layouts for its hosts
 * Everything runs on the loop thread except the sink queue and the handler
 * threads (pool.c), which only call pmcp_server_handle() and hand back.
 */
#ifndef PMCP_HTTP_INTERNAL_H
#define PMCP_HTTP_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <uv.h>
#include <llhttp.h>

#include "probemcp/probemcp.h"
#include "probemcp/http.h"

/* ---- hdr.c ------------------------------------------------------------- */

enum { ACCEPT_JSON = 1, ACCEPT_SSE = 2 };
/* Which of application/json and text/event-stream an Accept value admits
 * (wildcards and q=0 honoured). NULL (no header) admits both. */
unsigned phttp_accept(const char *value, size_t len);
/* True when a Content-Type value is application/json (any parameters). */
int phttp_is_json_type(const char *value, size_t len);
/* Splits a Host value into name (lower-cased, brackets kept for IPv6) and
 * checks the optional port is digits. Returns 0 or -1 (malformed). */
int phttp_host_name(const char *value, size_t len, char *name, size_t size);
/* The port of a Host value ("name:8080"), @p dflt when it names none, -1
 * when malformed or out of 1..65535. */
long phttp_host_port(const char *value, size_t len, long dflt);
#define PHTTP_ANY_PORT 0L
#define PHTTP_LISTEN_PORT (-1L)
/* Whether a Host of @p name and @p port (0: none given) is allowed. */
int phttp_host_allowed(const pmcp_http *h, const char *name, long port);
/* Parses an Origin "scheme://host[:port]" into its host name as above.
 * Returns 0, or -1 when it is not such an origin (e.g. "null"). */
int phttp_origin_name(const char *value, size_t len, char *name, size_t size);
/* True when the Origin @p origin names the port of the Host header
 * @p host (a port left out is the origin scheme's default); the host name
 * itself is checked against the allow-list. */
int phttp_origin_same_port(const char *origin, size_t on, const char *host, size_t hn);
/* Parses a Last-Event-ID "<stream>_<seq>". Returns 0 or -1. */
int phttp_event_id(const char *value, size_t len, uint32_t *stream,
                   uint64_t *seq);
/* True when a protocol version is one this transport speaks. */
/* Decodes standard base64 (padding optional) into out (size bytes); 0 with
 * *len, or -1 when malformed or too long. */
int phttp_base64_decode(const char *in, size_t n, char *out, size_t size,
                        size_t *len);
int phttp_version_supported(const char *value, size_t len);
/* Session ids are visible ASCII (0x21-0x7E), 1..64 bytes. */
int phttp_valid_session_id(const char *value, size_t len);


/* ---- requests and connections (conn.c) ---------------------------------- */

typedef struct phttp_hdr { uint32_t name, name_len, value, value_len; } phttp_hdr;

#define PHTTP_MAX_HEADERS 64

/* The header fields the transport reads, indexed once as each field is
 * parsed (conn.c), so every lookup is one array read. */
typedef enum phttp_known {
  PH_HOST, PH_ORIGIN, PH_ACCEPT, PH_CONTENT_TYPE, PH_EXPECT, PH_COOKIE,
  PH_VERSION,      /* MCP-Protocol-Version */
  PH_SESSION,      /* Mcp-Session-Id */
  PH_LAST_EVENT,   /* Last-Event-ID */
  PH_METHOD,       /* Mcp-Method */
  PH_NAME,         /* Mcp-Name */
  PH_COUNT,
  PH_OTHER = PH_COUNT
} phttp_known;
/* Which known field a name is (any case), PH_OTHER when none. */
phttp_known phttp_known_of(const char *name, size_t len);

typedef struct phttp_req {
  uint8_t method;            /* llhttp_method_t */
  uint8_t http_minor;
  int keep_alive;
  char *arena;               /* url + header names/values, max_header bytes */
  size_t arena_len;
  uint32_t url, url_len;
  phttp_hdr hdrs[PHTTP_MAX_HEADERS];
  unsigned nhdrs;
  uint8_t first[PH_COUNT];   /* index + 1 of a known field's first line, 0: absent */
  uint8_t count[PH_COUNT];   /* how many lines of it */
  uint8_t n_params;          /* Mcp-Param-* lines */
  unsigned accept;           /* ACCEPT_* of the Accept field (phttp_check_headers) */
  int in_value;              /* parsing a header value (vs a name) */
  int value_broken;          /* the value's last piece ended at a line end */
  pmcp_buf body;
  int status;                /* non-zero: reject with this status */
  const char *reason;        /* message for the rejection */
  int expect_continue;
  int route;                 /* claimed by the host's routes (route.c) */
  void *principal;           /* pmcp_http_options.auth's answer */
  int bad_version;           /* MCP-Protocol-Version the engine does not speak */
} phttp_req;

enum phttp_conn_state {
  CONN_IDLE = 0,     /* keep-alive: waiting for a request */
  CONN_HEADERS,      /* reading request line and headers */
  CONN_BODY,         /* reading the body */
  CONN_BUSY,         /* request taken, response not finished */
  CONN_CLOSING
};

struct phttp_stream;

typedef struct phttp_conn {
  pmcp_http *h;
  uv_tcp_t tcp;
  uv_timer_t timer;
  llhttp_t parser;
  struct phttp_conn *prev, *next;
  enum phttp_conn_state state;
  phttp_req req;
  char *pending;             /* bytes received while busy, unparsed */
  size_t pending_len, pending_cap;
  int reading;               /* uv_read_start active */
  int peer_eof;
  int close_after;           /* close once the response is written */
  int lingering;             /* closing: draining the client's unread bytes */
  int shut_done;             /* lingering: our write side is shut down */
  int linger_done;           /* lingering: both handles are closing */
  int handles_open;          /* uv handles still to close */
  int fake;                  /* testing: no socket; output discarded */
  struct phttp_stream *stream; /* the response being produced, if any */
  int chunked;               /* response body uses chunked framing */
  int in_process;            /* inside conn_process() */
  struct phttp_route_job *route_job; /* a route handler running (route.c) */
  const char *exec_end;      /* end of the bytes being parsed */
  int used;                  /* a request was started on it */
  unsigned char peer[16];    /* client address (IPv4 or IPv6), no port */
  int peer_len;              /* 0: unknown */
} phttp_conn;

/* ---- MCP state (session.c) -------------------------------------------------- */

typedef struct phttp_event {
  struct phttp_event *next;
  struct phttp_stream *stream;
  uint64_t seq;
  size_t len;
  char data[];               /* one JSON-RPC message */
} phttp_event;

enum phttp_stream_mode { MODE_LAZY = 0, MODE_JSON, MODE_SSE };

typedef struct phttp_pending {
  char *id;                  /* canonical JSON text of the request id */
  int done;
} phttp_pending;

typedef struct phttp_session phttp_session;

typedef struct phttp_stream {
  phttp_session *s;
  struct phttp_stream *next;
  uint32_t no;
  int standalone;            /* the GET stream */
  enum phttp_stream_mode mode;
  int accept;                /* ACCEPT_* of the POST */
  phttp_conn *conn;          /* attached connection or NULL */
  phttp_pending *ids;
  size_t nids, ndone;
  int batch;
  pmcp_buf collected;        /* JSON mode: responses so far */
  size_t ncollected;
  int finished;              /* every id had its final message */
  unsigned nevents;          /* events of this stream in the buffer */
  uint64_t evicted_upto;     /* highest seq dropped from the buffer */
  int initialize;            /* the POST that creates the session */
  int status;                /* HTTP status the engine asked for (JSON reply) */
} phttp_stream;

struct phttp_session {
  phttp_session *hnext;      /* hash chain */
  phttp_session *prev, *next;/* all sessions, oldest first */
  char id[65];
  int stateless;
  int issued;                /* Mcp-Session-Id handed to the client */
  char proto[16];            /* negotiated protocol version */
  uint64_t last_active;      /* uv_now() */
  uint32_t next_stream;
  uint64_t next_seq;
  phttp_stream *streams;
  phttp_stream *standalone;
  phttp_event *ev_head, *ev_tail;
  size_t ev_bytes;
  unsigned ev_count;
  unsigned inflight;
  unsigned nwork;            /* handler runs queued on the thread pool */
  int zombie;                /* ended; freed when nwork drops to 0 */
  _Atomic int dead;          /* read by workers */
  void *principal;           /* who opened it (authentication on), or NULL */
};

/* ---- handler runs off the loop (pool.c) ---------------------------------- */

typedef struct work_msg {
  const char *id;            /* the stream's canonical id of a request */
  int rc;
} work_msg;

/* One POST's items for a handler thread: the engine's reading of the body
 * (handed over whole, not parsed again) and the body it points into, taken
 * from the connection; one allocation with the claims' strings after
 * msgs[]. */
typedef struct phttp_work {
  struct phttp_work *next;
  pmcp_http *h;
  phttp_session *s;          /* kept alive while s->nwork > 0 */
  pmcp_message *msg;
  pmcp_buf body;
  /* Header claims of a modern-era request. */
  pmcp_http_claims claims;
  int has_claims;
  size_t n;
  work_msg msgs[];
} phttp_work;

#define PHTTP_POOL_MAX 16

typedef struct phttp_pool {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  phttp_work *head, *tail;   /* queued */
  phttp_work *done, *done_tail; /* finished, for the loop */
  pthread_t th[PHTTP_POOL_MAX];
  unsigned nthreads, idle;
  unsigned queued;           /* items waiting for a thread */
  int stop, closed;
  uv_async_t async;
} phttp_pool;

/* ---- the transport -------------------------------------------------------- */

typedef struct phttp_qmsg {
  struct phttp_qmsg *next;
  pmcp_out_kind kind;
  int final;
  int http_status;           /* pmcp_out.http_status */
  char *session;             /* point into buf */
  char *related;             /* or NULL */
  char *data;                /* or NULL */
  size_t len;
  char buf[];
} phttp_qmsg;

struct pmcp_http {
  pmcp_http_options o;
  char *host, *endpoint;
  char **allow_hosts;        /* lower-case names incl. loopback defaults */
  long *allow_ports;         /* each name's port: PHTTP_ANY_PORT, */
  size_t n_allow_hosts;      /* PHTTP_LISTEN_PORT or that port */
  char **allow_origins;
  size_t n_allow_origins;
  int port;
  uv_loop_t loop;
  int loop_ok;
  uv_tcp_t listener;
  int listening;
  uv_async_t async;
  uv_timer_t sweep;
  uv_timer_t shutdown_timer;
  uv_signal_t sigterm, sigint;
  pthread_t loop_thread;
  int serving;
  pmcp_server *server;
  pthread_mutex_t qlock;
  phttp_qmsg *qhead, *qtail;
  int qclosed;
  phttp_conn *conns;
  unsigned nconns;
  phttp_session **table;     /* hash table of sessions */
  size_t table_size;
  phttp_session *s_head, *s_tail;
  unsigned nsessions;
  /* ended sessions kept for reuse (one per modern-era request), by hnext */
  phttp_session *spare;
  unsigned n_spare;
  unsigned inflight;         /* requests awaiting their final message */
  /* Requests in flight per principal (authentication on), so that one
   * principal cannot take every slot: a short list, entries dropped at 0. */
  struct phttp_pcount {
    void *principal;
    unsigned n;
    struct phttp_pcount *next;
  } *pcounts;
  int stopping;              /* graceful shutdown started */
  int forced;
  uint64_t id_counter;       /* testing ids */
  phttp_pool pool;
  int pool_started;
  char readbuf[65536];
};

/* conn.c */
int phttp_conn_accept(pmcp_http *h);
phttp_conn *phttp_conn_fake(pmcp_http *h);
void phttp_conn_feed(phttp_conn *c, const char *data, size_t len);
void phttp_conn_close(phttp_conn *c);
void phttp_conn_write(phttp_conn *c, const char *data, size_t len);
/* A complete non-streaming response; body may be NULL. */
void phttp_respond(phttp_conn *c, int status, const char *ctype,
                   const char *extra_headers, const char *body, size_t len);
/* A JSON-RPC error body {"jsonrpc":"2.0","error":{...},"id":null}. */
void phttp_respond_error(phttp_conn *c, int status, int rpc_code,
                         const char *message);
/* Starts a streaming (SSE) response. */
void phttp_begin_sse(phttp_conn *c, const char *extra_headers);
/* Writes one SSE event (id may be NULL, data may be "" for priming). */
void phttp_sse_event(phttp_conn *c, const char *id, const char *retry,
                     const char *data, size_t len);
/* Ends the current response; the connection goes back to reading. */
void phttp_response_done(phttp_conn *c);
/* The first value of known field @p which (trailing blanks dropped, its
 * length in *len), NULL when absent; *count: how many lines it has. */
const char *phttp_header(const phttp_req *r, phttp_known which, size_t *len,
                         int *count);
void phttp_conn_set_ping(phttp_conn *c);

/* session.c: sessions, streams, routing */
phttp_session *phttp_session_find(pmcp_http *h, const char *id, size_t n);
void phttp_session_touch(pmcp_http *h, phttp_session *s);
/* Returns NULL with *status set (503: no room, 500: engine refused). */
phttp_session *phttp_session_new(pmcp_http *h, int stateless, void *principal,
                                 int *status);
void phttp_session_free(pmcp_http *h, phttp_session *s, const char *why);
/* The memory of an ended session whose workers are done: kept for the
 * next session or freed. */
void phttp_session_release(pmcp_http *h, phttp_session *s);
void phttp_sessions_free_spare(pmcp_http *h);
void phttp_session_header(phttp_session *s, char *out, size_t size);
phttp_stream *phttp_stream_new(phttp_session *s);
void phttp_stream_free(phttp_stream *st);
void phttp_stream_start_sse(phttp_stream *st);
phttp_stream *phttp_find_pending(phttp_session *s, const char *id, size_t *idx);

/* request.c and session.c */
void phttp_handle_request(phttp_conn *c);   /* headers and body read */
void phttp_check_headers(phttp_conn *c);    /* at end of headers */
void phttp_deliver(pmcp_http *h, phttp_qmsg *m);
void phttp_conn_lost(phttp_conn *c);        /* detach from its stream */
void phttp_sweep_sessions(pmcp_http *h);
/* Shutdown: ends the sessions whose requests in flight no connection
 * waits for (their client went away), so shutdown does not wait on them. */
void phttp_end_detached_sessions(pmcp_http *h);
/* Adds @p delta (may be negative) to @p principal's requests in flight;
 * returns the count before. NULL principal: nothing counted, 0. */
unsigned phttp_principal_inflight(pmcp_http *h, void *principal, int delta);
void phttp_close_all_sessions(pmcp_http *h);
void phttp_end_standalone_streams(pmcp_http *h);
void phttp_log(pmcp_http *h, const char *fmt, ...) PMCP_PRINTF(2, 3);

int phttp_sessions_init(pmcp_http *h);
void phttp_answer_locally(pmcp_http *h, phttp_session *s, const char *id,
                          int rc);

/* pool.c: a few threads that run pmcp_server_handle() for requests that
 * call handlers; results go back to the loop in batches. */
int phttp_pool_start(pmcp_http *h, unsigned nthreads);
void phttp_pool_submit(pmcp_http *h, phttp_work *w);
void phttp_pool_close(pmcp_http *h);  /* loop side: no more wake-ups */
/* True when max_queued items already wait for a thread: the request is
 * then refused (503, retryable) instead of queued without bound. */
int phttp_pool_full(pmcp_http *h);
void phttp_pool_join(pmcp_http *h);   /* after the loop: stop the threads */

extern _Thread_local int phttp_in_work;

/* route.c: the host's own routes, run on libuv worker threads */
int phttp_route_claim(phttp_conn *c);
/* The connection's peer address ("127.0.0.1"), "" when unknown. */
void phttp_peer_name(phttp_conn *c, char *out, size_t size);   /* at end of headers: 1 = ours */
void phttp_route_handle(phttp_conn *c); /* body read: start the handler */
void phttp_route_lost(phttp_conn *c);   /* the connection is closing */
/* The value of header @p name among @p n (names, values), or NULL;
 * *count (may be NULL) how many times it appeared. */
const char *phttp_header_of(size_t n, const char *const *names, const char *const *values,
                            const char *name, int *count);
/* True when @p peer is one of @p h's trusted proxies (NULL h: not). */
int phttp_peer_is_trusted(const pmcp_http *h, const char *peer);

/* compat.c: the host's callbacks get the request and response in the
 * layout of the release it was built for (its options' version). */
void *phttp_call_auth(pmcp_http *h, const pmcp_http_request *req, char *challenge,
                      size_t challenge_size, char *why, size_t why_size);
void phttp_call_route(pmcp_http *h, const pmcp_http_request *req, pmcp_http_response *res);

/* transport.c */
/* Testing (fuzz): use @p server without running the loop; finish() ends
 * every session and connection and runs the loop until all is closed. */
void phttp_testing_attach(pmcp_http *h, pmcp_server *server);
void phttp_testing_finish(pmcp_http *h);
void phttp_drain_queue(pmcp_http *h);
void phttp_maybe_finish_shutdown(pmcp_http *h);

#endif
