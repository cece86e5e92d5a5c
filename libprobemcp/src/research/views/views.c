/* SPDX-License-Identifier: MIT */
/* The entity views (see views.h): what each view of the matrix reads from
 * the store record or from store lists. */
#include "research/views/views.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "research/views/matrix.h"

int pmcp__view_fail(pmcp__vctx *v, pmcp_tool_error code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v->err, sizeof v->err, fmt, ap);
  va_end(ap);
  v->err_code = code;
  return 0;
}

int pmcp__view_record(pmcp__vctx *v)
{
  if (v->rec)
    return 0;
  char err[512];
  /* a card picks a few members: what the entity owns is not read */
  int rc = pmcp__rs_get_card(v->rs, v->ref_text, v->view && strcmp(v->view, "card") == 0,
                             &v->rec, err, sizeof err);
  if (rc == PMCP_ENOMEM)
    return rc;
  if (rc) {
    pmcp__view_fail(v, rc == PMCP_ENOTFOUND ? PMCP_TERR_NOT_FOUND : PMCP_TERR_INVALID_ARGUMENT,
                    "%s: %s", v->ref_text, err);
    return 1;
  }
  return 0;
}

/* ---- card -------------------------------------------------------------- */

static const char *const card_keys[] = {
  "ref", "kind", "name", "title", "status", "description", "project",
  "experiment", "run", "workspace", "step", "best", "stored", "provider",
  "uri", "path", "size", "media_type", "sha256", "version", "latest",
  "labels", "tags", "agent", "created", "started", "ended", "updated",
  "deleted", "shared", NULL};

int pmcp__view_card(pmcp_json *j, const cJSON *rec, pmcp__ref_kind kind, int exact)
{
  pmcp_json_object_begin(j);
  int cut = pmcp__vw_pick(j, rec, card_keys, 240, exact);
  /* Counts the store reports (runs, experiments, notes, versions, ...). */
  const cJSON *cnt = cJSON_GetObjectItemCaseSensitive(rec, "counts");
  if (cJSON_IsObject(cnt)) {
    pmcp_json_key(j, "counts");
    pmcp__vw_value(j, cnt, exact);
  }
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(rec, "description");
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(rec, "title");
  if ((d && !cJSON_IsNull(d)) || (t && !cJSON_IsNull(t))) {
    pmcp_json_key(j, "provenance");
    pmcp_json_string(j, pmcp__rs_provenance(rec));
  }
  if (cut) {
    pmcp_json_key(j, "detail");
    pmcp_json_string(j, "view=record");
  }
  size_t n;
  const char *const *views = pmcp__views_of(kind, &n);
  pmcp_json_key(j, "available_views");
  pmcp_json_array_begin(j);
  for (size_t i = 0; i < n; i++)
    pmcp_json_string(j, views[i]);
  pmcp_json_array_end(j);
  return pmcp_json_object_end(j);
}

/* ---- record with field selection --------------------------------------- */

static int select_field(pmcp__vctx *v, const cJSON *field, const cJSON **out)
{
  *out = NULL;
  const cJSON *cur = v->rec;
  char path[600] = "";
  /* Walk either the dotted string or the path list. */
  const char *s = cJSON_IsString(field) ? field->valuestring : NULL;
  const cJSON *part = cJSON_IsArray(field) ? field->child : NULL;
  if (!s && !cJSON_IsArray(field))
    return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                           "view_options.field is a dotted path string or a "
                           "list of keys");
  if (cJSON_IsArray(field) && !part)
    return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                           "view_options.field: the path list is empty");
  char seg[257];
  for (;;) {
    if (s) {
      if (!*s)
        break;
      const char *dot = strchr(s, '.');
      size_t n = dot ? (size_t)(dot - s) : strlen(s);
      if (n == 0 || n >= sizeof seg)
        return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                               "view_options.field: empty or overlong "
                               "segment in \"%.80s\"",
                               field->valuestring);
      memcpy(seg, s, n);
      seg[n] = '\0';
      s = dot ? dot + 1 : s + n;
    } else {
      if (!part)
        break;
      if (!cJSON_IsString(part) || strlen(part->valuestring) >= sizeof seg)
        return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                               "view_options.field: every path item is a "
                               "key string");
      snprintf(seg, sizeof seg, "%s", part->valuestring);
      part = part->next;
    }
    const cJSON *next = NULL;
    if (cJSON_IsObject(cur)) {
      next = cJSON_GetObjectItemCaseSensitive(cur, seg);
    } else if (cJSON_IsArray(cur)) {
      char *end;
      long i = strtol(seg, &end, 10);
      if (*end == '\0' && i >= 0)
        next = cJSON_GetArrayItem(cur, (int)i);
    }
    if (!next) {
      /* Name the keys that do exist at this level (a few). */
      char keys[300] = "";
      size_t k = 0;
      if (cJSON_IsObject(cur)) {
        for (const cJSON *c = cur->child; c && k < 12; c = c->next, k++) {
          size_t l = strlen(keys);
          snprintf(keys + l, sizeof keys - l, "%s%s", k ? ", " : "",
                   c->string);
        }
      }
      return pmcp__view_fail(
          v, PMCP_TERR_NOT_FOUND,
          "%s has no field \"%s\" at %s%s%s%s", v->ref_text, seg,
          path[0] ? path : "the top level",
          keys[0] ? " (keys there: " : "", keys, keys[0] ? ")" : "");
    }
    size_t l = strlen(path);
    snprintf(path + l, sizeof path - l, "%s%s", l ? "." : "", seg);
    cur = next;
  }
  *out = cur;
  return 0;
}

static int view_record(pmcp__vctx *v)
{
  const cJSON *field = v->opts
      ? cJSON_GetObjectItemCaseSensitive(v->opts, "field") : NULL;
  const cJSON *data = v->rec;
  if (field) {
    int rc = select_field(v, field, &data);
    if (rc || v->err_code)
      return rc;
  }
  /* the stored values at full precision */
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, 0))
    return PMCP_ENOMEM;
  pmcp__vw_value(j, data, 1);
  int rc = pmcp__vw_take(j, &v->data);
  if (rc)
    return rc;
  v->has_data = 1;
  rc = pmcp__vw_begin(v, &j);
  if (rc)
    return rc;
  if (field) {
    pmcp_json_key(j, "field");
    pmcp__vw_value(j, field, 1);
  }
  pmcp_json_key(j, "provenance");
  pmcp_json_string(j, pmcp__rs_provenance(v->rec));
  /* A record too large for the page goes out as json fragments. */
  v->doc_format = "json_fragment";
  return pmcp__vw_end(v, j);
}

/* ---- object views read from the record --------------------------------- */

/* A view object that only says why there is nothing to show. */
static int state_only(pmcp__vctx *v, const char *state)
{
  pmcp_json *j;
  int rc = pmcp__vw_begin(v, &j);
  if (rc)
    return rc;
  pmcp_json_key(j, "state");
  pmcp_json_string(j, state);
  return pmcp__vw_end(v, j);
}

/* Writes record fields @p keys (those present) as members; 1 when any. */
static int put_fields(pmcp__vctx *v, pmcp_json *j, const char *const *keys)
{
  int any = 0, exact = pmcp__vw_exact_view(v->view);
  for (size_t i = 0; keys[i]; i++) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(v->rec, keys[i]);
    if (f && !cJSON_IsNull(f)) {
      pmcp_json_key(j, keys[i]);
      pmcp__vw_value(j, f, exact);
      any = 1;
    }
  }
  return any;
}

/* Copies record fields @p keys (those present) into the view object. */
static int from_record(pmcp__vctx *v, const char *const *keys,
                       const char *missing)
{
  pmcp_json *j;
  int rc = pmcp__vw_begin(v, &j);
  if (rc)
    return rc;
  if (!put_fields(v, j, keys)) {
    pmcp_json_key(j, "state");
    pmcp_json_string(j, missing);
  }
  return pmcp__vw_end(v, j);
}

static int view_code(pmcp__vctx *v)
{
  static const char *const k[] = {"code", "git_commit", "git_branch",
                                  "git_remote", "git_dirty", NULL};
  return from_record(v, k, "no code state was recorded");
}

static int view_reproduce(pmcp__vctx *v)
{
  static const char *const k[] = {"code", "git_commit", "git_branch",
                                  "git_remote", "git_dirty", "command",
                                  "environment", "config", "inherited",
                                  "datasets", "uses", NULL};
  pmcp_json *j;
  int rc = pmcp__vw_begin(v, &j);
  if (rc)
    return rc;
  int any = put_fields(v, j, k);
  /* the run's parameters (an imported tracker's params/..., hyper-
   * parameters logged as attributes) are part of how it was made */
  const cJSON *at = cJSON_GetObjectItemCaseSensitive(v->rec, "attributes");
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(at, "params");
  if (cJSON_IsObject(params) && params->child) {
    pmcp_json_key(j, "params");
    pmcp__vw_value(j, params, 1);
  } else if (!any) {
    pmcp_json_key(j, "state");
    pmcp_json_string(j, "nothing recorded to reproduce it from");
  }
  pmcp_json_key(j, "detail");
  pmcp_json_string(j, "view=diff for uncommitted changes");
  return pmcp__vw_end(v, j);
}

static int view_inherited(pmcp__vctx *v)
{
  static const char *const k[] = {"config", "inherited", NULL};
  return from_record(v, k, "no configuration is inherited");
}

/* A text field of the record served as a document (fragments if big). */
static int text_doc(pmcp__vctx *v, const char *const *keys, const char *what)
{
  const char *t = NULL;
  const char *key = NULL;
  for (size_t i = 0; keys[i] && !t; i++) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(v->rec, keys[i]);
    if (cJSON_IsString(f)) {
      t = f->valuestring;
      key = keys[i];
    } else if (cJSON_IsObject(f)) {
      /* nested {"diff": "..."} or {"text": ...} */
      const cJSON *g = cJSON_GetObjectItemCaseSensitive(f, "text");
      if (!cJSON_IsString(g))
        g = cJSON_GetObjectItemCaseSensitive(f, "diff");
      if (cJSON_IsString(g)) {
        t = g->valuestring;
        key = keys[i];
      }
    }
  }
  if (!t)
    return state_only(v, what);
  (void)key;
  v->doc = strdup(t);
  v->doc_format = "text_fragment";
  if (!v->doc)
    return PMCP_ENOMEM;
  pmcp_json *j;
  int rc = pmcp__vw_begin(v, &j);
  if (rc)
    return rc;
  pmcp_json_key(j, "provenance");
  pmcp_json_string(j, pmcp__rs_provenance(v->rec));
  return pmcp__vw_end(v, j);
}

static int view_diff(pmcp__vctx *v)
{
  static const char *const k[] = {"git_diff", "diff", "code", NULL};
  return text_doc(v, k, "no uncommitted diff was recorded (clean tree)");
}

static int view_readme(pmcp__vctx *v)
{
  static const char *const k[] = {"readme", "body", NULL};
  return text_doc(v, k, "the project has no README");
}

static int view_views(pmcp__vctx *v)
{
  pmcp_json *j;
  int rc = pmcp__vw_begin(v, &j);
  if (rc)
    return rc;
  pmcp_json_key(j, "views");
  pmcp_json_array_begin(j);
  size_t n;
  const char *const *names = pmcp__views_of(v->ref.kind, &n);
  for (size_t i = 0; i < n; i++) {
    const pmcp__view_info *vi = pmcp__view_find(names[i]);
    pmcp_json_object_begin(j);
    pmcp_json_key(j, "view");
    pmcp_json_string(j, vi->name);
    pmcp_json_key(j, "reads");
    pmcp_json_string(j, vi->reads);
    if (vi->options[0]) {
      pmcp_json_key(j, "view_options");
      pmcp_json_array_begin(j);
      for (size_t k = 0; vi->options[k]; k++)
        pmcp_json_string(j, vi->options[k]);
      pmcp_json_array_end(j);
    }
    pmcp_json_object_end(j);
  }
  pmcp_json_array_end(j);
  return pmcp__vw_end(v, j);
}

/* ---- overview pages ---------------------------------------------------- */

/* Finds the overview note of a project/experiment: its record or NULL. */
static int overview_note(pmcp__vctx *v, cJSON **note)
{
  *note = NULL;
  pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
  o.kind = "note";
  o.parent = v->ref_text;
  o.filter = "{\"kind\":\"overview\"}";
  o.limit = 1;
  cJSON *page = NULL;
  char err[512];
  int rc = pmcp__rs_list(v->rs, &o, &page, err, sizeof err);
  if (rc == PMCP_ENOMEM)
    return rc;
  if (rc)
    return pmcp__view_fail(v, PMCP_TERR_STORE, "%s", err), 1;
  cJSON *items = cJSON_GetObjectItemCaseSensitive(page, "items");
  cJSON *first = cJSON_GetArrayItem(items, 0);
  char ref[PMCP__REF_MAX + 16];
  snprintf(ref, sizeof ref, "%s", first ? pmcp__js(first, "ref") : "");
  cJSON_Delete(page);
  if (!*ref)
    return 0;
  /* the list holds an excerpt; the page itself is read whole */
  rc = pmcp__rs_get(v->rs, ref, note, err, sizeof err);
  if (rc == PMCP_ENOMEM)
    return rc;
  if (rc)
    return pmcp__view_fail(v, PMCP_TERR_STORE, "%s", err), 1;
  return 0;
}

static int view_overview(pmcp__vctx *v, int summary_only)
{
  cJSON *note = NULL;
  int rc = overview_note(v, &note);
  if (rc)
    return rc < 0 ? rc : 0;
  if (!note)
    return state_only(v, "no Overview page yet");
  static const char *const meta[] = {"ref", "status", "title", "version",
                                     "author", "via", "updated", "created",
                                     NULL};
  pmcp_json *j;
  rc = pmcp__vw_begin(v, &j);
  if (rc) {
    cJSON_Delete(note);
    return rc;
  }
  pmcp_json_key(j, "page");
  pmcp_json_object_begin(j);
  pmcp__vw_pick(j, note, meta, 200, 0);
  pmcp_json_object_end(j);
  pmcp_json_key(j, "provenance");
  pmcp_json_string(j, pmcp__rs_provenance(note));
  const char *text = summary_only ? pmcp__js(note, "summary")
                                  : pmcp__js(note, "body");
  if (!*text && !summary_only)
    text = pmcp__js(note, "text");
  if (summary_only && !*text) {
    pmcp_json_key(j, "state");
    pmcp_json_string(j, "nobody has written a summary block yet");
  } else {
    v->doc = strdup(text);
    v->doc_format = "text_fragment";
    pmcp_json_key(j, "format");
    pmcp_json_string(j, summary_only ? "document" : "markdown");
  }
  cJSON_Delete(note);
  rc = pmcp__vw_end(v, j);
  return rc ? rc : (v->doc_format && !v->doc) ? PMCP_ENOMEM : 0;
}

static int view_summary_history(pmcp__vctx *v)
{
  cJSON *note = NULL;
  int rc = overview_note(v, &note);
  if (rc)
    return rc < 0 ? rc : 0;
  if (!note)
    return state_only(v, "no Overview page yet");
  char nref[300];
  snprintf(v->parent, sizeof v->parent, "%s",
           pmcp__rs_ref(note, nref, sizeof nref));
  cJSON_Delete(note);
  const cJSON *ver = v->opts
      ? cJSON_GetObjectItemCaseSensitive(v->opts, "version") : NULL;
  if (ver) {
    if (!cJSON_IsNumber(ver) || ver->valuedouble < 1 ||
        ver->valuedouble != (double)(int64_t)ver->valuedouble)
      return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT,
                             "view_options.version is a whole number >= 1");
    /* One version's markdown: list versions and pick it. */
    pmcp_list_opts o = PMCP_LIST_OPTS_INIT;
    o.kind = "note-version";
    o.parent = v->parent;
    o.limit = 1000;
    cJSON *page = NULL;
    char err[512];
    rc = pmcp__rs_list(v->rs, &o, &page, err, sizeof err);
    if (rc)
      return rc == PMCP_ENOMEM ? rc
                               : pmcp__view_fail(v, PMCP_TERR_STORE, "%s", err);
    const cJSON *it;
    cJSON *found = NULL;
    char have[200] = "";
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(page, "items"))
    {
      double n = pmcp__jn(it, "version", -1);
      size_t l = strlen(have);
      if (l < sizeof have - 12)
        snprintf(have + l, sizeof have - l, "%s%.0f", l ? ", " : "", n);
      if (n == ver->valuedouble)
        found = (cJSON *)it;
    }
    if (!found) {
      cJSON_Delete(page);
      return pmcp__view_fail(v, PMCP_TERR_NOT_FOUND,
                             "the Overview page of %s has no version %.0f "
                             "(versions: %s)",
                             v->ref_text, ver->valuedouble, have);
    }
    static const char *const meta[] = {"version", "author", "via", "created",
                                       "status", NULL};
    pmcp_json *j;
    rc = pmcp__vw_begin(v, &j);
    if (rc) {
      cJSON_Delete(page);
      return rc;
    }
    pmcp_json_key(j, "page_version");
    pmcp_json_object_begin(j);
    pmcp__vw_pick(j, found, meta, 200, 0);
    pmcp_json_object_end(j);
    pmcp_json_key(j, "provenance");
    pmcp_json_string(j, pmcp__rs_provenance(found));
    cJSON_Delete(page);
    rc = pmcp__vw_end(v, j);
    if (rc)
      return rc;
    /* the version's text: note:ID@N */
    char vref[PMCP__REF_MAX + 80];
    snprintf(vref, sizeof vref, "%s@%.0f", v->parent, ver->valuedouble);
    cJSON *vrec = NULL;
    rc = pmcp__rs_get(v->rs, vref, &vrec, err, sizeof err);
    if (rc)
      return rc == PMCP_ENOMEM ? rc
                               : pmcp__view_fail(v, PMCP_TERR_STORE, "%s", err);
    const char *t = pmcp__js(vrec, "body");
    v->doc = strdup(t);
    v->doc_format = "text_fragment";
    cJSON_Delete(vrec);
    return v->doc ? 0 : PMCP_ENOMEM;
  }
  static const char *const k[] = {"version", "author", "via", "created",
                                  "status", "title", NULL};
  v->list = (pmcp__list_req){"versions", "note-version", v->parent, NULL,
                             NULL, 0, k, 10, 160, NULL};
  v->list_name = "versions";
  return 0;
}

/* ---- list views -------------------------------------------------------- */

static const char *const k_note[] = {"ref", "note_kind", "title", "status",
                                     "excerpt", "chars", "author", "via",
                                     "updated", NULL};
static const char *const k_session[] = {"ref", "title", "agent", "started",
                                        "ended", "created", NULL};
static const char *const k_artifact[] = {"ref", "name", "path", "version",
                                         "labels", "size", "media_type",
                                         "sha256", "uri", "shared",
                                         "created", NULL};
static const char *const k_group[] = {"ref", "name", "description", "runs",
                                      NULL};
static const char *const k_event[] = {"kind", "message", "time", NULL};
static const char *const k_trial[] = {"ref", "name", "status", "score",
                                      "params", NULL};
static const char *const k_paper[] = {"ref", "id", "title", "authors",
                                      "published", "note", NULL};
static const char *const k_transcript[] = {"role", "content", "time", NULL};

static void set_list(pmcp__vctx *v, const char *name, const char *kind,
                     const char *parent, const char *filter,
                     const char *const *keys, size_t excerpt)
{
  snprintf(v->parent, sizeof v->parent, "%s", parent);
  if (filter)
    snprintf(v->filter, sizeof v->filter, "%s", filter);
  v->list = (pmcp__list_req){name, kind, v->parent, NULL,
                             filter ? v->filter : NULL, 0, keys, 10, excerpt, NULL};
  v->list_name = name;
}

/* An array field of the record as the list (trajectory, transcript). */
/* Moves the array @p j wrote (@p n items) into the list of @p v. */
static int take_list(pmcp__vctx *v, pmcp_json *j, size_t n)
{
  pmcp_json_array_end(j);
  int rc = pmcp__vw_take(j, &v->list_text);
  v->has_list = rc == 0;
  v->list_n = n;
  return rc;
}

static int record_array(pmcp__vctx *v, const char *key, const char *name,
                        const char *const *keys, const char *missing)
{
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(v->rec, key);
  v->list_name = name;
  if (!cJSON_IsArray(a))
    return state_only(v, missing);
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, 0))
    return PMCP_ENOMEM;
  pmcp_json_array_begin(j);
  size_t n = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, a)
  {
    if (keys && cJSON_IsObject(it)) {
      pmcp_json_object_begin(j);
      pmcp__vw_pick(j, it, keys, 600, 0);
      pmcp_json_object_end(j);
    } else {
      pmcp__vw_value(j, it, 0);
    }
    n++;
  }
  return take_list(v, j, n);
}

static int view_metrics(pmcp__vctx *v)
{
  pmcp_buf b = PMCP_BUF_INIT;
  pthread_mutex_lock(v->rs->lock);
  int rc = pmcp_store_series_list(v->rs->store, v->rs->tenant, v->ref.id, &b);
  char err[300] = "";
  if (rc)
    snprintf(err, sizeof err, "%s", pmcp_store_errmsg(v->rs->store));
  pthread_mutex_unlock(v->rs->lock);
  if (rc) {
    pmcp_buf_dispose(&b);
    return rc == PMCP_ENOMEM ? rc
                             : pmcp__view_fail(v, PMCP_TERR_STORE, "%s", err);
  }
  cJSON *page = cJSON_ParseWithLength(b.ptr ? b.ptr : "", b.len);
  pmcp_buf_dispose(&b);
  if (!page)
    return pmcp__view_fail(v, PMCP_TERR_STORE, "unreadable series catalog");
  /* labels only when there are some */
  static const char *const k0[] = {"key", NULL};
  static const char *const k[] = {"kind", "scale", "count", "step_min", "step_max",
                                  "first", "last", "min", "max", NULL};
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, 0)) {
    cJSON_Delete(page);
    return PMCP_ENOMEM;
  }
  pmcp_json_array_begin(j);
  size_t n = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(page, "items"))
  {
    pmcp_json_object_begin(j);
    pmcp__vw_pick(j, it, k0, 0, 0);
    const cJSON *lab = cJSON_GetObjectItemCaseSensitive(it, "labels");
    if (lab && !cJSON_IsNull(lab) && !(cJSON_IsObject(lab) && !lab->child)) {
      pmcp_json_key(j, "labels");
      pmcp__vw_value(j, lab, 0);
    }
    pmcp__vw_pick(j, it, k, 0, 0);
    pmcp_json_object_end(j);
    n++;
  }
  cJSON_Delete(page);
  v->list_name = "series";
  return take_list(v, j, n);
}

/* ---- dispatch ---------------------------------------------------------- */

static int view_dispatch(pmcp__vctx *v);

int pmcp__view_run(pmcp__vctx *v)
{
  int rc = pmcp__view_record(v);
  if (rc)
    return rc < 0 ? rc : 0;
  /* a group's deleted runs (and the like) are left out unless asked */
  pmcp__rs_prune_deleted(v->rec, v->include_deleted);
  rc = view_dispatch(v);
  /* A list under a deleted entity was asked for by its ref: what hangs off
   * it is shown. Elsewhere deleted things are shown only when asked. */
  if (rc == 0 && v->list.kind)
    v->list.include_deleted =
        v->include_deleted || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v->rec, "deleted"));
  return rc;
}

static int view_dispatch(pmcp__vctx *v)
{
  const char *w = v->view;
  pmcp__ref_kind k = v->ref.kind;
  if (strcmp(w, "card") == 0) {
    pmcp_json *j = NULL;
    if (pmcp_json_new(&j, 0))
      return PMCP_ENOMEM;
    pmcp__view_card(j, v->rec, k, 0);
    int rc = pmcp__vw_take(j, &v->head);
    v->has_head = rc == 0;
    return rc;
  }
  if (strcmp(w, "record") == 0)
    return view_record(v);
  if (strcmp(w, "views") == 0)
    return view_views(v);
  if (strcmp(w, "code") == 0)
    return view_code(v);
  if (strcmp(w, "reproduce") == 0)
    return view_reproduce(v);
  if (strcmp(w, "inherited") == 0)
    return view_inherited(v);
  if (strcmp(w, "diff") == 0)
    return view_diff(v);
  if (strcmp(w, "readme") == 0)
    return view_readme(v);
  if (strcmp(w, "overview") == 0)
    return view_overview(v, 0);
  if (strcmp(w, "summary") == 0)
    return view_overview(v, 1);
  if (strcmp(w, "summary_history") == 0)
    return view_summary_history(v);
  if (strcmp(w, "content") == 0)
    return pmcp__view_content(v);
  if (strcmp(w, "metrics") == 0)
    return view_metrics(v);
  if (strcmp(w, "notes") == 0) {
    set_list(v, "notes", "note", v->ref_text, "{\"kind\":\"note\"}", k_note,
             0);
    return 0;
  }
  if (strcmp(w, "handoff") == 0) {
    set_list(v, "handoff", "note", v->ref_text,
             "{\"kind\":\"handoff\"}", k_note, 0);
    return 0;
  }
  if (strcmp(w, "sessions") == 0) {
    set_list(v, "sessions", "session", v->ref_text, NULL, k_session, 200);
    return 0;
  }
  if (strcmp(w, "artifacts") == 0) {
    set_list(v, "artifacts", "artifact", v->ref_text, NULL, k_artifact, 160);
    return 0;
  }
  if (strcmp(w, "groups") == 0) {
    set_list(v, "groups", "group", v->ref_text, NULL, k_group, 160);
    return 0;
  }
  if (strcmp(w, "events") == 0) {
    set_list(v, "events", "event", v->ref_text, NULL, k_event, 300);
    return 0;
  }
  if (strcmp(w, "trials") == 0) {
    set_list(v, "trials", "trial", v->ref_text, NULL, k_trial, 160);
    return 0;
  }
  if (strcmp(w, "papers") == 0) {
    set_list(v, "papers", "paper", v->ref_text, NULL, k_paper, 200);
    return 0;
  }
  if (strcmp(w, "trajectory") == 0) {
    if (k == PMCP__REF_RUN) {
      /* a run's trajectory is the sequence of its trials */
      set_list(v, "trajectory", "trial", v->ref_text, NULL, k_trial, 160);
      return 0;
    }
    return record_array(v, "trajectory", "trajectory", NULL,
                        "no trajectory was recorded");
  }
  if (strcmp(w, "transcript") == 0)
    return record_array(v, "transcript", "transcript", k_transcript,
                        "no transcript was captured");
  if (strcmp(w, "versions") == 0)
    return pmcp__view_versions(v);
  if (strcmp(w, "lineage") == 0)
    return pmcp__view_lineage(v);
  return pmcp__view_fail(v, PMCP_TERR_INVALID_ARGUMENT, "view %s is not available",
                         w);
}
