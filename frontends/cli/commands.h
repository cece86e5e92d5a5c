/* SPDX-License-Identifier: MIT */
/* The probe CLI's commands. main.c parses the global options (which come
 * before the command) and dispatches; each cmd_*.c implements one command
 * group and returns the process exit status (0 ok, 1 failure, 2 usage). */
#ifndef PROBE_CLI_COMMANDS_H
#define PROBE_CLI_COMMANDS_H

#include "probemcp/probemcp.h"

typedef struct probe_globals {
  const char *store;   /* --store PATH|URL, or NULL: resolve per store.h */
  const char *tenant;  /* --tenant NAME, or NULL: "default" */
  int quiet;           /* --quiet: no progress on stderr */
} probe_globals;

typedef int (*probe_cmd_fn)(const probe_globals *g, int argc, char **argv);

typedef struct probe_command {
  const char *name;
  const char *summary;  /* one line for `probe --help` */
  probe_cmd_fn run;     /* argv[0] is the command name */
} probe_command;

/* Command groups (one file each). Append new ones here and in main.c. */
int probe_cmd_tokens(const probe_globals *g, int argc, char **argv);
/* store commands (cmd_store.c, cmd_entities.c, cmd_log.c, cmd_set.c,
 * cmd_note.c, cmd_artifact.c, cmd_catalog.c, cmd_demo.c) */
int probe_cmd_init(const probe_globals *g, int argc, char **argv);
int probe_cmd_show(const probe_globals *g, int argc, char **argv);
int probe_cmd_list(const probe_globals *g, int argc, char **argv);
int probe_cmd_search(const probe_globals *g, int argc, char **argv);
int probe_cmd_put(const probe_globals *g, int argc, char **argv);
int probe_cmd_workspace(const probe_globals *g, int argc, char **argv);
int probe_cmd_project(const probe_globals *g, int argc, char **argv);
int probe_cmd_experiment(const probe_globals *g, int argc, char **argv);
int probe_cmd_run(const probe_globals *g, int argc, char **argv);
int probe_cmd_log(const probe_globals *g, int argc, char **argv);
int probe_cmd_set(const probe_globals *g, int argc, char **argv);
int probe_cmd_note(const probe_globals *g, int argc, char **argv);
int probe_cmd_artifact(const probe_globals *g, int argc, char **argv);
int probe_cmd_dataset(const probe_globals *g, int argc, char **argv);
int probe_cmd_checkpoint(const probe_globals *g, int argc, char **argv);
int probe_cmd_source(const probe_globals *g, int argc, char **argv);
int probe_cmd_lineage(const probe_globals *g, int argc, char **argv);
int probe_cmd_demo(const probe_globals *g, int argc, char **argv);
int probe_cmd_import(const probe_globals *g, int argc, char **argv);
int probe_cmd_papers(const probe_globals *g, int argc, char **argv);
/* cmd_embed.c (research helper) */
int probe_cmd_embed(const probe_globals *g, int argc, char **argv);
/* cmd_key.c, cmd_user.c, cmd_audit.c (auth helper) */
int probe_cmd_key(const probe_globals *g, int argc, char **argv);
int probe_cmd_user(const probe_globals *g, int argc, char **argv);
int probe_cmd_audit(const probe_globals *g, int argc, char **argv);

/* cmd_import.c: runs one import (format "mlflow", "tensorboard", "csv",
 * "hf", "arxiv") with progress and a report (probemcp/service.h).
 * Returns the exit status. */
int probe_import_run(const probe_globals *g, const char *cmd, const char *fmt,
                     const char *path, const pmcp_import_options *opts,
                     int dry, int json);

#endif
