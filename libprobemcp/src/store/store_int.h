/* SPDX-License-Identifier: MIT */
/* Internal: the store handle shared by the public dispatcher (store.c) and
 * the backends. Nothing here is SQLite-specific; sqlite.h holds that. */
#ifndef PMCP_STORE_INT_H
#define PMCP_STORE_INT_H

#include <pthread.h>

#include "probemcp/store.h"
#include "store/papers_search.h"

#define PMCP__STORE_MAGIC 0x53544f52u /* "STOR" */

/* pmcp__store_scan(): how a caller takes a series' points. */
typedef struct pmcp__scan_cb {
  /* Offered, when the backend keeps block summaries, each block that lies
   * wholly inside the step range, before decoding it: return 1 to get its
   * points, 0 to take @p sum instead (count includes non-finite values;
   * min, max, sum skip them; min/max NaN when there are none), negative
   * to stop the scan with that code. NULL: every block is decoded. */
  int (*block)(void *ud, const pmcp_bucket *sum);
  /* Points with steps in range, in logging order, in batches; times are
   * 0 with PMCP__SCAN_NO_TIME. Return 0, or negative to stop. */
  int (*points)(void *ud, const pmcp_point *p, size_t n);
  void *ud;
} pmcp__scan_cb;

/* The caller never reads time_ms (a backend may skip decoding it). */
#define PMCP__SCAN_NO_TIME 1u

/* The backend's scan (NULL: pmcp__store_scan() reads through ops.points). */
typedef int (*pmcp__scan_fn)(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                             int64_t step_from, int64_t step_to, unsigned flags,
                             const pmcp__scan_cb *cb);

struct cJSON;

struct pmcp_store {
  unsigned magic;
  unsigned flags;        /* PMCP_STORE_READONLY ... as opened */
  pmcp_store_ops ops;
  pmcp__scan_fn scan;    /* internal fast path of a built-in backend, or NULL */
  pmcp__papers_fn papers; /* the papers index's ranked search, or NULL */
  int (*papers_bulk)(pmcp_store *s, void *ctx, int begin); /* or NULL */
  /* pmcp_store_get() as a tree, or NULL: the text is parsed;
   * @p flags PMCP__GET_* */
  int (*get_tree)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref, unsigned flags,
                  struct cJSON **out);
  void *ctx;             /* the backend's state */
  /* The backend's db.h hooks (service tables), or NULL: it has none. */
  const struct pmcp__db_ops *db;
  char errmsg[512];
  /* Held by the toolsets around every use of this handle (research.h):
   * they serve calls from several workers, and the research and tracking
   * toolsets may share one handle, so the lock lives here, with the
   * handle, not with each toolset. */
  pthread_mutex_t tool_lock;
  /* pmcp__store_attach(): kept with the handle, disposed with it */
  void *attached;
  void (*attached_dispose)(void *);
};

/* get_tree flags. BRIEF: a run's, experiment's or project's record may
 * hold only what a card shows (the card_keys of research/views/views.c:
 * names, status, times, owners, tags, attributes), each member as in the
 * whole record; its lists (notes, artifacts, sessions, lineage, versions,
 * checkpoints, ...), config, environment, code and readme are left out:
 * reading them was most of a card's cost. */
#define PMCP__GET_BRIEF 1u

/* pmcp_store_get() as a tree (the caller deletes it), as the record's
 * text would parse: through the backend's get_tree, else the text parsed
 * (the whole record whatever @p flags asks). PMCP_ECORRUPT (message set)
 * when a backend's text is not JSON. */
int pmcp__store_get_tree(pmcp_store *s, pmcp_tenant t, const char *ref, unsigned flags,
                         struct cJSON **out);

/* Reads the points of FLOAT series @p series with steps in [@p step_from,
 * @p step_to] through @p cb without copying them out page by page, using
 * block summaries where the caller accepts them. Returns 0, a store error
 * (message on the handle), or the first negative code a callback
 * returned. */
int pmcp__store_scan(pmcp_store *store, pmcp_tenant t, int64_t series, int64_t step_from,
                     int64_t step_to, unsigned flags, const pmcp__scan_cb *cb);

/* Checks an id: 1-128 chars of [A-Za-z0-9._-] (sq_open.c). */
int pmcp__id_ok(const char *id);

/* Allocates a handle with no backend (errors can be set on it). */
int pmcp__store_alloc(pmcp_store **out, unsigned flags);
/* Clears the error message (start of each public call). */
void pmcp__store_clear_error(pmcp_store *s);

/* The SQLite backend: opens @p path into @p s (sets ops and ctx). */
int pmcp__store_sqlite_open(pmcp_store *s, const char *path, unsigned flags);
/* The PostgreSQL backend (built with libpq): connects to @p url, checks or
 * migrates the schema (pg_conn.c). */
int pmcp__store_pg_open(pmcp_store *s, const char *url, unsigned flags);

/* Copies text into out (reset first) with every password of url
 * (user:PASSWORD@, password=VALUE) replaced by "***"; url may be NULL.
 * Returns 0 or PMCP_ENOMEM. */
int pmcp__mask_passwords(pmcp_buf *out, const char *text, const char *url);

#endif
