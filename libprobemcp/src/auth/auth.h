/* SPDX-License-Identifier: MIT */
/* Internal: who may call probe-mcp-http and what they did. Local users and
 * their roles per workspace, workspace API keys, the principal a request
 * acts as, and the append-only audit log, all in the store's service
 * tables through db.h (so every backend has them).
 *
 * Secrets are never stored or logged in clear: a key is kept as the SHA-256
 * of its whole text and compared with CRYPTO_memcmp; a password as a
 * salted PBKDF2-HMAC-SHA256 string with its parameters. Audit details are
 * masked (every value under a secret-looking name becomes "***").
 *
 * Every function takes a writable store unless it says "read"; messages go
 * to the store (pmcp_store_errmsg) and never reveal whether a resource of
 * another tenant exists. */
#ifndef PMCP_AUTH_AUTH_H
#define PMCP_AUTH_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "probemcp/service.h"
#include "probemcp/store.h"

/* ---- roles, keys, users, the audit log: probemcp/service.h ------------- */
/* (pmcp_role_*, pmcp_key_*, pmcp_user_*, pmcp_audit_list are public; what
 * follows is what the service code inside the library needs besides.) */

/* ---- passwords (password.c) ----------------------------------------------- */

/* PBKDF2-HMAC-SHA256 iterations of a new hash. */
#define PMCP__PBKDF2_ITER 600000
/* Hashes @p pw into "pbkdf2-sha256$ITER$SALT$HASH" (base64url, 16-byte
 * salt, 32-byte hash). @p iter 0: PMCP__PBKDF2_ITER. 0, PMCP_EINVAL (empty
 * or over 1024 bytes), PMCP_ENOMEM, PMCP_EINTERNAL. */
int pmcp__password_hash(pmcp_buf *out, const char *pw, unsigned iter);
/* 1 when @p pw matches @p stored, else 0 (also for a NULL or malformed
 * string, after a derivation at the default count: pass NULL for an
 * unknown user and the time taken does not tell). Timing-safe in the
 * comparison. */
int pmcp__password_verify(const char *stored, const char *pw);

/* ---- the principal: pmcp_principal_* in probemcp/service.h ------------------ */

/* May this principal use admin gates? (never a key) */
int pmcp__principal_admin(const pmcp_principal *p);
/* key_cache.c: the principal of @p secret cached on @p s under change
 * mark @p mark (1, *@p out and its last_used filled) or 0. */
int pmcp__key_cache_get(pmcp_store *s, const char *secret, size_t len,
                        const uint64_t mark[2], pmcp_principal *out, int64_t *last_used);
/* Keeps @p p as the principal of @p secret read under @p mark (best
 * effort: without memory, nothing is kept). */
void pmcp__key_cache_put(pmcp_store *s, const char *secret, size_t len,
                         const uint64_t mark[2], const pmcp_principal *p, int64_t last_used);

/* ---- users and memberships (users.c) ---------------------------------------- */

/* The record a sign-in checks (read), split from the check so a caller
 * can run the slow KDF outside its own store lock: @p out_id the user's
 * id, *@p stored a copy of the password string (caller frees; NULL for an
 * unknown name), *@p active 0 for a disabled user. 0 or a store error. */
int pmcp__user_login_record(pmcp_store *s, const char *name, char out_id[64], char **stored,
                            int *active);
/* Checks a password; fills @p user_id. PMCP_EDENIED (unknown user, wrong
 * password, disabled: one message). */
int pmcp__user_check_password(pmcp_store *s, const char *name, const char *password,
                              char user_id[64]);

/* ---- audit (audit.c) -------------------------------------------------------- */

/* Appending an entry: pmcp_audit_add (probemcp/service.h). */
/* Masks @p json (an object) into @p out. */
int pmcp__audit_mask(pmcp_buf *out, const char *json);

/* ---- small shared helpers (keys.c) ----------------------------------------- */

/* A random id "<prefix>_<20 base32 chars>". */
int pmcp__auth_new_id(char *out, size_t size, const char *prefix);
/* Ends a write group: commits on rc == 0, else rolls back keeping the
 * failure's message. Returns rc or the commit's error. */
int pmcp__auth_finish(pmcp_store *s, int rc);
/* Current time in ms as decimal text. */
void pmcp__auth_now(char out[24]);
/* Strings of a versioned struct kept in one allocation (its pmcp__mem):
 * the bytes @p v takes there (NULL: ""), its copy at *@p at (advanced),
 * and one block holding copies of the @p n strings @p v with *dst[i] set
 * to each (NULL without memory: nothing set). */
size_t pmcp__str_size(const char *v);
const char *pmcp__str_put(char **at, const char *v);
void *pmcp__str_block(size_t n, const char *const *v, const char **const *dst);

#endif
