/* SPDX-License-Identifier: MIT */
/* The public store API: resolves where a store lives, picks a backend and
 * dispatches every call through the backend's function table after checking
 * the handle, the tenant and the read-only flag, so no backend can forget
 * those checks. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "store/db.h"
#include "store/store_int.h"
#include "util/buf.h"
#include "util/abi.h"

int pmcp__store_alloc(pmcp_store **out, unsigned flags)
{
  pmcp_store *s = calloc(1, sizeof *s);
  *out = s;
  if (!s)
    return PMCP_ENOMEM;
  s->magic = PMCP__STORE_MAGIC;
  s->flags = flags;
  pthread_mutex_init(&s->tool_lock, NULL);
  return 0;
}

void pmcp__store_clear_error(pmcp_store *s)
{
  s->errmsg[0] = '\0';
}

int pmcp_store_set_error(pmcp_store *store, int code, const char *fmt, ...)
{
  if (!store || store->magic != PMCP__STORE_MAGIC)
    return code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(store->errmsg, sizeof store->errmsg, fmt, ap);
  va_end(ap);
  return code;
}

const char *pmcp_store_errmsg(const pmcp_store *store)
{
  if (!store || store->magic != PMCP__STORE_MAGIC)
    return "not a store handle";
  return store->errmsg;
}

int pmcp_store_readonly(const pmcp_store *store)
{
  return store && store->magic == PMCP__STORE_MAGIC &&
         (store->flags & PMCP_STORE_READONLY) != 0;
}

const char *pmcp_store_backend(const pmcp_store *store)
{
  if (!store || store->magic != PMCP__STORE_MAGIC || !store->ops.name)
    return "";
  return store->ops.name;
}

int pmcp_store_resolve(pmcp_buf *out, const char *where)
{
  pmcp__buf_reset(out);
  if (where && *where)
    return pmcp__buf_puts(out, where);
  const char *env = getenv("PROBE_STORE");
  if (env && *env)
    return pmcp__buf_puts(out, env);
  env = getenv("XDG_DATA_HOME");
  if (env && *env)
    return pmcp__buf_printf(out, "%s/probe/store.db", env);
  env = getenv("HOME");
  if (env && *env)
    return pmcp__buf_printf(out, "%s/.local/share/probe/store.db", env);
  return PMCP_EINVAL;
}

/* Finds the password spans of a URL: user:PASSWORD@ in its authority and
 * each password=VALUE of its query. Returns how many it stored (at most
 * max) as offsets and lengths into url. */
static int url_passwords(const char *url, size_t *off, size_t *len, int max)
{
  int n = 0;
  const char *a = strstr(url, "://");
  if (!a)
    return 0;
  a += 3;
  size_t alen = strcspn(a, "/?");
  const char *at = NULL;
  for (size_t i = 0; i < alen; i++)
    if (a[i] == '@')
      at = a + i;
  if (at) {
    const char *colon = memchr(a, ':', (size_t)(at - a));
    if (colon && at > colon + 1 && n < max) {
      off[n] = (size_t)(colon + 1 - url);
      len[n++] = (size_t)(at - colon - 1);
    }
  }
  const char *q = strchr(a, '?');
  while (q && n < max) {
    q++;
    if (strncmp(q, "password=", 9) == 0 && q[9] && q[9] != '&') {
      off[n] = (size_t)(q + 9 - url);
      len[n++] = strcspn(q + 9, "&");
    }
    q = strchr(q, '&');
  }
  return n;
}

int pmcp__mask_passwords(pmcp_buf *out, const char *text, const char *url)
{
  size_t off[8], len[8];
  int n = url ? url_passwords(url, off, len, 8) : 0;
  pmcp__buf_reset(out);
  for (const char *p = text; *p;) {
    int hit = -1;
    for (int i = 0; i < n && hit < 0; i++)
      if (strncmp(p, url + off[i], len[i]) == 0)
        hit = i;
    if (hit >= 0) {
      if (pmcp__buf_puts(out, "***"))
        return PMCP_ENOMEM;
      p += len[hit];
    } else if (pmcp__buf_append(out, p++, 1)) {
      return PMCP_ENOMEM;
    }
  }
  return pmcp__buf_puts(out, "");
}

int pmcp_store_describe(pmcp_buf *out, const char *where)
{
  pmcp_buf loc = PMCP_BUF_INIT;
  int rc = pmcp_store_resolve(&loc, where);
  if (!rc)
    rc = pmcp__mask_passwords(out, loc.ptr, loc.ptr);
  pmcp_buf_dispose(&loc);
  return rc;
}

static int is_postgres_url(const char *w)
{
  return strncmp(w, "postgresql://", 13) == 0 || strncmp(w, "postgres://", 11) == 0;
}

int pmcp_store_open(pmcp_store **out, const char *where, unsigned flags)
{
  if (!out)
    return PMCP_EINVAL;
  *out = NULL;
  pmcp_store *s;
  int rc = pmcp__store_alloc(&s, flags);
  if (rc)
    return rc;
  *out = s;
  if (flags & ~(unsigned)(PMCP_STORE_READONLY | PMCP_STORE_CREATE))
    return pmcp_store_set_error(s, PMCP_EINVAL, "unknown store open flags 0x%x", flags);
  if ((flags & PMCP_STORE_READONLY) && (flags & PMCP_STORE_CREATE))
    return pmcp_store_set_error(s, PMCP_EINVAL,
                                "a store cannot be created by a read-only open");
  pmcp_buf loc = PMCP_BUF_INIT;
  rc = pmcp_store_resolve(&loc, where);
  if (rc) {
    pmcp_buf_dispose(&loc);
    return pmcp_store_set_error(s, rc,
        "no store location: give --store, set PROBE_STORE, XDG_DATA_HOME or HOME");
  }
  if (is_postgres_url(loc.ptr))
#ifdef PMCP_HAVE_POSTGRES
    rc = pmcp__store_pg_open(s, loc.ptr, flags);
#else
    rc = pmcp_store_set_error(s, PMCP_EUNSUPPORTED,
        "the PostgreSQL store backend is not available in this build");
#endif
  else if (strstr(loc.ptr, "://"))
    rc = pmcp_store_set_error(s, PMCP_EUNSUPPORTED,
        "unsupported store URL scheme (use a file path or postgresql://)");
  else
    rc = pmcp__store_sqlite_open(s, loc.ptr, flags);
  pmcp_buf_dispose(&loc);
  return rc;
}

int pmcp_store_new_custom(pmcp_store **out, const pmcp_store_ops *ops, void *ctx,
                          unsigned flags)
{
  if (!out)
    return PMCP_EINVAL;
  *out = NULL;
  if (!ops || !PMCP__VERSION_OK(ops->version, PMCP_STORE_OPS_VERSION) ||
      (flags & ~(unsigned)PMCP_STORE_READONLY))
    return PMCP_EINVAL;
  pmcp_store *s;
  int rc = pmcp__store_alloc(&s, flags);
  if (rc)
    return rc;
  s->ops = *ops;
  if (!s->ops.name)
    s->ops.name = "custom";
  s->ctx = ctx;
  *out = s;
  return 0;
}

void pmcp_store_free(pmcp_store *store)
{
  if (!store || store->magic != PMCP__STORE_MAGIC)
    return;
  if (store->ops.close)
    store->ops.close(store, store->ctx);
  store->magic = 0;
  if (store->attached_dispose)
    store->attached_dispose(store->attached);
  pthread_mutex_destroy(&store->tool_lock);
  free(store);
}

/* Handle checks shared by every call. */
#define CHECK_HANDLE(s)                                                       \
  do {                                                                        \
    if (!(s) || (s)->magic != PMCP__STORE_MAGIC)                              \
      return PMCP_EMISUSE;                                                    \
    pmcp__store_clear_error(s);                                               \
  } while (0)
#define CHECK_OP(s, op)                                                       \
  do {                                                                        \
    if (!(s)->ops.op)                                                         \
      return pmcp_store_set_error((s), PMCP_EUNSUPPORTED,                     \
                                  "the %s store backend does not support %s", \
                                  (s)->ops.name ? (s)->ops.name : "custom", #op); \
  } while (0)
#define CHECK_TENANT(s, t)                                                    \
  do {                                                                        \
    if ((t).id <= 0)                                                          \
      return pmcp_store_set_error((s), PMCP_EINVAL,                           \
                                  "no tenant: get one with pmcp_store_tenant()"); \
    if ((t).workspace != 0 && !(s)->db)                                       \
      return pmcp_store_set_error((s), PMCP_EUNSUPPORTED,                     \
                                  "this store backend cannot scope reads to a workspace"); \
  } while (0)
#define CHECK_WRITE(s)                                                        \
  do {                                                                        \
    if ((s)->flags & PMCP_STORE_READONLY)                                     \
      return pmcp_store_set_error((s), PMCP_EREADONLY,                        \
                                  "the store is open read-only");             \
  } while (0)
#define READ_CALL(s, t, op, ...)                                              \
  CHECK_HANDLE(s);                                                            \
  CHECK_OP(s, op);                                                            \
  CHECK_TENANT(s, t);                                                         \
  return (s)->ops.op((s), (s)->ctx, (t), __VA_ARGS__)
#define WRITE_CALL(s, t, op, ...)                                             \
  CHECK_HANDLE(s);                                                            \
  CHECK_OP(s, op);                                                            \
  CHECK_WRITE(s);                                                             \
  CHECK_TENANT(s, t);                                                         \
  return (s)->ops.op((s), (s)->ctx, (t), __VA_ARGS__)

int pmcp_store_tenant(pmcp_store *store, const char *name, unsigned flags, pmcp_tenant *out)
{
  CHECK_HANDLE(store);
  CHECK_OP(store, tenant);
  if (!out)
    return PMCP_EINVAL;
  memset(out, 0, sizeof *out);
  if (flags & ~(unsigned)PMCP_STORE_CREATE)
    return pmcp_store_set_error(store, PMCP_EINVAL, "unknown tenant flags 0x%x", flags);
  if ((flags & PMCP_STORE_CREATE))
    CHECK_WRITE(store);
  return store->ops.tenant(store, store->ctx, name ? name : "default", flags, out);
}

int pmcp_store_scope(pmcp_store *store, pmcp_tenant t, const char *workspace,
                     pmcp_tenant *out)
{
  CHECK_HANDLE(store);
  if (!out)
    return PMCP_EINVAL;
  memset(out, 0, sizeof *out);
  if (t.id <= 0)
    return pmcp_store_set_error(store, PMCP_EINVAL, "no tenant: get one with pmcp_store_tenant()");
  if (!workspace) {
    out->id = t.id;
    return 0;
  }
  if (!store->db)
    return pmcp_store_set_error(store, PMCP_EUNSUPPORTED,
                                "this store backend cannot scope reads to a workspace");
  const char *id = strncmp(workspace, "workspace:", 10) == 0 ? workspace + 10 : workspace;
  if (!pmcp__id_ok(id))
    return pmcp_store_set_error(store, PMCP_EINVAL, "invalid workspace id '%.64s'", id);
  char tid[24];
  snprintf(tid, sizeof tid, "%lld", (long long)t.id);
  const char *p[] = {tid, id};
  pmcp__db_res *r = NULL;
  int rc = pmcp__db_tenant(store, t.id);
  if (rc == 0)
    rc = pmcp__db_query(store, "SELECT id FROM workspaces WHERE tenant_id=$1 AND slug=$2", 2,
                        p, &r);
  if (rc)
    return rc;
  int64_t row = pmcp__db_nrows(r) == 1 ? strtoll(pmcp__db_get(r, 0, 0), NULL, 10) : 0;
  pmcp__db_res_free(r);
  int is_default = strcmp(id, "default") == 0;
  if (!row && !is_default)
    return pmcp_store_set_error(store, PMCP_ENOTFOUND, "no workspace '%.128s'", id);
  out->id = t.id;
  /* The default workspace's row is made when a project first needs it;
   * until then no project is in it (-1 matches no row) but it still holds
   * whatever is unfiled. */
  out->workspace = row ? row : -1;
  out->unfiled = is_default;
  return 0;
}

int pmcp_store_secret(pmcp_store *store, const char *name, pmcp_buf *out)
{
  CHECK_HANDLE(store);
  CHECK_OP(store, secret);
  if (!name || !out)
    return PMCP_EINVAL;
  return store->ops.secret(store, store->ctx, name, out);
}

int pmcp_store_version(pmcp_store *store, pmcp_tenant t, uint64_t *out)
{
  if (!out)
    return PMCP_EINVAL;
  READ_CALL(store, t, version_of, out);
}

int pmcp_store_begin(pmcp_store *store)
{
  CHECK_HANDLE(store);
  CHECK_OP(store, begin);
  CHECK_WRITE(store);
  return store->ops.begin(store, store->ctx);
}

int pmcp_store_commit(pmcp_store *store)
{
  CHECK_HANDLE(store);
  CHECK_OP(store, commit);
  return store->ops.commit(store, store->ctx);
}

int pmcp_store_rollback(pmcp_store *store)
{
  CHECK_HANDLE(store);
  CHECK_OP(store, rollback);
  return store->ops.rollback(store, store->ctx);
}

int pmcp_store_create(pmcp_store *store, pmcp_tenant t, const char *kind,
                      const pmcp_entity_spec *spec, pmcp_buf *out_id)
{
  if (!kind || !spec)
    return PMCP_EINVAL;
  WRITE_CALL(store, t, create, kind, spec, out_id);
}

int pmcp_store_run_create(pmcp_store *store, pmcp_tenant t, const pmcp_run_spec *spec,
                          pmcp_buf *out_id)
{
  if (!spec)
    return PMCP_EINVAL;
  WRITE_CALL(store, t, run_create, spec, out_id);
}

int pmcp_store_run_status(pmcp_store *store, pmcp_tenant t, const char *run,
                          const char *status, int64_t time_ms)
{
  if (!run || !status)
    return PMCP_EINVAL;
  WRITE_CALL(store, t, run_status, run, status, time_ms);
}

int pmcp_store_run_event(pmcp_store *store, pmcp_tenant t, const char *run,
                         const char *kind, const char *message, int64_t time_ms)
{
  if (!run || !kind)
    return PMCP_EINVAL;
  WRITE_CALL(store, t, run_event, run, kind, message, time_ms);
}

int pmcp_store_set_deleted(pmcp_store *store, pmcp_tenant t, const char *ref, int deleted)
{
  if (!ref)
    return PMCP_EINVAL;
  WRITE_CALL(store, t, set_deleted, ref, deleted);
}

int pmcp_store_set_attr(pmcp_store *store, pmcp_tenant t, const char *ref,
                        const char *path, const pmcp_value *value)
{
  if (!ref || !path || !value)
    return PMCP_EINVAL;
  WRITE_CALL(store, t, set_attr, ref, path, value);
}

int pmcp_store_unset_attr(pmcp_store *store, pmcp_tenant t, const char *ref,
                          const char *path)
{
  if (!ref || !path)
    return PMCP_EINVAL;
  WRITE_CALL(store, t, unset_attr, ref, path);
}

int pmcp_store_tag(pmcp_store *store, pmcp_tenant t, const char *ref, const char *tag,
                   int add)
{
  if (!ref || !tag)
    return PMCP_EINVAL;
  WRITE_CALL(store, t, tag, ref, tag, add);
}

int pmcp_store_series(pmcp_store *store, pmcp_tenant t, const char *run,
                      const pmcp_series_spec *spec, int64_t *out_series)
{
  if (!run || !spec || !out_series ||
      !PMCP__VERSION_OK(spec->version, PMCP_SERIES_SPEC_VERSION))
    return PMCP_EINVAL;
  WRITE_CALL(store, t, series, run, spec, out_series);
}

int pmcp_store_log(pmcp_store *store, pmcp_tenant t, int64_t series,
                   const pmcp_point *points, size_t n)
{
  if (n && !points)
    return PMCP_EINVAL;
  WRITE_CALL(store, t, log, series, points, n);
}

int pmcp_store_log_histogram(pmcp_store *store, pmcp_tenant t, int64_t series,
                             int64_t step, int64_t time_ms, const double *edges,
                             const double *counts, size_t n_bins)
{
  WRITE_CALL(store, t, log_histogram, series, step, time_ms, edges, counts, n_bins);
}

int pmcp_store_log_scatter(pmcp_store *store, pmcp_tenant t, int64_t series,
                           int64_t step, int64_t time_ms, const double *x,
                           const double *y, size_t n)
{
  WRITE_CALL(store, t, log_scatter, series, step, time_ms, x, y, n);
}

int pmcp_store_note(pmcp_store *store, pmcp_tenant t, const pmcp_note_spec *spec,
                    pmcp_buf *out_id, int64_t *out_version)
{
  if (!spec)
    return PMCP_EINVAL;
  WRITE_CALL(store, t, note, spec, out_id, out_version);
}

int pmcp_store_artifact_add(pmcp_store *store, pmcp_tenant t,
                            const pmcp_artifact_spec *spec, pmcp_buf *out_id,
                            int64_t *out_version)
{
  if (!spec)
    return PMCP_EINVAL;
  WRITE_CALL(store, t, artifact_add, spec, out_id, out_version);
}

int pmcp_store_artifact_label(pmcp_store *store, pmcp_tenant t, const char *ref,
                              int64_t version, const char *label)
{
  if (!ref || !label)
    return PMCP_EINVAL;
  WRITE_CALL(store, t, artifact_label, ref, version, label);
}

int pmcp_store_artifact_promote(pmcp_store *store, pmcp_tenant t, const char *ref)
{
  if (!ref)
    return PMCP_EINVAL;
  WRITE_CALL(store, t, artifact_promote, ref);
}

int pmcp_store_artifact_content(pmcp_store *store, pmcp_tenant t, const char *ref,
                                int64_t version, pmcp_buf *out, pmcp_buf *meta)
{
  if (!ref || !out)
    return PMCP_EINVAL;
  READ_CALL(store, t, artifact_content, ref, version, out, meta);
}

int pmcp_store_paper(pmcp_store *store, pmcp_tenant t, const pmcp_paper *paper)
{
  if (!paper || !PMCP__VERSION_OK(paper->version, PMCP_PAPER_VERSION))
    return PMCP_EINVAL;
  WRITE_CALL(store, t, paper, paper);
}

int pmcp_store_put(pmcp_store *store, pmcp_tenant t, const char *kind, const char *json,
                   size_t len, pmcp_buf *out_ref)
{
  if (!kind || !json)
    return PMCP_EINVAL;
  WRITE_CALL(store, t, put, kind, json, len, out_ref);
}

int pmcp_store_get(pmcp_store *store, pmcp_tenant t, const char *ref, pmcp_buf *out)
{
  if (!ref || !out)
    return PMCP_EINVAL;
  READ_CALL(store, t, get, ref, out);
}

int pmcp__store_get_tree(pmcp_store *store, pmcp_tenant t, const char *ref, unsigned flags,
                         cJSON **out)
{
  if (!out)
    return PMCP_EINVAL;
  *out = NULL;
  if (!ref)
    return PMCP_EINVAL;
  CHECK_HANDLE(store);
  CHECK_OP(store, get);
  CHECK_TENANT(store, t);
  if (store->get_tree)
    return store->get_tree(store, store->ctx, t, ref, flags, out);
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = store->ops.get(store, store->ctx, t, ref, &b);
  if (!rc && !(*out = cJSON_ParseWithLength(b.ptr ? b.ptr : "", b.len)))
    rc = pmcp_store_set_error(store, PMCP_ECORRUPT, "the store returned a record that is not JSON");
  pmcp_buf_dispose(&b);
  return rc;
}

int pmcp_store_list(pmcp_store *store, pmcp_tenant t, const pmcp_list_opts *opts,
                    pmcp_buf *out)
{
  if (!opts || !out || !opts->kind || !PMCP__VERSION_OK(opts->version, PMCP_LIST_OPTS_VERSION))
    return PMCP_EINVAL;
  READ_CALL(store, t, list, opts, out);
}

int pmcp_store_search(pmcp_store *store, pmcp_tenant t, const char *query,
                      const char *kinds, const char *after, size_t limit, pmcp_buf *out)
{
  if (!query || !out)
    return PMCP_EINVAL;
  READ_CALL(store, t, search, query, kinds, after, limit, out);
}

int pmcp_store_series_list(pmcp_store *store, pmcp_tenant t, const char *run,
                           pmcp_buf *out)
{
  if (!run || !out)
    return PMCP_EINVAL;
  READ_CALL(store, t, series_list, run, out);
}

int pmcp_store_points(pmcp_store *store, pmcp_tenant t, int64_t series, int64_t step_from,
                      int64_t step_to, int64_t after_id, pmcp_point *out, size_t cap,
                      size_t *n_out, int64_t *next_id)
{
  if ((cap && !out) || !n_out || !next_id)
    return PMCP_EINVAL;
  READ_CALL(store, t, points, series, step_from, step_to, after_id, out, cap, n_out,
            next_id);
}

int pmcp__store_scan(pmcp_store *store, pmcp_tenant t, int64_t series, int64_t step_from,
                     int64_t step_to, unsigned flags, const pmcp__scan_cb *cb)
{
  CHECK_HANDLE(store);
  CHECK_TENANT(store, t);
  if (!cb || !cb->points || step_from > step_to)
    return pmcp_store_set_error(store, PMCP_EINVAL, "invalid scan");
  if (store->scan)
    return store->scan(store, store->ctx, t, series, step_from, step_to, flags, cb);
  CHECK_OP(store, points);
  /* A backend without a scan: its points, a page at a time. */
  enum { PAGE = 8192 };
  pmcp_point *buf = malloc(PAGE * sizeof *buf);
  if (!buf)
    return pmcp_store_set_error(store, PMCP_ENOMEM, "out of memory");
  int64_t after = 0;
  int rc;
  for (;;) {
    size_t got = 0;
    int64_t next = 0;
    rc = store->ops.points(store, store->ctx, t, series, step_from, step_to, after, buf, PAGE,
                           &got, &next);
    if (!rc && got)
      rc = cb->points(cb->ud, buf, got);
    if (rc || !next)
      break;
    after = next;
  }
  free(buf);
  return rc;
}

int pmcp_store_summary(pmcp_store *store, pmcp_tenant t, int64_t series, int64_t step_from,
                       int64_t step_to, size_t n_buckets, pmcp_bucket *out, size_t *n_out)
{
  if (!out || !n_out)
    return PMCP_EINVAL;
  READ_CALL(store, t, summary, series, step_from, step_to, n_buckets, out, n_out);
}

int pmcp_store_series_sets(pmcp_store *store, pmcp_tenant t, int64_t series,
                           int64_t step_from, int64_t step_to, const char *after,
                           size_t limit, pmcp_buf *out)
{
  if (!out)
    return PMCP_EINVAL;
  READ_CALL(store, t, series_sets, series, step_from, step_to, after, limit, out);
}

int pmcp_store_summary_time(pmcp_store *store, pmcp_tenant t, int64_t series,
                            int64_t time_from, int64_t time_to, size_t n_buckets,
                            pmcp_bucket *out, size_t *n_out)
{
  if (!out || !n_out)
    return PMCP_EINVAL;
  READ_CALL(store, t, summary_time, series, time_from, time_to, n_buckets, out, n_out);
}
