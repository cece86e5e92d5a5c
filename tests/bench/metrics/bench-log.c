/* SPDX-License-Identifier: MIT */
/* probe log ingest benchmark (never run as a test; prints figures):
 *   build/tests/bench/metrics/bench-log PROBE [POINTS] [ROUNDS] [PROBE_BEFORE]
 * Writes two inputs of POINTS points (default 2,000,000) in probe log's
 * line format: one point a line ({"key","step","value"}, values as
 * Python's repr writes them) and ten points a line ({"step","values":{10
 * keys}}, with a label that cycles over 4 ranks). Each round, alternating,
 * times `probe log` on each input into a fresh store (the CPU time of the
 * child, user + system) and the floor: the library's own write path,
 * pmcp_store_log() of the same points in this process, 16384 a call, in
 * one transaction (CPU time). With PROBE_BEFORE, that binary is timed in
 * the same rounds. Prints points/s (median of the rounds) and the ratio
 * to the floor. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probemcp/probemcp.h"

#include "../bench_util.h"

static const char *dir;

static const char *KEYS[10] = {"train/loss", "train/acc", "lr", "grad_norm", "val/loss",
                               "val/acc", "tokens_per_s", "gpu_mem", "loss_scale", "epoch"};

/* The inputs, and the same points for the floor. */
static void make_inputs(size_t n, char *f1, char *f10)
{
  FILE *a = fopen(f1, "w"), *b = fopen(f10, "w");
  if (!a || !b) {
    perror("bench-log: inputs");
    exit(1);
  }
  for (size_t i = 0; i < n; i++)
    fprintf(a, "{\"key\":\"train/loss\",\"step\":%zu,\"value\":%.17g}\n", i,
            2.0 * exp(-(double)i / 1e6) + 0.01 * bench_uniform());
  for (size_t i = 0; i < n / 10; i++) {
    fprintf(b, "{\"step\":%zu,\"values\":{", i);
    for (int k = 0; k < 10; k++)
      fprintf(b, "%s\"%s\":%.17g", k ? "," : "", KEYS[k], bench_uniform() * 10);
    fprintf(b, "},\"labels\":{\"rank\":\"%zu\"}}\n", i % 4);
  }
  fclose(a);
  fclose(b);
}

/* CPU seconds of `probe --store DIR/s.db log r1 --file F` on a fresh store. */
static double run_probe(const char *probe, const char *file)
{
  char store[300], cmd[4000];
  snprintf(store, sizeof store, "%s/s.db", dir);
  snprintf(cmd, sizeof cmd,
           "rm -f %s %s-wal %s-shm && %s --store %s init >/dev/null 2>&1 && "
           "%s --store %s run create r1 >/dev/null 2>&1",
           store, store, store, probe, store, probe, store);
  if (system(cmd)) {
    fprintf(stderr, "bench-log: %s: cannot make a store\n", probe);
    exit(1);
  }
  pid_t pid = fork();
  if (pid == 0) {
    execl(probe, probe, "--quiet", "--store", store, "log", "r1", "--file", file, (char *)NULL);
    _exit(127);
  }
  int st;
  struct rusage ru;
  if (wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
    fprintf(stderr, "bench-log: %s log %s failed\n", probe, file);
    exit(1);
  }
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

/* The floor: the points of the input, logged through the library. */
static double run_floor(size_t n, int ten)
{
  char store[300];
  snprintf(store, sizeof store, "%s/floor.db", dir);
  char cmd[1300];
  snprintf(cmd, sizeof cmd, "rm -f %s %s-wal %s-shm", store, store, store);
  if (system(cmd))
    exit(1);
  pmcp_store *s;
  pmcp_tenant t;
  if (pmcp_store_open(&s, store, PMCP_STORE_CREATE) || pmcp_store_tenant(s, NULL, PMCP_STORE_CREATE, &t)) {
    fprintf(stderr, "bench-log: floor store\n");
    exit(1);
  }
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "r1";
  pmcp_store_run_create(s, t, &r, NULL);
  size_t ns = ten ? 40 : 1, per = 16384;
  int64_t id[40];
  pmcp_point *p[40];
  size_t np[40] = {0};
  for (size_t k = 0; k < ns; k++) {
    char rank[24];
    snprintf(rank, sizeof rank, "%zu", k / 10);
    pmcp_label l = {"rank", rank};
    pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, ten ? KEYS[k % 10] : "train/loss",
                           ten ? &l : NULL, ten ? 1 : 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
    if (pmcp_store_series(s, t, "r1", &sp, &id[k]))
      exit(1);
    p[k] = malloc(per * sizeof *p[k]);
  }
  double c0 = bench_cpu_s();
  pmcp_store_begin(s);
  for (size_t i = 0; i < n; i++) {
    size_t k = ten ? (i / 10 % 4) * 10 + i % 10 : 0;
    p[k][np[k]++] = (pmcp_point){(int64_t)(ten ? i / 10 : i), 0, bench_uniform()};
    if (np[k] == per) {
      pmcp_store_log(s, t, id[k], p[k], per);
      np[k] = 0;
    }
  }
  for (size_t k = 0; k < ns; k++)
    if (np[k])
      pmcp_store_log(s, t, id[k], p[k], np[k]);
  if (pmcp_store_commit(s)) {
    fprintf(stderr, "bench-log: floor commit: %s\n", pmcp_store_errmsg(s));
    exit(1);
  }
  double c = bench_cpu_s() - c0;
  pmcp_store_free(s);
  for (size_t k = 0; k < ns; k++)
    free(p[k]);
  return c;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: bench-log PROBE [POINTS] [ROUNDS] [PROBE_BEFORE]\n");
    return 2;
  }
  const char *probe = argv[1], *before = argc > 4 ? argv[4] : NULL;
  size_t n = argc > 2 ? (size_t)atol(argv[2]) : 2000000;
  int rounds = argc > 3 ? atoi(argv[3]) : 3;
  if (rounds < 1 || rounds > 50)
    rounds = 3;
  char tmpl[] = "/tmp/pmcp-bench-log-XXXXXX";
  dir = mkdtemp(tmpl);
  if (!dir)
    return 1;
  char f1[600], f10[600];
  snprintf(f1, sizeof f1, "%s/one.jsonl", dir);
  snprintf(f10, sizeof f10, "%s/ten.jsonl", dir);
  make_inputs(n, f1, f10);
  double cp[2][50], cb[2][50], cf[2][50];
  for (int r = 0; r < rounds; r++)
    for (int in = 0; in < 2; in++) {
      /* alternate who goes first, so drift in load hits both alike */
      if (r % 2) {
        cf[in][r] = run_floor(n, in);
        cp[in][r] = run_probe(probe, in ? f10 : f1);
      } else {
        cp[in][r] = run_probe(probe, in ? f10 : f1);
        cf[in][r] = run_floor(n, in);
      }
      if (before)
        cb[in][r] = run_probe(before, in ? f10 : f1);
    }
  printf("probe log ingest, %zu points, %d rounds (median of CPU time, user + system)\n", n,
         rounds);
  printf("%-34s %14s %14s %14s %10s\n", "input", "probe log", "floor (lib)", "before",
         "log/floor");
  for (int in = 0; in < 2; in++) {
    bench_sort(cp[in], (size_t)rounds);
    bench_sort(cf[in], (size_t)rounds);
    double p = (double)n / cp[in][rounds / 2], f = (double)n / cf[in][rounds / 2], b = 0;
    if (before) {
      bench_sort(cb[in], (size_t)rounds);
      b = (double)n / cb[in][rounds / 2];
    }
    char bs[32] = "-";
    if (before)
      snprintf(bs, sizeof bs, "%.2f M/s", b / 1e6);
    printf("%-34s %10.2f M/s %10.2f M/s %14s %10.2f\n",
           in ? "10 points a line (values, labels)" : "1 point a line (key, value)", p / 1e6,
           f / 1e6, bs, p / f);
  }
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) ? 1 : 0;
}
