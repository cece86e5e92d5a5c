/* SPDX-License-Identifier: MIT */
/* The store (both backends): "env-attribute" records, the attributes of an RL run's
 * environments. An environment is named by the value of the `env` label
 * its series carry; its attributes are versioned by episode: each record
 * is the value a path took from that episode on, so reading "as of
 * episode N" takes, per path, the version with the largest episode <= N.
 * Writing the same (run, env, path, episode) again replaces that version. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "store/put.h"
#include "util/json.h"

/* The same rule as run attribute paths: slash-separated names. */
static int path_ok(const char *p)
{
  size_t n = strlen(p);
  if (n == 0 || n > 256 || p[0] == '/' || p[n - 1] == '/' || strstr(p, "//"))
    return 0;
  for (const unsigned char *c = (const unsigned char *)p; *c; c++)
    if (*c < 0x20 || *c == 0x7f)
      return 0;
  return 1;
}

/* The stored type of a JSON value, or NULL when it is not an attribute
 * value (objects, nulls, mixed arrays). */
static const char *value_type(const cJSON *v)
{
  if (cJSON_IsString(v))
    return "string";
  if (cJSON_IsBool(v))
    return "bool";
  if (cJSON_IsNumber(v)) {
    if (!isfinite(v->valuedouble))
      return NULL;
    double d = v->valuedouble;
    return d == floor(d) && fabs(d) < 9007199254740992.0 ? "int" : "float";
  }
  if (cJSON_IsArray(v)) {
    const cJSON *x;
    cJSON_ArrayForEach(x, v) if (!cJSON_IsString(x)) return NULL;
    return "string_set";
  }
  return NULL;
}

/* "env-attribute" {run, env, path, value, episode?}: @p value a string,
 * number, boolean or array of strings; @p episode (default 0) the first
 * episode the value holds for. */
int pmcp__put_env_attribute(put_ctx *c)
{
  const char *run, *env, *path;
  int has_ep = 0, rc;
  int64_t episode = 0;
  if ((rc = pmcp__put_fstr(c, "run", 1, &run)) || (rc = pmcp__put_fstr(c, "env", 1, &env)) ||
      (rc = pmcp__put_fstr(c, "path", 1, &path)) ||
      (rc = pmcp__put_fint(c, "episode", 0, &has_ep, &episode)))
    return rc;
  if (strlen(env) > 128)
    return pmcp_store_set_error(c->s, PMCP_EINVAL,
                                "env-attribute record: \"env\" is longer than 128 characters");
  if (!path_ok(path))
    return pmcp_store_set_error(c->s, PMCP_EINVAL,
        "env-attribute record: invalid path '%.64s' (slash-separated names such as "
        "physics/gravity)", path);
  if (!strncmp(path, "sys/", 4))
    return pmcp_store_set_error(c->s, PMCP_EINVAL,
        "env-attribute record: paths under sys/ are reserved (sys/id, sys/last_episode, "
        "sys/last_step are derived)");
  if (episode < 0)
    return pmcp_store_set_error(c->s, PMCP_EINVAL,
                                "env-attribute record: \"episode\" must be 0 or more");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->o, "value");
  if (!v)
    return pmcp_store_set_error(c->s, PMCP_EINVAL, "env-attribute record needs \"value\"");
  const char *type = value_type(v);
  if (!type)
    return pmcp_store_set_error(c->s, PMCP_EINVAL,
        "env-attribute record: \"value\" must be a string, a finite number, true/false or "
        "a list of strings");
  char k[32];
  int64_t rid;
  if ((rc = pmcp__sql_resolve(c->s, c->q, c->t, run, "run", k, &rid)))
    return rc;
  char *text = pmcp__cjson_print(v);
  if (!text)
    return pmcp_store_set_error(c->s, PMCP_ENOMEM, "out of memory");
  static const char sql[] =
      "INSERT INTO env_attributes(tenant_id, run_id, env, path, episode, type, value, created)"
      " VALUES(?1,?2,?3,?4,?5,?6,?7,?8) ON CONFLICT(run_id, env, path, episode) DO UPDATE SET"
      " type=excluded.type, value=excluded.value";
  pmcp__stmt *st;
  if ((rc = pmcp__sql_prep(c->s, c->q, sql, &st)) == 0) {
    pmcp__st_bind_int64(st, 1, c->t.id);
    pmcp__st_bind_int64(st, 2, rid);
    pmcp__st_bind_text(st, 3, env);
    pmcp__st_bind_text(st, 4, path);
    pmcp__st_bind_int64(st, 5, episode);
    pmcp__st_bind_text(st, 6, type);
    pmcp__st_bind_text(st, 7, text);
    pmcp__st_bind_int64(st, 8, pmcp__now_ms());
    rc = pmcp__st_run1(c->s, st, "env-attribute");
  }
  cJSON_free(text);
  if (rc == 0) {
    const char *rs = strchr(run, ':') ? strchr(run, ':') + 1 : run;
    pmcp__buf_reset(&c->ref);
    rc = pmcp__buf_printf(&c->ref, "run:%s", rs);
  }
  return rc;
}
