/* SPDX-License-Identifier: MIT */
/* The ABI rules of libprobemcp(7): every older version of a definition is
 * accepted and a newer one refused; tool and prompt definitions of
 * version 2 say their element sizes, so a caller compiled with larger
 * (grown) element structs is read at its stride; the run-time version and
 * feature queries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine-harness.h"

static int echo(pmcp_call *call, void *ud)
{
  (void)ud;
  const char *s = "-";
  int64_t n = -1;
  pmcp_arg_string(call, "s", &s, NULL);
  pmcp_arg_int(call, "n", &n);
  char out[160];
  snprintf(out, sizeof out, "{\"mode\":\"%s\",\"s\":\"%s\",\"n\":%lld}",
           pmcp_call_mode(call) ? pmcp_call_mode(call) : "", s, (long long)n);
  return pmcp_result_text(call, out, strlen(out));
}

/* What a caller built against a later release with grown elements
 * passes: the known layout first, then fields this library does not know. */
typedef struct grown_arg {
  pmcp_arg_spec spec;
  double future[3];
} grown_arg;
typedef struct grown_mode {
  pmcp_mode_spec spec;
  const void *future[2];
} grown_mode;
typedef struct grown_prompt_arg {
  pmcp_prompt_arg arg;
  long future[5];
} grown_prompt_arg;

static const pmcp_arg_spec v1_args[] = {
  {"s", PMCP_T_STRING, 1, "A string.", 0, 0, 0, 0, NULL, NULL},
  {"n", PMCP_T_INTEGER, 0, "A number.", 1, 1, 0, 9, NULL, "3"},
};
static const pmcp_mode_spec v1_modes[] = {
  {"one", "First.", v1_args, 2},
  {"two", "Second.", v1_args + 1, 1},
};

static grown_arg g_args[2];
static grown_mode g_modes[2];

static void fill_grown(void)
{
  memset(g_args, 0x5a, sizeof g_args); /* the unknown fields are noise */
  memset(g_modes, 0x5a, sizeof g_modes);
  for (int i = 0; i < 2; i++)
    g_args[i].spec = v1_args[i];
  g_modes[0].spec = (pmcp_mode_spec){"one", "First.", &g_args[0].spec, 2};
  g_modes[1].spec = (pmcp_mode_spec){"two", "Second.", &g_args[1].spec, 1};
}

static cJSON *rpc(harness *h, const char *method, const char *params)
{
  static int id = 100;
  char buf[1024];
  snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":%s}",
           ++id, method, params);
  return h_call(h, "", buf);
}

/* The tools' schemas and one call of each: the same for every version. */
static void check_tools(harness *h)
{
  cJSON *r = rpc(h, "tools/list", "{}");
  cJSON *tools = cJSON_GetObjectItem(h_result(r), "tools");
  ck_assert_int_eq(cJSON_GetArraySize(tools), 3);
  cJSON *t;
  cJSON_ArrayForEach(t, tools) {
    cJSON *props = cJSON_GetObjectItem(cJSON_GetObjectItem(t, "inputSchema"), "properties");
    const cJSON *mode = cJSON_GetObjectItem(props, "mode");
    ck_assert_ptr_nonnull(mode);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(mode, "enum")), 2);
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(props, "s"));
    const cJSON *n = cJSON_GetObjectItem(props, "n");
    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(cJSON_GetObjectItem(n, "maximum")->valueint, 9);
  }
  cJSON_Delete(r);
  const char *names[] = {"v1", "v2", "grown"};
  for (int i = 0; i < 3; i++) {
    char p[200];
    snprintf(p, sizeof p, "{\"name\":\"%s\",\"arguments\":{\"mode\":\"one\",\"s\":\"x\"}}",
             names[i]);
    r = rpc(h, "tools/call", p);
    ck_assert_str_eq(h_text0(r), "{\"mode\":\"one\",\"s\":\"x\",\"n\":3}");
    cJSON_Delete(r);
    snprintf(p, sizeof p, "{\"name\":\"%s\",\"arguments\":{\"mode\":\"two\",\"n\":12}}",
             names[i]);
    r = rpc(h, "tools/call", p);
    ck_assert_msg(h_error_code(r) != 0 || h_is_error(r), "%s: n above its maximum passed",
                  names[i]);
    cJSON_Delete(r);
  }
}

START_TEST(tool_definitions_of_every_version)
{
  harness *h = h_new(NULL);
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  ck_assert_uint_eq(d.version, 2);
  ck_assert_uint_eq(d.arg_spec_size, sizeof(pmcp_arg_spec));
  d.description = "Echo.";
  d.handler = echo;
  d.modes = v1_modes;
  d.n_modes = 2;
  /* version 1: no size fields (a caller built against 0.1 passes a shorter
   * struct; its tail here is never read) */
  pmcp_tool_def v1 = d;
  v1.version = 1;
  v1.mode_spec_size = 12345;
  v1.arg_spec_size = 1;
  v1.name = "v1";
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &v1), 0);
  d.name = "v2";
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &d), 0);
  fill_grown();
  pmcp_tool_def g = d;
  g.name = "grown";
  g.modes = &g_modes[0].spec;
  g.mode_spec_size = sizeof(grown_mode);
  g.arg_spec_size = sizeof(grown_arg);
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &g), 0);
  /* refused: a newer version, version 0, sizes below the first layout */
  pmcp_tool_def bad = d;
  bad.name = "bad";
  bad.version = PMCP_TOOL_DEF_VERSION + 1;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &bad), PMCP_EINVAL);
  bad.version = 0;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &bad), PMCP_EINVAL);
  bad.version = 2;
  bad.arg_spec_size = sizeof(pmcp_arg_spec) - 8;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &bad), PMCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(pmcp_server_errmsg(h->srv), "arg_spec_size"));
  h_init(h, "", "2025-06-18");
  check_tools(h);
  h_free(h);
}
END_TEST

static int get_prompt(pmcp_call *call, void *ud)
{
  (void)ud;
  const char *topic = "?";
  pmcp_arg_string(call, "topic", &topic, NULL);
  return pmcp_prompt_text(call, "user", topic);
}

START_TEST(prompt_definitions_of_every_version)
{
  harness *h = h_new(NULL);
  static const pmcp_prompt_arg args[] = {{"topic", "What about.", 1}, {"tone", NULL, 0}};
  grown_prompt_arg gargs[2];
  memset(gargs, 0x77, sizeof gargs);
  gargs[0].arg = args[0];
  gargs[1].arg = args[1];
  pmcp_prompt_def d = PMCP_PROMPT_DEF_INIT;
  ck_assert_uint_eq(d.version, 2);
  ck_assert_uint_eq(d.arg_size, sizeof(pmcp_prompt_arg));
  d.get = get_prompt;
  d.args = args;
  d.n_args = 2;
  pmcp_prompt_def v1 = d;
  v1.version = 1;
  v1.arg_size = 3; /* not there for version 1: ignored */
  v1.name = "v1";
  ck_assert_int_eq(pmcp_server_add_prompt(h->srv, &v1), 0);
  pmcp_prompt_def g = d;
  g.name = "grown";
  g.args = &gargs[0].arg;
  g.arg_size = sizeof(grown_prompt_arg);
  ck_assert_int_eq(pmcp_server_add_prompt(h->srv, &g), 0);
  pmcp_prompt_def bad = d;
  bad.name = "bad";
  bad.version = PMCP_PROMPT_DEF_VERSION + 1;
  ck_assert_int_eq(pmcp_server_add_prompt(h->srv, &bad), PMCP_EINVAL);
  h_init(h, "", "2025-06-18");
  cJSON *r = rpc(h, "prompts/list", "{}");
  cJSON *ps = cJSON_GetObjectItem(h_result(r), "prompts");
  ck_assert_int_eq(cJSON_GetArraySize(ps), 2);
  cJSON *p;
  cJSON_ArrayForEach(p, ps) {
    cJSON *a = cJSON_GetObjectItem(p, "arguments");
    ck_assert_int_eq(cJSON_GetArraySize(a), 2);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 0), "name")->valuestring, "topic");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 0), "required")));
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 1), "name")->valuestring, "tone");
  }
  cJSON_Delete(r);
  r = rpc(h, "prompts/get", "{\"name\":\"grown\",\"arguments\":{\"topic\":\"abi\"}}");
  char *text = cJSON_PrintUnformatted(h_result(r));
  ck_assert_ptr_nonnull(strstr(text, "\"abi\""));
  free(text);
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

START_TEST(server_options_of_every_version)
{
  pmcp_server_options o;
  ck_assert_int_eq(pmcp_server_options_init(&o, 1), 0);
  ck_assert_int_eq(pmcp_server_options_init(&o, PMCP_SERVER_OPTIONS_VERSION + 1), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_server_options_init(&o, 0), PMCP_EINVAL);
}
END_TEST

START_TEST(version_and_features)
{
  ck_assert_uint_eq(pmcp_version_number(), PMCP_VERSION_HEX);
  char s[32];
  unsigned long v = pmcp_version_number();
  snprintf(s, sizeof s, "%lu.%lu.%lu", v >> 16, (v >> 8) & 0xff, v & 0xff);
  ck_assert_str_eq(s, pmcp_version());
  ck_assert_int_eq(pmcp_has(PMCP_FEATURE_TASKS), 1);
  ck_assert_int_eq(pmcp_has(PMCP_FEATURE_C_NUMERIC), 1);
  ck_assert_int_eq(pmcp_has(PMCP_FEATURE_SIZED_SPECS), 1);
#ifdef PMCP_HAVE_POSTGRES
  ck_assert_int_eq(pmcp_has(PMCP_FEATURE_POSTGRES), 1);
#else
  ck_assert_int_eq(pmcp_has(PMCP_FEATURE_POSTGRES), 0);
#endif
#ifdef PMCP_HAVE_CAIRO
  ck_assert_int_eq(pmcp_has(PMCP_FEATURE_CHARTS), 1);
#else
  ck_assert_int_eq(pmcp_has(PMCP_FEATURE_CHARTS), 0);
#endif
  ck_assert_int_eq(pmcp_has((pmcp_feature)0), 0);
  ck_assert_int_eq(pmcp_has((pmcp_feature)9999), 0);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("engine-abi");
  TCase *tc = tcase_create("versions");
  tcase_add_test(tc, tool_definitions_of_every_version);
  tcase_add_test(tc, prompt_definitions_of_every_version);
  tcase_add_test(tc, server_options_of_every_version);
  tcase_add_test(tc, version_and_features);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
