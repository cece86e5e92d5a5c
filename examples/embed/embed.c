/* SPDX-License-Identifier: MIT */
/*
 * A minimal host embedding libprobemcp: it creates a server, registers its
 * own tool, hands JSON-RPC messages to pmcp_server_handle() and reads the
 * replies from the sink. No transport at all: this is how a program (a
 * tracking plugin, an agent) serves MCP in-process.
 *
 * Build:  cc embed.c $(pkg-config --cflags --libs libprobemcp)
 * Run:    ./embed        (prints the exchange; exits 0 when every reply is
 *                         what it should be)
 */
#include <probemcp/probemcp.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sink may be called from the engine's worker threads: keep the last
 * reply under a lock. */
typedef struct replies {
  pthread_mutex_t lock;
  char last[4096];
  int count;
} replies;

static void sink(const pmcp_out *msg, void *ud) {
  replies *r = ud;
  if (!msg->data) /* control messages carry no JSON */
    return;
  pthread_mutex_lock(&r->lock);
  size_t n = msg->len < sizeof r->last - 1 ? msg->len : sizeof r->last - 1;
  memcpy(r->last, msg->data, n);
  r->last[n] = '\0';
  r->count++;
  printf("<- %s\n", r->last);
  pthread_mutex_unlock(&r->lock);
}

/* The host's own tool: counts the words of `text`; mode `words` or
 * `characters`. */
static int count_tool(pmcp_call *call, void *ud) {
  (void)ud;
  const char *text;
  size_t len;
  int rc = pmcp_arg_string(call, "text", &text, &len);
  if (rc)
    return rc;
  long n = 0;
  if (strcmp(pmcp_call_mode(call), "characters") == 0) {
    n = (long)len;
  } else {
    int in_word = 0;
    for (size_t i = 0; i < len; i++) {
      int space = text[i] == ' ' || text[i] == '\t' || text[i] == '\n';
      if (!space && !in_word)
        n++;
      in_word = !space;
    }
  }
  char out[64];
  int k = snprintf(out, sizeof out, "{\"count\":%ld}", n);
  if ((rc = pmcp_result_text(call, out, (size_t)k)))
    return rc;
  return pmcp_result_structured(call, out, (size_t)k);
}

/* Sends one message and checks that the reply contains @p expect. */
static int exchange(pmcp_server *s, replies *r, const char *msg, const char *expect) {
  pthread_mutex_lock(&r->lock);
  int before = r->count;
  r->last[0] = '\0';
  pthread_mutex_unlock(&r->lock);
  printf("-> %s\n", msg);
  int rc = pmcp_server_handle(s, NULL, msg, strlen(msg));
  if (rc) {
    fprintf(stderr, "embed: pmcp_server_handle: %s\n", pmcp_strerror(rc));
    return 1;
  }
  pmcp_server_drain(s);
  pthread_mutex_lock(&r->lock);
  int ok = expect == NULL ? r->count == before
                          : (r->count > before && strstr(r->last, expect) != NULL);
  pthread_mutex_unlock(&r->lock);
  if (!ok)
    fprintf(stderr, "embed: expected %s%s\n", expect ? "a reply containing " : "no reply",
            expect ? expect : "");
  return ok ? 0 : 1;
}

int main(void) {
  replies r = {.count = 0};
  pthread_mutex_init(&r.lock, NULL);

  pmcp_server_options opts = PMCP_SERVER_OPTIONS_INIT;
  opts.name = "embed-example";
  opts.sink = sink;
  opts.sink_ud = &r;
  pmcp_server *s = NULL;
  int rc = pmcp_server_new(&s, &opts);
  if (rc) {
    fprintf(stderr, "embed: pmcp_server_new: %s\n", pmcp_strerror(rc));
    return 1;
  }

  static const pmcp_arg_spec text_arg[] = {
      {"text", PMCP_T_STRING, 1, "The text to count in", 0, 0, 0, 0, NULL, NULL}};
  static const pmcp_mode_spec modes[] = {
      {"words", "Count words", text_arg, 1},
      {"characters", "Count bytes", text_arg, 1}};
  pmcp_tool_def def = PMCP_TOOL_DEF_INIT;
  def.name = "count";
  def.description = "Counts the words or characters of a text";
  def.modes = modes;
  def.n_modes = 2;
  def.read_only = PMCP_HINT_TRUE;
  def.handler = count_tool;
  rc = pmcp_server_add_tool(s, &def);
  if (rc) {
    fprintf(stderr, "embed: pmcp_server_add_tool: %s: %s\n", pmcp_strerror(rc),
            pmcp_server_errmsg(s));
    pmcp_server_free(s);
    return 1;
  }

  int fails = 0;
  fails += exchange(s, &r,
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                    "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                    "\"clientInfo\":{\"name\":\"embed\",\"version\":\"1\"}}}",
                    "\"protocolVersion\":\"2025-06-18\"");
  fails += exchange(s, &r, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                    NULL);
  fails += exchange(s, &r, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
                    "\"name\":\"count\"");
  fails += exchange(s, &r,
                    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
                    "{\"name\":\"count\",\"arguments\":{\"mode\":\"words\","
                    "\"text\":\"the quick brown fox\"}}}",
                    "\"structuredContent\":{\"count\":4}");
  /* The engine validates before the handler runs: no mode is an error. */
  fails += exchange(s, &r,
                    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
                    "{\"name\":\"count\",\"arguments\":{\"text\":\"x\"}}}",
                    "mode");
  pmcp_server_free(s);
  pthread_mutex_destroy(&r.lock);
  printf("%d passed, %d failed\n", 5 - fails, fails);
  return fails ? 1 : 0;
}
