/* A minimal YAML reader for the files importers meet: MLflow meta.yaml
 * (flat "key: value") and Lightning hparams.yaml (nested block mappings).
 * Supported: block mappings nested by indentation (keys joined into paths
 * with '/'), block sequences of scalars and flow sequences of plain
 * scalars (reported as a JSON array), plain, single- and double-quoted
 * scalars (also folded over several lines), comments, "---" / "...".
 * Everything else (anchors, aliases, tags, block scalars, flow mappings
 * with content, sequences of mappings) is refused with an error naming
 * the line: better a clear error than a silent misreading. Works on a
 * buffer of known length (no NUL needed); never reads outside it. */
#ifndef PMCP_UTIL_YAML_H
#define PMCP_UTIL_YAML_H

#include <stddef.h>

#include "util/value.h"

/* Called once per scalar (or sequence) with its full path ("a/b/c"). A
 * non-zero return stops the parse and is returned. */
typedef int (*pmcp__yaml_fn)(void *ud, const char *path,
                             const pmcp__imp_value *v, int line);

/* 0; or PMCP_EPARSE with *err_line and *why (static text) set; or
 * PMCP_ENOMEM; or the callback's non-zero return. */
int pmcp__yaml_parse(const char *buf, size_t len, pmcp__yaml_fn fn, void *ud,
                     int *err_line, const char **why);

#endif
