/* SPDX-License-Identifier: MIT */
/* Argument validation of a tool call against its mode declaration. */
#ifndef PMCP_CORE_VALIDATE_H
#define PMCP_CORE_VALIDATE_H

#include <cjson/cJSON.h>

#include "core/registry.h"

/* Checks @p args (an object, or NULL for none) against @p t. On success
 * sets *mode (NULL for mode-less tools) and returns 0. Otherwise returns
 * PMCP_EINVAL with every problem appended to @p msg, each starting with its
 * JSON pointer (/arguments/...), separated by "; ". */
int pmcp__validate(const pmcp__tool *t, const cJSON *args, const pmcp__mode **mode,
                   pmcp_buf *msg);

#endif
