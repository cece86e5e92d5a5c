/* SPDX-License-Identifier: MIT */
/* pmcp_toolsets_register(): the store-opening and toolset registration
 * every server of the toolsets does (probe-mcp-stdio, probe-mcp-http), in
 * one place. */
#include <stdlib.h>
#include <string.h>

#include "probemcp/cursor.h"
#include "probemcp/research.h"
#include "probemcp/tasks.h"
#include "probemcp/toolsets.h"
#include "probemcp/tracking.h"
#include "util/abi.h"
#include "util/buf.h"

/* @p v, else the environment variable @p name (NULL when unset or empty). */
static const char *or_env(const char *v, const char *name)
{
  if (v)
    return v;
  const char *e = getenv(name);
  return e && *e ? e : NULL;
}

PMCP_API int pmcp_toolsets_register(pmcp_server *server, const pmcp_toolsets_options *opts,
                                    pmcp_store **store, pmcp_buf *msg)
{
  pmcp_toolsets_options o = PMCP_TOOLSETS_OPTIONS_INIT;
  if (store)
    *store = NULL;
  if (!server || !store ||
      (opts && !PMCP__VERSION_OK(opts->version, PMCP_TOOLSETS_OPTIONS_VERSION))) {
    if (msg)
      pmcp__buf_puts(msg, !server || !store ? "pmcp_toolsets_register: a server and a place "
                                              "for the store are needed"
                                            : "pmcp_toolsets_register: the options' version "
                                              "is not set or newer than the library's (use "
                                              "PMCP_TOOLSETS_OPTIONS_INIT)");
    return PMCP_EINVAL;
  }
  if (opts)
    o = *opts; /* every version so far has the members of version 1 */
  const char *ts = o.toolset ? o.toolset : "research";
  int research = !strcmp(ts, "research") || !strcmp(ts, "all");
  int tracking = !strcmp(ts, "tracking") || !strcmp(ts, "all");
  if (!research && !tracking) {
    if (msg)
      pmcp__buf_printf(msg, "the toolset must be research, tracking or all, not '%.64s'", ts);
    return PMCP_EINVAL;
  }
  int asked = o.store || o.tenant || o.toolset || or_env(NULL, "PROBE_STORE");

  pmcp_store *st = NULL;
  int rc = pmcp_store_open(&st, o.store, PMCP_STORE_READONLY);
  if (rc) {
    if (!asked && rc == PMCP_ENOTFOUND) {
      pmcp_buf where = PMCP_BUF_INIT;
      if (msg && pmcp_store_describe(&where, NULL) == 0)
        pmcp__buf_printf(msg, "no store at %s: serving no tools (make one with 'probe init' "
                         "or 'probe demo', or give --store or PROBE_STORE)", where.ptr);
      pmcp_buf_dispose(&where);
      pmcp_store_free(st);
      return 0;
    }
    if (msg)
      pmcp__buf_printf(msg, "cannot open the store: %s",
                       st ? pmcp_store_errmsg(st) : pmcp_strerror(rc));
    pmcp_store_free(st);
    return rc;
  }

  /* Tasks in the store's tasks table; a store that cannot be written
   * leaves them in memory, which is said. */
  if (!o.memory_tasks) {
    pmcp_task_store tstore;
    char why[400] = "";
    int trc = pmcp_store_task_store(o.store, o.tenant, &tstore, why, sizeof why);
    if (trc == 0) {
      tstore.owner = o.task_owner;
      if ((trc = pmcp_server_set_task_store(server, &tstore)) != 0)
        tstore.release(tstore.ud);
    }
    if (trc && msg)
      pmcp__buf_printf(msg, "tasks are kept in memory and end with this process (the "
                       "store's tasks table cannot be used: %s)",
                       why[0] ? why : pmcp_strerror(trc));
  }
  /* cursors, requestState and task ids made by one server of this store
   * are good on every other */
  pmcp_buf key = PMCP_BUF_INIT;
  if (pmcp_store_secret(st, "cursor_key", &key) == 0)
    pmcp_server_set_cursor_key(server, key.ptr, key.len);
  pmcp_buf_dispose(&key);

  if (research) {
    pmcp_research_options ro = PMCP_RESEARCH_OPTIONS_INIT;
    ro.tenant = o.tenant;
    ro.embed_url = or_env(o.embed_url, "PROBE_EMBED_URL");
    ro.embed_key = or_env(NULL, "PROBE_EMBED_KEY");
    ro.embed_model = or_env(NULL, "PROBE_EMBED_MODEL");
    ro.papers_url = or_env(o.papers_url, "PROBE_PAPERS_URL");
    ro.scope = o.scope;
    ro.scope_ud = o.scope_ud;
    if (o.version < 2)
      ro.version = 3; /* a hook of release 0.1's layout */
    rc = pmcp_research_register(server, st, &ro);
  }
  if (!rc && tracking) {
    pmcp_tracking_options to = PMCP_TRACKING_OPTIONS_INIT;
    to.tenant = o.tenant;
    to.workspace = or_env(NULL, "PROBE_WORKSPACE");
    to.project = or_env(NULL, "PROBE_PROJECT");
    to.scope = o.scope;
    to.scope_ud = o.scope_ud;
    to.scope_list = o.scope_list;
    if (o.version < 2)
      to.version = 2; /* a hook of release 0.1's layout */
    rc = pmcp_tracking_register(server, st, &to);
  }
  if (rc) {
    if (msg) {
      if (msg->len)
        pmcp__buf_puts(msg, "; ");
      if (rc == PMCP_ENOTFOUND)
        pmcp__buf_printf(msg, "cannot serve the %s toolset: no such tenant %.128s", ts,
                         o.tenant ? o.tenant : "default");
      else
        pmcp__buf_printf(msg, "cannot serve the %s toolset: %s", ts, pmcp_strerror(rc));
    }
    /* tools already registered hold the store: it must outlive the server */
    *store = st;
    return rc;
  }
  *store = st;
  return 0;
}
