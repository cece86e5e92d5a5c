/* SPDX-License-Identifier: MIT */
/* The CSV reader (metrics.csv), then the whole CSV importer on the same
 * bytes written to a temporary file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-import-common.h"
#include "import/csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  pmcp__csv c;
  pmcp__csv_init(&c, (const char *)data, size);
  size_t total = 0;
  while (pmcp__csv_row(&c) == 1)
    for (size_t i = 0; i < c.n; i++) {
      size_t len;
      pmcp__csv_field(&c, i, &len);
      total += len;
    }
  pmcp__csv_dispose(&c);

  char path[] = "/tmp/pmcp-fuzz-csv-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0)
    return 0;
  FILE *f = fdopen(fd, "wb");
  if (f) {
    fwrite(data, 1, size, f);
    fclose(f);
    pmcp__imp_ctx cx;
    fz_ctx(&cx);
    pmcp__import_csv(&cx, path);
    pmcp_buf_dispose(&cx.err);
  } else {
    close(fd);
  }
  unlink(path);
  return 0;
}
