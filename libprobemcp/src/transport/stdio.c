/* SPDX-License-Identifier: MIT */
/* The stdio transport (probemcp/stdio.h): framing lines in, gathering replies out. */
#include "probemcp/stdio.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Input buffer size kept between messages; a longer line grows it, and it
 * shrinks back once that line is done. */
#define IN_KEEP (64u * 1024)
/* Gathered output is written once it reaches this size, and a message at
 * least this long is written straight from the engine's buffer: batching
 * saves write() calls on small replies, copying big ones saves nothing. */
#define OUT_BATCH (64u * 1024)
/* How long reading stays paused at max_pending while no request is
 * answered before one line is let through. */
#define STALL_MS 100u

struct pmcp_stdio {
  pmcp_log_fn log;
  void *log_ud;
  int in_fd, out_fd;
  int served;           /* pmcp_stdio_serve() ran: once per transport */
  size_t max_line;      /* longest message line accepted, newline excluded */
  size_t max_pending;   /* requests in progress before reading pauses */
  pthread_mutex_t lock; /* guards everything below */
  int broken;           /* the output is gone: stop reading */
  /* The reading thread while pmcp_stdio_serve() runs, and whether it is
   * inside a read's worth of lines (only that thread touches @c gathering,
   * so it needs no lock). */
  pthread_t reader;
  atomic_int reading;
  int gathering;
  char *pend; /* gathered lines, each with its newline */
  size_t pend_len, pend_cap;
};

int pmcp_stdio_new(pmcp_stdio **out, int in_fd, int out_fd,
                   const pmcp_stdio_options *opts)
{
  if (!out)
    return PMCP_EINVAL;
  *out = NULL;
  pmcp_stdio_options o = PMCP_STDIO_OPTIONS_INIT;
  if (opts) {
    if (opts->version < 1 || opts->version > PMCP_STDIO_OPTIONS_VERSION)
      return PMCP_EINVAL;
    o.max_line = opts->max_line;
    o.log = opts->log;
    o.log_ud = opts->log_ud;
    if (opts->version >= 2)
      o.max_pending = opts->max_pending;
  }
  if (in_fd < 0 || out_fd < 0)
    return PMCP_EINVAL;
  pmcp_stdio *io = calloc(1, sizeof *io);
  if (!io)
    return PMCP_ENOMEM;
  if (pthread_mutex_init(&io->lock, NULL) != 0) {
    free(io);
    return PMCP_ENOMEM;
  }
  io->log = o.log;
  io->log_ud = o.log_ud;
  io->in_fd = in_fd;
  io->out_fd = out_fd;
  /* Capped so that the skipping arithmetic (limit + 1) cannot wrap. */
  io->max_line = o.max_line ? o.max_line : PMCP_STDIO_MAX_LINE;
  if (io->max_line > SIZE_MAX / 2)
    io->max_line = SIZE_MAX / 2;
  io->max_pending = o.max_pending ? o.max_pending : PMCP_STDIO_MAX_PENDING;
  *out = io;
  return 0;
}

/* A diagnostic for the host's log callback, if any. */
PMCP_PRINTF(3, 4)
static void diag(pmcp_stdio *io, pmcp_log_level level, const char *fmt, ...)
{
  if (!io->log)
    return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  io->log(level, msg, io->log_ud);
}

void pmcp_stdio_free(pmcp_stdio *io)
{
  if (!io)
    return;
  pthread_mutex_destroy(&io->lock);
  free(io->pend);
  free(io);
}

/* Writes all of @p iov unless the output is gone. Called with the lock. */
static void write_all(pmcp_stdio *io, struct iovec *iov, int n)
{
  while (!io->broken && n > 0) {
    ssize_t w = writev(io->out_fd, iov, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      io->broken = 1; /* EPIPE and the like: the client went away */
      return;
    }
    size_t left = (size_t)w;
    while (n > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = (char *)iov->iov_base + left;
      iov->iov_len -= left;
    }
  }
}

/* Called with the lock. */
static void flush_locked(pmcp_stdio *io)
{
  if (!io->pend_len)
    return;
  struct iovec iov = {io->pend, io->pend_len};
  write_all(io, &iov, 1);
  io->pend_len = 0;
}

/* Appends one line to the gathered output. 0, or -1 without memory. */
static int gather_locked(pmcp_stdio *io, const char *data, size_t len)
{
  size_t need = io->pend_len + len + 1;
  if (need > io->pend_cap) {
    size_t cap = io->pend_cap ? io->pend_cap : 4096;
    while (cap < need)
      cap *= 2;
    char *p = realloc(io->pend, cap);
    if (!p)
      return -1;
    io->pend = p;
    io->pend_cap = cap;
  }
  memcpy(io->pend + io->pend_len, data, len);
  io->pend[io->pend_len + len] = '\n';
  io->pend_len = need;
  return 0;
}

void pmcp_stdio_sink(const pmcp_out *msg, void *ud)
{
  pmcp_stdio *io = ud;
  /* Control kinds (end of a request's stream, SSE stream close) mean
   * nothing on a pipe. */
  if (!msg->data)
    return;
  int on_reader = atomic_load(&io->reading) && pthread_equal(pthread_self(), io->reader);
  pthread_mutex_lock(&io->lock);
  if (on_reader && io->gathering && msg->len < OUT_BATCH &&
      gather_locked(io, msg->data, msg->len) == 0) {
    if (io->pend_len >= OUT_BATCH)
      flush_locked(io);
  } else {
    /* Lines already gathered go first, so one thread's messages keep
     * their order. */
    flush_locked(io);
    struct iovec iov[2] = {{(void *)msg->data, msg->len}, {(void *)"\n", 1}};
    write_all(io, iov, 2);
  }
  pthread_mutex_unlock(&io->lock);
}

/* Answers a line over the limit: a JSON-RPC error with a null id, since
 * the request's id was not read, and a note to the log. */
static void refuse_long_line(pmcp_stdio *io)
{
  char msg[256];
  int n = snprintf(msg, sizeof msg,
                   "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"
                   "\"message\":\"message too long: a line of over %zu bytes "
                   "(the maximum line length) was skipped\"}}",
                   io->max_line);
  diag(io, PMCP_LOG_WARNING, "skipped an input line of over %zu bytes (the maximum line length)",
       io->max_line);
  pmcp_out out = {0};
  out.data = msg;
  out.len = (size_t)n;
  pmcp_stdio_sink(&out, io);
}

/* Before the next line: while the server holds max_pending requests,
 * the gathered replies go out and reading waits for an answer. It reads
 * on at once while a call waits for its client's reply (which comes this
 * way), and after STALL_MS without an answer lets this one line through,
 * so that a cancellation or a ping still arrives while every call is slow
 * (the backlog then grows by at most a line per STALL_MS). */
static void pause_for_room(pmcp_stdio *io, pmcp_server *srv)
{
  if (io->max_pending == SIZE_MAX || pmcp_server_in_progress(srv) < io->max_pending)
    return;
  pthread_mutex_lock(&io->lock);
  flush_locked(io);
  pthread_mutex_unlock(&io->lock);
  (void)pmcp_server_wait_room(srv, io->max_pending, STALL_MS);
}

/* Hands one line (without its newline) to the engine unless it is blank. */
static void handle_line(pmcp_stdio *io, pmcp_server *srv, const char *line, size_t n)
{
  if (n && line[n - 1] == '\r')
    n--;
  size_t k = 0;
  while (k < n && (line[k] == ' ' || line[k] == '\t'))
    k++;
  if (k == n)
    return; /* a blank line carries no message: no answer either */
  if (pmcp_server_handle(srv, NULL, line, n) != 0)
    diag(io, PMCP_LOG_ERROR, "%s", pmcp_server_errmsg(srv));
}

int pmcp_stdio_serve(pmcp_stdio *io, pmcp_server *srv)
{
  if (!io || !srv)
    return PMCP_EINVAL;
  if (io->served)
    return PMCP_EMISUSE;
  io->served = 1;
  size_t cap = IN_KEEP, len = 0, scan = 0;
  char *buf = malloc(cap);
  if (!buf) {
    diag(io, PMCP_LOG_ERROR, "out of memory");
    return PMCP_ENOMEM;
  }
  io->reader = pthread_self();
  atomic_store(&io->reading, 1);
  int rc = 0;
  /* Skipping the rest of a line over the limit: its bytes are dropped as
   * they come, so an endless line costs no memory. */
  int skipping = 0;
  for (;;) {
    if (len == cap) {
      char *n = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
      if (!n) {
        diag(io, PMCP_LOG_ERROR, "out of memory reading a message of over %zu bytes", len);
        rc = PMCP_ENOMEM;
        break;
      }
      buf = n;
      cap *= 2;
    }
    ssize_t r = read(io->in_fd, buf + len, cap - len);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      diag(io, PMCP_LOG_ERROR, "reading the input: %s", strerror(errno));
      rc = PMCP_EIO;
      break;
    }
    if (r == 0) {
      /* A last line without its newline still counts. */
      if (skipping || len > io->max_line)
        refuse_long_line(io);
      else if (len)
        handle_line(io, srv, buf, len);
      break;
    }
    len += (size_t)r;
    size_t start = 0;
    char *nl;
    io->gathering = 1;
    while ((nl = memchr(buf + scan, '\n', len - scan)) != NULL) {
      pause_for_room(io, srv);
      size_t end = (size_t)(nl - buf);
      size_t n = end - start;
      if (n && buf[end - 1] == '\r')
        n--;
      if (skipping || n > io->max_line)
        refuse_long_line(io);
      else
        handle_line(io, srv, buf + start, end - start);
      skipping = 0;
      start = scan = end + 1;
    }
    if (len - start > io->max_line + 1) {
      /* No newline yet and already too long (a CR may still end it). */
      skipping = 1;
      start = scan = len;
    } else if (skipping) {
      start = scan = len;
    }
    io->gathering = 0;
    pthread_mutex_lock(&io->lock);
    flush_locked(io);
    int broken = io->broken;
    pthread_mutex_unlock(&io->lock);
    if (broken)
      break;
    if (start) {
      memmove(buf, buf + start, len - start);
      len -= start;
    }
    scan = len;
    /* After a huge line, give the memory back. */
    if (cap > IN_KEEP && len < IN_KEEP / 2) {
      char *n = realloc(buf, IN_KEEP);
      if (n) {
        buf = n;
        cap = IN_KEEP;
      }
    }
  }
  free(buf);
  /* End of input: calls still running finish and answer; one waiting for
   * an answer from the client learns that none can come. */
  pmcp_server_session_end_input(srv, NULL);
  pmcp_server_drain(srv);
  atomic_store(&io->reading, 0);
  pthread_mutex_lock(&io->lock);
  flush_locked(io);
  /* Keep no big gathering buffer around. */
  free(io->pend);
  io->pend = NULL;
  io->pend_cap = 0;
  pthread_mutex_unlock(&io->lock);
  return rc;
}
