/* SPDX-License-Identifier: MIT */
/* subscriptions/listen (2026-07-28): a request that stays open and carries
 * the list-changed and resource-updated notifications its filter asked
 * for, each tagged with the listen request's id, after an acknowledgement
 * saying which of them the server honours. It replaces the GET stream and
 * resources/subscribe for modern clients. It ends when its session closes
 * (HTTP: the client closed the stream) or it is cancelled; the server's
 * teardown ends it too. */
#include <string.h>

#include "core/engine.h"
#include "core/jdoc.h"
#include "core/tasks_int.h"
#include "util/buf.h"
#include "util/json.h"

#define SUB_ID "io.modelcontextprotocol/subscriptionId"

static int flag(const cJSON *filter, const char *name)
{
  return cJSON_IsTrue(pmcp__jget(filter, name));
}

void pmcp__method_listen(pmcp__req *req, cJSON *params)
{
  pmcp_server *srv = req->srv;
  cJSON *filter = pmcp__jget(params, "notifications");
  cJSON *uris = pmcp__jget(filter, "resourceSubscriptions");
  cJSON *tasks = pmcp__jget(filter, "taskIds");
  if (!cJSON_IsObject(filter) || (uris && !cJSON_IsArray(uris)) ||
      (tasks && !cJSON_IsArray(tasks))) {
    req->http_status = 400;
    pmcp__req_error(req, -32602,
                    "Invalid params: subscriptions/listen needs the object "
                    "\"notifications\" (resourceSubscriptions: an array of URIs, "
                    "taskIds: an array of task ids)", NULL);
    return;
  }
  for (cJSON *u = tasks ? tasks->child : NULL; u; u = u->next)
    if (!cJSON_IsString(u)) {
      req->http_status = 400;
      pmcp__req_error(req, -32602, "Invalid params: taskIds holds task id strings", NULL);
      return;
    }
  for (cJSON *u = uris ? uris->child : NULL; u; u = u->next)
    if (!cJSON_IsString(u)) {
      req->http_status = 400;
      pmcp__req_error(req, -32602,
                      "Invalid params: resourceSubscriptions holds URI strings", NULL);
      return;
    }
  const pmcp__registry *r = &srv->reg;
  int res = r->n_resources || r->n_templates;
  unsigned kinds = 0;
  if (flag(filter, "toolsListChanged") && r->n_tools)
    kinds |= 1u << PMCP_LIST_TOOLS;
  if (flag(filter, "promptsListChanged") && r->n_prompts)
    kinds |= 1u << PMCP_LIST_PROMPTS;
  if (flag(filter, "resourcesListChanged") && res)
    kinds |= 1u << PMCP_LIST_RESOURCES;
  /* The honoured subset, for the acknowledgement. */
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_printf(&b, "{\"_meta\":{\"" SUB_ID "\":%s},\"notifications\":{", req->id);
  int n = 0;
  static const struct { unsigned kind; const char *name; } names[] = {
      {1u << PMCP_LIST_TOOLS, "toolsListChanged"},
      {1u << PMCP_LIST_PROMPTS, "promptsListChanged"},
      {1u << PMCP_LIST_RESOURCES, "resourcesListChanged"}};
  for (size_t i = 0; i < 3 && !rc; i++)
    if (kinds & names[i].kind)
      rc = pmcp__buf_printf(&b, "%s\"%s\":true", n++ ? "," : "", names[i].name);
  if (!rc && res && uris) {
    char *text = cJSON_PrintUnformatted(uris);
    rc = text ? pmcp__buf_printf(&b, "%s\"resourceSubscriptions\":%s", n++ ? "," : "", text)
              : PMCP_ENOMEM;
    cJSON_free(text);
  }
  /* Task status (io.modelcontextprotocol/tasks): notifications/tasks for
   * the ids given, when the server runs tasks. */
  int task_ids = tasks && pmcp__tasks_enabled(srv);
  if (!rc && task_ids) {
    char *text = cJSON_PrintUnformatted(tasks);
    rc = text ? pmcp__buf_printf(&b, "%s\"taskIds\":%s", n++ ? "," : "", text)
              : PMCP_ENOMEM;
    cJSON_free(text);
  }
  if (!rc)
    rc = pmcp__buf_puts(&b, "}}");
  if (rc) {
    pmcp_buf_dispose(&b);
    pmcp__req_error(req, -32603, "Internal error: out of memory", NULL);
    return;
  }
  req->listen_kinds = kinds;
  req->listen_uris = res ? uris : NULL;
  req->listen_tasks = task_ids ? tasks : NULL;
  req->listen_since_ms = pmcp__tasks_now_ms();
  /* tasks running on other replicas reach this listener through the
   * store (tasks_watch.c) */
  if (task_ids && srv->task_store && pmcp__tasks_watch_start(srv))
    pmcp__log(srv, PMCP_LOG_WARNING, "tasks: cannot start the watcher of tasks run elsewhere");
  /* Acknowledged before it is registered: nothing can come first. */
  pmcp__notify(srv, req->sess, req->id, "notifications/subscriptions/acknowledged", b.ptr);
  pmcp_buf_dispose(&b);
  pthread_mutex_lock(&srv->mu);
  int gone = req->sess->closed || srv->closing || atomic_load(&req->cancelled);
  if (!gone) {
    req->listening = 1;
    req->lnext = srv->listeners;
    srv->listeners = req;
  }
  pthread_mutex_unlock(&srv->mu);
  if (gone)
    pmcp__req_drop(req);
}

void pmcp__listen_end_locked(pmcp_server *srv, pmcp__session *s, const char *id)
{
  for (pmcp__req **pp = &srv->listeners; *pp;) {
    pmcp__req *r = *pp;
    if ((!s || r->sess == s) && (!id || strcmp(r->id, id) == 0)) {
      *pp = r->lnext;
      r->lnext = srv->listen_dead;
      srv->listen_dead = r;
    } else {
      pp = &r->lnext;
    }
  }
}

void pmcp__listen_reap(pmcp_server *srv)
{
  for (;;) {
    pthread_mutex_lock(&srv->mu);
    pmcp__req *r = srv->listen_dead;
    if (r)
      srv->listen_dead = r->lnext;
    pthread_mutex_unlock(&srv->mu);
    if (!r)
      return;
    r->listening = 0;
    /* Ended by the server while the client still listens: a graceful
     * close; otherwise (closed, cancelled) nothing more is said. */
    pmcp_buf b = PMCP_BUF_INIT;
    if (atomic_load(&r->cancelled) ||
        pmcp__buf_printf(&b, "{\"_meta\":{\"" SUB_ID "\":%s}}", r->id))
      pmcp__req_drop(r);
    else
      pmcp__req_result(r, b.ptr, b.len);
    pmcp_buf_dispose(&b);
  }
}

static int listed(const cJSON *list, const char *s)
{
  for (const cJSON *u = list ? list->child : NULL; u; u = u->next)
    if (strcmp(u->valuestring, s) == 0)
      return 1;
  return 0;
}

/* Whether listener @p r asked for the notification: a task's status (to
 * its own caller only), a resource's update, or a kind of list change. */
typedef struct target {
  unsigned kind;
  const char *uri, *task;
  const void *task_ud;
} target;

static int wants(const pmcp__req *r, const target *t)
{
  if (t->task)
    return r->sess->ud == t->task_ud && listed(r->listen_tasks, t->task);
  if (t->uri)
    return listed(r->listen_uris, t->uri);
  return (r->listen_kinds & (1u << t->kind)) != 0;
}

static int fanout(pmcp_server *srv, const target *t, const char *method,
                  const char *extra);

int pmcp__listen_notify(pmcp_server *srv, unsigned kind, const char *uri,
                        const char *method, const char *uri_params)
{
  target t = {kind, uri, NULL, NULL};
  return fanout(srv, &t, method, uri_params);
}

int pmcp__listen_notify_task(pmcp_server *srv, const char *task_id, const void *ud,
                             const char *params)
{
  target t = {0, NULL, task_id, ud};
  return fanout(srv, &t, "notifications/tasks", params);
}

static int fanout(pmcp_server *srv, const target *t, const char *method,
                  const char *extra)
{
  /* Copy the targets under the lock, send without it. */
  pthread_mutex_lock(&srv->mu);
  size_t n = 0;
  for (pmcp__req *r = srv->listeners; r; r = r->lnext)
    n++;
  pmcp__session **sess = n ? pmcp__calloc(srv, n, sizeof *sess) : NULL;
  char **ids = n ? pmcp__calloc(srv, n, sizeof *ids) : NULL;
  size_t k = 0;
  int rc = n && (!sess || !ids) ? PMCP_ENOMEM : 0;
  for (pmcp__req *r = srv->listeners; r && !rc; r = r->lnext) {
    if (!wants(r, t))
      continue;
    if (!(ids[k] = pmcp__strdup(srv, r->id))) {
      rc = PMCP_ENOMEM;
      break;
    }
    sess[k] = r->sess;
    r->sess->refs++;
    k++;
  }
  pthread_mutex_unlock(&srv->mu);
  for (size_t i = 0; i < k; i++) {
    pmcp_buf p = PMCP_BUF_INIT;
    int r = pmcp__buf_printf(&p, "{\"_meta\":{\"" SUB_ID "\":%s}", ids[i]);
    if (!r && extra)
      r = pmcp__buf_printf(&p, ",%s", extra);
    if (!r)
      r = pmcp__buf_putc(&p, '}');
    if (!r)
      r = pmcp__notify(srv, sess[i], ids[i], method, p.ptr);
    if (r && !rc)
      rc = r;
    pmcp_buf_dispose(&p);
    pmcp__free(srv, ids[i]);
    pmcp__session_unref(srv, sess[i]);
  }
  pmcp__free(srv, sess);
  pmcp__free(srv, ids);
  return rc;
}
