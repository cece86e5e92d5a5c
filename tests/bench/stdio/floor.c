/* SPDX-License-Identifier: MIT */
/* The transport floor of the stdio bench: the least a server can spend per
 * call on this machine's pipes. It reads lines and answers each request
 * with a canned reply built by string scanning, without parsing JSON,
 * validating or dispatching anything, in one write() per read() like
 * probe-mcp-stdio. What remains of its CPU time per call is the kernel's
 * part (read, write, sleeping and being woken), which every stdio server
 * pays; the bench prints it so the ratio against the SDK server can be read
 * against the best ratio any server could reach in the same run.
 * Not an MCP server: it knows just enough for the bench's client (the
 * initialize reply and the echo tool's text). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char in[1 << 20];
static char out[1 << 16];
static size_t out_len;

static void flush_out(void)
{
  size_t off = 0;
  while (off < out_len) {
    ssize_t w = write(STDOUT_FILENO, out + off, out_len - off);
    if (w <= 0)
      exit(0);
    off += (size_t)w;
  }
  out_len = 0;
}

/* Answers one line (NUL-terminated in place). */
static void answer(char *line)
{
  char *id = strstr(line, "\"id\":");
  if (!id)
    return; /* a notification */
  long n = strtol(id + 5, NULL, 10);
  if (out_len > sizeof out - 512)
    flush_out();
  char *text = strstr(line, "\"text\":\"");
  if (strstr(line, "\"initialize\"")) {
    out_len += (size_t)snprintf(out + out_len, sizeof out - out_len,
                                "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"protocolVersion\":"
                                "\"2025-06-18\",\"capabilities\":{\"tools\":{}},\"serverInfo\":"
                                "{\"name\":\"floor\",\"version\":\"1\"}}}\n",
                                n);
  } else if (text) {
    text += 8;
    char *end = strchr(text, '"');
    int len = end && end - text < 200 ? (int)(end - text) : 0;
    out_len += (size_t)snprintf(out + out_len, sizeof out - out_len,
                                "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"content\":"
                                "[{\"type\":\"text\",\"text\":\"%.*s\"}]}}\n",
                                n, len, text);
  } else {
    out_len += (size_t)snprintf(out + out_len, sizeof out - out_len,
                                "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{}}\n", n);
  }
}

int main(void)
{
  size_t len = 0;
  for (;;) {
    if (len == sizeof in)
      return 1; /* the bench's lines are short */
    ssize_t r = read(STDIN_FILENO, in + len, sizeof in - len);
    if (r <= 0)
      return 0;
    len += (size_t)r;
    size_t start = 0;
    char *nl;
    while ((nl = memchr(in + start, '\n', len - start)) != NULL) {
      *nl = '\0';
      answer(in + start);
      start = (size_t)(nl - in) + 1;
    }
    flush_out();
    memmove(in, in + start, len - start);
    len -= start;
  }
}
