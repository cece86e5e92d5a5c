/* SPDX-License-Identifier: MIT */
/* Cursor codec. Layout before base64url (all integers LEB128 varints):
 *
 *   u8 format(1) | varint total length | u8 flags | 4 tool hash |
 *   8 args hash | varint source version | varint state length |
 *   state (zstd frame when flags&1) | 16 bytes HMAC-SHA256
 *
 * The MAC (truncated to 128 bits) covers everything before it under the
 * server key, with a domain label. The total length lets a cut cursor be
 * told apart from a forged one before the MAC is checked; the tool and
 * argument hashes are inside the MAC, so once it verifies, a mismatch there
 * is a genuine foreign-tool or changed-argument cursor, never a guess. */
#include "core/cursor_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <cjson/cJSON.h>

#include "core/jsonw.h"
#include "probemcp/json.h"
#include "util/base64url.h"
#include "util/buf.h"
#include "util/crypto.h"

#define MAC_LEN 16
#define TOOL_HASH_LEN 4
#define FLAG_ZSTD 1u
/* Below this a zstd frame never pays for its own header. */
#define COMPRESS_MIN 48

static const char mac_label[] = "probe-mcp cursor v1";

static const struct {
  const char *name;
  const char *message;
} statuses[] = {
  {"ok", "The cursor is valid."},
  {"malformed", "The cursor is not one this server issued: it contains characters a cursor never has."},
  {"reencoded", "The cursor was re-encoded (padding, '+', '/' or '%' escapes): pass it back exactly as it was returned."},
  {"truncated", "The cursor is incomplete: it was cut short."},
  {"unsupported_version", "The cursor was made by an incompatible server version."},
  {"forged", "The cursor failed authentication: it was altered, or issued by another server."},
  {"foreign_tool", "The cursor was issued by a different tool."},
  {"changed_arguments", "The cursor was issued for different arguments; only token_budget may change between pages."},
  {"stale", "The data changed since the cursor was issued."},
  {"document_changed", "The document being read was edited since its first part was returned."},
};

const char *pmcp_cursor_status_name(int status)
{
  if (status < 0 || (size_t)status >= sizeof statuses / sizeof *statuses)
    return "unknown";
  return statuses[status].name;
}

const char *pmcp_cursor_status_message(int status)
{
  if (status < 0 || (size_t)status >= sizeof statuses / sizeof *statuses)
    return "The cursor cannot be used.";
  return statuses[status].message;
}

int pmcp__cursor_key_init(pmcp__cursor_key *k)
{
  k->len = 32;
  return pmcp__random_bytes(k->key, k->len);
}

int pmcp_cursor_key_generate(void *out, size_t len)
{
  if (!out || len < PMCP_CURSOR_KEY_MIN || len > PMCP_CURSOR_KEY_MAX)
    return PMCP_EINVAL;
  return pmcp__random_bytes(out, len);
}

/* ---- canonical arguments ------------------------------------------------ */

static int cmp_keys(const void *a, const void *b)
{
  const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
  return strcmp(x->string ? x->string : "", y->string ? y->string : "");
}

static int canon(const cJSON *v, int top, pmcp_buf *out)
{
  if (cJSON_IsObject(v)) {
    size_t n = 0;
    for (const cJSON *c = v->child; c; c = c->next)
      n++;
    const cJSON **kids = n ? malloc(n * sizeof *kids) : NULL;
    if (n && !kids)
      return PMCP_ENOMEM;
    size_t i = 0;
    for (const cJSON *c = v->child; c; c = c->next)
      kids[i++] = c;
    if (n)
      qsort(kids, n, sizeof *kids, cmp_keys);
    int rc = pmcp__buf_putc(out, '{');
    int first = 1;
    for (i = 0; i < n && !rc; i++) {
      const char *k = kids[i]->string ? kids[i]->string : "";
      if (top && (!strcmp(k, "token_budget") || !strcmp(k, "cursor")))
        continue;
      if (!first)
        rc = pmcp__buf_putc(out, ',');
      first = 0;
      if (!rc)
        rc = pmcp__jw_put_string(out, k, strlen(k));
      if (!rc)
        rc = pmcp__buf_putc(out, ':');
      if (!rc)
        rc = canon(kids[i], 0, out);
    }
    free(kids);
    return rc ? rc : pmcp__buf_putc(out, '}');
  }
  if (cJSON_IsArray(v)) {
    int rc = pmcp__buf_putc(out, '[');
    for (const cJSON *c = v->child; c && !rc; c = c->next) {
      if (c != v->child)
        rc = pmcp__buf_putc(out, ',');
      if (!rc)
        rc = canon(c, 0, out);
    }
    return rc ? rc : pmcp__buf_putc(out, ']');
  }
  if (cJSON_IsString(v))
    return pmcp__jw_put_string(out, v->valuestring, strlen(v->valuestring));
  if (cJSON_IsNumber(v)) {
    char tmp[PMCP_JSON_NUMBER_MAX];
    size_t n = pmcp_json_format_number(v->valuedouble, PMCP_JSON_LOSSLESS, tmp, sizeof tmp);
    return pmcp__buf_append(out, tmp, n);
  }
  if (cJSON_IsTrue(v))
    return pmcp__buf_puts(out, "true");
  if (cJSON_IsFalse(v))
    return pmcp__buf_puts(out, "false");
  return pmcp__buf_puts(out, "null");
}

int pmcp__args_canonical(const char *args_json, size_t len, pmcp_buf *out)
{
  if (!args_json || !len)
    return pmcp__buf_puts(out, "{}");
  cJSON *v = cJSON_ParseWithLength(args_json, len);
  if (!v)
    return PMCP_EINVAL;
  int rc = cJSON_IsObject(v) ? canon(v, 1, out) : PMCP_EINVAL;
  cJSON_Delete(v);
  return rc;
}

int pmcp__args_hash(const char *args_json, size_t len,
                    unsigned char out[PMCP__ARGS_HASH_LEN])
{
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__args_canonical(args_json, len, &b);
  unsigned char d[PMCP__SHA256_LEN];
  if (!rc)
    rc = pmcp__sha256(b.ptr, b.len, d);
  if (!rc)
    memcpy(out, d, PMCP__ARGS_HASH_LEN);
  pmcp_buf_dispose(&b);
  return rc;
}

static int tool_hash(const char *tool, unsigned char out[TOOL_HASH_LEN])
{
  unsigned char d[PMCP__SHA256_LEN];
  int rc = pmcp__sha256(tool, strlen(tool), d);
  if (!rc)
    memcpy(out, d, TOOL_HASH_LEN);
  return rc;
}

/* ---- varints ------------------------------------------------------------ */

static int put_varint(pmcp_buf *b, uint64_t v)
{
  unsigned char tmp[10];
  size_t n = 0;
  do {
    unsigned char byte = v & 0x7F;
    v >>= 7;
    tmp[n++] = byte | (v ? 0x80 : 0);
  } while (v);
  return pmcp__buf_append(b, tmp, n);
}

static size_t varint_len(uint64_t v)
{
  size_t n = 1;
  while (v >>= 7)
    n++;
  return n;
}

/* Reads a varint at *pos; 0 on success, -1 when it runs past @p len or is
 * longer than 10 bytes or not minimal. */
static int get_varint(const unsigned char *p, size_t len, size_t *pos, uint64_t *out)
{
  uint64_t v = 0;
  for (unsigned shift = 0, i = 0; i < 10; i++, shift += 7) {
    if (*pos >= len)
      return -1;
    unsigned char byte = p[(*pos)++];
    if (shift == 63 && (byte & 0x7E))
      return -1;
    v |= (uint64_t)(byte & 0x7F) << shift;
    if (!(byte & 0x80)) {
      if (i > 0 && byte == 0)
        return -1; /* not minimal */
      *out = v;
      return 0;
    }
  }
  return -1;
}

/* ---- encode ------------------------------------------------------------- */

/* One compression context kept for the process: ZSTD_compress() made and
 * freed one per cursor, about a third of a cursor's cost. Reusing a
 * context gives the same frame. A worker that finds it taken compresses
 * with a context of its own. */
static pthread_mutex_t cctx_lock = PTHREAD_MUTEX_INITIALIZER;
static ZSTD_CCtx *cctx_kept;

static size_t compress3(void *dst, size_t cap, const void *src, size_t len)
{
  if (pthread_mutex_trylock(&cctx_lock) != 0)
    return ZSTD_compress(dst, cap, src, len, 3);
  if (!cctx_kept)
    cctx_kept = ZSTD_createCCtx();
  size_t z = cctx_kept ? ZSTD_compressCCtx(cctx_kept, dst, cap, src, len, 3)
                       : ZSTD_compress(dst, cap, src, len, 3);
  pthread_mutex_unlock(&cctx_lock);
  return z;
}

int pmcp__cursor_encode_key(const void *key, size_t key_len, const char *tool,
                            const unsigned char args_hash[PMCP__ARGS_HASH_LEN],
                            uint64_t source_version, const void *state,
                            size_t state_len, pmcp_buf *out)
{
  if (!key || key_len < PMCP_CURSOR_KEY_MIN || key_len > PMCP_CURSOR_KEY_MAX ||
      !tool || state_len > PMCP__CURSOR_STATE_MAX || (!state && state_len))
    return PMCP_EINVAL;
  unsigned char th[TOOL_HASH_LEN];
  int rc = tool_hash(tool, th);
  if (rc)
    return rc;

  /* Compress the state when that makes it shorter. */
  void *packed = NULL;
  size_t packed_len = state_len;
  unsigned flags = 0;
  if (state_len >= COMPRESS_MIN) {
    size_t cap = ZSTD_compressBound(state_len);
    packed = malloc(cap);
    if (!packed)
      return PMCP_ENOMEM;
    /* Level 3: cursor states are small, and level 19 cost ~9% of a browse
     * page in its set-up for no meaningful size gain. */
    size_t z = compress3(packed, cap, state, state_len);
    if (!ZSTD_isError(z) && z < state_len) {
      packed_len = z;
      flags |= FLAG_ZSTD;
    }
  }
  const void *body = (flags & FLAG_ZSTD) ? packed : state;

  /* The total length counts itself: find the fixed point. */
  size_t rest = 1 + TOOL_HASH_LEN + PMCP__ARGS_HASH_LEN +
                varint_len(source_version) + varint_len(state_len) +
                packed_len + MAC_LEN;
  size_t total = 1 + 1 + rest;
  while (1 + varint_len(total) + rest != total)
    total = 1 + varint_len(total) + rest;

  pmcp_buf raw = PMCP_BUF_INIT;
  unsigned char fl = (unsigned char)flags, ver = PMCP__CURSOR_FORMAT;
  rc = pmcp__buf_append(&raw, &ver, 1);
  if (!rc)
    rc = put_varint(&raw, total);
  if (!rc)
    rc = pmcp__buf_append(&raw, &fl, 1);
  if (!rc)
    rc = pmcp__buf_append(&raw, th, TOOL_HASH_LEN);
  if (!rc)
    rc = pmcp__buf_append(&raw, args_hash, PMCP__ARGS_HASH_LEN);
  if (!rc)
    rc = put_varint(&raw, source_version);
  if (!rc)
    rc = put_varint(&raw, state_len);
  if (!rc)
    rc = pmcp__buf_append(&raw, body, packed_len);
  unsigned char mac[PMCP__SHA256_LEN];
  if (!rc)
    rc = pmcp__hmac_sha256(key, key_len, mac_label, sizeof mac_label,
                           raw.ptr, raw.len, mac);
  if (!rc)
    rc = pmcp__buf_append(&raw, mac, MAC_LEN);
  if (!rc && raw.len != total)
    rc = PMCP_EINTERNAL;
  if (!rc)
    rc = pmcp__b64url_encode(out, raw.ptr, raw.len);
  free(packed);
  pmcp_buf_dispose(&raw);
  return rc;
}

/* ---- decode ------------------------------------------------------------- */

static int refuse(pmcp_cursor_status *status, pmcp_cursor_status why)
{
  if (status)
    *status = why;
  return PMCP_ECURSOR;
}

int pmcp__cursor_decode_key(const void *key, size_t key_len, const char *tool,
                            const unsigned char args_hash[PMCP__ARGS_HASH_LEN],
                            uint64_t source_version, const char *cursor,
                            size_t cursor_len, pmcp_buf *state,
                            pmcp_cursor_status *status)
{
  if (status)
    *status = PMCP_CURSOR_OK;
  if (!key || key_len < PMCP_CURSOR_KEY_MIN || key_len > PMCP_CURSOR_KEY_MAX ||
      !tool || !state)
    return PMCP_EINVAL;
  if (!cursor || !cursor_len)
    return refuse(status, PMCP_CURSOR_MALFORMED);
  if (cursor_len > PMCP__CURSOR_TEXT_MAX)
    return refuse(status, PMCP_CURSOR_MALFORMED);
  /* Whitespace inside means something wrapped or padded it. */
  for (size_t i = 0; i < cursor_len; i++) {
    char c = cursor[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
      return refuse(status, PMCP_CURSOR_REENCODED);
  }

  unsigned char *raw = malloc(cursor_len / 4 * 3 + 3);
  if (!raw)
    return PMCP_ENOMEM;
  size_t n = 0;
  int rc = 0;
  /* Non-canonical trailing bits are judged after the length: a cursor cut
   * at an odd place has them too, and "cut short" is the truer reason. */
  int noncanon = 0;
  switch (pmcp__b64url_decode(cursor, cursor_len, raw, &n)) {
  case PMCP__B64_OK:
    break;
  case PMCP__B64_NONCANON:
    noncanon = 1;
    break;
  case PMCP__B64_FOREIGN:
    rc = refuse(status, PMCP_CURSOR_REENCODED);
    goto out;
  case PMCP__B64_BADLEN:
    rc = refuse(status, PMCP_CURSOR_TRUNCATED);
    goto out;
  default:
    rc = refuse(status, PMCP_CURSOR_MALFORMED);
    goto out;
  }

  size_t pos = 0;
  if (n < 1) {
    rc = refuse(status, noncanon ? PMCP_CURSOR_REENCODED : PMCP_CURSOR_TRUNCATED);
    goto out;
  }
  if (raw[pos++] != PMCP__CURSOR_FORMAT) {
    rc = refuse(status, PMCP_CURSOR_VERSION);
    goto out;
  }
  uint64_t total = 0;
  if (get_varint(raw, n, &pos, &total)) {
    rc = refuse(status, PMCP_CURSOR_TRUNCATED);
    goto out;
  }
  if (total != n) {
    /* shorter: cut; longer: something was appended (or it is forged) */
    rc = refuse(status, total > n ? PMCP_CURSOR_TRUNCATED : PMCP_CURSOR_FORGED);
    goto out;
  }
  if (noncanon) {
    rc = refuse(status, PMCP_CURSOR_REENCODED);
    goto out;
  }
  if (n < pos + 1 + TOOL_HASH_LEN + PMCP__ARGS_HASH_LEN + 2 + MAC_LEN) {
    rc = refuse(status, PMCP_CURSOR_TRUNCATED);
    goto out;
  }
  unsigned char mac[PMCP__SHA256_LEN];
  rc = pmcp__hmac_sha256(key, key_len, mac_label, sizeof mac_label, raw,
                         n - MAC_LEN, mac);
  if (rc)
    goto out;
  if (!pmcp__ct_equal(mac, raw + n - MAC_LEN, MAC_LEN)) {
    rc = refuse(status, PMCP_CURSOR_FORGED);
    goto out;
  }
  /* Authentic from here on: the fields are ours. */
  unsigned flags = raw[pos++];
  if (flags & ~FLAG_ZSTD) {
    rc = refuse(status, PMCP_CURSOR_VERSION);
    goto out;
  }
  const unsigned char *th = raw + pos;
  pos += TOOL_HASH_LEN;
  const unsigned char *ah = raw + pos;
  pos += PMCP__ARGS_HASH_LEN;
  uint64_t ver = 0, slen = 0;
  size_t end = n - MAC_LEN;
  if (get_varint(raw, end, &pos, &ver) || get_varint(raw, end, &pos, &slen) ||
      slen > PMCP__CURSOR_STATE_MAX) {
    rc = refuse(status, PMCP_CURSOR_TRUNCATED);
    goto out;
  }
  unsigned char my_th[TOOL_HASH_LEN];
  rc = tool_hash(tool, my_th);
  if (rc)
    goto out;
  if (memcmp(th, my_th, TOOL_HASH_LEN)) {
    rc = refuse(status, PMCP_CURSOR_FOREIGN_TOOL);
    goto out;
  }
  if (memcmp(ah, args_hash, PMCP__ARGS_HASH_LEN)) {
    rc = refuse(status, PMCP_CURSOR_CHANGED_ARGUMENTS);
    goto out;
  }
  if (ver != source_version && source_version != PMCP__CURSOR_ANY_VERSION) {
    rc = refuse(status, PMCP_CURSOR_STALE);
    goto out;
  }
  pmcp__buf_reset(state);
  if (flags & FLAG_ZSTD) {
    rc = pmcp__buf_reserve(state, (size_t)slen);
    if (rc)
      goto out;
    size_t z = ZSTD_decompress(state->ptr, (size_t)slen, raw + pos, end - pos);
    if (ZSTD_isError(z) || z != slen) {
      rc = refuse(status, PMCP_CURSOR_FORGED);
      goto out;
    }
    state->len = (size_t)slen;
    state->ptr[state->len] = '\0';
  } else {
    if (end - pos != slen) {
      rc = refuse(status, PMCP_CURSOR_FORGED);
      goto out;
    }
    rc = pmcp__buf_append(state, raw + pos, (size_t)slen);
    if (rc)
      goto out;
  }
  if (!state->ptr)
    rc = pmcp__buf_reserve(state, 0);
out:
  free(raw);
  return rc;
}

