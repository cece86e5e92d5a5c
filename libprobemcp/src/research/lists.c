/* SPDX-License-Identifier: MIT */
/* Lists read from the store in windows: items [skip, skip+limit) of the
 * store page that starts at a store position. A cursor's state is
 * {"l": list, "p": parent ref, "a": store position, "s": skip}, so a page
 * the budget cut in the middle of a store page resumes at the exact item.
 * Shared by browse and the list-shaped entity views. */
#include "research/lists.h"

#include "research/page.h"
#include "research/refs.h"
#include "research/views/views.h"
#include "util/cnum.h"
#include "util/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pmcp__window_free(pmcp__window *w)
{
  cJSON_Delete(w->page);
  cJSON_Delete(w->items);
  free(w->after);
  pmcp_buf_dispose(&w->text);
  free(w->span);
  free(w->span_len);
  free(w->next_buf);
  memset(w, 0, sizeof *w);
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

/* The position after @p placed items of the window, or NULL at the end:
 * pmcp__window_state() read back as a tree. */
cJSON *pmcp__window_next(size_t placed, void *ud)
{
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, 0))
    return NULL;
  cJSON *st = NULL;
  size_t len = 0;
  const char *t;
  if (pmcp__window_state(j, ud, placed) > 0 && (t = pmcp_json_text(j, &len)))
    st = cJSON_ParseWithLength(t, len);
  pmcp_json_free(j);
  return st;
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

/* Fetches the window at (@p after, @p skip) with its items as cJSON (for
 * the views that build their answer as a tree): the text window's items,
 * each written as browse writes it and read back. Error text in @p err. */
int pmcp__fetch(pmcp__research *rs, const pmcp__list_req *q, const char *after,
                 size_t skip, pmcp__window *w, char *err, size_t errlen)
{
  int rc = pmcp__fetch_text(rs, q, after, skip, w, err, errlen);
  if (rc)
    return rc;
  pmcp_json *j = NULL;
  w->items = cJSON_CreateArray();
  if (!w->items || pmcp_json_new(&j, 0)) {
    pmcp__window_free(w);
    return PMCP_ENOMEM;
  }
  for (size_t i = 0; i < pmcp__window_count(w) && !rc; i++) {
    pmcp_json_reset(j);
    pmcp_json_object_begin(j);
    pmcp__window_members(j, w, i, q, NULL);
    pmcp_json_object_end(j);
    size_t len = 0;
    const char *t = pmcp_json_text(j, &len);
    cJSON *it = t ? cJSON_ParseWithLength(t, len) : NULL;
    if (!it || !cJSON_AddItemToArray(w->items, it)) {
      cJSON_Delete(it);
      rc = PMCP_ENOMEM;
    }
  }
  pmcp_json_free(j);
  if (rc)
    pmcp__window_free(w);
  return rc;
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


/* ---- windows kept as text ----------------------------------------------
 * The store's page is read by spans of its JSON text and the items are
 * written with pmcp_json: no tree is parsed, picked and printed again. */

/* The span of member @p key of the object [o, o + ol) (text the store
 * gave, checked to be JSON), or NULL. */
static const char *t_find(const char *o, size_t ol, const char *key, size_t *vl)
{
  const char *v = NULL;
  pmcp__json_members(o, ol, &key, 1, &v, vl);
  return v;
}

/* The text of the JSON string [v, v + vl) in *s, *n: the literal's own
 * bytes when it has no escape, else decoded into @p tmp. 0 when it is not
 * a string. */
static int str_of(const char *v, size_t vl, pmcp_buf *tmp, const char **s, size_t *n)
{
  size_t len = 0;
  if (!v || vl < 2 || *v != '"')
    return 0;
  if (!memchr(v + 1, '\\', vl - 2)) {
    *s = v + 1; /* no escape: the literal's bytes are the text */
    *n = vl - 2;
    return 1;
  }
  pmcp__buf_reset(tmp);
  if (pmcp__buf_reserve(tmp, vl + 1) ||
      pmcp_json_string_decode(v, vl, 0, tmp->ptr, NULL, &len, NULL))
    return 0;
  tmp->ptr[len] = '\0';
  *s = tmp->ptr;
  *n = len;
  return 1;
}

const char *pmcp__json_member_str(const char *it, size_t il, const char *key, char *buf,
                                  size_t size)
{
  size_t vl;
  buf[0] = '\0';
  const char *v = t_find(it, il, key, &vl);
  if (!v)
    return buf;
  pmcp_buf tmp = PMCP_BUF_INIT;
  const char *s;
  size_t n;
  if (str_of(v, vl, &tmp, &s, &n))
    snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), s);
  pmcp_buf_dispose(&tmp);
  return buf;
}

/* pmcp__rs_ref() of item @p idx of the store page. */
static const char *span_ref(const pmcp__window *w, size_t idx, char *buf, size_t size)
{
  const char *it = w->span[idx];
  size_t il = w->span_len[idx];
  pmcp__json_member_str(it, il, "ref", buf, size);
  if (*buf)
    return buf;
  char k[64], id[PMCP__REF_MAX + 1];
  pmcp__json_member_str(it, il, "kind", k, sizeof k);
  pmcp__json_member_str(it, il, "id", id, sizeof id);
  if (*k && *id)
    snprintf(buf, size, "%s:%s", k, id);
  return buf;
}

int pmcp__fetch_text(pmcp__research *rs, const pmcp__list_req *q, const char *after,
                     size_t skip, pmcp__window *w, char *err, size_t errlen)
{
  memset(w, 0, sizeof *w);
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
  int rc = pmcp__rs_list_text(rs, &o, &w->text, err, errlen);
  if (rc) {
    pmcp__window_free(w);
    return rc;
  }
  /* the page's members, and the spans of its items */
  const char *v[4] = {NULL, NULL, NULL, NULL};
  size_t vl[4] = {0, 0, 0, 0};
  static const char *const keys[] = {"items", "total", "total_estimated", "next"};
  pmcp__json_members(w->text.ptr, w->text.len, keys, 4, v, vl);
  size_t cap = 0;
  if (v[0] && *v[0] == '[') {
    const char *p = v[0] + 1, *end = v[0] + vl[0], *e;
    size_t el;
    while ((p = pmcp__json_element(p, end, &e, &el))) {
      if (w->page_n == cap) {
        size_t nc = cap ? cap * 2 : 16;
        const char **ns = realloc(w->span, nc * sizeof *ns);
        if (ns)
          w->span = ns;
        size_t *nl = ns ? realloc(w->span_len, nc * sizeof *nl) : NULL;
        if (!nl) {
          pmcp__window_free(w);
          return PMCP_ENOMEM;
        }
        w->span_len = nl;
        cap = nc;
      }
      w->span[w->page_n] = e;
      w->span_len[w->page_n++] = el;
    }
  }
  w->total = -1;
  if (v[1] && vl[1] && (*v[1] == '-' || (*v[1] >= '0' && *v[1] <= '9')))
    w->total = pmcp__c_strtod(v[1], NULL);
  w->total_estimated = v[2] && vl[2] == 4 && !memcmp(v[2], "true", 4);
  if (v[3]) {
    pmcp_buf tmp = PMCP_BUF_INIT;
    const char *ns;
    size_t nn;
    if (str_of(v[3], vl[3], &tmp, &ns, &nn) && nn) {
      w->next_buf = malloc(nn + 1);
      if (w->next_buf) {
        memcpy(w->next_buf, ns, nn);
        w->next_buf[nn] = '\0';
      }
    }
    pmcp_buf_dispose(&tmp);
  }
  w->next = w->next_buf;
  w->after = after ? strdup(after) : NULL;
  w->skip = skip < w->page_n ? skip : w->page_n;
  w->list = q->list;
  w->parent = q->parent;
  w->anchor_in = q->anchor;
  if (q->anchor) {
    char buf[300];
    if (!(skip > 0 && skip <= w->page_n &&
          strcmp(span_ref(w, skip - 1, buf, sizeof buf), q->anchor) == 0)) {
      snprintf(err, errlen,
               "the %s listing changed before the cursor's position (%.200s is no "
               "longer the last item shown)", q->list ? q->list : "", q->anchor);
      pmcp__window_free(w);
      return PMCP_ECURSOR;
    }
  }
  return 0;
}

const char *pmcp__window_ref(const pmcp__window *w, size_t i, char *buf, size_t size)
{
  buf[0] = '\0';
  return w->skip + i < w->page_n ? span_ref(w, w->skip + i, buf, size) : buf;
}

int pmcp__window_member(const pmcp__window *w, size_t i, const char *key, const char **v,
                        size_t *vl)
{
  *v = NULL;
  *vl = 0;
  return w->skip + i < w->page_n &&
         (*v = t_find(w->span[w->skip + i], w->span_len[w->skip + i], key, vl)) != NULL;
}

int pmcp__json_str_of(const char *v, size_t vl, pmcp_buf *tmp, const char **s, size_t *n)
{
  return str_of(v, vl, tmp, s, n);
}

size_t pmcp__window_count(const pmcp__window *w)
{
  return w->page_n - w->skip;
}

static int state_write(pmcp_json *j, const pmcp__window *w, const char *after, size_t skip,
                       const char *anchor)
{
  pmcp_json_object_begin(j);
  pmcp_json_key(j, "l");
  pmcp_json_string(j, w->list);
  if (w->parent) {
    pmcp_json_key(j, "p");
    pmcp_json_string(j, w->parent);
  }
  pmcp_json_key(j, "a");
  if (after)
    pmcp_json_string(j, after);
  else
    pmcp_json_null(j);
  pmcp_json_key(j, "s");
  pmcp_json_uint(j, skip);
  if (anchor && *anchor) {
    pmcp_json_key(j, "k");
    pmcp_json_string(j, anchor);
    pmcp_json_key(j, "pin");
    pmcp_json_bool(j, 1);
  }
  return pmcp_json_object_end(j) ? -1 : 1;
}

int pmcp__window_state(pmcp_json *j, const pmcp__window *w, size_t placed)
{
  pmcp_json_reset(j);
  size_t consumed = w->skip + placed;
  char buf[300];
  /* a text window's item by its span; a window over a store page the
   * tool parsed itself (search's keyword page) by its tree */
  const char *last =
      !consumed ? w->anchor_in
      : w->span ? span_ref(w, consumed - 1, buf, sizeof buf)
                : pmcp__rs_ref(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(w->page,
                                                                                  "items"),
                                                  (int)consumed - 1),
                               buf, sizeof buf);
  long long off;
  if (consumed < w->page_n)
    return state_write(j, w, w->after, consumed,
                       consumed || (w->after && offset_of(w->after, &off)) ? last : NULL);
  if (w->next)
    return state_write(j, w, w->next, 0, offset_of(w->next, &off) ? last : NULL);
  return 0;
}

static int in_list(const char *const *l, const char *k)
{
  for (size_t i = 0; l && l[i]; i++)
    if (strcmp(l[i], k) == 0)
      return 1;
  return 0;
}

static int is_number(const char *v, size_t vl)
{
  return vl && (*v == '-' || (*v >= '0' && *v <= '9'));
}

/* A summary number member (pmcp__rs_number's rules, cJSON's spelling). */
static void put_number(pmcp_json *j, const char *v, size_t vl)
{
  /* an integer literal of up to 15 digits reads back and prints as itself */
  if (vl <= 15 && pmcp__json_is_integer(v, vl) && !(vl == 2 && v[0] == '-' && v[1] == '0')) {
    pmcp_json_raw(j, v, vl);
    return;
  }
  char tmp[64];
  snprintf(tmp, sizeof tmp, "%.*s", (int)(vl < sizeof tmp ? vl : sizeof tmp - 1), v);
  pmcp__rs_number(j, pmcp__c_strtod(tmp, NULL));
}

/* A nested array or object: read, and written with the views' number
 * rules (pmcp__vw_value). */
static void put_tree(pmcp_json *j, const char *v, size_t vl)
{
  cJSON *t = cJSON_ParseWithLength(v, vl);
  pmcp__vw_value(j, t, 0);
  cJSON_Delete(t);
}

int pmcp__rs_excerpt_to(pmcp_json *j, const char *s, size_t n, size_t max, size_t *shown)
{
  /* a C string: text after a decoded NUL was never shown */
  const char *nul = memchr(s, '\0', n);
  if (nul)
    n = (size_t)(nul - s);
  if (!max || n <= max) {
    pmcp_json_string_n(j, s, n);
    *shown = n;
    return 0;
  }
  size_t cut = max;
  while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
    cut--;
  char stack[512];
  char *t = cut + 4 <= sizeof stack ? stack : malloc(cut + 4);
  if (!t) {
    pmcp_json_string_n(j, s, cut);
    *shown = cut;
    return 1;
  }
  memcpy(t, s, cut);
  memcpy(t + cut, "...", 3);
  pmcp_json_string_n(j, t, cut + 3);
  if (t != stack)
    free(t);
  *shown = cut + 3;
  return 1;
}

#define MAX_KEYS 24

int pmcp__window_members(pmcp_json *j, const pmcp__window *w, size_t i,
                         const pmcp__list_req *q, const char *const *drop)
{
  size_t idx = w->skip + i;
  if (idx >= w->page_n)
    return PMCP_EINVAL;
  const char *it = w->span[idx];
  size_t il = w->span_len[idx];
  const char *const *keys = q->keys;
  size_t nk = 0;
  while (keys[nk] && nk < MAX_KEYS)
    nk++;
  /* what the additions after the pick read of the store's item, looked
   * for in the same pass as the picked keys (one name, one slot) */
  static const char *const extra[] = {"chars", "via", "kind", "provider", "attributes"};
  const char *all[MAX_KEYS + 5];
  size_t xi[5], na = nk;
  memcpy(all, keys, nk * sizeof *all);
  for (size_t e = 0; e < 5; e++) {
    size_t k = 0;
    while (k < nk && strcmp(keys[k], extra[e]) != 0)
      k++;
    if (k == nk)
      all[k = na++] = extra[e];
    xi[e] = k;
  }
  const char *v[MAX_KEYS + 5];
  size_t vl[MAX_KEYS + 5];
  /* the first member of a name counts, as for
   * cJSON_GetObjectItemCaseSensitive */
  pmcp__json_members(it, il, all, na, v, vl);
  const char *xv[5];
  size_t xl[5];
  for (size_t e = 0; e < 5; e++)
    xv[e] = v[xi[e]], xl[e] = vl[xi[e]];
  int have_chars = xv[0] && is_number(xv[0], xl[0]);
  double chars = have_chars ? pmcp__c_strtod(xv[0], NULL) : -1;
  /* a note's excerpt: its "truncated" says whether the note is longer */
  size_t ex = nk;
  for (size_t k = 0; k < nk; k++)
    if (strcmp(keys[k], "excerpt") == 0 && v[k] && *v[k] == '"')
      ex = k;
  int note = ex < nk && chars >= 0;
  pmcp_buf tmp = PMCP_BUF_INIT;
  int cut_any = 0, has_ref = 0, has_text = 0;
  size_t ex_shown = 0;
  const char *counts[2] = {NULL, NULL};
  size_t count_len[2] = {0, 0};
  for (size_t k = 0; k < nk; k++) {
    const char *key = keys[k];
    if (!v[k] || (vl[k] == 4 && !memcmp(v[k], "null", 4)) || in_list(drop, key))
      continue;
    int isnum = is_number(v[k], vl[k]);
    if (isnum && (!strcmp(key, "runs") || !strcmp(key, "experiments"))) {
      int c = key[0] == 'e';
      counts[c] = v[k];
      count_len[c] = vl[k];
      continue; /* renamed n_<list>, after the picked keys */
    }
    if (!strcmp(key, "deleted") && vl[k] == 5 && !memcmp(v[k], "false", 5))
      continue;
    if (note && !strcmp(key, "chars"))
      continue;
    if (isnum && pmcp__rs_time_key(key)) {
      double ms = pmcp__c_strtod(v[k], NULL);
      if (!(ms > 0 && ms < 9.2e18))
        continue; /* 0: not recorded; past int64 ms: no time at all */
      char iso[32];
      pmcp__rs_iso((int64_t)ms, iso, sizeof iso);
      pmcp_json_key(j, key);
      pmcp_json_string(j, iso);
    } else if (*v[k] == '"') {
      const char *s;
      size_t n;
      if (!str_of(v[k], vl[k], &tmp, &s, &n))
        continue;
      size_t shown;
      pmcp_json_key(j, key);
      cut_any |= pmcp__rs_excerpt_to(j, s, n, q->excerpt, &shown);
      if (k == ex)
        ex_shown = shown;
    } else if (isnum) {
      pmcp_json_key(j, key);
      put_number(j, v[k], vl[k]);
    } else if (*v[k] == '[' || *v[k] == '{') {
      pmcp_json_key(j, key);
      put_tree(j, v[k], vl[k]);
    } else {
      /* true, false; anything else a host's backend may have written is
       * not passed on */
      int t = vl[k] == 4 && !memcmp(v[k], "true", 4);
      if (!t && !(vl[k] == 5 && !memcmp(v[k], "false", 5)))
        continue;
      pmcp_json_key(j, key);
      pmcp_json_bool(j, t);
    }
    if (!strcmp(key, "ref"))
      has_ref = 1;
    if (!strcmp(key, "text") || !strcmp(key, "body") || !strcmp(key, "excerpt") ||
        !strcmp(key, "description") || !strcmp(key, "title") || !strcmp(key, "message"))
      has_text = 1;
  }
  if (cut_any && !note) {
    pmcp_json_key(j, "truncated");
    pmcp_json_bool(j, 1);
  }
  for (int c = 0; c < 2; c++)
    if (counts[c]) {
      pmcp_json_key(j, c ? "n_experiments" : "n_runs");
      put_number(j, counts[c], count_len[c]);
    }
  char ref[300];
  if (note) {
    int cut = chars > (double)ex_shown || cut_any;
    pmcp_json_key(j, "truncated");
    pmcp_json_bool(j, cut);
    if (cut) {
      char door[PMCP__REF_MAX + 64];
      snprintf(door, sizeof door, "entity refs=[\"%s\"] view=record",
               pmcp__json_member_str(it, il, "ref", ref, sizeof ref));
      pmcp_json_key(j, "detail");
      pmcp_json_string(j, door);
    }
  }
  if (!has_ref) {
    span_ref(w, idx, ref, sizeof ref);
    if (*ref) {
      pmcp_json_key(j, "ref");
      pmcp_json_string(j, ref);
    }
  }
  if (has_text) {
    char via[64], kind[64], prov[8];
    const char *s;
    size_t n;
    via[0] = kind[0] = prov[0] = '\0';
    if (xv[1] && str_of(xv[1], xl[1], &tmp, &s, &n))
      snprintf(via, sizeof via, "%.*s", (int)(n < sizeof via ? n : sizeof via - 1), s);
    if (xv[2] && str_of(xv[2], xl[2], &tmp, &s, &n))
      snprintf(kind, sizeof kind, "%.*s", (int)(n < sizeof kind ? n : sizeof kind - 1), s);
    if (xv[3] && str_of(xv[3], xl[3], &tmp, &s, &n) && n)
      prov[0] = 'x';
    const char *iv;
    size_t ivl;
    int import_attr = xv[4] && *xv[4] == '{' && (iv = t_find(xv[4], xl[4], "import", &ivl));
    pmcp_json_key(j, "provenance");
    pmcp_json_string(j, pmcp__rs_provenance_of(via, kind, pmcp__json_member_str(it, il, "ref", ref, sizeof ref),
                                               prov, import_attr));
  }
  pmcp_buf_dispose(&tmp);
  return pmcp_json_error(j);
}
