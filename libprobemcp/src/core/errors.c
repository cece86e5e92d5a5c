/* Error names, messages and JSON-RPC mapping, generated from the one table in
 * error.h so the three can never disagree. */
#include "probemcp/error.h"
#include "probemcp/version.h"

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

const char *pmcp_version(void)
{
  return PMCP_VERSION_STRING;
}
