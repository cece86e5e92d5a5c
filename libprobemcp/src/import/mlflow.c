/* SPDX-License-Identifier: MIT */
/* `probe import mlflow DIR`: an MLflow file store (the mlruns/ folder).
 *   <exp>/meta.yaml                      experiment: experiment_id, name,
 *                                        lifecycle_stage, creation_time
 *   <exp>/<run>/meta.yaml                run: run_uuid, status, start_time,
 *                                        end_time, lifecycle_stage, user_id
 *   <exp>/<run>/params/<key>             one value per file
 *   <exp>/<run>/tags/<key>               one value per file
 *   <exp>/<run>/metrics/<key>            lines "<ms> <value> [<step>]"
 *   <exp>/<run>/artifacts/...            files (text ones are imported)
 *   .trash/<exp>/...                     deleted experiments
 * Keys may contain '/', which the store writes as sub-folders. Runs are
 * keyed by their uuid, so a second import of the same store adds nothing. */
#include "import/import.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/yaml.h"
#include "probemcp/error.h"
#include "util/buf.h"
#include "util/cnum.h"

/* Text artifacts larger than this are left out (and counted as skipped). */
#define MAX_TEXT_ARTIFACT (1u << 20)

/* ---- meta.yaml as a flat dictionary ---- */

typedef struct meta {
  char *keys[32];
  char *vals[32]; /* NULL for YAML null */
  size_t n;
} meta;

static void meta_free(meta *m)
{
  for (size_t i = 0; i < m->n; i++) {
    free(m->keys[i]);
    free(m->vals[i]);
  }
  m->n = 0;
}

static int meta_cb(void *ud, const char *path, const pmcp__imp_value *v,
                   int line)
{
  meta *m = ud;
  if (strchr(path, '/') || m->n == sizeof m->keys / sizeof m->keys[0])
    return 0; /* nested or surplus keys: nothing we read */
  char tmp[64];
  const char *s = NULL;
  switch (v->type) {
  case PMCP__IV_NULL: break;
  case PMCP__IV_INT: snprintf(tmp, sizeof tmp, "%lld", (long long)v->i); s = tmp; break;
  case PMCP__IV_FLOAT: pmcp__c_snprintf(tmp, sizeof tmp, "%.17g", v->f); s = tmp; break;
  case PMCP__IV_BOOL: s = v->i ? "true" : "false"; break;
  default: s = v->s; break;
  }
  m->keys[m->n] = strdup(path);
  m->vals[m->n] = s ? strdup(s) : NULL;
  if (!m->keys[m->n] || (s && !m->vals[m->n])) {
    free(m->keys[m->n]);
    free(m->vals[m->n]);
    return PMCP_ENOMEM;
  }
  m->n++;
  return 0;
}

static const char *meta_get(const meta *m, const char *key)
{
  for (size_t i = 0; i < m->n; i++)
    if (strcmp(m->keys[i], key) == 0)
      return m->vals[i];
  return NULL;
}

static int read_meta(pmcp__imp_ctx *cx, const char *dir, meta *m)
{
  char *path = pmcp__imp_join(dir, "meta.yaml");
  if (!path)
    return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
  char *buf;
  size_t len;
  int rc = pmcp__imp_read_file(cx, path, &buf, &len);
  if (rc == 0) {
    int line = 0;
    const char *why = NULL;
    rc = pmcp__yaml_parse(buf, len, meta_cb, m, &line, &why);
    if (rc == PMCP_EPARSE)
      rc = pmcp__imp_fail(cx, PMCP_ECORRUPT, "%s: line %d: %s", path, line,
                          why);
    else if (rc)
      rc = pmcp__imp_fail(cx, rc, "%s: %s", path, pmcp_strerror(rc));
    free(buf);
  }
  free(path);
  return rc;
}

static int64_t meta_ms(const meta *m, const char *key)
{
  const char *s = meta_get(m, key);
  int64_t v;
  if (!s || pmcp__imp_parse_int64(s, strlen(s), &v) != 0)
    return -1;
  return v;
}

static int has_meta(const char *dir)
{
  char *p = pmcp__imp_join(dir, "meta.yaml");
  struct stat st;
  int ok = p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
  free(p);
  return ok;
}

/* ---- folder listings ---- */

typedef struct names {
  char **v;
  size_t n, cap;
} names;

static void names_free(names *ns)
{
  for (size_t i = 0; i < ns->n; i++)
    free(ns->v[i]);
  free(ns->v);
  memset(ns, 0, sizeof *ns);
}

static int cmp_name(const void *a, const void *b)
{
  const char *x = *(char *const *)a, *y = *(char *const *)b;
  /* numeric experiment ids in number order, then the rest by name */
  char *ex, *ey;
  long long nx = strtoll(x, &ex, 10), ny = strtoll(y, &ey, 10);
  int dx = *x && !*ex, dy = *y && !*ey;
  if (dx && dy && nx != ny)
    return nx < ny ? -1 : 1;
  if (dx != dy)
    return dx ? -1 : 1;
  return strcmp(x, y);
}

/* Entries of @p dir (files if @p want_files, else folders), sorted. */
static int list(pmcp__imp_ctx *cx, const char *dir, int want_files,
                names *out)
{
  memset(out, 0, sizeof *out);
  DIR *d = opendir(dir);
  if (!d)
    return pmcp__imp_fail(cx, PMCP_EIO, "%s: cannot open folder: %s", dir,
                          strerror(errno));
  struct dirent *e;
  int rc = 0;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    char *p = pmcp__imp_join(dir, e->d_name);
    struct stat st;
    int ok = p && lstat(p, &st) == 0 &&
             (want_files ? S_ISREG(st.st_mode) : S_ISDIR(st.st_mode));
    free(p);
    if (!ok)
      continue;
    if (out->n == out->cap) {
      size_t cap = out->cap ? out->cap * 2 : 16;
      char **v = realloc(out->v, cap * sizeof *v);
      if (!v) {
        rc = PMCP_ENOMEM;
        break;
      }
      out->v = v;
      out->cap = cap;
    }
    if (!(out->v[out->n] = strdup(e->d_name))) {
      rc = PMCP_ENOMEM;
      break;
    }
    out->n++;
  }
  closedir(d);
  if (rc) {
    names_free(out);
    return pmcp__imp_fail(cx, rc, "out of memory");
  }
  if (out->n > 1)
    qsort(out->v, out->n, sizeof *out->v, cmp_name);
  return 0;
}

/* Calls @p fn for every regular file under @p dir (recursively), with its
 * path relative to the top folder ("a/b") as the key. A missing folder is
 * an empty one. */
typedef int (*file_fn)(pmcp__imp_ctx *cx, const char *path, const char *key,
                       void *ud);

static int walk_files(pmcp__imp_ctx *cx, const char *dir, pmcp_buf *key,
                      int depth, file_fn fn, void *ud)
{
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return 0;
  if (depth > 32)
    return pmcp__imp_fail(cx, PMCP_EINVAL, "%s: folders nested too deeply",
                          dir);
  names files, dirs;
  int rc = list(cx, dir, 1, &files);
  if (rc)
    return rc;
  if ((rc = list(cx, dir, 0, &dirs))) {
    names_free(&files);
    return rc;
  }
  size_t base = key->len;
  for (size_t i = 0; rc == 0 && i < files.n + dirs.n; i++) {
    int is_file = i < files.n;
    const char *name = is_file ? files.v[i] : dirs.v[i - files.n];
    key->len = base;
    if ((base && pmcp__buf_putc(key, '/')) || pmcp__buf_puts(key, name)) {
      rc = pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
      break;
    }
    char *p = pmcp__imp_join(dir, name);
    if (!p) {
      rc = pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
      break;
    }
    rc = is_file ? fn(cx, p, key->ptr, ud)
                 : walk_files(cx, p, key, depth + 1, fn, ud);
    free(p);
  }
  key->len = base;
  if (key->ptr)
    key->ptr[base] = '\0';
  names_free(&files);
  names_free(&dirs);
  return rc;
}

static int walk(pmcp__imp_ctx *cx, const char *run_dir, const char *sub,
                file_fn fn, void *ud)
{
  char *dir = pmcp__imp_join(run_dir, sub);
  if (!dir)
    return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
  pmcp_buf key = PMCP_BUF_INIT;
  int rc = walk_files(cx, dir, &key, 0, fn, ud);
  pmcp_buf_dispose(&key);
  free(dir);
  return rc;
}

/* ---- per-run contents ---- */

static int read_value_file(pmcp__imp_ctx *cx, const char *path, char **buf,
                           size_t *len)
{
  int rc = pmcp__imp_read_file(cx, path, buf, len);
  if (rc)
    return rc;
  if (!pmcp__imp_utf8_text(*buf, *len)) {
    free(*buf);
    return pmcp__imp_fail(cx, PMCP_ECORRUPT, "%s: not UTF-8 text", path);
  }
  return 0;
}

static int on_param(pmcp__imp_ctx *cx, const char *path, const char *key,
                    void *ud)
{
  char *buf;
  size_t len;
  int rc = read_value_file(cx, path, &buf, &len);
  if (rc)
    return rc;
  pmcp__imp_value v;
  pmcp__imp_infer_value(buf, &v);
  rc = pmcp__imp_run_attr(cx, PMCP__IA_PARAM, key, &v);
  free(buf);
  return rc;
}

static int on_tag(pmcp__imp_ctx *cx, const char *path, const char *key,
                  void *ud)
{
  char *buf;
  size_t len;
  int rc = read_value_file(cx, path, &buf, &len);
  if (rc)
    return rc;
  rc = pmcp__imp_run_attr_str(cx, PMCP__IA_TAG, key, buf);
  free(buf);
  return rc;
}

static size_t next_tok(const char *s, size_t i, size_t end, size_t *tlen)
{
  while (i < end && (s[i] == ' ' || s[i] == '\t'))
    i++;
  size_t j = i;
  while (j < end && s[j] != ' ' && s[j] != '\t')
    j++;
  *tlen = j - i;
  return i;
}

static int on_metric(pmcp__imp_ctx *cx, const char *path, const char *key,
                     void *ud)
{
  char *buf;
  size_t len;
  int rc = pmcp__imp_read_file(cx, path, &buf, &len);
  if (rc)
    return rc;
  size_t pos = 0;
  int line = 0;
  while (rc == 0 && pos < len) {
    line++;
    const char *nl = memchr(buf + pos, '\n', len - pos);
    size_t end = nl ? (size_t)(nl - buf) : len;
    size_t e = end;
    if (e > pos && buf[e - 1] == '\r')
      e--;
    size_t t1l, t2l, t3l, t4l;
    size_t t1 = next_tok(buf, pos, e, &t1l);
    if (t1l == 0) { /* blank line */
      pos = end + 1;
      continue;
    }
    size_t t2 = next_tok(buf, t1 + t1l, e, &t2l);
    size_t t3 = next_tok(buf, t2 + t2l, e, &t3l);
    size_t t4 = next_tok(buf, t3 + t3l, e, &t4l);
    (void)t4;
    int64_t ts, step = 0;
    double v;
    if (t2l == 0 || t4l != 0 || pmcp__imp_parse_int64(buf + t1, t1l, &ts) ||
        pmcp__imp_parse_double(buf + t2, t2l, &v) ||
        (t3l && pmcp__imp_parse_int64(buf + t3, t3l, &step))) {
      rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                          "%s: line %d: expected \"<timestamp ms> <value> "
                          "<step>\"",
                          path, line);
      break;
    }
    rc = pmcp__imp_scalar(cx, key, step, (double)ts / 1000.0, v);
    pos = end + 1;
  }
  free(buf);
  return rc;
}

static int on_artifact(pmcp__imp_ctx *cx, const char *path, const char *key,
                       void *ud)
{
  struct stat st;
  if (stat(path, &st) != 0 || st.st_size > MAX_TEXT_ARTIFACT) {
    cx->n.artifacts_skipped++;
    return 0;
  }
  char *buf;
  size_t len;
  int rc = pmcp__imp_read_file(cx, path, &buf, &len);
  if (rc)
    return rc;
  if (pmcp__imp_utf8_text(buf, len))
    rc = pmcp__imp_artifact(cx, key, buf, len);
  else
    cx->n.artifacts_skipped++;
  free(buf);
  return rc;
}

static const char *status_name(const char *s)
{
  static const char *const by_num[] = {NULL, "running", "scheduled",
                                       "finished", "failed", "killed"};
  static const char *const by_text[] = {NULL, "RUNNING", "SCHEDULED",
                                        "FINISHED", "FAILED", "KILLED"};
  if (!s)
    return NULL;
  for (int i = 1; i <= 5; i++)
    if ((s[0] == '0' + i && s[1] == '\0') || strcmp(s, by_text[i]) == 0)
      return by_num[i];
  return NULL;
}

static int import_run(pmcp__imp_ctx *cx, const char *dir, const char *exp_key,
                      int exp_deleted)
{
  meta m = {0};
  int rc = read_meta(cx, dir, &m);
  if (rc) {
    meta_free(&m);
    return rc;
  }
  const char *uuid = meta_get(&m, "run_uuid");
  if (!uuid || !*uuid)
    uuid = meta_get(&m, "run_id");
  if (!uuid || !*uuid) {
    meta_free(&m);
    return pmcp__imp_fail(cx, PMCP_ECORRUPT, "%s/meta.yaml: no run_uuid",
                          dir);
  }
  for (const char *c = uuid; *c; c++)
    if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
          (*c >= 'A' && *c <= 'Z') || *c == '-' || *c == '_')) {
      meta_free(&m);
      return pmcp__imp_fail(cx, PMCP_ECORRUPT,
                            "%s/meta.yaml: run_uuid is not an id", dir);
    }
  /* The display name: run_name (MLflow >= 1.29), else the mlflow.runName
   * tag, else the old "name" field, else the uuid. */
  char *tagname = NULL;
  const char *name = meta_get(&m, "run_name");
  if (!name || !*name) {
    char *tdir = pmcp__imp_join(dir, "tags/mlflow.runName");
    size_t len;
    struct stat st;
    if (tdir && stat(tdir, &st) == 0 &&
        pmcp__imp_read_file(cx, tdir, &tagname, &len) == 0 &&
        pmcp__imp_utf8_text(tagname, len) && len)
      name = tagname;
    free(tdir);
  }
  if (!name || !*name)
    name = meta_get(&m, "name");
  if (!name || !*name)
    name = uuid;
  char key[160];
  snprintf(key, sizeof key, "mlflow:%.128s", uuid);
  /* Code state and description live in tags; the run record wants them
   * when it is created. */
  static const char *const code_tags[] = {
      "mlflow.source.name", "mlflow.source.git.commit",
      "mlflow.source.git.branch", "mlflow.source.git.repoURL",
      "mlflow.note.content"};
  char *code[5] = {NULL, NULL, NULL, NULL, NULL};
  for (int i = 0; i < 5; i++) {
    char *tp = pmcp__imp_join(dir, "tags");
    char *fp = tp ? pmcp__imp_join(tp, code_tags[i]) : NULL;
    struct stat st;
    size_t len;
    if (fp && stat(fp, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size < (1 << 20) &&
        pmcp__imp_read_file(cx, fp, &code[i], &len) == 0 &&
        (!pmcp__imp_utf8_text(code[i], len) || len == 0)) {
      free(code[i]);
      code[i] = NULL;
    }
    free(fp);
    free(tp);
  }
  const char *stage = meta_get(&m, "lifecycle_stage");
  pmcp__imp_run run = {key,
                       name,
                       exp_key,
                       "mlflow",
                       status_name(meta_get(&m, "status")),
                       meta_get(&m, "user_id"),
                       exp_deleted || (stage && strcmp(stage, "deleted") == 0),
                       meta_ms(&m, "start_time"),
                       meta_ms(&m, "end_time"),
                       code[0],
                       code[1],
                       code[2],
                       code[3],
                       code[4]};
  if (run.user && !*run.user)
    run.user = NULL;
  rc = pmcp__imp_run_begin(cx, &run);
  if (rc == 0 && !cx->skipping) {
    static const char *const info[] = {"source_name", "source_version",
                                       "entry_point_name", "artifact_uri",
                                       NULL};
    for (int i = 0; rc == 0 && info[i]; i++) {
      const char *v = meta_get(&m, info[i]);
      if (v && *v) {
        char k[64];
        snprintf(k, sizeof k, "mlflow/%s", info[i]);
        rc = pmcp__imp_run_attr_str(cx, PMCP__IA_ATTR, k, v);
      }
    }
    if (rc == 0)
      rc = walk(cx, dir, "params", on_param, NULL);
    if (rc == 0)
      rc = walk(cx, dir, "tags", on_tag, NULL);
    if (rc == 0)
      rc = walk(cx, dir, "metrics", on_metric, NULL);
    if (rc == 0)
      rc = walk(cx, dir, "artifacts", on_artifact, NULL);
  }
  if (rc == 0)
    rc = pmcp__imp_run_end(cx);
  free(tagname);
  for (int i = 0; i < 5; i++)
    free(code[i]);
  meta_free(&m);
  return rc;
}

static int import_experiment(pmcp__imp_ctx *cx, const char *dir, int trashed,
                             size_t *runs_done, size_t runs_total)
{
  meta m = {0};
  int rc = read_meta(cx, dir, &m);
  if (rc) {
    meta_free(&m);
    return rc;
  }
  const char *name = meta_get(&m, "name");
  const char *id = meta_get(&m, "experiment_id");
  if (!name || !*name || !id) {
    meta_free(&m);
    return pmcp__imp_fail(cx, PMCP_ECORRUPT,
                          "%s/meta.yaml: no experiment name or id", dir);
  }
  const char *stage = meta_get(&m, "lifecycle_stage");
  pmcp_buf key = PMCP_BUF_INIT;
  if (pmcp__buf_printf(&key, "mlflow:%s/%s", cx->project ? cx->project : "",
                       name)) {
    meta_free(&m);
    return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
  }
  /* the experiment's description: its mlflow.note.content tag */
  char *note = NULL;
  {
    char *tp = pmcp__imp_join(dir, "tags/mlflow.note.content");
    struct stat st;
    size_t len;
    if (tp && stat(tp, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size < (1 << 20) &&
        pmcp__imp_read_file(cx, tp, &note, &len) == 0 &&
        (!pmcp__imp_utf8_text(note, len) || len == 0)) {
      free(note);
      note = NULL;
    }
    free(tp);
  }
  pmcp__imp_experiment e = {key.ptr, name,
                            trashed || (stage && !strcmp(stage, "deleted")),
                            meta_ms(&m, "creation_time"), note};
  rc = pmcp__imp_add_experiment(cx, &e);
  names runs = {0};
  if (rc == 0)
    rc = list(cx, dir, 0, &runs);
  for (size_t i = 0; rc == 0 && i < runs.n; i++) {
    char *rd = pmcp__imp_join(dir, runs.v[i]);
    if (!rd) {
      rc = pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
      break;
    }
    if (has_meta(rd))
      rc = import_run(cx, rd, key.ptr, e.deleted);
    else if (strcmp(runs.v[i], "tags") != 0) /* "tags": experiment tags */
      cx->n.folders_skipped++;
    free(rd);
    pmcp__imp_progress(cx, "mlflow", ++*runs_done, runs_total);
  }
  names_free(&runs);
  pmcp_buf_dispose(&key);
  free(note);
  meta_free(&m);
  return rc;
}

typedef struct exp_dir {
  char *path;
  int trashed;
} exp_dir;

int pmcp__import_mlflow(pmcp__imp_ctx *cx, const char *root)
{
  struct stat st;
  if (stat(root, &st) != 0)
    return pmcp__imp_fail(cx, PMCP_EIO, "%s: %s", root, strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return pmcp__imp_fail(cx, PMCP_EINVAL,
                          "%s: not a folder (give the mlruns/ folder)", root);
  exp_dir exps[4096];
  size_t nexp = 0;
  size_t runs_total = 0;
  int rc = 0;
  for (int pass = 0; pass < 2 && rc == 0; pass++) {
    char *base = pass ? pmcp__imp_join(root, ".trash") : strdup(root);
    if (!base)
      return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
    names top = {0};
    if (pass == 0 || (stat(base, &st) == 0 && S_ISDIR(st.st_mode)))
      rc = list(cx, base, 0, &top);
    for (size_t i = 0; rc == 0 && i < top.n; i++) {
      if (pass == 0 && strcmp(top.v[i], ".trash") == 0)
        continue;
      char *p = pmcp__imp_join(base, top.v[i]);
      if (!p) {
        rc = pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
        break;
      }
      if (!has_meta(p)) { /* "models" (the registry), stray folders */
        free(p);
        continue;
      }
      if (nexp == sizeof exps / sizeof exps[0]) {
        free(p);
        rc = pmcp__imp_fail(cx, PMCP_ETOOBIG, "%s: too many experiments",
                            root);
        break;
      }
      names runs = {0};
      if (list(cx, p, 0, &runs) == 0)
        runs_total += runs.n;
      names_free(&runs);
      exps[nexp].path = p;
      exps[nexp].trashed = pass;
      nexp++;
    }
    names_free(&top);
    free(base);
  }
  if (rc == 0 && nexp == 0)
    rc = pmcp__imp_fail(cx, PMCP_ENOTFOUND,
                        "%s: not an MLflow file store (no <experiment "
                        "id>/meta.yaml inside)",
                        root);
  size_t runs_done = 0;
  for (size_t i = 0; rc == 0 && i < nexp; i++)
    rc = import_experiment(cx, exps[i].path, exps[i].trashed, &runs_done,
                           runs_total);
  for (size_t i = 0; i < nexp; i++)
    free(exps[i].path);
  return rc;
}
