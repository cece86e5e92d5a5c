/* SPDX-License-Identifier: MIT */
/* Workspace isolation as a property: nothing of another workspace reaches
 * a call scoped to one, through any tool, view, count or link.
 *
 * The lab has two workspaces and the default one (unfiled runs), each
 * with its own project, experiment, runs, notes, artifacts, datasets and
 * versions, checkpoints, trials, groups, series, environments, files and
 * agent sessions, every name carrying the workspace's marker; and
 * lab-wide records every workspace sees (two sources, a shared artifact,
 * the team note, a paper, a shared file, a session on the artifact) that
 * the runs of every workspace link to (uses, lineage, sessions), plus
 * links that cross workspaces (a run derived from another workspace's
 * run, a group holding runs of two, a session on both).
 *
 * For each scope, every tool of both toolsets (read from tools/list) is
 * called with every value of its enumerated arguments, crossed with
 * every argument that names entities, given the scope's own refs, the
 * lab-wide ones and the other workspaces' (in each form: kind:id, id,
 * @version, @best...). No response (errors included, once the names the
 * call itself passed are taken out) may hold another workspace's marker
 * or its session's start time, and the run counts shown for sources and
 * groups must equal a brute-force count of the scope's own runs. Runs on
 * SQLite and (PMCP_TEST_STORE=pg) PostgreSQL. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine-harness.h"
#include "store-test-util.h"
#include "util/buf.h"

#define NW 3
/* The markers: alpha's, beta's and the default workspace's (unfiled). */
static const char *const MARK[NW] = {"aamark", "bbmark", "uumark"};
static const char *const WSNAME[NW] = {"aamark-ws", "bbmark-ws", "default"};
/* Each workspace's agent session starts at a time nothing else uses. */
static const long long START_MS[NW] = {1500000000000LL, 1600000000000LL, 1400000000000LL};
static const char *const START_ISO[NW] = {"2017-07-14T02:40", "2020-09-13T12:26",
                                          "2014-05-13T16:53"};

/* One workspace's records (w: 0 alpha, 1 beta, 2 the default's unfiled). */
static void fill_ws(pmcp_store *s, pmcp_tenant t, int w)
{
  const char *m = MARK[w];
  char proj[64], exp[64], js[600];
  snprintf(proj, sizeof proj, "%s-p", m);
  snprintf(exp, sizeof exp, "%s-e", m);
  if (w < 2) {
    char wref[80], pref[80];
    snprintf(wref, sizeof wref, "workspace:%s", WSNAME[w]);
    snprintf(pref, sizeof pref, "project:%s", proj);
    st_create(s, t, "workspace", WSNAME[w], NULL);
    st_create(s, t, "project", proj, wref);
    st_create(s, t, "experiment", exp, pref);
  }
  for (int i = 1; i <= 2; i++) {
    char id[64], ref[80], name[80];
    snprintf(id, sizeof id, "%s-r%d", m, i);
    snprintf(ref, sizeof ref, "run:%s", id);
    snprintf(name, sizeof name, "%s secret %s", m, i == 1 ? "one" : "two");
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = id;
    r.name = name;
    r.project = w < 2 ? proj : NULL;
    r.experiment = w < 2 && i == 1 ? exp : NULL;
    r.status = "finished";
    ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
    pmcp_value lr = {PMCP_V_FLOAT, NULL, 0, 0.125, NULL, 0};
    ST_OK(s, pmcp_store_set_attr(s, t, ref, "config/lr", &lr));
    pmcp_value nm = {PMCP_V_STRING, name, 0, 0, NULL, 0};
    ST_OK(s, pmcp_store_set_attr(s, t, ref, "params/name", &nm));
    char tag[64];
    snprintf(tag, sizeof tag, "%s-tag", m);
    ST_OK(s, pmcp_store_tag(s, t, ref, tag, 1));
    ST_OK(s, pmcp_store_run_event(s, t, id, "log", name, 1700000000500));
    char key[64];
    snprintf(key, sizeof key, "%s-metric", m);
    const char *keys[2] = {"loss", key};
    for (int k = 0; k < 2; k++) {
      pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, keys[k], NULL, 0, 0, 0};
      int64_t sid;
      ST_OK(s, pmcp_store_series(s, t, ref, &sp, &sid));
      pmcp_point pt[3] = {{1, 1700000000001, 1.5}, {2, 1700000000002, 0.75},
                          {3, 1700000000003, 0.25}};
      ST_OK(s, pmcp_store_log(s, t, sid, pt, 3));
    }
    char env[64];
    snprintf(env, sizeof env, "%s-env", m);
    pmcp_label lb = {"env", env};
    pmcp_series_spec rs = {PMCP_SERIES_SPEC_VERSION, "reward", &lb, 1, PMCP_METRIC_FLOAT, PMCP_SCALE_ENV_STEP};
    int64_t rsid;
    ST_OK(s, pmcp_store_series(s, t, ref, &rs, &rsid));
    pmcp_point rp[2] = {{10, 1700000000010, 1.0}, {20, 1700000000020, 2.0}};
    ST_OK(s, pmcp_store_log(s, t, rsid, rp, 2));
    pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
    n.on = ref;
    n.title = name;
    n.body = name;
    ST_OK(s, pmcp_store_note(s, t, &n, NULL, NULL));
    pmcp_artifact_spec a = PMCP_ARTIFACT_SPEC_INIT;
    char an[64];
    snprintf(an, sizeof an, "%s-art%c", m, i == 1 ? 'a' : 'b');
    a.name = an;
    a.on = ref;
    a.content = name;
    a.size = strlen(name);
    a.description = name;
    ST_OK(s, pmcp_store_artifact_add(s, t, &a, NULL, NULL));
    /* every run uses the shared model */
    snprintf(js, sizeof js, "{\"run\":\"%s\",\"uses\":\"source:shared-model\"}", id);
    st_put(s, t, "run-use", js);
  }
  char r1[64];
  snprintf(r1, sizeof r1, "%s-r1", m);
  snprintf(js, sizeof js, "{\"run\":\"%s\",\"step\":100,\"uri\":\"s3://ck/%s\",\"best\":true}",
           r1, m);
  st_put(s, t, "checkpoint", js);
  snprintf(js, sizeof js, "{\"run\":\"%s\",\"name\":\"%s-trial\",\"params\":{\"lr\":0.1},"
           "\"score\":0.5}", r1, m);
  st_put(s, t, "trial", js);
  snprintf(js, sizeof js, "{\"run\":\"%s\",\"env\":\"%s-env\",\"path\":\"physics/gravity\","
           "\"value\":9.8}", r1, m);
  st_put(s, t, "env-attribute", js);
  /* a dataset with a version: produced by the run, drawn from the shared data */
  if (w < 2)
    snprintf(js, sizeof js, "{\"name\":\"%s-ds\",\"project\":\"%s\",\"uri\":\"s3://%s-ds\","
             "\"description\":\"%s data\"}", m, proj, m, m);
  else
    snprintf(js, sizeof js, "{\"name\":\"%s-ds\",\"uri\":\"s3://%s-ds\",\"description\":"
             "\"%s data\"}", m, m, m);
  st_put(s, t, "dataset", js);
  snprintf(js, sizeof js, "{\"dataset\":\"%s-ds\",\"version\":\"%s-v1\",\"rows\":10}", m, m);
  st_put(s, t, "dataset-version", js);
  snprintf(js, sizeof js, "{\"from\":\"run:%s\",\"to\":\"dataset:%s-ds\",\"relation\":"
           "\"produced\"}", r1, m);
  st_put(s, t, "lineage", js);
  snprintf(js, sizeof js, "{\"from\":\"source:shared-data\",\"to\":\"dataset:%s-ds@%s-v1\","
           "\"relation\":\"derived\"}", m, m);
  st_put(s, t, "lineage", js);
  snprintf(js, sizeof js, "{\"from\":\"artifact:handbook\",\"to\":\"run:%s\",\"relation\":"
           "\"used\"}", r1);
  st_put(s, t, "lineage", js);
  /* an agent session on the shared artifact and the run */
  snprintf(js, sizeof js, "{\"title\":\"%s session\",\"agent\":\"%s-agent\",\"started\":%lld,"
           "\"on\":[\"artifact:handbook\",\"run:%s\"],\"transcript\":[{\"role\":\"user\","
           "\"content\":\"%s question\"}]}", m, m, START_MS[w], r1, m);
  st_put(s, t, "session", js);
  if (w < 2)
    snprintf(js, sizeof js, "{\"name\":\"%s-g\",\"experiment\":\"%s\",\"runs\":[\"%s-r1\","
             "\"%s-r2\"]}", m, exp, m, m);
  else
    snprintf(js, sizeof js, "{\"name\":\"%s-g\",\"runs\":[\"%s-r1\",\"%s-r2\"]}", m, m, m);
  st_put(s, t, "group", js);
  if (w < 2) {
    snprintf(js, sizeof js, "{\"path\":\"%s-notes.txt\",\"workspace\":\"%s\",\"content\":"
             "\"%s file\"}", m, WSNAME[w], m);
    st_put(s, t, "file", js);
    snprintf(js, sizeof js, "{\"project\":\"%s\",\"paper\":\"0704.0001\",\"note\":\"%s why\"}",
             proj, m);
    st_put(s, t, "paper-link", js);
  }
}

static pmcp_store *build(pmcp_tenant *t)
{
  pmcp_store *s = st_open_new(t);
  st_put(s, *t, "source", "{\"id\":\"shared-model\",\"provider\":\"hf\",\"kind\":\"model\","
                       "\"uri\":\"hf://org/shared-model\",\"description\":\"lab model\"}");
  st_put(s, *t, "source", "{\"id\":\"shared-data\",\"provider\":\"hf\",\"kind\":\"dataset\","
                       "\"uri\":\"hf://org/shared-data\",\"version\":\"v3\"}");
  pmcp_artifact_spec la = PMCP_ARTIFACT_SPEC_INIT;
  la.name = "handbook";
  la.content = "the lab handbook";
  la.size = strlen(la.content);
  ST_OK(s, pmcp_store_artifact_add(s, *t, &la, NULL, NULL));
  pmcp_note_spec tn = PMCP_NOTE_SPEC_INIT;
  tn.kind = "team";
  tn.title = "team note";
  tn.body = "how the lab works";
  ST_OK(s, pmcp_store_note(s, *t, &tn, NULL, NULL));
  pmcp_paper pp = {PMCP_PAPER_VERSION, "0704.0001", "Diphoton production", "An abstract", "C. Balazs", "hep-ph",
                   "2007-04-02", "2008-11-13", NULL, NULL, NULL};
  ST_OK(s, pmcp_store_paper(s, *t, &pp));
  st_put(s, *t, "file", "{\"path\":\"shared-readme.txt\",\"content\":\"the shared folder\"}");
  st_put(s, *t, "session", "{\"title\":\"lab session\",\"agent\":\"lab-agent\","
                        "\"on\":[\"artifact:handbook\"]}");
  for (int w = 0; w < NW; w++)
    fill_ws(s, *t, w);
  /* links across workspaces: visible in neither, shown by neither */
  st_put(s, *t, "lineage", "{\"from\":\"run:aamark-r1\",\"to\":\"run:bbmark-r1\","
                        "\"relation\":\"derived\"}");
  st_put(s, *t, "lineage", "{\"from\":\"run:uumark-r1\",\"to\":\"run:aamark-r2\","
                        "\"relation\":\"derived\"}");
  st_put(s, *t, "group", "{\"name\":\"aamark-gx\",\"experiment\":\"aamark-e\","
                      "\"runs\":[\"aamark-r1\",\"bbmark-r1\",\"uumark-r1\"]}");
  st_put(s, *t, "session", "{\"title\":\"cross aamark bbmark\",\"agent\":\"x-agent\","
                        "\"on\":[\"run:aamark-r1\",\"run:bbmark-r2\"]}");
  /* a note of alpha's under a note of beta's, and the other way round */
  static const char *const sub[][3] = {{"run:aamark-r2", "note:bbmark-r2-bbmark-secret-two",
                                        "aamark sub-note"},
                                       {"run:bbmark-r2", "note:aamark-r2-aamark-secret-two",
                                        "bbmark sub-note"}};
  for (int i = 0; i < 2; i++) {
    pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
    n.on = sub[i][0];
    n.kind = "sub-note";
    n.parent = sub[i][1];
    n.title = sub[i][2];
    n.body = sub[i][2];
    ST_OK(s, pmcp_store_note(s, *t, &n, NULL, NULL));
  }
  pmcp_store_free(s);
  pmcp_store *ro = NULL;
  ck_assert_int_eq(pmcp_store_open(&ro, st_path, PMCP_STORE_READONLY), 0);
  ST_OK(ro, pmcp_store_tenant(ro, NULL, 0, t));
  return ro;
}

/* ---- what each scope may see ------------------------------------------------ */

static pmcp_store *RO;
static pmcp_tenant T;
/* refs by owner: 0..2 a workspace's own, 3 lab-wide; from unscoped lists */
static cJSON *REFS[NW + 1];

/* The workspace (0..2) whose marker @p text holds, 3 for none, -1 for more
 * than one. */
static int owner_of(const char *text)
{
  int who = NW;
  for (int w = 0; w < NW; w++)
    if (strstr(text, MARK[w]))
      who = who == NW ? w : -1;
  return who;
}

__attribute__((format(printf, 2, 3))) static void add_s(cJSON *arr, const char *fmt, ...)
{
  char v[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v, sizeof v, fmt, ap);
  va_end(ap);
  cJSON_AddItemToArray(arr, cJSON_CreateString(v));
}

static void classify(void)
{
  static const char *const kinds[] = {"workspace", "project", "experiment", "run", "note",
                                      "artifact", "dataset", "checkpoint", "source", "group",
                                      "trial", "session", "file", "paper"};
  for (int w = 0; w <= NW; w++)
    REFS[w] = cJSON_CreateArray();
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
    o.kind = kinds[k];
    o.limit = 1000;
    pmcp_buf b = PMCP_BUF_INIT;
    ST_OK(RO, pmcp_store_list(RO, T, &o, &b));
    cJSON *l = st_json(&b);
    cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(l, "items")) {
      char *txt = cJSON_PrintUnformatted(it);
      const char *ref = cJSON_GetStringValue(cJSON_GetObjectItem(it, "ref"));
      int who = owner_of(txt);
      if (ref && who >= 0)
        cJSON_AddItemToArray(REFS[who], cJSON_CreateString(ref));
      cJSON_free(txt);
    }
    cJSON_Delete(l);
    pmcp_buf_dispose(&b);
  }
  /* the other forms of refs */
  for (int w = 0; w < NW; w++) {
    const char *m = MARK[w];
    add_s(REFS[w], "dataset:%s-ds@%s-v1", m, m);
    add_s(REFS[w], "checkpoint:%s-r1@best", m);
    add_s(REFS[w], "checkpoint:%s-r1@latest", m);
    add_s(REFS[w], "checkpoint:%s-r1@step100", m);
    add_s(REFS[w], "artifact:%s-arta", m);
  }
  const char *lab[] = {"source:shared-data@v3", "team-note", "artifact:handbook"};
  for (size_t f = 0; f < sizeof lab / sizeof lab[0]; f++)
    cJSON_AddItemToArray(REFS[NW], cJSON_CreateString(lab[f]));
  /* the lab is what it should be */
  ck_assert_int_ge(cJSON_GetArraySize(REFS[0]), 20);
  ck_assert_int_ge(cJSON_GetArraySize(REFS[NW]), 7);
}

/* Whether @p ref (run:...) is a run of workspace @p w. */
static int own_run(int w, const char *ref)
{
  cJSON *it;
  cJSON_ArrayForEach(it, REFS[w])
    if (!strncmp(it->valuestring, "run:", 4) && !strcmp(it->valuestring, ref))
      return 1;
  return 0;
}

/* Brute force: how many of workspace @p w's runs use source @p ref (the
 * lineage edges from it, listed for the whole tenant) or are in group
 * @p ref (its runs, likewise). -1: not a kind with a run count. */
static int brute_runs(int w, const char *ref)
{
  pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
  pmcp_buf b = PMCP_BUF_INIT;
  int n = 0;
  o.limit = 1000;
  o.parent = ref;
  if (!strncmp(ref, "source:", 7))
    o.kind = "lineage";
  else if (!strncmp(ref, "group:", 6))
    o.kind = "run";
  else
    return -1;
  char base[160];
  snprintf(base, sizeof base, "%s", ref);
  char *at = strchr(base, '@');
  if (at)
    *at = '\0';
  o.parent = base;
  ST_OK(RO, pmcp_store_list(RO, T, &o, &b));
  cJSON *l = st_json(&b);
  cJSON *it;
  cJSON_ArrayForEach(it, cJSON_GetObjectItem(l, "items")) {
    const char *r = cJSON_GetStringValue(cJSON_GetObjectItem(it, o.kind[0] == 'l' ? "to" : "ref"));
    if (o.kind[0] == 'l' && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(it, "from")), base))
      continue;
    if (r && own_run(w, r))
      n++;
  }
  cJSON_Delete(l);
  pmcp_buf_dispose(&b);
  return n;
}

/* ---- the server, scoped by a host hook -------------------------------------- */

static harness *H;
static const char *HOME; /* the workspace every call acts in */
static int next_id = 10;

static int hook(pmcp_call *call, const char *asked, pmcp_call_scope *out, char *msg,
                size_t size, void *ud)
{
  (void)call, (void)ud;
  if (asked && strcmp(asked, HOME) != 0 &&
      !(strncmp(asked, "workspace:", 10) == 0 && strcmp(asked + 10, HOME) == 0)) {
    snprintf(msg, size, "an API key acts only in its own workspace");
    return PMCP_EDENIED;
  }
  return pmcp_call_scope_set_workspace(out, HOME) || pmcp_call_scope_set_role(out, "viewer");
}

static int hook_list(pmcp_call *call, pmcp_buf *out, void *ud)
{
  (void)call, (void)ud;
  return pmcp__buf_printf(out, "{\"%s\":\"viewer\"}", HOME);
}

static void setup(void)
{
  RO = build(&T);
  classify();
  H = h_new_scoped(RO, hook, hook_list);
}

static void teardown(void)
{
  h_free(H);
  H = NULL;
  pmcp_store_free(RO);
  RO = NULL;
  for (int w = 0; w <= NW; w++)
    cJSON_Delete(REFS[w]), REFS[w] = NULL;
  st_cleanup();
}

static cJSON *rpc(const char *method, cJSON *params)
{
  cJSON *req = cJSON_CreateObject();
  cJSON_AddStringToObject(req, "jsonrpc", "2.0");
  cJSON_AddNumberToObject(req, "id", next_id++);
  cJSON_AddStringToObject(req, "method", method);
  cJSON_AddItemToObject(req, "params", params);
  char *msg = cJSON_PrintUnformatted(req);
  cJSON_Delete(req);
  cJSON *resp = h_call(H, "", msg);
  cJSON_free(msg);
  return resp;
}

/* ---- the values each argument is tried with --------------------------------- */


static cJSON *str_array(const char *a, const char *b)
{
  cJSON *x = cJSON_CreateArray();
  cJSON_AddItemToArray(x, cJSON_CreateString(a));
  if (b)
    cJSON_AddItemToArray(x, cJSON_CreateString(b));
  return x;
}

static char *SQL_TABLES[64];

/* Candidate values of argument @p name (schema @p sch) for a call in
 * workspace @p w: the scope's own names first, then the lab's, then the
 * other workspaces'. */
static cJSON *values_for(const char *tool, const char *name, const cJSON *sch, int w)
{
  cJSON *v = cJSON_CreateArray();
  const char *m = MARK[w], *o = MARK[(w + 1) % NW], *o2 = MARK[(w + 2) % NW];
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(sch, "type"));
  const cJSON *en = cJSON_GetObjectItem(sch, "enum");
  const cJSON *items = cJSON_GetObjectItem(sch, "items");
  if (en) {
    cJSON_Delete(v);
    return cJSON_Duplicate(en, 1);
  }
  if (!strcmp(name, "refs") || !strcmp(name, "ref")) {
    int whose[] = {w, NW, (w + 1) % NW, (w + 2) % NW};
    for (int k = 0; k < 4; k++) {
      cJSON *it;
      cJSON_ArrayForEach(it, REFS[whose[k]])
        cJSON_AddItemToArray(v, name[3] ? str_array(it->valuestring, NULL)
                                        : cJSON_CreateString(it->valuestring));
    }
    if (name[3]) {
      /* many at once, own and lab-wide */
      cJSON *all = cJSON_CreateArray();
      int whose2[] = {w, NW};
      for (int k = 0; k < 2; k++) {
        cJSON *it;
        cJSON_ArrayForEach(it, REFS[whose2[k]])
          if (cJSON_GetArraySize(all) < 20)
            cJSON_AddItemToArray(all, cJSON_CreateString(it->valuestring));
      }
      cJSON_AddItemToArray(v, all);
    }
  } else if (!strcmp(name, "project")) {
    add_s(v, "%s-p", m), add_s(v, "project:%s-p", m), add_s(v, "%s-p", o);
    add_s(v, "project:%s-p", o2);
  } else if (!strcmp(name, "experiment")) {
    add_s(v, "%s-e", m), add_s(v, "experiment:%s-e", m);
    add_s(v, "%s-e", o);
  } else if (!strcmp(name, "run") || !strcmp(name, "run_id")) {
    add_s(v, "%s-r1", m), add_s(v, "run:%s-r2", m), add_s(v, "%s-r1", o);
    add_s(v, "run:%s-r2", o2);
  } else if (!strcmp(name, "runs") || !strcmp(name, "run_ids")) {
    char a[64], b[64], c[64];
    snprintf(a, sizeof a, "%s-r1", m), snprintf(b, sizeof b, "%s-r2", m);
    snprintf(c, sizeof c, "%s-r1", o);
    cJSON_AddItemToArray(v, str_array(a, b));
    cJSON_AddItemToArray(v, str_array(c, NULL));
    cJSON_AddItemToArray(v, str_array(a, c));
  } else if (!strcmp(name, "on")) {
    add_s(v, "run:%s-r1", m), add_s(v, "project:%s-p", m);
    add_s(v, "experiment:%s-e", m), add_s(v, "run:%s-r1", o);
    cJSON_AddItemToArray(v, cJSON_CreateString("artifact:handbook"));
  } else if (!strcmp(name, "query")) {
    const char *q[] = {"secret", "shared", "handbook", "session", "loss", "metric", "data",
                       "lab", "agent", "question", "file", "trial", "env", "hf"};
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
      cJSON_AddItemToArray(v, cJSON_CreateString(q[i]));
    add_s(v, "%s", m), add_s(v, "%s secret one", o), add_s(v, "%s-r1", o2);
  } else if (!strcmp(name, "key") || !strcmp(name, "series") || !strcmp(name, "keys")) {
    char k[64], ko[64];
    snprintf(k, sizeof k, "%s-metric", m), snprintf(ko, sizeof ko, "%s-metric", o);
    if (type && !strcmp(type, "array")) {
      cJSON_AddItemToArray(v, str_array("loss", k));
      cJSON_AddItemToArray(v, str_array("reward", NULL));
      cJSON_AddItemToArray(v, str_array(ko, NULL));
    } else {
      cJSON_AddItemToArray(v, cJSON_CreateString("loss"));
      cJSON_AddItemToArray(v, cJSON_CreateString("reward"));
      cJSON_AddItemToArray(v, cJSON_CreateString(k));
      cJSON_AddItemToArray(v, cJSON_CreateString(ko));
    }
  } else if (!strcmp(name, "environment") || !strcmp(name, "environments")) {
    char e[64], eo[64];
    snprintf(e, sizeof e, "%s-env", m), snprintf(eo, sizeof eo, "%s-env", o);
    if (type && !strcmp(type, "array")) {
      cJSON_AddItemToArray(v, str_array(e, NULL));
      cJSON_AddItemToArray(v, str_array(eo, NULL));
    } else {
      cJSON_AddItemToArray(v, cJSON_CreateString(e));
      cJSON_AddItemToArray(v, cJSON_CreateString(eo));
    }
  } else if (!strcmp(name, "paper")) {
    cJSON_AddItemToArray(v, cJSON_CreateString("0704.0001"));
    cJSON_AddItemToArray(v, cJSON_CreateString("paper:0704.0001"));
  } else if (!strcmp(name, "sql")) {
    for (int i = 0; SQL_TABLES[i]; i++)
      add_s(v, "SELECT * FROM %s", SQL_TABLES[i]);
  } else if (!strcmp(name, "workspace")) {
    cJSON_AddItemToArray(v, cJSON_CreateString(WSNAME[w]));
    cJSON_AddItemToArray(v, cJSON_CreateString(WSNAME[(w + 1) % NW]));
  } else if (!strcmp(name, "provider")) {
    cJSON_AddItemToArray(v, cJSON_CreateString("hf"));
  } else if (!strcmp(name, "kind")) {
    const char *k[] = {"model", "dataset", "run", "source", "session", "artifact"};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
      cJSON_AddItemToArray(v, cJSON_CreateString(k[i]));
  } else if (!strcmp(name, "kinds") && items && cJSON_GetObjectItem(items, "enum")) {
    cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(items, "enum"))
      cJSON_AddItemToArray(v, str_array(it->valuestring, NULL));
  } else if (!strcmp(name, "view_options")) {
    const char *opts[] = {"{\"direction\":\"downstream\",\"depth\":8}",
                          "{\"direction\":\"upstream\",\"depth\":8}", "{\"field\":\"downstream\"}",
                          "{\"field\":\"upstream\"}", "{\"field\":\"sessions\"}",
                          "{\"field\":\"runs\"}", "{\"field\":\"groups\"}"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
      cJSON_AddItemToArray(v, cJSON_Parse(opts[i]));
  } else if (!strcmp(name, "paths")) {
    cJSON_AddItemToArray(v, str_array("config/lr", "params/name"));
  } else if (!strcmp(name, "group_by") || !strcmp(name, "across")) {
    const char *k[] = {"run", "experiment", "project", "group"};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
      cJSON_AddItemToArray(v, cJSON_CreateString(k[i]));
  } else if (type && !strcmp(type, "boolean")) {
    cJSON_AddItemToArray(v, cJSON_CreateTrue());
    cJSON_AddItemToArray(v, cJSON_CreateFalse());
  }
  (void)tool;
  return v;
}

/* ---- the checks ------------------------------------------------------------- */

/* Removes every occurrence of @p s from @p text. */
static void cut(char *text, const char *s)
{
  size_t n = strlen(s);
  char *p;
  if (!n)
    return;
  while ((p = strstr(text, s)) != NULL)
    memmove(p, p + n, strlen(p + n) + 1);
}

/* Takes the names the call passed out of @p text: each string argument
 * (its JSON-escaped and quoted forms, the id after "kind:" and before
 * "@"), a free-text query only where quoted. */
static void cut_args(char *text, const cJSON *v, const char *name)
{
  if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
    const cJSON *it;
    cJSON_ArrayForEach(it, v)
      cut_args(text, it, name ? name : it->string);
    return;
  }
  if (!cJSON_IsString(v))
    return;
  const char *s = v->valuestring;
  char q[300];
  int free_text = name && (!strcmp(name, "query") || !strcmp(name, "sql"));
  snprintf(q, sizeof q, "\\\"%s\\\"", s), cut(text, q);
  snprintf(q, sizeof q, "\"%s\"", s), cut(text, q);
  snprintf(q, sizeof q, "'%s'", s), cut(text, q);
  if (free_text)
    return;
  char id[200];
  snprintf(id, sizeof id, "%s", s);
  cut(text, id);
  const char *colon = strchr(id, ':');
  if (colon)
    cut(text, colon + 1);
  char *at = strchr(id, '@');
  if (at) {
    *at = '\0';
    cut(text, id);
    if (colon)
      cut(text, colon + 1);
  }
}

static int failures, calls, answered, _verbose;

static void report(const char *tool, const char *args, const char *why, const char *text)
{
  if (failures++ < 400)
    fprintf(stderr, "LEAK in %s: %s %s\n  %s: %.600s\n", HOME, tool, args, why, text);
}

/* The run counts the answer shows for sources and groups against the
 * brute-force count of the scope's own runs. */
static void check_counts(const char *tool, const char *args, const cJSON *o, int w)
{
  if (cJSON_IsArray(o) || cJSON_IsObject(o)) {
    const cJSON *ref = cJSON_GetObjectItem(o, "ref");
    const cJSON *runs = cJSON_GetObjectItem(o, "runs");
    if (cJSON_IsString(ref) && cJSON_IsNumber(runs)) {
      int want = brute_runs(w, ref->valuestring);
      if (want >= 0 && want != (int)runs->valuedouble) {
        char why[300];
        snprintf(why, sizeof why, "%s shows %d runs, the workspace has %d", ref->valuestring,
                 (int)runs->valuedouble, want);
        report(tool, args, why, "");
      }
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, o)
      check_counts(tool, args, it, w);
  }
}

/* Calls @p tool with @p args and checks the answer; returns the error
 * message when the call failed (caller frees), else NULL. */
static char *try_call(const char *tool, cJSON *args, int w)
{
  cJSON *params = cJSON_CreateObject();
  cJSON_AddStringToObject(params, "name", tool);
  cJSON_AddItemToObject(params, "arguments", cJSON_Duplicate(args, 1));
  char *a = cJSON_PrintUnformatted(args);
  cJSON *resp = rpc("tools/call", params);
  calls++;
  if (h_error_code(resp) == 0 && !h_is_error(resp))
    answered++;
  else if (_verbose > 1)
    fprintf(stderr, "ERR %s %.200s => %.200s\n", tool, a,
            h_error_code(resp) ? h_error_message(resp) : h_text0(resp));
  char *text = cJSON_PrintUnformatted(resp);
  cut_args(text, args, NULL);
  for (int o = 0; o < NW; o++) {
    if (o == w)
      continue;
    char ms[24];
    snprintf(ms, sizeof ms, "%lld", START_MS[o] / 1000);
    const char *hit = strstr(text, MARK[o]);
    if (hit)
      report(tool, a, MARK[o], hit - text > 200 ? hit - 200 : text);
    else if (strstr(text, START_ISO[o]) || strstr(text, ms))
      report(tool, a, "another workspace's session start", text);
  }
  /* counts, in the text of every content item */
  cJSON *content = cJSON_GetObjectItem(h_result(resp), "content");
  cJSON *c;
  cJSON_ArrayForEach(c, content) {
    cJSON *doc = cJSON_Parse(cJSON_GetStringValue(cJSON_GetObjectItem(c, "text")));
    if (doc)
      check_counts(tool, a, doc, w);
    cJSON_Delete(doc);
  }
  /* a store failure is no answer either (and would hide a leak) */
  if (strstr(text, "store_error") || strstr(text, "internal_error"))
    report(tool, a, "a store error", text);
  char *err = NULL;
  if (h_error_code(resp))
    err = strdup(h_error_message(resp));
  else if (h_is_error(resp))
    err = strdup(h_text0(resp));
  cJSON_free(text);
  cJSON_free(a);
  cJSON_Delete(resp);
  return err;
}

/* The argument an error names ("argument 'X' is not read", "missing
 * required argument 'X'") into @p name; 1 not read, 2 missing, 0 neither. */
static int named_arg(const char *err, char name[64])
{
  const char *p = err ? strstr(err, "argument '") : NULL;
  if (!p)
    return 0;
  p += 10;
  size_t n = strcspn(p, "'");
  if (n >= 64)
    return 0;
  memcpy(name, p, n);
  name[n] = '\0';
  return strstr(err, "is not read") ? 1 : strstr(err, "missing required") ? 2 : 0;
}

/* @p args made into a call the tool answers where it can: an argument a
 * refusal names as missing is added; then each other argument, with its
 * first value, is kept when the call still succeeds with it. */
static void fit(const char *tool, cJSON *args, cJSON *props, cJSON **vals, int w)
{
  char *err = try_call(tool, args, w), name[64];
  for (int round = 0; err && round < 8 && named_arg(err, name) == 2; round++) {
    int i = 0, added = 0;
    cJSON *p;
    cJSON_ArrayForEach(p, props) {
      if (!strcmp(p->string, name) && cJSON_GetArraySize(vals[i]) &&
          !cJSON_GetObjectItem(args, name)) {
        cJSON_AddItemToObject(args, name, cJSON_Duplicate(vals[i]->child, 1));
        added = 1;
      }
      i++;
    }
    free(err);
    err = added ? try_call(tool, args, w) : NULL;
  }
  free(err);
  int i = 0;
  cJSON *p;
  cJSON_ArrayForEach(p, props) {
    if (!cJSON_GetObjectItem(args, p->string) && cJSON_GetArraySize(vals[i])) {
      cJSON_AddItemToObject(args, p->string, cJSON_Duplicate(vals[i]->child, 1));
      char *e = try_call(tool, args, w);
      if (e)
        cJSON_DeleteItemFromObject(args, p->string);
      free(e);
    }
    i++;
  }
}

/* Every tool with every value of its enumerated arguments, each crossed
 * with every value of every other argument. */
static void sweep(int w)
{
  cJSON *resp = rpc("tools/list", cJSON_CreateObject());
  cJSON *tools = cJSON_GetObjectItem(h_result(resp), "tools");
  ck_assert_int_ge(cJSON_GetArraySize(tools), 25);
  cJSON *tool;
  cJSON_ArrayForEach(tool, tools) {
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(tool, "name"));
    cJSON *schema = cJSON_GetObjectItem(tool, "inputSchema");
    cJSON *props = cJSON_GetObjectItem(schema, "properties");
    cJSON *req = cJSON_GetObjectItem(schema, "required");
    int np = cJSON_GetArraySize(props);
    cJSON **vals = calloc((size_t)np + 1, sizeof *vals);
    cJSON *base = cJSON_CreateObject();
    cJSON *p;
    int i = 0;
    cJSON_ArrayForEach(p, props) {
      vals[i] = values_for(name, p->string, p, w);
      cJSON *r;
      cJSON_ArrayForEach(r, req)
        if (!strcmp(r->valuestring, p->string) && cJSON_GetArraySize(vals[i]))
          cJSON_AddItemToObject(base, p->string, cJSON_Duplicate(vals[i]->child, 1));
      i++;
    }
    int before = calls;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    free(try_call(name, base, w));
    /* for each value of the tool's mode (its first enumerated argument),
     * the arguments the mode reads, then each of them through all its
     * values, and every other argument one at a time */
    cJSON *mode = NULL;
    int mi = -1;
    i = 0;
    cJSON_ArrayForEach(p, props) {
      if (cJSON_GetObjectItem(p, "enum") &&
          (mi < 0 || !strcmp(p->string, "mode") || !strcmp(p->string, "view")))
        mode = p, mi = i;
      i++;
    }
    cJSON *modes = mode ? vals[mi] : NULL;
    cJSON *mv = modes ? modes->child : NULL;
    do {
      cJSON *args = cJSON_Duplicate(base, 1);
      if (mv) {
        cJSON_DeleteItemFromObject(args, mode->string);
        cJSON_AddItemToObject(args, mode->string, cJSON_Duplicate(mv, 1));
      }
      fit(name, args, props, vals, w);
      int j = 0;
      cJSON *q;
      cJSON_ArrayForEach(q, props) {
        if (j != mi) {
          cJSON *y;
          cJSON_ArrayForEach(y, vals[j]) {
            cJSON *args2 = cJSON_Duplicate(args, 1);
            cJSON_DeleteItemFromObject(args2, q->string);
            cJSON_AddItemToObject(args2, q->string, cJSON_Duplicate(y, 1));
            free(try_call(name, args2, w));
            cJSON_Delete(args2);
          }
        }
        j++;
      }
      cJSON_Delete(args);
      mv = mv ? mv->next : NULL;
    } while (mv);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (_verbose)
      fprintf(stderr, "  %s: %d calls, %.2f s\n", name, calls - before,
              (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    for (i = 0; i < np; i++)
      cJSON_Delete(vals[i]);
    free(vals);
    cJSON_Delete(base);
  }
  cJSON_Delete(resp);
}

static void list_tables(void)
{
  cJSON *params = cJSON_Parse("{\"name\":\"query_sql\",\"arguments\":{\"token_budget\":8000}}");
  cJSON *resp = rpc("tools/call", params);
  cJSON *o = cJSON_Parse(h_text0(resp));
  cJSON *tb;
  int n = 0;
  cJSON_ArrayForEach(tb, cJSON_GetObjectItem(o, "tables"))
    if (n < 63)
      SQL_TABLES[n++] = strdup(cJSON_GetStringValue(cJSON_GetObjectItem(tb, "name")));
  SQL_TABLES[n] = NULL;
  ck_assert_int_ge(n, 20);
  cJSON_Delete(o);
  cJSON_Delete(resp);
}

/* The run cards (resources/read probe://run/{id}) of every run. */
static void read_cards(int w)
{
  for (int k = 0; k <= NW; k++) {
    cJSON *it;
    cJSON_ArrayForEach(it, REFS[k]) {
      if (strncmp(it->valuestring, "run:", 4))
        continue;
      char uri[200];
      snprintf(uri, sizeof uri, "probe://run/%s", it->valuestring + 4);
      cJSON *params = cJSON_CreateObject();
      cJSON_AddStringToObject(params, "uri", uri);
      cJSON *resp = rpc("resources/read", params);
      calls++;
      char *text = cJSON_PrintUnformatted(resp);
      cut(text, it->valuestring + 4);
      for (int o = 0; o < NW; o++)
        if (o != w && strstr(text, MARK[o]))
          report("resources/read", uri, MARK[o], strstr(text, MARK[o]));
      if (k == w && !h_error_code(resp))
        answered++;
      cJSON_free(text);
      cJSON_Delete(resp);
    }
  }
}

static void run_scope(int w)
{
  HOME = WSNAME[w];
  failures = calls = answered = 0;
  _verbose = getenv("PMCP_TEST_VERBOSE") ? atoi(getenv("PMCP_TEST_VERBOSE")) : 0;
  list_tables();
  sweep(w);
  read_cards(w);
  fprintf(stderr, "%s: %d calls, %d answered without error, %d leaks\n", HOME, calls, answered,
          failures);
  for (int i = 0; SQL_TABLES[i]; i++)
    free(SQL_TABLES[i]), SQL_TABLES[i] = NULL;
  ck_assert_int_gt(answered, calls / 10);
  ck_assert_msg(failures == 0, "%d answers in %s show another workspace's rows", failures, HOME);
}

START_TEST(nothing_of_another_workspace)
{
  run_scope(_i);
}
END_TEST

int main(void)
{
  Suite *su = suite_create("workspace-leak");
  TCase *tc = tcase_create("every-tool");
  tcase_set_timeout(tc, 900);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, nothing_of_another_workspace, 0, NW);
  suite_add_tcase(su, tc);
  return st_run_suite(su);
}
