/* SPDX-License-Identifier: MIT */
/* The papers index's ranked search: what both backends share (the check
 * of a query, the category test, the bounded heap), and the dispatch. */
#include "store/papers_search.h"

#include <math.h>
#include <string.h>

#include "store/store_int.h"

int pmcp__papers_before(double sa, int64_t ia, double sb, int64_t ib)
{
  return sa < sb || (sa == sb && ia < ib);
}

int pmcp__papers_cats_match(const char *have, const char *const *want, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    size_t wl = strlen(want[i]);
    int hit = 0;
    for (const char *p = have; p && *p && !hit;) {
      while (*p == ' ')
        p++;
      const char *e = p;
      while (*e && *e != ' ')
        e++;
      size_t l = (size_t)(e - p);
      hit = l && ((l == wl && !strncmp(p, want[i], l)) ||
                  (l > wl && !strncmp(p, want[i], wl) && p[wl] == '.'));
      p = e;
    }
    if (!hit)
      return 0;
  }
  return 1;
}

void pmcp__papers_heap_init(pmcp__papers_heap *hp, const pmcp__papers_query *q)
{
  hp->q = q;
  hp->n = 0;
  hp->total = 0;
}

/* h[0] is the worst kept: a max-heap on the ranking order */
static int worse(const pmcp__paper_hit *a, const pmcp__paper_hit *b)
{
  return pmcp__papers_before(b->score, b->id, a->score, a->id);
}

static void sift_down(pmcp__paper_hit *h, size_t n, size_t i)
{
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && worse(&h[l], &h[m]))
      m = l;
    if (r < n && worse(&h[r], &h[m]))
      m = r;
    if (m == i)
      return;
    pmcp__paper_hit t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

void pmcp__papers_heap_offer(pmcp__papers_heap *hp, int64_t id, double score)
{
  hp->total++;
  const pmcp__papers_query *q = hp->q;
  if (q->has_after && !pmcp__papers_before(q->after_score, q->after_id, score, id))
    return;
  pmcp__paper_hit x = {id, score};
  if (hp->n < q->k) {
    size_t i = hp->n++;
    hp->h[i] = x;
    while (i > 0 && worse(&hp->h[i], &hp->h[(i - 1) / 2])) {
      pmcp__paper_hit t = hp->h[i];
      hp->h[i] = hp->h[(i - 1) / 2];
      hp->h[(i - 1) / 2] = t;
      i = (i - 1) / 2;
    }
  } else if (worse(&hp->h[0], &x)) {
    hp->h[0] = x;
    sift_down(hp->h, hp->n, 0);
  }
}

void pmcp__papers_heap_take(pmcp__papers_heap *hp, pmcp__papers_result *r)
{
  size_t n = hp->n;
  r->n = n;
  r->total = hp->total;
  /* pop the worst into the back */
  while (hp->n > 0) {
    r->hits[hp->n - 1] = hp->h[0];
    hp->h[0] = hp->h[--hp->n];
    sift_down(hp->h, hp->n, 0);
  }
}

int pmcp__store_papers_version(pmcp_store *s, pmcp_tenant t, pmcp__papers_result *r)
{
  if (!s || s->magic != PMCP__STORE_MAGIC || !r)
    return PMCP_EINVAL;
  pmcp__store_clear_error(s);
  if (t.id <= 0)
    return pmcp_store_set_error(s, PMCP_EINVAL, "no tenant: get one with pmcp_store_tenant()");
  if (!s->papers)
    return PMCP_EUNSUPPORTED;
  r->version = 0;
  return s->papers(s, s->ctx, t, NULL, r);
}

int pmcp__store_papers_search(pmcp_store *s, pmcp_tenant t, const pmcp__papers_query *q,
                              pmcp__papers_result *r)
{
  if (!s || s->magic != PMCP__STORE_MAGIC || !q || !r)
    return PMCP_EINVAL;
  pmcp__store_clear_error(s);
  if (t.id <= 0)
    return pmcp_store_set_error(s, PMCP_EINVAL, "no tenant: get one with pmcp_store_tenant()");
  if (!s->papers)
    return PMCP_EUNSUPPORTED;
  if (q->n_words == 0 || q->n_words > PMCP__PAPERS_WORDS_MAX || q->k == 0 ||
      q->k > PMCP__PAPERS_K_MAX || q->n_cats > PMCP__PAPERS_CATS_MAX ||
      (q->has_after && !isfinite(q->after_score)))
    return pmcp_store_set_error(s, PMCP_EINVAL, "invalid papers search");
  for (size_t i = 0; i < q->n_words; i++) {
    const unsigned char *w = (const unsigned char *)q->words[i];
    if (!*w)
      return pmcp_store_set_error(s, PMCP_EINVAL, "invalid papers search");
    for (; *w; w++)
      if (!(*w >= 0x80 || (*w >= '0' && *w <= '9') || (*w >= 'a' && *w <= 'z') ||
            (*w >= 'A' && *w <= 'Z')))
        return pmcp_store_set_error(s, PMCP_EINVAL, "invalid papers search");
  }
  r->n = 0;
  r->total = 0;
  r->version = 0;
  pmcp__buf_reset(&r->records);
  return s->papers(s, s->ctx, t, q, r);
}

int pmcp__store_papers_bulk(pmcp_store *s, int begin)
{
  if (!s || s->magic != PMCP__STORE_MAGIC)
    return PMCP_EINVAL;
  pmcp__store_clear_error(s);
  if (!s->papers_bulk)
    return PMCP_EUNSUPPORTED;
  if (s->flags & PMCP_STORE_READONLY)
    return pmcp_store_set_error(s, PMCP_EREADONLY, "the store is open read-only");
  return s->papers_bulk(s, s->ctx, begin);
}
