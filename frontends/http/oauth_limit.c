/* SPDX-License-Identifier: MIT */
/* Rate limits and lockouts of the OAuth server's unauthenticated steps
 * (oauth.h): registrations and pending authorizations per client address,
 * failed sign-ins per user and per address. Fixed windows in a bounded
 * table held in memory: an attacker cycling keys only evicts old entries,
 * it never grows the table. Each replica keeps its own. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oauth.h"

#define SLOTS 4096
#define PROBE 8

typedef struct slot {
  uint64_t hash;             /* 0: free */
  int64_t start;             /* window start, ms */
  unsigned count;
} slot;

struct poauth_limiter {
  pthread_mutex_t mu;
  slot t[SLOTS];
};

poauth_limiter *poauth_limiter_new(void)
{
  poauth_limiter *l = calloc(1, sizeof *l);
  if (l)
    pthread_mutex_init(&l->mu, NULL);
  return l;
}

void poauth_limiter_free(poauth_limiter *l)
{
  if (!l)
    return;
  pthread_mutex_destroy(&l->mu);
  free(l);
}

static uint64_t key_hash(const char *kind, const char *key)
{
  uint64_t x = 1469598103934665603ull;
  for (const char *p = kind; *p; p++)
    x = (x ^ (unsigned char)*p) * 1099511628211ull;
  x = (x ^ 0xff) * 1099511628211ull;
  for (const char *p = key ? key : ""; *p; p++)
    x = (x ^ (unsigned char)*p) * 1099511628211ull;
  return x ? x : 1;
}

/* The slot of (kind, key), made when @p make; NULL when absent. */
static slot *find(poauth_limiter *l, uint64_t h, int make, int64_t now, int64_t window)
{
  slot *victim = NULL;
  for (unsigned i = 0; i < PROBE; i++) {
    slot *s = &l->t[(h + i) % SLOTS];
    if (s->hash == h)
      return s;
    if (!victim || s->hash == 0 || (victim->hash != 0 && s->start < victim->start))
      victim = s;
  }
  if (!make)
    return NULL;
  (void)now;
  (void)window;
  victim->hash = h;
  victim->start = now;
  victim->count = 0;
  return victim;
}

int64_t poauth_limit(poauth_limiter *l, const char *kind, const char *key, unsigned max,
                     int64_t window_ms, int64_t now_ms, int count)
{
  if (!l)
    return 0;
  uint64_t h = key_hash(kind, key);
  pthread_mutex_lock(&l->mu);
  slot *s = find(l, h, count, now_ms, window_ms);
  int64_t wait = 0;
  if (s && now_ms - s->start >= window_ms) {
    s->start = now_ms;
    s->count = 0;
  }
  if (s && s->count >= max)
    wait = s->start + window_ms - now_ms;
  else if (s && count)
    s->count++;
  pthread_mutex_unlock(&l->mu);
  return wait > 0 ? wait : 0;
}

void poauth_limit_clear(poauth_limiter *l, const char *kind, const char *key)
{
  if (!l)
    return;
  uint64_t h = key_hash(kind, key);
  pthread_mutex_lock(&l->mu);
  slot *s = find(l, h, 0, 0, 0);
  if (s)
    memset(s, 0, sizeof *s);
  pthread_mutex_unlock(&l->mu);
}
