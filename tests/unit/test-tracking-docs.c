/* The tracking toolset's docs tools: list_docs names the README and every
 * man page found in the source tree's man/ folder (read here, not from the
 * library); get_doc returns a page as markdown, whole when it fits and in
 * pieces cut at line ends otherwise, whose concatenation is the whole page;
 * every piece fits its budget; refusals name the problem. */
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
  ck_assert_int_gt(pages, 1); /* 512 tokens cannot hold them all */
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

START_TEST(lists_every_page)
{
  cJSON *all = all_docs();
  ck_assert_ptr_nonnull(doc_named(all, "README"));
  /* every man page of the source tree, read here */
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/man", src_dir());
  DIR *dh = opendir(dir);
  ck_assert_ptr_nonnull(dh);
  struct dirent *e;
  int pages = 0;
  while ((e = readdir(dh))) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 4, ".scd"))
      continue;
    char page[256];
    snprintf(page, sizeof page, "%.*s", (int)(n - 4), e->d_name);
    const cJSON *d = doc_named(all, page);
    ck_assert_msg(d != NULL, "man page %s is not served", page);
    /* the URL is the man page's name and section */
    char url[300];
    const char *dot = strrchr(page, '.');
    snprintf(url, sizeof url, "man:%.*s(%s)", (int)(dot - page), page, dot + 1);
    ck_assert_str_eq(cJSON_GetObjectItem(d, "url")->valuestring, url);
    ck_assert_msg(strstr(cJSON_GetObjectItem(d, "title")->valuestring, url + 4) != NULL,
                  "title of %s", page);
    pages++;
  }
  closedir(dh);
  ck_assert_int_gt(pages, 10);
  ck_assert_int_eq(cJSON_GetArraySize(all), pages + 1);
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
  char *small = read_pieces("pmcp_page.3", 512, &pieces_small, &total);
  char *big = read_pieces("pmcp_page.3", 8000, &pieces_big, &total);
  ck_assert_int_gt(pieces_small, pieces_big);
  ck_assert_str_eq(small, big);
  /* character count: UTF-8 code points */
  size_t chars = 0;
  for (const char *p = big; *p; p++)
    chars += ((unsigned char)*p & 0xC0) != 0x80;
  ck_assert_uint_eq(chars, total);
  /* scdoc became markdown: a title, headings, bold, a code block */
  ck_assert_msg(!strncmp(big, "# pmcp_page(3)\n", 15), "%.40s", big);
  ck_assert_ptr_nonnull(strstr(big, "\n## SYNOPSIS\n"));
  ck_assert_ptr_nonnull(strstr(big, "\n```\n#include <probemcp/probemcp.h>\n"));
  ck_assert_ptr_nonnull(strstr(big, "**PMCP_TOOL_BUDGETED**"));
  free(small);
  free(big);
}
END_TEST

START_TEST(markdown_of_man_pages)
{
  cJSON *o = tc_ok("get_doc", "{\"page\":\"man:probe-mcp-stdio(1)\",\"token_budget\":8000}");
  const char *md = cJSON_GetObjectItem(o, "markdown")->valuestring;
  /* an option list: the term, then its text as the item's paragraph */
  ck_assert_ptr_nonnull(strstr(md, "\n- **--store** *S*\n  The store to read"));
  /* snake_case and $VARS inside underlines stay whole */
  ck_assert_ptr_nonnull(strstr(md, "*$PROBE_STORE*"));
  /* escapes in a literal block are read as scdoc reads them */
  ck_assert_ptr_nonnull(strstr(md, "printf '%s\\n' \\\n"));
  cJSON_Delete(o);
  /* a table */
  o = tc_ok("get_doc", "{\"page\":\"libprobemcp-errors\",\"token_budget\":8000}");
  md = cJSON_GetObjectItem(o, "markdown")->valuestring;
  ck_assert_ptr_nonnull(strstr(md, "| PMCP_ENOMEM | -1 | -32603 | out of memory |"));
  cJSON_Delete(o);
  /* the README as it is in the tree */
  char path[1024];
  snprintf(path, sizeof path, "%s/README.md", src_dir());
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  char head[200] = {0};
  ck_assert_uint_gt(fread(head, 1, sizeof head - 1, f), 0);
  fclose(f);
  o = tc_ok("get_doc", "{\"page\":\"README.md\",\"token_budget\":512}");
  md = cJSON_GetObjectItem(o, "markdown")->valuestring;
  size_t n = strlen(md) < strlen(head) ? strlen(md) : strlen(head);
  ck_assert_int_eq(strncmp(md, head, n), 0);
  ck_assert_str_eq(cJSON_GetObjectItem(o, "page")->valuestring, "README");
  cJSON_Delete(o);
}
END_TEST

START_TEST(refusals)
{
  tc_refused("get_doc", "{\"page\":\"no-such-page.1\"}", "no-such-page.1");
  tc_refused("get_doc", "{\"page\":\"README\",\"offset\":9999999}", "past the end");
  tc_refused("get_doc", "{}", "page");
  tc_refused("get_doc", "{\"page\":\"README\",\"cursor\":\"abc\"}", "offset");
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
  tcase_add_test(tc, markdown_of_man_pages);
  tcase_add_test(tc, refusals);
  suite_add_tcase(s, tc);
  return st_run_suite(s);
}
