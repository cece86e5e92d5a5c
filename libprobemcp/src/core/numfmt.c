/* The one number serializer every tool result goes through: six
 * significant figures, or the shortest round-trip form in lossless mode;
 * non-finite values become strings so JSON stays valid and nothing is lost
 * silently. */
#include "probemcp/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* snprintf follows LC_NUMERIC; a host may have set a locale with a decimal
 * comma. Anything that is not part of a JSON number becomes '.'. */
static void fix_locale(char *s)
{
  for (; *s; s++) {
    char c = *s;
    if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e' ||
          c == 'E' || c == '.'))
      *s = '.';
  }
}

size_t pmcp_json_format_number(double v, unsigned flags,
                               char out[PMCP_JSON_NUMBER_MAX])
{
  if (isnan(v))
    return (size_t)snprintf(out, PMCP_JSON_NUMBER_MAX, "\"NaN\"");
  if (isinf(v))
    return (size_t)snprintf(out, PMCP_JSON_NUMBER_MAX,
                            v < 0 ? "\"-Infinity\"" : "\"Infinity\"");
  int n;
  if (flags & PMCP_JSON_LOSSLESS) {
    n = 0;
    for (int prec = 1; prec <= 17; prec++) {
      /* snprintf and strtod share the locale, so compare before fixing */
      n = snprintf(out, PMCP_JSON_NUMBER_MAX, "%.*g", prec, v);
      if (strtod(out, NULL) == v)
        break;
    }
    fix_locale(out);
  } else {
    n = snprintf(out, PMCP_JSON_NUMBER_MAX, "%.6g", v);
    fix_locale(out);
  }
  return n < 0 ? 0 : (size_t)n;
}
