/* SPDX-License-Identifier: MIT */
/* The store (both backends): notes (with versions: who, when, through what), artifacts
 * (monotonic integer versions, moving labels, inline content or references,
 * SHA-256, promotion to the shared lab-wide level) and the papers index. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql.h"

static int slug_of(pmcp_store *s, pmcp__sql *q, const char *table, int64_t id, pmcp_buf *out)
{
  char sql[96];
  snprintf(sql, sizeof sql, "SELECT slug FROM %s WHERE id=?1", table);
  pmcp__stmt *st = NULL;
  int rc = pmcp__sql_prep_text(s, q, sql, &st);
  if (rc)
    return rc;
  pmcp__st_bind_int64(st, 1, id);
  pmcp__buf_reset(out);
  rc = pmcp__st_step(st) == PMCP__ROW ? pmcp__st_text_col(out, st, 0)
                                       : pmcp_store_set_error(s, PMCP_ENOTFOUND, "row vanished");
  pmcp__sql_release(q, st);
  return rc;
}

/* The end of writing a note or an artifact version: the search index
 * learns @p ref's text (both buffers disposed). */
static int written(pmcp_store *s, pmcp__sql *q, pmcp_tenant t, pmcp_buf *ref,
                   const char *kind, const char *title, pmcp_buf *body)
{
  int rc = pmcp__sql_index(s, q, t, ref->ptr, kind, title, body->ptr);
  pmcp_buf_dispose(ref);
  pmcp_buf_dispose(body);
  return rc;
}

/* Hands back the written slug (disposed) and version when @p rc is 0. */
static int answer_written(pmcp_buf *slug, int64_t version, pmcp_buf *out_id,
                          int64_t *out_version, int rc)
{
  if (rc == 0 && out_id) {
    pmcp__buf_reset(out_id);
    rc = pmcp__buf_puts(out_id, slug->ptr);
  }
  if (rc == 0 && out_version)
    *out_version = version;
  pmcp_buf_dispose(slug);
  return rc;
}

/* ---- notes ---- */

static int note_kind_ok(const char *k)
{
  return strcmp(k, "note") == 0 || strcmp(k, "overview") == 0 || strcmp(k, "handoff") == 0 ||
         strcmp(k, "sub-note") == 0 || strcmp(k, "team") == 0;
}

/* The one row of @p sql (SELECT id, slug ... WHERE tenant_id=?1 AND
 * <what>=?2 AND owner ?3/?4) a note or an artifact is found by: its owner
 * (none for lab-wide rows) and @p what. *id stays 0 when there is none. */
static int find_owned(pmcp_store *s, pmcp__sql *q, pmcp_tenant t, const char *sql,
                      const char *what, const char *ok, int64_t owner, int64_t *id,
                      pmcp_buf *slug)
{
  pmcp__stmt *st;
  int rc = pmcp__sql_prep(s, q, sql, &st);
  if (rc)
    return rc;
  pmcp__st_bind_int64(st, 1, t.id);
  pmcp__st_bind_text(st, 2, what);
  if (owner) {
    pmcp__st_bind_text(st, 3, ok);
    pmcp__st_bind_int64(st, 4, owner);
  }
  if (pmcp__st_step(st) == PMCP__ROW) {
    *id = pmcp__st_int64(st, 0);
    if (slug)
      pmcp__st_text_col(slug, st, 1);
  }
  pmcp__st_reset(st);
  return 0;
}

/* The slug base of a row owned by @p ok:@p owner: the owner's slug, @p sep
 * and @p name ("exp-3-overview", "run-7.model.pt"). */
static int owned_base(pmcp_store *s, pmcp__sql *q, const char *ok, int64_t owner,
                      const char *sep, const char *name, pmcp_buf *base)
{
  pmcp_buf os = PMCP_BUF_INIT;
  int rc = slug_of(s, q, pmcp__kind_table(ok), owner, &os);
  if (rc == 0)
    rc = pmcp__buf_printf(base, "%s%s%s", os.ptr, sep, name);
  pmcp_buf_dispose(&os);
  return rc;
}

static int note_in(pmcp_store *s, pmcp__sql *q, pmcp_tenant t, const pmcp_note_spec *spec,
                   pmcp_buf *out_id, int64_t *out_version)
{
  const char *kind = spec->kind ? spec->kind : "note";
  if (!spec->body)
    return pmcp_store_set_error(s, PMCP_EINVAL, "a note needs a body");
  if (!note_kind_ok(kind))
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "unknown note kind '%.32s' (note, overview, handoff, sub-note, team)", kind);
  int64_t note = 0, owner = 0, parent = 0;
  char ok[32] = "";
  int rc = 0;
  pmcp__stmt *st;
  if (spec->id) {
    char k[32];
    if ((rc = pmcp__sql_resolve(s, q, t, spec->id, "note sub-note", k, &note)))
      return rc;
  } else {
    if (strcmp(kind, "team") == 0) {
      if (spec->on)
        return pmcp_store_set_error(s, PMCP_EINVAL, "the team note is not about an entity");
    } else {
      if (!spec->on)
        return pmcp_store_set_error(s, PMCP_EINVAL,
            "a %s needs the entity it is about (project:, experiment: or run:)", kind);
      const char *kinds = strcmp(kind, "overview") == 0 ? "project experiment"
                                                         : "run experiment project";
      if ((rc = pmcp__sql_resolve(s, q, t, spec->on, kinds, ok, &owner)))
        return rc;
    }
    if (strcmp(kind, "sub-note") == 0) {
      char k[32];
      if (!spec->parent)
        return pmcp_store_set_error(s, PMCP_EINVAL, "a sub-note needs its parent note");
      if ((rc = pmcp__sql_resolve(s, q, t, spec->parent, "note sub-note", k, &parent)))
        return rc;
    } else if (spec->parent) {
      return pmcp_store_set_error(s, PMCP_EINVAL, "only a sub-note has a parent note");
    }
    /* One overview page per entity and one team note per tenant: writing
     * them again adds a version. */
    if (strcmp(kind, "overview") == 0 || strcmp(kind, "team") == 0) {
      static const char sql_sq[] = "SELECT id, slug FROM notes WHERE tenant_id=?1 AND kind=?2"
                                   " AND owner_kind IS ?3 AND owner_id IS ?4";
      static const char sql_pg[] = "SELECT id, slug FROM notes WHERE tenant_id=?1 AND kind=?2"
                                   " AND owner_kind IS NOT DISTINCT FROM ?3"
                                   " AND owner_id IS NOT DISTINCT FROM ?4::bigint";
      if ((rc = find_owned(s, q, t, PMCP__SQL_PICK(q, sql_sq, sql_pg), kind, ok, owner, &note,
                           NULL)))
        return rc;
    }
  }
  int64_t now = spec->created_ms ? spec->created_ms : pmcp__now_ms();
  pmcp_buf slug = PMCP_BUF_INIT;
  if (!note) {
    int64_t exists;
    pmcp_buf base = PMCP_BUF_INIT;
    if (strcmp(kind, "team") == 0) {
      pmcp__buf_puts(&base, "team-note");
    } else {
      rc = owned_base(s, q, ok, owner, "-",
                      strcmp(kind, "overview") == 0 ? "overview"
                      : spec->title                 ? spec->title
                                                    : kind,
                      &base);
    }
    if (rc == 0)
      rc = pmcp__sql_new_id(s, q, t, "notes", NULL, base.ptr, &slug, &exists);
    pmcp_buf_dispose(&base);
    if (rc == 0) {
      static const char sql[] =
          "INSERT INTO notes(tenant_id, slug, owner_kind, owner_id, kind, parent_id, title, status,"
          " created, updated, version) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?9,0) RETURNING id";
      if ((rc = pmcp__sql_prep(s, q, sql, &st)) == 0) {
        pmcp__st_bind_int64(st, 1, t.id);
        pmcp__st_bind_text(st, 2, slug.ptr);
        if (owner) {
          pmcp__st_bind_text(st, 3, ok);
          pmcp__st_bind_int64(st, 4, owner);
        }
        pmcp__st_bind_text(st, 5, kind);
        if (parent)
          pmcp__st_bind_int64(st, 6, parent);
        pmcp__st_bind_text(st, 7, spec->title);
        pmcp__st_bind_text(st, 8, spec->status);
        pmcp__st_bind_int64(st, 9, now);
        if ((rc = pmcp__st_step1(s, st, "create note")) == 0)
          note = pmcp__st_int64(st, 0);
        pmcp__st_reset(st);
      }
    }
  } else {
    rc = slug_of(s, q, "notes", note, &slug);
  }
  int64_t version = 0;
  if (rc == 0) {
    static const char sql_v[] =
        "UPDATE notes SET version=version+1, updated=?2, title=coalesce(?3, title),"
        " status=coalesce(?4, status) WHERE id=?1 RETURNING version, coalesce(title, ''), kind";
    if ((rc = pmcp__sql_prep(s, q, sql_v, &st)) == 0) {
      pmcp__st_bind_int64(st, 1, note);
      pmcp__st_bind_int64(st, 2, now);
      pmcp__st_bind_text(st, 3, spec->title);
      pmcp__st_bind_text(st, 4, spec->status);
      if (pmcp__st_step(st) == PMCP__ROW)
        version = pmcp__st_int64(st, 0);
      pmcp__st_reset(st);
    }
  }
  if (rc == 0) {
    static const char sql[] =
        "INSERT INTO note_versions(tenant_id, note_id, version, title, body, summary, status,"
        " author, via, created) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)";
    if ((rc = pmcp__sql_prep(s, q, sql, &st)) == 0) {
      pmcp__st_bind_int64(st, 1, t.id);
      pmcp__st_bind_int64(st, 2, note);
      pmcp__st_bind_int64(st, 3, version);
      pmcp__st_bind_text(st, 4, spec->title);
      pmcp__st_bind_text(st, 5, spec->body);
      pmcp__st_bind_text(st, 6, spec->summary);
      pmcp__st_bind_text(st, 7, spec->status);
      pmcp__st_bind_text(st, 8, spec->author);
      pmcp__st_bind_text(st, 9, spec->via);
      pmcp__st_bind_int64(st, 10, now);
      rc = pmcp__st_run1(s, st, "note version");
    }
  }
  if (rc == 0) {
    pmcp_buf ref = PMCP_BUF_INIT, body = PMCP_BUF_INIT;
    /* The kind is the stored one (a version of an existing sub-note is
     * written without spec->kind). */
    int is_sub = strcmp(kind, "sub-note") == 0;
    if (spec->id && !is_sub) {
      static const char sql_k[] = "SELECT kind='sub-note' FROM notes WHERE id=?1";
      pmcp__stmt *sk;
      if (pmcp__sql_prep(s, q, sql_k, &sk) == 0) {
        pmcp__st_bind_int64(sk, 1, note);
        if (pmcp__st_step(sk) == PMCP__ROW)
          is_sub = (int)pmcp__st_int64(sk, 0);
        pmcp__st_reset(sk);
      }
    }
    pmcp__buf_printf(&ref, "%s:%s", is_sub ? "sub-note" : "note", slug.ptr);
    pmcp__buf_puts(&body, spec->body);
    if (spec->summary) {
      pmcp__buf_putc(&body, '\n');
      pmcp__buf_puts(&body, spec->summary);
    }
    rc = written(s, q, t, &ref, is_sub ? "sub-note" : "note",
                 spec->title ? spec->title : slug.ptr, &body);
  }
  return answer_written(&slug, version, out_id, out_version, rc);
}

int pmcp__sql_note(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_note_spec *spec,
                  pmcp_buf *out_id, int64_t *out_version)
{
  pmcp__sql *q = PMCP__SQL(ctx);
  if (spec->version < 1 || spec->version > PMCP_NOTE_SPEC_VERSION)
    return pmcp_store_set_error(s, PMCP_EINVAL, "unknown pmcp_note_spec version");
  int rc = pmcp__sql_wbegin(s, q, t);
  if (rc)
    return rc;
  return pmcp__sql_wend(s, q, t, note_in(s, q, t, spec, out_id, out_version));
}

/* ---- artifacts ---- */


/* Text: valid UTF-8 without NUL bytes. */
static int is_text(const unsigned char *p, size_t n)
{
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c == 0)
      return 0;
    if (c < 0x80) {
      i++;
      continue;
    }
    int len = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!len || i + (size_t)len > n)
      return 0;
    for (int k = 1; k < len; k++)
      if ((p[i + (size_t)k] & 0xc0) != 0x80)
        return 0;
    i += (size_t)len;
  }
  return 1;
}

static const char *guess_type(const char *path, int text)
{
  const char *dot = path ? strrchr(path, '.') : NULL;
  if (dot && text) {
    if (strcmp(dot, ".md") == 0)
      return "text/markdown";
    if (strcmp(dot, ".json") == 0 || strcmp(dot, ".jsonl") == 0)
      return "application/json";
    if (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0)
      return "application/yaml";
    if (strcmp(dot, ".csv") == 0)
      return "text/csv";
    if (strcmp(dot, ".py") == 0)
      return "text/x-python";
  }
  return text ? "text/plain" : "application/octet-stream";
}

static int label_ok(const char *l)
{
  if (!pmcp__id_ok(l) || strlen(l) > 64)
    return 0;
  for (const char *p = l; *p; p++)
    if (*p < '0' || *p > '9')
      return 1;
  return 0; /* all digits would read as a version number */
}

static int set_label(pmcp_store *s, pmcp__sql *q, pmcp_tenant t, int64_t artifact,
                     int64_t version, const char *label)
{
  if (!label_ok(label))
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "invalid label '%.64s': 1-64 characters of A-Z a-z 0-9 . _ -, not only digits", label);
  static const char sql[] = "INSERT INTO artifact_labels(tenant_id, artifact_id,"
                            " label, version) VALUES(?1,?2,?3,?4) ON CONFLICT (artifact_id, label)"
                            " DO UPDATE SET version=excluded.version";
  pmcp__stmt *st;
  int rc = pmcp__sql_prep(s, q, sql, &st);
  if (rc)
    return rc;
  pmcp__st_bind_int64(st, 1, t.id);
  pmcp__st_bind_int64(st, 2, artifact);
  pmcp__st_bind_text(st, 3, label);
  pmcp__st_bind_int64(st, 4, version);
  return pmcp__st_run1(s, st, "label");
}

static int artifact_in(pmcp_store *s, pmcp__sql *q, pmcp_tenant t, const pmcp_artifact_spec *sp,
                       pmcp_buf *out_id, int64_t *out_version)
{
  if (!sp->name || !*sp->name || strlen(sp->name) > 256 || strchr(sp->name, '\n'))
    return pmcp_store_set_error(s, PMCP_EINVAL, "an artifact needs a name of 1-256 characters");
  if (!sp->content && !sp->uri)
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "artifact '%.64s' needs content or a reference uri", sp->name);
  if (sp->content && sp->uri)
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "artifact '%.64s' has both content and a uri; give one", sp->name);
  if (sp->n_labels && !sp->labels)
    return pmcp_store_set_error(s, PMCP_EINVAL, "labels missing");
  if (sp->sha256) {
    size_t n = strlen(sp->sha256);
    int hex = n == 64;
    for (size_t i = 0; i < n && hex; i++)
      hex = strchr("0123456789abcdef", sp->sha256[i]) != NULL;
    if (!hex)
      return pmcp_store_set_error(s, PMCP_EINVAL, "sha256 must be 64 lowercase hex digits");
  }
  char ok[32] = "";
  int64_t owner = 0, art = 0;
  int rc = 0;
  if (sp->on && (rc = pmcp__sql_resolve(s, q, t, sp->on, "run experiment project", ok, &owner)))
    return rc;
  pmcp__stmt *st;
  static const char sql_find_sq[] = "SELECT id, slug FROM artifacts WHERE tenant_id=?1"
                                    " AND name=?2 AND owner_kind IS ?3 AND owner_id IS ?4";
  static const char sql_find_pg[] = "SELECT id, slug FROM artifacts WHERE tenant_id=?1"
                                    " AND name=?2 AND owner_kind IS NOT DISTINCT FROM ?3"
                                    " AND owner_id IS NOT DISTINCT FROM ?4::bigint";
  pmcp_buf slug = PMCP_BUF_INIT;
  if ((rc = find_owned(s, q, t, PMCP__SQL_PICK(q, sql_find_sq, sql_find_pg), sp->name, ok, owner,
                       &art, &slug))) {
    pmcp_buf_dispose(&slug);
    return rc;
  }
  int64_t now = sp->created_ms ? sp->created_ms : pmcp__now_ms();
  if (!art) {
    pmcp_buf base = PMCP_BUF_INIT;
    int64_t exists;
    if (owner) {
      rc = owned_base(s, q, ok, owner, ".", sp->name, &base);
    } else {
      pmcp__buf_puts(&base, sp->name);
      /* A lab-wide name must be unique among shared artifacts. */
      static const char sql[] = "SELECT slug FROM artifacts WHERE tenant_id=?1 AND shared=1 AND name=?2";
      if ((rc = pmcp__sql_prep(s, q, sql, &st)) == 0) {
        pmcp__st_bind_int64(st, 1, t.id);
        pmcp__st_bind_text(st, 2, sp->name);
        if (pmcp__st_step(st) == PMCP__ROW)
          rc = pmcp_store_set_error(s, PMCP_EEXIST, "a shared artifact named '%.64s' exists",
                                    sp->name);
        pmcp__st_reset(st);
      }
    }
    if (rc == 0)
      rc = pmcp__sql_new_id(s, q, t, "artifacts", NULL, base.ptr, &slug, &exists);
    pmcp_buf_dispose(&base);
    if (rc == 0) {
      static const char sql[] =
          "INSERT INTO artifacts(tenant_id, slug, name, owner_kind, owner_id, shared, description,"
          " created, latest) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,0) RETURNING id";
      if ((rc = pmcp__sql_prep(s, q, sql, &st)) == 0) {
        pmcp__st_bind_int64(st, 1, t.id);
        pmcp__st_bind_text(st, 2, slug.ptr);
        pmcp__st_bind_text(st, 3, sp->name);
        if (owner) {
          pmcp__st_bind_text(st, 4, ok);
          pmcp__st_bind_int64(st, 5, owner);
        }
        pmcp__st_bind_int64(st, 6, owner ? 0 : 1);
        pmcp__st_bind_text(st, 7, sp->description);
        pmcp__st_bind_int64(st, 8, now);
        if ((rc = pmcp__st_step1(s, st, "create artifact")) == 0)
          art = pmcp__st_int64(st, 0);
        pmcp__st_reset(st);
      }
    }
  }
  int64_t version = 0;
  if (rc == 0) {
    static const char sql[] = "UPDATE artifacts SET latest=latest+1, description=coalesce(?2,"
                              " description) WHERE id=?1 RETURNING latest";
    if ((rc = pmcp__sql_prep(s, q, sql, &st)) == 0) {
      pmcp__st_bind_int64(st, 1, art);
      pmcp__st_bind_text(st, 2, sp->description);
      if (pmcp__st_step(st) == PMCP__ROW)
        version = pmcp__st_int64(st, 0);
      pmcp__st_reset(st);
    }
  }
  int text = sp->content ? is_text(sp->content, sp->size) : 0;
  char sha[65];
  if (rc == 0) {
    static const char sql[] =
        "INSERT INTO artifact_versions(tenant_id, artifact_id, version, path, media_type,"
        " description, content, uri, sha256, size, is_text, created)"
        " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)";
    if ((rc = pmcp__sql_prep(s, q, sql, &st)) == 0) {
      pmcp__st_bind_int64(st, 1, t.id);
      pmcp__st_bind_int64(st, 2, art);
      pmcp__st_bind_int64(st, 3, version);
      pmcp__st_bind_text(st, 4, sp->path);
      pmcp__st_bind_text(st, 5, sp->media_type ? sp->media_type : guess_type(sp->path, text));
      pmcp__st_bind_text(st, 6, sp->description);
      if (sp->content) {
        pmcp__sha256_hex(sp->content, sp->size, sha);
        pmcp__st_bind_blob(st, 7, sp->content, sp->size);
        pmcp__st_bind_text(st, 9, sha);
      } else {
        pmcp__st_bind_text(st, 8, sp->uri);
        pmcp__st_bind_text(st, 9, sp->sha256);
      }
      pmcp__st_bind_int64(st, 10, (int64_t)sp->size);
      pmcp__st_bind_int64(st, 11, text);
      pmcp__st_bind_int64(st, 12, now);
      rc = pmcp__st_run1(s, st, "artifact version");
    }
  }
  for (size_t i = 0; rc == 0 && i < sp->n_labels; i++)
    rc = set_label(s, q, t, art, version, sp->labels[i]);
  if (rc == 0) {
    pmcp_buf ref = PMCP_BUF_INIT, body = PMCP_BUF_INIT;
    pmcp__buf_printf(&ref, "artifact:%s", slug.ptr);
    pmcp__buf_printf(&body, "%s\n%s\n%s\n%s\n", sp->description ? sp->description : "",
                     sp->path ? sp->path : "", sp->uri ? sp->uri : "",
                     sp->content ? sha : (sp->sha256 ? sp->sha256 : ""));
    if (text && sp->size <= (1u << 20))
      pmcp__buf_append(&body, sp->content, sp->size);
    rc = written(s, q, t, &ref, "artifact", sp->name, &body);
  }
  return answer_written(&slug, version, out_id, out_version, rc);
}

int pmcp__sql_artifact_add(pmcp_store *s, void *ctx, pmcp_tenant t,
                          const pmcp_artifact_spec *spec, pmcp_buf *out_id,
                          int64_t *out_version)
{
  pmcp__sql *q = PMCP__SQL(ctx);
  if (spec->version < 1 || spec->version > PMCP_ARTIFACT_SPEC_VERSION)
    return pmcp_store_set_error(s, PMCP_EINVAL, "unknown pmcp_artifact_spec version");
  int rc = pmcp__sql_wbegin(s, q, t);
  if (rc)
    return rc;
  return pmcp__sql_wend(s, q, t, artifact_in(s, q, t, spec, out_id, out_version));
}

static int version_exists(pmcp_store *s, pmcp__sql *q, int64_t art, int64_t *version)
{
  static const char sql[] = "SELECT CASE WHEN ?2 = 0 THEN latest ELSE"
                            " (SELECT version FROM artifact_versions WHERE artifact_id=?1 AND"
                            " version=?2) END FROM artifacts WHERE id=?1";
  pmcp__stmt *st;
  int rc = pmcp__sql_prep(s, q, sql, &st);
  if (rc)
    return rc;
  pmcp__st_bind_int64(st, 1, art);
  pmcp__st_bind_int64(st, 2, *version);
  int found = pmcp__st_step(st) == PMCP__ROW && !pmcp__st_null(st, 0);
  if (found)
    *version = pmcp__st_int64(st, 0);
  pmcp__st_reset(st);
  return found ? 0 : pmcp_store_set_error(s, PMCP_ENOTFOUND, "the artifact has no version %lld",
                                          (long long)*version);
}

int pmcp__sql_artifact_label(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                            int64_t version, const char *label)
{
  pmcp__sql *q = PMCP__SQL(ctx);
  int rc = pmcp__sql_wbegin(s, q, t);
  if (rc)
    return rc;
  char k[32];
  int64_t art = 0;
  rc = pmcp__sql_resolve(s, q, t, ref, "artifact", k, &art);
  if (rc == 0)
    rc = version_exists(s, q, art, &version);
  if (rc == 0)
    rc = set_label(s, q, t, art, version, label);
  return pmcp__sql_wend(s, q, t, rc);
}

int pmcp__sql_artifact_promote(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref)
{
  pmcp__sql *q = PMCP__SQL(ctx);
  int rc = pmcp__sql_wbegin(s, q, t);
  if (rc)
    return rc;
  char k[32];
  int64_t art = 0;
  rc = pmcp__sql_resolve(s, q, t, ref, "artifact", k, &art);
  if (rc == 0) {
    static const char sql[] =
        "SELECT a2.slug FROM artifacts a1 JOIN artifacts a2 ON a2.tenant_id=a1.tenant_id"
        " AND a2.name=a1.name AND a2.shared=1 AND a2.id<>a1.id WHERE a1.id=?1";
    pmcp__stmt *st;
    if ((rc = pmcp__sql_prep(s, q, sql, &st)) == 0) {
      pmcp__st_bind_int64(st, 1, art);
      if (pmcp__st_step(st) == PMCP__ROW)
        rc = pmcp_store_set_error(s, PMCP_EEXIST,
            "artifact:%s already carries this name at the shared level",
            (const char *)pmcp__st_text(st, 0));
      pmcp__st_reset(st);
    }
    static const char sql_up[] = "UPDATE artifacts SET shared=1 WHERE id=?1";
    if (rc == 0 && (rc = pmcp__sql_prep(s, q, sql_up, &st)) == 0) {
      pmcp__st_bind_int64(st, 1, art);
      rc = pmcp__st_run1(s, st, "promote");
    }
  }
  return pmcp__sql_wend(s, q, t, rc);
}

int pmcp__sql_artifact_content(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                              int64_t version, pmcp_buf *out, pmcp_buf *meta)
{
  pmcp__sql *q = PMCP__SQL(ctx);
  int rc0 = pmcp__sql_ready(s, q, t);
  if (rc0)
    return rc0;
  char k[32];
  int64_t art = 0;
  int rc = pmcp__sql_resolve(s, q, t, ref, "artifact", k, &art);
  if (rc == 0)
    rc = version_exists(s, q, art, &version);
  if (rc)
    return rc;
  static const char sql_sq[] =
      "SELECT v.content, json_object('artifact', 'artifact:' || a.slug, 'name', a.name,"
      " 'version', v.version, 'path', v.path, 'media_type', v.media_type, 'uri', v.uri,"
      " 'sha256', v.sha256, 'size', v.size, 'text', json(CASE v.is_text WHEN 1 THEN 'true'"
      " ELSE 'false' END), 'created', v.created) FROM artifact_versions v JOIN artifacts a"
      " ON a.id=v.artifact_id WHERE v.artifact_id=?1 AND v.version=?2 AND v.tenant_id=?3";
  static const char sql_pg[] =
      "SELECT v.content, json_build_object('artifact', 'artifact:' || a.slug, 'name', a.name,"
      " 'version', v.version, 'path', v.path, 'media_type', v.media_type, 'uri', v.uri,"
      " 'sha256', v.sha256, 'size', v.size, 'text', v.is_text=1,"
      " 'created', v.created) FROM artifact_versions v JOIN artifacts a"
      " ON a.id=v.artifact_id WHERE v.artifact_id=?1 AND v.version=?2 AND v.tenant_id=?3";
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(s, q, PMCP__SQL_PICK(q, sql_sq, sql_pg), &st)))
    return rc;
  pmcp__st_bind_int64(st, 1, art);
  pmcp__st_bind_int64(st, 2, version);
  pmcp__st_bind_int64(st, 3, t.id);
  if (pmcp__st_step(st) != PMCP__ROW) {
    pmcp__st_reset(st);
    return pmcp_store_set_error(s, PMCP_ENOTFOUND, "no version %lld of %s", (long long)version,
                                ref);
  }
  if (meta) {
    pmcp__buf_reset(meta);
    pmcp__st_json_col(meta, st, 1);
  }
  int is_ref = pmcp__st_null(st, 0);
  pmcp__buf_reset(out);
  if (!is_ref) {
    size_t bn = 0;
    const void *bp = pmcp__st_blob(st, 0, &bn);
    rc = bp ? pmcp__buf_append(out, bp, bn)
            : pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  }
  pmcp__st_reset(st);
  if (is_ref)
    return pmcp_store_set_error(s, PMCP_EUNSUPPORTED,
        "version %lld of %s is a reference, not stored content (see its uri)",
        (long long)version, ref);
  return rc;
}

/* ---- papers ---- */

static int arxiv_id_ok(const char *id)
{
  size_t n = strlen(id);
  if (n == 0 || n > 64)
    return 0;
  for (const char *p = id; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '.' || *p == '/' || *p == '-' || *p == '_'))
      return 0;
  return 1;
}

int pmcp__sql_paper(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_paper *p)
{
  pmcp__sql *q = PMCP__SQL(ctx);
  if (!p->id || !arxiv_id_ok(p->id))
    return pmcp_store_set_error(s, PMCP_EINVAL, "invalid paper id '%.64s'", p->id ? p->id : "");
  if (!p->title || !*p->title)
    return pmcp_store_set_error(s, PMCP_EINVAL, "paper %s has no title", p->id);
  int rc = pmcp__sql_wbegin(s, q, t);
  if (rc)
    return rc;
  static const char sql[] =
      "INSERT INTO papers(tenant_id, arxiv_id, title, abstract, authors, categories, published,"
      " updated, doi, journal_ref, comments) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)"
      " ON CONFLICT(tenant_id, arxiv_id) DO UPDATE SET title=excluded.title,"
      " abstract=excluded.abstract, authors=excluded.authors, categories=excluded.categories,"
      " published=excluded.published, updated=excluded.updated, doi=excluded.doi,"
      " journal_ref=excluded.journal_ref, comments=excluded.comments";
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(s, q, sql, &st)) == 0) {
    pmcp__st_bind_int64(st, 1, t.id);
    pmcp__st_bind_text(st, 2, p->id);
    pmcp__st_bind_text(st, 3, p->title);
    pmcp__st_bind_text(st, 4, p->abstract);
    pmcp__st_bind_text(st, 5, p->authors);
    pmcp__st_bind_text(st, 6, p->categories);
    pmcp__st_bind_text(st, 7, p->published);
    pmcp__st_bind_text(st, 8, p->updated);
    pmcp__st_bind_text(st, 9, p->doi);
    pmcp__st_bind_text(st, 10, p->journal_ref);
    pmcp__st_bind_text(st, 11, p->comments);
    rc = pmcp__st_run1(s, st, "paper");
  }
  return pmcp__sql_wend(s, q, t, rc);
}
