/* SPDX-License-Identifier: MIT */
/* probe key create|list|revoke: workspace API keys for probe-mcp-http.
 * The secret is printed once, at creation; the store keeps its SHA-256.
 * Every creation and revocation is audited with via=cli. */
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_auth.h"
#include "cli_util.h"

static const char usage[] =
  "usage: probe [--store S] [--tenant T] key create [--workspace W] [--scope read|write]\n"
  "                                              [--name TEXT] [--json]\n"
  "       probe [--store S] [--tenant T] key list [--json]\n"
  "       probe [--store S] [--tenant T] key revoke KEY_ID\n"
  "A key (Authorization: Bearer pk_...) acts in one workspace of the tenant\n"
  "with read (default) or write scope. The secret is shown once.\n";

void probe_cli_actor(char *out, size_t size)
{
  struct passwd *pw = getpwuid(geteuid());
  const char *u = pw && pw->pw_name ? pw->pw_name : getenv("USER");
  snprintf(out, size, "cli:%s", u && *u ? u : "unknown");
}

int probe_cli_open_as(const probe_globals *g, probe_cli_as *a)
{
  if (probe_cli_open(g, 0, &a->s, &a->t))
    return 1;
  probe_cli_actor(a->actor, sizeof a->actor);
  return 0;
}

void probe_cli_print_time(FILE *f, const cJSON *ms)
{
  if (!cJSON_IsNumber(ms)) {
    fputs("-", f);
    return;
  }
  time_t sec = (time_t)(ms->valuedouble / 1000);
  struct tm tm;
  char buf[32];
  gmtime_r(&sec, &tm);
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  fputs(buf, f);
}

static int key_create(const probe_globals *g, int argc, char **argv)
{
  const char *ws = "default", *scope = "read", *name = NULL;
  int json = 0;
  const probe_cli_optv opts[] = {
    {"--workspace", &ws}, {"--scope", &scope}, {"--name", &name}, {NULL, NULL}};
  for (int i = 1; i < argc; i++) {
    int m = probe_cli_opts(argc, argv, &i, opts, "key create");
    if (m < 0)
      return 2;
    if (m == 0 && strcmp(argv[i], "--json") == 0)
      json = 1;
    else if (m == 0)
      return probe_cli_err(2, "key create", "unexpected argument '%s'\n%s", argv[i], usage);
  }
  if (strcmp(scope, "read") != 0 && strcmp(scope, "write") != 0)
    return probe_cli_err(2, "key create", "--scope is read or write, not '%s'", scope);
  probe_cli_as a;
  if (probe_cli_open_as(g, &a))
    return 1;
  pmcp_buf secret = PMCP_BUF_INIT, id = PMCP_BUF_INIT;
  int rc = pmcp_key_create(a.s, a.t, ws, strcmp(scope, "write") == 0, name, a.actor, "cli",
                            &secret, &id);
  if (rc == 0 && json) {
    const char *const members[][2] = {{"id", id.ptr},
                                      {"secret", secret.ptr},
                                      {"tenant", g->tenant ? g->tenant : "default"},
                                      {"workspace", ws},
                                      {"scope", scope}};
    pmcp_json *j = NULL;
    const char *text = NULL;
    if (pmcp_json_new(&j, 0) == 0) {
      pmcp_json_object_begin(j);
      for (size_t i = 0; i < sizeof members / sizeof *members; i++) {
        pmcp_json_key(j, members[i][0]);
        pmcp_json_string(j, members[i][1]);
      }
      if (pmcp_json_object_end(j) == 0)
        text = pmcp_json_text(j, NULL);
    }
    printf("%s\n", text ? text : "{}");
    pmcp_json_free(j);
  } else if (rc == 0) {
    printf("%s\n", secret.ptr);
    if (!g->quiet)
      fprintf(stderr, "key %s: %s scope in workspace '%s'. This secret is shown only now.\n",
              id.ptr, scope, ws);
  }
  if (secret.ptr)
    memset(secret.ptr, 0, secret.len);
  pmcp_buf_dispose(&secret);
  pmcp_buf_dispose(&id);
  return probe_cli_done("key create", a.s, rc);
}

static int key_list(const probe_globals *g, int argc, char **argv)
{
  int json;
  if (probe_cli_json_arg("key list", argc, argv, usage, &json))
    return 2;
  pmcp_store *s;
  pmcp_tenant t;
  if (probe_cli_open(g, PMCP_STORE_READONLY, &s, &t))
    return 1;
  pmcp_buf out = PMCP_BUF_INIT;
  int rc = pmcp_key_list(s, t, &out);
  if (rc == 0 && json) {
    printf("%s\n", out.ptr);
  } else if (rc == 0) {
    cJSON *a = cJSON_Parse(out.ptr);
    printf("%-26s %-11s %-6s %-16s %-21s %-21s %s\n", "ID", "PREFIX", "SCOPE", "WORKSPACE",
           "CREATED", "LAST USED", "STATE");
    for (cJSON *k = a ? a->child : NULL; k; k = k->next) {
      printf("%-26s %-11s %-6s %-16s ", cJSON_GetStringValue(cJSON_GetObjectItem(k, "id")),
             cJSON_GetStringValue(cJSON_GetObjectItem(k, "prefix")),
             cJSON_GetStringValue(cJSON_GetObjectItem(k, "scope")),
             cJSON_GetStringValue(cJSON_GetObjectItem(k, "workspace")));
      probe_cli_print_time(stdout, cJSON_GetObjectItem(k, "created"));
      fputs("  ", stdout);
      probe_cli_print_time(stdout, cJSON_GetObjectItem(k, "last_used"));
      cJSON *rv = cJSON_GetObjectItem(k, "revoked");
      const char *nm = cJSON_GetStringValue(cJSON_GetObjectItem(k, "name"));
      printf("%s%s%s%s\n", cJSON_IsNumber(rv) ? "  revoked" : "  active", nm ? " (" : "",
             nm ? nm : "", nm ? ")" : "");
    }
    cJSON_Delete(a);
  }
  pmcp_buf_dispose(&out);
  return probe_cli_done("key list", s, rc);
}

static int key_revoke(const probe_globals *g, int argc, char **argv)
{
  if (argc != 2 || argv[1][0] == '-')
    return probe_cli_err(2, "key revoke", "give one KEY_ID (see 'probe key list')\n%s", usage);
  probe_cli_as a;
  if (probe_cli_open_as(g, &a))
    return 1;
  int rc = pmcp_key_revoke(a.s, a.t, argv[1], a.actor, "cli");
  if (rc == 0 && !g->quiet)
    fprintf(stderr, "key %s revoked\n", argv[1]);
  return probe_cli_done("key revoke", a.s, rc);
}

int probe_cmd_key(const probe_globals *g, int argc, char **argv)
{
  if (argc < 2 || probe_cli_is_help(argv[1])) {
    fputs(usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (strcmp(argv[1], "create") == 0)
    return key_create(g, argc - 1, argv + 1);
  if (strcmp(argv[1], "list") == 0)
    return key_list(g, argc - 1, argv + 1);
  if (strcmp(argv[1], "revoke") == 0)
    return key_revoke(g, argc - 1, argv + 1);
  return probe_cli_err(2, "key", "unknown subcommand '%s'\n%s", argv[1], usage);
}
