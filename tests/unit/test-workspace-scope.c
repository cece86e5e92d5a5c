/* Workspace scoping (issue 7): one tenant with workspaces alpha and beta
 * (a project each, runs, notes, artifacts, series, datasets) and an
 * unfiled run in the default workspace.
 *  - store: a tenant narrowed by pmcp_store_scope() sees only its
 *    workspace's rows in lists, gets, searches and series reads; another
 *    workspace's rows are "not found" like missing ones;
 *  - tools: the research and tracking tools with a host scope hook act in
 *    the hook's workspace; `workspace` switches where the hook allows it
 *    and is refused where it does not, with one message for a workspace
 *    that does not exist and one the caller may not use; query_sql reads
 *    only the workspace's rows on both backends (SQLite: scoped TEMP
 *    views; PostgreSQL: views that keep the scope a statement proves with
 *    its token);
 *  - PostgreSQL only: query_sql's views show, view by view and field by
 *    field, the rows SQLite's show for the same lab in every scope; and
 *    the reader role, connected by itself, cannot widen its scope with
 *    set_config(), current_setting() or a token made for another scope.
 * Runs on SQLite and (PMCP_TEST_STORE=pg) PostgreSQL. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine-harness.h"
#include "store-test-util.h"
#include "util/buf.h"

static int64_t series_b;
static int64_t WS_BETA; /* beta's row id */

static void mk(pmcp_store *s, pmcp_tenant t, const char *kind, const char *id,
               const char *parent)
{
  pmcp_entity_spec e = PMCP_ENTITY_SPEC_INIT;
  e.id = id;
  e.name = id;
  e.parent = parent;
  ST_OK(s, pmcp_store_create(s, t, kind, &e, NULL));
}

static void run_with(pmcp_store *s, pmcp_tenant t, const char *id, const char *project,
                     const char *secret, int64_t *series)
{
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = id;
  r.name = secret;
  r.project = project;
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  char ref[64];
  snprintf(ref, sizeof ref, "run:%s", id);
  pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
  n.on = ref;
  n.title = secret;
  n.body = secret;
  ST_OK(s, pmcp_store_note(s, t, &n, NULL, NULL));
  pmcp_artifact_spec a = PMCP_ARTIFACT_SPEC_INIT;
  char name[64];
  snprintf(name, sizeof name, "%s-art", id);
  a.name = name;
  a.on = ref;
  a.content = secret;
  a.size = strlen(secret);
  a.description = secret;
  ST_OK(s, pmcp_store_artifact_add(s, t, &a, NULL, NULL));
  pmcp_series_spec sp = {"loss", NULL, 0, 0, 0};
  int64_t sid;
  ST_OK(s, pmcp_store_series(s, t, ref, &sp, &sid));
  pmcp_point pt[2] = {{1, 0, 1.5}, {2, 0, 0.5}};
  ST_OK(s, pmcp_store_log(s, t, sid, pt, 2));
  if (series)
    *series = sid;
}

/* Fills the lab; returns the read-only handle the tests read through. */
static pmcp_store *populate(pmcp_tenant *t)
{
  pmcp_store *s = st_open_new(t);
  mk(s, *t, "workspace", "alpha", NULL);
  mk(s, *t, "workspace", "beta", NULL);
  mk(s, *t, "project", "pa", "workspace:alpha");
  mk(s, *t, "project", "pb", "workspace:beta");
  run_with(s, *t, "ra", "pa", "alphasecret", NULL);
  pmcp_run_spec r2 = PMCP_RUN_SPEC_INIT;
  r2.id = "ra2";
  r2.project = "pa";
  ST_OK(s, pmcp_store_run_create(s, *t, &r2, NULL));
  run_with(s, *t, "rb", "pb", "betasecret", &series_b);
  run_with(s, *t, "ru", NULL, "unfiledsecret", NULL);
  const char *ds = "{\"name\":\"dsb\",\"project\":\"pb\",\"description\":\"betasecret\"}";
  ST_OK(s, pmcp_store_put(s, *t, "dataset", ds, strlen(ds), NULL));
  /* another lab with a workspace of the same name */
  pmcp_tenant other;
  ST_OK(s, pmcp_store_tenant(s, "lab-2", PMCP_STORE_CREATE, &other));
  mk(s, other, "workspace", "gamma", NULL);
  pmcp_tenant b;
  ST_OK(s, pmcp_store_scope(s, *t, "beta", &b));
  WS_BETA = b.workspace;
  pmcp_store_free(s);
  pmcp_store *ro = NULL;
  ck_assert_int_eq(pmcp_store_open(&ro, st_path, PMCP_STORE_READONLY), 0);
  ST_OK(ro, pmcp_store_tenant(ro, NULL, 0, t));
  return ro;
}

static char *list(pmcp_store *s, pmcp_tenant t, const char *kind, const char *parent)
{
  pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
  o.kind = kind;
  o.parent = parent;
  pmcp_buf b = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_list(s, t, &o, &b));
  return b.ptr;
}

static void has(const char *text, const char *needle, int want)
{
  ck_assert_msg((strstr(text, needle) != NULL) == want, "%s '%s' in %s",
                want ? "no" : "unexpected", needle, text);
}

START_TEST(store_scope)
{
  pmcp_tenant t, a, b, d;
  pmcp_store *s = populate(&t);
  ST_OK(s, pmcp_store_scope(s, t, "alpha", &a));
  ST_OK(s, pmcp_store_scope(s, t, "workspace:beta", &b));
  ST_OK(s, pmcp_store_scope(s, t, "default", &d));
  ck_assert(a.workspace != 0 && !a.unfiled && d.unfiled);
  /* unknown, malformed, another lab's: refused */
  pmcp_tenant x;
  ck_assert_int_eq(pmcp_store_scope(s, t, "nowhere", &x), PMCP_ENOTFOUND);
  ck_assert_int_eq(pmcp_store_scope(s, t, "gamma", &x), PMCP_ENOTFOUND);
  ck_assert_int_eq(pmcp_store_scope(s, t, "bad id!", &x), PMCP_EINVAL);
  /* lists */
  const char *kinds[] = {"run", "note", "artifact", "dataset", "project", "workspace"};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    char *all = list(s, t, kinds[i], NULL), *la = list(s, a, kinds[i], NULL);
    char *lb = list(s, b, kinds[i], NULL);
    if (strcmp(kinds[i], "project") == 0) {
      has(la, "project:pa", 1), has(la, "project:pb", 0), has(lb, "project:pb", 1);
    } else if (strcmp(kinds[i], "workspace") == 0) {
      has(la, "workspace:alpha", 1), has(la, "workspace:beta", 0);
      has(all, "workspace:beta", 1);
    } else {
      has(la, "betasecret", 0), has(la, "unfiledsecret", 0);
      has(lb, "alphasecret", 0), has(lb, "unfiledsecret", 0);
      if (strcmp(kinds[i], "dataset") != 0)
        has(la, "alphasecret", 1), has(all, "betasecret", 1);
      has(lb, "betasecret", 1);
    }
    free(all), free(la), free(lb);
  }
  char *ld = list(s, d, "run", NULL);
  has(ld, "run:ru", 1), has(ld, "run:ra", 0), has(ld, "run:rb", 0);
  free(ld);
  /* gets: another workspace's run is a missing run */
  pmcp_buf out = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp_store_get(s, a, "run:rb", &out), PMCP_ENOTFOUND);
  ck_assert_str_eq(pmcp_store_errmsg(s), "no run 'rb'");
  ck_assert_int_eq(pmcp_store_get(s, a, "run:ru", &out), PMCP_ENOTFOUND);
  ck_assert_int_eq(pmcp_store_get(s, a, "project:pb", &out), PMCP_ENOTFOUND);
  ck_assert_int_eq(pmcp_store_get(s, a, "artifact:rb-art", &out), PMCP_ENOTFOUND);
  ST_OK(s, pmcp_store_get(s, a, "run:ra", &out));
  ST_OK(s, pmcp_store_get(s, d, "run:ru", &out));
  ck_assert_int_eq(pmcp_store_artifact_content(s, a, "artifact:rb-art", 0, &out, NULL),
                   PMCP_ENOTFOUND);
  /* lists under a parent of another workspace */
  pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
  o.kind = "note";
  o.parent = "run:rb";
  ck_assert_int_eq(pmcp_store_list(s, a, &o, &out), PMCP_ENOTFOUND);
  /* series by id */
  ck_assert_int_eq(pmcp_store_series_list(s, a, "run:rb", &out), PMCP_ENOTFOUND);
  pmcp_point p[4];
  size_t n;
  int64_t next;
  ck_assert_int_eq(pmcp_store_points(s, a, series_b, INT64_MIN, INT64_MAX, 0, p, 4, &n, &next),
                   PMCP_ENOTFOUND);
  ST_OK(s, pmcp_store_points(s, b, series_b, INT64_MIN, INT64_MAX, 0, p, 4, &n, &next));
  ck_assert_uint_eq(n, 2);
  pmcp_bucket bk[2];
  ck_assert_int_eq(pmcp_store_summary(s, a, series_b, INT64_MIN, INT64_MAX, 2, bk, &n),
                   PMCP_ENOTFOUND);
  /* search */
  ST_OK(s, pmcp_store_search(s, a, "betasecret", NULL, NULL, 50, &out));
  has(out.ptr, "\"total\":0", 1);
  ST_OK(s, pmcp_store_search(s, a, "alphasecret", NULL, NULL, 50, &out));
  has(out.ptr, "\"total\":0", 0);
  ST_OK(s, pmcp_store_search(s, t, "betasecret", NULL, NULL, 50, &out));
  has(out.ptr, "\"total\":0", 0);
  pmcp_buf_dispose(&out);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* ---- tools with a host scope hook ----------------------------------------- */

static harness *H;
static pmcp_store *RO;
static int next_id = 10;

/* The caller the hook answers for: a key (may not switch) or a person
 * with memberships. */
static struct {
  int is_key;
  const char *home;
  const char *member[3], *role[3];
} P;

static int hook(pmcp_call *call, const char *asked, pmcp_call_scope *out, char *msg,
                size_t size, void *ud)
{
  (void)call, (void)ud;
  const char *ws = asked ? asked : P.home;
  if (P.is_key && strcmp(ws, P.home) != 0) {
    snprintf(msg, size, "an API key acts only in its own workspace");
    return PMCP_EDENIED;
  }
  for (int i = 0; i < 3 && P.member[i]; i++)
    if (strcmp(P.member[i], ws) == 0) {
      snprintf(out->workspace, sizeof out->workspace, "%s", ws);
      snprintf(out->role, sizeof out->role, "%s", P.role[i]);
      return 0;
    }
  snprintf(msg, size, "no such workspace, or no access to it");
  return PMCP_EDENIED;
}

static int hook_list(pmcp_call *call, pmcp_buf *out, void *ud)
{
  (void)call, (void)ud;
  pmcp__buf_putc(out, '{');
  for (int i = 0; i < 3 && P.member[i]; i++)
    pmcp__buf_printf(out, "%s\"%s\":\"%s\"", i ? "," : "", P.member[i], P.role[i]);
  pmcp__buf_putc(out, '}');
  return 0;
}

static void setup(void)
{
  pmcp_tenant t;
  RO = populate(&t);
  memset(&P, 0, sizeof P);
  H = h_new(NULL);
  pmcp_research_options ro = PMCP_RESEARCH_OPTIONS_INIT;
  ro.scope = hook;
  ck_assert_int_eq(pmcp_research_register(H->srv, RO, &ro), 0);
  pmcp_tracking_options to = PMCP_TRACKING_OPTIONS_INIT;
  to.scope = hook;
  to.scope_list = hook_list;
  ck_assert_int_eq(pmcp_tracking_register(H->srv, RO, &to), 0);
  h_init(H, "", "2025-06-18");
}

static void teardown(void)
{
  h_free(H);
  pmcp_store_free(RO);
  RO = NULL;
  st_cleanup();
}

/* The result text of @p tool; *err set for isError. Caller frees. */
static char *call(const char *tool, const char *args, int *err)
{
  char *msg = malloc(strlen(args) + 200);
  sprintf(msg, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
               "{\"name\":\"%s\",\"arguments\":%s}}", next_id++, tool, args);
  cJSON *resp = h_call(H, "", msg);
  free(msg);
  ck_assert_msg(h_error_code(resp) == 0, "%s %s: protocol error %s", tool, args,
                h_error_message(resp));
  char *text = strdup(h_text0(resp));
  *err = h_is_error(resp);
  cJSON_Delete(resp);
  return text;
}

static void expect(const char *tool, const char *args, int want_err, const char *yes,
                   const char *no)
{
  int e;
  char *t = call(tool, args, &e);
  ck_assert_msg(e == want_err, "%s %s: isError %d: %s", tool, args, e, t);
  if (yes)
    has(t, yes, 1);
  if (no)
    has(t, no, 0);
  free(t);
}

START_TEST(key_sees_its_workspace_only)
{
  P.is_key = 1;
  P.home = "alpha";
  P.member[0] = "alpha", P.role[0] = "viewer";
  expect("browse", "{\"mode\":\"runs\"}", 0, "run:ra", "run:rb");
  expect("browse", "{\"mode\":\"runs\"}", 0, NULL, "run:ru");
  expect("browse", "{\"mode\":\"notes\"}", 0, "alphasecret", "betasecret");
  expect("search", "{\"query\":\"rb-art\"}", 0, NULL, "artifact:rb");
  expect("browse", "{\"mode\":\"tree\"}", 0, "project:pa", "project:pb");
  expect("browse", "{\"mode\":\"workspaces\"}", 0, "workspace:alpha", "workspace:beta");
  expect("search", "{\"query\":\"betasecret\"}", 0, NULL, "run:rb");
  expect("search", "{\"query\":\"alphasecret\"}", 0, "run:ra", NULL);
  expect("entity", "{\"refs\":[\"run:rb\"]}", 1, "no run 'rb'", "betasecret");
  expect("entity", "{\"refs\":[\"artifact:rb-art\"]}", 1, "no artifact", "betasecret");
  expect("entity", "{\"refs\":[\"run:ra\"]}", 0, "alphasecret", NULL);
  {
    int e;
    char *t = call("metrics", "{\"mode\":\"summaries\",\"run_ids\":[\"rb\"]}", &e);
    has(t, "1.5", 0);
    free(t);
  }
  expect("metrics", "{\"mode\":\"summaries\",\"run_ids\":[\"ra\"]}", 0, "1.5", NULL);
  expect("list_runs", "{\"project\":\"pb\"}", 1, "not found", "betasecret");
  expect("list_runs", "{\"project\":\"pa\"}", 0, "ra", "rb");
  expect("list_projects", "{}", 0, "pa", "\"pb\"");
  expect("list_workspaces", "{}", 0, "\"alpha\"", "beta");
  /* a key never switches */
  expect("browse", "{\"mode\":\"runs\",\"workspace\":\"beta\"}", 1, "own workspace", "rb");
  expect("list_runs", "{\"project\":\"pb\",\"workspace\":\"beta\"}", 1, "own workspace", NULL);
  /* its own workspace named explicitly is fine */
  expect("browse", "{\"mode\":\"runs\",\"workspace\":\"alpha\"}", 0, "run:ra", NULL);
  /* query_sql: the views keep the workspace's rows, on both backends */
  {
    expect("query_sql", "{\"sql\":\"SELECT name FROM runs\"}", 0, "alphasecret", "betasecret");
    expect("query_sql", "{\"sql\":\"SELECT name FROM runs\"}", 0, NULL, "unfiledsecret");
    expect("query_sql", "{\"sql\":\"SELECT body FROM note_versions\"}", 0, "alphasecret",
           "betasecret");
    expect("query_sql", "{\"sql\":\"SELECT slug FROM workspaces\"}", 0, "alpha", "beta");
    expect("query_sql", "{\"sql\":\"SELECT slug FROM projects\"}", 0, "pa", "pb");
    expect("query_sql", "{\"sql\":\"SELECT description FROM artifacts\"}", 0, "alphasecret",
           "betasecret");
    expect("query_sql", "{\"sql\":\"SELECT count(*) AS n, sum(value) AS v FROM metric_points\"}",
           0, "[2,2]", NULL);
    expect("query_sql", "{\"sql\":\"SELECT count(*) FROM series s JOIN runs r ON"
           " r.id=s.run_id\"}", 0, "[1]", NULL);
    expect("query_sql", "{\"sql\":\"SELECT count(*) FROM metric_points_all\"}", 1, NULL,
           NULL);
    expect("query_sql", "{\"sql\":\"SELECT count(*) FROM main.runs\"}", 1, NULL, NULL);
    expect("query_sql", "{\"sql\":\"SELECT count(*) FROM tags\"}", 0, "[0]", NULL);
    expect("query_sql", "{\"sql\":\"SELECT slug FROM datasets\"}", 0, NULL, "dsb");
    expect("query_sql", "{\"sql\":\"SELECT count(*) FROM metric_blocks\"}", 0, "[1]", NULL);
  }
  if (strcmp(pmcp_store_backend(RO), "postgres") == 0) {
    /* the settings behind the proof, changed from inside the statement */
    char q[600];
    snprintf(q, sizeof q, "{\"sql\":\"SELECT name FROM runs WHERE"
             " set_config('probe.qworkspace', '%lld', true) <> ''\"}", (long long)WS_BETA);
    expect("query_sql", q, 0, NULL, "betasecret");
    expect("query_sql", "{\"sql\":\"SELECT name FROM runs WHERE"
           " set_config('probe.qworkspace', '0', true) <> ''\"}", 0, NULL, "unfiledsecret");
    snprintf(q, sizeof q, "{\"sql\":\"WITH x AS MATERIALIZED (SELECT"
             " set_config('probe.qworkspace', '%lld', true) AS a) SELECT r.name FROM x, runs r"
             " UNION ALL SELECT title FROM note_versions, x\"}", (long long)WS_BETA);
    expect("query_sql", q, 0, NULL, "betasecret");
    expect("query_sql", "{\"sql\":\"WITH x AS MATERIALIZED (SELECT"
           " set_config('probe.qunfiled', '1', true) AS a) SELECT r.name FROM x, runs r\"}", 0,
           NULL, "unfiledsecret");
    /* its own token under the whole tenant's name */
    expect("query_sql", "{\"sql\":\"WITH x AS MATERIALIZED (SELECT"
           " set_config('probe.qworkspace', '0', true), set_config('probe.qunfiled', '0', true),"
           " set_config('probe.qtoken', current_setting('probe.qtoken'), true))"
           " SELECT name FROM x, runs\"}", 0, NULL, "betasecret");
    expect("query_sql", "{\"sql\":\"SELECT * FROM probe_query_scope()\"}", 1, NULL, NULL);
  }
}
END_TEST

START_TEST(person_switches_workspace)
{
  P.home = "alpha";
  P.member[0] = "alpha", P.role[0] = "editor";
  P.member[1] = "beta", P.role[1] = "viewer";
  expect("browse", "{\"mode\":\"runs\"}", 0, "run:ra", "run:rb");
  expect("browse", "{\"mode\":\"runs\",\"workspace\":\"beta\"}", 0, "run:rb", "run:ra");
  expect("entity", "{\"refs\":[\"run:rb\"],\"workspace\":\"beta\"}", 0, "betasecret", NULL);
  expect("search", "{\"query\":\"betasecret\",\"workspace\":\"workspace:beta\"}", 0, "run:rb",
         NULL);
  expect("list_runs", "{\"project\":\"pb\",\"workspace\":\"beta\"}", 0, "rb", NULL);
  /* query_sql (no `workspace` argument) acts in the connection's
   * workspace; the next call in another one reads that one's rows through
   * the same reader connection */
  expect("query_sql", "{\"sql\":\"SELECT name FROM runs\"}", 0, "alphasecret", "betasecret");
  P.home = "beta";
  expect("query_sql", "{\"sql\":\"SELECT name FROM runs\"}", 0, "betasecret", "alphasecret");
  expect("query_sql", "{\"sql\":\"SELECT name FROM runs\"}", 0, NULL, "unfiledsecret");
  expect("query_sql", "{\"sql\":\"SELECT count(*), sum(value) FROM metric_points\"}", 0,
         "[2,2]", NULL);
  P.home = "alpha";
  expect("query_sql", "{\"sql\":\"SELECT name FROM runs\"}", 0, "alphasecret", "betasecret");
  /* list_workspaces: the person's workspaces and role in each */
  int e;
  char *t = call("list_workspaces", "{}", &e);
  ck_assert(!e);
  cJSON *o = cJSON_Parse(t);
  cJSON *ws = cJSON_GetObjectItem(o, "workspaces");
  ck_assert_int_eq(cJSON_GetArraySize(ws), 2);
  for (int i = 0; i < 2; i++) {
    cJSON *w = cJSON_GetArrayItem(ws, i);
    const char *id = cJSON_GetObjectItem(w, "workspace")->valuestring;
    const char *role = cJSON_GetObjectItem(w, "role")->valuestring;
    ck_assert_str_eq(role, strcmp(id, "alpha") == 0 ? "editor" : "viewer");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(w, "current")) == (strcmp(id, "alpha") == 0));
  }
  cJSON_Delete(o);
  free(t);
  /* not a member, missing, another lab's: the same refusal */
  expect("browse", "{\"mode\":\"runs\",\"workspace\":\"default\"}", 1, "no access", "ru");
  expect("browse", "{\"mode\":\"runs\",\"workspace\":\"nowhere\"}", 1,
         "no such workspace, or no access to it", NULL);
  expect("browse", "{\"mode\":\"runs\",\"workspace\":\"gamma\"}", 1,
         "no such workspace, or no access to it", NULL);
  /* a membership removed takes effect at the next call */
  P.member[1] = NULL;
  expect("browse", "{\"mode\":\"runs\",\"workspace\":\"beta\"}", 1, "no access", "rb");
}
END_TEST

/* A cursor is bound to the workspace it was made in. */
START_TEST(cursor_bound_to_workspace)
{
  P.is_key = 1;
  P.home = "alpha";
  P.member[0] = "alpha", P.role[0] = "viewer";
  int e;
  char *t = call("browse", "{\"mode\":\"runs\",\"limit\":1}", &e);
  ck_assert(!e);
  cJSON *o = cJSON_Parse(t);
  const char *cur = cJSON_GetStringValue(cJSON_GetObjectItem(o, "next_cursor"));
  ck_assert_msg(cur != NULL, "no next_cursor: %s", t);
  char args[1024];
  snprintf(args, sizeof args, "{\"mode\":\"runs\",\"limit\":1,\"cursor\":\"%s\"}", cur);
  expect("browse", args, 0, "run:ra", "run:rb");
  /* the same call by a key of another workspace: the cursor is foreign */
  P.home = "beta";
  P.member[0] = "beta";
  expect("browse", args, 1, "cursor", "run:ra");
  cJSON_Delete(o);
  free(t);
}
END_TEST

START_TEST(default_workspace_holds_unfiled)
{
  P.is_key = 1;
  P.home = "default";
  P.member[0] = "default", P.role[0] = "viewer";
  expect("browse", "{\"mode\":\"runs\"}", 0, "run:ru", "run:ra");
  expect("entity", "{\"refs\":[\"run:ra\"]}", 1, "no run 'ra'", "alphasecret");
  expect("query_sql", "{\"sql\":\"SELECT name FROM runs\"}", 0, "unfiledsecret",
         "alphasecret");
  expect("query_sql", "{\"sql\":\"SELECT name FROM runs\"}", 0, NULL, "betasecret");
  expect("query_sql", "{\"sql\":\"SELECT title FROM notes\"}", 0, "unfiledsecret",
         "alphasecret");
  expect("query_sql", "{\"sql\":\"SELECT count(*) FROM metric_points\"}", 0, "[2]", NULL);
}
END_TEST

int main(void)
{
  Suite *su = suite_create("workspace-scope");
  TCase *tc = tcase_create("store");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, store_scope);
  suite_add_tcase(su, tc);
  tc = tcase_create("tools");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, key_sees_its_workspace_only);
  tcase_add_test(tc, person_switches_workspace);
  tcase_add_test(tc, default_workspace_holds_unfiled);
  tcase_add_test(tc, cursor_bound_to_workspace);
  suite_add_tcase(su, tc);
  return st_run_suite(su);
}
