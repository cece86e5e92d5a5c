/* SPDX-License-Identifier: MIT */
/* Registration of tools: copies of the host's declarations, checked once so
 * that calls never meet a malformed declaration; the registry's lifetime,
 * the tool filter and list pagination. Resources and prompts: catalog.c. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/engine.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/abi.h"

/* ---- freeing ---- */

static void arg_dispose(pmcp_server *srv, pmcp__arg *a)
{
  pmcp__free(srv, a->name);
  pmcp__free(srv, a->description);
  if (a->enum_values) {
    for (size_t i = 0; i < a->n_enum; i++)
      pmcp__free(srv, a->enum_values[i]);
    pmcp__free(srv, a->enum_values);
  }
  pmcp__free(srv, a->default_json);
  cJSON_Delete(a->default_value);
}

static void args_free(pmcp_server *srv, pmcp__arg *args, size_t n)
{
  for (size_t i = 0; i < n; i++)
    arg_dispose(srv, &args[i]);
  pmcp__free(srv, args);
}

static void tool_free(pmcp_server *srv, pmcp__tool *t)
{
  if (!t)
    return;
  for (size_t i = 0; i < t->n_modes; i++) {
    pmcp__free(srv, t->modes[i].name);
    pmcp__free(srv, t->modes[i].description);
    args_free(srv, t->modes[i].args, t->modes[i].n_args);
  }
  pmcp__free(srv, t->modes);
  args_free(srv, t->common, t->n_common);
  pmcp__free(srv, t->name);
  pmcp__free(srv, t->title);
  pmcp__free(srv, t->description);
  pmcp__free(srv, t->input_schema);
  pmcp__free(srv, t->output_schema);
  pmcp__free(srv, t->list_json);
  pmcp__free(srv, t->meta);
  if (t->ud_free)
    t->ud_free(t->ud);
  pmcp__free(srv, t);
}

void pmcp__registry_free(pmcp_server *srv)
{
  pmcp__registry *r = &srv->reg;
  for (size_t i = 0; i < r->n_tools; i++)
    tool_free(srv, r->tools[i]);
  for (size_t i = 0; i < r->n_resources; i++)
    pmcp__resource_free(srv, r->resources[i]);
  for (size_t i = 0; i < r->n_templates; i++)
    pmcp__resource_free(srv, r->templates[i]);
  for (size_t i = 0; i < r->n_prompts; i++)
    pmcp__prompt_free(srv, r->prompts[i]);
  pmcp__free(srv, r->tools);
  pmcp__free(srv, r->resources);
  pmcp__free(srv, r->templates);
  pmcp__free(srv, r->prompts);
  for (size_t i = 0; i < r->n_skills; i++)
    pmcp__skill_free(srv, r->skills[i]);
  pmcp__free(srv, r->skills);
  if (r->complete_ud.free)
    r->complete_ud.free(r->complete_ud.ud);
  if (r->tool_filter_ud.free)
    r->tool_filter_ud.free(r->tool_filter_ud.ud);
  memset(r, 0, sizeof *r);
}

/* ---- lookup ---- */

const pmcp__tool *pmcp__tool_find(const pmcp_server *srv, const char *name)
{
  /* The first byte inline: most names differ there, and this runs on
   * every tools/call. */
  for (size_t i = 0; i < srv->reg.n_tools; i++) {
    const char *n = srv->reg.tools[i]->name;
    if (n[0] == name[0] && strcmp(n, name) == 0)
      return srv->reg.tools[i];
  }
  return NULL;
}

int pmcp_server_tool_read_only(const pmcp_server *srv, const char *name)
{
  const pmcp__tool *t = srv && name ? pmcp__tool_find(srv, name) : NULL;
  return t && t->read_only == PMCP_HINT_TRUE;
}

const pmcp__prompt *pmcp__prompt_find(const pmcp_server *srv, const char *name)
{
  for (size_t i = 0; i < srv->reg.n_prompts; i++)
    if (strcmp(srv->reg.prompts[i]->name, name) == 0)
      return srv->reg.prompts[i];
  return NULL;
}

int pmcp__registry_push(pmcp_server *srv, void ***arr, size_t *n, size_t *cap,
                        void *item)
{
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 8;
    void **a = pmcp__realloc(srv, *arr, c * sizeof *a);
    if (!a)
      return PMCP_ENOMEM;
    *arr = a;
    *cap = c;
  }
  (*arr)[(*n)++] = item;
  return 0;
}

int pmcp__registration_open(pmcp_server *srv)
{
  if (atomic_load(&srv->started))
    return pmcp__err(srv, PMCP_EMISUSE,
                     "registration must happen before the first message is handled");
  return 0;
}

/* ---- copying declarations ---- */

static int type_known(pmcp_type t)
{
  return t >= PMCP_T_STRING && t <= PMCP_T_ANY;
}

static int is_string_type(pmcp_type t)
{
  return t == PMCP_T_STRING || t == PMCP_T_STRING_ARRAY ||
         t == PMCP_T_STRING_OR_STRING_ARRAY;
}

/* Whether @p v is acceptable as a value of type @p t (defaults). */
static int value_has_type(const cJSON *v, pmcp_type t)
{
  switch (t) {
  case PMCP_T_STRING: return cJSON_IsString(v);
  case PMCP_T_INTEGER:
    return cJSON_IsNumber(v) && pmcp__is_integral(v->valuedouble);
  case PMCP_T_NUMBER: return cJSON_IsNumber(v);
  case PMCP_T_BOOLEAN: return cJSON_IsBool(v);
  case PMCP_T_OBJECT: return cJSON_IsObject(v);
  case PMCP_T_ARRAY: return cJSON_IsArray(v);
  case PMCP_T_STRING_ARRAY:
  case PMCP_T_NUMBER_ARRAY:
  case PMCP_T_STRING_OR_STRING_ARRAY: {
    if (t == PMCP_T_STRING_OR_STRING_ARRAY && cJSON_IsString(v))
      return 1;
    if (!cJSON_IsArray(v))
      return 0;
    for (const cJSON *it = v->child; it; it = it->next)
      if (t == PMCP_T_NUMBER_ARRAY ? !cJSON_IsNumber(it) : !cJSON_IsString(it))
        return 0;
    return 1;
  }
  case PMCP_T_ANY: return 1;
  }
  return 0;
}

static int arg_copy(pmcp_server *srv, const char *tool, const char *where,
                    pmcp__arg *dst, const pmcp_arg_spec *src)
{
  memset(dst, 0, sizeof *dst);
  if (!src->name || !src->name[0])
    return pmcp__err(srv, PMCP_EINVAL, "tool '%s' %s: an argument has no name",
                     tool, where);
  if (!type_known(src->type))
    return pmcp__err(srv, PMCP_EINVAL, "tool '%s' %s: argument '%s' has unknown type %d",
                     tool, where, src->name, (int)src->type);
  if (src->has_min && src->has_max && src->min > src->max)
    return pmcp__err(srv, PMCP_EINVAL, "tool '%s' %s: argument '%s' has min > max",
                     tool, where, src->name);
  if (src->enum_values && !is_string_type(src->type))
    return pmcp__err(srv, PMCP_EINVAL,
                     "tool '%s' %s: argument '%s' has enum values but is not a string",
                     tool, where, src->name);
  dst->name = pmcp__strdup(srv, src->name);
  dst->description = pmcp__strdup(srv, src->description);
  if (!dst->name || (src->description && !dst->description))
    return PMCP_ENOMEM;
  dst->type = src->type;
  dst->required = src->required != 0;
  dst->has_min = src->has_min != 0;
  dst->has_max = src->has_max != 0;
  dst->min = src->min;
  dst->max = src->max;
  if (src->enum_values) {
    size_t n = 0;
    while (src->enum_values[n])
      n++;
    if (n == 0)
      return pmcp__err(srv, PMCP_EINVAL, "tool '%s' %s: argument '%s' has an empty enum",
                       tool, where, src->name);
    dst->enum_values = pmcp__calloc(srv, n + 1, sizeof *dst->enum_values);
    if (!dst->enum_values)
      return PMCP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
      dst->enum_values[i] = pmcp__strdup(srv, src->enum_values[i]);
      if (!dst->enum_values[i])
        return PMCP_ENOMEM;
      dst->n_enum = i + 1;
    }
  }
  if (src->default_json) {
    size_t len = strlen(src->default_json);
    dst->default_value = cJSON_ParseWithLength(src->default_json, len);
    pmcp_buf m = PMCP_BUF_INIT;
    if (!dst->default_value || pmcp__json_minify(&m, src->default_json, len)) {
      pmcp_buf_dispose(&m);
      return pmcp__err(srv, PMCP_EINVAL,
                       "tool '%s' %s: argument '%s' has a default that is not JSON",
                       tool, where, src->name);
    }
    dst->default_json = pmcp__strdup(srv, m.ptr);
    pmcp_buf_dispose(&m);
    if (!dst->default_json)
      return PMCP_ENOMEM;
    if (!value_has_type(dst->default_value, dst->type))
      return pmcp__err(srv, PMCP_EINVAL,
                       "tool '%s' %s: the default of argument '%s' does not have its type",
                       tool, where, src->name);
  }
  return 0;
}

/* The element sizes of a definition's arrays: the caller's (version 2),
 * else those of the first layouts, which end where these fields end. */
#define ARG_SPEC_SIZE_1 (offsetof(pmcp_arg_spec, default_json) + sizeof(const char *))
#define MODE_SPEC_SIZE_1 (offsetof(pmcp_mode_spec, n_args) + sizeof(size_t))

static size_t arg_stride(const pmcp_tool_def *def)
{
  return def->version >= 2 && def->arg_spec_size ? def->arg_spec_size : ARG_SPEC_SIZE_1;
}

static size_t mode_stride(const pmcp_tool_def *def)
{
  return def->version >= 2 && def->mode_spec_size ? def->mode_spec_size : MODE_SPEC_SIZE_1;
}

/* Element @p i of an array whose elements are @p stride bytes apart; only
 * the fields of the first layout are read through it (later ones exist
 * when the stride covers them). */
static const void *nth(const void *base, size_t stride, size_t i)
{
  return (const char *)base + i * stride;
}

static int args_copy(pmcp_server *srv, const char *tool, const char *where,
                     pmcp__arg **out, size_t *n_out, const pmcp_arg_spec *src,
                     size_t n, size_t extra, size_t stride)
{
  *out = NULL;
  *n_out = 0;
  if (n && !src)
    return pmcp__err(srv, PMCP_EINVAL, "tool '%s' %s: n_args without args", tool, where);
  if (n + extra == 0)
    return 0;
  pmcp__arg *a = pmcp__calloc(srv, n + extra, sizeof *a);
  if (!a)
    return PMCP_ENOMEM;
  *out = a;
  for (size_t i = 0; i < n; i++) {
    int rc = arg_copy(srv, tool, where, &a[i], nth(src, stride, i));
    *n_out = i + 1;
    if (rc)
      return rc;
    if (strcmp(a[i].name, "mode") == 0)
      return pmcp__err(srv, PMCP_EINVAL,
                       "tool '%s' %s: 'mode' is reserved for the mode selector",
                       tool, where);
    for (size_t k = 0; k < i; k++)
      if (strcmp(a[k].name, a[i].name) == 0)
        return pmcp__err(srv, PMCP_EINVAL, "tool '%s' %s: argument '%s' declared twice",
                         tool, where, a[i].name);
  }
  return 0;
}

static const pmcp__arg *find_arg(const pmcp__arg *a, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(a[i].name, name) == 0)
      return &a[i];
  return NULL;
}

const pmcp__arg *pmcp__tool_arg(const pmcp__tool *t, const pmcp__mode *mode,
                                const char *name)
{
  const pmcp__arg *a = find_arg(t->common, t->n_common, name);
  if (!a && mode)
    a = find_arg(mode->args, mode->n_args, name);
  return a;
}

/* Budgeted tools take token_budget and cursor in every mode. */
static int add_budget_args(pmcp_server *srv, pmcp__tool *t)
{
  static const pmcp_arg_spec budget = {
    "token_budget", PMCP_T_INTEGER, 0,
    "Most o200k tokens of the answer; past it: cursor=next_cursor.", 1, 1, 512, 8000, NULL,
    "2000"};
  static const pmcp_arg_spec cursor = {
    "cursor", PMCP_T_STRING, 0,
    "An answer's next_cursor, to go on.",
    0, 0, 0, 0, NULL, NULL};
  static const pmcp_arg_spec budget_offset = {
    "token_budget", PMCP_T_INTEGER, 0,
    "Past it: offset=next_offset.",
    1, 1, 512, 8000, NULL, "2000"};
  const pmcp_arg_spec *extra[] = {&budget, &cursor};
  size_t n_extra = 2;
  if (t->flags & PMCP_TOOL_OFFSET_PAGED) {
    extra[0] = &budget_offset; /* paged by offset: no cursor to take */
    n_extra = 1;
  }
  for (size_t i = 0; i < n_extra; i++) {
    if (find_arg(t->common, t->n_common, extra[i]->name))
      continue;
    int rc = arg_copy(srv, t->name, "(budget)", &t->common[t->n_common], extra[i]);
    t->n_common++;
    if (rc)
      return rc;
  }
  return 0;
}

static int valid_tool_name(const char *s)
{
  size_t n = strlen(s);
  if (n == 0 || n > 128)
    return 0;
  for (; *s; s++) {
    char c = *s;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '_' || c == '-' || c == '.'))
      return 0;
  }
  return 1;
}

static int schema_text(pmcp_server *srv, const char *tool, const char *what,
                       const char *json, char **out)
{
  size_t len = strlen(json);
  cJSON *v = cJSON_ParseWithLength(json, len);
  int obj = cJSON_IsObject(v);
  cJSON_Delete(v);
  if (!obj)
    return pmcp__err(srv, PMCP_EINVAL, "tool '%s': %s is not a JSON object", tool, what);
  pmcp_buf m = PMCP_BUF_INIT;
  int rc = pmcp__json_minify(&m, json, len);
  if (!rc) {
    *out = pmcp__strdup(srv, m.ptr);
    if (!*out)
      rc = PMCP_ENOMEM;
  }
  pmcp_buf_dispose(&m);
  return rc;
}

static int tool_copy(pmcp_server *srv, pmcp__tool *t, const pmcp_tool_def *def)
{
  int rc;
  t->name = pmcp__strdup(srv, def->name);
  t->title = pmcp__strdup(srv, def->title);
  t->description = pmcp__strdup(srv, def->description);
  if (!t->name || (def->title && !t->title) || (def->description && !t->description))
    return PMCP_ENOMEM;
  t->read_only = def->read_only;
  t->destructive = def->destructive;
  t->idempotent = def->idempotent;
  t->open_world = def->open_world;
  t->flags = def->flags;
  t->handler = def->handler;
  t->default_mode = -1;
  if (def->output_schema_json &&
      (rc = schema_text(srv, def->name, "output_schema_json", def->output_schema_json,
                        &t->output_schema)))
    return rc;
  if (def->input_schema_json) {
    if (def->n_modes || def->n_args || def->default_mode)
      return pmcp__err(srv, PMCP_EINVAL,
                       "tool '%s': a literal input schema excludes modes and args",
                       def->name);
    if (def->flags & PMCP_TOOL_BUDGETED)
      return pmcp__err(srv, PMCP_EINVAL,
                       "tool '%s': a budgeted tool needs declared arguments", def->name);
    t->literal = 1;
    return schema_text(srv, def->name, "input_schema_json", def->input_schema_json,
                       &t->input_schema);
  }
  size_t extra = (def->flags & PMCP_TOOL_BUDGETED) ? 2 : 0;
  if (arg_stride(def) < ARG_SPEC_SIZE_1 || mode_stride(def) < MODE_SPEC_SIZE_1)
    return pmcp__err(srv, PMCP_EINVAL,
                     "tool '%s': arg_spec_size or mode_spec_size is smaller than "
                     "the first layout", def->name);
  rc = args_copy(srv, def->name, "common", &t->common, &t->n_common, def->args,
                 def->n_args, extra, arg_stride(def));
  if (rc)
    return rc;
  if (extra && (rc = add_budget_args(srv, t)))
    return rc;
  if (def->n_modes && !def->modes)
    return pmcp__err(srv, PMCP_EINVAL, "tool '%s': n_modes without modes", def->name);
  if (def->n_modes) {
    t->modes = pmcp__calloc(srv, def->n_modes, sizeof *t->modes);
    if (!t->modes)
      return PMCP_ENOMEM;
  }
  for (size_t i = 0; i < def->n_modes; i++) {
    const pmcp_mode_spec *ms = nth(def->modes, mode_stride(def), i);
    pmcp__mode *m = &t->modes[i];
    t->n_modes = i + 1;
    if (!ms->name || !ms->name[0])
      return pmcp__err(srv, PMCP_EINVAL, "tool '%s': mode %zu has no name", def->name, i);
    for (size_t k = 0; k < i; k++)
      if (strcmp(t->modes[k].name, ms->name) == 0)
        return pmcp__err(srv, PMCP_EINVAL, "tool '%s': mode '%s' declared twice",
                         def->name, ms->name);
    m->name = pmcp__strdup(srv, ms->name);
    m->description = pmcp__strdup(srv, ms->description);
    if (!m->name || (ms->description && !m->description))
      return PMCP_ENOMEM;
    char where[160];
    snprintf(where, sizeof where, "mode '%s'", ms->name);
    rc = args_copy(srv, def->name, where, &m->args, &m->n_args, ms->args, ms->n_args, 0,
                   arg_stride(def));
    if (rc)
      return rc;
    for (size_t a = 0; a < m->n_args; a++) {
      if (find_arg(t->common, t->n_common, m->args[a].name))
        return pmcp__err(srv, PMCP_EINVAL,
                         "tool '%s' %s: argument '%s' is already a common argument",
                         def->name, where, m->args[a].name);
      /* One name, one type: the schema has a single property per name. */
      for (size_t k = 0; k < i; k++) {
        const pmcp__arg *o = find_arg(t->modes[k].args, t->modes[k].n_args,
                                      m->args[a].name);
        if (o && o->type != m->args[a].type)
          return pmcp__err(srv, PMCP_EINVAL,
                           "tool '%s': argument '%s' has different types in modes "
                           "'%s' and '%s'", def->name, m->args[a].name,
                           t->modes[k].name, ms->name);
      }
    }
  }
  if (def->default_mode) {
    for (size_t i = 0; i < t->n_modes; i++)
      if (strcmp(t->modes[i].name, def->default_mode) == 0)
        t->default_mode = (int)i;
    if (t->default_mode < 0)
      return pmcp__err(srv, PMCP_EINVAL, "tool '%s': default_mode '%s' is not a mode",
                       def->name, def->default_mode);
  }
  return 0;
}

int pmcp_server_add_tool(pmcp_server *server, const pmcp_tool_def *def)
{
  int rc;
  if (!server || server->magic != PMCP__SERVER_MAGIC) {
    rc = PMCP_EMISUSE;
    goto fail_ud;
  }
  if (!def || !PMCP__VERSION_OK(def->version, PMCP_TOOL_DEF_VERSION)) {
    rc = pmcp__err(server, PMCP_EINVAL, "tool definition missing or of unknown version");
    goto fail_ud;
  }
  if ((rc = pmcp__registration_open(server)))
    goto fail_ud;
  if (!def->name || !valid_tool_name(def->name)) {
    rc = pmcp__err(server, PMCP_EINVAL,
                   "tool name '%s' must be 1-128 characters of A-Z a-z 0-9 _ - .",
                   def->name ? def->name : "");
    goto fail_ud;
  }
  if (!def->handler) {
    rc = pmcp__err(server, PMCP_EINVAL, "tool '%s' has no handler", def->name);
    goto fail_ud;
  }
  if (def->flags & ~(unsigned)(PMCP_TOOL_BLOCKING | PMCP_TOOL_BUDGETED | PMCP_TOOL_OPEN_WEB |
                                  PMCP_TOOL_TASK | PMCP_TOOL_TASK_REQUIRED |
                                  PMCP_TOOL_OFFSET_PAGED | PMCP_TOOL_TASK_ON_DEMAND)) {
    rc = pmcp__err(server, PMCP_EINVAL, "tool '%s' has unknown flags", def->name);
    goto fail_ud;
  }
  if (pmcp__tool_find(server, def->name)) {
    rc = pmcp__err(server, PMCP_EEXIST, "tool '%s' is already registered", def->name);
    goto fail_ud;
  }
  pmcp__tool *t = pmcp__calloc(server, 1, sizeof *t);
  if (!t) {
    rc = PMCP_ENOMEM;
    goto fail_ud;
  }
  rc = tool_copy(server, t, def);
  if (!rc)
    rc = pmcp__schema_build(server, t);
  if (!rc)
    rc = pmcp__registry_push(server, (void ***)&server->reg.tools, &server->reg.n_tools,
              &server->reg.cap_tools, t);
  if (rc) {
    tool_free(server, t); /* t->ud_free is unset: freed below */
    goto fail_ud;
  }
  t->ud = def->ud;
  t->ud_free = def->ud_free;
  return 0;
fail_ud:
  if (def && def->ud_free)
    def->ud_free(def->ud);
  return rc;
}

int pmcp_server_tool_schema(pmcp_server *server, const char *tool, pmcp_buf *out)
{
  if (!server || server->magic != PMCP__SERVER_MAGIC)
    return PMCP_EMISUSE;
  if (!tool || !out)
    return PMCP_EINVAL;
  const pmcp__tool *t = pmcp__tool_find(server, tool);
  if (!t)
    return pmcp__err(server, PMCP_ENOTFOUND, "no tool named '%s'", tool);
  return pmcp__buf_puts(out, t->input_schema);
}

int pmcp__callback_replace(pmcp_server *server, const char *refusal, size_t slot_offset,
                           void *ud, void (*ud_free)(void *ud))
{
  int rc = 0;
  if (!server || server->magic != PMCP__SERVER_MAGIC)
    rc = PMCP_EMISUSE;
  else if (refusal)
    rc = pmcp__err(server, PMCP_EINVAL, "%s", refusal);
  else
    rc = pmcp__registration_open(server);
  if (rc) {
    if (ud_free)
      ud_free(ud);
    return rc;
  }
  pmcp__owned_ud *slot = (pmcp__owned_ud *)((char *)&server->reg + slot_offset);
  if (slot->free)
    slot->free(slot->ud);
  slot->ud = ud;
  slot->free = ud_free;
  return 0;
}

int pmcp_server_set_tool_filter(pmcp_server *server, pmcp_tool_filter_fn fn, void *ud,
                                void (*ud_free)(void *ud))
{
  int rc = pmcp__callback_replace(server, NULL, offsetof(pmcp__registry, tool_filter_ud), ud,
                                  ud_free);
  if (!rc)
    server->reg.tool_filter = fn;
  return rc;
}

int pmcp__tool_visible(const pmcp_server *srv, const pmcp__tool *t, void *session_ud)
{
  const pmcp__registry *r = &srv->reg;
  return !r->tool_filter || r->tool_filter(t->name, session_ud, r->tool_filter_ud.ud);
}

/* ---- pagination: cursors are "<list tag><offset>", opaque to clients ---- */

int pmcp__page_start(pmcp__req *req, cJSON *params, char tag, size_t count,
                     size_t *offset)
{
  *offset = 0;
  cJSON *c = cJSON_GetObjectItemCaseSensitive(params, "cursor");
  if (!c || cJSON_IsNull(c))
    return 0;
  const char *s = cJSON_IsString(c) ? c->valuestring : NULL;
  size_t off = 0;
  int ok = s && s[0] == tag && s[1] >= '1' && s[1] <= '9';
  for (const char *p = ok ? s + 1 : ""; ok && *p; p++) {
    if (*p < '0' || *p > '9' || off > (SIZE_MAX - 9) / 10)
      ok = 0;
    else
      off = off * 10 + (size_t)(*p - '0');
  }
  if (!ok || off >= count) {
    pmcp__req_error(req, -32602,
                    "Invalid params: unknown or expired cursor; list again without it",
                    NULL);
    return PMCP_ECURSOR;
  }
  *offset = off;
  return 0;
}

int pmcp__page_next(pmcp_buf *out, char tag, size_t next, size_t count)
{
  if (next >= count)
    return 0;
  return pmcp__buf_printf(out, ",\"nextCursor\":\"%c%zu\"", tag, next);
}
