/* SPDX-License-Identifier: MIT */
/* Byte-level JSON text helpers. cJSON gives us values but not their source
 * text; the engine needs the exact text of some values (a numeric request id
 * is echoed byte for byte, a literal schema is spliced in as written), so
 * these scan text that cJSON has already accepted. */
#ifndef PMCP_UTIL_JSON_H
#define PMCP_UTIL_JSON_H

#include <stddef.h>
#include "probemcp/common.h"

/* Pointer just past the JSON value starting at @p p (leading whitespace
 * skipped), or NULL if the text is not one well-formed value. */
const char *pmcp__json_skip(const char *p, const char *end);

/* True when [p, p+len) is exactly one JSON value (whitespace around). */
int pmcp__json_valid(const char *p, size_t len);

/* Finds the first member named @p key of the object text [obj, obj+len).
 * On success stores the value's span (no surrounding whitespace) and
 * returns 1; 0 when absent or the text is not an object. Keys with escapes
 * are decoded before comparing. */
int pmcp__json_member(const char *obj, size_t len, const char *key,
                      const char **val, size_t *val_len);

/* pmcp__json_member() for @p n keys in one pass over an object whose text
 * is known to be well-formed (the engine's own results: values are
 * skipped by their brackets and quotes, only the bounds checked): vals[i]
 * and lens[i] get the span of the first member named keys[i], or NULL and
 * 0 when it is absent. Returns how many were found; 0 as well when the
 * text is not an object. */
size_t pmcp__json_members(const char *obj, size_t len, const char *const *keys,
                          size_t n, const char **vals, size_t *lens);

/* The next element of an array whose well-formed text (as for
 * pmcp__json_members) continues at @p p, just after its '[' or after an
 * element: its span (no surrounding whitespace) in *val, *val_len.
 * Returns where the scan goes on, or NULL at the array's end. */
const char *pmcp__json_element(const char *p, const char *end, const char **val,
                               size_t *val_len);

/* Follows a path of member names, e.g. {"params","_meta","progressToken"}. */
int pmcp__json_path(const char *obj, size_t len, const char *const *keys,
                    size_t n_keys, const char **val, size_t *val_len);

/* True when [p, p+len) is exactly a JSON integer (-?(0|[1-9][0-9]*)). */
int pmcp__json_is_integer(const char *p, size_t len);

/* True when [p, p+len) is valid UTF-8 (no overlongs, no surrogates). */
int pmcp__utf8_valid(const char *p, size_t len);

/* Number of code points of valid UTF-8 text. */
size_t pmcp__utf8_count(const char *p, size_t len);

/* Appends the JSON value text with insignificant whitespace removed; every
 * token (key order, number spelling, string escapes) is kept as written.
 * The input must be one well-formed value. 0 or PMCP_ENOMEM / PMCP_EINVAL. */
int pmcp__json_minify(pmcp_buf *out, const char *p, size_t len);

/* Appends a finite double in its shortest round-tripping form; integers
 * up to 2^53 without exponent or fraction. PMCP_EINVAL for NaN/inf. */
int pmcp__buf_number(pmcp_buf *b, double v);

/* The exact printer of JSON trees (json_print.c), pmcp_json_normalize()'s
 * too: compact, every finite number as exactly its double in shortest
 * round-trip form (cJSON's printer takes a double within a few ulps for the
 * same and may write a neighbour: 0.30000000000000004 as 0.3), strings
 * with the writer's escapes (invalid UTF-8 as U+FFFD), raw items as they
 * are. A number that is not finite is written as null, as the store reads
 * it back, or refused (PMCP_EINVAL) with PMCP__PRINT_FINITE. Appends to
 * @p out; 0, or PMCP_ENOMEM, PMCP_EINVAL (an invalid item),
 * PMCP_ETOOBIG (nested deeper than cJSON parses), @p out then as it was. */
typedef struct cJSON cJSON;
enum { PMCP__PRINT_FINITE = 1u << 0 };
int pmcp__cjson_write(pmcp_buf *out, const cJSON *v, unsigned flags);
/* pmcp__cjson_write() of @p v as a string to free with cJSON_free(); NULL
 * when out of memory (or for a tree no parse made: an invalid item, too
 * deep). A stored value goes through this. */
char *pmcp__cjson_print(const cJSON *v);

#endif
