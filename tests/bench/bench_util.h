/* SPDX-License-Identifier: MIT */
/* Benchmarks' helpers (tests/bench only), written once so that every
 * bench reads its clocks, sorts its samples and keeps the server's answer
 * the same way: clocks in ms and s, the order of doubles, a sink that
 * keeps the last response, a reproducible uniform generator, a check of
 * store calls. Include once per program. */
#ifndef PMCP_BENCH_UTIL_H
#define PMCP_BENCH_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probemcp/probemcp.h"

/* Clock @p c (CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID) in ms and in s. */
static inline double bench_clock_ms(clockid_t c)
{
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline double bench_clock_s(clockid_t c)
{
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline double bench_wall_ms(void) { return bench_clock_ms(CLOCK_MONOTONIC); }
static inline double bench_wall_s(void) { return bench_clock_s(CLOCK_MONOTONIC); }
/* The whole process's CPU time: the tools run on the server's workers. */
static inline double bench_cpu_ms(void) { return bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID); }
static inline double bench_cpu_s(void) { return bench_clock_s(CLOCK_PROCESS_CPUTIME_ID); }

/* Ascending order of doubles, for qsort. */
static inline int bench_cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static inline void bench_sort(double *v, size_t n) { qsort(v, n, sizeof *v, bench_cmp_double); }

/* The last response the server sent through bench_sink (a copy; NULL
 * before the first), which the bench may free and reset. */
static inline char **bench_last_slot(void)
{
  static char *last;
  return &last;
}
#define bench_last (*bench_last_slot())

/* A pmcp_server_options.sink that keeps each response in bench_last. */
static inline void bench_sink(const pmcp_out *m, void *ud)
{
  (void)ud;
  if (m->kind != PMCP_OUT_RESPONSE)
    return;
  free(bench_last);
  bench_last = strndup(m->data, m->len);
}

/* A server named "bench" whose responses go to bench_sink.
 * @return pmcp_server_new()'s. */
static inline int bench_server_new(pmcp_server **srv)
{
  pmcp_server_options o = PMCP_SERVER_OPTIONS_INIT;
  o.name = "bench";
  o.sink = bench_sink;
  return pmcp_server_new(srv, &o);
}

/* Opens the default session as a 2025-06-18 client does (initialize,
 * notifications/initialized) and waits for the answer. */
static inline void bench_initialize(pmcp_server *srv)
{
  const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                     "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                     "\"clientInfo\":{\"name\":\"b\",\"version\":\"1\"}}}";
  pmcp_server_handle(srv, "", init, strlen(init));
  const char *inited = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  pmcp_server_handle(srv, "", inited, strlen(inited));
  pmcp_server_drain(srv);
}

/* Uniform in [0, 1), the same sequence on every run (xorshift64);
 * bench_uniform_restart() starts the sequence again. */
static inline uint64_t *bench_rng_slot(void)
{
  static uint64_t rng = 0x9e3779b97f4a7c15ull;
  return &rng;
}

static inline void bench_uniform_restart(void) { *bench_rng_slot() = 0x9e3779b97f4a7c15ull; }

static inline double bench_uniform(void)
{
  uint64_t *rng = bench_rng_slot();
  *rng ^= *rng << 13;
  *rng ^= *rng >> 7;
  *rng ^= *rng << 17;
  return (double)(*rng >> 11) / 9007199254740992.0;
}

/* Prints @p label, then the load average and the number of cores. */
static inline void bench_print_load(const char *label)
{
  double l1, l5, l15;
  FILE *la = fopen("/proc/loadavg", "r");
  if (la && fscanf(la, "%lf %lf %lf", &l1, &l5, &l15) == 3)
    printf("%s%.2f %.2f %.2f on %ld cores\n", label, l1, l5, l15, sysconf(_SC_NPROCESSORS_ONLN));
  if (la)
    fclose(la);
}

/* Creates project @p id (its name too) in lab @p t. @return pmcp_store_create()'s. */
static inline int bench_project(pmcp_store *s, pmcp_tenant t, const char *id)
{
  pmcp_entity_spec p = PMCP_ENTITY_SPEC_INIT;
  p.id = id;
  p.name = id;
  return pmcp_store_create(s, t, "project", &p, NULL);
}

/* In a function returning int, with the store in @p s: returns 1 after
 * naming the store call @p x that failed. */
#define BENCH_CHECK(s, x)                                             \
  do {                                                                \
    if ((x) != 0) {                                                   \
      fprintf(stderr, "failed: %s (%s)\n", #x, pmcp_store_errmsg(s)); \
      return 1;                                                       \
    }                                                                 \
  } while (0)

/* Points @p from .. @p from + @p m of a loss curve of @p n points (an
 * exponential decay plus @p phase, 3% noise from the xorshift state
 * @p r), at steps 0.. and 50 ms apart, into @p p. */
static inline void bench_loss_curve(pmcp_point *p, size_t from, size_t m, size_t n, double phase,
                                    uint64_t *r)
{
  for (size_t k = 0; k < m; k++) {
    size_t st = from + k;
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    double noise = ((double)(*r >> 11) / 9007199254740992.0 - 0.5) * 0.06;
    p[k].step = (int64_t)st;
    p[k].time_ms = 1700000000000 + (int64_t)st * 50;
    p[k].value = (float)((2.3 * exp(-(double)st / ((double)n / 5)) + 0.15 + phase) * (1 + noise));
  }
}

#endif
