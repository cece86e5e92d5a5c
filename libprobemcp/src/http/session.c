/* SPDX-License-Identifier: MIT */
/* MCP Streamable HTTP state: sessions, streams, the SSE replay buffer and
 * the routing of everything the engine emits (requests are in request.c).
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

unsigned phttp_principal_inflight(pmcp_http *h, void *principal, int delta)
{
  if (!principal)
    return 0;
  struct phttp_pcount **pp = &h->pcounts;
  while (*pp && (*pp)->principal != principal)
    pp = &(*pp)->next;
  unsigned before = *pp ? (*pp)->n : 0;
  if (delta == 0)
    return before;
  if (!*pp) {
    if (delta < 0)
      return 0;
    struct phttp_pcount *e = calloc(1, sizeof *e);
    if (!e)
      return before; /* not counted: the global limit still holds */
    e->principal = principal;
    *pp = e;
  }
  struct phttp_pcount *e = *pp;
  if (delta < 0 && (unsigned)-delta >= e->n) {
    *pp = e->next;
    free(e);
  } else {
    e->n = (unsigned)((int)e->n + delta);
  }
  return before;
}

static uint64_t hash(const char *s, size_t n)
{
  uint64_t x = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    x = (x ^ (unsigned char)s[i]) * 1099511628211ull;
  return x;
}

phttp_session *phttp_session_find(pmcp_http *h, const char *id, size_t n)
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
void phttp_session_touch(pmcp_http *h, phttp_session *s)
{
  s->last_active = uv_now(&h->loop);
  if (h->s_tail != s) {
    list_remove(h, s);
    list_append(h, s);
  }
}

static void new_session_id(pmcp_http *h, int stateless, char out[33])
{
  unsigned char raw[16];
  if (h->o.testing) {
    snprintf(out, 33, "%032llu", (unsigned long long)++h->id_counter);
    return;
  }
  /* A stateless session (one request) never leaves the server: a counter
   * is enough, and its "s" prefix is no id a client could send. */
  if (stateless) {
    /* (by hand, not snprintf: one per modern-era request) */
    char digits[21];
    int n = 0;
    for (uint64_t v = ++h->id_counter; v || !n; v /= 10)
      digits[n++] = (char)('0' + v % 10);
    out[0] = 's';
    for (int i = 0; i < n; i++)
      out[1 + i] = digits[n - 1 - i];
    out[1 + n] = '\0';
    return;
  }
  size_t got = 0;
  while (got < sizeof raw) {
    ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
    if (n > 0)
      got += (size_t)n;
  }
  static const char hex[] = "0123456789abcdef";
  for (int i = 0; i < 16; i++) {
    out[2 * i] = hex[raw[i] >> 4];
    out[2 * i + 1] = hex[raw[i] & 15];
  }
  out[32] = '\0';
}

void phttp_stream_free(phttp_stream *st);

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
    phttp_stream_free(st);
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

void phttp_stream_free(phttp_stream *st)
{
  if (st->nevents)
    events_drop_stream(st->s, st);
  stream_unlink(st);
  for (size_t i = 0; i < st->nids; i++)
    free(st->ids[i].id);
  free(st->ids);
  pmcp_buf_dispose(&st->collected);
  free(st);
}

void phttp_session_free(pmcp_http *h, phttp_session *s, const char *why)
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
  if (s->inflight)
    phttp_principal_inflight(h, s->principal, -(int)s->inflight);
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
    phttp_stream_free(st);
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
    phttp_session_release(h, s);
  }
  phttp_maybe_finish_shutdown(h);
}

#define SPARE_MAX 16

void phttp_session_release(pmcp_http *h, phttp_session *s)
{
  if (h->n_spare >= SPARE_MAX) {
    free(s);
    return;
  }
  s->hnext = h->spare;
  h->spare = s;
  h->n_spare++;
}

void phttp_sessions_free_spare(pmcp_http *h)
{
  while (h->spare) {
    phttp_session *s = h->spare;
    h->spare = s->hnext;
    free(s);
  }
  h->n_spare = 0;
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

static int session_attached(const phttp_session *s)
{
  for (const phttp_stream *st = s->streams; st; st = st->next)
    if (st->conn)
      return 1;
  return 0;
}

static int session_busy(const phttp_session *s)
{
  return s->inflight || session_attached(s);
}

/* Returns NULL with *status set (503: no room). */
phttp_session *phttp_session_new(pmcp_http *h, int stateless, void *principal,
                                 int *status)
{
  *status = 503;
  if (!stateless && h->nsessions >= h->o.max_sessions) {
    phttp_session *victim = h->s_head;
    while (victim && (victim->stateless || session_busy(victim)))
      victim = victim->next;
    if (!victim)
      return NULL;
    phttp_log(h, "session limit reached: ending the least recently used idle session");
    phttp_session_free(h, victim, "session expired");
  }
  if (h->nsessions + 1 > h->table_size * 2 && table_grow(h) != 0)
    return NULL;
  phttp_session *s = h->spare;
  if (s) {
    h->spare = s->hnext;
    h->n_spare--;
    memset(s, 0, sizeof *s);
  } else if (!(s = calloc(1, sizeof *s))) {
    return NULL;
  }
  s->stateless = stateless;
  s->principal = principal;
  new_session_id(h, stateless, s->id);
  int rc = pmcp_server_session_open(h->server, s->id,
                                    stateless ? PMCP_SESSION_STATELESS : 0, principal);
  if (rc != 0) {
    phttp_session_release(h, s);
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
    /* Requests in flight keep a session only while a connection waits on
     * one of its streams: a client that went away and never came back
     * for its answers must not hold the session (and its slots) forever. */
    if (!s->stateless && !session_attached(s) &&
        now - s->last_active >= h->o.session_idle_ms) {
      phttp_log(h, "session expired after %u ms idle%s", h->o.session_idle_ms,
                s->inflight ? " (its requests' client went away)" : "");
      phttp_session_free(h, s, "session expired");
    }
    s = next;
  }
}

void phttp_end_detached_sessions(pmcp_http *h)
{
  for (phttp_session *s = h->s_head, *next; s; s = next) {
    next = s->next;
    if (s->inflight && !session_attached(s))
      phttp_session_free(h, s, "server is shutting down");
  }
}

void phttp_close_all_sessions(pmcp_http *h)
{
  while (h->s_head)
    phttp_session_free(h, h->s_head, "server is shutting down");
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

void phttp_session_header(phttp_session *s, char *out, size_t size)
{
  if (s->stateless)
    out[0] = '\0';
  else
    snprintf(out, size, "Mcp-Session-Id: %s\r\n", s->id);
}

void phttp_stream_start_sse(phttp_stream *st)
{
  st->mode = MODE_SSE;
  phttp_conn *c = st->conn;
  if (!c)
    return;
  char extra[128], id[48], retry[16];
  phttp_session_header(st->s, extra, sizeof extra);
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

phttp_stream *phttp_stream_new(phttp_session *s)
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
  phttp_session_header(st->s, extra, sizeof extra);
  if (st->batch) {
    pmcp_buf b = PMCP_BUF_INIT;
    pmcp_buf_putc(&b, '[');
    pmcp_buf_append(&b, st->collected.ptr, st->collected.len);
    pmcp_buf_putc(&b, ']');
    for (size_t i = 0; b.ptr && i < b.len; i++)
      if (b.ptr[i] == '\x1e')
        b.ptr[i] = ',';
    phttp_respond(c, 200, "application/json", extra, b.ptr, b.len);
    pmcp_buf_dispose(&b);
  } else {
    phttp_respond(c, st->status ? st->status : 200, "application/json", extra,
                  st->collected.ptr, st->collected.len);
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
    phttp_stream_free(st);
  } else if (st->conn) {
    phttp_conn *c = st->conn;
    st->conn = NULL;
    c->stream = NULL;
    phttp_response_done(c);
    phttp_stream_free(st);
  } else {
    st->finished = 1; /* kept for a client that resumes */
    if (st->nevents == 0)
      phttp_stream_free(st);
  }
  if (s->stateless)
    phttp_session_free(h, s, "request finished");
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

phttp_stream *phttp_find_pending(phttp_session *s, const char *id, size_t *idx)
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
 * result tells the protocol version, which decides on priming events. The
 * engine says both (it has negotiated before it answers). */
static void initialize_answered(pmcp_http *h, phttp_session *s)
{
  if (!pmcp_server_session_ready(h->server, s->id)) {
    s->issued = -1;
    return;
  }
  s->issued = 1;
  char ver[sizeof s->proto];
  if (pmcp_server_session_protocol(h->server, s->id, ver, sizeof ver) == 0)
    snprintf(s->proto, sizeof s->proto, "%s", ver);
}

static void deliver_to_stream(pmcp_http *h, phttp_stream *st, size_t idx,
                              const phttp_qmsg *m)
{
  phttp_session *s = st->s;
  int final = m->final || m->kind == PMCP_OUT_END;
  if (m->kind == PMCP_OUT_CLOSE_STREAM) {
    if (st->mode == MODE_LAZY)
      phttp_stream_start_sse(st);
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
    phttp_stream_start_sse(st);
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
  if (m->data && final && m->http_status && !st->batch)
    st->status = m->http_status;
  if (m->data) {
    if (st->mode == MODE_SSE) {
      stream_emit(st, m->data, m->len);
    } else {
      /* Collected as a JSON array body; \x1e separates entries until we
       * know whether the reply stays JSON (then commas are written). */
      if (st->ncollected)
        pmcp_buf_putc(&st->collected, '\x1e');
      pmcp_buf_append(&st->collected, m->data, m->len);
      st->ncollected++;
    }
    if (st->initialize && final)
      initialize_answered(h, s);
  }
  if (final) {
    st->ids[idx].done = 1;
    st->ndone++;
    s->inflight--;
    h->inflight--;
    phttp_principal_inflight(h, s->principal, -1);
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
  phttp_session *s = phttp_session_find(h, m->session, strlen(m->session));
  if (!s)
    return; /* ended meanwhile */
  if (m->related) {
    size_t idx;
    /* Pending ids are kept as the engine writes related_id
     * (pmcp_message_read): compared as they are. */
    phttp_stream *st = phttp_find_pending(s, m->related, &idx);
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
    phttp_session_free(h, s, "client went away");
    return;
  }
  if (st->standalone)
    return;
  if (st->mode != MODE_SSE && st->ndone == st->nids)
    phttp_stream_free(st);
}

