/* SPDX-License-Identifier: MIT */
/* probe demo: fills a fresh store with the bundled demo lab. The real logs
 * (Lightning CSV, TensorBoard event files, arXiv records) are compiled into
 * the program; they are unpacked into a temporary folder and brought in by
 * the importers, then demo_lab.c writes the generated part of the lab. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "cli_util.h"
#include "demo/demo.h"

static int mkdirs_for(char *path)
{
  for (char *p = path + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      int rc = mkdir(path, 0700);
      *p = '/';
      if (rc != 0 && errno != EEXIST)
        return -1;
    }
  return 0;
}

/* Unpacks every bundled file under @p dir. */
static int unpack(const char *dir)
{
  for (size_t i = 0; i < probe_demo_n_files; i++) {
    const probe_demo_file *f = &probe_demo_files[i];
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, f->name);
    if (mkdirs_for(path))
      return -1;
    unsigned char *buf = malloc(f->size ? f->size : 1);
    if (!buf)
      return -1;
    size_t n = ZSTD_decompress(buf, f->size, f->zdata, f->zsize);
    FILE *out = fopen(path, "wb");
    int ok = !ZSTD_isError(n) && n == f->size && out && fwrite(buf, 1, n, out) == n;
    if (out && fclose(out) != 0)
      ok = 0;
    free(buf);
    if (!ok)
      return -1;
  }
  return 0;
}

static void progress(const char *what, uint64_t done, uint64_t total, void *ud)
{
  (void)what;
  (void)done;
  (void)total;
  (void)ud;
}

int probe_cmd_demo(const probe_globals *g, int argc, char **argv)
{
  if (argc > 1) {
    if (probe_cli_is_help(argv[1])) {
      printf("usage: probe [--store S] [--tenant T] demo\n\n"
             "Fills a fresh store (or an empty tenant) with the demo lab: 16 PyTorch\n"
             "Lightning runs (AIRI genrisk, MIT), 9 TensorBoard runs (tensorboard-reducer,\n"
             "MIT), 1000 arXiv records (CC0) and generated lab content: projects,\n"
             "experiments with versions and inherited config, two dozen runs with metrics\n"
             "(histograms, scatter sets, RL episodes), notes and overview pages with\n"
             "versions, artifacts with versions and labels, datasets, checkpoints,\n"
             "sources, lineage, groups, trials, sessions, the team note and shared files.\n"
             "The data is built into probe: it works from any folder.\n");
      return 0;
    }
    return probe_cli_err(2, "demo", "unexpected argument '%s'", argv[1]);
  }
  pmcp_store *s;
  pmcp_tenant t;
  if (probe_cli_open(g, PMCP_STORE_CREATE, &s, &t))
    return 1;
  pmcp_list_opts lo = PMCP_LIST_OPTS_INIT;
  lo.kind = "run";
  lo.include_deleted = 1;
  lo.limit = 1;
  pmcp_buf out = PMCP_BUF_INIT;
  int rc = pmcp_store_list(s, t, &lo, &out);
  if (rc == 0 && !strstr(out.ptr, "\"total\":0")) {
    pmcp_buf_dispose(&out);
    pmcp_store_free(s);
    return probe_cli_err(1, "demo", "this store already holds runs; the demo fills a fresh "
                                    "store (give --store NEW_PATH or --tenant NEW_LAB)");
  }
  pmcp_buf_dispose(&out);
  char dir[512];
  snprintf(dir, sizeof dir, "%s/probe-demo-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(dir)) {
    pmcp_store_free(s);
    return probe_cli_err(1, "demo", "cannot make a temporary folder: %s", strerror(errno));
  }
  if (unpack(dir)) {
    rc = probe_cli_err(1, "demo", "cannot unpack the bundled data into %s", dir);
    goto out;
  }
  struct {
    const char *kind, *path, *project, *experiment;
  } imports[] = {
    {"csv", "genrisk/lightning_logs", "GAN risk", "lightning-logs"},
    {"tensorboard", "tensorboard-reducer/runs/strict", "TensorBoard reducer", "strict"},
    {"tensorboard", "tensorboard-reducer/runs/lax", "TensorBoard reducer", "lax"},
    {"tensorboard", "tensorboard-reducer/runs/duplicate_steps", "TensorBoard reducer",
     "duplicate-steps"},
    {"arxiv", "arxiv/arxiv-metadata-oai-snapshot.sample-1000.jsonl", NULL, NULL},
  };
  for (size_t i = 0; i < sizeof imports / sizeof imports[0]; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, imports[i].path);
    pmcp_import_options o = PMCP_IMPORT_OPTIONS_INIT;
    o.project = imports[i].project;
    o.experiment = imports[i].experiment;
    o.progress = progress;
    pmcp_import_counts n = PMCP_IMPORT_COUNTS_INIT;
    pmcp_buf err = PMCP_BUF_INIT;
    int irc = pmcp_import(s, t, imports[i].kind, path, &o, &n, &err);
    if (irc) {
      rc = probe_cli_err(1, "demo", "importing the bundled %s data failed: %s", imports[i].kind,
                         err.ptr ? err.ptr : pmcp_strerror(irc));
      pmcp_buf_dispose(&err);
      goto out;
    }
    pmcp_buf_dispose(&err);
    if (!g->quiet)
      fprintf(stderr, "probe demo: %s: %llu runs, %llu points, %llu papers\n", imports[i].path,
              (unsigned long long)n.runs, (unsigned long long)n.points,
              (unsigned long long)n.papers);
  }
  int lrc = probe_demo_lab(s, t);
  if (lrc) {
    rc = probe_cli_fail("demo", s, lrc);
    goto out;
  }
  uint64_t v = 0;
  pmcp_store_version(s, t, &v);
  pmcp_buf where = PMCP_BUF_INIT;
  pmcp_store_describe(&where, g->store);
  printf("demo lab ready in %s (tenant %s)\n", where.ptr, g->tenant ? g->tenant : "default");
  pmcp_buf_dispose(&where);
  rc = 0;
out:
  {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
      fprintf(stderr, "probe demo: could not remove %s\n", dir);
  }
  pmcp_store_free(s);
  return rc;
}
