/* SPDX-License-Identifier: MIT */
/* Tasks inside the engine: the record a process keeps for the tasks it
 * knows (tasks.c) and the write-through to a host's task store
 * (tasks_store.c, probemcp/tasks.h). */
#ifndef PMCP_CORE_TASKS_INT_H
#define PMCP_CORE_TASKS_INT_H

#include <pthread.h>

#include "core/engine.h"
#include "probemcp/tasks.h"
#include "util/json.h"

typedef enum { T_WORKING, T_INPUT, T_COMPLETED, T_FAILED, T_CANCELLED } pmcp__t_status;

/* One task this process knows. Every field is guarded by srv->mu. */
typedef struct pmcp__task {
  char *id;          /* the sealed id the client holds */
  char *session;     /* the internal session the call runs on */
  void *ud;          /* the caller (its session's user data) */
  char *owner;       /* the caller's stable name (task store), or NULL */
  pmcp__t_status status;
  long long created_ms, updated_ms;
  char *tool;        /* tools/call params.name (JSON string) */
  char *args;        /* params.arguments (JSON) or NULL */
  char *caps;        /* the caller's clientCapabilities (JSON) */
  cJSON *answers;    /* inputResponses so far (object) */
  cJSON *asked;      /* pending inputRequests (object) or NULL */
  char *outcome;     /* result or error object text */
  unsigned round;
  int running;       /* a round runs in this process now */
  int unsaved;       /* its latest state is not in the task store yet (a write
                      * failed): the renewer writes it again, and this copy,
                      * not the store's, is the task until then */
  unsigned snaps;    /* records taken of it for the store, to tell whose
                      * write came last */
  struct pmcp__task *next;
} pmcp__task;

/* The latest state of a task this process announced or saw (tasks_watch.c). */
typedef struct pmcp__task_seen {
  char *id;
  int status; /* a pmcp__t_status, -1 before the first */
  long long updated_ms;
} pmcp__task_seen;

/* How often a replica reads the tasks its listeners ask about that run
 * elsewhere (tasks_watch.c): their notifications come at most this late. */
#define PMCP__TASK_WATCH_MS 1000

/* The server's task store, when the host gave one. */
typedef struct pmcp__task_durable {
  pmcp_task_store cb;
  char runner[40];          /* this process, in the records it runs */
  long long lease_ms;
  long long last_sweep_ms;  /* guarded by srv->mu */
  pthread_mutex_t mu;       /* the renewer's wake-up */
  pthread_cond_t cv;
  pthread_t renewer;
  int renewer_started, stop; /* under mu */
  pthread_t watcher;        /* tasks_watch.c; shares mu, cv and stop */
  int watcher_started;      /* under mu */
  pmcp__task_seen *seen;    /* guarded by srv->mu */
  size_t n_seen, cap_seen;
} pmcp__task_durable;

const char *pmcp__task_status_name(pmcp__t_status s);
int pmcp__task_status_parse(const char *name, pmcp__t_status *out);
long long pmcp__tasks_now_ms(void);
void pmcp__task_free(pmcp__task *t);

/* ---- tasks_store.c ---- */
/* A task as a record: every string copied (clear it after). Caller holds
 * srv->mu. The runner and lease are this process's when it is working. */
int pmcp__task_to_record_locked(pmcp_server *srv, const pmcp__task *t,
                                pmcp_task_record *out);
/* A record as a task (no session, no user data). NULL: out of memory or
 * a damaged record. */
pmcp__task *pmcp__task_from_record(const pmcp_task_record *rec);
/* The caller's stable name for @p session_ud (malloc'd), or NULL. */
char *pmcp__tasks_owner(pmcp_server *srv, const void *session_ud);
/* Writes @p t through (create when @p is_new). Caller does NOT hold
 * srv->mu; @p rec comes from pmcp__task_to_record_locked. */
int pmcp__tasks_put(pmcp_server *srv, const pmcp_task_record *rec, int is_new);
/* Reads @p id (caller does not hold srv->mu); a working record whose
 * runner's lease ran out, not held here, is marked
 * failed on the way (and written back). */
int pmcp__tasks_load(pmcp_server *srv, const char *id, pmcp_task_record *out);
/* Now and then: the store's expired records are swept. */
void pmcp__tasks_maybe_sweep(pmcp_server *srv);
/* Runs @p fn every @p every ms until the store's threads are stopped
 * (the renewer's and the watcher's loop). */
void pmcp__tasks_every(pmcp_server *srv, long long every, void (*fn)(pmcp_server *srv));
/* Starts the lease renewer (once); 0 or an error. */
int pmcp__tasks_renewer_start(pmcp_server *srv);
/* Stops the renewer (first thing in pmcp_server_free). */
void pmcp__tasks_renewer_stop(pmcp_server *srv);
/* Stops a call this process runs whose record @p rec (read from the store)
 * became final elsewhere (tasks.c). */
void pmcp__tasks_stop_local(pmcp_server *srv, const char *id, const pmcp_task_record *rec);
/* ---- tasks.c, for tasks_watch.c ---- */
/* The task as tasks/get shows it (@p detail) or as a task result. Caller
 * holds srv->mu when @p t is one of the server's. */
int pmcp__task_json(const pmcp__task *t, int detail, pmcp_buf *b);
/* Running here, or ended here with that end not written yet: this
 * process's copy is the newer. Caller holds srv->mu. */
int pmcp__task_held_here_locked(pmcp_server *srv, const char *id);
/* The write of snapshot @p snap of task @p id ended with @p rc: a success
 * (or a final record found there) marks it saved, unless a later
 * snapshot was taken meanwhile. Takes srv->mu. */
void pmcp__task_saved(pmcp_server *srv, const char *id, unsigned snap, int rc);

/* ---- tasks_watch.c ---- */
/* Starts the watcher of tasks running elsewhere (once; only with a task
 * store); 0 or an error. Stopped with the renewer. */
int pmcp__tasks_watch_start(pmcp_server *srv);
/* Remembers that this process announced task @p id at @p status,
 * @p updated_ms, so the watcher does not say it again. Caller holds
 * srv->mu. */
void pmcp__tasks_seen_locked(pmcp_server *srv, const char *id, int status,
                             long long updated_ms);

/* Stops the renewer and lets go of the store (pmcp_server_free). */
void pmcp__tasks_store_close(pmcp_server *srv);

#endif
