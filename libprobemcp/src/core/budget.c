/* SPDX-License-Identifier: MIT */
/* The engine's side of the budget contract (budget.h): after the handler
 * of a PMCP_TOOL_BUDGETED tool returns, its result must be one text item
 * (and at most one PNG image after it, priced from its header) within
 * token_budget and the byte ceiling. Error results are normalised
 * to one JSON object with "message" and shortened to fit; anything else
 * over the limits is a tool bug and becomes an error saying so, never an
 * over-budget answer. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/call.h"
#include "core/page_int.h"
#include "util/buf.h"

/* The budget of a call whose arguments did not validate: the one asked
 * for if it is usable, else the default. */
static int budget_of(const pmcp_call *call)
{
  static_assert(PMCP_BUDGET_MIN > 0 && PMCP_BUDGET_MIN <= PMCP_BUDGET_DEFAULT &&
                PMCP_BUDGET_DEFAULT <= PMCP_BUDGET_MAX, "budget bounds");
  if (call->token_budget >= PMCP_BUDGET_MIN && call->token_budget <= PMCP_BUDGET_MAX)
    return call->token_budget;
  const cJSON *b = call->args ? cJSON_GetObjectItemCaseSensitive(call->args, "token_budget")
                              : NULL;
  if (cJSON_IsNumber(b) && b->valuedouble >= PMCP_BUDGET_MIN &&
      b->valuedouble <= PMCP_BUDGET_MAX && b->valuedouble == (double)(int)b->valuedouble)
    return (int)b->valuedouble;
  return PMCP_BUDGET_DEFAULT;
}

static int is_object(const char *text, size_t len)
{
  cJSON *v = cJSON_ParseWithLength(text, len);
  int ok = cJSON_IsObject(v);
  cJSON_Delete(v);
  return ok;
}

/* Replaces the result with one error object. */
static int replace(pmcp_call *call, int budget, const char *msg, const char *members)
{
  pmcp_buf t = PMCP_BUF_INIT;
  int rc = pmcp__budget_error_text(budget, msg, strlen(msg), members,
                                   members ? strlen(members) : 0, &t, NULL);
  if (!rc) {
    pmcp__call_clear_items(call);
    free(call->structured);
    call->structured = NULL;
    call->structured_len = 0;
    rc = pmcp__call_push_text(call, t.ptr, t.len);
    call->is_error = 1;
  }
  pmcp_buf_dispose(&t);
  return rc;
}

int pmcp__budget_finalize(pmcp_call *call)
{
  int budget = budget_of(call);
  size_t cap = (size_t)budget * PMCP_BUDGET_BYTES_PER_TOKEN;
  char msg[512];
  size_t n_text = 0, image_tokens = 0;
  for (size_t i = 0; i < call->n_items; i++)
    n_text += call->items[i].is_text;
  /* one image may follow the text on a success; it costs its pixels */
  int image_ok = call->n_items == 2 && n_text == 1 && call->items[0].is_text &&
                 !call->is_error &&
                 pmcp__image_item_cost(call->items[1].json, call->items[1].json_len,
                                       &image_tokens) == 0;
  if ((call->n_items != 1 || n_text != 1) && !image_ok) {
    snprintf(msg, sizeof msg,
             "Internal error: tool %s returned %zu content items (%zu text); "
             "a budgeted tool answers with exactly one text item (and at most "
             "one PNG image after it). This is a bug in the tool.",
             call->name, call->n_items, n_text);
    char shape[64];
    snprintf(shape, sizeof shape, "\"error\":\"%s\"",
             pmcp_tool_error_name(PMCP_TERR_RESULT_SHAPE));
    return replace(call, budget, msg, shape);
  }
  const char *text = call->items[0].text;
  size_t len = call->items[0].len;
  if (call->is_error && !is_object(text, len)) {
    /* A plain-text error message becomes {"message": ...}, fitted. */
    char *copy = malloc(len + 1);
    if (!copy)
      return PMCP_ENOMEM;
    memcpy(copy, text, len);
    copy[len] = '\0';
    int rc = replace(call, budget, copy, NULL);
    free(copy);
    return rc;
  }
  size_t tokens = call->items[0].tokens;
  int rc = call->items[0].counted ? 0 : pmcp_tokens_count(text, len, &tokens);
  if (rc)
    return rc;
  if (tokens + image_tokens <= (size_t)budget && len <= cap)
    return 0;
  if (call->is_error) {
    /* An error object over the budget: keep its message, shortened. */
    cJSON *v = cJSON_ParseWithLength(text, len);
    cJSON *m = cJSON_GetObjectItemCaseSensitive(v, "message");
    const char *mtext = cJSON_IsString(m) ? m->valuestring : "The tool failed.";
    /* the code stays: it is what a client branches on */
    cJSON *code = cJSON_GetObjectItemCaseSensitive(v, "error");
    pmcp_buf mem = PMCP_BUF_INIT, t = PMCP_BUF_INIT;
    rc = 0;
    if (cJSON_IsString(code))
      rc = pmcp__buf_puts(&mem, "\"error\":");
    if (!rc && cJSON_IsString(code))
      rc = pmcp__buf_json_string(&mem, code->valuestring, strlen(code->valuestring));
    if (!rc)
      rc = pmcp__budget_error_text(budget, mtext, strlen(mtext), mem.ptr, mem.len, &t, NULL);
    pmcp_buf_dispose(&mem);
    cJSON_Delete(v);
    if (!rc) {
      pmcp__call_clear_items(call);
      free(call->structured);
      call->structured = NULL;
      call->structured_len = 0;
      rc = pmcp__call_push_text(call, t.ptr, t.len);
    }
    pmcp_buf_dispose(&t);
    return rc;
  }
  snprintf(msg, sizeof msg,
           "Internal error: tool %s produced an answer of %zu tokens (%zu of "
           "them an image) and %zu bytes, over token_budget %d (at most %zu "
           "bytes). This is a bug in the tool; a larger token_budget may work "
           "around it.", call->name, tokens + image_tokens, image_tokens, len,
           budget, cap);
  char members[128];
  snprintf(members, sizeof members,
           "\"error\":\"%s\",\"tokens\":%zu,\"token_budget\":%d",
           pmcp_tool_error_name(PMCP_TERR_BUDGET_EXCEEDED), tokens + image_tokens, budget);
  return replace(call, budget, msg, members);
}
