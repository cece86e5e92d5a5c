/* SPDX-License-Identifier: MIT */
/* tools/list (pagination, schemas) and tools/call (mode validation, typed
 * arguments, content kinds, errors). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/registry.h" /* pmcp__schema_set_arg */
#include "engine-harness.h"

static const char *const status_enum[] = {"running", "finished", NULL};

static const pmcp_arg_spec tree_args[] = {
  {"depth", PMCP_T_INTEGER, 0, "How deep to go.", 1, 1, 1, 5, NULL, NULL},
  {"project", PMCP_T_STRING, 0, "Project ref.", 0, 0, 0, 0, NULL, NULL},
};
static const pmcp_arg_spec runs_args[] = {
  {"project", PMCP_T_STRING, 1, "Project ref.", 0, 0, 0, 0, NULL, NULL},
  {"limit", PMCP_T_INTEGER, 0, "Most runs.", 1, 1, 1, 100, NULL, "20"},
  {"status", PMCP_T_STRING, 0, NULL, 0, 0, 0, 0, status_enum, NULL},
  {"refs", PMCP_T_STRING_ARRAY, 0, "Run refs.", 0, 1, 0, 3, NULL, NULL},
  {"name", PMCP_T_STRING, 0, "Name filter (a prefix)", 1, 1, 2, 4, NULL, NULL},
};
static const pmcp_mode_spec browse_modes[] = {
  {"tree", "Walk the project tree.", tree_args, 2},
  {"runs", "List runs.", runs_args, 5},
};
static const pmcp_arg_spec common_args[] = {
  {"verbose", PMCP_T_BOOLEAN, 0, "More detail.", 0, 0, 0, 0, NULL, "false"},
};

static int browse(pmcp_call *call, void *ud)
{
  (void)ud;
  char out[256];
  const char *project = "-";
  int64_t limit = -1, depth = -1;
  int verbose = -1;
  pmcp_arg_string(call, "project", &project, NULL);
  pmcp_arg_int(call, "limit", &limit);
  pmcp_arg_int(call, "depth", &depth);
  ck_assert_int_eq(pmcp_arg_bool(call, "verbose", &verbose), 0);
  size_t nrefs = pmcp_arg_count(call, "refs");
  const char *ref0 = "-";
  if (nrefs)
    ck_assert_int_eq(pmcp_arg_string_at(call, "refs", 0, &ref0), 0);
  /* the accessors' answers: absent is ENOTFOUND, another type EINVAL */
  const char *sv;
  double dv;
  int64_t iv;
  int bv;
  ck_assert_int_eq(pmcp_arg_string(call, "nope", &sv, NULL), PMCP_ENOTFOUND);
  ck_assert_int_eq(pmcp_arg_number(call, "nope", &dv), PMCP_ENOTFOUND);
  ck_assert_int_eq(pmcp_arg_bool(call, "nope", &bv), PMCP_ENOTFOUND);
  ck_assert_int_eq(pmcp_arg_string_at(call, "nope", 0, &sv), PMCP_ENOTFOUND);
  ck_assert_int_eq(pmcp_arg_bool(call, "verbose", NULL), 0);
  if (strcmp(pmcp_call_mode(call), "runs") == 0) {
    ck_assert_int_eq(pmcp_arg_int(call, "project", &iv), PMCP_EINVAL);
    ck_assert_int_eq(pmcp_arg_bool(call, "limit", &bv), PMCP_EINVAL);
    ck_assert_int_eq(pmcp_arg_string(call, "limit", &sv, NULL), PMCP_EINVAL);
    ck_assert_int_eq(pmcp_arg_number(call, "limit", &dv), 0);
    ck_assert(dv == (double)limit);
    /* a lone string is a list of one; a number is no list */
    ck_assert_int_eq(pmcp_arg_string_at(call, "project", 0, &sv), 0);
    ck_assert_str_eq(sv, project);
    ck_assert_int_eq(pmcp_arg_string_at(call, "project", 1, &sv), PMCP_ENOTFOUND);
    ck_assert_int_eq(pmcp_arg_number_at(call, "project", 0, &dv), PMCP_EINVAL);
    ck_assert_int_eq(pmcp_arg_string_at(call, "limit", 0, &sv), PMCP_EINVAL);
    ck_assert_int_eq(pmcp_arg_string_at(call, "refs", nrefs, &sv), PMCP_ENOTFOUND);
    if (nrefs)
      ck_assert_int_eq(pmcp_arg_number_at(call, "refs", 0, &dv), PMCP_EINVAL);
  }
  snprintf(out, sizeof out, "%s project=%s limit=%lld depth=%lld verbose=%d refs=%zu:%s",
           pmcp_call_mode(call), project, (long long)limit, (long long)depth, verbose,
           nrefs, ref0);
  return pmcp_result_text(call, out, strlen(out));
}

static const pmcp_arg_spec list_args[] = {
  {"prefix", PMCP_T_STRING, 0, NULL, 0, 0, 0, 0, NULL, NULL},
};
static const pmcp_mode_spec metric_modes[] = {
  {"list", "List keys.", list_args, 1},
  {"points", "Read points.", NULL, 0},
};

static int echo_mode(pmcp_call *call, void *ud)
{
  (void)ud;
  const char *m = pmcp_call_mode(call);
  return pmcp_result_text(call, m, strlen(m));
}

#define LITERAL_SCHEMA                                                         \
  "{\n  \"$schema\": \"https://json-schema.org/draft/2020-12/schema\",\n"     \
  "  \"type\": \"object\", \"$defs\": {\"a\": {\"type\": \"string\"}},\n"     \
  "  \"properties\": {\"x\": {\"$ref\": \"#/$defs/a\", \"description\": "     \
  "\"a b\\u00e9\"}},\n  \"additionalProperties\": false\n}"
#define LITERAL_MIN                                                            \
  "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","            \
  "\"type\":\"object\",\"$defs\":{\"a\":{\"type\":\"string\"}},"               \
  "\"properties\":{\"x\":{\"$ref\":\"#/$defs/a\",\"description\":"             \
  "\"a b\\u00e9\"}},\"additionalProperties\":false}"

static int literal(pmcp_call *call, void *ud)
{
  (void)ud;
  const char *all;
  ck_assert_int_eq(pmcp_arg_json(call, NULL, &all), 0);
  return pmcp_result_text(call, all, strlen(all));
}

static int structured(pmcp_call *call, void *ud)
{
  (void)ud;
  const char *j = "{ \"temperature\": 22.5, \"unit\": \"C\" }";
  return pmcp_result_structured(call, j, strlen(j));
}

static int failing(pmcp_call *call, void *ud)
{
  (void)call;
  (void)ud;
  return PMCP_EIO;
}

static int media(pmcp_call *call, void *ud)
{
  (void)ud;
  ck_assert_int_eq(pmcp_result_text(call, "hi", 2), 0);
  ck_assert_int_eq(pmcp_result_image(call, "aGVsbG8=", "image/png"), 0);
  ck_assert_int_eq(pmcp_result_audio(call, "aGVsbG8=", "audio/wav"), 0);
  ck_assert_int_eq(pmcp_result_resource_text(call, "test://r", "text/plain", "body"), 0);
  ck_assert_int_eq(pmcp_result_resource_link(call, "test://l", "l", "a link", NULL), 0);
  ck_assert_int_eq(pmcp_result_image(call, "not base64!", "image/png"), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_result_text(call, "\xff", 1), PMCP_EUTF8);
  ck_assert_int_eq(pmcp_result_structured(call, "[1]", 3), PMCP_EINVAL);
  return 0;
}

static int tool_error(pmcp_call *call, void *ud)
{
  (void)ud;
  pmcp_result_text(call, "partial", 7);
  return pmcp_result_errorf(call, "it broke: %d", 42);
}

static void add_tools(pmcp_server *srv)
{
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = "browse";
  d.description = "Browse things.";
  d.modes = browse_modes;
  d.n_modes = 2;
  d.args = common_args;
  d.n_args = 1;
  d.read_only = PMCP_HINT_TRUE;
  d.destructive = PMCP_HINT_FALSE;
  d.handler = browse;
  ck_assert_int_eq(pmcp_server_add_tool(srv, &d), 0);

  pmcp_tool_def m = PMCP_TOOL_DEF_INIT;
  m.name = "metrics";
  m.modes = metric_modes;
  m.n_modes = 2;
  m.default_mode = "list";
  m.handler = echo_mode;
  ck_assert_int_eq(pmcp_server_add_tool(srv, &m), 0);

  pmcp_tool_def l = PMCP_TOOL_DEF_INIT;
  l.name = "literal";
  l.input_schema_json = LITERAL_SCHEMA;
  l.handler = literal;
  ck_assert_int_eq(pmcp_server_add_tool(srv, &l), 0);

  pmcp_tool_def s = PMCP_TOOL_DEF_INIT;
  s.name = "structured";
  s.output_schema_json = "{\"type\":\"object\",\"properties\":{\"temperature\":{\"type\":\"number\"}}}";
  s.handler = structured;
  ck_assert_int_eq(pmcp_server_add_tool(srv, &s), 0);

  pmcp_tool_def f = PMCP_TOOL_DEF_INIT;
  f.name = "failing";
  f.handler = failing;
  ck_assert_int_eq(pmcp_server_add_tool(srv, &f), 0);

  pmcp_tool_def me = PMCP_TOOL_DEF_INIT;
  me.name = "media";
  me.handler = media;
  ck_assert_int_eq(pmcp_server_add_tool(srv, &me), 0);

  pmcp_tool_def te = PMCP_TOOL_DEF_INIT;
  te.name = "tool_error";
  te.handler = tool_error;
  ck_assert_int_eq(pmcp_server_add_tool(srv, &te), 0);
}

static harness *setup(void)
{
  harness *h = h_new(NULL);
  add_tools(h->srv);
  h_init(h, NULL, "2025-11-25");
  return h;
}

static cJSON *call_browse(harness *h, const char *args)
{
  char buf[1024];
  snprintf(buf, sizeof buf,
           "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
           "{\"name\":\"browse\",\"arguments\":%s}}", args);
  return h_call(h, NULL, buf);
}

/* The isError text of a browse call must contain every needle. */
static void expect_arg_error(harness *h, const char *args, const char *n1,
                             const char *n2)
{
  cJSON *r = call_browse(h, args);
  ck_assert_int_eq(h_error_code(r), 0);
  ck_assert_msg(h_is_error(r), "expected isError for %s", args);
  const char *t = h_text0(r);
  ck_assert_msg(strstr(t, n1) != NULL, "'%s' lacks '%s'", t, n1);
  if (n2)
    ck_assert_msg(strstr(t, n2) != NULL, "'%s' lacks '%s'", t, n2);
  /* The text is one JSON object with a message and the table's code. */
  cJSON *obj = cJSON_Parse(t);
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(obj, "message"));
  ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(obj, "error")), "invalid_argument");
  cJSON_Delete(obj);
  cJSON_Delete(r);
}

START_TEST(mode_validation)
{
  harness *h = setup();
  expect_arg_error(h, "{}", "/arguments/mode", "tree, runs");
  expect_arg_error(h, "{\"mode\":\"nope\"}", "unknown mode \\\"nope\\\"", "tree, runs");
  expect_arg_error(h, "{\"mode\":3}", "/arguments/mode: expected a string", NULL);
  expect_arg_error(h, "{\"mode\":\"runs\",\"project\":\"p\",\"depth\":2}",
                   "argument 'depth' is not read by mode 'runs'", "mode tree");
  expect_arg_error(h, "{\"mode\":\"runs\",\"project\":\"p\",\"limit\":500}",
                   "/arguments/limit: expected an integer between 1 and 100", "got 500");
  expect_arg_error(h, "{\"mode\":\"runs\",\"project\":\"p\",\"limit\":\"5\"}",
                   "/arguments/limit: expected an integer", "got \\\"5\\\"");
  expect_arg_error(h, "{\"mode\":\"runs\",\"project\":\"p\",\"limit\":2.5}",
                   "/arguments/limit: expected an integer", NULL);
  expect_arg_error(h, "{\"mode\":\"runs\",\"project\":\"p\",\"foo\":1}",
                   "/arguments/foo: unknown argument 'foo'", "mode 'runs' takes");
  expect_arg_error(h, "{\"mode\":\"runs\"}",
                   "/arguments/project: missing required argument 'project'",
                   "(mode 'runs')");
  expect_arg_error(h, "{\"mode\":\"runs\",\"project\":\"p\",\"status\":\"x\"}",
                   "/arguments/status: expected one of: running, finished", NULL);
  expect_arg_error(h, "{\"mode\":\"runs\",\"project\":\"p\",\"refs\":[\"a\",2]}",
                   "/arguments/refs/1: expected a string", NULL);
  expect_arg_error(h, "{\"mode\":\"runs\",\"project\":\"p\",\"refs\":[\"a\",\"b\",\"c\",\"d\"]}",
                   "/arguments/refs: expected", "at most 3 items");
  expect_arg_error(h, "{\"mode\":\"runs\",\"project\":\"p\",\"name\":\"\xc3\xa9\"}",
                   "/arguments/name: expected a string between 2 and 4 characters", NULL);
  expect_arg_error(h, "{\"mode\":\"tree\",\"verbose\":null}",
                   "/arguments/verbose: expected a boolean", "got null");
  expect_arg_error(h, "{\"mode\":\"tree\",\"a/b~c\":1}", "/arguments/a~1b~0c", NULL);
  /* several problems are all reported */
  expect_arg_error(h, "{\"mode\":\"runs\",\"limit\":0,\"depth\":1}",
                   "/arguments/limit", "/arguments/project");
  h_free(h);
}
END_TEST

START_TEST(typed_args)
{
  harness *h = setup();
  cJSON *r = call_browse(h, "{\"mode\":\"runs\",\"project\":\"p1\",\"refs\":[\"run:a\"]}");
  ck_assert(!h_is_error(r));
  ck_assert_str_eq(h_text0(r), "runs project=p1 limit=20 depth=-1 verbose=0 refs=1:run:a");
  cJSON_Delete(r);
  r = call_browse(h, "{\"mode\":\"tree\",\"depth\":3,\"verbose\":true}");
  ck_assert_str_eq(h_text0(r), "tree project=- limit=-1 depth=3 verbose=1 refs=0:-");
  cJSON_Delete(r);
  /* the default mode */
  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"metrics\"}}");
  ck_assert_str_eq(h_text0(r), "list");
  cJSON_Delete(r);
  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"metrics\",\"arguments\":{\"mode\":\"points\","
                      "\"prefix\":\"x\"}}}");
  ck_assert(h_is_error(r));
  ck_assert_ptr_nonnull(strstr(h_text0(r), "not read by mode 'points'"));
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

START_TEST(list_pagination)
{
  harness *h = h_new(NULL);
  add_tools(h->srv);
  ck_assert_int_eq(pmcp_server_set_page_size(h->srv, 3), 0);
  h_init(h, NULL, "2025-06-18");
  const char *names[] = {"browse", "metrics", "literal", "structured", "failing",
                         "media", "tool_error"};
  size_t seen = 0;
  char cursor[64] = "";
  for (int page = 0; page < 10; page++) {
    char buf[256];
    if (cursor[0])
      snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
               "\"params\":{\"cursor\":\"%s\"}}", cursor);
    else
      snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    cJSON *r = h_call(h, NULL, buf);
    cJSON *tools = cJSON_GetObjectItem(h_result(r), "tools");
    ck_assert_int_le(cJSON_GetArraySize(tools), 3);
    cJSON *t;
    cJSON_ArrayForEach(t, tools)
      ck_assert_str_eq(cJSON_GetObjectItem(t, "name")->valuestring, names[seen++]);
    cJSON *next = cJSON_GetObjectItem(h_result(r), "nextCursor");
    if (next)
      snprintf(cursor, sizeof cursor, "%s", next->valuestring);
    cJSON_Delete(r);
    if (!next)
      break;
  }
  ck_assert_uint_eq(seen, 7);
  const char *bad[] = {"\"zz\"", "\"t99\"", "5", "\"t\"", "\"r3\"", "\"t03\""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char buf[256];
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
             "\"params\":{\"cursor\":%s}}", bad[i]);
    cJSON *r = h_call(h, NULL, buf);
    ck_assert_int_eq(h_error_code(r), -32602);
    ck_assert_ptr_nonnull(strstr(h_error_message(r), "cursor"));
    cJSON_Delete(r);
  }
  h_free(h);
}
END_TEST

START_TEST(schemas)
{
  harness *h = setup();
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
  h_msg *m = h_next(h);
  /* the literal schema is spliced in token for token */
  ck_assert_ptr_nonnull(strstr(m->data, "\"inputSchema\":" LITERAL_MIN));
  cJSON *r = cJSON_Parse(m->data);
  h_msg_free(m);
  cJSON *tools = cJSON_GetObjectItem(h_result(r), "tools");
  cJSON *browse_t = cJSON_GetArrayItem(tools, 0);
  cJSON *schema = cJSON_GetObjectItem(browse_t, "inputSchema");
  ck_assert_str_eq(cJSON_GetObjectItem(schema, "type")->valuestring, "object");
  ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(schema, "additionalProperties")));
  cJSON *props = cJSON_GetObjectItem(schema, "properties");
  cJSON *mode = cJSON_GetObjectItem(props, "mode");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(mode, "enum")), 2);
  cJSON *req = cJSON_GetObjectItem(schema, "required");
  ck_assert_str_eq(cJSON_GetArrayItem(req, 0)->valuestring, "mode");
  cJSON *limit = cJSON_GetObjectItem(props, "limit");
  ck_assert_str_eq(cJSON_GetObjectItem(limit, "type")->valuestring, "integer");
  ck_assert_int_eq(cJSON_GetObjectItem(limit, "maximum")->valueint, 100);
  ck_assert_int_eq(cJSON_GetObjectItem(limit, "default")->valueint, 20);
  ck_assert_ptr_nonnull(strstr(cJSON_GetObjectItem(limit, "description")->valuestring,
                               "Read by mode runs"));
  /* the mode note is a sentence of its own, also after a description
   * without a full stop */
  ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(props, "name"),
                                       "description")->valuestring,
                   "Name filter (a prefix). Read by mode runs.");
  ck_assert_str_eq(cJSON_GetObjectItem(limit, "description")->valuestring,
                   "Most runs. Read by mode runs.");
  cJSON *project = cJSON_GetObjectItem(props, "project");
  ck_assert_ptr_nonnull(strstr(cJSON_GetObjectItem(project, "description")->valuestring,
                               "tree, runs (required)"));
  cJSON *ann = cJSON_GetObjectItem(browse_t, "annotations");
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(ann, "readOnlyHint")));
  ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(ann, "destructiveHint")));
  ck_assert_ptr_null(cJSON_GetObjectItem(ann, "idempotentHint"));
  cJSON *st = cJSON_GetArrayItem(tools, 3);
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(st, "outputSchema"));
  cJSON_Delete(r);

  pmcp_buf b = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp_server_tool_schema(h->srv, "literal", &b), 0);
  ck_assert_str_eq(b.ptr, LITERAL_MIN);
  pmcp_buf_dispose(&b);
  ck_assert_int_eq(pmcp_server_tool_schema(h->srv, "nope", &b), PMCP_ENOTFOUND);
  h_free(h);
}
END_TEST

START_TEST(results_and_errors)
{
  harness *h = setup();
  cJSON *r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                             "\"params\":{\"name\":\"nope\"}}");
  ck_assert_int_eq(h_error_code(r), -32602);
  ck_assert_ptr_nonnull(strstr(h_error_message(r), "nope"));
  cJSON_Delete(r);

  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"browse\",\"arguments\":[1]}}");
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);

  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                      "\"params\":{\"arguments\":{}}}");
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);

  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"failing\"}}");
  ck_assert_int_eq(h_error_code(r), -32603);
  ck_assert_ptr_nonnull(strstr(h_error_message(r), "failing"));
  cJSON_Delete(r);

  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"tool_error\"}}");
  ck_assert(h_is_error(r));
  ck_assert_str_eq(h_text0(r), "it broke: 42");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(h_result(r), "content")), 1);
  cJSON_Delete(r);

  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"structured\"}}");
  cJSON *sc = cJSON_GetObjectItem(h_result(r), "structuredContent");
  ck_assert_double_eq(cJSON_GetObjectItem(sc, "temperature")->valuedouble, 22.5);
  ck_assert_str_eq(h_text0(r), "{\"temperature\":22.5,\"unit\":\"C\"}");
  cJSON_Delete(r);

  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"media\"}}");
  cJSON *content = cJSON_GetObjectItem(h_result(r), "content");
  const char *types[] = {"text", "image", "audio", "resource", "resource_link"};
  ck_assert_int_eq(cJSON_GetArraySize(content), 5);
  for (int i = 0; i < 5; i++)
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(content, i), "type")->valuestring,
                     types[i]);
  cJSON *res = cJSON_GetObjectItem(cJSON_GetArrayItem(content, 3), "resource");
  ck_assert_str_eq(cJSON_GetObjectItem(res, "text")->valuestring, "body");
  ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(content, 1), "mimeType")->valuestring,
                   "image/png");
  cJSON_Delete(r);

  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"literal\",\"arguments\":{\"x\":\"y\",\"z\":[1]}}}");
  ck_assert_str_eq(h_text0(r), "{\"x\":\"y\",\"z\":[1]}");
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

static int nop(pmcp_call *c, void *ud)
{
  (void)c;
  (void)ud;
  return 0;
}

static int freed;
static void count_free(void *ud)
{
  (void)ud;
  freed++;
}

START_TEST(registration_errors)
{
  harness *h = h_new(NULL);
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.handler = nop;
  d.ud_free = count_free;
  freed = 0;
  d.name = "bad name";
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &d), PMCP_EINVAL);
  ck_assert_int_eq(freed, 1);
  d.name = "ok";
  d.input_schema_json = "[1]";
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &d), PMCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(pmcp_server_errmsg(h->srv), "input_schema_json"));
  d.input_schema_json = NULL;
  static const pmcp_arg_spec dup[] = {
    {"a", PMCP_T_STRING, 0, NULL, 0, 0, 0, 0, NULL, NULL},
    {"a", PMCP_T_STRING, 0, NULL, 0, 0, 0, 0, NULL, NULL},
  };
  d.args = dup;
  d.n_args = 2;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &d), PMCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(pmcp_server_errmsg(h->srv), "declared twice"));
  static const pmcp_arg_spec baddef[] = {
    {"a", PMCP_T_INTEGER, 0, NULL, 0, 0, 0, 0, NULL, "\"x\""},
  };
  d.args = baddef;
  d.n_args = 1;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &d), PMCP_EINVAL);
  static const pmcp_mode_spec twice[] = {{"m", NULL, NULL, 0}, {"m", NULL, NULL, 0}};
  d.args = NULL;
  d.n_args = 0;
  d.modes = twice;
  d.n_modes = 2;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &d), PMCP_EINVAL);
  d.n_modes = 1;
  d.default_mode = "zz";
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &d), PMCP_EINVAL);
  d.default_mode = NULL;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &d), 0);
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &d), PMCP_EEXIST);
  ck_assert_int_eq(freed, 7);
  h_init(h, NULL, "2025-11-25");
  d.name = "late";
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &d), PMCP_EMISUSE);
  h_free(h);
  ck_assert_int_eq(freed, 9); /* late one at once, "ok" with the server */
}
END_TEST

static int budget_probe(pmcp_call *call, void *ud)
{
  (void)ud;
  char t[32];
  snprintf(t, sizeof t, "%d", pmcp_call_token_budget(call));
  return pmcp_result_text(call, t, strlen(t));
}

START_TEST(budgeted_args)
{
  harness *h = h_new(NULL);
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = "b";
  d.handler = budget_probe;
  d.flags = PMCP_TOOL_BUDGETED;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &d), 0);
  h_init(h, NULL, "2025-11-25");
  cJSON *r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                             "\"params\":{\"name\":\"b\"}}");
  ck_assert_str_eq(h_text0(r), "2000");
  cJSON_Delete(r);
  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"b\",\"arguments\":{\"token_budget\":600,"
                      "\"cursor\":\"abc\"}}}");
  ck_assert_str_eq(h_text0(r), "600");
  cJSON_Delete(r);
  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"b\",\"arguments\":{\"token_budget\":100}}}");
  ck_assert(h_is_error(r));
  ck_assert_ptr_nonnull(strstr(h_text0(r), "/arguments/token_budget"));
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

/* An offset-paged tool takes token_budget (naming next_offset) but no
 * cursor, refused as unknown with the way to page; a structured argument
 * gets its schema after registration and keeps its declared checks. */
START_TEST(offset_paged_args)
{
  harness *h = h_new(NULL);
  static const pmcp_arg_spec args[] = {
    {"filter", PMCP_T_ARRAY, 0, "Conditions.", 0, 1, 0, 2, NULL, NULL},
    {"offset", PMCP_T_INTEGER, 0, NULL, 1, 1, 0, 100, NULL, NULL}};
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = "o";
  d.handler = budget_probe;
  d.args = args;
  d.n_args = 2;
  d.flags = PMCP_TOOL_BUDGETED | PMCP_TOOL_OFFSET_PAGED;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &d), 0);
  ck_assert_int_eq(pmcp__schema_set_arg(h->srv, "o", "filter",
                                        "{\"type\":\"array\",\"items\":{\"enum\":[1,2]}}"), 0);
  ck_assert_int_eq(pmcp__schema_set_arg(h->srv, "o", "nope", "{}"), PMCP_EINVAL);
  ck_assert_int_eq(pmcp__schema_set_arg(h->srv, "o", "filter", "[1]"), PMCP_EINVAL);
  ck_assert_int_eq(pmcp__schema_set_arg(h->srv, "none", "filter", "{}"), PMCP_ENOTFOUND);
  h_init(h, NULL, "2025-11-25");
  cJSON *r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
  cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(h_result(r), "tools"), 0);
  cJSON *props = cJSON_GetObjectItem(cJSON_GetObjectItem(t, "inputSchema"), "properties");
  ck_assert_ptr_null(cJSON_GetObjectItem(props, "cursor"));
  ck_assert_ptr_nonnull(strstr(cJSON_GetObjectItem(cJSON_GetObjectItem(props, "token_budget"),
                                                   "description")->valuestring, "next_offset"));
  cJSON *f = cJSON_GetObjectItem(props, "filter");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(f, "items"),
                                                          "enum")), 2);
  ck_assert_str_eq(cJSON_GetObjectItem(f, "description")->valuestring, "Conditions.");
  cJSON_Delete(r);
  /* what tools/list shows is what pmcp_server_tool_schema() gives */
  pmcp_buf b = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp_server_tool_schema(h->srv, "o", &b), 0);
  ck_assert_ptr_nonnull(strstr(b.ptr, "\"enum\":[1,2]"));
  pmcp_buf_dispose(&b);
  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"o\",\"arguments\":{\"cursor\":\"abc\"}}}");
  ck_assert(h_is_error(r));
  ck_assert_ptr_nonnull(strstr(h_text0(r), "unknown argument 'cursor'"));
  ck_assert_ptr_nonnull(strstr(h_text0(r), "next_offset"));
  cJSON_Delete(r);
  /* the declaration's bounds still hold */
  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"o\",\"arguments\":{\"filter\":[1,2,1]}}}");
  ck_assert(h_is_error(r));
  cJSON_Delete(r);
  r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"o\",\"arguments\":{\"filter\":[1]}}}");
  ck_assert_str_eq(h_text0(r), "2000");
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

/* Session "limited" (ud "limited") sees only tools whose name has no 'r'. */
static int filter_marker;
static int filter(const char *tool, void *session_ud, void *ud)
{
  ck_assert_ptr_eq(ud, &filter_marker);
  return !session_ud || strcmp(session_ud, "limited") != 0 || !strchr(tool, 'r');
}

static int filter_freed;
static void filter_free(void *ud)
{
  (void)ud;
  filter_freed++;
}

START_TEST(tool_filter)
{
  harness *h = h_new(NULL);
  add_tools(h->srv);
  filter_freed = 0;
  ck_assert_int_eq(pmcp_server_set_tool_filter(h->srv, filter, &filter_marker, filter_free), 0);
  ck_assert_int_eq(pmcp_server_set_page_size(h->srv, 1), 0);
  ck_assert_int_eq(pmcp_server_session_open(h->srv, "lim", 0, (void *)"limited"), 0);
  h_init(h, "lim", "2025-11-25");
  h_init(h, "all", "2025-11-25");
  /* visible to "lim": failing, media; every other name has an 'r' */
  const char *want[] = {"failing", "media"};
  size_t seen = 0;
  char cursor[32] = "";
  for (int page = 0; page < 10; page++) {
    char buf[256];
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"%s%s%s}",
             cursor[0] ? ",\"params\":{\"cursor\":\"" : "", cursor, cursor[0] ? "\"}" : "");
    cJSON *r = h_call(h, "lim", buf);
    cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(h_result(r), "tools")) {
      ck_assert_uint_lt(seen, 2);
      ck_assert_str_eq(cJSON_GetObjectItem(t, "name")->valuestring, want[seen++]);
    }
    cJSON *next = cJSON_GetObjectItem(h_result(r), "nextCursor");
    if (next)
      snprintf(cursor, sizeof cursor, "%s", next->valuestring);
    cJSON_Delete(r);
    if (!next)
      break;
  }
  ck_assert_uint_eq(seen, 2);
  /* a hidden tool is answered like a missing one */
  cJSON *r = h_call(h, "lim", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                             "\"params\":{\"name\":\"browse\",\"arguments\":{\"mode\":\"tree\"}}}");
  ck_assert_int_eq(h_error_code(r), -32602);
  ck_assert_ptr_nonnull(strstr(h_error_message(r), "Unknown tool"));
  cJSON_Delete(r);
  r = h_call(h, "all", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"browse\",\"arguments\":{\"mode\":\"tree\"}}}");
  ck_assert_int_eq(h_error_code(r), 0);
  cJSON_Delete(r);
  ck_assert_int_eq(pmcp_server_set_tool_filter(h->srv, filter, NULL, filter_free), PMCP_EMISUSE);
  ck_assert_int_eq(filter_freed, 1);
  h_free(h);
  ck_assert_int_eq(filter_freed, 2);
}
END_TEST

/* Typed access to enums, arrays and objects: each handler answer is
 * compared with what the arguments literally say. */
static const char *const axis_enum[] = {"step", "wall_clock", "relative_time", NULL};
static const char *const agg_enum[] = {"min", "max", "mean", NULL};
static const pmcp_arg_spec typed_a_args[] = {
  {"axis", PMCP_T_STRING, 0, NULL, 0, 0, 0, 0, axis_enum, "\"wall_clock\""},
  {"aggs", PMCP_T_STRING_ARRAY, 0, NULL, 0, 0, 0, 0, agg_enum, NULL},
  {"items", PMCP_T_ARRAY, 0, NULL, 0, 0, 0, 0, NULL, NULL},
  {"opts", PMCP_T_OBJECT, 0, NULL, 0, 0, 0, 0, NULL, NULL},
  {"plain", PMCP_T_STRING, 0, NULL, 0, 0, 0, 0, NULL, NULL},
};
static const pmcp_mode_spec typed_modes[] = {
  {"a", NULL, typed_a_args, 5},
  {"b", NULL, NULL, 0},
};

static int typed_tool(pmcp_call *call, void *ud)
{
  (void)ud;
  char out[1024];
  size_t n = 0, mi = 99, ax = 99, k;
  const char *s;
  double d;
  if (strcmp(pmcp_call_name(call), "modeless") == 0) {
    ck_assert_int_eq(pmcp_call_mode_index(call, &mi), PMCP_ENOTFOUND);
    ck_assert_int_eq(pmcp_call_mode_index(call, NULL), PMCP_EINVAL);
    return pmcp_result_text(call, "modeless", 8);
  }
  ck_assert_int_eq(pmcp_call_mode_index(call, &mi), 0);
  n += (size_t)snprintf(out + n, sizeof out - n, "mode=%zu", mi);
  if (mi == 0) {
    ck_assert_int_eq(pmcp_arg_enum(call, "axis", &ax), 0);
    n += (size_t)snprintf(out + n, sizeof out - n, " axis=%zu aggs=", ax);
    for (size_t i = 0; i < pmcp_arg_count(call, "aggs"); i++) {
      ck_assert_int_eq(pmcp_arg_enum_at(call, "aggs", i, &k), 0);
      n += (size_t)snprintf(out + n, sizeof out - n, "%zu,", k);
    }
    ck_assert_int_eq(pmcp_arg_enum_at(call, "aggs", pmcp_arg_count(call, "aggs"), &k),
                     PMCP_ENOTFOUND);
    n += (size_t)snprintf(out + n, sizeof out - n, " items=");
    for (size_t i = 0; i < pmcp_arg_count(call, "items"); i++) {
      ck_assert_int_eq(pmcp_arg_json_at(call, "items", i, &s), 0);
      n += (size_t)snprintf(out + n, sizeof out - n, "%s;", s);
    }
    n += (size_t)snprintf(out + n, sizeof out - n, " opts=");
    for (size_t i = 0; i < pmcp_arg_member_count(call, "opts"); i++) {
      ck_assert_int_eq(pmcp_arg_member_key(call, "opts", i, &s), 0);
      const char *j;
      ck_assert_int_eq(pmcp_arg_member_json(call, "opts", s, &j), 0);
      n += (size_t)snprintf(out + n, sizeof out - n, "%s=%s;", s, j);
    }
    if (pmcp_arg_has(call, "opts")) {
      ck_assert_int_eq(pmcp_arg_member_key(call, "opts", pmcp_arg_member_count(call, "opts"),
                                           &s), PMCP_ENOTFOUND);
      ck_assert_int_eq(pmcp_arg_member_string(call, "opts", "name", &s), 0);
      ck_assert_str_eq(s, "x");
      ck_assert_int_eq(pmcp_arg_member_number(call, "opts", "n", &d), 0);
      ck_assert(d == 2.5);
      ck_assert_int_eq(pmcp_arg_member_number(call, "opts", "name", &d), PMCP_EINVAL);
      ck_assert_int_eq(pmcp_arg_member_string(call, "opts", "nope", &s), PMCP_ENOTFOUND);
    } else {
      ck_assert_int_eq(pmcp_arg_member_string(call, "opts", "name", &s), PMCP_ENOTFOUND);
    }
    /* the wrong kinds of argument */
    ck_assert_int_eq(pmcp_arg_enum(call, "plain", &k), pmcp_arg_has(call, "plain")
                                                          ? PMCP_EINVAL : PMCP_ENOTFOUND);
    ck_assert_int_eq(pmcp_arg_member_count(call, "items"), 0);
    if (pmcp_arg_has(call, "items")) {
      ck_assert_int_eq(pmcp_arg_member_key(call, "items", 0, &s), PMCP_EINVAL);
      ck_assert_int_eq(pmcp_arg_json_at(call, "opts", 0, &s),
                       pmcp_arg_has(call, "opts") ? PMCP_EINVAL : PMCP_ENOTFOUND);
    }
  } else {
    ck_assert_int_eq(pmcp_arg_enum(call, "axis", &ax), PMCP_ENOTFOUND);
  }
  return pmcp_result_text(call, out, n);
}

START_TEST(typed_access)
{
  harness *h = h_new(NULL);
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = "typed";
  d.modes = typed_modes;
  d.n_modes = 2;
  d.handler = typed_tool;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &d), 0);
  pmcp_tool_def e = PMCP_TOOL_DEF_INIT;
  e.name = "modeless";
  e.handler = typed_tool;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &e), 0);
  h_init(h, NULL, "2025-11-25");
  static const struct { const char *args, *want; } cases[] = {
    {"{\"mode\":\"a\"}", "mode=0 axis=1 aggs= items= opts="},
    {"{\"mode\":\"a\",\"axis\":\"relative_time\",\"aggs\":[\"mean\",\"min\",\"mean\"]}",
     "mode=0 axis=2 aggs=2,0,2, items= opts="},
    {"{\"mode\":\"a\",\"axis\":\"step\",\"items\":[1,\"two\",{\"c\":[3]},null],"
     "\"opts\":{\"name\":\"x\",\"n\":2.5,\"deep\":{\"k\":[]}},\"plain\":\"p\"}",
     "mode=0 axis=0 aggs= items=1;\"two\";{\"c\":[3]};null; "
     "opts=name=\"x\";n=2.5;deep={\"k\":[]};"},
    {"{\"mode\":\"b\"}", "mode=1"},
  };
  char buf[1024];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"typed\",\"arguments\":%s}}", cases[i].args);
    cJSON *r = h_call(h, NULL, buf);
    ck_assert_msg(!h_is_error(r), "%s", cases[i].args);
    ck_assert_str_eq(h_text0(r), cases[i].want);
    cJSON_Delete(r);
  }
  /* a mode-less tool has no mode index */
  cJSON *r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
                             "\"params\":{\"name\":\"modeless\"}}");
  ck_assert_str_eq(h_text0(r), "modeless");
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

/* The tool error table: every value has a distinct lower-case code that
 * maps back to it; anything else is "internal" / PMCP_TERR_NONE. */
START_TEST(tool_error_table)
{
  const char *seen[PMCP_TERR_MAX_ + 1] = {0};
  for (int c = 1; c <= PMCP_TERR_MAX_; c++) {
    const char *s = pmcp_tool_error_name(c);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_gt(strlen(s), 0);
    ck_assert_uint_eq(strspn(s, "abcdefghijklmnopqrstuvwxyz_"), strlen(s));
    ck_assert_uint_gt(strlen(pmcp_tool_error_meaning(c)), 0);
    ck_assert_int_eq(pmcp_tool_error_from_name(s), c);
    for (int d = 1; d < c; d++)
      ck_assert_str_ne(seen[d], s);
    seen[c] = s;
  }
  ck_assert_str_eq(pmcp_tool_error_name(PMCP_TERR_NOT_FOUND), "not_found");
  ck_assert_str_eq(pmcp_tool_error_name(PMCP_TERR_STORE), "store_error");
  ck_assert_str_eq(pmcp_tool_error_name(0), "internal");
  ck_assert_str_eq(pmcp_tool_error_name(PMCP_TERR_MAX_ + 1), "internal");
  ck_assert_str_eq(pmcp_tool_error_name(-3), "internal");
  ck_assert_int_eq(pmcp_tool_error_from_name(NULL), PMCP_TERR_NONE);
  ck_assert_int_eq(pmcp_tool_error_from_name("store"), PMCP_TERR_NONE);
  ck_assert_int_eq(pmcp_tool_error_from_name("Not_Found"), PMCP_TERR_NONE);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("engine-tools");
  TCase *tc = tcase_create("tools");
  tcase_add_test(tc, mode_validation);
  tcase_add_test(tc, typed_args);
  tcase_add_test(tc, list_pagination);
  tcase_add_test(tc, schemas);
  tcase_add_test(tc, results_and_errors);
  tcase_add_test(tc, registration_errors);
  tcase_add_test(tc, budgeted_args);
  tcase_add_test(tc, offset_paged_args);
  tcase_add_test(tc, tool_filter);
  tcase_add_test(tc, tool_error_table);
  tcase_add_test(tc, typed_access);
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
