/* SPDX-License-Identifier: MIT */
/* Version requirements for artifact, dataset and experiment versions.
 *
 * Versions are monotonic integers with optional labels, not semver: a
 * requirement is a label ("production"), a whole number ("3", same as
 * "==3"), or comparisons joined by commas (">=2,<5"). ">=2.0" is rejected
 * with a reason rather than silently matching nothing. */
#ifndef PMCP_RESEARCH_REQUIRE_H
#define PMCP_RESEARCH_REQUIRE_H

#include <stddef.h>
#include <stdint.h>

#define PMCP__REQ_MAX_CLAUSES 4

typedef enum pmcp__req_op {
  PMCP__REQ_EQ = 1,
  PMCP__REQ_NE,
  PMCP__REQ_GE,
  PMCP__REQ_GT,
  PMCP__REQ_LE,
  PMCP__REQ_LT
} pmcp__req_op;

typedef struct pmcp__req {
  int is_label;
  char label[129];
  size_t n;
  struct {
    pmcp__req_op op;
    int64_t v;
  } c[PMCP__REQ_MAX_CLAUSES];
} pmcp__req;

/* Parses @p s. PMCP_EINVAL with a reason in @p err on bad input. */
int pmcp__req_parse(pmcp__req *out, const char *s, char *err, size_t errlen);

/* True when version @p version carrying @p labels satisfies @p req. */
int pmcp__req_match(const pmcp__req *req, int64_t version,
                    const char *const *labels, size_t n_labels);

#endif
