/* SPDX-License-Identifier: MIT */
/**
 * @file cursor.h
 * Continuation cursors: opaque, URL-safe (base64url without padding),
 * versioned, authenticated with HMAC-SHA256 under the server's cursor key,
 * and zstd-compressed when that makes them shorter.
 *
 * A cursor is bound to the tool name, to every argument of the call except
 * `token_budget` and `cursor` (compared as canonical JSON: sorted keys, so
 * key order and spacing do not matter) and to a source version the tool
 * supplies. It carries the tool's own position state (opaque bytes).
 * Decoding a cursor that was forged, truncated, re-encoded, made for another
 * tool or other arguments, or for an older source version fails with
 * PMCP_ECURSOR and a status naming the reason; pages (budget.h) turn that
 * into a restart error telling the agent to call again without the cursor.
 *
 * Most tools never call these directly: pmcp_page_begin() decodes the
 * incoming cursor and pmcp_page_finish() mints next_cursor. They are public
 * for nested continuations (a list inside an item that keeps its own
 * `<list>_cursor`, minted for the call that would continue it).
 */
#ifndef PROBEMCP_CURSOR_H
#define PROBEMCP_CURSOR_H

#include "common.h"
#include "error.h"
#include "server.h"

PMCP_BEGIN_DECLS

/** Why a cursor was refused (or PMCP_CURSOR_OK). Values are stable. */
typedef enum pmcp_cursor_status {
  PMCP_CURSOR_OK = 0,
  /** Not a cursor at all: characters outside base64url, or empty. */
  PMCP_CURSOR_MALFORMED = 1,
  /** Re-encoded: padding, '+', '/', '%' escapes, or non-canonical bits,
   *  i.e. it went through another base64 or URL encoder. */
  PMCP_CURSOR_REENCODED = 2,
  /** Cut short (or otherwise of an impossible length/layout). */
  PMCP_CURSOR_TRUNCATED = 3,
  /** Made by a format version this library does not read. */
  PMCP_CURSOR_VERSION = 4,
  /** Authentication failed: edited, forged, or issued under another key. */
  PMCP_CURSOR_FORGED = 5,
  /** Issued by another tool. */
  PMCP_CURSOR_FOREIGN_TOOL = 6,
  /** Issued for other arguments (anything but token_budget and cursor). */
  PMCP_CURSOR_CHANGED_ARGUMENTS = 7,
  /** The source changed since the cursor was issued. */
  PMCP_CURSOR_STALE = 8,
  /** The pinned prefix of a document being read in fragments was edited
   *  or deleted. */
  PMCP_CURSOR_DOCUMENT_CHANGED = 9
} pmcp_cursor_status;

/** Short stable name of @p status ("forged", "changed_arguments", ...);
 *  never NULL. */
PMCP_API const char *pmcp_cursor_status_name(int status);
/** One English sentence explaining @p status; never NULL. */
PMCP_API const char *pmcp_cursor_status_message(int status);

/** Smallest and largest cursor key accepted, in bytes. */
#define PMCP_CURSOR_KEY_MIN 16
#define PMCP_CURSOR_KEY_MAX 64

/**
 * Sets the key cursors are authenticated with. Servers start with a random
 * key of their own, so without this call cursors only work within one
 * process; a host that persists a key (the store keeps one, created with
 * the store) gives restarts and replicas the same key so each accepts the
 * others' cursors. Call it before the first message is handled.
 * @return 0; PMCP_EINVAL (NULL, or @p len outside 16..64 bytes).
 */
PMCP_API int pmcp_server_set_cursor_key(pmcp_server *server, const void *key,
                                        size_t len);

/** Fills @p out with @p len random bytes for a new cursor key.
 *  @return 0; PMCP_EINVAL (len outside 16..64); PMCP_EINTERNAL. */
PMCP_API int pmcp_cursor_key_generate(void *out, size_t len);

/**
 * Mints a cursor.
 * @param tool the tool the cursor continues.
 * @param args_json the arguments object of the call it continues (JSON
 *        text; `token_budget` and `cursor` are ignored); NULL means {}.
 * @param source_version the source's version, or 0 for a source that does
 *        not change.
 * @param state the tool's position state (may be NULL when @p state_len is
 *        0); at most 65536 bytes.
 * @param[out] out receives the cursor text (appended).
 * @return 0; PMCP_EINVAL (args not a JSON object, state too large);
 *         PMCP_ENOMEM; PMCP_EINTERNAL.
 */
PMCP_API int pmcp_cursor_encode(pmcp_server *server, const char *tool,
                                const char *args_json, uint64_t source_version,
                                const void *state, size_t state_len,
                                pmcp_buf *out);

/**
 * Checks and opens a cursor.
 * @param[out] state receives the position state (replaced).
 * @param[out] status why it was refused (PMCP_CURSOR_OK on success); may be
 *             NULL.
 * @return 0; PMCP_ECURSOR (refused; see @p status); PMCP_EINVAL (args not
 *         a JSON object); PMCP_ENOMEM.
 */
PMCP_API int pmcp_cursor_decode(pmcp_server *server, const char *tool,
                                const char *args_json, uint64_t source_version,
                                const char *cursor, size_t cursor_len,
                                pmcp_buf *state, pmcp_cursor_status *status);

PMCP_END_DECLS

#endif
