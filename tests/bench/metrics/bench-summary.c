/* SPDX-License-Identifier: MIT */
/* Series summaries over one long series (never run as a test; prints
 * figures):
 *   build/tests/bench/metrics/bench-summary STORE [POINTS] [ROUNDS]
 * STORE is a SQLite path or a postgresql:// URL of an empty schema. The
 * series (steps 0..POINTS-1, default 10,000,000, float32 values with
 * noise, a clock tick of 50 ms) is logged once; a SQLite store that
 * already holds it is reused, so 10^8 points are generated only once.
 * Then pmcp_store_summary() into 100 and 1,000 buckets, ROUNDS calls each
 * (default 31), over the whole series and over ranges whose ends move by
 * an odd number of steps each round (so bucket edges fall anywhere in the
 * blocks): p50 / p99 of wall and CPU time (this process, plus the
 * PostgreSQL server's backends when PMCP_BENCH_PGDATA names its data
 * directory, see pg_cpu.h). The time axis is timed too. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probemcp/probemcp.h"

#include "../pg_cpu.h"
#include "../bench_util.h"

static int dcmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void die(const char *what, pmcp_store *s)
{
  fprintf(stderr, "bench-summary: %s: %s\n", what, s ? pmcp_store_errmsg(s) : "");
  exit(1);
}

/* The series' id, logged with @p n points unless it already has them. */
static int64_t the_series(pmcp_store *s, pmcp_tenant t, size_t n)
{
  pmcp_run_spec rs = PMCP_RUN_SPEC_INIT;
  rs.id = "long";
  rs.flags = PMCP_STORE_REUSE;
  if (pmcp_store_run_create(s, t, &rs, NULL))
    die("run", s);
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, "loss", NULL, 0, PMCP_METRIC_FLOAT,
                         PMCP_SCALE_STEP};
  int64_t id;
  if (pmcp_store_series(s, t, "long", &sp, &id))
    die("series", s);
  pmcp_bucket b;
  size_t nb = 0;
  if (pmcp_store_summary(s, t, id, INT64_MIN, INT64_MAX, 1, &b, &nb))
    die("summary", s);
  if (nb == 1 && b.count == n)
    return id;
  if (nb)
    die("the store holds another series of that name", NULL);
  enum { CH = 1 << 20 };
  pmcp_point *p = malloc(CH * sizeof *p);
  uint64_t r = 0x9e3779b97f4a7c15ULL;
  double t0 = bench_clock_ms(CLOCK_MONOTONIC);
  for (size_t i = 0; i < n; i += CH) {
    size_t m = n - i < CH ? n - i : CH;
    bench_loss_curve(p, i, m, n, 0, &r);
    if (pmcp_store_begin(s) || pmcp_store_log(s, t, id, p, m) || pmcp_store_commit(s))
      die("log", s);
  }
  free(p);
  fprintf(stderr, "bench-summary: logged %zu points in %.1f s\n", n,
          (bench_clock_ms(CLOCK_MONOTONIC) - t0) / 1e3);
  return id;
}

static void report(const char *what, double *w, double *c, double *sv, int n)
{
  qsort(w, (size_t)n, sizeof *w, dcmp);
  qsort(c, (size_t)n, sizeof *c, dcmp);
  int p99 = (int)ceil(0.99 * n) - 1;
  printf("%-44s wall p50 %7.2f p99 %7.2f ms | cpu p50 %7.2f p99 %7.2f ms", what, w[n / 2],
         w[p99], c[n / 2], c[p99]);
  if (sv) {
    qsort(sv, (size_t)n, sizeof *sv, dcmp);
    printf(" | server cpu p50 %7.2f p99 %7.2f ms", sv[n / 2], sv[p99]);
  }
  printf(" (%d calls)\n", n);
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: bench-summary STORE [POINTS] [ROUNDS]\n");
    return 2;
  }
  size_t n = argc > 2 ? (size_t)atoll(argv[2]) : 10000000;
  int rounds = argc > 3 ? atoi(argv[3]) : 31;
  if (n < 1000 || rounds < 1)
    return 2;
  pmcp_store *s = NULL;
  pmcp_tenant t;
  /* Opening an older store migrates it: its time is printed. */
  double o0 = bench_clock_ms(CLOCK_MONOTONIC);
  if (pmcp_store_open(&s, argv[1], PMCP_STORE_CREATE) || pmcp_store_tenant(s, NULL, 0, &t))
    die("open", s);
  fprintf(stderr, "bench-summary: store opened in %.2f s\n", (bench_clock_ms(CLOCK_MONOTONIC) - o0) / 1e3);
  int64_t id = the_series(s, t, n);
  int pg = server_cpu_s() >= 0;
  double *w = malloc((size_t)rounds * sizeof *w), *c = malloc((size_t)rounds * sizeof *c);
  double *sv = malloc((size_t)rounds * sizeof *sv);
  pmcp_bucket *b = malloc(1000 * sizeof *b);
  printf("series of %zu points, %s\n", n, strncmp(argv[1], "postgres", 8) ? "SQLite" : "PostgreSQL");
  static const size_t nbs[] = {100, 1000};
  for (int axis = 0; axis < 2; axis++)
    for (int moving = 0; moving < 2; moving++)
      for (size_t k = 0; k < 2; k++) {
        uint64_t total = 0;
        for (int i = -1; i < rounds; i++) {
          int64_t lo = moving ? (int64_t)(((unsigned)i * 7919u) % 16384u) : INT64_MIN;
          int64_t hi = moving ? (int64_t)n - 1 - (int64_t)(((unsigned)i * 104729u) % 16384u)
                              : INT64_MAX;
          if (axis && moving) {
            lo = 1700000000000 + lo * 50;
            hi = 1700000000000 + hi * 50;
          }
          size_t got = 0;
          double s0 = pg ? server_cpu_s() : 0, c0 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID),
                 w0 = bench_clock_ms(CLOCK_MONOTONIC);
          int rc = axis ? pmcp_store_summary_time(s, t, id, lo, hi, nbs[k], b, &got)
                        : pmcp_store_summary(s, t, id, lo, hi, nbs[k], b, &got);
          double w1 = bench_clock_ms(CLOCK_MONOTONIC), c1 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
          double s1 = pg ? server_cpu_s() : 0;
          if (rc)
            die("summary", s);
          if (i < 0)
            continue; /* warm-up */
          w[i] = w1 - w0;
          c[i] = c1 - c0;
          sv[i] = (s1 - s0) * 1e3;
          for (size_t j = 0; j < got; j++)
            total += b[j].count;
        }
        char what[96];
        snprintf(what, sizeof what, "%s, %s, %zu buckets", axis ? "time" : "step",
                 moving ? "moving ends" : "whole series", nbs[k]);
        report(what, w, c, pg ? sv : NULL, rounds);
        if (!moving && total != (uint64_t)rounds * n)
          die("the buckets do not count every point", NULL);
      }
  free(b);
  free(w);
  free(c);
  free(sv);
  pmcp_store_free(s);
  return 0;
}
