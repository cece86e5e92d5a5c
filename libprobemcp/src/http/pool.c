/* SPDX-License-Identifier: MIT */
/* Running handlers off the loop.
 *
 * pmcp_server_handle() runs a tool that is not declared PMCP_TOOL_BLOCKING
 * inline, on the calling thread, and such a tool may still do I/O (a store
 * read). So a POST whose requests call handlers (tools/call,
 * resources/read, prompts/get, completion/complete) is handed to these
 * threads; protocol requests (initialize, ping, lists) stay on the loop,
 * where they cost nothing.
 *
 * The hand-over is built to cost few wake-ups under load: the loop signals
 * a thread only when one is idle, a busy thread takes the next item without
 * sleeping, and finished items go back in a list that the loop drains in
 * one go after one uv_async wake-up (libuv coalesces them). The engine's
 * output produced meanwhile sits in the sink queue and is drained with it.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Set on a pool thread while it runs pmcp_server_handle(): what the sink
 * queues there is drained with the finished item, so the sink need not
 * wake the loop for it. Messages from the engine's own workers still wake
 * the loop at once. */
_Thread_local int phttp_in_work;

static void run_item(phttp_work *wk)
{
  phttp_in_work = 1;
  for (size_t i = 0; i < wk->n; i++) {
    if (atomic_load(&wk->s->dead)) {
      wk->msgs[i].rc = 0;
      continue;
    }
    wk->msgs[i].rc = pmcp_server_handle_item(wk->h->server, wk->s->id, wk->msg, i,
                                             wk->has_claims ? &wk->claims : NULL);
  }
  phttp_in_work = 0;
}

static void *thread_main(void *arg)
{
  pmcp_http *h = arg;
  phttp_pool *p = &h->pool;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->head && !p->stop) {
      p->idle++;
      pthread_cond_wait(&p->cv, &p->mu);
      p->idle--;
    }
    if (!p->head)
      break; /* stopping and nothing left */
    phttp_work *wk = p->head;
    p->queued--;
    p->head = wk->next;
    if (!p->head)
      p->tail = NULL;
    pthread_mutex_unlock(&p->mu);
    run_item(wk);
    pthread_mutex_lock(&p->mu);
    wk->next = NULL;
    int wake = p->done == NULL;
    if (p->done_tail)
      p->done_tail->next = wk;
    else
      p->done = wk;
    p->done_tail = wk;
    if (wake && !p->closed)
      uv_async_send(&p->async);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* On the loop: the item's answers failed to start (rc) or it finished. */
static void item_done(pmcp_http *h, phttp_work *wk)
{
  phttp_session *s = wk->s;
  s->nwork--;
  if (s->zombie) {
    /* Ended while we worked: a late message may have reopened the id in
     * the engine; close it again and let the memory go. */
    if (s->nwork == 0) {
      if (h->server)
        pmcp_server_session_close(h->server, s->id);
      phttp_session_release(h, s);
    }
  } else {
    for (size_t i = 0; i < wk->n; i++)
      if (wk->msgs[i].id && wk->msgs[i].rc != 0)
        phttp_answer_locally(h, s, wk->msgs[i].id, wk->msgs[i].rc);
  }
  pmcp_message_free(wk->msg);
  pmcp_buf_dispose(&wk->body);
  free(wk);
}

static void on_done(uv_async_t *a)
{
  pmcp_http *h = a->data;
  phttp_pool *p = &h->pool;
  pthread_mutex_lock(&p->mu);
  phttp_work *wk = p->done;
  p->done = p->done_tail = NULL;
  pthread_mutex_unlock(&p->mu);
  /* The engine's output first (so answers exist before failures are
   * synthesised for requests that produced none). */
  phttp_drain_queue(h);
  while (wk) {
    phttp_work *next = wk->next;
    item_done(h, wk);
    wk = next;
  }
  phttp_drain_queue(h);
  phttp_maybe_finish_shutdown(h);
}

int phttp_pool_start(pmcp_http *h, unsigned nthreads)
{
  phttp_pool *p = &h->pool;
  if (nthreads < 1)
    nthreads = 1;
  if (nthreads > PHTTP_POOL_MAX)
    nthreads = PHTTP_POOL_MAX;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  if (uv_async_init(&h->loop, &p->async, on_done) != 0)
    return -1;
  p->async.data = h;
  h->pool_started = 1;
  for (unsigned i = 0; i < nthreads; i++) {
    if (pthread_create(&p->th[i], NULL, thread_main, h) != 0)
      break;
    p->nthreads++;
  }
  return p->nthreads ? 0 : -1;
}

void phttp_pool_submit(pmcp_http *h, phttp_work *wk)
{
  phttp_pool *p = &h->pool;
  if (!h->pool_started || !p->nthreads) {
    /* No threads (testing, or they could not start): run here. */
    run_item(wk);
    phttp_drain_queue(h);
    item_done(h, wk);
    phttp_drain_queue(h);
    return;
  }
  wk->next = NULL;
  pthread_mutex_lock(&p->mu);
  if (p->tail)
    p->tail->next = wk;
  else
    p->head = wk;
  p->tail = wk;
  p->queued++;
  if (p->idle)
    pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

int phttp_pool_full(pmcp_http *h)
{
  phttp_pool *p = &h->pool;
  if (!h->pool_started || !p->nthreads)
    return 0;
  unsigned max = h->o.max_queued;
  if (!max)
    return 0;
  pthread_mutex_lock(&p->mu);
  int full = p->queued >= max;
  pthread_mutex_unlock(&p->mu);
  return full;
}

void phttp_pool_close(pmcp_http *h)
{
  phttp_pool *p = &h->pool;
  if (!h->pool_started)
    return;
  pthread_mutex_lock(&p->mu);
  p->closed = 1;
  pthread_mutex_unlock(&p->mu);
  uv_close((uv_handle_t *)&p->async, NULL);
}

void phttp_pool_join(pmcp_http *h)
{
  phttp_pool *p = &h->pool;
  if (!h->pool_started)
    return;
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  for (unsigned i = 0; i < p->nthreads; i++)
    pthread_join(p->th[i], NULL);
  /* Items finished after the loop stopped listening: nobody waits for
   * their answers any more. */
  for (phttp_work *wk = p->done, *next; wk; wk = next) {
    next = wk->next;
    item_done(h, wk);
  }
  p->done = p->done_tail = NULL;
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  h->pool_started = 0;
}
