/* SPDX-License-Identifier: MIT */
/* Entity references of the research toolset: `kind:id` strings.
 *
 * A ref keeps its kind prefix everywhere (browse and search return refs,
 * entity takes them back unchanged). An unknown kind is rejected, never
 * guessed: "runs:x", "Run:x" and "x" (outside the places that accept a
 * bare run id) are errors that list the kinds that exist. */
#ifndef PMCP_RESEARCH_REFS_H
#define PMCP_RESEARCH_REFS_H

#include <stddef.h>
#include <stdint.h>

#define PMCP__REF_MAX 256     /* characters of one ref */
#define PMCP__REFS_MAX 20     /* refs in one call */

typedef enum pmcp__ref_kind {
  PMCP__REF_NONE = 0,
  PMCP__REF_RUN,
  PMCP__REF_EXPERIMENT,
  PMCP__REF_PROJECT,
  PMCP__REF_ARTIFACT,
  PMCP__REF_DATASET,
  PMCP__REF_CHECKPOINT,
  PMCP__REF_SOURCE,
  PMCP__REF_GROUP,
  PMCP__REF_TRIAL,
  PMCP__REF_SESSION,
  PMCP__REF_SUBNOTE,
  PMCP__REF_TEAMNOTE,
  PMCP__REF_NOTE, /* an operational note, as browse notes lists it */
  PMCP__REF_FILE, /* a file of the Shared folder or a workspace */
  PMCP__REF_WORKSPACE,
  PMCP__REF_KINDS_ /* count + 1 */
} pmcp__ref_kind;

/* Which save of a run a checkpoint ref names. */
typedef enum pmcp__ckpt_sel {
  PMCP__CKPT_NONE = 0,
  PMCP__CKPT_BEST,
  PMCP__CKPT_LATEST,
  PMCP__CKPT_STEP
} pmcp__ckpt_sel;

typedef struct pmcp__ref {
  pmcp__ref_kind kind;
  /* The id (a run's id for checkpoints, the name for artifacts and
   * datasets); "" for team-note. */
  char id[PMCP__REF_MAX + 1];
  /* After '@' for dataset, source and artifact refs; "" when absent. */
  char version[PMCP__REF_MAX + 1];
  pmcp__ckpt_sel ckpt;
  int64_t ckpt_step; /* PMCP__CKPT_STEP */
} pmcp__ref;

/* Parses @p s (NUL-terminated). On failure returns PMCP_EINVAL and writes
 * a one-sentence reason naming the problem into @p err. */
int pmcp__ref_parse(pmcp__ref *out, const char *s, char *err, size_t errlen);

/* Like pmcp__ref_parse() but for arguments that take a run: accepts
 * "run:ID" exactly as browse returns it, and the bare "ID". Any other kind
 * is an error naming it. */
int pmcp__ref_parse_run(pmcp__ref *out, const char *s, char *err, size_t errlen);

/* "run", "experiment", ..., "sub-note", "team-note". */
const char *pmcp__ref_kind_name(pmcp__ref_kind kind);
/* The kind named @p name (without ':'), or PMCP__REF_NONE. */
pmcp__ref_kind pmcp__ref_kind_from(const char *name, size_t len);

/* True when @p s is a non-empty id of [A-Za-z0-9._-] of at most
 * PMCP__REF_MAX characters. */
int pmcp__ref_id_ok(const char *s, size_t len);

/* Writes the canonical text of @p ref ("checkpoint:r1@step300") into @p out
 * (at most @p size bytes, NUL-terminated). Returns the length. */
size_t pmcp__ref_format(const pmcp__ref *ref, char *out, size_t size);

#endif
