/* SPDX-License-Identifier: MIT */
/* Internal: the SQLite backend's state and the helpers its files share.
 * Only files under src/store include this (SQLite types stay out of the
 * public headers). The logic both backends share is written once against
 * sql.h (sq_stmt.c is this backend's side of it); the sq_*.c files hold
 * only what is SQLite's own (opening, migrations, FTS5 search, the block
 * codec and metric blocks, the points virtual table, the kinds' JSON in
 * list). */
#ifndef PMCP_STORE_SQ_H
#define PMCP_STORE_SQ_H

#include <sqlite3.h>
#include <stdint.h>

#include "store/metrics.h"
#include "store/sql.h"
#include "store/store_int.h"
#include "util/buf.h"

/* Schema version this library writes; sq_schema.c holds the migrations. */
#define PMCP__SQ_SCHEMA_VERSION 14
/* Points per metric block. */
#define PMCP__SQ_BLOCK PMCP__METRIC_BLOCK
/* A point's position id: block seq * PMCP__SQ_POS + index + 1. */
#define PMCP__SQ_POS PMCP__METRIC_POS

/* Points of one series waiting to be written as blocks (metrics.h). */
typedef pmcp__sql_pending pmcp__sq_pending;

/* A statement seen through the shared interface (sql.h); made on first
 * use of its cache entry and kept with it. */
typedef struct pmcp__sq_st pmcp__sq_st;

typedef struct pmcp__sq_stmt_entry {
  const char *sql;       /* identity: the literal's address */
  sqlite3_stmt *stmt;
  pmcp__sq_st *w;        /* NULL until used through sql.h */
} pmcp__sq_stmt_entry;

/* A statement built at run time (list queries, lookups per table), kept by
 * its text so the next call with the same shape skips the parse. */
typedef struct pmcp__sq_dyn_entry {
  char *sql;             /* owned copy of the text */
  sqlite3_stmt *stmt;
  pmcp__sq_st *w;
  uint64_t used;         /* last use (q->dyn_clock) */
} pmcp__sq_dyn_entry;

#define PMCP__SQ_DYN_MAX 48

/* A block decoder: zstd context and buffers reused from block to block. */
typedef struct pmcp__sq_dec {
  void *dctx;
  unsigned char *raw;
  size_t raw_cap;
  pmcp_point *pts;
  size_t pts_cap;
} pmcp__sq_dec;

typedef struct pmcp__sq {
  pmcp__sql c;           /* the shared statement interface (first) */
  sqlite3 *db;
  int64_t papers_bulk_from; /* a bulk papers import: papers above this id are not indexed yet */
  int readonly;
  int in_txn;            /* an explicit transaction is open */
  pmcp__sq_pending *pending;
  size_t n_pending, cap_pending;
  pmcp__sq_stmt_entry *stmts;
  size_t n_stmts, cap_stmts;
  pmcp__sq_dyn_entry dyn[PMCP__SQ_DYN_MAX];
  size_t n_dyn;
  uint64_t dyn_clock;
  void *cctx;            /* zstd context, created on first use */
  pmcp__sq_dec dec;      /* the reads' block decoder */
  int immutable;         /* opened with immutable=1 (read-only folder) */
  int rank_fn;           /* pmcp_bm25 is registered (sq_search_rank.h) */
  /* Waiting for another writer (sq_wait.c). */
  char *holder_path;     /* PATH-writer */
  int holding;           /* we wrote it */
  int64_t wait_ms;       /* how long to wait; -1: as long as it takes */
  int64_t wait_start, wait_said;
} pmcp__sq;

#define SQ(ctx) ((pmcp__sq *)(ctx))

/* sq_wait.c: the busy handler and the advisory holder file. */
#define PMCP__SQ_READER_WAIT_MS 30000
void pmcp__sq_wait_init(pmcp__sq *q, const char *path);
int pmcp__sq_on_busy(void *ud, int count);
void pmcp__sq_holder_take(pmcp__sq *q);
void pmcp__sq_holder_drop(pmcp__sq *q);
/* "pid N (command) has been writing since T", or -1 when unknown. */
int pmcp__sq_holder_describe(const pmcp__sq *q, char *out, size_t size);

/* sq_open.c */
int pmcp__sq_err(pmcp_store *s, pmcp__sq *q, int src, const char *what);
/* sq_stmt.c: statements cached by the literal's address; the interface of
 * sql.h over them. */
extern const pmcp__sql_ops pmcp__sq_sql_ops;
void pmcp__sq_stmts_free(pmcp__sq *q);
int pmcp__sq_prep(pmcp_store *s, pmcp__sq *q, const char *sql, sqlite3_stmt **out);
/* Like pmcp__sq_prep for a text built at run time: cached by its content
 * (the least recently used of PMCP__SQ_DYN_MAX is dropped). The caller
 * resets the statement after use and never finalizes it. */
int pmcp__sq_prep_text(pmcp_store *s, pmcp__sq *q, const char *sql, sqlite3_stmt **out);
int pmcp__sq_exec(pmcp_store *s, pmcp__sq *q, const char *sql);
/* Opens the write scope of one call: a transaction of its own, or a
 * savepoint inside the caller's explicit transaction. */
int pmcp__sq_wbegin(pmcp_store *s, pmcp__sq *q);
/* Closes it: on rc == 0 bumps the tenant's data version and commits (or
 * releases the savepoint); otherwise rolls the call back. Returns rc or the
 * commit's error. */
int pmcp__sq_wend(pmcp_store *s, pmcp__sq *q, pmcp_tenant t, int rc);
/* The shared lookups of sql.h (sql.c) on this backend's connection. */
static inline int pmcp__sq_find(pmcp_store *s, pmcp__sq *q, pmcp_tenant t, const char *kind,
                                const char *id, int64_t *rowid)
{
  return pmcp__sql_find(s, &q->c, t, kind, id, rowid);
}
static inline int pmcp__sq_resolve(pmcp_store *s, pmcp__sq *q, pmcp_tenant t,
                                   const char *ref, const char *kinds, char kind[32],
                                   int64_t *rowid)
{
  return pmcp__sql_resolve(s, &q->c, t, ref, kinds, kind, rowid);
}
static inline int pmcp__sq_new_id(pmcp_store *s, pmcp__sq *q, pmcp_tenant t,
                                  const char *table, const char *want, const char *name,
                                  pmcp_buf *out, int64_t *exists)
{
  return pmcp__sql_new_id(s, &q->c, t, table, want, name, out, exists);
}
/* Keyword index: replaces the search document of @p ref. */
int pmcp__sq_index(pmcp_store *s, pmcp__sq *q, pmcp_tenant t, const char *ref,
                   const char *kind, const char *title, const char *body);
int pmcp__sq_unindex(pmcp_store *s, pmcp__sq *q, pmcp_tenant t, const char *ref);
/* Text helpers */
int pmcp__sq_text_col(pmcp_buf *b, sqlite3_stmt *st, int col);

/* sq_db.c: the db.h hooks (store_int.h's db). */
extern const struct pmcp__db_ops pmcp__sq_db_ops;

/* sq_schema.c: applies migrations from version @p from up to @p to. */
int pmcp__sq_migrate(pmcp_store *s, pmcp__sq *q, int from, int to);
int pmcp__sq_schema_version(pmcp__sq *q, int *out);

/* sq_codec.c: one block <-> bytes. A block is written as version 3:
 * segments of up to PMCP__SQ_SEG points, each compressed on its own and
 * preceded (uncompressed, in a header) by its summary, so a read that
 * needs the points of a few segments decodes only those, and a summary
 * takes the others from their headers. */
#define PMCP__SQ_SEG 1024
#define PMCP__SQ_MAX_SEGS (PMCP__SQ_BLOCK / PMCP__SQ_SEG)
/* A segment as its header describes it: its summary (first / last as
 * logged, NaN or infinite too; min / max NaN when no value is finite),
 * its points without a time, and where its bytes are in the block. */
typedef struct pmcp__sq_seg {
  pmcp_bucket sum;
  uint64_t untimed;
  size_t at, len;        /* its compressed bytes: offset in the block, length */
} pmcp__sq_seg;
/* Bytes of a version 3 header for @p nseg segments. */
#define PMCP__SQ_SEG_HDR(nseg) (4 + (size_t)(nseg) * 120)
int pmcp__sq_encode(pmcp__sq *q, const pmcp_point *p, size_t n, pmcp_buf *out);
/* Reads a block's segment headers from its first bytes (@p len: at least
 * PMCP__SQ_SEG_HDR of the count in byte 1, or the whole block): 1 when
 * the block is of version 3 (*nseg, segs[0..*nseg)), 0 when it is older
 * (no segments: decode it whole), PMCP_ECORRUPT. */
int pmcp__sq_seg_headers(const void *data, size_t len, size_t block_len, pmcp__sq_seg *segs,
                         size_t *nseg);
/* The points without a time of a version 3 block, from its first bytes
 * (as pmcp__sq_seg_headers() reads them): 1 and *out, or 0 (an older
 * block) or PMCP_ECORRUPT. */
int pmcp__sq_block_untimed(const void *data, size_t len, uint64_t *out);
/* Decodes segment bytes @p data (@p len, from the block at g->at) into
 * @p d's buffer, as pmcp__sq_dec_block() does a block. */
int pmcp__sq_dec_seg(pmcp__sq_dec *d, const void *data, size_t len, const pmcp__sq_seg *g,
                     unsigned flags, pmcp_point **pts, size_t *n);
/* Decodes one block into @p d's buffer (valid until the next call):
 * *pts, *n. With PMCP__SQ_DEC_NO_TIME the times are skipped (left 0). */
#define PMCP__SQ_DEC_NO_TIME 1u
int pmcp__sq_dec_block(pmcp__sq_dec *d, const void *data, size_t len, unsigned flags,
                       pmcp_point **pts, size_t *n);
void pmcp__sq_dec_free(pmcp__sq_dec *d);
/* Like pmcp__sq_dec_block() into a malloc'ed copy the caller frees. */
int pmcp__sq_decode(pmcp__sq *q, const void *data, size_t len, pmcp_point **pts,
                    size_t *n);
void pmcp__sq_codec_free(pmcp__sq *q);

/* sq_metrics.c: rewrites every metric block of a codec version before 3
 * as version 3 (the v14 migration), points and row summary unchanged. */
int pmcp__sq_reencode_blocks(pmcp_store *s, pmcp__sq *q);
/* sq_metrics.c (the block storage of metrics.c's shared code) */
static inline int pmcp__sq_series_check(pmcp_store *s, pmcp__sq *q, pmcp_tenant t,
                                        int64_t series, const char *kind)
{
  return pmcp__sql_series_check(s, &q->c, t, series, kind);
}
int pmcp__sq_flush(pmcp_store *s, pmcp__sq *q);
void pmcp__sq_drop_pending(pmcp__sq *q);

/* The backend's op implementations, one file each group. */
int pmcp__sq_tenant(pmcp_store *s, void *ctx, const char *name, unsigned flags,
                    pmcp_tenant *out);
int pmcp__sq_secret(pmcp_store *s, void *ctx, const char *name, pmcp_buf *out);
int pmcp__sq_version(pmcp_store *s, void *ctx, pmcp_tenant t, uint64_t *out);
int pmcp__sq_begin(pmcp_store *s, void *ctx);
int pmcp__sq_commit(pmcp_store *s, void *ctx);
int pmcp__sq_rollback(pmcp_store *s, void *ctx);

int pmcp__sq_log(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                 const pmcp_point *points, size_t n);
int pmcp__sq_list(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_list_opts *opts,
                  pmcp_buf *out);
int pmcp__sq_search(pmcp_store *s, void *ctx, pmcp_tenant t, const char *query,
                    const char *kinds, const char *after, size_t limit, pmcp_buf *out);
/* The triggers that keep papers_fts in step with papers (schema v2; a
 * bulk import drops and restores them, sq_papers.c). */
#define PMCP__SQ_PAPERS_AI                                                     \
  "CREATE TRIGGER papers_ai AFTER INSERT ON papers BEGIN"                      \
  "  INSERT INTO papers_fts(rowid, title, abstract, authors)"                  \
  "  VALUES(new.id, new.title, new.abstract, new.authors); END;"
#define PMCP__SQ_PAPERS_AU                                                     \
  "CREATE TRIGGER papers_au AFTER UPDATE ON papers BEGIN"                      \
  "  INSERT INTO papers_fts(papers_fts, rowid, title, abstract, authors)"      \
  "  VALUES('delete', old.id, old.title, old.abstract, old.authors);"          \
  "  INSERT INTO papers_fts(rowid, title, abstract, authors)"                  \
  "  VALUES(new.id, new.title, new.abstract, new.authors); END;"
int pmcp__sq_papers_bulk(pmcp_store *s, void *ctx, int begin);
/* papers_search.h: the papers index's ranked search (sq_papers.c). */
int pmcp__sq_papers(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp__papers_query *q,
                    pmcp__papers_result *r);
int pmcp__sq_points(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                    int64_t step_from, int64_t step_to, int64_t after_id, pmcp_point *out,
                    size_t cap, size_t *n_out, int64_t *next_id);
int pmcp__sq_summary(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                     int64_t step_from, int64_t step_to, size_t n_buckets, pmcp_bucket *out,
                     size_t *n_out);
int pmcp__sq_summary_time(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                          int64_t time_from, int64_t time_to, size_t n_buckets,
                          pmcp_bucket *out, size_t *n_out);
int pmcp__sq_scan(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series, int64_t step_from,
                  int64_t step_to, unsigned flags, const pmcp__scan_cb *cb);

/* For query_sql (a later issue): a new read-only connection to the same
 * SQLite file, or PMCP_EUNSUPPORTED for other backends. The caller closes
 * it with sqlite3_close(). */
int pmcp__store_sqlite_ro_connection(pmcp_store *s, sqlite3 **out);

/* sq_points_vtab.c: on such a connection, makes temp.@p name, a read-only
 * virtual table of tenant @p tenant's float points (series_id, step, time,
 * value). *@p internal is 1 while the table runs its own block query (an
 * authorizer lets that through). Returns 0 or PMCP_ENOMEM/PMCP_ESTORE. */
int pmcp__sq_points_vtab(sqlite3 *db, int64_t tenant, int *internal, const char *name);

#endif
