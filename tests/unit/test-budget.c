/* SPDX-License-Identifier: MIT */
/* The page builder (budget.h) with the real o200k_base tokenizer. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "probemcp/budget.h"
#include "probemcp/tokens.h"
#include "util/buf.h"
#include "core/page_int.h" /* pmcp__page_resume_empty */

static const unsigned char key[32] = "k3y-for-the-budget-unit-tests!!!";

/* A toy source: item i is {"id":i,"name":"item-i","score":x,"text":...}
 * with text of @p text_len[i] characters (multi-byte included). */
typedef struct source {
  size_t n;
  size_t *text_len;
} source;

static void item_text(size_t i, size_t len, pmcp_buf *b)
{
  static const char *parts[] = {"alpha ", "\xC3\xA9t\xC3\xA9 ", "\xE6\x97\xA5\xE6\x9C\xAC ",
                                "\xF0\x9F\x98\x80", "42 ", "lr=3e-4 ", "\n"};
  pmcp__buf_reset(b);
  size_t k = i;
  while (b->len < len) {
    pmcp__buf_puts(b, parts[k % 7]);
    k = k * 31 + 7;
  }
}

/* Renders one page of @p src from @p cursor (NULL: first). */
static int page_of(const source *src, const char *tool, const char *args,
                   uint64_t version, int budget, const char *cursor,
                   pmcp_buf *out, pmcp_page_stats *stats)
{
  pmcp_page_options o = PMCP_PAGE_OPTIONS_INIT;
  o.token_budget = budget;
  o.tool = tool;
  o.args_json = args;
  o.cursor = cursor;
  o.source_version = version;
  o.key = key;
  o.key_len = sizeof key;
  pmcp_page *pg;
  ck_assert_int_eq(pmcp_page_new(&pg, &o), 0);
  const void *pos;
  size_t pos_len;
  size_t start = 0;
  int more = 0;
  if (pmcp_page_position(pg, &pos, &pos_len) == 0) {
    if (pos_len) {
      ck_assert_uint_eq(pos_len, sizeof(uint32_t));
      uint32_t p;
      memcpy(&p, pos, sizeof p);
      start = p;
    }
    ck_assert_int_eq(pmcp_page_field_string(pg, "mode", "list"), 0);
    ck_assert_int_eq(pmcp_page_list(pg, "items"), 0);
    pmcp_buf t = PMCP_BUF_INIT;
    for (size_t i = start; i < src->n; i++) {
      pmcp_json *j = pmcp_page_item(pg);
      item_text(i, src->text_len[i], &t);
      pmcp_json_object_begin(j);
      pmcp_json_key(j, "id");
      pmcp_json_int(j, (int64_t)i);
      pmcp_json_key(j, "score");
      pmcp_json_number(j, 1.0 / (double)(i + 3));
      pmcp_json_key(j, "text");
      pmcp_json_string_n(j, t.ptr, t.len);
      pmcp_json_object_end(j);
      uint32_t next = (uint32_t)(i + 1);
      int rc = pmcp_page_commit(pg, &next, sizeof next);
      if (rc) {
        ck_assert_int_eq(rc, PMCP_EBUDGET);
        more = 1;
        break;
      }
    }
    pmcp_buf_dispose(&t);
  }
  int is_error = 0;
  pmcp__buf_reset(out);
  ck_assert_int_eq(pmcp_page_render(pg, more, out, &is_error), 0);
  if (stats)
    ck_assert_int_eq(pmcp_page_stats_get(pg, stats), 0);
  pmcp_page_free(pg);
  return is_error;
}

/* Checks the contract every answer keeps and returns the parsed object. */
/* The text's tokens, counted whole. */
static size_t tokens_of(const pmcp_buf *text)
{
  size_t n = 0;
  ck_assert_int_eq(pmcp_tokens_count(text->ptr, text->len, &n), 0);
  return n;
}

static cJSON *check_answer(const pmcp_buf *text, int budget, int is_error)
{
  size_t tokens = 0;
  ck_assert_int_eq(pmcp_tokens_count(text->ptr, text->len, &tokens), 0);
  ck_assert_msg(tokens <= (size_t)budget, "%zu tokens > budget %d", tokens, budget);
  ck_assert_uint_le(text->len, (size_t)budget * 8);
  cJSON *v = cJSON_ParseWithLength(text->ptr, text->len);
  ck_assert_ptr_nonnull(v);
  ck_assert(cJSON_IsObject(v));
  if (is_error) {
    ck_assert(cJSON_IsString(cJSON_GetObjectItem(v, "message")));
  } else if (cJSON_GetObjectItem(v, "items")) {
    cJSON *items = cJSON_GetObjectItem(v, "items");
    ck_assert_int_eq(cJSON_GetArraySize(items),
                     (int)cJSON_GetObjectItem(v, "count")->valuedouble);
    int truncated = cJSON_IsTrue(cJSON_GetObjectItem(v, "truncated"));
    ck_assert_int_eq(truncated, cJSON_GetObjectItem(v, "next_cursor") != NULL);
  }
  return v;
}

static source make_source(size_t n, size_t len_base, unsigned seed)
{
  source s = {n, calloc(n ? n : 1, sizeof(size_t))};
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    s.text_len[i] = len_base + (seed >> 16) % (len_base + 1);
  }
  return s;
}

START_TEST(fitting_result_keeps_shape)
{
  source s = make_source(3, 5, 1);
  pmcp_buf out = PMCP_BUF_INIT;
  pmcp_page_stats st;
  int err = page_of(&s, "toy", "{}", 0, 2000, NULL, &out, &st);
  ck_assert_int_eq(err, 0);
  cJSON *v = check_answer(&out, 2000, 0);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(v, "items")), 3);
  ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(v, "truncated")));
  ck_assert_ptr_null(cJSON_GetObjectItem(v, "next_cursor"));
  ck_assert_str_eq(cJSON_GetObjectItem(v, "mode")->valuestring, "list");
  /* the layout: fields, the list, then the envelope, compact */
  ck_assert(strncmp(out.ptr, "{\"mode\":\"list\",\"items\":[{\"id\":0,\"score\":0.333333,", 48) == 0);
  ck_assert(strstr(out.ptr, "],\"count\":3,\"truncated\":false}") != NULL);
  /* the running count was exact: the page's count is the text's */
  ck_assert_uint_eq(st.estimate, st.tokens);
  ck_assert_uint_eq(st.tokens, tokens_of(&out));
  ck_assert_uint_eq(st.dropped, 0);
  ck_assert_uint_eq(st.bytes, out.len);
  cJSON_Delete(v);
  pmcp_buf_dispose(&out);
  free(s.text_len);
}
END_TEST

/* Pages through @p src with budgets cycling through @p budgets and checks
 * every item arrives once, in order. Returns the number of pages. */
static size_t page_through(const source *src, const int *budgets, size_t nb)
{
  pmcp_buf out = PMCP_BUF_INIT;
  char *cursor = NULL;
  size_t next_id = 0, pages = 0;
  for (;;) {
    int b = budgets[pages % nb];
    pmcp_page_stats st;
    int err = page_of(src, "toy", "{\"mode\":\"list\"}", 0, b, cursor, &out, &st);
    ck_assert_msg(!err, "page %zu: %s", pages, out.ptr);
    cJSON *v = check_answer(&out, b, 0);
    ck_assert_uint_eq(st.estimate, st.tokens);
    ck_assert_uint_eq(st.tokens, tokens_of(&out));
    pages++;
    cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(v, "items")) {
      ck_assert_uint_eq((size_t)cJSON_GetObjectItem(it, "id")->valuedouble, next_id);
      next_id++;
    }
    free(cursor);
    cursor = NULL;
    cJSON *nc = cJSON_GetObjectItem(v, "next_cursor");
    if (nc)
      cursor = strdup(nc->valuestring);
    cJSON_Delete(v);
    if (!cursor)
      break;
    ck_assert_uint_lt(pages, 10000);
  }
  ck_assert_uint_eq(next_id, src->n);
  pmcp_buf_dispose(&out);
  return pages;
}

START_TEST(pages_cover_every_item_once)
{
  source s = make_source(600, 40, 7);
  const int budgets[] = {512, 3000, 777, 8000, 1024, 513, 2000};
  size_t pages = page_through(&s, budgets, 7);
  ck_assert_uint_gt(pages, 5);
  const int one[] = {512};
  page_through(&s, one, 1);
  free(s.text_len);
}
END_TEST

START_TEST(indivisible_item_asks_for_budget)
{
  source s = make_source(3, 10, 3);
  s.text_len[1] = 6000; /* a few thousand tokens */
  pmcp_buf out = PMCP_BUF_INIT;
  /* page 1 holds item 0 only, and a cursor */
  int err = page_of(&s, "toy", "{}", 0, 512, NULL, &out, NULL);
  ck_assert_int_eq(err, 0);
  cJSON *v = check_answer(&out, 512, 0);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(v, "items")), 1);
  char *cursor = strdup(cJSON_GetObjectItem(v, "next_cursor")->valuestring);
  cJSON_Delete(v);
  /* page 2 at 512: item 1 cannot fit, the answer names the budget */
  err = page_of(&s, "toy", "{}", 0, 512, cursor, &out, NULL);
  ck_assert_int_eq(err, 1);
  v = check_answer(&out, 512, 1);
  int need = (int)cJSON_GetObjectItem(v, "min_token_budget")->valuedouble;
  ck_assert_str_eq(cJSON_GetObjectItem(v, "error")->valuestring, "token_budget_too_small");
  ck_assert_int_gt(need, 512);
  ck_assert_int_le(need, 8000);
  ck_assert(strstr(cJSON_GetObjectItem(v, "message")->valuestring, "same cursor") != NULL);
  cJSON_Delete(v);
  /* with exactly that budget the same cursor continues */
  err = page_of(&s, "toy", "{}", 0, need, cursor, &out, NULL);
  ck_assert_int_eq(err, 0);
  v = check_answer(&out, need, 0);
  cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(v, "items"), 0);
  ck_assert_int_eq((int)cJSON_GetObjectItem(first, "id")->valuedouble, 1);
  cJSON_Delete(v);
  /* one token less is refused again */
  err = page_of(&s, "toy", "{}", 0, need - 1, cursor, &out, NULL);
  ck_assert_int_eq(err, 1);
  free(cursor);
  /* an item larger than any budget says so */
  s.text_len[0] = 200000;
  err = page_of(&s, "toy", "{}", 0, 8000, NULL, &out, NULL);
  ck_assert_int_eq(err, 1);
  v = check_answer(&out, 8000, 1);
  ck_assert_int_gt((int)cJSON_GetObjectItem(v, "min_token_budget")->valuedouble, 8000);
  ck_assert(strstr(cJSON_GetObjectItem(v, "message")->valuestring, "cannot return") != NULL);
  cJSON_Delete(v);
  pmcp_buf_dispose(&out);
  free(s.text_len);
}
END_TEST

START_TEST(last_item_fits_without_cursor)
{
  /* Find the exact size of the complete answer, then give exactly that
   * budget: it must come back whole, without a cursor. */
  source s = make_source(40, 30, 11);
  pmcp_buf out = PMCP_BUF_INIT;
  page_of(&s, "toy", "{}", 0, 8000, NULL, &out, NULL);
  size_t whole = 0;
  pmcp_tokens_count(out.ptr, out.len, &whole);
  ck_assert_uint_ge(whole, 512);
  ck_assert_uint_le(whole, 8000);
  int err = page_of(&s, "toy", "{}", 0, (int)whole, NULL, &out, NULL);
  ck_assert_int_eq(err, 0);
  cJSON *v = check_answer(&out, (int)whole, 0);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(v, "items")), 40);
  ck_assert_ptr_null(cJSON_GetObjectItem(v, "next_cursor"));
  cJSON_Delete(v);
  /* with more items behind, the same budget gives a shorter page + cursor */
  source s2 = make_source(41, 30, 11);
  err = page_of(&s2, "toy", "{}", 0, (int)whole, NULL, &out, NULL);
  ck_assert_int_eq(err, 0);
  v = check_answer(&out, (int)whole, 0);
  ck_assert_int_lt(cJSON_GetArraySize(cJSON_GetObjectItem(v, "items")), 40);
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(v, "next_cursor"));
  cJSON_Delete(v);
  pmcp_buf_dispose(&out);
  free(s.text_len);
  free(s2.text_len);
}
END_TEST

static pmcp_page *plain_page(int budget, unsigned flags)
{
  pmcp_page_options o = PMCP_PAGE_OPTIONS_INIT;
  o.token_budget = budget;
  o.tool = "toy";
  o.key = key;
  o.key_len = sizeof key;
  o.flags = flags;
  pmcp_page *pg = NULL;
  ck_assert_int_eq(pmcp_page_new(&pg, &o), 0);
  return pg;
}

START_TEST(byte_ceiling_binds)
{
  /* runs of spaces are few tokens but many bytes */
  pmcp_page *pg = plain_page(600, 0);
  pmcp_page_list(pg, "rows");
  char spaces[400];
  memset(spaces, ' ', sizeof spaces);
  size_t kept = 0;
  for (uint32_t i = 0; i < 1000; i++) {
    pmcp_json *j = pmcp_page_item(pg);
    pmcp_json_string_n(j, spaces, sizeof spaces);
    if (pmcp_page_commit(pg, &i, sizeof i))
      break;
    kept++;
  }
  pmcp_buf out = PMCP_BUF_INIT;
  int is_error = 1;
  ck_assert_int_eq(pmcp_page_render(pg, 1, &out, &is_error), 0);
  ck_assert_int_eq(is_error, 0);
  size_t tokens = 0;
  pmcp_tokens_count(out.ptr, out.len, &tokens);
  ck_assert_uint_le(out.len, 600 * 8);
  ck_assert_uint_gt(out.len, 600 * 8 - 420);
  ck_assert_uint_lt(tokens, 600); /* the bytes, not the tokens, ended it */
  ck_assert_uint_gt(kept, 5);
  pmcp_page_free(pg);
  pmcp_buf_dispose(&out);
}
END_TEST

START_TEST(fields_reserve_and_non_finite)
{
  pmcp_page *pg = plain_page(512, 0);
  ck_assert_int_eq(pmcp_page_field_string(pg, "run", "run:abc"), 0);
  ck_assert_int_eq(pmcp_page_field_number(pg, "loss", NAN), 0);
  ck_assert_int_eq(pmcp_page_field_int(pg, "step", 12345678901LL), 0);
  ck_assert_int_eq(pmcp_page_field_bool(pg, "ok", 1), 0);
  ck_assert_int_eq(pmcp_page_field_json(pg, "cfg", "{\"a\":[1,2]}", 11), 0);
  /* reserved and duplicate names */
  ck_assert_int_eq(pmcp_page_field_int(pg, "count", 1), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_page_field_int(pg, "next_cursor", 1), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_page_field_int(pg, "run", 1), PMCP_EINVAL);
  /* items need a list */
  ck_assert_int_eq(pmcp_page_add(pg, "1", 1, NULL, 0), PMCP_EMISUSE);
  ck_assert_int_eq(pmcp_page_list(pg, "run"), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_page_list(pg, "points"), 0);
  ck_assert_int_eq(pmcp_page_list(pg, "other"), PMCP_EMISUSE);
  ck_assert_int_eq(pmcp_page_reserve(pg, 40), 0);
  int rc = 0;
  uint32_t i = 0;
  for (; !rc; i++) {
    pmcp_json *j = pmcp_page_item(pg);
    pmcp_json_array_begin(j);
    pmcp_json_int(j, i);
    pmcp_json_number(j, i % 7 ? (double)i / 7.0 : INFINITY);
    pmcp_json_array_end(j);
    rc = pmcp_page_commit(pg, &i, sizeof i);
  }
  ck_assert_int_eq(rc, PMCP_EBUDGET);
  /* after the items: a field known only now, in the room reserved */
  ck_assert_int_eq(pmcp_page_field_int(pg, "total", 99999), 0);
  pmcp_buf out = PMCP_BUF_INIT;
  int is_error = 1;
  ck_assert_int_eq(pmcp_page_render(pg, 1, &out, &is_error), 0);
  cJSON *v = check_answer(&out, 512, 0);
  ck_assert_str_eq(cJSON_GetObjectItem(v, "loss")->valuestring, "NaN");
  int kept = cJSON_GetArraySize(cJSON_GetObjectItem(v, "points"));
  int inf = 0;
  for (int k = 0; k < kept; k++)
    inf += k % 7 == 0;
  ck_assert_int_eq((int)cJSON_GetObjectItem(v, "non_finite")->valuedouble, inf + 1);
  ck_assert_int_eq((int)cJSON_GetObjectItem(v, "total")->valuedouble, 99999);
  ck_assert(strstr(out.ptr, "],\"total\":99999,\"count\":") != NULL);
  /* rendering twice is misuse */
  ck_assert_int_eq(pmcp_page_render(pg, 1, &out, &is_error), PMCP_EMISUSE);
  cJSON_Delete(v);
  pmcp_page_free(pg);
  pmcp_buf_dispose(&out);
}
END_TEST

START_TEST(failure_message_fits)
{
  pmcp_page *pg = plain_page(512, 0);
  pmcp_buf big = PMCP_BUF_INIT;
  for (int i = 0; i < 5000; i++)
    pmcp__buf_puts(&big, "r\xC3\xA9sum\xC3\xA9 ");
  ck_assert_int_eq(pmcp_page_fail(pg, "\"error\":\"not_found\"", "no such run: %s", big.ptr), 0);
  pmcp_buf out = PMCP_BUF_INIT;
  int is_error = 0;
  ck_assert_int_eq(pmcp_page_render(pg, 0, &out, &is_error), 0);
  ck_assert_int_eq(is_error, 1);
  cJSON *v = check_answer(&out, 512, 1);
  const char *msg = cJSON_GetObjectItem(v, "message")->valuestring;
  ck_assert(strncmp(msg, "no such run: r\xC3\xA9sum", 18) == 0);
  ck_assert(strstr(msg, "\xE2\x80\xA6") != NULL);
  ck_assert_str_eq(cJSON_GetObjectItem(v, "error")->valuestring, "not_found");
  cJSON_Delete(v);
  pmcp_page_free(pg);
  pmcp_buf_dispose(&out);
  pmcp_buf_dispose(&big);
}
END_TEST

START_TEST(refused_cursor_is_a_restart_error)
{
  source s = make_source(300, 30, 5);
  pmcp_buf out = PMCP_BUF_INIT;
  page_of(&s, "toy", "{\"q\":\"x\"}", 4, 512, NULL, &out, NULL);
  cJSON *v = check_answer(&out, 512, 0);
  char *cursor = strdup(cJSON_GetObjectItem(v, "next_cursor")->valuestring);
  cJSON_Delete(v);
  struct {
    const char *tool, *args;
    uint64_t version;
    const char *reason;
  } cases[] = {
    {"other", "{\"q\":\"x\"}", 4, "foreign_tool"},
    {"toy", "{\"q\":\"y\"}", 4, "changed_arguments"},
    {"toy", "{\"q\":\"x\"}", 5, "stale"},
  };
  for (size_t i = 0; i < 3; i++) {
    int err = page_of(&s, cases[i].tool, cases[i].args, cases[i].version, 512,
                      cursor, &out, NULL);
    ck_assert_int_eq(err, 1);
    v = check_answer(&out, 512, 1);
    ck_assert_str_eq(cJSON_GetObjectItem(v, "reason")->valuestring, cases[i].reason);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(v, "restart")));
    ck_assert(strstr(cJSON_GetObjectItem(v, "message")->valuestring,
                     "again without `cursor`") != NULL);
    ck_assert_ptr_null(cJSON_GetObjectItem(v, "items"));
    cJSON_Delete(v);
  }
  /* forged: one character changed */
  cursor[10] = cursor[10] == 'A' ? 'B' : 'A';
  ck_assert_int_eq(page_of(&s, "toy", "{\"q\":\"x\"}", 4, 512, cursor, &out, NULL), 1);
  v = check_answer(&out, 512, 1);
  ck_assert_str_eq(cJSON_GetObjectItem(v, "reason")->valuestring, "forged");
  cJSON_Delete(v);
  /* truncated */
  cursor[strlen(cursor) - 5] = '\0';
  ck_assert_int_eq(page_of(&s, "toy", "{\"q\":\"x\"}", 4, 512, cursor, &out, NULL), 1);
  v = check_answer(&out, 512, 1);
  ck_assert_str_eq(cJSON_GetObjectItem(v, "reason")->valuestring, "truncated");
  cJSON_Delete(v);
  free(cursor);
  pmcp_buf_dispose(&out);
  free(s.text_len);
}
END_TEST

START_TEST(options_are_checked)
{
  pmcp_page_options o = PMCP_PAGE_OPTIONS_INIT;
  pmcp_page *pg = (pmcp_page *)1;
  o.tool = "toy";
  o.key = key;
  o.key_len = sizeof key;
  o.token_budget = 511;
  ck_assert_int_eq(pmcp_page_new(&pg, &o), PMCP_EINVAL);
  ck_assert_ptr_null(pg);
  o.token_budget = 8001;
  ck_assert_int_eq(pmcp_page_new(&pg, &o), PMCP_EINVAL);
  o.token_budget = 512;
  o.key_len = 8;
  ck_assert_int_eq(pmcp_page_new(&pg, &o), PMCP_EINVAL);
  o.key_len = sizeof key;
  o.args_json = "[]";
  ck_assert_int_eq(pmcp_page_new(&pg, &o), PMCP_EINVAL);
  o.args_json = NULL;
  ck_assert_int_eq(pmcp_page_new(&pg, &o), 0);
  ck_assert_int_eq(pmcp_page_budget(pg), 512);
  const void *p = (const void *)1;
  size_t n = 9;
  ck_assert_int_eq(pmcp_page_position(pg, &p, &n), 0);
  ck_assert_ptr_null(p);
  ck_assert_uint_eq(n, 0);
  pmcp_page_free(pg);
  pmcp_page_free(NULL);
}
END_TEST

START_TEST(whole_object_fits_or_names_budget)
{
  /* an object that fits is the answer, byte for byte */
  const char *obj = "{\"ref\":\"run:r1\",\"params\":{\"lr\":0.1},\"tags\":[]}";
  pmcp_page *pg = plain_page(512, 0);
  ck_assert_int_eq(pmcp_page_object(pg, obj, strlen(obj)), 0);
  /* nothing more goes on it */
  ck_assert_int_eq(pmcp_page_field_int(pg, "x", 1), PMCP_EMISUSE);
  ck_assert_int_eq(pmcp_page_list(pg, "rows"), PMCP_EMISUSE);
  ck_assert_int_eq(pmcp_page_object(pg, obj, strlen(obj)), PMCP_EMISUSE);
  pmcp_buf out = PMCP_BUF_INIT;
  int is_error = 1;
  ck_assert_int_eq(pmcp_page_render(pg, 0, &out, &is_error), 0);
  ck_assert_int_eq(is_error, 0);
  ck_assert_uint_eq(out.len, strlen(obj));
  ck_assert(memcmp(out.ptr, obj, out.len) == 0);
  pmcp_page_free(pg);

  /* the empty object too */
  pg = plain_page(512, 0);
  ck_assert_int_eq(pmcp_page_object(pg, "{}", 2), 0);
  ck_assert_int_eq(pmcp_page_render(pg, 0, &out, &is_error), 0);
  ck_assert_int_eq(is_error, 0);
  ck_assert_uint_eq(out.len, 2);
  ck_assert(memcmp(out.ptr, "{}", 2) == 0);
  pmcp_page_free(pg);

  /* not an object; a page with a list already */
  pg = plain_page(512, 0);
  ck_assert_int_eq(pmcp_page_object(pg, "[1]", 3), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_page_list(pg, "rows"), 0);
  ck_assert_int_eq(pmcp_page_object(pg, obj, strlen(obj)), PMCP_EMISUSE);
  pmcp_page_free(pg);

  /* too large: refused with the budget it needs, which then suffices */
  pmcp_buf big = PMCP_BUF_INIT;
  pmcp__buf_puts(&big, "{\"text\":\"");
  for (int i = 0; i < 900; i++)
    pmcp__buf_printf(&big, "w%d ", i);
  pmcp__buf_puts(&big, "\"}");
  pg = plain_page(512, 0);
  ck_assert_int_eq(pmcp_page_object(pg, big.ptr, big.len), PMCP_EBUDGET);
  ck_assert_int_eq(pmcp_page_status(pg), PMCP_EBUDGET);
  ck_assert_int_eq(pmcp_page_render(pg, 0, &out, &is_error), 0);
  ck_assert_int_eq(is_error, 1);
  cJSON *v = check_answer(&out, 512, 1);
  ck_assert_str_eq(cJSON_GetObjectItem(v, "error")->valuestring, "token_budget_too_small");
  int need = (int)cJSON_GetObjectItem(v, "min_token_budget")->valuedouble;
  ck_assert_int_gt(need, 512);
  cJSON_Delete(v);
  pmcp_page_free(pg);
  size_t tokens = 0;
  ck_assert_int_eq(pmcp_tokens_count(big.ptr, big.len, &tokens), 0);
  ck_assert_int_ge(need, (int)tokens);
  pg = plain_page(need, 0);
  ck_assert_int_eq(pmcp_page_object(pg, big.ptr, big.len), 0);
  ck_assert_int_eq(pmcp_page_render(pg, 0, &out, &is_error), 0);
  ck_assert_int_eq(is_error, 0);
  ck_assert_uint_eq(out.len, big.len);
  pmcp_page_free(pg);
  pmcp_buf_dispose(&big);
  pmcp_buf_dispose(&out);
}
END_TEST

/* A page of fields and @p words words in one, a list, no item, resumed at
 * "after-hidden" (the source read items it did not show). */
static pmcp_page *empty_page(int budget, int words, const char *cursor, int *field_rc)
{
  pmcp_page_options o = PMCP_PAGE_OPTIONS_INIT;
  o.token_budget = budget;
  o.tool = "toy";
  o.key = key;
  o.key_len = sizeof key;
  o.cursor = cursor;
  pmcp_page *pg = NULL;
  ck_assert_int_eq(pmcp_page_new(&pg, &o), 0);
  pmcp_buf t = PMCP_BUF_INIT;
  for (int i = 0; i < words; i++)
    pmcp__buf_printf(&t, "w%d ", i);
  *field_rc = pmcp_page_field_string(pg, "note", t.ptr ? t.ptr : "");
  pmcp_buf_dispose(&t);
  if (*field_rc == 0) {
    ck_assert_int_eq(pmcp_page_list(pg, "items"), 0);
    ck_assert_int_eq(pmcp__page_resume_empty(pg, "after-hidden", 12), 0);
  }
  return pg;
}

START_TEST(empty_page_continues_or_names_budget)
{
  pmcp_buf out = PMCP_BUF_INIT;
  int is_error = 1, frc = 0;
  /* room to spare: no item, and next_cursor at the position given */
  pmcp_page *pg = empty_page(512, 10, NULL, &frc);
  ck_assert_int_eq(frc, 0);
  ck_assert_int_eq(pmcp_page_render(pg, 1, &out, &is_error), 0);
  ck_assert_int_eq(is_error, 0);
  cJSON *v = check_answer(&out, 512, 0);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(v, "items")), 0);
  cJSON *nc = cJSON_GetObjectItem(v, "next_cursor");
  ck_assert(cJSON_IsString(nc));
  pmcp_page_free(pg);
  pg = empty_page(512, 1, nc->valuestring, &frc);
  const void *pos = NULL;
  size_t pos_len = 0;
  ck_assert_int_eq(pmcp_page_position(pg, &pos, &pos_len), 0);
  ck_assert_uint_eq(pos_len, 12);
  ck_assert(memcmp(pos, "after-hidden", 12) == 0);
  pmcp_page_free(pg);
  cJSON_Delete(v);
  /* nothing more: no cursor */
  pg = empty_page(512, 10, NULL, &frc);
  ck_assert_int_eq(pmcp_page_render(pg, 0, &out, &is_error), 0);
  v = check_answer(&out, 512, 0);
  ck_assert_ptr_null(cJSON_GetObjectItem(v, "next_cursor"));
  cJSON_Delete(v);
  pmcp_page_free(pg);
  /* fields that fit only without the cursor: refused with the budget
   * they need, which then holds them and the cursor */
  int words = 10;
  for (;; words += 4) {
    pg = empty_page(512, words + 4, NULL, &frc);
    pmcp_page_free(pg);
    if (frc)
      break;
  }
  pg = empty_page(512, words, NULL, &frc);
  ck_assert_int_eq(frc, 0);
  ck_assert_int_eq(pmcp_page_render(pg, 1, &out, &is_error), 0);
  ck_assert_int_eq(is_error, 1);
  v = check_answer(&out, 512, 1);
  ck_assert_str_eq(cJSON_GetObjectItem(v, "error")->valuestring, "token_budget_too_small");
  int need = (int)cJSON_GetObjectItem(v, "min_token_budget")->valuedouble;
  ck_assert_int_gt(need, 512);
  cJSON_Delete(v);
  pmcp_page_free(pg);
  pg = empty_page(need, words, NULL, &frc);
  ck_assert_int_eq(pmcp_page_render(pg, 1, &out, &is_error), 0);
  ck_assert_int_eq(is_error, 0);
  v = check_answer(&out, need, 0);
  ck_assert(cJSON_IsString(cJSON_GetObjectItem(v, "next_cursor")));
  cJSON_Delete(v);
  pmcp_page_free(pg);
  pmcp_buf_dispose(&out);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("budget");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, fitting_result_keeps_shape);
  tcase_add_test(tc, pages_cover_every_item_once);
  tcase_add_test(tc, indivisible_item_asks_for_budget);
  tcase_add_test(tc, last_item_fits_without_cursor);
  tcase_add_test(tc, byte_ceiling_binds);
  tcase_add_test(tc, fields_reserve_and_non_finite);
  tcase_add_test(tc, failure_message_fits);
  tcase_add_test(tc, refused_cursor_is_a_restart_error);
  tcase_add_test(tc, options_are_checked);
  tcase_add_test(tc, whole_object_fits_or_names_budget);
  tcase_add_test(tc, empty_page_continues_or_names_budget);
  suite_add_tcase(s, tc);
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
