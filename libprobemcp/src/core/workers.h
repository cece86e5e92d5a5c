/* SPDX-License-Identifier: MIT */
/* A fixed pool of pthreads for calls that may block. Threads start on the
 * first job, so servers that never block never create one. */
#ifndef PMCP_CORE_WORKERS_H
#define PMCP_CORE_WORKERS_H

#include <pthread.h>
#include <stddef.h>

typedef struct pmcp__job pmcp__job;
struct pmcp__job {
  /* Runs the job and frees it. */
  void (*run)(pmcp__job *job);
  pmcp__job *next;
  /* Concurrency class: 1 for open-web work (PMCP_TOOL_OPEN_WEB), which
   * runs on at most web_cap workers at once. */
  int web;
  /* Who the job is for (the session's user data: the HTTP principal), or
   * NULL (one caller, stdio). Jobs of one key run on at most key_cap
   * workers at once; the rest wait in the queue while other keys' jobs
   * go first, so one caller never takes every worker. */
  const void *key;
};

/* The running jobs of one fairness key. */
typedef struct pmcp__key_running {
  const void *key;
  size_t n;
} pmcp__key_running;

typedef struct pmcp__workers {
  pthread_mutex_t mu;
  pthread_cond_t cond;
  pmcp__job *head, *tail;          /* other work, first served */
  pmcp__job *web_head, *web_tail;  /* open-web work */
  size_t web_running, web_cap;
  /* Jobs waiting (both classes) and the most that may wait: past it a
   * submission is refused at once rather than queued without bound. */
  size_t queued, queue_max;
  /* Running jobs per key (at most n_wanted keys run at once) and the most
   * one key may run. */
  pmcp__key_running *by_key;
  size_t key_cap;
  pthread_t *threads;
  size_t n_threads, n_wanted;
  int stopping;
} pmcp__workers;

struct pmcp_server;
int pmcp__workers_init(struct pmcp_server *srv, size_t n);
/* The open-web share of a pool of @p n workers for the text @p spec of
 * PROBE_MCP_WEB_CAPACITY (NULL or invalid: a quarter). */
size_t pmcp__workers_web_cap(size_t n, const char *spec);
/* The workers one caller may take in a pool of @p n for the text @p spec
 * of PROBE_MCP_WORKERS_PER_CALLER (NULL or invalid: half, at least 1). */
size_t pmcp__workers_key_cap(size_t n, const char *spec);
/* Jobs waiting for a worker now (tests observe a full queue with it). */
size_t pmcp__workers_waiting(struct pmcp_server *srv);
/* The pool's size (the workers it runs at most). */
size_t pmcp__workers_count(struct pmcp_server *srv);

/* How many jobs may wait for a pool of @p n workers, for the text @p spec
 * of PROBE_MCP_QUEUE_MAX (NULL or invalid: SIZE_MAX, no bound). */
size_t pmcp__workers_queue_max(size_t n, const char *spec);
/* Queues @p job (in its class, job->web, for its caller, job->key). 0, or PMCP_ENOMEM / PMCP_EMISUSE
 * (stopping) / PMCP_ETIMEOUT (the queue is full: retry later) without
 * queuing. */
int pmcp__workers_submit(struct pmcp_server *srv, pmcp__job *job);
/* Runs the queue dry, then joins every thread. */
void pmcp__workers_stop(struct pmcp_server *srv);

#endif
