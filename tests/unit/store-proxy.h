/* SPDX-License-Identifier: MIT */
/* A custom store backend (pmcp_store_new_custom) that forwards every read
 * to another store handle. Tools that use a backend's own fast paths when
 * the store is SQLite (list_runs' run table, pmcp__store_run_page) see a
 * backend they do not know through it, so tests can run the generic,
 * run-by-run paths over the very same data and compare the answers. */
#ifndef STORE_PROXY_H
#define STORE_PROXY_H

#include "probemcp/probemcp.h"

/* Passes @p rc and the inner store's message up to the outer handle. */
static int px_up(pmcp_store *s, pmcp_store *in, int rc)
{
  return rc ? pmcp_store_set_error(s, rc, "%s", pmcp_store_errmsg(in)) : 0;
}

static int px_tenant(pmcp_store *s, void *ctx, const char *name, unsigned flags,
                     pmcp_tenant *out)
{
  return px_up(s, ctx, pmcp_store_tenant(ctx, name, flags, out));
}

static int px_secret(pmcp_store *s, void *ctx, const char *name, pmcp_buf *out)
{
  return px_up(s, ctx, pmcp_store_secret(ctx, name, out));
}

static int px_version(pmcp_store *s, void *ctx, pmcp_tenant t, uint64_t *out)
{
  return px_up(s, ctx, pmcp_store_version(ctx, t, out));
}

static int px_get(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref, pmcp_buf *out)
{
  return px_up(s, ctx, pmcp_store_get(ctx, t, ref, out));
}

static int px_list(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_list_opts *o,
                   pmcp_buf *out)
{
  return px_up(s, ctx, pmcp_store_list(ctx, t, o, out));
}

static int px_search(pmcp_store *s, void *ctx, pmcp_tenant t, const char *query,
                     const char *kinds, const char *after, size_t limit, pmcp_buf *out)
{
  return px_up(s, ctx, pmcp_store_search(ctx, t, query, kinds, after, limit, out));
}

static int px_series_list(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                          pmcp_buf *out)
{
  return px_up(s, ctx, pmcp_store_series_list(ctx, t, run, out));
}

static int px_points(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series, int64_t from,
                     int64_t to, int64_t after, pmcp_point *out, size_t cap, size_t *n,
                     int64_t *next)
{
  return px_up(s, ctx, pmcp_store_points(ctx, t, series, from, to, after, out, cap, n, next));
}

static int px_summary(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series, int64_t from,
                      int64_t to, size_t nb, pmcp_bucket *out, size_t *n)
{
  return px_up(s, ctx, pmcp_store_summary(ctx, t, series, from, to, nb, out, n));
}

static int px_summary_time(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                           int64_t from, int64_t to, size_t nb, pmcp_bucket *out, size_t *n)
{
  return px_up(s, ctx, pmcp_store_summary_time(ctx, t, series, from, to, nb, out, n));
}

static int px_series_sets(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                          int64_t from, int64_t to, const char *after, size_t limit,
                          pmcp_buf *out)
{
  return px_up(s, ctx, pmcp_store_series_sets(ctx, t, series, from, to, after, limit, out));
}

/* A read-only store forwarding to @p inner (which stays the caller's). */
static int px_open(pmcp_store **out, pmcp_store *inner)
{
  pmcp_store_ops ops;
  memset(&ops, 0, sizeof ops);
  ops.version = PMCP_STORE_OPS_VERSION;
  ops.name = "proxy";
  ops.tenant = px_tenant;
  ops.secret = px_secret;
  ops.version_of = px_version;
  ops.get = px_get;
  ops.list = px_list;
  ops.search = px_search;
  ops.series_list = px_series_list;
  ops.points = px_points;
  ops.summary = px_summary;
  ops.summary_time = px_summary_time;
  ops.series_sets = px_series_sets;
  return pmcp_store_new_custom(out, &ops, inner, PMCP_STORE_READONLY);
}

#endif
