/* SPDX-License-Identifier: MIT */
/* Local users (the people who sign in on the consent page) and their role
 * per workspace. Users are store-wide (one person may belong to workspaces
 * of several tenants); memberships carry the tenant. Every change is
 * audited, with the password never in the details. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "store/db.h"
#include "util/buf.h"

static int name_ok(const char *n)
{
  size_t len = n ? strlen(n) : 0;
  if (len == 0 || len > 64)
    return 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)n[i];
    if (!isalnum(c) && c != '.' && c != '_' && c != '@' && c != '-')
      return 0;
  }
  return 1;
}

#define finish pmcp__auth_finish

static int audit_user(pmcp_store *s, pmcp_tenant t, const char *ws, const char *actor,
                      const char *action, const char *via, const char *name,
                      const char *extra_key, const char *extra_val)
{
  pmcp_buf d = PMCP_BUF_INIT;
  pmcp__buf_puts(&d, "{\"user\":");
  pmcp__buf_json_string(&d, name, strlen(name));
  if (extra_key) {
    pmcp__buf_printf(&d, ",\"%s\":", extra_key);
    pmcp__buf_json_string(&d, extra_val, strlen(extra_val));
  }
  pmcp__buf_putc(&d, '}');
  int rc = d.ptr ? pmcp_audit_add(s, t, ws, actor, action, via, d.ptr)
                 : pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  pmcp_buf_dispose(&d);
  return rc;
}

static const pmcp_tenant no_tenant = {0};

int pmcp_user_create(pmcp_store *s, const char *name, const char *display,
                      const char *password, const char *actor, const char *via,
                      pmcp_buf *id)
{
  if (!name_ok(name))
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "a user name is 1-64 characters of letters, digits, '.', '_', '@' and '-'");
  if (display && strlen(display) > 200)
    return pmcp_store_set_error(s, PMCP_EINVAL, "a display name has at most 200 characters");
  pmcp_buf hash = PMCP_BUF_INIT;
  int rc = 0;
  if (password) {
    rc = pmcp__password_hash(&hash, password, 0);
    if (rc == PMCP_EINVAL)
      return pmcp_store_set_error(s, rc, "a password is 1-1024 bytes");
    if (rc)
      return pmcp_store_set_error(s, rc, "cannot hash the password");
  }
  char uid[40], now[24];
  if (pmcp__auth_new_id(uid, sizeof uid, "usr")) {
    pmcp_buf_dispose(&hash);
    return pmcp_store_set_error(s, PMCP_EINTERNAL, "no randomness for an id");
  }
  pmcp__auth_now(now);
  const char *p[] = {uid, name, display, hash.ptr, now};
  rc = pmcp_store_begin(s);
  if (rc == 0) {
    rc = pmcp__db_exec(s, "INSERT INTO users(id, name, display_name, password, created, updated)"
                          " VALUES($1, $2, $3, $4, $5, $5)", 5, p, NULL);
    if (rc == PMCP_EEXIST)
      rc = pmcp_store_set_error(s, rc, "a user named '%s' already exists", name);
    if (rc == 0)
      rc = audit_user(s, no_tenant, NULL, actor, "user.create", via, name, NULL, NULL);
    rc = finish(s, rc);
  }
  pmcp_buf_dispose(&hash);
  if (rc == 0 && id)
    rc = pmcp__buf_puts(id, uid);
  return rc;
}

static int no_user(pmcp_store *s, const char *name)
{
  return pmcp_store_set_error(s, PMCP_ENOTFOUND, "no user named '%s'", name ? name : "");
}

int pmcp_user_passwd(pmcp_store *s, const char *name, const char *password,
                      const char *actor, const char *via)
{
  pmcp_buf hash = PMCP_BUF_INIT;
  int rc = pmcp__password_hash(&hash, password, 0);
  if (rc == PMCP_EINVAL)
    return pmcp_store_set_error(s, rc, "a password is 1-1024 bytes");
  if (rc)
    return pmcp_store_set_error(s, rc, "cannot hash the password");
  char now[24];
  pmcp__auth_now(now);
  const char *p[] = {hash.ptr, now, name ? name : ""};
  int64_t changed = 0;
  rc = pmcp_store_begin(s);
  if (rc == 0) {
    rc = pmcp__db_exec(s, "UPDATE users SET password = $1, updated = $2 WHERE name = $3", 3, p,
                       &changed);
    if (rc == 0 && changed == 0)
      rc = no_user(s, name);
    if (rc == 0)
      rc = audit_user(s, no_tenant, NULL, actor, "user.passwd", via, name, NULL, NULL);
    rc = finish(s, rc);
  }
  pmcp_buf_dispose(&hash);
  return rc;
}

int pmcp_user_disable(pmcp_store *s, const char *name, int disabled, const char *actor,
                       const char *via)
{
  char now[24];
  pmcp__auth_now(now);
  const char *p[] = {disabled ? "1" : "0", now, name ? name : ""};
  int64_t changed = 0;
  int rc = pmcp_store_begin(s);
  if (rc)
    return rc;
  rc = pmcp__db_exec(s, "UPDATE users SET disabled = $1, updated = $2 WHERE name = $3", 3, p,
                     &changed);
  if (rc == 0 && changed == 0)
    rc = no_user(s, name);
  if (rc == 0)
    rc = audit_user(s, no_tenant, NULL, actor, disabled ? "user.disable" : "user.enable", via,
                    name, NULL, NULL);
  return finish(s, rc);
}

static int user_id(pmcp_store *s, const char *name, char out[64])
{
  const char *p[] = {name ? name : ""};
  pmcp__db_res *r = NULL;
  int rc = pmcp__db_query(s, "SELECT id FROM users WHERE name = $1", 1, p, &r);
  if (rc)
    return rc;
  if (pmcp__db_nrows(r) != 1) {
    pmcp__db_res_free(r);
    return no_user(s, name);
  }
  snprintf(out, 64, "%s", pmcp__db_get(r, 0, 0));
  pmcp__db_res_free(r);
  return 0;
}

int pmcp_user_set_role(pmcp_store *s, const char *name, pmcp_tenant t,
                        const char *workspace, pmcp_role role, const char *actor,
                        const char *via)
{
  if (!workspace || !*workspace || strlen(workspace) > 128)
    return pmcp_store_set_error(s, PMCP_EINVAL, "give a workspace");
  if (strcmp(workspace, "default") != 0) {
    char ref[160];
    snprintf(ref, sizeof ref, "workspace:%s", workspace);
    pmcp_buf b = PMCP_BUF_INIT;
    int found = pmcp_store_get(s, t, ref, &b) == 0;
    pmcp_buf_dispose(&b);
    if (!found)
      return pmcp_store_set_error(s, PMCP_ENOTFOUND, "no workspace '%s' in this tenant",
                                  workspace);
  }
  char uid[64], tid[24], now[24];
  int rc = user_id(s, name, uid);
  if (rc)
    return rc;
  snprintf(tid, sizeof tid, "%lld", (long long)t.id);
  pmcp__auth_now(now);
  rc = pmcp_store_begin(s);
  if (rc)
    return rc;
  const char *del[] = {uid, tid, workspace};
  rc = pmcp__db_exec(s, "DELETE FROM memberships WHERE user_id = $1 AND tenant_id = $2"
                        " AND workspace = $3", 3, del, NULL);
  if (rc == 0 && role != PMCP_ROLE_NONE) {
    const char *ins[] = {uid, tid, workspace, pmcp_role_name(role), now};
    rc = pmcp__db_exec(s, "INSERT INTO memberships(user_id, tenant_id, workspace, role, created)"
                          " VALUES($1, $2, $3, $4, $5)", 5, ins, NULL);
  }
  if (rc == 0)
    rc = audit_user(s, t, workspace, actor, "user.set_role", via, name, "role",
                    pmcp_role_name(role));
  return finish(s, rc);
}

int pmcp_user_list(pmcp_store *s, pmcp_tenant t, pmcp_buf *out)
{
  char tid[24];
  snprintf(tid, sizeof tid, "%lld", (long long)t.id);
  const char *p[] = {tid};
  pmcp__db_res *u = NULL, *m = NULL;
  int n = t.id ? 1 : 0;
  int rc = pmcp__db_query(s, t.id
      ? "SELECT id, name, display_name, disabled, created FROM users u WHERE EXISTS"
        " (SELECT 1 FROM memberships m WHERE m.user_id = u.id AND m.tenant_id = $1) ORDER BY name"
      : "SELECT id, name, display_name, disabled, created FROM users ORDER BY name", n, p, &u);
  if (rc == 0)
    rc = pmcp__db_query(s, t.id
        ? "SELECT m.user_id, t.name, m.workspace, m.role FROM memberships m"
          " JOIN tenants t ON t.id = m.tenant_id WHERE m.tenant_id = $1"
          " ORDER BY t.name, m.workspace"
        : "SELECT m.user_id, t.name, m.workspace, m.role FROM memberships m"
          " JOIN tenants t ON t.id = m.tenant_id ORDER BY t.name, m.workspace", n, p, &m);
  if (rc) {
    pmcp__db_res_free(u);
    return rc;
  }
  pmcp__buf_putc(out, '[');
  for (size_t i = 0; i < pmcp__db_nrows(u); i++) {
    const char *id = pmcp__db_get(u, i, 0), *dn = pmcp__db_get(u, i, 2);
    pmcp__buf_puts(out, i ? ",{\"id\":" : "{\"id\":");
    pmcp__buf_json_string(out, id, strlen(id));
    pmcp__buf_puts(out, ",\"name\":");
    pmcp__buf_json_string(out, pmcp__db_get(u, i, 1), strlen(pmcp__db_get(u, i, 1)));
    pmcp__buf_puts(out, ",\"display_name\":");
    if (dn)
      pmcp__buf_json_string(out, dn, strlen(dn));
    else
      pmcp__buf_puts(out, "null");
    pmcp__buf_printf(out, ",\"disabled\":%s,\"created\":%s,\"memberships\":[",
                     strcmp(pmcp__db_get(u, i, 3), "0") ? "true" : "false",
                     pmcp__db_get(u, i, 4));
    int first = 1;
    for (size_t j = 0; j < pmcp__db_nrows(m); j++) {
      if (strcmp(pmcp__db_get(m, j, 0), id) != 0)
        continue;
      pmcp__buf_puts(out, first ? "{\"tenant\":" : ",{\"tenant\":");
      first = 0;
      pmcp__buf_json_string(out, pmcp__db_get(m, j, 1), strlen(pmcp__db_get(m, j, 1)));
      pmcp__buf_puts(out, ",\"workspace\":");
      pmcp__buf_json_string(out, pmcp__db_get(m, j, 2), strlen(pmcp__db_get(m, j, 2)));
      pmcp__buf_puts(out, ",\"role\":");
      pmcp__buf_json_string(out, pmcp__db_get(m, j, 3), strlen(pmcp__db_get(m, j, 3)));
      pmcp__buf_putc(out, '}');
    }
    pmcp__buf_puts(out, "]}");
  }
  pmcp__db_res_free(u);
  pmcp__db_res_free(m);
  return pmcp__buf_putc(out, ']') ? pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory") : 0;
}

int pmcp__user_login_record(pmcp_store *s, const char *name, char out_id[64], char **stored,
                            int *active)
{
  out_id[0] = '\0';
  *stored = NULL;
  *active = 0;
  const char *p[] = {name ? name : ""};
  pmcp__db_res *r = NULL;
  int rc = pmcp__db_query(s, "SELECT id, password, disabled FROM users WHERE name = $1", 1, p,
                          &r);
  if (rc)
    return rc;
  if (pmcp__db_nrows(r) == 1 && pmcp__db_get(r, 0, 1)) {
    if (!(*stored = strdup(pmcp__db_get(r, 0, 1)))) {
      pmcp__db_res_free(r);
      return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
    }
    snprintf(out_id, 64, "%s", pmcp__db_get(r, 0, 0));
    *active = strcmp(pmcp__db_get(r, 0, 2), "0") == 0;
  }
  pmcp__db_res_free(r);
  return 0;
}

int pmcp__user_check_password(pmcp_store *s, const char *name, const char *password,
                              char out_id[64])
{
  static const char bad[] = "wrong user name or password";
  char *stored = NULL;
  int active = 0;
  int rc = pmcp__user_login_record(s, name, out_id, &stored, &active);
  if (rc)
    return rc;
  /* An unknown name still costs one derivation (pmcp__password_verify
   * derives for a NULL string too), so the time taken does not tell which
   * names exist. */
  int ok = pmcp__password_verify(stored, password ? password : "") == 1 && stored && active;
  free(stored);
  if (!ok)
    out_id[0] = '\0';
  return ok ? 0 : pmcp_store_set_error(s, PMCP_EDENIED, "%s", bad);
}
