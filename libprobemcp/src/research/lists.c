/* SPDX-License-Identifier: MIT */
/* Lists read from the store in windows: items [skip, skip+limit) of the
 * store page that starts at a store position. A cursor's state is
 * {"l": list, "p": parent ref, "a": store position, "s": skip}, so a page
 * the budget cut in the middle of a store page resumes at the exact item.
 * Shared by browse and the list-shaped entity views. */
#include "research/lists.h"

#include "research/refs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pmcp__window_free(pmcp__window *w)
{
  cJSON_Delete(w->page);
  cJSON_Delete(w->items);
  free(w->after);
  memset(w, 0, sizeof *w);
}

cJSON *pmcp__state_make(const char *list, const char *parent,
                         const char *after, size_t skip)
{
  cJSON *st = cJSON_CreateObject();
  if (!st)
    return NULL;
  cJSON_AddStringToObject(st, "l", list);
  if (parent)
    cJSON_AddStringToObject(st, "p", parent);
  if (after)
    cJSON_AddStringToObject(st, "a", after);
  else
    cJSON_AddNullToObject(st, "a");
  cJSON_AddNumberToObject(st, "s", (double)skip);
  return st;
}

/* A store position the anchor can be checked at: an offset (the built-in
 * backends' positions) of at least 1. */
static int offset_of(const char *pos, long long *out)
{
  char *end;
  long long v = pos ? strtoll(pos, &end, 10) : 0;
  if (!pos || !*pos || *end || v < 1)
    return 0;
  *out = v;
  return 1;
}

/* Binds @p st to the listing: the anchor and "pin" (the cursor is checked
 * by its anchor, not by the store's version). */
static cJSON *anchored(cJSON *st, const char *anchor)
{
  if (st && anchor && *anchor) {
    cJSON_AddStringToObject(st, "k", anchor);
    cJSON_AddTrueToObject(st, "pin");
  }
  return st;
}

/* The position after @p placed items of the window, or NULL at the end. */
cJSON *pmcp__window_next(size_t placed, void *ud)
{
  pmcp__window *w = ud;
  size_t consumed = w->skip + placed;
  const cJSON *items = cJSON_GetObjectItemCaseSensitive(w->page, "items");
  char buf[300];
  const char *last =
      consumed ? pmcp__rs_ref(cJSON_GetArrayItem(items, (int)consumed - 1), buf, sizeof buf)
               : w->anchor_in;
  long long off;
  if (consumed < w->page_n)
    return anchored(pmcp__state_make(w->list, w->parent, w->after, consumed),
                    consumed || (w->after && offset_of(w->after, &off)) ? last : NULL);
  if (w->next)
    return anchored(pmcp__state_make(w->list, w->parent, w->next, 0),
                    offset_of(w->next, &off) ? last : NULL);
  return NULL;
}

int pmcp__anchor_start(const char **after, size_t *skip, char before[32])
{
  long long off;
  if (*skip > 0)
    return 0;
  if (!offset_of(*after, &off))
    return -1;
  snprintf(before, 32, "%lld", off - 1);
  *after = before;
  *skip = 1;
  return 0;
}

int pmcp__anchor_holds(const cJSON *items, size_t skip, const char *anchor)
{
  char buf[300];
  return skip > 0 &&
         strcmp(pmcp__rs_ref(cJSON_GetArrayItem(items, (int)skip - 1), buf, sizeof buf), anchor) ==
             0;
}

const char *pmcp__state_anchor(const cJSON *st)
{
  const char *k = pmcp__js(st, "k");
  return *k ? k : NULL;
}

/* Fetches the window at (@p after, @p skip). Error text in @p err. */
int pmcp__fetch(pmcp__research *rs, const pmcp__list_req *q, const char *after,
                 size_t skip, pmcp__window *w, char *err, size_t errlen)
{
  memset(w, 0, sizeof *w);
  /* An anchored cursor reads the item before its position too, to check
   * that it is still the anchor. */
  char before[32];
  if (q->anchor && pmcp__anchor_start(&after, &skip, before)) {
    snprintf(err, errlen, "the cursor's position cannot be checked");
    return PMCP_ECURSOR;
  }
  pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
  o.kind = q->kind;
  o.parent = q->parent;
  o.query = q->query;
  o.filter = q->filter;
  o.include_deleted = q->include_deleted;
  o.after = after;
  o.limit = skip + q->limit;
  int rc = pmcp__rs_list(rs, &o, &w->page, err, errlen);
  if (rc)
    return rc;
  w->after = after ? strdup(after) : NULL;
  w->skip = skip;
  w->list = q->list;
  w->parent = q->parent;
  const cJSON *items = cJSON_GetObjectItemCaseSensitive(w->page, "items");
  w->page_n = (size_t)cJSON_GetArraySize(items);
  w->next = pmcp__js(w->page, "next")[0] ? pmcp__js(w->page, "next") : NULL;
  w->total = pmcp__jn(w->page, "total", -1);
  w->total_estimated =
      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(w->page, "total_estimated"));
  w->anchor_in = q->anchor;
  if (q->anchor) {
    if (!pmcp__anchor_holds(items, skip, q->anchor)) {
      snprintf(err, errlen,
               "the %s listing changed before the cursor's position (%.200s is no "
               "longer the last item shown)", q->list ? q->list : "", q->anchor);
      cJSON_Delete(w->page);
      free(w->after);
      memset(w, 0, sizeof *w);
      return PMCP_ECURSOR;
    }
  }
  w->items = cJSON_CreateArray();
  size_t i = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, items)
  {
    if (i++ < skip)
      continue;
    cJSON *p = pmcp__rs_pick(it, q->keys, q->excerpt);
    if (p) {
      /* counts the store reports under the names of nested lists */
      static const char *const counts[] = {"runs", "experiments", NULL};
      for (size_t c = 0; counts[c]; c++) {
        cJSON *n = cJSON_GetObjectItemCaseSensitive(p, counts[c]);
        if (cJSON_IsNumber(n)) {
          char key[32];
          snprintf(key, sizeof key, "n_%s", counts[c]);
          cJSON_AddItemToObject(p, key, cJSON_DetachItemViaPointer(p, n));
        }
      }
      if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(p, "deleted")))
        cJSON_DeleteItemFromObject(p, "deleted");
      /* a note excerpt shorter than the note: name the detail door */
      const cJSON *ex = cJSON_GetObjectItemCaseSensitive(p, "excerpt");
      double chars = pmcp__jn(it, "chars", -1);
      if (cJSON_IsString(ex) && chars >= 0) {
        /* one "truncated" (the pick may have set it for a cut string) */
        int cut = chars > (double)strlen(ex->valuestring) ||
                  cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "truncated"));
        cJSON_DeleteItemFromObject(p, "truncated");
        cJSON_AddBoolToObject(p, "truncated", cut);
        if (cut) {
          char door[PMCP__REF_MAX + 64];
          snprintf(door, sizeof door, "entity refs=[\"%s\"] view=record",
                   pmcp__js(it, "ref"));
          cJSON_AddStringToObject(p, "detail", door);
        }
        cJSON_DeleteItemFromObject(p, "chars");
      }
      char buf[300];
      if (!cJSON_HasObjectItem(p, "ref")) {
        const char *r = pmcp__rs_ref(it, buf, sizeof buf);
        if (*r)
          cJSON_AddItemToObject(p, "ref", cJSON_CreateString(r));
      }
      if (cJSON_HasObjectItem(p, "text") || cJSON_HasObjectItem(p, "body") ||
          cJSON_HasObjectItem(p, "excerpt") ||
          cJSON_HasObjectItem(p, "description") ||
          cJSON_HasObjectItem(p, "title") || cJSON_HasObjectItem(p, "message"))
        cJSON_AddStringToObject(p, "provenance", pmcp__rs_provenance(it));
      cJSON_AddItemToArray(w->items, p);
    }
  }
  return 0;
}

/* Reads the incoming state for list @p list: position and skip. */
void pmcp__state_pos(const cJSON *st, const char **after, size_t *skip)
{
  *after = NULL;
  *skip = 0;
  if (!st)
    return;
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(st, "a");
  if (cJSON_IsString(a))
    *after = a->valuestring;
  double s = pmcp__jn(st, "s", 0);
  if (s > 0 && s < 100000)
    *skip = (size_t)s;
}

