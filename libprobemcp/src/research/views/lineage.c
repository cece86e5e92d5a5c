/* The lineage view: a breadth-first provenance walk over lineage edges,
 * upstream (what it came from, the default) or downstream (what used it),
 * 1-8 levels, reaching sources; steps=true adds each edge's method steps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/views/views.h"

#define MAX_NODES 400

static int seen(cJSON *set, const char *ref)
{
  const cJSON *s;
  cJSON_ArrayForEach(s, set)
  {
    if (strcmp(s->valuestring, ref) == 0)
      return 1;
  }
  return 0;
}

int pmcp__view_lineage(pmcp__vctx *v)
{
  const cJSON *o = v->opts;
  const cJSON *dir = o ? cJSON_GetObjectItemCaseSensitive(o, "direction") : NULL;
  const cJSON *dep = o ? cJSON_GetObjectItemCaseSensitive(o, "depth") : NULL;
  const cJSON *stp = o ? cJSON_GetObjectItemCaseSensitive(o, "steps") : NULL;
  int down = 0;
  if (dir) {
    if (!cJSON_IsString(dir) || (strcmp(dir->valuestring, "upstream") &&
                                 strcmp(dir->valuestring, "downstream")))
      return pmcp__view_fail(v, "invalid_argument",
                             "view_options.direction is \"upstream\" or "
                             "\"downstream\"");
    down = strcmp(dir->valuestring, "downstream") == 0;
  }
  int depth = 1;
  if (dep) {
    if (!cJSON_IsNumber(dep) || dep->valuedouble < 1 || dep->valuedouble > 8 ||
        dep->valuedouble != (double)(int)dep->valuedouble)
      return pmcp__view_fail(v, "invalid_argument",
                             "view_options.depth is a whole number from 1 "
                             "to 8");
    depth = (int)dep->valuedouble;
  }
  if (stp && !cJSON_IsBool(stp))
    return pmcp__view_fail(v, "invalid_argument",
                           "view_options.steps is true or false");
  int steps = cJSON_IsTrue(stp);
  const char *filter = down ? "{\"direction\":\"downstream\"}"
                            : "{\"direction\":\"upstream\"}";
  cJSON *visited = cJSON_CreateArray();
  cJSON *frontier = cJSON_CreateArray();
  v->items = cJSON_CreateArray();
  if (!visited || !frontier || !v->items)
    goto nomem;
  cJSON_AddItemToArray(visited, cJSON_CreateString(v->ref_text));
  cJSON_AddItemToArray(frontier, cJSON_CreateString(v->ref_text));
  if (v->ref.kind == PMCP__REF_DATASET && !v->ref.version[0]) {
    /* Edges name dataset versions: a dataset's walk starts at each. */
    pmcp_list_opts lo = PMCP_LIST_OPTS_INIT;
    lo.kind = "dataset-version";
    lo.parent = v->ref_text;
    lo.limit = 200;
    cJSON *page = NULL;
    char err[300];
    if (pmcp__rs_list(v->rs, &lo, &page, err, sizeof err) == 0) {
      const cJSON *it;
      cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(page, "items"))
      {
        const char *r = pmcp__js(it, "ref");
        if (*r && !seen(visited, r)) {
          cJSON_AddItemToArray(visited, cJSON_CreateString(r));
          cJSON_AddItemToArray(frontier, cJSON_CreateString(r));
        }
      }
    }
    cJSON_Delete(page);
  }
  int truncated = 0;
  for (int level = 1; level <= depth && cJSON_GetArraySize(frontier); level++) {
    cJSON *next = cJSON_CreateArray();
    const cJSON *node;
    cJSON_ArrayForEach(node, frontier)
    {
      pmcp_list_opts lo = PMCP_LIST_OPTS_INIT;
      lo.kind = "lineage";
      lo.parent = node->valuestring;
      lo.filter = filter;
      lo.limit = 200;
      cJSON *page = NULL;
      char err[400];
      int rc = pmcp__rs_list(v->rs, &lo, &page, err, sizeof err);
      if (rc) {
        cJSON_Delete(next);
        cJSON_Delete(visited);
        cJSON_Delete(frontier);
        if (rc == PMCP_ENOMEM)
          return rc;
        return pmcp__view_fail(v, rc == PMCP_ENOTFOUND ? "not_found"
                                                       : "store_error",
                               "%s", err);
      }
      if (*pmcp__js(page, "next"))
        truncated = 1;
      const cJSON *e;
      cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(page, "items"))
      {
        const char *from = pmcp__js(e, "from"), *to = pmcp__js(e, "to");
        /* Keep only edges pointing the way we walk from this node. */
        const char *other = down ? to : from;
        const char *self = down ? from : to;
        if (strcmp(self, node->valuestring) != 0 || !*other)
          continue;
        /* a deleted run (or what hangs off one) is not walked to unless
         * asked; when asked, its edge says so */
        int dead = pmcp__rs_ref_deleted(v->rs, other);
        if (dead && !v->include_deleted)
          continue;
        cJSON *edge = cJSON_CreateObject();
        cJSON_AddStringToObject(edge, "from", from);
        cJSON_AddStringToObject(edge, "to", to);
        if (*pmcp__js(e, "relation"))
          cJSON_AddStringToObject(edge, "relation", pmcp__js(e, "relation"));
        cJSON_AddNumberToObject(edge, "level", level);
        if (dead)
          cJSON_AddTrueToObject(edge, "deleted");
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(e, "steps");
        if (steps && cJSON_IsArray(st))
          cJSON_AddItemToObject(edge, "steps", cJSON_Duplicate(st, 1));
        cJSON_AddItemToArray(v->items, edge);
        if (!seen(visited, other)) {
          if (cJSON_GetArraySize(visited) >= MAX_NODES) {
            truncated = 1;
            continue;
          }
          cJSON_AddItemToArray(visited, cJSON_CreateString(other));
          cJSON_AddItemToArray(next, cJSON_CreateString(other));
        }
      }
      cJSON_Delete(page);
    }
    cJSON_Delete(frontier);
    frontier = next;
  }
  cJSON_Delete(visited);
  cJSON_Delete(frontier);
  v->list_name = "edges";
  /* Direction and depth are echoed through the envelope by entity.c via
   * the obj fields below. */
  v->obj = cJSON_CreateObject();
  cJSON_AddStringToObject(v->obj, "direction", down ? "downstream" : "upstream");
  cJSON_AddNumberToObject(v->obj, "depth", depth);
  if (truncated)
    cJSON_AddStringToObject(v->obj, "walk",
                            "stopped early: more than 400 entities or 200 "
                            "edges on one entity; walk again from a listed "
                            "ref");
  return 0;
nomem:
  cJSON_Delete(visited);
  cJSON_Delete(frontier);
  return PMCP_ENOMEM;
}
