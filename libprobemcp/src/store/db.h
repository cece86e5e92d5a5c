/* SPDX-License-Identifier: MIT */
/* db.h: parameterized SQL over a store's own connection, for the service
 * tables (users, memberships, API keys, OAuth, audit). Placeholders are
 * $1..$N (PostgreSQL syntax; the SQLite side binds them by name). Every
 * parameter is text or NULL; results are text or NULL. Portable SQL only:
 * TEXT and BIGINT columns, text primary keys (random ids made by the
 * caller), no AUTOINCREMENT/SERIAL, no RETURNING, no ON CONFLICT ... DO
 * UPDATE differences (INSERT ... ON CONFLICT DO NOTHING is fine on both).
 *
 * The research data never goes through here: it has the typed store API.
 * Each backend implements the two hooks of pmcp__db_ops over its own
 * connection; the dispatch and the result set below are shared. */
#ifndef PMCP_STORE_DB_H
#define PMCP_STORE_DB_H

#include <stddef.h>
#include <stdint.h>

#include "probemcp/store.h"

typedef struct pmcp__db_res pmcp__db_res;

/* Runs one statement. @p changes (may be NULL) gets the rows changed.
 * Errors: PMCP_ESTORE/PMCP_EIO/PMCP_EREADONLY with the store's message set
 * (never the SQL text); PMCP_EEXIST for a unique or primary key clash. */
int pmcp__db_exec(pmcp_store *s, const char *sql, int n, const char *const *params,
                  int64_t *changes);
/* Runs one query; @p out gets every row (caller frees with pmcp__db_res_free). */
int pmcp__db_query(pmcp_store *s, const char *sql, int n, const char *const *params,
                   pmcp__db_res **out);
size_t pmcp__db_nrows(const pmcp__db_res *r);
size_t pmcp__db_ncols(const pmcp__db_res *r);
const char *pmcp__db_get(const pmcp__db_res *r, size_t row, size_t col); /* NULL: SQL NULL */
void pmcp__db_res_free(pmcp__db_res *r);
/* A change mark of the store: two marks read on @p s are equal only if no
 * commit (from any connection, this one's included) came between them, so
 * what was read between two equal marks is still what the store holds.
 * One cheap read, no table lookup. 0; PMCP_EUNSUPPORTED (the backend
 * cannot tell: read again); a store error. */
int pmcp__db_change_mark(pmcp_store *s, uint64_t mark[2]);
/* Something a caller keeps with the handle (the key cache of
 * auth/key_cache.c), freed with it by @p dispose; 0 or PMCP_EMISUSE. */
void *pmcp__store_attached(pmcp_store *s);
int pmcp__store_attach(pmcp_store *s, void *ud, void (*dispose)(void *));
/* How long a write on @p s waits for another writer of a SQLite store, in
 * ms (-1: as long as it takes); returns the previous value. For a
 * best-effort write that must not wait (0). Other backends: no-op, -1. */
int64_t pmcp__store_writer_wait(pmcp_store *s, int64_t ms);

/* ---- for backends ---- */

/* The hooks a backend puts in struct pmcp_store (store_int.h). Same
 * contract as the public-internal calls above; @p ctx is the backend's. */
typedef struct pmcp__db_ops {
  int (*exec)(pmcp_store *s, void *ctx, const char *sql, int n,
              const char *const *params, int64_t *changes);
  int (*query)(pmcp_store *s, void *ctx, const char *sql, int n,
               const char *const *params, pmcp__db_res **out);
  /* Makes the research tables of @p tenant readable on the connection
   * (PostgreSQL: its row-level security setting), or NULL: nothing to do. */
  int (*tenant)(pmcp_store *s, void *ctx, int64_t tenant);
  /* Fills @p mark with what changes whenever a commit may have changed
   * the store since it was last read: another connection's or this one's
   * (see pmcp__db_change_mark), or NULL: the backend cannot tell. */
  int (*mark)(pmcp_store *s, void *ctx, uint64_t mark[2]);
} pmcp__db_ops;

/* Before a pmcp__db_query over the research tables (workspaces, runs, ...)
 * of tenant @p tenant: 0 or the backend's error. */
int pmcp__db_tenant(pmcp_store *s, int64_t tenant);

/* A result set under construction: @p ncols columns, no rows. */
int pmcp__db_res_new(pmcp__db_res **out, size_t ncols);
/* Appends one cell (row-major; a row is complete after ncols cells).
 * @p val NULL: SQL NULL; else @p len bytes are copied and NUL-terminated.
 * 0 or PMCP_ENOMEM. */
int pmcp__db_res_add(pmcp__db_res *r, const char *val, size_t len);

/* service_schema.c: the portable DDL of the service tables that takes the
 * store schema from @p version - 1 to @p version (one statement per string,
 * NULL-terminated), or NULL when that version adds no service tables. Both
 * backends run the same lists in their migrations. */
const char *const *pmcp__service_ddl(int version);

#endif
