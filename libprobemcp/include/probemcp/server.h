/* SPDX-License-Identifier: MIT */
/**
 * @file server.h
 * The MCP server engine. A pmcp_server is handed whole JSON-RPC messages with
 * pmcp_server_handle(); everything it sends (responses, notifications and
 * server-to-client requests) leaves through the sink callback, tagged with the
 * session and the request it belongs to. That pair is the in-process frontend
 * and the FFI surface; probe-mcp-stdio and probe-mcp-http only move bytes.
 *
 * Thread-safety: pmcp_server_handle(), pmcp_server_notify_*() and the
 * session calls may be called from several threads at once. Registration
 * (pmcp_server_add_*) must happen before the first message is handled.
 * The sink may be called from any thread, one call at a time per session.
 */
#ifndef PROBEMCP_SERVER_H
#define PROBEMCP_SERVER_H

#include "common.h"
#include "error.h"

PMCP_BEGIN_DECLS

typedef struct pmcp_server pmcp_server;

/** What an outgoing message is. */
typedef enum pmcp_out_kind {
  PMCP_OUT_RESPONSE = 1,     /**< a response (result or error) to a request */
  PMCP_OUT_NOTIFICATION = 2, /**< a server notification */
  PMCP_OUT_REQUEST = 3,      /**< a server-to-client request */
  /** Control, no data (data NULL, len 0), final set: the request
   *  related_id ended without a response (it was cancelled). A transport
   *  that waits for the request's last message ends its stream here. */
  PMCP_OUT_END = 4,
  /** Control, no data: a handler asked with pmcp_call_close_stream() that
   *  the stream carrying related_id be closed now while the call goes on;
   *  the client resumes it with Last-Event-ID (SSE polling, SEP-1699).
   *  Transports without such streams (stdio) ignore it. */
  PMCP_OUT_CLOSE_STREAM = 5
} pmcp_out_kind;

/** One outgoing message, valid only during the sink call. */
typedef struct pmcp_out {
  /** The session the message belongs to (the id given to
   *  pmcp_server_handle(); "" for the default session). */
  const char *session;
  /** JSON text of the id of the client request this message was produced
   *  for (responses; progress, log and server requests made during a call),
   *  or NULL for session-level messages (list-changed, resource updates,
   *  log messages outside a call). HTTP routes by it: a non-NULL value goes
   *  on that request's own SSE stream. */
  const char *related_id;
  pmcp_out_kind kind;
  /** One whole JSON-RPC message (UTF-8, no trailing newline); NULL for
   *  the control kinds PMCP_OUT_END and PMCP_OUT_CLOSE_STREAM. */
  const char *data;
  size_t len;
  /** Non-zero on the last message for related_id (its response). */
  int final;
  /** The HTTP status a 2026-07-28 (modern era) error response asks for
   *  (400 for invalid _meta, an unsupported version, a missing client
   *  capability or a header mismatch; 404 for an unknown or removed
   *  method), or 0: the transport's default. @since 0.2 */
  int http_status;
} pmcp_out;

/** The sink. Must not call pmcp_server_free(); may call pmcp_server_handle()
 *  only from another thread. It may call pmcp_server_log(), the
 *  pmcp_server_notify_*() calls and the session calls (a nested sink call
 *  for the same session then happens on the same thread). */
typedef void (*pmcp_sink_fn)(const pmcp_out *msg, void *ud);

#define PMCP_SERVER_OPTIONS_VERSION 1

/** Server options. Strings are copied. */
typedef struct pmcp_server_options {
  unsigned version;          /**< PMCP_SERVER_OPTIONS_VERSION */
  const char *name;          /**< serverInfo.name (required) */
  const char *title;         /**< serverInfo.title, or NULL */
  const char *server_version;/**< serverInfo.version, or NULL for the library's */
  const char *instructions;  /**< initialize "instructions", or NULL */
  const pmcp_allocator *allocator; /**< NULL: malloc */
  pmcp_log_fn log;           /**< diagnostics for the host, or NULL */
  void *log_ud;
  pmcp_log_level log_level;  /**< least level passed to @c log */
  unsigned workers;          /**< threads for blocking tools; 0: 4 */
  pmcp_sink_fn sink;         /**< required */
  void *sink_ud;
  /** Largest message accepted by pmcp_server_handle(); 0: no limit. */
  size_t max_message;
} pmcp_server_options;

#define PMCP_SERVER_OPTIONS_INIT {PMCP_SERVER_OPTIONS_VERSION, NULL, NULL, NULL, \
    NULL, NULL, NULL, NULL, PMCP_LOG_WARNING, 0, NULL, NULL, 0}

/** Fills @p opts with the defaults of options version @p version.
 *  @return 0, or PMCP_EINVAL for an unknown version. */
PMCP_API int pmcp_server_options_init(pmcp_server_options *opts, unsigned version);

/**
 * Creates a server.
 * @param[out] out the new server; set to NULL on failure.
 * @return 0; PMCP_EINVAL (no name or sink, unknown options version);
 *         PMCP_ENOMEM.
 * Ownership: the caller frees it with pmcp_server_free().
 */
PMCP_API int pmcp_server_new(pmcp_server **out, const pmcp_server_options *opts);

/** Cancels running calls, waits for the workers, frees everything. NULL ok. */
PMCP_API void pmcp_server_free(pmcp_server *server);

/**
 * Handles one whole JSON-RPC message (a request, notification, response to a
 * server request, or a batch where the session's protocol version allows).
 * Replies leave through the sink, possibly before this returns, possibly
 * later from a worker thread.
 * @param session the session id; NULL or "" for the default session. An
 *        unknown id opens a new session.
 * @return 0 when the message was taken (protocol errors are answered through
 *         the sink, not returned); PMCP_ETOOBIG above max_message;
 *         PMCP_EMISUSE on a freed or closing server.
 */
PMCP_API int pmcp_server_handle(pmcp_server *server, const char *session,
                                const char *msg, size_t len);

/**
 * Whether pmcp_server_handle() can read @p msg: valid UTF-8 holding one
 * well-formed JSON value. Otherwise pmcp_server_handle() answers a parse
 * error whose id is null, which a transport cannot tie to the request that
 * carried it; a transport that answers every request itself (HTTP) checks
 * first and answers the parse error on that request.
 * @param[out] has_nul when not NULL: set to 1 when a string or member name
 *        decodes a \u0000 (pmcp_server_handle() refuses the request that
 *        holds it, naming the string), else 0.
 * @return 0; PMCP_EPROTO (pmcp_server_errmsg() says why); PMCP_ENOMEM;
 *         PMCP_EINVAL; PMCP_EMISUSE.
 */
PMCP_API int pmcp_server_check_message(pmcp_server *server, const char *msg,
                                       size_t len, int *has_nul);

/** The protocol era a request belongs to. Both are served on one endpoint:
 *  a request whose params._meta carries
 *  "io.modelcontextprotocol/protocolVersion" (or a method that exists only
 *  in the modern era, such as server/discover) is handled statelessly in
 *  the modern era (2026-07-28); everything else belongs to the session
 *  that initialize opened (2025-11-25 or older). @since 0.2 */
typedef enum pmcp_era {
  PMCP_ERA_NONE = 0,   /**< not a request (notification, response, invalid) */
  PMCP_ERA_LEGACY = 1, /**< initialize-negotiated session (<= 2025-11-25) */
  PMCP_ERA_MODERN = 2  /**< per-request _meta, stateless (2026-07-28) */
} pmcp_era;

/** What pmcp_message_classify() found. */
typedef enum pmcp_msg_kind {
  PMCP_MSG_INVALID = 0,      /**< not JSON, or not a JSON-RPC message */
  PMCP_MSG_REQUEST = 1,
  PMCP_MSG_NOTIFICATION = 2,
  PMCP_MSG_RESPONSE = 3      /**< a response to a server request */
} pmcp_msg_kind;

/** Version 2 (release 0.2) has the version member and string pointers;
 *  release 0.1's layout had neither (fixed-size strings), and programs
 *  linked against 0.1 still get that layout from pmcp_message_classify(). */
#define PMCP_MSG_INFO_VERSION 2

typedef struct pmcp_msg_info {
  /** The layout the caller was compiled with: set by PMCP_MSG_INFO_INIT
   *  for pmcp_message_classify(); the library's own in
   *  pmcp_message_info(). */
  unsigned version;
  /** Of a single message; of a batch: INVALID when an item is, else
   *  REQUEST when any item is a request, else NOTIFICATION or RESPONSE. */
  pmcp_msg_kind kind;
  int batch;            /**< the message is a JSON array */
  size_t n_items;       /**< 1 for a single message */
  size_t n_requests;    /**< items that are requests */
  int initialize;       /**< an initialize request is among them */
  pmcp_era era;         /**< of the (first) request */
  /** The first request's _meta protocolVersion, "" when absent, and its
   *  method, "" when none: whole, never NULL, owned by the library (see
   *  pmcp_message_classify() and pmcp_message_info()). */
  const char *protocol_version;
  const char *method;
} pmcp_msg_info;

#define PMCP_MSG_INFO_INIT {PMCP_MSG_INFO_VERSION, PMCP_MSG_INVALID, 0, 0, 0, 0, \
    PMCP_ERA_NONE, NULL, NULL}

/** Classifies one JSON-RPC message (or batch) the way pmcp_server_handle()
 *  will, so that a transport need not parse bodies itself.
 *  @param out initialized with PMCP_MSG_INFO_INIT; its strings stay valid
 *         until pmcp_msg_info_dispose(out), which the caller calls after
 *         every successful call.
 *  @return 0 (see out->kind); PMCP_EINVAL for NULL arguments or an
 *          unknown out->version; PMCP_ENOMEM. @since 0.1 (version 2 of
 *          pmcp_msg_info since 0.2) */
PMCP_API int pmcp_message_classify(const char *msg, size_t len, pmcp_msg_info *out);

/** Frees the strings pmcp_message_classify() put in @p info and leaves
 *  them ""; NULL ok. Not for pmcp_message_info()'s. @since 0.2 */
PMCP_API void pmcp_msg_info_dispose(pmcp_msg_info *info);

/** A message read once by the engine, for a transport that must know, per
 *  item, what pmcp_server_handle() will see without parsing it itself:
 *  its kind, the id its answer will carry (the related_id of its
 *  messages), whether it runs a handler the host wrote, and its own
 *  bytes. @since 0.2 */
typedef struct pmcp_message pmcp_message;

typedef struct pmcp_msg_item {
  pmcp_msg_kind kind;
  /** Of a request: JSON text of its id exactly as the engine writes it
   *  in pmcp_out.related_id (the digits of a number as sent, a string
   *  re-escaped); NULL for other kinds. */
  const char *id;
  /** A request that runs a handler the host wrote (tools/call,
   *  resources/read, prompts/get, completion/complete): it may block, so
   *  an event loop hands it to a thread. */
  int runs_handler;
  int initialize;       /**< an initialize request */
  /** The item's own bytes within the message (the whole message when it
   *  is not a batch), to hand to pmcp_server_handle() one by one. */
  const char *text;
  size_t len;
} pmcp_msg_item;

/**
 * Reads @p msg the way pmcp_server_handle() will: valid UTF-8 holding one
 * well-formed JSON value (pmcp_server_check_message()), then the JSON-RPC
 * shape of every item (pmcp_message_classify()). A request whose id is
 * neither a string nor an integer is PMCP_MSG_INVALID (the engine refuses
 * it without an id to answer under). @p msg must outlive the result.
 * @param[out] out the message; NULL on failure. Free with
 *        pmcp_message_free().
 * @return 0 (a readable value that is not JSON-RPC has info.kind
 *         PMCP_MSG_INVALID); PMCP_EPROTO when unreadable
 *         (pmcp_server_errmsg() says why); PMCP_ENOMEM; PMCP_EINVAL;
 *         PMCP_EMISUSE. @since 0.2
 */
PMCP_API int pmcp_message_read(pmcp_server *server, const char *msg, size_t len,
                               pmcp_message **out);

/** NULL ok. */
PMCP_API void pmcp_message_free(pmcp_message *m);

/** What pmcp_message_classify() would say of the message; its strings
 *  belong to @p m (no pmcp_msg_info_dispose()). */
PMCP_API const pmcp_msg_info *pmcp_message_info(const pmcp_message *m);

/** Whether a string or member name decodes a \u0000 (which the engine
 *  refuses, naming the string). */
PMCP_API int pmcp_message_has_nul(const pmcp_message *m);

/** Item @p i (0 <= i < pmcp_message_info(m)->n_items), or NULL. */
PMCP_API const pmcp_msg_item *pmcp_message_item(const pmcp_message *m, size_t i);

/** The protocol versions the engine speaks, newest first, NULL-terminated:
 *  the modern one(s) first, then those initialize may negotiate. @since 0.2 */
PMCP_API const char *const *pmcp_protocol_versions(void);

/** The era of protocol version @p v (@p len bytes, surrounding blanks
 *  allowed): PMCP_ERA_MODERN, PMCP_ERA_LEGACY, or PMCP_ERA_NONE when the
 *  engine does not speak it. @since 0.2 */
PMCP_API pmcp_era pmcp_protocol_version_era(const char *v, size_t len);

/** The one batch rule: whether JSON-RPC batches are accepted under
 *  protocol version @p v (only 2025-03-26 had them). @since 0.2 */
PMCP_API int pmcp_protocol_batch_allowed(const char *v);

/** Whether a request whose MCP-Protocol-Version header says @p v (@p len
 *  bytes; NULL: no header) may be served in a session that negotiated
 *  @p negotiated. A header of 2025-06-18 or later must name the negotiated
 *  version (the client's claim of what it speaks); one naming an older
 *  revision, which had no such header, claims nothing and is taken like
 *  an absent one. An unsupported version never fits. @since 0.2 */
PMCP_API int pmcp_protocol_header_fits(const char *negotiated, const char *v, size_t len);

/** What an HTTP transport read from a request's headers; the engine checks
 *  them against the body of a modern-era request (-32020 on a mismatch).
 *  NULL members were absent. */
typedef struct pmcp_http_claims {
  const char *protocol_version; /**< MCP-Protocol-Version */
  const char *method;           /**< Mcp-Method */
  const char *name;             /**< Mcp-Name (decoded) */
  /** The Mcp-Param-{Name} headers: names after the prefix (lower-case)
   *  and raw values (=?base64?...?= decoded by the engine), checked against
   *  the tool parameters annotated with "x-mcp-header". */
  size_t n_params;
  const char *const *param_names;
  const char *const *param_values;
} pmcp_http_claims;

/** pmcp_server_handle() for an HTTP transport: the same, plus the header
 *  claims of the request (NULL: none). @since 0.2 */
PMCP_API int pmcp_server_handle_http(pmcp_server *server, const char *session,
                                     const char *msg, size_t len,
                                     const pmcp_http_claims *claims);

/** Handles item @p i of @p m (from pmcp_message_read()) exactly as
 *  pmcp_server_handle_http() would handle the item's text, without reading
 *  it again: the engine dispatches the tree pmcp_message_read() built. The
 *  text given to pmcp_message_read() must still be valid; @p m may be
 *  freed once this returns (the engine keeps what a running call needs).
 *  @p claims as for pmcp_server_handle_http() (NULL: none).
 *  @return as pmcp_server_handle(); PMCP_EINVAL when @p i is out of range.
 *  @since 0.2 */
PMCP_API int pmcp_server_handle_item(pmcp_server *server, const char *session,
                                     const pmcp_message *m, size_t i,
                                     const pmcp_http_claims *claims);

/** Session flags for pmcp_server_session_open(). */
enum {
  /** Stateless: no initialize needed; every request is self-contained. */
  PMCP_SESSION_STATELESS = 1u << 0
};

/**
 * Opens a session explicitly (pmcp_server_handle() opens unknown ids
 * implicitly with flags 0). @p ud is handed to tool handlers through
 * pmcp_call_session_ud(): a frontend puts the connection's identity there.
 * It is also the caller the worker pool is fair to: sessions with the same
 * @p ud (pointer) run at most pmcp_server_set_caller_workers() blocking
 * calls at once (default half the workers), the rest waiting while other
 * callers' calls go first; NULL is no caller (no such bound).
 * @return 0; PMCP_EEXIST if open; PMCP_ENOMEM.
 */
PMCP_API int pmcp_server_session_open(pmcp_server *server, const char *session,
                                      unsigned flags, void *ud);

/** Ends a session: cancels its running calls, drops its subscriptions and
 *  pending server requests. @return 0 or PMCP_ENOTFOUND. */
PMCP_API int pmcp_server_session_close(pmcp_server *server, const char *session);

/** True when @p session exists and has completed initialize. */
PMCP_API int pmcp_server_session_ready(pmcp_server *server, const char *session);

/** Copies the protocol version negotiated for @p session into @p out
 *  (NUL-terminated, at most @p size bytes). @return 0, PMCP_ENOTFOUND, or
 *  PMCP_EINVAL when the session has not initialized. */
PMCP_API int pmcp_server_session_protocol(pmcp_server *server, const char *session,
                                          char *out, size_t size);

/** Says that the client of @p session will send nothing more (stdio: end
 *  of input). Calls keep running and answering, but a server-to-client
 *  request waiting for the client's answer fails at once with PMCP_EIO,
 *  and so does any made later, so that a drain at end of input ends.
 *  @return 0 or PMCP_ENOTFOUND. @since 0.1 */
PMCP_API int pmcp_server_session_end_input(pmcp_server *server, const char *session);

/** Sets how many items tools/list, resources/list, resources/templates/list
 *  and prompts/list return per page (default 100); the rest is reached with
 *  the opaque nextCursor. @return 0, PMCP_EINVAL for 0.
 *  @since 0.1 */
PMCP_API int pmcp_server_set_page_size(pmcp_server *server, size_t n);

/** Bounds the calls that wait for a worker (tools declared
 *  PMCP_TOOL_BLOCKING or PMCP_TOOL_OPEN_WEB) to @p max; 0: 64 per worker.
 *  Past it a call is refused at once with a retryable "server busy" error
 *  instead of waiting. Default: PROBE_MCP_QUEUE_MAX from the environment
 *  at pmcp_server_new(), else no bound. @return 0; PMCP_EINVAL. @since 0.2 */
PMCP_API int pmcp_server_set_queue_max(pmcp_server *server, size_t max);

/** Bounds the workers one caller (the session's @p ud of
 *  pmcp_server_session_open(): the HTTP principal) takes at once to @p n;
 *  0: half the workers, at least 1; more than the pool: the pool. Its
 *  further blocking calls wait, passed over while other callers' calls go
 *  first, so one caller looping long calls never holds every worker.
 *  Default: PROBE_MCP_WORKERS_PER_CALLER from the environment at
 *  pmcp_server_new(), else half. @return 0; PMCP_EINVAL (NULL, or over
 *  1,000,000). @since 0.2 */
PMCP_API int pmcp_server_set_caller_workers(pmcp_server *server, size_t n);

/** Cuts every tool text item longer than @p max bytes (0: never, the
 *  default), with a note saying so, so no client receives more than a
 *  service allows (probe-mcp-http: 256 KiB). Budgeted tools stay far
 *  below it. @return 0; PMCP_EINVAL. @since 0.2 */
PMCP_API int pmcp_server_set_text_max(pmcp_server *server, size_t max);

/** The cache hints of modern-era (2026-07-28) cacheable results
 *  (server/discover, the lists, resources/read): ttlMs = @p ttl_ms and
 *  cacheScope "private" when @p private_scope (or a tool filter tailors
 *  tools/list per caller), else "public". Default: 0 ms, public.
 *  @return 0. @since 0.2 */
PMCP_API int pmcp_server_set_cache_hints(pmcp_server *server, unsigned ttl_ms,
                                         int private_scope);

/** Waits until no call is running or queued. @return 0. */
PMCP_API int pmcp_server_drain(pmcp_server *server);

/** Waits until fewer than @p max requests are in progress (received and
 *  not yet answered), so that a transport can stop reading while the
 *  server holds enough work and leave the rest to the client's side of
 *  the pipe or socket. It waits for answers, not for room: it returns
 *  PMCP_ETIMEOUT at once while a call waits for its client's reply
 *  (pmcp_call_request(), which only further reading brings), and once no
 *  request has been answered for @p stall_ms, so that the transport can
 *  let a line through (a cancellation, a ping) while every call is slow.
 *  @return 0 (fewer than @p max in progress), PMCP_ETIMEOUT, PMCP_EINVAL
 *  (NULL or a freed server, @p max 0). @since 0.2 */
PMCP_API int pmcp_server_wait_room(pmcp_server *server, size_t max, unsigned stall_ms);

/** The requests received and not yet answered (running, waiting for a
 *  worker or for the client), for a host's health figures; 0 for NULL.
 *  @since 0.2 */
PMCP_API size_t pmcp_server_in_progress(pmcp_server *server);

/** Sends notifications/resources/updated for @p uri to every session
 *  subscribed to it. @return 0 or PMCP_ENOMEM. */
PMCP_API int pmcp_server_notify_resource_updated(pmcp_server *server, const char *uri);

/** What list changed, for pmcp_server_notify_list_changed(). */
typedef enum pmcp_list_kind {
  PMCP_LIST_TOOLS = 1,
  PMCP_LIST_RESOURCES = 2,
  PMCP_LIST_PROMPTS = 3
} pmcp_list_kind;

/** Sends notifications/{tools,resources,prompts}/list_changed to every
 *  initialized session. @return 0, PMCP_EINVAL. */
PMCP_API int pmcp_server_notify_list_changed(pmcp_server *server, pmcp_list_kind kind);

/** Sends a notifications/message to every session whose logging/setLevel
 *  admits @p level. @p data_json is any JSON value (a string must be quoted).
 *  @return 0, PMCP_EINVAL (data not JSON), PMCP_ENOMEM. */
PMCP_API int pmcp_server_log(pmcp_server *server, pmcp_log_level level,
                             const char *logger, const char *data_json);

/** The message of the last error on @p server (argument, pointer, reason);
 *  "" if none. Borrowed, valid until the next call on the server from the
 *  same thread. */
PMCP_API const char *pmcp_server_errmsg(const pmcp_server *server);

PMCP_END_DECLS

#endif
