/* SPDX-License-Identifier: MIT */
/* `probe import tensorboard PATH`: PATH is an event file or a folder
 * searched recursively for files whose name contains "tfevents". Every
 * folder holding event files is one run (TensorBoard's own notion of a
 * run); several files in one folder (a resumed run) merge into it, in name
 * order, which is time order since the names start with the creation
 * time. A run's stable key is its first event file's name (creation time,
 * host, pid, sequence number), so importing the same logs again, from any
 * place, adds nothing. */
#include "import/import.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "import/tb_event.h"
#include "import/tfrecord.h"
#include "probemcp/error.h"

typedef struct paths {
  char **v;
  size_t n, cap;
  uint64_t bytes;
} paths;

static int push(paths *ps, char *p)
{
  if (ps->n == ps->cap) {
    size_t cap = ps->cap ? ps->cap * 2 : 16;
    char **v = realloc(ps->v, cap * sizeof *v);
    if (!v)
      return PMCP_ENOMEM;
    ps->v = v;
    ps->cap = cap;
  }
  ps->v[ps->n++] = p;
  return 0;
}

static void paths_free(paths *ps)
{
  for (size_t i = 0; i < ps->n; i++)
    free(ps->v[i]);
  free(ps->v);
}

static int is_event_file(const char *name)
{
  return strstr(name, "tfevents") != NULL;
}

static int walk(pmcp__imp_ctx *cx, const char *dir, int depth, paths *ps)
{
  if (depth > 64)
    return pmcp__imp_fail(cx, PMCP_EINVAL, "%s: folders nested too deeply",
                          dir);
  DIR *d = opendir(dir);
  if (!d)
    return pmcp__imp_fail(cx, PMCP_EIO, "%s: cannot open folder: %s", dir,
                          strerror(errno));
  int rc = 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    char *p = pmcp__imp_join(dir, e->d_name);
    if (!p) {
      rc = PMCP_ENOMEM;
      break;
    }
    struct stat st;
    /* lstat for folders: a symlinked folder could loop; files may be
     * symlinks (stat follows them). */
    if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
      rc = walk(cx, p, depth + 1, ps);
      free(p);
    } else if (is_event_file(e->d_name) && stat(p, &st) == 0 &&
               S_ISREG(st.st_mode)) {
      ps->bytes += (uint64_t)st.st_size;
      rc = push(ps, p);
      if (rc)
        free(p);
    } else {
      free(p);
    }
  }
  closedir(d);
  if (rc == PMCP_ENOMEM)
    pmcp__imp_fail(cx, rc, "out of memory");
  return rc;
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int import_file(pmcp__imp_ctx *cx, pmcp__tb_state *st,
                       const char *path, uint64_t *done, uint64_t total)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return pmcp__imp_fail(cx, PMCP_EIO, "%s: cannot open: %s", path,
                          strerror(errno));
  cx->n.files++;
  pmcp__tfrec r = {0};
  r.f = f;
  int rc = 0;
  uint64_t nrec = 0;
  for (;;) {
    const uint8_t *data;
    size_t len;
    uint64_t off = r.off;
    int k = pmcp__tfrec_next(&r, &data, &len);
    if (k == 0)
      break;
    if (k == -1) {
      rc = pmcp__imp_fail(cx, PMCP_ECORRUPT, "%s: byte offset %llu: %s",
                          path, (unsigned long long)r.err_off, r.why);
      break;
    }
    if (k < 0) {
      rc = pmcp__imp_fail(cx, PMCP_EIO, "%s: byte offset %llu: %s", path,
                          (unsigned long long)r.err_off, r.why);
      break;
    }
    int sink_err = 0;
    k = pmcp__tb_event(cx, st, data, len, &sink_err);
    if (k && sink_err) {
      rc = k;
      break;
    }
    if (k == -2) {
      rc = pmcp__imp_fail(cx, PMCP_ENOMEM, "%s: out of memory", path);
      break;
    }
    if (k) {
      rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                          "%s: byte offset %llu: malformed event record",
                          path, (unsigned long long)off);
      break;
    }
    if (++nrec % 4096 == 0)
      pmcp__imp_progress(cx, "tensorboard", *done + r.off, total);
  }
  *done += r.off;
  pmcp__imp_progress(cx, "tensorboard", *done, total);
  pmcp__tfrec_dispose(&r);
  fclose(f);
  return rc;
}

/* events.out.tfevents.<unix seconds>.<host>...: the file's creation
 * time, the closest thing to a start time the format records. */
static int64_t file_time_ms(const char *name)
{
  const char *p = strstr(name, "tfevents.");
  if (!p)
    return -1;
  p += 9;
  int64_t v = 0;
  int digits = 0;
  while (*p >= '0' && *p <= '9' && digits < 12) {
    v = v * 10 + (*p++ - '0');
    digits++;
  }
  return digits >= 9 && (*p == '.' || *p == '\0') ? v * 1000 : -1;
}

/* The run's display name: its folder relative to the imported PATH, or
 * the folder's own name when PATH is the run folder (or one file). */
static const char *run_name(const char *root, const char *dir, char **tmp)
{
  *tmp = NULL;
  size_t lr = strlen(root);
  while (lr > 1 && root[lr - 1] == '/')
    lr--;
  if (strncmp(dir, root, lr) == 0 && dir[lr] == '/' && dir[lr + 1])
    return dir + lr + 1;
  const char *b = pmcp__imp_basename(dir);
  if (strcmp(b, ".") == 0 || strcmp(b, "..") == 0 || b[0] == '\0' ||
      b[0] == '/') {
    char *rp = realpath(dir, NULL);
    if (rp) {
      *tmp = rp;
      b = pmcp__imp_basename(rp);
      if (b[0] == '\0' || b[0] == '/')
        b = "tensorboard";
      return b;
    }
    return "tensorboard";
  }
  return b;
}

int pmcp__import_tensorboard(pmcp__imp_ctx *cx, const char *path)
{
  struct stat sb;
  if (stat(path, &sb) != 0)
    return pmcp__imp_fail(cx, PMCP_EIO, "%s: %s", path, strerror(errno));
  paths ps = {0};
  int rc = 0;
  const char *root = path;
  if (S_ISDIR(sb.st_mode)) {
    rc = walk(cx, path, 0, &ps);
    if (rc == 0 && ps.n == 0)
      rc = pmcp__imp_fail(cx, PMCP_ENOTFOUND,
                          "%s: no TensorBoard event files (names containing "
                          "\"tfevents\") in this folder",
                          path);
  } else {
    char *p = strdup(path);
    rc = p ? push(&ps, p) : PMCP_ENOMEM;
    if (rc)
      free(p);
    ps.bytes = (uint64_t)sb.st_size;
    root = NULL;
  }
  if (rc) {
    paths_free(&ps);
    return rc == PMCP_ENOMEM ? pmcp__imp_fail(cx, rc, "out of memory") : rc;
  }
  qsort(ps.v, ps.n, sizeof *ps.v, cmp_str);

  uint64_t done = 0;
  size_t i = 0;
  while (rc == 0 && i < ps.n) {
    char *dir = pmcp__imp_dirname(ps.v[i]);
    if (!dir) {
      rc = pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
      break;
    }
    size_t j = i;
    size_t dl = strlen(dir);
    while (j < ps.n && strncmp(ps.v[j], dir, dl) == 0 &&
           ps.v[j][dl] == '/' && !strchr(ps.v[j] + dl + 1, '/'))
      j++;
    if (j == i) /* dirname "." of a bare file name */
      j = i + 1;
    char *tmp;
    const char *name =
        cx->run_name ? cx->run_name : run_name(root ? root : dir, dir, &tmp);
    if (cx->run_name)
      tmp = NULL;
    char key[320];
    snprintf(key, sizeof key, "tensorboard:%.300s",
             pmcp__imp_basename(ps.v[i]));
    pmcp__imp_run run = {key,  name, NULL, "tensorboard", NULL, NULL, 0,
                         -1,   -1,   NULL, NULL,          NULL, NULL, NULL};
    run.start_ms = file_time_ms(pmcp__imp_basename(ps.v[i]));
    rc = pmcp__imp_run_begin(cx, &run);
    free(tmp);
    if (rc == 0 && cx->skipping) {
      for (size_t k = i; k < j; k++) {
        struct stat fs;
        if (stat(ps.v[k], &fs) == 0)
          done += (uint64_t)fs.st_size;
      }
    } else if (rc == 0) {
      /* Lightning's TensorBoardLogger writes hparams.yaml beside the
       * event files */
      rc = pmcp__imp_hparams_yaml(cx, dir);
      pmcp__tb_state st = {0};
      for (size_t k = i; rc == 0 && k < j; k++)
        rc = import_file(cx, &st, ps.v[k], &done, ps.bytes);
      cx->n.values_skipped += st.skipped;
      pmcp__tb_state_dispose(&st);
    }
    if (rc == 0)
      rc = pmcp__imp_run_end(cx);
    free(dir);
    i = j;
  }
  paths_free(&ps);
  return rc;
}
