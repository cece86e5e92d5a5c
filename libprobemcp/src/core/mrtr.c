/* SPDX-License-Identifier: MIT */
/* Input from the client, one API for both eras (pmcp_call_input): a
 * server-to-client request in a 2025-11-25 session, a multi-round-trip
 * request (input_required with inputRequests and a sealed requestState)
 * for a 2026-07-28 request.
 *
 * The handler runs again on every round and asks for the same keys; the
 * answers come from the request's inputResponses or from the requestState
 * of the round before, which carries the answers used so far. The state
 * is sealed with the server's cursor key (HMAC, cursor.c) and bound to the
 * method, the tool, prompt or resource, its arguments and the caller, and
 * it expires after MRTR_TTL_S. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/call.h"
#include "core/jdoc.h"
#include "util/buf.h"
#include "util/json.h"

#define MRTR_TTL_S 600

void pmcp__mrtr_dispose(pmcp_call *call)
{
  pmcp_buf_dispose(&call->inputs);
  pmcp_buf_dispose(&call->kept);
  cJSON_Delete(call->state);
  call->state = NULL;
}

/* The capability a client must have declared for input @p method. */
static const char *needed_cap(const char *method)
{
  if (strcmp(method, "sampling/createMessage") == 0)
    return "sampling";
  if (strcmp(method, "elicitation/create") == 0)
    return "elicitation";
  if (strcmp(method, "roots/list") == 0)
    return "roots";
  return NULL;
}

static const char *call_method(const pmcp_call *call)
{
  switch (call->kind) {
  case PMCP__CALL_TOOL: return "tools/call";
  case PMCP__CALL_PROMPT: return "prompts/get";
  case PMCP__CALL_RESOURCE: return "resources/read";
  default: return NULL;
  }
}

/* What the state is bound to: method, target and caller; the arguments
 * go in as the codec's argument hash. */
static int binding(const pmcp_call *call, char *out, size_t size,
                   unsigned char hash[PMCP__ARGS_HASH_LEN])
{
  const char *target = call->kind == PMCP__CALL_RESOURCE ? call->uri : call->name;
  int n = snprintf(out, size, "mrtr\n%s\n%s\n%p", call_method(call),
                   target ? target : "", call->req->sess->ud);
  if (n < 0 || (size_t)n >= size)
    return PMCP_EINVAL;
  char *args = call->args ? cJSON_PrintUnformatted(call->args) : NULL;
  int rc = pmcp__args_hash(args ? args : "{}", args ? strlen(args) : 2, hash);
  cJSON_free(args);
  return rc;
}

/* Verifies the request's requestState once; absent is fine. */
static int state_load(pmcp_call *call)
{
  if (call->state_loaded)
    return call->state_loaded > 0 ? 0 : PMCP_EINVAL;
  call->state_loaded = 1;
  cJSON *st = pmcp__jget(call->params, "requestState");
  if (!st)
    return 0;
  call->state_loaded = -1;
  call->state_why = "Invalid params: requestState is not one this server issued for "
                    "this request (tampered, or for another call or caller)";
  pmcp__cursor_key *key = pmcp__server_cursor_key(call->srv);
  char bind[1024];
  unsigned char hash[PMCP__ARGS_HASH_LEN];
  if (!cJSON_IsString(st) || !key || binding(call, bind, sizeof bind, hash))
    return PMCP_EINVAL;
  pmcp_buf plain = PMCP_BUF_INIT;
  pmcp_cursor_status status;
  int rc = pmcp__cursor_decode_key(key->key, key->len, bind, hash, 0, st->valuestring,
                                   strlen(st->valuestring), &plain, &status);
  cJSON *root = rc ? NULL : cJSON_ParseWithLength(plain.ptr ? plain.ptr : "", plain.len);
  pmcp_buf_dispose(&plain);
  cJSON *exp = cJSON_GetObjectItemCaseSensitive(root, "e");
  cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "r");
  if (!cJSON_IsNumber(exp) || !cJSON_IsObject(r)) {
    cJSON_Delete(root);
    return PMCP_EINVAL;
  }
  if (exp->valuedouble < (double)time(NULL)) {
    call->state_why = "Invalid params: requestState has expired; call again without it";
    cJSON_Delete(root);
    return PMCP_EINVAL;
  }
  call->state = root;
  call->state_loaded = 1;
  return 0;
}

static int add_member(pmcp_buf *b, size_t *n, const char *key, const char *json)
{
  int rc = *n ? pmcp__buf_putc(b, ',') : 0;
  if (!rc)
    rc = pmcp__buf_json_string(b, key, strlen(key));
  if (!rc)
    rc = pmcp__buf_putc(b, ':');
  if (!rc)
    rc = pmcp__buf_puts(b, json);
  if (!rc)
    (*n)++;
  return rc;
}

int pmcp_call_input(pmcp_call *call, const char *key, const char *method,
                    const char *params_json, int timeout_ms, pmcp_buf *out)
{
  if (!call || !call->req || !key || !key[0] || !method || !out)
    return PMCP_EINVAL;
  if (params_json && !pmcp__json_valid(params_json, strlen(params_json)))
    return pmcp__err(call->srv, PMCP_EINVAL, "input params are not JSON");
  pmcp__req *req = call->req;
  const char *cap = needed_cap(method);
  pthread_mutex_lock(&call->srv->mu);
  int declared = !cap || pmcp__client_has_locked(req, cap);
  pthread_mutex_unlock(&call->srv->mu);
  if (!declared) {
    /* Never ask for what the client cannot give. */
    if (req->modern)
      call->missing_cap = cap;
    return pmcp__err(call->srv, PMCP_EUNSUPPORTED,
                     "the client did not declare the %s capability", cap);
  }
  if (!req->modern)
    return pmcp_call_request(call, method, params_json, timeout_ms, out);
  if (!call_method(call))
    return pmcp__err(call->srv, PMCP_EMISUSE,
                     "input is only asked for in tools/call, prompts/get and resources/read");
  if (state_load(call))
    return PMCP_EINVAL;
  /* This round's answers first, then those the state carried. */
  cJSON *ans = pmcp__jget(pmcp__jget(call->params, "inputResponses"), key);
  if (!cJSON_IsObject(ans))
    ans = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(call->state, "r"), key);
  if (cJSON_IsObject(ans)) {
    char *text = cJSON_PrintUnformatted(ans);
    int rc = text ? pmcp__buf_puts(out, text) : PMCP_ENOMEM;
    if (!rc)
      rc = add_member(&call->kept, &call->n_kept, key, text);
    cJSON_free(text);
    return rc;
  }
  /* Asked for again when missing; the handler returns PMCP_EINPUT. */
  pmcp_buf one = PMCP_BUF_INIT;
  int rc = pmcp__buf_puts(&one, "{\"method\":");
  if (!rc)
    rc = pmcp__buf_json_string(&one, method, strlen(method));
  if (!rc) {
    rc = pmcp__buf_puts(&one, ",\"params\":");
    if (!rc)
      rc = params_json ? pmcp__json_minify(&one, params_json, strlen(params_json))
                       : pmcp__buf_puts(&one, "{}");
  }
  if (!rc)
    rc = pmcp__buf_putc(&one, '}');
  if (!rc)
    rc = add_member(&call->inputs, &call->n_inputs, key, one.ptr);
  pmcp_buf_dispose(&one);
  return rc ? rc : PMCP_EINPUT;
}

/* {"resultType":"input_required","inputRequests":{...},"requestState":"..."} */
static int input_required(pmcp_call *call, pmcp_buf *b)
{
  pmcp__cursor_key *key = pmcp__server_cursor_key(call->srv);
  char bind[1024];
  unsigned char hash[PMCP__ARGS_HASH_LEN];
  if (!key)
    return PMCP_EINTERNAL;
  int rc = binding(call, bind, sizeof bind, hash);
  pmcp_buf plain = PMCP_BUF_INIT, sealed = PMCP_BUF_INIT;
  if (!rc)
    rc = pmcp__buf_printf(&plain, "{\"e\":%lld,\"r\":{",
                          (long long)time(NULL) + MRTR_TTL_S);
  if (!rc && call->kept.len)
    rc = pmcp__buf_append(&plain, call->kept.ptr, call->kept.len);
  if (!rc)
    rc = pmcp__buf_puts(&plain, "}}");
  if (!rc)
    rc = pmcp__cursor_encode_key(key->key, key->len, bind, hash, 0, plain.ptr,
                                 plain.len, &sealed);
  if (!rc)
    rc = pmcp__buf_puts(b, "{\"resultType\":\"input_required\",\"inputRequests\":{");
  if (!rc)
    rc = pmcp__buf_append(b, call->inputs.ptr, call->inputs.len);
  if (!rc)
    rc = pmcp__buf_puts(b, "},\"requestState\":");
  if (!rc)
    rc = pmcp__buf_json_string(b, sealed.ptr, sealed.len);
  if (!rc)
    rc = pmcp__buf_putc(b, '}');
  pmcp_buf_dispose(&plain);
  pmcp_buf_dispose(&sealed);
  return rc;
}

int pmcp__mrtr_finish(pmcp_call *call)
{
  pmcp__req *req = call->req;
  if (!req->modern || !call_method(call))
    return 0;
  if (call->missing_cap) {
    char data[128];
    snprintf(data, sizeof data, "{\"requiredCapabilities\":{\"%s\":{}}}",
             call->missing_cap);
    req->http_status = 400;
    char msg[160];
    snprintf(msg, sizeof msg, "Missing required client capability: %s",
             call->missing_cap);
    pmcp__req_error(req, -32021, msg, data);
    return 1;
  }
  if (state_load(call)) {
    req->http_status = 400;
    pmcp__req_error(req, -32602, call->state_why, NULL);
    return 1;
  }
  if (!call->n_inputs)
    return 0;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = input_required(call, &b);
  if (rc)
    pmcp__req_errorf(req, -32603, "Internal error: sealing requestState: %s",
                     pmcp_strerror(rc));
  else
    pmcp__req_result(req, b.ptr, b.len);
  pmcp_buf_dispose(&b);
  return 1;
}
