/* SPDX-License-Identifier: MIT */
/* Internal state of a pmcp_server shared by the core files.
 *
 * Locking: srv->mu guards the session table, every session's state (flags,
 * level, in-flight requests, subscriptions, pending server requests), batch
 * collectors and the busy counter. Each session has its own sink_mu so sink
 * calls are serialized per session without holding srv->mu while the host
 * writes. Registration data is immutable once the first message arrives and
 * is read without a lock. */
#ifndef PMCP_CORE_ENGINE_H
#define PMCP_CORE_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "probemcp/server.h"
#include "probemcp/tool.h"
#include "core/registry.h"
#include "core/workers.h"
#include "core/cursor_int.h"
#include "core/jdoc.h"

#define PMCP__SERVER_MAGIC 0x706d6370u
#define PMCP__DEFAULT_PAGE 100

/* The protocol versions initialize negotiates, newest first (era.c). */
extern const char *const pmcp__versions[];
#define PMCP__LATEST_VERSION "2025-11-25"
/* The modern (stateless, per-request _meta) revision. */
#define PMCP__MODERN_VERSION "2026-07-28"
#define PMCP__BATCH_VERSION "2025-03-26"

typedef struct pmcp__session pmcp__session;
typedef struct pmcp__req pmcp__req;
typedef struct pmcp__batch pmcp__batch;
typedef struct pmcp__pending pmcp__pending;
typedef struct pmcp__jdoc pmcp__jdoc; /* jdoc.h */

struct pmcp_server {
  unsigned magic;
  pmcp_allocator alloc;
  char *name, *title, *version, *instructions;
  /* {"name":..,"title":..,"version":..}: the serverInfo of initialize and
   * of every modern result's _meta, written once (malloc'd). */
  char *info_json;
  size_t info_len;
  /* What a modern result without resultType and _meta starts with:
   * {"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":
   * INFO}} without its final '}' (malloc'd, with info_json). */
  char *modern_head;
  size_t modern_head_len;
  /* params._meta trees of modern clients (jdoc_meta.c) */
  _Atomic(pmcp__meta_entry *) meta_cache[PMCP__META_SLOTS];
  pmcp_log_fn log;
  void *log_ud;
  pmcp_log_level log_level;
  pmcp_sink_fn sink;
  void *sink_ud;
  size_t max_message;
  size_t page_size;
  /* Tool text items longer than this are cut with a note (0: never); a
   * service sets it (probe-mcp-http: 256 KiB) with pmcp_server_set_text_max(). */
  size_t text_max;
  /* Cache hints on modern cacheable results (pmcp_server_set_cache_hints). */
  unsigned cache_ttl_ms;
  int cache_private;

  pthread_mutex_t mu;
  /* Signalled when busy drops to 0, and on every answer while a
   * transport waits for room (pmcp_server_wait_room); CLOCK_MONOTONIC. */
  pthread_cond_t idle_cond;
  size_t busy;               /* requests received and not yet answered */
  uint64_t answered;         /* requests answered since the start */
  size_t room_waiters;       /* threads inside pmcp_server_wait_room */
  size_t client_waits;       /* calls waiting for a reply from their client */
  int closing;
  atomic_int started;        /* a message was handled: registry frozen */

  /* session table (session.c) */
  pmcp__session **buckets;
  size_t n_buckets, n_sessions;
  /* ended sessions kept for reuse (a modern-era HTTP request opens and
   * ends one), chained by hnext */
  pmcp__session *spare;
  size_t n_spare;

  pmcp__registry reg;
  pmcp__workers workers;
  int64_t next_out_id;       /* ids of server-to-client requests */

  pthread_mutex_t err_mu;
  char errmsg[512];

  /* subscriptions/listen requests (listen.c), open and ended */
  pmcp__req *listeners, *listen_dead;

  /* cursors (cursor_server.c): random per server unless the host sets one */
  pmcp__cursor_key cursor_key;

  /* tasks (tasks.c), guarded by mu */
  struct pmcp__task *tasks;
  /* the host's task store (tasks_store.c), NULL: memory only */
  struct pmcp__task_durable *task_store;
};

struct pmcp__session {
  char *id;
  unsigned flags;
  void *ud;
  int refs;            /* table reference + one per user */
  int closed;
  int input_ended;     /* the client will send nothing more */
  int initialized;     /* initialize answered */
  char proto[16];      /* negotiated version, "" before initialize */
  pmcp_log_level level;/* least level sent as notifications/message */
  char *client_caps;   /* JSON text of the client's capabilities */
  pmcp__req *inflight; /* requests being worked on */
  char **subs;         /* subscribed resource URIs */
  size_t n_subs, cap_subs;
  pmcp__pending *pending;
  pthread_mutex_t sink_mu;
  /* Kept when the session is reused: session.c clears only the members
   * before sink_mu. */
  pmcp__session *hnext;
  size_t id_cap;       /* bytes for the id after the struct */
};

/* One client request from arrival to its response. */
struct pmcp__req {
  pmcp_server *srv;
  pmcp__session *sess;
  char *id;             /* JSON text of the id as echoed */
  char *progress_token; /* JSON text of _meta.progressToken, or NULL */
  cJSON *params;        /* in the message, which @c doc keeps alive */
  pmcp__jdoc *doc;      /* a reference to the message (jdoc.h) */
  pmcp__batch *batch;
  atomic_int cancelled;
  int on_worker;
  int linked;             /* in sess->inflight */
  pmcp__pending *pending; /* server request the call is waiting on */
  /* Modern era (era.c): the request carried its own _meta. */
  int modern;
  int has_log_level;      /* _meta logLevel given: log messages admitted */
  pmcp_log_level log_level;
  const cJSON *client_caps; /* _meta clientCapabilities (in @c doc) */
  int cacheable;          /* result gets ttlMs and cacheScope */
  int http_status;        /* for the transport with an error answer */
  /* subscriptions/listen (listen.c): what it honours, its list link */
  int listening;
  unsigned listen_kinds;  /* 1 << pmcp_list_kind */
  const cJSON *listen_uris; /* resourceSubscriptions (in @c doc) */
  const cJSON *listen_tasks; /* taskIds (in @c doc), tasks.c */
  long long listen_since_ms; /* when it began listening (tasks_watch.c) */
  pmcp__req *lnext;
  /* Header claims; valid only while pmcp_server_handle_http() runs. */
  const pmcp_http_claims *claims;
  pmcp__req *next, *prev;
};

/* ---- alloc.c ---- */
void *pmcp__malloc(pmcp_server *srv, size_t n);
void *pmcp__calloc(pmcp_server *srv, size_t n, size_t size);
void *pmcp__realloc(pmcp_server *srv, void *p, size_t n);
void pmcp__free(pmcp_server *srv, void *p);
char *pmcp__strdup(pmcp_server *srv, const char *s);
char *pmcp__strndup(pmcp_server *srv, const char *s, size_t n);

/* ---- log.c ---- */
void pmcp__log(pmcp_server *srv, pmcp_log_level level, const char *fmt, ...)
    PMCP_PRINTF(3, 4);
/* Records the handle's error message; returns @p code for tail calls. */
int pmcp__err(pmcp_server *srv, int code, const char *fmt, ...) PMCP_PRINTF(3, 4);
const char *pmcp__level_name(pmcp_log_level level);
int pmcp__level_parse(const char *name, pmcp_log_level *out);

/* ---- session.c ---- */
/* Finds or (with @p create) opens a session; returns it with a reference
 * taken, or NULL. Caller holds srv->mu. */
pmcp__session *pmcp__session_get_locked(pmcp_server *srv, const char *id,
                                        int create, unsigned flags, void *ud);
void pmcp__session_unref_locked(pmcp_server *srv, pmcp__session *s);
void pmcp__session_unref(pmcp_server *srv, pmcp__session *s);
/* Hands one message to the sink (serialized per session). Dropped when the
 * session has closed. */
void pmcp__send(pmcp_server *srv, pmcp__session *s, const char *related_id,
                pmcp_out_kind kind, const char *data, size_t len, int final);
/* The same with the HTTP status a modern error asks for. */
void pmcp__send_status(pmcp_server *srv, pmcp__session *s, const char *related_id,
                       pmcp_out_kind kind, const char *data, size_t len,
                       int final, int http_status);
/* Sends a notification built from @p method and @p params_json (NULL: none). */
int pmcp__notify(pmcp_server *srv, pmcp__session *s, const char *related_id,
                 const char *method, const char *params_json);
/* Drops every session (server teardown). Caller holds srv->mu. */
void pmcp__sessions_clear_locked(pmcp_server *srv);
/* Frees the sessions kept for reuse (pmcp_server_free, at the end). */
void pmcp__sessions_free_spare(pmcp_server *srv);
/* Subscription set. Caller holds srv->mu. */
int pmcp__session_subscribe_locked(pmcp_server *srv, pmcp__session *s,
                                   const char *uri, int on);
/* Builds the notifications/message params for a log line, or NULL. */
int pmcp__log_params(pmcp_buf *out, pmcp_log_level level, const char *logger,
                     const char *data_json);

/* ---- era.c: the two protocol eras ---- */
/* Decides the era of @p req (method @p method); for a modern request
 * checks its _meta, version, header claims and method. Returns 0 to go
 * on, or -1 after answering the request with an error. */
int pmcp__era_admit(pmcp__req *req, const char *method, cJSON *params);
/* A modern result: resultType, serverInfo in _meta, cache hints. Writes
 * the decorated object to @p out. */
/* Reads one message as pmcp_server_check_message() does (UTF-8, one JSON
 * value), its error message set on failure; the caller unrefs @p doc. */
int pmcp__message_parse(pmcp_server *server, const char *msg, size_t len,
                        struct pmcp__jdoc **doc, cJSON **root);
/* pmcp_server_handle_http() of a message already parsed (@p root in
 * @p doc, read from @p msg): the same checks and dispatch, no parse. */
int pmcp__handle_parsed(pmcp_server *server, const char *session, struct pmcp__jdoc *doc,
                        cJSON *root, const char *msg, size_t len,
                        const pmcp_http_claims *claims);
/* The kind of JSON-RPC item @p m; of the first request (@p first) also
 * its era, version and method (borrowed from @p m), and initialize, into
 * @p info. */
pmcp_msg_kind pmcp__classify_one(const cJSON *m, pmcp_msg_info *info, int first);
/* Appends @p info's strings (borrowed, NULL: "") to @p into, each with its
 * NUL, at *@p pv_off and *@p method_off, and points them at "" until the
 * caller points them into the buffer once it no longer moves. */
int pmcp__msg_info_own(pmcp_msg_info *info, pmcp_buf *into, size_t *pv_off, size_t *method_off);
int pmcp__era_decorate(pmcp__req *req, const char *result, size_t len,
                       pmcp_buf *out);
/* Whether the client of @p req declared capability @p name (modern: the
 * request's _meta; legacy: initialize). Caller holds srv->mu. */
int pmcp__client_has_locked(const pmcp__req *req, const char *name);
void pmcp__method_discover(pmcp__req *req, cJSON *params);
/* The capabilities object of the registered handlers. */
int pmcp__caps_json(pmcp_server *srv, pmcp_buf *b, int modern);

/* ---- listen.c: subscriptions/listen ---- */
void pmcp__method_listen(pmcp__req *req, cJSON *params);

/* ---- tasks.c (io.modelcontextprotocol/tasks) ---- */
int pmcp__tasks_enabled(const pmcp_server *srv);
int pmcp__tasks_declared(const pmcp__req *req);
int pmcp__tasks_internal(const pmcp__session *s);
/* Answers @p req with a new task and starts its call; 0 or PMCP_ENOMEM
 * (then nothing was answered). */
int pmcp__tasks_create(pmcp__req *req, cJSON *params);
void pmcp__tasks_refuse_undeclared(pmcp__req *req, const char *tool);
void pmcp__tasks_capture(pmcp_server *srv, pmcp__session *s, const char *data,
                         size_t len);
void pmcp__tasks_free(pmcp_server *srv);
void pmcp__tasks_renewer_stop(pmcp_server *srv);
void pmcp__method_tasks_get(pmcp__req *req, cJSON *params);
void pmcp__method_tasks_update(pmcp__req *req, cJSON *params);
void pmcp__method_tasks_cancel(pmcp__req *req, cJSON *params);
/* Moves the listeners of @p s (all when NULL) to the ended list. Caller
 * holds srv->mu. */
void pmcp__listen_end_locked(pmcp_server *srv, pmcp__session *s, const char *id);
/* Ends the listeners moved aside: call without srv->mu. */
void pmcp__listen_reap(pmcp_server *srv);
/* Sends @p method to the listeners that asked for @p kind (or, with @p uri,
 * that subscribed to it). */
int pmcp__listen_notify(pmcp_server *srv, unsigned kind, const char *uri,
                        const char *method, const char *uri_params);
/* notifications/tasks with @p params (members, no braces) to the listeners
 * of task @p task_id that belong to its caller @p ud. */
int pmcp__listen_notify_task(pmcp_server *srv, const char *task_id, const void *ud,
                             const char *params);

/* ---- jsonrpc.c ---- */
/* Handles one parsed message (object) of session @p s; @p raw is its text
 * span (for byte-exact ids); @p doc holds @p msg (a request takes a
 * reference to it). */
void pmcp__rpc_dispatch(pmcp_server *srv, pmcp__session *s, pmcp__jdoc *doc,
                        cJSON *msg, const char *raw, size_t raw_len,
                        pmcp__batch *batch, const pmcp_http_claims *claims);
void pmcp__rpc_batch(pmcp_server *srv, pmcp__session *s, pmcp__jdoc *doc,
                     cJSON *arr, const char *raw, size_t raw_len);
/* Sends an error response not tied to a registered request. */
void pmcp__rpc_error(pmcp_server *srv, pmcp__session *s, pmcp__batch *batch,
                     const char *id, int code, const char *msg,
                     const char *data_json);
/* Completes @p req with a result (JSON object text) or an error, then frees
 * it. A cancelled request is freed without an answer. */
void pmcp__req_result(pmcp__req *req, const char *result, size_t len);
/* The same for a result the engine wrote: one compact object ('{' first,
 * '}' last) whose top level has no resultType, _meta nor ttlMs, so a
 * modern result is decorated without reading it again. */
void pmcp__req_result_bare(pmcp__req *req, const char *result, size_t len);
/* Answers @p result (and disposes it) when @p rc is 0, else the
 * out-of-memory error the building of it met. */
void pmcp__req_answer(pmcp__req *req, int rc, pmcp_buf *result);
void pmcp__req_error(pmcp__req *req, int code, const char *msg,
                     const char *data_json);
void pmcp__req_errorf(pmcp__req *req, int code, const char *fmt, ...)
    PMCP_PRINTF(3, 4);
/* Frees @p req without any answer (cancelled or server closing). */
void pmcp__req_drop(pmcp__req *req);

/* ---- server.c: method handlers take the request and own nothing else;
 * each must end the request (result, error or drop), possibly later from a
 * worker after detaching what it needs from @p params. ---- */
typedef void (*pmcp__method_fn)(pmcp__req *req, cJSON *params);
void pmcp__method_initialize(pmcp__req *req, cJSON *params);
/* Whether the session negotiated @p version or later. */
int pmcp__proto_at_least(const pmcp__session *s, const char *version);

/* ---- tools.c ---- */
void pmcp__method_tools_list(pmcp__req *req, cJSON *params);
void pmcp__method_tools_call(pmcp__req *req, cJSON *params);

/* ---- resources.c ---- */
void pmcp__method_resources_list(pmcp__req *req, cJSON *params);
void pmcp__method_resources_templates_list(pmcp__req *req, cJSON *params);
void pmcp__method_resources_read(pmcp__req *req, cJSON *params);
void pmcp__method_resources_subscribe(pmcp__req *req, cJSON *params);
void pmcp__method_resources_unsubscribe(pmcp__req *req, cJSON *params);

/* ---- prompts.c ---- */
void pmcp__method_prompts_list(pmcp__req *req, cJSON *params);
void pmcp__method_prompts_get(pmcp__req *req, cJSON *params);
void pmcp__method_complete(pmcp__req *req, cJSON *params);
/* skills.c */
void pmcp__method_skills_list(pmcp__req *req, cJSON *params);
void pmcp__method_skills_get(pmcp__req *req, cJSON *params);

/* ---- request.c: server-to-client requests ---- */
/* Routes a client response (@p msg has no method). */
void pmcp__response_route(pmcp_server *srv, pmcp__session *s, cJSON *msg);
/* Wakes whatever @p req waits on (cancellation). Caller holds srv->mu. */
void pmcp__req_wake_locked(pmcp__req *req);

/* ---- pagination (registry.c) ---- */
/* Parses params.cursor for list @p tag; sets *offset. -32602 on error. */
int pmcp__page_start(pmcp__req *req, cJSON *params, char tag, size_t count,
                     size_t *offset);
/* Appends ,"nextCursor":"..." when more remains. */
int pmcp__page_next(pmcp_buf *out, char tag, size_t next, size_t count);

#endif
