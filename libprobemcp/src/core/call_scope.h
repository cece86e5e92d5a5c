/* SPDX-License-Identifier: MIT */
/* The call scope a host's pmcp_scope_fn fills (tool.h): the library owns
 * it, on the stack of whoever asks the hook, and disposes it after. */
#ifndef PMCP_CORE_CALL_SCOPE_H
#define PMCP_CORE_CALL_SCOPE_H

#include <stddef.h>

#include "probemcp/tool.h"

/* NULL parts read as "". */
struct pmcp_call_scope {
  char *workspace, *role, *principal;
};

#define PMCP__CALL_SCOPE_INIT {NULL, NULL, NULL}

void pmcp__call_scope_dispose(pmcp_call_scope *sc);

/* The layout release 0.1 handed to scope hooks (fixed-size strings),
 * which hooks given through options of the older versions still fill. */
typedef struct pmcp__call_scope_0_1 {
  char workspace[129];
  char role[16];
  char principal[72];
} pmcp__call_scope_0_1;

typedef int (*pmcp__scope_fn_0_1)(pmcp_call *call, const char *asked, pmcp__call_scope_0_1 *out,
                                  char *msg, size_t msg_size, void *ud);

/* Asks @p fn for the scope of @p call into @p out (a scope of
 * PMCP__CALL_SCOPE_INIT; the caller disposes it, on failure too). With
 * @p layout_0_1, @p fn is a hook of release 0.1's layout and its answer is
 * copied. @return the hook's code; PMCP_ENOMEM. */
int pmcp__call_scope_ask(pmcp_scope_fn fn, int layout_0_1, pmcp_call *call, const char *asked,
                         pmcp_call_scope *out, char *msg, size_t msg_size, void *ud);

#endif
