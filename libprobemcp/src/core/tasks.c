/* SPDX-License-Identifier: MIT */
/* The Tasks extension (io.modelcontextprotocol/tasks, 2026-07-28): a
 * tools/call from a client that declared the extension, to a tool that may
 * run as a task, is answered at once with a task; the call itself runs as
 * an internal modern request on a session of its own, whose answers the
 * engine keeps instead of sending them. An input_required answer parks the
 * task (tasks/get shows its inputRequests, tasks/update answers them and
 * runs the next round with every answer so far), a complete one ends it
 * (result inlined on tasks/get), an error fails it.
 *
 * Task ids are sealed with the server's cursor key, so a forged or altered
 * id is refused before any lookup. The records live in memory, or in the
 * host's task store (tasks_store.c, probemcp/tasks.h), where they survive
 * a restart and are shared by every replica of the store. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/call.h"
#include "core/tasks_int.h"
#include "core/cursor_int.h"
#include "core/jdoc.h"
#include "util/buf.h"
#include "util/crypto.h"
#include "util/json.h"

#define EXT "io.modelcontextprotocol/tasks"
#define TASK_TTL_MS 3600000
#define TASK_POLL_MS 200
#define TASK_SESSION_PREFIX "\x01task:"

typedef pmcp__t_status t_status;

static const char *status_name(t_status s)
{
  static const char *const n[] = {"working", "input_required", "completed", "failed",
                                  "cancelled"};
  return n[s];
}

const char *pmcp__task_status_name(pmcp__t_status s)
{
  return status_name(s);
}

int pmcp__task_status_parse(const char *name, pmcp__t_status *out)
{
  for (int s = T_WORKING; s <= T_CANCELLED; s++)
    if (strcmp(status_name((t_status)s), name) == 0) {
      *out = (t_status)s;
      return 0;
    }
  return PMCP_ECORRUPT;
}

/* ---- the tasks this process knows: find, add, expire ----
 * Without a task store this list is every task. With one (tasks_store.c)
 * the store holds the truth and this list only what this process runs or
 * ran: its internal sessions, its callers for notifications; tasks/get,
 * tasks/update and tasks/cancel read the store, and every change is
 * written through before it is announced. */

static pmcp__task *store_find_locked(pmcp_server *srv, const char *id)
{
  for (pmcp__task *t = srv->tasks; t; t = t->next)
    if (strcmp(t->id, id) == 0)
      return t;
  return NULL;
}

static pmcp__task *store_find_session_locked(pmcp_server *srv, const char *sess)
{
  for (pmcp__task *t = srv->tasks; t; t = t->next)
    if (t->session && strcmp(t->session, sess) == 0)
      return t;
  return NULL;
}

void pmcp__task_free(pmcp__task *t)
{
  if (!t)
    return;
  free(t->id);
  free(t->session);
  free(t->owner);
  free(t->tool);
  free(t->args);
  free(t->caps);
  free(t->outcome);
  cJSON_Delete(t->answers);
  cJSON_Delete(t->asked);
  free(t);
}
#define task_free pmcp__task_free

static void store_add_locked(pmcp_server *srv, pmcp__task *t)
{
  t->next = srv->tasks;
  srv->tasks = t;
}

/* Unlinks the tasks whose TTL ran out; the caller closes their sessions
 * (which cancels a call still waiting) and frees them without the lock. */
static pmcp__task *store_expire_locked(pmcp_server *srv, long long now)
{
  pmcp__task *gone = NULL;
  for (pmcp__task **pp = &srv->tasks; *pp;) {
    pmcp__task *t = *pp;
    /* A running call is never cut short; a finished task, or one left
     * waiting for input, goes TASK_TTL_MS after its last change (the
     * store keeps its own copy for that long too). */
    if (t->status != T_WORKING && now - t->updated_ms > TASK_TTL_MS) {
      *pp = t->next;
      t->next = gone;
      gone = t;
    } else {
      pp = &t->next;
    }
  }
  return gone;
}

static void tasks_bury(pmcp_server *srv, pmcp__task *gone)
{
  while (gone) {
    pmcp__task *t = gone;
    gone = t->next;
    pmcp_server_session_close(srv, t->session);
    task_free(t);
  }
}

void pmcp__tasks_free(pmcp_server *srv)
{
  /* A call still running here ends with the server: its record says so
   * now rather than when its lease runs out. An end not stored yet gets
   * its last try. */
  while (srv->tasks) {
    pmcp__task *t = srv->tasks;
    srv->tasks = t->next;
    int write = srv->task_store && t->unsaved;
    if (srv->task_store && t->status == T_WORKING && t->running) {
      t->status = T_FAILED;
      t->updated_ms = pmcp__tasks_now_ms();
      free(t->outcome);
      t->outcome = strdup("{\"code\":-32603,\"message\":\"Internal error: the server "
                          "stopped before this task finished; call the tool again\"}");
      write = t->outcome != NULL;
    }
    if (write) {
      pmcp_task_record rec;
      if (pmcp__task_to_record_locked(srv, t, &rec) == 0) {
        pmcp__tasks_put(srv, &rec, 0);
        pmcp_task_record_clear(&rec);
      }
    }
    task_free(t);
  }
  pmcp__tasks_store_close(srv);
}

/* ---- helpers ---- */

long long pmcp__tasks_now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
#define now_ms pmcp__tasks_now_ms

static int iso_time(pmcp_buf *b, long long ms)
{
  time_t s = (time_t)(ms / 1000);
  struct tm tm;
  gmtime_r(&s, &tm);
  char text[40];
  strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  return pmcp__buf_printf(b, "\"%s.%03dZ\"", text, (int)(ms % 1000));
}

int pmcp__tasks_enabled(const pmcp_server *srv)
{
  for (size_t i = 0; i < srv->reg.n_tools; i++)
    if (srv->reg.tools[i]->flags &
        (PMCP_TOOL_TASK | PMCP_TOOL_TASK_REQUIRED | PMCP_TOOL_TASK_ON_DEMAND))
      return 1;
  return 0;
}

int pmcp__tasks_declared(const pmcp__req *req)
{
  return req->modern &&
         cJSON_IsObject(pmcp__jget(pmcp__jget(req->client_caps, "extensions"), EXT));
}

int pmcp__tasks_internal(const pmcp__session *s)
{
  return strncmp(s->id, TASK_SESSION_PREFIX, strlen(TASK_SESSION_PREFIX)) == 0;
}

static void missing_ext(pmcp__req *req, const char *what)
{
  char msg[200];
  snprintf(msg, sizeof msg, "Missing required client capability: %s needs the " EXT
           " extension in clientCapabilities.extensions", what);
  req->http_status = 400;
  pmcp__req_error(req, -32021, msg,
                  "{\"requiredCapabilities\":{\"extensions\":{\"" EXT "\":{}}}}");
}

void pmcp__tasks_refuse_undeclared(pmcp__req *req, const char *tool)
{
  missing_ext(req, tool);
}

/* The sealed id: a random serial under the server key, bound to "task". */
static char *seal_id(pmcp_server *srv)
{
  pmcp__cursor_key *key = pmcp__server_cursor_key(srv);
  unsigned char hash[PMCP__ARGS_HASH_LEN];
  if (!key || pmcp__args_hash("{}", 2, hash))
    return NULL;
  unsigned char rnd[16];
  if (pmcp__random_bytes(rnd, sizeof rnd))
    return NULL;
  pmcp_buf plain = PMCP_BUF_INIT, sealed = PMCP_BUF_INIT;
  int rc = pmcp__buf_puts(&plain, "{\"t\":\"");
  for (size_t i = 0; i < sizeof rnd && !rc; i++)
    rc = pmcp__buf_printf(&plain, "%02x", rnd[i]);
  if (!rc)
    rc = pmcp__buf_puts(&plain, "\"}");
  if (!rc)
    rc = pmcp__cursor_encode_key(key->key, key->len, "task", hash, 0, plain.ptr, plain.len,
                                 &sealed);
  char *id = rc ? NULL : strndup(sealed.ptr, sealed.len);
  pmcp_buf_dispose(&plain);
  pmcp_buf_dispose(&sealed);
  return id;
}

static int id_valid(pmcp_server *srv, const char *id)
{
  pmcp__cursor_key *key = pmcp__server_cursor_key(srv);
  unsigned char hash[PMCP__ARGS_HASH_LEN];
  if (!key || pmcp__args_hash("{}", 2, hash))
    return 0;
  pmcp_buf plain = PMCP_BUF_INIT;
  pmcp_cursor_status st;
  int rc = pmcp__cursor_decode_key(key->key, key->len, "task", hash, 0, id, strlen(id),
                                   &plain, &st);
  pmcp_buf_dispose(&plain);
  return rc == 0;
}

/* ---- running a round ---- */

/* Sends the next round of @p id's call to its internal session. */
static int run_round(pmcp_server *srv, const char *id)
{
  pmcp_buf m = PMCP_BUF_INIT;
  char *sess = NULL;
  pthread_mutex_lock(&srv->mu);
  pmcp__task *t = store_find_locked(srv, id);
  int rc = t ? 0 : PMCP_ENOTFOUND;
  if (!rc) {
    char *answers = cJSON_PrintUnformatted(t->answers);
    t->round++;
    t->running = 1;
    rc = pmcp__buf_printf(&m, "{\"jsonrpc\":\"2.0\",\"id\":%u,\"method\":\"tools/call\","
                              "\"params\":{\"name\":%s,\"arguments\":%s,"
                              "\"inputResponses\":%s,\"_meta\":{"
                              "\"io.modelcontextprotocol/protocolVersion\":\"%s\","
                              "\"io.modelcontextprotocol/clientCapabilities\":%s}}}",
                          t->round, t->tool, t->args ? t->args : "{}",
                          answers ? answers : "{}", PMCP__MODERN_VERSION, t->caps);
    cJSON_free(answers);
    sess = rc ? NULL : strdup(t->session);
  }
  pthread_mutex_unlock(&srv->mu);
  if (!rc && !sess)
    rc = PMCP_ENOMEM;
  if (!rc)
    rc = pmcp_server_handle(srv, sess, m.ptr, m.len);
  free(sess);
  pmcp_buf_dispose(&m);
  return rc;
}

static void announce(pmcp_server *srv, const char *id);

/* Writes @p id's task through to the task store (nothing without one).
 * 0; PMCP_ESTALE when the stored task became final meanwhile. A write
 * that fails otherwise (the store busy or down) leaves the task unsaved:
 * this process answers for it and the renewer writes it again, so a
 * finished call's result is not lost to a store's passing trouble. */
static int write_through(pmcp_server *srv, const char *id)
{
  if (!srv->task_store)
    return 0;
  pmcp_task_record rec;
  pthread_mutex_lock(&srv->mu);
  pmcp__task *t = store_find_locked(srv, id);
  int rc = t ? pmcp__task_to_record_locked(srv, t, &rec) : PMCP_ENOTFOUND;
  unsigned snap = t ? ++t->snaps : 0;
  if (t && !rc)
    t->unsaved = 1;
  pthread_mutex_unlock(&srv->mu);
  if (rc)
    return rc;
  rc = pmcp__tasks_put(srv, &rec, 0);
  pmcp_task_record_clear(&rec);
  pmcp__task_saved(srv, id, snap, rc);
  return rc;
}

/* The answer of a round, from the internal session (session.c). */
void pmcp__tasks_capture(pmcp_server *srv, pmcp__session *s, const char *data, size_t len)
{
  cJSON *msg = cJSON_ParseWithLength(data, len);
  cJSON *result = cJSON_GetObjectItemCaseSensitive(msg, "result");
  cJSON *error = cJSON_GetObjectItemCaseSensitive(msg, "error");
  pthread_mutex_lock(&srv->mu);
  pmcp__task *t = store_find_session_locked(srv, s->id);
  char *changed = NULL;
  if (t && (result || error))
    t->running = 0;
  if (t && t->status < T_COMPLETED && (result || error)) {
    changed = strdup(t->id);
    /* unsaved from this moment: a tasks/get before the write below must
     * answer with this end, not adopt the store's older working copy
     * (which nothing would renew, so its lease would run out) */
    t->unsaved = srv->task_store != NULL;
    cJSON *rt = cJSON_GetObjectItemCaseSensitive(result, "resultType");
    if (result && cJSON_IsString(rt) && strcmp(rt->valuestring, "input_required") == 0) {
      cJSON_Delete(t->asked);
      t->asked = cJSON_DetachItemFromObjectCaseSensitive(result, "inputRequests");
      t->status = t->asked ? T_INPUT : T_FAILED;
      if (!t->asked) {
        free(t->outcome);
        t->outcome = strdup("{\"code\":-32603,\"message\":\"Internal error: the call "
                            "asked for input without saying which\"}");
      }
    } else {
      free(t->outcome);
      t->outcome = cJSON_PrintUnformatted(error ? error : result);
      t->status = error ? T_FAILED : T_COMPLETED;
    }
    t->updated_ms = now_ms();
  }
  pthread_mutex_unlock(&srv->mu);
  cJSON_Delete(msg);
  /* Stored before it is announced; a task cancelled on another replica
   * meanwhile stays cancelled (a final status never changes). */
  if (changed && write_through(srv, changed) == PMCP_ESTALE) {
    free(changed);
    changed = NULL;
  }
  if (changed)
    announce(srv, changed);
  free(changed);
}

/* {"resultType":"task","taskId":...,"status":...,...} or, with @p detail,
 * the DetailedTask of tasks/get. Caller holds srv->mu. */
int pmcp__task_json(const pmcp__task *t, int detail, pmcp_buf *b)
{
  int rc = pmcp__buf_puts(b, detail ? "{\"taskId\":" : "{\"resultType\":\"task\",\"taskId\":");
  if (!rc)
    rc = pmcp__buf_json_string(b, t->id, strlen(t->id));
  if (!rc)
    rc = pmcp__buf_printf(b, ",\"status\":\"%s\",\"createdAt\":", status_name(t->status));
  if (!rc)
    rc = iso_time(b, t->created_ms);
  if (!rc)
    rc = pmcp__buf_puts(b, ",\"lastUpdatedAt\":");
  if (!rc)
    rc = iso_time(b, t->updated_ms);
  if (!rc)
    rc = pmcp__buf_printf(b, ",\"ttlMs\":%d,\"pollIntervalMs\":%d", TASK_TTL_MS,
                          TASK_POLL_MS);
  if (!rc && detail && t->status == T_INPUT && t->asked) {
    char *a = cJSON_PrintUnformatted(t->asked);
    rc = a ? pmcp__buf_printf(b, ",\"inputRequests\":%s", a) : PMCP_ENOMEM;
    cJSON_free(a);
  }
  if (!rc && detail && t->outcome && (t->status == T_COMPLETED || t->status == T_FAILED))
    rc = pmcp__buf_printf(b, ",\"%s\":%s", t->status == T_COMPLETED ? "result" : "error",
                          t->outcome);
  if (!rc)
    rc = pmcp__buf_putc(b, '}');
  return rc;
}

int pmcp__task_held_here_locked(pmcp_server *srv, const char *id)
{
  pmcp__task *t = store_find_locked(srv, id);
  return t && (t->running || t->unsaved);
}

void pmcp__task_saved(pmcp_server *srv, const char *id, unsigned snap, int rc)
{
  pthread_mutex_lock(&srv->mu);
  pmcp__task *t = store_find_locked(srv, id);
  /* a later snapshot's write decides for itself */
  if (t && t->snaps == snap && (rc == 0 || rc == PMCP_ESTALE))
    t->unsaved = 0;
  pthread_mutex_unlock(&srv->mu);
}

/* notifications/tasks to the caller's listeners of the task, after a
 * change of status (the task as tasks/get shows it). */
static void announce(pmcp_server *srv, const char *id)
{
  pmcp_buf b = PMCP_BUF_INIT;
  pthread_mutex_lock(&srv->mu);
  pmcp__task *t = store_find_locked(srv, id);
  const void *ud = t ? t->ud : NULL;
  int rc = t ? pmcp__task_json(t, 1, &b) : PMCP_ENOTFOUND;
  if (t) /* said here: the watcher of tasks elsewhere keeps quiet on it */
    pmcp__tasks_seen_locked(srv, id, (int)t->status, t->updated_ms);
  pthread_mutex_unlock(&srv->mu);
  if (!rc && b.len >= 2) {
    b.ptr[b.len - 1] = '\0'; /* the members, without the braces */
    pmcp__listen_notify_task(srv, id, ud, b.ptr + 1);
  }
  pmcp_buf_dispose(&b);
}

/* Gives @p t (status already set) an internal session as the caller of
 * @p req and adds it to the tasks this process knows, replacing an older
 * copy of the same task. Caller holds srv->mu. */
static int adopt_locked(pmcp_server *srv, pmcp__req *req, pmcp__task *t)
{
  size_t n = strlen(TASK_SESSION_PREFIX) + strlen(t->id) + 1;
  if (!t->session && (t->session = malloc(n)) == NULL)
    return PMCP_ENOMEM;
  snprintf(t->session, n, TASK_SESSION_PREFIX "%s", t->id);
  t->ud = req->sess->ud;
  /* The internal session, as the caller: its user data decides what the
   * call may see. */
  pmcp__session *s = pmcp__session_get_locked(srv, t->session, 1, PMCP_SESSION_STATELESS,
                                              t->ud);
  if (!s)
    return PMCP_ENOMEM;
  pmcp__session_unref_locked(srv, s);
  for (pmcp__task **pp = &srv->tasks; *pp; pp = &(*pp)->next) {
    if (strcmp((*pp)->id, t->id) == 0) {
      pmcp__task *old = *pp;
      *pp = old->next;
      /* Same id, same internal session: keep the session, free the rest. */
      free(old->session);
      old->session = NULL;
      old->next = NULL;
      task_free(old);
      break;
    }
  }
  store_add_locked(srv, t);
  return 0;
}

int pmcp__tasks_create(pmcp__req *req, cJSON *params)
{
  pmcp_server *srv = req->srv;
  pmcp__task *t = calloc(1, sizeof *t);
  if (!t)
    return PMCP_ENOMEM;
  t->id = seal_id(srv);
  t->tool = cJSON_PrintUnformatted(pmcp__jget(params, "name"));
  cJSON *args = pmcp__jget(params, "arguments");
  t->args = args ? cJSON_PrintUnformatted(args) : NULL;
  t->caps = cJSON_PrintUnformatted(req->client_caps);
  cJSON *given = pmcp__jget(params, "inputResponses");
  t->answers = cJSON_IsObject(given) ? cJSON_Duplicate(given, 1) : cJSON_CreateObject();
  t->owner = srv->task_store ? pmcp__tasks_owner(srv, req->sess->ud) : NULL;
  if (!t->id || !t->tool || !t->caps || !t->answers || (args && !t->args) ||
      (srv->task_store && !t->owner)) {
    task_free(t);
    return PMCP_ENOMEM;
  }
  t->created_ms = t->updated_ms = now_ms();
  t->status = T_WORKING;
  pmcp_buf b = PMCP_BUF_INIT;
  pmcp_task_record rec;
  memset(&rec, 0, sizeof rec);
  pthread_mutex_lock(&srv->mu);
  int rc = srv->task_store ? pmcp__task_to_record_locked(srv, t, &rec) : 0;
  pthread_mutex_unlock(&srv->mu);
  /* Stored before the answer goes out, so any replica finds it. */
  if (!rc && srv->task_store) {
    pmcp__tasks_maybe_sweep(srv);
    rc = pmcp__tasks_put(srv, &rec, 1);
    if (!rc)
      rc = pmcp__tasks_renewer_start(srv);
    if (rc) {
      pmcp_task_record_clear(&rec);
      task_free(t);
      req->http_status = 500;
      pmcp__req_error(req, -32603, "Internal error: the task could not be stored; try "
                                   "again", NULL);
      return 0;
    }
  }
  pmcp_task_record_clear(&rec);
  pthread_mutex_lock(&srv->mu);
  pmcp__task *gone = store_expire_locked(srv, t->created_ms);
  rc = adopt_locked(srv, req, t);
  if (!rc)
    rc = pmcp__task_json(t, 0, &b);
  pthread_mutex_unlock(&srv->mu);
  tasks_bury(srv, gone);
  if (rc) {
    /* Linked by adopt_locked when only the answer failed: unlink it. */
    pthread_mutex_lock(&srv->mu);
    for (pmcp__task **pp = &srv->tasks; *pp; pp = &(*pp)->next)
      if (*pp == t) {
        *pp = t->next;
        break;
      }
    pthread_mutex_unlock(&srv->mu);
    task_free(t);
    pmcp_buf_dispose(&b);
    return rc;
  }
  char *id = strdup(t->id);
  pmcp__req_result(req, b.ptr, b.len);
  pmcp_buf_dispose(&b);
  if (id)
    run_round(srv, id);
  free(id);
  return 0;
}

/* ---- tasks/get, tasks/update, tasks/cancel ---- */

static void unknown_task(pmcp__req *req, const cJSON *id)
{
  req->http_status = 400;
  pmcp__req_error(req, -32602,
                  cJSON_IsString(id) ? "Invalid params: unknown taskId (expired, or not "
                                       "one this server issued)"
                                     : "Invalid params: a string \"taskId\" is required",
                  NULL);
}

/* The task @p params names, with srv->mu held; NULL (answered) otherwise.
 * With a task store the task is read from it (the store holds the truth:
 * another replica may have changed it) and replaces this process's copy,
 * as the caller of @p req. */
static pmcp__task *lookup_locked(pmcp__req *req, cJSON *params)
{
  pmcp_server *srv = req->srv;
  cJSON *id = pmcp__jget(params, "taskId");
  pmcp__task *t = NULL;
  int valid = cJSON_IsString(id) && id_valid(srv, id->valuestring);
  int unavailable = 0;
  if (valid && srv->task_store) {
    pmcp_task_record rec;
    char *owner = pmcp__tasks_owner(srv, req->sess->ud);
    pmcp__task *fresh = NULL;
    int lrc = owner ? pmcp__tasks_load(srv, id->valuestring, &rec) : PMCP_ENOMEM;
    unavailable = lrc != 0 && lrc != PMCP_ENOTFOUND;
    if (lrc == 0) {
      /* another caller's task is not there for this one */
      if (rec.owner && strcmp(rec.owner, owner) == 0)
        fresh = pmcp__task_from_record(&rec);
      pmcp_task_record_clear(&rec);
    }
    free(owner);
    pthread_mutex_lock(&srv->mu);
    pmcp__task *mine = fresh ? store_find_locked(srv, fresh->id) : NULL;
    if (mine && (mine->running || mine->unsaved)) {
      /* Running here, or ended here and not stored yet: this copy is the
       * newer, unless the task was ended elsewhere (cancelled on another
       * replica); then it says so, and the renewer stops the call at its
       * next round. */
      if (fresh->status >= T_COMPLETED) {
        mine->unsaved = 0;
        mine->status = fresh->status;
        mine->updated_ms = fresh->updated_ms;
        free(mine->outcome);
        mine->outcome = fresh->outcome;
        fresh->outcome = NULL;
      }
      t = mine;
      task_free(fresh);
    } else if (fresh) {
      if (mine)
        fresh->round = mine->round;
      if (adopt_locked(srv, req, fresh) == 0)
        t = fresh;
      else
        task_free(fresh);
    }
  } else {
    pthread_mutex_lock(&srv->mu);
    if (valid) {
      t = store_find_locked(srv, id->valuestring);
      if (t && t->ud != req->sess->ud)
        t = NULL; /* another caller's task is not there for this one */
    }
  }
  if (!t) {
    pthread_mutex_unlock(&srv->mu);
    if (unavailable) {
      /* Not "unknown": the task may well exist, the store could not say. */
      req->http_status = 503;
      pmcp__req_error(req, -32603, "Internal error: the task store could not be read; "
                                   "try again", "{\"retryable\":true}");
    } else {
      unknown_task(req, id);
    }
  }
  return t;
}

static int gate(pmcp__req *req, const char *method)
{
  if (pmcp__tasks_declared(req))
    return 0;
  missing_ext(req, method);
  return -1;
}

void pmcp__method_tasks_get(pmcp__req *req, cJSON *params)
{
  pmcp_server *srv = req->srv;
  if (gate(req, "tasks/get"))
    return;
  pmcp__task *t = lookup_locked(req, params);
  if (!t)
    return;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__task_json(t, 1, &b);
  pthread_mutex_unlock(&srv->mu);
  if (rc)
    pmcp__req_error(req, -32603, "Internal error: out of memory", NULL);
  else
    pmcp__req_result(req, b.ptr, b.len);
  pmcp_buf_dispose(&b);
}

void pmcp__method_tasks_update(pmcp__req *req, cJSON *params)
{
  pmcp_server *srv = req->srv;
  if (gate(req, "tasks/update"))
    return;
  cJSON *resp = pmcp__jget(params, "inputResponses");
  if (!cJSON_IsObject(resp)) {
    req->http_status = 400;
    pmcp__req_error(req, -32602, "Invalid params: tasks/update needs the object "
                                 "\"inputResponses\"", NULL);
    return;
  }
  pmcp__task *t = lookup_locked(req, params);
  if (!t)
    return;
  /* Answers to what is pending are kept; others are ignored. */
  int rerun = 0, changed = 0;
  if (t->status == T_INPUT && t->asked) {
    for (cJSON *r = resp->child; r; r = r->next) {
      if (!cJSON_IsObject(r) || !cJSON_GetObjectItemCaseSensitive(t->asked, r->string))
        continue;
      cJSON_DeleteItemFromObjectCaseSensitive(t->answers, r->string);
      cJSON_AddItemToObject(t->answers, r->string, cJSON_Duplicate(r, 1));
      cJSON_DeleteItemFromObjectCaseSensitive(t->asked, r->string);
    }
    if (!t->asked->child) {
      cJSON_Delete(t->asked);
      t->asked = NULL;
      t->status = T_WORKING;
      rerun = 1;
    }
    t->updated_ms = now_ms();
    t->unsaved = srv->task_store != NULL; /* this copy is the newer until written */
    changed = 1;
  }
  char *id = changed ? strdup(t->id) : NULL;
  pthread_mutex_unlock(&srv->mu);
  /* With a task store this process runs the next round (whichever
   * replica parked it): the record names it as the runner. */
  if (id && write_through(srv, id) == PMCP_ESTALE)
    rerun = 0; /* it was cancelled meanwhile */
  else if (rerun && pmcp__tasks_renewer_start(srv))
    rerun = 0;
  pmcp__req_result(req, "{}", 2);
  if (id && rerun) {
    announce(srv, id);
    run_round(srv, id);
  }
  free(id);
}

/* Stops the call of @p id if it runs here (its next answer is dropped). */
static void stop_call(pmcp_server *srv, const char *id)
{
  pthread_mutex_lock(&srv->mu);
  pmcp__task *t = store_find_locked(srv, id);
  unsigned round = t ? t->round : 0;
  char *sess = t && t->session ? strdup(t->session) : NULL;
  pthread_mutex_unlock(&srv->mu);
  if (sess) {
    char note[160];
    int n = snprintf(note, sizeof note, "{\"jsonrpc\":\"2.0\",\"method\":"
                     "\"notifications/cancelled\",\"params\":{\"requestId\":%u}}", round);
    pmcp_server_handle(srv, sess, note, (size_t)n);
  }
  free(sess);
}

void pmcp__tasks_stop_local(pmcp_server *srv, const char *id, const pmcp_task_record *rec)
{
  pmcp__t_status st;
  if (!rec->status || pmcp__task_status_parse(rec->status, &st) || st < T_COMPLETED)
    return;
  pthread_mutex_lock(&srv->mu);
  pmcp__task *t = store_find_locked(srv, id);
  int was_running = t && t->running;
  if (was_running) {
    t->running = 0;
    t->status = st;
    t->updated_ms = rec->updated_ms;
  }
  pthread_mutex_unlock(&srv->mu);
  if (was_running) {
    stop_call(srv, id);
    announce(srv, id);
  }
}

void pmcp__method_tasks_cancel(pmcp__req *req, cJSON *params)
{
  pmcp_server *srv = req->srv;
  if (gate(req, "tasks/cancel"))
    return;
  pmcp__task *t = lookup_locked(req, params);
  if (!t)
    return;
  int stop = t->status < T_COMPLETED;
  char *id = stop ? strdup(t->id) : NULL;
  if (stop) {
    t->status = T_CANCELLED;
    t->updated_ms = now_ms();
    t->unsaved = srv->task_store != NULL; /* this copy is the newer until written */
  }
  pthread_mutex_unlock(&srv->mu);
  /* Stored first: a runner on another replica sees it at its next lease
   * renewal and stops there. */
  if (id && write_through(srv, id) == PMCP_ESTALE) {
    free(id);
    id = NULL;
  }
  if (id)
    stop_call(srv, id);
  pmcp__req_result(req, "{}", 2);
  if (id)
    announce(srv, id);
  free(id);
}
