/* SPDX-License-Identifier: MIT */
/**
 * @file json.h
 * The one JSON writer tools use for their results, and the JSON string
 * decoder. The writer writes compact JSON (no spaces), checks nesting,
 * replaces invalid UTF-8 in strings with U+FFFD, and formats every double
 * through one number serializer: six significant figures by default, the
 * shortest representation that reads back to the same double with
 * PMCP_JSON_LOSSLESS. Non-finite values are never dropped silently: they
 * are written as the strings "NaN", "Infinity" and "-Infinity" and counted
 * (pmcp_json_non_finite()); a page reports the count as "non_finite".
 *
 * pmcp_json_string_decode() reads a string literal, for hosts that parse
 * JSON text of their own; pmcp_json_normalize() rewrites JSON text in the
 * exact form the library stores values in.
 *
 * Thread-safety: a writer is used by one thread at a time.
 */
#ifndef PROBEMCP_JSON_H
#define PROBEMCP_JSON_H

#include "common.h"
#include "error.h"

PMCP_BEGIN_DECLS

typedef struct pmcp_json pmcp_json;

/** Writer and number flags. */
enum {
  /** Doubles in shortest round-trip form instead of six significant
   *  figures (lossless modes, SQL rows). */
  PMCP_JSON_LOSSLESS = 1u << 0
};

/** Room pmcp_json_format_number() needs for any double, NUL included. */
#define PMCP_JSON_NUMBER_MAX 32

/**
 * Formats @p v as JSON text into @p out of @p out_size bytes: six
 * significant figures ("%.6g" rules, e.g. 0.333333, 1.23457e+06), or with
 * PMCP_JSON_LOSSLESS in @p flags the shortest text that strtod() reads
 * back as exactly @p v. Non-finite values become the quoted strings "NaN",
 * "Infinity", "-Infinity". The decimal point is '.' whatever LC_NUMERIC
 * the host set. PMCP_JSON_NUMBER_MAX bytes always suffice.
 * @return the text's length, NUL not counted, as snprintf() counts it:
 * when that is @p out_size or more, @p out was too small and holds ""
 * (nothing at all when @p out_size is 0; @p out may then be NULL), never
 * a cut number.
 */
PMCP_API size_t pmcp_json_format_number(double v, unsigned flags, char *out,
                                        size_t out_size);

/** 1 when [@p s, @p s + @p len) is valid UTF-8 (no overlong forms, no
 *  surrogates), else 0: what JSON text and
 *  strings must be before they are parsed or written. */
PMCP_API int pmcp_utf8_valid(const char *s, size_t len);

/** Creates a writer. @return 0, PMCP_ENOMEM. */
PMCP_API int pmcp_json_new(pmcp_json **out, unsigned flags);
/** NULL ok. */
PMCP_API void pmcp_json_free(pmcp_json *j);
/** Empties the writer (text, error, non-finite count); keeps its flags. */
PMCP_API void pmcp_json_reset(pmcp_json *j);

/* Structure. Every call returns 0, PMCP_ENOMEM, or PMCP_EMISUSE (a value
 * where a key is expected, a key outside an object, unbalanced ends, a
 * second top-level value, nesting deeper than 64). The first error sticks:
 * later calls return it and write nothing. */
PMCP_API int pmcp_json_object_begin(pmcp_json *j);
PMCP_API int pmcp_json_object_end(pmcp_json *j);
PMCP_API int pmcp_json_array_begin(pmcp_json *j);
PMCP_API int pmcp_json_array_end(pmcp_json *j);
/** An object key (NUL-terminated). */
PMCP_API int pmcp_json_key(pmcp_json *j, const char *key);

/* Values. */
PMCP_API int pmcp_json_string(pmcp_json *j, const char *s);
PMCP_API int pmcp_json_string_n(pmcp_json *j, const char *s, size_t len);
PMCP_API int pmcp_json_int(pmcp_json *j, int64_t v);
PMCP_API int pmcp_json_uint(pmcp_json *j, uint64_t v);
/** A double in the writer's mode (see pmcp_json_format_number()). */
PMCP_API int pmcp_json_number(pmcp_json *j, double v);
/** A double in shortest round-trip form whatever the writer's mode. */
PMCP_API int pmcp_json_number_lossless(pmcp_json *j, double v);
PMCP_API int pmcp_json_bool(pmcp_json *j, int v);
PMCP_API int pmcp_json_null(pmcp_json *j);
/** A value that is already JSON text, copied as is (the caller vouches for
 *  it; it is not re-parsed). @return also PMCP_EINVAL when @p len is 0. */
PMCP_API int pmcp_json_raw(pmcp_json *j, const char *json, size_t len);

/** The text written so far; NULL until one complete top-level value has
 *  been written or after an error. Borrowed until the next call on @p j. */
PMCP_API const char *pmcp_json_text(const pmcp_json *j, size_t *len);
/** The sticky error, or 0. */
PMCP_API int pmcp_json_error(const pmcp_json *j);
/** How many non-finite doubles were written as strings. */
PMCP_API size_t pmcp_json_non_finite(const pmcp_json *j);

/* Reading. */

/** pmcp_json_string_decode() flags. */
enum {
  /** Refuse \u0000, so that the decoded text is a C string. */
  PMCP_JSON_NO_NUL = 1u << 0
};

/**
 * Decodes the JSON string literal (RFC 8259) that starts [in, in + len)
 * with its opening quote; bytes after its closing quote are not read.
 * Escapes are decoded to UTF-8, a surrogate pair to one code point; other
 * bytes are copied as they are (UTF-8 is not checked).
 *
 * @p out receives the decoded text and a NUL after it. It needs room for
 * @p len bytes: the text is never longer than its literal (every escape
 * is longer than what it stands for), so @p out may be @p in + 1 to
 * decode in place, the text then ending at or before the closing quote.
 * @p out NULL only checks the literal and measures it: then *out_len is
 * the room minus one that a second call needs, and *out_len + 2 ==
 * *used exactly when the literal has no escape (its text is then
 * [in + 1, in + 1 + *out_len)).
 *
 * On success *used (NULL ok) is the literal's length, both quotes
 * included, and *out_len (NULL ok) the text's length, a decoded \u0000
 * included (then the text is not a C string; PMCP_JSON_NO_NUL in
 * @p flags refuses it instead).
 *
 * @return 0; PMCP_EINVAL when the bytes are not a string literal: no
 * opening or closing quote, an unescaped control character, an unknown
 * escape, a \u without four hex digits, an unpaired surrogate. Then
 * *used is the offset of the offending byte (len when the input ended
 * first) and *expected (NULL ok) a static English phrase saying what was
 * expected there, e.g. "four hex digits after \u"; @p out may hold part
 * of the text.
 * Thread-safe; allocates nothing.
 */
PMCP_API int pmcp_json_string_decode(const char *in, size_t len, unsigned flags, char *out,
                                     size_t *used, size_t *out_len, const char **expected);

/**
 * Appends to @p out the one JSON value of [json, json + len) (whitespace
 * around it allowed) written exactly and compactly, as the store writes
 * the values it keeps: every number in the fewest significant digits that
 * read back as the same double (pmcp_json_format_number() with
 * PMCP_JSON_LOSSLESS: 1.0 becomes 1, 1000 1e+03, 0.30000000000000004 and
 * -0 stay; an integer beyond 2^53 becomes the double nearest it, as any
 * parser that reads JSON numbers as doubles reads it), every string with
 * the writer's escapes (bytes that are not UTF-8 become U+FFFD),
 * insignificant whitespace dropped, members in their order and duplicates
 * kept. The decimal point is '.' whatever LC_NUMERIC the host set. A host
 * that builds JSON with a library whose printer rounds doubles gives it
 * the numbers as text (pmcp_json_format_number()) and the result to this.
 *
 * @p out is the caller's (a zeroed pmcp_buf, or one holding text to
 * append to) and stays so: release it with pmcp_buf_dispose(). On
 * failure it is as it was.
 *
 * @return 0; PMCP_EPARSE when the text is not exactly one JSON value
 * (RFC 8259); PMCP_ETOOBIG when it nests deeper than 1000 arrays and
 * objects; PMCP_EINVAL when @p out is NULL, @p json is NULL with a
 * length, a number is beyond the range of a double (1e400: it would read
 * back as infinity) or a string holds \u0000 (the library's strings are
 * C strings); PMCP_ENOMEM.
 * Thread-safe.
 */
PMCP_API int pmcp_json_normalize(const char *json, size_t len, pmcp_buf *out);

PMCP_END_DECLS

#endif
