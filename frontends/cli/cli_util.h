/* SPDX-License-Identifier: MIT */
/* Helpers shared by the probe commands that use the store: opening it with
 * the global options, reporting failures, reading files, parsing options. */
#ifndef PROBE_CLI_UTIL_H
#define PROBE_CLI_UTIL_H

#include <stdio.h>

#include "commands.h"
#include "probemcp/probemcp.h"
#include <cjson/cJSON.h>

/* Opens the store named by --store (resolved as store.h says) and the
 * tenant named by --tenant. @p flags: PMCP_STORE_CREATE / READONLY; with
 * CREATE the tenant is created too. Prints the reason and returns 1 on
 * failure, else 0. */
int probe_cli_open(const probe_globals *g, unsigned flags, pmcp_store **s, pmcp_tenant *t);
/* Prints "probe CMD: MESSAGE" (the store's message for @p rc) and returns 1. */
int probe_cli_fail(const char *cmd, pmcp_store *s, int rc);
/* printf-style error; returns @p status. */
int probe_cli_err(int status, const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Reads a whole file ("-" is stdin). 0, or -1 with errno set. */
int probe_cli_read_file(const char *path, pmcp_buf *out);
/* Reads @p arg as text: "@FILE" reads FILE, anything else is itself. */
int probe_cli_text_arg(const char *arg, pmcp_buf *out);
/* True for -h / --help. */
int probe_cli_is_help(const char *a);
/* Matches option @p name at argv[*i] ("--name V" or "--name=V"): returns 1
 * and sets *val (advancing *i past a separate value), 0 when it is another
 * argument, -1 when the value is missing (message printed). */
int probe_cli_opt(int argc, char **argv, int *i, const char *name, const char **val,
                  const char *cmd);
/* An option and where its value goes, for probe_cli_opts(). */
typedef struct probe_cli_optv {
  const char *name;
  const char **val;
} probe_cli_optv;
/* probe_cli_opt() over @p opts (ended by a NULL name): 1 when argv[*i] is
 * one of them (its value stored), 0 when not, -1 when the value is
 * missing (message printed). */
int probe_cli_opts(int argc, char **argv, int *i, const probe_cli_optv *opts, const char *cmd);
/* Arguments that may only be --json (sets *json): 0, or 2 after printing
 * the unexpected argument and @p usage. */
int probe_cli_json_arg(const char *cmd, int argc, char **argv, const char *usage, int *json);
/* The end of a command's store call: prints the failure of @p rc, frees
 * @p s, and returns the exit status (0 or 1). */
int probe_cli_done(const char *cmd, pmcp_store *s, int rc);
/* Parses a decimal int64; 0 ok, -1 bad. */
int probe_cli_int(const char *s, int64_t *out);
/* Parses a double; 0 ok, -1 bad. */
int probe_cli_double(const char *s, double *out);
/* Parses an ISO 8601 time (YYYY-MM-DD[THH:MM[:SS[.fff]]][Z|+HH:MM], a space
 * for the T; UTC without a zone) or epoch milliseconds into ms; 0 ok,
 * -1 bad. */
int probe_cli_time(const char *s, int64_t *out);

#endif
