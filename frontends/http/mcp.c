/* MCP Streamable HTTP on top of conn.c: the checks of the specification
 * (status codes per header), sessions, and the routing of everything the
 * engine emits.
 *
 * A POST carrying requests gets a *stream*: the place where the messages
 * tagged with its request ids go. With an Accept that admits both JSON and
 * SSE the choice is made by the first message: the final response alone
 * becomes an application/json reply (the fast path); anything before it
 * (progress, log, a sampling or elicitation request, a close-stream hint)
 * turns the reply into an SSE stream that starts with a priming event.
 * SSE events carry ids "<stream>_<seq>" and are kept in a bounded
 * per-session buffer, so a client that lost the stream resumes it with a
 * GET and Last-Event-ID. Messages of no request go to the session's GET
 * stream. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/random.h>

#include <cjson/cJSON.h>

#include "internal.h"

#define MAX_EVENTS 4096

void phttp_log(pmcp_http *h, const char *fmt, ...)
{
  if (!h->o.log)
    return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  h->o.log(line, h->o.log_ud);
}

/* ---- sessions ------------------------------------------------------------ */

static uint64_t hash(const char *s, size_t n)
{
  uint64_t x = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    x = (x ^ (unsigned char)s[i]) * 1099511628211ull;
  return x;
}

static phttp_session *session_find(pmcp_http *h, const char *id, size_t n)
{
  if (!h->table)
    return NULL;
  for (phttp_session *s = h->table[hash(id, n) % h->table_size]; s; s = s->hnext)
    if (strlen(s->id) == n && memcmp(s->id, id, n) == 0)
      return s;
  return NULL;
}

static void list_remove(pmcp_http *h, phttp_session *s)
{
  if (s->prev)
    s->prev->next = s->next;
  else
    h->s_head = s->next;
  if (s->next)
    s->next->prev = s->prev;
  else
    h->s_tail = s->prev;
  s->prev = s->next = NULL;
}

static void list_append(pmcp_http *h, phttp_session *s)
{
  s->prev = h->s_tail;
  s->next = NULL;
  if (h->s_tail)
    h->s_tail->next = s;
  else
    h->s_head = s;
  h->s_tail = s;
}

/* Most recently used last, so eviction takes the head. */
static void session_touch(pmcp_http *h, phttp_session *s)
{
  s->last_active = uv_now(&h->loop);
  if (h->s_tail != s) {
    list_remove(h, s);
    list_append(h, s);
  }
}

static void new_session_id(pmcp_http *h, char out[33])
{
  unsigned char raw[16];
  if (h->o.testing) {
    snprintf(out, 33, "%032llu", (unsigned long long)++h->id_counter);
    return;
  }
  size_t got = 0;
  while (got < sizeof raw) {
    ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
    if (n > 0)
      got += (size_t)n;
  }
  for (int i = 0; i < 16; i++)
    snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

static void stream_free(phttp_stream *st);

static void event_drop_head(phttp_session *s)
{
  phttp_event *ev = s->ev_head;
  s->ev_head = ev->next;
  if (!s->ev_head)
    s->ev_tail = NULL;
  s->ev_bytes -= ev->len;
  s->ev_count--;
  phttp_stream *st = ev->stream;
  st->nevents--;
  if (ev->seq > st->evicted_upto)
    st->evicted_upto = ev->seq;
  free(ev);
  if (st->finished && st->nevents == 0 && !st->conn)
    stream_free(st);
}

/* Drops the events of one stream (its client has received the end). */
static void events_drop_stream(phttp_session *s, phttp_stream *st)
{
  phttp_event **pp = &s->ev_head, *last = NULL;
  while (*pp) {
    phttp_event *ev = *pp;
    if (ev->stream == st) {
      *pp = ev->next;
      s->ev_bytes -= ev->len;
      s->ev_count--;
      st->nevents--;
      free(ev);
    } else {
      last = ev;
      pp = &ev->next;
    }
  }
  s->ev_tail = last;
}

static void stream_unlink(phttp_stream *st)
{
  phttp_session *s = st->s;
  for (phttp_stream **pp = &s->streams; *pp; pp = &(*pp)->next)
    if (*pp == st) {
      *pp = st->next;
      break;
    }
  if (s->standalone == st)
    s->standalone = NULL;
}

static void stream_free(phttp_stream *st)
{
  if (st->nevents)
    events_drop_stream(st->s, st);
  stream_unlink(st);
  for (size_t i = 0; i < st->nids; i++)
    free(st->ids[i].id);
  free(st->ids);
  hbuf_free(&st->collected);
  free(st);
}

static void session_free(pmcp_http *h, phttp_session *s, const char *why)
{
  if (h->server)
    pmcp_server_session_close(h->server, s->id);
  /* Unlink from the table first so messages still queued are dropped. */
  phttp_session **pp = &h->table[hash(s->id, strlen(s->id)) % h->table_size];
  for (; *pp; pp = &(*pp)->hnext)
    if (*pp == s) {
      *pp = s->hnext;
      break;
    }
  list_remove(h, s);
  h->nsessions--;
  h->inflight -= s->inflight < h->inflight ? s->inflight : h->inflight;
  while (s->streams) {
    phttp_stream *st = s->streams;
    phttp_conn *c = st->conn;
    st->conn = NULL;
    if (c) {
      c->stream = NULL;
      if (st->mode == MODE_SSE)
        phttp_response_done(c);
      else
        phttp_respond_error(c, 404, -32001, why);
    }
    stream_free(st);
  }
  while (s->ev_head) {
    phttp_event *ev = s->ev_head;
    s->ev_head = ev->next;
    free(ev);
  }
  s->ev_tail = NULL;
  if (s->nwork) {
    /* A worker still holds it: work_done() frees it. */
    atomic_store(&s->dead, 1);
    s->zombie = 1;
  } else {
    free(s);
  }
  phttp_maybe_finish_shutdown(h);
}

static int table_grow(pmcp_http *h)
{
  size_t n = h->table_size ? h->table_size * 2 : 64;
  phttp_session **t = calloc(n, sizeof *t);
  if (!t)
    return -1;
  for (size_t i = 0; i < h->table_size; i++)
    for (phttp_session *s = h->table[i], *next; s; s = next) {
      next = s->hnext;
      size_t b = hash(s->id, strlen(s->id)) % n;
      s->hnext = t[b];
      t[b] = s;
    }
  free(h->table);
  h->table = t;
  h->table_size = n;
  return 0;
}

int phttp_sessions_init(pmcp_http *h)
{
  return table_grow(h);
}

static int session_busy(const phttp_session *s)
{
  if (s->inflight)
    return 1;
  for (const phttp_stream *st = s->streams; st; st = st->next)
    if (st->conn)
      return 1;
  return 0;
}

/* Returns NULL with *status set (503: no room). */
static phttp_session *session_new(pmcp_http *h, int stateless, int *status)
{
  *status = 503;
  if (!stateless && h->nsessions >= h->o.max_sessions) {
    phttp_session *victim = h->s_head;
    while (victim && (victim->stateless || session_busy(victim)))
      victim = victim->next;
    if (!victim)
      return NULL;
    phttp_log(h, "session limit reached: ending the least recently used idle session");
    session_free(h, victim, "session expired");
  }
  if (h->nsessions + 1 > h->table_size * 2 && table_grow(h) != 0)
    return NULL;
  phttp_session *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->stateless = stateless;
  new_session_id(h, s->id);
  int rc = pmcp_server_session_open(h->server, s->id,
                                    stateless ? PMCP_SESSION_STATELESS : 0, NULL);
  if (rc != 0) {
    free(s);
    *status = 500;
    return NULL;
  }
  size_t b = hash(s->id, strlen(s->id)) % h->table_size;
  s->hnext = h->table[b];
  h->table[b] = s;
  list_append(h, s);
  h->nsessions++;
  s->last_active = uv_now(&h->loop);
  return s;
}

void phttp_sweep_sessions(pmcp_http *h)
{
  uint64_t now = uv_now(&h->loop);
  phttp_session *s = h->s_head;
  while (s) {
    phttp_session *next = s->next;
    if (!s->stateless && !session_busy(s) &&
        now - s->last_active >= h->o.session_idle_ms) {
      phttp_log(h, "session expired after %u ms idle", h->o.session_idle_ms);
      session_free(h, s, "session expired");
    }
    s = next;
  }
}

void phttp_close_all_sessions(pmcp_http *h)
{
  while (h->s_head)
    session_free(h, h->s_head, "server is shutting down");
}

void phttp_end_standalone_streams(pmcp_http *h)
{
  for (phttp_session *s = h->s_head; s; s = s->next)
    if (s->standalone && s->standalone->conn) {
      phttp_conn *c = s->standalone->conn;
      s->standalone->conn = NULL;
      phttp_response_done(c);
    }
}

/* ---- streams ------------------------------------------------------------- */

static void session_header(phttp_session *s, char *out, size_t size)
{
  if (s->stateless)
    out[0] = '\0';
  else
    snprintf(out, size, "Mcp-Session-Id: %s\r\n", s->id);
}

static void stream_start_sse(phttp_stream *st)
{
  st->mode = MODE_SSE;
  phttp_conn *c = st->conn;
  if (!c)
    return;
  char extra[128], id[48], retry[16];
  session_header(st->s, extra, sizeof extra);
  phttp_begin_sse(c, extra);
  /* Priming event: an id and empty data, so that a client cut off before
   * the first real event can still resume (SEP-1699). Only for sessions
   * of protocol 2025-11-25 or later: older clients may fail on the empty
   * data (the TypeScript SDK makes the same choice). */
  if (strcmp(st->s->proto, "2025-11-25") < 0)
    return;
  snprintf(id, sizeof id, "%u_%llu", st->no,
           (unsigned long long)++st->s->next_seq);
  snprintf(retry, sizeof retry, "%u", c->h->o.sse_retry_ms);
  phttp_sse_event(c, id, retry, "", 0);
}

static void stream_emit(phttp_stream *st, const char *data, size_t len)
{
  phttp_session *s = st->s;
  uint64_t seq = ++s->next_seq;
  if (st->conn) {
    char id[48];
    snprintf(id, sizeof id, "%u_%llu", st->no, (unsigned long long)seq);
    phttp_sse_event(st->conn, id, NULL, data, len);
  }
  phttp_event *ev = malloc(sizeof *ev + len);
  if (!ev) {
    if (seq > st->evicted_upto)
      st->evicted_upto = seq;
    return;
  }
  ev->next = NULL;
  ev->stream = st;
  ev->seq = seq;
  ev->len = len;
  memcpy(ev->data, data, len);
  if (s->ev_tail)
    s->ev_tail->next = ev;
  else
    s->ev_head = ev;
  s->ev_tail = ev;
  s->ev_bytes += len;
  s->ev_count++;
  st->nevents++;
}

static void session_trim(pmcp_http *h, phttp_session *s)
{
  while (s->ev_head && (s->ev_bytes > h->o.replay_bytes || s->ev_count > MAX_EVENTS)) {
    /* Never drop the event just added to a stream that is still live:
     * it has been written already, so dropping it is safe. */
    event_drop_head(s);
  }
}

static phttp_stream *stream_new(phttp_session *s)
{
  phttp_stream *st = calloc(1, sizeof *st);
  if (!st)
    return NULL;
  st->s = s;
  st->no = ++s->next_stream;
  st->next = s->streams;
  s->streams = st;
  return st;
}

static void json_reply(pmcp_http *h, phttp_stream *st)
{
  phttp_conn *c = st->conn;
  if (!c)
    return;
  st->conn = NULL;
  c->stream = NULL;
  char extra[128];
  session_header(st->s, extra, sizeof extra);
  if (st->batch) {
    pmcp_buf b = PMCP_BUF_INIT;
    hbuf_putc(&b, '[');
    hbuf_append(&b, st->collected.ptr, st->collected.len);
    hbuf_putc(&b, ']');
    for (size_t i = 0; b.ptr && i < b.len; i++)
      if (b.ptr[i] == '\x1e')
        b.ptr[i] = ',';
    phttp_respond(c, 200, "application/json", extra, b.ptr, b.len);
    hbuf_free(&b);
  } else {
    phttp_respond(c, 200, "application/json", extra, st->collected.ptr,
                  st->collected.len);
  }
}

/* Every id of the stream had its final message. */
static void stream_finish(pmcp_http *h, phttp_stream *st)
{
  phttp_session *s = st->s;
  if (st->mode != MODE_SSE) {
    if (st->ncollected)
      json_reply(h, st);
    else if (st->conn) {
      /* Only cancelled requests: nothing to say but that we are done. */
      phttp_conn *c = st->conn;
      st->conn = NULL;
      c->stream = NULL;
      phttp_respond(c, 202, NULL, NULL, NULL, 0);
    }
    stream_free(st);
  } else if (st->conn) {
    phttp_conn *c = st->conn;
    st->conn = NULL;
    c->stream = NULL;
    phttp_response_done(c);
    stream_free(st);
  } else {
    st->finished = 1; /* kept for a client that resumes */
    if (st->nevents == 0)
      stream_free(st);
  }
  if (s->stateless)
    session_free(h, s, "request finished");
}

static void route_standalone(pmcp_http *h, phttp_session *s, const char *data,
                             size_t len)
{
  phttp_stream *st = s->standalone;
  if (!st)
    return; /* no GET stream was ever opened: nobody to tell */
  stream_emit(st, data, len);
  session_trim(h, s);
}

static phttp_stream *find_pending(phttp_session *s, const char *id, size_t *idx)
{
  for (phttp_stream *st = s->streams; st; st = st->next)
    for (size_t i = 0; i < st->nids; i++)
      if (!st->ids[i].done && strcmp(st->ids[i].id, id) == 0) {
        *idx = i;
        return st;
      }
  return NULL;
}

/* The answer to initialize: an error must not leave a session behind; a
 * result tells the protocol version, which decides on priming events. */
static void initialize_answered(phttp_session *s, const char *data, size_t len)
{
  cJSON *j = cJSON_ParseWithLength(data, len);
  const cJSON *res = cJSON_GetObjectItemCaseSensitive(j, "result");
  const cJSON *ver = cJSON_GetObjectItemCaseSensitive(res, "protocolVersion");
  if (!res) {
    s->issued = -1;
  } else {
    s->issued = 1;
    if (cJSON_IsString(ver))
      snprintf(s->proto, sizeof s->proto, "%s", ver->valuestring);
  }
  cJSON_Delete(j);
}

static void deliver_to_stream(pmcp_http *h, phttp_stream *st, size_t idx,
                              const phttp_qmsg *m)
{
  phttp_session *s = st->s;
  int final = m->final || m->kind == PMCP_OUT_END;
  if (m->kind == PMCP_OUT_CLOSE_STREAM) {
    if (st->mode == MODE_LAZY)
      stream_start_sse(st);
    if (st->mode == MODE_SSE && st->conn) {
      phttp_conn *c = st->conn;
      st->conn = NULL;
      c->stream = NULL;
      phttp_response_done(c);
    }
    return;
  }
  if (m->data && !final && st->mode != MODE_SSE) {
    if (st->mode == MODE_JSON) {
      /* The client accepts JSON only: what belongs to the call goes to the
       * session's GET stream, if it has one. */
      route_standalone(h, s, m->data, m->len);
      return;
    }
    stream_start_sse(st);
    if (st->ncollected) {
      /* A batch whose first responses came before this message. */
      const char *p = st->collected.ptr, *end = p + st->collected.len;
      while (p < end) {
        const char *q = memchr(p, '\x1e', (size_t)(end - p));
        if (!q)
          q = end;
        stream_emit(st, p, (size_t)(q - p));
        p = q + 1;
      }
      st->ncollected = 0;
    }
  }
  if (m->data) {
    if (st->mode == MODE_SSE) {
      stream_emit(st, m->data, m->len);
    } else {
      /* Collected as a JSON array body; \x1e separates entries until we
       * know whether the reply stays JSON (then commas are written). */
      if (st->ncollected)
        hbuf_putc(&st->collected, '\x1e');
      hbuf_append(&st->collected, m->data, m->len);
      st->ncollected++;
    }
    if (st->initialize && final)
      initialize_answered(s, m->data, m->len);
  }
  if (final) {
    st->ids[idx].done = 1;
    st->ndone++;
    s->inflight--;
    h->inflight--;
    if (st->ndone == st->nids) {
      /* A failed initialize: reply without a session id and forget the
       * session (stream_finish ends "stateless" sessions). */
      if (st->initialize && s->issued < 0)
        s->stateless = 1;
      stream_finish(h, st);
    } else {
      session_trim(h, s);
    }
  } else {
    session_trim(h, s);
  }
  phttp_maybe_finish_shutdown(h);
}

void phttp_deliver(pmcp_http *h, phttp_qmsg *m)
{
  phttp_session *s = session_find(h, m->session, strlen(m->session));
  if (!s)
    return; /* ended meanwhile */
  if (m->related) {
    size_t idx;
    phttp_stream *st = find_pending(s, m->related, &idx);
    if (!st) {
      /* Another spelling of the same id (e.g. 1.0 for 1): compare the
       * canonical forms. */
      cJSON *j = cJSON_Parse(m->related);
      char *canon = j ? cJSON_PrintUnformatted(j) : NULL;
      if (canon)
        st = find_pending(s, canon, &idx);
      free(canon);
      cJSON_Delete(j);
    }
    if (st) {
      deliver_to_stream(h, st, idx, m);
      return;
    }
  }
  if (m->data)
    route_standalone(h, s, m->data, m->len);
}

void phttp_conn_lost(phttp_conn *c)
{
  phttp_stream *st = c->stream;
  c->stream = NULL;
  if (!st)
    return;
  st->conn = NULL;
  pmcp_http *h = c->h;
  phttp_session *s = st->s;
  if (s->stateless) {
    /* Nobody can resume a stateless request: cancel it. */
    session_free(h, s, "client went away");
    return;
  }
  if (st->standalone)
    return;
  if (st->mode != MODE_SSE && st->ndone == st->nids)
    stream_free(st);
}

/* ---- header checks ------------------------------------------------------- */

static int host_allowed(pmcp_http *h, const char *name)
{
  for (size_t i = 0; i < h->n_allow_hosts; i++)
    if (strcmp(h->allow_hosts[i], name) == 0)
      return 1;
  return 0;
}

static void set_reject(phttp_conn *c, int status, const char *reason)
{
  c->req.status = status;
  c->req.reason = reason;
}

void phttp_check_headers(phttp_conn *c)
{
  pmcp_http *h = c->h;
  phttp_req *r = &c->req;
  size_t n;
  int count;
  char name[256];
  if (r->status)
    return;
  /* DNS rebinding: a browser tricked into talking to us sends a foreign
   * Host (and Origin); refuse before anything else. */
  const char *host = phttp_header(r, "host", &n, &count);
  if (count > 1)
    { set_reject(c, 400, "more than one Host header"); return; }
  if (!host) {
    if (r->http_minor >= 1)
      { set_reject(c, 400, "missing Host header"); return; }
  } else if (phttp_host_name(host, n, name, sizeof name) != 0) {
    { set_reject(c, 400, "malformed Host header"); return; }
  } else if (!host_allowed(h, name)) {
    { set_reject(c, 403, "Host not allowed"); return; }
  }
  const char *origin = phttp_header(r, "origin", &n, &count);
  if (count > 1)
    { set_reject(c, 400, "more than one Origin header"); return; }
  if (origin) {
    int ok = 0;
    for (size_t i = 0; i < h->n_allow_origins && !ok; i++)
      ok = strlen(h->allow_origins[i]) == n &&
           strncasecmp(h->allow_origins[i], origin, n) == 0;
    if (!ok && phttp_origin_name(origin, n, name, sizeof name) == 0)
      ok = host_allowed(h, name);
    if (!ok)
      { set_reject(c, 403, "Origin not allowed"); return; }
  }
  const char *url = r->arena + r->url;
  size_t ulen = r->url_len;
  const char *q = memchr(url, '?', ulen);
  if (q)
    ulen = (size_t)(q - url);
  if (ulen != strlen(h->endpoint) || memcmp(url, h->endpoint, ulen) != 0)
    { set_reject(c, 404, "not found"); return; }
  int m = r->method;
  if (m != HTTP_POST && (h->o.stateless || (m != HTTP_GET && m != HTTP_DELETE)))
  {
    set_reject(c, 405, h->o.stateless
                           ? "this endpoint is stateless: only POST is allowed"
                           : "method not allowed");
    return;
  }
  const char *acc = phttp_header(r, "accept", &n, &count);
  unsigned accept = phttp_accept(acc, acc ? n : 0);
  if (m == HTTP_POST) {
    if (!(accept & (ACCEPT_JSON | ACCEPT_SSE)))
      { set_reject(c, 406, "Not Acceptable: Accept must admit application/json or text/event-stream"); return; }
    const char *ct = phttp_header(r, "content-type", &n, &count);
    if (!ct || count > 1 || !phttp_is_json_type(ct, n))
      { set_reject(c, 415, "Unsupported Media Type: Content-Type must be application/json"); return; }
  } else if (m == HTTP_GET && !(accept & ACCEPT_SSE)) {
    { set_reject(c, 406, "Not Acceptable: Accept must admit text/event-stream"); return; }
  }
  const char *ver = phttp_header(r, "mcp-protocol-version", &n, &count);
  if (ver && (count > 1 || !phttp_version_supported(ver, n)))
    { set_reject(c, 400, "Bad Request: unsupported MCP-Protocol-Version"); return; }
}

/* ---- requests ------------------------------------------------------------ */

/* Looks up the session of a request. Answers and returns NULL when it is
 * missing (400), malformed (400) or unknown (404). */
static phttp_session *request_session(phttp_conn *c)
{
  size_t n;
  int count;
  const char *sid = phttp_header(&c->req, "mcp-session-id", &n, &count);
  if (!sid) {
    phttp_respond_error(c, 400, -32000, "Bad Request: Mcp-Session-Id header is required");
    return NULL;
  }
  if (count > 1 || !phttp_valid_session_id(sid, n)) {
    phttp_respond_error(c, 400, -32000, "Bad Request: malformed Mcp-Session-Id");
    return NULL;
  }
  phttp_session *s = session_find(c->h, sid, n);
  if (!s || s->issued <= 0) {
    phttp_respond_error(c, 404, -32001, "Session not found");
    return NULL;
  }
  session_touch(c->h, s);
  return s;
}

enum { MSG_INVALID = 0, MSG_REQUEST, MSG_NOTIFICATION, MSG_RESPONSE };

static int classify(const cJSON *m, const cJSON **id_out, int *is_init)
{
  if (!cJSON_IsObject(m))
    return MSG_INVALID;
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(m, "method");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
  *id_out = id;
  if (method) {
    if (!cJSON_IsString(method))
      return MSG_INVALID;
    if (!id)
      return MSG_NOTIFICATION;
    if (!cJSON_IsString(id) && !cJSON_IsNumber(id))
      return MSG_INVALID;
    if (strcmp(method->valuestring, "initialize") == 0)
      *is_init = 1;
    return MSG_REQUEST;
  }
  if (id && (cJSON_GetObjectItemCaseSensitive(m, "result") ||
             cJSON_GetObjectItemCaseSensitive(m, "error")))
    return MSG_RESPONSE;
  return MSG_INVALID;
}

/* Requests that run handlers the host wrote (tools, resource reads,
 * prompts, completions): they may block, so they never run on the loop. */
static int runs_handler(const cJSON *m)
{
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(m, "method");
  static const char *const heavy[] = {"tools/call", "resources/read",
                                      "prompts/get", "completion/complete"};
  if (!cJSON_IsString(method) || !cJSON_GetObjectItemCaseSensitive(m, "id"))
    return 0;
  for (size_t i = 0; i < sizeof heavy / sizeof heavy[0]; i++)
    if (strcmp(method->valuestring, heavy[i]) == 0)
      return 1;
  return 0;
}

void phttp_answer_locally(pmcp_http *h, phttp_session *s, const char *id,
                          int rc)
{
  char buf[512];
  char text[160];
  snprintf(text, sizeof text, "%s", rc == PMCP_ETOOBIG ? "message too large"
                                                      : pmcp_strerror(rc));
  snprintf(buf, sizeof buf,
           "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,\"message\":\"%s\"}}",
           id, pmcp_error_rpc_code(rc), text);
  phttp_qmsg m = {0};
  m.kind = PMCP_OUT_RESPONSE;
  m.final = 1;
  m.session = s->id;
  m.related = (char *)id;
  m.data = buf;
  m.len = strlen(buf);
  phttp_deliver(h, &m);
}

static void handle_post(phttp_conn *c)
{
  pmcp_http *h = c->h;
  phttp_req *r = &c->req;
  cJSON *root = cJSON_ParseWithLength(r->body.ptr ? r->body.ptr : "", r->body.len);
  if (!root) {
    phttp_respond_error(c, 400, -32700, "Parse error: the body is not valid JSON");
    return;
  }
  int batch = cJSON_IsArray(root);
  int nmsg = batch ? cJSON_GetArraySize(root) : 1;
  if (batch && nmsg == 0) {
    cJSON_Delete(root);
    phttp_respond_error(c, 400, -32600, "Invalid Request: empty batch");
    return;
  }
  int nreq = 0, is_init = 0;
  const cJSON *item = batch ? root->child : root;
  for (const cJSON *m = item; m; m = batch ? m->next : NULL) {
    const cJSON *id;
    int k = classify(m, &id, &is_init);
    if (k == MSG_INVALID) {
      cJSON_Delete(root);
      phttp_respond_error(c, 400, -32600, "Invalid Request: not a JSON-RPC request, notification or response");
      return;
    }
    nreq += k == MSG_REQUEST;
  }
  phttp_session *s;
  if (h->o.stateless) {
    int status;
    s = session_new(h, 1, &status);
    if (!s) {
      cJSON_Delete(root);
      phttp_respond_error(c, status, -32603, "cannot open a session");
      return;
    }
    s->issued = 1;
    /* No negotiation to remember: the request says its version (absent:
     * 2025-03-26, as the specification tells servers to assume). */
    size_t vn;
    int vc;
    const char *v = phttp_header(r, "mcp-protocol-version", &vn, &vc);
    snprintf(s->proto, sizeof s->proto, "%.*s", v ? (int)(vn < 15 ? vn : 15) : 10,
             v ? v : "2025-03-26");
  } else if (is_init && !phttp_header(r, "mcp-session-id", &(size_t){0}, &(int){0})) {
    if (batch) {
      cJSON_Delete(root);
      phttp_respond_error(c, 400, -32600, "Invalid Request: initialize must not be part of a batch");
      return;
    }
    int status;
    s = session_new(h, 0, &status);
    if (!s) {
      cJSON_Delete(root);
      phttp_respond_error(c, status, -32000, status == 503
                          ? "too many sessions: try again later"
                          : "cannot open a session");
      return;
    }
  } else {
    s = request_session(c);
    if (!s) {
      cJSON_Delete(root);
      return;
    }
  }
  if (batch && !s->stateless && s->issued > 0) {
    char ver[32];
    if (pmcp_server_session_protocol(h->server, s->id, ver, sizeof ver) == 0 &&
        strcmp(ver, "2025-06-18") >= 0) {
      cJSON_Delete(root);
      phttp_respond_error(c, 400, -32600, "Invalid Request: JSON-RPC batches are not allowed by the negotiated protocol version");
      return;
    }
  }
  if (nreq == 0) {
    /* Notifications and responses only: accepted, nothing to wait for. */
    if (batch) {
      for (const cJSON *m = root->child; m; m = m->next) {
        char *t = cJSON_PrintUnformatted(m);
        if (t)
          pmcp_server_handle(h->server, s->id, t, strlen(t));
        free(t);
      }
    } else {
      pmcp_server_handle(h->server, s->id, r->body.ptr, r->body.len);
    }
    cJSON_Delete(root);
    if (s->stateless)
      session_free(h, s, "request finished");
    phttp_respond(c, 202, NULL, NULL, NULL, 0);
    phttp_drain_queue(h);
    return;
  }
  if (s->inflight + (unsigned)nreq > h->o.max_inflight) {
    cJSON_Delete(root);
    phttp_respond_error(c, 429, -32000, "too many requests in flight in this session");
    return;
  }
  phttp_stream *st = stream_new(s);
  if (!st || !(st->ids = calloc((size_t)nreq, sizeof *st->ids))) {
    if (st)
      stream_free(st);
    cJSON_Delete(root);
    phttp_respond_error(c, 503, -32603, "out of memory");
    return;
  }
  for (const cJSON *m = item; m; m = batch ? m->next : NULL) {
    const cJSON *id;
    int dummy = 0;
    if (classify(m, &id, &dummy) != MSG_REQUEST)
      continue;
    char *canon = cJSON_PrintUnformatted(id);
    size_t tmp;
    if (!canon || find_pending(s, canon, &tmp)) {
      free(canon);
      stream_free(st);
      cJSON_Delete(root);
      phttp_respond_error(c, 409, -32600, "Invalid Request: a request with this id is already in progress in this session");
      return;
    }
    st->ids[st->nids++].id = canon;
  }
  st->batch = batch;
  st->initialize = is_init && !s->stateless && s->issued == 0;
  size_t an;
  int acount;
  const char *acc = phttp_header(r, "accept", &an, &acount);
  unsigned accept = phttp_accept(acc, acc ? an : 0);
  st->mode = accept == ACCEPT_JSON ? MODE_JSON
           : accept == ACCEPT_SSE ? MODE_SSE : MODE_LAZY;
  st->conn = c;
  c->stream = st;
  s->inflight += (unsigned)nreq;
  h->inflight += (unsigned)nreq;
  if (st->mode == MODE_SSE)
    stream_start_sse(st);
  /* Keep our own copy of the session id: an inline answer may end a
   * stateless session while we still hand it messages. */
  char sid[65];
  snprintf(sid, sizeof sid, "%s", s->id);
  int offload = 0;
  for (const cJSON *m = item; m && !h->o.testing && !h->o.handlers_inline;
       m = batch ? m->next : NULL)
    offload |= runs_handler(m);
  if (offload) {
    size_t n = batch ? (size_t)nmsg : 1, k = 0;
    phttp_work *wk = calloc(1, sizeof *wk + n * sizeof wk->msgs[0]);
    int ok = wk != NULL;
    for (size_t i = 0; ok && i < n; i++) {
      const cJSON *m = batch ? cJSON_GetArrayItem(root, (int)i) : root;
      const cJSON *id;
      int dummy = 0;
      if (batch) {
        wk->msgs[i].data = cJSON_PrintUnformatted(m);
      } else if ((wk->msgs[i].data = malloc(r->body.len + 1)) != NULL) {
        memcpy(wk->msgs[i].data, r->body.ptr, r->body.len);
        wk->msgs[i].data[r->body.len] = '\0';
      }
      ok = wk->msgs[i].data != NULL;
      wk->msgs[i].len = ok ? (batch ? strlen(wk->msgs[i].data) : r->body.len) : 0;
      if (classify(m, &id, &dummy) == MSG_REQUEST)
        wk->msgs[i].id = st->ids[k++].id;
      wk->n = i + 1;
    }
    if (ok) {
      wk->h = h;
      wk->s = s;
      s->nwork++;
      phttp_pool_submit(h, wk);
      cJSON_Delete(root);
      return;
    }
    if (wk) {
      for (size_t i = 0; i < wk->n; i++)
        free(wk->msgs[i].data);
      free(wk);
    }
    /* Could not hand it over: answer every request with the failure. */
    for (size_t i = 0; i < st->nids; i++)
      if (!st->ids[i].done && session_find(h, sid, strlen(sid)))
        phttp_answer_locally(h, s, st->ids[i].id, PMCP_ENOMEM);
  } else if (!batch) {
    int rc = pmcp_server_handle(h->server, sid, r->body.ptr, r->body.len);
    if (rc != 0)
      phttp_answer_locally(h, s, st->ids[0].id, rc);
  } else {
    size_t k = 0;
    for (const cJSON *m = root->child; m; m = m->next) {
      const cJSON *id;
      int dummy = 0;
      int kind = classify(m, &id, &dummy);
      char *t = cJSON_PrintUnformatted(m);
      int rc = t ? pmcp_server_handle(h->server, sid, t, strlen(t)) : PMCP_ENOMEM;
      free(t);
      if (kind == MSG_REQUEST) {
        if (rc != 0 && session_find(h, sid, strlen(sid)))
          phttp_answer_locally(h, s, st->ids[k].id, rc);
        k++;
      }
    }
  }
  cJSON_Delete(root);
  phttp_drain_queue(h);
}

static void handle_get(phttp_conn *c)
{
  pmcp_http *h = c->h;
  phttp_session *s = request_session(c);
  if (!s)
    return;
  size_t n;
  int count;
  const char *last = phttp_header(&c->req, "last-event-id", &n, &count);
  char extra[128];
  session_header(s, extra, sizeof extra);
  if (last) {
    uint32_t no;
    uint64_t seq;
    if (count > 1 || phttp_event_id(last, n, &no, &seq) != 0) {
      phttp_respond_error(c, 400, -32000, "Bad Request: malformed Last-Event-ID");
      return;
    }
    phttp_stream *st = s->streams;
    while (st && st->no != no)
      st = st->next;
    if (!st || seq < st->evicted_upto || seq > s->next_seq) {
      phttp_respond_error(c, 410, -32000, "the events after Last-Event-ID are no longer available");
      return;
    }
    if (st->conn) {
      if (st->standalone) {
        phttp_respond_error(c, 409, -32000, "Conflict: an SSE stream is already open for this session");
        return;
      }
      /* The client came back on a new connection: the old one is stale. */
      phttp_conn *old = st->conn;
      st->conn = NULL;
      old->stream = NULL;
      phttp_response_done(old);
    }
    st->conn = c;
    c->stream = st;
    phttp_begin_sse(c, extra);
    for (phttp_event *ev = s->ev_head; ev; ev = ev->next)
      if (ev->stream == st && ev->seq > seq) {
        char id[48];
        snprintf(id, sizeof id, "%u_%llu", st->no, (unsigned long long)ev->seq);
        phttp_sse_event(c, id, NULL, ev->data, ev->len);
      }
    if (st->finished) {
      st->conn = NULL;
      c->stream = NULL;
      phttp_response_done(c);
      stream_free(st);
    }
    return;
  }
  phttp_stream *st = s->standalone;
  if (st && st->conn) {
    phttp_respond_error(c, 409, -32000, "Conflict: an SSE stream is already open for this session");
    return;
  }
  if (!st) {
    st = stream_new(s);
    if (!st) {
      phttp_respond_error(c, 503, -32603, "out of memory");
      return;
    }
    st->standalone = 1;
    st->mode = MODE_SSE;
    s->standalone = st;
  }
  st->conn = c;
  c->stream = st;
  stream_start_sse(st);
  (void)h;
}

static void handle_delete(phttp_conn *c)
{
  phttp_session *s = request_session(c);
  if (!s)
    return;
  session_free(c->h, s, "session terminated");
  phttp_respond(c, 204, NULL, NULL, NULL, 0);
}

void phttp_handle_request(phttp_conn *c)
{
  switch (c->req.method) {
  case HTTP_POST:
    handle_post(c);
    break;
  case HTTP_GET:
    handle_get(c);
    break;
  case HTTP_DELETE:
    handle_delete(c);
    break;
  default:
    phttp_respond_error(c, 405, -32000, "method not allowed");
    break;
  }
}
