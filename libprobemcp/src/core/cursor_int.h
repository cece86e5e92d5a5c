/* SPDX-License-Identifier: MIT */
/* Internal cursor API: the codec with an explicit key (pages and tests use
 * it without a server), argument canonicalisation, and the server's key
 * slot. */
#ifndef PMCP_CORE_CURSOR_INT_H
#define PMCP_CORE_CURSOR_INT_H

#include <stddef.h>
#include <stdint.h>

#include "probemcp/cursor.h"
#include "probemcp/server.h"

#define PMCP__CURSOR_FORMAT 1
/* Largest position state a cursor carries (uncompressed). */
#define PMCP__CURSOR_STATE_MAX 65536
/* Longest cursor text accepted (keeps decoding bounded). */
#define PMCP__CURSOR_TEXT_MAX 131072
#define PMCP__ARGS_HASH_LEN 8

/* The server's cursor key. The engine embeds one in pmcp_server, calls
 * pmcp__cursor_key_init() when the server is created and exposes it with
 * pmcp__server_cursor_key(). */
typedef struct pmcp__cursor_key {
  unsigned char key[PMCP_CURSOR_KEY_MAX];
  size_t len;
} pmcp__cursor_key;

/* Fills @p k with a fresh random 32-byte key. 0 or PMCP_EINTERNAL. */
int pmcp__cursor_key_init(pmcp__cursor_key *k);
/* Implemented by the engine (server.c). */
pmcp__cursor_key *pmcp__server_cursor_key(pmcp_server *server);

/* Canonical JSON of an arguments object (sorted keys, no spaces, numbers
 * in shortest round-trip form) without its top-level token_budget and
 * cursor members. NULL or empty args mean {}. 0, PMCP_EINVAL (not an
 * object), PMCP_ENOMEM. */
int pmcp__args_canonical(const char *args_json, size_t len, pmcp_buf *out);
/* First 8 bytes of SHA-256 of the canonical arguments. */
int pmcp__args_hash(const char *args_json, size_t len,
                    unsigned char out[PMCP__ARGS_HASH_LEN]);

int pmcp__cursor_encode_key(const void *key, size_t key_len, const char *tool,
                            const unsigned char args_hash[PMCP__ARGS_HASH_LEN],
                            uint64_t source_version, const void *state,
                            size_t state_len, pmcp_buf *out);
/* A source_version that matches any: for a caller whose state carries its
 * own guard (what its pages read), checked once the state is read. */
#define PMCP__CURSOR_ANY_VERSION UINT64_MAX
/* Returns 0, PMCP_ECURSOR (with *status), PMCP_ENOMEM. */
int pmcp__cursor_decode_key(const void *key, size_t key_len, const char *tool,
                            const unsigned char args_hash[PMCP__ARGS_HASH_LEN],
                            uint64_t source_version, const char *cursor,
                            size_t cursor_len, pmcp_buf *state,
                            pmcp_cursor_status *status);

#endif
