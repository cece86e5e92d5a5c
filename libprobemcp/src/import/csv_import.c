/* SPDX-License-Identifier: MIT */
/* `probe import csv FILE|DIR`: metric logs as CSV, in two shapes.
 *  - Long ("plain"): columns step, key, value (any order; "name" or
 *    "metric" for key; optional "timestamp" / "wall_time" in seconds).
 *  - Wide (PyTorch Lightning's CSVLogger metrics.csv): a "step" column and
 *    one column per metric (epoch included); rows are sparse, an empty cell
 *    means "not logged at this row". hparams.yaml beside the file becomes
 *    the run's configuration.
 * A folder is searched recursively for metrics.csv files (a Lightning
 * lightning_logs/ folder: one run per version_N). A run is keyed by the
 * SHA-256 of its CSV, so importing the same file again adds nothing. */
#include "import/import.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "import/csv.h"
#include "util/yaml.h"
#include "probemcp/error.h"
#include "util/buf.h"

typedef struct hp_ctx {
  pmcp__imp_ctx *cx;
} hp_ctx;

static int hp_cb(void *ud, const char *path, const pmcp__imp_value *v,
                 int line)
{
  hp_ctx *h = ud;
  return pmcp__imp_run_attr(h->cx, PMCP__IA_CONFIG, path, v);
}

int pmcp__imp_hparams_yaml(pmcp__imp_ctx *cx, const char *dir)
{
  char *path = pmcp__imp_join(dir, "hparams.yaml");
  if (!path)
    return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
  struct stat st;
  int rc = 0;
  if (stat(path, &st) == 0) {
    char *buf;
    size_t len;
    rc = pmcp__imp_read_file(cx, path, &buf, &len);
    if (rc == 0) {
      hp_ctx h = {cx};
      int line = 0;
      const char *why = NULL;
      rc = pmcp__yaml_parse(buf, len, hp_cb, &h, &line, &why);
      if (rc == PMCP_EPARSE)
        rc = pmcp__imp_fail(cx, PMCP_ECORRUPT, "%s: line %d: %s", path,
                            line, why);
      else if (rc && cx->err.len == 0)
        rc = pmcp__imp_fail(cx, rc, "%s: %s", path, pmcp_strerror(rc));
      free(buf);
    }
  }
  free(path);
  return rc;
}

static int col_is(const char *name, const char *const *alts)
{
  for (; *alts; alts++)
    if (strcmp(name, *alts) == 0)
      return 1;
  return 0;
}

/* The run's display name: the folder for metrics.csv (version_3), else
 * the file name without ".csv". */
static char *display_name(const char *path)
{
  const char *b = pmcp__imp_basename(path);
  if (strcmp(b, "metrics.csv") == 0) {
    char *dir = pmcp__imp_dirname(path);
    if (dir) {
      char *rp = realpath(dir, NULL);
      const char *db = pmcp__imp_basename(rp ? rp : dir);
      char *name = (*db && strcmp(db, "/") != 0) ? strdup(db) : NULL;
      free(rp);
      free(dir);
      if (name)
        return name;
    }
  }
  size_t n = strlen(b);
  if (n > 4 && strcmp(b + n - 4, ".csv") == 0)
    n -= 4;
  char *s = malloc(n + 1);
  if (s) {
    memcpy(s, b, n);
    s[n] = '\0';
  }
  return s;
}

static int import_one(pmcp__imp_ctx *cx, const char *path)
{
  char *buf;
  size_t len;
  int rc = pmcp__imp_read_file(cx, path, &buf, &len);
  if (rc)
    return rc;
  char hex[65];
  char key[96];
  char *name = NULL;
  pmcp__csv c;
  pmcp__csv_init(&c, buf, len);
  char **cols = NULL;
  size_t ncol = 0;
  int k = pmcp__csv_row(&c);
  if (k == 0) {
    rc = pmcp__imp_fail(cx, PMCP_ECORRUPT, "%s: empty file (no header line)",
                        path);
    goto out;
  }
  if (k < 0)
    goto bad_row;
  ncol = c.n;
  cols = calloc(ncol, sizeof *cols);
  if (!cols)
    goto oom;
  for (size_t i = 0; i < ncol; i++) {
    cols[i] = strdup(pmcp__csv_field(&c, i, NULL));
    if (!cols[i])
      goto oom;
  }
  static const char *const steps[] = {"step", NULL};
  static const char *const keys[] = {"key", "name", "metric", NULL};
  static const char *const vals[] = {"value", NULL};
  static const char *const times[] = {"timestamp", "wall_time", "time", NULL};
  long step_col = -1, key_col = -1, val_col = -1, time_col = -1;
  for (size_t i = 0; i < ncol; i++) {
    long *slot = col_is(cols[i], steps)  ? &step_col
                 : col_is(cols[i], keys) ? &key_col
                 : col_is(cols[i], vals) ? &val_col
                 : col_is(cols[i], times) ? &time_col
                                          : NULL;
    if (cols[i][0] == '\0') {
      rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                          "%s: line %d: column %zu has no name", path,
                          c.row_line, i + 1);
      goto out;
    }
    if (slot && *slot >= 0) {
      rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                          "%s: line %d: column \"%s\" appears twice", path,
                          c.row_line, cols[i]);
      goto out;
    }
    if (slot)
      *slot = (long)i;
    for (size_t j = 0; j < i; j++)
      if (strcmp(cols[i], cols[j]) == 0) {
        rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                            "%s: line %d: column \"%s\" appears twice", path,
                            c.row_line, cols[i]);
        goto out;
      }
  }
  int longform = step_col >= 0 && key_col >= 0 && val_col >= 0 &&
                 ncol == 3u + (time_col >= 0);
  if (step_col < 0) {
    rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                        "%s: line %d: no \"step\" column (expected a "
                        "Lightning metrics.csv or step,key,value)",
                        path, c.row_line);
    goto out;
  }
  if (!longform)
    time_col = -1; /* in a wide file every other column is a metric */

  if (pmcp__imp_sha256_hex(buf, len, hex))
    goto oom;
  snprintf(key, sizeof key, "csv:%.32s", hex);
  name = cx->run_name ? strdup(cx->run_name) : display_name(path);
  if (!name)
    goto oom;
  pmcp__imp_run run = {key, name, NULL, "csv", NULL, NULL, 0, -1, -1,
                       NULL, NULL, NULL, NULL, NULL};
  if ((rc = pmcp__imp_run_begin(cx, &run)))
    goto out;
  if (cx->skipping)
    goto end;
  if (!longform) {
    char *dir = pmcp__imp_dirname(path);
    if (!dir)
      goto oom;
    rc = pmcp__imp_hparams_yaml(cx, dir);
    free(dir);
    if (rc)
      goto out;
  }
  uint64_t rows = 0;
  while ((k = pmcp__csv_row(&c)) == 1) {
    if (c.n != ncol) {
      rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                          "%s: line %d: %zu fields where the header has %zu",
                          path, c.row_line, c.n, ncol);
      goto out;
    }
    size_t fl;
    const char *f = pmcp__csv_field(&c, (size_t)step_col, &fl);
    int64_t step;
    double dstep;
    if (pmcp__imp_parse_int64(f, fl, &step) != 0) {
      /* some loggers write integral steps as floats ("10.0") */
      if (pmcp__imp_parse_double(f, fl, &dstep) == 0 && isfinite(dstep) &&
          dstep == floor(dstep) && fabs(dstep) < 9e15) {
        step = (int64_t)dstep;
      } else {
        rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                            "%s: line %d: step \"%.40s\" is not an integer",
                            path, c.row_line, f);
        goto out;
      }
    }
    double wall = NAN;
    if (time_col >= 0) {
      f = pmcp__csv_field(&c, (size_t)time_col, &fl);
      if (fl && pmcp__imp_parse_double(f, fl, &wall) != 0) {
        rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                            "%s: line %d: %s \"%.40s\" is not a number",
                            path, c.row_line, cols[time_col], f);
        goto out;
      }
    }
    for (size_t i = 0; i < ncol; i++) {
      if ((long)i == step_col || (long)i == time_col ||
          (longform && (long)i == key_col))
        continue;
      f = pmcp__csv_field(&c, i, &fl);
      if (fl == 0)
        continue; /* sparse: not logged at this row */
      double v;
      if (pmcp__imp_parse_double(f, fl, &v) != 0) {
        rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                            "%s: line %d: column \"%s\": \"%.40s\" is not "
                            "a number",
                            path, c.row_line, cols[i], f);
        goto out;
      }
      const char *mkey = cols[i];
      if (longform) {
        size_t kl;
        mkey = pmcp__csv_field(&c, (size_t)key_col, &kl);
        if (kl == 0) {
          rc = pmcp__imp_fail(cx, PMCP_ECORRUPT, "%s: line %d: empty key",
                              path, c.row_line);
          goto out;
        }
      }
      if ((rc = pmcp__imp_scalar(cx, mkey, step, wall, v)))
        goto out;
    }
    if (++rows % 8192 == 0)
      pmcp__imp_progress(cx, "csv", (uint64_t)(c.p - buf), len);
  }
  if (k < 0)
    goto bad_row;
end:
  rc = pmcp__imp_run_end(cx);
  pmcp__imp_progress(cx, "csv", len, len);
  goto out;
bad_row:
  if (k == -2)
    goto oom;
  rc = pmcp__imp_fail(cx, PMCP_ECORRUPT, "%s: line %d: %s", path,
                      c.row_line, c.why);
  goto out;
oom:
  rc = pmcp__imp_fail(cx, PMCP_ENOMEM, "%s: out of memory", path);
out:
  if (cols)
    for (size_t i = 0; i < ncol; i++)
      free(cols[i]);
  free(cols);
  free(name);
  pmcp__csv_dispose(&c);
  free(buf);
  return rc;
}

typedef struct files {
  char **v;
  size_t n, cap;
} files;

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int find_metrics(pmcp__imp_ctx *cx, const char *dir, int depth,
                        files *fs)
{
  if (depth > 32)
    return pmcp__imp_fail(cx, PMCP_EINVAL, "%s: folders nested too deeply",
                          dir);
  DIR *d = opendir(dir);
  if (!d)
    return pmcp__imp_fail(cx, PMCP_EIO, "%s: cannot open folder: %s", dir,
                          strerror(errno));
  struct dirent *e;
  int rc = 0;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    char *p = pmcp__imp_join(dir, e->d_name);
    struct stat st;
    if (!p) {
      rc = PMCP_ENOMEM;
    } else if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
      rc = find_metrics(cx, p, depth + 1, fs);
    } else if (strcmp(e->d_name, "metrics.csv") == 0) {
      if (fs->n == fs->cap) {
        size_t cap = fs->cap ? fs->cap * 2 : 16;
        char **v = realloc(fs->v, cap * sizeof *v);
        if (!v) {
          rc = PMCP_ENOMEM;
        } else {
          fs->v = v;
          fs->cap = cap;
        }
      }
      if (rc == 0) {
        fs->v[fs->n++] = p;
        p = NULL;
      }
    }
    free(p);
  }
  closedir(d);
  if (rc == PMCP_ENOMEM)
    pmcp__imp_fail(cx, rc, "out of memory");
  return rc;
}

int pmcp__import_csv(pmcp__imp_ctx *cx, const char *path)
{
  struct stat st;
  if (stat(path, &st) != 0)
    return pmcp__imp_fail(cx, PMCP_EIO, "%s: %s", path, strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return import_one(cx, path);
  files fs = {0};
  int rc = find_metrics(cx, path, 0, &fs);
  if (rc == 0 && fs.n == 0)
    rc = pmcp__imp_fail(cx, PMCP_ENOTFOUND,
                        "%s: no metrics.csv in this folder", path);
  if (rc == 0 && fs.n > 1 && cx->run_name)
    rc = pmcp__imp_fail(cx, PMCP_EINVAL,
                        "%s: --name names one run, but the folder holds %zu",
                        path, fs.n);
  if (fs.n > 1)
    qsort(fs.v, fs.n, sizeof *fs.v, cmp_str);
  for (size_t i = 0; rc == 0 && i < fs.n; i++)
    rc = import_one(cx, fs.v[i]);
  for (size_t i = 0; i < fs.n; i++)
    free(fs.v[i]);
  free(fs.v);
  return rc;
}
