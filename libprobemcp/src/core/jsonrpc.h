/* SPDX-License-Identifier: MIT */
/* JSON-RPC framing shared by the core (see jsonrpc.c). */
#ifndef PMCP_CORE_JSONRPC_H
#define PMCP_CORE_JSONRPC_H

#include <cjson/cJSON.h>

#include "core/engine.h"

/* Appends the JSON text of request id (or progress token) @p id: a string
 * re-serialized, an integer exactly as written at @p path inside @p raw.
 * PMCP_EPROTO for any other type (null, fraction, bool, object). */
int pmcp__rpc_id_text(const cJSON *id, const char *raw, size_t raw_len,
                      const char *const *path, size_t n_path, pmcp_buf *out);

/* server.c: a request (registered, must be ended) and a notification. */
void pmcp__on_request(pmcp__req *req, const char *method, cJSON *params);
void pmcp__on_notification(pmcp_server *srv, pmcp__session *s,
                           const char *method, cJSON *params, const char *raw,
                           size_t raw_len);

#endif
