/* SPDX-License-Identifier: MIT */
/* The handler context (struct pmcp_call) and the result it accumulates. */
#ifndef PMCP_CORE_CALL_H
#define PMCP_CORE_CALL_H

#include "core/engine.h"

typedef enum pmcp__call_kind {
  PMCP__CALL_TOOL = 1,
  PMCP__CALL_RESOURCE = 2,
  PMCP__CALL_PROMPT = 3,
  PMCP__CALL_COMPLETE = 4
} pmcp__call_kind;

/* One content item (tool content, resource contents entry, prompt message).
 * Text content of a tool keeps its raw UTF-8 in @c text so that the budget
 * code can measure and cut it; everything else is serialized JSON. */
typedef struct pmcp__item {
  int is_text;   /* tool text content: text/len valid, json unused */
  char *text;
  size_t len;
  char *json;    /* serialized item */
  size_t json_len;
  /* the text's token count, when the page that wrote it already counted it
   * (pmcp__page_result), so the budget check does not count it again */
  int counted;
  size_t tokens;
} pmcp__item;

struct pmcp_call {
  pmcp_server *srv;
  pmcp__req *req;
  pmcp__call_kind kind;
  const pmcp__tool *tool;
  const pmcp__mode *mode;
  const pmcp__resource *resource;
  const pmcp__prompt *prompt;
  const char *name;
  const char *uri;
  const cJSON *params; /* the request's params (owned by the request) */
  const cJSON *args; /* arguments (tools, prompts) or context.arguments */
  /* URI template variables (resource templates) */
  char **var_names, **var_values;
  size_t n_vars;
  /* result */
  pmcp__item *items;
  size_t n_items, cap_items;
  char *structured;  /* minified JSON object text, or NULL */
  size_t structured_len;
  int is_error;
  char *description; /* prompts */
  pmcp_buf values;   /* completion values, comma-separated JSON strings */
  size_t n_values;
  int64_t total;
  int has_total, has_more;
  /* strings handed out by pmcp_arg_json(), freed with the call */
  char **owned;
  size_t n_owned, cap_owned;
  int token_budget;
  /* Input asked of the client (mrtr.c). */
  pmcp_buf inputs;      /* "key":{"method":...,"params":...} members */
  size_t n_inputs;
  pmcp_buf kept;        /* "key":response members used in this round */
  size_t n_kept;
  cJSON *state;         /* the verified requestState's responses, or NULL */
  int state_loaded;     /* 1 verified (or absent), -1 refused */
  const char *state_why;
  const char *missing_cap; /* a capability the client did not declare */
  int to_task;          /* pmcp_call_task(): answer with a task (tasks.c) */
};

/* Prepares @p call for @p req. */
void pmcp__call_init(pmcp_call *call, pmcp__req *req, pmcp__call_kind kind);
void pmcp__call_dispose(pmcp_call *call);
/* Appends an item; takes ownership of the buffers. */
int pmcp__call_push_json(pmcp_call *call, pmcp_buf *json);
/* The arguments a cursor is bound to, as JSON text owned by the call: the
 * call's arguments without those equal to their declared default and
 * without `mode` when it is the tool's default mode, so leaving one out
 * and sending it at its default are the same call. */
int pmcp__call_cursor_args(const pmcp_call *call, const char **out);
int pmcp__call_push_text(pmcp_call *call, const char *text, size_t len);
/* Drops every content item (error results replace content). */
void pmcp__call_clear_items(pmcp_call *call);
/* Serializes a tools/call result: content, structuredContent, isError. */
int pmcp__call_tool_result(pmcp_call *call, pmcp_buf *out);
/* budget.c: enforces the budget contract on a budgeted tool's result. */
int pmcp__budget_finalize(pmcp_call *call);
/* mrtr.c: after the handler returns: answers the request with
 * input_required, a missing-capability error or a refused requestState
 * and returns 1; 0 when the handler's own result stands. */
int pmcp__mrtr_finish(pmcp_call *call);
void pmcp__mrtr_dispose(pmcp_call *call);

/* Whether the current thread may block in this call (a worker). */
int pmcp__call_on_worker(const pmcp_call *call);

#endif
