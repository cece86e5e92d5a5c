/* SPDX-License-Identifier: MIT */
/* Client ID metadata documents (draft-ietf-oauth-client-id-metadata-
 * document, the registration MCP 2026-07-28 prefers): a client_id that is
 * an https URL names a JSON document listing the client's name and
 * redirect URIs. Fetching a URL that anyone may type is a server-side
 * request on their behalf, so the fetch is narrow: https only, no
 * redirects, no proxy, never a loopback, private, link-local or otherwise
 * special address (checked on the address actually connected to, so a
 * name that resolves, or re-resolves, to one is refused too), at most
 * CIMD_MAX_BYTES in CIMD_TIMEOUT_MS. Documents are cached as their
 * Cache-Control max-age says (at most a day; no-store, no-cache or no
 * max-age: not cached), in a bounded table. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <cjson/cJSON.h>

#ifdef PMCP_HAVE_CURL
/* Linked, not loaded: probe-mcp-http is a network service whose package
 * depends on libcurl anyway, and the fetch's policy (https only, no proxy,
 * no private addresses, a size cap) is this file's, not a library call's. */
#include <curl/curl.h>
#endif

#include "oauth.h"

#define CIMD_MAX_BYTES (64 * 1024)
#define CIMD_TIMEOUT_MS 5000
#define CIMD_CACHE_MAX 128
#define CIMD_MAX_AGE (24 * 3600)

typedef struct cimd_entry {
  char *url, *name, *uris;
  int64_t expires;           /* ms; 0: free slot */
} cimd_entry;

struct poauth_cimd {
  pthread_mutex_t mu;
  cimd_entry cache[CIMD_CACHE_MAX];
  char *ca_file;             /* test only: the CA to trust */
  int allow_loopback;        /* test only: 127.0.0.0/8 and ::1 may be fetched */
};

poauth_cimd *poauth_cimd_new(void)
{
  poauth_cimd *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  pthread_mutex_init(&c->mu, NULL);
  /* For the test suite only (see probe-mcp-http(8)): a local https server
   * with a self-signed certificate. Never set in a deployment. */
  const char *ca = getenv("PROBE_TEST_CIMD_CA_FILE");
  const char *lo = getenv("PROBE_TEST_CIMD_ALLOW_LOOPBACK");
  if (ca && *ca && !(c->ca_file = strdup(ca))) {
    poauth_cimd_free(c);
    return NULL;
  }
  c->allow_loopback = lo && strcmp(lo, "1") == 0;
  if (c->allow_loopback)
    fprintf(stderr, "probe-mcp-http: warning: PROBE_TEST_CIMD_ALLOW_LOOPBACK=1 lets client "
                    "metadata documents be fetched from loopback addresses (tests only)\n");
  return c;
}

static void entry_clear(cimd_entry *e)
{
  free(e->url);
  free(e->name);
  free(e->uris);
  memset(e, 0, sizeof *e);
}

void poauth_cimd_free(poauth_cimd *c)
{
  if (!c)
    return;
  for (size_t i = 0; i < CIMD_CACHE_MAX; i++)
    entry_clear(&c->cache[i]);
  free(c->ca_file);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

int poauth_cimd_is_url(const char *client_id)
{
  return client_id && (strncasecmp(client_id, "https:", 6) == 0 ||
                       strncasecmp(client_id, "http:", 5) == 0);
}

int poauth_cimd_url_check(const char *url, char *why, size_t whysize)
{
  size_t n = strlen(url);
  const char *msg = NULL;
  char w[200];
  if (strncmp(url, "https://", 8) != 0)
    msg = "a client_id URL must use https (lower case https://)";
  else if (n > PMCP_OAUTH_CLIENT_ID_MAX)
    msg = "a client_id URL is longer than 400 characters";
  else if (poauth_redirect_uri_check(url, w, sizeof w) != 0)
    msg = "a client_id URL must be an https URL with a valid host, without user "
          "information, fragment, whitespace or characters URIs do not allow";
  else {
    const char *path = url + 8 + strcspn(url + 8, "/?");
    if (*path != '/' || path[1] == '\0' || path[1] == '?')
      msg = "a client_id URL must have a path (https://host/path/client.json)";
    else if (strstr(path, "/./") || strstr(path, "/../") ||
             (n >= 2 && strcmp(url + n - 2, "/.") == 0) ||
             (n >= 3 && strcmp(url + n - 3, "/..") == 0))
      msg = "a client_id URL must not contain . or .. path segments";
  }
  if (msg) {
    snprintf(why, whysize, "%s", msg);
    return -1;
  }
  return 0;
}

/* 0 an ordinary address, 1 loopback, 2 private, link-local or another
 * special range no server-side request should reach. */
static int v4_class(uint32_t a)
{
  if ((a >> 24) == 127)
    return 1;
  if ((a >> 24) == 0 || (a >> 24) == 10 || (a & 0xffc00000u) == 0x64400000u ||
      (a & 0xffff0000u) == 0xa9fe0000u || (a & 0xfff00000u) == 0xac100000u ||
      (a & 0xffffff00u) == 0xc0000000u || (a & 0xffffff00u) == 0xc0000200u ||
      (a & 0xffff0000u) == 0xc0a80000u || (a & 0xfffe0000u) == 0xc6120000u ||
      (a & 0xffffff00u) == 0xc6336400u || (a & 0xffffff00u) == 0xcb007100u ||
      (a >> 28) >= 14)
    return 2;
  return 0;
}

static int v6_class(const unsigned char *b)
{
  static const unsigned char zero[16] = {0};
  static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
  if (memcmp(b, zero, 15) == 0)
    return b[15] == 1 ? 1 : 2;           /* ::1 loopback, :: unspecified */
  if (memcmp(b, mapped, 12) == 0 || memcmp(b, nat64, 12) == 0) {
    uint32_t a = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
    return v4_class(a);
  }
  if (memcmp(b, zero, 12) == 0)          /* IPv4-compatible (deprecated) */
    return 2;
  if ((b[0] & 0xfe) == 0xfc || (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) ||
      (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) || b[0] == 0xff ||
      (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8))
    return 2;
  return 0;
}

int poauth_cimd_address_class(const struct sockaddr *sa)
{
  if (sa->sa_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
    return v4_class(ntohl(in->sin_addr.s_addr));
  }
  if (sa->sa_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
    return v6_class(in6->sin6_addr.s6_addr);
  }
  return 2;
}

/* ---- the cache ------------------------------------------------------------ */

static int cache_get(poauth_cimd *c, const char *url, int64_t now, char **name, char **uris)
{
  int found = 0;
  pthread_mutex_lock(&c->mu);
  for (size_t i = 0; i < CIMD_CACHE_MAX && !found; i++) {
    cimd_entry *e = &c->cache[i];
    if (!e->expires || strcmp(e->url, url) != 0)
      continue;
    if (e->expires <= now) {
      entry_clear(e);
      break;
    }
    *name = strdup(e->name);
    *uris = strdup(e->uris);
    found = *name && *uris ? 1 : PMCP_ENOMEM;
  }
  pthread_mutex_unlock(&c->mu);
  if (found != 1) {
    free(*name);
    free(*uris);
    *name = *uris = NULL;
  }
  return found;
}

static void cache_put(poauth_cimd *c, const char *url, const char *name, const char *uris,
                      int64_t expires)
{
  pthread_mutex_lock(&c->mu);
  /* The same URL's slot, else a free or expired one, else the one
   * expiring first. */
  cimd_entry *slot = NULL;
  for (size_t i = 0; i < CIMD_CACHE_MAX; i++) {
    cimd_entry *e = &c->cache[i];
    if (e->expires && strcmp(e->url, url) == 0) {
      slot = e;
      break;
    }
    if (!slot || !e->expires || (slot->expires && e->expires < slot->expires))
      slot = e;
  }
  entry_clear(slot);
  slot->url = strdup(url);
  slot->name = strdup(name);
  slot->uris = strdup(uris);
  if (slot->url && slot->name && slot->uris)
    slot->expires = expires;
  else
    entry_clear(slot);
  pthread_mutex_unlock(&c->mu);
}

/* ---- the fetch ---------------------------------------------------------------- */

#ifdef PMCP_HAVE_CURL
/* curl_global_init is not thread-safe in every libcurl: once, before the
 * first handle, so curl_easy_init never runs it on two threads at once. */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;
static void curl_init(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

typedef struct fetch {
  const poauth_cimd *c;
  pmcp_buf body;
  int too_big, refused_addr;
  long max_age;              /* -1: do not cache */
  long age;
} fetch;

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
  fetch *f = ud;
  if (f->body.len + size * n > CIMD_MAX_BYTES) {
    f->too_big = 1;
    return 0;
  }
  return pmcp_buf_append(&f->body, p, size * n) ? 0 : size * n;
}

/* Cache-Control (no-store, no-cache, max-age=N) and Age. */
static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
  fetch *f = ud;
  size_t len = size * n;
  char line[512];
  if (len >= sizeof line)
    return len;
  memcpy(line, p, len);
  line[len] = '\0';
  if (strncasecmp(line, "cache-control:", 14) == 0) {
    char *save = NULL; /* fetches run on several worker threads: strtok_r */
    for (char *tok = strtok_r(line + 14, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      tok += strspn(tok, " \t");
      if (strncasecmp(tok, "no-store", 8) == 0 || strncasecmp(tok, "no-cache", 8) == 0)
        f->max_age = -2;         /* wins over any max-age */
      else if (strncasecmp(tok, "max-age=", 8) == 0 && f->max_age != -2)
        f->max_age = strtol(tok + 8, NULL, 10);
    }
  } else if (strncasecmp(line, "age:", 4) == 0) {
    f->age = strtol(line + 4, NULL, 10);
  }
  return len;
}

static curl_socket_t open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *a)
{
  fetch *f = ud;
  (void)purpose;
  int cls = poauth_cimd_address_class(&a->addr);
  if (cls == 2 || (cls == 1 && !f->c->allow_loopback)) {
    f->refused_addr = 1;
    return CURL_SOCKET_BAD;
  }
  return socket(a->family, a->socktype, a->protocol);
}
#endif

/* Fetches @p url: 1 with the body in @p f, 0 refused (why), <0 error. */
static int fetch_doc(poauth_cimd *c, const char *url, pmcp_buf *body, long *cache_s,
                     char *why, size_t whysize)
{
#ifndef PMCP_HAVE_CURL
  (void)c; (void)url; (void)body; (void)cache_s;
  snprintf(why, whysize, "this server was built without libcurl, so it cannot read client "
                         "ID metadata documents; register the client instead");
  return 0;
#else
  pthread_once(&curl_once, curl_init);
  if (curl_init_rc != CURLE_OK) {
    snprintf(why, whysize, "this server cannot read client ID metadata documents (%s); "
                           "register the client instead", curl_easy_strerror(curl_init_rc));
    return 0;
  }
  CURL *h = curl_easy_init();
  if (!h)
    return PMCP_ENOMEM;
  fetch f = {c, PMCP_BUF_INIT, 0, 0, -1, 0};
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)CIMD_TIMEOUT_MS);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "https");
  curl_easy_setopt(h, CURLOPT_PROXY, "");          /* never through an environment proxy */
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)CIMD_MAX_BYTES);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "probe-mcp-http");
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &f);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &f);
  curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_socket);
  curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, &f);
  if (c->ca_file)
    curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
  struct curl_slist *hdr = curl_slist_append(NULL, "Accept: application/json");
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
  CURLcode cc = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(hdr);
  curl_easy_cleanup(h);
  int ok = 0;
  if (f.refused_addr && cc != CURLE_OK)
    snprintf(why, whysize, "the client's metadata document is on a loopback, private or "
                           "link-local address, which this server does not fetch from");
  else if (f.too_big || cc == CURLE_FILESIZE_EXCEEDED)
    snprintf(why, whysize, "the client's metadata document is larger than %d KiB",
             CIMD_MAX_BYTES / 1024);
  else if (cc == CURLE_OPERATION_TIMEDOUT)
    snprintf(why, whysize, "the client's metadata document did not arrive within %d s",
             CIMD_TIMEOUT_MS / 1000);
  else if (cc != CURLE_OK)
    snprintf(why, whysize, "the client's metadata document cannot be fetched (%s)",
             curl_easy_strerror(cc));
  else if (status >= 300 && status < 400)
    snprintf(why, whysize, "the client's metadata document URL answered a redirect "
                           "(HTTP %ld), which is not followed", status);
  else if (status != 200)
    snprintf(why, whysize, "the client's metadata document URL answered HTTP %ld", status);
  else
    ok = 1;
  if (!ok) {
    pmcp_buf_dispose(&f.body);
    return 0;
  }
  long age = f.max_age >= 0 ? f.max_age - (f.age > 0 ? f.age : 0) : 0;
  *cache_s = age < 0 ? 0 : age > CIMD_MAX_AGE ? CIMD_MAX_AGE : age;
  *body = f.body;
  return 1;
#endif
}

/* Checks the document of @p url: 1 (name, uris JSON array out), 0 refused. */
static int validate(const char *url, const pmcp_buf *body, char **name, char **uris,
                    char *why, size_t whysize)
{
  const char *msg = NULL;
  char w[200];
  const char *text = body->ptr ? body->ptr : "";
  if (!pmcp_utf8_valid(text, body->len) || poauth_json_has_nul(text, body->len)) {
    snprintf(why, whysize, "the client's metadata document is not valid UTF-8 JSON "
                           "without NUL characters");
    return 0;
  }
  cJSON *d = cJSON_ParseWithLength(text, body->len);
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(d, "client_id");
  const cJSON *ru = cJSON_GetObjectItemCaseSensitive(d, "redirect_uris");
  const cJSON *nm = cJSON_GetObjectItemCaseSensitive(d, "client_name");
  const cJSON *am = cJSON_GetObjectItemCaseSensitive(d, "token_endpoint_auth_method");
  if (!cJSON_IsObject(d))
    msg = "the client's metadata document is not a JSON object";
  else if (!cJSON_IsString(id) || strcmp(id->valuestring, url) != 0)
    msg = "the client's metadata document names another client_id than its own URL";
  else if (cJSON_GetObjectItemCaseSensitive(d, "client_secret") ||
           cJSON_GetObjectItemCaseSensitive(d, "client_secret_expires_at"))
    msg = "the client's metadata document must not hold a client_secret";
  else if (am && (!cJSON_IsString(am) || strcmp(am->valuestring, "none") != 0))
    msg = "the client's metadata document must use token_endpoint_auth_method \"none\"";
  else if (!cJSON_IsArray(ru) || cJSON_GetArraySize(ru) == 0 || cJSON_GetArraySize(ru) > 10)
    msg = "the client's metadata document must list 1 to 10 redirect_uris";
  else if (nm && (!cJSON_IsString(nm) || strlen(nm->valuestring) > 200))
    msg = "the client's metadata document's client_name must be a string of at most 200 "
          "characters";
  const cJSON *u;
  if (!msg)
    cJSON_ArrayForEach(u, ru) {
      if (!cJSON_IsString(u))
        msg = "the client's metadata document's redirect_uris must be strings";
      else if (poauth_redirect_uri_check(u->valuestring, w, sizeof w) != 0) {
        snprintf(why, whysize, "the client's metadata document lists a refused redirect URI: %s", w);
        cJSON_Delete(d);
        return 0;
      }
      if (msg)
        break;
    }
  if (msg) {
    snprintf(why, whysize, "%s", msg);
    cJSON_Delete(d);
    return 0;
  }
  *name = strdup(nm ? nm->valuestring : "");
  *uris = cJSON_PrintUnformatted(ru);
  cJSON_Delete(d);
  if (!*name || !*uris) {
    free(*name);
    free(*uris);
    *name = *uris = NULL;
    return PMCP_ENOMEM;
  }
  return 1;
}

int poauth_cimd_cached(poauth_cimd *c, const char *url, int64_t now_ms, char **name,
                       char **uris)
{
  *name = *uris = NULL;
  return cache_get(c, url, now_ms, name, uris);
}

int poauth_cimd_fetch(poauth_cimd *c, const char *url, int64_t now_ms, char **name,
                      char **uris, char *why, size_t whysize)
{
  *name = *uris = NULL;
  if (poauth_cimd_url_check(url, why, whysize) != 0)
    return 0;
  pmcp_buf body = PMCP_BUF_INIT;
  long cache_s = 0;
  int rc = fetch_doc(c, url, &body, &cache_s, why, whysize);
  if (rc == 1)
    rc = validate(url, &body, name, uris, why, whysize);
  pmcp_buf_dispose(&body);
  if (rc == 1 && cache_s > 0)
    cache_put(c, url, *name, *uris, now_ms + cache_s * 1000);
  return rc;
}

void poauth_cimd_host(const char *url, char *out, size_t size)
{
  const char *h = strstr(url, "://");
  h = h ? h + 3 : url;
  snprintf(out, size, "%.*s", (int)strcspn(h, "/?#"), h);
}
