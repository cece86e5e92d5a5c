/* SPDX-License-Identifier: MIT */
/* Error names, messages and JSON-RPC mapping, generated from the one table in
 * error.h so the three can never disagree. */
#include "probemcp/error.h"
#include "probemcp/tool_error.h"
#include "probemcp/version.h"

#include <string.h>

const char *pmcp_strerror(int code)
{
  switch (code) {
#define X(name, value, rpc, msg) case value: return msg;
    PMCP_ERROR_TABLE(X)
#undef X
  default: return "unknown error";
  }
}

const char *pmcp_errname(int code)
{
  switch (code) {
#define X(name, value, rpc, msg) case value: return "PMCP_" #name;
    PMCP_ERROR_TABLE(X)
#undef X
  default: return "PMCP_UNKNOWN";
  }
}

int pmcp_error_rpc_code(int code)
{
  switch (code) {
#define X(name, value, rpc, msg) case value: return rpc;
    PMCP_ERROR_TABLE(X)
#undef X
  default: return -32603;
  }
}

const char *pmcp_tool_error_name(int code)
{
  switch (code) {
#define X(name, value, str, meaning) case value: return str;
    PMCP_TOOL_ERROR_TABLE(X)
#undef X
  default: return "internal";
  }
}

const char *pmcp_tool_error_meaning(int code)
{
  switch (code) {
#define X(name, value, str, meaning) case value: return meaning;
    PMCP_TOOL_ERROR_TABLE(X)
#undef X
  default: return "the result could not be made";
  }
}

int pmcp_tool_error_from_name(const char *name)
{
  if (!name)
    return PMCP_TERR_NONE;
#define X(ename, value, str, meaning) if (strcmp(name, str) == 0) return value;
  PMCP_TOOL_ERROR_TABLE(X)
#undef X
  return PMCP_TERR_NONE;
}

const char *pmcp_version(void)
{
  return PMCP_VERSION_STRING;
}
