/* SPDX-License-Identifier: MIT */
/* Fuzz target for the Streamable HTTP transport's request handling: HTTP/1.1
 * parsing (llhttp callbacks, header limits, chunked bodies, pipelining),
 * the MCP checks (Accept, Content-Type, Host/Origin, session and protocol
 * headers), JSON-RPC classification, SSE streams and Last-Event-ID resume.
 *
 * Input: byte 0 chooses the feeding (bit 7: stateless mode; bits 0-6: the
 * size of the pieces the rest is fed in, 0 = all at once). The rest is one
 * or more connections' bytes separated by "||CONN||" (next connection, this
 * one stays open) or "||DROP||" (this connection goes away first, which
 * detaches its stream). No sockets: connections are fake and their output is
 * formatted and discarded. Session ids are a counter, so inputs can name
 * session 00000000000000000000000000000001. The engine is real, with inline
 * tools only (no worker threads run handlers), so a run is deterministic. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static pmcp_server *server;
static pmcp_http *current;

static void sink(const pmcp_out *msg, void *ud)
{
  if (current)
    pmcp_http_sink(msg, current);
}

static int echo(pmcp_call *call, void *ud)
{
  const char *text = "";
  size_t len = 0;
  pmcp_arg_string(call, "text", &text, &len);
  return pmcp_result_text(call, text, len);
}

/* Progress, a log line and a request to close the stream before the
 * answer: every kind of message a call's SSE stream carries. */
static int chatty(pmcp_call *call, void *ud)
{
  pmcp_call_progress(call, 1, 2, "half");
  pmcp_call_log(call, PMCP_LOG_ERROR, "fuzz", "\"line\"");
  pmcp_call_close_stream(call);
  pmcp_call_progress(call, 2, 2, NULL);
  return pmcp_result_text(call, "done", 4);
}

static void setup(void)
{
  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  so.name = "fuzz-http";
  so.sink = sink;
  so.workers = 1;
  if (pmcp_server_new(&server, &so) != 0)
    abort();
  static const pmcp_arg_spec text[] = {
    {"text", PMCP_T_STRING, 0, "text", 0, 0, 0, 0, NULL, NULL}};
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = "echo";
  d.description = "echo";
  d.args = text;
  d.n_args = 1;
  d.handler = echo;
  pmcp_tool_def c = PMCP_TOOL_DEF_INIT;
  c.name = "chatty";
  c.description = "progress, log, close stream, answer";
  c.handler = chatty;
  if (pmcp_server_add_tool(server, &d) != 0 || pmcp_server_add_tool(server, &c) != 0)
    abort();
}

static const char *find(const char *p, const char *end, const char *marker)
{
  size_t n = strlen(marker);
  for (; p + n <= end; p++)
    if (*p == marker[0] && memcmp(p, marker, n) == 0)
      return p;
  return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (!server)
    setup();
  if (size < 1)
    return 0;
  pmcp_http_options o = PMCP_HTTP_OPTIONS_INIT;
  /* FUZZ_HTTP_TRACE=1 prints what the connections would have sent. */
  o.testing = getenv("FUZZ_HTTP_TRACE") ? 2 : 1;
  o.stateless = (data[0] & 0x80) != 0;
  o.port = 8080;
  o.max_body = 4096; /* small limits so inputs can reach them */
  o.max_header = 1024;
  o.replay_bytes = 512;
  o.max_sessions = 3;
  o.max_inflight = 4;
  char err[128];
  pmcp_http *h;
  if (pmcp_http_new(&h, &o, err, sizeof err) != 0)
    abort();
  current = h;
  phttp_testing_attach(h, server);
  size_t piece = data[0] & 0x7f;
  const char *p = (const char *)data + 1, *end = (const char *)data + size;
  while (p <= end) {
    const char *m1 = find(p, end, "||CONN||"), *m2 = find(p, end, "||DROP||");
    const char *seg_end = end;
    int drop = 0;
    if (m1 && (!m2 || m1 < m2))
      seg_end = m1;
    else if (m2)
      seg_end = m2, drop = 1;
    phttp_conn *c = phttp_conn_fake(h);
    if (!c)
      break;
    for (const char *q = p; q < seg_end && c->state != CONN_CLOSING;) {
      size_t n = (size_t)(seg_end - q);
      if (piece && n > piece)
        n = piece;
      phttp_conn_feed(c, q, n);
      phttp_drain_queue(h);
      q += n;
    }
    if (drop && c->state != CONN_CLOSING)
      phttp_conn_close(c);
    if (seg_end == end)
      break;
    p = seg_end + 8;
  }
  pmcp_server_drain(server);
  phttp_drain_queue(h);
  phttp_testing_finish(h);
  current = NULL;
  pmcp_http_free(h);
  return 0;
}
