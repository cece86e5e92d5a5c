/* SPDX-License-Identifier: MIT */
/* The entity view matrix (see matrix.h). */
#include "research/views/matrix.h"

#include <string.h>

static const char *const o_none[] = {NULL};
static const char *const o_record[] = {"field", NULL};
static const char *const o_hist[] = {"version", NULL};
static const char *const o_content[] = {"start_line", "grep", "context_lines",
                                        "version", NULL};
static const char *const o_versions[] = {"requirement", NULL};
static const char *const o_lineage[] = {"direction", "depth", "steps", NULL};

static const pmcp__view_info views[] = {
  {"card", "a short card of the entity and its available_views", o_none},
  {"record", "the full stored record; view_options.field selects a dotted "
             "path or a path list", o_record},
  {"notes", "operational notes, newest first", o_none},
  {"summary", "the person-written block of the Overview page", o_none},
  {"overview", "the whole Overview page as markdown", o_none},
  {"summary_history", "the Overview page's versions, newest first; "
                      "view_options.version reads one", o_hist},
  {"sessions", "captured agent sessions that worked on it, newest first",
   o_none},
  {"artifacts", "files it logged or holds", o_none},
  {"lineage", "provenance walk: direction upstream|downstream, depth 1-8, "
              "steps for methods", o_lineage},
  {"groups", "groups of runs it holds", o_none},
  {"versions", "versions; view_options.requirement filters (>=2, ==3, a "
               "label)", o_versions},
  {"reproduce", "what re-creates it: code state, command, environment, "
                "config", o_none},
  {"code", "code state: git commit, branch, remote, dirty flag", o_none},
  {"inherited", "config its runs inherit", o_none},
  {"readme", "the project README", o_none},
  {"papers", "papers linked to it", o_none},
  {"trajectory", "steps of the trajectory", o_none},
  {"trials", "trials it ran", o_none},
  {"metrics", "metric keys with last, min and max values", o_none},
  {"views", "each view of this entity with what it reads", o_none},
  {"handoff", "hand-off notes and sub-notes for whoever continues", o_none},
  {"events", "status events, oldest first", o_none},
  {"diff", "the uncommitted diff captured with the code state", o_none},
  {"content", "the file's text in whole 40-line sections (as many as the "
              "budget holds) with its sha256; start_line pages, grep + "
              "context_lines search, version an older one", o_content},
  {"transcript", "the session's transcript entries in order", o_none},
};
#define N_VIEWS (sizeof views / sizeof views[0])

static const char *const v_run[] = {
  "card", "record", "notes", "trajectory", "trials", "metrics", "views",
  "artifacts", "reproduce", "handoff", "lineage", "events", "code", "diff",
  "sessions", NULL};
static const char *const v_experiment[] = {
  "card", "record", "notes", "summary", "overview", "summary_history",
  "sessions", "artifacts", "lineage", "groups", "versions", "reproduce",
  "code", "inherited", NULL};
static const char *const v_project[] = {
  "card", "record", "notes", "summary", "overview", "summary_history",
  "sessions", "artifacts", "lineage", "code", "readme", "papers", NULL};
static const char *const v_artifact[] = {
  "card", "record", "content", "versions", "lineage", "sessions", NULL};
static const char *const v_dataset[] = {"card", "record", "versions",
                                        "lineage", NULL};
static const char *const v_checkpoint[] = {"card", "record", "versions",
                                           "lineage", NULL};
static const char *const v_source[] = {"card", "record", "lineage", NULL};
static const char *const v_group[] = {"card", "record", NULL};
static const char *const v_trial[] = {"card", "record", "trajectory", NULL};
static const char *const v_session[] = {"card", "record", "transcript", NULL};
static const char *const v_subnote[] = {"card", NULL};
static const char *const v_teamnote[] = {"card", "record", NULL};
static const char *const v_note[] = {"card", "record", NULL};
static const char *const v_file[] = {"card", "record", "content", NULL};
static const char *const v_workspace[] = {"card", "record", NULL};

static const char *const *const by_kind[PMCP__REF_KINDS_] = {
  [PMCP__REF_NONE] = NULL,
  [PMCP__REF_RUN] = v_run,
  [PMCP__REF_EXPERIMENT] = v_experiment,
  [PMCP__REF_PROJECT] = v_project,
  [PMCP__REF_ARTIFACT] = v_artifact,
  [PMCP__REF_DATASET] = v_dataset,
  [PMCP__REF_CHECKPOINT] = v_checkpoint,
  [PMCP__REF_SOURCE] = v_source,
  [PMCP__REF_GROUP] = v_group,
  [PMCP__REF_TRIAL] = v_trial,
  [PMCP__REF_SESSION] = v_session,
  [PMCP__REF_SUBNOTE] = v_subnote,
  [PMCP__REF_TEAMNOTE] = v_teamnote,
  [PMCP__REF_NOTE] = v_note,
  [PMCP__REF_FILE] = v_file,
  [PMCP__REF_WORKSPACE] = v_workspace,
};

const pmcp__view_info *pmcp__view_find(const char *name)
{
  for (size_t i = 0; i < N_VIEWS; i++) {
    if (strcmp(views[i].name, name) == 0)
      return &views[i];
  }
  return NULL;
}

const char *const *pmcp__views_of(pmcp__ref_kind kind, size_t *n)
{
  const char *const *v = NULL;
  if (kind > PMCP__REF_NONE && kind < PMCP__REF_KINDS_)
    v = by_kind[kind];
  size_t c = 0;
  while (v && v[c])
    c++;
  if (n)
    *n = c;
  return v;
}

int pmcp__view_allowed(pmcp__ref_kind kind, const char *view)
{
  size_t n;
  const char *const *v = pmcp__views_of(kind, &n);
  for (size_t i = 0; i < n; i++) {
    if (strcmp(v[i], view) == 0)
      return 1;
  }
  return 0;
}

int pmcp__view_option_ok(const pmcp__view_info *v, const char *key)
{
  for (size_t i = 0; v->options[i]; i++) {
    if (strcmp(v->options[i], key) == 0)
      return 1;
  }
  return 0;
}

const char *const *pmcp__view_names(void)
{
  /* Same order as views[]; test-research-refs checks they agree. */
  static const char *const fixed[] = {
    "card", "record", "notes", "summary", "overview", "summary_history",
    "sessions", "artifacts", "lineage", "groups", "versions", "reproduce",
    "code", "inherited", "readme", "papers", "trajectory", "trials",
    "metrics", "views", "handoff", "events", "diff", "content", "transcript",
    NULL};
  return fixed;
}
