/* SPDX-License-Identifier: MIT */
/* PostgreSQL backend: writing one metric block. A block of up to
 * PMCP__PG_BLOCK points is one metric_blocks row (its summary: count, min,
 * max, sum, first, last, step range ...) and one metric_chunks row per
 * PMCP__PG_CHUNK points (the points as three arrays, and the same summary
 * for them), so a bucket edge that falls inside a block costs SQL the
 * points of one chunk, not of the whole block (pg_metrics_read.c).
 *
 * One statement per block, in one round trip: the block's points travel
 * once, as arrays in PostgreSQL's binary format (formatting 16,384 doubles
 * as text and parsing them back cost more than the rest of the write),
 * with the chunk summaries as parallel arrays; SQL slices them into the
 * chunk rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg.h"

#define INT4ARRAYOID 1007
#define INT8ARRAYOID 1016
#define FLOAT8ARRAYOID 1022
#define INT4OID 23
#define INT8OID 20
#define FLOAT8OID 701

#define STR_(x) #x
#define STR(x) STR_(x)
#define CHUNK_S STR(PMCP__PG_CHUNK)

/* A one-dimensional array in binary format being filled. */
typedef struct barr {
  unsigned char *p, *at;
  size_t cap;
} barr;

static void put32(unsigned char *p, uint32_t v)
{
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

static void put64(unsigned char *p, uint64_t v)
{
  put32(p, (uint32_t)(v >> 32));
  put32(p + 4, (uint32_t)v);
}

/* Header: dimensions, has-nulls flag, element type, length, lower bound. */
static int barr_init(barr *a, unsigned elem_oid, size_t n, size_t width)
{
  a->cap = 20 + n * (4 + width);
  a->p = malloc(a->cap);
  if (!a->p)
    return -1;
  put32(a->p, 1);
  put32(a->p + 4, 1);
  put32(a->p + 8, elem_oid);
  put32(a->p + 12, (uint32_t)n);
  put32(a->p + 16, 1);
  a->at = a->p + 20;
  return 0;
}

static void barr_i64(barr *a, int64_t v)
{
  put32(a->at, 8);
  put64(a->at + 4, (uint64_t)v);
  a->at += 12;
}

static void barr_i32(barr *a, int32_t v)
{
  put32(a->at, 4);
  put32(a->at + 4, (uint32_t)v);
  a->at += 8;
}

static void barr_f64(barr *a, double v)
{
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  put32(a->at, 8);
  put64(a->at + 4, bits);
  a->at += 12;
}

static void barr_null(barr *a)
{
  put32(a->at, (uint32_t)-1);
  a->at += 4;
}

/* Hands the array to parameter @p i of @p st. */
static void barr_bind(pmcp__pg_stmt *st, int i, barr *a, unsigned array_oid)
{
  pmcp__pg_bind_binary(st, i, a->p, (size_t)(a->at - a->p), array_oid);
  a->p = NULL;
}

enum { A_STEPS, A_TIMES, A_VALS, C_SMIN, C_SMAX, C_TMIN, C_TMAX, C_NT, C_NF, C_VMIN, C_VMAX,
       C_SUM, C_FIRST, C_LAST, C_SFIRST, C_SLAST, C_ATMIN, C_ATMAX, N_ARR };

int pmcp__pg_block_write(pmcp_store *s, pmcp__pg *q, int64_t tenant, int64_t series,
                         int64_t seq, int fresh, const pmcp_point *pts, size_t n)
{
  if (n == 0 || n > PMCP__PG_BLOCK)
    return pmcp_store_set_error(s, PMCP_EINVAL, "a metric block holds 1-%d points",
                                PMCP__PG_BLOCK);
  static const unsigned elem[N_ARR] = {
    INT8OID, INT8OID, FLOAT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT4OID, INT4OID,
    FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, INT8OID, INT8OID, INT8OID, INT8OID};
  size_t n_chunks = (n + PMCP__PG_CHUNK - 1) / PMCP__PG_CHUNK;
  barr a[N_ARR];
  memset(a, 0, sizeof a);
  int rc = 0;
  for (int k = 0; k < N_ARR && rc == 0; k++)
    if (barr_init(&a[k], elem[k], k <= A_VALS ? n : n_chunks, elem[k] == INT4OID ? 4 : 8))
      rc = pmcp_store_set_error(s, PMCP_ENOMEM, "out of memory");
  if (rc)
    goto out;
  for (size_t i = 0; i < n; i++) {
    barr_i64(&a[A_STEPS], pts[i].step);
    barr_i64(&a[A_TIMES], pts[i].time_ms);
    barr_f64(&a[A_VALS], pts[i].value);
  }
  for (size_t c = 0; c < n_chunks; c++) {
    size_t from = c * PMCP__PG_CHUNK;
    size_t len = n - from < PMCP__PG_CHUNK ? n - from : PMCP__PG_CHUNK;
    pmcp_bucket m;
    uint64_t untimed;
    pmcp__metric_summarize(pts + from, len, &m, &untimed);
    barr_i64(&a[C_SMIN], m.step_min);
    barr_i64(&a[C_SMAX], m.step_max);
    barr_i64(&a[C_TMIN], m.time_min);
    barr_i64(&a[C_TMAX], m.time_max);
    barr_i32(&a[C_NT], (int32_t)untimed);
    barr_i32(&a[C_NF], (int32_t)m.nonfinite);
    if (!isnan(m.min)) {
      barr_f64(&a[C_VMIN], m.min);
      barr_f64(&a[C_VMAX], m.max);
    } else {
      barr_null(&a[C_VMIN]);
      barr_null(&a[C_VMAX]);
    }
    barr_f64(&a[C_SUM], m.sum);
    /* A chunk's first / last stay as logged (NaN, infinities): a bucket
     * reading its points one by one would see them so. */
    barr_f64(&a[C_FIRST], m.first);
    barr_f64(&a[C_LAST], m.last);
    barr_i64(&a[C_SFIRST], m.step_first);
    barr_i64(&a[C_SLAST], m.step_last);
    barr_i64(&a[C_ATMIN], m.step_at_min);
    barr_i64(&a[C_ATMAX], m.step_at_max);
  }
  pmcp_bucket b;
  pmcp__metric_summarize(pts, n, &b, NULL);
  /* A block written again (the partial tail block, grown) replaces its
   * row and its chunks: it has at least as many chunks as before. */
#define SL(a) "$" #a "[(c.k - 1) * " CHUNK_S " + 1 : c.k * " CHUNK_S "]"
#define BLOCK_INSERT                                                                          \
  "WITH blk AS (INSERT INTO metric_blocks(tenant_id, series_id, seq, n, nonfinite, step_min,"  \
  " step_max, time_min, time_max, vmin, vmax, vsum, first, last, step_first, step_last,"      \
  " step_at_min, step_at_max)"                                                                \
  " VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18)"
#define CHUNKS_INSERT                                                                         \
  " INSERT INTO metric_chunks(tenant_id, series_id, seq, k, n, untimed, nonfinite,"           \
  " step_min, step_max, time_min, time_max, vmin, vmax, vsum, first, last, step_first,"      \
  " step_last, step_at_min, step_at_max, steps, times, vals)"                                \
  " SELECT $1, $2, $3, c.k - 1, least(" CHUNK_S ", $4 - (c.k - 1) * " CHUNK_S "),"            \
  " c.nt, c.nf, c.smin, c.smax, c.tmin, c.tmax, c.vmin, c.vmax, c.vsum, c.first, c.last,"    \
  " c.sfirst, c.slast, c.atmin, c.atmax, " SL(19) ", " SL(20) ", " SL(21)                    \
  " FROM unnest($22::bigint[], $23::bigint[], $24::bigint[], $25::bigint[], $26::int[],"     \
  " $27::int[], $28::float8[], $29::float8[], $30::float8[], $31::float8[], $32::float8[],"  \
  " $33::bigint[], $34::bigint[], $35::bigint[], $36::bigint[]) WITH ORDINALITY"             \
  " AS c(smin, smax, tmin, tmax, nt, nf, vmin, vmax, vsum, first, last, sfirst, slast,"      \
  " atmin, atmax, k)"
  /* A new block: plain inserts (an upsert costs a speculative insertion
   * a row). */
  static const char sql_new[] = BLOCK_INSERT " RETURNING 1)" CHUNKS_INSERT;
  static const char sql[] =
      BLOCK_INSERT
      " ON CONFLICT (series_id, seq) DO UPDATE SET n=excluded.n, nonfinite=excluded.nonfinite,"
      " step_min=excluded.step_min, step_max=excluded.step_max, time_min=excluded.time_min,"
      " time_max=excluded.time_max, vmin=excluded.vmin, vmax=excluded.vmax,"
      " vsum=excluded.vsum, first=excluded.first, last=excluded.last,"
      " step_first=excluded.step_first, step_last=excluded.step_last,"
      " step_at_min=excluded.step_at_min, step_at_max=excluded.step_at_max RETURNING 1)"
      CHUNKS_INSERT
      " ON CONFLICT (series_id, seq, k) DO UPDATE SET n=excluded.n, untimed=excluded.untimed,"
      " nonfinite=excluded.nonfinite, step_min=excluded.step_min, step_max=excluded.step_max,"
      " time_min=excluded.time_min, time_max=excluded.time_max, vmin=excluded.vmin,"
      " vmax=excluded.vmax, vsum=excluded.vsum, first=excluded.first, last=excluded.last,"
      " step_first=excluded.step_first, step_last=excluded.step_last,"
      " step_at_min=excluded.step_at_min, step_at_max=excluded.step_at_max,"
      " steps=excluded.steps, times=excluded.times, vals=excluded.vals";
#undef SL
#undef BLOCK_INSERT
#undef CHUNKS_INSERT
  pmcp__pg_stmt *st;
  if ((rc = pmcp__pg_prep(s, q, fresh ? sql_new : sql, &st)))
    goto out;
  pmcp__pg_bind_int64(st, 1, tenant);
  pmcp__pg_bind_int64(st, 2, series);
  pmcp__pg_bind_int64(st, 3, seq);
  pmcp__pg_bind_int64(st, 4, (int64_t)n);
  pmcp__pg_bind_int64(st, 5, (int64_t)b.nonfinite);
  pmcp__pg_bind_int64(st, 6, b.step_min);
  pmcp__pg_bind_int64(st, 7, b.step_max);
  if (b.time_min) {
    pmcp__pg_bind_int64(st, 8, b.time_min);
    pmcp__pg_bind_int64(st, 9, b.time_max);
  } else {
    pmcp__pg_bind_null(st, 8);
    pmcp__pg_bind_null(st, 9);
  }
  if (!isnan(b.min)) {
    pmcp__pg_bind_double(st, 10, b.min);
    pmcp__pg_bind_double(st, 11, b.max);
    pmcp__pg_bind_int64(st, 17, b.step_at_min);
    pmcp__pg_bind_int64(st, 18, b.step_at_max);
  } else {
    pmcp__pg_bind_null(st, 10);
    pmcp__pg_bind_null(st, 11);
    pmcp__pg_bind_null(st, 17);
    pmcp__pg_bind_null(st, 18);
  }
  pmcp__pg_bind_double(st, 12, b.sum);
  /* The block's own first / last: absent when not finite (as on SQLite). */
  pmcp__pg_bind_finite(st, 13, b.first);
  pmcp__pg_bind_finite(st, 14, b.last);
  pmcp__pg_bind_int64(st, 15, b.step_first);
  pmcp__pg_bind_int64(st, 16, b.step_last);
  for (int k = 0; k < N_ARR; k++)
    barr_bind(st, 19 + k, &a[k],
              elem[k] == INT4OID ? INT4ARRAYOID : elem[k] == INT8OID ? INT8ARRAYOID
                                                                    : FLOAT8ARRAYOID);
  /* Sent without waiting in a write scope: a log call's blocks travel
   * with its end (or the next statement that needs an answer). */
  rc = pmcp__pg_defer(s, st, "store metric block");
  pmcp__pg_reset(st);
out:
  for (int k = 0; k < N_ARR; k++)
    free(a[k].p);
  return rc;
}
