/* SPDX-License-Identifier: MIT */
/* Listings at scale (never a test): the cost of one listing call as the
 * lab grows, 10^3 -> 10^4 -> 10^5 runs of one project by default.
 *
 *   build/tests/bench/tracking/bench-scale [SIZES [ROUNDS [DIR]]]
 *   e.g. bench-scale 1000,10000,100000 21 /tmp/scale
 *
 * For each size a SQLite store DIR/scale-N.db is built through the store
 * write path when absent (kept for the next run): N runs in project
 * "big" spread over N/10 experiments (at least 1), a name
 * "trial-<i % 1000>-<i>", a state cycling running/finished/failed/killed,
 * tag "baseline" on every 10th run and "sweep" on every 3rd, one attribute,
 * one series val/loss (its last value has ties, a NaN point on every 50th
 * run), every 97th run deleted, and one note per run. The store is then
 * opened read-only with the research and tracking toolsets on one server and
 * each listing below is called ROUNDS times through pmcp_server_handle().
 *
 * Printed per call and size: the median process CPU time (the tools run on
 * the server's workers; this process does nothing else meanwhile) and its
 * ratio to the smallest size's, so the curve shows whether a listing grows
 * with the lab; and the process's RSS when idle (store open, server
 * initialised) and after each size's calls (target: within 20 MB).
 * BENCH_OPS=SUBSTRING runs only the calls whose names hold it;
 * BENCH_SHOW=1 prints each call's last answer.
 *
 * PostgreSQL: DIR is a store URL (postgresql://...?host=...); size N uses
 * schema scale_N of it (create the schemas first; a schema without the
 * project is built). With PMCP_BENCH_PGDATA naming the cluster's data
 * directory (a cluster of its own), the CPU of its backends is added to
 * the figures (their clock ticks: 10 ms steps, so take many rounds). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probemcp/probemcp.h"
#include "../pg_cpu.h"

#include "../bench_util.h"

static double rss_mb(void)
{
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  double kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmRSS:", 6))
      kb = atof(line + 6);
  if (f)
    fclose(f);
  return kb / 1024;
}

#define CHECK(x) BENCH_CHECK(s, x)

static int build(const char *path, int n)
{
  pmcp_store *s = NULL;
  pmcp_tenant t;
  CHECK(pmcp_store_open(&s, path, PMCP_STORE_CREATE));
  CHECK(pmcp_store_tenant(s, NULL, 0, &t));
  CHECK(bench_project(s, t, "big"));
  int n_exp = n / 10 ? n / 10 : 1;
  CHECK(pmcp_store_begin(s));
  for (int x = 0; x < n_exp; x++) {
    char eid[32];
    snprintf(eid, sizeof eid, "e%05d", x);
    pmcp_entity_spec e = PMCP_ENTITY_SPEC_INIT;
    e.id = eid;
    e.name = eid;
    e.parent = "project:big";
    CHECK(pmcp_store_create(s, t, "experiment", &e, NULL));
  }
  CHECK(pmcp_store_commit(s));
  static const char *const states[] = {"running", "finished", "failed", "killed"};
  for (int i = 0; i < n; i++) {
    if (i % 1000 == 0)
      CHECK(pmcp_store_begin(s));
    char id[32], ref[40], name[64], exp[48];
    snprintf(id, sizeof id, "r%06d", i);
    snprintf(ref, sizeof ref, "run:%s", id);
    snprintf(name, sizeof name, "trial-%03d-%06d", i % 1000, i);
    snprintf(exp, sizeof exp, "experiment:e%05d", i % n_exp);
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = id;
    r.name = name;
    r.experiment = exp;
    r.status = states[i % 4];
    r.created_ms = 1700000000000LL + i * 1000LL;
    CHECK(pmcp_store_run_create(s, t, &r, NULL));
    if (i % 10 == 0)
      CHECK(pmcp_store_tag(s, t, ref, "baseline", 1));
    if (i % 3 == 0)
      CHECK(pmcp_store_tag(s, t, ref, "sweep", 1));
    pmcp_value v = {PMCP_V_STRING, i % 3 ? "adamw" : "sgd", 0, 0, NULL, 0};
    CHECK(pmcp_store_set_attr(s, t, ref, "config/optimizer", &v));
    pmcp_series_spec ss = {PMCP_SERIES_SPEC_VERSION, "val/loss", NULL, 0, PMCP_METRIC_FLOAT,
                           PMCP_SCALE_STEP};
    int64_t sid;
    CHECK(pmcp_store_series(s, t, id, &ss, &sid));
    pmcp_point pt[3] = {{0, 0, i % 50 ? 2.0 : 0.0 / 0.0}, {1, 0, 1.0},
                        {2, 0, 0.2 + (i % 100) / 100.0}};
    CHECK(pmcp_store_log(s, t, sid, pt, 3));
    pmcp_note_spec ns = PMCP_NOTE_SPEC_INIT;
    char body[96];
    snprintf(body, sizeof body, "trial %d: loss plateaued after warmup", i);
    ns.on = ref;
    ns.body = body;
    ns.author = "bench";
    CHECK(pmcp_store_note(s, t, &ns, NULL, NULL));
    if (i % 97 == 5)
      CHECK(pmcp_store_set_deleted(s, t, ref, 1));
    if (i % 1000 == 999 || i == n - 1)
      CHECK(pmcp_store_commit(s));
  }
  pmcp_store_free(s);
  return 0;
}

/* Whether the PostgreSQL store at @p url holds the project already. */
static int built_pg(const char *url)
{
  pmcp_store *s = NULL;
  pmcp_tenant t;
  pmcp_buf b = PMCP_BUF_INIT;
  int ok = pmcp_store_open(&s, url, PMCP_STORE_CREATE) == 0 &&
           pmcp_store_tenant(s, NULL, 0, &t) == 0 && pmcp_store_get(s, t, "project:big", &b) == 0;
  pmcp_buf_dispose(&b);
  pmcp_store_free(s);
  return ok;
}

typedef struct op {
  const char *name, *tool, *args;
} op;

static const op ops[] = {
  {"browse runs (first page)", "browse", "{\"mode\":\"runs\",\"project\":\"big\",\"limit\":20}"},
  {"browse tree (experiment)", "browse", "{\"ref\":\"experiment:e00007\",\"limit\":20}"},
  {"search a run name", "search", "{\"query\":\"trial-042\",\"semantic\":false}"},
  {"list_runs (no filter)", "list_runs", "{\"project\":\"big\",\"limit\":20}"},
  {"list_runs sys/state eq", "list_runs",
   "{\"project\":\"big\",\"limit\":20,\"filter\":[{\"attr\":\"sys/state\",\"op\":\"eq\","
   "\"value\":\"failed\"}]}"},
  {"list_runs sys/tags contains", "list_runs",
   "{\"project\":\"big\",\"limit\":20,\"filter\":[{\"attr\":\"sys/tags\",\"op\":\"contains\","
   "\"value\":\"baseline\"}]}"},
  {"list_runs name prefix", "list_runs",
   "{\"project\":\"big\",\"limit\":20,\"filter\":[{\"attr\":\"sys/name\",\"op\":\"matches\","
   "\"value\":\"^trial-042-\"}]}"},
  {"list_runs sort last(val/loss)", "list_runs",
   "{\"project\":\"big\",\"limit\":20,\"sort\":{\"series\":\"val/loss\",\"function\":"
   "\"last\"}}"},
  {"list_runs matches (C check)", "list_runs",
   "{\"project\":\"big\",\"limit\":20,\"filter\":[{\"attr\":\"sys/name\",\"op\":\"matches\","
   "\"value\":\"-0[0-9]7-\"}]}"},
};
#define N_OPS (sizeof ops / sizeof ops[0])
#define MAX_SIZES 8

int main(int argc, char **argv)
{
  const char *sizes_arg = argc > 1 ? argv[1] : "1000,10000,100000";
  int rounds = argc > 2 ? atoi(argv[2]) : 11;
  const char *dir = argc > 3 ? argv[3] : "/tmp";
  int sizes[MAX_SIZES], n_sizes = 0;
  for (const char *p = sizes_arg; *p && n_sizes < MAX_SIZES;) {
    sizes[n_sizes++] = atoi(p);
    p = strchr(p, ',');
    if (!p)
      break;
    p++;
  }
  if (rounds < 1 || !n_sizes)
    return 2;
  static double med[MAX_SIZES][N_OPS];
  double idle[MAX_SIZES], after[MAX_SIZES];
  for (int z = 0; z < n_sizes; z++) {
    char path[1200];
    int pg = !strncmp(dir, "postgres", 8);
    if (pg)
      snprintf(path, sizeof path, "%s&options=-csearch_path%%3Dscale_%d", dir, sizes[z]);
    else
      snprintf(path, sizeof path, "%s/scale-%d.db", dir, sizes[z]);
    if (pg ? !built_pg(path) : access(path, F_OK) != 0) {
      double c0 = bench_cpu_ms();
      if (build(path, sizes[z]))
        return 1;
      printf("built %s (%d runs) in %.1f s of CPU\n", path, sizes[z], (bench_cpu_ms() - c0) / 1e3);
    }
    pmcp_store *s = NULL;
    /* a read-write open brings a kept store's schema up to date */
    CHECK(pmcp_store_open(&s, path, 0));
    pmcp_store_free(s);
    CHECK(pmcp_store_open(&s, path, PMCP_STORE_READONLY));
    pmcp_server *srv = NULL;
    if (bench_server_new(&srv) || pmcp_research_register(srv, s, NULL) ||
        pmcp_tracking_register(srv, s, NULL))
      return 1;
    bench_initialize(srv);
    idle[z] = rss_mb();
    double *cpu = calloc((size_t)rounds, sizeof *cpu);
    for (size_t k = 0; k < N_OPS; k++) {
      if (getenv("BENCH_OPS") && !strstr(ops[k].name, getenv("BENCH_OPS")))
        continue;
      char msg[1024];
      snprintf(msg, sizeof msg,
               "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
               "\"%s\",\"arguments\":%s}}", ops[k].tool, ops[k].args);
      for (int r = 0; r < rounds; r++) {
        double c = bench_cpu_ms(), sv = server_cpu_s();
        pmcp_server_handle(srv, "", msg, strlen(msg));
        pmcp_server_drain(srv);
        cpu[r] = bench_cpu_ms() - c;
        if (sv >= 0)
          cpu[r] += (server_cpu_s() - sv) * 1e3;
        if (!bench_last || strstr(bench_last, "\"isError\":true")) {
          fprintf(stderr, "%s failed: %.400s\n", ops[k].name, bench_last ? bench_last : "(none)");
          return 1;
        }
      }
      if (getenv("BENCH_SHOW"))
        printf("  %s: %.300s\n", ops[k].name, bench_last);
      bench_sort(cpu, (size_t)rounds);
      med[z][k] = cpu[rounds / 2];
    }
    free(cpu);
    after[z] = rss_mb();
    pmcp_server_free(srv);
    pmcp_store_free(s);
  }
  printf("\nmedian CPU ms per call%s (x ratio to %d runs), %d rounds:\n",
         server_cpu_s() >= 0 ? ", this process + the PostgreSQL backends" : "", sizes[0], rounds);
  printf("%-32s", "call");
  for (int z = 0; z < n_sizes; z++)
    printf(" %18d", sizes[z]);
  printf("\n");
  for (size_t k = 0; k < N_OPS; k++) {
    printf("%-32s", ops[k].name);
    for (int z = 0; z < n_sizes; z++) {
      char cell[40];
      snprintf(cell, sizeof cell, "%.3f (x%.1f)", med[z][k],
               med[0][k] > 0 ? med[z][k] / med[0][k] : 0);
      printf(" %18s", cell);
    }
    printf("\n");
  }
  printf("%-32s", "RSS MB idle -> after calls");
  for (int z = 0; z < n_sizes; z++) {
    char cell[40];
    snprintf(cell, sizeof cell, "%.0f -> %.0f", idle[z], after[z]);
    printf(" %18s", cell);
  }
  printf("\n");
  free(bench_last);
  return 0;
}
