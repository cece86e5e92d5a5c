/* SPDX-License-Identifier: MIT */
/* Reaching the RE2 shim (re.h): linked in, or the module loaded on first
 * use. */
#define _GNU_SOURCE /* dladdr */
#include "filter/re.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Defined when the shim is linked into the program (the static flavour
 * built in this tree); otherwise NULL and the module is loaded. */
extern const pmcp__re2_ops pmcp__re2_api __attribute__((weak));

/* Written once under pthread_once, read-only afterwards. */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static const pmcp__re2_ops *ops;
static char load_error[200];

/* Opens the module from the private folder beside the object holding this
 * code (libprobemcp.so; a program when the library is linked statically),
 * PMCP__RE2_SUBDIR, where it is installed; else next to that object (the
 * build tree); else by name. */
static void *open_module(void)
{
  Dl_info self;
  char path[4096];
  /* Any address inside this object will do; a data one keeps -pedantic quiet. */
  if (dladdr(load_error, &self) && self.dli_fname) {
    const char *slash = strrchr(self.dli_fname, '/');
    static const char *const where[] = {"/" PMCP__RE2_SUBDIR "/", "/"};
    for (size_t i = 0; slash && i < sizeof where / sizeof where[0]; i++) {
      if (snprintf(path, sizeof path, "%.*s%s%s", (int)(slash - self.dli_fname),
                   self.dli_fname, where[i], PMCP__RE2_MODULE) >= (int)sizeof path)
        continue;
      void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (h)
        return h;
    }
  }
  void *h = dlopen(PMCP__RE2_MODULE, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    /* Without dlerror()'s text: it holds paths, and this message may reach
     * a client. */
    snprintf(load_error, sizeof load_error,
             "the RE2 module " PMCP__RE2_MODULE " cannot be loaded (is it installed "
             "next to libprobemcp, with libre2?)");
  }
  return h;
}

static void load(void)
{
  if (&pmcp__re2_api) {
    ops = &pmcp__re2_api;
    return;
  }
  void *h = open_module();
  if (!h)
    return;
  const pmcp__re2_ops *o = dlsym(h, PMCP__RE2_API_SYMBOL);
  if (!o || o->version != PMCP__RE2_API_VERSION || !o->compile || !o->search || !o->release) {
    snprintf(load_error, sizeof load_error,
             "the RE2 module " PMCP__RE2_MODULE " is not the one this library expects");
    dlclose(h);
    return;
  }
  ops = o; /* kept loaded for the life of the process */
}

int pmcp__re_available(char *err, size_t errlen)
{
  pthread_once(&once, load);
  if (ops)
    return 1;
  if (err && errlen)
    snprintf(err, errlen, "%s", load_error);
  return 0;
}

pmcp__re *pmcp__re_new(const char *pat, size_t len, char *err, size_t errlen)
{
  if (!pmcp__re_available(err, errlen))
    return NULL;
  return ops->compile(pat, len, err, errlen);
}

int pmcp__re_search(const pmcp__re *re, const char *s, size_t len)
{
  /* A pattern exists only once the module is in place. */
  return re ? ops->search(re, s, len) : 0;
}

void pmcp__re_free(pmcp__re *re)
{
  if (re)
    ops->release(re);
}
