/* SPDX-License-Identifier: MIT */
/* Internal plumbing shared by the research tools: the toolset context (the
 * read-only store, the tenant, a lock), store reads parsed to cJSON, error
 * results, provenance labels, and the list of parts that register
 * themselves. A later tool adds one line to the parts table in research.c
 * and one pmcp__research_add_<tool>() here. */
#ifndef PMCP_RESEARCH_RESEARCH_H
#define PMCP_RESEARCH_RESEARCH_H

#include <pthread.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "probemcp/research.h"
#include "probemcp/skills.h"
#include "probemcp/store.h"
#include "probemcp/tool.h"

#include "core/call_scope.h"

typedef struct pmcp__research {
  pmcp_store *store; /* read-only, borrowed */
  pmcp_tenant tenant;
  char *tenant_name;
  /* A pmcp_store is used by one thread at a time; tools may be called from
   * several (HTTP workers), so every store read holds this: the store
   * handle's own tool_lock (store_int.h), which every toolset registered
   * on the handle and every per-call view shares. */
  pthread_mutex_t *lock;
  /* The host's scope hook (research options v3, tracking v2) or NULL;
   * scope_0_1: it fills release 0.1's layout (research options v3,
   * tracking v2, toolsets v1; core/call_scope.h). */
  pmcp_scope_fn scope;
  void *scope_ud;
  int scope_0_1;
  char *embed_url, *embed_model, *embed_key;
  char *papers_url;      /* remote papers provider, or NULL: the local index */
  int papers_timeout_ms;
  /* The key cursors are signed with: the store's "cursor_key" secret
   * (created with the store, so restarts and replicas agree), else a
   * random key of this server. */
  unsigned char cursor_key[64];
  size_t cursor_key_len;
  /* Owners: each registered tool, resource and prompt holds one. The
   * engine drops them at registration failure or server free, both
   * single-threaded, so a plain counter suffices. */
  int refs;
} pmcp__research;

/* Registers a research tool whose handler gets, on each call, a view of
 * @p d->ud (a pmcp__research) scoped to the workspace the call acts in
 * (the host's scope hook and the call's optional `workspace` argument,
 * which this adds to the tool's common arguments when @p with_arg). */
int pmcp__rs_add_tool(pmcp_server *server, const pmcp_tool_def *d, int with_arg);

/* Fills @p t with the toolset tenant scoped as the call asks (see
 * pmcp__rs_add_tool) and @p sc (NULL, or a scope of
 * PMCP__CALL_SCOPE_INIT the caller disposes, on failure too) with the
 * host's answer. Returns 0, 1 after sending the error result, or
 * PMCP_ENOMEM. */
int pmcp__rs_scope(pmcp_call *call, pmcp__research *rs, pmcp_tenant *t, pmcp_call_scope *sc);

/* The `workspace` argument pmcp__rs_add_tool adds. */
extern const pmcp_arg_spec pmcp__rs_workspace_arg;

/* Each part registers its tools/resources/prompts; returns 0 or an error. */
int pmcp__research_add_browse(pmcp_server *server, pmcp__research *rs);
int pmcp__research_add_entity(pmcp_server *server, pmcp__research *rs);
int pmcp__research_add_search(pmcp_server *server, pmcp__research *rs);
int pmcp__research_add_resources(pmcp_server *server, pmcp__research *rs);
int pmcp__research_add_prompts(pmcp_server *server, pmcp__research *rs);
/* The skill "research-with-probe" (skills/research-with-probe, built in);
 * the tracking toolset adds its own file to it. */
#define PMCP__RESEARCH_SKILL "research-with-probe"
int pmcp__research_add_skill(pmcp_server *server, pmcp__research *rs);
extern const pmcp_skill_file pmcp__research_skill[];
extern const size_t pmcp__research_skill_n;
extern const pmcp_skill_file pmcp__tracking_skill[];
extern const size_t pmcp__tracking_skill_n;
int pmcp__research_add_metrics(pmcp_server *server, pmcp__research *rs);
int pmcp__research_add_query_sql(pmcp_server *server, pmcp__research *rs);
int pmcp__research_add_papers(pmcp_server *server, pmcp__research *rs);

/* A toolset context over a read-only @p store for @p tenant (NULL:
 * "default") holding one reference; shared by the research and tracking
 * toolsets. @return 0; PMCP_EINVAL (not read-only); PMCP_ENOTFOUND
 * (tenant); PMCP_ENOMEM; PMCP_EINTERNAL (no cursor key). */
int pmcp__research_new(pmcp_store *store, const char *tenant, pmcp__research **out);

/* Takes one reference for a registration; pmcp__research_release is the
 * ud_free of every def. */
void *pmcp__research_retain(pmcp__research *rs);
void pmcp__research_release(void *ud);

/* Store reads, under the lock, parsed. On failure *out is NULL and the
 * return is the store's code; @p err gets a message fit for the agent
 * (no paths, no SQL). */
int pmcp__rs_get(pmcp__research *rs, const char *ref, cJSON **out,
                 char *err, size_t errlen);
/* The same; @p card 1: only what a card shows may be read (the members of
 * the record it picks; PMCP__GET_BRIEF). */
int pmcp__rs_get_card(pmcp__research *rs, const char *ref, int card, cJSON **out, char *err,
                      size_t errlen);
int pmcp__rs_list(pmcp__research *rs, const pmcp_list_opts *o, cJSON **out,
                  char *err, size_t errlen);
/* pmcp__rs_list() as the store's JSON text in @p out (checked to be one
 * JSON value), for lists written with pmcp_json rather than a cJSON tree. */
int pmcp__rs_list_text(pmcp__research *rs, const pmcp_list_opts *o, pmcp_buf *out,
                       char *err, size_t errlen);
int pmcp__rs_search(pmcp__research *rs, const char *query, const char *kinds,
                    const char *after, size_t limit, cJSON **out, char *err,
                    size_t errlen);
int pmcp__rs_version(pmcp__research *rs, uint64_t *out);

/* Deleted things (a deleted run or trashed experiment, and what hangs off
 * one: its notes, artifacts, checkpoints, trials) are hidden by every tool
 * unless the call says include_deleted. 1 when record @p rec is one of
 * them, else 0 (an owner that cannot be read counts as alive). */
int pmcp__rs_rec_deleted(pmcp__research *rs, const cJSON *rec);
/* The same for the entity @p ref names (0 when it cannot be read). */
int pmcp__rs_ref_deleted(pmcp__research *rs, const char *ref);
/* Drops the items marked "deleted":true from every array of objects at the
 * top of @p rec (a group's runs, ...); keeps them, marked, when @p keep. */
void pmcp__rs_prune_deleted(cJSON *rec, int keep);
/* How query_sql's tables represent deleted rows (both backends' listing). */
#define PMCP__SQL_DELETED_NOTE                                                 \
  "runs and experiments hold live rows only, and so do the rows hanging off " \
  "them (series, run_events, checkpoints, trials, group_runs, notes, "        \
  "artifacts); deleted runs and trashed experiments are in deleted_runs and " \
  "deleted_experiments (same columns, deleted=1). attributes, tags, "         \
  "metric_blocks and metric_points keep every row: join runs to leave "       \
  "deleted ones out."
/* The call's include_deleted argument (false when absent). */
int pmcp__rs_include_deleted(pmcp_call *call);

/* {"KEY": "VAL"} as text to free(), for a store listing's filter; NULL
 * when out of memory. */
char *pmcp__rs_filter(const char *key, const char *val);

/* Cursors under the toolset's key (cursor.h semantics: bound to the tool,
 * the canonical arguments without token_budget/cursor, and a version). */
int pmcp__rs_cursor_encode(pmcp__research *rs, const char *tool,
                           const char *args_json, uint64_t version,
                           const char *state, pmcp_buf *out);
int pmcp__rs_cursor_decode(pmcp__research *rs, const char *tool,
                           const char *args_json, uint64_t version,
                           const char *cursor, size_t len, pmcp_buf *state,
                           int *status);

/* An isError result: {"error": CODE, "message": MSG} in one text item and
 * as structuredContent. Returns 0 (a tool error is a normal result). */
int pmcp__rs_fail(pmcp_call *call, pmcp_tool_error code, const char *fmt, ...)
    PMCP_PRINTF(3, 4);
/* A cursor that cannot continue, in the one shape every tool (and the
 * engine's pages) answers: {"error":"invalid_cursor","reason":REASON,
 * "restart":true,"message":MSG}. Returns 0. */
/* The member "error":"CODE" of tool error @p code, for pmcp_page_fail(). */
const char *pmcp__rs_error_member(pmcp_tool_error code);
int pmcp__rs_restart(pmcp_call *call, const char *reason, const char *fmt, ...)
    PMCP_PRINTF(3, 4);


/* Provenance labels for text people or outside sources wrote. */
#define PMCP__PROV_PERSON "person"      /* written by a lab member */
#define PMCP__PROV_AGENT "agent"        /* written by an agent session */
#define PMCP__PROV_IMPORT "import"      /* copied from an imported tool */
#define PMCP__PROV_OUTSIDE "outside"    /* an external source (Hub, URL) */
#define PMCP__PROV_OPEN_WEB "open-web"  /* a web page or paper */
#define PMCP__PROV_RECORDED "recorded"  /* measured by the tracker itself */

/* The provenance of a record's human/outside text, from its "via",
 * "author", "kind" or "provider" fields. */
const char *pmcp__rs_provenance(const cJSON *rec);
/* The same from the fields themselves ("" when absent); @p import_attr:
 * the record's attributes have "import". */
const char *pmcp__rs_provenance_of(const char *via, const char *kind, const char *ref,
                                   const char *provider, int import_attr);

/* Small cJSON readers that accept absent/mistyped fields. */
const char *pmcp__js(const cJSON *o, const char *key);   /* "" if absent */
double pmcp__jn(const cJSON *o, const char *key, double dflt);
int pmcp__jb(const cJSON *o, const char *key);           /* 0 if absent */

/* Whether @p key names a time in milliseconds (what the picks write as
 * ISO 8601). */
int pmcp__rs_time_key(const char *key);

/* Writes @p ms as "2024-05-01T12:00:00Z" into @p out (>= 21 bytes). */
void pmcp__rs_iso(int64_t ms, char *out, size_t size);

/* The ref of a store record: its "ref", else kind:id. "" if neither. */
const char *pmcp__rs_ref(const cJSON *rec, char *buf, size_t size);

#endif
