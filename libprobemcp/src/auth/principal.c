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

/* The strings of a principal, in one allocation: @p v[0..5] are id,
 * user_id, user_name, tenant, workspace, actor (NULL: ""). On failure
 * @p out is left empty. */
static int set_strings(pmcp_principal *out, const char *const v[6])
{
  const char **dst[6] = {&out->id, &out->user_id, &out->user_name, &out->tenant,
                         &out->workspace, &out->actor};
  void *mem = pmcp__str_block(6, v, dst);
  if (!mem)
    return PMCP_ENOMEM;
  free(out->pmcp__mem);
  out->pmcp__mem = mem;
  return 0;
}

static int version_ok(const pmcp_principal *p)
{
  return p && p->version >= 1 && p->version <= PMCP_PRINCIPAL_VERSION;
}

void pmcp_principal_dispose(pmcp_principal *p)
{
  if (!p)
    return;
  unsigned v = p->version;
  free(p->pmcp__mem);
  memset(p, 0, sizeof *p);
  p->version = v;
}

int pmcp_principal_copy(pmcp_principal *dst, const pmcp_principal *src)
{
  if (!version_ok(dst) || !version_ok(src))
    return PMCP_EINVAL;
  pmcp_principal_dispose(dst);
  unsigned v = dst->version;
  const char *str[6] = {src->id, src->user_id, src->user_name, src->tenant, src->workspace,
                        src->actor};
  pmcp_principal c = *src;
  c.version = v;
  c.pmcp__mem = NULL;
  if (set_strings(&c, str))
    return PMCP_ENOMEM;
  *dst = c;
  return 0;
}

/* Disposes @p out for a fresh fill; PMCP_EINVAL for a bad version. */
static int reset(pmcp_store *s, pmcp_principal *out)
{
  if (!version_ok(out))
    return s ? pmcp_store_set_error(s, PMCP_EINVAL, "pmcp_principal: unknown version")
             : PMCP_EINVAL;
  pmcp_principal_dispose(out);
  return 0;
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
  int rc = reset(s, out);
  if (rc)
    return rc;
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
  rc = pmcp__db_query(s, "SELECT k.id, k.hash, k.tenant_id, k.workspace, k.scope, t.name,"
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
  pmcp_buf actor = PMCP_BUF_INIT;
  pmcp_buf_printf(&actor, "key:%s", pmcp__db_get(r, 0, 0));
  const char *str[6] = {pmcp__db_get(r, 0, 0), "", "", pmcp__db_get(r, 0, 5),
                        pmcp__db_get(r, 0, 3), actor.ptr};
  rc = actor.ptr ? set_strings(out, str) : PMCP_ENOMEM;
  pmcp_buf_dispose(&actor);
  if (rc) {
    pmcp__db_res_free(r);
    return pmcp_store_set_error(s, rc, "out of memory");
  }
  out->kind = PMCP_PRINCIPAL_KEY;
  out->tenant_id = strtoll(pmcp__db_get(r, 0, 2), NULL, 10);
  out->write = strcmp(pmcp__db_get(r, 0, 4), "write") == 0;
  out->role = out->write ? PMCP_ROLE_EDITOR : PMCP_ROLE_VIEWER;
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
  int rc = reset(s, out);
  if (rc)
    return rc;
  if (!connection_id || !*connection_id || strlen(connection_id) >= 64)
    return pmcp_store_set_error(s, PMCP_EDENIED, "%s", denied_conn);
  const char *p[] = {connection_id};
  pmcp__db_res *r = NULL;
  rc = pmcp__db_query(s,
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
  pmcp_buf actor = PMCP_BUF_INIT;
  pmcp_buf_printf(&actor, "user:%s", pmcp__db_get(r, 0, 5));
  const char *str[6] = {pmcp__db_get(r, 0, 0), pmcp__db_get(r, 0, 1), pmcp__db_get(r, 0, 5),
                        pmcp__db_get(r, 0, 7), pmcp__db_get(r, 0, 3), actor.ptr};
  rc = actor.ptr ? set_strings(out, str) : PMCP_ENOMEM;
  pmcp_buf_dispose(&actor);
  if (rc) {
    pmcp__db_res_free(r);
    return pmcp_store_set_error(s, rc, "out of memory");
  }
  out->kind = PMCP_PRINCIPAL_CONNECTION;
  out->tenant_id = strtoll(pmcp__db_get(r, 0, 2), NULL, 10);
  out->write = strcmp(pmcp__db_get(r, 0, 4), "write") == 0;
  out->role = role;
  pmcp__db_res_free(r);
  return 0;
}

int pmcp_principal_in_workspace(pmcp_store *s, pmcp_principal *p, const char *workspace)
{
  static const char no[] = "no such workspace, or no access to it";
  if (!version_ok(p) || !p->workspace)
    return pmcp_store_set_error(s, PMCP_EINVAL, "pmcp_principal: unknown version or empty");
  if (!workspace || !*workspace || strlen(workspace) > 128)
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
  const char *str[6] = {p->id, p->user_id, p->user_name, p->tenant, workspace, p->actor};
  if (set_strings(p, str))
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
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
