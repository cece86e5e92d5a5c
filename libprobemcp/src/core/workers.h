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
};

typedef struct pmcp__workers {
  pthread_mutex_t mu;
  pthread_cond_t cond;
  pmcp__job *head, *tail;
  pthread_t *threads;
  size_t n_threads, n_wanted;
  int stopping;
} pmcp__workers;

struct pmcp_server;
int pmcp__workers_init(struct pmcp_server *srv, size_t n);
/* Queues @p job. 0, or PMCP_ENOMEM / PMCP_EMISUSE (stopping) without queuing. */
int pmcp__workers_submit(struct pmcp_server *srv, pmcp__job *job);
/* Runs the queue dry, then joins every thread. */
void pmcp__workers_stop(struct pmcp_server *srv);

#endif
