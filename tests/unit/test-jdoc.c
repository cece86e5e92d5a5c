/* SPDX-License-Identifier: MIT */
/* The arena message parser (core/jdoc.c) against cJSON: every well-formed
 * message gives the tree cJSON gives (compared through cJSON's printer and
 * the fields the engine reads), and what is not strict JSON is refused. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <probemcp/probemcp.h>

#include <pthread.h>

#include "core/engine.h"
#include "core/jdoc.h"
#include "util/json.h"

static void quiet_sink(const pmcp_out *o, void *ud)
{
  (void)o;
  (void)ud;
}

static pmcp_server *server(void)
{
  pmcp_server_options o = PMCP_SERVER_OPTIONS_INIT;
  o.name = "jdoc";
  o.sink = quiet_sink;
  pmcp_server *s = NULL;
  ck_assert_int_eq(pmcp_server_new(&s, &o), 0);
  return s;
}

/* Same shape, types, keys, strings and numbers; prev links as cJSON makes
 * them (the first child's prev is the last one). */
static void same_tree(const cJSON *a, const cJSON *b)
{
  ck_assert_int_eq(a->type & 0xFF, b->type & 0xFF);
  if (a->string || b->string)
    ck_assert_str_eq(a->string, b->string);
  if (cJSON_IsString(a))
    ck_assert_str_eq(a->valuestring, b->valuestring);
  if (cJSON_IsNumber(a)) {
    if (isnan(b->valuedouble))
      ck_assert(isnan(a->valuedouble));
    else
      ck_assert(a->valuedouble == b->valuedouble &&
                signbit(a->valuedouble) == signbit(b->valuedouble));
    ck_assert_int_eq(a->valueint, b->valueint);
  }
  if (cJSON_IsTrue(a))
    ck_assert_int_eq(a->valueint, b->valueint);
  const cJSON *x = a->child, *y = b->child;
  if (x)
    ck_assert_ptr_nonnull(x->prev);
  for (; x && y; x = x->next, y = y->next) {
    same_tree(x, y);
    if (!x->next)
      ck_assert_ptr_eq(a->child->prev, x);
  }
  ck_assert(!x && !y);
}

static void accepts(pmcp_server *s, const char *text)
{
  size_t len = strlen(text);
  pmcp__jdoc *doc = NULL;
  cJSON *root = NULL;
  int rc = pmcp__jdoc_parse(&doc, &root, s, text, len);
  ck_assert_msg(rc == 0, "refused: %s", text);
  cJSON *ref = cJSON_ParseWithLength(text, len);
  ck_assert_msg(ref != NULL, "cJSON refuses: %s", text);
  same_tree(root, ref);
  char *p1 = cJSON_PrintUnformatted(root), *p2 = cJSON_PrintUnformatted(ref);
  ck_assert_str_eq(p1, p2);
  cJSON_free(p1);
  cJSON_free(p2);
  cJSON_Delete(ref);
  pmcp__jdoc_unref(doc);
}

static void refuses(pmcp_server *s, const char *text, size_t len)
{
  pmcp__jdoc *doc = (pmcp__jdoc *)1;
  cJSON *root = (cJSON *)1;
  ck_assert_msg(pmcp__jdoc_parse(&doc, &root, s, text, len) == PMCP_EPROTO,
                "accepted: %.*s", (int)len, text);
  ck_assert_ptr_null(doc);
  ck_assert_ptr_null(root);
}

START_TEST(same_as_cjson)
{
  pmcp_server *s = server();
  static const char *const ok[] = {
    "{}", "[]", " \t\r\n{ } \n", "0", "-0", "1", "-1", "123456789012345",
    "1234567890123456789", "9007199254740993", "-9007199254740993",
    "2147483647", "2147483648", "-2147483649", "1.5", "-0.25", "1e3",
    "1E+3", "2.5e-3", "1e999", "-1e999", "0.1", "3.14159265358979323846",
    "true", "false", "null", "\"\"", "\"plain\"",
    "\"esc \\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", "\"\\u00e9\\u4e2d\\uD83D\\uDE00\"",
    "\"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80\"", "\"a\\u0000b\"",
    "[1,[2,[3,[]]],{\"a\":{}}]", "{\"a\":1,\"a\":2,\"b\":[true,false,null]}",
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
    "{\"name\":\"echo\",\"arguments\":{\"text\":\"hello 7\"}}}",
    "[ 1 , 2 ,\n3 ]", "{ \"k\" : \"v\" , \"n\" : -12.5e+2 }",
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    accepts(s, ok[i]);
  pmcp_server_free(s);
}
END_TEST

START_TEST(refuses_what_is_not_json)
{
  pmcp_server *s = server();
  static const char *const bad[] = {
    "", " ", "{", "}", "[", "[1,]", "[,1]", "{\"a\"}", "{\"a\":}", "{\"a\":1,}",
    "{a:1}", "{\"a\" 1}", "[1 2]", "01", "-", "-01", "1.", ".5", "+1", "1e",
    "1e+", "0x10", "NaN", "Infinity", "-Infinity", "tru", "nul", "falsey",
    "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\uDE00\"",
    "\"\\uD83D\"", "\"\\uD83Dx\"", "\"\\uD83D\\u0041\"", "\"tab\there\"",
    "\"nl\nhere\"", "{} {}", "[] x", "1 2", "\f{}", "{}\f", "\"\\",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    refuses(s, bad[i], strlen(bad[i]));
  /* A NUL byte is not whitespace. */
  refuses(s, "{}\0", 3);
  pmcp_server_free(s);
}
END_TEST

START_TEST(nesting_limit)
{
  pmcp_server *s = server();
  size_t n = PMCP__JDOC_DEPTH + 1;
  char *t = malloc(2 * n + 1);
  /* PMCP__JDOC_DEPTH nested arrays are fine, one more is refused. */
  for (size_t k = 0; k < 2; k++) {
    size_t depth = PMCP__JDOC_DEPTH + k;
    memset(t, '[', depth);
    memset(t + depth, ']', depth);
    pmcp__jdoc *doc = NULL;
    cJSON *root = NULL;
    int rc = pmcp__jdoc_parse(&doc, &root, s, t, 2 * depth);
    ck_assert_int_eq(rc, k ? PMCP_EPROTO : 0);
    pmcp__jdoc_unref(doc);
  }
  free(t);
  pmcp_server_free(s);
}
END_TEST

/* Messages bigger than the first block: many nodes, a string of several
 * MiB, each spilling into further blocks. */
START_TEST(big_messages)
{
  pmcp_server *s = server();
  size_t n = 50000;
  char *t = malloc(n * 16 + 64);
  size_t k = 0;
  t[k++] = '[';
  for (size_t i = 0; i < n; i++)
    k += (size_t)sprintf(t + k, "%s{\"v\":%zu}", i ? "," : "", i);
  t[k++] = ']';
  t[k] = '\0';
  accepts(s, t);
  free(t);
  size_t big = 5u << 20;
  t = malloc(big + 16);
  memcpy(t, "{\"s\":\"", 6);
  memset(t + 6, 'x', big);
  memcpy(t + 6 + big, "\"}", 3);
  accepts(s, t);
  free(t);
  pmcp_server_free(s);
}
END_TEST

/* The tree outlives the parse for as long as a reference is held. */
START_TEST(references)
{
  pmcp_server *s = server();
  pmcp__jdoc *doc = NULL;
  cJSON *root = NULL;
  ck_assert_int_eq(pmcp__jdoc_parse(&doc, &root, s, "{\"a\":\"b\"}", 9), 0);
  pmcp__jdoc_ref(doc);
  pmcp__jdoc_unref(doc);
  ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(root, "a")->valuestring, "b");
  pmcp__jdoc_unref(doc);
  pmcp__jdoc_unref(NULL);
  pmcp_server_free(s);
}
END_TEST

/* A decoded \u0000 is flagged on its node and found by path, a value's
 * or a member name's; a message without one is not flagged. */
START_TEST(nul_strings)
{
  static const struct { const char *text, *path; int kind; } cases[] = {
    {"{\"params\":{\"arguments\":{\"workspace\":\"vision\\u0000\"}}}",
     "params.arguments.workspace", 1},
    {"{\"params\":{\"arguments\":{\"a\\u0000b\":1}}}", "params.arguments", 2},
    {"{\"a\":[\"x\",\"\\u0000\"]}", "a[1]", 1},
    {"{\"method\":\"ping\\u0000\"}", "method", 1},
    {"{\"a\":\"\\\\u0000\"}", "", 0}, /* an escaped backslash: text */
    {"{\"a\":\"plain\"}", "", 0},
  };
  pmcp_server *s = server();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    pmcp__jdoc *doc = NULL;
    cJSON *root = NULL;
    ck_assert_int_eq(pmcp__jdoc_parse(&doc, &root, s, cases[i].text, strlen(cases[i].text)), 0);
    ck_assert_int_eq(pmcp__jdoc_has_nul(doc), cases[i].kind != 0);
    pmcp_buf path = PMCP_BUF_INIT;
    ck_assert_int_eq(pmcp__jdoc_nul_path(root, &path), cases[i].kind);
    ck_assert_str_eq(path.ptr ? path.ptr : "", cases[i].path);
    pmcp_buf_dispose(&path);
    pmcp__jdoc_unref(doc);
  }
  pmcp_server_free(s);
}
END_TEST

/* The first child of params._meta of a message parsed into @p doc. */
static const cJSON *meta_child(const cJSON *root)
{
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(root, "params"), "_meta");
  return m ? m->child : NULL;
}

static char *request_with_meta(const char *meta, int id)
{
  size_t n = strlen(meta) + 200;
  char *t = malloc(n);
  snprintf(t, n, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
           "{\"name\":\"echo\",\"_meta\":%s,\"arguments\":{\"text\":\"x\"}}}", id, meta);
  return t;
}

#define MV "\"io.modelcontextprotocol/protocolVersion\""
#define MC "\"io.modelcontextprotocol/clientCapabilities\""

/* A repeated modern _meta links the server's kept tree: the same tree as a
 * fresh parse every time (cJSON's), for the first eight distinct ones and
 * for every later one, none kept with a NUL, none linked across a byte of
 * difference, and the nesting limit the same as without it. */
START_TEST(meta_cache)
{
  pmcp_server *s = server();
  char metas[12][256];
  for (int i = 0; i < 12; i++)
    snprintf(metas[i], sizeof metas[i],
             "{" MV ":\"2026-07-28\"," MC ":{%s},\"io.modelcontextprotocol/clientInfo\":"
             "{\"name\":\"c%d\",\"version\":\"1\"}}", i % 2 ? "\"roots\":{}" : "", i);
  const cJSON *kept[12] = {0};
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 12; i++) {
      char *t = request_with_meta(metas[i], i);
      accepts(s, t);
      pmcp__jdoc *doc = NULL;
      cJSON *root = NULL;
      ck_assert_int_eq(pmcp__jdoc_parse(&doc, &root, s, t, strlen(t)), 0);
      const cJSON *c = meta_child(root);
      const cJSON *m = cJSON_GetObjectItemCaseSensitive(
          cJSON_GetObjectItemCaseSensitive(root, "params"), "_meta");
      const pmcp__meta_entry *e = pmcp__meta_cache_of(s, m);
      if (i < PMCP__META_SLOTS) {
        /* kept from the first parse on: the same nodes every time */
        ck_assert_ptr_nonnull(e);
        ck_assert_str_eq(e->version->valuestring, "2026-07-28");
        ck_assert_ptr_eq(e->caps, cJSON_GetObjectItemCaseSensitive(
                                      m, "io.modelcontextprotocol/clientCapabilities"));
        ck_assert_ptr_null(e->log);
        if (kept[i])
          ck_assert_ptr_eq(kept[i], c);
        kept[i] = c;
      } else {
        ck_assert_ptr_null(e); /* the slots are full: parsed each time */
      }
      /* the cached tree is followed by the rest of the message as usual */
      ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(
                           cJSON_GetObjectItemCaseSensitive(
                               cJSON_GetObjectItemCaseSensitive(root, "params"), "arguments"),
                           "text")->valuestring, "x");
      pmcp__jdoc_unref(doc);
      free(t);
    }
  }
  /* one byte different, other spacing, a longer value, a NUL: not linked */
  static const char *const near[] = {
    "{" MV ":\"2026-07-29\"," MC ":{},\"io.modelcontextprotocol/clientInfo\":"
    "{\"name\":\"c0\",\"version\":\"1\"}}",
    "{ " MV ":\"2026-07-28\"," MC ":{},\"io.modelcontextprotocol/clientInfo\":"
    "{\"name\":\"c0\",\"version\":\"1\"}}",
    "{" MV ":\"2026-07-28\"," MC ":{},\"io.modelcontextprotocol/clientInfo\":"
    "{\"name\":\"c0\",\"version\":\"1\"},\"progressToken\":3}",
    "{" MV ":\"2026-07-28\"," MC ":{},\"x\":\"a\\u0000b\"}",
  };
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
      char *t = request_with_meta(near[i], 1);
      accepts(s, t);
      pmcp__jdoc *doc = NULL;
      cJSON *root = NULL;
      ck_assert_int_eq(pmcp__jdoc_parse(&doc, &root, s, t, strlen(t)), 0);
      ck_assert_int_eq(pmcp__jdoc_has_nul(doc), i == 3);
      for (int j = 0; j < 12; j++)
        ck_assert_ptr_ne(meta_child(root), kept[j]);
      pmcp__jdoc_unref(doc);
      free(t);
    }
  }
  /* a kept text cut short, or followed by what ends no object */
  char cut[300];
  snprintf(cut, sizeof cut, "{\"params\":{\"_meta\":%.*s", (int)strlen(metas[0]) - 1, metas[0]);
  refuses(s, cut, strlen(cut));
  snprintf(cut, sizeof cut, "{\"params\":{\"_meta\":%s]}", metas[0]);
  refuses(s, cut, strlen(cut));
  snprintf(cut, sizeof cut, "{\"params\":{\"_meta\":%s}}", metas[0]);
  accepts(s, cut);
  /* depth: a kept _meta of nesting 2 fits one level less deep than one
   * of nesting 1, exactly as without the cache */
  const char *deep = metas[0]; /* nesting 2: clientInfo */
  for (int extra = 0; extra < 2; extra++) {
    size_t arrays = PMCP__JDOC_DEPTH - 2 - (size_t)extra; /* + params + _meta... */
    size_t n = arrays * 2 + strlen(deep) + 64;
    char *t = malloc(n), *o = t;
    for (size_t i = 0; i < arrays; i++)
      *o++ = '[';
    o += sprintf(o, "{\"_meta\":%s}", deep);
    for (size_t i = 0; i < arrays; i++)
      *o++ = ']';
    *o = '\0';
    pmcp_server *fresh = server();
    pmcp__jdoc *d1 = NULL, *d2 = NULL;
    cJSON *r1 = NULL, *r2 = NULL;
    int rc_fresh = pmcp__jdoc_parse_plain(&d1, &r1, fresh, t, strlen(t));
    int rc_cached = pmcp__jdoc_parse(&d2, &r2, s, t, strlen(t));
    ck_assert_int_eq(rc_fresh, rc_cached);
    ck_assert_int_eq(rc_fresh, extra ? 0 : PMCP_EPROTO);
    pmcp__jdoc_unref(d1);
    pmcp__jdoc_unref(d2);
    pmcp_server_free(fresh);
    free(t);
  }
  pmcp_server_free(s);
}
END_TEST

/* RFC 3629 byte by byte: the reference for pmcp__utf8_valid. */
static int utf8_ref(const unsigned char *p, size_t n)
{
  for (size_t i = 0; i < n;) {
    unsigned c = p[i];
    size_t k;
    unsigned cp, min;
    if (c < 0x80) { i++; continue; }
    else if ((c & 0xE0) == 0xC0) { k = 1; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { k = 2; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { k = 3; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (i + k >= n)
      return 0;
    for (size_t j = 1; j <= k; j++) {
      if ((p[i + j] & 0xC0) != 0x80)
        return 0;
      cp = (cp << 6) | (p[i + j] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return 0;
    i += k + 1;
  }
  return 1;
}

/* The validator's ASCII fast paths (32 and 8 bytes at a time) against the
 * reference: long ASCII runs with one multi-byte sequence, valid or not,
 * at every offset, and random bytes. */
/* pmcp__json_members (one pass, values skipped by their brackets and
 * quotes) finds what pmcp__json_member (every value checked) finds, for
 * values that nest arrays and objects and strings holding brackets,
 * colons, commas and spaces: a store page's shape. */
START_TEST(members_skip_nested_values)
{
  static const char *const docs[] = {
    "{\"items\":[{\"ref\":\"run:a\",\"tags\":[]},{\"ref\":\"run:b\",\"tags\":[\"x\"]}],"
    "\"total\":2,\"next\":null}",
    "{\"items\":[{\"a\":\"b ] } , : c\",\"n\":[1,[2,{\"k\":\"]\"}]]}],\"total\":7,\"next\":\"3\"}",
    "{ \"items\" : [ { \"a\" : [ ] } , { \"b\" : { } } ] , \"total\" : 1 , \"next\" : \"x\" }",
    "{\"items\":[],\"total\":0}",
    "{\"next\":\"\\\"]\",\"items\":[{\"e\":\"\\\\\"}],\"total\":-1}",
    /* quotes after runs of backslashes, in keys and values */
    "{\"a\\\\\":\"\\\\\\\"\",\"it\\\"ems\":1,\"next\":\"\\\\\\\\\",\"items\":\"\\\"\\\\\","
    "\"total\":[\"\\\\\\\\\\\"\"]}",
    "{\"\\u0074otal\":3,\"total\":4,\"items\":\"\\\\\\\\\\\\\\\\\"}",
  };
  static const char *const keys[] = {"items", "total", "next", "absent"};
  for (size_t d = 0; d < sizeof docs / sizeof docs[0]; d++) {
    const char *vals[4];
    size_t lens[4];
    size_t found = pmcp__json_members(docs[d], strlen(docs[d]), keys, 4, vals, lens);
    size_t want = 0;
    for (size_t k = 0; k < 4; k++) {
      const char *v = NULL;
      size_t vl = 0;
      int has = pmcp__json_member(docs[d], strlen(docs[d]), keys[k], &v, &vl);
      want += has ? 1 : 0;
      ck_assert_msg(has ? vals[k] == v && lens[k] == vl : vals[k] == NULL,
                    "doc %zu, %s: %.*s, not %.*s", d, keys[k], (int)lens[k],
                    vals[k] ? vals[k] : "", (int)vl, v ? v : "");
    }
    ck_assert_uint_eq(found, want);
  }
}
END_TEST

/* pmcp__json_element walks an array's elements as pmcp__json_skip finds
 * them: spans without the whitespace around, nested brackets and strings
 * holding them skipped whole, the end at ']'. */
START_TEST(elements_of_arrays)
{
  static const struct {
    const char *arr;
    const char *want[4];
  } cases[] = {
    {"[]", {NULL}},
    {"[ ]", {NULL}},
    {"[1]", {"1", NULL}},
    {"[ {\"a\":[1,\"]\"]} , \"x,]\" ,null,-2.5e3 ]",
     {"{\"a\":[1,\"]\"]}", "\"x,]\"", "null", "-2.5e3"}},
    {"[[],{},[[\"\\\"\"]]]", {"[]", "{}", "[[\"\\\"\"]]", NULL}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const char *a = cases[c].arr, *end = a + strlen(a), *p = a + 1, *v;
    size_t vl, n = 0;
    while ((p = pmcp__json_element(p, end, &v, &vl))) {
      ck_assert_msg(n < 4 && cases[c].want[n], "case %zu: extra element %.*s", c, (int)vl, v);
      ck_assert_msg(vl == strlen(cases[c].want[n]) && !memcmp(v, cases[c].want[n], vl),
                    "case %zu element %zu: %.*s", c, n, (int)vl, v);
      ck_assert_ptr_eq(pmcp__json_skip(v, end), v + vl);
      n++;
    }
    ck_assert_msg(n == 4 || !cases[c].want[n], "case %zu: %zu elements", c, n);
  }
}
END_TEST

START_TEST(utf8_valid_against_reference)
{
  static const char *const seqs[] = {
    "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "\xc0\xaf", "\xe0\x80\xaf",
    "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc3", "\xe4\xb8", "\x80", "\xff", "\xf0\x9f\x98",
  };
  unsigned char buf[200];
  for (size_t q = 0; q < sizeof seqs / sizeof seqs[0]; q++) {
    size_t sl = strlen(seqs[q]);
    for (size_t len = sl; len <= 100; len++) {
      for (size_t at = 0; at + sl <= len; at++) {
        memset(buf, 'a', len);
        memcpy(buf + at, seqs[q], sl);
        ck_assert_int_eq(pmcp__utf8_valid((const char *)buf, len), utf8_ref(buf, len));
      }
    }
  }
  unsigned seed = 12345;
  for (int t = 0; t < 200000; t++) {
    size_t len = (size_t)(t % 97);
    for (size_t i = 0; i < len; i++) {
      seed = seed * 1103515245u + 12345u;
      unsigned r = seed >> 16;
      /* mostly ASCII, some lead and continuation bytes */
      buf[i] = (unsigned char)(r % 8 ? 0x20 + r % 90 : 0x80 + (r >> 3) % 128);
    }
    ck_assert_int_eq(pmcp__utf8_valid((const char *)buf, len), utf8_ref(buf, len));
  }
}
END_TEST

typedef struct {
  pmcp_server *s;
  int seed;
} race_arg;

static void *race(void *p)
{
  race_arg *a = p;
  for (int i = 0; i < 400; i++) {
    char meta[200];
    snprintf(meta, sizeof meta, "{" MV ":\"2026-07-28\"," MC ":{},\"n\":%d}",
             (i * 7 + a->seed) % 11);
    char *t = request_with_meta(meta, i);
    accepts(a->s, t);
    free(t);
  }
  return NULL;
}

/* Threads offering and linking at once (ASan/TSan builds watch it). */
START_TEST(meta_cache_threads)
{
  pmcp_server *s = server();
  pthread_t th[4];
  race_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (race_arg){s, i};
    ck_assert_int_eq(pthread_create(&th[i], NULL, race, &args[i]), 0);
  }
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], NULL);
  int kept = 0;
  for (int i = 0; i < PMCP__META_SLOTS; i++)
    kept += s->meta_cache[i] != NULL;
  ck_assert_int_eq(kept, PMCP__META_SLOTS);
  pmcp_server_free(s);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("jdoc");
  TCase *tc = tcase_create("parse");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, same_as_cjson);
  tcase_add_test(tc, refuses_what_is_not_json);
  tcase_add_test(tc, nesting_limit);
  tcase_add_test(tc, big_messages);
  tcase_add_test(tc, references);
  tcase_add_test(tc, nul_strings);
  tcase_add_test(tc, meta_cache);
  tcase_add_test(tc, meta_cache_threads);
  tcase_add_test(tc, utf8_valid_against_reference);
  tcase_add_test(tc, members_skip_nested_values);
  tcase_add_test(tc, elements_of_arrays);
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
