/* SPDX-License-Identifier: MIT */
/* The server object, message intake, lifecycle (initialize, ping,
 * notifications/initialized, cancellation, logging/setLevel) and the
 * method table. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/engine.h"
#include "core/jdoc.h"
#include "core/jsonrpc.h"
#include "util/buf.h"
#include "util/cnum.h"
#include "util/abi.h"
#include "util/json.h"

static int server_ok(const pmcp_server *srv)
{
  return srv && srv->magic == PMCP__SERVER_MAGIC;
}

int pmcp_server_options_init(pmcp_server_options *opts, unsigned version)
{
  if (!opts || !PMCP__VERSION_OK(version, PMCP_SERVER_OPTIONS_VERSION))
    return PMCP_EINVAL;
  pmcp_server_options d = PMCP_SERVER_OPTIONS_INIT;
  *opts = d;
  return 0;
}

void pmcp_server_free(pmcp_server *server)
{
  if (!server_ok(server))
    return;
  pmcp__tasks_renewer_stop(server); /* nothing renews a lease from here on */
  /* Open subscriptions end gracefully (their result) while the sessions
   * still deliver. */
  pthread_mutex_lock(&server->mu);
  pmcp__listen_end_locked(server, NULL, NULL);
  pthread_mutex_unlock(&server->mu);
  pmcp__listen_reap(server);
  pthread_mutex_lock(&server->mu);
  server->closing = 1;
  /* Cancel everything; queued calls then finish without an answer. */
  pmcp__sessions_clear_locked(server);
  pthread_mutex_unlock(&server->mu);
  pmcp__listen_reap(server);
  pmcp__workers_stop(server);
  pthread_mutex_lock(&server->mu);
  while (server->busy)
    pthread_cond_wait(&server->idle_cond, &server->mu);
  pthread_mutex_unlock(&server->mu);
  pmcp__tasks_free(server);
  pmcp__registry_free(server);
  pmcp__free(server, server->buckets);
  pmcp__sessions_free_spare(server);
  pmcp__free(server, server->name);
  pmcp__free(server, server->title);
  pmcp__free(server, server->version);
  pmcp__free(server, server->instructions);
  free(server->info_json);
  free(server->modern_head);
  pmcp__meta_cache_free(server);
  pthread_cond_destroy(&server->idle_cond);
  pthread_mutex_destroy(&server->mu);
  pthread_mutex_destroy(&server->err_mu);
  server->magic = 0;
  pmcp__free(server, server);
}

/* Writes srv->info_json from the name, title and version. */
static int server_info_init(pmcp_server *srv)
{
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_puts(&b, "{\"name\":");
  if (!rc)
    rc = pmcp__buf_json_string(&b, srv->name, strlen(srv->name));
  if (!rc && srv->title) {
    rc = pmcp__buf_puts(&b, ",\"title\":");
    if (!rc)
      rc = pmcp__buf_json_string(&b, srv->title, strlen(srv->title));
  }
  if (!rc)
    rc = pmcp__buf_puts(&b, ",\"version\":");
  if (!rc)
    rc = pmcp__buf_json_string(&b, srv->version, strlen(srv->version));
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  if (rc) {
    pmcp_buf_dispose(&b);
    return rc;
  }
  pmcp_buf h = PMCP_BUF_INIT;
  rc = pmcp__buf_puts(&h, "{\"resultType\":\"complete\",\"_meta\":{"
                          "\"io.modelcontextprotocol/serverInfo\":");
  if (!rc)
    rc = pmcp__buf_append(&h, b.ptr, b.len);
  if (!rc)
    rc = pmcp__buf_putc(&h, '}');
  if (rc) {
    pmcp_buf_dispose(&b);
    pmcp_buf_dispose(&h);
    return rc;
  }
  srv->info_json = b.ptr;
  srv->info_len = b.len;
  srv->modern_head = h.ptr;
  srv->modern_head_len = h.len;
  return 0;
}

/* The idle condition on CLOCK_MONOTONIC, for pmcp_server_wait_room's
 * timed wait (a wall-clock step must not stretch or cut a stall). */
static int idle_cond_init(pthread_cond_t *c)
{
  pthread_condattr_t attr;
  if (pthread_condattr_init(&attr))
    return -1;
  int rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) || pthread_cond_init(c, &attr);
  pthread_condattr_destroy(&attr);
  return rc ? -1 : 0;
}

int pmcp_server_new(pmcp_server **out, const pmcp_server_options *opts)
{
  if (!out)
    return PMCP_EINVAL;
  *out = NULL;
  if (!opts || !PMCP__VERSION_OK(opts->version, PMCP_SERVER_OPTIONS_VERSION) || !opts->name ||
      !opts->name[0] || !opts->sink)
    return PMCP_EINVAL;
  pmcp_allocator a = {0};
  if (opts->allocator) {
    a = *opts->allocator;
    if (!a.malloc_fn || !a.realloc_fn || !a.free_fn)
      return PMCP_EINVAL;
  }
  pmcp_server *srv = a.malloc_fn ? a.malloc_fn(sizeof *srv, a.ud)
                                 : malloc(sizeof *srv);
  if (!srv)
    return PMCP_ENOMEM;
  memset(srv, 0, sizeof *srv);
  srv->alloc = a;
  srv->log = opts->log;
  srv->log_ud = opts->log_ud;
  srv->log_level = opts->log_level;
  srv->sink = opts->sink;
  srv->sink_ud = opts->sink_ud;
  srv->max_message = opts->max_message;
  srv->page_size = PMCP__DEFAULT_PAGE;
  srv->next_out_id = 1;
  atomic_init(&srv->started, 0);
  int locks = 0;
  if (pthread_mutex_init(&srv->mu, NULL) == 0)
    locks++;
  if (locks == 1 && pthread_mutex_init(&srv->err_mu, NULL) == 0)
    locks++;
  if (locks == 2 && idle_cond_init(&srv->idle_cond) == 0)
    locks++;
  if (locks == 3 && pmcp__workers_init(srv, opts->workers) == 0)
    locks++;
  srv->name = pmcp__strdup(srv, opts->name);
  srv->title = pmcp__strdup(srv, opts->title);
  srv->version = pmcp__strdup(srv, opts->server_version ? opts->server_version
                                                         : pmcp_version());
  srv->instructions = pmcp__strdup(srv, opts->instructions);
  int info_rc = srv->name && srv->version && (!opts->title || srv->title)
                    ? server_info_init(srv) : PMCP_ENOMEM;
  if (locks < 4 || info_rc || (opts->instructions && !srv->instructions)) {
    free(srv->info_json);
    free(srv->modern_head);
    pmcp__free(srv, srv->name);
    pmcp__free(srv, srv->title);
    pmcp__free(srv, srv->version);
    pmcp__free(srv, srv->instructions);
    if (locks > 3)
      pmcp__workers_stop(srv);
    if (locks > 2)
      pthread_cond_destroy(&srv->idle_cond);
    if (locks > 1)
      pthread_mutex_destroy(&srv->err_mu);
    if (locks > 0)
      pthread_mutex_destroy(&srv->mu);
    pmcp__free(srv, srv);
    return PMCP_ENOMEM;
  }
  /* A fresh random cursor key; without one (no entropy) cursors are
   * refused rather than minted under a guessable key. */
  if (pmcp__cursor_key_init(&srv->cursor_key))
    srv->cursor_key.len = 0;
  srv->magic = PMCP__SERVER_MAGIC;
  *out = srv;
  return 0;
}

pmcp__cursor_key *pmcp__server_cursor_key(pmcp_server *server)
{
  if (!server_ok(server) || server->cursor_key.len == 0)
    return NULL;
  return &server->cursor_key;
}

int pmcp_server_set_page_size(pmcp_server *server, size_t n)
{
  if (!server_ok(server))
    return PMCP_EMISUSE;
  if (n == 0)
    return pmcp__err(server, PMCP_EINVAL, "page size must be at least 1");
  server->page_size = n;
  return 0;
}

int pmcp_server_wait_room(pmcp_server *server, size_t max, unsigned stall_ms)
{
  if (!server_ok(server) || max == 0)
    return PMCP_EINVAL;
  int rc = 0;
  pthread_mutex_lock(&server->mu);
  server->room_waiters++;
  while (server->busy >= max) {
    /* A call waiting for its client's reply needs reading to go on. */
    if (server->client_waits) {
      rc = PMCP_ETIMEOUT;
      break;
    }
    /* Otherwise wait for an answer, not for room: calls that keep
     * answering are making progress; after stall_ms without one, the
     * caller may let a line through (a cancellation, a ping). */
    uint64_t seen = server->answered;
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += (time_t)(stall_ms / 1000);
    dl.tv_nsec += (long)(stall_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
      dl.tv_sec++;
      dl.tv_nsec -= 1000000000L;
    }
    int w = 0;
    while (server->busy >= max && server->answered == seen && !server->client_waits &&
           w != ETIMEDOUT)
      w = pthread_cond_timedwait(&server->idle_cond, &server->mu, &dl);
    if (server->busy >= max && server->answered == seen && !server->client_waits) {
      rc = PMCP_ETIMEOUT;
      break;
    }
  }
  server->room_waiters--;
  pthread_mutex_unlock(&server->mu);
  return rc;
}

size_t pmcp_server_in_progress(pmcp_server *server)
{
  if (!server_ok(server))
    return 0;
  pthread_mutex_lock(&server->mu);
  size_t n = server->busy;
  pthread_mutex_unlock(&server->mu);
  return n;
}

int pmcp_server_drain(pmcp_server *server)
{
  if (!server_ok(server))
    return PMCP_EMISUSE;
  pthread_mutex_lock(&server->mu);
  while (server->busy)
    pthread_cond_wait(&server->idle_cond, &server->mu);
  pthread_mutex_unlock(&server->mu);
  return 0;
}

int pmcp_server_handle(pmcp_server *server, const char *session,
                       const char *msg, size_t len)
{
  return pmcp_server_handle_http(server, session, msg, len, NULL);
}

static int handle_message(pmcp_server *server, const char *session,
                          const char *msg, size_t len,
                          const pmcp_http_claims *claims);

int pmcp_server_handle_http(pmcp_server *server, const char *session,
                            const char *msg, size_t len,
                            const pmcp_http_claims *claims)
{
  /* What runs inside (cJSON, toolsets, handlers answering synchronously)
   * writes and reads numbers with '.', whatever the host's LC_NUMERIC. */
  locale_t prev = pmcp__c_numeric_enter();
  int rc = handle_message(server, session, msg, len, claims);
  pmcp__c_numeric_leave(prev);
  return rc;
}

/* What every message goes through before it is read: the size limit, a
 * server still open, its session (opened when unknown). */
static int message_session(pmcp_server *server, const char *session, const char *msg,
                           size_t len, pmcp__session **out)
{
  if (!server_ok(server))
    return PMCP_EMISUSE;
  if (!msg && len)
    return PMCP_EINVAL;
  if (server->max_message && len > server->max_message)
    return pmcp__err(server, PMCP_ETOOBIG,
                     "message of %zu bytes exceeds the limit of %zu bytes", len,
                     server->max_message);
  atomic_store(&server->started, 1);
  pthread_mutex_lock(&server->mu);
  if (server->closing) {
    pthread_mutex_unlock(&server->mu);
    return PMCP_EMISUSE;
  }
  *out = pmcp__session_get_locked(server, session, 1, 0, NULL);
  pthread_mutex_unlock(&server->mu);
  return *out ? 0 : PMCP_ENOMEM;
}

/* A message read: one request, notification or response, or a batch. */
static void dispatch_root(pmcp_server *server, pmcp__session *s, pmcp__jdoc *doc,
                          cJSON *root, const char *msg, size_t len,
                          const pmcp_http_claims *claims)
{
  if (cJSON_IsObject(root))
    pmcp__rpc_dispatch(server, s, doc, root, msg, len, NULL, claims);
  else if (cJSON_IsArray(root))
    pmcp__rpc_batch(server, s, doc, root, msg, len);
  else
    pmcp__rpc_error(server, s, NULL, NULL, -32600,
                    "Invalid Request: a message must be a JSON object", NULL);
}

int pmcp__handle_parsed(pmcp_server *server, const char *session, pmcp__jdoc *doc,
                        cJSON *root, const char *msg, size_t len,
                        const pmcp_http_claims *claims)
{
  pmcp__session *s = NULL;
  int rc = message_session(server, session, msg, len, &s);
  if (rc)
    return rc;
  locale_t prev = pmcp__c_numeric_enter();
  dispatch_root(server, s, doc, root, msg, len, claims);
  pmcp__c_numeric_leave(prev);
  pmcp__session_unref(server, s);
  return 0;
}

static int handle_message(pmcp_server *server, const char *session,
                          const char *msg, size_t len,
                          const pmcp_http_claims *claims)
{
  pmcp__session *s = NULL;
  int rc = message_session(server, session, msg, len, &s);
  if (rc)
    return rc;

  if (!pmcp__utf8_valid(msg, len)) {
    pmcp__rpc_error(server, s, NULL, NULL, -32700,
                    "Parse error: the message is not valid UTF-8", NULL);
    goto out;
  }
  pmcp__jdoc *doc = NULL;
  cJSON *root = NULL;
  int prc = pmcp__jdoc_parse(&doc, &root, server, msg, len);
  if (prc == PMCP_ENOMEM) {
    pmcp__rpc_error(server, s, NULL, NULL, -32603,
                    "Internal error: out of memory reading the message", NULL);
    goto out;
  }
  if (prc) {
    pmcp__rpc_error(server, s, NULL, NULL, -32700,
                    "Parse error: the message is not one well-formed JSON value",
                    NULL);
    goto out;
  }
  dispatch_root(server, s, doc, root, msg, len, claims);
  pmcp__jdoc_unref(doc);
out:
  pmcp__session_unref(server, s);
  return 0;
}

int pmcp__message_parse(pmcp_server *server, const char *msg, size_t len,
                        pmcp__jdoc **doc, cJSON **root)
{
  if (!server_ok(server))
    return PMCP_EMISUSE;
  if (!msg && len)
    return PMCP_EINVAL;
  if (!pmcp__utf8_valid(msg, len))
    return pmcp__err(server, PMCP_EPROTO, "Parse error: the message is not valid UTF-8");
  int rc = pmcp__jdoc_parse(doc, root, server, msg, len);
  if (rc == PMCP_ENOMEM)
    return pmcp__err(server, rc, "out of memory reading the message");
  if (rc)
    return pmcp__err(server, PMCP_EPROTO,
                     "Parse error: the message is not one well-formed JSON value");
  return 0;
}

int pmcp_server_check_message(pmcp_server *server, const char *msg, size_t len,
                              int *has_nul)
{
  if (has_nul)
    *has_nul = 0;
  pmcp__jdoc *doc = NULL;
  cJSON *root = NULL;
  int rc = pmcp__message_parse(server, msg, len, &doc, &root);
  if (rc)
    return rc;
  if (has_nul)
    *has_nul = pmcp__jdoc_has_nul(doc);
  pmcp__jdoc_unref(doc);
  return 0;
}

/* ---- lifecycle ---- */

static int version_rank(const char *v)
{
  for (int i = 0; pmcp__versions[i]; i++)
    if (strcmp(pmcp__versions[i], v) == 0)
      return i;
  return -1;
}

int pmcp__proto_at_least(const pmcp__session *s, const char *version)
{
  /* Versions are dates: later sorts higher. Stateless sessions that never
   * initialized speak the latest. */
  const char *mine = s->proto[0] ? s->proto : PMCP__LATEST_VERSION;
  return strcmp(mine, version) >= 0;
}

static int cap(pmcp_buf *b, int *n, const char *member)
{
  int rc = *n ? pmcp__buf_putc(b, ',') : 0;
  (*n)++;
  return rc ? rc : pmcp__buf_puts(b, member);
}

/* One member of capabilities.extensions, opening the object first. */
static int ext_member(pmcp_buf *b, int *n, int *ext, const char *member)
{
  int rc = *ext ? pmcp__buf_putc(b, ',') : cap(b, n, "\"extensions\":{");
  (*ext)++;
  return rc ? rc : pmcp__buf_puts(b, member);
}

int pmcp__caps_json(pmcp_server *srv, pmcp_buf *b, int modern)
{
  /* Modern clients send their log level per request: no logging. They
   * hear of changes and subscribe to resources through
   * subscriptions/listen. */
  const pmcp__registry *r = &srv->reg;
  int n = 0;
  int rc = pmcp__buf_putc(b, '{');
  if (!rc && !modern)
    rc = cap(b, &n, "\"logging\":{}");
  if (!rc && r->complete)
    rc = cap(b, &n, "\"completions\":{}");
  if (!rc && r->n_prompts)
    rc = cap(b, &n, "\"prompts\":{\"listChanged\":true}");
  if (!rc && (r->n_resources || r->n_templates))
    rc = cap(b, &n, "\"resources\":{\"subscribe\":true,\"listChanged\":true}");
  if (!rc && r->n_tools)
    rc = cap(b, &n, "\"tools\":{\"listChanged\":true}");
  /* Extensions: one member each of capabilities.extensions (opened by the
   * first). MCP Apps are offered in both eras: a 2025-11-25 host
   * negotiates them in initialize. */
  int ext = 0;
  if (!rc && modern && pmcp__tasks_enabled(srv))
    rc = ext_member(b, &n, &ext, "\"io.modelcontextprotocol/tasks\":{}");
  if (!rc && pmcp__ui_offered(srv))
    rc = ext_member(b, &n, &ext, "\"io.modelcontextprotocol/ui\":{\"mimeTypes\":[\""
                    PMCP_MIME_MCP_APP "\"]}");
  if (!rc && r->n_skills)
    rc = ext_member(b, &n, &ext, "\"io.modelcontextprotocol/skills\":{}");
  if (!rc && ext)
    rc = pmcp__buf_putc(b, '}');
  if (!rc)
    rc = pmcp__buf_putc(b, '}');
  return rc;
}

void pmcp__method_initialize(pmcp__req *req, cJSON *params)
{
  pmcp_server *srv = req->srv;
  pmcp__session *s = req->sess;
  cJSON *pv = pmcp__jget(params, "protocolVersion");
  cJSON *caps = pmcp__jget(params, "capabilities");
  if (!cJSON_IsString(pv)) {
    pmcp__req_error(req, -32602,
                    "Invalid params: initialize needs a string \"protocolVersion\"",
                    NULL);
    return;
  }
  if (caps && !cJSON_IsObject(caps)) {
    pmcp__req_error(req, -32602,
                    "Invalid params: \"capabilities\" must be an object", NULL);
    return;
  }
  int rank = version_rank(pv->valuestring);
  const char *version = rank >= 0 ? pmcp__versions[rank] : PMCP__LATEST_VERSION;
  char *caps_text = caps ? cJSON_PrintUnformatted(caps) : NULL;
  char *caps_copy = caps_text ? pmcp__strdup(srv, caps_text) : NULL;
  cJSON_free(caps_text);

  pthread_mutex_lock(&srv->mu);
  int again = s->initialized && !(s->flags & PMCP_SESSION_STATELESS);
  if (!again) {
    strcpy(s->proto, version);
    pmcp__free(srv, s->client_caps);
    s->client_caps = caps_copy;
    caps_copy = NULL;
    s->initialized = 1;
  }
  pthread_mutex_unlock(&srv->mu);
  pmcp__free(srv, caps_copy);
  if (again) {
    pmcp__req_error(req, -32600,
                    "Invalid Request: this session is already initialized", NULL);
    return;
  }

  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_printf(&b, "{\"protocolVersion\":\"%s\",\"capabilities\":", version);
  if (!rc)
    rc = pmcp__caps_json(srv, &b, 0);
  if (!rc)
    rc = pmcp__buf_puts(&b, ",\"serverInfo\":");
  if (!rc)
    rc = pmcp__buf_append(&b, srv->info_json, srv->info_len);
  if (!rc && srv->instructions) {
    rc = pmcp__buf_puts(&b, ",\"instructions\":");
    if (!rc)
      rc = pmcp__buf_json_string(&b, srv->instructions, strlen(srv->instructions));
  }
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  pmcp__req_answer(req, rc, &b);
}

static void method_ping(pmcp__req *req, cJSON *params)
{
  (void)params;
  pmcp__req_result(req, "{}", 2);
}

static void method_set_level(pmcp__req *req, cJSON *params)
{
  cJSON *lv = pmcp__jget(params, "level");
  pmcp_log_level level;
  if (!cJSON_IsString(lv) || pmcp__level_parse(lv->valuestring, &level)) {
    pmcp__req_error(req, -32602,
                    "Invalid params: \"level\" must be one of debug, info, notice, "
                    "warning, error, critical, alert, emergency", NULL);
    return;
  }
  pthread_mutex_lock(&req->srv->mu);
  req->sess->level = level;
  pthread_mutex_unlock(&req->srv->mu);
  pmcp__req_result(req, "{}", 2);
}

static const struct method {
  const char *name;
  pmcp__method_fn fn;
  int before_init; /* allowed before initialize */
} methods[] = {
  {"initialize", pmcp__method_initialize, 1},
  {"ping", method_ping, 1},
  {"tools/list", pmcp__method_tools_list, 0},
  {"tools/call", pmcp__method_tools_call, 0},
  {"resources/list", pmcp__method_resources_list, 0},
  {"resources/templates/list", pmcp__method_resources_templates_list, 0},
  {"resources/read", pmcp__method_resources_read, 0},
  {"resources/subscribe", pmcp__method_resources_subscribe, 0},
  {"resources/unsubscribe", pmcp__method_resources_unsubscribe, 0},
  {"prompts/list", pmcp__method_prompts_list, 0},
  {"prompts/get", pmcp__method_prompts_get, 0},
  {"completion/complete", pmcp__method_complete, 0},
  {"skills/list", pmcp__method_skills_list, 0},
  {"skills/get", pmcp__method_skills_get, 0},
  {"logging/setLevel", method_set_level, 0},
  {"server/discover", pmcp__method_discover, 1},
  {"subscriptions/listen", pmcp__method_listen, 1},
  {"tasks/get", pmcp__method_tasks_get, 1},
  {"tasks/update", pmcp__method_tasks_update, 1},
  {"tasks/cancel", pmcp__method_tasks_cancel, 1},
};

void pmcp__on_request(pmcp__req *req, const char *method, cJSON *params)
{
  pmcp_server *srv = req->srv;
  const struct method *m = NULL;
  pmcp__log(srv, PMCP_LOG_DEBUG, "session '%s': request %s %s", req->sess->id, req->id,
            method);
  if (pmcp__era_admit(req, method, params))
    return;
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
    if (methods[i].name[0] == method[0] && strcmp(methods[i].name, method) == 0) {
      m = &methods[i];
      break;
    }
  }
  if (!m) {
    pmcp__req_errorf(req, -32601, "Method not found: %s", method);
    return;
  }
  if (params && !cJSON_IsObject(params)) {
    pmcp__req_errorf(req, -32602, "Invalid params: %s takes an object", method);
    return;
  }
  if (req->batch && strcmp(method, "initialize") == 0) {
    pmcp__req_error(req, -32600,
                    "Invalid Request: initialize must not be part of a batch", NULL);
    return;
  }
  pthread_mutex_lock(&srv->mu);
  int ready = req->modern || req->sess->initialized ||
              (req->sess->flags & PMCP_SESSION_STATELESS);
  pthread_mutex_unlock(&srv->mu);
  if (!ready && !m->before_init) {
    pmcp__req_errorf(req, -32600,
                     "Invalid Request: %s before initialize; send initialize first",
                     method);
    return;
  }
  m->fn(req, params);
}

static void on_cancelled(pmcp_server *srv, pmcp__session *s, cJSON *params,
                         const char *raw, size_t raw_len)
{
  static const char *const path[] = {"params", "requestId"};
  cJSON *rid = pmcp__jget(params, "requestId");
  if (!rid)
    return;
  pmcp_buf idb = PMCP_BUF_INIT;
  if (pmcp__rpc_id_text(rid, raw, raw_len, path, 2, &idb) == 0) {
    pthread_mutex_lock(&srv->mu);
    for (pmcp__req *r = s->inflight; r; r = r->next) {
      if (strcmp(r->id, idb.ptr) == 0) {
        atomic_store(&r->cancelled, 1);
        pmcp__req_wake_locked(r);
        if (r->listening)
          pmcp__listen_end_locked(srv, s, r->id);
        break;
      }
    }
    pthread_mutex_unlock(&srv->mu);
    pmcp__listen_reap(srv);
  }
  pmcp_buf_dispose(&idb);
}

void pmcp__on_notification(pmcp_server *srv, pmcp__session *s,
                           const char *method, cJSON *params, const char *raw,
                           size_t raw_len)
{
  if (strcmp(method, "notifications/cancelled") == 0)
    on_cancelled(srv, s, params, raw, raw_len);
  else if (strcmp(method, "notifications/initialized") == 0)
    pmcp__log(srv, PMCP_LOG_DEBUG, "session '%s' initialized", s->id);
  /* Other notifications (roots/list_changed, progress) need no action; the
   * spec says unknown notifications are ignored. */
}
