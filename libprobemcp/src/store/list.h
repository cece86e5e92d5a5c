/* SPDX-License-Identifier: MIT */
/* Internal: pmcp_store_list() of both backends (list.c) over a backend's
 * table of list kinds. Each kind is a row: the item's JSON expression (in
 * the backend's dialect), its FROM clause, order, which parents narrow it
 * (and how), its literal-query columns and its filters. The SQL is
 * assembled from those fixed fragments only; every value is bound. The
 * fragments name their parameters :t (tenant), :p (parent row id), :pref
 * (parent ref text), :q (query) and :f (the filter's value). */
#ifndef PMCP_STORE_LIST_H
#define PMCP_STORE_LIST_H

#include "store/sql.h"

typedef struct parent_rule {
  const char *kind;   /* parent ref kind; "*" matches any ref (text :pref) */
  const char *cond;   /* uses :p (row id) or :pref (the ref text) */
} parent_rule;

typedef struct filter_rule {
  const char *name;
  char type;          /* 'b' bool, 's' string, 'i' integer */
  const char *cond;   /* uses :f; a 'b' rule without :f is "IF-TRUE|IF-FALSE" (a
                         condition the planner can match to an index) */
} filter_rule;

typedef struct list_kind {
  const char *kind;
  const char *item;
  const char *from;
  const char *tenant_col;
  const char *order;
  const char *query;          /* text the literal query matches, or NULL */
  const char *deleted;        /* SQL boolean: a deleted row (list_kinds.h), or NULL */
  int parent_required;
  parent_rule parents[5];
  filter_rule filters[5];
} list_kind;

/* Lists kind o->kind of @p kinds (@p n_kinds rows) into @p out as
 * {"items":[...],"total":N,"next":...}. */
int pmcp__sql_list(pmcp_store *s, pmcp__sql *q, const list_kind *kinds, size_t n_kinds,
                   pmcp_tenant t, const pmcp_list_opts *o, pmcp_buf *out);

#endif
