/* SPDX-License-Identifier: MIT */
/* Store benchmark (never run as a test; prints figures):
 *   build/tests/bench/store/bench-store [N_POINTS] [DIR]
 * 1. logs N points (default 10 million) of one realistic training curve and
 *    reports points/s;
 * 2. reports bytes per point on disk (store file growth after a WAL
 *    checkpoint) and compares with the same points written in MLflow's file
 *    store format (metrics/<key>: "timestamp value step" lines) and as CSV;
 * 3. times a 100-bucket summary of the whole series (a fresh read-only open
 *    each time) and a raw read of 100k points.
 * The curve: steps 0..N-1 every step; wall time starts at 2023-11-14 and
 * advances 48-52 ms a step (integer ms, as trackers record it); the value is
 * a loss 2.3 * exp(-step / (N / 5)) + 0.15 with 3% multiplicative noise,
 * rounded to float32 as frameworks log it (torch tensors are float32). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "probemcp/probemcp.h"

#include "../bench_util.h"

static long long file_size(const char *p)
{
  struct stat sb;
  return stat(p, &sb) == 0 ? (long long)sb.st_size : 0;
}

static void gen(pmcp_point *p, size_t from, size_t n, size_t total, int64_t *clock)
{
  double tau = (double)total / 5.0;
  for (size_t i = 0; i < n; i++) {
    size_t k = from + i;
    *clock += 48 + (int64_t)(bench_uniform() * 5.0);
    double clean = 2.3 * exp(-(double)k / tau) + 0.15;
    double noisy = clean * (1.0 + 0.03 * (2.0 * bench_uniform() - 1.0));
    p[i].step = (int64_t)k;
    p[i].time_ms = *clock;
    p[i].value = (double)(float)noisy;
  }
}

/* Logs points 0..n-1 of the curve of @p total points (gen()) into @p series
 * in calls of @p batch, in one transaction when @p txn. Returns the wall
 * time in s without the generation's, or -1 (the store's error). */
static double write_points(pmcp_store *s, pmcp_tenant t, int64_t series, pmcp_point *pts,
                           size_t n, size_t total, size_t batch, int64_t *clock, int txn)
{
  double gen_time = 0, t0 = bench_wall_s();
  if (txn && pmcp_store_begin(s))
    return -1;
  for (size_t done = 0; done < n; done += batch) {
    size_t k = n - done < batch ? n - done : batch;
    double g0 = bench_wall_s();
    gen(pts, done, k, total, clock);
    gen_time += bench_wall_s() - g0;
    if (pmcp_store_log(s, t, series, pts, k))
      return -1;
  }
  if (txn && pmcp_store_commit(s))
    return -1;
  return bench_wall_s() - t0 - gen_time;
}

/* Shortest text that reads back as the same double (as Python's repr). */
static int shortest(char *buf, size_t n, double v)
{
  for (int prec = 1; prec <= 17; prec++) {
    int len = snprintf(buf, n, "%.*g", prec, v);
    if (strtod(buf, NULL) == v)
      return len;
  }
  return snprintf(buf, n, "%.17g", v);
}

#define FAIL(s, what)                                                          \
  do {                                                                         \
    fprintf(stderr, "bench-store: %s: %s\n", what, pmcp_store_errmsg(s));      \
    return 1;                                                                  \
  } while (0)

int main(int argc, char **argv)
{
  size_t total = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 10000000;
  char dir[512];
  if (argc > 2)
    snprintf(dir, sizeof dir, "%s", argv[2]);
  else {
    snprintf(dir, sizeof dir, "%s/pmcp-bench-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
      perror("mkdtemp");
      return 1;
    }
  }
  char path[600], mlflow[700], csv[600];
  snprintf(path, sizeof path, "%s/store.db", dir);
  snprintf(csv, sizeof csv, "%s/points.csv", dir);
  snprintf(mlflow, sizeof mlflow, "%s/mlruns/0/run/metrics", dir);
  unlink(path);
  pmcp_store *s;
  pmcp_tenant t;
  if (pmcp_store_open(&s, path, PMCP_STORE_CREATE) || pmcp_store_tenant(s, NULL, 0, &t))
    FAIL(s, "open");
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = "bench";
  if (pmcp_store_run_create(s, t, &r, NULL))
    FAIL(s, "run");
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, "train/loss", NULL, 0, 0, 0};
  int64_t series;
  if (pmcp_store_series(s, t, "bench", &sp, &series))
    FAIL(s, "series");
  pmcp_store_free(s);
  /* Baseline: the empty store's size after a checkpoint. */
  if (pmcp_store_open(&s, path, 0))
    FAIL(s, "reopen");
  pmcp_store_free(s);
  long long base = file_size(path);

  printf("data: one series, %zu points: steps 0..%zu, wall clock +48..52 ms a step,\n"
         "      loss 2.3*exp(-step/(N/5))+0.15 with 3%% noise, rounded to float32\n", total,
         total - 1);
  size_t batch = 100000;
  pmcp_point *pts = malloc(batch * sizeof *pts);
  int64_t clock = 1700000000000LL;
  if (pmcp_store_open(&s, path, 0))
    FAIL(s, "open");
  double secs = write_points(s, t, series, pts, total, total, batch, &clock, 1);
  if (secs < 0)
    FAIL(s, "write");
  pmcp_store_free(s);
  printf("write: %zu points in %.2f s = %.2f million points/s (one transaction, batches of "
         "%zu; generation time excluded)\n", total, secs, total / secs / 1e6, batch);
  /* Also without an explicit transaction: each pmcp_store_log call commits. */
  {
    char p2[700];
    snprintf(p2, sizeof p2, "%s/store2.db", dir);
    unlink(p2);
    pmcp_store *s2;
    pmcp_tenant t2;
    int64_t ser2;
    if (pmcp_store_open(&s2, p2, PMCP_STORE_CREATE) || pmcp_store_tenant(s2, NULL, 0, &t2) ||
        pmcp_store_run_create(s2, t2, &r, NULL) || pmcp_store_series(s2, t2, "bench", &sp, &ser2))
      FAIL(s2, "open 2");
    size_t n2 = total < 2000000 ? total : 2000000;
    int64_t c2 = 1700000000000LL;
    double ws = write_points(s2, t2, ser2, pts, n2, total, batch, &c2, 0);
    if (ws < 0)
      FAIL(s2, "write 2");
    printf("write: %zu points in %.2f s = %.2f million points/s (autocommit, one commit per "
           "%zu-point call)\n", n2, ws, n2 / ws / 1e6, batch);
    pmcp_store_free(s2);
    unlink(p2);
  }
  /* Size on disk: checkpoint the WAL into the main file first. */
  if (pmcp_store_open(&s, path, 0))
    FAIL(s, "reopen");
  pmcp_store_free(s);
  long long size = file_size(path) - base;
  char walp[700];
  snprintf(walp, sizeof walp, "%s-wal", path);
  long long wal = file_size(walp);
  /* The same points as MLflow's file store and as CSV. */
  char cmd[1000];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", mlflow);
  if (system(cmd) != 0)
    return 1;
  char mpath[800];
  snprintf(mpath, sizeof mpath, "%s/train_loss", mlflow);
  FILE *fm = fopen(mpath, "w"), *fc = fopen(csv, "w");
  if (!fm || !fc) {
    perror("open text outputs");
    return 1;
  }
  fprintf(fc, "step,timestamp,value\n");
  bench_uniform_restart();
  clock = 1700000000000LL;
  char num[40];
  for (size_t done = 0; done < total; done += batch) {
    size_t n = total - done < batch ? total - done : batch;
    gen(pts, done, n, total, &clock);
    for (size_t i = 0; i < n; i++) {
      shortest(num, sizeof num, pts[i].value);
      fprintf(fm, "%lld %s %lld\n", (long long)pts[i].time_ms, num, (long long)pts[i].step);
      fprintf(fc, "%lld,%lld,%s\n", (long long)pts[i].step, (long long)pts[i].time_ms, num);
    }
  }
  fclose(fm);
  fclose(fc);
  long long msize = file_size(mpath), csize = file_size(csv);
  printf("disk: store grew %lld bytes = %.3f bytes/point (WAL left: %lld bytes)\n", size,
         (double)size / total, wal);
  printf("disk: MLflow file store metrics file %lld bytes = %.2f bytes/point (store is %.1fx "
         "smaller)\n", msize, (double)msize / total, (double)msize / size);
  printf("disk: CSV step,timestamp,value %lld bytes = %.2f bytes/point (store is %.1fx "
         "smaller)\n", csize, (double)csize / total, (double)csize / size);
  /* Summaries: 100 buckets over the whole series, fresh read-only handle. */
  double best = 1e9, sum = 0;
  int reps = 5;
  for (int k = 0; k < reps; k++) {
    double q0 = bench_wall_s();
    if (pmcp_store_open(&s, path, PMCP_STORE_READONLY))
      FAIL(s, "open ro");
    pmcp_bucket b[100];
    size_t nb;
    if (pmcp_store_summary(s, t, series, INT64_MIN, INT64_MAX, 100, b, &nb))
      FAIL(s, "summary");
    pmcp_store_free(s);
    double ms = (bench_wall_s() - q0) * 1000;
    sum += ms;
    if (ms < best)
      best = ms;
    if (k == 0)
      printf("summary: %zu buckets; first [%lld..%lld] min %.4g max %.4g; last [%lld..%lld] "
             "min %.4g max %.4g\n", nb, (long long)b[0].step_min, (long long)b[0].step_max,
             b[0].min, b[0].max, (long long)b[nb - 1].step_min, (long long)b[nb - 1].step_max,
             b[nb - 1].min, b[nb - 1].max);
  }
  printf("summary: 100-point summary of %zu points: best %.2f ms, mean %.2f ms (open + "
         "summary + close, %d runs)\n", total, best, sum / reps, reps);
  if (pmcp_store_open(&s, path, PMCP_STORE_READONLY))
    FAIL(s, "open ro");
  pmcp_point *back = malloc(100000 * sizeof *back);
  size_t got;
  int64_t next;
  double p0 = bench_wall_s();
  int64_t mid = (int64_t)total / 2;
  if (pmcp_store_points(s, t, series, mid, mid + 99999, 0, back, 100000, &got, &next))
    FAIL(s, "points");
  double pms = (bench_wall_s() - p0) * 1000;
  printf("read: %zu raw points from the middle of the series in %.2f ms\n", got, pms);
  pmcp_store_free(s);
  free(back);
  free(pts);
  if (argc <= 2) {
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
      fprintf(stderr, "could not remove %s\n", dir);
  } else {
    printf("files kept in %s\n", dir);
  }
  return 0;
}
