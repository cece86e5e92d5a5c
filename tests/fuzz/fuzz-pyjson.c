/* SPDX-License-Identifier: MIT */
/* JSON as Python writes it (NaN / Infinity rewriting, then cJSON), and
 * the trainer_state.json importer over the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz-import-common.h"
#include "import/pyjson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  pmcp__imp_ctx cx;
  fz_ctx(&cx);
  cJSON *j = pmcp__hf_parse(&cx, "fuzz", 1, (const char *)data, size);
  cJSON_Delete(j);
  pmcp_buf_dispose(&cx.err);

  char path[] = "/tmp/pmcp-fuzz-hf-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0)
    return 0;
  FILE *f = fdopen(fd, "wb");
  if (f) {
    fwrite(data, 1, size, f);
    fclose(f);
    fz_ctx(&cx);
    pmcp__import_hf(&cx, path);
    pmcp_buf_dispose(&cx.err);
  } else {
    close(fd);
  }
  unlink(path);
  return 0;
}
