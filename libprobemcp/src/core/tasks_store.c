/* SPDX-License-Identifier: MIT */
/* Tasks in a host's task store (probemcp/tasks.h): records to and from
 * the engine's tasks, the write-through, the reading that fails a task
 * whose runner is gone, the sweep of expired records and the renewer that
 * keeps the leases of the tasks this process runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/jdoc.h"
#include "core/tasks_int.h"
#include "util/buf.h"
#include "util/crypto.h"

#define DEFAULT_LEASE_MS 30000
#define SWEEP_EVERY_MS 60000
#define TASK_TTL_MS 3600000

static const char gone_error[] =
    "{\"code\":-32603,\"message\":\"Internal error: the server process running this task "
    "stopped before it finished (its lease ran out); call the tool again\"}";

void pmcp_task_record_clear(pmcp_task_record *r)
{
  if (!r)
    return;
  free(r->id);
  free(r->owner);
  free(r->status);
  free(r->request);
  free(r->answers);
  free(r->input_requests);
  free(r->result);
  free(r->error);
  free(r->runner);
  memset(r, 0, sizeof *r);
}

int pmcp_server_set_task_store(pmcp_server *srv, const pmcp_task_store *store)
{
  if (!srv || srv->magic != PMCP__SERVER_MAGIC || !store || !store->create ||
      !store->update || !store->get || !store->sweep || store->lease_ms < 0)
    return PMCP_EINVAL;
  if (atomic_load(&srv->started) || srv->task_store)
    return PMCP_EMISUSE;
  pmcp__task_durable *d = calloc(1, sizeof *d);
  unsigned char rnd[16];
  if (!d || pmcp__random_bytes(rnd, sizeof rnd)) {
    free(d);
    return d ? PMCP_EINTERNAL : PMCP_ENOMEM;
  }
  d->cb = *store;
  d->lease_ms = store->lease_ms ? store->lease_ms : DEFAULT_LEASE_MS;
  for (size_t i = 0; i < sizeof rnd; i++)
    snprintf(d->runner + 2 * i, 3, "%02x", rnd[i]);
  pthread_mutex_init(&d->mu, NULL);
  pthread_cond_init(&d->cv, NULL);
  srv->task_store = d;
  return 0;
}

/* ---- records ---- */

static char *dup_or_null(const char *s, int *oom)
{
  if (!s)
    return NULL;
  char *d = strdup(s);
  if (!d)
    *oom = 1;
  return d;
}

static char *json_text(const cJSON *j, int *oom)
{
  if (!j)
    return NULL;
  char *s = cJSON_PrintUnformatted(j);
  char *d = s ? strdup(s) : NULL;
  cJSON_free(s);
  if (!d)
    *oom = 1;
  return d;
}

int pmcp__task_to_record_locked(pmcp_server *srv, const pmcp__task *t, pmcp_task_record *out)
{
  pmcp__task_durable *d = srv->task_store;
  memset(out, 0, sizeof *out);
  int oom = 0;
  pmcp_buf req = PMCP_BUF_INIT;
  oom = pmcp__buf_printf(&req, "{\"name\":%s,\"arguments\":%s,\"clientCapabilities\":%s}",
                         t->tool, t->args ? t->args : "{}", t->caps) != 0;
  out->request = oom ? NULL : strdup(req.ptr);
  pmcp_buf_dispose(&req);
  if (!out->request)
    oom = 1;
  out->id = dup_or_null(t->id, &oom);
  out->owner = dup_or_null(t->owner ? t->owner : "", &oom);
  out->status = dup_or_null(pmcp__task_status_name(t->status), &oom);
  out->answers = json_text(t->answers, &oom);
  if (t->status == T_INPUT)
    out->input_requests = json_text(t->asked, &oom);
  if (t->status == T_COMPLETED)
    out->result = dup_or_null(t->outcome, &oom);
  if (t->status == T_FAILED)
    out->error = dup_or_null(t->outcome, &oom);
  out->created_ms = t->created_ms;
  out->updated_ms = t->updated_ms;
  out->expires_ms = t->updated_ms + TASK_TTL_MS;
  if (t->status == T_WORKING && d) {
    /* Working and written by this process: it runs the call (a record
     * is written by its runner, or by whoever ends or resumes it). */
    out->runner = dup_or_null(d->runner, &oom);
    out->lease_ms = pmcp__tasks_now_ms() + d->lease_ms;
    /* A running call is never cut short by its TTL: the record lives at
     * least as long as its lease. */
    if (out->expires_ms < out->lease_ms)
      out->expires_ms = out->lease_ms;
  }
  if (oom) {
    pmcp_task_record_clear(out);
    return PMCP_ENOMEM;
  }
  return 0;
}

pmcp__task *pmcp__task_from_record(const pmcp_task_record *rec)
{
  pmcp__task *t = calloc(1, sizeof *t);
  cJSON *req = rec->request ? cJSON_Parse(rec->request) : NULL;
  int oom = !t || !req;
  if (!oom && (!rec->id || !rec->status || pmcp__task_status_parse(rec->status, &t->status)))
    oom = 1;
  if (!oom) {
    t->id = dup_or_null(rec->id, &oom);
    t->owner = dup_or_null(rec->owner ? rec->owner : "", &oom);
    t->tool = json_text(pmcp__jget(req, "name"), &oom);
    const cJSON *args = pmcp__jget(req, "arguments");
    t->args = args && !cJSON_IsNull(args) ? json_text(args, &oom) : NULL;
    t->caps = json_text(pmcp__jget(req, "clientCapabilities"), &oom);
    t->answers = rec->answers ? cJSON_Parse(rec->answers) : cJSON_CreateObject();
    t->asked = rec->input_requests ? cJSON_Parse(rec->input_requests) : NULL;
    const char *outcome = t->status == T_COMPLETED ? rec->result
                          : t->status == T_FAILED  ? rec->error
                                                   : NULL;
    t->outcome = dup_or_null(outcome, &oom);
    t->created_ms = rec->created_ms;
    t->updated_ms = rec->updated_ms;
    if (!t->tool || !t->caps || !cJSON_IsObject(t->answers) ||
        (rec->input_requests && !cJSON_IsObject(t->asked)))
      oom = 1;
  }
  cJSON_Delete(req);
  if (oom) {
    pmcp__task_free(t);
    return NULL;
  }
  return t;
}

char *pmcp__tasks_owner(pmcp_server *srv, const void *session_ud)
{
  pmcp__task_durable *d = srv->task_store;
  char name[512] = "";
  if (d && d->cb.owner && d->cb.owner(d->cb.ud, session_ud, name, sizeof name) != 0)
    return NULL;
  name[sizeof name - 1] = '\0';
  return strdup(name);
}

/* ---- write-through, reading ---- */

int pmcp__tasks_put(pmcp_server *srv, const pmcp_task_record *rec, int is_new)
{
  pmcp__task_durable *d = srv->task_store;
  if (!d)
    return 0;
  int rc = is_new ? d->cb.create(d->cb.ud, rec) : d->cb.update(d->cb.ud, rec);
  if (rc && rc != PMCP_ESTALE)
    pmcp__log(srv, PMCP_LOG_WARNING, "task store: %s a task failed: %s",
              is_new ? "creating" : "updating", pmcp_strerror(rc));
  return rc;
}

int pmcp__tasks_load(pmcp_server *srv, const char *id, pmcp_task_record *out)
{
  pmcp__task_durable *d = srv->task_store;
  memset(out, 0, sizeof *out);
  int rc = d->cb.get(d->cb.ud, id, out);
  if (rc) {
    pmcp_task_record_clear(out);
    if (rc != PMCP_ENOTFOUND)
      pmcp__log(srv, PMCP_LOG_WARNING, "task store: reading a task failed: %s",
                pmcp_strerror(rc));
    return rc;
  }
  long long now = pmcp__tasks_now_ms();
  if (out->expires_ms && out->expires_ms < now) {
    pmcp_task_record_clear(out);
    return PMCP_ENOTFOUND;
  }
  pthread_mutex_lock(&srv->mu);
  int here = pmcp__task_held_here_locked(srv, id);
  pthread_mutex_unlock(&srv->mu);
  if (!here && out->status && strcmp(out->status, "working") == 0 && out->lease_ms < now) {
    /* Its runner stopped renewing: the process is gone. The task fails,
     * once and for all (a final status never changes), so no reader
     * waits for it for ever. (A task this process holds is not gone: its
     * renewal failed, and this copy answers for it.) */
    char *status = strdup("failed"), *error = strdup(gone_error);
    if (!status || !error) {
      free(status);
      free(error);
      pmcp_task_record_clear(out);
      return PMCP_ENOMEM;
    }
    free(out->status);
    free(out->error);
    free(out->runner);
    out->status = status;
    out->error = error;
    out->runner = NULL;
    out->updated_ms = now;
    out->expires_ms = now + TASK_TTL_MS;
    if (d->cb.update(d->cb.ud, out) == PMCP_ESTALE) {
      /* Someone else finished it meanwhile: theirs is the record. */
      pmcp_task_record_clear(out);
      return pmcp__tasks_load(srv, id, out);
    }
  }
  return 0;
}

void pmcp__tasks_maybe_sweep(pmcp_server *srv)
{
  pmcp__task_durable *d = srv->task_store;
  if (!d)
    return;
  long long now = pmcp__tasks_now_ms();
  pthread_mutex_lock(&srv->mu);
  int due = now - d->last_sweep_ms >= SWEEP_EVERY_MS;
  if (due)
    d->last_sweep_ms = now;
  pthread_mutex_unlock(&srv->mu);
  if (due && d->cb.sweep(d->cb.ud, now) != 0)
    pmcp__log(srv, PMCP_LOG_WARNING, "task store: sweeping expired tasks failed");
}

/* ---- the renewer ---- */

/* Renews the lease of every task this process runs, and writes again
 * the ones whose last write failed; one whose record became final
 * elsewhere (cancelled on another replica) stops here. */
static void renew_all(pmcp_server *srv)
{
  pmcp__task_durable *d = srv->task_store;
  size_t n = 0, cap = 0;
  pmcp_task_record *recs = NULL;
  unsigned *snaps = NULL;
  pthread_mutex_lock(&srv->mu);
  for (pmcp__task *t = srv->tasks; t; t = t->next) {
    /* A call running here whose task ended elsewhere is among them: its
     * update is refused (final), which stops it below. */
    if (!t->running && !t->unsaved)
      continue;
    if (n == cap) {
      size_t nc = cap ? 2 * cap : 8;
      pmcp_task_record *g = realloc(recs, nc * sizeof *g);
      if (g)
        recs = g;
      unsigned *gs = g ? realloc(snaps, nc * sizeof *gs) : NULL;
      if (!gs)
        break;
      snaps = gs;
      cap = nc;
    }
    if (pmcp__task_to_record_locked(srv, t, &recs[n]) == 0)
      snaps[n++] = ++t->snaps;
  }
  pthread_mutex_unlock(&srv->mu);
  for (size_t i = 0; i < n; i++) {
    int rc = d->cb.update(d->cb.ud, &recs[i]);
    pmcp__task_saved(srv, recs[i].id, snaps[i], rc);
    if (rc == PMCP_ESTALE) {
      pmcp_task_record now;
      memset(&now, 0, sizeof now);
      if (d->cb.get(d->cb.ud, recs[i].id, &now) == 0)
        pmcp__tasks_stop_local(srv, recs[i].id, &now);
      pmcp_task_record_clear(&now);
    }
    pmcp_task_record_clear(&recs[i]);
  }
  free(recs);
  free(snaps);
}

void pmcp__tasks_every(pmcp_server *srv, long long every, void (*fn)(pmcp_server *srv))
{
  pmcp__task_durable *d = srv->task_store;
  pthread_mutex_lock(&d->mu);
  while (!d->stop) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long ns = ts.tv_nsec + (every % 1000) * 1000000LL;
    ts.tv_sec += (time_t)(every / 1000 + ns / 1000000000LL);
    ts.tv_nsec = (long)(ns % 1000000000LL);
    pthread_cond_timedwait(&d->cv, &d->mu, &ts);
    if (d->stop)
      break;
    pthread_mutex_unlock(&d->mu);
    fn(srv);
    pthread_mutex_lock(&d->mu);
  }
  pthread_mutex_unlock(&d->mu);
}

static void *renewer(void *arg)
{
  pmcp_server *srv = arg;
  pmcp__task_durable *d = srv->task_store;
  pmcp__tasks_every(srv, d->lease_ms / 3 > 0 ? d->lease_ms / 3 : 1, renew_all);
  return NULL;
}

int pmcp__tasks_renewer_start(pmcp_server *srv)
{
  pmcp__task_durable *d = srv->task_store;
  if (!d)
    return 0;
  pthread_mutex_lock(&d->mu);
  int rc = 0;
  if (!d->renewer_started && !d->stop) {
    rc = pthread_create(&d->renewer, NULL, renewer, srv) ? PMCP_EINTERNAL : 0;
    d->renewer_started = rc == 0;
  }
  pthread_mutex_unlock(&d->mu);
  return rc;
}

void pmcp__tasks_renewer_stop(pmcp_server *srv)
{
  pmcp__task_durable *d = srv->task_store;
  if (!d)
    return;
  pthread_mutex_lock(&d->mu);
  d->stop = 1;
  int joined = d->renewer_started, watched = d->watcher_started;
  d->renewer_started = 0;
  d->watcher_started = 0;
  pthread_cond_broadcast(&d->cv);
  pthread_mutex_unlock(&d->mu);
  if (joined)
    pthread_join(d->renewer, NULL);
  if (watched)
    pthread_join(d->watcher, NULL);
}

void pmcp__tasks_store_close(pmcp_server *srv)
{
  pmcp__task_durable *d = srv->task_store;
  if (!d)
    return;
  pmcp__tasks_renewer_stop(srv);
  if (d->cb.release)
    d->cb.release(d->cb.ud);
  pthread_cond_destroy(&d->cv);
  pthread_mutex_destroy(&d->mu);
  for (size_t i = 0; i < d->n_seen; i++)
    free(d->seen[i].id);
  free(d->seen);
  free(d);
  srv->task_store = NULL;
}
