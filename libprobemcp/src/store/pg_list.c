/* PostgreSQL backend: the kinds of pmcp_store_list() (list_kinds.h) in
 * this dialect; list.c runs them. */
#include "store/list.h"
#include "store/pg.h"

#define JO "json_build_object("
#define B(col) "(" col "=1)"
#define BB(expr) "(" expr ")"
#define BF(col) "(" col "=1)=:f"
#define JSON(x) x "::json"
#define JARG(x) x "::json"
#define NUM(x) x "::numeric"
#define ARR(x) "coalesce(json_agg(" x " ORDER BY " x "), '[]'::json)"
#define FALSE_ "false"
#define SQ_PG(a, b) b

static const list_kind kinds[] = {
#include "store/list_kinds.h"
};

int pmcp__pg_list(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_list_opts *o,
                  pmcp_buf *out)
{
  return pmcp__sql_list(s, PMCP__SQL(ctx), kinds, sizeof kinds / sizeof kinds[0], t, o, out);
}
