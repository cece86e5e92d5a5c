/* SPDX-License-Identifier: MIT */
/* Importing into a store: the parsers of import.h with the store sink,
 * inside one transaction (import_store.c). */
#ifndef PMCP_IMPORT_IMPORT_STORE_H
#define PMCP_IMPORT_IMPORT_STORE_H

#include "import/import.h"
#include "probemcp/store.h"

typedef struct pmcp__import_opts {
  /* The project the import files into. MLflow: default the store
   * folder's name (its parent's when it is "mlruns"). Others: NULL files
   * runs unfiled, unless @c experiment is given (project "imports"). */
  const char *project;
  /* Experiment for TensorBoard, CSV and Trainer runs, or NULL. */
  const char *experiment;
  /* Display name of the run (one-run imports), or NULL. */
  const char *name;
  pmcp__imp_progress_fn progress;
  void *progress_ud;
  /* Non-zero: the caller has a transaction open (pmcp_store_begin) and
   * commits or rolls it back itself (e.g. a demo built from several
   * imports); otherwise the import is its own transaction. */
  int in_txn;
} pmcp__import_opts;

/* Imports @p path in format @p kind ("mlflow", "tensorboard", "csv",
 * "hf", "arxiv") into tenant @p t. All or nothing: on failure the store is
 * as before and @p err says why ("FILE: line N: ..." for bad input).
 * @p counts gets what was imported (and skipped as already present).
 * With @p st NULL: a dry run that parses and counts but stores nothing. */
int pmcp__import(pmcp_store *st, pmcp_tenant t, const char *kind,
                 const char *path, const pmcp__import_opts *o,
                 pmcp__imp_counts *counts, pmcp_buf *err);

#endif
