/* SPDX-License-Identifier: MIT */
/* The server's allocator, for the engine's own structures. cJSON trees use
 * cJSON's process-wide hooks, which the library never changes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/engine.h"

void *pmcp__malloc(pmcp_server *srv, size_t n)
{
  if (n == 0)
    n = 1;
  if (srv->alloc.malloc_fn)
    return srv->alloc.malloc_fn(n, srv->alloc.ud);
  return malloc(n);
}

void *pmcp__calloc(pmcp_server *srv, size_t n, size_t size)
{
  if (size && n > SIZE_MAX / size)
    return NULL;
  void *p = pmcp__malloc(srv, n * size);
  if (p)
    memset(p, 0, n * size);
  return p;
}

void *pmcp__realloc(pmcp_server *srv, void *p, size_t n)
{
  if (n == 0)
    n = 1;
  if (srv->alloc.realloc_fn)
    return srv->alloc.realloc_fn(p, n, srv->alloc.ud);
  return realloc(p, n);
}

void pmcp__free(pmcp_server *srv, void *p)
{
  if (!p)
    return;
  int saved = errno; /* callers report errno after cleanup */
  if (srv->alloc.free_fn)
    srv->alloc.free_fn(p, srv->alloc.ud);
  else
    free(p);
  errno = saved;
}

char *pmcp__strndup(pmcp_server *srv, const char *s, size_t n)
{
  char *p = pmcp__malloc(srv, n + 1);
  if (!p)
    return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *pmcp__strdup(pmcp_server *srv, const char *s)
{
  return s ? pmcp__strndup(srv, s, strlen(s)) : NULL;
}
