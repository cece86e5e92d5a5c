/* The remote papers provider of `find_papers`: GET requests to a
 * configured base URL over libcurl, with a connect and a whole-request
 * timeout and a size cap, so a slow, down or babbling provider gives a
 * clear error within the timeout and never hangs a worker. */
#include "research/papers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PMCP_HAVE_CURL
#include <curl/curl.h>
#endif

#include "util/buf.h"

#define MAX_ANSWER (8u * 1024u * 1024u)

#ifdef PMCP_HAVE_CURL
static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
  pmcp_buf *b = ud;
  if (b->len + size * n > MAX_ANSWER)
    return 0; /* too big: the transfer fails with a write error */
  return pmcp__buf_append(b, p, size * n) ? 0 : size * n;
}

static int progress_cb(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
  (void)dt; (void)dn; (void)ut; (void)un;
  pmcp_call *call = ud;
  return call && pmcp_call_cancelled(call) ? 1 : 0;
}
#endif

int pmcp__papers_get(const char *base, int timeout_ms, const char *path,
                     const char *query, pmcp_call *call, cJSON **out, char *err,
                     size_t errlen)
{
  *out = NULL;
#ifndef PMCP_HAVE_CURL
  (void)base; (void)timeout_ms; (void)path; (void)query; (void)call;
  snprintf(err, errlen, "this build has no libcurl, so it cannot reach a papers provider");
  return PMCP_EUNSUPPORTED;
#else
  CURL *c = curl_easy_init();
  if (!c)
    return PMCP_ENOMEM;
  pmcp_buf url = PMCP_BUF_INIT, body = PMCP_BUF_INIT;
  size_t bl = strlen(base);
  while (bl && base[bl - 1] == '/')
    bl--;
  int rc = pmcp__buf_append(&url, base, bl);
  if (!rc)
    rc = pmcp__buf_puts(&url, path);
  if (!rc && query && *query)
    rc = pmcp__buf_printf(&url, "?%s", query);
  if (rc) {
    curl_easy_cleanup(c);
    pmcp_buf_dispose(&url);
    return PMCP_ENOMEM;
  }
  curl_easy_setopt(c, CURLOPT_URL, url.ptr);
  curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(timeout_ms < 3000 ? timeout_ms : 3000));
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress_cb);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, call);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  CURLcode cc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  pmcp_buf_dispose(&url);
  if (cc == CURLE_ABORTED_BY_CALLBACK) {
    pmcp_buf_dispose(&body);
    return PMCP_ECANCELLED;
  }
  if (cc != CURLE_OK) {
    if (cc == CURLE_OPERATION_TIMEDOUT)
      snprintf(err, errlen, "the papers provider did not answer within %d ms", timeout_ms);
    else if (cc == CURLE_WRITE_ERROR)
      snprintf(err, errlen, "the papers provider's answer is larger than %u bytes", MAX_ANSWER);
    else
      snprintf(err, errlen, "the papers provider cannot be reached (%s)", curl_easy_strerror(cc));
    pmcp_buf_dispose(&body);
    return cc == CURLE_OPERATION_TIMEDOUT ? PMCP_ETIMEOUT : PMCP_EIO;
  }
  if (status == 404) {
    pmcp_buf_dispose(&body);
    snprintf(err, errlen, "the papers provider has no such paper");
    return PMCP_ENOTFOUND;
  }
  if (status < 200 || status > 299) {
    pmcp_buf_dispose(&body);
    snprintf(err, errlen, "the papers provider answered HTTP %ld", status);
    return PMCP_EREMOTE;
  }
  *out = cJSON_ParseWithLength(body.ptr ? body.ptr : "", body.len);
  pmcp_buf_dispose(&body);
  if (!cJSON_IsObject(*out)) {
    cJSON_Delete(*out);
    *out = NULL;
    snprintf(err, errlen, "the papers provider's answer is not the expected JSON object");
    return PMCP_EREMOTE;
  }
  return 0;
#endif
}

char *pmcp__papers_escape(const char *s)
{
#ifdef PMCP_HAVE_CURL
  char *e = curl_easy_escape(NULL, s, 0);
  char *r = e ? strdup(e) : NULL;
  curl_free(e);
  return r;
#else
  return strdup(s);
#endif
}
