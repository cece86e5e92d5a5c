/* SPDX-License-Identifier: MIT */
/* What this build of the library is and has, asked at run time. */
#include "probemcp/common.h"
#include "probemcp/version.h"

unsigned long pmcp_version_number(void)
{
  return (unsigned long)PMCP_VERSION_HEX;
}

int pmcp_has(pmcp_feature feature)
{
  switch (feature) {
  case PMCP_FEATURE_POSTGRES:
#ifdef PMCP_HAVE_POSTGRES
    return 1;
#else
    return 0;
#endif
  case PMCP_FEATURE_REMOTE:
#ifdef PMCP_HAVE_CURL
    return 1;
#else
    return 0;
#endif
  case PMCP_FEATURE_CHARTS:
#ifdef PMCP_HAVE_CAIRO
    return 1;
#else
    return 0;
#endif
  case PMCP_FEATURE_TASKS:
  case PMCP_FEATURE_C_NUMERIC:
  case PMCP_FEATURE_SIZED_SPECS:
    return 1;
  }
  return 0;
}
