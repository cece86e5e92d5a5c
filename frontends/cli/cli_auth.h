/* SPDX-License-Identifier: MIT */
/* Shared by probe key|user|audit (cmd_key.c). */
#ifndef PROBE_CLI_AUTH_H
#define PROBE_CLI_AUTH_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "commands.h"
#include "probemcp/probemcp.h"

/* "cli:<login name>": the actor of audit entries written by the CLI. */
void probe_cli_actor(char *out, size_t size);
/* A store opened for writing by a command that audits what it does. */
typedef struct probe_cli_as {
  pmcp_store *s;
  pmcp_tenant t;
  char actor[128];       /* probe_cli_actor() */
} probe_cli_as;
/* Opens the store for writing (probe_cli_open) and gets the actor: 0, or
 * 1 after printing why not. */
int probe_cli_open_as(const probe_globals *g, probe_cli_as *a);
/* Prints a time in ms (a JSON number) as ISO 8601 UTC, "-" for null. */
void probe_cli_print_time(FILE *f, const cJSON *ms);

#endif
