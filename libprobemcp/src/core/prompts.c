/* SPDX-License-Identifier: MIT */
/* prompts/list, prompts/get (argument checks before the handler) and
 * completion/complete. */
#include <stdlib.h>
#include <string.h>

#include "core/call_job.h"
#include "util/buf.h"
#include "util/json.h"

void pmcp__method_prompts_list(pmcp__req *req, cJSON *params)
{
  pmcp_server *srv = req->srv;
  size_t n = srv->reg.n_prompts, off;
  if (pmcp__page_start(req, params, 'p', n, &off))
    return;
  size_t end = off + srv->page_size < n ? off + srv->page_size : n;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_puts(&b, "{\"prompts\":[");
  for (size_t i = off; i < end && !rc; i++) {
    if (i > off)
      rc = pmcp__buf_putc(&b, ',');
    if (!rc)
      rc = pmcp__buf_puts(&b, srv->reg.prompts[i]->list_json);
  }
  if (!rc)
    rc = pmcp__buf_putc(&b, ']');
  if (!rc)
    rc = pmcp__page_next(&b, 'p', end, n);
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  pmcp__req_answer(req, rc, &b);
}

/* Checks prompt arguments; answers the request and returns non-zero on a
 * problem. */
static int prompt_args_check(pmcp__req *req, const pmcp__prompt *p, const cJSON *args)
{
  for (const cJSON *a = args ? args->child : NULL; a; a = a->next) {
    size_t i = 0;
    while (i < p->n_args && strcmp(p->args[i].name, a->string) != 0)
      i++;
    if (i == p->n_args) {
      pmcp_buf m = PMCP_BUF_INIT;
      int rc = pmcp__buf_printf(&m, "Invalid params: prompt '%s' has no argument '%s'; "
                                "it takes: ", p->name, a->string);
      for (size_t k = 0; k < p->n_args && !rc; k++)
        rc = pmcp__buf_printf(&m, "%s%s", k ? ", " : "", p->args[k].name);
      if (!rc && !p->n_args)
        rc = pmcp__buf_puts(&m, "none");
      pmcp__req_error(req, -32602, rc ? "Invalid params" : m.ptr, NULL);
      pmcp_buf_dispose(&m);
      return 1;
    }
    if (!cJSON_IsString(a)) {
      pmcp__req_errorf(req, -32602,
                       "Invalid params: argument '%s' of prompt '%s' must be a string",
                       a->string, p->name);
      return 1;
    }
  }
  for (size_t i = 0; i < p->n_args; i++) {
    if (p->args[i].required &&
        !cJSON_GetObjectItemCaseSensitive(args, p->args[i].name)) {
      pmcp__req_errorf(req, -32602,
                       "Invalid params: missing required argument '%s' of prompt '%s'",
                       p->args[i].name, p->name);
      return 1;
    }
  }
  return 0;
}

static int prompt_invoke(pmcp_call *call)
{
  return call->prompt->get(call, call->prompt->ud);
}

static void prompt_answer(pmcp_call *call, int rc)
{
  pmcp__req *req = call->req;
  if (rc < 0) {
    pmcp__req_errorf(req, pmcp_error_rpc_code(rc), "Prompt '%s' failed: %s", call->name,
                     pmcp_strerror(rc));
    return;
  }
  pmcp_buf b = PMCP_BUF_INIT;
  rc = pmcp__buf_putc(&b, '{');
  if (!rc && call->description) {
    rc = pmcp__buf_puts(&b, "\"description\":");
    if (!rc)
      rc = pmcp__buf_json_string(&b, call->description, strlen(call->description));
    if (!rc)
      rc = pmcp__buf_putc(&b, ',');
  }
  if (!rc)
    rc = pmcp__buf_puts(&b, "\"messages\":[");
  pmcp__call_answer_items(call, &b, rc);
}

static const pmcp__call_ops prompt_ops = {prompt_invoke, prompt_answer, "prompt"};

void pmcp__method_prompts_get(pmcp__req *req, cJSON *params)
{
  cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
  cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
  if (!cJSON_IsString(name)) {
    pmcp__req_error(req, -32602, "Invalid params: prompts/get needs a string \"name\"",
                    NULL);
    return;
  }
  const pmcp__prompt *p = pmcp__prompt_find(req->srv, name->valuestring);
  if (!p) {
    pmcp_buf m = PMCP_BUF_INIT;
    int rc = pmcp__buf_puts(&m, "Invalid params: unknown prompt ");
    if (!rc)
      rc = pmcp__buf_json_string(&m, name->valuestring, strlen(name->valuestring));
    pmcp__req_error(req, -32602, rc ? "Invalid params: unknown prompt" : m.ptr, NULL);
    pmcp_buf_dispose(&m);
    return;
  }
  if (cJSON_IsNull(args))
    args = NULL;
  if (args && !cJSON_IsObject(args)) {
    pmcp__req_error(req, -32602, "Invalid params: prompt \"arguments\" must be an object",
                    NULL);
    return;
  }
  if (prompt_args_check(req, p, args))
    return;
  pmcp_call call;
  pmcp__call_init(&call, req, PMCP__CALL_PROMPT);
  call.prompt = p;
  call.name = p->name;
  call.args = args;
  pmcp__call_run(&call, &prompt_ops);
  pmcp__call_dispose(&call);
}

/* ---- completion ---- */

static int ref_known(const pmcp_server *srv, const char *type, const char *name)
{
  if (strcmp(type, "ref/prompt") == 0)
    return pmcp__prompt_find(srv, name) != NULL;
  for (size_t i = 0; i < srv->reg.n_templates; i++)
    if (strcmp(srv->reg.templates[i]->uri_template, name) == 0)
      return 1;
  for (size_t i = 0; i < srv->reg.n_resources; i++)
    if (strcmp(srv->reg.resources[i]->uri, name) == 0)
      return 1;
  return 0;
}

void pmcp__method_complete(pmcp__req *req, cJSON *params)
{
  pmcp_server *srv = req->srv;
  if (!srv->reg.complete) {
    pmcp__req_error(req, -32601,
                    "Method not found: completion/complete (this server offers no "
                    "completions)", NULL);
    return;
  }
  cJSON *ref = cJSON_GetObjectItemCaseSensitive(params, "ref");
  cJSON *type = cJSON_GetObjectItemCaseSensitive(ref, "type");
  cJSON *argument = cJSON_GetObjectItemCaseSensitive(params, "argument");
  cJSON *aname = cJSON_GetObjectItemCaseSensitive(argument, "name");
  cJSON *avalue = cJSON_GetObjectItemCaseSensitive(argument, "value");
  cJSON *context = cJSON_GetObjectItemCaseSensitive(params, "context");
  cJSON *cargs = cJSON_GetObjectItemCaseSensitive(context, "arguments");
  const char *key = NULL;
  if (cJSON_IsString(type)) {
    if (strcmp(type->valuestring, "ref/prompt") == 0)
      key = "name";
    else if (strcmp(type->valuestring, "ref/resource") == 0)
      key = "uri";
  }
  if (!key) {
    pmcp__req_error(req, -32602,
                    "Invalid params: \"ref\" must be {\"type\":\"ref/prompt\",\"name\"} "
                    "or {\"type\":\"ref/resource\",\"uri\"}", NULL);
    return;
  }
  cJSON *rname = cJSON_GetObjectItemCaseSensitive(ref, key);
  if (!cJSON_IsString(rname)) {
    pmcp__req_errorf(req, -32602, "Invalid params: ref needs a string \"%s\"", key);
    return;
  }
  if (!cJSON_IsString(aname) || !cJSON_IsString(avalue)) {
    pmcp__req_error(req, -32602,
                    "Invalid params: \"argument\" needs string \"name\" and \"value\"",
                    NULL);
    return;
  }
  if (cargs && !cJSON_IsObject(cargs)) {
    pmcp__req_error(req, -32602,
                    "Invalid params: \"context.arguments\" must be an object", NULL);
    return;
  }
  if (!ref_known(srv, type->valuestring, rname->valuestring)) {
    pmcp_buf m = PMCP_BUF_INIT;
    int rc = pmcp__buf_printf(&m, "Invalid params: no %s ",
                              key[0] == 'n' ? "prompt named" : "resource or template");
    if (!rc)
      rc = pmcp__buf_json_string(&m, rname->valuestring, strlen(rname->valuestring));
    pmcp__req_error(req, -32602, rc ? "Invalid params: unknown ref" : m.ptr, NULL);
    pmcp_buf_dispose(&m);
    return;
  }
  pmcp_call call;
  pmcp__call_init(&call, req, PMCP__CALL_COMPLETE);
  call.name = rname->valuestring;
  call.args = cargs;
  int rc = srv->reg.complete(&call, type->valuestring, rname->valuestring,
                             aname->valuestring, avalue->valuestring,
                             srv->reg.complete_ud.ud);
  if (rc == PMCP_ECANCELLED || atomic_load(&req->cancelled)) {
    pmcp__req_drop(req);
  } else if (rc < 0) {
    pmcp__req_errorf(req, pmcp_error_rpc_code(rc), "Completion failed: %s",
                     pmcp_strerror(rc));
  } else {
    pmcp_buf b = PMCP_BUF_INIT;
    rc = pmcp__buf_puts(&b, "{\"completion\":{\"values\":[");
    if (!rc && call.values.len)
      rc = pmcp__buf_append(&b, call.values.ptr, call.values.len);
    if (!rc)
      rc = pmcp__buf_putc(&b, ']');
    if (!rc && (call.has_total || call.n_values > 100))
      rc = pmcp__buf_printf(&b, ",\"total\":%lld",
                            (long long)(call.has_total ? call.total
                                                       : (int64_t)call.n_values));
    if (!rc)
      rc = pmcp__buf_printf(&b, ",\"hasMore\":%s}}", call.has_more ? "true" : "false");
    if (rc)
      pmcp__req_error(req, -32603, "Internal error: out of memory", NULL);
    else
      pmcp__req_result(req, b.ptr, b.len);
    pmcp_buf_dispose(&b);
  }
  pmcp__call_dispose(&call);
}
