/* Shared by probe key|user|audit (cmd_key.c). */
#ifndef PROBE_CLI_AUTH_H
#define PROBE_CLI_AUTH_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

/* "cli:<login name>": the actor of audit entries written by the CLI. */
void probe_cli_actor(char *out, size_t size);
/* Prints a time in ms (a JSON number) as ISO 8601 UTC, "-" for null. */
void probe_cli_print_time(FILE *f, const cJSON *ms);

#endif
