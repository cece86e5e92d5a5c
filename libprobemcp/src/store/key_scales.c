/* SPDX-License-Identifier: MIT */
/* pmcp__store_key_scales() (runtable.h): which scales a project logs a
 * series key on, for both built-in backends through their SQL hooks
 * (db.h): one probe per scale, each stopping at its first row. */
#include <stdio.h>

#include "store/db.h"
#include "store/runtable.h"
#include "store/store_int.h"
#include "store/ws_scope.h"

int pmcp__store_key_scales(pmcp_store *s, pmcp_tenant t, const char *project,
                           const char *key, unsigned *mask)
{
  *mask = 0;
  if (!s || !s->db)
    return PMCP_EUNSUPPORTED;
  static const char *const scales[] = {"step", "env_step", "episode"};
  char tid[24];
  snprintf(tid, sizeof tid, "%lld", (long long)t.id);
  static const char sql[] =
      "SELECT 1 FROM series se JOIN runs r ON r.id=se.run_id"
      " JOIN projects p ON p.id=r.project_id WHERE p.tenant_id=$1"
      " AND p.slug=$2/*ws row projects p.id*/ AND r.deleted=0 AND se.key=$3 AND se.scale=$4"
      " LIMIT 1";
  /* Only a project of the call's workspace (a scoped read). */
  pmcp_buf scoped = PMCP_BUF_INIT;
  int rc = pmcp__ws_marks(&scoped, sql, t);
  if (rc < 0)
    return pmcp_store_set_error(s, rc, rc == PMCP_ENOMEM ? "out of memory" : "bad scope mark");
  const char *q = rc ? scoped.ptr : sql;
  rc = pmcp__db_tenant(s, t.id);
  for (unsigned i = 0; !rc && i < 3; i++) {
    const char *p[] = {tid, project, key, scales[i]};
    pmcp__db_res *r = NULL;
    rc = pmcp__db_query(s, q, 4, p, &r);
    if (!rc && pmcp__db_nrows(r))
      *mask |= 1u << i;
    pmcp__db_res_free(r);
  }
  pmcp_buf_dispose(&scoped);
  return rc;
}

int pmcp__store_key_split(pmcp_store *s, pmcp_tenant t, const char *project,
                          const char *key, const char *scale, char *out, size_t outlen)
{
  if (outlen)
    *out = '\0';
  if (!s || !s->db)
    return PMCP_EUNSUPPORTED;
  char tid[24];
  snprintf(tid, sizeof tid, "%lld", (long long)t.id);
  int rc = pmcp__db_tenant(s, t.id);
  if (rc)
    return rc;
  const char *p[] = {tid, project, key, scale};
  pmcp__db_res *r = NULL;
  /* labelled series of runs that have no unlabelled series of the key;
   * "labels <> '{}'" as the two ranges either side of it, so that
   * series_key_shape reads only labelled series (not every run's) */
#define LABELLED(cmp)                                                                       \
  "SELECT se.labels FROM series se JOIN runs r ON r.id=se.run_id"                          \
  " JOIN projects p ON p.id=r.project_id WHERE p.tenant_id=$1"                             \
  " AND p.slug=$2 AND r.deleted=0 AND se.key=$3 AND se.scale=$4"                           \
  " AND se.labels" cmp "'{}' AND NOT EXISTS (SELECT 1 FROM series u"                        \
  " WHERE u.run_id=se.run_id AND u.key=se.key AND u.scale=se.scale AND u.labels='{}')"
  rc = pmcp__db_query(s, LABELLED("<") " UNION " LABELLED(">") " ORDER BY 1 LIMIT 4", 4, p,
                      &r);
#undef LABELLED
  size_t used = 0;
  for (size_t i = 0; !rc && i < pmcp__db_nrows(r) && used < outlen; i++) {
    const char *v = pmcp__db_get(r, i, 0);
    int n = snprintf(out + used, outlen - used, "%s%s", i ? ", " : "", v ? v : "");
    used += n > 0 ? (size_t)n : 0;
  }
  pmcp__db_res_free(r);
  return rc;
}
