/* SPDX-License-Identifier: MIT */
/* PostgreSQL backend: the kinds of pmcp_store_list() (list_kinds.h) in
 * this dialect; list.c runs them. */
#include "store/dialect.h"
#include "store/list.h"
#include "store/pg.h"

#define JO PG_JO
#define B(col) PG_B(col)
#define BB(expr) PG_BB(expr)
#define BF(col) "(" col "=1)=:f"
#define JSON(x) PG_JSON(x)
#define JARG(x) PG_JARG(x)
#define NUM(x) PG_NUM(x)
#define ARR(x) PG_ARR(x)
#define FALSE_ PG_FALSE_
#define SQ_PG(a, b) b

static const list_kind kinds[] = {
#include "store/list_kinds.h"
};

int pmcp__pg_list(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_list_opts *o,
                  pmcp_buf *out)
{
  return pmcp__sql_list(s, PMCP__SQL(ctx), kinds, sizeof kinds / sizeof kinds[0], t, o, out);
}
