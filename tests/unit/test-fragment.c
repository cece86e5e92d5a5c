/* SPDX-License-Identifier: MIT */
/* Fragments (pmcp_page_add_fragment()): random documents, multi-byte text
 * at the cuts, reassembled and compared by hash; pinning. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "probemcp/budget.h"
#include "probemcp/tokens.h"
#include "util/buf.h"
#include "util/crypto.h"

static const unsigned char key[32] = "fragment-test-key-0123456789abcd";

typedef struct doc {
  pmcp_buf text;
  pmcp_fragment_format format;
} doc;

static uint32_t rng = 1;
static uint32_t next_rand(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 17;
  rng ^= rng << 5;
  return rng;
}

/* Random UTF-8 text: ASCII words, escapes, 2/3/4-byte characters, runs. */
static void random_text(pmcp_buf *b, size_t len)
{
  static const char *pieces[] = {
    "the ", "Loss ", "0.125 ", "\n", "\t", "\"q\" ", "\\", "\x01",
    "\xC3\xA9", "\xCE\xBB", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E",
    "\xF0\x9F\x98\x80", "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD", "\xE2\x80\x94",
    "          ", "1234567890", "don't ", "WE'LL ",
  };
  pmcp__buf_reset(b);
  while (b->len < len) {
    uint32_t r = next_rand();
    if (r % 50 == 0) { /* a long run of one character */
      for (int i = 0; i < 300; i++)
        pmcp__buf_puts(b, (r >> 8) % 2 ? "a" : "\xE6\x97\xA5");
    } else {
      pmcp__buf_puts(b, pieces[(r >> 8) % (sizeof pieces / sizeof *pieces)]);
    }
  }
}

typedef struct page_result {
  int is_error;
  char *cursor;
  cJSON *v;
} page_result;

/* One call of a toy document reader over @p docs. */
static page_result read_page(doc *docs, size_t n, int budget, const char *cursor)
{
  pmcp_page_options o = PMCP_PAGE_OPTIONS_INIT;
  o.token_budget = budget;
  o.tool = "reader";
  o.args_json = "{\"view\":\"content\"}";
  o.cursor = cursor;
  o.key = key;
  o.key_len = sizeof key;
  pmcp_page *pg;
  ck_assert_int_eq(pmcp_page_new(&pg, &o), 0);
  const void *pos;
  size_t pos_len;
  int more = 0;
  if (pmcp_page_position(pg, &pos, &pos_len) == 0) {
    uint32_t start = 0;
    if (pos_len)
      memcpy(&start, pos, sizeof start);
    ck_assert_int_eq(pmcp_page_list(pg, "items"), 0);
    for (uint32_t i = start; i < n; i++) {
      char members[64];
      snprintf(members, sizeof members, "\"ref\":\"doc:%u\"", i);
      uint32_t after = i + 1;
      pmcp_fragment f = PMCP_FRAGMENT_INIT;
      f.format = docs[i].format;
      f.text = docs[i].text.ptr;
      f.len = docs[i].text.len;
      f.members_json = members;
      f.resume_at = &i;
      f.resume_at_len = sizeof i;
      f.resume_after = &after;
      f.resume_after_len = sizeof after;
      int rc = pmcp_page_add_fragment(pg, &f);
      if (rc) {
        ck_assert_msg(rc == PMCP_EBUDGET || rc == PMCP_ECURSOR, "rc %d", rc);
        more = 1;
        break;
      }
    }
  }
  pmcp_buf out = PMCP_BUF_INIT;
  page_result r = {0, NULL, NULL};
  ck_assert_int_eq(pmcp_page_render(pg, more, &out, &r.is_error), 0);
  size_t tokens = 0;
  ck_assert_int_eq(pmcp_tokens_count(out.ptr, out.len, &tokens), 0);
  ck_assert_uint_le(tokens, (size_t)budget);
  ck_assert_uint_le(out.len, (size_t)budget * 8);
  r.v = cJSON_ParseWithLength(out.ptr, out.len);
  ck_assert_ptr_nonnull(r.v);
  cJSON *nc = cJSON_GetObjectItem(r.v, "next_cursor");
  if (nc)
    r.cursor = strdup(nc->valuestring);
  pmcp_page_free(pg);
  pmcp_buf_dispose(&out);
  return r;
}

static void sha_hex(const char *s, size_t len, char out[65])
{
  unsigned char d[32];
  ck_assert_int_eq(pmcp__sha256(s, len, d), 0);
  pmcp__hex(d, 32, out);
}

/* Reads all of @p docs with random budgets; checks reassembly. Returns the
 * number of fragment items seen. */
static size_t read_all(doc *docs, size_t n)
{
  pmcp_buf *got = calloc(n, sizeof *got);
  size_t *chars = calloc(n, sizeof *chars);
  int *done = calloc(n, sizeof *done);
  char *cursor = NULL;
  size_t fragments = 0, pages = 0;
  do {
    int budget = 512 + (int)(next_rand() % 7489);
    page_result r = read_page(docs, n, budget, cursor);
    ck_assert_msg(!r.is_error, "error page at budget %d", budget);
    pages++;
    free(cursor);
    cursor = r.cursor;
    cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(r.v, "items")) {
      unsigned idx = 0;
      ck_assert_int_eq(sscanf(cJSON_GetObjectItem(it, "ref")->valuestring, "doc:%u", &idx), 1);
      ck_assert_uint_lt(idx, n);
      ck_assert(!done[idx]);
      cJSON *data = cJSON_GetObjectItem(it, "data");
      cJSON *fmt = cJSON_GetObjectItem(data, "format");
      if (docs[idx].format == PMCP_FRAGMENT_JSON && !cJSON_IsString(fmt)) {
        /* a whole JSON record, as is */
        char *again = cJSON_PrintUnformatted(data);
        cJSON *orig = cJSON_ParseWithLength(docs[idx].text.ptr, docs[idx].text.len);
        ck_assert(cJSON_Compare(orig, data, 1));
        cJSON_Delete(orig);
        free(again);
        done[idx] = 1;
        continue;
      }
      const char *f = fmt->valuestring;
      const char *text = cJSON_GetObjectItem(data, "text")->valuestring;
      if (!strcmp(f, "text")) {
        ck_assert_uint_eq(strlen(text), docs[idx].text.len);
        ck_assert_mem_eq(text, docs[idx].text.ptr, docs[idx].text.len);
        done[idx] = 1;
        continue;
      }
      fragments++;
      ck_assert_str_eq(f, docs[idx].format == PMCP_FRAGMENT_JSON ? "json_fragment"
                                                                 : "text_fragment");
      size_t off = (size_t)cJSON_GetObjectItem(data, "offset")->valuedouble;
      ck_assert_uint_eq(off, chars[idx]);
      size_t tl = strlen(text);
      ck_assert_uint_gt(tl, 0);
      ck_assert_int_eq(pmcp_tokens_utf8_check(text, tl, NULL), 0);
      pmcp__buf_append(&got[idx], text, tl);
      for (size_t k = 0; k < tl; k++)
        chars[idx] += ((unsigned char)text[k] & 0xC0) != 0x80;
      int complete = cJSON_IsTrue(cJSON_GetObjectItem(data, "complete"));
      size_t total = (size_t)cJSON_GetObjectItem(data, "total_chars")->valuedouble;
      if (complete) {
        ck_assert_uint_eq(chars[idx], total);
        char want[65], have[65];
        sha_hex(docs[idx].text.ptr, docs[idx].text.len, want);
        sha_hex(got[idx].ptr, got[idx].len, have);
        ck_assert_str_eq(have, want);
        ck_assert_str_eq(cJSON_GetObjectItem(data, "sha256")->valuestring, want);
        done[idx] = 1;
      } else {
        ck_assert_uint_lt(chars[idx], total);
      }
    }
    cJSON_Delete(r.v);
    ck_assert_uint_lt(pages, 100000);
  } while (cursor);
  for (size_t i = 0; i < n; i++) {
    ck_assert_msg(done[i], "doc %zu never completed", i);
    pmcp_buf_dispose(&got[i]);
  }
  free(got);
  free(chars);
  free(done);
  return fragments;
}

START_TEST(random_documents_reassemble)
{
  rng = 0x2545F491u + (uint32_t)_i;
  size_t n = 1 + next_rand() % 6;
  doc *docs = calloc(n, sizeof *docs);
  for (size_t i = 0; i < n; i++) {
    uint32_t r = next_rand();
    size_t len = r % 4 == 0 ? 20 + r % 200 : 1000 + r % 120000;
    random_text(&docs[i].text, len);
    docs[i].format = PMCP_FRAGMENT_TEXT;
  }
  size_t frags = read_all(docs, n);
  (void)frags;
  for (size_t i = 0; i < n; i++)
    pmcp_buf_dispose(&docs[i].text);
  free(docs);
}
END_TEST

START_TEST(json_records_in_fragments)
{
  rng = 99;
  doc docs[2];
  memset(docs, 0, sizeof docs);
  /* a big record and a small one */
  pmcp_buf *b = &docs[0].text;
  pmcp__buf_puts(b, "{\"config\":{");
  pmcp_buf t = PMCP_BUF_INIT;
  for (int i = 0; i < 3000; i++) {
    random_text(&t, 12);
    pmcp__buf_printf(b, "%s\"k%d\":", i ? "," : "", i);
    cJSON *s = cJSON_CreateString(t.ptr);
    char *p = cJSON_PrintUnformatted(s);
    pmcp__buf_puts(b, p);
    free(p);
    cJSON_Delete(s);
  }
  pmcp__buf_puts(b, "}}");
  docs[0].format = PMCP_FRAGMENT_JSON;
  pmcp__buf_puts(&docs[1].text, "{\"a\":[1,2,3]}");
  docs[1].format = PMCP_FRAGMENT_JSON;
  size_t frags = read_all(docs, 2);
  ck_assert_uint_gt(frags, 1);
  pmcp_buf_dispose(&t);
  pmcp_buf_dispose(&docs[0].text);
  pmcp_buf_dispose(&docs[1].text);
}
END_TEST

START_TEST(pinned_prefix)
{
  rng = 7;
  doc d = {PMCP_BUF_INIT, PMCP_FRAGMENT_TEXT};
  random_text(&d.text, 60000);
  pmcp_buf original = PMCP_BUF_INIT;
  pmcp__buf_append(&original, d.text.ptr, d.text.len);

  page_result r = read_page(&d, 1, 1000, NULL);
  ck_assert_ptr_nonnull(r.cursor);
  char *c1 = strdup(r.cursor);
  cJSON_Delete(r.v);
  free(r.cursor);

  /* an append is allowed: the sequence still ends where it began */
  pmcp__buf_puts(&d.text, "APPENDED LATER");
  r = read_page(&d, 1, 8000, c1);
  ck_assert_int_eq(r.is_error, 0);
  cJSON *data = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r.v, "items"), 0), "data");
  char want[65];
  sha_hex(original.ptr, original.len, want);
  ck_assert_str_eq(cJSON_GetObjectItem(data, "sha256")->valuestring, want);
  ck_assert(strstr(cJSON_GetObjectItem(data, "text")->valuestring, "APPENDED") == NULL);
  cJSON_Delete(r.v);
  free(r.cursor);

  /* an edit of the pinned text is a restart error */
  size_t at = 10;
  while ((unsigned char)d.text.ptr[at] >= 0x80)
    at++;
  d.text.ptr[at] = d.text.ptr[at] == 'x' ? 'y' : 'x';
  r = read_page(&d, 1, 1000, c1);
  ck_assert_int_eq(r.is_error, 1);
  ck_assert_str_eq(cJSON_GetObjectItem(r.v, "reason")->valuestring, "document_changed");
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.v, "restart")));
  cJSON_Delete(r.v);
  free(r.cursor);

  /* so is a deletion */
  pmcp__buf_reset(&d.text);
  size_t half = original.len / 2;
  while (((unsigned char)original.ptr[half] & 0xC0) == 0x80)
    half--;
  pmcp__buf_append(&d.text, original.ptr, half);
  r = read_page(&d, 1, 1000, c1);
  ck_assert_int_eq(r.is_error, 1);
  ck_assert_str_eq(cJSON_GetObjectItem(r.v, "reason")->valuestring, "document_changed");
  cJSON_Delete(r.v);
  free(r.cursor);
  free(c1);
  pmcp_buf_dispose(&d.text);
  pmcp_buf_dispose(&original);
}
END_TEST

START_TEST(invalid_input_refused)
{
  pmcp_page_options o = PMCP_PAGE_OPTIONS_INIT;
  o.tool = "reader";
  o.key = key;
  o.key_len = sizeof key;
  pmcp_page *pg;
  ck_assert_int_eq(pmcp_page_new(&pg, &o), 0);
  pmcp_fragment f = PMCP_FRAGMENT_INIT;
  f.text = "abc";
  f.len = 3;
  ck_assert_int_eq(pmcp_page_add_fragment(pg, &f), PMCP_EMISUSE); /* no list */
  pmcp_page_list(pg, "items");
  f.text = "ab\xC3";
  ck_assert_int_eq(pmcp_page_add_fragment(pg, &f), PMCP_EUTF8);
  f.text = "abc";
  f.format = (pmcp_fragment_format)7;
  ck_assert_int_eq(pmcp_page_add_fragment(pg, &f), PMCP_EINVAL);
  f.format = PMCP_FRAGMENT_JSON;
  f.len = 0;
  ck_assert_int_eq(pmcp_page_add_fragment(pg, &f), PMCP_EINVAL);
  /* an empty text document is fine */
  f.format = PMCP_FRAGMENT_TEXT;
  ck_assert_int_eq(pmcp_page_add_fragment(pg, &f), 0);
  ck_assert_uint_eq(pmcp_page_count(pg), 1);
  pmcp_page_free(pg);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("fragment");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 240);
  tcase_add_loop_test(tc, random_documents_reassemble, 0, 12);
  tcase_add_test(tc, json_records_in_fragments);
  tcase_add_test(tc, pinned_prefix);
  tcase_add_test(tc, invalid_input_refused);
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
