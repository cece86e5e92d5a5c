/* SPDX-License-Identifier: MIT */
/* The principal a request acts as, resolved from its credential and
 * re-read from the store on every request: a revoked key, a disabled
 * person, a changed or removed role takes effect at the next call. Every
 * refusal has one message, so a caller cannot tell an unknown key from a
 * revoked one, or another tenant's workspace from a missing one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth/auth.h"
#include "store/db.h"
#include "store/store_int.h" /* pmcp__store_clear_error */
#include "util/crypto.h"

#define KEY_TEXT_LEN 46   /* "pk_" + 43 base64url characters (32 bytes) */
/* last_used is written at most once a minute per key: a busy agent must
 * not turn every call into a store write. */
#define LAST_USED_EVERY_MS 60000

static const char denied_key[] = "invalid or revoked API key";
static const char denied_conn[] = "the connection is no longer valid: sign in again";

int pmcp_principal_can_write(const pmcp_principal *p)
{
  return p && p->write && p->role >= PMCP_ROLE_EDITOR;
}

int pmcp__principal_admin(const pmcp_principal *p)
{
  return p && p->kind == PMCP_PRINCIPAL_CONNECTION && p->role >= PMCP_ROLE_ADMIN;
}

static int b64url_char(char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         c == '-' || c == '_';
}

/* Copies @p src cut to @p size - 1 bytes (on every request: no printf). */
static void copy(char *dst, size_t size, const char *src)
{
  size_t n = src ? strnlen(src, size - 1) : 0;
  if (n)
    memcpy(dst, src, n);
  dst[n] = '\0';
}

/* Writes the key's last_used when the one read (@p last_ms, -1: never) is
 * a minute old; returns 0 (the write is best effort). */
static int touch(pmcp_store *s, const pmcp_principal *p, int64_t last_ms)
{
  /* the clock pmcp__auth_now() reads, as a number: text only to write */
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int64_t now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  int stale = last_ms < 0 || now_ms - last_ms >= LAST_USED_EVERY_MS;
  if (stale && !pmcp_store_readonly(s)) {
    char now[24];
    snprintf(now, sizeof now, "%lld", (long long)now_ms);
    const char *u[] = {now, p->id};
    /* Best effort: a busy store must not refuse a valid key, nor hold the
     * request (it runs on the HTTP loop) while an import writes. The write
     * moves the change mark, so the next request reads the key again. */
    int64_t was = pmcp__store_writer_wait(s, 0);
    pmcp__db_exec(s, "UPDATE api_keys SET last_used = $1 WHERE id = $2", 2, u, NULL);
    pmcp__store_writer_wait(s, was);
  }
  return 0;
}

int pmcp_principal_of_key(pmcp_store *s, const char *secret, size_t len,
                          pmcp_principal *out)
{
  memset(out, 0, sizeof *out);
  /* The shape first: a truncated, padded or foreign token never reaches
   * the store. */
  int shape = secret && len == KEY_TEXT_LEN && memcmp(secret, "pk_", 3) == 0;
  for (size_t i = 3; shape && i < len; i++)
    shape = b64url_char(secret[i]);
  if (!shape)
    return pmcp_store_set_error(s, PMCP_EDENIED, "%s", denied_key);
  /* The mark before the read: a commit after it makes the entry stale. */
  uint64_t mark[2];
  int marked = pmcp__db_change_mark(s, mark) == 0;
  int64_t last_ms = -1;
  if (marked && pmcp__key_cache_get(s, secret, len, mark, out, &last_ms)) {
    pmcp__store_clear_error(s);
    return touch(s, out, last_ms);
  }
  unsigned char md[32];
  char hash[65];
  pmcp__sha256(secret, len, md);
  pmcp__hex(md, sizeof md, hash);
  const char *p[] = {hash};
  pmcp__db_res *r = NULL;
  int rc = pmcp__db_query(s, "SELECT k.id, k.hash, k.tenant_id, k.workspace, k.scope, t.name,"
                             " k.last_used FROM api_keys k JOIN tenants t ON t.id = k.tenant_id"
                             " WHERE k.hash = $1 AND k.revoked IS NULL", 1, p, &r);
  if (rc)
    return rc;
  /* Found by its hash through the index; compared again in constant time
   * so the decision itself never depends on where two hashes differ. */
  if (pmcp__db_nrows(r) != 1 || !pmcp__ct_equal(pmcp__db_get(r, 0, 1), hash, 64)) {
    pmcp__db_res_free(r);
    return pmcp_store_set_error(s, PMCP_EDENIED, "%s", denied_key);
  }
  out->kind = PMCP_PRINCIPAL_KEY;
  copy(out->id, sizeof out->id, pmcp__db_get(r, 0, 0));
  out->tenant_id = strtoll(pmcp__db_get(r, 0, 2), NULL, 10);
  copy(out->workspace, sizeof out->workspace, pmcp__db_get(r, 0, 3));
  out->write = strcmp(pmcp__db_get(r, 0, 4), "write") == 0;
  out->role = out->write ? PMCP_ROLE_EDITOR : PMCP_ROLE_VIEWER;
  copy(out->tenant, sizeof out->tenant, pmcp__db_get(r, 0, 5));
  snprintf(out->actor, sizeof out->actor, "key:%s", out->id);
  const char *last = pmcp__db_get(r, 0, 6);
  last_ms = last ? strtoll(last, NULL, 10) : -1;
  pmcp__db_res_free(r);
  if (marked)
    pmcp__key_cache_put(s, secret, len, mark, out, last_ms);
  return touch(s, out, last_ms);
}

int pmcp_principal_of_connection(pmcp_store *s, const char *connection_id,
                                 pmcp_principal *out)
{
  memset(out, 0, sizeof *out);
  if (!connection_id || !*connection_id || strlen(connection_id) >= sizeof out->id)
    return pmcp_store_set_error(s, PMCP_EDENIED, "%s", denied_conn);
  const char *p[] = {connection_id};
  pmcp__db_res *r = NULL;
  int rc = pmcp__db_query(s,
      "SELECT c.id, c.user_id, c.tenant_id, c.workspace, c.access, u.name, u.disabled,"
      " t.name, m.role FROM mcp_connections c JOIN users u ON u.id = c.user_id"
      " JOIN tenants t ON t.id = c.tenant_id LEFT JOIN memberships m ON m.user_id = c.user_id"
      " AND m.tenant_id = c.tenant_id AND m.workspace = c.workspace"
      " WHERE c.id = $1 AND c.revoked IS NULL", 1, p, &r);
  if (rc)
    return rc;
  int role = pmcp__db_nrows(r) == 1 ? pmcp_role_parse(pmcp__db_get(r, 0, 8)) : 0;
  if (role == PMCP_ROLE_NONE || strcmp(pmcp__db_get(r, 0, 6), "0") != 0) {
    pmcp__db_res_free(r);
    return pmcp_store_set_error(s, PMCP_EDENIED, "%s", denied_conn);
  }
  out->kind = PMCP_PRINCIPAL_CONNECTION;
  copy(out->id, sizeof out->id, pmcp__db_get(r, 0, 0));
  copy(out->user_id, sizeof out->user_id, pmcp__db_get(r, 0, 1));
  out->tenant_id = strtoll(pmcp__db_get(r, 0, 2), NULL, 10);
  copy(out->workspace, sizeof out->workspace, pmcp__db_get(r, 0, 3));
  out->write = strcmp(pmcp__db_get(r, 0, 4), "write") == 0;
  copy(out->user_name, sizeof out->user_name, pmcp__db_get(r, 0, 5));
  copy(out->tenant, sizeof out->tenant, pmcp__db_get(r, 0, 7));
  out->role = role;
  snprintf(out->actor, sizeof out->actor, "user:%s", out->user_name);
  pmcp__db_res_free(r);
  return 0;
}

int pmcp_principal_in_workspace(pmcp_store *s, pmcp_principal *p, const char *workspace)
{
  static const char no[] = "no such workspace, or no access to it";
  if (!workspace || !*workspace || strlen(workspace) >= sizeof p->workspace)
    return pmcp_store_set_error(s, PMCP_EDENIED, "%s", no);
  if (strcmp(workspace, p->workspace) == 0)
    return 0;
  /* A key lives in its one workspace. */
  if (p->kind != PMCP_PRINCIPAL_CONNECTION)
    return pmcp_store_set_error(s, PMCP_EDENIED, "%s", no);
  char tid[24];
  snprintf(tid, sizeof tid, "%lld", (long long)p->tenant_id);
  const char *q[] = {p->user_id, tid, workspace};
  pmcp__db_res *r = NULL;
  int rc = pmcp__db_query(s, "SELECT role FROM memberships WHERE user_id = $1"
                             " AND tenant_id = $2 AND workspace = $3", 3, q, &r);
  if (rc)
    return rc;
  int role = pmcp__db_nrows(r) == 1 ? pmcp_role_parse(pmcp__db_get(r, 0, 0)) : 0;
  pmcp__db_res_free(r);
  if (role == PMCP_ROLE_NONE)
    return pmcp_store_set_error(s, PMCP_EDENIED, "%s", no);
  copy(p->workspace, sizeof p->workspace, workspace);
  p->role = role;
  return 0;
}

int pmcp_principal_workspaces(pmcp_store *s, const pmcp_principal *p, pmcp_buf *out)
{
  pmcp_buf_putc(out, '{');
  if (p->kind != PMCP_PRINCIPAL_CONNECTION) {
    pmcp_buf_json_string(out, p->workspace, strlen(p->workspace));
    pmcp_buf_printf(out, ":\"%s\"}", pmcp_role_name(p->role));
    return out->ptr ? 0 : PMCP_ENOMEM;
  }
  char tid[24];
  snprintf(tid, sizeof tid, "%lld", (long long)p->tenant_id);
  const char *q[] = {p->user_id, tid};
  pmcp__db_res *r = NULL;
  int rc = pmcp__db_query(s, "SELECT workspace, role FROM memberships WHERE user_id = $1"
                             " AND tenant_id = $2 ORDER BY workspace", 2, q, &r);
  if (rc)
    return rc;
  size_t n = 0;
  for (size_t i = 0; i < pmcp__db_nrows(r); i++) {
    int role = pmcp_role_parse(pmcp__db_get(r, i, 1));
    const char *ws = pmcp__db_get(r, i, 0);
    if (role == PMCP_ROLE_NONE || !ws)
      continue;
    if (n++)
      pmcp_buf_putc(out, ',');
    pmcp_buf_json_string(out, ws, strlen(ws));
    pmcp_buf_printf(out, ":\"%s\"", pmcp_role_name(role));
  }
  pmcp__db_res_free(r);
  pmcp_buf_putc(out, '}');
  return out->ptr ? 0 : PMCP_ENOMEM;
}
