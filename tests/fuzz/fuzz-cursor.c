/* SPDX-License-Identifier: MIT */
/* The cursor decoder and the page's reading of cursor payloads. The first
 * byte picks what the rest is:
 *   0: cursor text, decoded as a client would send it;
 *   1: the raw bytes of a cursor, given a valid MAC first, so the checks
 *      behind authentication (flags, varints, zstd) see hostile input;
 *   2: a position state, encoded then decoded: must round-trip exactly;
 *   3: a page payload (tag, fragment state, tool state) under a valid
 *      cursor, opened by a page that then reads a document in fragments. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cursor_int.h"
#include "probemcp/budget.h"
#include "util/base64url.h"
#include "util/buf.h"
#include "util/crypto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const unsigned char key[32] = "fuzz-cursor-key-0123456789abcdef";
static const char label[] = "probe-mcp cursor v1";

static void open_page(const char *cursor)
{
  pmcp_page_options o = PMCP_PAGE_OPTIONS_INIT;
  o.token_budget = 512;
  o.tool = "fuzz";
  o.args_json = "{\"a\":1}";
  o.cursor = cursor;
  o.key = key;
  o.key_len = sizeof key;
  pmcp_page *pg = NULL;
  if (pmcp_page_new(&pg, &o))
    return;
  const void *pos;
  size_t len;
  if (pmcp_page_position(pg, &pos, &len) == 0) {
    pmcp_page_list(pg, "items");
    static const char doc[] = "fragment document \xC3\xA9\xE6\x97\xA5 with text "
                              "that is long enough to be cut into pieces";
    pmcp_fragment f = PMCP_FRAGMENT_INIT;
    f.text = doc;
    f.len = sizeof doc - 1;
    f.members_json = "\"ref\":\"doc:1\"";
    pmcp_page_add_fragment(pg, &f);
  }
  pmcp_buf out = PMCP_BUF_INIT;
  int is_error = 0;
  pmcp_page_render(pg, 0, &out, &is_error);
  pmcp_buf_dispose(&out);
  pmcp_page_free(pg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  unsigned mode = data[0] % 4;
  data++;
  size--;
  unsigned char ah[PMCP__ARGS_HASH_LEN];
  if (pmcp__args_hash("{\"a\":1}", 7, ah))
    return 0;
  pmcp_buf text = PMCP_BUF_INIT, state = PMCP_BUF_INIT;
  pmcp_cursor_status st;

  if (mode == 0) {
    pmcp__cursor_decode_key(key, sizeof key, "fuzz", ah, 0, (const char *)data,
                            size, &state, &st);
    if (size < 4096 && !memchr(data, 0, size)) {
      char *c = malloc(size + 1);
      memcpy(c, data, size);
      c[size] = '\0';
      open_page(c);
      free(c);
    }
  } else if (mode == 1) {
    if (size > 8192)
      goto out;
    unsigned char mac[PMCP__SHA256_LEN];
    unsigned char *raw = malloc(size + 16);
    memcpy(raw, data, size);
    if (pmcp__hmac_sha256(key, sizeof key, label, sizeof label, raw, size, mac) == 0) {
      memcpy(raw + size, mac, 16);
      pmcp__b64url_encode(&text, raw, size + 16);
      pmcp__cursor_decode_key(key, sizeof key, "fuzz", ah, 0, text.ptr, text.len,
                              &state, &st);
    }
    free(raw);
  } else if (mode == 2) {
    if (size > PMCP__CURSOR_STATE_MAX)
      goto out;
    if (pmcp__cursor_encode_key(key, sizeof key, "fuzz", ah, 7, data, size, &text))
      abort();
    if (pmcp__cursor_decode_key(key, sizeof key, "fuzz", ah, 7, text.ptr, text.len,
                                &state, &st) || state.len != size ||
        (size && memcmp(state.ptr, data, size)))
      abort();
  } else {
    if (size > 4096)
      goto out;
    if (pmcp__cursor_encode_key(key, sizeof key, "fuzz", ah, 0, data, size, &text) == 0)
      open_page(text.ptr);
  }
out:
  pmcp_buf_dispose(&text);
  pmcp_buf_dispose(&state);
  return 0;
}
