/* SPDX-License-Identifier: MIT */
/* TFRecord framing + Event decoding, from a file's bytes. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz-import-common.h"
#include "import/tb_event.h"
#include "import/tfrecord.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size == 0)
    return 0;
  FILE *f = fmemopen((void *)data, size, "rb");
  if (!f)
    return 0;
  pmcp__imp_ctx cx;
  fz_ctx(&cx);
  pmcp__tb_state st = {0};
  pmcp__tfrec r = {0};
  r.f = f;
  const uint8_t *rec;
  size_t len;
  while (pmcp__tfrec_next(&r, &rec, &len) == 1) {
    int sink_err = 0;
    if (pmcp__tb_event(&cx, &st, rec, len, &sink_err) != 0)
      break;
  }
  pmcp__tfrec_dispose(&r);
  pmcp__tb_state_dispose(&st);
  pmcp_buf_dispose(&cx.err);
  fclose(f);
  return 0;
}
