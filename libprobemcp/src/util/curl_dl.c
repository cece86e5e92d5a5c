/* SPDX-License-Identifier: MIT */
#include "util/curl_dl.h"

#ifdef PMCP_HAVE_CURL
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Written once under pthread_once, read-only afterwards. */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pmcp__curl_api api;
static int loaded;
static char load_error[200];

static void *sym(void *h, const char *name, int *ok)
{
  void *p = dlsym(h, name);
  if (!p && *ok) {
    *ok = 0;
    snprintf(load_error, sizeof load_error, "libcurl lacks %s", name);
  }
  return p;
}

static void load(void)
{
  void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(load_error, sizeof load_error,
             "libcurl (libcurl.so.4) cannot be loaded; install libcurl4");
    return;
  }
  int ok = 1;
  /* Object-to-function pointer casts through a union keep -pedantic quiet. */
#define GET(field, name)                                                      \
  do {                                                                        \
    union { void *p; __typeof__(api.field) f; } u_ = {sym(h, name, &ok)};     \
    api.field = u_.f;                                                         \
  } while (0)
  GET(easy_init, "curl_easy_init");
  GET(easy_setopt, "curl_easy_setopt");
  GET(easy_perform, "curl_easy_perform");
  GET(easy_getinfo, "curl_easy_getinfo");
  GET(easy_cleanup, "curl_easy_cleanup");
  GET(easy_strerror, "curl_easy_strerror");
  GET(slist_append, "curl_slist_append");
  GET(slist_free_all, "curl_slist_free_all");
#undef GET
  union { void *p; CURLcode (*f)(long); } gi = {sym(h, "curl_global_init", &ok)};
  if (!ok)
    return;
  /* curl_global_init is not thread-safe in every libcurl: doing it here,
   * under pthread_once, keeps curl_easy_init from doing it concurrently. */
  if (gi.f(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    snprintf(load_error, sizeof load_error, "libcurl failed to initialise");
    return;
  }
  loaded = 1;
}

const pmcp__curl_api *pmcp__curl(char *err, size_t errlen)
{
  pthread_once(&once, load);
  if (loaded)
    return &api;
  if (err && errlen)
    snprintf(err, errlen, "%s", load_error);
  return NULL;
}
#endif
