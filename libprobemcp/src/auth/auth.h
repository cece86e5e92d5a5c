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

/* ---- the principal ---------------------------------------------------------- */

enum {
  PMCP__P_KEY = 1,         /* a workspace API key */
  PMCP__P_CONNECTION = 2   /* an OAuth connection: a person through a client */
};

/* What one request acts as, re-read from the store on every request. */
typedef struct pmcp__principal {
  int kind;                /* PMCP__P_* */
  char id[64];             /* the key's or the connection's id */
  char user_id[64];        /* the person (connections), "" for keys */
  char user_name[128];
  int64_t tenant_id;
  char tenant[128];        /* the tenant's name */
  char workspace[129];     /* the default workspace of every call */
  int write;               /* the credential allows writes (key scope,
                            * connection access) */
  int role;                /* the role in the workspace; keys: editor with
                            * write scope, else viewer; never admin */
  char actor[200];         /* for the audit log: "key:ID" or "user:NAME" */
} pmcp__principal;

/* Effective: may this principal run write tools? (write access and at
 * least editor). Admin gates: pmcp__principal_admin (never a key). */
int pmcp__principal_can_write(const pmcp__principal *p);
int pmcp__principal_admin(const pmcp__principal *p);

/* Resolves an API key's text ("pk_..."): PMCP_EDENIED (unknown, revoked,
 * malformed: the same message for all) or 0 with @p out filled; records
 * last_used. A read-only store resolves too (last_used is then skipped). */
int pmcp__auth_key_principal(pmcp_store *s, const char *secret, size_t len,
                             pmcp__principal *out);
/* key_cache.c: the principal of @p secret cached on @p s under change
 * mark @p mark (1, *@p out and its last_used filled) or 0. */
int pmcp__key_cache_get(pmcp_store *s, const char *secret, size_t len,
                        const uint64_t mark[2], pmcp__principal *out, int64_t *last_used);
/* Keeps @p p as the principal of @p secret read under @p mark (best
 * effort: without memory, nothing is kept). */
void pmcp__key_cache_put(pmcp_store *s, const char *secret, size_t len,
                         const uint64_t mark[2], const pmcp__principal *p, int64_t last_used);
/* The principal of an OAuth connection by id (the oauth code calls this
 * once it has checked its access token): PMCP_EDENIED when the connection is
 * revoked, its user disabled or no longer a member of its workspace. */
int pmcp__auth_connection_principal(pmcp_store *s, const char *connection_id,
                                    pmcp__principal *out);
/* For a connection: the principal acting in another @p workspace of its
 * tenant that the person belongs to (role re-read). PMCP_EDENIED (generic
 * message) otherwise. */
int pmcp__auth_principal_in_workspace(pmcp_store *s, pmcp__principal *p,
                                      const char *workspace);

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

/* Appends one entry. @p details_json: a JSON object or NULL; every value
 * under a secret-looking name (secret, password, token, key, code,
 * authorization, cookie, verifier, ...) is replaced by "***" before it is
 * stored. @p t.id 0: not a tenant's event. */
int pmcp__audit(pmcp_store *s, pmcp_tenant t, const char *workspace, const char *actor,
                const char *action, const char *via, const char *details_json);
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

#endif
