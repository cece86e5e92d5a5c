/* SPDX-License-Identifier: MIT */
/* The one runner of a handler call (tools/call, resources/read,
 * prompts/get): inline or on a worker, dropped when cancelled, answered
 * with input_required when the handler asked for input, otherwise by the
 * method's own answer. */
#ifndef PMCP_CORE_CALL_JOB_H
#define PMCP_CORE_CALL_JOB_H

#include "core/call.h"

typedef struct pmcp__call_ops {
  /* Runs the handler of the call. */
  int (*invoke)(pmcp_call *call);
  /* Answers the request with the handler's @p rc (never a cancellation,
   * never after input_required). */
  void (*answer)(pmcp_call *call, int rc);
  /* What the method runs, for the errors of a refused submission:
   * "call", "read" or "prompt". */
  const char *noun;
} pmcp__call_ops;

typedef struct pmcp__call_job {
  pmcp__job job;
  pmcp_call call;
  const pmcp__call_ops *ops;
} pmcp__call_job;

/* Answers the call's request with @p b (its opening written, @p rc how
 * that went) followed by the call's items, comma-separated, and "]}";
 * disposes @p b. */
void pmcp__call_answer_items(pmcp_call *call, pmcp_buf *b, int rc);
/* Runs @p call's handler and answers @p call's request. */
void pmcp__call_run(pmcp_call *call, const pmcp__call_ops *ops);
/* A job for @p req with its call initialized as @p kind; NULL (the
 * request answered) when out of memory. */
pmcp__call_job *pmcp__call_job_new(pmcp__req *req, pmcp__call_kind kind,
                                   const pmcp__call_ops *ops);
/* Disposes the job's call and frees the job. */
void pmcp__call_job_free(pmcp__call_job *j);
/* Runs the job inline, or on a worker when @p blocking (in the open-web
 * class when @p web); a full queue or a stopping pool is answered at once.
 * Takes the job. */
void pmcp__call_job_start(pmcp__call_job *j, int blocking, int web);

#endif
