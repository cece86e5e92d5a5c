/* SPDX-License-Identifier: MIT */
/* The data and the reads of the PostgreSQL upgrade test (test-pg-upgrade.c),
 * shared with the program that made its fixture with the code before
 * metric_chunks (upgrade/make-fixture.c, built against that code by
 * upgrade/make-fixture.sh). Only the public store API is used, as it was
 * then and is now, so both sides print the same text for the same reads.
 *
 * The series cover what a conversion of the old blocks could get wrong:
 * several full blocks and a partial tail, steps that go back (a resumed
 * run), points without a time (scattered and in long stretches), NaN,
 * infinities, -0.0, a series with no finite value, and chunk and block
 * boundaries (128, 129, 16384 points). Values are multiples of 1/8 (sums
 * are exact in any order) except in the "inexact" series, whose sums are
 * printed to 12 digits: the chunked reads add in another order than the
 * old ones did, on purpose. */
#ifndef PMCP_TEST_UPGRADE_READS_H
#define PMCP_TEST_UPGRADE_READS_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probemcp/probemcp.h"

enum { UPG_DYADIC, UPG_SMALL, UPG_ALLNAN, UPG_INEXACT };

typedef struct upg_series {
  const char *tenant, *run, *key, *label; /* label: "rank=0" or NULL */
  size_t n;
  int kind;
} upg_series;

static const upg_series upg_all[] = {
  {"alpha", "r-long", "train/loss", NULL, 40000, UPG_DYADIC},
  {"alpha", "r-long", "train/lr", NULL, 300, UPG_SMALL},
  {"alpha", "r-long", "eval/nan", NULL, 200, UPG_ALLNAN},
  {"alpha", "r-edges", "c128", NULL, 128, UPG_DYADIC},
  {"alpha", "r-edges", "c129", NULL, 129, UPG_DYADIC},
  {"alpha", "r-edges", "block", NULL, 16384, UPG_DYADIC},
  {"alpha", "r-edges", "block1", NULL, 16385, UPG_DYADIC},
  {"beta", "r-b", "acc", "rank=0", 17000, UPG_INEXACT},
  {"beta", "r-b", "train/loss", NULL, 5000, UPG_DYADIC},
};
#define UPG_N_SERIES (sizeof upg_all / sizeof upg_all[0])

/* Point @p i of a series of kind @p kind and length @p n. */
static inline pmcp_point upg_point(int kind, size_t n, size_t i)
{
  pmcp_point p;
  uint64_t h = (uint64_t)i * 2654435761u + 12345u;
  h ^= h >> 13;
  /* steps: 0.. in order, except that a run resumed at 60% goes back 500 */
  p.step = (int64_t)i;
  if (n >= 1000 && i >= n * 6 / 10)
    p.step = (int64_t)i - 500;
  p.time_ms = 1700000000000 + p.step * 250 + (int64_t)(i % 3);
  if (i % 7 == 3 || (i >= n / 3 && i < n / 3 + 300))
    p.time_ms = 0; /* no time: scattered, and a stretch longer than a chunk */
  switch (kind) {
  case UPG_SMALL:
    p.value = (double)i / 16;
    p.time_ms = 0;
    break;
  case UPG_ALLNAN:
    p.value = NAN;
    break;
  case UPG_INEXACT:
    p.value = (double)(h % 1000003) / 999983.0 * 3.7 - 1.1;
    break;
  default:
    p.value = ((double)(int64_t)(h % 2001) - 1000) / 8;
    break;
  }
  if (kind != UPG_ALLNAN && kind != UPG_SMALL) {
    if (i % 997 == 5)
      p.value = NAN;
    else if (i % 1409 == 7)
      p.value = INFINITY;
    else if (i % 1601 == 9)
      p.value = -INFINITY;
    else if (i % 389 == 0)
      p.value = -0.0;
  }
  return p;
}

/* The series' points, malloc'd. */
static inline pmcp_point *upg_points(const upg_series *u)
{
  pmcp_point *p = malloc(u->n * sizeof *p);
  for (size_t i = 0; p && i < u->n; i++)
    p[i] = upg_point(u->kind, u->n, i);
  return p;
}

static inline int upg_series_id(pmcp_store *s, const upg_series *u, int create,
                                pmcp_tenant *t, int64_t *id)
{
  int rc = pmcp_store_tenant(s, u->tenant, create ? PMCP_STORE_CREATE : 0, t);
  pmcp_label lab = {"rank", "0"};
  pmcp_series_spec spec = {PMCP_SERIES_SPEC_VERSION, u->key, u->label ? &lab : NULL, u->label ? 1 : 0,
                           PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
  if (rc == 0)
    rc = pmcp_store_series(s, *t, u->run, &spec, id);
  return rc;
}

/* Creates the runs and logs every series, in batches of uneven sizes (some
 * inside a transaction), as a training loop would. */
static inline int upg_fill(pmcp_store *s)
{
  int rc = 0;
  for (size_t k = 0; k < UPG_N_SERIES && rc == 0; k++) {
    const upg_series *u = &upg_all[k];
    pmcp_tenant t;
    int64_t id;
    rc = pmcp_store_tenant(s, u->tenant, PMCP_STORE_CREATE, &t);
    if (rc == 0 && (k == 0 || strcmp(u->run, upg_all[k - 1].run) != 0)) {
      pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
      r.id = u->run;
      r.created_ms = 1700000000000;
      rc = pmcp_store_run_create(s, t, &r, NULL);
    }
    if (rc == 0)
      rc = upg_series_id(s, u, 1, &t, &id);
    pmcp_point *p = rc == 0 ? upg_points(u) : NULL;
    for (size_t at = 0, b = 0; p && rc == 0 && at < u->n; b++) {
      size_t len = 37 + (b * 7919) % 6000;
      if (len > u->n - at)
        len = u->n - at;
      int txn = b % 3 == 1;
      if (txn)
        rc = pmcp_store_begin(s);
      if (rc == 0)
        rc = pmcp_store_log(s, t, id, p + at, len);
      if (rc == 0 && txn)
        rc = pmcp_store_commit(s);
      at += len;
    }
    free(p);
  }
  return rc;
}

/* ---- the reads, printed ---- */

static inline uint64_t upg_fnv(uint64_t h, const void *p, size_t n)
{
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ c[i]) * 1099511628211u;
  return h;
}

/* One bucket as a line of text (at least 400 bytes at @p o). */
static inline void upg_bucket(char *o, size_t cap, const pmcp_bucket *b, int exact)
{
  char v[5][40];
  const double d[5] = {b->min, b->max, b->sum, b->first, b->last};
  for (int i = 0; i < 5; i++)
    if (isnan(d[i]))
      snprintf(v[i], sizeof v[i], "NaN");
    else
      snprintf(v[i], sizeof v[i], i == 2 && !exact ? "%.12g" : "%.17g", d[i]);
  snprintf(o, cap,
           "  steps %" PRId64 "..%" PRId64 " times %" PRId64 "..%" PRId64 " n %" PRIu64
           " nf %" PRIu64 " min %s max %s sum %s at %" PRId64 "/%" PRId64
           " first %s last %s steps %" PRId64 "/%" PRId64 "\n",
           b->step_min, b->step_max, b->time_min, b->time_max, b->count, b->nonfinite, v[0],
           v[1], v[2], b->step_at_min, b->step_at_max, v[3], v[4], b->step_first,
           b->step_last);
}

/* A summary: up to 7 buckets as lines, more as a hash of those lines and
 * the first and last of them. */
static inline int upg_summaries(FILE *f, pmcp_store *s, pmcp_tenant t, int64_t id, int exact,
                                int time_axis, int64_t from, int64_t to, size_t nb)
{
  pmcp_bucket *b = calloc(nb, sizeof *b);
  size_t n = 0;
  int rc = b ? 0 : PMCP_ENOMEM;
  if (rc == 0)
    rc = time_axis ? pmcp_store_summary_time(s, t, id, from, to, nb, b, &n)
                   : pmcp_store_summary(s, t, id, from, to, nb, b, &n);
  fprintf(f, "# summary %s [%" PRId64 ", %" PRId64 "] %zu buckets: rc %d, %zu\n",
          time_axis ? "time" : "step", from, to, nb, rc, n);
  uint64_t h = 1469598103934665603u;
  char line[400];
  for (size_t i = 0; rc == 0 && i < n; i++) {
    upg_bucket(line, sizeof line, &b[i], exact);
    h = upg_fnv(h, line, strlen(line));
    if (nb <= 7 || i == 0 || i + 1 == n)
      fputs(line, f);
  }
  if (nb > 7)
    fprintf(f, "  hash %016" PRIx64 "\n", h);
  free(b);
  return rc;
}

/* Points of [from, to] in pages of @p cap: each page's count, positions
 * and a hash of its points (the fixture holds the points themselves). */
static inline int upg_pages(FILE *f, pmcp_store *s, pmcp_tenant t, int64_t id, int64_t from,
                            int64_t to, size_t cap)
{
  pmcp_point *p = malloc(cap * sizeof *p);
  int64_t after = 0, next = 0;
  size_t total = 0;
  int rc = p ? 0 : PMCP_ENOMEM;
  fprintf(f, "# points [%" PRId64 ", %" PRId64 "] pages of %zu\n", from, to, cap);
  for (int page = 0; rc == 0 && page < 10000; page++) {
    size_t n = 0;
    rc = pmcp_store_points(s, t, id, from, to, after, p, cap, &n, &next);
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; rc == 0 && i < n; i++) {
      uint64_t bits;
      memcpy(&bits, &p[i].value, sizeof bits);
      if (isnan(p[i].value))
        bits = 0x7ff8000000000000u; /* one NaN, whatever its payload */
      h = upg_fnv(h, &p[i].step, sizeof p[i].step);
      h = upg_fnv(h, &p[i].time_ms, sizeof p[i].time_ms);
      h = upg_fnv(h, &bits, sizeof bits);
    }
    fprintf(f, "  rc %d n %zu next %" PRId64 " hash %016" PRIx64 "\n", rc, n, next, h);
    total += n;
    if (rc || next == 0)
      break;
    after = next;
  }
  fprintf(f, "  total %zu\n", total);
  free(p);
  return rc;
}

static inline int upg_reads(FILE *f, pmcp_store *s)
{
  int rc = 0;
  for (size_t k = 0; k < UPG_N_SERIES && rc == 0; k++) {
    const upg_series *u = &upg_all[k];
    pmcp_tenant t;
    int64_t id;
    int exact = u->kind != UPG_INEXACT;
    fprintf(f, "## %s %s %s%s%s (%zu points)\n", u->tenant, u->run, u->key,
            u->label ? " " : "", u->label ? u->label : "", u->n);
    if ((rc = upg_series_id(s, u, 0, &t, &id)))
      break;
    int64_t last = (int64_t)u->n - 1, mid = (int64_t)u->n / 2;
    int64_t t0 = 1700000000000;
    rc = upg_pages(f, s, t, id, INT64_MIN, INT64_MAX, 4096);
    if (rc == 0)
      rc = upg_pages(f, s, t, id, 100, mid + 333, 1000);
    if (rc == 0)
      rc = upg_pages(f, s, t, id, mid, mid, 10);
    static const size_t nbs[] = {1, 3, 7, 64, 1000};
    for (size_t i = 0; rc == 0 && i < sizeof nbs / sizeof nbs[0]; i++) {
      rc = upg_summaries(f, s, t, id, exact, 0, INT64_MIN, INT64_MAX, nbs[i]);
      if (rc == 0)
        rc = upg_summaries(f, s, t, id, exact, 0, 0, last, nbs[i]);
      if (rc == 0)
        rc = upg_summaries(f, s, t, id, exact, 0, 61, mid + 1000, nbs[i]);
      if (rc == 0)
        rc = upg_summaries(f, s, t, id, exact, 1, t0, t0 + last * 250 + 2, nbs[i]);
      if (rc == 0)
        rc = upg_summaries(f, s, t, id, exact, 1, t0 + 1000, t0 + mid * 250, nbs[i]);
    }
    if (rc == 0)
      rc = upg_summaries(f, s, t, id, exact, 0, mid - 3, mid + 3, 7);
    if (rc == 0)
      rc = upg_summaries(f, s, t, id, exact, 1, t0 + 5 * 250 - 2, t0 + 5 * 250 + 2, 2);
  }
  return rc;
}

#endif
