/* SPDX-License-Identifier: MIT */
/* Internal: what the run table (runtable.c) and the exact page
 * (runfilter.c) share. Both are written once over sql.h for the two
 * built-in backends; the few places where SQLite's and PostgreSQL's SQL
 * really differ are picked here (PMCP__SQL_PICK) or, for the read
 * snapshot, in runtable.c's dialect section:
 *  - an attribute's number: SQLite's index states it as one expression;
 *    PostgreSQL compares v_real and v_int apart, each with its index
 *    (an expression index does not serve under row-level security);
 *  - ordered text comparisons: bytewise as the evaluator's strcmp
 *    (SQLite's BINARY; PostgreSQL needs COLLATE "C");
 *  - how many parameters a statement may bind (the PostgreSQL layer's
 *    PMCP__PG_MAXP). */
#ifndef PMCP_STORE_RUNSQL_H
#define PMCP_STORE_RUNSQL_H

#include <stdint.h>

#include "store/runtable.h"
#include "store/sql.h"

/* The shared statement interface of a built-in store (SQLite or
 * PostgreSQL), or NULL for a custom backend. */
pmcp__sql *pmcp__rt_sql(pmcp_store *s);

/* A REAL as the store's JSON listings give it (15 significant digits). */
double pmcp__rt_listed(double d);

/* The row id of project @p slug in the call's workspace; PMCP_ENOTFOUND
 * (message names it). */
int pmcp__rt_project_id(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, const char *slug,
                        int64_t *out);

/* A read of several statements that must see one state of the store:
 * readies the connection for @p t, opens a read transaction of its own
 * when none is open (*own set) and, inside the caller's transaction,
 * writes the points it holds back. pmcp__rt_read_end() closes what
 * pmcp__rt_read_begin() opened and returns @p rc. */
int pmcp__rt_read_begin(pmcp_store *s, pmcp__sql *c, pmcp_tenant t, int *own);
int pmcp__rt_read_end(pmcp_store *s, pmcp__sql *c, int own, int rc);

/* Parameters one statement may bind on the connection's backend. */
int pmcp__rt_maxp(const pmcp__sql *c);

/* The number attribute row `a` lists on SQLite, as its v11 index
 * attributes_path_number states it (booleans are not numbers). PostgreSQL
 * compares v_real and v_int apart (runfilter.c, put_num_range()). */
#define PMCP__RT_NUM_SQ "(CASE WHEN a.type='bool' THEN NULL ELSE coalesce(a.v_real, a.v_int) END)"

/* After a text column compared with < <= > >=: bytewise order. */
#define PMCP__RT_BYTES(c) PMCP__SQL_PICK(c, "", " COLLATE \"C\"")

#endif
