/* SPDX-License-Identifier: MIT */
#include "engine-harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *dupn(const char *s, size_t n)
{
  char *p = malloc(n + 1);
  ck_assert_ptr_nonnull(p);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

static void sink(const pmcp_out *out, void *ud)
{
  harness *h = ud;
  h_msg *m = calloc(1, sizeof *m);
  m->session = dupn(out->session, strlen(out->session));
  m->related = out->related_id ? dupn(out->related_id, strlen(out->related_id)) : NULL;
  m->kind = out->kind;
  m->final = out->final;
  m->http_status = out->http_status;
  if (!out->data) {
    /* control messages: record the END/CLOSE_STREAM markers apart */
    ck_assert_uint_eq(out->len, 0);
    pthread_mutex_lock(&h->mu);
    if (out->kind == PMCP_OUT_END)
      h->ends++;
    else
      h->closes++;
    pthread_mutex_unlock(&h->mu);
    free(m->session);
    free(m->related);
    free(m);
    return;
  }
  m->data = dupn(out->data, out->len);
  /* Every message is one line of JSON. */
  ck_assert_ptr_null(memchr(out->data, '\n', out->len));
  pthread_mutex_lock(&h->mu);
  if (h->tail)
    h->tail->next = m;
  else
    h->head = m;
  h->tail = m;
  h->count++;
  pthread_cond_broadcast(&h->cond);
  pthread_mutex_unlock(&h->mu);
  if (h->on_msg)
    h->on_msg(h, m);
}

harness *h_new(void (*tweak)(pmcp_server_options *o))
{
  harness *h = calloc(1, sizeof *h);
  pthread_mutex_init(&h->mu, NULL);
  pthread_cond_init(&h->cond, NULL);
  pmcp_server_options o = PMCP_SERVER_OPTIONS_INIT;
  o.name = "test-server";
  o.sink = sink;
  o.sink_ud = h;
  if (tweak)
    tweak(&o);
  ck_assert_int_eq(pmcp_server_new(&h->srv, &o), 0);
  return h;
}

harness *h_new_scoped(pmcp_store *store, pmcp_scope_fn scope, pmcp_scope_list_fn scope_list)
{
  harness *h = h_new(NULL);
  pmcp_research_options ro = PMCP_RESEARCH_OPTIONS_INIT;
  ro.scope = scope;
  ck_assert_int_eq(pmcp_research_register(h->srv, store, &ro), 0);
  pmcp_tracking_options to = PMCP_TRACKING_OPTIONS_INIT;
  to.scope = scope;
  to.scope_list = scope_list;
  ck_assert_int_eq(pmcp_tracking_register(h->srv, store, &to), 0);
  h_init(h, "", "2025-06-18");
  return h;
}

void h_msg_free(h_msg *m)
{
  if (!m)
    return;
  free(m->session);
  free(m->related);
  free(m->data);
  free(m);
}

void h_free(harness *h)
{
  pmcp_server_free(h->srv);
  h_msg *m = h->head;
  while (m) {
    h_msg *n = m->next;
    h_msg_free(m);
    m = n;
  }
  pthread_mutex_destroy(&h->mu);
  pthread_cond_destroy(&h->cond);
  free(h);
}

void h_send(harness *h, const char *session, const char *json)
{
  ck_assert_int_eq(pmcp_server_handle(h->srv, session, json, strlen(json)), 0);
}

h_msg *h_next_wait(harness *h, int ms)
{
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += ms / 1000;
  dl.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (dl.tv_nsec >= 1000000000L) {
    dl.tv_sec++;
    dl.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&h->mu);
  while (!h->head) {
    if (pthread_cond_timedwait(&h->cond, &h->mu, &dl) != 0)
      break;
  }
  h_msg *m = h->head;
  if (m) {
    h->head = m->next;
    if (!h->head)
      h->tail = NULL;
    h->count--;
    m->next = NULL;
  }
  pthread_mutex_unlock(&h->mu);
  return m;
}

h_msg *h_next(harness *h)
{
  /* A ceiling for a reply that never comes, not a speed check: a store
   * call under a sanitizer on a loaded machine can take seconds. */
  h_msg *m = h_next_wait(h, 60000);
  ck_assert_msg(m != NULL, "no message arrived within 60 s");
  return m;
}

size_t h_pending(harness *h)
{
  pthread_mutex_lock(&h->mu);
  size_t n = h->count;
  pthread_mutex_unlock(&h->mu);
  return n;
}

cJSON *h_call(harness *h, const char *session, const char *json)
{
  h_send(h, session, json);
  h_msg *m = h_next(h);
  cJSON *v = cJSON_Parse(m->data);
  ck_assert_msg(v != NULL, "reply is not JSON: %s", m->data);
  h_msg_free(m);
  return v;
}

void h_init(harness *h, const char *session, const char *version)
{
  char buf[512];
  snprintf(buf, sizeof buf,
           "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
           "{\"protocolVersion\":\"%s\",\"capabilities\":{\"sampling\":{},"
           "\"elicitation\":{}},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
           version);
  cJSON *r = h_call(h, session, buf);
  ck_assert_int_eq(h_error_code(r), 0);
  cJSON_Delete(r);
  h_send(h, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

int h_error_code(const cJSON *resp)
{
  cJSON *e = cJSON_GetObjectItem(resp, "error");
  cJSON *c = cJSON_GetObjectItem(e, "code");
  return c ? c->valueint : 0;
}

const char *h_error_message(const cJSON *resp)
{
  cJSON *e = cJSON_GetObjectItem(resp, "error");
  cJSON *m = cJSON_GetObjectItem(e, "message");
  return cJSON_IsString(m) ? m->valuestring : "";
}

cJSON *h_result(const cJSON *resp)
{
  return cJSON_GetObjectItem(resp, "result");
}

const char *h_text0(const cJSON *resp)
{
  cJSON *c = cJSON_GetObjectItem(h_result(resp), "content");
  cJSON *t = cJSON_GetObjectItem(cJSON_GetArrayItem(c, 0), "text");
  return cJSON_IsString(t) ? t->valuestring : "";
}

int h_is_error(const cJSON *resp)
{
  return cJSON_IsTrue(cJSON_GetObjectItem(h_result(resp), "isError"));
}
