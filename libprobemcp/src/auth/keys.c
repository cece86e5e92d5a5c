/* SPDX-License-Identifier: MIT */
/* Workspace API keys: "pk_" + 32 random bytes in base64url, shown once.
 * The store keeps the SHA-256 (hex) of the whole text, a display prefix,
 * the tenant, the workspace and the scope (read | write). A presented key
 * is checked for its shape first, then found by its hash and compared
 * again in constant time; every failure gives the same answer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth/auth.h"
#include "store/db.h"
#include "util/base64url.h"
#include "util/buf.h"
#include "util/crypto.h"

#define KEY_BYTES 32
#define KEY_PREFIX "pk_"
#define DISPLAY_CHARS 10  /* "pk_" + 7: enough to tell keys apart in a list */

void pmcp__auth_now(char out[24])
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(out, 24, "%lld", (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

int pmcp__auth_new_id(char *out, size_t size, const char *prefix)
{
  static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  unsigned char r[20];
  if (pmcp__random_bytes(r, sizeof r) != 0)
    return PMCP_EINTERNAL;
  char tail[21];
  for (size_t i = 0; i < 20; i++)
    tail[i] = alphabet[r[i] & 31];
  tail[20] = '\0';
  int n = snprintf(out, size, "%s_%s", prefix, tail);
  return n < 0 || (size_t)n >= size ? PMCP_EINVAL : 0;
}

int pmcp__auth_finish(pmcp_store *s, int rc)
{
  if (rc == 0)
    return pmcp_store_commit(s);
  char msg[512];
  snprintf(msg, sizeof msg, "%s", pmcp_store_errmsg(s));
  pmcp_store_rollback(s);
  return pmcp_store_set_error(s, rc, "%s", msg);
}

pmcp_role pmcp_role_parse(const char *name)
{
  if (!name)
    return PMCP_ROLE_NONE;
  if (strcmp(name, "viewer") == 0)
    return PMCP_ROLE_VIEWER;
  if (strcmp(name, "editor") == 0)
    return PMCP_ROLE_EDITOR;
  if (strcmp(name, "admin") == 0)
    return PMCP_ROLE_ADMIN;
  return PMCP_ROLE_NONE;
}

const char *pmcp_role_name(pmcp_role role)
{
  switch (role) {
  case PMCP_ROLE_VIEWER: return "viewer";
  case PMCP_ROLE_EDITOR: return "editor";
  case PMCP_ROLE_ADMIN: return "admin";
  default: return "none";
  }
}

/* A workspace of tenant t exists ("default" always does: the store makes
 * it on first use). */
static int workspace_exists(pmcp_store *s, pmcp_tenant t, const char *ws)
{
  if (!ws || !*ws || strlen(ws) > 128)
    return 0;
  if (strcmp(ws, "default") == 0)
    return 1;
  char ref[160];
  snprintf(ref, sizeof ref, "workspace:%s", ws);
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp_store_get(s, t, ref, &b);
  pmcp_buf_dispose(&b);
  return rc == 0;
}

int pmcp_key_create(pmcp_store *s, pmcp_tenant t, const char *workspace, int write,
                     const char *name, const char *actor, const char *via,
                     pmcp_buf *secret, pmcp_buf *id)
{
  if (!workspace_exists(s, t, workspace))
    return pmcp_store_set_error(s, PMCP_ENOTFOUND, "no workspace '%s' in this tenant",
                                workspace ? workspace : "");
  if (name && strlen(name) > 200)
    return pmcp_store_set_error(s, PMCP_EINVAL, "a key name has at most 200 characters");
  unsigned char raw[KEY_BYTES];
  char kid[40], now[24], tid[24], hash[65];
  int rc = pmcp__random_bytes(raw, sizeof raw);
  if (rc == 0)
    rc = pmcp__auth_new_id(kid, sizeof kid, "key");
  if (rc)
    return pmcp_store_set_error(s, PMCP_EINTERNAL, "no randomness for a key");
  pmcp_buf text = PMCP_BUF_INIT;
  rc = pmcp__buf_puts(&text, KEY_PREFIX);
  if (rc == 0)
    rc = pmcp__b64url_encode(&text, raw, sizeof raw);
  memset(raw, 0, sizeof raw);
  if (rc) {
    pmcp_buf_dispose(&text);
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  }
  unsigned char md[32];
  pmcp__sha256(text.ptr, text.len, md);
  pmcp__hex(md, sizeof md, hash);
  char prefix[DISPLAY_CHARS + 1];
  snprintf(prefix, sizeof prefix, "%s", text.ptr);
  pmcp__auth_now(now);
  snprintf(tid, sizeof tid, "%lld", (long long)t.id);
  const char *p[] = {kid, name, prefix, hash, tid, workspace, write ? "write" : "read",
                     actor, now};
  rc = pmcp_store_begin(s);
  if (rc == 0)
    rc = pmcp__db_exec(s, "INSERT INTO api_keys(id, name, prefix, hash, tenant_id, workspace,"
                          " scope, created_by, created) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                       9, p, NULL);
  if (rc == 0) {
    pmcp_buf d = PMCP_BUF_INIT;
    pmcp__buf_puts(&d, "{\"key_id\":");
    pmcp__buf_json_string(&d, kid, strlen(kid));
    pmcp__buf_printf(&d, ",\"scope\":\"%s\",\"name\":", write ? "write" : "read");
    if (name)
      pmcp__buf_json_string(&d, name, strlen(name));
    else
      pmcp__buf_puts(&d, "null");
    pmcp__buf_puts(&d, "}");
    rc = d.ptr ? pmcp_audit_add(s, t, workspace, actor, "api_key.create", via, d.ptr)
               : pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
    pmcp_buf_dispose(&d);
  }
  rc = pmcp__auth_finish(s, rc);
  if (rc == 0 && secret)
    rc = pmcp__buf_append(secret, text.ptr, text.len);
  if (rc == 0 && id)
    rc = pmcp__buf_puts(id, kid);
  memset(text.ptr, 0, text.len);
  pmcp_buf_dispose(&text);
  return rc;
}

static void json_opt(pmcp_buf *b, const char *key, const char *v, int number)
{
  pmcp__buf_printf(b, ",\"%s\":", key);
  if (!v)
    pmcp__buf_puts(b, "null");
  else if (number)
    pmcp__buf_puts(b, v);
  else
    pmcp__buf_json_string(b, v, strlen(v));
}

int pmcp_key_list(pmcp_store *s, pmcp_tenant t, pmcp_buf *out)
{
  char tid[24];
  snprintf(tid, sizeof tid, "%lld", (long long)t.id);
  const char *p[] = {tid};
  pmcp__db_res *r = NULL;
  int rc = pmcp__db_query(s, "SELECT id, name, prefix, workspace, scope, created, last_used,"
                             " revoked, created_by FROM api_keys WHERE tenant_id = $1"
                             " ORDER BY created, id", 1, p, &r);
  if (rc)
    return rc;
  pmcp__buf_putc(out, '[');
  for (size_t i = 0; i < pmcp__db_nrows(r); i++) {
    if (i)
      pmcp__buf_putc(out, ',');
    pmcp__buf_puts(out, "{\"id\":");
    pmcp__buf_json_string(out, pmcp__db_get(r, i, 0), strlen(pmcp__db_get(r, i, 0)));
    json_opt(out, "name", pmcp__db_get(r, i, 1), 0);
    json_opt(out, "prefix", pmcp__db_get(r, i, 2), 0);
    json_opt(out, "workspace", pmcp__db_get(r, i, 3), 0);
    json_opt(out, "scope", pmcp__db_get(r, i, 4), 0);
    json_opt(out, "created", pmcp__db_get(r, i, 5), 1);
    json_opt(out, "last_used", pmcp__db_get(r, i, 6), 1);
    json_opt(out, "revoked", pmcp__db_get(r, i, 7), 1);
    json_opt(out, "created_by", pmcp__db_get(r, i, 8), 0);
    pmcp__buf_putc(out, '}');
  }
  pmcp__db_res_free(r);
  return pmcp__buf_putc(out, ']') ? pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory") : 0;
}

int pmcp_key_revoke(pmcp_store *s, pmcp_tenant t, const char *id, const char *actor,
                     const char *via)
{
  char tid[24], now[24];
  snprintf(tid, sizeof tid, "%lld", (long long)t.id);
  pmcp__auth_now(now);
  const char *p[] = {now, id ? id : "", tid};
  int64_t changed = 0;
  int rc = pmcp_store_begin(s);
  if (rc == 0)
    rc = pmcp__db_exec(s, "UPDATE api_keys SET revoked = $1 WHERE id = $2 AND tenant_id = $3"
                          " AND revoked IS NULL", 3, p, &changed);
  if (rc == 0 && changed == 0)
    rc = pmcp_store_set_error(s, PMCP_ENOTFOUND, "no active key '%s' in this tenant",
                              id ? id : "");
  if (rc == 0) {
    pmcp_buf d = PMCP_BUF_INIT;
    pmcp__buf_puts(&d, "{\"key_id\":");
    pmcp__buf_json_string(&d, id, strlen(id));
    pmcp__buf_putc(&d, '}');
    rc = d.ptr ? pmcp_audit_add(s, t, NULL, actor, "api_key.revoke", via, d.ptr)
               : pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
    pmcp_buf_dispose(&d);
  }
  return pmcp__auth_finish(s, rc);
}

size_t pmcp__str_size(const char *v) { return (v ? strlen(v) : 0) + 1; }

const char *pmcp__str_put(char **at, const char *v)
{
  size_t n = pmcp__str_size(v);
  memcpy(*at, v ? v : "", n);
  const char *r = *at;
  *at += n;
  return r;
}

void *pmcp__str_block(size_t n, const char *const *v, const char **const *dst)
{
  size_t total = 0;
  for (size_t i = 0; i < n; i++)
    total += pmcp__str_size(v[i]);
  char *mem = malloc(total), *at = mem;
  if (!mem)
    return NULL;
  for (size_t i = 0; i < n; i++)
    *dst[i] = pmcp__str_put(&at, v[i]);
  return mem;
}
