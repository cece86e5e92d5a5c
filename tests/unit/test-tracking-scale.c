/* SPDX-License-Identifier: MIT */
/* list_runs on the run row and its tags against a brute-force scan of the
 * generated runs. 2,600 runs (and 100 in another project) with awkward
 * names (unicode, case, LIKE metacharacters % _ \), tags from every other
 * run to one in 97, ties of creation time and of the sort value, runs
 * without a value, deleted runs; enough that a condition is read from its
 * own index when it matches few runs and in the page's order when it
 * matches many, and that the total passes the counting cap. Every page
 * must hold exactly the runs the scan finds, in its order; the total is
 * exact, or (marked total_estimated) a lower bound at least the page's
 * end. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine-harness.h"
#include "store-test-util.h"

#define N 2600
#define N_OTHER 100

static harness *H;
static pmcp_store *RO;
static pmcp_tenant T;
static int next_id = 100;

static const char *const stems[] = {"trial-", "Trial-", "tri%al_", "a_b\\c", "\xc3\x89t\xc3\xa9-",
                                    "\xc3\xa9t\xc3\xa9-", "x%", "_", "trial-1"};
#define N_STEMS (sizeof stems / sizeof stems[0])
static const char *const states[] = {"running", "finished", "failed", "killed"};

/* The generated runs of project p, by creation order. */
typedef struct grun {
  char id[16], name[48];
  const char *state;
  long long created;
  int deleted, valued;
  double value;
  int big, mid, rare, cap5; /* tags big, mid, rare, Big */
} grun;
static grun R[N];

static void gen(int i, grun *g, const char *prefix)
{
  snprintf(g->id, sizeof g->id, "%s%05d", prefix, i);
  if (i % 11 == 10)
    snprintf(g->name, sizeof g->name, "%s", g->id); /* no name: the id */
  else
    snprintf(g->name, sizeof g->name, "%s%d", stems[i % N_STEMS], i % 37);
  g->state = states[i % 4];
  g->created = 1700000000000LL + (i / 3) * 1000; /* ties in threes */
  g->deleted = i % 7 == 3;
  g->valued = i % 9 != 8;
  g->value = (i % 13) / 4.0; /* ties, exact doubles */
  g->big = i % 2 == 0;
  g->mid = i % 3 == 0;
  g->rare = i % 97 == 0;
  g->cap5 = i % 5 == 0;
}

static void put_run(pmcp_store *s, const grun *g, const char *project)
{
  char ref[40];
  snprintf(ref, sizeof ref, "run:%s", g->id);
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = g->id;
  r.project = project;
  r.name = strcmp(g->name, g->id) ? g->name : NULL;
  r.status = g->state;
  r.created_ms = g->created;
  ST_OK(s, pmcp_store_run_create(s, T, &r, NULL));
  const char *tags[] = {g->big ? "big" : NULL, g->mid ? "mid" : NULL, g->rare ? "rare" : NULL,
                        g->cap5 ? "Big" : NULL};
  for (size_t k = 0; k < 4; k++)
    if (tags[k])
      ST_OK(s, pmcp_store_tag(s, T, ref, tags[k], 1));
  if (g->valued) {
    pmcp_series_spec ss = {PMCP_SERIES_SPEC_VERSION, "val/loss", NULL, 0, PMCP_METRIC_FLOAT,
                           PMCP_SCALE_STEP};
    int64_t sid;
    ST_OK(s, pmcp_store_series(s, T, g->id, &ss, &sid));
    pmcp_point pt[2] = {{0, 1700000000000LL, 9.0}, {1, 1700000000001LL, g->value}};
    ST_OK(s, pmcp_store_log(s, T, sid, pt, 2));
  }
  if (g->deleted)
    ST_OK(s, pmcp_store_set_deleted(s, T, ref, 1));
}

static void setup(void)
{
  pmcp_store *s = st_open_new(&T);
  pmcp_entity_spec p = PMCP_ENTITY_SPEC_INIT;
  p.id = "p";
  p.name = "P";
  ST_OK(s, pmcp_store_create(s, T, "project", &p, NULL));
  p.id = "q";
  p.name = "Q";
  ST_OK(s, pmcp_store_create(s, T, "project", &p, NULL));
  ST_OK(s, pmcp_store_begin(s));
  for (int i = 0; i < N; i++) {
    gen(i, &R[i], "s");
    put_run(s, &R[i], "p");
    if (i % (N / N_OTHER) == 0) { /* the other project, interleaved */
      grun o;
      gen(i, &o, "o");
      put_run(s, &o, "q");
    }
  }
  ST_OK(s, pmcp_store_commit(s));
  pmcp_store_free(s);
  ck_assert_int_eq(pmcp_store_open(&RO, st_path, PMCP_STORE_READONLY), 0);
  H = h_new(NULL);
  ck_assert_int_eq(pmcp_tracking_register(H->srv, RO, NULL), 0);
  h_init(H, "", "2025-06-18");
}

static void teardown(void)
{
  h_free(H);
  pmcp_store_free(RO);
  st_cleanup();
}

/* ---- the brute-force scan ------------------------------------------------ */

static int prefixed(const grun *g, const char *pre)
{
  return strncmp(g->name, pre, strlen(pre)) == 0;
}

typedef struct fcase {
  const char *filter;
  int (*keep)(const grun *g);
} fcase;

static int k_all(const grun *g) { (void)g; return 1; }
static int k_failed(const grun *g) { return !strcmp(g->state, "failed"); }
static int k_not_running(const grun *g) { return strcmp(g->state, "running") != 0; }
static int k_states(const grun *g) { return !strcmp(g->state, "killed") || !strcmp(g->state, "failed"); }
static int k_trial(const grun *g) { return prefixed(g, "trial-"); }
static int k_trial1(const grun *g) { return prefixed(g, "trial-1"); }
static int k_Trial(const grun *g) { return prefixed(g, "Trial-"); }
static int k_pct(const grun *g) { return prefixed(g, "tri%al_"); }
static int k_under(const grun *g) { return prefixed(g, "a_b"); }
static int k_E(const grun *g) { return prefixed(g, "\xc3\x89"); }
static int k_e(const grun *g) { return prefixed(g, "\xc3\xa9t"); }
static int k_x(const grun *g) { return prefixed(g, "x%"); }
static int k_u(const grun *g) { return prefixed(g, "_"); }
static int k_gt(const grun *g) { return strcmp(g->name, "a") > 0; }
static int k_lte(const grun *g) { return strcmp(g->name, "trial-5") <= 0; }
static int k_ids(const grun *g) { return !strcmp(g->id, "s00007") || !strcmp(g->id, "s02590"); }
static int k_big(const grun *g) { return g->big; }
static int k_rare(const grun *g) { return g->rare; }
static int k_big_mid(const grun *g) { return g->big && g->mid; }
static int k_rare_Big(const grun *g) { return g->rare || g->cap5; }
static int k_none(const grun *g) { (void)g; return 0; }
static int k_fin_big(const grun *g) { return !strcmp(g->state, "finished") && g->big; }
static int k_trial_mid(const grun *g) { return prefixed(g, "trial-") && g->mid; }
static int k_rare_not_failed(const grun *g) { return g->rare && strcmp(g->state, "failed"); }

#define C(a, op, v) "{\"attr\":\"" a "\",\"op\":\"" op "\",\"value\":" v "}"
static const fcase cases[] = {
  {"[]", k_all},
  {"[" C("sys/state", "eq", "\"failed\"") "]", k_failed},
  {"[" C("sys/state", "ne", "\"running\"") "]", k_not_running},
  {"[" C("sys/state", "in", "[\"killed\",\"failed\",2]") "]", k_states},
  {"[" C("sys/name", "matches", "\"^trial-\"") "]", k_trial},
  {"[" C("sys/name", "matches", "\"^trial-1\"") "]", k_trial1},
  {"[" C("sys/name", "matches", "\"^Trial-\"") "]", k_Trial},
  {"[" C("sys/name", "matches", "\"^tri%al_\"") "]", k_pct},
  {"[" C("sys/name", "matches", "\"^a_b\"") "]", k_under},
  {"[" C("sys/name", "matches", "\"^\\u00c9\"") "]", k_E},
  {"[" C("sys/name", "matches", "\"^\\u00e9t\"") "]", k_e},
  {"[" C("sys/name", "matches", "\"^x%\"") "]", k_x},
  {"[" C("sys/name", "matches", "\"^_\"") "]", k_u},
  {"[" C("sys/name", "gt", "\"a\"") "]", k_gt},
  {"[" C("sys/name", "lte", "\"trial-5\"") "]", k_lte},
  {"[" C("sys/id", "in", "[\"s00007\",\"s02590\",\"o00000\"]") "]", k_ids},
  {"[" C("sys/tags", "contains", "\"big\"") "]", k_big},
  {"[" C("sys/tags", "contains", "\"rare\"") "]", k_rare},
  {"[" C("sys/tags", "contains", "\"BIG\"") "]", k_none},
  {"[" C("sys/tags", "contains_all", "[\"big\",\"mid\"]") "]", k_big_mid},
  {"[" C("sys/tags", "contains_any", "[\"rare\",\"Big\"]") "]", k_rare_Big},
  {"[" C("sys/state", "eq", "\"finished\"") "," C("sys/tags", "contains", "\"big\"") "]",
   k_fin_big},
  {"[" C("sys/name", "matches", "\"^trial-\"") "," C("sys/tags", "contains", "\"mid\"") "]",
   k_trial_mid},
  {"[" C("sys/tags", "contains", "\"rare\"") "," C("sys/state", "ne", "\"failed\"") "]",
   k_rare_not_failed},
};

static int sort_dir; /* 0 none, 1 last asc, -1 last desc */

static int newest(const grun *a, const grun *b)
{
  if (a->created != b->created)
    return a->created > b->created ? -1 : 1;
  return a > b ? -1 : a < b; /* later created rows have larger ids */
}

static int expected_order(const void *x, const void *y)
{
  const grun *a = *(const grun *const *)x, *b = *(const grun *const *)y;
  if (sort_dir) {
    if (a->valued != b->valued)
      return a->valued ? -1 : 1;
    if (a->valued && a->value != b->value)
      return (a->value < b->value ? -1 : 1) * sort_dir;
  }
  return newest(a, b);
}

/* ---- the comparison ------------------------------------------------------ */

static cJSON *call(const char *args)
{
  char *msg = malloc(strlen(args) + 200);
  sprintf(msg, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
               "{\"name\":\"list_runs\",\"arguments\":%s}}", next_id++, args);
  cJSON *resp = h_call(H, "", msg);
  free(msg);
  ck_assert_msg(h_error_code(resp) == 0, "%s: %s", args, h_error_message(resp));
  cJSON *o = cJSON_Parse(h_text0(resp));
  ck_assert_msg(o && cJSON_GetObjectItem(o, "rows"), "%s: no rows: %.300s", args, h_text0(resp));
  cJSON_Delete(resp);
  return o;
}

static void check_case(const fcase *fc, int dir, size_t offset, size_t limit)
{
  static const grun *want[N];
  size_t n = 0;
  for (int i = 0; i < N; i++)
    if (!R[i].deleted && fc->keep(&R[i]))
      want[n++] = &R[i];
  sort_dir = dir;
  qsort(want, n, sizeof *want, expected_order);
  char args[1600];
  snprintf(args, sizeof args,
           "{\"project\":\"p\",\"filter\":%s,\"offset\":%zu,\"limit\":%zu,"
           "\"token_budget\":8000%s}", fc->filter, offset, limit,
           dir > 0   ? ",\"sort\":{\"series\":\"val/loss\",\"function\":\"last\"}"
           : dir < 0 ? ",\"sort\":{\"series\":\"val/loss\",\"function\":\"last\","
                       "\"direction\":\"desc\"}"
                     : "");
  cJSON *o = call(args);
  const cJSON *rows = cJSON_GetObjectItem(o, "rows"), *row;
  size_t k = offset;
  cJSON_ArrayForEach(row, rows)
  {
    const char *got = cJSON_GetStringValue(cJSON_GetObjectItem(row, "run"));
    ck_assert_msg(k < n, "%s: row %zu (%s) past the %zu matches", args, k, got, n);
    ck_assert_msg(got && !strcmp(got, want[k]->id), "%s: row %zu is %s, want %s", args, k,
                  got ? got : "?", want[k]->id);
    k++;
  }
  size_t page_end = offset + limit < n ? offset + limit : n > offset ? n : offset;
  ck_assert_msg(k == page_end, "%s: %zu rows, want %zu", args, k - offset, page_end - offset);
  double total = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "total_count"));
  int est = cJSON_IsTrue(cJSON_GetObjectItem(o, "total_estimated"));
  if (est)
    ck_assert_msg(total >= (double)page_end && total < (double)n && n > offset + limit,
                  "%s: estimated total %.0f, %zu match", args, total, n);
  else
    ck_assert_msg(total == (double)n, "%s: total %.0f, %zu match", args, total, n);
  cJSON_Delete(o);
}

START_TEST(pages_match_the_scan)
{
  static const size_t pages[][2] = {{0, 20}, {0, 100}, {37, 25}, {990, 30}, {2010, 40}};
  int pg = st_is_pg();
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int dir = -1; dir <= 1; dir++)
      for (size_t p = 0; p < sizeof pages / sizeof pages[0]; p++) {
        if (pg && dir && p % 2) /* PostgreSQL: fewer sorted pages */
          continue;
        check_case(&cases[c], dir, pages[p][0], pages[p][1]);
      }
}
END_TEST

/* A total counted to its end is exact and unmarked, past the page's end
 * on a deep page; the first page of every run stops counting, marked. */
START_TEST(estimate_marked_only_past_the_cap)
{
  size_t live = 0;
  for (int i = 0; i < N; i++)
    live += !R[i].deleted;
  cJSON *o = call("{\"project\":\"p\",\"offset\":2200,\"limit\":50}");
  ck_assert_msg(!cJSON_GetObjectItem(o, "total_estimated"), "a total counted to its end");
  ck_assert_int_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "total_count")), (int)live);
  cJSON_Delete(o);
  o = call("{\"project\":\"p\",\"limit\":5}");
  ck_assert_msg(live > 2005 && cJSON_IsTrue(cJSON_GetObjectItem(o, "total_estimated")),
                "%zu live runs: the first page's total should be estimated", live);
  cJSON_Delete(o);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("tracking-scale");
  TCase *tc = tcase_create("scan");
  tcase_set_timeout(tc, 600);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, pages_match_the_scan);
  tcase_add_test(tc, estimate_marked_only_past_the_cap);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  int skip = st_backend_check();
  if (skip)
    return skip;
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
