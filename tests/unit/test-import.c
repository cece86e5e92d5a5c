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
  static const struct {
    const char *text;
    int line;
    const char *why;
  } cases[] = {
      {"a: 1\n\tb: 2\n", 2, "tab in indentation"},
      {"a: &x 1\n", 1, "unsupported YAML (anchors, aliases, tags, block scalars)"},
      {"a: 1\nb: *x\n", 2, "unsupported YAML (anchors, aliases, tags, block scalars)"},
      {"x: |\n  block\n", 1, "unsupported YAML (anchors, aliases, tags, block scalars)"},
      {"a:\n  - b: 1\n", 2, "unsupported YAML (sequence of mappings)"},
      {"a: 'open\n", 1, "unterminated quoted string"},
      {"a: 1\n  b: 2\n", 0, NULL}, /* folded into a's value: "1 b: 2" */
      {"a:\n    b: 1\n  c: 2\n", 3, "unexpected indentation"},
      {"k: \"bad \\q\"\n", 1, "bad escape in a double-quoted string"},
      {"just text\n", 1, "expected 'key: value'"},
      {"a: {x: 1}\n", 1, "unsupported YAML flow mapping"},
      {"- 1\n- 2\n", 1, "unsupported YAML (a sequence where keys were expected)"},
      {"a: 1\n---\nb: 2\n", 2, "unsupported YAML (several documents)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int line, rc;
    const char *why;
    char *s = yaml(cases[i].text, &line, &why, &rc);
    free(s);
    if (!cases[i].why) {
      ck_assert_msg(rc == 0, "case %zu: rc %d", i, rc);
      continue;
    }
    ck_assert_msg(rc == PMCP_EPARSE, "case %zu: rc %d", i, rc);
    ck_assert_msg(line == cases[i].line, "case %zu: line %d", i, line);
    ck_assert_msg(why && strcmp(why, cases[i].why) == 0, "case %zu: %s", i,
                  why ? why : "(null)");
  }
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
