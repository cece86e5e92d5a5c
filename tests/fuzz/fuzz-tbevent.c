/* SPDX-License-Identifier: MIT */
/* One Event protobuf (what a TFRecord holds once its CRCs check out):
 * the protobuf wire reader, Summary values, tensors and histograms. The
 * first byte splits the input into two events decoded with one state, so
 * per-tag plugin memory is exercised across records. */
#include "fuzz-import-common.h"
#include "import/tb_event.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size == 0)
    return 0;
  size_t cut = size > 1 ? data[0] % size : 0;
  pmcp__imp_ctx cx;
  fz_ctx(&cx);
  pmcp__tb_state st = {0};
  int sink_err = 0;
  pmcp__tb_event(&cx, &st, data + 1, cut > 1 ? cut - 1 : 0, &sink_err);
  pmcp__tb_event(&cx, &st, data + (cut ? cut : 1), size - (cut ? cut : 1),
                 &sink_err);
  pmcp__tb_state_dispose(&st);
  pmcp_buf_dispose(&cx.err);
  return 0;
}
