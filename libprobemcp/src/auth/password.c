/* SPDX-License-Identifier: MIT */
/* Passwords: PBKDF2-HMAC-SHA256 from libcrypto with a random 16-byte salt
 * and a high iteration count, stored with its parameters so the count can
 * be raised later without breaking old hashes:
 *   pbkdf2-sha256$ITER$SALT$HASH   (SALT, HASH base64url, unpadded)
 * Verification recomputes with the stored parameters and compares in
 * constant time. */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "auth/auth.h"
#include "util/base64url.h"
#include "util/buf.h"
#include "util/crypto.h"

#define SALT_LEN 16
#define HASH_LEN 32
#define PW_MAX 1024
/* Bounds a stored count may have: refuses a string that would make a
 * verification cost nothing or take minutes. */
#define ITER_MIN 10000u
#define ITER_MAX 10000000u

static int derive(const char *pw, const unsigned char *salt, size_t salt_len, unsigned iter,
                  unsigned char out[HASH_LEN])
{
  return PKCS5_PBKDF2_HMAC(pw, (int)strlen(pw), salt, (int)salt_len, (int)iter,
                           EVP_sha256(), HASH_LEN, out) == 1 ? 0 : PMCP_EINTERNAL;
}

int pmcp__password_hash(pmcp_buf *out, const char *pw, unsigned iter)
{
  if (!pw || !*pw || strlen(pw) > PW_MAX)
    return PMCP_EINVAL;
  if (iter == 0)
    iter = PMCP__PBKDF2_ITER;
  if (iter < ITER_MIN || iter > ITER_MAX)
    return PMCP_EINVAL;
  unsigned char salt[SALT_LEN], hash[HASH_LEN];
  int rc = pmcp__random_bytes(salt, sizeof salt);
  if (rc == 0)
    rc = derive(pw, salt, sizeof salt, iter, hash);
  if (rc == 0)
    rc = pmcp__buf_printf(out, "pbkdf2-sha256$%u$", iter);
  if (rc == 0)
    rc = pmcp__b64url_encode(out, salt, sizeof salt);
  if (rc == 0)
    rc = pmcp__buf_putc(out, '$');
  if (rc == 0)
    rc = pmcp__b64url_encode(out, hash, sizeof hash);
  OPENSSL_cleanse(hash, sizeof hash);
  return rc;
}

/* The answer for a stored string that is absent or malformed, after one
 * derivation at the default count: a caller that passes NULL for an
 * unknown user takes as long as for a known one, so the time taken does
 * not tell which names exist. */
static int refuse(const char *pw)
{
  static const unsigned char salt[SALT_LEN];
  unsigned char got[HASH_LEN];
  derive(pw && strlen(pw) <= PW_MAX ? pw : "", salt, sizeof salt, PMCP__PBKDF2_ITER, got);
  OPENSSL_cleanse(got, sizeof got);
  return 0;
}

int pmcp__password_verify(const char *stored, const char *pw)
{
  static const char tag[] = "pbkdf2-sha256$";
  if (!stored || !pw || !*pw || strlen(pw) > PW_MAX ||
      strncmp(stored, tag, sizeof tag - 1) != 0)
    return refuse(pw);
  const char *p = stored + sizeof tag - 1;
  char *end = NULL;
  unsigned long iter = strtoul(p, &end, 10);
  if (end == p || *end != '$' || iter < ITER_MIN || iter > ITER_MAX)
    return refuse(pw);
  const char *salt_txt = end + 1;
  const char *dollar = strchr(salt_txt, '$');
  if (!dollar)
    return refuse(pw);
  const char *hash_txt = dollar + 1;
  size_t salt_n = (size_t)(dollar - salt_txt), hash_n = strlen(hash_txt);
  if (salt_n == 0 || salt_n > 64 || hash_n != pmcp__b64url_len(HASH_LEN))
    return refuse(pw);
  unsigned char salt[64], want[HASH_LEN + 4], got[HASH_LEN];
  size_t salt_len = 0, want_len = 0;
  if (pmcp__b64url_decode(salt_txt, salt_n, salt, &salt_len) != PMCP__B64_OK ||
      pmcp__b64url_decode(hash_txt, hash_n, want, &want_len) != PMCP__B64_OK ||
      want_len != HASH_LEN)
    return refuse(pw);
  if (derive(pw, salt, salt_len, (unsigned)iter, got) != 0)
    return 0;
  int ok = pmcp__ct_equal(got, want, HASH_LEN);
  OPENSSL_cleanse(got, sizeof got);
  return ok;
}
