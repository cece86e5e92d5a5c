/* SPDX-License-Identifier: MIT */
/* The stdio transport (probemcp/stdio.h) through its public API: framing
 * (CRLF, blank lines, a last line without newline, pipelined lines),
 * the line limit, read and write errors, argument checks. The input is
 * written to a pipe whole before serving; the output pipe is read after. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
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

int main(void)
{
  Suite *s = suite_create("stdio");
  TCase *tc = tcase_create("transport");
  tcase_add_test(tc, test_args);
  tcase_add_test(tc, test_framing);
  tcase_add_test(tc, test_long_line);
  tcase_add_test(tc, test_read_error);
  tcase_add_test(tc, test_output_closed);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
