/* SPDX-License-Identifier: MIT */
/* A pmcp_server with a few tools that exercise the HTTP transport (fast
 * inline answers, blocking calls with progress and logging, a server to
 * client sampling request, a call that closes its own SSE stream), served
 * by pmcp_http_run(). Used by tests/http (TypeScript SDK client, load test)
 * and tests/bench/http. Not an example of anything but the transport. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <probemcp/probemcp.h>

#include <probemcp/http.h>

static void sleep_ms(int ms)
{
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* echo {text}: answered inline, the fast path of the load test and bench. */
static int echo(pmcp_call *call, void *ud)
{
  const char *text;
  size_t len;
  if (pmcp_arg_string(call, "text", &text, &len) != 0)
    return pmcp_result_errorf(call, "text is required");
  return pmcp_result_text(call, text, len);
}

/* slow {ms, steps}: blocking; reports progress and logs each step. */
static int slow(pmcp_call *call, void *ud)
{
  int64_t ms = 100, steps = 4;
  pmcp_arg_int(call, "ms", &ms);
  pmcp_arg_int(call, "steps", &steps);
  if (steps < 1)
    steps = 1;
  for (int64_t i = 0; i < steps; i++) {
    if (pmcp_call_cancelled(call))
      return PMCP_ECANCELLED;
    sleep_ms((int)(ms / steps));
    pmcp_call_progress(call, (double)(i + 1), (double)steps, "working");
    pmcp_call_log(call, PMCP_LOG_INFO, "slow", "\"step done\"");
  }
  char msg[64];
  snprintf(msg, sizeof msg, "slept %lld ms", (long long)ms);
  return pmcp_result_text(call, msg, strlen(msg));
}

/* stall {ms}: sleeps WITHOUT being declared blocking, as a careless tool
 * doing I/O would; the transport must still keep the loop free. */
static int stall(pmcp_call *call, void *ud)
{
  int64_t ms = 500;
  pmcp_arg_int(call, "ms", &ms);
  sleep_ms((int)ms);
  return pmcp_result_text(call, "stalled", 7);
}

/* sample {prompt}: asks the client for a completion and returns its text. */
static int sample(pmcp_call *call, void *ud)
{
  const char *prompt;
  if (pmcp_arg_string(call, "prompt", &prompt, NULL) != 0)
    return pmcp_result_errorf(call, "prompt is required");
  pmcp_buf out = PMCP_BUF_INIT;
  /* prompt is echoed as a JSON string; keep it simple and safe. */
  for (const char *p = prompt; *p; p++)
    if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
      return pmcp_result_errorf(call, "prompt must be plain text");
  char buf[1024];
  snprintf(buf, sizeof buf,
           "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\","
           "\"text\":\"%s\"}}],\"maxTokens\":50}", prompt);
  int rc = pmcp_call_request(call, "sampling/createMessage", buf, 10000, &out);
  if (rc != 0) {
    pmcp_buf_dispose(&out);
    return pmcp_result_errorf(call, "sampling failed: %s", pmcp_strerror(rc));
  }
  rc = pmcp_result_text(call, out.ptr, out.len);
  pmcp_buf_dispose(&out);
  return rc;
}

/* reconnect: closes its SSE stream, then answers after a pause; the client
 * gets the answer by resuming with Last-Event-ID. */
static int reconnect(pmcp_call *call, void *ud)
{
  pmcp_call_close_stream(call);
  sleep_ms(200);
  static const char msg[] = "answered after the stream was closed";
  return pmcp_result_text(call, msg, sizeof msg - 1);
}

static int setup(pmcp_server *srv, void *ud)
{
  static const pmcp_arg_spec echo_args[] = {
    {"text", PMCP_T_STRING, 1, "text to return", 0, 0, 0, 0, NULL, NULL}};
  static const pmcp_arg_spec slow_args[] = {
    {"ms", PMCP_T_INTEGER, 0, "total time", 1, 1, 0, 60000, NULL, NULL},
    {"steps", PMCP_T_INTEGER, 0, "progress steps", 1, 1, 1, 100, NULL, NULL}};
  static const pmcp_arg_spec sample_args[] = {
    {"prompt", PMCP_T_STRING, 1, "what to ask", 0, 0, 0, 0, NULL, NULL}};
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = "echo";
  d.description = "Returns its text argument";
  d.args = echo_args;
  d.n_args = 1;
  d.read_only = PMCP_HINT_TRUE;
  d.handler = echo;
  int rc = pmcp_server_add_tool(srv, &d);
  pmcp_tool_def s = PMCP_TOOL_DEF_INIT;
  s.name = "slow";
  s.description = "Sleeps, reporting progress and logging";
  s.args = slow_args;
  s.n_args = 2;
  s.flags = PMCP_TOOL_BLOCKING;
  s.handler = slow;
  rc = rc ? rc : pmcp_server_add_tool(srv, &s);
  pmcp_tool_def m = PMCP_TOOL_DEF_INIT;
  m.name = "sample";
  m.description = "Asks the client to sample a message";
  m.args = sample_args;
  m.n_args = 1;
  m.flags = PMCP_TOOL_BLOCKING;
  m.handler = sample;
  rc = rc ? rc : pmcp_server_add_tool(srv, &m);
  pmcp_tool_def st = PMCP_TOOL_DEF_INIT;
  st.name = "stall";
  st.description = "Sleeps without being declared blocking";
  st.args = slow_args;
  st.n_args = 1;
  st.handler = stall;
  rc = rc ? rc : pmcp_server_add_tool(srv, &st);
  pmcp_tool_def r = PMCP_TOOL_DEF_INIT;
  r.name = "reconnect";
  r.description = "Closes its SSE stream and answers later";
  r.flags = PMCP_TOOL_BLOCKING;
  r.handler = reconnect;
  rc = rc ? rc : pmcp_server_add_tool(srv, &r);
  return rc;
}

int main(int argc, char **argv)
{
  pmcp_http_options o = PMCP_HTTP_OPTIONS_INIT;
  char host[128] = "127.0.0.1";
  int port = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
    char err[200];
    if (!strcmp(a, "--listen")) {
      if (pmcp_http_parse_listen(v, host, sizeof host, &port, err, sizeof err)) {
        fprintf(stderr, "http-testserver: %s\n", err);
        return 2;
      }
      i++;
    } else if (!strcmp(a, "--stateless")) {
      o.stateless = 1;
    } else if (!strcmp(a, "--header-timeout-ms")) {
      o.header_timeout_ms = (unsigned)atoi(v), i++;
    } else if (!strcmp(a, "--idle-timeout-ms")) {
      o.idle_timeout_ms = (unsigned)atoi(v), i++;
    } else if (!strcmp(a, "--max-connections")) {
      o.max_connections = (unsigned)atoi(v), i++;
    } else if (!strcmp(a, "--max-connections-per-client")) {
      o.max_connections_per_client = (unsigned)atoi(v), i++;
    } else if (!strcmp(a, "--body-timeout-ms")) {
      o.body_timeout_ms = (unsigned)atoi(v), i++;
    } else if (!strcmp(a, "--session-idle-ms")) {
      o.session_idle_ms = (unsigned)atoi(v), i++;
    } else if (!strcmp(a, "--max-sessions")) {
      o.max_sessions = (unsigned)atoi(v), i++;
    } else if (!strcmp(a, "--handler-threads")) {
      o.handler_threads = (unsigned)atoi(v);
      o.handlers_inline = o.handler_threads == 0;
      i++;
    } else if (!strcmp(a, "--shutdown-timeout-ms")) {
      o.shutdown_timeout_ms = (unsigned)atoi(v), i++;
    } else {
      fprintf(stderr, "http-testserver: unknown option %s\n", a);
      return 2;
    }
  }
  o.host = host;
  o.port = port;
  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  so.name = "http-testserver";
  so.server_version = "1.0.0";
  return pmcp_http_run(&o, &so, setup, NULL);
}
