/* SPDX-License-Identifier: MIT */
/* probe artifact add|ref|label|promote|download: artifacts with monotonic
 * versions, moving labels, stored content or references, and promotion to
 * the shared lab-wide level. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"

static void artifact_usage(FILE *f)
{
  fprintf(f,
    "usage: probe artifact add FILE [--name N] [--on REF] [--label L]... [--description D]\n"
    "                              [--media-type T] [--time TIME]\n"
    "       probe artifact ref URI --name N [--on REF] [--size BYTES] [--sha256 HEX]\n"
    "                              [--label L]... [--description D]\n"
    "       probe artifact label REF VERSION LABEL\n"
    "       probe artifact promote REF\n"
    "       probe artifact download REF [DEST] [--version N]\n"
    "       probe artifact list [probe list options]\n\n"
    "add stores FILE's bytes as a new version (name: the file's base name) of the\n"
    "artifact of that name on REF (run:, experiment:, project:; none: lab-wide,\n"
    "shared). ref records a reference instead of bytes. A label moves to the\n"
    "version it is given to. promote makes an artifact resolve as artifact:NAME\n"
    "lab-wide. download writes a version's bytes to DEST (default: its file name;\n"
    "'-' for stdout); it refuses references, naming their URI.\n");
}

static int add_or_ref(const probe_globals *g, int is_ref, int argc, char **argv)
{
  pmcp_artifact_spec a = PMCP_ARTIFACT_SPEC_INIT;
  const char *what = NULL, *size = NULL, *when = NULL;
  const char *labels[32];
  size_t nl = 0;
  for (int i = 0; i < argc; i++) {
    int m;
    const char *v;
    if (probe_cli_is_help(argv[i])) {
      artifact_usage(stdout);
      return 0;
    }
    if ((m = probe_cli_opt(argc, argv, &i, "--name", &a.name, "artifact")) ||
        (m = probe_cli_opt(argc, argv, &i, "--on", &a.on, "artifact")) ||
        (m = probe_cli_opt(argc, argv, &i, "--description", &a.description, "artifact")) ||
        (m = probe_cli_opt(argc, argv, &i, "--media-type", &a.media_type, "artifact")) ||
        (m = probe_cli_opt(argc, argv, &i, "--time", &when, "artifact")) ||
        (is_ref && (m = probe_cli_opt(argc, argv, &i, "--size", &size, "artifact"))) ||
        (is_ref && (m = probe_cli_opt(argc, argv, &i, "--sha256", &a.sha256, "artifact")))) {
      if (m < 0)
        return 2;
    } else if ((m = probe_cli_opt(argc, argv, &i, "--label", &v, "artifact"))) {
      if (m < 0)
        return 2;
      if (nl == 32)
        return probe_cli_err(2, "artifact", "at most 32 labels");
      labels[nl++] = v;
    } else if (argv[i][0] == '-') {
      return probe_cli_err(2, "artifact", "unknown option '%s'", argv[i]);
    } else if (!what) {
      what = argv[i];
    } else {
      return probe_cli_err(2, "artifact", "unexpected argument '%s'", argv[i]);
    }
  }
  if (!what)
    return probe_cli_err(2, "artifact", "%s is missing ('probe artifact --help')",
                         is_ref ? "the URI" : "the file");
  if (when && probe_cli_time(when, &a.created_ms))
    return probe_cli_err(2, "artifact", "--time: '%s' is not a time", when);
  a.labels = labels;
  a.n_labels = nl;
  pmcp_buf data = PMCP_BUF_INIT;
  if (is_ref) {
    if (!a.name)
      return probe_cli_err(2, "artifact", "a reference needs --name");
    a.uri = what;
    int64_t sz = 0;
    if (size && (probe_cli_int(size, &sz) || sz < 0))
      return probe_cli_err(2, "artifact", "--size must be a byte count, not '%s'", size);
    a.size = (size_t)sz;
  } else {
    if (probe_cli_read_file(what, &data))
      return probe_cli_err(1, "artifact", "cannot read %s: %s", what, strerror(errno));
    a.content = data.ptr;
    a.size = data.len;
    a.path = what;
    if (!a.name) {
      const char *base = strrchr(what, '/');
      a.name = base ? base + 1 : what;
    }
  }
  pmcp_store *s;
  pmcp_tenant t;
  int rc = 1;
  if (probe_cli_open(g, PMCP_STORE_CREATE, &s, &t) == 0) {
    pmcp_buf id = PMCP_BUF_INIT;
    int64_t v = 0;
    rc = pmcp_store_artifact_add(s, t, &a, &id, &v);
    if (rc == 0)
      printf("artifact:%s v%lld\n", id.ptr, (long long)v);
    else
      probe_cli_fail("artifact", s, rc);
    pmcp_buf_dispose(&id);
    pmcp_store_free(s);
  }
  pmcp_buf_dispose(&data);
  return rc ? 1 : 0;
}

static const char *aref(const char *r, char *buf, size_t n)
{
  snprintf(buf, n, "%s%s", strncmp(r, "artifact:", 9) == 0 ? "" : "artifact:", r);
  return buf;
}

static int download(const probe_globals *g, int argc, char **argv)
{
  const char *ref = NULL, *dest = NULL, *ver = NULL;
  for (int i = 0; i < argc; i++) {
    int m;
    if (probe_cli_is_help(argv[i])) {
      artifact_usage(stdout);
      return 0;
    }
    if ((m = probe_cli_opt(argc, argv, &i, "--version", &ver, "artifact"))) {
      if (m < 0)
        return 2;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return probe_cli_err(2, "artifact", "unknown option '%s'", argv[i]);
    } else if (!ref) {
      ref = argv[i];
    } else if (!dest) {
      dest = argv[i];
    } else {
      return probe_cli_err(2, "artifact", "unexpected argument '%s'", argv[i]);
    }
  }
  if (!ref)
    return probe_cli_err(2, "artifact", "usage: probe artifact download REF [DEST] [--version N]");
  int64_t version = 0;
  if (ver && (probe_cli_int(ver, &version) || version < 1))
    return probe_cli_err(2, "artifact", "--version must be a version number (1, 2, ...)");
  pmcp_store *s;
  pmcp_tenant t;
  if (probe_cli_open(g, PMCP_STORE_READONLY, &s, &t))
    return 1;
  char rb[300];
  pmcp_buf data = PMCP_BUF_INIT, meta = PMCP_BUF_INIT;
  int rc = pmcp_store_artifact_content(s, t, aref(ref, rb, sizeof rb), version, &data, &meta);
  if (rc) {
    probe_cli_fail("artifact", s, rc);
  } else {
    char name[256] = "artifact.bin";
    cJSON *m = cJSON_Parse(meta.ptr);
    cJSON *p = cJSON_GetObjectItem(m, "path");
    cJSON *nm = cJSON_GetObjectItem(m, "name");
    const char *src = cJSON_IsString(p) ? p->valuestring : cJSON_IsString(nm) ? nm->valuestring : NULL;
    if (src) {
      const char *b = strrchr(src, '/');
      snprintf(name, sizeof name, "%s", b ? b + 1 : src);
    }
    cJSON_Delete(m);
    const char *out = dest ? dest : name;
    FILE *f = strcmp(out, "-") == 0 ? stdout : fopen(out, "wb");
    if (!f || fwrite(data.ptr, 1, data.len, f) != data.len) {
      rc = probe_cli_err(1, "artifact", "cannot write %s: %s", out, strerror(errno));
    } else if (f != stdout) {
      fprintf(stderr, "probe artifact: wrote %zu bytes to %s\n", data.len, out);
    }
    if (f && f != stdout && fclose(f) != 0 && rc == 0)
      rc = probe_cli_err(1, "artifact", "cannot write %s: %s", out, strerror(errno));
  }
  pmcp_buf_dispose(&data);
  pmcp_buf_dispose(&meta);
  pmcp_store_free(s);
  return rc ? 1 : 0;
}

int probe_cmd_artifact(const probe_globals *g, int argc, char **argv)
{
  if (argc < 2 || probe_cli_is_help(argv[1])) {
    artifact_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const char *sub = argv[1];
  if (strcmp(sub, "add") == 0 || strcmp(sub, "ref") == 0)
    return add_or_ref(g, sub[0] == 'r', argc - 2, argv + 2);
  if (strcmp(sub, "download") == 0)
    return download(g, argc - 2, argv + 2);
  if (strcmp(sub, "list") == 0) {
    argv[1] = (char *)"artifact";
    return probe_cmd_list(g, argc, argv);
  }
  if (strcmp(sub, "label") == 0 || strcmp(sub, "promote") == 0) {
    int want = sub[0] == 'l' ? 5 : 3;
    if (argc > 2 && probe_cli_is_help(argv[2])) {
      artifact_usage(stdout);
      return 0;
    }
    if (argc != want)
      return probe_cli_err(2, "artifact", "usage: probe artifact %s", want == 5
                                              ? "label REF VERSION LABEL" : "promote REF");
    int64_t version = 0;
    if (want == 5 && (probe_cli_int(argv[3], &version) || version < 1))
      return probe_cli_err(2, "artifact", "'%s' is not a version number", argv[3]);
    pmcp_store *s;
    pmcp_tenant t;
    if (probe_cli_open(g, 0, &s, &t))
      return 1;
    char rb[300];
    int rc = want == 5 ? pmcp_store_artifact_label(s, t, aref(argv[2], rb, sizeof rb), version,
                                                   argv[4])
                       : pmcp_store_artifact_promote(s, t, aref(argv[2], rb, sizeof rb));
    if (rc)
      probe_cli_fail("artifact", s, rc);
    pmcp_store_free(s);
    return rc ? 1 : 0;
  }
  return probe_cli_err(2, "artifact", "unknown subcommand '%s' (add, ref, label, promote, "
                                      "download, list)", sub);
}
