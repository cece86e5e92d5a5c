/* SPDX-License-Identifier: MIT */
/* The server-keyed cursor calls (cursor.h): the key lives in the server
 * (pmcp__server_cursor_key()), the codec in cursor.c. */
#include "core/cursor_int.h"

#include <string.h>

/* ---- public, server-keyed ----------------------------------------------- */

int pmcp_server_set_cursor_key(pmcp_server *server, const void *key, size_t len)
{
  if (!server || !key || len < PMCP_CURSOR_KEY_MIN || len > PMCP_CURSOR_KEY_MAX)
    return PMCP_EINVAL;
  pmcp__cursor_key *k = pmcp__server_cursor_key(server);
  if (!k)
    return PMCP_EMISUSE;
  memcpy(k->key, key, len);
  k->len = len;
  return 0;
}

int pmcp_cursor_encode(pmcp_server *server, const char *tool,
                       const char *args_json, uint64_t source_version,
                       const void *state, size_t state_len, pmcp_buf *out)
{
  if (!server || !tool || !out)
    return PMCP_EINVAL;
  pmcp__cursor_key *k = pmcp__server_cursor_key(server);
  if (!k)
    return PMCP_EMISUSE;
  unsigned char ah[PMCP__ARGS_HASH_LEN];
  int rc = pmcp__args_hash(args_json, args_json ? strlen(args_json) : 0, ah);
  if (rc)
    return rc;
  return pmcp__cursor_encode_key(k->key, k->len, tool, ah, source_version,
                                 state, state_len, out);
}

int pmcp_cursor_decode(pmcp_server *server, const char *tool,
                       const char *args_json, uint64_t source_version,
                       const char *cursor, size_t cursor_len, pmcp_buf *state,
                       pmcp_cursor_status *status)
{
  if (status)
    *status = PMCP_CURSOR_OK;
  if (!server || !tool || !state)
    return PMCP_EINVAL;
  pmcp__cursor_key *k = pmcp__server_cursor_key(server);
  if (!k)
    return PMCP_EMISUSE;
  unsigned char ah[PMCP__ARGS_HASH_LEN];
  int rc = pmcp__args_hash(args_json, args_json ? strlen(args_json) : 0, ah);
  if (rc)
    return rc;
  return pmcp__cursor_decode_key(k->key, k->len, tool, ah, source_version,
                                 cursor, cursor_len, state, status);
}
