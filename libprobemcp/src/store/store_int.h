/* Internal: the store handle shared by the public dispatcher (store.c) and
 * the backends. Nothing here is SQLite-specific; sqlite.h holds that. */
#ifndef PMCP_STORE_INT_H
#define PMCP_STORE_INT_H

#include "probemcp/store.h"

#define PMCP__STORE_MAGIC 0x53544f52u /* "STOR" */

struct pmcp_store {
  unsigned magic;
  unsigned flags;        /* PMCP_STORE_READONLY ... as opened */
  pmcp_store_ops ops;
  void *ctx;             /* the backend's state */
  /* The backend's db.h hooks (service tables), or NULL: it has none. */
  const struct pmcp__db_ops *db;
  char errmsg[512];
};

/* Allocates a handle with no backend (errors can be set on it). */
int pmcp__store_alloc(pmcp_store **out, unsigned flags);
/* Clears the error message (start of each public call). */
void pmcp__store_clear_error(pmcp_store *s);

/* The SQLite backend: opens @p path into @p s (sets ops and ctx). */
int pmcp__store_sqlite_open(pmcp_store *s, const char *path, unsigned flags);

#endif
