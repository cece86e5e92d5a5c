/* SPDX-License-Identifier: MIT */
/* Internal: libpq, loaded on first use instead of linked.
 *
 * Why: libpq pulls ~20 libraries (GSSAPI, LDAP, GnuTLS, ...) into every
 * program that links libprobemcp, which cost SQLite-only programs such as
 * probe-mcp-stdio their start-up time and idle RSS. The PostgreSQL code
 * includes this header instead of <libpq-fe.h>; every PQ* call then goes
 * through a table filled once by pmcp__pq_load() (as util/curl_dl.c does
 * for libcurl). Call pmcp__pq_load() before the first connection. */
#ifndef PMCP_STORE_PQ_DL_H
#define PMCP_STORE_PQ_DL_H

#include <libpq-fe.h>

typedef struct pmcp__pq_api {
  __typeof__(&PQclear) PQclear;
  __typeof__(&PQexec) PQexec;
  __typeof__(&PQstatus) PQstatus;
  __typeof__(&PQresultStatus) PQresultStatus;
  __typeof__(&PQgetvalue) PQgetvalue;
  __typeof__(&PQntuples) PQntuples;
  __typeof__(&PQgetlength) PQgetlength;
  __typeof__(&PQexecParams) PQexecParams;
  __typeof__(&PQerrorMessage) PQerrorMessage;
  __typeof__(&PQresultErrorField) PQresultErrorField;
  __typeof__(&PQnfields) PQnfields;
  __typeof__(&PQtransactionStatus) PQtransactionStatus;
  __typeof__(&PQsetNoticeProcessor) PQsetNoticeProcessor;
  __typeof__(&PQreset) PQreset;
  __typeof__(&PQprepare) PQprepare;
  __typeof__(&PQgetisnull) PQgetisnull;
  __typeof__(&PQfinish) PQfinish;
  __typeof__(&PQunescapeBytea) PQunescapeBytea;
  __typeof__(&PQftype) PQftype;
  __typeof__(&PQfreemem) PQfreemem;
  __typeof__(&PQfname) PQfname;
  __typeof__(&PQexecPrepared) PQexecPrepared;
  __typeof__(&PQconnectdbParams) PQconnectdbParams;
  __typeof__(&PQconnectdb) PQconnectdb;
  __typeof__(&PQcmdTuples) PQcmdTuples;
  __typeof__(&PQsendQueryParams) PQsendQueryParams;
  __typeof__(&PQsendPrepare) PQsendPrepare;
  __typeof__(&PQsendQueryPrepared) PQsendQueryPrepared;
  __typeof__(&PQgetResult) PQgetResult;
  __typeof__(&PQflush) PQflush;
  __typeof__(&PQsetSingleRowMode) PQsetSingleRowMode;
  __typeof__(&PQgetCancel) PQgetCancel;
  __typeof__(&PQcancel) PQcancel;
  __typeof__(&PQfreeCancel) PQfreeCancel;
  /* Pipeline mode (libpq >= 14): NULL when this libpq lacks one of them,
   * and the backend then waits for each statement (pmcp__pq_pipeline()). */
#ifdef LIBPQ_HAS_PIPELINING
  __typeof__(&PQenterPipelineMode) PQenterPipelineMode;
  __typeof__(&PQexitPipelineMode) PQexitPipelineMode;
  __typeof__(&PQpipelineSync) PQpipelineSync;
  __typeof__(&PQsendFlushRequest) PQsendFlushRequest;
  __typeof__(&PQpipelineStatus) PQpipelineStatus;
#endif
} pmcp__pq_api;

/* Written once under pthread_once by pmcp__pq_load(), read-only after. */
extern pmcp__pq_api pmcp__pq;

/* Loads libpq.so.5 (once per process). Returns 0, or -1 with a message
 * naming what is missing in @p why (static storage). */
int pmcp__pq_load(const char **why);

/* 1 when the loaded libpq has pipeline mode (and these headers know it). */
int pmcp__pq_pipeline(void);

#ifndef PMCP_PQ_DL_IMPL
#define PQclear (pmcp__pq.PQclear)
#define PQexec (pmcp__pq.PQexec)
#define PQstatus (pmcp__pq.PQstatus)
#define PQresultStatus (pmcp__pq.PQresultStatus)
#define PQgetvalue (pmcp__pq.PQgetvalue)
#define PQntuples (pmcp__pq.PQntuples)
#define PQgetlength (pmcp__pq.PQgetlength)
#define PQexecParams (pmcp__pq.PQexecParams)
#define PQerrorMessage (pmcp__pq.PQerrorMessage)
#define PQresultErrorField (pmcp__pq.PQresultErrorField)
#define PQnfields (pmcp__pq.PQnfields)
#define PQtransactionStatus (pmcp__pq.PQtransactionStatus)
#define PQsetNoticeProcessor (pmcp__pq.PQsetNoticeProcessor)
#define PQreset (pmcp__pq.PQreset)
#define PQprepare (pmcp__pq.PQprepare)
#define PQgetisnull (pmcp__pq.PQgetisnull)
#define PQfinish (pmcp__pq.PQfinish)
#define PQunescapeBytea (pmcp__pq.PQunescapeBytea)
#define PQftype (pmcp__pq.PQftype)
#define PQfreemem (pmcp__pq.PQfreemem)
#define PQfname (pmcp__pq.PQfname)
#define PQexecPrepared (pmcp__pq.PQexecPrepared)
#define PQconnectdbParams (pmcp__pq.PQconnectdbParams)
#define PQconnectdb (pmcp__pq.PQconnectdb)
#define PQcmdTuples (pmcp__pq.PQcmdTuples)
#define PQsendQueryParams (pmcp__pq.PQsendQueryParams)
#define PQsendPrepare (pmcp__pq.PQsendPrepare)
#define PQsendQueryPrepared (pmcp__pq.PQsendQueryPrepared)
#define PQgetResult (pmcp__pq.PQgetResult)
#define PQflush (pmcp__pq.PQflush)
#define PQsetSingleRowMode (pmcp__pq.PQsetSingleRowMode)
#define PQgetCancel (pmcp__pq.PQgetCancel)
#define PQcancel (pmcp__pq.PQcancel)
#define PQfreeCancel (pmcp__pq.PQfreeCancel)
#ifdef LIBPQ_HAS_PIPELINING
#define PQenterPipelineMode (pmcp__pq.PQenterPipelineMode)
#define PQexitPipelineMode (pmcp__pq.PQexitPipelineMode)
#define PQpipelineSync (pmcp__pq.PQpipelineSync)
#define PQsendFlushRequest (pmcp__pq.PQsendFlushRequest)
#define PQpipelineStatus (pmcp__pq.PQpipelineStatus)
#endif
#endif

#endif
