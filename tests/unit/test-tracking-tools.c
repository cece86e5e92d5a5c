/* SPDX-License-Identifier: MIT */
/* The tracking toolset over a real SQLite store: every tool, the filter
 * language through list_runs (the seed's AdamW example checked against
 * answers computed here from the generated data), sorting, columns, offset
 * pages cut by the token budget, and every refusal. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-proxy.h"
#include "store-test-util.h"
#include "tool-call-util.h"

#define N_VISION 40

static pmcp_store *RO;
/* With PMCP_TEST_ROWWISE set, RO is a proxy backend over this store, so
 * list_runs takes its generic run-by-run path (meson: tracking-rowwise). */
static pmcp_store *INNER;

/* The generated data, so expectations are computed independently. */
static const char *opt_of(int i) { return i % 3 == 0 ? "sgd" : "adamw"; }
static double lr_of(int i) { return 0.0001 * (1 + i % 20); }
static double loss_at(int i, int step) { return 2.0 / (1.0 + step * (0.05 + 0.01 * (i % 7))); }
static double last_loss(int i) { return loss_at(i, 90); }
static double min_loss(int i)
{
  double m = INFINITY;
  for (int s = 0; s <= 90; s += 10)
    m = fmin(m, loss_at(i, s));
  return m;
}

static void populate(void)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  pmcp_entity_spec p = PMCP_ENTITY_SPEC_INIT;
  p.id = "vision";
  p.name = "Vision";
  ST_OK(s, pmcp_store_create(s, t, "project", &p, NULL));
  p.id = "nlp";
  p.name = "NLP";
  ST_OK(s, pmcp_store_create(s, t, "project", &p, NULL));
  pmcp_entity_spec e = PMCP_ENTITY_SPEC_INIT;
  e.id = "exp-a";
  e.name = "exp-a";
  e.parent = "vision";
  ST_OK(s, pmcp_store_create(s, t, "experiment", &e, NULL));
  ST_OK(s, pmcp_store_begin(s));
  for (int i = 0; i < N_VISION; i++) {
    char id[32], ref[40];
    snprintf(id, sizeof id, "v%02d", i);
    snprintf(ref, sizeof ref, "run:%s", id);
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = id;
    r.project = "vision";
    r.experiment = i < 10 ? "exp-a" : NULL;
    r.status = i % 5 == 0 ? "failed" : "finished";
    r.created_ms = 1700000000000LL + i * 60000LL;
    ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
    pmcp_value v = {PMCP_V_STRING, opt_of(i), 0, 0, NULL, 0};
    ST_OK(s, pmcp_store_set_attr(s, t, ref, "config/optimizer", &v));
    pmcp_value f = {PMCP_V_FLOAT, NULL, 0, lr_of(i), NULL, 0};
    ST_OK(s, pmcp_store_set_attr(s, t, ref, "config/lr", &f));
    pmcp_value n = {PMCP_V_INT, NULL, 10 + i % 4, 0, NULL, 0};
    ST_OK(s, pmcp_store_set_attr(s, t, ref, "config/layers", &n));
    ST_OK(s, pmcp_store_tag(s, t, ref, i % 2 ? "odd" : "even", 1));
    if (i % 8 == 0)
      continue; /* runs without a validation loss */
    pmcp_series_spec ss = {PMCP_SERIES_SPEC_VERSION, "val/loss", NULL, 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
    int64_t sid;
    ST_OK(s, pmcp_store_series(s, t, id, &ss, &sid));
    pmcp_point pts[10];
    for (int k = 0; k < 10; k++) {
      pts[k].step = k * 10;
      pts[k].time_ms = r.created_ms + k * 1000;
      pts[k].value = loss_at(i, k * 10);
    }
    ST_OK(s, pmcp_store_log(s, t, sid, pts, 10));
    pmcp_label lab = {"rank", "0"};
    pmcp_series_spec ls = {PMCP_SERIES_SPEC_VERSION, "train/loss", &lab, 1, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
    ST_OK(s, pmcp_store_series(s, t, id, &ls, &sid));
    ST_OK(s, pmcp_store_log(s, t, sid, pts, 3));
  }
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "n00";
  r.project = "nlp";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  ST_OK(s, pmcp_store_commit(s));
  pmcp_store_free(s);
  ck_assert_int_eq(pmcp_store_open(&RO, st_path, PMCP_STORE_READONLY), 0);
  if (getenv("PMCP_TEST_ROWWISE")) {
    INNER = RO;
    ck_assert_int_eq(px_open(&RO, INNER), 0);
  }
}

static void setup_opts(const char *project)
{
  populate();
  tc_server_new();
  pmcp_tracking_options o = PMCP_TRACKING_OPTIONS_INIT;
  o.project = project;
  ck_assert_int_eq(pmcp_tracking_register(tc_server(), RO, &o), 0);
  /* "all": the research toolset beside it on one server and store */
  ck_assert_int_eq(pmcp_research_register(tc_server(), RO, NULL), 0);
  tc_initialize();
}

static void setup(void) { setup_opts(NULL); }
static void setup_default_project(void) { setup_opts("vision"); }

static void teardown(void)
{
  tc_server_free();
  pmcp_store_free(RO);
  RO = NULL;
  pmcp_store_free(INNER);
  INNER = NULL;
  st_cleanup();
}

/* Both toolsets on one store handle, their calls run at once on the
 * server's workers: every store use must be serialized on the handle (the
 * two toolsets once had a lock each, and on PostgreSQL concurrent calls
 * mixed up prepared statements, failed with store errors and hung). Every
 * call must succeed; the first query_sql also opens its connection
 * through the store's here. */
START_TEST(both_toolsets_concurrently)
{
  static const char *const calls[][2] = {
    {"query_sql", "{\"sql\":\"SELECT count(*) AS n FROM runs\"}"},
    {"list_runs", "{\"project\":\"vision\",\"limit\":5}"},
    {"browse", "{\"mode\":\"tree\"}"},
    {"list_workspaces", "{}"},
    {"search", "{\"query\":\"vision\"}"},
    {"list_metrics", "{\"project\":\"vision\"}"},
    {"browse", "{\"mode\":\"runs\",\"limit\":3}"},
    {"list_projects", "{}"},
  };
  /* the proxy backend (tracking-rowwise) offers no SQL: no query_sql */
  const size_t skip = getenv("PMCP_TEST_ROWWISE") ? 1 : 0;
  const size_t n = sizeof calls / sizeof calls[0] - skip;
  for (int round = 0; round < 4; round++) {
    cJSON *all = tc_burst(calls + skip, n);
    ck_assert_int_eq(cJSON_GetArraySize(all), (int)n);
    const cJSON *r;
    cJSON_ArrayForEach(r, all)
    {
      char *t = cJSON_PrintUnformatted(r);
      const cJSON *res = cJSON_GetObjectItem(r, "result");
      ck_assert_msg(res && !cJSON_IsTrue(cJSON_GetObjectItem(res, "isError")),
                    "round %d: %s", round, t);
      free(t);
    }
    cJSON_Delete(all);
  }
}
END_TEST

static void discard(const pmcp_out *m, void *ud)
{
  (void)m;
  (void)ud;
}

START_TEST(tools_listed)
{
  cJSON *r = tc_rpc("tools/list", "{}");
  char *t = cJSON_PrintUnformatted(r);
  static const char *const names[] = {"list_workspaces", "list_projects", "list_experiments",
                                      "list_runs", "get_run_attributes",
                                      "list_attribute_definitions", "list_metrics", "browse"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char q[64];
    snprintf(q, sizeof q, "\"name\":\"%s\"", names[i]);
    ck_assert_msg(strstr(t, q) != NULL, "%s missing", names[i]);
  }
  free(t);
  cJSON_Delete(r);
  /* a writable store is refused, as for research */
  pmcp_store *w = NULL;
  ck_assert_int_eq(pmcp_store_open(&w, st_path, 0), 0);
  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  so.name = "second";
  so.sink = discard;
  pmcp_server *srv = NULL;
  ck_assert_int_eq(pmcp_server_new(&srv, &so), 0);
  ck_assert_int_eq(pmcp_tracking_register(srv, w, NULL), PMCP_EINVAL);
  pmcp_tracking_options bad = PMCP_TRACKING_OPTIONS_INIT;
  bad.version = 99;
  ck_assert_int_eq(pmcp_tracking_register(srv, RO, &bad), PMCP_EINVAL);
  bad.version = PMCP_TRACKING_OPTIONS_VERSION;
  bad.tenant = "nobody";
  ck_assert_int_eq(pmcp_tracking_register(srv, RO, &bad), PMCP_ENOTFOUND);
  pmcp_server_free(srv);
  pmcp_store_free(w);
}
END_TEST

START_TEST(workspaces_projects_experiments)
{
  cJSON *o = tc_ok("list_workspaces", "{}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 1);
  ck_assert_int_eq((int)tc_num(o, "count"), 1);
  cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "workspaces"), 0);
  ck_assert_int_eq((int)tc_num(w, "project_count"), 2);
  ck_assert_str_eq(tc_str(w, "role"), "viewer");
  char args[200];
  snprintf(args, sizeof args, "{\"workspace\":\"%s\"}", tc_str(w, "workspace"));
  cJSON_Delete(o);
  o = tc_ok("list_projects", args);
  ck_assert_int_eq((int)tc_num(o, "total_count"), 2);
  const cJSON *p;
  int seen = 0;
  cJSON_ArrayForEach(p, cJSON_GetObjectItem(o, "projects"))
  {
    if (!strcmp(tc_str(p, "project"), "vision")) {
      ck_assert_int_eq((int)tc_num(p, "run_count"), N_VISION);
      ck_assert_int_eq((int)tc_num(p, "experiment_count"), 1);
      seen++;
    }
  }
  ck_assert_int_eq(seen, 1);
  cJSON_Delete(o);
  o = tc_ok("list_projects", "{\"limit\":1}");
  ck_assert_int_eq((int)tc_num(o, "count"), 1);
  ck_assert_int_eq((int)tc_num(o, "next_offset"), 1);
  cJSON_Delete(o);
  o = tc_ok("list_projects", "{\"limit\":1,\"offset\":1}");
  ck_assert_ptr_null(cJSON_GetObjectItem(o, "next_offset"));
  cJSON_Delete(o);
  tc_refused("list_projects", "{\"workspace\":\"nowhere\"}", "workspace 'nowhere' not found");
  o = tc_ok("list_experiments", "{\"project\":\"vision\"}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 1);
  cJSON *x = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "experiments"), 0);
  ck_assert_str_eq(tc_str(x, "experiment"), "exp-a");
  ck_assert_int_eq((int)tc_num(x, "run_count"), 10);
  cJSON_Delete(o);
  tc_refused("list_experiments", "{\"project\":\"ghost\"}", "project 'ghost' not found");
  /* two projects and no default: the project must be named */
  tc_refused("list_experiments", "{}", "pass project");
  tc_refused("list_experiments", "{\"project\":\"vision\",\"workspace\":\"other\"}",
          "not found in workspace 'other'");
  tc_refused("list_workspaces", "{\"cursor\":\"abc\"}", "offset");
}
END_TEST

/* Runs of the generated data matching @p pred, as a sorted id list. */
static void expected(int (*pred)(int), char *out, size_t size)
{
  out[0] = '\0';
  for (int i = 0; i < N_VISION; i++)
    if (pred(i)) {
      char id[8];
      snprintf(id, sizeof id, "v%02d,", i);
      strncat(out, id, size - strlen(out) - 1);
    }
}

static void got(const cJSON *o, char *out, size_t size)
{
  /* ids sorted ascending: the table is newest first */
  const cJSON *rows = cJSON_GetObjectItem(o, "rows");
  int n = cJSON_GetArraySize(rows);
  char ids[64][8];
  for (int i = 0; i < n && i < 64; i++)
    snprintf(ids[i], 8, "%s", tc_str(cJSON_GetArrayItem(rows, i), "run"));
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && strcmp(ids[j - 1], ids[j]) > 0; j--) {
      char t[8];
      memcpy(t, ids[j], 8);
      memcpy(ids[j], ids[j - 1], 8);
      memcpy(ids[j - 1], t, 8);
    }
  out[0] = '\0';
  for (int i = 0; i < n; i++) {
    strncat(out, ids[i], size - strlen(out) - 1);
    strncat(out, ",", size - strlen(out) - 1);
  }
}

static int seed_pred(int i)
{
  return !strcmp(opt_of(i), "adamw") && (lr_of(i) < 0.001 || (i % 8 && last_loss(i) < 0.5));
}

START_TEST(seed_example)
{
  cJSON *o = tc_ok("list_runs",
                "{\"project\":\"vision\",\"limit\":100,\"filter\":["
                "{\"attr\":\"config/optimizer\",\"op\":\"eq\",\"value\":\"adamw\"},"
                "{\"any_of\":[{\"attr\":\"config/lr\",\"op\":\"lt\",\"value\":0.001},"
                "{\"series\":\"val/loss\",\"function\":\"last\",\"op\":\"lt\",\"value\":0.5}]}]}");
  char want[512], have[512];
  expected(seed_pred, want, sizeof want);
  got(o, have, sizeof have);
  ck_assert_str_eq(have, want);
  ck_assert_int_eq((int)tc_num(o, "total_count"), (int)(strlen(want) / 4));
  ck_assert(strlen(want) > 4 * 5); /* the example selects a real subset */
  cJSON_Delete(o);
}
END_TEST

static int tag_odd_failed(int i) { return i % 2 == 1 && i % 5 == 0; }
static int tag_odd_failed_lt20(int i) { return i < 20 && tag_odd_failed(i); }
static int has_loss(int i) { return i % 8 != 0; }
static int no_loss(int i) { return i % 8 == 0; }
static int lr_in(int i) { return fabs(lr_of(i) - 0.0002) < 1e-12 || fabs(lr_of(i) - 0.0003) < 1e-12; }

START_TEST(filters_through_list_runs)
{
  static const struct { const char *filter; int (*pred)(int); } cases[] = {
    {"[{\"attr\":\"sys/tags\",\"op\":\"contains\",\"value\":\"odd\"},"
     "{\"attr\":\"sys/state\",\"op\":\"eq\",\"value\":\"failed\"}]", tag_odd_failed},
    {"[{\"series\":\"val/loss\",\"op\":\"exists\"}]", has_loss},
    {"[{\"series\":\"val/loss\",\"op\":\"exists\",\"value\":false}]", no_loss},
    {"[{\"attr\":\"config/lr\",\"op\":\"in\",\"value\":[0.0002,0.0003]}]", lr_in},
    {"[{\"attr\":\"sys/id\",\"op\":\"matches\",\"value\":\"^v(0[0-9]|1[0-9])$\"},"
     "{\"attr\":\"sys/tags\",\"op\":\"contains\",\"value\":\"odd\"},"
     "{\"attr\":\"sys/state\",\"op\":\"eq\",\"value\":\"failed\"}]", tag_odd_failed_lt20},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char args[1024];
    snprintf(args, sizeof args, "{\"project\":\"vision\",\"limit\":100,\"filter\":%s}",
             cases[c].filter);
    cJSON *o = tc_ok("list_runs", args);
    char want[512], have[512];
    expected(cases[c].pred, want, sizeof want);
    got(o, have, sizeof have);
    ck_assert_msg(!strcmp(have, want), "case %zu: %s != %s", c, have, want);
    cJSON_Delete(o);
  }
  /* labelled series are found by their labels */
  cJSON *o = tc_ok("list_runs", "{\"project\":\"vision\",\"limit\":100,\"filter\":[{\"series\":"
                             "\"train/loss\",\"op\":\"exists\",\"labels\":{\"rank\":\"0\"}}]}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 35);
  cJSON_Delete(o);
  o = tc_ok("list_runs", "{\"project\":\"vision\",\"filter\":[{\"series\":"
                      "\"train/loss\",\"op\":\"exists\",\"labels\":{\"rank\":\"1\"}}]}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 0);
  cJSON_Delete(o);
}
END_TEST

START_TEST(sorting_and_columns)
{
  cJSON *o = tc_ok("list_runs",
                "{\"project\":\"vision\",\"limit\":100,\"sort\":{\"series\":\"val/loss\","
                "\"function\":\"min\",\"direction\":\"asc\"},\"columns\":[\"config/lr\"],"
                "\"summary_columns\":[{\"series\":\"val/loss\",\"function\":\"last\"}]}");
  const cJSON *rows = cJSON_GetObjectItem(o, "rows");
  ck_assert_int_eq(cJSON_GetArraySize(rows), N_VISION);
  double prev = -1;
  int i = 0;
  const cJSON *r;
  cJSON_ArrayForEach(r, rows)
  {
    int run = atoi(tc_str(r, "run") + 1);
    ck_assert(fabs(tc_num(r, "config/lr") - lr_of(run)) < 1e-9);
    if (i < 35) { /* runs with the series come first, ascending */
      double m = tc_num(r, "min(val/loss)");
      ck_assert(fabs(m - min_loss(run)) <= 1e-5 * min_loss(run));
      ck_assert(fabs(tc_num(r, "last(val/loss)") - last_loss(run)) <= 1e-5);
      ck_assert(m >= prev);
      prev = m;
    } else { /* missing values last, and no made-up column */
      ck_assert_ptr_null(cJSON_GetObjectItem(r, "min(val/loss)"));
      ck_assert_int_eq(run % 8, 0);
    }
    i++;
  }
  cJSON_Delete(o);
  o = tc_ok("list_runs", "{\"project\":\"vision\",\"limit\":3,"
                      "\"sort\":{\"attr\":\"config/lr\",\"direction\":\"desc\"}}");
  rows = cJSON_GetObjectItem(o, "rows");
  ck_assert(fabs(tc_num(cJSON_GetArrayItem(rows, 0), "config/lr") - 0.002) < 1e-12);
  ck_assert_str_eq(tc_str(cJSON_GetArrayItem(rows, 0), "sys/state"), "finished");
  ck_assert_int_eq((int)tc_num(o, "next_offset"), 3);
  cJSON_Delete(o);
  /* default order: newest first */
  o = tc_ok("list_runs", "{\"project\":\"vision\",\"limit\":1}");
  ck_assert_str_eq(tc_str(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "rows"), 0), "run"), "v39");
  cJSON_Delete(o);
}
END_TEST

START_TEST(budget_cut_pages)
{
  /* at the smallest budget 100 wide rows cannot fit: the page is cut,
   * next_offset is the first row not returned, and offsets continue */
#define BASE "{\"project\":\"vision\",\"limit\":100,\"token_budget\":512," \
             "\"columns\":[\"sys/name\",\"config/optimizer\",\"config/lr\"," \
             "\"sys/creation_time\"],\"offset\":%d}"
  int offset = 0, pages = 0, seen = 0;
  char seen_ids[N_VISION] = {0};
  while (offset >= 0 && pages < 50) {
    char args[400];
    snprintf(args, sizeof args, BASE, offset);
    cJSON *o = tc_ok("list_runs", args);
    int count = (int)tc_num(o, "count");
    ck_assert_int_gt(count, 0);
    ck_assert_int_eq((int)tc_num(o, "total_count"), N_VISION);
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(o, "rows"))
    {
      int id = atoi(tc_str(r, "run") + 1);
      ck_assert_int_eq(seen_ids[id], 0);
      seen_ids[id] = 1;
      seen++;
    }
    const cJSON *next = cJSON_GetObjectItem(o, "next_offset");
    if (next) {
      ck_assert_int_eq((int)next->valuedouble, offset + count);
      ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "truncated")));
      ck_assert_ptr_nonnull(cJSON_GetObjectItem(o, "hint"));
      offset = (int)next->valuedouble;
    } else {
      offset = -1;
    }
    pages++;
    cJSON_Delete(o);
  }
  ck_assert_int_gt(pages, 1);
  ck_assert_int_eq(seen, N_VISION);
}
END_TEST

START_TEST(list_runs_refusals)
{
  tc_refused("list_runs", "{\"project\":\"vision\",\"filter\":[{\"any_of\":[{\"any_of\":[]}]}]}",
          "do not nest");
  tc_refused("list_runs", "{\"project\":\"vision\",\"filter\":[{\"attr\":\"a\",\"op\":\"near\","
                       "\"value\":1}]}", "unknown op");
  tc_refused("list_runs", "{\"project\":\"vision\",\"filter\":[{\"attr\":\"a\",\"op\":\"matches\","
                       "\"value\":\"(a)\\\\1\"}]}", "invalid RE2");
  tc_refused("list_runs", "{\"project\":\"vision\",\"filter\":[{\"series\":\"val/loss\","
                       "\"op\":\"exists\",\"scale\":\"HOURS\"}]}", "unknown scale 'HOURS'");
  tc_refused("list_runs", "{\"project\":\"vision\",\"sort\":{\"attr\":\"x\",\"direction\":\"up\"}}",
          "direction");
  tc_refused("list_runs", "{\"project\":\"vision\",\"summary_columns\":[{\"attr\":\"x\"}]}",
          "summary_columns[0]");
  tc_refused("list_runs", "{\"project\":\"vision\",\"summary_columns\":[{\"series\":\"x\"}]}",
          "series sort needs");
  tc_refused("list_runs", "{\"project\":\"ghost\"}", "project 'ghost' not found");
  tc_refused("list_runs", "{}", "pass project");
  tc_refused("list_runs", "{\"project\":\"vision\",\"cursor\":\"x\"}", "offset");
}
END_TEST

/* train/loss is logged only split by the rank label: a condition, sort or
 * summary column on it without labels would read one split silently, so
 * it is refused naming the label sets; with labels it is exact; exists
 * needs none (any split holds). */
START_TEST(label_split_series)
{
  tc_refused("list_runs", "{\"project\":\"vision\",\"filter\":[{\"series\":\"train/loss\","
                       "\"function\":\"last\",\"op\":\"gt\",\"value\":0.5}]}",
          "filter condition 0: series 'train/loss' is split by labels in some runs "
          "({\\\"rank\\\":\\\"0\\\"}): add \\\"labels\\\"");
  tc_refused("list_runs", "{\"project\":\"vision\",\"filter\":[{\"any_of\":[{\"attr\":"
                       "\"config/lr\",\"op\":\"gt\",\"value\":1},{\"series\":\"train/loss\","
                       "\"function\":\"min\",\"op\":\"lt\",\"value\":1}]}]}",
          "any_of item 1: series 'train/loss' is split");
  tc_refused("list_runs", "{\"project\":\"vision\",\"sort\":{\"series\":\"train/loss\","
                       "\"function\":\"last\",\"direction\":\"asc\"}}", "sort: series");
  tc_refused("list_runs", "{\"project\":\"vision\",\"summary_columns\":[{\"series\":"
                       "\"train/loss\",\"function\":\"last\"}]}", "summary_columns[0]: series");
  int want = 0, with = 0;
  for (int i = 0; i < N_VISION; i++)
    if (i % 8 != 0) {
      with++;
      want += loss_at(i, 20) > 0.8;
    }
  ck_assert(want > 0 && want < with);
  cJSON *o = tc_ok("list_runs", "{\"project\":\"vision\",\"limit\":100,\"filter\":[{"
                             "\"series\":\"train/loss\",\"function\":\"last\",\"op\":\"gt\","
                             "\"value\":0.8,\"labels\":{\"rank\":\"0\"}}]}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), want);
  cJSON_Delete(o);
  o = tc_ok("list_runs", "{\"project\":\"vision\",\"limit\":100,\"filter\":[{"
                      "\"series\":\"train/loss\",\"op\":\"exists\"}]}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), with);
  cJSON_Delete(o);
  /* columns that differ only in labels get their own keys */
  o = tc_ok("list_runs", "{\"project\":\"vision\",\"limit\":3,\"sort\":{\"attr\":"
                      "\"sys/name\",\"direction\":\"asc\"},\"summary_columns\":["
                      "{\"series\":\"train/loss\",\"function\":\"last\",\"labels\":"
                      "{\"rank\":\"0\"}},{\"series\":\"train/loss\",\"function\":\"last\","
                      "\"labels\":{\"rank\":\"1\"}}]}");
  const cJSON *row = cJSON_GetArrayItem(tc_arr(o, "rows"), 1); /* v01 */
  ck_assert(fabs(tc_num(row, "last(train/loss, rank=0)") - loss_at(1, 20)) < 1e-5);
  int keys = 0;
  const cJSON *k;
  cJSON_ArrayForEach(k, row) keys += !strncmp(k->string, "last(train/loss", 15);
  ck_assert_int_eq(keys, 1 + (cJSON_GetObjectItem(row, "last(train/loss, rank=1)") != NULL));
  cJSON_Delete(o);
  tc_refused("list_runs", "{\"project\":\"vision\",\"summary_columns\":[{\"series\":"
                       "\"val/loss\",\"function\":\"last\"},{\"series\":\"val/loss\","
                       "\"function\":\"last\"}]}", "summary_columns[1] repeats");
  /* val/loss has no label: no refusal */
  o = tc_ok("list_runs", "{\"project\":\"vision\",\"filter\":[{\"series\":\"val/loss\","
                      "\"function\":\"last\",\"op\":\"gt\",\"value\":0}]}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), with);
  cJSON_Delete(o);
}
END_TEST

START_TEST(run_attributes)
{
  cJSON *o = tc_ok("get_run_attributes", "{\"run\":\"v05\"}");
  ck_assert_str_eq(tc_str(o, "run"), "v05");
  int found = 0;
  const cJSON *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItem(o, "attributes"))
  {
    const char *p = tc_str(a, "path");
    const cJSON *v = cJSON_GetObjectItem(a, "value");
    if (!strcmp(p, "config/optimizer"))
      found += !strcmp(v->valuestring, opt_of(5));
    else if (!strcmp(p, "config/lr"))
      found += fabs(v->valuedouble - lr_of(5)) < 1e-12;
    else if (!strcmp(p, "sys/state"))
      found += !strcmp(v->valuestring, "failed");
    else if (!strcmp(p, "sys/tags"))
      found += cJSON_GetArraySize(v) == 1 && !strcmp(cJSON_GetArrayItem(v, 0)->valuestring, "odd");
    else if (!strcmp(p, "sys/project"))
      found += !strcmp(v->valuestring, "vision");
  }
  ck_assert_int_eq(found, 5);
  cJSON_Delete(o);
  o = tc_ok("get_run_attributes", "{\"run\":\"run:v05\",\"paths\":[\"config\"]}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 3);
  cJSON_Delete(o);
  o = tc_ok("get_run_attributes", "{\"run\":\"v05\",\"limit\":2}");
  ck_assert_int_eq((int)tc_num(o, "next_offset"), 2);
  cJSON_Delete(o);
  tc_refused("get_run_attributes", "{\"run\":\"nope\"}", "run 'nope' not found");
  tc_refused("get_run_attributes", "{\"run\":\"v05\",\"project\":\"nlp\"}",
          "run 'v05' not found in project 'nlp'");
  int e;
  cJSON *r = tc_call("get_run_attributes", "{}", &e);
  ck_assert(e);
  cJSON_Delete(r);
}
END_TEST

START_TEST(definitions_and_metrics)
{
  cJSON *o = tc_ok("list_attribute_definitions", "{\"limit\":100}");
  ck_assert_str_eq(tc_str(o, "project"), "vision"); /* the connection's default */
  int hits = 0;
  const cJSON *d;
  cJSON_ArrayForEach(d, cJSON_GetObjectItem(o, "attributes"))
  {
    if (!strcmp(tc_str(d, "path"), "config/lr"))
      hits += !strcmp(tc_str(d, "type"), "float") && (int)tc_num(d, "run_count") == N_VISION;
    if (!strcmp(tc_str(d, "path"), "config/layers"))
      hits += !strcmp(tc_str(d, "type"), "int");
    if (!strcmp(tc_str(d, "path"), "sys/tags"))
      hits += !strcmp(tc_str(d, "type"), "string_set");
  }
  ck_assert_int_eq(hits, 3);
  cJSON_Delete(o);
  o = tc_ok("list_metrics", "{}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 2);
  const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "metrics"), 0);
  ck_assert_str_eq(tc_str(m, "name"), "train/loss");
  ck_assert_str_eq(tc_str(m, "scale"), "STEP");
  ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "label_keys"), 0)->valuestring,
                   "rank");
  ck_assert_int_eq((int)tc_num(m, "series_count"), 35);
  cJSON_Delete(o);
  tc_refused("list_metrics", "{\"project\":\"ghost\"}", "project 'ghost' not found");
}
END_TEST

START_TEST(scale_argument)
{
  /* `scale` defaults to STEP: the same answer either way */
  cJSON *a = tc_ok("fetch_series_summaries", "{\"runs\":[\"v01\"],\"series\":[\"val/loss\"]}");
  cJSON *b = tc_ok("fetch_series_summaries", "{\"runs\":[\"v01\"],\"series\":[\"val/loss\"],"
                   "\"scale\":\"STEP\"}");
  char *ta = cJSON_PrintUnformatted(a), *tb = cJSON_PrintUnformatted(b);
  ck_assert_str_eq(ta, tb);
  const cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "summaries"), 0);
  ck_assert(fabs(tc_num(e, "last") - last_loss(1)) <= 1e-5 * last_loss(1));
  cJSON_free(ta);
  cJSON_free(tb);
  cJSON_Delete(a);
  cJSON_Delete(b);
  /* another scale reads that scale's series: none logged on EPISODE */
  a = tc_ok("list_series", "{\"runs\":[\"v01\"],\"scale\":\"EPISODE\"}");
  ck_assert_int_eq((int)tc_num(a, "total_count"), 0);
  cJSON_Delete(a);
  a = tc_ok("list_series", "{\"runs\":[\"v01\"]}");
  ck_assert_int_gt((int)tc_num(a, "total_count"), 0);
  cJSON_Delete(a);
  /* the argument takes the tools' names only */
  tc_refused("fetch_series_summaries", "{\"runs\":[\"v01\"],\"series\":[\"val/loss\"],"
             "\"scale\":\"step\"}", "scale");
  tc_refused("list_series", "{\"runs\":[\"v01\"],\"scale\":\"EPOCH\"}", "scale");
}
END_TEST

START_TEST(fetch_summaries_and_buckets)
{
  cJSON *o = tc_ok("fetch_series_summaries",
                "{\"runs\":[\"v01\",\"run:v02\",\"v08\"],\"series\":[\"val/loss\"]}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 2); /* v08 logged no val/loss */
  const cJSON *e;
  cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "summaries"))
  {
    int run = atoi(tc_str(e, "run") + 1);
    ck_assert_str_eq(tc_str(e, "series"), "val/loss");
    ck_assert(fabs(tc_num(e, "last") - last_loss(run)) <= 1e-5 * last_loss(run));
    ck_assert(fabs(tc_num(e, "min") - min_loss(run)) <= 1e-5 * min_loss(run));
    ck_assert(fabs(tc_num(e, "first") - 2.0) < 1e-9);
    ck_assert_int_eq((int)tc_num(e, "count"), 10);
  }
  cJSON_Delete(o);
  o = tc_ok("fetch_series_summaries", "{\"runs\":[\"v01\"],\"series\":[\"train/loss\"],"
                                   "\"labels\":{\"rank\":\"0\"}}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 1);
  e = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "summaries"), 0);
  ck_assert_str_eq(tc_str(cJSON_GetObjectItem(e, "labels"), "rank"), "0");
  ck_assert_int_eq((int)tc_num(e, "count"), 3);
  cJSON_Delete(o);
  o = tc_ok("fetch_series_summaries", "{\"runs\":[\"v01\"],\"series\":[\"train/loss\"],"
                                   "\"labels\":{\"rank\":\"7\"}}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 0);
  cJSON_Delete(o);
  tc_refused("fetch_series_summaries", "{\"runs\":[\"ghost\"],\"series\":[\"val/loss\"]}",
          "'ghost' not found");
  tc_refused("fetch_series_summaries",
          "{\"runs\":[\"v01\"],\"series\":[\"val/loss\"],\"project\":\"nlp\"}",
          "run 'v01' not found in project 'nlp'");
  tc_refused("fetch_series_summaries",
          "{\"runs\":[\"v01\"],\"series\":[\"val/loss\"],\"labels\":{\"rank\":0}}",
          "label \\\"rank\\\"");

  /* step axis: 10 buckets over steps 0..90 hold one point each */
  o = tc_ok("fetch_float_series_buckets",
         "{\"runs\":[\"v03\",\"v04\"],\"series\":[\"val/loss\"],\"buckets\":10}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 2);
  cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "entries"))
  {
    int run = atoi(tc_str(e, "run") + 1);
    const cJSON *st = cJSON_GetObjectItem(e, "step"), *mean = cJSON_GetObjectItem(e, "mean");
    ck_assert_int_eq(cJSON_GetArraySize(st), 10);
    for (int k = 0; k < 10; k++) {
      ck_assert_int_eq(cJSON_GetArrayItem(st, k)->valueint, k * 10);
      double want = loss_at(run, k * 10);
      ck_assert(fabs(cJSON_GetArrayItem(mean, k)->valuedouble - want) <= 1e-5 * want);
      ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(e, "count"), k)->valueint, 1);
    }
  }
  cJSON_Delete(o);
  /* two buckets: counts add up, min/max bound the mean */
  o = tc_ok("fetch_float_series_buckets",
         "{\"runs\":[\"v03\"],\"series\":[\"val/loss\"],\"buckets\":2}");
  e = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "entries"), 0);
  int total = 0;
  for (int k = 0; k < cJSON_GetArraySize(cJSON_GetObjectItem(e, "count")); k++) {
    total += cJSON_GetArrayItem(cJSON_GetObjectItem(e, "count"), k)->valueint;
    double m = cJSON_GetArrayItem(cJSON_GetObjectItem(e, "mean"), k)->valuedouble;
    ck_assert(m >= cJSON_GetArrayItem(cJSON_GetObjectItem(e, "min"), k)->valuedouble);
    ck_assert(m <= cJSON_GetArrayItem(cJSON_GetObjectItem(e, "max"), k)->valuedouble);
  }
  ck_assert_int_eq(total, 10);
  cJSON_Delete(o);
  /* an explicit range is kept as given, far wider than the points: the
   * edges are the range's, and one bucket holds all ten points */
  o = tc_ok("fetch_float_series_buckets", "{\"runs\":[\"v03\",\"v04\"],\"series\":"
         "[\"val/loss\"],\"buckets\":4,\"step_from\":-4000000000000000,"
         "\"step_to\":3999999999999999}");
  ck_assert_int_eq(cJSON_GetArraySize(tc_arr(o, "bucket_edges")), 5);
  ck_assert(tc_num(o, "bucket_width_steps") == 2e15);
  cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "entries"))
  {
    ck_assert_int_eq(cJSON_GetArraySize(tc_arr(e, "count")), 1);
    ck_assert_int_eq(cJSON_GetArrayItem(tc_arr(e, "count"), 0)->valueint, 10);
    ck_assert(cJSON_GetArrayItem(tc_arr(e, "step"), 0)->valuedouble == 0);
  }
  cJSON_Delete(o);
  /* relative time: seconds since the run's first point */
  o = tc_ok("fetch_float_series_buckets", "{\"runs\":[\"v03\"],\"series\":[\"val/loss\"],"
                                       "\"buckets\":10,\"axis\":\"relative_time\"}");
  e = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "entries"), 0);
  const cJSON *rt = cJSON_GetObjectItem(e, "relative_time_s");
  ck_assert_int_eq(cJSON_GetArraySize(rt), 10);
  /* points at 0..9 s: 10 buckets of 0.901 s (9.001 s of milliseconds),
   * each entry's x the bucket's first edge, the edges stated once */
  ck_assert(fabs(cJSON_GetArrayItem(rt, 9)->valuedouble - 8.109) < 1e-9);
  ck_assert(fabs(tc_num(o, "bucket_width_s") - 0.901) < 1e-9);
  ck_assert_int_eq(cJSON_GetArraySize(tc_arr(o, "bucket_edges")), 11);
  ck_assert(fabs(cJSON_GetArrayItem(tc_arr(o, "bucket_edges"), 10)->valuedouble - 9.001) <
            1e-9);
  cJSON_Delete(o);
  o = tc_ok("fetch_float_series_buckets", "{\"runs\":[\"v03\"],\"series\":[\"val/loss\"],"
                                       "\"buckets\":5,\"axis\":\"wall_clock\"}");
  e = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "entries"), 0);
  ck_assert(cJSON_IsString(cJSON_GetArrayItem(cJSON_GetObjectItem(e, "wall_time"), 0)));
  cJSON_Delete(o);
  tc_refused("fetch_float_series_buckets", "{\"runs\":[\"nope\"],\"series\":[\"val/loss\"]}",
          "'nope' not found");
  int er;
  cJSON *r = tc_call("fetch_float_series_buckets",
                  "{\"runs\":[\"v03\"],\"series\":[\"val/loss\"],\"axis\":\"hours\"}", &er);
  ck_assert(er);
  cJSON_Delete(r);
}
END_TEST

START_TEST(series_listings)
{
  cJSON *o = tc_ok("list_series", "{\"runs\":[\"v01\",\"v08\"]}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 2); /* v08 has none */
  int seen = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "series"))
  {
    ck_assert_str_eq(tc_str(e, "run"), "v01");
    ck_assert_str_eq(tc_str(e, "scale"), "STEP");
    if (!strcmp(tc_str(e, "series"), "train/loss"))
      seen += (int)tc_num(e, "count") == 3 && cJSON_GetObjectItem(e, "labels") != NULL;
    if (!strcmp(tc_str(e, "series"), "val/loss"))
      seen += (int)tc_num(e, "count") == 10 && cJSON_GetObjectItem(e, "labels") == NULL;
  }
  ck_assert_int_eq(seen, 2);
  cJSON_Delete(o);
  o = tc_ok("list_series", "{\"runs\":[\"v01\"],\"series\":[\"val/loss\"]}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 1);
  cJSON_Delete(o);
  o = tc_ok("list_series", "{\"runs\":[\"v01\"],\"scale\":\"EPISODE\"}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 0);
  cJSON_Delete(o);
  o = tc_ok("list_series_label_values", "{\"runs\":[\"v01\"]}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 1);
  e = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "labels"), 0);
  ck_assert_str_eq(tc_str(e, "label"), "rank");
  ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(e, "values"), 0)->valuestring, "0");
  cJSON_Delete(o);
  tc_refused("list_series", "{\"runs\":[\"zzz\"]}", "'zzz' not found");
  tc_refused("list_series_label_values", "{\"runs\":[\"zzz\"]}", "'zzz' not found");
  int er;
  cJSON *r = tc_call("list_series_label_values", "{\"runs\":[\"v01\",\"v02\"]}", &er);
  ck_assert(er);
  cJSON_Delete(r);
}
END_TEST

START_TEST(float_points)
{
  cJSON *o = tc_ok("fetch_float_series", "{\"runs\":[\"v03\"],\"series\":[\"val/loss\"]}");
  cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "entries"), 0);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(e, "value")), 10);
  for (int k = 0; k < 10; k++) {
    ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(e, "step"), k)->valueint, k * 10);
    double v = cJSON_GetArrayItem(cJSON_GetObjectItem(e, "value"), k)->valuedouble;
    ck_assert(fabs(v - loss_at(3, k * 10)) <= 1e-5 * loss_at(3, k * 10));
  }
  ck_assert_ptr_null(cJSON_GetObjectItem(e, "bucketed"));
  cJSON_Delete(o);
  /* the last N points */
  o = tc_ok("fetch_float_series",
         "{\"runs\":[\"v03\"],\"series\":[\"val/loss\"],\"max_points\":3}");
  e = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "entries"), 0);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(e, "step")), 3);
  ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(e, "step"), 0)->valueint, 70);
  ck_assert_int_eq((int)tc_num(e, "points_before"), 7);
  cJSON_Delete(o);
  /* a range within max_points is exact */
  o = tc_ok("fetch_float_series", "{\"runs\":[\"v03\"],\"series\":[\"val/loss\"],"
                               "\"step_from\":20,\"step_to\":40}");
  e = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "entries"), 0);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(e, "step")), 3);
  cJSON_Delete(o);
  /* too wide a range comes back bucketed and says so */
  o = tc_ok("fetch_float_series", "{\"runs\":[\"v03\"],\"series\":[\"val/loss\"],"
                               "\"step_from\":0,\"step_to\":90,\"max_points\":4}");
  e = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "entries"), 0);
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(e, "bucketed")));
  ck_assert_int_eq((int)tc_num(e, "points_in_range"), 10);
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(o, "note"));
  int total = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(e, "count")) total += c->valueint;
  ck_assert_int_eq(total, 10);
  ck_assert_int_le(cJSON_GetArraySize(cJSON_GetObjectItem(e, "count")), 4);
  cJSON_Delete(o);
  tc_refused("fetch_float_series", "{\"runs\":[\"v03\"],\"series\":[\"val/loss\"],"
                                "\"step_from\":50,\"step_to\":10}", "step_from is after");
  tc_refused("fetch_float_series", "{\"runs\":[\"gone\"],\"series\":[\"val/loss\"]}",
          "'gone' not found");
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("tracking");
  TCase *tc = tcase_create("tools");
  tcase_set_timeout(tc, 60);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, tools_listed);
  tcase_add_test(tc, both_toolsets_concurrently);
  tcase_add_test(tc, workspaces_projects_experiments);
  tcase_add_test(tc, seed_example);
  tcase_add_test(tc, filters_through_list_runs);
  tcase_add_test(tc, sorting_and_columns);
  tcase_add_test(tc, budget_cut_pages);
  tcase_add_test(tc, list_runs_refusals);
  tcase_add_test(tc, label_split_series);
  tcase_add_test(tc, run_attributes);
  tcase_add_test(tc, fetch_summaries_and_buckets);
  tcase_add_test(tc, scale_argument);
  tcase_add_test(tc, series_listings);
  tcase_add_test(tc, float_points);
  suite_add_tcase(s, tc);
  TCase *td = tcase_create("defaults");
  tcase_set_timeout(td, 60);
  tcase_add_checked_fixture(td, setup_default_project, teardown);
  tcase_add_test(td, definitions_and_metrics);
  suite_add_tcase(s, td);
  return s;
}

int main(void)
{
  int skip = st_backend_check(); /* PMCP_TEST_STORE=pg without a cluster */
  if (skip)
    return skip;
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
