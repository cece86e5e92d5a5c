/* SPDX-License-Identifier: MIT */
/* A sink that accepts everything, for the importer fuzz targets. */
#ifndef FUZZ_IMPORT_COMMON_H
#define FUZZ_IMPORT_COMMON_H

#include <stdlib.h>
#include <string.h>

#include "import/import.h"

static int fz_scalar(pmcp__imp_ctx *cx, const char *key, int64_t step,
                     double wall, double v)
{
  if (key[0] == '\0') /* keys are never empty */
    abort();
  return 0;
}

static int fz_hist(pmcp__imp_ctx *cx, const char *key, int64_t step,
                   double wall, const pmcp__imp_hist *h)
{
  double s = 0;
  for (size_t i = 0; i < h->n; i++) /* touch every bucket */
    s += h->limits[i] + h->counts[i];
  (void)s;
  return 0;
}

static const pmcp__imp_sink fz_sink = {NULL, NULL, NULL, fz_scalar, fz_hist,
                                       NULL, NULL, NULL, NULL};

static void fz_ctx(pmcp__imp_ctx *cx)
{
  memset(cx, 0, sizeof *cx);
  cx->sink = &fz_sink;
}

#endif
