/* SPDX-License-Identifier: MIT */
/* probe user create|list|disable|enable|set-role|passwd: the local users
 * who sign in on probe-mcp-http's consent page, and their role per
 * workspace (viewer, editor, admin). A password is read from stdin (piped)
 * or asked for on the terminal without echo; never from the command line,
 * where other users of the machine could read it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli_auth.h"
#include "cli_util.h"

static const char usage[] =
  "usage: probe [--store S] user create NAME [--display-name TEXT] [--no-password]\n"
  "       probe [--store S] user passwd NAME\n"
  "       probe [--store S] user disable|enable NAME\n"
  "       probe [--store S] [--tenant T] user set-role NAME --workspace W\n"
  "                                       --role viewer|editor|admin|none\n"
  "       probe [--store S] [--tenant T] user list [--json]\n"
  "Passwords are read from stdin when it is not a terminal, else asked for\n"
  "twice without echo.\n";

/* Reads one line (without its newline) from @p f into buf. */
static int read_line(FILE *f, char *buf, size_t size)
{
  if (!fgets(buf, (int)size, f))
    return -1;
  size_t n = strlen(buf);
  if (n && buf[n - 1] == '\n')
    buf[--n] = '\0';
  else if (n == size - 1 && !feof(f))
    return -2; /* longer than we take */
  if (n && buf[n - 1] == '\r')
    buf[--n] = '\0';
  return 0;
}

static int prompt(const char *text, char *buf, size_t size)
{
  FILE *tty = fopen("/dev/tty", "r+");
  if (!tty)
    return -1;
  struct termios old, quiet;
  int fd = fileno(tty);
  int have = tcgetattr(fd, &old) == 0;
  if (have) {
    quiet = old;
    quiet.c_lflag &= ~(tcflag_t)ECHO;
    tcsetattr(fd, TCSAFLUSH, &quiet);
  }
  fputs(text, tty);
  fflush(tty);
  int rc = read_line(tty, buf, size);
  if (have)
    tcsetattr(fd, TCSAFLUSH, &old);
  fputc('\n', tty);
  fclose(tty);
  return rc;
}

/* The new password: stdin's first line when stdin is not a terminal, else
 * a prompt, twice. Returns 0 or prints why and returns 1. */
static int get_password(const char *cmd, char *pw, size_t size)
{
  int rc;
  if (!isatty(STDIN_FILENO)) {
    rc = read_line(stdin, pw, size);
  } else {
    char again[1100];
    rc = prompt("New password: ", pw, size);
    if (rc == 0 && (rc = prompt("Again: ", again, sizeof again)) == 0 && strcmp(pw, again)) {
      memset(again, 0, sizeof again);
      return probe_cli_err(1, cmd, "the passwords differ");
    }
    memset(again, 0, sizeof again);
  }
  if (rc == -2)
    return probe_cli_err(1, cmd, "the password is longer than 1024 bytes");
  if (rc || !*pw)
    return probe_cli_err(1, cmd, "no password given (pipe it on stdin or type it at the prompt)");
  return 0;
}

static int finish(const char *cmd, pmcp_store *s, int rc, const char *done, const char *name,
                  const probe_globals *g)
{
  if (rc == 0 && done && !g->quiet)
    fprintf(stderr, "user %s %s\n", name, done);
  return probe_cli_done(cmd, s, rc);
}

static int user_create(const probe_globals *g, int argc, char **argv)
{
  const char *name = NULL, *display = NULL;
  int nopw = 0;
  for (int i = 1; i < argc; i++) {
    const char *v;
    int m = probe_cli_opt(argc, argv, &i, "--display-name", &v, "user create");
    if (m < 0)
      return 2;
    if (m)
      display = v;
    else if (strcmp(argv[i], "--no-password") == 0)
      nopw = 1;
    else if (strcmp(argv[i], "--password") == 0 || strncmp(argv[i], "--password=", 11) == 0)
      return probe_cli_err(2, "user create", "a password is never taken on the command line:"
                           " pipe it on stdin or type it at the prompt");
    else if (argv[i][0] != '-' && !name)
      name = argv[i];
    else
      return probe_cli_err(2, "user create", "unexpected argument '%s'\n%s", argv[i], usage);
  }
  if (!name)
    return probe_cli_err(2, "user create", "give the user's NAME\n%s", usage);
  char pw[1100];
  if (!nopw && get_password("user create", pw, sizeof pw))
    return 1;
  probe_cli_as a;
  if (probe_cli_open_as(g, &a))
    return 1;
  pmcp_buf id = PMCP_BUF_INIT;
  int rc = pmcp_user_create(a.s, name, display, nopw ? NULL : pw, a.actor, "cli", &id);
  memset(pw, 0, sizeof pw);
  if (rc == 0)
    printf("%s\n", id.ptr);
  pmcp_buf_dispose(&id);
  return finish("user create", a.s, rc, "created", name, g);
}

static int one_name(const char *cmd, int argc, char **argv)
{
  if (argc != 2 || argv[1][0] == '-')
    return probe_cli_err(2, cmd, "give one user NAME\n%s", usage);
  return 0;
}

static int user_passwd(const probe_globals *g, int argc, char **argv)
{
  if (one_name("user passwd", argc, argv))
    return 2;
  char pw[1100];
  if (get_password("user passwd", pw, sizeof pw))
    return 1;
  probe_cli_as a;
  if (probe_cli_open_as(g, &a))
    return 1;
  int rc = pmcp_user_passwd(a.s, argv[1], pw, a.actor, "cli");
  memset(pw, 0, sizeof pw);
  return finish("user passwd", a.s, rc, "has a new password", argv[1], g);
}

static int user_disable(const probe_globals *g, int argc, char **argv, int disable)
{
  const char *cmd = disable ? "user disable" : "user enable";
  if (one_name(cmd, argc, argv))
    return 2;
  probe_cli_as a;
  if (probe_cli_open_as(g, &a))
    return 1;
  int rc = pmcp_user_disable(a.s, argv[1], disable, a.actor, "cli");
  return finish(cmd, a.s, rc, disable ? "disabled" : "enabled", argv[1], g);
}

static int user_set_role(const probe_globals *g, int argc, char **argv)
{
  const char *name = NULL, *ws = NULL, *role = NULL;
  const probe_cli_optv opts[] = {{"--workspace", &ws}, {"--role", &role}, {NULL, NULL}};
  for (int i = 1; i < argc; i++) {
    int m = probe_cli_opts(argc, argv, &i, opts, "user set-role");
    if (m < 0)
      return 2;
    if (m == 0 && argv[i][0] != '-' && !name)
      name = argv[i];
    else if (m == 0)
      return probe_cli_err(2, "user set-role", "unexpected argument '%s'\n%s", argv[i], usage);
  }
  if (!name || !ws || !role)
    return probe_cli_err(2, "user set-role", "give NAME, --workspace and --role\n%s", usage);
  int r = pmcp_role_parse(role);
  if (r == PMCP_ROLE_NONE && strcmp(role, "none") != 0)
    return probe_cli_err(2, "user set-role",
                         "--role is viewer, editor, admin or none, not '%s'", role);
  probe_cli_as a;
  if (probe_cli_open_as(g, &a))
    return 1;
  int rc = pmcp_user_set_role(a.s, name, a.t, ws, r, a.actor, "cli");
  if (rc == 0 && !g->quiet)
    fprintf(stderr, "user %s: %s in workspace '%s' of tenant '%s'\n", name, role, ws,
            g->tenant ? g->tenant : "default");
  return finish("user set-role", a.s, rc, NULL, name, g);
}

static int user_list(const probe_globals *g, int argc, char **argv)
{
  int json;
  if (probe_cli_json_arg("user list", argc, argv, usage, &json))
    return 2;
  pmcp_store *s;
  pmcp_tenant t = {0};
  int rc = pmcp_store_open(&s, g->store, PMCP_STORE_READONLY);
  if (rc == 0 && g->tenant)
    rc = pmcp_store_tenant(s, g->tenant, 0, &t);
  pmcp_buf out = PMCP_BUF_INIT;
  if (rc == 0)
    rc = pmcp_user_list(s, t, &out);
  if (rc == 0 && json) {
    printf("%s\n", out.ptr);
  } else if (rc == 0) {
    cJSON *a = cJSON_Parse(out.ptr);
    printf("%-20s %-9s %-21s %s\n", "NAME", "STATE", "CREATED", "ROLES");
    for (cJSON *u = a ? a->child : NULL; u; u = u->next) {
      printf("%-20s %-9s ", cJSON_GetStringValue(cJSON_GetObjectItem(u, "name")),
             cJSON_IsTrue(cJSON_GetObjectItem(u, "disabled")) ? "disabled" : "active");
      probe_cli_print_time(stdout, cJSON_GetObjectItem(u, "created"));
      const char *sep = "  ";
      for (cJSON *m = cJSON_GetObjectItem(u, "memberships")->child; m; m = m->next) {
        printf("%s%s/%s:%s", sep, cJSON_GetStringValue(cJSON_GetObjectItem(m, "tenant")),
               cJSON_GetStringValue(cJSON_GetObjectItem(m, "workspace")),
               cJSON_GetStringValue(cJSON_GetObjectItem(m, "role")));
        sep = ", ";
      }
      putchar('\n');
    }
    cJSON_Delete(a);
  }
  pmcp_buf_dispose(&out);
  return finish("user list", s, rc, NULL, NULL, g);
}

int probe_cmd_user(const probe_globals *g, int argc, char **argv)
{
  if (argc < 2 || probe_cli_is_help(argv[1])) {
    fputs(usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const char *sub = argv[1];
  if (strcmp(sub, "create") == 0)
    return user_create(g, argc - 1, argv + 1);
  if (strcmp(sub, "passwd") == 0)
    return user_passwd(g, argc - 1, argv + 1);
  if (strcmp(sub, "disable") == 0 || strcmp(sub, "enable") == 0)
    return user_disable(g, argc - 1, argv + 1, strcmp(sub, "disable") == 0);
  if (strcmp(sub, "set-role") == 0)
    return user_set_role(g, argc - 1, argv + 1);
  if (strcmp(sub, "list") == 0)
    return user_list(g, argc - 1, argv + 1);
  return probe_cli_err(2, "user", "unknown subcommand '%s'\n%s", sub, usage);
}
