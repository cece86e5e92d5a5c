/* SPDX-License-Identifier: MIT */
/* How the tracking tools write their answers: numbers as the toolset has
 * always shown them, store values, and offset pages filled item by item
 * through the JSON writer (see tracking.h). */
#include "tracking/tracking.h"

#ifdef PMCP_HAVE_CAIRO
#include "research/chart.h"
#endif

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "probemcp/json.h"
#include "research/page.h"
#include "research/views/views.h"
#include "util/cnum.h"

int pmcp__trk_kstr(pmcp_json *j, const char *key, const char *s)
{
  int rc = pmcp_json_key(j, key);
  return rc ? rc : pmcp_json_string(j, s ? s : "");
}

int pmcp__trk_knum(pmcp_json *j, const char *key, double v)
{
  int rc = pmcp_json_key(j, key);
  return rc ? rc : pmcp__rs_number(j, v);
}

int pmcp__trk_kbool(pmcp_json *j, const char *key, int v)
{
  int rc = pmcp_json_key(j, key);
  return rc ? rc : pmcp_json_bool(j, v);
}

int pmcp__trk_kvalue(pmcp_json *j, const char *key, const cJSON *v)
{
  int rc = pmcp_json_key(j, key);
  return rc ? rc : pmcp__vw_value(j, v, 0);
}

int pmcp__trk_knums(pmcp_json *j, const char *key, const double *v, size_t n)
{
  pmcp_json_key(j, key);
  pmcp_json_array_begin(j);
  for (size_t i = 0; i < n; i++)
    pmcp__rs_number(j, v[i]);
  return pmcp_json_array_end(j);
}

int pmcp__trk_kints(pmcp_json *j, const char *key, const int64_t *v, size_t n)
{
  pmcp_json_key(j, key);
  pmcp_json_array_begin(j);
  for (size_t i = 0; i < n; i++)
    pmcp__rs_number(j, (double)v[i]); /* as the tree printed them: doubles */
  return pmcp_json_array_end(j);
}

/* ---- offset pages --------------------------------------------------------- */

void pmcp__trk_window_args(pmcp_call *call, size_t *offset, size_t *limit)
{
  int64_t l = 50, o = 0;
  pmcp_arg_int(call, "limit", &l);
  pmcp_arg_int(call, "offset", &o);
  *offset = o > 0 ? (size_t)o : 0;
  *limit = l > 0 ? (size_t)l : 0;
}

static int keep(pmcp__trk_page *p, int rc)
{
  if (rc && !p->rc)
    p->rc = rc;
  return p->rc;
}

int pmcp__trk_page_begin(pmcp__trk_page *p, pmcp_call *call, size_t offset, size_t total,
                         const char *hint, const struct pmcp__chart *chart)
{
  memset(p, 0, sizeof *p);
  p->call = call;
  p->offset = offset;
  p->total = total;
  p->chart = chart;
  int rc = pmcp_page_begin(&p->pg, call, 0);
  if (!rc)
    rc = pmcp_json_new(&p->f, 0);
  /* The engine's page builder fits the items and ends the page with
   * count, truncated, next_offset (the first item not returned) and a
   * hint when the budget cut it. */
  if (!rc)
    rc = pmcp_page_offsets(p->pg, offset < total ? offset : total, total,
                           hint ? hint
                                : "the token budget cut this page: continue with "
                                  "offset=next_offset or raise token_budget");
#ifdef PMCP_HAVE_CAIRO
  if (!rc && chart) /* the text leaves room for the smallest chart */
    rc = pmcp_page_image_reserve(p->pg, pmcp__chart_min_cost());
#else
  (void)chart;
#endif
  return keep(p, rc);
}

pmcp_json *pmcp__trk_field(pmcp__trk_page *p)
{
  if (p->rc)
    return NULL;
  pmcp_json_reset(p->f);
  return p->f;
}

int pmcp__trk_field_end(pmcp__trk_page *p, const char *key)
{
  if (p->rc)
    return p->rc;
  size_t len = 0;
  const char *t = pmcp_json_text(p->f, &len);
  return keep(p, t ? pmcp_page_field_json(p->pg, key, t, len)
                   : (pmcp_json_error(p->f) ? pmcp_json_error(p->f) : PMCP_EMISUSE));
}

int pmcp__trk_field_str(pmcp__trk_page *p, const char *key, const char *s)
{
  pmcp_json *j = pmcp__trk_field(p);
  if (j)
    pmcp_json_string(j, s ? s : "");
  return pmcp__trk_field_end(p, key);
}

int pmcp__trk_field_num(pmcp__trk_page *p, const char *key, double v)
{
  pmcp_json *j = pmcp__trk_field(p);
  if (j)
    pmcp__rs_number(j, v);
  return pmcp__trk_field_end(p, key);
}

int pmcp__trk_field_value(pmcp__trk_page *p, const char *key, const cJSON *v)
{
  pmcp_json *j = pmcp__trk_field(p);
  if (j)
    pmcp__vw_value(j, v, 0);
  return pmcp__trk_field_end(p, key);
}

int pmcp__trk_list(pmcp__trk_page *p, const char *name)
{
  if (!p->rc)
    keep(p, pmcp_page_field_int(p->pg, "total_count", (int64_t)p->total));
  if (!p->rc)
    keep(p, pmcp_page_field_int(p->pg, "offset", (int64_t)p->offset));
  if (!p->rc)
    keep(p, pmcp_page_list(p->pg, name));
  return p->rc;
}

pmcp_json *pmcp__trk_item(pmcp__trk_page *p)
{
  return p->rc || p->full ? NULL : pmcp_page_item(p->pg);
}

int pmcp__trk_item_end(pmcp__trk_page *p)
{
  if (p->rc || p->full)
    return p->rc;
  int rc = pmcp_page_commit(p->pg, NULL, 0);
  if (rc == PMCP_EBUDGET) {
    p->full = 1; /* the page says so itself: truncated, next_offset */
    return 0;
  }
  return keep(p, rc);
}

int pmcp__trk_item_text(pmcp__trk_page *p, const char *txt, size_t len)
{
  if (p->rc || p->full)
    return p->rc;
  int rc = pmcp_page_add(p->pg, txt, len, NULL, 0);
  if (rc == PMCP_EBUDGET) {
    p->full = 1;
    return 0;
  }
  return keep(p, rc);
}

void pmcp__trk_page_abort(pmcp__trk_page *p)
{
  pmcp_json_free(p->f);
  pmcp_page_free(p->pg);
  p->f = NULL;
  p->pg = NULL;
}

int pmcp__trk_page_send(pmcp__trk_page *p)
{
  int rc = p->rc;
  pmcp_json_free(p->f);
  p->f = NULL;
#ifdef PMCP_HAVE_CAIRO
  if (!rc && p->chart) {
    /* the lines of the entries this page kept (a line was added for
     * each item offered, the last perhaps refused) */
    pmcp__chart view = *p->chart;
    size_t kept = pmcp_page_count(p->pg);
    if (view.n > kept)
      view.n = kept;
    rc = pmcp__chart_attach(p->pg, &view, 0);
  }
#endif
  if (rc) {
    pmcp_page_free(p->pg);
    p->pg = NULL;
    if (rc == PMCP_EBUDGET) /* a field: the envelope alone is too big */
      return pmcp__rs_fail(p->call, PMCP_TERR_TOKEN_BUDGET_TOO_SMALL,
                           "this listing's envelope does not fit token_budget=%d: raise "
                           "token_budget", pmcp__rs_budget(p->call));
    return rc;
  }
  pmcp_page *pg = p->pg;
  p->pg = NULL;
  return pmcp__rs_send(p->call, pg, 0);
}

int pmcp__trk_send_rows(pmcp_call *call, size_t n, const char *name,
                     int (*fields)(pmcp__trk_page *p, void *ud),
                     int (*row)(pmcp_json *j, size_t i, void *ud), void *ud)
{
  size_t offset, limit;
  pmcp__trk_window_args(call, &offset, &limit);
  pmcp__trk_page p;
  pmcp__trk_page_begin(&p, call, offset, n, NULL, NULL);
  if (fields)
    fields(&p, ud);
  pmcp__trk_list(&p, name);
  pmcp_json *j;
  for (size_t i = offset; i < n && i - offset < limit && (j = pmcp__trk_item(&p)); i++) {
    int rc = row(j, i, ud);
    if (rc) {
      p.rc = rc;
      break;
    }
    pmcp__trk_item_end(&p);
  }
  return pmcp__trk_page_send(&p);
}

int pmcp__trk_send_object(pmcp_call *call, pmcp__tracking *tk, pmcp_json *j)
{
  size_t len = 0;
  const char *t = pmcp_json_text(j, &len);
  if (!t)
    return pmcp_json_error(j) ? pmcp_json_error(j) : PMCP_EMISUSE;
  return pmcp__rs_send_object(call, tk->rs, t, len);
}

