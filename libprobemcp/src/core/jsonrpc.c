/* SPDX-License-Identifier: MIT */
/* JSON-RPC 2.0 framing: message shape checks, request ids (echoed exactly),
 * responses and errors, and batches (protocol 2025-03-26 only). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/engine.h"
#include "core/jdoc.h"
#include "core/jsonrpc.h"
#include "util/buf.h"
#include "util/json.h"

struct pmcp__batch {
  pmcp__session *sess;
  size_t holds;  /* the dispatcher's and one per live request */
  pmcp_buf out;  /* responses, comma-separated */
  pmcp_buf ids;  /* ids of the answered requests, comma-separated */
  size_t n_out;
};

/* ---- ids ---- */

int pmcp__rpc_id_text(const cJSON *id, const char *raw, size_t raw_len,
                      const char *const *path, size_t n_path, pmcp_buf *out)
{
  if (cJSON_IsString(id))
    return pmcp__buf_json_string(out, id->valuestring, strlen(id->valuestring));
  if (!cJSON_IsNumber(id))
    return PMCP_EPROTO;
  const char *v;
  size_t vlen;
  if (raw && pmcp__json_path(raw, raw_len, path, n_path, &v, &vlen)) {
    /* The exact digits, so that ids beyond 2^53 survive. */
    if (!pmcp__json_is_integer(v, vlen))
      return PMCP_EPROTO;
    return pmcp__buf_append(out, v, vlen);
  }
  double d = id->valuedouble;
  if (d != floor(d) || fabs(d) > 9007199254740992.0)
    return PMCP_EPROTO;
  return pmcp__buf_printf(out, "%.0f", d);
}

/* ---- sending ---- */

static void batch_add(pmcp_server *srv, pmcp__batch *b, const char *id,
                      const char *msg, size_t len)
{
  pthread_mutex_lock(&srv->mu);
  int rc = 0;
  if (b->n_out) {
    rc = pmcp__buf_putc(&b->out, ',');
    if (!rc && id)
      rc = pmcp__buf_putc(&b->ids, ',');
  }
  if (!rc)
    rc = pmcp__buf_append(&b->out, msg, len);
  if (!rc && id)
    rc = pmcp__buf_puts(&b->ids, id);
  if (!rc)
    b->n_out++;
  pthread_mutex_unlock(&srv->mu);
  if (rc)
    pmcp__log(srv, PMCP_LOG_ERROR, "out of memory collecting a batch response");
}

static void emit(pmcp_server *srv, pmcp__session *s, pmcp__batch *batch,
                 const char *id, const char *msg, size_t len, int http_status)
{
  if (batch)
    batch_add(srv, batch, id, msg, len);
  else
    pmcp__send_status(srv, s, id, PMCP_OUT_RESPONSE, msg, len, 1, http_status);
}

static int error_text(pmcp_buf *b, const char *id, int code, const char *msg,
                      const char *data_json)
{
  int rc = pmcp__buf_printf(b, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,"
                            "\"message\":", id ? id : "null", code);
  if (!rc)
    rc = pmcp__buf_json_string(b, msg, strlen(msg));
  if (!rc && data_json)
    rc = pmcp__buf_printf(b, ",\"data\":%s", data_json);
  if (!rc)
    rc = pmcp__buf_puts(b, "}}");
  return rc;
}

static void rpc_error_status(pmcp_server *srv, pmcp__session *s, pmcp__batch *batch,
                             const char *id, int code, const char *msg,
                             const char *data_json, int http_status)
{
  pmcp_buf b = PMCP_BUF_INIT;
  if (error_text(&b, id, code, msg, data_json) == 0)
    emit(srv, s, batch, id, b.ptr, b.len, http_status);
  else
    pmcp__log(srv, PMCP_LOG_ERROR, "out of memory answering an error");
  pmcp_buf_dispose(&b);
}

void pmcp__rpc_error(pmcp_server *srv, pmcp__session *s, pmcp__batch *batch,
                     const char *id, int code, const char *msg,
                     const char *data_json)
{
  pmcp_buf b = PMCP_BUF_INIT;
  if (error_text(&b, id, code, msg, data_json) == 0)
    emit(srv, s, batch, id, b.ptr, b.len, 0);
  else
    pmcp__log(srv, PMCP_LOG_ERROR, "out of memory answering an error");
  pmcp_buf_dispose(&b);
}

/* ---- batches ---- */

static void batch_release(pmcp_server *srv, pmcp__batch *b)
{
  pthread_mutex_lock(&srv->mu);
  int last = --b->holds == 0;
  pthread_mutex_unlock(&srv->mu);
  if (!last)
    return;
  if (b->n_out) {
    pmcp_buf msg = PMCP_BUF_INIT, ids = PMCP_BUF_INIT;
    int rc = pmcp__buf_putc(&msg, '[');
    if (!rc)
      rc = pmcp__buf_append(&msg, b->out.ptr, b->out.len);
    if (!rc)
      rc = pmcp__buf_putc(&msg, ']');
    if (!rc)
      rc = pmcp__buf_printf(&ids, "[%s]", b->ids.ptr ? b->ids.ptr : "");
    if (!rc)
      pmcp__send(srv, b->sess, ids.ptr, PMCP_OUT_RESPONSE, msg.ptr, msg.len, 1);
    else
      pmcp__log(srv, PMCP_LOG_ERROR, "out of memory sending a batch response");
    pmcp_buf_dispose(&msg);
    pmcp_buf_dispose(&ids);
  }
  pmcp_buf_dispose(&b->out);
  pmcp_buf_dispose(&b->ids);
  pmcp__session_unref(srv, b->sess);
  pmcp__free(srv, b);
}

void pmcp__rpc_batch(pmcp_server *srv, pmcp__session *s, pmcp__jdoc *doc,
                     cJSON *arr, const char *raw, size_t raw_len)
{
  if (!cJSON_GetArraySize(arr)) {
    pmcp__rpc_error(srv, s, NULL, NULL, -32600, "Invalid Request: empty batch", NULL);
    return;
  }
  pthread_mutex_lock(&srv->mu);
  int allowed = pmcp_protocol_batch_allowed(s->proto);
  pthread_mutex_unlock(&srv->mu);
  if (!allowed) {
    pmcp__rpc_error(srv, s, NULL, NULL, -32600,
                    "Invalid Request: JSON-RPC batches are only accepted with "
                    "protocol version " PMCP__BATCH_VERSION, NULL);
    return;
  }
  pmcp__batch *b = pmcp__calloc(srv, 1, sizeof *b);
  if (!b) {
    pmcp__rpc_error(srv, s, NULL, NULL, -32603, "Internal error: out of memory", NULL);
    return;
  }
  pthread_mutex_lock(&srv->mu);
  s->refs++;
  pthread_mutex_unlock(&srv->mu);
  b->sess = s;
  b->holds = 1;
  /* Walk the raw text beside the parsed items to keep each element's span. */
  const char *end = raw + raw_len;
  const char *p = raw;
  while (p < end && *p != '[')
    p++;
  if (p < end)
    p++;
  for (cJSON *it = arr->child; it; it = it->next) {
    const char *start = p;
    while (start < end && (*start == ' ' || *start == '\t' || *start == '\n' ||
                           *start == '\r'))
      start++;
    const char *stop = pmcp__json_skip(start, end);
    size_t span = stop ? (size_t)(stop - start) : 0;
    if (cJSON_IsObject(it))
      pmcp__rpc_dispatch(srv, s, doc, it, stop ? start : NULL, span, b, NULL);
    else
      pmcp__rpc_error(srv, s, b, NULL, -32600,
                      "Invalid Request: a batch item must be an object", NULL);
    if (stop) {
      p = stop;
      while (p < end && *p != ',' && *p != ']')
        p++;
      if (p < end)
        p++;
    } else {
      p = end;
    }
  }
  batch_release(srv, b);
}

/* ---- requests ---- */

/* Takes @p req out of its session's in-flight list. Done before the
 * response leaves, so that a client reusing the id as soon as it reads the
 * response never finds it still "in progress". */
static void req_unlink_locked(pmcp__req *req)
{
  pmcp__session *s = req->sess;
  if (req->linked) {
    if (req->prev)
      req->prev->next = req->next;
    else
      s->inflight = req->next;
    if (req->next)
      req->next->prev = req->prev;
    req->linked = 0;
  }
}

static void req_unlink(pmcp__req *req)
{
  pthread_mutex_lock(&req->srv->mu);
  req_unlink_locked(req);
  pthread_mutex_unlock(&req->srv->mu);
}

static void req_free(pmcp__req *req)
{
  pmcp_server *srv = req->srv;
  pmcp__batch *batch = req->batch;
  pthread_mutex_lock(&srv->mu);
  req_unlink_locked(req);
  pmcp__session_unref_locked(srv, req->sess);
  srv->answered++;
  if (--srv->busy == 0 || srv->room_waiters)
    pthread_cond_broadcast(&srv->idle_cond);
  pthread_mutex_unlock(&srv->mu);
  pmcp__free(srv, req->progress_token);
  pmcp__jdoc_unref(req->doc);
  pmcp__free(srv, req);
  if (batch)
    batch_release(srv, batch);
}

/* A request that ends without a response still tells the transport its
 * stream is over (PMCP_OUT_END); batch members end with their batch. */
static void req_end_silently(pmcp__req *req)
{
  if (!req->batch)
    pmcp__send(req->srv, req->sess, req->id, PMCP_OUT_END, NULL, 0, 1);
  req_free(req);
}

void pmcp__req_drop(pmcp__req *req)
{
  req_end_silently(req);
}

void pmcp__req_answer(pmcp__req *req, int rc, pmcp_buf *result)
{
  if (rc)
    pmcp__req_error(req, -32603, "Internal error: out of memory", NULL);
  else
    pmcp__req_result(req, result->ptr, result->len);
  pmcp_buf_dispose(result);
}

static void req_result(pmcp__req *req, const char *result, size_t len, int bare)
{
  if (atomic_load(&req->cancelled)) {
    req_end_silently(req);
    return;
  }
  pmcp_server *srv = req->srv;
  pmcp_buf b = PMCP_BUF_INIT;
  size_t id_len = strlen(req->id);
  /* (room for a modern result's resultType, cache hints and serverInfo) */
  int rc = pmcp__buf_reserve(&b, len + id_len + 40 +
                                 (req->modern ? srv->modern_head_len + 80 : 0));
  if (!rc)
    rc = pmcp__buf_append(&b, "{\"jsonrpc\":\"2.0\",\"id\":", 22);
  if (!rc)
    rc = pmcp__buf_append(&b, req->id, id_len);
  if (!rc)
    rc = pmcp__buf_append(&b, ",\"result\":", 10);
  if (!rc && req->modern && bare && !req->cacheable) {
    /* What pmcp__era_decorate writes for it, without reading it again. */
    rc = pmcp__buf_append(&b, srv->modern_head, srv->modern_head_len);
    if (!rc && len > 2)
      rc = pmcp__buf_putc(&b, ',');
    if (!rc)
      rc = pmcp__buf_append(&b, result + 1, len - 1);
  } else if (!rc && req->modern) {
    rc = pmcp__era_decorate(req, result, len, &b);
  } else if (!rc) {
    rc = pmcp__buf_append(&b, result, len);
  }
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  if (rc) {
    pmcp_buf_dispose(&b);
    pmcp__req_error(req, -32603, "Internal error: out of memory", NULL);
    return;
  }
  req_unlink(req);
  emit(srv, req->sess, req->batch, req->id, b.ptr, b.len, 0);
  pmcp_buf_dispose(&b);
  req_free(req);
}

void pmcp__req_result(pmcp__req *req, const char *result, size_t len)
{
  req_result(req, result, len, 0);
}

void pmcp__req_result_bare(pmcp__req *req, const char *result, size_t len)
{
  req_result(req, result, len, 1);
}

void pmcp__req_error(pmcp__req *req, int code, const char *msg,
                     const char *data_json)
{
  if (atomic_load(&req->cancelled)) {
    req_end_silently(req);
    return;
  }
  req_unlink(req);
  /* Modern era over HTTP: the status tells the error class too. */
  int status = req->http_status;
  if (!status && req->modern && code == -32601)
    status = 404;
  rpc_error_status(req->srv, req->sess, req->batch, req->id, code, msg, data_json,
                   req->modern ? status : 0);
  req_free(req);
}

void pmcp__req_errorf(pmcp__req *req, int code, const char *fmt, ...)
{
  pmcp_buf b = PMCP_BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  int rc = pmcp__buf_vprintf(&b, fmt, ap);
  va_end(ap);
  pmcp__req_error(req, code, rc ? "Internal error" : b.ptr, NULL);
  pmcp_buf_dispose(&b);
}

/* Registers a request in its session; NULL with an error answered when the
 * id is already in flight or memory runs out. */
static pmcp__req *req_new(pmcp_server *srv, pmcp__session *s, pmcp__batch *batch,
                          const char *id, const cJSON *params, const char *raw,
                          size_t raw_len)
{
  /* The id's text lives in the same allocation, right after the request. */
  size_t id_len = strlen(id);
  pmcp__req *req = pmcp__calloc(srv, 1, sizeof *req + id_len + 1);
  if (!req) {
    pmcp__rpc_error(srv, s, batch, id, -32603, "Internal error: out of memory", NULL);
    return NULL;
  }
  req->srv = srv;
  req->sess = s;
  req->id = memcpy((char *)(req + 1), id, id_len + 1);
  req->batch = batch;
  atomic_init(&req->cancelled, 0);
  /* progressToken: a string or an integer, echoed like ids. */
  cJSON *meta = pmcp__jget(params, "_meta");
  cJSON *tok = pmcp__jget(meta, "progressToken");
  if (tok) {
    static const char *const path[] = {"params", "_meta", "progressToken"};
    pmcp_buf t = PMCP_BUF_INIT;
    if (pmcp__rpc_id_text(tok, raw, raw_len, path, 3, &t) == 0)
      req->progress_token = pmcp__strdup(srv, t.ptr);
    pmcp_buf_dispose(&t);
  }
  pthread_mutex_lock(&srv->mu);
  for (pmcp__req *r = s->inflight; r; r = r->next) {
    if (strcmp(r->id, id) == 0) {
      pthread_mutex_unlock(&srv->mu);
      pmcp__free(srv, req->progress_token);
      pmcp__free(srv, req);
      pmcp__rpc_error(srv, s, batch, id, -32600,
                      "Invalid Request: this id is already used by a request in progress",
                      NULL);
      return NULL;
    }
  }
  req->next = s->inflight;
  if (s->inflight)
    s->inflight->prev = req;
  s->inflight = req;
  req->linked = 1;
  s->refs++;
  srv->busy++;
  if (batch)
    batch->holds++;
  pthread_mutex_unlock(&srv->mu);
  return req;
}

/* The first envelope member given twice, or NULL. Parsers disagree on
 * which of two values counts (cJSON takes the first, others the last), so
 * such a message is refused rather than read one way here and another way
 * by a proxy in front. Linear: only the members read are counted. */
static const char *dup_member(const cJSON *msg)
{
  static const char *const names[] = {"jsonrpc", "id", "method", "params",
                                      "result", "error"};
  enum { N = sizeof names / sizeof names[0] };
  int seen[N] = {0};
  /* One pass; a name is compared only when its first byte matches (every
   * message comes through here). */
  for (const cJSON *x = msg->child; x; x = x->next) {
    if (!x->string)
      continue;
    for (size_t i = 0; i < N; i++)
      if (x->string[0] == names[i][0] && strcmp(x->string, names[i]) == 0) {
        seen[i]++;
        break;
      }
  }
  for (size_t i = 0; i < N; i++)
    if (seen[i] > 1)
      return names[i];
  return NULL;
}

/* A string that decoded a \u0000 would be cut where it is read as a C
 * string (a workspace "vision\u0000" acting as "vision"): the message is
 * refused, naming what holds it. Returns 1 when refused (a notification is
 * dropped), 0 when @p msg has none. */
static int refuse_nul(pmcp_server *srv, pmcp__session *s, pmcp__batch *batch,
                      const char *id, const cJSON *msg)
{
  pmcp_buf path = PMCP_BUF_INIT;
  int kind = pmcp__jdoc_nul_path(msg, &path);
  if (kind == 0) {
    pmcp_buf_dispose(&path);
    return 0;
  }
  const char *p = path.ptr ? path.ptr : "";
  /* Names are the client's: keep the message short and whole UTF-8. */
  if (path.len > 200) {
    size_t cut = 200;
    while (cut && ((unsigned char)path.ptr[cut] & 0xC0) == 0x80)
      cut--;
    path.ptr[cut] = '\0';
  }
  const char *arg = strncmp(p, "params.arguments.", 17) == 0 ? p + 17 : NULL;
  int params = strncmp(p, "params", 6) == 0 && (p[6] == '\0' || p[6] == '.');
  char text[512];
  if (kind < 0)
    snprintf(text, sizeof text, "Internal error: out of memory");
  else if (kind == 2)
    snprintf(text, sizeof text,
             "%s: a member name in '%s' contains a NUL character (\\u0000), "
             "which no name may hold", params ? "Invalid params" : "Invalid Request",
             p[0] ? p : "the message");
  else if (arg)
    snprintf(text, sizeof text,
             "Invalid params: argument '%s' contains a NUL character (\\u0000), "
             "which no text argument may hold", arg);
  else
    snprintf(text, sizeof text,
             "%s: '%s' contains a NUL character (\\u0000), which no string "
             "here may hold", params ? "Invalid params" : "Invalid Request", p);
  if (id)
    pmcp__rpc_error(srv, s, batch, id, kind < 0 ? -32603 : params ? -32602 : -32600,
                    text, NULL);
  else
    pmcp__log(srv, PMCP_LOG_WARNING, "session '%s': dropped a notification: %s",
              s->id, text);
  pmcp_buf_dispose(&path);
  return 1;
}

void pmcp__rpc_dispatch(pmcp_server *srv, pmcp__session *s, pmcp__jdoc *doc,
                        cJSON *msg, const char *raw, size_t raw_len,
                        pmcp__batch *batch, const pmcp_http_claims *claims)
{
  cJSON *jsonrpc = pmcp__jget(msg, "jsonrpc");
  cJSON *method = pmcp__jget(msg, "method");
  cJSON *idv = pmcp__jget(msg, "id");
  cJSON *params = pmcp__jget(msg, "params");
  pmcp_buf idb = PMCP_BUF_INIT;
  const char *id = NULL;
  static const char *const id_path[] = {"id"};
  const char *dup = dup_member(msg);

  if (!method && (pmcp__jget(msg, "result") ||
                  pmcp__jget(msg, "error"))) {
    /* A response to one of our requests: never answered, even when bad. */
    cJSON *result = pmcp__jget(msg, "result");
    cJSON *error = pmcp__jget(msg, "error");
    if (!cJSON_IsString(jsonrpc) || strcmp(jsonrpc->valuestring, "2.0") != 0 ||
        !cJSON_IsNumber(idv) || (result && error) ||
        (error && !cJSON_IsObject(error)) || dup)
      pmcp__log(srv, PMCP_LOG_WARNING, "session '%s': dropped a malformed response",
                s->id);
    else
      pmcp__response_route(srv, s, msg);
    goto out;
  }
  if (idv && !(dup && strcmp(dup, "id") == 0)) {
    int rc = pmcp__rpc_id_text(idv, raw, raw_len, id_path, 1, &idb);
    if (rc == PMCP_EPROTO) {
      pmcp__rpc_error(srv, s, batch, NULL, -32600,
                      "Invalid Request: id must be a string or an integer", NULL);
      goto out;
    }
    if (rc) {
      pmcp__rpc_error(srv, s, batch, NULL, -32603, "Internal error: out of memory", NULL);
      goto out;
    }
    id = idb.ptr;
  }
  if (dup) {
    char why[96];
    snprintf(why, sizeof why, "Invalid Request: member \"%s\" is given more than once",
             dup);
    pmcp__rpc_error(srv, s, batch, id, -32600, why, NULL);
    goto out;
  }
  if (pmcp__jdoc_has_nul(doc) && refuse_nul(srv, s, batch, id, msg))
    goto out;
  if (!cJSON_IsString(jsonrpc) || strcmp(jsonrpc->valuestring, "2.0") != 0) {
    pmcp__rpc_error(srv, s, batch, id, -32600,
                    "Invalid Request: \"jsonrpc\" must be \"2.0\"", NULL);
    goto out;
  }
  if (!method) {
    pmcp__rpc_error(srv, s, batch, id, -32600,
                    "Invalid Request: no \"method\" (nor a response's result or error)",
                    NULL);
    goto out;
  }
  if (!cJSON_IsString(method)) {
    pmcp__rpc_error(srv, s, batch, id, -32600,
                    "Invalid Request: \"method\" must be a string", NULL);
    goto out;
  }
  if (params && !cJSON_IsObject(params) && !cJSON_IsArray(params)) {
    pmcp__rpc_error(srv, s, batch, id, -32600,
                      "Invalid Request: \"params\" must be an object", NULL);
    goto out;
  }
  if (!id) {
    pmcp__on_notification(srv, s, method->valuestring, params, raw, raw_len);
    goto out;
  }
  pmcp__req *req = req_new(srv, s, batch, id, params, raw, raw_len);
  if (req) {
    /* The request holds the message so that a worker can read its params
     * after pmcp_server_handle() has returned. */
    pmcp__jdoc_ref(doc);
    req->doc = doc;
    req->params = params;
    req->claims = claims;
    pmcp__on_request(req, method->valuestring, req->params);
  }
out:
  pmcp_buf_dispose(&idb);
}
