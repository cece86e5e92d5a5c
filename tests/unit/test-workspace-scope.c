/* SPDX-License-Identifier: MIT */
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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine-harness.h"
#include "store-test-util.h"
#include "core/call_scope.h"
#include "util/buf.h"

static int64_t series_b;
static int64_t WS_BETA; /* beta's row id */

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
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, "loss", NULL, 0, 0, 0};
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
  st_create(s, *t, "workspace", "alpha", NULL);
  st_create(s, *t, "workspace", "beta", NULL);
  st_create(s, *t, "project", "pa", "workspace:alpha");
  st_create(s, *t, "project", "pb", "workspace:beta");
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
  st_create(s, other, "workspace", "gamma", NULL);
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
  if (!asked && !P.home) /* every workspace of the tenant: none named */
    return pmcp_call_scope_set_role(out, "viewer");
  const char *ws = asked ? asked : P.home;
  if (P.is_key && strcmp(ws, P.home) != 0) {
    snprintf(msg, size, "an API key acts only in its own workspace");
    return PMCP_EDENIED;
  }
  for (int i = 0; i < 3 && P.member[i]; i++)
    if (strcmp(P.member[i], ws) == 0) {
      return pmcp_call_scope_set_workspace(out, ws) ||
             pmcp_call_scope_set_role(out, P.role[i]);
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
  H = h_new_scoped(RO, hook, hook_list);
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

static int strcmp_p(const char **a, const char **b)
{
  return strcmp(*a, *b);
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

/* The call scope as release 0.1 declared it in tool.h, for a hook built
 * against that release. */
typedef struct scope_0_1 {
  char workspace[129];
  char role[16];
  char principal[72];
} scope_0_1;

static int hook_0_1(pmcp_call *call, const char *asked, scope_0_1 *out, char *msg,
                    size_t size, void *ud)
{
  (void)call, (void)ud;
  if (asked && strcmp(asked, P.home) != 0) {
    snprintf(msg, size, "an API key acts only in its own workspace");
    return PMCP_EDENIED;
  }
  snprintf(out->workspace, sizeof out->workspace, "%s", P.home);
  snprintf(out->role, sizeof out->role, "%s", P.role[0]);
  snprintf(out->principal, sizeof out->principal, "key:k1");
  return 0;
}

/* A program built against release 0.1 passes options of the versions it
 * knew (research 3, tracking 2) and a hook that writes the 0.1 layout: its
 * calls act in the workspace and role it names, as then. */
START_TEST(hook_of_release_0_1)
{
  h_free(H);
  H = h_new(NULL);
  pmcp_scope_fn fn = (pmcp_scope_fn)(void (*)(void))hook_0_1;
  pmcp_research_options ro = PMCP_RESEARCH_OPTIONS_INIT;
  ro.version = 3;
  ro.scope = fn;
  ck_assert_int_eq(pmcp_research_register(H->srv, RO, &ro), 0);
  pmcp_tracking_options to = PMCP_TRACKING_OPTIONS_INIT;
  to.version = 2;
  to.scope = fn;
  ck_assert_int_eq(pmcp_tracking_register(H->srv, RO, &to), 0);
  h_init(H, "", "2025-06-18");
  P.is_key = 1;
  P.home = "alpha";
  P.member[0] = "alpha", P.role[0] = "editor";
  expect("browse", "{\"mode\":\"runs\"}", 0, "run:ra", "run:rb");
  expect("browse", "{\"mode\":\"notes\"}", 0, "alphasecret", "betasecret");
  expect("query_sql", "{\"sql\":\"SELECT name FROM runs\"}", 0, "alphasecret", "betasecret");
  expect("list_runs", "{\"project\":\"pb\"}", 1, "not found", "betasecret");
  expect("list_workspaces", "{}", 0, "\"alpha\",\"project_count\":1,\"role\":\"editor\"", "beta");
  expect("browse", "{\"mode\":\"runs\",\"workspace\":\"beta\"}", 1, "own workspace", "rb");
  /* the newer options' hook of the same answer sees the same */
  h_free(H);
  H = h_new_scoped(RO, hook, NULL);
  expect("browse", "{\"mode\":\"runs\"}", 0, "run:ra", "run:rb");
  expect("list_workspaces", "{}", 0, "\"alpha\",\"project_count\":1,\"role\":\"editor\"", "beta");
}
END_TEST

/* The parts are copied whole (no length limit) and read back as set;
 * NULL or "" clears one. */
START_TEST(scope_setters)
{
  pmcp_call_scope sc = PMCP__CALL_SCOPE_INIT;
  char longid[301];
  memset(longid, 'w', 300);
  longid[300] = '\0';
  ck_assert_str_eq(pmcp_call_scope_workspace(&sc), "");
  ck_assert_int_eq(pmcp_call_scope_set_workspace(&sc, longid), 0);
  ck_assert_int_eq(pmcp_call_scope_set_role(&sc, "viewer"), 0);
  ck_assert_int_eq(pmcp_call_scope_set_principal(&sc, "user:u1"), 0);
  longid[0] = 'x'; /* copied, not borrowed */
  ck_assert_uint_eq(strlen(pmcp_call_scope_workspace(&sc)), 300);
  ck_assert_int_eq(pmcp_call_scope_workspace(&sc)[0], 'w');
  ck_assert_str_eq(pmcp_call_scope_role(&sc), "viewer");
  ck_assert_str_eq(pmcp_call_scope_principal(&sc), "user:u1");
  ck_assert_int_eq(pmcp_call_scope_set_role(&sc, NULL), 0);
  ck_assert_str_eq(pmcp_call_scope_role(&sc), "");
  ck_assert_int_eq(pmcp_call_scope_set_principal(&sc, ""), 0);
  ck_assert_str_eq(pmcp_call_scope_principal(&sc), "");
  ck_assert_int_eq(pmcp_call_scope_set_workspace(NULL, "a"), PMCP_EINVAL);
  ck_assert_str_eq(pmcp_call_scope_workspace(NULL), "");
  pmcp__call_scope_dispose(&sc);
  ck_assert_str_eq(pmcp_call_scope_workspace(&sc), "");
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

/* A hook that names no workspace (the whole tenant) and lists the
 * caller's: list_workspaces marks none of them current. */
START_TEST(tenant_wide_scope_lists_workspaces)
{
  P.home = NULL;
  P.member[0] = "alpha", P.role[0] = "viewer";
  P.member[1] = "default", P.role[1] = "viewer";
  int e;
  char *t = call("list_workspaces", "{}", &e);
  ck_assert_msg(!e, "%s", t);
  cJSON *o = cJSON_Parse(t);
  cJSON *ws = cJSON_GetObjectItem(o, "workspaces");
  ck_assert_int_eq(cJSON_GetArraySize(ws), 2);
  cJSON *w;
  cJSON_ArrayForEach(w, ws)
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(w, "current")));
  cJSON_Delete(o);
  free(t);
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


/* ---- PostgreSQL's views against SQLite's ---------------------------------- */

static void note_on(pmcp_store *s, pmcp_tenant t, const char *on, const char *kind,
                    const char *title, int64_t ms)
{
  pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
  n.on = on;
  n.kind = kind;
  n.title = title;
  n.body = title;
  n.created_ms = ms;
  ST_OK(s, pmcp_store_note(s, t, &n, NULL, NULL));
}

/* A lab with a row in every view, in each workspace, unfiled and
 * lab-wide, and links that cross workspaces; the same calls on both
 * backends. */
static void rich(pmcp_store *s, pmcp_tenant t)
{
  st_create(s, t, "workspace", "alpha", NULL);
  st_create(s, t, "workspace", "beta", NULL);
  st_create(s, t, "project", "pa", "workspace:alpha");
  st_create(s, t, "project", "pb", "workspace:beta");
  st_create(s, t, "experiment", "ea", "project:pa");
  st_create(s, t, "experiment", "eb", "project:pb");
  static const char *const runs[][3] = {{"ra", "pa", "ea"}, {"rb", "pb", "eb"},
                                        {"ru", NULL, NULL}};
  for (int i = 0; i < 3; i++) {
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = runs[i][0];
    r.project = runs[i][1];
    r.experiment = runs[i][2];
    r.status = "finished";
    r.created_ms = 1700000000000 + i;
    r.started_ms = 1700000000100 + i;
    r.ended_ms = 1700000000900 + i;
    r.command = "python train.py";
    r.environment = "{\"host\":\"n1\"}";
    r.git_commit = "abc123";
    ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
    char ref[32], sec[32];
    snprintf(ref, sizeof ref, "run:%s", runs[i][0]);
    snprintf(sec, sizeof sec, "%ssecret", runs[i][0]);
    pmcp_value lr = {PMCP_V_FLOAT, NULL, 0, 0.125, NULL, 0};
    ST_OK(s, pmcp_store_set_attr(s, t, ref, "config/lr", &lr));
    pmcp_value nm = {PMCP_V_STRING, sec, 0, 0, NULL, 0};
    ST_OK(s, pmcp_store_set_attr(s, t, ref, "params/name", &nm));
    ST_OK(s, pmcp_store_tag(s, t, ref, sec, 1));
    ST_OK(s, pmcp_store_run_event(s, t, runs[i][0], "log", sec, 1700000000500 + i));
    pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, "loss", NULL, 0, 0, 0};
    int64_t sid;
    ST_OK(s, pmcp_store_series(s, t, ref, &sp, &sid));
    pmcp_point pt[3] = {{1, 1700000000001, 1.5}, {2, 0, NAN}, {3, 1700000000003, 0.25 + i}};
    ST_OK(s, pmcp_store_log(s, t, sid, pt, 3));
    note_on(s, t, ref, NULL, sec, 1700000001000 + i);
    pmcp_artifact_spec a = PMCP_ARTIFACT_SPEC_INIT;
    char name[32];
    snprintf(name, sizeof name, "%s-art", runs[i][0]);
    a.name = name;
    a.on = ref;
    a.content = sec;
    a.size = strlen(sec);
    a.description = sec;
    a.created_ms = 1700000002000 + i;
    ST_OK(s, pmcp_store_artifact_add(s, t, &a, NULL, NULL));
    char js[300];
    snprintf(js, sizeof js, "{\"run\":\"%s\",\"step\":100,\"uri\":\"s3://ck/%s\"}", runs[i][0],
             runs[i][0]);
    st_put(s, t, "checkpoint", js);
    snprintf(js, sizeof js, "{\"run\":\"%s\",\"name\":\"t-%s\",\"params\":{\"lr\":0.1},"
             "\"score\":0.5}", runs[i][0], runs[i][0]);
    st_put(s, t, "trial", js);
    snprintf(js, sizeof js, "{\"title\":\"%s session\",\"agent\":\"a\",\"on\":[\"%s\"]}", sec, ref);
    st_put(s, t, "session", js);
  }
  /* on experiments and projects */
  static const char *const owners[] = {"experiment:ea", "project:pa", "experiment:eb",
                                       "project:pb"};
  for (int i = 0; i < 4; i++) {
    pmcp_value v = {PMCP_V_INT, NULL, 64 + i, 0, NULL, 0};
    ST_OK(s, pmcp_store_set_attr(s, t, owners[i], "config/batch", &v));
    ST_OK(s, pmcp_store_tag(s, t, owners[i], "owned", 1));
    note_on(s, t, owners[i], NULL, owners[i], 1700000003000 + i);
  }
  /* lab-wide: the team note, an artifact, a source, papers */
  note_on(s, t, NULL, "team", "team note", 1700000004000);
  pmcp_artifact_spec la = PMCP_ARTIFACT_SPEC_INIT;
  la.name = "handbook";
  la.uri = "https://example.org/handbook";
  la.created_ms = 1700000004001;
  ST_OK(s, pmcp_store_artifact_add(s, t, &la, NULL, NULL));
  st_put(s, t, "source", "{\"id\":\"hf-org-model\",\"provider\":\"hf\",\"kind\":\"model\",\"uri\":\"hf://org/model\"}");
  st_put(s, t, "run-use", "{\"run\":\"ra\",\"uses\":\"source:hf-org-model\"}");
  pmcp_paper pp = {PMCP_PAPER_VERSION, "0704.0001", "Diphoton production", "An abstract", "C. Balazs", "hep-ph",
                   "2007-04-02", "2008-11-13", NULL, NULL, NULL};
  ST_OK(s, pmcp_store_paper(s, t, &pp));
  st_put(s, t, "paper-link", "{\"project\":\"pa\",\"paper\":\"0704.0001\",\"note\":\"bg\"}");
  st_put(s, t, "paper-link", "{\"project\":\"pb\",\"paper\":\"0704.0001\",\"note\":\"bg b\"}");
  /* datasets: filed, unfiled, versioned */
  st_put(s, t, "dataset", "{\"name\":\"da\",\"project\":\"pa\",\"uri\":\"s3://da\"}");
  st_put(s, t, "dataset", "{\"name\":\"db\",\"project\":\"pb\",\"uri\":\"s3://db\"}");
  st_put(s, t, "dataset", "{\"name\":\"du\",\"uri\":\"s3://du\"}");
  st_put(s, t, "dataset-version", "{\"dataset\":\"da\",\"version\":\"v2\",\"rows\":10}");
  st_put(s, t, "dataset-version", "{\"dataset\":\"db\",\"version\":\"v2\",\"rows\":20}");
  /* lineage within a workspace, across two, to the lab-wide */
  st_put(s, t, "lineage", "{\"from\":\"run:ra\",\"to\":\"dataset:da\",\"relation\":\"produced\"}");
  st_put(s, t, "lineage", "{\"from\":\"run:ra\",\"to\":\"run:rb\",\"relation\":\"derived\"}");
  st_put(s, t, "lineage", "{\"from\":\"run:ru\",\"to\":\"dataset:du\",\"relation\":\"produced\"}");
  /* groups with and without an experiment; sessions across two, none */
  st_put(s, t, "group", "{\"name\":\"ga\",\"experiment\":\"ea\",\"runs\":[\"ra\"]}");
  st_put(s, t, "group", "{\"name\":\"gu\",\"runs\":[\"ru\"]}");
  st_put(s, t, "session", "{\"title\":\"both\",\"agent\":\"a\",\"on\":[\"run:ra\",\"run:rb\"]}");
  st_put(s, t, "session", "{\"title\":\"nowhere\",\"agent\":\"a\"}");
  /* a deleted run and a trashed experiment (query_sql's deleted_ views),
   * in the beta workspace */
  st_create(s, t, "experiment", "ex", "project:pb");
  pmcp_run_spec rd = PMCP_RUN_SPEC_INIT;
  rd.id = "rd";
  rd.project = "pb";
  rd.experiment = "ex";
  rd.created_ms = 1700000005000;
  ST_OK(s, pmcp_store_run_create(s, t, &rd, NULL));
  note_on(s, t, "run:rd", NULL, "rdsecret", 1700000005001);
  ST_OK(s, pmcp_store_set_deleted(s, t, "run:rd", 1));
  ST_OK(s, pmcp_store_set_deleted(s, t, "experiment:ex", 1));
  /* another lab */
  pmcp_tenant o;
  ST_OK(s, pmcp_store_tenant(s, "lab-2", PMCP_STORE_CREATE, &o));
  st_create(s, o, "workspace", "gamma", NULL);
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "rx";
  r.name = "othersecret";
  ST_OK(s, pmcp_store_run_create(s, o, &r, NULL));
}

/* A server over @p s with query_sql, acting through the hook or (NULL)
 * in the whole tenant. */
static harness *serve(pmcp_store *s, int hooked)
{
  harness *h = h_new(NULL);
  pmcp_research_options ro = PMCP_RESEARCH_OPTIONS_INIT;
  if (hooked)
    ro.scope = hook;
  ck_assert_int_eq(pmcp_research_register(h->srv, s, &ro), 0);
  h_init(h, "", "2025-06-18");
  return h;
}

static pmcp_store *reopen(const char *path)
{
  pmcp_store *s = NULL;
  pmcp_tenant t;
  ck_assert_int_eq(pmcp_store_open(&s, path, PMCP_STORE_READONLY), 0);
  ST_OK(s, pmcp_store_tenant(s, NULL, 0, &t));
  return s;
}

/* The columns and the rows, each as JSON text, sorted; clock columns
 * (the time a record was made by the store's clock) are left out. */
static char **view_rows(const char *view, cJSON **cols, int *n)
{
  char args[1200];
  snprintf(args, sizeof args, "{\"sql\":\"SELECT * FROM %s\",\"token_budget\":8000}", view);
  cJSON *all = cJSON_CreateArray();
  *cols = NULL;
  for (int page = 0; page < 50; page++) {
    int e;
    char *text = call("query_sql", args, &e);
    ck_assert_msg(!e, "%s: %s", view, text);
    cJSON *o = cJSON_Parse(text);
    ck_assert_msg(o != NULL, "%s: %s", view, text);
    free(text);
    if (!*cols)
      *cols = cJSON_DetachItemFromObject(o, "columns");
    cJSON *row;
    cJSON *rows = cJSON_DetachItemFromObject(o, "rows");
    while ((row = cJSON_DetachItemFromArray(rows, 0)) != NULL)
      cJSON_AddItemToArray(all, row);
    cJSON_Delete(rows);
    const char *cur = cJSON_GetStringValue(cJSON_GetObjectItem(o, "next_cursor"));
    if (cur)
      snprintf(args, sizeof args, "{\"sql\":\"SELECT * FROM %s\",\"token_budget\":8000,"
               "\"cursor\":\"%s\"}", view, cur);
    cJSON_Delete(o);
    if (!cur)
      break;
  }
  ck_assert_ptr_nonnull(*cols);
  *n = cJSON_GetArraySize(all);
  char **out = calloc((size_t)*n + 1, sizeof *out);
  for (int i = 0; i < *n; i++) {
    cJSON *row = cJSON_GetArrayItem(all, i);
    for (int c = 0; c < cJSON_GetArraySize(*cols); c++) {
      const char *name = cJSON_GetArrayItem(*cols, c)->valuestring;
      if (!strcmp(name, "created") || !strcmp(name, "updated") || !strcmp(name, "registered"))
        cJSON_ReplaceItemInArray(row, c, cJSON_CreateString("clock"));
    }
    out[i] = cJSON_PrintUnformatted(row);
  }
  cJSON_Delete(all);
  qsort(out, (size_t)*n, sizeof *out, (int (*)(const void *, const void *))strcmp_p);
  return out;
}

START_TEST(same_rows_as_sqlite)
{
  if (!st_is_pg())
    return; /* the SQLite run has nothing to compare against */
  pmcp_tenant t;
  pmcp_store *w = st_open_new(&t);
  rich(w, t);
  pmcp_store_free(w);
  char sq_path[600];
  snprintf(sq_path, sizeof sq_path, "%s/same.db", st_dir);
  ck_assert_int_eq(pmcp_store_open(&w, sq_path, PMCP_STORE_CREATE), 0);
  ST_OK(w, pmcp_store_tenant(w, NULL, 0, &t));
  rich(w, t);
  pmcp_store_free(w);
  pmcp_store *pg = reopen(st_path), *sq = reopen(sq_path);
  harness *hs[2][2] = {{serve(pg, 0), serve(pg, 1)}, {serve(sq, 0), serve(sq, 1)}};
  /* the tables, from the listing (both backends list the same ones) */
  H = hs[1][0];
  int e;
  char *text = call("query_sql", "{\"token_budget\":8000}", &e);
  ck_assert_msg(!e, "listing: %s", text);
  cJSON *list = cJSON_Parse(text);
  free(text);
  cJSON *tables = cJSON_GetObjectItem(list, "tables");
  ck_assert_int_ge(cJSON_GetArraySize(tables), 25);
  static const char *const scopes[] = {NULL, "alpha", "beta", "default"};
  int compared = 0, scoped_rows = 0, all_rows = 0;
  for (int sc = 0; sc < 4; sc++) {
    memset(&P, 0, sizeof P);
    P.is_key = 1;
    P.home = scopes[sc];
    P.member[0] = scopes[sc], P.role[0] = "viewer";
    cJSON *tb;
    cJSON_ArrayForEach(tb, tables) {
      const char *view = cJSON_GetObjectItem(tb, "name")->valuestring;
      cJSON *cols[2];
      int n[2];
      char **rows[2];
      for (int b = 0; b < 2; b++) {
        H = hs[b][sc != 0];
        rows[b] = view_rows(view, &cols[b], &n[b]);
      }
      char *c0 = cJSON_PrintUnformatted(cols[0]), *c1 = cJSON_PrintUnformatted(cols[1]);
      ck_assert_msg(!strcmp(c0, c1), "%s: columns %s (pg) vs %s (sqlite)", view, c0, c1);
      ck_assert_msg(n[0] == n[1], "%s in %s: %d rows on pg, %d on sqlite (%s / %s)", view,
                    scopes[sc] ? scopes[sc] : "the tenant", n[0], n[1],
                    n[0] ? rows[0][0] : "-", n[1] ? rows[1][0] : "-");
      for (int i = 0; i < n[0]; i++)
        ck_assert_msg(!strcmp(rows[0][i], rows[1][i]), "%s in %s: pg %s vs sqlite %s", view,
                      scopes[sc] ? scopes[sc] : "the tenant", rows[0][i], rows[1][i]);
      /* every view has rows for the lab as a whole */
      if (sc == 0)
        ck_assert_msg(n[0] > 0, "%s: no rows to compare", view);
      if (sc == 0)
        all_rows += n[0];
      else
        scoped_rows += n[0];
      compared++;
      for (int b = 0; b < 2; b++) {
        for (int i = 0; i < n[b]; i++)
          cJSON_free(rows[b][i]);
        free(rows[b]);
        cJSON_Delete(cols[b]);
      }
      cJSON_free(c0), cJSON_free(c1);
    }
  }
  /* the workspaces split the lab: lab-wide rows are in each, the rest in
   * one, rows that cross workspaces in none */
  ck_assert_int_eq(compared, 4 * cJSON_GetArraySize(tables));
  ck_assert_int_gt(scoped_rows, all_rows / 2);
  ck_assert_int_gt(all_rows, 60);
  cJSON_Delete(list);
  for (int b = 0; b < 2; b++)
    for (int k = 0; k < 2; k++)
      h_free(hs[b][k]);
  H = NULL;
  pmcp_store_free(pg);
  pmcp_store_free(sq);
  st_cleanup();
}
END_TEST

/* ---- the reader role by itself -------------------------------------------- */

#ifdef PMCP_HAVE_POSTGRES
static PGconn *connect_as(const char *user, const char *schema)
{
  char opt[200];
  snprintf(opt, sizeof opt, "-csearch_path=%s", schema);
  const char *kw[] = {"dbname", "user", "options", NULL};
  const char *val[] = {getenv("PROBE_TEST_PG_URL"), user, opt, NULL};
  PGconn *c = PQconnectdbParams(kw, val, 1);
  ck_assert_msg(PQstatus(c) == CONNECTION_OK, "%s: %s", user, PQerrorMessage(c));
  PQclear(PQexec(c, "SET client_min_messages = warning"));
  return c;
}

/* The values of @p sql's rows joined by commas ("" for none), or
 * "ERROR: ..."; without parameters @p sql may hold several statements. */
static char *one(PGconn *c, const char *sql, int n, const char *const *params)
{
  PGresult *r = n ? PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0) : PQexec(c, sql);
  char *out;
  if (PQresultStatus(r) == PGRES_TUPLES_OK) {
    pmcp_buf b = PMCP_BUF_INIT;
    for (int i = 0; i < PQntuples(r); i++)
      for (int j = 0; j < PQnfields(r); j++)
        pmcp__buf_printf(&b, "%s%s", b.len ? "," : "", PQgetvalue(r, i, j));
    out = strdup(b.ptr ? b.ptr : "");
    pmcp_buf_dispose(&b);
  } else if (PQresultStatus(r) == PGRES_COMMAND_OK) {
    out = strdup("");
  } else {
    out = malloc(400);
    snprintf(out, 400, "ERROR: %s", PQresultErrorMessage(r));
  }
  PQclear(r);
  return out;
}

static PGconn *OWNER;

/* hex(sha256(key || scope || key)) with the store's query_key, as the
 * store makes it (read by the owner; the reader cannot). */
static char *token(const char *scope)
{
  const char *p[] = {scope};
  return one(OWNER, "SELECT encode(sha256(value || convert_to($1, 'UTF8') || value), 'hex')"
                    " FROM secrets WHERE name='query_key'", 1, p);
}

/* As the reader, in a transaction of its own: the four settings (NULL:
 * left unset), then @p sql; the rows as text. */
static char *as_reader(PGconn *c, const char *tenant, const char *ws, const char *unfiled,
                       const char *tok, const char *sql)
{
  PQclear(PQexec(c, "BEGIN"));
  const char *names[] = {"probe.qtenant", "probe.qworkspace", "probe.qunfiled", "probe.qtoken"};
  const char *vals[] = {tenant, ws, unfiled, tok};
  for (int i = 0; i < 4; i++)
    if (vals[i]) {
      const char *p[] = {names[i], vals[i]};
      free(one(c, "SELECT set_config($1, $2, true)", 2, p));
    }
  if (tenant) {
    const char *p[] = {"probe.tenant", tenant};
    free(one(c, "SELECT set_config($1, $2, true)", 2, p));
  }
  char *out = one(c, sql, 0, NULL);
  PQclear(PQexec(c, "ROLLBACK"));
  return out;
}

static void sees(char *rows, const char *yes, const char *no, const char *what)
{
  /* an error only where one is expected (named in @p yes) */
  ck_assert_msg(strncmp(rows, "ERROR", 5) || (yes && strstr(rows, yes)), "%s: %s", what, rows);
  if (yes)
    ck_assert_msg(strstr(rows, yes) != NULL, "%s: no '%s' in '%s'", what, yes, rows);
  if (no)
    ck_assert_msg(strstr(rows, no) == NULL, "%s: '%s' leaked in '%s'", what, no, rows);
  free(rows);
}
#endif

START_TEST(reader_cannot_forge)
{
#ifdef PMCP_HAVE_POSTGRES
  if (!st_is_pg())
    return; /* SQLite has no reader role: its guard is the authorizer */
  pmcp_tenant t, a, d, o, g;
  pmcp_store *s = populate(&t);
  ST_OK(s, pmcp_store_scope(s, t, "alpha", &a));
  ST_OK(s, pmcp_store_scope(s, t, "default", &d));
  ST_OK(s, pmcp_store_tenant(s, "lab-2", 0, &o));
  ST_OK(s, pmcp_store_scope(s, o, "gamma", &g));
  pmcp_store_free(s);
  char q[100], sc[8][80], id[4][24];
  snprintf(q, sizeof q, "%s_sql", st_schema);
  snprintf(id[0], sizeof id[0], "%lld", (long long)t.id);
  snprintf(id[1], sizeof id[1], "%lld", (long long)a.workspace);
  snprintf(id[2], sizeof id[2], "%lld", (long long)WS_BETA);
  snprintf(id[3], sizeof id[3], "%lld", (long long)d.workspace);
  snprintf(sc[0], sizeof sc[0], "%s/%s/0", id[0], id[1]);              /* alpha */
  snprintf(sc[1], sizeof sc[1], "%s/0/0", id[0]);                      /* the tenant */
  snprintf(sc[2], sizeof sc[2], "%s/%s/1", id[0], id[3]);              /* default */
  snprintf(sc[3], sizeof sc[3], "%s", id[0]);                          /* the old token */
  snprintf(sc[4], sizeof sc[4], "%lld/%lld/0", (long long)o.id, (long long)g.workspace);
  OWNER = connect_as("probe_owner", st_schema);
  char *tok_a = token(sc[0]), *tok_t = token(sc[1]), *tok_d = token(sc[2]);
  char *tok_old = token(sc[3]), *tok_g = token(sc[4]);
  ck_assert_int_eq((int)strlen(tok_a), 64);
  PGconn *r = connect_as("probe_reader", q);
  const char *runs = "SELECT string_agg(name, ' ' ORDER BY name) FROM runs";
  /* the genuine scopes: each sees its rows (the tokens above are right) */
  sees(as_reader(r, id[0], id[1], "0", tok_a, runs), "alphasecret", "betasecret", "alpha");
  sees(as_reader(r, id[0], id[1], "0", tok_a, runs), NULL, "unfiledsecret", "alpha");
  sees(as_reader(r, id[0], "0", "0", tok_t, runs), "betasecret", "othersecret", "tenant");
  sees(as_reader(r, id[0], "0", "0", tok_t, runs), "alphasecret", NULL, "tenant");
  sees(as_reader(r, id[0], id[3], "1", tok_d, runs), "unfiledsecret", "alphasecret", "default");
  /* nothing without a token, or with one for another scope */
  sees(as_reader(r, NULL, NULL, NULL, NULL, runs), NULL, "secret", "no settings");
  sees(as_reader(r, id[0], id[2], "0", tok_a, runs), NULL, "secret", "alpha's token for beta");
  sees(as_reader(r, id[0], "0", "0", tok_a, runs), NULL, "secret", "alpha's for the tenant");
  sees(as_reader(r, id[0], id[1], "1", tok_a, runs), NULL, "secret", "alpha's, unfiled");
  sees(as_reader(r, id[0], id[3], "0", tok_d, runs), NULL, "secret", "default's, filed");
  sees(as_reader(r, id[0], "0", "0", tok_old, runs), NULL, "secret", "the old tenant token");
  sees(as_reader(r, id[0], NULL, NULL, tok_old, runs), NULL, "secret", "old token, no ws");
  sees(as_reader(r, id[0], id[1], "0", tok_g, runs), NULL, "secret", "another lab's token");
  sees(as_reader(r, id[0], "0", "0", tok_t, "SELECT count(*) FROM runs WHERE"
                 " set_config('probe.tenant', '2', true) <> ''"), NULL, "othersecret",
       "tenant setting");
  /* changed from inside the statement, with its own token in hand */
  char sql[600];
  snprintf(sql, sizeof sql, "SELECT string_agg(name, ' ') FROM runs WHERE"
           " set_config('probe.qworkspace', '%s', true) <> ''", id[2]);
  sees(as_reader(r, id[0], id[1], "0", tok_a, sql), NULL, "betasecret", "set_config in WHERE");
  snprintf(sql, sizeof sql, "WITH x AS MATERIALIZED (SELECT set_config('probe.qworkspace', '0',"
           " true), set_config('probe.qtoken', current_setting('probe.qtoken'), true))"
           " SELECT string_agg(r.name, ' ') FROM x, runs r");
  sees(as_reader(r, id[0], id[1], "0", tok_a, sql), NULL, "betasecret", "current_setting");
  snprintf(sql, sizeof sql, "WITH x AS MATERIALIZED (SELECT set_config('probe.qworkspace', '%s',"
           " true)) SELECT (SELECT string_agg(name, ' ') FROM runs) ||"
           " (SELECT string_agg(title, ' ') FROM notes) FROM x", id[2]);
  sees(as_reader(r, id[0], id[1], "0", tok_a, sql), NULL, "betasecret", "CTE then views");
  sees(as_reader(r, id[0], id[1], "0", tok_a, "SELECT count(*) FROM metric_points WHERE"
                 " set_config('probe.qworkspace', '0', true) <> '' HAVING count(*) > 2"), NULL,
       "4", "metric_points");
  /* the function that checks the token runs inside the views only: the
   * reader cannot name it (no right on the store's schema) */
  snprintf(sql, sizeof sql, "SELECT * FROM %s.probe_query_scope()", st_schema);
  sees(as_reader(r, id[0], id[2], "0", tok_a, sql), "permission denied", NULL, "the function");
  /* its own secrets table does not stand in for the store's */
  free(one(r, "CREATE TEMP TABLE secrets(name text, value bytea)", 0, NULL));
  free(one(r, "INSERT INTO pg_temp.secrets VALUES('query_key', '\\x00')", 0, NULL));
  snprintf(sql, sizeof sql, "%s/%s/0", id[0], id[2]);
  const char *p1[] = {sql};
  char *fake = one(r, "SELECT encode(sha256(value || convert_to($1, 'UTF8') || value), 'hex')"
                      " FROM pg_temp.secrets", 1, p1);
  ck_assert_int_eq((int)strlen(fake), 64);
  sees(as_reader(r, id[0], id[2], "0", fake, runs), NULL, "secret", "a key of its own");
  free(fake);
  /* and the store's tables, key and functions stay out of reach */
  snprintf(sql, sizeof sql, "SELECT value FROM %s.secrets", st_schema);
  sees(one(r, sql, 0, NULL), "permission denied", NULL, "secrets");
  snprintf(sql, sizeof sql, "SELECT name FROM %s.runs", st_schema);
  sees(one(r, sql, 0, NULL), "permission denied", "secret", "the runs table");
  snprintf(sql, sizeof sql, "CREATE OR REPLACE FUNCTION %s.probe_query_scope(OUT tenant BIGINT,"
           " OUT workspace BIGINT, OUT unfiled INT) LANGUAGE sql AS 'SELECT 1::bigint,"
           " 0::bigint, 0'", st_schema);
  sees(one(r, sql, 0, NULL), "ERROR", NULL, "replacing the function");
  snprintf(sql, sizeof sql, "CREATE VIEW %s.mine AS SELECT 1", q);
  sees(one(r, sql, 0, NULL), "permission denied", NULL, "a view of its own");
  free(tok_a), free(tok_t), free(tok_d), free(tok_old), free(tok_g);
  PQfinish(r);
  PQfinish(OWNER);
  OWNER = NULL;
  st_cleanup();
#endif
}
END_TEST

/* A store made before the views kept workspaces (per-tenant views checked
 * by probe_query_tenant(), one version back) is brought to the new views
 * by the migration, and its old per-tenant token proves nothing any
 * more. */
int pmcp__pg_schema_target(void);

START_TEST(upgrades_older_store)
{
#ifdef PMCP_HAVE_POSTGRES
  if (!st_is_pg())
    return;
  pmcp_tenant t;
  pmcp_store_free(populate(&t));
  PGconn *c = OWNER = connect_as("probe_owner", st_schema);
  char sql[2000];
  static const char old_views[] =
           "DROP SCHEMA {S}_sql CASCADE; DROP FUNCTION probe_query_scope();"
           "CREATE FUNCTION probe_query_tenant() RETURNS BIGINT LANGUAGE sql STABLE"
           " SECURITY DEFINER SET search_path FROM CURRENT AS $$"
           " SELECT t.id FROM tenants t, secrets k WHERE k.name='query_key'"
           " AND t.id = nullif(current_setting('probe.qtenant', true), '')::bigint"
           " AND current_setting('probe.qtoken', true) ="
           " encode(sha256(k.value || convert_to(t.id::text, 'UTF8') || k.value), 'hex') $$;"
           "CREATE SCHEMA {S}_sql;"
           "CREATE VIEW {S}_sql.runs WITH (security_barrier) AS SELECT id, name FROM {S}.runs"
           " WHERE tenant_id = {S}.probe_query_tenant();"
           "GRANT USAGE ON SCHEMA {S}_sql TO probe_reader;"
           "GRANT SELECT ON ALL TABLES IN SCHEMA {S}_sql TO probe_reader;"
           "GRANT EXECUTE ON FUNCTION probe_query_tenant() TO probe_reader;";
  pmcp_buf ddl = PMCP_BUF_INIT;
  for (const char *p = old_views; *p; p++)
    if (!strncmp(p, "{S}", 3))
      pmcp__buf_puts(&ddl, st_schema), p += 2;
    else
      pmcp__buf_putc(&ddl, *p);
  /* the version before this program's (the last one without these
   * views when they came) */
  char newest[16];
  snprintf(newest, sizeof newest, "%d", pmcp__pg_schema_target());
  pmcp__buf_printf(&ddl, "UPDATE meta SET value='%d' WHERE key='schema_version'",
                   pmcp__pg_schema_target() - 1);
  snprintf(sql, sizeof sql, "%s", ddl.ptr);
  pmcp_buf_dispose(&ddl);
  sees(one(c, sql, 0, NULL), NULL, "ERROR", "making the old store");
  /* the old views answer the old token with the whole tenant */
  char q[100], tid[24];
  snprintf(q, sizeof q, "%s_sql", st_schema);
  snprintf(tid, sizeof tid, "%lld", (long long)t.id);
  PGconn *r = connect_as("probe_reader", q);
  char *old = token(tid);
  sees(as_reader(r, tid, NULL, NULL, old, "SELECT string_agg(name, ' ') FROM runs"),
       "betasecret", NULL, "the old views");
  PQfinish(r);
  /* the upgrade: a read-write open migrates */
  pmcp_store *s = NULL;
  ST_OK(s, pmcp_store_open(&s, st_path, 0));
  pmcp_store_free(s);
  char *v = one(c, "SELECT value FROM meta WHERE key='schema_version'", 0, NULL);
  ck_assert_str_eq(v, newest);
  free(v);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_proc WHERE proname='probe_query_tenant'"
           " AND pronamespace='%s'::regnamespace", st_schema);
  sees(one(c, sql, 0, NULL), "0", NULL, "the old function");
  snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_views WHERE schemaname='%s'", q);
  sees(one(c, sql, 0, NULL), "27", NULL, "the views");
  r = connect_as("probe_reader", q);
  sees(as_reader(r, tid, "0", "0", old, "SELECT string_agg(name, ' ') FROM runs"), NULL,
       "secret", "the old token");
  PQfinish(r);
  free(old);
  PQfinish(c);
  OWNER = NULL;
  /* and query_sql acting in alpha reads alpha's rows */
  RO = reopen(st_path);
  memset(&P, 0, sizeof P);
  P.is_key = 1;
  P.home = "alpha";
  P.member[0] = "alpha", P.role[0] = "viewer";
  H = serve(RO, 1);
  expect("query_sql", "{\"sql\":\"SELECT name FROM runs\"}", 0, "alphasecret", "betasecret");
  expect("query_sql", "{\"sql\":\"SELECT count(*) FROM metric_points\"}", 0, "[2]", NULL);
  h_free(H);
  H = NULL;
  pmcp_store_free(RO);
  RO = NULL;
  st_cleanup();
#endif
}
END_TEST

int main(void)
{
  Suite *su = suite_create("workspace-scope");
  TCase *tc = tcase_create("store");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, store_scope);
  tcase_add_test(tc, scope_setters);
  suite_add_tcase(su, tc);
  tc = tcase_create("tools");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, key_sees_its_workspace_only);
  tcase_add_test(tc, person_switches_workspace);
  tcase_add_test(tc, tenant_wide_scope_lists_workspaces);
  tcase_add_test(tc, default_workspace_holds_unfiled);
  tcase_add_test(tc, cursor_bound_to_workspace);
  tcase_add_test(tc, hook_of_release_0_1);
  suite_add_tcase(su, tc);
  tc = tcase_create("postgres");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, same_rows_as_sqlite);
  tcase_add_test(tc, reader_cannot_forge);
  tcase_add_test(tc, upgrades_older_store);
  suite_add_tcase(su, tc);
  return st_run_suite(su);
}
