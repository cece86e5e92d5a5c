/* SPDX-License-Identifier: MIT */
/* probe dataset|checkpoint|source|lineage: the data catalog, written as
 * pmcp_store_put() records built from options. */
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"

typedef struct optdef {
  const char *opt;     /* "--uri" */
  const char *field;   /* JSON field */
  char type;           /* s string, i integer, n number, b flag (true) */
  const char *negates; /* b: the field its first use sets false instead */
} optdef;

/* A record's writer, its object begun; numbers in shortest round-trip form
 * (the text of exactly the double given). NULL when out of memory
 * (reported). */
static pmcp_json *record_new(const char *cmd)
{
  pmcp_json *o = NULL;
  if (pmcp_json_new(&o, PMCP_JSON_LOSSLESS) != 0 || pmcp_json_object_begin(o) != 0) {
    pmcp_json_free(o);
    probe_cli_err(1, cmd, "cannot write the record: %s", pmcp_strerror(PMCP_ENOMEM));
    return NULL;
  }
  return o;
}

static void field_str(pmcp_json *o, const char *field, const char *v)
{
  pmcp_json_key(o, field);
  pmcp_json_string(o, v);
}

static void field_bool(pmcp_json *o, const char *field, int v)
{
  pmcp_json_key(o, field);
  pmcp_json_bool(o, v);
}

/* Parses options into fields of @p o in their order, positional arguments
 * into @p pos. A negating flag's first use is left out and its field
 * named in *negated, to be written false after the positional fields.
 * Returns 0, 2 on usage errors (printed). */
static int parse(const char *cmd, int argc, char **argv, const optdef *defs, pmcp_json *o,
                 const char **pos, int max_pos, int *npos, const char **negated)
{
  *npos = 0;
  *negated = NULL;
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
    if (d->type == 'b' && d->negates && !*negated) {
      *negated = d->negates;
    } else if (d->type == 'b') {
      field_bool(o, d->field, 1);
    } else if (d->type == 's') {
      field_str(o, d->field, v);
    } else {
      double x;
      int64_t n;
      if (d->type == 'i' ? probe_cli_int(v, &n) : probe_cli_double(v, &x))
        return probe_cli_err(2, cmd, "%s: '%s' is not a %s", d->opt, v,
                             d->type == 'i' ? "whole number" : "number");
      pmcp_json_key(o, d->field);
      pmcp_json_number(o, d->type == 'i' ? (double)n : x);
    }
  }
  return 0;
}

/* parse() wanting exactly @p want positional arguments (@p missing says
 * which when they are not all there). */
static int parse_n(const char *cmd, int argc, char **argv, const optdef *defs, pmcp_json *o,
                   const char **pos, int want, const char *missing, const char **negated)
{
  int npos;
  int rc = parse(cmd, argc, argv, defs, o, pos, want, &npos, negated);
  if (!rc && npos != want)
    rc = probe_cli_err(2, cmd, "%s", missing);
  return rc;
}

/* Stores the record @p o holds (its object still open) as @p kind and
 * prints its ref. The writer's text is the library's exact form: strings
 * escaped as the library writes them, numbers exactly their doubles. */
static int put(const probe_globals *g, const char *cmd, const char *kind, pmcp_json *o)
{
  size_t len = 0;
  const char *json = pmcp_json_object_end(o) == 0 ? pmcp_json_text(o, &len) : NULL;
  if (!json)
    return probe_cli_err(1, cmd, "cannot write the record: %s", pmcp_strerror(pmcp_json_error(o)));
  pmcp_store *s;
  pmcp_tenant t;
  int rc = 1;
  if (probe_cli_open(g, PMCP_STORE_CREATE, &s, &t) == 0) {
    pmcp_buf ref = PMCP_BUF_INIT;
    rc = pmcp_store_put(s, t, kind, json, len, &ref);
    if (rc == 0)
      printf("%s\n", ref.ptr);
    else
      probe_cli_fail(cmd, s, rc);
    pmcp_buf_dispose(&ref);
    pmcp_store_free(s);
  }
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
  if (strcmp(sub, "add") != 0 && strcmp(sub, "version") != 0)
    return probe_cli_err(2, "dataset", "unknown subcommand '%s' (add, version, list)", sub);
  pmcp_json *o = record_new("dataset");
  if (!o)
    return 1;
  const char *pos[1], *neg;
  if (strcmp(sub, "add") == 0) {
    static const optdef defs[] = {{"--id", "id", 's', NULL},
                                  {"--project", "project", 's', NULL},
                                  {"--uri", "uri", 's', NULL},
                                  {"--description", "description", 's', NULL},
                                  {"--unregistered", "unregistered", 'b', "registered"},
                                  {NULL, NULL, 0, NULL}};
    rc = parse_n("dataset", argc - 2, argv + 2, defs, o, pos, 1, "the dataset's name is missing",
                 &neg);
    if (!rc) {
      field_str(o, "name", pos[0]);
      if (neg)
        field_bool(o, neg, 0);
      rc = put(g, "dataset", "dataset", o);
    }
  } else {
    static const optdef defs[] = {{"--version", "version", 's', NULL},
                                  {"--uri", "uri", 's', NULL},
                                  {"--sha256", "sha256", 's', NULL},
                                  {"--size", "size", 'i', NULL},
                                  {"--rows", "rows", 'i', NULL},
                                  {"--description", "description", 's', NULL},
                                  {NULL, NULL, 0, NULL}};
    rc = parse_n("dataset", argc - 2, argv + 2, defs, o, pos, 1,
                 "which dataset? ('probe dataset --help')", &neg);
    if (!rc) {
      field_str(o, "dataset", pos[0]);
      rc = put(g, "dataset", "dataset-version", o);
    }
  }
  pmcp_json_free(o);
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
  static const optdef defs[] = {{"--best", "best", 'b', NULL},
                                {"--uri", "uri", 's', NULL},
                                {"--size", "size", 'i', NULL},
                                {"--metric", "metric", 's', NULL},
                                {"--value", "value", 'n', NULL},
                                {"--not-stored", "not_stored", 'b', "stored"},
                                {NULL, NULL, 0, NULL}};
  pmcp_json *o = record_new("checkpoint");
  if (!o)
    return 1;
  const char *pos[2], *neg;
  rc = parse_n("checkpoint", argc - 2, argv + 2, defs, o, pos, 2,
               "give RUN and STEP ('probe checkpoint --help')", &neg);
  int64_t step;
  if (!rc && probe_cli_int(pos[1], &step))
    rc = probe_cli_err(2, "checkpoint", "STEP must be a whole number, not '%s'", pos[1]);
  if (!rc) {
    field_str(o, "run", pos[0]);
    pmcp_json_key(o, "step");
    pmcp_json_number(o, (double)step);
    if (neg)
      field_bool(o, neg, 0);
    rc = put(g, "checkpoint", "checkpoint", o);
  }
  pmcp_json_free(o);
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
  static const optdef defs[] = {{"--id", "id", 's', NULL},
                                {"--version", "version", 's', NULL},
                                {"--description", "description", 's', NULL},
                                {NULL, NULL, 0, NULL}};
  pmcp_json *o = record_new("source");
  if (!o)
    return 1;
  const char *pos[3], *neg;
  rc = parse_n("source", argc - 2, argv + 2, defs, o, pos, 3,
               "give PROVIDER, KIND and URI ('probe source --help')", &neg);
  if (!rc) {
    field_str(o, "provider", pos[0]);
    field_str(o, "kind", pos[1]);
    field_str(o, "uri", pos[2]);
    rc = put(g, "source", "source", o);
  }
  pmcp_json_free(o);
  return rc;
}

/* A lineage step: NAME, or NAME:DESCRIPTION. */
static void lineage_step(pmcp_json *o, const char *v)
{
  const char *colon = strchr(v, ':');
  pmcp_json_object_begin(o);
  pmcp_json_key(o, "name");
  pmcp_json_string_n(o, v, colon ? (size_t)(colon - v) : strlen(v));
  if (colon)
    field_str(o, "description", colon + 1);
  pmcp_json_object_end(o);
}

/* probe lineage add FROM TO [--relation R] [--step NAME[:DESCRIPTION]]... */
static int lineage_add(const probe_globals *g, int argc, char **argv)
{
  const char *pos[2] = {NULL, NULL}, *rel = NULL, *v;
  const char **steps = calloc((size_t)argc, sizeof *steps); /* each takes an argument */
  if (!steps)
    return probe_cli_err(1, "lineage", "out of memory");
  int npos = 0, nsteps = 0, rc = 0;
  for (int i = 2; i < argc && !rc; i++) {
    int m;
    if ((m = probe_cli_opt(argc, argv, &i, "--relation", &rel, "lineage"))) {
      if (m < 0)
        rc = 2;
    } else if ((m = probe_cli_opt(argc, argv, &i, "--step", &v, "lineage"))) {
      if (m < 0)
        rc = 2;
      else
        steps[nsteps++] = v;
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
  pmcp_json *o = rc ? NULL : record_new("lineage");
  if (!rc && !o)
    rc = 1;
  if (!rc) {
    field_str(o, "from", pos[0]);
    field_str(o, "to", pos[1]);
    if (rel)
      field_str(o, "relation", rel);
    if (nsteps) {
      pmcp_json_key(o, "steps");
      pmcp_json_array_begin(o);
      for (int k = 0; k < nsteps; k++)
        lineage_step(o, steps[k]);
      pmcp_json_array_end(o);
    }
    rc = put(g, "lineage", "lineage", o);
  }
  pmcp_json_free(o);
  free(steps);
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
  if (strcmp(sub, "use") == 0) {
    if (argc != 4)
      return probe_cli_err(2, "lineage", "usage: probe lineage use RUN REF");
    pmcp_json *o = record_new("lineage");
    if (!o)
      return 1;
    field_str(o, "run", argv[2]);
    field_str(o, "uses", argv[3]);
    int rc = put(g, "lineage", "run-use", o);
    pmcp_json_free(o);
    return rc;
  }
  if (strcmp(sub, "add") != 0)
    return probe_cli_err(2, "lineage", "unknown subcommand '%s' (add, use, list)", sub);
  return lineage_add(g, argc, argv);
}
