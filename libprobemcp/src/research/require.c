/* SPDX-License-Identifier: MIT */
/* Version requirement parsing and matching (see require.h). */
#include "research/require.h"

#include <stdio.h>
#include <string.h>

#include "probemcp/error.h"

static int fail(char *err, size_t errlen, const char *why)
{
  if (err && errlen)
    snprintf(err, errlen, "requirement: %s", why);
  return PMCP_EINVAL;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_alpha(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int pmcp__req_parse(pmcp__req *out, const char *s, char *err, size_t errlen)
{
  memset(out, 0, sizeof *out);
  if (!s || !*s)
    return fail(err, errlen,
                "empty; give a version number (3, ==3, >=2, >=2,<5) or a "
                "label");
  size_t n = strlen(s);
  if (n > 128)
    return fail(err, errlen, "longer than 128 characters");
  if (is_alpha(s[0])) {
    for (size_t i = 0; i < n; i++) {
      char c = s[i];
      if (!is_alpha(c) && !is_digit(c) && c != '.' && c != '_' && c != '-')
        return fail(err, errlen,
                    "a label may only contain letters, digits, '.', '_' "
                    "and '-'");
    }
    out->is_label = 1;
    memcpy(out->label, s, n + 1);
    return 0;
  }
  const char *p = s;
  for (;;) {
    while (*p == ' ')
      p++;
    pmcp__req_op op = PMCP__REQ_EQ;
    if (strncmp(p, ">=", 2) == 0) { op = PMCP__REQ_GE; p += 2; }
    else if (strncmp(p, "<=", 2) == 0) { op = PMCP__REQ_LE; p += 2; }
    else if (strncmp(p, "==", 2) == 0) { op = PMCP__REQ_EQ; p += 2; }
    else if (strncmp(p, "!=", 2) == 0) { op = PMCP__REQ_NE; p += 2; }
    else if (*p == '>') { op = PMCP__REQ_GT; p++; }
    else if (*p == '<') { op = PMCP__REQ_LT; p++; }
    else if (*p == '=') { op = PMCP__REQ_EQ; p++; }
    while (*p == ' ')
      p++;
    if (!is_digit(*p))
      return fail(err, errlen,
                  "expected a whole version number after the operator "
                  "(forms: 3, ==3, >=2, <5, !=4, >=2,<5, or a label)");
    int64_t v = 0;
    while (is_digit(*p)) {
      if (v > (INT64_MAX - 9) / 10)
        return fail(err, errlen, "version number too large");
      v = v * 10 + (*p - '0');
      p++;
    }
    if (*p == '.' || (*p && is_alpha(*p)))
      return fail(err, errlen,
                  "versions are monotonic whole numbers, not semver: write "
                  ">=2 rather than >=2.0");
    if (out->n == PMCP__REQ_MAX_CLAUSES)
      return fail(err, errlen, "at most 4 comparisons");
    out->c[out->n].op = op;
    out->c[out->n].v = v;
    out->n++;
    while (*p == ' ')
      p++;
    if (!*p)
      return 0;
    if (*p != ',')
      return fail(err, errlen,
                  "join comparisons with ',' (e.g. >=2,<5); versions are "
                  "whole numbers");
    p++;
  }
}

int pmcp__req_match(const pmcp__req *req, int64_t version,
                    const char *const *labels, size_t n_labels)
{
  if (req->is_label) {
    for (size_t i = 0; i < n_labels; i++) {
      if (labels[i] && strcmp(labels[i], req->label) == 0)
        return 1;
    }
    return 0;
  }
  for (size_t i = 0; i < req->n; i++) {
    int64_t v = req->c[i].v;
    int ok = 0;
    switch (req->c[i].op) {
    case PMCP__REQ_EQ: ok = version == v; break;
    case PMCP__REQ_NE: ok = version != v; break;
    case PMCP__REQ_GE: ok = version >= v; break;
    case PMCP__REQ_GT: ok = version > v; break;
    case PMCP__REQ_LE: ok = version <= v; break;
    case PMCP__REQ_LT: ok = version < v; break;
    }
    if (!ok)
      return 0;
  }
  return req->n > 0;
}
