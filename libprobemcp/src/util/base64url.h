/* SPDX-License-Identifier: MIT */
/* Internal base64url (RFC 4648 section 5) without padding, with a strict
 * decoder: cursors must round-trip byte for byte, so anything another
 * encoder might produce (padding, '+' '/', line breaks, non-zero trailing
 * bits) is refused with a specific code. */
#ifndef PMCP_UTIL_BASE64URL_H
#define PMCP_UTIL_BASE64URL_H

#include <stddef.h>
#include "probemcp/common.h"

/* Length of the encoding of @p n bytes. */
size_t pmcp__b64url_len(size_t n);
/* Appends the encoding of @p data to @p out. 0 or PMCP_ENOMEM. */
int pmcp__b64url_encode(pmcp_buf *out, const void *data, size_t len);

/* Why a decode failed. */
enum {
  PMCP__B64_OK = 0,
  PMCP__B64_BADCHAR = 1,    /* a byte outside the base64url alphabet */
  PMCP__B64_FOREIGN = 2,    /* '+', '/', '=' or '%': another encoding */
  PMCP__B64_BADLEN = 3,     /* a length no unpadded encoding has */
  PMCP__B64_NONCANON = 4    /* trailing bits set: not our encoder's output
                              * (the bytes are still decoded) */
};
/* Decodes @p len characters into @p out (which needs len*3/4+1 bytes);
 * sets *out_len. Returns PMCP__B64_*. */
int pmcp__b64url_decode(const char *in, size_t len, unsigned char *out,
                        size_t *out_len);

#endif
