/* SPDX-License-Identifier: MIT */
/* Refs, version requirements and the view matrix of the research toolset. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "probemcp/error.h"
#include "research/refs.h"
#include "research/require.h"
#include "research/views/matrix.h"

static char err[256];

START_TEST(ref_kinds)
{
  static const struct { const char *s; pmcp__ref_kind k; const char *id; } ok[] = {
    {"run:abc123", PMCP__REF_RUN, "abc123"},
    {"experiment:e-1", PMCP__REF_EXPERIMENT, "e-1"},
    {"project:p.x_y", PMCP__REF_PROJECT, "p.x_y"},
    {"artifact:tokenizer", PMCP__REF_ARTIFACT, "tokenizer"},
    {"dataset:wiki", PMCP__REF_DATASET, "wiki"},
    {"source:hf-gpt2", PMCP__REF_SOURCE, "hf-gpt2"},
    {"group:g1", PMCP__REF_GROUP, "g1"},
    {"trial:t1", PMCP__REF_TRIAL, "t1"},
    {"session:s1", PMCP__REF_SESSION, "s1"},
    {"sub-note:n1", PMCP__REF_SUBNOTE, "n1"},
    {"team-note", PMCP__REF_TEAMNOTE, ""},
    {"note:n1", PMCP__REF_NOTE, "n1"},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    pmcp__ref r;
    ck_assert_int_eq(pmcp__ref_parse(&r, ok[i].s, err, sizeof err), 0);
    ck_assert_int_eq(r.kind, ok[i].k);
    ck_assert_str_eq(r.id, ok[i].id);
    char back[300];
    pmcp__ref_format(&r, back, sizeof back);
    ck_assert_str_eq(back, ok[i].s);
  }
}
END_TEST

START_TEST(ref_versions)
{
  pmcp__ref r;
  ck_assert_int_eq(pmcp__ref_parse(&r, "dataset:wiki@3", err, sizeof err), 0);
  ck_assert_str_eq(r.id, "wiki");
  ck_assert_str_eq(r.version, "3");
  ck_assert_int_eq(pmcp__ref_parse(&r, "source:s1@v2.1", err, sizeof err), 0);
  ck_assert_str_eq(r.version, "v2.1");
  ck_assert_int_eq(pmcp__ref_parse(&r, "checkpoint:r1@best", err, sizeof err), 0);
  ck_assert_int_eq(r.ckpt, PMCP__CKPT_BEST);
  ck_assert_str_eq(r.id, "r1");
  ck_assert_int_eq(pmcp__ref_parse(&r, "checkpoint:r1@latest", err, sizeof err), 0);
  ck_assert_int_eq(r.ckpt, PMCP__CKPT_LATEST);
  ck_assert_int_eq(pmcp__ref_parse(&r, "checkpoint:r1@step300", err, sizeof err), 0);
  ck_assert_int_eq(r.ckpt, PMCP__CKPT_STEP);
  ck_assert_int_eq(r.ckpt_step, 300);
}
END_TEST

START_TEST(ref_refusals)
{
  static const struct { const char *s; const char *needle; } bad[] = {
    {"", "empty"},
    {"abc", "no kind"},
    {"runs:abc", "unknown kind"},
    {"Run:abc", "unknown kind"},
    {"file:/etc/passwd", "may only contain"},
    {"model:x", "unknown kind"},
    {"run:", "empty"},
    {"run:a b", "may only contain"},
    {"run:a/b", "may only contain"},
    {"run:ab\xc3\xa9", "may only contain"},
    {"run:a@3", "only dataset"},
    {"checkpoint:r1", "names the save"},
    {"checkpoint:r1@step", "best, latest or stepN"},
    {"checkpoint:r1@stepx", "best, latest or stepN"},
    {"checkpoint:r1@first", "best, latest or stepN"},
    {"dataset:wiki@", "non-empty"},
    {"dataset:wiki@a b", "non-empty"},
    {"team-note:x", "takes no id"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    pmcp__ref r;
    err[0] = 0;
    ck_assert_msg(pmcp__ref_parse(&r, bad[i].s, err, sizeof err) == PMCP_EINVAL,
                  "accepted %s", bad[i].s);
    ck_assert_msg(strstr(err, bad[i].needle) != NULL, "%s -> %s", bad[i].s, err);
  }
  char big[400];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = 0;
  memcpy(big, "run:", 4);
  pmcp__ref r;
  ck_assert_int_eq(pmcp__ref_parse(&r, big, err, sizeof err), PMCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err, "256"));
  /* exactly 256 characters is allowed */
  big[256] = 0;
  ck_assert_int_eq(pmcp__ref_parse(&r, big, err, sizeof err), 0);
  /* errors never echo control characters */
  ck_assert_int_eq(pmcp__ref_parse(&r, "ru\nn:x", err, sizeof err), PMCP_EINVAL);
  ck_assert_ptr_null(strchr(err, '\n'));
}
END_TEST

START_TEST(ref_run_forms)
{
  pmcp__ref r;
  ck_assert_int_eq(pmcp__ref_parse_run(&r, "run:abc", err, sizeof err), 0);
  ck_assert_str_eq(r.id, "abc");
  ck_assert_int_eq(pmcp__ref_parse_run(&r, "abc", err, sizeof err), 0);
  ck_assert_str_eq(r.id, "abc");
  ck_assert_int_eq(r.kind, PMCP__REF_RUN);
  ck_assert_int_eq(pmcp__ref_parse_run(&r, "experiment:abc", err, sizeof err),
                   PMCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err, "names a experiment"));
  ck_assert_int_eq(pmcp__ref_parse_run(&r, "a b", err, sizeof err), PMCP_EINVAL);
  ck_assert_int_eq(pmcp__ref_parse_run(&r, "", err, sizeof err), PMCP_EINVAL);
  ck_assert_int_eq(pmcp__ref_parse_run(&r, "team-note", err, sizeof err),
                   PMCP_EINVAL);
}
END_TEST

START_TEST(req_parse_match)
{
  pmcp__req q;
  const char *labels[] = {"production", "v1"};
  ck_assert_int_eq(pmcp__req_parse(&q, ">=2", err, sizeof err), 0);
  ck_assert(!pmcp__req_match(&q, 1, NULL, 0));
  ck_assert(pmcp__req_match(&q, 2, NULL, 0));
  ck_assert(pmcp__req_match(&q, 9, NULL, 0));
  ck_assert_int_eq(pmcp__req_parse(&q, "==3", err, sizeof err), 0);
  ck_assert(pmcp__req_match(&q, 3, NULL, 0));
  ck_assert(!pmcp__req_match(&q, 4, NULL, 0));
  ck_assert_int_eq(pmcp__req_parse(&q, "3", err, sizeof err), 0);
  ck_assert(pmcp__req_match(&q, 3, NULL, 0));
  ck_assert(!pmcp__req_match(&q, 2, NULL, 0));
  ck_assert_int_eq(pmcp__req_parse(&q, ">=2, <5", err, sizeof err), 0);
  ck_assert(!pmcp__req_match(&q, 5, NULL, 0));
  ck_assert(pmcp__req_match(&q, 4, NULL, 0));
  ck_assert_int_eq(pmcp__req_parse(&q, ">1,!=3", err, sizeof err), 0);
  ck_assert(!pmcp__req_match(&q, 3, NULL, 0));
  ck_assert(pmcp__req_match(&q, 2, NULL, 0));
  ck_assert_int_eq(pmcp__req_parse(&q, "<=2", err, sizeof err), 0);
  ck_assert(pmcp__req_match(&q, 2, NULL, 0));
  ck_assert(!pmcp__req_match(&q, 3, NULL, 0));
  ck_assert_int_eq(pmcp__req_parse(&q, "production", err, sizeof err), 0);
  ck_assert(q.is_label);
  ck_assert(pmcp__req_match(&q, 7, labels, 2));
  ck_assert(!pmcp__req_match(&q, 7, labels + 1, 1));
}
END_TEST

START_TEST(req_refusals)
{
  static const struct { const char *s; const char *needle; } bad[] = {
    {">=2.0", "not semver"},
    {"==1.2.3", "not semver"},
    {"2.0", "not semver"},
    {"", "empty"},
    {">=", "whole version number"},
    {">=x", "whole version number"},
    {"~>2", "whole version number"},
    {">=2;<5", "join comparisons"},
    {"prod uction", "label may only"},
    {">=1,>=2,>=3,>=4,>=5", "at most 4"},
    {">=99999999999999999999", "too large"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    pmcp__req q;
    err[0] = 0;
    ck_assert_msg(pmcp__req_parse(&q, bad[i].s, err, sizeof err) == PMCP_EINVAL,
                  "accepted %s", bad[i].s);
    ck_assert_msg(strstr(err, bad[i].needle) != NULL, "%s -> %s", bad[i].s, err);
  }
}
END_TEST

START_TEST(matrix_rows)
{
  size_t n;
  const char *const *v = pmcp__views_of(PMCP__REF_RUN, &n);
  ck_assert_uint_eq(n, 15);
  ck_assert_str_eq(v[0], "card");
  pmcp__views_of(PMCP__REF_EXPERIMENT, &n);
  ck_assert_uint_eq(n, 14);
  pmcp__views_of(PMCP__REF_PROJECT, &n);
  ck_assert_uint_eq(n, 12);
  pmcp__views_of(PMCP__REF_ARTIFACT, &n);
  ck_assert_uint_eq(n, 6);
  pmcp__views_of(PMCP__REF_DATASET, &n);
  ck_assert_uint_eq(n, 4);
  pmcp__views_of(PMCP__REF_CHECKPOINT, &n);
  ck_assert_uint_eq(n, 4);
  pmcp__views_of(PMCP__REF_SOURCE, &n);
  ck_assert_uint_eq(n, 3);
  pmcp__views_of(PMCP__REF_GROUP, &n);
  ck_assert_uint_eq(n, 2);
  pmcp__views_of(PMCP__REF_TRIAL, &n);
  ck_assert_uint_eq(n, 3);
  pmcp__views_of(PMCP__REF_SESSION, &n);
  ck_assert_uint_eq(n, 3);
  pmcp__views_of(PMCP__REF_SUBNOTE, &n);
  ck_assert_uint_eq(n, 1);
  pmcp__views_of(PMCP__REF_TEAMNOTE, &n);
  ck_assert_uint_eq(n, 2);
  pmcp__views_of(PMCP__REF_NOTE, &n);
  ck_assert_uint_eq(n, 2);
  pmcp__views_of(PMCP__REF_FILE, &n);
  ck_assert_uint_eq(n, 3);
  pmcp__views_of(PMCP__REF_WORKSPACE, &n);
  ck_assert_uint_eq(n, 2);
  ck_assert(pmcp__view_allowed(PMCP__REF_ARTIFACT, "content"));
  ck_assert(!pmcp__view_allowed(PMCP__REF_RUN, "content"));
  ck_assert(!pmcp__view_allowed(PMCP__REF_GROUP, "notes"));
  ck_assert(!pmcp__view_allowed(PMCP__REF_ARTIFACT, "notes"));
  /* every view of every kind is described, and in the names list */
  const char *const *all = pmcp__view_names();
  for (int k = PMCP__REF_RUN; k < PMCP__REF_KINDS_; k++) {
    const char *const *kv = pmcp__views_of((pmcp__ref_kind)k, &n);
    for (size_t i = 0; i < n; i++) {
      ck_assert_ptr_nonnull(pmcp__view_find(kv[i]));
      int found = 0;
      for (size_t j = 0; all[j]; j++)
        found |= strcmp(all[j], kv[i]) == 0;
      ck_assert_msg(found, "%s missing from names", kv[i]);
    }
  }
  for (size_t j = 0; all[j]; j++)
    ck_assert_ptr_nonnull(pmcp__view_find(all[j]));
  const pmcp__view_info *c = pmcp__view_find("content");
  ck_assert(pmcp__view_option_ok(c, "grep"));
  ck_assert(!pmcp__view_option_ok(c, "field"));
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("research-refs");
  TCase *t = tcase_create("refs");
  tcase_add_test(t, ref_kinds);
  tcase_add_test(t, ref_versions);
  tcase_add_test(t, ref_refusals);
  tcase_add_test(t, ref_run_forms);
  tcase_add_test(t, req_parse_match);
  tcase_add_test(t, req_refusals);
  tcase_add_test(t, matrix_rows);
  suite_add_tcase(s, t);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
