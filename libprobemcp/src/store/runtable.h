/* SPDX-License-Identifier: MIT */
/* The run table: one project's live runs read in a few set queries (not one
 * listing per run) with just the attribute values and series summaries a
 * run filter, sort or summary column needs, for the tracking toolset's
 * list_runs. The backend narrows the runs in SQL with every filter
 * condition it can state as a necessary condition (a run SQL drops can
 * never match); the caller evaluates the whole filter again on what comes
 * back, so conditions SQL cannot state (RE2 matches, label choices, avg)
 * and any looseness of the SQL cost time, never correctness.
 *
 * Internal (no public ABI): the built-in backends (SQLite, PostgreSQL)
 * have it, written once over sql.h (runtable.c, runfilter.c); for custom
 * backends pmcp__store_run_table() returns PMCP_EUNSUPPORTED and the
 * caller reads run by run through the public store API. */
#ifndef PMCP_STORE_RUNTABLE_H
#define PMCP_STORE_RUNTABLE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "probemcp/store.h"

typedef struct pmcp__rt_query {
  const char *project;         /* slug */
  /* The filter (a validated array, scales in the store's names: step,
   * env_step, episode), or NULL. */
  const cJSON *filter;
  const char *const *paths;    /* attribute paths whose values to load */
  size_t n_paths;
  const char *const *keys;     /* series keys whose summaries to load */
  size_t n_keys;
  int tags;                    /* load each run's tags */
  /* When set: just these runs (store ids, at most 100), in this order,
   * and no filter (a page pmcp__store_run_page() chose). */
  const int64_t *ids;
  size_t n_ids;
  /* When max_rows > 0 (and no ids): at most that many runs, the next
   * after run (after_created, after_id) in the newest-first order when
   * after_id > 0; a caller walks the table in chunks so that it never
   * holds every run at once. */
  size_t max_rows;
  int64_t after_created, after_id;
} pmcp__rt_query;

typedef struct pmcp__rt_run {
  int64_t id, created, started, ended; /* started/ended: 0 when unset */
  char *slug, *name, *status;
  char *experiment;            /* slug, or NULL */
  cJSON *attrs;                /* path -> value, the loaded paths it has */
  cJSON *types;                /* path -> "datetime" for those paths, or NULL */
  cJSON *tags;                 /* array of strings, or NULL when not loaded */
  /* Series of the loaded keys as the store's series listing gives them
   * (key, labels, scale, kind, count, first, last, min, max, mean), in
   * its order (key, labels, id); NULL when it has none. */
  cJSON *series;
} pmcp__rt_run;

typedef struct pmcp__rt_result {
  pmcp__rt_run *runs;          /* newest first (created, id descending) */
  size_t n;
  size_t pushed;               /* filter conditions SQL narrowed by */
} pmcp__rt_result;

/* @return 0; PMCP_EUNSUPPORTED (no run table on this backend);
 *         PMCP_ENOTFOUND (project); PMCP_ENOMEM; store errors. */
int pmcp__store_run_table(pmcp_store *s, pmcp_tenant t, const pmcp__rt_query *q,
                          pmcp__rt_result *out);
void pmcp__rt_result_dispose(pmcp__rt_result *r);
/* Every stored attribute of the runs named by @p slugs (at most 100), in
 * one query: out[i] gets an object path -> value (as the attribute listing
 * gives it; the caller deletes each). @return 0; PMCP_EUNSUPPORTED;
 * PMCP_EINVAL (too many); PMCP_ENOMEM; store errors. */
int pmcp__store_run_attrs(pmcp_store *s, pmcp_tenant t, const char *const *slugs, size_t n,
                          cJSON **out);
/* A sort the exact path may take: a series summary (key, function, scale
 * in the store's names, labels) or an attribute path. */
typedef struct pmcp__rt_sort {
  const char *attr;
  const char *series, *function, *scale;
  const cJSON *labels;
  int desc;
} pmcp__rt_sort;

typedef struct pmcp__rt_page_query {
  const char *project;         /* slug */
  const cJSON *filter;         /* as in pmcp__rt_query */
  const pmcp__rt_sort *sort;   /* NULL: newest first */
  size_t offset, limit;
} pmcp__rt_page_query;

typedef struct pmcp__rt_page {
  int64_t *ids;                /* the page's runs (store ids), in order */
  size_t n;
  size_t total;                /* runs the filter matches */
  int estimated;               /* total is a lower bound (counting stopped) */
} pmcp__rt_page;

/* list_runs answered whole in SQL: the number of matching runs (or, with
 * estimated set, a lower bound past the page's end) and the
 * ids of page [offset, offset + limit) in the evaluator's order (ties and
 * the unsorted order: newest first; runs without a sort value last), with
 * exactly the evaluator's semantics. PMCP_EUNSUPPORTED when the backend
 * has no such path or a condition or the sort is one SQL cannot state
 * exactly (the caller then checks pmcp__store_run_table()'s candidates).
 * @return 0; PMCP_EUNSUPPORTED; PMCP_ENOTFOUND (project); PMCP_ENOMEM;
 *         store errors. */
int pmcp__store_run_page(pmcp_store *s, pmcp_tenant t, const pmcp__rt_page_query *q,
                         pmcp__rt_page *out);
void pmcp__rt_page_dispose(pmcp__rt_page *p);

/* The scales project @p project (slug) logs series @p key on, as bits:
 * 1 step, 2 env_step, 4 episode (live runs only). @return 0;
 * PMCP_EUNSUPPORTED (a backend without SQL hooks: custom ones); store
 * errors. */
int pmcp__store_key_scales(pmcp_store *s, pmcp_tenant t, const char *project,
                           const char *key, unsigned *mask);
/* Whether project @p project logs series @p key on @p scale (store name)
 * only split by labels in some live run (no unlabelled series of it
 * there): @p out gets up to four of those label sets as JSON texts
 * ("{\"rank\":\"0\"}, ..."), or "" when every run that logs the key has
 * an unlabelled series of it. @return 0; PMCP_EUNSUPPORTED (no SQL
 * hooks); store errors. */
int pmcp__store_key_split(pmcp_store *s, pmcp_tenant t, const char *project,
                          const char *key, const char *scale, char *out, size_t outlen);

/* The workspace (slug, into @p ws) of project @p slug as the call sees
 * it: one indexed lookup, where the project's record would also list its
 * experiments and notes. @return 0; PMCP_ENOTFOUND; PMCP_EUNSUPPORTED
 * (custom backends); store errors. */
int pmcp__store_project_ws(pmcp_store *s, pmcp_tenant t, const char *slug, char *ws,
                           size_t size);

/* Frees one run's contents (its pointers are then NULL). */
void pmcp__rt_run_dispose(pmcp__rt_run *r);

#endif
