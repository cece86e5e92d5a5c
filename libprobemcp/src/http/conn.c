/* SPDX-License-Identifier: MIT */
/* HTTP/1.1 connections: libuv I/O, llhttp parsing, limits, timeouts and
 * response framing. A connection handles one request at a time: the parser
 * pauses at the end of each message and resumes when its response is
 * finished, so pipelined requests are answered in order. Bytes that arrive
 * meanwhile are kept (bounded) so that a client closing an SSE stream is
 * noticed at once; reading resumes whenever the parser needs more and the
 * kept bytes are under the bound. A connection must start its first
 * request within the header timeout; connections per client address are
 * bounded, and when every slot is taken the oldest idle connection makes
 * room for a new client. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define PENDING_MAX (64 * 1024)       /* unparsed bytes kept while busy */
#define WRITE_QUEUE_MAX (8u << 20)    /* a client that does not read */
#define LINGER_MS 2000                /* draining after an early answer */

static void conn_process(phttp_conn *c);
static void arm_timer(phttp_conn *c, unsigned ms);
static void hard_close(phttp_conn *c);
static void on_timer(uv_timer_t *t);
static void on_alloc(uv_handle_t *hd, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

/* ---- parser callbacks --------------------------------------------------- */

static phttp_conn *P(llhttp_t *p) { return (phttp_conn *)p->data; }

static int reject(phttp_conn *c, int status, const char *reason)
{
  if (!c->req.status) {
    c->req.status = status;
    c->req.reason = reason;
  }
  return HPE_USER;
}

static int arena_add(phttp_conn *c, const char *at, size_t len)
{
  phttp_req *r = &c->req;
  if (r->arena_len + len > c->h->o.max_header)
    return -1;
  memcpy(r->arena + r->arena_len, at, len);
  r->arena_len += len;
  return 0;
}

static int on_message_begin(llhttp_t *p)
{
  phttp_conn *c = P(p);
  phttp_req *r = &c->req;
  r->arena_len = 0;
  r->url = 0;
  r->url_len = 0;
  r->nhdrs = 0;
  memset(r->first, 0, sizeof r->first);
  memset(r->count, 0, sizeof r->count);
  r->n_params = 0;
  r->accept = 0;
  r->hdrs[0].name_len = 0;
  r->hdrs[0].value_len = 0;
  r->in_value = 0;
  r->body.len = 0;
  r->status = 0;
  r->reason = NULL;
  r->expect_continue = 0;
  r->route = 0;
  r->value_broken = 0;
  c->used = 1;
  c->state = CONN_HEADERS;
  arm_timer(c, c->h->o.header_timeout_ms);
  return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t len)
{
  phttp_conn *c = P(p);
  if (arena_add(c, at, len) != 0)
    return reject(c, 414, "request target too long");
  c->req.url_len += (uint32_t)len;
  return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
  phttp_conn *c = P(p);
  phttp_req *r = &c->req;
  if (r->nhdrs >= PHTTP_MAX_HEADERS)
    return reject(c, 431, "too many header fields");
  phttp_hdr *hd = &r->hdrs[r->nhdrs];
  if (r->in_value == 0 && hd->name_len == 0)
    hd->name = (uint32_t)r->arena_len;
  r->in_value = 0;
  if (arena_add(c, at, len) != 0)
    return reject(c, 431, "request header fields too large");
  hd->name_len += (uint32_t)len;
  return 0;
}

static int on_header_field_complete(llhttp_t *p)
{
  phttp_conn *c = P(p);
  phttp_hdr *hd = &c->req.hdrs[c->req.nhdrs];
  hd->value = (uint32_t)c->req.arena_len;
  hd->value_len = 0;
  c->req.in_value = 1;
  c->req.value_broken = 0;
  return 0;
}

/* A value folded onto an empty first line ("Name:" CRLF SP "value"):
 * llhttp skips the line break with the whitespace, so look at what precedes
 * the value's first byte, as far as the parsed bytes go. */
static int folded_start(const phttp_conn *c, const char *at)
{
  const char *p = at;
  while (p > c->pending && (p[-1] == ' ' || p[-1] == '\t'))
    p--;
  return p > c->pending && p < at && p[-1] == '\n';
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
  phttp_conn *c = P(p);
  /* llhttp reports a value in pieces only at the end of the bytes given to
   * it, or when a line break is followed by a space or tab: the obsolete
   * line folding (RFC 9112 section 5.2), which it accepts and we refuse. */
  if (c->req.value_broken ||
      (!c->req.hdrs[c->req.nhdrs].value_len && folded_start(c, at)))
    return reject(c, 400, "obsolete line folding in a header field");
  if (at + len != c->exec_end)
    c->req.value_broken = 1;
  if (arena_add(c, at, len) != 0)
    return reject(c, 431, "request header fields too large");
  c->req.hdrs[c->req.nhdrs].value_len += (uint32_t)len;
  return 0;
}

static int on_header_value_complete(llhttp_t *p)
{
  phttp_conn *c = P(p);
  phttp_req *r = &c->req;
  const phttp_hdr *hd = &r->hdrs[r->nhdrs];
  const char *name = r->arena + hd->name;
  phttp_known k = phttp_known_of(name, hd->name_len);
  if (k != PH_OTHER) {
    if (!r->first[k])
      r->first[k] = (uint8_t)(r->nhdrs + 1);
    r->count[k]++;
  } else if (hd->name_len > 10 && strncasecmp(name, "mcp-param-", 10) == 0) {
    r->n_params++;
  }
  r->nhdrs++;
  r->in_value = 0;
  if (r->nhdrs < PHTTP_MAX_HEADERS) {
    r->hdrs[r->nhdrs].name_len = 0;
    r->hdrs[r->nhdrs].value_len = 0;
  }
  return 0;
}

static int on_headers_complete(llhttp_t *p)
{
  phttp_conn *c = P(p);
  phttp_req *r = &c->req;
  r->method = (uint8_t)llhttp_get_method(p);
  r->http_minor = llhttp_get_http_minor(p);
  c->state = CONN_BODY;
  arm_timer(c, c->h->o.body_timeout_ms);
  if (llhttp_get_http_major(p) != 1)
    return reject(c, 505, "only HTTP/1.x is supported");
  if ((p->flags & F_CONTENT_LENGTH) && p->content_length > c->h->o.max_body)
    return reject(c, 413, "request body too large");
  size_t n;
  int count;
  const char *ex = phttp_header(r, PH_EXPECT, &n, &count);
  if (ex) {
    if (n == 12 && strncasecmp(ex, "100-continue", 12) == 0)
      r->expect_continue = 1;
    else
      return reject(c, 417, "unsupported Expect");
  }
  phttp_check_headers(c);
  if (r->expect_continue) {
    /* A client waiting for 100 would otherwise send the body anyway after
     * a delay; refuse early instead of reading a body we will not use. */
    if (r->status)
      return HPE_USER;
    if (r->http_minor >= 1) {
      static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
      phttp_conn_write(c, cont, sizeof cont - 1);
    }
  }
  return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
  phttp_conn *c = P(p);
  phttp_req *r = &c->req;
  if (r->body.len + len > c->h->o.max_body)
    return reject(c, 413, "request body too large");
  if (r->status) {
    r->body.len += len; /* discarded, only counted against the limit */
    return 0;
  }
  if (pmcp_buf_append(&r->body, at, len) != 0)
    return reject(c, 503, "out of memory");
  return 0;
}

static int on_message_complete(llhttp_t *p)
{
  phttp_conn *c = P(p);
  c->req.keep_alive = llhttp_should_keep_alive(p);
  if (p->upgrade)
    c->close_after = 1; /* we never switch protocols */
  c->state = CONN_BUSY;
  uv_timer_stop(&c->timer);
  return HPE_PAUSED;
}

static const llhttp_settings_t settings = {
  .on_message_begin = on_message_begin,
  .on_url = on_url,
  .on_header_field = on_header_field,
  .on_header_field_complete = on_header_field_complete,
  .on_header_value = on_header_value,
  .on_header_value_complete = on_header_value_complete,
  .on_headers_complete = on_headers_complete,
  .on_body = on_body,
  .on_message_complete = on_message_complete,
};

const char *phttp_header(const phttp_req *r, phttp_known which, size_t *len,
                         int *count)
{
  *count = r->count[which];
  if (!r->first[which])
    return NULL;
  const phttp_hdr *hd = &r->hdrs[r->first[which] - 1];
  const char *found = r->arena + hd->value;
  *len = hd->value_len;
  /* llhttp keeps trailing whitespace of a value; drop it. */
  while (*len && (found[*len - 1] == ' ' || found[*len - 1] == '\t'))
    (*len)--;
  return found;
}

/* ---- connection lifecycle ------------------------------------------------ */

static void conn_free(phttp_conn *c)
{
  free(c->req.arena);
  pmcp_buf_dispose(&c->req.body);
  free(c->pending);
  free(c);
}

static void on_handle_closed(uv_handle_t *hd)
{
  phttp_conn *c = hd->data;
  if (--c->handles_open == 0) {
    pmcp_http *h = c->h;
    conn_free(c);
    phttp_maybe_finish_shutdown(h);
  }
}

static void unlink_conn(phttp_conn *c)
{
  pmcp_http *h = c->h;
  if (c->prev)
    c->prev->next = c->next;
  else if (h->conns == c)
    h->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  c->prev = c->next = NULL;
  h->nconns--;
}

static void hard_close(phttp_conn *c)
{
  if (c->state == CONN_CLOSING)
    return;
  c->state = CONN_CLOSING;
  if (c->stream)
    phttp_conn_lost(c);
  phttp_route_lost(c);
  unlink_conn(c);
  uv_timer_stop(&c->timer);
  uv_close((uv_handle_t *)&c->timer, on_handle_closed);
  if (!c->fake)
    uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
}

/* Ends a lingering close: both handles, once. */
static void linger_end(phttp_conn *c)
{
  if (c->linger_done)
    return;
  c->linger_done = 1;
  uv_timer_stop(&c->timer);
  uv_close((uv_handle_t *)&c->timer, on_handle_closed);
  if (!uv_is_closing((uv_handle_t *)&c->tcp))
    uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
  phttp_conn *c = req->data;
  free(req);
  if (c->lingering) {
    /* The answer is sent; wait for the client's EOF (on_read) or the
     * linger timer (on_timer) before closing. */
    c->shut_done = 1;
    if (c->peer_eof || status < 0)
      linger_end(c);
    return;
  }
  if (!c->fake)
    uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
}

/* Closes after what was written has been sent. When the client may still be
 * sending (an early answer such as 413 to a body being uploaded), closing at
 * once with its bytes unread makes the kernel reset the connection, which
 * can destroy the answer before the client reads it (RFC 9112 section 9.6):
 * so half-close, then read and discard until the client closes too or
 * LINGER_MS pass. */
void phttp_conn_close(phttp_conn *c)
{
  if (c->state == CONN_CLOSING)
    return;
  c->state = CONN_CLOSING;
  if (c->stream)
    phttp_conn_lost(c);
  phttp_route_lost(c);
  unlink_conn(c);
  uv_timer_stop(&c->timer);
  if (!c->fake && !c->peer_eof && !c->h->stopping) {
    c->lingering = c->reading ||
      uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0;
    c->reading = c->lingering;
  }
  if (!c->lingering)
    uv_close((uv_handle_t *)&c->timer, on_handle_closed);
  if (c->fake)
    return;
  if (c->lingering)
    uv_timer_start(&c->timer, on_timer, LINGER_MS, 0);
  else
    uv_read_stop((uv_stream_t *)&c->tcp);
  uv_shutdown_t *sr = malloc(sizeof *sr);
  if (sr) {
    sr->data = c;
    if (uv_shutdown(sr, (uv_stream_t *)&c->tcp, on_shutdown) == 0)
      return;
    free(sr);
  }
  if (c->lingering)
    linger_end(c);
  else
    uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
}

static void on_timer(uv_timer_t *t)
{
  phttp_conn *c = t->data;
  switch (c->state) {
  case CONN_CLOSING:
    if (c->lingering)
      linger_end(c); /* the client kept sending: stop waiting */
    break;
  case CONN_HEADERS:
  case CONN_BODY: {
    /* Slow or stalled client: answer 408 if the socket takes it, and
     * drop the connection without waiting for it to read. */
    static const char msg[] =
      "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n"
      "Connection: close\r\n\r\n";
    if (!c->fake) {
      uv_buf_t b = uv_buf_init((char *)msg, sizeof msg - 1);
      uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    }
    phttp_log(c->h, "closing a connection: request not received in time");
    hard_close(c);
    break;
  }
  case CONN_IDLE:
    if (!c->used)
      phttp_log(c->h, "closing a connection: no request received in time");
    phttp_conn_close(c);
    break;
  case CONN_BUSY:
    if (c->stream && c->chunked) {
      /* An SSE comment keeps proxies from timing the stream out and
       * reveals a peer that went away. */
      static const char ping[] = "3\r\n:\n\n\r\n";
      phttp_conn_write(c, ping, sizeof ping - 1);
      if (c->state == CONN_BUSY)
        arm_timer(c, c->h->o.sse_ping_ms);
    }
    break;
  default:
    break;
  }
}

static void arm_timer(phttp_conn *c, unsigned ms)
{
  uv_timer_start(&c->timer, on_timer, ms, 0);
}

void phttp_conn_set_ping(phttp_conn *c)
{
  arm_timer(c, c->h->o.sse_ping_ms);
}

static phttp_conn *conn_new(pmcp_http *h)
{
  phttp_conn *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->req.arena = malloc(h->o.max_header);
  if (!c->req.arena) {
    free(c);
    return NULL;
  }
  c->h = h;
  llhttp_init(&c->parser, HTTP_REQUEST, &settings);
  c->parser.data = c;
  uv_timer_init(&h->loop, &c->timer);
  c->timer.data = c;
  c->handles_open = 1;
  c->next = h->conns;
  if (h->conns)
    h->conns->prev = c;
  h->conns = c;
  h->nconns++;
  c->state = CONN_IDLE;
  return c;
}

phttp_conn *phttp_conn_fake(pmcp_http *h)
{
  phttp_conn *c = conn_new(h);
  if (c) {
    c->fake = 1;
    arm_timer(c, h->o.idle_timeout_ms);
  }
  return c;
}

/* ---- reading ------------------------------------------------------------- */

static void on_alloc(uv_handle_t *hd, size_t suggested, uv_buf_t *buf)
{
  phttp_conn *c = hd->data;
  buf->base = c->h->readbuf;
  buf->len = sizeof c->h->readbuf;
}

static int pending_add(phttp_conn *c, const char *data, size_t len)
{
  if (c->pending_len + len > c->pending_cap) {
    size_t cap = c->pending_cap ? c->pending_cap : 4096;
    while (cap < c->pending_len + len)
      cap *= 2;
    char *p = realloc(c->pending, cap);
    if (!p)
      return -1;
    c->pending = p;
    c->pending_cap = cap;
  }
  memcpy(c->pending + c->pending_len, data, len);
  c->pending_len += len;
  return 0;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
  phttp_conn *c = s->data;
  if (c->state == CONN_CLOSING) {
    /* Lingering: bytes are discarded; the client's EOF ends the wait. */
    if (nread < 0 && c->lingering && !c->linger_done) {
      c->peer_eof = 1;
      uv_read_stop(s);
      c->reading = 0;
      if (c->shut_done)
        linger_end(c);
    }
    return;
  }
  if (nread == 0)
    return;
  if (nread < 0) {
    c->peer_eof = 1;
    uv_read_stop(s);
    c->reading = 0;
    /* A client that goes away while it waits for a response only loses
     * the response; an SSE stream is detached so the client can resume. */
    if (c->state == CONN_BUSY && c->stream && !c->chunked && nread == UV_EOF) {
      /* Half-closed: still deliver the answer, and those of the requests
       * pipelined behind it (keep_alive() closes once they are done). */
      if (!c->pending_len)
        c->close_after = 1;
    } else {
      hard_close(c);
    }
    return;
  }
  phttp_conn_feed(c, buf->base, (size_t)nread);
}

void phttp_conn_feed(phttp_conn *c, const char *data, size_t len)
{
  if (c->state == CONN_CLOSING)
    return;
  if (pending_add(c, data, len) != 0) {
    hard_close(c);
    return;
  }
  if (c->state == CONN_BUSY) {
    if (c->pending_len > PENDING_MAX && c->reading && !c->fake) {
      uv_read_stop((uv_stream_t *)&c->tcp);
      c->reading = 0;
    }
    return;
  }
  conn_process(c);
}

static void fail_parse(phttp_conn *c)
{
  phttp_req *r = &c->req;
  c->close_after = 1;
  if (r->status) {
    c->state = CONN_BUSY;
    phttp_respond_error(c, r->status, -32000, r->reason);
    return;
  }
  char msg[160];
  snprintf(msg, sizeof msg, "malformed HTTP request: %s",
           llhttp_get_error_reason(&c->parser) ? llhttp_get_error_reason(&c->parser)
                                               : llhttp_errno_name(llhttp_get_errno(&c->parser)));
  c->state = CONN_BUSY;
  phttp_respond_error(c, 400, -32600, msg);
}

/* Parses what is pending while the connection is free to take a request. */
static void conn_process(phttp_conn *c)
{
  c->in_process = 1;
  while (c->pending_len > 0 &&
         (c->state == CONN_IDLE || c->state == CONN_HEADERS ||
          c->state == CONN_BODY)) {
    c->exec_end = c->pending + c->pending_len;
    llhttp_errno_t e = llhttp_execute(&c->parser, c->pending, c->pending_len);
    size_t used = c->pending_len;
    if (e == HPE_PAUSED) {
      used = (size_t)(llhttp_get_error_pos(&c->parser) - c->pending);
      llhttp_resume(&c->parser);
    } else if (e != HPE_OK) {
      c->pending_len = 0;
      fail_parse(c);
      return;
    }
    memmove(c->pending, c->pending + used, c->pending_len - used);
    c->pending_len -= used;
    if (e != HPE_PAUSED)
      break;
    if (c->state != CONN_BUSY)
      continue; /* rejected inside a callback and already answered */
    /* A whole request. */
    phttp_req *r = &c->req;
    if (r->status) {
      phttp_respond_error(c, r->status, -32000, r->reason);
    } else if (c->h->stopping) {
      c->close_after = 1;
      phttp_respond_error(c, 503, -32000, "server is shutting down");
    } else {
      phttp_handle_request(c);
    }
  }
  c->in_process = 0;
  if (c->state == CONN_CLOSING || c->fake)
    return;
  if (c->peer_eof) {
    /* Nothing more will come: a partial request stays partial. */
    if (c->state != CONN_BUSY)
      phttp_conn_close(c);
    return;
  }
  /* Read on whenever the kept bytes are under the bound: the parser may be
   * in the middle of a request (its rest is still on the wire), or busy
   * with one while more are pipelined behind it. */
  if (!c->reading && c->pending_len <= PENDING_MAX) {
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
      c->reading = 1;
    else
      hard_close(c);
  }
}

/* ---- accepting ----------------------------------------------------------- */

/* The client's address without its port, for the per-client bound. */
static void peer_address(phttp_conn *c)
{
  struct sockaddr_storage ss;
  int len = (int)sizeof ss;
  c->peer_len = 0;
  if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) != 0)
    return;
  if (ss.ss_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
    memcpy(c->peer, &in->sin_addr, 4);
    c->peer_len = 4;
  } else if (ss.ss_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
    memcpy(c->peer, &in6->sin6_addr, 16);
    c->peer_len = 16;
  }
}

/* Open connections from @p c's address, @p c included. */
static unsigned same_client(const pmcp_http *h, const phttp_conn *c)
{
  unsigned n = 0;
  if (!c->peer_len)
    return 1;
  for (const phttp_conn *o = h->conns; o; o = o->next)
    if (o->peer_len == c->peer_len && memcmp(o->peer, c->peer, c->peer_len) == 0)
      n++;
  return n;
}

/* Every slot is taken: close the idle connection that has waited longest,
 * preferring one that never sent a request, so that a new client is served
 * while any connection is merely being held open. */
static void make_room(pmcp_http *h, phttp_conn *fresh)
{
  phttp_conn *unused = NULL, *idle = NULL;
  /* h->conns is newest first: the last match is the oldest. */
  for (phttp_conn *o = h->conns; o; o = o->next) {
    if (o == fresh || o->state != CONN_IDLE || o->pending_len || o->in_process)
      continue;
    if (!o->used)
      unused = o;
    else
      idle = o;
  }
  phttp_conn *victim = unused ? unused : idle;
  if (victim)
    phttp_conn_close(victim);
}

int phttp_conn_accept(pmcp_http *h)
{
  phttp_conn *c = conn_new(h);
  if (!c) {
    uv_tcp_t *tmp = malloc(sizeof *tmp);
    /* Out of memory: take the connection off the queue and drop it. */
    if (tmp && uv_tcp_init(&h->loop, tmp) == 0 &&
        uv_accept((uv_stream_t *)&h->listener, (uv_stream_t *)tmp) == 0)
      uv_close((uv_handle_t *)tmp, (uv_close_cb)free);
    else
      free(tmp);
    return -1;
  }
  uv_tcp_init(&h->loop, &c->tcp);
  c->tcp.data = c;
  c->handles_open = 2;
  if (uv_accept((uv_stream_t *)&h->listener, (uv_stream_t *)&c->tcp) != 0) {
    hard_close(c);
    return -1;
  }
  uv_tcp_nodelay(&c->tcp, 1);
  peer_address(c);
  int refuse = h->stopping ||
               same_client(h, c) > h->o.max_connections_per_client;
  if (!refuse && h->nconns > h->o.max_connections)
    make_room(h, c);
  if (refuse || h->nconns > h->o.max_connections) {
    static const char busy[] =
      "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
      "Retry-After: 1\r\nConnection: close\r\n\r\n";
    uv_buf_t b = uv_buf_init((char *)busy, sizeof busy - 1);
    uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    hard_close(c);
    return 0;
  }
  /* Until its first request starts, a connection has the header timeout,
   * not the keep-alive one: clients that connect and send nothing must
   * not hold slots for long. */
  arm_timer(c, h->o.header_timeout_ms);
  if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
    c->reading = 1;
  else
    hard_close(c);
  return 0;
}

/* ---- writing ------------------------------------------------------------- */

typedef struct wreq {
  uv_write_t w;
  phttp_conn *c;
  char data[];
} wreq;

static void on_write(uv_write_t *w, int status)
{
  wreq *wr = (wreq *)w;
  phttp_conn *c = wr->c;
  free(wr);
  if (status < 0 && status != UV_ECANCELED && c->state != CONN_CLOSING)
    hard_close(c);
}

void phttp_conn_write(phttp_conn *c, const char *data, size_t len)
{
  if (c->state == CONN_CLOSING || len == 0)
    return;
  if (c->fake) {
    if (c->h->o.testing > 1) /* the fuzz target's trace mode */
      fwrite(data, 1, len, stderr);
    return;
  }
  uv_stream_t *s = (uv_stream_t *)&c->tcp;
  size_t done = 0;
  if (uv_stream_get_write_queue_size(s) == 0) {
    uv_buf_t b = uv_buf_init((char *)data, (unsigned)len);
    int n = uv_try_write(s, &b, 1);
    if (n > 0)
      done = (size_t)n;
    else if (n < 0 && n != UV_EAGAIN) {
      hard_close(c);
      return;
    }
  }
  if (done == len)
    return;
  if (uv_stream_get_write_queue_size(s) + (len - done) > WRITE_QUEUE_MAX) {
    phttp_log(c->h, "closing a connection whose client does not read");
    hard_close(c);
    return;
  }
  wreq *wr = malloc(sizeof *wr + (len - done));
  if (!wr) {
    hard_close(c);
    return;
  }
  wr->c = c;
  memcpy(wr->data, data + done, len - done);
  uv_buf_t b = uv_buf_init(wr->data, (unsigned)(len - done));
  if (uv_write(&wr->w, s, &b, 1, on_write) != 0) {
    free(wr);
    hard_close(c);
  }
}

static const char *reason_phrase(int status)
{
  switch (status) {
  case 200: return "OK";
  case 202: return "Accepted";
  case 204: return "No Content";
  case 400: return "Bad Request";
  case 401: return "Unauthorized";
  case 403: return "Forbidden";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 406: return "Not Acceptable";
  case 408: return "Request Timeout";
  case 409: return "Conflict";
  case 410: return "Gone";
  case 413: return "Content Too Large";
  case 414: return "URI Too Long";
  case 415: return "Unsupported Media Type";
  case 417: return "Expectation Failed";
  case 429: return "Too Many Requests";
  case 431: return "Request Header Fields Too Large";
  case 500: return "Internal Server Error";
  case 503: return "Service Unavailable";
  case 505: return "HTTP Version Not Supported";
  default: return "Error";
  }
}

static int keep_alive(phttp_conn *c)
{
  return c->req.keep_alive && !c->close_after && !c->h->stopping &&
         !(c->peer_eof && !c->pending_len);
}

void phttp_respond(phttp_conn *c, int status, const char *ctype,
                   const char *extra, const char *body, size_t len)
{
  char head[1024];
  int n = snprintf(head, sizeof head,
                   "HTTP/1.1 %d %s\r\n%s%s%sContent-Length: %zu\r\n"
                   "X-Content-Type-Options: nosniff\r\n%s%s\r\n",
                   status, reason_phrase(status),
                   ctype ? "Content-Type: " : "", ctype ? ctype : "",
                   ctype ? "\r\n" : "", len,
                   keep_alive(c) ? (c->req.http_minor ? "" : "Connection: keep-alive\r\n")
                                 : "Connection: close\r\n",
                   extra ? extra : "");
  if (n < 0 || (size_t)n >= sizeof head)
    n = snprintf(head, sizeof head, "HTTP/1.1 500 Internal Server Error\r\n"
                 "Content-Length: 0\r\nConnection: close\r\n\r\n"), len = 0,
    c->close_after = 1;
  if (len && len < 4096) {
    char one[1024 + 4096];
    memcpy(one, head, (size_t)n);
    memcpy(one + n, body, len);
    phttp_conn_write(c, one, (size_t)n + len);
  } else {
    phttp_conn_write(c, head, (size_t)n);
    if (len)
      phttp_conn_write(c, body, len);
  }
  phttp_response_done(c);
}

void phttp_respond_error(phttp_conn *c, int status, int rpc_code,
                         const char *message)
{
  pmcp_buf b = PMCP_BUF_INIT;
  pmcp_buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":%d,\"message\":",
                   rpc_code);
  pmcp_buf_json_string(&b, message, strlen(message));
  pmcp_buf_puts(&b, "},\"id\":null}");
  const char *extra = NULL;
  if (status == 405)
    extra = c->h->o.stateless ? "Allow: POST\r\n" : "Allow: GET, POST, DELETE\r\n";
  if (b.ptr)
    phttp_respond(c, status, "application/json", extra, b.ptr, b.len);
  else
    phttp_respond(c, status, NULL, extra, NULL, 0);
  pmcp_buf_dispose(&b);
}

void phttp_begin_sse(phttp_conn *c, const char *extra)
{
  char head[1024];
  c->chunked = c->req.http_minor >= 1;
  if (!c->chunked)
    c->close_after = 1; /* HTTP/1.0: the body ends with the connection */
  int n = snprintf(head, sizeof head,
                   "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                   "Cache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\n%s%s\r\n",
                   c->chunked ? "Transfer-Encoding: chunked\r\n" : "Connection: close\r\n",
                   extra ? extra : "");
  if (n > 0 && (size_t)n < sizeof head)
    phttp_conn_write(c, head, (size_t)n);
  phttp_conn_set_ping(c);
}

void phttp_sse_event(phttp_conn *c, const char *id, const char *retry,
                     const char *data, size_t len)
{
  pmcp_buf b = PMCP_BUF_INIT;
  size_t lines = 1;
  for (size_t i = 0; i < len; i++)
    if (data[i] == '\n')
      lines++;
  if (pmcp_buf_reserve(&b, len + 64 + 6 * lines + (id ? strlen(id) : 0)) != 0) {
    hard_close(c);
    return;
  }
  if (c->chunked)
    pmcp_buf_puts(&b, "00000000\r\n"); /* size patched below */
  size_t start = b.len;
  if (id) {
    pmcp_buf_puts(&b, "id: ");
    pmcp_buf_puts(&b, id);
    pmcp_buf_putc(&b, '\n');
  }
  if (retry) {
    pmcp_buf_puts(&b, "retry: ");
    pmcp_buf_puts(&b, retry);
    pmcp_buf_putc(&b, '\n');
  }
  if (len)
    pmcp_buf_puts(&b, "event: message\n");
  /* One data: line per line of the message (JSON from the engine has no
   * raw newlines, but the framing must not depend on it). */
  size_t i = 0;
  do {
    size_t j = i;
    while (j < len && data[j] != '\n' && data[j] != '\r')
      j++;
    pmcp_buf_puts(&b, len ? "data: " : "data:");
    pmcp_buf_append(&b, data + i, j - i);
    pmcp_buf_putc(&b, '\n');
    if (j < len && data[j] == '\r' && j + 1 < len && data[j + 1] == '\n')
      j++;
    i = j + 1;
  } while (i < len);
  pmcp_buf_putc(&b, '\n');
  if (c->chunked) {
    char sz[9];
    snprintf(sz, sizeof sz, "%08zx", b.len - start);
    memcpy(b.ptr, sz, 8);
    pmcp_buf_puts(&b, "\r\n");
  }
  if (b.ptr)
    phttp_conn_write(c, b.ptr, b.len);
  pmcp_buf_dispose(&b);
}

void phttp_response_done(phttp_conn *c)
{
  if (c->state == CONN_CLOSING)
    return;
  if (c->chunked) {
    static const char last[] = "0\r\n\r\n";
    phttp_conn_write(c, last, sizeof last - 1);
    c->chunked = 0;
  }
  c->stream = NULL;
  if (c->state == CONN_CLOSING)
    return;
  if (!keep_alive(c)) {
    phttp_conn_close(c);
    return;
  }
  c->state = CONN_IDLE;
  arm_timer(c, c->h->o.idle_timeout_ms);
  /* Requests pipelined behind this one: when we are inside conn_process()
   * its loop takes them; otherwise (an answer that came from a worker)
   * start parsing here. Never recurse. */
  if (!c->in_process && (c->pending_len || (!c->reading && !c->fake)))
    conn_process(c);
}
