/* SPDX-License-Identifier: MIT */
/* Workspaces, projects, experiments and runs; typed attributes, tags,
 * status, events, deletion; list paging; data-version bumps; bad input. */
#include <math.h>
#include <sqlite3.h>

#include "store-test-util.h"

START_TEST(hierarchy)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  pmcp_buf id = PMCP_BUF_INIT;
  pmcp_entity_spec w = PMCP_ENTITY_SPEC_INIT;
  w.name = "Research Team";
  ST_OK(s, pmcp_store_create(s, t, "workspace", &w, &id));
  ck_assert_str_eq(id.ptr, "research-team");
  pmcp_entity_spec p = PMCP_ENTITY_SPEC_INIT;
  p.name = "Speech / ASR";
  p.parent = "workspace:research-team";
  p.description = "speech recognition";
  p.body = "# README\nHow we train ASR.";
  ST_OK(s, pmcp_store_create(s, t, "project", &p, &id));
  ck_assert_str_eq(id.ptr, "speech-asr");
  /* Same name again: a new id; same id again: EEXIST, or reuse. */
  ST_OK(s, pmcp_store_create(s, t, "project", &p, &id));
  ck_assert_str_eq(id.ptr, "speech-asr-2");
  p.id = "speech-asr";
  ST_RC(s, pmcp_store_create(s, t, "project", &p, &id), PMCP_EEXIST);
  p.flags = PMCP_STORE_REUSE;
  ST_OK(s, pmcp_store_create(s, t, "project", &p, &id));
  ck_assert_str_eq(id.ptr, "speech-asr");
  /* A project without a workspace lands in the default one. */
  pmcp_entity_spec p2 = PMCP_ENTITY_SPEC_INIT;
  p2.name = "Loose";
  ST_OK(s, pmcp_store_create(s, t, "project", &p2, &id));
  cJSON *o = st_get(s, t, "project:loose");
  ck_assert_str_eq(st_str(o, "workspace"), "workspace:default");
  cJSON_Delete(o);
  pmcp_entity_spec e = PMCP_ENTITY_SPEC_INIT;
  e.name = "whisper-ft";
  e.parent = "speech-asr";
  e.body = "{\"optimizer\":{\"name\":\"adamw\"},\"lr\":0.0001}";
  ST_OK(s, pmcp_store_create(s, t, "experiment", &e, &id));
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.name = "ft-1";
  r.experiment = "experiment:whisper-ft";
  r.command = "python train.py --lr 1e-4";
  r.environment = "{\"CUDA_VISIBLE_DEVICES\":\"0\",\"python\":\"3.11\"}";
  r.git_commit = "0123abcd";
  r.git_branch = "main";
  r.git_remote = "https://example.com/asr.git";
  r.git_dirty = 1;
  r.git_diff = "--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-lr=1\n+lr=2\n";
  ST_OK(s, pmcp_store_run_create(s, t, &r, &id));
  ck_assert_str_eq(id.ptr, "ft-1");
  o = st_get(s, t, "run:ft-1");
  ck_assert_str_eq(st_str(o, "project"), "project:speech-asr");
  ck_assert_str_eq(st_str(o, "experiment"), "experiment:whisper-ft");
  ck_assert_str_eq(st_str(o, "status"), "running");
  ck_assert_str_eq(st_str(o, "command"), "python train.py --lr 1e-4");
  cJSON *code = cJSON_GetObjectItem(o, "code");
  ck_assert_str_eq(st_str(code, "commit"), "0123abcd");
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(code, "dirty")));
  ck_assert_ptr_nonnull(strstr(st_str(code, "diff"), "+lr=2"));
  ck_assert_str_eq(st_str(cJSON_GetObjectItem(o, "environment"), "python"), "3.11");
  cJSON *inh = cJSON_GetObjectItem(o, "inherited");
  ck_assert_double_eq(cJSON_GetObjectItem(inh, "lr")->valuedouble, 0.0001);
  cJSON_Delete(o);
  /* Unfiled run; project given with a mismatching experiment. */
  pmcp_run_spec u = PMCP_RUN_SPEC_INIT;
  ST_OK(s, pmcp_store_run_create(s, t, &u, &id));
  ck_assert(strncmp(id.ptr, "run-", 4) == 0);
  ck_assert_int_eq(st_list_count(s, t, "run", NULL, "{\"unfiled\":true}"), 1);
  pmcp_run_spec bad = PMCP_RUN_SPEC_INIT;
  bad.experiment = "whisper-ft";
  bad.project = "loose";
  ST_RC(s, pmcp_store_run_create(s, t, &bad, &id), PMCP_EINVAL);
  bad.project = NULL;
  bad.status = "exploded";
  ST_RC(s, pmcp_store_run_create(s, t, &bad, &id), PMCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "exploded"));
  bad.status = NULL;
  bad.environment = "[1,2]";
  ST_RC(s, pmcp_store_run_create(s, t, &bad, &id), PMCP_EINVAL);
  bad.environment = NULL;
  bad.id = "has space";
  ST_RC(s, pmcp_store_run_create(s, t, &bad, &id), PMCP_EINVAL);
  bad.id = NULL;
  bad.experiment = "nope";
  ST_RC(s, pmcp_store_run_create(s, t, &bad, &id), PMCP_ENOTFOUND);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "nope"));
  pmcp_entity_spec e2 = PMCP_ENTITY_SPEC_INIT;
  e2.name = "orphan";
  ST_RC(s, pmcp_store_create(s, t, "experiment", &e2, &id), PMCP_EINVAL);
  e2.parent = "speech-asr";
  e2.body = "not json";
  ST_RC(s, pmcp_store_create(s, t, "experiment", &e2, &id), PMCP_EINVAL);
  ST_RC(s, pmcp_store_create(s, t, "galaxy", &e2, &id), PMCP_EINVAL);
  pmcp_buf_dispose(&id);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(attributes_typed)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  const char *set[] = {"vision", "resnet"};
  pmcp_value vs = {PMCP_V_STRING, "adamw", 0, 0, NULL, 0};
  pmcp_value vi = {PMCP_V_INT, NULL, 64, 0, NULL, 0};
  pmcp_value vf = {PMCP_V_FLOAT, NULL, 0, 3e-4, NULL, 0};
  pmcp_value vb = {PMCP_V_BOOL, NULL, 1, 0, NULL, 0};
  pmcp_value vd = {PMCP_V_DATETIME, NULL, 1700000000123LL, 0, NULL, 0};
  pmcp_value vset = {PMCP_V_STRING_SET, NULL, 0, 0, set, 2};
  pmcp_value vnan = {PMCP_V_FLOAT, NULL, 0, NAN, NULL, 0};
  ST_OK(s, pmcp_store_set_attr(s, t, "run:r1", "config/optimizer/name", &vs));
  ST_OK(s, pmcp_store_set_attr(s, t, "run:r1", "config/batch_size", &vi));
  ST_OK(s, pmcp_store_set_attr(s, t, "run:r1", "config/optimizer/lr", &vf));
  ST_OK(s, pmcp_store_set_attr(s, t, "run:r1", "config/amp", &vb));
  ST_OK(s, pmcp_store_set_attr(s, t, "run:r1", "sys/started_at", &vd));
  ST_OK(s, pmcp_store_set_attr(s, t, "run:r1", "sys/groups", &vset));
  ST_OK(s, pmcp_store_set_attr(s, t, "run:r1", "metrics/bad", &vnan));
  /* Setting again replaces. */
  vi.i = 128;
  ST_OK(s, pmcp_store_set_attr(s, t, "r1", "config/batch_size", &vi));
  cJSON *o = st_get(s, t, "run:r1");
  cJSON *cfg = cJSON_GetObjectItem(o, "config");
  ck_assert_str_eq(st_str(cJSON_GetObjectItem(cfg, "optimizer"), "name"), "adamw");
  ck_assert_double_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(cfg, "optimizer"), "lr")->valuedouble,
                      3e-4);
  ck_assert_int_eq(cJSON_GetObjectItem(cfg, "batch_size")->valueint, 128);
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(cfg, "amp")));
  cJSON *sys = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "attributes"), "sys");
  ck_assert_str_eq(st_str(sys, "started_at"), "2023-11-14T22:13:20.123Z");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(sys, "groups")), 2);
  cJSON *types = cJSON_GetObjectItem(o, "attribute_types");
  ck_assert_str_eq(st_str(types, "config/batch_size"), "int");
  ck_assert_str_eq(st_str(types, "sys/groups"), "string_set");
  ck_assert_str_eq(st_str(types, "sys/started_at"), "datetime");
  ck_assert_str_eq(st_str(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "attributes"), "metrics"),
                          "bad"), "NaN");
  cJSON_Delete(o);
  ck_assert_int_eq(st_list_count(s, t, "attribute", "run:r1", NULL), 7);
  ST_OK(s, pmcp_store_unset_attr(s, t, "run:r1", "config/amp"));
  ST_RC(s, pmcp_store_unset_attr(s, t, "run:r1", "config/amp"), PMCP_ENOTFOUND);
  ck_assert_int_eq(st_list_count(s, t, "attribute", "run:r1", NULL), 6);
  /* Experiment config attributes are inherited by its runs. */
  pmcp_value ve = {PMCP_V_STRING, "imagenet", 0, 0, NULL, 0};
  ST_OK(s, pmcp_store_set_attr(s, t, "experiment:baseline", "config/dataset", &ve));
  o = st_get(s, t, "run:r1");
  ck_assert_str_eq(st_str(cJSON_GetObjectItem(o, "inherited"), "dataset"), "imagenet");
  cJSON_Delete(o);
  /* Bad paths, types, owners. */
  ST_RC(s, pmcp_store_set_attr(s, t, "run:r1", "/abs", &vs), PMCP_EINVAL);
  ST_RC(s, pmcp_store_set_attr(s, t, "run:r1", "a//b", &vs), PMCP_EINVAL);
  ST_RC(s, pmcp_store_set_attr(s, t, "run:r1", "", &vs), PMCP_EINVAL);
  pmcp_value vbad = {(pmcp_value_type)42, NULL, 0, 0, NULL, 0};
  ST_RC(s, pmcp_store_set_attr(s, t, "run:r1", "x", &vbad), PMCP_EINVAL);
  pmcp_value vnull = {PMCP_V_STRING, NULL, 0, 0, NULL, 0};
  ST_RC(s, pmcp_store_set_attr(s, t, "run:r1", "x", &vnull), PMCP_EINVAL);
  ST_RC(s, pmcp_store_set_attr(s, t, "artifact:x", "x", &vs), PMCP_EINVAL);
  ST_RC(s, pmcp_store_set_attr(s, t, "run:zz", "x", &vs), PMCP_ENOTFOUND);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(tags_status_events_delete)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  ST_OK(s, pmcp_store_tag(s, t, "run:r1", "baseline", 1));
  ST_OK(s, pmcp_store_tag(s, t, "run:r1", "baseline", 1));
  ST_OK(s, pmcp_store_tag(s, t, "run:r1", "gpu", 1));
  ST_OK(s, pmcp_store_tag(s, t, "run:r1", "gpu", 0));
  ST_RC(s, pmcp_store_tag(s, t, "run:r1", "", 1), PMCP_EINVAL);
  ST_OK(s, pmcp_store_tag(s, t, "experiment:baseline", "main", 1));
  cJSON *o = st_get(s, t, "run:r1");
  cJSON *tags = cJSON_GetObjectItem(o, "tags");
  ck_assert_int_eq(cJSON_GetArraySize(tags), 1);
  ck_assert_str_eq(cJSON_GetArrayItem(tags, 0)->valuestring, "baseline");
  cJSON_Delete(o);
  ck_assert_int_eq(st_list_count(s, t, "run", NULL, "{\"tag\":\"baseline\"}"), 1);
  ck_assert_int_eq(st_list_count(s, t, "run", NULL, "{\"active\":true}"), 1);
  ST_OK(s, pmcp_store_run_status(s, t, "run:r1", "finished", 1700000005000LL));
  ST_RC(s, pmcp_store_run_status(s, t, "run:r1", "done", 0), PMCP_EINVAL);
  ST_OK(s, pmcp_store_run_event(s, t, "r1", "warning", "loss spike at step 300", 0));
  ST_RC(s, pmcp_store_run_event(s, t, "r1", "bad kind", "x", 0), PMCP_EINVAL);
  o = st_get(s, t, "run:r1");
  ck_assert_str_eq(st_str(o, "status"), "finished");
  ck_assert_double_eq(cJSON_GetObjectItem(o, "ended")->valuedouble, 1700000005000.0);
  cJSON_Delete(o);
  ck_assert_int_eq(st_list_count(s, t, "run", NULL, "{\"active\":true}"), 0);
  ck_assert_int_eq(st_list_count(s, t, "run", NULL, "{\"status\":\"finished\"}"), 1);
  cJSON *ev = st_list(s, t, "event", "run:r1", NULL);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(ev, "items")), 3);
  cJSON_Delete(ev);
  /* Deleted runs and experiments are kept, hidden unless asked for. */
  ST_OK(s, pmcp_store_set_deleted(s, t, "run:r1", 1));
  ck_assert_int_eq(st_list_count(s, t, "run", NULL, NULL), 0);
  pmcp_list_opts lo = PMCP_LIST_OPTS_INIT;
  lo.kind = "run";
  lo.include_deleted = 1;
  pmcp_buf b = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_list(s, t, &lo, &b));
  ck_assert_ptr_nonnull(strstr(b.ptr, "\"deleted\":true"));
  o = st_get(s, t, "run:r1");
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "deleted")));
  cJSON_Delete(o);
  ST_OK(s, pmcp_store_set_deleted(s, t, "experiment:baseline", 1));
  ck_assert_int_eq(st_list_count(s, t, "experiment", NULL, NULL), 0);
  ST_RC(s, pmcp_store_set_deleted(s, t, "project:vision", 1), PMCP_EINVAL);
  pmcp_buf_dispose(&b);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(version_bumps)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  uint64_t v0 = st_version(s, t);
  st_mkproject(s, t);
  uint64_t v1 = st_version(s, t);
  ck_assert_uint_gt(v1, v0);
  pmcp_value vs = {PMCP_V_STRING, "x", 0, 0, NULL, 0};
  ST_OK(s, pmcp_store_set_attr(s, t, "run:r1", "a", &vs));
  uint64_t v2 = st_version(s, t);
  ck_assert_uint_gt(v2, v1);
  ST_OK(s, pmcp_store_tag(s, t, "run:r1", "a", 1));
  uint64_t v3 = st_version(s, t);
  ck_assert_uint_gt(v3, v2);
  /* A failed write and a read change nothing. */
  ST_RC(s, pmcp_store_set_attr(s, t, "run:nope", "a", &vs), PMCP_ENOTFOUND);
  cJSON_Delete(st_get(s, t, "run:r1"));
  ck_assert_uint_eq(st_version(s, t), v3);
  /* Writes to one tenant leave another's version alone. */
  pmcp_tenant t2;
  ST_OK(s, pmcp_store_tenant(s, "lab2", PMCP_STORE_CREATE, &t2));
  uint64_t w = st_version(s, t2);
  ST_OK(s, pmcp_store_tag(s, t, "run:r1", "b", 1));
  ck_assert_uint_eq(st_version(s, t2), w);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(list_paging)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  for (int i = 0; i < 25; i++) {
    char name[32];
    snprintf(name, sizeof name, "sweep-%02d", i);
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.name = name;
    r.experiment = "baseline";
    r.created_ms = 1700000000000LL + i * 1000;
    ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  }
  pmcp_list_opts lo = PMCP_LIST_OPTS_INIT;
  lo.kind = "run";
  lo.parent = "experiment:baseline";
  lo.limit = 10;
  lo.query = "SWEEP";
  pmcp_buf b = PMCP_BUF_INIT;
  int seen = 0, pages = 0;
  char after[32] = "";
  const char *first = NULL;
  (void)first;
  for (;;) {
    lo.after = after[0] ? after : NULL;
    ST_OK(s, pmcp_store_list(s, t, &lo, &b));
    cJSON *j = st_json(&b);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "total")->valueint, 25);
    cJSON *items = cJSON_GetObjectItem(j, "items");
    if (pages == 0) /* newest first */
      ck_assert_str_eq(st_str(cJSON_GetArrayItem(items, 0), "name"), "sweep-24");
    seen += cJSON_GetArraySize(items);
    pages++;
    cJSON *next = cJSON_GetObjectItem(j, "next");
    if (!cJSON_IsString(next)) {
      cJSON_Delete(j);
      break;
    }
    snprintf(after, sizeof after, "%s", next->valuestring);
    cJSON_Delete(j);
  }
  ck_assert_int_eq(seen, 25);
  ck_assert_int_eq(pages, 3);
  lo.after = "-3";
  ST_RC(s, pmcp_store_list(s, t, &lo, &b), PMCP_EINVAL);
  lo.after = NULL;
  lo.kind = "spaceship";
  ST_RC(s, pmcp_store_list(s, t, &lo, &b), PMCP_EINVAL);
  lo.kind = "run";
  lo.filter = "{\"colour\":\"red\"}";
  ST_RC(s, pmcp_store_list(s, t, &lo, &b), PMCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "colour"));
  lo.filter = "{\"active\":\"yes\"}";
  ST_RC(s, pmcp_store_list(s, t, &lo, &b), PMCP_EINVAL);
  lo.filter = "[";
  ST_RC(s, pmcp_store_list(s, t, &lo, &b), PMCP_EINVAL);
  lo.filter = NULL;
  lo.parent = "dataset:x";
  ST_RC(s, pmcp_store_list(s, t, &lo, &b), PMCP_EINVAL);
  lo.parent = "experiment:missing";
  ST_RC(s, pmcp_store_list(s, t, &lo, &b), PMCP_ENOTFOUND);
  lo.parent = NULL;
  lo.kind = "event";
  ST_RC(s, pmcp_store_list(s, t, &lo, &b), PMCP_EINVAL);
  /* Every list kind answers. */
  const char *kinds[] = {"workspace", "project", "experiment", "run", "note", "artifact",
                         "dataset", "checkpoint", "source", "group", "trial", "session",
                         "file", "paper"};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    cJSON_Delete(st_list(s, t, kinds[i], NULL, NULL));
  pmcp_buf_dispose(&b);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* The project and experiment listings' live counts (kept by triggers on
 * both backends) follow creation, deletion and restoring, per tenant. */
static int64_t count_of(pmcp_store *s, pmcp_tenant t, const char *kind, const char *ref,
                        const char *field)
{
  pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
  o.kind = kind;
  o.include_deleted = 1;
  o.limit = 100;
  pmcp_buf b = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_list(s, t, &o, &b));
  cJSON *j = st_json(&b);
  int64_t v = -1;
  cJSON *it;
  cJSON_ArrayForEach(it, cJSON_GetObjectItem(j, "items"))
    if (strcmp(st_str(it, "ref"), ref) == 0)
      v = (int64_t)cJSON_GetObjectItem(it, field)->valuedouble;
  cJSON_Delete(j);
  pmcp_buf_dispose(&b);
  ck_assert_msg(v >= 0, "%s not listed", ref);
  return v;
}

static void mkrun(pmcp_store *s, pmcp_tenant t, const char *id, const char *exp,
                  const char *project)
{
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = id;
  r.name = id;
  r.experiment = exp;
  r.project = project;
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
}

START_TEST(live_counts)
{
  pmcp_tenant t, u;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t); /* project:vision > experiment:baseline > run:r1 */
  pmcp_entity_spec e = PMCP_ENTITY_SPEC_INIT;
  e.name = "ablation";
  e.id = "ablation";
  e.parent = "project:vision";
  ST_OK(s, pmcp_store_create(s, t, "experiment", &e, NULL));
  mkrun(s, t, "r2", "experiment:baseline", NULL);
  mkrun(s, t, "r3", "experiment:ablation", NULL);
  mkrun(s, t, "r4", NULL, "project:vision");
  mkrun(s, t, "loose", NULL, NULL);
  ck_assert_int_eq(count_of(s, t, "project", "project:vision", "runs"), 4);
  ck_assert_int_eq(count_of(s, t, "project", "project:vision", "experiments"), 2);
  ck_assert_int_eq(count_of(s, t, "experiment", "experiment:baseline", "runs"), 2);
  ck_assert_int_eq(count_of(s, t, "experiment", "experiment:ablation", "runs"), 1);
  /* Another tenant's runs in a project of the same name count there only. */
  ST_OK(s, pmcp_store_tenant(s, "other", PMCP_STORE_CREATE, &u));
  st_mkproject(s, u);
  mkrun(s, u, "r9", "experiment:baseline", NULL);
  ck_assert_int_eq(count_of(s, u, "project", "project:vision", "runs"), 2);
  ck_assert_int_eq(count_of(s, t, "project", "project:vision", "runs"), 4);
  /* Deleting and restoring runs and experiments. */
  ST_OK(s, pmcp_store_set_deleted(s, t, "run:r2", 1));
  ST_OK(s, pmcp_store_set_deleted(s, t, "run:r2", 1)); /* again: no change */
  ck_assert_int_eq(count_of(s, t, "project", "project:vision", "runs"), 3);
  ck_assert_int_eq(count_of(s, t, "experiment", "experiment:baseline", "runs"), 1);
  ST_OK(s, pmcp_store_set_deleted(s, t, "experiment:ablation", 1));
  ck_assert_int_eq(count_of(s, t, "project", "project:vision", "experiments"), 1);
  ck_assert_int_eq(count_of(s, t, "experiment", "experiment:ablation", "runs"), 1);
  ST_OK(s, pmcp_store_set_deleted(s, t, "run:r2", 0));
  ST_OK(s, pmcp_store_set_deleted(s, t, "experiment:ablation", 0));
  ck_assert_int_eq(count_of(s, t, "project", "project:vision", "runs"), 4);
  ck_assert_int_eq(count_of(s, t, "project", "project:vision", "experiments"), 2);
  ck_assert_int_eq(count_of(s, t, "experiment", "experiment:baseline", "runs"), 2);
  /* A rolled-back transaction leaves the counts as they were. */
  ST_OK(s, pmcp_store_begin(s));
  mkrun(s, t, "r5", "experiment:baseline", NULL);
  ST_OK(s, pmcp_store_set_deleted(s, t, "run:r1", 1));
  ST_OK(s, pmcp_store_rollback(s));
  ck_assert_int_eq(count_of(s, t, "project", "project:vision", "runs"), 4);
  ck_assert_int_eq(count_of(s, t, "experiment", "experiment:baseline", "runs"), 2);
  /* The record agrees with the listing. */
  cJSON *o = st_get(s, t, "project:vision");
  ck_assert_int_eq(cJSON_GetObjectItem(o, "runs")->valueint, 4);
  cJSON_Delete(o);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST


/* Makes the database refuse (@p on) or accept again two of the writes a
 * run creation makes after its row: the event of a run created at time
 * 4242, and the keyword index row of run:refused-doc (triggers on SQLite,
 * CHECK constraints on PostgreSQL, where both writes are sent without
 * waiting, in pipeline mode, and fail after the call's run row went in). */
static void refuse_run_writes(int on)
{
#ifdef PMCP_HAVE_POSTGRES
  if (st_is_pg()) {
    char sql[400];
    if (on)
      snprintf(sql, sizeof sql,
               "ALTER TABLE %s.run_events ADD CONSTRAINT refused CHECK (time <> 4242);"
               "ALTER TABLE %s.search_docs ADD CONSTRAINT refused CHECK (ref <> 'run:refused-doc')",
               st_schema, st_schema);
    else
      snprintf(sql, sizeof sql,
               "ALTER TABLE %s.run_events DROP CONSTRAINT refused;"
               "ALTER TABLE %s.search_docs DROP CONSTRAINT refused", st_schema, st_schema);
    st_pg_exec(sql);
    return;
  }
#endif
  sqlite3 *db = NULL;
  ck_assert_int_eq(sqlite3_open(st_path, &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 10000);
  const char *sql =
      on ? "CREATE TRIGGER refused_event BEFORE INSERT ON run_events WHEN NEW.time = 4242"
           " BEGIN SELECT RAISE(ABORT, 'refused'); END;"
           "CREATE TRIGGER refused_doc BEFORE INSERT ON search_docs"
           " WHEN NEW.ref = 'run:refused-doc' BEGIN SELECT RAISE(ABORT, 'refused'); END"
         : "DROP TRIGGER refused_event; DROP TRIGGER refused_doc";
  char *err = NULL;
  ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK, "%s", err ? err : "");
  sqlite3_close(db);
}

static int run_exists(pmcp_store *s, pmcp_tenant t, const char *ref)
{
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp_store_get(s, t, ref, &b);
  pmcp_buf_dispose(&b);
  ck_assert_msg(rc == 0 || rc == PMCP_ENOTFOUND, "get %s -> %d (%s)", ref, rc,
                pmcp_store_errmsg(s));
  return rc == 0;
}

/* A run creation refused part-way (after its row was written) fails with
 * the refused write named, and leaves nothing: alone, and inside the
 * caller's transaction, whose other calls are kept. */
START_TEST(refused_write_undoes_call)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  refuse_run_writes(1);
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "refused-event";
  r.created_ms = 4242;
  ck_assert_int_ne(pmcp_store_run_create(s, t, &r, NULL), 0);
  ck_assert_msg(strstr(pmcp_store_errmsg(s), "run event") != NULL, "%s", pmcp_store_errmsg(s));
  ck_assert(!run_exists(s, t, "run:refused-event"));
  r.id = "refused-doc";
  r.created_ms = 0;
  ck_assert_int_ne(pmcp_store_run_create(s, t, &r, NULL), 0);
  ck_assert_msg(strstr(pmcp_store_errmsg(s), "search index") != NULL, "%s",
                pmcp_store_errmsg(s));
  ck_assert(!run_exists(s, t, "run:refused-doc"));
  ck_assert_int_eq(st_list_count(s, t, "run", NULL, NULL), 1);
  /* Inside a transaction: the refused call is undone, the others stay. */
  ST_OK(s, pmcp_store_begin(s));
  pmcp_run_spec ok = PMCP_RUN_SPEC_INIT;
  ok.id = "ok1";
  ST_OK(s, pmcp_store_run_create(s, t, &ok, NULL));
  ck_assert_int_ne(pmcp_store_run_create(s, t, &r, NULL), 0);
  ck_assert_msg(strstr(pmcp_store_errmsg(s), "search index") != NULL, "%s",
                pmcp_store_errmsg(s));
  ok.id = "ok2";
  ST_OK(s, pmcp_store_run_create(s, t, &ok, NULL));
  ST_OK(s, pmcp_store_tag(s, t, "run:ok2", "kept", 1));
  ST_OK(s, pmcp_store_commit(s));
  ck_assert(run_exists(s, t, "run:ok1"));
  ck_assert(run_exists(s, t, "run:ok2"));
  ck_assert(!run_exists(s, t, "run:refused-doc"));
  ck_assert_int_eq(st_list_count(s, t, "run", NULL, NULL), 3);
  ck_assert_int_eq(st_list_count(s, t, "run", NULL, "{\"tag\":\"kept\"}"), 1);
  /* Accepted again, the id is free: nothing of the refused calls stayed. */
  refuse_run_writes(0);
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  r.id = "refused-event";
  r.created_ms = 4242;
  ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
  cJSON *ev = st_list(s, t, "event", "run:refused-event", NULL);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(ev, "items")), 1);
  cJSON_Delete(ev);
  pmcp_buf b = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_search(s, t, "refused", NULL, NULL, 10, &b));
  ck_assert_msg(strstr(b.ptr, "run:refused-doc") != NULL, "%s", b.ptr);
  pmcp_buf_dispose(&b);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* A run listing's total is counted up to 10,000 runs past the page: a
 * larger total is a lower bound marked "total_estimated"; below it, the
 * exact count (checked against the runs written: deleted ones, another
 * experiment, a status filter). Pages and their order are the same. */
START_TEST(list_total_capped)
{
  /* the listing's SQL is one text for both backends (store/list.c); on
   * PostgreSQL writing 10,500 runs alone outlasts the test's time */
  if (st_is_pg())
    return;
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  pmcp_entity_spec e = PMCP_ENTITY_SPEC_INIT;
  e.id = "other";
  e.name = "other";
  e.parent = "project:vision";
  ST_OK(s, pmcp_store_create(s, t, "experiment", &e, NULL));
  enum { N = 10500 };
  int live = 1, live_failed = 0; /* st_mkproject's r1, newest */
  ST_OK(s, pmcp_store_begin(s));
  for (int i = 0; i < N; i++) {
    char id[32];
    snprintf(id, sizeof id, "c%05d", i);
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = id;
    r.experiment = i % 50 == 7 ? "other" : "baseline";
    r.status = i % 3 ? "finished" : "failed";
    r.created_ms = 1700000000000LL + (i / 4) * 1000; /* ties */
    r.deleted = i % 101 == 5;
    ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
    if (!r.deleted && i % 50 != 7) {
      live++;
      live_failed += i % 3 == 0;
    }
  }
  ST_OK(s, pmcp_store_commit(s));
  pmcp_list_opts lo = PMCP_LIST_OPTS_INIT;
  lo.kind = "run";
  lo.parent = "experiment:baseline";
  lo.limit = 20;
  pmcp_buf b = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_list(s, t, &lo, &b));
  cJSON *j = st_json(&b);
  ck_assert_int_gt(live, 10020);
  ck_assert_int_eq(cJSON_GetObjectItem(j, "total")->valueint, 10020);
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "total_estimated")));
  ck_assert_str_eq(cJSON_GetObjectItem(j, "next")->valuestring, "20");
  /* newest first */
  const char *top = st_str(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "items"), 0), "ref");
  ck_assert_str_eq(top, "run:r1");
  cJSON_Delete(j);
  /* near the end the count is exact again */
  char after[32];
  snprintf(after, sizeof after, "%d", live - 30);
  lo.after = after;
  ST_OK(s, pmcp_store_list(s, t, &lo, &b));
  j = st_json(&b);
  ck_assert_int_eq(cJSON_GetObjectItem(j, "total")->valueint, live);
  ck_assert_ptr_null(cJSON_GetObjectItem(j, "total_estimated"));
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 20);
  cJSON_Delete(j);
  lo.after = NULL;
  lo.filter = "{\"status\":\"failed\"}";
  ST_OK(s, pmcp_store_list(s, t, &lo, &b));
  j = st_json(&b);
  ck_assert_int_eq(cJSON_GetObjectItem(j, "total")->valueint, live_failed);
  ck_assert_ptr_null(cJSON_GetObjectItem(j, "total_estimated"));
  cJSON_Delete(j);
  pmcp_buf_dispose(&b);
  pmcp_store_free(s);
}
END_TEST

int main(void)
{
  Suite *su = suite_create("store-runs");
  TCase *tc = tcase_create("runs");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, hierarchy);
  tcase_add_test(tc, attributes_typed);
  tcase_add_test(tc, tags_status_events_delete);
  tcase_add_test(tc, version_bumps);
  tcase_add_test(tc, list_paging);
  tcase_add_test(tc, live_counts);
  tcase_add_test(tc, refused_write_undoes_call);
  tcase_add_test(tc, list_total_capped);
  suite_add_tcase(su, tc);
  return st_run_suite(su);
}
