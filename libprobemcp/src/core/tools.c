/* SPDX-License-Identifier: MIT */
/* tools/list and tools/call: lookup, validation, running the handler inline
 * or on a worker, and the one place a result is finalized. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/call_job.h"
#include "core/jdoc.h"
#include "core/validate.h"
#include "util/buf.h"
#include "util/json.h"

void pmcp__method_tools_list(pmcp__req *req, cJSON *params)
{
  pmcp_server *srv = req->srv;
  size_t n = srv->reg.n_tools, off;
  if (pmcp__page_start(req, params, 't', n, &off))
    return;
  /* Cursors index the full list; a page holds up to page_size tools the
   * session may see. */
  void *sud = req->sess->ud;
  size_t shown = 0, i = off;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_puts(&b, "{\"tools\":[");
  for (; i < n && shown < srv->page_size && !rc; i++) {
    if (!pmcp__tool_visible(srv, srv->reg.tools[i], sud))
      continue;
    if (shown++)
      rc = pmcp__buf_putc(&b, ',');
    if (!rc)
      rc = pmcp__buf_puts(&b, srv->reg.tools[i]->list_json);
  }
  /* No cursor to a tail with nothing the session can see. */
  while (i < n && !pmcp__tool_visible(srv, srv->reg.tools[i], sud))
    i++;
  if (!rc)
    rc = pmcp__buf_putc(&b, ']');
  if (!rc)
    rc = pmcp__page_next(&b, 't', i, n);
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  pmcp__req_answer(req, rc, &b);
}

/* THE finalization point of every tools/call result: handler results and
 * argument errors alike pass here once, just before serialization. The
 * budget engine hooks in here for PMCP_TOOL_BUDGETED tools (measure the
 * text item against call->token_budget, page it, add next_cursor). */
static int tool_result_finalize(pmcp_call *call)
{
  /* A structured result with no content also gets its JSON as text, as
   * the spec asks for clients that predate structuredContent. */
  if (call->structured && call->n_items == 0) {
    int rc = pmcp__call_push_text(call, call->structured, call->structured_len);
    if (rc)
      return rc;
  }
  /* Budgeted tools: one text item within token_budget and the byte
   * ceiling, or a clear error instead (budget.c). */
  if (call->tool && (call->tool->flags & PMCP_TOOL_BUDGETED))
    return pmcp__budget_finalize(call);
  return 0;
}

static void tool_reply(pmcp_call *call)
{
  pmcp__req *req = call->req;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = tool_result_finalize(call);
  if (!rc)
    rc = pmcp__call_tool_result(call, &b);
  if (rc)
    pmcp__req_errorf(req, pmcp_error_rpc_code(rc), "Internal error: tool '%s': %s",
                     call->name, pmcp_strerror(rc));
  else
    pmcp__req_result_bare(req, b.ptr, b.len);
  pmcp_buf_dispose(&b);
}

static int tool_invoke(pmcp_call *call)
{
  return call->tool->handler(call, call->tool->ud);
}

static void tool_answer(pmcp_call *call, int rc)
{
  pmcp__req *req = call->req;
  if (rc == 0 && call->to_task) {
    if (pmcp__tasks_create(req, (cJSON *)call->params))
      pmcp__req_error(req, -32603, "Internal error: out of memory creating a task", NULL);
  } else if (rc < 0) {
    pmcp__log(call->srv, PMCP_LOG_WARNING, "tool '%s' failed: %s (%s)", call->name,
              pmcp_strerror(rc), pmcp_errname(rc));
    pmcp__req_errorf(req, pmcp_error_rpc_code(rc), "Tool '%s' failed: %s", call->name,
                     pmcp_strerror(rc));
  } else {
    tool_reply(call);
  }
}

static const pmcp__call_ops tool_ops = {tool_invoke, tool_answer, "call"};

/* An argument error is a tool execution error (isError result), so the
 * model sees what to fix; one text item holding a JSON object, like every
 * other error result. */
static int arg_error_result(pmcp_call *call, const pmcp_buf *problems)
{
  pmcp_buf t = PMCP_BUF_INIT;
  int rc = pmcp__buf_printf(&t, "{\"error\":\"%s\",\"message\":",
                            pmcp_tool_error_name(PMCP_TERR_INVALID_ARGUMENT));
  if (!rc)
    rc = pmcp__buf_json_string(&t, problems->ptr, problems->len);
  if (!rc)
    rc = pmcp__buf_putc(&t, '}');
  if (!rc)
    rc = pmcp__call_push_text(call, t.ptr, t.len);
  call->is_error = 1;
  pmcp_buf_dispose(&t);
  return rc;
}

void pmcp__method_tools_call(pmcp__req *req, cJSON *params)
{
  pmcp_server *srv = req->srv;
  cJSON *name = pmcp__jget(params, "name");
  cJSON *args = pmcp__jget(params, "arguments");
  if (!cJSON_IsString(name)) {
    pmcp__req_error(req, -32602,
                    "Invalid params: tools/call needs a string \"name\"", NULL);
    return;
  }
  const pmcp__tool *t = pmcp__tool_find(srv, name->valuestring);
  if (t && !pmcp__tool_visible(srv, t, req->sess->ud))
    t = NULL; /* hidden tools are answered like missing ones */
  if (!t) {
    pmcp_buf d = PMCP_BUF_INIT;
    int rc = pmcp__buf_puts(&d, "{\"tool\":");
    if (!rc)
      rc = pmcp__buf_json_string(&d, name->valuestring, strlen(name->valuestring));
    if (!rc)
      rc = pmcp__buf_putc(&d, '}');
    pmcp_buf m = PMCP_BUF_INIT;
    if (!rc)
      rc = pmcp__buf_puts(&m, "Unknown tool: ");
    if (!rc)
      rc = pmcp__buf_json_string(&m, name->valuestring, strlen(name->valuestring));
    pmcp__req_error(req, -32602, rc ? "Unknown tool" : m.ptr, rc ? NULL : d.ptr);
    pmcp_buf_dispose(&d);
    pmcp_buf_dispose(&m);
    return;
  }
  /* Tasks: a task-only tool needs a client that declared the extension; a
   * task tool from such a client is answered with a task at once (not on
   * the task's own internal session, where the call runs). */
  int in_task = pmcp__tasks_internal(req->sess);
  if ((t->flags & PMCP_TOOL_TASK_REQUIRED) && !in_task && !pmcp__tasks_declared(req)) {
    pmcp__tasks_refuse_undeclared(req, t->name);
    return;
  }
  int as_task = (t->flags & PMCP_TOOL_TASK) && !in_task && pmcp__tasks_declared(req);
  if (cJSON_IsNull(args))
    args = NULL;
  if (args && !cJSON_IsObject(args)) {
    pmcp__req_error(req, -32602,
                    "Invalid params: tools/call \"arguments\" must be an object", NULL);
    return;
  }
  pmcp__call_job *j = pmcp__call_job_new(req, PMCP__CALL_TOOL, &tool_ops);
  if (!j)
    return;
  pmcp_call *call = &j->call;
  call->tool = t;
  call->name = t->name;
  call->args = args;

  pmcp_buf problems = PMCP_BUF_INIT;
  int rc = pmcp__validate(t, args, &call->mode, &problems);
  if (rc == PMCP_EINVAL) {
    rc = arg_error_result(call, &problems);
    pmcp_buf_dispose(&problems);
    if (!rc) {
      tool_reply(call);
      pmcp__call_job_free(j);
      return;
    }
  }
  pmcp_buf_dispose(&problems);
  if (rc) {
    pmcp__req_error(req, -32603, "Internal error: out of memory", NULL);
    pmcp__call_job_free(j);
    return;
  }
  if (as_task) {
    if (pmcp__tasks_create(req, params))
      pmcp__req_error(req, -32603, "Internal error: out of memory creating a task", NULL);
    pmcp__call_job_free(j);
    return;
  }
  if (t->flags & PMCP_TOOL_BUDGETED) {
    int64_t budget = 0;
    if (pmcp_arg_int(call, "token_budget", &budget) == 0)
      call->token_budget = (int)budget;
  }
  pmcp__call_job_start(j, (t->flags & (PMCP_TOOL_BLOCKING | PMCP_TOOL_OPEN_WEB)) != 0,
                       (t->flags & PMCP_TOOL_OPEN_WEB) != 0);
}

int pmcp_call_task(pmcp_call *call)
{
  if (!call || !call->req || call->kind != PMCP__CALL_TOOL || !call->tool ||
      !(call->tool->flags &
        (PMCP_TOOL_TASK | PMCP_TOOL_TASK_REQUIRED | PMCP_TOOL_TASK_ON_DEMAND)))
    return 0;
  if (pmcp__tasks_internal(call->req->sess) || !pmcp__tasks_declared(call->req))
    return 0;
  call->to_task = 1;
  return 1;
}
