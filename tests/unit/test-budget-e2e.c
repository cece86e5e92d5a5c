/* SPDX-License-Identifier: MIT */
/* Budgets end to end through pmcp_server_handle(): a toy PMCP_TOOL_BUDGETED
 * tool pages a long list across calls with changing token_budget, and the
 * engine's checks (range, result shape, overflow, restart errors, shared
 * cursor keys). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine-harness.h"
#include "probemcp/probemcp.h"

#define N_ENTRIES 700

/* listing: entries "<prefix>-NNNN" with a sentence each, paged. */
static int listing(pmcp_call *call, void *ud)
{
  (void)ud;
  const char *prefix = "entry";
  pmcp_arg_string(call, "prefix", &prefix, NULL);
  pmcp_page *pg;
  int rc = pmcp_page_begin(&pg, call, 42);
  if (rc)
    return rc;
  const void *pos;
  size_t pos_len;
  int more = 0;
  if (pmcp_page_position(pg, &pos, &pos_len) == 0) {
    uint32_t start = 0;
    if (pos_len == sizeof start)
      memcpy(&start, pos, sizeof start);
    pmcp_page_field_string(pg, "prefix", prefix);
    pmcp_page_list(pg, "entries");
    for (uint32_t i = start; i < N_ENTRIES; i++) {
      char name[64], text[160];
      snprintf(name, sizeof name, "%s-%04u", prefix, i);
      snprintf(text, sizeof text, "Entry %u of the toy listing: loss %.4f, "
               "notes \xE2\x80\x94 r\xC3\xA9sum\xC3\xA9 %u.", i, 1.0 / (i + 1), i * 7);
      pmcp_json *j = pmcp_page_item(pg);
      pmcp_json_object_begin(j);
      pmcp_json_key(j, "id");
      pmcp_json_int(j, i);
      pmcp_json_key(j, "name");
      pmcp_json_string(j, name);
      pmcp_json_key(j, "text");
      pmcp_json_string(j, text);
      pmcp_json_object_end(j);
      uint32_t next = i + 1;
      if (pmcp_page_commit(pg, &next, sizeof next)) {
        more = 1;
        break;
      }
    }
  }
  rc = pmcp_page_finish(pg, more);
  pmcp_page_free(pg);
  return rc;
}

/* A buggy tool that ignores its budget. */
static int overflow(pmcp_call *call, void *ud)
{
  (void)ud;
  size_t n = 200000;
  char *big = malloc(n + 16);
  memcpy(big, "{\"x\":\"", 6);
  memset(big + 6, 'z', n);
  memcpy(big + 6 + n, "\"}", 2);
  int rc = pmcp_result_text(call, big, n + 8);
  free(big);
  return rc;
}

/* A tool that fails with a plain-text message. */
static int plain_error(pmcp_call *call, void *ud)
{
  (void)ud;
  return pmcp_result_errorf(call, "no such run: %s", "run:nope");
}

/* Two text items: not the contract. */
static int two_items(pmcp_call *call, void *ud)
{
  (void)ud;
  pmcp_result_text(call, "{}", 2);
  return pmcp_result_text(call, "{}", 2);
}

static const pmcp_arg_spec listing_args[] = {
  {"prefix", PMCP_T_STRING, 0, "name prefix", 0, 0, 0, 0, NULL, "\"entry\""},
};

static void add_tool(harness *h, const char *name, pmcp_tool_fn fn)
{
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = name;
  d.description = "toy";
  d.args = listing_args;
  d.n_args = 1;
  d.flags = PMCP_TOOL_BUDGETED;
  d.read_only = PMCP_HINT_TRUE;
  d.handler = fn;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &d), 0);
}

static harness *setup(const void *key, size_t key_len)
{
  harness *h = h_new(NULL);
  if (key)
    ck_assert_int_eq(pmcp_server_set_cursor_key(h->srv, key, key_len), 0);
  add_tool(h, "listing", listing);
  add_tool(h, "listing2", listing);
  add_tool(h, "overflow", overflow);
  add_tool(h, "plain_error", plain_error);
  add_tool(h, "two_items", two_items);
  h_init(h, "s", "2025-06-18");
  return h;
}

static int next_id = 1;

/* Calls @p tool with @p args_json (an object's members, no braces). */
static cJSON *call_tool(harness *h, const char *tool, const char *members)
{
  char *msg = malloc(strlen(members) + 256);
  sprintf(msg, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
               "\"params\":{\"name\":\"%s\",\"arguments\":{%s}}}",
          next_id++, tool, members);
  cJSON *r = h_call(h, "s", msg);
  free(msg);
  ck_assert_int_eq(h_error_code(r), 0);
  return r;
}

/* Checks the contract on a tools/call response at @p budget; returns the
 * parsed text object. */
static cJSON *check(const cJSON *resp, int budget)
{
  cJSON *res = h_result(resp);
  cJSON *content = cJSON_GetObjectItem(res, "content");
  ck_assert_int_eq(cJSON_GetArraySize(content), 1);
  const char *text = h_text0(resp);
  size_t tokens = 0;
  ck_assert_int_eq(pmcp_tokens_count(text, strlen(text), &tokens), 0);
  ck_assert_msg(tokens <= (size_t)budget, "%zu tokens > %d", tokens, budget);
  ck_assert_uint_le(strlen(text), (size_t)budget * 8);
  cJSON *obj = cJSON_Parse(text);
  ck_assert(cJSON_IsObject(obj));
  if (h_is_error(resp)) {
    ck_assert(cJSON_IsString(cJSON_GetObjectItem(obj, "message")));
  } else {
    cJSON *sc = cJSON_GetObjectItem(res, "structuredContent");
    ck_assert(cJSON_Compare(sc, obj, 1));
  }
  return obj;
}

START_TEST(pages_with_changing_budgets)
{
  harness *h = setup(NULL, 0);
  const int budgets[] = {512, 2000, 700, 8000, 1000, 513};
  char *cursor = NULL;
  uint32_t want = 0;
  int pages = 0;
  do {
    int b = budgets[pages % 6];
    char args[2048];
    if (cursor)
      snprintf(args, sizeof args, "\"prefix\":\"e\",\"token_budget\":%d,\"cursor\":\"%s\"",
               b, cursor);
    else
      snprintf(args, sizeof args, "\"token_budget\":%d,\"prefix\":\"e\"", b);
    cJSON *r = call_tool(h, "listing", args);
    ck_assert_msg(!h_is_error(r), "page %d: %s", pages, h_text0(r));
    cJSON *obj = check(r, b);
    cJSON *e;
    int n = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(obj, "entries")) {
      ck_assert_uint_eq((uint32_t)cJSON_GetObjectItem(e, "id")->valuedouble, want);
      want++;
      n++;
    }
    ck_assert_int_eq(n, (int)cJSON_GetObjectItem(obj, "count")->valuedouble);
    ck_assert_int_gt(n, 0);
    free(cursor);
    cursor = NULL;
    cJSON *nc = cJSON_GetObjectItem(obj, "next_cursor");
    ck_assert_int_eq(cJSON_IsTrue(cJSON_GetObjectItem(obj, "truncated")), nc != NULL);
    if (nc)
      cursor = strdup(nc->valuestring);
    cJSON_Delete(obj);
    cJSON_Delete(r);
    pages++;
  } while (cursor);
  ck_assert_uint_eq(want, N_ENTRIES);
  ck_assert_int_gt(pages, 6);
  h_free(h);
}
END_TEST

START_TEST(budget_range_and_schema)
{
  harness *h = setup(NULL, 0);
  cJSON *r = h_call(h, "s", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
  cJSON *tools = cJSON_GetObjectItem(h_result(r), "tools");
  cJSON *props = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(tools, 0),
                                                         "inputSchema"), "properties");
  cJSON *tb = cJSON_GetObjectItem(props, "token_budget");
  ck_assert_int_eq((int)cJSON_GetObjectItem(tb, "minimum")->valuedouble, 512);
  ck_assert_int_eq((int)cJSON_GetObjectItem(tb, "maximum")->valuedouble, 8000);
  ck_assert_int_eq((int)cJSON_GetObjectItem(tb, "default")->valuedouble, 2000);
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(props, "cursor"));
  cJSON_Delete(r);
  const char *bad[] = {"\"token_budget\":100", "\"token_budget\":8001",
                       "\"token_budget\":\"big\"", "\"token_budget\":1000.5"};
  for (int i = 0; i < 4; i++) {
    r = call_tool(h, "listing", bad[i]);
    ck_assert(h_is_error(r));
    cJSON *obj = check(r, 2000);
    const char *m = cJSON_GetObjectItem(obj, "message")->valuestring;
    ck_assert_msg(strstr(m, "token_budget"), "%s", m);
    if (i < 2)
      ck_assert_msg(strstr(m, "512") && strstr(m, "8000"), "range not named: %s", m);
    cJSON_Delete(obj);
    cJSON_Delete(r);
  }
  /* default budget applies when absent */
  r = call_tool(h, "listing", "");
  cJSON *obj = check(r, 2000);
  size_t t = 0;
  pmcp_tokens_count(h_text0(r), strlen(h_text0(r)), &t);
  ck_assert_uint_gt(t, 1500);
  cJSON_Delete(obj);
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

static char *first_cursor(harness *h, const char *tool, const char *members)
{
  cJSON *r = call_tool(h, tool, members);
  cJSON *obj = check(r, 512);
  char *c = strdup(cJSON_GetObjectItem(obj, "next_cursor")->valuestring);
  cJSON_Delete(obj);
  cJSON_Delete(r);
  return c;
}

static void expect_restart(harness *h, const char *tool, const char *members,
                           const char *reason)
{
  cJSON *r = call_tool(h, tool, members);
  ck_assert(h_is_error(r));
  cJSON *obj = check(r, 512);
  ck_assert_str_eq(cJSON_GetObjectItem(obj, "reason")->valuestring, reason);
  ck_assert(strstr(cJSON_GetObjectItem(obj, "message")->valuestring,
                   "again without `cursor`"));
  ck_assert_ptr_null(cJSON_GetObjectItem(obj, "entries"));
  cJSON_Delete(obj);
  cJSON_Delete(r);
}

START_TEST(restart_errors)
{
  harness *h = setup(NULL, 0);
  char *c = first_cursor(h, "listing", "\"token_budget\":512,\"prefix\":\"a\"");
  char args[1024];
  snprintf(args, sizeof args, "\"token_budget\":512,\"prefix\":\"b\",\"cursor\":\"%s\"", c);
  expect_restart(h, "listing", args, "changed_arguments");
  snprintf(args, sizeof args, "\"token_budget\":512,\"prefix\":\"a\",\"cursor\":\"%s\"", c);
  expect_restart(h, "listing2", args, "foreign_tool");
  snprintf(args, sizeof args, "\"token_budget\":512,\"prefix\":\"a\",\"cursor\":\"%.20s\"", c);
  expect_restart(h, "listing", args, "truncated");
  expect_restart(h, "listing", "\"token_budget\":512,\"cursor\":\"hello world\"", "reencoded");
  expect_restart(h, "listing", "\"token_budget\":512,\"cursor\":\"\"", "malformed");
  expect_restart(h, "listing", "\"token_budget\":512,\"cursor\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"",
                 "unsupported_version");
  /* the same arguments in another order continue normally */
  snprintf(args, sizeof args, "\"cursor\":\"%s\",\"prefix\":\"a\",\"token_budget\":900", c);
  cJSON *r = call_tool(h, "listing", args);
  ck_assert(!h_is_error(r));
  cJSON_Delete(check(r, 900));
  cJSON_Delete(r);
  free(c);
  h_free(h);
}
END_TEST

START_TEST(shared_key_across_servers)
{
  unsigned char key[32];
  ck_assert_int_eq(pmcp_cursor_key_generate(key, sizeof key), 0);
  harness *a = setup(key, sizeof key);
  harness *b = setup(key, sizeof key);
  harness *c = setup(NULL, 0);
  char *cur = first_cursor(a, "listing", "\"token_budget\":512");
  char args[1024];
  snprintf(args, sizeof args, "\"token_budget\":512,\"cursor\":\"%s\"", cur);
  cJSON *r = call_tool(b, "listing", args);
  ck_assert(!h_is_error(r));
  cJSON_Delete(check(r, 512));
  cJSON_Delete(r);
  expect_restart(c, "listing", args, "forged");
  ck_assert_int_eq(pmcp_server_set_cursor_key(c->srv, key, 8), PMCP_EINVAL);
  /* the public codec agrees with the pages */
  pmcp_buf st = PMCP_BUF_INIT;
  pmcp_cursor_status why;
  ck_assert_int_eq(pmcp_cursor_decode(b->srv, "listing", "{\"token_budget\":7}", 42,
                                      cur, strlen(cur), &st, &why), 0);
  ck_assert_int_eq(why, PMCP_CURSOR_OK);
  ck_assert_uint_eq(st.len, 1 + sizeof(uint32_t)); /* page tag + position */
  ck_assert_int_eq(pmcp_cursor_decode(b->srv, "listing", "{}", 43, cur, strlen(cur),
                                      &st, &why), PMCP_ECURSOR);
  ck_assert_int_eq(why, PMCP_CURSOR_STALE);
  pmcp_buf mine = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp_cursor_encode(a->srv, "t", "{\"x\":1}", 1, "pos", 3, &mine), 0);
  ck_assert_int_eq(pmcp_cursor_decode(b->srv, "t", "{\"x\":1.0}", 1, mine.ptr, mine.len,
                                      &st, &why), 0);
  ck_assert_mem_eq(st.ptr, "pos", 3);
  pmcp_buf_dispose(&mine);
  pmcp_buf_dispose(&st);
  free(cur);
  h_free(a);
  h_free(b);
  h_free(c);
}
END_TEST

START_TEST(engine_enforces_the_contract)
{
  harness *h = setup(NULL, 0);
  cJSON *r = call_tool(h, "overflow", "\"token_budget\":600");
  ck_assert(h_is_error(r));
  cJSON *obj = check(r, 600);
  ck_assert_str_eq(cJSON_GetObjectItem(obj, "error")->valuestring, "budget_exceeded");
  ck_assert(strstr(cJSON_GetObjectItem(obj, "message")->valuestring, "bug in the tool"));
  cJSON_Delete(obj);
  cJSON_Delete(r);

  r = call_tool(h, "plain_error", "\"token_budget\":512");
  ck_assert(h_is_error(r));
  obj = check(r, 512);
  ck_assert_str_eq(cJSON_GetObjectItem(obj, "message")->valuestring, "no such run: run:nope");
  cJSON_Delete(obj);
  cJSON_Delete(r);

  r = call_tool(h, "two_items", "");
  ck_assert(h_is_error(r));
  obj = check(r, 2000);
  ck_assert_str_eq(cJSON_GetObjectItem(obj, "error")->valuestring, "tool_result_shape");
  cJSON_Delete(obj);
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("budget-e2e");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, pages_with_changing_budgets);
  tcase_add_test(tc, budget_range_and_schema);
  tcase_add_test(tc, restart_errors);
  tcase_add_test(tc, shared_key_across_servers);
  tcase_add_test(tc, engine_enforces_the_contract);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
