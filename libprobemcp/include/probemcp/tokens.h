/* SPDX-License-Identifier: MIT */
/**
 * @file tokens.h
 * The o200k_base tokenizer, exactly as tiktoken's `encode_ordinary` (the
 * encoding of GPT-4o-class models): same pre-tokenization (Unicode 16.0
 * classes), same byte-pair merges, same ids. Budgets are measured with it.
 *
 * The merge ranks are built into the library as constant tables: no file,
 * no network and no initialization at run time. Special tokens such as
 * `<|endoftext|>` are ordinary text here, as in `encode_ordinary`.
 *
 * Text must be valid UTF-8 (no surrogates, overlongs or code points above
 * U+10FFFF); anything else is refused with PMCP_EUTF8 and nothing is
 * counted. (tiktoken itself only accepts valid Unicode strings; its Python
 * and JS wrappers turn lone surrogates into U+FFFD before encoding. A caller
 * that wants that behaviour replaces invalid sequences before counting.)
 *
 * Thread-safety: every function may be called from any number of threads at
 * once; a pmcp_tokens_counter is used by one thread at a time.
 * Cost: linear in the text (O(n log n) inside a piece longer than 128 bytes
 * that is not a single token, such as a megabyte of one letter); counting
 * allocates nothing unless such a long piece occurs.
 */
#ifndef PROBEMCP_TOKENS_H
#define PROBEMCP_TOKENS_H

#include "common.h"
#include "error.h"

PMCP_BEGIN_DECLS

/** Ids of the two special tokens of o200k_base (never produced by
 *  pmcp_tokens_encode(), which treats their text as ordinary text). */
#define PMCP_TOKEN_ENDOFTEXT 199999u
#define PMCP_TOKEN_ENDOFPROMPT 200018u

/**
 * Counts the o200k_base tokens of @p text.
 * @param text UTF-8 text (may be NULL when @p len is 0); need not be
 *             NUL-terminated and may contain NUL bytes.
 * @param[out] out the count; left unchanged on failure.
 * @return 0; PMCP_EINVAL (@p out NULL, or @p text NULL with @p len > 0);
 *         PMCP_EUTF8 (not valid UTF-8; pmcp_tokens_utf8_check() says where);
 *         PMCP_ENOMEM (only while merging a piece longer than 128 bytes);
 *         PMCP_ETOOBIG (one pre-tokenizer piece of 4 GiB or more).
 * @since 0.1
 */
PMCP_API int pmcp_tokens_count(const char *text, size_t len, size_t *out);

/**
 * Encodes @p text into o200k_base token ids.
 * @param[out] out a malloc'd array of @p n ids (NULL when @p n is 0);
 *             free it with pmcp_tokens_free().
 * @param[out] n the number of ids (equal to what pmcp_tokens_count() gives).
 * @return 0; PMCP_EINVAL; PMCP_EUTF8; PMCP_ENOMEM; PMCP_ETOOBIG (as
 *         pmcp_tokens_count()). On failure *out is NULL and *n is 0.
 * @since 0.1
 */
PMCP_API int pmcp_tokens_encode(const char *text, size_t len, uint32_t **out, size_t *n);

/** Frees an array returned by pmcp_tokens_encode(). NULL is allowed. */
PMCP_API void pmcp_tokens_free(uint32_t *ids);

/**
 * Appends the bytes of token ids @p ids[0..n) to @p out (ids 0-199997 and
 * the two special tokens, which decode to their text). The bytes of a
 * prefix of a valid encoding need not be valid UTF-8: a character may be
 * split across tokens.
 * @return 0; PMCP_EINVAL (an id that is not a token of o200k_base, @p out
 *         NULL, @p ids NULL with @p n > 0; @p out is left as it was);
 *         PMCP_ENOMEM.
 * @since 0.1
 */
PMCP_API int pmcp_tokens_decode(const uint32_t *ids, size_t n, pmcp_buf *out);

/**
 * Checks that @p text is valid UTF-8.
 * @param[out] bad_offset when invalid: the byte offset of the first byte of
 *             the first invalid or truncated sequence. May be NULL.
 * @return 0 or PMCP_EUTF8 (PMCP_EINVAL for @p text NULL with @p len > 0).
 * @since 0.1
 */
PMCP_API int pmcp_tokens_utf8_check(const char *text, size_t len, size_t *bad_offset);

/**
 * An incremental counter: the count of a text that is appended to piece by
 * piece (a page being built), without re-tokenizing what came before.
 * Appending is not additive in general (a word may continue in the next
 * chunk, "日本A" + "b" re-splits); the counter keeps the unfinished end of
 * the text (the pieces whose boundaries could still change) and re-scans
 * only that. A chunk may end in the middle of a UTF-8 character.
 */
typedef struct pmcp_tokens_counter pmcp_tokens_counter;

/** Creates an empty counter. @return 0, PMCP_EINVAL (@p out NULL),
 *  PMCP_ENOMEM. Ownership: free with pmcp_tokens_counter_free(). */
PMCP_API int pmcp_tokens_counter_new(pmcp_tokens_counter **out);

/** Frees @p c. NULL is allowed. */
PMCP_API void pmcp_tokens_counter_free(pmcp_tokens_counter *c);

/** Empties @p c (as if just created), keeping its memory. */
PMCP_API void pmcp_tokens_counter_reset(pmcp_tokens_counter *c);

/**
 * Appends @p len bytes. Cost: amortized O(len): the unfinished end is
 * re-scanned only when the text has grown by as much as that end (or by 64
 * bytes), so even one long word fed byte by byte stays linear.
 * @return 0; PMCP_EINVAL; PMCP_EUTF8 (the bytes are not valid UTF-8 after
 *         what came before; nothing was appended); PMCP_ENOMEM (nothing was
 *         appended).
 */
PMCP_API int pmcp_tokens_counter_add(pmcp_tokens_counter *c, const char *text, size_t len);

/**
 * The count of everything appended so far, as pmcp_tokens_count() of the
 * concatenation gives it.
 * @return 0; PMCP_EINVAL; PMCP_EUTF8 (the text ends inside a UTF-8
 *         character); PMCP_ENOMEM.
 */
PMCP_API int pmcp_tokens_counter_total(pmcp_tokens_counter *c, size_t *out);

/**
 * The count the text would have with @p suffix appended (for instance the
 * closing brackets of a page), without appending it.
 * @return as pmcp_tokens_counter_total(); PMCP_EUTF8 also when @p suffix
 *         is invalid after the text.
 */
PMCP_API int pmcp_tokens_counter_peek(pmcp_tokens_counter *c, const char *suffix,
                                      size_t len, size_t *out);

/**
 * Makes @p dst an exact copy of @p src (a snapshot to roll back to).
 * @return 0; PMCP_EINVAL; PMCP_ENOMEM (@p dst unchanged).
 */
PMCP_API int pmcp_tokens_counter_copy(pmcp_tokens_counter *dst,
                                      const pmcp_tokens_counter *src);

/** Bytes appended to @p c so far (0 for NULL). */
PMCP_API size_t pmcp_tokens_counter_bytes(const pmcp_tokens_counter *c);

PMCP_END_DECLS

#endif
