/* SPDX-License-Identifier: MIT */
/* Closed-loop MCP load client for the load test and the HTTP benchmark.
 *
 *   http-load --port P [--conns 200] [--requests 100000] [--slowloris K]
 *             [--slowloris-wait-ms 15000] [--path /mcp] [--era legacy|modern]
 *
 * Each connection initializes its own session (keep-alive), then calls the
 * tool `echo` with a per-request text until the total is reached; with
 * --era modern there is no session: every call is a self-contained
 * 2026-07-28 request (_meta protocolVersion and clientCapabilities, the
 * MCP-Protocol-Version, Mcp-Method and Mcp-Name headers). Every
 * answer is checked (HTTP 200, a JSON-RPC result that echoes the text).
 * Slowloris connections send a request's headers one byte every 200 ms and
 * must be cut off by the server while the others keep going.
 * Prints one summary line of key=value pairs; exits 1 on any error. Stops by
 * itself: every connection has a bounded number of requests, and a global
 * timer aborts after --deadline-s (default 300). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llhttp.h>
#include <uv.h>

typedef struct lconn {
  uv_tcp_t tcp;
  uv_connect_t creq;
  uv_timer_t slow;
  llhttp_t parser;
  int idx;
  int step;              /* 0 initialize, 1 initialized, 2+ calls */
  int slowloris;
  size_t slow_pos;
  char sid[80];
  char hname[32];
  int in_sid;
  int status;
  char *body;
  size_t body_len, body_cap;
  uint64_t sent_ns;
  long expect;           /* request number echoed */
  int closed;
  uint64_t opened_ns, cut_ns;
} lconn;

static uv_loop_t *loop;
static int port = 0;
static const char *path = "/mcp";
static long total = 100000, issued = 0, done_calls = 0, errors = 0;
static int nconns = 200, nslow = 0, active = 0;
static double *lat;
static long nlat = 0;
static int slow_cut = 0;
static uint64_t t0;
static char slow_req[512];
static uv_timer_t deadline;
static int modern = 0;   /* --era modern: stateless 2026-07-28 requests */

static void fail(lconn *c, const char *what)
{
  if (errors < 5)
    fprintf(stderr, "http-load: connection %d: %s\n", c->idx, what);
  errors++;
}

static void on_close(uv_handle_t *h) { (void)h; }

static void conn_close(lconn *c)
{
  if (c->closed)
    return;
  c->closed = 1;
  active--;
  uv_close((uv_handle_t *)&c->tcp, on_close);
  if (c->slowloris)
    uv_close((uv_handle_t *)&c->slow, on_close);
  if (active == 0) {
    uv_timer_stop(&deadline);
    uv_close((uv_handle_t *)&deadline, on_close);
  }
}

static void on_write(uv_write_t *w, int status)
{
  free(w->data);
  free(w);
}

static void send_raw(lconn *c, const char *data, size_t len)
{
  uv_write_t *w = malloc(sizeof *w);
  char *copy = malloc(len);
  memcpy(copy, data, len);
  w->data = copy;
  uv_buf_t b = uv_buf_init(copy, (unsigned)len);
  if (uv_write(w, (uv_stream_t *)&c->tcp, &b, 1, on_write) != 0) {
    free(copy);
    free(w);
    fail(c, "write failed");
    conn_close(c);
  }
}

static void send_post(lconn *c, const char *body)
{
  char buf[2048];
  int n = snprintf(buf, sizeof buf,
                   "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                   "Content-Type: application/json\r\n"
                   "Accept: application/json, text/event-stream\r\n"
                   "%s%s%s%s"
                   "Content-Length: %zu\r\n\r\n%s",
                   path, port, c->sid[0] ? "Mcp-Session-Id: " : "", c->sid,
                   c->sid[0] ? "\r\n" : "",
                   modern ? "MCP-Protocol-Version: 2026-07-28\r\n"
                            "Mcp-Method: tools/call\r\nMcp-Name: echo\r\n"
                   : c->step >= 1 ? "MCP-Protocol-Version: 2025-06-18\r\n" : "",
                   strlen(body), body);
  c->sent_ns = uv_hrtime();
  send_raw(c, buf, (size_t)n);
}

static void next_request(lconn *c)
{
  char body[512];
  if (c->step == 0) {
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
             "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
             "\"clientInfo\":{\"name\":\"http-load\",\"version\":\"1\"}}}");
  } else if (c->step == 1) {
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  } else {
    if (issued >= total) {
      conn_close(c);
      return;
    }
    c->expect = issued++;
    if (modern)
      snprintf(body, sizeof body,
               "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
               "{\"name\":\"echo\",\"arguments\":{\"text\":\"request %ld\"},\"_meta\":"
               "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
               "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
               c->step, c->expect);
    else
      snprintf(body, sizeof body,
               "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
               "{\"name\":\"echo\",\"arguments\":{\"text\":\"request %ld\"}}}",
               c->step, c->expect);
  }
  send_post(c, body);
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
  lconn *c = p->data;
  size_t l = strlen(c->hname);
  if (l + len < sizeof c->hname) {
    memcpy(c->hname + l, at, len);
    c->hname[l + len] = '\0';
  }
  return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
  lconn *c = p->data;
  if (strcasecmp(c->hname, "mcp-session-id") == 0 && len < sizeof c->sid)
    memcpy(c->sid, at, len), c->sid[len] = '\0';
  return 0;
}

static int on_header_value_complete(llhttp_t *p)
{
  ((lconn *)p->data)->hname[0] = '\0';
  return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
  lconn *c = p->data;
  if (c->body_len + len + 1 > c->body_cap) {
    c->body_cap = (c->body_len + len + 1) * 2;
    c->body = realloc(c->body, c->body_cap);
  }
  memcpy(c->body + c->body_len, at, len);
  c->body_len += len;
  c->body[c->body_len] = '\0';
  return 0;
}

static int on_message_begin(llhttp_t *p)
{
  lconn *c = p->data;
  c->body_len = 0;
  if (c->body)
    c->body[0] = '\0';
  c->hname[0] = '\0';
  return 0;
}

static int on_message_complete(llhttp_t *p)
{
  lconn *c = p->data;
  int status = llhttp_get_status_code(p);
  if (c->slowloris) {
    /* The server answered (408) before cutting us off: fine. */
    return 0;
  }
  if (c->step == 0) {
    if (status != 200 || !c->sid[0] || !c->body || !strstr(c->body, "\"result\"")) {
      fail(c, "initialize failed");
      conn_close(c);
      return HPE_PAUSED;
    }
  } else if (c->step == 1) {
    if (status != 202) {
      char msg[300];
      snprintf(msg, sizeof msg, "notifications/initialized: HTTP %d: %.200s",
               status, c->body ? c->body : "");
      fail(c, msg);
      conn_close(c);
      return HPE_PAUSED;
    }
  } else {
    char want[64];
    snprintf(want, sizeof want, "request %ld", c->expect);
    if (status != 200 || !c->body || !strstr(c->body, "\"result\"") ||
        !strstr(c->body, want)) {
      char msg[300];
      snprintf(msg, sizeof msg, "call %ld: HTTP %d: %.200s", c->expect, status,
               c->body ? c->body : "");
      fail(c, msg);
    } else {
      lat[nlat++] = (double)(uv_hrtime() - c->sent_ns) / 1e6;
      done_calls++;
    }
  }
  c->step++;
  next_request(c);
  return 0;
}

static llhttp_settings_t settings;

static void on_alloc(uv_handle_t *h, size_t s, uv_buf_t *b)
{
  static char buf[65536];
  b->base = buf;
  b->len = sizeof buf;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
  lconn *c = s->data;
  if (c->closed)
    return;
  if (n < 0) {
    if (c->slowloris) {
      c->cut_ns = uv_hrtime();
      slow_cut++;
    } else if (issued < total || c->step < 2) {
      fail(c, "server closed the connection");
    }
    conn_close(c);
    return;
  }
  llhttp_errno_t e = llhttp_execute(&c->parser, b->base, (size_t)n);
  if (e != HPE_OK && !c->closed) {
    fail(c, "bad HTTP response");
    conn_close(c);
  }
}

static void on_slow_tick(uv_timer_t *t)
{
  lconn *c = t->data;
  if (c->closed || c->slow_pos >= strlen(slow_req))
    return;
  send_raw(c, slow_req + c->slow_pos, 1);
  c->slow_pos++;
}

static void on_connect(uv_connect_t *r, int status)
{
  lconn *c = r->data;
  if (status < 0) {
    fail(c, uv_strerror(status));
    conn_close(c);
    return;
  }
  uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
  c->opened_ns = uv_hrtime();
  if (c->slowloris) {
    uv_timer_init(loop, &c->slow);
    c->slow.data = c;
    uv_timer_start(&c->slow, on_slow_tick, 0, 200);
  } else {
    next_request(c);
  }
}

static void on_deadline(uv_timer_t *t)
{
  fprintf(stderr, "http-load: deadline reached, aborting\n");
  errors++;
  uv_stop(loop);
}

static int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
  long deadline_s = 300;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--port")) port = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--conns")) nconns = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--requests")) total = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--slowloris")) nslow = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--path")) path = argv[i + 1];
    else if (!strcmp(argv[i], "--deadline-s")) deadline_s = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--era") && !strcmp(argv[i + 1], "modern")) modern = 1;
    else if (!strcmp(argv[i], "--era") && !strcmp(argv[i + 1], "legacy")) modern = 0;
    else {
      fprintf(stderr, "http-load: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (!port || nconns < 1 || total < 1) {
    fprintf(stderr, "usage: http-load --port P [--conns N] [--requests N] [--slowloris K] [--era legacy|modern]\n");
    return 2;
  }
  snprintf(slow_req, sizeof slow_req,
           "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
           "Accept: application/json\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n"
           "X-Slower: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\r\n"
           "X-Slowest: ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\r\n\r\n",
           path, port);
  loop = uv_default_loop();
  llhttp_settings_init(&settings);
  settings.on_message_begin = on_message_begin;
  settings.on_header_field = on_header_field;
  settings.on_header_value = on_header_value;
  settings.on_header_value_complete = on_header_value_complete;
  settings.on_body = on_body;
  settings.on_message_complete = on_message_complete;
  lat = malloc(sizeof *lat * (size_t)total);
  int n = nconns + nslow;
  lconn *conns = calloc((size_t)n, sizeof *conns);
  struct sockaddr_in addr;
  uv_ip4_addr("127.0.0.1", port, &addr);
  t0 = uv_hrtime();
  uv_timer_init(loop, &deadline);
  uv_timer_start(&deadline, on_deadline, (uint64_t)deadline_s * 1000, 0);
  for (int i = 0; i < n; i++) {
    lconn *c = &conns[i];
    c->idx = i;
    c->slowloris = i >= nconns;
    c->step = modern ? 2 : 0;   /* the modern era has no initialize */
    llhttp_init(&c->parser, HTTP_RESPONSE, &settings);
    c->parser.data = c;
    uv_tcp_init(loop, &c->tcp);
    c->tcp.data = c;
    c->creq.data = c;
    active++;
    uv_tcp_connect(&c->creq, &c->tcp, (const struct sockaddr *)&addr, on_connect);
  }
  uv_run(loop, UV_RUN_DEFAULT);
  double secs = (double)(uv_hrtime() - t0) / 1e9;
  qsort(lat, (size_t)nlat, sizeof *lat, cmp);
  double p50 = nlat ? lat[nlat / 2] : 0, p99 = nlat ? lat[(nlat * 99) / 100] : 0;
  double slow_max = 0;
  for (int i = nconns; i < n; i++)
    if (conns[i].cut_ns) {
      double s = (double)(conns[i].cut_ns - conns[i].opened_ns) / 1e9;
      if (s > slow_max)
        slow_max = s;
    }
  printf("calls=%ld errors=%ld seconds=%.3f calls_per_s=%.0f p50_ms=%.3f p99_ms=%.3f "
         "slowloris=%d slowloris_cut=%d slowloris_cut_after_s=%.1f\n",
         done_calls, errors, secs, done_calls / secs, p50, p99, nslow, slow_cut,
         slow_max);
  for (int i = 0; i < n; i++)
    free(conns[i].body);
  free(conns);
  free(lat);
  if (errors || done_calls != total || slow_cut != nslow)
    return 1;
  return 0;
}
