/* The worker pool that runs calls which may block (PMCP_TOOL_BLOCKING). */
#include "core/engine.h"

static void *worker_main(void *arg)
{
  pmcp_server *srv = arg;
  pmcp__workers *w = &srv->workers;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (!w->head && !w->stopping)
      pthread_cond_wait(&w->cond, &w->mu);
    pmcp__job *job = w->head;
    if (!job)
      break; /* stopping and the queue is dry */
    w->head = job->next;
    if (!w->head)
      w->tail = NULL;
    pthread_mutex_unlock(&w->mu);
    job->run(job);
    pthread_mutex_lock(&w->mu);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

int pmcp__workers_init(pmcp_server *srv, size_t n)
{
  pmcp__workers *w = &srv->workers;
  if (pthread_mutex_init(&w->mu, NULL))
    return PMCP_ENOMEM;
  if (pthread_cond_init(&w->cond, NULL)) {
    pthread_mutex_destroy(&w->mu);
    return PMCP_ENOMEM;
  }
  w->n_wanted = n ? n : 4;
  w->threads = NULL;
  w->n_threads = 0;
  w->head = w->tail = NULL;
  w->stopping = 0;
  return 0;
}

int pmcp__workers_submit(pmcp_server *srv, pmcp__job *job)
{
  pmcp__workers *w = &srv->workers;
  int rc = 0;
  pthread_mutex_lock(&w->mu);
  if (w->stopping) {
    rc = PMCP_EMISUSE;
    goto out;
  }
  if (w->n_threads < w->n_wanted) {
    /* Start one more thread per job until the pool is full: a server that
     * never blocks never pays for threads. */
    if (!w->threads) {
      w->threads = pmcp__calloc(srv, w->n_wanted, sizeof *w->threads);
      if (!w->threads) {
        rc = PMCP_ENOMEM;
        goto out;
      }
    }
    if (pthread_create(&w->threads[w->n_threads], NULL, worker_main, srv) == 0)
      w->n_threads++;
    else if (w->n_threads == 0) {
      rc = PMCP_ENOMEM;
      goto out;
    }
  }
  job->next = NULL;
  if (w->tail)
    w->tail->next = job;
  else
    w->head = job;
  w->tail = job;
  pthread_cond_signal(&w->cond);
out:
  pthread_mutex_unlock(&w->mu);
  return rc;
}

void pmcp__workers_stop(pmcp_server *srv)
{
  pmcp__workers *w = &srv->workers;
  pthread_mutex_lock(&w->mu);
  w->stopping = 1;
  pthread_cond_broadcast(&w->cond);
  pthread_mutex_unlock(&w->mu);
  for (size_t i = 0; i < w->n_threads; i++)
    pthread_join(w->threads[i], NULL);
  pmcp__free(srv, w->threads);
  w->threads = NULL;
  w->n_threads = 0;
  pthread_cond_destroy(&w->cond);
  pthread_mutex_destroy(&w->mu);
}
