/* SPDX-License-Identifier: MIT */
/* The page builder's link to a tool call: reading token_budget, cursor and
 * arguments from the call, and handing the finished page to it. */
#include "core/call.h"
#include "core/page_int.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/json.h"

int pmcp_page_begin(pmcp_page **out, pmcp_call *call, uint64_t source_version)
{
  if (!out)
    return PMCP_EINVAL;
  *out = NULL;
  if (!call)
    return PMCP_EINVAL;
  int budget = pmcp_call_token_budget(call);
  if (budget <= 0)
    return PMCP_EMISUSE; /* not a PMCP_TOOL_BUDGETED tool */
  pmcp__cursor_key *key = pmcp__server_cursor_key(pmcp_call_server(call));
  if (!key)
    return PMCP_EMISUSE;
  pmcp_page_options o = PMCP_PAGE_OPTIONS_INIT;
  o.token_budget = budget;
  o.tool = pmcp_call_name(call);
  o.source_version = source_version;
  o.key = key->key;
  o.key_len = key->len;
  const char *args = NULL;
  if (pmcp__call_cursor_args(call, &args) == 0)
    o.args_json = args;
  const char *cursor = NULL;
  size_t cursor_len = 0;
  if (pmcp_arg_has(call, "cursor") &&
      pmcp_arg_string(call, "cursor", &cursor, &cursor_len) == 0) {
    /* an empty or NUL-carrying cursor is refused by the decoder */
    o.cursor = cursor;
    if (strlen(cursor) != cursor_len || !cursor_len)
      o.cursor = "\x01";
  }
  int rc = pmcp_page_new(out, &o);
  if (!rc)
    (*out)->call = call;
  return rc;
}

int pmcp_page_finish(pmcp_page *pg, int more)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC)
    return PMCP_EMISUSE;
  if (!pg->call)
    return PMCP_EMISUSE;
  pmcp_buf text = PMCP_BUF_INIT;
  int is_error = 0;
  int rc = pmcp_page_render(pg, more, &text, &is_error);
  /* structuredContent mirrors a success; an error result is the text only
   * (clients validate structuredContent against the outputSchema). */
  if (!rc)
    rc = pmcp__page_result(pg, pg->call, text.ptr, text.len, !is_error);
  if (!rc && !is_error)
    rc = pmcp_page_send_image(pg, pg->call);
  if (!rc && is_error)
    pmcp_result_set_error(pg->call, 1);
  pmcp_buf_dispose(&text);
  return rc;
}

int pmcp__page_result(const pmcp_page *pg, pmcp_call *call, const char *text,
                      size_t len, int structured)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC || !pg->done || !call || !text)
    return PMCP_EMISUSE;
  size_t before = call->n_items;
  int rc = pmcp_result_text(call, text, len);
  if (rc)
    return rc;
  /* the item is the page's text unless the server's text cap cut it */
  pmcp__item *it = &call->items[call->n_items - 1];
  if (call->n_items == before + 1 && it->is_text && it->len == len) {
    it->counted = 1;
    it->tokens = pg->stats.tokens;
  }
  if (!structured)
    return 0;
  if (call->kind != PMCP__CALL_TOOL)
    return PMCP_EMISUSE;
  if (!len || text[0] != '{')
    return PMCP_EINVAL;
  pmcp_buf m = PMCP_BUF_INIT;
  rc = pmcp__json_minify(&m, text, len);
  if (rc) {
    pmcp_buf_dispose(&m);
    return rc;
  }
  free(call->structured);
  call->structured = pmcp__buf_steal(&m, &call->structured_len);
  return call->structured ? 0 : PMCP_ENOMEM;
}
