/* SPDX-License-Identifier: MIT */
/* The host's own routes (pmcp_http_options.route_*): probe-mcp-http's OAuth
 * server and consent pages. A claimed request is copied out of the
 * connection and handed to a libuv worker thread, because its handler
 * talks to the store and may run a password KDF, neither of which may
 * stall the loop. The response comes back on the loop; if the connection
 * went away meanwhile it is dropped. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util/abi.h"

struct phttp_route_job {
  uv_work_t work;
  pmcp_http *h;
  phttp_conn *conn;          /* NULL once the connection is gone */
  pmcp_http_request req;     /* version set in job_new */
  pmcp_http_response res;
  char *mem;                 /* every string of req, one block */
  const char **names, **values;
  char peer[64];
};

const char *phttp_header_of(size_t n, const char *const *names, const char *const *values,
                            const char *name, int *count)
{
  const char *found = NULL;
  int k = 0;
  for (size_t i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0) {
      if (!found)
        found = values[i];
      k++;
    }
  if (count)
    *count = k;
  return found;
}

/* Release 0.2's pmcp_http_request_header and pmcp_http_peer_trusted read
 * the request of version 2 on; with the version script they are the
 * names' default versions, and release 0.1's (compat.c) stay for
 * programs linked against 0.1. */
#define REQUEST_HEADER_0_2 pmcp__http_request_header_0_2
#define PEER_TRUSTED_0_2 pmcp__http_peer_trusted_0_2
PMCP_API const char *REQUEST_HEADER_0_2(const pmcp_http_request *r, const char *name,
                                        int *count);
PMCP_API int PEER_TRUSTED_0_2(const pmcp_http_request *req);
#define SYMVER_0_2(name, sym) PMCP__SYMVER_AS(name, sym)

SYMVER_0_2(pmcp__http_request_header_0_2, "pmcp_http_request_header@@PMCP_0.2")
const char *REQUEST_HEADER_0_2(const pmcp_http_request *r, const char *name, int *count)
{
  return phttp_header_of(r->nheaders, r->names, r->values, name, count);
}

int pmcp_http_host_allowed(const pmcp_http *h, const char *name)
{
  for (size_t i = 0; i < h->n_allow_hosts; i++)
    if (strcmp(h->allow_hosts[i], name) == 0)
      return 1;
  return 0;
}

int phttp_host_allowed(const pmcp_http *h, const char *name, long port)
{
  for (size_t i = 0; i < h->n_allow_hosts; i++) {
    if (strcmp(h->allow_hosts[i], name) != 0)
      continue;
    long want = h->allow_ports[i] == PHTTP_LISTEN_PORT ? h->port : h->allow_ports[i];
    /* A Host without a port stands for its scheme's default, 80 or 443
     * (a TLS proxy in front forwards "Host: name" for https://name). */
    if (want == PHTTP_ANY_PORT || want == port || (port == 0 && (want == 80 || want == 443)))
      return 1;
  }
  return 0;
}

const char *pmcp_http_endpoint(const pmcp_http *h) { return h->endpoint; }

int phttp_peer_is_trusted(const pmcp_http *h, const char *peer)
{
  if (!h || !peer || !peer[0])
    return 0;
  for (size_t i = 0; i < h->o.n_trusted_proxies; i++)
    if (strcmp(h->o.trusted_proxies[i], peer) == 0)
      return 1;
  return 0;
}

SYMVER_0_2(pmcp__http_peer_trusted_0_2, "pmcp_http_peer_trusted@@PMCP_0.2")
int PEER_TRUSTED_0_2(const pmcp_http_request *req)
{
  return req && phttp_peer_is_trusted(req->h, req->peer);
}

void phttp_peer_name(phttp_conn *c, char *out, size_t size)
{
  struct sockaddr_storage ss;
  int sl = sizeof ss;
  out[0] = '\0';
  if (!c->fake && uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &sl) == 0) {
    if (ss.ss_family == AF_INET6)
      uv_ip6_name((struct sockaddr_in6 *)&ss, out, size);
    else if (ss.ss_family == AF_INET)
      uv_ip4_name((struct sockaddr_in *)&ss, out, size);
  }
}

int phttp_route_claim(phttp_conn *c)
{
  pmcp_http *h = c->h;
  if (!h->o.route_match)
    return 0;
  const char *url = c->req.arena + c->req.url;
  size_t n = c->req.url_len;
  const char *q = memchr(url, '?', n);
  if (q)
    n = (size_t)(q - url);
  if (n == strlen(h->endpoint) && memcmp(url, h->endpoint, n) == 0)
    return 0; /* the MCP endpoint is never a route */
  const char *m = llhttp_method_name((llhttp_method_t)c->req.method);
  return h->o.route_match(h->o.route_ud, m, url, n) == 1;
}

static void job_free(struct phttp_route_job *j)
{
  pmcp_buf_dispose(&j->res.headers);
  pmcp_buf_dispose(&j->res.body);
  free(j->mem);
  free(j->names);
  free(j->values);
  free(j);
}

static void run_job(uv_work_t *w)
{
  struct phttp_route_job *j = w->data;
  phttp_call_route(j->h, &j->req, &j->res);
}

static const char *status_text(int s)
{
  switch (s) {
  case 200: return "OK";
  case 201: return "Created";
  case 204: return "No Content";
  case 302: return "Found";
  case 303: return "See Other";
  case 400: return "Bad Request";
  case 401: return "Unauthorized";
  case 403: return "Forbidden";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 413: return "Content Too Large";
  case 429: return "Too Many Requests";
  case 503: return "Service Unavailable";
  default: return s >= 500 ? "Internal Server Error" : "Error";
  }
}

static void job_done(uv_work_t *w, int status)
{
  struct phttp_route_job *j = w->data;
  phttp_conn *c = j->conn;
  if (c) {
    c->route_job = NULL;
    pmcp_http_response *res = &j->res;
    int st = status == 0 && res->status ? res->status : 500;
    int keep = c->req.keep_alive && !c->close_after && !c->h->stopping &&
               !c->peer_eof;
    pmcp_buf out = PMCP_BUF_INIT;
    int rc = pmcp_buf_printf(&out, "HTTP/1.1 %d %s\r\n", st, status_text(st));
    if (res->content_type)
      rc |= pmcp_buf_printf(&out, "Content-Type: %s\r\n", res->content_type);
    rc |= pmcp_buf_printf(&out, "Content-Length: %zu\r\n%s", res->body.len,
                      keep ? (c->req.http_minor ? "" : "Connection: keep-alive\r\n")
                           : "Connection: close\r\n");
    if (res->headers.len)
      rc |= pmcp_buf_append(&out, res->headers.ptr, res->headers.len);
    rc |= pmcp_buf_puts(&out, "\r\n");
    if (res->body.len && c->req.method != HTTP_HEAD)
      rc |= pmcp_buf_append(&out, res->body.ptr, res->body.len);
    if (rc != 0) {
      pmcp_buf_dispose(&out);
      c->close_after = 1;
      phttp_respond(c, 503, NULL, NULL, NULL, 0);
    } else {
      if (!keep)
        c->close_after = 1;
      phttp_conn_write(c, out.ptr, out.len);
      pmcp_buf_dispose(&out);
      phttp_response_done(c);
    }
  }
  job_free(j);
}

/* Copies what the handler reads (method, path, query, headers, body) into
 * one block, since the connection's arena is reused by the next request. */
static struct phttp_route_job *job_new(phttp_conn *c)
{
  phttp_req *r = &c->req;
  struct phttp_route_job *j = calloc(1, sizeof *j);
  if (!j)
    return NULL;
  const char *m = llhttp_method_name((llhttp_method_t)r->method);
  size_t total = strlen(m) + 1 + r->url_len + 2 + r->body.len + 1;
  for (unsigned i = 0; i < r->nhdrs; i++)
    total += r->hdrs[i].name_len + r->hdrs[i].value_len + 2;
  j->mem = malloc(total);
  j->names = calloc(r->nhdrs + 1, sizeof *j->names);
  j->values = calloc(r->nhdrs + 1, sizeof *j->values);
  if (!j->mem || !j->names || !j->values) {
    job_free(j);
    return NULL;
  }
  char *p = j->mem;
#define PUT(dst, src, len)                                                    \
  do {                                                                       \
    (dst) = p;                                                               \
    memcpy(p, (src), (len));                                                 \
    p[(len)] = '\0';                                                         \
    p += (len) + 1;                                                          \
  } while (0)
  PUT(j->req.method, m, strlen(m));
  const char *url = r->arena + r->url;
  const char *q = memchr(url, '?', r->url_len);
  size_t plen = q ? (size_t)(q - url) : r->url_len;
  PUT(j->req.path, url, plen);
  if (q)
    PUT(j->req.query, q + 1, r->url_len - plen - 1);
  else
    PUT(j->req.query, "", 0);
  PUT(j->req.body, r->body.ptr ? r->body.ptr : "", r->body.len);
  j->req.body_len = r->body.len;
  for (unsigned i = 0; i < r->nhdrs; i++) {
    char *name;
    PUT(name, r->arena + r->hdrs[i].name, r->hdrs[i].name_len);
    for (char *s = name; *s; s++)
      if (*s >= 'A' && *s <= 'Z')
        *s = (char)(*s - 'A' + 'a');
    j->names[i] = name;
    PUT(j->values[i], r->arena + r->hdrs[i].value, r->hdrs[i].value_len);
  }
#undef PUT
  j->req.nheaders = r->nhdrs;
  j->req.names = j->names;
  j->req.values = j->values;
  /* The address rate limits count by (the connection's peer: a proxy's
   * own when one is in front). */
  phttp_peer_name(c, j->peer, sizeof j->peer);
  j->req.peer = j->peer;
  j->req.version = PMCP_HTTP_REQUEST_VERSION;
  j->res.version = PMCP_HTTP_RESPONSE_VERSION;
  j->req.h = c->h;
  j->h = c->h;
  j->conn = c;
  j->work.data = j;
  return j;
}

void phttp_route_handle(phttp_conn *c)
{
  struct phttp_route_job *j = job_new(c);
  if (!j) {
    phttp_respond(c, 503, NULL, NULL, NULL, 0);
    return;
  }
  c->route_job = j;
  if (uv_queue_work(&c->h->loop, &j->work, run_job, job_done) != 0) {
    c->route_job = NULL;
    job_free(j);
    phttp_respond(c, 503, NULL, NULL, NULL, 0);
  }
}

void phttp_route_lost(phttp_conn *c)
{
  if (c->route_job) {
    c->route_job->conn = NULL;
    c->route_job = NULL;
  }
}
