/* SPDX-License-Identifier: MIT */
/* The service tables (who may call probe-mcp-http, and what happened), in
 * portable SQL run by every backend's migrations: TEXT and BIGINT columns,
 * text primary keys made by the caller, times in integer milliseconds.
 *
 * Tenants are referred to by the store's tenant id (tenants.id); a
 * workspace by its id in the tenant (the workspace:ID of the store API).
 * Secrets never appear in clear: API keys and OAuth tokens as lowercase hex
 * SHA-256 of the whole secret, passwords as a slow KDF string
 * ("pbkdf2-sha256$ITER$SALT$HASH", base64url). */
#include <stddef.h>

#include "store/db.h"

/* v6 (auth): local users, their roles per workspace, workspace API
 * keys, OAuth connections (the grant a person gave a client: one default
 * workspace, an access level), and the append-only audit log. */
static const char *const v6[] = {
  "CREATE TABLE IF NOT EXISTS users(id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
  " display_name TEXT, password TEXT, disabled BIGINT NOT NULL DEFAULT 0,"
  " created BIGINT NOT NULL, updated BIGINT NOT NULL)",
  /* role: viewer | editor | admin */
  "CREATE TABLE IF NOT EXISTS memberships(user_id TEXT NOT NULL, tenant_id BIGINT NOT NULL,"
  " workspace TEXT NOT NULL, role TEXT NOT NULL, created BIGINT NOT NULL,"
  " PRIMARY KEY(user_id, tenant_id, workspace))",
  "CREATE INDEX IF NOT EXISTS memberships_workspace ON memberships(tenant_id, workspace)",
  /* scope: read | write; revoked: NULL or the time of revocation */
  "CREATE TABLE IF NOT EXISTS api_keys(id TEXT PRIMARY KEY, name TEXT, prefix TEXT NOT NULL,"
  " hash TEXT NOT NULL UNIQUE, tenant_id BIGINT NOT NULL, workspace TEXT NOT NULL,"
  " scope TEXT NOT NULL, created_by TEXT, created BIGINT NOT NULL,"
  " last_used BIGINT, revoked BIGINT)",
  "CREATE INDEX IF NOT EXISTS api_keys_tenant ON api_keys(tenant_id, created)",
  /* access: read | write; the OAuth helper's tables (clients, codes,
   * tokens) point at a connection by id. */
  "CREATE TABLE IF NOT EXISTS mcp_connections(id TEXT PRIMARY KEY, user_id TEXT NOT NULL,"
  " client_id TEXT, tenant_id BIGINT NOT NULL, workspace TEXT NOT NULL,"
  " access TEXT NOT NULL, created BIGINT NOT NULL, last_used BIGINT, revoked BIGINT)",
  "CREATE INDEX IF NOT EXISTS mcp_connections_user ON mcp_connections(user_id, created)",
  /* via: mcp | cli; details: a JSON object, secrets masked as "***" */
  "CREATE TABLE IF NOT EXISTS audit_log(id TEXT PRIMARY KEY, time BIGINT NOT NULL, tenant_id BIGINT,"
  " workspace TEXT, actor TEXT NOT NULL, action TEXT NOT NULL, via TEXT NOT NULL,"
  " details TEXT NOT NULL)",
  "CREATE INDEX IF NOT EXISTS audit_log_time ON audit_log(time, id)",
  "CREATE INDEX IF NOT EXISTS audit_log_tenant ON audit_log(tenant_id, time)",
  NULL
};

/* v7 (oauth): the OAuth 2.1 authorization server of
 * probe-mcp-http. Every step of a flow is a row, so any replica can serve
 * any step. Single use (a code exchanged once, a refresh token
 * rotated once) is a conditional UPDATE on used/rotated IS NULL.
 *   oauth_clients   dynamic registrations (RFC 7591), public clients only;
 *                   redirect_uris a JSON array; used: the first sign-in
 *                   (registrations never used are pruned after a day)
 *   oauth_requests  the person's decision on an authorization request
 *                   (until then the request travels sealed, unstored);
 *                   its id is a hash of the sealed request
 *   oauth_codes     authorization codes (hash of the code), 10 minutes
 *   oauth_tokens    access (pbm_at_) and refresh (pbm_rt_) tokens by hash;
 *                   rotated: when a refresh token was exchanged
 *   oauth_sessions  consent-page sign-ins, by hash of the cookie */
static const char *const v7[] = {
  "CREATE TABLE IF NOT EXISTS oauth_clients(id TEXT PRIMARY KEY, name TEXT,"
  " redirect_uris TEXT NOT NULL, created BIGINT NOT NULL, used BIGINT)",
  "CREATE INDEX IF NOT EXISTS oauth_clients_unused ON oauth_clients(used, created)",
  "CREATE TABLE IF NOT EXISTS oauth_requests(id TEXT PRIMARY KEY, client_id TEXT NOT NULL,"
  " redirect_uri TEXT NOT NULL, challenge TEXT NOT NULL, state TEXT, resource TEXT,"
  " scope TEXT, created BIGINT NOT NULL, expires BIGINT NOT NULL, done BIGINT)",
  "CREATE INDEX IF NOT EXISTS oauth_requests_expires ON oauth_requests(expires)",
  "CREATE TABLE IF NOT EXISTS oauth_codes(hash TEXT PRIMARY KEY, connection_id TEXT NOT NULL,"
  " client_id TEXT NOT NULL, redirect_uri TEXT NOT NULL, challenge TEXT NOT NULL,"
  " resource TEXT, expires BIGINT NOT NULL, used BIGINT)",
  "CREATE INDEX IF NOT EXISTS oauth_codes_expires ON oauth_codes(expires)",
  "CREATE TABLE IF NOT EXISTS oauth_tokens(hash TEXT PRIMARY KEY, kind TEXT NOT NULL,"
  " connection_id TEXT NOT NULL, client_id TEXT NOT NULL, resource TEXT,"
  " created BIGINT NOT NULL, expires BIGINT NOT NULL, rotated BIGINT)",
  "CREATE INDEX IF NOT EXISTS oauth_tokens_connection ON oauth_tokens(connection_id)",
  "CREATE INDEX IF NOT EXISTS oauth_tokens_expires ON oauth_tokens(expires)",
  "CREATE TABLE IF NOT EXISTS oauth_sessions(hash TEXT PRIMARY KEY, user_id TEXT NOT NULL,"
  " created BIGINT NOT NULL, expires BIGINT NOT NULL)",
  "CREATE INDEX IF NOT EXISTS oauth_sessions_expires ON oauth_sessions(expires)",
  NULL
};

/* v12: durable tasks (io.modelcontextprotocol/tasks, store/tasks.c), so a
 * task outlives its process and any replica serves it.
 *   id             the sealed task id the client holds
 *   owner          the caller it belongs to (the host's name for it)
 *   status         working | input_required | completed | failed | cancelled
 *   request        the call (JSON: tool, arguments, client capabilities)
 *   answers, input_requests, result, error   JSON text or NULL
 *   runner, lease  the process running it and until when it vouches for
 *                  it; a working task past its lease is failed by its
 *                  next reader
 *   expires        swept after this (1 hour after its last change) */
static const char *const v12[] = {
  "CREATE TABLE IF NOT EXISTS tasks(id TEXT PRIMARY KEY, tenant_id BIGINT NOT NULL,"
  " owner TEXT NOT NULL, status TEXT NOT NULL, request TEXT NOT NULL, answers TEXT,"
  " input_requests TEXT, result TEXT, error TEXT, runner TEXT, lease BIGINT,"
  " created BIGINT NOT NULL, updated BIGINT NOT NULL, expires BIGINT NOT NULL)",
  "CREATE INDEX IF NOT EXISTS tasks_expires ON tasks(expires)",
  NULL
};

const char *const *pmcp__service_ddl(int version)
{
  switch (version) {
  case 6: return v6;
  case 7: return v7;
  case 12: return v12;
  default: return NULL;
  }
}
