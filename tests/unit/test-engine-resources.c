/* SPDX-License-Identifier: MIT */
/* Resources (list, read, templates, subscriptions), prompts and
 * completion. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine-harness.h"

static int read_fixed(pmcp_call *call, void *ud)
{
  (void)ud;
  if (strcmp(pmcp_call_uri(call), "test://blob") == 0)
    return pmcp_result_resource_blob(call, pmcp_call_uri(call), "image/png", "aGk=");
  return pmcp_result_text(call, "hello", 5);
}

static int read_template(pmcp_call *call, void *ud)
{
  (void)ud;
  const char *id = pmcp_call_uri_var(call, "id");
  ck_assert_ptr_nonnull(id);
  ck_assert_ptr_null(pmcp_call_uri_var(call, "nope"));
  if (strcmp(id, "missing") == 0)
    return PMCP_ENOTFOUND;
  char t[128];
  snprintf(t, sizeof t, "item %s of %s", id, pmcp_call_uri_var(call, "kind"));
  return pmcp_result_resource_text(call, pmcp_call_uri(call), "text/plain", t);
}

static int prompt_simple(pmcp_call *call, void *ud)
{
  (void)ud;
  return pmcp_prompt_text(call, "user", "hi there");
}

static int prompt_args(pmcp_call *call, void *ud)
{
  (void)ud;
  const char *a = NULL, *b = "(none)";
  ck_assert_int_eq(pmcp_arg_string(call, "arg1", &a, NULL), 0);
  pmcp_arg_string(call, "arg2", &b, NULL);
  char t[128];
  snprintf(t, sizeof t, "a=%s b=%s", a, b);
  ck_assert_int_eq(pmcp_prompt_description(call, "with args"), 0);
  ck_assert_int_eq(pmcp_prompt_text(call, "robot", "x"), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_result_text(call, "x", 1), PMCP_EMISUSE);
  ck_assert_int_eq(pmcp_prompt_text(call, "user", t), 0);
  ck_assert_int_eq(pmcp_prompt_image(call, "assistant", "aGk=", "image/png"), 0);
  return pmcp_prompt_resource(call, "user", "test://x", "text/plain", "embedded");
}

static int complete(pmcp_call *call, const char *ref_type, const char *ref_name,
                    const char *arg, const char *value, void *ud)
{
  (void)ud;
  const char *ctx = "-";
  pmcp_arg_string(call, "arg1", &ctx, NULL);
  char t[256];
  snprintf(t, sizeof t, "%s|%s|%s|%s|%s", ref_type, ref_name, arg, value, ctx);
  ck_assert_int_eq(pmcp_complete_value(call, t), 0);
  if (strcmp(value, "many") == 0) {
    for (int i = 0; i < 150; i++)
      ck_assert_int_eq(pmcp_complete_value(call, "v"), 0);
  }
  return 0;
}

static void setup_all(pmcp_server *srv)
{
  pmcp_resource_def r = PMCP_RESOURCE_DEF_INIT;
  r.uri = "test://static";
  r.name = "static";
  r.mime_type = "text/plain";
  r.read = read_fixed;
  ck_assert_int_eq(pmcp_server_add_resource(srv, &r), 0);
  ck_assert_int_eq(pmcp_server_add_resource(srv, &r), PMCP_EEXIST);
  r.uri = "test://blob";
  r.name = "blob";
  r.flags = PMCP_TOOL_BLOCKING;
  ck_assert_int_eq(pmcp_server_add_resource(srv, &r), 0);
  pmcp_resource_def t = PMCP_RESOURCE_DEF_INIT;
  t.uri_template = "test://{kind}/item/{id}";
  t.name = "items";
  t.description = "Items by id";
  t.read = read_template;
  ck_assert_int_eq(pmcp_server_add_resource(srv, &t), 0);
  t.uri_template = "test://{a}{b}";
  ck_assert_int_eq(pmcp_server_add_resource(srv, &t), PMCP_EINVAL);
  t.uri_template = "test://{a";
  ck_assert_int_eq(pmcp_server_add_resource(srv, &t), PMCP_EINVAL);

  pmcp_prompt_def p = PMCP_PROMPT_DEF_INIT;
  p.name = "simple";
  p.get = prompt_simple;
  ck_assert_int_eq(pmcp_server_add_prompt(srv, &p), 0);
  static const pmcp_prompt_arg args[] = {
    {"arg1", "First", 1},
    {"arg2", "Second", 0},
  };
  p.name = "with_args";
  p.description = "Takes arguments";
  p.args = args;
  p.n_args = 2;
  p.get = prompt_args;
  ck_assert_int_eq(pmcp_server_add_prompt(srv, &p), 0);
  ck_assert_int_eq(pmcp_server_set_completion(srv, complete, NULL, NULL), 0);
}

static harness *setup(void)
{
  harness *h = h_new(NULL);
  setup_all(h->srv);
  h_init(h, NULL, "2025-11-25");
  return h;
}

static cJSON *rpc(harness *h, const char *method, const char *params)
{
  char *buf = malloc(strlen(params) + 256);
  sprintf(buf, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":%s}", method,
          params);
  cJSON *r = h_call(h, NULL, buf);
  free(buf);
  return r;
}

START_TEST(capabilities)
{
  harness *h = h_new(NULL);
  setup_all(h->srv);
  cJSON *r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
                             "\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}}}");
  cJSON *caps = cJSON_GetObjectItem(h_result(r), "capabilities");
  cJSON *res = cJSON_GetObjectItem(caps, "resources");
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(res, "subscribe")));
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(res, "listChanged")));
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(caps, "prompts"));
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(caps, "completions"));
  ck_assert_ptr_null(cJSON_GetObjectItem(caps, "tools"));
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

START_TEST(resources)
{
  harness *h = setup();
  cJSON *r = rpc(h, "resources/list", "{}");
  cJSON *list = cJSON_GetObjectItem(h_result(r), "resources");
  ck_assert_int_eq(cJSON_GetArraySize(list), 2);
  ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "uri")->valuestring,
                   "test://static");
  ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "mimeType")->valuestring,
                   "text/plain");
  cJSON_Delete(r);
  r = rpc(h, "resources/templates/list", "{}");
  list = cJSON_GetObjectItem(h_result(r), "resourceTemplates");
  ck_assert_int_eq(cJSON_GetArraySize(list), 1);
  ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "uriTemplate")->valuestring,
                   "test://{kind}/item/{id}");
  cJSON_Delete(r);

  r = rpc(h, "resources/read", "{\"uri\":\"test://static\"}");
  cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(h_result(r), "contents"), 0);
  ck_assert_str_eq(cJSON_GetObjectItem(c0, "uri")->valuestring, "test://static");
  ck_assert_str_eq(cJSON_GetObjectItem(c0, "text")->valuestring, "hello");
  ck_assert_str_eq(cJSON_GetObjectItem(c0, "mimeType")->valuestring, "text/plain");
  cJSON_Delete(r);
  r = rpc(h, "resources/read", "{\"uri\":\"test://blob\"}"); /* runs on a worker */
  c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(h_result(r), "contents"), 0);
  ck_assert_str_eq(cJSON_GetObjectItem(c0, "blob")->valuestring, "aGk=");
  cJSON_Delete(r);
  r = rpc(h, "resources/read", "{\"uri\":\"test://widget/item/a%20b\"}");
  c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(h_result(r), "contents"), 0);
  ck_assert_str_eq(cJSON_GetObjectItem(c0, "text")->valuestring, "item a b of widget");
  cJSON_Delete(r);

  const char *missing[] = {"test://nope", "test://widget/item/missing",
                           "test://widget/item/", "test://a/b/item/x",
                           "test://widget/item/x/y", "test://widget/item/%zz"};
  for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
    char p[128];
    snprintf(p, sizeof p, "{\"uri\":\"%s\"}", missing[i]);
    r = rpc(h, "resources/read", p);
    ck_assert_msg(h_error_code(r) == -32002, "%s: %d", missing[i], h_error_code(r));
    ck_assert_str_eq(h_error_message(r), "Resource not found");
    cJSON *data = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "data");
    ck_assert_str_eq(cJSON_GetObjectItem(data, "uri")->valuestring, missing[i]);
    cJSON_Delete(r);
  }
  r = rpc(h, "resources/read", "{}");
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

START_TEST(subscriptions)
{
  harness *h = h_new(NULL);
  setup_all(h->srv);
  h_init(h, "a", "2025-11-25");
  h_init(h, "b", "2025-11-25");
  cJSON *r = h_call(h, "a", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/subscribe\","
                            "\"params\":{\"uri\":\"test://static\"}}");
  ck_assert_ptr_nonnull(h_result(r));
  cJSON_Delete(r);
  r = h_call(h, "a", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/subscribe\","
                     "\"params\":{\"uri\":\"test://unknown\"}}");
  ck_assert_int_eq(h_error_code(r), -32002);
  cJSON_Delete(r);
  ck_assert_int_eq(pmcp_server_notify_resource_updated(h->srv, "test://static"), 0);
  h_msg *m = h_next(h);
  ck_assert_str_eq(m->session, "a");
  ck_assert_ptr_null(m->related);
  ck_assert_int_eq(m->kind, PMCP_OUT_NOTIFICATION);
  ck_assert_str_eq(m->data, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\","
                            "\"params\":{\"uri\":\"test://static\"}}");
  h_msg_free(m);
  ck_assert_uint_eq(h_pending(h), 0);
  r = h_call(h, "a", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/unsubscribe\","
                     "\"params\":{\"uri\":\"test://static\"}}");
  cJSON_Delete(r);
  ck_assert_int_eq(pmcp_server_notify_resource_updated(h->srv, "test://static"), 0);
  ck_assert_uint_eq(h_pending(h), 0);
  /* list_changed goes to every initialized session */
  ck_assert_int_eq(pmcp_server_notify_list_changed(h->srv, PMCP_LIST_PROMPTS), 0);
  for (int i = 0; i < 2; i++) {
    m = h_next(h);
    ck_assert_ptr_nonnull(strstr(m->data, "notifications/prompts/list_changed"));
    h_msg_free(m);
  }
  ck_assert_int_eq(pmcp_server_notify_list_changed(h->srv, (pmcp_list_kind)9), PMCP_EINVAL);
  h_free(h);
}
END_TEST

START_TEST(prompts)
{
  harness *h = setup();
  cJSON *r = rpc(h, "prompts/list", "{}");
  cJSON *list = cJSON_GetObjectItem(h_result(r), "prompts");
  ck_assert_int_eq(cJSON_GetArraySize(list), 2);
  cJSON *args = cJSON_GetObjectItem(cJSON_GetArrayItem(list, 1), "arguments");
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(args, 0), "required")));
  cJSON_Delete(r);

  r = rpc(h, "prompts/get", "{\"name\":\"simple\"}");
  cJSON *msgs = cJSON_GetObjectItem(h_result(r), "messages");
  cJSON *c = cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "content");
  ck_assert_str_eq(cJSON_GetObjectItem(c, "text")->valuestring, "hi there");
  cJSON_Delete(r);

  r = rpc(h, "prompts/get", "{\"name\":\"with_args\",\"arguments\":{\"arg1\":\"x\"}}");
  ck_assert_str_eq(cJSON_GetObjectItem(h_result(r), "description")->valuestring, "with args");
  msgs = cJSON_GetObjectItem(h_result(r), "messages");
  ck_assert_int_eq(cJSON_GetArraySize(msgs), 3);
  c = cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "content");
  ck_assert_str_eq(cJSON_GetObjectItem(c, "text")->valuestring, "a=x b=(none)");
  c = cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 1), "content");
  ck_assert_str_eq(cJSON_GetObjectItem(c, "type")->valuestring, "image");
  c = cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 2), "content");
  ck_assert_str_eq(cJSON_GetObjectItem(c, "type")->valuestring, "resource");
  ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "resource"), "text")->valuestring,
                   "embedded");
  cJSON_Delete(r);

  r = rpc(h, "prompts/get", "{\"name\":\"with_args\"}");
  ck_assert_int_eq(h_error_code(r), -32602);
  ck_assert_ptr_nonnull(strstr(h_error_message(r), "'arg1'"));
  cJSON_Delete(r);
  r = rpc(h, "prompts/get", "{\"name\":\"with_args\",\"arguments\":{\"arg1\":\"x\",\"z\":\"y\"}}");
  ck_assert_int_eq(h_error_code(r), -32602);
  ck_assert_ptr_nonnull(strstr(h_error_message(r), "'z'"));
  cJSON_Delete(r);
  r = rpc(h, "prompts/get", "{\"name\":\"with_args\",\"arguments\":{\"arg1\":1}}");
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);
  r = rpc(h, "prompts/get", "{\"name\":\"nope\"}");
  ck_assert_int_eq(h_error_code(r), -32602);
  ck_assert_ptr_nonnull(strstr(h_error_message(r), "nope"));
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

START_TEST(completion)
{
  harness *h = setup();
  cJSON *r = rpc(h, "completion/complete",
                 "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"with_args\"},"
                 "\"argument\":{\"name\":\"arg2\",\"value\":\"ab\"},"
                 "\"context\":{\"arguments\":{\"arg1\":\"ctx\"}}}");
  cJSON *comp = cJSON_GetObjectItem(h_result(r), "completion");
  ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(comp, "values"), 0)->valuestring,
                   "ref/prompt|with_args|arg2|ab|ctx");
  ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(comp, "hasMore")));
  cJSON_Delete(r);
  r = rpc(h, "completion/complete",
          "{\"ref\":{\"type\":\"ref/resource\",\"uri\":\"test://{kind}/item/{id}\"},"
          "\"argument\":{\"name\":\"id\",\"value\":\"many\"}}");
  comp = cJSON_GetObjectItem(h_result(r), "completion");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(comp, "values")), 100);
  ck_assert_int_eq(cJSON_GetObjectItem(comp, "total")->valueint, 151);
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(comp, "hasMore")));
  cJSON_Delete(r);
  const char *bad[] = {
    "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"nope\"},\"argument\":{\"name\":\"a\",\"value\":\"\"}}",
    "{\"ref\":{\"type\":\"ref/x\",\"name\":\"simple\"},\"argument\":{\"name\":\"a\",\"value\":\"\"}}",
    "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"simple\"}}",
    "{\"ref\":{\"type\":\"ref/resource\",\"uri\":\"test://zz\"},\"argument\":{\"name\":\"a\",\"value\":\"\"}}",
  };
  for (size_t i = 0; i < 4; i++) {
    r = rpc(h, "completion/complete", bad[i]);
    ck_assert_int_eq(h_error_code(r), -32602);
    cJSON_Delete(r);
  }
  h_free(h);

  /* no handler: method not found */
  h = h_new(NULL);
  h_init(h, NULL, "2025-11-25");
  r = rpc(h, "completion/complete",
          "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"x\"},\"argument\":{\"name\":\"a\",\"value\":\"\"}}");
  ck_assert_int_eq(h_error_code(r), -32601);
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

/* The server owns the completion handler's user data: a replaced one is
 * freed at once, a refused one (no handler, server already running) is
 * freed before the call returns, the last one by pmcp_server_free(). */
static int ud_freed[4];
static void ud_free(void *ud)
{
  ud_freed[(int *)ud - ud_freed]++;
}

START_TEST(completion_ownership)
{
  memset(ud_freed, 0, sizeof ud_freed);
  harness *h = h_new(NULL);
  ck_assert_int_eq(pmcp_server_set_completion(h->srv, complete, &ud_freed[0], ud_free), 0);
  ck_assert_int_eq(pmcp_server_set_completion(h->srv, complete, &ud_freed[1], ud_free), 0);
  ck_assert_int_eq(ud_freed[0], 1);
  ck_assert_int_eq(pmcp_server_set_completion(h->srv, NULL, &ud_freed[2], ud_free), PMCP_EINVAL);
  ck_assert_int_eq(ud_freed[2], 1);
  ck_assert_ptr_nonnull(strstr(pmcp_server_errmsg(h->srv), "no completion handler"));
  ck_assert_int_eq(ud_freed[1], 0); /* the handler in place stays */
  h_init(h, NULL, "2025-11-25");
  ck_assert_int_eq(pmcp_server_set_completion(h->srv, complete, &ud_freed[3], ud_free),
                   PMCP_EMISUSE);
  ck_assert_int_eq(ud_freed[3], 1);
  ck_assert_int_eq(ud_freed[1], 0);
  ck_assert_int_eq(pmcp_server_set_completion(NULL, complete, &ud_freed[3], ud_free),
                   PMCP_EMISUSE);
  ck_assert_int_eq(ud_freed[3], 2);
  h_free(h);
  ck_assert_int_eq(ud_freed[1], 1);
  ck_assert_int_eq(ud_freed[0] + ud_freed[2], 2);
}
END_TEST


/* ---- _meta of tools and resources; the MCP Apps extension ---- */

static int read_app(pmcp_call *call, void *ud)
{
  (void)ud;
  ck_assert_int_eq(pmcp_result_resource_text(call, pmcp_call_uri(call), "text/plain",
                                             "other"), 0);
  return pmcp_result_resource_text(call, "ui://test/app", PMCP_MIME_MCP_APP,
                                   "<!DOCTYPE html><p>app</p>");
}

static int tool_plain(pmcp_call *call, void *ud)
{
  (void)ud;
  return pmcp_result_text(call, "done", 4);
}

static cJSON *find_by(cJSON *list, const char *key, const char *val)
{
  cJSON *e;
  cJSON_ArrayForEach(e, list)
  {
    cJSON *k = cJSON_GetObjectItem(e, key);
    if (cJSON_IsString(k) && !strcmp(k->valuestring, val))
      return e;
  }
  return NULL;
}

static void setup_app(pmcp_server *srv)
{
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = "curves";
  d.handler = tool_plain;
  ck_assert_int_eq(pmcp_server_add_tool(srv, &d), 0);
  d.name = "plain";
  ck_assert_int_eq(pmcp_server_add_tool(srv, &d), 0);
  pmcp_resource_def r = PMCP_RESOURCE_DEF_INIT;
  r.uri = "ui://test/app";
  r.name = "app";
  r.mime_type = PMCP_MIME_MCP_APP;
  r.read = read_app;
  ck_assert_int_eq(pmcp_server_add_resource(srv, &r), 0);

  ck_assert_int_eq(pmcp_server_set_tool_meta(srv, "nope", "{}"), PMCP_ENOTFOUND);
  ck_assert_int_eq(pmcp_server_set_tool_meta(srv, "curves", "[1]"), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_server_set_tool_meta(srv, "curves", "{\"ui\":"), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_server_set_tool_meta(NULL, "curves", "{}"), PMCP_EMISUSE);
  ck_assert_int_eq(pmcp_server_set_tool_meta(srv, "plain", "{\"x\":1}"), 0);
  ck_assert_int_eq(pmcp_server_set_tool_meta(srv, "plain", NULL), 0); /* removed */
  ck_assert_int_eq(pmcp_server_set_tool_meta(srv, "curves", "{\"old\":true}"), 0);
  ck_assert_int_eq(pmcp_server_set_tool_meta(srv, "curves",
                   " { \"ui\" : { \"resourceUri\" : \"ui://test/app\" } } "), 0);
  ck_assert_int_eq(pmcp_server_set_resource_meta(srv, "ui://nope", "{}"), PMCP_ENOTFOUND);
  ck_assert_int_eq(pmcp_server_set_resource_meta(srv, "ui://test/app", "\"csp\""), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_server_set_resource_meta(srv, "ui://test/app",
                   "{\"ui\":{\"csp\":{\"connectDomains\":[]},\"prefersBorder\":true}}"), 0);
  ck_assert_int_eq(pmcp_server_set_resource_meta(srv, "test://{kind}/item/{id}",
                   "{\"t\":1}"), 0);
}

START_TEST(app_meta)
{
  harness *h = h_new(NULL);
  setup_all(h->srv);
  setup_app(h->srv);
  cJSON *r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
                             "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}}");
  cJSON *ext = cJSON_GetObjectItem(cJSON_GetObjectItem(h_result(r), "capabilities"),
                                   "extensions");
  cJSON *ui = cJSON_GetObjectItem(ext, "io.modelcontextprotocol/ui");
  ck_assert_int_eq(cJSON_GetArraySize(ext), 1);
  ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(ui, "mimeTypes"), 0)->valuestring,
                   PMCP_MIME_MCP_APP);
  cJSON_Delete(r);
  /* registration is over once a message was handled */
  ck_assert_int_eq(pmcp_server_set_tool_meta(h->srv, "curves", "{}"), PMCP_EMISUSE);
  ck_assert_int_eq(pmcp_server_set_resource_meta(h->srv, "ui://test/app", "{}"), PMCP_EMISUSE);

  r = rpc(h, "tools/list", "{}");
  cJSON *tools = cJSON_GetObjectItem(h_result(r), "tools");
  char *m = cJSON_PrintUnformatted(cJSON_GetObjectItem(find_by(tools, "name", "curves"), "_meta"));
  ck_assert_str_eq(m, "{\"ui\":{\"resourceUri\":\"ui://test/app\"}}");
  cJSON_free(m);
  ck_assert_ptr_null(cJSON_GetObjectItem(find_by(tools, "name", "plain"), "_meta"));
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(find_by(tools, "name", "curves"), "inputSchema"));
  cJSON_Delete(r);

  r = rpc(h, "resources/list", "{}");
  cJSON *res = cJSON_GetObjectItem(h_result(r), "resources");
  cJSON *app = find_by(res, "uri", "ui://test/app");
  ck_assert_str_eq(cJSON_GetObjectItem(app, "mimeType")->valuestring, PMCP_MIME_MCP_APP);
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(app,
            "_meta"), "ui"), "prefersBorder")));
  ck_assert_ptr_null(cJSON_GetObjectItem(find_by(res, "uri", "test://static"), "_meta"));
  cJSON_Delete(r);
  r = rpc(h, "resources/templates/list", "{}");
  cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItem(h_result(r), "resourceTemplates"), 0);
  ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(t0, "_meta"), "t")->valueint, 1);
  cJSON_Delete(r);

  /* a read: the _meta goes on the contents of the URI read, not on others */
  r = rpc(h, "resources/read", "{\"uri\":\"ui://test/app\"}");
  cJSON *contents = cJSON_GetObjectItem(h_result(r), "contents");
  ck_assert_int_eq(cJSON_GetArraySize(contents), 2);
  cJSON *other = cJSON_GetArrayItem(contents, 0), *page = cJSON_GetArrayItem(contents, 1);
  ck_assert_str_eq(cJSON_GetObjectItem(other, "uri")->valuestring, "ui://test/app");
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(other, "_meta"));
  ck_assert_str_eq(cJSON_GetObjectItem(page, "mimeType")->valuestring, PMCP_MIME_MCP_APP);
  cJSON *csp = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(page, "_meta"),
                                                       "ui"), "csp");
  ck_assert(cJSON_IsArray(cJSON_GetObjectItem(csp, "connectDomains")));
  cJSON_Delete(r);
  r = rpc(h, "resources/read", "{\"uri\":\"test://static\"}");
  ck_assert_ptr_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(h_result(r),
                     "contents"), 0), "_meta"));
  cJSON_Delete(r);
  r = rpc(h, "resources/read", "{\"uri\":\"test://w/item/7\"}");
  ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(
                   cJSON_GetObjectItem(h_result(r), "contents"), 0), "_meta"), "t")->valueint, 1);
  cJSON_Delete(r);
  /* the tool's result is what it always was */
  r = rpc(h, "tools/call", "{\"name\":\"curves\",\"arguments\":{}}");
  ck_assert_str_eq(h_text0(r), "done");
  ck_assert_ptr_null(cJSON_GetObjectItem(h_result(r), "_meta"));
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

START_TEST(app_discover)
{
  /* 2026-07-28: server/discover offers the extension too; a server with
   * no App resource offers none */
  for (int with_app = 0; with_app < 2; with_app++) {
    harness *h = h_new(NULL);
    setup_all(h->srv);
    if (with_app)
      setup_app(h->srv);
    cJSON *r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\","
                      "\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
                      "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
    cJSON *caps = cJSON_GetObjectItem(h_result(r), "capabilities");
    ck_assert_ptr_nonnull(caps);
    cJSON *ui = cJSON_GetObjectItem(cJSON_GetObjectItem(caps, "extensions"),
                                    "io.modelcontextprotocol/ui");
    if (with_app)
      ck_assert_ptr_nonnull(ui);
    else
      ck_assert_ptr_null(cJSON_GetObjectItem(caps, "extensions"));
    cJSON_Delete(r);
    h_free(h);
  }
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("engine-resources");
  TCase *tc = tcase_create("resources");
  tcase_add_test(tc, capabilities);
  tcase_add_test(tc, resources);
  tcase_add_test(tc, subscriptions);
  tcase_add_test(tc, prompts);
  tcase_add_test(tc, completion);
  tcase_add_test(tc, completion_ownership);
  tcase_add_test(tc, app_meta);
  tcase_add_test(tc, app_discover);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
