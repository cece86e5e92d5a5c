/* SPDX-License-Identifier: MIT */
/* Fuzz target: the o200k_base tokenizer on arbitrary bytes.
 * Invariants: count and encode agree with each other and with the UTF-8
 * check (invalid input is refused by both, never crashes); decode gives the
 * input back; the incremental counter, fed the input in chunks whose sizes
 * come from the input itself, gives the same count. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probemcp/probemcp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *text = (const char *)data;
  size_t count = 0, off = 0, n = 0;
  uint32_t *ids = NULL;
  int valid = pmcp_tokens_utf8_check(text, size, &off);
  int rc = pmcp_tokens_count(text, size, &count);
  int rc2 = pmcp_tokens_encode(text, size, &ids, &n);
  if (valid == PMCP_EUTF8) {
    if (rc != PMCP_EUTF8 || rc2 != PMCP_EUTF8 || ids || n || off >= size)
      abort();
    return 0;
  }
  if (valid != 0 || rc != 0 || rc2 != 0 || n != count)
    abort();
  pmcp_buf b = PMCP_BUF_INIT;
  if (pmcp_tokens_decode(ids, n, &b) != 0 || b.len != size || (size && memcmp(b.ptr, data, size)))
    abort();
  pmcp_buf_dispose(&b);
  pmcp_tokens_free(ids);

  pmcp_tokens_counter *c;
  if (pmcp_tokens_counter_new(&c) != 0)
    abort();
  size_t pos = 0, k = 0;
  while (pos < size) {
    size_t step = 1 + data[k++ % size] % 17;
    if (step > size - pos)
      step = size - pos;
    if (pmcp_tokens_counter_add(c, text + pos, step) != 0)
      abort();
    pos += step;
  }
  size_t total;
  if (pmcp_tokens_counter_total(c, &total) != 0 || total != count)
    abort();
  pmcp_tokens_counter_free(c);
  return 0;
}
