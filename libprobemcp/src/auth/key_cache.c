/* SPDX-License-Identifier: MIT */
/* The principals of the last few API keys seen on one store handle, each
 * valid only while the store's change mark (pmcp__db_change_mark) is the
 * one read with it: any commit since (a revoked key, a renamed tenant, an
 * import) makes every entry stale, so a request after a revocation is
 * refused exactly as if the key were looked up again. A hit costs the
 * mark (one cheap read) and a constant-time comparison of the secret,
 * instead of a SHA-256 and a join. */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "auth/auth.h"
#include "store/db.h"
#include "util/crypto.h"

#define SLOTS 4
#define SECRET_MAX 64

typedef struct slot {
  int used;
  uint64_t mark[2];
  size_t len;
  char secret[SECRET_MAX];
  pmcp_principal p;
  int64_t last_used; /* ms; -1: never */
} slot;

typedef struct pmcp__key_cache {
  slot s[SLOTS];
  unsigned next; /* the slot the next entry replaces */
} pmcp__key_cache;

static void dispose(void *ud)
{
  pmcp__key_cache *c = ud;
  if (!c)
    return;
  for (int i = 0; i < SLOTS; i++)
    pmcp_principal_dispose(&c->s[i].p);
  OPENSSL_cleanse(c, sizeof *c);
  free(c);
}

int pmcp__key_cache_get(pmcp_store *s, const char *secret, size_t len,
                        const uint64_t mark[2], pmcp_principal *out, int64_t *last_used)
{
  pmcp__key_cache *c = pmcp__store_attached(s);
  if (!c || len > SECRET_MAX)
    return 0;
  int found = -1;
  /* every slot is compared, in constant time, whatever matches */
  for (int i = 0; i < SLOTS; i++) {
    const slot *e = &c->s[i];
    int same = e->used && e->len == len && e->mark[0] == mark[0] && e->mark[1] == mark[1] &&
               pmcp__ct_equal(e->secret, secret, len);
    if (same && found < 0)
      found = i;
  }
  if (found < 0)
    return 0;
  /* a copy the caller owns: the slot may be replaced while it is used */
  if (pmcp_principal_copy(out, &c->s[found].p) != 0)
    return 0;
  *last_used = c->s[found].last_used;
  return 1;
}

void pmcp__key_cache_put(pmcp_store *s, const char *secret, size_t len,
                         const uint64_t mark[2], const pmcp_principal *p, int64_t last_used)
{
  if (len > SECRET_MAX)
    return;
  pmcp__key_cache *c = pmcp__store_attached(s);
  if (!c) {
    c = calloc(1, sizeof *c);
    if (!c)
      return; /* no cache: every request reads the store */
    for (int i = 0; i < SLOTS; i++)
      c->s[i].p.version = PMCP_PRINCIPAL_VERSION;
    if (pmcp__store_attach(s, c, dispose)) {
      free(c);
      return;
    }
  }
  slot *e = NULL;
  for (int i = 0; i < SLOTS && !e; i++)
    if (c->s[i].used && c->s[i].len == len && pmcp__ct_equal(c->s[i].secret, secret, len))
      e = &c->s[i];
  if (!e) {
    e = &c->s[c->next];
    c->next = (c->next + 1) % SLOTS;
  }
  if (pmcp_principal_copy(&e->p, p) != 0) {
    e->used = 0; /* out of memory: the next request reads the store */
    return;
  }
  e->used = 1;
  e->mark[0] = mark[0];
  e->mark[1] = mark[1];
  e->len = len;
  memcpy(e->secret, secret, len);
  e->last_used = last_used;
}
