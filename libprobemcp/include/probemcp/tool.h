/* SPDX-License-Identifier: MIT */
/**
 * @file tool.h
 * Tools, resources, prompts and completions, and the call context their
 * handlers receive.
 *
 * A tool declares its arguments per *mode*: the engine builds the JSON Schema
 * from the declaration and validates every call before the handler runs
 * (types, bounds, enums, required arguments, and arguments the chosen mode
 * does not read). Handlers receive typed arguments through pmcp_arg_*(),
 * never raw JSON, and build their result through pmcp_result_*().
 */
#ifndef PROBEMCP_TOOL_H
#define PROBEMCP_TOOL_H

#include "common.h"
#include "error.h"
#include "server.h"
#include "tool_error.h"

PMCP_BEGIN_DECLS

/** The context of one handler invocation (tool call, resource read, prompt
 *  get, completion). Owned by the engine; valid until the handler returns. */
typedef struct pmcp_call pmcp_call;

/** Argument types. */
typedef enum pmcp_type {
  PMCP_T_STRING = 1,
  PMCP_T_INTEGER = 2,
  PMCP_T_NUMBER = 3,
  PMCP_T_BOOLEAN = 4,
  PMCP_T_OBJECT = 5,        /**< any JSON object, read with pmcp_arg_json() */
  PMCP_T_STRING_ARRAY = 6,  /**< array of strings */
  PMCP_T_NUMBER_ARRAY = 7,  /**< array of numbers */
  PMCP_T_ARRAY = 8,         /**< array of anything, read with pmcp_arg_json() */
  PMCP_T_STRING_OR_STRING_ARRAY = 9, /**< "a" or ["a","b"] */
  PMCP_T_ANY = 10           /**< any JSON value, read with pmcp_arg_json() */
} pmcp_type;

/** One argument. Strings are copied at registration. */
typedef struct pmcp_arg_spec {
  const char *name;
  pmcp_type type;
  int required;
  const char *description;
  /** Bounds: for numbers the value; for strings the length in characters;
   *  for arrays the item count. Only used where has_min / has_max is set. */
  int has_min, has_max;
  double min, max;
  /** NULL-terminated list of allowed strings (strings and string arrays). */
  const char *const *enum_values;
  /** JSON text of the default advertised in the schema (and reported by
   *  pmcp_arg_* when the argument is absent), or NULL. */
  const char *default_json;
} pmcp_arg_spec;

/** One mode of a tool: the arguments it reads besides `mode` itself. */
typedef struct pmcp_mode_spec {
  const char *name;
  const char *description;
  const pmcp_arg_spec *args;
  size_t n_args;
} pmcp_mode_spec;

/** Handler of a tool. Returns 0 having built a result (an isError result is
 *  still 0); a negative code makes the engine answer with a JSON-RPC error
 *  (PMCP_ECANCELLED: no answer, the call was cancelled). */
typedef int (*pmcp_tool_fn)(pmcp_call *call, void *ud);

/** Tool flags. */
enum {
  /** May block (I/O, server-to-client requests, long work): runs on the
   *  worker pool so ping and cancellation are never stuck behind it. */
  PMCP_TOOL_BLOCKING = 1u << 0,
  /** Takes `token_budget` (512-8000, default 2000) and `cursor` in every
   *  mode; the engine checks the result's one text item against the budget
   *  (see budget.h). */
  PMCP_TOOL_BUDGETED = 1u << 1,
  /** Open-web work (papers, web pages): runs on the worker pool like
   *  PMCP_TOOL_BLOCKING, but at most a bounded share of the workers runs
   *  such calls at once, so a burst of them never makes other tools queue
   *  behind it. The share is PROBE_MCP_WEB_CAPACITY from the environment
   *  at pmcp_server_new(): a fraction of the pool in (0, 1] (default 0.25)
   *  or a whole number of workers; at least one, and never the whole pool
   *  when it has more than one worker. */
  PMCP_TOOL_OPEN_WEB = 1u << 2,
  /** May run as a task (io.modelcontextprotocol/tasks, 2026-07-28): for a
   *  request that declared the extension, tools/call is answered at once
   *  with a task and the handler runs in it; otherwise the call runs as
   *  usual. See pmcp_tasks(3). */
  PMCP_TOOL_TASK = 1u << 3,
  /** Runs only as a task: a request that did not declare the extension is
   *  refused (-32021). Without PMCP_TOOL_TASK the handler itself decides
   *  when the call becomes a task, with pmcp_call_task() (for instance
   *  once the input it asked for has come). */
  PMCP_TOOL_TASK_REQUIRED = 1u << 4,
  /** With PMCP_TOOL_BUDGETED: the tool pages its answers itself with
   *  `offset` and the `next_offset` it returns, so it takes no `cursor`
   *  and its `token_budget` says to continue with next_offset. */
  PMCP_TOOL_OFFSET_PAGED = 1u << 5,
  /** May become a task when its handler says so with pmcp_call_task()
   *  (for a request that declared io.modelcontextprotocol/tasks), for the
   *  calls it knows to be long (say, one mode of several); every other
   *  call, and every client without the extension, gets the synchronous
   *  result. See pmcp_tasks(3). */
  PMCP_TOOL_TASK_ON_DEMAND = 1u << 6
};

/** Annotation hints: absent, false or true. */
typedef enum pmcp_hint {
  PMCP_HINT_UNSET = 0,
  PMCP_HINT_FALSE = 1,
  PMCP_HINT_TRUE = 2
} pmcp_hint;

/** 2: mode_spec_size and arg_spec_size. Version 1 definitions are still
 *  accepted (their arrays have the first layouts). */
#define PMCP_TOOL_DEF_VERSION 2

/** A tool declaration; pmcp_server_add_tool() copies everything. */
typedef struct pmcp_tool_def {
  unsigned version;            /**< PMCP_TOOL_DEF_VERSION */
  const char *name;            /**< required, unique */
  const char *title;
  const char *description;
  /** Modes. With n_modes > 0 the tool takes a string `mode` whose values are
   *  the mode names, required unless default_mode names one. */
  const pmcp_mode_spec *modes;
  size_t n_modes;
  const char *default_mode;
  /** Arguments common to every mode (or all arguments of a mode-less tool). */
  const pmcp_arg_spec *args;
  size_t n_args;
  /** A literal inputSchema (JSON text), kept exactly as written. When set,
   *  modes/args must be empty; the engine checks only that arguments are an
   *  object, and handlers read them with pmcp_arg_json(). */
  const char *input_schema_json;
  /** outputSchema (JSON text) or NULL; kept exactly as written. */
  const char *output_schema_json;
  pmcp_hint read_only, destructive, idempotent, open_world;
  unsigned flags;              /**< PMCP_TOOL_* */
  pmcp_tool_fn handler;        /**< required */
  void *ud;
  /** Frees @c ud when the tool is dropped, and also when adding fails. */
  void (*ud_free)(void *ud);
  /** Version 2: sizeof(pmcp_mode_spec) and sizeof(pmcp_arg_spec) as the
   *  caller was compiled (PMCP_TOOL_DEF_INIT sets them), so that the
   *  element structs of @c modes and @c args can grow at their end in a
   *  later release; 0 means the first layouts. */
  size_t mode_spec_size;
  size_t arg_spec_size;
} pmcp_tool_def;

#define PMCP_TOOL_DEF_INIT {PMCP_TOOL_DEF_VERSION, NULL, NULL, NULL, NULL, 0, \
    NULL, NULL, 0, NULL, NULL, PMCP_HINT_UNSET, PMCP_HINT_UNSET,           \
    PMCP_HINT_UNSET, PMCP_HINT_UNSET, 0, NULL, NULL, NULL,                 \
    sizeof(pmcp_mode_spec), sizeof(pmcp_arg_spec)}

/**
 * Registers a tool.
 * @return 0; PMCP_EINVAL (missing name or handler, bad schema JSON, duplicate
 *         argument, a mode named twice; detail in pmcp_server_errmsg());
 *         PMCP_EEXIST (name taken); PMCP_ENOMEM.
 */
PMCP_API int pmcp_server_add_tool(pmcp_server *server, const pmcp_tool_def *def);

/** Copies the inputSchema the engine built (or was given) for @p tool into
 *  @p out. @return 0, PMCP_ENOTFOUND, PMCP_ENOMEM. */
PMCP_API int pmcp_server_tool_schema(pmcp_server *server, const char *tool, pmcp_buf *out);

/** Decides whether a session sees a tool: @p session_ud is the @c ud given
 *  to pmcp_server_session_open() (NULL for implicit sessions). Return
 *  non-zero to show the tool. Called from any thread; must not call back
 *  into libprobemcp. */
typedef int (*pmcp_tool_filter_fn)(const char *tool, void *session_ud, void *ud);

/**
 * Tailors the tools each session sees (an API key's scope, a tenant's
 * toolsets). A hidden tool is left out of tools/list and a tools/call of it
 * is answered exactly like a call of a tool that does not exist. Set it
 * before the first message, like registrations.
 * @return 0; PMCP_EMISUSE (after the first message). @p ud_free runs when
 *         the filter is replaced or the server freed, and on failure.
 * @since 0.1
 */
PMCP_API int pmcp_server_set_tool_filter(pmcp_server *server, pmcp_tool_filter_fn fn,
                                         void *ud, void (*ud_free)(void *ud));

/** 1 when @p server has a tool named @p tool whose read_only hint is
 *  PMCP_HINT_TRUE, else 0 (also for an unknown tool): what a tool filter
 *  asks to tell reading tools from writing ones. Any thread, once
 *  registrations are done. */
PMCP_API int pmcp_server_tool_read_only(const pmcp_server *server, const char *tool);

/* ---- Resources ---------------------------------------------------------- */

/** Reads a resource: add contents with pmcp_result_resource_text/blob();
 *  pmcp_call_uri() is the URI asked for. Return PMCP_ENOTFOUND for an
 *  unknown URI (answered as -32002 "Resource not found"). */
typedef int (*pmcp_read_fn)(pmcp_call *call, void *ud);

#define PMCP_RESOURCE_DEF_VERSION 1
typedef struct pmcp_resource_def {
  unsigned version;
  const char *uri;          /**< a fixed resource; or NULL with uri_template */
  const char *uri_template; /**< RFC 6570 level-1 template, e.g. test://x/{id} */
  const char *name;
  const char *title;
  const char *description;
  const char *mime_type;
  unsigned flags;           /**< PMCP_TOOL_BLOCKING allowed */
  pmcp_read_fn read;
  void *ud;
  void (*ud_free)(void *ud);
} pmcp_resource_def;
#define PMCP_RESOURCE_DEF_INIT {PMCP_RESOURCE_DEF_VERSION, NULL, NULL, NULL, \
    NULL, NULL, NULL, 0, NULL, NULL, NULL}

/** Registers a resource or a resource template. @return 0, PMCP_EINVAL,
 *  PMCP_EEXIST, PMCP_ENOMEM. */
PMCP_API int pmcp_server_add_resource(pmcp_server *server, const pmcp_resource_def *def);

/** The MIME type of an MCP App (io.modelcontextprotocol/ui): an HTML page a
 *  host renders beside a tool's result. A server with a resource of this
 *  type offers the extension in its capabilities. */
#define PMCP_MIME_MCP_APP "text/html;profile=mcp-app"

/**
 * Gives a registered resource or resource template a `_meta` object
 * (minified JSON text): shown in its resources/list (or templates) entry
 * and put on each content item of a resources/read whose URI is the one
 * read. An MCP App declares its content security policy there
 * ({"ui":{"csp":{...},"prefersBorder":true}}). NULL removes it. Before
 * the first message, like registrations.
 * @param[in] uri the resource's URI, or the template as registered.
 * @return 0; PMCP_ENOTFOUND (no such resource); PMCP_EINVAL (not a JSON
 *         object); PMCP_EMISUSE (after the first message); PMCP_ENOMEM.
 * @since 0.2
 */
PMCP_API int pmcp_server_set_resource_meta(pmcp_server *server, const char *uri,
                                           const char *meta_json);

/**
 * Gives a registered tool a `_meta` object (minified JSON text), shown in
 * its tools/list entry: {"ui":{"resourceUri":"ui://..."}} points hosts
 * with MCP Apps at the resource that renders the tool's results (hosts
 * without them ignore it; results are unchanged). NULL removes it. Before
 * the first message, like registrations.
 * @return 0; PMCP_ENOTFOUND (no such tool); PMCP_EINVAL (not a JSON
 *         object); PMCP_EMISUSE (after the first message); PMCP_ENOMEM.
 * @since 0.2
 */
PMCP_API int pmcp_server_set_tool_meta(pmcp_server *server, const char *tool,
                                       const char *meta_json);

/* ---- Prompts ------------------------------------------------------------ */

typedef struct pmcp_prompt_arg {
  const char *name;
  const char *description;
  int required;
} pmcp_prompt_arg;

/** Builds a prompt: read arguments with pmcp_arg_string(), add messages with
 *  pmcp_prompt_*(). */
typedef int (*pmcp_prompt_fn)(pmcp_call *call, void *ud);

/** 2: arg_size. Version 1 definitions are still accepted. */
#define PMCP_PROMPT_DEF_VERSION 2
typedef struct pmcp_prompt_def {
  unsigned version;
  const char *name;
  const char *title;
  const char *description;
  const pmcp_prompt_arg *args;
  size_t n_args;
  pmcp_prompt_fn get;
  void *ud;
  void (*ud_free)(void *ud);
  /** Version 2: sizeof(pmcp_prompt_arg) as the caller was compiled
   *  (PMCP_PROMPT_DEF_INIT sets it), so it can grow; 0: the first layout. */
  size_t arg_size;
} pmcp_prompt_def;
#define PMCP_PROMPT_DEF_INIT {PMCP_PROMPT_DEF_VERSION, NULL, NULL, NULL, NULL, \
    0, NULL, NULL, NULL, sizeof(pmcp_prompt_arg)}

PMCP_API int pmcp_server_add_prompt(pmcp_server *server, const pmcp_prompt_def *def);

/* ---- Completion --------------------------------------------------------- */

/** Completes an argument of a prompt (ref type "ref/prompt", @p ref_name the
 *  prompt's name) or of a resource template ("ref/resource", the template).
 *  Add values with pmcp_complete_value(); context arguments are readable with
 *  pmcp_arg_string(). */
typedef int (*pmcp_complete_fn)(pmcp_call *call, const char *ref_type,
                                const char *ref_name, const char *arg_name,
                                const char *value, void *ud);

/** Sets the one completion handler (replacing any before). */
PMCP_API int pmcp_server_set_completion(pmcp_server *server, pmcp_complete_fn fn,
                                        void *ud, void (*ud_free)(void *ud));

/* ---- Reading arguments -------------------------------------------------- */

/** The chosen mode ("" for mode-less tools). Borrowed. */
PMCP_API const char *pmcp_call_mode(const pmcp_call *call);
/** True when the caller passed @p name. */
PMCP_API int pmcp_arg_has(const pmcp_call *call, const char *name);
/** Reads a string argument (or its declared default). @p len may be NULL.
 *  Borrowed until the handler returns.
 *  @return 0; PMCP_ENOTFOUND (absent, no default); PMCP_EINVAL (other type). */
PMCP_API int pmcp_arg_string(const pmcp_call *call, const char *name,
                             const char **out, size_t *len);
PMCP_API int pmcp_arg_int(const pmcp_call *call, const char *name, int64_t *out);
PMCP_API int pmcp_arg_number(const pmcp_call *call, const char *name, double *out);
PMCP_API int pmcp_arg_bool(const pmcp_call *call, const char *name, int *out);
/** Number of items of an array argument (a lone string counts as 1 for
 *  PMCP_T_STRING_OR_STRING_ARRAY); 0 when absent. */
PMCP_API size_t pmcp_arg_count(const pmcp_call *call, const char *name);
PMCP_API int pmcp_arg_string_at(const pmcp_call *call, const char *name, size_t i,
                                const char **out);
PMCP_API int pmcp_arg_number_at(const pmcp_call *call, const char *name, size_t i,
                                double *out);
/** Compact JSON text of any argument; with @p name NULL, of the whole
 *  arguments object. Borrowed until the handler returns. */
PMCP_API int pmcp_arg_json(const pmcp_call *call, const char *name, const char **out);

/* Typed access to enums, arrays and objects (@since 0.2): no re-parsing of
 * JSON text and no strcmp() chains in the handler. Strings, keys and JSON
 * text are borrowed until the handler returns. */

/** The index of the chosen mode among the tool's declared modes (the
 *  order of pmcp_tool_def.modes), for a switch in place of comparing
 *  names. @return 0; PMCP_ENOTFOUND (a mode-less tool, or not a tool
 *  call); PMCP_EINVAL (NULL). @since 0.2 */
PMCP_API int pmcp_call_mode_index(const pmcp_call *call, size_t *out);
/** The index of a string argument's value (or its declared default) in the
 *  argument's enum_values, in their declared order.
 *  @return 0; PMCP_ENOTFOUND (absent, no default); PMCP_EINVAL (not a
 *  string, the argument declares no enum_values, or the value is none of
 *  them). @since 0.2 */
PMCP_API int pmcp_arg_enum(const pmcp_call *call, const char *name, size_t *out);
/** The same for item @p i of a string-array argument (a lone string of a
 *  PMCP_T_STRING_OR_STRING_ARRAY is item 0). @return as pmcp_arg_enum();
 *  PMCP_ENOTFOUND also past the last item. @since 0.2 */
PMCP_API int pmcp_arg_enum_at(const pmcp_call *call, const char *name, size_t i,
                              size_t *out);
/** Compact JSON text of item @p i of an array argument (PMCP_T_ARRAY
 *  items of any type). @return 0; PMCP_ENOTFOUND (absent, or past the
 *  last item); PMCP_EINVAL (not an array); PMCP_ENOMEM. @since 0.2 */
PMCP_API int pmcp_arg_json_at(const pmcp_call *call, const char *name, size_t i,
                              const char **out);
/** Number of members of an object argument; 0 when absent or not an
 *  object. @since 0.2 */
PMCP_API size_t pmcp_arg_member_count(const pmcp_call *call, const char *name);
/** The key of member @p i of an object argument, in the caller's order.
 *  @return 0; PMCP_ENOTFOUND (absent, or past the last member);
 *  PMCP_EINVAL (not an object). @since 0.2 */
PMCP_API int pmcp_arg_member_key(const pmcp_call *call, const char *name, size_t i,
                                 const char **out);
/** Member @p key of an object argument as a string, a number or compact
 *  JSON text (any type). @return 0; PMCP_ENOTFOUND (the argument or the
 *  member is absent); PMCP_EINVAL (the argument is not an object, or the
 *  member has another type); PMCP_ENOMEM (json). @since 0.2 */
PMCP_API int pmcp_arg_member_string(const pmcp_call *call, const char *name,
                                    const char *key, const char **out);
PMCP_API int pmcp_arg_member_number(const pmcp_call *call, const char *name,
                                    const char *key, double *out);
PMCP_API int pmcp_arg_member_json(const pmcp_call *call, const char *name,
                                  const char *key, const char **out);

/* ---- Building results --------------------------------------------------- */

/** Appends a text content item (or, in a prompt, see pmcp_prompt_*). */
PMCP_API int pmcp_result_text(pmcp_call *call, const char *text, size_t len);
/** Appends an image (base64 data) / audio content item. */
PMCP_API int pmcp_result_image(pmcp_call *call, const char *base64, const char *mime);
PMCP_API int pmcp_result_audio(pmcp_call *call, const char *base64, const char *mime);
/** Appends an embedded resource with text (in a resource read: a content). */
PMCP_API int pmcp_result_resource_text(pmcp_call *call, const char *uri,
                                       const char *mime, const char *text);
PMCP_API int pmcp_result_resource_blob(pmcp_call *call, const char *uri,
                                       const char *mime, const char *base64);
/** Appends a resource_link content item. */
PMCP_API int pmcp_result_resource_link(pmcp_call *call, const char *uri,
                                       const char *name, const char *description,
                                       const char *mime);
/** Sets structuredContent (a JSON object, text). @return PMCP_EINVAL if it
 *  is not a JSON object. */
PMCP_API int pmcp_result_structured(pmcp_call *call, const char *json, size_t len);
/** Marks the result isError. */
PMCP_API void pmcp_result_set_error(pmcp_call *call, int is_error);
/** 1 when the result is marked isError so far (pmcp_result_set_error(),
 *  pmcp_result_errorf()), else 0: what a wrapper of a handler reads after
 *  it ran. */
PMCP_API int pmcp_result_is_error(const pmcp_call *call);
/** Replaces the content with one text item holding @p message and sets
 *  isError. PMCP_PRINTF-style. */
PMCP_API int pmcp_result_errorf(pmcp_call *call, const char *fmt, ...) PMCP_PRINTF(2, 3);

/** Prompt messages (role "user" or "assistant"). */
PMCP_API int pmcp_prompt_text(pmcp_call *call, const char *role, const char *text);
PMCP_API int pmcp_prompt_image(pmcp_call *call, const char *role,
                               const char *base64, const char *mime);
PMCP_API int pmcp_prompt_resource(pmcp_call *call, const char *role, const char *uri,
                                  const char *mime, const char *text);
/** Sets the prompt result's description. */
PMCP_API int pmcp_prompt_description(pmcp_call *call, const char *text);

/** Completion values (at most 100 are sent) and the optional total. */
PMCP_API int pmcp_complete_value(pmcp_call *call, const char *value);
PMCP_API void pmcp_complete_total(pmcp_call *call, int64_t total, int has_more);

/* ---- Call context ------------------------------------------------------- */

/** Asks the client for input under @p key (a name of the handler's choice,
 *  unique within the call) with request @p method (sampling/createMessage,
 *  elicitation/create, roots/list) and @p params_json, the same way in both
 *  eras: in a 2025-11-25 session it is pmcp_call_request() (a blocking
 *  handler waits for the answer); for a 2026-07-28 request the answer comes
 *  from the request's inputResponses (or the sealed requestState of an
 *  earlier round) and, when it is not there yet, the call returns
 *  PMCP_EINPUT: ask for every other input you need the same way, then
 *  return PMCP_EINPUT, and the engine answers input_required with every
 *  request asked for; the client calls again with the answers.
 *  @return 0 with the client's result object in @p out; PMCP_EINPUT;
 *  PMCP_EUNSUPPORTED when the client did not declare the capability (never
 *  asked; for a modern request the engine then answers -32021); the
 *  errors of pmcp_call_request(). @since 0.2 */
PMCP_API int pmcp_call_input(pmcp_call *call, const char *key, const char *method,
                             const char *params_json, int timeout_ms, pmcp_buf *out);

PMCP_API pmcp_server *pmcp_call_server(const pmcp_call *call);
/** The session id ("" for the default session). Borrowed. */
PMCP_API const char *pmcp_call_session(const pmcp_call *call);
/** The @c ud given to pmcp_server_session_open(), or NULL. */
PMCP_API void *pmcp_call_session_ud(const pmcp_call *call);
/** The tool name, prompt name or resource URI. Borrowed. */
PMCP_API const char *pmcp_call_name(const pmcp_call *call);
/** The resource URI asked for (resource reads). Borrowed. */
PMCP_API const char *pmcp_call_uri(const pmcp_call *call);
/** For a resource template read: the value of template variable @p var. */
PMCP_API const char *pmcp_call_uri_var(const pmcp_call *call, const char *var);
/** Non-zero once the client cancelled the request (or the session closed);
 *  a handler that sees it should stop and return PMCP_ECANCELLED. */
PMCP_API int pmcp_call_cancelled(const pmcp_call *call);
/** Moves a tools/call into a task (PMCP_TOOL_TASK, PMCP_TOOL_TASK_REQUIRED
 *  or PMCP_TOOL_TASK_ON_DEMAND tools, 2026-07-28 requests that declared
 *  io.modelcontextprotocol/tasks).
 *  @return 0: go on, the handler already runs in a task or the call cannot
 *  become one (it stays synchronous); 1: return 0 from the handler now, the
 *  engine answers with a task and runs the handler again inside it, with the
 *  same arguments and the input gathered so far. */
PMCP_API int pmcp_call_task(pmcp_call *call);
/** Sends notifications/progress if the request carried a progressToken
 *  (otherwise does nothing and returns 0). @p total < 0: no total;
 *  @p message may be NULL. */
PMCP_API int pmcp_call_progress(pmcp_call *call, double progress, double total,
                                const char *message);
/** Sends notifications/message for this request when the session's level
 *  admits @p level. @p data_json is a JSON value. */
PMCP_API int pmcp_call_log(pmcp_call *call, pmcp_log_level level, const char *logger,
                           const char *data_json);
/** True when the client declared capability @p name at initialize
 *  ("sampling", "elicitation", "roots"). */
PMCP_API int pmcp_call_client_has(const pmcp_call *call, const char *name);
/**
 * Sends a request to the client (e.g. "sampling/createMessage",
 * "elicitation/create", "roots/list") and waits for its response, which
 * arrives through pmcp_server_handle() on any thread. Only allowed in a
 * PMCP_TOOL_BLOCKING handler.
 * @param params_json the params object as JSON text.
 * @param timeout_ms 0: no limit beyond cancellation.
 * @param[out] out the result object's JSON text; on PMCP_EREMOTE the error
 *             object's JSON text.
 * @return 0; PMCP_EREMOTE; PMCP_ETIMEOUT; PMCP_ECANCELLED; PMCP_EIO (the
 *         client's input ended: pmcp_server_session_end_input()); PMCP_EMISUSE
 *         (not on a worker); PMCP_EINVAL.
 */
PMCP_API int pmcp_call_request(pmcp_call *call, const char *method,
                               const char *params_json, int timeout_ms,
                               pmcp_buf *out);
/** Asks the transport to close the stream that carries this call's
 *  messages now (an SSE response of Streamable HTTP); the call goes on and
 *  its later messages are kept for the client to resume with Last-Event-ID.
 *  Emits a PMCP_OUT_CLOSE_STREAM through the sink; transports without such
 *  streams ignore it. @return 0; PMCP_ENOMEM. */
PMCP_API int pmcp_call_close_stream(pmcp_call *call);
/** The call's token budget (PMCP_TOOL_BUDGETED tools; else 0). */
PMCP_API int pmcp_call_token_budget(const pmcp_call *call);

/* ------------------------------------------------------------------ */
/* Call scopes: which workspace a call acts in                        */

/** The workspace a call acts in, as a host that authenticates its callers
 *  decides it (probe-mcp-http: the API key's workspace, or the signed-in
 *  connection's). An opaque handle the library owns and passes to the
 *  host's pmcp_scope_fn, which fills it with the setters below; they copy
 *  their strings, so the scope's parts have no length limit and the
 *  handle can grow new parts without breaking the ABI. (Release 0.1 had a
 *  struct of fixed-size strings here; hooks given through options of the
 *  older versions that name it are still served, see
 *  pmcp_research_options.) @since 0.2 */
typedef struct pmcp_call_scope pmcp_call_scope;

/** The workspace id; NULL or "": every workspace of the toolset's tenant.
 *  @return 0; PMCP_EINVAL (@p scope NULL); PMCP_ENOMEM (the scope keeps
 *  its previous value). @since 0.2 */
PMCP_API int pmcp_call_scope_set_workspace(pmcp_call_scope *scope, const char *workspace);
/** The caller's role there ("viewer", "editor", "admin"), or NULL/"".
 *  @return as pmcp_call_scope_set_workspace(). @since 0.2 */
PMCP_API int pmcp_call_scope_set_role(pmcp_call_scope *scope, const char *role);
/** Who the call is for ("key:ID", "user:ID"), or NULL/"" when the host
 *  does not say: long calls are bounded per principal (query_sql).
 *  @return as pmcp_call_scope_set_workspace(). @since 0.2 */
PMCP_API int pmcp_call_scope_set_principal(pmcp_call_scope *scope, const char *principal);
/** What was set, "" when nothing (or @p scope is NULL); valid until the
 *  part is set again or the hook's caller is done with the scope.
 *  @since 0.2 */
PMCP_API const char *pmcp_call_scope_workspace(const pmcp_call_scope *scope);
PMCP_API const char *pmcp_call_scope_role(const pmcp_call_scope *scope);
PMCP_API const char *pmcp_call_scope_principal(const pmcp_call_scope *scope);

/**
 * Called by the research and tracking tools at the start of every call:
 * @p asked is the call's `workspace` argument, or NULL when it has none.
 * Fill @p out (empty on entry; pmcp_call_scope_set_workspace() and the
 * other setters) and return 0, or return a negative code with a message in
 * @p msg (sent to the caller as the tool's error: it must not tell whether
 * a workspace the caller may not use exists). Called from any thread.
 */
typedef int (*pmcp_scope_fn)(pmcp_call *call, const char *asked, pmcp_call_scope *out,
                             char *msg, size_t msg_size, void *ud);

/**
 * For list_workspaces: append to @p out a JSON object naming each
 * workspace the caller may act in with the caller's role there
 * ({"default":"editor","vision":"viewer"}). Return 0 or a negative code.
 */
typedef int (*pmcp_scope_list_fn)(pmcp_call *call, pmcp_buf *out, void *ud);

PMCP_END_DECLS

#endif
