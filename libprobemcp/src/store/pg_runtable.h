/* Internal: the PostgreSQL backend's run table (runtable.h), called by
 * pmcp__store_run_table() when the store is PostgreSQL. */
#ifndef PMCP_STORE_PG_RUNTABLE_H
#define PMCP_STORE_PG_RUNTABLE_H

#include "store/runtable.h"

int pmcp__pg_run_table(pmcp_store *s, pmcp_tenant t, const pmcp__rt_query *q,
                       pmcp__rt_result *out);

#endif
