/* SPDX-License-Identifier: MIT */
/* The C client of the stdio bench: spawns a server, talks to it over its
 * pipes and reads the server's own CPU time around the calls. The Node
 * client is slow enough that a server sleeps between two of its calls and
 * pays a wake-up for each; this one answers at once, so the figure is the
 * server's cost per call when its client is quick (the bench prints both).
 *
 *   bench-stdio-client [--modern] [--seq N] [--pipe N] [--warmup N] -- CMD [ARG...]
 *
 * Legacy era: initialize, notifications/initialized, then tools/call echo.
 * --modern: server/discover, then every call with its 2026-07-28 _meta.
 * Each answer is checked (its id and the echoed text). Prints one JSON
 * object: server CPU per call (ns) and calls/s, sequential and pipelined. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../bench_io.h"

static pid_t child;
static int to_srv, from_srv;
static int modern;
static char rbuf[1 << 20];
static size_t rlen, rpos;

static void die(const char *what)
{
  fprintf(stderr, "bench-stdio-client: %s\n", what);
  if (child > 0)
    kill(child, SIGKILL);
  exit(1);
}

static double now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Time on CPU of all the server's threads (schedstat, ns). */
static double server_cpu_ns(void)
{
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", (int)child);
  DIR *d = opendir(path);
  if (!d)
    die("cannot read the server's /proc entry");
  double total = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char p[320];
    snprintf(p, sizeof p, "/proc/%d/task/%s/schedstat", (int)child, e->d_name);
    FILE *f = fopen(p, "r");
    unsigned long long ns = 0;
    if (f) {
      if (fscanf(f, "%llu", &ns) == 1)
        total += (double)ns;
      fclose(f);
    }
  }
  closedir(d);
  return total;
}

/* The next line from the server (NUL-terminated in rbuf), blocking. */
static char *read_line(void)
{
  for (;;) {
    char *nl = memchr(rbuf + rpos, '\n', rlen - rpos);
    if (nl) {
      *nl = '\0';
      char *line = rbuf + rpos;
      rpos = (size_t)(nl - rbuf) + 1;
      return line;
    }
    if (rpos) {
      memmove(rbuf, rbuf + rpos, rlen - rpos);
      rlen -= rpos;
      rpos = 0;
    }
    int rc = bench_read_more(from_srv, rbuf, sizeof rbuf, &rlen);
    if (rc)
      die(rc == -1 ? "a line longer than 1 MiB" : "the server closed its output");
  }
}

static void write_all(const char *p, size_t n)
{
  while (n) {
    ssize_t w = write(to_srv, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      die("the server closed its input");
    p += w;
    n -= (size_t)w;
  }
}

static const char modern_meta[] =
    ",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
    "\"io.modelcontextprotocol/clientCapabilities\":{}}";

static int format_call(char *out, size_t size, long id)
{
  return snprintf(out, size,
                  "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"echo\",\"arguments\":{\"text\":\"hello %ld\"}%s}}\n",
                  id, id, modern ? modern_meta : "");
}

/* The answer to call @p id: its id and its echoed text. */
static void check_answer(const char *line, long id)
{
  char want[64];
  int n = snprintf(want, sizeof want, "\"id\":%ld", id);
  const char *idp = strstr(line, want);
  int id_ok = idp && (idp[n] == ',' || idp[n] == '}');
  snprintf(want, sizeof want, "\"text\":\"hello %ld\"", id);
  if (!id_ok || !strstr(line, want) || strstr(line, "\"error\"")) {
    fprintf(stderr, "bench-stdio-client: call %ld answered: %.300s\n", id, line);
    die("wrong answer");
  }
}

static long next_id = 1;

static void sequential(long n)
{
  char req[512];
  for (long i = 0; i < n; i++) {
    long id = next_id++;
    int k = format_call(req, sizeof req, id);
    write_all(req, (size_t)k);
    check_answer(read_line(), id);
  }
}

/* All @p n calls written as fast as the pipe takes them, answers read as
 * they come (poll on both pipes, so neither side blocks the other). */
static void pipelined(long n)
{
  static char out[1 << 16];
  size_t olen = 0, opos = 0;
  long sent = 0, first = next_id, got = 0;
  fcntl(to_srv, F_SETFL, fcntl(to_srv, F_GETFL) | O_NONBLOCK);
  while (got < n) {
    if (opos == olen && sent < n) {
      olen = opos = 0;
      while (sent < n && olen + 512 < sizeof out) {
        olen += (size_t)format_call(out + olen, sizeof out - olen, first + sent);
        sent++;
      }
    }
    struct pollfd p[2] = {{from_srv, POLLIN, 0}, {to_srv, POLLOUT, 0}};
    int np = opos < olen ? 2 : 1;
    if (poll(p, (nfds_t)np, -1) < 0 && errno != EINTR)
      die("poll");
    if (np == 2 && (p[1].revents & POLLOUT)) {
      ssize_t w = write(to_srv, out + opos, olen - opos);
      if (w > 0)
        opos += (size_t)w;
      else if (w < 0 && errno != EAGAIN && errno != EINTR)
        die("the server closed its input");
    }
    if (p[0].revents & (POLLIN | POLLHUP)) {
      /* one read, then every whole line it completed */
      if (rpos) {
        memmove(rbuf, rbuf + rpos, rlen - rpos);
        rlen -= rpos;
        rpos = 0;
      }
      ssize_t r = read(from_srv, rbuf + rlen, sizeof rbuf - rlen);
      if (r <= 0)
        die("the server closed its output");
      rlen += (size_t)r;
      char *nl;
      while ((nl = memchr(rbuf + rpos, '\n', rlen - rpos))) {
        *nl = '\0';
        check_answer(rbuf + rpos, first + got);
        got++;
        rpos = (size_t)(nl - rbuf) + 1;
      }
    }
  }
  next_id = first + n;
  fcntl(to_srv, F_SETFL, fcntl(to_srv, F_GETFL) & ~O_NONBLOCK);
}

static void handshake(void)
{
  static const char init[] =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
      "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
      "\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}\n"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
  static const char discover[] =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"server/discover\",\"params\":"
      "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
      "\"io.modelcontextprotocol/clientCapabilities\":{}}}}\n";
  if (modern)
    write_all(discover, sizeof discover - 1);
  else
    write_all(init, sizeof init - 1);
  const char *line = read_line();
  if (!strstr(line, "\"id\":0") || strstr(line, "\"error\"")) {
    fprintf(stderr, "bench-stdio-client: handshake answered: %.300s\n", line);
    die("handshake refused");
  }
}

int main(int argc, char **argv)
{
  long seq = 5000, pipe_n = 20000, warm = 2000;
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--"); i++) {
    if (!strcmp(argv[i], "--modern"))
      modern = 1;
    else if (!strcmp(argv[i], "--seq") && i + 1 < argc)
      seq = atol(argv[++i]);
    else if (!strcmp(argv[i], "--pipe") && i + 1 < argc)
      pipe_n = atol(argv[++i]);
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
      warm = atol(argv[++i]);
    else
      die("usage: bench-stdio-client [--modern] [--seq N] [--pipe N] [--warmup N] -- CMD [ARG...]");
  }
  if (i + 1 >= argc || seq < 1 || pipe_n < 1 || warm < 0)
    die("usage: bench-stdio-client [--modern] [--seq N] [--pipe N] [--warmup N] -- CMD [ARG...]");
  int in[2], out[2];
  if (pipe(in) || pipe(out))
    die("pipe");
  signal(SIGPIPE, SIG_IGN);
  child = fork();
  if (child < 0)
    die("fork");
  if (child == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    execvp(argv[i + 1], argv + i + 1);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  to_srv = in[1];
  from_srv = out[0];
  handshake();
  pipelined(warm);
  sequential(warm / 4 + 1);
  usleep(100000);
  double c0 = server_cpu_ns(), t0 = now_ns();
  sequential(seq);
  double c1 = server_cpu_ns(), t1 = now_ns();
  pipelined(pipe_n);
  double c2 = server_cpu_ns(), t2 = now_ns();
  close(to_srv);
  int status;
  waitpid(child, &status, 0);
  printf("{\"seqCpuPerCallNs\":%.1f,\"pipeCpuPerCallNs\":%.1f,\"seqCallsPerSec\":%.0f,"
         "\"pipeCallsPerSec\":%.0f}\n",
         (c1 - c0) / (double)seq, (c2 - c1) / (double)pipe_n, seq / ((t1 - t0) / 1e9),
         pipe_n / ((t2 - t1) / 1e9));
  return 0;
}
