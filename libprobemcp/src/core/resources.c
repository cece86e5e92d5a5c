/* SPDX-License-Identifier: MIT */
/* resources/list, resources/templates/list, resources/read (fixed URIs and
 * RFC 6570 level-1 templates), subscribe and unsubscribe. */
#include <stdlib.h>
#include <string.h>

#include "core/call_job.h"
#include "util/buf.h"
#include "util/json.h"

static void list_page(pmcp__req *req, cJSON *params, char tag, const char *key,
                      pmcp__resource *const *items, size_t n)
{
  size_t off;
  if (pmcp__page_start(req, params, tag, n, &off))
    return;
  size_t ps = req->srv->page_size;
  size_t end = off + ps < n ? off + ps : n;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_printf(&b, "{\"%s\":[", key);
  for (size_t i = off; i < end && !rc; i++) {
    if (i > off)
      rc = pmcp__buf_putc(&b, ',');
    if (!rc)
      rc = pmcp__buf_puts(&b, items[i]->list_json);
  }
  if (!rc)
    rc = pmcp__buf_putc(&b, ']');
  if (!rc)
    rc = pmcp__page_next(&b, tag, end, n);
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  pmcp__req_answer(req, rc, &b);
}

void pmcp__method_resources_list(pmcp__req *req, cJSON *params)
{
  const pmcp__registry *r = &req->srv->reg;
  list_page(req, params, 'r', "resources", r->resources, r->n_resources);
}

void pmcp__method_resources_templates_list(pmcp__req *req, cJSON *params)
{
  const pmcp__registry *r = &req->srv->reg;
  list_page(req, params, 'u', "resourceTemplates", r->templates, r->n_templates);
}

/* ---- template matching ---- */

static int hexv(char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Percent-decodes [s, s+n) into a new string; NULL if malformed. */
static char *pct_decode(pmcp_server *srv, const char *s, size_t n)
{
  char *out = pmcp__malloc(srv, n + 1);
  if (!out)
    return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '%') {
      if (i + 2 >= n) {
        pmcp__free(srv, out);
        return NULL;
      }
      int a = hexv(s[i + 1]), b = hexv(s[i + 2]);
      if (a < 0 || b < 0 || (a == 0 && b == 0)) {
        pmcp__free(srv, out);
        return NULL;
      }
      out[k++] = (char)(a * 16 + b);
      i += 2;
    } else {
      out[k++] = s[i];
    }
  }
  out[k] = '\0';
  if (!pmcp__utf8_valid(out, k)) {
    pmcp__free(srv, out);
    return NULL;
  }
  return out;
}

/* Matches @p uri against a level-1 template, filling the call's variables.
 * A variable takes a non-empty run up to the next literal text and never
 * spans '/', '?' or '#' (simple expansion would have encoded them).
 * 1 on a match, 0 on none, negative on allocation failure. */
static int template_match(pmcp_call *call, const char *tpl, const char *uri)
{
  pmcp_server *srv = call->srv;
  size_t nvars = 0;
  for (const char *p = tpl; *p; p++)
    if (*p == '{')
      nvars++;
  char **names = pmcp__calloc(srv, nvars, sizeof *names);
  char **values = pmcp__calloc(srv, nvars, sizeof *values);
  int rc = names && values ? 1 : PMCP_ENOMEM;
  size_t v = 0;
  const char *t = tpl, *u = uri;
  while (rc == 1 && *t) {
    if (*t != '{') {
      if (*t != *u)
        rc = 0;
      t++;
      u++;
      continue;
    }
    const char *close = strchr(t, '}');
    const char *lit = close + 1; /* literal text after the variable */
    size_t lit_len = strcspn(lit, "{");
    const char *stop = u;
    while (*stop && !strchr("/?#", *stop) &&
           (lit_len == 0 || strncmp(stop, lit, lit_len) != 0))
      stop++;
    if (stop == u || (lit_len && strncmp(stop, lit, lit_len) != 0) ||
        (!lit_len && *stop && !*lit)) {
      rc = 0;
      break;
    }
    names[v] = pmcp__strndup(srv, t + 1, (size_t)(close - t - 1));
    values[v] = pct_decode(srv, u, (size_t)(stop - u));
    v++;
    if (!names[v - 1])
      rc = PMCP_ENOMEM;
    else if (!values[v - 1])
      rc = 0;
    t = lit;
    u = stop;
  }
  if (rc == 1 && *u)
    rc = 0;
  if (rc == 1) {
    call->var_names = names;
    call->var_values = values;
    call->n_vars = v;
    return 1;
  }
  for (size_t i = 0; i < v; i++) {
    pmcp__free(srv, names ? names[i] : NULL);
    pmcp__free(srv, values ? values[i] : NULL);
  }
  pmcp__free(srv, names);
  pmcp__free(srv, values);
  return rc;
}

/* ---- read ---- */

static void not_found(pmcp__req *req, const char *uri)
{
  pmcp_buf d = PMCP_BUF_INIT;
  int rc = pmcp__buf_puts(&d, "{\"uri\":");
  if (!rc)
    rc = pmcp__buf_json_string(&d, uri, strlen(uri));
  if (!rc)
    rc = pmcp__buf_putc(&d, '}');
  /* 2026-07-28 made it an invalid-params error; -32002 stays for the
   * sessions that negotiated an earlier version. */
  pmcp__req_error(req, req->modern ? -32602 : -32002, "Resource not found",
                  rc ? NULL : d.ptr);
  pmcp_buf_dispose(&d);
}

static int read_invoke(pmcp_call *call)
{
  return call->resource->read(call, call->resource->ud);
}

static void read_answer(pmcp_call *call, int rc)
{
  pmcp__req *req = call->req;
  if (rc == PMCP_ENOTFOUND) {
    not_found(req, call->uri);
  } else if (rc < 0) {
    pmcp__log(call->srv, PMCP_LOG_WARNING, "reading '%s' failed: %s", call->uri,
              pmcp_strerror(rc));
    pmcp__req_errorf(req, pmcp_error_rpc_code(rc), "Reading the resource failed: %s",
                     pmcp_strerror(rc));
  } else {
    pmcp_buf b = PMCP_BUF_INIT;
    rc = pmcp__buf_puts(&b, "{\"contents\":[");
    pmcp__call_answer_items(call, &b, rc);
  }
}

static const pmcp__call_ops read_ops = {read_invoke, read_answer, "read"};

/* Finds the resource for @p uri: fixed first, then templates in order. */
static int resolve(pmcp_call *call, const char *uri)
{
  const pmcp__registry *r = &call->srv->reg;
  for (size_t i = 0; i < r->n_resources; i++) {
    if (strcmp(r->resources[i]->uri, uri) == 0) {
      call->resource = r->resources[i];
      return 1;
    }
  }
  for (size_t i = 0; i < r->n_templates; i++) {
    int m = template_match(call, r->templates[i]->uri_template, uri);
    if (m) {
      if (m > 0)
        call->resource = r->templates[i];
      return m;
    }
  }
  return 0;
}

static cJSON *uri_param(pmcp__req *req, cJSON *params, const char *method)
{
  cJSON *uri = cJSON_GetObjectItemCaseSensitive(params, "uri");
  if (!cJSON_IsString(uri)) {
    pmcp__req_errorf(req, -32602, "Invalid params: %s needs a string \"uri\"", method);
    return NULL;
  }
  return uri;
}

void pmcp__method_resources_read(pmcp__req *req, cJSON *params)
{
  cJSON *uri = uri_param(req, params, "resources/read");
  if (!uri)
    return;
  pmcp__call_job *j = pmcp__call_job_new(req, PMCP__CALL_RESOURCE, &read_ops);
  if (!j)
    return;
  pmcp_call *call = &j->call;
  call->uri = uri->valuestring;
  call->name = uri->valuestring;
  int m = resolve(call, uri->valuestring);
  if (m <= 0) {
    if (m < 0)
      pmcp__req_error(req, -32603, "Internal error: out of memory", NULL);
    else
      not_found(req, uri->valuestring);
    pmcp__call_job_free(j);
    return;
  }
  pmcp__call_job_start(j, (call->resource->flags & PMCP_TOOL_BLOCKING) != 0, 0);
}

static void subscription(pmcp__req *req, cJSON *params, int on)
{
  cJSON *uri = uri_param(req, params, on ? "resources/subscribe"
                                         : "resources/unsubscribe");
  if (!uri)
    return;
  pmcp_server *srv = req->srv;
  if (on) {
    pmcp_call probe;
    pmcp__call_init(&probe, req, PMCP__CALL_RESOURCE);
    int m = resolve(&probe, uri->valuestring);
    pmcp__call_dispose(&probe);
    if (m <= 0) {
      if (m < 0)
        pmcp__req_error(req, -32603, "Internal error: out of memory", NULL);
      else
        not_found(req, uri->valuestring);
      return;
    }
  }
  pthread_mutex_lock(&srv->mu);
  int rc = pmcp__session_subscribe_locked(srv, req->sess, uri->valuestring, on);
  pthread_mutex_unlock(&srv->mu);
  if (rc)
    pmcp__req_error(req, -32603, "Internal error: out of memory", NULL);
  else
    pmcp__req_result(req, "{}", 2);
}

void pmcp__method_resources_subscribe(pmcp__req *req, cJSON *params)
{
  subscription(req, params, 1);
}

void pmcp__method_resources_unsubscribe(pmcp__req *req, cJSON *params)
{
  subscription(req, params, 0);
}
