/* SPDX-License-Identifier: MIT */
/* The YAML reader of the importers (MLflow meta.yaml, Lightning
 * hparams.yaml) and of skills' SKILL.md frontmatter, on libyaml: all of
 * YAML 1.1 (anchors and aliases, merge keys, flow and block collections,
 * block scalars, comments, tags). The
 * document must be one mapping (or empty); nested mappings become paths
 * joined with '/', and a sequence (or an empty mapping) is one value, its
 * JSON text. Works on a buffer of known length (no NUL needed). */
#ifndef PMCP_UTIL_YAML_H
#define PMCP_UTIL_YAML_H

#include <stddef.h>

#include "util/value.h"

/* Called once per scalar (or sequence) with its full path ("a/b/c") and
 * the 1-based line where the value starts. A non-zero return stops the
 * parse and is returned. */
typedef int (*pmcp__yaml_fn)(void *ud, const char *path,
                             const pmcp__imp_value *v, int line);

/* 0; or PMCP_EPARSE with *err_line and *why (static text) set; or
 * PMCP_ENOMEM; or the callback's non-zero return. */
int pmcp__yaml_parse(const char *buf, size_t len, pmcp__yaml_fn fn, void *ud,
                     int *err_line, const char **why);

#endif
