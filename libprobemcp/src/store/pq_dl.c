/* SPDX-License-Identifier: MIT */
/* libpq loaded on first use: see pq_dl.h for why. */
#define PMCP_PQ_DL_IMPL
#include "store/pq_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

pmcp__pq_api pmcp__pq;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded, pipeline;
static char load_error[200];

static void load(void)
{
  void *h = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(load_error, sizeof load_error,
             "the PostgreSQL client library (libpq.so.5) cannot be loaded; install libpq5");
    return;
  }
  /* Object-to-function pointer casts through a union keep -pedantic quiet. */
#define GET(name)                                                             \
  do {                                                                        \
    union { void *p; __typeof__(pmcp__pq.name) f; } u_ = {dlsym(h, #name)};   \
    if (!u_.p) {                                                              \
      snprintf(load_error, sizeof load_error, "libpq lacks %s", #name);       \
      return;                                                                 \
    }                                                                         \
    pmcp__pq.name = u_.f;                                                     \
  } while (0)
  GET(PQclear);
  GET(PQexec);
  GET(PQstatus);
  GET(PQresultStatus);
  GET(PQgetvalue);
  GET(PQntuples);
  GET(PQgetlength);
  GET(PQexecParams);
  GET(PQerrorMessage);
  GET(PQresultErrorField);
  GET(PQnfields);
  GET(PQtransactionStatus);
  GET(PQsetNoticeProcessor);
  GET(PQreset);
  GET(PQprepare);
  GET(PQgetisnull);
  GET(PQfinish);
  GET(PQunescapeBytea);
  GET(PQftype);
  GET(PQfreemem);
  GET(PQfname);
  GET(PQexecPrepared);
  GET(PQconnectdbParams);
  GET(PQconnectdb);
  GET(PQcmdTuples);
  GET(PQsendQueryParams);
  GET(PQsendPrepare);
  GET(PQsendQueryPrepared);
  GET(PQgetResult);
  GET(PQflush);
  GET(PQsetSingleRowMode);
  GET(PQgetCancel);
  GET(PQcancel);
  GET(PQfreeCancel);
#undef GET
  loaded = 1;
#ifdef LIBPQ_HAS_PIPELINING
  /* Optional: an older libpq.so.5 works without them (one round trip per
   * statement). */
#define OPT(name)                                                             \
  do {                                                                        \
    union { void *p; __typeof__(pmcp__pq.name) f; } u_ = {dlsym(h, #name)};   \
    pmcp__pq.name = u_.f;                                                     \
    if (!u_.p)                                                                \
      ok = 0;                                                                 \
  } while (0)
  int ok = 1;
  OPT(PQenterPipelineMode);
  OPT(PQexitPipelineMode);
  OPT(PQpipelineSync);
  OPT(PQsendFlushRequest);
  OPT(PQpipelineStatus);
#undef OPT
  pipeline = ok;
#endif
}

int pmcp__pq_load(const char **why)
{
  pthread_once(&once, load);
  if (!loaded && why)
    *why = load_error;
  return loaded ? 0 : -1;
}

int pmcp__pq_pipeline(void)
{
  return loaded && pipeline;
}
