/* SPDX-License-Identifier: MIT */
/* probe init | show | list | search | put: create a store, read it back,
 * and write any catalog record kind as JSON. */
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"

int probe_cmd_init(const probe_globals *g, int argc, char **argv)
{
  if (argc > 1 && probe_cli_is_help(argv[1])) {
    printf("usage: probe [--store S] [--tenant T] init\n\n"
           "Creates the store (and its folder) if it does not exist, with its server\n"
           "secret, and the tenant (default: \"default\"); upgrades an older store's\n"
           "schema. Prints where the store is.\n");
    return 0;
  }
  if (argc > 1)
    return probe_cli_err(2, "init", "unexpected argument '%s'", argv[1]);
  pmcp_store *s;
  pmcp_tenant t;
  if (probe_cli_open(g, PMCP_STORE_CREATE, &s, &t))
    return 1;
  pmcp_buf where = PMCP_BUF_INIT;
  pmcp_store_describe(&where, g->store);
  printf("store %s (tenant %s)\n", where.ptr, g->tenant ? g->tenant : "default");
  pmcp_buf_dispose(&where);
  pmcp_store_free(s);
  return 0;
}

int probe_cmd_show(const probe_globals *g, int argc, char **argv)
{
  if (argc != 2 || probe_cli_is_help(argv[1])) {
    FILE *f = argc == 2 ? stdout : stderr;
    fprintf(f, "usage: probe show REF\n\n"
               "Prints one entity's whole record as JSON: run:ID, experiment:ID,\n"
               "project:ID, workspace:ID, note:ID[@VERSION], artifact:NAME, dataset:NAME[@V],\n"
               "checkpoint:RUN@best|@latest|@stepN, source:ID, group:ID, trial:ID,\n"
               "session:ID, file:ID, paper:ID, team-note.\n");
    return argc == 2 ? 0 : 2;
  }
  pmcp_store *s;
  pmcp_tenant t;
  if (probe_cli_open(g, PMCP_STORE_READONLY, &s, &t))
    return 1;
  pmcp_buf out = PMCP_BUF_INIT;
  int rc = pmcp_store_get(s, t, argv[1], &out);
  if (rc == 0)
    printf("%s\n", out.ptr);
  else
    probe_cli_fail("show", s, rc);
  pmcp_buf_dispose(&out);
  pmcp_store_free(s);
  return rc ? 1 : 0;
}

static void list_usage(FILE *f)
{
  fprintf(f, "usage: probe list KIND [--parent REF] [--query TEXT] [--filter JSON]\n"
             "                  [--deleted] [--limit N] [--after POS]\n\n"
             "Lists records as JSON ({\"items\",\"total\",\"next\"}). KIND: workspace, project,\n"
             "experiment, run, note, note-version, artifact, artifact-version, dataset,\n"
             "dataset-version, checkpoint, source, lineage, group, trial, session, file,\n"
             "paper, event, series, experiment-version, attribute.\n"
             "Examples: probe list run --parent experiment:baseline --filter '{\"status\":\"running\"}'\n");
}

int probe_cmd_list(const probe_globals *g, int argc, char **argv)
{
  pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
  for (int i = 1; i < argc; i++) {
    const char *v;
    int m;
    if (probe_cli_is_help(argv[i])) {
      list_usage(stdout);
      return 0;
    }
    if ((m = probe_cli_opt(argc, argv, &i, "--parent", &o.parent, "list")) ||
        (m = probe_cli_opt(argc, argv, &i, "--query", &o.query, "list")) ||
        (m = probe_cli_opt(argc, argv, &i, "--filter", &o.filter, "list")) ||
        (m = probe_cli_opt(argc, argv, &i, "--after", &o.after, "list"))) {
      if (m < 0)
        return 2;
    } else if ((m = probe_cli_opt(argc, argv, &i, "--limit", &v, "list"))) {
      int64_t n;
      if (m < 0)
        return 2;
      if (probe_cli_int(v, &n) || n < 1 || n > 1000)
        return probe_cli_err(2, "list", "--limit must be 1-1000, not '%s'", v);
      o.limit = (size_t)n;
    } else if (strcmp(argv[i], "--deleted") == 0) {
      o.include_deleted = 1;
    } else if (argv[i][0] == '-') {
      return probe_cli_err(2, "list", "unknown option '%s'", argv[i]);
    } else if (!o.kind) {
      o.kind = argv[i];
    } else {
      return probe_cli_err(2, "list", "unexpected argument '%s'", argv[i]);
    }
  }
  if (!o.kind) {
    list_usage(stderr);
    return 2;
  }
  pmcp_store *s;
  pmcp_tenant t;
  if (probe_cli_open(g, PMCP_STORE_READONLY, &s, &t))
    return 1;
  pmcp_buf out = PMCP_BUF_INIT;
  int rc = pmcp_store_list(s, t, &o, &out);
  if (rc == 0)
    printf("%s\n", out.ptr);
  else
    probe_cli_fail("list", s, rc);
  pmcp_buf_dispose(&out);
  pmcp_store_free(s);
  return rc ? 1 : 0;
}

int probe_cmd_search(const probe_globals *g, int argc, char **argv)
{
  const char *query = NULL, *kinds = NULL, *after = NULL, *v;
  size_t limit = 20;
  for (int i = 1; i < argc; i++) {
    int m;
    if (probe_cli_is_help(argv[i])) {
      printf("usage: probe search WORDS [--kinds \"run note ...\"] [--limit N] [--after POS]\n\n"
             "Keyword search (BM25) over names, configs, notes, artifacts' text, datasets,\n"
             "sources and sessions; add \"paper\" to --kinds for the papers index.\n");
      return 0;
    }
    if ((m = probe_cli_opt(argc, argv, &i, "--kinds", &kinds, "search")) ||
        (m = probe_cli_opt(argc, argv, &i, "--after", &after, "search"))) {
      if (m < 0)
        return 2;
    } else if ((m = probe_cli_opt(argc, argv, &i, "--limit", &v, "search"))) {
      int64_t n;
      if (m < 0)
        return 2;
      if (probe_cli_int(v, &n) || n < 1 || n > 200)
        return probe_cli_err(2, "search", "--limit must be 1-200, not '%s'", v);
      limit = (size_t)n;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return probe_cli_err(2, "search", "unknown option '%s'", argv[i]);
    } else if (!query) {
      query = argv[i];
    } else {
      return probe_cli_err(2, "search", "give the words as one argument (quote them)");
    }
  }
  if (!query)
    return probe_cli_err(2, "search", "what to search for is missing (probe search --help)");
  pmcp_store *s;
  pmcp_tenant t;
  if (probe_cli_open(g, PMCP_STORE_READONLY, &s, &t))
    return 1;
  pmcp_buf out = PMCP_BUF_INIT;
  int rc = pmcp_store_search(s, t, query, kinds, after, limit, &out);
  if (rc == 0)
    printf("%s\n", out.ptr);
  else
    probe_cli_fail("search", s, rc);
  pmcp_buf_dispose(&out);
  pmcp_store_free(s);
  return rc ? 1 : 0;
}

int probe_cmd_put(const probe_globals *g, int argc, char **argv)
{
  if (argc != 3 || probe_cli_is_help(argv[1])) {
    FILE *f = argc >= 2 && probe_cli_is_help(argv[1]) ? stdout : stderr;
    fprintf(f, "usage: probe put KIND JSON|@FILE|-\n\n"
               "Writes one record described as a JSON object (or one per line with\n"
               "FILE/- holding JSON lines, all in one transaction). KIND: dataset,\n"
               "dataset-version, checkpoint, source, lineage, run-use, group, trial,\n"
               "session, file, paper-link, experiment-version (fields in probe(1)).\n"
               "Prints the ref of each record.\n");
    return f == stdout ? 0 : 2;
  }
  pmcp_buf text = PMCP_BUF_INIT;
  const char *arg = argv[2];
  int lines = arg[0] == '@' || strcmp(arg, "-") == 0;
  if ((strcmp(arg, "-") == 0 ? probe_cli_read_file("-", &text) : probe_cli_text_arg(arg, &text))) {
    pmcp_buf_dispose(&text);
    return probe_cli_err(1, "put", "cannot read %s", arg[0] == '@' ? arg + 1 : "stdin");
  }
  pmcp_store *s;
  pmcp_tenant t;
  if (probe_cli_open(g, PMCP_STORE_CREATE, &s, &t)) {
    pmcp_buf_dispose(&text);
    return 1;
  }
  int rc = pmcp_store_begin(s);
  pmcp_buf ref = PMCP_BUF_INIT;
  size_t line = 0;
  char *p = text.ptr, *end = text.ptr + text.len;
  while (rc == 0 && p < end) {
    char *nl = lines ? memchr(p, '\n', (size_t)(end - p)) : NULL;
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    line++;
    size_t k = 0;
    while (k < len && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r'))
      k++;
    if (k < len) {
      rc = pmcp_store_put(s, t, argv[1], p, len, &ref);
      if (rc == 0)
        printf("%s\n", ref.ptr);
      else if (lines)
        fprintf(stderr, "probe put: %s: line %zu: %s\n", arg[0] == '@' ? arg + 1 : "stdin", line,
                pmcp_store_errmsg(s));
      else
        probe_cli_fail("put", s, rc);
    }
    p += len + (nl ? 1 : 0);
  }
  if (rc == 0)
    rc = pmcp_store_commit(s);
  else
    pmcp_store_rollback(s);
  if (rc && line == 0)
    probe_cli_fail("put", s, rc);
  pmcp_buf_dispose(&ref);
  pmcp_buf_dispose(&text);
  pmcp_store_free(s);
  return rc ? 1 : 0;
}
