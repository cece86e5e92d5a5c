/* SPDX-License-Identifier: MIT */
/* probe dataset|checkpoint|source|lineage: the data catalog, written as
 * pmcp_store_put() records built from options. */
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"

typedef struct optdef {
  const char *opt;    /* "--uri" */
  const char *field;  /* JSON field */
  char type;          /* s string, i integer, n number, b flag (true) */
} optdef;

/* Adds @p v as the text of exactly its double: cJSON's printer would round
 * it (0.30000000000000004 to 0.3). */
static void add_number(cJSON *o, const char *field, double v)
{
  char text[PMCP_JSON_NUMBER_MAX];
  pmcp_json_format_number(v, PMCP_JSON_LOSSLESS, text, sizeof text);
  cJSON_AddRawToObject(o, field, text);
}

/* Parses options into a JSON object, positional arguments into @p pos.
 * Returns 0, 2 on usage errors (printed). */
static int parse(const char *cmd, int argc, char **argv, const optdef *defs, cJSON *o,
                 const char **pos, int max_pos, int *npos)
{
  *npos = 0;
  for (int i = 0; i < argc; i++) {
    const optdef *d = NULL;
    const char *v = NULL;
    int m = 0;
    for (const optdef *k = defs; k->opt && !m; k++) {
      if (k->type == 'b') {
        if (strcmp(argv[i], k->opt) == 0) {
          d = k;
          m = 1;
        }
      } else if ((m = probe_cli_opt(argc, argv, &i, k->opt, &v, cmd))) {
        d = k;
      }
    }
    if (m < 0)
      return 2;
    if (!m) {
      if (argv[i][0] == '-' && argv[i][1])
        return probe_cli_err(2, cmd, "unknown option '%s' ('probe %s --help')", argv[i], cmd);
      if (*npos == max_pos)
        return probe_cli_err(2, cmd, "unexpected argument '%s'", argv[i]);
      pos[(*npos)++] = argv[i];
      continue;
    }
    if (d->type == 'b') {
      cJSON_AddTrueToObject(o, d->field);
    } else if (d->type == 's') {
      cJSON_AddStringToObject(o, d->field, v);
    } else {
      double x;
      int64_t n;
      if (d->type == 'i' ? probe_cli_int(v, &n) : probe_cli_double(v, &x))
        return probe_cli_err(2, cmd, "%s: '%s' is not a %s", d->opt, v,
                             d->type == 'i' ? "whole number" : "number");
      add_number(o, d->field, d->type == 'i' ? (double)n : x);
    }
  }
  return 0;
}

/* parse() wanting exactly @p want positional arguments (@p missing says
 * which when they are not all there). */
static int parse_n(const char *cmd, int argc, char **argv, const optdef *defs, cJSON *o,
                   const char **pos, int want, const char *missing)
{
  int npos;
  int rc = parse(cmd, argc, argv, defs, o, pos, want, &npos);
  if (!rc && npos != want)
    rc = probe_cli_err(2, cmd, "%s", missing);
  return rc;
}

/* A flag given as its negation (--not-stored): @p neg becomes @p field false. */
static void negated(cJSON *o, const char *neg, const char *field)
{
  if (cJSON_GetObjectItem(o, neg)) {
    cJSON_DeleteItemFromObject(o, neg);
    cJSON_AddFalseToObject(o, field);
  }
}

static int put(const probe_globals *g, const char *cmd, const char *kind, cJSON *o)
{
  /* the record in the library's exact form (its strings escaped as the
   * library writes them), whatever cJSON's printer does */
  char *text = cJSON_PrintUnformatted(o);
  pmcp_buf json = PMCP_BUF_INIT;
  int rc = text ? pmcp_json_normalize(text, strlen(text), &json) : PMCP_ENOMEM;
  cJSON_free(text);
  if (rc) {
    pmcp_buf_dispose(&json);
    return probe_cli_err(1, cmd, "cannot write the record: %s", pmcp_strerror(rc));
  }
  pmcp_store *s;
  pmcp_tenant t;
  rc = 1;
  if (probe_cli_open(g, PMCP_STORE_CREATE, &s, &t) == 0) {
    pmcp_buf ref = PMCP_BUF_INIT;
    rc = pmcp_store_put(s, t, kind, json.ptr, json.len, &ref);
    if (rc == 0)
      printf("%s\n", ref.ptr);
    else
      probe_cli_fail(cmd, s, rc);
    pmcp_buf_dispose(&ref);
    pmcp_store_free(s);
  }
  pmcp_buf_dispose(&json);
  return rc ? 1 : 0;
}

static int help_or_missing(const char *cmd, int argc, char **argv, const char *usage)
{
  for (int i = 1; i < argc; i++)
    if (probe_cli_is_help(argv[i])) {
      printf("%s", usage);
      return 0;
    }
  if (argc < 2) {
    fprintf(stderr, "%s", usage);
    return 2;
  }
  return -1;
}

/* A command's start: help, or SUB "list" (probe list CMD ...), or with
 * @p only_add anything but "add" refused. -1: go on with SUB. */
static int start(const probe_globals *g, const char *cmd, int argc, char **argv,
                 const char *usage, int only_add)
{
  int h = help_or_missing(cmd, argc, argv, usage);
  if (h >= 0)
    return h;
  if (strcmp(argv[1], "list") == 0) {
    argv[1] = (char *)cmd;
    return probe_cmd_list(g, argc, argv);
  }
  if (only_add && strcmp(argv[1], "add") != 0)
    return probe_cli_err(2, cmd, "unknown subcommand '%s' (add, list)", argv[1]);
  return -1;
}

int probe_cmd_dataset(const probe_globals *g, int argc, char **argv)
{
  static const char usage[] =
      "usage: probe dataset add NAME [--id ID] [--project P] [--uri URI] [--description D]\n"
      "                             [--unregistered]\n"
      "       probe dataset version DATASET [--version V] [--uri URI] [--sha256 HEX]\n"
      "                             [--size BYTES] [--rows N] [--description D]\n"
      "       probe dataset list [probe list options]\n\n"
      "--unregistered: a data file runs logged without registering it. A version\n"
      "without --version is numbered 1, 2, ...\n";
  int rc = start(g, "dataset", argc, argv, usage, 0);
  if (rc >= 0)
    return rc;
  const char *sub = argv[1];
  cJSON *o = cJSON_CreateObject();
  const char *pos[1];
  if (strcmp(sub, "add") == 0) {
    static const optdef defs[] = {{"--id", "id", 's'}, {"--project", "project", 's'},
                                  {"--uri", "uri", 's'}, {"--description", "description", 's'},
                                  {"--unregistered", "unregistered", 'b'}, {NULL, NULL, 0}};
    rc = parse_n("dataset", argc - 2, argv + 2, defs, o, pos, 1, "the dataset's name is missing");
    if (!rc) {
      cJSON_AddStringToObject(o, "name", pos[0]);
      negated(o, "unregistered", "registered");
      rc = put(g, "dataset", "dataset", o);
    }
  } else if (strcmp(sub, "version") == 0) {
    static const optdef defs[] = {{"--version", "version", 's'}, {"--uri", "uri", 's'},
                                  {"--sha256", "sha256", 's'}, {"--size", "size", 'i'},
                                  {"--rows", "rows", 'i'}, {"--description", "description", 's'},
                                  {NULL, NULL, 0}};
    rc = parse_n("dataset", argc - 2, argv + 2, defs, o, pos, 1,
                 "which dataset? ('probe dataset --help')");
    if (!rc) {
      cJSON_AddStringToObject(o, "dataset", pos[0]);
      rc = put(g, "dataset", "dataset-version", o);
    }
  } else {
    rc = probe_cli_err(2, "dataset", "unknown subcommand '%s' (add, version, list)", sub);
  }
  cJSON_Delete(o);
  return rc;
}

int probe_cmd_checkpoint(const probe_globals *g, int argc, char **argv)
{
  static const char usage[] =
      "usage: probe checkpoint add RUN STEP [--best] [--uri URI] [--size BYTES]\n"
      "                            [--metric KEY --value V] [--not-stored]\n"
      "       probe checkpoint list [probe list options]\n\n"
      "Records a checkpoint of RUN at STEP; --best marks it the run's best (one per\n"
      "run). A checkpoint with a --uri is stored unless --not-stored. Read it back as\n"
      "checkpoint:RUN@best, @latest or @stepN.\n";
  int rc = start(g, "checkpoint", argc, argv, usage, 1);
  if (rc >= 0)
    return rc;
  static const optdef defs[] = {{"--best", "best", 'b'}, {"--uri", "uri", 's'},
                                {"--size", "size", 'i'}, {"--metric", "metric", 's'},
                                {"--value", "value", 'n'}, {"--not-stored", "not_stored", 'b'},
                                {NULL, NULL, 0}};
  cJSON *o = cJSON_CreateObject();
  const char *pos[2];
  rc = parse_n("checkpoint", argc - 2, argv + 2, defs, o, pos, 2,
               "give RUN and STEP ('probe checkpoint --help')");
  int64_t step;
  if (!rc && probe_cli_int(pos[1], &step))
    rc = probe_cli_err(2, "checkpoint", "STEP must be a whole number, not '%s'", pos[1]);
  if (!rc) {
    cJSON_AddStringToObject(o, "run", pos[0]);
    add_number(o, "step", (double)step);
    negated(o, "not_stored", "stored");
    rc = put(g, "checkpoint", "checkpoint", o);
  }
  cJSON_Delete(o);
  return rc;
}

int probe_cmd_source(const probe_globals *g, int argc, char **argv)
{
  static const char usage[] =
      "usage: probe source add PROVIDER KIND URI [--id ID] [--version V] [--description D]\n"
      "       probe source list [probe list options]\n\n"
      "An external source: a Hub id, a bucket, a URL (e.g. 'hf model\n"
      "hf://openai/whisper-large-v2'). The same provider and URI is the same source.\n";
  int rc = start(g, "source", argc, argv, usage, 1);
  if (rc >= 0)
    return rc;
  static const optdef defs[] = {{"--id", "id", 's'}, {"--version", "version", 's'},
                                {"--description", "description", 's'}, {NULL, NULL, 0}};
  cJSON *o = cJSON_CreateObject();
  const char *pos[3];
  rc = parse_n("source", argc - 2, argv + 2, defs, o, pos, 3,
               "give PROVIDER, KIND and URI ('probe source --help')");
  if (!rc) {
    cJSON_AddStringToObject(o, "provider", pos[0]);
    cJSON_AddStringToObject(o, "kind", pos[1]);
    cJSON_AddStringToObject(o, "uri", pos[2]);
    rc = put(g, "source", "source", o);
  }
  cJSON_Delete(o);
  return rc;
}

int probe_cmd_lineage(const probe_globals *g, int argc, char **argv)
{
  static const char usage[] =
      "usage: probe lineage add FROM TO [--relation R] [--step NAME[:DESCRIPTION]]...\n"
      "       probe lineage use RUN REF\n"
      "       probe lineage list REF [--filter '{\"direction\":\"upstream\"}']\n\n"
      "add records that TO was made from FROM (refs of any kind: run:, dataset:NAME@V,\n"
      "source:, checkpoint:RUN@best, artifact:, ...), with the method's steps in\n"
      "order. use records that RUN used REF.\n";
  int h = help_or_missing("lineage", argc, argv, usage);
  if (h >= 0)
    return h;
  const char *sub = argv[1];
  if (strcmp(sub, "list") == 0) {
    if (argc < 3)
      return probe_cli_err(2, "lineage", "usage: probe lineage list REF");
    char *av[16];
    int n = 0;
    av[n++] = (char *)"list";
    av[n++] = (char *)"lineage";
    av[n++] = (char *)"--parent";
    av[n++] = argv[2];
    for (int i = 3; i < argc && n < 15; i++)
      av[n++] = argv[i];
    return probe_cmd_list(g, n, av);
  }
  cJSON *o = cJSON_CreateObject();
  int rc = 0;
  if (strcmp(sub, "use") == 0) {
    if (argc != 4)
      rc = probe_cli_err(2, "lineage", "usage: probe lineage use RUN REF");
    else {
      cJSON_AddStringToObject(o, "run", argv[2]);
      cJSON_AddStringToObject(o, "uses", argv[3]);
      rc = put(g, "lineage", "run-use", o);
    }
  } else if (strcmp(sub, "add") == 0) {
    const char *pos[2] = {NULL, NULL}, *rel = NULL, *v;
    int npos = 0;
    cJSON *steps = cJSON_CreateArray();
    for (int i = 2; i < argc && !rc; i++) {
      int m;
      if ((m = probe_cli_opt(argc, argv, &i, "--relation", &rel, "lineage"))) {
        if (m < 0)
          rc = 2;
      } else if ((m = probe_cli_opt(argc, argv, &i, "--step", &v, "lineage"))) {
        if (m < 0) {
          rc = 2;
          break;
        }
        cJSON *st = cJSON_CreateObject();
        const char *colon = strchr(v, ':');
        char *name = colon ? strndup(v, (size_t)(colon - v)) : strdup(v);
        cJSON_AddStringToObject(st, "name", name);
        if (colon)
          cJSON_AddStringToObject(st, "description", colon + 1);
        free(name);
        cJSON_AddItemToArray(steps, st);
      } else if (argv[i][0] == '-') {
        rc = probe_cli_err(2, "lineage", "unknown option '%s'", argv[i]);
      } else if (npos < 2) {
        pos[npos++] = argv[i];
      } else {
        rc = probe_cli_err(2, "lineage", "unexpected argument '%s'", argv[i]);
      }
    }
    if (!rc && npos != 2)
      rc = probe_cli_err(2, "lineage", "give FROM and TO ('probe lineage --help')");
    if (!rc) {
      cJSON_AddStringToObject(o, "from", pos[0]);
      cJSON_AddStringToObject(o, "to", pos[1]);
      if (rel)
        cJSON_AddStringToObject(o, "relation", rel);
      if (cJSON_GetArraySize(steps)) {
        cJSON_AddItemToObject(o, "steps", steps);
        steps = NULL;
      }
      rc = put(g, "lineage", "lineage", o);
    }
    cJSON_Delete(steps);
  } else {
    rc = probe_cli_err(2, "lineage", "unknown subcommand '%s' (add, use, list)", sub);
  }
  cJSON_Delete(o);
  return rc;
}
