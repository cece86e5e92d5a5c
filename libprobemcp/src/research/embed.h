/* SPDX-License-Identifier: MIT */
/* Embeddings for the semantic channel (see embed.c). */
#ifndef PMCP_RESEARCH_EMBED_H
#define PMCP_RESEARCH_EMBED_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "research/research.h"

/* The model name used: @p model, or the default. */
const char *pmcp__embed_model(const char *model);

/* Embeds @p n texts with one request. On success *out holds n * *dim
 * doubles (free()). PMCP_EREMOTE / PMCP_EUNSUPPORTED with a reason in
 * @p err (no URL or key in it). */
int pmcp__embed(const char *url, const char *model, const char *key,
                const char *const *inputs, size_t n, double **out,
                size_t *dim, char *err, size_t errlen);

/* Cosine similarity of @p a (dim doubles) and the JSON array @p b; 0 when
 * the dimensions differ. */
double pmcp__cosine(const double *a, const cJSON *b, size_t dim);

#endif
