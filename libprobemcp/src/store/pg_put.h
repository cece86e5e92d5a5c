/* Internal: what the pmcp_store_put() record kinds share (pg_put.c): the
 * call's context and JSON field readers that name a mistyped field. */
#ifndef PMCP_STORE_SQ_PUT_H
#define PMCP_STORE_SQ_PUT_H

#include <cjson/cJSON.h>

#include "store/pg.h"

typedef struct put_ctx {
  pmcp_store *s;
  pmcp__pg *q;
  pmcp_tenant t;
  const char *kind;
  cJSON *o;
  pmcp_buf ref;
} put_ctx;

/* Field readers: absent is NULL / default; present with the wrong type is
 * PMCP_EINVAL naming the field. */
int pmcp__pgput_fstr(put_ctx *c, const char *name, int required, const char **out);
int pmcp__pgput_fnum(put_ctx *c, const char *name, int *present, double *out);
int pmcp__pgput_fint(put_ctx *c, const char *name, int required, int *present, int64_t *out);
int pmcp__pgput_fbool(put_ctx *c, const char *name, int dflt, int *out);
/* A JSON object or array field printed compactly (cJSON_free it). */
int pmcp__pgput_fjson(put_ctx *c, const char *name, int want_array, char **out);
/* Steps a statement once and resets it. */
int pmcp__pgput_run1(put_ctx *c, pmcp__pg_stmt *st, const char *what);
/* Row id of slug in table, 0 when absent. */
int64_t pmcp__pgput_by_slug(put_ctx *c, const char *table, const char *slug);
/* The record's slug: its "id", else made from name; *existing its row. */
int pmcp__pgput_pick_slug(put_ctx *c, const char *table, const char *id, const char *name,
                        pmcp_buf *out, int64_t *existing);
int pmcp__pgput_set_ref(put_ctx *c, const char *kind, const char *slug);
/* Checks that a ref (of any kind, versioned forms included) exists. */
int pmcp__pgput_ref_exists(put_ctx *c, const char *ref);
int pmcp__pgput_index_doc(put_ctx *c, const char *kind, const char *title, const char *body);

static inline void pmcp__pgput_bind_opt(pmcp__pg_stmt *st, int i, const char *v)
{
  if (v)
    pmcp__pg_bind_text(st, i, v);
  else
    pmcp__pg_bind_null(st, i);
}

/* The kinds: pg_catalog.c and pg_records.c. */
int pmcp__pgput_dataset(put_ctx *c);
int pmcp__pgput_dataset_version(put_ctx *c);
int pmcp__pgput_checkpoint(put_ctx *c);
int pmcp__pgput_source(put_ctx *c);
int pmcp__pgput_lineage(put_ctx *c);
int pmcp__pgput_run_use(put_ctx *c);
int pmcp__pgput_group(put_ctx *c);
int pmcp__pgput_trial(put_ctx *c);
int pmcp__pgput_session(put_ctx *c);
int pmcp__pgput_file(put_ctx *c);
int pmcp__pgput_paper_link(put_ctx *c);
int pmcp__pgput_experiment_version(put_ctx *c);
int pmcp__pgput_embedding(put_ctx *c);
/* pg_env.c */
int pmcp__pgput_env_attribute(put_ctx *c);

#endif
