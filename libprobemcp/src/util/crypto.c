/* SPDX-License-Identifier: MIT */
#include "util/crypto.h"

#include <errno.h>
#include <sys/random.h>
#include <sys/types.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "probemcp/error.h"

struct pmcp__sha256_ctx {
  EVP_MD_CTX *md;
};

int pmcp__sha256(const void *data, size_t len, unsigned char out[PMCP__SHA256_LEN])
{
  unsigned int n = 0;
  if (!EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) || n != PMCP__SHA256_LEN)
    return PMCP_EINTERNAL;
  return 0;
}

int pmcp__sha256_begin(pmcp__sha256_ctx **out)
{
  *out = NULL;
  pmcp__sha256_ctx *c = OPENSSL_zalloc(sizeof *c);
  if (!c)
    return PMCP_ENOMEM;
  c->md = EVP_MD_CTX_new();
  if (!c->md || !EVP_DigestInit_ex(c->md, EVP_sha256(), NULL)) {
    EVP_MD_CTX_free(c->md);
    OPENSSL_free(c);
    return PMCP_EINTERNAL;
  }
  *out = c;
  return 0;
}

int pmcp__sha256_update(pmcp__sha256_ctx *ctx, const void *data, size_t len)
{
  if (len && !EVP_DigestUpdate(ctx->md, data, len))
    return PMCP_EINTERNAL;
  return 0;
}

int pmcp__sha256_end(pmcp__sha256_ctx *ctx, unsigned char out[PMCP__SHA256_LEN])
{
  unsigned int n = 0;
  int ok = EVP_DigestFinal_ex(ctx->md, out, &n) && n == PMCP__SHA256_LEN;
  pmcp__sha256_abort(ctx);
  return ok ? 0 : PMCP_EINTERNAL;
}

void pmcp__sha256_abort(pmcp__sha256_ctx *ctx)
{
  if (!ctx)
    return;
  EVP_MD_CTX_free(ctx->md);
  OPENSSL_free(ctx);
}

int pmcp__hmac_sha256(const void *key, size_t key_len,
                      const void *a, size_t a_len,
                      const void *b, size_t b_len,
                      unsigned char out[PMCP__SHA256_LEN])
{
  /* EVP_MAC keeps this free of the HMAC_CTX calls OpenSSL 3 deprecates. */
  static const unsigned char empty_key[1] = {0};
  EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
  EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {
    OSSL_PARAM_construct_utf8_string("digest", digest, 0),
    OSSL_PARAM_construct_end(),
  };
  size_t n = 0;
  int ok = ctx &&
           EVP_MAC_init(ctx, key_len ? key : empty_key, key_len, params) &&
           (!a_len || EVP_MAC_update(ctx, a, a_len)) &&
           (!b_len || EVP_MAC_update(ctx, b, b_len)) &&
           EVP_MAC_final(ctx, out, &n, PMCP__SHA256_LEN) && n == PMCP__SHA256_LEN;
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
  return ok ? 0 : PMCP_EINTERNAL;
}

int pmcp__random_bytes(void *out, size_t len)
{
  /* getrandom(2) first: it needs no initialisation, whereas the first
   * RAND_bytes() makes OpenSSL load its configuration and providers (5-15
   * ms), which every pmcp_server_new() paid for its cursor key before the
   * first message could be answered. OpenSSL stays the fallback. */
  unsigned char *p = out;
  size_t done = 0;
  while (done < len) {
    ssize_t n = getrandom(p + done, len - done, 0);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    done += (size_t)n;
  }
  if (done == len)
    return 0;
  if (len > INT32_MAX || RAND_bytes(out, (int)len) != 1)
    return PMCP_EINTERNAL;
  return 0;
}

int pmcp__ct_equal(const void *a, const void *b, size_t len)
{
  return CRYPTO_memcmp(a, b, len) == 0;
}

void pmcp__hex(const unsigned char *data, size_t len, char *out)
{
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < len; i++) {
    out[2 * i] = digits[data[i] >> 4];
    out[2 * i + 1] = digits[data[i] & 15];
  }
  out[2 * len] = '\0';
}
