/* SPDX-License-Identifier: MIT */
/**
 * @file error.h
 * Error codes. Every function that can fail returns 0 on success or one of
 * these negative codes; detail (what argument, which JSON pointer) is kept on
 * the handle (pmcp_server_errmsg()). A code's value never changes and is
 * never reused.
 */
#ifndef PROBEMCP_ERROR_H
#define PROBEMCP_ERROR_H

#include "common.h"

PMCP_BEGIN_DECLS

/* The one table: X(NAME, value, JSON-RPC code, message). */
#define PMCP_ERROR_TABLE(X)                                                  \
  X(OK, 0, 0, "success")                                                     \
  X(ENOMEM, -1, -32603, "out of memory")                                     \
  X(EINVAL, -2, -32602, "invalid argument")                                  \
  X(EMISUSE, -3, -32603, "library misuse")                                   \
  X(ENOTFOUND, -4, -32602, "not found")                                      \
  X(EEXIST, -5, -32602, "already exists")                                    \
  X(EPARSE, -6, -32700, "parse error")                                       \
  X(EPROTO, -7, -32600, "invalid request")                                   \
  X(ETOOBIG, -8, -32600, "too large")                                        \
  X(EBUDGET, -9, -32602, "does not fit the token budget")                    \
  X(ECURSOR, -10, -32602, "invalid cursor")                                  \
  X(ECANCELLED, -11, -32603, "cancelled")                                    \
  X(ETIMEOUT, -12, -32603, "timed out")                                      \
  X(EIO, -13, -32603, "input/output error")                                  \
  X(ESTORE, -14, -32603, "store error")                                      \
  X(EREADONLY, -15, -32603, "read-only")                                     \
  X(EDENIED, -16, -32603, "permission denied")                               \
  X(EUNSUPPORTED, -17, -32601, "not supported")                              \
  X(EINTERNAL, -18, -32603, "internal error")                                \
  X(EUSER, -19, -32603, "callback failed")                                   \
  X(ESTALE, -20, -32602, "source changed")                                   \
  X(ECORRUPT, -21, -32603, "corrupt data")                                   \
  X(EREMOTE, -22, -32603, "peer returned an error")                          \
  X(ENOMETHOD, -23, -32601, "method not found")                              \
  X(EUTF8, -24, -32602, "invalid UTF-8")                                     \
  X(EINPUT, -25, -32603, "input required from the client")

typedef enum pmcp_error {
#define PMCP_X_ENUM(name, value, rpc, msg) PMCP_##name = value,
  PMCP_ERROR_TABLE(PMCP_X_ENUM)
#undef PMCP_X_ENUM
  PMCP_ERROR_MIN_ = -25
} pmcp_error;

/** A short English description of @p code; never NULL (unknown codes get
 *  "unknown error"). Static storage. */
PMCP_API const char *pmcp_strerror(int code);
/** The code's name, e.g. "PMCP_EINVAL"; never NULL. Static storage. */
PMCP_API const char *pmcp_errname(int code);
/** The JSON-RPC error code a protocol failure with @p code maps to. */
PMCP_API int pmcp_error_rpc_code(int code);

PMCP_END_DECLS

#endif
