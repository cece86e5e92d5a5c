/* SPDX-License-Identifier: MIT */
/* Registration of resources, resource templates, prompts and the
 * completion handler (tools: registry.c). */
#include <stddef.h>
#include <string.h>

#include "core/engine.h"
#include "util/buf.h"
#include "util/abi.h"

void pmcp__resource_free(pmcp_server *srv, pmcp__resource *r)
{
  if (!r)
    return;
  pmcp__free(srv, r->uri);
  pmcp__free(srv, r->uri_template);
  pmcp__free(srv, r->name);
  pmcp__free(srv, r->title);
  pmcp__free(srv, r->description);
  pmcp__free(srv, r->mime_type);
  pmcp__free(srv, r->list_json);
  pmcp__free(srv, r->meta);
  if (r->ud_free)
    r->ud_free(r->ud);
  pmcp__free(srv, r);
}

void pmcp__prompt_free(pmcp_server *srv, pmcp__prompt *p)
{
  if (!p)
    return;
  for (size_t i = 0; i < p->n_args; i++) {
    pmcp__free(srv, (char *)p->args[i].name);
    pmcp__free(srv, (char *)p->args[i].description);
  }
  pmcp__free(srv, p->args);
  pmcp__free(srv, p->name);
  pmcp__free(srv, p->title);
  pmcp__free(srv, p->description);
  pmcp__free(srv, p->list_json);
  if (p->ud_free)
    p->ud_free(p->ud);
  pmcp__free(srv, p);
}

/* ---- resources ---- */

/* The entry resources/list or resources/templates/list shows. */
int pmcp__resource_json(pmcp_server *srv, pmcp__resource *r)
{
  pmcp_buf b = PMCP_BUF_INIT;
  const char *key = r->uri ? "uri" : "uriTemplate";
  const char *val = r->uri ? r->uri : r->uri_template;
  int rc = pmcp__buf_printf(&b, "{\"%s\":", key);
  if (!rc)
    rc = pmcp__buf_json_string(&b, val, strlen(val));
  const char *keys[] = {"name", "title", "description", "mimeType"};
  const char *vals[] = {r->name, r->title, r->description, r->mime_type};
  for (size_t i = 0; i < 4 && !rc; i++) {
    if (!vals[i])
      continue;
    rc = pmcp__buf_printf(&b, ",\"%s\":", keys[i]);
    if (!rc)
      rc = pmcp__buf_json_string(&b, vals[i], strlen(vals[i]));
  }
  if (!rc && r->meta)
    rc = pmcp__buf_printf(&b, ",\"_meta\":%s", r->meta);
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  char *json = rc ? NULL : pmcp__strdup(srv, b.ptr);
  if (!rc && !json)
    rc = PMCP_ENOMEM;
  if (!rc) {
    pmcp__free(srv, r->list_json);
    r->list_json = json;
  }
  pmcp_buf_dispose(&b);
  return rc;
}

/* RFC 6570 level 1: literal text and {name} variables, no nested braces. */
static int template_ok(const char *t)
{
  int vars = 0;
  for (const char *p = t; *p; p++) {
    if (*p == '}')
      return 0;
    if (*p != '{')
      continue;
    const char *e = strchr(p + 1, '}');
    if (!e || e == p + 1)
      return 0;
    for (const char *q = p + 1; q < e; q++)
      if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
            (*q >= '0' && *q <= '9') || *q == '_'))
        return 0;
    if (e[1] == '{')
      return 0; /* adjacent variables cannot be split apart */
    vars++;
    p = e;
  }
  return vars > 0;
}

int pmcp_server_add_resource(pmcp_server *server, const pmcp_resource_def *def)
{
  int rc;
  if (!server || server->magic != PMCP__SERVER_MAGIC) {
    rc = PMCP_EMISUSE;
    goto fail_ud;
  }
  if (!def || !PMCP__VERSION_OK(def->version, PMCP_RESOURCE_DEF_VERSION)) {
    rc = pmcp__err(server, PMCP_EINVAL, "resource definition missing or of unknown version");
    goto fail_ud;
  }
  if ((rc = pmcp__registration_open(server)))
    goto fail_ud;
  if (!def->uri == !def->uri_template || !def->name || !def->read ||
      (def->uri && !def->uri[0])) {
    rc = pmcp__err(server, PMCP_EINVAL,
                   "a resource needs a name, a read handler and exactly one of uri "
                   "and uri_template");
    goto fail_ud;
  }
  if (def->uri_template && !template_ok(def->uri_template)) {
    rc = pmcp__err(server, PMCP_EINVAL,
                   "uri_template '%s' is not a level-1 template with {name} variables",
                   def->uri_template);
    goto fail_ud;
  }
  if (def->flags & ~(unsigned)PMCP_TOOL_BLOCKING) {
    rc = pmcp__err(server, PMCP_EINVAL, "resource '%s' has unknown flags", def->name);
    goto fail_ud;
  }
  pmcp__registry *reg = &server->reg;
  pmcp__resource **list = def->uri ? reg->resources : reg->templates;
  size_t n = def->uri ? reg->n_resources : reg->n_templates;
  for (size_t i = 0; i < n; i++) {
    const char *a = def->uri ? list[i]->uri : list[i]->uri_template;
    const char *b = def->uri ? def->uri : def->uri_template;
    if (strcmp(a, b) == 0) {
      rc = pmcp__err(server, PMCP_EEXIST, "resource '%s' is already registered", b);
      goto fail_ud;
    }
  }
  pmcp__resource *r = pmcp__calloc(server, 1, sizeof *r);
  if (!r) {
    rc = PMCP_ENOMEM;
    goto fail_ud;
  }
  r->uri = pmcp__strdup(server, def->uri);
  r->uri_template = pmcp__strdup(server, def->uri_template);
  r->name = pmcp__strdup(server, def->name);
  r->title = pmcp__strdup(server, def->title);
  r->description = pmcp__strdup(server, def->description);
  r->mime_type = pmcp__strdup(server, def->mime_type);
  r->flags = def->flags;
  r->read = def->read;
  rc = (!r->name || (def->uri && !r->uri) || (def->uri_template && !r->uri_template) ||
        (def->title && !r->title) || (def->description && !r->description) ||
        (def->mime_type && !r->mime_type)) ? PMCP_ENOMEM : 0;
  if (!rc)
    rc = pmcp__resource_json(server, r);
  if (!rc) {
    if (def->uri)
      rc = pmcp__registry_push(server, (void ***)&reg->resources, &reg->n_resources,
                &reg->cap_resources, r);
    else
      rc = pmcp__registry_push(server, (void ***)&reg->templates, &reg->n_templates,
                &reg->cap_templates, r);
  }
  if (rc) {
    pmcp__resource_free(server, r);
    goto fail_ud;
  }
  r->ud = def->ud;
  r->ud_free = def->ud_free;
  return 0;
fail_ud:
  if (def && def->ud_free)
    def->ud_free(def->ud);
  return rc;
}

/* ---- prompts ---- */

static int prompt_json(pmcp_server *srv, pmcp__prompt *p)
{
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_puts(&b, "{\"name\":");
  if (!rc)
    rc = pmcp__buf_json_string(&b, p->name, strlen(p->name));
  if (!rc && p->title) {
    rc = pmcp__buf_puts(&b, ",\"title\":");
    if (!rc)
      rc = pmcp__buf_json_string(&b, p->title, strlen(p->title));
  }
  if (!rc && p->description) {
    rc = pmcp__buf_puts(&b, ",\"description\":");
    if (!rc)
      rc = pmcp__buf_json_string(&b, p->description, strlen(p->description));
  }
  if (!rc && p->n_args) {
    rc = pmcp__buf_puts(&b, ",\"arguments\":[");
    for (size_t i = 0; i < p->n_args && !rc; i++) {
      rc = pmcp__buf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
      if (!rc)
        rc = pmcp__buf_json_string(&b, p->args[i].name, strlen(p->args[i].name));
      if (!rc && p->args[i].description) {
        rc = pmcp__buf_puts(&b, ",\"description\":");
        if (!rc)
          rc = pmcp__buf_json_string(&b, p->args[i].description,
                                     strlen(p->args[i].description));
      }
      if (!rc)
        rc = pmcp__buf_printf(&b, ",\"required\":%s}",
                              p->args[i].required ? "true" : "false");
    }
    if (!rc)
      rc = pmcp__buf_putc(&b, ']');
  }
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  if (!rc && !(p->list_json = pmcp__strdup(srv, b.ptr)))
    rc = PMCP_ENOMEM;
  pmcp_buf_dispose(&b);
  return rc;
}

/* The size of a prompt definition's argument elements: the caller's
 * (version 2), else the first layout's. Only that layout's fields are
 * read through PARG. */
/* the first layout (name, description, required), trailing padding
 * included: the stride of a version 1 array */
#define PROMPT_ARG_SIZE_1 sizeof(struct { const char *a, *b; int c; })
static size_t prompt_arg_stride(const pmcp_prompt_def *d)
{
  return d->version >= 2 && d->arg_size ? d->arg_size : PROMPT_ARG_SIZE_1;
}
#define PARG(d, i) \
  ((const pmcp_prompt_arg *)(const void *)((const char *)(d)->args + (i) * prompt_arg_stride(d)))

int pmcp_server_add_prompt(pmcp_server *server, const pmcp_prompt_def *def)
{
  int rc;
  if (!server || server->magic != PMCP__SERVER_MAGIC) {
    rc = PMCP_EMISUSE;
    goto fail_ud;
  }
  if (!def || !PMCP__VERSION_OK(def->version, PMCP_PROMPT_DEF_VERSION)) {
    rc = pmcp__err(server, PMCP_EINVAL, "prompt definition missing or of unknown version");
    goto fail_ud;
  }
  if ((rc = pmcp__registration_open(server)))
    goto fail_ud;
  if (prompt_arg_stride(def) < PROMPT_ARG_SIZE_1) {
    rc = pmcp__err(server, PMCP_EINVAL, "prompt: arg_size is smaller than the first layout");
    goto fail_ud;
  }
  if (!def->name || !def->name[0] || !def->get || (def->n_args && !def->args)) {
    rc = pmcp__err(server, PMCP_EINVAL, "a prompt needs a name and a get handler");
    goto fail_ud;
  }
  if (pmcp__prompt_find(server, def->name)) {
    rc = pmcp__err(server, PMCP_EEXIST, "prompt '%s' is already registered", def->name);
    goto fail_ud;
  }
  for (size_t i = 0; i < def->n_args; i++) {
    if (!PARG(def, i)->name || !PARG(def, i)->name[0]) {
      rc = pmcp__err(server, PMCP_EINVAL, "prompt '%s': argument %zu has no name",
                     def->name, i);
      goto fail_ud;
    }
    for (size_t k = 0; k < i; k++)
      if (strcmp(PARG(def, k)->name, PARG(def, i)->name) == 0) {
        rc = pmcp__err(server, PMCP_EINVAL, "prompt '%s': argument '%s' declared twice",
                       def->name, PARG(def, i)->name);
        goto fail_ud;
      }
  }
  pmcp__prompt *p = pmcp__calloc(server, 1, sizeof *p);
  if (!p) {
    rc = PMCP_ENOMEM;
    goto fail_ud;
  }
  p->name = pmcp__strdup(server, def->name);
  p->title = pmcp__strdup(server, def->title);
  p->description = pmcp__strdup(server, def->description);
  p->get = def->get;
  rc = (!p->name || (def->title && !p->title) ||
        (def->description && !p->description)) ? PMCP_ENOMEM : 0;
  if (!rc && def->n_args) {
    p->args = pmcp__calloc(server, def->n_args, sizeof *p->args);
    if (!p->args)
      rc = PMCP_ENOMEM;
    for (size_t i = 0; !rc && i < def->n_args; i++) {
      p->args[i].name = pmcp__strdup(server, PARG(def, i)->name);
      p->args[i].description = pmcp__strdup(server, PARG(def, i)->description);
      p->args[i].required = PARG(def, i)->required != 0;
      p->n_args = i + 1;
      if (!p->args[i].name || (PARG(def, i)->description && !p->args[i].description))
        rc = PMCP_ENOMEM;
    }
  }
  if (!rc)
    rc = prompt_json(server, p);
  if (!rc)
    rc = pmcp__registry_push(server, (void ***)&server->reg.prompts, &server->reg.n_prompts,
              &server->reg.cap_prompts, p);
  if (rc) {
    pmcp__prompt_free(server, p);
    goto fail_ud;
  }
  p->ud = def->ud;
  p->ud_free = def->ud_free;
  return 0;
fail_ud:
  if (def && def->ud_free)
    def->ud_free(def->ud);
  return rc;
}

int pmcp_server_set_completion(pmcp_server *server, pmcp_complete_fn fn, void *ud,
                               void (*ud_free)(void *ud))
{
  int rc = pmcp__callback_replace(server, fn ? NULL : "no completion handler given",
                                  offsetof(pmcp__registry, complete_ud), ud, ud_free);
  if (!rc)
    server->reg.complete = fn;
  return rc;
}
