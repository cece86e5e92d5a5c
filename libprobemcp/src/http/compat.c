/* SPDX-License-Identifier: MIT */
/* Release 0.1's pmcp_http_request and pmcp_http_response had no version
 * member. A host built against 0.1 passes options of version 1: its route
 * handler and auth callback get those layouts, and its calls of
 * pmcp_http_request_header() and pmcp_http_peer_trusted(), bound to the
 * names' PMCP_0.1 versions, read them (ABI policy in libprobemcp(7)). */
#include <string.h>

#include "internal.h"
#include "util/abi.h"

/* Release 0.1's layouts, member for member. */
typedef struct request_0_1 {
  pmcp_http *h;
  const char *method, *path, *query, *body;
  size_t body_len;
  size_t nheaders;
  const char *const *names;
  const char *const *values;
  const char *peer;
} request_0_1;

typedef struct response_0_1 {
  int status;
  const char *content_type;
  pmcp_buf headers;
  pmcp_buf body;
} response_0_1;

static int layout_0_1(const pmcp_http *h) { return h->o.version < 2; }

static void request_to_0_1(const pmcp_http_request *r, request_0_1 *out)
{
  out->h = r->h;
  out->method = r->method;
  out->path = r->path;
  out->query = r->query;
  out->body = r->body;
  out->body_len = r->body_len;
  out->nheaders = r->nheaders;
  out->names = r->names;
  out->values = r->values;
  out->peer = r->peer;
}

/* The callbacks were compiled for request_0_1 and response_0_1: they are
 * called with those, through the pointer types of the current header. */
void *phttp_call_auth(pmcp_http *h, const pmcp_http_request *req, char *challenge,
                      size_t challenge_size, char *why, size_t why_size)
{
  if (!layout_0_1(h))
    return h->o.auth(h->o.auth_ud, req, challenge, challenge_size, why, why_size);
  request_0_1 old;
  request_to_0_1(req, &old);
  return h->o.auth(h->o.auth_ud, (const pmcp_http_request *)(const void *)&old, challenge,
                   challenge_size, why, why_size);
}

void phttp_call_route(pmcp_http *h, const pmcp_http_request *req, pmcp_http_response *res)
{
  if (!layout_0_1(h)) {
    h->o.route_handle(h->o.route_ud, req, res);
    return;
  }
  request_0_1 old;
  request_to_0_1(req, &old);
  response_0_1 ores;
  memset(&ores, 0, sizeof ores);
  h->o.route_handle(h->o.route_ud, (const pmcp_http_request *)(const void *)&old,
                    (pmcp_http_response *)(void *)&ores);
  /* the buffers move: the job disposes of res's */
  res->status = ores.status;
  res->content_type = ores.content_type;
  res->headers = ores.headers;
  res->body = ores.body;
}

PMCP_API const char *pmcp__http_request_header_0_1(const request_0_1 *r, const char *name,
                                                   int *count);
PMCP_API int pmcp__http_peer_trusted_0_1(const request_0_1 *req);

PMCP__SYMVER_AS(pmcp__http_request_header_0_1, "pmcp_http_request_header@PMCP_0.1")
const char *pmcp__http_request_header_0_1(const request_0_1 *r, const char *name, int *count)
{
  return phttp_header_of(r->nheaders, r->names, r->values, name, count);
}

PMCP__SYMVER_AS(pmcp__http_peer_trusted_0_1, "pmcp_http_peer_trusted@PMCP_0.1")
int pmcp__http_peer_trusted_0_1(const request_0_1 *req)
{
  return req && phttp_peer_is_trusted(req->h, req->peer);
}
