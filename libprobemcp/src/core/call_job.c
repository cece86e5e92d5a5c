/* SPDX-License-Identifier: MIT */
/* The one runner of handler calls: tools, resource reads and prompts share
 * cancellation, input_required and worker submission here. */
#include <stdio.h>
#include <stdlib.h>

#include "core/call_job.h"
#include "util/buf.h"

void pmcp__call_answer_items(pmcp_call *call, pmcp_buf *b, int rc)
{
  for (size_t i = 0; i < call->n_items && !rc; i++) {
    if (i)
      rc = pmcp__buf_putc(b, ',');
    if (!rc)
      rc = pmcp__buf_append(b, call->items[i].json, call->items[i].json_len);
  }
  if (!rc)
    rc = pmcp__buf_puts(b, "]}");
  if (rc)
    pmcp__req_error(call->req, -32603, "Internal error: out of memory", NULL);
  else
    pmcp__req_result(call->req, b->ptr, b->len);
  pmcp_buf_dispose(b);
}

void pmcp__call_run(pmcp_call *call, const pmcp__call_ops *ops)
{
  pmcp__req *req = call->req;
  int rc = PMCP_ECANCELLED;
  if (!atomic_load(&req->cancelled))
    rc = ops->invoke(call);
  if (rc == PMCP_ECANCELLED || atomic_load(&req->cancelled))
    pmcp__req_drop(req);
  else if (!pmcp__mrtr_finish(call)) /* else answered: input_required, or
                                      * the input could not be asked for */
    ops->answer(call, rc);
}

pmcp__call_job *pmcp__call_job_new(pmcp__req *req, pmcp__call_kind kind,
                                   const pmcp__call_ops *ops)
{
  pmcp__call_job *j = calloc(1, sizeof *j);
  if (!j) {
    pmcp__req_error(req, -32603, "Internal error: out of memory", NULL);
    return NULL;
  }
  pmcp__call_init(&j->call, req, kind);
  j->ops = ops;
  return j;
}

void pmcp__call_job_free(pmcp__call_job *j)
{
  pmcp__call_dispose(&j->call);
  free(j);
}

static void job_run(pmcp__job *job)
{
  pmcp__call_job *j = (pmcp__call_job *)job;
  pmcp__call_run(&j->call, j->ops);
  pmcp__call_job_free(j);
}

void pmcp__call_job_start(pmcp__call_job *j, int blocking, int web)
{
  j->job.run = job_run;
  if (!blocking) {
    job_run(&j->job);
    return;
  }
  pmcp__req *req = j->call.req;
  pmcp_server *srv = req->srv;
  req->on_worker = 1;
  j->job.web = web;
  /* the session's identity (one object per HTTP principal) keeps one
   * caller from taking every worker */
  j->job.key = req->sess->ud;
  int src = pmcp__workers_submit(srv, &j->job);
  if (src == 0)
    return;
  req->on_worker = 0;
  char msg[160];
  if (src == PMCP_ETIMEOUT) {
    /* Full: refused at once (never an unbounded queue), and said to be
     * worth retrying. */
    snprintf(msg, sizeof msg, "Server busy: every worker is taken and %zu %ss are "
             "waiting; retry in a moment", srv->workers.queue_max, j->ops->noun);
    pmcp__req_error(req, -32000, msg, "{\"retryable\":true,\"retry_after_ms\":1000}");
  } else {
    snprintf(msg, sizeof msg, "Internal error: no worker could take the %s",
             j->ops->noun);
    pmcp__req_error(req, -32603, msg, NULL);
  }
  pmcp__call_job_free(j);
}
