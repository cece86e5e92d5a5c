/* SPDX-License-Identifier: MIT */
/* metrics / query_sql benchmark (never run as a test; prints figures):
 *   build/tests/bench/metrics/bench-metrics [POINTS_PER_SERIES] [DIR]
 * Fills a store with 10 runs x 1 series of N points (default 1 million)
 * and one run with 10 ranks x N points of "grad", then times, through the
 * whole MCP path (JSON-RPC in, tool, token-counted page out):
 *  1. metrics mode=series over the 10 runs x "loss" to max_points 100
 *     (21 calls: p50, p90);
 *  2. metrics mode=grouped over the 10 x N points of "grad" (100 buckets,
 *     by rank and pooled; 5 calls each: p50), and narrow buckets (100 of
 *     one step, 100 of 100 steps) against them, per point;
 * Wall and CPU time (all threads of the process) are both printed: on a
 * shared machine the CPU figure is the one that says what the call costs.
 *  3. a query_sql aggregate over the 10 x N points of "grad", read point
 *     by point through the metric_points table (3 calls), and the same
 *     figures from the per-block summaries (5 calls), each printed with
 *     its query.
 * PMCP_BENCH_REUSE=1 with DIR keeps DIR/store.db when it exists (no fill),
 * PMCP_BENCH_CASES=series,grouped,narrow,sql runs only the cases named:
 * for a profiler (callgrind) over one call kind. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probemcp/probemcp.h"

#include "../bench_util.h"

static double cpu_last; /* CPU time of the last timed call, all threads */

/* PMCP_BENCH_CASES names @p c, or is unset */
static int wanted(const char *c)
{
  const char *e = getenv("PMCP_BENCH_CASES");
  return !e || strstr(e, c) != NULL;
}

static void die(const char *what, pmcp_store *s)
{
  fprintf(stderr, "bench-metrics: %s: %s\n", what, s ? pmcp_store_errmsg(s) : "");
  exit(1);
}

static void log_curve(pmcp_store *s, pmcp_tenant t, const char *run, const char *key,
                      const pmcp_label *l, size_t nl, size_t n, double phase)
{
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, key, l, nl, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
  int64_t id;
  if (pmcp_store_series(s, t, run, &sp, &id))
    die("series", s);
  enum { CH = 1 << 16 };
  pmcp_point *p = malloc(CH * sizeof *p);
  uint64_t r = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(phase * 1e6);
  for (size_t i = 0; i < n; i += CH) {
    size_t m = n - i < CH ? n - i : CH;
    bench_loss_curve(p, i, m, n, phase, &r);
    if (pmcp_store_log(s, t, id, p, m))
      die("log", s);
  }
  free(p);
}

static pmcp_server *srv;
static int rid = 10;

static double timed_call(const char *tool, const char *args, int check)
{
  char *msg = malloc(strlen(args) + 256);
  sprintf(msg, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
          "{\"name\":\"%s\",\"arguments\":%s}}", rid++, tool, args);
  double c0 = bench_cpu_ms(), t0 = bench_wall_ms();
  pmcp_server_handle(srv, "", msg, strlen(msg));
  pmcp_server_drain(srv);
  double dt = bench_wall_ms() - t0;
  cpu_last = bench_cpu_ms() - c0;
  free(msg);
  if (check && (!bench_last || strstr(bench_last, "\"isError\":true"))) {
    fprintf(stderr, "bench-metrics: %s %s failed: %.400s\n", tool, args, bench_last ? bench_last : "");
    exit(1);
  }
  return dt;
}

static void report(const char *what, double *t, double *c, int n)
{
  bench_sort(t, (size_t)n);
  bench_sort(c, (size_t)n);
  printf("%-50s wall p50 %8.2f ms p90 %8.2f ms | cpu p50 %8.2f ms min %8.2f ms (%d calls)\n",
         what, t[n / 2], t[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1], c[n / 2], c[0], n);
}

/* grouped by rank over 100 buckets of @p width steps from @p from (5
 * calls), and its CPU per point against @p wide_ns. */
static void narrow_case(size_t from, size_t width, double wide_ns)
{
  char args[400], what[96];
  snprintf(args, sizeof args,
           "{\"mode\":\"grouped\",\"run_id\":\"ranks\",\"key\":\"grad\",\"by\":[\"rank\"],"
           "\"step_bucket\":%zu,\"step_from\":%zu,\"step_to\":%zu,\"max_rows\":1000,"
           "\"token_budget\":8000}", width, from, from + 100 * width - 1);
  double tm[5], cm[5];
  timed_call("metrics", args, 1);
  for (int i = 0; i < 5; i++)
    tm[i] = timed_call("metrics", args, 1), cm[i] = cpu_last;
  snprintf(what, sizeof what, "grouped %zu points (by rank, %zu-step buckets)", 1000 * width,
           width);
  report(what, tm, cm, 5);
  double ns = cm[2] * 1e6 / (double)(1000 * width);
  printf("  per point: wide %.1f ns, narrow (%zu-step buckets) %.1f ns (narrow / wide %.2f)\n",
         wide_ns, width, ns, ns / wide_ns);
}

int main(int argc, char **argv)
{
  size_t n = argc > 1 ? (size_t)atol(argv[1]) : 1000000;
  char dir[256];
  if (argc > 2)
    snprintf(dir, sizeof dir, "%s", argv[2]);
  else {
    snprintf(dir, sizeof dir, "/tmp/pmcp-bench-metrics-XXXXXX");
    if (!mkdtemp(dir))
      die("mkdtemp", NULL);
  }
  char path[300];
  snprintf(path, sizeof path, "%s/store.db", dir);
  const char *reuse = getenv("PMCP_BENCH_REUSE");
  int keep = argc > 2 && reuse && *reuse == '1' && access(path, F_OK) == 0;
  if (!keep)
    unlink(path);
  pmcp_store *s = NULL;
  if (keep)
    goto filled;
  if (pmcp_store_open(&s, path, PMCP_STORE_CREATE))
    die("open", s);
  pmcp_tenant t;
  pmcp_store_tenant(s, NULL, 0, &t);
  double t0 = bench_wall_ms();
  pmcp_store_begin(s);
  for (int r = 0; r < 10; r++) {
    char id[16];
    snprintf(id, sizeof id, "run%d", r);
    pmcp_run_spec rs = PMCP_RUN_SPEC_INIT;
    rs.id = id;
    if (pmcp_store_run_create(s, t, &rs, NULL))
      die("run", s);
    log_curve(s, t, id, "loss", NULL, 0, n, r * 0.01);
  }
  pmcp_run_spec rs = PMCP_RUN_SPEC_INIT;
  rs.id = "ranks";
  pmcp_store_run_create(s, t, &rs, NULL);
  for (int k = 0; k < 10; k++) {
    char v[4];
    snprintf(v, sizeof v, "%d", k);
    pmcp_label l = {"rank", v};
    log_curve(s, t, "ranks", "grad", &l, 1, n, k * 0.02);
  }
  if (pmcp_store_commit(s))
    die("commit", s);
  pmcp_store_free(s);
  printf("filled %s: 10 runs x %zu points + 10 ranks x %zu points in %.1f s\n", path, n, n,
         (bench_wall_ms() - t0) / 1e3);
filled:

  if (pmcp_store_open(&s, path, PMCP_STORE_READONLY))
    die("open read-only", s);
  bench_server_new(&srv);
  if (pmcp_research_register(srv, s, NULL))
    die("register", s);
  bench_initialize(srv);

  double tm[32], cm[32];
  char what[128];
  const char *series_args =
      "{\"mode\":\"series\",\"run_ids\":[\"run0\",\"run1\",\"run2\",\"run3\",\"run4\",\"run5\","
      "\"run6\",\"run7\",\"run8\",\"run9\"],\"keys\":[\"loss\"],\"max_points\":100,"
      "\"token_budget\":8000}";
  if (wanted("series")) {
    timed_call("metrics", series_args, 1); /* warm the page cache */
    for (int i = 0; i < 21; i++)
      tm[i] = timed_call("metrics", series_args, 1), cm[i] = cpu_last;
    snprintf(what, sizeof what, "series 10 runs x %zu points -> 100 points", n);
    report(what, tm, cm, 21);
    const char *rows = strstr(bench_last, "\\\"count\\\":");
    printf("  (rows on the page: %.3s; the page's text: %zu bytes)\n", rows ? rows + 10 : "?",
           strlen(bench_last));
  }

  const char *grouped_rank = "{\"mode\":\"grouped\",\"run_id\":\"ranks\",\"key\":\"grad\","
                             "\"by\":[\"rank\"],\"max_rows\":100,\"token_budget\":8000}";
  const char *grouped_pool = "{\"mode\":\"grouped\",\"run_id\":\"ranks\",\"key\":\"grad\","
                             "\"max_rows\":100,\"token_budget\":8000}";
  double wide_ns = NAN;
  if (wanted("grouped")) {
    timed_call("metrics", grouped_pool, 1);
    for (int i = 0; i < 5; i++)
      tm[i] = timed_call("metrics", grouped_pool, 1), cm[i] = cpu_last;
    snprintf(what, sizeof what, "grouped %zu points (10 ranks pooled, 100 buckets)", 10 * n);
    report(what, tm, cm, 5);
    for (int i = 0; i < 5; i++)
      tm[i] = timed_call("metrics", grouped_rank, 1), cm[i] = cpu_last;
    snprintf(what, sizeof what, "grouped %zu points (by rank, 100 buckets each)", 10 * n);
    report(what, tm, cm, 5);
    wide_ns = cm[2] * 1e6 / (double)(10 * n);
  }

  /* Narrow buckets against the wide ones above, per point: one step
   * each over 100 steps (1,000 points of the ten ranks: the call's fixed
   * cost shows), and 100 buckets of 100 steps (100,000 points inside one
   * block of each rank, whose segments the bucket edges cut). */
  if (wanted("narrow")) {
    narrow_case(n / 2, 1, wide_ns);
    narrow_case(n / 2, 100, wide_ns);
  }

  /* query_sql: an aggregate over the 10 x N points of "grad" read point by
   * point through metric_points (the blocks decoded as rows), and the same
   * figures from the blocks' summaries */
  const char *sql_points =
      "SELECT count(*) AS points, count(p.value) AS finite, avg(p.value) AS mean, "
      "min(p.value) AS min, max(p.value) AS max FROM metric_points p "
      "JOIN series s ON s.id = p.series_id WHERE s.key = 'grad'";
  const char *sql_blocks =
      "SELECT sum(b.n) AS points, sum(b.n - b.nonfinite) AS finite, "
      "sum(b.vsum) / sum(b.n - b.nonfinite) AS mean, min(b.vmin) AS min, max(b.vmax) AS max "
      "FROM metric_blocks b JOIN series s ON s.id = b.series_id WHERE s.key = 'grad'";
  const char *sqls[2] = {sql_points, sql_blocks};
  for (int q = 0; q < 2 && wanted("sql"); q++) {
    char args[1024];
    snprintf(args, sizeof args, "{\"sql\":\"%s\"}", sqls[q]);
    int calls = q ? 5 : 3, ok = 0;
    /* query_sql stops a statement after 5 s of CPU or 30 s elapsed: on a
     * machine loaded past that, say so instead of giving up the bench */
    timed_call("query_sql", args, 0);
    for (int i = 0; i < calls; i++) {
      double t = timed_call("query_sql", args, 0);
      if (!bench_last || strstr(bench_last, "\"isError\":true")) {
        printf("query_sql (%s) failed: %.300s\n", q ? "block summaries" : "every point",
               bench_last ? bench_last : "");
        continue;
      }
      tm[ok] = t, cm[ok++] = cpu_last;
    }
    calls = ok;
    if (!calls)
      continue;
    snprintf(what, sizeof what, "query_sql aggregate over %zu points (%s)", 10 * n,
             q ? "block summaries" : "every point");
    report(what, tm, cm, calls);
    const char *rows = bench_last ? strstr(bench_last, "\"rows\":") : NULL;
    printf("  query: %s\n  rows: %.160s\n", sqls[q], rows ? rows : "?");
  }
  pmcp_server_free(srv);
  pmcp_store_free(s);
  free(bench_last);
  if (argc <= 2) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
      fprintf(stderr, "bench-metrics: could not remove %s\n", dir);
  }
  return 0;
}
