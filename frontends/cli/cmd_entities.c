/* SPDX-License-Identifier: MIT */
/* probe workspace|project|experiment create, probe run create|status|event|
 * delete|restore: the hierarchy the research tools browse. `probe run create
 * --git DIR` records the code state (commit, branch, remote, dirty diff). */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"

static int entity_create(const probe_globals *g, const char *kind, int argc, char **argv)
{
  pmcp_entity_spec sp = PMCP_ENTITY_SPEC_INIT;
  const char *body_arg = NULL, *created = NULL, *parent_opt = strcmp(kind, "project") == 0
                                                              ? "--workspace" : "--project";
  int reuse = 0;
  for (int i = 0; i < argc; i++) {
    int m;
    if (probe_cli_is_help(argv[i])) {
      if (strcmp(kind, "workspace") == 0)
        printf("usage: probe workspace create NAME [--id ID] [--description TEXT]\n");
      else if (strcmp(kind, "project") == 0)
        printf("usage: probe project create NAME [--id ID] [--workspace WS] [--description TEXT]\n"
               "                            [--readme FILE] [--created TIME] [--reuse]\n\n"
               "--readme: the project's README (Markdown). --reuse: an existing id is fine.\n");
      else
        printf("usage: probe experiment create NAME --project P [--id ID] [--description TEXT]\n"
               "                               [--config JSON|@FILE] [--created TIME] [--reuse]\n\n"
               "--config: the configuration the experiment's runs inherit (a JSON object).\n");
      return 0;
    }
    if ((m = probe_cli_opt(argc, argv, &i, "--id", &sp.id, kind)) ||
        (m = probe_cli_opt(argc, argv, &i, "--description", &sp.description, kind)) ||
        (m = probe_cli_opt(argc, argv, &i, "--created", &created, kind)) ||
        (strcmp(kind, "workspace") != 0 &&
         (m = probe_cli_opt(argc, argv, &i, parent_opt, &sp.parent, kind))) ||
        (strcmp(kind, "project") == 0 &&
         (m = probe_cli_opt(argc, argv, &i, "--readme", &body_arg, kind))) ||
        (strcmp(kind, "experiment") == 0 &&
         (m = probe_cli_opt(argc, argv, &i, "--config", &body_arg, kind)))) {
      if (m < 0)
        return 2;
    } else if (strcmp(argv[i], "--reuse") == 0) {
      reuse = 1;
    } else if (argv[i][0] == '-') {
      return probe_cli_err(2, kind, "unknown option '%s' ('probe %s create --help')", argv[i], kind);
    } else if (!sp.name) {
      sp.name = argv[i];
    } else {
      return probe_cli_err(2, kind, "unexpected argument '%s'", argv[i]);
    }
  }
  if (!sp.name)
    return probe_cli_err(2, kind, "the %s's name is missing ('probe %s create --help')", kind, kind);
  if (strcmp(kind, "experiment") == 0 && !sp.parent)
    return probe_cli_err(2, kind, "an experiment needs --project");
  if (created && probe_cli_time(created, &sp.created_ms))
    return probe_cli_err(2, kind, "--created: '%s' is not a time (ISO 8601 or epoch ms)", created);
  pmcp_buf body = PMCP_BUF_INIT;
  if (body_arg) {
    int rd = strcmp(kind, "project") == 0 ? probe_cli_read_file(body_arg, &body)
                                          : probe_cli_text_arg(body_arg, &body);
    if (rd)
      return probe_cli_err(1, kind, "cannot read %s", body_arg);
    sp.body = body.ptr;
  }
  sp.flags = reuse ? PMCP_STORE_REUSE : 0;
  pmcp_store *s;
  pmcp_tenant t;
  if (probe_cli_open(g, PMCP_STORE_CREATE, &s, &t)) {
    pmcp_buf_dispose(&body);
    return 1;
  }
  pmcp_buf id = PMCP_BUF_INIT;
  int rc = pmcp_store_create(s, t, kind, &sp, &id);
  if (rc == 0)
    printf("%s:%s\n", kind, id.ptr);
  else
    probe_cli_fail(kind, s, rc);
  pmcp_buf_dispose(&id);
  pmcp_buf_dispose(&body);
  pmcp_store_free(s);
  return rc ? 1 : 0;
}

static int group_cmd(const probe_globals *g, const char *kind, int argc, char **argv)
{
  if (argc < 2 || probe_cli_is_help(argv[1])) {
    FILE *f = argc < 2 ? stderr : stdout;
    fprintf(f, "usage: probe %s create NAME [options]   ('probe %s create --help')\n"
               "       probe %s list [probe list options]\n", kind, kind, kind);
    return argc < 2 ? 2 : 0;
  }
  if (strcmp(argv[1], "create") == 0)
    return entity_create(g, kind, argc - 2, argv + 2);
  if (strcmp(argv[1], "list") == 0) {
    argv[1] = (char *)kind;
    return probe_cmd_list(g, argc, argv);
  }
  return probe_cli_err(2, kind, "unknown subcommand '%s' (create, list)", argv[1]);
}

int probe_cmd_workspace(const probe_globals *g, int argc, char **argv)
{
  return group_cmd(g, "workspace", argc, argv);
}

int probe_cmd_project(const probe_globals *g, int argc, char **argv)
{
  return group_cmd(g, "project", argc, argv);
}

int probe_cmd_experiment(const probe_globals *g, int argc, char **argv)
{
  return group_cmd(g, "experiment", argc, argv);
}

/* Runs git with @p args in @p dir without a shell; output in @p out
 * (trailing newline removed). Returns git's exit status, or -1. */
static int git(const char *dir, const char *const *args, pmcp_buf *out, size_t max)
{
  int fd[2];
  if (pipe(fd))
    return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  if (pid == 0) {
    const char *argv[16] = {"git", "-C", dir};
    int n = 3;
    for (; *args && n < 15; args++)
      argv[n++] = *args;
    argv[n] = NULL;
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    FILE *null = freopen("/dev/null", "w", stderr);
    (void)null;
    execvp("git", (char *const *)argv);
    _exit(127);
  }
  close(fd[1]);
  out->len = 0;
  char buf[8192];
  ssize_t r;
  while ((r = read(fd[0], buf, sizeof buf)) > 0) {
    if (out->len + (size_t)r > max)
      continue; /* drain; keep at most max bytes */
    char *p = realloc(out->ptr, out->len + (size_t)r + 1);
    if (!p)
      break;
    out->ptr = p;
    memcpy(out->ptr + out->len, buf, (size_t)r);
    out->len += (size_t)r;
    out->ptr[out->len] = '\0';
  }
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  while (out->len && out->ptr[out->len - 1] == '\n')
    out->ptr[--out->len] = '\0';
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void run_create_usage(FILE *f)
{
  fprintf(f, "usage: probe run create [NAME] [--id ID] [--project P] [--experiment E]\n"
             "                         [--description TEXT] [--status S] [--command CMD]\n"
             "                         [--env KEY=VALUE]... [--git DIR] [--created TIME]\n"
             "                         [--started TIME] [--ended TIME] [--reuse]\n\n"
             "Creates a run (filed under a project or experiment, or unfiled) and prints\n"
             "its ref. --git DIR records the code state of the Git checkout DIR: commit,\n"
             "branch, remote and, when it has uncommitted changes, the diff. --env adds\n"
             "to the recorded environment. S: running (default), finished, failed, killed.\n");
}

static int run_create(const probe_globals *g, int argc, char **argv)
{
  pmcp_run_spec sp = PMCP_RUN_SPEC_INIT;
  const char *gitdir = NULL, *v;
  const char *times[3] = {NULL, NULL, NULL};
  pmcp_json *env = NULL; /* the --env object, begun at the first */
  int reuse = 0, rc = 0;
  pmcp_buf commit = PMCP_BUF_INIT, branch = PMCP_BUF_INIT, remote = PMCP_BUF_INIT,
           diff = PMCP_BUF_INIT, status = PMCP_BUF_INIT;
  for (int i = 0; i < argc; i++) {
    int m;
    if (probe_cli_is_help(argv[i])) {
      run_create_usage(stdout);
      return 0;
    }
    if ((m = probe_cli_opt(argc, argv, &i, "--id", &sp.id, "run")) ||
        (m = probe_cli_opt(argc, argv, &i, "--project", &sp.project, "run")) ||
        (m = probe_cli_opt(argc, argv, &i, "--experiment", &sp.experiment, "run")) ||
        (m = probe_cli_opt(argc, argv, &i, "--description", &sp.description, "run")) ||
        (m = probe_cli_opt(argc, argv, &i, "--status", &sp.status, "run")) ||
        (m = probe_cli_opt(argc, argv, &i, "--command", &sp.command, "run")) ||
        (m = probe_cli_opt(argc, argv, &i, "--git", &gitdir, "run")) ||
        (m = probe_cli_opt(argc, argv, &i, "--created", &times[0], "run")) ||
        (m = probe_cli_opt(argc, argv, &i, "--started", &times[1], "run")) ||
        (m = probe_cli_opt(argc, argv, &i, "--ended", &times[2], "run"))) {
      if (m < 0)
        goto usage_fail;
    } else if ((m = probe_cli_opt(argc, argv, &i, "--env", &v, "run"))) {
      if (m < 0)
        goto usage_fail;
      const char *eq = strchr(v, '=');
      if (!eq || eq == v) {
        probe_cli_err(2, "run", "--env wants KEY=VALUE, not '%s'", v);
        goto usage_fail;
      }
      /* Members in the order given, a repeated key kept: the store keeps
       * the object as written. */
      char *k = strndup(v, (size_t)(eq - v));
      if (!k || (!env && (pmcp_json_new(&env, 0) != 0 || pmcp_json_object_begin(env) != 0))) {
        free(k);
        rc = probe_cli_err(1, "run", "out of memory");
        goto out;
      }
      pmcp_json_key(env, k);
      pmcp_json_string(env, eq + 1);
      free(k);
    } else if (strcmp(argv[i], "--reuse") == 0) {
      reuse = 1;
    } else if (argv[i][0] == '-') {
      probe_cli_err(2, "run", "unknown option '%s' ('probe run create --help')", argv[i]);
      goto usage_fail;
    } else if (!sp.name) {
      sp.name = argv[i];
    } else {
      probe_cli_err(2, "run", "unexpected argument '%s'", argv[i]);
      goto usage_fail;
    }
  }
  int64_t *tt[3] = {&sp.created_ms, &sp.started_ms, &sp.ended_ms};
  const char *tn[3] = {"--created", "--started", "--ended"};
  for (int k = 0; k < 3; k++)
    if (times[k] && probe_cli_time(times[k], tt[k])) {
      probe_cli_err(2, "run", "%s: '%s' is not a time (ISO 8601 or epoch ms)", tn[k], times[k]);
      goto usage_fail;
    }
  if (env) {
    if (pmcp_json_object_end(env) != 0) {
      rc = probe_cli_err(1, "run", "out of memory");
      goto out;
    }
    sp.environment = pmcp_json_text(env, NULL);
  }
  if (gitdir) {
    const char *a_commit[] = {"rev-parse", "HEAD", NULL};
    const char *a_branch[] = {"rev-parse", "--abbrev-ref", "HEAD", NULL};
    const char *a_remote[] = {"config", "--get", "remote.origin.url", NULL};
    const char *a_status[] = {"status", "--porcelain", "--untracked-files=no", NULL};
    const char *a_diff[] = {"diff", "HEAD", NULL};
    if (git(gitdir, a_commit, &commit, 4096) != 0 || commit.len == 0) {
      rc = probe_cli_err(1, "run", "--git: %s is not a Git checkout with a commit (or git is "
                                   "not installed)", gitdir);
      goto out;
    }
    sp.git_commit = commit.ptr;
    if (git(gitdir, a_branch, &branch, 4096) == 0 && branch.len)
      sp.git_branch = branch.ptr;
    if (git(gitdir, a_remote, &remote, 4096) == 0 && remote.len)
      sp.git_remote = remote.ptr;
    if (git(gitdir, a_status, &status, 1 << 20) == 0 && status.len) {
      sp.git_dirty = 1;
      if (git(gitdir, a_diff, &diff, 4u << 20) == 0 && diff.len)
        sp.git_diff = diff.ptr;
    }
  }
  sp.flags = reuse ? PMCP_STORE_REUSE : 0;
  pmcp_store *s;
  pmcp_tenant t;
  if (probe_cli_open(g, PMCP_STORE_CREATE, &s, &t)) {
    rc = 1;
    goto out;
  }
  pmcp_buf id = PMCP_BUF_INIT;
  int src = pmcp_store_run_create(s, t, &sp, &id);
  if (src == 0)
    printf("run:%s\n", id.ptr);
  else
    rc = probe_cli_fail("run", s, src);
  pmcp_buf_dispose(&id);
  pmcp_store_free(s);
out:
  pmcp_buf_dispose(&commit);
  pmcp_buf_dispose(&branch);
  pmcp_buf_dispose(&remote);
  pmcp_buf_dispose(&diff);
  pmcp_buf_dispose(&status);
  pmcp_json_free(env);
  return rc;
usage_fail:
  pmcp_json_free(env);
  return 2;
}

static int run_simple(const probe_globals *g, const char *sub, int argc, char **argv)
{
  /* status RUN STATUS [--time T] | event RUN KIND MESSAGE [--time T] |
   * delete RUN | restore RUN */
  const char *pos[3] = {NULL, NULL, NULL}, *when = NULL;
  int npos = 0;
  int want = strcmp(sub, "status") == 0 ? 2 : strcmp(sub, "event") == 0 ? 3 : 1;
  for (int i = 0; i < argc; i++) {
    int m;
    if (probe_cli_is_help(argv[i])) {
      if (want == 2)
        printf("usage: probe run status RUN running|finished|failed|killed [--time TIME]\n");
      else if (want == 3)
        printf("usage: probe run event RUN KIND MESSAGE [--time TIME]\n");
      else
        printf("usage: probe run %s RUN\n", sub);
      return 0;
    }
    if (want > 1 && (m = probe_cli_opt(argc, argv, &i, "--time", &when, "run"))) {
      if (m < 0)
        return 2;
    } else if (argv[i][0] == '-') {
      return probe_cli_err(2, "run", "unknown option '%s'", argv[i]);
    } else if (npos < want) {
      pos[npos++] = argv[i];
    } else {
      return probe_cli_err(2, "run", "unexpected argument '%s'", argv[i]);
    }
  }
  if (npos != want)
    return probe_cli_err(2, "run", "'probe run %s' needs %d argument%s ('probe run %s --help')",
                         sub, want, want > 1 ? "s" : "", sub);
  int64_t ms = 0;
  if (when && probe_cli_time(when, &ms))
    return probe_cli_err(2, "run", "--time: '%s' is not a time", when);
  pmcp_store *s;
  pmcp_tenant t;
  if (probe_cli_open(g, 0, &s, &t))
    return 1;
  int rc;
  if (want == 2)
    rc = pmcp_store_run_status(s, t, pos[0], pos[1], ms);
  else if (want == 3)
    rc = pmcp_store_run_event(s, t, pos[0], pos[1], pos[2], ms);
  else {
    char ref[300];
    snprintf(ref, sizeof ref, "%s%s", strchr(pos[0], ':') ? "" : "run:", pos[0]);
    rc = pmcp_store_set_deleted(s, t, ref, strcmp(sub, "delete") == 0);
  }
  if (rc)
    probe_cli_fail("run", s, rc);
  pmcp_store_free(s);
  return rc ? 1 : 0;
}

int probe_cmd_run(const probe_globals *g, int argc, char **argv)
{
  if (argc < 2 || probe_cli_is_help(argv[1])) {
    FILE *f = argc < 2 ? stderr : stdout;
    fprintf(f, "usage: probe run create [NAME] [options]      ('probe run create --help')\n"
               "       probe run status RUN STATUS [--time T]\n"
               "       probe run event RUN KIND MESSAGE [--time T]\n"
               "       probe run delete|restore RUN\n"
               "       probe run list [probe list options]\n"
               "       probe run show RUN\n");
    return argc < 2 ? 2 : 0;
  }
  const char *sub = argv[1];
  if (strcmp(sub, "create") == 0)
    return run_create(g, argc - 2, argv + 2);
  if (strcmp(sub, "status") == 0 || strcmp(sub, "event") == 0 || strcmp(sub, "delete") == 0 ||
      strcmp(sub, "restore") == 0)
    return run_simple(g, sub, argc - 2, argv + 2);
  if (strcmp(sub, "list") == 0) {
    argv[1] = (char *)"run";
    return probe_cmd_list(g, argc, argv);
  }
  if (strcmp(sub, "show") == 0) {
    if (argc != 3)
      return probe_cli_err(2, "run", "usage: probe run show RUN");
    char ref[300];
    snprintf(ref, sizeof ref, "%s%s", strchr(argv[2], ':') ? "" : "run:", argv[2]);
    char *av[2] = {(char *)"show", ref};
    return probe_cmd_show(g, 2, av);
  }
  return probe_cli_err(2, "run", "unknown subcommand '%s' (create, status, event, delete, "
                                 "restore, list, show)", sub);
}
