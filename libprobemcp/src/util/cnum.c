/* SPDX-License-Identifier: MIT */
/* Locale-independent number text: see cnum.h. */
#include "util/cnum.h"

#include <langinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t c_once = PTHREAD_ONCE_INIT;
static locale_t c_loc = (locale_t)0;

static void make_c(void)
{
  /* Created once and kept for the process: every thread may use it. */
  c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static locale_t c_locale(void)
{
  pthread_once(&c_once, make_c);
  return c_loc;
}

double pmcp__c_strtod(const char *s, char **end)
{
  locale_t c = c_locale();
  locale_t prev = c ? uselocale(c) : (locale_t)0;
  double v = strtod(s, end);
  if (c)
    uselocale(prev);
  return v;
}

int pmcp__c_vsnprintf(char *out, size_t size, const char *fmt, va_list ap)
{
  locale_t c = c_locale();
  locale_t prev = c ? uselocale(c) : (locale_t)0;
  int n = vsnprintf(out, size, fmt, ap);
  if (c)
    uselocale(prev);
  return n;
}

int pmcp__c_snprintf(char *out, size_t size, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = pmcp__c_vsnprintf(out, size, fmt, ap);
  va_end(ap);
  return n;
}

/* The thread's copy of the global locale with LC_NUMERIC "C", made once
 * per thread and global locale name: newlocale is too costly per call (and
 * glibc's leaks a little when LOCPATH is set). Freed when the thread ends. */
typedef struct derived {
  char key[512]; /* setlocale(LC_ALL, NULL) it was made from */
  locale_t loc;
} derived;

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t derived_key;

static void derived_free(void *p)
{
  derived *d = p;
  if (d->loc)
    freelocale(d->loc);
  free(d);
}

static void make_key(void)
{
  if (pthread_key_create(&derived_key, derived_free) != 0)
    derived_key = (pthread_key_t)-1;
}

static locale_t derived_for_global(void)
{
  pthread_once(&key_once, make_key);
  if (derived_key == (pthread_key_t)-1)
    return (locale_t)0;
  const char *name = setlocale(LC_ALL, NULL);
  if (!name || strlen(name) >= sizeof ((derived *)0)->key)
    return (locale_t)0;
  derived *d = pthread_getspecific(derived_key);
  if (d && d->loc && strcmp(d->key, name) == 0)
    return d->loc;
  if (!d) {
    d = calloc(1, sizeof *d);
    if (!d || pthread_setspecific(derived_key, d) != 0) {
      free(d);
      return (locale_t)0;
    }
  }
  if (d->loc)
    freelocale(d->loc);
  d->loc = (locale_t)0;
  locale_t base = duplocale(LC_GLOBAL_LOCALE);
  if (!base)
    return (locale_t)0;
  d->loc = newlocale(LC_NUMERIC_MASK, "C", base);
  if (!d->loc) {
    freelocale(base);
    return (locale_t)0;
  }
  strcpy(d->key, name);
  return d->loc;
}

locale_t pmcp__c_numeric_enter(void)
{
  const char *point = nl_langinfo(RADIXCHAR);
  if (!point || strcmp(point, ".") == 0)
    return (locale_t)0;
  /* The global locale with only LC_NUMERIC replaced, so text handling
   * (LC_CTYPE) and messages stay as the host set them; a thread running
   * a locale of its own (uselocale) gets the C locale. */
  locale_t use = uselocale((locale_t)0) == LC_GLOBAL_LOCALE ? derived_for_global() : (locale_t)0;
  if (!use)
    use = c_locale();
  return use ? uselocale(use) : (locale_t)0;
}

void pmcp__c_numeric_leave(locale_t prev)
{
  if (prev)
    uselocale(prev);
}
