/* SPDX-License-Identifier: MIT */
/* pmcp_store_list() of both backends: the options checked against a kind's
 * rules, the WHERE clause assembled from the kind's fixed fragments (every
 * value bound), the page and the total. Each backend keeps only its table
 * of kinds (sq_list.c, pg_list.c): the items' JSON is built by each
 * dialect's own functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "store/list.h"
#include "store/ws_scope.h"

#define PMCP__LIST_MAXP 24
/* Items counted past a page before the total is given as a lower bound. */
#define COUNT_PAST 10000

/* The SQL names its parameters (:t, :p, :pref, :q, :fN, :lim, :off); the
 * statement interface numbers them. Each distinct name becomes ?N in order
 * of first use (a '::' cast is left alone). */
typedef struct named_sql {
  pmcp_buf sql;
  char names[PMCP__LIST_MAXP][8];
  int n;
} named_sql;

static int name_params(pmcp_store *s, const char *in, named_sql *ns)
{
  memset(ns, 0, sizeof *ns);
  /* Plain text is copied in spans: this runs on every listing. */
  int rc = pmcp__buf_reserve(&ns->sql, strlen(in) + 16);
  const char *span = in;
  char quote = 0;
  for (const char *p = in; *p && rc == 0; p++) {
    if (quote) {
      if (*p == quote)
        quote = 0;
    } else if (*p == '\'') {
      quote = *p;
    } else if (*p == ':' && p[1] == ':') {
      p++;
    } else if (*p == ':' && p[1] >= 'a' && p[1] <= 'z') {
      char nm[8];
      size_t k = 0;
      const char *e = p + 1;
      while (((*e >= 'a' && *e <= 'z') || (*e >= '0' && *e <= '9')) && k < sizeof nm - 1)
        nm[k++] = *e++;
      nm[k] = '\0';
      int ix = 0;
      for (int i = 0; i < ns->n && !ix; i++)
        if (strcmp(ns->names[i], nm) == 0)
          ix = i + 1;
      if (!ix) {
        if (ns->n == PMCP__LIST_MAXP) {
          pmcp_buf_dispose(&ns->sql);
          return pmcp_store_set_error(s, PMCP_EINTERNAL, "too many list parameters");
        }
        memcpy(ns->names[ns->n], nm, k + 1);
        ix = ++ns->n;
      }
      char num[8] = "?";
      size_t nl = 1;
      if (ix >= 10)
        num[nl++] = (char)('0' + ix / 10);
      num[nl++] = (char)('0' + ix % 10);
      rc = pmcp__buf_append(&ns->sql, span, (size_t)(p - span));
      if (rc == 0)
        rc = pmcp__buf_append(&ns->sql, num, nl);
      span = e;
      p = e - 1;
    }
  }
  if (rc == 0)
    rc = pmcp__buf_puts(&ns->sql, span);
  if (rc || !ns->sql.ptr) {
    pmcp_buf_dispose(&ns->sql);
    return pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  }
  return 0;
}

static int named_index(const named_sql *ns, const char *nm)
{
  for (int i = 0; i < ns->n; i++)
    if (strcmp(ns->names[i], nm) == 0)
      return i + 1;
  return 0;
}

/* The filters of a listing (o->filter: a JSON object of name -> value):
 * each one found in @p lk's rules adds its condition, binding its own :fN,
 * to @p where. *out is the parsed object the bound values live in (the
 * caller deletes it, also on failure). */
typedef struct list_filters {
  const filter_rule *used[5];
  cJSON *vals[5];
  int n;
} list_filters;

static int parse_filters(pmcp_store *s, const list_kind *lk, const pmcp_list_opts *o,
                         const char *pref, pmcp_buf *where, cJSON **out, list_filters *fs)
{
  int rc = 0;
  *out = NULL;
  fs->n = 0;
  if (o->filter && *o->filter) {
    cJSON *f = *out = cJSON_Parse(o->filter);
    if (!cJSON_IsObject(f)) {
      cJSON_Delete(f);
      *out = NULL;
      return pmcp_store_set_error(s, PMCP_EINVAL, "the list filter is not a JSON object");
    }
    cJSON *it;
    cJSON_ArrayForEach(it, f) {
      const filter_rule *fr = NULL;
      for (int i = 0; i < 5 && lk->filters[i].name; i++)
        if (strcmp(lk->filters[i].name, it->string) == 0)
          fr = &lk->filters[i];
      if (!fr || fs->n == 5) {
        rc = pmcp_store_set_error(s, PMCP_EINVAL, "%s items have no filter '%.32s'", lk->kind,
                                  it->string);
        break;
      }
      int ok = fr->type == 'b' ? cJSON_IsBool(it)
             : fr->type == 's' ? cJSON_IsString(it)
                               : cJSON_IsNumber(it);
      if (!ok) {
        rc = pmcp_store_set_error(s, PMCP_EINVAL, "filter '%s' must be a %s", fr->name,
                                  fr->type == 'b' ? "boolean" : fr->type == 's' ? "string" : "number");
        break;
      }
      if (strcmp(fr->name, "direction") == 0 &&
          (!pref || (strcmp(it->valuestring, "upstream") && strcmp(it->valuestring, "downstream")))) {
        rc = pmcp_store_set_error(s, PMCP_EINVAL,
            "filter 'direction' is upstream or downstream and needs a parent ref");
        break;
      }
      char cond[512];
      const char *bar = fr->type == 'b' ? strchr(fr->cond, '|') : NULL;
      if (bar) {
        if (cJSON_IsTrue(it))
          snprintf(cond, sizeof cond, "%.*s", (int)(bar - fr->cond), fr->cond);
        else
          snprintf(cond, sizeof cond, "%s", bar + 1);
      } else {
        snprintf(cond, sizeof cond, "%s", fr->cond);
      }
      /* Each filter binds its own :fN. */
      pmcp_buf c2 = PMCP_BUF_INIT;
      for (const char *p = cond; *p; p++) {
        if (p[0] == ':' && p[1] == 'f') {
          pmcp__buf_printf(&c2, ":f%d", fs->n);
          p++;
        } else {
          pmcp__buf_putc(&c2, *p);
        }
      }
      pmcp__buf_printf(where, " AND (%s)", c2.ptr);
      pmcp_buf_dispose(&c2);
      fs->used[fs->n] = fr;
      fs->vals[fs->n] = it;
      fs->n++;
    }
  }
  return rc;
}

/* The count, then the page's rows of a listing's two statements (named
 * parameters :t :p :pref :q :lim :off :cap :fN), the rows appended to @p out. */
typedef struct list_binds {
  pmcp_tenant t;
  int64_t prow, offset, cap; /* cap: count no further (COUNT_PAST past the page) */
  const char *pref;
  size_t limit;
  const list_filters *fs;
} list_binds;

static int fetch_rows(pmcp_store *s, pmcp__sql *q, const pmcp_list_opts *o, const list_binds *lb,
                      const char *sql_count, const char *sql_items, pmcp_buf *out,
                      int64_t *out_total, size_t *out_n)
{
  pmcp_tenant t = lb->t;
  const list_filters *fs = lb->fs;
  int64_t total = 0;
  size_t n = 0, limit = lb->limit;
  int rc = 0;
  for (int k = 0; k < 2 && rc == 0; k++) {
    named_sql ns;
    if ((rc = name_params(s, k ? sql_items : sql_count, &ns)))
      break;
    pmcp__stmt *st = NULL;
    if ((rc = pmcp__sql_prep_text(s, q, ns.sql.ptr, &st))) {
      pmcp_buf_dispose(&ns.sql);
      break;
    }
    int ix;
#define BIND_NAME(nm, call)                                                   \
  do {                                                                        \
    if ((ix = named_index(&ns, nm)) > 0)                                      \
      call;                                                                   \
  } while (0)
    BIND_NAME("t", pmcp__st_bind_int64(st, ix, t.id));
    BIND_NAME("p", pmcp__st_bind_int64(st, ix, lb->prow));
    BIND_NAME("pref", pmcp__st_bind_text(st, ix, lb->pref ? lb->pref : ""));
    BIND_NAME("q", pmcp__st_bind_text(st, ix, o->query ? o->query : ""));
    BIND_NAME("lim", pmcp__st_bind_int64(st, ix, (int64_t)limit + 1));
    BIND_NAME("off", pmcp__st_bind_int64(st, ix, lb->offset));
    BIND_NAME("cap", pmcp__st_bind_int64(st, ix, lb->cap));
    for (int i = 0; i < fs->n; i++) {
      char nm[16];
      snprintf(nm, sizeof nm, "f%d", i);
      cJSON *v = fs->vals[i];
      /* A boolean filter compares with an SQL boolean on PostgreSQL, with
       * 0/1 on SQLite. */
      if (fs->used[i]->type == 'b' && q->ops->pg)
        BIND_NAME(nm, pmcp__st_bind_text(st, ix, cJSON_IsTrue(v) ? "true" : "false"));
      else if (fs->used[i]->type == 'b')
        BIND_NAME(nm, pmcp__st_bind_int64(st, ix, cJSON_IsTrue(v)));
      else if (fs->used[i]->type == 's')
        BIND_NAME(nm, pmcp__st_bind_text(st, ix, v->valuestring));
      else
        BIND_NAME(nm, pmcp__st_bind_int64(st, ix, (int64_t)v->valuedouble));
    }
#undef BIND_NAME
    int src;
    while ((src = pmcp__st_step(st)) == PMCP__ROW) {
      if (k == 0) {
        total = pmcp__st_int64(st, 0);
        continue;
      }
      if (n == limit)
        break;
      if (n++)
        pmcp__buf_putc(out, ',');
      pmcp__st_json_col(out, st, 0);
    }
    if (src != PMCP__ROW && src != PMCP__DONE)
      rc = pmcp__st_err(s, st, "list");
    pmcp__sql_release(q, st);
    pmcp_buf_dispose(&ns.sql);
  }
  *out_total = total;
  *out_n = n;
  return rc;
}

int pmcp__sql_list(pmcp_store *s, pmcp__sql *q, const list_kind *kinds, size_t n_kinds,
                   pmcp_tenant t, const pmcp_list_opts *o, pmcp_buf *out)
{
  const list_kind *lk = NULL;
  for (size_t i = 0; i < n_kinds && !lk; i++)
    if (strcmp(kinds[i].kind, o->kind) == 0)
      lk = &kinds[i];
  if (!lk)
    return pmcp_store_set_error(s, PMCP_EINVAL,
        "unknown list kind '%.32s' (workspace, project, experiment, run, note, note-version,"
        " artifact, artifact-version, dataset, dataset-version, checkpoint, source, lineage,"
        " group, trial, session, file, paper, event, series, experiment-version, attribute,"
        " env-attribute)",
        o->kind);
  int rc = pmcp__sql_ready(s, q, t);
  if (rc || (rc = pmcp__sql_flush(s, q)))
    return rc;
  size_t limit = o->limit ? o->limit : 50;
  if (limit > 1000)
    limit = 1000;
  int64_t offset = 0;
  if (o->after && *o->after) {
    char *end;
    long long v = strtoll(o->after, &end, 10);
    if (*end || v < 0 || end == o->after)
      return pmcp_store_set_error(s, PMCP_EINVAL, "invalid list position '%.32s'", o->after);
    offset = v;
  }
  pmcp_buf where = PMCP_BUF_INIT;
  pmcp__buf_printf(&where, "%s=:t", lk->tenant_col);
  if ((rc = pmcp__ws_list_where(&where, t, lk->kind))) {
    pmcp_buf_dispose(&where);
    return pmcp_store_set_error(s, rc, "out of memory");
  }
  /* Parent. */
  int64_t prow = 0;
  const char *pref = NULL;
  if (o->parent) {
    char pk[32];
    const char *pid;
    if ((rc = pmcp__ref_split(s, o->parent, NULL, pk, &pid)))
      goto out;
    const parent_rule *rule = NULL;
    for (int i = 0; i < 5 && lk->parents[i].kind; i++)
      if (strcmp(lk->parents[i].kind, pk) == 0 || strcmp(lk->parents[i].kind, "*") == 0)
        rule = &lk->parents[i];
    if (!rule) {
      rc = pmcp_store_set_error(s, PMCP_EINVAL, "%s items cannot be listed under a %s",
                                lk->kind, pk);
      goto out;
    }
    if (strcmp(rule->kind, "*") == 0) {
      pref = o->parent;
    } else {
      char k2[32];
      if ((rc = pmcp__sql_resolve(s, q, t, o->parent, NULL, k2, &prow)))
        goto out;
    }
    pmcp__buf_printf(&where, " AND %s", rule->cond);
  } else if (lk->parent_required) {
    rc = pmcp_store_set_error(s, PMCP_EINVAL, "listing %s items needs a parent (e.g. %s)",
                              lk->kind, lk->parents[0].kind);
    goto out;
  }
  if (lk->deleted && !o->include_deleted) {
    /* "col<>0" hidden: "col=0" live, an equality an index of (..., col,
     * created) can walk in order (NOT (col<>0) is not one: SQLite then
     * walked every run of the tenant newest first for one experiment's) */
    size_t dl = strlen(lk->deleted), cl = strspn(lk->deleted, "abcdefghijklmnopqrstuvwxyz_.");
    if (dl > 3 && cl == dl - 3 && !strcmp(lk->deleted + cl, "<>0"))
      pmcp__buf_printf(&where, " AND %.*s=0", (int)cl, lk->deleted);
    else
      pmcp__buf_printf(&where, " AND NOT (%s)", lk->deleted);
  }
  if (o->query && *o->query) {
    if (!lk->query) {
      rc = pmcp_store_set_error(s, PMCP_EINVAL, "%s items cannot be searched with a query",
                                lk->kind);
      goto out;
    }
    pmcp__buf_printf(&where, PMCP__SQL_PICK(q, " AND instr(lower(%s), lower(:q)) > 0",
                                            " AND strpos(lower(%s), lower(:q)) > 0"),
                     lk->query);
  }
  cJSON *f = NULL;
  list_filters fs;
  if ((rc = parse_filters(s, lk, o, pref, &where, &f, &fs))) {
    cJSON_Delete(f);
    goto out;
  }
  /* The page's rows are chosen first (row ids in order: an index walk or a
   * sort of narrow rows) and only they are turned into JSON: building the
   * item (subqueries, excerpts) for every row before the sort was the cost
   * of a listing. The first word after the table in FROM is its alias.
   * (SQLite's rowid; PostgreSQL sorts and builds in one statement.) */
  char alias[16] = "";
  if (!q->ops->pg) {
    const char *sp = strchr(lk->from, ' ');
    size_t al = sp ? strcspn(sp + 1, " ") : 0;
    if (al && al < sizeof alias)
      memcpy(alias, sp + 1, al), alias[al] = '\0';
  }
  /* Pieces joined with puts: printf's %s over these long fragments cost
   * more than the rest of building a listing. SQLite: the page's row ids
   * come out of a co-routine (an index walk or a sort of narrow rows) and
   * CROSS JOIN keeps it the outer loop; the outer ORDER BY, the kind's own
   * order (total: it ends with the row's id), makes the items' order the
   * statement's rather than the planner's loop order, which the tables
   * joined after it (notes and their versions, checkpoints and runs,
   * documents and FTS) could change. It sorts the page's rows only: "rowid
   * IN (...) ORDER BY" built a temporary table of the ids and sorted the
   * items again. (A row_number() of the co-routine to order by cost 7% of
   * a runs listing: a second co-routine for the window.) */
  pmcp_buf sql_items = PMCP_BUF_INIT, sql_count = PMCP_BUF_INIT;
  const char *items_sq[] = {"SELECT ", lk->item, " FROM (SELECT ", alias,
                            ".rowid AS pmcp_rid FROM ", lk->from, " WHERE ", where.ptr,
                            " ORDER BY ", lk->order,
                            " LIMIT :lim OFFSET :off) pmcp_page CROSS JOIN ", lk->from,
                            " WHERE ", alias, ".rowid=pmcp_page.pmcp_rid ORDER BY ", lk->order,
                            NULL};
  const char *items[] = {"SELECT ", lk->item, " FROM ", lk->from, " WHERE ", where.ptr,
                         " ORDER BY ", lk->order, " LIMIT :lim OFFSET :off", NULL};
  /* The total is counted up to COUNT_PAST items past the page, so that
   * counting does not cost more than the page on a large lab; beyond it
   * the answer says the total is a lower bound ("total_estimated"). */
  const char *count[] = {"SELECT count(*) FROM (SELECT 1 FROM ", lk->from, " WHERE ",
                         where.ptr, " LIMIT :cap) x", NULL};
  for (const char *const *pc = alias[0] ? items_sq : items; *pc; pc++)
    pmcp__buf_puts(&sql_items, *pc);
  for (const char *const *pc = count; *pc; pc++)
    pmcp__buf_puts(&sql_count, *pc);
  if (!sql_items.ptr || !sql_count.ptr)
    rc = pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  /* What an item shows of linked rows (counts, refs) is what the scope
   * sees too: its scope marks. */
  if (rc == 0) {
    pmcp_buf scoped = PMCP_BUF_INIT;
    int m = pmcp__ws_marks(&scoped, sql_items.ptr, t);
    if (m < 0)
      rc = pmcp_store_set_error(s, m, m == PMCP_ENOMEM ? "out of memory" : "bad scope mark");
    if (m > 0) {
      pmcp_buf_dispose(&sql_items);
      sql_items = scoped;
    } else {
      pmcp_buf_dispose(&scoped);
    }
  }
  /* saturated: a position near INT64_MAX must not wrap the cap negative
   * (PostgreSQL refuses a negative LIMIT, SQLite reads it as none) */
  int64_t total = 0, cap = offset > INT64_MAX - (int64_t)limit - COUNT_PAST
                               ? INT64_MAX
                               : offset + (int64_t)limit + COUNT_PAST;
  pmcp__buf_reset(out);
  pmcp__buf_puts(out, "{\"items\":[");
  size_t n = 0;
  if (rc == 0) {
    list_binds lb = {t, prow, offset, cap, pref, limit, &fs};
    rc = fetch_rows(s, q, o, &lb, sql_count.ptr, sql_items.ptr, out, &total, &n);
  }
  pmcp_buf_dispose(&sql_items);
  pmcp_buf_dispose(&sql_count);
  cJSON_Delete(f);
  if (rc == 0) {
    pmcp__buf_printf(out, "],\"total\":%lld,%s", (long long)total,
                     total >= cap ? "\"total_estimated\":true," : "");
    if ((int64_t)(offset + (int64_t)n) < total)
      pmcp__buf_printf(out, "\"next\":\"%lld\"}", (long long)(offset + (int64_t)n));
    else
      pmcp__buf_puts(out, "\"next\":null}");
    if (!out->ptr)
      rc = PMCP_ENOMEM;
  }
out:
  pmcp_buf_dispose(&where);
  return rc;
}
