/* SPDX-License-Identifier: MIT */
/* Transactions: an import-sized group of writes commits as one, a
 * rollback leaves the store exactly as before (rows, points, version), and
 * two writer processes at once are both kept whole. */
#include <sys/wait.h>

#include "store-test-util.h"

static void counts(pmcp_store *s, pmcp_tenant t, int out[4])
{
  out[0] = st_list_count(s, t, "run", NULL, NULL);
  out[1] = st_list_count(s, t, "note", NULL, NULL);
  out[2] = st_list_count(s, t, "artifact", NULL, NULL);
  out[3] = st_list_count(s, t, "dataset", NULL, NULL);
}

START_TEST(rollback_restores)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, "loss", NULL, 0, 0, 0};
  int64_t id;
  ST_OK(s, pmcp_store_series(s, t, "run:r1", &sp, &id));
  pmcp_point pts[10];
  for (int i = 0; i < 10; i++)
    pts[i] = (pmcp_point){i, 0, i * 0.5};
  ST_OK(s, pmcp_store_log(s, t, id, pts, 10));
  int before[4], after[4];
  counts(s, t, before);
  uint64_t v = st_version(s, t);
  pmcp_buf snap = PMCP_BUF_INIT, now = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_get(s, t, "run:r1", &snap));
  ST_OK(s, pmcp_store_begin(s));
  ST_RC(s, pmcp_store_begin(s), PMCP_EMISUSE);
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "r2";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
  n.on = "run:r1";
  n.body = "x";
  ST_OK(s, pmcp_store_note(s, t, &n, NULL, NULL));
  ST_OK(s, pmcp_store_put(s, t, "dataset", "{\"name\":\"d\"}", 12, NULL));
  pmcp_value val = {PMCP_V_INT, NULL, 5, 0, NULL, 0};
  ST_OK(s, pmcp_store_set_attr(s, t, "run:r1", "config/x", &val));
  for (int i = 0; i < 10; i++)
    pts[i].step += 10;
  ST_OK(s, pmcp_store_log(s, t, id, pts, 10));
  /* A failing call inside the transaction is undone alone. */
  ST_RC(s, pmcp_store_tag(s, t, "run:nope", "x", 1), PMCP_ENOTFOUND);
  ck_assert_int_eq(st_list_count(s, t, "run", NULL, NULL), before[0] + 1);
  ST_OK(s, pmcp_store_rollback(s));
  ST_RC(s, pmcp_store_rollback(s), PMCP_EMISUSE);
  ST_RC(s, pmcp_store_commit(s), PMCP_EMISUSE);
  counts(s, t, after);
  ck_assert(memcmp(before, after, sizeof before) == 0);
  ck_assert_uint_eq(st_version(s, t), v);
  ST_OK(s, pmcp_store_get(s, t, "run:r1", &now));
  ck_assert_str_eq(snap.ptr, now.ptr);
  pmcp_point back[40];
  size_t got;
  int64_t next;
  ST_OK(s, pmcp_store_points(s, t, id, INT64_MIN, INT64_MAX, 0, back, 40, &got, &next));
  ck_assert_uint_eq(got, 10);
  /* Commit keeps everything and bumps the version. */
  ST_OK(s, pmcp_store_begin(s));
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  ST_OK(s, pmcp_store_log(s, t, id, pts, 10));
  ST_OK(s, pmcp_store_commit(s));
  ck_assert_uint_gt(st_version(s, t), v);
  ST_OK(s, pmcp_store_points(s, t, id, INT64_MIN, INT64_MAX, 0, back, 40, &got, &next));
  ck_assert_uint_eq(got, 20);
  /* Freeing with an open transaction rolls it back. */
  ST_OK(s, pmcp_store_begin(s));
  r.id = "r3";
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  pmcp_store_free(s);
  ST_OK(s, pmcp_store_open(&s, st_path, 0));
  pmcp_buf b = PMCP_BUF_INIT;
  ST_RC(s, pmcp_store_get(s, t, "run:r3", &b), PMCP_ENOTFOUND);
  pmcp_buf_dispose(&b);
  pmcp_buf_dispose(&snap);
  pmcp_buf_dispose(&now);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

static int writer(const char *path, const char *prefix, int n_runs)
{
  pmcp_store *s = NULL;
  if (pmcp_store_open(&s, path, PMCP_STORE_CREATE)) {
    fprintf(stderr, "%s open: %s\n", prefix, pmcp_store_errmsg(s));
    return 1;
  }
  pmcp_tenant t;
  if (pmcp_store_tenant(s, NULL, 0, &t))
    return 1;
  for (int i = 0; i < n_runs; i++) {
    char id[64];
    snprintf(id, sizeof id, "%s-%d", prefix, i);
    int rc = pmcp_store_begin(s);
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = id;
    if (!rc)
      rc = pmcp_store_run_create(s, t, &r, NULL);
    pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, "loss", NULL, 0, 0, 0};
    int64_t ser = 0;
    if (!rc)
      rc = pmcp_store_series(s, t, id, &sp, &ser);
    pmcp_point pts[500];
    for (int k = 0; k < 500; k++)
      pts[k] = (pmcp_point){k, 0, (double)k};
    if (!rc)
      rc = pmcp_store_log(s, t, ser, pts, 500);
    if (!rc)
      rc = pmcp_store_commit(s);
    if (rc) {
      fprintf(stderr, "%s run %d: %d %s\n", prefix, i, rc, pmcp_store_errmsg(s));
      pmcp_store_free(s);
      return 1;
    }
    /* Outside a transaction too. */
    pmcp_value v = {PMCP_V_INT, NULL, i, 0, NULL, 0};
    if (pmcp_store_set_attr(s, t, id, "config/i", &v)) {
      fprintf(stderr, "%s attr %d: %s\n", prefix, i, pmcp_store_errmsg(s));
      pmcp_store_free(s);
      return 1;
    }
  }
  pmcp_store_free(s);
  return 0;
}

/* Inside a transaction the version moves with the writes a reader of the
 * version could tell apart: many writes may raise it once, but a write
 * after the version was read raises it past what was read, and a commit
 * leaves it above where it started. */
START_TEST(version_in_transaction)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  uint64_t v0 = st_version(s, t);
  ST_OK(s, pmcp_store_begin(s));
  for (int i = 0; i < 3; i++) {
    char id[16];
    snprintf(id, sizeof id, "t%d", i);
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = id;
    ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  }
  uint64_t v1 = st_version(s, t);
  ck_assert_uint_gt(v1, v0);
  ST_OK(s, pmcp_store_tag(s, t, "run:t0", "x", 1));
  uint64_t v2 = st_version(s, t);
  ck_assert_uint_gt(v2, v1);
  /* A failed call changes nothing, not even the version. */
  ST_RC(s, pmcp_store_tag(s, t, "run:nope", "x", 1), PMCP_ENOTFOUND);
  ck_assert_uint_eq(st_version(s, t), v2);
  ST_OK(s, pmcp_store_tag(s, t, "run:t1", "x", 1));
  ST_OK(s, pmcp_store_commit(s));
  ck_assert_uint_gt(st_version(s, t), v2);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(two_writers)
{
  st_fresh_path();
  /* Both processes race to create the store, then write at once. */
  pid_t pids[2];
  const char *names[2] = {"alpha", "beta"};
  for (int i = 0; i < 2; i++) {
    pids[i] = fork();
    ck_assert_int_ge(pids[i], 0);
    if (pids[i] == 0)
      _exit(writer(st_path, names[i], 40));
  }
  for (int i = 0; i < 2; i++) {
    int status = 0;
    waitpid(pids[i], &status, 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %s failed", names[i]);
  }
  pmcp_store *s = NULL;
  ST_OK(s, pmcp_store_open(&s, st_path, PMCP_STORE_READONLY));
  pmcp_tenant t;
  ST_OK(s, pmcp_store_tenant(s, NULL, 0, &t));
  ck_assert_int_eq(st_list_count(s, t, "run", NULL, NULL), 80);
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 40; k += 13) {
      char ref[64];
      snprintf(ref, sizeof ref, "run:%s-%d", names[i], k);
      cJSON *o = st_get(s, t, ref);
      ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "config"), "i")->valueint, k);
      ck_assert_int_eq(cJSON_GetObjectItem(o, "series_count")->valueint, 1);
      cJSON_Delete(o);
    }
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

int main(void)
{
  Suite *su = suite_create("store-txn");
  TCase *tc = tcase_create("txn");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, rollback_restores);
  tcase_add_test(tc, two_writers);
  tcase_add_test(tc, version_in_transaction);
  suite_add_tcase(su, tc);
  return st_run_suite(su);
}
