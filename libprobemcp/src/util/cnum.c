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

locale_t pmcp__c_numeric_enter(void)
{
  const char *point = nl_langinfo(RADIXCHAR);
  if (!point || strcmp(point, ".") == 0)
    return (locale_t)0;
  /* A copy of the thread's locale with only LC_NUMERIC replaced, so text
   * handling (LC_CTYPE) and messages stay as the host set them. */
  locale_t cur = uselocale((locale_t)0);
  locale_t base = duplocale(cur);
  if (!base)
    return (locale_t)0;
  locale_t mine = newlocale(LC_NUMERIC_MASK, "C", base);
  if (!mine) {
    freelocale(base);
    return (locale_t)0;
  }
  return uselocale(mine);
}

void pmcp__c_numeric_leave(locale_t prev)
{
  if (!prev)
    return;
  locale_t mine = uselocale(prev);
  if (mine && mine != LC_GLOBAL_LOCALE)
    freelocale(mine);
}
