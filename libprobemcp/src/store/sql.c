/* SPDX-License-Identifier: MIT */
/* The store's shared statement helpers (sql.h): one-step statements, text
 * columns, digests, and the lookups of refs and ids that every backend
 * file uses (by slug, with artifacts also by their lab-wide name). */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "store/sql.h"
#include "store/ws_scope.h"

void pmcp__sha256_hex(const void *data, size_t len, char out[65])
{
  unsigned char md[32];
  unsigned int mdlen = 0;
  EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL);
  for (int i = 0; i < 32; i++)
    snprintf(out + 2 * i, 3, "%02x", md[i]);
}

int pmcp__st_run1(pmcp_store *s, pmcp__stmt *st, const char *what)
{
  int rc = pmcp__st_step(st);
  int out = rc == PMCP__ROW || rc == PMCP__DONE ? 0 : pmcp__st_err(s, st, what);
  pmcp__st_reset(st);
  return out;
}

int pmcp__st_step1(pmcp_store *s, pmcp__stmt *st, const char *what)
{
  int rc = pmcp__st_step(st);
  return rc == PMCP__ROW || rc == PMCP__DONE ? 0 : pmcp__st_err(s, st, what);
}

int pmcp__st_text_col(pmcp_buf *b, pmcp__stmt *st, int col)
{
  size_t n = 0;
  const char *v = st->ops->text(st, col, &n);
  return pmcp__buf_append(b, v ? v : "", v ? n : 0);
}

/* One literal per table, so each lookup is prepared once per connection. */
static const char *const slug_sql[][2] = {
  {"workspaces", "SELECT id FROM workspaces WHERE tenant_id=?1 AND slug=?2"},
  {"projects", "SELECT id FROM projects WHERE tenant_id=?1 AND slug=?2"},
  {"experiments", "SELECT id FROM experiments WHERE tenant_id=?1 AND slug=?2"},
  {"runs", "SELECT id FROM runs WHERE tenant_id=?1 AND slug=?2"},
  {"notes", "SELECT id FROM notes WHERE tenant_id=?1 AND slug=?2"},
  {"artifacts", "SELECT id FROM artifacts WHERE tenant_id=?1 AND slug=?2"},
  {"datasets", "SELECT id FROM datasets WHERE tenant_id=?1 AND slug=?2"},
  {"checkpoints", "SELECT id FROM checkpoints WHERE tenant_id=?1 AND slug=?2"},
  {"sources", "SELECT id FROM sources WHERE tenant_id=?1 AND slug=?2"},
  {"groups", "SELECT id FROM groups WHERE tenant_id=?1 AND slug=?2"},
  {"trials", "SELECT id FROM trials WHERE tenant_id=?1 AND slug=?2"},
  {"sessions", "SELECT id FROM sessions WHERE tenant_id=?1 AND slug=?2"},
  {"files", "SELECT id FROM files WHERE tenant_id=?1 AND slug=?2"},
};

const char *pmcp__sql_slug_query(const char *table)
{
  for (size_t i = 0; i < sizeof slug_sql / sizeof slug_sql[0]; i++)
    if (strcmp(slug_sql[i][0], table) == 0)
      return slug_sql[i][1];
  return NULL;
}

int pmcp__sql_find(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *kind,
                   const char *id, int64_t *rowid)
{
  const char *table = pmcp__kind_table(kind);
  const char *sql = table ? pmcp__sql_slug_query(table) : NULL;
  if (!sql)
    return pmcp_store_set_error(s, PMCP_EINVAL, "unknown ref kind '%s'", kind);
  pmcp__stmt *st;
  int rc = pmcp__sql_prep(s, c, sql, &st);
  if (rc)
    return rc;
  pmcp__st_bind_int64(st, 1, t.id);
  pmcp__st_bind_text(st, 2, id);
  rc = pmcp__st_step(st);
  int out = 0;
  if (rc == PMCP__ROW)
    *rowid = pmcp__st_int64(st, 0);
  else if (rc == PMCP__DONE)
    out = PMCP_ENOTFOUND;
  else
    out = pmcp__st_err(s, st, "store lookup");
  pmcp__st_reset(st);
  /* Artifacts also resolve by name at the shared, lab-wide level. Writes
   * keep that name unique (notes.c); a store where two shared artifacts
   * carry it anyway answers with both, never with one of them. */
  if (out == PMCP_ENOTFOUND && strcmp(kind, "artifact") == 0) {
    static const char sql_a[] =
        "SELECT id, slug FROM artifacts WHERE tenant_id=?1 AND name=?2 AND shared=1"
        " ORDER BY id LIMIT 2";
    if ((rc = pmcp__sql_prep(s, c, sql_a, &st)))
      return rc;
    pmcp__st_bind_int64(st, 1, t.id);
    pmcp__st_bind_text(st, 2, id);
    char first[160] = "";
    rc = pmcp__st_step(st);
    if (rc == PMCP__ROW) {
      *rowid = pmcp__st_int64(st, 0);
      snprintf(first, sizeof first, "%s", pmcp__st_text(st, 1));
      out = 0;
      rc = pmcp__st_step(st);
      if (rc == PMCP__ROW)
        out = pmcp_store_set_error(s, PMCP_EINVAL,
            "the name '%.64s' is carried by two shared artifacts, artifact:%s and artifact:%.64s:"
            " name one by its id", id, first, pmcp__st_text(st, 1));
      else if (rc != PMCP__DONE)
        out = pmcp__st_err(s, st, "store lookup");
    } else if (rc != PMCP__DONE) {
      out = pmcp__st_err(s, st, "store lookup");
    }
    pmcp__st_reset(st);
  }
  /* A row outside the call's workspace is answered like a missing one. */
  if (out == 0 && (out = pmcp__ws_check(s, t, table, *rowid)) != 0 && out != PMCP_ENOTFOUND)
    return out;
  if (out == PMCP_ENOTFOUND)
    pmcp_store_set_error(s, out, "no %s '%.128s'", kind, id);
  return out;
}

int pmcp__sql_resolve(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *ref,
                      const char *kinds, char kind[32], int64_t *rowid)
{
  const char *id;
  const char *want = NULL;
  char first[32] = "";
  if (kinds) {
    size_t n = strcspn(kinds, " ");
    if (n < 32) {
      memcpy(first, kinds, n);
      first[n] = '\0';
      want = first;
    }
  }
  int rc = pmcp__ref_split(s, ref, want, kind, &id);
  if (rc)
    return rc;
  if (kinds) {
    size_t kl = strlen(kind);
    const char *p = kinds;
    int ok = 0;
    while (*p) {
      size_t n = strcspn(p, " ");
      if (n == kl && strncmp(p, kind, n) == 0)
        ok = 1;
      p += n;
      while (*p == ' ')
        p++;
    }
    if (!ok)
      return pmcp_store_set_error(s, PMCP_EINVAL, "expected a ref of kind %s, got '%.64s'",
                                  kinds, ref);
  }
  if (strcmp(kind, "sub-note") == 0)
    strcpy(kind, "note");
  return pmcp__sql_find(s, c, t, kind, id, rowid);
}

int pmcp__sql_new_id(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *table,
                     const char *want, const char *name, pmcp_buf *out, int64_t *exists)
{
  *exists = 0;
  const char *sql = pmcp__sql_slug_query(table);
  if (!sql)
    return pmcp_store_set_error(s, PMCP_EINTERNAL, "no table %s", table);
  if (want && !pmcp__id_ok(want))
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "invalid id '%.64s': use 1-128 characters of A-Z a-z 0-9 . _ -", want);
  pmcp__stmt *st;
  int rc = pmcp__sql_prep(s, c, sql, &st);
  if (rc)
    return rc;
  if (want) {
    pmcp__buf_reset(out);
    pmcp__buf_puts(out, want);
    pmcp__st_bind_int64(st, 1, t.id);
    pmcp__st_bind_text(st, 2, want);
    int src = pmcp__st_step(st);
    if (src == PMCP__ROW)
      *exists = pmcp__st_int64(st, 0);
    else if (src != PMCP__DONE)
      rc = pmcp__st_err(s, st, "store");
    pmcp__st_reset(st);
    return rc;
  }
  pmcp_buf base = PMCP_BUF_INIT;
  if (pmcp__slugify(&base, name))
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  for (int i = 1;; i++) {
    pmcp__buf_reset(out);
    if (i == 1)
      pmcp__buf_puts(out, base.ptr);
    else
      pmcp__buf_printf(out, "%s-%d", base.ptr, i);
    pmcp__st_reset(st);
    pmcp__st_bind_int64(st, 1, t.id);
    pmcp__st_bind_text(st, 2, out->ptr);
    int src = pmcp__st_step(st);
    if (src == PMCP__DONE)
      break;
    if (src != PMCP__ROW) {
      rc = pmcp__st_err(s, st, "store");
      break;
    }
  }
  pmcp__st_reset(st);
  pmcp_buf_dispose(&base);
  return rc;
}
