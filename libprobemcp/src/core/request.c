/* SPDX-License-Identifier: MIT */
/* Server-to-client requests made from a blocking handler (sampling,
 * elicitation, roots) and the routing of the client's responses. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "core/call.h"
#include "util/buf.h"
#include "util/json.h"

struct pmcp__pending {
  int64_t id;
  pthread_cond_t cond;
  int done, is_error;
  char *json; /* result or error object text (cJSON-allocated) */
  pmcp__pending *next;
};

void pmcp__req_wake_locked(pmcp__req *req)
{
  if (req->pending)
    pthread_cond_broadcast(&req->pending->cond);
}

void pmcp__response_route(pmcp_server *srv, pmcp__session *s, cJSON *msg)
{
  cJSON *idv = cJSON_GetObjectItemCaseSensitive(msg, "id");
  cJSON *result = cJSON_GetObjectItemCaseSensitive(msg, "result");
  cJSON *error = cJSON_GetObjectItemCaseSensitive(msg, "error");
  double d = idv->valuedouble;
  pthread_mutex_lock(&srv->mu);
  pmcp__pending *p = s->pending;
  while (p && (double)p->id != d)
    p = p->next;
  if (p && !p->done) {
    p->is_error = error != NULL;
    p->json = cJSON_PrintUnformatted(error ? error : result);
    p->done = 1;
    pthread_cond_broadcast(&p->cond);
  }
  pthread_mutex_unlock(&srv->mu);
  if (!p)
    pmcp__log(srv, PMCP_LOG_WARNING,
              "session '%s': a response to no pending request (id %.0f)", s->id, d);
}

static void unlink_pending(pmcp__session *s, pmcp__pending *p)
{
  for (pmcp__pending **pp = &s->pending; *pp; pp = &(*pp)->next) {
    if (*pp == p) {
      *pp = p->next;
      return;
    }
  }
}

int pmcp_call_request(pmcp_call *call, const char *method, const char *params_json,
                      int timeout_ms, pmcp_buf *out)
{
  if (!call || !call->srv || !method || !out)
    return PMCP_EINVAL;
  if (!pmcp__call_on_worker(call))
    return pmcp__err(call->srv, PMCP_EMISUSE,
                     "pmcp_call_request is only allowed in a PMCP_TOOL_BLOCKING handler");
  if (params_json && !pmcp__json_valid(params_json, strlen(params_json)))
    return pmcp__err(call->srv, PMCP_EINVAL, "request params are not JSON");
  pmcp_server *srv = call->srv;
  pmcp__req *req = call->req;
  pmcp__session *s = req->sess;
  pmcp__pending p;
  memset(&p, 0, sizeof p);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  int ok = pthread_cond_init(&p.cond, &attr) == 0;
  pthread_condattr_destroy(&attr);
  if (!ok)
    return PMCP_ENOMEM;

  pmcp_buf b = PMCP_BUF_INIT;
  pthread_mutex_lock(&srv->mu);
  if (s->input_ended) {
    pthread_mutex_unlock(&srv->mu);
    pthread_cond_destroy(&p.cond);
    return pmcp__err(srv, PMCP_EIO, "the client's input has ended; %s cannot be answered",
                     method);
  }
  p.id = srv->next_out_id++;
  p.next = s->pending;
  s->pending = &p;
  req->pending = &p;
  /* A transport paused for room must read on: the reply comes that way. */
  srv->client_waits++;
  if (srv->room_waiters)
    pthread_cond_broadcast(&srv->idle_cond);
  pthread_mutex_unlock(&srv->mu);

  int rc = pmcp__buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":",
                            (long long)p.id);
  if (!rc)
    rc = pmcp__buf_json_string(&b, method, strlen(method));
  if (!rc && params_json) {
    rc = pmcp__buf_puts(&b, ",\"params\":");
    if (!rc)
      rc = pmcp__json_minify(&b, params_json, strlen(params_json));
  }
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  if (!rc && !atomic_load(&req->cancelled))
    pmcp__send(srv, s, req->id, PMCP_OUT_REQUEST, b.ptr, b.len, 0);
  pmcp_buf_dispose(&b);

  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  if (timeout_ms > 0) {
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
      deadline.tv_sec++;
      deadline.tv_nsec -= 1000000000L;
    }
  }
  pthread_mutex_lock(&srv->mu);
  while (!rc && !p.done) {
    if (atomic_load(&req->cancelled) || s->closed || srv->closing) {
      rc = PMCP_ECANCELLED;
      break;
    }
    if (s->input_ended) {
      rc = PMCP_EIO;
      break;
    }
    if (timeout_ms > 0) {
      if (pthread_cond_timedwait(&p.cond, &srv->mu, &deadline) == ETIMEDOUT && !p.done)
        rc = PMCP_ETIMEOUT;
    } else {
      pthread_cond_wait(&p.cond, &srv->mu);
    }
  }
  unlink_pending(s, &p);
  req->pending = NULL;
  srv->client_waits--;
  pthread_mutex_unlock(&srv->mu);
  pthread_cond_destroy(&p.cond);
  if (rc == PMCP_ETIMEOUT)
    pmcp__err(srv, rc, "the client did not answer %s within %d ms", method, timeout_ms);
  else if (rc == PMCP_EIO)
    pmcp__err(srv, rc, "the client's input has ended; %s cannot be answered", method);
  if (!rc && p.done) {
    if (!p.json)
      rc = PMCP_ENOMEM;
    else
      rc = pmcp__buf_puts(out, p.json);
    if (!rc && p.is_error)
      rc = PMCP_EREMOTE;
  }
  cJSON_free(p.json);
  return rc;
}
