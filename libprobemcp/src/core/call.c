/* SPDX-License-Identifier: MIT */
/* Handler-facing API: typed argument access, result building, and the call
 * context (cancellation, progress, logging). */
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/call.h"
#include "core/jdoc.h"
#include "util/buf.h"
#include "util/json.h"

void pmcp__call_init(pmcp_call *call, pmcp__req *req, pmcp__call_kind kind)
{
  memset(call, 0, sizeof *call);
  call->srv = req->srv;
  call->req = req;
  call->kind = kind;
  call->params = req->params;
}

void pmcp__call_clear_items(pmcp_call *call)
{
  for (size_t i = 0; i < call->n_items; i++) {
    free(call->items[i].text);
    free(call->items[i].json);
  }
  call->n_items = 0;
}

void pmcp__call_dispose(pmcp_call *call)
{
  pmcp__call_clear_items(call);
  free(call->items);
  free(call->structured);
  free(call->description);
  pmcp_buf_dispose(&call->values);
  for (size_t i = 0; i < call->n_owned; i++)
    cJSON_free(call->owned[i]);
  free(call->owned);
  for (size_t i = 0; i < call->n_vars; i++) {
    pmcp__free(call->srv, call->var_names[i]);
    pmcp__free(call->srv, call->var_values[i]);
  }
  pmcp__free(call->srv, call->var_names);
  pmcp__free(call->srv, call->var_values);
  pmcp__mrtr_dispose(call);
  memset(call, 0, sizeof *call);
}

static int push_item(pmcp_call *call, pmcp__item it)
{
  if (call->n_items == call->cap_items) {
    size_t cap = call->cap_items ? call->cap_items * 2 : 4;
    pmcp__item *n = realloc(call->items, cap * sizeof *n);
    if (!n)
      return PMCP_ENOMEM;
    call->items = n;
    call->cap_items = cap;
  }
  call->items[call->n_items++] = it;
  return 0;
}

int pmcp__call_push_json(pmcp_call *call, pmcp_buf *json)
{
  pmcp__item it = {0};
  it.json = pmcp__buf_steal(json, &it.json_len);
  if (!it.json)
    return PMCP_ENOMEM;
  int rc = push_item(call, it);
  if (rc)
    free(it.json);
  return rc;
}

int pmcp__call_push_text(pmcp_call *call, const char *text, size_t len)
{
  pmcp__item it = {0};
  it.is_text = 1;
  it.text = malloc(len + 1);
  if (!it.text)
    return PMCP_ENOMEM;
  memcpy(it.text, text, len);
  it.text[len] = '\0';
  it.len = len;
  int rc = push_item(call, it);
  if (rc)
    free(it.text);
  return rc;
}

int pmcp__call_on_worker(const pmcp_call *call)
{
  return call->req && call->req->on_worker;
}

int pmcp__call_tool_result(pmcp_call *call, pmcp_buf *out)
{
  int rc = pmcp__buf_puts(out, "{\"content\":[");
  for (size_t i = 0; i < call->n_items && !rc; i++) {
    const pmcp__item *it = &call->items[i];
    if (i)
      rc = pmcp__buf_putc(out, ',');
    if (rc)
      break;
    if (it->is_text) {
      rc = pmcp__buf_puts(out, "{\"type\":\"text\",\"text\":");
      if (!rc)
        rc = pmcp__buf_json_string(out, it->text, it->len);
      if (!rc)
        rc = pmcp__buf_putc(out, '}');
    } else {
      rc = pmcp__buf_append(out, it->json, it->json_len);
    }
  }
  if (!rc)
    rc = pmcp__buf_putc(out, ']');
  if (!rc && call->structured) {
    rc = pmcp__buf_puts(out, ",\"structuredContent\":");
    if (!rc)
      rc = pmcp__buf_append(out, call->structured, call->structured_len);
  }
  if (!rc && call->is_error)
    rc = pmcp__buf_puts(out, ",\"isError\":true");
  if (!rc)
    rc = pmcp__buf_putc(out, '}');
  return rc;
}

/* ---- arguments ---- */

static int call_ok(const pmcp_call *call)
{
  return call && call->srv;
}

static const pmcp__arg *spec_of(const pmcp_call *call, const char *name)
{
  if (call->kind != PMCP__CALL_TOOL || !call->tool)
    return NULL;
  return pmcp__tool_arg(call->tool, call->mode, name);
}

/* The argument's value as passed, else its declared default, else NULL. */
static const cJSON *arg_value(const pmcp_call *call, const char *name)
{
  if (!call_ok(call) || !name)
    return NULL;
  const cJSON *v = pmcp__jget(call->args, name);
  if (v)
    return v;
  const pmcp__arg *a = spec_of(call, name);
  return a ? a->default_value : NULL;
}

const char *pmcp_call_mode(const pmcp_call *call)
{
  if (!call_ok(call) || !call->mode)
    return "";
  return call->mode->name;
}

int pmcp_arg_has(const pmcp_call *call, const char *name)
{
  return call_ok(call) && name &&
         pmcp__jget(call->args, name) != NULL;
}

/* @p v when it passes @p is: ENOTFOUND when absent, EINVAL when of
 * another type (the accessors below share these answers). */
static int typed(const cJSON *v, cJSON_bool (*is)(const cJSON *const), const cJSON **out)
{
  *out = v;
  if (!v)
    return PMCP_ENOTFOUND;
  return is(v) ? 0 : PMCP_EINVAL;
}

static cJSON_bool is_integer(const cJSON *const v)
{
  return cJSON_IsNumber(v) && pmcp__is_integral(v->valuedouble);
}

int pmcp_arg_string(const pmcp_call *call, const char *name, const char **out,
                    size_t *len)
{
  const cJSON *v;
  int rc = typed(arg_value(call, name), cJSON_IsString, &v);
  if (rc)
    return rc;
  if (out)
    *out = v->valuestring;
  if (len)
    *len = strlen(v->valuestring);
  return 0;
}

int pmcp_arg_int(const pmcp_call *call, const char *name, int64_t *out)
{
  const cJSON *v;
  int rc = typed(arg_value(call, name), is_integer, &v);
  if (!rc && out)
    *out = (int64_t)v->valuedouble;
  return rc;
}

int pmcp_arg_number(const pmcp_call *call, const char *name, double *out)
{
  const cJSON *v;
  int rc = typed(arg_value(call, name), cJSON_IsNumber, &v);
  if (!rc && out)
    *out = v->valuedouble;
  return rc;
}

int pmcp_arg_bool(const pmcp_call *call, const char *name, int *out)
{
  const cJSON *v;
  int rc = typed(arg_value(call, name), cJSON_IsBool, &v);
  if (!rc && out)
    *out = cJSON_IsTrue(v);
  return rc;
}

size_t pmcp_arg_count(const pmcp_call *call, const char *name)
{
  const cJSON *v = arg_value(call, name);
  if (cJSON_IsArray(v))
    return (size_t)cJSON_GetArraySize(v);
  if (cJSON_IsString(v))
    return 1;
  return 0;
}

/* Item @p i of a list argument (a lone string is a list of one), when it
 * passes @p is. */
static int item_at(const pmcp_call *call, const char *name, size_t i,
                   cJSON_bool (*is)(const cJSON *const), const cJSON **out)
{
  const cJSON *v = arg_value(call, name);
  *out = NULL;
  if (!v)
    return PMCP_ENOTFOUND;
  if (cJSON_IsString(v))
    return i == 0 ? typed(v, is, out) : PMCP_ENOTFOUND;
  if (!cJSON_IsArray(v))
    return PMCP_EINVAL;
  if (i > INT_MAX)
    return PMCP_ENOTFOUND;
  return typed(cJSON_GetArrayItem(v, (int)i), is, out);
}

int pmcp_arg_string_at(const pmcp_call *call, const char *name, size_t i,
                       const char **out)
{
  const cJSON *it;
  int rc = item_at(call, name, i, cJSON_IsString, &it);
  if (!rc && out)
    *out = it->valuestring;
  return rc;
}

int pmcp_arg_number_at(const pmcp_call *call, const char *name, size_t i,
                       double *out)
{
  const cJSON *it;
  int rc = item_at(call, name, i, cJSON_IsNumber, &it);
  if (!rc && out)
    *out = it->valuedouble;
  return rc;
}

/* @p v printed, kept by the call until it ends. */
static int own_json(const pmcp_call *call, const cJSON *v, const char **out)
{
  pmcp_call *c = (pmcp_call *)call; /* the cache is not part of the value */
  if (c->n_owned == c->cap_owned) {
    size_t cap = c->cap_owned ? c->cap_owned * 2 : 4;
    char **n = realloc(c->owned, cap * sizeof *n);
    if (!n)
      return PMCP_ENOMEM;
    c->owned = n;
    c->cap_owned = cap;
  }
  char *text = cJSON_PrintUnformatted(v);
  if (!text)
    return PMCP_ENOMEM;
  c->owned[c->n_owned++] = text;
  *out = text;
  return 0;
}

int pmcp__call_cursor_args(const pmcp_call *call, const char **out)
{
  if (!call_ok(call) || !out)
    return PMCP_EINVAL;
  if (!cJSON_IsObject(call->args) || call->kind != PMCP__CALL_TOOL || !call->tool)
    return pmcp_arg_json(call, NULL, out);
  cJSON *a = cJSON_Duplicate(call->args, 1);
  if (!a)
    return PMCP_ENOMEM;
  const pmcp__tool *t = call->tool;
  cJSON *it = a->child;
  while (it) {
    cJSON *nx = it->next;
    int drop = 0;
    if (strcmp(it->string, "mode") == 0) {
      drop = t->default_mode >= 0 && (size_t)t->default_mode < t->n_modes &&
             cJSON_IsString(it) && strcmp(it->valuestring, t->modes[t->default_mode].name) == 0;
    } else {
      const pmcp__arg *sp = spec_of(call, it->string);
      drop = sp && sp->default_value && cJSON_Compare(it, sp->default_value, 1);
    }
    if (drop)
      cJSON_Delete(cJSON_DetachItemViaPointer(a, it));
    it = nx;
  }
  int rc = own_json(call, a, out);
  cJSON_Delete(a);
  return rc;
}

int pmcp_arg_json(const pmcp_call *call, const char *name, const char **out)
{
  if (!call_ok(call) || !out)
    return PMCP_EINVAL;
  const cJSON *v = name ? arg_value(call, name) : call->args;
  if (!v) {
    if (name)
      return PMCP_ENOTFOUND;
    *out = "{}";
    return 0;
  }
  return own_json(call, v, out);
}

/* ---- enums, array items, object members ---- */

int pmcp_call_mode_index(const pmcp_call *call, size_t *out)
{
  if (!call_ok(call) || !out)
    return PMCP_EINVAL;
  if (call->kind != PMCP__CALL_TOOL || !call->tool || !call->mode)
    return PMCP_ENOTFOUND;
  size_t i = (size_t)(call->mode - call->tool->modes);
  assert(i < call->tool->n_modes);
  *out = i;
  return 0;
}

/* The index of string @p v among @p a's declared values. */
static int enum_index(const pmcp__arg *a, const cJSON *v, size_t *out)
{
  if (!a || !a->enum_values)
    return PMCP_EINVAL;
  for (size_t k = 0; k < a->n_enum; k++)
    if (strcmp(a->enum_values[k], v->valuestring) == 0) {
      if (out)
        *out = k;
      return 0;
    }
  return PMCP_EINVAL;
}

int pmcp_arg_enum(const pmcp_call *call, const char *name, size_t *out)
{
  const cJSON *v;
  int rc = typed(arg_value(call, name), cJSON_IsString, &v);
  return rc ? rc : enum_index(spec_of(call, name), v, out);
}

int pmcp_arg_enum_at(const pmcp_call *call, const char *name, size_t i, size_t *out)
{
  const cJSON *it;
  int rc = item_at(call, name, i, cJSON_IsString, &it);
  return rc ? rc : enum_index(spec_of(call, name), it, out);
}

static cJSON_bool is_any(const cJSON *const v)
{
  return v != NULL;
}

int pmcp_arg_json_at(const pmcp_call *call, const char *name, size_t i, const char **out)
{
  if (!out)
    return PMCP_EINVAL;
  const cJSON *v = arg_value(call, name);
  if (!v)
    return PMCP_ENOTFOUND;
  if (!cJSON_IsArray(v))
    return PMCP_EINVAL;
  const cJSON *it;
  int rc = item_at(call, name, i, is_any, &it);
  return rc ? rc : own_json(call, it, out);
}

size_t pmcp_arg_member_count(const pmcp_call *call, const char *name)
{
  const cJSON *v = arg_value(call, name);
  return cJSON_IsObject(v) ? (size_t)cJSON_GetArraySize(v) : 0;
}

int pmcp_arg_member_key(const pmcp_call *call, const char *name, size_t i, const char **out)
{
  const cJSON *v = arg_value(call, name);
  if (!v)
    return PMCP_ENOTFOUND;
  if (!cJSON_IsObject(v))
    return PMCP_EINVAL;
  const cJSON *m = v->child;
  for (size_t k = 0; m && k < i; k++)
    m = m->next;
  if (!m)
    return PMCP_ENOTFOUND;
  if (out)
    *out = m->string;
  return 0;
}

/* Member @p key of object argument @p name, when it passes @p is. */
static int member(const pmcp_call *call, const char *name, const char *key,
                  cJSON_bool (*is)(const cJSON *const), const cJSON **out)
{
  const cJSON *v = arg_value(call, name);
  *out = NULL;
  if (!v || !key)
    return PMCP_ENOTFOUND;
  if (!cJSON_IsObject(v))
    return PMCP_EINVAL;
  return typed(pmcp__jget(v, key), is, out);
}

int pmcp_arg_member_string(const pmcp_call *call, const char *name, const char *key,
                           const char **out)
{
  const cJSON *m;
  int rc = member(call, name, key, cJSON_IsString, &m);
  if (!rc && out)
    *out = m->valuestring;
  return rc;
}

int pmcp_arg_member_number(const pmcp_call *call, const char *name, const char *key,
                           double *out)
{
  const cJSON *m;
  int rc = member(call, name, key, cJSON_IsNumber, &m);
  if (!rc && out)
    *out = m->valuedouble;
  return rc;
}

int pmcp_arg_member_json(const pmcp_call *call, const char *name, const char *key,
                         const char **out)
{
  if (!out)
    return PMCP_EINVAL;
  const cJSON *m;
  int rc = member(call, name, key, is_any, &m);
  return rc ? rc : own_json(call, m, out);
}

/* ---- results ---- */

static int base64_ok(const char *s)
{
  size_t n = 0;
  for (; s[n]; n++) {
    char c = s[n];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
          c == '+' || c == '/' || c == '='))
      return 0;
  }
  return n % 4 == 0;
}

static int put_kv(pmcp_buf *b, const char *key, const char *val)
{
  if (!val)
    return 0;
  int rc = pmcp__buf_printf(b, ",\"%s\":", key);
  if (!rc)
    rc = pmcp__buf_json_string(b, val, strlen(val));
  return rc;
}

/* Cuts @p text to the server's text_max bytes at a character boundary and
 * adds a note saying so: on top of the token budgets (which only tools
 * that take one apply), one reply of a service must never flood a client's
 * context or a transport's buffers. */
static int push_cut_text(pmcp_call *call, const char *text, size_t len)
{
  const size_t TEXT_RESULT_MAX = call->srv->text_max;
  char note[256];
  int nn = snprintf(note, sizeof note,
                    "\n\n[cut: this text was %zu bytes and only the first %zu are shown; "
                    "narrow the call (a filter, a smaller limit, a page or a step range) to "
                    "get the rest]", len, (size_t)TEXT_RESULT_MAX);
  size_t keep = TEXT_RESULT_MAX - (size_t)nn;
  while (keep > 0 && ((unsigned char)text[keep] & 0xC0) == 0x80)
    keep--;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_append(&b, text, keep);
  if (!rc)
    rc = pmcp__buf_append(&b, note, (size_t)nn);
  if (!rc)
    rc = pmcp__call_push_text(call, b.ptr, b.len);
  pmcp_buf_dispose(&b);
  return rc;
}

int pmcp_result_text(pmcp_call *call, const char *text, size_t len)
{
  if (!call_ok(call) || (!text && len))
    return PMCP_EINVAL;
  if (!text)
    text = "";
  if (!pmcp__utf8_valid(text, len))
    return PMCP_EUTF8;
  if (call->kind == PMCP__CALL_TOOL)
    return call->srv->text_max >= 1024 && len > call->srv->text_max
               ? push_cut_text(call, text, len)
                                 : pmcp__call_push_text(call, text, len);
  if (call->kind == PMCP__CALL_RESOURCE) {
    pmcp_buf b = PMCP_BUF_INIT;
    int rc = pmcp__buf_puts(&b, "{\"uri\":");
    if (!rc)
      rc = pmcp__buf_json_string(&b, call->uri, strlen(call->uri));
    if (!rc && call->resource)
      rc = put_kv(&b, "mimeType", call->resource->mime_type);
    if (!rc)
      rc = pmcp__buf_puts(&b, ",\"text\":");
    if (!rc)
      rc = pmcp__buf_json_string(&b, text, len);
    if (!rc)
      rc = pmcp__buf_putc(&b, '}');
    if (!rc)
      rc = pmcp__call_push_json(call, &b);
    pmcp_buf_dispose(&b);
    return rc;
  }
  return PMCP_EMISUSE;
}

static int media(pmcp_call *call, const char *type, const char *base64,
                 const char *mime)
{
  if (!call_ok(call) || !base64 || !mime)
    return PMCP_EINVAL;
  if (call->kind != PMCP__CALL_TOOL)
    return PMCP_EMISUSE;
  if (!base64_ok(base64))
    return PMCP_EINVAL;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_printf(&b, "{\"type\":\"%s\",\"data\":\"%s\"", type, base64);
  if (!rc)
    rc = put_kv(&b, "mimeType", mime);
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  if (!rc)
    rc = pmcp__call_push_json(call, &b);
  pmcp_buf_dispose(&b);
  return rc;
}

int pmcp_result_image(pmcp_call *call, const char *base64, const char *mime)
{
  return media(call, "image", base64, mime);
}

int pmcp_result_audio(pmcp_call *call, const char *base64, const char *mime)
{
  return media(call, "audio", base64, mime);
}

/* {uri, mimeType, text|blob}: a resource's contents entry. */
static int resource_contents(pmcp_buf *b, const char *uri, const char *mime,
                             const char *key, const char *val, const char *meta)
{
  int rc = pmcp__buf_puts(b, "{\"uri\":");
  if (!rc)
    rc = pmcp__buf_json_string(b, uri, strlen(uri));
  if (!rc)
    rc = put_kv(b, "mimeType", mime);
  if (!rc)
    rc = put_kv(b, key, val);
  if (!rc && meta)
    rc = pmcp__buf_printf(b, ",\"_meta\":%s", meta);
  if (!rc)
    rc = pmcp__buf_putc(b, '}');
  return rc;
}

static int resource_item(pmcp_call *call, const char *uri, const char *mime,
                         const char *key, const char *val)
{
  if (!call_ok(call) || !uri || !val)
    return PMCP_EINVAL;
  if (call->kind != PMCP__CALL_TOOL && call->kind != PMCP__CALL_RESOURCE)
    return PMCP_EMISUSE;
  if (!pmcp__utf8_valid(uri, strlen(uri)) || !pmcp__utf8_valid(val, strlen(val)) ||
      (mime && !pmcp__utf8_valid(mime, strlen(mime))))
    return PMCP_EUTF8;
  if (strcmp(key, "blob") == 0 && !base64_ok(val))
    return PMCP_EINVAL;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = 0;
  if (call->kind == PMCP__CALL_TOOL)
    rc = pmcp__buf_puts(&b, "{\"type\":\"resource\",\"resource\":");
  /* The resource's own _meta (an App's CSP) goes on the contents of the
   * URI that was read. */
  const char *meta = NULL;
  if (call->kind == PMCP__CALL_RESOURCE && call->resource && call->uri &&
      !strcmp(uri, call->uri))
    meta = call->resource->meta;
  if (!rc)
    rc = resource_contents(&b, uri, mime, key, val, meta);
  if (!rc && call->kind == PMCP__CALL_TOOL)
    rc = pmcp__buf_putc(&b, '}');
  if (!rc)
    rc = pmcp__call_push_json(call, &b);
  pmcp_buf_dispose(&b);
  return rc;
}

int pmcp_result_resource_text(pmcp_call *call, const char *uri, const char *mime,
                              const char *text)
{
  return resource_item(call, uri, mime, "text", text);
}

int pmcp_result_resource_blob(pmcp_call *call, const char *uri, const char *mime,
                              const char *base64)
{
  return resource_item(call, uri, mime, "blob", base64);
}

int pmcp_result_resource_link(pmcp_call *call, const char *uri, const char *name,
                              const char *description, const char *mime)
{
  if (!call_ok(call) || !uri || !name)
    return PMCP_EINVAL;
  if (call->kind != PMCP__CALL_TOOL)
    return PMCP_EMISUSE;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_puts(&b, "{\"type\":\"resource_link\",\"uri\":");
  if (!rc)
    rc = pmcp__buf_json_string(&b, uri, strlen(uri));
  if (!rc)
    rc = put_kv(&b, "name", name);
  if (!rc)
    rc = put_kv(&b, "description", description);
  if (!rc)
    rc = put_kv(&b, "mimeType", mime);
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  if (!rc)
    rc = pmcp__call_push_json(call, &b);
  pmcp_buf_dispose(&b);
  return rc;
}

int pmcp_result_structured(pmcp_call *call, const char *json, size_t len)
{
  if (!call_ok(call) || !json)
    return PMCP_EINVAL;
  if (call->kind != PMCP__CALL_TOOL)
    return PMCP_EMISUSE;
  if (!pmcp__utf8_valid(json, len))
    return PMCP_EUTF8;
  cJSON *v = cJSON_ParseWithLength(json, len);
  int obj = cJSON_IsObject(v);
  cJSON_Delete(v);
  if (!obj)
    return PMCP_EINVAL;
  pmcp_buf m = PMCP_BUF_INIT;
  int rc = pmcp__json_minify(&m, json, len);
  if (rc) {
    pmcp_buf_dispose(&m);
    return rc;
  }
  free(call->structured);
  call->structured = pmcp__buf_steal(&m, &call->structured_len);
  return call->structured ? 0 : PMCP_ENOMEM;
}

void pmcp_result_set_error(pmcp_call *call, int is_error)
{
  if (call_ok(call))
    call->is_error = is_error != 0;
}

int pmcp_result_is_error(const pmcp_call *call)
{
  return call && call->is_error;
}

int pmcp_result_errorf(pmcp_call *call, const char *fmt, ...)
{
  if (!call_ok(call) || !fmt)
    return PMCP_EINVAL;
  if (call->kind != PMCP__CALL_TOOL)
    return PMCP_EMISUSE;
  pmcp_buf b = PMCP_BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  int rc = pmcp__buf_vprintf(&b, fmt, ap);
  va_end(ap);
  if (!rc && !pmcp__utf8_valid(b.ptr, b.len))
    rc = PMCP_EUTF8;
  if (!rc) {
    pmcp__call_clear_items(call);
    free(call->structured);
    call->structured = NULL;
    rc = pmcp__call_push_text(call, b.ptr, b.len);
    call->is_error = 1;
  }
  pmcp_buf_dispose(&b);
  return rc;
}

/* ---- prompts ---- */

static int prompt_message(pmcp_call *call, const char *role, pmcp_buf *content)
{
  if (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0)
    return PMCP_EINVAL;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_printf(&b, "{\"role\":\"%s\",\"content\":", role);
  if (!rc)
    rc = pmcp__buf_append(&b, content->ptr, content->len);
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  if (!rc)
    rc = pmcp__call_push_json(call, &b);
  pmcp_buf_dispose(&b);
  return rc;
}

static int prompt_ok(const pmcp_call *call, const char *role)
{
  if (!call_ok(call) || !role)
    return PMCP_EINVAL;
  return call->kind == PMCP__CALL_PROMPT ? 0 : PMCP_EMISUSE;
}

int pmcp_prompt_text(pmcp_call *call, const char *role, const char *text)
{
  int rc = prompt_ok(call, role);
  if (rc)
    return rc;
  if (!text)
    return PMCP_EINVAL;
  if (!pmcp__utf8_valid(text, strlen(text)))
    return PMCP_EUTF8;
  pmcp_buf c = PMCP_BUF_INIT;
  rc = pmcp__buf_puts(&c, "{\"type\":\"text\",\"text\":");
  if (!rc)
    rc = pmcp__buf_json_string(&c, text, strlen(text));
  if (!rc)
    rc = pmcp__buf_putc(&c, '}');
  if (!rc)
    rc = prompt_message(call, role, &c);
  pmcp_buf_dispose(&c);
  return rc;
}

int pmcp_prompt_image(pmcp_call *call, const char *role, const char *base64,
                      const char *mime)
{
  int rc = prompt_ok(call, role);
  if (rc)
    return rc;
  if (!base64 || !mime || !base64_ok(base64))
    return PMCP_EINVAL;
  pmcp_buf c = PMCP_BUF_INIT;
  rc = pmcp__buf_printf(&c, "{\"type\":\"image\",\"data\":\"%s\"", base64);
  if (!rc)
    rc = put_kv(&c, "mimeType", mime);
  if (!rc)
    rc = pmcp__buf_putc(&c, '}');
  if (!rc)
    rc = prompt_message(call, role, &c);
  pmcp_buf_dispose(&c);
  return rc;
}

int pmcp_prompt_resource(pmcp_call *call, const char *role, const char *uri,
                         const char *mime, const char *text)
{
  int rc = prompt_ok(call, role);
  if (rc)
    return rc;
  if (!uri || !text)
    return PMCP_EINVAL;
  if (!pmcp__utf8_valid(text, strlen(text)) || !pmcp__utf8_valid(uri, strlen(uri)))
    return PMCP_EUTF8;
  pmcp_buf c = PMCP_BUF_INIT;
  rc = pmcp__buf_puts(&c, "{\"type\":\"resource\",\"resource\":");
  if (!rc)
    rc = resource_contents(&c, uri, mime, "text", text, NULL);
  if (!rc)
    rc = pmcp__buf_putc(&c, '}');
  if (!rc)
    rc = prompt_message(call, role, &c);
  pmcp_buf_dispose(&c);
  return rc;
}

int pmcp_prompt_description(pmcp_call *call, const char *text)
{
  int rc = prompt_ok(call, "user");
  if (rc)
    return rc;
  if (!text)
    return PMCP_EINVAL;
  if (!pmcp__utf8_valid(text, strlen(text)))
    return PMCP_EUTF8;
  char *d = strdup(text);
  if (!d)
    return PMCP_ENOMEM;
  free(call->description);
  call->description = d;
  return 0;
}

/* ---- completion ---- */

int pmcp_complete_value(pmcp_call *call, const char *value)
{
  if (!call_ok(call) || !value)
    return PMCP_EINVAL;
  if (call->kind != PMCP__CALL_COMPLETE)
    return PMCP_EMISUSE;
  if (!pmcp__utf8_valid(value, strlen(value)))
    return PMCP_EUTF8;
  call->n_values++;
  if (call->n_values > 100) {
    call->has_more = 1; /* the spec caps a response at 100 values */
    return 0;
  }
  int rc = call->n_values > 1 ? pmcp__buf_putc(&call->values, ',') : 0;
  if (!rc)
    rc = pmcp__buf_json_string(&call->values, value, strlen(value));
  return rc;
}

void pmcp_complete_total(pmcp_call *call, int64_t total, int has_more)
{
  if (!call_ok(call) || call->kind != PMCP__CALL_COMPLETE)
    return;
  call->total = total;
  call->has_total = total >= 0;
  call->has_more = has_more != 0;
}

/* ---- context ---- */

pmcp_server *pmcp_call_server(const pmcp_call *call)
{
  return call_ok(call) ? call->srv : NULL;
}

const char *pmcp_call_session(const pmcp_call *call)
{
  return call_ok(call) && call->req ? call->req->sess->id : "";
}

void *pmcp_call_session_ud(const pmcp_call *call)
{
  return call_ok(call) && call->req ? call->req->sess->ud : NULL;
}

const char *pmcp_call_name(const pmcp_call *call)
{
  return call_ok(call) && call->name ? call->name : "";
}

const char *pmcp_call_uri(const pmcp_call *call)
{
  return call_ok(call) && call->uri ? call->uri : "";
}

const char *pmcp_call_uri_var(const pmcp_call *call, const char *var)
{
  if (!call_ok(call) || !var)
    return NULL;
  for (size_t i = 0; i < call->n_vars; i++)
    if (strcmp(call->var_names[i], var) == 0)
      return call->var_values[i];
  return NULL;
}

int pmcp_call_cancelled(const pmcp_call *call)
{
  return call_ok(call) && call->req && atomic_load(&call->req->cancelled);
}

int pmcp_call_progress(pmcp_call *call, double progress, double total,
                       const char *message)
{
  if (!call_ok(call) || !isfinite(progress))
    return PMCP_EINVAL;
  pmcp__req *req = call->req;
  if (!req || !req->progress_token || atomic_load(&req->cancelled))
    return 0;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_printf(&b, "{\"progressToken\":%s,\"progress\":",
                            req->progress_token);
  if (!rc)
    rc = pmcp__buf_number(&b, progress);
  if (!rc && total >= 0 && isfinite(total)) {
    rc = pmcp__buf_puts(&b, ",\"total\":");
    if (!rc)
      rc = pmcp__buf_number(&b, total);
  }
  if (!rc && message) {
    if (!pmcp__utf8_valid(message, strlen(message)))
      rc = PMCP_EUTF8;
    else
      rc = put_kv(&b, "message", message);
  }
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  if (!rc)
    rc = pmcp__notify(call->srv, req->sess, req->id, "notifications/progress", b.ptr);
  pmcp_buf_dispose(&b);
  return rc;
}

int pmcp_call_log(pmcp_call *call, pmcp_log_level level, const char *logger,
                  const char *data_json)
{
  if (!call_ok(call) || (unsigned)level > PMCP_LOG_EMERGENCY)
    return PMCP_EINVAL;
  pmcp__req *req = call->req;
  pthread_mutex_lock(&call->srv->mu);
  /* Modern era: only when the request asked for log messages. */
  int admitted = req && (req->modern ? req->has_log_level && level >= req->log_level
                                     : level >= req->sess->level);
  pthread_mutex_unlock(&call->srv->mu);
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__log_params(&b, level, logger, data_json);
  if (!rc && admitted && !atomic_load(&req->cancelled))
    rc = pmcp__notify(call->srv, req->sess, req->id, "notifications/message", b.ptr);
  pmcp_buf_dispose(&b);
  return rc;
}

int pmcp_call_client_has(const pmcp_call *call, const char *name)
{
  if (!call_ok(call) || !call->req || !name)
    return 0;
  pthread_mutex_lock(&call->srv->mu);
  int has = pmcp__client_has_locked(call->req, name);
  pthread_mutex_unlock(&call->srv->mu);
  return has;
}

int pmcp_call_close_stream(pmcp_call *call)
{
  if (!call_ok(call) || !call->req)
    return PMCP_EINVAL;
  pmcp__req *req = call->req;
  if (!req->batch && !atomic_load(&req->cancelled))
    pmcp__send(call->srv, req->sess, req->id, PMCP_OUT_CLOSE_STREAM, NULL, 0, 0);
  return 0;
}

int pmcp_call_token_budget(const pmcp_call *call)
{
  return call_ok(call) ? call->token_budget : 0;
}
