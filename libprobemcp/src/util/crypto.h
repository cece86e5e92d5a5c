/* SPDX-License-Identifier: MIT */
/* Internal wrappers over libcrypto: SHA-256, HMAC-SHA256, random bytes and
 * constant-time comparison. Kept behind one header so no other file includes
 * OpenSSL headers. */
#ifndef PMCP_UTIL_CRYPTO_H
#define PMCP_UTIL_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#define PMCP__SHA256_LEN 32

/* One-shot SHA-256 of @p len bytes. 0 or PMCP_EINTERNAL. */
int pmcp__sha256(const void *data, size_t len, unsigned char out[PMCP__SHA256_LEN]);

/* Incremental SHA-256 (opaque context over EVP). */
typedef struct pmcp__sha256_ctx pmcp__sha256_ctx;
int pmcp__sha256_begin(pmcp__sha256_ctx **out);
int pmcp__sha256_update(pmcp__sha256_ctx *ctx, const void *data, size_t len);
/* Writes the digest and frees the context (also on failure). */
int pmcp__sha256_end(pmcp__sha256_ctx *ctx, unsigned char out[PMCP__SHA256_LEN]);
/* Frees an unfinished context. NULL ok. */
void pmcp__sha256_abort(pmcp__sha256_ctx *ctx);

/* HMAC-SHA256 over the concatenation of two parts (either may be empty), so
 * callers can prepend a domain label without copying. 0 or PMCP_EINTERNAL. */
int pmcp__hmac_sha256(const void *key, size_t key_len,
                      const void *a, size_t a_len,
                      const void *b, size_t b_len,
                      unsigned char out[PMCP__SHA256_LEN]);

/* Cryptographically strong random bytes. 0 or PMCP_EINTERNAL. */
int pmcp__random_bytes(void *out, size_t len);

/* Constant-time equality of two @p len byte strings: 1 equal, 0 not. */
int pmcp__ct_equal(const void *a, const void *b, size_t len);

/* Lower-case hex of @p len bytes into @p out (2*len+1 bytes, NUL-terminated). */
void pmcp__hex(const unsigned char *data, size_t len, char *out);

#endif
