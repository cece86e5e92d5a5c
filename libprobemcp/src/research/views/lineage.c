/* SPDX-License-Identifier: MIT */
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

static void add_alias(cJSON *names, const char *ref)
{
  if (ref && *ref && !seen(names, ref))
    cJSON_AddItemToArray(names, cJSON_CreateString(ref));
}

/* The entity @p ref names: its canonical ref first (as edges are recorded,
 * store/catalog.c), then the other texts edges recorded before that may
 * carry (an artifact's shared name, a checkpoint's @best / @latest while it
 * is that one, a source's @version, a dataset's name). *dead: a deleted
 * run or what hangs off one. @p rec: the record when already read. An
 * entity that cannot be read keeps @p ref. */
static cJSON *entity_names(pmcp__vctx *v, const char *ref, const cJSON *rec, int *dead)
{
  cJSON *names = cJSON_CreateArray();
  cJSON *own = NULL;
  char err[200];
  *dead = 0;
  if (!rec && pmcp__rs_get(v->rs, ref, &own, err, sizeof err) == 0)
    rec = own;
  if (!names || !rec) {
    add_alias(names, ref);
    return names;
  }
  *dead = pmcp__rs_rec_deleted(v->rs, rec);
  const char *canon = pmcp__js(rec, "ref");
  const char *at = strchr(ref, '@');
  char buf[PMCP__REF_MAX + 64];
  const char *kind = pmcp__js(rec, "kind");
  if (!strcmp(kind, "dataset") && at && !strchr(canon, '@')) {
    snprintf(buf, sizeof buf, "%s%s", canon, at);
    add_alias(names, buf);
    snprintf(buf, sizeof buf, "dataset:%s%s", pmcp__js(rec, "name"), at);
    add_alias(names, buf);
  } else {
    add_alias(names, *canon ? canon : ref);
  }
  if (!strcmp(kind, "artifact") && pmcp__jb(rec, "shared")) {
    snprintf(buf, sizeof buf, "artifact:%s", pmcp__js(rec, "name"));
    add_alias(names, buf);
  } else if (!strcmp(kind, "source") && *pmcp__js(rec, "version")) {
    snprintf(buf, sizeof buf, "%s@%s", canon, pmcp__js(rec, "version"));
    add_alias(names, buf);
  } else if (!strcmp(kind, "checkpoint")) {
    const char *run = pmcp__js(rec, "run");
    double step = pmcp__jn(rec, "step", -1), last = -1;
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(rec, "versions"))
      if (pmcp__jn(o, "step", -1) > last)
        last = pmcp__jn(o, "step", -1);
    if (!strncmp(run, "run:", 4)) {
      if (pmcp__jb(rec, "best")) {
        snprintf(buf, sizeof buf, "checkpoint:%s@best", run + 4);
        add_alias(names, buf);
      }
      if (step >= 0 && step == last) {
        snprintf(buf, sizeof buf, "checkpoint:%s@latest", run + 4);
        add_alias(names, buf);
      }
    }
  }
  cJSON_Delete(own);
  return names;
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
      return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                             "view_options.direction is \"upstream\" or "
                             "\"downstream\"");
    down = strcmp(dir->valuestring, "downstream") == 0;
  }
  int depth = 1;
  if (dep) {
    if (!cJSON_IsNumber(dep) || dep->valuedouble < 1 || dep->valuedouble > 8 ||
        dep->valuedouble != (double)(int)dep->valuedouble)
      return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                             "view_options.depth is a whole number from 1 "
                             "to 8");
    depth = (int)dep->valuedouble;
  }
  if (stp && !cJSON_IsBool(stp))
    return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                           "view_options.steps is true or false");
  int steps = cJSON_IsTrue(stp);
  const char *filter = down ? "{\"direction\":\"downstream\"}"
                            : "{\"direction\":\"upstream\"}";
  cJSON *visited = cJSON_CreateArray();
  cJSON *frontier = cJSON_CreateArray();
  v->items = cJSON_CreateArray();
  if (!visited || !frontier || !v->items)
    goto nomem;
  {
    int dead0;
    cJSON *self = entity_names(v, v->ref_text, v->rec, &dead0);
    if (!self)
      goto nomem;
    cJSON_AddItemToArray(visited, cJSON_CreateString(self->child->valuestring));
    cJSON_AddItemToArray(frontier, self);
  }
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
          int d;
          cJSON_AddItemToArray(visited, cJSON_CreateString(r));
          cJSON_AddItemToArray(frontier, entity_names(v, r, NULL, &d));
        }
      }
    }
    cJSON_Delete(page);
  }
  int truncated = 0;
  cJSON *edges_seen = cJSON_CreateArray();
  for (int level = 1; level <= depth && cJSON_GetArraySize(frontier); level++) {
    cJSON *next = cJSON_CreateArray();
    const cJSON *node;
    cJSON_ArrayForEach(node, frontier)
    {
      /* every text the node's edges may carry; shown by its canonical ref */
      const char *canon = node->child ? node->child->valuestring : "";
      const cJSON *name;
      cJSON_ArrayForEach(name, node)
      {
        pmcp_list_opts lo = PMCP_LIST_OPTS_INIT;
        lo.kind = "lineage";
        lo.parent = name->valuestring;
        lo.filter = filter;
        lo.limit = 200;
        cJSON *page = NULL;
        char err[400];
        int rc = pmcp__rs_list(v->rs, &lo, &page, err, sizeof err);
        if (rc) {
          cJSON_Delete(next);
          cJSON_Delete(visited);
          cJSON_Delete(frontier);
          cJSON_Delete(edges_seen);
          if (rc == PMCP_ENOMEM)
            return rc;
          return pmcp__view_fail(v, rc == PMCP_ENOTFOUND ? PMCP_TERR_NOT_FOUND
                                                         : PMCP_TERR_STORE,
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
          if (strcmp(self, name->valuestring) != 0 || !*other)
            continue;
          /* a deleted run (or what hangs off one) is not walked to unless
           * asked; when asked, its edge says so */
          int dead;
          cJSON *on = entity_names(v, other, NULL, &dead);
          if (!on || !on->child || (dead && !v->include_deleted)) {
            cJSON_Delete(on);
            continue;
          }
          const char *oc = on->child->valuestring;
          const char *rel = pmcp__js(e, "relation");
          char key[3 * PMCP__REF_MAX + 200];
          snprintf(key, sizeof key, "%s\n%s\n%s", down ? canon : oc, down ? oc : canon, rel);
          if (seen(edges_seen, key)) {
            cJSON_Delete(on);
            continue;
          }
          cJSON_AddItemToArray(edges_seen, cJSON_CreateString(key));
          cJSON *edge = cJSON_CreateObject();
          cJSON_AddStringToObject(edge, "from", down ? canon : oc);
          cJSON_AddStringToObject(edge, "to", down ? oc : canon);
          if (*rel)
            cJSON_AddStringToObject(edge, "relation", rel);
          cJSON_AddNumberToObject(edge, "level", level);
          if (dead)
            cJSON_AddTrueToObject(edge, "deleted");
          const cJSON *st = cJSON_GetObjectItemCaseSensitive(e, "steps");
          if (steps && cJSON_IsArray(st))
            cJSON_AddItemToObject(edge, "steps", cJSON_Duplicate(st, 1));
          cJSON_AddItemToArray(v->items, edge);
          if (!seen(visited, oc)) {
            if (cJSON_GetArraySize(visited) >= MAX_NODES) {
              truncated = 1;
              cJSON_Delete(on);
              continue;
            }
            cJSON_AddItemToArray(visited, cJSON_CreateString(oc));
            cJSON_AddItemToArray(next, on);
            on = NULL;
          }
          cJSON_Delete(on);
        }
        cJSON_Delete(page);
      }
    }
    cJSON_Delete(frontier);
    frontier = next;
  }
  cJSON_Delete(edges_seen);
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
