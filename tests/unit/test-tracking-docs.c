/* SPDX-License-Identifier: MIT */
/* The tracking toolset's docs tools: list_docs names every page of the
 * source tree's docs/agent folder (read here, not from the library), with
 * its first heading as title; get_doc returns a page as markdown, whole
 * when it fits and in pieces cut at line ends otherwise, whose
 * concatenation is the file; refusals name the problem. (That the pages
 * name only tools, arguments and operators that exist is the
 * tracking-docs-pages test's.) */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-test-util.h"
#include "tool-call-util.h"

static pmcp_store *RO;

static void setup(void)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  pmcp_store_free(s);
  ck_assert_int_eq(pmcp_store_open(&RO, st_path, PMCP_STORE_READONLY), 0);
  tc_server_new();
  ck_assert_int_eq(pmcp_tracking_register(tc_server(), RO, NULL), 0);
  tc_initialize();
}

static void teardown(void)
{
  tc_server_free();
  pmcp_store_free(RO);
  RO = NULL;
  st_cleanup();
}

static const char *src_dir(void)
{
  const char *d = getenv("PMCP_SOURCE_ROOT");
  ck_assert_msg(d && *d, "PMCP_SOURCE_ROOT is not set");
  return d;
}

/* Every list_docs item over all pages (offset paging at a small budget). */
static cJSON *all_docs(void)
{
  cJSON *all = cJSON_CreateArray();
  int offset = 0, pages = 0;
  while (offset >= 0 && pages++ < 100) {
    char args[120];
    snprintf(args, sizeof args, "{\"token_budget\":512,\"offset\":%d}", offset);
    cJSON *o = tc_ok("list_docs", args);
    cJSON *d;
    int n = 0;
    cJSON_ArrayForEach(d, cJSON_GetObjectItem(o, "docs"))
    {
      cJSON_AddItemToArray(all, cJSON_Duplicate(d, 1));
      n++;
    }
    ck_assert_int_eq(cJSON_GetObjectItem(o, "count")->valueint, n);
    const cJSON *next = cJSON_GetObjectItem(o, "next_offset");
    ck_assert(!next || next->valueint == offset + n);
    offset = next ? next->valueint : -1;
    cJSON_Delete(o);
  }
  return all;
}

static const cJSON *doc_named(const cJSON *all, const char *page)
{
  const cJSON *d;
  cJSON_ArrayForEach(d, all)
  if (!strcmp(cJSON_GetObjectItem(d, "page")->valuestring, page))
    return d;
  return NULL;
}

/* The text of docs/agent/@p file (malloc'd). */
static char *page_file(const char *file)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/docs/agent/%s", src_dir(), file);
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "%s", path);
  char *buf = malloc(1 << 20);
  size_t n = fread(buf, 1, (1 << 20) - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

START_TEST(lists_every_page)
{
  cJSON *all = all_docs();
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/docs/agent", src_dir());
  DIR *dh = opendir(dir);
  ck_assert_ptr_nonnull(dh);
  struct dirent *e;
  int pages = 0;
  while ((e = readdir(dh))) {
    size_t n = strlen(e->d_name);
    if (n < 4 || strcmp(e->d_name + n - 3, ".md"))
      continue;
    char page[256], url[300];
    snprintf(page, sizeof page, "%.*s", (int)(n - 3), e->d_name);
    const cJSON *d = doc_named(all, page);
    ck_assert_msg(d != NULL, "page %s is not served", page);
    snprintf(url, sizeof url, "docs/agent/%s", e->d_name);
    ck_assert_str_eq(cJSON_GetObjectItem(d, "url")->valuestring, url);
    /* the title is the page's first heading */
    char *text = page_file(e->d_name);
    ck_assert_msg(!strncmp(text, "# ", 2), "%s starts with its heading", page);
    const char *title = cJSON_GetObjectItem(d, "title")->valuestring;
    ck_assert_msg(!strncmp(text + 2, title, strlen(title)) && text[2 + strlen(title)] == '\n',
                  "title of %s: %s", page, title);
    free(text);
    pages++;
  }
  closedir(dh);
  ck_assert_int_ge(pages, 4);
  ck_assert_int_eq(cJSON_GetArraySize(all), pages);
  cJSON_Delete(all);
}
END_TEST

/* Reads @p page in pieces at @p budget; returns the concatenation. */
static char *read_pieces(const char *page, int budget, int *n_pieces, size_t *total)
{
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  int offset = 0, pieces = 0;
  while (offset >= 0 && pieces < 1000) {
    char args[300];
    snprintf(args, sizeof args, "{\"page\":\"%s\",\"token_budget\":%d,\"offset\":%d}", page,
             budget, offset);
    cJSON *o = tc_ok("get_doc", args);
    const char *md = cJSON_GetObjectItem(o, "markdown")->valuestring;
    ck_assert_int_eq(cJSON_GetObjectItem(o, "offset")->valueint, offset);
    *total = (size_t)cJSON_GetObjectItem(o, "total_chars")->valuedouble;
    size_t n = strlen(md);
    ck_assert_uint_gt(n, 0);
    ck_assert_int_eq(cJSON_GetObjectItem(o, "count")->valueint, 1); /* one piece */
    while (len + n + 1 > cap)
      buf = realloc(buf, cap *= 2);
    memcpy(buf + len, md, n);
    len += n;
    const cJSON *next = cJSON_GetObjectItem(o, "next_offset");
    if (next) {
      /* cut at a line end, and the offset continues right after it */
      ck_assert_msg(md[n - 1] == '\n', "piece of %s not cut at a line end", page);
      ck_assert_int_eq(next->valueint,
                       offset + cJSON_GetObjectItem(o, "chars")->valueint);
      ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "truncated")));
      offset = next->valueint;
    } else {
      ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "truncated")));
      offset = -1;
    }
    pieces++;
    cJSON_Delete(o);
  }
  buf[len] = '\0';
  *n_pieces = pieces;
  return buf;
}

START_TEST(get_doc_pieces)
{
  int pieces_small = 0, pieces_big = 0;
  size_t total = 0;
  char *small = read_pieces("filters", 512, &pieces_small, &total);
  char *big = read_pieces("filters", 8000, &pieces_big, &total);
  ck_assert_int_gt(pieces_small, pieces_big);
  ck_assert_str_eq(small, big);
  /* character count: UTF-8 code points */
  size_t chars = 0;
  for (const char *p = big; *p; p++)
    chars += ((unsigned char)*p & 0xC0) != 0x80;
  ck_assert_uint_eq(chars, total);
  /* the page as it is in the tree */
  char *file = page_file("filters.md");
  ck_assert_str_eq(big, file);
  free(file);
  free(small);
  free(big);
}
END_TEST

START_TEST(pages_by_name_and_url)
{
  static const char *const names[] = {"rl", "rl.md", "docs/agent/rl.md"};
  char *file = page_file("rl.md");
  for (size_t i = 0; i < 3; i++) {
    char args[200];
    snprintf(args, sizeof args, "{\"page\":\"%s\",\"token_budget\":8000}", names[i]);
    cJSON *o = tc_ok("get_doc", args);
    ck_assert_str_eq(cJSON_GetObjectItem(o, "page")->valuestring, "rl");
    ck_assert_str_eq(cJSON_GetObjectItem(o, "markdown")->valuestring, file);
    ck_assert_int_eq(cJSON_GetObjectItem(o, "count")->valueint, 1);
    cJSON_Delete(o);
  }
  free(file);
}
END_TEST

START_TEST(refusals)
{
  tc_refused("get_doc", "{\"page\":\"no-such-page.1\"}", "no-such-page.1");
  tc_refused("get_doc", "{\"page\":\"filters\",\"offset\":9999999}", "past the end");
  tc_refused("get_doc", "{}", "page");
  tc_refused("get_doc", "{\"page\":\"filters\",\"cursor\":\"abc\"}", "offset");
  tc_refused("get_doc", "{\"page\":\"README\"}", "list_docs");
  tc_refused("list_docs", "{\"cursor\":\"abc\"}", "offset");
  tc_refused("list_docs", "{\"limit\":0}", "limit");
}
END_TEST

int main(void)
{
  Suite *s = suite_create("tracking-docs");
  TCase *tc = tcase_create("docs");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, lists_every_page);
  tcase_add_test(tc, get_doc_pieces);
  tcase_add_test(tc, pages_by_name_and_url);
  tcase_add_test(tc, refusals);
  suite_add_tcase(s, tc);
  return st_run_suite(s);
}
