/* `find_papers` internals shared by papers.c and papers_remote.c. */
#ifndef PMCP_RESEARCH_PAPERS_H
#define PMCP_RESEARCH_PAPERS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "probemcp/tool.h"

/* GET BASE PATH?QUERY from the remote provider; *out a JSON object.
 * Returns 0; PMCP_ETIMEOUT, PMCP_EIO, PMCP_EREMOTE (HTTP error, not JSON),
 * PMCP_ENOTFOUND (404), PMCP_ECANCELLED, PMCP_EUNSUPPORTED (no libcurl),
 * with @p err saying what happened. */
int pmcp__papers_get(const char *base, int timeout_ms, const char *path,
                     const char *query, pmcp_call *call, cJSON **out, char *err,
                     size_t errlen);
/* URL-escapes @p s (free() the result); NULL on failure. */
char *pmcp__papers_escape(const char *s);

#endif
