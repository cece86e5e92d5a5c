/* SPDX-License-Identifier: MIT */
/* bench-research [N_RUNS [N_ARTIFACTS]]: fills a fresh SQLite store
 * through the store API (10 projects x 10 experiments, N_RUNS runs, a note
 * on every 10th run, N_ARTIFACTS artifacts (shared lab-wide), datasets, checkpoints, sources
 * and lineage), opens it read-only under the research toolset and times
 * browse, entity and search calls through pmcp_server_handle().
 *
 * For each operation it prints p50/p95/p99 of the wall-clock time and of
 * the process CPU time (CLOCK_PROCESS_CPUTIME_ID: the tools may run on the
 * server's workers; this process runs nothing else while it measures), and
 * the verdict against the targets: p99 < 5 ms for browse and
 * entity, < 20 ms for keyword search. On a machine loaded by other work
 * the wall-clock figures include time spent waiting for a core; the CPU
 * figures do not.
 *
 * Environment: BENCH_N=calls per operation (default 200), BENCH_OPS=a
 * substring filter on the operation names, BENCH_KEEP=PATH fills the
 * store there and stops, BENCH_READ=PATH times an existing store. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probemcp/probemcp.h"

#include "../bench_util.h"
#include "probemcp/tokens.h"

static int id = 100;
static int failures;

/* One tools/call; adds its wall and CPU time to *wall / *cpu. */
static void call(pmcp_server *srv, const char *tool, const char *args, double *wall,
                 double *cpu)
{
  char msg[2048];
  snprintf(msg, sizeof msg,
           "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"%s\",\"arguments\":%s}}", id++, tool, args);
  free(bench_last);
  bench_last = NULL;
  double w0 = bench_clock_ms(CLOCK_MONOTONIC), c0 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  pmcp_server_handle(srv, "", msg, strlen(msg));
  pmcp_server_drain(srv);
  *cpu = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
  *wall = bench_clock_ms(CLOCK_MONOTONIC) - w0;
  if (!bench_last || strstr(bench_last, "\"isError\":true")) {
    fprintf(stderr, "bench: %s %s failed: %.400s\n", tool, args, bench_last ? bench_last : "(none)");
    failures++;
  }
}

typedef struct op {
  const char *name;
  const char *tool;
  double target_ms;
  /* arguments of call i (a format with one %d: a rotating index) */
  const char *args[4];
} op;

#define RUNS_MOD 10000
static const op ops[] = {
  {"browse tree (root)", "browse", 5, {"{}", "{\"depth\":1}"}},
  {"browse tree (project)", "browse", 5,
   {"{\"ref\":\"project:p%P\"}", "{\"ref\":\"experiment:e%P-%P\",\"limit\":20}"}},
  {"browse runs", "browse", 5,
   {"{\"mode\":\"runs\",\"limit\":20}", "{\"mode\":\"runs\",\"project\":\"p%P\"}",
    "{\"mode\":\"runs\",\"active\":true}"}},
  {"browse notes", "browse", 5,
   {"{\"mode\":\"notes\"}", "{\"mode\":\"notes\",\"query\":\"plateaued\"}",
    "{\"mode\":\"notes\",\"on\":\"run:r%N\"}"}},
  {"browse catalogs", "browse", 5,
   {"{\"mode\":\"datasets\"}", "{\"mode\":\"checkpoints\",\"best\":true}",
    "{\"mode\":\"sources\"}", "{\"mode\":\"workspaces\"}"}},
  {"entity card", "entity", 5,
   {"{\"refs\":[\"run:r%R\"]}", "{\"refs\":[\"experiment:e%P-%P\"]}",
    "{\"refs\":[\"project:p%P\"]}", "{\"refs\":[\"artifact:artifact-0%P%P%P\"]}"}},
  {"entity record/notes", "entity", 5,
   {"{\"refs\":[\"run:r%R\"],\"view\":\"record\"}",
    "{\"refs\":[\"run:r%N\"],\"view\":\"notes\"}",
    "{\"refs\":[\"run:r%R\"],\"view\":\"record\",\"view_options\":{\"field\":\"command\"}}"}},
  {"entity lineage/versions", "entity", 5,
   {"{\"refs\":[\"run:r0%P%P%P\"],\"view\":\"lineage\"}",
    "{\"refs\":[\"dataset:ds%P\"],\"view\":\"lineage\",\"view_options\":"
    "{\"direction\":\"downstream\"}}",
    "{\"refs\":[\"artifact:artifact-0%P%P%P\"],\"view\":\"versions\"}",
    "{\"refs\":[\"dataset:ds%P\"],\"view\":\"versions\"}"}},
  {"entity content", "entity", 5,
   {"{\"refs\":[\"artifact:artifact-0%P%P%P\"],\"view\":\"content\"}",
    "{\"refs\":[\"artifact:artifact-0%P%P%P\"],\"view\":\"content\",\"view_options\":"
    "{\"grep\":\"optimizer\",\"context_lines\":1}}"}},
  {"entity batch (5 runs)", "entity", 5,
   {"{\"refs\":[\"run:r%R\",\"run:r0%P%P%P\",\"run:r1%P%P%P\",\"run:r2%P%P%P\","
    "\"run:r3%P%P%P\"]}"}},
  {"search exact", "search", 20,
   {"{\"query\":\"r0%P%P%P\",\"semantic\":false}",
    "{\"query\":\"artifact-0%P%P%P\",\"semantic\":false}",
    "{\"query\":\"config.yaml\",\"semantic\":false}"}},
  {"search keyword", "search", 20,
   {"{\"query\":\"warmup cosine\",\"semantic\":false}",
    "{\"query\":\"plateaued\",\"limit\":20,\"semantic\":false}",
    "{\"query\":\"adamw optimizer\",\"semantic\":false}",
    "{\"query\":\"baseline sweep\",\"semantic\":false}"}},
};

/* Expands %P (a digit 0-9), %R (a run number, 4 digits) and %N (a run
 * with a note) for call i. */
static void expand(const char *fmt, int i, int n_runs, char *out, size_t size)
{
  size_t o = 0;
  unsigned x = (unsigned)i * 2654435761u;
  for (const char *p = fmt; *p && o + 8 < size; p++) {
    if (p[0] == '%' && p[1] == 'P') {
      out[o++] = (char)('0' + (x % 10));
      x = x / 10 + 7 * (unsigned)i + 3;
      p++;
    } else if (p[0] == '%' && (p[1] == 'R' || p[1] == 'N')) {
      int r = (int)(x % (unsigned)n_runs);
      if (p[1] == 'N')
        r -= r % 10;
      o += (size_t)snprintf(out + o, size - o, "%04d", r);
      x = x / 7 + 13;
      p++;
    } else {
      out[o++] = *p;
    }
  }
  out[o] = '\0';
}

static void pct(double *t, int n, double *p50, double *p95, double *p99)
{
  bench_sort(t, (size_t)n);
  *p50 = t[n / 2];
  *p95 = t[(int)(n * 0.95)];
  *p99 = t[(int)(n * 0.99)];
}

#define CK(x) do { int rc_ = (x); if (rc_) { fprintf(stderr, "bench: %s: %s (%s)\n", #x, \
    pmcp_strerror(rc_), pmcp_store_errmsg(st)); return 1; } } while (0)

static int fill(pmcp_store *st, int n_runs, int n_art)
{
  pmcp_tenant t;
  CK(pmcp_store_tenant(st, NULL, 0, &t));
  CK(pmcp_store_begin(st));
  for (int p = 0; p < 10; p++) {
    char name[64], pid[64];
    snprintf(name, sizeof name, "project %d", p);
    snprintf(pid, sizeof pid, "p%d", p);
    pmcp_entity_spec e = PMCP_ENTITY_SPEC_INIT;
    e.id = pid;
    e.name = name;
    CK(pmcp_store_create(st, t, "project", &e, NULL));
    for (int x = 0; x < 10; x++) {
      char en[64], eid[64], par[80];
      snprintf(en, sizeof en, "experiment %d.%d", p, x);
      snprintf(eid, sizeof eid, "e%d-%d", p, x);
      snprintf(par, sizeof par, "project:%s", pid);
      pmcp_entity_spec ee = PMCP_ENTITY_SPEC_INIT;
      ee.id = eid;
      ee.name = en;
      ee.parent = par;
      CK(pmcp_store_create(st, t, "experiment", &ee, NULL));
    }
  }
  for (int i = 0; i < n_runs; i++) {
    char rid[32], rname[96], exp[64];
    snprintf(rid, sizeof rid, "r%04d", i);
    snprintf(rname, sizeof rname, "sweep lr=%g seed=%d %s", 0.001 * (i % 7 + 1), i,
             i % 13 ? "baseline" : "warmup cosine");
    snprintf(exp, sizeof exp, "experiment:e%d-%d", i % 10, (i / 10) % 10);
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = rid;
    r.name = rname;
    /* one run in 20 is not filed in a project (browse's "unfiled") */
    r.experiment = i % 20 == 7 ? NULL : exp;
    r.status = i % 50 ? "finished" : "running";
    r.created_ms = 1700000000000LL + i * 1000LL;
    r.command = "python train.py";
    CK(pmcp_store_run_create(st, t, &r, NULL));
    if (i % 10 == 0) {
      pmcp_note_spec ns = PMCP_NOTE_SPEC_INIT;
      char on[40], body[160];
      snprintf(on, sizeof on, "run:%s", rid);
      snprintf(body, sizeof body, "note %d: loss plateaued after warmup; try lr %g", i,
               0.0005 * (i % 5 + 1));
      ns.on = on;
      ns.body = body;
      ns.author = "bench";
      CK(pmcp_store_note(st, t, &ns, NULL, NULL));
    }
  }
  for (int a = 0; a < n_art; a++) {
    char name[64], on[40], content[400];
    snprintf(name, sizeof name, "artifact-%04d", a);
    snprintf(on, sizeof on, "run:r%04d", a * 7 % (n_runs ? n_runs : 1));
    snprintf(content, sizeof content,
             "learning_rate: %g\nbatch_size: %d\noptimizer: adamw\nscheduler: cosine\n", 0.001 * a,
             32 << (a % 4));
    pmcp_artifact_spec as = PMCP_ARTIFACT_SPEC_INIT;
    as.name = name;
    as.on = on;
    as.path = "config.yaml";
    as.content = content;
    as.size = strlen(content);
    pmcp_buf aid = PMCP_BUF_INIT;
    CK(pmcp_store_artifact_add(st, t, &as, &aid, NULL));
    if (a % 10 == 0) /* a second version */
      CK(pmcp_store_artifact_add(st, t, &as, NULL, NULL));
    /* lab-wide, where artifact:NAME resolves */
    char ref[128];
    snprintf(ref, sizeof ref, "artifact:%s", aid.ptr);
    pmcp_buf_dispose(&aid);
    CK(pmcp_store_artifact_promote(st, t, ref));
  }
  /* the data catalog: 10 datasets with versions, sources, checkpoints of
   * every 10th run, and lineage source -> dataset -> runs */
  for (int d = 0; d < 10; d++) {
    char js[512];
    int n = snprintf(js, sizeof js,
                     "{\"id\":\"ds%d\",\"name\":\"dataset %d\",\"project\":\"project:p%d\","
                     "\"uri\":\"s3://lab/ds%d\"}", d, d, d, d);
    CK(pmcp_store_put(st, t, "dataset", js, (size_t)n, NULL));
    for (int v = 1; v <= 3; v++) {
      n = snprintf(js, sizeof js, "{\"dataset\":\"dataset:ds%d\",\"version\":\"%d\","
                   "\"uri\":\"s3://lab/ds%d/v%d\",\"rows\":%d}", d, v, d, v, 1000 * v);
      CK(pmcp_store_put(st, t, "dataset-version", js, (size_t)n, NULL));
    }
    n = snprintf(js, sizeof js, "{\"id\":\"src%d\",\"provider\":\"hf\",\"kind\":\"dataset\","
                 "\"uri\":\"hf://lab/raw-%d\"}", d, d);
    CK(pmcp_store_put(st, t, "source", js, (size_t)n, NULL));
    n = snprintf(js, sizeof js, "{\"from\":\"source:src%d\",\"to\":\"dataset:ds%d\","
                 "\"relation\":\"derived\"}", d, d);
    CK(pmcp_store_put(st, t, "lineage", js, (size_t)n, NULL));
  }
  for (int i = 0; i < n_runs; i += 10) {
    char js[256];
    int n = snprintf(js, sizeof js, "{\"run\":\"run:r%04d\",\"uses\":\"dataset:ds%d\"}", i,
                     (i / 10) % 10);
    CK(pmcp_store_put(st, t, "run-use", js, (size_t)n, NULL));
    n = snprintf(js, sizeof js, "{\"run\":\"run:r%04d\",\"step\":1000,\"best\":true,"
                 "\"stored\":true,\"metric\":\"loss\",\"value\":0.5}", i);
    CK(pmcp_store_put(st, t, "checkpoint", js, (size_t)n, NULL));
  }
  CK(pmcp_store_commit(st));
  return 0;
}

int main(int argc, char **argv)
{
  int n_runs = argc > 1 ? atoi(argv[1]) : 10000;
  int n_art = argc > 2 ? atoi(argv[2]) : 1000;
  if (n_runs < 100 || n_runs > RUNS_MOD || n_art < 1000 || n_art > 9999) {
    fprintf(stderr, "usage: bench-research [N_RUNS 100..10000 [N_ARTIFACTS 1000..9999]]\n");
    return 2;
  }
  int n_calls = getenv("BENCH_N") ? atoi(getenv("BENCH_N")) : 200;
  if (n_calls < 10)
    n_calls = 10;
  const char *only = getenv("BENCH_OPS");
  const char *keep = getenv("BENCH_KEEP");
  const char *readp = getenv("BENCH_READ");
  char path[512] = "/tmp/bench-research-XXXXXX";
  pmcp_store *st = NULL;
  if (readp) {
    snprintf(path, sizeof path, "%s", readp);
  } else {
    if (keep) {
      snprintf(path, sizeof path, "%s", keep);
    } else {
      int fd = mkstemp(path);
      if (fd < 0)
        return 1;
      close(fd);
    }
    unlink(path);
    double t0 = bench_clock_ms(CLOCK_MONOTONIC);
    CK(pmcp_store_open(&st, path, PMCP_STORE_CREATE));
    if (fill(st, n_runs, n_art))
      return 1;
    pmcp_store_free(st);
    printf("filled %d runs, %d artifacts, %d notes in %.0f ms\n", n_runs, n_art, n_runs / 10,
           bench_clock_ms(CLOCK_MONOTONIC) - t0);
    if (keep)
      return 0;
  }

  st = NULL;
  CK(pmcp_store_open(&st, path, PMCP_STORE_READONLY));
  pmcp_server *srv = NULL;
  if (bench_server_new(&srv) || pmcp_research_register(srv, st, NULL)) {
    fprintf(stderr, "bench: cannot set up the server\n");
    return 1;
  }
  bench_initialize(srv);

  /* what the tool list costs a client, as sent */
  const char *tl = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";
  free(bench_last);
  bench_last = NULL;
  pmcp_server_handle(srv, "", tl, strlen(tl));
  pmcp_server_drain(srv);
  size_t tl_tokens = 0;
  if (bench_last && pmcp_tokens_count(bench_last, strlen(bench_last), &tl_tokens) == 0)
    printf("tools/list: %zu tokens (o200k_base), %zu bytes\n", tl_tokens, strlen(bench_last));

  double *wall = malloc((size_t)n_calls * sizeof *wall);
  double *cpu = malloc((size_t)n_calls * sizeof *cpu);
  if (!wall || !cpu)
    return 1;
  printf("%d calls per operation; times in ms; wall = CLOCK_MONOTONIC, cpu = process CPU time\n",
         n_calls);
  printf("%-24s %8s %8s %8s | %8s %8s %8s | %s\n", "operation", "wall p50", "p95", "p99",
         "cpu p50", "p95", "p99", "target p99 (cpu / wall)");
  int missed_cpu = 0;
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    const op *op = &ops[k];
    if (only && !strstr(op->name, only))
      continue;
    size_t n_args = 0;
    while (n_args < 4 && op->args[n_args])
      n_args++;
    char args[1024];
    /* one warm-up pass over the argument shapes (statement caches) */
    for (size_t a = 0; a < n_args; a++) {
      double w, c;
      expand(op->args[a], (int)a, n_runs, args, sizeof args);
      call(srv, op->tool, args, &w, &c);
    }
    for (int i = 0; i < n_calls; i++) {
      expand(op->args[(size_t)i % n_args], i, n_runs, args, sizeof args);
      call(srv, op->tool, args, &wall[i], &cpu[i]);
    }
    double w50, w95, w99, c50, c95, c99;
    pct(wall, n_calls, &w50, &w95, &w99);
    pct(cpu, n_calls, &c50, &c95, &c99);
    missed_cpu += c99 >= op->target_ms;
    printf("%-24s %8.3f %8.3f %8.3f | %8.3f %8.3f %8.3f | < %2.0f: %s / %s\n", op->name, w50,
           w95, w99, c50, c95, c99, op->target_ms, c99 < op->target_ms ? "OK" : "MISSED",
           w99 < op->target_ms ? "OK" : "MISSED");
  }
  bench_print_load("load average during the run: ");
  printf("verdict (cpu p99): %s\n", missed_cpu ? "TARGETS MISSED" : "all targets met");
  free(wall);
  free(cpu);
  pmcp_server_free(srv);
  pmcp_store_free(st);
  free(bench_last);
  if (!readp && !keep) {
    unlink(path);
    char side[600];
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
  }
  return failures ? 1 : 0;
}
