/* SPDX-License-Identifier: MIT */
/* SQLite backend: the kinds of pmcp_store_list() (list_kinds.h) in this
 * dialect; list.c runs them. */
#include "store/dialect.h"
#include "store/list.h"
#include "store/sq.h"

#define JO SQ_JO
#define B(col) SQ_B(col)
#define BB(expr) SQ_BB(expr)
/* A condition the planner can match to an index (list.h). */
#define BF(col) col "=:f"
#define JSON(x) SQ_JSON(x)
#define JARG(x) SQ_JARG(x)
#define NUM(x) SQ_NUM(x)
#define ARR(x) SQ_ARR(x)
#define FALSE_ SQ_FALSE_
#define SQ_PG(a, b) a

static const list_kind kinds[] = {
#include "store/list_kinds.h"
};

int pmcp__sq_list(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_list_opts *o,
                  pmcp_buf *out)
{
  return pmcp__sql_list(s, PMCP__SQL(ctx), kinds, sizeof kinds / sizeof kinds[0], t, o, out);
}
