/* SPDX-License-Identifier: MIT */
/* A typed scalar as the readers of structured text hand it over: the YAML
 * reader (util/yaml.c, also read by the engine's skills frontmatter) and
 * the importers (import/import.h). */
#ifndef PMCP_UTIL_VALUE_H
#define PMCP_UTIL_VALUE_H

#include <stddef.h>
#include <stdint.h>

typedef enum pmcp__imp_vtype {
  PMCP__IV_NULL = 0,
  PMCP__IV_STR,
  PMCP__IV_INT,
  PMCP__IV_FLOAT,
  PMCP__IV_BOOL,
  PMCP__IV_JSON /* s holds a JSON text (lists, maps) */
} pmcp__imp_vtype;

typedef struct pmcp__imp_value {
  pmcp__imp_vtype type;
  const char *s; /* STR, JSON: NUL-terminated */
  int64_t i;     /* INT, BOOL (0/1) */
  double f;      /* FLOAT */
} pmcp__imp_value;

/* Parses a whole string as a number the way Python writes them
 * ("nan", "inf", "-inf", "1e-05"). 0 or -1. */
int pmcp__imp_parse_double(const char *s, size_t len, double *out);
int pmcp__imp_parse_int64(const char *s, size_t len, int64_t *out);

#endif
