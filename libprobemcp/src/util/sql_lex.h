/* SPDX-License-Identifier: MIT */
/* The little SQL lexing the query sandboxes share: blanks and comments,
 * and what kind of statement a text starts. */
#ifndef PMCP_UTIL_SQL_LEX_H
#define PMCP_UTIL_SQL_LEX_H

#include <stddef.h>

/* Past the blanks, ';' and comments at @p s (never past @p end). With
 * @p nested, block comments nest (PostgreSQL); an unterminated one runs
 * to the end (as SQLite and PostgreSQL read it, an error there). */
const char *pmcp__sql_skip_blank(const char *s, const char *end, int nested);

/* The length of the statement's first word, *@p word pointing at it,
 * when the statement in @p s (@p len bytes) is a command rather than a
 * query: its first word, past blanks, comments and opening
 * parentheses, starts a statement of SQL that is not a SELECT (ANALYZE,
 * SET, DELETE, ...). A query, a blank text or a word no statement starts
 * with is not (the database says what is wrong with those): 0. */
size_t pmcp__sql_command(const char *s, size_t len, const char **word);

#endif
