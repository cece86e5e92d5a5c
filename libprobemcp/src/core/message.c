/* SPDX-License-Identifier: MIT */
/* pmcp_message_read(): a message read once for a transport, so that it
 * routes each item (its kind, the id its answers carry, whether it blocks,
 * its bytes) by the engine's own reading instead of parsing the body. */
#include <stdlib.h>
#include <string.h>

#include "core/engine.h"
#include "core/jdoc.h"
#include "core/jsonrpc.h"
#include "util/buf.h"
#include "util/json.h"

struct pmcp_message {
  pmcp_msg_info info;
  int has_nul;
  pmcp_msg_item *items;
  char *ids; /* the items' ids, NUL-separated, then info's two strings */
  /* The parsed body, kept for pmcp_server_handle_item(): an item's
   * tree is nodes[i] (the root of a single message). */
  pmcp__jdoc *doc;
  cJSON **nodes;
};

/* Requests whose handlers the host wrote. */
static int runs_handler(const char *method)
{
  static const char *const heavy[] = {"tools/call", "resources/read", "prompts/get",
                                      "completion/complete"};
  for (size_t i = 0; i < sizeof heavy / sizeof heavy[0]; i++)
    if (strcmp(method, heavy[i]) == 0)
      return 1;
  return 0;
}

void pmcp_message_free(pmcp_message *m)
{
  if (!m)
    return;
  free(m->items);
  free(m->ids);
  free(m->nodes);
  pmcp__jdoc_unref(m->doc);
  free(m);
}

/* Fills item @p it of value @p v whose text is [p, e): kind, id (its
 * offset into @p ids for now), runs_handler. */
static int read_item(pmcp_message *m, const cJSON *v, const char *p, const char *e,
                     pmcp_msg_item *it, pmcp_buf *ids, size_t *id_off)
{
  it->text = p;
  it->len = (size_t)(e - p);
  it->kind = pmcp__classify_one(v, &m->info, m->info.n_requests == 0);
  *id_off = (size_t)-1;
  if (it->kind != PMCP_MSG_REQUEST)
    return 0;
  const cJSON *method = pmcp__jget(v, "method");
  it->runs_handler = runs_handler(method->valuestring);
  it->initialize = strcmp(method->valuestring, "initialize") == 0;
  static const char *const path[] = {"id"};
  size_t start = ids->len;
  int rc = pmcp__rpc_id_text(pmcp__jget(v, "id"), p, it->len, path, 1, ids);
  if (rc == PMCP_EPROTO) {
    /* An id the engine cannot answer under (1.5, 1e400): no request. */
    ids->len = start;
    it->kind = PMCP_MSG_INVALID;
    return 0;
  }
  if (!rc)
    rc = pmcp__buf_putc(ids, '\0');
  *id_off = start;
  return rc;
}

int pmcp_message_read(pmcp_server *server, const char *msg, size_t len,
                      pmcp_message **out)
{
  if (!out)
    return PMCP_EINVAL;
  *out = NULL;
  if (!msg && len)
    return PMCP_EINVAL;
  if (!msg)
    msg = "";
  pmcp__jdoc *doc = NULL;
  cJSON *root = NULL;
  int rc = pmcp__message_parse(server, msg, len, &doc, &root);
  if (rc)
    return rc;
  pmcp_message *m = calloc(1, sizeof *m);
  pmcp_buf ids = PMCP_BUF_INIT;
  size_t *offs = NULL;
  if (!m)
    goto nomem;
  m->info.version = PMCP_MSG_INFO_VERSION;
  m->has_nul = pmcp__jdoc_has_nul(doc);
  m->info.batch = cJSON_IsArray(root);
  size_t n = m->info.batch ? (size_t)cJSON_GetArraySize(root) : 1;
  m->items = calloc(n ? n : 1, sizeof *m->items);
  m->nodes = calloc(n ? n : 1, sizeof *m->nodes);
  offs = calloc(n ? n : 1, sizeof *offs);
  if (!m->items || !m->nodes || !offs)
    goto nomem;
  const char *end = msg + len;
  /* Each batch item's span: after '[' (or a ','), up to where it ends. */
  const char *p = m->info.batch ? (const char *)memchr(msg, '[', len) + 1 : msg;
  int any_invalid = 0, n_notes = 0;
  size_t i = 0;
  for (const cJSON *v = m->info.batch ? root->child : root; v && i < n;
       v = m->info.batch ? v->next : NULL, i++) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ','))
      p++;
    const char *e = m->info.batch ? pmcp__json_skip(p, end) : end;
    if (!e)
      goto nomem; /* cannot be: the text parsed */
    if (read_item(m, v, p, e, &m->items[i], &ids, &offs[i]))
      goto nomem;
    m->nodes[i] = (cJSON *)v;
    pmcp_msg_kind k = m->items[i].kind;
    any_invalid |= k == PMCP_MSG_INVALID;
    m->info.n_requests += k == PMCP_MSG_REQUEST;
    n_notes += k == PMCP_MSG_NOTIFICATION;
    p = e;
  }
  m->info.n_items = i;
  if (any_invalid || i == 0)
    m->info.kind = PMCP_MSG_INVALID;
  else if (m->info.n_requests)
    m->info.kind = PMCP_MSG_REQUEST;
  else
    m->info.kind = n_notes ? PMCP_MSG_NOTIFICATION : PMCP_MSG_RESPONSE;
  size_t pv_off, method_off;
  if (pmcp__msg_info_own(&m->info, &ids, &pv_off, &method_off))
    goto nomem;
  /* The ids' buffer no longer moves: point into it. */
  m->ids = ids.ptr;
  m->info.protocol_version = m->ids + pv_off;
  m->info.method = m->ids + method_off;
  for (size_t k = 0; k < i; k++)
    m->items[k].id = offs[k] == (size_t)-1 ? NULL : m->ids + offs[k];
  free(offs);
  m->doc = doc;
  *out = m;
  return 0;
nomem:
  free(offs);
  pmcp_buf_dispose(&ids);
  pmcp_message_free(m);
  pmcp__jdoc_unref(doc);
  return PMCP_ENOMEM;
}

const pmcp_msg_info *pmcp_message_info(const pmcp_message *m)
{
  return m ? &m->info : NULL;
}

int pmcp_message_has_nul(const pmcp_message *m)
{
  return m && m->has_nul;
}

const pmcp_msg_item *pmcp_message_item(const pmcp_message *m, size_t i)
{
  return m && i < m->info.n_items ? &m->items[i] : NULL;
}

int pmcp_server_handle_item(pmcp_server *server, const char *session,
                            const pmcp_message *m, size_t i,
                            const pmcp_http_claims *claims)
{
  if (!m || i >= m->info.n_items)
    return PMCP_EINVAL;
  const pmcp_msg_item *it = &m->items[i];
  return pmcp__handle_parsed(server, session, m->doc, m->nodes[i], it->text, it->len,
                             claims);
}
