/* SPDX-License-Identifier: MIT */
/* Tenant isolation: two labs with the same ids and names; every read of
 * one never returns the other's rows, and writes through one cannot touch
 * the other's entities. */
#include "store-test-util.h"

static void fill(pmcp_store *s, pmcp_tenant t, const char *secret)
{
  st_mkproject(s, t);
  pmcp_value v = {PMCP_V_STRING, secret, 0, 0, NULL, 0};
  ST_OK(s, pmcp_store_set_attr(s, t, "run:r1", "config/secret", &v));
  ST_OK(s, pmcp_store_tag(s, t, "run:r1", secret, 1));
  pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
  n.on = "run:r1";
  n.body = secret;
  n.title = "n";
  ST_OK(s, pmcp_store_note(s, t, &n, NULL, NULL));
  pmcp_artifact_spec a = PMCP_ARTIFACT_SPEC_INIT;
  a.name = "shared-thing";
  a.content = secret;
  a.size = strlen(secret);
  ST_OK(s, pmcp_store_artifact_add(s, t, &a, NULL, NULL));
  char json[256];
  snprintf(json, sizeof json, "{\"name\":\"ds\",\"description\":\"%s\"}", secret);
  ST_OK(s, pmcp_store_put(s, t, "dataset", json, strlen(json), NULL));
  snprintf(json, sizeof json, "{\"title\":\"%s\",\"on\":[\"run:r1\"]}", secret);
  ST_OK(s, pmcp_store_put(s, t, "session", json, strlen(json), NULL));
  pmcp_paper p = {PMCP_PAPER_VERSION, "0704.0001", secret, secret, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  ST_OK(s, pmcp_store_paper(s, t, &p));
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, "loss", NULL, 0, 0, 0};
  int64_t id;
  ST_OK(s, pmcp_store_series(s, t, "run:r1", &sp, &id));
  pmcp_point pt = {1, 0, 42.0};
  ST_OK(s, pmcp_store_log(s, t, id, &pt, 1));
}

START_TEST(isolation)
{
  pmcp_tenant a, b;
  pmcp_store *s = st_open_new(&a);
  ST_OK(s, pmcp_store_tenant(s, "lab-b", PMCP_STORE_CREATE, &b));
  fill(s, a, "alphasecret");
  /* B's first write goes through the same ids: no collision with A's. */
  fill(s, b, "betasecret");
  /* Every list and get of B holds only B's text. */
  const char *kinds[] = {"workspace", "project", "experiment", "run", "note", "artifact",
                         "dataset", "checkpoint", "source", "group", "trial", "session",
                         "file", "paper", "lineage"};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    pmcp_list_opts lo = PMCP_LIST_OPTS_INIT;
    lo.kind = kinds[i];
    if (strcmp(kinds[i], "lineage") == 0)
      lo.parent = "run:r1";
    pmcp_buf out = PMCP_BUF_INIT;
    ST_OK(s, pmcp_store_list(s, b, &lo, &out));
    ck_assert_msg(!strstr(out.ptr, "alphasecret"), "%s leaked: %s", kinds[i], out.ptr);
    pmcp_buf_dispose(&out);
  }
  const char *refs[] = {"run:r1", "experiment:baseline", "project:vision", "dataset:ds",
                        "artifact:shared-thing", "paper:0704.0001", "workspace:default"};
  for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
    pmcp_buf out = PMCP_BUF_INIT;
    ST_OK(s, pmcp_store_get(s, b, refs[i], &out));
    ck_assert_msg(!strstr(out.ptr, "alphasecret"), "%s leaked: %s", refs[i], out.ptr);
    ck_assert_msg(strstr(out.ptr, "betasecret") || strcmp(refs[i], "workspace:default") == 0 ||
                      strcmp(refs[i], "project:vision") == 0 || strncmp(refs[i], "artifact:", 9) == 0 ||
                      strcmp(refs[i], "experiment:baseline") == 0,
                  "%s lost its own data: %s", refs[i], out.ptr);
    pmcp_buf_dispose(&out);
  }
  pmcp_buf out = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_search(s, b, "alphasecret", "run note artifact dataset session paper", NULL,
                             50, &out));
  ck_assert_ptr_nonnull(strstr(out.ptr, "\"total\":0"));
  ST_OK(s, pmcp_store_search(s, b, "betasecret", "run note artifact dataset session paper", NULL,
                             50, &out));
  ck_assert_ptr_null(strstr(out.ptr, "\"total\":0"));
  ST_OK(s, pmcp_store_artifact_content(s, b, "artifact:shared-thing", 0, &out, NULL));
  ck_assert_str_eq(out.ptr, "betasecret");
  /* A's series ids are not readable through B. */
  ST_OK(s, pmcp_store_series_list(s, a, "run:r1", &out));
  cJSON *j = st_json(&out);
  int64_t a_series = (int64_t)cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "items"),
                                                                     0), "series")->valuedouble;
  cJSON_Delete(j);
  pmcp_point pts[4];
  size_t n;
  int64_t next;
  ST_RC(s, pmcp_store_points(s, b, a_series, INT64_MIN, INT64_MAX, 0, pts, 4, &n, &next),
        PMCP_ENOTFOUND);
  pmcp_bucket bk[2];
  ST_RC(s, pmcp_store_summary(s, b, a_series, INT64_MIN, INT64_MAX, 2, bk, &n), PMCP_ENOTFOUND);
  ST_RC(s, pmcp_store_series_sets(s, b, a_series, 0, 1, NULL, 1, &out), PMCP_ENOTFOUND);
  pmcp_point pt = {2, 0, 1.0};
  ST_RC(s, pmcp_store_log(s, b, a_series, &pt, 1), PMCP_ENOTFOUND);
  /* A tenant with nothing sees nothing. */
  pmcp_tenant c;
  ST_OK(s, pmcp_store_tenant(s, "lab-c", PMCP_STORE_CREATE, &c));
  ST_RC(s, pmcp_store_get(s, c, "run:r1", &out), PMCP_ENOTFOUND);
  ck_assert_int_eq(st_list_count(s, c, "run", NULL, NULL), 0);
  ST_RC(s, pmcp_store_get(s, c, "team-note", &out), PMCP_ENOTFOUND);
  /* Writes through C cannot reach A's entities. */
  pmcp_value v = {PMCP_V_STRING, "x", 0, 0, NULL, 0};
  ST_RC(s, pmcp_store_set_attr(s, c, "run:r1", "config/x", &v), PMCP_ENOTFOUND);
  ST_RC(s, pmcp_store_tag(s, c, "run:r1", "x", 1), PMCP_ENOTFOUND);
  /* A still has its own data. */
  ST_OK(s, pmcp_store_get(s, a, "run:r1", &out));
  ck_assert_ptr_nonnull(strstr(out.ptr, "alphasecret"));
  ck_assert_ptr_null(strstr(out.ptr, "betasecret"));
  pmcp_buf_dispose(&out);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

int main(void)
{
  Suite *su = suite_create("store-tenant");
  TCase *tc = tcase_create("tenant");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, isolation);
  suite_add_tcase(su, tc);
  return st_run_suite(su);
}
