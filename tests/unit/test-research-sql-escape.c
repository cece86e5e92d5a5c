/* SPDX-License-Identifier: MIT */
/* query_sql's escape battery (tests/data/sql-escape/battery.json, shared
 * with the stdio and HTTP runners of tests/integration/sql_escape.py),
 * in process: a store with two labs, two workspaces each (and the first
 * lab's unfiled runs), a unique marker in every one of them and in every
 * service table (keys, users, OAuth, audit, the store's secrets). The
 * battery runs as three callers: lab "default" scoped to workspace alpha,
 * the whole of lab "default", and lab "labb" scoped to gamma. Every answer,
 * refused or not, must hold no marker the caller may not read (also as
 * hex, any case) and no path of the store; each attempt must end as the
 * battery says. Runs on SQLite and (PMCP_TEST_STORE=pg) PostgreSQL.
 *
 * Also here: a result far over the token budget (rows of 1 MB values) is
 * streamed and stopped at the budget, the process's peak memory growing
 * by a few values, not by the result. */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <sqlite3.h>

#include "engine-harness.h"
#include "probemcp/research.h"
#include "store-test-util.h"

static cJSON *battery;
static harness *H;
static pmcp_store *RO;
static int next_id = 10;

/* ---- the battery file ---------------------------------------------------- */

static char *slurp(const char *path)
{
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
  s[n] = '\0';
  fclose(f);
  return s;
}

static void load_battery(void)
{
  const char *dir = getenv("PMCP_TEST_DATA");
  ck_assert_msg(dir && *dir, "PMCP_TEST_DATA is not set");
  char path[1024];
  snprintf(path, sizeof path, "%s/sql-escape/battery.json", dir);
  char *t = slurp(path);
  battery = cJSON_Parse(t);
  free(t);
  ck_assert_msg(battery != NULL, "%s is not JSON", path);
}

static cJSON *seed_item(const char *k)
{
  return cJSON_GetObjectItem(cJSON_GetObjectItem(battery, "seed"), k);
}

/* Replaces every @p from in @p s by @p to (a new string). */
static char *subst(const char *s, const char *from, const char *to)
{
  size_t fl = strlen(from), tl = strlen(to), n = 0;
  for (const char *p = strstr(s, from); p; p = strstr(p + fl, from))
    n++;
  char *out = malloc(strlen(s) + n * tl + 1), *o = out;
  for (const char *p; (p = strstr(s, from)); s = p + fl) {
    memcpy(o, s, (size_t)(p - s));
    o += p - s;
    memcpy(o, to, tl);
    o += tl;
  }
  strcpy(o, s);
  return out;
}

static const char *schema(void)
{
  return st_is_pg() ? st_schema : "main";
}

/* ---- the store ----------------------------------------------------------- */

static void mk(pmcp_store *s, pmcp_tenant t, const char *kind, const char *id, const char *name,
               const char *parent, const char *desc, const char *body)
{
  pmcp_entity_spec e = PMCP_ENTITY_SPEC_INIT;
  e.id = id;
  e.name = name;
  e.parent = parent;
  e.description = desc;
  e.body = body;
  ST_OK(s, pmcp_store_create(s, t, kind, &e, NULL));
}

/* One workspace's rows, each carrying @p m (seed.per_workspace). */
static void seed_ws(pmcp_store *s, pmcp_tenant t, const char *ws, const char *m)
{
  char id[64], parent[80], ref[80];
  int unfiled = strcmp(ws, "default") == 0;
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  snprintf(id, sizeof id, "r-%s", ws);
  r.id = id;
  r.name = m;
  r.description = m;
  r.status = "finished";
  char eref[80];
  if (!unfiled) {
    mk(s, t, "workspace", ws, ws, NULL, m, NULL);
    char pid[64], eid[64];
    snprintf(pid, sizeof pid, "p-%s", ws);
    snprintf(parent, sizeof parent, "workspace:%s", ws);
    mk(s, t, "project", pid, m, parent, m, m);
    cJSON *cfg = cJSON_Duplicate(seed_item("config"), 1);
    cJSON_AddStringToObject(cfg, "marker", m);
    char *ct = cJSON_PrintUnformatted(cfg);
    cJSON_Delete(cfg);
    snprintf(eid, sizeof eid, "e-%s", ws);
    snprintf(parent, sizeof parent, "project:%s", pid);
    mk(s, t, "experiment", eid, m, parent, m, ct);
    cJSON_free(ct);
    snprintf(eref, sizeof eref, "experiment:%s", eid);
    r.experiment = eref;
  }
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  snprintf(ref, sizeof ref, "run:%s", id);
  pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
  n.on = ref;
  n.title = m;
  n.body = m;
  ST_OK(s, pmcp_store_note(s, t, &n, NULL, NULL));
  pmcp_label lb[2] = {{"split", "train"}, {"marker", m}};
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, "loss", lb, 2, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
  int64_t sid;
  ST_OK(s, pmcp_store_series(s, t, ref, &sp, &sid));
  int np = cJSON_GetObjectItem(cJSON_GetObjectItem(battery, "seed"), "points")->valueint;
  pmcp_point *p = malloc((size_t)np * sizeof *p);
  for (int i = 0; i < np; i++)
    p[i] = (pmcp_point){i + 1, 0, (i + 1) * 0.25};
  ST_OK(s, pmcp_store_log(s, t, sid, p, (size_t)np));
  free(p);
}

/* A blob literal of @p text in the store's dialect. */
static char *bytes_literal(const char *text)
{
  char *out = malloc(strlen(text) * 2 + 16), *o = out;
  o += sprintf(o, st_is_pg() ? "'\\x" : "X'");
  for (const char *p = text; *p; p++)
    o += sprintf(o, "%02x", (unsigned char)*p);
  sprintf(o, st_is_pg() ? "'::bytea" : "'");
  return out;
}

/* seed.secret_sql, as the store's owner. */
static void seed_secrets(int64_t ta, int64_t tb)
{
  sqlite3 *db = NULL;
  if (!st_is_pg())
    ck_assert_int_eq(sqlite3_open(st_path, &db), SQLITE_OK);
  char tas[32], tbs[32];
  snprintf(tas, sizeof tas, "%lld", (long long)ta);
  snprintf(tbs, sizeof tbs, "%lld", (long long)tb);
  cJSON *q;
  cJSON_ArrayForEach(q, seed_item("secret_sql"))
  {
    char *a = subst(q->valuestring, "{S}", schema());
    char *b = subst(a, "{TA}", tas);
    char *c = subst(b, "{TB}", tbs);
    char *lit = NULL;
    const char *bp = strstr(c, "{BYTES:");
    if (bp) {
      const char *e = strchr(bp, '}');
      char *txt = strndup(bp + 7, (size_t)(e - bp - 7));
      char *key = strndup(bp, (size_t)(e - bp + 1));
      lit = bytes_literal(txt);
      char *d = subst(c, key, lit);
      free(c);
      c = d;
      free(txt), free(key);
    }
#ifdef PMCP_HAVE_POSTGRES
    if (st_is_pg())
      st_pg_exec(c);
#endif
    if (db) {
      char *err = NULL;
      ck_assert_msg(sqlite3_exec(db, c, NULL, NULL, &err) == SQLITE_OK, "%s: %s", c, err);
    }
    free(a), free(b), free(c), free(lit);
  }
  if (db)
    sqlite3_close(db);
}

static void seed(void)
{
  pmcp_tenant ta, tb;
  pmcp_store *s = st_open_new(&ta);
  ST_OK(s, pmcp_store_tenant(s, "labb", PMCP_STORE_CREATE, &tb));
  cJSON *tenants = seed_item("tenants");
  cJSON *lab;
  cJSON_ArrayForEach(lab, tenants)
  {
    cJSON *ws;
    cJSON_ArrayForEach(ws, lab)
    seed_ws(s, strcmp(lab->string, "default") == 0 ? ta : tb, ws->string, ws->valuestring);
  }
  pmcp_store_free(s);
  seed_secrets(ta.id, tb.id);
  ck_assert_int_eq(pmcp_store_open(&RO, st_path, PMCP_STORE_READONLY), 0);
}

/* ---- callers --------------------------------------------------------------- */

static int hook(pmcp_call *call, const char *asked, pmcp_call_scope *out, char *msg,
                size_t size, void *ud)
{
  (void)call, (void)msg, (void)size;
  return pmcp_call_scope_set_workspace(out, asked ? asked : (const char *)ud) ||
         pmcp_call_scope_set_role(out, "viewer");
}

/* A server of the research tools for lab @p tenant, scoped to @p ws
 * (NULL: the whole lab). */
static void serve(const char *tenant, const char *ws)
{
  H = h_new(NULL);
  pmcp_research_options ro = PMCP_RESEARCH_OPTIONS_INIT;
  ro.tenant = tenant;
  if (ws) {
    ro.scope = hook;
    ro.scope_ud = (void *)ws;
  }
  ck_assert_int_eq(pmcp_research_register(H->srv, RO, &ro), 0);
  h_init(H, "", "2025-06-18");
}

static void setup(void)
{
  load_battery();
  seed();
}

static void teardown(void)
{
  if (H)
    h_free(H);
  H = NULL;
  pmcp_store_free(RO);
  RO = NULL;
  cJSON_Delete(battery);
  battery = NULL;
  st_cleanup();
}

/* The result text of query_sql @p sql; *err set for isError. Caller frees. */
static char *query(const char *sql, const char *extra, int *err)
{
  cJSON *a = cJSON_CreateObject();
  cJSON_AddStringToObject(a, "sql", sql);
  char *args = cJSON_PrintUnformatted(a);
  cJSON_Delete(a);
  size_t n = strlen(args) + strlen(extra) + 200;
  char *msg = malloc(n);
  args[strlen(args) - 1] = '\0'; /* open the object again for @p extra */
  snprintf(msg, n, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
                   "{\"name\":\"query_sql\",\"arguments\":%s%s}}}", next_id++, args, extra);
  cJSON_free(args);
  /* (a capped statement runs for its whole time limit) */
  h_send(H, "", msg);
  free(msg);
  h_msg *m = h_next_wait(H, 120000);
  ck_assert_msg(m != NULL, "%s: no answer within 120 s", sql);
  cJSON *resp = cJSON_Parse(m->data);
  ck_assert_msg(resp != NULL, "reply is not JSON: %s", m->data);
  h_msg_free(m);
  ck_assert_msg(h_error_code(resp) == 0, "%s: protocol error %s", sql, h_error_message(resp));
  char *text = strdup(h_text0(resp));
  *err = h_is_error(resp);
  cJSON_Delete(resp);
  return text;
}

/* ---- the checks -------------------------------------------------------------- */

static char *lower(const char *s)
{
  char *o = strdup(s);
  for (char *p = o; *p; p++)
    *p = (char)tolower((unsigned char)*p);
  return o;
}

static int has_ci(const char *lowtext, const char *needle)
{
  char *n = lower(needle);
  int r = strstr(lowtext, n) != NULL;
  free(n);
  return r;
}

/* Whether the marker @p m (or its hex) is in @p lowtext. */
static int has_marker(const char *lowtext, const char *m)
{
  if (has_ci(lowtext, m))
    return 1;
  char hex[128] = "";
  for (size_t i = 0; m[i] && i < 60; i++)
    sprintf(hex + 2 * i, "%02x", (unsigned char)m[i]);
  return strstr(lowtext, hex) != NULL;
}

static int is_own(const char *m, const char *const *own)
{
  for (size_t i = 0; own[i]; i++)
    if (!strcmp(own[i], m))
      return 1;
  return 0;
}

/* The first marker in @p lowtext the caller may not see, or NULL. */
static const char *foreign_marker(const char *lowtext, const char *const *own)
{
  cJSON *lab, *ws;
  cJSON_ArrayForEach(lab, seed_item("tenants")) cJSON_ArrayForEach(ws, lab)
  {
    if (!is_own(ws->valuestring, own) && has_marker(lowtext, ws->valuestring))
      return ws->valuestring;
  }
  cJSON_ArrayForEach(ws, seed_item("secrets"))
  {
    if (has_marker(lowtext, ws->valuestring))
      return ws->valuestring;
  }
  return NULL;
}

/* The field @p k of attempt @p a on this backend (its pg / sqlite
 * override first). */
static cJSON *field(cJSON *a, const char *k)
{
  cJSON *ov = cJSON_GetObjectItem(a, st_is_pg() ? "pg" : "sqlite");
  if (cJSON_IsObject(ov) && cJSON_GetObjectItem(ov, k))
    return cJSON_GetObjectItem(ov, k);
  return cJSON_GetObjectItem(a, k);
}

static const char *fstr(cJSON *a, const char *k)
{
  cJSON *v = field(a, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int skipped(cJSON *a)
{
  cJSON *ov = cJSON_GetObjectItem(a, st_is_pg() ? "pg" : "sqlite");
  return cJSON_IsString(ov) && !strcmp(ov->valuestring, "skip");
}

/* Runs one attempt; returns NULL or why it failed (static). */
static const char *attempt(cJSON *a, const char *const *own, char *why, size_t wn)
{
  const char *expect = fstr(a, "expect");
  char *sql = subst(fstr(a, "sql"), "{S}", schema());
  int err = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  char *text = query(sql, "", &err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
  char *low = lower(text);
  const char *bad = foreign_marker(low, own);
  why[0] = '\0';
  if (bad)
    snprintf(why, wn, "leaks %s: %.300s", bad, text);
  else if (strstr(text, st_dir))
    snprintf(why, wn, "names the store's folder: %.300s", text);
  else if (!strcmp(expect, "refused") || !strcmp(expect, "capped")) {
    int found = 0;
    cJSON *n;
    cJSON_ArrayForEach(n, field(a, "needles")) found |= has_ci(low, n->valuestring);
    if (!err)
      snprintf(why, wn, "was not refused: %.300s", text);
    else if (!found)
      snprintf(why, wn, "refused without a clear message: %.300s", text);
    else if (!strcmp(expect, "capped") && secs > 60)
      snprintf(why, wn, "stopped only after %.1f s", secs);
  } else if (!strcmp(expect, "allowed")) {
    cJSON *o = cJSON_Parse(text);
    cJSON *rows = field(a, "rows");
    int own_seen = 0;
    for (size_t i = 0; own[i]; i++)
      own_seen |= has_ci(low, own[i]);
    if (err || !o)
      snprintf(why, wn, "was refused: %.300s", text);
    else if (cJSON_IsTrue(field(a, "own")) && !own_seen)
      snprintf(why, wn, "does not show the caller's own rows: %.300s", text);
    else if (rows && !cJSON_Compare(rows, cJSON_GetObjectItem(o, "rows"), 1)) {
      char *w = cJSON_PrintUnformatted(rows);
      snprintf(why, wn, "rows %.300s, wanted %.200s", text, w);
      cJSON_free(w);
    }
    cJSON_Delete(o);
  } else if (strcmp(expect, "safe") != 0) {
    snprintf(why, wn, "unknown expectation '%s'", expect);
  }
  free(low), free(text), free(sql);
  return why[0] ? why : NULL;
}

/* The whole battery as one caller; fails naming every attempt that did
 * not end as the battery says. */
static void run_battery(const char *who, const char *const *own, int with_slow)
{
  cJSON *a;
  int n = 0, failed = 0;
  static char report[3000];
  report[0] = '\0';
  size_t used = 0;
  cJSON_ArrayForEach(a, cJSON_GetObjectItem(battery, "attempts"))
  {
    if (skipped(a) || (!with_slow && cJSON_IsTrue(field(a, "slow"))))
      continue;
    char why[700];
    n++;
    if (attempt(a, own, why, sizeof why)) {
      failed++;
      fprintf(stderr, "  FAIL %s: %s\n", cJSON_GetObjectItem(a, "id")->valuestring, why);
      if (used + 80 < sizeof report)
        used += (size_t)snprintf(report + used, sizeof report - used, " %s",
                                 cJSON_GetObjectItem(a, "id")->valuestring);
    }
  }
  fprintf(stderr, "%s: %d attempts, %d failed\n", who, n, failed);
  ck_assert_msg(failed == 0, "%s: %d of %d attempts failed (stderr says why):%s", who, failed,
                n, report);
  ck_assert_int_ge(n, 100);
}

/* The store is as it was: every lab's rows are there, unchanged. */
static void store_untouched(void)
{
  int err = 0;
  char *t = query("SELECT count(*) FROM runs", "", &err);
  ck_assert_msg(!err && strstr(t, "[[3]]"), "runs after the battery: %s", t);
  free(t);
}

START_TEST(battery_workspace_key)
{
  static const char *const own[] = {"MKAALPHA", NULL};
  serve(NULL, "alpha");
  run_battery("lab default, workspace alpha", own, 1);
}
END_TEST

START_TEST(battery_whole_lab)
{
  static const char *const own[] = {"MKAALPHA", "MKABETA", "MKAUNFILED", NULL};
  serve(NULL, NULL);
  run_battery("lab default, every workspace", own, 0);
  store_untouched();
}
END_TEST

START_TEST(battery_other_lab)
{
  static const char *const own[] = {"MKBGAMMA", NULL};
  serve("labb", "gamma");
  run_battery("lab labb, workspace gamma", own, 0);
}
END_TEST

/* ---- memory: a result far over the budget --------------------------------- */

static long peak_kb(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

START_TEST(huge_result_streams)
{
  serve(NULL, NULL);
  /* many small rows over the budget: a first page and a cursor */
  long before = peak_kb();
  int err = 0;
  char *t = query(st_is_pg() ? "SELECT g, repeat('y', 1000) FROM generate_series(1, 200000) g"
                       : "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
                         "WHERE i < 200000) SELECT i, printf('%.*c', 1000, 'y') FROM c",
            ",\"token_budget\":2000", &err);
  long grew = peak_kb() - before;
  fprintf(stderr, "200000 rows of 1 kB: peak memory grew by %ld kB\n", grew);
  ck_assert_msg(!err && strstr(t, "next_cursor"), "no first page: %.300s", t);
  ck_assert_msg(grew < 64 * 1024, "peak memory grew by %ld kB", grew);
  free(t);
  /* 1500 rows of ~1 MB each: 1.5 GB if buffered; the budget keeps a page
   * of a few kB, and the cap on a value refuses any that is over 1 MiB. */
  const char *sql = st_is_pg()
                        ? "SELECT repeat('x', 1000000) FROM generate_series(1, 1500)"
                        : "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
                          "WHERE i < 1500) SELECT i, printf('%.*c', 1000000, 'x') FROM c";
  before = peak_kb();
  t = query(sql, ",\"token_budget\":2000", &err);
  grew = peak_kb() - before;
  fprintf(stderr, "1500 rows of 1 MB: peak memory grew by %ld kB: %.200s\n", grew, t);
  /* the answer: a value too large for the budget, said so; not the rows */
  ck_assert_uint_lt(strlen(t), 64 * 1024);
  ck_assert_msg(grew < 64 * 1024, "peak memory grew by %ld kB", grew);
  free(t);
}
END_TEST

START_TEST(huge_sorted_result_bounded)
{
  /* the same rows sorted (400 of 500 kB: 200 MB): the sort must spill,
   * not hold every row in memory before the first is sent */
  serve(NULL, NULL);
  int err = 0;
  long before = peak_kb();
  char *t = query(st_is_pg() ? "SELECT g, repeat('z', 500000) FROM generate_series(1, 400) g "
                         "ORDER BY g DESC"
                       : "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
                         "WHERE i < 400) SELECT i, printf('%.*c', 500000, 'z') FROM c "
                         "ORDER BY i DESC",
            ",\"token_budget\":2000", &err);
  long grew = peak_kb() - before;
  fprintf(stderr, "400 rows of 500 kB, sorted: peak memory grew by %ld kB: %.200s\n", grew, t);
  ck_assert_uint_lt(strlen(t), 64 * 1024);
  ck_assert_msg(grew < 64 * 1024, "peak memory grew by %ld kB", grew);
  free(t);
}
END_TEST

int main(void)
{
  int skip = st_backend_check(); /* PMCP_TEST_STORE=pg without a cluster */
  if (skip)
    return skip;
  Suite *su = suite_create("research-sql-escape");
  TCase *tc = tcase_create("battery");
  tcase_set_timeout(tc, 240);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, battery_workspace_key);
  tcase_add_test(tc, battery_whole_lab);
  tcase_add_test(tc, battery_other_lab);
  suite_add_tcase(su, tc);
  /* (meson runs each case by itself, CK_RUN_CASE) */
  TCase *mem = tcase_create("memory");
  tcase_set_timeout(mem, 240);
  tcase_add_checked_fixture(mem, setup, teardown);
  tcase_add_test(mem, huge_result_streams);
  suite_add_tcase(su, mem);
  TCase *sorted = tcase_create("memory-sorted");
  tcase_set_timeout(sorted, 240);
  tcase_add_checked_fixture(sorted, setup, teardown);
  tcase_add_test(sorted, huge_sorted_result_bounded);
  suite_add_tcase(su, sorted);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? 1 : 0;
}
