/* SPDX-License-Identifier: MIT */
/* query_sql's login roles on PostgreSQL (pg_query.h): one role per query
 * connection, so readers cannot watch or signal each other.
 *
 * PostgreSQL lets a role see the query text of, cancel and terminate the
 * sessions of the roles it has the privileges of, and no others (short of
 * pg_read_all_stats / pg_signal_backend). Readers that share one role
 * therefore see and stop each other; readers that log in as roles of
 * their own, members of one NOLOGIN group holding the grants, do not:
 * being a member of the group gives a role the group's privileges, not
 * those of the group's other members.
 *
 * The roles belong to one store: probe_q_<tag> (the group) and
 * probe_q_<tag>_<1..PMCP__PGQ_ROLES> (LOGIN, CONNECTION LIMIT 1), <tag>
 * derived from the store's query_key, so stores of one cluster never share
 * them. Each login role's password is derived from the same key, which
 * only the store's own roles read: the server computes it, nobody types
 * it. CONNECTION LIMIT 1 makes a role one connection's across every
 * replica of the store: a replica opening a query connection takes the
 * first free role, and one whose role is in use elsewhere is refused by
 * PostgreSQL itself and tries the next.
 *
 * Creating roles takes CREATEROLE (or a superuser): the migration and
 * `probe init` make them when the owner has it, and otherwise leave the
 * store with the shared role probe_reader, as before (README.md). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "store/pg.h"
#include "store/pg_query.h"

/* The roles' names and passwords, as the DO block below makes them. */
#define TAG_SALT "probe-reader-role"
#define PASS_SALT "reader-password/"

static const char roles_ddl[] =
  "DO $r$ DECLARE k bytea; grp text; q text; r text; n int := %d; BEGIN"
  " IF NOT (SELECT rolcreaterole OR rolsuper FROM pg_roles WHERE rolname = current_user)"
  "  THEN RETURN; END IF;"
  " SELECT value INTO k FROM secrets WHERE name = 'query_key';"
  " IF k IS NULL THEN RETURN; END IF;"
  " grp := 'probe_q_' || left(encode(sha256(k || convert_to('" TAG_SALT "', 'UTF8')), 'hex'), 12);"
  " q := current_schema() || '_sql';"
  /* done already (the common case): the group reads the views and every
   * login role is its member */
  " IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = grp)"
  "  AND has_schema_privilege(grp, q, 'USAGE') AND (SELECT count(*) FROM pg_auth_members m"
  "  JOIN pg_roles u ON u.oid = m.member WHERE m.roleid = (SELECT oid FROM pg_roles"
  "  WHERE rolname = grp) AND u.rolcanlogin AND u.rolconnlimit = 1) >= n"
  "  THEN RETURN; END IF;"
  " BEGIN EXECUTE format('CREATE ROLE %%I NOLOGIN', grp);"
  "  EXCEPTION WHEN duplicate_object THEN NULL; END;"
  " EXECUTE format('GRANT USAGE ON SCHEMA %%I TO %%I', q, grp);"
  " EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %%I TO %%I', q, grp);"
  " EXECUTE format('GRANT EXECUTE ON FUNCTION %%I.probe_query_scope() TO %%I',"
  "  current_schema(), grp);"
  " FOR i IN 1..n LOOP"
  "  r := grp || '_' || i;"
  "  BEGIN EXECUTE format('CREATE ROLE %%I LOGIN INHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE"
  "   NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 1 PASSWORD %%L', r,"
  "   encode(sha256(k || convert_to('" PASS_SALT "' || r, 'UTF8') || k), 'hex'));"
  "  EXCEPTION WHEN duplicate_object THEN NULL; END;"
  "  EXECUTE format('GRANT %%I TO %%I', grp, r);"
  " END LOOP;"
  " END $r$;";

int pmcp__pgq_roles(pmcp_store *s, pmcp__pg *g)
{
  char sql[sizeof roles_ddl + 16];
  snprintf(sql, sizeof sql, roles_ddl, PMCP__PGQ_ROLES);
  return pmcp__pg_exec(s, g, sql);
}

void pmcp__pgq_derive(const unsigned char *key, size_t klen, const char *text, int wrap,
                      char out[65])
{
  unsigned char md[32];
  unsigned int mdlen = 0;
  EVP_MD_CTX *c = EVP_MD_CTX_new();
  EVP_DigestInit_ex(c, EVP_sha256(), NULL);
  EVP_DigestUpdate(c, key, klen);
  EVP_DigestUpdate(c, text, strlen(text));
  if (wrap)
    EVP_DigestUpdate(c, key, klen);
  EVP_DigestFinal_ex(c, md, &mdlen);
  EVP_MD_CTX_free(c);
  for (int i = 0; i < 32; i++)
    snprintf(out + 2 * i, 3, "%02x", md[i]);
}

void pmcp__pgq_group(const unsigned char *key, size_t klen, char out[24])
{
  char hex[65];
  pmcp__pgq_derive(key, klen, TAG_SALT, 0, hex);
  snprintf(out, 24, "probe_q_%.12s", hex);
}

static PGconn *connect_as(const char *conninfo, const char *options, const char *user,
                          const char *password)
{
  /* Bounded like the store's own connection (pg_conn.c): the URL's
   * connect_timeout, else PGCONNECT_TIMEOUT, else 10 s. Later keywords
   * override the URL's (dbname is expanded first). */
  const char *tmo = getenv("PGCONNECT_TIMEOUT");
  const char *kw[] = {"connect_timeout", "dbname", "user", "options", "application_name",
                      password ? "password" : NULL, NULL};
  const char *vals[] = {tmo && *tmo ? tmo : "10", conninfo, user, options,
                        "probe-mcp query_sql", password, NULL};
  return PQconnectdbParams(kw, vals, 1);
}

/* Where the next connection starts looking: processes (replicas) and
 * connections spread over the roles, so opening rarely meets a taken one. */
static atomic_uint next_role;

PGconn *pmcp__pgq_login(const char *conninfo, const char *options, const char *group,
                        const unsigned char *key, size_t klen, char *err, size_t errlen)
{
  if (!group) {
    const char *user = getenv("PROBE_PG_QUERY_USER");
    if (!user || !*user)
      user = "probe_reader";
    PGconn *c = connect_as(conninfo, options, user, NULL);
    if (c && PQstatus(c) == CONNECTION_OK)
      return c;
    /* The role hint only when the role is what is missing; libpq's text
     * itself names the server's socket or host, so it is not passed on. */
    const char *m = c ? PQerrorMessage(c) : "";
    if (strstr(m, "role \"") && strstr(m, "does not exist"))
      snprintf(err, errlen, "query_sql cannot log in as its read-only role '%s' (create it: "
               "CREATE ROLE %s LOGIN, then run 'probe init')", user, user);
    else if (strstr(m, "authentication failed") || strstr(m, "no password supplied") ||
             strstr(m, "pg_hba.conf"))
      snprintf(err, errlen, "query_sql's read-only role '%s' may not log in to the store's "
               "database (check its password and pg_hba.conf)", user);
    else
      snprintf(err, errlen, "the store's database cannot be reached");
    if (c)
      PQfinish(c);
    return NULL;
  }
  unsigned start = atomic_fetch_add(&next_role, 1) + (unsigned)getpid() * 7u;
  for (int i = 0; i < PMCP__PGQ_ROLES; i++) {
    char user[40], salted[64], password[65];
    snprintf(user, sizeof user, "%s_%u", group, (start + (unsigned)i) % PMCP__PGQ_ROLES + 1);
    snprintf(salted, sizeof salted, PASS_SALT "%s", user);
    pmcp__pgq_derive(key, klen, salted, 1, password);
    PGconn *c = connect_as(conninfo, options, user, password);
    OPENSSL_cleanse(password, sizeof password);
    if (c && PQstatus(c) == CONNECTION_OK)
      return c;
    const char *m = c ? PQerrorMessage(c) : "";
    int taken = strstr(m, "too many connections for role") != NULL;
    if (!taken) {
      if (strstr(m, "authentication failed") || strstr(m, "no password supplied") ||
          strstr(m, "pg_hba.conf"))
        snprintf(err, errlen, "query_sql's read-only role '%s' may not log in to the store's "
                 "database (check pg_hba.conf: it logs in with a password)", user);
      else if (strstr(m, "does not exist") || strstr(m, "not permitted to log in"))
        snprintf(err, errlen, "query_sql's read-only role '%s' is missing or cannot log in "
                 "(run 'probe init' as the schema's owner)", user);
      else
        snprintf(err, errlen, "the store's database cannot be reached");
    }
    if (c)
      PQfinish(c);
    if (!taken)
      return NULL;
  }
  snprintf(err, errlen, "busy: every query_sql reader role of the store (%d) is in use; retry "
           "in a few seconds", PMCP__PGQ_ROLES);
  return NULL;
}
