/* SPDX-License-Identifier: MIT */
/* Sessions: the table, per-session sink serialization, subscriptions and
 * the notifications that go to every session. */
#include <stddef.h>
#include <string.h>

#include "core/engine.h"
#include "util/buf.h"
#include "util/json.h"

static size_t hash_str(const char *s)
{
  size_t h = 1469598103934665603u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

static int grow_table(pmcp_server *srv)
{
  size_t n = srv->n_buckets ? srv->n_buckets * 2 : 16;
  pmcp__session **b = pmcp__calloc(srv, n, sizeof *b);
  if (!b)
    return PMCP_ENOMEM;
  for (size_t i = 0; i < srv->n_buckets; i++) {
    pmcp__session *s = srv->buckets[i];
    while (s) {
      pmcp__session *next = s->hnext;
      size_t k = hash_str(s->id) & (n - 1);
      s->hnext = b[k];
      b[k] = s;
      s = next;
    }
  }
  pmcp__free(srv, srv->buckets);
  srv->buckets = b;
  srv->n_buckets = n;
  return 0;
}

/* Ended sessions kept (allocation and mutex) for the next one. */
#define SPARE_MAX 8
/* Room for the ids of stateless requests ("s" and a counter) and more. */
#define ID_MIN 32

static void session_destroy(pmcp_server *srv, pmcp__session *s)
{
  for (size_t i = 0; i < s->n_subs; i++)
    pmcp__free(srv, s->subs[i]);
  pmcp__free(srv, s->subs);
  pmcp__free(srv, s->client_caps);
  if (srv->n_spare < SPARE_MAX && !srv->closing) {
    s->hnext = srv->spare;
    srv->spare = s;
    srv->n_spare++;
    return;
  }
  pthread_mutex_destroy(&s->sink_mu);
  pmcp__free(srv, s);
}

void pmcp__sessions_free_spare(pmcp_server *srv)
{
  while (srv->spare) {
    pmcp__session *s = srv->spare;
    srv->spare = s->hnext;
    pthread_mutex_destroy(&s->sink_mu);
    pmcp__free(srv, s);
  }
  srv->n_spare = 0;
}

/* A kept session with room for an id of @p idlen bytes, cleared; NULL
 * when none fits. */
static pmcp__session *spare_take(pmcp_server *srv, size_t idlen)
{
  for (pmcp__session **pp = &srv->spare; *pp; pp = &(*pp)->hnext) {
    pmcp__session *s = *pp;
    if (s->id_cap <= idlen)
      continue;
    *pp = s->hnext;
    srv->n_spare--;
    memset(s, 0, offsetof(pmcp__session, sink_mu));
    s->hnext = NULL;
    return s;
  }
  return NULL;
}

/* A new session @p id, known not to be in the table. */
static pmcp__session *session_create_locked(pmcp_server *srv, const char *id,
                                            unsigned flags, void *ud)
{
  if (srv->n_sessions >= srv->n_buckets && grow_table(srv))
    return NULL;
  /* The id lives in the same allocation (a modern-era HTTP request opens
   * and closes one session each). */
  size_t idlen = strlen(id);
  pmcp__session *s = spare_take(srv, idlen);
  if (!s) {
    size_t cap = idlen + 1 > ID_MIN ? idlen + 1 : ID_MIN;
    s = pmcp__calloc(srv, 1, sizeof *s + cap);
    if (!s)
      return NULL;
    s->id_cap = cap;
    /* Recursive: a sink that notifies (pmcp_server_log, list_changed ...)
     * from inside a sink call must not deadlock on its own session. */
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    int bad = pthread_mutex_init(&s->sink_mu, &attr);
    pthread_mutexattr_destroy(&attr);
    if (bad) {
      pmcp__free(srv, s);
      return NULL;
    }
  }
  s->id = memcpy((char *)(s + 1), id, idlen + 1);
  s->flags = flags;
  s->ud = ud;
  s->level = PMCP_LOG_DEBUG; /* until logging/setLevel, everything goes */
  s->refs = 2;               /* the table's and the caller's */
  size_t k = hash_str(id) & (srv->n_buckets - 1);
  s->hnext = srv->buckets[k];
  srv->buckets[k] = s;
  srv->n_sessions++;
  return s;
}

pmcp__session *pmcp__session_get_locked(pmcp_server *srv, const char *id,
                                        int create, unsigned flags, void *ud)
{
  if (!id)
    id = "";
  if (srv->n_buckets) {
    for (pmcp__session *s = srv->buckets[hash_str(id) & (srv->n_buckets - 1)]; s;
         s = s->hnext) {
      if (strcmp(s->id, id) == 0) {
        s->refs++;
        return s;
      }
    }
  }
  return create ? session_create_locked(srv, id, flags, ud) : NULL;
}

void pmcp__session_unref_locked(pmcp_server *srv, pmcp__session *s)
{
  if (--s->refs == 0)
    session_destroy(srv, s);
}

void pmcp__session_unref(pmcp_server *srv, pmcp__session *s)
{
  pthread_mutex_lock(&srv->mu);
  pmcp__session_unref_locked(srv, s);
  pthread_mutex_unlock(&srv->mu);
}

/* Unlinks @p s from the table, cancels its calls and wakes its waiters. */
static void session_close_locked(pmcp_server *srv, pmcp__session *s)
{
  size_t k = hash_str(s->id) & (srv->n_buckets - 1);
  for (pmcp__session **pp = &srv->buckets[k]; *pp; pp = &(*pp)->hnext) {
    if (*pp == s) {
      *pp = s->hnext;
      break;
    }
  }
  srv->n_sessions--;
  pmcp__listen_end_locked(srv, s, NULL);
  s->closed = 1;
  for (pmcp__req *r = s->inflight; r; r = r->next) {
    atomic_store(&r->cancelled, 1);
    pmcp__req_wake_locked(r);
  }
  for (size_t i = 0; i < s->n_subs; i++)
    pmcp__free(srv, s->subs[i]);
  s->n_subs = 0;
  pmcp__session_unref_locked(srv, s);
}

void pmcp__sessions_clear_locked(pmcp_server *srv)
{
  for (size_t i = 0; i < srv->n_buckets; i++) {
    while (srv->buckets[i])
      session_close_locked(srv, srv->buckets[i]);
  }
}

void pmcp__send(pmcp_server *srv, pmcp__session *s, const char *related_id,
                pmcp_out_kind kind, const char *data, size_t len, int final)
{
  pmcp__send_status(srv, s, related_id, kind, data, len, final, 0);
}

void pmcp__send_status(pmcp_server *srv, pmcp__session *s, const char *related_id,
                       pmcp_out_kind kind, const char *data, size_t len,
                       int final, int http_status)
{
  if (pmcp__tasks_internal(s)) {
    /* A task's call: its answer is kept in the task, nothing is sent. */
    if (kind == PMCP_OUT_RESPONSE && data)
      pmcp__tasks_capture(srv, s, data, len);
    return;
  }
  pmcp_out out = {s->id, related_id, kind, data, len, final, http_status};
  pthread_mutex_lock(&s->sink_mu);
  /* closed is written under srv->mu; reading it racily only decides whether
   * a message to a closing session is still delivered, so take the lock. */
  pthread_mutex_lock(&srv->mu);
  int closed = s->closed;
  pthread_mutex_unlock(&srv->mu);
  if (!closed)
    srv->sink(&out, srv->sink_ud);
  pthread_mutex_unlock(&s->sink_mu);
}

int pmcp__notify(pmcp_server *srv, pmcp__session *s, const char *related_id,
                 const char *method, const char *params_json)
{
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"method\":");
  if (!rc)
    rc = pmcp__buf_json_string(&b, method, strlen(method));
  if (!rc && params_json)
    rc = pmcp__buf_printf(&b, ",\"params\":%s", params_json);
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  if (!rc)
    pmcp__send(srv, s, related_id, PMCP_OUT_NOTIFICATION, b.ptr, b.len, 0);
  pmcp_buf_dispose(&b);
  return rc;
}

int pmcp__session_subscribe_locked(pmcp_server *srv, pmcp__session *s,
                                   const char *uri, int on)
{
  for (size_t i = 0; i < s->n_subs; i++) {
    if (strcmp(s->subs[i], uri) == 0) {
      if (!on) {
        pmcp__free(srv, s->subs[i]);
        s->subs[i] = s->subs[--s->n_subs];
      }
      return 0;
    }
  }
  if (!on)
    return 0;
  if (s->n_subs == s->cap_subs) {
    size_t cap = s->cap_subs ? s->cap_subs * 2 : 4;
    char **n = pmcp__realloc(srv, s->subs, cap * sizeof *n);
    if (!n)
      return PMCP_ENOMEM;
    s->subs = n;
    s->cap_subs = cap;
  }
  char *copy = pmcp__strdup(srv, uri);
  if (!copy)
    return PMCP_ENOMEM;
  s->subs[s->n_subs++] = copy;
  return 0;
}

/* Collects referenced sessions matching @p pred so that sending happens
 * without srv->mu held. */
typedef int (*session_pred)(const pmcp__session *s, const void *arg);

static int for_sessions(pmcp_server *srv, session_pred pred, const void *arg,
                        const char *method, const char *params)
{
  pthread_mutex_lock(&srv->mu);
  size_t n = 0;
  pmcp__session **list = pmcp__calloc(srv, srv->n_sessions + 1, sizeof *list);
  if (!list) {
    pthread_mutex_unlock(&srv->mu);
    return PMCP_ENOMEM;
  }
  for (size_t i = 0; i < srv->n_buckets; i++) {
    for (pmcp__session *s = srv->buckets[i]; s; s = s->hnext) {
      if (!s->closed && pred(s, arg)) {
        s->refs++;
        list[n++] = s;
      }
    }
  }
  pthread_mutex_unlock(&srv->mu);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    int r = pmcp__notify(srv, list[i], NULL, method, params);
    if (r && !rc)
      rc = r;
    pmcp__session_unref(srv, list[i]);
  }
  pmcp__free(srv, list);
  return rc;
}

static int pred_ready(const pmcp__session *s, const void *arg)
{
  (void)arg;
  return s->initialized;
}

static int pred_subscribed(const pmcp__session *s, const void *arg)
{
  for (size_t i = 0; i < s->n_subs; i++)
    if (strcmp(s->subs[i], (const char *)arg) == 0)
      return 1;
  return 0;
}

static int pred_level(const pmcp__session *s, const void *arg)
{
  return s->initialized && *(const pmcp_log_level *)arg >= s->level;
}

static int server_ok(const pmcp_server *srv)
{
  return srv && srv->magic == PMCP__SERVER_MAGIC;
}

int pmcp_server_notify_resource_updated(pmcp_server *server, const char *uri)
{
  if (!server_ok(server))
    return PMCP_EMISUSE;
  if (!uri)
    return pmcp__err(server, PMCP_EINVAL, "no URI given");
  pmcp_buf p = PMCP_BUF_INIT;
  int rc = pmcp__buf_puts(&p, "{\"uri\":");
  if (!rc)
    rc = pmcp__buf_json_string(&p, uri, strlen(uri));
  if (!rc)
    rc = pmcp__buf_putc(&p, '}');
  if (!rc)
    rc = for_sessions(server, pred_subscribed, uri,
                      "notifications/resources/updated", p.ptr);
  if (!rc) {
    /* The same member, in the listeners' object tagged with their id. */
    p.ptr[--p.len] = '\0';
    rc = pmcp__listen_notify(server, 0, uri, "notifications/resources/updated",
                             p.ptr + 1);
  }
  pmcp_buf_dispose(&p);
  return rc;
}

int pmcp_server_notify_list_changed(pmcp_server *server, pmcp_list_kind kind)
{
  if (!server_ok(server))
    return PMCP_EMISUSE;
  const char *method;
  switch (kind) {
  case PMCP_LIST_TOOLS: method = "notifications/tools/list_changed"; break;
  case PMCP_LIST_RESOURCES: method = "notifications/resources/list_changed"; break;
  case PMCP_LIST_PROMPTS: method = "notifications/prompts/list_changed"; break;
  default: return pmcp__err(server, PMCP_EINVAL, "unknown list kind %d", (int)kind);
  }
  int rc = for_sessions(server, pred_ready, NULL, method, NULL);
  int lrc = pmcp__listen_notify(server, (unsigned)kind, NULL, method, NULL);
  return rc ? rc : lrc;
}

int pmcp__log_params(pmcp_buf *out, pmcp_log_level level, const char *logger,
                     const char *data_json)
{
  if (!data_json || !pmcp__json_valid(data_json, strlen(data_json)))
    return PMCP_EINVAL;
  int rc = pmcp__buf_printf(out, "{\"level\":\"%s\"", pmcp__level_name(level));
  if (!rc && logger) {
    rc = pmcp__buf_puts(out, ",\"logger\":");
    if (!rc)
      rc = pmcp__buf_json_string(out, logger, strlen(logger));
  }
  if (!rc)
    rc = pmcp__buf_puts(out, ",\"data\":");
  if (!rc)
    rc = pmcp__json_minify(out, data_json, strlen(data_json));
  if (!rc)
    rc = pmcp__buf_putc(out, '}');
  return rc;
}

int pmcp_server_log(pmcp_server *server, pmcp_log_level level,
                    const char *logger, const char *data_json)
{
  if (!server_ok(server))
    return PMCP_EMISUSE;
  if ((unsigned)level > PMCP_LOG_EMERGENCY)
    return pmcp__err(server, PMCP_EINVAL, "unknown log level %d", (int)level);
  pmcp_buf p = PMCP_BUF_INIT;
  int rc = pmcp__log_params(&p, level, logger, data_json);
  if (rc == PMCP_EINVAL)
    pmcp__err(server, rc, "log data is not one JSON value");
  if (!rc)
    rc = for_sessions(server, pred_level, &level, "notifications/message", p.ptr);
  pmcp_buf_dispose(&p);
  return rc;
}

/* ---- public session calls ---- */

int pmcp_server_session_open(pmcp_server *server, const char *session,
                             unsigned flags, void *ud)
{
  if (!server_ok(server))
    return PMCP_EMISUSE;
  if (flags & ~(unsigned)PMCP_SESSION_STATELESS)
    return pmcp__err(server, PMCP_EINVAL, "unknown session flags 0x%x", flags);
  pthread_mutex_lock(&server->mu);
  int rc = 0;
  pmcp__session *s = pmcp__session_get_locked(server, session, 0, 0, NULL);
  if (s) {
    pmcp__session_unref_locked(server, s);
    rc = pmcp__err(server, PMCP_EEXIST, "session '%s' is already open",
                   session ? session : "");
  } else {
    s = session_create_locked(server, session ? session : "", flags, ud);
    if (!s)
      rc = PMCP_ENOMEM;
    else
      pmcp__session_unref_locked(server, s);
  }
  pthread_mutex_unlock(&server->mu);
  return rc;
}

int pmcp_server_session_close(pmcp_server *server, const char *session)
{
  if (!server_ok(server))
    return PMCP_EMISUSE;
  pthread_mutex_lock(&server->mu);
  pmcp__session *s = pmcp__session_get_locked(server, session, 0, 0, NULL);
  if (s) {
    session_close_locked(server, s);
    pmcp__session_unref_locked(server, s);
  }
  pthread_mutex_unlock(&server->mu);
  pmcp__listen_reap(server);
  return s ? 0 : PMCP_ENOTFOUND;
}

int pmcp_server_session_end_input(pmcp_server *server, const char *session)
{
  if (!server_ok(server))
    return PMCP_EMISUSE;
  pthread_mutex_lock(&server->mu);
  pmcp__session *s = pmcp__session_get_locked(server, session, 0, 0, NULL);
  if (s) {
    s->input_ended = 1;
    for (pmcp__req *r = s->inflight; r; r = r->next)
      pmcp__req_wake_locked(r);
    pmcp__session_unref_locked(server, s);
  }
  pthread_mutex_unlock(&server->mu);
  return s ? 0 : PMCP_ENOTFOUND;
}

int pmcp_server_session_ready(pmcp_server *server, const char *session)
{
  if (!server_ok(server))
    return 0;
  pthread_mutex_lock(&server->mu);
  pmcp__session *s = pmcp__session_get_locked(server, session, 0, 0, NULL);
  int ready = s && s->initialized;
  if (s)
    pmcp__session_unref_locked(server, s);
  pthread_mutex_unlock(&server->mu);
  return ready;
}

int pmcp_server_session_protocol(pmcp_server *server, const char *session,
                                 char *out, size_t size)
{
  if (!server_ok(server))
    return PMCP_EMISUSE;
  if (!out || size == 0)
    return PMCP_EINVAL;
  int rc = 0;
  pthread_mutex_lock(&server->mu);
  pmcp__session *s = pmcp__session_get_locked(server, session, 0, 0, NULL);
  if (!s) {
    rc = PMCP_ENOTFOUND;
  } else {
    if (!s->proto[0]) {
      rc = PMCP_EINVAL;
    } else if (strlen(s->proto) >= size) {
      rc = PMCP_EINVAL;
    } else {
      strcpy(out, s->proto);
    }
    pmcp__session_unref_locked(server, s);
  }
  pthread_mutex_unlock(&server->mu);
  return rc;
}
