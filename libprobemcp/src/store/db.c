/* SPDX-License-Identifier: MIT */
/* The backend-neutral half of db.h: handle checks, dispatch to the
 * backend's hooks, and the result set every backend fills. */
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/store_int.h"

struct pmcp__db_res {
  size_t ncols;
  size_t ncells, cap;
  char **cells;          /* row-major; NULL: SQL NULL */
};

static int check(pmcp_store *s, const char *sql, int n, const char *const *params)
{
  if (!s || s->magic != PMCP__STORE_MAGIC)
    return PMCP_EMISUSE;
  pmcp__store_clear_error(s);
  if (!sql || n < 0 || (n > 0 && !params))
    return pmcp_store_set_error(s, PMCP_EINVAL, "service query: bad arguments");
  if (!s->db || !s->db->exec || !s->db->query)
    return pmcp_store_set_error(s, PMCP_EUNSUPPORTED,
        "the %s store backend has no service tables (users, keys, audit)",
        s->ops.name ? s->ops.name : "custom");
  return 0;
}

int pmcp__db_exec(pmcp_store *s, const char *sql, int n, const char *const *params,
                  int64_t *changes)
{
  if (changes)
    *changes = 0;
  int rc = check(s, sql, n, params);
  if (rc)
    return rc;
  return s->db->exec(s, s->ctx, sql, n, params, changes);
}

int pmcp__db_query(pmcp_store *s, const char *sql, int n, const char *const *params,
                   pmcp__db_res **out)
{
  if (!out)
    return PMCP_EMISUSE;
  *out = NULL;
  int rc = check(s, sql, n, params);
  if (rc)
    return rc;
  rc = s->db->query(s, s->ctx, sql, n, params, out);
  if (rc) {
    pmcp__db_res_free(*out);
    *out = NULL;
  }
  return rc;
}

int pmcp__db_change_mark(pmcp_store *s, uint64_t mark[2])
{
  if (!s || s->magic != PMCP__STORE_MAGIC || !mark)
    return PMCP_EMISUSE;
  mark[0] = mark[1] = 0;
  if (!s->db || !s->db->mark)
    return PMCP_EUNSUPPORTED;
  return s->db->mark(s, s->ctx, mark);
}

void *pmcp__store_attached(pmcp_store *s)
{
  return s && s->magic == PMCP__STORE_MAGIC ? s->attached : NULL;
}

int pmcp__store_attach(pmcp_store *s, void *ud, void (*dispose)(void *))
{
  if (!s || s->magic != PMCP__STORE_MAGIC || s->attached)
    return PMCP_EMISUSE;
  s->attached = ud;
  s->attached_dispose = dispose;
  return 0;
}

size_t pmcp__db_nrows(const pmcp__db_res *r)
{
  return r && r->ncols ? r->ncells / r->ncols : 0;
}

size_t pmcp__db_ncols(const pmcp__db_res *r)
{
  return r ? r->ncols : 0;
}

const char *pmcp__db_get(const pmcp__db_res *r, size_t row, size_t col)
{
  if (!r || col >= r->ncols || row >= pmcp__db_nrows(r))
    return NULL;
  return r->cells[row * r->ncols + col];
}

void pmcp__db_res_free(pmcp__db_res *r)
{
  if (!r)
    return;
  for (size_t i = 0; i < r->ncells; i++)
    free(r->cells[i]);
  free(r->cells);
  free(r);
}

int pmcp__db_res_new(pmcp__db_res **out, size_t ncols)
{
  *out = calloc(1, sizeof **out);
  if (!*out)
    return PMCP_ENOMEM;
  (*out)->ncols = ncols;
  return 0;
}

int pmcp__db_res_add(pmcp__db_res *r, const char *val, size_t len)
{
  if (r->ncells == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 16;
    char **c = realloc(r->cells, cap * sizeof *c);
    if (!c)
      return PMCP_ENOMEM;
    r->cells = c;
    r->cap = cap;
  }
  char *copy = NULL;
  if (val) {
    copy = malloc(len + 1);
    if (!copy)
      return PMCP_ENOMEM;
    memcpy(copy, val, len);
    copy[len] = '\0';
  }
  r->cells[r->ncells++] = copy;
  return 0;
}

int pmcp__db_tenant(pmcp_store *s, int64_t tenant)
{
  if (!s || !s->db)
    return PMCP_EUNSUPPORTED;
  return s->db->tenant ? s->db->tenant(s, s->ctx, tenant) : 0;
}
