/* SPDX-License-Identifier: MIT */
/* The engine alone, in process: the same echo call as the stdio bench,
 * handed to pmcp_server_handle() with a sink that only counts bytes. The
 * difference between this and the stdio figure is the transport (pipes,
 * syscalls, wake-ups). With --modern the calls are 2026-07-28 requests
 * (their _meta, no initialize). Prints one JSON object. */
#include <probemcp/probemcp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixtures.h"

static size_t out_bytes, out_msgs;

static void sink(const pmcp_out *m, void *ud)
{
  (void)ud;
  out_bytes += m->len;
  out_msgs++;
}

static double cpu_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
  int modern = 0;
  long n = 200000;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--modern") == 0)
      modern = 1;
    else if (atol(argv[i]) > 0)
      n = atol(argv[i]);
  }
  double t0 = cpu_ns();
  pmcp_server_options o = PMCP_SERVER_OPTIONS_INIT;
  o.name = "inproc";
  o.sink = sink;
  pmcp_server *s = NULL;
  if (pmcp_server_new(&s, &o) || everything_register(s)) {
    fprintf(stderr, "inproc: cannot set up the server\n");
    return 1;
  }
  static const char init[] =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
      "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
      "\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}";
  static const char inited[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  if (!modern) {
    pmcp_server_handle(s, NULL, init, sizeof init - 1);
    pmcp_server_handle(s, NULL, inited, sizeof inited - 1);
  }
  /* The requests are formatted before the clock starts, so the figure is
   * the engine's alone. Each call is answered before the next is handed
   * over, so reusing a ring of ids never collides with one in flight. */
  enum { RING = 1024 };
  static char msgs[RING][320];
  static size_t lens[RING];
  for (int i = 0; i < RING; i++) {
    int k = snprintf(msgs[i], sizeof msgs[i],
                     "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
                     "{\"name\":\"echo\",\"arguments\":{\"text\":\"hello %d\"}%s}}",
                     i + 1, i, modern ? ",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
                                        "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}"
                                      : "");
    lens[i] = (size_t)k;
  }
  double t1 = cpu_ns();
  for (long i = 0; i < n; i++)
    pmcp_server_handle(s, NULL, msgs[i % RING], lens[i % RING]);
  double t2 = cpu_ns();
  pmcp_server_free(s);
  if (out_msgs != (size_t)n + !modern) {
    fprintf(stderr, "inproc: %zu replies for %ld calls\n", out_msgs, n + !modern);
    return 1;
  }
  printf("{\"calls\":%ld,\"cpuPerCallNs\":%.1f,\"setupCpuNs\":%.0f}\n", n,
         (t2 - t1) / n, t1 - t0);
  return 0;
}
