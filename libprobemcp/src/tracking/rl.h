/* SPDX-License-Identifier: MIT */
/* The RL tools of the tracking toolset (rl_env.c, rl.c, rl_series.c): a
 * run's environments, read from the store.
 *
 * An environment is a value of the `env` label on the run's RL series
 * (scale env_step or episode; the seed's ENVIRONMENT_STEP and EPISODE),
 * or one with attributes recorded ("env-attribute" records). Its
 * attributes are versioned by episode: a version holds from its episode
 * on, so the value "as of episode N" is the version with the largest
 * episode <= N. Besides the recorded paths every environment has
 * sys/id, and sys/last_episode / sys/last_step when it logs series on
 * those scales, so filters and sorts can use them. */
#ifndef PMCP_TRACKING_RL_H
#define PMCP_TRACKING_RL_H

#include "tracking/tracking.h"

/* The label that names a series' environment. */
#define PMCP__RL_LABEL "env"

typedef struct pmcp__rl_env {
  char *id;
  cJSON *attrs;    /* path -> value as of the asked episode (sys/ paths too) */
  cJSON *types;    /* path -> type */
  cJSON *since;    /* path -> the episode of the version shown */
  cJSON *versions; /* every recorded version: [{path, episode, type, value}] */
  size_t n_series;
  struct pmcp__rl_run *run;
} pmcp__rl_env;

typedef struct pmcp__rl_run {
  pmcp__tracking *tk;
  pmcp__mx_catalog cat;
  char id[160];
  pmcp__rl_env *envs;
  size_t n_envs, cap;
  int64_t latest_episode, latest_step; /* -1: none */
  size_t n_rl_series;
} pmcp__rl_run;

/* Reads the call's `run` (with the `project` / `workspace` check), its
 * series catalog, its environments and their attributes as of episode
 * @p as_of (INT64_MAX: the latest). Environments are in natural order of
 * their ids (numbers by value). Returns 0, or 1 after sending an error (a
 * missing run or project is named), or a negative code; dispose either
 * way. */
int pmcp__rl_load(pmcp_call *call, pmcp__tracking *tk, int64_t as_of, pmcp__rl_run *out);
void pmcp__rl_dispose(pmcp__rl_run *r);
/* The same for run @p run (an id or ref); the project check only with
 * @p check_project. */
int pmcp__rl_load_run(pmcp_call *call, pmcp__tracking *tk, const char *run, int check_project,
                      int64_t as_of, pmcp__rl_run *out);

/* True for the RL scales (store names env_step, episode). */
int pmcp__rl_is_rl_scale(const char *store_scale);
/* Natural order of environment ids: numbers by value (env 10 follows
 * env 9), then text. */
int pmcp__rl_id_cmp(const char *a, const char *b);

/* The environment @p id, or NULL. */
pmcp__rl_env *pmcp__rl_find(pmcp__rl_run *r, const char *id);
/* Sends "environment '%s' not found in run '%s'"; returns 0. */
int pmcp__rl_env_missing(pmcp_call *call, const pmcp__rl_run *r, const char *id);

/* The series of @p env with @p key on store scale @p scale whose labels
 * include @p labels (NULL: any), or NULL. */
const pmcp__mx_series *pmcp__rl_series(const pmcp__rl_env *env, const char *key,
                                       const char *scale, const cJSON *labels);

/* The environment as a filter row (attributes and series summaries). */
pmcp__filter_row pmcp__rl_row(pmcp__rl_env *env);

/* Checks a filter / sort / summary-column JSON: every series condition
 * names a known scale (RL series always need theirs). Returns 1 after
 * sending an error naming the offending part, else 0. */
int pmcp__rl_check_scales(pmcp_call *call, const char *what, const cJSON *j);

/* Selects environments by the call's `environments` (ids; missing ones
 * are named) and `filter`: @p keep[i] set for each chosen one. Returns 0,
 * or 1 after sending an error, or a negative code. */
int pmcp__rl_select(pmcp_call *call, pmcp__rl_run *r, unsigned char *keep);

/* The store scale of the call's required `scale` argument. */
const char *pmcp__rl_scale_arg(pmcp_call *call);

int pmcp__rl_fetch_buckets(pmcp_call *call, void *ud);
int pmcp__rl_aggregate(pmcp_call *call, void *ud);

#endif
