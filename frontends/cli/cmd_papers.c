/* SPDX-License-Identifier: MIT */
/* probe papers: the store's local papers index.
 *
 *   probe papers import FILE   arXiv metadata as JSON lines (the Kaggle /
 *                              OAI snapshot schema), one transaction;
 *                              papers already indexed are skipped
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static void papers_usage(FILE *f)
{
  fprintf(f,
          "usage: probe [--store S] [--tenant T] papers import FILE [--dry-run] [--json]\n\n"
          "Adds arXiv metadata records (JSON lines: id, title, abstract, authors,\n"
          "authors_parsed, categories, versions, update_date, doi, journal-ref,\n"
          "comments, license) to the store's local papers index, which\n"
          "find_papers searches. The file is read a line at a time, so the full\n"
          "arXiv snapshot streams through.\n\n"
          "  --dry-run   read and check every record, store nothing\n"
          "  --json      print the counts as one JSON object\n\n"
          "One transaction: a malformed line is an error naming the line, and\n"
          "leaves the index as it was. Papers already indexed (by arXiv id) are\n"
          "skipped, so importing the same file again adds nothing. On SQLite the\n"
          "search index of the new papers is built once, at the end (the progress\n"
          "line says \"papers index\").\n");
}

int probe_cmd_papers(const probe_globals *g, int argc, char **argv)
{
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    papers_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (strcmp(argv[1], "import") != 0) {
    fprintf(stderr, "probe papers: unknown subcommand '%s' (import)\n", argv[1]);
    return 2;
  }
  const char *path = NULL;
  int dry = 0, json = 0;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      papers_usage(stdout);
      return 0;
    } else if (strcmp(a, "--dry-run") == 0) {
      dry = 1;
    } else if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "probe papers import: unknown option '%s'\n", a);
      return 2;
    } else if (!path) {
      path = a;
    } else {
      fprintf(stderr, "probe papers import: one FILE only ('%s' is extra)\n", a);
      return 2;
    }
  }
  if (!path) {
    papers_usage(stderr);
    return 2;
  }
  pmcp_import_options o = PMCP_IMPORT_OPTIONS_INIT;
  return probe_import_run(g, "papers import", "arxiv", path, &o, dry, json);
}
