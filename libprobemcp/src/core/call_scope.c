/* SPDX-License-Identifier: MIT */
/* pmcp_call_scope: the parts a host's scope hook sets, copied. */
#include <stdlib.h>
#include <string.h>

#include "core/call_scope.h"
#include "probemcp/error.h"

void pmcp__call_scope_dispose(pmcp_call_scope *sc)
{
  if (!sc)
    return;
  free(sc->workspace);
  free(sc->role);
  free(sc->principal);
  sc->workspace = sc->role = sc->principal = NULL;
}

static int set_part(char **part, const char *s)
{
  char *copy = NULL;
  if (s && *s && !(copy = strdup(s)))
    return PMCP_ENOMEM;
  free(*part);
  *part = copy;
  return 0;
}

int pmcp_call_scope_set_workspace(pmcp_call_scope *scope, const char *workspace)
{
  return scope ? set_part(&scope->workspace, workspace) : PMCP_EINVAL;
}

int pmcp_call_scope_set_role(pmcp_call_scope *scope, const char *role)
{
  return scope ? set_part(&scope->role, role) : PMCP_EINVAL;
}

int pmcp_call_scope_set_principal(pmcp_call_scope *scope, const char *principal)
{
  return scope ? set_part(&scope->principal, principal) : PMCP_EINVAL;
}

const char *pmcp_call_scope_workspace(const pmcp_call_scope *scope)
{
  return scope && scope->workspace ? scope->workspace : "";
}

const char *pmcp_call_scope_role(const pmcp_call_scope *scope)
{
  return scope && scope->role ? scope->role : "";
}

const char *pmcp_call_scope_principal(const pmcp_call_scope *scope)
{
  return scope && scope->principal ? scope->principal : "";
}

int pmcp__call_scope_ask(pmcp_scope_fn fn, int layout_0_1, pmcp_call *call, const char *asked,
                         pmcp_call_scope *out, char *msg, size_t msg_size, void *ud)
{
  if (!layout_0_1)
    return fn(call, asked, out, msg, msg_size, ud);
  /* Called through its own type: the hook was written for this layout. */
  pmcp__scope_fn_0_1 old_fn = (pmcp__scope_fn_0_1)(void (*)(void))fn;
  pmcp__call_scope_0_1 old;
  memset(&old, 0, sizeof old);
  int rc = old_fn(call, asked, &old, msg, msg_size, ud);
  if (rc)
    return rc;
  old.workspace[sizeof old.workspace - 1] = '\0';
  old.role[sizeof old.role - 1] = '\0';
  old.principal[sizeof old.principal - 1] = '\0';
  if (set_part(&out->workspace, old.workspace) || set_part(&out->role, old.role) ||
      set_part(&out->principal, old.principal))
    return PMCP_ENOMEM;
  return 0;
}
