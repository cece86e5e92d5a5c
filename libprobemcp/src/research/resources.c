/* SPDX-License-Identifier: MIT */
/* Resources of the research server: each run's card at probe://run/{id}
 * (a resource template), the entity view matrix at probe://views, and the
 * skill that teaches the toolset (skill://research-with-probe/...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/refs.h"
#include "research/research.h"
#include "research/views/matrix.h"
#include "research/views/views.h"

static int read_run(pmcp_call *call, void *ud)
{
  pmcp__research *rs = ud;
  const char *id = pmcp_call_uri_var(call, "id");
  if (!id || !pmcp__ref_id_ok(id, strlen(id)))
    return PMCP_ENOTFOUND;
  char ref[PMCP__REF_MAX + 8];
  snprintf(ref, sizeof ref, "run:%s", id);
  cJSON *rec = NULL;
  char err[300];
  /* The run card is read in the workspace the caller acts in, like the
   * tools (a resource read has no arguments: the caller's default). */
  pmcp__research view = *rs;
  if (rs->scope) {
    pmcp_call_scope sc = PMCP__CALL_SCOPE_INIT;
    int src = pmcp__call_scope_ask(rs->scope, rs->scope_0_1, call, NULL, &sc, err, sizeof err,
                                   rs->scope_ud);
    if (src == 0 && pmcp_call_scope_workspace(&sc)[0]) {
      pthread_mutex_lock(rs->lock);
      src = pmcp_store_scope(rs->store, rs->tenant, pmcp_call_scope_workspace(&sc), &view.tenant);
      pthread_mutex_unlock(rs->lock);
    }
    pmcp__call_scope_dispose(&sc);
    if (src)
      return src == PMCP_ENOMEM ? src : PMCP_ENOTFOUND;
  }
  int rc = pmcp__rs_get(&view, ref, &rec, err, sizeof err);
  if (rc)
    return rc == PMCP_ENOMEM ? rc : PMCP_ENOTFOUND;
  /* the stored values as they are (a resource is not a budgeted summary) */
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, 0)) {
    cJSON_Delete(rec);
    return PMCP_ENOMEM;
  }
  pmcp__view_card(j, rec, PMCP__REF_RUN, 1);
  cJSON_Delete(rec);
  const char *txt = pmcp_json_text(j, NULL);
  rc = txt ? pmcp_result_resource_text(call, pmcp_call_uri(call), "application/json", txt)
           : PMCP_ENOMEM;
  pmcp_json_free(j);
  return rc;
}

static int read_views(pmcp_call *call, void *ud)
{
  (void)ud;
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, 0))
    return PMCP_ENOMEM;
  pmcp_json_object_begin(j);
  for (int k = PMCP__REF_RUN; k < PMCP__REF_KINDS_; k++) {
    size_t n;
    const char *const *v = pmcp__views_of((pmcp__ref_kind)k, &n);
    pmcp_json_key(j, pmcp__ref_kind_name((pmcp__ref_kind)k));
    pmcp_json_array_begin(j);
    for (size_t i = 0; i < n; i++)
      pmcp_json_string(j, v[i]);
    pmcp_json_array_end(j);
  }
  pmcp_json_object_end(j);
  const char *txt = pmcp_json_text(j, NULL);
  int rc = txt ? pmcp_result_resource_text(call, pmcp_call_uri(call), "application/json", txt)
               : PMCP_ENOMEM;
  pmcp_json_free(j);
  return rc;
}

int pmcp__research_add_resources(pmcp_server *server, pmcp__research *rs)
{
  pmcp_resource_def d = PMCP_RESOURCE_DEF_INIT;
  d.uri_template = "probe://run/{id}";
  d.name = "run-card";
  d.title = "Run card";
  d.description = "A run's card (status, timings, available_views) as JSON";
  d.mime_type = "application/json";
  d.read = read_run;
  d.ud = pmcp__research_retain(rs);
  d.ud_free = pmcp__research_release;
  int rc = pmcp_server_add_resource(server, &d);
  if (rc)
    return rc;
  pmcp_resource_def m = PMCP_RESOURCE_DEF_INIT;
  m.uri = "probe://views";
  m.name = "views";
  m.title = "Entity views";
  m.description = "Which entity views each ref kind has";
  m.mime_type = "application/json";
  m.read = read_views;
  m.ud = pmcp__research_retain(rs);
  m.ud_free = pmcp__research_release;
  return pmcp_server_add_resource(server, &m);
}

int pmcp__research_add_skill(pmcp_server *server, pmcp__research *rs)
{
  (void)rs;
  pmcp_skill_def d = PMCP_SKILL_DEF_INIT;
  d.path = PMCP__RESEARCH_SKILL;
  d.files = pmcp__research_skill;
  d.n_files = pmcp__research_skill_n;
  return pmcp_server_add_skill(server, &d);
}
