/* SPDX-License-Identifier: MIT */
/* probe-mcp-http's wiring of the OAuth server: its own writable handle on
 * the store (the research tools read through a read-only one) and the
 * access-token lookup the /mcp authentication step uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oauth.h"

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
  /* NULL hooks: the library's own password check and audit log. */
  return poauth_server_new(out, st, NULL, endpoint, public_base,
                           getenv("APP_BASE_URL"), why, whysize);
}

int poauth_service_token(void *ud, const char *token, size_t len,
                         char connection_id[64])
{
  poauth_server *o = ud;
  char tok[PMCP_OAUTH_TOKEN_MAX];
  if (len == 0 || len >= sizeof tok)
    return 0;
  memcpy(tok, token, len);
  tok[len] = '\0';
  pmcp_oauth_principal p = PMCP_OAUTH_PRINCIPAL_INIT;
  int rc = pmcp_oauth_access_resolve(o->state, tok, &p);
  if (rc == 1 && snprintf(connection_id, 64, "%s", p.connection_id) >= 64)
    rc = 0; /* longer than any id the library makes: not one of ours */
  pmcp_oauth_principal_dispose(&p);
  memset(tok, 0, sizeof tok);
  return rc;
}
