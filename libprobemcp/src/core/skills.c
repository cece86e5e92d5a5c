/* SPDX-License-Identifier: MIT */
/* The skills registry (io.modelcontextprotocol/skills): registration of
 * skills and their files, the files as skill:// resources, and the
 * skills/list and skills/get methods. Every entry is built once at
 * registration: the frontmatter as JSON and a manifest whose digests and
 * sizes are those of the bytes resources/read returns. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/call.h"
#include "util/yaml.h"
#include "probemcp/skills.h"
#include "util/buf.h"
#include "util/crypto.h"
#include "util/json.h"

/* The limits every host accepts (the extension's per-skill limits). */
#define MAX_FILES 512
#define MAX_BYTES (16u * 1024 * 1024)
#define MAX_NAME 64
#define MAX_DESCRIPTION 1024

static void file_free(pmcp_server *srv, pmcp__skill_file *f)
{
  pmcp__free(srv, f->path);
  pmcp__free(srv, f->uri);
  pmcp__free(srv, f->data);
  pmcp__free(srv, f);
}

void pmcp__skill_free(pmcp_server *srv, pmcp__skill *s)
{
  if (!s)
    return;
  for (size_t i = 0; i < s->n_files; i++)
    file_free(srv, s->files[i]);
  pmcp__free(srv, s->files);
  pmcp__free(srv, s->path);
  pmcp__free(srv, s->uri);
  pmcp__free(srv, s->frontmatter);
  pmcp__free(srv, s->entry_json);
  pmcp__free(srv, s);
}

/* ---- validation ---- */

/* A path of '/'-separated segments of URI-unreserved characters, none
 * empty, "." or "..". */
static int path_ok(const char *p)
{
  if (!p || !*p)
    return 0;
  const char *seg = p;
  for (const char *q = p;; q++) {
    if (*q == '/' || *q == '\0') {
      size_t n = (size_t)(q - seg);
      if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
        return 0;
      if (*q == '\0')
        return 1;
      seg = q + 1;
      continue;
    }
    char c = *q;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '-' || c == '.' || c == '_' || c == '~'))
      return 0;
  }
}

/* The Agent Skills naming rule: 1-64 of [a-z0-9-], no hyphen first, last
 * or twice in a row. */
static int name_ok(const char *s, size_t n)
{
  if (n == 0 || n > MAX_NAME || s[0] == '-' || s[n - 1] == '-')
    return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
      return 0;
    if (c == '-' && i && s[i - 1] == '-')
      return 0;
  }
  return 1;
}

static const char *last_segment(const char *path)
{
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static const char *guess_mime(const char *path)
{
  size_t n = strlen(path);
  if (n >= 3 && strcmp(path + n - 3, ".md") == 0)
    return "text/markdown";
  if (n >= 5 && strcmp(path + n - 5, ".json") == 0)
    return "application/json";
  return "text/plain";
}

/* ---- frontmatter ---- */

typedef struct fm_build {
  cJSON *root;
  const char *why; /* static text when refused */
} fm_build;

/* Puts one YAML scalar at its "a/b/c" path into the object tree. */
static int fm_put(void *ud, const char *path, const pmcp__imp_value *v, int line)
{
  (void)line;
  fm_build *fb = ud;
  cJSON *obj = fb->root;
  const char *seg = path;
  for (const char *slash; (slash = strchr(seg, '/')); seg = slash + 1) {
    char key[256];
    size_t n = (size_t)(slash - seg);
    if (n >= sizeof key) {
      fb->why = "a frontmatter key is too long";
      return PMCP_EINVAL;
    }
    memcpy(key, seg, n);
    key[n] = '\0';
    cJSON *sub = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!sub) {
      sub = cJSON_AddObjectToObject(obj, key);
      if (!sub)
        return PMCP_ENOMEM;
    } else if (!cJSON_IsObject(sub)) {
      fb->why = "a frontmatter key is both a value and a mapping";
      return PMCP_EINVAL;
    }
    obj = sub;
  }
  cJSON *val = NULL;
  switch (v->type) {
  case PMCP__IV_STR: val = cJSON_CreateString(v->s); break;
  case PMCP__IV_INT: val = cJSON_CreateNumber((double)v->i); break;
  case PMCP__IV_BOOL: val = cJSON_CreateBool(v->i != 0); break;
  case PMCP__IV_NULL: val = cJSON_CreateNull(); break;
  case PMCP__IV_JSON: val = cJSON_Parse(v->s); break;
  case PMCP__IV_FLOAT:
    if (!isfinite(v->f)) {
      fb->why = "a frontmatter number is not finite (JSON cannot hold it)";
      return PMCP_EINVAL;
    }
    val = cJSON_CreateNumber(v->f);
    break;
  }
  if (!val)
    return PMCP_ENOMEM;
  if (cJSON_GetObjectItemCaseSensitive(obj, seg)) {
    cJSON_Delete(val);
    fb->why = "a frontmatter key appears twice";
    return PMCP_EINVAL;
  }
  cJSON_AddItemToObject(obj, seg, val);
  return 0;
}

/* The frontmatter of SKILL.md as compact JSON text (malloc'd), checked
 * against the skill's name; NULL with an error set on @p srv. */
static char *frontmatter_json(pmcp_server *srv, const char *skill_path, const char *text,
                              size_t len, int *rc)
{
  *rc = PMCP_EINVAL;
  const char *p = text, *end = text + len;
  size_t open = len >= 4 && memcmp(p, "---\n", 4) == 0     ? 4
                : len >= 5 && memcmp(p, "---\r\n", 5) == 0 ? 5
                                                           : 0;
  if (!open) {
    pmcp__err(srv, *rc, "skill '%s': SKILL.md does not begin with YAML frontmatter "
                        "(a line \"---\")", skill_path);
    return NULL;
  }
  const char *body = p + open, *close = NULL;
  for (const char *line = body; line < end;) {
    const char *nl = memchr(line, '\n', (size_t)(end - line));
    const char *le = nl ? nl : end;
    size_t n = (size_t)(le - line);
    if (n && line[n - 1] == '\r')
      n--;
    if (n == 3 && memcmp(line, "---", 3) == 0) {
      close = line;
      break;
    }
    line = nl ? nl + 1 : end;
  }
  if (!close) {
    pmcp__err(srv, *rc, "skill '%s': SKILL.md's frontmatter has no closing line \"---\"",
              skill_path);
    return NULL;
  }
  fm_build fb = {cJSON_CreateObject(), NULL};
  if (!fb.root) {
    *rc = PMCP_ENOMEM;
    return NULL;
  }
  int line = 0;
  const char *why = NULL;
  int prc = pmcp__yaml_parse(body, (size_t)(close - body), fm_put, &fb, &line, &why);
  char *out = NULL;
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(fb.root, "name");
  const cJSON *desc = cJSON_GetObjectItemCaseSensitive(fb.root, "description");
  const char *want = last_segment(skill_path);
  if (prc == PMCP_ENOMEM) {
    *rc = prc;
  } else if (prc) {
    /* the reader counts the lines after the opening "---" */
    pmcp__err(srv, *rc, "skill '%s': SKILL.md line %d (frontmatter): %s", skill_path,
              line + 1, fb.why ? fb.why : why ? why : "not YAML this reader accepts");
  } else if (!cJSON_IsString(name) || !name_ok(name->valuestring, strlen(name->valuestring))) {
    pmcp__err(srv, *rc, "skill '%s': the frontmatter needs a \"name\" of lower-case "
                        "letters, digits and single hyphens (at most %d)", skill_path,
              MAX_NAME);
  } else if (strcmp(name->valuestring, want) != 0) {
    pmcp__err(srv, *rc, "skill '%s': the frontmatter name '%s' differs from the path's "
                        "last segment '%s'", skill_path, name->valuestring, want);
  } else if (!cJSON_IsString(desc) || !desc->valuestring[0] ||
             strlen(desc->valuestring) > MAX_DESCRIPTION) {
    pmcp__err(srv, *rc, "skill '%s': the frontmatter needs a non-empty \"description\" "
                        "of at most %d characters", skill_path, MAX_DESCRIPTION);
  } else {
    char *txt = cJSON_PrintUnformatted(fb.root);
    out = txt ? pmcp__strdup(srv, txt) : NULL;
    cJSON_free(txt);
    *rc = out ? 0 : PMCP_ENOMEM;
  }
  cJSON_Delete(fb.root);
  return out;
}

/* ---- registration ---- */

static pmcp__skill *skill_find(const pmcp_server *srv, const char *path)
{
  for (size_t i = 0; i < srv->reg.n_skills; i++)
    if (strcmp(srv->reg.skills[i]->path, path) == 0)
      return srv->reg.skills[i];
  return NULL;
}

static int uri_registered(const pmcp_server *srv, const char *uri)
{
  for (size_t i = 0; i < srv->reg.n_resources; i++)
    if (strcmp(srv->reg.resources[i]->uri, uri) == 0)
      return 1;
  return 0;
}

static int read_file(pmcp_call *call, void *ud)
{
  const pmcp__skill_file *f = ud;
  return pmcp_result_resource_text(call, f->uri, f->mime, f->data);
}

/* Checks @p files for skill @p s (existing files included) before anything
 * is registered, so that a refusal leaves the registry as it was. */
static int check_files(pmcp_server *srv, const pmcp__skill *s, const char *skill_path,
                       const pmcp_skill_file *files, size_t n, size_t have_files,
                       size_t have_bytes)
{
  if (n && !files)
    return pmcp__err(srv, PMCP_EINVAL, "skill '%s': files missing", skill_path);
  if (have_files + n > MAX_FILES)
    return pmcp__err(srv, PMCP_EINVAL, "skill '%s': more than %d files", skill_path,
                     MAX_FILES);
  size_t bytes = have_bytes;
  for (size_t i = 0; i < n; i++) {
    const pmcp_skill_file *f = &files[i];
    if (!path_ok(f->path))
      return pmcp__err(srv, PMCP_EINVAL,
                       "skill '%s': file path '%s' is not '/'-separated segments of "
                       "letters, digits and \"-._~\"", skill_path, f->path ? f->path : "");
    if ((f->size && !f->data) || memchr(f->data ? f->data : "", '\0', f->size) ||
        !pmcp__utf8_valid(f->data ? f->data : "", f->size))
      return pmcp__err(srv, PMCP_EINVAL,
                       "skill '%s': file '%s' is not UTF-8 text without NUL bytes",
                       skill_path, f->path);
    if (f->size > MAX_BYTES - bytes)
      return pmcp__err(srv, PMCP_EINVAL, "skill '%s': its files exceed 16 MiB",
                       skill_path);
    bytes += f->size;
    for (size_t j = 0; j < i; j++)
      if (strcmp(files[j].path, f->path) == 0)
        return pmcp__err(srv, PMCP_EEXIST, "skill '%s': file '%s' is given twice",
                         skill_path, f->path);
    for (size_t j = 0; s && j < s->n_files; j++)
      if (strcmp(s->files[j]->path, f->path) == 0)
        return pmcp__err(srv, PMCP_EEXIST, "skill '%s' has a file '%s' already",
                         skill_path, f->path);
    pmcp_buf u = PMCP_BUF_INIT;
    int rc = pmcp__buf_printf(&u, "skill://%s/%s", skill_path, f->path);
    int taken = !rc && uri_registered(srv, u.ptr);
    if (taken)
      rc = pmcp__err(srv, PMCP_EEXIST, "resource '%s' is already registered", u.ptr);
    pmcp_buf_dispose(&u);
    if (rc)
      return rc;
  }
  return 0;
}

/* Replaces the engine string at @p slot with the text built in @p b (when
 * @p rc, the build's result, is 0); disposes of @p b either way. */
static int take_text(pmcp_server *srv, char **slot, pmcp_buf *b, int rc)
{
  char *copy = rc ? NULL : pmcp__strdup(srv, b->ptr);
  pmcp_buf_dispose(b);
  if (!copy)
    return PMCP_ENOMEM;
  pmcp__free(srv, *slot);
  *slot = copy;
  return 0;
}

/* Copies one checked file into @p s and registers its resource (the list
 * entry also gives the size). */
static int add_file(pmcp_server *srv, pmcp__skill *s, const pmcp_skill_file *in,
                    const char *description)
{
  pmcp__skill_file *f = pmcp__calloc(srv, 1, sizeof *f);
  if (!f)
    return PMCP_ENOMEM;
  f->path = pmcp__strdup(srv, in->path);
  f->mime = in->mime_type ? in->mime_type : guess_mime(in->path);
  f->data = pmcp__malloc(srv, in->size + 1);
  f->size = in->size;
  pmcp_buf u = PMCP_BUF_INIT;
  int rc = pmcp__buf_printf(&u, "skill://%s/%s", s->path, in->path);
  if (!rc && !(f->uri = pmcp__strdup(srv, u.ptr)))
    rc = PMCP_ENOMEM;
  pmcp_buf_dispose(&u);
  if (!rc && (!f->path || !f->data))
    rc = PMCP_ENOMEM;
  unsigned char d[PMCP__SHA256_LEN];
  if (!rc) {
    memcpy(f->data, in->size ? in->data : "", in->size);
    f->data[in->size] = '\0';
    rc = pmcp__sha256(f->data, f->size, d);
  }
  if (!rc) {
    memcpy(f->digest, "sha256:", 7);
    pmcp__hex(d, sizeof d, f->digest + 7);
    rc = pmcp__registry_push(srv, (void ***)&s->files, &s->n_files, &s->cap_files, f);
  }
  if (rc) {
    file_free(srv, f);
    return rc;
  }
  /* The MIME type is static or the caller's: the resource copies it, and
   * the file keeps the resource's copy. */
  int is_skill_md = strcmp(in->path, "SKILL.md") == 0;
  pmcp_buf what = PMCP_BUF_INIT;
  if (!is_skill_md && pmcp__buf_printf(&what, "A file of the skill %s", last_segment(s->path)))
    return PMCP_ENOMEM;
  pmcp_resource_def def = PMCP_RESOURCE_DEF_INIT;
  def.uri = f->uri;
  def.name = is_skill_md ? last_segment(s->path) : f->path;
  def.description = is_skill_md ? description : what.ptr;
  def.mime_type = f->mime;
  def.read = read_file;
  def.ud = f;
  rc = pmcp_server_add_resource(srv, &def);
  pmcp_buf_dispose(&what);
  if (rc)
    return rc;
  pmcp__resource *r = srv->reg.resources[srv->reg.n_resources - 1];
  f->mime = r->mime_type;
  /* resources/list shows the size too (Resource.size) */
  size_t n = strlen(r->list_json);
  pmcp_buf e = PMCP_BUF_INIT;
  rc = pmcp__buf_append(&e, r->list_json, n - 1);
  if (!rc)
    rc = pmcp__buf_printf(&e, ",\"size\":%zu}", f->size);
  return take_text(srv, &r->list_json, &e, rc);
}

/* The skills/list and skills/get entry of @p s. */
static int build_entry(pmcp_server *srv, pmcp__skill *s)
{
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_puts(&b, "{\"uri\":");
  if (!rc)
    rc = pmcp__buf_json_string(&b, s->uri, strlen(s->uri));
  if (!rc)
    rc = pmcp__buf_printf(&b, ",\"frontmatter\":%s,\"resources\":[", s->frontmatter);
  for (size_t i = 0; i < s->n_files && !rc; i++) {
    const pmcp__skill_file *f = s->files[i];
    rc = pmcp__buf_puts(&b, i ? ",{\"uri\":" : "{\"uri\":");
    if (!rc)
      rc = pmcp__buf_json_string(&b, f->uri, strlen(f->uri));
    if (!rc)
      rc = pmcp__buf_printf(&b, ",\"digest\":\"%s\",\"size\":%zu}", f->digest, f->size);
  }
  if (!rc)
    rc = pmcp__buf_puts(&b, "]}");
  return take_text(srv, &s->entry_json, &b, rc);
}

/* Undoes an addition that failed once the files were checked (only
 * allocation can fail then): the resources registered since there were
 * @p n_resources, and the files of @p s since it had @p n_files, so that no
 * resource is left reading a freed file. */
static void roll_back(pmcp_server *srv, pmcp__skill *s, size_t n_resources, size_t n_files)
{
  pmcp__registry *r = &srv->reg;
  while (r->n_resources > n_resources)
    pmcp__resource_free(srv, r->resources[--r->n_resources]);
  while (s->n_files > n_files)
    file_free(srv, s->files[--s->n_files]);
}

static int add_files(pmcp_server *srv, pmcp__skill *s, const pmcp_skill_file *files,
                     size_t n, const char *description)
{
  size_t n_resources = srv->reg.n_resources, n_files = s->n_files;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++)
    rc = add_file(srv, s, &files[i], strcmp(files[i].path, "SKILL.md") ? NULL : description);
  if (!rc)
    rc = build_entry(srv, s);
  if (rc)
    roll_back(srv, s, n_resources, n_files);
  return rc;
}

static size_t skill_bytes(const pmcp__skill *s)
{
  size_t n = 0;
  for (size_t i = 0; s && i < s->n_files; i++)
    n += s->files[i]->size;
  return n;
}

int pmcp_server_add_skill(pmcp_server *server, const pmcp_skill_def *def)
{
  if (!server || server->magic != PMCP__SERVER_MAGIC)
    return PMCP_EMISUSE;
  if (!def || def->version != PMCP_SKILL_DEF_VERSION)
    return pmcp__err(server, PMCP_EINVAL, "skill definition missing or of unknown version");
  int rc = pmcp__registration_open(server);
  if (rc)
    return rc;
  if (!path_ok(def->path))
    return pmcp__err(server, PMCP_EINVAL,
                     "skill path '%s' is not '/'-separated segments of letters, digits "
                     "and \"-._~\"", def->path ? def->path : "");
  if (skill_find(server, def->path))
    return pmcp__err(server, PMCP_EEXIST, "skill '%s' is already registered", def->path);
  const pmcp_skill_file *md = NULL;
  for (size_t i = 0; def->files && i < def->n_files; i++)
    if (def->files[i].path && strcmp(def->files[i].path, "SKILL.md") == 0)
      md = &def->files[i];
  if ((rc = check_files(server, NULL, def->path, def->files, def->n_files, 0, 0)))
    return rc;
  if (!md)
    return pmcp__err(server, PMCP_EINVAL, "skill '%s' has no SKILL.md", def->path);
  char *fm = frontmatter_json(server, def->path, md->data, md->size, &rc);
  if (!fm)
    return rc;
  pmcp__skill *s = pmcp__calloc(server, 1, sizeof *s);
  pmcp_buf u = PMCP_BUF_INIT;
  rc = s ? pmcp__buf_printf(&u, "skill://%s/SKILL.md", def->path) : PMCP_ENOMEM;
  if (!rc) {
    s->frontmatter = fm;
    fm = NULL;
    s->path = pmcp__strdup(server, def->path);
    s->uri = pmcp__strdup(server, u.ptr);
    rc = s->path && s->uri ? 0 : PMCP_ENOMEM;
  }
  pmcp_buf_dispose(&u);
  size_t n_resources = server->reg.n_resources;
  if (!rc) {
    cJSON *f = cJSON_Parse(s->frontmatter);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(f, "description");
    rc = d ? add_files(server, s, def->files, def->n_files, d->valuestring) : PMCP_ENOMEM;
    cJSON_Delete(f);
  }
  if (!rc) {
    rc = pmcp__registry_push(server, (void ***)&server->reg.skills, &server->reg.n_skills,
                             &server->reg.cap_skills, s);
    if (rc)
      roll_back(server, s, n_resources, 0);
  }
  if (rc) {
    pmcp__free(server, fm);
    pmcp__skill_free(server, s);
  }
  return rc;
}

int pmcp_server_add_skill_files(pmcp_server *server, const char *skill_path,
                                const pmcp_skill_file *files, size_t n_files)
{
  if (!server || server->magic != PMCP__SERVER_MAGIC)
    return PMCP_EMISUSE;
  int rc = pmcp__registration_open(server);
  if (rc)
    return rc;
  pmcp__skill *s = skill_path ? skill_find(server, skill_path) : NULL;
  if (!s)
    return pmcp__err(server, PMCP_ENOTFOUND, "no skill '%s' is registered",
                     skill_path ? skill_path : "");
  for (size_t i = 0; files && i < n_files; i++)
    if (files[i].path && strcmp(files[i].path, "SKILL.md") == 0)
      return pmcp__err(server, PMCP_EEXIST, "skill '%s' has a SKILL.md already",
                       skill_path);
  rc = check_files(server, s, skill_path, files, n_files, s->n_files, skill_bytes(s));
  return rc ? rc : add_files(server, s, files, n_files, NULL);
}

/* ---- methods ---- */

static int none_served(pmcp__req *req, const char *method)
{
  if (req->srv->reg.n_skills)
    return 0;
  pmcp__req_errorf(req, -32601, "Method not found: %s (this server serves no skills)",
                   method);
  return 1;
}

void pmcp__method_skills_list(pmcp__req *req, cJSON *params)
{
  if (none_served(req, "skills/list"))
    return;
  const pmcp__registry *r = &req->srv->reg;
  size_t off;
  if (pmcp__page_start(req, params, 's', r->n_skills, &off))
    return;
  size_t ps = req->srv->page_size;
  size_t end = off + ps < r->n_skills ? off + ps : r->n_skills;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_puts(&b, "{\"skills\":[");
  for (size_t i = off; i < end && !rc; i++) {
    if (i > off)
      rc = pmcp__buf_putc(&b, ',');
    if (!rc)
      rc = pmcp__buf_puts(&b, r->skills[i]->entry_json);
  }
  if (!rc)
    rc = pmcp__buf_putc(&b, ']');
  if (!rc)
    rc = pmcp__page_next(&b, 's', end, r->n_skills);
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  pmcp__req_answer(req, rc, &b);
}

void pmcp__method_skills_get(pmcp__req *req, cJSON *params)
{
  if (none_served(req, "skills/get"))
    return;
  cJSON *uri = cJSON_GetObjectItemCaseSensitive(params, "uri");
  if (!cJSON_IsString(uri)) {
    pmcp__req_error(req, -32602, "Invalid params: skills/get needs a string \"uri\" "
                                 "(the URI of a skill's SKILL.md)", NULL);
    return;
  }
  const pmcp__registry *r = &req->srv->reg;
  const pmcp__skill *s = NULL;
  for (size_t i = 0; i < r->n_skills && !s; i++)
    if (strcmp(r->skills[i]->uri, uri->valuestring) == 0)
      s = r->skills[i];
  if (!s) {
    pmcp_buf d = PMCP_BUF_INIT;
    int rc = pmcp__buf_puts(&d, "{\"uri\":");
    if (!rc)
      rc = pmcp__buf_json_string(&d, uri->valuestring, strlen(uri->valuestring));
    if (!rc)
      rc = pmcp__buf_putc(&d, '}');
    pmcp_buf m = PMCP_BUF_INIT;
    int mrc = pmcp__buf_printf(&m, "Invalid params: no skill is served at %.300s%s",
                               uri->valuestring, strlen(uri->valuestring) > 300 ? "..." : "");
    pmcp__req_error(req, -32602, mrc ? "Invalid params: no skill is served at that uri" : m.ptr,
                    rc ? NULL : d.ptr);
    pmcp_buf_dispose(&m);
    pmcp_buf_dispose(&d);
    return;
  }
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_puts(&b, "{\"skill\":");
  if (!rc)
    rc = pmcp__buf_puts(&b, s->entry_json);
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  pmcp__req_answer(req, rc, &b);
}
