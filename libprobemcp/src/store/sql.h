/* SPDX-License-Identifier: MIT */
/* Internal: the statement interface both store backends implement, so the
 * logic they share (record kinds, notes, runs, row readers ...) is written
 * once. It is SQLite's prepare / bind / step / column model:
 *
 *  - SQL text uses ?1..?N placeholders (SQLite's own; the PostgreSQL side
 *    rewrites them to $1..$N once per statement). Where the two dialects
 *    differ, the caller picks the text with PMCP__SQL_PICK().
 *  - pmcp__sql_prep() takes a string literal (its address is the cache
 *    key: prepared once per connection); pmcp__sql_prep_text() takes text
 *    built at run time and is paired with pmcp__sql_release().
 *  - Steps return PMCP__ROW, PMCP__DONE or another value for an error,
 *    which pmcp__st_err() turns into the store's message and code.
 *  - A statement is reset after use (SQLite keeps a read open until then);
 *    pmcp__st_changes() stays valid after the reset.
 *  - Column getters follow SQLite: a NULL integer reads 0, a NULL text
 *    NULL; a NULL double reads 0 on SQLite and NaN on PostgreSQL, so test
 *    pmcp__st_null() where NULL matters.
 *
 * Each backend's state begins with a pmcp__sql (its ops and dialect); each
 * statement with a pmcp__stmt. A call through the interface costs one
 * indirect call: no allocation per bind, step or column. */
#ifndef PMCP_STORE_SQL_H
#define PMCP_STORE_SQL_H

#include <stddef.h>
#include <stdint.h>

#include "store/store_int.h"
#include "util/buf.h"

/* Step results (the values SQLite's and the PostgreSQL layer's use). */
#define PMCP__ROW 100
#define PMCP__DONE 101

typedef struct pmcp__sql pmcp__sql;
typedef struct pmcp__stmt pmcp__stmt;

typedef struct pmcp__stmt_ops {
  void (*bind_int64)(pmcp__stmt *st, int i, int64_t v);
  void (*bind_double)(pmcp__stmt *st, int i, double v);
  /* NULL binds SQL NULL; the text is copied. */
  void (*bind_text)(pmcp__stmt *st, int i, const char *v);
  void (*bind_blob)(pmcp__stmt *st, int i, const void *p, size_t n);
  void (*bind_null)(pmcp__stmt *st, int i);
  int (*step)(pmcp__stmt *st);
  void (*reset)(pmcp__stmt *st);
  int (*is_null)(pmcp__stmt *st, int col);
  int64_t (*int64)(pmcp__stmt *st, int col);
  double (*dbl)(pmcp__stmt *st, int col);
  /* NULL for SQL NULL; *len (may be NULL) gets the length in bytes. */
  const char *(*text)(pmcp__stmt *st, int col, size_t *len);
  /* NULL for SQL NULL (or no memory); an empty value is not NULL. */
  const void *(*blob)(pmcp__stmt *st, int col, size_t *len);
  /* Appends a JSON column as compact text (SQLite: as stored). */
  int (*json)(pmcp_buf *b, pmcp__stmt *st, int col);
  int64_t (*changes)(pmcp__stmt *st);
  /* Sets the store error for the statement's last failed step. */
  int (*err)(pmcp_store *s, pmcp__stmt *st, const char *what);
  /* Runs a statement whose rows and change count are not wanted, maybe
   * later (pmcp__st_defer). NULL: at once, as pmcp__st_run1. */
  int (*defer)(pmcp_store *s, pmcp__stmt *st, const char *what);
} pmcp__stmt_ops;

struct pmcp__stmt {
  const pmcp__stmt_ops *ops;
};

typedef struct pmcp__sql_ops {
  int pg; /* 1: PostgreSQL's dialect, 0: SQLite's */
  int (*prep)(pmcp_store *s, pmcp__sql *c, const char *sql, pmcp__stmt **out);
  int (*prep_text)(pmcp_store *s, pmcp__sql *c, const char *sql, pmcp__stmt **out);
  /* Done with a pmcp__sql_prep_text() statement. */
  void (*release)(pmcp__stmt *st);
  /* Runs a statement that returns nothing and takes no parameters. */
  int (*exec)(pmcp_store *s, pmcp__sql *c, const char *sql);
  /* Before a read for tenant @p t: the connection is up and scoped to it
   * (PostgreSQL's row-level security setting); SQLite has nothing to do. */
  int (*ready)(pmcp_store *s, pmcp__sql *c, pmcp_tenant t);
  /* Before a read inside the caller's transaction: writes its metric
   * points still held in memory (so the read sees them). */
  int (*flush)(pmcp_store *s, pmcp__sql *c);
  /* A read of several statements as one read transaction, or NULL: each
   * statement is its own. rbegin sets *opened when it opened one (none
   * when the caller's transaction is open); rend(opened) ends it. */
  int (*rbegin)(pmcp_store *s, pmcp__sql *c, int *opened);
  void (*rend)(pmcp_store *s, pmcp__sql *c, int opened);
  /* The write scope of one call (sq.h / pg.h say more). */
  int (*wbegin)(pmcp_store *s, pmcp__sql *c, pmcp_tenant t);
  int (*wend)(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, int rc);
  /* The keyword index (FTS5 or tsvector): replaces @p ref's document. */
  int (*index)(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *ref,
               const char *kind, const char *title, const char *body);
  /* The same with the document read by SQL: @p doc (a literal: the cache
   * key) selects one row (ref, title, body) from ?1 = @p kind and ?2 =
   * @p rowid, or none (nothing to index). PostgreSQL writes it by one
   * INSERT ... SELECT sent without waiting; SQLite reads it and indexes
   * it as index() does. */
  int (*index_doc)(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *doc,
                   const char *kind, int64_t rowid);
} pmcp__sql_ops;

struct pmcp__sql {
  const pmcp__sql_ops *ops;
};

/* The backend state behind a store's ctx (its first member). */
#define PMCP__SQL(ctx) ((pmcp__sql *)(ctx))
/* The statement text of the connection's dialect. */
#define PMCP__SQL_PICK(c, sqlite_text, pg_text) ((c)->ops->pg ? (pg_text) : (sqlite_text))

static inline int pmcp__sql_prep(pmcp_store *s, pmcp__sql *c, const char *sql,
                                 pmcp__stmt **out)
{
  return c->ops->prep(s, c, sql, out);
}
static inline int pmcp__sql_prep_text(pmcp_store *s, pmcp__sql *c, const char *sql,
                                      pmcp__stmt **out)
{
  return c->ops->prep_text(s, c, sql, out);
}
static inline void pmcp__sql_release(pmcp__sql *c, pmcp__stmt *st)
{
  if (st)
    c->ops->release(st);
}
static inline int pmcp__sql_exec(pmcp_store *s, pmcp__sql *c, const char *sql)
{
  return c->ops->exec(s, c, sql);
}
static inline int pmcp__sql_ready(pmcp_store *s, pmcp__sql *c, pmcp_tenant t)
{
  return c->ops->ready ? c->ops->ready(s, c, t) : 0;
}
static inline int pmcp__sql_flush(pmcp_store *s, pmcp__sql *c)
{
  return c->ops->flush(s, c);
}
static inline int pmcp__sql_rbegin(pmcp_store *s, pmcp__sql *c, int *opened)
{
  *opened = 0;
  return c->ops->rbegin ? c->ops->rbegin(s, c, opened) : 0;
}
static inline void pmcp__sql_rend(pmcp_store *s, pmcp__sql *c, int opened)
{
  if (opened && c->ops->rend)
    c->ops->rend(s, c, opened);
}
static inline int pmcp__sql_wbegin(pmcp_store *s, pmcp__sql *c, pmcp_tenant t)
{
  return c->ops->wbegin(s, c, t);
}
static inline int pmcp__sql_wend(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, int rc)
{
  return c->ops->wend(s, c, t, rc);
}
static inline int pmcp__sql_index(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *ref,
                                  const char *kind, const char *title, const char *body)
{
  return c->ops->index(s, c, t, ref, kind, title, body);
}

static inline int pmcp__sql_index_doc(pmcp_store *s, pmcp__sql *c, pmcp_tenant t,
                                      const char *doc, const char *kind, int64_t rowid)
{
  return c->ops->index_doc(s, c, t, doc, kind, rowid);
}

static inline void pmcp__st_bind_int64(pmcp__stmt *st, int i, int64_t v)
{
  st->ops->bind_int64(st, i, v);
}
static inline void pmcp__st_bind_double(pmcp__stmt *st, int i, double v)
{
  st->ops->bind_double(st, i, v);
}
static inline void pmcp__st_bind_text(pmcp__stmt *st, int i, const char *v)
{
  st->ops->bind_text(st, i, v);
}
static inline void pmcp__st_bind_blob(pmcp__stmt *st, int i, const void *p, size_t n)
{
  st->ops->bind_blob(st, i, p, n);
}
static inline void pmcp__st_bind_null(pmcp__stmt *st, int i)
{
  st->ops->bind_null(st, i);
}
static inline int pmcp__st_step(pmcp__stmt *st)
{
  return st->ops->step(st);
}
static inline void pmcp__st_reset(pmcp__stmt *st)
{
  st->ops->reset(st);
}
static inline int pmcp__st_null(pmcp__stmt *st, int col)
{
  return st->ops->is_null(st, col);
}
static inline int64_t pmcp__st_int64(pmcp__stmt *st, int col)
{
  return st->ops->int64(st, col);
}
static inline double pmcp__st_double(pmcp__stmt *st, int col)
{
  return st->ops->dbl(st, col);
}
static inline const char *pmcp__st_text(pmcp__stmt *st, int col)
{
  return st->ops->text(st, col, NULL);
}
static inline const void *pmcp__st_blob(pmcp__stmt *st, int col, size_t *len)
{
  return st->ops->blob(st, col, len);
}
static inline int pmcp__st_json_col(pmcp_buf *b, pmcp__stmt *st, int col)
{
  return st->ops->json(b, st, col);
}
static inline int64_t pmcp__st_changes(pmcp__stmt *st)
{
  return st->ops->changes(st);
}
static inline int pmcp__st_err(pmcp_store *s, pmcp__stmt *st, const char *what)
{
  return st->ops->err(s, st, what);
}

/* Backend-neutral helpers (sq_open.c; sha256 in sql.c). */
int64_t pmcp__now_ms(void);
/* Checks an id: 1-128 chars of [A-Za-z0-9._-]. */
int pmcp__id_ok(const char *id);
/* Makes an id from a name (lowercase, runs of other chars become '-'). */
int pmcp__slugify(pmcp_buf *out, const char *name);
/* Splits "kind:id" (or a bare id when @p want is given). kind gets the
 * kind (no more than 31 chars). Returns 0 or PMCP_EINVAL (message set). */
int pmcp__ref_split(pmcp_store *s, const char *ref, const char *want, char kind[32],
                    const char **id);
/* The table holding a kind's rows, or NULL. */
const char *pmcp__kind_table(const char *kind);
/* Lowercase hex SHA-256 of data. */
void pmcp__sha256_hex(const void *data, size_t len, char out[65]);

/* sql.c: helpers over the interface. */
/* Finds the row id of kind/id in tenant t (artifacts also by shared name).
 * PMCP_ENOTFOUND (message set). */
int pmcp__sql_find(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *kind,
                   const char *id, int64_t *rowid);
/* Resolves a ref of one of @p kinds ("run experiment project", NULL: any
 * table kind) to kind + row id. */
int pmcp__sql_resolve(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *ref,
                      const char *kinds, char kind[32], int64_t *rowid);
/* Picks a free id for a new row of @p table: @p want if given (*exists
 * set when taken), else from @p name plus a counter. */
int pmcp__sql_new_id(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *table,
                     const char *want, const char *name, pmcp_buf *out, int64_t *exists);
/* "SELECT id FROM <table> WHERE tenant_id=?1 AND slug=?2" as a literal, or
 * NULL for a table without slugs. */
const char *pmcp__sql_slug_query(const char *table);
/* Steps once and resets: 0, or the store error naming @p what. */
int pmcp__st_run1(pmcp_store *s, pmcp__stmt *st, const char *what);
/* Steps once without the reset (a RETURNING row stays readable). */
int pmcp__st_step1(pmcp_store *s, pmcp__stmt *st, const char *what);
/* Appends a text column ("" for NULL). */
int pmcp__st_text_col(pmcp_buf *b, pmcp__stmt *st, int col);
/* Runs a write whose rows and change count are not wanted, inside a write
 * scope (wbegin / wend). SQLite runs it at once; PostgreSQL sends it in
 * pipeline mode without waiting, so a call's writes share its round
 * trips: its failure then comes from the scope's next step (named by
 * @p what) or from wend, and the scope is undone either way. */
static inline int pmcp__st_defer(pmcp_store *s, pmcp__stmt *st, const char *what)
{
  return st->ops->defer ? st->ops->defer(s, st, what) : pmcp__st_run1(s, st, what);
}

/* ---- store ops written once over this interface (ctx: a pmcp__sql) ---- */

/* put.c */
int pmcp__sql_put(pmcp_store *s, void *ctx, pmcp_tenant t, const char *kind,
                  const char *json, size_t len, pmcp_buf *out_ref);
/* runs.c */
int pmcp__sql_create(pmcp_store *s, void *ctx, pmcp_tenant t, const char *kind,
                     const pmcp_entity_spec *spec, pmcp_buf *out_id);
int pmcp__sql_run_create(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_run_spec *spec,
                         pmcp_buf *out_id);
int pmcp__sql_run_status(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                         const char *status, int64_t time_ms);
int pmcp__sql_run_event(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                        const char *kind, const char *message, int64_t time_ms);
int pmcp__sql_set_deleted(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                          int deleted);
int pmcp__sql_set_attr(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                       const char *path, const pmcp_value *value);
int pmcp__sql_unset_attr(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                         const char *path);
int pmcp__sql_tag(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref, const char *tag,
                  int add);
/* read.c */
int pmcp__sql_get(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref, pmcp_buf *out);
/* The same record as a tree, as its text would parse back (the caller
 * deletes it): for the toolsets, which read it as a tree. */
struct cJSON;
int pmcp__sql_get_tree(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                       unsigned flags, struct cJSON **out);
/* notes.c */
int pmcp__sql_note(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_note_spec *spec,
                   pmcp_buf *out_id, int64_t *out_version);
int pmcp__sql_artifact_add(pmcp_store *s, void *ctx, pmcp_tenant t,
                           const pmcp_artifact_spec *spec, pmcp_buf *out_id,
                           int64_t *out_version);
int pmcp__sql_artifact_label(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                             int64_t version, const char *label);
int pmcp__sql_artifact_promote(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref);
int pmcp__sql_artifact_content(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                               int64_t version, pmcp_buf *out, pmcp_buf *meta);
int pmcp__sql_paper(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_paper *paper);

#endif
