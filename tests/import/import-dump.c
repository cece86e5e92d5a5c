/* SPDX-License-Identifier: MIT */
/* import-dump KIND PATH [--project P] [--name N]: runs one importer's
 * parser with a sink that prints every record as a JSON line on stdout,
 * then the counts. The tests compare this with an independent reading of
 * the same files (check-import.py), without needing a store. Exit 1 and
 * the importer's message on stderr when the input is refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/import.h"
#include "probemcp/error.h"
#include "util/buf.h"

static void jstr(const char *s)
{
  pmcp_buf b = PMCP_BUF_INIT;
  if (!s) {
    fputs("null", stdout);
    return;
  }
  pmcp__buf_json_string(&b, s, strlen(s));
  fputs(b.ptr, stdout);
  pmcp_buf_dispose(&b);
}

static void jnum(double v)
{
  if (isnan(v))
    fputs("\"nan\"", stdout);
  else if (isinf(v))
    fputs(v > 0 ? "\"inf\"" : "\"-inf\"", stdout);
  else
    printf("%.17g", v);
}

static int on_exp(pmcp__imp_ctx *cx, const pmcp__imp_experiment *e)
{
  fputs("{\"t\":\"experiment\",\"key\":", stdout);
  jstr(e->key);
  fputs(",\"name\":", stdout);
  jstr(e->name);
  fputs(",\"description\":", stdout);
  jstr(e->description);
  printf(",\"deleted\":%d,\"created_ms\":%lld}\n", e->deleted,
         (long long)e->created_ms);
  return 0;
}

static int on_run(pmcp__imp_ctx *cx, const pmcp__imp_run *r)
{
  fputs("{\"t\":\"run\",\"key\":", stdout);
  jstr(r->key);
  fputs(",\"name\":", stdout);
  jstr(r->name);
  fputs(",\"experiment\":", stdout);
  jstr(r->experiment_key);
  fputs(",\"source\":", stdout);
  jstr(r->source);
  fputs(",\"status\":", stdout);
  jstr(r->status);
  fputs(",\"user\":", stdout);
  jstr(r->user);
  printf(",\"deleted\":%d,\"start_ms\":%lld,\"end_ms\":%lld}\n", r->deleted,
         (long long)r->start_ms, (long long)r->end_ms);
  return 0;
}

static int on_attr(pmcp__imp_ctx *cx, int kind, const char *key,
                   const pmcp__imp_value *v)
{
  static const char *const kinds[] = {"", "param", "tag", "attr", "config"};
  static const char *const types[] = {"null", "str", "int", "float", "bool",
                                      "json"};
  printf("{\"t\":\"attr\",\"kind\":\"%s\",\"key\":", kinds[kind]);
  jstr(key);
  printf(",\"type\":\"%s\",\"value\":", types[v->type]);
  switch (v->type) {
  case PMCP__IV_NULL: fputs("null", stdout); break;
  case PMCP__IV_INT: printf("%lld", (long long)v->i); break;
  case PMCP__IV_BOOL: fputs(v->i ? "true" : "false", stdout); break;
  case PMCP__IV_FLOAT: jnum(v->f); break;
  default: jstr(v->s); break;
  }
  fputs("}\n", stdout);
  return 0;
}

static int on_scalar(pmcp__imp_ctx *cx, const char *key, int64_t step,
                     double wall, double value)
{
  fputs("{\"t\":\"scalar\",\"key\":", stdout);
  jstr(key);
  printf(",\"step\":%lld,\"wall\":", (long long)step);
  jnum(wall);
  fputs(",\"value\":", stdout);
  jnum(value);
  fputs("}\n", stdout);
  return 0;
}

static int on_hist(pmcp__imp_ctx *cx, const char *key, int64_t step,
                   double wall, const pmcp__imp_hist *h)
{
  fputs("{\"t\":\"hist\",\"key\":", stdout);
  jstr(key);
  printf(",\"step\":%lld,\"wall\":", (long long)step);
  jnum(wall);
  const double f[5] = {h->min, h->max, h->num, h->sum, h->sum_squares};
  const char *names[5] = {"min", "max", "num", "sum", "sum_squares"};
  for (int i = 0; i < 5; i++) {
    printf(",\"%s\":", names[i]);
    jnum(f[i]);
  }
  fputs(",\"limits\":[", stdout);
  for (size_t i = 0; i < h->n; i++) {
    if (i)
      putchar(',');
    jnum(h->limits[i]);
  }
  fputs("],\"counts\":[", stdout);
  for (size_t i = 0; i < h->n; i++) {
    if (i)
      putchar(',');
    jnum(h->counts[i]);
  }
  fputs("]}\n", stdout);
  return 0;
}

static int on_artifact(pmcp__imp_ctx *cx, const char *name, const void *data,
                       size_t len)
{
  char hex[65];
  pmcp__imp_sha256_hex(data, len, hex);
  fputs("{\"t\":\"artifact\",\"name\":", stdout);
  jstr(name);
  printf(",\"size\":%zu,\"sha256\":\"%s\"}\n", len, hex);
  return 0;
}

static int on_ckpt(pmcp__imp_ctx *cx, const char *name, int64_t step,
                   int best, double value)
{
  fputs("{\"t\":\"checkpoint\",\"name\":", stdout);
  jstr(name);
  printf(",\"step\":%lld,\"best\":%d,\"value\":", (long long)step, best);
  jnum(value);
  fputs("}\n", stdout);
  return 0;
}

static int on_run_end(pmcp__imp_ctx *cx)
{
  puts("{\"t\":\"run_end\"}");
  return 0;
}

static int on_paper(pmcp__imp_ctx *cx, const pmcp__imp_paper *p)
{
  fputs("{\"t\":\"paper\",\"id\":", stdout);
  jstr(p->id);
  fputs(",\"title\":", stdout);
  jstr(p->title);
  fputs(",\"abstract\":", stdout);
  jstr(p->abstract);
  fputs(",\"authors\":", stdout);
  jstr(p->authors);
  fputs(",\"author_list\":[", stdout);
  for (size_t i = 0; i < p->n_authors; i++) {
    if (i)
      putchar(',');
    jstr(p->author_list[i]);
  }
  fputs("],\"categories\":", stdout);
  jstr(p->categories);
  fputs(",\"published\":", stdout);
  jstr(p->published);
  fputs(",\"updated\":", stdout);
  jstr(p->updated);
  fputs(",\"doi\":", stdout);
  jstr(p->doi);
  fputs(",\"journal_ref\":", stdout);
  jstr(p->journal_ref);
  fputs(",\"comments\":", stdout);
  jstr(p->comments);
  fputs(",\"license\":", stdout);
  jstr(p->license);
  fputs("}\n", stdout);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr, "usage: import-dump mlflow|tensorboard|csv|hf|arxiv PATH "
                    "[--project P] [--name N]\n");
    return 2;
  }
  static const pmcp__imp_sink sink = {on_exp, on_run, on_attr, on_scalar,
                                      on_hist, on_artifact, on_ckpt,
                                      on_run_end, on_paper};
  pmcp__imp_ctx cx;
  memset(&cx, 0, sizeof cx);
  cx.sink = &sink;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--project") == 0)
      cx.project = argv[i + 1];
    else if (strcmp(argv[i], "--name") == 0)
      cx.run_name = argv[i + 1];
  }
  const char *kind = argv[1];
  int rc;
  if (strcmp(kind, "mlflow") == 0)
    rc = pmcp__import_mlflow(&cx, argv[2]);
  else if (strcmp(kind, "tensorboard") == 0)
    rc = pmcp__import_tensorboard(&cx, argv[2]);
  else if (strcmp(kind, "csv") == 0)
    rc = pmcp__import_csv(&cx, argv[2]);
  else if (strcmp(kind, "hf") == 0)
    rc = pmcp__import_hf(&cx, argv[2]);
  else if (strcmp(kind, "arxiv") == 0)
    rc = pmcp__import_arxiv(&cx, argv[2]);
  else {
    fprintf(stderr, "import-dump: unknown kind %s\n", kind);
    return 2;
  }
  if (rc) {
    fprintf(stderr, "import-dump: %s\n",
            cx.err.len ? cx.err.ptr : pmcp_strerror(rc));
    pmcp_buf_dispose(&cx.err);
    return 1;
  }
  const pmcp__imp_counts *n = &cx.n;
  printf("{\"t\":\"counts\",\"experiments\":%llu,\"runs\":%llu,"
         "\"attrs\":%llu,\"points\":%llu,\"histograms\":%llu,"
         "\"artifacts\":%llu,\"artifacts_skipped\":%llu,"
         "\"checkpoints\":%llu,\"papers\":%llu,\"deleted_runs\":%llu}\n",
         (unsigned long long)n->experiments, (unsigned long long)n->runs,
         (unsigned long long)n->attrs, (unsigned long long)n->points,
         (unsigned long long)n->histograms, (unsigned long long)n->artifacts,
         (unsigned long long)n->artifacts_skipped,
         (unsigned long long)n->checkpoints, (unsigned long long)n->papers,
         (unsigned long long)n->deleted_runs);
  pmcp_buf_dispose(&cx.err);
  return 0;
}
