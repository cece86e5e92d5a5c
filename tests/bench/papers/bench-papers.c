/* SPDX-License-Identifier: MIT */
/* bench-papers PROBE GEN_ARXIV [N...]: the papers index at N papers
 * (default 10^4 10^5 10^6), side by side with the previous search path.
 *
 * For each N: gen-arxiv writes N arXiv-format records and 200
 * question-shaped queries with their relevant papers (a topic's, see
 * gen-arxiv.c) into $TMPDIR; `probe papers import` loads them into a new
 * SQLite store (wall and CPU time of the child); then, on the store opened
 * read-only under the research toolset, every query is asked of
 * find_papers (limit 10; and its second page through next_cursor), timed
 * by wall clock and process CPU time. The previous path (keyword search
 * pages of 50 OR-ing every word, up to 200 hits each read back and
 * re-ranked, what find_papers did before the ranked pass) is timed on the
 * first BENCH_OLD_Q queries (default 200, 20, 3 for the three sizes), and
 * the ratio old / new printed on those queries. Relevance: recall@10 (of
 * min(10, relevant) papers) and MRR@10 against the generated truth, for
 * both paths on the same queries. BENCH_KEEP=1 keeps the files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "probemcp/probemcp.h"
#include "util/buf.h"

#include "../bench_util.h"

static double pct(double *v, int n, double p)
{
  bench_sort(v, (size_t)n);
  int i = (int)(p * (n - 1) + 0.5);
  return v[i];
}

/* runs argv, returns its exit status; *wall, *cpu in ms */
static int run(char *const argv[], double *wall, double *cpu)
{
  double w0 = bench_clock_ms(CLOCK_MONOTONIC);
  pid_t pid = fork();
  if (pid == 0) {
    execv(argv[0], argv);
    _exit(127);
  }
  int st = 0;
  struct rusage ru;
  if (pid < 0 || wait4(pid, &st, 0, &ru) < 0)
    return -1;
  *wall = bench_clock_ms(CLOCK_MONOTONIC) - w0;
  *cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int rpc_id = 10;
/* find_papers with @p args; the parsed structured result (or NULL) */
static cJSON *call(pmcp_server *srv, cJSON *args, double *wall, double *cpu)
{
  cJSON *msg = cJSON_CreateObject();
  cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
  cJSON_AddNumberToObject(msg, "id", rpc_id++);
  cJSON_AddStringToObject(msg, "method", "tools/call");
  cJSON *pa = cJSON_AddObjectToObject(msg, "params");
  cJSON_AddStringToObject(pa, "name", "find_papers");
  cJSON_AddItemToObject(pa, "arguments", cJSON_Duplicate(args, 1));
  char *t = cJSON_PrintUnformatted(msg);
  cJSON_Delete(msg);
  free(bench_last);
  bench_last = NULL;
  double w0 = bench_clock_ms(CLOCK_MONOTONIC), c0 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  pmcp_server_handle(srv, "", t, strlen(t));
  pmcp_server_drain(srv);
  *cpu = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
  *wall = bench_clock_ms(CLOCK_MONOTONIC) - w0;
  free(t);
  cJSON *r = bench_last ? cJSON_Parse(bench_last) : NULL;
  cJSON *sc = cJSON_DetachItemFromObject(cJSON_GetObjectItem(r, "result"), "structuredContent");
  int err = cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "isError"));
  cJSON_Delete(r);
  if (err || !sc) {
    fprintf(stderr, "bench: find_papers failed: %.300s\n", bench_last ? bench_last : "(none)");
    cJSON_Delete(sc);
    return NULL;
  }
  return sc;
}

typedef struct query {
  char *text;
  char *rel; /* " id id ... " */
  int n_rel;
} query;

static int relevant(const query *q, const char *id)
{
  char k[80];
  snprintf(k, sizeof k, " %s ", id);
  return strstr(q->rel, k) != NULL;
}

/* recall@10 and reciprocal rank of the first relevant of @p ids */
static void judge(const query *q, char ids[][24], int n, double *recall, double *rr)
{
  int hit = 0;
  *rr = 0;
  for (int i = 0; i < n && i < 10; i++)
    if (relevant(q, ids[i])) {
      hit++;
      if (*rr == 0)
        *rr = 1.0 / (i + 1);
    }
  int den = q->n_rel < 10 ? q->n_rel : 10;
  *recall = den ? (double)hit / den : 0;
}

/* The previous path: keyword pages of 50 over every word, each hit read
 * back (categories would be checked on it), up to 200 kept, top 10. */
static int old_path(pmcp_store *st, pmcp_tenant t, const char *q, char ids[][24], int *n)
{
  char *after = NULL;
  int kept = 0, scanned = 0, rc = 0;
  *n = 0;
  pmcp_buf b = PMCP_BUF_INIT, rec = PMCP_BUF_INIT;
  while (scanned < 1000 && kept < 200) {
    pmcp__buf_reset(&b);
    if ((rc = pmcp_store_search(st, t, q, "paper", after, 50, &b)))
      break;
    free(after);
    after = NULL;
    cJSON *res = cJSON_ParseWithLength(b.ptr, b.len);
    cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(res, "items"))
    {
      scanned++;
      const char *ref = cJSON_GetStringValue(cJSON_GetObjectItem(it, "ref"));
      pmcp__buf_reset(&rec);
      if (!ref || pmcp_store_get(st, t, ref, &rec))
        continue;
      cJSON *r = cJSON_ParseWithLength(rec.ptr, rec.len);
      cJSON_Delete(r);
      if (*n < 10)
        snprintf(ids[(*n)++], 24, "%s", ref + 6);
      if (++kept >= 200)
        break;
    }
    const char *nx = cJSON_GetStringValue(cJSON_GetObjectItem(res, "next"));
    if (nx && *nx)
      after = strdup(nx);
    cJSON_Delete(res);
    if (!after)
      break;
  }
  free(after);
  pmcp_buf_dispose(&b);
  pmcp_buf_dispose(&rec);
  return rc;
}

static int bench_size(const char *probe, const char *gen, long n, int n_old)
{
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char data[512], qf[512], db[512], ns[32];
  snprintf(data, sizeof data, "%s/bench-papers-%ld.jsonl", tmp, n);
  snprintf(qf, sizeof qf, "%s/bench-papers-%ld.tsv", tmp, n);
  snprintf(db, sizeof db, "%s/bench-papers-%ld.db", tmp, n);
  snprintf(ns, sizeof ns, "%ld", n);
  double w, c;
  char *ga[] = {(char *)gen, ns, data, qf, NULL};
  if (run(ga, &w, &c)) {
    fprintf(stderr, "bench: %s failed\n", gen);
    return 1;
  }
  printf("\n== %ld papers (generated in %.1f s)\n", n, w / 1e3);
  char side[600];
  unlink(db);
  snprintf(side, sizeof side, "%s-wal", db);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", db);
  unlink(side);
  char *ia[] = {(char *)probe, "--store", db, "--quiet", "papers", "import", data, NULL};
  if (run(ia, &w, &c)) {
    fprintf(stderr, "bench: probe papers import failed\n");
    return 1;
  }
  printf("import: wall %.1f s, cpu %.1f s (%.1f us cpu per paper; target: 10^6 in < 120 s)\n",
         w / 1e3, c / 1e3, c * 1e3 / (double)n);

  query qs[200];
  int nq = 0;
  FILE *f = fopen(qf, "r");
  char *line = NULL;
  size_t cap = 0;
  while (f && nq < 200 && getline(&line, &cap, f) > 0) {
    char *tab = strchr(line, '\t');
    if (!tab)
      continue;
    *tab = 0;
    qs[nq].text = strdup(line);
    size_t l = strlen(tab + 1);
    qs[nq].rel = malloc(l + 3);
    snprintf(qs[nq].rel, l + 3, " %s", tab + 1);
    char *e = qs[nq].rel + strlen(qs[nq].rel);
    while (e > qs[nq].rel && (e[-1] == '\n'))
      *--e = 0;
    strcat(qs[nq].rel, " ");
    int k = 0;
    for (char *p = qs[nq].rel; *p; p++)
      k += *p == ' ';
    qs[nq].n_rel = k - 1;
    nq++;
  }
  free(line);
  if (f)
    fclose(f);

  pmcp_store *st = NULL;
  pmcp_tenant t;
  if (pmcp_store_open(&st, db, PMCP_STORE_READONLY) ||
      pmcp_store_tenant(st, "default", 0, &t)) {
    fprintf(stderr, "bench: cannot open %s\n", db);
    return 1;
  }
  pmcp_server *srv = NULL;
  if (bench_server_new(&srv) || pmcp_research_register(srv, st, NULL))
    return 1;
  bench_initialize(srv);

  double cw[400], cc[400], pw[200], pc[200], ow[200], oc[200];
  double rec_new = 0, mrr_new = 0, rec_old = 0, mrr_old = 0, rec_new_o = 0, mrr_new_o = 0;
  double new_cpu_on_old = 0, old_cpu = 0;
  int fails = 0;
  if (n_old > nq)
    n_old = nq;
  for (int i = 0; i < nq; i++) {
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "mode", "search");
    cJSON_AddStringToObject(a, "query", qs[i].text);
    cJSON_AddNumberToObject(a, "limit", 10);
    cJSON *r = call(srv, a, &cw[i], &cc[i]);
    char ids[10][24];
    int k = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(r, "papers"))
    if (k < 10)
      snprintf(ids[k++], 24, "%s", cJSON_GetStringValue(cJSON_GetObjectItem(p, "ref")) + 6);
    const char *nc = cJSON_GetStringValue(cJSON_GetObjectItem(r, "next_cursor"));
    pw[i] = pc[i] = 0;
    if (nc) {
      /* the token budget may end a page before 10: the next page (timed)
       * completes the top 10, and no paper comes twice */
      cJSON_AddStringToObject(a, "cursor", nc);
      cJSON *r2 = call(srv, a, &pw[i], &pc[i]);
      cJSON_ArrayForEach(p, cJSON_GetObjectItem(r2, "papers"))
      {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(p, "ref")) + 6;
        for (int j = 0; j < k; j++)
          fails += !strcmp(ids[j], id);
        if (k < 10)
          snprintf(ids[k++], 24, "%s", id);
      }
      cJSON_Delete(r2);
    }
    double rc_, rr;
    judge(&qs[i], ids, k, &rc_, &rr);
    rec_new += rc_;
    mrr_new += rr;
    if (!r)
      fails++;
    cJSON_Delete(r);
    cJSON_Delete(a);
    if (i < n_old) {
      char oid[10][24];
      int on = 0;
      double w0 = bench_clock_ms(CLOCK_MONOTONIC), c0 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
      if (old_path(st, t, qs[i].text, oid, &on))
        fails++;
      oc[i] = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
      ow[i] = bench_clock_ms(CLOCK_MONOTONIC) - w0;
      old_cpu += oc[i];
      new_cpu_on_old += cc[i];
      judge(&qs[i], oid, on, &rc_, &rr);
      rec_old += rc_;
      mrr_old += rr;
      judge(&qs[i], ids, k, &rc_, &rr);
      rec_new_o += rc_;
      mrr_new_o += rr;
    }
  }
  printf("find_papers search, first page (limit 10), %d queries, ms: wall p50 %.2f p99 %.2f | "
         "cpu p50 %.2f p99 %.2f (target p99 <= 20)\n",
         nq, pct(cw, nq, 0.5), pct(cw, nq, 0.99), pct(cc, nq, 0.5), pct(cc, nq, 0.99));
  printf("find_papers search, second page (cursor), ms: wall p50 %.2f p99 %.2f | cpu p50 %.2f "
         "p99 %.2f\n",
         pct(pw, nq, 0.5), pct(pw, nq, 0.99), pct(pc, nq, 0.5), pct(pc, nq, 0.99));
  printf("relevance, all %d queries: recall@10 %.3f, MRR@10 %.3f\n", nq, rec_new / nq,
         mrr_new / nq);
  if (n_old > 0) {
    printf("previous path on the first %d queries, ms: wall p50 %.1f p99 %.1f | cpu p50 %.1f "
           "p99 %.1f; cpu old / new %.1fx\n",
           n_old, pct(ow, n_old, 0.5), pct(ow, n_old, 0.99), pct(oc, n_old, 0.5),
           pct(oc, n_old, 0.99), new_cpu_on_old > 0 ? old_cpu / new_cpu_on_old : 0);
    printf("relevance on those queries: new recall@10 %.3f MRR@10 %.3f | previous recall@10 "
           "%.3f MRR@10 %.3f\n",
           rec_new_o / n_old, mrr_new_o / n_old, rec_old / n_old, mrr_old / n_old);
  }
  pmcp_server_free(srv);
  pmcp_store_free(st);
  for (int i = 0; i < nq; i++) {
    free(qs[i].text);
    free(qs[i].rel);
  }
  if (!getenv("BENCH_KEEP")) {
    unlink(data);
    unlink(qf);
    unlink(db);
    snprintf(side, sizeof side, "%s-wal", db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db);
    unlink(side);
  }
  if (fails)
    printf("FAILURES: %d (a call failed or a paper came twice)\n", fails);
  return fails != 0;
}

int main(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr, "usage: bench-papers PROBE GEN_ARXIV [N...]\n");
    return 2;
  }
  long sizes[8] = {10000, 100000, 1000000};
  int ns = 3;
  if (argc > 3) {
    ns = 0;
    for (int i = 3; i < argc && ns < 8; i++)
      sizes[ns++] = atol(argv[i]);
  }
  int rc = 0;
  for (int i = 0; i < ns; i++) {
    int n_old = sizes[i] <= 10000 ? 200 : sizes[i] <= 100000 ? 20 : 3;
    if (getenv("BENCH_OLD_Q"))
      n_old = atoi(getenv("BENCH_OLD_Q"));
    rc |= bench_size(argv[1], argv[2], sizes[i], n_old);
  }
  bench_print_load("\nload average: ");
  return rc;
}
