/* SPDX-License-Identifier: MIT */
/* Task status notifications for tasks run by another process (replica):
 * with a task store, a client listening (subscriptions/listen) on this
 * replica for a task running on another one gets its notifications/tasks
 * too. The replica running a task announces its changes to its own
 * listeners as they happen (tasks.c); the others learn them by reading the
 * store: a watcher thread, started by the first listener with taskIds,
 * reads every listened-for task that does not run here once per
 * PMCP__TASK_WATCH_MS and announces each change of status (or of
 * lastUpdatedAt) it sees, to the listeners of the task's own caller only.
 * What this process announced itself is remembered (pmcp__tasks_seen_locked)
 * and never said twice. The task store interface has no change feed, so
 * this works over every store (PostgreSQL's included) at the price of one
 * read per listened-for task and interval. */
#include <stdlib.h>
#include <string.h>

#include "core/tasks_int.h"
#include "util/buf.h"

/* The latest state of task @p id this process announced or saw; added
 * when missing. Caller holds srv->mu. NULL: out of memory. */
static pmcp__task_seen *seen_entry(pmcp__task_durable *d, const char *id, int add)
{
  for (size_t i = 0; i < d->n_seen; i++)
    if (strcmp(d->seen[i].id, id) == 0)
      return &d->seen[i];
  if (!add)
    return NULL;
  if (d->n_seen == d->cap_seen) {
    size_t nc = d->cap_seen ? 2 * d->cap_seen : 8;
    pmcp__task_seen *g = realloc(d->seen, nc * sizeof *g);
    if (!g)
      return NULL;
    d->seen = g;
    d->cap_seen = nc;
  }
  char *copy = strdup(id);
  if (!copy)
    return NULL;
  pmcp__task_seen *e = &d->seen[d->n_seen++];
  memset(e, 0, sizeof *e);
  e->id = copy;
  e->status = -1;
  return e;
}

void pmcp__tasks_seen_locked(pmcp_server *srv, const char *id, int status, long long updated_ms)
{
  pmcp__task_durable *d = srv->task_store;
  /* Remembered only while someone listens for it (the watcher forgets
   * the rest), so tasks nobody listens to cost nothing here. */
  int listened = 0;
  for (pmcp__req *r = d ? srv->listeners : NULL; r && !listened; r = r->lnext)
    for (const cJSON *u = r->listen_tasks ? r->listen_tasks->child : NULL; u && !listened;
         u = u->next)
      listened = strcmp(u->valuestring, id) == 0;
  pmcp__task_seen *e = d ? seen_entry(d, id, listened) : NULL;
  if (e) {
    e->status = status;
    e->updated_ms = updated_ms;
  }
}

/* One listener's interest in one task, copied out of the listener list. */
typedef struct interest {
  char *id;
  pmcp__session *sess; /* a reference: its user data is the caller */
  long long since_ms;  /* when the listener registered */
} interest;

/* Forgets what no listener asks about any more. Caller holds srv->mu. */
static void prune_locked(pmcp__task_durable *d, const interest *in, size_t n)
{
  size_t k = 0;
  for (size_t i = 0; i < d->n_seen; i++) {
    int wanted = 0;
    for (size_t j = 0; j < n && !wanted; j++)
      wanted = strcmp(in[j].id, d->seen[i].id) == 0;
    if (wanted)
      d->seen[k++] = d->seen[i];
    else
      free(d->seen[i].id);
  }
  d->n_seen = k;
}

/* The listened-for tasks that do not run here, one entry per listener
 * and task. Caller holds srv->mu. */
static size_t collect_locked(pmcp_server *srv, interest **out)
{
  size_t n = 0, cap = 0;
  interest *in = NULL;
  for (pmcp__req *r = srv->listeners; r; r = r->lnext) {
    for (const cJSON *u = r->listen_tasks ? r->listen_tasks->child : NULL; u; u = u->next) {
      if (pmcp__task_held_here_locked(srv, u->valuestring))
        continue; /* announced by this process as it changes */
      if (n == cap) {
        size_t nc = cap ? 2 * cap : 8;
        interest *g = realloc(in, nc * sizeof *g);
        if (!g)
          goto out;
        in = g;
        cap = nc;
      }
      if (!(in[n].id = strdup(u->valuestring)))
        goto out;
      in[n].sess = r->sess;
      in[n].since_ms = r->listen_since_ms;
      r->sess->refs++;
      n++;
    }
  }
out:
  *out = in;
  return n;
}

/* Announces task in[i].id's record @p rec to the listeners among @p in of
 * its own caller, each caller once. */
static void tell(pmcp_server *srv, const interest *in, size_t n, size_t i,
                 const pmcp_task_record *rec)
{
  pmcp__task *t = pmcp__task_from_record(rec);
  pmcp_buf b = PMCP_BUF_INIT;
  if (!t || pmcp__task_json(t, 1, &b) || b.len < 2) {
    pmcp__task_free(t);
    pmcp_buf_dispose(&b);
    return;
  }
  b.ptr[b.len - 1] = '\0'; /* the members, without the braces */
  for (size_t j = i; j < n; j++) {
    if (strcmp(in[j].id, in[i].id) != 0)
      continue;
    int done = 0; /* this caller was told already */
    for (size_t k = i; k < j && !done; k++)
      done = strcmp(in[k].id, in[i].id) == 0 && in[k].sess->ud == in[j].sess->ud;
    if (done)
      continue;
    char *owner = pmcp__tasks_owner(srv, in[j].sess->ud);
    if (owner && rec->owner && strcmp(owner, rec->owner) == 0)
      pmcp__listen_notify_task(srv, in[i].id, in[j].sess->ud, b.ptr + 1);
    free(owner);
  }
  pmcp__task_free(t);
  pmcp_buf_dispose(&b);
}

static void watch_once(pmcp_server *srv)
{
  pmcp__task_durable *d = srv->task_store;
  interest *in = NULL;
  pthread_mutex_lock(&srv->mu);
  size_t n = collect_locked(srv, &in);
  pthread_mutex_unlock(&srv->mu);
  for (size_t i = 0; i < n; i++) {
    int first = 1; /* the first entry of its task */
    for (size_t k = 0; k < i && first; k++)
      first = strcmp(in[k].id, in[i].id) != 0;
    if (!first)
      continue;
    pmcp_task_record rec;
    memset(&rec, 0, sizeof rec);
    if (pmcp__tasks_load(srv, in[i].id, &rec) != 0) {
      pmcp_task_record_clear(&rec);
      continue; /* unknown (or the store is down): nothing to say */
    }
    pmcp__t_status st;
    if (!rec.status || pmcp__task_status_parse(rec.status, &st)) {
      pmcp_task_record_clear(&rec);
      continue;
    }
    long long since = in[i].since_ms;
    for (size_t k = i + 1; k < n; k++)
      if (strcmp(in[k].id, in[i].id) == 0 && in[k].since_ms < since)
        since = in[k].since_ms;
    pthread_mutex_lock(&srv->mu);
    pmcp__task_seen *e = seen_entry(d, in[i].id, 1);
    int changed = 0;
    if (e && !pmcp__task_held_here_locked(srv, in[i].id)) {
      /* Never seen: a change only when it came after the listener did
       * (the state before was the client's to ask for). */
      changed = e->status < 0 ? rec.updated_ms >= since
                              : (e->status != (int)st || e->updated_ms != rec.updated_ms);
      e->status = (int)st;
      e->updated_ms = rec.updated_ms;
    }
    pthread_mutex_unlock(&srv->mu);
    if (changed)
      tell(srv, in, n, i, &rec);
    pmcp_task_record_clear(&rec);
  }
  pthread_mutex_lock(&srv->mu);
  prune_locked(d, in, n);
  pthread_mutex_unlock(&srv->mu);
  for (size_t i = 0; i < n; i++) {
    free(in[i].id);
    pmcp__session_unref(srv, in[i].sess);
  }
  free(in);
}

static void *watcher(void *arg)
{
  pmcp__tasks_every(arg, PMCP__TASK_WATCH_MS, watch_once);
  return NULL;
}

int pmcp__tasks_watch_start(pmcp_server *srv)
{
  pmcp__task_durable *d = srv->task_store;
  if (!d)
    return 0;
  pthread_mutex_lock(&d->mu);
  int rc = 0;
  if (!d->watcher_started && !d->stop) {
    rc = pthread_create(&d->watcher, NULL, watcher, srv) ? PMCP_EINTERNAL : 0;
    d->watcher_started = rc == 0;
  }
  pthread_mutex_unlock(&d->mu);
  return rc;
}
