/* SPDX-License-Identifier: MIT */
/* The auth module over a real store: passwords (PBKDF2), API keys (shape,
 * hash, revocation, tampering), principals of keys and OAuth connections
 * re-read from the store (disabled users, changed and removed roles,
 * workspaces of another tenant), and the audit log with its masking. */
#include <time.h>

#include "store-test-util.h"

#include "auth/auth.h"
#include "store/db.h"

START_TEST(passwords)
{
  pmcp_buf h = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp__password_hash(&h, "correct horse", 10000), 0);
  ck_assert_ptr_nonnull(strstr(h.ptr, "pbkdf2-sha256$10000$"));
  ck_assert_ptr_null(strstr(h.ptr, "correct"));
  ck_assert(pmcp__password_verify(h.ptr, "correct horse"));
  ck_assert(!pmcp__password_verify(h.ptr, "correct horsf"));
  ck_assert(!pmcp__password_verify(h.ptr, ""));
  /* Same password, new salt: a different string. */
  pmcp_buf h2 = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp__password_hash(&h2, "correct horse", 10000), 0);
  ck_assert_str_ne(h.ptr, h2.ptr);
  /* Tampered strings never verify: hash, salt, count, truncation. */
  char t[256];
  snprintf(t, sizeof t, "%s", h.ptr);
  t[strlen(t) - 2] = t[strlen(t) - 2] == 'A' ? 'B' : 'A';
  ck_assert(!pmcp__password_verify(t, "correct horse"));
  snprintf(t, sizeof t, "%s", h.ptr);
  t[strlen(t) - 1] = '\0';
  ck_assert(!pmcp__password_verify(t, "correct horse"));
  snprintf(t, sizeof t, "%s", h.ptr);
  char *salt = strchr(t + 14, '$') + 1;
  salt[0] = salt[0] == 'A' ? 'B' : 'A';
  ck_assert(!pmcp__password_verify(t, "correct horse"));
  ck_assert(!pmcp__password_verify("pbkdf2-sha256$1$AAAA$AAAA", "x"));
  ck_assert(!pmcp__password_verify("plain", "plain"));
  ck_assert(!pmcp__password_verify(NULL, "x"));
  ck_assert_int_eq(pmcp__password_hash(&h2, "", 0), PMCP_EINVAL);
  /* No stored string (an unknown user) costs a derivation at the default
   * count, 60 times a 10,000-count check: the OAuth sign-in passes NULL
   * for unknown names. Measured in this thread's CPU time, not wall time. */
  struct timespec a, b, c;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  ck_assert(pmcp__password_verify(h.ptr, "correct horse"));
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  ck_assert(!pmcp__password_verify(NULL, "correct horse"));
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
  double known = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
  double unknown = (double)(c.tv_sec - b.tv_sec) + (double)(c.tv_nsec - b.tv_nsec) / 1e9;
  ck_assert_msg(unknown > 10 * known, "unknown user %.4f s, known %.4f s", unknown, known);
  pmcp_buf_dispose(&h);
  pmcp_buf_dispose(&h2);
}
END_TEST

static void make_key(pmcp_store *s, pmcp_tenant t, const char *ws, int write, pmcp_buf *secret,
                     pmcp_buf *id)
{
  ST_OK(s, pmcp_key_create(s, t, ws, write, "test", "cli:tester", "cli", secret, id));
}

START_TEST(keys)
{
  pmcp_tenant a, b;
  pmcp_store *s = st_open_new(&a);
  ST_OK(s, pmcp_store_tenant(s, "lab-b", PMCP_STORE_CREATE, &b));
  pmcp_buf sa = PMCP_BUF_INIT, ia = PMCP_BUF_INIT, sb = PMCP_BUF_INIT, ib = PMCP_BUF_INIT;
  make_key(s, a, "default", 0, &sa, &ia);
  make_key(s, b, "default", 1, &sb, &ib);
  ck_assert_uint_eq(sa.len, 46);
  ck_assert(strncmp(sa.ptr, "pk_", 3) == 0);
  /* Only the hash is stored. */
  pmcp__db_res *r = NULL;
  ST_OK(s, pmcp__db_query(s, "SELECT hash, prefix FROM api_keys WHERE id = $1", 1,
                          (const char *[]){ia.ptr}, &r));
  ck_assert_uint_eq(strlen(pmcp__db_get(r, 0, 0)), 64);
  ck_assert_ptr_null(strstr(pmcp__db_get(r, 0, 0), sa.ptr + 3));
  ck_assert_uint_eq(strlen(pmcp__db_get(r, 0, 1)), 10);
  pmcp__db_res_free(r);
  pmcp_principal p = PMCP_PRINCIPAL_INIT;
  ST_OK(s, pmcp_principal_of_key(s, sa.ptr, sa.len, &p));
  ck_assert_int_eq(p.kind, PMCP_PRINCIPAL_KEY);
  ck_assert_int_eq(p.tenant_id, a.id);
  ck_assert_str_eq(p.tenant, "default");
  ck_assert_str_eq(p.workspace, "default");
  ck_assert_int_eq(p.write, 0);
  ck_assert(!pmcp_principal_can_write(&p));
  ck_assert(!pmcp__principal_admin(&p));
  ST_OK(s, pmcp_principal_of_key(s, sb.ptr, sb.len, &p));
  ck_assert_int_eq(p.tenant_id, b.id);
  ck_assert(pmcp_principal_can_write(&p));
  ck_assert(!pmcp__principal_admin(&p));  /* keys never pass admin gates */
  /* A key never leaves its workspace. */
  ST_RC(s, pmcp_principal_in_workspace(s, &p, "other"), PMCP_EDENIED);
  /* Tampered, truncated, extended, foreign: one answer for all. */
  char t[64];
  const char *msg0 = NULL;
  for (int i = 0; i < 6; i++) {
    snprintf(t, sizeof t, "%s", sa.ptr);
    size_t n = sa.len;
    if (i == 0) t[10] = t[10] == 'A' ? 'B' : 'A';
    if (i == 1) n = 45;
    if (i == 2) { t[46] = 'A'; t[47] = '\0'; n = 47; }
    if (i == 3) t[0] = 'P';
    if (i == 4) t[20] = '+';
    if (i == 5) n = 3;
    ST_RC(s, pmcp_principal_of_key(s, t, n, &p), PMCP_EDENIED);
    if (!msg0)
      msg0 = strdup(pmcp_store_errmsg(s));
    else
      ck_assert_str_eq(pmcp_store_errmsg(s), msg0);
  }
  ST_RC(s, pmcp_principal_of_key(s, NULL, 0, &p), PMCP_EDENIED);
  /* Revocation: the next resolution fails with the same message; a key of
   * another tenant cannot be revoked from here (and is not revealed). */
  ST_RC(s, pmcp_key_revoke(s, a, ib.ptr, "cli:tester", "cli"), PMCP_ENOTFOUND);
  ST_OK(s, pmcp_principal_of_key(s, sb.ptr, sb.len, &p));
  ST_OK(s, pmcp_key_revoke(s, a, ia.ptr, "cli:tester", "cli"));
  ST_RC(s, pmcp_principal_of_key(s, sa.ptr, sa.len, &p), PMCP_EDENIED);
  ck_assert_str_eq(pmcp_store_errmsg(s), msg0);
  ST_RC(s, pmcp_key_revoke(s, a, ia.ptr, "cli:tester", "cli"), PMCP_ENOTFOUND);
  free((void *)msg0);
  pmcp_principal_dispose(&p);
  /* Lists are per tenant. */
  pmcp_buf l = PMCP_BUF_INIT;
  ST_OK(s, pmcp_key_list(s, a, &l));
  ck_assert_ptr_nonnull(strstr(l.ptr, ia.ptr));
  ck_assert_ptr_null(strstr(l.ptr, ib.ptr));
  ck_assert_ptr_null(strstr(l.ptr, sa.ptr));
  ck_assert_ptr_nonnull(strstr(l.ptr, "\"revoked\":1"));
  pmcp_buf_dispose(&l);
  /* A workspace the tenant does not have. */
  pmcp_buf x = PMCP_BUF_INIT;
  ST_RC(s, pmcp_key_create(s, a, "nope", 0, NULL, "cli:t", "cli", &x, NULL), PMCP_ENOTFOUND);
  ck_assert_uint_eq(x.len, 0);
  /* Audit: creations and the revocation, secrets never in the details. */
  pmcp_audit_query q = {PMCP_AUDIT_QUERY_VERSION, 0, "api_key.", 0, 0};
  ST_OK(s, pmcp_audit_list(s, &q, &l));
  ck_assert_ptr_nonnull(strstr(l.ptr, "api_key.create"));
  ck_assert_ptr_nonnull(strstr(l.ptr, "api_key.revoke"));
  ck_assert_ptr_null(strstr(l.ptr, sa.ptr));
  ck_assert_ptr_null(strstr(l.ptr, sb.ptr));
  pmcp_buf_dispose(&l);
  q.tenant_id = b.id;
  ST_OK(s, pmcp_audit_list(s, &q, &l));
  ck_assert_ptr_null(strstr(l.ptr, ia.ptr));
  ck_assert_ptr_nonnull(strstr(l.ptr, ib.ptr));
  pmcp_buf_dispose(&l);
  pmcp_buf_dispose(&sa);
  pmcp_buf_dispose(&ia);
  pmcp_buf_dispose(&sb);
  pmcp_buf_dispose(&ib);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* A key is checked at once while another writer holds a SQLite store (an
 * import): its best-effort last_used write does not wait. */
START_TEST(key_while_store_held)
{
  ST_SQLITE_ONLY(); /* SQLite's single writer */
  pmcp_tenant a;
  pmcp_store *s = st_open_new(&a);
  pmcp_buf sa = PMCP_BUF_INIT, ia = PMCP_BUF_INIT;
  make_key(s, a, "default", 0, &sa, &ia);
  pmcp_store *w = NULL;
  ST_OK(w, pmcp_store_open(&w, st_path, 0));
  ST_OK(w, pmcp_store_begin(w));
  pmcp_tenant wt;
  ST_OK(w, pmcp_store_tenant(w, "held", PMCP_STORE_CREATE, &wt)); /* takes the write lock */
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pmcp_principal p = PMCP_PRINCIPAL_INIT;
  ST_OK(s, pmcp_principal_of_key(s, sa.ptr, sa.len, &p));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  ck_assert_msg(took < 1.0, "key check took %.2f s while the store was held", took);
  ck_assert_int_eq(p.tenant_id, a.id);
  pmcp_principal_dispose(&p);
  ST_OK(w, pmcp_store_rollback(w));
  pmcp_store_free(w);
  pmcp_buf_dispose(&sa);
  pmcp_buf_dispose(&ia);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

/* A key checked again after another handle (another process, in effect)
 * changed what it grants or revoked it: the next check sees the store as
 * it is, never an earlier answer; several keys checked in turn on one
 * handle each get their own principal. */
START_TEST(key_changed_elsewhere)
{
  pmcp_tenant a;
  pmcp_store *s = st_open_new(&a);
  pmcp_buf sa = PMCP_BUF_INIT, ia = PMCP_BUF_INIT;
  make_key(s, a, "default", 0, &sa, &ia);
  pmcp_store *w = NULL;
  ST_OK(w, pmcp_store_open(&w, st_path, 0));
  pmcp_principal p = PMCP_PRINCIPAL_INIT;
  for (int i = 0; i < 3; i++) {
    ST_OK(s, pmcp_principal_of_key(s, sa.ptr, sa.len, &p));
    ck_assert_int_eq(p.write, 0);
  }
  ST_OK(w, pmcp__db_exec(w, "UPDATE api_keys SET scope = 'write' WHERE id = $1", 1,
                         (const char *[]){ia.ptr}, NULL));
  ST_OK(s, pmcp_principal_of_key(s, sa.ptr, sa.len, &p));
  ck_assert_int_eq(p.write, 1);
  ST_OK(w, pmcp__db_exec(w, "UPDATE api_keys SET workspace = 'moved' WHERE id = $1", 1,
                         (const char *[]){ia.ptr}, NULL));
  ST_OK(s, pmcp_principal_of_key(s, sa.ptr, sa.len, &p));
  ck_assert_str_eq(p.workspace, "moved");
  ST_OK(w, pmcp_key_revoke(w, a, ia.ptr, "cli:tester", "cli"));
  ST_RC(s, pmcp_principal_of_key(s, sa.ptr, sa.len, &p), PMCP_EDENIED);
  ST_RC(s, pmcp_principal_of_key(s, sa.ptr, sa.len, &p), PMCP_EDENIED);
  /* more keys than a handle keeps: each check answers for its own key */
  enum { N = 7 };
  pmcp_buf sk[N], ik[N];
  for (int i = 0; i < N; i++) {
    sk[i] = (pmcp_buf)PMCP_BUF_INIT;
    ik[i] = (pmcp_buf)PMCP_BUF_INIT;
    make_key(s, a, "default", i % 2, &sk[i], &ik[i]);
  }
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < N; i++) {
      int k = (i * 3 + round) % N;
      ST_OK(s, pmcp_principal_of_key(s, sk[k].ptr, sk[k].len, &p));
      ck_assert_str_eq(p.id, ik[k].ptr);
      ck_assert_int_eq(p.write, k % 2);
    }
  /* revoked on the checking handle itself */
  ST_OK(s, pmcp_key_revoke(s, a, ik[3].ptr, "cli:tester", "cli"));
  ST_RC(s, pmcp_principal_of_key(s, sk[3].ptr, sk[3].len, &p), PMCP_EDENIED);
  ST_OK(s, pmcp_principal_of_key(s, sk[4].ptr, sk[4].len, &p));
  pmcp_principal_dispose(&p);
  for (int i = 0; i < N; i++) {
    pmcp_buf_dispose(&sk[i]);
    pmcp_buf_dispose(&ik[i]);
  }
  pmcp_store_free(w);
  pmcp_buf_dispose(&sa);
  pmcp_buf_dispose(&ia);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(users_and_connections)
{
  pmcp_tenant a, b;
  pmcp_store *s = st_open_new(&a);
  ST_OK(s, pmcp_store_tenant(s, "lab-b", PMCP_STORE_CREATE, &b));
  pmcp_entity_spec ws = PMCP_ENTITY_SPEC_INIT;
  ws.name = "vision";
  ST_OK(s, pmcp_store_create(s, a, "workspace", &ws, NULL));
  pmcp_buf uid = PMCP_BUF_INIT;
  ST_OK(s, pmcp_user_create(s, "ada", "Ada", "s3cret-pw", "cli:t", "cli", &uid));
  ST_RC(s, pmcp_user_create(s, "ada", NULL, "x", "cli:t", "cli", NULL), PMCP_EEXIST);
  ST_RC(s, pmcp_user_create(s, "bad name", NULL, "x", "cli:t", "cli", NULL), PMCP_EINVAL);
  char id[64];
  ST_OK(s, pmcp__user_check_password(s, "ada", "s3cret-pw", id));
  ck_assert_str_eq(id, uid.ptr);
  ST_RC(s, pmcp__user_check_password(s, "ada", "wrong", id), PMCP_EDENIED);
  const char *m1 = strdup(pmcp_store_errmsg(s));
  ST_RC(s, pmcp__user_check_password(s, "nobody", "wrong", id), PMCP_EDENIED);
  ck_assert_str_eq(pmcp_store_errmsg(s), m1);
  free((void *)m1);
  ST_OK(s, pmcp_user_set_role(s, "ada", a, "default", PMCP_ROLE_EDITOR, "cli:t", "cli"));
  ST_OK(s, pmcp_user_set_role(s, "ada", a, "vision", PMCP_ROLE_VIEWER, "cli:t", "cli"));
  ST_RC(s, pmcp_user_set_role(s, "ada", b, "vision", PMCP_ROLE_VIEWER, "cli:t", "cli"),
        PMCP_ENOTFOUND);
  /* A connection as the oauth code makes it. */
  char tid[24];
  snprintf(tid, sizeof tid, "%lld", (long long)a.id);
  ST_OK(s, pmcp__db_exec(s, "INSERT INTO mcp_connections(id, user_id, client_id, tenant_id,"
                            " workspace, access, created) VALUES('conn_1', $1, 'c', $2,"
                            " 'default', 'write', 1)", 2, (const char *[]){uid.ptr, tid}, NULL));
  pmcp_principal p = PMCP_PRINCIPAL_INIT;
  ST_OK(s, pmcp_principal_of_connection(s, "conn_1", &p));
  ck_assert_int_eq(p.kind, PMCP_PRINCIPAL_CONNECTION);
  ck_assert_str_eq(p.user_name, "ada");
  ck_assert_str_eq(p.actor, "user:ada");
  ck_assert_int_eq(p.role, PMCP_ROLE_EDITOR);
  ck_assert(pmcp_principal_can_write(&p));
  ck_assert(!pmcp__principal_admin(&p));
  /* Another workspace the person belongs to: viewer there. */
  pmcp_principal q = PMCP_PRINCIPAL_INIT;
  ST_OK(s, pmcp_principal_copy(&q, &p));
  ck_assert_ptr_ne(q.id, p.id); /* a copy of its own */
  ST_OK(s, pmcp_principal_in_workspace(s, &q, "vision"));
  ck_assert_int_eq(q.role, PMCP_ROLE_VIEWER);
  ck_assert_str_eq(q.workspace, "vision");
  ck_assert_str_eq(q.actor, "user:ada");
  ck_assert_str_eq(p.workspace, "default"); /* the original is untouched */
  ck_assert(!pmcp_principal_can_write(&q));
  ST_OK(s, pmcp_principal_copy(&q, &p));
  ST_RC(s, pmcp_principal_in_workspace(s, &q, "nowhere"), PMCP_EDENIED);
  ck_assert_str_eq(q.workspace, "default");
  pmcp_principal_dispose(&q);
  ck_assert_ptr_null(q.id);
  ck_assert_uint_eq(q.version, PMCP_PRINCIPAL_VERSION);
  /* A version the library does not know is refused, never half-filled. */
  pmcp_principal bad = PMCP_PRINCIPAL_INIT;
  bad.version = 0;
  ck_assert_int_eq(pmcp_principal_of_connection(s, "conn_1", &bad), PMCP_EINVAL);
  bad.version = PMCP_PRINCIPAL_VERSION + 1;
  ck_assert_int_eq(pmcp_principal_of_connection(s, "conn_1", &bad), PMCP_EINVAL);
  ck_assert_int_eq(pmcp_principal_copy(&bad, &p), PMCP_EINVAL);
  ck_assert_ptr_null(bad.id);
  /* Role changes take effect at the next resolution. */
  ST_OK(s, pmcp_user_set_role(s, "ada", a, "default", PMCP_ROLE_ADMIN, "cli:t", "cli"));
  ST_OK(s, pmcp_principal_of_connection(s, "conn_1", &p));
  ck_assert(pmcp__principal_admin(&p));
  ST_OK(s, pmcp_user_set_role(s, "ada", a, "default", PMCP_ROLE_VIEWER, "cli:t", "cli"));
  ST_OK(s, pmcp_principal_of_connection(s, "conn_1", &p));
  ck_assert(!pmcp_principal_can_write(&p));
  ST_OK(s, pmcp_user_set_role(s, "ada", a, "default", PMCP_ROLE_NONE, "cli:t", "cli"));
  ST_RC(s, pmcp_principal_of_connection(s, "conn_1", &p), PMCP_EDENIED);
  ST_OK(s, pmcp_user_set_role(s, "ada", a, "default", PMCP_ROLE_EDITOR, "cli:t", "cli"));
  ST_OK(s, pmcp_principal_of_connection(s, "conn_1", &p));
  /* A disabled person: refused, then back. */
  ST_OK(s, pmcp_user_disable(s, "ada", 1, "cli:t", "cli"));
  ST_RC(s, pmcp_principal_of_connection(s, "conn_1", &p), PMCP_EDENIED);
  ST_RC(s, pmcp__user_check_password(s, "ada", "s3cret-pw", id), PMCP_EDENIED);
  ST_OK(s, pmcp_user_disable(s, "ada", 0, "cli:t", "cli"));
  ST_OK(s, pmcp_principal_of_connection(s, "conn_1", &p));
  /* New password: the old one stops working. */
  ST_OK(s, pmcp_user_passwd(s, "ada", "n3w-pw", "cli:t", "cli"));
  ST_RC(s, pmcp__user_check_password(s, "ada", "s3cret-pw", id), PMCP_EDENIED);
  ST_OK(s, pmcp__user_check_password(s, "ada", "n3w-pw", id));
  ST_RC(s, pmcp_user_passwd(s, "nobody", "x", "cli:t", "cli"), PMCP_ENOTFOUND);
  /* A revoked connection. */
  ST_OK(s, pmcp__db_exec(s, "UPDATE mcp_connections SET revoked = 5 WHERE id = 'conn_1'", 0,
                         NULL, NULL));
  ST_RC(s, pmcp_principal_of_connection(s, "conn_1", &p), PMCP_EDENIED);
  ST_RC(s, pmcp_principal_of_connection(s, "conn_x", &p), PMCP_EDENIED);
  pmcp_principal_dispose(&p);
  /* Listing: passwords never appear. */
  pmcp_buf l = PMCP_BUF_INIT;
  ST_OK(s, pmcp_user_list(s, (pmcp_tenant){0}, &l));
  ck_assert_ptr_nonnull(strstr(l.ptr, "\"vision\""));
  ck_assert_ptr_null(strstr(l.ptr, "pbkdf2"));
  pmcp_buf_dispose(&l);
  ST_OK(s, pmcp_user_list(s, b, &l));
  ck_assert_str_eq(l.ptr, "[]");
  pmcp_buf_dispose(&l);
  pmcp_audit_query aq = {PMCP_AUDIT_QUERY_VERSION, 0, "user.*", 0, 0};
  ST_OK(s, pmcp_audit_list(s, &aq, &l));
  ck_assert_ptr_nonnull(strstr(l.ptr, "user.disable"));
  ck_assert_ptr_nonnull(strstr(l.ptr, "user.passwd"));
  ck_assert_ptr_null(strstr(l.ptr, "n3w-pw"));
  pmcp_buf_dispose(&l);
  pmcp_buf_dispose(&uid);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

START_TEST(audit_mask)
{
  pmcp_buf m = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp__audit_mask(&m,
      "{\"client_secret\":\"abc\",\"Password\":\"p\",\"key\":\"k\",\"key_id\":\"key_1\","
      "\"nested\":{\"access_token\":\"t\",\"list\":[\"pk_live\",\"ok\"]},\"note\":\"pbm_at_x\","
      "\"code_verifier\":\"v\",\"Authorization\":\"Bearer x\",\"tool\":\"delete_run\"}"), 0);
  ck_assert_ptr_null(strstr(m.ptr, "abc"));
  ck_assert_ptr_null(strstr(m.ptr, "\"p\""));
  ck_assert_ptr_null(strstr(m.ptr, "\"t\""));
  ck_assert_ptr_null(strstr(m.ptr, "pk_live"));
  ck_assert_ptr_null(strstr(m.ptr, "pbm_at_x"));
  /* A public client's id is no secret: it stays readable. */
  pmcp_buf c = PMCP_BUF_INIT;
  ck_assert_int_eq(pmcp__audit_mask(&c, "{\"client_id\":\"pbm_client_abc\",\"x\":\"pbm_rt_y\"}"), 0);
  ck_assert_ptr_nonnull(strstr(c.ptr, "pbm_client_abc"));
  ck_assert_ptr_null(strstr(c.ptr, "pbm_rt_y"));
  pmcp_buf_dispose(&c);
  ck_assert_ptr_null(strstr(m.ptr, "Bearer"));
  ck_assert_ptr_nonnull(strstr(m.ptr, "\"key_id\":\"key_1\""));
  ck_assert_ptr_nonnull(strstr(m.ptr, "\"tool\":\"delete_run\""));
  ck_assert_ptr_nonnull(strstr(m.ptr, "\"ok\""));
  ck_assert_ptr_nonnull(strstr(m.ptr, "\"client_secret\":\"***\""));
  pmcp_buf_dispose(&m);
  /* A name given twice: both values masked (a by-name replacement looped
   * here), and a name too long to read whole is masked. */
  ck_assert_int_eq(pmcp__audit_mask(&m,
      "{\"token\":\"s1\",\"run\":\"r\",\"token\":\"s2\",\"o\":[{\"code\":\"c1\",\"code\":\"c2\"}],"
      "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa_password\":\"lp\"}"), 0);
  ck_assert_ptr_null(strstr(m.ptr, "s1"));
  ck_assert_ptr_null(strstr(m.ptr, "s2"));
  ck_assert_ptr_null(strstr(m.ptr, "c1"));
  ck_assert_ptr_null(strstr(m.ptr, "c2"));
  ck_assert_ptr_null(strstr(m.ptr, "lp"));
  ck_assert_ptr_nonnull(strstr(m.ptr, "\"run\":\"r\""));
  pmcp_buf_dispose(&m);
  ck_assert_int_eq(pmcp__audit_mask(&m, "[1]"), PMCP_EINVAL);
  ck_assert_int_eq(pmcp__audit_mask(&m, "{bad"), PMCP_EINVAL);
  pmcp_buf_dispose(&m);
  /* No details: an empty object. Others as written, only secrets masked. */
  ck_assert_int_eq(pmcp__audit_mask(&m, NULL), 0);
  ck_assert_str_eq(m.ptr, "{}");
  pmcp_buf_dispose(&m);
  ck_assert_int_eq(pmcp__audit_mask(&m, "{\"n\": 1000000, \"x\": 0.1, \"s\": \"a\\u0001\u00e9\","
                                        " \"pin\": 7, \"l\": [true, null]}"),
                   0);
  ck_assert_str_eq(m.ptr, "{\"n\":1000000,\"x\":0.1,\"s\":\"a\\u0001\u00e9\",\"pin\":\"***\","
                          "\"l\":[true,null]}");
  pmcp_buf_dispose(&m);
  /* Stored masked; refused without actor; time filter. */
  pmcp_tenant t;
  pmcp_store *s = st_open_new(&t);
  ST_OK(s, pmcp_audit_add(s, t, "default", "key:k1", "run.delete", "mcp",
                       "{\"token\":\"pbm_at_secret\",\"run\":\"r1\"}"));
  ST_RC(s, pmcp_audit_add(s, t, NULL, "", "x", "mcp", NULL), PMCP_EINVAL);
  pmcp_audit_query q = {PMCP_AUDIT_QUERY_VERSION, 0, "run.delete", 0, 0};
  ST_OK(s, pmcp_audit_list(s, &q, &m));
  ck_assert_ptr_nonnull(strstr(m.ptr, "\"token\":\"***\""));
  ck_assert_ptr_nonnull(strstr(m.ptr, "\"via\":\"mcp\""));
  ck_assert_ptr_null(strstr(m.ptr, "pbm_at_secret"));
  pmcp_buf_dispose(&m);
  q.since_ms = INT64_C(4102444800000); /* 2100 */
  ST_OK(s, pmcp_audit_list(s, &q, &m));
  ck_assert_str_eq(m.ptr, "[]");
  pmcp_buf_dispose(&m);
  /* A LIKE wildcard in the filter is literal. */
  pmcp_audit_query q2 = {PMCP_AUDIT_QUERY_VERSION, 0, "run%", 0, 0};
  ST_OK(s, pmcp_audit_list(s, &q2, &m));
  ck_assert_str_eq(m.ptr, "[]");
  pmcp_buf_dispose(&m);
  pmcp_store_free(s);
  st_cleanup();
}
END_TEST

int main(void)
{
  Suite *su = suite_create("auth");
  TCase *tc = tcase_create("auth");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, passwords);
  tcase_add_test(tc, keys);
  tcase_add_test(tc, key_while_store_held);
  tcase_add_test(tc, key_changed_elsewhere);
  tcase_add_test(tc, users_and_connections);
  tcase_add_test(tc, audit_mask);
  suite_add_tcase(su, tc);
  return st_run_suite(su);
}
