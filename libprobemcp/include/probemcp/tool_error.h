/* SPDX-License-Identifier: MIT */
/**
 * @file tool_error.h
 * The codes of tool errors: what the "error" member of a tool's error
 * object says, one table for the engine and the bundled toolsets. Listed
 * with their meaning in pmcp_tool_errors(7).
 */
#ifndef PROBEMCP_TOOL_ERROR_H
#define PROBEMCP_TOOL_ERROR_H

#include "common.h"

PMCP_BEGIN_DECLS

/* The codes of tool errors, one table: X(NAME, value, code, meaning). A
 * tool's own failure is an isError result holding one JSON object
 * {"error": code, "message": ...}; the engine's refusals (arguments,
 * cursors, budgets) and the bundled toolsets use these codes and no others
 * (pmcp_tool_errors(7)). A value and its code never change and are never
 * reused. */
#define PMCP_TOOL_ERROR_TABLE(X)                                             \
  X(INVALID_ARGUMENT, 1, "invalid_argument",                                 \
    "an argument is missing, mistyped, out of range or malformed")          \
  X(NOT_FOUND, 2, "not_found", "what the call names does not exist")        \
  X(DENIED, 3, "denied", "the caller may not do this")                       \
  X(BUSY, 4, "busy", "too many long calls of this caller run: retry later")  \
  X(STORE, 5, "store_error", "the store cannot be read or reached")          \
  X(INVALID_SQL, 6, "invalid_sql", "the SQL statement is refused")           \
  X(SQL, 7, "sql_error", "the SQL statement failed while running")           \
  X(PROVIDER, 8, "provider_error", "the papers provider failed")             \
  X(NOT_TEXT, 9, "not_text", "the content asked for is not text")            \
  X(INVALID_CURSOR, 10, "invalid_cursor", "the cursor cannot continue")      \
  X(TOKEN_BUDGET_TOO_SMALL, 11, "token_budget_too_small",                    \
    "the next item needs a larger token_budget")                             \
  X(BUDGET_EXCEEDED, 12, "budget_exceeded",                                  \
    "the tool's result did not fit its token budget")                        \
  X(RESULT_SHAPE, 13, "tool_result_shape",                                   \
    "the tool's result is not one JSON object in one text item")             \
  X(INTERNAL, 14, "internal", "the result could not be made")

/** Tool error codes (PMCP_TOOL_ERROR_TABLE). @since 0.2 */
typedef enum pmcp_tool_error {
  PMCP_TERR_NONE = 0, /**< no error */
#define PMCP_X_TENUM(name, value, code, meaning) PMCP_TERR_##name = value,
  PMCP_TOOL_ERROR_TABLE(PMCP_X_TENUM)
#undef PMCP_X_TENUM
  PMCP_TERR_MAX_ = 14
} pmcp_tool_error;

/** The code string of tool error @p code ("invalid_argument", ...): the
 *  value of the error object's "error" member. Never NULL: an unknown
 *  value (or PMCP_TERR_NONE) gives "internal". Static storage.
 *  @since 0.2 */
PMCP_API const char *pmcp_tool_error_name(int code);
/** A one-line English meaning of tool error @p code; never NULL. Static
 *  storage. @since 0.2 */
PMCP_API const char *pmcp_tool_error_meaning(int code);
/** The tool error whose code string is @p name, or PMCP_TERR_NONE.
 *  @since 0.2 */
PMCP_API int pmcp_tool_error_from_name(const char *name);

PMCP_END_DECLS

#endif
