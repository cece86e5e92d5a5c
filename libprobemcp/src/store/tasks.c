/* SPDX-License-Identifier: MIT */
/* A task store (probemcp/tasks.h) over a store's tasks table, in the
 * portable SQL of the service tables (db.h), so the same code serves a
 * SQLite file and every replica of a PostgreSQL database. The tasks of a
 * tenant are apart from another tenant's by tenant_id; a final status is
 * never overwritten (the UPDATE's condition). The handle is its own,
 * read-write, and used under one lock: callbacks come from any thread. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probemcp/tasks.h"
#include "store/db.h"

typedef struct task_db {
  pmcp_store *st;
  char tenant[24];
  pthread_mutex_t mu;
} task_db;

/* A waiting writer of a SQLite store (an import) holds a task call up to
 * this long; then the call is answered with an error, never hung. */
#define WRITER_WAIT_MS 5000

static void num(char *out, long long v)
{
  snprintf(out, 24, "%lld", v);
}

static int t_create(void *ud, const pmcp_task_record *r)
{
  task_db *d = ud;
  char created[24], updated[24], expires[24], lease[24];
  num(created, r->created_ms);
  num(updated, r->updated_ms);
  num(expires, r->expires_ms);
  num(lease, r->lease_ms);
  const char *p[] = {r->id,     d->tenant,         r->owner ? r->owner : "",
                     r->status, r->request,        r->answers,
                     r->input_requests, r->result, r->error,
                     r->runner, r->runner ? lease : NULL, created,
                     updated,   expires};
  if (!r->id || !r->status || !r->request)
    return PMCP_EINVAL;
  pthread_mutex_lock(&d->mu);
  int rc = pmcp__db_exec(d->st,
      "INSERT INTO tasks(id, tenant_id, owner, status, request, answers, input_requests,"
      " result, error, runner, lease, created, updated, expires)"
      " VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
      14, p, NULL);
  pthread_mutex_unlock(&d->mu);
  return rc;
}

static int t_update(void *ud, const pmcp_task_record *r)
{
  task_db *d = ud;
  char updated[24], expires[24], lease[24];
  num(updated, r->updated_ms);
  num(expires, r->expires_ms);
  num(lease, r->lease_ms);
  const char *p[] = {r->id,     d->tenant,      r->status,
                     r->answers, r->input_requests, r->result,
                     r->error,  r->runner,      r->runner ? lease : NULL,
                     updated,   expires};
  if (!r->id || !r->status)
    return PMCP_EINVAL;
  pthread_mutex_lock(&d->mu);
  int64_t changed = 0;
  int rc = pmcp__db_exec(d->st,
      "UPDATE tasks SET status=$3, answers=$4, input_requests=$5, result=$6, error=$7,"
      " runner=$8, lease=$9, updated=$10, expires=$11"
      " WHERE id=$1 AND tenant_id=$2 AND status IN ('working', 'input_required')",
      11, p, &changed);
  if (rc == 0 && changed == 0) {
    pmcp__db_res *res = NULL;
    rc = pmcp__db_query(d->st, "SELECT 1 FROM tasks WHERE id=$1 AND tenant_id=$2", 2, p,
                        &res);
    if (rc == 0)
      rc = pmcp__db_nrows(res) ? PMCP_ESTALE : PMCP_ENOTFOUND;
    pmcp__db_res_free(res);
  }
  pthread_mutex_unlock(&d->mu);
  return rc;
}

static char *cell(const pmcp__db_res *r, size_t col, int *oom)
{
  const char *v = pmcp__db_get(r, 0, col);
  if (!v)
    return NULL;
  char *s = strdup(v);
  if (!s)
    *oom = 1;
  return s;
}

static long long cell_ll(const pmcp__db_res *r, size_t col)
{
  const char *v = pmcp__db_get(r, 0, col);
  return v ? strtoll(v, NULL, 10) : 0;
}

static int t_get(void *ud, const char *id, pmcp_task_record *out)
{
  task_db *d = ud;
  memset(out, 0, sizeof *out);
  const char *p[] = {id, d->tenant};
  pmcp__db_res *res = NULL;
  pthread_mutex_lock(&d->mu);
  int rc = pmcp__db_query(d->st,
      "SELECT id, owner, status, request, answers, input_requests, result, error, runner,"
      " lease, created, updated, expires FROM tasks WHERE id=$1 AND tenant_id=$2",
      2, p, &res);
  pthread_mutex_unlock(&d->mu);
  if (rc == 0 && pmcp__db_nrows(res) == 0)
    rc = PMCP_ENOTFOUND;
  if (rc == 0) {
    int oom = 0;
    out->id = cell(res, 0, &oom);
    out->owner = cell(res, 1, &oom);
    out->status = cell(res, 2, &oom);
    out->request = cell(res, 3, &oom);
    out->answers = cell(res, 4, &oom);
    out->input_requests = cell(res, 5, &oom);
    out->result = cell(res, 6, &oom);
    out->error = cell(res, 7, &oom);
    out->runner = cell(res, 8, &oom);
    out->lease_ms = cell_ll(res, 9);
    out->created_ms = cell_ll(res, 10);
    out->updated_ms = cell_ll(res, 11);
    out->expires_ms = cell_ll(res, 12);
    if (oom) {
      pmcp_task_record_clear(out);
      rc = PMCP_ENOMEM;
    }
  }
  pmcp__db_res_free(res);
  return rc;
}

static int t_sweep(void *ud, long long now_ms)
{
  task_db *d = ud;
  char now[24];
  num(now, now_ms);
  const char *p[] = {now};
  pthread_mutex_lock(&d->mu);
  /* Every tenant's: an expired task is nobody's. */
  int rc = pmcp__db_exec(d->st, "DELETE FROM tasks WHERE expires < $1", 1, p, NULL);
  pthread_mutex_unlock(&d->mu);
  return rc;
}

static void t_release(void *ud)
{
  task_db *d = ud;
  if (!d)
    return;
  pmcp_store_free(d->st);
  pthread_mutex_destroy(&d->mu);
  free(d);
}

int pmcp_store_task_store(const char *where, const char *tenant, pmcp_task_store *out,
                          char *why, size_t why_size)
{
  if (!out)
    return PMCP_EINVAL;
  memset(out, 0, sizeof *out);
  if (why && why_size)
    why[0] = '\0';
  task_db *d = calloc(1, sizeof *d);
  if (!d)
    return PMCP_ENOMEM;
  int rc = pmcp_store_open(&d->st, where, 0);
  pmcp_tenant t = {0};
  if (rc == 0)
    rc = pmcp_store_tenant(d->st, tenant, 0, &t);
  if (rc) {
    if (why && why_size)
      snprintf(why, why_size, "%s", d->st && *pmcp_store_errmsg(d->st)
                                        ? pmcp_store_errmsg(d->st)
                                        : pmcp_strerror(rc));
    pmcp_store_free(d->st);
    free(d);
    return rc;
  }
  pmcp__store_writer_wait(d->st, WRITER_WAIT_MS);
  snprintf(d->tenant, sizeof d->tenant, "%" PRId64, t.id);
  pthread_mutex_init(&d->mu, NULL);
  out->ud = d;
  out->create = t_create;
  out->update = t_update;
  out->get = t_get;
  out->sweep = t_sweep;
  out->release = t_release;
  /* How long a killed process's tasks stay "working" (0: the engine's
   * default, 30 s). */
  const char *lease = getenv("PROBE_TASK_LEASE_MS");
  long long ms = lease && *lease ? strtoll(lease, NULL, 10) : 0;
  out->lease_ms = ms > 0 ? ms : 0;
  return 0;
}
