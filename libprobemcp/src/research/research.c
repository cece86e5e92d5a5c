/* SPDX-License-Identifier: MIT */
/* pmcp_research_register(): the research toolset on a server. The parts
 * table is the extension point: a later tool (metrics, query_sql,
 * find_papers) adds its pmcp__research_add_*() line here. */
#include "research/research.h"

#include <stdlib.h>
#include <string.h>

#include "probemcp/cursor.h"
#include "store/store_int.h" /* the handle's tool_lock */

typedef int (*part_fn)(pmcp_server *server, pmcp__research *rs);

static const struct {
  const char *name;
  part_fn add;
} parts[] = {
  {"browse", pmcp__research_add_browse},
  {"search", pmcp__research_add_search},
  {"entity", pmcp__research_add_entity},
  {"metrics", pmcp__research_add_metrics},
  {"query_sql", pmcp__research_add_query_sql},
  {"find_papers", pmcp__research_add_papers},
  {"resources", pmcp__research_add_resources},
  {"prompts", pmcp__research_add_prompts},
  {"skill", pmcp__research_add_skill},
};

static char *dup_or_null(const char *s)
{
  return s && *s ? strdup(s) : NULL;
}

int pmcp__research_new(pmcp_store *store, const char *tenant, pmcp__research **out)
{
  *out = NULL;
  /* Read-only by construction: the tools get no handle that can write. */
  if (!store || !pmcp_store_readonly(store))
    return PMCP_EINVAL;
  pmcp_tenant t;
  int rc = pmcp_store_tenant(store, tenant, 0, &t);
  if (rc)
    return rc;
  /* Cursors signed with the store's key survive restarts and work across
   * replicas; a store without one keeps the server's random key. */
  pmcp__research *rs = calloc(1, sizeof *rs);
  if (!rs)
    return PMCP_ENOMEM;
  pmcp_buf key = PMCP_BUF_INIT;
  if (pmcp_store_secret(store, "cursor_key", &key) == 0 &&
      key.len >= PMCP_CURSOR_KEY_MIN && key.len <= PMCP_CURSOR_KEY_MAX) {
    memcpy(rs->cursor_key, key.ptr, key.len);
    rs->cursor_key_len = key.len;
  } else if (pmcp_cursor_key_generate(rs->cursor_key, 32) == 0) {
    rs->cursor_key_len = 32;
  }
  if (key.ptr)
    memset(key.ptr, 0, key.len);
  pmcp_buf_dispose(&key);
  if (!rs->cursor_key_len) {
    free(rs);
    return PMCP_EINTERNAL;
  }
  rs->store = store;
  rs->tenant = t;
  rs->lock = &store->tool_lock;
  rs->tenant_name = strdup(tenant ? tenant : "default");
  rs->papers_timeout_ms = 10000;
  rs->refs = 1;
  if (!rs->tenant_name) {
    pmcp__research_release(rs);
    return PMCP_ENOMEM;
  }
  *out = rs;
  return 0;
}

int pmcp_research_register(pmcp_server *server, pmcp_store *store,
                           const pmcp_research_options *opts)
{
  pmcp_research_options def = PMCP_RESEARCH_OPTIONS_INIT;
  if (!opts)
    opts = &def;
  /* version 1 callers know no papers_* fields */
  if (!server || !store || opts->version < 1 || opts->version > PMCP_RESEARCH_OPTIONS_VERSION)
    return PMCP_EINVAL;
  pmcp__research *rs;
  int rc = pmcp__research_new(store, opts->tenant, &rs);
  if (rc)
    return rc;
  rs->embed_url = dup_or_null(opts->embed_url);
  rs->embed_model = dup_or_null(opts->embed_model);
  rs->embed_key = dup_or_null(opts->embed_key);
  if (opts->version >= 2) {
    rs->papers_url = dup_or_null(opts->papers_url);
    if (opts->papers_timeout_ms > 0)
      rs->papers_timeout_ms = opts->papers_timeout_ms;
  }
  if (opts->version >= 3) {
    rs->scope = opts->scope;
    rs->scope_ud = opts->scope_ud;
    rs->scope_0_1 = opts->version < 4;
  }
  if ((opts->embed_url && *opts->embed_url && !rs->embed_url) ||
      (opts->version >= 2 && opts->papers_url && *opts->papers_url && !rs->papers_url)) {
    pmcp__research_release(rs);
    return PMCP_ENOMEM;
  }
  rc = 0;
  for (size_t i = 0; i < sizeof parts / sizeof parts[0] && !rc; i++)
    rc = parts[i].add(server, rs);
  pmcp__research_release(rs);
  return rc;
}
