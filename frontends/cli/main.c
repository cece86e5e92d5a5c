/* SPDX-License-Identifier: MIT */
/* probe: the write path of probe-mcp (create, log, import) and its utilities.
 * Global options come before the command: probe [--store S] [--tenant T]
 * <command> ... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "probemcp/probemcp.h"

static const probe_command commands[] = {
  {"init", "create (or upgrade) the store and the tenant", probe_cmd_init},
  {"workspace", "create or list workspaces", probe_cmd_workspace},
  {"project", "create or list projects", probe_cmd_project},
  {"experiment", "create or list experiments", probe_cmd_experiment},
  {"run", "create runs (with --git code state), set status, events", probe_cmd_run},
  {"log", "log metric points (JSON lines on stdin)", probe_cmd_log},
  {"set", "set config, attributes and tags", probe_cmd_set},
  {"note", "write notes, overview pages, hand-offs, the team note", probe_cmd_note},
  {"artifact", "add, label, promote and download artifacts", probe_cmd_artifact},
  {"dataset", "register datasets and their versions", probe_cmd_dataset},
  {"checkpoint", "record checkpoints (step, best, stored)", probe_cmd_checkpoint},
  {"source", "record external sources (Hub ids, buckets, URLs)", probe_cmd_source},
  {"lineage", "record what was made from what", probe_cmd_lineage},
  {"put", "write any catalog record (group, trial, session, file, ...) as JSON", probe_cmd_put},
  {"demo", "fill a fresh store with the bundled demo lab", probe_cmd_demo},
  {"show", "print one entity's record as JSON", probe_cmd_show},
  {"list", "list records of one kind as JSON", probe_cmd_list},
  {"search", "keyword search over the lab", probe_cmd_search},
  {"embed", "cache embeddings of the lab's documents for semantic search", probe_cmd_embed},
  {"tokens", "count or encode text with the o200k_base tokenizer", probe_cmd_tokens},
  {"import", "import MLflow, TensorBoard, CSV or Trainer logs", probe_cmd_import},
  {"papers", "the local papers index (import arXiv metadata)", probe_cmd_papers},
  {"key", "create, list and revoke API keys for probe-mcp-http", probe_cmd_key},
  {"user", "local users of probe-mcp-http and their workspace roles", probe_cmd_user},
  {"audit", "read the audit log (keys, users, sign-ins, write tools)", probe_cmd_audit},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
  fprintf(f,
          "usage: probe [--store PATH|URL] [--tenant NAME] [--wait SECS] [--quiet]\n"
          "             <command> [args]\n"
          "       probe --help | --version\n\n"
          "Global options:\n"
          "  --store S    SQLite path or postgresql:// URL (default: $PROBE_STORE,\n"
          "               else $XDG_DATA_HOME/probe/store.db)\n"
          "  --tenant T   the lab to act in (default: \"default\")\n"
          "  --wait SECS  give up after waiting this long for another writer of a\n"
          "               SQLite store (default: wait as long as it takes)\n"
          "  --quiet      no progress output on stderr\n\n"
          "Commands:\n");
  for (size_t i = 0; i < N_COMMANDS; i++)
    fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n'probe <command> --help' describes a command; see probe(1).\n");
}

int main(int argc, char **argv)
{
  probe_globals g = {NULL, NULL, 0};
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "--version") == 0) {
      printf("probe %s\n", pmcp_version());
      return 0;
    } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
      g.quiet = 1;
    } else if (strcmp(a, "--store") == 0 || strcmp(a, "--tenant") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "probe: %s needs a value\n", a);
        return 2;
      }
      if (a[2] == 's')
        g.store = argv[++i];
      else
        g.tenant = argv[++i];
    } else if (strcmp(a, "--wait") == 0 || strncmp(a, "--wait=", 7) == 0) {
      const char *v = a[6] == '=' ? a + 7 : (i + 1 < argc ? argv[++i] : NULL);
      char *end = NULL;
      double secs = v ? strtod(v, &end) : -1;
      if (!v || !*v || *end || !(secs >= 0) || secs > 1e9) {
        fprintf(stderr, "probe: --wait needs a number of seconds (0 or more)\n");
        return 2;
      }
      /* The SQLite backend reads it when it opens the store. */
      setenv("PROBE_STORE_WAIT", v, 1);
    } else if (strncmp(a, "--store=", 8) == 0) {
      g.store = a + 8;
    } else if (strncmp(a, "--tenant=", 9) == 0) {
      g.tenant = a + 9;
    } else if (a[0] == '-') {
      fprintf(stderr, "probe: unknown option '%s' (global options come before the command)\n", a);
      return 2;
    } else {
      break;
    }
  }
  if (i >= argc) {
    usage(stderr);
    return 2;
  }
  for (size_t c = 0; c < N_COMMANDS; c++)
    if (strcmp(argv[i], commands[c].name) == 0)
      return commands[c].run(&g, argc - i, argv + i);
  fprintf(stderr, "probe: unknown command '%s'; 'probe --help' lists them\n", argv[i]);
  return 2;
}
