/* SPDX-License-Identifier: MIT */
/* Parsing of `kind:id` refs (see refs.h). Errors are sentences an agent can
 * act on: they quote the offending ref (cut to a safe length) and say what
 * a valid one looks like. */
#include "research/refs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probemcp/error.h"

static const char *const kind_names[PMCP__REF_KINDS_] = {
  [PMCP__REF_NONE] = "",
  [PMCP__REF_RUN] = "run",
  [PMCP__REF_EXPERIMENT] = "experiment",
  [PMCP__REF_PROJECT] = "project",
  [PMCP__REF_ARTIFACT] = "artifact",
  [PMCP__REF_DATASET] = "dataset",
  [PMCP__REF_CHECKPOINT] = "checkpoint",
  [PMCP__REF_SOURCE] = "source",
  [PMCP__REF_GROUP] = "group",
  [PMCP__REF_TRIAL] = "trial",
  [PMCP__REF_SESSION] = "session",
  [PMCP__REF_SUBNOTE] = "sub-note",
  [PMCP__REF_TEAMNOTE] = "team-note",
  [PMCP__REF_NOTE] = "note",
  [PMCP__REF_FILE] = "file",
  [PMCP__REF_WORKSPACE] = "workspace",
};

#define KINDS_LIST "run, experiment, project, artifact, dataset, checkpoint, " \
  "source, group, trial, session, note, sub-note, team-note, file, " \
  "workspace"

const char *pmcp__ref_kind_name(pmcp__ref_kind kind)
{
  if (kind <= PMCP__REF_NONE || kind >= PMCP__REF_KINDS_)
    return "";
  return kind_names[kind];
}

pmcp__ref_kind pmcp__ref_kind_from(const char *name, size_t len)
{
  for (int k = PMCP__REF_RUN; k < PMCP__REF_KINDS_; k++) {
    if (strlen(kind_names[k]) == len && memcmp(kind_names[k], name, len) == 0)
      return (pmcp__ref_kind)k;
  }
  return PMCP__REF_NONE;
}

static int id_char(unsigned char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

int pmcp__ref_id_ok(const char *s, size_t len)
{
  if (len == 0 || len > PMCP__REF_MAX)
    return 0;
  for (size_t i = 0; i < len; i++) {
    if (!id_char((unsigned char)s[i]))
      return 0;
  }
  return 1;
}

/* Quotes at most 60 bytes of @p s, replacing bytes that are not printable
 * ASCII, so an error never echoes megabytes or control characters. */
static void quote(char *dst, size_t size, const char *s)
{
  size_t j = 0, i = 0;
  for (; s[i] && i < 60 && j + 2 < size; i++) {
    unsigned char c = (unsigned char)s[i];
    dst[j++] = (c >= 0x20 && c < 0x7f && c != '"') ? (char)c : '?';
  }
  if (s[i] && j + 4 < size) {
    memcpy(dst + j, "...", 3);
    j += 3;
  }
  dst[j] = '\0';
}

static int fail(char *err, size_t errlen, const char *s, const char *why)
{
  char q[80];
  quote(q, sizeof q, s);
  if (err && errlen)
    snprintf(err, errlen, "ref \"%s\": %s", q, why);
  return PMCP_EINVAL;
}

static int parse_step(const char *s, int64_t *out)
{
  if (!*s)
    return -1;
  int64_t v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9')
      return -1;
    if (v > (INT64_MAX - 9) / 10)
      return -1;
    v = v * 10 + (*s - '0');
  }
  *out = v;
  return 0;
}

int pmcp__ref_parse(pmcp__ref *out, const char *s, char *err, size_t errlen)
{
  memset(out, 0, sizeof *out);
  if (!s)
    return fail(err, errlen, "", "a ref is a string kind:id");
  size_t n = strlen(s);
  if (n == 0)
    return fail(err, errlen, s, "empty; a ref is kind:id, e.g. run:abc123");
  if (n > PMCP__REF_MAX)
    return fail(err, errlen, s, "longer than 256 characters");
  if (strcmp(s, "team-note") == 0) {
    out->kind = PMCP__REF_TEAMNOTE;
    return 0;
  }
  const char *colon = strchr(s, ':');
  if (!colon)
    return fail(err, errlen, s,
                "has no kind: prefix; keep the prefix browse and search "
                "return (kinds: " KINDS_LIST ")");
  pmcp__ref_kind kind = pmcp__ref_kind_from(s, (size_t)(colon - s));
  if (kind == PMCP__REF_NONE)
    return fail(err, errlen, s, "unknown kind; kinds are " KINDS_LIST);
  if (kind == PMCP__REF_TEAMNOTE)
    return fail(err, errlen, s, "team-note takes no id; pass \"team-note\"");
  out->kind = kind;
  const char *body = colon + 1;
  const char *at = strchr(body, '@');
  size_t idlen = at ? (size_t)(at - body) : strlen(body);
  if (idlen == 0)
    return fail(err, errlen, s, "the id after the kind: prefix is empty");
  if (!pmcp__ref_id_ok(body, idlen))
    return fail(err, errlen, s,
                "an id may only contain letters, digits, '.', '_' and '-'");
  memcpy(out->id, body, idlen);
  out->id[idlen] = '\0';

  if (kind == PMCP__REF_CHECKPOINT) {
    if (!at)
      return fail(err, errlen, s,
                  "a checkpoint ref names the save: checkpoint:RUN@best, "
                  "@latest or @stepN");
    const char *sel = at + 1;
    if (strcmp(sel, "best") == 0) {
      out->ckpt = PMCP__CKPT_BEST;
    } else if (strcmp(sel, "latest") == 0) {
      out->ckpt = PMCP__CKPT_LATEST;
    } else if (strncmp(sel, "step", 4) == 0 &&
               parse_step(sel + 4, &out->ckpt_step) == 0) {
      out->ckpt = PMCP__CKPT_STEP;
    } else {
      return fail(err, errlen, s,
                  "after '@' a checkpoint ref takes best, latest or stepN "
                  "(N a whole number)");
    }
    snprintf(out->version, sizeof out->version, "%s", sel);
    return 0;
  }
  if (at) {
    if (kind != PMCP__REF_DATASET && kind != PMCP__REF_SOURCE &&
        kind != PMCP__REF_ARTIFACT)
      return fail(err, errlen, s,
                  "only dataset, source, artifact and checkpoint refs take "
                  "an @version");
    const char *ver = at + 1;
    size_t vlen = strlen(ver);
    if (!pmcp__ref_id_ok(ver, vlen))
      return fail(err, errlen, s,
                  "the version after '@' must be a non-empty number or label "
                  "of letters, digits, '.', '_' and '-'");
    memcpy(out->version, ver, vlen + 1);
  }
  return 0;
}

int pmcp__ref_parse_run(pmcp__ref *out, const char *s, char *err, size_t errlen)
{
  if (s && !strchr(s, ':') && strcmp(s, "team-note") != 0) {
    memset(out, 0, sizeof *out);
    size_t n = strlen(s);
    if (!pmcp__ref_id_ok(s, n))
      return fail(err, errlen, s,
                  n > PMCP__REF_MAX
                      ? "longer than 256 characters"
                      : "a run id may only contain letters, digits, '.', "
                        "'_' and '-' (or pass run:ID)");
    out->kind = PMCP__REF_RUN;
    memcpy(out->id, s, n + 1);
    return 0;
  }
  int rc = pmcp__ref_parse(out, s, err, errlen);
  if (rc)
    return rc;
  if (out->kind != PMCP__REF_RUN) {
    char why[96];
    snprintf(why, sizeof why, "names a %s, but a run is needed (run:ID or ID)",
             pmcp__ref_kind_name(out->kind));
    return fail(err, errlen, s, why);
  }
  return 0;
}

size_t pmcp__ref_format(const pmcp__ref *ref, char *out, size_t size)
{
  int n;
  if (ref->kind == PMCP__REF_TEAMNOTE)
    n = snprintf(out, size, "team-note");
  else if (ref->version[0])
    n = snprintf(out, size, "%s:%s@%s", pmcp__ref_kind_name(ref->kind),
                 ref->id, ref->version);
  else
    n = snprintf(out, size, "%s:%s", pmcp__ref_kind_name(ref->kind), ref->id);
  if (n < 0)
    return 0;
  return (size_t)n < size ? (size_t)n : size ? size - 1 : 0;
}
