/**
 * @file common.h
 * Export macros, C++ guards, the allocator and the log callback shared by
 * every libprobemcp header.
 */
#ifndef PROBEMCP_COMMON_H
#define PROBEMCP_COMMON_H

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
 * The library never calls cJSON_InitHooks: cJSON's own allocations use the
 * process-wide cJSON hooks.
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

/** The library's version string, e.g. "0.1.0" (equals PMCP_VERSION_STRING
 *  of the headers it was built with). */
PMCP_API const char *pmcp_version(void);

PMCP_END_DECLS

#endif
