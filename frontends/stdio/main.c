/* probe-mcp-stdio: newline-delimited JSON-RPC on stdin/stdout around one
 * pmcp_server. Only protocol reaches stdout; diagnostics go to stderr. The
 * reading thread only frames lines: calls that may block run on the
 * engine's workers, so ping and cancellation are never stuck behind them. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <probemcp/probemcp.h>

#define PROG "probe-mcp-stdio"

typedef struct options {
  const char *store;
  const char *tenant;
  const char *toolset;
  pmcp_log_level log_level;
  const char *embed_url;
  const char *papers_url;
} options;

/* The store the research toolset reads; it must outlive the server. */
static pmcp_store *g_store;

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int out_broken;

static int write_all(const char *data, size_t len)
{
  struct iovec iov[2] = {{(void *)data, len}, {(void *)"\n", 1}};
  int n = 2;
  struct iovec *v = iov;
  while (n > 0) {
    ssize_t w = writev(STDOUT_FILENO, v, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    size_t left = (size_t)w;
    while (n > 0 && left >= v->iov_len) {
      left -= v->iov_len;
      v++;
      n--;
    }
    if (n > 0) {
      v->iov_base = (char *)v->iov_base + left;
      v->iov_len -= left;
    }
  }
  return 0;
}

/* One message per line; writes from several threads never interleave. */
static void sink(const pmcp_out *msg, void *ud)
{
  (void)ud;
  if (!msg->data)
    return; /* control kinds (END, CLOSE_STREAM) mean nothing on a pipe */
  pthread_mutex_lock(&out_mu);
  if (!out_broken && write_all(msg->data, msg->len) != 0)
    out_broken = 1;
  pthread_mutex_unlock(&out_mu);
}

static const char *level_names[] = {"debug", "info", "notice", "warning",
                                    "error", "critical", "alert", "emergency"};

static void log_line(pmcp_log_level level, const char *msg, void *ud)
{
  (void)ud;
  fprintf(stderr, PROG ": %s: %s\n", level_names[level], msg);
}

/* Registers the toolsets the options ask for (research by default,
 * tracking, or all) over one read-only store; without a store anywhere and
 * none asked for, the server honestly serves no tools. */
static int register_toolsets(pmcp_server *srv, const options *o)
{
  int want_research = !o->toolset || strcmp(o->toolset, "tracking") != 0;
  int want_tracking = o->toolset && (strcmp(o->toolset, "tracking") == 0 ||
                                     strcmp(o->toolset, "all") == 0);
  int asked = o->store || o->tenant || o->toolset || getenv("PROBE_STORE");
  /* Read-only: never creates, writes or migrates the store. */
  int rc = pmcp_store_open(&g_store, o->store, PMCP_STORE_READONLY);
  if (rc) {
    char why[512];
    snprintf(why, sizeof why, "%s",
             g_store ? pmcp_store_errmsg(g_store) : pmcp_strerror(rc));
    pmcp_store_free(g_store);
    g_store = NULL;
    if (!asked && rc == PMCP_ENOTFOUND) {
      /* No store anywhere and none asked for: an empty server (--help
       * says how to give one); stderr stays quiet on a clean run. */
      return 0;
    }
    fprintf(stderr, PROG ": cannot open the store: %s\n", why);
    return -1;
  }
  pmcp_research_options ro = PMCP_RESEARCH_OPTIONS_INIT;
  ro.tenant = o->tenant;
  ro.embed_url = o->embed_url ? o->embed_url : getenv("PROBE_EMBED_URL");
  ro.embed_key = getenv("PROBE_EMBED_KEY");
  ro.embed_model = getenv("PROBE_EMBED_MODEL");
  ro.papers_url = o->papers_url ? o->papers_url : getenv("PROBE_PAPERS_URL");
  rc = want_research ? pmcp_research_register(srv, g_store, &ro) : 0;
  if (!rc && want_tracking) {
    pmcp_tracking_options to = PMCP_TRACKING_OPTIONS_INIT;
    to.tenant = o->tenant;
    to.workspace = getenv("PROBE_WORKSPACE");
    to.project = getenv("PROBE_PROJECT");
    rc = pmcp_tracking_register(srv, g_store, &to);
  }
  if (rc) {
    fprintf(stderr, PROG ": cannot serve the %s toolset: %s%s\n",
            o->toolset ? o->toolset : "research",
            rc == PMCP_ENOTFOUND ? "no such tenant " : pmcp_strerror(rc),
            rc == PMCP_ENOTFOUND && o->tenant ? o->tenant : "");
    return -1;
  }
  return 0;
}

static void usage(FILE *f)
{
  fprintf(f,
          "usage: " PROG " [--store S] [--tenant T] [--toolset research|tracking|all]\n"
          "       " PROG " --help | --version\n"
          "\n"
          "Serves the Model Context Protocol over stdin/stdout (one JSON-RPC\n"
          "message per line). Diagnostics go to stderr.\n"
          "\n"
          "  --store S       SQLite path or postgresql:// URL of the store to read\n"
          "  --tenant T      tenant (lab) to serve; default: default\n"
          "  --toolset X     research, tracking or all (default: research)\n"
          "  --embed-url U   OpenAI-compatible embeddings endpoint for search\n"
          "                  semantic=true (default: $PROBE_EMBED_URL)\n"
          "  --papers-url U  remote papers provider for find_papers (default:\n"
          "                  $PROBE_PAPERS_URL; none: the store's papers index)\n"
          "  --log-level L   least level logged to stderr (debug ... emergency;\n"
          "                  default: warning)\n"
          "  -h, --help      this text\n"
          "  -V, --version   print the version and exit\n");
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

/* Reads stdin to EOF, handing each line to the server. Lines may be of any
 * size; the buffer grows to hold the longest one. */
static int serve(pmcp_server *srv)
{
  size_t cap = 64 * 1024, len = 0, scan = 0;
  char *buf = malloc(cap);
  if (!buf) {
    fprintf(stderr, PROG ": out of memory\n");
    return 1;
  }
  int rc = 0;
  for (;;) {
    if (out_broken)
      break;
    if (len == cap) {
      if (cap > SIZE_MAX / 2) {
        fprintf(stderr, PROG ": message too large\n");
        rc = 1;
        break;
      }
      char *n = realloc(buf, cap * 2);
      if (!n) {
        fprintf(stderr, PROG ": out of memory reading a %zu-byte message\n", len);
        rc = 1;
        break;
      }
      buf = n;
      cap *= 2;
    }
    ssize_t r = read(STDIN_FILENO, buf + len, cap - len);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      fprintf(stderr, PROG ": reading stdin: %s\n", strerror(errno));
      rc = 1;
      break;
    }
    int eof = r == 0;
    len += (size_t)r;
    size_t start = 0;
    for (;;) {
      char *nl = memchr(buf + scan, '\n', len - scan);
      size_t end;
      if (nl) {
        end = (size_t)(nl - buf);
      } else if (eof && len > start) {
        end = len; /* a last line without its newline */
      } else {
        scan = len;
        break;
      }
      size_t n = end - start;
      if (n && buf[start + n - 1] == '\r')
        n--;
      /* Blank lines carry no message; skip them rather than answer. */
      size_t k = 0;
      while (k < n && (buf[start + k] == ' ' || buf[start + k] == '\t'))
        k++;
      if (k < n) {
        int hr = pmcp_server_handle(srv, NULL, buf + start, n);
        if (hr)
          fprintf(stderr, PROG ": %s\n", pmcp_server_errmsg(srv));
      }
      start = end < len ? end + 1 : len;
      scan = start;
      if (!nl)
        break;
    }
    if (start) {
      memmove(buf, buf + start, len - start);
      len -= start;
      scan -= start;
    }
    if (eof)
      break;
    /* Give memory back after a huge message. */
    if (cap > 1024 * 1024 && len < cap / 4) {
      size_t want = len * 2 > 64 * 1024 ? len * 2 : 64 * 1024;
      char *n = realloc(buf, want);
      if (n) {
        buf = n;
        cap = want;
      }
    }
  }
  free(buf);
  return rc;
}

int main(int argc, char **argv)
{
  options o = {NULL, NULL, NULL, PMCP_LOG_WARNING, NULL, NULL};
  int rc = parse_args(argc, argv, &o);
  if (rc >= 0)
    return rc;
  signal(SIGPIPE, SIG_IGN);

  pmcp_server_options so = PMCP_SERVER_OPTIONS_INIT;
  so.name = "probe-mcp";
  so.title = "probe-mcp (stdio)";
  so.log = log_line;
  so.log_level = o.log_level;
  so.sink = sink;
  pmcp_server *srv = NULL;
  rc = pmcp_server_new(&srv, &so);
  if (rc) {
    fprintf(stderr, PROG ": cannot start the server: %s\n", pmcp_strerror(rc));
    return 1;
  }
  if (register_toolsets(srv, &o) != 0) {
    pmcp_server_free(srv);
    pmcp_store_free(g_store);
    return 1;
  }
  rc = serve(srv);
  /* EOF: let in-flight calls finish and answer before leaving; a call
   * waiting for an answer from the client learns none can come. */
  pmcp_server_session_end_input(srv, NULL);
  pmcp_server_drain(srv);
  pmcp_server_free(srv);
  pmcp_store_free(g_store);
  return rc;
}
