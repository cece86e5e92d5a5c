/* SPDX-License-Identifier: MIT */
/**
 * @file oauth.h
 * The state of an OAuth 2.1 authorization server in a probe store's
 * service tables: registered clients, decisions on authorization requests,
 * authorization codes, connections (a person through a client, in one
 * workspace), access and refresh tokens, and consent-page sign-ins.
 * probe-mcp-http's authorization server and consent pages are written
 * over these calls; see pmcp_oauth(3).
 *
 * Every step is a row in the store, so a flow may hop between replicas of
 * a service over one database; single use (codes, rotated refresh tokens,
 * decisions) is a conditional update whose change count says who won, and
 * a replayed code or refresh token revokes its connection. Secrets are
 * never stored: tokens and cookies are kept as the SHA-256 of their text.
 * Connections, revocations and refused sign-ins are audited (via "mcp").
 *
 * A pmcp_oauth is thread-safe: one mutex serialises its use of its store
 * handle; the password KDF of a sign-in runs outside it.
 *
 * Out-parameters that are strings the library allocates are released with
 * free(); arrays of structs likewise (one free() of the array, which holds
 * their strings too). A string the caller's buffer receives comes as a
 * (buffer, size) pair: PMCP_ETOOBIG when it does not fit.
 *
 * Every struct starts with a version member (set it with the INIT macro;
 * the library accepts every version up to its own, and sets it in the rows
 * it returns) and holds no fixed-size string. This header changed layout
 * before any release, so no older symbol versions exist for its calls.
 */
#ifndef PROBEMCP_OAUTH_H
#define PROBEMCP_OAUTH_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "error.h"
#include "store.h"

PMCP_BEGIN_DECLS

/* Lifetimes (seconds). */
#define PMCP_OAUTH_CODE_TTL 600              /**< authorization codes */
#define PMCP_OAUTH_ACCESS_TTL 3600           /**< access tokens */
#define PMCP_OAUTH_REFRESH_TTL (30 * 86400)  /**< refresh tokens */
#define PMCP_OAUTH_REQUEST_TTL 1800          /**< a sealed request awaiting consent */
#define PMCP_OAUTH_SESSION_TTL (12 * 3600)   /**< a consent-page sign-in */
#define PMCP_OAUTH_UNUSED_CLIENT_TTL 86400   /**< registrations never used */

/* Token prefixes; the secret part is 32 random bytes in base64url. */
#define PMCP_OAUTH_AT_PREFIX "pbm_at_"
#define PMCP_OAUTH_RT_PREFIX "pbm_rt_"
#define PMCP_OAUTH_CODE_PREFIX "pbm_ac_"
#define PMCP_OAUTH_SECRET_CHARS 43
#define PMCP_OAUTH_TOKEN_MAX 64      /**< bytes: prefix + secret + NUL fits */
#define PMCP_OAUTH_HASH_HEX 65       /**< bytes: SHA-256 hex + NUL */
/** The longest client_id: a registration's, or a client ID metadata
 *  document's URL. */
#define PMCP_OAUTH_CLIENT_ID_MAX 400

/** The state of one authorization server over one store. */
typedef struct pmcp_oauth pmcp_oauth;

/** What a host may put in place of the library's own password check and
 *  audit log (a NULL member, or NULL hooks: the library's). */
typedef struct pmcp_oauth_hooks {
  /** 1 when @p password matches the stored KDF string, else 0. */
  int (*verify_password)(const char *stored, const char *password, void *ud);
  /** Appends an audit entry; @p details_json is a JSON object with no
   *  secrets, @p tenant_id decimal text or NULL. Returns 0 or the store's
   *  error (a change audited in its own transaction is rolled back then). */
  int (*audit)(void *ud, pmcp_store *st, const char *tenant_id, const char *workspace,
               const char *actor, const char *action, const char *details_json);
  void *ud;
} pmcp_oauth_hooks;

/** Takes ownership of @p st (opened for writing; closed by pmcp_oauth_free;
 *  on failure the caller keeps it). Requests are sealed with a key derived from the
 *  store's secret, so every replica opens what another sealed. @p hooks
 *  may be NULL; it is copied. @return 0, PMCP_ENOMEM, PMCP_EINTERNAL. */
PMCP_API int pmcp_oauth_new(pmcp_oauth **out, pmcp_store *st, const pmcp_oauth_hooks *hooks);
PMCP_API void pmcp_oauth_free(pmcp_oauth *s);
/** The tenant the server serves: the consent page offers, and approval
 *  accepts, only its workspaces. 0: every tenant (the default). */
PMCP_API void pmcp_oauth_set_tenant(pmcp_oauth *s, int64_t tenant_id);
/** The server's clock, milliseconds since the epoch. */
PMCP_API int64_t pmcp_oauth_now_ms(const pmcp_oauth *s);
/** Tests only: moves the server's clock by @p ms. */
PMCP_API void pmcp_oauth_testing_shift_clock(pmcp_oauth *s, int64_t ms);

#define PMCP_OAUTH_ERR_VERSION 1

/** An error of a protocol step: the OAuth error code and a description. */
typedef struct pmcp_oauth_err {
  unsigned version;          /**< PMCP_OAUTH_ERR_VERSION */
  const char *error;         /**< "invalid_grant", ... (static) */
  const char *description;   /**< static */
  int status;                /**< the HTTP status to answer with */
} pmcp_oauth_err;

#define PMCP_OAUTH_ERR_INIT {PMCP_OAUTH_ERR_VERSION, NULL, NULL, 0}

/* ---- PKCE, tokens, CSRF ---- */

/** True when @p v is a PKCE code_verifier (RFC 7636 4.1: 43-128 characters
 *  of [A-Za-z0-9-._~]). */
PMCP_API int pmcp_oauth_verifier_valid(const char *v);
/** True when @p c looks like an S256 code_challenge (43 base64url chars). */
PMCP_API int pmcp_oauth_challenge_valid(const char *c);
/** 1 when BASE64URL(SHA256(@p verifier)) equals @p challenge (compared in
 *  constant time), 0 when not or when either is malformed. */
PMCP_API int pmcp_oauth_pkce_s256_ok(const char *verifier, const char *challenge);
/** A fresh secret "<prefix><43 base64url chars>" into @p out of @p size
 *  bytes (PMCP_OAUTH_TOKEN_MAX are always enough). @return 0, PMCP_ETOOBIG
 *  (it does not fit: @p out left ""), PMCP_EINVAL (NULL, or a prefix
 *  longer than PMCP_OAUTH_TOKEN_MAX leaves room for), PMCP_EINTERNAL (no
 *  randomness). */
PMCP_API int pmcp_oauth_token_new(const char *prefix, char *out, size_t size);
/** True when @p tok has exactly the shape of a secret with @p prefix, so
 *  truncated, padded or altered tokens are refused before any lookup. */
PMCP_API int pmcp_oauth_token_shape_ok(const char *tok, const char *prefix);
/** Lower-case hex SHA-256 of @p tok, what the store keeps, into @p out of
 *  @p size bytes (PMCP_OAUTH_HASH_HEX). @return 0, PMCP_ETOOBIG (@p out
 *  left ""), PMCP_EINVAL (NULL) or PMCP_EINTERNAL. */
PMCP_API int pmcp_oauth_token_hash(const char *tok, char *out, size_t size);
/** The CSRF token of a consent-page cookie: hex SHA-256 of a label and the
 *  cookie, so nothing more is stored and another origin cannot know it;
 *  into @p out of @p size bytes (PMCP_OAUTH_HASH_HEX). @return 0,
 *  PMCP_ETOOBIG (@p out left ""), PMCP_EINVAL (NULL) or PMCP_EINTERNAL
 *  (the digest failed; @p out left ""). */
PMCP_API int pmcp_oauth_csrf_token(const char *cookie, char *out, size_t size);
/** 1 when @p given is @p cookie's CSRF token (compared in constant time),
 *  0 otherwise (also for NULL). */
PMCP_API int pmcp_oauth_csrf_ok(const char *cookie, const char *given);

/* ---- clients ---- */

/** Registers a client (RFC 7591): @p redirect_uris_json a JSON array of
 *  checked URIs. Its id ("pbm_client_...", under 40 bytes) into @p id_out
 *  of @p id_size bytes. 0, PMCP_ETOOBIG (nothing registered) or an
 *  error. */
PMCP_API int pmcp_oauth_client_register(pmcp_oauth *s, const char *name,
                                        const char *redirect_uris_json, char *id_out,
                                        size_t id_size);
/** Stores (or refreshes) a metadata-document client (its id is the URL)
 *  as the consent page saw it, so its connections and codes name a known
 *  client. 0 or an error. */
PMCP_API int pmcp_oauth_client_remember(pmcp_oauth *s, const char *url, const char *name,
                                        const char *redirect_uris_json);
/** 1 found (*name, *uris malloc'd; uris a JSON array), 0 not, <0 error. */
PMCP_API int pmcp_oauth_client_get(pmcp_oauth *s, const char *id, char **name, char **uris);
/** 1 when a code was ever issued to the client, 0 not (or unknown), <0
 *  error. */
PMCP_API int pmcp_oauth_client_used(pmcp_oauth *s, const char *id);
/** Deletes registrations never used and older than a day, and every
 *  expired decision, code, token and sign-in. */
PMCP_API void pmcp_oauth_prune(pmcp_oauth *s);

/* ---- authorization requests ---- */

#define PMCP_OAUTH_REQUEST_VERSION 1

/** An authorization request. Nothing is stored for it until the person
 *  decides: it travels in the consent page's links and forms sealed
 *  (authenticated, not encrypted) for PMCP_OAUTH_REQUEST_TTL; the decision
 *  is a row, so each request is decided once. */
typedef struct pmcp_oauth_request {
  unsigned version;          /**< PMCP_OAUTH_REQUEST_VERSION */
  char *id;                  /**< the key of its decision row (malloc'd) */
  char *client_id, *client_name, *redirect_uri, *challenge, *state, *resource,
       *scope;               /**< malloc'd or NULL */
  int64_t expires;           /**< ms since the epoch */
} pmcp_oauth_request;

#define PMCP_OAUTH_REQUEST_INIT {PMCP_OAUTH_REQUEST_VERSION, NULL, NULL, NULL, NULL, NULL, \
                                 NULL, NULL, NULL, 0}
/** Seals @p r (client_id, redirect_uri and challenge set) into @p sealed
 *  (malloc'd, URL- and HTML-safe). 0, PMCP_EINVAL (too long, or an unknown
 *  version), PMCP_ENOMEM. */
PMCP_API int pmcp_oauth_request_seal(pmcp_oauth *s, const pmcp_oauth_request *r,
                                     char **sealed);
/** Opens @p sealed into @p out (version set; what an earlier call filled
 *  in it is disposed, so never pass one holding the caller's own strings):
 *  1 open and undecided (client_name filled when the client is stored), 0
 *  altered, foreign, expired or decided, <0 error (PMCP_EINVAL: a bad
 *  version). */
PMCP_API int pmcp_oauth_request_get(pmcp_oauth *s, const char *sealed,
                                    pmcp_oauth_request *out);
/** Frees the strings of @p r and clears it (its version kept). */
PMCP_API void pmcp_oauth_request_dispose(pmcp_oauth_request *r);

/* ---- people ---- */

/** Checks a local user's password (the KDF runs outside the lock, and
 *  also for an unknown name). 1 ok (id into @p user_id of @p id_size
 *  bytes; 64 are enough), 0 wrong, unknown or disabled, <0 error
 *  (PMCP_ETOOBIG: the id does not fit). */
PMCP_API int pmcp_oauth_user_check(pmcp_oauth *s, const char *name, const char *password,
                                   char *user_id, size_t id_size);
/** Audits a refused sign-in of @p name from @p address with @p action
 *  ("auth.login_failed", "auth.login_locked"). */
PMCP_API void pmcp_oauth_audit_signin(pmcp_oauth *s, const char *name, const char *address,
                                      const char *action);
#define PMCP_OAUTH_WORKSPACE_VERSION 1

/** One workspace a person belongs to; its strings live in the array's
 *  allocation. */
typedef struct pmcp_oauth_workspace {
  unsigned version;          /**< PMCP_OAUTH_WORKSPACE_VERSION (set by the library) */
  const char *tenant_id, *tenant, *workspace, *role;
} pmcp_oauth_workspace;
/** The workspaces of @p user_id (in the served tenant): *@p out malloc'd
 *  (NULL when none), *@p n rows. 0 or an error. */
PMCP_API int pmcp_oauth_workspaces(pmcp_oauth *s, const char *user_id,
                                   pmcp_oauth_workspace **out, size_t *n);
/** "Display Name (name)", or the name alone (malloc'd), or NULL. */
PMCP_API char *pmcp_oauth_user_name(pmcp_oauth *s, const char *user_id);

/* ---- consent-page sign-ins (a cookie "pbm_ss_...") ---- */

/** Signs @p user_id in for PMCP_OAUTH_SESSION_TTL: the cookie into
 *  @p cookie of @p size bytes (PMCP_OAUTH_TOKEN_MAX are enough). 0,
 *  PMCP_ETOOBIG (no sign-in made) or an error. */
PMCP_API int pmcp_oauth_session_new(pmcp_oauth *s, const char *user_id, char *cookie,
                                    size_t size);
/** 1 signed in (user id into @p user_id of @p id_size bytes), 0 not
 *  (expired, or the person changed since: password, disabled), <0 error
 *  (PMCP_ETOOBIG: the id does not fit). */
PMCP_API int pmcp_oauth_session_user(pmcp_oauth *s, const char *cookie, char *user_id,
                                     size_t id_size);
/** Ends the sign-in of @p cookie. */
PMCP_API void pmcp_oauth_session_end(pmcp_oauth *s, const char *cookie);

/* ---- the decision ---- */

/** Approves sealed request @p sealed for @p user_id: a new connection in
 *  (@p tenant_id, @p workspace) with @p access ("read" | "write") and a
 *  code, audited in the same transaction. 1 done (@p code of @p code_size
 *  bytes, PMCP_OAUTH_TOKEN_MAX enough; @p req, version set; @p conn_id of
 *  @p conn_size, 40 enough; dispose @p req), 0 the request is gone or
 *  decided, the client unknown or the user not a member there, <0 error
 *  (PMCP_ETOOBIG: a buffer too small, nothing approved). */
PMCP_API int pmcp_oauth_approve(pmcp_oauth *s, const char *sealed, const char *user_id,
                                const char *tenant_id, const char *workspace,
                                const char *access, char *code, size_t code_size,
                                pmcp_oauth_request *req, char *conn_id, size_t conn_size);
/** Marks the request denied: 1 when it was open (@p req filled), 0 else,
 *  <0 error. */
PMCP_API int pmcp_oauth_deny(pmcp_oauth *s, const char *sealed, pmcp_oauth_request *req);

/* ---- tokens ---- */

#define PMCP_OAUTH_TOKENS_VERSION 1

/** A token pair as issued. The strings point into one allocation the
 *  library owns until pmcp_oauth_tokens_dispose(). */
typedef struct pmcp_oauth_tokens {
  unsigned version;          /**< PMCP_OAUTH_TOKENS_VERSION */
  const char *access, *refresh;
  const char *access_level;  /**< read | write: the scope granted */
  void *pmcp__mem;           /**< the library's allocation; do not touch */
} pmcp_oauth_tokens;

#define PMCP_OAUTH_TOKENS_INIT {PMCP_OAUTH_TOKENS_VERSION, NULL, NULL, NULL, NULL}

/** Frees what a call put in @p t (its version kept); NULL ok. */
PMCP_API void pmcp_oauth_tokens_dispose(pmcp_oauth_tokens *t);
/** Exchanges a code (PKCE checked): 0 with @p out (version set; what it
 *  held is disposed; dispose it), or -1 with @p err (version set).
 *  PMCP_EINVAL for a bad version of either. A code used before revokes
 *  the connection it created. */
PMCP_API int pmcp_oauth_exchange_code(pmcp_oauth *s, const char *code, const char *client_id,
                                      const char *redirect_uri, const char *verifier,
                                      const char *resource, pmcp_oauth_tokens *out,
                                      pmcp_oauth_err *err);
/** Rotates a refresh token: 0 with @p out, or -1 with @p err (both as for
 *  pmcp_oauth_exchange_code(); @p refresh must not point into @p out). A
 *  token rotated before revokes the connection. */
PMCP_API int pmcp_oauth_refresh(pmcp_oauth *s, const char *refresh, const char *client_id,
                                const char *resource, pmcp_oauth_tokens *out,
                                pmcp_oauth_err *err);
/** RFC 7009: revokes the connection of a refresh token, or one access
 *  token, issued to @p client_id: 0 (also for an unknown token), 1 when
 *  it was issued to another client (nothing revoked), <0 error. */
PMCP_API int pmcp_oauth_revoke_token(pmcp_oauth *s, const char *token, const char *client_id);

#define PMCP_OAUTH_PRINCIPAL_VERSION 1

/** What an access token stands for. The strings point into one allocation
 *  the library owns until pmcp_oauth_principal_dispose(). */
typedef struct pmcp_oauth_principal {
  unsigned version;          /**< PMCP_OAUTH_PRINCIPAL_VERSION */
  const char *connection_id, *user_id, *client_id, *tenant_id, *workspace, *access;
  void *pmcp__mem;           /**< the library's allocation; do not touch */
} pmcp_oauth_principal;

#define PMCP_OAUTH_PRINCIPAL_INIT {PMCP_OAUTH_PRINCIPAL_VERSION, NULL, NULL, NULL, NULL, \
                                   NULL, NULL, NULL}

/** Frees what a call put in @p p (its version kept); NULL ok. */
PMCP_API void pmcp_oauth_principal_dispose(pmcp_oauth_principal *p);
/** 1 valid (@p out filled: version set, what it held disposed; dispose
 *  it), 0 unknown, expired, revoked or malformed (a refresh token too),
 *  <0 error (PMCP_EINVAL: a bad version). Records the connection's last
 *  use (at most once a minute). */
PMCP_API int pmcp_oauth_access_resolve(pmcp_oauth *s, const char *token,
                                       pmcp_oauth_principal *out);

/* ---- a person's connections ---- */

#define PMCP_OAUTH_CONNECTION_VERSION 1

/** One live connection of a person; its strings live in the array's
 *  allocation. */
typedef struct pmcp_oauth_connection {
  unsigned version;          /**< PMCP_OAUTH_CONNECTION_VERSION (set by the library) */
  const char *id, *client, *tenant, *workspace, *access;
  int64_t created, last_used;  /**< ms since the epoch; last_used 0: never */
} pmcp_oauth_connection;
/** The live connections of @p user_id, newest first: *@p out malloc'd. 0
 *  or an error. */
PMCP_API int pmcp_oauth_connections(pmcp_oauth *s, const char *user_id,
                                    pmcp_oauth_connection **out, size_t *n);
/** Revokes a connection of @p user_id (audited with @p reason): 1 done, 0
 *  not theirs or revoked already, <0 error. */
PMCP_API int pmcp_oauth_connection_revoke(pmcp_oauth *s, const char *conn_id,
                                          const char *user_id, const char *reason);

PMCP_END_DECLS

#endif
