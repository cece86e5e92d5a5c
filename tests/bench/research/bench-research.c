/* bench-research [N_RUNS [N_ARTIFACTS]]: fills a fresh SQLite store through
 * the store API, opens it read-only under the research toolset and times
 * browse, entity and keyword search calls through pmcp_server_handle().
 * Prints p50/p99 per call kind (targets: browse and entity p99 < 5 ms,
 * keyword search p99 < 20 ms). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probemcp/probemcp.h"

static char *last;
static void sink(const pmcp_out *m, void *ud)
{
  (void)ud;
  if (m->kind != PMCP_OUT_RESPONSE)
    return;
  free(last);
  last = strndup(m->data, m->len);
}

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int id = 100;
static double call(pmcp_server *srv, const char *tool, const char *args)
{
  char msg[2048];
  snprintf(msg, sizeof msg,
           "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"%s\",\"arguments\":%s}}", id++, tool, args);
  double t0 = now_ms();
  pmcp_server_handle(srv, "", msg, strlen(msg));
  pmcp_server_drain(srv);
  double dt = now_ms() - t0;
  if (!last || strstr(last, "\"isError\":true")) {
    fprintf(stderr, "bench: %s %s failed: %.300s\n", tool, args, last ? last : "(none)");
    exit(1);
  }
  return dt;
}

static void report(const char *what, double *t, int n, double target)
{
  qsort(t, (size_t)n, sizeof *t, cmp);
  double p50 = t[n / 2], p99 = t[(int)(n * 0.99)];
  printf("%-28s n=%d p50=%.3f ms p99=%.3f ms (target p99 < %.0f ms) %s\n", what, n, p50,
         p99, target, p99 < target ? "OK" : "MISSED");
}

#define CK(x) do { int rc_ = (x); if (rc_) { fprintf(stderr, "bench: %s: %s (%s)\n", #x, \
    pmcp_strerror(rc_), pmcp_store_errmsg(st)); return 1; } } while (0)

int main(int argc, char **argv)
{
  int n_runs = argc > 1 ? atoi(argv[1]) : 10000;
  int n_art = argc > 2 ? atoi(argv[2]) : 1000;
  /* BENCH_KEEP=PATH keeps the filled store there (and skips the timing) */
  const char *keep = getenv("BENCH_KEEP");
  /* BENCH_READ=PATH times the reads on an existing store (no filling) */
  const char *readp = getenv("BENCH_READ");
  char path[512] = "/tmp/bench-research-XXXXXX";
  if (keep) {
    snprintf(path, sizeof path, "%s", keep);
  } else {
    int fd = mkstemp(path);
    close(fd);
  }
  pmcp_store *st = NULL;
  double t0 = now_ms();
  if (readp) {
    snprintf(path, sizeof path, "%s", readp);
    goto timing;
  }
  unlink(path);
  CK(pmcp_store_open(&st, path, PMCP_STORE_CREATE));
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
    snprintf(rid, sizeof rid, "r%05d", i);
    snprintf(rname, sizeof rname, "sweep lr=%g seed=%d %s", 0.001 * (i % 7 + 1), i,
             i % 13 ? "baseline" : "warmup cosine");
    snprintf(exp, sizeof exp, "experiment:e%d-%d", i % 10, (i / 10) % 10);
    pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
    r.id = rid;
    r.name = rname;
    r.experiment = exp;
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
    snprintf(on, sizeof on, "run:r%05d", a * 7 % (n_runs ? n_runs : 1));
    snprintf(content, sizeof content,
             "learning_rate: %g\nbatch_size: %d\noptimizer: adamw\nscheduler: cosine\n", 0.001 * a,
             32 << (a % 4));
    pmcp_artifact_spec as = PMCP_ARTIFACT_SPEC_INIT;
    as.name = name;
    as.on = on;
    as.path = "config.yaml";
    as.content = content;
    as.size = strlen(content);
    CK(pmcp_store_artifact_add(st, t, &as, NULL, NULL));
  }
  CK(pmcp_store_commit(st));
  pmcp_store_free(st);
  printf("filled %d runs, %d artifacts, %d notes in %.0f ms\n", n_runs, n_art, n_runs / 10,
         now_ms() - t0);
  if (keep)
    return 0;
timing:

  st = NULL;
  CK(pmcp_store_open(&st, path, PMCP_STORE_READONLY));
  pmcp_server_options o = PMCP_SERVER_OPTIONS_INIT;
  o.name = "bench";
  o.sink = sink;
  pmcp_server *srv = NULL;
  if (pmcp_server_new(&srv, &o) || pmcp_research_register(srv, st, NULL)) {
    fprintf(stderr, "bench: cannot set up the server\n");
    return 1;
  }
  const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                     "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                     "\"clientInfo\":{\"name\":\"b\",\"version\":\"1\"}}}";
  pmcp_server_handle(srv, "", init, strlen(init));
  const char *inited = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  pmcp_server_handle(srv, "", inited, strlen(inited));
  pmcp_server_drain(srv);

  enum { N = 100 };
  static double tb[N], te[N], ts[N], tt[N];
  char args[512];
  for (int i = 0; i < N; i++) {
    tb[i] = call(srv, "browse", i % 2 ? "{\"mode\":\"runs\",\"limit\":20}"
                                      : "{\"mode\":\"runs\",\"project\":\"p3\",\"limit\":10}");
    tt[i] = call(srv, "browse", "{}");
    snprintf(args, sizeof args, "{\"refs\":[\"run:r%05d\"]}", (i * 37) % n_runs);
    te[i] = call(srv, "entity", args);
    ts[i] = call(srv, "search", i % 2 ? "{\"query\":\"warmup cosine\"}"
                                      : "{\"query\":\"plateaued\",\"limit\":20}");
  }
  report("browse runs", tb, N, 5);
  report("browse tree (root)", tt, N, 5);
  report("entity card", te, N, 5);
  report("search (exact+keyword)", ts, N, 20);
  pmcp_server_free(srv);
  pmcp_store_free(st);
  free(last);
  if (readp)
    return 0;
  unlink(path);
  char side[600];
  snprintf(side, sizeof side, "%s-wal", path);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", path);
  unlink(side);
  return 0;
}
