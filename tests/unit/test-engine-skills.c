/* SPDX-License-Identifier: MIT */
/* The skills registry: registration refusals (each naming the problem and
 * leaving the registry as it was), the extension declared in both eras only
 * with a skill, skills/list paging, skills/get, the frontmatter as JSON,
 * and manifests whose digests and sizes (computed here independently, by
 * Python's hashlib when the test was written) match the bytes
 * resources/read returns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine-harness.h"

#define META                                                                         \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","           \
  "\"io.modelcontextprotocol/clientCapabilities\":{}}"

static const char SKILL_A[] =
    "---\nname: git-workflow\ndescription: Follow the team's Git rules\n"
    "license: Apache-2.0\nmetadata:\n  version: 2\n  audited: true\n  tags: [a, b]\n"
    "---\n# Git\n\nSee reference/x.md.\n";
static const char REF_A[] = "# ref\n\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9 \xe2\x9c\x93\n";
static const char SKILL_B[] =
    "---\nname: refunds\ndescription: \"Refunds: per policy\"\n---\nbody\n";

/* sha256 and byte counts of the three texts above (hashlib). */
#define DIGEST_A "sha256:34185976f859e1d67b43b8daa768be4c8c7567951c4f7a9b090e07c5b3edcb94"
#define DIGEST_REF "sha256:403f90c29802e07e4fc93f3f769f7cf9b064e671a35a9dd1990ffe43c1795fb9"
#define DIGEST_B "sha256:db7b6ceb808fec9f1e2365af5ceb4657c31273cc1c50444ca6245e1985ed1239"

static int add(harness *h, const char *path, const pmcp_skill_file *files, size_t n)
{
  pmcp_skill_def d = PMCP_SKILL_DEF_INIT;
  d.path = path;
  d.files = files;
  d.n_files = n;
  return pmcp_server_add_skill(h->srv, &d);
}

static int add_one(harness *h, const char *path, const char *md)
{
  pmcp_skill_file f = {"SKILL.md", NULL, md, strlen(md)};
  return add(h, path, &f, 1);
}

static void add_fixtures(harness *h)
{
  pmcp_skill_file a[] = {{"SKILL.md", NULL, SKILL_A, sizeof SKILL_A - 1},
                         {"reference/x.md", NULL, REF_A, sizeof REF_A - 1}};
  ck_assert_int_eq(add(h, "git-workflow", a, 2), 0);
  ck_assert_int_eq(add_one(h, "acme/billing/refunds", SKILL_B), 0);
}

static cJSON *call(harness *h, const char *json)
{
  return h_call(h, NULL, json);
}

static const cJSON *member(const cJSON *o, const char *k)
{
  return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* Every resources/list entry, over all pages. */
static cJSON *all_resources(harness *h)
{
  cJSON *all = cJSON_CreateArray();
  char cursor[64] = "";
  for (int page = 0; page < 1000; page++) {
    char req[200];
    snprintf(req, sizeof req,
             "{\"jsonrpc\":\"2.0\",\"id\":90,\"method\":\"resources/list\",\"params\":{%s%s%s}}",
             cursor[0] ? "\"cursor\":\"" : "", cursor, cursor[0] ? "\"" : "");
    cJSON *r = call(h, req);
    const cJSON *e;
    cJSON_ArrayForEach(e, member(h_result(r), "resources"))
    cJSON_AddItemToArray(all, cJSON_Duplicate(e, 1));
    const cJSON *next = member(h_result(r), "nextCursor");
    snprintf(cursor, sizeof cursor, "%s", cJSON_IsString(next) ? next->valuestring : "");
    cJSON_Delete(r);
    if (!cursor[0])
      break;
  }
  return all;
}

/* The number of resources/list entries whose uri starts with skill://. */
static int skill_resources(harness *h)
{
  cJSON *all = all_resources(h);
  int n = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, all)
  n += strncmp(member(e, "uri")->valuestring, "skill://", 8) == 0;
  cJSON_Delete(all);
  return n;
}

static int never_read(pmcp_call *call, void *ud)
{
  (void)call;
  (void)ud;
  ck_abort_msg("the squatting resource is never read");
  return 0;
}

START_TEST(refusals)
{
  harness *h = h_new(NULL);
  struct {
    const char *path, *md;
    int rc;
    const char *needle;
  } cases[] = {
      {"x", "no frontmatter\n", PMCP_EINVAL, "does not begin with YAML frontmatter"},
      {"x", "---\nname: x\ndescription: d\n", PMCP_EINVAL, "no closing line"},
      {"x", "---\nname: y\ndescription: d\n---\n", PMCP_EINVAL, "differs from the path"},
      {"Bad_Name", "---\nname: Bad_Name\ndescription: d\n---\n", PMCP_EINVAL,
       "lower-case"},
      {"a--b", "---\nname: a--b\ndescription: d\n---\n", PMCP_EINVAL, "single hyphens"},
      {"x", "---\nname: x\n---\n", PMCP_EINVAL, "\"description\""},
      {"x", "---\nname: x\ndescription: \"\"\n---\n", PMCP_EINVAL, "non-empty"},
      {"x", "---\nname: x\ndescription: [d\n---\n", PMCP_EINVAL, "SKILL.md line"},
      {"x", "---\nname: x\nname: x\ndescription: d\n---\n", PMCP_EINVAL, "twice"},
      {"a//x", "---\nname: x\ndescription: d\n---\n", PMCP_EINVAL, "skill path"},
      {"../x", "---\nname: x\ndescription: d\n---\n", PMCP_EINVAL, "skill path"},
      {"a b/x", "---\nname: x\ndescription: d\n---\n", PMCP_EINVAL, "skill path"},
      {"", "---\nname: x\ndescription: d\n---\n", PMCP_EINVAL, "skill path"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc = add_one(h, cases[i].path, cases[i].md);
    ck_assert_msg(rc == cases[i].rc, "case %zu: rc %d", i, rc);
    ck_assert_msg(strstr(pmcp_server_errmsg(h->srv), cases[i].needle),
                  "case %zu: '%s' lacks '%s'", i, pmcp_server_errmsg(h->srv),
                  cases[i].needle);
  }
  const char *ok = "---\nname: x\ndescription: d\n---\n";
  /* files: bad paths, not text, twice, no SKILL.md */
  pmcp_skill_file bad_path[] = {{"SKILL.md", NULL, ok, strlen(ok)}, {"../up", NULL, "a", 1}};
  ck_assert_int_eq(add(h, "x", bad_path, 2), PMCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(pmcp_server_errmsg(h->srv), "'../up'"));
  pmcp_skill_file nul[] = {{"SKILL.md", NULL, ok, strlen(ok)}, {"b.bin", NULL, "a\0b", 3}};
  ck_assert_int_eq(add(h, "x", nul, 2), PMCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(pmcp_server_errmsg(h->srv), "not UTF-8 text"));
  pmcp_skill_file latin1[] = {{"SKILL.md", NULL, ok, strlen(ok)}, {"l.txt", NULL, "\xe9", 1}};
  ck_assert_int_eq(add(h, "x", latin1, 2), PMCP_EINVAL);
  pmcp_skill_file twice[] = {{"SKILL.md", NULL, ok, strlen(ok)}, {"SKILL.md", NULL, ok, 3}};
  ck_assert_int_eq(add(h, "x", twice, 2), PMCP_EEXIST);
  pmcp_skill_file none[] = {{"README.md", NULL, "r", 1}};
  ck_assert_int_eq(add(h, "x", none, 1), PMCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(pmcp_server_errmsg(h->srv), "no SKILL.md"));
  /* over the per-skill limits every host accepts */
  pmcp_skill_file *many = calloc(513, sizeof *many);
  char (*names)[16] = calloc(513, sizeof *names);
  many[0] = (pmcp_skill_file){"SKILL.md", NULL, ok, strlen(ok)};
  for (int i = 1; i < 513; i++) {
    snprintf(names[i], sizeof names[i], "f%d.txt", i);
    many[i] = (pmcp_skill_file){names[i], NULL, "t", 1};
  }
  ck_assert_int_eq(add(h, "x", many, 513), PMCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(pmcp_server_errmsg(h->srv), "512"));
  ck_assert_int_eq(add(h, "x", many, 512), 0); /* at the limit: served */
  free(many);
  free(names);
  ck_assert_int_eq(add_one(h, "x", ok), PMCP_EEXIST);
  /* a URI taken by an ordinary resource */
  pmcp_resource_def r = PMCP_RESOURCE_DEF_INIT;
  r.uri = "skill://y/SKILL.md";
  r.name = "squatter";
  r.read = never_read;
  ck_assert_int_eq(pmcp_server_add_resource(h->srv, &r), 0);
  ck_assert_int_eq(add_one(h, "y", "---\nname: y\ndescription: d\n---\n"), PMCP_EEXIST);
  /* adding files */
  pmcp_skill_file more = {"SKILL.md", NULL, ok, strlen(ok)};
  ck_assert_int_eq(pmcp_server_add_skill_files(h->srv, "nope", &more, 1), PMCP_ENOTFOUND);
  ck_assert_int_eq(pmcp_server_add_skill_files(h->srv, "x", &more, 1), PMCP_EEXIST);
  pmcp_skill_file w[] = {{"SKILL.md", NULL, "---\nname: w\ndescription: d\n---\n", 31},
                         {"f1.txt", NULL, "t", 1}};
  ck_assert_int_eq(add(h, "w", w, 2), 0);
  more.path = "f1.txt";
  ck_assert_int_eq(pmcp_server_add_skill_files(h->srv, "w", &more, 1), PMCP_EEXIST);
  ck_assert_ptr_nonnull(strstr(pmcp_server_errmsg(h->srv), "has a file 'f1.txt' already"));
  more.path = "extra.txt";
  ck_assert_int_eq(pmcp_server_add_skill_files(h->srv, "x", &more, 1), PMCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(pmcp_server_errmsg(h->srv), "512"));
  pmcp_skill_def v = PMCP_SKILL_DEF_INIT;
  v.version = 99;
  ck_assert_int_eq(pmcp_server_add_skill(h->srv, &v), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_server_add_skill(NULL, &v), PMCP_EMISUSE);
  /* every refusal left nothing behind: the files of x and w, and the
   * resource that took y's URI */
  h_init(h, "", "2025-11-25");
  ck_assert_int_eq(skill_resources(h), 512 + 2 + 1);
  ck_assert_int_eq(add_one(h, "z", "---\nname: z\ndescription: d\n---\n"), PMCP_EMISUSE);
  h_free(h);
}
END_TEST

static int has_skills_ext(const cJSON *caps)
{
  const cJSON *e = member(member(caps, "extensions"), "io.modelcontextprotocol/skills");
  return cJSON_IsObject(e) && !e->child;
}

START_TEST(negotiation)
{
  for (int with = 0; with < 2; with++) {
    harness *h = h_new(NULL);
    if (with)
      add_fixtures(h);
    cJSON *r = call(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                       "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                       "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    const cJSON *caps = member(h_result(r), "capabilities");
    ck_assert_int_eq(has_skills_ext(caps), with);
    ck_assert_int_eq(member(caps, "resources") != NULL, with);
    if (!with)
      ck_assert_ptr_null(member(caps, "extensions"));
    cJSON_Delete(r);
    h_send(h, NULL, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    r = call(h, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"server/discover\",\"params\":{"
                META "}}");
    caps = member(h_result(r), "capabilities");
    ck_assert_int_eq(has_skills_ext(caps), with);
    ck_assert_int_eq(member(caps, "resources") != NULL, with);
    cJSON_Delete(r);
    const char *asks[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"skills/list\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"skills/list\",\"params\":{" META "}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"skills/get\",\"params\":"
        "{\"uri\":\"skill://git-workflow/SKILL.md\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"skills/get\",\"params\":"
        "{\"uri\":\"skill://git-workflow/SKILL.md\"," META "}}",
    };
    for (size_t i = 0; i < 4; i++) {
      r = call(h, asks[i]);
      ck_assert_int_eq(h_error_code(r), with ? 0 : -32601);
      cJSON_Delete(r);
    }
    h_free(h);
  }
}
END_TEST

/* Checks a manifest entry: uri, digest and size, and that resources/read
 * returns those very bytes. */
static void check_file(harness *h, const cJSON *e, const char *uri, const char *digest,
                       const char *bytes, size_t n)
{
  ck_assert_str_eq(member(e, "uri")->valuestring, uri);
  ck_assert_str_eq(member(e, "digest")->valuestring, digest);
  ck_assert_int_eq((int)member(e, "size")->valuedouble, (int)n);
  char req[300];
  snprintf(req, sizeof req,
           "{\"jsonrpc\":\"2.0\",\"id\":50,\"method\":\"resources/read\",\"params\":"
           "{\"uri\":\"%s\"}}", uri);
  cJSON *r = call(h, req);
  const cJSON *c = cJSON_GetArrayItem(member(h_result(r), "contents"), 0);
  ck_assert_str_eq(member(c, "uri")->valuestring, uri);
  const char *text = member(c, "text")->valuestring;
  ck_assert_int_eq(strlen(text), n);
  ck_assert(memcmp(text, bytes, n) == 0);
  cJSON_Delete(r);
}

START_TEST(list_and_get)
{
  harness *h = h_new(NULL);
  add_fixtures(h);
  ck_assert_int_eq(pmcp_server_set_page_size(h->srv, 1), 0);
  ck_assert_int_eq(pmcp_server_set_cache_hints(h->srv, 60000, 0), 0);
  h_init(h, "", "2025-11-25");
  cJSON *p1 = call(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"skills/list\"}");
  const cJSON *s = member(h_result(p1), "skills");
  ck_assert_int_eq(cJSON_GetArraySize(s), 1);
  const cJSON *a = cJSON_GetArrayItem(s, 0);
  ck_assert_str_eq(member(a, "uri")->valuestring, "skill://git-workflow/SKILL.md");
  cJSON *want = cJSON_Parse("{\"name\":\"git-workflow\",\"description\":\"Follow the "
                            "team's Git rules\",\"license\":\"Apache-2.0\",\"metadata\":"
                            "{\"version\":2,\"audited\":true,\"tags\":[\"a\",\"b\"]}}");
  ck_assert(cJSON_Compare(member(a, "frontmatter"), want, 1));
  cJSON_Delete(want);
  const cJSON *files = member(a, "resources");
  ck_assert_int_eq(cJSON_GetArraySize(files), 2);
  check_file(h, cJSON_GetArrayItem(files, 0), "skill://git-workflow/SKILL.md", DIGEST_A,
             SKILL_A, sizeof SKILL_A - 1);
  check_file(h, cJSON_GetArrayItem(files, 1), "skill://git-workflow/reference/x.md",
             DIGEST_REF, REF_A, sizeof REF_A - 1);
  /* the next page, then the end */
  const cJSON *next = member(h_result(p1), "nextCursor");
  ck_assert(cJSON_IsString(next));
  char req[300];
  snprintf(req, sizeof req,
           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"skills/list\",\"params\":"
           "{\"cursor\":\"%s\"}}", next->valuestring);
  cJSON *p2 = call(h, req);
  ck_assert_ptr_null(member(h_result(p2), "nextCursor"));
  const cJSON *b = cJSON_GetArrayItem(member(h_result(p2), "skills"), 0);
  ck_assert_str_eq(member(b, "uri")->valuestring, "skill://acme/billing/refunds/SKILL.md");
  ck_assert_str_eq(member(member(b, "frontmatter"), "description")->valuestring,
                   "Refunds: per policy");
  check_file(h, cJSON_GetArrayItem(member(b, "resources"), 0),
             "skill://acme/billing/refunds/SKILL.md", DIGEST_B, SKILL_B,
             sizeof SKILL_B - 1);
  /* skills/get answers the same entry */
  cJSON *g = call(h, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"skills/get\",\"params\":"
                     "{\"uri\":\"skill://acme/billing/refunds/SKILL.md\"}}");
  ck_assert(cJSON_Compare(member(h_result(g), "skill"), b, 1));
  cJSON_Delete(g);
  cJSON_Delete(p2);
  /* the SKILL.md resource is named and described by the frontmatter; every
   * skill file lists its size */
  cJSON *rl = all_resources(h);
  const cJSON *e;
  int seen = 0;
  cJSON_ArrayForEach(e, rl)
  {
    if (strcmp(member(e, "uri")->valuestring, "skill://git-workflow/SKILL.md") == 0) {
      ck_assert_str_eq(member(e, "name")->valuestring, "git-workflow");
      ck_assert_str_eq(member(e, "description")->valuestring, "Follow the team's Git rules");
      ck_assert_str_eq(member(e, "mimeType")->valuestring, "text/markdown");
      ck_assert_int_eq((int)member(e, "size")->valuedouble, (int)sizeof SKILL_A - 1);
      seen++;
    }
    if (strcmp(member(e, "uri")->valuestring, "skill://git-workflow/reference/x.md") == 0) {
      ck_assert_str_eq(member(e, "name")->valuestring, "reference/x.md");
      ck_assert_str_eq(member(e, "description")->valuestring,
                       "A file of the skill git-workflow");
      ck_assert_int_eq((int)member(e, "size")->valuedouble, (int)sizeof REF_A - 1);
      seen++;
    }
  }
  ck_assert_int_eq(seen, 2);
  cJSON_Delete(rl);
  /* unknown skills, a supporting file, no uri */
  const char *bad[] = {
      "{\"uri\":\"skill://nope/SKILL.md\"}",
      "{\"uri\":\"skill://git-workflow/reference/x.md\"}",
      "{\"uri\":\"skill://git-workflow\"}",
      "{}",
      "{\"uri\":7}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(req, sizeof req,
             "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"skills/get\",\"params\":%s}", bad[i]);
    cJSON *r = call(h, req);
    ck_assert_int_eq(h_error_code(r), -32602);
    ck_assert_ptr_nonnull(strstr(h_error_message(r), i < 3 ? "no skill is served at skill://"
                                                           : "needs a string \"uri\""));
    cJSON_Delete(r);
  }
  /* a bad cursor */
  cJSON *r = call(h, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"skills/list\",\"params\":"
                     "{\"cursor\":\"r1\"}}");
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);
  /* the 2026-07-28 era: complete and cacheable, as the other lists */
  r = call(h, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"skills/list\",\"params\":{" META
              "}}");
  const cJSON *res = h_result(r);
  ck_assert_str_eq(member(res, "resultType")->valuestring, "complete");
  ck_assert_int_eq((int)member(res, "ttlMs")->valuedouble, 60000);
  ck_assert_str_eq(member(res, "cacheScope")->valuestring, "public");
  ck_assert(cJSON_Compare(cJSON_GetArrayItem(member(res, "skills"), 0), a, 1));
  cJSON_Delete(r);
  r = call(h, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"skills/get\",\"params\":{"
              "\"uri\":\"skill://git-workflow/SKILL.md\"," META "}}");
  res = h_result(r);
  ck_assert_str_eq(member(res, "resultType")->valuestring, "complete");
  ck_assert_int_eq((int)member(res, "ttlMs")->valuedouble, 60000);
  ck_assert(cJSON_Compare(member(res, "skill"), a, 1));
  cJSON_Delete(r);
  r = call(h, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"skills/get\",\"params\":{"
              "\"uri\":\"skill://nope/SKILL.md\"," META "}}");
  ck_assert_int_eq(h_error_code(r), -32602);
  cJSON_Delete(r);
  cJSON_Delete(p1);
  h_free(h);
}
END_TEST

START_TEST(files_added_later)
{
  harness *h = h_new(NULL);
  add_fixtures(h);
  pmcp_skill_file more = {"extra.json", NULL, "{\"k\":1}", 7};
  ck_assert_int_eq(pmcp_server_add_skill_files(h->srv, "acme/billing/refunds", &more, 1), 0);
  h_init(h, "", "2025-11-25");
  cJSON *g = call(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"skills/get\",\"params\":"
                     "{\"uri\":\"skill://acme/billing/refunds/SKILL.md\"}}");
  const cJSON *files = member(member(h_result(g), "skill"), "resources");
  ck_assert_int_eq(cJSON_GetArraySize(files), 2);
  check_file(h, cJSON_GetArrayItem(files, 1), "skill://acme/billing/refunds/extra.json",
             "sha256:a0da1fce57d0e4f9f0ae4e4cbe040d34dcc046255c6c8d18e97f55aaed0655f0",
             "{\"k\":1}", 7);
  cJSON_Delete(g);
  cJSON *r = call(h, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":"
                     "{\"uri\":\"skill://acme/billing/refunds/extra.json\"}}");
  const cJSON *c = cJSON_GetArrayItem(member(h_result(r), "contents"), 0);
  ck_assert_str_eq(member(c, "mimeType")->valuestring, "application/json");
  cJSON_Delete(r);
  h_free(h);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("engine-skills");
  TCase *tc = tcase_create("skills");
  tcase_add_test(tc, refusals);
  tcase_add_test(tc, negotiation);
  tcase_add_test(tc, list_and_get);
  tcase_add_test(tc, files_added_later);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
