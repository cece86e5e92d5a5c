/* SPDX-License-Identifier: MIT */
/* browse and search over a real SQLite store (the other research suites use
 * an in-memory fake): the live counts the store keeps for the tree follow
 * every write and survive the schema migration (v9) that introduced them; the
 * exact channel traces names, ids, paths, hashes and URIs; list pages read
 * from the store lose and repeat nothing while the budget changes. */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "probemcp/probemcp.h"
#include "probemcp/research.h"
#include "probemcp/tokens.h"
#include "store-test-util.h"
#include "tool-call-util.h"

static pmcp_store *W;  /* the writer */
static pmcp_tenant T;

static void mkexp(const char *id, const char *project)
{
  pmcp_entity_spec e = PMCP_ENTITY_SPEC_INIT;
  e.id = id;
  e.name = id;
  e.parent = project;
  ST_OK(W, pmcp_store_create(W, T, "experiment", &e, NULL));
}

static void mkrun(const char *id, const char *experiment, int64_t created)
{
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = id;
  r.experiment = experiment;
  r.status = "finished";
  r.created_ms = created;
  ST_OK(W, pmcp_store_run_create(W, T, &r, NULL));
}

/* project:p (experiments a: 5 runs, b: 3 runs), project:q (empty), and
 * 2 unfiled runs. */
static void fill(void)
{
  W = st_open_new(&T);
  pmcp_entity_spec p = PMCP_ENTITY_SPEC_INIT;
  p.id = "p";
  p.name = "P";
  ST_OK(W, pmcp_store_create(W, T, "project", &p, NULL));
  p.id = "q";
  p.name = "Q";
  ST_OK(W, pmcp_store_create(W, T, "project", &p, NULL));
  mkexp("a", "project:p");
  mkexp("b", "project:p");
  char id[16];
  for (int i = 0; i < 5; i++) {
    snprintf(id, sizeof id, "a%d", i);
    mkrun(id, "experiment:a", 1000 + i);
  }
  for (int i = 0; i < 3; i++) {
    snprintf(id, sizeof id, "b%d", i);
    mkrun(id, "experiment:b", 2000 + i);
  }
  mkrun("u0", NULL, 3000);
  mkrun("u1", NULL, 3001);
}

static void setup(void)
{
  fill();
  tc_serve_research(st_path);
}

static void teardown(void)
{
  tc_server_free();
  pmcp_store_free(W);
  W = NULL;
  st_cleanup();
}

static const cJSON *find_ref(const cJSON *arr, const char *ref)
{
  const cJSON *it;
  cJSON_ArrayForEach(it, arr)
  {
    const cJSON *r = cJSON_GetObjectItem(it, "ref");
    if (cJSON_IsString(r) && strcmp(r->valuestring, ref) == 0)
      return it;
  }
  return NULL;
}

static int num(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItem(o, k);
  ck_assert_msg(cJSON_IsNumber(v), "no number %s", k);
  return v->valueint;
}

/* The counts browse's tree shows for project:p, its experiment a, and the
 * unfiled runs. */
static void tree_counts(int *p_runs, int *p_exps, int *a_runs, int *unfiled)
{
  cJSON *o = tc_ok("browse", "{}");
  const cJSON *p = find_ref(cJSON_GetObjectItem(o, "projects"), "project:p");
  ck_assert_ptr_nonnull(p);
  *p_runs = num(p, "n_runs");
  *p_exps = num(p, "n_experiments");
  const cJSON *a = find_ref(cJSON_GetObjectItem(p, "experiments"), "experiment:a");
  *a_runs = a ? num(a, "n_runs") : -1;
  *unfiled = num(o, "unfiled_total");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "unfiled")), *unfiled);
  cJSON_Delete(o);
}

START_TEST(tree_counts_follow_writes)
{
  int pr, pe, ar, un;
  tree_counts(&pr, &pe, &ar, &un);
  ck_assert_int_eq(pr, 8);
  ck_assert_int_eq(pe, 2);
  ck_assert_int_eq(ar, 5);
  ck_assert_int_eq(un, 2);
  ST_OK(W, pmcp_store_set_deleted(W, T, "run:a1", 1));
  ST_OK(W, pmcp_store_set_deleted(W, T, "run:u0", 1));
  mkrun("a9", "experiment:a", 5000);
  tree_counts(&pr, &pe, &ar, &un);
  ck_assert_int_eq(pr, 8); /* -1 deleted, +1 new */
  ck_assert_int_eq(ar, 5);
  ck_assert_int_eq(un, 1);
  ST_OK(W, pmcp_store_set_deleted(W, T, "experiment:b", 1));
  tree_counts(&pr, &pe, &ar, &un);
  ck_assert_int_eq(pe, 1);
  ST_OK(W, pmcp_store_set_deleted(W, T, "experiment:b", 0));
  ST_OK(W, pmcp_store_set_deleted(W, T, "run:a1", 0));
  ST_OK(W, pmcp_store_set_deleted(W, T, "run:a1", 0)); /* twice: no double count */
  tree_counts(&pr, &pe, &ar, &un);
  ck_assert_int_eq(pr, 9);
  ck_assert_int_eq(pe, 2);
  ck_assert_int_eq(ar, 6);
  /* the experiment view's own list agrees with its count */
  cJSON *o = tc_ok("browse", "{\"ref\":\"experiment:a\",\"limit\":50}");
  ck_assert_int_eq(num(o, "runs_total"), 6);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "runs")), 6);
  cJSON_Delete(o);
}
END_TEST

static void sql(const char *path, const char *text)
{
  sqlite3 *db;
  ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
  char *err = NULL;
  int rc = sqlite3_exec(db, text, NULL, NULL, &err);
  ck_assert_msg(rc == SQLITE_OK, "%s: %s", text, err ? err : "");
  sqlite3_close(db);
}

/* A store written before schema 9 (no counts, no triggers) gets them from
 * its rows when a writer opens it; opening again changes nothing. */
START_TEST(migration_fills_counts)
{
  ST_SQLITE_ONLY(); /* rewinds a SQLite schema; PostgreSQL counts with subqueries */
  fill();
  ST_OK(W, pmcp_store_set_deleted(W, T, "run:b0", 1));
  pmcp_store_free(W);
  W = NULL;
  sql(st_path,
      "DROP TRIGGER runs_live_ai; DROP TRIGGER runs_live_ad; DROP TRIGGER runs_live_au;"
      "DROP TRIGGER experiments_live_ai; DROP TRIGGER experiments_live_ad;"
      "DROP TRIGGER experiments_live_au;"
      "ALTER TABLE projects DROP COLUMN n_runs; ALTER TABLE projects DROP COLUMN n_experiments;"
      "ALTER TABLE experiments DROP COLUMN n_runs; DROP INDEX notes_recent;"
      "UPDATE meta SET value='8' WHERE key='schema_version'");
  /* read-only never migrates */
  pmcp_store *s = NULL;
  ck_assert_int_eq(pmcp_store_open(&s, st_path, PMCP_STORE_READONLY), PMCP_ESTORE);
  pmcp_store_free(s);
  ST_OK(W, pmcp_store_open(&W, st_path, 0));
  pmcp_store_free(W);
  /* and again, from a store that has the columns already */
  sql(st_path, "UPDATE meta SET value='8' WHERE key='schema_version'");
  ST_OK(W, pmcp_store_open(&W, st_path, 0));
  tc_serve_research(st_path);
  int pr, pe, ar, un;
  tree_counts(&pr, &pe, &ar, &un);
  ck_assert_int_eq(pr, 7);
  ck_assert_int_eq(pe, 2);
  ck_assert_int_eq(ar, 5);
  ck_assert_int_eq(un, 2);
  mkrun("a7", "experiment:a", 9000); /* the triggers are back */
  tree_counts(&pr, &pe, &ar, &un);
  ck_assert_int_eq(pr, 8);
  ck_assert_int_eq(ar, 6);
}
END_TEST

static cJSON *exact_hits(const char *query)
{
  cJSON *a = cJSON_CreateObject();
  cJSON_AddStringToObject(a, "query", query);
  cJSON_AddNumberToObject(a, "limit", 20);
  char *args = cJSON_PrintUnformatted(a);
  cJSON_Delete(a);
  cJSON *o = tc_ok("search", args);
  free(args);
  cJSON *hits = cJSON_CreateArray();
  const cJSON *it;
  cJSON_ArrayForEach(it, cJSON_GetObjectItem(o, "results"))
  {
    if (strcmp(cJSON_GetObjectItem(it, "channel")->valuestring, "exact") == 0)
      cJSON_AddItemToArray(hits, cJSON_Duplicate(it, 1));
  }
  cJSON_Delete(o);
  return hits;
}

static void expect_exact(const char *query, const char *ref, const char *match)
{
  cJSON *hits = exact_hits(query);
  const cJSON *h = find_ref(hits, ref);
  char *t = cJSON_PrintUnformatted(hits);
  ck_assert_msg(h != NULL, "%s: no exact hit %s in %s", query, ref, t);
  ck_assert_msg(strcmp(cJSON_GetObjectItem(h, "match")->valuestring, match) == 0,
                "%s: %s matched on %s", query, ref, t);
  /* a source's record came from outside the lab */
  ck_assert_str_eq(cJSON_GetObjectItem(h, "provenance")->valuestring,
                   strncmp(ref, "source:", 7) == 0 ? "outside" : "person");
  cJSON_free(t);
  cJSON_Delete(hits);
}

START_TEST(exact_channel_traces_paths_hashes_uris)
{
  static const char body[] = "lr: 0.1\n";
  pmcp_artifact_spec as = PMCP_ARTIFACT_SPEC_INIT;
  as.name = "train-config";
  as.on = "run:a0";
  as.path = "configs/train.yaml";
  as.content = body;
  as.size = strlen(body);
  pmcp_buf aid = PMCP_BUF_INIT;
  ST_OK(W, pmcp_store_artifact_add(W, T, &as, &aid, NULL));
  char aref[128];
  snprintf(aref, sizeof aref, "artifact:%s", aid.ptr);
  pmcp_buf_dispose(&aid);
  as.content = NULL;
  as.size = 0;
  as.uri = "s3://lab/ckpt/model.bin";
  as.path = NULL;
  as.name = "weights";
  pmcp_buf wid = PMCP_BUF_INIT;
  ST_OK(W, pmcp_store_artifact_add(W, T, &as, &wid, NULL));
  char wref[128];
  snprintf(wref, sizeof wref, "artifact:%s", wid.ptr);
  pmcp_buf_dispose(&wid);
  /* the artifact's hash, as the store computed it */
  pmcp_buf content = PMCP_BUF_INIT, meta = PMCP_BUF_INIT;
  ST_OK(W, pmcp_store_artifact_content(W, T, aref, 0, &content, &meta));
  cJSON *m = st_json(&meta);
  char sha[80];
  snprintf(sha, sizeof sha, "%s", st_str(m, "sha256"));
  cJSON_Delete(m);
  pmcp_buf_dispose(&content);
  pmcp_buf_dispose(&meta);
  ck_assert_uint_eq(strlen(sha), 64);

  expect_exact(sha, aref, "sha256");
  expect_exact("configs/train.yaml", aref, "path");
  expect_exact("train-config", aref, "name");
  expect_exact(aref + strlen("artifact:"), aref, "id");
  expect_exact("s3://lab/ckpt/model.bin", wref, "uri");
}
END_TEST

START_TEST(exact_channel_datasets_and_sources)
{
  static const char *const puts[][2] = {
    {"dataset", "{\"id\":\"ds\",\"name\":\"corpus\",\"uri\":\"s3://lab/corpus\"}"},
    {"dataset-version", "{\"dataset\":\"dataset:ds\",\"version\":\"2\","
                        "\"uri\":\"s3://lab/corpus/v2\"}"},
    {"source", "{\"id\":\"wiki\",\"provider\":\"hf\",\"kind\":\"dataset\","
               "\"uri\":\"hf://datasets/wikitext\"}"},
    {"lineage", "{\"from\":\"source:wiki\",\"to\":\"dataset:ds\"}"},
  };
  for (size_t i = 0; i < sizeof puts / sizeof puts[0]; i++)
    ST_OK(W, pmcp_store_put(W, T, puts[i][0], puts[i][1], strlen(puts[i][1]), NULL));
  expect_exact("s3://lab/corpus/v2", "dataset:ds", "uri");
  expect_exact("s3://lab/corpus", "dataset:ds", "uri");
  expect_exact("corpus", "dataset:ds", "name");
  expect_exact("hf://datasets/wikitext", "source:wiki", "uri");
  expect_exact("a3", "run:a3", "name"); /* a run's name defaults to its id */
  /* a traced dataset's lineage reaches its source */
  cJSON *o = tc_ok("entity", "{\"refs\":[\"dataset:ds\"],\"view\":\"lineage\"}");
  char *t = cJSON_PrintUnformatted(o);
  ck_assert_msg(strstr(t, "source:wiki") != NULL, "lineage: %s", t);
  cJSON_free(t);
  cJSON_Delete(o);
  /* nothing equals a fragment */
  cJSON *hits = exact_hits("lab/corp");
  ck_assert_int_eq(cJSON_GetArraySize(hits), 0);
  cJSON_Delete(hits);
}
END_TEST

/* Walks every page of one listing with the budget changing between pages;
 * returns the refs in order. */
static cJSON *walk(const char *tool, const char *args_head, const char *list, int *pages)
{
  cJSON *refs = cJSON_CreateArray();
  char *cursor = NULL;
  static const int budgets[] = {512, 900, 600, 2000, 700};
  *pages = 0;
  for (int guard = 0; guard < 200; guard++) {
    char args[1024];
    char cur[700] = "";
    if (cursor)
      snprintf(cur, sizeof cur, ",\"cursor\":\"%s\"", cursor);
    snprintf(args, sizeof args, "%s,\"token_budget\":%d%s}", args_head, budgets[guard % 5],
             cur);
    free(cursor);
    cursor = NULL;
    cJSON *o = tc_ok(tool, args);
    (*pages)++;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(o, list))
      cJSON_AddItemToArray(refs, cJSON_CreateString(cJSON_GetObjectItem(it, "ref")->valuestring));
    const cJSON *nc = cJSON_GetObjectItem(o, "next_cursor");
    if (cJSON_IsString(nc))
      cursor = strdup(nc->valuestring);
    cJSON_Delete(o);
    if (!cursor)
      break;
  }
  ck_assert_ptr_null(cursor);
  return refs;
}

START_TEST(pages_lose_and_repeat_nothing)
{
  /* 40 notes with long bodies on the runs, newest last written */
  char body[1200], on[32];
  for (int i = 0; i < 40; i++) {
    memset(body, 'x', sizeof body);
    snprintf(body, 40, "note %02d about lr ", i);
    body[strlen(body)] = ' ';
    body[sizeof body - 1] = '\0';
    snprintf(on, sizeof on, "run:a%d", i % 5);
    pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
    n.on = on;
    n.body = body;
    n.created_ms = 1700000000000LL + i;
    ST_OK(W, pmcp_store_note(W, T, &n, NULL, NULL));
  }
  int pages = 0;
  cJSON *refs = walk("browse", "{\"mode\":\"notes\",\"limit\":7",
                     "notes", &pages);
  ck_assert_int_eq(cJSON_GetArraySize(refs), 40);
  ck_assert_int_ge(pages, 6);
  for (int i = 0; i < 40; i++)
    for (int j = i + 1; j < 40; j++)
      ck_assert_str_ne(cJSON_GetArrayItem(refs, i)->valuestring,
                       cJSON_GetArrayItem(refs, j)->valuestring);
  cJSON_Delete(refs);
  /* the runs of a project, newest first, across pages */
  refs = walk("browse", "{\"mode\":\"runs\",\"project\":\"p\",\"limit\":3",
              "runs", &pages);
  ck_assert_int_eq(cJSON_GetArraySize(refs), 8);
  ck_assert_str_eq(cJSON_GetArrayItem(refs, 0)->valuestring, "run:b2");
  ck_assert_str_eq(cJSON_GetArrayItem(refs, 7)->valuestring, "run:a0");
  cJSON_Delete(refs);
  /* keyword search: one result per note, in rank order, across pages;
   * without kinds the store ranks alone (one lab), with kinds it joins */
  refs = walk("search", "{\"query\":\"note lr\",\"limit\":9", "results", &pages);
  ck_assert_int_eq(cJSON_GetArraySize(refs), 40);
  for (int i = 0; i < 40; i++)
    for (int j = i + 1; j < 40; j++)
      ck_assert_str_ne(cJSON_GetArrayItem(refs, i)->valuestring,
                       cJSON_GetArrayItem(refs, j)->valuestring);
  cJSON *all = refs;
  refs = walk("search", "{\"query\":\"note lr\",\"limit\":9,\"kinds\":[\"note\"]", "results", &pages);
  ck_assert_int_eq(cJSON_GetArraySize(refs), 40);
  for (int i = 0; i < 40; i++)
    for (int j = i + 1; j < 40; j++)
      ck_assert_str_ne(cJSON_GetArrayItem(refs, i)->valuestring,
                       cJSON_GetArrayItem(refs, j)->valuestring);
  /* both paths rank the same way */
  for (int i = 0; i < 40; i++)
    ck_assert_str_eq(cJSON_GetArrayItem(refs, i)->valuestring,
                     cJSON_GetArrayItem(all, i)->valuestring);
  cJSON_Delete(all);
  cJSON_Delete(refs);
}
END_TEST

/* The issue asks how many tokens tools/list costs a client: measured on
 * the response as sent (o200k_base), printed, and held under a ceiling so
 * a wordier description is a deliberate change. */
#define TOOLS_LIST_CEILING 4500
START_TEST(tools_list_tokens)
{
  cJSON *r = tc_rpc("tools/list", "{}");
  const char *raw = tc_last();
  size_t total = 0;
  ck_assert_int_eq(pmcp_tokens_count(raw, strlen(raw), &total), 0);
  const cJSON *tools = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "tools");
  ck_assert_int_eq(cJSON_GetArraySize(tools), 6);
  char line[512];
  size_t off = (size_t)snprintf(line, sizeof line, "tools/list: %zu tokens (", total);
  size_t sum = 0;
  const cJSON *t;
  cJSON_ArrayForEach(t, tools)
  {
    char *one = cJSON_PrintUnformatted(t);
    size_t n = 0;
    ck_assert_int_eq(pmcp_tokens_count(one, strlen(one), &n), 0);
    cJSON_free(one);
    sum += n;
    off += (size_t)snprintf(line + off, sizeof line - off, "%s%s %zu",
                            t == tools->child ? "" : ", ",
                            cJSON_GetObjectItem(t, "name")->valuestring, n);
  }
  snprintf(line + off, sizeof line - off, ")\n");
  fputs(line, stderr);
  ck_assert_uint_ge(total, sum);
  ck_assert_msg(total <= TOOLS_LIST_CEILING, "tools/list costs %zu tokens (ceiling %d)", total,
                TOOLS_LIST_CEILING);
  cJSON_Delete(r);
}
END_TEST

/* content over the store's own bytes: 2 MiB is read in 40-line sections
 * with the SHA-256 the store computed; one byte more, a reference and a
 * binary file are refused, naming the download command. */
static char *add_blob(const char *name, size_t size, int binary)
{
  char *b = malloc(size + 1);
  ck_assert_ptr_nonnull(b);
  for (size_t i = 0; i < size; i++)
    b[i] = (i % 64 == 63) ? '\n' : (char)('a' + i % 26);
  if (binary)
    b[size / 2] = '\0';
  pmcp_artifact_spec as = PMCP_ARTIFACT_SPEC_INIT;
  as.name = name;
  as.on = "run:a0";
  as.path = name;
  as.content = b;
  as.size = size;
  as.media_type = "text/plain";
  pmcp_buf id = PMCP_BUF_INIT;
  ST_OK(W, pmcp_store_artifact_add(W, T, &as, &id, NULL));
  free(b);
  char *ref = malloc(strlen(id.ptr) + 16);
  ck_assert_ptr_nonnull(ref);
  sprintf(ref, "artifact:%s", id.ptr);
  pmcp_buf_dispose(&id);
  return ref;
}

static void content_refused(const char *ref, const char *why)
{
  char args[300];
  snprintf(args, sizeof args, "{\"refs\":[\"%s\"],\"view\":\"content\"}", ref);
  int e = 0;
  cJSON *o = tc_call("entity", args, &e);
  char *t = cJSON_PrintUnformatted(o);
  ck_assert_msg(e, "%s was read: %.300s", ref, t);
  ck_assert_msg(strstr(t, why) != NULL, "%s: %s lacks '%s'", ref, t, why);
  char door[200];
  snprintf(door, sizeof door, "probe artifact download %s", ref);
  ck_assert_msg(strstr(t, door) != NULL, "%s: %s does not name '%s'", ref, t, door);
  cJSON_free(t);
  cJSON_Delete(o);
}

START_TEST(content_limits_on_the_store)
{
  char *at = add_blob("at-limit.txt", 2u * 1024u * 1024u, 0);
  char *over = add_blob("over-limit.txt", 2u * 1024u * 1024u + 1u, 0);
  char *bin = add_blob("weights.bin", 4096, 1);
  pmcp_artifact_spec as = PMCP_ARTIFACT_SPEC_INIT;
  as.name = "remote";
  as.on = "run:a0";
  as.uri = "s3://lab/remote.txt";
  as.size = 10;
  pmcp_buf rid = PMCP_BUF_INIT;
  ST_OK(W, pmcp_store_artifact_add(W, T, &as, &rid, NULL));
  char remote[160];
  snprintf(remote, sizeof remote, "artifact:%s", rid.ptr);
  pmcp_buf_dispose(&rid);

  char args[400];
  snprintf(args, sizeof args, "{\"refs\":[\"%s\"],\"view\":\"content\","
           "\"view_options\":{\"start_line\":32761}}", at);
  cJSON *o = tc_ok("entity", args);
  ck_assert_int_eq(cJSON_GetObjectItem(o, "total_lines")->valueint, 32768);
  ck_assert_int_eq(cJSON_GetObjectItem(o, "start_line")->valueint, 32761);
  ck_assert_int_eq(cJSON_GetObjectItem(o, "end_line")->valueint, 32768);
  pmcp_buf content = PMCP_BUF_INIT, meta = PMCP_BUF_INIT;
  ST_OK(W, pmcp_store_artifact_content(W, T, at, 0, &content, &meta));
  cJSON *m = st_json(&meta);
  ck_assert_str_eq(cJSON_GetObjectItem(o, "sha256")->valuestring, st_str(m, "sha256"));
  cJSON_Delete(m);
  pmcp_buf_dispose(&content);
  pmcp_buf_dispose(&meta);
  cJSON_Delete(o);
  /* a page is whole 40-line sections, more of them at a bigger budget */
  snprintf(args, sizeof args, "{\"refs\":[\"%s\"],\"view\":\"content\"}", at);
  o = tc_ok("entity", args);
  int small = cJSON_GetObjectItem(o, "end_line")->valueint;
  ck_assert_int_eq(small % 40, 0);
  ck_assert_int_ge(small, 40);
  cJSON_Delete(o);
  snprintf(args, sizeof args, "{\"refs\":[\"%s\"],\"view\":\"content\",\"token_budget\":8000}",
           at);
  o = tc_ok("entity", args);
  ck_assert_int_eq(cJSON_GetObjectItem(o, "end_line")->valueint % 40, 0);
  ck_assert_int_gt(cJSON_GetObjectItem(o, "end_line")->valueint, small);
  cJSON_Delete(o);

  content_refused(over, "2 MiB");
  content_refused(bin, "binary");
  content_refused(remote, "reference");
  free(at);
  free(over);
  free(bin);
}
END_TEST

/* The run card template and the read-only prompts, as a client lists them. */
START_TEST(resources_and_prompts_listed)
{
  cJSON *r = tc_rpc("resources/templates/list", "{}");
  char *t = cJSON_PrintUnformatted(r);
  ck_assert_msg(strstr(t, "probe://run/{id}") != NULL, "%s", t);
  cJSON_free(t);
  cJSON_Delete(r);
  r = tc_rpc("resources/read", "{\"uri\":\"probe://run/a2\"}");
  t = cJSON_PrintUnformatted(r);
  ck_assert_msg(strstr(t, "run:a2") && strstr(t, "available_views"), "%s", t);
  cJSON_free(t);
  cJSON_Delete(r);
  r = tc_rpc("resources/read", "{\"uri\":\"probe://run/nope\"}");
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(r, "error"));
  cJSON_Delete(r);
  r = tc_rpc("prompts/list", "{}");
  const cJSON *ps = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "prompts");
  static const char *const want[] = {"compare_runs", "summarize_experiment", "reproduce_run",
                                     "check_literature"};
  ck_assert_int_eq(cJSON_GetArraySize(ps), 4);
  for (int i = 0; i < 4; i++)
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(ps, i), "name")->valuestring,
                     want[i]);
  cJSON_Delete(r);
  /* each guides through the read-only tools and never toward a write */
  static const char *const gets[] = {
    "{\"name\":\"compare_runs\",\"arguments\":{\"runs\":\"run:a0,run:a1\"}}",
    "{\"name\":\"summarize_experiment\",\"arguments\":{\"experiment\":\"experiment:a\"}}",
    "{\"name\":\"reproduce_run\",\"arguments\":{\"run\":\"run:a0\"}}",
    "{\"name\":\"check_literature\",\"arguments\":{\"claim\":\"warmup helps\"}}"};
  for (int i = 0; i < 4; i++) {
    r = tc_rpc("prompts/get", gets[i]);
    t = cJSON_PrintUnformatted(cJSON_GetObjectItem(r, "result"));
    ck_assert_msg(t && (strstr(t, "entity") || strstr(t, "search") || strstr(t, "find_papers")),
                  "%s: %s", gets[i], t ? t : "(no result)");
    ck_assert_msg(!strstr(t, "probe run create") && !strstr(t, "pmcp_store_"), "%s", t);
    cJSON_free(t);
    cJSON_Delete(r);
  }
}
END_TEST

/* Pages of the lab's runs and of a keyword search, walked with random
 * limits and budgets (fixed seeds: a failure is reproducible): every item
 * once, in the order one large page gives. */
static cJSON *walk_random(const char *tool, const char *head, const char *list, unsigned seed,
                          int max_limit)
{
  cJSON *refs = cJSON_CreateArray();
  char *cursor = NULL;
  srand(seed);
  int limit = 1 + rand() % max_limit;
  for (int guard = 0; guard < 400; guard++) {
    char args[1200];
    int budget = 512 + rand() % 2500;
    if (cursor)
      snprintf(args, sizeof args, "%s,\"limit\":%d,\"token_budget\":%d,\"cursor\":\"%s\"}", head,
               limit, budget, cursor);
    else
      snprintf(args, sizeof args, "%s,\"limit\":%d,\"token_budget\":%d}", head, limit, budget);
    free(cursor);
    cursor = NULL;
    cJSON *o = tc_ok(tool, args);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(o, list))
      cJSON_AddItemToArray(refs, cJSON_CreateString(cJSON_GetObjectItem(it, "ref")->valuestring));
    const cJSON *nc = cJSON_GetObjectItem(o, "next_cursor");
    if (cJSON_IsString(nc))
      cursor = strdup(nc->valuestring);
    cJSON_Delete(o);
    if (!cursor)
      break;
  }
  ck_assert_ptr_null(cursor);
  return refs;
}

START_TEST(pages_random_limits_and_budgets)
{
  char id[16], name[64];
  for (int i = 0; i < 60; i++) {
    snprintf(id, sizeof id, "s%02d", i);
    snprintf(name, sizeof name, "sweep %d warmup", i);
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = id;
    r.name = name;
    r.experiment = i % 3 ? "experiment:a" : NULL;
    r.created_ms = 100000 + (i % 7) * 10; /* ties in time: the id orders them */
    ST_OK(W, pmcp_store_run_create(W, T, &r, NULL));
  }
  cJSON *one = tc_ok("browse", "{\"mode\":\"runs\",\"limit\":200,\"token_budget\":8000}");
  const cJSON *all = cJSON_GetObjectItem(one, "runs");
  int n = cJSON_GetArraySize(all);
  ck_assert_int_eq(n, 70);
  for (unsigned seed = 1; seed <= 6; seed++) {
    cJSON *refs = walk_random("browse", "{\"mode\":\"runs\"", "runs", seed, 25);
    ck_assert_int_eq(cJSON_GetArraySize(refs), n);
    for (int i = 0; i < n; i++)
      ck_assert_str_eq(cJSON_GetArrayItem(refs, i)->valuestring,
                       cJSON_GetObjectItem(cJSON_GetArrayItem(all, i), "ref")->valuestring);
    cJSON_Delete(refs);
    refs = walk_random("search", "{\"query\":\"sweep warmup\"", "results", seed, 12);
    int got = cJSON_GetArraySize(refs);
    ck_assert_int_eq(got, 60);
    for (int i = 0; i < got; i++)
      for (int j = i + 1; j < got; j++)
        ck_assert_str_ne(cJSON_GetArrayItem(refs, i)->valuestring,
                         cJSON_GetArrayItem(refs, j)->valuestring);
    cJSON_Delete(refs);
  }
  cJSON_Delete(one);
}
END_TEST

/* The Overview page's history on the store: versions newest first with who
 * and through what; view_options.version reads one version's Markdown; a
 * version that does not exist is named with the ones that do. */
START_TEST(summary_history_versions)
{
  static const char *const bodies[] = {"# Plan\nfirst draft", "# Plan\nsecond, with results"};
  static const char *const vias[] = {"cli", "agent:claude"};
  for (int i = 0; i < 2; i++) {
    pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
    n.on = "experiment:a";
    n.kind = "overview";
    n.body = bodies[i];
    n.summary = i ? "It works." : "Not yet.";
    n.author = i ? "agent" : "ana";
    n.via = vias[i];
    n.created_ms = 1700000000000LL + i;
    ST_OK(W, pmcp_store_note(W, T, &n, NULL, NULL));
  }
  cJSON *o = tc_ok("entity", "{\"refs\":[\"experiment:a\"],\"view\":\"summary_history\"}");
  const cJSON *vs = cJSON_GetObjectItem(o, "versions");
  ck_assert_int_eq(cJSON_GetArraySize(vs), 2);
  ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(vs, 0), "version")->valueint, 2);
  ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(vs, 0), "via")->valuestring,
                   "agent:claude");
  ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(vs, 1), "author")->valuestring, "ana");
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"experiment:a\"],\"view\":\"summary_history\","
                      "\"view_options\":{\"version\":1}}");
  char *t = cJSON_PrintUnformatted(o);
  ck_assert_msg(strstr(t, "first draft") && !strstr(t, "second"), "%s", t);
  /* an agent wrote version 2, a person version 1: labelled so */
  ck_assert_msg(strstr(t, "\"provenance\":\"person\""), "%s", t);
  cJSON_free(t);
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"experiment:a\"],\"view\":\"summary_history\","
                      "\"view_options\":{\"version\":2}}");
  t = cJSON_PrintUnformatted(o);
  ck_assert_msg(strstr(t, "second, with results") && strstr(t, "\"provenance\":\"agent\""),
                "%s", t);
  cJSON_free(t);
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"experiment:a\"],\"view\":\"summary\"}");
  t = cJSON_PrintUnformatted(o);
  ck_assert_msg(strstr(t, "It works."), "%s", t);
  cJSON_free(t);
  cJSON_Delete(o);
  tc_refused("entity", "{\"refs\":[\"experiment:a\"],\"view\":\"summary_history\","
                       "\"view_options\":{\"version\":3}}", "versions: 2, 1");
  tc_refused("entity", "{\"refs\":[\"experiment:a\"],\"view\":\"summary_history\","
                       "\"view_options\":{\"version\":1.5}}", "whole number");
}
END_TEST

/* source -> dataset -> run on the store: upstream by default,
 * depth (1 by default) bounds the walk, downstream from the source reaches the run,
 * steps=true adds the method steps an edge recorded. */
START_TEST(lineage_walks_on_the_store)
{
  static const char *const puts[][2] = {
    {"source", "{\"id\":\"wiki\",\"provider\":\"hf\",\"kind\":\"dataset\","
               "\"uri\":\"hf://datasets/wikitext\"}"},
    {"dataset", "{\"id\":\"ds\",\"name\":\"corpus\"}"},
    {"lineage", "{\"from\":\"source:wiki\",\"to\":\"dataset:ds\",\"relation\":\"derived\","
                "\"steps\":[{\"name\":\"dedup\",\"description\":\"exact-hash dedup\"}]}"},
    {"run-use", "{\"run\":\"run:a0\",\"uses\":\"dataset:ds\"}"},
  };
  for (size_t i = 0; i < sizeof puts / sizeof puts[0]; i++)
    ST_OK(W, pmcp_store_put(W, T, puts[i][0], puts[i][1], strlen(puts[i][1]), NULL));
  cJSON *o = tc_ok("entity", "{\"refs\":[\"run:a0\"],\"view\":\"lineage\","
                             "\"view_options\":{\"depth\":1}}");
  char *t = cJSON_PrintUnformatted(o);
  ck_assert_msg(strstr(t, "dataset:ds") && !strstr(t, "source:wiki"), "depth 1: %s", t);
  ck_assert_str_eq(cJSON_GetObjectItem(o, "direction")->valuestring, "upstream");
  cJSON_free(t);
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"run:a0\"],\"view\":\"lineage\","
                      "\"view_options\":{\"depth\":2}}");
  t = cJSON_PrintUnformatted(o);
  ck_assert_msg(strstr(t, "source:wiki") && !strstr(t, "dedup"), "depth 2: %s", t);
  cJSON_free(t);
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"run:a0\"],\"view\":\"lineage\","
                      "\"view_options\":{\"steps\":true,\"depth\":2}}");
  t = cJSON_PrintUnformatted(o);
  ck_assert_msg(strstr(t, "dedup") && strstr(t, "exact-hash dedup"), "steps: %s", t);
  cJSON_free(t);
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"source:wiki\"],\"view\":\"lineage\","
                      "\"view_options\":{\"direction\":\"downstream\",\"depth\":8}}");
  t = cJSON_PrintUnformatted(o);
  ck_assert_msg(strstr(t, "dataset:ds") && strstr(t, "run:a0"), "downstream: %s", t);
  cJSON_free(t);
  cJSON_Delete(o);
  tc_refused("entity", "{\"refs\":[\"run:a0\"],\"view\":\"lineage\","
                       "\"view_options\":{\"depth\":0}}", "1 to 8");
}
END_TEST


/* Every page of the store's listing of @p kind, @p limit items a page
 * (following "next"), checked against @p want (refs in order). */
static void pages_in_order(const char *kind, size_t limit, char want[][64], size_t n)
{
  pmcp_buf b = PMCP_BUF_INIT;
  char after[32] = "";
  size_t got = 0;
  for (int guard = 0; guard < 200; guard++) {
    pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
    o.kind = kind;
    o.limit = limit;
    o.after = *after ? after : NULL;
    ST_OK(W, pmcp_store_list(W, T, &o, &b));
    cJSON *page = cJSON_Parse(b.ptr);
    ck_assert_ptr_nonnull(page);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(page, "items"))
    {
      ck_assert_msg(got < n, "%s: more than %zu items", kind, n);
      const char *ref = cJSON_GetObjectItem(it, "ref")->valuestring;
      ck_assert_msg(strcmp(ref, want[got]) == 0, "%s limit %zu: item %zu is %s, not %s", kind,
                    limit, got, ref, want[got]);
      got++;
    }
    const cJSON *nx = cJSON_GetObjectItem(page, "next");
    snprintf(after, sizeof after, "%s", cJSON_IsString(nx) ? nx->valuestring : "");
    cJSON_Delete(page);
    if (!*after)
      break;
  }
  ck_assert_int_eq(got, n);
  pmcp_buf_dispose(&b);
}

/* The listings whose rows join a second table (notes and their current
 * versions, checkpoints and their runs) come out in their kind's order on
 * every page, written in orders that differ from the row ids of both
 * tables, also when the planner's statistics say the joined table is the
 * small one and its rows the cheaper outer loop (SQLite: statistics
 * written so). The order is the statement's own ORDER BY, so no loop
 * order a planner picks may change it. */
START_TEST(joined_lists_keep_their_order)
{
  fill();
  /* 24 notes written in a shuffled time order, each edited once so that
   * note_versions holds its rows in yet another order */
  enum { NN = 24, NC = 15 };
  char notes[NN][64], ckpts[NC][64];
  int64_t when[NN];
  for (int i = 0; i < NN; i++) {
    char on[16], body[64];
    snprintf(on, sizeof on, "run:a%d", i % 5);
    snprintf(body, sizeof body, "note %d", i);
    pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
    n.on = on;
    n.body = body;
    when[i] = 1700000000000LL + (int64_t)((i * 7) % NN) * 1000;
    n.created_ms = when[i];
    pmcp_buf id = PMCP_BUF_INIT;
    ST_OK(W, pmcp_store_note(W, T, &n, &id, NULL));
    snprintf(notes[i], sizeof notes[i], "note:%s", id.ptr);
    pmcp_buf_dispose(&id);
  }
  /* brute force: newest first (the times are distinct) */
  for (int i = 0; i < NN; i++)
    for (int j = i + 1; j < NN; j++)
      if (when[j] > when[i]) {
        int64_t tw = when[i];
        when[i] = when[j];
        when[j] = tw;
        char tr[64];
        memcpy(tr, notes[i], 64);
        memcpy(notes[i], notes[j], 64);
        memcpy(notes[j], tr, 64);
      }
  /* checkpoints on the runs in the reverse of the runs' own order: the
   * newest (last written) first */
  for (int k = 0; k < NC; k++) {
    char js[96];
    snprintf(js, sizeof js, "{\"run\":\"a%d\",\"step\":%d}", 4 - k % 5, 100 + k);
    pmcp_buf ref = PMCP_BUF_INIT;
    ST_OK(W, pmcp_store_put(W, T, "checkpoint", js, strlen(js), &ref));
    snprintf(ckpts[NC - 1 - k], sizeof ckpts[0], "%s", ref.ptr);
    pmcp_buf_dispose(&ref);
  }
  if (!st_is_pg()) {
    pmcp_store_free(W);
    W = NULL;
    /* the joined tables tiny and the listed ones huge, as ANALYZE of a
     * very different lab would say */
    sql(st_path, "ANALYZE;"
                 "DELETE FROM sqlite_stat1 WHERE tbl IN ('notes','note_versions','checkpoints','runs');"
                 "INSERT INTO sqlite_stat1 VALUES ('notes',NULL,'5000000');"
                 "INSERT INTO sqlite_stat1 VALUES ('checkpoints',NULL,'5000000');"
                 "INSERT INTO sqlite_stat1 VALUES ('note_versions',NULL,'3');"
                 "INSERT INTO sqlite_stat1 VALUES ('runs',NULL,'3');");
    ST_OK(W, pmcp_store_open(&W, st_path, 0));
  }
  static const size_t limits[] = {1, 2, 3, 5, 7, 50};
  for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
    pages_in_order("note", limits[l], notes, NN);
    pages_in_order("checkpoint", limits[l], ckpts, NC);
  }
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("research-store");
  TCase *tc = tcase_create("tree");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, tree_counts_follow_writes);
  tcase_add_test(tc, exact_channel_traces_paths_hashes_uris);
  tcase_add_test(tc, exact_channel_datasets_and_sources);
  tcase_add_test(tc, pages_lose_and_repeat_nothing);
  tcase_add_test(tc, tools_list_tokens);
  tcase_add_test(tc, content_limits_on_the_store);
  tcase_add_test(tc, resources_and_prompts_listed);
  tcase_add_test(tc, pages_random_limits_and_budgets);
  tcase_add_test(tc, summary_history_versions);
  tcase_add_test(tc, lineage_walks_on_the_store);
  suite_add_tcase(s, tc);
  TCase *mig = tcase_create("migration");
  tcase_add_checked_fixture(mig, NULL, teardown);
  tcase_add_test(mig, migration_fills_counts);
  tcase_add_test(mig, joined_lists_keep_their_order);
  suite_add_tcase(s, mig);
  return s;
}

int main(void)
{
  return st_run_suite(suite());
}
