/* SPDX-License-Identifier: MIT */
/* Authentication and authorization of probe-mcp-http's MCP endpoint:
 * who a request is (a workspace API key "pk_...", or an OAuth
 * access token resolved by the oauth code into a connection), re-read from
 * the store on every request; which tools its session sees (write tools
 * only for write access with an editor or admin role); and the audit of
 * every write tool call. Used by probe-mcp-http and the test-only write
 * server (tests/http/http-writeserver.c). */
#ifndef PMCP_HTTP_AUTH_MCP_H
#define PMCP_HTTP_AUTH_MCP_H

#include <stddef.h>

#include <probemcp/probemcp.h>

#include <probemcp/http.h>

typedef struct mcp_auth mcp_auth;

/* Resolves a bearer token of another kind (OAuth access tokens) into a
 * connection id: 1 valid, 0 not valid, < 0 store error. Thread-safe. */
typedef int (*mcp_token_fn)(void *ud, const char *token, size_t len, char conn_id[64]);

/* @p st: a writable store (the service tables), borrowed, outliving the
 * object. @p tenant: the tenant the server serves (NULL: "default"); a
 * credential of another tenant is refused like an unknown one.
 * @p public_base: PUBLIC_BASE_URL or NULL (then the 401's
 * resource_metadata URL is built from Host / forwarded headers).
 * @p endpoint: the MCP path. Returns 0 or -1 with a reason. */
int mcp_auth_new(mcp_auth **out, pmcp_store *st, const char *tenant,
                 const char *public_base, const char *endpoint, char *why,
                 size_t whysize);
void mcp_auth_free(mcp_auth *a);

/* Where @p st of mcp_auth_new lives (as pmcp_store_open() takes it): each
 * thread that authenticates requests (the transport's loop) then opens a
 * handle of its own on its first request and checks credentials there,
 * without the lock every other use of @p st takes. Without it credentials
 * are checked on @p st under that lock. Call once, before serving. 0 or
 * PMCP_EINVAL / PMCP_ENOMEM. */
int mcp_auth_set_store(mcp_auth *a, const char *where);

/* Tokens starting with @p prefix (e.g. "pbm_at_") go to @p fn. One slot. */
void mcp_auth_set_token_resolver(mcp_auth *a, const char *prefix, mcp_token_fn fn,
                                 void *ud);

/* pmcp_http_options.auth with auth_ud = the mcp_auth. */
void *mcp_auth_http(void *ud, const pmcp_http_request *req, char *challenge,
                    size_t challenge_size, char *why, size_t why_size);

/* Installs the tool filter on @p srv (before the first message). */
int mcp_auth_install(mcp_auth *a, pmcp_server *srv);

/* Registers a write tool (its read_only hint must not be true): hidden
 * from, and refused to, sessions that may not write; each call is audited
 * as @p action (e.g. "run.delete") with via "mcp". @p a NULL: no checks
 * (authentication off), no audit. */
int mcp_auth_add_write_tool(mcp_auth *a, pmcp_server *srv, const pmcp_tool_def *def,
                            const char *action);

/* The current principal of a session (its engine ud), copied into @p out
 * (version set; the caller disposes it): 0, or -1 when the session has
 * none (authentication off) or without memory. */
int mcp_auth_principal(void *session_ud, pmcp_principal *out);

/* pmcp_task_store.owner: the principal's tenant and credential
 * ("TENANT/key:ID" or "TENANT/connection:ID"), the same on every replica. */
int mcp_auth_task_owner(void *ud, const void *session_ud, char *out, size_t size);

/* pmcp_scope_fn for the research and tracking tools (ud: the mcp_auth):
 * the call acts in its principal's workspace; a signed-in connection may
 * name another workspace it belongs to (re-checked, role re-read, on every
 * call); an API key may not. */
int mcp_auth_scope(pmcp_call *call, const char *asked, pmcp_call_scope *out, char *msg,
                   size_t msg_size, void *ud);
/* The principal as a call acts: in the workspace its `workspace` argument
 * names (with the same rules and messages as mcp_auth_scope, the role
 * re-read there), else its own. 0, or an error with @p msg set. Write
 * tools check their role with it and act in its workspace. @p out as for
 * mcp_auth_principal(): the caller disposes it, also after an error. */
int mcp_auth_call_principal(pmcp_call *call, mcp_auth *a, pmcp_principal *out,
                            char *msg, size_t msg_size);
/* pmcp_scope_list_fn: the caller's workspaces and roles for
 * list_workspaces. */
int mcp_auth_scope_list(pmcp_call *call, pmcp_buf *out, void *ud);

/* The served tenant (for the toolsets' scope). */
pmcp_tenant mcp_auth_tenant(const mcp_auth *a);

#endif
