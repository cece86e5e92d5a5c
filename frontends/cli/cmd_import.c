/* SPDX-License-Identifier: MIT */
/* probe import: bring what a lab already has into the store.
 *
 *   probe import mlflow DIR          an MLflow file store (mlruns/)
 *   probe import tensorboard PATH    event files (a file or a folder)
 *   probe import csv FILE|DIR        Lightning metrics.csv (+ hparams.yaml)
 *                                    or step,key,value CSV
 *   probe import hf FILE             a Trainer's trainer_state.json
 *
 * Every import is one transaction (all or nothing) and idempotent (what is
 * already stored is skipped). The library does the work
 * (libprobemcp/src/import/); this file parses options, shows progress on
 * stderr when it is a terminal and prints what was imported. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "commands.h"
#include "probemcp/probemcp.h"
#include "probemcp/store.h"

static const struct {
  const char *name, *what, *arg;
} formats[] = {
    {"mlflow", "an MLflow file store (the mlruns/ folder)", "DIR"},
    {"tensorboard", "TensorBoard event files (one file, or a folder searched recursively)", "PATH"},
    {"csv", "Lightning CSVLogger metrics.csv (+ hparams.yaml beside it), a folder of them, or step,key,value CSV", "FILE|DIR"},
    {"hf", "a Hugging Face Trainer's trainer_state.json", "FILE"},
};

static void import_usage(FILE *f)
{
  fprintf(f, "usage: probe import FORMAT PATH [options]\n\nFormats:\n");
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    fprintf(f, "  %-12s %s %s\n               %s\n", formats[i].name,
            formats[i].name, formats[i].arg, formats[i].what);
  fprintf(f, "\n'probe import FORMAT --help' describes one format.\n");
}

static void format_usage(FILE *f, const char *fmt)
{
  int mlflow = strcmp(fmt, "mlflow") == 0;
  const char *arg = "PATH", *what = "";
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (strcmp(formats[i].name, fmt) == 0) {
      arg = formats[i].arg;
      what = formats[i].what;
    }
  fprintf(f, "usage: probe [--store S] [--tenant T] import %s %s [options]\n\n"
             "Imports %s.\n\n",
          fmt, arg, what);
  if (mlflow)
    fprintf(f,
            "Every MLflow experiment becomes an experiment of one project; runs keep\n"
            "their params (params/...), tags (tags/...), metrics with steps and\n"
            "timestamps, status, times, code state (mlflow.source.* tags) and text\n"
            "artifacts. Runs with lifecycle_stage: deleted and experiments under\n"
            ".trash/ are imported as deleted (hidden unless asked for).\n\n"
            "  --project NAME    the project (default: the store folder's name, or\n"
            "                    its parent's when the folder is called mlruns)\n");
  else
    fprintf(f,
            "  --project NAME    file the runs in this project (default: unfiled)\n"
            "  --experiment NAME file the runs in this experiment of the project\n"
            "                    (project \"imports\" unless --project is given)\n"
            "  --name NAME       the run's name (one-run imports; default: from the\n"
            "                    folder or file name)\n");
  fprintf(f,
          "  --dry-run         read and check everything, store nothing\n"
          "  --json            print the counts as one JSON object\n\n"
          "The import is one transaction: a corrupt or truncated input is an error\n"
          "naming the file and the line or byte offset, and leaves the store as it\n"
          "was. Importing the same data again adds nothing. Progress goes to\n"
          "stderr when it is a terminal (not with --quiet).\n");
}

typedef struct progress {
  int on;
  struct timespec last;
  int shown;
} progress;

static void on_progress(const char *what, uint64_t done, uint64_t total,
                        void *ud)
{
  progress *p = ud;
  if (!p->on)
    return;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  double dt = (double)(now.tv_sec - p->last.tv_sec) +
              (double)(now.tv_nsec - p->last.tv_nsec) / 1e9;
  if (p->shown && dt < 0.1 && done < total)
    return;
  p->last = now;
  p->shown = 1;
  if (strcmp(what, "mlflow") == 0)
    fprintf(stderr, "\r\033[Kimporting %s: %llu/%llu runs", what,
            (unsigned long long)done, (unsigned long long)total);
  else if (strcmp(what, "papers index") == 0)
    fprintf(stderr, "\r\033[Kbuilding the papers search index");
  else if (strcmp(what, "hf") == 0)
    fprintf(stderr, "\r\033[Kimporting %s: %llu/%llu log entries", what,
            (unsigned long long)done, (unsigned long long)total);
  else
    fprintf(stderr, "\r\033[Kimporting %s: %.0f%%", what,
            total ? 100.0 * (double)done / (double)total : 100.0);
  fflush(stderr);
}

#define PL(n) ((n) == 1 ? "" : "s")

static void report(const char *fmt, const char *path, const pmcp_import_counts *n,
                   int dry, int json)
{
  if (json) {
    printf("{\"format\":\"%s\",\"dry_run\":%s,\"experiments\":%llu,\"runs\":%llu,"
           "\"deleted_runs\":%llu,\"runs_skipped\":%llu,\"attributes\":%llu,"
           "\"points\":%llu,\"histograms\":%llu,\"artifacts\":%llu,"
           "\"artifacts_skipped\":%llu,\"checkpoints\":%llu,\"papers\":%llu,"
           "\"papers_skipped\":%llu,\"files\":%llu,\"values_skipped\":%llu,"
           "\"folders_skipped\":%llu}\n",
           fmt, dry ? "true" : "false", (unsigned long long)n->experiments,
           (unsigned long long)n->runs, (unsigned long long)n->deleted_runs,
           (unsigned long long)n->runs_skipped, (unsigned long long)n->attrs,
           (unsigned long long)n->points, (unsigned long long)n->histograms,
           (unsigned long long)n->artifacts,
           (unsigned long long)n->artifacts_skipped,
           (unsigned long long)n->checkpoints, (unsigned long long)n->papers,
           (unsigned long long)n->papers_skipped, (unsigned long long)n->files,
           (unsigned long long)n->values_skipped,
           (unsigned long long)n->folders_skipped);
    return;
  }
  const char *verb = dry ? "would import" : "imported";
  if (strcmp(fmt, "arxiv") == 0) {
    printf("%s %llu paper%s from %s", verb, (unsigned long long)n->papers, PL(n->papers), path);
    if (n->papers_skipped)
      printf(" (%llu already in the index)", (unsigned long long)n->papers_skipped);
    printf("\n");
    return;
  }
  printf("%s from %s:", verb, path);
  if (strcmp(fmt, "mlflow") == 0)
    printf(" %llu experiment%s,", (unsigned long long)n->experiments, PL(n->experiments));
  printf(" %llu run%s", (unsigned long long)n->runs, PL(n->runs));
  if (n->deleted_runs)
    printf(" (%llu deleted)", (unsigned long long)n->deleted_runs);
  printf(", %llu attribute%s, %llu metric point%s, %llu histogram%s",
         (unsigned long long)n->attrs, PL(n->attrs), (unsigned long long)n->points,
         PL(n->points), (unsigned long long)n->histograms, PL(n->histograms));
  if (strcmp(fmt, "mlflow") == 0)
    printf(", %llu text artifact%s", (unsigned long long)n->artifacts, PL(n->artifacts));
  if (n->checkpoints)
    printf(", %llu checkpoint%s", (unsigned long long)n->checkpoints, PL(n->checkpoints));
  printf("\n");
  if (n->runs_skipped)
    printf("skipped %llu run%s already in the store\n",
           (unsigned long long)n->runs_skipped, PL(n->runs_skipped));
  if (n->artifacts_skipped)
    printf("left out %llu binary or large (> 1 MiB) artifacts\n",
           (unsigned long long)n->artifacts_skipped);
  if (n->values_skipped)
    printf("left out %llu summary values of other kinds (images, audio, text, "
           "other plugins)\n",
           (unsigned long long)n->values_skipped);
  if (n->folders_skipped)
    printf("left out %llu folders without a meta.yaml (not runs)\n",
           (unsigned long long)n->folders_skipped);
}

int probe_import_run(const probe_globals *g, const char *cmd, const char *fmt,
                     const char *path, const pmcp_import_options *opts, int dry,
                     int json)
{
  pmcp_store *st = NULL;
  pmcp_tenant t = {0};
  int rc;
  /* an import creates the store and the tenant on first use */
  if (!dry && probe_cli_open(g, PMCP_STORE_CREATE, &st, &t) != 0)
    return 1;
  progress pg = {0};
  pg.on = !g->quiet && isatty(STDERR_FILENO);
  pmcp_import_options o = *opts;
  o.progress = on_progress;
  o.progress_ud = &pg;
  pmcp_import_counts n = PMCP_IMPORT_COUNTS_INIT;
  pmcp_buf err = PMCP_BUF_INIT;
  rc = pmcp_import(st, t, fmt, path, &o, &n, &err);
  if (pg.shown)
    fprintf(stderr, "\r\033[K");
  if (rc) {
    fprintf(stderr, "probe %s: %s\n", cmd, err.len ? err.ptr : pmcp_strerror(rc));
    if (!dry)
      fprintf(stderr, "probe %s: nothing was imported; the store is unchanged\n", cmd);
  } else {
    report(fmt, path, &n, dry, json);
  }
  pmcp_buf_dispose(&err);
  pmcp_store_free(st);
  return rc ? 1 : 0;
}

int probe_cmd_import(const probe_globals *g, int argc, char **argv)
{
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    import_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const char *fmt = argv[1];
  int known = 0;
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    known |= strcmp(formats[i].name, fmt) == 0;
  if (!known) {
    fprintf(stderr, "probe import: unknown format '%s' (mlflow, tensorboard, csv, hf)\n", fmt);
    return 2;
  }
  pmcp_import_options o = PMCP_IMPORT_OPTIONS_INIT;
  const char *path = NULL;
  int dry = 0, json = 0;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      format_usage(stdout, fmt);
      return 0;
    } else if (strcmp(a, "--dry-run") == 0) {
      dry = 1;
    } else if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (strcmp(a, "--project") == 0 || strcmp(a, "--experiment") == 0 ||
               strcmp(a, "--name") == 0) {
      if (i + 1 >= argc || !argv[i + 1][0]) {
        fprintf(stderr, "probe import: %s needs a value\n", a);
        return 2;
      }
      if (strcmp(fmt, "mlflow") == 0 && strcmp(a, "--project") != 0) {
        fprintf(stderr,
                "probe import mlflow: %s does not apply (MLflow runs keep their "
                "experiments and names)\n",
                a);
        return 2;
      }
      const char *v = argv[++i];
      if (a[2] == 'p')
        o.project = v;
      else if (a[2] == 'e')
        o.experiment = v;
      else
        o.name = v;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "probe import %s: unknown option '%s'\n", fmt, a);
      return 2;
    } else if (!path) {
      path = a;
    } else {
      fprintf(stderr, "probe import %s: one PATH only ('%s' is extra)\n", fmt, a);
      return 2;
    }
  }
  if (!path) {
    format_usage(stderr, fmt);
    return 2;
  }
  char cmd[64];
  snprintf(cmd, sizeof cmd, "import %s", fmt);
  return probe_import_run(g, cmd, fmt, path, &o, dry, json);
}
