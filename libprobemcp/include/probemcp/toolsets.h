/* SPDX-License-Identifier: MIT */
/**
 * @file toolsets.h
 * Serving the research and tracking toolsets over a store, the way
 * probe-mcp-stdio and probe-mcp-http do, in one call: open the store
 * read-only, register the toolsets asked for, and say in words what went
 * wrong. See pmcp_toolsets_register(3).
 */
#ifndef PROBEMCP_TOOLSETS_H
#define PROBEMCP_TOOLSETS_H

#include "common.h"
#include "error.h"
#include "server.h"
#include "store.h"
#include "tool.h"

PMCP_BEGIN_DECLS

#define PMCP_TOOLSETS_OPTIONS_VERSION 2

/** Options of pmcp_toolsets_register(). Strings are borrowed for the call. */
typedef struct pmcp_toolsets_options {
  unsigned version;          /**< PMCP_TOOLSETS_OPTIONS_VERSION */
  /** "research" (NULL), "tracking" or "all". */
  const char *toolset;
  /** The store (a path or a postgresql:// URL); NULL: PROBE_STORE, else
   *  the default store (pmcp_store_describe()). */
  const char *store;
  /** The lab; NULL: "default". */
  const char *tenant;
  /** For `search` semantic=true and `find_papers`; NULL: PROBE_EMBED_URL
   *  and PROBE_PAPERS_URL. PROBE_EMBED_KEY and PROBE_EMBED_MODEL are read
   *  from the environment. */
  const char *embed_url;
  const char *papers_url;
  /** The workspace each call acts in, for a host that authenticates its
   *  callers (see pmcp_research_options.scope), or NULL. Version 1: a
   *  hook of release 0.1's layout, as pmcp_research_options version 3. */
  pmcp_scope_fn scope;
  void *scope_ud;
  pmcp_scope_list_fn scope_list;
  /** Non-zero: tasks (pmcp_tasks(3)) stay in memory and end with the
   *  process. Otherwise they go to the store's tasks table
   *  (pmcp_store_task_store()), so they survive a restart and every server
   *  of the same store serves them; a store that cannot be written keeps
   *  them in memory, and @p msg says so. */
  int memory_tasks;
  /** Who a task belongs to (pmcp_task_store.owner), for a host with
   *  identities; NULL: tasks are the tenant's. */
  int (*task_owner)(void *ud, const void *session_ud, char *out, size_t size);
  /* ---- version 2: no new member; @c scope fills a pmcp_call_scope ---- */
} pmcp_toolsets_options;

#define PMCP_TOOLSETS_OPTIONS_INIT {PMCP_TOOLSETS_OPTIONS_VERSION, NULL, NULL, NULL, NULL, \
    NULL, NULL, NULL, NULL, 0, NULL}

/**
 * Opens the store read-only (it is never created, written or migrated) and
 * registers on @p server the toolsets @p opts asks for; the tracking
 * defaults of `workspace` and `project` come from PROBE_WORKSPACE and
 * PROBE_PROJECT. The server seals its cursors and task ids with the
 * store's key, so every server of one store accepts them, and keeps its
 * tasks in the store unless @c memory_tasks says otherwise.
 *
 * When no store exists and none was asked for (no store, tenant or
 * toolset in @p opts, no PROBE_STORE), nothing is registered: *@p store is
 * NULL, 0 is returned and @p msg says where the store was looked for and
 * how to make one (the server then honestly serves no tools).
 *
 * @param store receives the store (or NULL); the caller frees it with
 *        pmcp_store_free() after pmcp_server_free(), on failure too (tools
 *        registered before the failure hold it).
 * @param msg appended to (the caller disposes it): the reason of a
 *        failure, or the note above; names no internals.
 * @return 0; PMCP_EINVAL (an unknown toolset, a struct without version
 *         or of a version newer than the library's);
 *         the store's error (PMCP_ENOTFOUND for a missing store or
 *         tenant, PMCP_ECORRUPT, ...).
 */
PMCP_API int pmcp_toolsets_register(pmcp_server *server, const pmcp_toolsets_options *opts,
                                    pmcp_store **store, pmcp_buf *msg);

PMCP_END_DECLS

#endif
