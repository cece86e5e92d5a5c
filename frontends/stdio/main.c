/* SPDX-License-Identifier: MIT */
/* probe-mcp-stdio: newline-delimited JSON-RPC on stdin/stdout around one
 * pmcp_server (the loop is the library's, probemcp/stdio.h). Only protocol reaches stdout;
 * diagnostics go to stderr. Calls that may block run on the engine's
 * workers, so ping and cancellation are never stuck behind them. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <probemcp/probemcp.h>
#include <probemcp/stdio.h>

#define PROG "probe-mcp-stdio"

typedef struct options {
  const char *store;
  const char *tenant;
  const char *toolset;
  pmcp_log_level log_level;
  const char *embed_url;
  const char *papers_url;
  size_t max_line;
  int memory_tasks;
} options;

/* The store the research toolset reads; it must outlive the server. */
static pmcp_store *g_store;

static const char *level_names[] = {"debug", "info", "notice", "warning",
                                    "error", "critical", "alert", "emergency"};

static void log_line(pmcp_log_level level, const char *msg, void *ud)
{
  (void)ud;
  fprintf(stderr, PROG ": %s: %s\n", level_names[level], msg);
}

/* Registers the toolsets the options ask for (research by default,
 * tracking, or all) over one read-only store; without a store anywhere and
 * none asked for, the server honestly serves no tools, and says so. */
static int register_toolsets(pmcp_server *srv, const options *o)
{
  pmcp_toolsets_options to = PMCP_TOOLSETS_OPTIONS_INIT;
  to.toolset = o->toolset;
  to.store = o->store;
  to.tenant = o->tenant;
  to.embed_url = o->embed_url;
  to.papers_url = o->papers_url;
  to.memory_tasks = o->memory_tasks;
  pmcp_buf msg = PMCP_BUF_INIT;
  int rc = pmcp_toolsets_register(srv, &to, &g_store, &msg);
  if (msg.len)
    fprintf(stderr, PROG ": %s\n", msg.ptr);
  pmcp_buf_dispose(&msg);
  return rc ? -1 : 0;
}

static void usage(FILE *f)
{
  fprintf(f,
          "usage: " PROG " [--store S] [--tenant T] [--toolset research|tracking|all]\n"
          "                       [--embed-url U] [--papers-url U] [--log-level L]\n"
          "                       [--max-line BYTES] [--memory-tasks]\n"
          "       " PROG " --help | --version\n"
          "\n"
          "Serves the Model Context Protocol over stdin/stdout (one JSON-RPC\n"
          "message per line). Diagnostics go to stderr.\n"
          "\n"
          "  --store S       SQLite path or postgresql:// URL of the store to read,\n"
          "                  read-only (default: $PROBE_STORE, else\n"
          "                  $XDG_DATA_HOME/probe/store.db; none: no tools); tasks\n"
          "                  are written to its tasks table when it is writable\n"
          "  --tenant T      tenant (lab) to serve; default: default\n"
          "  --toolset X     research, tracking or all (default: research); tracking\n"
          "                  takes its default workspace and project from\n"
          "                  $PROBE_WORKSPACE and $PROBE_PROJECT\n"
          "  --embed-url U   OpenAI-compatible embeddings endpoint for search\n"
          "                  semantic=true (default: $PROBE_EMBED_URL)\n"
          "  --papers-url U  remote papers provider for find_papers (default:\n"
          "                  $PROBE_PAPERS_URL; none: the store's papers index)\n"
          "  --log-level L   least level logged to stderr (debug ... emergency;\n"
          "                  default: warning)\n"
          "  --max-line BYTES  longest message line (default 16M; suffix K, M, G);\n"
          "                  a longer one is skipped and answered with an error\n"
          "  --memory-tasks  keep tasks in memory only (never write to the store)\n"
          "  -h, --help      this text\n"
          "  -V, --version   print the version and exit\n");
}

/* "N", "NK", "NM" or "NG": 0, or -1 when malformed or under 1 KiB. */
static int parse_size(const char *s, size_t *out)
{
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || errno || s[0] == '-')
    return -1;
  unsigned shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10, end++;
  else if (*end == 'M' || *end == 'm') shift = 20, end++;
  else if (*end == 'G' || *end == 'g') shift = 30, end++;
  if (*end || v > (SIZE_MAX >> 1 >> shift))
    return -1;
  v <<= shift;
  if (v < 1024)
    return -1;
  *out = (size_t)v;
  return 0;
}

static int parse_args(int argc, char **argv, options *o)
{
  static const struct option longs[] = {
    {"store", required_argument, NULL, 's'},
    {"tenant", required_argument, NULL, 't'},
    {"toolset", required_argument, NULL, 'T'},
    {"log-level", required_argument, NULL, 'l'},
    {"embed-url", required_argument, NULL, 'e'},
    {"papers-url", required_argument, NULL, 'P'},
    {"max-line", required_argument, NULL, 'L'},
    {"memory-tasks", no_argument, NULL, 'M'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
  };
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":hV", longs, NULL)) != -1) {
    switch (c) {
    case 's': o->store = optarg; break;
    case 't': o->tenant = optarg; break;
    case 'e': o->embed_url = optarg; break;
    case 'P': o->papers_url = optarg; break;
    case 'M': o->memory_tasks = 1; break;
    case 'L':
      if (parse_size(optarg, &o->max_line) != 0) {
        fprintf(stderr, PROG ": --max-line must be a byte count of at least 1024 "
                "(suffix K, M or G allowed), not '%s'\n", optarg);
        return 2;
      }
      break;
    case 'T':
      if (strcmp(optarg, "research") && strcmp(optarg, "tracking") &&
          strcmp(optarg, "all")) {
        fprintf(stderr, PROG ": --toolset must be research, tracking or all, not '%s'\n",
                optarg);
        return 2;
      }
      o->toolset = optarg;
      break;
    case 'l': {
      int found = 0;
      for (int i = 0; i < 8; i++)
        if (strcmp(optarg, level_names[i]) == 0) {
          o->log_level = (pmcp_log_level)i;
          found = 1;
        }
      if (!found) {
        fprintf(stderr, PROG ": unknown --log-level '%s'\n", optarg);
        return 2;
      }
      break;
    }
    case 'h': usage(stdout); return 0;
    case 'V': printf(PROG " %s\n", pmcp_version()); return 0;
    case ':':
      fprintf(stderr, PROG ": option '%s' needs a value\n", argv[optind - 1]);
      return 2;
    default:
      fprintf(stderr, PROG ": unknown option '%s' (try --help)\n", argv[optind - 1]);
      return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, PROG ": unexpected argument '%s' (try --help)\n", argv[optind]);
    return 2;
  }
  return -1; /* go on */
}

int main(int argc, char **argv)
{
  options o = {NULL, NULL, NULL, PMCP_LOG_WARNING, NULL, NULL, 0, 0};
  int rc = parse_args(argc, argv, &o);
  if (rc >= 0)
    return rc;
  signal(SIGPIPE, SIG_IGN);

  pmcp_stdio *io = NULL;
  pmcp_stdio_options io_opts = PMCP_STDIO_OPTIONS_INIT;
  io_opts.log = log_line;
  io_opts.max_line = o.max_line;
  rc = pmcp_stdio_new(&io, STDIN_FILENO, STDOUT_FILENO, &io_opts);
  if (rc) {
    fprintf(stderr, PROG ": cannot start the stdio transport: %s\n", pmcp_strerror(rc));
    return 1;
  }
  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  so.name = "probe-mcp";
  so.title = "probe-mcp (stdio)";
  so.log = log_line;
  so.log_level = o.log_level;
  so.sink = pmcp_stdio_sink;
  so.sink_ud = io;
  pmcp_server *srv = NULL;
  rc = pmcp_server_new(&srv, &so);
  if (rc) {
    fprintf(stderr, PROG ": cannot start the server: %s\n", pmcp_strerror(rc));
    pmcp_stdio_free(io);
    return 1;
  }
  if (register_toolsets(srv, &o) != 0) {
    rc = 1;
  } else {
    /* To end of input; calls still running answer before it returns. */
    rc = pmcp_stdio_serve(io, srv) ? 1 : 0;
  }
  pmcp_server_free(srv);
  pmcp_store_free(g_store);
  pmcp_stdio_free(io);
  return rc;
}
