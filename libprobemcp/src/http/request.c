/* SPDX-License-Identifier: MIT */
/* MCP Streamable HTTP requests: the checks the specification asks of
 * every request (status codes per header, DNS-rebinding protection), then
 * POST (JSON-RPC in, a stream or a JSON reply out), GET (the session's SSE
 * stream, or the resumption of any stream with Last-Event-ID) and DELETE.
 * State and routing live in session.c. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "internal.h"

/* ---- header checks ------------------------------------------------------- */

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
  const char *host = phttp_header(r, PH_HOST, &n, &count);
  if (count > 1)
    { set_reject(c, 400, "more than one Host header"); return; }
  if (!host) {
    if (r->http_minor >= 1)
      { set_reject(c, 400, "missing Host header"); return; }
  } else if (phttp_host_name(host, n, name, sizeof name) != 0 ||
             phttp_host_port(host, n, 0) < 0) {
    { set_reject(c, 400, "malformed Host header"); return; }
  } else if (!phttp_host_allowed(h, name, phttp_host_port(host, n, 0))) {
    { set_reject(c, 403, "Host not allowed"); return; }
  }
  r->route = phttp_route_claim(c);
  if (r->route)
    return; /* the host's own route (OAuth, consent): it checks Origin */
  /* Browser cookies never reach MCP (nor its authentication): a web page
   * must not drive the endpoint with a person's signed-in session. */
  for (unsigned i = 0; r->count[PH_COOKIE] && i < r->nhdrs; i++)
    if (r->hdrs[i].name_len == 6 && strncasecmp(r->arena + r->hdrs[i].name, "cookie", 6) == 0)
      r->hdrs[i].name_len = 0;
  const char *origin = phttp_header(r, PH_ORIGIN, &n, &count);
  if (count > 1)
    { set_reject(c, 400, "more than one Origin header"); return; }
  if (origin) {
    int ok = 0;
    for (size_t i = 0; i < h->n_allow_origins && !ok; i++)
      ok = strlen(h->allow_origins[i]) == n &&
           strncasecmp(h->allow_origins[i], origin, n) == 0;
    /* Not only the host name: another port of the same host is another
     * origin (another program on this machine), so the origin's port (by
     * its scheme when left out) must be the one the request was sent to. */
    if (!ok && phttp_origin_name(origin, n, name, sizeof name) == 0 &&
        pmcp_http_host_allowed(h, name)) {
      size_t hn;
      const char *hv = phttp_header(r, PH_HOST, &hn, &count);
      ok = hv && phttp_origin_same_port(origin, n, hv, hn);
    }
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
  const char *acc = phttp_header(r, PH_ACCEPT, &n, &count);
  unsigned accept = r->accept = phttp_accept(acc, acc ? n : 0);
  if (m == HTTP_POST) {
    if (!(accept & (ACCEPT_JSON | ACCEPT_SSE)))
      { set_reject(c, 406, "Not Acceptable: Accept must admit application/json or text/event-stream"); return; }
    const char *ct = phttp_header(r, PH_CONTENT_TYPE, &n, &count);
    if (!ct || count > 1 || !phttp_is_json_type(ct, n))
      { set_reject(c, 415, "Unsupported Media Type: Content-Type must be application/json"); return; }
  } else if (m == HTTP_GET && !(accept & ACCEPT_SSE)) {
    { set_reject(c, 406, "Not Acceptable: Accept must admit text/event-stream"); return; }
  }
  const char *ver = phttp_header(r, PH_VERSION, &n, &count);
  if (ver && count > 1)
    { set_reject(c, 400, "Bad Request: more than one MCP-Protocol-Version"); return; }
  if (ver && !phttp_version_supported(ver, n)) {
    /* A modern-era POST gets the engine's answer (-32022 with the
     * supported versions, under the request's id): decided with the body. */
    if (m == HTTP_POST)
      r->bad_version = 1;
    else
      { set_reject(c, 400, "Bad Request: unsupported MCP-Protocol-Version"); return; }
  }
}

/* ---- requests ------------------------------------------------------------ */

/* Looks up the session of a request. Answers and returns NULL when it is
 * missing (400), malformed (400) or unknown (404). */
static phttp_session *request_session(phttp_conn *c)
{
  size_t n;
  int count;
  const char *sid = phttp_header(&c->req, PH_SESSION, &n, &count);
  if (!sid) {
    phttp_respond_error(c, 400, -32000, "Bad Request: Mcp-Session-Id header is required");
    return NULL;
  }
  if (count > 1 || !phttp_valid_session_id(sid, n)) {
    phttp_respond_error(c, 400, -32000, "Bad Request: malformed Mcp-Session-Id");
    return NULL;
  }
  phttp_session *s = phttp_session_find(c->h, sid, n);
  /* Another principal's session is answered like an unknown one, and so
   * is a stateless one (one request's, never handed out). */
  if (!s || s->issued <= 0 || s->stateless ||
      (c->h->o.auth && s->principal != c->req.principal)) {
    phttp_respond_error(c, 404, -32001, "Session not found");
    return NULL;
  }
  /* The header says what the client speaks: in a session it must be the
   * version initialize negotiated (the engine's rule). */
  size_t vn;
  int vc;
  const char *v = phttp_header(&c->req, PH_VERSION, &vn, &vc);
  char neg[32];
  if (v && pmcp_server_session_protocol(c->h->server, s->id, neg, sizeof neg) == 0 &&
      !pmcp_protocol_header_fits(neg, v, vn)) {
    char msg[160];
    snprintf(msg, sizeof msg, "Bad Request: MCP-Protocol-Version %.*s is not the version "
             "this session negotiated (%s)", (int)(vn < 16 ? vn : 16), v, neg);
    phttp_respond_error(c, 400, -32000, msg);
    return NULL;
  }
  phttp_session_touch(c->h, s);
  return s;
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

/* The standard headers of a modern-era request, for the engine to check
 * against the body. Over-long values are cut, so they mismatch. */
#define MAX_PARAM_CLAIMS 16

typedef struct claims_buf {
  pmcp_http_claims claims;
  char version[64], method[128], name[4096];
  const char *pnames[MAX_PARAM_CLAIMS], *pvalues[MAX_PARAM_CLAIMS];
  char params[4096];   /* the Mcp-Param-* names and values, NUL-separated */
} claims_buf;

static const char *claim(const phttp_req *r, phttp_known header, char *out,
                         size_t size, int decode)
{
  size_t n;
  int count;
  const char *v = phttp_header(r, header, &n, &count);
  if (!v)
    return NULL;
  while (n && (*v == ' ' || *v == '\t'))
    v++, n--;
  while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
    n--;
  /* Mcp-Name may carry a non-ASCII value as =?base64?...?= */
  if (decode && n > 12 && memcmp(v, "=?base64?", 9) == 0 && memcmp(v + n - 2, "?=", 2) == 0) {
    size_t len = 0;
    if (phttp_base64_decode(v + 9, n - 11, out, size - 1, &len) == 0) {
      out[len] = '\0';
      return out;
    }
  }
  /* (a copy, not snprintf: three claims on every modern request) */
  if (n >= size)
    n = size - 1;
  memcpy(out, v, n);
  out[n] = '\0';
  return out;
}

static void claims_read(const phttp_req *r, claims_buf *cb)
{
  memset(&cb->claims, 0, sizeof cb->claims);
  cb->claims.protocol_version = claim(r, PH_VERSION, cb->version, sizeof cb->version, 0);
  cb->claims.method = claim(r, PH_METHOD, cb->method, sizeof cb->method, 0);
  cb->claims.name = claim(r, PH_NAME, cb->name, sizeof cb->name, 1);
  /* Mcp-Param-{Name}: the suffix lower-cased, the value as sent (the
   * engine decodes and compares it). What does not fit is left out, and
   * then mismatches. */
  size_t used = 0, n = 0;
  for (unsigned i = 0; r->n_params && i < r->nhdrs && n < MAX_PARAM_CLAIMS; i++) {
    const phttp_hdr *hd = &r->hdrs[i];
    if (hd->name_len <= 10 || strncasecmp(r->arena + hd->name, "mcp-param-", 10) != 0)
      continue;
    size_t nl = hd->name_len - 10, vl = hd->value_len;
    if (used + nl + vl + 2 > sizeof cb->params)
      break;
    char *nm = cb->params + used;
    for (size_t k = 0; k < nl; k++) {
      char ch = r->arena[hd->name + 10 + k];
      nm[k] = (ch >= 'A' && ch <= 'Z') ? (char)(ch + 32) : ch;
    }
    nm[nl] = '\0';
    char *val = nm + nl + 1;
    memcpy(val, r->arena + hd->value, vl);
    val[vl] = '\0';
    used += nl + vl + 2;
    cb->pnames[n] = nm;
    cb->pvalues[n] = val;
    n++;
  }
  cb->claims.n_params = n;
  cb->claims.param_names = cb->pnames;
  cb->claims.param_values = cb->pvalues;
}

/* The claims' strings in order: version, method, name, then the
 * Mcp-Param names and values; returns how many. */
static size_t claims_strings(const claims_buf *cb, const char **src)
{
  size_t np = cb->claims.n_params;
  src[0] = cb->claims.protocol_version;
  src[1] = cb->claims.method;
  src[2] = cb->claims.name;
  for (size_t i = 0; i < np; i++) {
    src[3 + i] = cb->pnames[i];
    src[3 + np + i] = cb->pvalues[i];
  }
  return 3 + 2 * np;
}

/* Bytes claims_copy() writes. */
static size_t claims_size(const claims_buf *cb)
{
  const char *src[3 + 2 * MAX_PARAM_CLAIMS];
  size_t ns = claims_strings(cb, src);
  size_t total = 2 * cb->claims.n_params * sizeof(char *);
  for (size_t i = 0; i < ns; i++)
    total += src[i] ? strlen(src[i]) + 1 : 0;
  return total;
}

/* A copy of the claims that lives with a pool work item, in @p mem
 * (claims_size() bytes, pointer-aligned): the pointer arrays first, then
 * the strings. */
static void claims_copy(phttp_work *wk, const claims_buf *cb, char *mem)
{
  size_t np = cb->claims.n_params;
  const char *src[3 + 2 * MAX_PARAM_CLAIMS];
  size_t ns = claims_strings(cb, src);
  const char **arr = (const char **)(void *)mem;
  char *p = mem + 2 * np * sizeof(char *);
  const char *dst[3 + 2 * MAX_PARAM_CLAIMS];
  for (size_t i = 0; i < ns; i++) {
    dst[i] = NULL;
    if (src[i]) {
      size_t l = strlen(src[i]) + 1;
      memcpy(p, src[i], l);
      dst[i] = p;
      p += l;
    }
  }
  for (size_t i = 0; i < 2 * np; i++)
    arr[i] = dst[3 + i];
  wk->claims.protocol_version = dst[0];
  wk->claims.method = dst[1];
  wk->claims.name = dst[2];
  wk->claims.n_params = np;
  wk->claims.param_names = arr;
  wk->claims.param_values = arr + np;
  wk->has_claims = 1;
}

/* ---- POST ----------------------------------------------------------------- */

/* Each step of a POST below either lets it go on or has answered it and
 * freed its message (and the stateless session it was given, where the
 * step says so). */

/* Reads the body into the engine's message; NULL when it is answered. */
static pmcp_message *post_read(phttp_conn *c)
{
  pmcp_http *h = c->h;
  phttp_req *r = &c->req;
  /* The engine reads the body once and says, per item, what it will see:
   * a body it cannot read (invalid UTF-8, a NUL byte, a byte-order mark,
   * trailing bytes) is answered here, on this request; the engine would
   * answer it with a null id that no request waits for, holding the
   * connection and its session forever. */
  pmcp_message *msg = NULL;
  int prc = pmcp_message_read(h->server, r->body.ptr ? r->body.ptr : "", r->body.len, &msg);
  if (prc) {
    if (prc == PMCP_ENOMEM)
      phttp_respond_error(c, 503, -32603, "out of memory reading the body");
    else
      phttp_respond_error(c, 400, -32700,
                          prc == PMCP_EPROTO ? pmcp_server_errmsg(h->server)
                                             : "Parse error: the body is not valid JSON");
    return NULL;
  }
  const pmcp_msg_info *info = pmcp_message_info(msg);
  const char *bad = info->batch && info->n_items == 0 ? "Invalid Request: empty batch"
                    : info->kind == PMCP_MSG_INVALID
                        ? "Invalid Request: not a JSON-RPC request, notification or response"
                        : NULL;
  if (bad) {
    pmcp_message_free(msg);
    phttp_respond_error(c, 400, -32600, bad);
    return NULL;
  }
  return msg;
}

/* A session of one request (a stateless server's, or a modern-era
 * request's). No negotiation to remember: the request says its version
 * (absent: 2025-03-26, as the specification tells servers to assume). */
static phttp_session *post_stateless_session(phttp_conn *c, pmcp_message *msg)
{
  phttp_req *r = &c->req;
  int status;
  phttp_session *s = phttp_session_new(c->h, 1, r->principal, &status);
  if (!s) {
    pmcp_message_free(msg);
    phttp_respond_error(c, status, -32603, "cannot open a session");
    return NULL;
  }
  s->issued = 1;
  size_t vn;
  int vc;
  const char *v = phttp_header(r, PH_VERSION, &vn, &vc);
  if (!v)
    v = "2025-03-26", vn = 10;
  if (vn >= sizeof s->proto)
    vn = sizeof s->proto - 1;
  memcpy(s->proto, v, vn);
  s->proto[vn] = '\0';
  return s;
}

/* The session the POST runs in: one of its own when stateless or
 * @p modern, a new one for an initialize without a session, else the one
 * its Mcp-Session-Id names. NULL when answered. */
static phttp_session *post_session(phttp_conn *c, pmcp_message *msg, int modern)
{
  pmcp_http *h = c->h;
  phttp_req *r = &c->req;
  const pmcp_msg_info *info = pmcp_message_info(msg);
  if (h->o.stateless || modern)
    return post_stateless_session(c, msg);
  if (info->initialize && !phttp_header(r, PH_SESSION, &(size_t){0}, &(int){0})) {
    if (info->batch) {
      pmcp_message_free(msg);
      phttp_respond_error(c, 400, -32600,
                          "Invalid Request: initialize must not be part of a batch");
      return NULL;
    }
    int status;
    phttp_session *s = phttp_session_new(h, 0, r->principal, &status);
    if (!s) {
      pmcp_message_free(msg);
      phttp_respond_error(c, status, -32000,
                          status == 503 ? "too many sessions: try again later"
                                        : "cannot open a session");
    }
    return s;
  }
  phttp_session *s = request_session(c);
  if (!s)
    pmcp_message_free(msg);
  return s;
}

/* A batch where the session's protocol version has none is refused (a
 * stateless session freed). 0: go on; -1: answered. */
static int post_batch_check(phttp_conn *c, phttp_session *s, pmcp_message *msg)
{
  pmcp_http *h = c->h;
  if (!pmcp_message_info(msg)->batch || !(s->stateless || s->issued > 0))
    return 0;
  /* A stateless request says its version in its header (s->proto). */
  char ver[32];
  if (s->stateless)
    snprintf(ver, sizeof ver, "%s", s->proto);
  if ((s->stateless || pmcp_server_session_protocol(h->server, s->id, ver, sizeof ver) == 0) &&
      !pmcp_protocol_batch_allowed(ver)) {
    if (s->stateless)
      phttp_session_free(h, s, "request refused");
    pmcp_message_free(msg);
    phttp_respond_error(
        c, 400, -32600,
        "Invalid Request: JSON-RPC batches are not allowed by the negotiated protocol version");
    return -1;
  }
  return 0;
}

/* Notifications and responses only: accepted, nothing to wait for. */
static void post_notifications(phttp_conn *c, phttp_session *s, pmcp_message *msg)
{
  pmcp_http *h = c->h;
  size_t nmsg = pmcp_message_info(msg)->n_items;
  for (size_t i = 0; i < nmsg; i++)
    pmcp_server_handle_item(h->server, s->id, msg, i, NULL);
  pmcp_message_free(msg);
  if (s->stateless)
    phttp_session_free(h, s, "request finished");
  phttp_respond(c, 202, NULL, NULL, NULL, 0);
  phttp_drain_queue(h);
}

/* Admission of @p nreq requests: 503 when they need a handler thread and
 * its queue is full, 429 over an in-flight limit (a stateless session
 * freed). 0: admitted; -1: answered. */
static int post_admit(phttp_conn *c, phttp_session *s, pmcp_message *msg, unsigned nreq,
                      int offload)
{
  pmcp_http *h = c->h;
  if (offload && phttp_pool_full(h)) {
    pmcp_message_free(msg);
    if (s->stateless)
      phttp_session_free(h, s, "request refused");
    static const char busy[] =
        "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32000,\"message\":\"Server busy: every "
        "handler thread is taken and the queue is full; retry in a moment\",\"data\":"
        "{\"retryable\":true,\"retry_after_ms\":1000}},\"id\":null}";
    phttp_respond(c, 503, "application/json", "Retry-After: 1\r\n", busy, sizeof busy - 1);
    return -1;
  }
  /* In-flight limits: per session, per principal (so one principal's many
   * sessions cannot take every slot) and for the whole server. */
  const char *limit = NULL;
  if (s->inflight + nreq > h->o.max_inflight)
    limit = "too many requests in flight in this session";
  else if (phttp_principal_inflight(h, s->principal, 0) + nreq > h->o.max_inflight_principal)
    limit = "too many requests in flight for this principal";
  else if (h->inflight + nreq > h->o.max_inflight_total)
    limit = "too many requests in flight in this server";
  if (!limit)
    return 0;
  pmcp_message_free(msg);
  if (s->stateless)
    phttp_session_free(h, s, "request refused");
  char body[300];
  snprintf(body, sizeof body,
           "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32000,\"message\":"
           "\"%s: retry in a moment\",\"data\":{\"retryable\":true,\"retry_after_ms\":1000}},"
           "\"id\":null}",
           limit);
  phttp_respond(c, 429, "application/json", "Retry-After: 1\r\n", body, strlen(body));
  return -1;
}

/* The stream the POST's answers go to, waiting for its @p nreq request
 * ids, counted in flight (and started when it is SSE). NULL: answered. */
static phttp_stream *post_stream(phttp_conn *c, phttp_session *s, pmcp_message *msg, unsigned nreq)
{
  pmcp_http *h = c->h;
  const pmcp_msg_info *info = pmcp_message_info(msg);
  phttp_stream *st = phttp_stream_new(s);
  if (!st || !(st->ids = calloc(nreq, sizeof *st->ids))) {
    if (st)
      phttp_stream_free(st);
    pmcp_message_free(msg);
    phttp_respond_error(c, 503, -32603, "out of memory");
    return NULL;
  }
  /* The ids this POST waits for, as the engine will write them in the
   * related_id of its answers. Two streams must not wait for one id. */
  for (size_t i = 0; i < info->n_items; i++) {
    const pmcp_msg_item *it = pmcp_message_item(msg, i);
    if (it->kind != PMCP_MSG_REQUEST)
      continue;
    char *id = strdup(it->id);
    size_t tmp;
    if (!id || phttp_find_pending(s, id, &tmp)) {
      free(id);
      phttp_stream_free(st);
      pmcp_message_free(msg);
      phttp_respond_error(
          c, 409, -32600,
          "Invalid Request: a request with this id is already in progress in this session");
      return NULL;
    }
    st->ids[st->nids++].id = id;
  }
  st->batch = info->batch;
  st->initialize = info->initialize && !s->stateless && s->issued == 0;
  unsigned accept = c->req.accept; /* read with the headers */
  st->mode = accept == ACCEPT_JSON ? MODE_JSON : accept == ACCEPT_SSE ? MODE_SSE : MODE_LAZY;
  st->conn = c;
  c->stream = st;
  s->inflight += nreq;
  h->inflight += nreq;
  phttp_principal_inflight(h, s->principal, (int)nreq);
  if (st->mode == MODE_SSE)
    phttp_stream_start_sse(st);
  return st;
}

/* Hands the POST's items to the handler threads, with the message, the
 * body its items point into and a copy of the modern-era claims @p cm
 * (NULL: none). 0, or PMCP_ENOMEM with nothing handed over. */
static int post_offload(phttp_conn *c, phttp_session *s, const phttp_stream *st, pmcp_message *msg,
                        const claims_buf *cm)
{
  pmcp_http *h = c->h;
  size_t nmsg = pmcp_message_info(msg)->n_items;
  size_t head = sizeof(phttp_work) + nmsg * sizeof(work_msg);
  head = (head + sizeof(void *) - 1) / sizeof(void *) * sizeof(void *);
  phttp_work *wk = calloc(1, head + (cm ? claims_size(cm) : 0));
  if (!wk)
    return PMCP_ENOMEM;
  size_t k = 0;
  for (size_t i = 0; i < nmsg; i++)
    if (pmcp_message_item(msg, i)->kind == PMCP_MSG_REQUEST)
      wk->msgs[i].id = st->ids[k++].id;
  wk->n = nmsg;
  if (cm)
    claims_copy(wk, cm, (char *)wk + head);
  wk->msg = msg;
  wk->body = c->req.body;
  c->req.body = (pmcp_buf)PMCP_BUF_INIT;
  wk->h = h;
  wk->s = s;
  s->nwork++;
  phttp_pool_submit(h, wk);
  return 0;
}

/* Runs the POST's items: on the handler threads when @p offload, else
 * here; a request the engine could not take is answered with its error. */
static void post_run(phttp_conn *c, phttp_session *s, phttp_stream *st, pmcp_message *msg,
                     int offload, const claims_buf *cm)
{
  pmcp_http *h = c->h;
  size_t nmsg = pmcp_message_info(msg)->n_items;
  /* Keep our own copy of the session id: an inline answer may end a
   * stateless session while we still hand it messages. */
  char sid[sizeof s->id];
  memcpy(sid, s->id, sizeof sid);
  if (offload) {
    if (post_offload(c, s, st, msg, cm) == 0)
      return;
    /* Could not hand it over: answer every request with the failure. */
    for (size_t i = 0; i < st->nids; i++)
      if (!st->ids[i].done && phttp_session_find(h, sid, strlen(sid)))
        phttp_answer_locally(h, s, st->ids[i].id, PMCP_ENOMEM);
  } else if (!pmcp_message_info(msg)->batch) {
    int rc = pmcp_server_handle_item(h->server, sid, msg, 0, cm ? &cm->claims : NULL);
    if (rc != 0)
      phttp_answer_locally(h, s, st->ids[0].id, rc);
  } else {
    size_t k = 0;
    for (size_t i = 0; i < nmsg; i++) {
      const pmcp_msg_item *it = pmcp_message_item(msg, i);
      int rc = pmcp_server_handle_item(h->server, sid, msg, i, NULL);
      if (it->kind == PMCP_MSG_REQUEST) {
        if (rc != 0 && phttp_session_find(h, sid, strlen(sid)))
          phttp_answer_locally(h, s, st->ids[k].id, rc);
        k++;
      }
    }
  }
  pmcp_message_free(msg);
  phttp_drain_queue(h);
}

static void handle_post(phttp_conn *c)
{
  pmcp_http *h = c->h;
  phttp_req *r = &c->req;
  pmcp_message *msg = post_read(c);
  if (!msg)
    return;
  const pmcp_msg_info *info = pmcp_message_info(msg);
  /* The engine decides the era; a modern-era request (its own _meta, no
   * session) is served statelessly beside the sessions of older clients. */
  size_t sn;
  int sc;
  int modern =
      !info->batch && info->era == PMCP_ERA_MODERN && !phttp_header(r, PH_SESSION, &sn, &sc);
  if (r->bad_version && !modern) {
    pmcp_message_free(msg);
    phttp_respond_error(c, 400, -32000, "Bad Request: unsupported MCP-Protocol-Version");
    return;
  }
  claims_buf cm;
  if (modern)
    claims_read(r, &cm);
  phttp_session *s = post_session(c, msg, modern);
  if (!s || post_batch_check(c, s, msg) != 0)
    return;
  unsigned nreq = (unsigned)info->n_requests;
  if (nreq == 0) {
    post_notifications(c, s, msg);
    return;
  }
  /* Handlers the host wrote may block: they never run on the loop. */
  int offload = 0;
  for (size_t i = 0; i < info->n_items && !h->o.testing && !h->o.handlers_inline; i++)
    offload |= pmcp_message_item(msg, i)->runs_handler;
  if (post_admit(c, s, msg, nreq, offload) != 0)
    return;
  phttp_stream *st = post_stream(c, s, msg, nreq);
  if (st)
    post_run(c, s, st, msg, offload, modern ? &cm : NULL);
}

static void handle_get(phttp_conn *c)
{
  pmcp_http *h = c->h;
  phttp_session *s = request_session(c);
  if (!s)
    return;
  size_t n;
  int count;
  const char *last = phttp_header(&c->req, PH_LAST_EVENT, &n, &count);
  char extra[128];
  phttp_session_header(s, extra, sizeof extra);
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
      phttp_stream_free(st);
    }
    return;
  }
  phttp_stream *st = s->standalone;
  if (st && st->conn) {
    phttp_respond_error(c, 409, -32000, "Conflict: an SSE stream is already open for this session");
    return;
  }
  if (!st) {
    st = phttp_stream_new(s);
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
  phttp_stream_start_sse(st);
  (void)h;
}

static void handle_delete(phttp_conn *c)
{
  phttp_session *s = request_session(c);
  if (!s)
    return;
  phttp_session_free(c->h, s, "session terminated");
  phttp_respond(c, 204, NULL, NULL, NULL, 0);
}

/* Runs pmcp_http_options.auth over the request's headers. Returns 0 with
 * c->req.principal set, or answers 401 (503 when the credential could not
 * be checked) and returns -1. */
static int authenticate(phttp_conn *c)
{
  pmcp_http *h = c->h;
  phttp_req *r = &c->req;
  const char *names[PHTTP_MAX_HEADERS], *values[PHTTP_MAX_HEADERS];
  size_t total = 0, n = 0;
  for (unsigned i = 0; i < r->nhdrs; i++)
    total += r->hdrs[i].name_len + r->hdrs[i].value_len + 2;
  char *mem = malloc(total + 1);
  if (!mem) {
    phttp_respond_error(c, 503, -32603, "out of memory");
    return -1;
  }
  char *p = mem;
  for (unsigned i = 0; i < r->nhdrs; i++) {
    const phttp_hdr *hd = &r->hdrs[i];
    if (hd->name_len == 0)
      continue; /* removed (Cookie) */
    names[n] = p;
    for (uint32_t k = 0; k < hd->name_len; k++) {
      char ch = r->arena[hd->name + k];
      *p++ = (ch >= 'A' && ch <= 'Z') ? (char)(ch + 32) : ch;
    }
    *p++ = '\0';
    values[n] = p;
    size_t vl = hd->value_len;
    while (vl && (r->arena[hd->value + vl - 1] == ' ' || r->arena[hd->value + vl - 1] == '\t'))
      vl--;
    memcpy(p, r->arena + hd->value, vl);
    p += vl;
    *p++ = '\0';
    n++;
  }
  pmcp_http_request req = PMCP_HTTP_REQUEST_INIT;
  req.h = h;
  req.method = llhttp_method_name((llhttp_method_t)r->method);
  req.path = h->endpoint;
  req.query = "";
  req.body = "";
  req.nheaders = n;
  req.names = names;
  req.values = values;
  char peer[64];
  phttp_peer_name(c, peer, sizeof peer);
  req.peer = peer;
  char challenge[1024] = "", why[256] = "";
  r->principal = phttp_call_auth(h, &req, challenge, sizeof challenge, why, sizeof why);
  free(mem);
  if (r->principal)
    return 0;
  /* No challenge: the credential could not be checked (the host's store
   * is down): 503, retryable, and the client keeps its credential. */
  int down = !challenge[0];
  char extra[1200], body[600];
  if (down)
    snprintf(extra, sizeof extra, "Retry-After: 1\r\n");
  else
    snprintf(extra, sizeof extra, "WWW-Authenticate: %s\r\n", challenge);
  pmcp_buf esc = PMCP_BUF_INIT;
  const char *msg = why[0] ? why : down ? "the credential could not be checked: try again"
                                        : "authentication required";
  pmcp_buf_json_string(&esc, msg, strlen(msg));
  snprintf(body, sizeof body,
           "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":%d,\"message\":%s%s},\"id\":null}",
           down ? -32000 : -32001, esc.ptr ? esc.ptr : "\"authentication required\"",
           down ? ",\"data\":{\"retryable\":true,\"retry_after_ms\":1000}" : "");
  pmcp_buf_dispose(&esc);
  phttp_respond(c, down ? 503 : 401, "application/json", extra, body, strlen(body));
  return -1;
}

void phttp_handle_request(phttp_conn *c)
{
  if (c->req.route) {
    phttp_route_handle(c);
    return;
  }
  c->req.principal = NULL;
  if (c->h->o.auth && authenticate(c) != 0)
    return;
  if (c->req.method != HTTP_POST) {
    /* The modern era has no sessions: no GET stream, nothing to DELETE. */
    size_t n;
    int count;
    const char *ver = phttp_header(&c->req, PH_VERSION, &n, &count);
    size_t sn;
    if (ver && !phttp_header(&c->req, PH_SESSION, &sn, &count) &&
        pmcp_protocol_version_era(ver, n) == PMCP_ERA_MODERN) {
      static const char why[] = "Method Not Allowed: protocol 2026-07-28 has no sessions\n";
      phttp_respond(c, 405, "text/plain", "Allow: POST\r\n", why, sizeof why - 1);
      return;
    }
  }
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
