/* SPDX-License-Identifier: MIT */
/* Decoding TensorBoard Event records into sink calls (tb_event.c). */
#ifndef PMCP_IMPORT_TB_EVENT_H
#define PMCP_IMPORT_TB_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "import/import.h"

enum {
  PMCP__TB_UNKNOWN = 0,
  PMCP__TB_SCALAR = 1,
  PMCP__TB_HISTO = 2,
  PMCP__TB_OTHER = 3,
  PMCP__TB_HPARAMS = 4
};

typedef struct pmcp__tb_tag {
  char *name;
  size_t len;
  int kind;
} pmcp__tb_tag;

/* Per-run decoding state: what plugin each tag belongs to, and scratch
 * arrays for histogram buckets. Zero-initialise; dispose when done. */
typedef struct pmcp__tb_state {
  pmcp__tb_tag *tags; /* open addressing, cap a power of two */
  size_t cap, used;
  double *limits, *counts;
  size_t lcap, ccap;
  uint64_t events, skipped;
} pmcp__tb_state;

/* Decodes one Event and emits its scalars and histograms. 0; -1 malformed
 * protobuf; -2 out of memory; or the sink's negative code with *sink_err
 * set (its message is already on cx). */
int pmcp__tb_event(pmcp__imp_ctx *cx, pmcp__tb_state *st, const uint8_t *d,
                   size_t len, int *sink_err);
void pmcp__tb_state_dispose(pmcp__tb_state *st);

#endif
