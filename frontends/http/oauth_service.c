/* SPDX-License-Identifier: MIT */
/* probe-mcp-http's wiring of the OAuth server: its own writable handle on
 * the store (the research tools read through a read-only one), the auth
 * module's password check and audit log, and the access-token lookup the
 * /mcp authentication step uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "oauth.h"

static int verify_password(const char *stored, const char *password, void *ud)
{
  (void)ud;
  return pmcp__password_verify(stored, password) == 1;
}

static int audit(void *ud, pmcp_store *st, const char *tenant_id, const char *workspace,
                 const char *actor, const char *action, const char *details)
{
  (void)ud;
  pmcp_tenant t = {tenant_id ? strtoll(tenant_id, NULL, 10) : 0, 0, 0};
  return pmcp__audit(st, t, workspace, actor, action, "mcp", details);
}

int poauth_service_open(poauth_server **out, const char *store,
                        const char *endpoint, const char *public_base,
                        char *why, size_t whysize)
{
  *out = NULL;
  pmcp_store *st = NULL;
  int rc = pmcp_store_open(&st, store, 0);
  if (rc) {
    snprintf(why, whysize, "cannot open the store for the OAuth server: %s",
             st ? pmcp_store_errmsg(st) : pmcp_strerror(rc));
    pmcp_store_free(st);
    return -1;
  }
  poauth_hooks hooks = {verify_password, audit, NULL};
  return poauth_server_new(out, st, &hooks, endpoint, public_base,
                           getenv("APP_BASE_URL"), why, whysize);
}

int poauth_service_token(void *ud, const char *token, size_t len,
                         char connection_id[64])
{
  poauth_server *o = ud;
  char tok[POAUTH_TOKEN_MAX];
  if (len == 0 || len >= sizeof tok)
    return 0;
  memcpy(tok, token, len);
  tok[len] = '\0';
  poauth_principal p;
  int rc = poauth_access_resolve(o->state, tok, &p);
  if (rc == 1)
    snprintf(connection_id, 64, "%s", p.connection_id);
  memset(tok, 0, sizeof tok);
  return rc;
}
