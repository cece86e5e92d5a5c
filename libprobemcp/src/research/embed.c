/* SPDX-License-Identifier: MIT */
/* Embeddings for search's semantic channel: a client for OpenAI-compatible
 * embeddings endpoints (POST {"model","input":[...]} -> {"data":[{"index",
 * "embedding"}]}) over libcurl, pmcp_research_embed() which computes and
 * caches the vectors of the store's indexed documents (the write side:
 * `probe embed`), and the query-time ranking (cosine similarity against
 * the cached vectors). Nothing here runs unless semantic=true is asked. */
#include "research/embed.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#ifdef PMCP_HAVE_CURL
#include "util/curl_dl.h"
#endif

#include "probemcp/json.h"
#include "util/buf.h"

#define DEFAULT_MODEL "text-embedding-3-small"
#define BATCH 32
#define MAX_TEXT 8000

const char *pmcp__embed_model(const char *model)
{
  return model && *model ? model : DEFAULT_MODEL;
}

#ifdef PMCP_HAVE_CURL
static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
  pmcp_buf *b = ud;
  if (b->len + size * n > 64u * 1024u * 1024u)
    return 0; /* refuse absurd answers */
  return pmcp__buf_append(b, p, size * n) ? 0 : size * n;
}
#endif

int pmcp__embed(const char *url, const char *model, const char *key,
                const char *const *inputs, size_t n, double **out,
                size_t *dim, char *err, size_t errlen)
{
  *out = NULL;
  *dim = 0;
#ifndef PMCP_HAVE_CURL
  (void)url; (void)model; (void)key; (void)inputs; (void)n;
  snprintf(err, errlen, "this build has no libcurl, so it cannot reach an "
                        "embeddings endpoint");
  return PMCP_EUNSUPPORTED;
#else
  const pmcp__curl_api *cu = pmcp__curl(err, errlen);
  if (!cu)
    return PMCP_EUNSUPPORTED;
  pmcp_json *req = NULL;
  if (pmcp_json_new(&req, 0))
    return PMCP_ENOMEM;
  pmcp_json_object_begin(req);
  pmcp_json_key(req, "model");
  pmcp_json_string(req, pmcp__embed_model(model));
  pmcp_json_key(req, "input");
  pmcp_json_array_begin(req);
  for (size_t i = 0; i < n; i++)
    pmcp_json_string(req, inputs[i]);
  pmcp_json_array_end(req);
  pmcp_json_object_end(req);
  const char *body = pmcp_json_text(req, NULL); /* NUL-terminated */
  CURL *h = body ? cu->easy_init() : NULL;
  if (!h) {
    pmcp_json_free(req);
    return PMCP_ENOMEM;
  }
  pmcp_buf resp = PMCP_BUF_INIT;
  struct curl_slist *hdr = cu->slist_append(NULL, "Content-Type: application/json");
  char auth[600];
  if (key && *key) {
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", key);
    hdr = cu->slist_append(hdr, auth);
  }
  cu->easy_setopt(h, CURLOPT_URL, url);
  cu->easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
  cu->easy_setopt(h, CURLOPT_POSTFIELDS, body);
  cu->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
  cu->easy_setopt(h, CURLOPT_WRITEDATA, &resp);
  cu->easy_setopt(h, CURLOPT_TIMEOUT, 60L);
  cu->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  cu->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  CURLcode cc = cu->easy_perform(h);
  long status = 0;
  cu->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  cu->slist_free_all(hdr);
  cu->easy_cleanup(h);
  pmcp_json_free(req);
  int rc = 0;
  if (cc != CURLE_OK) {
    snprintf(err, errlen, "the embeddings endpoint could not be reached (%s)",
             cu->easy_strerror(cc));
    rc = PMCP_EREMOTE;
    goto out;
  }
  if (status != 200) {
    snprintf(err, errlen, "the embeddings endpoint answered HTTP %ld", status);
    rc = PMCP_EREMOTE;
    goto out;
  }
  cJSON *r = cJSON_ParseWithLength(resp.ptr ? resp.ptr : "", resp.len);
  const cJSON *data = cJSON_GetObjectItemCaseSensitive(r, "data");
  if (!cJSON_IsArray(data) || (size_t)cJSON_GetArraySize(data) != n) {
    cJSON_Delete(r);
    snprintf(err, errlen, "the embeddings endpoint's answer has no data "
                          "list of %zu embeddings", n);
    rc = PMCP_EREMOTE;
    goto out;
  }
  size_t d = 0;
  double *v = NULL;
  size_t k = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, data)
  {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(it, "embedding");
    double idx = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(it, "index"))
        ? cJSON_GetObjectItemCaseSensitive(it, "index")->valuedouble : (double)k;
    size_t m = (size_t)cJSON_GetArraySize(e);
    if (!cJSON_IsArray(e) || m == 0 || (d && m != d) || idx < 0 || idx >= (double)n) {
      free(v);
      cJSON_Delete(r);
      snprintf(err, errlen, "the embeddings endpoint returned a malformed "
                            "embedding");
      rc = PMCP_EREMOTE;
      goto out;
    }
    if (!d) {
      d = m;
      v = calloc(n * d, sizeof *v);
      if (!v) {
        cJSON_Delete(r);
        rc = PMCP_ENOMEM;
        goto out;
      }
    }
    size_t j = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, e)
      v[(size_t)idx * d + j++] = cJSON_IsNumber(x) ? x->valuedouble : 0;
    k++;
  }
  cJSON_Delete(r);
  *out = v;
  *dim = d;
out:
  pmcp_buf_dispose(&resp);
  return rc;
#endif
}

double pmcp__cosine(const double *a, const cJSON *b, size_t dim)
{
  double dot = 0, na = 0, nb = 0;
  size_t i = 0;
  const cJSON *x;
  cJSON_ArrayForEach(x, b)
  {
    if (i >= dim)
      return 0; /* another model's dimension: no match */
    double y = x->valuedouble;
    dot += a[i] * y;
    na += a[i] * a[i];
    nb += y * y;
    i++;
  }
  if (i != dim || na == 0 || nb == 0)
    return 0;
  return dot / (sqrt(na) * sqrt(nb));
}

static void sha_hex(const char *s, size_t n, char out[65])
{
  unsigned char md[32];
  unsigned int l = 0;
  EVP_Digest(s, n, md, &l, EVP_sha256(), NULL);
  for (int i = 0; i < 32; i++)
    snprintf(out + i * 2, 3, "%02x", md[i]);
}

/* Embeds and stores one batch. */
static int flush(pmcp_store *store, pmcp_tenant t, const pmcp_research_options *o,
                 char **texts, char (*refs)[300], char (*shas)[65], size_t n,
                 size_t *done)
{
  if (!n)
    return 0;
  double *v = NULL;
  size_t dim = 0;
  char err[300];
  int rc = pmcp__embed(o->embed_url, o->embed_model, o->embed_key,
                       (const char *const *)texts, n, &v, &dim, err, sizeof err);
  if (rc)
    return pmcp_store_set_error(store, rc, "%s", err);
  /* the vectors exactly (the store keeps numbers so); a value that is not
   * finite as null, which is what it reads back as */
  pmcp_json *j = NULL;
  if (pmcp_json_new(&j, PMCP_JSON_LOSSLESS)) {
    free(v);
    return PMCP_ENOMEM;
  }
  rc = pmcp_store_begin(store);
  for (size_t i = 0; i < n && !rc; i++) {
    pmcp_json_reset(j);
    pmcp_json_object_begin(j);
    pmcp_json_key(j, "ref");
    pmcp_json_string(j, refs[i]);
    pmcp_json_key(j, "model");
    pmcp_json_string(j, pmcp__embed_model(o->embed_model));
    pmcp_json_key(j, "text_sha256");
    pmcp_json_string(j, shas[i]);
    pmcp_json_key(j, "vector");
    pmcp_json_array_begin(j);
    for (size_t k = 0; k < dim; k++) {
      double x = v[i * dim + k];
      if (isfinite(x))
        pmcp_json_number(j, x);
      else
        pmcp_json_null(j);
    }
    pmcp_json_array_end(j);
    pmcp_json_object_end(j);
    size_t len = 0;
    const char *txt = pmcp_json_text(j, &len);
    rc = txt ? pmcp_store_put(store, t, "embedding", txt, len, NULL) : PMCP_ENOMEM;
  }
  pmcp_json_free(j);
  free(v);
  if (rc) {
    pmcp_store_rollback(store);
    return rc;
  }
  rc = pmcp_store_commit(store);
  if (!rc)
    *done += n;
  return rc;
}

/* The vectors cached already: each ref's text hash, sorted by ref, the
 * first listed of a ref before the others (it is the one that counts). */
typedef struct cached {
  char *ref, *sha;
  size_t at; /* listing order */
} cached;

typedef struct cache {
  cached *v;
  size_t n, cap;
} cache;

static void cache_free(cache *c)
{
  for (size_t i = 0; i < c->n; i++) {
    free(c->v[i].ref);
    free(c->v[i].sha);
  }
  free(c->v);
  memset(c, 0, sizeof *c);
}

static int cache_cmp(const void *a, const void *b)
{
  const cached *x = a, *y = b;
  int c = strcmp(x->ref, y->ref);
  return c ? c : (x->at > y->at) - (x->at < y->at);
}

static int cache_add(cache *c, const char *ref, const char *sha)
{
  if (c->n == c->cap) {
    size_t nc = c->cap ? c->cap * 2 : 64;
    cached *nv = realloc(c->v, nc * sizeof *nv);
    if (!nv)
      return PMCP_ENOMEM;
    c->v = nv;
    c->cap = nc;
  }
  cached *e = &c->v[c->n];
  e->ref = strdup(ref);
  e->sha = strdup(sha);
  e->at = c->n;
  if (!e->ref || !e->sha) {
    free(e->ref);
    free(e->sha);
    return PMCP_ENOMEM;
  }
  c->n++;
  return 0;
}

/* The text hash cached for @p ref, or NULL. */
static const char *cache_sha(const cache *c, const char *ref)
{
  size_t lo = 0, hi = c->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(c->v[mid].ref, ref) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < c->n && strcmp(c->v[lo].ref, ref) == 0 ? c->v[lo].sha : NULL;
}

/* Reads the store's embeddings listed under @p filter into @p c. */
static int cache_read(pmcp_store *store, pmcp_tenant t, const char *filter, cache *c)
{
  char *after = NULL;
  int rc = 0;
  for (;;) {
    pmcp_list_opts lo = PMCP_LIST_OPTS_INIT;
    lo.kind = "embedding";
    lo.filter = filter;
    lo.after = after;
    lo.limit = 1000;
    pmcp_buf b = PMCP_BUF_INIT;
    rc = pmcp_store_list(store, t, &lo, &b);
    free(after);
    after = NULL;
    if (rc) {
      pmcp_buf_dispose(&b);
      return rc;
    }
    cJSON *page = cJSON_ParseWithLength(b.ptr, b.len);
    pmcp_buf_dispose(&b);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(page, "items"))
    {
      const cJSON *r = cJSON_GetObjectItemCaseSensitive(it, "ref");
      const cJSON *h = cJSON_GetObjectItemCaseSensitive(it, "text_sha256");
      if (cJSON_IsString(r) && !rc)
        rc = cache_add(c, r->valuestring, cJSON_IsString(h) ? h->valuestring : "");
    }
    const cJSON *nx = cJSON_GetObjectItemCaseSensitive(page, "next");
    if (cJSON_IsString(nx) && !rc)
      after = strdup(nx->valuestring);
    cJSON_Delete(page);
    if (!after)
      break;
  }
  if (!rc && c->n) /* an empty cache has no table to sort */
    qsort(c->v, c->n, sizeof *c->v, cache_cmp);
  return rc;
}

int pmcp_research_embed(pmcp_store *store, const pmcp_research_options *opts,
                        size_t *out_embedded)
{
  if (out_embedded)
    *out_embedded = 0;
  if (!store || !opts || opts->version < 1 || opts->version > PMCP_RESEARCH_OPTIONS_VERSION ||
      !opts->embed_url || !*opts->embed_url)
    return PMCP_EINVAL;
  if (pmcp_store_readonly(store))
    return PMCP_EREADONLY;
  pmcp_tenant t;
  int rc = pmcp_store_tenant(store, opts->tenant, 0, &t);
  if (rc)
    return rc;
  const char *model = pmcp__embed_model(opts->embed_model);
  /* What is cached already, by ref: its text hash. */
  char *filter = pmcp__rs_filter("model", model);
  cache have = {NULL, 0, 0};
  rc = filter ? cache_read(store, t, filter, &have) : PMCP_ENOMEM;
  free(filter);
  if (rc) {
    cache_free(&have);
    return rc;
  }
  char *after = NULL;
  /* The indexed documents, in batches. */
  char *texts[BATCH];
  char refs[BATCH][300];
  char shas[BATCH][65];
  size_t nb = 0, done = 0;
  for (;;) {
    pmcp_list_opts lo = PMCP_LIST_OPTS_INIT;
    lo.kind = "search-doc";
    lo.after = after;
    lo.limit = 200;
    pmcp_buf b = PMCP_BUF_INIT;
    rc = pmcp_store_list(store, t, &lo, &b);
    free(after);
    after = NULL;
    if (rc) {
      pmcp_buf_dispose(&b);
      break;
    }
    cJSON *page = cJSON_ParseWithLength(b.ptr, b.len);
    pmcp_buf_dispose(&b);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(page, "items"))
    {
      const cJSON *r = cJSON_GetObjectItemCaseSensitive(it, "ref");
      const cJSON *ti = cJSON_GetObjectItemCaseSensitive(it, "title");
      const cJSON *bo = cJSON_GetObjectItemCaseSensitive(it, "body");
      if (!cJSON_IsString(r) || strlen(r->valuestring) >= 300)
        continue;
      pmcp_buf txt = PMCP_BUF_INIT;
      pmcp__buf_printf(&txt, "%s\n%s", cJSON_IsString(ti) ? ti->valuestring : "",
                       cJSON_IsString(bo) ? bo->valuestring : "");
      if (txt.len > MAX_TEXT) {
        size_t cut = MAX_TEXT;
        while (cut > 0 && ((unsigned char)txt.ptr[cut] & 0xC0) == 0x80)
          cut--;
        txt.ptr[cut] = '\0';
        txt.len = cut;
      }
      char sha[65];
      sha_hex(txt.ptr, txt.len, sha);
      const char *h = cache_sha(&have, r->valuestring);
      if (h && strcmp(h, sha) == 0) {
        pmcp_buf_dispose(&txt);
        continue; /* cached for this text */
      }
      texts[nb] = txt.ptr;
      snprintf(refs[nb], sizeof refs[nb], "%s", r->valuestring);
      memcpy(shas[nb], sha, 65);
      nb++;
      if (nb == BATCH) {
        rc = flush(store, t, opts, texts, refs, shas, nb, &done);
        for (size_t i = 0; i < nb; i++)
          free(texts[i]);
        nb = 0;
        if (rc)
          break;
      }
    }
    const cJSON *nx = cJSON_GetObjectItemCaseSensitive(page, "next");
    if (!rc && cJSON_IsString(nx))
      after = strdup(nx->valuestring);
    cJSON_Delete(page);
    if (rc || !after)
      break;
  }
  if (!rc)
    rc = flush(store, t, opts, texts, refs, shas, nb, &done);
  for (size_t i = 0; i < nb; i++)
    free(texts[i]);
  free(after);
  cache_free(&have);
  if (out_embedded)
    *out_embedded = done;
  return rc;
}
