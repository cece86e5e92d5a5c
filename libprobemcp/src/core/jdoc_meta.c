/* SPDX-License-Identifier: MIT */
/* Requests of the 2026-07-28 era carry the same params._meta (protocol
 * version, client capabilities, client info) on every request of a
 * client. Its first copy is kept parsed beside the server; a later message
 * whose _meta holds the same bytes links that tree instead of parsing it
 * again (one memcmp), and admission reads the facts found once on it
 * (jdoc.h). The trees are immutable once published and live until the
 * server is freed, after every message that may point into them. */
#include <stdatomic.h>
#include <string.h>

#include "core/engine.h"
#include "core/jdoc.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_LOG "io.modelcontextprotocol/logLevel"

/* Larger ones are parsed each time (a client's _meta is ~100-300 bytes). */
#define ENTRY_MAX 2048
/* Deeper ones too (a linked tree must not exceed the parser's depth). */
#define ENTRY_DEPTH 16

static int tree_depth(const cJSON *v)
{
  int d = 0;
  for (const cJSON *c = v->child; c; c = c->next) {
    int k = tree_depth(c);
    if (k > d)
      d = k;
  }
  return (cJSON_IsObject(v) || cJSON_IsArray(v)) ? d + 1 : 0;
}

const pmcp__meta_entry *pmcp__meta_cache_find(pmcp_server *srv, const char *p, size_t avail,
                                              int depth)
{
  for (int i = 0; i < PMCP__META_SLOTS; i++) {
    const pmcp__meta_entry *e =
        atomic_load_explicit(&srv->meta_cache[i], memory_order_acquire);
    if (!e)
      return NULL; /* slots fill in order */
    if (e->len <= avail && depth + e->depth <= PMCP__JDOC_DEPTH &&
        memcmp(p, e->text, e->len) == 0)
      return e;
  }
  return NULL;
}

const pmcp__meta_entry *pmcp__meta_cache_of(const pmcp_server *srv, const cJSON *meta)
{
  if (!meta || !meta->child)
    return NULL;
  for (int i = 0; i < PMCP__META_SLOTS; i++) {
    const pmcp__meta_entry *e =
        atomic_load_explicit(&((pmcp_server *)srv)->meta_cache[i], memory_order_acquire);
    if (!e)
      return NULL;
    if (e->root->child == meta->child)
      return e;
  }
  return NULL;
}

void pmcp__meta_cache_offer(pmcp_server *srv, const char *text, size_t len,
                            const cJSON *parsed)
{
  if (len > ENTRY_MAX || !cJSON_IsObject(parsed) || !parsed->child ||
      !cJSON_IsString(pmcp__jget(parsed, META_VERSION)))
    return;
  int slot = -1;
  for (int i = 0; i < PMCP__META_SLOTS && slot < 0; i++)
    if (!atomic_load_explicit(&srv->meta_cache[i], memory_order_acquire))
      slot = i;
  if (slot < 0 || tree_depth(parsed) > ENTRY_DEPTH)
    return;
  pmcp__meta_entry *e = pmcp__calloc(srv, 1, sizeof *e + len);
  if (!e)
    return;
  e->text = memcpy((char *)(e + 1), text, len);
  e->len = len;
  /* Its own document, parsed without the cache (it is the cache). */
  if (pmcp__jdoc_parse_plain(&e->doc, &e->root, srv, e->text, len) ||
      pmcp__jdoc_has_nul(e->doc)) {
    pmcp__jdoc_unref(e->doc);
    pmcp__free(srv, e);
    return;
  }
  e->depth = tree_depth(e->root);
  e->version = pmcp__jget(e->root, META_VERSION);
  e->caps = pmcp__jget(e->root, META_CAPS);
  e->log = pmcp__jget(e->root, META_LOG);
  e->modern_version = strcmp(e->version->valuestring, PMCP__MODERN_VERSION) == 0;
  for (int i = slot; i < PMCP__META_SLOTS; i++) {
    pmcp__meta_entry *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&srv->meta_cache[i], &expected, e,
                                                memory_order_acq_rel,
                                                memory_order_acquire))
      return;
    if (expected->len == len && memcmp(expected->text, text, len) == 0)
      break; /* another thread published the same one */
  }
  pmcp__jdoc_unref(e->doc);
  pmcp__free(srv, e);
}

void pmcp__meta_cache_free(pmcp_server *srv)
{
  for (int i = 0; i < PMCP__META_SLOTS; i++) {
    pmcp__meta_entry *e = atomic_exchange(&srv->meta_cache[i], NULL);
    if (e) {
      pmcp__jdoc_unref(e->doc);
      pmcp__free(srv, e);
    }
  }
}
