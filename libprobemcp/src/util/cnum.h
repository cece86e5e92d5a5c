/* SPDX-License-Identifier: MIT */
/* Numbers the library writes or reads (JSON, SQL text, arguments, imported
 * files) always use '.', whatever LC_NUMERIC the host process chose: printf
 * and strtod follow the thread's locale, and a decimal point such as
 * ps_AF's two-byte U+066B would make "1234.5" unreadable and JSON invalid. */
#ifndef PMCP_UTIL_CNUM_H
#define PMCP_UTIL_CNUM_H

#include <locale.h>
#include <stdarg.h>
#include <stddef.h>

#include "probemcp/common.h"

/* strtod in the C locale. */
double pmcp__c_strtod(const char *s, char **end);
/* snprintf and vsnprintf in the C locale. */
int pmcp__c_snprintf(char *out, size_t size, const char *fmt, ...) PMCP_PRINTF(3, 4);
int pmcp__c_vsnprintf(char *out, size_t size, const char *fmt, va_list ap) PMCP_PRINTF(3, 0);

/* Runs the calling thread with LC_NUMERIC "C" (the rest of its locale
 * unchanged) until pmcp__c_numeric_leave, so that code the library does not
 * own (cJSON, handlers' printf) writes and reads '.' too. A no-op when the
 * decimal point is already '.'; nests; allocates nothing per call (one
 * locale per thread, freed when it ends). Returns what leave needs. */
locale_t pmcp__c_numeric_enter(void);
void pmcp__c_numeric_leave(locale_t prev);

#endif
