/* SPDX-License-Identifier: MIT */
/* Internal: the PostgreSQL backend's state and the helpers its files share.
 * Only files under src/store include this (libpq types stay out of the
 * public headers).
 *
 * Statements go through a small layer (pmcp__pg_stmt) shaped like the
 * prepare / bind / step / column calls of SQLite: parameters are $1..$N
 * (SQLite's ?N in the shared code are rewritten), bound by position (int64
 * and double with their types, text untyped so PostgreSQL infers it, bytes
 * as binary bytea); the first step runs the statement and later steps walk
 * its rows. The same layer is this backend's side of sql.h, the interface
 * the logic both backends share is written against (put.c, catalog.c,
 * records.c, env_attr.c, notes.c, runs.c, read.c, list.c, sql.c); the
 * pg_*.c files hold only what is PostgreSQL's own (connection and
 * reconnection, schema, row-level security, tsvector search, metric
 * blocks, the kinds' JSON in list).
 *
 * Tenancy. Every tenant-owned table has row-level security keyed on the
 * session setting probe.tenant (pg_schema.c); each call sets it for its
 * tenant before touching rows (pmcp__pg_use_tenant), so even a query that
 * forgot its tenant_id filter sees only that tenant's rows. */
#ifndef PMCP_STORE_PG_H
#define PMCP_STORE_PG_H

#include "store/pq_dl.h"
#include <stdint.h>

#include "store/metrics.h"
#include "store/sql.h"
#include "store/store_int.h"
#include "util/buf.h"

/* Schema version this library writes (pg_schema.c: its versions table). */
int pmcp__pg_schema_target(void);
#define PMCP__PG_SCHEMA_VERSION (pmcp__pg_schema_target())
/* Points per metric block and the position id scheme, as in SQLite. */
#define PMCP__PG_BLOCK PMCP__METRIC_BLOCK
#define PMCP__PG_POS PMCP__METRIC_POS
/* Points per chunk: each block row also keeps the summary of every chunk
 * of its points (pg_block.c), so a bucket edge inside a block costs the
 * points of one chunk, not of the whole block. */
#define PMCP__PG_CHUNK 128

#define PMCP__PG_MAXP 40

enum { PG_ROW = 100, PG_DONE = 101, PG_ERR = 1 };

typedef struct pmcp__pg pmcp__pg;

typedef struct pmcp__pg_stmt {
  pmcp__stmt base;                   /* the shared interface (sql.h) */
  pmcp__pg *g;
  const char *sql;
  int nparams;                       /* highest $N bound so far */
  int sqlparams;                     /* highest $N in the SQL */
  int owns_sql;                      /* sql is a copy (prep_dyn, or ?N rewritten) */
  int cached;                        /* prep: prepared on the server once */
  unsigned prepared_gen;             /* the connection generation it was prepared on */
  int prepared_n;                    /* its parameter count */
  char name[16];
  char *vals[PMCP__PG_MAXP];         /* owned copies; NULL = SQL NULL */
  int lens[PMCP__PG_MAXP];
  int fmts[PMCP__PG_MAXP];
  unsigned types[PMCP__PG_MAXP];
  PGresult *res;
  int row;                           /* current row; -1 before the first */
  int ran;
  int64_t changes;
  /* Decoded bytea columns of the current row (freed on the next step). */
  unsigned char *blob[4];
  size_t blob_len[4];
  int blob_col[4];
} pmcp__pg_stmt;

typedef pmcp__sql_pending pmcp__pg_pending;

/* A statement sent in pipeline mode whose result is still to be read. */
typedef struct pmcp__pg_sent {
  pmcp__pg_stmt *keep;   /* gets the result (a step), or NULL: dropped */
  pmcp__pg_stmt *prep;   /* this is its PQsendPrepare */
  const char *what;      /* names it in an error; NULL: the stepped statement */
} pmcp__pg_sent;

typedef struct pmcp__pg_stmt_entry {
  const char *sql;
  pmcp__pg_stmt *st;
} pmcp__pg_stmt_entry;

struct pmcp__pg {
  pmcp__sql c;           /* the shared statement interface (first) */
  PGconn *conn;
  char *conninfo;
  int readonly;
  int in_txn;            /* an explicit transaction is open */
  int in_scope;          /* a call's own write transaction is open */
  int txn_lost;          /* the connection dropped inside the caller's transaction */
  int64_t want_tenant;   /* the tenant the current call works for */
  int64_t cur_tenant;    /* probe.tenant as last set on this session (0: unknown) */
  int64_t locked_tenant; /* writer lock held in the open transaction */
  int64_t bumped_tenant; /* its data_version already raised in the open transaction */
  pmcp__pg_pending *pending;
  size_t n_pending, cap_pending;
  pmcp__pg_stmt_entry *stmts;
  size_t n_stmts, cap_stmts;
  /* Pipeline mode (libpq >= 14) inside a call's write scope: statements
   * whose results the call does not need at once are sent without waiting
   * (pmcp__pg_defer); the next step that needs rows, or the end of the
   * scope, reads them all in one round trip. */
  int pipe;              /* the connection is in pipeline mode */
  int nopipe;            /* never use it (PROBE_PG_PIPELINE=off, or no libpq support) */
  pmcp__pg_sent *sent;
  size_t n_sent, cap_sent;
  int64_t known_tenant;  /* a tenant whose row a version bump has found */
  struct {
    const char *doc;     /* an index document query (sql.h index_doc) */
    char *sql;           /* its INSERT ... SELECT */
  } docs[8];
  size_t n_docs;
  /* The service tables' SQL texts (pg_db.c), copied so their statements
   * are cached (pmcp__pg_prep keys by address) and prepared once. */
  char *db_sql[64];
  size_t n_db_sql;
  unsigned gen;          /* connection generation: bumps on reconnect */
  unsigned next_stmt;    /* names of prepared statements */
  char lasterr[256];     /* the server's message of the last failure */
  char errwhat[48];      /* what failed when it was a deferred statement */
  char sqlstate[6];
};

#define PG(ctx) ((pmcp__pg *)(ctx))

/* ---- pg_stmt.c: statements ---- */
/* sql.h over this layer (?N placeholders become $N). */
extern const pmcp__sql_ops pmcp__pg_sql_ops;
int pmcp__pg_prep(pmcp_store *s, pmcp__pg *g, const char *sql, pmcp__pg_stmt **out);
/* An uncached statement over SQL built at run time (free it with
 * pmcp__pg_finalize; the SQL is copied). */
int pmcp__pg_prep_dyn(pmcp_store *s, pmcp__pg *g, const char *sql, pmcp__pg_stmt **out);
void pmcp__pg_finalize(pmcp__pg_stmt *st);
/* Binds a double, or NULL when it is not finite (the summary columns keep
 * SQLite's convention: a non-finite first/last/min/max is absent). */
void pmcp__pg_bind_finite(pmcp__pg_stmt *st, int i, double v);
void pmcp__pg_bind_int64(pmcp__pg_stmt *st, int i, int64_t v);
void pmcp__pg_bind_double(pmcp__pg_stmt *st, int i, double v);
void pmcp__pg_bind_text(pmcp__pg_stmt *st, int i, const char *v);
void pmcp__pg_bind_opt(pmcp__pg_stmt *st, int i, const char *v); /* NULL ok */
void pmcp__pg_bind_blob(pmcp__pg_stmt *st, int i, const void *p, size_t n);
/* Binds @p n bytes of PostgreSQL's binary format for type @p oid, taking
 * ownership of @p p (malloc'd). */
void pmcp__pg_bind_binary(pmcp__pg_stmt *st, int i, void *p, size_t n, unsigned oid);
void pmcp__pg_bind_null(pmcp__pg_stmt *st, int i);
/* Runs (first call) or advances: PG_ROW, PG_DONE or PG_ERR (message in g). */
int pmcp__pg_step(pmcp__pg_stmt *st);
void pmcp__pg_reset(pmcp__pg_stmt *st);
int pmcp__pg_isnull(pmcp__pg_stmt *st, int col);
int64_t pmcp__pg_int64(pmcp__pg_stmt *st, int col);
double pmcp__pg_double(pmcp__pg_stmt *st, int col);  /* NULL: NAN */
const char *pmcp__pg_text(pmcp__pg_stmt *st, int col); /* NULL: NULL */
int pmcp__pg_bytes(pmcp__pg_stmt *st, int col);
const void *pmcp__pg_blob(pmcp__pg_stmt *st, int col, size_t *len);
int64_t pmcp__pg_changes(pmcp__pg_stmt *st);
/* Runs a one-off statement (no rows wanted); leaves pipeline mode first. */
int pmcp__pg_exec(pmcp_store *s, pmcp__pg *g, const char *sql);
/* pg_stmt.c for pg_pipe.c: the failure of @p res (or of the connection,
 * NULL) noted on the handle, @p what naming a deferred statement (NULL:
 * the one stepped); whether the connection is lost; a row's blobs freed. */
void pmcp__pg_note_error(pmcp__pg *g, const PGresult *res, const char *what);
int pmcp__pg_lost(pmcp__pg *g);
void pmcp__pg_clear_blobs(pmcp__pg_stmt *st);

/* ---- pg_pipe.c: pipeline mode ---- */
/* A step in pipeline mode: @p st goes after the statements sent, and all
 * their results are read. Its result, or NULL (failure noted). */
PGresult *pmcp__pg_pipe_run(pmcp__pg_stmt *st);
/* Entered by a write scope when libpq has it. */
void pmcp__pg_pipe_enter(pmcp__pg *g);
/* Sends a statement whose rows and change count are not wanted: in
 * pipeline mode without waiting (its failure comes with the next result
 * read, named by @p what); otherwise it runs now. 0 or the store error. */
int pmcp__pg_defer(pmcp_store *s, pmcp__pg_stmt *st, const char *what);
/* The same for a statement without parameters (BEGIN, COMMIT ...). */
int pmcp__pg_defer_exec(pmcp_store *s, pmcp__pg *g, const char *sql, const char *what);
/* Reads every result still due, syncs and leaves pipeline mode: 0, or -1
 * with the first failure noted on @p g (pmcp__pg_err turns it into the
 * store error). A no-op outside pipeline mode. */
int pmcp__pg_pipe_end(pmcp__pg *g);
/* Runs a statement already stepped to PG_ERR into a store error. */
int pmcp__pg_err(pmcp_store *s, pmcp__pg *g, const char *what);
/* Steps once and resets; 0 or the store error. */
int pmcp__pg_done(pmcp_store *s, pmcp__pg_stmt *st, const char *what);
int pmcp__pg_text_col(pmcp_buf *b, pmcp__pg_stmt *st, int col);
/* Appends a json column compactly (blanks outside strings dropped). */
int pmcp__pg_json_col(pmcp_buf *b, pmcp__pg_stmt *st, int col);

/* ---- pg_conn.c: connection, scopes ---- */
/* Makes sure the connection is up (reconnecting after a loss) and that
 * row-level security sees tenant @p t (0: leave as is). */
int pmcp__pg_ready(pmcp_store *s, pmcp__pg *g, int64_t tenant);
int pmcp__pg_wbegin(pmcp_store *s, pmcp__pg *g, pmcp_tenant t);
int pmcp__pg_wend(pmcp_store *s, pmcp__pg *g, pmcp_tenant t, int rc);
/* The shared lookups of sql.h (sql.c) on this backend's connection. */
static inline int pmcp__pg_find(pmcp_store *s, pmcp__pg *g, pmcp_tenant t, const char *kind,
                                const char *id, int64_t *rowid)
{
  return pmcp__sql_find(s, &g->c, t, kind, id, rowid);
}
static inline int pmcp__pg_resolve(pmcp_store *s, pmcp__pg *g, pmcp_tenant t,
                                   const char *ref, const char *kinds, char kind[32],
                                   int64_t *rowid)
{
  return pmcp__sql_resolve(s, &g->c, t, ref, kinds, kind, rowid);
}
static inline int pmcp__pg_new_id(pmcp_store *s, pmcp__pg *g, pmcp_tenant t,
                                  const char *table, const char *want, const char *name,
                                  pmcp_buf *out, int64_t *exists)
{
  return pmcp__sql_new_id(s, &g->c, t, table, want, name, out, exists);
}
int pmcp__pg_index(pmcp_store *s, pmcp__pg *g, pmcp_tenant t, const char *ref,
                   const char *kind, const char *title, const char *body);
int pmcp__pg_index_doc(pmcp_store *s, pmcp__pg *g, pmcp_tenant t, const char *doc,
                       const char *kind, int64_t rowid);

/* ---- pg_schema.c ---- */
/* Checks the schema and (unless read-only) migrates it to
 * PMCP__PG_SCHEMA_VERSION under an advisory lock; PMCP_ENOTFOUND when the
 * schema holds no store and flags lack PMCP_STORE_CREATE. */
int pmcp__pg_migrate(pmcp_store *s, pmcp__pg *g, unsigned flags);
/* A new store's first rows: the default tenant, the cursor key. */
int pmcp__pg_initialize(pmcp_store *s, pmcp__pg *g);

/* ---- pg_metrics.c (the block storage of metrics.c's shared code) ---- */
static inline int pmcp__pg_series_check(pmcp_store *s, pmcp__pg *g, pmcp_tenant t,
                                        int64_t series, const char *kind)
{
  return pmcp__sql_series_check(s, &g->c, t, series, kind);
}
int pmcp__pg_flush(pmcp_store *s, pmcp__pg *g);
void pmcp__pg_drop_pending(pmcp__pg *g);

/* ---- pg_block.c ---- */
/* Stores @p n (1..PMCP__PG_BLOCK) points as block @p seq of @p series,
 * with its summary and chunk summaries: a new block (@p fresh), or one
 * replacing the block of that seq. */
int pmcp__pg_block_write(pmcp_store *s, pmcp__pg *g, int64_t tenant, int64_t series,
                         int64_t seq, int fresh, const pmcp_point *pts, size_t n);

/* The backend's op implementations. */
int pmcp__pg_tenant(pmcp_store *s, void *ctx, const char *name, unsigned flags,
                    pmcp_tenant *out);
int pmcp__pg_secret(pmcp_store *s, void *ctx, const char *name, pmcp_buf *out);
int pmcp__pg_version(pmcp_store *s, void *ctx, pmcp_tenant t, uint64_t *out);
int pmcp__pg_begin(pmcp_store *s, void *ctx);
int pmcp__pg_commit(pmcp_store *s, void *ctx);
int pmcp__pg_rollback(pmcp_store *s, void *ctx);
int pmcp__pg_series(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                    const pmcp_series_spec *spec, int64_t *out);
int pmcp__pg_log(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                 const pmcp_point *points, size_t n);
int pmcp__pg_log_histogram(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                           int64_t step, int64_t time_ms, const double *edges,
                           const double *counts, size_t n_bins);
int pmcp__pg_log_scatter(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                         int64_t step, int64_t time_ms, const double *x, const double *y,
                         size_t n);
int pmcp__pg_list(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_list_opts *opts,
                  pmcp_buf *out);
int pmcp__pg_search(pmcp_store *s, void *ctx, pmcp_tenant t, const char *query,
                    const char *kinds, const char *after, size_t limit, pmcp_buf *out);
/* papers_search.h: the papers index's ranked search (pg_papers.c). */
int pmcp__pg_papers(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp__papers_query *q,
                    pmcp__papers_result *r);
int pmcp__pg_series_list(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                         pmcp_buf *out);
int pmcp__pg_points(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                    int64_t step_from, int64_t step_to, int64_t after_id, pmcp_point *out,
                    size_t cap, size_t *n_out, int64_t *next_id);
int pmcp__pg_summary(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                     int64_t step_from, int64_t step_to, size_t n_buckets, pmcp_bucket *out,
                     size_t *n_out);
int pmcp__pg_summary_time(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                          int64_t time_from, int64_t time_to, size_t n_buckets,
                          pmcp_bucket *out, size_t *n_out);
int pmcp__pg_series_sets(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                         int64_t step_from, int64_t step_to, const char *after,
                         size_t limit, pmcp_buf *out);

#endif
