/* SPDX-License-Identifier: MIT */
/* A small protobuf wire-format reader (just what the TensorBoard event
 * records need): iterate the fields of one message held in memory. Never
 * reads outside [p, end); malformed input yields -1, never a crash. */
#ifndef PMCP_IMPORT_PB_H
#define PMCP_IMPORT_PB_H

#include <stddef.h>
#include <stdint.h>

enum {
  PMCP__PB_VARINT = 0,
  PMCP__PB_I64 = 1,
  PMCP__PB_LEN = 2,
  PMCP__PB_I32 = 5
};

typedef struct pmcp__pb {
  const uint8_t *p, *end;
} pmcp__pb;

typedef struct pmcp__pb_field {
  uint32_t num;
  int wire;
  uint64_t u;          /* VARINT, I64 (raw bits), I32 (raw bits) */
  const uint8_t *data; /* LEN */
  size_t len;
} pmcp__pb_field;

static inline void pmcp__pb_init(pmcp__pb *r, const void *data, size_t len)
{
  r->p = data;
  r->end = r->p + len;
}

/* 1: a field in *f; 0: end of message; -1: malformed (r->p at the fault).
 * Groups (wire types 3, 4) are refused: no message we read uses them. */
int pmcp__pb_next(pmcp__pb *r, pmcp__pb_field *f);
/* Reads one varint from [*p, end); 0 or -1. */
int pmcp__pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *out);
double pmcp__pb_double(uint64_t bits);
float pmcp__pb_float(uint32_t bits);
/* A numeric field as double: double (I64), float (I32) or integer. */
int pmcp__pb_as_double(const pmcp__pb_field *f, double *out);
/* Appends the elements of a repeated double field, packed (LEN) or not
 * (I64), to a growable array. 0, -1 (malformed) or -2 (no memory). */
int pmcp__pb_doubles(const pmcp__pb_field *f, double **arr, size_t *n,
                     size_t *cap);

#endif
