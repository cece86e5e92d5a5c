/* SPDX-License-Identifier: MIT */
/* The private test cluster (tests/pg/pgctl.sh) is what the PostgreSQL
 * tests assume: the owner role can create schemas, and the service role is
 * neither a superuser nor allowed to bypass row-level security. Skips
 * (77) without PROBE_TEST_PG_URL unless PMCP_TEST_STRICT is set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

static int strict(void)
{
  const char *v = getenv("PMCP_TEST_STRICT");
  return v && *v && strcmp(v, "0") != 0;
}

static int check_role(const char *url, const char *want_user, int want_service)
{
  PGconn *c = PQconnectdb(url);
  if (PQstatus(c) != CONNECTION_OK) {
    fprintf(stderr, "connect %s: %s", want_user, PQerrorMessage(c));
    PQfinish(c);
    return 1;
  }
  PGresult *r = PQexec(c, "SELECT current_user, rolsuper, rolbypassrls, rolcreaterole"
                          " FROM pg_roles WHERE rolname = current_user");
  int bad = PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1;
  if (!bad) {
    bad |= strcmp(PQgetvalue(r, 0, 0), want_user) != 0;
    bad |= strcmp(PQgetvalue(r, 0, 1), "f") != 0;          /* never a superuser */
    if (want_service)
      bad |= strcmp(PQgetvalue(r, 0, 2), "f") != 0 ||      /* RLS applies */
             strcmp(PQgetvalue(r, 0, 3), "f") != 0;
    if (bad)
      fprintf(stderr, "role %s: super=%s bypassrls=%s createrole=%s\n", PQgetvalue(r, 0, 0),
              PQgetvalue(r, 0, 1), PQgetvalue(r, 0, 2), PQgetvalue(r, 0, 3));
  } else {
    fprintf(stderr, "role query: %s", PQerrorMessage(c));
  }
  PQclear(r);
  PQfinish(c);
  return bad;
}

int main(void)
{
  const char *owner = getenv("PROBE_TEST_PG_URL");
  const char *service = getenv("PROBE_TEST_PG_SERVICE_URL");
  if (!owner || !*owner || !service || !*service) {
    if (strict()) {
      fprintf(stderr, "PMCP_TEST_STRICT is set but PROBE_TEST_PG_URL / "
                      "PROBE_TEST_PG_SERVICE_URL are not (start tests/pg/pgctl.sh)\n");
      return 1;
    }
    return 77;
  }
  int bad = check_role(owner, "probe_owner", 0) | check_role(service, "probe_service", 1);
  return bad ? 1 : 0;
}
