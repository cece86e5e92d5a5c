/* SPDX-License-Identifier: MIT */
/* Internal: how many long calls (query_sql's statements) run at once, per
 * principal and in all, so that one caller looping runaway statements
 * keeps neither the workers nor the query connection from the others:
 * past a bound the call is refused at once as busy, to retry. */
#ifndef PMCP_RESEARCH_LONG_CALLS_H
#define PMCP_RESEARCH_LONG_CALLS_H

#include <pthread.h>
#include <stddef.h>

#include "probemcp/server.h"

#define PMCP__LONG_WHO 72
#define PMCP__LONG_SLOTS 64

typedef struct pmcp__long_calls {
  pthread_mutex_t mu;
  size_t per_who, total; /* the bounds; 0 until the first call */
  size_t running;
  struct {
    char who[PMCP__LONG_WHO];
    size_t n;
  } slot[PMCP__LONG_SLOTS];
} pmcp__long_calls;

void pmcp__long_init(pmcp__long_calls *l);
void pmcp__long_dispose(pmcp__long_calls *l);

/* Admits a call of principal @p who ("" when the host names none: one
 * principal for all) on server @p srv: 0, or PMCP_ETIMEOUT with a message
 * for the caller in @p msg. The bounds: PROBE_MCP_SQL_MAX (default half
 * the server's workers, at least 1) in all, PROBE_MCP_SQL_PER_CALLER
 * (default half of that, at least 1) per principal; a call of no known
 * principal ("") counts toward the total only. */
int pmcp__long_enter(pmcp__long_calls *l, pmcp_server *srv, const char *who, char *msg,
                     size_t msglen);
/* Ends a call @p who was admitted for. */
void pmcp__long_leave(pmcp__long_calls *l, const char *who);

/* A lock granted in the order asked (a ticket lock): a caller waiting
 * for the query connection is not passed over by another caller's next
 * statement, however fast that one comes back. */
typedef struct pmcp__fifo {
  pthread_mutex_t mu;
  pthread_cond_t turn;
  unsigned long next, serving;
} pmcp__fifo;

void pmcp__fifo_init(pmcp__fifo *f);
void pmcp__fifo_dispose(pmcp__fifo *f);
void pmcp__fifo_lock(pmcp__fifo *f);
void pmcp__fifo_unlock(pmcp__fifo *f);

#endif
