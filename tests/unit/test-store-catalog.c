/* SPDX-License-Identifier: MIT */
/* Notes with versions, artifacts (versions, labels, promotion, content and
 * references), the JSON record kinds of pmcp_store_put(), keyword search,
 * the papers index. */
#include "store-test-util.h"

static void put(pmcp_store *s, pmcp_tenant t, const char *kind, const char *json, pmcp_buf *ref)
{
  ST_OK(s, pmcp_store_put(s, t, kind, json, strlen(json), ref));
}

static int put_rc(pmcp_store *s, pmcp_tenant t, const char *kind, const char *json)
{
  pmcp_buf r = PMCP_BUF_INIT;
  int rc = pmcp_store_put(s, t, kind, json, strlen(json), &r);
  pmcp_buf_dispose(&r);
  return rc;
}

START_TEST(notes_versions)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  pmcp_buf id = PMCP_BUF_INIT;
  int64_t v = 0;
  pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
  n.on = "experiment:baseline";
  n.kind = "overview";
  n.body = "# Baseline\n\nResNet-50 on ImageNet.";
  n.summary = "Top-1 76.1%.";
  n.status = "in-progress";
  n.author = "ana";
  n.via = "cli";
  ST_OK(s, pmcp_store_note(s, t, &n, &id, &v));
  ck_assert_int_eq(v, 1);
  char overview[64];
  snprintf(overview, sizeof overview, "note:%s", id.ptr);
  n.body = "# Baseline\n\nResNet-50 on ImageNet, 90 epochs.";
  n.summary = "Top-1 76.4%.";
  n.author = "agent";
  n.via = "agent:claude";
  ST_OK(s, pmcp_store_note(s, t, &n, &id, &v));
  ck_assert_int_eq(v, 2);
  ck_assert_str_eq(overview + 5, id.ptr);
  cJSON *o = st_get(s, t, overview);
  ck_assert_str_eq(st_str(o, "summary"), "Top-1 76.4%.");
  ck_assert_str_eq(st_str(o, "via"), "agent:claude");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "history")), 2);
  cJSON_Delete(o);
  char v1[80];
  snprintf(v1, sizeof v1, "%s@1", overview);
  o = st_get(s, t, v1);
  ck_assert_str_eq(st_str(o, "summary"), "Top-1 76.1%.");
  ck_assert_str_eq(st_str(o, "author"), "ana");
  cJSON_Delete(o);
  snprintf(v1, sizeof v1, "%s@9", overview);
  pmcp_buf b = PMCP_BUF_INIT;
  ST_RC(s, pmcp_store_get(s, t, v1, &b), PMCP_ENOTFOUND);
  ck_assert_int_eq(st_list_count(s, t, "note-version", overview, NULL), 2);
  /* Operational notes, hand-off notes, sub-notes, the team note. */
  pmcp_note_spec h = PMCP_NOTE_SPEC_INIT;
  h.on = "run:r1";
  h.kind = "handoff";
  h.title = "Hand-off";
  h.body = "Resume from step 300; the lr warmup is too short.";
  ST_OK(s, pmcp_store_note(s, t, &h, &id, NULL));
  char parent[64];
  snprintf(parent, sizeof parent, "note:%s", id.ptr);
  pmcp_note_spec sub = PMCP_NOTE_SPEC_INIT;
  sub.on = "run:r1";
  sub.kind = "sub-note";
  sub.parent = parent;
  sub.title = "warmup";
  sub.body = "Try 2000 warmup steps.";
  ST_OK(s, pmcp_store_note(s, t, &sub, &id, NULL));
  o = st_get(s, t, parent);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "sub_notes")), 1);
  cJSON_Delete(o);
  pmcp_note_spec team = PMCP_NOTE_SPEC_INIT;
  team.kind = "team";
  team.body = "Team conventions: log lr as config/lr.";
  ST_OK(s, pmcp_store_note(s, t, &team, NULL, &v));
  ST_OK(s, pmcp_store_note(s, t, &team, NULL, &v));
  ck_assert_int_eq(v, 2);
  o = st_get(s, t, "team-note");
  ck_assert_str_eq(st_str(o, "kind"), "team-note");
  cJSON_Delete(o);
  ck_assert_int_eq(st_list_count(s, t, "note", "run:r1", NULL), 2);
  ck_assert_int_eq(st_list_count(s, t, "note", NULL, "{\"kind\":\"handoff\"}"), 1);
  pmcp_list_opts lo = PMCP_LIST_OPTS_INIT;
  lo.kind = "note";
  lo.query = "WARMUP";
  ST_OK(s, pmcp_store_list(s, t, &lo, &b));
  cJSON *j = st_json(&b);
  ck_assert_int_eq(cJSON_GetObjectItem(j, "total")->valueint, 2);
  cJSON_Delete(j);
  /* Bad notes. */
  pmcp_note_spec bad = PMCP_NOTE_SPEC_INIT;
  bad.body = "x";
  ST_RC(s, pmcp_store_note(s, t, &bad, NULL, NULL), PMCP_EINVAL);
  bad.on = "run:r1";
  bad.kind = "diary";
  ST_RC(s, pmcp_store_note(s, t, &bad, NULL, NULL), PMCP_EINVAL);
  bad.kind = "overview";
  ST_RC(s, pmcp_store_note(s, t, &bad, NULL, NULL), PMCP_EINVAL);
  bad.kind = "sub-note";
  ST_RC(s, pmcp_store_note(s, t, &bad, NULL, NULL), PMCP_EINVAL);
  bad.kind = NULL;
  bad.body = NULL;
  ST_RC(s, pmcp_store_note(s, t, &bad, NULL, NULL), PMCP_EINVAL);
  pmcp_buf_dispose(&b);
  pmcp_buf_dispose(&id);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(artifacts)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  pmcp_buf id = PMCP_BUF_INIT, content = PMCP_BUF_INIT, meta = PMCP_BUF_INIT;
  int64_t v;
  const char *best[] = {"best"};
  pmcp_artifact_spec a = PMCP_ARTIFACT_SPEC_INIT;
  a.name = "config.yaml";
  a.on = "run:r1";
  a.path = "outputs/config.yaml";
  a.content = "lr: 0.1\n";
  a.size = 8;
  a.labels = best;
  a.n_labels = 1;
  ST_OK(s, pmcp_store_artifact_add(s, t, &a, &id, &v));
  ck_assert_int_eq(v, 1);
  a.content = "lr: 0.2\n";
  a.n_labels = 0;
  ST_OK(s, pmcp_store_artifact_add(s, t, &a, &id, &v));
  ck_assert_int_eq(v, 2);
  char ref[128];
  snprintf(ref, sizeof ref, "artifact:%s", id.ptr);
  ST_OK(s, pmcp_store_artifact_content(s, t, ref, 0, &content, &meta));
  ck_assert_str_eq(content.ptr, "lr: 0.2\n");
  cJSON *m = st_json(&meta);
  ck_assert_str_eq(st_str(m, "sha256"),
                   "134446279ec3119f3e8763b1c10e37a9e46f5e74bcde121aba0ed942b61c747c");
  ck_assert_str_eq(st_str(m, "media_type"), "application/yaml");
  cJSON_Delete(m);
  ST_OK(s, pmcp_store_artifact_content(s, t, ref, 1, &content, NULL));
  ck_assert_str_eq(content.ptr, "lr: 0.1\n");
  ST_RC(s, pmcp_store_artifact_content(s, t, ref, 3, &content, NULL), PMCP_ENOTFOUND);
  /* Labels move between versions. */
  ST_OK(s, pmcp_store_artifact_label(s, t, ref, 2, "best"));
  cJSON *o = st_get(s, t, ref);
  ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "labels"), "best")->valueint, 2);
  ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "shared")));
  cJSON_Delete(o);
  ST_RC(s, pmcp_store_artifact_label(s, t, ref, 2, "123"), PMCP_EINVAL);
  ST_RC(s, pmcp_store_artifact_label(s, t, ref, 7, "prod"), PMCP_ENOTFOUND);
  /* Not shared: the bare name does not resolve; promoted, it does. */
  pmcp_buf b = PMCP_BUF_INIT;
  ST_RC(s, pmcp_store_get(s, t, "artifact:config.yaml", &b), PMCP_ENOTFOUND);
  ST_OK(s, pmcp_store_artifact_promote(s, t, ref));
  o = st_get(s, t, "artifact:config.yaml");
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "shared")));
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "versions")), 2);
  cJSON_Delete(o);
  /* A second artifact with the same name cannot be promoted too. */
  pmcp_run_spec r2 = PMCP_RUN_SPEC_INIT;
  r2.id = "r2";
  ST_OK(s, pmcp_store_run_create(s, t, &r2, NULL));
  a.on = "run:r2";
  ST_OK(s, pmcp_store_artifact_add(s, t, &a, &id, &v));
  char ref2[128];
  snprintf(ref2, sizeof ref2, "artifact:%s", id.ptr);
  ST_RC(s, pmcp_store_artifact_promote(s, t, ref2), PMCP_EEXIST);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), ref + 9));
  /* A reference: size and digest kept, content refused. */
  pmcp_artifact_spec rf = PMCP_ARTIFACT_SPEC_INIT;
  rf.name = "weights";
  rf.on = "run:r1";
  rf.uri = "s3://bucket/weights.pt";
  rf.size = 1u << 30;
  rf.sha256 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  ST_OK(s, pmcp_store_artifact_add(s, t, &rf, &id, &v));
  snprintf(ref2, sizeof ref2, "artifact:%s", id.ptr);
  ST_RC(s, pmcp_store_artifact_content(s, t, ref2, 0, &content, &meta), PMCP_EUNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(meta.ptr, "s3://bucket/weights.pt"));
  /* Binary content. */
  pmcp_artifact_spec bin = PMCP_ARTIFACT_SPEC_INIT;
  bin.name = "blob.bin";
  bin.content = "\x00\x01\xff";
  bin.size = 3;
  ST_OK(s, pmcp_store_artifact_add(s, t, &bin, &id, &v));
  o = st_get(s, t, "artifact:blob.bin");
  cJSON *ver = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "versions"), 0);
  ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(ver, "text")));
  ck_assert_str_eq(st_str(ver, "media_type"), "application/octet-stream");
  cJSON_Delete(o);
  ST_OK(s, pmcp_store_artifact_content(s, t, "artifact:blob.bin", 1, &content, NULL));
  ck_assert_uint_eq(content.len, 3);
  ck_assert(memcmp(content.ptr, "\x00\x01\xff", 3) == 0);
  /* Bad artifacts. */
  pmcp_artifact_spec bad = PMCP_ARTIFACT_SPEC_INIT;
  bad.name = "x";
  ST_RC(s, pmcp_store_artifact_add(s, t, &bad, NULL, NULL), PMCP_EINVAL);
  bad.content = "a";
  bad.size = 1;
  bad.uri = "s3://x";
  ST_RC(s, pmcp_store_artifact_add(s, t, &bad, NULL, NULL), PMCP_EINVAL);
  bad.content = NULL;
  bad.sha256 = "XYZ";
  ST_RC(s, pmcp_store_artifact_add(s, t, &bad, NULL, NULL), PMCP_EINVAL);
  bad.sha256 = NULL;
  bad.name = NULL;
  ST_RC(s, pmcp_store_artifact_add(s, t, &bad, NULL, NULL), PMCP_EINVAL);
  ck_assert_int_eq(st_list_count(s, t, "artifact", "run:r1", NULL), 2);
  ck_assert_int_eq(st_list_count(s, t, "artifact-version", ref, NULL), 2);
  ck_assert_int_eq(st_list_count(s, t, "artifact", NULL, "{\"shared\":true}"), 2);
  pmcp_buf_dispose(&b);
  pmcp_buf_dispose(&id);
  pmcp_buf_dispose(&content);
  pmcp_buf_dispose(&meta);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(put_kinds)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  pmcp_buf ref = PMCP_BUF_INIT;
  put(s, t, "dataset", "{\"name\":\"ImageNet 1k\",\"project\":\"vision\",\"uri\":\"s3://data/in1k\","
                       "\"description\":\"ILSVRC 2012\"}", &ref);
  ck_assert_str_eq(ref.ptr, "dataset:imagenet-1k");
  put(s, t, "dataset-version", "{\"dataset\":\"imagenet-1k\",\"version\":\"v2\",\"rows\":1281167,"
                               "\"size\":150000000000}", &ref);
  ck_assert_str_eq(ref.ptr, "dataset:imagenet-1k@v2");
  cJSON *o = st_get(s, t, "dataset:imagenet-1k@v2");
  ck_assert_int_eq((int)cJSON_GetObjectItem(cJSON_GetObjectItem(o, "version"), "rows")->valuedouble,
                   1281167);
  cJSON_Delete(o);
  put(s, t, "checkpoint", "{\"run\":\"r1\",\"step\":100,\"uri\":\"s3://ck/100\"}", &ref);
  put(s, t, "checkpoint", "{\"run\":\"r1\",\"step\":200,\"best\":true,\"metric\":\"val/acc\","
                          "\"value\":0.76}", &ref);
  put(s, t, "checkpoint", "{\"run\":\"r1\",\"step\":300}", &ref);
  o = st_get(s, t, "checkpoint:r1@best");
  ck_assert_int_eq(cJSON_GetObjectItem(o, "step")->valueint, 200);
  cJSON_Delete(o);
  o = st_get(s, t, "checkpoint:r1@latest");
  ck_assert_int_eq(cJSON_GetObjectItem(o, "step")->valueint, 300);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "versions")), 3);
  cJSON_Delete(o);
  o = st_get(s, t, "checkpoint:r1@step100");
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "stored")));
  cJSON_Delete(o);
  ck_assert_int_eq(st_list_count(s, t, "checkpoint", NULL, "{\"best\":true}"), 1);
  ck_assert_int_eq(st_list_count(s, t, "checkpoint", "experiment:baseline", NULL), 3);
  put(s, t, "source", "{\"provider\":\"hf\",\"kind\":\"model\",\"uri\":\"hf://openai/whisper-large-v2\"}",
      &ref);
  char src[128];
  snprintf(src, sizeof src, "%s", ref.ptr);
  /* The same provider + uri is the same source. */
  put(s, t, "source", "{\"provider\":\"hf\",\"kind\":\"model\",\"uri\":\"hf://openai/whisper-large-v2\","
                      "\"description\":\"base model\"}", &ref);
  ck_assert_str_eq(ref.ptr, src);
  ck_assert_int_eq(st_list_count(s, t, "source", NULL, "{\"provider\":\"hf\"}"), 1);
  char json[512];
  snprintf(json, sizeof json, "{\"run\":\"r1\",\"uses\":\"%s\"}", src);
  put(s, t, "run-use", json, &ref);
  put(s, t, "run-use", "{\"run\":\"r1\",\"uses\":\"dataset:imagenet-1k@v2\"}", &ref);
  put(s, t, "lineage", "{\"from\":\"run:r1\",\"to\":\"checkpoint:r1@best\",\"relation\":\"produced\","
                       "\"steps\":[{\"name\":\"train\",\"description\":\"90 epochs\"}]}", &ref);
  o = st_get(s, t, src);
  ck_assert_int_eq(cJSON_GetObjectItem(o, "runs")->valueint, 1);
  cJSON_Delete(o);
  ck_assert_int_eq(st_list_count(s, t, "lineage", "run:r1", "{\"direction\":\"upstream\"}"), 2);
  ck_assert_int_eq(st_list_count(s, t, "lineage", "run:r1", "{\"direction\":\"downstream\"}"), 1);
  put(s, t, "group", "{\"name\":\"lr sweep\",\"experiment\":\"baseline\",\"runs\":[\"r1\"]}", &ref);
  ck_assert_str_eq(ref.ptr, "group:lr-sweep");
  put(s, t, "group", "{\"name\":\"lr sweep\",\"experiment\":\"baseline\",\"runs\":[\"r1\"]}", &ref);
  ck_assert_int_eq(st_list_count(s, t, "run", "group:lr-sweep", NULL), 1);
  put(s, t, "trial", "{\"run\":\"r1\",\"name\":\"t0\",\"params\":{\"lr\":0.1},\"score\":0.5,"
                     "\"trajectory\":[{\"step\":0,\"value\":1.0},{\"step\":1,\"value\":0.5}]}", &ref);
  o = st_get(s, t, ref.ptr);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "trajectory")), 2);
  cJSON_Delete(o);
  put(s, t, "session", "{\"title\":\"Debug divergence\",\"agent\":\"claude\",\"on\":[\"run:r1\","
                       "\"experiment:baseline\"],\"transcript\":[{\"role\":\"user\",\"content\":"
                       "\"why did loss spike?\"},{\"role\":\"assistant\",\"content\":\"lr too high\"}]}",
      &ref);
  ck_assert_int_eq(st_list_count(s, t, "session", "run:r1", NULL), 1);
  o = st_get(s, t, "experiment:baseline");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "sessions")), 1);
  cJSON_Delete(o);
  pmcp_entity_spec w = PMCP_ENTITY_SPEC_INIT;
  w.name = "ws1";
  ST_OK(s, pmcp_store_create(s, t, "workspace", &w, NULL));
  put(s, t, "file", "{\"path\":\"docs/onboarding.md\",\"content\":\"# Welcome\"}", &ref);
  put(s, t, "file", "{\"path\":\"notes.txt\",\"workspace\":\"ws1\",\"content\":\"ws notes\"}", &ref);
  put(s, t, "file", "{\"path\":\"notes.txt\",\"workspace\":\"ws1\",\"content\":\"ws notes v2\"}", &ref);
  ck_assert_int_eq(st_list_count(s, t, "file", NULL, "{\"shared\":true}"), 1);
  ck_assert_int_eq(st_list_count(s, t, "file", "workspace:ws1", NULL), 1);
  o = st_get(s, t, ref.ptr);
  ck_assert_str_eq(st_str(o, "content"), "ws notes v2");
  cJSON_Delete(o);
  pmcp_paper pp = {PMCP_PAPER_VERSION, "0704.0001", "Calculation of prompt diphoton production", "A fully differential"
                   " calculation in perturbative QCD", "C. Balazs, E. L. Berger", "hep-ph",
                   "2007-04-02", "2008-11-13", NULL, NULL, NULL};
  ST_OK(s, pmcp_store_paper(s, t, &pp));
  ST_OK(s, pmcp_store_paper(s, t, &pp));
  ck_assert_int_eq(st_list_count(s, t, "paper", NULL, NULL), 1);
  put(s, t, "paper-link", "{\"project\":\"vision\",\"paper\":\"0704.0001\",\"note\":\"background\"}",
      &ref);
  o = st_get(s, t, "project:vision");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "papers")), 1);
  cJSON_Delete(o);
  put(s, t, "experiment-version", "{\"experiment\":\"baseline\",\"description\":\"v1\","
                                  "\"config\":{\"lr\":0.1}}", &ref);
  put(s, t, "experiment-version", "{\"experiment\":\"baseline\",\"description\":\"v1\","
                                  "\"config\":{\"lr\":0.1}}", &ref);
  ck_assert_str_eq(ref.ptr, "experiment:baseline@1");
  put(s, t, "experiment-version", "{\"experiment\":\"baseline\",\"description\":\"v2\"}", &ref);
  ck_assert_int_eq(st_list_count(s, t, "experiment-version", "experiment:baseline", NULL), 2);
  /* Bad records name the problem. */
  ck_assert_int_eq(put_rc(s, t, "spaceship", "{}"), PMCP_EINVAL);
  ck_assert_int_eq(put_rc(s, t, "dataset", "[1]"), PMCP_EINVAL);
  ck_assert_int_eq(put_rc(s, t, "dataset", "{\"name\":5}"), PMCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(pmcp_store_errmsg(s), "\"name\""));
  ck_assert_int_eq(put_rc(s, t, "dataset", "{\"nam"), PMCP_EINVAL);
  ck_assert_int_eq(put_rc(s, t, "checkpoint", "{\"run\":\"r1\",\"step\":1.5}"), PMCP_EINVAL);
  ck_assert_int_eq(put_rc(s, t, "checkpoint", "{\"run\":\"zz\",\"step\":1}"), PMCP_ENOTFOUND);
  ck_assert_int_eq(put_rc(s, t, "lineage", "{\"from\":\"run:r1\",\"to\":\"run:r1\"}"), PMCP_EINVAL);
  ck_assert_int_eq(put_rc(s, t, "lineage", "{\"from\":\"bogus:x\",\"to\":\"run:r1\"}"), PMCP_EINVAL);
  ck_assert_int_eq(put_rc(s, t, "lineage", "{\"from\":\"run:r1\",\"to\":\"dataset:none\"}"),
                   PMCP_ENOTFOUND);
  ck_assert_int_eq(put_rc(s, t, "lineage", "{\"from\":\"run:r1\",\"to\":\"dataset:imagenet-1k\","
                                           "\"steps\":[1]}"), PMCP_EINVAL);
  ck_assert_int_eq(put_rc(s, t, "file", "{\"path\":\"../etc/passwd\",\"content\":\"x\"}"), PMCP_EINVAL);
  ck_assert_int_eq(put_rc(s, t, "session", "{\"title\":\"x\",\"transcript\":[{\"role\":1}]}"),
                   PMCP_EINVAL);
  ck_assert_int_eq(put_rc(s, t, "paper-link", "{\"project\":\"vision\",\"paper\":\"9999.9999\"}"),
                   PMCP_ENOTFOUND);
  pmcp_buf_dispose(&ref);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(search)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  pmcp_value v = {PMCP_V_STRING, "cosine_annealing", 0, 0, NULL, 0};
  ST_OK(s, pmcp_store_set_attr(s, t, "run:r1", "config/scheduler", &v));
  pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
  n.on = "run:r1";
  n.body = "The gradient norm exploded after the warmup ended.";
  ST_OK(s, pmcp_store_note(s, t, &n, NULL, NULL));
  pmcp_artifact_spec a = PMCP_ARTIFACT_SPEC_INIT;
  a.name = "train.log";
  a.on = "run:r1";
  a.content = "epoch 3 gradient clipping engaged";
  a.size = strlen(a.content);
  ST_OK(s, pmcp_store_artifact_add(s, t, &a, NULL, NULL));
  pmcp_paper pp = {PMCP_PAPER_VERSION, "1706.03762", "Attention Is All You Need", "The dominant sequence transduction"
                   " models are based on recurrent networks; gradient flow.", "A. Vaswani", "cs.CL",
                   NULL, NULL, NULL, NULL, NULL};
  ST_OK(s, pmcp_store_paper(s, t, &pp));
  pmcp_buf b = PMCP_BUF_INIT;
  ST_OK(s, pmcp_store_search(s, t, "gradient", NULL, NULL, 10, &b));
  cJSON *j = st_json(&b);
  ck_assert_int_eq(cJSON_GetObjectItem(j, "total")->valueint, 2); /* papers need asking */
  cJSON_Delete(j);
  ST_OK(s, pmcp_store_search(s, t, "gradient", "paper", NULL, 10, &b));
  j = st_json(&b);
  ck_assert_int_eq(cJSON_GetObjectItem(j, "total")->valueint, 1);
  ck_assert_str_eq(st_str(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "items"), 0), "ref"),
                   "paper:1706.03762");
  cJSON_Delete(j);
  ST_OK(s, pmcp_store_search(s, t, "cosine annealing", "run", NULL, 10, &b));
  ck_assert_ptr_nonnull(strstr(b.ptr, "run:r1"));
  /* Query syntax is taken literally: quotes, NEAR, stars, colons. */
  ST_OK(s, pmcp_store_search(s, t, "\"gradient\" OR NEAR(x* title:y) -", NULL, NULL, 10, &b));
  ST_OK(s, pmcp_store_search(s, t, "gradient", "note artifact", NULL, 1, &b));
  j = st_json(&b);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
  ck_assert_str_eq(st_str(j, "next"), "1");
  cJSON_Delete(j);
  ST_RC(s, pmcp_store_search(s, t, "  ?? ", NULL, NULL, 10, &b), PMCP_EINVAL);
  ST_RC(s, pmcp_store_search(s, t, "x", "galaxy", NULL, 10, &b), PMCP_EINVAL);
  ST_RC(s, pmcp_store_search(s, t, "x", NULL, "zz", 10, &b), PMCP_EINVAL);
  /* a position past any page (one that overflows, or beyond INT32_MAX)
   * is refused before the page's end is worked out from it */
  ST_RC(s, pmcp_store_search(s, t, "gradient", NULL, "99999999999999999999", 10, &b), PMCP_EINVAL);
  ST_RC(s, pmcp_store_search(s, t, "gradient", NULL, "9223372036854775807", 10, &b), PMCP_EINVAL);
  ST_RC(s, pmcp_store_search(s, t, "gradient", NULL, "2147483648", 10, &b), PMCP_EINVAL);
  ST_OK(s, pmcp_store_search(s, t, "gradient", NULL, "2147483647", 10, &b));
  pmcp_buf_dispose(&b);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* The JSON a record keeps (a trial's params and trajectory) comes back as
 * exactly its values: every double bit for bit, the sign of zero too, and
 * a string that was not UTF-8 as valid text (U+FFFD for the stray bytes,
 * as the library's writer writes them) rather than bytes no JSON reader
 * takes. */
START_TEST(stored_json_is_exact)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  st_mkproject(s, t);
  pmcp_buf ref = PMCP_BUF_INIT, text = PMCP_BUF_INIT;
  put(s, t, "trial", "{\"run\":\"r1\",\"name\":\"t0\",\"params\":{\"lr\":0.30000000000000004,"
                     "\"eps\":5e-324,\"z\":-0.0,\"big\":1.7976931348623157e308,"
                     "\"tag\":\"a\xff" "b\\u00e9\"},\"trajectory\":[{\"step\":9007199254740991,"
                     "\"value\":2.2250738585072009e-308}]}", &ref);
  ST_OK(s, pmcp_store_get(s, t, ref.ptr, &text));
  ck_assert_msg(pmcp_utf8_valid(text.ptr, text.len), "not UTF-8: %s", text.ptr);
  cJSON *o = st_json(&text);
  const cJSON *p = cJSON_GetObjectItem(o, "params");
  ck_assert_ptr_nonnull(p);
  static const struct {
    const char *key;
    double v;
  } want[] = {{"lr", 0.30000000000000004}, {"eps", 5e-324}, {"z", -0.0},
              {"big", 1.7976931348623157e308}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const cJSON *v = cJSON_GetObjectItem(p, want[i].key);
    ck_assert_msg(v && memcmp(&v->valuedouble, &want[i].v, sizeof(double)) == 0,
                  "params.%s: %.17g, not %.17g", want[i].key, v ? v->valuedouble : NAN, want[i].v);
  }
  ck_assert_str_eq(cJSON_GetObjectItem(p, "tag")->valuestring, "a\xef\xbf\xbd" "b\xc3\xa9");
  const cJSON *pt = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "trajectory"), 0);
  ck_assert_ptr_nonnull(pt);
  ck_assert(cJSON_GetObjectItem(pt, "step")->valuedouble == 9007199254740991.0);
  ck_assert(cJSON_GetObjectItem(pt, "value")->valuedouble == 2.2250738585072009e-308);
  cJSON_Delete(o);
  pmcp_buf_dispose(&text);
  pmcp_buf_dispose(&ref);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

int main(void)
{
  Suite *su = suite_create("store-catalog");
  TCase *tc = tcase_create("catalog");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, notes_versions);
  tcase_add_test(tc, artifacts);
  tcase_add_test(tc, put_kinds);
  tcase_add_test(tc, search);
  tcase_add_test(tc, stored_json_is_exact);
  suite_add_tcase(su, tc);
  return st_run_suite(su);
}
