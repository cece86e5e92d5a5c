/* SPDX-License-Identifier: MIT */
/* pmcp_page_offsets(): pages continued by offset. Over a listing of items
 * of varied size, every page fits its budget, next_offset is the first
 * item not returned (also when the budget cut the page), truncated and the
 * hint appear only when the budget cut it, a page ended by the caller's
 * limit is not truncated, and walking the offsets returns every item once.
 * Misuse is refused. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "probemcp/probemcp.h"

#define N_ITEMS 60
#define HINT "budget cut: continue with offset=next_offset"

static const unsigned char KEY[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                      17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};

static pmcp_page *page_new(int budget)
{
  pmcp_page_options o = PMCP_PAGE_OPTIONS_INIT;
  o.token_budget = budget;
  o.tool = "list_things";
  o.args_json = "{}";
  o.key = KEY;
  o.key_len = sizeof KEY;
  pmcp_page *pg = NULL;
  ck_assert_int_eq(pmcp_page_new(&pg, &o), 0);
  return pg;
}

/* Item i: an object whose size varies with i. */
static void item_json(int i, char *buf, size_t size)
{
  char pad[400];
  int n = 20 + (i * 37) % 300;
  for (int k = 0; k < n; k++)
    pad[k] = (char)('a' + (i + k) % 26);
  pad[n] = '\0';
  snprintf(buf, size, "{\"id\":%d,\"text\":\"%s\"}", i, pad);
}

/* One page of [offset, offset+limit) at @p budget; returns the parsed
 * object and checks its size. */
static cJSON *page_of(int offset, int limit, int budget)
{
  pmcp_page *pg = page_new(budget);
  ck_assert_int_eq(pmcp_page_field_int(pg, "total_count", N_ITEMS), 0);
  ck_assert_int_eq(pmcp_page_offsets(pg, (uint64_t)offset, N_ITEMS, HINT), 0);
  ck_assert_int_eq(pmcp_page_list(pg, "things"), 0);
  for (int i = offset; i < N_ITEMS && i < offset + limit; i++) {
    char buf[512];
    item_json(i, buf, sizeof buf);
    int rc = pmcp_page_add(pg, buf, strlen(buf), "ignored", 7);
    if (rc == PMCP_EBUDGET)
      break;
    ck_assert_int_eq(rc, 0);
  }
  pmcp_buf out = PMCP_BUF_INIT;
  int is_err = 0;
  ck_assert_int_eq(pmcp_page_render(pg, 0, &out, &is_err), 0);
  ck_assert_int_eq(is_err, 0);
  size_t tok = 0;
  ck_assert_int_eq(pmcp_tokens_count(out.ptr, out.len, &tok), 0);
  ck_assert_msg(tok <= (size_t)budget, "%zu tokens > %d", tok, budget);
  ck_assert_msg(strstr(out.ptr, "next_cursor") == NULL, "%s", out.ptr);
  cJSON *o = cJSON_ParseWithLength(out.ptr, out.len);
  ck_assert_ptr_nonnull(o);
  pmcp_buf_dispose(&out);
  pmcp_page_free(pg);
  return o;
}

static void walk(int limit, int budget, int *pages, int *cut_pages)
{
  int seen[N_ITEMS] = {0};
  int offset = 0;
  *pages = *cut_pages = 0;
  while (offset >= 0 && *pages < 200) {
    cJSON *o = page_of(offset, limit, budget);
    const cJSON *things = cJSON_GetObjectItem(o, "things");
    int count = cJSON_GetObjectItem(o, "count")->valueint;
    ck_assert_int_eq(cJSON_GetArraySize(things), count);
    ck_assert_int_gt(count, 0);
    int k = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, things)
    {
      int id = cJSON_GetObjectItem(t, "id")->valueint;
      ck_assert_int_eq(id, offset + k); /* in order, from offset */
      ck_assert_int_eq(seen[id]++, 0);
      k++;
    }
    int truncated = cJSON_IsTrue(cJSON_GetObjectItem(o, "truncated"));
    int by_budget = count < limit && offset + count < N_ITEMS;
    ck_assert_int_eq(truncated, by_budget);
    ck_assert_int_eq(cJSON_GetObjectItem(o, "hint") != NULL, by_budget);
    *cut_pages += by_budget;
    const cJSON *next = cJSON_GetObjectItem(o, "next_offset");
    if (offset + count < N_ITEMS) {
      ck_assert_ptr_nonnull(next);
      ck_assert_int_eq(next->valueint, offset + count);
      offset = next->valueint;
    } else {
      ck_assert_ptr_null(next);
      offset = -1;
    }
    (*pages)++;
    cJSON_Delete(o);
  }
  for (int i = 0; i < N_ITEMS; i++)
    ck_assert_int_eq(seen[i], 1);
}

START_TEST(budget_cuts_pages)
{
  int pages = 0, cut = 0;
  walk(100, 512, &pages, &cut);
  ck_assert_int_gt(pages, 2);
  ck_assert_int_gt(cut, 0);
}
END_TEST

START_TEST(limit_ends_pages)
{
  /* a roomy budget: every page is ended by the limit, none is truncated */
  int pages = 0, cut = 0;
  walk(7, 8000, &pages, &cut);
  ck_assert_int_eq(pages, (N_ITEMS + 6) / 7);
  ck_assert_int_eq(cut, 0);
}
END_TEST

START_TEST(whole_listing)
{
  cJSON *o = page_of(0, N_ITEMS, 8000);
  ck_assert_int_eq(cJSON_GetObjectItem(o, "count")->valueint, N_ITEMS);
  ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "truncated")));
  ck_assert_ptr_null(cJSON_GetObjectItem(o, "next_offset"));
  cJSON_Delete(o);
}
END_TEST

START_TEST(misuse)
{
  pmcp_page *pg = page_new(2000);
  ck_assert_int_eq(pmcp_page_offsets(pg, 5, 4, HINT), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_page_offsets(pg, 0, 4, NULL), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_page_offsets(NULL, 0, 4, HINT), PMCP_EMISUSE);
  ck_assert_int_eq(pmcp_page_offsets(pg, 0, 4, HINT), 0);
  ck_assert_int_eq(pmcp_page_offsets(pg, 0, 4, HINT), PMCP_EMISUSE); /* twice */
  ck_assert_int_eq(pmcp_page_field_int(pg, "next_offset", 1), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_page_field_string(pg, "hint", "x"), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_page_list(pg, "things"), 0);
  pmcp_fragment f = PMCP_FRAGMENT_INIT;
  f.text = "doc";
  f.len = 3;
  ck_assert_int_eq(pmcp_page_add_fragment(pg, &f), PMCP_EMISUSE);
  pmcp_page_free(pg);
  pg = page_new(2000);
  ck_assert_int_eq(pmcp_page_list(pg, "things"), 0);
  ck_assert_int_eq(pmcp_page_offsets(pg, 0, 4, HINT), PMCP_EMISUSE); /* after the list */
  pmcp_page_free(pg);
}
END_TEST

START_TEST(item_too_big)
{
  /* an item no page of this budget can hold: the min_token_budget error */
  pmcp_page *pg = page_new(512);
  ck_assert_int_eq(pmcp_page_offsets(pg, 0, 3, HINT), 0);
  ck_assert_int_eq(pmcp_page_list(pg, "things"), 0);
  size_t n = 6000;
  char *big = malloc(n + 40);
  strcpy(big, "{\"text\":\"");
  for (size_t i = 0; i < n; i++)
    big[9 + i] = (char)('a' + i % 26);
  strcpy(big + 9 + n, "\"}");
  ck_assert_int_eq(pmcp_page_add(pg, big, strlen(big), NULL, 0), PMCP_EBUDGET);
  pmcp_buf out = PMCP_BUF_INIT;
  int is_err = 0;
  ck_assert_int_eq(pmcp_page_render(pg, 0, &out, &is_err), 0);
  ck_assert_int_eq(is_err, 1);
  ck_assert_ptr_nonnull(strstr(out.ptr, "min_token_budget"));
  pmcp_buf_dispose(&out);
  pmcp_page_free(pg);
  free(big);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("page-offsets");
  TCase *tc = tcase_create("offsets");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, budget_cuts_pages);
  tcase_add_test(tc, limit_ends_pages);
  tcase_add_test(tc, whole_listing);
  tcase_add_test(tc, misuse);
  tcase_add_test(tc, item_too_big);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
