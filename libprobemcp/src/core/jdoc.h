/* SPDX-License-Identifier: MIT */
/* Incoming messages parsed into cJSON nodes that live in a few arena blocks
 * (usually one allocation per message) instead of one malloc per node and
 * per string: parsing and freeing a small request was half the engine's
 * time per call with cJSON_Parse.
 *
 * The tree is read with cJSON's getters (cJSON_GetObjectItemCaseSensitive,
 * cJSON_IsString, ->valuestring ...) and printed with cJSON_Print*, but it
 * is read-only: never pass its nodes to cJSON_Delete, cJSON_Detach* or any
 * other cJSON call that frees or relinks. A request keeps its message alive
 * with a reference (pmcp__jdoc_ref) for as long as it reads its params.
 *
 * Strict JSON (RFC 8259): whitespace is space, tab, LF and CR only; control
 * characters inside strings must be escaped; numbers follow the JSON grammar
 * (no leading zeros, no bare '.'); at most PMCP__JDOC_DEPTH nested arrays
 * and objects (cJSON's own limit). A decoded \u0000 would end the C string
 * early, so the node holding it is flagged (PMCP__JDOC_NUL on a string
 * value, PMCP__JDOC_NULKEY on a member whose name has it) and the request
 * is refused before anything reads it as a C string. */
#ifndef PMCP_CORE_JDOC_H
#define PMCP_CORE_JDOC_H

#include <stddef.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "probemcp/server.h"

#define PMCP__JDOC_DEPTH 1000

typedef struct pmcp__jdoc pmcp__jdoc;

/* Flags in cJSON.type above cJSON's own (cJSON_IsString and printing mask
 * the low byte). */
#define PMCP__JDOC_NUL (1 << 12)
#define PMCP__JDOC_NULKEY (1 << 13)

/* Parses @p len bytes holding one JSON value, with only whitespace around
 * it. On success sets *out (one reference, held by the caller) and *root.
 * PMCP_EPROTO when the text is not that, PMCP_ENOMEM; blocks come from
 * @p srv's allocator. */
int pmcp__jdoc_parse(pmcp__jdoc **out, cJSON **root, pmcp_server *srv,
                     const char *text, size_t len);

/* The same without the _meta cache below (a cache entry's own parse). */
int pmcp__jdoc_parse_plain(pmcp__jdoc **out, cJSON **root, pmcp_server *srv,
                           const char *text, size_t len);

/* ---- the _meta cache (jdoc_meta.c) ----
 * A member "_meta" whose object holds the modern protocol version is kept
 * parsed by the server (first ones seen, PMCP__META_SLOTS of them); when a
 * later message has the same bytes there, its _meta node links the kept
 * tree's members. Same tree, same answers; admission reads the facts. */
#define PMCP__META_SLOTS 8
typedef struct pmcp__meta_entry {
  const char *text; /* the value's exact bytes */
  size_t len;
  int depth;        /* nesting of the value, itself included */
  pmcp__jdoc *doc;
  cJSON *root;
  /* its members protocolVersion, clientCapabilities, logLevel, or NULL */
  const cJSON *version, *caps, *log;
  int modern_version; /* version is the 2026-07-28 revision */
} pmcp__meta_entry;
/* The entry whose text starts [p, p + avail), usable at parser depth
 * @p depth; NULL when none. */
const pmcp__meta_entry *pmcp__meta_cache_find(pmcp_server *srv, const char *p,
                                              size_t avail, int depth);
/* The entry whose members the _meta object @p meta links, or NULL. */
const pmcp__meta_entry *pmcp__meta_cache_of(const pmcp_server *srv, const cJSON *meta);
/* Keeps [text, text + len), parsed as @p parsed, when it qualifies and a
 * slot is free. */
void pmcp__meta_cache_offer(pmcp_server *srv, const char *text, size_t len,
                            const cJSON *parsed);
/* At server teardown, when no message is left. */
void pmcp__meta_cache_free(pmcp_server *srv);

/* cJSON_GetObjectItemCaseSensitive without a library call and a strcmp
 * per member on the way: the first byte is compared inline. Same answer
 * (NULL for a NULL or non-object @p obj); works on any cJSON tree. */
static inline cJSON *pmcp__jget(const cJSON *obj, const char *key)
{
  if (!obj || !key)
    return NULL;
  for (cJSON *c = obj->child; c && c->string; c = c->next)
    if (c->string[0] == key[0] && strcmp(c->string, key) == 0)
      return c;
  return NULL;
}

/* True when a string or member name of the message decoded a \u0000. */
int pmcp__jdoc_has_nul(const pmcp__jdoc *doc);
/* Writes to @p path the dotted path ("params.arguments.workspace",
 * "[2]") of the first string holding a \u0000 under @p root: returns 1
 * for a string value, 2 for a member name (@p path is its object's), 0
 * for none, -1 out of memory. */
int pmcp__jdoc_nul_path(const cJSON *root, pmcp_buf *path);

/* Any thread. */
void pmcp__jdoc_ref(pmcp__jdoc *doc);
/* Frees the message with its last reference. NULL ok. Any thread. */
void pmcp__jdoc_unref(pmcp__jdoc *doc);

#endif
