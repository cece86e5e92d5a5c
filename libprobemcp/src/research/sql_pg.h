/* SPDX-License-Identifier: MIT */
/* query_sql on the PostgreSQL store: the same tool answers, rows and pages
 * as on SQLite (query_sql.c), over the guarded connection of
 * store/pg_query.h. Built only with the PostgreSQL backend. */
#ifndef PMCP_RESEARCH_SQL_PG_H
#define PMCP_RESEARCH_SQL_PG_H

#include <stddef.h>

#include "probemcp/json.h"
#include "probemcp/tool.h"
#include "research/research.h"
#include "store/pg_query.h"

/* Runs one statement over the rows of scope @p t (the tenant, or one of
 * its workspaces) and pages its rows (`columns`, `rows`). */
int pmcp__sqlpg_run(pmcp_call *call, pmcp__research *rs, pmcp__pgq *q, pmcp_tenant t,
                    const char *sql, size_t len);
/* Pages the readable tables with their columns and types. */
int pmcp__sqlpg_list(pmcp_call *call, pmcp__research *rs, pmcp__pgq *q);
/* The whole listing into @p j: {"tables":[...]} (probe://sql/schema). */
int pmcp__sqlpg_schema(pmcp__pgq *q, pmcp_json *j);

#endif
