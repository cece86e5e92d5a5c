/* SPDX-License-Identifier: MIT */
/**
 * @file common.h
 * Export macros, C++ guards, the allocator and the log callback shared by
 * every libprobemcp header.
 */
#ifndef PROBEMCP_COMMON_H
#define PROBEMCP_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define PMCP_BEGIN_DECLS extern "C" {
#define PMCP_END_DECLS }
#else
#define PMCP_BEGIN_DECLS
#define PMCP_END_DECLS
#endif

#if defined(__GNUC__) || defined(__clang__)
#define PMCP_API __attribute__((visibility("default")))
#define PMCP_DEPRECATED __attribute__((deprecated))
#define PMCP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PMCP_API
#define PMCP_DEPRECATED
#define PMCP_PRINTF(f, a)
#endif

PMCP_BEGIN_DECLS

/**
 * A custom allocator (zstd's model: one per object, not global).
 * A NULL allocator pointer anywhere in the API means malloc/realloc/free.
 *
 * What it covers, and what it does not: a server's allocator
 * (pmcp_server_options.allocator) serves the engine's long-lived
 * structures: the server object and its info strings, the registrations
 * (tools, resources, prompts, skills, their schemas and cached lists),
 * sessions, the worker queue, subscriptions, and the parsed request
 * documents. Everything else uses malloc/realloc/free: the per-call state
 * (call contexts, result items, pages, cursors, tasks), every pmcp_buf
 * (which is why pmcp_buf_dispose() frees with free()), the tokenizer,
 * the store, the toolsets and the transports. The library never calls
 * cJSON_InitHooks: cJSON's own allocations use the process-wide cJSON
 * hooks. So an allocator can account for and bound a server's standing
 * memory, not be its only source of memory.
 */
typedef struct pmcp_allocator {
  void *(*malloc_fn)(size_t size, void *ud);
  void *(*realloc_fn)(void *ptr, size_t size, void *ud);
  void (*free_fn)(void *ptr, void *ud);
  void *ud;
} pmcp_allocator;

/** Log levels: the eight syslog levels MCP's logging uses, low to high. */
typedef enum pmcp_log_level {
  PMCP_LOG_DEBUG = 0,
  PMCP_LOG_INFO = 1,
  PMCP_LOG_NOTICE = 2,
  PMCP_LOG_WARNING = 3,
  PMCP_LOG_ERROR = 4,
  PMCP_LOG_CRITICAL = 5,
  PMCP_LOG_ALERT = 6,
  PMCP_LOG_EMERGENCY = 7
} pmcp_log_level;

/**
 * Log callback. @p msg is a NUL-terminated line without a newline, valid
 * only during the call. It may be called from any thread the library runs
 * work on; it must not call back into libprobemcp.
 */
typedef void (*pmcp_log_fn)(pmcp_log_level level, const char *msg, void *ud);

/**
 * An owned, growable byte string handed to the caller. @c ptr is
 * NUL-terminated (the NUL is not counted in @c len). Release with
 * pmcp_buf_dispose(); a zeroed buf ({0}) is empty and valid.
 */
typedef struct pmcp_buf {
  char *ptr;
  size_t len;
  size_t cap;
} pmcp_buf;

#define PMCP_BUF_INIT {NULL, 0, 0}

/** Frees the contents of @p buf (malloc'd) and zeroes it. NULL is allowed. */
PMCP_API void pmcp_buf_dispose(pmcp_buf *buf);

/* Appending to a pmcp_buf (a zeroed one included): each keeps @c ptr
 * NUL-terminated and returns 0, or PMCP_ENOMEM (PMCP_EINVAL for a format
 * vsnprintf refuses), having appended nothing (pmcp_buf_json_string: maybe
 * part of the literal). Numbers are formatted in the C locale whatever the
 * process's locale. Release with pmcp_buf_dispose(). */
/** Makes room for @p extra more bytes (and the NUL). */
PMCP_API int pmcp_buf_reserve(pmcp_buf *b, size_t extra);
/** Appends @p len bytes of @p data. */
PMCP_API int pmcp_buf_append(pmcp_buf *b, const void *data, size_t len);
/** Appends the string @p s. */
PMCP_API int pmcp_buf_puts(pmcp_buf *b, const char *s);
/** Appends the byte @p c. */
PMCP_API int pmcp_buf_putc(pmcp_buf *b, char c);
/** Appends printf-formatted text. */
PMCP_API int pmcp_buf_printf(pmcp_buf *b, const char *fmt, ...) PMCP_PRINTF(2, 3);
/** The same with a va_list (consumed, as vsnprintf does). */
PMCP_API int pmcp_buf_vprintf(pmcp_buf *b, const char *fmt, va_list ap) PMCP_PRINTF(2, 0);
/** Appends @p len bytes of @p s as a JSON string literal (quoted, with
 *  '"', '\\' and control characters escaped; other bytes as they are). */
PMCP_API int pmcp_buf_json_string(pmcp_buf *b, const char *s, size_t len);

/** The library's version string, e.g. "0.1.0" (equals PMCP_VERSION_STRING
 *  of the headers it was built with). */
PMCP_API const char *pmcp_version(void);

/** The library's version as a number, 0xMMmmpp (PMCP_VERSION_HEX of the
 *  headers it was built with): compare it with PMCP_VERSION_HEX, or with
 *  ((maj << 16) | (min << 8) | pat), at run time. */
PMCP_API unsigned long pmcp_version_number(void);

/** Parts of the library a host may ask for at run time with pmcp_has().
 *  Values are never reused; a library older than the headers answers 0 for
 *  the ones it does not know. */
typedef enum pmcp_feature {
  /** PostgreSQL stores (libpq is loaded on the first connection). */
  PMCP_FEATURE_POSTGRES = 1,
  /** Remote fetches: embeddings and paper search (libcurl, loaded on
   *  first use). */
  PMCP_FEATURE_REMOTE = 2,
  /** PNG charts in the toolsets (render "png"). */
  PMCP_FEATURE_CHARTS = 3,
  /** MCP tasks (pmcp_tasks(3)). */
  PMCP_FEATURE_TASKS = 4,
  /** Numbers written and read with '.' whatever LC_NUMERIC the host set. */
  PMCP_FEATURE_C_NUMERIC = 5,
  /** Tool and prompt definitions carry their element sizes (tool
   *  definition version 2, prompt definition version 2). */
  PMCP_FEATURE_SIZED_SPECS = 6
} pmcp_feature;

/** 1 when this build of the library has @p feature, 0 when it does not or
 *  does not know it. A library loaded on first use may still be missing
 *  at run time: the call that needs it says so. */
PMCP_API int pmcp_has(pmcp_feature feature);

PMCP_END_DECLS

#endif
