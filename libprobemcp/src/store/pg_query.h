/* SPDX-License-Identifier: MIT */
/* Internal: query_sql's connection on the PostgreSQL backend. It logs in
 * as the reader role (PROBE_PG_QUERY_USER, default probe_reader), whose
 * only privilege is SELECT on the views of <schema>_sql. Each statement
 * proves its scope (tenant, and workspace when the call acts in one) with
 * a token only the store can make from its query_key; the views keep the
 * rows of that scope by the rules SQLite's views follow (ws_scope.h), and
 * nothing without a valid token. Every statement runs alone in a READ ONLY
 * transaction with a statement_timeout and is rolled back, and the
 * session is reset (DISCARD ALL), so nothing it sets or takes outlives it
 * (settings, session advisory locks, prepared statements).
 * What a statement can still do while it runs is bounded by its timeout
 * and harms no one: the writers' turn is a row lock on a table the role
 * cannot reach, so an advisory lock (or pg_sleep) holds up no writer;
 * set_config() changes only this transaction. Each connection logs in
 * as a role of its own when the store has them (pg_readers.c: made when
 * the owner may create roles), so readers cannot see each other's
 * statements or signal each other's sessions. Without them readers share
 * probe_reader; then only a migration run by a superuser takes signalling
 * (pg_terminate_backend, pg_cancel_backend) and other sessions' activity
 * from PUBLIC (README: the statements, for an administrator). */
#ifndef PMCP_STORE_PG_QUERY_H
#define PMCP_STORE_PG_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "probemcp/store.h"

typedef struct pmcp__pgq pmcp__pgq;

/* PMCP_EUNSUPPORTED when @p store is not PostgreSQL; other failures with
 * a message for the agent in @p err (no URL, no password). */
int pmcp__pgq_open(pmcp__pgq **out, pmcp_store *store, int64_t tenant, char *err,
                   size_t errlen);
void pmcp__pgq_free(pmcp__pgq *q);

/* Runs @p sql (one statement) over the rows of scope @p t (its tenant,
 * and its workspace unless t.workspace is 0); on success *out is a PGresult (PQclear it;
 * typed void here so callers need no libpq header). On refusal or error:
 * PMCP_EDENIED (writes, other tables), PMCP_ETIMEOUT, PMCP_EINVAL (SQL or
 * limits), with a message for the agent in @p err. */
int pmcp__pgq_run(pmcp__pgq *q, pmcp_tenant t, const char *sql, size_t len, int64_t timeout_ms,
                  void **out, char *err, size_t errlen);

/* The same statement, its rows streamed (one row in memory at a time):
 * on success *first is the statement's first result (PQclear it), a
 * one-row result (PGRES_SINGLE_TUPLE) or, with no rows, the empty final
 * one; then pmcp__pgq_next gives the next rows: 1 with a one-row result
 * in *row, 0 after the last, or an error as pmcp__pgq_run's. Call
 * pmcp__pgq_end after a successful start, when done or stopping early
 * (it stops the statement on the server). A connection lost since the
 * last statement is opened again; PMCP_EIO when that fails or the
 * connection is lost during the statement. */
int pmcp__pgq_start(pmcp__pgq *q, pmcp_tenant t, const char *sql, size_t len,
                    int64_t timeout_ms, void **first, char *err, size_t errlen);
int pmcp__pgq_next(pmcp__pgq *q, void **row, char *err, size_t errlen);
void pmcp__pgq_end(pmcp__pgq *q);

/* The readable views with their columns and types: a result of rows
 * (table, column, type) in order (PQclear it). */
int pmcp__pgq_tables(pmcp__pgq *q, void **out, char *err, size_t errlen);

/* Creates (again) the schema <schema>_sql: the views, the function that
 * checks a statement's token, and the reader role's grants, from this
 * program's rules. Run by the migration (pg_schema.c) after its steps,
 * inside its transaction, whenever the schema's version moves. */
struct pmcp__pg;
int pmcp__pgq_views(pmcp_store *s, struct pmcp__pg *g);

/* ---- the login roles (pg_readers.c) -------------------------------------- */

/* Login roles per store: query connections open at once, across every
 * replica, up to this many. */
#define PMCP__PGQ_ROLES 48

/* Makes the store's reader group and login roles, members of it, and
 * grants the group the views, when the current role may create roles and
 * they are not all there yet (else it does nothing): after
 * pmcp__pgq_views, and when `probe init` opens a current store. */
int pmcp__pgq_roles(pmcp_store *s, struct pmcp__pg *g);

/* hex(sha256(key || text || key)) (@p wrap) or hex(sha256(key || text)):
 * a statement's token, a login role's password, the group's tag. */
void pmcp__pgq_derive(const unsigned char *key, size_t klen, const char *text, int wrap,
                      char out[65]);

/* The group's name for the store of query key @p key. */
void pmcp__pgq_group(const unsigned char *key, size_t klen, char out[24]);

/* A query connection: as a free login role of @p group (NULL: the shared
 * role, PROBE_PG_QUERY_USER or probe_reader), with @p options. NULL with a
 * message in @p err (starting "busy" when every role is in use). */
struct pg_conn;
struct pg_conn *pmcp__pgq_login(const char *conninfo, const char *options, const char *group,
                                const unsigned char *key, size_t klen, char *err,
                                size_t errlen);

#endif
