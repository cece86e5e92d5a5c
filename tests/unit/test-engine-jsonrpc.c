/* SPDX-License-Identifier: MIT */
/* JSON-RPC framing and the lifecycle: parse errors, invalid requests, id
 * echo, batches per protocol version, initialize and version negotiation,
 * requests before initialize, sessions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine-harness.h"

/* Sends @p in and checks the raw reply text equals @p want exactly. */
static void expect_raw(harness *h, const char *in, const char *want)
{
  h_send(h, NULL, in);
  h_msg *m = h_next(h);
  ck_assert_msg(strcmp(m->data, want) == 0, "for %s\n got  %s\n want %s", in, m->data,
                want);
  h_msg_free(m);
}

static void expect_code(harness *h, const char *in, int code)
{
  cJSON *r = h_call(h, NULL, in);
  ck_assert_msg(h_error_code(r) == code, "for %s: code %d, want %d", in,
                h_error_code(r), code);
  cJSON_Delete(r);
}

START_TEST(parse_and_invalid)
{
  harness *h = h_new(NULL);
  h_init(h, NULL, "2025-11-25");
  expect_code(h, "{", -32700);
  expect_code(h, "", -32700);
  expect_code(h, "{\"jsonrpc\":\"2.0\"} x", -32700);
  expect_code(h, "\xff\xfe", -32700);
  expect_code(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"s\":\"\xc3\x28\"}", -32700);
  expect_code(h, "42", -32600);
  expect_code(h, "\"ping\"", -32600);
  expect_code(h, "null", -32600);
  expect_code(h, "{\"id\":1,\"method\":\"ping\"}", -32600);
  expect_code(h, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", -32600);
  expect_code(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", -32600);
  expect_code(h, "{\"jsonrpc\":\"2.0\",\"id\":1}", -32600);
  expect_code(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":\"x\"}", -32600);
  expect_code(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":[1]}", -32602);
  expect_code(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope/nope\"}", -32601);
  /* ids of the wrong type are invalid requests answered with id null */
  const char *bad_ids[] = {"null", "1.5", "1e3", "true", "{}", "[1]", "-0.0"};
  for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++) {
    char buf[128];
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}", bad_ids[i]);
    h_send(h, NULL, buf);
    h_msg *m = h_next(h);
    ck_assert_msg(strstr(m->data, "\"id\":null") && strstr(m->data, "-32600"), "%s -> %s",
                  buf, m->data);
    h_msg_free(m);
  }
  /* envelope members given twice are refused, whichever they are; a
   * duplicated id is not echoed (which one would be?) */
  const char *dups[] = {
    "{\"jsonrpc\":\"2.0\",\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"method\":\"tools/list\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{},\"params\":{}}",
    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
    "{\"name\":\"x\"},\"params\":{\"name\":\"y\"}}",
  };
  for (size_t i = 0; i < sizeof dups / sizeof dups[0]; i++) {
    h_send(h, NULL, dups[i]);
    h_msg *m = h_next(h);
    ck_assert_msg(strstr(m->data, "\"id\":3") && strstr(m->data, "-32600") &&
                  strstr(m->data, "more than once"), "%s -> %s", dups[i], m->data);
    h_msg_free(m);
  }
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":3,\"id\":4,\"method\":\"ping\"}");
  h_msg *dm = h_next(h);
  ck_assert_msg(strstr(dm->data, "\"id\":null") && strstr(dm->data, "member \\\"id\\\" is given"),
                "%s", dm->data);
  h_msg_free(dm);
  /* a notification with a member twice is answered (id null), not run */
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"method\":\"y\"}");
  dm = h_next(h);
  ck_assert_msg(strstr(dm->data, "\"id\":null") && strstr(dm->data, "-32600"), "%s", dm->data);
  h_msg_free(dm);
  /* unknown members may repeat (they are not read) */
  expect_raw(h, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"x\":1,\"x\":2}",
             "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
  /* a response with a member twice is dropped, not routed */
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":98,\"result\":{},\"result\":{}}");
  /* notifications and responses get no answer */
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}");
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}");
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":1,\"message\":\"x\"}}");
  ck_assert_uint_eq(h_pending(h), 0);
  h_free(h);
}
END_TEST

START_TEST(ids_echoed_exactly)
{
  harness *h = h_new(NULL);
  h_init(h, NULL, "2025-11-25");
  expect_raw(h, "{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890123,\"method\":\"ping\"}",
             "{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890123,\"result\":{}}");
  expect_raw(h, "{\"method\":\"ping\",\"id\" : -7 ,\"jsonrpc\":\"2.0\"}",
             "{\"jsonrpc\":\"2.0\",\"id\":-7,\"result\":{}}");
  expect_raw(h, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}",
             "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}");
  expect_raw(h, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\\u00e9\",\"method\":\"ping\"}",
             "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\xc3\xa9\",\"result\":{}}");
  expect_raw(h, "{\"jsonrpc\":\"2.0\",\"id\":\"\",\"method\":\"ping\"}",
             "{\"jsonrpc\":\"2.0\",\"id\":\"\",\"result\":{}}");
  /* an escaped key still names the id */
  expect_raw(h, "{\"jsonrpc\":\"2.0\",\"\\u0069d\":5,\"method\":\"ping\"}",
             "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
  h_free(h);
}
END_TEST

START_TEST(batches)
{
  harness *h = h_new(NULL);
  h_init(h, "old", "2025-03-26");
  h_init(h, "new", "2025-06-18");
  h_send(h, "old", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
                   " {\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"},"
                   " 7, {\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"nope\"}]");
  h_msg *m = h_next(h);
  ck_assert_str_eq(m->session, "old");
  cJSON *arr = cJSON_Parse(m->data);
  ck_assert(cJSON_IsArray(arr));
  ck_assert_int_eq(cJSON_GetArraySize(arr), 3);
  ck_assert_str_eq(m->related, "[1,\"b\"]");
  ck_assert_int_eq(m->final, 1);
  int codes = 0;
  cJSON *it;
  cJSON_ArrayForEach(it, arr)
    codes += h_error_code(it);
  ck_assert_int_eq(codes, -32600 + -32601);
  cJSON_Delete(arr);
  h_msg_free(m);
  /* only notifications: nothing comes back */
  h_send(h, "old", "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}]");
  ck_assert_uint_eq(h_pending(h), 0);
  /* other versions refuse batches */
  h_send(h, "new", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
  m = h_next(h);
  cJSON *r = cJSON_Parse(m->data);
  ck_assert_int_eq(h_error_code(r), -32600);
  ck_assert_ptr_nonnull(strstr(h_error_message(r), "2025-03-26"));
  cJSON_Delete(r);
  h_msg_free(m);
  /* empty batch */
  h_send(h, "old", "[]");
  m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "-32600"));
  h_msg_free(m);
  /* a batch before initialize */
  h_send(h, "fresh", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}]");
  m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "-32600"));
  h_msg_free(m);
  h_free(h);
}
END_TEST

static void with_info(pmcp_server_options *o)
{
  o->title = "Test Server";
  o->server_version = "9.9.9";
  o->instructions = "Use the tools.";
}

START_TEST(initialize_negotiation)
{
  harness *h = h_new(with_info);
  struct {
    const char *ask, *get;
  } cases[] = {
    {"2025-11-25", "2025-11-25"}, {"2025-06-18", "2025-06-18"},
    {"2025-03-26", "2025-03-26"}, {"2024-11-05", "2024-11-05"},
    {"1999-01-01", "2025-11-25"}, {"2030-01-01", "2025-11-25"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char sess[16], buf[256];
    snprintf(sess, sizeof sess, "s%zu", i);
    ck_assert(!pmcp_server_session_ready(h->srv, sess));
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
             "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{}}}", cases[i].ask);
    cJSON *r = h_call(h, sess, buf);
    cJSON *res = h_result(r);
    ck_assert_str_eq(cJSON_GetObjectItem(res, "protocolVersion")->valuestring, cases[i].get);
    cJSON *info = cJSON_GetObjectItem(res, "serverInfo");
    ck_assert_str_eq(cJSON_GetObjectItem(info, "name")->valuestring, "test-server");
    ck_assert_str_eq(cJSON_GetObjectItem(info, "title")->valuestring, "Test Server");
    ck_assert_str_eq(cJSON_GetObjectItem(info, "version")->valuestring, "9.9.9");
    ck_assert_str_eq(cJSON_GetObjectItem(res, "instructions")->valuestring, "Use the tools.");
    cJSON *caps = cJSON_GetObjectItem(res, "capabilities");
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(caps, "logging"));
    ck_assert_ptr_null(cJSON_GetObjectItem(caps, "tools")); /* none registered */
    cJSON_Delete(r);
    ck_assert(pmcp_server_session_ready(h->srv, sess));
    char v[16];
    ck_assert_int_eq(pmcp_server_session_protocol(h->srv, sess, v, sizeof v), 0);
    ck_assert_str_eq(v, cases[i].get);
    ck_assert_int_eq(pmcp_server_session_protocol(h->srv, sess, v, 4), PMCP_EINVAL);
  }
  /* a second initialize on the same session is refused */
  expect_code(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                 "\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}}}", 0);
  expect_code(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                 "\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}}}", -32600);
  h_free(h);
}
END_TEST

START_TEST(before_initialize)
{
  harness *h = h_new(NULL);
  expect_raw(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
  cJSON *r = h_call(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
  ck_assert_int_eq(h_error_code(r), -32600);
  ck_assert_ptr_nonnull(strstr(h_error_message(r), "initialize"));
  cJSON_Delete(r);
  expect_code(h, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\",\"params\":{}}",
              -32602);
  expect_code(h, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\",\"params\":"
                 "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":3}}", -32602);
  /* a stateless session needs no initialize */
  ck_assert_int_eq(pmcp_server_session_open(h->srv, "sl", PMCP_SESSION_STATELESS, NULL), 0);
  ck_assert_int_eq(pmcp_server_session_open(h->srv, "sl", 0, NULL), PMCP_EEXIST);
  r = h_call(h, "sl", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
  ck_assert_int_eq(h_error_code(r), 0);
  cJSON_Delete(r);
  ck_assert_int_eq(pmcp_server_session_close(h->srv, "sl"), 0);
  ck_assert_int_eq(pmcp_server_session_close(h->srv, "sl"), PMCP_ENOTFOUND);
  /* a closed session id opens fresh, uninitialized */
  r = h_call(h, "sl", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
  ck_assert_int_eq(h_error_code(r), -32600);
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

START_TEST(limits_and_misuse)
{
  ck_assert_int_eq(pmcp_server_handle(NULL, NULL, "{}", 2), PMCP_EMISUSE);
  pmcp_server *s = NULL;
  pmcp_server_options o = PMCP_SERVER_OPTIONS_INIT;
  ck_assert_int_eq(pmcp_server_new(&s, &o), PMCP_EINVAL); /* no name, no sink */
  ck_assert_ptr_null(s);
  ck_assert_int_eq(pmcp_server_options_init(&o, 99), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_server_options_init(&o, PMCP_SERVER_OPTIONS_VERSION), 0);
  pmcp_server_free(NULL);
  harness *h = h_new(NULL);
  h_free(h);
}
END_TEST

static void small_max(pmcp_server_options *o)
{
  o->max_message = 16;
}

START_TEST(max_message)
{
  harness *h = h_new(small_max);
  const char *big = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
  ck_assert_int_eq(pmcp_server_handle(h->srv, NULL, big, strlen(big)), PMCP_ETOOBIG);
  ck_assert_ptr_nonnull(strstr(pmcp_server_errmsg(h->srv), "exceeds"));
  h_free(h);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("engine-jsonrpc");
  TCase *tc = tcase_create("jsonrpc");
  tcase_add_test(tc, parse_and_invalid);
  tcase_add_test(tc, ids_echoed_exactly);
  tcase_add_test(tc, batches);
  tcase_add_test(tc, initialize_negotiation);
  tcase_add_test(tc, before_initialize);
  tcase_add_test(tc, limits_and_misuse);
  tcase_add_test(tc, max_message);
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
