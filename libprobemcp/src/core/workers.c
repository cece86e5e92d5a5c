/* The worker pool that runs calls which may block (PMCP_TOOL_BLOCKING).
 * Open-web jobs (PMCP_TOOL_OPEN_WEB) wait in their own queue and take at
 * most web_cap workers at once; a free worker serves other work first, so
 * with web_cap < n a burst of web calls leaves workers for everything else. */
#include "core/engine.h"
#include "util/cnum.h"

#include <stdlib.h>
#include <string.h>

size_t pmcp__workers_web_cap(size_t n, const char *spec)
{
  double share = 0.25;
  size_t cap = 0;
  if (spec && *spec) {
    char *end = NULL;
    double v = pmcp__c_strtod(spec, &end);
    if (end && end != spec && !*end && v > 0) {
      if (v <= 1 && strchr(spec, '.'))
        share = v;
      else if (v == (double)(size_t)v)
        cap = (size_t)v;
    }
  }
  if (!cap)
    cap = (size_t)((double)n * share);
  if (cap > n)
    cap = n;
  if (n > 1 && cap >= n)
    cap = n - 1;
  return cap ? cap : 1;
}

size_t pmcp__workers_queue_max(size_t n, const char *spec)
{
  if (spec && *spec) {
    char *end = NULL;
    unsigned long v = strtoul(spec, &end, 10);
    if (end && !*end && *spec != '-' && v >= 1 && v <= 1000000)
      return (size_t)v;
  }
  (void)n;
  return SIZE_MAX;
}

PMCP_API int pmcp_server_set_queue_max(pmcp_server *srv, size_t max)
{
  if (!srv)
    return PMCP_EINVAL;
  pmcp__workers *w = &srv->workers;
  pthread_mutex_lock(&w->mu);
  w->queue_max = max ? max : 64 * w->n_wanted;
  pthread_mutex_unlock(&w->mu);
  return 0;
}

PMCP_API int pmcp_server_set_text_max(pmcp_server *srv, size_t max)
{
  if (!srv)
    return PMCP_EINVAL;
  srv->text_max = max;
  return 0;
}

/* The next job a worker may take, or NULL (under the lock). */
static pmcp__job *take(pmcp__workers *w)
{
  pmcp__job *job = w->head;
  if (job) {
    w->head = job->next;
    if (!w->head)
      w->tail = NULL;
    w->queued--;
    return job;
  }
  job = w->web_head;
  if (job && w->web_running < w->web_cap) {
    w->web_head = job->next;
    if (!w->web_head)
      w->web_tail = NULL;
    w->web_running++;
    w->queued--;
    return job;
  }
  return NULL;
}

static void *worker_main(void *arg)
{
  pmcp_server *srv = arg;
  pmcp__workers *w = &srv->workers;
  /* Handlers run here: numbers in the C locale for the thread's life. */
  locale_t prev = pmcp__c_numeric_enter();
  pthread_mutex_lock(&w->mu);
  for (;;) {
    pmcp__job *job;
    while (!(job = take(w)) && !(w->stopping && !w->web_head))
      pthread_cond_wait(&w->cond, &w->mu);
    if (!job)
      break; /* stopping and the queues are dry */
    int web = job->web;
    pthread_mutex_unlock(&w->mu);
    job->run(job); /* frees job */
    pthread_mutex_lock(&w->mu);
    if (web) {
      w->web_running--;
      /* a waiting web job may go now */
      pthread_cond_broadcast(&w->cond);
    }
  }
  pthread_mutex_unlock(&w->mu);
  pmcp__c_numeric_leave(prev);
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
  w->web_head = w->web_tail = NULL;
  w->web_running = 0;
  w->web_cap = pmcp__workers_web_cap(w->n_wanted, getenv("PROBE_MCP_WEB_CAPACITY"));
  w->queued = 0;
  w->queue_max = pmcp__workers_queue_max(w->n_wanted, getenv("PROBE_MCP_QUEUE_MAX"));
  w->stopping = 0;
  return 0;
}

size_t pmcp__workers_waiting(pmcp_server *srv)
{
  pmcp__workers *w = &srv->workers;
  pthread_mutex_lock(&w->mu);
  size_t n = w->queued;
  pthread_mutex_unlock(&w->mu);
  return n;
}

size_t pmcp__workers_count(pmcp_server *srv)
{
  return srv->workers.n_wanted;
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
  if (w->queued >= w->queue_max) {
    rc = PMCP_ETIMEOUT;
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
  w->queued++;
  if (job->web) {
    if (w->web_tail)
      w->web_tail->next = job;
    else
      w->web_head = job;
    w->web_tail = job;
  } else {
    if (w->tail)
      w->tail->next = job;
    else
      w->head = job;
    w->tail = job;
  }
  /* broadcast: the waiter woken must be one that can take this class */
  pthread_cond_broadcast(&w->cond);
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
