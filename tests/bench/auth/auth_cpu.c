/* SPDX-License-Identifier: MIT */
/* One keep-alive client of a Streamable HTTP MCP server: opens a session
 * (initialize, notifications/initialized), then sends CALLS requests one
 * after another and prints the server's CPU time per request, summed over
 * all its threads from /proc/PID/task/TID/schedstat (nanoseconds), and
 * the wall time per request. Driven by run.sh; not a test.
 *
 *   auth_cpu --port P --pid PID [--key pk_...] [--tool NAME [--args JSON]]
 *            [--calls N]
 * Without --tool each request is the JSON-RPC `ping`. */
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../bench_io.h"

static int fd = -1;
static char sid[128];
static char rbuf[1 << 20];
static size_t rlen;

static void die(const char *what)
{
  fprintf(stderr, "auth_cpu: %s\n", what);
  exit(1);
}

/* Server CPU so far: the sum of every thread's run time (ns). */
static long long server_ns(int pid)
{
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", pid);
  DIR *d = opendir(path);
  if (!d)
    die("cannot read the server's threads");
  long long sum = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    char p[384];
    snprintf(p, sizeof p, "/proc/%d/task/%s/schedstat", pid, e->d_name);
    FILE *f = fopen(p, "r");
    long long ns = 0;
    if (f && fscanf(f, "%lld", &ns) == 1)
      sum += ns;
    if (f)
      fclose(f);
  }
  closedir(d);
  return sum;
}

static void send_all(const char *b, size_t n)
{
  while (n) {
    ssize_t w = write(fd, b, n);
    if (w <= 0)
      die("write failed");
    b += w;
    n -= (size_t)w;
  }
}

static void fill(void)
{
  int rc = bench_read_more(fd, rbuf, sizeof rbuf, &rlen);
  if (rc)
    die(rc == -1 ? "reply too large" : "the server closed the connection");
}

/* Reads one response; returns its status; the body is left in body[]. */
static char body[1 << 20];
static int response(void)
{
  char *end;
  while (!(end = memmem(rbuf, rlen, "\r\n\r\n", 4)))
    fill();
  size_t hl = (size_t)(end - rbuf) + 4;
  int status = atoi(rbuf + 9);
  long clen = -1;
  int chunked = 0;
  for (char *l = strstr(rbuf, "\r\n") + 2; l < end; l = strstr(l, "\r\n") + 2) {
    if (!strncasecmp(l, "content-length:", 15))
      clen = atol(l + 15);
    else if (!strncasecmp(l, "transfer-encoding:", 18) && strstr(l, "chunked") < strstr(l, "\r\n"))
      chunked = 1;
    else if (!strncasecmp(l, "mcp-session-id:", 15)) {
      char *v = l + 15;
      while (*v == ' ')
        v++;
      size_t n = strcspn(v, "\r");
      snprintf(sid, sizeof sid, "%.*s", (int)n, v);
    }
  }
  memmove(rbuf, rbuf + hl, rlen - hl);
  rlen -= hl;
  size_t bl = 0;
  if (chunked) {
    for (;;) {
      char *crlf;
      while (!(crlf = memmem(rbuf, rlen, "\r\n", 2)))
        fill();
      size_t n = strtoul(rbuf, NULL, 16), skip = (size_t)(crlf - rbuf) + 2;
      while (rlen < skip + n + 2)
        fill();
      memcpy(body + bl, rbuf + skip, n);
      bl += n;
      memmove(rbuf, rbuf + skip + n + 2, rlen - skip - n - 2);
      rlen -= skip + n + 2;
      if (n == 0)
        break;
    }
  } else if (clen >= 0) {
    while (rlen < (size_t)clen)
      fill();
    memcpy(body, rbuf, (size_t)clen);
    bl = (size_t)clen;
    memmove(rbuf, rbuf + clen, rlen - (size_t)clen);
    rlen -= (size_t)clen;
  }
  body[bl] = '\0';
  return status;
}

static int post(int port, const char *key, const char *json)
{
  static char req[8192];
  int n = snprintf(req, sizeof req,
                   "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                   "Content-Type: application/json\r\n"
                   "Accept: application/json, text/event-stream\r\n"
                   "MCP-Protocol-Version: 2025-11-25\r\n%s%s%s%s%s%s"
                   "Content-Length: %zu\r\n\r\n%s",
                   port, key ? "Authorization: Bearer " : "", key ? key : "", key ? "\r\n" : "",
                   sid[0] ? "Mcp-Session-Id: " : "", sid, sid[0] ? "\r\n" : "",
                   strlen(json), json);
  send_all(req, (size_t)n);
  return response();
}

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
  int port = 0, pid = 0;
  long calls = 5000;
  const char *key = NULL, *tool = NULL, *args = "{}";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--port")) port = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--pid")) pid = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--key")) key = argv[i + 1];
    else if (!strcmp(argv[i], "--tool")) tool = argv[i + 1];
    else if (!strcmp(argv[i], "--args")) args = argv[i + 1];
    else if (!strcmp(argv[i], "--calls")) calls = atol(argv[i + 1]);
    else die("unknown option");
  }
  if (!port || !pid || calls < 1)
    die("usage: auth_cpu --port P --pid PID [--key K] [--tool NAME [--args JSON]] [--calls N]");
  fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
    die("cannot connect");
  if (post(port, key, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                      "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                      "\"clientInfo\":{\"name\":\"auth_cpu\",\"version\":\"1\"}}}") != 200)
    die(body[0] ? body : "initialize refused");
  post(port, key, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  static char msg[4096];
  /* A few calls first: the first request of a handle prepares its
   * statements, which is not what a busy server pays per call. */
  long warm = calls / 10 + 10;
  long long c0 = 0;
  double t0 = 0;
  for (long i = 0; i < warm + calls; i++) {
    if (i == warm) {
      c0 = server_ns(pid);
      t0 = now_s();
    }
    if (tool)
      snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\","
               "\"params\":{\"name\":\"%s\",\"arguments\":%s}}", i + 1, tool, args);
    else
      snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"ping\"}", i + 1);
    int st = post(port, key, msg);
    if (st != 200 || !strstr(body, "\"result\"") || strstr(body, "\"isError\":true"))
      die(body[0] ? body : "a call failed");
  }
  double wall = now_s() - t0;
  long long cpu = server_ns(pid) - c0;
  printf("server_cpu_us=%.2f wall_us=%.2f\n", (double)cpu / 1e3 / (double)calls,
         wall * 1e6 / (double)calls);
  close(fd);
  return 0;
}
