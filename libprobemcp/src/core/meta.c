/* SPDX-License-Identifier: MIT */
/* `_meta` of tools and resources: an object the host gives after
 * registering, kept minified and shown in the list entries (and on the
 * contents of a resource read, call.c). MCP Apps use it both ways: a tool
 * points at its ui:// resource, the resource declares its CSP. */
#include <string.h>

#include "core/engine.h"
#include "util/buf.h"
#include "util/json.h"

/* What both setters check first: a live server still registering, and a
 * name. */
static int meta_open(pmcp_server *srv, const char *name)
{
  if (!srv || srv->magic != PMCP__SERVER_MAGIC)
    return PMCP_EMISUSE;
  return name ? pmcp__registration_open(srv) : PMCP_EINVAL;
}

/* The minified copy of @p json, which must be one JSON object (the _meta
 * of the @p kind named @p name). */
static int meta_copy(pmcp_server *srv, const char *kind, const char *name, const char *json,
                     char **out)
{
  *out = NULL;
  if (!json)
    return 0;
  size_t len = strlen(json);
  cJSON *v = cJSON_ParseWithLength(json, len);
  int obj = cJSON_IsObject(v);
  cJSON_Delete(v);
  if (!obj)
    return pmcp__err(srv, PMCP_EINVAL, "the _meta of %s '%.128s' is not a JSON object", kind,
                     name);
  pmcp_buf m = PMCP_BUF_INIT;
  int rc = pmcp__json_minify(&m, json, len);
  if (!rc && !(*out = pmcp__strdup(srv, m.ptr)))
    rc = PMCP_ENOMEM;
  pmcp_buf_dispose(&m);
  return rc;
}

int pmcp_server_set_tool_meta(pmcp_server *server, const char *tool, const char *meta_json)
{
  int rc = meta_open(server, tool);
  if (rc)
    return rc;
  pmcp__tool *t = (pmcp__tool *)pmcp__tool_find(server, tool);
  if (!t)
    return pmcp__err(server, PMCP_ENOTFOUND, "no tool named '%s'", tool);
  char *meta;
  if ((rc = meta_copy(server, "tool", tool, meta_json, &meta)))
    return rc;
  /* Rebuild only the tools/list entry, keeping the input schema. */
  char *old_meta = t->meta, *old_list = t->list_json;
  int literal = t->literal;
  t->meta = meta;
  t->list_json = NULL;
  t->literal = 1;
  rc = pmcp__schema_build(server, t);
  t->literal = literal;
  if (rc) {
    pmcp__free(server, meta);
    t->meta = old_meta;
    t->list_json = old_list;
    return rc;
  }
  pmcp__free(server, old_meta);
  pmcp__free(server, old_list);
  return 0;
}

static pmcp__resource *resource_find(pmcp_server *srv, const char *uri)
{
  const pmcp__registry *r = &srv->reg;
  for (size_t i = 0; i < r->n_resources; i++)
    if (!strcmp(r->resources[i]->uri, uri))
      return r->resources[i];
  for (size_t i = 0; i < r->n_templates; i++)
    if (!strcmp(r->templates[i]->uri_template, uri))
      return r->templates[i];
  return NULL;
}

int pmcp_server_set_resource_meta(pmcp_server *server, const char *uri, const char *meta_json)
{
  int rc = meta_open(server, uri);
  if (rc)
    return rc;
  pmcp__resource *r = resource_find(server, uri);
  if (!r)
    return pmcp__err(server, PMCP_ENOTFOUND, "no resource '%s'", uri);
  char *meta;
  if ((rc = meta_copy(server, "resource", uri, meta_json, &meta)))
    return rc;
  char *old = r->meta;
  r->meta = meta;
  rc = pmcp__resource_json(server, r); /* replaces list_json only on success */
  if (rc) {
    r->meta = old;
    pmcp__free(server, meta);
    return rc;
  }
  pmcp__free(server, old);
  return 0;
}

int pmcp__ui_offered(const pmcp_server *srv)
{
  const pmcp__registry *r = &srv->reg;
  for (size_t i = 0; i < r->n_resources; i++)
    if (r->resources[i]->mime_type && !strcmp(r->resources[i]->mime_type, PMCP_MIME_MCP_APP))
      return 1;
  for (size_t i = 0; i < r->n_templates; i++)
    if (r->templates[i]->mime_type && !strcmp(r->templates[i]->mime_type, PMCP_MIME_MCP_APP))
      return 1;
  return 0;
}
