/* SPDX-License-Identifier: MIT */
/* The workspace each research or tracking call acts in. A host that
 * authenticates its callers (probe-mcp-http) answers through its scope
 * hook: an API key's workspace, a signed-in connection's default, or
 * another workspace the person belongs to when the call names one in
 * `workspace`. Without a hook the call sees every workspace of the tenant
 * unless it names one. The answer becomes the call's tenant scope
 * (pmcp_store_scope()), so the store, not each tool, keeps the rows of
 * other workspaces out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/research.h"
#include "util/crypto.h"

const pmcp_arg_spec pmcp__rs_workspace_arg = {
    "workspace", PMCP_T_STRING, 0,
    "workspace id (default: the connection's)",
    1, 0, 1, 0, NULL, NULL};

static int scope_in(pmcp_call *call, pmcp__research *rs, pmcp_tenant *t, pmcp_call_scope *sc)
{
  const char *asked = NULL;
  if (pmcp_arg_has(call, "workspace") && pmcp_arg_string(call, "workspace", &asked, NULL) != 0)
    asked = NULL;
  if (asked && strncmp(asked, "workspace:", 10) == 0)
    asked += 10;
  if (rs->scope) {
    char msg[256] = "";
    int hrc = pmcp__call_scope_ask(rs->scope, rs->scope_0_1, call, asked, sc, msg, sizeof msg,
                                   rs->scope_ud);
    if (hrc == PMCP_ENOMEM)
      return hrc;
    if (hrc != 0) {
      pmcp__rs_fail(call, PMCP_TERR_DENIED, "%s", msg[0] ? msg : "no access to this workspace");
      return 1;
    }
  } else if (asked && pmcp_call_scope_set_workspace(sc, asked)) {
    return PMCP_ENOMEM;
  }
  const char *ws = pmcp_call_scope_workspace(sc);
  if (!ws[0])
    return 0;
  pthread_mutex_lock(rs->lock);
  int rc = pmcp_store_scope(rs->store, rs->tenant, ws, t);
  char why[200];
  snprintf(why, sizeof why, "%s", pmcp_store_errmsg(rs->store));
  pthread_mutex_unlock(rs->lock);
  if (rc == 0)
    return 0;
  /* With a host deciding, a workspace it allowed but the store lacks is
   * answered like a refused one; without a host, the caller named it. */
  if (rc == PMCP_ENOTFOUND || rc == PMCP_EINVAL)
    pmcp__rs_fail(call, rs->scope ? PMCP_TERR_DENIED : PMCP_TERR_NOT_FOUND, "%s",
                  rs->scope ? "no such workspace, or no access to it" : why);
  else
    pmcp__rs_fail(call, PMCP_TERR_STORE, "%s", why);
  return 1;
}

int pmcp__rs_scope(pmcp_call *call, pmcp__research *rs, pmcp_tenant *t, pmcp_call_scope *sc)
{
  *t = rs->tenant;
  pmcp_call_scope local = PMCP__CALL_SCOPE_INIT;
  int rc = scope_in(call, rs, t, sc ? sc : &local);
  pmcp__call_scope_dispose(&local);
  return rc;
}

/* A view acting in one workspace signs its cursors with a key of that
 * workspace (HMAC of the toolset's key), so a cursor made in one
 * workspace is refused, as foreign, in another. */
static int scope_cursor_key(pmcp__research *view)
{
  if (view->tenant.workspace == 0)
    return 0;
  char label[64];
  int n = snprintf(label, sizeof label, "workspace-cursor:%lld:%d",
                   (long long)view->tenant.workspace, view->tenant.unfiled);
  unsigned char k[PMCP__SHA256_LEN];
  if (pmcp__hmac_sha256(view->cursor_key, view->cursor_key_len, label, (size_t)n, NULL, 0, k))
    return PMCP_EINTERNAL;
  memcpy(view->cursor_key, k, sizeof k);
  view->cursor_key_len = sizeof k;
  return 0;
}

typedef struct rs_tool {
  pmcp_tool_fn fn;
  pmcp__research *rs;
} rs_tool;

static void rs_tool_free(void *ud)
{
  rs_tool *w = ud;
  if (!w)
    return;
  pmcp__research_release(w->rs);
  free(w);
}

static int rs_tool_call(pmcp_call *call, void *ud)
{
  rs_tool *w = ud;
  /* A view of the toolset for this call only: the same store, lock and
   * keys, the call's tenant scope. */
  pmcp__research view = *w->rs;
  int r = pmcp__rs_scope(call, w->rs, &view.tenant, NULL);
  if (r)
    return r > 0 ? 0 : r;
  if ((r = scope_cursor_key(&view)) != 0)
    return r;
  return w->fn(call, &view);
}

int pmcp__rs_add_tool(pmcp_server *server, const pmcp_tool_def *d, int with_arg)
{
  rs_tool *w = calloc(1, sizeof *w);
  pmcp_arg_spec *args = with_arg ? calloc(d->n_args + 1, sizeof *args) : NULL;
  if (!w || (with_arg && !args)) {
    free(w);
    free(args);
    if (d->ud_free)
      d->ud_free(d->ud);
    return PMCP_ENOMEM;
  }
  w->fn = d->handler;
  w->rs = d->ud;
  pmcp_tool_def def = *d;
  if (with_arg) {
    if (d->n_args)
      memcpy(args, d->args, d->n_args * sizeof *args);
    args[d->n_args] = pmcp__rs_workspace_arg;
    def.args = args;
    def.n_args = d->n_args + 1;
  }
  def.handler = rs_tool_call;
  def.ud = w;
  def.ud_free = rs_tool_free;
  int rc = pmcp_server_add_tool(server, &def);
  free(args);
  return rc;
}
