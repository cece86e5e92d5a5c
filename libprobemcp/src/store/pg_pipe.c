/* SPDX-License-Identifier: MIT */
/* PostgreSQL backend: pipeline mode (libpq >= 14, loaded by pq_dl.c; with
 * an older libpq, or PROBE_PG_PIPELINE=off, every statement waits for its
 * answer as before and pmcp__pg_defer runs at once).
 *
 * Inside a call's write scope, statements whose results are not needed at
 * once (the transaction's BEGIN and lock, inserts, the keyword index, the
 * version bump, COMMIT) are only sent. A step that needs rows sends its
 * statement too, asks the server to flush, and reads every result due in
 * order; the end of the scope sends a sync and reads the rest. A failure
 * makes the server skip what follows up to the sync, so a call's writes
 * stand or fall together: the scope's rollback (pg_conn.c) undoes them,
 * and the error names the statement that failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg.h"

/* Room for the entries one send may add (DEALLOCATE, prepare, the
 * statement), so that nothing sent goes unrecorded. */
static int sent_reserve(pmcp__pg *g)
{
  if (g->n_sent + 3 <= g->cap_sent)
    return 0;
  size_t cap = g->cap_sent ? g->cap_sent * 2 : 64;
  pmcp__pg_sent *e = realloc(g->sent, cap * sizeof *e);
  if (!e)
    return -1;
  g->sent = e;
  g->cap_sent = cap;
  return 0;
}

static void sent_push(pmcp__pg *g, pmcp__pg_stmt *keep, pmcp__pg_stmt *prep, const char *what)
{
  pmcp__pg_sent *e = &g->sent[g->n_sent++];
  e->keep = keep;
  e->prep = prep;
  e->what = what;
}

/* A connection lost with results due: none of them will come. */
static void mark_lost(pmcp__pg *g)
{
  if (!pmcp__pg_lost(g))
    return;
  snprintf(g->sqlstate, sizeof g->sqlstate, "08006");
  if (g->in_txn)
    g->txn_lost = 1;
  g->n_sent = 0;
}

/* After a failed send or read: libpq's message, and the connection's state. */
static void pipe_failed(pmcp__pg *g, const char *what)
{
  pmcp__pg_note_error(g, NULL, what);
  mark_lost(g);
}

/* Sends @p st (after its PQsendPrepare when needed); @p keep gets its
 * result. 0, or -1 with the failure noted. */
static int pipe_send(pmcp__pg_stmt *st, pmcp__pg_stmt *keep, const char *what)
{
  pmcp__pg *g = st->g;
  if (sent_reserve(g)) {
    snprintf(g->sqlstate, sizeof g->sqlstate, "53200");
    snprintf(g->lasterr, sizeof g->lasterr, "out of memory");
    snprintf(g->errwhat, sizeof g->errwhat, "%s", what ? what : "");
    return -1;
  }
  int n = st->nparams > st->sqlparams ? st->nparams : st->sqlparams;
  if (st->cached && (st->prepared_gen != g->gen + 1 || st->prepared_n != n)) {
    if (st->prepared_gen == g->gen + 1) {
      char sql[48];
      snprintf(sql, sizeof sql, "DEALLOCATE %s", st->name);
      if (!PQsendQueryParams(g->conn, sql, 0, NULL, NULL, NULL, NULL, 0))
        goto fail;
      sent_push(g, NULL, NULL, what);
    }
    st->prepared_gen = 0;
    if (!PQsendPrepare(g->conn, st->name, st->sql, n, st->types))
      goto fail;
    sent_push(g, NULL, st, what);
    st->prepared_gen = g->gen + 1;
    st->prepared_n = n;
  }
  int ok = st->cached
      ? PQsendQueryPrepared(g->conn, st->name, n, (const char *const *)st->vals, st->lens,
                            st->fmts, 0)
      : PQsendQueryParams(g->conn, st->sql, n, st->types, (const char *const *)st->vals,
                          st->lens, st->fmts, 0);
  if (!ok)
    goto fail;
  sent_push(g, keep, NULL, what);
  return 0;
fail:
  pipe_failed(g, what);
  return -1;
}

/* Reads the result of every statement sent, in order: 0, or -1 with the
 * first failure noted (the server skipped the rest). */
static int pipe_collect(pmcp__pg *g)
{
  int failed = 0;
  size_t n = g->n_sent;
  g->n_sent = 0;
  if (n && PQflush(g->conn) != 0) {
    pipe_failed(g, g->sent[0].what);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    pmcp__pg_sent *e = &g->sent[i];
    PGresult *r = PQgetResult(g->conn);
    if (!r) {
      if (!failed)
        pipe_failed(g, e->what);
      return -1;
    }
    ExecStatusType es = PQresultStatus(r);
    int ok = es == PGRES_COMMAND_OK || es == PGRES_TUPLES_OK;
    if (!ok && !failed) {
      /* A statement skipped after a failure reports no error of its own. */
      if (es != PGRES_PIPELINE_ABORTED)
        pmcp__pg_note_error(g, r, e->what);
      else
        pipe_failed(g, e->what);
      failed = 1;
    }
    if (!ok && e->prep)
      e->prep->prepared_gen = 0;
    if (ok && e->keep) {
      PQclear(e->keep->res);
      e->keep->res = r;
    } else {
      PQclear(r);
    }
    /* The end of this statement's results. */
    for (int k = 0; k < 4 && (r = PQgetResult(g->conn)) != NULL; k++)
      PQclear(r);
    if (pmcp__pg_lost(g)) {
      if (!failed)
        pmcp__pg_note_error(g, NULL, e->what);
      mark_lost(g);
      return -1;
    }
  }
  return failed ? -1 : 0;
}

#ifdef LIBPQ_HAS_PIPELINING
/* Sends a sync and reads up to its result: the server takes statements
 * again (a failed transaction stays failed until rolled back). */
static void pipe_sync(pmcp__pg *g)
{
  if (pmcp__pg_lost(g) || !PQpipelineSync(g->conn))
    return;
  for (int i = 0; i < 64 && !pmcp__pg_lost(g); i++) {
    PGresult *r = PQgetResult(g->conn);
    if (!r)
      continue;
    ExecStatusType es = PQresultStatus(r);
    PQclear(r);
    if (es == PGRES_PIPELINE_SYNC)
      return;
  }
}
#endif

/* Reads every result due (the server is asked to flush them). */
static int pipe_wait(pmcp__pg *g)
{
#ifdef LIBPQ_HAS_PIPELINING
  if (!g->n_sent)
    return 0;
  if (!PQsendFlushRequest(g->conn)) {
    pipe_failed(g, g->sent[0].what);
    return -1;
  }
  int rc = pipe_collect(g);
  if (rc)
    pipe_sync(g);
  return rc;
#else
  (void)g;
  return 0;
#endif
}

void pmcp__pg_pipe_enter(pmcp__pg *g)
{
#ifdef LIBPQ_HAS_PIPELINING
  if (g->pipe || g->nopipe || !pmcp__pq_pipeline() || pmcp__pg_lost(g))
    return;
  if (PQenterPipelineMode(g->conn) == 1)
    g->pipe = 1;
#else
  (void)g;
#endif
}

int pmcp__pg_pipe_end(pmcp__pg *g)
{
#ifdef LIBPQ_HAS_PIPELINING
  if (!g->pipe)
    return 0;
  int rc = 0;
  if (pmcp__pg_lost(g)) {
    rc = -1;
    pipe_failed(g, NULL);
  } else if (!PQpipelineSync(g->conn)) {
    rc = -1;
    pipe_failed(g, g->n_sent ? g->sent[0].what : NULL);
  } else {
    rc = pipe_collect(g);
    for (int i = 0; i < 64 && !pmcp__pg_lost(g); i++) {
      PGresult *r = PQgetResult(g->conn);
      if (!r)
        continue;
      ExecStatusType es = PQresultStatus(r);
      PQclear(r);
      if (es == PGRES_PIPELINE_SYNC)
        break;
    }
  }
  g->n_sent = 0;
  g->pipe = 0;
  /* Refused only while results are due: a lost connection, whose reset
   * leaves pipeline mode anyway. */
  if (!pmcp__pg_lost(g) && PQexitPipelineMode(g->conn) != 1 && !rc) {
    pipe_failed(g, NULL);
    rc = -1;
  }
  return rc;
#else
  (void)g;
  return 0;
#endif
}

int pmcp__pg_defer(pmcp_store *s, pmcp__pg_stmt *st, const char *what)
{
  pmcp__pg *g = st->g;
  if (!g->pipe)
    return pmcp__pg_done(s, st, what);
  pmcp__pg_clear_blobs(st);
  PQclear(st->res);
  st->res = NULL;
  st->ran = 1;
  st->changes = 0;
  if (pipe_send(st, NULL, what))
    return pmcp__pg_err(s, g, what);
  /* Bound what waits: the results are small, but unread ones pile up. */
  if (g->n_sent >= 240 && pipe_wait(g))
    return pmcp__pg_err(s, g, what);
  return 0;
}

int pmcp__pg_defer_exec(pmcp_store *s, pmcp__pg *g, const char *sql, const char *what)
{
  if (!g->pipe)
    return pmcp__pg_exec(s, g, sql);
  if (sent_reserve(g))
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  if (!PQsendQueryParams(g->conn, sql, 0, NULL, NULL, NULL, NULL, 0)) {
    pipe_failed(g, what);
    return pmcp__pg_err(s, g, what);
  }
  sent_push(g, NULL, NULL, what);
  return 0;
}

/* A step in pipeline mode: the statement goes after those sent, and all
 * their results are read. */
PGresult *pmcp__pg_pipe_run(pmcp__pg_stmt *st)
{
  pmcp__pg *g = st->g;
  PQclear(st->res);
  st->res = NULL;
  if (pipe_send(st, st, NULL) || pipe_wait(g)) {
    PQclear(st->res);
    st->res = NULL;
    return NULL;
  }
  PGresult *r = st->res;
  st->res = NULL;
  return r;
}

