/* SPDX-License-Identifier: MIT */
/* pmcp_bm25(): FTS5's BM25 over document counts the caller gives
 * (sq_search_rank.h). The arithmetic is fts5_aux.c's, term for term, so
 * with exact counts the score is bm25()'s to the last bit. */
#include <math.h>
#include <string.h>

#include "store/sq_search_rank.h"

static const double k1 = 1.2, b = 0.75;

double pmcp__rank_idf(int64_t n_rows, double df)
{
  double idf = log(((double)n_rows - df + 0.5) / (df + 0.5));
  return idf <= 0.0 ? 1e-6 : idf; /* bm25()'s floor: a word in most documents */
}

double pmcp__rank_bound(double idf)
{
  /* f (k1 + 1) / (f + k1 (1 - b + b D / avgdl)) < k1 + 1 for every f, D */
  return idf * (k1 + 1.0);
}

static void bm25(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx,
                 int n_val, sqlite3_value **val)
{
  pmcp__rank_spec *sp = n_val > 0 ? sqlite3_value_pointer(val[0], PMCP__RANK_SPEC) : NULL;
  if (!sp || sp->n_words < 1 || sp->n_words > PMCP__RANK_WORDS_MAX) {
    sqlite3_result_error(ctx, "pmcp_bm25: no ranking spec bound", -1);
    return;
  }
  int rc = SQLITE_OK;
  int n_phrase = api->xPhraseCount(fts);
  if (!sp->ready) {
    sqlite3_int64 n_rows = 0, n_tok = 0;
    rc = api->xRowCount(fts, &n_rows);
    if (rc == SQLITE_OK)
      rc = api->xColumnTotalSize(fts, -1, &n_tok);
    if (rc != SQLITE_OK) {
      sqlite3_result_error_code(ctx, rc);
      return;
    }
    sp->n_rows = n_rows;
    sp->avgdl = (double)n_tok / (double)n_rows;
    for (int i = 0; i < sp->n_words; i++)
      sp->idf[i] = pmcp__rank_idf(n_rows, sp->df[i]);
    sp->ready = 1;
  }
  double freq[2 * PMCP__RANK_WORDS_MAX];
  if (n_phrase > (int)(sizeof freq / sizeof freq[0])) {
    sqlite3_result_error(ctx, "pmcp_bm25: too many phrases", -1);
    return;
  }
  memset(freq, 0, sizeof freq);
  int n_inst = 0;
  rc = api->xInstCount(fts, &n_inst);
  for (int i = 0; rc == SQLITE_OK && i < n_inst; i++) {
    int ip, ic, io;
    rc = api->xInst(fts, i, &ip, &ic, &io);
    if (rc == SQLITE_OK && ip >= 0 && ip < n_phrase)
      freq[ip] += (n_val - 1 > ic) ? sqlite3_value_double(val[1 + ic]) : 1.0;
  }
  int n_tok = 0;
  if (rc == SQLITE_OK)
    rc = api->xColumnSize(fts, -1, &n_tok);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  double d = (double)n_tok, score = 0.0;
  for (int i = 0; i < sp->n_words; i++) {
    int p = sp->phrase[i];
    double f = p >= 0 && p < n_phrase ? freq[p] : 0.0;
    score += sp->idf[i] * ((f * (k1 + 1.0)) / (f + k1 * (1 - b + b * d / sp->avgdl)));
  }
  sqlite3_result_double(ctx, score);
}

int pmcp__sq_search_rank_setup(sqlite3 *db)
{
  fts5_api *api = NULL;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL);
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
  sqlite3_step(st);
  sqlite3_finalize(st);
  if (!api || api->iVersion < 2)
    return SQLITE_ERROR;
  return api->xCreateFunction(api, "pmcp_bm25", NULL, bm25, NULL);
}
