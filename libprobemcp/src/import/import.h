/* SPDX-License-Identifier: MIT */
/* Importers: parsers for what labs already have (MLflow file stores,
 * TensorBoard event files, Lightning / plain CSV logs, Hugging Face
 * trainer_state.json, arXiv metadata). Each parser only reads and emits
 * records through the small sink below; the sink decides what to store.
 * The store binding (import_store.c) is one sink, the test dumper another,
 * so parsers are tested without a store and a failing parse never leaves
 * half a write behind (the store sink runs inside one transaction).
 *
 * Errors: every parser failure leaves a message in cx->err of the form
 * "FILE: line N: what" or "FILE: byte offset N: what". */
#ifndef PMCP_IMPORT_IMPORT_H
#define PMCP_IMPORT_IMPORT_H

#include <stdint.h>
#include <stdio.h>

#include "probemcp/common.h"
#include "util/value.h"

typedef struct pmcp__imp_ctx pmcp__imp_ctx;


typedef struct pmcp__imp_experiment {
  const char *key;  /* stable source id, e.g. "mlflow:<project>/<name>" */
  const char *name;
  int deleted;
  int64_t created_ms; /* -1: unknown */
  const char *description; /* or NULL */
} pmcp__imp_experiment;

typedef struct pmcp__imp_run {
  const char *key;            /* stable source id ("mlflow:<uuid>", ...) */
  const char *name;           /* display name, never NULL */
  const char *experiment_key; /* NULL: the import's default experiment */
  const char *source;         /* "mlflow", "tensorboard", "csv", "hf" */
  const char *status;         /* running|scheduled|finished|failed|killed|NULL */
  const char *user;           /* NULL if unknown */
  int deleted;
  int64_t start_ms, end_ms;   /* -1: unknown */
  /* Code state and description where the source records them (MLflow's
   * mlflow.source.* and mlflow.note.content tags), else NULL. */
  const char *command, *git_commit, *git_branch, *git_remote, *description;
} pmcp__imp_run;

/* Kinds of run attributes. */
enum {
  PMCP__IA_PARAM = 1, /* configuration (MLflow params, hparams.yaml) */
  PMCP__IA_TAG = 2,   /* tags (MLflow tags) */
  PMCP__IA_ATTR = 3,  /* other facts (trainer state, run meta) */
  PMCP__IA_CONFIG = 4 /* nested configuration (Lightning hparams.yaml) */
};

typedef struct pmcp__imp_hist {
  double min, max, num, sum, sum_squares; /* NaN where the source has none */
  size_t n;                               /* buckets */
  const double *limits;                   /* right edges, n of them */
  const double *counts;                   /* n of them */
} pmcp__imp_hist;

typedef struct pmcp__imp_paper {
  const char *id, *title, *abstract;
  const char *authors;               /* as written ("A, B and C") */
  const char *const *author_list;    /* "First Last" each, n_authors */
  size_t n_authors;
  const char *categories;            /* space-separated, primary first */
  const char *published, *updated;   /* ISO 8601 UTC or NULL */
  const char *doi, *journal_ref, *comments, *license; /* or NULL */
} pmcp__imp_paper;

/* Return 0 to go on, PMCP__IMP_SKIP to say "not stored" (run_begin, paper,
 * experiment: already there, and a skipped run's contents are skipped too;
 * histogram, checkpoint: nothing the store can hold), or a negative PMCP_E*
 * code to abort (set a message with pmcp__imp_fail). Skips are not counted
 * as imported. */
#define PMCP__IMP_SKIP 1

typedef struct pmcp__imp_sink {
  int (*experiment)(pmcp__imp_ctx *cx, const pmcp__imp_experiment *e);
  int (*run_begin)(pmcp__imp_ctx *cx, const pmcp__imp_run *r);
  int (*run_attr)(pmcp__imp_ctx *cx, int kind, const char *key,
                  const pmcp__imp_value *v);
  int (*scalar)(pmcp__imp_ctx *cx, const char *key, int64_t step,
                double wall_s, double value);
  int (*histogram)(pmcp__imp_ctx *cx, const char *key, int64_t step,
                   double wall_s, const pmcp__imp_hist *h);
  int (*artifact)(pmcp__imp_ctx *cx, const char *name, const void *data,
                  size_t len);
  /* @p value: the metric value it was chosen by (NaN if unknown) */
  int (*checkpoint)(pmcp__imp_ctx *cx, const char *name, int64_t step,
                    int best, double value);
  int (*run_end)(pmcp__imp_ctx *cx);
  int (*paper)(pmcp__imp_ctx *cx, const pmcp__imp_paper *p);
} pmcp__imp_sink;

typedef struct pmcp__imp_counts {
  uint64_t experiments, runs, runs_skipped, attrs, points, histograms,
      artifacts, artifacts_skipped, checkpoints, papers, papers_skipped,
      deleted_runs, files;
  uint64_t values_skipped;  /* TensorBoard values of other plugins */
  uint64_t folders_skipped; /* MLflow folders that are not runs */
} pmcp__imp_counts;

typedef void (*pmcp__imp_progress_fn)(const char *what, uint64_t done,
                                      uint64_t total, void *ud);

struct pmcp__imp_ctx {
  const pmcp__imp_sink *sink;
  void *ud;                    /* the sink's state */
  pmcp_buf err;                /* message of the first failure */
  pmcp__imp_counts n;
  pmcp__imp_progress_fn progress;
  void *progress_ud;
  int in_run;                  /* a run_begin without its run_end */
  int skipping;                /* the current run is already stored */
  const char *project;         /* for mlflow experiment keys */
  const char *run_name;        /* --name override (csv, hf, tensorboard) */
};

/* Sets the error message (first failure wins) and returns @p code. */
int pmcp__imp_fail(pmcp__imp_ctx *cx, int code, const char *fmt, ...)
    PMCP_PRINTF(3, 4);

/* Emitters: call the sink, count, honour skipping. */
int pmcp__imp_add_experiment(pmcp__imp_ctx *cx, const pmcp__imp_experiment *e);
int pmcp__imp_run_begin(pmcp__imp_ctx *cx, const pmcp__imp_run *r);
int pmcp__imp_run_attr(pmcp__imp_ctx *cx, int kind, const char *key,
                       const pmcp__imp_value *v);
int pmcp__imp_run_attr_str(pmcp__imp_ctx *cx, int kind, const char *key,
                           const char *s);
int pmcp__imp_scalar(pmcp__imp_ctx *cx, const char *key, int64_t step,
                     double wall_s, double value);
int pmcp__imp_histogram(pmcp__imp_ctx *cx, const char *key, int64_t step,
                        double wall_s, const pmcp__imp_hist *h);
int pmcp__imp_artifact(pmcp__imp_ctx *cx, const char *name, const void *data,
                       size_t len);
int pmcp__imp_checkpoint(pmcp__imp_ctx *cx, const char *name, int64_t step,
                         int best, double value);
int pmcp__imp_run_end(pmcp__imp_ctx *cx);
int pmcp__imp_add_paper(pmcp__imp_ctx *cx, const pmcp__imp_paper *p);
void pmcp__imp_progress(pmcp__imp_ctx *cx, const char *what, uint64_t done,
                        uint64_t total);

/* Helpers shared by the parsers (import_util.c). */
/* Reads a whole file; NUL-terminates. Errors name the file. */
int pmcp__imp_read_file(pmcp__imp_ctx *cx, const char *path, char **out,
                        size_t *len);
/* Lowercase hex SHA-256 of @p data (65 bytes with the NUL). */
int pmcp__imp_sha256_hex(const void *data, size_t len, char out[65]);
/* Types an untyped text value (an MLflow param): int, float, bool or str. */
void pmcp__imp_infer_value(const char *s, pmcp__imp_value *out);
/* 1 when @p s[0..len) is valid UTF-8 without NUL bytes. */
int pmcp__imp_utf8_text(const void *s, size_t len);
/* Last path component (borrowed), and a malloc'd dirname. */
const char *pmcp__imp_basename(const char *path);
char *pmcp__imp_dirname(const char *path);
char *pmcp__imp_join(const char *a, const char *b);

/* Lightning's hparams.yaml in @p dir, if there, as the current run's
 * configuration (config/...). Used for CSVLogger and TensorBoardLogger
 * folders alike. */
int pmcp__imp_hparams_yaml(pmcp__imp_ctx *cx, const char *dir);

/* The parsers. @p path as given by the user (messages name it). */
int pmcp__import_mlflow(pmcp__imp_ctx *cx, const char *dir);
int pmcp__import_tensorboard(pmcp__imp_ctx *cx, const char *path);
int pmcp__import_csv(pmcp__imp_ctx *cx, const char *path);
int pmcp__import_hf(pmcp__imp_ctx *cx, const char *path);
int pmcp__import_arxiv(pmcp__imp_ctx *cx, const char *path);

#endif
