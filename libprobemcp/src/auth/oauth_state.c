/* SPDX-License-Identifier: MIT */
/* The OAuth server's state (probemcp/oauth.h): every step is a row in the
 * store's service tables (db.h, schema in store/), so a
 * flow can hop between replicas. One mutex serialises this process's use
 * of its store handle (a pmcp_store is used by one thread at a time);
 * single use across processes is a conditional UPDATE whose change count
 * says who won. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "auth/auth.h"
#include "auth/oauth_internal.h"
#include "probemcp/json.h"
#include "probemcp/oauth.h"
#include "store/db.h"
#include "util/base64url.h"
#include "util/buf.h"
#include "util/crypto.h"

struct pmcp_oauth {
  pmcp_store *st;
  pthread_mutex_t mu;
  pmcp_oauth_hooks hooks;
  int64_t shift_ms;          /* testing: moves the clock */
  char tenant_id[24];        /* the tenant the server serves; "" any */
  unsigned char req_key[PMCP__SHA256_LEN]; /* seals authorization requests */
};

/* The library's own password check and audit log (pmcp_oauth_hooks). */
static int default_verify(const char *stored, const char *password, void *ud)
{
  (void)ud;
  return pmcp__password_verify(stored, password) == 1;
}

static int default_audit(void *ud, pmcp_store *st, const char *tenant_id,
                         const char *workspace, const char *actor, const char *action,
                         const char *details)
{
  (void)ud;
  pmcp_tenant t = {tenant_id ? strtoll(tenant_id, NULL, 10) : 0, 0, 0};
  return pmcp_audit_add(st, t, workspace, actor, action, "mcp", details);
}

int pmcp_oauth_new(pmcp_oauth **out, pmcp_store *st, const pmcp_oauth_hooks *hooks)
{
  *out = NULL;
  pmcp_oauth *s = calloc(1, sizeof *s);
  if (!s)
    return PMCP_ENOMEM;
  s->st = st;
  if (hooks)
    s->hooks = *hooks;
  if (!s->hooks.verify_password)
    s->hooks.verify_password = default_verify;
  if (!s->hooks.audit)
    s->hooks.audit = default_audit;
  /* Authorization requests travel sealed with a key derived from the
   * store's secret, so every replica opens what another sealed; a store
   * without one gets this process's random key. */
  static const char label[] = "probe-mcp oauth authorization request\n";
  pmcp_buf key = PMCP_BUF_INIT;
  int rc = pmcp_store_secret(st, "cursor_key", &key) == 0 && key.len >= 16
               ? pmcp__hmac_sha256(key.ptr, key.len, label, sizeof label - 1, NULL, 0,
                                   s->req_key)
               : pmcp__random_bytes(s->req_key, sizeof s->req_key);
  if (key.ptr)
    memset(key.ptr, 0, key.len);
  pmcp_buf_dispose(&key);
  if (rc) {
    free(s);
    return rc;
  }
  pthread_mutex_init(&s->mu, NULL);
  *out = s;
  return 0;
}

void pmcp_oauth_free(pmcp_oauth *s)
{
  if (!s)
    return;
  pthread_mutex_destroy(&s->mu);
  pmcp_store_free(s->st);
  free(s);
}

int64_t pmcp_oauth_now_ms(const pmcp_oauth *s)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + s->shift_ms;
}

void pmcp_oauth_testing_shift_clock(pmcp_oauth *s, int64_t ms) { s->shift_ms += ms; }

void pmcp_oauth_set_tenant(pmcp_oauth *s, int64_t tenant_id)
{
  if (tenant_id > 0)
    snprintf(s->tenant_id, sizeof s->tenant_id, "%lld", (long long)tenant_id);
  else
    s->tenant_id[0] = '\0';
}

static void lock(pmcp_oauth *s) { pthread_mutex_lock(&s->mu); }
static void unlock(pmcp_oauth *s) { pthread_mutex_unlock(&s->mu); }

static void i64(char out[24], int64_t v) { snprintf(out, 24, "%lld", (long long)v); }

static int64_t to_i64(const char *v) { return v ? strtoll(v, NULL, 10) : 0; }

static char *dup_or_null(const char *v) { return v ? strdup(v) : NULL; }

static void copy(char *dst, size_t size, const char *v)
{
  snprintf(dst, size, "%s", v ? v : "");
}

/* Copies @p v into the caller's @p dst of @p size bytes: 0, or
 * PMCP_ETOOBIG (dst left "") when it does not fit. */
static int put(char *dst, size_t size, const char *v)
{
  size_t n = v ? strlen(v) : 0;
  if (!dst || n >= size) {
    if (dst && size)
      dst[0] = '\0';
    return PMCP_ETOOBIG;
  }
  memcpy(dst, v ? v : "", n + 1);
  return 0;
}


#define VERSION_OK(p, max) ((p) && (p)->version >= 1 && (p)->version <= (max))

#define EXEC(s, sql, ch, ...)                                                 \
  pmcp__db_exec((s)->st, (sql),                                               \
                (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *)), \
                (const char *const[]){__VA_ARGS__}, (ch))
#define QUERY(s, sql, res, ...)                                               \
  pmcp__db_query((s)->st, (sql),                                              \
                 (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *)), \
                 (const char *const[]){__VA_ARGS__}, (res))

/* A member of an audit entry's details: every one is a string. */
typedef struct detail {
  const char *key, *value;
} detail;

/* An audit entry whose details are the object of the @p n members @p d. */
static int audit(pmcp_oauth *s, const char *tenant, const char *ws, const char *actor,
                 const char *action, const detail *d, size_t n)
{
  pmcp_json *j = NULL;
  const char *text = NULL;
  if (pmcp_json_new(&j, 0) == 0) {
    pmcp_json_object_begin(j);
    for (size_t i = 0; i < n; i++) {
      if (!d[i].value)
        continue; /* an absent detail is left out, not written "" */
      pmcp_json_key(j, d[i].key);
      pmcp_json_string(j, d[i].value);
    }
    if (pmcp_json_object_end(j) == 0)
      text = pmcp_json_text(j, NULL);
  }
  int rc = 0;
  if (s->hooks.audit)
    rc = s->hooks.audit(s->hooks.ud, s->st, tenant, ws, actor, action, text ? text : "{}");
  pmcp_json_free(j);
  return rc;
}

/* "user:NAME", the audit log's actor for a person (lock held). */
static void actor_of(pmcp_oauth *s, const char *user_id, char *out, size_t size)
{
  pmcp__db_res *r = NULL;
  int rc = QUERY(s, "SELECT name FROM users WHERE id = $1", &r, user_id);
  const char *name = rc == 0 && pmcp__db_nrows(r) == 1 ? pmcp__db_get(r, 0, 0) : NULL;
  snprintf(out, size, "user:%s", name ? name : user_id);
  pmcp__db_res_free(r);
}

/* ---- clients ------------------------------------------------------------- */

int pmcp_oauth_client_register(pmcp_oauth *s, const char *name, const char *uris,
                               char *id_out, size_t id_size)
{
  char id[33], now[24], cid[40];
  int rc = pmcp__oauth_random_id(id);
  if (rc)
    return rc;
  snprintf(cid, sizeof cid, "pbm_client_%.24s", id);
  if ((rc = put(id_out, id_size, cid)) != 0)
    return rc;
  lock(s);
  i64(now, pmcp_oauth_now_ms(s));
  rc = EXEC(s, "INSERT INTO oauth_clients(id, name, redirect_uris, created, used)"
               " VALUES($1, $2, $3, $4, NULL)", NULL, id_out, name, uris, now);
  unlock(s);
  return rc;
}

int pmcp_oauth_client_remember(pmcp_oauth *s, const char *url, const char *name,
                           const char *uris)
{
  char now[24];
  lock(s);
  i64(now, pmcp_oauth_now_ms(s));
  int rc = EXEC(s, "INSERT INTO oauth_clients(id, name, redirect_uris, created, used)"
                   " VALUES($1, $2, $3, $4, NULL) ON CONFLICT (id) DO UPDATE SET"
                   " name = excluded.name, redirect_uris = excluded.redirect_uris",
                NULL, url, name, uris, now);
  unlock(s);
  return rc;
}

int pmcp_oauth_client_get(pmcp_oauth *s, const char *id, char **name, char **uris)
{
  pmcp__db_res *r = NULL;
  *name = *uris = NULL;
  lock(s);
  int rc = QUERY(s, "SELECT name, redirect_uris FROM oauth_clients WHERE id = $1", &r, id);
  unlock(s);
  if (rc)
    return rc;
  int found = pmcp__db_nrows(r) == 1;
  if (found) {
    *name = dup_or_null(pmcp__db_get(r, 0, 0));
    *uris = dup_or_null(pmcp__db_get(r, 0, 1));
    if (!*uris) {
      free(*name);
      *name = NULL;
      found = PMCP_ENOMEM;
    }
  }
  pmcp__db_res_free(r);
  return found;
}

int pmcp_oauth_client_used(pmcp_oauth *s, const char *id)
{
  pmcp__db_res *r = NULL;
  lock(s);
  int rc = QUERY(s, "SELECT used FROM oauth_clients WHERE id = $1 AND used IS NOT NULL",
                 &r, id);
  unlock(s);
  if (rc)
    return rc;
  int used = pmcp__db_nrows(r) == 1;
  pmcp__db_res_free(r);
  return used;
}

void pmcp_oauth_prune(pmcp_oauth *s)
{
  char now[24], day[24];
  lock(s);
  int64_t t = pmcp_oauth_now_ms(s);
  i64(now, t);
  i64(day, t - (int64_t)PMCP_OAUTH_UNUSED_CLIENT_TTL * 1000);
  EXEC(s, "DELETE FROM oauth_clients WHERE used IS NULL AND created < $1", NULL, day);
  EXEC(s, "DELETE FROM oauth_requests WHERE expires < $1", NULL, now);
  EXEC(s, "DELETE FROM oauth_codes WHERE expires < $1", NULL, now);
  EXEC(s, "DELETE FROM oauth_tokens WHERE expires < $1", NULL, now);
  EXEC(s, "DELETE FROM oauth_sessions WHERE expires < $1", NULL, now);
  unlock(s);
}

/* ---- requests ------------------------------------------------------------------- */

/* An authorization request is stored only once the person decides: until
 * then it travels in the consent links and forms, sealed as
 *   base64url(JSON [expires, client_id, redirect_uri, challenge, state,
 *                   resource, scope, nonce]) "." base64url(HMAC-SHA256)
 * (the nonce makes each request, and so its decision row, distinct)
 * so nothing unauthenticated grows the store and nobody can alter it. */
#define SEALED_MAX 8192

static void mac_of(const pmcp_oauth *s, const char *text, size_t n,
                   unsigned char out[PMCP__SHA256_LEN])
{
  static const char label[] = "request\n";
  if (pmcp__hmac_sha256(s->req_key, sizeof s->req_key, label, sizeof label - 1, text, n, out))
    pmcp__random_bytes(out, PMCP__SHA256_LEN); /* never a predictable MAC */
}

/* The sealed request is a record read back by request_open(), not an
 * answer: cJSON writes and reads it, so that a state or scope that is not
 * UTF-8 comes back byte for byte (the writer would make it U+FFFD, and a
 * client gets back its state exactly, RFC 6749 4.1.2). */
static cJSON *str_or_null(const char *v) { return v ? cJSON_CreateString(v) : cJSON_CreateNull(); }

int pmcp_oauth_request_seal(pmcp_oauth *s, const pmcp_oauth_request *r, char **sealed)
{
  *sealed = NULL;
  if (!VERSION_OK(r, PMCP_OAUTH_REQUEST_VERSION))
    return PMCP_EINVAL;
  char nonce[33];
  int rc = pmcp__oauth_random_id(nonce);
  if (rc)
    return rc;
  cJSON *a = cJSON_CreateArray();
  cJSON_AddItemToArray(a, cJSON_CreateNumber(
      (double)(pmcp_oauth_now_ms(s) + (int64_t)PMCP_OAUTH_REQUEST_TTL * 1000)));
  cJSON_AddItemToArray(a, str_or_null(r->client_id));
  cJSON_AddItemToArray(a, str_or_null(r->redirect_uri));
  cJSON_AddItemToArray(a, str_or_null(r->challenge));
  cJSON_AddItemToArray(a, str_or_null(r->state));
  cJSON_AddItemToArray(a, str_or_null(r->resource));
  cJSON_AddItemToArray(a, str_or_null(r->scope));
  cJSON_AddItemToArray(a, cJSON_CreateString(nonce));
  char *text = cJSON_PrintUnformatted(a);
  cJSON_Delete(a);
  if (!text)
    return PMCP_ENOMEM;
  pmcp_buf b = PMCP_BUF_INIT;
  unsigned char mac[PMCP__SHA256_LEN];
  rc = pmcp__b64url_encode(&b, text, strlen(text));
  free(text);
  if (rc == 0) {
    mac_of(s, b.ptr, b.len, mac);
    rc = pmcp_buf_putc(&b, '.') ? PMCP_ENOMEM : pmcp__b64url_encode(&b, mac, sizeof mac);
  }
  if (rc == 0 && b.len > SEALED_MAX)
    rc = PMCP_EINVAL;
  if (rc) {
    pmcp_buf_dispose(&b);
    return rc;
  }
  *sealed = b.ptr;
  return 0;
}

void pmcp_oauth_request_dispose(pmcp_oauth_request *r)
{
  if (!r)
    return;
  unsigned v = r->version;
  free(r->id);
  free(r->client_id);
  free(r->client_name);
  free(r->redirect_uri);
  free(r->challenge);
  free(r->state);
  free(r->resource);
  free(r->scope);
  memset(r, 0, sizeof *r);
  r->version = v;
}

static char *item_str(const cJSON *a, int i, int *bad)
{
  const cJSON *it = cJSON_GetArrayItem(a, i);
  if (cJSON_IsNull(it))
    return NULL;
  if (!cJSON_IsString(it)) {
    *bad = 1;
    return NULL;
  }
  char *v = strdup(it->valuestring);
  if (!v)
    *bad = 1;
  return v;
}

/* Opens a sealed request: 1 (filled; id = its decision row's key), 0 not
 * ours, altered or expired, <0 out of memory. Needs no lock. */
static int request_open(pmcp_oauth *s, const char *sealed, pmcp_oauth_request *out)
{
  if (!VERSION_OK(out, PMCP_OAUTH_REQUEST_VERSION))
    return PMCP_EINVAL;
  pmcp_oauth_request_dispose(out);
  size_t n = sealed ? strlen(sealed) : 0;
  const char *dot = n && n <= SEALED_MAX ? strrchr(sealed, '.') : NULL;
  if (!dot)
    return 0;
  unsigned char want[PMCP__SHA256_LEN], got[PMCP__SHA256_LEN + 4];
  size_t gl = 0, pl = (size_t)(dot - sealed);
  /* The MAC's text has one length: checked before decoding, which writes
   * 3 bytes per 4 characters into @c got. */
  if (strlen(dot + 1) != pmcp__b64url_len(PMCP__SHA256_LEN))
    return 0;
  if (pmcp__b64url_decode(dot + 1, strlen(dot + 1), got, &gl) != PMCP__B64_OK ||
      gl != PMCP__SHA256_LEN)
    return 0;
  mac_of(s, sealed, pl, want);
  if (!pmcp__ct_equal(want, got, sizeof want))
    return 0;
  unsigned char *text = malloc(pl * 3 / 4 + 2);
  size_t tl = 0;
  if (!text)
    return PMCP_ENOMEM;
  if (pmcp__b64url_decode(sealed, pl, text, &tl) != PMCP__B64_OK) {
    free(text);
    return 0;
  }
  cJSON *a = cJSON_ParseWithLength((const char *)text, tl);
  free(text);
  const cJSON *exp = cJSON_GetArrayItem(a, 0);
  int bad = !cJSON_IsArray(a) || cJSON_GetArraySize(a) != 8 || !cJSON_IsNumber(exp) ||
            exp->valuedouble <= (double)pmcp_oauth_now_ms(s);
  if (!bad) {
    out->client_id = item_str(a, 1, &bad);
    out->redirect_uri = item_str(a, 2, &bad);
    out->challenge = item_str(a, 3, &bad);
    out->state = item_str(a, 4, &bad);
    out->resource = item_str(a, 5, &bad);
    out->scope = item_str(a, 6, &bad);
    bad = bad || !out->client_id || !out->redirect_uri || !out->challenge;
    out->expires = (int64_t)exp->valuedouble;
  }
  cJSON_Delete(a);
  if (bad) {
    pmcp_oauth_request_dispose(out);
    return 0;
  }
  unsigned char d[PMCP__SHA256_LEN];
  char hex[2 * PMCP__SHA256_LEN + 1];
  if (pmcp__sha256(sealed, n, d)) {
    pmcp_oauth_request_dispose(out);
    return PMCP_ENOMEM;
  }
  pmcp__hex(d, sizeof d, hex);
  hex[32] = '\0';
  if (!(out->id = strdup(hex))) {
    pmcp_oauth_request_dispose(out);
    return PMCP_ENOMEM;
  }
  return 1;
}

/* Opens @p sealed and checks it was not decided yet (lock held); fills
 * the client's name when it is stored. */
static int request_load(pmcp_oauth *s, const char *sealed, pmcp_oauth_request *out)
{
  int found = request_open(s, sealed, out);
  if (found != 1)
    return found;
  pmcp__db_res *r = NULL;
  int rc = QUERY(s, "SELECT 1 FROM oauth_requests WHERE id = $1", &r, out->id);
  if (rc == 0 && pmcp__db_nrows(r) == 0) {
    pmcp__db_res_free(r);
    r = NULL;
    rc = QUERY(s, "SELECT name FROM oauth_clients WHERE id = $1", &r, out->client_id);
    if (rc == 0 && pmcp__db_nrows(r) == 1 && pmcp__db_get(r, 0, 0))
      out->client_name = strdup(pmcp__db_get(r, 0, 0));
    found = rc ? rc : 1;
  } else {
    found = rc ? rc : 0;   /* decided already */
  }
  pmcp__db_res_free(r);
  if (found != 1)
    pmcp_oauth_request_dispose(out);
  return found;
}

int pmcp_oauth_request_get(pmcp_oauth *s, const char *sealed, pmcp_oauth_request *out)
{
  lock(s);
  int rc = request_load(s, sealed, out);
  unlock(s);
  return rc;
}

/* Records the decision on @p r (lock held, in the caller's transaction):
 * 1 recorded, 0 decided before (by another tab or replica), <0 error. */
static int request_decide(pmcp_oauth *s, const pmcp_oauth_request *r, const char *now)
{
  char exp[24];
  int64_t ch = 0;
  i64(exp, r->expires);
  int rc = EXEC(s, "INSERT INTO oauth_requests(id, client_id, redirect_uri, challenge,"
                   " state, resource, scope, created, expires, done)"
                   " VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $8) ON CONFLICT (id) DO NOTHING",
                &ch, r->id, r->client_id, r->redirect_uri, r->challenge, r->state,
                r->resource, r->scope, now, exp);
  return rc ? rc : ch == 1;
}

/* ---- people ---------------------------------------------------------------------- */

int pmcp_oauth_user_check(pmcp_oauth *s, const char *name, const char *password,
                          char *user_id, size_t id_size)
{
  char id[64], *stored = NULL;
  int active = 0;
  /* The auth module's record (users.c), read under the lock; the KDF runs
   * outside it, whether or not the user exists, so the answer's timing
   * does not tell which names exist. */
  lock(s);
  int rc = pmcp__user_login_record(s->st, name, id, &stored, &active);
  unlock(s);
  if (rc)
    return rc;
  int match = s->hooks.verify_password &&
              s->hooks.verify_password(stored ? stored : "", password, s->hooks.ud);
  int ok = stored && match && active;
  if (ok && put(user_id, id_size, id) != 0)
    ok = PMCP_ETOOBIG;
  free(stored);
  return ok;
}

void pmcp_oauth_audit_signin(pmcp_oauth *s, const char *name, const char *address,
                         const char *action)
{
  char actor[160];
  snprintf(actor, sizeof actor, "user:%.140s", name && *name ? name : "?");
  const detail d[] = {{"user", name ? name : ""}, {"address", address ? address : ""}};
  lock(s);
  /* The entry goes to the person's tenant when the name is known, else to
   * the first tenant (the one a single-tenant server serves). */
  pmcp__db_res *r = NULL;
  const char *tenant = NULL;
  if (QUERY(s, "SELECT m.tenant_id FROM users u JOIN memberships m ON m.user_id = u.id"
               " WHERE u.name = $1 ORDER BY m.tenant_id LIMIT 1", &r, name ? name : "") == 0 &&
      pmcp__db_nrows(r) == 1)
    tenant = pmcp__db_get(r, 0, 0);
  pmcp__db_res *t = NULL;
  if (!tenant && QUERY(s, "SELECT MIN(id) FROM tenants WHERE $1 = $1", &t, "x") == 0 &&
      pmcp__db_nrows(t) == 1)
    tenant = pmcp__db_get(t, 0, 0);
  audit(s, tenant, NULL, actor, action, d, 2);
  pmcp__db_res_free(t);
  pmcp__db_res_free(r);
  unlock(s);
}

int pmcp_oauth_workspaces(pmcp_oauth *s, const char *user_id, pmcp_oauth_workspace **out,
                      size_t *n)
{
  pmcp__db_res *r = NULL;
  *out = NULL;
  *n = 0;
  lock(s);
  /* Only the served tenant's: a connection to another tenant's workspace
   * would make tokens this server refuses. */
  int rc = s->tenant_id[0]
               ? QUERY(s, "SELECT m.tenant_id, t.name, m.workspace, m.role FROM memberships m"
                          " JOIN tenants t ON t.id = m.tenant_id WHERE m.user_id = $1"
                          " AND m.tenant_id = $2 ORDER BY t.name, m.workspace", &r, user_id,
                       s->tenant_id)
               : QUERY(s, "SELECT m.tenant_id, t.name, m.workspace, m.role FROM memberships m"
                          " JOIN tenants t ON t.id = m.tenant_id WHERE m.user_id = $1"
                          " ORDER BY t.name, m.workspace", &r, user_id);
  unlock(s);
  if (rc)
    return rc;
  size_t rows = pmcp__db_nrows(r), bytes = rows * sizeof **out;
  for (size_t i = 0; i < rows; i++)
    for (int c = 0; c < 4; c++)
      bytes += pmcp__str_size(pmcp__db_get(r, i, c));
  /* the rows, then their strings: one free() releases both */
  if (rows && !(*out = calloc(1, bytes))) {
    pmcp__db_res_free(r);
    return PMCP_ENOMEM;
  }
  char *at = (char *)(*out + rows);
  for (size_t i = 0; i < rows; i++) {
    pmcp_oauth_workspace *w = &(*out)[i];
    w->version = PMCP_OAUTH_WORKSPACE_VERSION;
    w->tenant_id = pmcp__str_put(&at, pmcp__db_get(r, i, 0));
    w->tenant = pmcp__str_put(&at, pmcp__db_get(r, i, 1));
    w->workspace = pmcp__str_put(&at, pmcp__db_get(r, i, 2));
    w->role = pmcp__str_put(&at, pmcp__db_get(r, i, 3));
  }
  *n = rows;
  pmcp__db_res_free(r);
  return 0;
}

char *pmcp_oauth_user_name(pmcp_oauth *s, const char *user_id)
{
  pmcp__db_res *r = NULL;
  lock(s);
  int rc = QUERY(s, "SELECT name, display_name FROM users WHERE id = $1", &r, user_id);
  unlock(s);
  char *name = NULL;
  if (rc == 0 && pmcp__db_nrows(r) == 1) {
    const char *n = pmcp__db_get(r, 0, 0), *d = pmcp__db_get(r, 0, 1);
    size_t len = strlen(n ? n : "") + strlen(d ? d : "") + 4;
    name = malloc(len);
    if (name && d && *d)
      snprintf(name, len, "%s (%s)", d, n ? n : "");
    else if (name)
      snprintf(name, len, "%s", n ? n : "");
  }
  pmcp__db_res_free(r);
  return name;
}

/* ---- consent-page sessions ----------------------------------------------------------- */

int pmcp_oauth_session_new(pmcp_oauth *s, const char *user_id, char *cookie, size_t size)
{
  char hash[PMCP_OAUTH_HASH_HEX], now[24], exp[24], tok[PMCP_OAUTH_TOKEN_MAX];
  int rc = pmcp_oauth_token_new("pbm_ss_", tok, sizeof tok);
  if (rc == 0)
    rc = put(cookie, size, tok);
  if (rc == 0)
    rc = pmcp_oauth_token_hash(tok, hash, sizeof hash);
  if (rc)
    return rc;
  lock(s);
  int64_t t = pmcp_oauth_now_ms(s);
  i64(now, t);
  i64(exp, t + (int64_t)PMCP_OAUTH_SESSION_TTL * 1000);
  rc = EXEC(s, "INSERT INTO oauth_sessions(hash, user_id, created, expires)"
               " VALUES($1, $2, $3, $4)", NULL, hash, user_id, now, exp);
  unlock(s);
  return rc;
}

int pmcp_oauth_session_user(pmcp_oauth *s, const char *cookie, char *user_id,
                            size_t id_size)
{
  char hash[PMCP_OAUTH_HASH_HEX], now[24];
  if (!pmcp_oauth_token_shape_ok(cookie, "pbm_ss_") || pmcp_oauth_token_hash(cookie, hash, sizeof hash))
    return 0;
  pmcp__db_res *r = NULL;
  lock(s);
  i64(now, pmcp_oauth_now_ms(s));
  /* A sign-in older than the person's last change (password, disabled or
   * enabled: users.updated) is over. */
  int rc = QUERY(s, "SELECT s.user_id FROM oauth_sessions s JOIN users u ON u.id = s.user_id"
                    " WHERE s.hash = $1 AND s.expires > $2 AND u.disabled = 0"
                    " AND s.created >= u.updated",
                 &r, hash, now);
  unlock(s);
  if (rc)
    return rc;
  int found = pmcp__db_nrows(r) == 1;
  if (found && put(user_id, id_size, pmcp__db_get(r, 0, 0)) != 0)
    found = PMCP_ETOOBIG;
  pmcp__db_res_free(r);
  return found;
}

void pmcp_oauth_session_end(pmcp_oauth *s, const char *cookie)
{
  char hash[PMCP_OAUTH_HASH_HEX];
  if (!pmcp_oauth_token_shape_ok(cookie, "pbm_ss_") || pmcp_oauth_token_hash(cookie, hash, sizeof hash))
    return;
  lock(s);
  EXEC(s, "DELETE FROM oauth_sessions WHERE hash = $1", NULL, hash);
  unlock(s);
}

/* ---- decisions ---------------------------------------------------------------------- */

static int is_member(pmcp_oauth *s, const char *user_id, const char *tenant,
                     const char *ws)
{
  pmcp__db_res *r = NULL;
  if (s->tenant_id[0] && strcmp(tenant, s->tenant_id) != 0)
    return 0;
  int rc = QUERY(s, "SELECT role FROM memberships WHERE user_id = $1 AND tenant_id = $2"
                    " AND workspace = $3", &r, user_id, tenant, ws);
  int ok = rc == 0 && pmcp__db_nrows(r) == 1;
  pmcp__db_res_free(r);
  return rc ? rc : ok;
}

int pmcp_oauth_approve(pmcp_oauth *s, const char *req_id, const char *user_id,
                   const char *tenant_id, const char *workspace,
                       const char *access, char *code, size_t code_size,
                       pmcp_oauth_request *req, char *conn_id, size_t conn_size)
{
  char hash[PMCP_OAUTH_HASH_HEX], now[24], exp[24], cid[33], tok[PMCP_OAUTH_TOKEN_MAX];
  char conn[40];
  int rc = pmcp_oauth_token_new(PMCP_OAUTH_CODE_PREFIX, tok, sizeof tok);
  if (rc == 0)
    rc = pmcp_oauth_token_hash(tok, hash, sizeof hash);
  if (rc == 0)
    rc = pmcp__oauth_random_id(cid);
  if (rc)
    return rc;
  snprintf(conn, sizeof conn, "conn_%.24s", cid);
  if ((rc = put(code, code_size, tok)) != 0 || (rc = put(conn_id, conn_size, conn)) != 0)
    return rc;
  lock(s);
  int64_t t = pmcp_oauth_now_ms(s);
  i64(now, t);
  i64(exp, t + (int64_t)PMCP_OAUTH_CODE_TTL * 1000);
  int found = request_load(s, req_id, req);
  if (found != 1) {
    unlock(s);
    return found;
  }
  int member = is_member(s, user_id, tenant_id, workspace);
  if (member != 1) {
    unlock(s);
    pmcp_oauth_request_dispose(req);
    return member;
  }
  int64_t ch = 0;
  rc = pmcp_store_begin(s->st);
  if (rc == 0) {
    /* The client must (still) be known: dynamic registrations are pruned,
     * metadata-document clients are stored by the consent page first. */
    pmcp__db_res *c = NULL;
    rc = QUERY(s, "SELECT name FROM oauth_clients WHERE id = $1", &c, req->client_id);
    int known = rc == 0 && pmcp__db_nrows(c) == 1;
    pmcp__db_res_free(c);
    int d = rc == 0 && known ? request_decide(s, req, now) : 0;
    if (d < 0)
      rc = d;
    ch = d == 1;
  }
  if (rc == 0 && ch == 1)
    rc = EXEC(s, "INSERT INTO mcp_connections(id, user_id, client_id, tenant_id, workspace,"
                 " access, created, last_used, revoked) VALUES($1, $2, $3, $4, $5, $6, $7,"
                 " NULL, NULL)", NULL, conn_id, user_id, req->client_id, tenant_id,
              workspace, access, now);
  if (rc == 0 && ch == 1)
    rc = EXEC(s, "INSERT INTO oauth_codes(hash, connection_id, client_id, redirect_uri,"
                 " challenge, resource, expires, used) VALUES($1, $2, $3, $4, $5, $6, $7, NULL)",
              NULL, hash, conn_id, req->client_id, req->redirect_uri, req->challenge,
              req->resource, exp);
  if (rc == 0 && ch == 1)
    rc = EXEC(s, "UPDATE oauth_clients SET used = $2 WHERE id = $1 AND used IS NULL",
              NULL, req->client_id, now);
  if (rc == 0 && ch == 1) {
    /* In the same transaction: no connection without its audit entry. */
    const detail d[] = {{"connection", conn_id},
                        {"client_id", req->client_id},
                        {"client_name", req->client_name ? req->client_name : ""},
                        {"access", access}};
    char actor[200];
    actor_of(s, user_id, actor, sizeof actor);
    rc = audit(s, tenant_id, workspace, actor, "mcp_connection.authorize", d, 4);
  }
  if (rc == 0 && ch == 1) {
    rc = pmcp_store_commit(s->st);
  } else {
    pmcp_store_rollback(s->st);
  }
  unlock(s);
  if (rc || ch != 1) {
    pmcp_oauth_request_dispose(req);
    return rc ? rc : 0;
  }
  return 1;
}

int pmcp_oauth_deny(pmcp_oauth *s, const char *sealed, pmcp_oauth_request *req)
{
  char now[24];
  lock(s);
  i64(now, pmcp_oauth_now_ms(s));
  int found = request_load(s, sealed, req);
  if (found == 1) {
    int rc = request_decide(s, req, now);
    if (rc != 1) {
      pmcp_oauth_request_dispose(req);
      found = rc;
    }
  }
  unlock(s);
  return found;
}

/* ---- connections ---------------------------------------------------------------------- */

/* Revokes a connection and drops its tokens (lock held), with its audit
 * entry in the same transaction: no revocation without its entry (a
 * failed audit write leaves the connection as it was). 1 when it was
 * live. Audited with @p actor ("user:NAME", "client:ID" or "system" when
 * the server revokes on its own) and @p reason. */
static int revoke_locked(pmcp_oauth *s, const char *conn_id, const char *actor,
                         const char *reason)
{
  char now[24];
  int64_t ch = 0;
  pmcp__db_res *r = NULL;
  i64(now, pmcp_oauth_now_ms(s));
  int rc = pmcp_store_begin(s->st);
  if (rc == 0)
    rc = QUERY(s, "SELECT user_id, tenant_id, workspace, client_id FROM mcp_connections"
                  " WHERE id = $1", &r, conn_id);
  if (rc == 0)
    rc = EXEC(s, "UPDATE mcp_connections SET revoked = $2 WHERE id = $1 AND revoked IS NULL",
              &ch, conn_id, now);
  /* Tokens go even when the connection was already revoked. */
  if (rc == 0)
    rc = EXEC(s, "DELETE FROM oauth_tokens WHERE connection_id = $1", NULL, conn_id);
  if (rc == 0 && ch == 1 && pmcp__db_nrows(r) == 1) {
    const char *client = pmcp__db_get(r, 0, 3);
    const detail d[] = {
        {"connection", conn_id}, {"client_id", client ? client : ""}, {"reason", reason}};
    rc = audit(s, pmcp__db_get(r, 0, 1), pmcp__db_get(r, 0, 2), actor, "mcp_connection.revoke", d,
               3);
  }
  if (rc == 0)
    rc = pmcp_store_commit(s->st);
  else
    pmcp_store_rollback(s->st);
  pmcp__db_res_free(r);
  return rc ? rc : ch == 1;
}

int pmcp_oauth_connections(pmcp_oauth *s, const char *user_id,
                       pmcp_oauth_connection **out, size_t *n)
{
  pmcp__db_res *r = NULL;
  *out = NULL;
  *n = 0;
  lock(s);
  int rc = QUERY(s, "SELECT m.id, c.name, t.name, m.workspace, m.access, m.created,"
                    " m.last_used FROM mcp_connections m"
                    " LEFT JOIN oauth_clients c ON c.id = m.client_id"
                    " LEFT JOIN tenants t ON t.id = m.tenant_id"
                    " WHERE m.user_id = $1 AND m.revoked IS NULL"
                    " ORDER BY m.created DESC, m.id", &r, user_id);
  unlock(s);
  if (rc)
    return rc;
  size_t rows = pmcp__db_nrows(r), bytes = rows * sizeof **out;
  for (size_t i = 0; i < rows; i++)
    for (int k = 0; k < 5; k++)
      bytes += pmcp__str_size(pmcp__db_get(r, i, k));
  /* the rows, then their strings: one free() releases both */
  if (rows && !(*out = calloc(1, bytes))) {
    pmcp__db_res_free(r);
    return PMCP_ENOMEM;
  }
  char *at = (char *)(*out + rows);
  for (size_t i = 0; i < rows; i++) {
    pmcp_oauth_connection *c = &(*out)[i];
    c->version = PMCP_OAUTH_CONNECTION_VERSION;
    c->id = pmcp__str_put(&at, pmcp__db_get(r, i, 0));
    c->client = pmcp__str_put(&at, pmcp__db_get(r, i, 1));
    c->tenant = pmcp__str_put(&at, pmcp__db_get(r, i, 2));
    c->workspace = pmcp__str_put(&at, pmcp__db_get(r, i, 3));
    c->access = pmcp__str_put(&at, pmcp__db_get(r, i, 4));
    c->created = to_i64(pmcp__db_get(r, i, 5));
    c->last_used = to_i64(pmcp__db_get(r, i, 6));
  }
  *n = rows;
  pmcp__db_res_free(r);
  return 0;
}

int pmcp_oauth_connection_revoke(pmcp_oauth *s, const char *conn_id,
                             const char *user_id, const char *reason)
{
  pmcp__db_res *r = NULL;
  lock(s);
  int rc = QUERY(s, "SELECT id FROM mcp_connections WHERE id = $1 AND user_id = $2"
                    " AND revoked IS NULL", &r, conn_id, user_id);
  int done = rc;
  if (rc == 0 && pmcp__db_nrows(r) == 1) {
    char actor[200];
    actor_of(s, user_id, actor, sizeof actor);
    done = revoke_locked(s, conn_id, actor, reason);
  } else if (rc == 0) {
    done = 0;
  }
  unlock(s);
  pmcp__db_res_free(r);
  return done;
}

/* ---- tokens ------------------------------------------------------------------------------ */

static int set_err(pmcp_oauth_err *e, const char *error, int status, const char *desc)
{
  e->error = error;
  e->status = status;
  e->description = desc;
  return -1;
}

void pmcp_oauth_tokens_dispose(pmcp_oauth_tokens *t)
{
  if (!t)
    return;
  unsigned v = t->version;
  /* the pair is a secret: not left in freed memory */
  if (t->pmcp__mem)
    OPENSSL_cleanse(t->pmcp__mem, pmcp__str_size(t->access) + pmcp__str_size(t->refresh));
  free(t->pmcp__mem);
  memset(t, 0, sizeof *t);
  t->version = v;
}

void pmcp_oauth_principal_dispose(pmcp_oauth_principal *p)
{
  if (!p)
    return;
  unsigned v = p->version;
  free(p->pmcp__mem);
  memset(p, 0, sizeof *p);
  p->version = v;
}

/* Checks the versions of a token call's out-parameters and clears @p out:
 * 0, or PMCP_EINVAL. */
static int tokens_start(pmcp_oauth_tokens *out, pmcp_oauth_err *err)
{
  if (!VERSION_OK(out, PMCP_OAUTH_TOKENS_VERSION) || !VERSION_OK(err, PMCP_OAUTH_ERR_VERSION))
    return PMCP_EINVAL;
  pmcp_oauth_tokens_dispose(out);
  return 0;
}

/* Fills @p out with copies of the pair and its level: 0 or PMCP_ENOMEM. */
static int tokens_fill(pmcp_oauth_tokens *out, const char *at, const char *rt,
                       const char *level)
{
  const char *v[3] = {at, rt, level};
  const char **dst[3] = {&out->access, &out->refresh, &out->access_level};
  out->pmcp__mem = pmcp__str_block(3, v, dst);
  return out->pmcp__mem ? 0 : PMCP_ENOMEM;
}

/* Inserts a fresh access + refresh pair for @p conn (lock held). */
static int issue_locked(pmcp_oauth *s, const char *conn, const char *client,
                        const char *resource, const char *level, pmcp_oauth_tokens *out)
{
  char ah[PMCP_OAUTH_HASH_HEX], rh[PMCP_OAUTH_HASH_HEX], now[24], aexp[24], rexp[24];
  char at[PMCP_OAUTH_TOKEN_MAX], rt[PMCP_OAUTH_TOKEN_MAX];
  int rc = pmcp_oauth_token_new(PMCP_OAUTH_AT_PREFIX, at, sizeof at);
  if (rc == 0)
    rc = pmcp_oauth_token_new(PMCP_OAUTH_RT_PREFIX, rt, sizeof rt);
  if (rc == 0)
    rc = pmcp_oauth_token_hash(at, ah, sizeof ah);
  if (rc == 0)
    rc = pmcp_oauth_token_hash(rt, rh, sizeof rh);
  if (rc == 0)
    rc = tokens_fill(out, at, rt, level);
  if (rc)
    return rc;
  int64_t t = pmcp_oauth_now_ms(s);
  i64(now, t);
  i64(aexp, t + (int64_t)PMCP_OAUTH_ACCESS_TTL * 1000);
  i64(rexp, t + (int64_t)PMCP_OAUTH_REFRESH_TTL * 1000);
  rc = pmcp_store_begin(s->st);
  if (rc == 0)
    rc = EXEC(s, "INSERT INTO oauth_tokens(hash, kind, connection_id, client_id, resource,"
                 " created, expires, rotated) VALUES($1, 'access', $2, $3, $4, $5, $6, NULL)",
              NULL, ah, conn, client, resource, now, aexp);
  if (rc == 0)
    rc = EXEC(s, "INSERT INTO oauth_tokens(hash, kind, connection_id, client_id, resource,"
                 " created, expires, rotated) VALUES($1, 'refresh', $2, $3, $4, $5, $6, NULL)",
              NULL, rh, conn, client, resource, now, rexp);
  if (rc == 0)
    rc = pmcp_store_commit(s->st);
  else
    pmcp_store_rollback(s->st);
  if (rc)
    pmcp_oauth_tokens_dispose(out);
  return rc;
}

/* The access level of a live connection (lock held): 1 live, 0 revoked or
 * gone, <0 error. */
static int conn_live(pmcp_oauth *s, const char *conn, char access[8])
{
  pmcp__db_res *r = NULL;
  int rc = QUERY(s, "SELECT m.access FROM mcp_connections m JOIN users u ON u.id = m.user_id"
                    " WHERE m.id = $1 AND m.revoked IS NULL AND u.disabled = 0", &r, conn);
  int live = rc == 0 && pmcp__db_nrows(r) == 1;
  if (live)
    copy(access, 8, pmcp__db_get(r, 0, 0));
  pmcp__db_res_free(r);
  return rc ? rc : live;
}

int pmcp_oauth_exchange_code(pmcp_oauth *s, const char *code, const char *client_id,
                         const char *redirect_uri, const char *verifier,
                         const char *resource, pmcp_oauth_tokens *out, pmcp_oauth_err *err)
{
  char hash[PMCP_OAUTH_HASH_HEX], now[24], level[8] = "";
  if (tokens_start(out, err))
    return PMCP_EINVAL;
  if (!pmcp_oauth_token_shape_ok(code, PMCP_OAUTH_CODE_PREFIX) || pmcp_oauth_token_hash(code, hash, sizeof hash))
    return set_err(err, "invalid_grant", 400, "the authorization code is malformed");
  pmcp__db_res *r = NULL;
  lock(s);
  int64_t t = pmcp_oauth_now_ms(s);
  i64(now, t);
  int rc = QUERY(s, "SELECT connection_id, client_id, redirect_uri, challenge, resource,"
                    " expires, used FROM oauth_codes WHERE hash = $1", &r, hash);
  if (rc) {
    unlock(s);
    return set_err(err, "server_error", 500, "the store failed");
  }
  if (pmcp__db_nrows(r) != 1) {
    unlock(s);
    pmcp__db_res_free(r);
    return set_err(err, "invalid_grant", 400, "unknown or expired authorization code");
  }
  char conn[40];
  copy(conn, sizeof conn, pmcp__db_get(r, 0, 0));
  int64_t ch = 0;
  if (!pmcp__db_get(r, 0, 6))
    rc = EXEC(s, "UPDATE oauth_codes SET used = $2 WHERE hash = $1 AND used IS NULL",
              &ch, hash, now);
  if (rc == 0 && ch != 1) {
    /* A second use: whoever holds the code may be an attacker, so the
     * connection it created (and every token of it) is revoked. */
    int rv = revoke_locked(s, conn, "system", "authorization code replayed");
    unlock(s);
    pmcp__db_res_free(r);
    return rv < 0 ? set_err(err, "server_error", 500, "the store failed")
                  : set_err(err, "invalid_grant", 400,
                            "the authorization code was already used; its connection is revoked");
  }
  const char *want_client = pmcp__db_get(r, 0, 1);
  const char *want_uri = pmcp__db_get(r, 0, 2);
  const char *challenge = pmcp__db_get(r, 0, 3);
  const char *want_res = pmcp__db_get(r, 0, 4);
  int fail = 0;
  if (rc)
    fail = set_err(err, "server_error", 500, "the store failed");
  else if (to_i64(pmcp__db_get(r, 0, 5)) <= t)
    fail = set_err(err, "invalid_grant", 400, "the authorization code has expired");
  else if (!client_id || !want_client || strcmp(client_id, want_client) != 0)
    fail = set_err(err, "invalid_grant", 400, "the authorization code was issued to another client");
  else if (!redirect_uri || !want_uri || strcmp(redirect_uri, want_uri) != 0)
    fail = set_err(err, "invalid_grant", 400, "redirect_uri does not match the authorization request");
  else if (!verifier || !pmcp_oauth_verifier_valid(verifier))
    fail = set_err(err, "invalid_grant", 400, "code_verifier is missing or malformed (43-128 unreserved characters)");
  else if (!pmcp_oauth_pkce_s256_ok(verifier, challenge))
    fail = set_err(err, "invalid_grant", 400, "code_verifier does not match the code_challenge");
  else if (resource && want_res && strcmp(resource, want_res) != 0)
    fail = set_err(err, "invalid_target", 400, "resource does not match the authorization request");
  if (!fail) {
    int live = conn_live(s, conn, level);
    if (live != 1)
      fail = set_err(err, "invalid_grant", 400, "the connection was revoked");
  }
  if (!fail && issue_locked(s, conn, want_client, want_res, level, out) != 0)
    fail = set_err(err, "server_error", 500, "could not issue tokens");
  unlock(s);
  pmcp__db_res_free(r);
  return fail;
}

int pmcp_oauth_refresh(pmcp_oauth *s, const char *refresh, const char *client_id,
                   const char *resource, pmcp_oauth_tokens *out, pmcp_oauth_err *err)
{
  char hash[PMCP_OAUTH_HASH_HEX], now[24], level[8] = "";
  if (tokens_start(out, err))
    return PMCP_EINVAL;
  if (!pmcp_oauth_token_shape_ok(refresh, PMCP_OAUTH_RT_PREFIX) || pmcp_oauth_token_hash(refresh, hash, sizeof hash))
    return set_err(err, "invalid_grant", 400, "the refresh token is malformed");
  pmcp__db_res *r = NULL;
  lock(s);
  int64_t t = pmcp_oauth_now_ms(s);
  i64(now, t);
  int rc = QUERY(s, "SELECT connection_id, client_id, resource, expires, rotated"
                    " FROM oauth_tokens WHERE hash = $1 AND kind = 'refresh'", &r, hash);
  if (rc || pmcp__db_nrows(r) != 1) {
    unlock(s);
    pmcp__db_res_free(r);
    return rc ? set_err(err, "server_error", 500, "the store failed")
              : set_err(err, "invalid_grant", 400, "unknown, expired or revoked refresh token");
  }
  char conn[40];
  copy(conn, sizeof conn, pmcp__db_get(r, 0, 0));
  const char *want_client = pmcp__db_get(r, 0, 1);
  const char *want_res = pmcp__db_get(r, 0, 2);
  int fail = 0;
  if (!client_id || !want_client || strcmp(client_id, want_client) != 0)
    fail = set_err(err, "invalid_grant", 400, "the refresh token was issued to another client");
  else if (to_i64(pmcp__db_get(r, 0, 3)) <= t)
    fail = set_err(err, "invalid_grant", 400, "the refresh token has expired");
  else if (resource && want_res && strcmp(resource, want_res) != 0)
    fail = set_err(err, "invalid_target", 400, "resource does not match the connection's");
  /* Before rotating: a refresh refused while the person is disabled (or
   * the connection revoked) must leave the token as it was, or the same
   * token tried again once enabled would look like a replay. */
  int live = fail ? 1 : conn_live(s, conn, level);
  if (!fail && live != 1)
    fail = live < 0 ? set_err(err, "server_error", 500, "the store failed")
                    : set_err(err, "invalid_grant", 400,
                              "the connection was revoked or its user is disabled");
  if (!fail) {
    int64_t ch = 0;
    if (!pmcp__db_get(r, 0, 4))
      rc = EXEC(s, "UPDATE oauth_tokens SET rotated = $2 WHERE hash = $1 AND rotated IS NULL",
                &ch, hash, now);
    if (rc)
      fail = set_err(err, "server_error", 500, "the store failed");
    else if (ch != 1) {
      /* A rotated token came back: it was copied. Revoke the connection. */
      fail = revoke_locked(s, conn, "system", "rotated refresh token reused") < 0
                 ? set_err(err, "server_error", 500, "the store failed")
                 : set_err(err, "invalid_grant", 400,
                           "the refresh token was already used; its connection is revoked");
    }
  }
  if (!fail && issue_locked(s, conn, want_client, want_res, level, out) != 0)
    fail = set_err(err, "server_error", 500, "could not issue tokens");
  unlock(s);
  pmcp__db_res_free(r);
  return fail;
}

int pmcp_oauth_revoke_token(pmcp_oauth *s, const char *token, const char *client_id)
{
  char hash[PMCP_OAUTH_HASH_HEX];
  int refresh = pmcp_oauth_token_shape_ok(token, PMCP_OAUTH_RT_PREFIX);
  if ((!refresh && !pmcp_oauth_token_shape_ok(token, PMCP_OAUTH_AT_PREFIX)) ||
      pmcp_oauth_token_hash(token, hash, sizeof hash))
    return 0; /* RFC 7009 2.2: an invalid token is not an error */
  pmcp__db_res *r = NULL;
  lock(s);
  int rc = QUERY(s, "SELECT connection_id, client_id FROM oauth_tokens WHERE hash = $1",
                 &r, hash);
  int other = 0;
  if (rc == 0 && pmcp__db_nrows(r) == 1 &&
      (!client_id || strcmp(client_id, pmcp__db_get(r, 0, 1) ? pmcp__db_get(r, 0, 1) : "") != 0))
    other = 1; /* issued to another client: refused, revokes nothing */
  else if (rc == 0 && pmcp__db_nrows(r) == 1) {
    if (refresh) {
      char conn[40];
      copy(conn, sizeof conn, pmcp__db_get(r, 0, 0));
      char actor[600];
      snprintf(actor, sizeof actor, "client:%.560s", client_id);
      int rv = revoke_locked(s, conn, actor, "refresh token revoked by the client (RFC 7009)");
      rc = rv < 0 ? rv : 0;
    } else {
      rc = EXEC(s, "DELETE FROM oauth_tokens WHERE hash = $1", NULL, hash);
    }
  }
  unlock(s);
  pmcp__db_res_free(r);
  return rc ? rc : other;
}

int pmcp_oauth_access_resolve(pmcp_oauth *s, const char *token, pmcp_oauth_principal *out)
{
  char hash[PMCP_OAUTH_HASH_HEX], now[24], stale[24];
  if (!VERSION_OK(out, PMCP_OAUTH_PRINCIPAL_VERSION))
    return PMCP_EINVAL;
  pmcp_oauth_principal_dispose(out);
  if (!pmcp_oauth_token_shape_ok(token, PMCP_OAUTH_AT_PREFIX) || pmcp_oauth_token_hash(token, hash, sizeof hash))
    return 0;
  pmcp__db_res *r = NULL;
  lock(s);
  int64_t t = pmcp_oauth_now_ms(s);
  i64(now, t);
  int rc = QUERY(s, "SELECT m.id, m.user_id, m.client_id, m.tenant_id, m.workspace, m.access"
                    " FROM oauth_tokens k JOIN mcp_connections m ON m.id = k.connection_id"
                    " JOIN users u ON u.id = m.user_id"
                    " WHERE k.hash = $1 AND k.kind = 'access' AND k.expires > $2"
                    " AND m.revoked IS NULL AND u.disabled = 0", &r, hash, now);
  int found = rc == 0 && pmcp__db_nrows(r) == 1;
  if (found) {
    const char *v[6];
    for (int i = 0; i < 6; i++)
      v[i] = pmcp__db_get(r, 0, i);
    const char **dst[6] = {&out->connection_id, &out->user_id, &out->client_id,
                           &out->tenant_id, &out->workspace, &out->access};
    if (!(out->pmcp__mem = pmcp__str_block(6, v, dst)))
      rc = PMCP_ENOMEM;
  }
  if (found && rc == 0) {
    /* last_used at most once a minute: a write per call would serialise
     * every MCP call on the store's writer lock. */
    i64(stale, t - 60000);
    EXEC(s, "UPDATE mcp_connections SET last_used = $2 WHERE id = $1 AND"
            " (last_used IS NULL OR last_used < $3)", NULL, out->connection_id, now, stale);
  }
  unlock(s);
  pmcp__db_res_free(r);
  return rc ? rc : found;
}
