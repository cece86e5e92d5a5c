/* SPDX-License-Identifier: MIT */
/* bench-calls STORE [CALLS]: the server's CPU per tool call, in process,
 * on a store filled by `probe demo`: the research and tracking toolsets
 * registered the way probe-mcp-stdio does (pmcp_toolsets_register), each
 * call handed to pmcp_server_handle() and answered before the next.
 *
 * Prints, per call: the median and minimum process CPU time per call over
 * rounds of CALLS calls (CLOCK_PROCESS_CPUTIME_ID, every thread, so the
 * hand-off to a worker counts), beside the target where one exists, and
 * the answer's size. Under callgrind (calls.sh) each call's instructions
 * are dumped on their own: CALLGRIND_ZERO_STATS before its calls,
 * CALLGRIND_DUMP_STATS_AT(name) after, which calls.sh divides by CALLS.
 *
 * Environment: BENCH_OPS=a substring filter on the names, BENCH_ROUNDS
 * (default 7), BENCH_SHOW=1 prints each call's first answer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probemcp/probemcp.h"
#include "probemcp/toolsets.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#ifndef HAVE_CALLGRIND
#define RUNNING_ON_VALGRIND 0
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(s) (void)(s)
#endif

static size_t out_bytes, out_msgs;
static char *first;
static int keep_first;

static void sink(const pmcp_out *m, void *ud)
{
  (void)ud;
  if (m->kind != PMCP_OUT_RESPONSE)
    return;
  out_bytes += m->len;
  out_msgs++;
  if (keep_first && !first)
    first = strndup(m->data, m->len);
}

static double cpu_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct op {
  const char *name, *tool, *args;
  double target_us; /* 0: none */
} op;

/* Refs of the demo lab's generated part (demo_lab.c), stable across
 * `probe demo` runs. */
static const op ops[] = {
  {"browse tree", "browse", "{}", 100},
  {"browse tree project", "browse", "{\"ref\":\"project:cifar-resnet\"}", 100},
  {"browse runs", "browse", "{\"mode\":\"runs\"}", 100},
  {"browse runs experiment", "browse", "{\"mode\":\"runs\",\"experiment\":\"experiment:lr-sweep\"}",
   100},
  {"entity card", "entity", "{\"refs\":[\"run:sweep-lr0p003-bs128\"]}", 60},
  {"entity card project", "entity", "{\"refs\":[\"project:cifar-resnet\"]}", 60},
  {"entity record", "entity", "{\"refs\":[\"run:sweep-lr0p003-bs128\"],\"view\":\"record\"}", 0},
  {"list_workspaces", "list_workspaces", "{}", 40},
  {"list_projects", "list_projects", "{\"workspace\":\"vision\"}", 0},
  {"search", "search", "{\"query\":\"warmup\"}", 0},
  {"metrics series", "metrics",
   "{\"mode\":\"series\",\"run_ids\":[\"sweep-lr0p003-bs128\",\"sweep-lr0p03-bs256\"],"
   "\"keys\":[\"train/loss\"],\"max_points\":80}", 0},
};

enum { RING = 512 };

int main(int argc, char **argv)
{
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: bench-calls STORE [CALLS]   (a store made by `probe demo`)\n");
    return 2;
  }
  long n = argc > 2 ? atol(argv[2]) : 2000;
  if (n < 1)
    n = 1;
  int rounds = getenv("BENCH_ROUNDS") ? atoi(getenv("BENCH_ROUNDS")) : 7;
  if (rounds < 1 || RUNNING_ON_VALGRIND)
    rounds = 1;
  const char *only = getenv("BENCH_OPS");
  int show = getenv("BENCH_SHOW") && *getenv("BENCH_SHOW") == '1';

  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  so.name = "bench-calls";
  so.sink = sink;
  pmcp_server *srv = NULL;
  pmcp_store *st = NULL;
  pmcp_buf msg = PMCP_BUF_INIT;
  pmcp_toolsets_options to = PMCP_TOOLSETS_OPTIONS_INIT;
  to.toolset = "all";
  to.store = argv[1];
  to.memory_tasks = 1;
  if (pmcp_server_new(&srv, &so) || pmcp_toolsets_register(srv, &to, &st, &msg) || !st) {
    fprintf(stderr, "bench-calls: cannot serve %s: %s\n", argv[1], msg.ptr ? msg.ptr : "");
    return 1;
  }
  pmcp_buf_dispose(&msg);
  static const char init[] =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
      "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
      "\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}";
  static const char inited[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  pmcp_server_handle(srv, NULL, init, sizeof init - 1);
  pmcp_server_handle(srv, NULL, inited, sizeof inited - 1);
  pmcp_server_drain(srv);

  static char *msgs[RING];
  static size_t lens[RING];
  double *per = malloc((size_t)rounds * sizeof *per);
  if (!per)
    return 1;
  int failed = 0;
  printf("%ld calls a round, %d rounds; us of process CPU per call (every thread)\n", n, rounds);
  printf("%-24s %9s %9s %9s %8s %s\n", "call", "median", "min", "target", "bytes", "");
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    const op *o = &ops[k];
    if (only && !strstr(o->name, only))
      continue;
    for (int i = 0; i < RING; i++) {
      free(msgs[i]);
      size_t cap = strlen(o->args) + 200;
      msgs[i] = malloc(cap);
      if (!msgs[i])
        return 1;
      lens[i] = (size_t)snprintf(msgs[i], cap,
                                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
                                 "\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
                                 i + 1, o->tool, o->args);
    }
    /* warm: statement caches, the first answer checked */
    free(first);
    first = NULL;
    keep_first = 1;
    for (int i = 0; i < 3; i++) {
      pmcp_server_handle(srv, NULL, msgs[i], lens[i]);
      pmcp_server_drain(srv);
    }
    keep_first = 0;
    if (!first || strstr(first, "\"isError\":true") || strstr(first, "\"error\":{")) {
      fprintf(stderr, "bench-calls: %s failed: %.600s\n", o->name, first ? first : "(none)");
      failed++;
      continue;
    }
    if (show)
      printf("%s\n", first);
    size_t bytes = strlen(first);
    CALLGRIND_ZERO_STATS;
    for (int r = 0; r < rounds; r++) {
      double t0 = cpu_us();
      for (long i = 0; i < n; i++) {
        pmcp_server_handle(srv, NULL, msgs[i % RING], lens[i % RING]);
        pmcp_server_drain(srv);
      }
      per[r] = (cpu_us() - t0) / (double)n;
    }
    CALLGRIND_DUMP_STATS_AT(o->name);
    qsort(per, (size_t)rounds, sizeof *per, cmp);
    char tgt[32] = "-";
    if (o->target_us > 0)
      snprintf(tgt, sizeof tgt, "<=%.0f", o->target_us);
    printf("%-24s %9.2f %9.2f %9s %8zu %s\n", o->name, per[rounds / 2], per[0], tgt, bytes,
           o->target_us <= 0 ? "" : per[rounds / 2] <= o->target_us ? "met" : "MISSED");
    fflush(stdout);
  }
  FILE *la = fopen("/proc/loadavg", "r");
  double l1 = 0;
  if (la && fscanf(la, "%lf", &l1) == 1)
    printf("load average %.2f\n", l1);
  if (la)
    fclose(la);
  for (int i = 0; i < RING; i++)
    free(msgs[i]);
  free(per);
  free(first);
  pmcp_server_free(srv);
  pmcp_store_free(st);
  return failed ? 1 : 0;
}
