/* SPDX-License-Identifier: MIT */
/* Internal: workspace scoping of reads, shared by both built-in backends.
 *
 * A pmcp_tenant whose `workspace` is non-zero (pmcp_store_scope()) sees
 * only the rows of that workspace:
 *  - projects of the workspace, their experiments, the runs filed in them
 *    and everything hanging off those (notes, artifacts, datasets,
 *    checkpoints, trials, groups, series, events, attributes);
 *  - the tenant's "default" workspace also holds what no project files:
 *    unfiled runs, notes and artifacts about them, datasets without a
 *    project, groups without an experiment (`unfiled` set);
 *  - lab-wide records are seen from every workspace: the team note,
 *    lab-wide artifacts, sources, the papers index and the shared files
 *    folder; a session or a lineage edge only when every ref it names is
 *    visible.
 *
 * The predicates are portable SQL text (SQLite and PostgreSQL) naming
 * their parameters :t (tenant id), :w (workspace row id) and :u (1 when
 * the workspace is the default one, else 0); each backend binds them its
 * own way. Nothing is added to a query when t.workspace is 0, so unscoped
 * reads (the CLI, stdio, --insecure-no-auth) run exactly as before. */
#ifndef PMCP_STORE_WS_SCOPE_H
#define PMCP_STORE_WS_SCOPE_H

#include <stdint.h>

#include "probemcp/store.h"
#include "util/buf.h"

/* The predicate that keeps a row of @p table visible in a scoped read
 * (bare column names, or qualified by the table's name), written into
 * @p out: 1 when the table has a rule, 0 when it is never scoped, or
 * PMCP_ENOMEM. */
int pmcp__ws_table_where(pmcp_buf *out, const char *table);

/* Appends " AND <predicate>" for list kind @p kind (pmcp_store_list()'s
 * aliases) to @p where when @p t is scoped. 0 or PMCP_ENOMEM. */
int pmcp__ws_list_where(pmcp_buf *where, pmcp_tenant t, const char *kind);

/* @p sql with " AND <pred>" (:t/:w/:u filled from @p t) after every
 * occurrence of @p anchor (caller frees); NULL: out of memory. */
char *pmcp__ws_splice(const char *sql, const char *anchor, const char *pred, pmcp_tenant t);
/* A ref stored as text in column @p col (any kind): 0 or PMCP_ENOMEM. */
int pmcp__ws_ref_where(pmcp_buf *out, const char *col);
/* The search documents' predicate (search_docs aliased d) into @p out:
 * 0 or PMCP_ENOMEM. */
int pmcp__ws_search_where(pmcp_buf *out);

/* Scope marks: a statement a scoped read shares with the unscoped one
 * names, where its rows link to other records, the condition that keeps
 * only the linked rows the scope sees, as a comment (a no-op when nothing
 * is scoped):
 *   / *ws ref COL* /        COL holds a ref (any kind, sessions included);
 *   / *ws row TABLE COL* /  COL holds a row id of TABLE (a ws_table_where
 *                           table).
 * (written here with spaces; the marks have none after '/' or before
 * '/'). Writes @p sql into @p out with each mark turned into " AND <the
 * condition>" for @p t: 1 when a mark was replaced, 0 when @p t is not
 * scoped or @p sql has no mark (@p out untouched), PMCP_ENOMEM, or
 * PMCP_EINTERNAL for a malformed mark. */
int pmcp__ws_marks(pmcp_buf *out, const char *sql, pmcp_tenant t);
/* The same for a statement the backend prepares once (pmcp__sql_prep):
 * the marks' conditions name the three parameters after the statement's
 * own, ?F, ?F+1 and ?F+2 for :t, :w and :u (bind them as integers: tenant
 * id, workspace row id, 1 for the default workspace; *first = F), the same
 * text for every scope; made once per process and kept, so its address is
 * a stable cache key. @p sql itself (*first = 0) when it has no mark;
 * NULL: out of memory or too many such texts (use pmcp__ws_marks). */
const char *pmcp__ws_marks_param(const char *sql, int *first);

/* 0 when row @p rowid of @p table is visible to @p t (always when
 * t.workspace is 0), PMCP_ENOTFOUND when it is not (no message set: the
 * caller says "no run 'X'" as for a missing one), or a store error. */
int pmcp__ws_check(pmcp_store *s, pmcp_tenant t, const char *table, int64_t rowid);

/* @p pred with :t, :w and :u replaced by @p t's numbers (caller frees);
 * NULL: out of memory. */
char *pmcp__ws_inline(const char *pred, pmcp_tenant t);
/* The same with :t, :w and :u replaced by the texts @p t, @p w, @p u
 * (PostgreSQL's views put expressions there). */
char *pmcp__ws_subst(const char *pred, const char *t, const char *w, const char *u);

/* query_sql's views, one source for both backends (research/sql_guard.c,
 * store/pg_query.c): the condition that keeps a row of view @p view
 * (metric_points, runs, attributes, ...) in a scoped read, over the view's
 * own columns, with :t/:w/:u left in. The store's tables it reads are
 * written with @p tables before their names ("main." on SQLite, the
 * store's schema on PostgreSQL); a table that hangs off another (tags,
 * note_versions, metric_points, ...) is kept by its parent's view, already
 * scoped, written with @p views before its name. metric_blocks names the
 * series of a block as `s` (both views join it). 1 when the view has a
 * rule, 0 when it is lab-wide (papers), or PMCP_ENOMEM. */
int pmcp__ws_view_where(pmcp_buf *out, const char *view, const char *tables,
                        const char *views);

#endif
