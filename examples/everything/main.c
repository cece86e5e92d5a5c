/*
 * probe-mcp-everything: the conformance fixtures (fixtures.c) served over
 * stdio (newline-delimited JSON-RPC) or, where the HTTP transport is built,
 * over Streamable HTTP.
 *
 *   probe-mcp-everything --stdio
 *   probe-mcp-everything --http HOST:PORT
 *
 * Nothing but protocol reaches stdout; diagnostics go to stderr.
 */
#include "fixtures.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#ifdef EVERYTHING_HAVE_HTTP
#include "http.h"
#endif

static const char USAGE[] =
    "usage: probe-mcp-everything --stdio | --http HOST:PORT\n"
    "  --stdio           serve newline-delimited JSON-RPC on stdin/stdout\n"
    "  --http HOST:PORT  serve Streamable HTTP at /mcp\n"
    "  --log-level L     least level of diagnostics on stderr (debug, info,\n"
    "                    notice, warning, error, ...; default warning)\n";

typedef struct out_ctx {
  pthread_mutex_t lock;
  int broken; /* stdout closed: stop reading */
  /* Replies made on the reading thread while it works through one read's
   * worth of lines; written with one write() when the chunk is done. */
  char *pend;
  size_t pend_len, pend_cap;
} out_ctx;

/* Set on the reading thread while it hands a chunk's lines to the engine:
 * inline replies are then batched instead of costing a write() each. */
static _Thread_local int batching;

/* Writes @p iov fully unless stdout is gone. Called with o->lock held. */
static void write_all(out_ctx *o, struct iovec *iov, int n_iov) {
  while (!o->broken && n_iov > 0) {
    ssize_t n = writev(STDOUT_FILENO, iov, n_iov);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      o->broken = 1;
      return;
    }
    /* Advance the iovecs past what was written. */
    while (n_iov > 0 && (size_t)n >= iov->iov_len) {
      n -= (ssize_t)iov->iov_len;
      iov++;
      n_iov--;
    }
    if (n_iov > 0) {
      iov->iov_base = (char *)iov->iov_base + n;
      iov->iov_len -= (size_t)n;
    }
  }
}

/* Called with o->lock held. */
static void flush_pending(out_ctx *o) {
  if (o->pend_len == 0)
    return;
  struct iovec iov = {o->pend, o->pend_len};
  write_all(o, &iov, 1);
  o->pend_len = 0;
  /* Do not keep a huge buffer around after one huge reply. */
  if (o->pend_cap > (1u << 20)) {
    free(o->pend);
    o->pend = NULL;
    o->pend_cap = 0;
  }
}

/* Every message the engine sends: one line on stdout. Writes are serialised
 * because replies come from the reading thread and from workers. */
static void stdout_sink(const pmcp_out *msg, void *ud) {
  out_ctx *o = ud;
  /* Control messages (stream ends, SSE stream closes) concern HTTP only. */
  if (msg->kind == PMCP_OUT_END || msg->kind == PMCP_OUT_CLOSE_STREAM ||
      !msg->data)
    return;
  pthread_mutex_lock(&o->lock);
  if (batching) {
    size_t need = o->pend_len + msg->len + 1;
    if (need > o->pend_cap) {
      size_t cap = o->pend_cap ? o->pend_cap : 1 << 16;
      while (cap < need)
        cap *= 2;
      char *p = realloc(o->pend, cap);
      if (!p) {
        /* No room to batch: write what is pending and this one now. */
        flush_pending(o);
        goto direct;
      }
      o->pend = p;
      o->pend_cap = cap;
    }
    memcpy(o->pend + o->pend_len, msg->data, msg->len);
    o->pend[o->pend_len + msg->len] = '\n';
    o->pend_len = need;
    pthread_mutex_unlock(&o->lock);
    return;
  }
direct:;
  struct iovec iov[2] = {{(void *)msg->data, msg->len}, {(void *)"\n", 1}};
  write_all(o, iov, 2);
  pthread_mutex_unlock(&o->lock);
}

static const char *const LEVELS[] = {"debug", "info", "notice", "warning",
                                     "error", "critical", "alert", "emergency"};

static void stderr_log(pmcp_log_level level, const char *msg, void *ud) {
  (void)ud;
  fprintf(stderr, "probe-mcp-everything: %s: %s\n",
          (unsigned)level < 8 ? LEVELS[level] : "?", msg);
}

static int parse_level(const char *s, pmcp_log_level *out) {
  for (int i = 0; i < 8; i++) {
    if (strcmp(s, LEVELS[i]) == 0) {
      *out = (pmcp_log_level)i;
      return 0;
    }
  }
  return -1;
}

/* Reads stdin to EOF and hands each non-empty line to the engine. Lines may
 * be of any size; a trailing CR is dropped. */
static int serve_stdio(pmcp_server *server, out_ctx *o) {
  size_t cap = 1 << 16, len = 0, scan = 0;
  char *buf = malloc(cap);
  if (!buf)
    return -1;
  for (;;) {
    if (len == cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        fprintf(stderr, "probe-mcp-everything: out of memory reading a line\n");
        free(buf);
        return -1;
      }
      buf = nb;
      cap *= 2;
    }
    ssize_t n = read(STDIN_FILENO, buf + len, cap - len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      fprintf(stderr, "probe-mcp-everything: reading stdin: %s\n", strerror(errno));
      free(buf);
      return -1;
    }
    if (n == 0)
      break;
    len += (size_t)n;
    size_t start = 0;
    char *nl;
    batching = 1;
    while ((nl = memchr(buf + scan, '\n', len - scan)) != NULL) {
      size_t end = (size_t)(nl - buf);
      size_t l = end - start;
      if (l > 0 && buf[start + l - 1] == '\r')
        l--;
      if (l > 0)
        pmcp_server_handle(server, NULL, buf + start, l);
      start = end + 1;
      scan = start;
    }
    batching = 0;
    pthread_mutex_lock(&o->lock);
    flush_pending(o);
    pthread_mutex_unlock(&o->lock);
    if (start > 0) {
      memmove(buf, buf + start, len - start);
      len -= start;
    }
    scan = len;
    /* After a huge line, give the memory back. */
    if (cap > (1u << 20) && len < (1u << 16)) {
      char *nb = realloc(buf, 1 << 16);
      if (nb) {
        buf = nb;
        cap = 1 << 16;
      }
    }
    pthread_mutex_lock(&o->lock);
    int broken = o->broken;
    pthread_mutex_unlock(&o->lock);
    if (broken)
      break;
  }
  /* A last line without a newline still counts. */
  if (len > 0 && !(len == 1 && buf[0] == '\r'))
    pmcp_server_handle(server, NULL, buf, buf[len - 1] == '\r' ? len - 1 : len);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  int stdio_mode = 0;
  const char *http_listen = NULL;
  pmcp_log_level level = PMCP_LOG_WARNING;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--stdio") == 0) {
      stdio_mode = 1;
    } else if (strcmp(argv[i], "--http") == 0 && i + 1 < argc) {
      http_listen = argv[++i];
    } else if (strcmp(argv[i], "--log-level") == 0 && i + 1 < argc) {
      if (parse_level(argv[++i], &level) != 0) {
        fprintf(stderr, "probe-mcp-everything: unknown log level '%s'\n", argv[i]);
        return 2;
      }
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(USAGE, stdout);
      return 0;
    } else {
      fprintf(stderr, "probe-mcp-everything: unknown or incomplete option '%s'\n%s",
              argv[i], USAGE);
      return 2;
    }
  }
  if (stdio_mode == !!http_listen) {
    fprintf(stderr, "probe-mcp-everything: give exactly one of --stdio and --http\n%s",
            USAGE);
    return 2;
  }
  if (http_listen) {
#ifdef EVERYTHING_HAVE_HTTP
    return everything_http_main(http_listen, level);
#else
    fprintf(stderr, "probe-mcp-everything: this build has no HTTP transport "
                    "(configure with libuv and llhttp available)\n");
    return 2;
#endif
  }

  signal(SIGPIPE, SIG_IGN);
  out_ctx out = {.broken = 0};
  pthread_mutex_init(&out.lock, NULL);
  pmcp_server_options opts = PMCP_SERVER_OPTIONS_INIT;
  opts.name = EVERYTHING_SERVER_NAME;
  opts.title = "probe-mcp everything (conformance fixtures)";
  opts.instructions = "Test fixtures for the MCP conformance suite.";
  opts.log = stderr_log;
  opts.log_level = level;
  opts.sink = stdout_sink;
  opts.sink_ud = &out;
  pmcp_server *server = NULL;
  int rc = pmcp_server_new(&server, &opts);
  if (rc) {
    fprintf(stderr, "probe-mcp-everything: cannot create the server: %s\n",
            pmcp_strerror(rc));
    return 1;
  }
  rc = everything_register(server);
  if (rc) {
    fprintf(stderr, "probe-mcp-everything: registering the fixtures: %s: %s\n",
            pmcp_strerror(rc), pmcp_server_errmsg(server));
    pmcp_server_free(server);
    return 1;
  }
  rc = serve_stdio(server, &out);
  /* EOF: let running calls finish and answer, then leave. */
  pmcp_server_drain(server);
  pmcp_server_free(server);
  pthread_mutex_destroy(&out.lock);
  free(out.pend);
  return rc == 0 ? 0 : 1;
}
