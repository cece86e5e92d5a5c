/* SPDX-License-Identifier: MIT */
/* list_runs' fast paths against its slow exact one. One store, two servers:
 * one over the SQLite store itself (the answer from index scans,
 * pmcp__store_run_page, or the run table's candidates checked in C) and
 * one over a proxy backend (store-proxy.h) that reads run by run and
 * evaluates every condition in C. Random filters, sorts and pages over
 * data full of edge cases (values equal once rounded to 15 digits, numbers
 * stored as text, booleans, string sets, "[...]" strings, tied creation
 * times, labelled series, deleted runs, another project) must give
 * byte-identical answers, so a pushdown that is wrong fails here (400
 * cases: about a third answered whole in SQL). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine-harness.h"
#include "store-proxy.h"
#include "store-test-util.h"
#include "store/db.h"
#include "store/runtable.h"

#define N_RUNS 90

static harness *FAST, *SLOW;
static pmcp_store *RO, *PROXY;
static pmcp_tenant T;
static int next_id = 100;

/* A small deterministic generator (xorshift64*). */
static uint64_t rng_state;
static uint64_t rnd(void)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ULL;
}
static int pick(int n) { return (int)(rnd() % (uint64_t)n); }

/* Numbers that meet at 15 significant digits or sit on either side of
 * the values conditions use. */
static const double nums[] = {0.1, 0.3, 0.30000000000000004, 0.29999999999999993, 1e-3,
                              0.0010000000000000002, 2.5, -1.0, 0.0, 3.0, 1e300, 7.0,
                              123456.789012345678, 0.2, 0.5};
#define N_NUMS (sizeof nums / sizeof nums[0])
static const char *const strs[] = {"adamw", "sgd", "[x]", "NaN", "Adam", "b", "[", "zz", ""};
#define N_STRS (sizeof strs / sizeof strs[0])

static void set_attr(pmcp_store *s, const char *ref, const char *path, int kind, int i)
{
  pmcp_value v = {PMCP_V_STRING, NULL, 0, 0, NULL, 0};
  static const char *set[] = {"adamw", "b"};
  switch (kind) {
  case 0: v.type = PMCP_V_STRING; v.s = strs[i % N_STRS]; break;
  case 1: v.type = PMCP_V_FLOAT; v.f = nums[i % N_NUMS]; break;
  case 2: v.type = PMCP_V_INT; v.i = (int64_t)(i % 5) - 1; break;
  case 3: v.type = PMCP_V_BOOL; v.i = i % 2; break;
  case 4: v.type = PMCP_V_STRING_SET; v.set = set; v.n_set = (size_t)(i % 3); break;
  case 5: v.type = PMCP_V_DATETIME; v.i = 1700000000000LL + (i % 4) * 1000; break;
  default: v.type = PMCP_V_FLOAT; v.f = NAN; break;
  }
  ST_OK(s, pmcp_store_set_attr(s, T, ref, path, &v));
}

static void log_series(pmcp_store *s, const char *id, const char *key, pmcp_label *lab,
                       size_t n_lab, pmcp_metric_scale scale, int i, int n)
{
  pmcp_series_spec ss = {PMCP_SERIES_SPEC_VERSION, key, lab, n_lab, PMCP_METRIC_FLOAT, scale};
  int64_t sid;
  ST_OK(s, pmcp_store_series(s, T, id, &ss, &sid));
  pmcp_point pts[4];
  for (int k = 0; k < n; k++) {
    pts[k].step = k;
    pts[k].time_ms = 1700000000000LL + k;
    pts[k].value = k == n - 1 ? nums[(i * 7 + k) % N_NUMS] : nums[(i + k) % N_NUMS];
  }
  if (n && i % 17 == 3)
    pts[0].value = NAN; /* a non-finite point */
  ST_OK(s, pmcp_store_log(s, T, sid, pts, (size_t)n));
}

static void populate(void)
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
  for (int i = 0; i < N_RUNS; i++) {
    char id[32], ref[40];
    snprintf(id, sizeof id, "r%02d", i);
    snprintf(ref, sizeof ref, "run:%s", id);
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = id;
    r.project = i % 11 == 10 ? "q" : "p";
    r.status = i % 4 == 0 ? "failed" : i % 4 == 1 ? "finished" : i % 4 == 2 ? "killed"
                                                                            : "running";
    /* names: the id, a shared prefix, unicode, a prefix of another name */
    char name[64];
    static const char *const stems[] = {"trial-", "trial-1", "\xc3\xbc" "ber-", "Trial-", "tri"};
    snprintf(name, sizeof name, "%s%d", stems[i % 5], i % 7);
    r.name = i % 6 == 5 ? NULL : name;
    r.created_ms = 1700000000000LL + (i / 3) * 1000; /* ties in threes */
    ST_OK(s, pmcp_store_run_create(s, T, &r, NULL));
    if (i % 9 != 8)
      set_attr(s, ref, "config/opt", i % 13 == 5 ? 4 : 0, i);
    if (i % 7 != 6) /* mostly floats, some of every other type */
      set_attr(s, ref, "config/lr", i % 10 < 6 ? 1 : i % 10 - 4, i * 5 + 1);
    set_attr(s, ref, "config/layers", i % 6 == 0 ? 3 : 2, i);
    if (i % 5 == 1)
      ST_OK(s, pmcp_store_tag(s, T, ref, i % 2 ? "odd" : "even", 1));
    if (i % 3 == 1)
      ST_OK(s, pmcp_store_tag(s, T, ref, "base", 1));
    if (i % 8 != 7)
      log_series(s, id, "val/loss", NULL, 0, PMCP_SCALE_STEP, i, 1 + i % 4);
    if (i % 3 == 0) {
      /* a labelled key: some runs hold two series of it */
      pmcp_label a = {"rank", "0"}, b = {"rank", "1"};
      log_series(s, id, "train/loss", &a, 1, PMCP_SCALE_STEP, i, 2);
      if (i % 2 == 0)
        log_series(s, id, "train/loss", &b, 1, PMCP_SCALE_STEP, i + 1, 3);
    }
    if (i % 4 == 2)
      log_series(s, id, "ep/reward", NULL, 0, PMCP_SCALE_EPISODE, i, 3);
    if (i % 19 == 4)
      ST_OK(s, pmcp_store_set_deleted(s, T, ref, 1));
  }
  ST_OK(s, pmcp_store_commit(s));
  pmcp_store_free(s);
  ck_assert_int_eq(pmcp_store_open(&RO, st_path, PMCP_STORE_READONLY), 0);
  ck_assert_int_eq(px_open(&PROXY, RO), 0);
}

static harness *server(pmcp_store *s)
{
  harness *h = h_new(NULL);
  ck_assert_int_eq(pmcp_tracking_register(h->srv, s, NULL), 0);
  h_init(h, "", "2025-06-18");
  return h;
}

static void setup(void)
{
  populate();
  FAST = server(RO);
  SLOW = server(PROXY);
}

static void teardown(void)
{
  h_free(FAST);
  h_free(SLOW);
  pmcp_store_free(PROXY);
  pmcp_store_free(RO);
  st_cleanup();
}

/* list_runs' whole result text (caller frees). */
static char *list_runs(harness *h, const char *args)
{
  char *msg = malloc(strlen(args) + 200);
  sprintf(msg, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
               "{\"name\":\"list_runs\",\"arguments\":%s}}", next_id++, args);
  cJSON *resp = h_call(h, "", msg);
  free(msg);
  ck_assert_msg(h_error_code(resp) == 0, "%s: protocol error %s", args, h_error_message(resp));
  char *text = strdup(h_text0(resp));
  cJSON_Delete(resp);
  return text;
}

/* ---- random filters ------------------------------------------------------ */

static cJSON *scalar(void)
{
  switch (pick(5)) {
  case 0: case 1: return cJSON_CreateNumber(nums[pick((int)N_NUMS)]);
  case 2: case 3: return cJSON_CreateString(strs[pick((int)N_STRS)]);
  default: return cJSON_CreateBool(pick(2));
  }
}

static cJSON *attr_cond(void)
{
  static const char *const paths[] = {"config/opt", "config/lr", "config/layers",
                                      "config/missing", "sys/state", "sys/tags", "sys/name"};
  static const char *const ops[] = {"eq", "ne", "gt", "gte", "lt", "lte", "matches",
                                    "contains", "contains_any", "contains_all", "in",
                                    "not_in", "exists"};
  cJSON *c = cJSON_CreateObject();
  /* the numeric path and comparisons more often: they are the pushdown */
  const char *path = pick(2) ? "config/lr" : paths[pick(7)];
  const char *op = pick(2) ? ops[pick(6)] : ops[pick(13)];
  cJSON_AddStringToObject(c, "attr", path);
  cJSON_AddStringToObject(c, "op", op);
  /* the run's own columns and tags, with values they hold */
  static const char *const sys_vals[] = {"failed", "running", "killed", "trial-1",
                                         "trial-10", "\xc3\xbc" "ber-3", "r05", "odd", "base",
                                         "even", "Trial-"};
  static const char *const prefixes[] = {"^trial-", "^trial-1", "^\xc3\xbc", "^r0", "^T",
                                         "^", "^tri", "^zz"};
  int sys = !strncmp(path, "sys/", 4) && pick(3);
  if (!strcmp(op, "exists")) {
    if (pick(2))
      cJSON_AddBoolToObject(c, "value", pick(2));
  } else if (sys && !strcmp(op, "matches")) {
    cJSON_AddStringToObject(c, "value", prefixes[pick(8)]);
  } else if (sys && (!strcmp(op, "in") || !strcmp(op, "not_in") || !strncmp(op, "contains_", 9))) {
    const char *v[] = {sys_vals[pick(11)], sys_vals[pick(11)], sys_vals[pick(11)]};
    cJSON_AddItemToObject(c, "value", cJSON_CreateStringArray(v, 1 + pick(3)));
  } else if (sys) {
    cJSON_AddStringToObject(c, "value", sys_vals[pick(11)]);
  } else if (!strcmp(op, "matches") || !strcmp(op, "contains")) {
    cJSON_AddStringToObject(c, "value", pick(2) ? "a" : "^[a-z]+$");
  } else if (!strncmp(op, "contains_", 9)) {
    const char *v[] = {strs[pick((int)N_STRS)], "odd"};
    cJSON_AddItemToObject(c, "value", cJSON_CreateStringArray(v, 1 + pick(2)));
  } else if (!strcmp(op, "in") || !strcmp(op, "not_in")) {
    cJSON *a = cJSON_CreateArray();
    for (int k = 1 + pick(3); k > 0; k--)
      cJSON_AddItemToArray(a, scalar());
    cJSON_AddItemToObject(c, "value", a);
  } else {
    cJSON *v = scalar();
    if (strcmp(op, "eq") && strcmp(op, "ne") && cJSON_IsBool(v)) {
      cJSON_Delete(v);
      v = cJSON_CreateNumber(nums[pick((int)N_NUMS)]);
    }
    cJSON_AddItemToObject(c, "value", v);
  }
  return c;
}

static void series_target(cJSON *c, int sort)
{
  static const char *const fns[] = {"last", "first", "min", "max", "avg", "count"};
  int k = pick(4);
  cJSON_AddStringToObject(c, "series", k < 2 ? "val/loss" : k == 2 ? "train/loss" : "ep/reward");
  if (!sort || pick(4))
    cJSON_AddStringToObject(c, "function", fns[pick(6)]);
  if (k == 3 || pick(5) == 0)
    cJSON_AddStringToObject(c, "scale", k == 3 ? "EPISODE" : "STEP");
  if (k == 2 && pick(2)) {
    cJSON *l = cJSON_CreateObject();
    cJSON_AddStringToObject(l, "rank", pick(2) ? "0" : "1");
    cJSON_AddItemToObject(c, "labels", l);
  }
}

static cJSON *series_cond(void)
{
  static const char *const ops[] = {"eq", "ne", "gt", "gte", "lt", "lte"};
  cJSON *c = cJSON_CreateObject();
  series_target(c, 0);
  if (pick(6) == 0) {
    cJSON_DeleteItemFromObject(c, "function");
    cJSON_AddStringToObject(c, "op", "exists");
    if (pick(2))
      cJSON_AddBoolToObject(c, "value", pick(2));
  } else {
    cJSON_AddStringToObject(c, "op", ops[pick(6)]);
    double v = nums[pick((int)N_NUMS)];
    if (!strcmp(cJSON_GetObjectItem(c, "function")->valuestring, "count"))
      v = pick(5);
    cJSON_AddNumberToObject(c, "value", v);
  }
  return c;
}

static cJSON *leaf_cond(void)
{
  return pick(2) ? attr_cond() : series_cond();
}

static cJSON *random_filter(void)
{
  cJSON *f = cJSON_CreateArray();
  for (int n = pick(4); n > 0; n--) {
    if (pick(4) == 0) {
      cJSON *g = cJSON_CreateArray();
      for (int k = 1 + pick(3); k > 0; k--)
        cJSON_AddItemToArray(g, leaf_cond());
      cJSON *o = cJSON_CreateObject();
      cJSON_AddItemToObject(o, "any_of", g);
      cJSON_AddItemToArray(f, o);
    } else {
      cJSON_AddItemToArray(f, leaf_cond());
    }
  }
  return f;
}

static cJSON *random_args(void)
{
  cJSON *a = cJSON_CreateObject();
  cJSON_AddStringToObject(a, "project", "p");
  cJSON_AddItemToObject(a, "filter", random_filter());
  int s = pick(4);
  if (s == 1 || s == 2) {
    cJSON *so = cJSON_CreateObject();
    series_target(so, 1);
    if (!cJSON_GetObjectItem(so, "function"))
      cJSON_AddStringToObject(so, "function", "last");
    if (pick(2))
      cJSON_AddStringToObject(so, "direction", pick(2) ? "asc" : "desc");
    cJSON_AddItemToObject(a, "sort", so);
  } else if (s == 3) {
    static const char *const paths[] = {"config/lr", "config/opt", "sys/name",
                                        "sys/creation_time"};
    cJSON *so = cJSON_CreateObject();
    cJSON_AddStringToObject(so, "attr", paths[pick(4)]);
    if (pick(2))
      cJSON_AddStringToObject(so, "direction", pick(2) ? "asc" : "desc");
    cJSON_AddItemToObject(a, "sort", so);
  }
  cJSON_AddNumberToObject(a, "limit", 1 + pick(pick(2) ? 8 : 40));
  if (pick(2))
    cJSON_AddNumberToObject(a, "offset", pick(pick(2) ? 10 : 60));
  cJSON *cols = cJSON_CreateStringArray((const char *[]){"config/lr", "config/opt"}, 2);
  cJSON_AddItemToObject(a, "columns", cols);
  return a;
}

/* The store-side question of the exact path, asked directly: whether it
 * answers these arguments (so the comparison covers it, not only the
 * candidate path). Scales as the tracking layer translates them. */
static void store_scales(cJSON *j)
{
  cJSON *it;
  cJSON_ArrayForEach(it, j)
  {
    cJSON *sc = cJSON_GetObjectItem(it, "scale");
    if (cJSON_IsString(sc))
      cJSON_SetValuestring(sc, !strcmp(sc->valuestring, "EPISODE") ? "episode" : "step");
    if (cJSON_GetObjectItem(it, "any_of"))
      store_scales(cJSON_GetObjectItem(it, "any_of"));
  }
}

static int exact_path(const cJSON *args)
{
  cJSON *f = cJSON_Duplicate(cJSON_GetObjectItem(args, "filter"), 1);
  store_scales(f);
  const cJSON *so = cJSON_GetObjectItem(args, "sort");
  pmcp__rt_sort rs = {NULL, NULL, NULL, NULL, NULL, 0};
  if (so) {
    const cJSON *sc = cJSON_GetObjectItem(so, "scale");
    rs.attr = cJSON_GetStringValue(cJSON_GetObjectItem(so, "attr"));
    rs.series = cJSON_GetStringValue(cJSON_GetObjectItem(so, "series"));
    rs.function = cJSON_GetStringValue(cJSON_GetObjectItem(so, "function"));
    rs.scale = sc && !strcmp(sc->valuestring, "EPISODE") ? "episode" : "step";
    rs.labels = cJSON_GetObjectItem(so, "labels");
  }
  pmcp__rt_page_query q = {"p", f, so ? &rs : NULL, 0, 10};
  pmcp__rt_page pg;
  int rc = pmcp__store_run_page(RO, T, &q, &pg);
  pmcp__rt_page_dispose(&pg);
  cJSON_Delete(f);
  ck_assert_msg(rc == 0 || rc == PMCP_EUNSUPPORTED, "run page: %d %s", rc,
                pmcp_store_errmsg(RO));
  return rc == 0;
}

START_TEST(random_filters_agree)
{
  int n_exact = 0, n_other = 0, n_hits = 0;
  /* the run-by-run path costs ~0.3 s a case on PostgreSQL: half as many */
  int seeds = st_is_pg() ? 2 : 4;
  for (int seed = 1; seed <= seeds; seed++) {
    rng_state = 0x9E3779B97F4A7C15ULL * (uint64_t)seed;
    for (int i = 0; i < 100; i++) {
      cJSON *a = random_args();
      char *args = cJSON_PrintUnformatted(a);
      char *fast = list_runs(FAST, args), *slow = list_runs(SLOW, args);
      ck_assert_msg(strcmp(fast, slow) == 0, "seed %d case %d: %s\nfast: %s\nslow: %s", seed,
                    i, args, fast, slow);
      cJSON *o = cJSON_Parse(fast);
      if (cJSON_GetObjectItem(o, "total_count")) {
        if (exact_path(a))
          n_exact++;
        else
          n_other++;
        n_hits += cJSON_GetObjectItem(o, "total_count")->valueint > 0;
      }
      cJSON_Delete(o);
      free(fast);
      free(slow);
      free(args);
      cJSON_Delete(a);
    }
  }
  fprintf(stderr, "exact %d, candidates %d, non-empty %d\n", n_exact, n_other, n_hits);
  /* both fast paths were compared, on filters that match something, on
   * either backend (the whole-SQL page is one code for both) */
  ck_assert_msg(n_exact >= 20 * seeds && n_other >= 20 * seeds && n_hits * 8 >= 300 * seeds,
                "exact %d, candidates %d, non-empty %d", n_exact, n_other, n_hits);
}
END_TEST

/* Values equal once rounded (0.3 and 0.1 + 0.2) meet a condition alike and
 * tie in a sort, in the store's order, on every path. */
START_TEST(rounding_ties_agree)
{
  const char *cases[] = {
    "{\"project\":\"p\",\"filter\":[{\"attr\":\"config/lr\",\"op\":\"eq\",\"value\":0.3}],"
    "\"limit\":100}",
    "{\"project\":\"p\",\"filter\":[{\"attr\":\"config/lr\",\"op\":\"lt\",\"value\":0.3}],"
    "\"limit\":100}",
    "{\"project\":\"p\",\"filter\":[{\"series\":\"val/loss\",\"function\":\"last\","
    "\"op\":\"lte\",\"value\":0.3}],\"sort\":{\"series\":\"val/loss\",\"function\":\"last\"},"
    "\"limit\":100}",
    "{\"project\":\"p\",\"sort\":{\"series\":\"val/loss\",\"function\":\"max\","
    "\"direction\":\"desc\"},\"offset\":3,\"limit\":7}",
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cJSON *a = cJSON_Parse(cases[i]);
    ck_assert_msg(exact_path(a), "case %zu should take the exact path", i);
    cJSON_Delete(a);
    char *fast = list_runs(FAST, cases[i]), *slow = list_runs(SLOW, cases[i]);
    ck_assert_msg(strcmp(fast, slow) == 0, "%s\nfast: %s\nslow: %s", cases[i], fast, slow);
    cJSON *o = cJSON_Parse(fast);
    ck_assert_int_gt(cJSON_GetObjectItem(o, "total_count")->valueint, 0);
    cJSON_Delete(o);
    free(fast);
    free(slow);
  }
}
END_TEST

/* Conditions on the run row (state, name, id) and on tags are answered
 * whole in SQL, and agree with the run-by-run evaluator: names with a
 * shared prefix, unicode, a name that is its id, complements (ne, not_in,
 * exists false) that must keep deleted runs and the other project out. */
START_TEST(run_columns_exact)
{
  const char *cases[] = {
    "[{\"attr\":\"sys/state\",\"op\":\"eq\",\"value\":\"failed\"}]",
    "[{\"attr\":\"sys/state\",\"op\":\"ne\",\"value\":\"running\"}]",
    "[{\"attr\":\"sys/state\",\"op\":\"in\",\"value\":[\"killed\",3,\"failed\"]}]",
    "[{\"attr\":\"sys/state\",\"op\":\"not_in\",\"value\":[\"killed\"]}]",
    "[{\"attr\":\"sys/state\",\"op\":\"eq\",\"value\":7}]",
    "[{\"attr\":\"sys/state\",\"op\":\"ne\",\"value\":true}]",
    "[{\"attr\":\"sys/state\",\"op\":\"exists\",\"value\":false}]",
    "[{\"attr\":\"sys/state\",\"op\":\"gte\",\"value\":\"k\"}]",
    "[{\"attr\":\"sys/name\",\"op\":\"matches\",\"value\":\"^trial-1\"}]",
    "[{\"attr\":\"sys/name\",\"op\":\"matches\",\"value\":\"^\xc3\xbc\"}]",
    "[{\"attr\":\"sys/name\",\"op\":\"matches\",\"value\":\"^r\"}]",
    "[{\"attr\":\"sys/name\",\"op\":\"matches\",\"value\":\"^\"}]",
    "[{\"attr\":\"sys/name\",\"op\":\"lt\",\"value\":\"trial-1\"}]",
    "[{\"attr\":\"sys/id\",\"op\":\"in\",\"value\":[\"r04\",\"r05\",\"r23\"]}]",
    "[{\"attr\":\"sys/tags\",\"op\":\"contains\",\"value\":\"base\"}]",
    "[{\"attr\":\"sys/tags\",\"op\":\"contains_any\",\"value\":[\"odd\",\"even\"]}]",
    "[{\"attr\":\"sys/tags\",\"op\":\"contains_all\",\"value\":[\"odd\",\"base\"]}]",
    "[{\"attr\":\"sys/state\",\"op\":\"eq\",\"value\":\"finished\"},"
    "{\"any_of\":[{\"attr\":\"sys/tags\",\"op\":\"contains\",\"value\":\"base\"},"
    "{\"attr\":\"sys/name\",\"op\":\"matches\",\"value\":\"^tri\"}]}]",
  };
  const char *sorts[] = {"", ",\"sort\":{\"series\":\"val/loss\",\"function\":\"last\"}"};
  /* PostgreSQL: the unsorted half (its run-by-run side is slow) */
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (size_t k = 0; k < (st_is_pg() ? 1u : 2u); k++) {
      char args[1200];
      snprintf(args, sizeof args, "{\"project\":\"p\",\"filter\":%s%s,\"limit\":100}",
               cases[i], sorts[k]);
      cJSON *a = cJSON_Parse(args);
      ck_assert_msg(a && exact_path(a), "%s should take the exact path", args);
      cJSON_Delete(a);
      char *fast = list_runs(FAST, args), *slow = list_runs(SLOW, args);
      ck_assert_msg(strcmp(fast, slow) == 0, "%s\nfast: %s\nslow: %s", args, fast, slow);
      free(fast);
      free(slow);
    }
  /* anything else on those paths stays with the evaluator */
  const char *other[] = {
    "[{\"attr\":\"sys/name\",\"op\":\"matches\",\"value\":\"^tri.l\"}]",
    "[{\"attr\":\"sys/name\",\"op\":\"contains\",\"value\":\"ial\"}]",
    "[{\"attr\":\"sys/tags\",\"op\":\"matches\",\"value\":\"^b\"}]",
  };
  for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
    char args[600];
    snprintf(args, sizeof args, "{\"project\":\"p\",\"filter\":%s}", other[i]);
    cJSON *a = cJSON_Parse(args);
    ck_assert_msg(!exact_path(a), "%s", args);
    cJSON_Delete(a);
    char *fast = list_runs(FAST, args), *slow = list_runs(SLOW, args);
    ck_assert_msg(strcmp(fast, slow) == 0, "%s\nfast: %s\nslow: %s", args, fast, slow);
    free(fast);
    free(slow);
  }
}
END_TEST

/* RL series always need their scale: a series named without one on a key
 * the project logs only on an RL scale is an error naming the key and the
 * scale, on every path (not a silent empty table). */
START_TEST(rl_key_needs_scale)
{
  const char *refused[][2] = {
    {"{\"project\":\"p\",\"filter\":[{\"series\":\"ep/reward\",\"function\":\"last\","
     "\"op\":\"lt\",\"value\":1}]}", "filter condition 0"},
    {"{\"project\":\"p\",\"filter\":[{\"attr\":\"config/lr\",\"op\":\"exists\"},"
     "{\"any_of\":[{\"attr\":\"config/lr\",\"op\":\"gt\",\"value\":1},{\"series\":"
     "\"ep/reward\",\"op\":\"exists\"}]}]}", "filter condition 1, any_of item 1"},
    {"{\"project\":\"p\",\"sort\":{\"series\":\"ep/reward\",\"function\":\"max\"}}",
     "sort"},
    {"{\"project\":\"p\",\"summary_columns\":[{\"series\":\"val/loss\",\"function\":"
     "\"last\"},{\"series\":\"ep/reward\",\"function\":\"last\"}]}",
     "summary_columns[1]"},
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    char *fast = list_runs(FAST, refused[i][0]), *slow = list_runs(SLOW, refused[i][0]);
    ck_assert_msg(strcmp(fast, slow) == 0, "%s\nfast: %s\nslow: %s", refused[i][0], fast, slow);
    cJSON *o = cJSON_Parse(fast);
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(o, "message"));
    ck_assert_msg(m && strstr(m, refused[i][1]) && strstr(m, "'ep/reward'") &&
                  strstr(m, "EPISODE") && strstr(m, "need their scale"), "%s", fast);
    cJSON_Delete(o);
    free(fast);
    free(slow);
  }
  /* with its scale it is read; a STEP key needs none; a key no run logs
   * matches nothing, without an error */
  const char *fine[] = {
    "{\"project\":\"p\",\"filter\":[{\"series\":\"ep/reward\",\"scale\":\"EPISODE\","
    "\"function\":\"last\",\"op\":\"lt\",\"value\":1e9}]}",
    "{\"project\":\"p\",\"filter\":[{\"series\":\"val/loss\",\"op\":\"exists\"}]}",
    "{\"project\":\"p\",\"filter\":[{\"series\":\"nope\",\"op\":\"exists\"}]}",
  };
  for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
    char *fast = list_runs(FAST, fine[i]), *slow = list_runs(SLOW, fine[i]);
    ck_assert_msg(strcmp(fast, slow) == 0, "%s\nfast: %s\nslow: %s", fine[i], fast, slow);
    cJSON *o = cJSON_Parse(fast);
    ck_assert_msg(cJSON_GetObjectItem(o, "total_count"), "%s: %s", fine[i], fast);
    ck_assert_int_eq(cJSON_GetObjectItem(o, "total_count")->valueint > 0, i < 2);
    cJSON_Delete(o);
    free(fast);
    free(slow);
  }
}
END_TEST

/* The run table itself (what the candidates path reads) on this backend:
 * conditions are pushed into SQL and the loaded values come back. */
START_TEST(run_table_narrows)
{
  cJSON *f = cJSON_Parse("[{\"attr\":\"config/layers\",\"op\":\"eq\",\"value\":3},"
                         "{\"series\":\"val/loss\",\"function\":\"last\",\"op\":"
                         "\"gte\",\"value\":0},{\"attr\":\"config/opt\",\"op\":\"exists\"}]");
  const char *paths[] = {"config/layers"}, *keys[] = {"val/loss"};
  pmcp__rt_query q = {"p", f, paths, 1, keys, 1, 1, NULL, 0, 0, 0, 0};
  pmcp__rt_result res;
  int rc = pmcp__store_run_table(RO, T, &q, &res);
  ck_assert_msg(rc == 0, "run table: %d %s", rc, pmcp_store_errmsg(RO));
  ck_assert_int_eq(res.pushed, 3);
  ck_assert_int_gt(res.n, 0);
  for (size_t i = 0; i < res.n; i++) {
    const cJSON *v = cJSON_GetObjectItem(res.runs[i].attrs, "config/layers");
    ck_assert_msg(v && cJSON_IsNumber(v) && v->valuedouble == 3, "%s", res.runs[i].slug);
    ck_assert_ptr_nonnull(res.runs[i].series);
    ck_assert_ptr_nonnull(res.runs[i].tags);
    if (i)
      ck_assert(res.runs[i - 1].created >= res.runs[i].created);
  }
  pmcp__rt_result_dispose(&res);
  cJSON_Delete(f);
}
END_TEST

/* PostgreSQL plans the run table's reads from table statistics: after a
 * bulk write (here 2,100 attribute rows, more than 1,000 plus half the
 * table) the first list_runs read ANALYZEs the table itself rather than
 * plan on empty statistics until autovacuum comes by (which would set
 * last_autoanalyze, not last_analyze). */
START_TEST(stale_statistics_analyzed)
{
  if (!st_is_pg())
    return;
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  pmcp_entity_spec p = PMCP_ENTITY_SPEC_INIT;
  p.id = "p";
  p.name = "p";
  ST_OK(s, pmcp_store_create(s, t, "project", &p, NULL));
  /* autovacuum would race the store to it: kept off this table */
  ST_OK(s, pmcp__db_exec(s, "ALTER TABLE attributes SET (autovacuum_enabled = false)", 0, NULL,
                         NULL));
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "r1";
  r.project = "p";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  ST_OK(s, pmcp_store_begin(s));
  for (int i = 0; i < 2100; i++) {
    char path[32];
    snprintf(path, sizeof path, "config/k%04d", i);
    pmcp_value v = {PMCP_V_INT, NULL, i, 0, NULL, 0};
    ST_OK(s, pmcp_store_set_attr(s, t, "run:r1", path, &v));
  }
  ST_OK(s, pmcp_store_commit(s));
  /* the counters reach the statistics views when the writer's session
   * reports them (within seconds); bounded wait */
  const char *mods = "SELECT n_mod_since_analyze >= 2100, last_analyze IS NULL FROM"
                     " pg_stat_user_tables WHERE schemaname=current_schema() AND"
                     " relname='attributes'";
  int seen = 0;
  for (int i = 0; i < 600 && !seen; i++) {
    pmcp__db_res *res = NULL;
    ST_OK(s, pmcp__db_query(s, mods, 0, NULL, &res));
    seen = pmcp__db_nrows(res) && !strcmp(pmcp__db_get(res, 0, 0), "t");
    if (seen)
      ck_assert_str_eq(pmcp__db_get(res, 0, 1), "t"); /* not analyzed by hand yet */
    pmcp__db_res_free(res);
    if (!seen)
      usleep(100000);
  }
  ck_assert_msg(seen, "the attribute writes never reached pg_stat_user_tables");
  pmcp__rt_page_query q = {"p", NULL, NULL, 0, 10};
  pmcp__rt_page pg;
  ST_OK(s, pmcp__store_run_page(s, t, &q, &pg));
  ck_assert_int_eq(pg.total, 1);
  pmcp__rt_page_dispose(&pg);
  pmcp__db_res *res = NULL;
  ST_OK(s, pmcp__db_query(s, "SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE"
                             " schemaname=current_schema() AND relname='attributes'",
                          0, NULL, &res));
  ck_assert_int_eq(pmcp__db_nrows(res), 1);
  ck_assert_str_eq(pmcp__db_get(res, 0, 0), "t");
  pmcp__db_res_free(res);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* The run table walked in chunks (tracking/runtable.c reads 1,024 runs a
 * statement): 1,500 runs whose creation times tie in sevens across the
 * chunk edges, deleted runs among them, NaN and tied last values, names
 * the evaluator's RE2 `matches` picks (no SQL). Pages anywhere, sorted
 * or not, agree with the run-by-run evaluator. */
#define N_BIG 1500
/* PostgreSQL: just past one chunk (the run-by-run side reads each run in
 * statements of its own) */
#define N_BIG_PG 1100

static void populate_big(void)
{
  pmcp_store *s = st_open_new(&T);
  pmcp_entity_spec p = PMCP_ENTITY_SPEC_INIT;
  p.id = "p";
  p.name = "P";
  ST_OK(s, pmcp_store_create(s, T, "project", &p, NULL));
  ST_OK(s, pmcp_store_begin(s));
  int n_big = st_is_pg() ? N_BIG_PG : N_BIG;
  for (int i = 0; i < n_big; i++) {
    char id[32], ref[40], name[48];
    snprintf(id, sizeof id, "b%04d", i);
    snprintf(ref, sizeof ref, "run:%s", id);
    snprintf(name, sizeof name, "%s-%d", i % 3 ? "trial" : "\xc3\xa9preuve", i);
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = id;
    r.name = name;
    r.project = "p";
    r.created_ms = 1700000000000LL + (i / 7) * 1000;
    ST_OK(s, pmcp_store_run_create(s, T, &r, NULL));
    if (i % 4 != 3)
      log_series(s, id, "val/loss", NULL, 0, PMCP_SCALE_STEP, i % 23, 1 + i % 3);
    if (i % 29 == 4)
      ST_OK(s, pmcp_store_set_deleted(s, T, ref, 1));
  }
  ST_OK(s, pmcp_store_commit(s));
  pmcp_store_free(s);
  ck_assert_int_eq(pmcp_store_open(&RO, st_path, PMCP_STORE_READONLY), 0);
  ck_assert_int_eq(px_open(&PROXY, RO), 0);
}

static void setup_big(void)
{
  populate_big();
  FAST = server(RO);
  SLOW = server(PROXY);
}

START_TEST(chunked_scan_agrees)
{
  const char *cases[] = {
    "{\"project\":\"p\",\"filter\":[{\"attr\":\"sys/name\",\"op\":\"matches\","
    "\"value\":\"[05]$\"}],\"limit\":100}",
    "{\"project\":\"p\",\"filter\":[{\"attr\":\"sys/name\",\"op\":\"matches\","
    "\"value\":\"[05]$\"}],\"offset\":190,\"limit\":30}",
    "{\"project\":\"p\",\"filter\":[{\"attr\":\"sys/name\",\"op\":\"matches\","
    "\"value\":\"^\\u00e9.*7\"}],\"sort\":{\"series\":\"val/loss\",\"function\":\"last\"},"
    "\"offset\":40,\"limit\":100}",
    "{\"project\":\"p\",\"filter\":[{\"attr\":\"sys/name\",\"op\":\"contains\","
    "\"value\":\"-1\"}],\"sort\":{\"series\":\"val/loss\",\"function\":\"min\","
    "\"direction\":\"desc\"},\"offset\":300,\"limit\":50}",
    "{\"project\":\"p\",\"filter\":[{\"attr\":\"sys/name\",\"op\":\"matches\","
    "\"value\":\"2\"}],\"sort\":{\"attr\":\"sys/name\",\"direction\":\"asc\"},"
    "\"offset\":300,\"limit\":25}",
  };
  size_t n_cases = st_is_pg() ? 2 : sizeof cases / sizeof cases[0];
  for (size_t i = 0; i < n_cases; i++) {
    cJSON *a = cJSON_Parse(cases[i]);
    ck_assert_msg(!exact_path(a), "case %zu should walk the run table", i);
    cJSON_Delete(a);
    char *fast = list_runs(FAST, cases[i]), *slow = list_runs(SLOW, cases[i]);
    ck_assert_msg(strcmp(fast, slow) == 0, "%s\nfast: %.2000s\nslow: %.2000s", cases[i], fast,
                  slow);
    cJSON *o = cJSON_Parse(fast);
    ck_assert_msg(cJSON_GetObjectItem(o, "total_count") &&
                  cJSON_GetObjectItem(o, "total_count")->valueint > 40, "%.300s", fast);
    cJSON_Delete(o);
    free(fast);
    free(slow);
  }
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("tracking-exact");
  TCase *tc = tcase_create("compare");
  tcase_set_timeout(tc, 280); /* slow under the sanitizers on a loaded machine */
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, random_filters_agree);
  tcase_add_test(tc, run_columns_exact);
  tcase_add_test(tc, rounding_ties_agree);
  tcase_add_test(tc, rl_key_needs_scale);
  tcase_add_test(tc, run_table_narrows);
  suite_add_tcase(s, tc);
  TCase *big = tcase_create("chunks");
  tcase_set_timeout(big, 280);
  tcase_add_checked_fixture(big, setup_big, teardown);
  tcase_add_test(big, chunked_scan_agrees);
  suite_add_tcase(s, big);
  TCase *stats = tcase_create("statistics");
  tcase_set_timeout(stats, 280);
  tcase_add_test(stats, stale_statistics_analyzed);
  suite_add_tcase(s, stats);
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
