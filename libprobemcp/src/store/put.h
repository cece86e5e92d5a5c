/* SPDX-License-Identifier: MIT */
/* Internal: what the pmcp_store_put() record kinds share (put.c): the
 * call's context and JSON field readers that name a mistyped field. */
#ifndef PMCP_STORE_PUT_H
#define PMCP_STORE_PUT_H

#include <cjson/cJSON.h>

#include "store/sql.h"

typedef struct put_ctx {
  pmcp_store *s;
  pmcp__sql *q;
  pmcp_tenant t;
  const char *kind;
  cJSON *o;
  pmcp_buf ref;
} put_ctx;

/* Field readers: absent is NULL / default; present with the wrong type is
 * PMCP_EINVAL naming the field. */
int pmcp__put_fstr(put_ctx *c, const char *name, int required, const char **out);
int pmcp__put_fnum(put_ctx *c, const char *name, int *present, double *out);
int pmcp__put_fint(put_ctx *c, const char *name, int required, int *present, int64_t *out);
int pmcp__put_fbool(put_ctx *c, const char *name, int dflt, int *out);
/* A JSON object or array field printed compactly (cJSON_free it). */
int pmcp__put_fjson(put_ctx *c, const char *name, int want_array, char **out);
/* Row id of slug in table, 0 when absent. */
int64_t pmcp__put_by_slug(put_ctx *c, const char *table, const char *slug);
/* The record's slug: its "id", else made from name; *existing its row. */
int pmcp__put_pick_slug(put_ctx *c, const char *table, const char *id, const char *name,
                        pmcp_buf *out, int64_t *existing);
int pmcp__put_set_ref(put_ctx *c, const char *kind, const char *slug);
/* Checks that a ref (of any kind, versioned forms included) exists. */
int pmcp__put_ref_exists(put_ctx *c, const char *ref);
/* The canonical ref of the entity @p ref names into @p out: kind:slug of
 * its row (an artifact's shared name, a dataset's name become its slug), a
 * checkpoint's @best / @latest the @stepN it is now, a dataset's @V kept
 * (it must be one of its versions), a source's @V checked and dropped. PMCP_ENOTFOUND when
 * there is no such entity; refs of other kinds are kept as written. */
int pmcp__put_canon_ref(put_ctx *c, const char *ref, pmcp_buf *out);
int pmcp__put_index_doc(put_ctx *c, const char *kind, const char *title, const char *body);

/* The kinds: catalog.c and records.c. */
int pmcp__put_dataset(put_ctx *c);
int pmcp__put_dataset_version(put_ctx *c);
int pmcp__put_checkpoint(put_ctx *c);
int pmcp__put_source(put_ctx *c);
int pmcp__put_lineage(put_ctx *c);
int pmcp__put_run_use(put_ctx *c);
int pmcp__put_group(put_ctx *c);
int pmcp__put_trial(put_ctx *c);
int pmcp__put_session(put_ctx *c);
int pmcp__put_file(put_ctx *c);
int pmcp__put_paper_link(put_ctx *c);
int pmcp__put_experiment_version(put_ctx *c);
int pmcp__put_embedding(put_ctx *c);
/* env_attr.c */
int pmcp__put_env_attribute(put_ctx *c);

#endif
