/* SPDX-License-Identifier: MIT */
/* The store on both backends, side by side (never run as a test):
 *   build/tests/bench/store/bench-backends STORE [N_POINTS] [N_RUNS] [SECONDS]
 * STORE is a SQLite path (created) or a postgresql:// URL of an empty schema.
 * 1. ingest: N_POINTS (default 10 million) points of one series, logged in
 *    batches of 10,000 inside one transaction per million; points/s;
 *    then small calls: 20,000 calls of 10 points (transactions of 1000
 *    calls) and 200 calls each in its own transaction; calls/s;
 * 2. a 100-bucket summary of that whole series (and a 1000-bucket one),
 *    on a fresh handle: the buckets are computed by the backend (SQLite:
 *    block summaries; PostgreSQL: in SQL), never every point shipped;
 *    then 1, 10, 100 and 1000 buckets on the time axis;
 * 3. N_RUNS runs (default 100,000) with a status and a tag, then
 *    list_runs-style filtering: {"status":"failed"} newest first (first
 *    page and its total), a tag filter, and a name query;
 * 4. throughput of reads from 1 and from 2 processes at once (each its own
 *    handle, like one or two probe-mcp-http replicas on one database) for
 *    SECONDS (default 5) each: a mix of get(run), list(runs, filter) and
 *    a 100-bucket summary; calls/s in total.
 * N_POINTS 0 reuses the series of an earlier run (summaries and reads
 * only); N_RUNS 0 skips step 3. Wall-clock figures; the CPU time of this
 * process is printed beside them, and that of a local PostgreSQL server
 * when PMCP_BENCH_PGDATA names its data directory. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probemcp/probemcp.h"

#include "../bench_util.h"

static double cpu_s(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

#include "../pg_cpu.h"

#define CHECK(s, call)                                                         \
  do {                                                                         \
    int rc_ = (call);                                                          \
    if (rc_) {                                                                 \
      fprintf(stderr, "bench-backends: %s -> %d: %s\n", #call, rc_, pmcp_store_errmsg(s)); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static const char *where;

/* ", server CPU X ms" since @p since (server_cpu_s()), or "". */
static const char *server_note(double since)
{
  static char note[64];
  double now = server_cpu_s();
  note[0] = '\0';
  if (since >= 0 && now >= 0)
    snprintf(note, sizeof note, ", server CPU %.0f ms", (now - since) * 1e3);
  return note;
}

static pmcp_store *open_store(unsigned flags, pmcp_tenant *t)
{
  pmcp_store *s = NULL;
  CHECK(s, pmcp_store_open(&s, where, flags));
  CHECK(s, pmcp_store_tenant(s, NULL, 0, t));
  return s;
}

/* Reads for @p secs seconds; returns the number of calls made. */
static long reader(int64_t series, double secs)
{
  pmcp_tenant t;
  pmcp_store *s = open_store(PMCP_STORE_READONLY, &t);
  pmcp_buf b = PMCP_BUF_INIT;
  pmcp_bucket bk[100];
  size_t nb;
  long calls = 0;
  double end = bench_wall_s() + secs;
  unsigned k = (unsigned)getpid();
  while (bench_wall_s() < end) {
    char ref[32];
    snprintf(ref, sizeof ref, "run:r%u", (k = k * 1103515245u + 12345u) % 1000);
    CHECK(s, pmcp_store_get(s, t, ref, &b));
    pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
    o.kind = "run";
    o.filter = "{\"status\":\"failed\"}";
    o.limit = 20;
    CHECK(s, pmcp_store_list(s, t, &o, &b));
    CHECK(s, pmcp_store_summary(s, t, series, INT64_MIN, INT64_MAX, 100, bk, &nb));
    calls += 3;
  }
  pmcp_buf_dispose(&b);
  pmcp_store_free(s);
  return calls;
}

static double parallel(int procs, int64_t series, double secs)
{
  int fds[8][2];
  pid_t kids[8];
  for (int i = 0; i < procs; i++) {
    if (pipe(fds[i]) != 0)
      exit(1);
    kids[i] = fork();
    if (kids[i] == 0) {
      long c = reader(series, secs);
      if (write(fds[i][1], &c, sizeof c) != sizeof c)
        _exit(1);
      _exit(0);
    }
    close(fds[i][1]);
  }
  long total = 0;
  for (int i = 0; i < procs; i++) {
    long c = 0;
    if (read(fds[i][0], &c, sizeof c) == sizeof c)
      total += c;
    close(fds[i][0]);
    waitpid(kids[i], NULL, 0);
  }
  return (double)total / secs;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: bench-backends STORE [N_POINTS] [N_RUNS] [SECONDS]\n");
    return 2;
  }
  where = argv[1];
  size_t n_points = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000;
  size_t n_runs = argc > 3 ? strtoull(argv[3], NULL, 10) : 100000;
  double secs = argc > 4 ? strtod(argv[4], NULL) : 5;
  pmcp_tenant t;
  pmcp_store *s = open_store(PMCP_STORE_CREATE, &t);
  printf("backend: %s\n", pmcp_store_backend(s));

  /* 1. ingest */
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "long";
  r.flags = PMCP_STORE_REUSE;
  CHECK(s, pmcp_store_run_create(s, t, &r, NULL));
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, "train/loss", NULL, 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
  int64_t series;
  CHECK(s, pmcp_store_series(s, t, "long", &sp, &series));
  enum { BATCH = 10000 };
  pmcp_point *pts = malloc(BATCH * sizeof *pts);
  int64_t clock = 1700000000000;
  double t0 = bench_wall_s(), c0 = cpu_s(), sc0 = server_cpu_s();
  for (size_t i = 0; i < n_points;) {
    if (i % 1000000 == 0)
      CHECK(s, pmcp_store_begin(s));
    size_t n = n_points - i < BATCH ? n_points - i : BATCH;
    for (size_t k = 0; k < n; k++) {
      clock += 50;
      pts[k].step = (int64_t)(i + k);
      pts[k].time_ms = clock;
      pts[k].value = 2.3 * exp(-(double)(i + k) / ((double)n_points / 5.0)) + 0.15;
    }
    CHECK(s, pmcp_store_log(s, t, series, pts, n));
    i += n;
    if (i % 1000000 == 0 || i == n_points)
      CHECK(s, pmcp_store_commit(s));
  }
  double dt = bench_wall_s() - t0;
  if (n_points)
    printf("ingest: %zu points in %.2f s: %.0f points/s (client CPU %.2f s%s)\n", n_points, dt,
           (double)n_points / dt, cpu_s() - c0, server_note(sc0));
  free(pts);

  /* 1b. small log calls (as a training loop logs: a few points a call),
   * where each call's round trips count: 20,000 calls of 10 points inside
   * transactions of 1000 calls, then 200 calls each its own transaction
   * (as `probe log` makes; each rewrites the series' partial tail block). */
  if (n_points) {
    pmcp_series_spec sp2 = {PMCP_SERIES_SPEC_VERSION, "train/lr", NULL, 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
    int64_t small;
    CHECK(s, pmcp_store_series(s, t, "long", &sp2, &small));
    pmcp_point few[10];
    int64_t step = 0;
    for (int alone = 0; alone < 2; alone++) {
      size_t calls = alone ? 200 : 20000;
      t0 = bench_wall_s();
      c0 = cpu_s();
      sc0 = server_cpu_s();
      for (size_t c = 0; c < calls; c++) {
        if (!alone && c % 1000 == 0)
          CHECK(s, pmcp_store_begin(s));
        for (int k = 0; k < 10; k++, step++) {
          few[k].step = step;
          few[k].time_ms = 1700000000000 + step * 50;
          few[k].value = 1.0 / (double)(step + 1);
        }
        CHECK(s, pmcp_store_log(s, t, small, few, 10));
        if (!alone && (c + 1) % 1000 == 0)
          CHECK(s, pmcp_store_commit(s));
      }
      dt = bench_wall_s() - t0;
      printf("ingest, 10 points a call%s: %zu calls in %.2f s: %.0f calls/s, %.0f points/s"
             " (client CPU %.2f s%s)\n", alone ? ", each its own transaction" : "", calls, dt,
             (double)calls / dt, (double)calls * 10 / dt, cpu_s() - c0, server_note(sc0));
    }
  }

  /* 2. summaries on a fresh handle */
  pmcp_store_free(s);
  s = open_store(PMCP_STORE_READONLY, &t);
  pmcp_bucket *bk = malloc(1000 * sizeof *bk);
  size_t nb = 0;
  for (int buckets = 100; buckets <= 1000; buckets *= 10) {
    t0 = bench_wall_s();
    c0 = cpu_s();
    sc0 = server_cpu_s();
    CHECK(s, pmcp_store_summary(s, t, series, INT64_MIN, INT64_MAX, (size_t)buckets, bk, &nb));
    dt = bench_wall_s() - t0;
    uint64_t count = 0;
    for (size_t i = 0; i < nb; i++)
      count += bk[i].count;
    printf("summary: %d buckets of %llu points in %.1f ms (client CPU %.1f ms%s)\n", buckets,
           (unsigned long long)count, dt * 1e3, (cpu_s() - c0) * 1e3, server_note(sc0));
  }
  /* The same on the time axis (where every block / chunk summary must
   * also know that all its points have a time). */
  for (int buckets = 1; buckets <= 1000; buckets *= 10) {
    t0 = bench_wall_s();
    c0 = cpu_s();
    sc0 = server_cpu_s();
    CHECK(s, pmcp_store_summary_time(s, t, series, INT64_MIN, INT64_MAX, (size_t)buckets, bk,
                                     &nb));
    dt = bench_wall_s() - t0;
    uint64_t count = 0;
    for (size_t i = 0; i < nb; i++)
      count += bk[i].count;
    printf("summary_time: %d buckets of %llu points in %.1f ms (client CPU %.1f ms%s)\n",
           buckets, (unsigned long long)count, dt * 1e3, (cpu_s() - c0) * 1e3, server_note(sc0));
  }
  free(bk);
  pmcp_store_free(s);

  /* 3. runs and list filtering */
  s = open_store(0, &t);
  if (n_runs == 0)
    goto readers;
  static const char *const status[] = {"finished", "failed", "running", "killed"};
  t0 = bench_wall_s();
  c0 = cpu_s();
  sc0 = server_cpu_s();
  for (size_t i = 0; i < n_runs; i++) {
    if (i % 5000 == 0)
      CHECK(s, pmcp_store_begin(s));
    char id[32], name[48];
    snprintf(id, sizeof id, "r%zu", i);
    snprintf(name, sizeof name, "sweep-%zu-lr%zu", i / 100, i % 7);
    pmcp_run_spec rs = PMCP_RUN_SPEC_INIT;
    rs.id = id;
    rs.name = name;
    rs.status = status[i % 4];
    rs.created_ms = 1700000000000 + (int64_t)i * 1000;
    CHECK(s, pmcp_store_run_create(s, t, &rs, NULL));
    if (i % 10 == 0)
      CHECK(s, pmcp_store_tag(s, t, id, "baseline", 1));
    if ((i + 1) % 5000 == 0 || i + 1 == n_runs)
      CHECK(s, pmcp_store_commit(s));
  }
  printf("runs: %zu created in %.1f s (client CPU %.1f s%s)\n", n_runs, bench_wall_s() - t0,
         cpu_s() - c0, server_note(sc0));
  static const char *const filters[][2] = {
    {"{\"status\":\"failed\"}", NULL},
    {"{\"tag\":\"baseline\"}", NULL},
    {"{\"status\":\"running\",\"tag\":\"baseline\"}", NULL},
    {NULL, "lr3"},
  };
  pmcp_buf b = PMCP_BUF_INIT;
  for (size_t f = 0; f < sizeof filters / sizeof filters[0]; f++) {
    pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
    o.kind = "run";
    o.filter = filters[f][0];
    o.query = filters[f][1];
    o.limit = 50;
    t0 = bench_wall_s();
    CHECK(s, pmcp_store_list(s, t, &o, &b));
    dt = bench_wall_s() - t0;
    const char *tot = strstr(b.ptr, "\"total\":");
    printf("list runs %s%s: first page of 50 in %.1f ms (total %lld)\n",
           filters[f][0] ? filters[f][0] : "query=", filters[f][1] ? filters[f][1] : "",
           dt * 1e3, tot ? strtoll(tot + 8, NULL, 10) : -1LL);
  }
  pmcp_buf_dispose(&b);
readers:
  pmcp_store_free(s);

  /* 4. one vs two readers */
  if (secs > 0) {
    double one = parallel(1, series, secs);
    double two = parallel(2, series, secs);
    printf("reads (get + list + summary): 1 process %.0f calls/s, 2 processes %.0f calls/s "
           "(x%.2f)\n", one, two, two / one);
  }
  return 0;
}
