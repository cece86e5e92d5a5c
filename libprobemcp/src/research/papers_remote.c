/* SPDX-License-Identifier: MIT */
/* The remote papers provider of `find_papers`: GET requests to a
 * configured base URL over libcurl, with a connect and a whole-request
 * timeout and a size cap, so a slow, down or babbling provider gives a
 * clear error within the timeout and never hangs a worker. */
#include "research/papers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PMCP_HAVE_CURL
#include "util/curl_dl.h"
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
  const pmcp__curl_api *cu = pmcp__curl(err, errlen);
  if (!cu)
    return PMCP_EUNSUPPORTED;
  CURL *c = cu->easy_init();
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
    cu->easy_cleanup(c);
    pmcp_buf_dispose(&url);
    return PMCP_ENOMEM;
  }
  cu->easy_setopt(c, CURLOPT_URL, url.ptr);
  cu->easy_setopt(c, CURLOPT_HTTPGET, 1L);
  cu->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  cu->easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
  cu->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(timeout_ms < 3000 ? timeout_ms : 3000));
  cu->easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  cu->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
  cu->easy_setopt(c, CURLOPT_WRITEDATA, &body);
  cu->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress_cb);
  cu->easy_setopt(c, CURLOPT_XFERINFODATA, call);
  cu->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  struct curl_slist *h = cu->slist_append(NULL, "Accept: application/json");
  cu->easy_setopt(c, CURLOPT_HTTPHEADER, h);
  CURLcode cc = cu->easy_perform(c);
  long status = 0;
  cu->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  cu->slist_free_all(h);
  cu->easy_cleanup(c);
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
      snprintf(err, errlen, "the papers provider cannot be reached (%s)", cu->easy_strerror(cc));
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
  /* RFC 3986: everything but the unreserved characters is percent-encoded. */
  static const char hex[] = "0123456789ABCDEF";
  size_t n = strlen(s);
  char *r = malloc(3 * n + 1), *o = r;
  if (!r)
    return NULL;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
        (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' ||
        *p == '~') {
      *o++ = (char)*p;
    } else {
      *o++ = '%';
      *o++ = hex[*p >> 4];
      *o++ = hex[*p & 15];
    }
  }
  *o = '\0';
  return r;
}
