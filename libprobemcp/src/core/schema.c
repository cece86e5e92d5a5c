/* SPDX-License-Identifier: MIT */
/* Builds a tool's inputSchema (JSON Schema 2020-12) from its mode
 * declaration, and its tools/list entry. The schema is the union of every
 * mode's arguments; each property's description says which modes read it,
 * and validate.c enforces the per-mode rules exactly. */
#include <stdlib.h>
#include <string.h>

#include "core/engine.h"
#include "util/buf.h"
#include "util/json.h"

static int put_str(pmcp_buf *b, const char *s)
{
  return pmcp__buf_json_string(b, s, strlen(s));
}

static int put_enum(pmcp_buf *b, char *const *vals, size_t n)
{
  int rc = pmcp__buf_puts(b, ",\"enum\":[");
  for (size_t i = 0; i < n && !rc; i++) {
    if (i)
      rc = pmcp__buf_putc(b, ',');
    if (!rc)
      rc = put_str(b, vals[i]);
  }
  if (!rc)
    rc = pmcp__buf_putc(b, ']');
  return rc;
}

static int put_bounds(pmcp_buf *b, const pmcp__arg *a, const char *lo, const char *hi)
{
  int rc = 0;
  if (a->has_min) {
    rc = pmcp__buf_printf(b, ",\"%s\":", lo);
    if (!rc)
      rc = pmcp__buf_number(b, a->min);
  }
  if (!rc && a->has_max) {
    rc = pmcp__buf_printf(b, ",\"%s\":", hi);
    if (!rc)
      rc = pmcp__buf_number(b, a->max);
  }
  return rc;
}

/* One property. @p note is appended to the description (mode list). */
static int prop_json(pmcp_buf *b, const pmcp__arg *a, const char *note)
{
  int rc = put_str(b, a->name);
  if (!rc)
    rc = pmcp__buf_puts(b, ":{");
  if (rc)
    return rc;
  switch (a->type) {
  case PMCP_T_STRING:
    rc = pmcp__buf_puts(b, "\"type\":\"string\"");
    if (!rc && a->enum_values)
      rc = put_enum(b, a->enum_values, a->n_enum);
    if (!rc)
      rc = put_bounds(b, a, "minLength", "maxLength");
    break;
  case PMCP_T_INTEGER:
  case PMCP_T_NUMBER:
    rc = pmcp__buf_puts(b, a->type == PMCP_T_INTEGER ? "\"type\":\"integer\""
                                                     : "\"type\":\"number\"");
    if (!rc)
      rc = put_bounds(b, a, "minimum", "maximum");
    break;
  case PMCP_T_BOOLEAN:
    rc = pmcp__buf_puts(b, "\"type\":\"boolean\"");
    break;
  case PMCP_T_OBJECT:
    rc = pmcp__buf_puts(b, "\"type\":\"object\"");
    break;
  case PMCP_T_ARRAY:
    rc = pmcp__buf_puts(b, "\"type\":\"array\"");
    if (!rc)
      rc = put_bounds(b, a, "minItems", "maxItems");
    break;
  case PMCP_T_STRING_ARRAY:
  case PMCP_T_NUMBER_ARRAY:
    rc = pmcp__buf_printf(b, "\"type\":\"array\",\"items\":{\"type\":\"%s\"",
                          a->type == PMCP_T_STRING_ARRAY ? "string" : "number");
    if (!rc && a->enum_values)
      rc = put_enum(b, a->enum_values, a->n_enum);
    if (!rc)
      rc = pmcp__buf_putc(b, '}');
    if (!rc)
      rc = put_bounds(b, a, "minItems", "maxItems");
    break;
  case PMCP_T_STRING_OR_STRING_ARRAY:
    rc = pmcp__buf_puts(b, "\"anyOf\":[{\"type\":\"string\"");
    if (!rc && a->enum_values)
      rc = put_enum(b, a->enum_values, a->n_enum);
    if (!rc)
      rc = pmcp__buf_puts(b, "},{\"type\":\"array\",\"items\":{\"type\":\"string\"");
    if (!rc && a->enum_values)
      rc = put_enum(b, a->enum_values, a->n_enum);
    if (!rc)
      rc = pmcp__buf_putc(b, '}');
    if (!rc)
      rc = put_bounds(b, a, "minItems", "maxItems");
    if (!rc)
      rc = pmcp__buf_puts(b, "}]");
    break;
  case PMCP_T_ANY:
    break;
  }
  if (rc)
    return rc;
  int first = a->type == PMCP_T_ANY;
  if (a->description || (note && note[0])) {
    pmcp_buf d = PMCP_BUF_INIT;
    rc = pmcp__buf_puts(&d, a->description ? a->description : "");
    /* the note is a sentence of its own: end the description's first */
    int ended = !d.len || strchr(".!?:", d.ptr[d.len - 1]) != NULL;
    if (!rc && note && note[0])
      rc = pmcp__buf_printf(&d, "%s%s", d.len ? (ended ? " " : ". ") : "", note);
    if (!rc)
      rc = pmcp__buf_puts(b, first ? "\"description\":" : ",\"description\":");
    if (!rc)
      rc = pmcp__buf_json_string(b, d.ptr, d.len);
    pmcp_buf_dispose(&d);
    first = 0;
  }
  if (!rc && a->default_json)
    rc = pmcp__buf_printf(b, "%s\"default\":%s", first ? "" : ",", a->default_json);
  if (!rc)
    rc = pmcp__buf_putc(b, '}');
  return rc;
}

/* The property for a mode argument declared by one or more modes: widest
 * bounds, the union of enums (only when every mode restricts it), and a note
 * naming the modes that read it. */
static int mode_prop(pmcp_buf *b, const pmcp__tool *t, const char *name)
{
  pmcp__arg merged;
  int seen = 0, enum_everywhere = 1;
  pmcp_buf note = PMCP_BUF_INIT;
  char **enums = NULL;
  size_t n_enum = 0, cap_enum = 0;
  int rc = pmcp__buf_puts(&note, "Read by mode");
  size_t n_modes_reading = 0;
  for (size_t i = 0; i < t->n_modes; i++)
    for (size_t k = 0; k < t->modes[i].n_args; k++)
      if (strcmp(t->modes[i].args[k].name, name) == 0)
        n_modes_reading++;
  if (!rc && n_modes_reading > 1)
    rc = pmcp__buf_putc(&note, 's');
  if (!rc)
    rc = pmcp__buf_putc(&note, ' ');
  for (size_t i = 0; i < t->n_modes && !rc; i++) {
    const pmcp__mode *m = &t->modes[i];
    for (size_t k = 0; k < m->n_args && !rc; k++) {
      const pmcp__arg *a = &m->args[k];
      if (strcmp(a->name, name) != 0)
        continue;
      rc = pmcp__buf_printf(&note, "%s%s%s", seen ? ", " : "", m->name,
                            a->required ? " (required)" : "");
      if (!seen) {
        merged = *a;
      } else {
        if (!a->has_min || (merged.has_min && a->min < merged.min)) {
          merged.has_min = a->has_min;
          merged.min = a->min;
        }
        if (!a->has_max || (merged.has_max && a->max > merged.max)) {
          merged.has_max = a->has_max;
          merged.max = a->max;
        }
        if (!merged.description)
          merged.description = a->description;
      }
      seen = 1;
      if (!a->enum_values)
        enum_everywhere = 0;
      for (size_t e = 0; e < a->n_enum && !rc; e++) {
        int dup = 0;
        for (size_t x = 0; x < n_enum; x++)
          if (strcmp(enums[x], a->enum_values[e]) == 0)
            dup = 1;
        if (dup)
          continue;
        if (n_enum == cap_enum) {
          cap_enum = cap_enum ? cap_enum * 2 : 8;
          char **ne = realloc(enums, cap_enum * sizeof *ne);
          if (!ne) {
            rc = PMCP_ENOMEM;
            break;
          }
          enums = ne;
        }
        enums[n_enum++] = a->enum_values[e];
      }
    }
  }
  if (!rc)
    rc = pmcp__buf_putc(&note, '.');
  if (!rc && seen) {
    merged.enum_values = enum_everywhere ? enums : NULL;
    merged.n_enum = enum_everywhere ? n_enum : 0;
    rc = prop_json(b, &merged, note.ptr);
  }
  free(enums);
  pmcp_buf_dispose(&note);
  return rc;
}

static int build_input_schema(pmcp__tool *t, pmcp_buf *b)
{
  int rc = pmcp__buf_puts(b, "{\"type\":\"object\",\"properties\":{");
  int any = 0;
  if (!rc && t->n_modes) {
    rc = pmcp__buf_puts(b, "\"mode\":{\"type\":\"string\",\"enum\":[");
    for (size_t i = 0; i < t->n_modes && !rc; i++) {
      if (i)
        rc = pmcp__buf_putc(b, ',');
      if (!rc)
        rc = put_str(b, t->modes[i].name);
    }
    pmcp_buf d = PMCP_BUF_INIT;
    if (!rc)
      rc = pmcp__buf_puts(&d, "What to do. Modes:");
    for (size_t i = 0; i < t->n_modes && !rc; i++) {
      const pmcp__mode *m = &t->modes[i];
      rc = pmcp__buf_printf(&d, "%s %s", i ? ";" : "", m->name);
      if (!rc && m->description)
        rc = pmcp__buf_printf(&d, ": %s", m->description);
    }
    if (!rc)
      rc = pmcp__buf_putc(&d, '.');
    if (!rc && t->default_mode < 0)
      rc = pmcp__buf_puts(&d, " Required.");
    if (!rc)
      rc = pmcp__buf_puts(b, "],\"description\":");
    if (!rc)
      rc = pmcp__buf_json_string(b, d.ptr, d.len);
    pmcp_buf_dispose(&d);
    if (!rc && t->default_mode >= 0) {
      rc = pmcp__buf_puts(b, ",\"default\":");
      if (!rc)
        rc = put_str(b, t->modes[t->default_mode].name);
    }
    if (!rc)
      rc = pmcp__buf_putc(b, '}');
    any = 1;
  }
  for (size_t i = 0; i < t->n_common && !rc; i++) {
    if (any)
      rc = pmcp__buf_putc(b, ',');
    if (!rc)
      rc = prop_json(b, &t->common[i], NULL);
    any = 1;
  }
  /* Mode arguments in order of first appearance, each once. */
  for (size_t i = 0; i < t->n_modes && !rc; i++) {
    for (size_t k = 0; k < t->modes[i].n_args && !rc; k++) {
      const char *name = t->modes[i].args[k].name;
      int earlier = 0;
      for (size_t j = 0; j < i && !earlier; j++)
        for (size_t x = 0; x < t->modes[j].n_args; x++)
          if (strcmp(t->modes[j].args[x].name, name) == 0)
            earlier = 1;
      if (earlier)
        continue;
      if (any)
        rc = pmcp__buf_putc(b, ',');
      if (!rc)
        rc = mode_prop(b, t, name);
      any = 1;
    }
  }
  if (!rc)
    rc = pmcp__buf_putc(b, '}');
  /* required: mode (without a default) and required common arguments;
   * per-mode requirements are enforced by validation and described. */
  int nreq = 0;
  if (!rc && t->n_modes && t->default_mode < 0) {
    rc = pmcp__buf_puts(b, ",\"required\":[\"mode\"");
    nreq++;
  }
  for (size_t i = 0; i < t->n_common && !rc; i++) {
    if (!t->common[i].required)
      continue;
    rc = pmcp__buf_puts(b, nreq ? "," : ",\"required\":[");
    if (!rc)
      rc = put_str(b, t->common[i].name);
    nreq++;
  }
  if (!rc && nreq)
    rc = pmcp__buf_putc(b, ']');
  if (!rc)
    rc = pmcp__buf_puts(b, ",\"additionalProperties\":false}");
  return rc;
}

static int put_hint(pmcp_buf *b, int *first, const char *name, pmcp_hint h)
{
  if (h != PMCP_HINT_TRUE && h != PMCP_HINT_FALSE)
    return 0;
  int rc = pmcp__buf_printf(b, "%s\"%s\":%s", *first ? "" : ",", name,
                            h == PMCP_HINT_TRUE ? "true" : "false");
  *first = 0;
  return rc;
}

int pmcp__schema_build(pmcp_server *srv, pmcp__tool *t)
{
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = 0;
  if (!t->literal) {
    rc = build_input_schema(t, &b);
    if (!rc && !(t->input_schema = pmcp__strdup(srv, b.ptr)))
      rc = PMCP_ENOMEM;
    pmcp__buf_reset(&b);
  }
  if (!rc)
    rc = pmcp__buf_puts(&b, "{\"name\":");
  if (!rc)
    rc = put_str(&b, t->name);
  if (!rc && t->title) {
    rc = pmcp__buf_puts(&b, ",\"title\":");
    if (!rc)
      rc = put_str(&b, t->title);
  }
  if (!rc && t->description) {
    rc = pmcp__buf_puts(&b, ",\"description\":");
    if (!rc)
      rc = put_str(&b, t->description);
  }
  if (!rc)
    rc = pmcp__buf_printf(&b, ",\"inputSchema\":%s", t->input_schema);
  if (!rc && t->output_schema)
    rc = pmcp__buf_printf(&b, ",\"outputSchema\":%s", t->output_schema);
  if (!rc && (t->read_only | t->destructive | t->idempotent | t->open_world)) {
    int first = 1;
    rc = pmcp__buf_puts(&b, ",\"annotations\":{");
    if (!rc)
      rc = put_hint(&b, &first, "readOnlyHint", t->read_only);
    if (!rc)
      rc = put_hint(&b, &first, "destructiveHint", t->destructive);
    if (!rc)
      rc = put_hint(&b, &first, "idempotentHint", t->idempotent);
    if (!rc)
      rc = put_hint(&b, &first, "openWorldHint", t->open_world);
    if (!rc)
      rc = pmcp__buf_putc(&b, '}');
  }
  if (!rc && t->meta)
    rc = pmcp__buf_printf(&b, ",\"_meta\":%s", t->meta);
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  if (!rc && !(t->list_json = pmcp__strdup(srv, b.ptr)))
    rc = PMCP_ENOMEM;
  if (!rc)
    t->header_params = strstr(t->list_json, "x-mcp-header") != NULL;
  pmcp_buf_dispose(&b);
  return rc;
}

/* Makes @p root tool @p t's input schema and rebuilds its tools/list entry. */
static int set_schema(pmcp_server *srv, pmcp__tool *t, const cJSON *root)
{
  char *text = cJSON_PrintUnformatted(root);
  char *copy = text ? pmcp__strdup(srv, text) : NULL;
  free(text);
  if (!copy)
    return PMCP_ENOMEM;
  pmcp__free(srv, t->input_schema);
  pmcp__free(srv, t->list_json);
  t->input_schema = copy;
  t->list_json = NULL;
  t->literal = 1; /* rebuild only the tools/list entry */
  int rc = pmcp__schema_build(srv, t);
  t->literal = 0;
  return rc;
}

/* Argument declarations say types, bounds and enums only; an argument
 * holding structured values (a list of conditions) gets its schema here,
 * after registration. The declared description stays unless @p json has
 * its own; validate.c still checks what the declaration says. */
int pmcp__schema_set_arg(pmcp_server *srv, const char *tool, const char *arg,
                         const char *json)
{
  pmcp__tool *t = (pmcp__tool *)pmcp__tool_find(srv, tool);
  if (!t || t->literal)
    return PMCP_ENOTFOUND;
  cJSON *root = cJSON_Parse(t->input_schema), *v = cJSON_Parse(json);
  cJSON *props = cJSON_GetObjectItemCaseSensitive(root, "properties");
  cJSON *old = cJSON_GetObjectItemCaseSensitive(props, arg);
  int rc = PMCP_EINVAL;
  if (old && cJSON_IsObject(v)) {
    cJSON *d = cJSON_GetObjectItemCaseSensitive(old, "description");
    if (d && !cJSON_GetObjectItemCaseSensitive(v, "description"))
      cJSON_AddItemToObject(v, "description", cJSON_DetachItemViaPointer(old, d));
    cJSON_ReplaceItemInObjectCaseSensitive(props, arg, v); /* keeps the key */
    v = NULL;
    rc = set_schema(srv, t, root);
  }
  cJSON_Delete(v);
  cJSON_Delete(root);
  return rc;
}

int pmcp__schema_compact(pmcp_server *srv, const char *tool, const char *const *open_lists)
{
  pmcp__tool *t = (pmcp__tool *)pmcp__tool_find(srv, tool);
  if (!t || t->literal)
    return PMCP_ENOTFOUND;
  cJSON *root = cJSON_Parse(t->input_schema);
  cJSON *props = cJSON_GetObjectItemCaseSensitive(root, "properties"), *p;
  if (!props) {
    cJSON_Delete(root);
    return PMCP_ENOMEM;
  }
  cJSON_ArrayForEach(p, props)
  {
    const cJSON *min = cJSON_GetObjectItemCaseSensitive(p, "minimum");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(p, "minItems");
    if (!strcmp(p->string, "token_budget")) {
      /* every tool's (512..8000, default 2000): the refusal names the range,
       * a cut answer says to raise it */
      cJSON_DeleteItemFromObjectCaseSensitive(p, "minimum");
      cJSON_DeleteItemFromObjectCaseSensitive(p, "maximum");
      cJSON_DeleteItemFromObjectCaseSensitive(p, "default");
    } else if (cJSON_IsNumber(min) && (min->valuedouble == 0 || min->valuedouble == 1)) {
      cJSON_DeleteItemFromObjectCaseSensitive(p, "minimum");
    }
    if (cJSON_IsNumber(items) && items->valuedouble == 1)
      cJSON_DeleteItemFromObjectCaseSensitive(p, "minItems");
    cJSON_DeleteItemFromObjectCaseSensitive(p, "minLength");
    cJSON_DeleteItemFromObjectCaseSensitive(p, "maxLength");
    for (size_t i = 0; open_lists && open_lists[i]; i++)
      if (!strcmp(p->string, open_lists[i]))
        cJSON_DeleteItemFromObjectCaseSensitive(p, "maxItems");
  }
  cJSON_DeleteItemFromObjectCaseSensitive(root, "additionalProperties");
  int rc = set_schema(srv, t, root);
  cJSON_Delete(root);
  return rc;
}
