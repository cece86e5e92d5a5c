/* SPDX-License-Identifier: MIT */
/* find_papers over the local papers index and over a remote provider: a
 * small HTTP server this test starts on loopback, which also plays a slow,
 * a broken and a garbage-speaking provider. Every result carries
 * provenance "open-web"; score grows as relevance falls; a bad provider is
 * a clear error within the timeout. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "probemcp/probemcp.h"
#include "probemcp/research.h"
#include "probemcp/tokens.h"
#include "engine-harness.h"
#include "store-test-util.h"
#include "tool-call-util.h"

static pmcp_store *RO;
static int PORT;
/* /hold/...: requests wait until the test releases them */
static pthread_mutex_t HOLD_MU = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t HOLD_CV = PTHREAD_COND_INITIALIZER;
static int HELD, RELEASED;
static char FULL[30000];

/* ---- the provider --------------------------------------------------------- */

static void reply(int fd, int status, const char *body)
{
  char head[256];
  snprintf(head, sizeof head, "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
           "Content-Length: %zu\r\nConnection: close\r\n\r\n", status, strlen(body));
  if (write(fd, head, strlen(head)) < 0 || write(fd, body, strlen(body)) < 0)
    return;
}

static void *conn(void *arg)
{
  int fd = (int)(intptr_t)arg;
  char req[4096];
  ssize_t n = read(fd, req, sizeof req - 1);
  if (n <= 0) {
    close(fd);
    return NULL;
  }
  req[n] = 0;
  char path[2048] = "";
  sscanf(req, "GET %2047s", path);
  if (!strncmp(path, "/hold/", 6)) {
    pthread_mutex_lock(&HOLD_MU);
    HELD++;
    pthread_cond_broadcast(&HOLD_CV);
    while (!RELEASED)
      pthread_cond_wait(&HOLD_CV, &HOLD_MU);
    pthread_mutex_unlock(&HOLD_MU);
    reply(fd, 200, "{\"papers\":[{\"id\":\"2101.00001\",\"title\":\"Held\"}]}");
  } else if (!strncmp(path, "/slow/", 6)) {
    sleep(20); /* far past the 500 ms timeout: a hang would show */
    reply(fd, 200, "{\"papers\":[]}");
  } else if (!strncmp(path, "/garbage/", 9)) {
    reply(fd, 200, "<html>this is not json</html>");
  } else if (!strncmp(path, "/err/", 5)) {
    reply(fd, 503, "{}");
  } else if (!strncmp(path, "/ok/search?", 11)) {
    /* echo the query so the test sees what was asked */
    cJSON *o = cJSON_CreateObject();
    cJSON *ps = cJSON_AddArrayToObject(o, "papers");
    for (int i = 0; i < 3; i++) {
      cJSON *p = cJSON_CreateObject();
      char id[32];
      snprintf(id, sizeof id, "2101.0000%d", i + 1);
      cJSON_AddStringToObject(p, "id", id);
      cJSON_AddStringToObject(p, "title", i == 0 ? path : "Remote paper");
      cJSON_AddStringToObject(p, "categories", "cs.LG stat.ML");
      cJSON_AddNumberToObject(p, "score", 0.1 * (i + 1));
      cJSON_AddItemToArray(ps, p);
    }
    char *t = cJSON_PrintUnformatted(o);
    reply(fd, 200, t);
    free(t);
    cJSON_Delete(o);
  } else if (!strcmp(path, "/ok/papers/2101.00001")) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", "2101.00001");
    cJSON_AddStringToObject(o, "title", "Remote A");
    cJSON_AddStringToObject(o, "abstract", "We remote.");
    cJSON_AddStringToObject(o, "full_text", FULL);
    char *t = cJSON_PrintUnformatted(o);
    reply(fd, 200, t);
    free(t);
    cJSON_Delete(o);
  } else if (!strncmp(path, "/ok/papers/2101.00001/similar", 29)) {
    reply(fd, 200, "{\"papers\":[{\"id\":\"2101.00009\",\"title\":\"Near\"}]}");
  } else if (!strncmp(path, "/ok/papers/", 11)) {
    reply(fd, 404, "{}");
  } else {
    reply(fd, 200, "{\"unexpected\":true}");
  }
  close(fd);
  return NULL;
}

static void *serve(void *arg)
{
  int ls = (int)(intptr_t)arg;
  for (;;) {
    int fd = accept(ls, NULL, NULL);
    if (fd < 0)
      return NULL;
    pthread_t t;
    pthread_create(&t, NULL, conn, (void *)(intptr_t)fd);
    pthread_detach(t);
  }
}

static void start_provider(void)
{
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
  ck_assert_int_eq(listen(ls, 16), 0);
  socklen_t l = sizeof a;
  getsockname(ls, (struct sockaddr *)&a, &l);
  PORT = ntohs(a.sin_port);
  pthread_t t;
  pthread_create(&t, NULL, serve, (void *)(intptr_t)ls);
  pthread_detach(t);
}

/* ---- the server ------------------------------------------------------------ */

static cJSON *ok(const char *args) { return tc_ok("find_papers", args); }

static void refused(const char *args, const char *needle)
{
  tc_refused("find_papers", args, needle);
}

static void fill(void)
{
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  static const pmcp_paper papers[] = {
    {PMCP_PAPER_VERSION, "1001.0001", "Neutrino oscillations in dense matter",
     "We study how neutrinos oscillate when they cross dense matter such as the sun.",
     "A. Author", "hep-ph astro-ph.SR", "2010-01-01", NULL, NULL, NULL, NULL},
    {PMCP_PAPER_VERSION, "1001.0002", "Matter effects on neutrino oscillation probabilities",
     "Oscillation of neutrinos in matter: resonant conversion and the MSW effect.",
     "B. Author", "hep-ph", "2010-01-02", NULL, NULL, NULL, NULL},
    {PMCP_PAPER_VERSION, "1001.0003", "Deep learning for neutrino event reconstruction",
     "A convolutional network reconstructs neutrino events in a detector.",
     "C. Author", "cs.LG hep-ex", "2010-01-03", NULL, NULL, NULL, NULL},
    {PMCP_PAPER_VERSION, "1001.0004", "Stochastic gradient descent with warm restarts",
     "Learning rate schedules with restarts improve deep learning training.",
     "D. Author", "cs.LG stat.ML", "2010-01-04", NULL, NULL, NULL, NULL},
    {PMCP_PAPER_VERSION, "hep-th/9901001", "Strings on curved backgrounds", "String theory on curved space.",
     "E. Author", "hep-th", "1999-01-01", NULL, NULL, NULL, NULL},
  };
  for (size_t i = 0; i < sizeof papers / sizeof papers[0]; i++)
    ST_OK(s, pmcp_store_paper(s, t, &papers[i]));
  pmcp_store_free(s);
}

static void setup_with(const char *url)
{
  fill();
  pmcp_server *srv = tc_server_new();
  ck_assert_int_eq(pmcp_store_open(&RO, st_path, PMCP_STORE_READONLY), 0);
  pmcp_research_options ro = PMCP_RESEARCH_OPTIONS_INIT;
  ro.papers_url = url;
  ro.papers_timeout_ms = 500;
  ck_assert_int_eq(pmcp_research_register(srv, RO, &ro), 0);
  tc_initialize();
}

static void setup_local(void) { setup_with(NULL); }

static void teardown(void)
{
  tc_server_free();
  pmcp_store_free(RO);
  st_cleanup();
}

static void all_open_web(const cJSON *o)
{
  const cJSON *p;
  cJSON_ArrayForEach(p, cJSON_GetObjectItem(o, "papers"))
    ck_assert_str_eq(cJSON_GetObjectItem(p, "provenance")->valuestring, "open-web");
}

START_TEST(local_search_categories_and_scores)
{
  cJSON *o = ok("{\"mode\":\"search\",\"query\":\"how do neutrinos oscillate in matter?\"}");
  cJSON *ps = cJSON_GetObjectItem(o, "papers");
  ck_assert_int_ge(cJSON_GetArraySize(ps), 2);
  all_open_web(o);
  /* score is a distance: ascending along the list */
  double prev = -1;
  const cJSON *p;
  cJSON_ArrayForEach(p, ps)
  {
    double s = cJSON_GetObjectItem(p, "score")->valuedouble;
    ck_assert(s >= prev && s > 0 && s <= 1);
    prev = s;
  }
  const char *top = cJSON_GetObjectItem(cJSON_GetArrayItem(ps, 0), "ref")->valuestring;
  ck_assert(!strcmp(top, "paper:1001.0001") || !strcmp(top, "paper:1001.0002"));
  cJSON_Delete(o);
  /* categories AND: hep-ph and astro-ph (an archive prefix) -> only 1001.0001 */
  o = ok("{\"mode\":\"search\",\"query\":\"neutrino oscillation matter\","
         "\"categories\":[\"hep-ph\",\"astro-ph\"]}");
  ps = cJSON_GetObjectItem(o, "papers");
  ck_assert_int_eq(cJSON_GetArraySize(ps), 1);
  ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(ps, 0), "ref")->valuestring,
                   "paper:1001.0001");
  cJSON_Delete(o);
  o = ok("{\"mode\":\"search\",\"query\":\"neutrino deep learning\",\"categories\":[\"cs.LG\"]}");
  cJSON_ArrayForEach(p, cJSON_GetObjectItem(o, "papers"))
    ck_assert_ptr_nonnull(strstr(cJSON_GetObjectItem(p, "categories")->valuestring, "cs.LG"));
  cJSON_Delete(o);
  /* paging: limit 1 gives a cursor, the next page another paper */
  o = ok("{\"mode\":\"search\",\"query\":\"neutrino\",\"limit\":1}");
  char args[1024];
  snprintf(args, sizeof args, "{\"mode\":\"search\",\"query\":\"neutrino\",\"limit\":1,"
           "\"cursor\":\"%s\"}", cJSON_GetObjectItem(o, "next_cursor")->valuestring);
  char first[64];
  snprintf(first, sizeof first, "%s", cJSON_GetObjectItem(cJSON_GetArrayItem(
      cJSON_GetObjectItem(o, "papers"), 0), "ref")->valuestring);
  cJSON_Delete(o);
  o = ok(args);
  ck_assert_str_ne(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "papers"), 0),
                                       "ref")->valuestring, first);
  cJSON_Delete(o);
}
END_TEST

START_TEST(local_read_similar_refusals)
{
  cJSON *o = ok("{\"mode\":\"read\",\"paper\":\"paper:hep-th/9901001\"}");
  cJSON *p = cJSON_GetObjectItem(o, "paper");
  ck_assert_str_eq(cJSON_GetObjectItem(p, "title")->valuestring, "Strings on curved backgrounds");
  ck_assert_str_eq(cJSON_GetObjectItem(p, "provenance")->valuestring, "open-web");
  ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "full_text_available")));
  cJSON_Delete(o);
  o = ok("{\"mode\":\"similar\",\"paper\":\"1001.0001\"}");
  cJSON *ps = cJSON_GetObjectItem(o, "papers");
  ck_assert_int_ge(cJSON_GetArraySize(ps), 1);
  const cJSON *x;
  cJSON_ArrayForEach(x, ps)
    ck_assert_str_ne(cJSON_GetObjectItem(x, "ref")->valuestring, "paper:1001.0001");
  ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(ps, 0), "ref")->valuestring,
                   "paper:1001.0002");
  all_open_web(o);
  cJSON_Delete(o);
  refused("{\"mode\":\"read\",\"paper\":\"paper:9999.9999\"}", "no paper");
  refused("{\"mode\":\"read\",\"paper\":\"run:x y\"}", "not a paper ref");
  refused("{\"mode\":\"search\"}", "query");
  refused("{\"query\":\"x\"}", "mode");
  refused("{\"mode\":\"search\",\"query\":\"x\",\"paper\":\"1001.0001\"}", "paper");
  refused("{\"mode\":\"read\",\"paper\":\"1001.0001\",\"categories\":[\"x\"]}", "categories");
}
END_TEST

static void setup_remote(void)
{
  static char url[64];
  if (!PORT)
    start_provider();
  snprintf(url, sizeof url, "http://127.0.0.1:%d/ok", PORT);
  setup_with(url);
}

START_TEST(remote_search_read_similar)
{
  cJSON *o = ok("{\"mode\":\"search\",\"query\":\"does warm-up help?\",\"categories\":"
                "[\"cs.LG\",\"stat.ML\"],\"limit\":2}");
  ck_assert_str_eq(cJSON_GetObjectItem(o, "source")->valuestring, "remote");
  cJSON *ps = cJSON_GetObjectItem(o, "papers");
  ck_assert_int_eq(cJSON_GetArraySize(ps), 2);
  all_open_web(o);
  /* what the provider was asked (echoed in the first title) */
  const char *asked = cJSON_GetObjectItem(cJSON_GetArrayItem(ps, 0), "title")->valuestring;
  ck_assert_ptr_nonnull(strstr(asked, "q=does%20warm-up%20help%3F"));
  ck_assert_ptr_nonnull(strstr(asked, "categories=cs.LG,stat.ML"));
  ck_assert_ptr_nonnull(strstr(asked, "limit=3"));
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(o, "next_cursor"));
  cJSON_Delete(o);
  /* read: the full text comes in fragments that join back exactly */
  char *joined = calloc(1, sizeof FULL + 1);
  char *cur = NULL;
  int pages = 0;
  do {
    char args[1024];
    snprintf(args, sizeof args, "{\"mode\":\"read\",\"paper\":\"paper:2101.00001\"%s%s%s}",
             cur ? ",\"cursor\":\"" : "", cur ? cur : "", cur ? "\"" : "");
    free(cur);
    cur = NULL;
    o = ok(args);
    pages++;
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "full_text_available")));
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(o, "full_text"))
    {
      cJSON *d = cJSON_GetObjectItem(f, "data");
      ck_assert_str_eq(cJSON_GetObjectItem(f, "provenance")->valuestring, "open-web");
      strcat(joined, cJSON_GetObjectItem(d, "text")->valuestring);
    }
    cJSON *nc = cJSON_GetObjectItem(o, "next_cursor");
    if (nc)
      cur = strdup(nc->valuestring);
    cJSON_Delete(o);
  } while (cur && pages < 40);
  ck_assert_int_gt(pages, 2);
  ck_assert_str_eq(joined, FULL);
  free(joined);
  o = ok("{\"mode\":\"similar\",\"paper\":\"2101.00001\"}");
  ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "papers"), 0),
                                       "ref")->valuestring, "paper:2101.00009");
  all_open_web(o);
  cJSON_Delete(o);
  refused("{\"mode\":\"read\",\"paper\":\"2101.00404\"}", "no such paper");
}
END_TEST

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000 + (double)ts.tv_nsec / 1e6;
}

static void bad_provider(const char *path, const char *needle)
{
  char url[96];
  if (!PORT)
    start_provider();
  if (path)
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", PORT, path);
  else
    snprintf(url, sizeof url, "http://127.0.0.1:1/down"); /* nothing listens */
  setup_with(url);
  double t0 = now_ms();
  refused("{\"mode\":\"search\",\"query\":\"anything\"}", needle);
  refused("{\"mode\":\"read\",\"paper\":\"1001.0001\"}", needle);
  ck_assert_msg(now_ms() - t0 < 10000, "a bad provider held the call %.0f ms", now_ms() - t0);
  teardown();
}

static void four_workers(pmcp_server_options *o)
{
  o->workers = 4;
}

static int msg_id(const h_msg *m)
{
  cJSON *r = cJSON_Parse(m->data);
  cJSON *id = cJSON_GetObjectItem(r, "id");
  int v = cJSON_IsNumber(id) ? id->valueint : -1;
  cJSON_Delete(r);
  return v;
}

/* A burst of find_papers calls to a provider that does not answer holds
 * at most PROBE_MCP_WEB_CAPACITY of the workers (a quarter of 4: one);
 * query_sql calls sent after the burst are all answered while every paper
 * call is still waiting. Decided by order of events, not by timing. */
START_TEST(paper_burst_does_not_delay_other_tools)
{
  setenv("PROBE_MCP_WEB_CAPACITY", "0.25", 1);
  /* the three query_sql calls below come from one caller at once: let
   * them all run (query_sql bounds a caller's statements to half of its
   * share by default) */
  setenv("PROBE_MCP_SQL_MAX", "3", 1);
  setenv("PROBE_MCP_SQL_PER_CALLER", "3", 1);
  start_provider();
  fill();
  harness *h = h_new(four_workers);
  ck_assert_int_eq(pmcp_store_open(&RO, st_path, PMCP_STORE_READONLY), 0);
  char url[96];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/hold", PORT);
  pmcp_research_options ro = PMCP_RESEARCH_OPTIONS_INIT;
  ro.papers_url = url;
  ro.papers_timeout_ms = 60000;
  ck_assert_int_eq(pmcp_research_register(h->srv, RO, &ro), 0);
  h_init(h, NULL, "2025-06-18");
  char buf[512];
  for (int i = 0; i < 6; i++) {
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"find_papers\",\"arguments\":{\"mode\":\"search\","
             "\"query\":\"burst %d\"}}}", 100 + i, i);
    h_send(h, NULL, buf);
  }
  /* the first paper call reaches the provider (bounded wait) */
  pthread_mutex_lock(&HOLD_MU);
  for (int i = 0; i < 600 && HELD < 1; i++) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 1;
    pthread_cond_timedwait(&HOLD_CV, &HOLD_MU, &ts);
  }
  ck_assert_int_ge(HELD, 1);
  pthread_mutex_unlock(&HOLD_MU);
  for (int i = 0; i < 3; i++) {
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"query_sql\",\"arguments\":{\"sql\":"
             "\"SELECT count(*) FROM papers\"}}}", 200 + i);
    h_send(h, NULL, buf);
  }
  int others = 0;
  while (others < 3) {
    h_msg *m = h_next(h);
    int id = msg_id(m);
    ck_assert_msg(id < 100 || id >= 200, "a paper call (%d) finished before the others", id);
    if (id >= 200) {
      ck_assert_ptr_nonnull(strstr(m->data, "[[5]]"));
      others++;
    }
    h_msg_free(m);
  }
  pthread_mutex_lock(&HOLD_MU);
  ck_assert_int_eq(HELD, 1); /* one web worker: the rest of the burst queued */
  RELEASED = 1;
  pthread_cond_broadcast(&HOLD_CV);
  pthread_mutex_unlock(&HOLD_MU);
  int papers = 0;
  while (papers < 6) {
    h_msg *m = h_next(h);
    int id = msg_id(m);
    if (id >= 100 && id < 106) {
      ck_assert_ptr_nonnull(strstr(m->data, "open-web"));
      ck_assert_ptr_null(strstr(m->data, "\"isError\":true"));
      papers++;
    }
    h_msg_free(m);
  }
  h_free(h);
  pmcp_store_free(RO);
  st_cleanup();
}
END_TEST

START_TEST(remote_slow_down_garbage)
{
  bad_provider("/slow", "did not answer within 500 ms");
  bad_provider("/garbage", "not the expected JSON");
  bad_provider("/err", "HTTP 503");
  bad_provider(NULL, "cannot be reached");
  bad_provider("/ok/unexpected", "");
}
END_TEST

int main(void)
{
  int skip = st_backend_check(); /* PMCP_TEST_STORE=pg without a cluster */
  if (skip)
    return skip;
  /* The fake provider writes from a thread: a client that gave up (the
   * slow case) must cost it EPIPE, not the whole process. */
  signal(SIGPIPE, SIG_IGN);
  static const char unit[] = "Full text of a remote paper, with words and \xc3\xa9 accents. ";
  for (size_t i = 0; i + 1 < sizeof FULL; i++)
    FULL[i] = unit[i % (sizeof unit - 1)];
  FULL[sizeof FULL - 1] = 0;
  /* keep UTF-8 whole: cut at a character boundary */
  size_t n = strlen(FULL);
  while (n && ((unsigned char)FULL[n - 1] & 0x80))
    FULL[--n] = 0;
  Suite *su = suite_create("research-papers");
  TCase *tl = tcase_create("local");
  tcase_add_checked_fixture(tl, setup_local, teardown);
  tcase_add_test(tl, local_search_categories_and_scores);
  tcase_add_test(tl, local_read_similar_refusals);
  suite_add_tcase(su, tl);
  TCase *tr = tcase_create("remote");
  tcase_set_timeout(tr, 60);
  tcase_add_checked_fixture(tr, setup_remote, teardown);
  tcase_add_test(tr, remote_search_read_similar);
  suite_add_tcase(su, tr);
  TCase *tb = tcase_create("bad");
  tcase_set_timeout(tb, 60);
  tcase_add_test(tb, remote_slow_down_garbage);
  tcase_add_test(tb, paper_burst_does_not_delay_other_tools);
  suite_add_tcase(su, tb);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? 1 : 0;
}
