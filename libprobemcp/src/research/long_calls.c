/* SPDX-License-Identifier: MIT */
/* Long calls per principal and in all (long_calls.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/workers.h"
#include "probemcp/error.h"
#include "research/long_calls.h"

void pmcp__long_init(pmcp__long_calls *l)
{
  memset(l, 0, sizeof *l);
  pthread_mutex_init(&l->mu, NULL);
}

void pmcp__long_dispose(pmcp__long_calls *l)
{
  pthread_mutex_destroy(&l->mu);
}

/* A positive count from environment variable @p name, else @p dflt. */
static size_t env_count(const char *name, size_t dflt)
{
  const char *v = getenv(name);
  if (!v || !*v)
    return dflt;
  char *end = NULL;
  unsigned long n = strtoul(v, &end, 10);
  return end && !*end && *v != '-' && n >= 1 && n <= 100000 ? (size_t)n : dflt;
}

int pmcp__long_enter(pmcp__long_calls *l, pmcp_server *srv, const char *who, char *msg,
                     size_t msglen)
{
  if (!who)
    who = "";
  pthread_mutex_lock(&l->mu);
  if (!l->total) {
    size_t workers = srv ? pmcp__workers_count(srv) : 4;
    l->total = env_count("PROBE_MCP_SQL_MAX", workers / 2 ? workers / 2 : 1);
    /* one caller gets half of them: another always finds room */
    l->per_who = env_count("PROBE_MCP_SQL_PER_CALLER", l->total / 2 ? l->total / 2 : 1);
  }
  size_t at = PMCP__LONG_SLOTS, free_at = PMCP__LONG_SLOTS;
  for (size_t i = 0; i < PMCP__LONG_SLOTS; i++) {
    if (l->slot[i].n && !strncmp(l->slot[i].who, who, PMCP__LONG_WHO - 1)) {
      at = i;
      break;
    }
    if (!l->slot[i].n && free_at == PMCP__LONG_SLOTS)
      free_at = i;
  }
  int rc = 0;
  /* no principal known (""): the total bounds it, as it bounds every call */
  if (*who && at < PMCP__LONG_SLOTS && l->slot[at].n >= l->per_who) {
    snprintf(msg, msglen, "busy: %zu query_sql statements of this caller are running, the "
             "most one caller may run at once; retry when one ends", l->slot[at].n);
    rc = PMCP_ETIMEOUT;
  } else if (l->running >= l->total || (at == PMCP__LONG_SLOTS && free_at == PMCP__LONG_SLOTS)) {
    snprintf(msg, msglen, "busy: the server runs %zu query_sql statements, the most it runs "
             "at once; retry in a few seconds", l->running);
    rc = PMCP_ETIMEOUT;
  } else {
    if (at == PMCP__LONG_SLOTS) {
      at = free_at;
      snprintf(l->slot[at].who, PMCP__LONG_WHO, "%s", who);
    }
    l->slot[at].n++;
    l->running++;
  }
  pthread_mutex_unlock(&l->mu);
  return rc;
}

void pmcp__long_leave(pmcp__long_calls *l, const char *who)
{
  if (!who)
    who = "";
  pthread_mutex_lock(&l->mu);
  for (size_t i = 0; i < PMCP__LONG_SLOTS; i++)
    if (l->slot[i].n && !strncmp(l->slot[i].who, who, PMCP__LONG_WHO - 1)) {
      l->slot[i].n--;
      l->running--;
      break;
    }
  pthread_mutex_unlock(&l->mu);
}

void pmcp__fifo_init(pmcp__fifo *f)
{
  pthread_mutex_init(&f->mu, NULL);
  pthread_cond_init(&f->turn, NULL);
  f->next = f->serving = 0;
}

void pmcp__fifo_dispose(pmcp__fifo *f)
{
  pthread_cond_destroy(&f->turn);
  pthread_mutex_destroy(&f->mu);
}

void pmcp__fifo_lock(pmcp__fifo *f)
{
  pthread_mutex_lock(&f->mu);
  unsigned long mine = f->next++;
  while (f->serving != mine)
    pthread_cond_wait(&f->turn, &f->mu);
  pthread_mutex_unlock(&f->mu);
}

void pmcp__fifo_unlock(pmcp__fifo *f)
{
  pthread_mutex_lock(&f->mu);
  f->serving++;
  pthread_cond_broadcast(&f->turn);
  pthread_mutex_unlock(&f->mu);
}
