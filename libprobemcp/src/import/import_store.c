/* SPDX-License-Identifier: MIT */
/* The store sink: what the parsers emit, written through the store API
 * (store.h) inside one transaction, so an import either lands whole or
 * leaves the store exactly as it was.
 *
 * Identity (what makes a second import add nothing):
 *   project     id from --project (or the MLflow folder's name)
 *   experiment  "<project id>.<name>" (MLflow experiments)
 *   run         "mlflow-<run uuid>", "tb-…", "csv-…", "hf-…" (the source
 *               key: a uuid, an event file name, or the file's SHA-256)
 *   paper       its arXiv id
 * A run whose id is already stored is skipped whole (its contents too).
 * Metric points are gathered per series and logged once per run.
 * Histograms keep their buckets; their summary numbers (min, max, num,
 * sum, sum_squares) become float series of the same key labelled stat=…. */
#include "import/import_store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probemcp/error.h"
#include "store/papers_search.h"
#include "util/buf.h"

typedef struct series_ent {
  char *key;
  int hist;
  const char *stat; /* label "stat" (histogram summaries), or NULL */
  int64_t id;
  pmcp_point *pts;
  size_t n, cap;
} series_ent;

typedef struct sstate {
  pmcp_store *st;
  pmcp_tenant t;
  const pmcp__import_opts *o;
  char *project;      /* project id, or NULL (unfiled runs) */
  char *experiment;   /* default experiment id for non-MLflow runs */
  char *run;          /* current run id */
  char *cur_exp;      /* experiment id of the current MLflow experiment */
  char *cur_exp_key;
  series_ent *ser;    /* open addressing */
  size_t scap, sused;
  pmcp_buf tmp;
} sstate;

static int serr(pmcp__imp_ctx *cx, sstate *s, int rc, const char *what)
{
  const char *m = pmcp_store_errmsg(s->st);
  return pmcp__imp_fail(cx, rc, "store: %s: %s", what,
                        m && *m ? m : pmcp_strerror(rc));
}

/* Ids use [A-Za-z0-9._-]; anything else becomes '-'. */
static void sanitize(char *s)
{
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
      *s = '-';
}

static char *make_id(const char *a, const char *sep, const char *b)
{
  size_t n = strlen(a) + strlen(sep) + strlen(b) + 1;
  char *id = malloc(n);
  if (!id)
    return NULL;
  snprintf(id, n, "%s%s%s", a, sep, b);
  sanitize(id);
  return id;
}

/* ---- series map ---- */

static uint64_t hash(const char *s)
{
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static void series_clear(sstate *s)
{
  for (size_t i = 0; i < s->scap; i++) {
    free(s->ser[i].key);
    free(s->ser[i].pts);
  }
  free(s->ser);
  s->ser = NULL;
  s->scap = s->sused = 0;
}

static series_ent *series_get(pmcp__imp_ctx *cx, sstate *s, const char *key,
                              int hist, const char *stat, int *rc)
{
  *rc = 0;
  if ((s->sused + 1) * 2 > s->scap) {
    size_t cap = s->scap ? s->scap * 2 : 64;
    series_ent *n = calloc(cap, sizeof *n);
    if (!n) {
      *rc = pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
      return NULL;
    }
    for (size_t i = 0; i < s->scap; i++) {
      if (!s->ser[i].key)
        continue;
      size_t j = (hash(s->ser[i].key) +
                  (s->ser[i].stat ? hash(s->ser[i].stat) : 0)) & (cap - 1);
      while (n[j].key)
        j = (j + 1) & (cap - 1);
      n[j] = s->ser[i];
    }
    free(s->ser);
    s->ser = n;
    s->scap = cap;
  }
  size_t j = (hash(key) + (stat ? hash(stat) : 0)) & (s->scap - 1);
  while (s->ser[j].key) {
    if (s->ser[j].hist == hist && s->ser[j].stat == stat &&
        strcmp(s->ser[j].key, key) == 0)
      return &s->ser[j];
    j = (j + 1) & (s->scap - 1);
  }
  pmcp_label label = {"stat", stat};
  pmcp_series_spec spec = {PMCP_SERIES_SPEC_VERSION, key, stat ? &label : NULL, stat ? 1u : 0u,
                           hist ? PMCP_METRIC_HISTOGRAM : PMCP_METRIC_FLOAT,
                           PMCP_SCALE_STEP};
  int64_t id = 0;
  int r = pmcp_store_series(s->st, s->t, s->run, &spec, &id);
  if (r) {
    *rc = serr(cx, s, r, "creating a series");
    return NULL;
  }
  s->ser[j].key = strdup(key);
  if (!s->ser[j].key) {
    *rc = pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
    return NULL;
  }
  s->ser[j].hist = hist;
  s->ser[j].stat = stat; /* static strings only */
  s->ser[j].id = id;
  s->sused++;
  return &s->ser[j];
}

static int flush_points(pmcp__imp_ctx *cx, sstate *s)
{
  for (size_t i = 0; i < s->scap; i++) {
    series_ent *e = &s->ser[i];
    if (!e->key || !e->n)
      continue;
    int r = pmcp_store_log(s->st, s->t, e->id, e->pts, e->n);
    if (r)
      return serr(cx, s, r, "logging metric points");
    e->n = 0;
  }
  return 0;
}

/* ---- ensure project / experiment ---- */

static int ensure_project(pmcp__imp_ctx *cx, sstate *s, const char *name)
{
  if (s->project)
    return 0;
  pmcp_entity_spec spec = PMCP_ENTITY_SPEC_INIT;
  char *id = make_id(name, "", "");
  if (!id)
    return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
  spec.id = id;
  spec.name = name;
  spec.flags = PMCP_STORE_REUSE;
  pmcp__buf_reset(&s->tmp);
  int r = pmcp_store_create(s->st, s->t, "project", &spec, &s->tmp);
  free(id);
  if (r)
    return serr(cx, s, r, "creating the project");
  s->project = strdup(s->tmp.ptr);
  return s->project ? 0 : pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
}

static int ensure_experiment(pmcp__imp_ctx *cx, sstate *s, const char *name,
                             int deleted, int64_t created_ms,
                             const char *description, char **out)
{
  pmcp_entity_spec spec = PMCP_ENTITY_SPEC_INIT;
  char *id = make_id(s->project, ".", name);
  if (!id)
    return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
  spec.id = id;
  spec.name = name;
  spec.parent = s->project;
  spec.deleted = deleted;
  spec.description = description;
  spec.created_ms = created_ms > 0 ? created_ms : 0;
  spec.flags = PMCP_STORE_REUSE;
  pmcp__buf_reset(&s->tmp);
  int r = pmcp_store_create(s->st, s->t, "experiment", &spec, &s->tmp);
  free(id);
  if (r)
    return serr(cx, s, r, "creating an experiment");
  free(*out);
  *out = strdup(s->tmp.ptr);
  return *out ? 0 : pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
}

/* ---- sink callbacks ---- */

static int on_experiment(pmcp__imp_ctx *cx, const pmcp__imp_experiment *e)
{
  sstate *s = cx->ud;
  /* already there (an earlier import)? then it is reused, not counted */
  char *id = make_id(s->project, ".", e->name);
  if (!id)
    return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
  pmcp__buf_reset(&s->tmp);
  int existed = pmcp__buf_printf(&s->tmp, "experiment:%s", id) == 0 &&
                pmcp_store_get(s->st, s->t, s->tmp.ptr, &s->tmp) == 0;
  free(id);
  int rc = ensure_experiment(cx, s, e->name, e->deleted, e->created_ms,
                             e->description, &s->cur_exp);
  if (rc)
    return rc;
  free(s->cur_exp_key);
  s->cur_exp_key = strdup(e->key);
  if (!s->cur_exp_key)
    return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
  return existed ? PMCP__IMP_SKIP : 0;
}

/* The store id of a run from its source key ("mlflow:<uuid>" ->
 * "mlflow-<uuid>"; long keys are hashed so ids stay short). */
static char *run_id(const char *key)
{
  const char *colon = strchr(key, ':');
  size_t plen = colon ? (size_t)(colon - key) : 0;
  const char *rest = colon ? colon + 1 : key;
  if (strlen(rest) <= 40) {
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%.*s", (int)(plen < 16 ? plen : 16), key);
    return make_id(prefix, "-", rest);
  }
  char hex[65];
  if (pmcp__imp_sha256_hex(rest, strlen(rest), hex))
    return NULL;
  hex[32] = '\0';
  char prefix[32];
  snprintf(prefix, sizeof prefix, "%.*s", (int)(plen < 16 ? plen : 16), key);
  return make_id(strcmp(prefix, "tensorboard") == 0 ? "tb" : prefix, "-", hex);
}

static int on_run_begin(pmcp__imp_ctx *cx, const pmcp__imp_run *r)
{
  sstate *s = cx->ud;
  free(s->run);
  s->run = run_id(r->key);
  if (!s->run)
    return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
  char ref[128];
  snprintf(ref, sizeof ref, "run:%s", s->run);
  pmcp__buf_reset(&s->tmp);
  int g = pmcp_store_get(s->st, s->t, ref, &s->tmp);
  if (g == 0)
    return PMCP__IMP_SKIP;
  if (g != PMCP_ENOTFOUND)
    return serr(cx, s, g, "looking up a run");

  const char *exp = NULL;
  if (r->experiment_key && s->cur_exp_key &&
      strcmp(r->experiment_key, s->cur_exp_key) == 0)
    exp = s->cur_exp;
  else if (!r->experiment_key)
    exp = s->experiment;
  pmcp_run_spec spec = PMCP_RUN_SPEC_INIT;
  spec.id = s->run;
  spec.name = r->name;
  spec.project = s->project;
  spec.experiment = exp;
  /* The store knows running|finished|failed|killed. An imported log with
   * no status of its own (TensorBoard, CSV, Trainer state) is a finished
   * record of past training. */
  if (!r->status)
    spec.status = "finished";
  else if (strcmp(r->status, "scheduled") == 0)
    spec.status = "running";
  else
    spec.status = r->status;
  spec.started_ms = r->start_ms > 0 ? r->start_ms : 0;
  spec.ended_ms = r->end_ms > 0 ? r->end_ms : 0;
  spec.created_ms = r->start_ms > 0 ? r->start_ms : 0;
  spec.command = r->command;
  spec.git_commit = r->git_commit;
  spec.git_branch = r->git_branch;
  spec.git_remote = r->git_remote;
  spec.description = r->description;
  spec.deleted = r->deleted;
  pmcp__buf_reset(&s->tmp);
  int rc = pmcp_store_run_create(s->st, s->t, &spec, &s->tmp);
  if (rc)
    return serr(cx, s, rc, "creating a run");
  if (strcmp(s->tmp.ptr, s->run) != 0) {
    free(s->run);
    if (!(s->run = strdup(s->tmp.ptr)))
      return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
  }
  pmcp_value v = {PMCP_V_STRING, r->source, 0, 0, NULL, 0};
  snprintf(ref, sizeof ref, "run:%s", s->run);
  if ((rc = pmcp_store_set_attr(s->st, s->t, ref, "import/source", &v)))
    return serr(cx, s, rc, "setting a run attribute");
  if (r->user) {
    v.s = r->user;
    if ((rc = pmcp_store_set_attr(s->st, s->t, ref, "sys/user", &v)))
      return serr(cx, s, rc, "setting a run attribute");
  }
  series_clear(s);
  return 0;
}

static int on_run_attr(pmcp__imp_ctx *cx, int kind, const char *key,
                       const pmcp__imp_value *iv)
{
  sstate *s = cx->ud;
  static const char *const prefix[] = {"", "params/", "tags/", "", "config/"};
  char ref[128];
  snprintf(ref, sizeof ref, "run:%s", s->run);
  pmcp__buf_reset(&s->tmp);
  if (pmcp__buf_printf(&s->tmp, "%s%s", prefix[kind], key))
    return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
  pmcp_value v = {PMCP_V_STRING, "", 0, 0, NULL, 0};
  char num[40];
  switch (iv->type) {
  case PMCP__IV_NULL: v.s = ""; break;
  case PMCP__IV_STR: case PMCP__IV_JSON: v.s = iv->s; break;
  case PMCP__IV_INT: v.type = PMCP_V_INT; v.i = iv->i; break;
  case PMCP__IV_BOOL: v.type = PMCP_V_BOOL; v.i = iv->i; break;
  case PMCP__IV_FLOAT:
    if (isfinite(iv->f)) {
      v.type = PMCP_V_FLOAT;
      v.f = iv->f;
    } else { /* keep non-finite configuration values as their text */
      snprintf(num, sizeof num, "%s", isnan(iv->f) ? "nan" : iv->f > 0 ? "inf" : "-inf");
      v.s = num;
    }
    break;
  }
  int rc = pmcp_store_set_attr(s->st, s->t, ref, s->tmp.ptr, &v);
  if (rc) {
    pmcp__imp_fail(cx, rc, "store: attribute \"%s\" of run %s: %s",
                   s->tmp.ptr, s->run, pmcp_store_errmsg(s->st));
    return rc;
  }
  return 0;
}

static int add_point(pmcp__imp_ctx *cx, const char *key, const char *stat,
                     int64_t step, double wall_s, double value)
{
  sstate *s = cx->ud;
  int rc;
  series_ent *e = series_get(cx, s, key, 0, stat, &rc);
  if (!e)
    return rc;
  if (e->n == e->cap) {
    size_t cap = e->cap ? e->cap * 2 : 256;
    pmcp_point *p = realloc(e->pts, cap * sizeof *p);
    if (!p)
      return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
    e->pts = p;
    e->cap = cap;
  }
  pmcp_point *p = &e->pts[e->n++];
  p->step = step;
  p->time_ms = isfinite(wall_s) && wall_s > 0 ? (int64_t)llround(wall_s * 1000.0) : 0;
  p->value = value;
  /* keep memory bounded on huge runs */
  if (e->n >= (1u << 16)) {
    int r = pmcp_store_log(s->st, s->t, e->id, e->pts, e->n);
    if (r)
      return serr(cx, s, r, "logging metric points");
    e->n = 0;
  }
  return 0;
}

static int on_scalar(pmcp__imp_ctx *cx, const char *key, int64_t step,
                     double wall_s, double value)
{
  return add_point(cx, key, NULL, step, wall_s, value);
}

static int on_histogram(pmcp__imp_ctx *cx, const char *key, int64_t step,
                        double wall_s, const pmcp__imp_hist *h)
{
  sstate *s = cx->ud;
  if (h->n == 0)
    return PMCP__IMP_SKIP; /* an empty histogram: nothing to draw */
  int rc;
  series_ent *e = series_get(cx, s, key, 1, NULL, &rc);
  if (!e)
    return rc;
  /* HistogramProto's summary numbers have no place in a histogram record:
   * they go to float series of the same key labelled stat=min|max|num|
   * sum|sum_squares (only those the source has). */
  static const char *const stats[5] = {"min", "max", "num", "sum",
                                       "sum_squares"};
  const double sv[5] = {h->min, h->max, h->num, h->sum, h->sum_squares};
  for (int i = 0; i < 5; i++)
    if (!isnan(sv[i]) && (rc = add_point(cx, key, stats[i], step, wall_s, sv[i])))
      return rc;
  /* The store wants n + 1 ascending edges; TensorBoard gives the right
   * edges of each bucket, the left edge of the first is the minimum. */
  double *edges = malloc((h->n + 1) * sizeof *edges);
  if (!edges)
    return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
  double first = h->limits[0];
  double left = h->min;
  if (!isfinite(left) || left >= first) {
    double w = h->n > 1 ? h->limits[1] - h->limits[0] : 1.0;
    left = isfinite(w) && w > 0 ? first - w : first - 1.0;
    if (!(left < first))
      left = -1.7976931348623157e308;
  }
  edges[0] = left;
  memcpy(edges + 1, h->limits, h->n * sizeof *edges);
  int64_t t = isfinite(wall_s) && wall_s > 0 ? (int64_t)llround(wall_s * 1000.0) : 0;
  int r = pmcp_store_log_histogram(s->st, s->t, e->id, step, t, edges,
                                   h->counts, h->n);
  free(edges);
  if (r)
    return pmcp__imp_fail(cx, r, "store: histogram \"%s\" at step %lld: %s",
                          key, (long long)step, pmcp_store_errmsg(s->st));
  return 0;
}

static int on_artifact(pmcp__imp_ctx *cx, const char *name, const void *data,
                       size_t len)
{
  sstate *s = cx->ud;
  char ref[128];
  snprintf(ref, sizeof ref, "run:%s", s->run);
  pmcp_artifact_spec spec = PMCP_ARTIFACT_SPEC_INIT;
  spec.name = name;
  spec.on = ref;
  spec.path = name;
  spec.content = data;
  spec.size = len;
  int rc = pmcp_store_artifact_add(s->st, s->t, &spec, NULL, NULL);
  return rc ? serr(cx, s, rc, "adding an artifact") : 0;
}

static int on_checkpoint(pmcp__imp_ctx *cx, const char *name, int64_t step,
                         int best, double value)
{
  sstate *s = cx->ud;
  if (step < 0)
    return PMCP__IMP_SKIP; /* the store keys checkpoints by step */
  pmcp__buf_reset(&s->tmp);
  if (pmcp__buf_puts(&s->tmp, "{\"run\":") ||
      pmcp__buf_json_string(&s->tmp, s->run, strlen(s->run)) ||
      pmcp__buf_printf(&s->tmp, ",\"step\":%lld,\"best\":%s,\"stored\":false,\"uri\":",
                       (long long)step, best ? "true" : "false") ||
      pmcp__buf_json_string(&s->tmp, name, strlen(name)) ||
      (isfinite(value) && pmcp__buf_printf(&s->tmp, ",\"value\":%.17g", value)) ||
      pmcp__buf_putc(&s->tmp, '}'))
    return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
  int rc = pmcp_store_put(s->st, s->t, "checkpoint", s->tmp.ptr, s->tmp.len,
                          NULL);
  return rc ? serr(cx, s, rc, "recording a checkpoint") : 0;
}

static int on_run_end(pmcp__imp_ctx *cx)
{
  sstate *s = cx->ud;
  int rc = flush_points(cx, s);
  series_clear(s);
  return rc;
}

static int on_paper(pmcp__imp_ctx *cx, const pmcp__imp_paper *p)
{
  sstate *s = cx->ud;
  char ref[160];
  snprintf(ref, sizeof ref, "paper:%.140s", p->id);
  pmcp__buf_reset(&s->tmp);
  int g = pmcp_store_get(s->st, s->t, ref, &s->tmp);
  if (g == 0)
    return PMCP__IMP_SKIP;
  if (g != PMCP_ENOTFOUND)
    return serr(cx, s, g, "looking up a paper");
  pmcp_buf authors = PMCP_BUF_INIT;
  for (size_t i = 0; i < p->n_authors; i++)
    if ((i && pmcp__buf_puts(&authors, ", ")) ||
        pmcp__buf_puts(&authors, p->author_list[i])) {
      pmcp_buf_dispose(&authors);
      return pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
    }
  char pub[11] = "", upd[11] = "";
  if (p->published)
    snprintf(pub, sizeof pub, "%.10s", p->published);
  if (p->updated)
    snprintf(upd, sizeof upd, "%.10s", p->updated);
  pmcp_paper pp = {PMCP_PAPER_VERSION, p->id, p->title, p->abstract,
                   p->n_authors ? authors.ptr : p->authors, p->categories,
                   p->published ? pub : NULL, p->updated ? upd : NULL,
                   p->doi, p->journal_ref, p->comments};
  int rc = pmcp_store_paper(s->st, s->t, &pp);
  pmcp_buf_dispose(&authors);
  return rc ? serr(cx, s, rc, "adding a paper") : 0;
}

static const pmcp__imp_sink store_sink = {
    on_experiment, on_run_begin, on_run_attr,  on_scalar, on_histogram,
    on_artifact,   on_checkpoint, on_run_end, on_paper};

/* MLflow's default project name: the store folder's name, or its
 * parent's when the folder is the usual "mlruns". */
static char *mlflow_project_name(const char *dir)
{
  char *rp = realpath(dir, NULL);
  const char *p = rp ? rp : dir;
  const char *b = pmcp__imp_basename(p);
  char *out;
  if (strcmp(b, "mlruns") == 0) {
    char *up = pmcp__imp_dirname(p);
    const char *ub = up ? pmcp__imp_basename(up) : "";
    out = strdup(*ub && strcmp(ub, "/") && strcmp(ub, ".") ? ub : "mlflow");
    free(up);
  } else {
    out = strdup(*b && strcmp(b, "/") && strcmp(b, ".") ? b : "mlflow");
  }
  free(rp);
  if (out) { /* a trailing slash would stay in the basename */
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/')
      out[--n] = '\0';
  }
  return out;
}

int pmcp__import(pmcp_store *st, pmcp_tenant t, const char *kind,
                 const char *path, const pmcp__import_opts *o,
                 pmcp__imp_counts *counts, pmcp_buf *err)
{
  pmcp__imp_ctx cx;
  memset(&cx, 0, sizeof cx);
  sstate s;
  memset(&s, 0, sizeof s);
  s.st = st;
  s.t = t;
  s.o = o;
  cx.sink = &store_sink;
  cx.ud = &s;
  cx.progress = o ? o->progress : NULL;
  cx.progress_ud = o ? o->progress_ud : NULL;
  cx.run_name = o ? o->name : NULL;
  int (*parse)(pmcp__imp_ctx *, const char *) = NULL;
  if (strcmp(kind, "mlflow") == 0)
    parse = pmcp__import_mlflow;
  else if (strcmp(kind, "tensorboard") == 0)
    parse = pmcp__import_tensorboard;
  else if (strcmp(kind, "csv") == 0)
    parse = pmcp__import_csv;
  else if (strcmp(kind, "hf") == 0)
    parse = pmcp__import_hf;
  else if (strcmp(kind, "arxiv") == 0)
    parse = pmcp__import_arxiv;
  if (!parse) {
    if (err)
      pmcp__buf_printf(err, "unknown import format \"%s\"", kind);
    return PMCP_EINVAL;
  }
  if (!st) { /* a dry run: parse everything, store nothing */
    static const pmcp__imp_sink none = {NULL, NULL, NULL, NULL, NULL,
                                        NULL, NULL, NULL, NULL};
    cx.sink = &none;
    cx.project = o && o->project ? o->project : "";
    int rc = parse(&cx, path);
    if (rc && err)
      pmcp__buf_puts(err, cx.err.len ? cx.err.ptr : pmcp_strerror(rc));
    if (counts)
      *counts = cx.n;
    pmcp_buf_dispose(&cx.err);
    return rc;
  }
  int own_txn = !(o && o->in_txn);
  int rc = own_txn ? pmcp_store_begin(st) : 0;
  if (rc) {
    if (err)
      pmcp__buf_printf(err, "store: %s", pmcp_store_errmsg(st));
    return rc;
  }
  char *pname = NULL;
  if (strcmp(kind, "mlflow") == 0) {
    pname = o && o->project ? strdup(o->project) : mlflow_project_name(path);
    if (!pname)
      rc = pmcp__imp_fail(&cx, PMCP_ENOMEM, "out of memory");
  } else if (strcmp(kind, "arxiv") != 0 && o && (o->project || o->experiment)) {
    pname = strdup(o->project ? o->project : "imports");
    if (!pname)
      rc = pmcp__imp_fail(&cx, PMCP_ENOMEM, "out of memory");
  }
  if (rc == 0 && pname)
    rc = ensure_project(&cx, &s, pname);
  cx.project = s.project;
  if (rc == 0 && o && o->experiment && strcmp(kind, "mlflow") != 0 &&
      strcmp(kind, "arxiv") != 0)
    rc = ensure_experiment(&cx, &s, o->experiment, 0, 0, NULL, &s.experiment);
  /* arXiv snapshots are large: the papers' search index is built once
   * at the end, in this transaction (papers are only added here, never
   * changed: the sink skips ids it holds) */
  int bulk = 0;
  if (rc == 0 && own_txn && strcmp(kind, "arxiv") == 0) {
    rc = pmcp__store_papers_bulk(st, 1);
    bulk = rc == 0;
    if (rc == PMCP_EUNSUPPORTED)
      rc = 0;
    else if (rc)
      pmcp__imp_fail(&cx, rc, "store: %s", pmcp_store_errmsg(st));
  }
  if (rc == 0)
    rc = parse(&cx, path);
  if (rc == 0 && bulk) {
    pmcp__imp_progress(&cx, "papers index", 0, 0);
    rc = pmcp__store_papers_bulk(st, 0);
    if (rc)
      pmcp__imp_fail(&cx, rc, "store: indexing the papers: %s", pmcp_store_errmsg(st));
  }
  /* Nothing new (every run already there, or none found): the project and
   * experiment made for this import would be left empty, so keep nothing. */
  const pmcp__imp_counts *n = &cx.n;
  int nothing = !n->runs && !n->experiments && !n->attrs && !n->papers && !n->points &&
                !n->checkpoints && !n->artifacts && !n->histograms;
  if (rc == 0 && own_txn && nothing) {
    rc = pmcp_store_rollback(st);
    if (rc)
      pmcp__imp_fail(&cx, rc, "store: %s", pmcp_store_errmsg(st));
  } else if (rc == 0 && own_txn) {
    rc = pmcp_store_commit(st);
    if (rc)
      pmcp__imp_fail(&cx, rc, "store: commit failed: %s", pmcp_store_errmsg(st));
  } else if (rc && own_txn) {
    pmcp_store_rollback(st);
  }
  if (rc && err)
    pmcp__buf_puts(err, cx.err.len ? cx.err.ptr : pmcp_strerror(rc));
  if (counts)
    *counts = cx.n;
  series_clear(&s);
  free(pname);
  free(s.project);
  free(s.experiment);
  free(s.run);
  free(s.cur_exp);
  free(s.cur_exp_key);
  pmcp_buf_dispose(&s.tmp);
  pmcp_buf_dispose(&cx.err);
  return rc;
}
