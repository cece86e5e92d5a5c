/* SPDX-License-Identifier: MIT */
/* Unit tests of the importers' readers: CRC-32C, the protobuf wire reader,
 * the YAML subset, CSV, number parsing, arXiv dates. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/csv.h"
#include "import/import.h"
#include "import/pb.h"
#include "import/tfrecord.h"
#include "util/yaml.h"
#include "probemcp/error.h"
#include "util/buf.h"

int pmcp__arxiv_date(const char *s, char out[80]);

START_TEST(crc32c_vectors)
{
  /* the check value of CRC-32C, and RFC 3720's all-zero vector */
  ck_assert_uint_eq(pmcp__crc32c(0, "123456789", 9), 0xE3069283u);
  unsigned char z[32] = {0};
  ck_assert_uint_eq(pmcp__crc32c(0, z, 32), 0x8A9136AAu);
  unsigned char ff[32];
  memset(ff, 0xff, sizeof ff);
  ck_assert_uint_eq(pmcp__crc32c(0, ff, 32), 0x62A8AB43u);
  /* incremental == one shot */
  uint32_t c = pmcp__crc32c(0, "1234", 4);
  ck_assert_uint_eq(pmcp__crc32c(c, "56789", 5), 0xE3069283u);
  /* masking: rotate right 15, add the constant */
  uint32_t m = pmcp__crc32c_masked("123456789", 9);
  ck_assert_uint_eq(m, ((0xE3069283u >> 15) | (0xE3069283u << 17)) + 0xa282ead8u);
}
END_TEST

START_TEST(pb_varints)
{
  const uint8_t ten[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  const uint8_t *p = ten;
  uint64_t v;
  ck_assert_int_eq(pmcp__pb_varint(&p, ten + sizeof ten, &v), 0);
  ck_assert(v == UINT64_MAX);
  const uint8_t over[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
  p = over;
  ck_assert_int_eq(pmcp__pb_varint(&p, over + sizeof over, &v), -1);
  const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
  p = eleven;
  ck_assert_int_eq(pmcp__pb_varint(&p, eleven + sizeof eleven, &v), -1);
  const uint8_t cut[] = {0x96};
  p = cut;
  ck_assert_int_eq(pmcp__pb_varint(&p, cut + 1, &v), -1);
  const uint8_t n150[] = {0x96, 0x01};
  p = n150;
  ck_assert_int_eq(pmcp__pb_varint(&p, n150 + 2, &v), 0);
  ck_assert_uint_eq(v, 150);
}
END_TEST

START_TEST(pb_fields)
{
  /* field 1 varint 150, field 2 "hi", field 3 fixed64 1.5, field 4 float */
  uint8_t m[] = {0x08, 0x96, 0x01, 0x12, 0x02, 'h', 'i', 0x19, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f,
                 0x25, 0, 0, 0xc0, 0x3f};
  pmcp__pb r;
  pmcp__pb_field f;
  pmcp__pb_init(&r, m, sizeof m);
  ck_assert_int_eq(pmcp__pb_next(&r, &f), 1);
  ck_assert_uint_eq(f.num, 1);
  ck_assert_uint_eq(f.u, 150);
  ck_assert_int_eq(pmcp__pb_next(&r, &f), 1);
  ck_assert_int_eq(f.wire, PMCP__PB_LEN);
  ck_assert_uint_eq(f.len, 2);
  ck_assert(memcmp(f.data, "hi", 2) == 0);
  ck_assert_int_eq(pmcp__pb_next(&r, &f), 1);
  double d;
  ck_assert_int_eq(pmcp__pb_as_double(&f, &d), 0);
  ck_assert(d == 1.5);
  ck_assert_int_eq(pmcp__pb_next(&r, &f), 1);
  ck_assert_int_eq(pmcp__pb_as_double(&f, &d), 0);
  ck_assert(d == 1.5);
  ck_assert_int_eq(pmcp__pb_next(&r, &f), 0);

  /* a length past the end, a group, field number 0 */
  uint8_t longlen[] = {0x12, 0x05, 'a'};
  pmcp__pb_init(&r, longlen, sizeof longlen);
  ck_assert_int_eq(pmcp__pb_next(&r, &f), -1);
  uint8_t group[] = {0x0b};
  pmcp__pb_init(&r, group, 1);
  ck_assert_int_eq(pmcp__pb_next(&r, &f), -1);
  uint8_t zero[] = {0x00, 0x01};
  pmcp__pb_init(&r, zero, 2);
  ck_assert_int_eq(pmcp__pb_next(&r, &f), -1);
  uint8_t short64[] = {0x09, 1, 2, 3};
  pmcp__pb_init(&r, short64, sizeof short64);
  ck_assert_int_eq(pmcp__pb_next(&r, &f), -1);
}
END_TEST

/* ---- YAML ---- */

typedef struct ycoll {
  pmcp_buf out;
} ycoll;

static int ycb(void *ud, const char *path, const pmcp__imp_value *v, int line)
{
  ycoll *c = ud;
  pmcp__buf_printf(&c->out, "%s=", path);
  switch (v->type) {
  case PMCP__IV_NULL: pmcp__buf_puts(&c->out, "null"); break;
  case PMCP__IV_INT: pmcp__buf_printf(&c->out, "i%lld", (long long)v->i); break;
  case PMCP__IV_BOOL: pmcp__buf_printf(&c->out, "b%d", (int)v->i); break;
  case PMCP__IV_FLOAT: pmcp__buf_printf(&c->out, "f%g", v->f); break;
  case PMCP__IV_STR: pmcp__buf_printf(&c->out, "s'%s'", v->s); break;
  case PMCP__IV_JSON: pmcp__buf_printf(&c->out, "j%s", v->s); break;
  }
  pmcp__buf_printf(&c->out, "@%d;", line);
  return 0;
}

static char *yaml(const char *text, int *err_line, const char **why, int *rc)
{
  ycoll c = {PMCP_BUF_INIT};
  *err_line = 0;
  *why = NULL;
  *rc = pmcp__yaml_parse(text, strlen(text), ycb, &c, err_line, why);
  pmcp__buf_putc(&c.out, '\0');
  return c.out.ptr;
}

START_TEST(yaml_mlflow_meta)
{
  int line, rc;
  const char *why;
  char *s = yaml("artifact_uri: file:///x/mlruns/1/abc/artifacts\n"
                 "end_time: 1619548204357\n"
                 "entry_point_name: ''\n"
                 "experiment_id: '2'\n"
                 "lifecycle_stage: deleted\n"
                 "name: ''\n"
                 "tags: []\n"
                 "user_id: gauthiers\n",
                 &line, &why, &rc);
  ck_assert_int_eq(rc, 0);
  ck_assert_str_eq(s, "artifact_uri=s'file:///x/mlruns/1/abc/artifacts'@1;"
                      "end_time=i1619548204357@2;entry_point_name=s''@3;"
                      "experiment_id=s'2'@4;lifecycle_stage=s'deleted'@5;"
                      "name=s''@6;tags=j[]@7;user_id=s'gauthiers'@8;");
  free(s);
}
END_TEST

START_TEST(yaml_nested)
{
  int line, rc;
  const char *why;
  char *s = yaml("# hparams\n---\nlr: 0.001\nuse_amp: true\n"
                 "name: \"a \\\"b\\\" \\u00e9\"\n"
                 "optimizer:\n  kind: adam  # comment\n  betas: [0.9, 0.999, 'x']\n"
                 "  schedule:\n    warmup: 100\n    decay: null\n"
                 "layers:\n- 64\n- 'sixteen'\n"
                 "extra: {}\n"
                 "long: this plain\n  folds over\n"
                 "q: 'it''s\n  folded'\n"
                 "n: .nan\nneg: -.inf\nempty:\n",
                 &line, &why, &rc);
  ck_assert_int_eq(rc, 0);
  ck_assert_str_eq(s, "lr=f0.001@3;use_amp=b1@4;name=s'a \"b\" \xc3\xa9'@5;"
                      "optimizer/kind=s'adam'@7;optimizer/betas=j[0.9,0.999,\"x\"]@8;"
                      "optimizer/schedule/warmup=i100@10;optimizer/schedule/decay=null@11;"
                      "layers=j[64,\"sixteen\"]@13;extra=j{}@15;"
                      "long=s'this plain folds over'@16;q=s'it's folded'@18;"
                      "n=fnan@20;neg=f-inf@21;empty=null@22;");
  free(s);
}
END_TEST

START_TEST(yaml_errors)
{
  /* What is still refused, with libyaml's reason (or ours) and the line. */
  static const struct {
    const char *text;
    size_t len; /* 0: strlen */
    int line;
    const char *why;
  } cases[] = {
      {"a: 1\n\tb: 2\n", 0, 2, "found a tab character that violates indentation"},
      {"a: 'open\n", 0, 2, "found unexpected end of stream"},
      {"a: 1\n  b: 2\n", 0, 2, "mapping values are not allowed in this context"},
      {"a:\n    b: 1\n  c: 2\n", 0, 3, "did not find expected key"},
      {"k: \"bad \\q\"\n", 0, 1, "found unknown escape character"},
      {"just text\n", 0, 1, "expected 'key: value'"},
      {"- 1\n- 2\n", 0, 1, "unsupported YAML (a sequence where keys were expected)"},
      {"a: 1\n---\nb: 2\n", 0, 2, "unsupported YAML (several documents)"},
      {"tags: [unclosed\n", 0, 2, "did not find expected ',' or ']'"},
      {"a: *nowhere\n", 0, 1, "found undefined alias"},
      {"? [1, 2]\n: x\n", 0, 1, "unsupported YAML (a key that is not a scalar)"},
      {"a: 1\nb: x\0y\n", 11, 2, "NUL byte"},
      {"a: &x [*x]\n", 0, 1, "YAML nested too deep"},
      {"a: {<<: 3}\n", 0, 1, "a merge key (<<) takes a mapping or a list of them"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ycoll c = {PMCP_BUF_INIT};
    int line = 0;
    const char *why = NULL;
    size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
    int rc = pmcp__yaml_parse(cases[i].text, len, ycb, &c, &line, &why);
    pmcp_buf_dispose(&c.out);
    ck_assert_msg(rc == PMCP_EPARSE, "case %zu: rc %d", i, rc);
    ck_assert_msg(line == cases[i].line, "case %zu: line %d", i, line);
    ck_assert_msg(why && strcmp(why, cases[i].why) == 0, "case %zu: %s", i,
                  why ? why : "(null)");
  }
}
END_TEST

/* YAML the files meet that a hand-written subset refused: anchors and
 * aliases, merge keys, flow mappings and sequences, block scalars (literal
 * and folded), sequences of mappings, comments everywhere, tags. */
START_TEST(yaml_full)
{
  int line, rc;
  const char *why;
  char *s = yaml("# a comment first\n"
                 "defaults: &d {lr: 0.5, 'wd': 1e-4}  # flow mapping, anchored\n"
                 "model:\n"
                 "  <<: *d\n"
                 "  lr: 0.25            # overrides the merged key\n"
                 "  dims: &dims [64, 128]\n"
                 "again: *dims\n"
                 "note: |\n"
                 "  line one\n"
                 "  line two\n"
                 "folded: >\n"
                 "  one\n"
                 "  two\n"
                 "plain: a\n"
                 "  b   # comment after a folded plain scalar\n"
                 "layers:\n"
                 "  - {kind: conv, k: 3}\n"
                 "  - kind: pool\n"
                 "    size: 2\n"
                 "tuple: !!python/tuple [0.9, 0.999]\n"
                 "nested: [[1, 2], {a: null}, ~, true, .inf]\n"
                 /* the loader does not tell an explicit !!str from no tag:
                  * a plain scalar is typed by its text */
                 "str: !!str 12\n"
                 "quoted: \"12\"\n",
                 &line, &why, &rc);
  ck_assert_msg(rc == 0, "rc %d line %d: %s", rc, line, why ? why : "");
  ck_assert_str_eq(s, "defaults/lr=f0.5@2;defaults/wd=f0.0001@2;"
                      "model/lr=f0.25@5;model/dims=j[64,128]@6;model/wd=f0.0001@2;"
                      "again=j[64,128]@6;"
                      "note=s'line one\nline two\n'@8;folded=s'one two\n'@11;"
                      "plain=s'a b'@14;"
                      "layers=j[{\"kind\":\"conv\",\"k\":3},{\"kind\":\"pool\",\"size\":2}]@17;"
                      "tuple=j[0.9,0.999]@20;"
                      "nested=j[[1,2],{\"a\":null},null,true,\".inf\"]@21;"
                      "str=i12@22;quoted=s'12'@23;");
  free(s);
}
END_TEST

/* ---- the importers that read YAML, on files a subset refused ---- */

static char tmpdir_[256];

static void wfile(const char *rel, const char *text)
{
  char path[512], cmd[600];
  snprintf(path, sizeof path, "%s/%s", tmpdir_, rel);
  snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
  ck_assert_int_eq(system(cmd), 0);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

static void mk_tmp(void)
{
  const char *t = getenv("TMPDIR");
  snprintf(tmpdir_, sizeof tmpdir_, "%s/pmcp-yaml-XXXXXX", t && *t ? t : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir_));
}

static void rm_tmp(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir_);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", tmpdir_);
}

static ycoll rec_; /* what the sink saw, in ycb's notation */

static int rec_exp(pmcp__imp_ctx *cx, const pmcp__imp_experiment *e)
{
  (void)cx;
  pmcp__buf_printf(&rec_.out, "E %s|%s|%d|%lld;", e->key, e->name, e->deleted,
                   (long long)e->created_ms);
  return 0;
}

static int rec_run(pmcp__imp_ctx *cx, const pmcp__imp_run *r)
{
  (void)cx;
  pmcp__buf_printf(&rec_.out, "R %s|%s|%s|%s|%lld|%lld;", r->key, r->name,
                   r->status ? r->status : "-", r->user ? r->user : "-",
                   (long long)r->start_ms, (long long)r->end_ms);
  return 0;
}

static int rec_attr(pmcp__imp_ctx *cx, int kind, const char *key, const pmcp__imp_value *v)
{
  (void)cx;
  if (kind != PMCP__IA_CONFIG && kind != PMCP__IA_PARAM)
    return 0;
  return ycb(&rec_, key, v, 0);
}

static const pmcp__imp_sink rec_sink = {.experiment = rec_exp, .run_begin = rec_run,
                                        .run_attr = rec_attr};

START_TEST(yaml_in_mlflow_meta)
{
  mk_tmp();
  /* an experiment's meta.yaml with a merge key and a folded name, and a
   * run's written as one flow mapping, comments around */
  wfile("mlruns/7/meta.yaml", "# kept by hand\n"
                              "common: &c {lifecycle_stage: active}\n"
                              "<<: *c\n"
                              "experiment_id: \"7\"\n"
                              "name: >-\n  folded\n  name\n"
                              "creation_time: 1700000000000  # ms\n");
  wfile("mlruns/7/abc123/meta.yaml",
        "{run_uuid: abc123, run_name: 'flow run',  # a comment\n"
        " status: 3, start_time: 1700000000001, end_time: 1700000000002,\n"
        " user_id: ann, lifecycle_stage: active, experiment_id: '7', tags: []}\n");
  wfile("mlruns/7/abc123/params/lr", "0.5");
  char dir[300];
  snprintf(dir, sizeof dir, "%s/mlruns", tmpdir_);
  pmcp__imp_ctx cx = {.sink = &rec_sink, .project = "p"};
  pmcp_buf_dispose(&rec_.out);
  int rc = pmcp__import_mlflow(&cx, dir);
  ck_assert_msg(rc == 0, "rc %d: %s", rc, cx.err.ptr ? cx.err.ptr : "");
  pmcp__buf_putc(&rec_.out, '\0');
  ck_assert_str_eq(rec_.out.ptr, "E mlflow:p/folded name|folded name|0|1700000000000;"
                             "R mlflow:abc123|flow run|finished|ann|1700000000001|1700000000002;"
                             "lr=f0.5@0;");
  pmcp_buf_dispose(&rec_.out);
  pmcp_buf_dispose(&cx.err);
  rm_tmp();
}
END_TEST

START_TEST(yaml_in_lightning_hparams)
{
  mk_tmp();
  wfile("lightning_logs/version_0/metrics.csv", "step,epoch,loss\n0,0,0.5\n");
  wfile("lightning_logs/version_0/hparams.yaml",
        "optimizer: &opt\n"
        "  name: adam\n"
        "  betas: !!python/tuple\n  - 0.9\n  - 0.999\n"
        "scheduler: {<<: *opt, name: cosine}\n"
        "prompt: |\n  Say hi.\n  Twice.\n"
        "blocks:\n- {width: 64}\n- width: 128\n  act: gelu\n");
  char dir[300];
  snprintf(dir, sizeof dir, "%s/lightning_logs/version_0", tmpdir_);
  pmcp__imp_ctx cx = {.sink = &rec_sink};
  pmcp_buf_dispose(&rec_.out);
  int rc = pmcp__import_csv(&cx, dir);
  ck_assert_msg(rc == 0, "rc %d: %s", rc, cx.err.ptr ? cx.err.ptr : "");
  pmcp__buf_putc(&rec_.out, '\0');
  const char *attrs = strchr(rec_.out.ptr, ';');
  ck_assert_ptr_nonnull(attrs);
  ck_assert_str_eq(attrs + 1, "optimizer/name=s'adam'@0;optimizer/betas=j[0.9,0.999]@0;"
                              "scheduler/name=s'cosine'@0;scheduler/betas=j[0.9,0.999]@0;"
                              "prompt=s'Say hi.\nTwice.\n'@0;"
                              "blocks=j[{\"width\":64},{\"width\":128,\"act\":\"gelu\"}]@0;");
  pmcp_buf_dispose(&rec_.out);
  pmcp_buf_dispose(&cx.err);
  rm_tmp();
}
END_TEST

START_TEST(yaml_empty_documents)
{
  int line, rc;
  const char *why;
  char *s = yaml("{}\n", &line, &why, &rc);
  ck_assert_int_eq(rc, 0);
  ck_assert_str_eq(s, "");
  free(s);
  s = yaml("", &line, &why, &rc);
  ck_assert_int_eq(rc, 0);
  free(s);
  s = yaml("# only a comment\n\n", &line, &why, &rc);
  ck_assert_int_eq(rc, 0);
  free(s);
}
END_TEST

/* ---- CSV ---- */

START_TEST(csv_rows)
{
  const char *t = "\xef\xbb\xbfstep,\"a \"\"q\"\"\",b\r\n"
                  "1,\"x,\ny\",\r\n"
                  "\n"
                  "2,,3";
  pmcp__csv c;
  pmcp__csv_init(&c, t, strlen(t));
  size_t len;
  ck_assert_int_eq(pmcp__csv_row(&c), 1);
  ck_assert_uint_eq(c.n, 3);
  ck_assert_str_eq(pmcp__csv_field(&c, 0, &len), "step");
  ck_assert_str_eq(pmcp__csv_field(&c, 1, &len), "a \"q\"");
  ck_assert_uint_eq(len, 5);
  ck_assert_int_eq(pmcp__csv_row(&c), 1);
  ck_assert_int_eq(c.row_line, 2);
  ck_assert_str_eq(pmcp__csv_field(&c, 1, &len), "x,\ny");
  ck_assert_str_eq(pmcp__csv_field(&c, 2, &len), "");
  ck_assert_uint_eq(len, 0);
  ck_assert_int_eq(pmcp__csv_row(&c), 1);
  ck_assert_int_eq(c.row_line, 5); /* the quoted line break counts */
  ck_assert_uint_eq(c.n, 3);
  ck_assert_str_eq(pmcp__csv_field(&c, 2, &len), "3");
  ck_assert_ptr_null(pmcp__csv_field(&c, 3, &len));
  ck_assert_int_eq(pmcp__csv_row(&c), 0);
  pmcp__csv_dispose(&c);

  const char *bad[] = {"a,\"b\nc", "a,b\"c\n", "a,\"b\"c\n"};
  const char *why[] = {"unterminated quoted field", "quote inside an unquoted field",
                       "text after a closing quote"};
  for (int i = 0; i < 3; i++) {
    pmcp__csv_init(&c, bad[i], strlen(bad[i]));
    ck_assert_int_eq(pmcp__csv_row(&c), -1);
    ck_assert_str_eq(c.why, why[i]);
    ck_assert_int_eq(c.row_line, 1);
    pmcp__csv_dispose(&c);
  }
}
END_TEST

START_TEST(numbers)
{
  double d;
  int64_t i;
  ck_assert_int_eq(pmcp__imp_parse_double("nan", 3, &d), 0);
  ck_assert(isnan(d));
  ck_assert_int_eq(pmcp__imp_parse_double("-inf", 4, &d), 0);
  ck_assert(isinf(d) && d < 0);
  ck_assert_int_eq(pmcp__imp_parse_double("Infinity", 8, &d), 0);
  ck_assert(isinf(d) && d > 0);
  ck_assert_int_eq(pmcp__imp_parse_double("1e-05", 5, &d), 0);
  ck_assert(d == 1e-05);
  ck_assert_int_eq(pmcp__imp_parse_double("1.6226933508321501e+24", 22, &d), 0);
  ck_assert(d == 1.6226933508321501e+24);
  ck_assert_int_eq(pmcp__imp_parse_double("0x10", 4, &d), -1);
  ck_assert_int_eq(pmcp__imp_parse_double("1.0abc", 6, &d), -1);
  ck_assert_int_eq(pmcp__imp_parse_double("", 0, &d), -1);
  ck_assert_int_eq(pmcp__imp_parse_double("nan(1)", 6, &d), -1);
  ck_assert_int_eq(pmcp__imp_parse_int64("-42", 3, &i), 0);
  ck_assert(i == -42);
  ck_assert_int_eq(pmcp__imp_parse_int64("9223372036854775808", 19, &i), -1);
  ck_assert_int_eq(pmcp__imp_parse_int64("-", 1, &i), -1);
  ck_assert_int_eq(pmcp__imp_parse_int64("1.0", 3, &i), -1);

  pmcp__imp_value v;
  pmcp__imp_infer_value("0.1", &v);
  ck_assert_int_eq(v.type, PMCP__IV_FLOAT);
  pmcp__imp_infer_value("64", &v);
  ck_assert_int_eq(v.type, PMCP__IV_INT);
  pmcp__imp_infer_value("None", &v);
  ck_assert_int_eq(v.type, PMCP__IV_STR);
  pmcp__imp_infer_value("nan", &v); /* a word, not a number */
  ck_assert_int_eq(v.type, PMCP__IV_STR);
  pmcp__imp_infer_value("True", &v);
  ck_assert_int_eq(v.type, PMCP__IV_BOOL);
  ck_assert(v.i == 1);
}
END_TEST

START_TEST(arxiv_dates)
{
  char out[80];
  ck_assert_int_eq(pmcp__arxiv_date("Sat, 31 Mar 2007 02:26:18 GMT", out), 0);
  ck_assert_str_eq(out, "2007-03-31T02:26:18Z");
  ck_assert_int_eq(pmcp__arxiv_date("Mon, 2 Apr 2007 19:18:42 GMT", out), 0);
  ck_assert_str_eq(out, "2007-04-02T19:18:42Z");
  ck_assert_int_eq(pmcp__arxiv_date("Sat, 31 Foo 2007 02:26:18 GMT", out), -1);
  ck_assert_int_eq(pmcp__arxiv_date("yesterday", out), -1);
  ck_assert_int_eq(pmcp__arxiv_date("Sat, 31 Mar 2007 25:26:18 GMT", out), -1);
}
END_TEST

START_TEST(utf8)
{
  ck_assert(pmcp__imp_utf8_text("h\xc3\xa9llo", 6));
  ck_assert(!pmcp__imp_utf8_text("\xc3", 1));
  ck_assert(!pmcp__imp_utf8_text("a\0b", 3));
  ck_assert(!pmcp__imp_utf8_text("\xed\xa0\x80", 3)); /* a surrogate */
  ck_assert(!pmcp__imp_utf8_text("\xc0\xaf", 2));     /* overlong */
  ck_assert(pmcp__imp_utf8_text("\xf0\x9f\x98\x80", 4));
}
END_TEST

static Suite *import_suite(void)
{
  Suite *s = suite_create("import");
  TCase *tc = tcase_create("readers");
  tcase_add_test(tc, crc32c_vectors);
  tcase_add_test(tc, pb_varints);
  tcase_add_test(tc, pb_fields);
  tcase_add_test(tc, yaml_mlflow_meta);
  tcase_add_test(tc, yaml_nested);
  tcase_add_test(tc, yaml_errors);
  tcase_add_test(tc, yaml_full);
  tcase_add_test(tc, yaml_in_mlflow_meta);
  tcase_add_test(tc, yaml_in_lightning_hparams);
  tcase_add_test(tc, yaml_empty_documents);
  tcase_add_test(tc, csv_rows);
  tcase_add_test(tc, numbers);
  tcase_add_test(tc, arxiv_dates);
  tcase_add_test(tc, utf8);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(import_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
