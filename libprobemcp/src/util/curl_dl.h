/* SPDX-License-Identifier: MIT */
/* libcurl, loaded on first use. Only the remote papers provider and the
 * embeddings endpoint need it, and linking it pulls ~30 libraries (TLS,
 * Kerberos, LDAP, ...) into every program that links libprobemcp, which
 * dominated start-up time and idle memory. So the library dlopen()s
 * libcurl.so.4 the first time a remote call is made. */
#ifndef PMCP_UTIL_CURL_DL_H
#define PMCP_UTIL_CURL_DL_H

#ifdef PMCP_HAVE_CURL
#include <stddef.h>

#include <curl/curl.h>

typedef struct pmcp__curl_api {
  CURL *(*easy_init)(void);
  CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
  CURLcode (*easy_perform)(CURL *);
  CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
  void (*easy_cleanup)(CURL *);
  const char *(*easy_strerror)(CURLcode);
  struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
  void (*slist_free_all)(struct curl_slist *);
} pmcp__curl_api;

/* Loads libcurl once (thread-safe) and returns its functions, or NULL with
 * a message in @p err when it cannot be loaded. The table lives until the
 * process exits. */
const pmcp__curl_api *pmcp__curl(char *err, size_t errlen);
#endif

#endif
