/* SPDX-License-Identifier: MIT */
/* Registered tools, resources, prompts and the completion handler: engine
 * copies of the host's declarations, immutable once messages flow. */
#ifndef PMCP_CORE_REGISTRY_H
#define PMCP_CORE_REGISTRY_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "probemcp/tool.h"

typedef struct pmcp__arg {
  char *name;
  pmcp_type type;
  int required;
  char *description;
  int has_min, has_max;
  double min, max;
  char **enum_values; /* NULL-terminated, or NULL */
  size_t n_enum;
  char *default_json; /* minified JSON text, or NULL */
  cJSON *default_value;
} pmcp__arg;

typedef struct pmcp__mode {
  char *name;
  char *description;
  pmcp__arg *args;
  size_t n_args;
} pmcp__mode;

typedef struct pmcp__tool {
  char *name, *title, *description;
  pmcp__mode *modes;
  size_t n_modes;
  int default_mode;     /* index into modes, or -1 */
  pmcp__arg *common;    /* arguments every mode reads */
  size_t n_common;
  int literal;          /* input schema given by the host */
  char *input_schema;   /* minified JSON text (built or given) */
  char *output_schema;  /* minified JSON text or NULL */
  pmcp_hint read_only, destructive, idempotent, open_world;
  unsigned flags;
  pmcp_tool_fn handler;
  void *ud;
  void (*ud_free)(void *ud);
  char *list_json;      /* the tools/list entry, prebuilt */
  int header_params;    /* list_json names an x-mcp-header parameter */
  char *meta;           /* minified `_meta` object, or NULL (meta.c) */
} pmcp__tool;

typedef struct pmcp__resource {
  char *uri;            /* fixed URI, or NULL for a template */
  char *uri_template;
  char *name, *title, *description, *mime_type;
  unsigned flags;
  pmcp_read_fn read;
  void *ud;
  void (*ud_free)(void *ud);
  char *list_json;
  char *meta;           /* minified `_meta` object, or NULL (meta.c) */
} pmcp__resource;

typedef struct pmcp__prompt {
  char *name, *title, *description;
  pmcp_prompt_arg *args; /* copied names/descriptions */
  size_t n_args;
  pmcp_prompt_fn get;
  void *ud;
  void (*ud_free)(void *ud);
  char *list_json;
} pmcp__prompt;

/* One file of a skill: its bytes (NUL-terminated text) and the manifest
 * line of skills/list. Stable address: the resource's read handler
 * holds it. */
typedef struct pmcp__skill_file {
  char *path, *uri;
  const char *mime;     /* the resource's copy */
  char *data;
  size_t size;
  char digest[7 + 64 + 1]; /* "sha256:" + lower-case hex */
} pmcp__skill_file;

typedef struct pmcp__skill {
  char *path;           /* the skill path; its last segment is the name */
  char *uri;            /* skill://<path>/SKILL.md */
  char *frontmatter;    /* compact JSON object */
  pmcp__skill_file **files;
  size_t n_files, cap_files;
  char *entry_json;     /* the Skill entry, rebuilt when files are added */
} pmcp__skill;

/* User data of a server-wide callback, owned by the server: freed when the
 * callback is replaced and by pmcp_server_free(). */
typedef struct pmcp__owned_ud {
  void *ud;
  void (*free)(void *ud);
} pmcp__owned_ud;

typedef struct pmcp__registry {
  pmcp__tool **tools;
  size_t n_tools, cap_tools;
  pmcp__resource **resources;  /* fixed URIs */
  size_t n_resources, cap_resources;
  pmcp__resource **templates;
  size_t n_templates, cap_templates;
  pmcp__prompt **prompts;
  size_t n_prompts, cap_prompts;
  pmcp__skill **skills;        /* skills.c */
  size_t n_skills, cap_skills;
  pmcp_tool_filter_fn tool_filter;
  pmcp__owned_ud tool_filter_ud;
  pmcp_complete_fn complete;
  pmcp__owned_ud complete_ud;
} pmcp__registry;

struct pmcp_server;
void pmcp__registry_free(struct pmcp_server *srv);
void pmcp__resource_free(struct pmcp_server *srv, pmcp__resource *r);
void pmcp__prompt_free(struct pmcp_server *srv, pmcp__prompt *p);
void pmcp__skill_free(struct pmcp_server *srv, pmcp__skill *s);
/* Appends @p item to a registry array. 0 or PMCP_ENOMEM. */
int pmcp__registry_push(struct pmcp_server *srv, void ***arr, size_t *n, size_t *cap,
                        void *item);
/* PMCP_EMISUSE (with errmsg) once the first message was handled. */
int pmcp__registration_open(struct pmcp_server *srv);
/* The one body of the pmcp_server_set_<callback>() calls. Refuses a bad
 * handle, a @p refusal the caller found (e.g. "no handler given"; NULL when
 * none) or a server already running, freeing @p ud then as the API
 * promises; else frees the user data in the pmcp__owned_ud at
 * @p slot_offset inside the registry and puts @p ud there. On 0 the caller
 * stores its function. */
int pmcp__callback_replace(struct pmcp_server *srv, const char *refusal, size_t slot_offset,
                           void *ud, void (*ud_free)(void *ud));
const pmcp__tool *pmcp__tool_find(const struct pmcp_server *srv, const char *name);
const pmcp__prompt *pmcp__prompt_find(const struct pmcp_server *srv, const char *name);

/* Whether the session with @p session_ud sees @p t (the tool filter). */
int pmcp__tool_visible(const struct pmcp_server *srv, const pmcp__tool *t,
                       void *session_ud);

/* catalog.c: (re)builds resource->list_json from its fields and meta. */
int pmcp__resource_json(struct pmcp_server *srv, pmcp__resource *r);
/* meta.c: whether a registered resource is an MCP App (its mimeType is
 * text/html;profile=mcp-app): the server then offers the
 * io.modelcontextprotocol/ui extension. */
int pmcp__ui_offered(const struct pmcp_server *srv);

/* schema.c: builds tool->input_schema (mode tools) and tool->list_json. */
int pmcp__schema_build(struct pmcp_server *srv, pmcp__tool *t);
/* Gives argument @p arg of the registered tool @p tool the property schema
 * @p json (a JSON object; the declared description is kept when it has
 * none) and rebuilds its tools/list entry: for structured values an
 * argument declaration cannot describe. PMCP_ENOTFOUND, PMCP_EINVAL
 * (no such argument, not an object), PMCP_ENOMEM. */
int pmcp__schema_set_arg(struct pmcp_server *srv, const char *tool, const char *arg,
                         const char *json);
/* Leaves out of tool @p tool's advertised schema what an agent never
 * needs told and validation still enforces from the declaration (its
 * refusal names the bound or the argument): string lengths, a count's
 * floor (minimum 0 or 1, minItems 1), token_budget's range and default
 * (every tool's), the size limit of the lists named
 * in @p open_lists (NULL-terminated, may be NULL: lists written by hand,
 * far below it), and additionalProperties (unknown arguments are refused
 * by name). Every session pays each schema's tokens. PMCP_ENOTFOUND,
 * PMCP_ENOMEM. */
int pmcp__schema_compact(struct pmcp_server *srv, const char *tool,
                         const char *const *open_lists);
/* The arg spec for @p name in mode @p mode (or the common list), or NULL. */
const pmcp__arg *pmcp__tool_arg(const pmcp__tool *t, const pmcp__mode *mode,
                                const char *name);
/* Appends a JSON pointer token (RFC 6901 escaping). */
int pmcp__pointer_append(pmcp_buf *b, const char *token);

/* validate.c: true for a finite integral double within +-2^53. */
int pmcp__is_integral(double d);

#endif
