/* SPDX-License-Identifier: MIT */
/* The worker pool that runs calls which may block (PMCP_TOOL_BLOCKING).
 * Open-web jobs (PMCP_TOOL_OPEN_WEB) wait in their own queue and take at
 * most web_cap workers at once; a free worker serves other work first, so
 * with web_cap < n a burst of web calls leaves workers for everything else.
 * Within both queues a job whose caller (job->key) already runs key_cap
 * jobs is passed over, not refused: it waits while the next caller's job
 * goes, so one caller never holds every worker. */
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

size_t pmcp__workers_key_cap(size_t n, const char *spec)
{
  size_t cap = n / 2;
  if (spec && *spec) {
    char *end = NULL;
    unsigned long v = strtoul(spec, &end, 10);
    if (end && !*end && *spec != '-' && v >= 1 && v <= 1000000)
      cap = (size_t)v;
  }
  if (cap > n)
    cap = n;
  return cap ? cap : 1;
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

PMCP_API int pmcp_server_set_caller_workers(pmcp_server *srv, size_t n)
{
  if (!srv || n > 1000000)
    return PMCP_EINVAL;
  pmcp__workers *w = &srv->workers;
  pthread_mutex_lock(&w->mu);
  w->key_cap = pmcp__workers_key_cap(w->n_wanted, NULL);
  if (n)
    w->key_cap = n < w->n_wanted ? n : w->n_wanted;
  /* a caller passed over may run now that the bound is higher */
  pthread_cond_broadcast(&w->cond);
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

/* The running count of @p key, or NULL when it runs nothing; with @p add a
 * free entry for it (there always is one: at most n_wanted jobs run, and
 * the worker asking runs none). Under the lock. */
static pmcp__key_running *key_entry(pmcp__workers *w, const void *key, int add)
{
  pmcp__key_running *spare = NULL;
  for (size_t i = 0; i < w->n_wanted; i++) {
    if (w->by_key[i].n && w->by_key[i].key == key)
      return &w->by_key[i];
    if (!w->by_key[i].n && !spare)
      spare = &w->by_key[i];
  }
  if (add && spare)
    spare->key = key;
  return add ? spare : NULL;
}

static int key_may_run(pmcp__workers *w, const void *key)
{
  if (!key)
    return 1;
  pmcp__key_running *e = key_entry(w, key, 0);
  return !e || e->n < w->key_cap;
}

/* Unlinks the first job of a queue whose caller is under its cap. */
static pmcp__job *take_from(pmcp__workers *w, pmcp__job **head, pmcp__job **tail)
{
  pmcp__job *prev = NULL;
  for (pmcp__job *job = *head; job; prev = job, job = job->next) {
    if (!key_may_run(w, job->key))
      continue;
    if (prev)
      prev->next = job->next;
    else
      *head = job->next;
    if (*tail == job)
      *tail = prev;
    w->queued--;
    return job;
  }
  return NULL;
}

/* The next job a worker may take, or NULL (under the lock). */
static pmcp__job *take(pmcp__workers *w)
{
  pmcp__job *job = take_from(w, &w->head, &w->tail);
  if (!job && w->web_running < w->web_cap) {
    job = take_from(w, &w->web_head, &w->web_tail);
    if (job)
      w->web_running++;
  }
  if (job && job->key) {
    pmcp__key_running *e = key_entry(w, job->key, 1);
    if (e)
      e->n++;
  }
  return job;
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
    /* A job passed over waits for a running one of its caller, which
     * ends and wakes us: stopping leaves only once both queues are dry. */
    while (!(job = take(w)) && !(w->stopping && !w->head && !w->web_head))
      pthread_cond_wait(&w->cond, &w->mu);
    if (!job)
      break; /* stopping and the queues are dry */
    int web = job->web;
    const void *key = job->key;
    pthread_mutex_unlock(&w->mu);
    job->run(job); /* frees job */
    pthread_mutex_lock(&w->mu);
    if (web)
      w->web_running--;
    if (key) {
      pmcp__key_running *e = key_entry(w, key, 0);
      if (e)
        e->n--;
    }
    if (web || key)
      pthread_cond_broadcast(&w->cond); /* a job passed over may go now */
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
  w->by_key = NULL;
  w->key_cap = pmcp__workers_key_cap(w->n_wanted, getenv("PROBE_MCP_WORKERS_PER_CALLER"));
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
      w->by_key = pmcp__calloc(srv, w->n_wanted, sizeof *w->by_key);
      if (!w->threads || !w->by_key) {
        pmcp__free(srv, w->threads);
        pmcp__free(srv, w->by_key);
        w->threads = NULL;
        w->by_key = NULL;
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
  pmcp__free(srv, w->by_key);
  w->threads = NULL;
  w->by_key = NULL;
  w->n_threads = 0;
  pthread_cond_destroy(&w->cond);
  pthread_mutex_destroy(&w->mu);
}
