/* SPDX-License-Identifier: MIT */
/* Fuzz target: JSON-RPC message handling. The input is split into lines,
 * each handed to pmcp_server_handle(); a line "@name <json>" goes to
 * session "name". Sessions "" (2025-11-25) and "b" (2025-03-26, batches)
 * start initialized. The server has mode tools, a literal-schema tool, a
 * blocking tool, resources, a template, prompts and completion. Oracle:
 * every outgoing message is one line of valid JSON, and nothing leaks or
 * crashes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "probemcp/probemcp.h"

static void sink(const pmcp_out *out, void *ud)
{
  (void)ud;
  if (!out->data)
    return;
  if (memchr(out->data, '\n', out->len))
    abort();
  cJSON *v = cJSON_ParseWithLength(out->data, out->len);
  if (!v)
    abort();
  cJSON_Delete(v);
}

static const char *const colors[] = {"red", "green", NULL};
static const pmcp_arg_spec a_args[] = {
  {"n", PMCP_T_INTEGER, 1, "count", 1, 1, 0, 10, NULL, "3"},
  {"s", PMCP_T_STRING, 0, "text", 1, 1, 1, 8, colors, NULL},
  {"xs", PMCP_T_STRING_OR_STRING_ARRAY, 0, NULL, 0, 1, 0, 3, NULL, NULL},
};
static const pmcp_arg_spec b_args[] = {
  {"v", PMCP_T_NUMBER_ARRAY, 0, NULL, 0, 0, 0, 0, NULL, NULL},
  {"o", PMCP_T_OBJECT, 0, NULL, 0, 0, 0, 0, NULL, NULL},
  {"flag", PMCP_T_BOOLEAN, 0, NULL, 0, 0, 0, 0, NULL, "true"},
};
static const pmcp_mode_spec modes[] = {
  {"a", "mode a", a_args, 3},
  {"b", "mode b", b_args, 3},
};

static int tool(pmcp_call *call, void *ud)
{
  (void)ud;
  const char *s = NULL, *j = NULL;
  int64_t n = 0;
  double d = 0;
  int f = 0;
  pmcp_arg_string(call, "s", &s, NULL);
  pmcp_arg_int(call, "n", &n);
  pmcp_arg_bool(call, "flag", &f);
  for (size_t i = 0; i < pmcp_arg_count(call, "xs"); i++)
    pmcp_arg_string_at(call, "xs", i, &s);
  for (size_t i = 0; i < pmcp_arg_count(call, "v"); i++)
    pmcp_arg_number_at(call, "v", i, &d);
  pmcp_arg_json(call, NULL, &j);
  pmcp_call_progress(call, 1, 2, "half");
  pmcp_call_log(call, PMCP_LOG_INFO, "fuzz", "\"line\"");
  if (j)
    pmcp_result_text(call, j, strlen(j));
  if (n == 7)
    return pmcp_result_errorf(call, "seven: %s", s ? s : "");
  if (n == 8)
    return PMCP_EIO;
  return pmcp_result_structured(call, "{\"ok\":true}", 11);
}

static int blocking(pmcp_call *call, void *ud)
{
  (void)ud;
  pmcp_buf out = PMCP_BUF_INIT;
  int rc = pmcp_call_request(call, "roots/list", "{}", 1, &out);
  pmcp_buf_dispose(&out);
  if (rc == PMCP_ECANCELLED)
    return rc;
  return pmcp_result_text(call, "done", 4);
}

static int reader(pmcp_call *call, void *ud)
{
  (void)ud;
  const char *id = pmcp_call_uri_var(call, "id");
  if (id && strcmp(id, "none") == 0)
    return PMCP_ENOTFOUND;
  return pmcp_result_text(call, pmcp_call_uri(call), strlen(pmcp_call_uri(call)));
}

static int prompt(pmcp_call *call, void *ud)
{
  (void)ud;
  const char *a = "";
  pmcp_arg_string(call, "a", &a, NULL);
  pmcp_prompt_text(call, "user", a);
  return pmcp_prompt_resource(call, "assistant", "test://x", NULL, "r");
}

static int complete(pmcp_call *call, const char *t, const char *r, const char *a,
                    const char *v, void *ud)
{
  (void)t;
  (void)r;
  (void)a;
  (void)ud;
  pmcp_complete_value(call, v);
  return 0;
}

static pmcp_server *make_server(void)
{
  pmcp_server_options o = PMCP_SERVER_OPTIONS_INIT;
  o.name = "fuzz";
  o.sink = sink;
  o.workers = 2;
  o.max_message = 1 << 20;
  pmcp_server *srv = NULL;
  if (pmcp_server_new(&srv, &o))
    abort();
  pmcp_server_set_page_size(srv, 2);
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = "modes";
  d.modes = modes;
  d.n_modes = 2;
  d.handler = tool;
  d.flags = PMCP_TOOL_BUDGETED;
  pmcp_server_add_tool(srv, &d);
  pmcp_tool_def l = PMCP_TOOL_DEF_INIT;
  l.name = "literal";
  l.input_schema_json = "{\"type\":\"object\",\"$defs\":{}}";
  l.handler = tool;
  pmcp_server_add_tool(srv, &l);
  pmcp_tool_def b = PMCP_TOOL_DEF_INIT;
  b.name = "blocking";
  b.handler = blocking;
  b.flags = PMCP_TOOL_BLOCKING;
  b.default_mode = NULL;
  pmcp_server_add_tool(srv, &b);
  pmcp_resource_def r = PMCP_RESOURCE_DEF_INIT;
  r.uri = "test://fixed";
  r.name = "fixed";
  r.read = reader;
  pmcp_server_add_resource(srv, &r);
  r.uri = NULL;
  r.uri_template = "test://t/{id}/x/{part}";
  r.name = "tpl";
  pmcp_server_add_resource(srv, &r);
  static const pmcp_prompt_arg pa[] = {{"a", NULL, 1}, {"b", NULL, 0}};
  pmcp_prompt_def p = PMCP_PROMPT_DEF_INIT;
  p.name = "p";
  p.args = pa;
  p.n_args = 2;
  p.get = prompt;
  pmcp_server_add_prompt(srv, &p);
  pmcp_server_set_completion(srv, complete, NULL, NULL);
  return srv;
}

static void init(pmcp_server *srv, const char *session, const char *version)
{
  char buf[200];
  int n = snprintf(buf, sizeof buf,
                   "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                   "{\"protocolVersion\":\"%s\",\"capabilities\":{\"roots\":{}}}}",
                   version);
  pmcp_server_handle(srv, session, buf, (size_t)n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  pmcp_server *srv = make_server();
  init(srv, NULL, "2025-11-25");
  init(srv, "b", "2025-03-26");
  const char *p = (const char *)data, *end = p + size;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *e = nl ? nl : end;
    char session[16] = "";
    const char *msg = p;
    if (e - p > 1 && p[0] == '@') {
      const char *sp = memchr(p, ' ', (size_t)(e - p));
      if (sp && sp - p - 1 < (long)sizeof session) {
        memcpy(session, p + 1, (size_t)(sp - p - 1));
        session[sp - p - 1] = '\0';
        msg = sp + 1;
      }
    }
    pmcp_server_handle(srv, session, msg, (size_t)(e - msg));
    p = e + (nl ? 1 : 0);
  }
  pmcp_server_drain(srv);
  pmcp_server_free(srv);
  return 0;
}
