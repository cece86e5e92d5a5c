/* SPDX-License-Identifier: MIT */
/**
 * @file tracking.h
 * The tracking toolset: discovery tools (list_workspaces,
 * list_projects, list_experiments, list_runs, get_run_attributes, ...) over
 * the same engine, budget engine and store as the research toolset. Runs
 * are selected with the library's filter language (attribute, series and
 * any_of conditions) and sorted by an attribute or a series summary.
 * Listings page by offset: they give total_count and next_offset, which
 * points at the first item not returned even when the token budget cut
 * the page short. list_runs stops counting 1,000 matches past the
 * page: total_count is then a lower bound, marked total_estimated.
 *
 * Read-only by construction, like the research toolset.
 */
#ifndef PROBEMCP_TRACKING_H
#define PROBEMCP_TRACKING_H

#include "common.h"
#include "error.h"
#include "server.h"
#include "store.h"
#include "tool.h"

PMCP_BEGIN_DECLS

#define PMCP_TRACKING_OPTIONS_VERSION 3

/** Options of pmcp_tracking_register(). Strings are copied. */
typedef struct pmcp_tracking_options {
  unsigned version;        /**< PMCP_TRACKING_OPTIONS_VERSION */
  const char *tenant;      /**< NULL: "default" */
  /** Defaults of the tools' optional `workspace` and `project` arguments
   *  (ids or refs), or NULL. Without a project default, a tenant with one
   *  project uses it and otherwise the tools ask for `project`. */
  const char *workspace;
  const char *project;
  /** The caller's role that list_workspaces reports (the host knows who
   *  connected: an API key's scope, a local user); NULL: "viewer", the
   *  role of a read-only connection. */
  const char *role;
  /* ---- version 2 ---- */
  /** As pmcp_research_options.scope: the workspace each call acts in (the
   *  tools' `workspace` argument is then the caller's request to act in
   *  another one, which @c scope accepts or refuses), or NULL. Version 2:
   *  a hook of release 0.1's layout, as pmcp_research_options version 3. */
  pmcp_scope_fn scope;
  void *scope_ud;
  /** With @c scope: the workspaces list_workspaces shows and the caller's
   *  role in each, or NULL (then the scope's own workspace and role). */
  pmcp_scope_list_fn scope_list;
  /* ---- version 3: no new member; @c scope fills a pmcp_call_scope ---- */
} pmcp_tracking_options;

#define PMCP_TRACKING_OPTIONS_INIT {PMCP_TRACKING_OPTIONS_VERSION, NULL, NULL, NULL, NULL, \
    NULL, NULL, NULL}

/**
 * Registers the tracking tools on @p server.
 * @param store a store opened with PMCP_STORE_READONLY; borrowed: it must
 *        outlive @p server.
 * @return 0; PMCP_EINVAL (store not read-only, bad options version);
 *         PMCP_ENOTFOUND (no such tenant); PMCP_EEXIST (a tool of the same
 *         name is registered); PMCP_ENOMEM.
 */
PMCP_API int pmcp_tracking_register(pmcp_server *server, pmcp_store *store,
                                    const pmcp_tracking_options *opts);

PMCP_END_DECLS

#endif
