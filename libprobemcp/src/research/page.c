/* Budgeted pages for the research tools (see page.h).
 *
 * Filling is incremental: each item is serialized and counted once, and the
 * running sum (envelope + items + separators) decides what goes in. BPE
 * counts of a concatenation can differ slightly from the sum of its parts,
 * so the final text is counted exactly and, while it is over the budget or
 * the byte ceiling, the last item goes back and the cursor is re-minted. */
#include "research/page.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probemcp/cursor.h"
#include "probemcp/json.h"
#include "probemcp/tokens.h"

size_t pmcp__rs_tokens(const char *s, size_t len)
{
  size_t n = 0;
  /* Result text is valid UTF-8 (cJSON output of valid strings); on an
   * error count bytes, which over-counts and so stays safe. */
  if (pmcp_tokens_count(s, len, &n) != 0)
    return len;
  return n;
}

void pmcp__rs_round(cJSON *v)
{
  for (cJSON *c = v ? v->child : NULL; c; c = c->next) {
    if (cJSON_IsNumber(c)) {
      double d = c->valuedouble;
      if (!isfinite(d)) {
        const char *s = isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity";
        cJSON *str = cJSON_CreateString(s);
        if (str) {
          /* replace in place: keep key and position */
          cJSON_ReplaceItemViaPointer(v, c, str);
          c = str;
        }
        continue;
      }
      if (d == floor(d) && fabs(d) < 9007199254740992.0)
        continue; /* integers (ids, steps, counts, times) stay exact */
      char buf[PMCP_JSON_NUMBER_MAX];
      pmcp_json_format_number(d, 0, buf);
      cJSON_SetNumberValue(c, strtod(buf, NULL));
    } else if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
      pmcp__rs_round(c);
    }
  }
}

static int budget_of(pmcp_call *call)
{
  int b = pmcp_call_token_budget(call);
  return b > 0 ? b : 2000;
}

int pmcp__rs_budget(pmcp_call *call)
{
  return budget_of(call);
}

static int fits(const char *txt, size_t len, int budget, size_t *tokens)
{
  if (len > (size_t)budget * 8) {
    *tokens = len; /* at least one token per byte is impossible, but it is
                      over the ceiling either way */
    return 0;
  }
  *tokens = pmcp__rs_tokens(txt, len);
  return *tokens <= (size_t)budget;
}

int pmcp__rs_fits(pmcp_call *call, const cJSON *o, size_t reserve)
{
  char *t = cJSON_PrintUnformatted(o);
  if (!t)
    return 0;
  int budget = budget_of(call);
  size_t tok, len = strlen(t);
  int ok = (size_t)budget > reserve &&
           fits(t, len, budget - (int)reserve, &tok) &&
           len + reserve * 4 <= (size_t)budget * 8;
  cJSON_free(t);
  return ok;
}

static int send_text(pmcp_call *call, char *txt)
{
  size_t n = strlen(txt);
  int rc = pmcp_result_text(call, txt, n);
  if (!rc)
    rc = pmcp_result_structured(call, txt, n);
  cJSON_free(txt);
  return rc;
}

static int too_small(pmcp_call *call, size_t need, int budget)
{
  size_t min = need + 64;
  if (min < 512)
    min = 512;
  char msg[256];
  snprintf(msg, sizeof msg,
           "the smallest complete answer needs about %zu tokens but "
           "token_budget is %d; call again with token_budget >= %zu",
           need, budget, min);
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "error", "budget_too_small");
  cJSON_AddStringToObject(o, "message", msg);
  cJSON_AddNumberToObject(o, "min_token_budget", (double)min);
  char *txt = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  if (!txt)
    return PMCP_ENOMEM;
  int rc = send_text(call, txt);
  pmcp_result_set_error(call, 1);
  return rc;
}

int pmcp__rs_emit_one(pmcp_call *call, cJSON *root)
{
  pmcp__rs_round(root);
  char *txt = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (!txt)
    return PMCP_ENOMEM;
  int budget = budget_of(call);
  size_t tok;
  if (!fits(txt, strlen(txt), budget, &tok)) {
    cJSON_free(txt);
    return too_small(call, tok, budget);
  }
  return send_text(call, txt);
}

char *pmcp__rs_cursor_mint(pmcp_call *call, pmcp__research *rs,
                           const char *tool, const char *args_json,
                           const cJSON *state)
{
  uint64_t ver = 0;
  if (pmcp__rs_version(rs, &ver))
    return NULL;
  char *st = cJSON_PrintUnformatted(state);
  if (!st)
    return NULL;
  pmcp_buf out = PMCP_BUF_INIT;
  int rc = pmcp__rs_cursor_encode(rs, tool, args_json, ver, st, &out);
  cJSON_free(st);
  if (rc) {
    pmcp_buf_dispose(&out);
    return NULL;
  }
  return out.ptr; /* malloc'd, NUL-terminated */
}

int pmcp__rs_cursor_in(pmcp_call *call, pmcp__research *rs, cJSON **state)
{
  *state = NULL;
  const char *cur = NULL;
  size_t len = 0;
  if (!pmcp_arg_has(call, "cursor") ||
      pmcp_arg_string(call, "cursor", &cur, &len) != 0 || !cur)
    return 0;
  const char *args = NULL;
  if (pmcp_arg_json(call, NULL, &args) != 0)
    args = "{}";
  uint64_t ver = 0;
  if (pmcp__rs_version(rs, &ver)) {
    pmcp__rs_fail(call, "store_unavailable", "the store cannot be read");
    return 1;
  }
  pmcp_buf st = PMCP_BUF_INIT;
  int why = PMCP_CURSOR_OK;
  int rc = pmcp__rs_cursor_decode(rs, pmcp_call_name(call), args, ver, cur,
                                  len, &st, &why);
  if (rc == 0)
    *state = cJSON_ParseWithLength(st.ptr ? st.ptr : "", st.len);
  if (rc == PMCP_ECURSOR) {
    /* Document and content cursors pin what they read (a version, a
     * prefix hash) instead of the store's version, and are minted with
     * version 0; their state says so. */
    if (pmcp__rs_cursor_decode(rs, pmcp_call_name(call), args, 0, cur, len,
                               &st, NULL) == 0) {
      *state = cJSON_ParseWithLength(st.ptr ? st.ptr : "", st.len);
      if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(*state, "pin")))
        rc = 0;
    }
  }
  pmcp_buf_dispose(&st);
  if (rc == 0 && cJSON_IsObject(*state))
    return 0;
  cJSON_Delete(*state);
  *state = NULL;
  pmcp__rs_fail(call, "restart",
                "invalid cursor (%s): %s Call again without the cursor to "
                "start over.",
                rc == PMCP_ECURSOR ? pmcp_cursor_status_name((int)why)
                                   : "unreadable",
                rc == PMCP_ECURSOR ? pmcp_cursor_status_message((int)why)
                                   : "");
  return 1;
}

int pmcp__rs_emit(pmcp_call *call, pmcp__research *rs, cJSON *root,
                  const char *name, cJSON *items, pmcp__rs_next_fn next,
                  void *ud)
{
  int budget = budget_of(call);
  size_t n = (size_t)cJSON_GetArraySize(items);
  size_t *cost = calloc(n ? n : 1, sizeof *cost);
  if (!cost) {
    cJSON_Delete(root);
    cJSON_Delete(items);
    return PMCP_ENOMEM;
  }
  pmcp__rs_round(items);
  /* Envelope cost, with an empty list and room for a cursor. */
  cJSON *list = cJSON_AddArrayToObject(root, name);
  cJSON_AddNumberToObject(root, "count", 0);
  pmcp__rs_round(root);
  char *env = cJSON_PrintUnformatted(root);
  size_t env_tok = env ? pmcp__rs_tokens(env, strlen(env)) : 0;
  size_t env_bytes = env ? strlen(env) : 0;
  cJSON_free(env);
  const size_t cursor_reserve = 160; /* a cursor of ~250 base64url chars */
  size_t sum_tok = env_tok + cursor_reserve, sum_bytes = env_bytes + 300;
  size_t placed = 0;
  size_t i = 0;
  for (cJSON *it = items->child; it; it = it->next, i++) {
    char *t = cJSON_PrintUnformatted(it);
    size_t tb = t ? strlen(t) : 0;
    cost[i] = t ? pmcp__rs_tokens(t, tb) + 1 : 0;
    cJSON_free(t);
    if (sum_tok + cost[i] > (size_t)budget ||
        sum_bytes + tb + 1 > (size_t)budget * 8)
      break;
    sum_tok += cost[i];
    sum_bytes += tb + 1;
    placed++;
  }
  if (placed == 0 && n > 0) {
    /* An empty page with a cursor back to the same item would loop. */
    int rc = too_small(call, env_tok + cost[0], budget);
    free(cost);
    cJSON_Delete(items);
    cJSON_Delete(root);
    return rc;
  }
  /* Move the chosen items into the list. */
  for (size_t k = 0; k < placed; k++)
    cJSON_AddItemToArray(list, cJSON_DetachItemFromArray(items, 0));

  if (placed < n)
    /* items this page had but the budget left out (they come next) */
    cJSON_AddTrueToObject(root, "cut_by_budget");
  int rc = 0;
  for (;;) {
    cJSON_DeleteItemFromObject(root, "next_cursor");
    cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(root, "count"),
                         (double)placed);
    cJSON *st = next ? next(placed, ud) : NULL;
    if (st) {
      const char *args = NULL;
      if (pmcp_arg_json(call, NULL, &args) != 0)
        args = "{}";
      char *cur = pmcp__rs_cursor_mint(call, rs, pmcp_call_name(call), args,
                                       st);
      cJSON_Delete(st);
      if (!cur) {
        rc = PMCP_ENOMEM;
        break;
      }
      cJSON_AddStringToObject(root, "next_cursor", cur);
      free(cur);
    }
    char *txt = cJSON_PrintUnformatted(root);
    if (!txt) {
      rc = PMCP_ENOMEM;
      break;
    }
    size_t tok;
    if (fits(txt, strlen(txt), budget, &tok)) {
      rc = send_text(call, txt);
      break;
    }
    cJSON_free(txt);
    if (placed <= 1) {
      /* The envelope with (at most) one item does not fit. */
      rc = too_small(call, tok, budget);
      break;
    }
    /* Put the last item back (it is not sent) and try again. */
    cJSON_Delete(cJSON_DetachItemFromArray(list, (int)placed - 1));
    placed--;
  }
  free(cost);
  cJSON_Delete(items);
  cJSON_Delete(root);
  return rc;
}
