/* SPDX-License-Identifier: MIT */
/* The tables of query_sql's agent connection: each a TEMP virtual table
 * that proxies one scoped view held on a second, private connection.
 *
 * Why: the connection that runs an agent's SQL opens no store file (it is
 * an in-memory database), so no SQL it is given, however it names things,
 * can reach a table it must not read: the only rows it can see are those
 * the proxies hand over, and a proxy only ever runs its own fixed
 * statement, `SELECT * FROM temp.<view>` plus pushed-down comparisons whose
 * values are bound parameters, on the private connection. The views there
 * keep the tenant's (and workspace's) rows and leave out internals. */
#ifndef PMCP_RESEARCH_SQL_PROXY_H
#define PMCP_RESEARCH_SQL_PROXY_H

#include <sqlite3.h>

/* Registers the proxy module on @p outer, reading from @p inner (which
 * must outlive @p outer's tables: close @p outer first). @p names lists the
 * views of @p inner to expose, NULL-terminated; each becomes
 * temp.<name> on @p outer with the view's columns and declared types.
 * Returns an SQLite result code. */
int pmcp__sqlproxy_attach(sqlite3 *outer, sqlite3 *inner, const char *const *names);

#endif
