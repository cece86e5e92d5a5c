/* SPDX-License-Identifier: MIT */
/* The OAuth server's state in the store (oauth_state.c): clients, decisions on
 * requests, codes, connections, tokens and consent-page sessions, through
 * store/db.h so every backend (and every replica) serves every step. */
#ifndef PMCP_HTTP_OAUTH_STATE_H
#define PMCP_HTTP_OAUTH_STATE_H

#include "oauth.h"

typedef struct poauth_state poauth_state;

/* Hooks into the auth module (users, audit), set by the frontend. */
typedef struct poauth_hooks {
  /* 1 when @p password matches the stored KDF string, else 0. */
  int (*verify_password)(const char *stored, const char *password, void *ud);
  /* Appends an audit entry (via "mcp"); details is a JSON object with no
   * secrets. Returns 0 or the store's error (a change audited in its own
   * transaction is rolled back then). */
  int (*audit)(void *ud, pmcp_store *st, const char *tenant_id,
                const char *workspace, const char *actor, const char *action,
                const char *details_json);
  void *ud;
} poauth_hooks;

/* Takes ownership of @p st (a writable handle): closed by _free. */
int poauth_state_new(poauth_state **out, pmcp_store *st, const poauth_hooks *hooks);
void poauth_state_free(poauth_state *s);

/* The tenant the server serves (its /mcp accepts only that tenant's
 * credentials): the consent page offers, and approval accepts, only its
 * workspaces. 0: every tenant (the default). */
void poauth_state_set_tenant(poauth_state *s, int64_t tenant_id);

/* Milliseconds since the epoch; tests move the clock with a fixed offset. */
int64_t poauth_now_ms(const poauth_state *s);
void poauth_testing_shift_clock(poauth_state *s, int64_t ms);

/* Errors of the protocol steps: the OAuth error code and a description. */
typedef struct poauth_err {
  const char *error;         /* "invalid_grant", ... (static) */
  char description[200];
  int status;                /* HTTP status to answer with */
} poauth_err;

/* ---- clients ---- */
int poauth_client_register(poauth_state *s, const char *name,
                           const char *redirect_uris_json, char id_out[40]);
/* Stores (or refreshes) a metadata-document client as the consent page
 * saw it, so its connections and codes name a known client. 0 or <0. */
int poauth_client_remember(poauth_state *s, const char *url, const char *name,
                           const char *redirect_uris_json);
/* 1 found (*name, *uris malloc'd; uris a JSON array), 0 not, <0 error. */
int poauth_client_get(poauth_state *s, const char *id, char **name, char **uris);
/* 1 when the client has been used for a sign-in (a code was issued to
 * it), 0 not (or unknown), <0 error. */
int poauth_client_used(poauth_state *s, const char *id);
/* Deletes registrations never used for a sign-in older than a day and
 * every expired request, code, token and session. */
void poauth_prune(poauth_state *s);

/* ---- authorization requests ---- */
/* Nothing is stored for a request until the person decides: it travels
 * in the consent page's links and forms sealed with a key derived from
 * the store's secret (so any replica opens it, and nobody can alter it),
 * for POAUTH_REQUEST_TTL; the decision is a row, so each is decided once. */
typedef struct poauth_request {
  char id[40];               /* the key of its decision row */
  char *client_id, *client_name, *redirect_uri, *challenge, *state, *resource,
       *scope;
  int64_t expires;           /* ms since the epoch */
} poauth_request;
/* Seals @p r (client_id, redirect_uri and challenge set) into @p sealed
 * (malloc'd, URL- and HTML-safe). 0 or a negative PMCP_E* code. */
int poauth_request_seal(poauth_state *s, const poauth_request *r, char **sealed);
/* Opens @p sealed: 1 open and undecided (client_name filled when the
 * client is stored), 0 altered, foreign, expired or decided, <0 error. */
int poauth_request_get(poauth_state *s, const char *sealed, poauth_request *out);
void poauth_request_dispose(poauth_request *r);

/* ---- people ---- */
/* Checks a local user's password (the KDF runs outside the store lock).
 * 1 ok (user id into @p user_id), 0 wrong or disabled, <0 error. */
int poauth_user_check(poauth_state *s, const char *name, const char *password,
                      char user_id[128]);
/* Audits a refused sign-in of @p name from @p address ("auth.login_failed",
 * "auth.login_locked"). */
void poauth_audit_signin(poauth_state *s, const char *name, const char *address,
                         const char *action);
/* The workspaces @p user_id belongs to: rows of (tenant_id, tenant name,
 * workspace, role). */
typedef struct poauth_ws {
  char tenant_id[24], tenant[128], workspace[128], role[16];
} poauth_ws;
int poauth_workspaces(poauth_state *s, const char *user_id, poauth_ws **out,
                      size_t *n);
/* "Display Name (name)", or the name alone (malloc'd), or NULL. */
char *poauth_user_name(poauth_state *s, const char *user_id);

/* ---- consent-page sessions (cookie pbm_session) ---- */
int poauth_session_new(poauth_state *s, const char *user_id,
                       char cookie[POAUTH_TOKEN_MAX]);
/* 1 signed in (user id out), 0 not, <0 error. */
int poauth_session_user(poauth_state *s, const char *cookie, char user_id[128]);
void poauth_session_end(poauth_state *s, const char *cookie);
/* The CSRF token of a session: hex SHA-256 of a label and the cookie, so
 * nothing more is stored and a page of another origin cannot know it. */
void poauth_csrf_token(const char *cookie, char out[POAUTH_HASH_HEX]);

/* ---- the decision ---- */
/* Approves sealed request @p req_id for @p user_id: a new connection in
 * (tenant_id, workspace) with @p access, and a code. Fails (0) when the
 * request is gone or was decided, or the user is not a member. On success
 * fills @p code and @p req (redirect_uri, state, ...). */
int poauth_approve(poauth_state *s, const char *req_id, const char *user_id,
                   const char *tenant_id, const char *workspace,
                   const char *access, char code[POAUTH_TOKEN_MAX],
                   poauth_request *req, char conn_id[40]);
/* Marks the request denied; 1 when it was open (req filled), 0 else. */
int poauth_deny(poauth_state *s, const char *sealed, poauth_request *req);

/* ---- tokens ---- */
typedef struct poauth_tokens {
  char access[POAUTH_TOKEN_MAX], refresh[POAUTH_TOKEN_MAX];
  char access_level[8];      /* read | write: the scope granted */
} poauth_tokens;
/* Exchanges a code. 0 with tokens, or -1 with @p err set. A code used
 * before revokes the connection it created. */
int poauth_exchange_code(poauth_state *s, const char *code, const char *client_id,
                         const char *redirect_uri, const char *verifier,
                         const char *resource, poauth_tokens *out, poauth_err *err);
/* Rotates a refresh token. A token rotated before revokes the connection. */
int poauth_refresh(poauth_state *s, const char *refresh, const char *client_id,
                   const char *resource, poauth_tokens *out, poauth_err *err);
/* RFC 7009: revokes the connection of a refresh token, or one access
 * token, if it was issued to @p client_id: 0 (also for an unknown token,
 * which is not an error), 1 when it was issued to another client (nothing
 * is revoked), <0 error. */
int poauth_revoke_token(poauth_state *s, const char *token, const char *client_id);

/* What an access token stands for (the principal of an MCP call). */
typedef struct poauth_principal {
  char connection_id[40], user_id[128], client_id[POAUTH_CLIENT_ID_MAX + 1], tenant_id[24],
       workspace[128], access[8];
} poauth_principal;
/* 1 valid (filled), 0 unknown/expired/revoked/malformed, <0 error. */
int poauth_access_resolve(poauth_state *s, const char *token,
                          poauth_principal *out);

/* ---- the connections page ---- */
typedef struct poauth_conn_row {
  char id[40], client[128], tenant[128], workspace[128], access[8];
  int64_t created, last_used;
} poauth_conn_row;
int poauth_connections(poauth_state *s, const char *user_id,
                       poauth_conn_row **out, size_t *n);
/* Revokes a connection of @p user_id; 1 done, 0 not theirs/already. */
int poauth_connection_revoke(poauth_state *s, const char *conn_id,
                             const char *user_id, const char *reason);

#endif
