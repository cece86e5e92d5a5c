/* SPDX-License-Identifier: MIT */
/* The per-server allocator: every engine-owned allocation goes through it
 * and is returned by pmcp_server_free(); and a fail-the-Nth-allocation loop
 * over registration and a scripted session never crashes or leaks. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine-harness.h"

typedef struct counting {
  atomic_long live;      /* blocks handed out and not yet freed */
  atomic_long calls;     /* malloc + realloc calls */
  long fail_at;          /* the call number that fails; 0: never */
} counting;

static void *c_malloc(size_t n, void *ud)
{
  counting *c = ud;
  long k = atomic_fetch_add(&c->calls, 1) + 1;
  if (c->fail_at && k == c->fail_at)
    return NULL;
  void *p = malloc(n);
  if (p)
    atomic_fetch_add(&c->live, 1);
  return p;
}

static void *c_realloc(void *p, size_t n, void *ud)
{
  counting *c = ud;
  long k = atomic_fetch_add(&c->calls, 1) + 1;
  if (c->fail_at && k == c->fail_at)
    return NULL;
  void *q = realloc(p, n);
  if (q && !p)
    atomic_fetch_add(&c->live, 1);
  return q;
}

static void c_free(void *p, void *ud)
{
  counting *c = ud;
  if (p)
    atomic_fetch_sub(&c->live, 1);
  free(p);
}

static void quiet_sink(const pmcp_out *o, void *ud)
{
  (void)o;
  (void)ud;
}

static int tool(pmcp_call *call, void *ud)
{
  (void)ud;
  pmcp_call_progress(call, 1, 2, NULL);
  return pmcp_result_text(call, "ok", 2);
}

static int reader(pmcp_call *call, void *ud)
{
  (void)ud;
  return pmcp_result_text(call, "r", 1);
}

static int prompt(pmcp_call *call, void *ud)
{
  (void)ud;
  return pmcp_prompt_text(call, "user", "p");
}

static const pmcp_arg_spec args[] = {
  {"n", PMCP_T_INTEGER, 1, "n", 1, 1, 0, 9, NULL, "1"},
};
static const pmcp_mode_spec modes[] = {{"a", "A", args, 1}, {"b", "B", NULL, 0}};

static const char *script[] = {
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
  "{\"protocolVersion\":\"2025-03-26\",\"capabilities\":{\"sampling\":{}}}}",
  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
  "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
  "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"t\","
  "\"arguments\":{\"mode\":\"a\",\"n\":3},\"_meta\":{\"progressToken\":1}}}",
  "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"w\"}}",
  "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"t\","
  "\"arguments\":{\"mode\":\"b\",\"n\":3}}}",
  "[{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":7,"
  "\"method\":\"resources/read\",\"params\":{\"uri\":\"x://a/1\"}}]",
  "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"x://r\"}}",
  "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"prompts/get\",\"params\":{\"name\":\"p\"}}",
  "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"info\"}}",
  "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"skills/list\"}",
  "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"skills/get\",\"params\":"
  "{\"uri\":\"skill://k/SKILL.md\"}}",
  "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"resources/read\",\"params\":"
  "{\"uri\":\"skill://k/b.md\"}}",
  "{bad",
};

/* A skill of two files: a registration that fails part way must take back
 * the resources it had registered (they would read freed files; the read
 * above is on the initialized session, at an even index). */
static const char skill_md[] = "---\nname: k\ndescription: d\n---\nbody\n";
static const pmcp_skill_file skill_files[] = {
  {"SKILL.md", NULL, skill_md, sizeof skill_md - 1},
  {"b.md", NULL, "b", 1},
};

/* Builds a server with @p c as its allocator and runs the script; every
 * step may fail, none may crash. */
static void run(counting *c)
{
  pmcp_allocator a = {c_malloc, c_realloc, c_free, c};
  pmcp_server_options o = PMCP_SERVER_OPTIONS_INIT;
  o.name = "alloc";
  o.sink = quiet_sink;
  o.allocator = &a;
  o.workers = 2;
  pmcp_server *s = NULL;
  if (pmcp_server_new(&s, &o) != 0) {
    ck_assert_ptr_null(s);
    return;
  }
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = "t";
  d.modes = modes;
  d.n_modes = 2;
  d.handler = tool;
  d.flags = PMCP_TOOL_BUDGETED;
  pmcp_server_add_tool(s, &d);
  pmcp_tool_def w = PMCP_TOOL_DEF_INIT;
  w.name = "w";
  w.handler = tool;
  w.flags = PMCP_TOOL_BLOCKING;
  pmcp_server_add_tool(s, &w);
  pmcp_resource_def r = PMCP_RESOURCE_DEF_INIT;
  r.uri = "x://r";
  r.name = "r";
  r.read = reader;
  pmcp_server_add_resource(s, &r);
  r.uri = NULL;
  r.uri_template = "x://a/{id}";
  pmcp_server_add_resource(s, &r);
  pmcp_prompt_def p = PMCP_PROMPT_DEF_INIT;
  p.name = "p";
  p.get = prompt;
  pmcp_server_add_prompt(s, &p);
  pmcp_skill_def k = PMCP_SKILL_DEF_INIT;
  k.path = "k";
  k.files = skill_files;
  k.n_files = 2;
  pmcp_server_add_skill(s, &k);
  for (size_t i = 0; i < sizeof script / sizeof script[0]; i++)
    pmcp_server_handle(s, i % 2 ? "x" : NULL, script[i], strlen(script[i]));
  pmcp_server_notify_resource_updated(s, "x://r");
  pmcp_server_log(s, PMCP_LOG_ERROR, "t", "\"x\"");
  pmcp_server_drain(s);
  pmcp_server_free(s);
}

START_TEST(all_through_the_allocator)
{
  counting c = {0, 0, 0};
  run(&c);
  ck_assert_int_gt(atomic_load(&c.calls), 20);
  ck_assert_int_eq(atomic_load(&c.live), 0);
}
END_TEST

START_TEST(fail_each_allocation)
{
  counting probe = {0, 0, 0};
  run(&probe);
  long total = atomic_load(&probe.calls);
  ck_assert_int_gt(total, 50);
  for (long n = 1; n <= total + 5; n++) {
    counting c = {0, 0, n};
    run(&c);
    ck_assert_msg(atomic_load(&c.live) == 0, "failing allocation %ld leaks %ld blocks", n,
                  atomic_load(&c.live));
  }
}
END_TEST

START_TEST(bad_allocator)
{
  pmcp_allocator a = {c_malloc, NULL, c_free, NULL};
  pmcp_server_options o = PMCP_SERVER_OPTIONS_INIT;
  o.name = "x";
  o.sink = quiet_sink;
  o.allocator = &a;
  pmcp_server *s = (pmcp_server *)1;
  ck_assert_int_eq(pmcp_server_new(&s, &o), PMCP_EINVAL);
  ck_assert_ptr_null(s);
}
END_TEST

static int logged;
static void log_cb(pmcp_log_level level, const char *msg, void *ud)
{
  (void)ud;
  ck_assert_int_ge(level, PMCP_LOG_WARNING);
  ck_assert_ptr_nonnull(msg);
  logged++;
}

START_TEST(host_log)
{
  pmcp_server_options o = PMCP_SERVER_OPTIONS_INIT;
  o.name = "x";
  o.sink = quiet_sink;
  o.log = log_cb;
  o.log_level = PMCP_LOG_WARNING;
  pmcp_server *s = NULL;
  ck_assert_int_eq(pmcp_server_new(&s, &o), 0);
  logged = 0;
  /* a response to nothing the server asked is worth a warning */
  const char *m = "{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{}}";
  ck_assert_int_eq(pmcp_server_handle(s, NULL, m, strlen(m)), 0);
  ck_assert_int_eq(logged, 1);
  pmcp_server_free(s);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("engine-alloc");
  TCase *tc = tcase_create("alloc");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, all_through_the_allocator);
  tcase_add_test(tc, fail_each_allocation);
  tcase_add_test(tc, bad_allocator);
  tcase_add_test(tc, host_log);
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
