/* SPDX-License-Identifier: MIT */
/* The one number serializer every tool result goes through: six
 * significant figures, or the shortest round-trip form in lossless mode;
 * non-finite values become strings so JSON stays valid and nothing is lost
 * silently. */
#include "probemcp/json.h"
#include "util/cnum.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
      n = pmcp__c_snprintf(out, PMCP_JSON_NUMBER_MAX, "%.*g", prec, v);
      if (pmcp__c_strtod(out, NULL) == v)
        break;
    }
  } else {
    /* In the C locale: the host's LC_NUMERIC may have a comma or a
     * multi-byte decimal point. */
    n = pmcp__c_snprintf(out, PMCP_JSON_NUMBER_MAX, "%.6g", v);
  }
  return n < 0 ? 0 : (size_t)n;
}
