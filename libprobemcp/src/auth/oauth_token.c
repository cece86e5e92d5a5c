/* SPDX-License-Identifier: MIT */
/* The OAuth server's secrets and checks (probemcp/oauth.h): PKCE, the
 * shape and hash of tokens, random ids, the consent pages' CSRF token.
 * No I/O, no state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/oauth_internal.h"
#include "probemcp/oauth.h"
#include "util/base64url.h"
#include "util/buf.h"
#include "util/crypto.h"

static int is_b64url(int c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '-' || c == '_';
}

/* ---- PKCE (RFC 7636) ------------------------------------------------------ */

int pmcp_oauth_verifier_valid(const char *v)
{
  size_t n = v ? strlen(v) : 0;
  if (n < 43 || n > 128)
    return 0;
  for (size_t i = 0; i < n; i++) {
    int c = (unsigned char)v[i];
    if (!is_b64url(c) && c != '.' && c != '~')
      return 0;
  }
  return 1;
}

int pmcp_oauth_challenge_valid(const char *c)
{
  if (!c || strlen(c) != 43)
    return 0;
  for (size_t i = 0; i < 43; i++)
    if (!is_b64url((unsigned char)c[i]))
      return 0;
  return 1;
}

int pmcp_oauth_pkce_s256_ok(const char *verifier, const char *challenge)
{
  if (!pmcp_oauth_verifier_valid(verifier) || !pmcp_oauth_challenge_valid(challenge))
    return 0;
  unsigned char d[PMCP__SHA256_LEN];
  if (pmcp__sha256(verifier, strlen(verifier), d) != 0)
    return 0;
  pmcp_buf b = PMCP_BUF_INIT;
  int ok = pmcp__b64url_encode(&b, d, sizeof d) == 0 && b.len == 43 &&
           pmcp__ct_equal(b.ptr, challenge, 43);
  free(b.ptr);
  return ok;
}

/* ---- tokens ------------------------------------------------------------------ */

/* The start of a call writing into the caller's @p out of @p size bytes:
 * PMCP_EINVAL for a NULL @p in or @p out, PMCP_ETOOBIG when fewer than
 * @p need bytes, else 0. @p out is "" from here until the call succeeds. */
static int out_begin(const void *in, char *out, size_t size, size_t need)
{
  if (!out)
    return PMCP_EINVAL;
  if (size)
    out[0] = '\0';
  if (!in)
    return PMCP_EINVAL;
  return size < need ? PMCP_ETOOBIG : 0;
}

int pmcp_oauth_token_new(const char *prefix, char *out, size_t size)
{
  size_t pn = prefix ? strlen(prefix) : 0;
  /* PMCP_OAUTH_TOKEN_MAX stays enough for every token */
  if (pn + PMCP_OAUTH_SECRET_CHARS + 1 > PMCP_OAUTH_TOKEN_MAX)
    prefix = NULL;
  int rc = out_begin(prefix, out, size, pn + PMCP_OAUTH_SECRET_CHARS + 1);
  if (rc)
    return rc;
  unsigned char raw[32];
  if (pmcp__random_bytes(raw, sizeof raw) != 0)
    return PMCP_EINTERNAL;
  pmcp_buf b = PMCP_BUF_INIT;
  rc = pmcp__b64url_encode(&b, raw, sizeof raw);
  if (rc == 0 && b.len == PMCP_OAUTH_SECRET_CHARS) {
    memcpy(out, prefix, pn);
    memcpy(out + pn, b.ptr, b.len + 1);
  } else if (rc == 0) {
    rc = PMCP_EINTERNAL;
  }
  free(b.ptr);
  return rc;
}

int pmcp_oauth_token_shape_ok(const char *tok, const char *prefix)
{
  size_t pn = strlen(prefix);
  if (!tok || strncmp(tok, prefix, pn) != 0 ||
      strlen(tok) != pn + PMCP_OAUTH_SECRET_CHARS)
    return 0;
  const char *s = tok + pn;
  for (size_t i = 0; i < PMCP_OAUTH_SECRET_CHARS; i++)
    if (!is_b64url((unsigned char)s[i]))
      return 0;
  /* 32 bytes leave 4 unused bits in the last character: our encoder
   * writes them as zero, so a tampered last character is refused here. */
  unsigned char d[40];
  size_t dn;
  return pmcp__b64url_decode(s, PMCP_OAUTH_SECRET_CHARS, d, &dn) == PMCP__B64_OK &&
         dn == 32;
}

int pmcp_oauth_token_hash(const char *tok, char *out, size_t size)
{
  int rc = out_begin(tok, out, size, PMCP_OAUTH_HASH_HEX);
  if (rc)
    return rc;
  unsigned char d[PMCP__SHA256_LEN];
  rc = pmcp__sha256(tok, strlen(tok), d);
  if (rc == 0)
    pmcp__hex(d, sizeof d, out);
  return rc;
}

int pmcp__oauth_random_id(char out[33])
{
  unsigned char raw[18];
  if (pmcp__random_bytes(raw, sizeof raw) != 0)
    return PMCP_EINTERNAL;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__b64url_encode(&b, raw, sizeof raw);
  if (rc == 0)
    snprintf(out, 33, "%s", b.ptr);
  free(b.ptr);
  return rc;
}

/* ---- CSRF ---- */

int pmcp_oauth_csrf_token(const char *cookie, char *out, size_t size)
{
  int rc = out_begin(cookie, out, size, PMCP_OAUTH_HASH_HEX);
  if (rc)
    return rc;
  unsigned char d[PMCP__SHA256_LEN];
  static const char label[] = "probe-mcp consent csrf\n";
  pmcp__sha256_ctx *c = NULL;
  if (pmcp__sha256_begin(&c) == 0) {
    if (pmcp__sha256_update(c, label, sizeof label - 1) == 0 &&
        pmcp__sha256_update(c, cookie, strlen(cookie)) == 0) {
      if (pmcp__sha256_end(c, d) == 0) {
        pmcp__hex(d, sizeof d, out);
        return 0;
      }
    } else {
      pmcp__sha256_abort(c); /* _end frees it, an update does not */
    }
  }
  /* no token rather than one the caller cannot tell from a real one */
  out[0] = '\0';
  return PMCP_EINTERNAL;
}

int pmcp_oauth_csrf_ok(const char *cookie, const char *given)
{
  char tok[PMCP_OAUTH_HASH_HEX];
  if (!cookie || !given || strlen(given) != PMCP_OAUTH_HASH_HEX - 1)
    return 0;
  if (pmcp_oauth_csrf_token(cookie, tok, sizeof tok) != 0)
    return 0;
  return pmcp__ct_equal(tok, given, PMCP_OAUTH_HASH_HEX - 1);
}
