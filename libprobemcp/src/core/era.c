/* SPDX-License-Identifier: MIT */
/* The two protocol eras on one endpoint: the one version list, the one
 * message classifier and batch rule, the admission of a modern-era
 * (2026-07-28) request (per-request _meta, version, header claims, removed
 * methods, declared capabilities), the decoration of its result
 * (resultType, serverInfo, cache hints) and server/discover. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/engine.h"
#include "core/jdoc.h"
#include "util/abi.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/cnum.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_LOG "io.modelcontextprotocol/logLevel"

/* Negotiated by initialize, newest first. */
const char *const pmcp__versions[] = {
  "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

/* Everything the engine speaks, newest first: the modern revision, then
 * the initialize-negotiated ones. */
static const char *const all_versions[] = {
  PMCP__MODERN_VERSION, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

const char *const *pmcp_protocol_versions(void)
{
  return all_versions;
}

pmcp_era pmcp_protocol_version_era(const char *v, size_t len)
{
  if (!v)
    return PMCP_ERA_NONE;
  while (len && (*v == ' ' || *v == '\t'))
    v++, len--;
  while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
    len--;
  if (len == strlen(PMCP__MODERN_VERSION) && memcmp(v, PMCP__MODERN_VERSION, len) == 0)
    return PMCP_ERA_MODERN;
  for (int i = 0; pmcp__versions[i]; i++)
    if (len == strlen(pmcp__versions[i]) && memcmp(v, pmcp__versions[i], len) == 0)
      return PMCP_ERA_LEGACY;
  return PMCP_ERA_NONE;
}

int pmcp_protocol_batch_allowed(const char *v)
{
  return v && strcmp(v, PMCP__BATCH_VERSION) == 0;
}

/* The first revision that defines the MCP-Protocol-Version header. */
#define HEADER_VERSION "2025-06-18"

int pmcp_protocol_header_fits(const char *negotiated, const char *v, size_t len)
{
  if (!v)
    return 1;
  while (len && (*v == ' ' || *v == '\t'))
    v++, len--;
  while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
    len--;
  if (negotiated && len == strlen(negotiated) && memcmp(v, negotiated, len) == 0)
    return 1;
  /* A revision from before the header (2025-03-26 is also what a server
   * assumes of a request that says nothing) carries no claim of its own:
   * the negotiated version applies, as when the header is absent. Dates
   * compare as strings. */
  char ver[16];
  if (len >= sizeof ver || pmcp_protocol_version_era(v, len) == PMCP_ERA_NONE)
    return 0;
  memcpy(ver, v, len);
  ver[len] = '\0';
  return strcmp(ver, HEADER_VERSION) < 0;
}

/* What the modern era says of a method, found once per request (every
 * modern request asks several of these questions). */
enum {
  M_MODERN_ONLY = 1, /* exists only in the modern era: modern even without
                        its _meta (and then refused for the missing _meta) */
  M_REMOVED = 2,     /* removed by the modern era */
  M_CACHEABLE = 4    /* its result gets ttlMs and cacheScope */
};

typedef struct method_facts {
  const char *name;
  unsigned flags;
  const char *name_key; /* the param Mcp-Name must repeat, or NULL */
} method_facts;

static const method_facts methods[] = {
  {"tools/call", 0, "name"},
  {"tools/list", M_CACHEABLE, NULL},
  {"resources/read", M_CACHEABLE, "uri"},
  {"resources/list", M_CACHEABLE, NULL},
  {"resources/templates/list", M_CACHEABLE, NULL},
  {"prompts/get", 0, "name"},
  {"prompts/list", M_CACHEABLE, NULL},
  {"server/discover", M_MODERN_ONLY | M_CACHEABLE, NULL},
  {"subscriptions/listen", M_MODERN_ONLY, NULL},
  {"tasks/get", 0, "taskId"},
  {"tasks/update", 0, "taskId"},
  {"tasks/cancel", 0, "taskId"},
  {"skills/list", M_CACHEABLE, NULL},
  {"skills/get", M_CACHEABLE, NULL},
  {"initialize", M_REMOVED, NULL},
  {"ping", M_REMOVED, NULL},
  {"logging/setLevel", M_REMOVED, NULL},
  {"resources/subscribe", M_REMOVED, NULL},
  {"resources/unsubscribe", M_REMOVED, NULL},
};

static const method_facts *facts(const char *method)
{
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
    if (methods[i].name[0] == method[0] && strcmp(methods[i].name, method) == 0)
      return &methods[i];
  return NULL;
}

static int modern_only(const char *method)
{
  const method_facts *f = facts(method);
  return f && (f->flags & M_MODERN_ONLY);
}

/* ---- classification ---- */

pmcp_msg_kind pmcp__classify_one(const cJSON *m, pmcp_msg_info *info, int first)
{
  if (!cJSON_IsObject(m))
    return PMCP_MSG_INVALID;
  const cJSON *method = pmcp__jget(m, "method");
  const cJSON *id = pmcp__jget(m, "id");
  if (!method) {
    if (cJSON_IsNumber(id) && (pmcp__jget(m, "result") || pmcp__jget(m, "error")))
      return PMCP_MSG_RESPONSE;
    return PMCP_MSG_INVALID;
  }
  if (!cJSON_IsString(method))
    return PMCP_MSG_INVALID;
  if (!id)
    return PMCP_MSG_NOTIFICATION;
  if (!cJSON_IsString(id) && !cJSON_IsNumber(id))
    return PMCP_MSG_INVALID;
  if (strcmp(method->valuestring, "initialize") == 0)
    info->initialize = 1;
  if (first) {
    const cJSON *pv = pmcp__jget(pmcp__jget(pmcp__jget(m, "params"), "_meta"), META_VERSION);
    info->method = method->valuestring;
    if (cJSON_IsString(pv))
      info->protocol_version = pv->valuestring;
    info->era = pv || modern_only(method->valuestring) ? PMCP_ERA_MODERN : PMCP_ERA_LEGACY;
  }
  return PMCP_MSG_REQUEST;
}

/* The one empty string of classified messages without a version or
 * method (pmcp_msg_info_dispose() frees anything else). */
static const char no_string[] = "";

int pmcp__msg_info_own(pmcp_msg_info *info, pmcp_buf *into, size_t *pv_off, size_t *method_off)
{
  const char *pv = info->protocol_version ? info->protocol_version : no_string;
  const char *me = info->method ? info->method : no_string;
  info->protocol_version = info->method = no_string;
  *pv_off = into->len;
  if (pmcp__buf_append(into, pv, strlen(pv) + 1))
    return PMCP_ENOMEM;
  *method_off = into->len;
  return pmcp__buf_append(into, me, strlen(me) + 1) ? PMCP_ENOMEM : 0;
}

void pmcp_msg_info_dispose(pmcp_msg_info *info)
{
  if (!info)
    return;
  if (info->protocol_version && info->protocol_version != no_string)
    free((char *)info->protocol_version);
  info->protocol_version = info->method = no_string;
}

/* Classifies @p msg into @p out (zeroed but its version); its strings
 * are borrowed from the parse until made the caller's. */
static int classify(const char *msg, size_t len, pmcp_msg_info *out)
{
  out->protocol_version = out->method = no_string;
  cJSON *root = cJSON_ParseWithLength(msg ? msg : "", len);
  if (!root)
    return 0;
  out->batch = cJSON_IsArray(root);
  int any_invalid = 0, n_notes = 0;
  for (cJSON *m = out->batch ? root->child : root; m; m = out->batch ? m->next : NULL) {
    pmcp_msg_kind k = pmcp__classify_one(m, out, out->n_requests == 0);
    out->n_items++;
    any_invalid |= k == PMCP_MSG_INVALID;
    out->n_requests += k == PMCP_MSG_REQUEST;
    n_notes += k == PMCP_MSG_NOTIFICATION;
  }
  if (any_invalid || out->n_items == 0)
    out->kind = PMCP_MSG_INVALID;
  else if (out->n_requests)
    out->kind = PMCP_MSG_REQUEST;
  else
    out->kind = n_notes ? PMCP_MSG_NOTIFICATION : PMCP_MSG_RESPONSE;
  /* one block, "version\0method\0", owned by the caller's info */
  pmcp_buf b = PMCP_BUF_INIT;
  size_t pv, me;
  int rc = pmcp__msg_info_own(out, &b, &pv, &me);
  cJSON_Delete(root);
  if (rc) {
    pmcp_buf_dispose(&b);
    return rc;
  }
  if (b.len > 2) {
    out->protocol_version = b.ptr + pv;
    out->method = b.ptr + me;
  } else {
    pmcp_buf_dispose(&b);
  }
  return 0;
}

/* Release 0.2's pmcp_message_classify (pmcp_msg_info version 2 on). With
 * the version script it is the default version of the name and release
 * 0.1's, below, stays for programs linked against 0.1. */
PMCP_API int pmcp__message_classify_0_2(const char *msg, size_t len, pmcp_msg_info *out);
PMCP__SYMVER_AS(pmcp__message_classify_0_2, "pmcp_message_classify@@PMCP_0.2")
int pmcp__message_classify_0_2(const char *msg, size_t len, pmcp_msg_info *out)
{
  if (!out || (!msg && len) || out->version < 2 || out->version > PMCP_MSG_INFO_VERSION)
    return PMCP_EINVAL;
  unsigned version = out->version;
  memset(out, 0, sizeof *out);
  out->version = version;
  return classify(msg, len, out);
}

/* Release 0.1's layout: no version member, the strings cut to fit. */
typedef struct msg_info_0_1 {
  pmcp_msg_kind kind;
  int batch;
  size_t n_items;
  size_t n_requests;
  int initialize;
  pmcp_era era;
  char version[32];
  char method[64];
} msg_info_0_1;

PMCP_API int pmcp__message_classify_0_1(const char *msg, size_t len, msg_info_0_1 *out);

static void copy_cut(char *out, size_t size, const char *s)
{
  size_t n = strnlen(s, size - 1);
  memcpy(out, s, n);
  out[n] = '\0';
}

PMCP__SYMVER_AS(pmcp__message_classify_0_1, "pmcp_message_classify@PMCP_0.1")
int pmcp__message_classify_0_1(const char *msg, size_t len, msg_info_0_1 *out)
{
  if (!out || (!msg && len))
    return PMCP_EINVAL;
  memset(out, 0, sizeof *out);
  pmcp_msg_info i = PMCP_MSG_INFO_INIT;
  int rc = pmcp__message_classify_0_2(msg, len, &i);
  if (rc)
    return rc;
  out->kind = i.kind;
  out->batch = i.batch;
  out->n_items = i.n_items;
  out->n_requests = i.n_requests;
  out->initialize = i.initialize;
  out->era = i.era;
  copy_cut(out->version, sizeof out->version, i.protocol_version);
  copy_cut(out->method, sizeof out->method, i.method);
  pmcp_msg_info_dispose(&i);
  return 0;
}

/* ---- admission of a modern request ---- */

static int refuse(pmcp__req *req, int status, int code, const char *msg,
                  const char *data)
{
  req->http_status = status;
  pmcp__req_error(req, code, msg, data);
  return -1;
}

/* Whether header claim @p claim matches @p value (surrounding blanks of
 * the header allowed, the value compared exactly). */
static int claim_matches(const char *claim, const char *value)
{
  if (!value)
    return 0;
  while (*claim == ' ' || *claim == '\t')
    claim++;
  /* One pass (three claims on every modern request): the value, then
   * nothing but blanks. A value ending in a blank never matches, since
   * the claim's trailing blanks are not part of it. */
  const char *v = value;
  while (*v && *claim == *v)
    claim++, v++;
  if (*v || (v > value && (v[-1] == ' ' || v[-1] == '\t')))
    return 0;
  while (*claim == ' ' || *claim == '\t')
    claim++;
  return *claim == '\0';
}

static int unsupported_version(pmcp__req *req, const char *requested)
{
  pmcp_buf d = PMCP_BUF_INIT;
  int rc = pmcp__buf_printf(&d, "{\"supported\":[\"%s\"],\"requested\":",
                            PMCP__MODERN_VERSION);
  if (!rc)
    rc = pmcp__buf_json_string(&d, requested, strlen(requested));
  if (!rc)
    rc = pmcp__buf_putc(&d, '}');
  pmcp_buf m = PMCP_BUF_INIT;
  int mrc = pmcp__buf_printf(&m, "Unsupported protocol version: this server speaks %s "
                                 "per request (older versions through initialize)",
                             PMCP__MODERN_VERSION);
  refuse(req, 400, -32022, mrc ? "Unsupported protocol version" : m.ptr,
         rc ? NULL : d.ptr);
  pmcp_buf_dispose(&m);
  pmcp_buf_dispose(&d);
  return -1;
}

/* Whether a handler family of @p method is registered (discover declares
 * exactly these); unknown methods are left to the method table. */
static int served(const pmcp_server *srv, const char *method)
{
  const pmcp__registry *r = &srv->reg;
  if (strncmp(method, "tools/", 6) == 0)
    return r->n_tools > 0;
  if (strncmp(method, "prompts/", 8) == 0)
    return r->n_prompts > 0;
  if (strncmp(method, "resources/", 10) == 0)
    return r->n_resources > 0 || r->n_templates > 0;
  if (strcmp(method, "completion/complete") == 0)
    return r->complete != NULL;
  if (strncmp(method, "tasks/", 6) == 0)
    return pmcp__tasks_enabled(srv);
  if (strncmp(method, "skills/", 7) == 0)
    return r->n_skills > 0;
  return 1;
}

/* Strict standard base64 (padding required, alphabet only) of [p, p+n)
 * into a NUL-terminated @p out. 0, or -1 when malformed or too long. */
static int b64_strict(const char *p, size_t n, char *out, size_t size)
{
  if (n % 4)
    return -1;
  size_t o = 0;
  for (size_t i = 0; i < n; i += 4) {
    unsigned v = 0;
    int pad = 0;
    for (int k = 0; k < 4; k++) {
      unsigned char c = (unsigned char)p[i + k];
      int d;
      if (c >= 'A' && c <= 'Z') d = c - 'A';
      else if (c >= 'a' && c <= 'z') d = c - 'a' + 26;
      else if (c >= '0' && c <= '9') d = c - '0' + 52;
      else if (c == '+') d = 62;
      else if (c == '/') d = 63;
      else if (c == '=' && i + 4 == n && k >= 2) { d = 0; pad++; }
      else return -1;
      if (pad && c != '=')
        return -1;
      v = (v << 6) | (unsigned)d;
    }
    for (int k = 0; k < 3 - pad; k++) {
      if (o + 1 >= size)
        return -1;
      out[o++] = (char)((v >> (16 - 8 * k)) & 0xff);
    }
  }
  out[o] = '\0';
  return 0;
}

/* The value of header Mcp-Param-@p suffix, decoded; NULL when absent;
 * *bad set when it is malformed. */
static const char *param_claim(const pmcp_http_claims *cl, const char *suffix,
                               char *buf, size_t size, int *bad)
{
  for (size_t i = 0; i < cl->n_params; i++) {
    if (strcasecmp(cl->param_names[i], suffix) != 0)
      continue;
    const char *v = cl->param_values[i];
    while (*v == ' ' || *v == '\t')
      v++;
    size_t n = strlen(v);
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
      n--;
    if (n >= 11 && memcmp(v, "=?base64?", 9) == 0 && memcmp(v + n - 2, "?=", 2) == 0) {
      if (b64_strict(v + 9, n - 11, buf, size))
        *bad = 1;
      return buf;
    }
    if (n >= size) {
      *bad = 1;
      return buf;
    }
    memcpy(buf, v, n);
    buf[n] = '\0';
    return buf;
  }
  return NULL;
}

/* Whether header text @p h stands for argument @p a (a primitive). */
static int param_equal(const char *h, const cJSON *a)
{
  if (cJSON_IsString(a))
    return strcmp(h, a->valuestring) == 0;
  if (cJSON_IsBool(a))
    return strcmp(h, cJSON_IsTrue(a) ? "true" : "false") == 0;
  if (cJSON_IsNumber(a)) {
    char *end;
    double d = pmcp__c_strtod(h, &end);
    return *h && !*end && d == a->valuedouble;
  }
  return 0;
}

/* Mcp-Param-* headers against the arguments of a tool's annotated
 * parameters: a present argument needs its header with the same value, an
 * absent one no header. */
static int check_param_claims(pmcp__req *req, cJSON *params)
{
  const pmcp_http_claims *cl = req->claims;
  cJSON *name = pmcp__jget(params, "name");
  const pmcp__tool *t = cJSON_IsString(name) ? pmcp__tool_find(req->srv, name->valuestring)
                                             : NULL;
  if (!t || !t->list_json || !t->header_params)
    return 0;
  cJSON *def = cJSON_Parse(t->list_json);
  cJSON *props = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(def, "inputSchema"), "properties");
  cJSON *args = pmcp__jget(params, "arguments");
  const char *why = NULL;
  for (cJSON *p = props ? props->child : NULL; p && !why; p = p->next) {
    cJSON *hdr = cJSON_GetObjectItemCaseSensitive(p, "x-mcp-header");
    if (!cJSON_IsString(hdr))
      continue;
    char buf[1024];
    int bad = 0;
    const char *h = param_claim(cl, hdr->valuestring, buf, sizeof buf, &bad);
    cJSON *a = pmcp__jget(args, p->string);
    if (bad)
      why = "Header mismatch: an Mcp-Param header is not valid (=?base64?...?= malformed)";
    else if (a && !h)
      why = "Header mismatch: an argument annotated x-mcp-header has no Mcp-Param header";
    else if (!a && h)
      why = "Header mismatch: an Mcp-Param header names an argument the body omits";
    else if (a && !param_equal(h, a))
      why = "Header mismatch: an Mcp-Param header differs from its argument";
  }
  cJSON_Delete(def);
  return why ? refuse(req, 400, -32020, why, NULL) : 0;
}

int pmcp__era_admit(pmcp__req *req, const char *method, cJSON *params)
{
  cJSON *meta = pmcp__jget(params, "_meta");
  /* A _meta seen before: its members were found once (jdoc_meta.c). */
  const pmcp__meta_entry *known = pmcp__meta_cache_of(req->srv, meta);
  cJSON *pv = known ? (cJSON *)known->version : pmcp__jget(meta, META_VERSION);
  const method_facts *mf = facts(method);
  unsigned flags = mf ? mf->flags : 0;
  if (!pv && !(flags & M_MODERN_ONLY))
    return 0; /* the legacy era: the session's initialize decides */
  req->modern = 1;
  if (!cJSON_IsObject(meta))
    return refuse(req, 400, -32602,
                  "Invalid params: a " PMCP__MODERN_VERSION " request needs params._meta "
                  "with \"" META_VERSION "\" and \"" META_CAPS "\"", NULL);
  if (!cJSON_IsString(pv))
    return refuse(req, 400, -32602,
                  "Invalid params: params._meta needs the string \"" META_VERSION "\"",
                  NULL);
  cJSON *caps = known ? (cJSON *)known->caps : pmcp__jget(meta, META_CAPS);
  if (!cJSON_IsObject(caps))
    return refuse(req, 400, -32602,
                  "Invalid params: params._meta needs the object \"" META_CAPS "\"", NULL);
  const pmcp_http_claims *cl = req->claims;
  if (cl && cl->protocol_version && !claim_matches(cl->protocol_version, pv->valuestring))
    return refuse(req, 400, -32020,
                  "Header mismatch: MCP-Protocol-Version differs from params._meta's "
                  "protocol version", NULL);
  if (!(known && known->modern_version) &&
      pmcp_protocol_version_era(pv->valuestring, strlen(pv->valuestring)) != PMCP_ERA_MODERN)
    return unsupported_version(req, pv->valuestring);
  if (cl && !(cl->method && claim_matches(cl->method, method)))
    return refuse(req, 400, -32020,
                  cl->method ? "Header mismatch: Mcp-Method differs from the body's method"
                             : "Header mismatch: the Mcp-Method header is required", NULL);
  cJSON *nv = mf && mf->name_key ? pmcp__jget(params, mf->name_key) : NULL;
  const char *name = cJSON_IsString(nv) ? nv->valuestring : NULL;
  if (cl && name && !(cl->name && claim_matches(cl->name, name)))
    return refuse(req, 400, -32020,
                  cl->name ? "Header mismatch: Mcp-Name differs from the body's name or uri"
                           : "Header mismatch: the Mcp-Name header is required", NULL);
  if (cl && strcmp(method, "tools/call") == 0 && check_param_claims(req, params))
    return -1;
  cJSON *lv = known ? (cJSON *)known->log : pmcp__jget(meta, META_LOG);
  if (lv) {
    if (!cJSON_IsString(lv) || pmcp__level_parse(lv->valuestring, &req->log_level))
      return refuse(req, 400, -32602,
                    "Invalid params: \"" META_LOG "\" must be one of debug, info, notice, "
                    "warning, error, critical, alert, emergency", NULL);
    req->has_log_level = 1;
  }
  req->client_caps = caps;
  if ((flags & M_REMOVED) || !served(req->srv, method)) {
    pmcp__req_errorf(req, -32601, "Method not found: %s (not served in protocol %s)",
                     method, PMCP__MODERN_VERSION);
    return -1;
  }
  req->cacheable = (flags & M_CACHEABLE) != 0;
  return 0;
}

int pmcp__client_has_locked(const pmcp__req *req, const char *name)
{
  if (req->modern)
    return cJSON_IsObject(pmcp__jget(req->client_caps, name));
  const char *caps = req->sess->client_caps;
  const char *v;
  size_t vlen;
  return caps && pmcp__json_member(caps, strlen(caps), name, &v, &vlen);
}

/* ---- results ---- */

static int server_info(const pmcp_server *srv, pmcp_buf *b)
{
  int rc = pmcp__buf_puts(b, "\"io.modelcontextprotocol/serverInfo\":");
  return rc ? rc : pmcp__buf_append(b, srv->info_json, srv->info_len);
}

static int blank(const char *p, const char *end)
{
  for (; p < end; p++)
    if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
      return 0;
  return 1;
}

int pmcp__era_decorate(pmcp__req *req, const char *result, size_t len, pmcp_buf *out)
{
  pmcp_server *srv = req->srv;
  const char *open = memchr(result, '{', len);
  const char *close = result + len;
  while (close > result && close[-1] != '}')
    close--;
  if (!open || close <= open)
    return pmcp__buf_append(out, result, len); /* not an object: as it is */
  close--; /* at the final '}' */
  /* One pass over the result's members (every result of every modern
   * request comes through here). */
  static const char *const keys[] = {"resultType", "_meta", "ttlMs"};
  const char *vals[3];
  size_t lens[3];
  pmcp__json_members(result, len, keys, req->cacheable ? 3 : 2, vals, lens);
  const char *v = vals[0], *meta = vals[1];
  size_t vlen = lens[0], meta_len = lens[1];
  int has_type = v != NULL;
  int complete = !has_type || (vlen == 10 && memcmp(v, "\"complete\"", 10) == 0);
  if (meta && (meta_len < 2 || meta[0] != '{'))
    meta = NULL;
  int body = !blank(open + 1, close);
  if (!has_type && !meta && !req->cacheable) {
    /* The usual case, written once per server. */
    int rc = pmcp__buf_append(out, srv->modern_head, srv->modern_head_len);
    if (!rc && body)
      rc = pmcp__buf_putc(out, ',');
    if (!rc)
      rc = pmcp__buf_append(out, open + 1, (size_t)(close - (open + 1)));
    return rc ? rc : pmcp__buf_putc(out, '}');
  }
  int n = 0;
  int rc = pmcp__buf_putc(out, '{');
  if (!rc && !has_type) {
    rc = pmcp__buf_puts(out, "\"resultType\":\"complete\"");
    n++;
  }
  if (!rc && complete && req->cacheable && !vals[2]) {
    /* One scope for every page: private when a tool filter tailors what
     * each caller sees. */
    int priv = srv->reg.tool_filter != NULL;
    rc = pmcp__buf_printf(out, "%s\"ttlMs\":%u,\"cacheScope\":\"%s\"", n ? "," : "",
                          srv->cache_ttl_ms, priv || srv->cache_private ? "private"
                                                                         : "public");
    n++;
  }
  if (!rc && !meta) {
    rc = pmcp__buf_puts(out, n ? ",\"_meta\":{" : "\"_meta\":{");
    if (!rc)
      rc = server_info(srv, out);
    if (!rc)
      rc = pmcp__buf_putc(out, '}');
    n++;
  }
  if (!rc && n && body)
    rc = pmcp__buf_putc(out, ',');
  if (!rc && meta) {
    /* serverInfo goes first into the result's own _meta. */
    rc = pmcp__buf_append(out, open + 1, (size_t)(meta + 1 - (open + 1)));
    if (!rc)
      rc = server_info(srv, out);
    if (!rc && !blank(meta + 1, meta + meta_len - 1))
      rc = pmcp__buf_putc(out, ',');
    if (!rc)
      rc = pmcp__buf_append(out, meta + 1, (size_t)(close - (meta + 1)));
  } else if (!rc) {
    rc = pmcp__buf_append(out, open + 1, (size_t)(close - (open + 1)));
  }
  if (!rc)
    rc = pmcp__buf_putc(out, '}');
  return rc;
}

/* ---- server/discover ---- */

void pmcp__method_discover(pmcp__req *req, cJSON *params)
{
  (void)params;
  pmcp_server *srv = req->srv;
  pmcp_buf b = PMCP_BUF_INIT;
  int rc = pmcp__buf_printf(&b, "{\"supportedVersions\":[\"%s\"],\"capabilities\":",
                            PMCP__MODERN_VERSION);
  if (!rc)
    rc = pmcp__caps_json(srv, &b, 1);
  if (!rc && srv->instructions) {
    rc = pmcp__buf_puts(&b, ",\"instructions\":");
    if (!rc)
      rc = pmcp__buf_json_string(&b, srv->instructions, strlen(srv->instructions));
  }
  if (!rc)
    rc = pmcp__buf_putc(&b, '}');
  pmcp__req_answer(req, rc, &b);
}

/* ---- cache hints ---- */

int pmcp_server_set_cache_hints(pmcp_server *server, unsigned ttl_ms, int private_scope)
{
  if (!server || server->magic != PMCP__SERVER_MAGIC)
    return PMCP_EMISUSE;
  server->cache_ttl_ms = ttl_ms;
  server->cache_private = private_scope != 0;
  return 0;
}
