/* SPDX-License-Identifier: MIT */
/**
 * @file stdio.h
 * The stdio transport: newline-delimited JSON-RPC on two file descriptors
 * around one pmcp_server, served to end of input in one call. Not included
 * by probemcp.h: include <probemcp/stdio.h> beside it.
 *
 * The sink is fixed at pmcp_server_new() time, so the transport comes first:
 *
 *   pmcp_stdio *io;
 *   pmcp_stdio_new(&io, STDIN_FILENO, STDOUT_FILENO, NULL);
 *   sopts.sink = pmcp_stdio_sink; sopts.sink_ud = io;
 *   pmcp_server_new(&srv, &sopts); ...register...
 *   rc = pmcp_stdio_serve(io, srv);   // to end of input, then drains
 *   pmcp_server_free(srv); pmcp_stdio_free(io);   // in this order
 *
 * Ownership: the pmcp_stdio belongs to the caller and is freed with
 * pmcp_stdio_free() after the server it feeds. The descriptors stay the
 * caller's (never closed here).
 *
 * Reading: lines up to a limit (max_line, default PMCP_STDIO_MAX_LINE; the
 * buffer grows to the longest one), a trailing CR dropped, blank lines
 * skipped, a last line without its newline still handled at end of input.
 * A longer line is answered with a JSON-RPC error (-32600, id null: its id
 * is never read) and skipped as it arrives, without holding it in memory;
 * reading goes on. Each line goes to pmcp_server_handle() on the reading
 * thread; calls the engine runs inline answer at once, blocking calls run on
 * the engine's workers, so a slow call never holds up ping or cancellation.
 * Reading pauses while max_pending requests are in progress, so a client
 * that writes far ahead waits on its side of the pipe instead of the
 * server holding its backlog. It reads on while a call waits for the
 * client's reply, and lets one line through (a cancellation, a ping) after
 * each 100 ms in which no call answered.
 *
 * Writing: one message per line. Replies made on the reading thread while it
 * works through one read()'s worth of lines are written together (one
 * write() per read(), however many messages were pipelined, unless reading
 * pauses in between, which writes them first); messages from other threads
 * are written at once. Lines are never interleaved. A write
 * error (the client went away) ends serving; the host should ignore SIGPIPE
 * (signal(SIGPIPE, SIG_IGN)) or a closed pipe kills the process.
 *
 * Diagnostics (a skipped line, a read error) go to the @c log callback of
 * the options; the library itself never writes to stderr.
 */
#ifndef PROBEMCP_STDIO_H
#define PROBEMCP_STDIO_H

#include "common.h"
#include "error.h"
#include "server.h"

PMCP_BEGIN_DECLS

typedef struct pmcp_stdio pmcp_stdio;

/** The longest input line by default: 16 MiB. */
#define PMCP_STDIO_MAX_LINE ((size_t)16 << 20)

#define PMCP_STDIO_OPTIONS_VERSION 2

/** Options of pmcp_stdio_new(); NULL there means all defaults. */
typedef struct pmcp_stdio_options {
  unsigned version;   /**< PMCP_STDIO_OPTIONS_VERSION */
  /** Longest input line accepted, in bytes without the newline (and a CR
   *  before it); 0: PMCP_STDIO_MAX_LINE. */
  size_t max_line;
  /** Where diagnostics go (a skipped line at PMCP_LOG_WARNING, a read
   *  error at PMCP_LOG_ERROR); NULL: nowhere. Called on the reading
   *  thread. */
  pmcp_log_fn log;
  void *log_ud;
  /** Version 2. The most requests in progress before reading pauses
   *  (pmcp_server_wait_room()); 0: PMCP_STDIO_MAX_PENDING; SIZE_MAX:
   *  never pause. @since 0.2 */
  size_t max_pending;
} pmcp_stdio_options;

/** The default of pmcp_stdio_options.max_pending. */
#define PMCP_STDIO_MAX_PENDING ((size_t)256)

#define PMCP_STDIO_OPTIONS_INIT {PMCP_STDIO_OPTIONS_VERSION, 0, NULL, NULL, 0}

/** A transport reading @p in_fd and writing @p out_fd.
 *  @return 0; PMCP_EINVAL (NULL @p out, a negative descriptor, an unknown
 *  options version); PMCP_ENOMEM. *out is NULL on
 *  error. @since 0.1 */
PMCP_API int pmcp_stdio_new(pmcp_stdio **out, int in_fd, int out_fd,
                            const pmcp_stdio_options *opts);

/** The pmcp_server sink: its ud is the pmcp_stdio. Any thread.
 *  @since 0.1 */
PMCP_API void pmcp_stdio_sink(const pmcp_out *msg, void *ud);

/** Reads to end of input (or until the output is closed), handing each line
 *  to @p srv, whose sink must be pmcp_stdio_sink() with this @p io; then
 *  tells the engine no more input will come and waits for the calls still
 *  running to answer. Once per transport.
 *  @return 0 at end of input or when the client closed the output;
 *  PMCP_EIO after a read error; PMCP_ENOMEM when a line cannot be held in
 *  memory; PMCP_EINVAL (NULL argument); PMCP_EMISUSE (served before).
 *  @since 0.1 */
PMCP_API int pmcp_stdio_serve(pmcp_stdio *io, pmcp_server *srv);

/** Frees @p io, after pmcp_server_free() of the server it feeds (the sink
 *  must not be called any more). NULL is allowed. @since 0.1 */
PMCP_API void pmcp_stdio_free(pmcp_stdio *io);

PMCP_END_DECLS

#endif
