/* SPDX-License-Identifier: MIT */
/**
 * @file service.h
 * The service layer of a store: importing experiment data, workspace API
 * keys, local users and their roles, and the audit log. The `probe` CLI
 * and probe-mcp-http use these calls; a host that runs its own service
 * over a probe store uses them too. See pmcp_service(3).
 *
 * Every call takes a pmcp_store opened for writing unless it says "reads".
 * Messages go to the store (pmcp_store_errmsg()) and never tell whether a
 * resource of another tenant exists. Secrets are never stored or logged in
 * clear: a key is kept as the SHA-256 of its text, a password as a salted
 * PBKDF2-HMAC-SHA256 string; audit details are masked (every value under a
 * secret-looking name becomes "***"). Every change is audited with the
 * @p actor ("user:NAME", "key:ID", "cli:LOGIN") and @p via ("cli", "http")
 * the caller gives, in the same transaction as the change.
 *
 * Structs that the caller fills, and those the library fills, start with
 * a version member: set it with the INIT macro, so a program built against
 * an older header keeps working with a newer library (every call accepts
 * every version up to its own). No public struct has a fixed-size string.
 * The principal calls changed layout before any release of this header,
 * so no older symbol versions exist for them.
 */
#ifndef PROBEMCP_SERVICE_H
#define PROBEMCP_SERVICE_H

#include "common.h"
#include "error.h"
#include "store.h"

PMCP_BEGIN_DECLS

/* ------------------------------------------------------------------ */
/* Importing                                                          */

/** Progress of an import: @p what is a short label ("runs", "points",
 *  "papers", "papers index"), @p total 0 when unknown. Called on the importing
 *  thread. */
typedef void (*pmcp_import_progress_fn)(const char *what, uint64_t done, uint64_t total,
                                        void *ud);

#define PMCP_IMPORT_OPTIONS_VERSION 1

/** How pmcp_import() files what it reads. Strings are borrowed for the call. */
typedef struct pmcp_import_options {
  unsigned version;           /**< PMCP_IMPORT_OPTIONS_VERSION */
  /** The project the import files into. MLflow: default the store
   *  folder's name (its parent's when it is "mlruns"). Others: NULL files
   *  runs unfiled, unless @c experiment is given (project "imports"). */
  const char *project;
  /** Experiment for TensorBoard, CSV and Trainer runs, or NULL. */
  const char *experiment;
  /** Display name of the run (one-run imports), or NULL. */
  const char *name;
  pmcp_import_progress_fn progress; /**< or NULL */
  void *progress_ud;
  /** Non-zero: the caller has a transaction open (pmcp_store_begin()) and
   *  commits or rolls it back itself; otherwise the import is its own. */
  int in_transaction;
} pmcp_import_options;

#define PMCP_IMPORT_OPTIONS_INIT {PMCP_IMPORT_OPTIONS_VERSION, NULL, NULL, NULL, NULL, NULL, 0}

#define PMCP_IMPORT_COUNTS_VERSION 1

/** What an import read and stored. The caller sets @c version (the INIT
 *  macro); the library fills the members that version has. */
typedef struct pmcp_import_counts {
  unsigned version;           /**< PMCP_IMPORT_COUNTS_VERSION */
  uint64_t experiments, runs, runs_skipped, attrs, points, histograms, artifacts,
      artifacts_skipped, checkpoints, papers, papers_skipped, deleted_runs, files;
  uint64_t values_skipped;    /**< TensorBoard values of other plugins */
  uint64_t folders_skipped;   /**< MLflow folders that are not runs */
} pmcp_import_counts;

#define PMCP_IMPORT_COUNTS_INIT {PMCP_IMPORT_COUNTS_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, \
                                 0, 0, 0, 0, 0, 0}

/**
 * Imports @p path in @p format ("mlflow", "tensorboard", "csv", "hf",
 * "arxiv") into tenant @p t of @p store. All or nothing: on failure the
 * store is as before and @p err (appended to; the caller disposes it) says
 * why ("FILE: line N: ..." for bad input, the disk holding the store for
 * a full disk). With @p store NULL: a dry run that reads and counts but
 * stores nothing. @p options NULL: the defaults. @p counts may be NULL.
 * @return 0; PMCP_EINVAL (bad input or format), PMCP_EIO, a store error.
 */
PMCP_API int pmcp_import(pmcp_store *store, pmcp_tenant t, const char *format,
                         const char *path, const pmcp_import_options *options,
                         pmcp_import_counts *counts, pmcp_buf *err);

/* ------------------------------------------------------------------ */
/* Roles                                                              */

/** A person's role in a workspace. Keys are viewers, or editors with
 *  write scope; never admins. */
typedef enum pmcp_role {
  PMCP_ROLE_NONE = 0,
  PMCP_ROLE_VIEWER = 1, /**< reads */
  PMCP_ROLE_EDITOR = 2, /**< reads and writes */
  PMCP_ROLE_ADMIN = 3   /**< and the workspace's admin tools */
} pmcp_role;

/** "viewer" | "editor" | "admin" -> its role, anything else PMCP_ROLE_NONE. */
PMCP_API pmcp_role pmcp_role_parse(const char *name);
/** The role's name ("viewer", ...), or "none". Never NULL. */
PMCP_API const char *pmcp_role_name(pmcp_role role);

/* ------------------------------------------------------------------ */
/* API keys                                                           */

/**
 * Creates an API key for @p workspace of tenant @p t (the workspace must
 * exist; "default" always does), with write scope when @p write is
 * non-zero. @p secret gets the text shown once ("pk_" and 43 base64url
 * characters), @p id its id (both appended; the caller disposes them).
 * @return 0; PMCP_EINVAL; PMCP_ENOTFOUND (no such workspace); a store error.
 */
PMCP_API int pmcp_key_create(pmcp_store *store, pmcp_tenant t, const char *workspace,
                             int write, const char *name, const char *actor,
                             const char *via, pmcp_buf *secret, pmcp_buf *id);
/** Appends the tenant's keys to @p out as a JSON array (id, name, prefix,
 *  workspace, scope, created, last_used, revoked, created_by; times in
 *  ms). Reads. @return 0 or a store error. */
PMCP_API int pmcp_key_list(pmcp_store *store, pmcp_tenant t, pmcp_buf *out);
/** Revokes key @p id of tenant @p t. @return 0; PMCP_ENOTFOUND (not of
 *  this tenant, or already revoked); a store error. */
PMCP_API int pmcp_key_revoke(pmcp_store *store, pmcp_tenant t, const char *id,
                             const char *actor, const char *via);

/* ------------------------------------------------------------------ */
/* Users and their roles                                              */

/** Creates a local user. Names: 1-64 of [A-Za-z0-9._@-]. @p password NULL:
 *  the user cannot sign in until one is set. @p id gets the new id.
 *  @return 0; PMCP_EINVAL; PMCP_EEXIST; a store error. */
PMCP_API int pmcp_user_create(pmcp_store *store, const char *name, const char *display,
                              const char *password, const char *actor, const char *via,
                              pmcp_buf *id);
/** Sets a user's password; ends the user's page sessions.
 *  @return 0; PMCP_ENOTFOUND; PMCP_EINVAL; a store error. */
PMCP_API int pmcp_user_passwd(pmcp_store *store, const char *name, const char *password,
                              const char *actor, const char *via);
/** Disables (@p disabled 1) or enables (0) a user; a disabled user's
 *  connections and page sessions stop working at once.
 *  @return 0; PMCP_ENOTFOUND; a store error. */
PMCP_API int pmcp_user_disable(pmcp_store *store, const char *name, int disabled,
                               const char *actor, const char *via);
/** Sets (@p role other than PMCP_ROLE_NONE) or removes (PMCP_ROLE_NONE)
 *  @p name's role in @p workspace of tenant @p t.
 *  @return 0; PMCP_ENOTFOUND; PMCP_EINVAL; a store error. */
PMCP_API int pmcp_user_set_role(pmcp_store *store, const char *name, pmcp_tenant t,
                                const char *workspace, pmcp_role role, const char *actor,
                                const char *via);
/** Appends the users to @p out as a JSON array (id, name, display_name,
 *  disabled, created, memberships [{tenant, workspace, role}]). @p t.id 0:
 *  every tenant's memberships; else users with a membership in @p t.
 *  Reads. @return 0 or a store error. */
PMCP_API int pmcp_user_list(pmcp_store *store, pmcp_tenant t, pmcp_buf *out);

/* ------------------------------------------------------------------ */
/* The principal a request acts as                                    */

/** What kind of credential a principal comes from. */
typedef enum pmcp_principal_kind {
  PMCP_PRINCIPAL_KEY = 1,        /**< a workspace API key */
  PMCP_PRINCIPAL_CONNECTION = 2  /**< an OAuth connection: a person through a client */
} pmcp_principal_kind;

#define PMCP_PRINCIPAL_VERSION 1

/** What one request acts as, filled by the library from the store; a host
 *  resolves it again on every request, so a revoked key, a disabled person
 *  or a changed role takes effect at once.
 *
 *  The caller sets @c version (PMCP_PRINCIPAL_INIT); the calls below fill
 *  the rest. Strings are never NULL ("" when absent) and point into one
 *  allocation the library owns: they stay valid until
 *  pmcp_principal_dispose(), which the caller calls once it is done with
 *  a principal any call filled (also after a refusal: harmless then). A
 *  plain struct copy shares those strings: copy with pmcp_principal_copy()
 *  and dispose each. */
typedef struct pmcp_principal {
  unsigned version;        /**< PMCP_PRINCIPAL_VERSION */
  int kind;                /**< pmcp_principal_kind */
  const char *id;          /**< the key's or the connection's id */
  const char *user_id;     /**< the person (connections), "" for keys */
  const char *user_name;
  int64_t tenant_id;
  const char *tenant;      /**< the tenant's name */
  const char *workspace;   /**< the workspace it acts in */
  int write;               /**< the credential allows writes (key scope,
                            *   connection access) */
  int role;                /**< pmcp_role there; keys: editor with write
                            *   scope, else viewer; never admin */
  const char *actor;       /**< for the audit log: "key:ID" or "user:NAME" */
  void *pmcp__mem;         /**< the library's allocation; do not touch */
} pmcp_principal;

#define PMCP_PRINCIPAL_INIT {PMCP_PRINCIPAL_VERSION, 0, NULL, NULL, NULL, 0, NULL, NULL, \
                             0, 0, NULL, NULL}

/** Frees the strings of @p p and leaves it as PMCP_PRINCIPAL_INIT left it
 *  (its version kept); NULL ok. */
PMCP_API void pmcp_principal_dispose(pmcp_principal *p);
/** Makes @p dst (version set, empty or disposed) an independent copy of
 *  @p src. @return 0; PMCP_EINVAL (a bad version); PMCP_ENOMEM. */
PMCP_API int pmcp_principal_copy(pmcp_principal *dst, const pmcp_principal *src);

/** Resolves an API key's text ("pk_...", @p len bytes) and records its
 *  last use (skipped on a read-only store). @p out: version set; what it
 *  held is disposed first. @return 0 with @p out filled; PMCP_EDENIED
 *  (unknown, revoked or malformed: one message); PMCP_EINVAL (a bad
 *  version); PMCP_ENOMEM; a store error. */
PMCP_API int pmcp_principal_of_key(pmcp_store *store, const char *secret, size_t len,
                                   pmcp_principal *out);
/** The principal of an OAuth connection (see pmcp_oauth_access_resolve()).
 *  @return 0; PMCP_EDENIED when the connection is revoked, its user
 *  disabled or no longer a member of its workspace; a store error. */
PMCP_API int pmcp_principal_of_connection(pmcp_store *store, const char *connection_id,
                                          pmcp_principal *out);
/** Moves connection principal @p p into another @p workspace of its tenant
 *  that the person belongs to (role re-read there; its strings are
 *  replaced, so pointers read from @p p before are stale). @return 0;
 *  PMCP_EDENIED (not a connection, no such workspace, not a member: one
 *  message); a store error. */
PMCP_API int pmcp_principal_in_workspace(pmcp_store *store, pmcp_principal *p,
                                         const char *workspace);
/** 1 when @p p may run write tools (write access and at least editor). */
PMCP_API int pmcp_principal_can_write(const pmcp_principal *p);
/** Appends to @p out a JSON object of the workspaces @p p may act in and
 *  its role in each ({"default":"editor"}): a key's own workspace, or the
 *  person's memberships in the principal's tenant. Reads.
 *  @return 0, PMCP_ENOMEM or a store error. */
PMCP_API int pmcp_principal_workspaces(pmcp_store *store, const pmcp_principal *p,
                                       pmcp_buf *out);

/* ------------------------------------------------------------------ */
/* The audit log                                                      */

/** Appends one entry for tenant @p t (@p t.id 0: not a tenant's event) by
 *  @p actor via @p via. @p details_json: a JSON object or NULL; every value
 *  under a secret-looking name (secret, password, token, key, code,
 *  cookie, ...) is stored as "***". @return 0, PMCP_EINVAL or a store
 *  error. */
PMCP_API int pmcp_audit_add(pmcp_store *store, pmcp_tenant t, const char *workspace,
                            const char *actor, const char *action, const char *via,
                            const char *details_json);

#define PMCP_AUDIT_QUERY_VERSION 1

/** Which audit entries pmcp_audit_list() returns. */
typedef struct pmcp_audit_query {
  unsigned version;           /**< PMCP_AUDIT_QUERY_VERSION */
  int64_t since_ms;           /**< 0: from the start */
  /** An exact action ("api_key.create"), or a prefix ending in '.' or '*';
   *  NULL: every action. */
  const char *action;
  int64_t tenant_id;          /**< 0: every tenant */
  size_t limit;               /**< 0: 1000 */
} pmcp_audit_query;

#define PMCP_AUDIT_QUERY_INIT {PMCP_AUDIT_QUERY_VERSION, 0, NULL, 0, 0}

/** Appends the entries (oldest first) to @p out as a JSON array of {id,
 *  time, tenant, workspace, actor, action, via, details}. Reads.
 *  @p q NULL: the defaults. @return 0; PMCP_EINVAL; a store error. */
PMCP_API int pmcp_audit_list(pmcp_store *store, const pmcp_audit_query *q, pmcp_buf *out);

PMCP_END_DECLS

#endif
