/* SPDX-License-Identifier: MIT */
/* The research tools driven through the engine (pmcp_server_handle) over a
 * small in-memory store backend (pmcp_store_new_custom), so every mode,
 * view, refusal and multi-page walk is checked against data the test
 * controls. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "probemcp/probemcp.h"
#include "probemcp/research.h"
#include "probemcp/tokens.h"
#include "tool-call-util.h"

/* ---- the fake store ------------------------------------------------------ */

typedef struct fake {
  cJSON *recs; /* array of records; "_in": [parent refs] */
  uint64_t version;
  int model_calls;
} fake;

static fake F;

static int f_tenant(pmcp_store *s, void *ctx, const char *name, unsigned flags,
                    pmcp_tenant *out)
{
  if (name && strcmp(name, "default") != 0 && strcmp(name, "other") != 0)
    return pmcp_store_set_error(s, PMCP_ENOTFOUND, "no tenant %s", name);
  out->id = name && strcmp(name, "other") == 0 ? 2 : 1;
  return 0;
}

static int f_secret(pmcp_store *s, void *ctx, const char *name, pmcp_buf *out)
{
  return PMCP_ENOTFOUND;
}

static int f_version(pmcp_store *s, void *ctx, pmcp_tenant t, uint64_t *out)
{
  *out = F.version;
  return 0;
}

static int in_tenant(const cJSON *r, pmcp_tenant t)
{
  const cJSON *tn = cJSON_GetObjectItem(r, "_tenant");
  return (tn ? (int64_t)tn->valuedouble : 1) == t.id;
}

static void put_out(pmcp_buf *out, const cJSON *o)
{
  char *txt = cJSON_PrintUnformatted(o);
  size_t n = strlen(txt);
  out->ptr = malloc(n + 1);
  memcpy(out->ptr, txt, n + 1);
  out->len = n;
  out->cap = n + 1;
  cJSON_free(txt);
}

static cJSON *clean(const cJSON *r)
{
  cJSON *c = cJSON_Duplicate(r, 1);
  cJSON_DeleteItemFromObject(c, "_in");
  cJSON_DeleteItemFromObject(c, "_tenant");
  cJSON_DeleteItemFromObject(c, "_content");
  return c;
}

static int f_get(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                 pmcp_buf *out)
{
  const cJSON *r;
  int n = 0;
  const cJSON *hit = NULL;
  cJSON_ArrayForEach(r, F.recs)
  {
    if (!in_tenant(r, t))
      continue;
    const char *rr = cJSON_GetObjectItem(r, "ref")->valuestring;
    const cJSON *nm = cJSON_GetObjectItem(r, "name");
    if (strcmp(rr, ref) == 0 && strncmp(ref, "artifact:", 9) != 0) {
      hit = r;
      n = 1;
      break;
    }
    /* artifact:NAME resolves by name at the shared level */
    if (strncmp(ref, "artifact:", 9) == 0 && cJSON_IsString(nm) &&
        strcmp(cJSON_GetObjectItem(r, "kind")->valuestring, "artifact") == 0 &&
        strcmp(nm->valuestring, ref + 9) == 0) {
      if (hit)
        return pmcp_store_set_error(s, PMCP_EINVAL,
                                    "artifact name %s is shared by %s and %s",
                                    ref + 9, cJSON_GetObjectItem(hit, "id")->valuestring,
                                    cJSON_GetObjectItem(r, "id")->valuestring);
      hit = r;
      n++;
    }
  }
  if (!n)
    return pmcp_store_set_error(s, PMCP_ENOTFOUND, "%s not found", ref);
  cJSON *c = clean(hit);
  put_out(out, c);
  cJSON_Delete(c);
  return 0;
}

static int matches(const cJSON *r, const pmcp_list_opts *o)
{
  if (strcmp(cJSON_GetObjectItem(r, "kind")->valuestring, o->kind) != 0)
    return 0;
  if (!o->include_deleted && cJSON_IsTrue(cJSON_GetObjectItem(r, "deleted")))
    return 0;
  if (o->parent) {
    int in = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(r, "_in"))
      in |= strcmp(p->valuestring, o->parent) == 0;
    if (!in)
      return 0;
  }
  if (o->query) {
    const char *fields[] = {"name", "text", "body", "path", "uri", "sha256", NULL};
    int in = 0;
    for (int i = 0; fields[i]; i++) {
      const cJSON *f = cJSON_GetObjectItem(r, fields[i]);
      in |= cJSON_IsString(f) && strstr(f->valuestring, o->query) != NULL;
    }
    if (!in)
      return 0;
  }
  if (o->filter) {
    cJSON *f = cJSON_Parse(o->filter);
    int ok = 1;
    for (const cJSON *c = f ? f->child : NULL; c; c = c->next) {
      if (strcmp(c->string, "direction") == 0 || strcmp(c->string, "shared") == 0)
        continue;
      const cJSON *v = cJSON_GetObjectItem(r, c->string);
      cJSON *nk = NULL;
      if (strcmp(c->string, "kind") == 0) {
        /* a note's own kind (note, overview, handoff, sub-note) */
        const cJSON *k = cJSON_GetObjectItem(r, "note_kind");
        nk = cJSON_CreateString(cJSON_IsString(k) ? k->valuestring : "note");
        v = nk;
      }
      if (strcmp(c->string, "exact") == 0) {
        /* the exact channel: a name, id, path, hash or URI equals it */
        const char *fields[] = {"name", "id", "path", "sha256", "uri", NULL};
        int eq = 0;
        for (int i = 0; fields[i]; i++) {
          const cJSON *fv = cJSON_GetObjectItem(r, fields[i]);
          eq |= cJSON_IsString(fv) && strcmp(fv->valuestring, c->valuestring) == 0;
        }
        ok &= eq;
        continue;
      }
      if (strcmp(c->string, "unfiled") == 0) {
        ok &= cJSON_GetObjectItem(r, "project") == NULL;
        continue;
      }
      if (cJSON_IsArray(c)) {
        int any = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, c)
          any |= v && cJSON_Compare(v, e, 1);
        ok &= any;
        cJSON_Delete(nk);
        continue;
      }
      ok &= v && cJSON_Compare(v, c, 1);
      cJSON_Delete(nk);
    }
    cJSON_Delete(f);
    if (!ok)
      return 0;
  }
  return 1;
}

static int f_list(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_list_opts *o,
                  pmcp_buf *out)
{
  size_t start = o->after ? (size_t)atol(o->after) : 0;
  size_t limit = o->limit ? o->limit : 50;
  cJSON *res = cJSON_CreateObject();
  cJSON *items = cJSON_AddArrayToObject(res, "items");
  size_t idx = 0, total = 0, shown = 0;
  int more = 0;
  const cJSON *r;
  cJSON_ArrayForEach(r, F.recs)
  {
    if (!in_tenant(r, t) || !matches(r, o))
      continue;
    total++;
    if (idx++ < start)
      continue;
    if (shown < limit) {
      cJSON_AddItemToArray(items, clean(r));
      shown++;
    } else {
      more = 1;
    }
  }
  cJSON_AddNumberToObject(res, "total", (double)total);
  if (more) {
    char pos[32];
    snprintf(pos, sizeof pos, "%zu", start + shown);
    cJSON_AddStringToObject(res, "next", pos);
  } else {
    cJSON_AddNullToObject(res, "next");
  }
  put_out(out, res);
  cJSON_Delete(res);
  return 0;
}

static int f_search(pmcp_store *s, void *ctx, pmcp_tenant t, const char *query,
                    const char *kinds, const char *after, size_t limit, pmcp_buf *out)
{
  if (!query || !*query)
    return pmcp_store_set_error(s, PMCP_EINVAL, "empty query");
  size_t start = after ? (size_t)atol(after) : 0;
  cJSON *res = cJSON_CreateObject();
  cJSON *items = cJSON_AddArrayToObject(res, "items");
  size_t idx = 0, total = 0, shown = 0;
  int more = 0;
  const cJSON *r;
  cJSON_ArrayForEach(r, F.recs)
  {
    if (!in_tenant(r, t))
      continue;
    const char *fields[] = {"name", "text", "body", "description", NULL};
    const char *snip = NULL;
    for (int i = 0; fields[i] && !snip; i++) {
      const cJSON *f = cJSON_GetObjectItem(r, fields[i]);
      if (cJSON_IsString(f) && strstr(f->valuestring, query))
        snip = f->valuestring;
    }
    if (!snip)
      continue;
    total++;
    if (idx++ < start)
      continue;
    if (shown < limit) {
      cJSON *h = cJSON_CreateObject();
      cJSON_AddStringToObject(h, "ref", cJSON_GetObjectItem(r, "ref")->valuestring);
      cJSON_AddStringToObject(h, "kind", cJSON_GetObjectItem(r, "kind")->valuestring);
      cJSON_AddStringToObject(h, "title", cJSON_IsString(cJSON_GetObjectItem(r, "name"))
                                              ? cJSON_GetObjectItem(r, "name")->valuestring
                                              : "");
      cJSON_AddStringToObject(h, "snippet", snip);
      cJSON_AddNumberToObject(h, "score", 1.0 / (double)(idx + 1));
      cJSON_AddItemToArray(items, h);
      shown++;
    } else {
      more = 1;
    }
  }
  cJSON_AddNumberToObject(res, "total", (double)total);
  if (more) {
    char pos[32];
    snprintf(pos, sizeof pos, "%zu", start + shown);
    cJSON_AddStringToObject(res, "next", pos);
  }
  put_out(out, res);
  cJSON_Delete(res);
  return 0;
}

static int f_content(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                     int64_t version, pmcp_buf *out, pmcp_buf *meta)
{
  const cJSON *r;
  cJSON_ArrayForEach(r, F.recs)
  {
    if (strcmp(cJSON_GetObjectItem(r, "kind")->valuestring, "artifact") != 0 ||
        strcmp(cJSON_GetObjectItem(r, "name")->valuestring, ref + 9) != 0)
      continue;
    const cJSON *c = cJSON_GetObjectItem(r, "_content");
    cJSON *m = clean(r);
    if (meta)
      put_out(meta, m);
    cJSON_Delete(m);
    if (!cJSON_IsString(c))
      return pmcp_store_set_error(s, PMCP_EUNSUPPORTED, "a reference");
    size_t n = strlen(c->valuestring);
    const cJSON *bin = cJSON_GetObjectItem(r, "_binary");
    out->ptr = malloc(n + 2);
    memcpy(out->ptr, c->valuestring, n + 1);
    if (cJSON_IsTrue(bin))
      out->ptr[n / 2] = '\0'; /* a NUL byte makes it binary */
    out->len = n;
    out->cap = n + 2;
    return 0;
  }
  return pmcp_store_set_error(s, PMCP_ENOTFOUND, "no artifact %s", ref);
}

static int f_series_list(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                         pmcp_buf *out)
{
  const char *j = "{\"items\":[{\"series\":1,\"key\":\"loss\",\"labels\":{},"
                  "\"kind\":\"float\",\"scale\":\"step\",\"count\":100,"
                  "\"step_min\":0,\"step_max\":99,\"first\":2.3333333333,"
                  "\"last\":0.123456789,\"min\":0.1,\"max\":2.5}]}";
  size_t n = strlen(j);
  out->ptr = malloc(n + 1);
  memcpy(out->ptr, j, n + 1);
  out->len = n;
  out->cap = n + 1;
  return 0;
}

static pmcp_store *fake_store(unsigned flags)
{
  pmcp_store_ops ops;
  memset(&ops, 0, sizeof ops);
  ops.version = PMCP_STORE_OPS_VERSION;
  ops.name = "fake";
  ops.tenant = f_tenant;
  ops.secret = f_secret;
  ops.version_of = f_version;
  ops.get = f_get;
  ops.list = f_list;
  ops.search = f_search;
  ops.artifact_content = f_content;
  ops.series_list = f_series_list;
  pmcp_store *s = NULL;
  ck_assert_int_eq(pmcp_store_new_custom(&s, &ops, NULL, flags), 0);
  return s;
}

static void add(const char *json)
{
  cJSON *r = cJSON_Parse(json);
  ck_assert_ptr_nonnull(r);
  cJSON_AddItemToArray(F.recs, r);
}

static void fill(int n_runs)
{
  F.recs = cJSON_CreateArray();
  F.version = 1;
  add("{\"ref\":\"project:p1\",\"id\":\"p1\",\"kind\":\"project\",\"name\":\"Vision\","
      "\"description\":\"image models\",\"readme\":\"# Vision\\nReadme text\"}");
  add("{\"ref\":\"project:p2\",\"id\":\"p2\",\"kind\":\"project\",\"name\":\"Speech\"}");
  add("{\"ref\":\"experiment:e1\",\"id\":\"e1\",\"kind\":\"experiment\",\"name\":\"resnet\","
      "\"project\":\"project:p1\",\"_in\":[\"project:p1\"],\"config\":{\"lr\":0.1}}");
  for (int i = 0; i < n_runs; i++) {
    char buf[600];
    snprintf(buf, sizeof buf,
             "{\"ref\":\"run:r%03d\",\"id\":\"r%03d\",\"kind\":\"run\",\"name\":\"run number %d\","
             "\"status\":\"%s\",\"project\":\"project:p1\",\"experiment\":\"experiment:e1\","
             "\"created\":%lld,\"config\":{\"optimizer\":{\"lr\":0.001},\"a.b\":7},"
             "\"git_commit\":\"abc123\",\"command\":\"python train.py\","
             "\"_in\":[\"project:p1\",\"experiment:e1\"]%s}",
             i, i, i, i == 0 ? "running" : "finished", 1700000000000LL - i * 1000LL,
             i == 1 ? ",\"deleted\":true" : "");
    add(buf);
  }
  add("{\"ref\":\"run:loose\",\"id\":\"loose\",\"kind\":\"run\",\"name\":\"unfiled run\","
      "\"status\":\"finished\"}");
  add("{\"ref\":\"note:n1\",\"id\":\"n1\",\"kind\":\"note\",\"text\":\"lr warmup helped a lot\","
      "\"excerpt\":\"lr warmup\",\"chars\":22,"
      "\"author\":\"ana\",\"via\":\"cli\",\"_in\":[\"run:r000\"]}");
  add("{\"ref\":\"note:ov\",\"id\":\"ov\",\"kind\":\"overview\",\"body\":\"# Overview\\nall good\","
      "\"summary\":\"We beat the baseline.\",\"status\":\"done\",\"_in\":[\"project:p1\"]}");
  /* overview is found with filter kind=overview on kind note */
  cJSON_ReplaceItemInObject(cJSON_GetArrayItem(F.recs, cJSON_GetArraySize(F.recs) - 1),
                            "kind", cJSON_CreateString("note"));
  cJSON_AddStringToObject(cJSON_GetArrayItem(F.recs, cJSON_GetArraySize(F.recs) - 1),
                          "note_kind", "overview");
  char lines[8000] = "";
  for (int i = 1; i <= 100; i++) {
    size_t l = strlen(lines);
    snprintf(lines + l, sizeof lines - l, "line %d%s\n", i,
             i == 57 ? " learning_rate=0.1" : "");
  }
  cJSON *art = cJSON_Parse("{\"ref\":\"artifact:cfg\",\"id\":\"a1\",\"kind\":\"artifact\","
                           "\"name\":\"cfg\",\"path\":\"conf/train.yaml\","
                           "\"sha256\":\"deadbeef\",\"version\":3}");
  cJSON_AddStringToObject(art, "_content", lines);
  cJSON_AddItemToArray(F.recs, art);
  add("{\"ref\":\"artifact:blob\",\"id\":\"a2\",\"kind\":\"artifact\",\"name\":\"blob\","
      "\"_content\":\"abcdefgh\",\"_binary\":true}");
  add("{\"ref\":\"artifact-version:a1@1\",\"kind\":\"artifact-version\",\"version\":1,"
      "\"_in\":[\"artifact:cfg\"]}");
  add("{\"ref\":\"artifact-version:a1@2\",\"kind\":\"artifact-version\",\"version\":2,"
      "\"labels\":[\"prod\"],\"_in\":[\"artifact:cfg\"]}");
  add("{\"ref\":\"source:hf-gpt2\",\"id\":\"hf-gpt2\",\"kind\":\"source\",\"provider\":\"hf\","
      "\"uri\":\"hf://gpt2\",\"runs\":3}");
  add("{\"ref\":\"lineage:1\",\"kind\":\"lineage\",\"from\":\"source:hf-gpt2\","
      "\"to\":\"run:r000\",\"_in\":[\"run:r000\",\"source:hf-gpt2\"]}");
  add("{\"ref\":\"lineage:2\",\"kind\":\"lineage\",\"from\":\"run:r000\","
      "\"to\":\"artifact:cfg\",\"_in\":[\"run:r000\",\"artifact:cfg\"]}");
  add("{\"ref\":\"dataset:wiki\",\"id\":\"wiki\",\"kind\":\"dataset\",\"name\":\"wiki\","
      "\"registered\":true}");
  add("{\"ref\":\"dataset-version:wiki@1\",\"kind\":\"dataset-version\",\"version\":1,"
      "\"_in\":[\"dataset:wiki\"]}");
  add("{\"ref\":\"checkpoint:r000@step300\",\"kind\":\"checkpoint\",\"run\":\"run:r000\","
      "\"step\":300,\"best\":true,\"_in\":[\"run:r000\"]}");
  add("{\"ref\":\"checkpoint:r000@best\",\"kind\":\"checkpoint\",\"run\":\"run:r000\","
      "\"step\":300,\"best\":true}");
  add("{\"ref\":\"group:g1\",\"id\":\"g1\",\"kind\":\"group\",\"name\":\"sweep\","
      "\"_in\":[\"experiment:e1\"]}");
  add("{\"ref\":\"trial:t1\",\"id\":\"t1\",\"kind\":\"trial\",\"name\":\"trial 1\","
      "\"trajectory\":[{\"step\":1,\"reward\":0.5}],\"_in\":[\"run:r000\"]}");
  add("{\"ref\":\"session:s1\",\"id\":\"s1\",\"kind\":\"session\",\"title\":\"tuning\","
      "\"agent\":\"claude\",\"transcript\":[{\"role\":\"user\",\"content\":\"try lr 3e-4\"}],"
      "\"_in\":[\"run:r000\",\"project:p1\",\"experiment:e1\",\"artifact:cfg\"]}");
  add("{\"ref\":\"sub-note:sn1\",\"id\":\"sn1\",\"kind\":\"sub-note\",\"body\":\"detail\"}");
  add("{\"ref\":\"team-note\",\"kind\":\"team-note\",\"body\":\"team rules\"}");
  add("{\"ref\":\"run:secret\",\"id\":\"secret\",\"kind\":\"run\",\"name\":\"other lab run\","
      "\"_tenant\":2}");
}

/* ---- driving the server ---------------------------------------------------- */

static pmcp_store *ST;

static void setup_with(int n_runs, const char *embed)
{
  fill(n_runs);
  pmcp_server *srv = tc_server_new();
  ST = fake_store(PMCP_STORE_READONLY);
  pmcp_research_options ro = PMCP_RESEARCH_OPTIONS_INIT;
  ro.embed_url = embed;
  ck_assert_int_eq(pmcp_research_register(srv, ST, &ro), 0);
  tc_initialize();
}

static void setup(void) { setup_with(30, NULL); }

static void teardown(void)
{
  tc_server_free();
  pmcp_store_free(ST);
  cJSON_Delete(F.recs);
}

static const char *js(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItem(o, k);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* ---- tests ------------------------------------------------------------------- */

START_TEST(register_refuses_writable_store)
{
  pmcp_store *w = fake_store(0);
  ck_assert_int_eq(pmcp_research_register(tc_server(), w, NULL), PMCP_EINVAL);
  pmcp_store_free(w);
  pmcp_research_options ro = PMCP_RESEARCH_OPTIONS_INIT;
  ro.tenant = "nope";
  ck_assert_int_eq(pmcp_research_register(tc_server(), ST, &ro), PMCP_ENOTFOUND);
}
END_TEST

START_TEST(tools_list_is_read_only)
{
  cJSON *r = tc_rpc("tools/list", "{}");
  cJSON *tools = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "tools");
  ck_assert_int_ge(cJSON_GetArraySize(tools), 3); /* browse, entity, search and the later tools */
  const cJSON *t;
  cJSON_ArrayForEach(t, tools)
  {
    cJSON *ann = cJSON_GetObjectItem(t, "annotations");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(ann, "readOnlyHint")));
  }
  char *txt = cJSON_PrintUnformatted(cJSON_GetObjectItem(r, "result"));
  size_t tok = 0;
  pmcp_tokens_count(txt, strlen(txt), &tok);
  printf("tools/list result: %zu tokens (%d tools)\n", tok, cJSON_GetArraySize(tools));
  /* about a thousand tokens a tool at most: descriptions stay brief */
  ck_assert_uint_lt(tok, 1000 * (size_t)cJSON_GetArraySize(tools));
  cJSON_free(txt);
  cJSON_Delete(r);
}
END_TEST

START_TEST(browse_tree_root)
{
  cJSON *o = tc_ok("browse", "{}");
  ck_assert_str_eq(js(o, "mode"), "tree");
  cJSON *projects = cJSON_GetObjectItem(o, "projects");
  ck_assert_int_eq(cJSON_GetArraySize(projects), 2);
  cJSON *p1 = cJSON_GetArrayItem(projects, 0);
  ck_assert_str_eq(js(p1, "ref"), "project:p1");
  cJSON *exps = cJSON_GetObjectItem(p1, "experiments");
  ck_assert_int_eq(cJSON_GetArraySize(exps), 1);
  /* unfiled runs at the root */
  cJSON *unf = cJSON_GetObjectItem(o, "unfiled");
  ck_assert_int_eq(cJSON_GetArraySize(unf), 1);
  ck_assert_str_eq(js(cJSON_GetArrayItem(unf, 0), "ref"), "run:loose");
  /* other tenants' runs never appear */
  char *t = cJSON_PrintUnformatted(o);
  ck_assert_ptr_null(strstr(t, "secret"));
  cJSON_free(t);
  cJSON_Delete(o);
}
END_TEST

START_TEST(browse_tree_nested_cursor)
{
  cJSON *o = tc_ok("browse", "{\"ref\":\"experiment:e1\",\"limit\":5}");
  cJSON *runs = cJSON_GetObjectItem(o, "runs");
  ck_assert_int_eq(cJSON_GetArraySize(runs), 5);
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(o, "next_cursor"));
  cJSON_Delete(o);
  o = tc_ok("browse", "{\"ref\":\"project:p1\",\"depth\":2,\"limit\":3}");
  cJSON *e1 = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "experiments"), 0);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(e1, "runs")), 3);
  const char *rc = js(e1, "runs_cursor");
  ck_assert(*rc);
  char args[2000];
  snprintf(args, sizeof args,
           "{\"ref\":\"project:p1\",\"depth\":2,\"limit\":3,\"cursor\":\"%s\"}", rc);
  cJSON *o2 = tc_ok("browse", args);
  cJSON *more = cJSON_GetObjectItem(o2, "runs");
  ck_assert_int_eq(cJSON_GetArraySize(more), 3);
  /* r001 is deleted: page one held r000, r002, r003 */
  ck_assert_str_eq(js(cJSON_GetArrayItem(more, 0), "ref"), "run:r004");
  cJSON_Delete(o2);
  cJSON_Delete(o);
  /* depth 3 at a small budget still answers: nested lists shrink */
  o = tc_ok("browse", "{\"depth\":3,\"token_budget\":512}");
  ck_assert_int_ge(cJSON_GetArraySize(cJSON_GetObjectItem(o, "projects")), 1);
  cJSON_Delete(o);
  o = tc_ok("browse", "{\"ref\":\"project:p1\",\"depth\":2,\"limit\":100,\"token_budget\":512}");
  e1 = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "experiments"), 0);
  ck_assert_int_lt(cJSON_GetArraySize(cJSON_GetObjectItem(e1, "runs")), 29);
  ck_assert(*js(e1, "runs_cursor"));
  ck_assert(*js(e1, "nested"));
  cJSON_Delete(o);
  tc_refused("browse", "{\"ref\":\"run:r000\"}", "tree opens");
  tc_refused("browse", "{\"ref\":\"bogus:x\"}", "unknown kind");
}
END_TEST

/* Walks every page of browse runs with changing budgets: nothing lost,
 * nothing repeated. */
START_TEST(browse_runs_pagination)
{
  const int budgets[] = {512, 900, 2000, 600, 512, 8000, 700};
  char args[4000];
  char seen[64][16];
  int n_seen = 0, pages = 0;
  const char *cursor = NULL;
  cJSON *prev = NULL;
  for (;;) {
    if (cursor)
      snprintf(args, sizeof args,
               "{\"mode\":\"runs\",\"limit\":100,\"token_budget\":%d,\"cursor\":\"%s\"}",
               budgets[pages % 7], cursor);
    else
      snprintf(args, sizeof args, "{\"mode\":\"runs\",\"limit\":100,\"token_budget\":%d}",
               budgets[pages % 7]);
    cJSON *o = tc_ok("browse", args);
    pages++;
    cJSON *runs = cJSON_GetObjectItem(o, "runs");
    const cJSON *r;
    cJSON_ArrayForEach(r, runs)
    {
      for (int i = 0; i < n_seen; i++)
        ck_assert_str_ne(seen[i], js(r, "ref"));
      ck_assert_int_lt(n_seen, 64);
      snprintf(seen[n_seen++], 16, "%s", js(r, "ref"));
    }
    ck_assert_int_eq(cJSON_GetObjectItem(o, "count")->valueint, cJSON_GetArraySize(runs));
    cJSON_Delete(prev);
    prev = o;
    cursor = cJSON_GetObjectItem(o, "next_cursor")
                 ? cJSON_GetObjectItem(o, "next_cursor")->valuestring : NULL;
    if (!cursor)
      break;
    ck_assert_int_lt(pages, 40);
  }
  cJSON_Delete(prev);
  /* 30 runs minus one deleted, plus the unfiled one */
  ck_assert_int_eq(n_seen, 30);
  ck_assert_int_gt(pages, 1);
  /* newest first */
  ck_assert_str_eq(seen[0], "run:r000");
}
END_TEST

START_TEST(browse_runs_filters)
{
  cJSON *o = tc_ok("browse", "{\"mode\":\"runs\",\"active\":true}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "runs")), 1);
  cJSON_Delete(o);
  o = tc_ok("browse", "{\"mode\":\"runs\",\"include_deleted\":true,\"limit\":100}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "runs")), 31);
  cJSON_Delete(o);
  o = tc_ok("browse", "{\"mode\":\"runs\",\"project\":\"p1\",\"limit\":100}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "runs")), 29);
  cJSON_Delete(o);
  tc_refused("browse", "{\"mode\":\"runs\",\"project\":\"experiment:e1\"}", "expected a project");
}
END_TEST

START_TEST(browse_other_modes)
{
  cJSON *o = tc_ok("browse", "{\"mode\":\"notes\",\"query\":\"warmup\"}");
  cJSON *n = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "notes"), 0);
  ck_assert_str_eq(js(n, "ref"), "note:n1");
  ck_assert_str_eq(js(n, "provenance"), "person");
  /* a cut excerpt names the call that reads it whole */
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(n, "truncated")));
  ck_assert_str_eq(js(n, "detail"), "entity refs=[\"note:n1\"] view=record");
  cJSON_Delete(o);
  o = tc_ok("browse", "{\"mode\":\"sources\",\"provider\":\"hf\"}");
  cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "sources"), 0);
  ck_assert_int_eq(cJSON_GetObjectItem(s, "n_runs")->valueint, 3);
  cJSON_Delete(o);
  o = tc_ok("browse", "{\"mode\":\"workspaces\"}");
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(o, "workspaces"));
  cJSON_Delete(o);
  o = tc_ok("browse", "{\"mode\":\"checkpoints\",\"run\":\"run:r000\",\"best\":true}");
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(o, "checkpoints"));
  cJSON_Delete(o);
  o = tc_ok("browse", "{\"mode\":\"datasets\",\"registered\":true}");
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(o, "datasets"));
  cJSON_Delete(o);
  o = tc_ok("browse", "{\"mode\":\"files\"}");
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(o, "files"));
  cJSON_Delete(o);
}
END_TEST

START_TEST(browse_cursor_refusals)
{
  cJSON *o = tc_ok("browse", "{\"mode\":\"runs\",\"limit\":2}");
  const char *c = js(o, "next_cursor");
  char args[2000];
  /* changed arguments */
  snprintf(args, sizeof args, "{\"mode\":\"runs\",\"limit\":3,\"cursor\":\"%s\"}", c);
  tc_refused("browse", args, "restart");
  /* forged */
  char bad[1500];
  snprintf(bad, sizeof bad, "%s", c);
  bad[5] = bad[5] == 'A' ? 'B' : 'A';
  snprintf(args, sizeof args, "{\"mode\":\"runs\",\"limit\":2,\"cursor\":\"%s\"}", bad);
  tc_refused("browse", args, "restart");
  /* the store changed elsewhere (a point logged, ...): the cursor, bound
   * to its listing, continues */
  F.version++;
  snprintf(args, sizeof args, "{\"mode\":\"runs\",\"limit\":2,\"cursor\":\"%s\"}", c);
  cJSON *o2 = tc_ok("browse", args);
  ck_assert_str_eq(js(cJSON_GetArrayItem(cJSON_GetObjectItem(o2, "runs"), 0), "ref"), "run:r003");
  cJSON_Delete(o2);
  /* an argument sent at its default value is the same call */
  snprintf(args, sizeof args, "{\"mode\":\"runs\",\"limit\":2,\"include_deleted\":false,"
           "\"cursor\":\"%s\"}", c);
  o2 = tc_ok("browse", args);
  ck_assert_str_eq(js(cJSON_GetArrayItem(cJSON_GetObjectItem(o2, "runs"), 0), "ref"), "run:r003");
  cJSON_Delete(o2);
  /* the listing changed before the cursor's position: refused, in the
   * one restart shape */
  cJSON *r0 = NULL, *it;
  cJSON_ArrayForEach(it, F.recs)
    if (!strcmp(js(it, "ref"), "run:r000"))
      r0 = it;
  cJSON_AddTrueToObject(r0, "deleted");
  snprintf(args, sizeof args, "{\"mode\":\"runs\",\"limit\":2,\"cursor\":\"%s\"}", c);
  tc_refused("browse", args, "\"error\":\"invalid_cursor\",\"reason\":\"stale\",\"restart\":true");
  cJSON_DeleteItemFromObject(r0, "deleted");
  cJSON_Delete(o);
}
END_TEST

START_TEST(entity_card_and_views)
{
  cJSON *o = tc_ok("entity", "{\"refs\":[\"run:r000\"]}");
  ck_assert_str_eq(js(o, "ref"), "run:r000");
  cJSON *av = cJSON_GetObjectItem(o, "available_views");
  ck_assert_int_eq(cJSON_GetArraySize(av), 15);
  cJSON_Delete(o);
  /* the bare id is not a ref: kinds are never guessed */
  tc_refused("entity", "{\"refs\":[\"r000\"]}", "no kind");
  tc_refused("entity", "{\"refs\":[\"model:x\"]}", "unknown kind");
  tc_refused("entity", "{\"refs\":[\"run:r000\"],\"view\":\"content\"}", "has no view content");
  tc_refused("entity", "{\"refs\":[\"run:r000\"],\"view\":\"record\",\"view_options\":{\"grep\":\"x\"}}",
          "not read by view record");
  tc_refused("entity", "{\"refs\":[\"run:nope\"]}", "not_found");
  tc_refused("entity", "{\"refs\":[\"run:secret\"]}", "not_found");
  o = tc_ok("entity", "{\"refs\":[\"run:r000\"],\"view\":\"views\"}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "views")), 15);
  cJSON_Delete(o);
}
END_TEST

START_TEST(entity_record_fields)
{
  cJSON *o = tc_ok("entity", "{\"refs\":[\"run:r002\"],\"view\":\"record\","
                          "\"view_options\":{\"field\":\"config.optimizer.lr\"}}");
  ck_assert_double_eq(cJSON_GetObjectItem(o, "data")->valuedouble, 0.001);
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"run:r002\"],\"view\":\"record\","
                   "\"view_options\":{\"field\":[\"config\",\"a.b\"]}}");
  ck_assert_int_eq(cJSON_GetObjectItem(o, "data")->valueint, 7);
  cJSON_Delete(o);
  tc_refused("entity", "{\"refs\":[\"run:r002\"],\"view\":\"record\","
                    "\"view_options\":{\"field\":\"config.nope\"}}", "no field");
}
END_TEST

START_TEST(entity_record_fragments)
{
  /* a record too large for 512 tokens comes back as json fragments that
   * reassemble to the record */
  cJSON *big = cJSON_GetArrayItem(F.recs, 5);
  char *blob = malloc(20001);
  for (int i = 0; i < 20000; i++)
    blob[i] = "abcdefghij \xc3\xa9"[i % 13];
  blob[19999] = 0;
  /* keep UTF-8 valid: never end inside the 2-byte sequence */
  if (((unsigned char)blob[19998] & 0xE0) == 0xC0)
    blob[19998] = 'x';
  cJSON_AddStringToObject(big, "description", blob);
  free(blob);
  /* a double that needs 17 digits: the fragments are the record's exact
   * text, as the whole record view writes it (15 digits read back as 0.3) */
  cJSON_AddRawToObject(big, "exact_x", "0.30000000000000004");
  char *expect = NULL;
  {
    cJSON *c = cJSON_Duplicate(big, 1);
    cJSON_DeleteItemFromObject(c, "_in");
    expect = cJSON_PrintUnformatted(c);
    cJSON_Delete(c);
  }
  size_t cap = 100000, len = 0;
  char *acc = calloc(cap, 1);
  const char *cursor = NULL;
  cJSON *prev = NULL;
  int pages = 0;
  for (;;) {
    char args[3000];
    if (cursor)
      snprintf(args, sizeof args, "{\"refs\":[\"%s\"],\"view\":\"record\",\"token_budget\":%d,"
               "\"cursor\":\"%s\"}", js(big, "ref"), pages % 2 ? 512 : 1000, cursor);
    else
      snprintf(args, sizeof args, "{\"refs\":[\"%s\"],\"view\":\"record\",\"token_budget\":512}",
               js(big, "ref"));
    cJSON *o = tc_ok("entity", args);
    pages++;
    cJSON *d = cJSON_GetObjectItem(o, "data");
    ck_assert_str_eq(js(d, "format"), "json_fragment");
    const char *t = js(d, "text");
    memcpy(acc + len, t, strlen(t));
    len += strlen(t);
    cJSON_Delete(prev);
    prev = o;
    if (cJSON_IsTrue(cJSON_GetObjectItem(d, "complete")))
      break;
    cursor = js(o, "next_cursor");
    ck_assert(*cursor);
    ck_assert_int_lt(pages, 200);
  }
  cJSON_Delete(prev);
  ck_assert_ptr_nonnull(strstr(acc, "\"exact_x\":0.30000000000000004"));
  cJSON *back = cJSON_Parse(acc);
  cJSON *want = cJSON_Parse(expect);
  ck_assert(cJSON_Compare(back, want, 1));
  cJSON_Delete(back);
  cJSON_Delete(want);
  free(acc);
  cJSON_free(expect);
  ck_assert_int_gt(pages, 3);
}
END_TEST


/* A document read in fragments pins the text it started from: an append
 * between pages is allowed (the sequence stays the original text), an edit
 * of the read prefix is refused with a restart error. */
static cJSON *readme_rec(void)
{
  const cJSON *r;
  cJSON_ArrayForEach(r, F.recs)
  {
    if (strcmp(js(r, "ref"), "project:p1") == 0)
      return (cJSON *)r;
  }
  return NULL;
}

START_TEST(entity_document_pinned)
{
  char *doc = malloc(12001);
  for (int i = 0; i < 12000; i++)
    doc[i] = (char)('a' + i % 26);
  doc[12000] = 0;
  cJSON_ReplaceItemInObject(readme_rec(), "readme", cJSON_CreateString(doc));
  cJSON *o = tc_ok("entity", "{\"refs\":[\"project:p1\"],\"view\":\"readme\",\"token_budget\":512}");
  cJSON *d = cJSON_GetObjectItem(o, "data");
  ck_assert_str_eq(js(d, "format"), "text_fragment");
  ck_assert_int_eq(cJSON_GetObjectItem(d, "total_chars")->valueint, 12000);
  size_t got = strlen(js(d, "text"));
  ck_assert(!cJSON_IsTrue(cJSON_GetObjectItem(d, "complete")));
  char cur[2000];
  snprintf(cur, sizeof cur, "%s", js(o, "next_cursor"));
  cJSON_Delete(o);
  /* append: allowed, the sequence continues over the original 12000 */
  char *more = malloc(13001);
  memcpy(more, doc, 12000);
  memset(more + 12000, 'Z', 1000);
  more[13000] = 0;
  cJSON_ReplaceItemInObject(readme_rec(), "readme", cJSON_CreateString(more));
  F.version++;
  char args[2600];
  snprintf(args, sizeof args, "{\"refs\":[\"project:p1\"],\"view\":\"readme\",\"token_budget\":512,"
           "\"cursor\":\"%s\"}", cur);
  o = tc_ok("entity", args);
  d = cJSON_GetObjectItem(o, "data");
  ck_assert_int_eq(cJSON_GetObjectItem(d, "offset")->valueint, (int)got);
  ck_assert_int_eq(cJSON_GetObjectItem(d, "total_chars")->valueint, 12000);
  ck_assert_ptr_null(strchr(js(d, "text"), 'Z'));
  cJSON_Delete(o);
  /* edit of the pinned prefix: refused */
  more[3] = '#';
  cJSON_ReplaceItemInObject(readme_rec(), "readme", cJSON_CreateString(more));
  F.version++;
  tc_refused("entity", args, "document_changed");
  free(more);
  free(doc);
}
END_TEST

START_TEST(entity_notes_overview)
{
  cJSON *o = tc_ok("entity", "{\"refs\":[\"run:r000\"],\"view\":\"notes\"}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "notes")), 1);
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"project:p1\"],\"view\":\"summary\"}");
  ck_assert_str_eq(js(o, "text"), "We beat the baseline.");
  ck_assert_str_eq(js(o, "provenance"), "person");
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"project:p1\"],\"view\":\"overview\"}");
  ck_assert_ptr_nonnull(strstr(js(o, "text"), "all good"));
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"project:p1\"],\"view\":\"readme\"}");
  ck_assert_ptr_nonnull(strstr(js(o, "text"), "Readme text"));
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"run:r000\"],\"view\":\"metrics\"}");
  cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "series"), 0);
  /* six significant figures */
  ck_assert_double_eq(cJSON_GetObjectItem(s, "last")->valuedouble, 0.123457);
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"run:r000\"],\"view\":\"reproduce\"}");
  ck_assert_str_eq(js(o, "command"), "python train.py");
  cJSON_Delete(o);
}
END_TEST

START_TEST(entity_content)
{
  cJSON *o = tc_ok("entity", "{\"refs\":[\"artifact:cfg\"],\"view\":\"content\"}");
  /* whole 40-line sections, as many as the budget holds: here all */
  ck_assert_int_eq(cJSON_GetObjectItem(o, "start_line")->valueint, 1);
  ck_assert_int_eq(cJSON_GetObjectItem(o, "end_line")->valueint, 100);
  ck_assert_int_eq(cJSON_GetObjectItem(o, "total_lines")->valueint, 100);
  ck_assert_str_eq(js(o, "sha256"), "deadbeef");
  ck_assert_ptr_null(cJSON_GetObjectItem(o, "next_start_line"));
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"artifact:cfg\"],\"view\":\"content\","
                   "\"view_options\":{\"start_line\":81}}");
  ck_assert_int_eq(cJSON_GetObjectItem(o, "end_line")->valueint, 100);
  ck_assert_ptr_null(cJSON_GetObjectItem(o, "next_cursor"));
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"artifact:cfg\"],\"view\":\"content\","
                   "\"view_options\":{\"grep\":\"learning_rate\",\"context_lines\":2}}");
  ck_assert_int_eq(cJSON_GetObjectItem(o, "match_count")->valueint, 1);
  cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "matches"), 0);
  ck_assert_int_eq(cJSON_GetObjectItem(m, "start_line")->valueint, 55);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(m, "lines")), 5);
  cJSON_Delete(o);
  tc_refused("entity", "{\"refs\":[\"artifact:blob\"],\"view\":\"content\"}",
          "probe artifact download artifact:blob");
  tc_refused("entity", "{\"refs\":[\"artifact:cfg\"],\"view\":\"content\","
                    "\"view_options\":{\"start_line\":500}}", "past the end");
  tc_refused("entity", "{\"refs\":[\"artifact:cfg\"],\"view\":\"content\","
                    "\"view_options\":{\"grep\":\"(\"}}", "regular expression");
}
END_TEST

START_TEST(entity_versions)
{
  cJSON *o = tc_ok("entity", "{\"refs\":[\"artifact:cfg\"],\"view\":\"versions\","
                          "\"view_options\":{\"requirement\":\">=2\"}}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "versions")), 1);
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"artifact:cfg\"],\"view\":\"versions\","
                   "\"view_options\":{\"requirement\":\"prod\"}}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "versions")), 1);
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"artifact:cfg\"],\"view\":\"versions\","
                   "\"view_options\":{\"requirement\":\">=5\"}}");
  ck_assert_str_eq(js(o, "state"), "no_match");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "existing")), 2);
  cJSON_Delete(o);
  tc_refused("entity", "{\"refs\":[\"artifact:cfg\"],\"view\":\"versions\","
                    "\"view_options\":{\"requirement\":\">=2.0\"}}", "not semver");
  /* a name two shared artifacts carry */
  add("{\"ref\":\"artifact:x2\",\"id\":\"a9\",\"kind\":\"artifact\",\"name\":\"cfg\"}");
  tc_refused("entity", "{\"refs\":[\"artifact:cfg\"]}", "a1 and a9");
}
END_TEST

START_TEST(entity_lineage)
{
  cJSON *o = tc_ok("entity", "{\"refs\":[\"artifact:cfg\"],\"view\":\"lineage\","
                          "\"view_options\":{\"depth\":2}}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "edges")), 2);
  ck_assert_str_eq(js(o, "direction"), "upstream");
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"source:hf-gpt2\"],\"view\":\"lineage\","
                   "\"view_options\":{\"direction\":\"downstream\",\"depth\":8}}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "edges")), 2);
  cJSON_Delete(o);
  tc_refused("entity", "{\"refs\":[\"run:r000\"],\"view\":\"lineage\","
                    "\"view_options\":{\"depth\":9}}", "1 to 8");
  tc_refused("entity", "{\"refs\":[\"run:r000\"],\"view\":\"lineage\","
                    "\"view_options\":{\"direction\":\"sideways\"}}", "downstream");
}
END_TEST


/* Every view of every kind answers with one well-formed object: a result or
 * an error naming the problem, never a crash or an empty reply. */
START_TEST(entity_every_view)
{
  static const char *const refs[] = {
    "run:r000", "experiment:e1", "project:p1", "artifact:cfg", "dataset:wiki",
    "checkpoint:r000@best", "source:hf-gpt2", "group:g1", "trial:t1", "session:s1",
    "sub-note:sn1", "team-note", "note:n1", NULL};
  static const char *const views[] = {
    "card", "record", "notes", "summary", "overview", "summary_history", "sessions",
    "artifacts", "lineage", "groups", "versions", "reproduce", "code", "inherited",
    "readme", "papers", "trajectory", "trials", "metrics", "views", "handoff", "events",
    "diff", "content", "transcript", NULL};
  int answered = 0, refused_views = 0;
  for (int i = 0; refs[i]; i++) {
    for (int j = 0; views[j]; j++) {
      char args[300];
      snprintf(args, sizeof args, "{\"refs\":[\"%s\"],\"view\":\"%s\",\"token_budget\":600}",
               refs[i], views[j]);
      int e = 0;
      cJSON *o = tc_call("entity", args, &e);
      if (e) {
        ck_assert_msg(*js(o, "message"), "%s: error without a message", args);
        if (strstr(js(o, "message"), "has no view"))
          refused_views++;
      } else {
        answered++;
      }
      cJSON_Delete(o);
    }
  }
  /* the matrix has 70 (kind, view) pairs across these 13 kinds; the rest
   * are refused as views the kind lacks */
  ck_assert_int_ge(answered, 60);
  ck_assert_int_eq(refused_views, 13 * 25 - 71);
  /* specific shapes */
  cJSON *o = tc_ok("entity", "{\"refs\":[\"session:s1\"],\"view\":\"transcript\"}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "transcript")), 1);
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"trial:t1\"],\"view\":\"trajectory\"}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "trajectory")), 1);
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"checkpoint:r000@best\"],\"view\":\"versions\"}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "saves")), 1);
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"dataset:wiki\"],\"view\":\"versions\"}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "versions")), 1);
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"experiment:e1\"],\"view\":\"groups\"}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "groups")), 1);
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"project:p1\"],\"view\":\"sessions\"}");
  cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "sessions"), 0);
  ck_assert_str_eq(js(s, "ref"), "session:s1");
  cJSON_Delete(o);
  o = tc_ok("entity", "{\"refs\":[\"experiment:e1\"],\"view\":\"inherited\"}");
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(o, "config"));
  cJSON_Delete(o);
  tc_refused("entity", "{\"refs\":[\"checkpoint:r000@best\"],\"view\":\"versions\","
                    "\"view_options\":{\"requirement\":\">=2\"}}", "steps, not versions");
}
END_TEST

START_TEST(entity_batch)
{
  cJSON *o = tc_ok("entity", "{\"refs\":[\"run:r000\",\"run:r002\",\"run:nope\",\"project:p1\"]}");
  cJSON *items = cJSON_GetObjectItem(o, "items");
  ck_assert_int_eq(cJSON_GetArraySize(items), 4);
  ck_assert_str_eq(js(cJSON_GetArrayItem(items, 2), "error"), "not_found");
  cJSON_Delete(o);
  tc_refused("entity", "{\"refs\":[]}", "20");
  tc_refused("entity", "{\"refs\":[\"run:a\",\"run:b\",\"run:c\",\"run:d\",\"run:e\",\"run:f\","
                    "\"run:g\",\"run:h\",\"run:i\",\"run:j\",\"run:k\",\"run:l\",\"run:m\",\"run:n\","
                    "\"run:o\",\"run:p\",\"run:q\",\"run:r\",\"run:s\",\"run:t\",\"run:u\"]}", "20");
  tc_refused("browse", "{\"mode\":\"runs\",\"depth\":2}", "depth");
  tc_refused("search", "{\"query\":\"x\",\"mode\":\"tree\"}", "mode");
}
END_TEST

START_TEST(search_channels)
{
  cJSON *o = tc_ok("search", "{\"query\":\"warmup\"}");
  cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "results"), 0);
  ck_assert_str_eq(js(r, "channel"), "keyword");
  ck_assert_str_eq(js(r, "ref"), "note:n1");
  ck_assert(*js(r, "provenance"));
  ck_assert_ptr_nonnull(strstr(js(cJSON_GetObjectItem(o, "channels"), "semantic"),
                               "no model calls"));
  cJSON_Delete(o);
  o = tc_ok("search", "{\"query\":\"deadbeef\"}");
  r = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "results"), 0);
  ck_assert_str_eq(js(r, "channel"), "exact");
  ck_assert_str_eq(js(r, "match"), "sha256");
  cJSON_Delete(o);
  /* kinds narrows the exact channel too */
  o = tc_ok("search", "{\"query\":\"deadbeef\",\"kinds\":[\"run\"]}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "results")), 0);
  cJSON_Delete(o);
  o = tc_ok("search", "{\"query\":\"r005\"}");
  r = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "results"), 0);
  ck_assert_str_eq(js(r, "ref"), "run:r005");
  ck_assert_str_eq(js(r, "match"), "id");
  cJSON_Delete(o);
  o = tc_ok("search", "{\"query\":\"run number\",\"semantic\":true}");
  ck_assert_ptr_nonnull(strstr(js(cJSON_GetObjectItem(o, "channels"), "semantic"),
                               "no embeddings endpoint"));
  cJSON_Delete(o);
}
END_TEST

START_TEST(search_pagination)
{
  char seen[64][16];
  int n_seen = 0, pages = 0;
  const char *cursor = NULL;
  cJSON *prev = NULL;
  for (;;) {
    char args[3000];
    if (cursor)
      snprintf(args, sizeof args, "{\"query\":\"run number\",\"limit\":50,\"token_budget\":%d,"
               "\"cursor\":\"%s\"}", pages % 2 ? 512 : 700, cursor);
    else
      snprintf(args, sizeof args, "{\"query\":\"run number\",\"limit\":50,\"token_budget\":512}");
    cJSON *o = tc_ok("search", args);
    pages++;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(o, "results"))
    {
      for (int i = 0; i < n_seen; i++)
        ck_assert_str_ne(seen[i], js(r, "ref"));
      snprintf(seen[n_seen++], 16, "%s", js(r, "ref"));
    }
    cJSON_Delete(prev);
    prev = o;
    cursor = *js(o, "next_cursor") ? js(o, "next_cursor") : NULL;
    if (!cursor)
      break;
    ck_assert_int_lt(pages, 40);
  }
  cJSON_Delete(prev);
  /* 30 runs match; the deleted r001 is left out */
  ck_assert_int_eq(n_seen, 29);
  for (int i = 0; i < n_seen; i++)
    ck_assert_str_ne(seen[i], "run:r001");
  ck_assert_int_gt(pages, 1);
  cJSON *o = tc_ok("search", "{\"query\":\"r001\"}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "results")), 0);
  cJSON_Delete(o);
  o = tc_ok("search", "{\"query\":\"r001\",\"include_deleted\":true}");
  const cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "results"), 0);
  ck_assert_str_eq(js(r, "ref"), "run:r001");
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r, "deleted")));
  cJSON_Delete(o);
}
END_TEST

START_TEST(resources_and_prompts)
{
  cJSON *r = tc_rpc("resources/read", "{\"uri\":\"probe://run/r000\"}");
  char *t = cJSON_PrintUnformatted(r);
  ck_assert_ptr_nonnull(strstr(t, "available_views"));
  cJSON_free(t);
  cJSON_Delete(r);
  r = tc_rpc("prompts/get", "{\"name\":\"reproduce_run\",\"arguments\":{\"run\":\"run:r000\"}}");
  t = cJSON_PrintUnformatted(r);
  ck_assert_ptr_nonnull(strstr(t, "view=reproduce"));
  cJSON_free(t);
  cJSON_Delete(r);
  r = tc_rpc("prompts/list", "{}");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"),
                                                          "prompts")), 4);
  cJSON_Delete(r);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("research-tools");
  TCase *t = tcase_create("tools");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, register_refuses_writable_store);
  tcase_add_test(t, tools_list_is_read_only);
  tcase_add_test(t, browse_tree_root);
  tcase_add_test(t, browse_tree_nested_cursor);
  tcase_add_test(t, browse_runs_pagination);
  tcase_add_test(t, browse_runs_filters);
  tcase_add_test(t, browse_other_modes);
  tcase_add_test(t, browse_cursor_refusals);
  tcase_add_test(t, entity_card_and_views);
  tcase_add_test(t, entity_record_fields);
  tcase_add_test(t, entity_record_fragments);
  tcase_add_test(t, entity_document_pinned);
  tcase_add_test(t, entity_notes_overview);
  tcase_add_test(t, entity_content);
  tcase_add_test(t, entity_versions);
  tcase_add_test(t, entity_lineage);
  tcase_add_test(t, entity_every_view);
  tcase_add_test(t, entity_batch);
  tcase_add_test(t, search_channels);
  tcase_add_test(t, search_pagination);
  tcase_add_test(t, resources_and_prompts);
  suite_add_tcase(s, t);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
