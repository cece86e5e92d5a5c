/* SPDX-License-Identifier: MIT */
/* The two protocol eras on one server: classification, admission of a
 * 2026-07-28 request (_meta, version, header claims, removed methods),
 * result decoration (resultType, serverInfo, cache hints), server/discover,
 * resource-not-found codes per era, log messages only on request, and
 * multi-round-trip input through pmcp_call_input (sealed requestState:
 * round trips, tampering, binding, capabilities). */
#define _GNU_SOURCE /* strndup */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine-harness.h"

#define META_CAPS(caps)                                                              \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","           \
  "\"io.modelcontextprotocol/clientCapabilities\":" caps "}"
#define META META_CAPS("{\"elicitation\":{}}")

/* Sends @p json and returns the parsed reply; *status gets its HTTP status. */
static cJSON *call_status(harness *h, const char *json, int *status)
{
  h_send(h, NULL, json);
  h_msg *m = h_next(h);
  while (m->kind != PMCP_OUT_RESPONSE) { /* notifications of the call */
    h_msg_free(m);
    m = h_next(h);
  }
  if (status)
    *status = m->http_status;
  cJSON *r = cJSON_Parse(m->data);
  ck_assert_ptr_nonnull(r);
  h_msg_free(m);
  return r;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
  if (b)
    v = cJSON_GetObjectItemCaseSensitive(v, b);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int ask_name(pmcp_call *call, void *ud)
{
  (void)ud;
  pmcp_buf out = {0};
  int rc = pmcp_call_input(call, "user_name", "elicitation/create",
                           "{\"message\":\"Name?\",\"requestedSchema\":{\"type\":\"object\"}}",
                           1000, &out);
  if (rc)
    return rc;
  cJSON *a = cJSON_Parse(out.ptr);
  pmcp_buf_dispose(&out);
  char line[200];
  snprintf(line, sizeof line, "Hello, %s", str_at(a, "content", "name"));
  cJSON_Delete(a);
  return pmcp_result_text(call, line, strlen(line));
}

/* Two rounds: step1, then step2 (asked only once step1 is answered). */
static int two_steps(pmcp_call *call, void *ud)
{
  (void)ud;
  pmcp_buf a = {0}, b = {0};
  int rc = pmcp_call_input(call, "step1", "elicitation/create", "{}", 1000, &a);
  if (!rc)
    rc = pmcp_call_input(call, "step2", "elicitation/create", "{}", 1000, &b);
  if (!rc) {
    char line[300];
    snprintf(line, sizeof line, "%s|%s", a.ptr, b.ptr);
    rc = pmcp_result_text(call, line, strlen(line));
  }
  pmcp_buf_dispose(&a);
  pmcp_buf_dispose(&b);
  return rc;
}

static int logs(pmcp_call *call, void *ud)
{
  (void)ud;
  pmcp_call_log(call, PMCP_LOG_INFO, "t", "\"line\"");
  return pmcp_result_text(call, "ok", 2);
}

static int read_known(pmcp_call *call, void *ud)
{
  (void)ud;
  return pmcp_result_resource_text(call, pmcp_call_uri(call), "text/plain", "x");
}

/* A result whose strings hold quotes, brackets and backslashes: the
 * decoration skips them without being fooled. */
static const char tricky_json[] =
    "{\"s\":\"a\\\"}],{\\\\\",\"n\":[1,{\"k\":\"]\\\\\"},[[]],-2.5e3],\"t\":true,"
    "\"_meta\":\"not a member of the result\"}";

static int tricky(pmcp_call *call, void *ud)
{
  (void)ud;
  int rc = pmcp_result_text(call, "x\\\"}", 4);
  return rc ? rc : pmcp_result_structured(call, tricky_json, sizeof tricky_json - 1);
}

static harness *server(void)
{
  harness *h = h_new(NULL);
  static const pmcp_arg_spec who[] = {
      {"who", PMCP_T_STRING, 0, "anyone", 0, 0, 0, 0, NULL, NULL}};
  pmcp_tool_def t = PMCP_TOOL_DEF_INIT;
  t.name = "ask";
  t.description = "asks a name";
  t.handler = ask_name;
  t.args = who;
  t.n_args = 1;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &t), 0);
  t = (pmcp_tool_def)PMCP_TOOL_DEF_INIT;
  t.name = "ask2";
  t.description = "asks a name too";
  t.handler = ask_name;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &t), 0);
  t.name = "steps";
  t.handler = two_steps;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &t), 0);
  t.name = "logs";
  t.handler = logs;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &t), 0);
  t.name = "tricky";
  t.handler = tricky;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &t), 0);
  pmcp_resource_def r = PMCP_RESOURCE_DEF_INIT;
  r.uri = "test://known";
  r.name = "known";
  r.read = read_known;
  ck_assert_int_eq(pmcp_server_add_resource(h->srv, &r), 0);
  return h;
}

/* pmcp_message_classify into @p i (its strings from the last call freed). */
static void classify(const char *msg, pmcp_msg_info *i)
{
  pmcp_msg_info_dispose(i);
  pmcp_msg_info fresh = PMCP_MSG_INFO_INIT;
  *i = fresh;
  ck_assert_int_eq(pmcp_message_classify(msg, strlen(msg), i), 0);
}

START_TEST(classify_and_versions)
{
  pmcp_msg_info i = PMCP_MSG_INFO_INIT;
  const char *modern = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{" META "}}";
  classify(modern, &i);
  ck_assert_int_eq(i.kind, PMCP_MSG_REQUEST);
  ck_assert_int_eq(i.era, PMCP_ERA_MODERN);
  ck_assert_str_eq(i.protocol_version, "2026-07-28");
  ck_assert_str_eq(i.method, "tools/list");
  const char *disc = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}";
  classify(disc, &i);
  ck_assert_int_eq(i.era, PMCP_ERA_MODERN); /* modern-only method, even bare */
  ck_assert_str_eq(i.protocol_version, "");
  const char *init = "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"initialize\",\"params\":{}}";
  classify(init, &i);
  ck_assert_int_eq(i.era, PMCP_ERA_LEGACY);
  ck_assert_int_eq(i.initialize, 1);
  const char *batch = "[{\"jsonrpc\":\"2.0\",\"method\":\"n\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]";
  classify(batch, &i);
  ck_assert_int_eq(i.batch, 1);
  ck_assert_uint_eq(i.n_items, 2);
  ck_assert_uint_eq(i.n_requests, 1);
  ck_assert_int_eq(i.kind, PMCP_MSG_REQUEST);
  ck_assert_str_eq(i.method, "ping");
  const char *note = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}";
  classify(note, &i);
  ck_assert_int_eq(i.kind, PMCP_MSG_NOTIFICATION);
  ck_assert_int_eq(i.era, PMCP_ERA_NONE);
  const char *resp = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}";
  classify(resp, &i);
  ck_assert_int_eq(i.kind, PMCP_MSG_RESPONSE);
  const char *bad[] = {"{", "[]", "[1]", "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"x\"}", "7"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    classify(bad[k], &i);
    ck_assert_msg(i.kind == PMCP_MSG_INVALID, "%s", bad[k]);
  }
  ck_assert_int_eq(pmcp_message_classify(NULL, 0, NULL), PMCP_EINVAL);
  /* The strings come whole and decoded (release 0.1 cut the method at 63
   * bytes); a layout the library does not know is refused. */
  char longm[400];
  char method[201];
  memset(method, 'm', 200);
  method[200] = '\0';
  snprintf(longm, sizeof longm, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":"
           "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-\\u00307-28\"}}}",
           method);
  classify(longm, &i);
  ck_assert_str_eq(i.method, method);
  ck_assert_str_eq(i.protocol_version, "2026-07-28");
  pmcp_msg_info_dispose(&i);
  ck_assert_str_eq(i.method, "");
  ck_assert_str_eq(i.protocol_version, "");
  pmcp_msg_info_dispose(NULL);
  for (unsigned v = 0; v < 4; v++) {
    pmcp_msg_info o = PMCP_MSG_INFO_INIT;
    o.version = v == 3 ? PMCP_MSG_INFO_VERSION + 1 : v;
    ck_assert_int_eq(pmcp_message_classify(longm, strlen(longm), &o),
                     v == PMCP_MSG_INFO_VERSION ? 0 : PMCP_EINVAL);
    pmcp_msg_info_dispose(&o);
  }

  const char *const *v = pmcp_protocol_versions();
  ck_assert_str_eq(v[0], "2026-07-28");
  size_t n = 0;
  while (v[n])
    n++;
  ck_assert_uint_eq(n, 5);
  ck_assert_int_eq(pmcp_protocol_version_era(" 2026-07-28 ", 12), PMCP_ERA_MODERN);
  ck_assert_int_eq(pmcp_protocol_version_era("2025-11-25", 10), PMCP_ERA_LEGACY);
  ck_assert_int_eq(pmcp_protocol_version_era("2024-11-05", 10), PMCP_ERA_LEGACY);
  ck_assert_int_eq(pmcp_protocol_version_era("2026-07-2", 9), PMCP_ERA_NONE);
  ck_assert_int_eq(pmcp_protocol_version_era("v999.0.0", 8), PMCP_ERA_NONE);
  ck_assert_int_eq(pmcp_protocol_batch_allowed("2025-03-26"), 1);
  ck_assert_int_eq(pmcp_protocol_batch_allowed("2025-06-18"), 0);
  ck_assert_int_eq(pmcp_protocol_batch_allowed("2026-07-28"), 0);
  ck_assert_int_eq(pmcp_protocol_batch_allowed(NULL), 0);
  /* The session header rule: from 2025-06-18 on a header names the
   * negotiated version; an older one, like none, claims nothing. */
  const char *all[] = {"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
  for (size_t i = 0; i < 5; i++)
    for (size_t j = 1; j < 5; j++) {
      int want = i == j || i >= 3;
      ck_assert_msg(pmcp_protocol_header_fits(all[j], all[i], strlen(all[i])) == want,
                    "header %s in a %s session", all[i], all[j]);
    }
  ck_assert_int_eq(pmcp_protocol_header_fits("2025-11-25", NULL, 0), 1);
  ck_assert_int_eq(pmcp_protocol_header_fits("2025-11-25", " 2025-11-25\t", 12), 1);
  ck_assert_int_eq(pmcp_protocol_header_fits("2025-11-25", "2025-11-255", 10), 1);
  ck_assert_int_eq(pmcp_protocol_header_fits("2025-11-25", "2025-11-255", 11), 0);
  ck_assert_int_eq(pmcp_protocol_header_fits("2025-11-25", "2000-01-01", 10), 0);
  ck_assert_int_eq(pmcp_protocol_header_fits("2025-11-25", "2025-03-2", 9), 0);
  ck_assert_int_eq(pmcp_protocol_header_fits("2025-11-25", "", 0), 0);
}
END_TEST

/* pmcp_msg_info as release 0.1 declared it in server.h. */
typedef struct msg_info_0_1 {
  pmcp_msg_kind kind;
  int batch;
  size_t n_items;
  size_t n_requests;
  int initialize;
  pmcp_era era;
  char version[32];
  char method[64];
} msg_info_0_1;

/* A program linked against release 0.1 calls pmcp_message_classify@PMCP_0.1
 * with that layout and gets what it got then: the method cut at 63
 * bytes. (The shared library's own symbol, looked up by version.) */
START_TEST(classify_of_release_0_1)
{
  const char *path = getenv("PMCP_TEST_LIBPROBEMCP");
  ck_assert_msg(path && *path, "PMCP_TEST_LIBPROBEMCP names the shared library");
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(lib, "%s", dlerror());
  int (*old)(const char *, size_t, msg_info_0_1 *) = NULL;
  *(void **)&old = dlvsym(lib, "pmcp_message_classify", "PMCP_0.1");
  ck_assert_msg(old != NULL, "pmcp_message_classify@PMCP_0.1: %s", dlerror());
  void *cur = dlvsym(lib, "pmcp_message_classify", "PMCP_0.2");
  ck_assert_msg(cur && cur != *(void **)&old, "a default version of its own");
  char method[101], msg[400];
  memset(method, 'm', 100);
  method[100] = '\0';
  snprintf(msg, sizeof msg, "[{\"jsonrpc\":\"2.0\",\"method\":\"n\"},{\"jsonrpc\":\"2.0\",\"id\":1,"
           "\"method\":\"%s\",\"params\":{" META "}}]", method);
  msg_info_0_1 i;
  memset(&i, 0x5a, sizeof i); /* whatever the caller's stack held */
  ck_assert_int_eq(old(msg, strlen(msg), &i), 0);
  ck_assert_int_eq(i.kind, PMCP_MSG_REQUEST);
  ck_assert_int_eq(i.batch, 1);
  ck_assert_uint_eq(i.n_items, 2);
  ck_assert_uint_eq(i.n_requests, 1);
  ck_assert_int_eq(i.initialize, 0);
  ck_assert_int_eq(i.era, PMCP_ERA_MODERN);
  ck_assert_str_eq(i.version, "2026-07-28");
  ck_assert_uint_eq(strlen(i.method), 63);
  ck_assert_int_eq(strncmp(i.method, method, 63), 0);
  const char *bare = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}";
  ck_assert_int_eq(old(bare, strlen(bare), &i), 0);
  ck_assert_int_eq(i.initialize, 1);
  ck_assert_str_eq(i.version, "");
  ck_assert_str_eq(i.method, "initialize");
  ck_assert_int_eq(old("{", 1, &i), 0);
  ck_assert_int_eq(i.kind, PMCP_MSG_INVALID);
  ck_assert_int_eq(old(NULL, 0, NULL), PMCP_EINVAL);
  dlclose(lib);
}
END_TEST

/* pmcp_message_read: per item the kind, the bytes, whether it blocks, and
 * the id exactly as the engine then writes it in related_id (checked by
 * handing each item's bytes to the server and reading its answer). */
START_TEST(read_items)
{
  harness *h = server();
  const char *body =
      " [ {\"jsonrpc\":\"2.0\",\"id\":12345678901234567890,\"method\":\"ping\"} ,\n"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"},"
      "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u00e9\\/b\",\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}},"
      "{\"jsonrpc\":\"2.0\",\"id\":-0,\"method\":\"tools/list\"} ] ";
  pmcp_message *m = NULL;
  ck_assert_int_eq(pmcp_message_read(h->srv, body, strlen(body), &m), 0);
  const pmcp_msg_info *i = pmcp_message_info(m);
  ck_assert_int_eq(i->batch, 1);
  ck_assert_uint_eq(i->n_items, 4);
  ck_assert_uint_eq(i->n_requests, 3);
  ck_assert_int_eq(i->kind, PMCP_MSG_REQUEST);
  ck_assert_uint_eq(i->version, PMCP_MSG_INFO_VERSION);
  ck_assert_str_eq(i->method, "ping");
  ck_assert_str_eq(i->protocol_version, "");
  ck_assert_int_eq(pmcp_message_has_nul(m), 0);
  ck_assert_ptr_null(pmcp_message_item(m, 4));
  const pmcp_msg_item *n = pmcp_message_item(m, 1);
  ck_assert_int_eq(n->kind, PMCP_MSG_NOTIFICATION);
  ck_assert_ptr_null(n->id);
  ck_assert_int_eq(pmcp_message_item(m, 2)->runs_handler, 1);
  ck_assert_int_eq(pmcp_message_item(m, 0)->runs_handler, 0);
  /* with the first request's own session, the requests answer one by one
   * (no batch in this session's version): related_id = item id */
  const char *init = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                     "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                     "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
  h_send(h, "s", init);
  h_msg_free(h_next(h));
  h_send(h, "s", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  for (size_t k = 0; k < i->n_items; k++) {
    const pmcp_msg_item *it = pmcp_message_item(m, k);
    ck_assert(it->text[0] == '{' && it->text[it->len - 1] == '}');
    char *copy = strndup(it->text, it->len);
    h_send(h, "s", copy);
    free(copy);
    if (it->kind != PMCP_MSG_REQUEST)
      continue;
    h_msg *r = h_next(h);
    ck_assert_ptr_nonnull(r->related);
    ck_assert_str_eq(r->related, it->id);
    h_msg_free(r);
  }
  ck_assert_str_eq(pmcp_message_item(m, 0)->id, "12345678901234567890");
  ck_assert_str_eq(pmcp_message_item(m, 2)->id, "\"a\u00e9/b\"");
  pmcp_message_free(m);
  /* one message: the whole body; modern era and version from its _meta */
  const char *one = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"params\":{" META "}}";
  ck_assert_int_eq(pmcp_message_read(h->srv, one, strlen(one), &m), 0);
  ck_assert_int_eq(pmcp_message_info(m)->era, PMCP_ERA_MODERN);
  ck_assert_ptr_eq(pmcp_message_item(m, 0)->text, one);
  ck_assert_uint_eq(pmcp_message_item(m, 0)->len, strlen(one));
  ck_assert_str_eq(pmcp_message_item(m, 0)->id, "7");
  pmcp_message_free(m);
  /* ids the engine cannot answer under; not JSON-RPC; a NUL; unreadable */
  const char *inval[] = {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
                         "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", "[1]", "7",
                         "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}"};
  for (size_t k = 0; k < sizeof inval / sizeof inval[0]; k++) {
    ck_assert_int_eq(pmcp_message_read(h->srv, inval[k], strlen(inval[k]), &m), 0);
    ck_assert_msg(pmcp_message_info(m)->kind == PMCP_MSG_INVALID, "%s", inval[k]);
    pmcp_message_free(m);
  }
  const char *nul = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\\u0000\"}";
  ck_assert_int_eq(pmcp_message_read(h->srv, nul, strlen(nul), &m), 0);
  ck_assert_int_eq(pmcp_message_has_nul(m), 1);
  pmcp_message_free(m);
  const char *unreadable[] = {"{", "{} {}", "\xff{}", ""};
  for (size_t k = 0; k < sizeof unreadable / sizeof unreadable[0]; k++) {
    ck_assert_int_eq(pmcp_message_read(h->srv, unreadable[k], strlen(unreadable[k]), &m),
                     PMCP_EPROTO);
    ck_assert_ptr_null(m);
  }
  ck_assert_int_eq(pmcp_message_read(h->srv, "{}", 2, NULL), PMCP_EINVAL);
  pmcp_message_free(NULL);
  h_free(h);
}
END_TEST

/* pmcp_server_handle_item against the truth: the same items handed as
 * text to pmcp_server_handle_http on a twin server give the same messages,
 * byte for byte, in both eras (with and without header claims), for
 * batches, notifications, invalid items and a \u0000. */
START_TEST(handle_item_as_text)
{
  harness *a = server(), *b = server();
  const char *init = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                     "{\"protocolVersion\":\"2025-03-26\",\"capabilities\":{},"
                     "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
  const char *bodies[] = {
      init,
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
      "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"},7,"
      "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"tools/call\",\"params\":{\"name\":\"tricky\"}},"
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}]",
      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}",
      "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"p\\u0000\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"logs\"," META "}}",
      "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"tricky\"," META "}}",
      "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"server/discover\",\"params\":{" META "}}",
      "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\",\"params\":{" META "}}",
      "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"initialize\",\"params\":{" META "}}",
  };
  const char *method_ok = "tools/call", *method_bad = "tools/list";
  for (size_t k = 0; k < sizeof bodies / sizeof bodies[0]; k++) {
    for (int claimed = 0; claimed < 3; claimed++) {
      if (claimed && k < 5)
        break; /* claims are read of modern requests only */
      pmcp_http_claims cl = {0};
      cl.protocol_version = "2026-07-28";
      cl.method = claimed == 1 ? method_ok : method_bad;
      cl.name = "tricky";
      const pmcp_http_claims *c = claimed ? &cl : NULL;
      pmcp_message *ma = NULL, *mb = NULL;
      ck_assert_int_eq(pmcp_message_read(a->srv, bodies[k], strlen(bodies[k]), &ma), 0);
      ck_assert_int_eq(pmcp_message_read(b->srv, bodies[k], strlen(bodies[k]), &mb), 0);
      size_t n = pmcp_message_info(ma)->n_items;
      for (size_t i = 0; i < n; i++) {
        const pmcp_msg_item *it = pmcp_message_item(ma, i);
        char *copy = strndup(it->text, it->len);
        ck_assert_int_eq(pmcp_server_handle_http(a->srv, "s", copy, it->len, c), 0);
        free(copy);
        ck_assert_int_eq(pmcp_server_handle_item(b->srv, "s", mb, i, c), 0);
      }
      ck_assert_int_eq(pmcp_server_handle_item(b->srv, "s", mb, n, c), PMCP_EINVAL);
      ck_assert_int_eq(pmcp_server_handle_item(b->srv, "s", NULL, 0, c), PMCP_EINVAL);
      pmcp_message_free(ma);
      pmcp_message_free(mb); /* before the answers: a running call keeps its part */
      pmcp_server_drain(a->srv);
      pmcp_server_drain(b->srv);
      ck_assert_uint_eq(h_pending(a), h_pending(b));
      while (h_pending(a)) {
        h_msg *x = h_next(a), *y = h_next(b);
        ck_assert_int_eq(x->kind, y->kind);
        ck_assert_int_eq(x->final, y->final);
        ck_assert_int_eq(x->http_status, y->http_status);
        ck_assert_int_eq(!x->related, !y->related);
        if (x->related)
          ck_assert_str_eq(x->related, y->related);
        ck_assert_int_eq(!x->data, !y->data);
        if (x->data)
          ck_assert_str_eq(x->data, y->data);
        h_msg_free(x);
        h_msg_free(y);
      }
    }
  }
  h_free(a);
  h_free(b);
}
END_TEST

START_TEST(admission)
{
  harness *h = server();
  struct { const char *params; int code, status; } cases[] = {
      {"{}", -32602, 400},
      {"{\"_meta\":{\"io.modelcontextprotocol/clientCapabilities\":{}}}", -32602, 400},
      {"{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}", -32602, 400},
      {"{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
       "\"io.modelcontextprotocol/clientCapabilities\":[]}}", -32602, 400},
      {"{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":7,"
       "\"io.modelcontextprotocol/clientCapabilities\":{}}}", -32602, 400},
      {"{" META_CAPS("{}") "}", 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[512];
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"server/discover\","
             "\"params\":%s}", i + 10, cases[i].params);
    int status;
    cJSON *r = call_status(h, buf, &status);
    ck_assert_msg(h_error_code(r) == cases[i].code, "%s: %d", cases[i].params, h_error_code(r));
    ck_assert_int_eq(status, cases[i].status);
    ck_assert_int_eq(cJSON_GetObjectItem(r, "id")->valueint, (int)i + 10);
    cJSON_Delete(r);
  }
  /* An unsupported version lists the supported one and echoes the request. */
  int status;
  cJSON *r = call_status(h, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":"
                            "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2025-11-25\","
                            "\"io.modelcontextprotocol/clientCapabilities\":{}}}}", &status);
  ck_assert_int_eq(h_error_code(r), -32022);
  ck_assert_int_eq(status, 400);
  cJSON *data = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "data");
  ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(data, "supported"), 0)->valuestring,
                   "2026-07-28");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(data, "supported")), 1);
  ck_assert_str_eq(str_at(data, "requested", NULL), "2025-11-25");
  cJSON_Delete(r);
  /* Removed methods and unknown ones: -32601 with 404. */
  const char *gone[] = {"initialize", "ping", "logging/setLevel", "resources/subscribe",
                        "resources/unsubscribe", "unknown/method", "prompts/list"};
  for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
    char buf[512];
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":{" META "}}",
             gone[i]);
    r = call_status(h, buf, &status);
    ck_assert_msg(h_error_code(r) == -32601 && status == 404, "%s: %d %d", gone[i],
                  h_error_code(r), status);
    cJSON_Delete(r);
  }
  /* A bad log level is invalid params. */
  r = call_status(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
                     "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                     "\"io.modelcontextprotocol/clientCapabilities\":{},"
                     "\"io.modelcontextprotocol/logLevel\":\"loud\"}}}", &status);
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

static cJSON *handle_claims(harness *h, const char *json, const char *ver, const char *method,
                            const char *name, int *status)
{
  pmcp_http_claims c = {ver, method, name, 0, NULL, NULL};
  ck_assert_int_eq(pmcp_server_handle_http(h->srv, NULL, json, strlen(json), &c), 0);
  h_msg *m = h_next(h);
  *status = m->http_status;
  cJSON *r = cJSON_Parse(m->data);
  h_msg_free(m);
  return r;
}

START_TEST(header_claims)
{
  harness *h = server();
  const char *call = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                     "{\"name\":\"logs\",\"arguments\":{}," META "}}";
  struct { const char *ver, *method, *name; int code; } cases[] = {
      {"2026-07-28", "tools/call", "logs", 0},
      {" 2026-07-28\t", "tools/call", " logs ", 0},
      {"2025-11-25", "tools/call", "logs", -32020},
      {"2026-07-28", "tools/list", "logs", -32020},
      {"2026-07-28", "Tools/Call", "logs", -32020},
      {"2026-07-28", NULL, "logs", -32020},
      {"2026-07-28", "tools/call", "Logs", -32020},
      {"2026-07-28", "tools/call", NULL, -32020},
      {NULL, "tools/call", "logs", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int status;
    cJSON *r = handle_claims(h, call, cases[i].ver, cases[i].method, cases[i].name, &status);
    ck_assert_msg(h_error_code(r) == cases[i].code, "case %zu: %d", i, h_error_code(r));
    ck_assert_int_eq(status, cases[i].code ? 400 : 0);
    cJSON_Delete(r);
  }
  /* Both versions unknown and equal: the version error, not a mismatch. */
  const char *v999 = "{\"jsonrpc\":\"2.0\",\"id\":301,\"method\":\"server/discover\",\"params\":"
                     "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"v999.0.0\","
                     "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
  int status;
  cJSON *r = handle_claims(h, v999, "v999.0.0", "server/discover", NULL, &status);
  ck_assert_int_eq(h_error_code(r), -32022);
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

START_TEST(param_headers)
{
  harness *h = server();
  pmcp_tool_def t = PMCP_TOOL_DEF_INIT;
  t.name = "hp";
  t.description = "header params";
  t.input_schema_json = "{\"type\":\"object\",\"properties\":{"
                        "\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},"
                        "\"n\":{\"type\":\"integer\",\"x-mcp-header\":\"N\"},"
                        "\"free\":{\"type\":\"string\"}}}";
  t.handler = logs;
  ck_assert_int_eq(pmcp_server_add_tool(h->srv, &t), 0);
  struct {
    const char *args;
    size_t n;
    const char *names[2], *values[2];
    int code;
  } cases[] = {
      {"{\"region\":\"eu\",\"n\":3}", 2, {"region", "n"}, {"eu", "3"}, 0},
      {"{\"region\":\"eu\",\"n\":3}", 2, {"REGION", "n"}, {" eu ", "3.0"}, 0},
      {"{\"region\":\"Hello\"}", 1, {"region"}, {"=?base64?SGVsbG8=?="}, 0},
      {"{\"region\":\"SGVsbG8=\"}", 1, {"region"}, {"SGVsbG8="}, 0}, /* literal */
      {"{\"region\":\"Hello\"}", 1, {"region"}, {"=?base64?SGVsbG8?="}, -32020},
      {"{\"region\":\"Hello\"}", 1, {"region"}, {"=?base64?SGVs!!!bG8=?="}, -32020},
      {"{\"region\":\"eu\"}", 0, {NULL}, {NULL}, -32020},          /* header missing */
      {"{}", 1, {"region"}, {"eu"}, -32020},                          /* extra header */
      {"{\"region\":\"eu\"}", 1, {"region"}, {"EU"}, -32020},        /* differs */
      {"{\"region\":\"eu\",\"n\":3}", 2, {"region", "n"}, {"eu", "4"}, -32020},
      {"{\"free\":\"x\"}", 0, {NULL}, {NULL}, 0},                   /* not annotated */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[1024];
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"hp\",\"arguments\":%s," META "}}", i, cases[i].args);
    pmcp_http_claims c = {"2026-07-28", "tools/call", "hp", cases[i].n, cases[i].names,
                          cases[i].values};
    ck_assert_int_eq(pmcp_server_handle_http(h->srv, NULL, buf, strlen(buf), &c), 0);
    h_msg *m = h_next(h);
    cJSON *r = cJSON_Parse(m->data);
    ck_assert_msg(h_error_code(r) == cases[i].code, "case %zu: %s", i, m->data);
    ck_assert_int_eq(m->http_status, cases[i].code ? 400 : 0);
    cJSON_Delete(r);
    h_msg_free(m);
  }
  h_free(h);
}
END_TEST

START_TEST(results_and_discover)
{
  harness *h = server();
  cJSON *r = call_status(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" META "}}", NULL);
  cJSON *res = h_result(r);
  ck_assert_str_eq(str_at(res, "resultType", NULL), "complete");
  ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(res, "supportedVersions"), 0)->valuestring,
                   "2026-07-28");
  cJSON *caps = cJSON_GetObjectItem(res, "capabilities");
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(caps, "tools"));
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(caps, "resources"));
  ck_assert_ptr_null(cJSON_GetObjectItem(caps, "prompts")); /* none registered */
  ck_assert_ptr_null(cJSON_GetObjectItem(caps, "logging"));
  ck_assert_ptr_null(cJSON_GetObjectItem(caps, "completions"));
  ck_assert_int_eq(cJSON_GetObjectItem(res, "ttlMs")->valueint, 0);
  ck_assert_str_eq(str_at(res, "cacheScope", NULL), "public");
  cJSON *info = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "_meta"),
                                    "io.modelcontextprotocol/serverInfo");
  ck_assert_ptr_nonnull(str_at(info, "name", NULL));
  ck_assert_ptr_nonnull(str_at(info, "version", NULL));
  cJSON_Delete(r);

  ck_assert_int_eq(pmcp_server_set_cache_hints(h->srv, 5000, 0), 0);
  r = call_status(h, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{" META "}}", NULL);
  res = h_result(r);
  ck_assert_int_eq(cJSON_GetObjectItem(res, "ttlMs")->valueint, 5000);
  ck_assert_str_eq(str_at(res, "cacheScope", NULL), "public");
  ck_assert_str_eq(str_at(res, "resultType", NULL), "complete");
  cJSON *tools = cJSON_GetObjectItem(res, "tools");
  const char *order[] = {"ask", "ask2", "steps", "logs", "tricky"}; /* registration order */
  ck_assert_int_eq(cJSON_GetArraySize(tools), 5);
  for (int i = 0; i < 5; i++)
    ck_assert_str_eq(str_at(cJSON_GetArrayItem(tools, i), "name", NULL), order[i]);
  cJSON_Delete(r);
  pmcp_server_set_cache_hints(h->srv, 10, 1);
  r = call_status(h, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":"
                     "{\"uri\":\"test://known\"," META "}}", NULL);
  res = h_result(r);
  ck_assert_str_eq(str_at(res, "cacheScope", NULL), "private");
  ck_assert_int_eq(cJSON_GetObjectItem(res, "ttlMs")->valueint, 10);
  cJSON_Delete(r);
  /* tools/call: resultType and serverInfo, no cache hints */
  r = call_status(h, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
                     "{\"name\":\"logs\"," META "}}", NULL);
  res = h_result(r);
  ck_assert_str_eq(str_at(res, "resultType", NULL), "complete");
  ck_assert_ptr_null(cJSON_GetObjectItem(res, "ttlMs"));
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "_meta"),
                                            "io.modelcontextprotocol/serverInfo"));
  ck_assert_str_eq(h_text0(r), "ok");
  cJSON_Delete(r);
  /* strings with quotes, brackets, backslashes: decorated, kept whole */
  r = call_status(h, "{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/call\",\"params\":"
                     "{\"name\":\"tricky\"," META "}}", NULL);
  res = h_result(r);
  ck_assert_str_eq(str_at(res, "resultType", NULL), "complete");
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "_meta"),
                                            "io.modelcontextprotocol/serverInfo"));
  ck_assert_str_eq(h_text0(r), "x\\\"}");
  cJSON *want = cJSON_Parse(tricky_json);
  ck_assert(cJSON_Compare(cJSON_GetObjectItem(res, "structuredContent"), want, 1));
  cJSON_Delete(want);
  cJSON_Delete(r);
  /* resource not found: -32602 here, -32002 in a legacy session */
  r = call_status(h, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":"
                     "{\"uri\":\"test://missing\"," META "}}", NULL);
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);
  h_init(h, NULL, "2025-11-25");
  r = call_status(h, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\",\"params\":"
                     "{\"uri\":\"test://missing\"}}", NULL);
  ck_assert_int_eq(h_error_code(r), -32002);
  cJSON_Delete(r);
  /* The same session still speaks 2025-11-25: no decoration, ping works. */
  r = call_status(h, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}", NULL);
  ck_assert_ptr_null(cJSON_GetObjectItem(h_result(r), "resultType"));
  ck_assert_ptr_null(cJSON_GetObjectItem(h_result(r), "ttlMs"));
  cJSON_Delete(r);
  r = call_status(h, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}", NULL);
  ck_assert_int_eq(h_error_code(r), 0);
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

START_TEST(log_only_on_request)
{
  harness *h = server();
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"logs\"," META "}}");
  h_msg *m = h_next(h);
  ck_assert_int_eq(m->kind, PMCP_OUT_RESPONSE); /* no log line first */
  h_msg_free(m);
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"logs\",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
                  "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{},"
                  "\"io.modelcontextprotocol/logLevel\":\"info\"}}}");
  m = h_next(h);
  ck_assert_int_eq(m->kind, PMCP_OUT_NOTIFICATION);
  ck_assert_ptr_nonnull(strstr(m->data, "notifications/message"));
  ck_assert_str_eq(m->related, "2");
  h_msg_free(m);
  m = h_next(h);
  ck_assert_int_eq(m->kind, PMCP_OUT_RESPONSE);
  h_msg_free(m);
  /* warning admits no info line */
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"logs\",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
                  "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{},"
                  "\"io.modelcontextprotocol/logLevel\":\"warning\"}}}");
  m = h_next(h);
  ck_assert_int_eq(m->kind, PMCP_OUT_RESPONSE);
  h_msg_free(m);
  h_free(h);
}
END_TEST

static char *round_trip(harness *h, const char *tool, const char *args, const char *extra,
                        cJSON **reply)
{
  char buf[8192];
  snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":"
           "{\"name\":\"%s\",\"arguments\":%s%s%s," META "}}", tool, args, extra[0] ? "," : "",
           extra);
  *reply = call_status(h, buf, NULL);
  const char *st = str_at(h_result(*reply), "requestState", NULL);
  return st ? strdup(st) : NULL;
}

START_TEST(input_required)
{
  harness *h = server();
  cJSON *r;
  /* Round 1: asks, with a sealed state. */
  char *st = round_trip(h, "ask", "{\"who\":\"a\"}", "", &r);
  cJSON *res = h_result(r);
  ck_assert_str_eq(str_at(res, "resultType", NULL), "input_required");
  ck_assert_ptr_null(cJSON_GetObjectItem(res, "ttlMs"));
  ck_assert_str_eq(str_at(cJSON_GetObjectItem(res, "inputRequests"), "user_name", "method"),
                   "elicitation/create");
  ck_assert_ptr_nonnull(st);
  cJSON_Delete(r);
  /* Round 2: answered; an extra response is ignored. */
  char extra[4096];
  snprintf(extra, sizeof extra, "\"inputResponses\":{\"user_name\":{\"action\":\"accept\","
           "\"content\":{\"name\":\"Ada\"}},\"other\":{\"x\":1}},\"requestState\":\"%s\"", st);
  free(round_trip(h, "ask", "{\"who\":\"a\"}", extra, &r));
  ck_assert_str_eq(str_at(h_result(r), "resultType", NULL), "complete");
  ck_assert_str_eq(h_text0(r), "Hello, Ada");
  cJSON_Delete(r);
  /* The same state for other arguments or another tool, or tampered: refused. */
  free(round_trip(h, "ask", "{\"who\":\"b\"}", extra, &r));
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);
  free(round_trip(h, "ask2", "{}", extra, &r));
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);
  size_t n = strlen(st);
  for (size_t k = 0; k < 3; k++) {
    char *bad = strdup(st);
    if (k == 0)
      bad[n / 2] = bad[n / 2] == 'A' ? 'B' : 'A';
    else if (k == 1)
      bad[n - 1] = '\0';
    snprintf(extra, sizeof extra, "\"inputResponses\":{\"user_name\":{\"content\":{}}},"
             "\"requestState\":\"%s%s\"", bad, k == 2 ? "-TAMPERED" : "");
    free(round_trip(h, "ask", "{\"who\":\"a\"}", extra, &r));
    ck_assert_msg(h_error_code(r) == -32602, "tamper %zu: %d", k, h_error_code(r));
    cJSON_Delete(r);
    free(bad);
  }
  /* A missing answer is asked for again. */
  snprintf(extra, sizeof extra, "\"inputResponses\":{\"nope\":{}},\"requestState\":\"%s\"", st);
  free(round_trip(h, "ask", "{\"who\":\"a\"}", extra, &r));
  ck_assert_str_eq(str_at(h_result(r), "resultType", NULL), "input_required");
  cJSON_Delete(r);
  free(st);
  /* Without the capability: never asked, -32021 naming it. */
  int status;
  r = call_status(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                     "{\"name\":\"ask2\"," META_CAPS("{\"sampling\":{}}") "}}", &status);
  ck_assert_int_eq(h_error_code(r), -32021);
  ck_assert_int_eq(status, 400);
  cJSON *rc = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "data"),
                                  "requiredCapabilities");
  ck_assert(cJSON_IsObject(cJSON_GetObjectItem(rc, "elicitation")));
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

START_TEST(multi_round)
{
  harness *h = server();
  cJSON *r;
  char *s1 = round_trip(h, "steps", "{}", "", &r);
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(cJSON_GetObjectItem(h_result(r), "inputRequests"), "step1"));
  cJSON_Delete(r);
  char extra[4096];
  snprintf(extra, sizeof extra, "\"inputResponses\":{\"step1\":{\"v\":1}},\"requestState\":\"%s\"", s1);
  char *s2 = round_trip(h, "steps", "{}", extra, &r);
  cJSON *ir = cJSON_GetObjectItem(h_result(r), "inputRequests");
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(ir, "step2"));
  ck_assert_ptr_null(cJSON_GetObjectItem(ir, "step1"));
  ck_assert_ptr_nonnull(s2);
  ck_assert_str_ne(s1, s2);
  cJSON_Delete(r);
  /* Round 3 sends only step2: step1 comes from the state. */
  snprintf(extra, sizeof extra, "\"inputResponses\":{\"step2\":{\"v\":2}},\"requestState\":\"%s\"", s2);
  free(round_trip(h, "steps", "{}", extra, &r));
  ck_assert_str_eq(h_text0(r), "{\"v\":1}|{\"v\":2}");
  cJSON_Delete(r);
  /* The round-1 state does not carry step1: round 3 with it asks again. */
  snprintf(extra, sizeof extra, "\"inputResponses\":{\"step2\":{\"v\":2}},\"requestState\":\"%s\"", s1);
  free(round_trip(h, "steps", "{}", extra, &r));
  ck_assert_str_eq(str_at(h_result(r), "resultType", NULL), "input_required");
  cJSON_Delete(r);
  free(s1);
  free(s2);
  h_free(h);
}
END_TEST

START_TEST(listen)
{
  harness *h = server();
  /* Asks for tools, prompts (none registered) and one resource. */
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":\"L\",\"method\":\"subscriptions/listen\",\"params\":"
                  "{\"notifications\":{\"toolsListChanged\":true,\"promptsListChanged\":true,"
                  "\"resourceSubscriptions\":[\"test://known\"]}," META "}}");
  h_msg *m = h_next(h);
  ck_assert_int_eq(m->kind, PMCP_OUT_NOTIFICATION);
  ck_assert_str_eq(m->related, "\"L\"");
  cJSON *j = cJSON_Parse(m->data);
  ck_assert_str_eq(str_at(j, "method", NULL), "notifications/subscriptions/acknowledged");
  cJSON *p = cJSON_GetObjectItem(j, "params");
  ck_assert_str_eq(str_at(p, "_meta", "io.modelcontextprotocol/subscriptionId"), "L");
  cJSON *honoured = cJSON_GetObjectItem(p, "notifications");
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(honoured, "toolsListChanged")));
  ck_assert_ptr_null(cJSON_GetObjectItem(honoured, "promptsListChanged"));
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(honoured, "resourceSubscriptions")), 1);
  cJSON_Delete(j);
  h_msg_free(m);
  /* Only what was asked for, tagged with the id. */
  ck_assert_int_eq(pmcp_server_notify_list_changed(h->srv, PMCP_LIST_PROMPTS), 0);
  ck_assert_int_eq(pmcp_server_notify_list_changed(h->srv, PMCP_LIST_RESOURCES), 0);
  ck_assert_int_eq(pmcp_server_notify_resource_updated(h->srv, "test://other"), 0);
  ck_assert_ptr_null(h_next_wait(h, 100));
  ck_assert_int_eq(pmcp_server_notify_list_changed(h->srv, PMCP_LIST_TOOLS), 0);
  m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "notifications/tools/list_changed"));
  ck_assert_ptr_nonnull(strstr(m->data, "\"io.modelcontextprotocol/subscriptionId\":\"L\""));
  ck_assert_str_eq(m->related, "\"L\"");
  h_msg_free(m);
  ck_assert_int_eq(pmcp_server_notify_resource_updated(h->srv, "test://known"), 0);
  m = h_next(h);
  j = cJSON_Parse(m->data);
  ck_assert_str_eq(str_at(j, "params", "uri"), "test://known");
  ck_assert_str_eq(str_at(cJSON_GetObjectItem(j, "params"), "_meta",
                          "io.modelcontextprotocol/subscriptionId"), "L");
  cJSON_Delete(j);
  h_msg_free(m);
  /* A bad filter is invalid params. */
  cJSON *r = call_status(h, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"subscriptions/listen\","
                            "\"params\":{" META "}}", NULL);
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);
  /* Cancelled: ends without an answer (its stream ends); no more
   * notifications. */
  pthread_mutex_lock(&h->mu);
  size_t ends = h->ends;
  pthread_mutex_unlock(&h->mu);
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                  "{\"requestId\":\"L\"}}");
  pthread_mutex_lock(&h->mu);
  ck_assert_uint_eq(h->ends, ends + 1);
  pthread_mutex_unlock(&h->mu);
  ck_assert_int_eq(pmcp_server_notify_list_changed(h->srv, PMCP_LIST_TOOLS), 0);
  ck_assert_ptr_null(h_next_wait(h, 100));
  /* Another one ends gracefully when the server goes away. */
  h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"subscriptions/listen\",\"params\":"
                  "{\"notifications\":{\"toolsListChanged\":true}," META "}}");
  h_msg_free(h_next(h));
  pmcp_server_free(h->srv);
  h->srv = NULL;
  m = h_next(h);
  j = cJSON_Parse(m->data);
  ck_assert_str_eq(str_at(h_result(j), "resultType", NULL), "complete");
  ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(h_result(j), "_meta"),
                                       "io.modelcontextprotocol/subscriptionId")->valueint, 7);
  cJSON_Delete(j);
  h_msg_free(m);
  h_free(h);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("engine-era");
  TCase *tc = tcase_create("era");
  tcase_add_test(tc, classify_and_versions);
  tcase_add_test(tc, classify_of_release_0_1);
  tcase_add_test(tc, read_items);
  tcase_add_test(tc, admission);
  tcase_add_test(tc, header_claims);
  tcase_add_test(tc, param_headers);
  tcase_add_test(tc, results_and_discover);
  tcase_add_test(tc, log_only_on_request);
  tcase_add_test(tc, input_required);
  tcase_add_test(tc, multi_round);
  tcase_add_test(tc, listen);
  tcase_add_test(tc, handle_item_as_text);
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
