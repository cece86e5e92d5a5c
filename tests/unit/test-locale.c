/* SPDX-License-Identifier: MIT */
/* Numbers keep '.' under any LC_NUMERIC the host sets: a host calls
 * setlocale(LC_ALL, ...) with a two-byte decimal point (ps_AF: U+066B) or a
 * comma (de_DE) and numbers go through the JSON writer, tool arguments
 * (cJSON), handlers on the calling thread and on the workers, the tracking
 * toolset's filters and its reads of a SQLite store. Replies are checked
 * in the C locale against the values written. The locales are generated
 * with localedef into a scratch directory when the system lacks them; the
 * suite skips (77) saying so when that is impossible. */
#include <check.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine-harness.h"
#include "store-test-util.h"

static const char *LOC; /* the locale of this run */
static locale_t C_LOC;
static char LOCDIR[256]; /* the localedef output, removed at the end */

/* Parses @p text as the client would (its own C locale). */
static cJSON *parse_c(const char *text)
{
  locale_t prev = uselocale(C_LOC);
  cJSON *v = cJSON_Parse(text);
  uselocale(prev);
  ck_assert_msg(v != NULL, "not JSON under %s: %s", LOC, text);
  return v;
}

static void host_locale(void)
{
  ck_assert_ptr_nonnull(setlocale(LC_ALL, LOC));
  /* the test means something only if the decimal point is not '.' */
  ck_assert_str_ne(localeconv()->decimal_point, ".");
}

START_TEST(formatter_and_writer)
{
  host_locale();
  char out[PMCP_JSON_NUMBER_MAX];
  pmcp_json_format_number(1234.5, 0, out, sizeof out);
  ck_assert_str_eq(out, "1234.5");
  pmcp_json_format_number(0.1, PMCP_JSON_LOSSLESS, out, sizeof out);
  ck_assert_str_eq(out, "0.1");
  pmcp_json_format_number(-2.5e-7, PMCP_JSON_LOSSLESS, out, sizeof out);
  ck_assert_str_eq(out, "-2.5e-07");
  pmcp_json *j;
  ck_assert_int_eq(pmcp_json_new(&j, 0), 0);
  pmcp_json_array_begin(j);
  pmcp_json_number(j, 1234.5);
  pmcp_json_number_lossless(j, 1.0 / 3.0);
  pmcp_json_array_end(j);
  ck_assert_str_eq(pmcp_json_text(j, NULL), "[1234.5,0.3333333333333333]");
  pmcp_json_free(j);
}
END_TEST

/* JSON text rewritten in its exact form reads its numbers with '.' and
 * writes them so: each reads back (C locale) as the double the text
 * spells, fractions, exponents, subnormals and the largest included. */
START_TEST(normalized_text)
{
  host_locale();
  static const char in[] =
      "{\"a\": [1234.5, 0.1, -2.5e-7, 1e308, 5e-324, 0.30000000000000004, -0.0, 12.0],"
      " \"b\": {\"c\": 6.02214076e23}}";
  pmcp_buf b = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp_json_normalize(in, sizeof in - 1, &b), 0);
  ck_assert_str_eq(b.ptr, "{\"a\":[1234.5,0.1,-2.5e-07,1e+308,5e-324,0.30000000000000004,-0,12],"
                          "\"b\":{\"c\":6.02214076e+23}}");
  cJSON *want = parse_c(in), *got = parse_c(b.ptr);
  const cJSON *w = cJSON_GetObjectItem(want, "a")->child, *g = cJSON_GetObjectItem(got, "a")->child;
  for (; w && g; w = w->next, g = g->next)
    ck_assert_msg(memcmp(&w->valuedouble, &g->valuedouble, sizeof(double)) == 0,
                  "%.17g became %.17g under %s", w->valuedouble, g->valuedouble, LOC);
  ck_assert(!w && !g);
  cJSON_Delete(want);
  cJSON_Delete(got);
  pmcp_buf_dispose(&b);
  /* the host's locale is as it set it */
  ck_assert_str_ne(localeconv()->decimal_point, ".");
}
END_TEST

/* Echoes its number arguments back through the JSON writer, cJSON and
 * snprintf: the three ways handlers and toolsets write numbers. */
static int echo(pmcp_call *call, void *ud)
{
  (void)ud;
  double x = 0, v0 = 0;
  ck_assert_int_eq(pmcp_arg_number(call, "x", &x), 0);
  ck_assert_int_eq(pmcp_arg_number_at(call, "v", 0, &v0), 0);
  cJSON *c = cJSON_CreateNumber(x * 2);
  char *cj = cJSON_PrintUnformatted(c);
  cJSON_Delete(c);
  char pf[64];
  snprintf(pf, sizeof pf, "%g", x);
  pmcp_json *j;
  ck_assert_int_eq(pmcp_json_new(&j, 0), 0);
  pmcp_json_object_begin(j);
  pmcp_json_key(j, "x");
  pmcp_json_number_lossless(j, x);
  pmcp_json_key(j, "v0");
  pmcp_json_number_lossless(j, v0);
  pmcp_json_key(j, "cjson");
  pmcp_json_string(j, cj);
  pmcp_json_key(j, "printf");
  pmcp_json_string(j, pf);
  pmcp_json_object_end(j);
  size_t n;
  const char *t = pmcp_json_text(j, &n);
  int rc = pmcp_result_text(call, t, n);
  pmcp_json_free(j);
  free(cj);
  return rc;
}

static const pmcp_arg_spec echo_args[] = {
  {"x", PMCP_T_NUMBER, 1, "A number.", 0, 0, 0, 0, NULL, NULL},
  {"v", PMCP_T_NUMBER_ARRAY, 1, "Numbers.", 0, 0, 0, 0, NULL, NULL},
};

static void add_echo(pmcp_server *srv, const char *name, unsigned flags)
{
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = name;
  d.description = "Echoes numbers.";
  d.args = echo_args;
  d.n_args = 2;
  d.flags = flags;
  d.handler = echo;
  ck_assert_int_eq(pmcp_server_add_tool(srv, &d), 0);
}

/* The one text item of the reply to the tools/call in @p m, parsed. */
static cJSON *text_of(h_msg *m)
{
  cJSON *r = parse_c(m->data);
  cJSON *res = cJSON_GetObjectItem(r, "result");
  ck_assert_msg(res != NULL, "no result: %s", m->data);
  ck_assert(!cJSON_IsTrue(cJSON_GetObjectItem(res, "isError")));
  cJSON *t = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(res, "content"), 0),
                                 "text");
  ck_assert(cJSON_IsString(t));
  cJSON *o = parse_c(t->valuestring);
  cJSON_Delete(r);
  return o;
}

START_TEST(tool_arguments_round_trip)
{
  host_locale();
  harness *h = h_new(NULL);
  add_echo(h->srv, "echo", 0);
  add_echo(h->srv, "echo_worker", PMCP_TOOL_BLOCKING);
  h_init(h, "", "2025-06-18");
  const char *tools[] = {"echo", "echo_worker"};
  for (int i = 0; i < 2; i++) {
    char req[256];
    snprintf(req, sizeof req,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
             "{\"name\":\"%s\",\"arguments\":{\"x\":2.5,\"v\":[1234.5,-0.125]}}}",
             10 + i, tools[i]);
    h_send(h, "", req);
    h_msg *m = h_next_wait(h, 5000);
    ck_assert_ptr_nonnull(m);
    cJSON *o = text_of(m);
    h_msg_free(m);
    ck_assert_double_eq(cJSON_GetObjectItem(o, "x")->valuedouble, 2.5);
    ck_assert_double_eq(cJSON_GetObjectItem(o, "v0")->valuedouble, 1234.5);
    ck_assert_str_eq(cJSON_GetObjectItem(o, "cjson")->valuestring, "5");
    ck_assert_str_eq(cJSON_GetObjectItem(o, "printf")->valuestring, "2.5");
    cJSON_Delete(o);
  }
  h_free(h);
  /* the host's locale is as it set it once the calls are over */
  ck_assert_str_ne(localeconv()->decimal_point, ".");
}
END_TEST

static const double LR[] = {0.25, 1.5, 0.75, 1234.5};

START_TEST(toolset_filters_and_store)
{
  /* The store is written in the C locale, then read under the host's. */
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  pmcp_entity_spec p = PMCP_ENTITY_SPEC_INIT;
  p.id = "vision";
  p.name = "Vision";
  ST_OK(s, pmcp_store_create(s, t, "project", &p, NULL));
  for (int i = 0; i < 4; i++) {
    char id[8];
    snprintf(id, sizeof id, "r%d", i);
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = id;
    r.project = "vision";
    r.created_ms = 1700000000000LL + i;
    ST_OK(s, pmcp_store_run_create(s, t, &r, NULL));
    char ref[16];
    snprintf(ref, sizeof ref, "run:%s", id);
    pmcp_value f = {PMCP_V_FLOAT, NULL, 0, LR[i], NULL, 0};
    ST_OK(s, pmcp_store_set_attr(s, t, ref, "config/lr", &f));
    pmcp_series_spec ss = {PMCP_SERIES_SPEC_VERSION, "loss", NULL, 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
    int64_t sid;
    ST_OK(s, pmcp_store_series(s, t, id, &ss, &sid));
    pmcp_point pts[2] = {{0, 0, LR[i] / 2}, {10, 0, -LR[i]}};
    ST_OK(s, pmcp_store_log(s, t, sid, pts, 2));
  }
  pmcp_store_free(s);
  pmcp_store *ro;
  ck_assert_int_eq(pmcp_store_open(&ro, st_path, PMCP_STORE_READONLY), 0);

  host_locale();
  harness *h = h_new_scoped(ro, NULL, NULL);
  /* A filter whose literal has a fraction: read as 0 or 1 it selects
   * other runs. */
  h_send(h, "", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                "{\"name\":\"list_runs\",\"arguments\":{\"project\":\"vision\",\"filter\":"
                "[{\"attr\":\"config/lr\",\"op\":\"gt\",\"value\":0.5},"
                "{\"attr\":\"config/lr\",\"op\":\"lt\",\"value\":1.6}]}}}");
  h_msg *m = h_next_wait(h, 5000);
  ck_assert_ptr_nonnull(m);
  ck_assert_msg(strstr(m->data, "\"r1\"") && strstr(m->data, "\"r2\"") &&
                    !strstr(m->data, "\"r0\"") && !strstr(m->data, "\"r3\""),
                "list_runs under %s: %s", LOC, m->data);
  h_msg_free(m);
  /* Values read from the store come back exactly. */
  h_send(h, "", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
                "{\"name\":\"fetch_float_series\",\"arguments\":{\"runs\":[\"r3\"],"
                "\"series\":[\"loss\"],\"step_from\":0,\"step_to\":100}}}");
  m = h_next_wait(h, 5000);
  ck_assert_ptr_nonnull(m);
  cJSON *o = text_of(m);
  char *flat = cJSON_PrintUnformatted(o);
  ck_assert_msg(strstr(m->data, "617.25") && strstr(m->data, "-1234.5"),
                "fetch_float_series under %s: %s", LOC, m->data);
  free(flat);
  cJSON_Delete(o);
  h_msg_free(m);
  h_free(h);
  pmcp_store_free(ro);
}
END_TEST

/* Whether setlocale knows @p name, asked in a child: glibc remembers a
 * locale it failed to find, so the parent must not ask before localedef
 * has made it. */
static int child_can_set(const char *name)
{
  pid_t pid = fork();
  if (pid == 0)
    _exit(setlocale(LC_ALL, name) ? 0 : 1);
  int st = 0;
  return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* Makes @p name usable by setlocale: installed, or generated with
 * localedef into a scratch LOCPATH. */
static int have_locale(const char *name, const char *src)
{
  if (child_can_set(name))
    return 1;
  char *dir = LOCDIR;
  if (!dir[0]) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof LOCDIR, "%s/pmcp-locale-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
      return 0;
    setenv("LOCPATH", dir, 1);
  }
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "localedef -i %s -f UTF-8 %s/%s >/dev/null 2>&1", src, dir, name);
  if (system(cmd) != 0)
    return 0;
  return child_can_set(name);
}

int main(void)
{
  C_LOC = newlocale(LC_ALL_MASK, "C", (locale_t)0);
  static const char *const want[][2] = {{"ps_AF.UTF-8", "ps_AF"}, {"de_DE.UTF-8", "de_DE"}};
  int failed = 0, ran = 0;
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    if (!have_locale(want[i][0], want[i][1])) {
      fprintf(stderr, "test-locale: skipping %s: not installed and localedef could not make it "
                      "(install Debian's locales package)\n", want[i][0]);
      continue;
    }
    LOC = want[i][0];
    ran++;
    Suite *s = suite_create(LOC);
    TCase *tc = tcase_create("numbers");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, formatter_and_writer);
    tcase_add_test(tc, normalized_text);
    tcase_add_test(tc, tool_arguments_round_trip);
    tcase_add_checked_fixture(tc, NULL, st_cleanup);
    tcase_add_test(tc, toolset_filters_and_store);
    suite_add_tcase(s, tc);
    failed += st_run_suite(s);
  }
  freelocale(C_LOC);
  if (LOCDIR[0]) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", LOCDIR);
    if (system(cmd) != 0)
      fprintf(stderr, "test-locale: could not remove %s\n", LOCDIR);
  }
  if (!ran)
    return 77;
  return failed ? 1 : 0;
}
