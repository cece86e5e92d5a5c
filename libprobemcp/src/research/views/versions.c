/* SPDX-License-Identifier: MIT */
/* The versions view: an artifact's, dataset's or experiment's versions,
 * filtered by view_options.requirement (require.h), or a checkpoint's
 * run's other saves. A requirement nothing satisfies answers
 * state="no_match" with the versions that do exist. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/require.h"
#include "research/views/views.h"

static const char *const k_ver[] = {"ref", "version", "labels", "description",
                                    "uri", "sha256", "size", "rows",
                                    "media_type", "author", "created", NULL};
static const char *const k_ckpt[] = {"ref", "step", "best", "stored", "metric",
                                     "value", "uri", "size", "created", NULL};

int pmcp__view_versions(pmcp__vctx *v)
{
  const cJSON *req = v->opts
      ? cJSON_GetObjectItemCaseSensitive(v->opts, "requirement") : NULL;
  const char *kind = NULL;
  char parent[PMCP__REF_MAX + 48];
  snprintf(parent, sizeof parent, "%s", v->ref_text);
  switch (v->ref.kind) {
  case PMCP__REF_ARTIFACT: kind = "artifact-version"; break;
  case PMCP__REF_DATASET:
    kind = "dataset-version";
    snprintf(parent, sizeof parent, "dataset:%s", v->ref.id);
    break;
  case PMCP__REF_EXPERIMENT: kind = "experiment-version"; break;
  case PMCP__REF_CHECKPOINT:
    if (req)
      return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                             "view_options.requirement: checkpoints have "
                             "steps, not versions; browse mode=checkpoints "
                             "narrows them");
    snprintf(v->parent, sizeof v->parent, "run:%s", v->ref.id);
    v->list = (pmcp__list_req){"saves", "checkpoint", v->parent, NULL, NULL,
                               0, k_ckpt, 10, 160, NULL};
    v->list_name = "saves";
    return 0;
  default:
    return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT, "%s has no versions",
                           v->ref_text);
  }
  pmcp__req r;
  char err[300];
  if (req) {
    if (!cJSON_IsString(req))
      return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                             "view_options.requirement is a string such as "
                             "\">=2\", \"==3\" or a label");
    if (pmcp__req_parse(&r, req->valuestring, err, sizeof err))
      return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT, "view_options.%s", err);
  }
  if (!req) {
    snprintf(v->parent, sizeof v->parent, "%s", parent);
    v->list = (pmcp__list_req){"versions", kind, v->parent, NULL, NULL, 0,
                               k_ver, 10, 200, NULL};
    v->list_name = "versions";
    return 0;
  }
  /* Filter every version (versions are few: the store caps a page at
   * 1000, and a name with more is paged through). The matches are the
   * list; the versions that exist are said when none matches. */
  pmcp_json *items = NULL, *existing = NULL;
  if (pmcp_json_new(&items, 0) || pmcp_json_new(&existing, 0)) {
    pmcp_json_free(items);
    return PMCP_ENOMEM;
  }
  pmcp_json_array_begin(items);
  pmcp_json_array_begin(existing);
  size_t matched = 0;
  const char *after = NULL;
  cJSON *page = NULL;
  int rc = 0;
  for (int guard = 0; guard < 100; guard++) {
    pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
    o.kind = kind;
    o.parent = parent;
    o.after = after;
    o.limit = 1000;
    cJSON *np = NULL;
    rc = pmcp__rs_list(v->rs, &o, &np, err, sizeof err);
    cJSON_Delete(page);
    page = np;
    if (rc) {
      pmcp_json_free(items);
      pmcp_json_free(existing);
      return rc == PMCP_ENOMEM ? rc
             : pmcp__view_fail(v, rc == PMCP_ENOTFOUND ? PMCP_TERR_NOT_FOUND
                                                       : PMCP_TERR_STORE,
                               "%s: %s", v->ref_text, err);
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(page, "items"))
    {
      int64_t ver = (int64_t)pmcp__jn(it, "version", -1);
      const char *labels[17];
      size_t nl = 0;
      const cJSON *vs = cJSON_GetObjectItemCaseSensitive(it, "version");
      if (cJSON_IsString(vs)) {
        /* a named version ("v2"): a label, and its number when it is
         * one ("2" or "v2") */
        labels[nl++] = vs->valuestring;
        const char *d = vs->valuestring + (vs->valuestring[0] == 'v');
        char *end;
        long long n = *d ? strtoll(d, &end, 10) : -1;
        ver = (*d && !*end && n >= 0) ? n : -1;
      }
      const cJSON *l;
      cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(it, "labels"))
      {
        if (cJSON_IsString(l) && nl < 17)
          labels[nl++] = l->valuestring;
        else if (l->string && nl < 17)
          labels[nl++] = l->string; /* {"label": version} objects */
      }
      pmcp_json_object_begin(existing);
      pmcp_json_key(existing, "version");
      if (cJSON_IsString(vs))
        pmcp_json_string(existing, vs->valuestring);
      else
        pmcp_json_int(existing, ver);
      if (nl) {
        pmcp_json_key(existing, "labels");
        pmcp_json_array_begin(existing);
        for (size_t i = 0; i < nl; i++)
          pmcp_json_string(existing, labels[i]);
        pmcp_json_array_end(existing);
      }
      pmcp_json_object_end(existing);
      if (pmcp__req_match(&r, ver, labels, nl)) {
        pmcp_json_object_begin(items);
        pmcp__vw_pick(items, it, k_ver, 200, 0);
        pmcp_json_object_end(items);
        matched++;
      }
    }
    const char *nx = pmcp__js(page, "next");
    if (!*nx)
      break;
    after = nx;
  }
  cJSON_Delete(page);
  pmcp_json_array_end(items);
  pmcp_json_array_end(existing);
  v->list_name = "versions";
  if (matched) {
    pmcp_json_free(existing);
    rc = pmcp__vw_take(items, &v->list_text);
    v->has_list = rc == 0;
    v->list_n = matched;
    return rc;
  }
  pmcp_json_free(items);
  pmcp_buf ex = PMCP_BUF_INIT;
  rc = pmcp__vw_take(existing, &ex);
  pmcp_json *j = NULL;
  if (!rc)
    rc = pmcp__vw_begin(v, &j);
  if (!rc) {
    pmcp_json_key(j, "requirement");
    pmcp_json_string(j, req->valuestring);
    pmcp_json_key(j, "state");
    pmcp_json_string(j, "no_match");
    pmcp_json_key(j, "existing");
    pmcp_json_raw(j, ex.ptr, ex.len);
    rc = pmcp__vw_end(v, j);
  }
  pmcp_buf_dispose(&ex);
  return rc;
}
