/* The stdio transport: newline-delimited JSON-RPC on two file descriptors
 * around one pmcp_server. Shared by probe-mcp-stdio and
 * probe-mcp-everything --stdio (static library pmcp_stdio_transport), so
 * the benchmark measures exactly the loop probe-mcp-stdio runs.
 *
 * The sink is fixed at pmcp_server_new() time, so the transport comes first:
 *
 *   pmcp_stdio *io; pmcp_stdio_new(&io, "prog", STDIN_FILENO, STDOUT_FILENO);
 *   sopts.sink = pmcp_stdio_sink; sopts.sink_ud = io;
 *   pmcp_server_new(&srv, &sopts); ...register...
 *   rc = pmcp_stdio_serve(io, srv);   // to end of input, then drains
 *   pmcp_server_free(srv); pmcp_stdio_free(io);   // in this order
 *
 * Reading: lines up to a limit (pmcp_stdio_set_max_line, default
 * PMCP_STDIO_MAX_LINE; the buffer grows to the longest one), a trailing CR
 * dropped, blank lines skipped, a last line without its newline still
 * handled at end of input. A longer line is answered with a JSON-RPC error
 * (id null: its id is never read) and skipped as it arrives, without
 * holding it in memory; the server reads on. Each line goes to pmcp_server_handle() on
 * the reading thread; calls the engine runs inline answer at once, calls
 * declared blocking run on the engine's workers, so a slow call never holds
 * up ping or a cancellation.
 *
 * Writing: one message per line. Replies made on the reading thread while it
 * works through one read()'s worth of lines are gathered and written
 * together when those lines are done (one write() per read(), however many
 * messages were pipelined); messages from other threads are written at once.
 * A mutex keeps lines whole. */
#ifndef PMCP_STDIO_TRANSPORT_H
#define PMCP_STDIO_TRANSPORT_H

#include <probemcp/probemcp.h>

typedef struct pmcp_stdio pmcp_stdio;

/* @p prog prefixes the diagnostics written to stderr. 0 or PMCP_ENOMEM. */
int pmcp_stdio_new(pmcp_stdio **out, const char *prog, int in_fd, int out_fd);

/* The longest input line by default: 16 MiB. */
#define PMCP_STDIO_MAX_LINE ((size_t)16 << 20)

/* Longest input line accepted, in bytes without the newline (and a CR
 * before it); 0: the default. Before pmcp_stdio_serve(). */
void pmcp_stdio_set_max_line(pmcp_stdio *io, size_t bytes);

/* The pmcp_server sink; its ud is the pmcp_stdio. Any thread. */
void pmcp_stdio_sink(const pmcp_out *msg, void *ud);

/* Reads to end of input (or until the output is closed), handing each line
 * to @p srv; then tells the engine no more input will come and waits for
 * calls still running to answer. Returns the process exit status: 0 at end
 * of input, 1 after a read error or when a line cannot be held in memory
 * (said on stderr). */
int pmcp_stdio_serve(pmcp_stdio *io, pmcp_server *srv);

/* After pmcp_server_free(): the sink must not be called any more. NULL ok. */
void pmcp_stdio_free(pmcp_stdio *io);

#endif
