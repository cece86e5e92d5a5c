/* SPDX-License-Identifier: MIT */
/* Internal: SQL text written once for both backends. A statement is a
 * macro of the dialect D (SQ or PG) that spells what differs with these,
 * D##_JO and so on; PMCP__SQL_BOTH defines its two texts, for
 * PMCP__SQL_PICK. list_kinds.h's kinds are written with the same macros
 * (sq_list.c and pg_list.c name them without the prefix). */
#ifndef PMCP_STORE_DIALECT_H
#define PMCP_STORE_DIALECT_H

/* The JSON object constructor with its "(". */
#define SQ_JO "json_object("
#define PG_JO "json_build_object("
/* A 0/1 column as a JSON boolean. */
#define SQ_B(col) "json(CASE " col " WHEN 1 THEN 'true' ELSE 'false' END)"
#define PG_B(col) "(" col "=1)"
/* A JSON text column as JSON. */
#define SQ_JSON(x) "json(" x ")"
#define PG_JSON(x) x "::json"
/* A JSON text column as a JSON function's argument. */
#define SQ_JARG(x) x
#define PG_JARG(x) x "::json"
/* A REAL as its JSON number in a list (PostgreSQL: through numeric, 15
 * significant digits as in SQLite's JSON). */
#define SQ_NUM(x) x
#define PG_NUM(x) x "::numeric"
/* A REAL as its JSON number with every digit (a record: SQLite's through
 * pmcp_num(), PostgreSQL's float8 as it is). */
#define SQ_NUMJ(x) "json(pmcp_num(" x "))"
#define PG_NUMJ(x) x
/* A JSON array aggregate of x, ordered by x. */
#define SQ_ARR(x) "json_group_array(" x ")"
#define PG_ARR(x) "coalesce(json_agg(" x " ORDER BY " x "), '[]'::json)"
/* A JSON array aggregate of x in the order the rows come (PostgreSQL:
 * [] for no rows, as SQLite). */
#define SQ_AGG(x) "json_group_array(" x ")"
#define PG_AGG(x) "coalesce(json_agg(" x "), '[]'::json)"
/* The same, PostgreSQL's ordered by o (SQLite's in the order the rows
 * come: its aggregates take no ORDER BY before 3.44). */
#define SQ_AGG_BY(x, o) "json_group_array(" x ")"
#define PG_AGG_BY(x, o) "coalesce(json_agg(" x " ORDER BY " o "), '[]'::json)"
/* A JSON object aggregate of k: v (PostgreSQL's keys ordered, {} for no
 * rows). */
#define SQ_OBJ_AGG(k, v) "json_group_object(" k ", " v ")"
#define PG_OBJ_AGG(k, v) "coalesce(json_object_agg(" k ", " v " ORDER BY " k "), '{}'::json)"
/* An SQL boolean as a JSON boolean. */
#define SQ_BB(expr) SQ_B("(" expr ")")
#define PG_BB(expr) "(" expr ")"
/* A BLOB of UTF-8 text as text. */
#define SQ_TEXT(x) "CAST(" x " AS TEXT)"
#define PG_TEXT(x) "convert_from(" x ", 'UTF8')"
/* The false constant. */
#define SQ_FALSE_ "0"
#define PG_FALSE_ "false"

/* The two texts of statement @p name: name_sq and name_pg. */
#define PMCP__SQL_BOTH(name, TEXT)                                            \
  static const char name##_sq[] = TEXT(SQ);                                   \
  static const char name##_pg[] = TEXT(PG)

#endif
