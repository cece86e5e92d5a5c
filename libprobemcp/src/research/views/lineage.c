/* SPDX-License-Identifier: MIT */
/* The lineage view: a breadth-first provenance walk over lineage edges,
 * upstream (what it came from, the default) or downstream (what used it),
 * 1-8 levels, reaching sources; steps=true adds each edge's method steps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/views/views.h"

#define MAX_NODES 400

/* A set of strings, in the order added (a walk's working sets). */
typedef struct strs {
  char **v;
  size_t n, cap;
} strs;

static int seen(const strs *set, const char *ref)
{
  for (size_t i = 0; i < set->n; i++) {
    if (strcmp(set->v[i], ref) == 0)
      return 1;
  }
  return 0;
}

static int strs_add(strs *s, const char *x)
{
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 8;
    char **nv = realloc(s->v, cap * sizeof *nv);
    if (!nv)
      return PMCP_ENOMEM;
    s->v = nv;
    s->cap = cap;
  }
  if (!(s->v[s->n] = strdup(x)))
    return PMCP_ENOMEM;
  s->n++;
  return 0;
}

static void strs_free(strs *s)
{
  for (size_t i = 0; i < s->n; i++)
    free(s->v[i]);
  free(s->v);
  *s = (strs){NULL, 0, 0};
}

/* The nodes of one level: each the names of one entity. */
typedef struct nodes {
  strs *v;
  size_t n, cap;
} nodes;

/* Moves @p x into @p l (@p x is then empty). */
static int nodes_add(nodes *l, strs *x)
{
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 8;
    strs *nv = realloc(l->v, cap * sizeof *nv);
    if (!nv)
      return PMCP_ENOMEM;
    l->v = nv;
    l->cap = cap;
  }
  l->v[l->n++] = *x;
  *x = (strs){NULL, 0, 0};
  return 0;
}

static void nodes_free(nodes *l)
{
  for (size_t i = 0; i < l->n; i++)
    strs_free(&l->v[i]);
  free(l->v);
  *l = (nodes){NULL, 0, 0};
}

static int add_alias(strs *names, const char *ref)
{
  if (ref && *ref && !seen(names, ref))
    return strs_add(names, ref);
  return 0;
}

/* The entity @p ref names, into @p names: its canonical ref first (as
 * edges are recorded, store/catalog.c), then the other texts edges
 * recorded before that may carry (an artifact's shared name, a
 * checkpoint's @best / @latest while it is that one, a source's @version,
 * a dataset's name). *dead: a deleted run or what hangs off one. @p rec:
 * the record when already read. An entity that cannot be read keeps
 * @p ref. */
static int entity_names(pmcp__vctx *v, const char *ref, const cJSON *rec, int *dead, strs *names)
{
  cJSON *own = NULL;
  char err[200];
  *dead = 0;
  if (!rec && pmcp__rs_get(v->rs, ref, &own, err, sizeof err) == 0)
    rec = own;
  if (!rec)
    return add_alias(names, ref);
  int rc = 0;
  *dead = pmcp__rs_rec_deleted(v->rs, rec);
  const char *canon = pmcp__js(rec, "ref");
  const char *at = strchr(ref, '@');
  char buf[PMCP__REF_MAX + 64];
  const char *kind = pmcp__js(rec, "kind");
  if (!strcmp(kind, "dataset") && at && !strchr(canon, '@')) {
    snprintf(buf, sizeof buf, "%s%s", canon, at);
    rc |= add_alias(names, buf);
    snprintf(buf, sizeof buf, "dataset:%s%s", pmcp__js(rec, "name"), at);
    rc |= add_alias(names, buf);
  } else {
    rc |= add_alias(names, *canon ? canon : ref);
  }
  if (!strcmp(kind, "artifact") && pmcp__jb(rec, "shared")) {
    snprintf(buf, sizeof buf, "artifact:%s", pmcp__js(rec, "name"));
    rc |= add_alias(names, buf);
  } else if (!strcmp(kind, "source") && *pmcp__js(rec, "version")) {
    snprintf(buf, sizeof buf, "%s@%s", canon, pmcp__js(rec, "version"));
    rc |= add_alias(names, buf);
  } else if (!strcmp(kind, "checkpoint")) {
    const char *run = pmcp__js(rec, "run");
    double step = pmcp__jn(rec, "step", -1), last = -1;
    const cJSON *o;
    cJSON_ArrayForEach(
        o, cJSON_GetObjectItemCaseSensitive(rec, "versions")) if (pmcp__jn(o, "step", -1) > last)
        last = pmcp__jn(o, "step", -1);
    if (!strncmp(run, "run:", 4)) {
      if (pmcp__jb(rec, "best")) {
        snprintf(buf, sizeof buf, "checkpoint:%s@best", run + 4);
        rc |= add_alias(names, buf);
      }
      if (step >= 0 && step == last) {
        snprintf(buf, sizeof buf, "checkpoint:%s@latest", run + 4);
        rc |= add_alias(names, buf);
      }
    }
  }
  cJSON_Delete(own);
  return rc ? PMCP_ENOMEM : 0;
}

/* The walk's view_options: direction, depth (1-8), steps. Returns 0, or
 * -1 after sending the error. */
static int lineage_opts(pmcp__vctx *v, int *down, int *depth, int *steps)
{
  const cJSON *o = v->opts;
  const cJSON *dir = o ? cJSON_GetObjectItemCaseSensitive(o, "direction") : NULL;
  const cJSON *dep = o ? cJSON_GetObjectItemCaseSensitive(o, "depth") : NULL;
  const cJSON *stp = o ? cJSON_GetObjectItemCaseSensitive(o, "steps") : NULL;
  *down = 0;
  if (dir) {
    if (!cJSON_IsString(dir) ||
        (strcmp(dir->valuestring, "upstream") && strcmp(dir->valuestring, "downstream"))) {
      pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                      "view_options.direction is \"upstream\" or "
                      "\"downstream\"");
      return -1;
    }
    *down = strcmp(dir->valuestring, "downstream") == 0;
  }
  *depth = 1;
  if (dep) {
    if (!cJSON_IsNumber(dep) || dep->valuedouble < 1 || dep->valuedouble > 8 ||
        dep->valuedouble != (double)(int)dep->valuedouble) {
      pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                      "view_options.depth is a whole number from 1 "
                      "to 8");
      return -1;
    }
    *depth = (int)dep->valuedouble;
  }
  if (stp && !cJSON_IsBool(stp)) {
    pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT, "view_options.steps is true or false");
    return -1;
  }
  *steps = cJSON_IsTrue(stp);
  return 0;
}

/* One edge of the answer, from the walk's point of view. */
static void put_edge(pmcp_json *j, const char *from, const char *to, const char *rel, int level,
                     int dead, const cJSON *steps)
{
  pmcp_json_object_begin(j);
  pmcp_json_key(j, "from");
  pmcp_json_string(j, from);
  pmcp_json_key(j, "to");
  pmcp_json_string(j, to);
  if (*rel) {
    pmcp_json_key(j, "relation");
    pmcp_json_string(j, rel);
  }
  pmcp_json_key(j, "level");
  pmcp_json_int(j, level);
  if (dead) {
    pmcp_json_key(j, "deleted");
    pmcp_json_bool(j, 1);
  }
  if (steps) {
    pmcp_json_key(j, "steps");
    pmcp__vw_value(j, steps, 0);
  }
  pmcp_json_object_end(j);
}

int pmcp__view_lineage(pmcp__vctx *v)
{
  int down, depth, steps;
  if (lineage_opts(v, &down, &depth, &steps))
    return 0;
  const char *filter = down ? "{\"direction\":\"downstream\"}" : "{\"direction\":\"upstream\"}";
  strs visited = {0}, edges_seen = {0}, self = {0}, on = {0};
  nodes frontier = {0}, next = {0};
  pmcp_json *j = NULL;
  int rc = pmcp_json_new(&j, 0);
  if (rc)
    goto done;
  pmcp_json_array_begin(j);
  {
    int dead0;
    rc = entity_names(v, v->ref_text, v->rec, &dead0, &self);
    if (!rc && !self.n)
      rc = PMCP_ENOMEM;
    if (!rc)
      rc = strs_add(&visited, self.v[0]);
    if (!rc)
      rc = nodes_add(&frontier, &self);
    if (rc)
      goto done;
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
        if (!rc && *r && !seen(&visited, r)) {
          int d;
          rc = strs_add(&visited, r);
          if (!rc)
            rc = entity_names(v, r, NULL, &d, &on);
          if (!rc)
            rc = nodes_add(&frontier, &on);
        }
      }
    }
    cJSON_Delete(page);
    if (rc)
      goto done;
  }
  int truncated = 0;
  size_t n_edges = 0;
  for (int level = 1; level <= depth && frontier.n; level++) {
    for (size_t ni = 0; ni < frontier.n; ni++) {
      const strs *node = &frontier.v[ni];
      /* every text the node's edges may carry; shown by its canonical ref */
      const char *canon = node->n ? node->v[0] : "";
      for (size_t k = 0; k < node->n; k++) {
        const char *name = node->v[k];
        pmcp_list_opts lo = PMCP_LIST_OPTS_INIT;
        lo.kind = "lineage";
        lo.parent = name;
        lo.filter = filter;
        lo.limit = 200;
        cJSON *page = NULL;
        char err[400];
        rc = pmcp__rs_list(v->rs, &lo, &page, err, sizeof err);
        if (rc) {
          if (rc != PMCP_ENOMEM)
            rc = pmcp__view_fail(v, rc == PMCP_ENOTFOUND ? PMCP_TERR_NOT_FOUND : PMCP_TERR_STORE,
                                 "%s", err);
          goto done;
        }
        if (*pmcp__js(page, "next"))
          truncated = 1;
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(page, "items"))
        {
          const char *from = pmcp__js(e, "from"), *to = pmcp__js(e, "to");
          /* Keep only edges pointing the way we walk from this node. */
          const char *other = down ? to : from;
          const char *me = down ? from : to;
          if (rc || strcmp(me, name) != 0 || !*other)
            continue;
          /* a deleted run (or what hangs off one) is not walked to unless
           * asked; when asked, its edge says so */
          int dead;
          strs_free(&on);
          rc = entity_names(v, other, NULL, &dead, &on);
          if (rc || !on.n || (dead && !v->include_deleted))
            continue;
          const char *oc = on.v[0];
          const char *rel = pmcp__js(e, "relation");
          char key[3 * PMCP__REF_MAX + 200];
          snprintf(key, sizeof key, "%s\n%s\n%s", down ? canon : oc, down ? oc : canon, rel);
          if (seen(&edges_seen, key))
            continue;
          rc = strs_add(&edges_seen, key);
          const cJSON *st = cJSON_GetObjectItemCaseSensitive(e, "steps");
          put_edge(j, down ? canon : oc, down ? oc : canon, rel, level, dead,
                   steps && cJSON_IsArray(st) ? st : NULL);
          n_edges++;
          if (!rc && !seen(&visited, oc)) {
            if (visited.n >= MAX_NODES) {
              truncated = 1;
              continue;
            }
            rc = strs_add(&visited, oc);
            if (!rc)
              rc = nodes_add(&next, &on);
          }
        }
        cJSON_Delete(page);
        if (rc)
          goto done;
      }
    }
    nodes_free(&frontier);
    frontier = next;
    next = (nodes){NULL, 0, 0};
  }
  pmcp_json_array_end(j);
  rc = pmcp__vw_take(j, &v->list_text);
  j = NULL;
  if (rc)
    goto done;
  v->has_list = 1;
  v->list_n = n_edges;
  v->list_name = "edges";
  /* Direction and depth are echoed through the envelope by entity.c via
   * the members below. */
  rc = pmcp_json_new(&j, 0);
  if (rc)
    goto done;
  pmcp_json_object_begin(j);
  pmcp_json_key(j, "direction");
  pmcp_json_string(j, down ? "downstream" : "upstream");
  pmcp_json_key(j, "depth");
  pmcp_json_int(j, depth);
  if (truncated) {
    pmcp_json_key(j, "walk");
    pmcp_json_string(j, "stopped early: more than 400 entities or 200 "
                        "edges on one entity; walk again from a listed "
                        "ref");
  }
  pmcp_json_object_end(j);
  rc = pmcp__vw_take(j, &v->head);
  j = NULL;
  v->has_head = rc == 0;
done:
  pmcp_json_free(j);
  strs_free(&visited);
  strs_free(&edges_seen);
  strs_free(&self);
  strs_free(&on);
  nodes_free(&frontier);
  nodes_free(&next);
  return rc < 0 ? rc : 0;
}
