/* SPDX-License-Identifier: MIT */
/* probe audit: reads the append-only audit log (key and user changes from
 * the CLI, authorizations, revocations and write tools from MCP), oldest
 * first. Without --tenant every tenant's entries and the store-wide ones
 * (users) are shown. */
#include <stdlib.h>
#include <string.h>

#include "cli_auth.h"
#include "cli_util.h"

static const char usage[] =
  "usage: probe [--store S] [--tenant T] audit [--since TIME] [--action NAME|PREFIX.|PREFIX*]\n"
  "                                          [--limit N] [--json]\n"
  "TIME is ISO 8601 UTC (2026-01-31T12:00Z) or epoch milliseconds.\n";

int probe_cmd_audit(const probe_globals *g, int argc, char **argv)
{
  pmcp_audit_query q = {PMCP_AUDIT_QUERY_VERSION, 0, NULL, 0, 0};
  int json = 0;
  for (int i = 1; i < argc; i++) {
    const char *v;
    int m;
    if (probe_cli_is_help(argv[i])) {
      fputs(usage, stdout);
      return 0;
    } else if ((m = probe_cli_opt(argc, argv, &i, "--since", &v, "audit")) != 0) {
      if (m < 0)
        return 2;
      if (probe_cli_time(v, &q.since_ms))
        return probe_cli_err(2, "audit", "--since: '%s' is not a time (2026-01-31T12:00Z or"
                             " epoch ms)", v);
    } else if ((m = probe_cli_opt(argc, argv, &i, "--action", &v, "audit")) != 0) {
      if (m < 0)
        return 2;
      q.action = v;
    } else if ((m = probe_cli_opt(argc, argv, &i, "--limit", &v, "audit")) != 0) {
      int64_t n;
      if (m < 0)
        return 2;
      if (probe_cli_int(v, &n) || n < 1 || n > 1000000)
        return probe_cli_err(2, "audit", "--limit is a whole number from 1 to 1000000");
      q.limit = (size_t)n;
    } else if (strcmp(argv[i], "--json") == 0) {
      json = 1;
    } else {
      return probe_cli_err(2, "audit", "unexpected argument '%s'\n%s", argv[i], usage);
    }
  }
  pmcp_store *s;
  int rc = pmcp_store_open(&s, g->store, PMCP_STORE_READONLY);
  if (rc == 0 && g->tenant) {
    pmcp_tenant t;
    rc = pmcp_store_tenant(s, g->tenant, 0, &t);
    q.tenant_id = t.id;
  }
  pmcp_buf out = PMCP_BUF_INIT;
  if (rc == 0)
    rc = pmcp_audit_list(s, &q, &out);
  if (rc) {
    probe_cli_fail("audit", s, rc);
  } else if (json) {
    printf("%s\n", out.ptr);
  } else {
    cJSON *a = cJSON_Parse(out.ptr);
    for (cJSON *e = a ? a->child : NULL; e; e = e->next) {
      probe_cli_print_time(stdout, cJSON_GetObjectItem(e, "time"));
      const char *tn = cJSON_GetStringValue(cJSON_GetObjectItem(e, "tenant"));
      const char *ws = cJSON_GetStringValue(cJSON_GetObjectItem(e, "workspace"));
      char *d = cJSON_PrintUnformatted(cJSON_GetObjectItem(e, "details"));
      printf("  %-22s %-4s %-24s %s%s%s  %s\n",
             cJSON_GetStringValue(cJSON_GetObjectItem(e, "action")),
             cJSON_GetStringValue(cJSON_GetObjectItem(e, "via")),
             cJSON_GetStringValue(cJSON_GetObjectItem(e, "actor")), tn ? tn : "-",
             ws ? "/" : "", ws ? ws : "", d ? d : "{}");
      cJSON_free(d);
    }
    cJSON_Delete(a);
  }
  pmcp_buf_dispose(&out);
  pmcp_store_free(s);
  return rc ? 1 : 0;
}
