/* SPDX-License-Identifier: MIT */
/* Diagnostics for the host (the log callback) and the handle's errmsg. The
 * library itself never writes to stdout or stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/engine.h"

static const char *const level_names[] = {
  "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
};

const char *pmcp__level_name(pmcp_log_level level)
{
  if ((unsigned)level > PMCP_LOG_EMERGENCY)
    return "error";
  return level_names[level];
}

int pmcp__level_parse(const char *name, pmcp_log_level *out)
{
  for (int i = 0; i <= PMCP_LOG_EMERGENCY; i++) {
    if (strcmp(name, level_names[i]) == 0) {
      *out = (pmcp_log_level)i;
      return 0;
    }
  }
  return PMCP_EINVAL;
}

void pmcp__log(pmcp_server *srv, pmcp_log_level level, const char *fmt, ...)
{
  if (!srv->log || level < srv->log_level)
    return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  srv->log(level, line, srv->log_ud);
}

int pmcp__err(pmcp_server *srv, int code, const char *fmt, ...)
{
  char line[sizeof srv->errmsg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&srv->err_mu);
  memcpy(srv->errmsg, line, sizeof line);
  pthread_mutex_unlock(&srv->err_mu);
  return code;
}

const char *pmcp_server_errmsg(const pmcp_server *server)
{
  if (!server || server->magic != PMCP__SERVER_MAGIC)
    return "invalid server handle";
  return server->errmsg;
}
