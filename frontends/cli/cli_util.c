/* SPDX-License-Identifier: MIT */
/* probe: shared helpers for the store commands (see cli_util.h). */
#include "cli_util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


int probe_cli_err(int status, const char *cmd, const char *fmt, ...)
{
  va_list ap;
  fprintf(stderr, "probe %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return status;
}

int probe_cli_fail(const char *cmd, pmcp_store *s, int rc)
{
  const char *m = s ? pmcp_store_errmsg(s) : "";
  fprintf(stderr, "probe %s: %s\n", cmd, m && *m ? m : pmcp_strerror(rc));
  return 1;
}

int probe_cli_open(const probe_globals *g, unsigned flags, pmcp_store **s, pmcp_tenant *t)
{
  int rc = pmcp_store_open(s, g->store, flags);
  if (rc) {
    probe_cli_fail("store", *s, rc);
    pmcp_store_free(*s);
    *s = NULL;
    return 1;
  }
  rc = pmcp_store_tenant(*s, g->tenant, flags & PMCP_STORE_CREATE, t);
  if (rc) {
    if (rc == PMCP_ENOTFOUND)
      fprintf(stderr, "probe: no tenant '%s' in this store (create it with 'probe --tenant %s init')\n",
              g->tenant ? g->tenant : "default", g->tenant ? g->tenant : "default");
    else
      probe_cli_fail("store", *s, rc);
    pmcp_store_free(*s);
    *s = NULL;
    return 1;
  }
  return 0;
}

int probe_cli_read_file(const char *path, pmcp_buf *out)
{
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f)
    return -1;
  out->len = 0;
  char tmp[65536];
  size_t n;
  while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) {
    if (out->len + n + 1 > out->cap) {
      size_t cap = out->cap ? out->cap * 2 : 65536;
      while (cap < out->len + n + 1)
        cap *= 2;
      char *p = realloc(out->ptr, cap);
      if (!p) {
        if (f != stdin)
          fclose(f);
        errno = ENOMEM;
        return -1;
      }
      out->ptr = p;
      out->cap = cap;
    }
    memcpy(out->ptr + out->len, tmp, n);
    out->len += n;
  }
  int err = ferror(f);
  if (f != stdin)
    fclose(f);
  if (err) {
    errno = EIO;
    return -1;
  }
  if (!out->ptr) {
    out->ptr = malloc(1);
    if (!out->ptr)
      return -1;
    out->cap = 1;
  }
  out->ptr[out->len] = '\0';
  return 0;
}

int probe_cli_text_arg(const char *arg, pmcp_buf *out)
{
  if (arg[0] == '@')
    return probe_cli_read_file(arg + 1, out);
  size_t n = strlen(arg);
  char *p = malloc(n + 1);
  if (!p)
    return -1;
  memcpy(p, arg, n + 1);
  pmcp_buf_dispose(out);
  out->ptr = p;
  out->len = n;
  out->cap = n + 1;
  return 0;
}

int probe_cli_is_help(const char *a)
{
  return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

int probe_cli_opt(int argc, char **argv, int *i, const char *name, const char **val,
                  const char *cmd)
{
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) != 0)
    return 0;
  if (a[n] == '=') {
    *val = a + n + 1;
    return 1;
  }
  if (a[n] != '\0')
    return 0;
  if (*i + 1 >= argc) {
    probe_cli_err(2, cmd, "%s needs a value", name);
    return -1;
  }
  *val = argv[++*i];
  return 1;
}

int probe_cli_opts(int argc, char **argv, int *i, const probe_cli_optv *opts, const char *cmd)
{
  for (const probe_cli_optv *o = opts; o->name; o++) {
    int m = probe_cli_opt(argc, argv, i, o->name, o->val, cmd);
    if (m)
      return m;
  }
  return 0;
}

int probe_cli_json_arg(const char *cmd, int argc, char **argv, const char *usage, int *json)
{
  *json = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0)
      *json = 1;
    else
      return probe_cli_err(2, cmd, "unexpected argument '%s'\n%s", argv[i], usage);
  }
  return 0;
}

int probe_cli_done(const char *cmd, pmcp_store *s, int rc)
{
  if (rc)
    probe_cli_fail(cmd, s, rc);
  pmcp_store_free(s);
  return rc ? 1 : 0;
}

int probe_cli_int(const char *s, int64_t *out)
{
  if (!s || !*s)
    return -1;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (*end || errno)
    return -1;
  *out = v;
  return 0;
}

int probe_cli_double(const char *s, double *out)
{
  if (!s || !*s)
    return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  /* ERANGE also flags a subnormal result, which is a double all the same:
   * only what overflows or vanishes to zero is out of range */
  if (*end || (errno == ERANGE && (isinf(v) || v == 0)))
    return -1;
  *out = v;
  return 0;
}

int probe_cli_time(const char *s, int64_t *out)
{
  if (probe_cli_int(s, out) == 0)
    return 0;
  /* every ISO 8601 spelling the tools read (an offset, a space, a date
   * alone), never a part of it silently */
  return pmcp_time_parse(s, out) ? -1 : 0;
}
