/* SPDX-License-Identifier: MIT */
/* The stdio transport (probemcp/stdio.h) through its public API: framing
 * (CRLF, blank lines, a last line without newline, pipelined lines),
 * the line limit, read and write errors, argument checks, and the pause
 * at max_pending. The input is written to a pipe whole before serving and
 * the output pipe read after, except where a client writes ahead while
 * the server works (threads feed and drain the pipes). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <probemcp/probemcp.h>
#include <probemcp/stdio.h>

#define INIT_LINE                                                                   \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"             \
  "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"                         \
  "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"

typedef struct logged {
  int warnings;
  char last[512];
} logged;

static void record_log(pmcp_log_level level, const char *msg, void *ud)
{
  logged *l = ud;
  if (level == PMCP_LOG_WARNING)
    l->warnings++;
  snprintf(l->last, sizeof l->last, "%s", msg);
}

/* Serves @p input (whole, then end of input) with @p opts; returns what
 * pmcp_stdio_serve() returned and the output in @p out (malloc'd). */
static int serve_text(const char *input, size_t len, const pmcp_stdio_options *opts, char **out)
{
  int in[2], outp[2];
  ck_assert_int_eq(pipe(in), 0);
  ck_assert_int_eq(pipe(outp), 0);
  ck_assert_int_eq(write(in[1], input, len), (ssize_t)len);
  close(in[1]);
  pmcp_stdio *io = NULL;
  ck_assert_int_eq(pmcp_stdio_new(&io, in[0], outp[1], opts), 0);
  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  so.name = "stdio-test";
  so.sink = pmcp_stdio_sink;
  so.sink_ud = io;
  pmcp_server *srv = NULL;
  ck_assert_int_eq(pmcp_server_new(&srv, &so), 0);
  int rc = pmcp_stdio_serve(io, srv);
  ck_assert_int_eq(pmcp_stdio_serve(io, srv), PMCP_EMISUSE); /* once only */
  pmcp_server_free(srv);
  pmcp_stdio_free(io);
  close(outp[1]);
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  ssize_t r;
  while ((r = read(outp[0], buf + n, cap - n)) > 0)
    n += (size_t)r;
  buf[n] = '\0';
  close(in[0]);
  close(outp[0]);
  *out = buf;
  return rc;
}

/* The number of lines of @p s, each checked to end with a newline. */
static int count_lines(const char *s)
{
  int n = 0;
  for (; *s; s++)
    n += *s == '\n';
  return n;
}

START_TEST(test_args)
{
  pmcp_stdio *io = (pmcp_stdio *)&io;
  ck_assert_int_eq(pmcp_stdio_new(NULL, 0, 1, NULL), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_stdio_new(&io, -1, 1, NULL), PMCP_EINVAL);
  ck_assert_ptr_null(io);
  ck_assert_int_eq(pmcp_stdio_new(&io, 0, -1, NULL), PMCP_EINVAL);
  pmcp_stdio_options o = PMCP_STDIO_OPTIONS_INIT;
  o.version = 0;
  ck_assert_int_eq(pmcp_stdio_new(&io, 0, 1, &o), PMCP_EINVAL);
  o.version = PMCP_STDIO_OPTIONS_VERSION + 1;
  ck_assert_int_eq(pmcp_stdio_new(&io, 0, 1, &o), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_stdio_new(&io, 0, 1, NULL), 0);
  ck_assert_ptr_nonnull(io);
  ck_assert_int_eq(pmcp_stdio_serve(io, NULL), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_stdio_serve(NULL, NULL), PMCP_EINVAL);
  pmcp_stdio_free(io);
  pmcp_stdio_free(NULL);
}
END_TEST

START_TEST(test_framing)
{
  /* CRLF, blank and whitespace-only lines (no answer), pipelined pings and
   * a last line without its newline: one answer per message, in order. */
  const char in[] = INIT_LINE "\r\n"
                    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                    "\n   \n\t\r\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\r\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"ping\"}";
  char *out;
  ck_assert_int_eq(serve_text(in, sizeof in - 1, NULL, &out), 0);
  ck_assert_int_eq(count_lines(out), 4);
  const char *a = strstr(out, "\"id\":1,");
  const char *b = strstr(out, "\"id\":2,");
  const char *c = strstr(out, "\"id\":3,");
  const char *d = strstr(out, "\"id\":\"last\"");
  ck_assert(a && b && c && d && a < b && b < c && c < d);
  ck_assert_ptr_nonnull(strstr(out, "\"protocolVersion\":\"2025-11-25\""));
  ck_assert_ptr_null(strstr(out, "\"error\""));
  free(out);
}
END_TEST

START_TEST(test_long_line)
{
  /* Limit 64: a line of exactly 64 bytes (CR not counted) is served, one of
   * 65 is refused with a null id, the log hears of it, reading goes on; a
   * last line over the limit without a newline is refused too. */
  char in[4096];
  const char *head = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"p\":\"";
  const char *tail = "\"}}";
  char edge[128];
  size_t pad = 64 - strlen(head) - strlen(tail);
  snprintf(edge, sizeof edge, "%s%.*s%s", head, (int)pad, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", tail);
  ck_assert_uint_eq(strlen(edge), 64);
  int n = snprintf(in, sizeof in,
                   "%s\r\n"           /* served */
                   "%.*s x%s\n"       /* 65 bytes: refused */
                   "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\n"
                   "%s%s",             /* over the limit, no newline */
                   edge, (int)(64 - strlen(tail) - 1), edge, tail, head,
                   "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
  logged l = {0};
  pmcp_stdio_options o = PMCP_STDIO_OPTIONS_INIT;
  o.max_line = 64;
  o.log = record_log;
  o.log_ud = &l;
  char *out;
  ck_assert_int_eq(serve_text(in, (size_t)n, &o, &out), 0);
  ck_assert_int_eq(count_lines(out), 4);
  ck_assert_ptr_nonnull(strstr(out, "\"id\":7,"));
  ck_assert_ptr_nonnull(strstr(out, "\"id\":8,"));
  const char *e1 = strstr(out, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600");
  ck_assert_ptr_nonnull(e1);
  ck_assert_ptr_nonnull(strstr(e1 + 1, "\"id\":null,\"error\":{\"code\":-32600"));
  ck_assert(strstr(out, "\"id\":7,") < e1 && e1 < strstr(out, "\"id\":8,"));
  ck_assert_ptr_nonnull(strstr(out, "over 64 bytes"));
  ck_assert_int_eq(l.warnings, 2);
  ck_assert_ptr_nonnull(strstr(l.last, "skipped an input line of over 64 bytes"));
  free(out);
}
END_TEST

START_TEST(test_read_error)
{
  /* read() on a directory fails (EISDIR): PMCP_EIO, said to the log. */
  int dir = open("/", O_RDONLY);
  ck_assert_int_ge(dir, 0);
  int outp[2];
  ck_assert_int_eq(pipe(outp), 0);
  logged l = {0};
  pmcp_stdio_options o = PMCP_STDIO_OPTIONS_INIT;
  o.log = record_log;
  o.log_ud = &l;
  pmcp_stdio *io = NULL;
  ck_assert_int_eq(pmcp_stdio_new(&io, dir, outp[1], &o), 0);
  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  so.name = "stdio-test";
  so.sink = pmcp_stdio_sink;
  so.sink_ud = io;
  pmcp_server *srv = NULL;
  ck_assert_int_eq(pmcp_server_new(&srv, &so), 0);
  ck_assert_int_eq(pmcp_stdio_serve(io, srv), PMCP_EIO);
  ck_assert_ptr_nonnull(strstr(l.last, "reading the input"));
  pmcp_server_free(srv);
  pmcp_stdio_free(io);
  close(dir);
  close(outp[0]);
  close(outp[1]);
}
END_TEST

START_TEST(test_output_closed)
{
  /* The client closed our output: serving ends (0) though input stays
   * open, instead of reading forever. */
  signal(SIGPIPE, SIG_IGN);
  int in[2], outp[2];
  ck_assert_int_eq(pipe(in), 0);
  ck_assert_int_eq(pipe(outp), 0);
  close(outp[0]);
  const char line[] = INIT_LINE "\n";
  ck_assert_int_eq(write(in[1], line, sizeof line - 1), (ssize_t)(sizeof line - 1));
  pmcp_stdio *io = NULL;
  ck_assert_int_eq(pmcp_stdio_new(&io, in[0], outp[1], NULL), 0);
  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  so.name = "stdio-test";
  so.sink = pmcp_stdio_sink;
  so.sink_ud = io;
  pmcp_server *srv = NULL;
  ck_assert_int_eq(pmcp_server_new(&srv, &so), 0);
  ck_assert_int_eq(pmcp_stdio_serve(io, srv), 0);
  pmcp_server_free(srv);
  pmcp_stdio_free(io);
  close(in[0]);
  close(in[1]);
  close(outp[1]);
}
END_TEST

/* ---- reading pauses at max_pending ------------------------------------ */

/* A blocking tool that notes the most requests the server held in
 * progress while it ran, and waits while the gate is shut. */
typedef struct held_state {
  pmcp_server *srv;
  pthread_mutex_t mu;
  pthread_cond_t cond;
  int open;
  size_t most, calls;
} held_state;

static held_state held = {NULL, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1, 0, 0};

static int held_tool(pmcp_call *call, void *ud)
{
  (void)ud;
  size_t now = pmcp_server_in_progress(held.srv);
  pthread_mutex_lock(&held.mu);
  if (now > held.most)
    held.most = now;
  held.calls++;
  while (!held.open)
    pthread_cond_wait(&held.cond, &held.mu);
  pthread_mutex_unlock(&held.mu);
  usleep(100);
  return pmcp_result_text(call, "ok", 2);
}

typedef struct pipe_job {
  int fd;
  size_t n;   /* lines to write, or lines read */
  size_t pad; /* spaces inside each request */
} pipe_job;

/* Writes initialize and n tools/call lines of about pad bytes each. */
static void *feed(void *arg)
{
  pipe_job *j = arg;
  size_t cap = j->pad + 256;
  char *line = malloc(cap);
  int n = snprintf(line, cap, "%s\n", INIT_LINE);
  ck_assert_int_eq(write(j->fd, line, (size_t)n), n);
  for (size_t i = 0; i < j->n; i++) {
    n = snprintf(line, cap, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"held\",\"arguments\":{}}%*s}\n", i + 2,
                 (int)j->pad, "");
    for (ssize_t off = 0; off < n;) {
      ssize_t w = write(j->fd, line + off, (size_t)(n - off));
      ck_assert_int_gt(w, 0);
      off += w;
    }
  }
  free(line);
  close(j->fd);
  return NULL;
}

/* feed(), then the gate opens: a server that kept reading shut while its
 * calls answered nothing would never let the writer get there. */
static void *feed_then_open(void *arg)
{
  feed(arg);
  pthread_mutex_lock(&held.mu);
  held.open = 1;
  pthread_cond_broadcast(&held.cond);
  pthread_mutex_unlock(&held.mu);
  return NULL;
}

/* Counts the lines of the output until its end. */
static void *drain_lines(void *arg)
{
  pipe_job *j = arg;
  char buf[1 << 14];
  ssize_t r;
  j->n = 0;
  while ((r = read(j->fd, buf, sizeof buf)) > 0)
    for (ssize_t i = 0; i < r; i++)
      j->n += buf[i] == '\n';
  return NULL;
}

/* A transport on two new pipes (@p in, @p outp) pausing at @p max_pending,
 * around a server of four workers with one blocking tool @p name. */
static pmcp_server *serve_pipes(int in[2], int outp[2], size_t max_pending, const char *name,
                                pmcp_tool_fn fn, pmcp_stdio **io)
{
  signal(SIGPIPE, SIG_IGN);
  ck_assert_int_eq(pipe(in), 0);
  ck_assert_int_eq(pipe(outp), 0);
  pmcp_stdio_options o = PMCP_STDIO_OPTIONS_INIT;
  o.max_pending = max_pending;
  *io = NULL;
  ck_assert_int_eq(pmcp_stdio_new(io, in[0], outp[1], &o), 0);
  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  so.name = "stdio-test";
  so.sink = pmcp_stdio_sink;
  so.sink_ud = *io;
  so.workers = 4;
  pmcp_server *srv = NULL;
  ck_assert_int_eq(pmcp_server_new(&srv, &so), 0);
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = name;
  d.handler = fn;
  d.flags = PMCP_TOOL_BLOCKING;
  ck_assert_int_eq(pmcp_server_add_tool(srv, &d), 0);
  return srv;
}

/* Serves @p calls requests of about @p pad bytes written ahead by one
 * thread while another reads the answers; the gate starts shut when
 * @p shut, and opens once the writer is done. Returns the lines read. */
static size_t serve_ahead(size_t calls, size_t pad, size_t max_pending, int shut)
{
  int in[2], outp[2];
  pmcp_stdio *io;
  pmcp_server *srv = serve_pipes(in, outp, max_pending, "held", held_tool, &io);
  held.srv = srv;
  held.most = held.calls = 0;
  held.open = !shut;
  pipe_job w = {in[1], calls, pad}, r = {outp[0], 0, 0};
  pthread_t tw, tr;
  ck_assert_int_eq(pthread_create(&tw, NULL, shut ? feed_then_open : feed, &w), 0);
  ck_assert_int_eq(pthread_create(&tr, NULL, drain_lines, &r), 0);
  ck_assert_int_eq(pmcp_stdio_serve(io, srv), 0);
  pthread_join(tw, NULL);
  pmcp_server_free(srv);
  pmcp_stdio_free(io);
  close(outp[1]);
  pthread_join(tr, NULL);
  close(in[0]);
  close(outp[0]);
  held.srv = NULL;
  return r.n;
}

START_TEST(test_pending_bounded)
{
  /* 2,000 calls of 4 KiB written ahead (8 MB): the server holds at most
   * max_pending of them, plus one read()'s worth (16 lines) if the
   * calls ever stall for a moment on a loaded machine; without the pause
   * it reads the whole backlog while four workers chew on it. */
  size_t lines = serve_ahead(2000, 4096, 16, 0);
  ck_assert_uint_eq(lines, 2001); /* initialize and every call answered */
  ck_assert_uint_eq(held.calls, 2000);
  ck_assert_uint_le(held.most, 16 + 16);
}
END_TEST

START_TEST(test_pending_stalled)
{
  /* Every call waits until the client has written all its input (96 KiB,
   * more than the pipe holds): reading must let lines through while the
   * calls answer nothing, or client and server wait for each other. */
  size_t lines = serve_ahead(24, 4096, 4, 1);
  ck_assert_uint_eq(lines, 25);
  ck_assert_uint_eq(held.calls, 24);
}
END_TEST

/* ---- a call waiting for its client's reply ---------------------------- */

/* Asks the client for a ping and answers "ok" with its reply. */
static int asking_tool(pmcp_call *call, void *ud)
{
  (void)ud;
  pmcp_buf out = PMCP_BUF_INIT;
  int rc = pmcp_call_request(call, "ping", "{}", 1000, &out);
  pmcp_buf_dispose(&out);
  return rc ? pmcp_result_errorf(call, "no reply (%d)", rc) : pmcp_result_text(call, "ok", 2);
}

typedef struct client {
  int in_fd, out_fd;
  size_t calls, ok, answers;
  pthread_mutex_t mu; /* one writer of the input at a time */
} client;

static void client_write(client *c, const char *line, size_t n)
{
  pthread_mutex_lock(&c->mu);
  for (size_t off = 0; off < n;) {
    ssize_t w = write(c->in_fd, line + off, n - off);
    ck_assert_int_gt(w, 0);
    off += (size_t)w;
  }
  pthread_mutex_unlock(&c->mu);
}

/* Writes initialize and the calls (4 KiB each) without reading. */
static void *client_feed(void *arg)
{
  client *c = arg;
  char *line = malloc(4096 + 256);
  int n = snprintf(line, 4096 + 256, "%s\n", INIT_LINE);
  client_write(c, line, (size_t)n);
  for (size_t i = 0; i < c->calls; i++) {
    n = snprintf(line, 4096 + 256, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"asks\",\"arguments\":{}}%*s}\n", i + 2, 4096, "");
    client_write(c, line, (size_t)n);
  }
  free(line);
  return NULL;
}

/* Reads the output: answers the server's pings, counts the answers, and
 * ends the input once every call has answered. */
static void *client_read(void *arg)
{
  client *c = arg;
  FILE *f = fdopen(c->out_fd, "r");
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    const char *id = strstr(line, "\"id\":");
    if (strstr(line, "\"method\":\"ping\"") && id) {
      char reply[96];
      int n = snprintf(reply, sizeof reply, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{}}\n",
                       strtol(id + 5, NULL, 10));
      client_write(c, reply, (size_t)n);
      continue;
    }
    c->ok += strstr(line, "\"text\":\"ok\"") != NULL;
    if (++c->answers == c->calls + 1) {
      pthread_mutex_lock(&c->mu);
      close(c->in_fd);
      pthread_mutex_unlock(&c->mu);
    }
  }
  free(line);
  fclose(f);
  return NULL;
}

START_TEST(test_pending_client_reply)
{
  /* Four workers each wait for a ping's reply while the client's pings
   * answers sit behind 60 more calls of 4 KiB: reading must go on at once
   * (paced at a line per 100 ms, the replies would come after the calls'
   * 1 s timeout). */
  int in[2], outp[2];
  pmcp_stdio *io;
  pmcp_server *srv = serve_pipes(in, outp, 4, "asks", asking_tool, &io);
  client c = {in[1], outp[0], 64, 0, 0, PTHREAD_MUTEX_INITIALIZER};
  pthread_t tw, tr;
  ck_assert_int_eq(pthread_create(&tw, NULL, client_feed, &c), 0);
  ck_assert_int_eq(pthread_create(&tr, NULL, client_read, &c), 0);
  ck_assert_int_eq(pmcp_stdio_serve(io, srv), 0);
  pthread_join(tw, NULL);
  pmcp_server_free(srv);
  pmcp_stdio_free(io);
  close(outp[1]);
  pthread_join(tr, NULL);
  close(in[0]);
  ck_assert_uint_eq(c.answers, 65);
  ck_assert_uint_eq(c.ok, 64);
}
END_TEST

START_TEST(test_pending_args)
{
  ck_assert_int_eq(pmcp_server_wait_room(NULL, 1, 0), PMCP_EINVAL);
  ck_assert_uint_eq(pmcp_server_in_progress(NULL), 0);
  pmcp_stdio *io = NULL;
  ck_assert_int_eq(pmcp_stdio_new(&io, 0, 1, NULL), 0);
  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  so.name = "stdio-test";
  so.sink = pmcp_stdio_sink;
  so.sink_ud = io;
  pmcp_server *srv = NULL;
  ck_assert_int_eq(pmcp_server_new(&srv, &so), 0);
  ck_assert_int_eq(pmcp_server_wait_room(srv, 0, 0), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_server_wait_room(srv, 1, 0), 0); /* nothing in progress */
  ck_assert_uint_eq(pmcp_server_in_progress(srv), 0);
  pmcp_server_free(srv);
  pmcp_stdio_free(io);
  /* A version 1 options struct is read without its max_pending. */
  struct {
    unsigned version;
    size_t max_line;
    pmcp_log_fn log;
    void *log_ud;
  } v1 = {1, 0, NULL, NULL};
  io = NULL;
  ck_assert_int_eq(pmcp_stdio_new(&io, 0, 1, (const pmcp_stdio_options *)(void *)&v1), 0);
  pmcp_stdio_free(io);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("stdio");
  TCase *tc = tcase_create("transport");
  tcase_add_test(tc, test_args);
  tcase_add_test(tc, test_framing);
  tcase_add_test(tc, test_long_line);
  tcase_add_test(tc, test_read_error);
  tcase_add_test(tc, test_output_closed);
  tcase_add_test(tc, test_pending_args);
  tcase_add_test(tc, test_pending_bounded);
  tcase_add_test(tc, test_pending_stalled);
  tcase_add_test(tc, test_pending_client_reply);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
