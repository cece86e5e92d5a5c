/* SPDX-License-Identifier: MIT */
/* pmcp_import() of probemcp/service.h: the public face of the importers
 * (import_store.c), with versioned option and count structs. */
#include <string.h>

#include "import/import_store.h"
#include "util/buf.h"
#include "probemcp/service.h"

/* Fills the members of @p out that its version has (version 1: all). */
static void counts_out(pmcp_import_counts *out, const pmcp__imp_counts *n)
{
  if (!out || out->version < 1)
    return;
  out->experiments = n->experiments;
  out->runs = n->runs;
  out->runs_skipped = n->runs_skipped;
  out->attrs = n->attrs;
  out->points = n->points;
  out->histograms = n->histograms;
  out->artifacts = n->artifacts;
  out->artifacts_skipped = n->artifacts_skipped;
  out->checkpoints = n->checkpoints;
  out->papers = n->papers;
  out->papers_skipped = n->papers_skipped;
  out->deleted_runs = n->deleted_runs;
  out->files = n->files;
  out->values_skipped = n->values_skipped;
  out->folders_skipped = n->folders_skipped;
}

PMCP_API int pmcp_import(pmcp_store *store, pmcp_tenant t, const char *format,
                         const char *path, const pmcp_import_options *options,
                         pmcp_import_counts *counts, pmcp_buf *err)
{
  if (!format || !path || (options && options->version < 1) ||
      (counts && counts->version < 1)) {
    if (err)
      pmcp__buf_puts(err, !format || !path ? "pmcp_import: a format and a path are needed"
                                           : "pmcp_import: the struct's version is not set "
                                             "(use its INIT macro)");
    return PMCP_EINVAL;
  }
  /* every version so far has the members of version 1 */
  pmcp__import_opts o;
  memset(&o, 0, sizeof o);
  if (options) {
    o.project = options->project;
    o.experiment = options->experiment;
    o.name = options->name;
    o.progress = options->progress;
    o.progress_ud = options->progress_ud;
    o.in_txn = options->in_transaction;
  }
  pmcp__imp_counts n;
  memset(&n, 0, sizeof n);
  int rc = pmcp__import(store, t, format, path, &o, &n, err);
  counts_out(counts, &n);
  return rc;
}
