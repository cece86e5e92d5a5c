/* probe log RUN: metric points as JSON lines on stdin (or --file), logged
 * in one transaction, so a bad line leaves the store as it was. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_util.h"

typedef struct series_slot {
  char *sig;           /* key \x1f labels-json \x1f kind \x1f scale */
  int64_t id;
  pmcp_point *pts;
  size_t n, cap;
} series_slot;

typedef struct log_ctx {
  pmcp_store *s;
  pmcp_tenant t;
  const char *run;
  series_slot *slots;
  size_t n_slots, cap_slots;
  uint64_t points, sets;
} log_ctx;

static void log_usage(FILE *f)
{
  fprintf(f,
    "usage: probe log RUN [--file FILE]\n\n"
    "Reads metric points as JSON lines from stdin (or FILE), one object a line:\n"
    "  {\"key\":\"train/loss\",\"step\":10,\"value\":0.53}\n"
    "  {\"key\":\"loss\",\"step\":3,\"value\":1.2,\"time\":1700000000000,\"labels\":{\"rank\":\"0\"}}\n"
    "  {\"step\":10,\"values\":{\"loss\":0.5,\"acc\":0.81}}            several keys at once\n"
    "  {\"key\":\"return\",\"step\":7,\"value\":3.5,\"scale\":\"episode\",\"labels\":{\"env\":\"3\"}}\n"
    "  {\"key\":\"w\",\"kind\":\"histogram\",\"step\":5,\"edges\":[0,1,2],\"counts\":[4,6]}\n"
    "  {\"key\":\"emb\",\"kind\":\"scatter\",\"step\":5,\"x\":[0.1,0.2],\"y\":[1,2]}\n"
    "time: epoch milliseconds or ISO 8601 (UTC); scale: step (default), env_step,\n"
    "episode; value may also be \"NaN\", \"Infinity\" or \"-Infinity\". Lines are written in\n"
    "batches (50000 lines or 2 seconds of input), each in one transaction: a bad line\n"
    "is named and nothing of its batch is stored (a file that fits one batch is all\n"
    "or nothing).\n");
}

static int flush_slot(log_ctx *c, series_slot *sl)
{
  if (!sl->n)
    return 0;
  int rc = pmcp_store_log(c->s, c->t, sl->id, sl->pts, sl->n);
  c->points += sl->n;
  sl->n = 0;
  return rc;
}

static int get_series(log_ctx *c, const char *key, cJSON *labels, const char *kind,
                      const char *scale, series_slot **out, char *err, size_t errn)
{
  char *lj = labels ? cJSON_PrintUnformatted(labels) : NULL;
  size_t need = strlen(key) + (lj ? strlen(lj) : 0) + strlen(kind) + strlen(scale) + 4;
  char *sig = malloc(need);
  if (!sig) {
    cJSON_free(lj);
    snprintf(err, errn, "out of memory");
    return PMCP_ENOMEM;
  }
  snprintf(sig, need, "%s\x1f%s\x1f%s\x1f%s", key, lj ? lj : "", kind, scale);
  cJSON_free(lj);
  for (size_t i = 0; i < c->n_slots; i++)
    if (strcmp(c->slots[i].sig, sig) == 0) {
      free(sig);
      *out = &c->slots[i];
      return 0;
    }
  pmcp_label lab[32];
  size_t nl = 0;
  cJSON *it;
  cJSON_ArrayForEach(it, labels) {
    if (nl == 32) {
      free(sig);
      snprintf(err, errn, "more than 32 labels");
      return PMCP_EINVAL;
    }
    if (!cJSON_IsString(it)) {
      free(sig);
      snprintf(err, errn, "label \"%s\" must be a string", it->string);
      return PMCP_EINVAL;
    }
    lab[nl].key = it->string;
    lab[nl].value = it->valuestring;
    nl++;
  }
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, key, lab, nl, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP};
  if (strcmp(kind, "histogram") == 0)
    sp.kind = PMCP_METRIC_HISTOGRAM;
  else if (strcmp(kind, "scatter") == 0)
    sp.kind = PMCP_METRIC_SCATTER;
  else if (strcmp(kind, "float") != 0) {
    free(sig);
    snprintf(err, errn, "unknown kind \"%s\" (float, histogram, scatter)", kind);
    return PMCP_EINVAL;
  }
  if (strcmp(scale, "env_step") == 0)
    sp.scale = PMCP_SCALE_ENV_STEP;
  else if (strcmp(scale, "episode") == 0)
    sp.scale = PMCP_SCALE_EPISODE;
  else if (strcmp(scale, "step") != 0) {
    free(sig);
    snprintf(err, errn, "unknown scale \"%s\" (step, env_step, episode)", scale);
    return PMCP_EINVAL;
  }
  if (c->n_slots == c->cap_slots) {
    size_t cap = c->cap_slots ? c->cap_slots * 2 : 16;
    series_slot *ns = realloc(c->slots, cap * sizeof *ns);
    if (!ns) {
      free(sig);
      return PMCP_ENOMEM;
    }
    c->slots = ns;
    c->cap_slots = cap;
  }
  series_slot *sl = &c->slots[c->n_slots];
  memset(sl, 0, sizeof *sl);
  int rc = pmcp_store_series(c->s, c->t, c->run, &sp, &sl->id);
  if (rc) {
    free(sig);
    snprintf(err, errn, "%s", pmcp_store_errmsg(c->s));
    return rc;
  }
  sl->sig = sig;
  c->n_slots++;
  *out = sl;
  return 0;
}

static int num_value(cJSON *v, double *out)
{
  if (cJSON_IsNumber(v)) {
    *out = v->valuedouble;
    return 0;
  }
  if (cJSON_IsString(v)) {
    if (strcmp(v->valuestring, "NaN") == 0)
      *out = NAN;
    else if (strcmp(v->valuestring, "Infinity") == 0)
      *out = INFINITY;
    else if (strcmp(v->valuestring, "-Infinity") == 0)
      *out = -INFINITY;
    else
      return -1;
    return 0;
  }
  return -1;
}

static int num_array(cJSON *a, double **out, size_t *n)
{
  *out = NULL;
  *n = 0;
  if (!cJSON_IsArray(a))
    return -1;
  size_t k = (size_t)cJSON_GetArraySize(a);
  double *d = malloc((k ? k : 1) * sizeof *d);
  if (!d)
    return -1;
  cJSON *it;
  size_t i = 0;
  cJSON_ArrayForEach(it, a) {
    if (!cJSON_IsNumber(it)) {
      free(d);
      return -1;
    }
    d[i++] = it->valuedouble;
  }
  *out = d;
  *n = k;
  return 0;
}

static int add_point(log_ctx *c, series_slot *sl, int64_t step, int64_t time_ms, double v)
{
  if (sl->n == sl->cap) {
    size_t cap = sl->cap ? sl->cap * 2 : 256;
    if (cap > 4096)
      cap = 4096;
    pmcp_point *np = realloc(sl->pts, cap * sizeof *np);
    if (!np)
      return PMCP_ENOMEM;
    sl->pts = np;
    sl->cap = cap;
  }
  sl->pts[sl->n++] = (pmcp_point){step, time_ms, v};
  if (sl->n == 4096)
    return flush_slot(c, sl);
  return 0;
}

/* One line. Returns 0, or an error with @p err filled. */
static int log_line(log_ctx *c, cJSON *o, char *err, size_t errn)
{
  if (!cJSON_IsObject(o)) {
    snprintf(err, errn, "not a JSON object");
    return PMCP_EINVAL;
  }
  cJSON *jstep = cJSON_GetObjectItemCaseSensitive(o, "step");
  if (!cJSON_IsNumber(jstep) || jstep->valuedouble != floor(jstep->valuedouble) ||
      fabs(jstep->valuedouble) > 9007199254740992.0) {
    snprintf(err, errn, "\"step\" must be an integer");
    return PMCP_EINVAL;
  }
  int64_t step = (int64_t)jstep->valuedouble, time_ms = 0;
  cJSON *jt = cJSON_GetObjectItemCaseSensitive(o, "time");
  if (jt && !cJSON_IsNull(jt)) {
    if (cJSON_IsNumber(jt))
      time_ms = (int64_t)jt->valuedouble;
    else if (!cJSON_IsString(jt) || probe_cli_time(jt->valuestring, &time_ms)) {
      snprintf(err, errn, "\"time\" must be epoch milliseconds or an ISO 8601 time");
      return PMCP_EINVAL;
    }
  }
  cJSON *labels = cJSON_GetObjectItemCaseSensitive(o, "labels");
  if (labels && !cJSON_IsObject(labels)) {
    snprintf(err, errn, "\"labels\" must be an object of strings");
    return PMCP_EINVAL;
  }
  cJSON *jk = cJSON_GetObjectItemCaseSensitive(o, "kind");
  cJSON *jsc = cJSON_GetObjectItemCaseSensitive(o, "scale");
  if ((jk && !cJSON_IsString(jk)) || (jsc && !cJSON_IsString(jsc))) {
    snprintf(err, errn, "\"kind\" and \"scale\" must be strings");
    return PMCP_EINVAL;
  }
  const char *kind = jk ? jk->valuestring : "float";
  const char *scale = jsc ? jsc->valuestring : "step";
  cJSON *values = cJSON_GetObjectItemCaseSensitive(o, "values");
  cJSON *jkey = cJSON_GetObjectItemCaseSensitive(o, "key");
  series_slot *sl;
  int rc;
  if (values) {
    if (!cJSON_IsObject(values) || strcmp(kind, "float") != 0) {
      snprintf(err, errn, "\"values\" must be an object of numbers (float points)");
      return PMCP_EINVAL;
    }
    cJSON *it;
    cJSON_ArrayForEach(it, values) {
      double v;
      if (num_value(it, &v)) {
        snprintf(err, errn, "value of \"%s\" is not a number", it->string);
        return PMCP_EINVAL;
      }
      if ((rc = get_series(c, it->string, labels, kind, scale, &sl, err, errn)))
        return rc;
      if ((rc = add_point(c, sl, step, time_ms, v))) {
        snprintf(err, errn, "%s", pmcp_store_errmsg(c->s));
        return rc;
      }
    }
    return 0;
  }
  if (!cJSON_IsString(jkey) || !*jkey->valuestring) {
    snprintf(err, errn, "\"key\" (a string) or \"values\" is missing");
    return PMCP_EINVAL;
  }
  if ((rc = get_series(c, jkey->valuestring, labels, kind, scale, &sl, err, errn)))
    return rc;
  if (strcmp(kind, "float") == 0) {
    double v;
    if (num_value(cJSON_GetObjectItemCaseSensitive(o, "value"), &v)) {
      snprintf(err, errn, "\"value\" must be a number (or \"NaN\", \"Infinity\", \"-Infinity\")");
      return PMCP_EINVAL;
    }
    rc = add_point(c, sl, step, time_ms, v);
    if (rc)
      snprintf(err, errn, "%s", pmcp_store_errmsg(c->s));
    return rc;
  }
  int hist = strcmp(kind, "histogram") == 0;
  double *a, *b;
  size_t na, nb;
  const char *an = hist ? "edges" : "x", *bn = hist ? "counts" : "y";
  if (num_array(cJSON_GetObjectItemCaseSensitive(o, an), &a, &na)) {
    snprintf(err, errn, "\"%s\" must be an array of numbers", an);
    return PMCP_EINVAL;
  }
  if (num_array(cJSON_GetObjectItemCaseSensitive(o, bn), &b, &nb)) {
    free(a);
    snprintf(err, errn, "\"%s\" must be an array of numbers", bn);
    return PMCP_EINVAL;
  }
  if (hist ? na != nb + 1 : na != nb) {
    free(a);
    free(b);
    snprintf(err, errn, hist ? "a histogram needs one more edge than counts"
                             : "\"x\" and \"y\" must be as long");
    return PMCP_EINVAL;
  }
  rc = hist ? pmcp_store_log_histogram(c->s, c->t, sl->id, step, time_ms, a, b, nb)
            : pmcp_store_log_scatter(c->s, c->t, sl->id, step, time_ms, a, b, nb);
  if (rc)
    snprintf(err, errn, "%s", pmcp_store_errmsg(c->s));
  else
    c->sets++;
  free(a);
  free(b);
  return rc;
}

int probe_cmd_log(const probe_globals *g, int argc, char **argv)
{
  const char *run = NULL, *file = NULL;
  for (int i = 1; i < argc; i++) {
    int m;
    if (probe_cli_is_help(argv[i])) {
      log_usage(stdout);
      return 0;
    }
    if ((m = probe_cli_opt(argc, argv, &i, "--file", &file, "log"))) {
      if (m < 0)
        return 2;
    } else if (argv[i][0] == '-') {
      return probe_cli_err(2, "log", "unknown option '%s'", argv[i]);
    } else if (!run) {
      run = argv[i];
    } else {
      return probe_cli_err(2, "log", "unexpected argument '%s'", argv[i]);
    }
  }
  if (!run) {
    log_usage(stderr);
    return 2;
  }
  FILE *in = file && strcmp(file, "-") ? fopen(file, "r") : stdin;
  if (!in)
    return probe_cli_err(1, "log", "cannot open %s", file);
  const char *name = file ? file : "stdin";
  log_ctx c;
  memset(&c, 0, sizeof c);
  c.run = run;
  if (probe_cli_open(g, 0, &c.s, &c.t)) {
    if (in != stdin)
      fclose(in);
    return 1;
  }
  /* Lines are taken in batches (50000 lines, or what arrived within two
   * seconds, or the rest at end of input); each batch is written in one
   * transaction, and no transaction stays open while waiting for input, so
   * a training job can stream into `probe log` for hours. */
  int rc = 0;
  char *line = NULL;
  size_t cap = 0, lineno = 0, batch_first = 1;
  ssize_t len;
  char err[600];
  char **batch = NULL;
  size_t nb = 0, capb = 0;
  uint64_t stored_lines = 0;
  time_t started = time(NULL);
  int eof = 0;
  while (rc == 0 && !eof) {
    len = getline(&line, &cap, in);
    if (len < 0)
      eof = 1;
    else {
      lineno++;
      if (nb == capb) {
        capb = capb ? capb * 2 : 1024;
        char **nbp = realloc(batch, capb * sizeof *nbp);
        if (!nbp) {
          rc = probe_cli_err(1, "log", "out of memory");
          break;
        }
        batch = nbp;
      }
      batch[nb] = strdup(line);
      if (!batch[nb]) {
        rc = probe_cli_err(1, "log", "out of memory");
        break;
      }
      nb++;
    }
    if (!eof && nb < 50000 && time(NULL) - started < 2)
      continue;
    if (nb == 0)
      continue;
    rc = pmcp_store_begin(c.s);
    if (rc)
      probe_cli_fail("log", c.s, rc);
    for (size_t k = 0; rc == 0 && k < nb; k++) {
      const char *ln = batch[k];
      size_t l = strlen(ln), w = 0;
      while (w < l && (ln[w] == ' ' || ln[w] == '\t' || ln[w] == '\r' || ln[w] == '\n'))
        w++;
      if (w == l)
        continue;
      cJSON *o = cJSON_ParseWithLength(ln, l);
      if (!o) {
        snprintf(err, sizeof err, "not valid JSON");
        rc = PMCP_EPARSE;
      } else {
        rc = log_line(&c, o, err, sizeof err);
        cJSON_Delete(o);
      }
      if (rc) {
        fprintf(stderr, "probe log: %s: line %zu: %s\n", name, batch_first + k, err);
        if (stored_lines)
          fprintf(stderr, "probe log: lines 1-%llu were stored; nothing from line %zu on\n",
                  (unsigned long long)stored_lines, batch_first);
      }
    }
    for (size_t i = 0; rc == 0 && i < c.n_slots; i++)
      if ((rc = flush_slot(&c, &c.slots[i])))
        probe_cli_fail("log", c.s, rc);
    if (rc == 0 && (rc = pmcp_store_commit(c.s)))
      probe_cli_fail("log", c.s, rc);
    if (rc) {
      pmcp_store_rollback(c.s);
      for (size_t i = 0; i < c.n_slots; i++)
        c.slots[i].n = 0;
    } else {
      stored_lines += nb;
    }
    for (size_t k = 0; k < nb; k++)
      free(batch[k]);
    batch_first += nb;
    nb = 0;
    started = time(NULL);
  }
  for (size_t k = 0; k < nb; k++)
    free(batch[k]);
  free(batch);
  (void)lineno;
  if (rc == 0 && !g->quiet)
    fprintf(stderr, "probe log: %llu points and %llu histogram/scatter sets in %zu series of %s\n",
            (unsigned long long)c.points, (unsigned long long)c.sets, c.n_slots, run);
  for (size_t i = 0; i < c.n_slots; i++) {
    free(c.slots[i].sig);
    free(c.slots[i].pts);
  }
  free(c.slots);
  free(line);
  if (in != stdin)
    fclose(in);
  pmcp_store_free(c.s);
  return rc ? 1 : 0;
}
