/* SPDX-License-Identifier: MIT */
/* Budgeted pages for the research tools (see page.h) on the engine's page
 * builder (budget.h), which does all counting, fitting, refusing and
 * cursor minting. What stays here is what is the research tools' own: the
 * summary numbers' spelling, cursors decoded against a store version or a
 * pin, nested <list>_cursor values for other calls, and the pager of
 * items written with the JSON writer (pmcp__rs_send_items). */
#include "core/call.h"
#include "research/page.h"
#include "core/cursor_int.h" /* PMCP__CURSOR_ANY_VERSION */
#include "core/page_int.h"   /* pmcp__page_resume_empty, pmcp__page_result */

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probemcp/budget.h"
#include "probemcp/cursor.h"
#include "probemcp/json.h"
#include "probemcp/tokens.h"
#include "research/views/views.h" /* pmcp__vw_each */
#include "util/buf.h"
#include "util/cnum.h"

size_t pmcp__rs_tokens(const char *s, size_t len)
{
  size_t n = 0;
  /* Result text is valid UTF-8 (cJSON output of valid strings); on an
   * error count bytes, which over-counts and so stays safe. */
  if (pmcp_tokens_count(s, len, &n) != 0)
    return len;
  return n;
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
  if (len > (size_t)budget * PMCP_BUDGET_BYTES_PER_TOKEN) {
    *tokens = len; /* at least one token per byte is impossible, but it is
                      over the ceiling either way */
    return 0;
  }
  *tokens = pmcp__rs_tokens(txt, len);
  return *tokens <= (size_t)budget;
}

int pmcp__rs_fits_text(pmcp_call *call, const char *t, size_t len, size_t reserve)
{
  int budget = budget_of(call);
  size_t tok;
  return (size_t)budget > reserve && fits(t, len, budget - (int)reserve, &tok) &&
         len + reserve * 4 <= (size_t)budget * PMCP_BUDGET_BYTES_PER_TOKEN;
}

/* A double as cJSON prints one: 15 significant digits, or 17 when 15 do
 * not read back (within its tolerance). The answers were printed so;
 * keeping the printer keeps them byte for byte (1.5e+06 from six figures
 * reads 1500000, -0 stays -0). */
static size_t cjson_text(double d, char out[PMCP_JSON_NUMBER_MAX])
{
  pmcp__c_snprintf(out, PMCP_JSON_NUMBER_MAX, "%1.15g", d);
  double t = pmcp__c_strtod(out, NULL);
  double m = fabs(t) > fabs(d) ? fabs(t) : fabs(d);
  if (!(fabs(t - d) <= m * DBL_EPSILON))
    pmcp__c_snprintf(out, PMCP_JSON_NUMBER_MAX, "%1.17g", d);
  return strlen(out);
}

/* An integer's digits, as the writer's pmcp_json_int spells them. */
static size_t int_text(int64_t v, char out[PMCP_JSON_NUMBER_MAX])
{
  return (size_t)snprintf(out, PMCP_JSON_NUMBER_MAX, "%" PRId64, v);
}

size_t pmcp__rs_number_text(double v, char out[PMCP_JSON_NUMBER_MAX])
{
  if (!isfinite(v))
    return (size_t)snprintf(out, PMCP_JSON_NUMBER_MAX, "\"%s\"",
                            isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
  /* integers (ids, steps, counts, times) stay exact; -0 is cJSON's "-0" */
  if (v == floor(v) && fabs(v) < 9007199254740992.0) {
    if (fabs(v) < 1e15 && !(v == 0 && signbit(v)))
      return int_text((int64_t)v, out);
    return cjson_text(v, out);
  }
  /* the rest six figures ("%.6g"), spelled as the rounded double always
   * was: 1234567.8 is 1234570, not 1.23457e+06 */
  char six[PMCP_JSON_NUMBER_MAX];
  int k = pmcp__c_snprintf(six, sizeof six, "%.6g", v);
  double r = pmcp__c_strtod(six, NULL);
  if (r == floor(r) && fabs(r) < 1e15)
    return int_text((int64_t)r, out);
  if (fabs(r) < DBL_MIN || fabs(r) >= 1e15 || k <= 0 || (size_t)k >= sizeof six)
    return cjson_text(r, out);
  memcpy(out, six, (size_t)k + 1);
  return (size_t)k;
}

int pmcp__rs_number(pmcp_json *j, double d)
{
  char t[PMCP_JSON_NUMBER_MAX];
  size_t n = pmcp__rs_number_text(d, t);
  /* non-finite values are strings already, not the writer's counted ones:
   * the answers never had a non_finite field */
  return pmcp_json_raw(j, t, n);
}

/* A page for the call under the toolset's cursor key and the store's data
 * version; @p take_cursor: the page decodes the call's cursor itself. */
static pmcp_page *new_page_v(pmcp_call *call, pmcp__research *rs, unsigned flags,
                             int take_cursor, int scoped, uint64_t scope);

static pmcp_page *new_page(pmcp_call *call, pmcp__research *rs,
                           unsigned flags, int take_cursor)
{
  return new_page_v(call, rs, flags, take_cursor, 0, 0);
}

/* @p scoped: the page's cursors are bound to @p scope (a digest of what
 * the pages read) instead of the store's version. */
static pmcp_page *new_page_v(pmcp_call *call, pmcp__research *rs, unsigned flags,
                             int take_cursor, int scoped, uint64_t scope)
{
  uint64_t ver = scope;
  if (!scoped && pmcp__rs_version(rs, &ver)) {
    pmcp__rs_fail(call, PMCP_TERR_STORE, "the store cannot be read");
    return NULL;
  }
  pmcp_page_options o = PMCP_PAGE_OPTIONS_INIT;
  o.token_budget = budget_of(call);
  o.tool = pmcp_call_name(call);
  const char *args = NULL;
  if (pmcp__call_cursor_args(call, &args) == 0)
    o.args_json = args;
  const char *cur = NULL;
  size_t clen = 0;
  if (take_cursor && pmcp_arg_has(call, "cursor") &&
      pmcp_arg_string(call, "cursor", &cur, &clen) == 0)
    o.cursor = (cur && clen && strlen(cur) == clen) ? cur : "\x01";
  o.source_version = ver;
  o.key = rs->cursor_key;
  o.key_len = rs->cursor_key_len;
  o.flags = flags;
  pmcp_page *pg = NULL;
  if (pmcp_page_new(&pg, &o)) {
    pmcp__rs_fail(call, PMCP_TERR_INTERNAL, "the result page could not be made");
    return NULL;
  }
  return pg;
}

pmcp_page *pmcp__rs_page(pmcp_call *call, pmcp__research *rs, unsigned flags)
{
  return new_page(call, rs, flags, 1);
}

pmcp_page *pmcp__rs_page_plain(pmcp_call *call, pmcp__research *rs)
{
  return new_page(call, rs, 0, 0);
}

pmcp_page *pmcp__rs_page_scoped(pmcp_call *call, pmcp__research *rs, unsigned flags,
                                uint64_t scope)
{
  return new_page_v(call, rs, flags, 1, 1, scope);
}

uint64_t pmcp__rs_scope_mix(uint64_t h, int64_t v)
{
  /* FNV-1a over the value's bytes; 0 is kept for "no scope" */
  if (!h)
    h = 1469598103934665603ULL;
  for (int i = 0; i < 8; i++) {
    h ^= (uint64_t)((v >> (8 * i)) & 0xFF);
    h *= 1099511628211ULL;
  }
  return h ? h : 1;
}

int pmcp__rs_send(pmcp_call *call, pmcp_page *pg, int more)
{
  pmcp_buf b = PMCP_BUF_INIT;
  int is_err = 0;
  int rc = pmcp_page_render(pg, more, &b, &is_err);
  if (rc) {
    pmcp_page_free(pg);
    pmcp_buf_dispose(&b);
    return rc;
  }
  /* structuredContent mirrors the text, errors included (the research
   * tools have always answered so) */
  rc = pmcp__page_result(pg, call, b.ptr, b.len, 1);
  if (!rc && is_err)
    pmcp_result_set_error(call, 1);
  if (!rc && !is_err)
    rc = pmcp_page_send_image(pg, call); /* a chart, when one was attached */
  pmcp_page_free(pg);
  pmcp_buf_dispose(&b);
  return rc;
}

int pmcp__rs_send_object(pmcp_call *call, pmcp__research *rs, const char *txt, size_t len)
{
  pmcp_page *pg = new_page(call, rs, 0, 0);
  if (!pg)
    return 0; /* the error result is sent */
  int rc = pmcp_page_object(pg, txt, len);
  if (rc && rc != PMCP_EBUDGET) {
    pmcp_page_free(pg);
    return rc;
  }
  return pmcp__rs_send(call, pg, 0);
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
  if (pmcp__call_cursor_args(call, &args) != 0)
    args = "{}";
  uint64_t ver = 0;
  if (pmcp__rs_version(rs, &ver)) {
    pmcp__rs_fail(call, PMCP_TERR_STORE, "the store cannot be read");
    return 1;
  }
  pmcp_buf st = PMCP_BUF_INIT;
  int why = PMCP_CURSOR_OK;
  int rc = pmcp__rs_cursor_decode(rs, pmcp_call_name(call), args, ver, cur,
                                  len, &st, &why);
  if (rc == 0)
    *state = cJSON_ParseWithLength(st.ptr ? st.ptr : "", st.len);
  if (rc == PMCP_ECURSOR) {
    /* Cursors whose state pins what their pages read (a document's
     * version or prefix hash, a listing's anchor: "pin") continue whatever
     * else changed in the store; the tool checks the pin. */
    if (pmcp__rs_cursor_decode(rs, pmcp_call_name(call), args, PMCP__CURSOR_ANY_VERSION, cur,
                               len, &st, NULL) == 0) {
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
  pmcp__rs_restart(call,
                   rc == PMCP_ECURSOR ? pmcp_cursor_status_name((int)why) : "malformed",
                   "%s Call %s again without `cursor` to start over.",
                   rc == PMCP_ECURSOR ? pmcp_cursor_status_message((int)why)
                                      : "The cursor cannot be read.",
                   pmcp_call_name(call));
  return 1;
}

static int add_field(const char *key, const char *val, size_t len, void *ud)
{
  return pmcp_page_field_json(ud, key, val, len);
}

/* The answer when the fields alone are over the budget: the envelope as
 * one object with the list @p name empty, refused naming min_token_budget. */
static int refuse_envelope(pmcp_call *call, pmcp__research *rs, const char *root, size_t len,
                           const char *name)
{
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_append(&b, root, len - 1);
  if (!rc)
    rc = pmcp__buf_printf(&b, ",\"%s\":[],\"count\":0}", name);
  if (!rc)
    rc = pmcp__rs_send_object(call, rs, b.ptr, b.len);
  pmcp_buf_dispose(&b);
  return rc;
}

int pmcp__rs_send_items(pmcp_call *call, pmcp__research *rs, pmcp_json *root,
                        const char *name, const pmcp__rs_items *r)
{
  size_t rl = 0;
  const char *rt = pmcp_json_text(root, &rl);
  if (!rt)
    return PMCP_ENOMEM;
  /* the incoming cursor was opened by pmcp__rs_cursor_in(); the page only
   * mints the next one */
  pmcp_page *pg = pmcp__rs_page_plain(call, rs);
  if (!pg)
    return 0; /* the error result is sent */
  int rc = pmcp__vw_each(rt, rl, add_field, pg);
  if (rc == PMCP_EBUDGET) {
    pmcp_page_free(pg);
    return refuse_envelope(call, rs, rt, rl, name);
  }
  pmcp_json *sj = NULL;
  if (!rc && pmcp_json_new(&sj, 0))
    rc = PMCP_ENOMEM;
  if (!rc)
    rc = pmcp_page_list(pg, name);
  for (size_t i = 0; !rc && i < r->n; i++) {
    int has = r->state(sj, i + 1, r->ud);
    size_t sl = 0;
    const char *s = has > 0 ? pmcp_json_text(sj, &sl) : NULL;
    pmcp_json *j = has < 0 || (has > 0 && !s) ? NULL : pmcp_page_item(pg);
    if (!j) {
      rc = pmcp_page_status(pg) ? pmcp_page_status(pg) : PMCP_ENOMEM;
      break;
    }
    rc = r->item(j, i, r->ud);
    if (!rc)
      rc = pmcp_page_commit(pg, s, sl);
  }
  int more = 0;
  if (rc == PMCP_EBUDGET) {
    more = 1; /* the page is full (or refused): it says so itself */
    rc = 0;
  } else if (!rc) {
    int has = r->state(sj, r->n, r->ud);
    more = has > 0;
    size_t sl = 0;
    const char *s = has > 0 ? pmcp_json_text(sj, &sl) : NULL;
    if (has < 0 || (has > 0 && !s))
      rc = PMCP_ENOMEM;
    else if (has > 0 && r->n == 0)
      /* nothing shown, but items were read (all hidden): the page still
       * continues after them */
      rc = pmcp__page_resume_empty(pg, s, sl);
  }
  pmcp_json_free(sj);
  if (rc) {
    pmcp_page_free(pg);
    return rc;
  }
  return pmcp__rs_send(call, pg, more);
}
