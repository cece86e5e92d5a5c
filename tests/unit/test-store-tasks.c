/* SPDX-License-Identifier: MIT */
/* Durable tasks (probemcp/tasks.h over pmcp_store_task_store()): two
 * servers on one store act as two replicas (a task made on one is read,
 * answered and cancelled on the other), a server made afresh on the store
 * is a restart, a runner whose lease runs out (its process gone) leaves a
 * failed task rather than a working one for ever, tasks are their owner's
 * and their tenant's only, a final status never changes, expired records
 * are swept. Run on SQLite and (PMCP_TEST_STORE=pg) PostgreSQL. */
#include <stdatomic.h>
#include <time.h>

#include "engine-harness.h"
#include "store-test-util.h"

/* The engine's renewer, stopped as if the process had died. */
void pmcp__tasks_renewer_stop(pmcp_server *srv);

#define META_CAPS(caps)                                                              \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","           \
  "\"io.modelcontextprotocol/clientCapabilities\":" caps "}"
#define META META_CAPS("{\"elicitation\":{},\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}")

static atomic_int slow_release, slow_saw_cancel, slow_running;

static void sleep_ms(int ms)
{
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int echo(pmcp_call *call, void *ud)
{
  (void)ud;
  const char *w = NULL;
  if (pmcp_arg_string(call, "w", &w, NULL) || !w)
    w = "-";
  return pmcp_result_text(call, w, strlen(w));
}

static int two_inputs(pmcp_call *call, void *ud)
{
  (void)ud;
  pmcp_buf a = {0}, b = {0};
  int ra = pmcp_call_input(call, "a", "elicitation/create", "{}", 1000, &a);
  int rb = pmcp_call_input(call, "b", "elicitation/create", "{}", 1000, &b);
  int rc = ra ? ra : rb;
  if (!rc) {
    char line[300];
    snprintf(line, sizeof line, "%s|%s", a.ptr, b.ptr);
    rc = pmcp_result_text(call, line, strlen(line));
  }
  pmcp_buf_dispose(&a);
  pmcp_buf_dispose(&b);
  return rc;
}

/* Runs until released or cancelled (at most 10 s). */
static int slow(pmcp_call *call, void *ud)
{
  (void)ud;
  atomic_store(&slow_running, 1);
  for (int i = 0; i < 1000 && !atomic_load(&slow_release); i++) {
    if (pmcp_call_cancelled(call)) {
      atomic_store(&slow_saw_cancel, 1);
      return PMCP_ECANCELLED;
    }
    sleep_ms(10);
  }
  return pmcp_result_text(call, "slow done", 9);
}

/* The store's reads, failing on demand (a store that cannot be reached). */
static int (*real_get)(void *, const char *, pmcp_task_record *);
static atomic_int get_fails;

static int flaky_get(void *ud, const char *id, pmcp_task_record *out)
{
  if (atomic_load(&get_fails))
    return PMCP_ESTORE;
  return real_get(ud, id, out);
}

/* The store's writes, failing on demand (a store busy past its wait). */
static int (*real_update)(void *, const pmcp_task_record *);
static atomic_int update_fails;

static int flaky_update(void *ud, const pmcp_task_record *rec)
{
  if (atomic_load(&update_fails))
    return PMCP_ESTORE;
  return real_update(ud, rec);
}

/* The caller's name is the text its session user data points at. */
static int owner_of(void *ud, const void *session_ud, char *out, size_t size)
{
  (void)ud;
  snprintf(out, size, "%s", session_ud ? (const char *)session_ud : "");
  return 0;
}

/* A server ("replica") on the store at st_path, with the store's cursor
 * key, tasks in its tasks table and a lease of @p lease_ms. */
static harness *replica(long long lease_ms)
{
  harness *h = h_new(NULL);
  static const pmcp_arg_spec w[] = {{.name = "w", .type = PMCP_T_STRING, .description = "w"}};
  static const struct {
    const char *name;
    pmcp_tool_fn fn;
    unsigned flags;
  } tools[] = {{"job", echo, PMCP_TOOL_TASK},
               {"inputs", two_inputs, PMCP_TOOL_TASK},
               {"slow", slow, PMCP_TOOL_TASK | PMCP_TOOL_BLOCKING}};
  for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
    pmcp_tool_def t = PMCP_TOOL_DEF_INIT;
    t.name = tools[i].name;
    t.description = "t";
    t.handler = tools[i].fn;
    t.flags = tools[i].flags;
    t.args = w;
    t.n_args = 1;
    ck_assert_int_eq(pmcp_server_add_tool(h->srv, &t), 0);
  }
  pmcp_store *s = NULL;
  ck_assert_int_eq(pmcp_store_open(&s, st_path, PMCP_STORE_READONLY), 0);
  pmcp_buf key = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp_store_secret(s, "cursor_key", &key), 0);
  ck_assert_int_eq(pmcp_server_set_cursor_key(h->srv, key.ptr, key.len), 0);
  pmcp_buf_dispose(&key);
  pmcp_store_free(s);
  pmcp_task_store ts;
  char why[300];
  int rc = pmcp_store_task_store(st_path, NULL, &ts, why, sizeof why);
  ck_assert_msg(rc == 0, "task store: %d %s", rc, why);
  ts.owner = owner_of;
  ts.lease_ms = lease_ms;
  real_get = ts.get;
  ts.get = flaky_get;
  real_update = ts.update;
  ts.update = flaky_update;
  ck_assert_int_eq(pmcp_server_set_task_store(h->srv, &ts), 0);
  /* Callers: "alice" (session "a") and "bob" (session "b"). */
  static char alice[] = "alice", bob[] = "bob";
  ck_assert_int_eq(pmcp_server_session_open(h->srv, "a", PMCP_SESSION_STATELESS, alice), 0);
  ck_assert_int_eq(pmcp_server_session_open(h->srv, "b", PMCP_SESSION_STATELESS, bob), 0);
  return h;
}

static cJSON *rpc(harness *h, const char *session, const char *json)
{
  h_send(h, session, json);
  for (;;) {
    h_msg *m = h_next(h);
    if (m->kind == PMCP_OUT_RESPONSE) {
      cJSON *r = cJSON_Parse(m->data);
      ck_assert_ptr_nonnull(r);
      h_msg_free(m);
      return r;
    }
    h_msg_free(m);
  }
}

static const char *str(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static char *start(harness *h, const char *tool, const char *args)
{
  char msg[1024];
  snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"%s\",\"arguments\":%s," META "}}", tool, args);
  cJSON *r = rpc(h, "a", msg);
  cJSON *res = h_result(r);
  ck_assert_msg(str(res, "resultType") && !strcmp(str(res, "resultType"), "task"),
                "not a task: %s", cJSON_PrintUnformatted(r));
  char *id = strdup(str(res, "taskId"));
  cJSON_Delete(r);
  return id;
}

static cJSON *task_req(harness *h, const char *session, const char *method, const char *id,
                       const char *extra)
{
  char msg[4096];
  snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"%s\",\"params\":"
           "{\"taskId\":\"%s\"%s," META "}}", method, id, extra ? extra : "");
  return rpc(h, session, msg);
}

/* tasks/get until the status is not @p while (5 s at most). */
static cJSON *get_until(harness *h, const char *id, const char *while_status)
{
  for (int i = 0; i < 500; i++) {
    cJSON *r = task_req(h, "a", "tasks/get", id, NULL);
    const char *st = str(h_result(r), "status");
    if (!st || strcmp(st, while_status) != 0)
      return r;
    cJSON_Delete(r);
    sleep_ms(10);
  }
  ck_abort_msg("task %s stayed %s", id, while_status);
  return NULL;
}

static const char *text0(const cJSON *r)
{
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(h_result(r), "result"), "content");
  return str(cJSON_GetArrayItem(c, 0), "text");
}

/* Whether the store itself (no server between) holds task @p id with
 * status @p status (NULL: any). */
static int stored_as(const pmcp_task_store *ts, const char *id, const char *status)
{
  pmcp_task_record rec;
  memset(&rec, 0, sizeof rec);
  int yes = ts->get(ts->ud, id, &rec) == 0 && rec.status &&
            (!status || !strcmp(rec.status, status));
  pmcp_task_record_clear(&rec);
  return yes;
}

static void task_store_open(pmcp_task_store *ts)
{
  char why[300];
  int rc = pmcp_store_task_store(st_path, NULL, ts, why, sizeof why);
  ck_assert_msg(rc == 0, "task store: %d %s", rc, why);
}

static void task_store_close(pmcp_task_store *ts)
{
  if (ts->release)
    ts->release(ts->ud);
}

/* The start of every replica case: a fresh store, replicas A and B on it
 * (lease @p lease_ms), the handlers' flags and the store's failures
 * reset, and alice's task of @p tool made on A, in the store before its
 * id came back. A "slow" call runs on A before this returns (5 s at
 * most) and the store says working. @return the task id. */
static char *task_on_a(const char *tool, const char *args, long long lease_ms, harness **a,
                       harness **b)
{
  pmcp_store *s = st_open_new(NULL);
  pmcp_store_free(s);
  atomic_store(&slow_release, 0);
  atomic_store(&slow_saw_cancel, 0);
  atomic_store(&slow_running, 0);
  atomic_store(&get_fails, 0);
  atomic_store(&update_fails, 0);
  *a = replica(lease_ms);
  *b = replica(lease_ms);
  char *id = start(*a, tool, args);
  int slow_call = !strcmp(tool, "slow");
  for (int i = 0; i < 500 && slow_call && !atomic_load(&slow_running); i++)
    sleep_ms(10);
  ck_assert_msg(!slow_call || atomic_load(&slow_running), "the slow call did not start");
  pmcp_task_store ts;
  task_store_open(&ts);
  int stored = stored_as(&ts, id, slow_call ? "working" : NULL);
  task_store_close(&ts);
  ck_assert_msg(stored, "task %s is not in the store%s", id, slow_call ? " as working" : "");
  return id;
}

/* The end of every replica case. */
static void replicas_done(char *id, harness *a, harness *b)
{
  free(id);
  h_free(a);
  h_free(b);
  st_cleanup();
}

START_TEST(replicas_and_restart)
{
  harness *a, *b;
  char *id = task_on_a("job", "{\"w\":\"made on A\"}", 0, &a, &b);
  /* B reads what A made and ran. */
  cJSON *r = get_until(b, id, "working");
  ck_assert_str_eq(str(h_result(r), "status"), "completed");
  ck_assert_str_eq(text0(r), "made on A");
  cJSON_Delete(r);
  /* Another caller, on either replica, does not see it. */
  r = task_req(b, "b", "tasks/get", id, NULL);
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);
  /* A restart: a new server on the store. */
  h_free(a);
  a = replica(0);
  r = task_req(a, "a", "tasks/get", id, NULL);
  ck_assert_str_eq(str(h_result(r), "status"), "completed");
  ck_assert_str_eq(text0(r), "made on A");
  cJSON_Delete(r);
  /* A store that cannot be read is not an unknown task: retry. */
  atomic_store(&get_fails, 1);
  r = task_req(a, "a", "tasks/get", id, NULL);
  atomic_store(&get_fails, 0);
  ck_assert_int_eq(h_error_code(r), -32603);
  ck_assert_ptr_nonnull(strstr(h_error_message(r), "task store could not be read"));
  cJSON_Delete(r);
  /* A forged id is refused before any lookup. */
  id[strlen(id) / 2] = id[strlen(id) / 2] == 'A' ? 'B' : 'A';
  r = task_req(a, "a", "tasks/get", id, NULL);
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);
  replicas_done(id, a, b);
}
END_TEST

START_TEST(input_across_replicas)
{
  harness *a, *b;
  char *id = task_on_a("inputs", "{}", 0, &a, &b);
  cJSON *r = get_until(b, id, "working");
  ck_assert_str_eq(str(h_result(r), "status"), "input_required");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(h_result(r),
                                                                       "inputRequests")), 2);
  cJSON_Delete(r);
  /* One answer on B, the other on A: the call runs with both. */
  r = task_req(b, "a", "tasks/update", id,
               ",\"inputResponses\":{\"a\":{\"action\":\"accept\",\"content\":{\"x\":1}}}");
  ck_assert_int_eq(h_error_code(r), 0);
  cJSON_Delete(r);
  r = task_req(a, "a", "tasks/get", id, NULL);
  ck_assert_str_eq(str(h_result(r), "status"), "input_required");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(h_result(r),
                                                                       "inputRequests")), 1);
  cJSON_Delete(r);
  r = task_req(a, "a", "tasks/update", id,
               ",\"inputResponses\":{\"b\":{\"action\":\"accept\",\"content\":{\"y\":2}}}");
  cJSON_Delete(r);
  r = get_until(b, id, "working");
  ck_assert_str_eq(str(h_result(r), "status"), "completed");
  ck_assert_str_eq(text0(r), "{\"action\":\"accept\",\"content\":{\"x\":1}}|"
                             "{\"action\":\"accept\",\"content\":{\"y\":2}}");
  cJSON_Delete(r);
  replicas_done(id, a, b);
}
END_TEST

START_TEST(cancel_on_another_replica)
{
  harness *a, *b;
  char *id = task_on_a("slow", "{}", 300, &a, &b);
  cJSON *r = task_req(b, "a", "tasks/get", id, NULL);
  ck_assert_str_eq(str(h_result(r), "status"), "working");
  cJSON_Delete(r);
  r = task_req(b, "a", "tasks/cancel", id, NULL);
  ck_assert_int_eq(h_error_code(r), 0);
  cJSON_Delete(r);
  /* A, which runs it, says cancelled at once (the store is the truth)... */
  r = task_req(a, "a", "tasks/get", id, NULL);
  ck_assert_str_eq(str(h_result(r), "status"), "cancelled");
  cJSON_Delete(r);
  /* ...and its renewer finds the record final and stops the call there. */
  for (int i = 0; i < 300 && !atomic_load(&slow_saw_cancel); i++)
    sleep_ms(10);
  ck_assert(atomic_load(&slow_saw_cancel));
  r = task_req(a, "a", "tasks/get", id, NULL);
  ck_assert_str_eq(str(h_result(r), "status"), "cancelled");
  cJSON_Delete(r);
  replicas_done(id, a, b);
}
END_TEST

/* Opens subscriptions/listen for task @p id on @p h as @p session (its
 * request id "L" + session) and takes the acknowledgement. */
static void listen_on(harness *h, const char *session, const char *id)
{
  char msg[2048];
  snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":\"L%s\",\"method\":"
           "\"subscriptions/listen\",\"params\":{\"notifications\":{\"taskIds\":[\"%s\"]},"
           META "}}", session, id);
  h_send(h, session, msg);
  h_msg *m = h_next(h);
  ck_assert_ptr_nonnull(strstr(m->data, "notifications/subscriptions/acknowledged"));
  h_msg_free(m);
}

/* A task runs on A; its caller listens on B: B reads it from the store
 * and says each change once, to that caller only (bob, on B too, hears
 * nothing of alice's task). */
START_TEST(notifications_across_replicas)
{
  harness *a, *b;
  char *id = task_on_a("slow", "{}", 0, &a, &b);
  listen_on(b, "a", id);
  listen_on(b, "b", id);
  /* working since before the listener came: nothing to say yet */
  h_msg *m = h_next_wait(b, 1500);
  ck_assert_msg(m == NULL, "said early: %s", m ? m->data : "");
  atomic_store(&slow_release, 1);
  int completed = 0, other = 0;
  /* the watch interval is 1 s: two and a half of them see one change */
  for (int i = 0; i < 25; i++) {
    while ((m = h_next_wait(b, 100)) != NULL) {
      if (strstr(m->data, "notifications/tasks")) {
        if (strstr(m->data, "\"io.modelcontextprotocol/subscriptionId\":\"La\"") &&
            strstr(m->data, "\"completed\"") && strstr(m->data, "slow done") &&
            !strcmp(m->session, "a"))
          completed++;
        else
          other++;
      }
      h_msg_free(m);
    }
  }
  ck_assert_int_eq(completed, 1);
  ck_assert_int_eq(other, 0);
  replicas_done(id, a, b);
}
END_TEST

START_TEST(runner_gone)
{
  harness *a, *b;
  char *id = task_on_a("slow", "{}", 300, &a, &b);
  /* Kept working while A renews its lease... */
  sleep_ms(700);
  cJSON *r = task_req(b, "a", "tasks/get", id, NULL);
  ck_assert_str_eq(str(h_result(r), "status"), "working");
  cJSON_Delete(r);
  /* ...and failed once it stops (the process gone), with a reason. */
  pmcp__tasks_renewer_stop(a->srv);
  sleep_ms(700);
  r = task_req(b, "a", "tasks/get", id, NULL);
  cJSON *res = h_result(r);
  ck_assert_str_eq(str(res, "status"), "failed");
  const char *msg = str(cJSON_GetObjectItemCaseSensitive(res, "error"), "message");
  ck_assert_ptr_nonnull(msg);
  ck_assert_ptr_nonnull(strstr(msg, "lease ran out"));
  cJSON_Delete(r);
  /* The call ending late changes nothing: failed is final. */
  atomic_store(&slow_release, 1);
  sleep_ms(200);
  r = task_req(b, "a", "tasks/get", id, NULL);
  ck_assert_str_eq(str(h_result(r), "status"), "failed");
  cJSON_Delete(r);
  replicas_done(id, a, b);
}
END_TEST

/* A call that ends while the store cannot be written keeps its result:
 * its replica answers completed (never "failed, runner gone" once the
 * lease is past), and writes it once the store takes writes again, for
 * every replica to read. */
START_TEST(result_kept_when_store_write_fails)
{
  harness *a, *b;
  char *id = task_on_a("slow", "{}", 600, &a, &b);
  atomic_store(&update_fails, 1);
  atomic_store(&slow_release, 1);
  cJSON *r = get_until(a, id, "working");
  ck_assert_str_eq(str(h_result(r), "status"), "completed");
  cJSON_Delete(r);
  /* Past the lease, the store still saying "working": A answers for it. */
  sleep_ms(1500);
  r = task_req(a, "a", "tasks/get", id, NULL);
  ck_assert_str_eq(str(h_result(r), "status"), "completed");
  ck_assert_str_eq(text0(r), "slow done");
  cJSON_Delete(r);
  /* The store back: A's renewer writes the end (seen in the store
   * itself, so B's read cannot come first and find the lease past),
   * and B reads it. */
  atomic_store(&update_fails, 0);
  pmcp_task_store ts;
  task_store_open(&ts);
  int stored = 0;
  for (int i = 0; i < 3000 && !(stored = stored_as(&ts, id, "completed")); i++)
    sleep_ms(10);
  task_store_close(&ts);
  ck_assert_msg(stored, "the end was not written within 30 s of the store's return");
  r = task_req(b, "a", "tasks/get", id, NULL);
  ck_assert_str_eq(str(h_result(r), "status"), "completed");
  ck_assert_str_eq(text0(r), "slow done");
  cJSON_Delete(r);
  replicas_done(id, a, b);
}
END_TEST

static pmcp_task_record rec_of(const char *id, const char *status, long long now)
{
  pmcp_task_record r;
  memset(&r, 0, sizeof r);
  r.id = (char *)id;
  r.owner = (char *)"o";
  r.status = (char *)status;
  r.request = (char *)"{\"name\":\"job\",\"arguments\":{},\"clientCapabilities\":{}}";
  r.answers = (char *)"{}";
  r.created_ms = r.updated_ms = now;
  r.expires_ms = now + 60000;
  return r;
}

/* The store's callbacks themselves: a record round-trips; a final status
 * never changes; another tenant sees nothing; expired records go. */
START_TEST(store_callbacks)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  pmcp_tenant other;
  ST_OK(s, pmcp_store_tenant(s, "other", PMCP_STORE_CREATE, &other));
  pmcp_store_free(s);
  pmcp_task_store ts, to;
  ck_assert_int_eq(pmcp_store_task_store(st_path, NULL, &ts, NULL, 0), 0);
  ck_assert_int_eq(pmcp_store_task_store(st_path, "other", &to, NULL, 0), 0);
  long long now = (long long)time(NULL) * 1000;
  pmcp_task_record w = rec_of("t1", "input_required", now);
  w.input_requests = (char *)"{\"q\":{\"method\":\"elicitation/create\"}}";
  ck_assert_int_eq(ts.create(ts.ud, &w), 0);
  ck_assert_int_eq(ts.create(ts.ud, &w), PMCP_EEXIST);
  pmcp_task_record got;
  ck_assert_int_eq(ts.get(ts.ud, "t1", &got), 0);
  ck_assert_str_eq(got.status, "input_required");
  ck_assert_str_eq(got.owner, "o");
  ck_assert_str_eq(got.input_requests, w.input_requests);
  ck_assert_ptr_null(got.result);
  ck_assert(got.created_ms == now && got.expires_ms == now + 60000);
  pmcp_task_record_clear(&got);
  ck_assert_int_eq(to.get(to.ud, "t1", &got), PMCP_ENOTFOUND);
  ck_assert_int_eq(to.update(to.ud, &w), PMCP_ENOTFOUND);
  /* Completed: final. */
  pmcp_task_record c = rec_of("t1", "completed", now + 5);
  c.result = (char *)"{\"content\":[]}";
  ck_assert_int_eq(ts.update(ts.ud, &c), 0);
  pmcp_task_record x = rec_of("t1", "cancelled", now + 9);
  ck_assert_int_eq(ts.update(ts.ud, &x), PMCP_ESTALE);
  ck_assert_int_eq(ts.get(ts.ud, "t1", &got), 0);
  ck_assert_str_eq(got.status, "completed");
  ck_assert_str_eq(got.result, "{\"content\":[]}");
  ck_assert_ptr_null(got.input_requests);
  ck_assert(got.updated_ms == now + 5);
  pmcp_task_record_clear(&got);
  ck_assert_int_eq(ts.update(ts.ud, &(pmcp_task_record){.id = (char *)"nope",
                                                         .status = (char *)"failed"}),
                   PMCP_ENOTFOUND);
  /* Swept after expiry, whatever the tenant. */
  pmcp_task_record old = rec_of("t2", "completed", now - 10000);
  old.expires_ms = now - 1;
  ck_assert_int_eq(to.create(to.ud, &old), 0);
  ck_assert_int_eq(ts.sweep(ts.ud, now), 0);
  ck_assert_int_eq(to.get(to.ud, "t2", &got), PMCP_ENOTFOUND);
  ck_assert_int_eq(ts.get(ts.ud, "t1", &got), 0);
  pmcp_task_record_clear(&got);
  ts.release(ts.ud);
  to.release(to.ud);
  st_cleanup();
}
END_TEST

int main(void)
{
  Suite *su = suite_create("store-tasks");
  TCase *tc = tcase_create("tasks");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, store_callbacks);
  tcase_add_test(tc, replicas_and_restart);
  tcase_add_test(tc, input_across_replicas);
  tcase_add_test(tc, cancel_on_another_replica);
  tcase_add_test(tc, notifications_across_replicas);
  tcase_add_test(tc, runner_gone);
  tcase_add_test(tc, result_kept_when_store_write_fails);
  suite_add_tcase(su, tc);
  return st_run_suite(su);
}
