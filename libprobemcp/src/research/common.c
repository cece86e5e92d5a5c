/* SPDX-License-Identifier: MIT */
/* Shared plumbing of the research tools (see research.h). */
#include "research/research.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cursor_int.h"
#include "core/page_int.h" /* PMCP__POS_PLAIN */
#include "probemcp/json.h"
#include "store/store_int.h" /* pmcp__store_get_tree */
#include "util/buf.h"
#include "util/json.h"

void *pmcp__research_retain(pmcp__research *rs)
{
  rs->refs++;
  return rs;
}

void pmcp__research_release(void *ud)
{
  pmcp__research *rs = ud;
  if (!rs || --rs->refs > 0)
    return;
  free(rs->tenant_name);
  free(rs->embed_url);
  free(rs->embed_model);
  free(rs->embed_key);
  free(rs->papers_url);
  free(rs);
}

/* The store's messages name entities and arguments, never paths or SQL
 * (store.h); they are passed on, cut to a sane length. */
static int store_fail(pmcp__research *rs, int rc, char *err, size_t errlen)
{
  if (err && errlen) {
    const char *m = pmcp_store_errmsg(rs->store);
    if (!m || !*m)
      m = pmcp_strerror(rc);
    snprintf(err, errlen, "%s", m);
  }
  return rc;
}

static int parse_out(pmcp__research *rs, pmcp_buf *b, cJSON **out, char *err,
                     size_t errlen)
{
  *out = cJSON_ParseWithLength(b->ptr ? b->ptr : "", b->len);
  pmcp_buf_dispose(b);
  if (!*out) {
    if (err && errlen)
      snprintf(err, errlen, "the store returned a record that is not JSON");
    (void)rs;
    return PMCP_ECORRUPT;
  }
  return 0;
}

int pmcp__rs_get(pmcp__research *rs, const char *ref, cJSON **out, char *err,
                 size_t errlen)
{
  return pmcp__rs_get_card(rs, ref, 0, out, err, errlen);
}

int pmcp__rs_get_card(pmcp__research *rs, const char *ref, int card, cJSON **out, char *err,
                      size_t errlen)
{
  *out = NULL;
  /* the record as a tree: not written as text to be parsed back */
  pthread_mutex_lock(rs->lock);
  int rc = pmcp__store_get_tree(rs->store, rs->tenant, ref, card ? PMCP__GET_BRIEF : 0, out);
  if (rc)
    rc = store_fail(rs, rc, err, errlen);
  pthread_mutex_unlock(rs->lock);
  return rc;
}

int pmcp__rs_list(pmcp__research *rs, const pmcp_list_opts *o, cJSON **out,
                  char *err, size_t errlen)
{
  pmcp_buf b = PMCP_BUF_INIT;
  *out = NULL;
  pthread_mutex_lock(rs->lock);
  int rc = pmcp_store_list(rs->store, rs->tenant, o, &b);
  if (rc)
    rc = store_fail(rs, rc, err, errlen);
  pthread_mutex_unlock(rs->lock);
  if (rc) {
    pmcp_buf_dispose(&b);
    return rc;
  }
  return parse_out(rs, &b, out, err, errlen);
}

int pmcp__rs_list_text(pmcp__research *rs, const pmcp_list_opts *o, pmcp_buf *out,
                       char *err, size_t errlen)
{
  pmcp__buf_reset(out);
  pthread_mutex_lock(rs->lock);
  int rc = pmcp_store_list(rs->store, rs->tenant, o, out);
  if (rc)
    rc = store_fail(rs, rc, err, errlen);
  pthread_mutex_unlock(rs->lock);
  /* a host's backend may hand anything: the text is read by spans */
  if (!rc && (!out->ptr || !pmcp__json_valid(out->ptr, out->len))) {
    if (err && errlen)
      snprintf(err, errlen, "the store returned a record that is not JSON");
    rc = PMCP_ECORRUPT;
  }
  return rc;
}

int pmcp__rs_search(pmcp__research *rs, const char *query, const char *kinds,
                    const char *after, size_t limit, cJSON **out, char *err,
                    size_t errlen)
{
  pmcp_buf b = PMCP_BUF_INIT;
  *out = NULL;
  pthread_mutex_lock(rs->lock);
  int rc = pmcp_store_search(rs->store, rs->tenant, query, kinds, after, limit,
                             &b);
  if (rc)
    rc = store_fail(rs, rc, err, errlen);
  pthread_mutex_unlock(rs->lock);
  if (rc) {
    pmcp_buf_dispose(&b);
    return rc;
  }
  return parse_out(rs, &b, out, err, errlen);
}

char *pmcp__rs_filter(const char *key, const char *val)
{
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, 0) != 0)
    return NULL;
  pmcp_json_object_begin(j);
  pmcp_json_key(j, key);
  pmcp_json_string(j, val);
  pmcp_json_object_end(j);
  size_t n = 0;
  const char *t = pmcp_json_text(j, &n);
  char *out = t ? malloc(n + 1) : NULL;
  if (out) {
    memcpy(out, t, n);
    out[n] = '\0';
  }
  pmcp_json_free(j);
  return out;
}



int pmcp__rs_rec_deleted(pmcp__research *rs, const cJSON *rec)
{
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "deleted")))
    return 1;
  /* what hangs off a run or an experiment goes with it */
  static const char *const owners[] = {"on", "run", NULL};
  for (size_t i = 0; owners[i]; i++) {
    const char *o = pmcp__js(rec, owners[i]);
    if ((!strncmp(o, "run:", 4) || !strncmp(o, "experiment:", 11)) &&
        pmcp__rs_ref_deleted(rs, o))
      return 1;
  }
  return 0;
}

int pmcp__rs_ref_deleted(pmcp__research *rs, const char *ref)
{
  cJSON *rec = NULL;
  char err[200];
  if (!ref || !*ref || pmcp__rs_get(rs, ref, &rec, err, sizeof err))
    return 0;
  int d = pmcp__rs_rec_deleted(rs, rec);
  cJSON_Delete(rec);
  return d;
}

void pmcp__rs_prune_deleted(cJSON *rec, int keep)
{
  if (keep)
    return;
  for (cJSON *a = rec ? rec->child : NULL; a; a = a->next) {
    if (!cJSON_IsArray(a))
      continue;
    cJSON *it = a->child;
    while (it) {
      cJSON *nx = it->next;
      if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "deleted")))
        cJSON_Delete(cJSON_DetachItemViaPointer(a, it));
      it = nx;
    }
  }
}

int pmcp__rs_include_deleted(pmcp_call *call)
{
  int v = 0;
  if (pmcp_arg_has(call, "include_deleted") &&
      pmcp_arg_bool(call, "include_deleted", &v))
    v = 0;
  return v;
}

int pmcp__rs_version(pmcp__research *rs, uint64_t *out)
{
  pthread_mutex_lock(rs->lock);
  int rc = pmcp_store_version(rs->store, rs->tenant, out);
  pthread_mutex_unlock(rs->lock);
  return rc;
}

/* Sends the object text [@p txt, + @p len) as the result: one text item and
 * the same object as structuredContent. */
static int reply_text(pmcp_call *call, const char *txt, size_t len)
{
  int rc = pmcp_result_text(call, txt, len);
  if (!rc)
    rc = pmcp_result_structured(call, txt, len);
  return rc;
}

/* Sends the object @p j holds (freed) as the call's isError result. */
static int send_error(pmcp_call *call, pmcp_json *j)
{
  size_t len = 0;
  const char *txt = pmcp_json_object_end(j) == 0 ? pmcp_json_text(j, &len) : NULL;
  int rc = txt ? reply_text(call, txt, len) : PMCP_ENOMEM;
  pmcp_json_free(j);
  pmcp_result_set_error(call, 1);
  return rc;
}

/* An error object opened in a new writer with its "error" member. */
static pmcp_json *error_begin(pmcp_tool_error code)
{
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, 0))
    return NULL;
  pmcp_json_object_begin(j);
  pmcp_json_key(j, "error");
  pmcp_json_string(j, pmcp_tool_error_name(code));
  return j;
}

int pmcp__rs_fail(pmcp_call *call, pmcp_tool_error code, const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pmcp_json *j = error_begin(code);
  if (!j)
    return PMCP_ENOMEM;
  pmcp_json_key(j, "message");
  pmcp_json_string(j, msg);
  return send_error(call, j);
}

const char *pmcp__rs_error_member(pmcp_tool_error code)
{
  switch (code) {
#define X(name, value, str, meaning) case value: return "\"error\":\"" str "\"";
    PMCP_TOOL_ERROR_TABLE(X)
#undef X
  default: return pmcp__rs_error_member(PMCP_TERR_INTERNAL);
  }
}

int pmcp__rs_restart(pmcp_call *call, const char *reason, const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pmcp_json *j = error_begin(PMCP_TERR_INVALID_CURSOR);
  if (!j)
    return PMCP_ENOMEM;
  pmcp_json_key(j, "reason");
  pmcp_json_string(j, reason);
  pmcp_json_key(j, "restart");
  pmcp_json_bool(j, 1);
  pmcp_json_key(j, "message");
  pmcp_json_string(j, msg);
  return send_error(call, j);
}

const char *pmcp__js(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

double pmcp__jn(const cJSON *o, const char *key, double dflt)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

int pmcp__jb(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsTrue(v) || (cJSON_IsNumber(v) && v->valuedouble != 0);
}

const char *pmcp__rs_provenance_of(const char *via, const char *kind, const char *ref,
                                   const char *provider, int import_attr)
{
  if (strcmp(kind, "paper") == 0 || strncmp(ref, "paper:", 6) == 0)
    return PMCP__PROV_OPEN_WEB;
  if (strcmp(kind, "source") == 0 || provider[0])
    return PMCP__PROV_OUTSIDE;
  if (strncmp(via, "agent", 5) == 0 || strcmp(kind, "session") == 0)
    return PMCP__PROV_AGENT;
  if (strcmp(via, "import") == 0 || strncmp(via, "import:", 7) == 0 || import_attr)
    return PMCP__PROV_IMPORT;
  return PMCP__PROV_PERSON;
}

const char *pmcp__rs_provenance(const cJSON *rec)
{
  const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(rec, "attributes");
  return pmcp__rs_provenance_of(pmcp__js(rec, "via"), pmcp__js(rec, "kind"),
                                pmcp__js(rec, "ref"), pmcp__js(rec, "provider"),
                                cJSON_GetObjectItemCaseSensitive(attrs, "import") != NULL);
}

void pmcp__rs_iso(int64_t ms, char *out, size_t size)
{
  time_t sec = (time_t)(ms / 1000);
  struct tm tm;
  if (!gmtime_r(&sec, &tm)) {
    snprintf(out, size, "%lld", (long long)ms);
    return;
  }
  strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int pmcp__rs_time_key(const char *k)
{
  static const char *const names[] = {"created", "started", "ended",
                                      "updated", "time", "modified", NULL};
  for (size_t i = 0; names[i]; i++) {
    if (strcmp(k, names[i]) == 0)
      return 1;
  }
  size_t n = strlen(k);
  return n > 3 && strcmp(k + n - 3, "_ms") == 0;
}

const char *pmcp__rs_ref(const cJSON *rec, char *buf, size_t size)
{
  const char *r = pmcp__js(rec, "ref");
  if (*r)
    return r;
  const char *k = pmcp__js(rec, "kind"), *id = pmcp__js(rec, "id");
  if (*k && *id) {
    snprintf(buf, size, "%s:%s", k, id);
    return buf;
  }
  return "";
}

int pmcp__rs_cursor_encode(pmcp__research *rs, const char *tool,
                           const char *args_json, uint64_t version,
                           const char *state, pmcp_buf *out)
{
  unsigned char h[PMCP__ARGS_HASH_LEN];
  int rc = pmcp__args_hash(args_json, args_json ? strlen(args_json) : 0, h);
  if (rc)
    return rc;
  /* The position layout of the core page builder (a plain position: one
   * tag byte, then the state), so that research cursors and the pages'
   * cursors are one format, decoded by one function. */
  size_t n = strlen(state);
  char *p = malloc(n + 1);
  if (!p)
    return PMCP_ENOMEM;
  p[0] = PMCP__POS_PLAIN;
  memcpy(p + 1, state, n);
  rc = pmcp__cursor_encode_key(rs->cursor_key, rs->cursor_key_len, tool, h,
                               version, p, n + 1, out);
  free(p);
  return rc;
}

int pmcp__rs_cursor_decode(pmcp__research *rs, const char *tool,
                           const char *args_json, uint64_t version,
                           const char *cursor, size_t len, pmcp_buf *state,
                           int *status)
{
  unsigned char h[PMCP__ARGS_HASH_LEN];
  int rc = pmcp__args_hash(args_json, args_json ? strlen(args_json) : 0, h);
  if (rc)
    return rc;
  pmcp_cursor_status st = PMCP_CURSOR_OK;
  rc = pmcp__cursor_decode_key(rs->cursor_key, rs->cursor_key_len, tool, h,
                               version, cursor, len, state, &st);
  if (rc == 0) {
    if (state->len < 1 || (unsigned char)state->ptr[0] != PMCP__POS_PLAIN) {
      rc = PMCP_ECURSOR; /* authentic, but not a layout we write */
      st = PMCP_CURSOR_VERSION;
    } else {
      memmove(state->ptr, state->ptr + 1, state->len - 1);
      state->len--;
      state->ptr[state->len] = '\0';
    }
  }
  if (status)
    *status = (int)st;
  return rc;
}
