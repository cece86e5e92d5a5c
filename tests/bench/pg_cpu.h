/* SPDX-License-Identifier: MIT */
/* Benchmarks' helper (tests/bench only): the CPU time of a local
 * PostgreSQL server's client backends, read from /proc. Include once. */
#ifndef PMCP_BENCH_PG_CPU_H
#define PMCP_BENCH_PG_CPU_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* CPU time of the PostgreSQL server's client backends when it runs here:
 * the children of the postmaster of the data directory in
 * PMCP_BENCH_PGDATA (tests/pg/pgctl.sh start DIR: DIR/data) that serve a
 * connection (use a cluster of its own). -1 when unknown. On a loaded
 * machine this says more than wall-clock time. */
static inline double server_cpu_s(void)
{
  const char *dir = getenv("PMCP_BENCH_PGDATA");
  if (!dir || !*dir)
    return -1;
  char path[600];
  snprintf(path, sizeof path, "%s/postmaster.pid", dir);
  FILE *f = fopen(path, "r");
  long pm = 0;
  if (!f)
    return -1;
  if (fscanf(f, "%ld", &pm) != 1)
    pm = 0;
  fclose(f);
  if (pm <= 0)
    return -1;
  DIR *d = opendir("/proc");
  if (!d)
    return -1;
  unsigned long long ticks = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    char buf[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *sf = fopen(path, "r");
    if (!sf)
      continue;
    size_t len = fread(buf, 1, sizeof buf - 1, sf);
    fclose(sf);
    buf[len] = '\0';
    /* pid (comm) state ppid ... utime(14) stime(15) */
    char *rp = strrchr(buf, ')');
    long ppid = 0;
    unsigned long long ut = 0, st = 0;
    if (!rp || sscanf(rp + 2, "%*c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ppid,
                      &ut, &st) != 3)
      continue;
    if (ppid != pm)
      continue;
    /* Client backends only ("postgres: USER DB [local] ..." or
     * "HOST(PORT)"): the checkpointer and autovacuum come and go. */
    char title[256];
    snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
    sf = fopen(path, "r");
    if (!sf)
      continue;
    len = fread(title, 1, sizeof title - 1, sf);
    fclose(sf);
    title[len] = '\0';
    if (strstr(title, "[local]") || strchr(title, '('))
      ticks += ut + st;
  }
  closedir(d);
  return (double)ticks / (double)sysconf(_SC_CLK_TCK);
}

#endif
