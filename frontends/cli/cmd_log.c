/* SPDX-License-Identifier: MIT */
/* probe log RUN: metric points as JSON lines on stdin (or --file), logged
 * in batches, each in one transaction, so a bad line leaves the store as it
 * was before its batch. Lines are read by log_parse.c (no JSON document is
 * built) and points go to the store in runs of whole blocks. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "log_parse.h"

/* Points handed to pmcp_store_log() at once per series (a store block). */
#define SLOT_POINTS 16384
/* A batch: this many lines or bytes, two seconds of input, or the end of
 * input. */
#define BATCH_LINES 1000000
#define BATCH_BYTES (64u << 20)
#define BATCH_SECONDS 2

typedef struct series_slot {
  char *key;
  char *sig; /* length-prefixed labels, kind, scale, key */
  size_t sig_len;
  uint64_t hash;
  int64_t id;
  pmcp_point *pts;
  size_t n;
} series_slot;

typedef struct log_ctx {
  pmcp_store *s;
  pmcp_tenant t;
  const char *run;
  series_slot *slots;
  size_t n_slots, cap_slots;
  size_t *tab; /* open addressing: slot index + 1, 0 empty */
  size_t tab_cap;
  char *sig;   /* the current line's signature: context, then the key */
  size_t sig_cap, ctx_len;
  /* Per line template (log_parse.h): the slots its keys went to, by
   * position. A line that matches a template has its keys, labels, kind
   * and scale, so its points go to these slots without a lookup. */
  struct {
    size_t *slot, n, cap;
  } cache[LOG_TMPLS];
  int ctx_ok; /* c->sig holds the current line's context */
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
    "batches (1000000 lines, 64 MiB or, from a pipe, 2 seconds of input), each in one\n"
    "transaction: a bad line is named and nothing of its batch is stored (a file that\n"
    "fits one batch is all or nothing).\n");
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

static uint64_t fnv1a(const char *p, size_t n)
{
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
  return h;
}

/* Appends a length-prefixed field to the signature. */
static int sig_put(log_ctx *c, size_t *len, const char *s)
{
  size_t n = strlen(s);
  if (*len + n + 4 > c->sig_cap) {
    size_t cap = c->sig_cap ? c->sig_cap : 256;
    while (cap < *len + n + 4)
      cap *= 2;
    char *ns = realloc(c->sig, cap);
    if (!ns)
      return -1;
    c->sig = ns;
    c->sig_cap = cap;
  }
  uint32_t n32 = (uint32_t)n;
  memcpy(c->sig + *len, &n32, 4);
  memcpy(c->sig + *len + 4, s, n);
  *len += n + 4;
  return 0;
}

static int tab_insert(log_ctx *c, size_t slot)
{
  if ((c->n_slots + 1) * 2 > c->tab_cap) {
    size_t cap = c->tab_cap ? c->tab_cap * 2 : 64;
    size_t *nt = calloc(cap, sizeof *nt);
    if (!nt)
      return -1;
    for (size_t i = 0; i < c->n_slots; i++) {
      size_t h = (size_t)c->slots[i].hash & (cap - 1);
      while (nt[h])
        h = (h + 1) & (cap - 1);
      nt[h] = i + 1;
    }
    free(c->tab);
    c->tab = nt;
    c->tab_cap = cap;
  }
  size_t h = (size_t)c->slots[slot].hash & (c->tab_cap - 1);
  while (c->tab[h])
    h = (h + 1) & (c->tab_cap - 1);
  c->tab[h] = slot + 1;
  return 0;
}

/* Creates the series of c->sig (@p len bytes, @p hash) as a new slot. */
static int new_series(log_ctx *c, const char *key, const log_line *l, const char *kind,
                      const char *scale, size_t len, uint64_t hash, char *err, size_t errn)
{
  if (l->n_labels > 32) {
    snprintf(err, errn, "more than 32 labels");
    return PMCP_EINVAL;
  }
  pmcp_label lab[32];
  for (size_t i = 0; i < l->n_labels; i++) {
    lab[i].key = l->labels[i].name;
    lab[i].value = l->labels[i].str;
  }
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, key, lab, l->n_labels, PMCP_METRIC_FLOAT,
                         PMCP_SCALE_STEP};
  if (strcmp(kind, "histogram") == 0)
    sp.kind = PMCP_METRIC_HISTOGRAM;
  else if (strcmp(kind, "scatter") == 0)
    sp.kind = PMCP_METRIC_SCATTER;
  else if (strcmp(kind, "float") != 0) {
    snprintf(err, errn, "unknown kind \"%s\" (float, histogram, scatter)", kind);
    return PMCP_EINVAL;
  }
  if (strcmp(scale, "env_step") == 0)
    sp.scale = PMCP_SCALE_ENV_STEP;
  else if (strcmp(scale, "episode") == 0)
    sp.scale = PMCP_SCALE_EPISODE;
  else if (strcmp(scale, "step") != 0) {
    snprintf(err, errn, "unknown scale \"%s\" (step, env_step, episode)", scale);
    return PMCP_EINVAL;
  }
  if (c->n_slots == c->cap_slots) {
    size_t cap = c->cap_slots ? c->cap_slots * 2 : 16;
    series_slot *ns = realloc(c->slots, cap * sizeof *ns);
    if (!ns) {
      snprintf(err, errn, "out of memory");
      return PMCP_ENOMEM;
    }
    c->slots = ns;
    c->cap_slots = cap;
  }
  series_slot *sl = &c->slots[c->n_slots];
  memset(sl, 0, sizeof *sl);
  int rc = pmcp_store_series(c->s, c->t, c->run, &sp, &sl->id);
  if (rc) {
    snprintf(err, errn, "%s", pmcp_store_errmsg(c->s));
    return rc;
  }
  sl->sig = malloc(len);
  sl->key = strdup(key);
  if (!sl->sig || !sl->key) {
    free(sl->sig);
    free(sl->key);
    snprintf(err, errn, "out of memory");
    return PMCP_ENOMEM;
  }
  memcpy(sl->sig, c->sig, len);
  sl->sig_len = len;
  sl->hash = hash;
  c->n_slots++;
  if (tab_insert(c, c->n_slots - 1)) {
    snprintf(err, errn, "out of memory");
    return PMCP_ENOMEM;
  }
  return 0;
}

/* The context of a line's points (labels, kind, scale) as the start of
 * c->sig; checks the labels' types. */
static int line_context(log_ctx *c, const log_line *l, const char *kind, const char *scale,
                        char *err, size_t errn)
{
  size_t len = 0;
  int mem = 0;
  for (size_t i = 0; i < l->n_labels; i++) {
    if (l->labels[i].type != LJ_STRING) {
      snprintf(err, errn, "label \"%s\" must be a string", l->labels[i].name);
      return PMCP_EINVAL;
    }
    mem |= sig_put(c, &len, l->labels[i].name) | sig_put(c, &len, l->labels[i].str);
  }
  mem |= sig_put(c, &len, kind) | sig_put(c, &len, scale);
  if (mem) {
    snprintf(err, errn, "out of memory");
    return PMCP_ENOMEM;
  }
  c->ctx_len = len;
  c->ctx_ok = 1;
  return 0;
}

/* The series of @p key in the line's context (line_context()), the
 * @p pos-th key of its line; created on first use. */
static int find_series(log_ctx *c, const char *key, size_t pos, const log_line *l,
                      const char *kind, const char *scale, series_slot **out, char *err,
                      size_t errn)
{
  int ti = l->tmpl;
  int rc;
  if (!c->ctx_ok && (rc = line_context(c, l, kind, scale, err, errn)))
    return rc;
  size_t len = c->ctx_len;
  if (sig_put(c, &len, key)) {
    snprintf(err, errn, "out of memory");
    return PMCP_ENOMEM;
  }
  uint64_t hash = fnv1a(c->sig, len);
  size_t found = SIZE_MAX;
  for (size_t h = c->tab_cap ? (size_t)hash & (c->tab_cap - 1) : 0; c->tab_cap && c->tab[h];
       h = (h + 1) & (c->tab_cap - 1)) {
    series_slot *sl = &c->slots[c->tab[h] - 1];
    if (sl->hash == hash && sl->sig_len == len && !memcmp(sl->sig, c->sig, len)) {
      found = c->tab[h] - 1;
      break;
    }
  }
  if (found == SIZE_MAX) {
    rc = new_series(c, key, l, kind, scale, len, hash, err, errn);
    if (rc)
      return rc;
    found = c->n_slots - 1;
  }
  if (ti >= 0 && pos == c->cache[ti].n) { /* the cache stays a prefix */
    if (pos == c->cache[ti].cap) {
      size_t cap = pos ? pos * 2 : 16;
      size_t *nc = realloc(c->cache[ti].slot, cap * sizeof *nc);
      if (!nc) {
        snprintf(err, errn, "out of memory");
        return PMCP_ENOMEM;
      }
      c->cache[ti].slot = nc;
      c->cache[ti].cap = cap;
    }
    c->cache[ti].slot[c->cache[ti].n++] = found;
  }
  *out = &c->slots[found];
  return 0;
}

/* find_series(), without a call for the keys of a template's line */
static inline int get_series(log_ctx *c, const char *key, size_t pos, const log_line *l,
                             const char *kind, const char *scale, series_slot **out, char *err,
                             size_t errn)
{
  int ti = l->tmpl;
  if (ti >= 0 && pos < c->cache[ti].n) {
    *out = &c->slots[c->cache[ti].slot[pos]];
    return 0;
  }
  return find_series(c, key, pos, l, kind, scale, out, err, errn);
}

/* A float value: a number, or "NaN", "Infinity", "-Infinity". */
static inline int num_value(lj_type t, double num, const char *str, double *out)
{
  if (t == LJ_NUMBER) {
    *out = num;
    return 0;
  }
  if (t != LJ_STRING)
    return -1;
  if (strcmp(str, "NaN") == 0)
    *out = NAN;
  else if (strcmp(str, "Infinity") == 0)
    *out = INFINITY;
  else if (strcmp(str, "-Infinity") == 0)
    *out = -INFINITY;
  else
    return -1;
  return 0;
}

static inline int add_point(log_ctx *c, series_slot *sl, int64_t step, int64_t time_ms,
                            double v)
{
  if (!sl->pts && !(sl->pts = malloc(SLOT_POINTS * sizeof *sl->pts)))
    return PMCP_ENOMEM;
  sl->pts[sl->n++] = (pmcp_point){step, time_ms, v};
  if (sl->n == SLOT_POINTS)
    return flush_slot(c, sl);
  return 0;
}

/* One parsed line. Returns 0, or an error with @p err filled. */
static int log_line_store(log_ctx *c, const log_line *l, char *err, size_t errn)
{
  if (l->step_t != LJ_NUMBER || l->step != floor(l->step) ||
      fabs(l->step) > 9007199254740992.0) {
    snprintf(err, errn, "\"step\" must be an integer");
    return PMCP_EINVAL;
  }
  int64_t step = (int64_t)l->step, time_ms = 0;
  if (l->time_t != LJ_ABSENT && l->time_t != LJ_NULL) {
    if (l->time_t == LJ_NUMBER && fabs(l->time_num) < 9.2e18)
      time_ms = (int64_t)l->time_num;
    else if (l->time_t != LJ_STRING || probe_cli_time(l->time_str, &time_ms)) {
      snprintf(err, errn, "\"time\" must be epoch milliseconds or an ISO 8601 time");
      return PMCP_EINVAL;
    }
  }
  if (l->labels_t != LJ_ABSENT && l->labels_t != LJ_OBJECT) {
    snprintf(err, errn, "\"labels\" must be an object of strings");
    return PMCP_EINVAL;
  }
  if ((l->kind_t != LJ_ABSENT && l->kind_t != LJ_STRING) ||
      (l->scale_t != LJ_ABSENT && l->scale_t != LJ_STRING)) {
    snprintf(err, errn, "\"kind\" and \"scale\" must be strings");
    return PMCP_EINVAL;
  }
  const char *kind = l->kind_t == LJ_STRING ? l->kind : "float";
  const char *scale = l->scale_t == LJ_STRING ? l->scale : "step";
  series_slot *sl;
  int rc;
  int values = l->values_t != LJ_ABSENT;
  if (values && (l->values_t != LJ_OBJECT || strcmp(kind, "float") != 0)) {
    snprintf(err, errn, "\"values\" must be an object of numbers (float points)");
    return PMCP_EINVAL;
  }
  if (!values && (l->key_t != LJ_STRING || !*l->key)) {
    snprintf(err, errn, "\"key\" (a string) or \"values\" is missing");
    return PMCP_EINVAL;
  }
  /* A new template's line starts its cache; a template's line has the
   * context of the line it was made from (checked then). */
  c->ctx_ok = 0;
  if (l->tmpl >= 0 && l->tmpl_new)
    c->cache[l->tmpl].n = 0;
  if ((l->tmpl < 0 || l->tmpl_new) && (rc = line_context(c, l, kind, scale, err, errn)))
    return rc;
  if (values) {
    for (size_t i = 0; i < l->n_values; i++) {
      const log_kv *it = &l->values[i];
      double v;
      if (num_value(it->type, it->num, it->str, &v)) {
        snprintf(err, errn, "value of \"%s\" is not a number", it->name);
        return PMCP_EINVAL;
      }
      if ((rc = get_series(c, it->name, i, l, kind, scale, &sl, err, errn)))
        return rc;
      if ((rc = add_point(c, sl, step, time_ms, v))) {
        snprintf(err, errn, "%s", pmcp_store_errmsg(c->s));
        return rc;
      }
    }
    return 0;
  }
  if ((rc = get_series(c, l->key, 0, l, kind, scale, &sl, err, errn)))
    return rc;
  if (strcmp(kind, "float") == 0) {
    double v;
    if (num_value(l->value_t, l->value, l->value_str, &v)) {
      snprintf(err, errn, "\"value\" must be a number (or \"NaN\", \"Infinity\", \"-Infinity\")");
      return PMCP_EINVAL;
    }
    rc = add_point(c, sl, step, time_ms, v);
    if (rc)
      snprintf(err, errn, "%s", pmcp_store_errmsg(c->s));
    return rc;
  }
  int hist = strcmp(kind, "histogram") == 0;
  const log_arr *a = &l->arr[hist ? LA_EDGES : LA_X], *b = &l->arr[hist ? LA_COUNTS : LA_Y];
  const char *an = hist ? "edges" : "x", *bn = hist ? "counts" : "y";
  if (a->type != LJ_ARRAY || !a->all_numbers) {
    snprintf(err, errn, "\"%s\" must be an array of numbers", an);
    return PMCP_EINVAL;
  }
  if (b->type != LJ_ARRAY || !b->all_numbers) {
    snprintf(err, errn, "\"%s\" must be an array of numbers", bn);
    return PMCP_EINVAL;
  }
  if (hist ? a->n != b->n + 1 : a->n != b->n) {
    snprintf(err, errn, hist ? "a histogram needs one more edge than counts"
                             : "\"x\" and \"y\" must be as long");
    return PMCP_EINVAL;
  }
  /* empty arrays: the store names the problem; it needs a real pointer */
  static const double none[1] = {0};
  const double *av = a->n ? a->v : none, *bv = b->n ? b->v : none;
  rc = hist ? pmcp_store_log_histogram(c->s, c->t, sl->id, step, time_ms, av, bv, b->n)
            : pmcp_store_log_scatter(c->s, c->t, sl->id, step, time_ms, av, bv, b->n);
  if (rc)
    snprintf(err, errn, "%s", pmcp_store_errmsg(c->s));
  else
    c->sets++;
  return rc;
}

/* Parses and stores one line (blank lines are skipped). */
static int one_line(log_ctx *c, log_line *l, log_tmpl *t, char *p, size_t n, char *err,
                    size_t errn)
{
  size_t w = 0;
  while (w < n && (p[w] == ' ' || p[w] == '\t' || p[w] == '\r'))
    w++;
  if (w == n)
    return 0;
  char why[200];
  int prc = probe_log_parse(p, n, l, t, why, sizeof why);
  if (prc == -1) {
    snprintf(err, errn, "not valid JSON (%s)", why);
    return PMCP_EPARSE;
  }
  if (prc == -2) {
    snprintf(err, errn, "not a JSON object");
    return PMCP_EINVAL;
  }
  if (prc) {
    snprintf(err, errn, "out of memory");
    return PMCP_ENOMEM;
  }
  return log_line_store(c, l, err, errn);
}

/* Where the input stands: the batch being read (its first line's number)
 * and what is stored. */
typedef struct log_in {
  const char *name;
  size_t batch_first, batch_lines, batch_bytes;
  uint64_t stored_lines;
  int open; /* the batch's transaction is open */
  time_t started;
} log_in;

static void say_stored(const log_in *in)
{
  if (in->stored_lines)
    fprintf(stderr, "probe log: lines 1-%llu were stored; nothing from line %zu on\n",
            (unsigned long long)in->stored_lines, in->batch_first);
}

/* Parses and stores the lines of [buf, buf + stop) (the last one may lack
 * its '\n') in the batch's transaction, opened first if needed. */
static int take_lines(log_ctx *c, log_line *ln, log_tmpl *t, log_in *in, char *buf,
                      size_t stop)
{
  int rc = 0;
  char err[600];
  if (!in->open) {
    if ((rc = pmcp_store_begin(c->s)))
      return probe_cli_fail("log", c->s, rc);
    in->open = 1;
  }
  for (size_t pos = 0; rc == 0 && pos < stop; in->batch_lines++) {
    char *q = memchr(buf + pos, '\n', stop - pos);
    size_t n = q ? (size_t)(q - (buf + pos)) : stop - pos;
    rc = one_line(c, ln, t, buf + pos, n, err, sizeof err);
    if (rc) {
      fprintf(stderr, "probe log: %s: line %zu: %s\n", in->name,
              in->batch_first + in->batch_lines, err);
      say_stored(in);
    }
    pos += n + 1;
  }
  in->batch_bytes += stop;
  return rc;
}

/* Ends the batch: its points written and committed, or (@p rc, an error
 * already reported) rolled back. */
static int end_batch(log_ctx *c, log_in *in, int rc)
{
  if (!in->open)
    return rc;
  for (size_t i = 0; rc == 0 && i < c->n_slots; i++)
    if ((rc = flush_slot(c, &c->slots[i])))
      probe_cli_fail("log", c->s, rc);
  if (rc == 0 && (rc = pmcp_store_commit(c->s)))
    probe_cli_fail("log", c->s, rc);
  if (rc) {
    pmcp_store_rollback(c->s);
    for (size_t i = 0; i < c->n_slots; i++)
      c->slots[i].n = 0;
  } else {
    in->stored_lines += in->batch_lines;
  }
  in->open = 0;
  in->batch_first += in->batch_lines;
  in->batch_lines = in->batch_bytes = 0;
  in->started = time(NULL);
  return rc;
}

/* A file's batches are not cut by time: reading it never waits, and a
 * file that fits one batch stays all or nothing however long it takes. */
static int batch_full(const log_in *in, int file, size_t lines, size_t bytes)
{
  return lines >= BATCH_LINES || bytes >= BATCH_BYTES ||
         (!file && time(NULL) - in->started >= BATCH_SECONDS);
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
  int fd = file && strcmp(file, "-") ? open(file, O_RDONLY | O_CLOEXEC) : 0;
  if (fd < 0)
    return probe_cli_err(1, "log", "cannot open %s", file);
  const char *name = file ? file : "stdin";
  log_ctx c;
  memset(&c, 0, sizeof c);
  c.run = run;
  if (probe_cli_open(g, 0, &c.s, &c.t)) {
    if (fd)
      close(fd);
    return 1;
  }
  /* Input is read in large chunks and taken in batches (BATCH_LINES lines,
   * or what arrived within BATCH_SECONDS, or the rest at end of input),
   * each parsed and written in one transaction. From a pipe or a terminal
   * a batch is held until it is complete, so that no transaction stays
   * open while waiting for input (a training job can stream into `probe
   * log` for hours); a regular file never makes a read wait, so its lines
   * are taken as each chunk arrives, in a buffer that stays small. */
  struct stat fst;
  int stream = fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode);
  int rc = 0, eof = 0;
  char *buf = NULL;
  size_t cap = 0, used = 0, scanned = 0, lines = 0, end = 0; /* end: after the last '\n' */
  log_in in = {name, 1, 0, 0, 0, 0, time(NULL)};
  log_line ln;
  log_tmpl tmpl;
  memset(&ln, 0, sizeof ln);
  memset(&tmpl, 0, sizeof tmpl);
  while (rc == 0 && !eof) {
    if (cap - used < (1u << 20)) {
      size_t ncap = cap ? cap * 2 : (4u << 20);
      char *nb = realloc(buf, ncap);
      if (!nb) {
        rc = probe_cli_err(1, "log", "out of memory");
        break;
      }
      buf = nb;
      cap = ncap;
    }
    /* a file's chunks stay small enough for the cache to keep */
    size_t want = cap - used;
    if (stream && want > (256u << 10))
      want = 256u << 10;
    ssize_t r = read(fd, buf + used, want);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      rc = probe_cli_err(1, "log", "cannot read %s: %s", name, strerror(errno));
      break;
    }
    if (r == 0)
      eof = 1;
    used += (size_t)r;
    /* where the last complete line ends; a held batch counts its lines */
    if (stream) {
      for (size_t i = used; i > scanned; i--)
        if (buf[i - 1] == '\n') {
          end = i;
          break;
        }
    } else {
      for (char *q; scanned < used && (q = memchr(buf + scanned, '\n', used - scanned));) {
        lines++;
        scanned = (size_t)(q - buf) + 1;
        end = scanned;
      }
    }
    scanned = used;
    /* One line may not grow the buffer without bound: past a batch's bytes
     * with no newline it is refused (what came before it is stored). */
    if (!eof && used - end > BATCH_BYTES) {
      fprintf(stderr, "probe log: %s: line %zu: longer than %u MiB (no newline in it)\n", name,
              in.batch_first + in.batch_lines + lines, BATCH_BYTES >> 20);
      say_stored(&in);
      rc = end_batch(&c, &in, 1);
      break;
    }
    if (!stream && !eof && !batch_full(&in, 0, lines, end))
      continue;
    size_t stop = eof ? used : end; /* at end of input, a last line without '\n' too */
    if (stop)
      rc = take_lines(&c, &ln, &tmpl, &in, buf, stop);
    if (rc || eof || !stream || batch_full(&in, 1, in.batch_lines, in.batch_bytes))
      rc = end_batch(&c, &in, rc);
    memmove(buf, buf + stop, used - stop);
    used -= stop;
    scanned = used; /* what is left holds no '\n' */
    end = lines = 0;
  }
  probe_log_line_free(&ln, &tmpl);
  free(buf);
  if (rc == 0 && !g->quiet)
    fprintf(stderr, "probe log: %llu points and %llu histogram/scatter sets in %zu series of %s\n",
            (unsigned long long)c.points, (unsigned long long)c.sets, c.n_slots, run);
  for (size_t i = 0; i < c.n_slots; i++) {
    free(c.slots[i].sig);
    free(c.slots[i].key);
    free(c.slots[i].pts);
  }
  free(c.slots);
  free(c.tab);
  free(c.sig);
  for (int i = 0; i < LOG_TMPLS; i++)
    free(c.cache[i].slot);
  if (fd)
    close(fd);
  pmcp_store_free(c.s);
  return rc ? 1 : 0;
}
