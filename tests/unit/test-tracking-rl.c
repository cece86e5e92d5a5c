/* SPDX-License-Identifier: MIT */
/* The tracking toolset's RL, histogram and scatter tools over a real
 * SQLite store: get_rl_info, list_rl_environments, list_rl_metrics,
 * list_rl_attribute_definitions, get_rl_environment_attributes (versioned
 * by episode), fetch_rl_env_series_buckets, aggregate_rl_env_series,
 * fetch_histogram_series, fetch_scatter_series and fetch_float_series'
 * histogram statistic. Expected numbers are computed here from the
 * generating functions, not read back from the tools. Also: every
 * refusal, offset pages cut by the token budget, missing runs, projects
 * and environments named, and the env-attribute store records. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-test-util.h"
#include "tool-call-util.h"

static pmcp_store *RO;

/* ---- the generated data ---------------------------------------------------- */

static const char *const ENV_IDS[] = {"0", "1", "2", "10"}; /* + "99": attributes only */
#define N_ENVS 4
#define N_EPISODES 40
#define N_STEPS 50
#define N_MANY 80
#define N_HIST 12

static double ret_of(int k, int ep) { return (k + 1) * ep + (ep % 3); }
static double loss_of(int k, int i) { return 1.0 / (1 + i) + k; }
static double hcount(int b, int step) { return (b + 1) + step / 10; }

static void put(pmcp_store *s, pmcp_tenant t, const char *json)
{
  ST_OK(s, pmcp_store_put(s, t, "env-attribute", json, strlen(json), NULL));
}

static void populate(void)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  pmcp_entity_spec p = PMCP_ENTITY_SPEC_INIT;
  p.id = "lab";
  p.name = "Lab";
  ST_OK(s, pmcp_store_create(s, t, "project", &p, NULL));
  p.id = "other";
  p.name = "Other";
  ST_OK(s, pmcp_store_create(s, t, "project", &p, NULL));
  ST_OK(s, pmcp_store_begin(s));
  static const char *const runs[] = {"rl-a", "rl-w", "rl-many", "plain"};
  for (int i = 0; i < 4; i++) {
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = runs[i];
    r.project = "lab";
    r.created_ms = 1700000000000LL + i * 1000;
    ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  }
  pmcp_run_spec o = PMCP_RUN_SPEC_INIT;
  o.id = "o1";
  o.project = "other";
  ST_OK(s, pmcp_store_run_create(s, t, &o, NULL));
  /* rl-a: four environments with per-episode returns and per-step losses */
  for (int k = 0; k < N_ENVS; k++) {
    pmcp_label l = {"env", ENV_IDS[k]};
    pmcp_series_spec rs = {PMCP_SERIES_SPEC_VERSION, "episode/return", &l, 1, PMCP_METRIC_FLOAT, PMCP_SCALE_EPISODE};
    pmcp_series_spec ls = {PMCP_SERIES_SPEC_VERSION, "loss/value", &l, 1, PMCP_METRIC_FLOAT, PMCP_SCALE_ENV_STEP};
    int64_t rid, lid;
    ST_OK(s, pmcp_store_series(s, t, "rl-a", &rs, &rid));
    ST_OK(s, pmcp_store_series(s, t, "rl-a", &ls, &lid));
    pmcp_point pr[N_EPISODES], pl[N_STEPS];
    for (int e = 0; e < N_EPISODES; e++)
      pr[e] = (pmcp_point){e, 1700000000000LL + e * 1000, ret_of(k, e)};
    for (int i = 0; i < N_STEPS; i++)
      pl[i] = (pmcp_point){i * 100, 1700000000000LL + i * 500, loss_of(k, i)};
    ST_OK(s, pmcp_store_log(s, t, rid, pr, N_EPISODES));
    ST_OK(s, pmcp_store_log(s, t, lid, pl, N_STEPS));
    char j[300];
    snprintf(j, sizeof j, "{\"run\":\"rl-a\",\"env\":\"%s\",\"path\":\"env/level\","
             "\"value\":\"%s\"}", ENV_IDS[k], k < 2 ? "easy" : "hard");
    put(s, t, j);
    snprintf(j, sizeof j, "{\"run\":\"run:rl-a\",\"env\":\"%s\",\"path\":\"physics/gravity\","
             "\"value\":9.8}", ENV_IDS[k]);
    put(s, t, j);
  }
  put(s, t, "{\"run\":\"rl-a\",\"env\":\"1\",\"path\":\"env/level\",\"value\":\"hard\","
            "\"episode\":20}");
  put(s, t, "{\"run\":\"rl-a\",\"env\":\"10\",\"path\":\"physics/gravity\",\"value\":12.5,"
            "\"episode\":30}");
  put(s, t, "{\"run\":\"rl-a\",\"env\":\"0\",\"path\":\"env/tags\",\"value\":[\"x\",\"y\"]}");
  put(s, t, "{\"run\":\"rl-a\",\"env\":\"99\",\"path\":\"env/level\",\"value\":\"idle\"}");
  /* rl-w: two environments, each with two workers' returns */
  for (int k = 0; k < 2; k++)
    for (int w = 0; w < 2; w++) {
      pmcp_label l[2] = {{"env", k ? "b" : "a"}, {"worker", w ? "1" : "0"}};
      pmcp_series_spec rs = {PMCP_SERIES_SPEC_VERSION, "episode/return", l, 2, PMCP_METRIC_FLOAT, PMCP_SCALE_EPISODE};
      int64_t id;
      ST_OK(s, pmcp_store_series(s, t, "rl-w", &rs, &id));
      pmcp_point pts[10];
      for (int e = 0; e < 10; e++)
        pts[e] = (pmcp_point){e, 0, 100.0 * k + 10.0 * w + e};
      ST_OK(s, pmcp_store_log(s, t, id, pts, 10));
    }
  /* rl-w also logs three histograms (offsets that span runs) */
  pmcp_series_spec wh = {PMCP_SERIES_SPEC_VERSION, "grad/norm", NULL, 0, PMCP_METRIC_HISTOGRAM, PMCP_SCALE_STEP};
  int64_t whid;
  ST_OK(s, pmcp_store_series(s, t, "rl-w", &wh, &whid));
  for (int h = 0; h < 3; h++) {
    double edges[3] = {0, 1, 2}, counts[2] = {1, h + 1};
    ST_OK(s, pmcp_store_log_histogram(s, t, whid, 1000 + h, 0, edges, counts, 2));
  }
  /* rl-many: 80 environments with wide attributes (pages at small budgets) */
  for (int k = 0; k < N_MANY; k++) {
    char j[400];
    snprintf(j, sizeof j, "{\"run\":\"rl-many\",\"env\":\"e%02d\",\"path\":\"env/description\","
             "\"value\":\"environment number %d of the many-environment run, with a "
             "description long enough to weigh on the budget\"}", k, k);
    put(s, t, j);
  }
  /* plain: a float series, histograms and scatter sets on STEP */
  pmcp_series_spec fs = {PMCP_SERIES_SPEC_VERSION, "val/loss", NULL, 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
  pmcp_series_spec hs = {PMCP_SERIES_SPEC_VERSION, "grad/norm", NULL, 0, PMCP_METRIC_HISTOGRAM, PMCP_SCALE_STEP};
  pmcp_series_spec ss = {PMCP_SERIES_SPEC_VERSION, "emb", NULL, 0, PMCP_METRIC_SCATTER, PMCP_SCALE_STEP};
  int64_t fid, hid, sid;
  ST_OK(s, pmcp_store_series(s, t, "plain", &fs, &fid));
  ST_OK(s, pmcp_store_series(s, t, "plain", &hs, &hid));
  ST_OK(s, pmcp_store_series(s, t, "plain", &ss, &sid));
  pmcp_point fp[5];
  for (int i = 0; i < 5; i++)
    fp[i] = (pmcp_point){i, 0, 1.0 / (i + 1)};
  ST_OK(s, pmcp_store_log(s, t, fid, fp, 5));
  for (int h = 0; h < N_HIST; h++) {
    double edges[6] = {0, 1, 2, 3, 4, 5}, counts[5];
    for (int b = 0; b < 5; b++)
      counts[b] = hcount(b, h * 10);
    ST_OK(s, pmcp_store_log_histogram(s, t, hid, h * 10, 1700000000000LL + h, edges, counts, 5));
  }
  for (int k = 0; k < 3; k++) {
    double x[50], y[50];
    for (int i = 0; i < 50; i++) {
      x[i] = i;
      y[i] = i * (k + 1);
    }
    ST_OK(s, pmcp_store_log_scatter(s, t, sid, k * 10, 0, x, y, 50));
  }
  ST_OK(s, pmcp_store_commit(s));
  pmcp_store_free(s);
  ck_assert_int_eq(pmcp_store_open(&RO, st_path, PMCP_STORE_READONLY), 0);
}

static void setup(void)
{
  populate();
  tc_server_new();
  ck_assert_int_eq(pmcp_tracking_register(tc_server(), RO, NULL), 0);
  tc_initialize();
}

static void teardown(void)
{
  tc_server_free();
  pmcp_store_free(RO);
  RO = NULL;
  st_cleanup();
}

/* ---- calling ---------------------------------------------------------------- */

static double at(const cJSON *o, const char *k, int i)
{
  const cJSON *v = cJSON_GetArrayItem(tc_arr(o, k), i);
  ck_assert_msg(cJSON_IsNumber(v), "%s[%d] is not a number", k, i);
  return v->valuedouble;
}

/* Six significant figures, as the tools round. */
static void near(double got, double want)
{
  ck_assert_msg(fabs(got - want) <= 1e-5 * fmax(1, fabs(want)), "%.9g != %.9g", got, want);
}

/* ---- tests ------------------------------------------------------------------ */

START_TEST(tools_listed)
{
  cJSON *r = tc_rpc("tools/list", "{}");
  char *t = cJSON_PrintUnformatted(r);
  static const char *const names[] = {
    "get_rl_info", "list_rl_environments", "list_rl_metrics", "list_rl_attribute_definitions",
    "get_rl_environment_attributes", "fetch_rl_env_series_buckets", "aggregate_rl_env_series",
    "fetch_histogram_series", "fetch_scatter_series", "histogram_statistic"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char q[80];
    snprintf(q, sizeof q, "\"%s\"", names[i]);
    ck_assert_msg(strstr(t, q) != NULL, "%s missing", names[i]);
  }
  free(t);
  cJSON_Delete(r);
}
END_TEST

START_TEST(rl_info)
{
  cJSON *o = tc_ok("get_rl_info", "{\"run\":\"rl-a\"}");
  ck_assert_str_eq(tc_str(o, "run"), "rl-a");
  ck_assert_int_eq((int)tc_num(o, "count"), 1); /* every answer has its count */
  ck_assert_int_eq((int)tc_num(o, "environment_count"), N_ENVS + 1); /* + attribute-only 99 */
  ck_assert_int_eq((int)tc_num(o, "latest_episode"), N_EPISODES - 1);
  ck_assert_int_eq((int)tc_num(o, "latest_rl_step"), (N_STEPS - 1) * 100);
  ck_assert_int_eq((int)tc_num(o, "rl_series_count"), 2 * N_ENVS);
  cJSON_Delete(o);
  o = tc_ok("get_rl_info", "{\"run\":\"run:plain\",\"project\":\"lab\"}");
  ck_assert_int_eq((int)tc_num(o, "environment_count"), 0);
  ck_assert_ptr_null(cJSON_GetObjectItem(o, "latest_episode"));
  ck_assert_ptr_nonnull(strstr(tc_str(o, "note"), "no RL series"));
  cJSON_Delete(o);
  tc_refused("get_rl_info", "{\"run\":\"ghost\"}", "'ghost' not found");
  tc_refused("get_rl_info", "{\"run\":\"rl-a\",\"project\":\"nowhere\"}",
          "project 'nowhere' not found");
  tc_refused("get_rl_info", "{\"run\":\"rl-a\",\"project\":\"other\"}",
          "run 'rl-a' not found in project 'other'");
  tc_refused("get_rl_info", "{\"run\":\"rl-a\",\"cursor\":\"abc\"}", "next_offset");
  tc_refused("get_rl_info", "{}", "run");
  tc_refused("get_rl_info", "{\"run\":\"rl-a\",\"limit\":3}", "limit");
}
END_TEST

START_TEST(environments_table)
{
  /* natural order of ids; the attribute-only environment is listed too */
  cJSON *o = tc_ok("list_rl_environments", "{\"run\":\"rl-a\",\"columns\":[\"env/level\","
                "\"physics/gravity\"],\"summary_columns\":[{\"series\":\"episode/return\","
                "\"function\":\"last\",\"scale\":\"EPISODE\"},{\"series\":\"loss/value\","
                "\"function\":\"min\",\"scale\":\"ENVIRONMENT_STEP\"}]}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 5);
  ck_assert_int_eq((int)tc_num(o, "count"), 5);
  static const char *const order[] = {"0", "1", "2", "10", "99"};
  for (int i = 0; i < 5; i++) {
    const cJSON *row = cJSON_GetArrayItem(tc_arr(o, "rows"), i);
    ck_assert_str_eq(tc_str(row, "environment"), order[i]);
    if (i == 4) {
      ck_assert_str_eq(tc_str(row, "env/level"), "idle");
      ck_assert_ptr_null(cJSON_GetObjectItem(row, "last(episode/return)"));
      continue;
    }
    /* latest versions: env 1 became hard at episode 20, env 10's gravity changed */
    ck_assert_str_eq(tc_str(row, "env/level"), i == 0 ? "easy" : "hard");
    near(tc_num(row, "physics/gravity"), i == 3 ? 12.5 : 9.8);
    near(tc_num(row, "last(episode/return)"), ret_of(i, N_EPISODES - 1));
    near(tc_num(row, "min(loss/value)"), loss_of(i, N_STEPS - 1));
  }
  cJSON_Delete(o);
  /* default columns */
  o = tc_ok("list_rl_environments", "{\"run\":\"rl-a\",\"limit\":1}");
  const cJSON *row = cJSON_GetArrayItem(tc_arr(o, "rows"), 0);
  ck_assert_int_eq((int)tc_num(row, "sys/last_episode"), N_EPISODES - 1);
  ck_assert_int_eq((int)tc_num(row, "sys/last_step"), (N_STEPS - 1) * 100);
  ck_assert_int_eq((int)tc_num(o, "next_offset"), 1);
  cJSON_Delete(o);
  /* filter: hard environments whose last return is at least 100 */
  o = tc_ok("list_rl_environments",
         "{\"run\":\"rl-a\",\"filter\":[{\"attr\":\"env/level\",\"op\":\"eq\",\"value\":\"hard\"},"
         "{\"series\":\"episode/return\",\"function\":\"last\",\"op\":\"gte\",\"value\":100,"
         "\"scale\":\"EPISODE\"}]}");
  int want = 0;
  for (int k = 1; k < N_ENVS; k++)
    want += ret_of(k, N_EPISODES - 1) >= 100;
  ck_assert_int_eq((int)tc_num(o, "total_count"), want);
  cJSON_Delete(o);
  /* any_of, sys/ attributes and matches */
  o = tc_ok("list_rl_environments",
         "{\"run\":\"rl-a\",\"filter\":[{\"any_of\":[{\"attr\":\"sys/id\",\"op\":\"matches\","
         "\"value\":\"^1\"},{\"attr\":\"env/tags\",\"op\":\"contains\",\"value\":\"x\"}]}]}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 3); /* 0 (tag), 1, 10 */
  cJSON_Delete(o);
  o = tc_ok("list_rl_environments",
         "{\"run\":\"rl-a\",\"filter\":[{\"attr\":\"sys/last_episode\",\"op\":\"exists\","
         "\"value\":false}]}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 1);
  ck_assert_str_eq(tc_str(cJSON_GetArrayItem(tc_arr(o, "rows"), 0), "environment"), "99");
  cJSON_Delete(o);
  /* sorts: by series (desc), by attribute; the sort's value is shown */
  o = tc_ok("list_rl_environments", "{\"run\":\"rl-a\",\"sort\":{\"series\":\"episode/return\","
         "\"function\":\"max\",\"scale\":\"EPISODE\",\"direction\":\"desc\"}}");
  ck_assert_str_eq(tc_str(cJSON_GetArrayItem(tc_arr(o, "rows"), 0), "environment"), "10");
  near(tc_num(cJSON_GetArrayItem(tc_arr(o, "rows"), 0), "max(episode/return)"),
       ret_of(3, N_EPISODES - 1));
  ck_assert_str_eq(tc_str(cJSON_GetArrayItem(tc_arr(o, "rows"), 4), "environment"), "99");
  cJSON_Delete(o);
  o = tc_ok("list_rl_environments", "{\"run\":\"rl-a\",\"sort\":{\"attr\":\"physics/gravity\","
         "\"direction\":\"desc\"},\"environments\":[\"0\",\"10\"]}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 2);
  ck_assert_str_eq(tc_str(cJSON_GetArrayItem(tc_arr(o, "rows"), 0), "environment"), "10");
  cJSON_Delete(o);
}
END_TEST

START_TEST(environments_refusals)
{
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"filter\":[{\"series\":\"episode/return\","
          "\"function\":\"last\",\"op\":\"gt\",\"value\":1}]}", "need their scale");
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"filter\":[{\"any_of\":[{\"attr\":\"a\","
          "\"op\":\"exists\"},{\"series\":\"x\",\"op\":\"exists\"}]}]}",
          "filter[0].any_of[1]: RL series always need their scale");
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"sort\":{\"series\":\"episode/return\","
          "\"function\":\"last\"}}", "sort: RL series always need their scale");
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"summary_columns\":[{\"series\":"
          "\"episode/return\",\"function\":\"last\"}]}", "need their scale");
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"filter\":[{\"series\":\"x\",\"op\":"
          "\"exists\",\"scale\":\"HOURLY\"}]}", "unknown scale");
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"filter\":[{\"any_of\":[{\"any_of\":"
          "[]}]}]}", "do not nest");
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"filter\":[{\"attr\":\"a\",\"op\":"
          "\"near\",\"value\":1}]}", "unknown op");
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"filter\":[{\"attr\":\"a\",\"op\":"
          "\"matches\",\"value\":\"(a\"}]}", "invalid RE2 pattern");
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"sort\":{\"attr\":\"a\",\"direction\":"
          "\"up\"}}", "direction");
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"summary_columns\":[{\"series\":\"x\","
          "\"function\":\"median\",\"scale\":\"EPISODE\"}]}", "summary_columns[0]");
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"environments\":[\"0\",\"7\"]}",
          "environment '7' not found in run 'rl-a'");
  tc_refused("list_rl_environments", "{\"run\":\"nope\"}", "'nope' not found");
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"limit\":0}", "limit");
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"limit\":101}", "limit");
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"offset\":-1}", "offset");
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"cursor\":\"x\"}", "offset");
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"filter\":{}}", "filter");
}
END_TEST

START_TEST(budget_cut_pages)
{
  /* 80 wide rows at the smallest budget: every page is cut, next_offset
   * is the first environment not returned, and offsets alone continue */
  int offset = 0, pages = 0, seen = 0;
  char seen_ids[N_MANY] = {0};
  while (offset >= 0 && pages < 80) {
    char args[300];
    snprintf(args, sizeof args, "{\"run\":\"rl-many\",\"limit\":100,\"token_budget\":512,"
             "\"columns\":[\"env/description\"],\"offset\":%d}", offset);
    cJSON *o = tc_ok("list_rl_environments", args);
    int count = (int)tc_num(o, "count");
    ck_assert_int_gt(count, 0);
    ck_assert_int_eq((int)tc_num(o, "total_count"), N_MANY);
    ck_assert_int_eq((int)tc_num(o, "offset"), offset);
    const cJSON *r;
    int i = 0;
    cJSON_ArrayForEach(r, tc_arr(o, "rows"))
    {
      int id = atoi(tc_str(r, "environment") + 1);
      ck_assert_int_eq(id, offset + i++); /* natural order, nothing skipped */
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
  ck_assert_int_gt(pages, 2);
  ck_assert_int_eq(seen, N_MANY);
  /* the same through get_rl_environment_attributes' history of many paths
   * is not needed: its pages are the same emitter; a limit page instead */
  cJSON *o = tc_ok("list_rl_attribute_definitions", "{\"run\":\"rl-many\",\"limit\":1,"
                "\"offset\":1}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 2); /* env/description, sys/id */
  ck_assert_ptr_null(cJSON_GetObjectItem(o, "next_offset"));
  ck_assert_str_eq(tc_str(cJSON_GetArrayItem(tc_arr(o, "attributes"), 0), "path"), "sys/id");
  cJSON_Delete(o);
}
END_TEST

START_TEST(metrics_and_definitions)
{
  cJSON *o = tc_ok("list_rl_metrics", "{\"run\":\"rl-a\"}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 2);
  const cJSON *m = cJSON_GetArrayItem(tc_arr(o, "metrics"), 0);
  ck_assert_str_eq(tc_str(m, "name"), "episode/return");
  ck_assert_str_eq(tc_str(m, "scale"), "EPISODE");
  ck_assert_int_eq((int)tc_num(m, "environment_count"), N_ENVS);
  ck_assert_int_eq((int)tc_num(m, "point_count"), N_ENVS * N_EPISODES);
  m = cJSON_GetArrayItem(tc_arr(o, "metrics"), 1);
  ck_assert_str_eq(tc_str(m, "name"), "loss/value");
  ck_assert_str_eq(tc_str(m, "scale"), "ENVIRONMENT_STEP");
  cJSON_Delete(o);
  o = tc_ok("list_rl_metrics", "{\"run\":\"rl-w\"}");
  m = cJSON_GetArrayItem(tc_arr(o, "metrics"), 0);
  ck_assert_int_eq((int)tc_num(m, "environment_count"), 2); /* a and b, two workers each */
  ck_assert_int_eq(cJSON_GetArraySize(tc_arr(m, "label_keys")), 1); /* worker, not env */
  ck_assert_str_eq(cJSON_GetArrayItem(tc_arr(m, "label_keys"), 0)->valuestring, "worker");
  cJSON_Delete(o);
  o = tc_ok("list_rl_metrics", "{\"run\":\"plain\"}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 0);
  cJSON_Delete(o);
  /* without run: every run of the project */
  o = tc_ok("list_rl_metrics", "{\"project\":\"lab\"}");
  ck_assert_str_eq(tc_str(o, "project"), "lab");
  ck_assert_int_eq((int)tc_num(o, "runs_read"), 4);
  ck_assert_int_eq((int)tc_num(o, "total_count"), 2);
  m = cJSON_GetArrayItem(tc_arr(o, "metrics"), 0);
  ck_assert_str_eq(tc_str(m, "name"), "episode/return");
  ck_assert_int_eq((int)tc_num(m, "run_count"), 2);
  ck_assert_int_eq((int)tc_num(m, "environment_count"), N_ENVS + 2);
  ck_assert_int_eq((int)tc_num(m, "point_count"), N_ENVS * N_EPISODES + 4 * 10);
  cJSON_Delete(o);
  o = tc_ok("list_rl_attribute_definitions", "{\"project\":\"lab\",\"limit\":1}");
  const cJSON *d = cJSON_GetArrayItem(tc_arr(o, "attributes"), 0);
  ck_assert_str_eq(tc_str(d, "path"), "env/description");
  ck_assert_int_eq((int)tc_num(d, "run_count"), 1);
  ck_assert_int_eq((int)tc_num(d, "environment_count"), N_MANY);
  cJSON_Delete(o);
  tc_refused("list_rl_metrics", "{\"project\":\"nope\"}", "project 'nope' not found");
  tc_refused("list_rl_metrics", "{}", "pass project");
  o = tc_ok("list_rl_attribute_definitions", "{\"run\":\"rl-a\"}");
  /* env/level, env/tags, physics/gravity, sys/id, sys/last_episode, sys/last_step */
  ck_assert_int_eq((int)tc_num(o, "total_count"), 6);
  d = cJSON_GetArrayItem(tc_arr(o, "attributes"), 0);
  ck_assert_str_eq(tc_str(d, "path"), "env/level");
  ck_assert_str_eq(tc_str(d, "type"), "string");
  ck_assert_int_eq((int)tc_num(d, "environment_count"), 5);
  ck_assert_int_eq((int)tc_num(d, "version_count"), 6);
  d = cJSON_GetArrayItem(tc_arr(o, "attributes"), 1);
  ck_assert_str_eq(tc_str(d, "path"), "env/tags");
  ck_assert_str_eq(tc_str(d, "type"), "string_set");
  d = cJSON_GetArrayItem(tc_arr(o, "attributes"), 2);
  ck_assert_str_eq(tc_str(d, "type"), "float");
  cJSON_Delete(o);
  tc_refused("list_rl_metrics", "{\"run\":\"o1\",\"project\":\"lab\"}",
          "run 'o1' not found in project 'lab'");
  tc_refused("list_rl_attribute_definitions", "{\"run\":\"\"}", "run");
}
END_TEST

START_TEST(environment_attributes)
{
  cJSON *o = tc_ok("get_rl_environment_attributes", "{\"run\":\"rl-a\",\"environment\":\"1\"}");
  ck_assert_str_eq(tc_str(o, "environment"), "1");
  const cJSON *a = cJSON_GetArrayItem(tc_arr(o, "attributes"), 0);
  ck_assert_str_eq(tc_str(a, "path"), "env/level");
  ck_assert_str_eq(tc_str(a, "value"), "hard");
  ck_assert_int_eq((int)tc_num(a, "since_episode"), 20);
  ck_assert_ptr_null(cJSON_GetObjectItem(o, "as_of_episode"));
  cJSON_Delete(o);
  /* as of an episode before the change, and exactly at it */
  o = tc_ok("get_rl_environment_attributes", "{\"run\":\"rl-a\",\"environment\":\"1\","
         "\"episode\":19,\"paths\":[\"env\"]}");
  ck_assert_int_eq((int)tc_num(o, "as_of_episode"), 19);
  ck_assert_int_eq((int)tc_num(o, "total_count"), 1);
  a = cJSON_GetArrayItem(tc_arr(o, "attributes"), 0);
  ck_assert_str_eq(tc_str(a, "value"), "easy");
  ck_assert_int_eq((int)tc_num(a, "since_episode"), 0);
  cJSON_Delete(o);
  o = tc_ok("get_rl_environment_attributes", "{\"run\":\"rl-a\",\"environment\":\"1\","
         "\"episode\":20,\"paths\":[\"env/level\"]}");
  ck_assert_str_eq(tc_str(cJSON_GetArrayItem(tc_arr(o, "attributes"), 0), "value"), "hard");
  cJSON_Delete(o);
  /* history: every version, by path then episode */
  o = tc_ok("get_rl_environment_attributes", "{\"run\":\"rl-a\",\"environment\":\"10\","
         "\"history\":true}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 3);
  const cJSON *v = cJSON_GetArrayItem(tc_arr(o, "versions"), 1);
  ck_assert_str_eq(tc_str(v, "path"), "physics/gravity");
  ck_assert_int_eq((int)tc_num(v, "episode"), 0);
  near(tc_num(v, "value"), 9.8);
  v = cJSON_GetArrayItem(tc_arr(o, "versions"), 2);
  ck_assert_int_eq((int)tc_num(v, "episode"), 30);
  near(tc_num(v, "value"), 12.5);
  cJSON_Delete(o);
  o = tc_ok("get_rl_environment_attributes", "{\"run\":\"rl-a\",\"environment\":\"10\","
         "\"history\":true,\"episode\":29}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 2);
  cJSON_Delete(o);
  /* sys/ attributes are shown; paging */
  o = tc_ok("get_rl_environment_attributes", "{\"run\":\"rl-a\",\"environment\":\"0\","
         "\"limit\":2,\"offset\":2}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 6);
  ck_assert_int_eq((int)tc_num(o, "next_offset"), 4);
  ck_assert_str_eq(tc_str(cJSON_GetArrayItem(tc_arr(o, "attributes"), 1), "path"), "sys/id");
  cJSON_Delete(o);
  tc_refused("get_rl_environment_attributes", "{\"run\":\"rl-a\",\"environment\":\"5\"}",
          "environment '5' not found in run 'rl-a'");
  tc_refused("get_rl_environment_attributes", "{\"run\":\"rl-a\"}", "environment");
  tc_refused("get_rl_environment_attributes", "{\"run\":\"rl-a\",\"environment\":\"1\","
          "\"episode\":-1}", "episode");
  tc_refused("get_rl_environment_attributes", "{\"run\":\"rl-a\",\"environment\":\"1\","
          "\"history\":\"yes\"}", "history");
  tc_refused("get_rl_environment_attributes", "{\"run\":\"gone\",\"environment\":\"1\"}",
          "'gone' not found");
}
END_TEST

START_TEST(env_series_buckets)
{
  cJSON *o = tc_ok("fetch_rl_env_series_buckets", "{\"run\":\"rl-a\",\"series\":"
                "[\"episode/return\"],\"scale\":\"EPISODE\",\"buckets\":4}");
  ck_assert_str_eq(tc_str(o, "axis"), "episode");
  ck_assert_int_eq((int)tc_num(o, "total_count"), N_ENVS);
  near(tc_num(o, "bucket_width"), N_EPISODES / 4.0);
  for (int k = 0; k < N_ENVS; k++) {
    const cJSON *e = cJSON_GetArrayItem(tc_arr(o, "entries"), k);
    ck_assert_str_eq(tc_str(e, "environment"), ENV_IDS[k]);
    ck_assert_int_eq(cJSON_GetArraySize(tc_arr(e, "episode")), 4);
    for (int b = 0; b < 4; b++) {
      double sum = 0, mn = INFINITY, mx = -INFINITY;
      for (int ep = b * 10; ep < b * 10 + 10; ep++) {
        sum += ret_of(k, ep);
        mn = fmin(mn, ret_of(k, ep));
        mx = fmax(mx, ret_of(k, ep));
      }
      ck_assert_int_eq((int)at(e, "episode", b), b * 10);
      near(at(e, "mean", b), sum / 10);
      near(at(e, "min", b), mn);
      near(at(e, "max", b), mx);
      ck_assert_int_eq((int)at(e, "count", b), 10);
    }
  }
  cJSON_Delete(o);
  /* chosen environments, a step range, the env_step axis */
  o = tc_ok("fetch_rl_env_series_buckets", "{\"run\":\"rl-a\",\"series\":[\"loss/value\"],"
         "\"scale\":\"ENVIRONMENT_STEP\",\"environments\":[\"2\"],\"buckets\":2,"
         "\"step_from\":1000,\"step_to\":1999}");
  ck_assert_str_eq(tc_str(o, "axis"), "step");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 1);
  const cJSON *e = cJSON_GetArrayItem(tc_arr(o, "entries"), 0);
  double sum = 0;
  for (int i = 10; i < 15; i++)
    sum += loss_of(2, i);
  near(at(e, "mean", 0), sum / 5);
  ck_assert_int_eq((int)at(e, "step", 1), 1500);
  cJSON_Delete(o);
  /* by filter; worker labels appear beside the entry */
  o = tc_ok("fetch_rl_env_series_buckets", "{\"run\":\"rl-w\",\"series\":[\"episode/return\"],"
         "\"scale\":\"EPISODE\",\"filter\":[{\"attr\":\"sys/id\",\"op\":\"eq\",\"value\":\"b\"}],"
         "\"labels\":{\"worker\":\"1\"}}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 1);
  e = cJSON_GetArrayItem(tc_arr(o, "entries"), 0);
  ck_assert_str_eq(tc_str(cJSON_GetObjectItem(e, "labels"), "worker"), "1");
  ck_assert_ptr_null(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "labels"), "env"));
  near(at(e, "mean", 0), 110);
  cJSON_Delete(o);
  /* a budget cut keeps offsets exact: pages at 512 tokens cover every
   * (environment, series) entry once, in order */
  int offset = 0, pages = 0, seen = 0;
  while (offset >= 0 && pages < 20) {
    char args[300];
    snprintf(args, sizeof args, "{\"run\":\"rl-a\",\"series\":[\"loss/value\"],\"scale\":"
             "\"ENVIRONMENT_STEP\",\"buckets\":12,\"token_budget\":512,\"offset\":%d}",
             offset);
    o = tc_ok("fetch_rl_env_series_buckets", args);
    int count = (int)tc_num(o, "count");
    ck_assert_int_gt(count, 0);
    ck_assert_int_eq((int)tc_num(o, "total_count"), N_ENVS);
    for (int i = 0; i < count; i++)
      ck_assert_str_eq(tc_str(cJSON_GetArrayItem(tc_arr(o, "entries"), i), "environment"),
                       ENV_IDS[offset + i]);
    seen += count;
    const cJSON *next = cJSON_GetObjectItem(o, "next_offset");
    if (next) {
      ck_assert_int_eq((int)next->valuedouble, offset + count);
      ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "truncated")));
      offset = (int)next->valuedouble;
    } else {
      offset = -1;
    }
    pages++;
    cJSON_Delete(o);
  }
  ck_assert_int_gt(pages, 1);
  ck_assert_int_eq(seen, N_ENVS);
  /* one entry larger than the budget is refused with what to do */
  tc_refused("fetch_rl_env_series_buckets", "{\"run\":\"rl-a\",\"series\":[\"loss/value\"],"
          "\"scale\":\"ENVIRONMENT_STEP\",\"buckets\":1000,\"token_budget\":512}",
          "token_budget");
  tc_refused("fetch_rl_env_series_buckets", "{\"run\":\"rl-a\",\"series\":[\"episode/return\"]}",
          "scale");
  tc_refused("fetch_rl_env_series_buckets", "{\"run\":\"rl-a\",\"series\":[\"episode/return\"],"
          "\"scale\":\"STEP\"}", "scale");
  tc_refused("fetch_rl_env_series_buckets", "{\"run\":\"rl-a\",\"series\":[\"loss/value\"],"
          "\"scale\":\"EPISODE\"}", "logged on the ENVIRONMENT_STEP scale");
  tc_refused("fetch_rl_env_series_buckets", "{\"run\":\"rl-a\",\"series\":[\"nothing\"],"
          "\"scale\":\"EPISODE\"}", "has no series 'nothing'");
  tc_refused("fetch_rl_env_series_buckets", "{\"run\":\"rl-a\",\"series\":[\"episode/return\"],"
          "\"scale\":\"EPISODE\",\"environments\":[\"404\"]}", "environment '404' not found");
  tc_refused("fetch_rl_env_series_buckets", "{\"run\":\"rl-a\",\"series\":[\"episode/return\"],"
          "\"scale\":\"EPISODE\",\"step_from\":9,\"step_to\":3}", "step_from is after step_to");
  tc_refused("fetch_rl_env_series_buckets", "{\"run\":\"rl-a\",\"series\":[\"episode/return\"],"
          "\"scale\":\"EPISODE\",\"buckets\":1}", "buckets");
  tc_refused("fetch_rl_env_series_buckets", "{\"run\":\"rl-a\",\"series\":[\"episode/return\"],"
          "\"scale\":\"EPISODE\",\"labels\":{\"worker\":1}}", "string value");
  tc_refused("fetch_rl_env_series_buckets", "{\"run\":\"rl-a\",\"series\":[],\"scale\":"
          "\"EPISODE\"}", "series");
}
END_TEST

static int dcmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The reduction of the bucket means of environments @p ks over episodes
 * [b0, b0 + w), computed independently. */
static double reduced(const char *fn, const int *ks, int n, int b0, int w)
{
  double v[8];
  for (int i = 0; i < n; i++) {
    double s = 0;
    int c = 0;
    for (int ep = b0; ep < b0 + w && ep < N_EPISODES; ep++, c++)
      s += ret_of(ks[i], ep);
    v[i] = s / c;
  }
  double r = 0, m = 0;
  if (!strcmp(fn, "min") || !strcmp(fn, "max")) {
    r = v[0];
    for (int i = 1; i < n; i++)
      r = !strcmp(fn, "min") ? fmin(r, v[i]) : fmax(r, v[i]);
    return r;
  }
  for (int i = 0; i < n; i++)
    m += v[i];
  if (!strcmp(fn, "sum"))
    return m;
  m /= n;
  if (!strcmp(fn, "avg"))
    return m;
  if (!strcmp(fn, "std")) {
    for (int i = 0; i < n; i++)
      r += (v[i] - m) * (v[i] - m);
    return sqrt(r / n);
  }
  qsort(v, (size_t)n, sizeof v[0], dcmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

START_TEST(aggregate)
{
  static const char *const fns[] = {"avg", "min", "max", "sum", "std", "median"};
  int all[N_ENVS] = {0, 1, 2, 3};
  for (int f = 0; f < 6; f++) {
    char args[300];
    snprintf(args, sizeof args, "{\"run\":\"rl-a\",\"series\":\"episode/return\",\"scale\":"
             "\"EPISODE\",\"buckets\":8,\"function\":\"%s\"}", fns[f]);
    cJSON *o = tc_ok("aggregate_rl_env_series", args);
    ck_assert_str_eq(tc_str(o, "function"), fns[f]);
    ck_assert_int_eq((int)tc_num(o, "environment_count"), N_ENVS);
    ck_assert_int_eq((int)tc_num(o, "bucket_width"), 5);
    ck_assert_int_eq((int)tc_num(o, "total_count"), 1);
    const cJSON *g = cJSON_GetArrayItem(tc_arr(o, "groups"), 0);
    ck_assert_ptr_null(cJSON_GetObjectItem(g, "group"));
    ck_assert_int_eq(cJSON_GetArraySize(tc_arr(g, "environments")), N_ENVS);
    ck_assert_int_eq(cJSON_GetArraySize(tc_arr(g, fns[f])), 8);
    for (int b = 0; b < 8; b++) {
      ck_assert_int_eq((int)at(g, "episode", b), b * 5);
      near(at(g, fns[f], b), reduced(fns[f], all, N_ENVS, b * 5, 5));
      ck_assert_int_eq((int)at(g, "n_environments", b), N_ENVS);
    }
    cJSON_Delete(o);
  }
  /* groups by an attribute's latest value: easy = {0}, hard = {1, 2, 10};
   * the attribute-only environment has no series and is not a member */
  cJSON *o = tc_ok("aggregate_rl_env_series", "{\"run\":\"rl-a\",\"series\":\"episode/return\","
                "\"scale\":\"EPISODE\",\"buckets\":4,\"group_by\":\"env/level\"}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 2);
  const cJSON *g = cJSON_GetArrayItem(tc_arr(o, "groups"), 0);
  ck_assert_str_eq(tc_str(cJSON_GetObjectItem(g, "group"), "env/level"), "easy");
  int easy[1] = {0}, hard[3] = {1, 2, 3};
  near(at(g, "avg", 2), reduced("avg", easy, 1, 20, 10));
  g = cJSON_GetArrayItem(tc_arr(o, "groups"), 1);
  ck_assert_str_eq(tc_str(cJSON_GetObjectItem(g, "group"), "env/level"), "hard");
  ck_assert_int_eq(cJSON_GetArraySize(tc_arr(g, "environments")), 3);
  near(at(g, "avg", 3), reduced("avg", hard, 3, 30, 10));
  cJSON_Delete(o);
  /* a filter and a range; paging over groups */
  o = tc_ok("aggregate_rl_env_series", "{\"run\":\"rl-a\",\"series\":\"episode/return\","
         "\"scale\":\"EPISODE\",\"buckets\":2,\"step_from\":10,\"step_to\":19,\"function\":"
         "\"max\",\"filter\":[{\"attr\":\"env/level\",\"op\":\"eq\",\"value\":\"hard\"}],"
         "\"group_by\":\"sys/id\",\"limit\":1,\"offset\":1}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 3);
  ck_assert_int_eq((int)tc_num(o, "next_offset"), 2);
  g = cJSON_GetArrayItem(tc_arr(o, "groups"), 0);
  ck_assert_str_eq(tc_str(cJSON_GetObjectItem(g, "group"), "sys/id"), "2");
  int two[1] = {2};
  near(at(g, "max", 0), reduced("max", two, 1, 10, 5));
  near(at(g, "max", 1), reduced("max", two, 1, 15, 5));
  cJSON_Delete(o);
  /* several series per environment need labels */
  tc_refused("aggregate_rl_env_series", "{\"run\":\"rl-w\",\"series\":\"episode/return\","
          "\"scale\":\"EPISODE\"}", "several episode/return series");
  o = tc_ok("aggregate_rl_env_series", "{\"run\":\"rl-w\",\"series\":\"episode/return\","
         "\"scale\":\"EPISODE\",\"labels\":{\"worker\":\"0\"},\"function\":\"sum\","
         "\"buckets\":10}");
  g = cJSON_GetArrayItem(tc_arr(o, "groups"), 0);
  near(at(g, "sum", 3), (0 + 3) + (100 + 3));
  cJSON_Delete(o);
  tc_refused("aggregate_rl_env_series", "{\"run\":\"rl-a\",\"series\":\"episode/return\"}",
          "scale");
  tc_refused("aggregate_rl_env_series", "{\"run\":\"rl-a\",\"series\":\"episode/return\","
          "\"scale\":\"EPISODE\",\"function\":\"mode\"}", "function");
  tc_refused("aggregate_rl_env_series", "{\"run\":\"rl-a\",\"series\":\"loss/value\","
          "\"scale\":\"EPISODE\"}", "pass scale=ENVIRONMENT_STEP");
  tc_refused("aggregate_rl_env_series", "{\"run\":\"rl-a\",\"series\":[\"a\"],\"scale\":"
          "\"EPISODE\"}", "series");
  tc_refused("aggregate_rl_env_series", "{\"run\":\"rl-a\",\"series\":\"episode/return\","
          "\"scale\":\"EPISODE\",\"filter\":[{\"series\":\"loss/value\",\"op\":\"exists\"}]}",
          "need their scale");
  tc_refused("aggregate_rl_env_series", "{\"run\":\"x-y\",\"series\":\"r\",\"scale\":\"EPISODE\"}",
          "'x-y' not found");
}
END_TEST

START_TEST(histograms)
{
  cJSON *o = tc_ok("fetch_histogram_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\"],"
                "\"limit\":3,\"offset\":2}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), N_HIST);
  ck_assert_int_eq((int)tc_num(o, "count"), 3);
  ck_assert_int_eq((int)tc_num(o, "next_offset"), 5);
  for (int i = 0; i < 3; i++) {
    const cJSON *h = cJSON_GetArrayItem(tc_arr(o, "histograms"), i);
    int step = (i + 2) * 10;
    ck_assert_int_eq((int)tc_num(h, "step"), step);
    ck_assert_int_eq(cJSON_GetArraySize(tc_arr(h, "edges")), 6);
    double tot = 0, s1 = 0;
    for (int b = 0; b < 5; b++) {
      near(at(h, "counts", b), hcount(b, step));
      tot += hcount(b, step);
      s1 += hcount(b, step) * (b + 0.5);
    }
    const cJSON *st = cJSON_GetObjectItem(h, "stats");
    near(tc_num(st, "total"), tot);
    near(tc_num(st, "mean"), s1 / tot);
    near(tc_num(st, "min"), 0);
    near(tc_num(st, "max"), 5);
  }
  cJSON_Delete(o);
  /* offsets across runs, with and without a step range */
  o = tc_ok("fetch_histogram_series", "{\"runs\":[\"plain\",\"rl-w\"],\"series\":[\"grad/norm\"],"
         "\"limit\":3,\"offset\":11}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), N_HIST + 3);
  ck_assert_int_eq((int)tc_num(o, "next_offset"), 14);
  ck_assert_str_eq(tc_str(cJSON_GetArrayItem(tc_arr(o, "histograms"), 0), "run"), "plain");
  ck_assert_int_eq((int)tc_num(cJSON_GetArrayItem(tc_arr(o, "histograms"), 0), "step"), 110);
  ck_assert_str_eq(tc_str(cJSON_GetArrayItem(tc_arr(o, "histograms"), 1), "run"), "rl-w");
  ck_assert_int_eq((int)tc_num(cJSON_GetArrayItem(tc_arr(o, "histograms"), 2), "step"), 1001);
  cJSON_Delete(o);
  o = tc_ok("fetch_histogram_series", "{\"runs\":[\"plain\",\"rl-w\"],\"series\":[\"grad/norm\"],"
         "\"offset\":14}");
  ck_assert_int_eq((int)tc_num(o, "count"), 1);
  ck_assert_ptr_null(cJSON_GetObjectItem(o, "next_offset"));
  near(at(cJSON_GetArrayItem(tc_arr(o, "histograms"), 0), "counts", 1), 3);
  cJSON_Delete(o);
  o = tc_ok("fetch_histogram_series", "{\"runs\":[\"plain\",\"rl-w\"],\"series\":[\"grad/norm\"],"
         "\"step_from\":100,\"step_to\":1001,\"limit\":2,\"offset\":1}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 4); /* 100, 110, 1000, 1001 */
  ck_assert_int_eq((int)tc_num(o, "next_offset"), 3);
  ck_assert_int_eq((int)tc_num(cJSON_GetArrayItem(tc_arr(o, "histograms"), 1), "step"), 1000);
  cJSON_Delete(o);
  /* densities integrate to one; a step range */
  o = tc_ok("fetch_histogram_series", "{\"runs\":[\"run:plain\"],\"series\":[\"grad/norm\"],"
         "\"density\":true,\"step_from\":50,\"step_to\":60}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 2);
  const cJSON *h = cJSON_GetArrayItem(tc_arr(o, "histograms"), 1);
  ck_assert_int_eq((int)tc_num(h, "step"), 60);
  ck_assert_ptr_null(cJSON_GetObjectItem(h, "counts"));
  double area = 0;
  for (int b = 0; b < 5; b++)
    area += at(h, "densities", b) * 1.0;
  near(area, 1);
  cJSON_Delete(o);
  /* a budget cut keeps offsets exact */
  o = tc_ok("fetch_histogram_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\"],"
         "\"limit\":100,\"token_budget\":512}");
  int count = (int)tc_num(o, "count");
  ck_assert_int_lt(count, N_HIST);
  ck_assert_int_eq((int)tc_num(o, "next_offset"), count);
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "truncated")));
  cJSON_Delete(o);
  tc_refused("fetch_histogram_series", "{\"runs\":[\"plain\"],\"series\":[\"val/loss\"]}",
          "val/loss is a float series, not a histogram one: read it with fetch_float_series");
  tc_refused("fetch_histogram_series", "{\"runs\":[\"plain\"],\"series\":[\"emb\"]}",
          "fetch_scatter_series");
  tc_refused("fetch_histogram_series", "{\"runs\":[\"nobody\"],\"series\":[\"grad/norm\"]}",
          "'nobody' not found");
  tc_refused("fetch_histogram_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\"],"
          "\"project\":\"other\"}", "run 'plain' not found in project 'other'");
  tc_refused("fetch_histogram_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\"],"
          "\"step_from\":5,\"step_to\":1}", "step_from is after step_to");
  tc_refused("fetch_histogram_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\"],"
          "\"density\":1}", "density");
  tc_refused("fetch_histogram_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\"],"
          "\"cursor\":\"zz\"}", "offset");
}
END_TEST

START_TEST(scatter)
{
  cJSON *o = tc_ok("fetch_scatter_series", "{\"runs\":[\"plain\"],\"series\":[\"emb\"],"
                "\"max_points\":10}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 3);
  for (int k = 0; k < 3; k++) {
    const cJSON *s = cJSON_GetArrayItem(tc_arr(o, "sets"), k);
    ck_assert_int_eq((int)tc_num(s, "step"), k * 10);
    ck_assert_int_eq((int)tc_num(s, "points_total"), 50);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(s, "sampled")));
    ck_assert_int_eq((int)tc_num(s, "count"), 10);
    for (int i = 0; i < 10; i++) {
      near(at(s, "x", i), i * 5); /* every fifth point */
      near(at(s, "y", i), i * 5 * (k + 1));
    }
  }
  cJSON_Delete(o);
  o = tc_ok("fetch_scatter_series", "{\"runs\":[\"plain\"],\"series\":[\"emb\"],\"offset\":2}");
  ck_assert_int_eq((int)tc_num(o, "count"), 1);
  const cJSON *s = cJSON_GetArrayItem(tc_arr(o, "sets"), 0);
  ck_assert_int_eq((int)tc_num(s, "count"), 50);
  ck_assert_ptr_null(cJSON_GetObjectItem(s, "sampled"));
  ck_assert_ptr_null(cJSON_GetObjectItem(o, "next_offset"));
  cJSON_Delete(o);
  tc_refused("fetch_scatter_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\"]}",
          "fetch_histogram_series");
  tc_refused("fetch_scatter_series", "{\"runs\":[\"plain\"],\"series\":[\"emb\"],"
          "\"max_points\":0}", "max_points");
}
END_TEST

START_TEST(float_series_statistics)
{
  cJSON *o = tc_ok("fetch_float_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\"],"
                "\"histogram_statistic\":\"mean\"}");
  const cJSON *e = cJSON_GetArrayItem(tc_arr(o, "entries"), 0);
  ck_assert_str_eq(tc_str(e, "statistic"), "mean");
  ck_assert_int_eq(cJSON_GetArraySize(tc_arr(e, "step")), N_HIST);
  for (int h = 0; h < N_HIST; h++) {
    double tot = 0, s1 = 0;
    for (int b = 0; b < 5; b++) {
      tot += hcount(b, h * 10);
      s1 += hcount(b, h * 10) * (b + 0.5);
    }
    ck_assert_int_eq((int)at(e, "step", h), h * 10);
    near(at(e, "value", h), s1 / tot);
  }
  cJSON_Delete(o);
  /* the last max_points by default; a quantile; median = p50 */
  o = tc_ok("fetch_float_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\"],"
         "\"histogram_statistic\":\"p50\",\"max_points\":2}");
  e = cJSON_GetArrayItem(tc_arr(o, "entries"), 0);
  ck_assert_int_eq((int)tc_num(e, "points_before"), N_HIST - 2);
  ck_assert_int_eq((int)at(e, "step", 0), (N_HIST - 2) * 10);
  double p50 = at(e, "value", 1);
  cJSON_Delete(o);
  o = tc_ok("fetch_float_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\"],"
         "\"histogram_statistic\":\"median\",\"max_points\":1}");
  near(at(cJSON_GetArrayItem(tc_arr(o, "entries"), 0), "value", 0), p50);
  cJSON_Delete(o);
  /* a range holding more than max_points comes back bucketed, and says so */
  o = tc_ok("fetch_float_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\"],"
         "\"histogram_statistic\":\"max\",\"step_from\":0,\"step_to\":110,\"max_points\":3}");
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(o, "note"));
  e = cJSON_GetArrayItem(tc_arr(o, "entries"), 0);
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(e, "bucketed")));
  ck_assert_int_eq((int)tc_num(e, "points_in_range"), N_HIST);
  double n = 0;
  for (int b = 0; b < cJSON_GetArraySize(tc_arr(e, "count")); b++)
    n += at(e, "count", b);
  ck_assert_int_eq((int)n, N_HIST);
  cJSON_Delete(o);
  /* float and histogram series side by side */
  o = tc_ok("fetch_float_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\",\"val/loss\"],"
         "\"histogram_statistic\":\"std\"}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 2);
  cJSON_Delete(o);
  o = tc_ok("fetch_float_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\",\"val/loss\"]}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), 1);
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(o, "skipped"));
  cJSON_Delete(o);
  tc_refused("fetch_float_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\"]}",
          "grad/norm is a histogram series: pass histogram_statistic");
  tc_refused("fetch_float_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\"],"
          "\"histogram_statistic\":\"p101\"}", "histogram_statistic 'p101'");
  tc_refused("fetch_float_series", "{\"runs\":[\"plain\"],\"series\":[\"grad/norm\"],"
          "\"histogram_statistic\":\"mode\"}", "not mean, std, min, max, median or pNN");
  /* RL series always need their scale, in the run fetch tools too */
  tc_refused("fetch_float_series", "{\"runs\":[\"rl-a\"],\"series\":[\"episode/return\"]}",
          "episode/return is an RL series logged on the EPISODE scale");
  tc_refused("fetch_series_summaries", "{\"runs\":[\"rl-a\"],\"series\":[\"loss/value\"]}",
          "ENVIRONMENT_STEP");
  o = tc_ok("fetch_series_summaries", "{\"runs\":[\"rl-a\"],\"series\":[\"episode/return\"],"
         "\"scale\":\"EPISODE\"}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), N_ENVS);
  cJSON_Delete(o);
}
END_TEST

START_TEST(scale_names)
{
  /* In filters, sorts and summary columns a scale is written as the tools
   * name it or in the store's lower case: both read the same series. */
  int want = 0;
  for (int k = 1; k < N_ENVS; k++)
    want += ret_of(k, N_EPISODES - 1) >= 100;
  static const char *const ep[] = {"EPISODE", "episode"};
  static const char *const env[] = {"ENVIRONMENT_STEP", "env_step"};
  for (int i = 0; i < 2; i++) {
    char a[640];
    snprintf(a, sizeof a,
             "{\"run\":\"rl-a\",\"filter\":[{\"attr\":\"env/level\",\"op\":\"eq\","
             "\"value\":\"hard\"},{\"series\":\"episode/return\",\"function\":\"last\","
             "\"op\":\"gte\",\"value\":100,\"scale\":\"%s\"}]}", ep[i]);
    cJSON *o = tc_ok("list_rl_environments", a);
    ck_assert_int_eq((int)tc_num(o, "total_count"), want);
    cJSON_Delete(o);
    snprintf(a, sizeof a,
             "{\"run\":\"rl-a\",\"sort\":{\"series\":\"episode/return\",\"function\":"
             "\"max\",\"scale\":\"%s\",\"direction\":\"desc\"},\"summary_columns\":"
             "[{\"series\":\"loss/value\",\"function\":\"min\",\"scale\":\"%s\"}]}",
             ep[i], env[i]);
    o = tc_ok("list_rl_environments", a);
    const cJSON *row = cJSON_GetArrayItem(tc_arr(o, "rows"), 0);
    ck_assert_str_eq(tc_str(row, "environment"), "10");
    near(tc_num(row, "max(episode/return)"), ret_of(3, N_EPISODES - 1));
    near(tc_num(row, "min(loss/value)"), loss_of(3, N_STEPS - 1));
    cJSON_Delete(o);
  }
  tc_refused("list_rl_environments", "{\"run\":\"rl-a\",\"filter\":[{\"series\":"
             "\"episode/return\",\"op\":\"exists\",\"scale\":\"Episode\"}]}",
             "unknown scale");
  /* the `scale` argument itself takes the tools' names, each reading its
   * own series */
  cJSON *o = tc_ok("fetch_rl_env_series_buckets", "{\"run\":\"rl-a\",\"series\":"
                   "[\"loss/value\"],\"scale\":\"ENVIRONMENT_STEP\",\"buckets\":2}");
  ck_assert_int_eq((int)tc_num(o, "total_count"), N_ENVS);
  cJSON_Delete(o);
  o = tc_ok("aggregate_rl_env_series", "{\"run\":\"rl-a\",\"series\":\"episode/return\","
            "\"scale\":\"EPISODE\",\"function\":\"max\",\"buckets\":2}");
  cJSON_Delete(o);
  tc_refused("fetch_rl_env_series_buckets", "{\"run\":\"rl-a\",\"series\":"
             "[\"episode/return\"],\"scale\":\"episode\"}", "scale");
}
END_TEST

START_TEST(store_records)
{
  pmcp_store *w = NULL;
  ck_assert_int_eq(pmcp_store_open(&w, st_path, 0), 0);
  pmcp_tenant t;
  ST_OK(w, pmcp_store_tenant(w, NULL, 0, &t));
  static const struct { const char *json, *needle; int rc; } bad[] = {
    {"{\"env\":\"0\",\"path\":\"a\",\"value\":1}", "needs \"run\"", PMCP_EINVAL},
    {"{\"run\":\"rl-a\",\"path\":\"a\",\"value\":1}", "needs \"env\"", PMCP_EINVAL},
    {"{\"run\":\"rl-a\",\"env\":\"0\",\"value\":1}", "needs \"path\"", PMCP_EINVAL},
    {"{\"run\":\"rl-a\",\"env\":\"0\",\"path\":\"a\"}", "needs \"value\"", PMCP_EINVAL},
    {"{\"run\":\"rl-a\",\"env\":\"0\",\"path\":\"a\",\"value\":{}}", "\"value\" must be",
     PMCP_EINVAL},
    {"{\"run\":\"rl-a\",\"env\":\"0\",\"path\":\"a\",\"value\":[1]}", "list of strings",
     PMCP_EINVAL},
    {"{\"run\":\"rl-a\",\"env\":\"0\",\"path\":\"/a\",\"value\":1}", "invalid path",
     PMCP_EINVAL},
    {"{\"run\":\"rl-a\",\"env\":\"0\",\"path\":\"sys/id\",\"value\":1}", "reserved",
     PMCP_EINVAL},
    {"{\"run\":\"rl-a\",\"env\":\"0\",\"path\":\"a\",\"value\":1,\"episode\":-2}",
     "0 or more", PMCP_EINVAL},
    {"{\"run\":\"rl-a\",\"env\":\"0\",\"path\":\"a\",\"value\":1,\"episode\":1.5}",
     "integer", PMCP_EINVAL},
    {"{\"run\":\"nope\",\"env\":\"0\",\"path\":\"a\",\"value\":1}", "nope", PMCP_ENOTFOUND},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int rc = pmcp_store_put(w, t, "env-attribute", bad[i].json, strlen(bad[i].json), NULL);
    ck_assert_msg(rc == bad[i].rc, "%s -> %d", bad[i].json, rc);
    ck_assert_msg(strstr(pmcp_store_errmsg(w), bad[i].needle) != NULL, "%s: %s lacks %s",
                  bad[i].json, pmcp_store_errmsg(w), bad[i].needle);
  }
  /* writing a version again replaces it; the list reads it back */
  const char *v = "{\"run\":\"rl-a\",\"env\":\"2\",\"path\":\"env/level\",\"value\":\"medium\"}";
  pmcp_buf ref = PMCP_BUF_INIT;
  ST_OK(w, pmcp_store_put(w, t, "env-attribute", v, strlen(v), &ref));
  ck_assert_str_eq(ref.ptr, "run:rl-a");
  pmcp_buf_dispose(&ref);
  pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
  o.kind = "env-attribute";
  o.parent = "run:rl-a";
  o.filter = "{\"env\":\"2\",\"path\":\"env/level\"}";
  pmcp_buf out = PMCP_BUF_INIT;
  ST_OK(w, pmcp_store_list(w, t, &o, &out));
  cJSON *j = cJSON_Parse(out.ptr);
  ck_assert_int_eq((int)tc_num(j, "total"), 1);
  ck_assert_str_eq(tc_str(cJSON_GetArrayItem(tc_arr(j, "items"), 0), "value"), "medium");
  cJSON_Delete(j);
  o.parent = NULL;
  ST_RC(w, pmcp_store_list(w, t, &o, &out), PMCP_EINVAL);
  pmcp_buf_dispose(&out);
  pmcp_store_free(w);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("tracking-rl");
  TCase *tc = tcase_create("tools");
  tcase_set_timeout(tc, 60);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, tools_listed);
  tcase_add_test(tc, rl_info);
  tcase_add_test(tc, environments_table);
  tcase_add_test(tc, environments_refusals);
  tcase_add_test(tc, budget_cut_pages);
  tcase_add_test(tc, metrics_and_definitions);
  tcase_add_test(tc, environment_attributes);
  tcase_add_test(tc, env_series_buckets);
  tcase_add_test(tc, aggregate);
  tcase_add_test(tc, histograms);
  tcase_add_test(tc, scatter);
  tcase_add_test(tc, float_series_statistics);
  tcase_add_test(tc, scale_names);
  tcase_add_test(tc, store_records);
  suite_add_tcase(s, tc);
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
