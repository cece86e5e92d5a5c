/* SPDX-License-Identifier: MIT */
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

/* The words of a question for the local index (papers_words.c): each
 * word once (letters, digits, non-ASCII bytes; lower case), English
 * stopwords dropped unless nothing else is left, at most
 * PMCP__PAPERS_QWORDS of them (the first 64 words looked at). */
#define PMCP__PAPERS_QWORDS 32
#define PMCP__PW_MAX 64
typedef struct pmcp__papers_words_t {
  char *text;               /* owns the words */
  const char *w[PMCP__PAPERS_QWORDS];
  size_t n;                 /* 0: the query has no words */
  int only_stopwords;       /* nothing but stopwords: these are them */
} pmcp__papers_words_t;
/* 0 or PMCP_ENOMEM; free with pmcp__papers_words_free (also after an
 * error). */
int pmcp__papers_words(const char *query, pmcp__papers_words_t *out);
void pmcp__papers_words_free(pmcp__papers_words_t *w);
/* 1 when @p w (lower case) is on the stopword list */
int pmcp__papers_stopword(const char *w);

#endif
