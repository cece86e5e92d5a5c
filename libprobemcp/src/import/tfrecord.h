/* SPDX-License-Identifier: MIT */
/* TFRecord framing (what TensorBoard event files are made of):
 *   uint64 length (little-endian), uint32 masked CRC-32C of those 8 bytes,
 *   data[length], uint32 masked CRC-32C of the data.
 * masked(c) = ((c >> 15) | (c << 17)) + 0xa282ead8. */
#ifndef PMCP_IMPORT_TFRECORD_H
#define PMCP_IMPORT_TFRECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

uint32_t pmcp__crc32c(uint32_t crc, const void *data, size_t len);
uint32_t pmcp__crc32c_masked(const void *data, size_t len);

typedef struct pmcp__tfrec {
  FILE *f;
  uint64_t off;      /* offset of the next record */
  uint8_t *buf;
  size_t cap;
  uint64_t err_off;  /* where the fault is, after -1 */
  const char *why;   /* static text, after -1 */
} pmcp__tfrec;

/* 1: a record (data valid until the next call), 0: clean end of file,
 * -1: corrupt or truncated (why, err_off), -2: out of memory or I/O. */
int pmcp__tfrec_next(pmcp__tfrec *r, const uint8_t **data, size_t *len);
void pmcp__tfrec_dispose(pmcp__tfrec *r);

#endif
