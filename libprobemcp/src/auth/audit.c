/* SPDX-License-Identifier: MIT */
/* The append-only audit log: who did what, in which tenant, through which
 * door (mcp | cli), with details as a JSON object whose secrets are masked
 * before they reach the store. The backends refuse UPDATE and DELETE on the
 * table (a trigger on SQLite). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "auth/auth.h"
#include "store/db.h"
#include "util/buf.h"

static int name_has(const char *lower, const char *part)
{
  return strstr(lower, part) != NULL;
}

/* A member name that holds a secret. Ids of secrets (key_id, token_id) are
 * not secrets and stay readable. */
static int secret_name(const char *name)
{
  char l[64];
  size_t n = strlen(name);
  /* A name too long to look at whole is masked: cut, "..._password"
   * would lose the part that marks it. */
  if (n >= sizeof l)
    return 1;
  for (size_t i = 0; i < n; i++)
    l[i] = (char)tolower((unsigned char)name[i]);
  l[n] = '\0';
  if (n >= 3 && strcmp(l + n - 3, "_id") == 0)
    return 0;
  static const char *const exact[] = {"key", "code", "pin", "otp", NULL};
  for (int i = 0; exact[i]; i++)
    if (strcmp(l, exact[i]) == 0)
      return 1;
  static const char *const parts[] = {"secret", "password", "passwd", "token", "authorization",
                                      "cookie", "verifier", "api_key", "apikey", "private",
                                      "credential", NULL};
  for (int i = 0; parts[i]; i++)
    if (name_has(l, parts[i]))
      return 1;
  return 0;
}

/* A value that looks like one of our credentials, whatever its name. */
static int secret_value(const char *v)
{
  /* A public client's id (pbm_client_...) names the application, it is
   * no secret: the log shows which client was authorized. */
  if (strncmp(v, "pbm_client_", 11) == 0)
    return 0;
  return strncmp(v, "pk_", 3) == 0 || strncmp(v, "pbm_", 4) == 0 ||
         strncasecmp(v, "bearer ", 7) == 0;
}

/* 0, or PMCP_ENOMEM: a value that could not be masked must not be stored. */
static int mask(cJSON *node)
{
  for (cJSON *c = node ? node->child : NULL; c; c = c->next) {
    int hide = (c->string && secret_name(c->string)) ||
               (cJSON_IsString(c) && secret_value(c->valuestring));
    if (hide) {
      cJSON *stars = cJSON_CreateString("***");
      if (!stars)
        return PMCP_ENOMEM;
      /* Replaced by pointer, the member name moving over: a replacement by
       * name would hit the first of two members with the same name (JSON
       * allows them), leave the second in clear and loop forever. */
      stars->string = c->string;
      stars->type |= c->type & cJSON_StringIsConst;
      c->string = NULL;
      c->type &= ~cJSON_StringIsConst;
      cJSON_ReplaceItemViaPointer(node, c, stars);
      c = stars;
      continue;
    }
    if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && mask(c) != 0)
      return PMCP_ENOMEM;
  }
  return 0;
}

/* The details are parsed, masked in place and printed again: the tree is
 * the caller's object, edited, so cJSON's printer keeps every other value
 * as the caller wrote it. */
int pmcp__audit_mask(pmcp_buf *out, const char *json)
{
  if (!json)
    return pmcp__buf_puts(out, "{}"); /* no details: an empty object */
  cJSON *o = cJSON_Parse(json);
  if (!o || !cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return PMCP_EINVAL;
  }
  if (mask(o) != 0) {
    cJSON_Delete(o);
    return PMCP_ENOMEM;
  }
  char *t = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  if (!t)
    return PMCP_ENOMEM;
  int rc = pmcp__buf_puts(out, t);
  free(t);
  return rc;
}

int pmcp_audit_add(pmcp_store *s, pmcp_tenant t, const char *workspace, const char *actor,
                const char *action, const char *via, const char *details_json)
{
  if (!actor || !*actor || !action || !*action || !via || !*via)
    return pmcp_store_set_error(s, PMCP_EINVAL, "an audit entry needs an actor, action and via");
  pmcp_buf d = PMCP_BUF_INIT;
  int rc = pmcp__audit_mask(&d, details_json);
  if (rc) {
    pmcp_buf_dispose(&d);
    return pmcp_store_set_error(s, rc, rc == PMCP_EINVAL
                                ? "audit details must be a JSON object" : "out of memory");
  }
  char now[24], rnd[40], id[64], tid[24];
  pmcp__auth_now(now);
  if (pmcp__auth_new_id(rnd, sizeof rnd, "a")) {
    pmcp_buf_dispose(&d);
    return pmcp_store_set_error(s, PMCP_EINTERNAL, "no randomness for an id");
  }
  /* Ids sort by time, then at random within a millisecond. */
  snprintf(id, sizeof id, "%013lld%s", strtoll(now, NULL, 10), rnd + 1);
  snprintf(tid, sizeof tid, "%lld", (long long)t.id);
  const char *p[] = {id, now, t.id ? tid : NULL, workspace, actor, action, via, d.ptr};
  rc = pmcp__db_exec(s, "INSERT INTO audit_log(id, time, tenant_id, workspace, actor, action,"
                        " via, details) VALUES($1, $2, $3, $4, $5, $6, $7, $8)", 8, p, NULL);
  pmcp_buf_dispose(&d);
  return rc;
}

static void put_str(pmcp_buf *b, const char *key, const char *v)
{
  pmcp__buf_printf(b, ",\"%s\":", key);
  if (v)
    pmcp__buf_json_string(b, v, strlen(v));
  else
    pmcp__buf_puts(b, "null");
}

int pmcp_audit_list(pmcp_store *s, const pmcp_audit_query *q, pmcp_buf *out)
{
  if (q && q->version < 1)
    return pmcp_store_set_error(s, PMCP_EINVAL, "pmcp_audit_list: the query's version is "
                                "not set (use PMCP_AUDIT_QUERY_INIT)");
  char since[24], tid[24], like[160];
  snprintf(since, sizeof since, "%lld", (long long)(q && q->since_ms > 0 ? q->since_ms : 0));
  const char *p[3] = {since, NULL, NULL};
  int n = 1;
  pmcp_buf sql = PMCP_BUF_INIT;
  pmcp__buf_puts(&sql, "SELECT a.id, a.time, t.name, a.workspace, a.actor, a.action, a.via,"
                       " a.details FROM audit_log a LEFT JOIN tenants t ON t.id = a.tenant_id"
                       " WHERE a.time >= $1");
  if (q && q->action && *q->action) {
    size_t len = strlen(q->action);
    if (len >= sizeof like - 1) {
      pmcp_buf_dispose(&sql);
      return pmcp_store_set_error(s, PMCP_EINVAL, "the action filter is too long");
    }
    if (q->action[len - 1] == '*' || q->action[len - 1] == '.') {
      /* A prefix: LIKE with the caller's % and _ taken literally. */
      size_t k = 0;
      for (size_t i = 0; i < len - (q->action[len - 1] == '*') && k < sizeof like - 3; i++) {
        if (q->action[i] == '%' || q->action[i] == '_' || q->action[i] == '!')
          like[k++] = '!';
        like[k++] = q->action[i];
      }
      like[k++] = '%';
      like[k] = '\0';
      p[n++] = like;
      pmcp__buf_printf(&sql, " AND a.action LIKE $%d ESCAPE '!'", n);
    } else {
      p[n++] = q->action;
      pmcp__buf_printf(&sql, " AND a.action = $%d", n);
    }
  }
  if (q && q->tenant_id) {
    snprintf(tid, sizeof tid, "%lld", (long long)q->tenant_id);
    p[n++] = tid;
    pmcp__buf_printf(&sql, " AND a.tenant_id = $%d", n);
  }
  size_t limit = q && q->limit ? q->limit : 1000;
  pmcp__buf_printf(&sql, " ORDER BY a.time, a.id LIMIT %zu", limit);
  if (!sql.ptr)
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  pmcp__db_res *r = NULL;
  int rc = pmcp__db_query(s, sql.ptr, n, p, &r);
  pmcp_buf_dispose(&sql);
  if (rc)
    return rc;
  pmcp__buf_putc(out, '[');
  for (size_t i = 0; i < pmcp__db_nrows(r); i++) {
    pmcp__buf_puts(out, i ? ",{\"id\":" : "{\"id\":");
    pmcp__buf_json_string(out, pmcp__db_get(r, i, 0), strlen(pmcp__db_get(r, i, 0)));
    pmcp__buf_printf(out, ",\"time\":%s", pmcp__db_get(r, i, 1));
    put_str(out, "tenant", pmcp__db_get(r, i, 2));
    put_str(out, "workspace", pmcp__db_get(r, i, 3));
    put_str(out, "actor", pmcp__db_get(r, i, 4));
    put_str(out, "action", pmcp__db_get(r, i, 5));
    put_str(out, "via", pmcp__db_get(r, i, 6));
    pmcp__buf_printf(out, ",\"details\":%s}", pmcp__db_get(r, i, 7));
  }
  pmcp__db_res_free(r);
  return pmcp__buf_putc(out, ']') ? pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory") : 0;
}
