/* SPDX-License-Identifier: MIT */
/* JSON as Python writes it (bare NaN / Infinity allowed), parsed with
 * cJSON; errors name the file and line (hf.c). */
#ifndef PMCP_IMPORT_PYJSON_H
#define PMCP_IMPORT_PYJSON_H

#include <cjson/cJSON.h>

#include "import/import.h"

int pmcp__hf_python_json(const char *s, size_t len, pmcp_buf *out);
int pmcp__hf_number(const cJSON *j, double *out);
/* NULL on failure, with "PATH: line N: ..." on cx (@p base_line is the
 * line number of s[0] in the file). */
cJSON *pmcp__hf_parse(pmcp__imp_ctx *cx, const char *path, int base_line,
                      const char *s, size_t len);

#endif
