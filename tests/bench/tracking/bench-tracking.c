/* SPDX-License-Identifier: MIT */
/* list_runs benchmark (never a test): a 3-condition filter (an attribute
 * eq, an any_of of an attribute lt and a series condition) and a series
 * sort over N runs of one project, through a real server and store.
 *
 *   build/tests/bench/tracking/bench-tracking [N_RUNS] [ROUNDS] [STORE]
 *
 * Builds the store (at STORE, kept for the next run, when given and absent;
 * reused when it exists; else in a temporary folder), then prints p50/p95/
 * max of list_runs over ROUNDS calls as wall-clock and as process CPU time
 * (the machine is shared: CPU time is the figure that does not depend on
 * the load), and the verdict against the target (issue 8): p50 under 50 ms
 * at N_RUNS=100000.
 *
 * STORE may be a postgresql:// URL (an empty schema, or one this benchmark
 * filled before: its project "bench" is reused). The runs are then created
 * by PMCP_BENCH_PROCS processes (default 4), each on its own connection
 * with a transaction per 1,000 runs, and with PMCP_BENCH_PGDATA naming the
 * cluster's data directory (tests/pg/pgctl.sh start DIR: DIR/data) the
 * CPU time of the PostgreSQL backends is printed beside the client's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probemcp/probemcp.h"

#include "../bench_util.h"
#include "../pg_cpu.h"

#define CHECK(x) BENCH_CHECK(s, x)

/* Creates runs k, k + step, k + 2 step ... < n of project "bench" on a
 * handle of its own, committing every 1,000 runs. */
static int build(const char *path, int n, int k, int step)
{
  pmcp_store *s = NULL;
  pmcp_tenant t;
  CHECK(pmcp_store_open(&s, path, 0));
  CHECK(pmcp_store_tenant(s, NULL, 0, &t));
  int in_txn = 0;
  for (int i = k, done = 0; i < n; i += step, done++) {
    if (!in_txn) {
      CHECK(pmcp_store_begin(s));
      in_txn = 1;
    }
    char id[32], ref[40];
    snprintf(id, sizeof id, "r%06d", i);
    snprintf(ref, sizeof ref, "run:%s", id);
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = id;
    r.project = "bench";
    r.created_ms = 1700000000000LL + i;
    CHECK(pmcp_store_run_create(s, t, &r, NULL));
    pmcp_value v = {PMCP_V_STRING, i % 3 ? "adamw" : "sgd", 0, 0, NULL, 0};
    CHECK(pmcp_store_set_attr(s, t, ref, "config/optimizer", &v));
    pmcp_value f = {PMCP_V_FLOAT, NULL, 0, 0.0001 * (1 + i % 20), NULL, 0};
    CHECK(pmcp_store_set_attr(s, t, ref, "config/lr", &f));
    pmcp_series_spec ss = {PMCP_SERIES_SPEC_VERSION, "val/loss", NULL, 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
    int64_t sid;
    CHECK(pmcp_store_series(s, t, id, &ss, &sid));
    pmcp_point pt[3] = {{0, 0, 2.0}, {1, 0, 1.0}, {2, 0, 0.2 + (i % 100) / 100.0}};
    CHECK(pmcp_store_log(s, t, sid, pt, 3));
    if ((done + 1) % 1000 == 0) {
      CHECK(pmcp_store_commit(s));
      in_txn = 0;
    }
  }
  if (in_txn)
    CHECK(pmcp_store_commit(s));
  pmcp_store_free(s);
  return 0;
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 100000;
  int rounds = argc > 2 ? atoi(argv[2]) : 5;
  if (n < 1 || rounds < 1)
    return 2;
  char dir[] = "/tmp/pmcp-bench-tracking-XXXXXX";
  char path[512];
  int keep = argc > 3;
  if (keep) {
    snprintf(path, sizeof path, "%s", argv[3]);
  } else {
    if (!mkdtemp(dir))
      return 1;
    snprintf(path, sizeof path, "%s/store.db", dir);
  }
  pmcp_store *s = NULL;
  pmcp_tenant t;
  int is_url = !strncmp(path, "postgresql://", 13) || !strncmp(path, "postgres://", 11);
  if (keep && !is_url && access(path, F_OK) == 0) {
    printf("reusing %s (built for its own N; pass a new path to rebuild)\n", path);
    /* a read-write open brings an older store's schema up to date */
    CHECK(pmcp_store_open(&s, path, 0));
    pmcp_store_free(s);
    goto measure;
  }
  CHECK(pmcp_store_open(&s, path, PMCP_STORE_CREATE));
  CHECK(pmcp_store_tenant(s, NULL, 0, &t));
  int prc = bench_project(s, t, "bench");
  if (prc == PMCP_EEXIST && is_url) {
    printf("reusing project 'bench' of the schema (built for its own N; use an empty schema"
           " to rebuild)\n");
    pmcp_store_free(s);
    goto measure;
  }
  CHECK(prc);
  pmcp_store_free(s);
  s = NULL;
  double t0 = bench_wall_ms();
  int procs = 1;
  if (is_url && getenv("PMCP_BENCH_PROCS"))
    procs = atoi(getenv("PMCP_BENCH_PROCS"));
  else if (is_url)
    procs = 4;
  if (procs < 1 || procs > 64)
    procs = 1;
  for (int k = 0; k < procs; k++) {
    pid_t pid = procs > 1 ? fork() : 0;
    if (pid < 0)
      return 1;
    if (pid > 0)
      continue;
    int rc = build(path, n, k, procs);
    if (procs > 1)
      _exit(rc);
    if (rc)
      return rc;
  }
  int failed = 0;
  for (int k = 0; procs > 1 && k < procs; k++) {
    int st = 0;
    if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
      failed = 1;
  }
  if (failed)
    return 1;
  printf("built %d runs in %.0f ms (%d process%s)\n", n, bench_wall_ms() - t0, procs,
         procs > 1 ? "es" : "");
measure:
  CHECK(pmcp_store_open(&s, path, PMCP_STORE_READONLY));
  pmcp_server *srv = NULL;
  if (bench_server_new(&srv) || pmcp_tracking_register(srv, s, NULL))
    return 1;
  bench_initialize(srv);
  const char *call =
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
      "\"list_runs\",\"arguments\":{\"project\":\"bench\",\"limit\":20,\"filter\":["
      "{\"attr\":\"config/optimizer\",\"op\":\"eq\",\"value\":\"adamw\"},"
      "{\"any_of\":[{\"attr\":\"config/lr\",\"op\":\"lt\",\"value\":0.0005},"
      "{\"series\":\"val/loss\",\"function\":\"last\",\"op\":\"lt\",\"value\":0.5}]}],"
      "\"sort\":{\"series\":\"val/loss\",\"function\":\"last\",\"direction\":\"asc\"}}}}";
  double *ms = calloc((size_t)rounds, sizeof *ms);
  double *cpu = calloc((size_t)rounds, sizeof *cpu);
  double *srv_cpu = calloc((size_t)rounds, sizeof *srv_cpu);
  int have_srv = server_cpu_s() >= 0;
  for (int r = 0; r < rounds; r++) {
    double a = bench_wall_ms(), c = bench_cpu_ms(), sc = have_srv ? server_cpu_s() : 0;
    pmcp_server_handle(srv, "", call, strlen(call));
    pmcp_server_drain(srv);
    ms[r] = bench_wall_ms() - a;
    cpu[r] = bench_cpu_ms() - c;
    srv_cpu[r] = have_srv ? (server_cpu_s() - sc) * 1e3 : 0;
    if (have_srv)
      srv_cpu[r] += cpu[r];
    if (!bench_last || !strstr(bench_last, "total_count")) {
      fprintf(stderr, "unexpected answer: %.300s\n", bench_last ? bench_last : "(none)");
      return 1;
    }
  }
  bench_sort(ms, (size_t)rounds);
  bench_sort(cpu, (size_t)rounds);
  bench_sort(srv_cpu, (size_t)rounds);
  int p95 = (rounds * 95 + 99) / 100 - 1;
  printf("list_runs, 3-condition filter + series sort, %d runs, %d rounds:\n"
         "  wall: p50 %.1f ms, p95 %.1f ms, max %.1f ms\n"
         "  cpu:  p50 %.1f ms, p95 %.1f ms, max %.1f ms\n",
         n, rounds, ms[rounds / 2], ms[p95], ms[rounds - 1], cpu[rounds / 2], cpu[p95],
         cpu[rounds - 1]);
  if (have_srv)
    printf("  cpu, client + PostgreSQL backends (clock ticks): p50 %.1f ms, p95 %.1f ms,"
           " max %.1f ms\n", srv_cpu[rounds / 2], srv_cpu[p95], srv_cpu[rounds - 1]);
  printf("verdict: target p50 < 50 ms: wall %s, cpu %s\n", ms[rounds / 2] < 50 ? "MET" : "MISSED",
         cpu[rounds / 2] < 50 ? "MET" : "MISSED");
  printf("answer: %.200s\n", bench_last);
  pmcp_server_free(srv);
  pmcp_store_free(s);
  free(ms);
  free(cpu);
  free(srv_cpu);
  free(bench_last);
  if (keep)
    return 0;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : 1;
}
