/* SPDX-License-Identifier: MIT */
/* The read-only SQL connection behind `query_sql`, isolated by
 * construction rather than by looking at the SQL text or at names:
 *  - the agent's SQL runs on a connection of its own that opens no file:
 *    an in-memory database whose only tables are proxies (sql_proxy.h) of
 *    the research views. Whatever it is given (a CTE named like a view,
 *    main./temp. names, pragma functions, sqlite_schema, ATTACH), it has
 *    nothing else to read: keys, users, OAuth state, audit, the cursor key
 *    and other tenants' rows are not in that database;
 *  - the views live on a second, private connection, opened
 *    SQLITE_OPEN_READONLY on the store file, which runs only the proxies'
 *    own statements: each view keeps the tenant's (and, when narrowed, the
 *    workspace's) rows and leaves out internals; metric_points is the
 *    store's own read-only virtual table of the tenant's points
 *    (sq_points_vtab.c);
 *  - on the agent's connection: DEFENSIVE, no extension loading, no
 *    triggers or views, no ATTACH, and an authorizer that allows SELECT,
 *    reads of the proxy tables, CTEs and subqueries, json_each/json_tree,
 *    and functions minus a short deny list, and refuses everything else
 *    (writes, DDL and temp objects, PRAGMA, transactions) with words;
 *  - a progress handler on both connections that ends a statement after its
 *    time cap (CPU time of the statement's thread, with an elapsed-time
 *    backstop of six times the cap) or its budget of virtual machine steps
 *    (rows scanned), or on cancellation;
 *  - SQLITE_LIMIT_LENGTH on the size of any value, so a huge randomblob or
 *    zeroblob is an error, and exactly one statement per call. */
#ifndef PMCP_RESEARCH_SQL_GUARD_H
#define PMCP_RESEARCH_SQL_GUARD_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "probemcp/store.h"
#include "probemcp/tool.h"

typedef struct pmcp__sqlg pmcp__sqlg;

/* Limits; zeros take the defaults. */
typedef struct pmcp__sqlg_limits {
  int64_t time_ms;      /* per statement, CPU time: 5000 */
  int64_t max_steps;    /* VM steps per statement: 2e9 */
  int max_value_bytes;  /* any string or blob: 1 MiB */
} pmcp__sqlg_limits;

/* Opens the guarded connection for tenant @p t, whose views keep only its
 * workspace's rows when @p t is narrowed (pmcp_store_scope()).
 * PMCP_EUNSUPPORTED when the store is not SQLite; @p err says why in words
 * for the agent. */
int pmcp__sqlg_open(pmcp__sqlg **out, pmcp_store *store, pmcp_tenant t,
                    const pmcp__sqlg_limits *lim, char *err, size_t errlen);
void pmcp__sqlg_free(pmcp__sqlg *g);

/* Prepares exactly one read-only statement. On refusal returns
 * PMCP_EINVAL (or PMCP_EDENIED for a denied action) with a message for the
 * agent in @p err. @p call (may be NULL) is polled for cancellation. */
int pmcp__sqlg_prepare(pmcp__sqlg *g, const char *sql, size_t len, pmcp_call *call,
                       sqlite3_stmt **out, char *err, size_t errlen);

/* Steps @p st with the statement's caps armed; returns the sqlite3_step()
 * code; on an error @p err says what happened (time cap, step cap,
 * cancelled, value too big, or SQLite's message). */
int pmcp__sqlg_step(pmcp__sqlg *g, sqlite3_stmt *st, char *err, size_t errlen);
/* Starts the clock and step count of a statement (before its first step). */
void pmcp__sqlg_arm(pmcp__sqlg *g, pmcp_call *call);

/* The readable tables: name i (NULL past the end). */
const char *pmcp__sqlg_table(size_t i);
/* The connection (for column metadata of the readable views). */
sqlite3 *pmcp__sqlg_db(pmcp__sqlg *g);

#endif
