/* SQLite backend: the kinds of pmcp_store_list() (list_kinds.h) in this
 * dialect; list.c runs them. */
#include "store/list.h"
#include "store/sq.h"

#define JO "json_object("
#define B(col) "json(CASE " col " WHEN 1 THEN 'true' ELSE 'false' END)"
#define BB(expr) B("(" expr ")")
/* A condition the planner can match to an index (list.h). */
#define BF(col) col "=:f"
#define JSON(x) "json(" x ")"
#define JARG(x) x
#define NUM(x) x
#define ARR(x) "json_group_array(" x ")"
#define FALSE_ "0"
#define SQ_PG(a, b) a

static const list_kind kinds[] = {
#include "store/list_kinds.h"
};

int pmcp__sq_list(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_list_opts *o,
                  pmcp_buf *out)
{
  return pmcp__sql_list(s, PMCP__SQL(ctx), kinds, sizeof kinds / sizeof kinds[0], t, o, out);
}
